//! RTT estimation and the retransmission timeout (RFC 6298), with samples
//! quantised by a clock of granularity G.
//!
//! Quantisation (as Linux and FreeBSD do with tick-based timestamps): a
//! segment is stamped with the clock's tick count `floor(now / G)`; a sample
//! is `max(1, ticks_now - ticks_stamped) * G`. A path shorter than one tick
//! therefore measures as exactly G, the "RTT floor" of seed 004 §5.3.4.

use crate::config::RtoFormula;
use dcsim_engine::{Dur, SimTime};

#[derive(Clone, Copy, Debug)]
pub struct RttParams {
    pub granularity: Dur,
    pub min_rto: Dur,
    pub max_rto: Dur,
    pub initial_rto: Dur,
    pub formula: RtoFormula,
}

impl RttParams {
    /// The tick of the RTT clock at `now` (wraps like a 32-bit TCP timestamp).
    #[inline]
    pub fn tick(&self, now: SimTime) -> u32 {
        (now.ps() / self.granularity.ps()) as u32
    }
    /// Quantised sample from a tick difference.
    #[inline]
    pub fn sample_from_ticks(&self, now: SimTime, stamped: u32) -> Dur {
        let ticks = self.tick(now).wrapping_sub(stamped).max(1);
        self.granularity.saturating_mul(ticks as u64)
    }
}

#[derive(Clone, Copy, Debug)]
pub struct RttEstimator {
    pub srtt: Dur,
    pub rttvar: Dur,
    pub has_sample: bool,
    /// Exponential backoff shift applied to the base RTO (RFC 6298 (5.5)).
    pub backoff: u32,
    /// Most recent raw sample.
    pub latest: Dur,
}

impl RttEstimator {
    pub fn new() -> Self {
        RttEstimator { srtt: Dur::ZERO, rttvar: Dur::ZERO, has_sample: false, backoff: 0, latest: Dur::ZERO }
    }

    /// RFC 6298 (2.2) and (2.3), alpha = 1/8, beta = 1/4, in integer picoseconds.
    pub fn sample(&mut self, r: Dur) {
        self.latest = r;
        if !self.has_sample {
            self.srtt = r;
            self.rttvar = Dur(r.ps() / 2);
            self.has_sample = true;
        } else {
            let diff = self.srtt.ps().abs_diff(r.ps());
            self.rttvar = Dur((3 * self.rttvar.ps() + diff) / 4);
            self.srtt = Dur((7 * self.srtt.ps() + r.ps()) / 8);
        }
        // A new sample from a non-retransmitted segment ends the backoff (Karn).
        self.backoff = 0;
    }

    /// The RTO before backoff: (2.1) initial, or (2.3) with the min/max bounds.
    pub fn base_rto(&self, p: &RttParams) -> Dur {
        if !self.has_sample {
            return p.initial_rto;
        }
        let var = Dur(4 * self.rttvar.ps());
        let var = match p.formula {
            RtoFormula::Rfc6298 => var.max(p.granularity),
            RtoFormula::Bsd => var,
        };
        (self.srtt + var).max(p.min_rto).min(p.max_rto)
    }

    /// The RTO with the current backoff, capped at max_rto.
    pub fn rto(&self, p: &RttParams) -> Dur {
        let base = self.base_rto(p);
        let shifted = if self.backoff >= 63 { Dur::MAX } else { base.saturating_mul(1u64 << self.backoff) };
        shifted.min(p.max_rto.max(base))
    }
}

impl Default for RttEstimator {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(g: Dur) -> RttParams {
        RttParams { granularity: g, min_rto: Dur::ZERO, max_rto: Dur::from_secs(60), initial_rto: Dur::from_secs(1), formula: RtoFormula::Rfc6298 }
    }

    #[test]
    fn sub_tick_paths_measure_one_tick() {
        let p = params(Dur::from_ms(1));
        // Sent at 0.2 ms, acked at 0.25 ms: same tick -> one tick.
        let t = p.tick(SimTime(Dur::from_us(200).ps()));
        assert_eq!(p.sample_from_ticks(SimTime(Dur::from_us(250).ps()), t), Dur::from_ms(1));
        // Straddling a tick boundary still one tick.
        let t = p.tick(SimTime(Dur::from_us(990).ps()));
        assert_eq!(p.sample_from_ticks(SimTime(Dur::from_us(1010).ps()), t), Dur::from_ms(1));
        let fine = params(Dur::from_ns(1));
        let t = fine.tick(SimTime(Dur::from_us(200).ps()));
        assert_eq!(fine.sample_from_ticks(SimTime(Dur::from_us(237).ps()), t), Dur::from_us(37));
    }

    #[test]
    fn rfc6298_first_sample_and_update() {
        let p = params(Dur::from_us(1));
        let mut e = RttEstimator::new();
        assert_eq!(e.rto(&p), Dur::from_secs(1));
        e.sample(Dur::from_us(100));
        assert_eq!(e.srtt, Dur::from_us(100));
        assert_eq!(e.rttvar, Dur::from_us(50));
        assert_eq!(e.rto(&p), Dur::from_us(300));
        e.sample(Dur::from_us(200));
        // rttvar = 3/4*50 + 1/4*100 = 62.5; srtt = 7/8*100 + 1/8*200 = 112.5
        assert_eq!(e.rttvar, Dur(62_500_000));
        assert_eq!(e.srtt, Dur(112_500_000));
        e.backoff = 2;
        assert_eq!(e.rto(&p), Dur(4 * (112_500_000 + 250_000_000)));
    }

    #[test]
    fn granularity_term_and_bsd_formula() {
        let mut p = params(Dur::from_ms(1));
        let mut e = RttEstimator::new();
        for _ in 0..50 {
            e.sample(Dur::from_ms(1));
        }
        // RFC 6298: SRTT + max(G, 4*RTTVAR) = 1 ms + 1 ms.
        assert_eq!(e.rto(&p), Dur::from_ms(2));
        p.formula = RtoFormula::Bsd;
        // BSD: SRTT + 4*RTTVAR, RTTVAR has decayed to ~0.
        assert!(e.rto(&p) < Dur::from_us(1001), "{:?}", e.rto(&p));
    }
}
