//! Active queue management: decides, for an arriving packet, whether it is
//! queued as is, queued with CE set, or dropped; the sojourn-time AQMs
//! (crate::sojourn) decide the same as a packet leaves the queue. An AQM
//! never owns the FIFO or the counters; the [`crate::port::Port`] does.

use crate::config::{Aqm as AqmCfg, DctcpStep, MarkAt, RedAction, RedCfg, RedSpacing};
use crate::sojourn::{Codel, EcnSharp, Tcn};
use crate::units::QSize;
use dcsim_engine::{Dur, Rng, SimTime};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Enqueue,
    Mark,
    Drop,
}

/// What the AQM sees of the queue when a packet arrives (the packet itself
/// not yet counted).
#[derive(Clone, Copy, Debug)]
pub struct QueueView {
    pub packets: u64,
    pub bytes: u64,
}

impl QueueView {
    fn in_unit(self, q: QSize) -> (u64, u64) {
        match q {
            QSize::Packets(n) => (self.packets, n),
            QSize::Bytes(n) => (self.bytes, n),
        }
    }
}

/// DCTCP's step: mark an ECT packet when the queue holds at least `k`.
#[inline]
fn step(q: QueueView, k: QSize, ect: bool) -> Verdict {
    let (len, k) = q.in_unit(k);
    if ect && len >= k {
        Verdict::Mark
    } else {
        Verdict::Enqueue
    }
}

pub enum Aqm {
    DropTail,
    /// DCTCP step marking (RFC 8257 §3.1; as in the ns-2 DCTCP patch, RED with
    /// q_weight 1 and min = max = K): mark CE on an ECT packet when the queue
    /// it finds on arrival holds at least K. Non-ECT packets are not dropped
    /// by the marker (they are subject to tail drop only). At dequeue: when
    /// at least K bytes wait behind the departing packet.
    Step { k: QSize, at_dequeue: bool },
    Red(Red),
    /// Sojourn-time AQMs: they act at dequeue only.
    Tcn(Tcn),
    EcnSharp(EcnSharp),
    Codel(Codel),
}

impl Aqm {
    pub fn new(cfg: &AqmCfg, mean_tx_time: Dur, rng: Rng) -> Aqm {
        match cfg {
            AqmCfg::Droptail => Aqm::DropTail,
            AqmCfg::Dctcp(DctcpStep { k, at, .. }) => Aqm::Step { k: *k, at_dequeue: *at == MarkAt::Dequeue },
            AqmCfg::Red(RedCfg { min_th, max_th, max_p, weight, gentle, action, spacing, at, .. }) => {
                let (min, max) = match (min_th, max_th) {
                    (QSize::Packets(a), QSize::Packets(b)) | (QSize::Bytes(a), QSize::Bytes(b)) => (*a as f64, *b as f64),
                    _ => unreachable!("validated: same unit"),
                };
                Aqm::Red(Red {
                    bytes: matches!(min_th, QSize::Bytes(_)),
                    min,
                    max,
                    max_p: *max_p,
                    weight: *weight,
                    gentle: *gentle,
                    action: *action,
                    counted: *spacing == RedSpacing::Count,
                    at_dequeue: *at == MarkAt::Dequeue,
                    avg: 0.0,
                    count: -1,
                    idle_since: Some(SimTime::ZERO),
                    mean_tx_time,
                    rng,
                })
            }
            AqmCfg::Tcn(t) => Aqm::Tcn(Tcn { threshold: t.threshold.0 }),
            AqmCfg::EcnSharp(e) => Aqm::EcnSharp(EcnSharp::new(e)),
            AqmCfg::Codel(c) => Aqm::Codel(Codel::new(c)),
        }
    }

    #[inline]
    pub fn on_enqueue(&mut self, now: SimTime, q: QueueView, ect: bool) -> Verdict {
        match self {
            Aqm::DropTail => Verdict::Enqueue,
            Aqm::Step { k, at_dequeue: false } => step(q, *k, ect),
            Aqm::Red(red) if !red.at_dequeue => red.on_enqueue(now, q, ect),
            Aqm::Step { .. } | Aqm::Red(_) | Aqm::Tcn(_) | Aqm::EcnSharp(_) | Aqm::Codel(_) => Verdict::Enqueue,
        }
    }

    /// A packet leaves the queue after waiting `sojourn`, `backlog` bytes
    /// behind it. Only the sojourn-time AQMs act here; they mark only
    /// ECN-capable packets, and only CoDel drops.
    #[inline]
    pub fn on_dequeue(&mut self, now: SimTime, sojourn: Dur, backlog: u64, ect: bool) -> Verdict {
        let v = match self {
            Aqm::Tcn(t) => t.on_dequeue(sojourn),
            Aqm::EcnSharp(e) => e.on_dequeue(now, sojourn),
            Aqm::Codel(c) => return c.on_dequeue(now, sojourn, backlog, ect),
            // RED at dequeue: the bytes behind the departing packet.
            Aqm::Red(red) if red.at_dequeue => return red.on_enqueue(now, QueueView { packets: 0, bytes: backlog }, ect),
            Aqm::Step { k, at_dequeue: true } => return step(QueueView { packets: 0, bytes: backlog }, *k, ect),
            Aqm::DropTail | Aqm::Step { .. } | Aqm::Red(_) => return Verdict::Enqueue,
        };
        if v == Verdict::Mark && !ect {
            Verdict::Enqueue
        } else {
            v
        }
    }

    /// Whether this AQM acts at dequeue (the port then asks it about every departure).
    pub fn at_dequeue(&self) -> bool {
        match self {
            Aqm::Red(red) => red.at_dequeue,
            Aqm::Step { at_dequeue, .. } => *at_dequeue,
            _ => matches!(self, Aqm::Tcn(_) | Aqm::EcnSharp(_) | Aqm::Codel(_)),
        }
    }

    /// The queue became empty at `now` (RED's idle-time correction).
    #[inline]
    pub fn on_idle(&mut self, now: SimTime) {
        match self {
            Aqm::Red(red) => red.idle_since = Some(now),
            Aqm::Codel(c) => c.on_empty(),
            _ => {}
        }
    }

    /// RED's average queue estimate (for tests and traces).
    pub fn red_avg(&self) -> Option<f64> {
        match self {
            Aqm::Red(r) => Some(r.avg),
            _ => None,
        }
    }
}

/// Random Early Detection, S. Floyd and V. Jacobson, "Random Early Detection
/// Gateways for Congestion Avoidance", IEEE/ACM ToN 1993, §4 (with "gentle"
/// from Floyd's 2000 note and ECN marking per RFC 3168 §7).
pub struct Red {
    bytes: bool,
    min: f64,
    max: f64,
    max_p: f64,
    weight: f64,
    gentle: bool,
    action: RedAction,
    /// Spaced by `count` (the paper's p_a), or each packet independently with p_b.
    counted: bool,
    /// Judged as packets leave, by the bytes behind them.
    at_dequeue: bool,
    avg: f64,
    /// Packets since the last mark/drop (-1 below min_th), as in the paper.
    count: i64,
    idle_since: Option<SimTime>,
    /// Transmission time of a typical (full-sized) packet, for idle decay.
    mean_tx_time: Dur,
    rng: Rng,
}

impl Red {
    fn on_enqueue(&mut self, now: SimTime, q: QueueView, ect: bool) -> Verdict {
        let qlen = if self.bytes { q.bytes as f64 } else { q.packets as f64 };
        match self.idle_since.take() {
            Some(t0) if qlen == 0.0 => {
                // The queue was idle: decay avg as if m small packets had been
                // served during the idle time.
                let m = now.since(t0).ps() as f64 / self.mean_tx_time.ps().max(1) as f64;
                self.avg *= (1.0 - self.weight).powf(m);
            }
            _ => self.avg += self.weight * (qlen - self.avg),
        }
        let avg = self.avg;
        let forced = if self.gentle { avg >= 2.0 * self.max } else { avg >= self.max };
        let congest = if forced {
            self.count = 0;
            true
        } else if avg >= self.min {
            self.count += 1;
            let pb = if avg < self.max {
                self.max_p * (avg - self.min) / (self.max - self.min)
            } else {
                // gentle region between max_th and 2*max_th
                self.max_p + (1.0 - self.max_p) * (avg - self.max) / self.max
            };
            let denom = 1.0 - self.count as f64 * pb;
            let pa = if !self.counted {
                pb
            } else if denom <= 0.0 {
                1.0
            } else {
                (pb / denom).min(1.0)
            };
            if self.rng.next_f64() < pa {
                self.count = 0;
                true
            } else {
                false
            }
        } else {
            self.count = -1;
            false
        };
        if !congest {
            Verdict::Enqueue
        } else if self.action == RedAction::Mark && ect {
            Verdict::Mark
        } else {
            Verdict::Drop
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dcsim_engine::StreamId;

    #[test]
    fn step_marks_at_k_and_only_ect() {
        let mut a = Aqm::new(&AqmCfg::Dctcp(DctcpStep { k: QSize::Packets(65), at: MarkAt::Enqueue, per: None }), Dur::ZERO, Rng::from_seed_u64(1));
        let q = |p| QueueView { packets: p, bytes: p * 1500 };
        assert_eq!(a.on_enqueue(SimTime(0), q(64), true), Verdict::Enqueue);
        assert_eq!(a.on_enqueue(SimTime(0), q(65), true), Verdict::Mark);
        assert_eq!(a.on_enqueue(SimTime(0), q(65), false), Verdict::Enqueue);
    }

    #[test]
    fn red_at_dequeue_judges_the_bytes_behind_and_independent_marks_follow_p() {
        let cfg = AqmCfg::Red(RedCfg { min_th: QSize::Bytes(5000), max_th: QSize::Bytes(200_000), max_p: 0.01, weight: 1.0, gentle: false, action: RedAction::Mark, spacing: RedSpacing::Independent, at: MarkAt::Dequeue, per: None });
        let mut a = Aqm::new(&cfg, Dur::ZERO, Rng::from_seed_u64(3));
        assert!(a.at_dequeue());
        assert_eq!(a.on_enqueue(SimTime(0), QueueView { packets: 500, bytes: 750_000 }, true), Verdict::Enqueue, "nothing at enqueue");
        assert_eq!(a.on_dequeue(SimTime(0), Dur::ZERO, 250_000, true), Verdict::Mark, "above Kmax behind it");
        assert_eq!(a.on_dequeue(SimTime(0), Dur::ZERO, 4_000, true), Verdict::Enqueue, "below Kmin");
        // Half-way (102.5 KB): p = 0.5 %, each packet on its own.
        let marks = (0..100_000).filter(|_| a.on_dequeue(SimTime(0), Dur::ZERO, 102_500, true) == Verdict::Mark).count();
        assert!((400..600).contains(&marks), "{marks} of 100000 at p = 0.005");
    }

    #[test]
    fn red_average_follows_ewma_and_marks_between_thresholds() {
        let cfg = AqmCfg::Red(RedCfg { min_th: QSize::Packets(5), max_th: QSize::Packets(15), max_p: 0.1, weight: 0.5, gentle: false, action: RedAction::Mark, spacing: RedSpacing::Count, at: MarkAt::Enqueue, per: None });
        let mut a = Aqm::new(&cfg, Dur::from_ns(1200), Rng::stream(1, StreamId { kind: 0, index: 0 }));
        let q = |p| QueueView { packets: p, bytes: p * 1500 };
        // avg: 0 -> 5 -> 7.5 -> ... converging to 10 (half-way): some marks, some not.
        a.on_enqueue(SimTime(1), q(10), true);
        assert!((a.red_avg().unwrap() - 5.0).abs() < 1e-12);
        let mut marks = 0;
        for _ in 0..1000 {
            if a.on_enqueue(SimTime(1), q(10), true) == Verdict::Mark {
                marks += 1;
            }
        }
        // pb = 0.05 with count spreading: between 1/20 and 2/20 of arrivals.
        assert!((40..=110).contains(&marks), "marks = {marks}");
        // Above max_th everything is marked; a non-ECT packet is dropped.
        for _ in 0..20 {
            a.on_enqueue(SimTime(1), q(40), true);
        }
        assert_eq!(a.on_enqueue(SimTime(1), q(40), true), Verdict::Mark);
        assert_eq!(a.on_enqueue(SimTime(1), q(40), false), Verdict::Drop);
    }

    #[test]
    fn red_idle_time_decays_the_average() {
        let cfg = AqmCfg::Red(RedCfg { min_th: QSize::Packets(5), max_th: QSize::Packets(15), max_p: 0.1, weight: 0.1, gentle: true, action: RedAction::Drop, spacing: RedSpacing::Count, at: MarkAt::Enqueue, per: None });
        let mut a = Aqm::new(&cfg, Dur::from_ns(1000), Rng::from_seed_u64(1));
        for _ in 0..100 {
            a.on_enqueue(SimTime(0), QueueView { packets: 10, bytes: 0 }, true);
        }
        let before = a.red_avg().unwrap();
        a.on_idle(SimTime(0));
        // 10 packet-times idle: avg *= 0.9^10.
        a.on_enqueue(SimTime(10_000_000), QueueView { packets: 0, bytes: 0 }, true);
        assert!((a.red_avg().unwrap() - before * 0.9f64.powi(10)).abs() < 1e-9);
    }
}
