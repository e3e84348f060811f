//! RTT estimation and the retransmission timeout: RFC 6298, BSD's and
//! Linux's estimators, with samples taken by one of the clocks of
//! [`super::clock`].
//!
//! Tick quantisation (FreeBSD's `ticks`, and the timestamp fallback of
//! Linux): a segment is stamped with the clock's tick count
//! `floor(now / tick)`; a sample is `max(1, ticks_now - ticks_stamped) * tick`.
//! A path shorter than one tick therefore measures as exactly one tick, the
//! "RTT floor" of seed 004 §5.3.4.

use crate::config::{RtoFormula, RttClock};
use crate::units::Clock;
use dcsim_engine::{Dur, SimTime};

#[derive(Clone, Copy, Debug)]
pub struct RttParams {
    pub clock: RttClock,
    /// The TSval clock's tick: G with the `ticks` clock, 1 ms for Linux
    /// (TCP_TS_HZ) and ns-3 (TcpOptionTS::NowToTsValue).
    pub ts_tick: Dur,
    /// G: the tick clock, Linux's jiffy, or ns-3's ClockGranularity.
    pub granularity: Dur,
    pub min_rto: Dur,
    pub max_rto: Dur,
    pub initial_rto: Dur,
    /// RFC 6298 §5.7's RTO after a SYN timeout (zero: no reset).
    pub syn_timeout_rto: Dur,
    pub formula: RtoFormula,
}

impl RttParams {
    /// The tick of the RTT clock at `now` (wraps like a 32-bit TCP timestamp).
    #[inline]
    pub fn tick(&self, now: SimTime) -> u32 {
        (now.ps() / self.ts_tick.ps()) as u32
    }
    /// Quantised sample from a tick difference, or None if `stamped` is
    /// later than now in modulo-2^32 tick order: a TSecr "in the future",
    /// which FreeBSD's tcp_input treats as absent and Linux's
    /// tcp_rtt_tsopt_us discards (only a forged or corrupted echo has one).
    #[inline]
    pub fn sample_from_ticks(&self, now: SimTime, stamped: u32) -> Option<Dur> {
        let ticks = self.tick(now).wrapping_sub(stamped);
        if ticks > i32::MAX as u32 {
            return None;
        }
        Some(self.ts_tick.saturating_mul(ticks.max(1) as u64))
    }

    /// When a retransmission timer armed at `now` for `rto` fires. Linux
    /// counts the RTO in whole jiffies (usecs_to_jiffies rounds up) and its
    /// timer wheel fires on a jiffy boundary: `jiffies + ceil(rto / G)`.
    #[inline(always)]
    pub fn deadline(&self, now: SimTime, rto: Dur) -> SimTime {
        if self.formula == RtoFormula::Linux {
            return self.jiffy_deadline(now, rto);
        }
        now + rto
    }

    #[inline(never)]
    fn jiffy_deadline(&self, now: SimTime, rto: Dur) -> SimTime {
        let g = self.granularity.ps();
        let jiffies = (now.ps() / g).saturating_add(rto.ps().div_ceil(g));
        SimTime(jiffies.saturating_mul(g))
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
    /// Smallest sample so far (the path's intrinsic RTT as this sender sees
    /// it: seed 004 Table 5's "minimum path latency").
    pub min: Dur,
    /// The SYN or SYN-ACK timed out: until a sample, the RTO is at least
    /// `syn_timeout_rto` (RFC 6298 §5.7).
    syn_timed_out: bool,
    /// Linux's estimator only: the mean deviation (x4, as `mdev_us`), its
    /// largest value in the current RTT, and the sequence that ends that RTT.
    mdev: Dur,
    mdev_max: Dur,
    rtt_seq: u64,
}

impl RttEstimator {
    pub fn new() -> Self {
        RttEstimator { srtt: Dur::ZERO, rttvar: Dur::ZERO, has_sample: false, backoff: 0, latest: Dur::ZERO, min: Dur::MAX, syn_timed_out: false, mdev: Dur::ZERO, mdev_max: Dur::ZERO, rtt_seq: 0 }
    }

    /// The handshake completed after a SYN timeout: data transmission
    /// starts with the RTO re-initialised (RFC 6298 §5.7), not backed off.
    pub fn after_syn_timeout(&mut self, p: &RttParams) {
        if p.syn_timeout_rto > Dur::ZERO {
            self.syn_timed_out = true;
            self.backoff = 0;
        }
    }

    /// Take sample `r`, acknowledged up to `una` with `nxt` the highest
    /// sequence sent (Linux's estimator measures its deviation per RTT).
    #[inline(always)]
    pub fn sample(&mut self, r: Dur, p: &RttParams, una: u64, nxt: u64) {
        self.latest = r;
        self.min = self.min.min(r);
        if p.formula == RtoFormula::Linux {
            self.linux_update(r, p.min_rto, una, nxt);
        } else {
            self.rfc6298_update(r);
        }
        // A new sample from a non-retransmitted segment ends the backoff (Karn).
        self.backoff = 0;
    }

    /// RFC 6298 (2.2) and (2.3), alpha = 1/8, beta = 1/4, in integer picoseconds.
    #[inline(always)]
    fn rfc6298_update(&mut self, r: Dur) {
        if !self.has_sample {
            self.srtt = r;
            self.rttvar = Dur(r.ps() / 2);
            self.has_sample = true;
        } else {
            // In u128: a sample of days (a 1 ms clock, 2^31 ticks) must not overflow.
            let diff = self.srtt.ps().abs_diff(r.ps()) as u128;
            self.rttvar = Dur(((3 * self.rttvar.ps() as u128 + diff) / 4) as u64);
            self.srtt = Dur(((7 * self.srtt.ps() as u128 + r.ps() as u128) / 8) as u64);
        }
    }

    /// Linux's tcp_rtt_estimator (Linux 6.x, net/ipv4/tcp_input.c), in
    /// picoseconds: SRTT with gain 1/8; `mdev` (four mean deviations) with
    /// gain 1/4, except that a sample below SRTT by more than mdev/4 raises
    /// it by an eighth of the excess only; RTTVAR (the RTO's variance term) rises at once to the
    /// largest `mdev` of the current RTT and, once per RTT, falls a quarter
    /// of the way to it, never below `min_rto`.
    #[inline(never)]
    fn linux_update(&mut self, r: Dur, min_rto: Dur, una: u64, nxt: u64) {
        if !self.has_sample {
            self.has_sample = true;
            self.srtt = r;
            self.mdev = r.saturating_mul(2); // an RTO of 3 x the first sample
            self.rttvar = self.mdev.max(min_rto);
            self.mdev_max = self.rttvar;
            self.rtt_seq = nxt;
            return;
        }
        // i64 picoseconds hold 106 days: no sample comes near.
        let (m, srtt, mdev) = (r.ps().min(i64::MAX as u64) as i64, self.srtt.ps() as i64, self.mdev.ps() as i64);
        let err = m - srtt;
        self.srtt = Dur((srtt + err / 8) as u64);
        let step = if err < 0 {
            let d = err.saturating_neg() - mdev / 4;
            if d > 0 { d / 8 } else { d }
        } else {
            err - mdev / 4
        };
        self.mdev = Dur(mdev.saturating_add(step).max(0) as u64);
        if self.mdev > self.mdev_max {
            self.mdev_max = self.mdev;
            self.rttvar = self.rttvar.max(self.mdev_max);
        }
        if una > self.rtt_seq {
            if self.mdev_max < self.rttvar {
                self.rttvar = Dur(self.rttvar.ps() - (self.rttvar.ps() - self.mdev_max.ps()) / 4);
            }
            self.rtt_seq = nxt;
            self.mdev_max = min_rto;
        }
    }

    /// (smallest sample, SRTT), once there is a sample (the flows table's
    /// min_rtt and srtt).
    pub fn summary(&self) -> Option<(Dur, Dur)> {
        self.has_sample.then_some((self.min, self.srtt))
    }

    /// The RTO before backoff: (2.1) initial, or (2.3) with the min/max bounds.
    pub fn base_rto(&self, p: &RttParams) -> Dur {
        if !self.has_sample {
            return if self.syn_timed_out { p.initial_rto.max(p.syn_timeout_rto) } else { p.initial_rto };
        }
        let var = self.rttvar.saturating_mul(4);
        let rto = match p.formula {
            RtoFormula::Rfc6298 => self.srtt.saturating_add(var.max(p.granularity)),
            RtoFormula::Bsd => self.srtt.saturating_add(var),
            // __tcp_set_rto, in whole jiffies (at least one); RTTVAR
            // already holds min_rto.
            RtoFormula::Linux => {
                let g = p.granularity.ps();
                Dur(self.srtt.saturating_add(self.rttvar).ps().div_ceil(g).max(1).saturating_mul(g))
            }
        };
        rto.max(p.min_rto).min(p.max_rto)
    }

    /// The RTO with the current backoff, capped at max_rto.
    pub fn rto(&self, p: &RttParams) -> Dur {
        let base = self.base_rto(p);
        let shifted = if self.backoff >= 63 { Dur::MAX } else { base.saturating_mul(1u64 << self.backoff) };
        shifted.min(p.max_rto.max(base))
    }
}

/// ARREAR (seed 004 §6.2): TSval is a measurement token, not a clock. The
/// sender keeps a FIFO of (token, clock read); when a token returns as
/// TSecr, now minus its clock read is one RTT sample, at the resolution of
/// the sender's own clock. Older entries are dropped on the way (lost or
/// coalesced ACKs); a TSecr below the oldest entry is not a measurement.
#[derive(Clone, Copy, Debug)]
pub struct ArrearParams {
    /// The clock the sender reads (the thesis: 1 ns, stored as sbintime).
    pub clock: Clock,
    /// The time source's resolution: a read floors the time to it first.
    pub source: Dur,
    /// Tokens must not wrap within this maximum segment lifetime.
    pub msl: Dur,
    /// Junk bytes on the SYN (§6.3.3).
    pub syn_data: u32,
}

#[derive(Clone, Debug, Default)]
pub struct Arrear {
    /// The last token issued (TSval of segments that are not measured).
    pub token: u32,
    /// (token, clock read in ticks) of measurements in flight.
    pending: std::collections::VecDeque<(u32, u64)>,
    /// Token rate limit: the current review window (about one RTT) and the
    /// tokens used in it.
    window_start: SimTime,
    used: u64,
}

impl Arrear {
    fn read(now: SimTime, p: &ArrearParams) -> u64 {
        let source = p.source.ps();
        p.clock.ticks(now.ps() / source * source)
    }

    /// The TSval of an outgoing segment. A `candidate` (one expected to
    /// elicit an immediate reply) takes a new token and starts a
    /// measurement, unless that would consume tokens faster than 2^32 per
    /// MSL over the last RTT (the thesis reviews a duty cycle once per RTT;
    /// this is the same bound as a per-window budget).
    pub fn stamp(&mut self, now: SimTime, candidate: bool, srtt: Dur, p: &ArrearParams) -> u32 {
        if !candidate {
            return self.token;
        }
        let window = srtt.max(Dur::from_us(1));
        if now.since(self.window_start) >= window {
            self.window_start = now;
            self.used = 0;
        }
        let budget = ((1u128 << 32) * window.ps() as u128 / p.msl.ps().max(1) as u128).max(1) as u64;
        if self.used >= budget {
            return self.token;
        }
        self.used += 1;
        self.token = self.token.wrapping_add(1);
        self.pending.push_back((self.token, Self::read(now, p)));
        self.token
    }

    /// An ACK echoed `tsecr`: the sample if it completes a measurement.
    pub fn pair(&mut self, now: SimTime, tsecr: u32, p: &ArrearParams) -> Option<Dur> {
        while let Some(&(token, at)) = self.pending.front() {
            let ahead = tsecr.wrapping_sub(token) as i32;
            if ahead < 0 {
                return None; // older than every pending measurement
            }
            self.pending.pop_front();
            if ahead == 0 {
                return Some(p.clock.span((Self::read(now, p) - at).max(1)));
            }
        }
        None
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
        RttParams { clock: RttClock::Ticks, ts_tick: g, granularity: g, min_rto: Dur::ZERO, max_rto: Dur::from_secs(60), initial_rto: Dur::from_secs(1), syn_timeout_rto: Dur::from_secs(3), formula: RtoFormula::Rfc6298 }
    }

    #[test]
    fn an_echo_from_the_future_is_no_sample_and_a_huge_one_does_not_overflow() {
        let p = params(Dur::from_ms(1));
        let now = SimTime(Dur::from_ms(5).ps());
        assert_eq!(p.sample_from_ticks(now, p.tick(now) + 1), None);
        // The oldest echo still counted: 2^31 - 1 ticks of 1 ms, about 25 days.
        let oldest = p.sample_from_ticks(now, p.tick(now).wrapping_sub(i32::MAX as u32)).unwrap();
        let mut e = RttEstimator::new();
        for _ in 0..3 {
            e.sample(oldest, &p, 0, 0);
        }
        assert_eq!(e.srtt, oldest);
        assert_eq!(e.base_rto(&p), p.max_rto);
    }

    #[test]
    fn sub_tick_paths_measure_one_tick() {
        let p = params(Dur::from_ms(1));
        // Sent at 0.2 ms, acked at 0.25 ms: same tick -> one tick.
        let t = p.tick(SimTime(Dur::from_us(200).ps()));
        assert_eq!(p.sample_from_ticks(SimTime(Dur::from_us(250).ps()), t), Some(Dur::from_ms(1)));
        // Straddling a tick boundary still one tick.
        let t = p.tick(SimTime(Dur::from_us(990).ps()));
        assert_eq!(p.sample_from_ticks(SimTime(Dur::from_us(1010).ps()), t), Some(Dur::from_ms(1)));
        let fine = params(Dur::from_ns(1));
        let t = fine.tick(SimTime(Dur::from_us(200).ps()));
        assert_eq!(fine.sample_from_ticks(SimTime(Dur::from_us(237).ps()), t), Some(Dur::from_us(37)));
    }

    #[test]
    fn rfc6298_first_sample_and_update() {
        let p = params(Dur::from_us(1));
        let mut e = RttEstimator::new();
        assert_eq!(e.rto(&p), Dur::from_secs(1));
        e.sample(Dur::from_us(100), &p, 0, 0);
        assert_eq!(e.srtt, Dur::from_us(100));
        assert_eq!(e.rttvar, Dur::from_us(50));
        assert_eq!(e.rto(&p), Dur::from_us(300));
        e.sample(Dur::from_us(200), &p, 0, 0);
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
            e.sample(Dur::from_ms(1), &p, 0, 0);
        }
        // RFC 6298: SRTT + max(G, 4*RTTVAR) = 1 ms + 1 ms.
        assert_eq!(e.rto(&p), Dur::from_ms(2));
        p.formula = RtoFormula::Bsd;
        // BSD: SRTT + 4*RTTVAR, RTTVAR has decayed to ~0.
        assert!(e.rto(&p) < Dur::from_us(1001), "{:?}", e.rto(&p));
    }

    #[test]
    fn linux_estimator_keeps_min_rto_in_the_variance_term_and_counts_jiffies() {
        let mut p = params(Dur::from_ms(1));
        p.formula = RtoFormula::Linux;
        p.min_rto = Dur::from_ms(1);
        let mut e = RttEstimator::new();
        // First sample 20 us: mdev 40 us, RTTVAR max(40 us, 1 ms) = 1 ms; RTO
        // 1.02 ms rounds up to 2 jiffies.
        e.sample(Dur::from_us(20), &p, 1, 100);
        assert_eq!((e.srtt, e.mdev, e.rttvar), (Dur::from_us(20), Dur::from_us(40), Dur::from_ms(1)));
        assert_eq!(e.rto(&p), Dur::from_ms(2));
        // One 1 ms sample (a timestamp fallback): SRTT += 980/8 us; mdev
        // 40 + (980 - 10) = 1010 us lifts RTTVAR at once.
        e.sample(Dur::from_ms(1), &p, 50, 100);
        assert_eq!(e.srtt, Dur(Dur::from_us(20).ps() + Dur::from_us(980).ps() / 8));
        assert_eq!(e.mdev, Dur::from_us(1010));
        assert_eq!(e.rttvar, Dur::from_us(1010));
        // A sample below SRTT by less than mdev/4 (122.5 < 252.5 us) lets
        // mdev decay with gain 1/4: 1010 - 252.5 + 122.5 = 880 us.
        e.sample(Dur::from_us(20), &p, 60, 100);
        assert_eq!(e.mdev, Dur::from_us(880));
        // Below SRTT by more than mdev/4, only an eighth of the excess counts.
        let mut steady = RttEstimator::new();
        for _ in 0..9 {
            steady.sample(Dur::from_ms(1), &p, 1, 100);
        }
        let mdev = steady.mdev.ps() as i64; // 2 ms x 0.75^8, about 0.2 ms
        steady.sample(Dur::ZERO, &p, 1, 100);
        assert_eq!(steady.mdev.ps() as i64, mdev + (1_000_000_000 - mdev / 4) / 8);
        // Once per RTT (una past rtt_seq = 100) RTTVAR falls a quarter of the
        // way to the RTT's largest mdev; mdev_max restarts at min_rto.
        // This RTT's largest mdev was RTTVAR itself (1010 us): no change yet.
        e.sample(Dur::from_us(20), &p, 101, 200);
        assert_eq!((e.rttvar, e.mdev_max), (Dur::from_us(1010), Dur::from_ms(1)));
        // The next RTT's largest is min_rto: 1010 - 10/4 us.
        e.sample(Dur::from_us(20), &p, 201, 300);
        assert_eq!(e.rttvar, Dur(1_007_500_000));
        // The timer fires on a jiffy boundary: armed at 5.3 ms for 2 ms -> 7 ms.
        let at = SimTime(Dur::from_us(5_300).ps());
        assert_eq!(p.deadline(at, Dur::from_ms(2)), SimTime(Dur::from_ms(7).ps()));
        p.formula = RtoFormula::Rfc6298;
        assert_eq!(p.deadline(at, Dur::from_ms(2)), SimTime(Dur::from_us(7_300).ps()));
    }

    fn arrear() -> ArrearParams {
        ArrearParams { clock: Clock::every(Dur::from_ns(1)), source: Dur(1), msl: Dur::from_secs(30), syn_data: 0 }
    }

    #[test]
    fn arrear_pairs_a_returning_token_with_its_clock_read() {
        let p = arrear();
        let mut a = Arrear::default();
        let t0 = SimTime(1_000_000);
        assert_eq!(a.stamp(t0, true, Dur::ZERO, &p), 1);
        assert_eq!(a.stamp(t0, false, Dur::ZERO, &p), 1, "a pure ACK repeats the last token");
        assert_eq!(a.stamp(SimTime(2_000_000), true, Dur::ZERO, &p), 2);
        // Token 1 comes back 12.345 us later: a sample at 1 ns resolution.
        assert_eq!(a.pair(SimTime(13_345_678), 1, &p), Some(Dur(12_345_000)));
        // Token 1 again (a duplicate echo) is older than every pending one.
        assert_eq!(a.pair(SimTime(14_000_000), 1, &p), None);
        // Token 3 was never issued... token 2 is dropped on the way, no sample.
        assert_eq!(a.stamp(SimTime(3_000_000), true, Dur::ZERO, &p), 3);
        assert_eq!(a.pair(SimTime(20_000_000), 3, &p), Some(Dur(17_000_000)));
        assert!(a.pending.is_empty(), "token 2 was dropped when 3 returned");
    }

    #[test]
    fn arrear_on_sbintime_measures_within_one_2_to_the_minus_32_s_tick() {
        let p = ArrearParams { clock: Clock::SBINTIME, source: Dur(1), msl: Dur::from_secs(30), syn_data: 0 };
        let mut a = Arrear::default();
        let t0 = SimTime(1_000_000_000);
        a.stamp(t0, true, Dur::ZERO, &p);
        let r = a.pair(SimTime(t0.ps() + 22_820), 1, &p).unwrap(); // a 22.82 ns path
        assert!(r <= Dur(22_820) && r > Dur(22_820 - 233), "{r:?}");
    }

    #[test]
    fn arrear_on_a_1ns_source_reads_whole_nanoseconds_in_sbintime() {
        // CLUES' sbinuptime() reads ns-3's 1 ns scheduler (seed 004 §6.2.2):
        // a 22.82 ns path sent at .57 of a nanosecond spans 23 whole ones,
        // 98 or 99 sbintime ticks.
        let p = ArrearParams { clock: Clock::SBINTIME, source: Dur::from_ns(1), msl: Dur::from_secs(30), syn_data: 0 };
        let mut a = Arrear::default();
        let t0 = SimTime(1_000_000_570);
        a.stamp(t0, true, Dur::ZERO, &p);
        let r = a.pair(SimTime(t0.ps() + 22_820), 1, &p).unwrap();
        let ticks = |ns: u64| (ns as u128 * (1 << 32) / 1_000_000_000) as u64;
        assert_eq!(r, Clock::SBINTIME.span(ticks(1_000_023) - ticks(1_000_000)), "{r:?}");
        assert!(r > Dur(22_820), "the whole-ns reads make it longer than the path: {r:?}");
    }

    #[test]
    fn arrear_limits_tokens_to_2_32_per_msl() {
        // With an MSL of 2^32 us, one token per microsecond at most.
        let p = ArrearParams { clock: Clock::every(Dur::from_ns(1)), source: Dur(1), msl: Dur::from_us(1 << 32), syn_data: 0 };
        let mut a = Arrear::default();
        let srtt = Dur::from_us(10);
        let mut t = SimTime(0);
        for _ in 0..100 {
            a.stamp(t, true, srtt, &p);
            t = SimTime(t.ps() + 100_000); // a candidate every 100 ns
        }
        // 10 us of candidates: about 10 tokens, not 100.
        assert!((9..=11).contains(&a.token), "{} tokens", a.token);
    }
}
