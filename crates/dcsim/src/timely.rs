//! TIMELY: RTT-gradient rate control. Mittal, Lam, Dukkipati, Blem,
//! Wassel, Ghobadi, Vahdat, Wang, Wetherall, Zats, "TIMELY: RTT-based
//! Congestion Control for the Datacenter", SIGCOMM 2015, §4 and Algorithm 1.
//! See docs/models/timely.md.
//!
//! Once per completion event (here: every `segment` acknowledged bytes, or
//! with `per_window`, once per window of data as the HPCC authors'
//! simulator updates: when the ACKs pass the byte that was next to send at
//! the last update),
//! with the RTT of the newest acknowledged packet (NIC timestamps):
//! below T_low increase by delta; above T_high decrease by
//! beta (1 - T_high / rtt); otherwise follow the normalised gradient of an
//! EWMA of RTT differences: increase by delta (5 delta after `hai_after`
//! non-positive gradients in a row, hyperactive increase) when it is not
//! positive, else decrease by beta times the gradient.
//!
//! With `hai_counts_rtt_falls`, the hyperactive increase counts updates
//! whose RTT fell below the previous one, as the authors' published code
//! does, rather than gradient-based increases, as Algorithm 1 words it.
//!
//! With `scale_by_interval`, each change is scaled by the time since the
//! previous update over minRTT, at most 1 (§5, "rate update frequency":
//! a flow that updates more often than once per minRTT moves no faster;
//! the authors' published rate computation, `delta_factor`).
//!
//! With `max_cut` below 1, one update cuts at most that fraction of the
//! rate (eRPC's port of the authors' code keeps at least half).

use crate::config::TimelyCfg;

pub struct Timely {
    t_low: f64,
    t_high: f64,
    delta: f64,
    beta: f64,
    alpha: f64,
    min_rtt: f64,
    segment: u64,
    per_window: bool,
    hai_after: u32,
    hai_counts_rtt_falls: bool,
    scale_by_interval: bool,
    max_cut: f64,
    min_rate: f64,
    line_rate: f64,
    pub rate: f64,
    prev_rtt: Option<f64>,
    /// When the previous update (or the priming sample) came, in seconds.
    last_update: f64,
    rtt_diff: f64,
    /// Gradient-based increases in a row.
    increases: u32,
    /// Updates in a row whose RTT fell below the previous one.
    falls: u32,
    /// Where the next update is due from: the acknowledged bytes at the
    /// last update, or with `per_window` the end of the window it opened.
    update_point: u64,
    pub decreases: u64,
}

impl Timely {
    pub fn new(cfg: &TimelyCfg, line_rate: f64) -> Timely {
        Timely {
            t_low: cfg.t_low.0.as_secs_f64(),
            t_high: cfg.t_high.0.as_secs_f64(),
            delta: cfg.delta.0.bps as f64,
            beta: cfg.beta,
            alpha: cfg.alpha,
            min_rtt: cfg.min_rtt.0.as_secs_f64(),
            segment: cfg.segment.0,
            per_window: cfg.per_window,
            hai_after: cfg.hai_after,
            hai_counts_rtt_falls: cfg.hai_counts_rtt_falls,
            scale_by_interval: cfg.scale_by_interval,
            max_cut: cfg.max_cut,
            min_rate: cfg.min_rate.0.bps as f64,
            line_rate,
            rate: line_rate,
            prev_rtt: None,
            last_update: 0.0,
            rtt_diff: 0.0,
            increases: 0,
            falls: 0,
            update_point: 0,
            decreases: 0,
        }
    }

    /// An ACK acknowledged bytes up to `acked`, with an RTT sample of `rtt`
    /// seconds, when the sender has sent up to `snd_nxt`, at `now` seconds.
    /// Returns the new rate if a completion event updated it.
    pub fn on_ack(&mut self, acked: u64, snd_nxt: u64, rtt: f64, now: f64) -> Option<f64> {
        let due = if self.per_window {
            acked > self.update_point || self.prev_rtt.is_none()
        } else {
            acked >= self.update_point + self.segment
        };
        if !due {
            return None;
        }
        self.update_point = if self.per_window { snd_nxt } else { acked };
        let since = now - std::mem::replace(&mut self.last_update, now);
        let prev = self.prev_rtt.replace(rtt)?;
        self.falls = if rtt < prev { self.falls + 1 } else { 0 };
        self.rtt_diff = (1.0 - self.alpha) * self.rtt_diff + self.alpha * (rtt - prev);
        let gradient = self.rtt_diff / self.min_rtt;
        let scale = if self.scale_by_interval { (since / self.min_rtt).min(1.0) } else { 1.0 };
        let floor = self.rate * (1.0 - self.max_cut);
        if rtt < self.t_low {
            self.increases = 0;
            self.rate += scale * self.delta;
        } else if rtt > self.t_high {
            self.increases = 0;
            self.rate *= 1.0 - scale * self.beta * (1.0 - self.t_high / rtt);
            self.decreases += 1;
        } else if gradient <= 0.0 {
            self.increases += 1;
            let streak = if self.hai_counts_rtt_falls { self.falls } else { self.increases };
            let n = if streak >= self.hai_after { 5.0 } else { 1.0 };
            self.rate += scale * n * self.delta;
        } else {
            self.increases = 0;
            self.rate *= (1.0 - scale * self.beta * gradient).max(0.0);
            self.decreases += 1;
        }
        self.rate = self.rate.max(floor).clamp(self.min_rate, self.line_rate);
        Some(self.rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timely() -> Timely {
        let cfg: TimelyCfg = serde_json::from_str("{}").unwrap();
        Timely::new(&cfg, 10e9)
    }

    #[test]
    fn one_update_per_segment_and_the_first_sample_only_primes() {
        let mut t = timely();
        assert_eq!(t.on_ack(1000, 0, 100e-6, 0.0), None, "less than a segment");
        assert_eq!(t.on_ack(16_384, 0, 100e-6, 0.0), None, "the first RTT only primes the gradient");
        assert_eq!(t.on_ack(20_000, 0, 100e-6, 0.0), None);
        assert!(t.on_ack(32_768, 0, 100e-6, 0.0).is_some());
    }

    #[test]
    fn per_window_updates_once_per_window_of_data() {
        let cfg: TimelyCfg = serde_json::from_str(r#"{"per_window": true}"#).unwrap();
        let mut t = Timely::new(&cfg, 10e9);
        assert_eq!(t.on_ack(1000, 50_000, 100e-6, 0.0), None, "the first ACK only primes; the window ends at 50 000");
        assert_eq!(t.on_ack(50_000, 90_000, 100e-6, 0.0), None, "not past the window's end");
        assert!(t.on_ack(51_000, 90_000, 100e-6, 0.0).is_some());
        assert_eq!(t.on_ack(89_000, 120_000, 100e-6, 0.0), None);
        assert!(t.on_ack(90_001, 120_000, 100e-6, 0.0).is_some());
    }

    #[test]
    fn the_four_regions() {
        let mut t = timely();
        t.rate = 5e9;
        t.on_ack(16_384, 0, 100e-6, 0.0);
        // Rising RTT between the thresholds: decrease by beta x gradient.
        // rtt_diff = 0.875 x 10 us; gradient = 8.75 / 20; rate x (1 - 0.8 x 0.4375) = x 0.65.
        let r = t.on_ack(32_768, 0, 110e-6, 0.0).unwrap();
        assert!((r - 5e9 * 0.65).abs() < 1.0, "{r}");
        // Above T_high = 500 us: x (1 - 0.8 (1 - 500/1000)) = x 0.6.
        let r2 = t.on_ack(49_152, 0, 1000e-6, 0.0).unwrap();
        assert!((r2 - r * 0.6).abs() < 1.0);
        // Below T_low: + delta.
        let r3 = t.on_ack(65_536, 0, 30e-6, 0.0).unwrap();
        assert!((r3 - (r2 + 10e6)).abs() < 1.0);
        // A steady RTT between the thresholds (zero gradient): + delta, and
        // 5 delta from the fifth such increase in a row.
        let mut t = timely();
        t.rate = 1e9;
        t.on_ack(16_384, 0, 200e-6, 0.0);
        let mut rate = 1e9;
        for k in 1..=6u64 {
            let now = t.on_ack(16_384 * (k + 1), 0, 200e-6, 0.0).unwrap();
            let expect = if k >= 5 { 50e6 } else { 10e6 };
            assert!((now - rate - expect).abs() < 1.0, "step {k}: {}", now - rate);
            rate = now;
        }
    }

    #[test]
    fn scaled_by_the_time_since_the_last_update_over_min_rtt() {
        let cfg: TimelyCfg = serde_json::from_str(r#"{"scale_by_interval": true}"#).unwrap();
        let mut t = Timely::new(&cfg, 10e9);
        t.rate = 5e9;
        t.on_ack(16_384, 0, 100e-6, 100e-6);
        // 10 us after the priming sample, half of minRTT: half a step.
        let r = t.on_ack(32_768, 0, 100e-6, 110e-6).unwrap();
        assert!((r - (5e9 + 5e6)).abs() < 1.0, "{r}");
        // A rise of 10 us 5 us later: x (1 - 0.25 x 0.8 x 0.4375).
        let r2 = t.on_ack(49_152, 0, 110e-6, 115e-6).unwrap();
        assert!((r2 - r * (1.0 - 0.25 * 0.8 * 0.4375)).abs() < 1.0, "{r2}");
        // A minRTT or more since the last: the whole step, as unscaled.
        let r3 = t.on_ack(65_536, 0, 30e-6, 1.0).unwrap();
        assert!((r3 - (r2 + 10e6)).abs() < 1.0, "{r3}");
    }

    #[test]
    fn a_bounded_cut_keeps_the_given_share() {
        let cfg: TimelyCfg = serde_json::from_str(r#"{"max_cut": 0.5}"#).unwrap();
        let mut t = Timely::new(&cfg, 10e9);
        t.rate = 5e9;
        t.on_ack(16_384, 0, 100e-6, 0.0);
        // A 50 us rise: gradient 2.19, 1 - 0.8 x 2.19 < 0 (the floor unbounded); here half.
        assert_eq!(t.on_ack(32_768, 0, 150e-6, 0.0), Some(2.5e9));
        // A 1 us rise cuts less than half, as unbounded: rtt_diff 0.125 x 43.75 + 0.875 x 1 us.
        let r = t.on_ack(49_152, 0, 151e-6, 0.0).unwrap();
        assert!((r - 2.5e9 * (1.0 - 0.8 * (0.125 * 43.75 + 0.875) / 20.0)).abs() < 1.0, "{r}");
        let mut u = timely();
        u.rate = 5e9;
        u.on_ack(16_384, 0, 100e-6, 0.0);
        assert_eq!(u.on_ack(32_768, 0, 150e-6, 0.0), Some(10e6), "unbounded: to the floor");
    }

    #[test]
    fn hyperactive_increase_after_falling_rtts_when_so_counted() {
        let cfg: TimelyCfg = serde_json::from_str(r#"{"hai_counts_rtt_falls": true}"#).unwrap();
        let mut t = Timely::new(&cfg, 10e9);
        t.rate = 1e9;
        t.on_ack(16_384, 0, 200e-6, 0.0);
        // A steady RTT: a zero gradient, so every update increases, but no
        // RTT falls, so never 5 delta (counting increases: from the fifth).
        let mut rate = 1e9;
        for k in 1..=6u64 {
            let now = t.on_ack(16_384 * (k + 1), 0, 200e-6, 0.0).unwrap();
            assert!((now - rate - 10e6).abs() < 1.0, "step {k}: {}", now - rate);
            rate = now;
        }
        // Five falls in a row: 5 delta at the fifth.
        let mut steps = Vec::new();
        for k in 1..=5u64 {
            let now = t.on_ack(16_384 * (k + 7), 0, (200.0 - k as f64) * 1e-6, 0.0).unwrap();
            steps.push(((now - rate) / 1e6).round());
            rate = now;
        }
        assert_eq!(steps, [10.0, 10.0, 10.0, 10.0, 50.0]);
    }
}
