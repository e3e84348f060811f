//! HPCC: High Precision Congestion Control. Li, Miao, Liu, Zhuang, Feng,
//! Tang, Cao, Zhang, Kong, Zhou, Zhang, Yu, Liu, Alizadeh, "HPCC: High
//! Precision Congestion Control", SIGCOMM 2019, §3 (in-network telemetry,
//! the inflight-based window) and Algorithm 1. See docs/models/hpcc.md.
//!
//! Every switch egress port stamps a data packet with its INT record (the
//! time, its queue, its bytes sent, its rate); the receiver echoes the
//! records in its ACK. On each ACK the sender estimates each link's
//! normalised inflight bytes, u = qlen / (B T) + txRate / B, takes the
//! largest, smooths it over the time its records span, and sets the window
//! W = W_c / (U / eta) + W_AI, or W = W_c + W_AI for up to maxStage
//! updates while U is below eta. The reference window W_c moves only once
//! per RTT (when the ACK passes the sequence sent at the last move); every
//! ACK in between reacts from it. The rate is W / T.

use crate::config::HpccCfg;

/// INT records a packet can carry at most (the config's `max_hops` ≤ this).
pub const MAX_HOPS: usize = 16;

/// One switch egress port's INT record.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IntHop {
    /// When the packet left the port (ps).
    pub ts: u64,
    /// Bytes waiting at the port then.
    pub qlen: u64,
    /// Bytes the port had sent by then.
    pub tx_bytes: u64,
    /// The port's rate (b/s).
    pub rate: u64,
}

/// The records a packet carries, first hop first.
#[derive(Clone, Copy, Debug, Default)]
pub struct IntStack {
    pub n: u8,
    pub hops: [IntHop; MAX_HOPS],
}

impl IntStack {
    /// Append a record unless the header is full (`max` records).
    #[inline]
    pub fn push(&mut self, hop: IntHop, max: u8) {
        if self.n < max {
            self.hops[self.n as usize] = hop;
            self.n += 1;
        }
    }
}

pub struct Hpcc {
    eta: f64,
    max_stage: u32,
    ai: f64,
    min_rate: f64,
    line_rate: f64,
    /// The base RTT T (s).
    t: f64,
    /// The records of the last ACK, per hop.
    last: IntStack,
    seen: bool,
    /// The smoothed normalised inflight U.
    pub u: f64,
    /// The reference rate W_c / T and the additive stages since the last multiplicative update.
    pub rc: f64,
    inc_stage: u32,
    last_update_seq: u64,
    pub rate: f64,
    pub decreases: u64,
}

impl Hpcc {
    pub fn new(cfg: &HpccCfg, line_rate: f64, base_rtt: f64) -> Hpcc {
        Hpcc {
            eta: cfg.eta,
            max_stage: cfg.max_stage,
            ai: cfg.ai.0.bps as f64,
            min_rate: cfg.min_rate.0.bps as f64,
            line_rate,
            t: base_rtt,
            last: IntStack::default(),
            seen: false,
            u: 1.0,
            rc: line_rate,
            inc_stage: 0,
            last_update_seq: 0,
            rate: line_rate,
            decreases: 0,
        }
    }

    /// The window for the current rate (bytes): W = R T.
    pub fn window(&self) -> u64 {
        (self.rate * self.t / 8.0).ceil() as u64
    }

    /// An ACK for bytes before `ack` with the records `int`, when the
    /// sender has sent up to `snd_nxt`. Returns the new rate.
    pub fn on_ack(&mut self, ack: u64, snd_nxt: u64, int: &IntStack) -> Option<f64> {
        if !self.seen || int.n != self.last.n {
            // The first ACK (or a new path) only gives the records to compare with.
            self.seen = true;
            self.last = *int;
            return None;
        }
        let update_rc = ack > self.last_update_seq;
        // MeasureInflight: the most loaded link, and the time its records span.
        let (mut u_max, mut tau) = (0.0f64, 0.0f64);
        for (now, prev) in int.hops[..int.n as usize].iter().zip(&self.last.hops) {
            let dt = now.ts.saturating_sub(prev.ts) as f64 * 1e-12;
            if dt <= 0.0 {
                continue;
            }
            let b = now.rate as f64;
            let tx_rate = now.tx_bytes.saturating_sub(prev.tx_bytes) as f64 * 8.0 / dt;
            let u = now.qlen.min(prev.qlen) as f64 * 8.0 / (b * self.t) + tx_rate / b;
            if u > u_max {
                u_max = u;
                tau = dt;
            }
        }
        self.last = *int;
        if tau > 0.0 {
            let tau = tau.min(self.t);
            self.u = (1.0 - tau / self.t) * self.u + tau / self.t * u_max;
        }
        // ComputeWind, as a rate (W / T).
        let multiplicative = self.u >= self.eta || self.inc_stage >= self.max_stage;
        let r = if multiplicative { self.rc / (self.u / self.eta) + self.ai } else { self.rc + self.ai };
        let r = r.clamp(self.min_rate, self.line_rate);
        if update_rc {
            self.inc_stage = if multiplicative { 0 } else { self.inc_stage + 1 };
            self.rc = r;
            self.last_update_seq = snd_nxt;
        }
        self.decreases += (r < self.rate) as u64;
        self.rate = r;
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hpcc() -> Hpcc {
        let cfg: HpccCfg = serde_json::from_str("{}").unwrap();
        Hpcc::new(&cfg, 100e9, 10e-6)
    }

    fn stack(ts_us: f64, qlen: u64, tx: u64) -> IntStack {
        let mut s = IntStack::default();
        s.push(IntHop { ts: (ts_us * 1e6) as u64, qlen, tx_bytes: tx, rate: 100_000_000_000 }, 5);
        s
    }

    #[test]
    fn an_idle_link_adds_w_ai_and_a_busy_one_cuts_to_eta() {
        let mut h = hpcc();
        assert_eq!(h.on_ack(1000, 5000, &stack(0.0, 0, 0)), None, "the first ACK primes");
        // 10 us later the link sent 62.5 KB (half its capacity) and holds a
        // queue it did not have before: u counts the smaller of the two
        // queues (0) and the rate, 0.5. Below eta: additive, from line rate.
        let r = h.on_ack(2000, 6000, &stack(10.0, 125_000, 62_500)).unwrap();
        assert!((h.u - 0.5).abs() < 1e-9, "tau = T: U = u = {}", h.u);
        assert_eq!(r, 100e9);
        // Next: full rate and a BDP of queue (125 KB) both times: u = 1 + 1 = 2.
        let r = h.on_ack(7000, 8000, &stack(20.0, 125_000, 187_500)).unwrap();
        assert!((h.u - 2.0).abs() < 1e-9, "{}", h.u);
        // Multiplicative: R = Rc / (U / eta) + AI = 100G x 0.95 / 2 + 50M.
        assert!((r - (100e9 * 0.95 / 2.0 + 50e6)).abs() < 1.0, "{r}");
    }

    #[test]
    fn the_reference_moves_once_per_rtt() {
        let mut h = hpcc();
        h.on_ack(1000, 10_000, &stack(0.0, 0, 0));
        h.on_ack(2000, 10_000, &stack(10.0, 125_000, 125_000)); // U = 2: cut, Rc moves (ack 2000 > 0)
        let rc = h.rc;
        // ACKs before snd_nxt at that update (10 000): react from Rc, do not move it.
        h.on_ack(3000, 12_000, &stack(20.0, 125_000, 250_000));
        assert_eq!(h.rc, rc);
        h.on_ack(11_000, 12_000, &stack(30.0, 125_000, 375_000));
        assert!(h.rc < rc, "past the update's snd_nxt: the reference moves");
    }
}
