//! Dequeue-side AQMs that judge a packet by its sojourn time (the time
//! from entering the queue to leaving it): TCN, ECN# and CoDel.
//!
//! Each sees every packet as it leaves the queue, with its sojourn time and
//! the bytes still queued behind it, and answers pass, mark or drop. They
//! mark only ECN-capable packets. TCN and ECN# never drop; CoDel in drop
//! mode drops. Sources: seed 003 (ECN#) and reference mechanisms.md §2 (the
//! public ns-3 code of TCN, ECN# and its CoDel); CoDel: RFC 8289 and Linux's
//! `codel_impl.h`. See docs/models/aqm.md.

use crate::aqm::Verdict;
use crate::config::{CodelCfg, EcnSharpCfg, RedAction};
use dcsim_engine::{Dur, SimTime};

/// TCN (Bai et al., CoNEXT 2016; reference §2.1): mark when the sojourn time
/// is above the threshold. No state.
pub struct Tcn {
    pub threshold: Dur,
}

impl Tcn {
    #[inline]
    pub fn on_dequeue(&self, sojourn: Dur) -> Verdict {
        if sojourn > self.threshold {
            Verdict::Mark
        } else {
            Verdict::Enqueue
        }
    }
}

/// Whether sojourn times have stayed at or above a target for longer than
/// an interval, the test ECN# and CoDel share: the first packet at or above
/// target starts the clock; any packet below it (or exempt) stops it.
struct AboveTarget {
    target: Dur,
    interval: Dur,
    /// When the interval will have passed (None: below target).
    first_above: Option<SimTime>,
}

impl AboveTarget {
    fn new(target: Dur, interval: Dur) -> AboveTarget {
        AboveTarget { target, interval, first_above: None }
    }

    fn persistent(&mut self, now: SimTime, sojourn: Dur, exempt: bool) -> bool {
        if sojourn < self.target || exempt {
            self.first_above = None;
            return false;
        }
        match self.first_above {
            None => {
                self.first_above = Some(now + self.interval);
                false
            }
            Some(t) => now > t,
        }
    }
}

/// ECN# (seed 003; reference §2.2): TCN's instantaneous marking, plus
/// conservative marking of a persistent queue. A queue is persistent once
/// every sojourn time has stayed at or above `target` for longer than
/// `interval`; then one packet is marked at once, the next after
/// `interval`, then after interval/√2, interval/√3, ... (each spacing
/// measured from the mark before), while it stays persistent. The count
/// restarts with every episode; the state changes only at dequeues.
pub struct EcnSharp {
    instantaneous: Dur,
    interval: Dur,
    above: AboveTarget,
    marking: bool,
    mark_next: SimTime,
    count: u32,
}

impl EcnSharp {
    pub fn new(c: &EcnSharpCfg) -> EcnSharp {
        EcnSharp {
            instantaneous: c.instantaneous.0,
            interval: c.interval.0,
            above: AboveTarget::new(c.target.0, c.interval.0),
            marking: false,
            mark_next: SimTime::ZERO,
            count: 0,
        }
    }

    pub fn on_dequeue(&mut self, now: SimTime, sojourn: Dur) -> Verdict {
        let instantaneous = sojourn > self.instantaneous;
        let persistent = self.above.persistent(now, sojourn, false);
        let mut mark = false;
        if self.marking {
            if !persistent {
                self.marking = false;
            } else if now >= self.mark_next {
                self.count += 1;
                self.mark_next = now + Dur((self.interval.ps() as f64 / (self.count as f64).sqrt()) as u64);
                mark = true;
            }
        } else if persistent {
            self.marking = true;
            self.count = 1;
            self.mark_next = now + self.interval;
            mark = true;
        }
        if instantaneous || mark {
            Verdict::Mark
        } else {
            Verdict::Enqueue
        }
    }
}

/// CoDel (RFC 8289), as Linux's `codel_impl.h` runs it: the control law
/// next = t + interval / √count with Linux's fixed-point Newton step for
/// 1/√count, the count carried over from a recent episode, and the
/// queue-below-one-MTU exemption. Mark mode marks ECN-capable packets where
/// drop mode drops (and still drops the others), as Linux's `ecn` flag.
///
/// A port asks about one packet at a time: after a drop it dequeues the next
/// packet at the same instant and asks again, which is Linux's loop.
pub struct Codel {
    interval: Dur,
    above: AboveTarget,
    /// The queue-below-one-MTU exemption, in bytes.
    min_bytes: u64,
    mark: bool,
    dropping: bool,
    drop_next: SimTime,
    count: u32,
    last_count: u32,
    /// 1/√count as a 16-bit fixed-point fraction (Linux's rec_inv_sqrt).
    rec_inv_sqrt: u16,
    /// What the previous answer left for the packet after it (a drop
    /// continues Linux's dequeue loop on the next packet).
    after: After,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum After {
    Nothing,
    /// A drop in the dropping state: Linux checks the next packet and, if
    /// still bad, schedules the next drop and keeps looping.
    DropWhileDropping,
    /// A drop on entering the dropping state: the next packet is returned
    /// as it is (only its sojourn is looked at).
    DropOnEntry,
}

const REC_INV_SQRT_BITS: u32 = 16;

impl Codel {
    pub fn new(c: &CodelCfg) -> Codel {
        Codel {
            interval: c.interval.0,
            above: AboveTarget::new(c.target.0, c.interval.0),
            min_bytes: c.min_bytes.0,
            mark: c.action == RedAction::Mark,
            dropping: false,
            drop_next: SimTime::ZERO,
            count: 0,
            last_count: 0,
            rec_inv_sqrt: u16::MAX,
            after: After::Nothing,
        }
    }

    /// One Newton iteration of rec_inv_sqrt towards 1/√count:
    /// x ← x (3 − count·x²) / 2, in 32-bit fixed point.
    fn newton_step(&mut self) {
        let x = (self.rec_inv_sqrt as u64) << (32 - REC_INV_SQRT_BITS);
        let x2 = (x * x) >> 32;
        let val = ((3u64 << 32).wrapping_sub(self.count as u64 * x2)) >> 2;
        let val = (val * x) >> (32 - 2 + 1);
        self.rec_inv_sqrt = (val >> (32 - REC_INV_SQRT_BITS)) as u16;
    }

    /// t + interval / √count.
    fn control_law(&self, t: SimTime) -> SimTime {
        let scale = (self.rec_inv_sqrt as u128) << (32 - REC_INV_SQRT_BITS);
        t + Dur(((self.interval.ps() as u128 * scale) >> 32) as u64)
    }

    /// The packet leaving now waited `sojourn`; `backlog` bytes stay behind it.
    pub fn on_dequeue(&mut self, now: SimTime, sojourn: Dur, backlog: u64, ect: bool) -> Verdict {
        // Linux's codel_should_drop: above target for an interval, with more than one MTU queued.
        let ok = self.above.persistent(now, sojourn, backlog <= self.min_bytes);
        match std::mem::replace(&mut self.after, After::Nothing) {
            After::DropOnEntry => return Verdict::Enqueue,
            After::DropWhileDropping => {
                if !ok {
                    self.dropping = false;
                    return Verdict::Enqueue;
                }
                self.drop_next = self.control_law(self.drop_next);
                return self.drop_if_due(now, ect);
            }
            After::Nothing => {}
        }
        if self.dropping {
            if !ok {
                self.dropping = false;
                return Verdict::Enqueue;
            }
            return self.drop_if_due(now, ect);
        }
        if !ok {
            return Verdict::Enqueue;
        }
        // Enter the dropping state; reuse a recent episode's count.
        let verdict = if self.mark && ect {
            Verdict::Mark
        } else {
            self.after = After::DropOnEntry;
            Verdict::Drop
        };
        self.dropping = true;
        let delta = self.count.wrapping_sub(self.last_count);
        let recent = now < self.drop_next || now.since(self.drop_next) < Dur(16 * self.interval.ps());
        if delta > 1 && recent {
            self.count = delta;
            self.newton_step();
        } else {
            self.count = 1;
            self.rec_inv_sqrt = u16::MAX;
        }
        self.last_count = self.count;
        self.drop_next = self.control_law(now);
        verdict
    }

    /// In the dropping state: act if the next drop is due.
    fn drop_if_due(&mut self, now: SimTime, ect: bool) -> Verdict {
        if now < self.drop_next {
            return Verdict::Enqueue;
        }
        self.count = self.count.wrapping_add(1);
        self.newton_step();
        if self.mark && ect {
            self.drop_next = self.control_law(self.drop_next);
            return Verdict::Mark;
        }
        self.after = After::DropWhileDropping;
        Verdict::Drop
    }

    /// The queue is empty: Linux leaves the dropping state (and forgets
    /// when the sojourn time went above target).
    pub fn on_empty(&mut self) {
        self.dropping = false;
        self.above.first_above = None;
        self.after = After::Nothing;
    }

    pub fn count(&self) -> u32 {
        self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{CodelCfg, EcnSharpCfg};
    use crate::units::{Bytes, DurV};

    fn us(x: u64) -> Dur {
        Dur::from_us(x)
    }
    fn at(x: u64) -> SimTime {
        SimTime::ZERO + us(x)
    }

    #[test]
    fn tcn_marks_strictly_above_its_threshold() {
        let t = Tcn { threshold: us(10) };
        assert_eq!(t.on_dequeue(us(10)), Verdict::Enqueue);
        assert_eq!(t.on_dequeue(us(10) + Dur(1)), Verdict::Mark);
    }

    #[test]
    fn ecn_sharp_marks_a_persistent_queue_at_entry_then_at_shrinking_spacings() {
        let cfg = EcnSharpCfg { instantaneous: DurV(us(1000)), target: DurV(us(10)), interval: DurV(us(100)) };
        let mut e = EcnSharp::new(&cfg);
        // A 20 us sojourn every microsecond: above target, below the instantaneous threshold.
        let marks: Vec<u64> = (0..400).filter(|&t| e.on_dequeue(at(t), us(20)) == Verdict::Mark).collect();
        // Above target from t = 0; persistent once t > 100: entry mark at 101,
        // then 201 (a full interval), then + 100/√2 = 271.7 -> 272, then + 100/√3 = 329.7 -> 330, + 50 -> 380.
        assert_eq!(marks, [101, 201, 272, 330, 380]);
        // Falling below target ends the episode; the count restarts with the next one.
        assert_eq!(e.on_dequeue(at(400), us(5)), Verdict::Enqueue);
        let again: Vec<u64> = (401..700).filter(|&t| e.on_dequeue(at(t), us(20)) == Verdict::Mark).collect();
        assert_eq!(&again[..2], [502, 602]);
        // Instantaneous marking is independent of the state: every packet above it.
        assert_eq!(e.on_dequeue(at(700), us(1001)), Verdict::Mark);
    }

    fn codel(action: RedAction) -> Codel {
        Codel::new(&CodelCfg { target: DurV(us(10)), interval: DurV(us(100)), min_bytes: Bytes(1500), action })
    }

    #[test]
    fn codel_newton_step_is_linuxs_one_step_per_count() {
        // One Newton step per increment from 1.0, as Linux: 0.5 at count 2
        // (not 0.707), 0.5625 at 3, 0.488 at 4, then within 2 % of 1/√count
        // from count 10 on (CAKE later tabulated small counts for this reason).
        let mut c = codel(RedAction::Drop);
        let mut got = vec![];
        for n in 2..=60u32 {
            c.count = n;
            c.newton_step();
            got.push(c.rec_inv_sqrt as f64 / 65536.0);
        }
        assert!((got[0] - 0.5).abs() < 1e-3 && (got[1] - 0.5625).abs() < 1e-3 && (got[2] - 0.4878).abs() < 1e-3, "{:?}", &got[..3]);
        for (n, g) in (2..=60u32).zip(&got).filter(|(n, _)| *n >= 10) {
            let exact = 1.0 / (n as f64).sqrt();
            assert!((g - exact).abs() / exact < 0.02, "count {n}: {g} vs {exact}");
        }
    }

    #[test]
    fn codel_marks_after_an_interval_above_target_then_faster() {
        let mut c = codel(RedAction::Mark);
        let marks: Vec<u64> = (0..600).filter(|&t| c.on_dequeue(at(t), us(20), 10_000, true) == Verdict::Mark).collect();
        // first_above = 0 + 100; marking starts once now is after it (101);
        // then drop_next = 101 + 100/√1 = 201, 201 + 100/√2, + 100/√3, ...
        // (each from the previous drop_next).
        assert_eq!(marks[0], 101);
        assert_eq!(marks[1], 201);
        // Spacings 100/x with Linux's x: 1, 0.5 (count 2), 0.5625, 0.488, ...
        let gaps: Vec<u64> = marks.windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(&gaps[..4], [100, 50, 57, 49], "{gaps:?}");
        assert!(gaps[3..].windows(2).all(|g| g[1] <= g[0]), "then they shrink: {gaps:?}");
        // Less than one MTU queued: never.
        let mut c = codel(RedAction::Mark);
        assert!((0..600).all(|t| c.on_dequeue(at(t), us(20), 1500, true) == Verdict::Enqueue));
    }

    #[test]
    fn codel_drop_mode_drops_then_checks_the_next_packet_at_once() {
        let mut c = codel(RedAction::Drop);
        for t in 0..=100 {
            assert_eq!(c.on_dequeue(at(t), us(20), 10_000, true), Verdict::Enqueue);
        }
        // Entry: this packet is dropped; the next one (same instant) passes.
        assert_eq!(c.on_dequeue(at(101), us(20), 10_000, true), Verdict::Drop);
        assert_eq!(c.on_dequeue(at(101), us(20), 10_000, true), Verdict::Enqueue);
        assert_eq!(c.count(), 1);
        // Next drop due at 201. A good packet after a drop ends the state.
        assert_eq!(c.on_dequeue(at(201), us(20), 10_000, true), Verdict::Drop);
        assert_eq!(c.on_dequeue(at(201), us(5), 10_000, true), Verdict::Enqueue);
        assert!(!c.dropping);
        // Mark mode still drops packets that are not ECN-capable.
        let mut m = codel(RedAction::Mark);
        for t in 0..=100 {
            m.on_dequeue(at(t), us(20), 10_000, false);
        }
        assert_eq!(m.on_dequeue(at(101), us(20), 10_000, false), Verdict::Drop);
    }
}
