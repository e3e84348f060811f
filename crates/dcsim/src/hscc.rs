//! HSCC (hysteresis switching congestion control) at a switch egress port:
//! a counter-clockwise relay on the instantaneous queue decides whether the
//! port is in TCP mode or in CBR mode; while it is in CBR mode, the ACKs of
//! the flows whose data leaves through it have their receive window cut, so
//! the senders fall back to a slow constant rate.
//!
//! Seed 002 §3 (the hysteresis and the CBR state; thresholds alpha1 = 25 %,
//! alpha2 = 50 % of the buffer) and ../shared/reference/mechanisms.md §1.2
//! (the NetFPGA module `hscc_main.v`: per-port state, the relay evaluated on
//! the queue, rwnd written into ACKs arriving on the port, the fair-share
//! window option, SYN - FIN flow counting). docs/models/hscc.md lists the
//! deviations.

use crate::config::{HsccCfg, HsccWindow};

/// One port's HSCC state.
#[derive(Clone, Debug)]
pub struct Hscc {
    low: u64,
    high: u64,
    window: HsccWindow,
    /// Buffer above the low threshold (fair-share rules), in bytes; an
    /// eighth of it for `fair_share_words`, the Verilog's 8-byte words.
    share_pool: u64,
    /// sigma: the top fraction of the buffer that only control packets may use.
    pub control_reserve: f64,
    /// Whether SYN-ACKs are rewritten too (the NetFPGA's rule).
    pub syn_ack: bool,
    pub cbr: bool,
    /// When the port last entered CBR mode, ps.
    cbr_since: u64,
    /// Connections whose data leaves through this port: SYNs seen minus FINs.
    pub flows: i64,
    pub stats: HsccStats,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct HsccStats {
    /// Entries into CBR mode.
    pub cbr_entries: u64,
    /// ACKs whose window was rewritten.
    pub rewrites: u64,
    /// Time spent in finished CBR periods, ps (see cbr_time_ps).
    pub cbr_ps: u64,
}

/// MSS-sized default and the NetFPGA's constants (mechanisms.md §1.2).
const INIT_CWND: u64 = 10 * 1460;
const MIN_SHARE: u64 = 146;

impl Hscc {
    /// `capacity`: the port's buffer in the unit the queue is measured in
    /// (packets or bytes); `buffer_bytes`: the same buffer in bytes.
    pub fn new(cfg: &HsccCfg, capacity: u64, buffer_bytes: u64) -> Hscc {
        Hscc {
            low: (cfg.low * capacity as f64) as u64,
            high: (cfg.high * capacity as f64) as u64,
            window: cfg.window,
            share_pool: (buffer_bytes - (cfg.low * buffer_bytes as f64) as u64) / if cfg.window == HsccWindow::FairShareWords { 8 } else { 1 },
            control_reserve: cfg.control_reserve,
            syn_ack: cfg.syn_ack,
            cbr: false,
            cbr_since: 0,
            flows: 0,
            stats: HsccStats::default(),
        }
    }

    /// The relay, on the queue length after a change: enter CBR mode above
    /// the high threshold, leave it below the low one, hold in between.
    #[inline]
    pub fn on_queue(&mut self, now_ps: u64, queue: u64) {
        if !self.cbr && queue > self.high {
            self.cbr = true;
            self.stats.cbr_entries += 1;
            self.cbr_since = now_ps;
        } else if self.cbr && queue < self.low {
            self.cbr = false;
            self.stats.cbr_ps += now_ps - self.cbr_since;
        }
    }

    /// The window (bytes) to give an ACK of a flow through this port in CBR
    /// mode, for senders whose segments are `mss` bytes.
    pub fn window(&self, mss: u64) -> u64 {
        match self.window {
            HsccWindow::OneMss => mss,
            HsccWindow::FairShare | HsccWindow::FairShareWords => {
                let share = self.share_pool / self.flows.max(1) as u64;
                if share <= INIT_CWND {
                    share.max(MIN_SHARE)
                } else if share <= 65535 {
                    INIT_CWND
                } else {
                    mss
                }
            }
        }
    }

    /// Time in CBR mode up to `now_ps`.
    pub fn cbr_time_ps(&self, now_ps: u64) -> u64 {
        self.stats.cbr_ps + if self.cbr { now_ps - self.cbr_since } else { 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hscc(window: HsccWindow) -> Hscc {
        Hscc::new(&HsccCfg { low: 0.25, high: 0.5, window, control_reserve: 0.0, shim: true, syn_ack: false, switches: None }, 100, 150_000)
    }

    #[test]
    fn the_relay_is_counter_clockwise_with_memory_between_thresholds() {
        let mut h = hscc(HsccWindow::OneMss);
        // Rising: TCP mode up to 50 packets, CBR above.
        for q in 0..=50 {
            h.on_queue(q, q);
            assert!(!h.cbr, "q = {q}");
        }
        h.on_queue(51, 51);
        assert!(h.cbr);
        // Falling: CBR held down to 25 packets, TCP below.
        for q in (25..=51).rev() {
            h.on_queue(100 - q, q);
            assert!(h.cbr, "q = {q}");
        }
        h.on_queue(80, 24);
        assert!(!h.cbr);
        assert_eq!(h.stats.cbr_entries, 1);
        assert_eq!(h.cbr_time_ps(1000), 80 - 51);
        // Rising again through the band: stays in TCP mode.
        h.on_queue(90, 40);
        assert!(!h.cbr);
    }

    #[test]
    fn fair_share_divides_the_buffer_above_the_low_threshold() {
        let mut h = hscc(HsccWindow::FairShare);
        // 150 KB buffer, 25 % low: 112.5 KB shared.
        h.flows = 100;
        assert_eq!(h.window(1460), 1125);
        h.flows = 10_000;
        assert_eq!(h.window(1460), MIN_SHARE);
        h.flows = 5;
        assert_eq!(h.window(1460), INIT_CWND); // 22.5 KB: above IW, below 64 KB
        h.flows = 1;
        assert_eq!(h.window(1460), 1460); // above 64 KB: the constant window
        assert_eq!(hscc(HsccWindow::OneMss).window(1448), 1448);
    }

    #[test]
    fn fair_share_in_words_is_an_eighth_with_the_same_floor() {
        let mut h = hscc(HsccWindow::FairShareWords);
        h.flows = 10; // 112.5 KB = 14,062 words: 1406 per flow, read as bytes
        assert_eq!(h.window(1460), 1406);
        h.flows = 100;
        assert_eq!(h.window(1460), MIN_SHARE);
    }
}
