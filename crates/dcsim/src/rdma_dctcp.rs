//! DCTCP on an RDMA NIC: DCTCP's control law (Alizadeh, Greenberg, Maltz,
//! Padhye, Patel, Prabhakar, Sengupta, Sridharan, "Data Center TCP
//! (DCTCP)", SIGCOMM 2010, §3.1) driving a rate limiter, without slow
//! start, as the HPCC paper compares against it (Li et al., SIGCOMM 2019,
//! §5.1: "DCTCP (slow start removed)"), in the rate form of the HPCC
//! authors' simulator. See docs/models/rdma-dctcp.md.
//!
//! The receiver echoes a CE mark in the ACK of the marked packet (BTH's
//! BECN bit). Once per window of data (when an ACK passes the byte that was
//! next to send at the last update) the sender updates
//! alpha ← (1 − g) alpha + g F, F the fraction of that window's packets
//! whose ACK echoed a mark. On an echoed mark outside a cut's window it
//! cuts the rate by alpha / 2 once for that window; at each window's end
//! outside a cut's window it adds `ai` (DCTCP's one packet per RTT, as a
//! rate). The authors' runs also cap unacknowledged bytes at rate × T
//! (`rdma.window`).

use crate::config::RdmaDctcpCfg;

pub struct RdmaDctcp {
    g: f64,
    ai: f64,
    min_rate: f64,
    line_rate: f64,
    pub rate: f64,
    pub alpha: f64,
    /// Echoed marks in the current window, and its packets.
    marks: u64,
    window_packets: u64,
    /// The window ends when an ACK passes this byte (0: not begun).
    window_end: u64,
    /// A cut's window: no other cut, no increase, until an ACK passes this byte.
    cut_until: Option<u64>,
    pub decreases: u64,
}

impl RdmaDctcp {
    pub fn new(cfg: &RdmaDctcpCfg, line_rate: f64) -> RdmaDctcp {
        RdmaDctcp {
            g: cfg.g,
            ai: cfg.ai.0.bps as f64,
            min_rate: cfg.min_rate.0.bps as f64,
            line_rate,
            rate: line_rate,
            alpha: 1.0,
            marks: 0,
            window_packets: 0,
            window_end: 0,
            cut_until: None,
            decreases: 0,
        }
    }

    /// An ACK for bytes before `ack`, echoing a mark if `ece`, when the
    /// sender has sent up to `snd_nxt` in packets of `payload` bytes.
    /// Returns the new rate if it changed.
    pub fn on_ack(&mut self, ack: u64, snd_nxt: u64, ece: bool, payload: u64) -> Option<f64> {
        let before = self.rate;
        self.marks += ece as u64;
        let window_done = ack > self.window_end;
        if window_done {
            let begun = self.window_end > 0;
            if begun {
                let f = (self.marks as f64 / self.window_packets as f64).min(1.0);
                self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
                self.marks = 0;
            }
            // The packets the next window's ACKs will cover.
            self.window_packets = (snd_nxt - if begun { ack } else { 0 }) / payload + 1;
            self.window_end = snd_nxt;
        }
        if self.cut_until.is_some_and(|end| ack > end) {
            self.cut_until = None;
        }
        if ece && self.cut_until.is_none() {
            self.rate = (self.rate * (1.0 - self.alpha / 2.0)).max(self.min_rate);
            self.cut_until = Some(snd_nxt);
            self.decreases += 1;
        }
        if self.cut_until.is_none() && window_done {
            self.rate = (self.rate + self.ai).min(self.line_rate);
        }
        (self.rate != before).then_some(self.rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dctcp() -> RdmaDctcp {
        let cfg: RdmaDctcpCfg = serde_json::from_str("{}").unwrap();
        RdmaDctcp::new(&cfg, 100e9)
    }

    #[test]
    fn one_cut_per_window_by_alpha_over_two_and_alpha_follows_the_marked_fraction() {
        let mut d = dctcp();
        // The first ACK opens the first window (10 packets sent); it was marked: cut by 1/2.
        assert_eq!(d.on_ack(1000, 10_000, true, 1000), Some(50e9));
        // More marks within the cut's window: no further cut.
        assert_eq!(d.on_ack(2000, 12_000, true, 1000), None);
        assert_eq!(d.on_ack(3000, 12_000, true, 1000), None);
        // The first window (11 packets, as the authors count it) ends at 10 000 with 3 marks.
        d.on_ack(10_001, 20_000, false, 1000);
        let alpha = (1.0 - 1.0 / 16.0) + 3.0 / 11.0 / 16.0;
        assert!((d.alpha - alpha).abs() < 1e-12, "{}", d.alpha);
        // Past the cut's window and a window's end: + ai.
        assert!((d.rate - (50e9 + 615e6)).abs() < 1.0, "{}", d.rate);
        // A mark now cuts again, by the new alpha / 2.
        let r = d.on_ack(11_000, 20_000, true, 1000).unwrap();
        assert!((r - (50e9 + 615e6) * (1.0 - alpha / 2.0)).abs() < 1.0);
    }

    #[test]
    fn unmarked_windows_decay_alpha_and_climb_to_line_rate() {
        let mut d = dctcp();
        d.rate = 99.5e9;
        for k in 0..3 {
            let ack = 10_000 * (k + 1) + k;
            d.on_ack(ack, ack + 10_000, false, 1000);
        }
        assert!((d.alpha - (15.0f64 / 16.0).powi(2)).abs() < 1e-12, "two windows ended with F = 0");
        assert_eq!(d.rate, 100e9, "capped at line rate");
    }
}
