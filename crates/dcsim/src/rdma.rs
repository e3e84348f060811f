//! An RDMA transport in the manner of RoCEv2's reliable connection (IBTA
//! InfiniBand Architecture Specification Vol. 1, Ch. 9 (transport) with
//! Annex A17 (RoCEv2)): one queue pair (QP) per flow, a message sent as a
//! stream of packets at the rate its NIC's rate limiter allows, no slow
//! start, cumulative ACKs, go-back-N on a NAK (sequence error) or a timeout;
//! or, with `recovery = "irn"`, IRN's selective repeat (Mittal et al.,
//! "Revisiting Network Support for RDMA", SIGCOMM 2018, §3.1): the receiver
//! keeps out-of-order packets and NAKs each one with the cumulative ACK and
//! the packet it got; the sender resends only the holes below the highest
//! selectively acknowledged byte, then new data.
//! The receiver is also DCQCN's notification point: a CE-marked data packet
//! makes it send a CNP, at most one per `cnp_interval` per QP; under DCTCP
//! (crate::rdma_dctcp) it echoes the mark in its next ACK instead. See
//! docs/models/rdma.md.
//!
//! A QP here is state and pure transitions; the world owns the NIC's
//! scheduler (it pulls packets from its QPs when its port is free), the
//! timers and the packets on the wire.

use crate::config::RdmaCfg;
use crate::dcqcn::Dcqcn;
use crate::hpcc::Hpcc;
use crate::rdma_dctcp::RdmaDctcp;
use crate::timely::Timely;
use crate::packet::{Ecn, FrameKind, Packet};
use crate::tcp::ranges::RangeSet;
use dcsim_engine::{Dur, SimTime};

/// A QP's congestion control.
pub enum QpCc {
    /// Line rate always.
    None,
    Dcqcn(Box<Dcqcn>),
    Timely(Box<Timely>),
    Hpcc(Box<Hpcc>),
    Dctcp(Box<RdmaDctcp>),
}

impl QpCc {
    /// Rate cuts so far (the flows table's `ecn_reductions`).
    pub fn decreases(&self) -> u64 {
        match self {
            QpCc::None => 0,
            QpCc::Dcqcn(d) => d.cuts,
            QpCc::Timely(t) => t.decreases,
            QpCc::Hpcc(h) => h.decreases,
            QpCc::Dctcp(d) => d.decreases,
        }
    }
}

/// What a QP counted.
#[derive(Clone, Copy, Debug, Default)]
pub struct QpStats {
    pub packets_sent: u64,
    /// Data packets sent again (after a NAK or a timeout).
    pub retransmits: u64,
    pub timeouts: u64,
    pub naks_received: u64,
    pub cnps_received: u64,
    pub cnps_sent: u64,
    pub ce_received: u64,
}

pub struct Qp {
    pub flow: u32,
    pub src: u32,
    pub dst: u32,
    pub flow_hash: u32,
    pub dscp: u8,
    pub size: u64,
    // ---- sender
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// The highest byte ever sent (below it, a packet is a retransmission).
    sent_max: u64,
    /// The rate limiter: rate (b/s), and when the next packet may start.
    pub rate: f64,
    pub next_avail: SimTime,
    /// The last paced burst's start and wire bytes (the rate limiter's
    /// reference when the rate changes).
    last_sent: Option<(SimTime, u64)>,
    /// Bytes the rate limiter lets go back to back before a gap (TIMELY's
    /// segments; 0: every packet is paced), and the open burst's start and
    /// bytes so far.
    pub burst: u64,
    burst_open: Option<(SimTime, u64)>,
    /// A cap on unacknowledged bytes (HPCC's window, IRN's BDP-FC), if any.
    pub window: Option<u64>,
    /// IRN's sender: the bytes the receiver holds beyond `snd_una`, and
    /// while recovering, the end of what was sent when it began and the
    /// next byte to look for holes from. None: go-back-N.
    pub irn: Option<Box<IrnSender>>,
    pub cc: QpCc,
    /// The retransmission deadline, and whether an event is pending for it.
    pub rto_deadline: Option<SimTime>,
    pub rto_event: bool,
    /// Per timer kind (crate::world's RdmaTimer), a generation: an event
    /// of an older generation is stale.
    pub timer_gen: [u32; 4],
    // ---- receiver
    pub expected: u64,
    /// IRN: bytes received beyond `expected` (go-back-N drops them).
    ooo: RangeSet,
    unacked: u32,
    last_nak: Option<(u64, SimTime)>,
    last_cnp: Option<SimTime>,
    /// DCTCP: a CE mark not yet echoed.
    ce_pending: bool,
    pub stats: QpStats,
}

#[derive(Default)]
pub struct IrnSender {
    sacked: RangeSet,
    recovering: bool,
    recovery_point: u64,
    scan_from: u64,
}

impl IrnSender {
    /// The next hole to resend while recovering: [start, end) below the
    /// highest selectively acknowledged byte, from `scan_from` on.
    fn next_hole(&self, snd_una: u64, payload: u64) -> Option<(u64, u64)> {
        let high = self.sacked.iter().next_back()?.1;
        let mut x = self.scan_from.max(snd_una);
        while x < high {
            match self.sacked.next_covered_from(x) {
                Some((a, b)) if a <= x => x = b,
                Some((a, _)) => return Some((x, (x + payload).min(a))),
                None => return None,
            }
        }
        None
    }
}

/// The receiver's answer to a data packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RxOutcome {
    /// New in-order bytes.
    pub delivered: u64,
    /// Send an ACK or a NAK (both carry `expected`).
    pub reply: Option<FrameKind>,
    pub cnp: bool,
    /// The reply echoes a CE mark (DCTCP).
    pub ece: bool,
}

fn irn(cfg: &RdmaCfg) -> bool {
    matches!(cfg.recovery, crate::config::RdmaRecovery::Irn(_))
}

impl Qp {
    #[allow(clippy::too_many_arguments)]
    pub fn new(flow: u32, src: u32, dst: u32, flow_hash: u32, dscp: u8, size: u64, line_rate: f64, cc: QpCc) -> Qp {
        Qp {
            flow,
            src,
            dst,
            flow_hash,
            dscp,
            size,
            snd_una: 0,
            snd_nxt: 0,
            sent_max: 0,
            rate: line_rate,
            next_avail: SimTime::ZERO,
            last_sent: None,
            burst: 0,
            burst_open: None,
            window: None,
            irn: None,
            cc,
            rto_deadline: None,
            rto_event: false,
            timer_gen: [0; 4],
            expected: 0,
            ooo: RangeSet::default(),
            unacked: 0,
            last_nak: None,
            last_cnp: None,
            ce_pending: false,
            stats: QpStats::default(),
        }
    }

    /// Bytes left to send (new or again) that the window allows.
    #[inline]
    pub fn has_data(&self) -> bool {
        let open = self.window.is_none_or(|w| self.snd_nxt - self.snd_una < w);
        match &self.irn {
            None => self.snd_nxt < self.size && open,
            // A hole to resend goes regardless of the window: it is inside it.
            Some(irn) => irn.recovering && irn.next_hole(self.snd_una, 1).is_some() || self.snd_nxt < self.size && open,
        }
    }

    /// Every byte is acknowledged.
    #[inline]
    pub fn done(&self) -> bool {
        self.snd_una >= self.size
    }

    /// The next data packet (the caller checked `has_data` and the rate
    /// limiter); advances the send point.
    pub fn next_packet(&mut self, now: SimTime, payload: u64, conn: u32) -> Packet {
        // IRN resends the next hole first.
        if let Some(irn) = self.irn.as_deref_mut().filter(|i| i.recovering) {
            if let Some((a, b)) = irn.next_hole(self.snd_una, payload) {
                irn.scan_from = b;
                return self.data_packet(now, a, b - a, conn);
            }
        }
        let len = payload.min(self.size - self.snd_nxt);
        let pkt = self.data_packet(now, self.snd_nxt, len, conn);
        self.snd_nxt += len;
        self.sent_max = self.sent_max.max(self.snd_nxt);
        pkt
    }

    fn data_packet(&mut self, now: SimTime, seq: u64, len: u64, conn: u32) -> Packet {
        let pkt = Packet {
            kind: FrameKind::RoceData,
            conn,
            side: 0,
            src_host: self.src,
            dst_host: self.dst,
            flow_hash: self.flow_hash,
            seq,
            payload: len as u32,
            ecn: Ecn::Ect0,
            dscp: self.dscp,
            is_retx: seq < self.sent_max,
            // The NIC's send timestamp (ns, wrapping), echoed for TIMELY's RTT.
            ts_val: (now.ps() / 1000) as u32,
            ..Default::default()
        };
        self.stats.packets_sent += 1;
        self.stats.retransmits += pkt.is_retx as u64;
        pkt
    }

    /// The rate limiter after a packet of `wire_bytes` started at `now`:
    /// the next may start one gap at the rate later, or with bursts, at
    /// once until the burst is full, then one gap for the whole burst
    /// after its start.
    pub fn paced(&mut self, now: SimTime, wire_bytes: u64) {
        let (start, bytes) = match self.burst_open.take() {
            Some((t, b)) => (t, b + wire_bytes),
            None => (now, wire_bytes),
        };
        if bytes < self.burst {
            self.burst_open = Some((start, bytes));
            self.next_avail = now;
            return;
        }
        self.last_sent = Some((start, bytes));
        self.next_avail = start + Self::gap(bytes, self.rate);
    }

    /// A new rate: the next packet (or burst) may start one gap at this rate
    /// after the last one started (as a rate limiter re-evaluates its
    /// pending packet).
    pub fn set_rate(&mut self, rate: f64) {
        self.rate = rate;
        if let (Some((t, bytes)), None) = (self.last_sent, self.burst_open) {
            self.next_avail = t + Self::gap(bytes, rate);
        }
    }

    fn gap(wire_bytes: u64, rate: f64) -> Dur {
        Dur((wire_bytes as f64 * 8e12 / rate).ceil() as u64)
    }

    /// An ACK (or the cumulative part of a NAK) for bytes before `ack`.
    /// True if it acknowledged new bytes.
    pub fn on_ack(&mut self, ack: u64) -> bool {
        if ack <= self.snd_una {
            return false;
        }
        self.snd_una = ack.min(self.size);
        self.snd_nxt = self.snd_nxt.max(self.snd_una);
        if let Some(irn) = &mut self.irn {
            irn.sacked.remove_below(self.snd_una);
            if irn.recovering && self.snd_una >= irn.recovery_point {
                irn.recovering = false;
            }
        }
        true
    }

    /// A NAK at `ack`: go back to it (go-back-N), or (IRN) note the packet
    /// it reports, `sacked`, and resend the holes below it.
    pub fn on_nak(&mut self, ack: u64, sacked: Option<(u64, u64)>) {
        self.stats.naks_received += 1;
        self.on_ack(ack);
        match &mut self.irn {
            None => self.snd_nxt = self.snd_una,
            Some(irn) => {
                if let Some((a, b)) = sacked.filter(|&(a, _)| a >= self.snd_una) {
                    irn.sacked.insert(a, b);
                }
                if !irn.recovering {
                    irn.recovering = true;
                    irn.recovery_point = self.sent_max;
                    irn.scan_from = self.snd_una;
                }
            }
        }
    }

    /// The retransmission timer expired with bytes outstanding: go back
    /// (IRN: resend every hole from the first unacknowledged byte on).
    pub fn on_timeout(&mut self) {
        self.stats.timeouts += 1;
        match &mut self.irn {
            None => self.snd_nxt = self.snd_una,
            Some(irn) => {
                irn.recovering = true;
                irn.recovery_point = self.sent_max;
                irn.scan_from = self.snd_una;
                // Nothing selectively acknowledged: the first packet is the hole.
                if irn.sacked.is_empty() {
                    irn.sacked.insert(self.sent_max, self.sent_max + 1);
                }
            }
        }
    }

    /// Bytes sent and not yet acknowledged (IRN picks its timeout by them).
    pub fn outstanding(&self) -> u64 {
        self.sent_max - self.snd_una
    }

    /// A data packet of `seq`..`seq + len` arrived (CE-marked or not).
    pub fn on_data(&mut self, now: SimTime, seq: u64, len: u64, ce: bool, cfg: &RdmaCfg) -> RxOutcome {
        let mut out = RxOutcome::default();
        let echo = matches!(cfg.cc, crate::config::RdmaCc::Dctcp(_));
        if ce {
            self.stats.ce_received += 1;
            self.ce_pending |= echo;
        }
        if ce && !echo && self.last_cnp.is_none_or(|t| now.since(t) >= cfg.cnp_interval.0) {
            self.last_cnp = Some(now);
            self.stats.cnps_sent += 1;
            out.cnp = true;
        }
        if seq == self.expected {
            let before = self.expected;
            self.expected += len;
            // IRN: the packets kept beyond the gap now join.
            if let Some((a, b)) = self.ooo.first().filter(|&(a, _)| a <= self.expected) {
                self.expected = self.expected.max(b.max(a));
                self.ooo.remove_below(self.expected);
            }
            out.delivered = self.expected - before;
            self.unacked += 1;
            if self.unacked >= cfg.ack_every || self.expected >= self.size {
                self.unacked = 0;
                out.reply = Some(FrameKind::RoceAck);
            }
        } else if seq > self.expected && irn(cfg) {
            // Kept; every out-of-order packet is NAKed with what it was.
            self.ooo.insert(seq, seq + len);
            out.reply = Some(FrameKind::RoceNack);
        } else if seq > self.expected {
            // A gap: NAK it once, and again only after the NAK interval.
            let again = match self.last_nak {
                Some((at, t)) => at != self.expected || now.since(t) >= cfg.nack_interval.0,
                None => true,
            };
            if again {
                self.last_nak = Some((self.expected, now));
                out.reply = Some(FrameKind::RoceNack);
            }
        } else {
            // A duplicate (the sender went back further than needed): ACK
            // so that the sender learns where the receiver is.
            out.reply = Some(FrameKind::RoceAck);
        }
        if out.reply.is_some() {
            out.ece = std::mem::take(&mut self.ce_pending);
        }
        out
    }

    /// This receiver keeps out-of-order packets (IRN).
    pub fn irn_receiver(&self, cfg: &RdmaCfg) -> bool {
        irn(cfg)
    }

    /// The reply (`kind`: ACK, NAK or CNP) to the sender, echoing the send
    /// timestamp `ts` of the data packet that caused it. (IRN's NAK also
    /// carries the packet it reports: the caller adds it.)
    pub fn reply(&self, kind: FrameKind, conn: u32, dscp: u8, ts: u32) -> Packet {
        Packet { kind, conn, side: 1, src_host: self.dst, dst_host: self.src, flow_hash: self.flow_hash, ack: self.expected, dscp, ts_ecr: ts, ..Default::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> RdmaCfg {
        crate::Scenario::from_toml_str("[run]\nduration = \"1ms\"\n[topology]\ntype = \"star\"\nhosts = 2\nlink_rate = \"100Gbps\"\nlink_delay = \"1us\"\n[rdma]\n").unwrap().rdma.unwrap()
    }

    fn t(us: u64) -> SimTime {
        SimTime::ZERO + Dur::from_us(us)
    }

    #[test]
    fn packets_cover_the_message_and_pacing_follows_the_rate() {
        let mut q = Qp::new(0, 0, 1, 7, 3, 2500, 100e9, QpCc::None);
        let sizes: Vec<u32> = std::iter::from_fn(|| q.has_data().then(|| q.next_packet(t(0), 1000, 0).payload)).collect();
        assert_eq!(sizes, [1000, 1000, 500]);
        // 1062 B at 100 Gb/s: 84.96 ns.
        q.paced(t(0), 1062);
        assert_eq!(q.next_avail, SimTime::ZERO + Dur(84_960));
        q.rate = 10e9;
        q.paced(t(0), 1062);
        assert_eq!(q.next_avail, SimTime::ZERO + Dur(849_600));
    }

    #[test]
    fn go_back_n_on_a_nak_and_retransmissions_are_counted() {
        let mut q = Qp::new(0, 0, 1, 7, 3, 5000, 100e9, QpCc::None);
        for _ in 0..4 {
            q.next_packet(t(0), 1000, 0);
        }
        assert!(q.on_ack(1000));
        q.on_nak(2000, None);
        assert_eq!((q.snd_una, q.snd_nxt), (2000, 2000));
        let p = q.next_packet(t(0), 1000, 0);
        assert!(p.is_retx && p.seq == 2000);
        q.next_packet(t(0), 1000, 0);
        let p = q.next_packet(t(0), 1000, 0);
        assert!(!p.is_retx && p.seq == 4000, "new data again past the highest sent");
        assert_eq!(q.stats.retransmits, 2);
        assert!(!q.on_ack(1500), "an old ACK changes nothing");
    }

    #[test]
    fn irn_keeps_out_of_order_data_and_resends_only_the_holes() {
        let mut c = cfg();
        c.recovery = crate::config::RdmaRecovery::Irn(serde_json::from_str("{}").unwrap());
        // Receiver: 1000..2000 lost; 2000..4000 kept and NAKed; the retransmission joins them.
        let mut r = Qp::new(0, 0, 1, 7, 3, 10_000, 100e9, QpCc::None);
        r.on_data(t(0), 0, 1000, false, &c);
        assert_eq!(r.on_data(t(1), 2000, 1000, false, &c).reply, Some(FrameKind::RoceNack));
        assert_eq!(r.on_data(t(2), 3000, 1000, false, &c).reply, Some(FrameKind::RoceNack), "every one");
        assert_eq!(r.on_data(t(3), 1000, 1000, false, &c).delivered, 3000);
        assert_eq!(r.expected, 4000);
        // Sender: five packets out; NAKs report 2000 and 4000 held beyond 1000: holes 1000 and 3000.
        let mut q = Qp::new(0, 0, 1, 7, 3, 10_000, 100e9, QpCc::None);
        q.irn = Some(Box::default());
        for _ in 0..5 {
            q.next_packet(t(0), 1000, 0);
        }
        q.on_nak(1000, Some((2000, 3000)));
        q.on_nak(1000, Some((4000, 5000)));
        let p = q.next_packet(t(5), 1000, 0);
        assert!(p.is_retx && p.seq == 1000);
        let p = q.next_packet(t(5), 1000, 0);
        assert!(p.is_retx && p.seq == 3000, "skips what the receiver holds");
        let p = q.next_packet(t(5), 1000, 0);
        assert!(!p.is_retx && p.seq == 5000, "then new data");
        assert!(q.on_ack(5000) && q.irn.as_ref().is_some_and(|i| !i.recovering), "past the recovery point");
    }

    #[test]
    fn the_receiver_acks_naks_once_and_paces_cnps() {
        let c = cfg();
        let mut r = Qp::new(0, 0, 1, 7, 3, 10_000, 100e9, QpCc::None);
        let o = r.on_data(t(0), 0, 1000, true, &c);
        assert_eq!(o, RxOutcome { delivered: 1000, reply: Some(FrameKind::RoceAck), cnp: true, ece: false });
        // A second CE packet within 50 us: no CNP.
        assert!(!r.on_data(t(10), 1000, 1000, true, &c).cnp);
        assert!(r.on_data(t(60), 2000, 1000, true, &c).cnp);
        // Packet 3000 lost: 4000 and 5000 arrive. One NAK, then silence.
        assert_eq!(r.on_data(t(61), 4000, 1000, false, &c).reply, Some(FrameKind::RoceNack));
        assert_eq!(r.on_data(t(62), 5000, 1000, false, &c).reply, None);
        assert_eq!(r.on_data(t(600), 5000, 1000, false, &c).reply, Some(FrameKind::RoceNack), "after the NAK interval");
        // The retransmission fills the gap.
        assert_eq!(r.on_data(t(601), 3000, 1000, false, &c).delivered, 1000);
        assert_eq!(r.expected, 4000);
        assert_eq!(r.reply(FrameKind::RoceAck, 0, 0, 0).ack, 4000);
    }
}
