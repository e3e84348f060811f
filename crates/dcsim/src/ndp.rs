//! NDP (Handley, Raiciu, Agache, Voinescu, Moore, Antichi and Wójcik,
//! "Re-architecting datacenter networks and stacks for low latency and high
//! performance", SIGCOMM 2017): a receiver-driven transport over switches
//! that trim instead of dropping (crate::port's `full = "trim"`).
//!
//! * The sender pushes its first window (`iw` packets) at line rate with no
//!   handshake, spraying its packets over every path: a walk through the
//!   path numbers in a random order per pass (§3.2; crate::topology's
//!   `Routing::Path` routes them).
//! * The receiver answers every data packet at once with an ACK, and every
//!   trimmed header with a NACK; each earns the sender one pull (§3.3).
//! * One pull pacer per receiving host sends PULLs at most one per data
//!   frame's time on its link, round robin over its flows (§3.3). An ACK or
//!   NACK that finds the pacer idle carries the pull itself.
//! * Pull numbers are cumulative per flow, so a lost or late PULL is
//!   covered by the next; each pull lets the sender send one packet: a
//!   NACKed packet first (on a new path), else new data.
//!
//! What the paper's text says was not available here beyond its abstract;
//! the rules follow the authors' simulator (htsim's `ndp.cpp`, read at
//! `Broadcom/csg-htsim` 841d9e7), with the deviations listed in
//! docs/models/ndp.md. The state here is pure; crate::world wires it.

use dcsim_engine::{Dur, Rng, SimTime};
use std::collections::VecDeque;

/// A sent packet's state at its sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sent {
    /// On its way: neither ACKed nor NACKed yet.
    Out,
    /// NACKed (or timed out): waits in the retransmission queue.
    Lost,
    Acked,
}

/// What a sender counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NdpStats {
    pub packets_sent: u64,
    pub retransmits: u64,
    pub nacks: u64,
    pub pulls: u64,
    pub bounces: u64,
    pub timeouts: u64,
}

/// The sending side of a flow: packets are numbered 0.., each `payload`
/// bytes but the last.
pub struct Sender {
    packets: u64,
    /// Packets below `base` are acknowledged; `state` covers [base, next_new).
    base: u64,
    next_new: u64,
    state: VecDeque<Sent>,
    /// NACKed packets to resend, oldest NACK first.
    rtx: VecDeque<u64>,
    /// Packets of `state` that are `Out`.
    out: u64,
    /// Packets it may send without a pull: the first window, or after a timeout.
    push: u64,
    /// The highest pull number heard, and the pulls used.
    max_pull: u64,
    used_pulls: u64,
    /// ACKs and NACKs heard: each will earn a pull.
    feedback: u64,
    /// The flow's path numbers and where the walk through them is.
    paths: Vec<u32>,
    next_path: usize,
    rng: Rng,
    pub stats: NdpStats,
}

impl Sender {
    /// A flow of `packets` packets (u64::MAX: no end) that pushes `iw`
    /// first, over path numbers 0..`paths` in orders drawn from `rng`.
    pub fn new(packets: u64, iw: u32, paths: u32, rng: Rng) -> Sender {
        let paths = (0..paths).collect();
        let mut s = Sender {
            packets,
            base: 0,
            next_new: 0,
            state: VecDeque::new(),
            rtx: VecDeque::new(),
            out: 0,
            push: iw as u64,
            max_pull: 0,
            used_pulls: 0,
            feedback: 0,
            paths,
            next_path: 0,
            rng,
            stats: NdpStats::default(),
        };
        s.shuffle();
        s
    }

    fn shuffle(&mut self) {
        for i in (1..self.paths.len()).rev() {
            let j = self.rng.below(i as u64 + 1) as usize;
            self.paths.swap(i, j);
        }
        self.next_path = 0;
    }

    /// The next packet's path number: a walk through the flow's numbers in
    /// a random order, drawn again after each pass (htsim's "perm"). With
    /// `switch.routing = "path"` the numbers are routes, so each pass uses
    /// every path equally often when `paths` is a multiple of their count;
    /// under ECMP switches hash them.
    fn path(&mut self) -> u32 {
        if self.next_path == self.paths.len() {
            self.shuffle();
        }
        self.next_path += 1;
        self.paths[self.next_path - 1]
    }

    fn at(&mut self, pkt: u64) -> Option<&mut Sent> {
        pkt.checked_sub(self.base).and_then(|i| self.state.get_mut(i as usize))
    }

    /// Drop NACKed packets acknowledged since from the head of the queue.
    fn prune_rtx(&mut self) {
        while let Some(&p) = self.rtx.front() {
            if p >= self.base && self.state[(p - self.base) as usize] == Sent::Lost {
                break;
            }
            self.rtx.pop_front();
        }
    }

    fn has_data(&self) -> bool {
        !self.rtx.is_empty() || self.next_new < self.packets
    }

    /// Whether it has a packet to send and the right to send it now.
    pub fn can_send(&self) -> bool {
        self.has_data() && (self.push > 0 || self.used_pulls < self.max_pull)
    }

    /// Take the next packet to send: (packet number, path number, resent).
    /// A NACKed packet goes before new data (htsim's `send_packet`).
    pub fn next(&mut self) -> Option<(u64, u32, bool)> {
        if !self.can_send() {
            return None;
        }
        if self.push > 0 {
            self.push -= 1;
        } else {
            self.used_pulls += 1;
        }
        let (pkt, resent) = match self.rtx.pop_front() {
            Some(p) => {
                *self.at(p).expect("a queued packet is tracked") = Sent::Out;
                self.stats.retransmits += 1;
                (p, true)
            }
            None => {
                self.next_new += 1;
                self.state.push_back(Sent::Out);
                (self.next_new - 1, false)
            }
        };
        self.out += 1;
        self.stats.packets_sent += 1;
        self.prune_rtx();
        Some((pkt, self.path(), resent))
    }

    /// An ACK of packet `pkt`, with every packet below `cumulative` received.
    pub fn on_ack(&mut self, pkt: u64, cumulative: u64) {
        self.feedback += 1;
        self.settle(pkt, Sent::Acked);
        while self.base < cumulative.min(self.next_new) {
            if self.state.pop_front() == Some(Sent::Out) {
                self.out -= 1;
            }
            self.base += 1;
        }
        while self.state.front() == Some(&Sent::Acked) {
            self.state.pop_front();
            self.base += 1;
        }
        self.prune_rtx();
    }

    /// A NACK: packet `pkt` arrived trimmed; it waits for a pull to go again.
    pub fn on_nack(&mut self, pkt: u64) {
        self.stats.nacks += 1;
        self.feedback += 1;
        if self.settle(pkt, Sent::Lost) {
            self.rtx.push_back(pkt);
        }
    }

    /// Packet `pkt`'s header came back from a full switch port: it never
    /// reached the receiver, so no pull will come for it. It waits for a
    /// pull like a NACKed packet, unless no pull is due at all (every
    /// answer heard has been pulled for, and nothing is out): then it may
    /// go at once (htsim's `processRTS`).
    pub fn on_bounce(&mut self, pkt: u64) {
        self.stats.bounces += 1;
        if self.settle(pkt, Sent::Lost) {
            self.rtx.push_back(pkt);
        }
        if self.out == 0 && self.feedback <= self.stats.pulls && self.used_pulls >= self.max_pull {
            self.push += 1;
        }
    }

    /// Packet `pkt`'s state becomes `to` if it was `Out`; returns whether it did.
    fn settle(&mut self, pkt: u64, to: Sent) -> bool {
        let Some(s) = self.at(pkt) else { return false };
        let was_out = *s == Sent::Out;
        if was_out || (to == Sent::Acked && *s == Sent::Lost) {
            *s = to;
        }
        if was_out {
            self.out -= 1;
        }
        was_out
    }

    /// A pull numbered `n` (cumulative: an older one changes nothing).
    pub fn on_pull(&mut self, n: u64) {
        self.stats.pulls += 1;
        self.max_pull = self.max_pull.max(n);
    }

    /// Packets sent and not yet ACKed or NACKed.
    pub fn outstanding(&self) -> u64 {
        self.out
    }

    /// Every packet is acknowledged.
    pub fn done(&self) -> bool {
        self.base == self.packets
    }

    /// Nothing was heard for a timeout: every packet still out is resent,
    /// up to `iw` of them pushed without waiting for a pull.
    pub fn on_timeout(&mut self, iw: u32) {
        self.stats.timeouts += 1;
        let mut lost = 0;
        for (i, s) in self.state.iter_mut().enumerate() {
            if *s == Sent::Out {
                *s = Sent::Lost;
                self.rtx.push_back(self.base + i as u64);
                lost += 1;
            }
        }
        self.out = 0;
        self.push = self.push.max(lost.min(iw as u64));
    }
}

/// The receiving side of a flow.
#[derive(Default)]
pub struct Receiver {
    /// Packets below `base` arrived; `got` covers the ones above it.
    base: u64,
    got: VecDeque<bool>,
    /// Pulls sent so far (the last pull number) and pulls owed, queued at the pacer.
    pub pull_no: u64,
    pub owed: u32,
}

impl Receiver {
    /// Packet `pkt` arrived whole; returns whether it is new.
    pub fn on_data(&mut self, pkt: u64) -> bool {
        let Some(i) = pkt.checked_sub(self.base) else { return false };
        let i = i as usize;
        if i >= self.got.len() {
            self.got.resize(i + 1, false);
        }
        if self.got[i] {
            return false;
        }
        self.got[i] = true;
        while self.got.front() == Some(&true) {
            self.got.pop_front();
            self.base += 1;
        }
        true
    }

    /// Packets received in order (the cumulative ACK).
    pub fn cumulative(&self) -> u64 {
        self.base
    }
}

/// A receiving host's pull pacer: one PULL per `spacing` at most, round
/// robin over the flows that are owed one (htsim's `FairPullQueue`).
pub struct PullPacer {
    pub spacing: Dur,
    /// The earliest time the next pull may leave.
    next_at: SimTime,
    /// Flows owed pulls, each once, in turn.
    queue: VecDeque<u32>,
    /// The pending wake-up, if any.
    pub wake: Option<SimTime>,
}

impl PullPacer {
    pub fn new(spacing: Dur) -> PullPacer {
        PullPacer { spacing, next_at: SimTime::ZERO, queue: VecDeque::new(), wake: None }
    }

    /// An ACK or NACK of `flow` earns its sender a pull: true if it goes
    /// with the ACK now (the pacer idle and due), else it is queued.
    pub fn earn(&mut self, now: SimTime, flow: u32, rx: &mut Receiver) -> bool {
        if self.queue.is_empty() && now >= self.next_at {
            self.next_at = now + self.spacing;
            rx.pull_no += 1;
            return true;
        }
        if rx.owed == 0 {
            self.queue.push_back(flow);
        }
        rx.owed += 1;
        false
    }

    /// When the pacer must wake next (None: nothing queued).
    pub fn due(&self, now: SimTime) -> Option<SimTime> {
        (!self.queue.is_empty()).then(|| self.next_at.max(now))
    }

    /// The pacer's time has come: the next flow in turn that is still owed
    /// a pull gets it (`rx` finds a flow's receiver among `flows`).
    pub fn release<F>(&mut self, now: SimTime, flows: &mut [F], rx: impl Fn(&mut F) -> &mut Receiver) -> Option<u32> {
        while let Some(flow) = self.queue.pop_front() {
            let r = rx(&mut flows[flow as usize]);
            if r.owed == 0 {
                continue; // its flow is complete: its pulls were released
            }
            r.owed -= 1;
            r.pull_no += 1;
            if r.owed > 0 {
                self.queue.push_back(flow);
            }
            self.next_at = now + self.spacing;
            return Some(flow);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dcsim_engine::StreamId;

    fn sender(packets: u64, iw: u32) -> Sender {
        Sender::new(packets, iw, 8, Rng::stream(1, StreamId { kind: 0, index: 0 }))
    }

    #[test]
    fn pushes_the_first_window_then_sends_one_packet_per_pull() {
        let mut s = sender(100, 3);
        let first: Vec<u64> = std::iter::from_fn(|| s.next().map(|p| p.0)).collect();
        assert_eq!(first, [0, 1, 2]);
        s.on_pull(4); // cumulative: pulls 1..=4
        assert_eq!(std::iter::from_fn(|| s.next().map(|p| p.0)).count(), 4);
        s.on_pull(2); // older: nothing new
        assert!(s.next().is_none());
        s.on_pull(5);
        assert_eq!(s.next().map(|p| p.0), Some(7));
    }

    #[test]
    fn a_nacked_packet_goes_first_on_the_next_pull_and_on_another_path() {
        let mut s = sender(100, 4);
        let sent: Vec<(u64, u32, bool)> = std::iter::from_fn(|| s.next()).collect();
        s.on_ack(0, 1);
        s.on_nack(2);
        s.on_nack(2); // a duplicate NACK queues it once
        assert!(s.next().is_none(), "a NACK is no pull");
        s.on_pull(2);
        let (pkt, path, resent) = s.next().unwrap();
        assert_eq!((pkt, resent), (2, true));
        assert_ne!(path, sent[2].1, "the walk has moved on (8 distinct paths)");
        assert_eq!(s.next().map(|p| (p.0, p.2)), Some((4, false)));
        assert_eq!((s.stats.retransmits, s.stats.nacks), (1, 2));
    }

    #[test]
    fn unused_pulls_are_kept_until_there_is_something_to_send() {
        let mut s = sender(2, 2);
        while s.next().is_some() {}
        s.on_pull(3);
        assert!(s.next().is_none(), "nothing left to send");
        s.on_nack(1);
        assert_eq!(s.next().map(|p| p.0), Some(1), "a pull in hand resends at once");
        s.on_ack(1, 0);
        s.on_ack(0, 2);
        assert!(s.done());
    }

    #[test]
    fn acks_out_of_order_and_cumulative_acks_both_advance() {
        let mut s = sender(5, 5);
        while s.next().is_some() {}
        assert_eq!(s.outstanding(), 5);
        s.on_ack(3, 0);
        s.on_ack(1, 0);
        assert_eq!((s.outstanding(), s.done()), (3, false));
        s.on_ack(0, 2);
        s.on_ack(2, 4);
        s.on_ack(4, 5);
        assert!(s.done());
        assert_eq!(s.outstanding(), 0);
    }

    #[test]
    fn a_timeout_resends_what_is_out_without_a_pull() {
        let mut s = sender(10, 4);
        while s.next().is_some() {}
        s.on_ack(1, 0);
        s.on_nack(2);
        s.on_timeout(4);
        let again: Vec<u64> = std::iter::from_fn(|| s.next().map(|p| p.0)).collect();
        assert_eq!(again, [2, 0], "the NACKed one, then the two out (pushed: 2 of iw)");
        assert_eq!(s.stats.timeouts, 1);
    }

    #[test]
    fn a_bounced_packet_waits_for_a_pull_unless_none_is_due() {
        let mut s = sender(10, 2);
        while s.next().is_some() {}
        s.on_nack(0); // one answer heard: one pull is due
        s.on_bounce(1);
        assert!(s.next().is_none(), "the pull due for packet 0 will carry it");
        s.on_pull(1);
        assert_eq!(s.next().map(|p| p.0), Some(0));
        assert_eq!(s.next().map(|p| p.0), None);
        // Every answer pulled for and nothing out: a bounce goes at once.
        s.on_bounce(0);
        assert_eq!(s.next().map(|p| (p.0, p.2)), Some((1, true)));
        assert_eq!(s.stats.bounces, 2);
    }

    #[test]
    fn the_receiver_acks_cumulatively_and_spots_duplicates() {
        let mut r = Receiver::default();
        assert!(r.on_data(1));
        assert_eq!(r.cumulative(), 0);
        assert!(r.on_data(0));
        assert_eq!(r.cumulative(), 2);
        assert!(!r.on_data(1));
        assert!(r.on_data(5));
        assert_eq!(r.cumulative(), 2);
    }

    #[test]
    fn the_pacer_spaces_pulls_and_serves_flows_round_robin() {
        let spacing = Dur::from_ns(7251);
        let mut p = PullPacer::new(spacing);
        let mut rx: Vec<Receiver> = (0..3).map(|_| Receiver::default()).collect();
        let t0 = SimTime::ZERO + Dur::from_us(1);
        assert!(p.earn(t0, 0, &mut rx[0]), "idle: the ACK carries the pull");
        // Three flows earn 2, 1 and 2 pulls within the spacing: queued.
        for f in [0, 0, 1, 2, 2] {
            assert!(!p.earn(t0, f, &mut rx[f as usize]));
        }
        let mut order = Vec::new();
        let mut now = t0;
        while let Some(t) = p.due(now) {
            assert!(t >= now);
            now = t;
            let f = p.release(now, &mut rx, |r| r).unwrap();
            order.push((f, now - t0));
        }
        let flows: Vec<u32> = order.iter().map(|o| o.0).collect();
        assert_eq!(flows, [0, 1, 2, 0, 2]);
        for (k, (_, at)) in order.iter().enumerate() {
            assert_eq!(*at, spacing.saturating_mul(k as u64 + 1));
        }
        assert_eq!([rx[0].pull_no, rx[1].pull_no, rx[2].pull_no], [3, 1, 2]);
    }

    #[test]
    fn a_complete_flows_queued_pulls_are_skipped() {
        let mut p = PullPacer::new(Dur::from_us(1));
        let mut rx: Vec<Receiver> = (0..2).map(|_| Receiver::default()).collect();
        let t = SimTime::ZERO;
        p.earn(t, 0, &mut rx[0]);
        p.earn(t, 0, &mut rx[0]);
        p.earn(t, 1, &mut rx[1]);
        rx[0].owed = 0; // complete: released
        let f = p.release(t + Dur::from_us(1), &mut rx, |r| r);
        assert_eq!(f, Some(1));
        assert_eq!(p.due(t), None);
    }
}
