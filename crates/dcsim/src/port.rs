//! An egress port: the queue in front of a link, its AQM, the serialiser, and
//! the link's propagation (frames on the wire, in order).
//!
//! A port keeps at most one pending event of each kind: the end of the current
//! transmission (`TxDone`) and the arrival of the head frame on the wire
//! (`LinkArrive`), so the event heap stays small.

use crate::aqm::{Aqm, QueueView, Verdict};
use crate::config::PqPlacement;
use crate::hscc::Hscc;
use crate::packet::{ndp_flags, Ecn, FrameKind, Packet, PacketPool, PktId};
use crate::pfc::PfcPort;
use crate::phantom::PhantomQueue;
use crate::sched::Classes;
use crate::units::QSize;
use dcsim_engine::{Dur, Rate, Rng, SimTime};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capacity {
    Unlimited,
    Limited(QSize),
}

#[derive(Clone, Copy, Debug, Default)]
#[repr(C)] // what every frame counts in the first 64 bytes (Port's line 3)
pub struct PortStats {
    pub enqueued: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub max_queue_bytes: u64,
    pub max_queue_packets: u64,
    pub marks: u64,
    pub drops: u64,
    /// Of `marks`, those set by the phantom queue.
    pub pq_marks: u64,
    /// Frames lost on the wire (random link loss).
    pub link_losses: u64,
}

/// A switch's shared buffer with dynamic thresholds.
#[derive(Clone, Copy, Debug)]
pub struct SharedBuffer {
    pub size: u64,
    pub alpha: f64,
    /// Bytes held by the switch's ports (waiting or being serialised).
    pub used: u64,
}

/// Cut an NDP data packet to its header, which rides in class 0 (DSCP 0);
/// returns the bytes cut.
fn trim(pkt: &mut Packet) -> u64 {
    let before = pkt.frame_len();
    pkt.flags |= ndp_flags::TRIMMED;
    pkt.dscp = 0;
    let cut = before - pkt.frame_len();
    pkt.wire_bytes -= cut as u32;
    cut
}

/// Result of offering a packet to a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// Dropped (tail drop or AQM); the caller frees it. `evicted`: packets
    /// pushed out before the arrival still did not fit (already freed).
    Dropped { evicted: u32 },
    /// Queued behind others (or behind the frame on the wire), after pushing
    /// out `evicted` lower-priority packets (already freed).
    Queued { evicted: u32 },
    /// The port was idle: the caller must start a transmission.
    StartTx,
}

#[repr(C, align(64))]
pub struct Port {
    // Line 0: what a frame's every visit reads (a frame's path touches few
    // lines of a 512-byte port: a large fabric's ports do not fit in L1).
    /// Node that owns the port and node at the other end of its link.
    pub node: u32,
    pub peer: u32,
    /// Nothing but the next frame's start happens at the end of a frame here
    /// (no random loss, link failure, shared buffer, phantom queue, VOQ,
    /// TSQ or inter-frame gap): a frame goes on the wire when it starts, and its end
    /// needs an event only if another frame waits behind it.
    pub end_known_at_start: bool,
    /// With `end_known_at_start` and one FIFO: a queued frame's start is
    /// fixed when it is queued (once the frames before it are sent), so it
    /// goes on the wire then and no frame's end needs an event; `settle`
    /// starts the queued frames as they fall due (an arrival settles the
    /// port before it reads the queue). Set where nothing judges a frame
    /// as it leaves (no classes, no sojourn-time AQM).
    pub start_known_at_enqueue: bool,
    /// With `start_known_at_enqueue` and a marker at dequeue: a frame's
    /// mark is set as `settle` starts it, so its arrival settles the port.
    pub marks_lazily: bool,
    /// The AQM acts at dequeue (TCN, ECN#, CoDel); a class's AQM is of the same kind.
    dequeue_aqm: bool,
    /// The link is up (a failed link drops everything offered to it).
    pub up: bool,
    /// The frame being sent is a control frame (PFC PAUSE): it holds no buffer.
    transmitting_control: bool,
    /// HSCC's relay hears this port's queue (`hscc` is set): the lazy paths
    /// read this flag, on the line they read anyway, rather than the box.
    relay: bool,
    /// With `end_known_at_start`: the frame being serialised ends then, and
    /// no TxDone event is pending for it (`settle` releases it lazily).
    pub idle_at: Option<SimTime>,
    /// When the last frame started or committed ends (ZERO: none yet).
    pub busy_until: SimTime,
    pub delay: Dur,
    /// Frame being serialised, if any, and its wire bytes (kept here: with
    /// `end_known_at_start` the frame may have arrived, been freed and its
    /// slot reused by the time `settle` releases it).
    pub transmitting: Option<PktId>,
    transmitting_bytes: u64,
    // Line 1: the frames committed to the wire and on it.
    /// With `start_known_at_enqueue`: the queued frames and their wire bytes
    /// (the frames may have arrived and been freed by the time they are
    /// settled).
    committed: VecDeque<(PktId, u64)>,
    /// Frames propagating on the link: (arrival time of the last bit, packet).
    pub on_wire: VecDeque<(SimTime, PktId)>,
    // Line 2: admission and serialisation.
    pub capacity: Capacity,
    /// Packets and bytes waiting, over all classes.
    queue_len: u64,
    queue_bytes: u64,
    /// Bytes held by this port (waiting or being serialised), for the shared buffer.
    held_bytes: u64,
    /// A phantom queue beside the port (HULL), if configured (boxed, as
    /// HSCC's state: rarely present, so the hot Port stays small).
    pub pq: Option<Box<PhantomQueue>>,
    pub rate: Rate,
    // Then counters, the marker, and what only some configurations use.
    pub stats: PortStats,
    pub aqm: Aqm,
    queue: VecDeque<PktId>,
    /// Index of the switch's shared buffer, if it has one.
    pub shared: Option<u32>,
    /// The inter-frame gap at this port's rate (link.framing; zero without).
    /// A port with a gap is never `end_known_at_start`: its frames' ends
    /// are TxDone events, and only that path waits out the gap.
    pub gap: Dur,
    /// HSCC's relay and counters (switch ports), if configured.
    pub hscc: Option<Box<Hscc>>,
    /// PFC's pause state and ingress accounting, if configured.
    pub pfc: Option<Box<PfcPort>>,
    /// Per-class queues (strict priority or DWRR), if configured; else `queue`
    /// is the port's one FIFO.
    pub classes: Option<Box<Classes>>,
    /// Random loss on the wire: probability and the port's own stream.
    pub loss: Option<(f64, Rng)>,
}

/// What became of a frame whose serialisation just ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxDone {
    pub frame: PktId,
    /// Lost on the wire: the caller frees it.
    pub lost: bool,
    /// The frame is the only one on the wire: the caller schedules its arrival.
    pub first_on_wire: bool,
    /// Another frame started serialising.
    pub started_next: bool,
    /// Frames a sojourn-time AQM dropped on their way out (already freed).
    pub dropped: u32,
}

impl Port {
    pub fn new(node: u32, peer: u32, rate: Rate, delay: Dur, capacity: Capacity, aqm: Aqm) -> Port {
        Port {
            node,
            peer,
            rate,
            delay,
            capacity,
            dequeue_aqm: aqm.at_dequeue(),
            aqm,
            pq: None,
            hscc: None,
            pfc: None,
            classes: None,
            queue: VecDeque::new(),
            queue_len: 0,
            queue_bytes: 0,
            transmitting: None,
            transmitting_bytes: 0,
            transmitting_control: false,
            on_wire: VecDeque::new(),
            loss: None,
            shared: None,
            up: true,
            held_bytes: 0,
            end_known_at_start: false,
            relay: false,
            idle_at: None,
            start_known_at_enqueue: false,
            marks_lazily: false,
            committed: VecDeque::new(),
            busy_until: SimTime::ZERO,
            gap: Dur::ZERO,
            stats: PortStats::default(),
        }
    }

    /// Packets of `class` waiting.
    pub fn class_backlog(&self, class: usize) -> u64 {
        match &self.classes {
            Some(c) => c.view(class).packets,
            None if class == 0 => self.queue_len,
            None => 0,
        }
    }

    /// Give the port HSCC's relay, which hears its queue.
    pub fn set_hscc(&mut self, hscc: Hscc) {
        self.hscc = Some(Box::new(hscc));
        self.relay = true;
    }

    /// Packets waiting (not counting the one being serialised).
    #[inline]
    pub fn queue_packets(&self) -> u64 {
        self.queue_len
    }
    #[inline]
    pub fn queue_bytes(&self) -> u64 {
        self.queue_bytes
    }

    /// `offer` at a port that starts its frames lazily
    /// (`start_known_at_enqueue`: one FIFO, link always up, no phantom
    /// queue, shared buffer or sojourn-time AQM; a marker at dequeue
    /// judges each frame as `settle` starts it): the same admission without
    /// the branches that cannot apply there.
    #[inline]
    pub fn offer_lazy(&mut self, now: SimTime, id: PktId, pool: &mut PacketPool) -> Offer {
        let view = QueueView { packets: self.queue_len, bytes: self.queue_bytes };
        let pkt = pool.get_mut(id);
        let size = pkt.wire_bytes as u64;
        match self.aqm.on_enqueue(now, view, pkt.ecn.is_ect()) {
            Verdict::Drop => {
                self.stats.drops += 1;
                return Offer::Dropped { evicted: 0 };
            }
            Verdict::Mark => self.mark(pkt),
            Verdict::Enqueue => {}
        }
        pkt.enqueued_at = now;
        let fits = if self.relay { self.fits(size, self.hscc_reserve(pkt)) } else { self.fits(size, 0.0) };
        if !fits {
            self.stats.drops += 1;
            return Offer::Dropped { evicted: 0 };
        }
        self.held_bytes += size;
        self.stats.enqueued += 1;
        if self.transmitting.is_none() && self.queue_len == 0 {
            // (A marker at dequeue has nothing behind this one: K > 0 here.)
            self.begin_tx(now, id, pool);
            return Offer::StartTx;
        }
        // Sent right after the frames before it: its start is known now.
        self.busy_until += self.rate.tx_time(size);
        self.committed.push_back((id, size));
        self.count_queued(size);
        if self.relay {
            self.queue_changed(now);
        }
        Offer::Queued { evicted: 0 }
    }

    /// HSCC's sigma: data may not use the top of the buffer (control packets may).
    #[inline]
    fn hscc_reserve(&self, pkt: &Packet) -> f64 {
        match &self.hscc {
            Some(h) if pkt.payload > 0 => h.control_reserve,
            _ => 0.0,
        }
    }

    #[inline]
    fn count_queued(&mut self, size: u64) {
        self.queue_len += 1;
        self.queue_bytes += size;
        self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(self.queue_bytes);
        self.stats.max_queue_packets = self.stats.max_queue_packets.max(self.queue_len);
    }

    /// Admission: AQM verdict, then the capacity check (tail drop, or a
    /// push-out under strict priority). Not for a port that starts its
    /// frames lazily (`offer_lazy`).
    #[inline]
    pub fn offer(&mut self, now: SimTime, id: PktId, pool: &mut PacketPool, mut shared: Option<&mut SharedBuffer>) -> Offer {
        debug_assert!(!self.start_known_at_enqueue, "offer_lazy's port");
        if !self.up {
            self.stats.drops += 1;
            return Offer::Dropped { evicted: 0 };
        }
        if self.classes.as_ref().is_some_and(|c| c.trim.is_some()) {
            self.trim_if_full(id, pool, shared.as_deref_mut());
        }
        let view = QueueView { packets: self.queue_len, bytes: self.queue_bytes };
        let pkt = pool.get_mut(id);
        let size = pkt.wire_bytes as u64;
        let reserve = self.hscc_reserve(pkt);
        if self.pq.as_ref().is_some_and(|q| q.placement == PqPlacement::Arrival) {
            self.pass_phantom(now, pkt);
        }
        let ect = pkt.ecn.is_ect();
        let (class, verdict) = match &mut self.classes {
            None => (0, self.aqm.on_enqueue(now, view, ect)),
            Some(c) => {
                let class = c.class_of(pkt.dscp);
                let v = if c.aqms.is_empty() { self.aqm.on_enqueue(now, view, ect) } else { c.aqms[class].on_enqueue(now, c.view(class), ect) };
                (class, v)
            }
        };
        // A lossless class at a switch is never dropped here: PFC's ingress
        // accounting bounds it (only a full shared buffer still drops).
        let lossless = self.pfc.as_ref().is_some_and(|p| p.is_lossless(class));
        match verdict {
            Verdict::Drop if !lossless => {
                self.stats.drops += 1;
                return Offer::Dropped { evicted: 0 };
            }
            Verdict::Mark if self.pq.as_ref().is_none_or(|q| q.port_marking) => self.mark(pkt),
            Verdict::Drop | Verdict::Mark | Verdict::Enqueue => {}
        }
        pkt.enqueued_at = now; // harmless if it is dropped below
        let mut evicted = 0;
        if lossless {
            if shared.as_ref().is_some_and(|b| b.used + size > b.size) {
                self.stats.drops += 1;
                return Offer::Dropped { evicted };
            }
        } else if !self.fits(size, reserve) {
            let fits;
            (evicted, fits) = self.make_room(class, size, reserve, pool, shared.as_deref_mut());
            if !fits {
                self.stats.drops += 1;
                return Offer::Dropped { evicted };
            }
        }
        // (A trimming port caps NDP data only: headers and control take what
        // the port's buffer has left; data over its cap was trimmed above.)
        let capped = |c: &Classes| !c.has_room(class, size) && !(c.trim.is_some() && pool.get(id).kind.is_ndp());
        if !lossless && self.classes.as_deref().is_some_and(capped) {
            self.stats.drops += 1; // the class's own cap
            return Offer::Dropped { evicted };
        }
        // Dynamic threshold: this port may hold at most alpha * (free buffer).
        let shared_full = !lossless && shared.as_ref().is_some_and(|b| {
            let free = b.size.saturating_sub(b.used);
            size > free || (self.held_bytes + size) as f64 > b.alpha * free as f64
        });
        if shared_full {
            self.stats.drops += 1;
            return Offer::Dropped { evicted };
        }
        if let Some(b) = shared {
            b.used += size;
        }
        self.held_bytes += size;
        self.stats.enqueued += 1;
        let paused = self.pfc.as_ref().is_some_and(|p| {
            let c = if self.classes.is_some() { class } else { p.class_of(pool.get(id).dscp) };
            p.paused_mask(now) & (1 << c) != 0
        });
        if self.transmitting.is_none() && self.queue_len == 0 && !paused {
            if self.dequeue_aqm {
                // Straight through: a sojourn-time AQM still sees it (waited 0).
                let v = self.judge_departure(now, id, class, pool);
                debug_assert_ne!(v, Verdict::Drop, "no AQM drops a packet that did not wait");
            }
            self.begin_tx(now, id, pool);
            return Offer::StartTx;
        }
        match &mut self.classes {
            Some(c) => c.push(class, id, size),
            None => self.queue.push_back(id),
        }
        self.count_queued(size);
        self.queue_changed(now);
        Offer::Queued { evicted }
    }

    /// Whether a frame of `size` fits in the port's own buffer (less HSCC's
    /// control reserve, for data).
    #[inline]
    fn fits(&self, size: u64, reserve: f64) -> bool {
        let usable = |n: u64| if reserve > 0.0 { ((1.0 - reserve) * n as f64) as u64 } else { n };
        match self.capacity {
            Capacity::Unlimited => true,
            Capacity::Limited(QSize::Packets(n)) => self.queue_len < usable(n),
            Capacity::Limited(QSize::Bytes(n)) => self.queue_bytes + size <= usable(n),
        }
    }

    /// The buffer is full: under strict priority with push-out, drop the
    /// last packets of classes below `class` until the frame fits. Returns
    /// how many were pushed out, and whether the frame now fits.
    #[cold]
    #[inline(never)]
    fn make_room(&mut self, class: usize, size: u64, reserve: f64, pool: &mut PacketPool, mut shared: Option<&mut SharedBuffer>) -> (u32, bool) {
        let mut evicted = 0;
        while !self.fits(size, reserve) {
            let Some(victim) = self.classes.as_mut().filter(|c| c.push_out).and_then(|c| c.evict_after(class, pool)) else {
                return (evicted, false);
            };
            let b = pool.get(victim).wire_bytes as u64;
            pool.free(victim);
            self.queue_len -= 1;
            self.queue_bytes -= b;
            self.release(b, shared.as_deref_mut());
            self.stats.drops += 1;
            evicted += 1;
        }
        (evicted, true)
    }

    /// NDP's switch (Handley et al. §3.1): an NDP data packet that finds
    /// the data class (the last) full is trimmed to its header, which goes
    /// on in class 0; or, on the port's coin, the data queue's tail is
    /// trimmed (its header stays in the buffer, at the end of class 0) and
    /// the arrival takes its place, breaking up phase effects as htsim's
    /// CompositeQueue does. A header that does not fit is dropped by
    /// `offer` as any frame is.
    #[cold]
    #[inline(never)]
    fn trim_if_full(&mut self, id: PktId, pool: &mut PacketPool, shared: Option<&mut SharedBuffer>) {
        let pkt = pool.get(id);
        if pkt.kind != FrameKind::NdpData || pkt.has(ndp_flags::TRIMMED) {
            return;
        }
        let size = pkt.wire_bytes as u64;
        let full = |p: &Port| {
            let c = p.classes.as_ref().expect("a trimming port");
            !p.fits(size, 0.0) || !c.has_room(c.last(), size)
        };
        if !full(self) {
            return;
        }
        let c = self.classes.as_mut().expect("a trimming port");
        let data = c.last();
        let tail = c.trim.as_mut().expect("trimming").next_u64() & 1 == 1;
        if let Some(victim) = tail.then(|| c.pop_tail(data, pool)).flatten() {
            let freed = trim(pool.get_mut(victim));
            c.push(0, victim, pool.get(victim).wire_bytes as u64);
            c.trims += 1;
            self.queue_bytes -= freed;
            self.release(freed, shared);
            if !full(self) {
                return;
            }
        }
        trim(pool.get_mut(id));
        self.classes.as_mut().expect("a trimming port").trims += 1;
    }

    /// Tell HSCC's relay the queue length (in the buffer's unit).
    #[inline]
    fn queue_changed(&mut self, now: SimTime) {
        if let Some(h) = &mut self.hscc {
            let q = match self.capacity {
                Capacity::Limited(QSize::Bytes(_)) => self.queue_bytes,
                _ => self.queue_len,
            };
            h.on_queue(now.ps(), q);
        }
    }

    fn mark(&mut self, pkt: &mut Packet) {
        if pkt.ecn != Ecn::Ce {
            pkt.ecn = Ecn::Ce;
            self.stats.marks += 1;
        }
    }

    /// Feed the phantom queue; it marks ECN-capable packets only (others
    /// pass unmarked: it never drops).
    #[inline]
    fn pass_phantom(&mut self, now: SimTime, pkt: &mut Packet) {
        let Some(q) = &mut self.pq else { return };
        if q.pass(now, pkt.wire_bytes as u64) && pkt.ecn.is_ect() {
            self.stats.pq_marks += 1;
            self.mark(pkt);
        }
    }

    /// `id` leaves the queue for the wire: a departure-side phantom queue sees it here.
    #[inline(always)]
    fn begin_tx(&mut self, now: SimTime, id: PktId, pool: &mut PacketPool) {
        if self.pq.is_some() {
            self.depart_phantom(now, pool.get_mut(id));
        }
        self.transmitting = Some(id);
        self.transmitting_bytes = pool.get(id).wire_bytes as u64;
    }

    #[cold]
    #[inline(never)]
    fn depart_phantom(&mut self, now: SimTime, pkt: &mut Packet) {
        if self.pq.as_ref().is_some_and(|q| q.placement == PqPlacement::Departure) {
            self.pass_phantom(now, pkt);
        }
    }

    /// PFC: send control frame `id` before any queued data. True if the port
    /// was idle and started it (the caller starts the transmission).
    pub fn send_control(&mut self, now: SimTime, id: PktId, pool: &mut PacketPool) -> bool {
        let p = self.pfc.as_mut().expect("a PFC port");
        if self.transmitting.is_some() {
            p.control.push_back(id);
            return false;
        }
        self.begin_tx(now, id, pool);
        self.transmitting_control = true;
        true
    }

    /// PFC: a paused class may send again. True if the idle port started a
    /// frame (the caller starts the transmission), and the frames a
    /// sojourn-time AQM dropped on the way.
    pub fn resume(&mut self, now: SimTime, pool: &mut PacketPool, shared: Option<&mut SharedBuffer>) -> (bool, u32) {
        if self.transmitting.is_some() {
            return (false, 0);
        }
        self.start_next_judged(now, pool, shared)
    }

    /// Take every waiting frame (the link failed); the caller frees them.
    /// The frame on the wire finishes and is then lost.
    pub fn drain(&mut self, now: SimTime, pool: &PacketPool, shared: Option<&mut SharedBuffer>) -> Vec<PktId> {
        let frames: Vec<PktId> = match &mut self.classes {
            Some(c) => c.take_all(),
            None => self.queue.drain(..).collect(),
        };
        let bytes: u64 = frames.iter().map(|&id| pool.get(id).wire_bytes as u64).sum();
        self.queue_len = 0;
        self.queue_bytes = 0;
        self.held_bytes -= bytes;
        self.queue_changed(now);
        if let Some(b) = shared {
            b.used -= bytes;
        }
        self.stats.drops += frames.len() as u64;
        frames
    }

    /// Serialisation time of the frame now being transmitted.
    #[inline]
    pub fn tx_duration(&self) -> Dur {
        debug_assert!(self.transmitting.is_some(), "a frame is being transmitted");
        self.rate.tx_time(self.transmitting_bytes)
    }

    /// How long a frame starting at `now` waits for the inter-frame gap
    /// after the one before it.
    #[inline]
    pub fn gap_wait(&self, now: SimTime) -> Dur {
        if self.gap == Dur::ZERO || self.busy_until == SimTime::ZERO {
            return Dur::ZERO;
        }
        (self.busy_until + self.gap).since(now)
    }

    /// The current frame finished serialising: put it on the wire (unless
    /// random loss takes it), and start the next one if any.
    #[inline]
    pub fn finish_tx(&mut self, now: SimTime, pool: &mut PacketPool, mut shared: Option<&mut SharedBuffer>) -> TxDone {
        let id = self.transmitting.take().expect("TxDone without a frame");
        if !std::mem::take(&mut self.transmitting_control) {
            self.release(self.transmitting_bytes, shared.as_deref_mut());
        }
        self.stats.tx_packets += 1;
        self.stats.tx_bytes += self.transmitting_bytes;
        let lost = !self.up
            || match &mut self.loss {
                Some((p, rng)) => rng.next_f64() < *p,
                None => false,
            };
        let mut first_on_wire = false;
        if lost {
            self.stats.link_losses += 1;
        } else {
            first_on_wire = self.put_on_wire(now + self.delay, id);
        }
        let (started_next, dropped) = self.start_next(now, pool, shared);
        TxDone { frame: id, lost, first_on_wire, started_next, dropped }
    }

    /// With `end_known_at_start`: a frame already on the wire finished
    /// serialising (its TxDone event); start the next one if any.
    #[inline]
    pub fn finish_on_wire(&mut self, now: SimTime, pool: &mut PacketPool) -> (bool, u32) {
        self.end_frame();
        self.start_next(now, pool, None)
    }

    /// With `end_known_at_start`: if the frame that started without a TxDone
    /// event has ended by `now`, release it, as its TxDone would have, and
    /// (`start_known_at_enqueue`) start the committed frames due by `now`.
    /// A frame that ends at `now` has left before one that arrives at `now`.
    #[inline]
    pub fn settle(&mut self, now: SimTime, pool: &mut PacketPool) {
        if let Some(t) = self.idle_at.filter(|&t| t <= now) {
            self.idle_at = None;
            self.end_frame();
            if self.committed.is_empty() {
                self.aqm.on_idle(t);
            } else {
                self.start_committed(t, now, pool);
            }
        }
    }

    /// Start the committed frames, the first at `t`, until one is still being sent at `now`.
    /// A marker at dequeue (DCTCP's step) judges each as it starts: every
    /// arrival settles the port first, so the frames still committed behind
    /// it all came before its start, and its backlog is theirs.
    #[inline(never)]
    fn start_committed(&mut self, mut t: SimTime, now: SimTime, pool: &mut PacketPool) {
        while let Some((id, bytes)) = self.committed.pop_front() {
            self.queue_len -= 1;
            self.queue_bytes -= bytes;
            if self.relay {
                self.queue_changed(t);
            }
            if self.dequeue_aqm {
                self.judge_departure(t, id, 0, pool);
            }
            self.transmitting = Some(id);
            self.transmitting_bytes = bytes;
            let end = t + self.rate.tx_time(bytes);
            if end > now {
                self.idle_at = Some(end);
                return;
            }
            self.end_frame();
            t = end;
        }
        self.aqm.on_idle(t);
    }

    #[inline]
    fn end_frame(&mut self) {
        self.transmitting.take().expect("a frame is being transmitted");
        self.release(self.transmitting_bytes, None);
        self.stats.tx_packets += 1;
        self.stats.tx_bytes += self.transmitting_bytes;
    }

    /// Frame `id` is on the link and its last bit arrives at `arrive`.
    /// True if it is alone there: the caller schedules its arrival (later
    /// ones are scheduled as each arrival pops the one before).
    #[inline]
    pub fn put_on_wire(&mut self, arrive: SimTime, id: PktId) -> bool {
        self.on_wire.push_back((arrive, id));
        self.on_wire.len() == 1
    }

    /// `bytes` leave the port's (and the switch's) buffer.
    #[inline]
    fn release(&mut self, bytes: u64, shared: Option<&mut SharedBuffer>) {
        self.held_bytes -= bytes;
        if let Some(b) = shared {
            b.used -= bytes;
        }
    }

    /// Start serialising the next waiting frame, if any, after a
    /// sojourn-time AQM has judged it (CoDel may drop several in a row).
    #[inline]
    fn start_next(&mut self, now: SimTime, pool: &mut PacketPool, shared: Option<&mut SharedBuffer>) -> (bool, u32) {
        if self.classes.is_some() || self.dequeue_aqm || self.pfc.is_some() {
            return self.start_next_judged(now, pool, shared);
        }
        // The common case: one FIFO, and nothing judges departures.
        match self.queue.pop_front() {
            Some(id) => {
                self.queue_len -= 1;
                self.queue_bytes -= pool.get(id).wire_bytes as u64;
                self.begin_tx(now, id, pool);
                self.queue_changed(now);
                (true, 0)
            }
            None => {
                self.aqm.on_idle(now);
                (false, 0)
            }
        }
    }

    /// `start_next` with classes, a sojourn-time AQM or PFC: PFC's control
    /// frames first, then data of the classes not paused.
    fn start_next_judged(&mut self, now: SimTime, pool: &mut PacketPool, mut shared: Option<&mut SharedBuffer>) -> (bool, u32) {
        let mut paused = 0;
        let mut head_paused = false;
        if let Some(p) = &mut self.pfc {
            if let Some(id) = p.control.pop_front() {
                self.begin_tx(now, id, pool);
                self.transmitting_control = true;
                return (true, 0);
            }
            paused = p.paused_mask(now);
            // One FIFO stops while its head frame's class is paused.
            head_paused = self.classes.is_none() && self.queue.front().is_some_and(|&h| paused & (1 << p.class_of(pool.get(h).dscp)) != 0);
        }
        let mut dropped = 0;
        let started = loop {
            let next = match &mut self.classes {
                None if head_paused => None,
                None => self.queue.pop_front().map(|id| (id, 0)),
                Some(c) => c.pop(pool, paused),
            };
            let Some((id, class)) = next else {
                self.aqm.on_idle(now);
                break false;
            };
            let bytes = pool.get(id).wire_bytes as u64;
            self.queue_len -= 1;
            self.queue_bytes -= bytes;
            let verdict = self.judge_departure(now, id, class, pool);
            if let Some(c) = self.classes.as_mut().filter(|c| !c.aqms.is_empty() && c.is_empty(class)) {
                // The class's own AQM hears that its queue emptied.
                c.aqms[class].on_idle(now);
            }
            if verdict != Verdict::Drop || self.pfc.as_ref().is_some_and(|p| p.is_lossless(class)) {
                self.begin_tx(now, id, pool);
                break true;
            }
            pool.free(id);
            self.release(bytes, shared.as_deref_mut());
            self.stats.drops += 1;
            dropped += 1;
        };
        self.queue_changed(now);
        (started, dropped)
    }

    /// A sojourn-time AQM's verdict on `id` as it leaves class `class`'s
    /// queue (marks are applied here; the caller drops).
    #[inline]
    fn judge_departure(&mut self, now: SimTime, id: PktId, class: usize, pool: &mut PacketPool) -> Verdict {
        if !self.dequeue_aqm {
            return Verdict::Enqueue;
        }
        let (aqm, backlog) = match &mut self.classes {
            Some(c) if !c.aqms.is_empty() => {
                let backlog = c.view(class).bytes;
                (&mut c.aqms[class], backlog)
            }
            _ => (&mut self.aqm, self.queue_bytes),
        };
        let pkt = pool.get_mut(id);
        let v = aqm.on_dequeue(now, now.since(pkt.enqueued_at), backlog, pkt.ecn.is_ect());
        if v == Verdict::Mark && pkt.ecn != Ecn::Ce {
            pkt.ecn = Ecn::Ce;
            self.stats.marks += 1;
        }
        v
    }
}
