//! Congestion control: the window arithmetic of NewReno (RFC 5681, RFC 6582)
//! and the ECN responses of RFC 3168 and DCTCP (RFC 8257). It decides windows;
//! it never sends packets.

use crate::config::CaCounting;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnMode {
    Off,
    /// RFC 3168: halve once per window on ECN-Echo.
    Classic,
    /// RFC 8257: cut by alpha/2 once per window; alpha is the EWMA of the
    /// fraction of marked bytes per window.
    Dctcp,
}

#[derive(Clone, Debug)]
pub struct Cc {
    pub cwnd: u64,
    pub ssthresh: u64,
    mode: EcnMode,
    counting: CaCounting,
    /// Congestion-avoidance credit: bytes (CaCounting::Bytes) or segments
    /// (CaCounting::Segments) acknowledged since cwnd last grew.
    ca_acked: u64,
    /// No new ECN reduction until snd_una passes this (once per window).
    ecn_recover: u64,
    cwr_pending: bool,
    /// An ECN reduction's window is still outstanding.
    cwr_active: bool,
    // DCTCP (RFC 8257 §3.3).
    pub alpha: f64,
    g: f64,
    /// Smallest window a DCTCP cut leaves, in segments.
    floor_segments: u64,
    window_end: u64,
    bytes_acked: u64,
    bytes_marked: u64,
}

const INFINITE_SSTHRESH: u64 = u64::MAX / 4;

impl Cc {
    pub fn new(mode: EcnMode, counting: CaCounting, g: f64, alpha_init: f64, floor_segments: u64) -> Cc {
        Cc {
            cwnd: 0,
            ssthresh: INFINITE_SSTHRESH,
            mode,
            counting,
            ca_acked: 0,
            ecn_recover: 0,
            cwr_pending: false,
            cwr_active: false,
            alpha: alpha_init,
            g,
            floor_segments,
            window_end: 0,
            bytes_acked: 0,
            bytes_marked: 0,
        }
    }

    pub fn ecn_mode(&self) -> EcnMode {
        self.mode
    }

    /// Initial window, once the handshake is done (ssthresh starts "arbitrarily high").
    pub fn init(&mut self, iw_bytes: u64) {
        self.cwnd = iw_bytes;
        self.ssthresh = INFINITE_SSTHRESH;
    }

    pub fn ssthresh_is_infinite(&self) -> bool {
        self.ssthresh >= INFINITE_SSTHRESH
    }

    /// New data acknowledged outside recovery: slow start grows by
    /// min(acked, SMSS) per ACK; congestion avoidance by SMSS per cwnd acked.
    pub fn grow(&mut self, acked: u64, mss: u64) {
        if self.cwnd < self.ssthresh {
            self.cwnd += acked.min(mss);
        } else if self.counting == CaCounting::Segments {
            // tcp_cong_avoid_ai with w = floor(cwnd / SMSS) (ns-3 TcpLinuxReno):
            // at 1.5 segments a segment per ACK, where byte counting needs 1.5.
            let w = (self.cwnd / mss).max(1);
            if self.ca_acked >= w {
                self.ca_acked = 0;
                self.cwnd += mss;
            }
            self.ca_acked += acked / mss;
            if self.ca_acked >= w {
                let steps = self.ca_acked / w;
                self.ca_acked -= steps * w;
                self.cwnd += steps * mss;
            }
        } else {
            // One SMSS per cwnd of acknowledged bytes; a stretch ACK covering
            // several windows adds several SMSS at once and leaves less than
            // a window of credit (as Linux's tcp_cong_avoid_ai), so old
            // credit cannot turn congestion avoidance into slow start.
            self.ca_acked += acked;
            if self.ca_acked >= self.cwnd {
                let windows = self.ca_acked / self.cwnd;
                self.ca_acked -= windows * self.cwnd;
                self.cwnd += windows * mss;
            }
        }
    }

    fn halve(&mut self, flight: u64, mss: u64) {
        self.ssthresh = (flight / 2).max(2 * mss); // RFC 5681 eq. (4)
        self.reset_ca_credit();
    }

    /// A window reduction forgets byte credit; ns-3's TcpLinuxReno keeps the
    /// segment count.
    fn reset_ca_credit(&mut self) {
        if self.counting == CaCounting::Bytes {
            self.ca_acked = 0;
        }
    }

    /// Retransmission timeout: RFC 5681 §3.1, cwnd = loss window = 1 SMSS.
    pub fn on_timeout(&mut self, flight: u64, mss: u64) {
        self.halve(flight, mss);
        self.cwnd = mss;
    }

    /// Fast retransmit (RFC 6582 §3.2 (2) without SACK: cwnd = ssthresh + 3 SMSS;
    /// RFC 6675 §5 (4.2) with SACK: cwnd = ssthresh).
    pub fn enter_recovery(&mut self, flight: u64, mss: u64, sack: bool, snd_max: u64) {
        self.halve(flight, mss);
        self.cwnd = if sack { self.ssthresh } else { self.ssthresh + 3 * mss };
        // A loss response also counts as this window's ECN response (RFC 3168 §6.1.2).
        self.ecn_recover = snd_max;
    }

    /// RFC 6582 §3.2 (4): each further duplicate ACK inflates cwnd by SMSS.
    pub fn inflate(&mut self, mss: u64) {
        self.cwnd += mss;
    }

    /// RFC 6582 §3.2 (5): partial ACK deflation.
    pub fn partial_ack_deflate(&mut self, acked: u64, mss: u64) {
        self.cwnd = self.cwnd.saturating_sub(acked);
        if acked >= mss {
            self.cwnd += mss;
        }
        self.cwnd = self.cwnd.max(mss);
    }

    /// Leaving fast recovery. Without SACK, RFC 6582 §3.2 (3) option (1):
    /// cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS); with SACK the window
    /// stays at ssthresh (RFC 6675).
    pub fn exit_recovery(&mut self, flight: u64, mss: u64) {
        self.cwnd = self.ssthresh.min(flight.max(mss) + mss).max(mss);
        self.reset_ca_credit();
    }

    /// DCTCP's per-window estimate of the marked fraction (RFC 8257 §3.3).
    pub fn on_ack_bytes(&mut self, acked: u64, ece: bool, snd_una: u64, snd_max: u64) {
        if self.mode != EcnMode::Dctcp {
            return;
        }
        self.bytes_acked += acked;
        if ece {
            self.bytes_marked += acked;
        }
        if snd_una > self.window_end {
            if self.bytes_acked > 0 {
                let f = self.bytes_marked as f64 / self.bytes_acked as f64;
                self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
            }
            self.window_end = snd_max;
            self.bytes_acked = 0;
            self.bytes_marked = 0;
        }
    }

    /// An ACK carried ECN-Echo. Reduce at most once per window of data
    /// (RFC 3168 §6.1.2, RFC 8257 §3.3). Returns whether it reduced.
    pub fn on_ece(&mut self, snd_una: u64, snd_max: u64, flight: u64, mss: u64) -> bool {
        if self.mode == EcnMode::Off || (self.ecn_recover > 0 && snd_una <= self.ecn_recover) {
            return false;
        }
        match self.mode {
            EcnMode::Classic => {
                self.halve(flight, mss);
                self.cwnd = self.ssthresh;
            }
            EcnMode::Dctcp => {
                // Linux keeps at least 2 segments; ns-2 goes to 1; ns-3 3.44
                // has no floor (floor_segments = 0).
                let cut = (self.cwnd as f64 * (1.0 - self.alpha / 2.0)) as u64;
                self.cwnd = cut.max(self.floor_segments * mss).max(1);
                self.ssthresh = self.cwnd;
                self.reset_ca_credit();
            }
            EcnMode::Off => unreachable!(),
        }
        self.ecn_recover = snd_max;
        self.cwr_pending = true;
        self.cwr_active = true;
        true
    }

    /// Inside the window after an ECN reduction (Linux's and ns-3's CWR
    /// state): cwnd does not grow until that window is acknowledged.
    pub fn in_cwr(&self, snd_una: u64) -> bool {
        self.cwr_active && snd_una <= self.ecn_recover
    }

    /// Should this outgoing segment carry CWR? (the first new data segment
    /// after a reduction, RFC 3168 §6.1.2).
    pub fn take_cwr(&mut self, new_data: bool) -> bool {
        if self.cwr_pending && new_data {
            self.cwr_pending = false;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1448;

    #[test]
    fn slow_start_then_congestion_avoidance() {
        let mut c = Cc::new(EcnMode::Off, CaCounting::Bytes, 1.0 / 16.0, 1.0, 2);
        c.init(10 * MSS);
        c.grow(2 * MSS, MSS); // one ACK for two segments: +1 SMSS (RFC 5681)
        assert_eq!(c.cwnd, 11 * MSS);
        c.ssthresh = 11 * MSS;
        for _ in 0..10 {
            c.grow(MSS, MSS);
        }
        assert_eq!(c.cwnd, 11 * MSS);
        c.grow(MSS, MSS); // 11 segments acked: one cwnd -> +1 SMSS
        assert_eq!(c.cwnd, 12 * MSS);
        // A stretch ACK of 30 windows adds 30 SMSS once, and no credit is
        // left to grow by one SMSS per ACK afterwards.
        c.grow(30 * 12 * MSS, MSS);
        assert_eq!(c.cwnd, 42 * MSS);
        c.grow(MSS, MSS);
        assert_eq!(c.cwnd, 42 * MSS);
    }

    #[test]
    fn dctcp_alpha_and_cut() {
        let mut c = Cc::new(EcnMode::Dctcp, CaCounting::Bytes, 1.0 / 16.0, 1.0, 2);
        c.init(100 * MSS);
        // One window fully marked keeps alpha at 1 -> cut by half.
        c.on_ack_bytes(MSS, true, 1 + MSS, 100 * MSS);
        assert!((c.alpha - 1.0).abs() < 1e-12);
        assert!(c.on_ece(1 + MSS, 100 * MSS, 99 * MSS, MSS));
        assert_eq!(c.cwnd, 50 * MSS);
        // Not again in the same window.
        assert!(!c.on_ece(50 * MSS, 120 * MSS, 70 * MSS, MSS));
        assert!(c.take_cwr(true));
        assert!(!c.take_cwr(true));
        // A window with no marks: alpha decays by (1-g).
        c.on_ack_bytes(10 * MSS, false, 101 * MSS, 200 * MSS);
        assert!((c.alpha - 15.0 / 16.0).abs() < 1e-12);
        // After the window: the next ECE cuts by alpha/2.
        let before = c.cwnd;
        assert!(c.on_ece(101 * MSS, 200 * MSS, 99 * MSS, MSS));
        assert_eq!(c.cwnd, (before as f64 * (1.0 - 15.0 / 32.0)) as u64);
    }

    #[test]
    fn newreno_recovery_arithmetic() {
        let mut c = Cc::new(EcnMode::Off, CaCounting::Bytes, 0.0625, 1.0, 2);
        c.init(20 * MSS);
        c.enter_recovery(20 * MSS, MSS, false, 21 * MSS);
        assert_eq!(c.ssthresh, 10 * MSS);
        assert_eq!(c.cwnd, 13 * MSS);
        c.inflate(MSS);
        assert_eq!(c.cwnd, 14 * MSS);
        c.partial_ack_deflate(3 * MSS, MSS);
        assert_eq!(c.cwnd, 12 * MSS);
        c.exit_recovery(5 * MSS, MSS);
        assert_eq!(c.cwnd, 6 * MSS);
        c.on_timeout(10 * MSS, MSS);
        assert_eq!((c.cwnd, c.ssthresh), (MSS, 5 * MSS));
    }

    #[test]
    fn congestion_avoidance_counts_bytes_or_whole_segments() {
        // A window of 1.5 segments in congestion avoidance, one segment per ACK.
        let acks_to_grow = |counting| {
            let mut c = Cc::new(EcnMode::Off, counting, 0.0625, 1.0, 2);
            c.init(3 * MSS / 2);
            c.ssthresh = MSS;
            (1..).find(|_| {
                c.grow(MSS, MSS);
                c.cwnd > 3 * MSS / 2
            })
        };
        // RFC 5681: 1.5 segments' worth of bytes, so the second ACK.
        assert_eq!(acks_to_grow(CaCounting::Bytes), Some(2));
        // Linux/ns-3 LinuxReno: w = floor(1.5) = 1 segment, so the first ACK.
        assert_eq!(acks_to_grow(CaCounting::Segments), Some(1));
        // At 4 segments both need 4 ACKs.
        for counting in [CaCounting::Bytes, CaCounting::Segments] {
            let mut c = Cc::new(EcnMode::Off, counting, 0.0625, 1.0, 2);
            c.init(4 * MSS);
            c.ssthresh = MSS;
            for _ in 0..3 {
                c.grow(MSS, MSS);
            }
            assert_eq!(c.cwnd, 4 * MSS);
            c.grow(MSS, MSS);
            assert_eq!(c.cwnd, 5 * MSS);
        }
    }
}
