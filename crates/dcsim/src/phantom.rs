//! Phantom queue (HULL): a byte counter beside a switch egress port that
//! is fed the port's packets and drained at a rate below the line rate. When
//! the counter exceeds a threshold, the packet that pushed it there is marked
//! CE. No packet is ever held.
//!
//! Seed 000 §II-A ("a counter that is increased upon a new packet arrival
//! and decreased according to the drain rate"), placed after the real queue
//! as in its ns-2 `SimpleLink` ("all dequeued packets go through it"); seed
//! 001 places it on arrival instead (its Linux RED variant updates `hull_ctr`
//! "at every packet arrival"). Pseudo-code and defaults:
//! ../shared/reference/mechanisms.md §3.2. docs/models/hull.md lists the
//! deviations.

use crate::config::{PhantomDrain, PhantomQueueCfg, PqCounting, PqPlacement};
use dcsim_engine::{Rate, SimTime};

pub struct PhantomQueue {
    drain_bps: f64,
    threshold: f64,
    pub placement: PqPlacement,
    /// Keep the port's own AQM marking (off by default: the PQ marks instead).
    pub port_marking: bool,
    /// With "serialised" counting: the fraction of a packet left after the
    /// drain during its own transmission (1 - drain / line rate); else 1.
    kept_fraction: f64,
    serialise_at: Option<Rate>,
    /// Virtual backlog in bytes after the last packet, and when that was.
    counter: f64,
    last: SimTime,
}

impl PhantomQueue {
    pub fn new(cfg: &PhantomQueueCfg, line_rate: Rate) -> PhantomQueue {
        let drain_bps = match cfg.drain {
            PhantomDrain::Fraction(g) => g * line_rate.bps as f64,
            PhantomDrain::Rate(r) => r.0.bps as f64,
        };
        PhantomQueue {
            drain_bps,
            threshold: cfg.threshold.0 as f64,
            placement: cfg.placement,
            port_marking: cfg.port_marking,
            kept_fraction: match cfg.counting {
                PqCounting::Packet => 1.0,
                PqCounting::Serialised => (1.0 - drain_bps / line_rate.bps as f64).max(0.0),
            },
            serialise_at: (cfg.counting == PqCounting::Serialised).then_some(line_rate),
            counter: 0.0,
            last: SimTime::ZERO,
        }
    }

    /// A packet of `bytes` passes the counter at `now`: drain what the
    /// virtual server sent since the last packet, add this one, and say
    /// whether it is to be marked. Serialised counting evaluates the counter
    /// as the packet's last bit enters it, so the drain resumes from then.
    #[inline]
    pub fn pass(&mut self, now: SimTime, bytes: u64) -> bool {
        let idle_ps = now.ps().saturating_sub(self.last.ps());
        let drained = self.drain_bps * idle_ps as f64 * 1e-12 / 8.0;
        self.counter = (self.counter - drained).max(0.0) + bytes as f64 * self.kept_fraction;
        self.last = match self.serialise_at {
            Some(rate) => now + rate.tx_time(bytes),
            None => now,
        };
        self.counter > self.threshold
    }

    /// The virtual backlog in bytes as of the last packet.
    pub fn counter(&self) -> f64 {
        self.counter
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Bytes, RateV};
    use dcsim_engine::Dur;

    fn pq(drain: PhantomDrain, threshold: u64) -> PhantomQueue {
        let cfg = PhantomQueueCfg { drain, threshold: Bytes(threshold), placement: PqPlacement::Departure, port_marking: false, counting: PqCounting::Packet };
        PhantomQueue::new(&cfg, Rate::from_bps(1_000_000_000))
    }

    #[test]
    fn back_to_back_frames_at_line_rate_build_the_counter_at_c_minus_drain() {
        // 1 Gb/s line, drain 95%: each 1000 B frame (8 us) adds 1000 B and
        // drains 950 B, so the counter grows by 50 B per frame after the first.
        let mut q = pq(PhantomDrain::Fraction(0.95), 1000);
        let mut t = SimTime::ZERO;
        assert!(!q.pass(t, 1000), "one frame alone reaches the threshold, not above it");
        for k in 1..=10u64 {
            t += Dur::from_us(8);
            let marked = q.pass(t, 1000);
            assert!((q.counter() - (1000.0 + 50.0 * k as f64)).abs() < 1e-6, "k={k}: {}", q.counter());
            assert!(marked);
        }
    }

    #[test]
    fn serialised_counting_keeps_only_what_the_drain_misses() {
        // A queue in series with the link: a 1000 B frame at 1 Gb/s takes 8 us,
        // during which 95 % drain 950 B; back-to-back frames add 50 B each.
        let cfg = PhantomQueueCfg {
            drain: PhantomDrain::Fraction(0.95),
            threshold: Bytes(1010),
            placement: PqPlacement::Departure,
            port_marking: false,
            counting: PqCounting::Serialised,
        };
        let mut q = PhantomQueue::new(&cfg, Rate::from_bps(1_000_000_000));
        let mut t = SimTime::ZERO;
        for k in 1..=20u64 {
            assert!(!q.pass(t, 1000), "frame {k}");
            assert!((q.counter() - 50.0 * k as f64).abs() < 1e-6);
            t += Dur::from_us(8);
        }
        assert!(q.pass(t, 1000), "the 21st back-to-back frame crosses 1010 B");
    }

    #[test]
    fn the_counter_drains_at_the_drain_rate_and_never_below_zero() {
        let mut q = pq(PhantomDrain::Rate(RateV(Rate::from_bps(900_000_000))), 1000);
        q.pass(SimTime::ZERO, 3000);
        // 10 us at 900 Mb/s drains 1125 B.
        assert!(q.pass(SimTime::ZERO + Dur::from_us(10), 0), "1875 B is still above the threshold");
        assert!((q.counter() - 1875.0).abs() < 1e-6);
        q.pass(SimTime::ZERO + Dur::from_ms(1), 100);
        assert_eq!(q.counter(), 100.0);
    }
}
