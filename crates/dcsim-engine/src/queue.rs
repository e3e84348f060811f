//! The event queue: binary min-heaps keyed by `(time, sequence)`.
//!
//! The sequence number is assigned at scheduling time, so events for the same
//! instant pop in the order they were pushed. This is what makes a run
//! deterministic regardless of heap internals. Events pushed with
//! `schedule_first` come before all others of their instant.
//!
//! Events due soon (a frame's arrival, the end of its serialisation) and
//! events due later (retransmission timers, flow arrivals) live in two
//! heaps; `pop` takes the smaller of the two tops. Keys are unique, so the
//! order is exactly that of one heap, but the busy near heap stays small:
//! in a large fabric most pending events are timers.

use crate::time::SimTime;

#[derive(Clone, Copy)]
struct Entry<E> {
    /// (time << 64 | later << 63 | seq) packed so that one u128 comparison
    /// orders entries.
    key: u128,
    ev: E,
}

/// Events due at least this far ahead go to the far heap.
const FAR: u64 = 100_000_000; // 100 us in ps

/// Key bit of events pushed with `schedule`: they follow those pushed with
/// `schedule_first` for the same instant.
const LATER: u128 = 1 << 63;

/// Min-heap of events. `E` is a small `Copy` enum defined by the user.
pub struct EventQueue<E: Copy> {
    near: Heap<E>,
    far: Heap<E>,
    seq: u64,
    now: SimTime,
    popped: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { near: Heap::new(), far: Heap::new(), seq: 0, now: SimTime::ZERO, popped: 0 }
    }

    /// The time of the event being processed (or of the last one popped).
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Number of events popped so far.
    #[inline]
    pub fn events_executed(&self) -> u64 {
        self.popped
    }

    pub fn len(&self) -> usize {
        self.near.len() + self.far.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Schedule `ev` at `at`. Scheduling in the past is a logic error.
    #[inline]
    pub fn schedule(&mut self, at: SimTime, ev: E) {
        self.push(at, LATER, ev);
    }

    /// Schedule `ev` at `at`, ahead of every event `schedule`d for the same
    /// instant (and after those `schedule_first`ed before it).
    #[inline]
    pub fn schedule_first(&mut self, at: SimTime, ev: E) {
        self.push(at, 0, ev);
    }

    #[inline(always)]
    fn push(&mut self, at: SimTime, later: u128, ev: E) {
        debug_assert!(at >= self.now, "event scheduled in the past");
        let key = ((at.0 as u128) << 64) | later | self.seq as u128;
        debug_assert!(key != EMPTY);
        self.seq += 1;
        let heap = if at.0 - self.now.0 >= FAR { &mut self.far } else { &mut self.near };
        heap.push(Entry { key, ev });
    }

    /// Time of the next event, if any.
    #[inline]
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.near.settle();
        let key = self.near.min_key().min(self.far.min_key());
        (key != EMPTY).then_some(SimTime((key >> 64) as u64))
    }

    /// The next event, if any, without removing it (to prefetch its state
    /// while the current one is handled). Exact with a hole too: the next
    /// entry of a heap whose root was taken is one of the root's children.
    #[inline]
    pub fn peek(&self) -> Option<&E> {
        match (self.near.peek(), self.far.peek()) {
            (Some(a), Some(b)) => Some(if b.key < a.key { &b.ev } else { &a.ev }),
            (a, b) => a.or(b).map(|e| &e.ev),
        }
    }

    /// Remove the earliest event and advance `now` to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        self.near.settle();
        let (near, far) = (self.near.min_key(), self.far.min_key());
        let top = if far < near {
            self.far.pop()
        } else if near != EMPTY {
            self.near.take_root()
        } else {
            return None;
        };
        let t = SimTime((top.key >> 64) as u64);
        debug_assert!(t >= self.now, "time went backwards");
        self.now = t;
        self.popped += 1;
        Some((t, top.ev))
    }
}

/// The key of the slots past a heap's entries: larger than any event's.
const EMPTY: u128 = u128::MAX;

/// A binary min-heap of entries whose root may be a hole.
///
/// `pop` on the near heap only takes the root (`take_root`); the next push
/// fills the hole and sinks from there, and `settle` closes it if the next
/// pop comes first. Nearly every event schedules another (93 % of a
/// dumbbell's frame arrivals schedule the next frame on their link), so
/// this saves the push's climb and the sinking of the heap's last entry,
/// and the new entry, due soon, stops high. Sinking picks the smaller child
/// without a branch: which child is smaller is a coin flip, and a
/// mispredicted branch per level cost more than the comparisons (measured
/// in docs/benchmarks.md, 2026-11-23).
struct Heap<E> {
    /// Entries `0..n` form the heap; every slot after them has the key
    /// EMPTY, and there are at least 2n + 2 slots, so sinking needs no
    /// bounds checks: an EMPTY child stops it.
    h: Vec<Entry<E>>,
    n: usize,
    /// h[0] was taken and is waiting to be refilled.
    hole: bool,
}

impl<E: Copy> Heap<E> {
    fn new() -> Self {
        Heap { h: Vec::new(), n: 0, hole: false }
    }

    fn len(&self) -> usize {
        self.n - self.hole as usize
    }

    /// The smallest key, EMPTY if none (the heap has no hole).
    #[inline]
    fn min_key(&self) -> u128 {
        debug_assert!(!self.hole);
        self.h.first().map_or(EMPTY, |e| e.key)
    }

    /// The smallest entry; with a hole, the smaller of the root's children.
    #[inline]
    fn peek(&self) -> Option<&Entry<E>> {
        let e = if !self.hole {
            self.h.first()?
        } else {
            let (a, b) = (&self.h[1], &self.h[2]);
            if b.key < a.key { b } else { a }
        };
        (e.key != EMPTY).then_some(e)
    }

    /// Take the smallest entry, leaving a hole (the heap is not empty).
    #[inline]
    fn take_root(&mut self) -> Entry<E> {
        debug_assert!(!self.hole && self.n > 0);
        self.hole = true;
        self.h[0]
    }

    /// Close a hole with the last entry.
    #[inline]
    fn settle(&mut self) {
        if self.hole {
            self.hole = false;
            self.n -= 1;
            let last = self.h[self.n];
            self.h[self.n].key = EMPTY;
            if self.n > 0 {
                self.sift_down(last);
            }
        }
    }

    /// Put `item` at the root (a hole, or the stale root) and let it sink.
    #[inline]
    fn sift_down(&mut self, item: Entry<E>) {
        let h = &mut self.h;
        let mut i = 0;
        loop {
            // The smaller child, without a branch (EMPTY past the end).
            let l = 2 * i + 1;
            debug_assert!(i < self.n && l + 1 < h.len());
            // SAFETY: i < n (only entries, never EMPTY slots, move up), and
            // there are at least 2n + 2 slots.
            unsafe {
                let c = l + (h.get_unchecked(l + 1).key < h.get_unchecked(l).key) as usize;
                if item.key <= h.get_unchecked(c).key {
                    break;
                }
                *h.get_unchecked_mut(i) = *h.get_unchecked(c);
                i = c;
            }
        }
        h[i] = item;
    }

    #[inline]
    fn push(&mut self, item: Entry<E>) {
        if self.hole {
            self.hole = false;
            return self.sift_down(item);
        }
        if self.h.len() < 2 * self.n + 4 {
            let slots = (2 * self.h.len()).max(64);
            self.h.resize(slots, Entry { key: EMPTY, ev: item.ev });
        }
        let mut i = self.n;
        self.n += 1;
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.h[parent].key <= item.key {
                break;
            }
            self.h[i] = self.h[parent];
            i = parent;
        }
        self.h[i] = item;
    }

    /// Remove the smallest entry (the heap is not empty and has no hole).
    #[inline]
    fn pop(&mut self) -> Entry<E> {
        let top = self.take_root();
        self.settle();
        top
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Dur;

    #[test]
    fn same_time_events_pop_in_schedule_order() {
        let mut q = EventQueue::new();
        for i in 0..100u32 {
            q.schedule(SimTime(5), i);
        }
        q.schedule(SimTime(1), 1000);
        assert_eq!(q.pop(), Some((SimTime(1), 1000)));
        for i in 0..100u32 {
            assert_eq!(q.pop(), Some((SimTime(5), i)));
        }
        assert!(q.pop().is_none());
    }

    #[test]
    fn events_scheduled_first_lead_their_instant() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(5), 0);
        q.schedule_first(SimTime(5), 1);
        q.schedule(SimTime(4), 2);
        q.schedule_first(SimTime(5), 3);
        q.schedule(SimTime(5), 4);
        q.schedule_first(SimTime(5 + FAR), 5);
        q.schedule(SimTime(5 + FAR), 6);
        let order: Vec<u32> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, [2, 1, 3, 0, 4, 5, 6]);
    }

    #[test]
    fn near_and_far_events_pop_in_one_order() {
        // Interleave pops with schedules at random distances on both sides
        // of FAR, many at the same instants: the pops must follow
        // (time, schedule order) exactly, as with one heap.
        let mut q = EventQueue::new();
        let mut pending: Vec<(u64, u32)> = Vec::new();
        let mut x = 12345u64;
        let mut rand = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for id in 0..20_000u32 {
            let now = q.now().0;
            let at = now + [0, 1, FAR - 1, FAR, 2 * FAR][(rand() % 5) as usize] * (rand() % 3);
            q.schedule(SimTime(at), id);
            pending.push((at, id));
            if rand() % 2 == 0 {
                pending.sort();
                let want = pending.remove(0);
                assert_eq!(q.peek(), Some(&want.1));
                assert_eq!(q.pop(), Some((SimTime(want.0), want.1)));
                // A hole now; the next peek must still be exact.
                if let Some(&(_, next)) = pending.iter().min() {
                    assert_eq!(q.peek(), Some(&next));
                }
                assert_eq!(q.len(), pending.len());
            }
        }
        pending.sort();
        for want in pending {
            assert_eq!(q.pop(), Some((SimTime(want.0), want.1)));
        }
        assert!(q.is_empty());
        assert_eq!(q.peek_time(), None);
        assert_eq!(q.peek(), None);
        // Emptied, the heaps take entries again.
        let now = q.now();
        q.schedule(now + Dur(2 * FAR), 1);
        q.schedule(now, 0);
        assert_eq!(q.pop(), Some((now, 0)));
        assert_eq!(q.pop(), Some((now + Dur(2 * FAR), 1)));
        assert!(q.pop().is_none());
    }

    #[test]
    fn pops_in_time_order() {
        let mut q = EventQueue::new();
        let times = [9u64, 3, 7, 3, 1, 8, 2, 2, 6];
        for (i, t) in times.iter().enumerate() {
            q.schedule(SimTime(*t), i);
        }
        let mut last = (0, 0);
        while let Some((t, i)) = q.pop() {
            assert!((t.0, i) >= last || t.0 > last.0);
            last = (t.0, i);
        }
        assert_eq!(q.events_executed(), times.len() as u64);
    }
}
