//! DCQCN's reaction point (RP): the sender NIC's rate for one queue pair.
//! Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
//! SIGCOMM 2015, §3.2 (the RP algorithm) and §3.1 (the CP's marking, here
//! `switch.aqm` RED with `spacing = "independent"`; the NP is in
//! crate::rdma). See docs/models/dcqcn.md.
//!
//! * A CNP cuts the rate: R_T = R_C, R_C = R_C (1 - alpha/2), and raises
//!   alpha = (1 - g) alpha + g. The increase stages restart.
//! * Alpha decays, alpha = (1 - g) alpha, after each `alpha_interval` (K)
//!   in which no CNP came.
//! * The rate climbs back in stages counted by a timer (every T) and a byte
//!   counter (every B bytes sent), as the QCN reaction point does: while
//!   both counts are below F, fast recovery (R_C halves its distance to
//!   R_T); while both exceed F, hyper increase (R_T grows by i R_HAI, i the
//!   smaller count past F); otherwise additive increase (R_T grows by R_AI).
//! * `decrease_interval` (the NICs' later behaviour, as the HPCC authors'
//!   simulator models Mellanox's): CNPs only set a flag; the rate is cut at
//!   most once per interval, when the flag is set, and alpha rises on the
//!   alpha timer when a CNP came in its period (not at the cut).
//! * `clamp_target = false` (the NICs' default): a cut sets R_T = R_C only
//!   if the rate rose since the last cut.

use crate::config::DcqcnCfg;

pub struct Dcqcn {
    g: f64,
    f: u32,
    ai: f64,
    hai: f64,
    min_rate: f64,
    line_rate: f64,
    byte_counter: u64,
    clamp_target: bool,
    /// Alpha rises on its timer (the NICs), not at each cut (the paper).
    alpha_on_timer: bool,
    /// The rate rose since the last cut.
    increased: bool,
    /// Current and target rates (b/s).
    pub rc: f64,
    pub rt: f64,
    pub alpha: f64,
    /// Rate-increase events since the last cut: by the timer, by the byte counter.
    timer_count: u32,
    byte_count: u32,
    bytes: u64,
    /// A CNP came since the last alpha update (and, with a decrease
    /// interval, since the last cut check).
    cnp_since_alpha: bool,
    pub cnp_pending: bool,
    /// The first CNP has come: the timers run.
    pub active: bool,
    pub cuts: u64,
}

/// What the world must do after an input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timers {
    /// (Re)start the rate-increase timer.
    pub restart_increase: bool,
    /// Start the alpha and decrease-check timers (the first CNP).
    pub start: bool,
}

impl Dcqcn {
    pub fn new(cfg: &DcqcnCfg, line_rate: f64) -> Dcqcn {
        Dcqcn {
            g: cfg.g,
            f: cfg.fast_recovery,
            ai: cfg.ai.0.bps as f64,
            hai: cfg.hai.0.bps as f64,
            min_rate: cfg.min_rate.0.bps as f64,
            line_rate,
            byte_counter: cfg.byte_counter.0,
            clamp_target: cfg.clamp_target,
            alpha_on_timer: cfg.decrease_interval.is_some(),
            increased: false,
            rc: line_rate,
            rt: line_rate,
            alpha: 1.0,
            timer_count: 0,
            byte_count: 0,
            bytes: 0,
            cnp_since_alpha: false,
            cnp_pending: false,
            active: false,
            cuts: 0,
        }
    }

    /// A CNP arrived. With `deferred` (a decrease interval), only note it.
    pub fn on_cnp(&mut self, deferred: bool) -> Timers {
        let start = !self.active;
        self.active = true;
        self.cnp_since_alpha = true;
        if deferred {
            self.cnp_pending = true;
            return Timers { restart_increase: false, start };
        }
        self.cut();
        Timers { restart_increase: true, start }
    }

    /// The decrease-check timer: cut if a CNP came since the last check.
    /// True if it cut (the increase timer restarts).
    pub fn on_decrease_check(&mut self) -> bool {
        std::mem::take(&mut self.cnp_pending) && {
            self.cut();
            true
        }
    }

    fn cut(&mut self) {
        if self.clamp_target || self.increased {
            self.rt = self.rc;
        }
        self.increased = false;
        self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(self.min_rate);
        if !self.alpha_on_timer {
            self.alpha = (1.0 - self.g) * self.alpha + self.g;
        }
        self.timer_count = 0;
        self.byte_count = 0;
        self.bytes = 0;
        self.cuts += 1;
    }

    /// The alpha timer (every K): decay unless a CNP came meanwhile (with
    /// `alpha_on_timer`, rise if one did).
    pub fn on_alpha_timer(&mut self) {
        let cnp = std::mem::take(&mut self.cnp_since_alpha);
        if !cnp {
            self.alpha *= 1.0 - self.g;
        } else if self.alpha_on_timer {
            self.alpha = (1.0 - self.g) * self.alpha + self.g;
        }
    }

    /// The rate-increase timer (every T).
    pub fn on_increase_timer(&mut self) {
        self.increase();
        self.timer_count += 1;
    }

    /// `bytes` were sent: count them towards the byte counter's stages.
    #[inline]
    pub fn on_sent(&mut self, bytes: u64) {
        if !self.active || self.byte_counter == 0 {
            return;
        }
        self.bytes += bytes;
        while self.bytes >= self.byte_counter {
            self.bytes -= self.byte_counter;
            self.increase();
            self.byte_count += 1;
        }
    }

    /// One increase event, judged by the stages completed before it: the
    /// first F events after a cut are fast recovery (QCN's F cycles; the
    /// HPCC authors' simulator counts its stage the same way).
    fn increase(&mut self) {
        let (t, b) = (self.timer_count, self.byte_count);
        // Without a byte counter only the timer's stages count.
        let (lo, hi) = if self.byte_counter == 0 { (t, t) } else { (t.min(b), t.max(b)) };
        if hi < self.f {
            // Fast recovery.
        } else if lo > self.f {
            self.rt += (lo - self.f) as f64 * self.hai;
        } else {
            self.rt += self.ai;
        }
        self.rt = self.rt.min(self.line_rate);
        self.rc = ((self.rt + self.rc) / 2.0).min(self.line_rate);
        self.increased = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dcqcn() -> Dcqcn {
        Dcqcn::new(&DcqcnCfg::default(), 40e9)
    }

    #[test]
    fn a_cnp_cuts_by_half_alpha_and_raises_alpha() {
        let mut d = dcqcn();
        let t = d.on_cnp(false);
        assert_eq!(t, Timers { restart_increase: true, start: true });
        // alpha starts at 1: the first cut halves the rate.
        assert_eq!(d.rc, 20e9);
        assert_eq!(d.rt, 40e9);
        assert!((d.alpha - 1.0).abs() < 1e-12, "(1 - g) + g = 1");
        // Alpha decays by (1 - g) per quiet interval, not after one with a CNP.
        d.on_alpha_timer();
        assert!((d.alpha - 1.0).abs() < 1e-12, "a CNP came in this interval");
        d.on_alpha_timer();
        assert!((d.alpha - (1.0 - 1.0 / 256.0)).abs() < 1e-12);
    }

    #[test]
    fn recovery_then_additive_then_hyper_increase() {
        let mut d = dcqcn();
        d.on_cnp(false);
        // Five timer events of fast recovery (F = 5; the byte counter has
        // none yet): R_C halves its distance to R_T = 40G each time.
        for k in 1..=5 {
            d.on_increase_timer();
            let expect = 40e9 - 20e9 / 2f64.powi(k);
            assert!((d.rc - expect).abs() < 1.0, "stage {k}: {} vs {expect}", d.rc);
        }
        assert_eq!(d.rt, 40e9, "fast recovery leaves the target");
        // After a second cut, with the byte counter silent, the timer's
        // sixth and seventh events (five done: max(T, BC) = F, then F + 1;
        // min(T, BC) = 0) are additive.
        d.on_cnp(false);
        let rt = d.rt;
        for _ in 0..7 {
            d.on_increase_timer();
        }
        assert!((d.rt - (rt + 2.0 * 40e6)).abs() < 1.0, "{}", d.rt - rt);
        // After a third: byte events 1-7 (the sixth and seventh additive),
        // then timer events 1-6 (additive: seven byte stages are past F)
        // and 7 (six timer stages done, both past F: one hyper step of
        // 1 x R_HAI).
        d.on_cnp(false);
        let rt = d.rt;
        for _ in 0..7 {
            d.on_sent(10_000_000);
        }
        for _ in 0..7 {
            d.on_increase_timer();
        }
        assert!((d.rt - (rt + 8.0 * 40e6 + 100e6)).abs() < 1.0, "{}", d.rt - rt);
    }

    #[test]
    fn the_nics_raise_alpha_on_the_timer_and_keep_the_target_between_cuts() {
        let cfg = DcqcnCfg { decrease_interval: Some(crate::units::DurV(dcsim_engine::Dur::from_us(4))), clamp_target: false, ..DcqcnCfg::default() };
        let mut d = Dcqcn::new(&cfg, 40e9);
        d.alpha = 0.5;
        d.on_cnp(true);
        assert!(d.on_decrease_check());
        assert_eq!((d.rc, d.rt), (30e9, 40e9), "cut by alpha / 2; the target keeps line rate");
        assert_eq!(d.alpha, 0.5, "alpha does not move at the cut");
        d.on_cnp(true);
        d.on_alpha_timer();
        assert!((d.alpha - (0.5 * (1.0 - 1.0 / 256.0) + 1.0 / 256.0)).abs() < 1e-12, "but on the timer, after a CNP");
        assert!(d.on_decrease_check());
        assert_eq!(d.rt, 40e9, "no increase between the cuts: the target stays");
    }

    #[test]
    fn a_decrease_interval_cuts_once_per_check() {
        let mut d = dcqcn();
        assert_eq!(d.on_cnp(true), Timers { restart_increase: false, start: true });
        d.on_cnp(true);
        assert_eq!(d.rc, 40e9, "no cut until the check");
        assert!(d.on_decrease_check());
        assert_eq!(d.rc, 20e9);
        assert!(!d.on_decrease_check(), "no CNP since");
        assert_eq!(d.cuts, 1);
    }
}
