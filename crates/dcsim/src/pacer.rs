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

use crate::config::HullPacerCfg;
use crate::packet::PktId;
use crate::units::QSize;
use dcsim_engine::{Dur, Rng, SimTime};
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

pub struct HullPacer {
    bucket_bits: f64,
    refill: u64,
    rate_interval: u64,
    eta: f64,
    beta: f64,
    p_assoc: f64,
    release_after: Dur,
    limit: QSize,
    tokens: f64,
    rate_bps: f64,
    /// Bits offered since the last rate update (all flows, as in the ns-2 code).
    arrived_bits: f64,
    /// Held packets and their sizes in bytes.
    queue: VecDeque<(PktId, u64)>,
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
    pub fn new(cfg: &HullPacerCfg, rng: Rng) -> HullPacer {
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
            if self.queue.is_empty() && self.arrived_bits == 0.0 && self.tokens >= self.bucket_bits {
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
                let t_r = self.rate_interval as f64 * 1e-12;
                self.rate_bps = (1.0 - self.eta) * self.rate_bps + self.eta * self.arrived_bits / t_r + self.beta * (self.queue_bytes * 8) as f64;
                self.arrived_bits = 0.0;
                if let Some(&(_, bytes)) = self.queue.front() {
                    // The head's departure follows the new rate (seed 000 §II-C).
                    self.departure = SimTime(next_update) + self.wait_for(bytes);
                }
            }
        }
    }

    fn fits(&self, bytes: u64) -> bool {
        match self.limit {
            QSize::Packets(n) => (self.queue.len() as u64) < n,
            QSize::Bytes(n) => self.queue_bytes + bytes <= n,
        }
    }

    /// A packet of `bytes` from `flow` arrives; `echo`: its sender had seen
    /// an ECN echo (ns-2's `gotecnecho`).
    pub fn offer(&mut self, now: SimTime, id: PktId, bytes: u64, echo: bool, flow: &mut PacerFlow) -> Admit {
        self.advance(now);
        self.arrived_bits += (bytes * 8) as f64;
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
        if !flow.associated(now) {
            return Admit::Send;
        }
        flow.paced_packets += 1;
        if !self.queue.is_empty() {
            if !self.fits(bytes) {
                self.drops += 1;
                return Admit::Dropped;
            }
        } else if self.tokens >= (bytes * 8) as f64 {
            self.tokens -= (bytes * 8) as f64;
            return Admit::Send;
        } else {
            self.departure = now + self.wait_for(bytes);
        }
        self.queue.push_back((id, bytes));
        self.queue_bytes += bytes;
        Admit::Held
    }

    /// Release the packets due by `now` into `out`, in order.
    pub fn release_due(&mut self, now: SimTime, out: &mut Vec<PktId>) {
        self.advance(now);
        while let Some(&(id, bytes)) = self.queue.front() {
            if self.departure > now {
                break;
            }
            self.queue.pop_front();
            self.queue_bytes -= bytes;
            self.tokens -= (bytes * 8) as f64;
            out.push(id);
            if let Some(&(_, next)) = self.queue.front() {
                self.departure = now + self.wait_for(next);
            }
        }
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
    use dcsim_engine::Rate;

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
        }
    }

    #[test]
    fn flows_not_associated_bypass_and_echoes_associate_them_for_t_i() {
        let mut p = HullPacer::new(&cfg(), Rng::from_seed_u64(1));
        let mut f = PacerFlow::default();
        assert_eq!(p.offer(SimTime::ZERO, PktId(0), 1000, false, &mut f), Admit::Send);
        assert_eq!(f.paced_packets, 0);
        // p_assoc = 1: the echo associates the flow; the full bucket (3000 B) lets
        // two 1000 B packets and a third through, the fourth waits.
        let t = SimTime::ZERO + Dur::from_ns(1);
        for k in 1..=3 {
            assert_eq!(p.offer(t, PktId(k), 1000, k == 1, &mut f), Admit::Send, "packet {k}");
        }
        assert_eq!(p.offer(t, PktId(4), 1000, false, &mut f), Admit::Held);
        assert_eq!((f.associations, f.paced_packets), (1, 4));
        // Released 10 ms after the association, counted once it has run out.
        let later = t + Dur::from_ms(10);
        assert_eq!(f.releases_at(SimTime(later.ps() - 1)), 0);
        assert_eq!(f.releases_at(later), 1);
    }

    #[test]
    fn held_packets_leave_at_the_token_rate_and_rate_updates_follow_the_formula() {
        let mut p = HullPacer::new(&cfg(), Rng::from_seed_u64(1));
        let mut f = PacerFlow::default();
        let t0 = SimTime::ZERO + Dur::from_us(1);
        // Associate, spend the bucket, and queue one more 1000 B packet.
        for k in 0..4 {
            p.offer(t0, PktId(k), 1000, k == 0, &mut f);
        }
        // 8000 bits missing at 100 Mb/s: due 80 us later, but the rate update at
        // 64 us reschedules it. Refills at 16, 32, 48 us add 3 x 1600 bits, then
        // R = 0.875 x 100M + 0.125 x 32000 bits / 64 us + 16 x 8000 bits.
        let first = p.next_event().unwrap();
        assert_eq!(first, SimTime::ZERO + Dur::from_us(64));
        let mut out = Vec::new();
        p.release_due(first, &mut out);
        let r = 0.875 * 100e6 + 0.125 * 32000.0 / 64e-6 + 16.0 * 8000.0;
        assert!((p.rate_bps() - r).abs() < 1e-3, "{} vs {r}", p.rate_bps());
        // Tokens at 64 us: 4 refills of 1600 bits from 0 -> 6400; 1600 missing.
        let due = p.next_event().unwrap();
        let expect = 64e-6 + 1600.0 / r;
        assert!((due.as_secs_f64() - expect).abs() < 1e-12, "{due:?}");
        p.release_due(due, &mut out);
        assert_eq!(out, vec![PktId(3)]);
        assert_eq!(p.next_event(), None);
    }

    #[test]
    fn an_idle_pacer_decays_its_rate_and_fills_its_bucket() {
        let mut p = HullPacer::new(&cfg(), Rng::from_seed_u64(1));
        let mut f = PacerFlow::default();
        p.offer(SimTime::ZERO + Dur::from_us(1), PktId(0), 1000, false, &mut f);
        // 1 s idle = 15625 updates: the first sees 8000 bits, the rest none.
        p.offer(SimTime::ZERO + Dur::from_secs(1), PktId(1), 1000, false, &mut f);
        let r1 = 0.875 * 100e6 + 0.125 * 8000.0 / 64e-6;
        let expect = r1 * 0.875f64.powi(15624);
        assert!((p.rate_bps() - expect).abs() <= 1e-9 * r1, "{} vs {expect}", p.rate_bps());
    }
}
