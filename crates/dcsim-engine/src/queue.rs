//! The event queue, ordered by `(time, sequence)`.
//!
//! The sequence number is assigned at scheduling time, so events for the same
//! instant pop in the order they were pushed. This is what makes a run
//! deterministic regardless of the queue's internals. Events pushed with
//! `schedule_first` come before all others of their instant.
//!
//! With `with_origins` the order is canonical instead (docs/design.md,
//! "Parallel runs"): the sequence part of a key is (origin, that origin's
//! own count), where the caller names the origin of each event it handles,
//! so the order of an instant's events no longer depends on the order in
//! which separate parts of the network were simulated. An origin whose
//! events are unique per instant may push with a fixed `tag` instead.
//!
//! Events due at least `FAR` ahead (retransmission timers, flow arrivals)
//! wait in the far heap, the others in the near heap; `pop` takes the
//! smaller of the two minima, and keys are unique, so the order is exactly
//! that of one heap. In a small network the near heap holds a few events.
//!
//! In a large network (`with_wheel`) thousands of busy links each keep an
//! event pending, and a heap's log(n) per push was 27-31 % of a fat-tree
//! run (docs/benchmarks.md, 2026-11-26). There, events due within the
//! wheel's span (~34 us) go to a timing wheel of ~1 ns buckets instead, each
//! a sorted list, whose push and pop cost the same at any size; the near
//! heap stays empty. The choice is made once, and the wheel is reached only
//! through paths a small network rarely takes (a push past `near_until`, a
//! pop with the near heap empty), so a small network's loop keeps its
//! instructions.

use crate::time::SimTime;

/// Events due at least this far ahead go to the far heap.
const FAR: u64 = 100_000_000; // 100 us in ps

/// log2 of a wheel bucket's width in ps (~1 ns).
const WIDTH_BITS: u32 = 10;
/// log2 of the number of buckets: with a wheel, events due more than its
/// span (2^25 ps, ~34 us) ahead go to the far heap.
const BUCKET_BITS: u32 = 15;
const BUCKETS: usize = 1 << BUCKET_BITS;
const WORDS: usize = BUCKETS / 64;

/// Key bit of events pushed with `schedule`: they follow those pushed with
/// `schedule_first` for the same instant.
const LATER: u128 = 1 << 63;

/// Bits of a canonical key's sequence part given to the origin's own count.
const ORIGIN_SHIFT: u32 = 39;
/// Origins and tags below this fit beside the count (2^24).
pub const MAX_ORIGINS: u64 = 1 << (63 - ORIGIN_SHIFT);

/// The time of a key (time << 64 | later << 63 | seq).
#[inline(always)]
fn time_of(key: u128) -> SimTime {
    SimTime((key >> 64) as u64)
}

/// The absolute wheel bucket of a key's time.
#[inline(always)]
fn bucket_of(key: u128) -> u64 {
    (key >> (64 + WIDTH_BITS)) as u64
}

#[derive(Clone, Copy)]
struct Entry<E> {
    /// (time << 64 | later << 63 | seq) packed so that one u128 comparison
    /// orders entries.
    key: u128,
    ev: E,
}

/// Min-priority queue of events. `E` is a small `Copy` enum defined by the user.
pub struct EventQueue<E: Copy> {
    near: Heap<E>,
    far: Heap<E>,
    /// Events due within the wheel's span, in a large network (`with_wheel`).
    wheel: Option<Box<Wheel<E>>>,
    /// Events due before this go to the near heap: a lower bound on now +
    /// FAR, raised when a push finds it stale (0 with a wheel).
    near_until: u64,
    /// The sequence part of the next key: a global count, or (canonical
    /// order) the current origin in the high bits and its own count below.
    seq: u64,
    /// Canonical order: the current origin, and every origin's saved `seq`.
    origin: usize,
    origin_seq: Vec<u64>,
    now: SimTime,
    popped: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    /// A queue for a small network: two heaps.
    pub fn new() -> Self {
        EventQueue {
            near: Heap::new(),
            far: Heap::new(),
            wheel: None,
            near_until: FAR,
            seq: 0,
            origin: 0,
            origin_seq: Vec::new(),
            now: SimTime::ZERO,
            popped: 0,
        }
    }

    /// A queue for a large network: two heaps and a timing wheel.
    pub fn with_wheel() -> Self {
        EventQueue { wheel: Some(Box::new(Wheel::new())), near_until: 0, ..Self::new() }
    }

    /// Switch to the canonical order with `origins` origins (origin 0 is
    /// current); tags for `schedule_tagged` start at `origins`.
    pub fn with_origins(mut self, origins: usize) -> Self {
        assert!(origins >= 1 && (origins as u64) < MAX_ORIGINS && self.is_empty());
        self.origin_seq = (0..origins as u64).map(|o| o << ORIGIN_SHIFT).collect();
        self.origin = 0;
        self.seq = 0;
        self
    }

    /// Canonical order: the events scheduled from now on come from `origin`.
    #[inline]
    pub fn set_origin(&mut self, origin: usize) {
        if origin != self.origin {
            self.origin_seq[self.origin] = self.seq;
            self.seq = self.origin_seq[origin];
            self.origin = origin;
        }
    }

    /// Canonical order: schedule `ev` at `at` under a tag (>= the number of
    /// origins) that no other event of that instant has.
    #[inline]
    pub fn schedule_tagged(&mut self, at: SimTime, tag: u64, ev: E) {
        debug_assert!(!self.origin_seq.is_empty() && tag >= self.origin_seq.len() as u64 && tag < MAX_ORIGINS);
        debug_assert!(at >= self.now, "event scheduled in the past");
        self.insert(Entry { key: ((at.0 as u128) << 64) | LATER | ((tag as u128) << ORIGIN_SHIFT), ev });
    }

    /// Keep only the events `keep` accepts (order and keys unchanged).
    pub fn retain(&mut self, mut keep: impl FnMut(&E) -> bool) {
        let (now, popped) = (self.now, self.popped);
        let mut kept = Vec::new();
        while let Some(key) = self.peek_entry().map(|(k, _)| k) {
            let (_, ev) = self.pop().expect("peeked");
            if keep(&ev) {
                kept.push(Entry { key, ev });
            }
        }
        self.now = now;
        self.popped = popped;
        for e in kept {
            self.insert(e);
        }
    }

    /// Set the clock and the count of events executed (to report a run
    /// that was split over several queues); `now` never goes back.
    pub fn set_totals(&mut self, now: SimTime, popped: u64) {
        self.now = self.now.max(now);
        self.popped = popped;
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
        self.near.len() + self.far.len() + self.wheel.as_ref().map_or(0, |w| w.len)
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
        debug_assert!(key != EMPTY && (self.origin_seq.is_empty() || self.seq >> ORIGIN_SHIFT == self.origin as u64));
        self.seq += 1;
        // As `insert`, written out: building the entry first cost an extra copy.
        if at.0 < self.near_until {
            self.near.push(Entry { key, ev });
        } else {
            self.push_later(Entry { key, ev });
        }
    }

    #[inline(always)]
    fn insert(&mut self, e: Entry<E>) {
        if time_of(e.key).0 < self.near_until {
            self.near.push(e);
        } else {
            self.push_later(e);
        }
    }

    #[inline(never)]
    fn push_later(&mut self, e: Entry<E>) {
        if let Some(wheel) = &mut self.wheel {
            // Buckets now..now + BUCKETS are distinct modulo BUCKETS.
            if bucket_of(e.key) - (self.now.0 >> WIDTH_BITS) < BUCKETS as u64 {
                wheel.push(e.key, e.ev);
            } else {
                self.far.push(e);
            }
        } else if time_of(e.key).0 - self.now.0 >= FAR {
            self.far.push(e);
        } else {
            self.near_until = self.now.0 + FAR;
            self.near.push(e);
        }
    }

    /// Time of the next event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        self.peek_entry().map(|(key, _)| time_of(key))
    }

    /// The next event, if any, without removing it (to prefetch its state
    /// while the current one is handled). Exact with a hole too: the next
    /// entry of a heap whose root was taken is one of the root's children.
    #[inline]
    pub fn peek(&self) -> Option<&E> {
        self.peek_entry().map(|(_, ev)| ev)
    }

    /// `peek` for a large network's loop: with a wheel the near heap stays
    /// empty, so only the wheel and the far heap are compared.
    #[inline(always)]
    pub fn peek_large(&self) -> Option<&E> {
        let Some(w) = &self.wheel else { return self.peek() };
        debug_assert!(self.near.len() == 0);
        let far = self.far.min_key();
        if w.min_key() < far {
            Some(w.min())
        } else {
            self.far.h.first().filter(|_| far != EMPTY).map(|e| &e.ev)
        }
    }

    #[inline]
    fn peek_entry(&self) -> Option<(u128, &E)> {
        let heaps = match (self.near.peek(), self.far.peek()) {
            (Some(a), Some(b)) => Some(if b.key < a.key { b } else { a }),
            (a, b) => a.or(b),
        };
        let heaps = heaps.map(|e| (e.key, &e.ev));
        match &self.wheel {
            Some(w) if w.min_key() < heaps.map_or(EMPTY, |(k, _)| k) => Some((w.min_key(), w.min())),
            _ => heaps,
        }
    }

    /// Remove the earliest event and advance `now` to its time.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        self.pop_with::<false>()
    }

    /// `pop` for a large network's loop, with the wheel's pop inlined: the
    /// entry an out-of-line pop returns through the stack is read back in
    /// pieces its stores did not write, which stalls store forwarding (5 %
    /// of a k = 8 fat-tree's run). A small network's loop keeps the call.
    #[inline(always)]
    pub fn pop_large(&mut self) -> Option<(SimTime, E)> {
        self.pop_with::<true>()
    }

    #[inline(always)]
    fn pop_with<const INLINE_WHEEL: bool>(&mut self) -> Option<(SimTime, E)> {
        self.near.settle();
        let (near, far) = (self.near.min_key(), self.far.min_key());
        // With the near heap empty (always so with a wheel), look further.
        let top = if far < near && near != EMPTY {
            self.far.pop()
        } else if far > near {
            self.near.take_root()
        } else {
            self.pop_from_wheel_or_far::<INLINE_WHEEL>()?
        };
        let t = time_of(top.key);
        debug_assert!(t >= self.now, "time went backwards");
        self.now = t;
        self.popped += 1;
        Some((t, top.ev))
    }

    /// `pop` with the near heap empty.
    #[inline(always)]
    fn pop_from_wheel_or_far<const INLINE_WHEEL: bool>(&mut self) -> Option<Entry<E>> {
        let wheel = self.wheel.as_ref().map_or(EMPTY, |w| w.min_key());
        let far = self.far.min_key();
        if wheel < far {
            self.wheel.as_mut().map(|w| if INLINE_WHEEL { w.pop_inlined() } else { w.pop() })
        } else if far != EMPTY {
            Some(self.far.pop())
        } else {
            None
        }
    }
}

/// The end of a list.
const NIL: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Ends {
    head: u32,
    tail: u32,
}

/// A boxed array of N copies of `v`, built on the heap (too large for the stack).
fn boxed<T: Copy, const N: usize>(v: T) -> Box<[T; N]> {
    vec![v; N].into_boxed_slice().try_into().unwrap_or_else(|_| unreachable!())
}

#[derive(Clone, Copy)]
struct Node<E> {
    key: u128,
    ev: E,
    next: u32,
}

/// A timing wheel: per bucket, a list of nodes sorted by key; a bitmap of
/// the nonempty buckets finds the next one. It holds keys whose buckets lie
/// within BUCKETS of `lo`, the bucket of the smallest key.
struct Wheel<E> {
    /// Each bucket's first and last node, side by side: a push reads both.
    ends: Box<[Ends; BUCKETS]>,
    /// Nodes, reused through a free list (no allocation once warm).
    nodes: Vec<Node<E>>,
    free: u32,
    /// A bit per bucket: set when it has nodes.
    nonempty: Box<[u64; WORDS]>,
    /// A bit per word of `nonempty`: set when the word may be nonzero
    /// (cleared lazily, by the search that finds it zero).
    maybe: [u64; WORDS / 64],
    /// Absolute bucket of the smallest key (meaningless when empty).
    lo: u64,
    len: usize,
}

impl<E: Copy> Wheel<E> {
    fn new() -> Self {
        Wheel {
            ends: boxed(Ends { head: NIL, tail: NIL }),
            nodes: Vec::new(),
            free: NIL,
            nonempty: boxed(0),
            maybe: [0; WORDS / 64],
            lo: 0,
            len: 0,
        }
    }

    #[inline(always)]
    fn head(&self) -> &Node<E> {
        &self.nodes[self.ends[self.lo as usize % BUCKETS].head as usize]
    }

    /// The smallest key, EMPTY if none.
    #[inline(always)]
    fn min_key(&self) -> u128 {
        if self.len == 0 { EMPTY } else { self.head().key }
    }

    /// The smallest entry's event (the wheel is not empty).
    #[inline]
    fn min(&self) -> &E {
        &self.head().ev
    }

    #[inline]
    fn push(&mut self, key: u128, ev: E) {
        let node = Node { key, ev, next: NIL };
        let id = if self.free != NIL {
            let id = self.free;
            self.free = std::mem::replace(&mut self.nodes[id as usize], node).next;
            id
        } else {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        };
        let abs = bucket_of(key);
        if self.len == 0 || abs < self.lo {
            self.lo = abs;
        }
        self.len += 1;
        let b = abs as usize % BUCKETS;
        let Ends { head, tail } = self.ends[b];
        if head == NIL {
            self.ends[b] = Ends { head: id, tail: id };
            self.nonempty[b / 64] |= 1 << (b % 64);
            self.maybe[b / 64 / 64] |= 1 << (b / 64 % 64);
            return;
        }
        if self.nodes[tail as usize].key < key {
            // The common case: later than everything in its bucket.
            self.nodes[tail as usize].next = id;
            self.ends[b].tail = id;
        } else if key < self.nodes[head as usize].key {
            self.nodes[id as usize].next = head;
            self.ends[b].head = id;
        } else {
            let mut prev = head as usize;
            while self.nodes[self.nodes[prev].next as usize].key < key {
                prev = self.nodes[prev].next as usize;
            }
            self.nodes[id as usize].next = self.nodes[prev].next;
            self.nodes[prev].next = id;
        }
    }

    /// Remove the smallest entry (the wheel is not empty).
    #[inline(never)]
    fn pop(&mut self) -> Entry<E> {
        self.pop_inlined()
    }

    #[inline(always)]
    fn pop_inlined(&mut self) -> Entry<E> {
        let b = self.lo as usize % BUCKETS;
        let id = self.ends[b].head;
        let node = &mut self.nodes[id as usize];
        let (key, ev, next) = (node.key, node.ev, std::mem::replace(&mut node.next, self.free));
        self.free = id;
        self.len -= 1;
        self.ends[b].head = next;
        if next == NIL {
            self.nonempty[b / 64] &= !(1 << (b % 64));
            if self.len > 0 {
                self.lo += self.distance_to_next(b) as u64;
            }
        }
        Entry { key, ev }
    }

    /// Buckets from `b` (now empty) to the next nonempty one, cyclically.
    /// The wheel is not empty.
    #[inline]
    fn distance_to_next(&mut self, b: usize) -> usize {
        let w = b / 64;
        let above = self.nonempty[w] & (u64::MAX << (b % 64));
        let next = if above != 0 {
            w * 64 + above.trailing_zeros() as usize
        } else {
            // The next nonzero word after w, cyclically; w itself comes
            // last, as its buckets below b are a lap ahead.
            let mut i = (w + 1) % WORDS;
            loop {
                let maybe = self.maybe[i / 64] >> (i % 64);
                if maybe == 0 {
                    i = (i / 64 + 1) * 64 % WORDS;
                    continue;
                }
                i += maybe.trailing_zeros() as usize;
                if self.nonempty[i] != 0 {
                    break;
                }
                self.maybe[i / 64] &= !(1 << (i % 64));
                i = (i + 1) % WORDS;
            }
            i * 64 + self.nonempty[i].trailing_zeros() as usize
        };
        (next + BUCKETS - b) % BUCKETS
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
    /// (Always inlined: with the run loop compiled twice, the compiler
    /// stopped inlining it, +4 % of a dumbbell's instructions.)
    #[inline(always)]
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

    #[inline(always)]
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

    const BUCKET: u64 = 1 << WIDTH_BITS;
    const SPAN: u64 = (BUCKETS as u64) << WIDTH_BITS;

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
        for q in [EventQueue::new(), EventQueue::with_wheel()] {
            scheduled_first_lead(q);
        }
    }

    fn scheduled_first_lead(mut q: EventQueue<u32>) {
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
        one_order(EventQueue::new());
        one_order(EventQueue::with_wheel());
    }

    fn one_order(mut q: EventQueue<u32>) {
        // Interleave pops with schedules at random distances on both sides
        // of a wheel bucket's edges and of FAR, many at the same instants
        // and in the same buckets, over many laps of the wheel: the pops
        // must follow (time, schedule order) exactly, as with one heap.
        let mut pending: Vec<(u64, bool, u32)> = Vec::new();
        let mut x = 12345u64;
        let mut rand = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for id in 0..20_000u32 {
            let now = q.now().0;
            let step = [0, 1, 700, BUCKET - 1, BUCKET, 5 * BUCKET, SPAN - 1, SPAN, FAR - 1, FAR, 2 * FAR][(rand() % 11) as usize];
            let at = now + step * (rand() % 3);
            let first = rand() % 4 == 0;
            if first {
                q.schedule_first(SimTime(at), id);
            } else {
                q.schedule(SimTime(at), id);
            }
            pending.push((at, !first, id));
            if rand() % 2 == 0 {
                pending.sort();
                let want = pending.remove(0);
                assert_eq!(q.peek(), Some(&want.2));
                assert_eq!(q.peek_large(), Some(&want.2));
                let popped = if id % 3 == 0 { q.pop_large() } else { q.pop() };
                assert_eq!(popped, Some((SimTime(want.0), want.2)));
                if let Some(&(_, _, next)) = pending.iter().min() {
                    assert_eq!(q.peek(), Some(&next));
                    assert_eq!(q.peek_large(), Some(&next));
                }
                assert_eq!(q.len(), pending.len());
            }
        }
        pending.sort();
        for want in pending {
            assert_eq!(q.pop(), Some((SimTime(want.0), want.2)));
        }
        assert!(q.is_empty());
        assert_eq!(q.peek_time(), None);
        assert_eq!(q.peek(), None);
        assert_eq!(q.peek_large(), None);
        // Emptied, the heaps take entries again.
        let now = q.now();
        q.schedule(now + Dur(2 * FAR), 1);
        q.schedule(now, 0);
        assert_eq!(q.pop(), Some((now, 0)));
        assert_eq!(q.pop(), Some((now + Dur(2 * FAR), 1)));
        assert!(q.pop().is_none());
    }

    #[test]
    fn canonical_order_follows_origins_not_push_order() {
        for wheel in [false, true] {
            let new = || if wheel { EventQueue::with_wheel() } else { EventQueue::new() }.with_origins(3);
            // The same events from origins 1 and 2, pushed in two interleavings.
            let (mut a, mut b) = (new(), new());
            a.set_origin(1);
            a.schedule(SimTime(5), 10);
            a.set_origin(2);
            a.schedule(SimTime(5), 20);
            a.set_origin(1);
            a.schedule(SimTime(5), 11);
            a.schedule_tagged(SimTime(5), 7, 30);
            a.set_origin(0);
            a.schedule_first(SimTime(5), 1);
            a.schedule(SimTime(4), 0);
            b.schedule(SimTime(4), 0);
            b.schedule_tagged(SimTime(5), 7, 30);
            b.set_origin(2);
            b.schedule(SimTime(5), 20);
            b.set_origin(1);
            b.schedule(SimTime(5), 10);
            b.schedule(SimTime(5), 11);
            b.set_origin(0);
            b.schedule_first(SimTime(5), 1);
            b.retain(|&e| e != 11);
            let order = |mut q: EventQueue<u32>| std::iter::from_fn(move || q.pop().map(|(_, e)| e)).collect::<Vec<_>>();
            assert_eq!(order(a), [0, 1, 10, 11, 20, 30]);
            assert_eq!(order(b), [0, 1, 10, 20, 30]);
        }
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
