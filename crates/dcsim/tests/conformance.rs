//! TCP conformance scripts (tests/conformance/*.pkt), in the spirit of
//! packetdrill: each script plays the peer of one dcsim endpoint and says,
//! line by line and to the picosecond, what the endpoint must send back.
//! The format is in tests/conformance/README.md.
//!
//! `DCSIM_PKT=name` runs only the scripts whose file name contains `name`.

use dcsim::packet::{flags, Ecn, Packet};
use dcsim::tcp::{Endpoint, State, TcpOut, TcpParams, TimerKind};
use dcsim::Scenario;
use dcsim_engine::{Dur, SimTime};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

/// The endpoint under test (side 0, the active opener) and the peer it
/// completed its handshake with, kept only to fill in what a real peer's
/// segments carry (its window and timestamp options).
struct Run {
    p: TcpParams,
    ep: Endpoint,
    peer: Endpoint,
    now: SimTime,
    /// What the endpoint sent and when, not yet matched by a `>` line.
    sent: VecDeque<(SimTime, Packet)>,
    /// The peer's next sequence number (stream offset) and the last TSval it saw.
    peer_seq: u64,
    ts_recent: u32,
}

fn parse_dur(s: &str) -> Result<Dur, String> {
    let split = s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v: f64 = num.parse().map_err(|_| format!("bad duration {s:?}"))?;
    let ps = match unit {
        "" if v == 0.0 => 0.0,
        "ns" => v * 1e3,
        "us" => v * 1e6,
        "ms" => v * 1e9,
        "s" => v * 1e12,
        _ => return Err(format!("bad duration {s:?}: use ns, us, ms or s")),
    };
    Ok(Dur(ps.round() as u64))
}

fn parse_range(s: &str) -> Result<(u64, u64), String> {
    let (a, b) = s.split_once(':').ok_or_else(|| format!("expected A:B, got {s:?}"))?;
    let a: u64 = a.parse().map_err(|_| format!("bad sequence number {a:?}"))?;
    let b: u64 = b.parse().map_err(|_| format!("bad sequence number {b:?}"))?;
    if b < a {
        return Err(format!("range {s:?} ends before it starts"));
    }
    Ok((a, b))
}

impl Run {
    fn new(config: &str) -> Result<Run, String> {
        // The scripts check the RFCs: RFC 6298's RTO on a tick clock, unless
        // a script sets its own.
        let mut config = config.to_string();
        for (key, value) in [("rtt_clock", "\"ticks\""), ("rto_formula", "\"rfc6298\"")] {
            if !config.contains(key) {
                config = format!("{key} = {value}\n{config}");
            }
        }
        let s = Scenario::from_toml_str(&format!(
            "[run]\nduration = \"10s\"\n[topology]\ntype = \"star\"\nhosts = 2\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n[tcp]\n{config}\n"
        ))
        .map_err(|e| format!("bad tcp settings: {e}"))?;
        let p = TcpParams::from_scenario(&s);
        let ep = Endpoint::new(0, 0, 0, 1, 7, 0, &p);
        let peer = Endpoint::new(0, 1, 1, 0, 7, 0, &p);
        Ok(Run { p, ep, peer, now: SimTime(0), sent: VecDeque::new(), peer_seq: 1, ts_recent: 0 })
    }

    fn take(&mut self, out: TcpOut) {
        for pkt in out.packets {
            if pkt.has_ts {
                self.ts_recent = pkt.ts_val;
            }
            self.sent.push_back((self.now, pkt));
        }
    }

    /// The handshake with the real peer; the SYN, SYN-ACK and ACK are not
    /// part of the script.
    fn connect(&mut self) -> Result<(), String> {
        let mut out = TcpOut::default();
        self.ep.open(self.now, &self.p, &mut out);
        let syn = out.packets.remove(0);
        let mut out = TcpOut::default();
        self.peer.on_packet(self.now, &syn, &self.p, &mut out);
        let synack = out.packets.remove(0);
        let mut out = TcpOut::default();
        self.ep.on_packet(self.now, &synack, &self.p, &mut out);
        let ack = out.packets.remove(0);
        let mut out = TcpOut::default();
        self.peer.on_packet(self.now, &ack, &self.p, &mut out);
        if self.ep.state != State::Established || self.peer.state != State::Established {
            return Err("the handshake did not complete".into());
        }
        if ack.has_ts {
            self.ts_recent = ack.ts_val;
        }
        // The SYN-ACK's window is unscaled (RFC 7323 §2.2): a first ACK from
        // the peer brings the scaled one, so that the script's first ACK is
        // not taken for a window update (RFC 5681's duplicate ACK rule (e)).
        self.inbound(&[])?;
        if let Some((_, pkt)) = self.sent.pop_front() {
            return Err(format!("the peer's window update drew {}", describe(&pkt)));
        }
        Ok(())
    }

    /// Advance to `t`, firing the endpoint's timers that fall due on the way.
    fn advance(&mut self, t: SimTime) -> Result<(), String> {
        if t < self.now {
            return Err(format!("time goes backwards: {t:?} < {:?}", self.now));
        }
        loop {
            let due = TimerKind::ALL
                .into_iter()
                .filter_map(|k| self.ep.timer(k).deadline.filter(|d| *d <= t).map(|d| (d, k)))
                .min_by_key(|x| x.0);
            let Some((at, kind)) = due else { break };
            self.now = at;
            self.ep.timer(kind).cancel();
            let mut out = TcpOut::default();
            self.ep.on_timer(at, kind, &self.p, &mut out);
            self.ep.flush(at, &self.p, &mut out);
            self.take(out);
        }
        self.now = t;
        Ok(())
    }

    /// A segment from the peer, built as the peer would (its window scale
    /// and timestamps) with the fields the script gives.
    fn inbound(&mut self, words: &[&str]) -> Result<(), String> {
        let mut pkt = Packet {
            conn: 0,
            side: 1,
            flags: flags::ACK,
            seq: self.peer_seq,
            ack: self.ep.snd_max,
            window: (self.p.rcv_buffer >> self.p.own_wscale()).min(u16::MAX as u64) as u16,
            ecn: Ecn::NotEct,
            ..Default::default()
        };
        if self.p.timestamps {
            pkt.has_ts = true;
            pkt.ts_val = (self.now.ps() / 1_000_000) as u32; // the peer's 1 us clock
            pkt.ts_ecr = self.ts_recent;
        }
        let mut i = 0;
        while i < words.len() {
            let arg = words.get(i + 1).copied().unwrap_or("");
            match words[i] {
                "ack" => {
                    pkt.ack = arg.parse().map_err(|_| format!("bad ack {arg:?}"))?;
                    i += 1;
                }
                "data" => {
                    let (a, b) = parse_range(arg)?;
                    pkt.seq = a;
                    pkt.payload = (b - a) as u32;
                    self.peer_seq = self.peer_seq.max(b);
                    i += 1;
                }
                "win" => {
                    let bytes: u64 = arg.parse().map_err(|_| format!("bad window {arg:?}"))?;
                    pkt.window = (bytes >> self.p.own_wscale()).min(u16::MAX as u64) as u16;
                    i += 1;
                }
                "sack" => {
                    for block in arg.split(',') {
                        let (a, b) = parse_range(block)?;
                        pkt.push_sack(a, b);
                    }
                    i += 1;
                }
                "tsecr" => {
                    pkt.ts_ecr = arg.parse().map_err(|_| format!("bad tsecr {arg:?}"))?;
                    i += 1;
                }
                "tsval" => {
                    pkt.ts_val = arg.parse().map_err(|_| format!("bad tsval {arg:?}"))?;
                    i += 1;
                }
                "seq" => {
                    pkt.seq = arg.parse().map_err(|_| format!("bad seq {arg:?}"))?;
                    i += 1;
                }
                "ece" => pkt.flags |= flags::ECE,
                "cwr" => pkt.flags |= flags::CWR,
                "fin" => {
                    pkt.flags |= flags::FIN;
                    self.peer_seq += 1;
                }
                "ce" => pkt.ecn = Ecn::Ce,
                "ect0" => pkt.ecn = Ecn::Ect0,
                w => return Err(format!("unknown word {w:?} in an inbound segment")),
            }
            i += 1;
        }
        let mut out = TcpOut::default();
        self.ep.on_packet(self.now, &pkt, &self.p, &mut out);
        self.ep.flush(self.now, &self.p, &mut out);
        self.take(out);
        Ok(())
    }

    /// The next packet the endpoint sent, which must have left at `t`.
    fn next_sent(&mut self, t: SimTime, what: &str) -> Result<Packet, String> {
        let (at, pkt) = self.sent.pop_front().ok_or_else(|| format!("expected {what}, but nothing was sent"))?;
        if at != t {
            return Err(format!("expected {what} at {t:?}, it was sent at {at:?} ({})", describe(&pkt)));
        }
        Ok(pkt)
    }

    /// `> data A:B [flags]`: the next segments cover A:B exactly, in order.
    fn outbound(&mut self, t: SimTime, words: &[&str]) -> Result<(), String> {
        match words.first().copied() {
            Some("data") => {
                let (a, b) = parse_range(words.get(1).copied().unwrap_or(""))?;
                let want = &words[2..];
                let mut at = a;
                while at < b {
                    let pkt = self.next_sent(t, &format!("data from {at}"))?;
                    if pkt.seq != at || pkt.payload == 0 || pkt.seq + pkt.payload as u64 > b {
                        return Err(format!("expected data {at}:{b}, got {}", describe(&pkt)));
                    }
                    check_marks(&pkt, want)?;
                    at += pkt.payload as u64;
                }
                Ok(())
            }
            Some("ack") => {
                let n: u64 = words.get(1).and_then(|w| w.parse().ok()).ok_or("`> ack N` needs a number")?;
                let pkt = self.next_sent(t, &format!("a pure ACK of {n}"))?;
                if pkt.payload != 0 || pkt.ack != n || pkt.has(flags::SYN | flags::FIN) {
                    return Err(format!("expected a pure ACK of {n}, got {}", describe(&pkt)));
                }
                check_marks(&pkt, &words[2..])
            }
            Some("fin") => {
                let pkt = self.next_sent(t, "a FIN")?;
                if !pkt.has(flags::FIN) {
                    return Err(format!("expected a FIN, got {}", describe(&pkt)));
                }
                check_marks(&pkt, &words[1..])
            }
            Some("win") => {
                let n: u64 = words.get(1).and_then(|w| w.parse().ok()).ok_or("`> win N` needs a number")?;
                let pkt = self.next_sent(t, &format!("a window of {n}"))?;
                if (pkt.window as u64) << self.p.own_wscale() != n {
                    return Err(format!("expected a window of {n}, got {}", describe(&pkt)));
                }
                Ok(())
            }
            other => Err(format!("unknown outbound {other:?}: use data, ack, fin or win")),
        }
    }

    fn expect(&self, words: &[&str]) -> Result<(), String> {
        let mss = self.ep.mss as u64;
        for w in words {
            if *w == "nothing" {
                if let Some((at, pkt)) = self.sent.front() {
                    return Err(format!("expected nothing sent, but {} was at {at:?}", describe(pkt)));
                }
                continue;
            }
            let (key, value) = w.split_once('=').ok_or_else(|| format!("expected KEY=VALUE, got {w:?}"))?;
            let bytes = |v: &str| -> Result<u64, String> {
                match v.strip_suffix("mss") {
                    Some(n) => n.parse::<f64>().map(|n| (n * mss as f64) as u64).map_err(|_| format!("bad {v:?}")),
                    None => v.parse().map_err(|_| format!("bad {v:?}")),
                }
            };
            let (got, want): (String, String) = match key {
                "cwnd" => (self.ep.cc.cwnd.to_string(), bytes(value)?.to_string()),
                "ssthresh" if value == "inf" => (self.ep.cc.ssthresh_is_infinite().to_string(), "true".into()),
                "ssthresh" => (self.ep.cc.ssthresh.to_string(), bytes(value)?.to_string()),
                "snd_una" => (self.ep.snd_una.to_string(), value.into()),
                "rcv_nxt" => (self.ep.rcv_nxt.to_string(), value.into()),
                "recovery" => (if self.ep.in_recovery() { "yes" } else { "no" }.into(), value.into()),
                "rto" => {
                    let left = self.ep.rto_timer.deadline.map(|d| d.since(self.now));
                    (format!("{left:?}"), format!("{:?}", Some(parse_dur(value)?)))
                }
                "timer" => (if self.ep.rto_timer.deadline.is_some() { "armed" } else { "off" }.into(), value.into()),
                "rack_timer" => {
                    let left = self.ep.rack_timer.deadline.map(|d| d.since(self.now));
                    (format!("{left:?}"), if value == "off" { "None".into() } else { format!("{:?}", Some(parse_dur(value)?)) })
                }
                "probes" => (self.ep.stats.tail_loss_probes.to_string(), value.into()),
                "timeouts" => (self.ep.stats.timeouts.to_string(), value.into()),
                "fast_retransmits" => (self.ep.stats.fast_retransmits.to_string(), value.into()),
                "ecn_reductions" => (self.ep.stats.ecn_reductions.to_string(), value.into()),
                "retransmits" => (self.ep.stats.retransmits.to_string(), value.into()),
                "spurious_timeouts" => (self.ep.stats.spurious_timeouts.to_string(), value.into()),
                "alpha" => (format!("{:.6}", self.ep.cc.alpha), format!("{:.6}", value.parse::<f64>().map_err(|_| format!("bad alpha {value:?}"))?)),
                _ => return Err(format!("unknown expectation {key:?}")),
            };
            if got != want {
                return Err(format!("expected {key}={value} ({want}), got {got}"));
            }
        }
        Ok(())
    }
}

fn check_marks(pkt: &Packet, want: &[&str]) -> Result<(), String> {
    for w in want {
        let ok = match *w {
            "retx" => pkt.is_retx,
            "new" => !pkt.is_retx,
            "cwr" => pkt.has(flags::CWR),
            "nocwr" => !pkt.has(flags::CWR),
            "ece" => pkt.has(flags::ECE),
            "noece" => !pkt.has(flags::ECE),
            "ect0" => pkt.ecn == Ecn::Ect0,
            "notect" => pkt.ecn == Ecn::NotEct,
            "fin" => pkt.has(flags::FIN),
            w if w.starts_with("tsecr=") => pkt.has_ts && w["tsecr=".len()..].parse() == Ok(pkt.ts_ecr),
            w if w.starts_with("sack=") => {
                let blocks: Vec<String> = pkt.sack_blocks().map(|(a, b)| format!("{a}:{b}")).collect();
                blocks.join(",") == w["sack=".len()..]
            }
            w => return Err(format!("unknown mark {w:?}")),
        };
        if !ok {
            return Err(format!("expected {w} on {}", describe(pkt)));
        }
    }
    Ok(())
}

fn describe(p: &Packet) -> String {
    let mut f = String::new();
    for (bit, c) in [(flags::SYN, 'S'), (flags::FIN, 'F'), (flags::ECE, 'E'), (flags::CWR, 'W')] {
        if p.has(bit) {
            f.push(c);
        }
    }
    let sack: Vec<String> = p.sack_blocks().map(|(a, b)| format!("{a}:{b}")).collect();
    format!(
        "[{f}] {}:{} ack {} win {}{}{}{}",
        p.seq,
        p.seq + p.payload as u64,
        p.ack,
        p.window,
        if p.is_retx { " retx" } else { "" },
        if sack.is_empty() { String::new() } else { format!(" sack {}", sack.join(",")) },
        if p.ecn == Ecn::NotEct { String::new() } else { format!(" {:?}", p.ecn) },
    )
}

/// Run one script; an error names its line.
fn run_script(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let mut config = String::new();
    let mut run: Option<Run> = None;
    let mut t = SimTime(0);
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let at = |e: String| format!("{}:{}: {e}\n    {raw}", path.display(), n + 1);
        if let Some(setting) = line.strip_prefix("tcp ") {
            if run.is_some() {
                return Err(at("tcp settings come before `connect`".into()));
            }
            config.push_str(setting);
            config.push('\n');
            continue;
        }
        if line == "connect" {
            let mut r = Run::new(&config).map_err(at)?;
            r.connect().map_err(at)?;
            run = Some(r);
            continue;
        }
        let r = run.as_mut().ok_or_else(|| at("the script must `connect` first".into()))?;
        let words: Vec<&str> = line.split_whitespace().collect();
        // A time: +D after the previous line, or D after the connection opened.
        t = match words[0].strip_prefix('+') {
            Some(d) => t + parse_dur(d).map_err(at)?,
            None => SimTime(0) + parse_dur(words[0]).map_err(at)?,
        };
        r.advance(t).map_err(at)?;
        let rest = &words[1..];
        match rest.first().copied() {
            Some("<") => r.inbound(&rest[1..]).map_err(at)?,
            Some(">") => r.outbound(t, &rest[1..]).map_err(at)?,
            Some("write") => {
                let bytes: u64 = rest.get(1).and_then(|w| w.parse().ok()).ok_or_else(|| at("`write N` needs a number".into()))?;
                let mut out = TcpOut::default();
                r.ep.write(bytes, rest.get(2) == Some(&"close"), &r.p);
                r.ep.flush(r.now, &r.p, &mut out);
                r.take(out);
            }
            Some("expect") => r.expect(&rest[1..]).map_err(at)?,
            other => return Err(at(format!("unknown command {other:?}"))),
        }
    }
    if let Some(r) = run {
        if let Some((at, pkt)) = r.sent.front() {
            return Err(format!("{}: the endpoint sent {} at {at:?}, which the script does not expect", path.display(), describe(pkt)));
        }
    }
    Ok(())
}

fn scripts() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let only = std::env::var("DCSIM_PKT").unwrap_or_default();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/conformance")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "pkt") && p.file_name().is_some_and(|n| n.to_string_lossy().contains(&only)))
        .collect();
    files.sort();
    files
}

#[test]
fn every_conformance_script_passes() {
    let files = scripts();
    let failures: Vec<String> = files.iter().filter_map(|f| run_script(f).err()).collect();
    assert!(failures.is_empty(), "{} of {} scripts failed:\n\n{}", failures.len(), files.len(), failures.join("\n\n"));
    if std::env::var("DCSIM_PKT").is_err() {
        assert!(files.len() >= 100, "the corpus has {} scripts", files.len());
    }
}

#[test]
fn a_script_that_expects_the_wrong_thing_fails_and_names_its_line() {
    let dir = std::env::temp_dir().join(format!("dcsim-pkt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.pkt");
    std::fs::write(&bad, "tcp delayed_ack = { enabled = false }\nconnect\n0 write 1000\n0 > data 1:1001\n+10us < ack 1001\n+0 expect cwnd=99mss\n").unwrap();
    let err = run_script(&bad).unwrap_err();
    assert!(err.contains("bad.pkt:6") && err.contains("expected cwnd=99mss"), "{err}");
    std::fs::write(&bad, "connect\n0 write 3000\n0 > data 1:1449\n").unwrap();
    let err = run_script(&bad).unwrap_err();
    assert!(err.contains("which the script does not expect"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
