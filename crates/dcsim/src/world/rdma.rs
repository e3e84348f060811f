//! RDMA in the world (crate::rdma has the queue pairs, crate::dcqcn the
//! reaction point): each host's NIC pulls data packets from its QPs when its
//! port is free, round robin among the QPs its rate limiter lets send;
//! ACKs, NAKs and CNPs go through the port's queue, ahead of data. See
//! docs/models/rdma.md.

use super::*;
use crate::config::{RdmaCc, RdmaCfg, RdmaCompletion, RdmaRecovery};
use crate::dcqcn::Dcqcn;
use crate::hpcc::{Hpcc, IntHop, IntStack};
use crate::packet::FrameKind;
use crate::rdma::{IrnSender, Qp, QpCc};
use crate::rdma_dctcp::RdmaDctcp;
use crate::timely::Timely;

/// Timer kinds of a QP (index into `Qp::timer_gen`).
pub(super) const RTO: u8 = 0;
pub(super) const ALPHA: u8 = 1;
pub(super) const INCREASE: u8 = 2;
pub(super) const DECREASE: u8 = 3;

/// One host's NIC: its QPs with data or unacknowledged bytes, and the
/// round-robin position.
#[derive(Default)]
struct Nic {
    qps: Vec<u32>,
    next: usize,
    /// The pending wake-up for a rate limiter, if any.
    wake: Option<SimTime>,
}

pub(super) struct RdmaRun {
    cfg: RdmaCfg,
    pub(super) qps: Vec<Qp>,
    nics: Vec<Nic>,
    /// HPCC: the INT records of each packet slot (indexed like the packet
    /// pool; empty without HPCC), the records a header holds, its bytes,
    /// and the base RTT T (s).
    pub(super) int: Vec<IntStack>,
    pub(super) int_hops: u8,
    int_bytes: u8,
    base_rtt: f64,
}

impl RdmaRun {
    pub(super) fn new(s: &Scenario, net: &Network, preamble: bool) -> RdmaRun {
        let cfg = s.rdma.as_ref().expect("RDMA");
        let (int_hops, base_rtt) = match &cfg.cc {
            RdmaCc::Hpcc(h) => (h.max_hops, h.base_rtt.map_or_else(|| max_base_rtt(net, cfg, h.max_hops, preamble), |t| t.0.as_secs_f64())),
            // The window and IRN's BDP-FC need the base RTT too.
            _ if cfg.window || matches!(cfg.recovery, RdmaRecovery::Irn(_)) => (0, max_base_rtt(net, cfg, 0, preamble)),
            _ => (0, 0.0),
        };
        RdmaRun {
            cfg: cfg.clone(),
            qps: Vec::new(),
            nics: (0..net.num_hosts).map(|_| Nic::default()).collect(),
            int: Vec::new(),
            int_hops,
            int_bytes: if int_hops > 0 { 2 + 8 * int_hops } else { 0 },
            base_rtt,
        }
    }
}

/// The retransmission timeout for `q` now: go-back-N's `rto`, or IRN's
/// low one while few packets are outstanding, else its high one.
fn rto_for(cfg: &RdmaCfg, q: &Qp) -> Dur {
    match &cfg.recovery {
        RdmaRecovery::GoBackN => cfg.rto.0,
        RdmaRecovery::Irn(irn) => {
            let few = q.outstanding() <= irn.low_packets as u64 * cfg.payload.0;
            if few { irn.rto_low.0 } else { irn.rto_high.0 }
        }
    }
}

/// The bytes a QP at `rate` sends in the base RTT `t` (`rdma.window`, IRN's BDP-FC).
fn bdp_window(rate: f64, t: f64) -> u64 {
    (rate * t / 8.0).ceil() as u64
}

/// HPCC's T when not given: the largest base RTT from host 0 to any other
/// host (every host's, in the symmetric topologies), a full data packet out
/// and its ACK back, each stored and forwarded at every hop.
fn max_base_rtt(net: &Network, cfg: &RdmaCfg, hops: u8, preamble: bool) -> f64 {
    let int = 2 + 8 * hops;
    let extra = if preamble { crate::packet::PREAMBLE } else { 0 };
    let data = Packet { kind: FrameKind::RoceData, payload: cfg.payload.0 as u32, int_bytes: int, ..Default::default() }.frame_len() + extra;
    let ack = Packet { kind: FrameKind::RoceAck, int_bytes: int, ..Default::default() }.frame_len() + extra;
    (1..net.num_hosts)
        .filter_map(|d| {
            let there = net.path(0, d, 0)?;
            let back = net.path(d, 0, 0)?;
            let one = |path: &[u32], bytes: u64| path.iter().map(|&p| net.ports[p as usize].delay + net.ports[p as usize].rate.tx_time(bytes)).fold(Dur::ZERO, |a, b| a + b);
            Some((one(&there, data) + one(&back, ack)).as_secs_f64())
        })
        .fold(0.0, f64::max)
}

impl World<'_> {
    fn rdma(&self) -> &RdmaRun {
        self.rdma.as_ref().expect("RDMA")
    }

    /// Flow `f` starts: a new QP at its source's NIC.
    pub(super) fn rdma_start(&mut self, now: SimTime, f: u32) {
        let fr = &self.flows[f as usize];
        let (src, dst, dscp) = (fr.src, fr.dst, fr.dscp);
        let size = fr.size.unwrap_or(u64::MAX / 4);
        let line = self.net.ports[self.net.nic(src) as usize].rate.bps as f64;
        let hash = self.hash_rng.next_u32();
        let run = self.rdma.as_mut().expect("RDMA");
        let cc = match &run.cfg.cc {
            RdmaCc::None => QpCc::None,
            RdmaCc::Dcqcn(c) => QpCc::Dcqcn(Box::new(Dcqcn::new(c, line))),
            RdmaCc::Timely(c) => QpCc::Timely(Box::new(Timely::new(c, line))),
            RdmaCc::Hpcc(c) => QpCc::Hpcc(Box::new(Hpcc::new(c, line, run.base_rtt))),
            RdmaCc::Dctcp(c) => QpCc::Dctcp(Box::new(RdmaDctcp::new(c, line))),
        };
        let qp = run.qps.len() as u32;
        let mut q = Qp::new(f, src, dst, hash, dscp, size, line, cc);
        if let RdmaRecovery::Irn(irn) = &run.cfg.recovery {
            q.irn = Some(Box::<IrnSender>::default());
            if irn.bdp_cap {
                q.window = Some(bdp_window(line, run.base_rtt));
            }
        }
        match &q.cc {
            QpCc::Hpcc(h) => q.window = Some(h.window()),
            _ if run.cfg.window => q.window = Some(bdp_window(line, run.base_rtt)),
            _ => {}
        }
        if let RdmaCc::Timely(t) = &run.cfg.cc {
            q.burst = if t.segment_bursts { t.segment.0 } else { 0 };
        }
        run.qps.push(q);
        run.nics[src as usize].qps.push(qp);
        self.flows[f as usize].conn = qp;
        self.rdma_kick(now, src);
    }

    /// Let `host`'s NIC send if its port is free.
    #[inline(never)]
    pub(super) fn rdma_kick(&mut self, now: SimTime, host: u32) {
        let nic = self.net.nic(host);
        let p = &self.net.ports[nic as usize];
        if p.transmitting.is_none() && p.queue_packets() == 0 {
            self.rdma_pull(now, host);
        }
    }

    /// `host`'s port is free: send the next data packet of the first QP in
    /// round-robin order that may send now, or wake up when one may.
    fn rdma_pull(&mut self, now: SimTime, host: u32) {
        let nic_port = self.net.nic(host);
        let paused = self.net.ports[nic_port as usize].pfc.as_ref().map_or(0, |p| p.paused_mask(now));
        let classes = self.scenario.switch_classes();
        let run = self.rdma.as_mut().expect("RDMA");
        let nic = &mut run.nics[host as usize];
        let n = nic.qps.len();
        let mut earliest: Option<SimTime> = None;
        for k in 0..n {
            let i = (nic.next + k) % n;
            let qp = &run.qps[nic.qps[i] as usize];
            let class = (qp.dscp as usize).min(classes - 1);
            if !qp.has_data() || paused & (1 << class.min(7)) != 0 {
                continue;
            }
            if qp.next_avail > now {
                earliest = Some(earliest.map_or(qp.next_avail, |t: SimTime| t.min(qp.next_avail)));
                continue;
            }
            nic.next = (i + 1) % n;
            let id = nic.qps[i];
            return self.rdma_send(now, host, id);
        }
        if let Some(t) = earliest {
            if nic.wake.is_none_or(|w| w > t || w <= now) {
                nic.wake = Some(t);
                self.q.schedule(t, Ev::RdmaWake(host));
            }
        }
    }

    /// A rate limiter's wake-up.
    pub(super) fn rdma_wake(&mut self, now: SimTime, host: u32) {
        let nic = &mut self.rdma.as_mut().expect("RDMA").nics[host as usize];
        if nic.wake != Some(now) {
            return; // superseded by an earlier one
        }
        nic.wake = None;
        self.rdma_kick(now, host);
    }

    /// QP `qp` sends its next data packet now.
    fn rdma_send(&mut self, now: SimTime, host: u32, qp: u32) {
        let payload = self.rdma().cfg.payload.0;
        let run = self.rdma.as_mut().expect("RDMA");
        let int_bytes = run.int_bytes;
        let q = &mut run.qps[qp as usize];
        let mut pkt = q.next_packet(now, payload, qp);
        pkt.int_bytes = int_bytes;
        pkt.finalize_size(self.preamble);
        q.paced(now, pkt.wire_bytes as u64);
        if let QpCc::Dcqcn(d) = &mut q.cc {
            d.on_sent(pkt.wire_bytes as u64);
        }
        let rto = rto_for(&run.cfg, q);
        if q.rto_deadline.is_none() {
            q.rto_deadline = Some(now + rto);
        }
        let arm = !std::mem::replace(&mut q.rto_event, true);
        if arm {
            self.q.schedule(now + rto, Ev::RdmaTimer { qp, kind: RTO, gen: 0 });
        }
        self.rdma_inject(now, host, pkt, &IntStack::default());
    }

    /// Send `pkt` from `host`'s NIC, with the INT records `int` (HPCC: none
    /// for new data, the data packet's for an ACK).
    fn rdma_inject(&mut self, now: SimTime, host: u32, pkt: Packet, int: &IntStack) {
        let id = self.pool.alloc(pkt);
        self.pool.get_mut(id).finalize_size(self.preamble);
        self.packets_created += 1;
        if self.rdma.as_ref().expect("RDMA").int_hops > 0 {
            self.set_int(id, int);
        }
        let nic = self.net.nic(host);
        self.enqueue(now, nic, id);
    }

    /// HPCC: frame `id` carries the INT records `int`.
    pub(super) fn set_int(&mut self, id: PktId, int: &IntStack) {
        let run = self.rdma.as_mut().expect("RDMA");
        let i = id.0 as usize;
        if i >= run.int.len() {
            run.int.resize(i + 1, IntStack::default());
        }
        run.int[i] = *int;
    }

    /// HPCC: switch port `port` starts sending data packet `id`: append its record.
    #[cold]
    #[inline(never)]
    pub(super) fn int_stamp(&mut self, now: SimTime, port: u32, id: PktId) {
        if self.pool.get(id).kind != FrameKind::RoceData {
            return;
        }
        let p = &self.net.ports[port as usize];
        let hop = IntHop { ts: now.ps(), qlen: p.queue_bytes(), tx_bytes: p.stats.tx_bytes, rate: p.rate.bps };
        let run = self.rdma.as_mut().expect("RDMA");
        let max = run.int_hops;
        run.int[id.0 as usize].push(hop, max);
    }

    /// A RoCE packet reached `host`. (Kept out of line: TCP runs pay nothing for it.)
    #[inline(never)]
    pub(super) fn rdma_deliver(&mut self, now: SimTime, host: u32, id: PktId) {
        self.packets_delivered += 1;
        let pkt = *self.pool.get(id);
        let run = self.rdma.as_ref().expect("RDMA");
        let int = if run.int_hops > 0 { run.int[id.0 as usize] } else { IntStack::default() };
        self.pool.free(id);
        let qp = pkt.conn;
        match pkt.kind {
            FrameKind::RoceData => self.rdma_receive(now, host, qp, &pkt, &int),
            FrameKind::RoceAck | FrameKind::RoceNack => {
                let run = self.rdma.as_mut().expect("RDMA");
                let q = &mut run.qps[qp as usize];
                let progress = if pkt.kind == FrameKind::RoceNack {
                    let before = q.snd_una;
                    q.on_nak(pkt.ack, pkt.sack_blocks().next());
                    q.snd_una > before
                } else {
                    q.on_ack(pkt.ack)
                };
                if progress {
                    let rto = rto_for(&run.cfg, q);
                    q.rto_deadline = (q.outstanding() > 0).then_some(now + rto);
                }
                // The rate-based schemes react to every ACK.
                let rtt = Dur::from_ns(((now.ps() / 1000) as u32).wrapping_sub(pkt.ts_ecr) as u64).as_secs_f64();
                let rate = match &mut q.cc {
                    QpCc::Timely(t) => t.on_ack(q.snd_una, q.snd_nxt, rtt, now.as_secs_f64()),
                    QpCc::Hpcc(h) => {
                        let r = h.on_ack(pkt.ack, q.snd_nxt, &int);
                        q.window = Some(h.window());
                        r
                    }
                    QpCc::Dctcp(d) => d.on_ack(pkt.ack, q.snd_nxt, pkt.has(crate::packet::flags::ECE), run.cfg.payload.0),
                    QpCc::None | QpCc::Dcqcn(_) => None,
                };
                if let Some(r) = rate {
                    self.rdma_set_rate(qp, r);
                }
                let q = &self.rdma().qps[qp as usize];
                if q.done() {
                    if self.rdma().cfg.completion == RdmaCompletion::Sender {
                        self.rdma_complete(now, qp);
                    }
                    self.rdma_finish(host, qp);
                }
                self.rdma_kick(now, host);
            }
            FrameKind::RoceCnp => self.rdma_cnp(now, qp),
            _ => unreachable!("a RoCE packet"),
        }
    }

    /// The receiver's side of a data packet: deliver, answer, notify.
    fn rdma_receive(&mut self, now: SimTime, host: u32, qp: u32, pkt: &Packet, int: &IntStack) {
        let control = self.rdma().cfg.control_dscp;
        let run = self.rdma.as_mut().expect("RDMA");
        let int_bytes = run.int_bytes;
        let q = &mut run.qps[qp as usize];
        let out = q.on_data(now, pkt.seq, pkt.payload as u64, pkt.ecn == crate::packet::Ecn::Ce, &run.cfg);
        let ece = if out.ece { crate::packet::flags::ECE } else { 0 };
        let mut reply = out.reply.map(|k| Packet { int_bytes, flags: ece, ..q.reply(k, qp, control, pkt.ts_val) });
        if let Some(r) = reply.as_mut().filter(|r| r.kind == FrameKind::RoceNack && q.irn_receiver(&run.cfg)) {
            // IRN's NAK names the packet that arrived out of order.
            r.push_sack(pkt.seq, pkt.seq + pkt.payload as u64);
        }
        let cnp = out.cnp.then(|| q.reply(FrameKind::RoceCnp, qp, control, pkt.ts_val));
        let (flow, expected) = (q.flow, q.expected);
        if out.delivered > 0 {
            self.flows[flow as usize].received = expected;
            if self.rdma().cfg.completion == RdmaCompletion::Receiver {
                self.rdma_complete(now, qp);
            }
        }
        if let Some(c) = cnp {
            self.rdma_inject(now, host, c, &IntStack::default());
        }
        if let Some(r) = reply {
            self.rdma_inject(now, host, r, int);
        }
    }

    /// A CNP reached the sender of `qp`: DCQCN's reaction point.
    fn rdma_cnp(&mut self, now: SimTime, qp: u32) {
        let Some(RdmaCc::Dcqcn(cfg)) = self.rdma.as_ref().map(|r| r.cfg.cc.clone()) else { return };
        let q = &mut self.rdma.as_mut().expect("RDMA").qps[qp as usize];
        q.stats.cnps_received += 1;
        if q.done() {
            return;
        }
        let QpCc::Dcqcn(d) = &mut q.cc else { return };
        let timers = d.on_cnp(cfg.decrease_interval.is_some());
        let rate = d.rc;
        self.rdma_set_rate(qp, rate);
        if timers.start {
            self.rdma_arm(now, qp, ALPHA, cfg.alpha_interval.0);
            if let Some(i) = cfg.decrease_interval {
                self.rdma_arm(now, qp, DECREASE, i.0);
            }
        }
        if timers.restart_increase {
            self.rdma_arm(now, qp, INCREASE, cfg.increase_timer.0);
        }
        let host = self.rdma().qps[qp as usize].src;
        self.rdma_kick(now, host);
    }

    /// `qp`'s flow is complete at `now` if all its bytes have arrived.
    fn rdma_complete(&mut self, now: SimTime, qp: u32) {
        let flow = self.rdma().qps[qp as usize].flow as usize;
        let fr = &mut self.flows[flow];
        if fr.end.is_none() && fr.size == Some(fr.received) {
            fr.end = Some(now);
            self.rdma_snapshot(qp);
            self.work_done();
        }
    }

    /// The rate limiter takes `rate` (rounded down to the NIC's step), and
    /// with `rdma.window` the window follows it.
    fn rdma_set_rate(&mut self, qp: u32, rate: f64) {
        let run = self.rdma.as_mut().expect("RDMA");
        let step = run.cfg.rate_step.map_or(0.0, |s| s.0.bps as f64);
        let q = &mut run.qps[qp as usize];
        q.set_rate(if step > 0.0 { ((rate / step).floor() * step).max(step) } else { rate });
        if run.cfg.window && !matches!(q.cc, QpCc::Hpcc(_)) {
            q.window = Some(bdp_window(q.rate, run.base_rtt));
        }
    }

    /// Start timer `kind` of `qp` afresh (an older pending one goes stale).
    fn rdma_arm(&mut self, now: SimTime, qp: u32, kind: u8, after: Dur) {
        let q = &mut self.rdma.as_mut().expect("RDMA").qps[qp as usize];
        let g = &mut q.timer_gen[kind as usize];
        *g = g.wrapping_add(1);
        let gen = *g;
        self.q.schedule(now + after.max(Dur(1)), Ev::RdmaTimer { qp, kind, gen });
    }

    pub(super) fn rdma_timer(&mut self, now: SimTime, qp: u32, kind: u8, gen: u32) {
        let host = self.rdma().qps[qp as usize].src;
        if kind == RTO {
            return self.rdma_rto(now, host, qp);
        }
        let Some(RdmaCc::Dcqcn(cfg)) = self.rdma.as_ref().map(|r| r.cfg.cc.clone()) else { return };
        let q = &mut self.rdma.as_mut().expect("RDMA").qps[qp as usize];
        if q.timer_gen[kind as usize] != gen || q.done() {
            return;
        }
        let QpCc::Dcqcn(d) = &mut q.cc else { return };
        let (again, restart_increase) = match kind {
            ALPHA => {
                d.on_alpha_timer();
                (cfg.alpha_interval.0, false)
            }
            INCREASE => {
                d.on_increase_timer();
                (cfg.increase_timer.0, false)
            }
            _ => {
                let cut = d.on_decrease_check();
                (cfg.decrease_interval.expect("armed only with it").0, cut)
            }
        };
        let rate = d.rc;
        self.rdma_set_rate(qp, rate);
        self.rdma_arm(now, qp, kind, again);
        if restart_increase {
            self.rdma_arm(now, qp, INCREASE, cfg.increase_timer.0);
        }
        self.rdma_kick(now, host);
    }

    /// The retransmission timer: nothing acknowledged for `rto` with bytes
    /// outstanding: go back to the first unacknowledged byte.
    fn rdma_rto(&mut self, now: SimTime, host: u32, qp: u32) {
        let q = &mut self.rdma.as_mut().expect("RDMA").qps[qp as usize];
        q.rto_event = false;
        let Some(deadline) = q.rto_deadline else { return };
        if q.done() {
            return;
        }
        if deadline > now {
            q.rto_event = true;
            self.q.schedule(deadline, Ev::RdmaTimer { qp, kind: RTO, gen: 0 });
            return;
        }
        q.on_timeout();
        q.rto_deadline = None;
        self.rdma_kick(now, host);
    }

    /// `qp` has every byte acknowledged: it leaves its NIC.
    fn rdma_finish(&mut self, host: u32, qp: u32) {
        let nic = &mut self.rdma.as_mut().expect("RDMA").nics[host as usize];
        if let Some(i) = nic.qps.iter().position(|&x| x == qp) {
            nic.qps.remove(i);
            if nic.next > i {
                nic.next -= 1;
            }
            if nic.next >= nic.qps.len() {
                nic.next = 0;
            }
        }
        let q = &mut self.rdma.as_mut().expect("RDMA").qps[qp as usize];
        q.rto_deadline = None;
    }

    /// Copy `qp`'s counters into its flow record (the flows table reads them there).
    pub(super) fn rdma_snapshot(&mut self, qp: u32) {
        let q = &self.rdma().qps[qp as usize];
        let s = TcpStats {
            segments_sent: q.stats.packets_sent,
            retransmits: q.stats.retransmits,
            timeouts: q.stats.timeouts,
            ecn_reductions: q.cc.decreases(),
            ce_received: q.stats.ce_received,
            ..Default::default()
        };
        let f = q.flow as usize;
        self.flows[f].sender_at_start = s;
        self.flows[f].receiver_at_start = TcpStats::default();
    }

    pub(super) fn rdma_flow_hash(&self, qp: u32) -> u32 {
        self.rdma().qps[qp as usize].flow_hash
    }

    /// The run ends: unfinished flows take their QPs' counters so far.
    pub(super) fn rdma_close(&mut self) {
        let Some(run) = &self.rdma else { return };
        let open: Vec<u32> = (0..run.qps.len() as u32).filter(|&q| self.flows[run.qps[q as usize].flow as usize].end.is_none()).collect();
        for qp in open {
            self.rdma_snapshot(qp);
        }
    }

    /// The one-way time a flow of `bytes` from `src` to `dst` takes alone
    /// (World::one_way_ideal), and with `completion = "sender"` its last ACK's way back.
    pub(super) fn rdma_ideal(&self, src: u32, dst: u32, hash: u32, bytes: u64) -> Option<Dur> {
        let payload = self.rdma().cfg.payload.0;
        let sender = self.rdma().cfg.completion == RdmaCompletion::Sender;
        let int_bytes = if sender { 0 } else { self.rdma().int_bytes };
        let frame = |len: u64| Packet { kind: FrameKind::RoceData, payload: len as u32, int_bytes, ..Default::default() }.frame_len();
        let mut ideal = self.one_way_ideal(src, dst, hash, bytes, payload, frame)?;
        if sender {
            // The last ACK's way back.
            let ack = Packet { kind: FrameKind::RoceAck, ..Default::default() }.frame_len() + if self.preamble { crate::packet::PREAMBLE } else { 0 };
            for &p in &self.net.path(dst, src, hash)? {
                let port = &self.net.ports[p as usize];
                ideal += port.delay + port.rate.tx_time(ack);
            }
        }
        Some(ideal)
    }
}
