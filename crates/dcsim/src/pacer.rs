//! The HULL pacer: a token bucket between a host's TCP stack and its NIC
//! queue that paces only the flows it has associated, at a rate that follows
//! the host's own sending rate.
//!
//! Seed 000 §II-C and Table I: the rate update
//! R <- (1 - eta) R + eta M_r / T_r + beta Q every T_r; association with
//! probability p_a when a packet reports an ECN echo, release T_i after the
//! last association; bypass for flows not associated; FIFO behind a queued
//! packet; otherwise send if the tokens suffice, else schedule the departure
//! at (L - tokens) / R, rescheduled at every rate update. Tokens are refilled
//! every `refill_interval` (ns-2 `HullPacer`: 16 us) and may go negative at a
//! scheduled departure, as in that code (reference §3.3).
//!
//! Placement (a deviation, docs/models/hull.md): the pacer sits before the
//! NIC queue, so M_r counts what TCP hands down, not the NIC's output.
//! `holds_host_queue` models the ns-2 code's placement instead: after the
//! host queue, which it blocks while it holds a packet. Then every packet
//! waits behind a held one (the FIFO stands for the host queue), M_r counts
//! what the pacer lets out, at the times the host's link would hand it over
//! (one packet per transmission time), and Q is the held packet alone.

use crate::config::HullPacerCfg;
use crate::packet::PktId;
use crate::units::QSize;
use dcsim_engine::{Dur, Rate, Rng, SimTime};
use std::collections::VecDeque;

/// Per sending endpoint: its association and counters (seed 000 §III-B
/// reports them for search and background flows).
#[derive(Clone, Copy, Debug, Default)]
pub struct PacerFlow {
    /// The flow is associated until this time (None: never associated).
    pub associated_until: Option<SimTime>,
    pub packets: u64,
    /// Packets that reported an ECN echo (eligible to associate the flow).
    pub echo_packets: u64,
    /// Associations drawn, counting those that renew a current one.
    pub associations: u64,
    /// Associations that ran out (T_i without a renewal).
    pub releases: u64,
    /// Packets that went through the token bucket.
    pub paced_packets: u64,
}

impl PacerFlow {
    fn associated(&self, now: SimTime) -> bool {
        self.associated_until.is_some_and(|u| now < u)
    }

    /// Releases including a last association that ran out before `end`.
    pub fn releases_at(&self, end: SimTime) -> u64 {
        self.releases + self.associated_until.is_some_and(|u| u <= end) as u64
    }
}

/// What became of a packet offered to the pacer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// On to the NIC queue now.
    Send,
    /// Held in the pacer's queue.
    Held,
    /// The pacer's queue is full: the caller frees it.
    Dropped,
}

/// A packet in the pacer's queue and what its admission needs.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    id: PktId,
    bytes: u64,
    /// The sending endpoint (its `PacerFlow`).
    ep: u32,
    echo: bool,
}

pub struct HullPacer {
    bucket_bits: f64,
    refill: u64,
    rate_interval: u64,
    eta: f64,
    beta: f64,
    p_assoc: f64,
    release_after: Dur,
    limit: QSize,
    holds_host_queue: bool,
    /// With `holds_host_queue`: the host's line rate, when the line is next
    /// free, and the packets let out (time in ps, bits) that a rate update
    /// has yet to count.
    line: Rate,
    line_free: SimTime,
    let_out_bits: VecDeque<(u64, f64)>,
    tokens: f64,
    rate_bps: f64,
    /// Bits offered since the last rate update (all flows, as in the ns-2 code).
    arrived_bits: f64,
    /// Held packets (with `holds_host_queue`, the held head and the host
    /// queue behind it).
    queue: VecDeque<Waiting>,
    queue_bytes: u64,
    /// Refill ticks (at k x refill) and rate updates (at k x T_r) applied.
    refills_done: u64,
    updates_done: u64,
    /// When the head of the queue leaves (meaningful while it is not empty).
    departure: SimTime,
    /// The pending wake-up event and its generation (stale ones are ignored).
    pub scheduled: Option<SimTime>,
    pub generation: u32,
    rng: Rng,
    pub drops: u64,
}

impl HullPacer {
    /// A pacer in front of a host link of rate `line`.
    pub fn new(cfg: &HullPacerCfg, line: Rate, rng: Rng) -> HullPacer {
        let bucket_bits = cfg.bucket.0 as f64 * 8.0;
        HullPacer {
            bucket_bits,
            refill: cfg.refill_interval.0.ps(),
            rate_interval: cfg.rate_interval.0.ps(),
            eta: cfg.eta,
            beta: cfg.beta,
            p_assoc: cfg.p_assoc,
            release_after: cfg.release_after.0,
            limit: cfg.queue,
            holds_host_queue: cfg.holds_host_queue,
            line,
            line_free: SimTime::ZERO,
            let_out_bits: VecDeque::new(),
            tokens: bucket_bits,
            rate_bps: cfg.initial_rate.0.bps as f64,
            arrived_bits: 0.0,
            queue: VecDeque::new(),
            queue_bytes: 0,
            refills_done: 0,
            updates_done: 0,
            departure: SimTime::ZERO,
            scheduled: None,
            generation: 0,
            rng,
            drops: 0,
        }
    }

    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }

    /// Time for the tokens to reach `bytes` at the current rate.
    fn wait_for(&self, bytes: u64) -> Dur {
        let missing = (bytes as f64 * 8.0 - self.tokens).max(0.0);
        if missing == 0.0 {
            return Dur::ZERO;
        }
        // A rate update comes within T_r, so a far-off time is only a placeholder.
        let secs = (missing / self.rate_bps).min(1e6);
        Dur((secs * 1e12).ceil() as u64)
    }

    /// Apply the refills and rate updates due up to `now`, in time order
    /// (a refill first when both fall on the same instant).
    fn advance(&mut self, now: SimTime) {
        let now_ps = now.ps();
        loop {
            let next_refill = (self.refills_done + 1) * self.refill;
            let next_update = (self.updates_done + 1) * self.rate_interval;
            if next_refill.min(next_update) > now_ps {
                return;
            }
            if self.queue.is_empty() && self.arrived_bits == 0.0 && self.let_out_bits.is_empty() && self.tokens >= self.bucket_bits {
                // Idle with a full bucket: the tokens stay full and each
                // update only decays the rate, so jump to `now` at once.
                let n = now_ps / self.rate_interval - self.updates_done;
                self.rate_bps *= (1.0 - self.eta).powf(n as f64);
                self.updates_done += n;
                self.refills_done = now_ps / self.refill;
                return;
            }
            if next_refill <= next_update {
                self.refills_done += 1;
                self.tokens = (self.tokens + self.rate_bps * self.refill as f64 * 1e-12).min(self.bucket_bits);
            } else {
                self.updates_done += 1;
                while let Some(&(t, bits)) = self.let_out_bits.front() {
                    if t > next_update {
                        break;
                    }
                    self.arrived_bits += bits;
                    self.let_out_bits.pop_front();
                }
                let t_r = self.rate_interval as f64 * 1e-12;
                self.rate_bps = (1.0 - self.eta) * self.rate_bps + self.eta * self.arrived_bits / t_r + self.beta * self.queued_bits();
                self.arrived_bits = 0.0;
                if let Some(head) = self.queue.front() {
                    // The head's departure follows the new rate (seed 000 §II-C).
                    self.departure = SimTime(next_update) + self.wait_for(head.bytes);
                }
            }
        }
    }

    /// Q of the rate rule: the bits waiting in the pacer (with
    /// `holds_host_queue`, only the held head; the rest wait in the host
    /// queue, out of the ns-2 pacer's sight).
    fn queued_bits(&self) -> f64 {
        let bytes = match (self.holds_host_queue, self.queue.front()) {
            (true, Some(head)) => head.bytes,
            (true, None) => 0,
            (false, _) => self.queue_bytes,
        };
        (bytes * 8) as f64
    }

    /// A packet leaves the pacer at `now`: with `holds_host_queue` the rate
    /// estimate counts it when the host's link would have handed it to the
    /// ns-2 pacer, which sees only what its blocked queue lets through.
    fn let_out(&mut self, now: SimTime, bytes: u64) {
        if self.holds_host_queue {
            let at = now.max(self.line_free);
            self.line_free = at + self.line.tx_time(bytes);
            self.let_out_bits.push_back((at.ps(), (bytes * 8) as f64));
        }
    }

    fn fits(&self, bytes: u64) -> bool {
        match self.limit {
            QSize::Packets(n) => (self.queue.len() as u64) < n,
            QSize::Bytes(n) => self.queue_bytes + bytes <= n,
        }
    }

    /// A packet of `bytes` from endpoint `ep` (its counters in `flows`)
    /// arrives; `echo`: its sender had seen an ECN echo (ns-2's `gotecnecho`).
    pub fn offer(&mut self, now: SimTime, id: PktId, bytes: u64, echo: bool, ep: u32, flows: &mut [PacerFlow]) -> Admit {
        self.advance(now);
        let waiting = Waiting { id, bytes, ep, echo };
        if self.holds_host_queue && !self.queue.is_empty() {
            // In the host queue, behind the held packet: it reaches the pacer later.
            return self.hold(waiting);
        }
        if !self.holds_host_queue {
            self.arrived_bits += (bytes * 8) as f64;
        }
        if !self.associate(now, echo, &mut flows[ep as usize]) {
            self.let_out(now, bytes);
            return Admit::Send;
        }
        if !self.queue.is_empty() {
            return self.hold(waiting);
        }
        if self.tokens >= (bytes * 8) as f64 {
            self.tokens -= (bytes * 8) as f64;
            self.let_out(now, bytes);
            return Admit::Send;
        }
        self.departure = now + self.wait_for(bytes);
        self.hold(waiting)
    }

    /// The flow's association after this packet, which may renew it with
    /// probability p_a if it reports an echo; counts the packet.
    fn associate(&mut self, now: SimTime, echo: bool, flow: &mut PacerFlow) -> bool {
        flow.packets += 1;
        if echo {
            flow.echo_packets += 1;
            if self.rng.next_f64() < self.p_assoc {
                if flow.associated_until.is_some_and(|u| u <= now) {
                    flow.releases += 1;
                }
                flow.associated_until = Some(now + self.release_after);
                flow.associations += 1;
            }
        }
        let associated = flow.associated(now);
        flow.paced_packets += associated as u64;
        associated
    }

    fn hold(&mut self, waiting: Waiting) -> Admit {
        if !self.fits(waiting.bytes) {
            self.drops += 1;
            return Admit::Dropped;
        }
        self.queue.push_back(waiting);
        self.queue_bytes += waiting.bytes;
        Admit::Held
    }

    /// Release the packets due by `now` into `out`, in order.
    pub fn release_due(&mut self, now: SimTime, out: &mut Vec<PktId>, flows: &mut [PacerFlow]) {
        self.advance(now);
        while let Some(&head) = self.queue.front() {
            if self.departure > now {
                break;
            }
            self.pop(now, head, true, out);
            if !self.holds_host_queue {
                if let Some(next) = self.queue.front() {
                    self.departure = now + self.wait_for(next.bytes);
                }
                continue;
            }
            // The host queue drains behind it, each packet reaching the
            // pacer in turn (ns-2 `recv`): those of flows not associated and
            // those the tokens cover go at once; the next that must wait is
            // the new held packet.
            while let Some(&next) = self.queue.front() {
                let associated = self.associate(now, next.echo, &mut flows[next.ep as usize]);
                if associated && self.tokens < (next.bytes * 8) as f64 {
                    self.departure = now + self.wait_for(next.bytes);
                    break;
                }
                self.pop(now, next, associated, out);
            }
        }
    }

    fn pop(&mut self, now: SimTime, waiting: Waiting, paid: bool, out: &mut Vec<PktId>) {
        self.queue.pop_front();
        self.queue_bytes -= waiting.bytes;
        if paid {
            self.tokens -= (waiting.bytes * 8) as f64;
        }
        self.let_out(now, waiting.bytes);
        out.push(waiting.id);
    }

    /// When the pacer next needs to act: the head's departure or the next
    /// rate update (which moves it), whichever is first.
    pub fn next_event(&self) -> Option<SimTime> {
        if self.queue.is_empty() {
            return None;
        }
        Some(self.departure.min(SimTime((self.updates_done + 1) * self.rate_interval)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Bytes, DurV, RateV};

    fn cfg() -> HullPacerCfg {
        HullPacerCfg {
            bucket: Bytes(3000),
            refill_interval: DurV(Dur::from_us(16)),
            rate_interval: DurV(Dur::from_us(64)),
            eta: 0.125,
            beta: 16.0,
            p_assoc: 1.0,
            release_after: DurV(Dur::from_ms(10)),
            initial_rate: RateV(Rate::from_bps(100_000_000)),
            queue: QSize::Packets(1000),
            holds_host_queue: false,
        }
    }

    #[test]
    fn flows_not_associated_bypass_and_echoes_associate_them_for_t_i() {
        let mut p = HullPacer::new(&cfg(), Rate::from_bps(1_000_000_000), Rng::from_seed_u64(1));
        let mut f = [PacerFlow::default()];
        assert_eq!(p.offer(SimTime::ZERO, PktId(0), 1000, false, 0, &mut f), Admit::Send);
        assert_eq!(f[0].paced_packets, 0);
        // p_assoc = 1: the echo associates the flow; the full bucket (3000 B) lets
        // two 1000 B packets and a third through, the fourth waits.
        let t = SimTime::ZERO + Dur::from_ns(1);
        for k in 1..=3 {
            assert_eq!(p.offer(t, PktId(k), 1000, k == 1, 0, &mut f), Admit::Send, "packet {k}");
        }
        assert_eq!(p.offer(t, PktId(4), 1000, false, 0, &mut f), Admit::Held);
        assert_eq!((f[0].associations, f[0].paced_packets), (1, 4));
        // Released 10 ms after the association, counted once it has run out.
        let later = t + Dur::from_ms(10);
        assert_eq!(f[0].releases_at(SimTime(later.ps() - 1)), 0);
        assert_eq!(f[0].releases_at(later), 1);
    }

    #[test]
    fn held_packets_leave_at_the_token_rate_and_rate_updates_follow_the_formula() {
        let mut p = HullPacer::new(&cfg(), Rate::from_bps(1_000_000_000), Rng::from_seed_u64(1));
        let mut f = [PacerFlow::default()];
        let t0 = SimTime::ZERO + Dur::from_us(1);
        // Associate, spend the bucket, and queue one more 1000 B packet.
        for k in 0..4 {
            p.offer(t0, PktId(k), 1000, k == 0, 0, &mut f);
        }
        // 8000 bits missing at 100 Mb/s: due 80 us later, but the rate update at
        // 64 us reschedules it. Refills at 16, 32, 48 us add 3 x 1600 bits, then
        // R = 0.875 x 100M + 0.125 x 32000 bits / 64 us + 16 x 8000 bits.
        let first = p.next_event().unwrap();
        assert_eq!(first, SimTime::ZERO + Dur::from_us(64));
        let mut out = Vec::new();
        p.release_due(first, &mut out, &mut f);
        let r = 0.875 * 100e6 + 0.125 * 32000.0 / 64e-6 + 16.0 * 8000.0;
        assert!((p.rate_bps() - r).abs() < 1e-3, "{} vs {r}", p.rate_bps());
        // Tokens at 64 us: 4 refills of 1600 bits from 0 -> 6400; 1600 missing.
        let due = p.next_event().unwrap();
        let expect = 64e-6 + 1600.0 / r;
        assert!((due.as_secs_f64() - expect).abs() < 1e-12, "{due:?}");
        p.release_due(due, &mut out, &mut f);
        assert_eq!(out, vec![PktId(3)]);
        assert_eq!(p.next_event(), None);
    }

    #[test]
    fn holding_the_host_queue_makes_every_packet_wait_and_counts_only_what_leaves() {
        let mut p = HullPacer::new(&HullPacerCfg { holds_host_queue: true, ..cfg() }, Rate::from_bps(1_000_000_000), Rng::from_seed_u64(1));
        let mut f = [PacerFlow::default(); 2];
        let t0 = SimTime::ZERO + Dur::from_us(1);
        // The associated flow spends the bucket and its fourth packet is held;
        // the other flow's packet, not associated, now waits behind it.
        for k in 0..4 {
            let admit = p.offer(t0, PktId(k), 1000, k == 0, 0, &mut f);
            assert_eq!(admit, if k < 3 { Admit::Send } else { Admit::Held }, "packet {k}");
        }
        assert_eq!(p.offer(t0, PktId(9), 1000, false, 1, &mut f), Admit::Held);
        // It is judged when it reaches the pacer, as the host queue drains.
        assert_eq!((f[1].packets, f[0].paced_packets), (0, 4));
        // The rate update at 64 us counts the 3 packets let out (not the 2
        // waiting) and, for Q, the held packet alone; it then leaves, and the
        // other flow's packet right behind it.
        let mut out = Vec::new();
        let first = p.next_event().unwrap();
        p.release_due(first, &mut out, &mut f);
        let r = 0.875 * 100e6 + 0.125 * 24000.0 / 64e-6 + 16.0 * 8000.0;
        assert!((p.rate_bps() - r).abs() < 1e-3, "{} vs {r}", p.rate_bps());
        let due = p.next_event().unwrap();
        p.release_due(due, &mut out, &mut f);
        assert_eq!(out, vec![PktId(3), PktId(9)]);
        assert_eq!((f[1].packets, f[1].paced_packets), (1, 0));
        assert_eq!(p.next_event(), None);
    }

    #[test]
    fn an_idle_pacer_decays_its_rate_and_fills_its_bucket() {
        let mut p = HullPacer::new(&cfg(), Rate::from_bps(1_000_000_000), Rng::from_seed_u64(1));
        let mut f = [PacerFlow::default()];
        p.offer(SimTime::ZERO + Dur::from_us(1), PktId(0), 1000, false, 0, &mut f);
        // 1 s idle = 15625 updates: the first sees 8000 bits, the rest none.
        p.offer(SimTime::ZERO + Dur::from_secs(1), PktId(1), 1000, false, 0, &mut f);
        let r1 = 0.875 * 100e6 + 0.125 * 8000.0 / 64e-6;
        let expect = r1 * 0.875f64.powi(15624);
        assert!((p.rate_bps() - expect).abs() <= 1e-9 * r1, "{} vs {expect}", p.rate_bps());
    }
}
