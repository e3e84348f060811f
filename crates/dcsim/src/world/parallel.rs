//! One run over several threads (`run.event_order = "canonical"`,
//! docs/design.md, "Parallel runs").
//!
//! Every thread builds the whole world and simulates a part of the nodes
//! (a partition): all hosts with their applications and flow records in
//! partition 0, the switches spread over the partitions by weight. Only
//! frames cross partitions, on links, so a frame put on a cut link at time
//! t arrives no earlier than t + L, L the smallest link delay: the threads
//! advance in windows [M, M + L), M the earliest pending event anywhere,
//! and swap the frames that crossed at each window's end (a conservative,
//! synchronous scheme: Lubachevsky's bounded lag, with one barrier per
//! window). Events of the same picosecond are ordered by (origin, the
//! origin's own count), so a node's order never depends on how the others
//! were split: the results are identical for every thread count.
//!
//! Events that concern the whole network (the stop, link failures, queue
//! samples) run in every partition; a partition handles them for its own
//! ports. A run that stops because its workload is done stops at the end
//! of the window in which the last flow finished, whatever the threads.

use super::*;
use std::sync::atomic::AtomicUsize;
use std::sync::Mutex;

use crate::hpcc::IntStack;
use super::pfc::PfcReport;

/// Origins of events (dcsim_engine::queue, canonical order): the
/// network-wide events, the hosts, then one per switch.
const GLOBAL: usize = 0;
const HOSTS: usize = 1;
const FIRST_SWITCH: usize = 2;

/// Weight of a host against a switch port when the switches are spread
/// over partitions: a host's events (TCP, applications) cost more than a
/// switch port's (measured: docs/benchmarks.md, 2026-11-27).
const HOST_WEIGHT: f64 = 2.5;

/// A frame crossing to another partition: it arrives on the far end of
/// `port` at `arrive`.
pub(super) struct Mail {
    port: u32,
    arrive: SimTime,
    pkt: Packet,
}

/// The frames one partition sends another in a window, and (HPCC's
/// telemetry on) their INT records in the same order: those live beside
/// the packet pool, not in the frame.
#[derive(Default)]
pub(super) struct MailBag {
    frames: Vec<Mail>,
    int: Vec<IntStack>,
}

/// This world's place in a split run.
pub(super) struct Part {
    me: usize,
    parts: usize,
    /// Partition of each node.
    owner: Vec<u8>,
    /// Smallest link delay: the lookahead of every window.
    lookahead: Dur,
    /// Canonical tag of each port's arrivals: tag_base + port.
    tag_base: u64,
    /// Frames for each partition, and the earliest arrival among them.
    outbox: Vec<MailBag>,
    sent_min: SimTime,
    /// Frames leaving this window as (partition, port, arrival, frame):
    /// packed into `outbox` and freed at its end, as the handler that wired
    /// one may still change it (HPCC's INT record, added after `wired`).
    leaving: Vec<(u8, u32, SimTime, PktId)>,
    /// Network-wide events popped here and in partition 0 (counted there).
    replicated: u64,
    /// Of the sampled ports this partition samples, each one's index in
    /// the scenario's list.
    sample_entries: Vec<u32>,
}

impl Part {
    /// Is `node` simulated here?
    pub(super) fn owns(&self, node: u32) -> bool {
        self.owner[node as usize] as usize == self.me
    }

    #[inline]
    pub(super) fn arrival_tag(&self, port: u32) -> u64 {
        self.tag_base + port as u64
    }
}

/// Why a scenario cannot run on `threads` threads (None: it can).
pub fn unsupported(s: &Scenario, threads: usize) -> Option<String> {
    if threads == 0 || threads > 64 {
        return Some(format!("threads = {threads}: allowed 1..=64"));
    }
    (threads > 1 && s.run.event_order != crate::config::EventOrder::Canonical).then(|| {
        format!(
            "threads = {threads} needs run.event_order = \"canonical\" (the scheduled order is one sequence over the whole network); \
             set it in the scenario or with --set run.event_order=canonical"
        )
    })
}

/// Why a built network cannot run on several threads (None: it can).
fn no_lookahead(net: &Network) -> Option<String> {
    let p = net.ports.iter().position(|p| p.delay == Dur::ZERO)?;
    let names = (&net.names[net.ports[p].node as usize], &net.names[net.ports[p].peer as usize]);
    Some(format!("threads > 1 needs every link to have a positive delay (the lookahead); the link {} - {} has none", names.0, names.1))
}

/// A capture records both directions of a link at its port's node, with
/// the TCP state of hosts, all in partition 0: one at a switch port cannot
/// be split (None: every capture is at a host).
fn capture_at_a_switch(net: &Network, captures: &[Capture]) -> Option<String> {
    let (i, c) = captures.iter().enumerate().find(|(_, c)| net.ports[c.port as usize].node >= net.num_hosts)?;
    let node = &net.names[net.ports[c.port as usize].node as usize];
    Some(format!("output.pcap[{i}]: a capture at a switch port ({node}, port {}) needs threads = 1; captures at hosts split", c.port))
}

/// Partition of every node: hosts in 0, switches in node order filling the
/// partitions to equal weight (a host weighs HOST_WEIGHT, a switch its ports).
fn partition(net: &Network, parts: usize) -> Vec<u8> {
    let h = net.num_hosts as usize;
    let weight = |n: usize| if n < h { HOST_WEIGHT } else { net.node_ports[n].len() as f64 };
    let total: f64 = (0..net.kinds.len()).map(weight).sum();
    let mut owner = vec![0u8; net.kinds.len()];
    let mut acc = h as f64 * HOST_WEIGHT;
    for (n, o) in owner.iter_mut().enumerate().skip(h) {
        // The switch goes where the middle of its weight falls.
        let mid = acc + weight(n) / 2.0;
        *o = ((mid / total * parts as f64) as usize).min(parts - 1) as u8;
        acc += weight(n);
    }
    owner
}

impl<'a> World<'a> {
    /// Canonical order: the origin of an event (see the constants above).
    #[inline]
    fn origin_of(&self, ev: &Ev) -> usize {
        let node = match *ev {
            Ev::TxDone(port) | Ev::PfcRefresh { port, .. } | Ev::PfcResume { port, .. } => self.net.ports[port as usize].node,
            Ev::LinkArrive(port, _) => self.net.ports[port as usize].peer,
            Ev::SwitchOut(sw) | Ev::VoqWake { sw, .. } => sw,
            Ev::Sample | Ev::Stop | Ev::Link { .. } | Ev::PfcWatch => return GLOBAL,
            _ => return HOSTS,
        };
        if node < self.net.num_hosts {
            HOSTS
        } else {
            FIRST_SWITCH + (node - self.net.num_hosts) as usize
        }
    }

    /// The canonical queue for this network (World::new, before any event).
    pub(super) fn canonical_queue(net: &Network, wheel: bool) -> EventQueue<Ev> {
        let q = if wheel { EventQueue::with_wheel() } else { EventQueue::new() };
        q.with_origins(FIRST_SWITCH + net.kinds.len() - net.num_hosts as usize)
    }

    /// Make this world partition `me` of `parts`: keep only its events.
    fn into_partition(&mut self, me: usize, parts: usize) -> Result<(), RunError> {
        if parts > 1 {
            if let Some(why) = no_lookahead(&self.net).or_else(|| capture_at_a_switch(&self.net, &self.captures)) {
                return Err(RunError::Unsupported(why));
            }
        }
        let owner = partition(&self.net, parts);
        let lookahead = self.net.ports.iter().map(|p| p.delay).min().unwrap_or(Dur::ZERO);
        let switches = self.net.kinds.len() - self.net.num_hosts as usize;
        let mut sample_entries = Vec::new();
        let mut sampled = Vec::new();
        for (i, &p) in self.sampled_ports.iter().enumerate() {
            if owner[self.net.ports[p as usize].node as usize] as usize == me {
                sample_entries.push(i as u32);
                sampled.push(p);
            }
        }
        self.sampled_ports = sampled;
        self.part = Some(Box::new(Part {
            me,
            parts,
            owner,
            lookahead,
            tag_base: (FIRST_SWITCH + switches) as u64,
            outbox: (0..parts).map(|_| MailBag::default()).collect(),
            sent_min: SimTime(u64::MAX),
            leaving: Vec::new(),
            replicated: 0,
            sample_entries,
        }));
        let mut q = std::mem::take(&mut self.q);
        q.retain(|ev| {
            let o = self.origin_of(ev);
            o == GLOBAL || self.partition_of_origin(o) == me
        });
        self.q = q;
        Ok(())
    }

    fn partition_of_origin(&self, origin: usize) -> usize {
        let p = self.part.as_ref().expect("partitioned");
        match origin {
            HOSTS => 0,
            o => p.owner[self.net.num_hosts as usize + o - FIRST_SWITCH] as usize,
        }
    }

    /// A frame was put on the wire of `port` while its peer belongs to
    /// another partition, or with the canonical order: mail it, or
    /// schedule its arrival under the port's tag.
    #[cold]
    #[inline(never)]
    pub(super) fn wired_canonical(&mut self, port: u32, id: PktId) {
        let part = self.part.as_mut().expect("canonical order");
        let p = &mut self.net.ports[port as usize];
        let to = part.owner[p.peer as usize] as usize;
        if to != part.me {
            let (arrive, last) = p.on_wire.pop_back().expect("just put on the wire");
            debug_assert_eq!(last, id);
            part.leaving.push((to as u8, port, arrive, id));
            part.sent_min = part.sent_min.min(arrive);
        } else if p.on_wire.len() == 1 {
            let (arrive, id) = p.on_wire[0];
            self.q.schedule_tagged(arrive, part.arrival_tag(port), Ev::LinkArrive(port, id));
        }
    }

    /// A frame from another partition: onto this side's copy of its link.
    fn receive(&mut self, m: Mail, int: Option<&IntStack>) {
        let id = self.pool.alloc(m.pkt);
        if let Some(int) = int {
            self.set_int(id, int);
        }
        if self.net.ports[m.port as usize].put_on_wire(m.arrive, id) {
            let tag = self.part.as_ref().expect("partitioned").arrival_tag(m.port);
            self.q.schedule_tagged(m.arrive, tag, Ev::LinkArrive(m.port, id));
        }
    }

    /// Move the frames that left in this window into the outboxes.
    fn pack_leaving(&mut self) {
        let part = self.part.as_mut().expect("partitioned");
        let int = self.rdma.as_ref().filter(|r| r.int_hops > 0).map(|r| &r.int);
        for (to, port, arrive, id) in part.leaving.drain(..) {
            let bag = &mut part.outbox[to as usize];
            bag.frames.push(Mail { port, arrive, pkt: *self.pool.get(id) });
            if let Some(int) = int {
                bag.int.push(int[id.0 as usize]);
            }
            self.pool.free(id);
        }
    }

    /// Handle this partition's events before `end`; true if the run
    /// stopped: at the stop event, or, when the workload finished, at the
    /// window's end.
    fn run_window(&mut self, end: SimTime) -> bool {
        while self.q.peek_time().is_some_and(|t| t < end) {
            let (now, ev) = self.q.pop().expect("peeked");
            if self.prefetch {
                self.prefetch_next();
            }
            // The events this one schedules are its origin's.
            let origin = self.origin_of(&ev);
            self.q.set_origin(origin);
            let part = self.part.as_mut().expect("partitioned");
            if origin == GLOBAL && part.me != 0 {
                part.replicated += 1;
            }
            self.dispatch_canonical(now, ev);
            if matches!(ev, Ev::Stop) {
                return true;
            }
        }
        self.stop_reason.is_some()
    }

    /// Run partition `me` to the end, in step with the others through `sh`.
    fn run_partition(&mut self, sh: &Shared, progress: Option<&Progress>) -> Result<(), RunError> {
        let (me, parts, lookahead) = {
            let p = self.part.as_ref().expect("partitioned");
            (p.me, p.parts, p.lookahead.max(Dur(1)))
        };
        let end_ps = self.scenario.run.duration.map(|d| d.0.ps());
        let total_work = self.unfinished.max(1) as f64;
        let mut parity = 0;
        // The end of the last window (PFC's watch is decided at window ends).
        let mut end = SimTime::ZERO;
        sh.publish(parity, me, self.q.peek_time(), false, self.q.events_executed());
        sh.wait()?;
        loop {
            for from in 0..parts {
                if from != me {
                    // Drained in place: the sender gets the vector back, with its capacity.
                    let mut guard = sh.mailbox(parity, from, me).lock().expect("mailbox");
                    let MailBag { frames, int } = &mut *guard;
                    debug_assert!(int.is_empty() || int.len() == frames.len());
                    for (i, m) in frames.drain(..).enumerate() {
                        self.receive(m, int.get(i));
                    }
                    int.clear();
                }
            }
            let (next, stop, events) = sh.read(parity);
            if !stop && self.pfc.is_some() {
                let reports: Vec<_> = (0..parts).map(|from| sh.pfc_report(parity, from).lock().expect("PFC report")).collect();
                if self.pfc_decide(end, &reports) {
                    break;
                }
            }
            if stop || next == u64::MAX {
                break;
            }
            if me == 0 {
                if let Some(p) = progress {
                    p.now_ps.store(next, Ordering::Relaxed);
                    p.events.store(events, Ordering::Relaxed);
                    let frac = match end_ps {
                        Some(e) => next as f64 / e as f64,
                        None => 1.0 - self.unfinished as f64 / total_work,
                    };
                    p.fraction_bits.store(frac.to_bits(), Ordering::Relaxed);
                    if p.cancel.load(Ordering::Relaxed) {
                        // The others leave at their next barrier (`abort`).
                        return Err(RunError::Cancelled);
                    }
                }
            }
            parity ^= 1;
            end = SimTime(next) + lookahead;
            let stopped = self.run_window(end);
            self.pack_leaving();
            if self.pfc.is_some() {
                *sh.pfc_report(parity, me).lock().expect("PFC report") = self.pfc_report(end);
            }
            let part = self.part.as_mut().expect("partitioned");
            for (to, out) in part.outbox.iter_mut().enumerate() {
                if !out.frames.is_empty() {
                    std::mem::swap(&mut *sh.mailbox(parity, me, to).lock().expect("mailbox"), out);
                }
            }
            let sent = std::mem::replace(&mut part.sent_min, SimTime(u64::MAX));
            let next = self.q.peek_time().map_or(sent, |t| t.min(sent));
            let popped = self.q.events_executed() - part.replicated;
            sh.publish(parity, me, Some(next).filter(|t| t.0 != u64::MAX), stopped, popped);
            sh.wait()?;
        }
        Ok(())
    }
}

/// What the partitions share: a barrier, each one's report per window
/// parity, and the mailboxes (parity, from, to). A slot of one parity is
/// written two barriers after it was read, so one barrier per window suffices.
struct Shared {
    parts: usize,
    barrier: SpinBarrier,
    /// Per parity and partition: its next event time (u64::MAX: none).
    next: Vec<AtomicU64>,
    /// Per parity and partition: it stopped the run.
    stopped: Vec<AtomicBool>,
    /// Per parity and partition: events it has handled.
    events: Vec<AtomicU64>,
    /// A partition failed, panicked or was cancelled: the others leave
    /// the barrier and stop.
    abort: AtomicBool,
    mail: Vec<Mutex<MailBag>>,
    /// Per parity and partition: its part of PFC's pause watch.
    pfc: Vec<Mutex<PfcReport>>,
}

struct AbortOnPanic<'a>(&'a Shared);

impl Drop for AbortOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.abort.store(true, Ordering::Release);
        }
    }
}

impl Shared {
    fn new(parts: usize) -> Shared {
        Shared {
            parts,
            barrier: SpinBarrier::new(parts),
            next: (0..2 * parts).map(|_| AtomicU64::new(u64::MAX)).collect(),
            stopped: (0..2 * parts).map(|_| AtomicBool::new(false)).collect(),
            events: (0..2 * parts).map(|_| AtomicU64::new(0)).collect(),
            abort: AtomicBool::new(false),
            mail: (0..2 * parts * parts).map(|_| Mutex::new(MailBag::default())).collect(),
            pfc: (0..2 * parts).map(|_| Mutex::new(PfcReport::default())).collect(),
        }
    }

    /// Wait for every partition (Cancelled if one stopped early: its own
    /// error or panic is what the caller reports).
    fn wait(&self) -> Result<(), RunError> {
        if self.barrier.wait(&self.abort) {
            Ok(())
        } else {
            Err(RunError::Cancelled)
        }
    }

    fn mailbox(&self, parity: usize, from: usize, to: usize) -> &Mutex<MailBag> {
        &self.mail[(parity * self.parts + from) * self.parts + to]
    }

    fn pfc_report(&self, parity: usize, from: usize) -> &Mutex<PfcReport> {
        &self.pfc[parity * self.parts + from]
    }

    fn publish(&self, parity: usize, me: usize, next: Option<SimTime>, stopped: bool, events: u64) {
        let i = parity * self.parts + me;
        self.next[i].store(next.map_or(u64::MAX, |t| t.0), Ordering::Relaxed);
        self.stopped[i].store(stopped, Ordering::Relaxed);
        self.events[i].store(events, Ordering::Relaxed);
    }

    /// Over all partitions: the earliest next event, whether one stopped,
    /// and the events handled.
    fn read(&self, parity: usize) -> (u64, bool, u64) {
        let r = parity * self.parts..(parity + 1) * self.parts;
        let next = self.next[r.clone()].iter().map(|a| a.load(Ordering::Relaxed)).min().unwrap_or(u64::MAX);
        let stop = self.stopped[r.clone()].iter().any(|a| a.load(Ordering::Relaxed));
        let events = self.events[r].iter().map(|a| a.load(Ordering::Relaxed)).sum();
        (next, stop, events)
    }
}

/// A barrier that spins briefly, then yields (more threads than cores).
struct SpinBarrier {
    parts: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
}

impl SpinBarrier {
    fn new(parts: usize) -> Self {
        SpinBarrier { parts, arrived: AtomicUsize::new(0), generation: AtomicUsize::new(0) }
    }

    /// False if `abort` was raised while waiting.
    fn wait(&self, abort: &AtomicBool) -> bool {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.parts {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return true;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == generation {
            if abort.load(Ordering::Acquire) {
                return false;
            }
            if spins < 2000 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
        true
    }
}

/// Run a canonical-order scenario on `threads` threads.
pub fn run_threads(s: &Scenario, threads: usize, progress: Option<&Progress>) -> Result<RunOutput, RunError> {
    if let Some(why) = unsupported(s, threads) {
        return Err(RunError::Unsupported(why));
    }
    let t0 = Instant::now();
    let sh = Shared::new(threads);
    let run_one = |me: usize| -> Result<World<'_>, RunError> {
        // A partition that fails or panics releases the others from the barrier.
        let _guard = AbortOnPanic(&sh);
        let mut w = World::new(s);
        let result = w.into_partition(me, threads).and_then(|()| w.run_partition(&sh, progress));
        if result.is_err() {
            sh.abort.store(true, Ordering::Release);
        }
        result.map(|()| w)
    };
    let results: Vec<_> = if threads == 1 {
        vec![run_one(0)]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads).map(|me| scope.spawn(move || run_one(me))).collect();
            handles.into_iter().map(|h| h.join().expect("a partition thread panicked")).collect()
        })
    };
    // Errors are the same in every partition (the scenario's, or a cancel).
    let worlds = results.into_iter().collect::<Result<Vec<World>, _>>()?;
    let mut w = merge(worlds);
    w.ended(progress);
    let mut out = w.finish(t0.elapsed().as_secs_f64());
    out.summary.insert("threads".into(), serde_json::json!(threads));
    Ok(out)
}

/// Gather the partitions into partition 0's world: each port from its
/// owner, counters summed, queue samples interleaved as one run writes them.
fn merge(mut worlds: Vec<World>) -> World {
    let mut rest = worlds.split_off(1);
    let mut w = worlds.pop().expect("partition 0");
    if rest.is_empty() {
        return w;
    }
    let owner = w.part.as_ref().expect("partitioned").owner.clone();
    // Frames lost on a failed link are counted where they arrive.
    let mut losses = vec![0u64; w.net.ports.len()];
    for x in std::iter::once(&w).chain(&rest) {
        let me = x.part.as_ref().expect("partitioned").me;
        for (i, p) in x.net.ports.iter().enumerate() {
            if owner[p.node as usize] as usize != me {
                losses[i] += p.stats.link_losses;
            }
        }
    }
    for (i, lost) in losses.into_iter().enumerate() {
        let o = owner[w.net.ports[i].node as usize] as usize;
        if o != 0 {
            std::mem::swap(&mut w.net.ports[i], &mut rest[o - 1].net.ports[i]);
        }
        w.net.ports[i].stats.link_losses += lost;
    }
    let mut now = w.q.now();
    let mut events = w.q.events_executed();
    for x in &rest {
        w.packets_created += x.packets_created;
        w.packets_delivered += x.packets_delivered;
        w.packets_dropped += x.packets_dropped;
        w.live_elsewhere += x.pool.live() as u64;
        now = now.max(x.q.now());
        events += x.q.events_executed() - x.part.as_ref().expect("partitioned").replicated;
        w.stop_reason = w.stop_reason.or(x.stop_reason);
    }
    w.q.set_totals(now, events);
    // Each partition wrote, per sample time, a block of rows for its
    // sampled ports, and a VOQ switch's block for its own switch ports.
    let worlds: Vec<&World> = std::iter::once(&w).chain(&rest).collect();
    let queues = interleave(worlds.iter().map(|x| (&x.samples, x.part.as_ref().expect("partitioned").sample_entries.clone())));
    let voq = interleave(worlds.iter().map(|x| {
        let part = x.part.as_ref().expect("partitioned");
        let at_switches = part.sample_entries.iter().zip(&x.sampled_ports).filter(|(_, &p)| x.net.ports[p as usize].node >= x.net.num_hosts);
        (&x.voq_samples, at_switches.map(|(&e, _)| e).collect())
    }));
    if !w.voqs.is_empty() {
        for (v, &o) in owner[w.net.num_hosts as usize..].iter().enumerate().filter(|&(_, &o)| o != 0) {
            std::mem::swap(&mut w.voqs[v], &mut rest[o as usize - 1].voqs[v]);
        }
    }
    (w.samples, w.voq_samples) = (queues, voq);
    w
}

/// Sample rows written per sample time in blocks, one per partition, for
/// the sampled ports at `entries` of the scenario's list: interleaved in
/// that list's order, as one run writes them.
fn interleave<'a>(parts: impl Iterator<Item = (&'a QueueSamples, Vec<u32>)>) -> QueueSamples {
    let parts: Vec<_> = parts.collect();
    let mut merged = QueueSamples { time: Vec::new(), port: Vec::new(), bytes: Vec::new(), packets: Vec::new() };
    let times = parts.iter().find(|(_, e)| !e.is_empty()).map_or(0, |(s, e)| s.time.len() / e.len());
    let mut rows: Vec<(u32, usize, usize)> = Vec::new();
    for k in 0..times {
        rows.clear();
        for (pi, (_, entries)) in parts.iter().enumerate() {
            rows.extend(entries.iter().enumerate().map(|(j, &e)| (e, pi, k * entries.len() + j)));
        }
        rows.sort_unstable();
        for &(_, pi, r) in &rows {
            let s = parts[pi].0;
            merged.time.push(s.time[r]);
            merged.port.push(s.port[r]);
            merged.bytes.push(s.bytes[r]);
            merged.packets.push(s.packets[r]);
        }
    }
    merged
}
