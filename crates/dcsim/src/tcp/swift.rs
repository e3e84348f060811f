//! Swift congestion control (Kumar et al., "Swift: Delay is Simple and
//! Effective for Congestion Control in the Datacenter", SIGCOMM 2020),
//! `tcp.cc = "swift"`.
//!
//! Swift is AIMD on delay (§3, Algorithm 1): below a target delay the window
//! grows by `ai` packets per RTT, above it shrinks in proportion to the
//! excess, at most once per RTT and by at most `max_mdf`. The delay is split
//! (§3.1, §3.3) into the fabric's (the RTT less the time the receiver held
//! the packet) and the endpoint's (that hold), each with its own window; the
//! effective window is the smaller. The fabric target grows with the path's
//! hops and, for small windows, as 1/√cwnd (§3.5), and a window below one
//! packet is enforced by pacing (Algorithm 1, the pacing lines).
//!
//! This file keeps the windows and answers "how much may be in flight" and
//! "when may the next packet leave"; the endpoint (tcp/mod.rs) measures the
//! delays, sends and recovers from loss. docs/models/swift.md lists the
//! sources and the deviations.

use dcsim_engine::{Dur, SimTime};

/// Swift's parameters (`[tcp.swift]`), windows in packets.
#[derive(Clone, Copy, Debug)]
pub struct SwiftParams {
    /// The fabric target with no hop and no flow scaling (§3.5's base).
    pub base_target: Dur,
    /// Added to the fabric target per switch on the path (§3.5, topology scaling).
    pub per_hop: Dur,
    /// Flow scaling (§3.5): up to `fs_range` more target as the fabric
    /// window falls from `fs_max_cwnd` to `fs_min_cwnd`, as 1/√cwnd.
    pub fs_range: Dur,
    pub fs_min_cwnd: f64,
    pub fs_max_cwnd: f64,
    /// The endpoint window's target (§3.3).
    pub endpoint_target: Dur,
    /// Additive increment per RTT, multiplicative-decrease gain, and the
    /// largest fraction one decrease may take (Algorithm 1's ai, β, max_mdf).
    pub ai: f64,
    pub beta: f64,
    pub max_mdf: f64,
    pub min_cwnd: f64,
    pub max_cwnd: f64,
    /// Consecutive timeouts after which the window drops to `min_cwnd`
    /// (Algorithm 1's RETX_RESET_THRESHOLD).
    pub retx_reset: u32,
}

impl SwiftParams {
    /// The fabric target for a fabric window `fcwnd` on a path of `hops`
    /// switches (§3.5): base + hops·h + clamp(α/√fcwnd + β, 0, fs_range),
    /// with α and β such that the flow term is fs_range at fs_min_cwnd and
    /// zero at fs_max_cwnd.
    pub fn fabric_target(&self, fcwnd: f64, hops: u32) -> Dur {
        let range = self.fs_range.ps() as f64;
        let alpha = range / (1.0 / self.fs_min_cwnd.sqrt() - 1.0 / self.fs_max_cwnd.sqrt());
        let beta = -alpha / self.fs_max_cwnd.sqrt();
        let flow = (alpha / fcwnd.sqrt() + beta).clamp(0.0, range);
        Dur(self.base_target.ps() + hops as u64 * self.per_hop.ps() + flow as u64)
    }
}

/// One sender's Swift state.
#[derive(Clone, Debug)]
pub struct Swift {
    /// Fabric and endpoint windows, in packets (fractional).
    fcwnd: f64,
    ecwnd: f64,
    /// Switches on the path to the peer (what the paper reads from the TTL).
    pub hops: u32,
    t_last_decrease: Option<SimTime>,
    retransmit_cnt: u32,
    /// The last RTT sample: the "rtt" of Algorithm 1's once-per-RTT rule and pacing.
    rtt: Dur,
}

impl Swift {
    pub fn new(initial_cwnd: f64, hops: u32, p: &SwiftParams) -> Swift {
        let w = initial_cwnd.clamp(p.min_cwnd, p.max_cwnd);
        Swift {
            fcwnd: w,
            ecwnd: p.max_cwnd,
            hops,
            t_last_decrease: None,
            retransmit_cnt: 0,
            rtt: Dur::ZERO,
        }
    }

    /// The connection is established with an initial window of `iw` packets.
    pub fn init(&mut self, iw: f64, p: &SwiftParams) {
        self.fcwnd = iw.clamp(p.min_cwnd, p.max_cwnd);
    }

    /// The effective window in packets: min(fcwnd, ecwnd).
    pub fn cwnd(&self) -> f64 {
        self.fcwnd.min(self.ecwnd)
    }

    pub fn fabric_cwnd(&self) -> f64 {
        self.fcwnd
    }

    /// What may be in flight, in bytes: the window, but at least one
    /// segment (below one packet Swift paces instead: `paced_until`).
    pub fn window_bytes(&self, mss: u64) -> u64 {
        ((self.cwnd() * mss as f64) as u64).max(mss)
    }

    /// Below one packet, the window is a rate, one packet per rtt/cwnd: the
    /// time before which no packet may follow one sent at `last_sent`.
    pub fn paced_until(&self, last_sent: Option<SimTime>) -> Option<SimTime> {
        let w = self.cwnd();
        let last = last_sent.filter(|_| w < 1.0)?;
        Some(last + Dur((self.rtt.ps() as f64 / w) as u64))
    }

    fn can_decrease(&self, now: SimTime) -> bool {
        self.t_last_decrease
            .is_none_or(|t| now.since(t) >= self.rtt)
    }

    /// Algorithm 1 for one window: additive increase below `target`,
    /// otherwise a decrease proportional to the excess, if allowed.
    fn aimd(
        w: f64,
        delay: Dur,
        target: Dur,
        acked: f64,
        can_decrease: bool,
        p: &SwiftParams,
    ) -> f64 {
        if delay < target {
            if w >= 1.0 {
                w + p.ai / w * acked
            } else {
                w + p.ai * acked
            }
        } else if can_decrease {
            let excess = (delay.ps() - target.ps()) as f64 / delay.ps() as f64;
            w * (1.0 - p.beta * excess).max(1.0 - p.max_mdf)
        } else {
            w
        }
    }

    /// An ACK that acknowledged `acked` packets of new data, with its RTT
    /// and the part of it the receiver held the packet (the endpoint delay).
    pub fn on_ack(&mut self, now: SimTime, rtt: Dur, endpoint: Dur, acked: f64, p: &SwiftParams) {
        let before = self.cwnd();
        let can_decrease = self.can_decrease(now);
        self.rtt = rtt;
        self.retransmit_cnt = 0;
        let fabric = Dur(rtt.ps().saturating_sub(endpoint.ps()));
        let target = p.fabric_target(self.fcwnd, self.hops);
        self.fcwnd = Self::aimd(self.fcwnd, fabric, target, acked, can_decrease, p);
        self.ecwnd = Self::aimd(
            self.ecwnd,
            endpoint,
            p.endpoint_target,
            acked,
            can_decrease,
            p,
        );
        self.limit(now, before, p);
    }

    /// Fast recovery began (a loss found by SACK): cut by max_mdf, at most once per RTT.
    pub fn on_fast_recovery(&mut self, now: SimTime, p: &SwiftParams) {
        let before = self.cwnd();
        self.retransmit_cnt = 0;
        if self.can_decrease(now) {
            self.fcwnd *= 1.0 - p.max_mdf;
        }
        self.limit(now, before, p);
    }

    /// A retransmission timeout: cut by max_mdf, or to the minimum after
    /// `retx_reset` timeouts in a row.
    pub fn on_timeout(&mut self, now: SimTime, p: &SwiftParams) {
        let before = self.cwnd();
        self.retransmit_cnt += 1;
        if self.retransmit_cnt >= p.retx_reset {
            self.fcwnd = p.min_cwnd;
        } else if self.can_decrease(now) {
            self.fcwnd *= 1.0 - p.max_mdf;
        }
        self.limit(now, before, p);
    }

    /// Clamp both windows; a smaller effective window starts the next
    /// once-per-RTT interval.
    fn limit(&mut self, now: SimTime, before: f64, p: &SwiftParams) {
        self.fcwnd = self.fcwnd.clamp(p.min_cwnd, p.max_cwnd);
        self.ecwnd = self.ecwnd.clamp(p.min_cwnd, p.max_cwnd);
        if self.cwnd() < before {
            self.t_last_decrease = Some(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// htsim's and isekai's defaults where they agree (docs/models/swift.md).
    fn params() -> SwiftParams {
        SwiftParams {
            base_target: Dur::from_us(20),
            per_hop: Dur::from_us(1),
            fs_range: Dur::from_us(100),
            fs_min_cwnd: 0.1,
            fs_max_cwnd: 100.0,
            endpoint_target: Dur::from_us(20),
            ai: 1.0,
            beta: 0.8,
            max_mdf: 0.5,
            min_cwnd: 0.001,
            max_cwnd: 1000.0,
            retx_reset: 5,
        }
    }
    fn us(x: u64) -> SimTime {
        SimTime(Dur::from_us(x).ps())
    }

    #[test]
    fn the_flow_term_spans_fs_range_between_fs_min_and_fs_max_cwnd() {
        let p = params();
        let hops = |w, h| p.fabric_target(w, h).ps() as f64 / 1e6; // µs
        assert!(
            (hops(0.1, 0) - 120.0).abs() < 1e-6,
            "fs_range at fs_min_cwnd"
        );
        assert!(
            (hops(0.01, 0) - 120.0).abs() < 1e-6,
            "clamped below fs_min_cwnd"
        );
        assert!(
            (hops(100.0, 0) - 20.0).abs() < 1e-6,
            "nothing at fs_max_cwnd"
        );
        assert!(
            (hops(400.0, 3) - 23.0).abs() < 1e-6,
            "above it only base and hops"
        );
        // In between, 1/√cwnd: α = 100 / (√10 − 0.1) = 32.66 µs, β = −3.266 µs.
        assert!((hops(1.0, 0) - (20.0 + 32.660 - 3.266)).abs() < 0.01);
    }

    #[test]
    fn below_target_the_window_grows_by_ai_per_window_of_acks() {
        let p = params();
        let mut s = Swift::new(10.0, 2, &p);
        for k in 0..10 {
            s.on_ack(us(10 + k), Dur::from_us(10), Dur::ZERO, 1.0, &p);
        }
        assert!((s.cwnd() - 11.0).abs() < 0.05, "{}", s.cwnd());
        // Below one packet, ai per packet acknowledged.
        let mut s = Swift::new(0.2, 2, &p);
        s.on_ack(us(10), Dur::from_us(10), Dur::ZERO, 0.5, &p);
        assert!((s.cwnd() - 0.7).abs() < 1e-9);
    }

    #[test]
    fn above_target_the_cut_follows_the_excess_bounded_by_max_mdf_once_per_rtt() {
        let p = params();
        let mut s = Swift::new(100.0, 0, &p);
        // Target at 100 packets is the base, 20 µs; 25 µs is 20 % over:
        // × (1 − 0.8·5/25) = 0.84.
        s.on_ack(us(100), Dur::from_us(25), Dur::ZERO, 1.0, &p);
        assert!((s.cwnd() - 84.0).abs() < 1e-9);
        // Within one RTT (25 µs) of that cut: no second one.
        s.on_ack(us(110), Dur::from_us(500), Dur::ZERO, 1.0, &p);
        assert!((s.cwnd() - 84.0).abs() < 1e-9);
        // One RTT after it (the last sample, 500 µs), a huge delay cuts by max_mdf at most.
        s.on_ack(us(600), Dur::from_us(500), Dur::ZERO, 1.0, &p);
        assert!((s.cwnd() - 42.0).abs() < 1e-9);
    }

    #[test]
    fn the_endpoint_window_reacts_to_the_hold_and_the_fabric_one_does_not() {
        let p = params();
        let mut s = Swift::new(100.0, 0, &p);
        // RTT 60 µs of which the receiver held 50: fabric 10 µs is below its
        // target, the endpoint's 50 µs is above its 20 µs.
        s.on_ack(us(100), Dur::from_us(60), Dur::from_us(50), 1.0, &p);
        assert!(s.fabric_cwnd() > 100.0);
        assert!(
            (s.ecwnd - 1000.0 * 0.52).abs() < 1e-6,
            "ecwnd × (1 − 0.8·30/50)"
        );
        assert_eq!(s.cwnd(), s.fabric_cwnd(), "the smaller window binds");
    }

    #[test]
    fn timeouts_cut_then_reset_to_the_minimum_and_a_sub_packet_window_paces() {
        let p = params();
        let mut s = Swift::new(8.0, 0, &p);
        s.on_ack(us(0), Dur::from_us(10), Dur::ZERO, 0.0, &p);
        s.on_timeout(us(1_000), &p);
        assert!((s.cwnd() - 4.0).abs() < 1e-9);
        for k in 2..=5 {
            s.on_timeout(us(1_000 * k), &p);
        }
        assert_eq!(s.cwnd(), p.min_cwnd, "the fifth timeout in a row");
        // 0.001 packets over a 10 µs RTT: one packet per 10 ms, one
        // segment in flight while paced.
        assert_eq!(s.paced_until(Some(us(6_000))), Some(us(16_000)));
        assert_eq!(s.paced_until(None), None, "nothing sent yet");
        assert_eq!(s.window_bytes(1000), 1000);
        let mut fast = Swift::new(2.0, 0, &p);
        fast.on_ack(us(0), Dur::from_us(10), Dur::ZERO, 0.0, &p);
        assert_eq!(fast.paced_until(Some(us(6_000))), None, "two packets are a window");
    }
}
