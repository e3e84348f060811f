//! PFC in the world (crate::pfc has the per-port state machines): ingress
//! accounting at switches, PAUSE frames on the wire, their effect on the
//! receiving port, and the watch for pause cycles. See docs/models/pfc.md.

use super::*;
use crate::packet::FrameKind;
use crate::pfc::{self, PfcPort, Signal};
use crate::units::{Headroom, Xoff};

/// A frame that PFC's ingress accounting does not count.
pub(super) const NOT_COUNTED: u32 = u32::MAX;

/// PFC's settings resolved per port.
pub(super) struct PfcRun {
    xoff: Xoff,
    /// Per port: with xoff = "dynamic", its share of the free buffer.
    alpha: Vec<f64>,
    xon_offset: u64,
    quanta: u16,
    response: Dur,
    deadlock_after: Dur,
    /// Classes at a switch egress (a packet's class is min(dscp, classes - 1)).
    classes: usize,
    /// Per port: headroom per lossless class, and the refresh interval.
    headroom: Vec<u64>,
    refresh: Vec<Dur>,
    /// Per switch (node - num_hosts): headroom the shared buffer reserves.
    reserved: Vec<u64>,
    /// Scheduled order: a watch event is pending.
    watching: bool,
    /// Canonical order (world/parallel.rs), where the watch runs at window
    /// ends: the earliest PAUSE received in the current window, and when
    /// the watch is next due.
    first_pause: Option<SimTime>,
    watch_due: Option<SimTime>,
    /// The pause cycle found, if any: when, its class and its ports.
    pub(super) deadlock: Option<(SimTime, usize, Vec<u32>)>,
}

/// One partition's part of the pause watch at a window's end (canonical order).
#[derive(Default)]
pub(super) struct PfcReport {
    /// The earliest PAUSE its ports received in the window.
    first_pause: Option<SimTime>,
    /// If the watch was due: whether any of its ports is stopped, and its
    /// stuck ports as (class, port).
    any_paused: bool,
    stuck: Vec<(u8, u32)>,
}

impl PfcRun {
    pub(super) fn new(s: &Scenario, net: &mut Network) -> PfcRun {
        let cfg = s.switch.pfc.as_ref().expect("PFC configured");
        let lossless = s.pfc_lossless();
        let max_frame = s.max_frame_bytes() + if s.link.framing.preamble() { crate::packet::PREAMBLE } else { 0 };
        let mut alpha = Vec::with_capacity(net.ports.len());
        let mut headroom = Vec::with_capacity(net.ports.len());
        let mut refresh = Vec::with_capacity(net.ports.len());
        let mut reserved = vec![0; net.kinds.len() - net.num_hosts as usize];
        for p in &mut net.ports {
            let h = match cfg.headroom {
                Headroom::Bytes(b) => b,
                Headroom::Auto => pfc::headroom(p.rate, p.delay, cfg.response_time.0, max_frame),
            };
            let at_switch = p.node >= net.num_hosts;
            if at_switch {
                reserved[(p.node - net.num_hosts) as usize] += h * lossless.count_ones() as u64;
            }
            headroom.push(h);
            alpha.push(cfg.per.map_or(cfg.alpha, |per| (cfg.alpha * p.rate.bps as f64 / per.0.bps as f64).min(1.0)));
            refresh.push(cfg.refresh.map_or_else(|| Dur(pfc::pause_time(cfg.quanta, p.rate).ps() / 2), |r| r.0));
            // Hosts' NICs obey PAUSE frames but never send them.
            p.pfc = Some(Box::new(PfcPort::new(if at_switch { lossless } else { 0 }, s.switch_classes())));
        }
        PfcRun {
            xoff: cfg.xoff,
            alpha,
            xon_offset: cfg.xon_offset.map_or(2 * max_frame, |b| b.0),
            quanta: cfg.quanta,
            response: cfg.response_time.0,
            deadlock_after: cfg.deadlock_after.0,
            classes: s.switch_classes(),
            headroom,
            refresh,
            reserved,
            watching: false,
            first_pause: None,
            watch_due: None,
            deadlock: None,
        }
    }
}

impl World<'_> {
    /// The XOFF level of a switch's ingress port now.
    fn pfc_xoff(&self, in_port: u32) -> u64 {
        let run = self.pfc.as_ref().expect("PFC");
        match run.xoff {
            Xoff::Bytes(b) => b,
            Xoff::Dynamic => {
                let i = (self.net.ports[in_port as usize].node - self.net.num_hosts) as usize;
                let b = &self.net.shared[i];
                (run.alpha[in_port as usize] * b.size.saturating_sub(run.reserved[i] + b.used) as f64) as u64
            }
        }
    }

    /// A frame came in on a switch's `in_port`: count it against its
    /// class, pause the upstream past XOFF. False: it is beyond the
    /// headroom and dropped (the caller frees it).
    pub(super) fn pfc_arrive(&mut self, now: SimTime, in_port: u32, id: PktId) -> bool {
        let run = self.pfc.as_ref().expect("PFC");
        let pkt = self.pool.get(id);
        let class = (pkt.dscp as usize).min(run.classes - 1);
        let bytes = pkt.wire_bytes as u64;
        let headroom = run.headroom[in_port as usize];
        let xoff = self.pfc_xoff(in_port);
        let p = self.net.ports[in_port as usize].pfc.as_mut().expect("a PFC port");
        if !p.is_lossless(class) {
            self.pool.get_mut(id).ingress_port = NOT_COUNTED;
            return true;
        }
        if !p.admits(class, bytes, headroom) {
            return false;
        }
        self.pool.get_mut(id).ingress_port = in_port;
        if p.arrive(class, bytes, xoff) == Signal::Xoff {
            self.pfc_send(now, in_port, class, true);
        }
        true
    }

    /// A frame left a switch (sent, or dropped at its egress): release its
    /// ingress bytes, and resume the upstream once below XON.
    pub(super) fn pfc_depart(&mut self, now: SimTime, id: PktId) {
        let pkt = self.pool.get(id);
        let in_port = pkt.ingress_port;
        if in_port == NOT_COUNTED || pkt.kind == FrameKind::Pause {
            return;
        }
        let run = self.pfc.as_ref().expect("PFC");
        let class = (pkt.dscp as usize).min(run.classes - 1);
        let bytes = pkt.wire_bytes as u64;
        let xon = self.pfc_xoff(in_port).saturating_sub(run.xon_offset);
        self.pool.get_mut(id).ingress_port = NOT_COUNTED;
        let p = self.net.ports[in_port as usize].pfc.as_mut().expect("a PFC port");
        if p.depart(class, bytes, xon) == Signal::Xon {
            self.pfc_send(now, in_port, class, false);
        }
    }

    /// Send a PAUSE frame for `class` out of `port` (`pause`: the configured
    /// quanta, and arm the refresh; else zero quanta, a resume).
    fn pfc_send(&mut self, now: SimTime, port: u32, class: usize, pause: bool) {
        let run = self.pfc.as_ref().expect("PFC");
        let p = &self.net.ports[port as usize];
        let mut frame = Packet {
            kind: FrameKind::Pause,
            dscp: class as u8,
            pause_quanta: if pause { run.quanta } else { 0 },
            src_host: p.node,
            dst_host: p.peer,
            conn: u32::MAX,
            ingress_port: NOT_COUNTED,
            ..Default::default()
        };
        frame.finalize_size(self.preamble);
        if pause {
            let gen = p.pfc.as_ref().expect("a PFC port").refresh_gen[class];
            self.q.schedule(now + run.refresh[port as usize], Ev::PfcRefresh { port, class: class as u8, gen });
        }
        let id = self.pool.alloc(frame);
        self.packets_created += 1;
        if self.net.ports[port as usize].send_control(now, id, &mut self.pool) {
            self.start_tx(now, port);
        }
    }

    /// The refresh of a pause fell due: pause again if still above XON.
    pub(super) fn pfc_refresh(&mut self, now: SimTime, port: u32, class: u8, gen: u32) {
        let p = self.net.ports[port as usize].pfc.as_mut().expect("a PFC port");
        if p.refresh_due(class as usize, gen) {
            self.pfc_send(now, port, class as usize, true);
        }
    }

    /// A PAUSE frame arrived over the link of `port` (the sender's port):
    /// it stops or resumes the receiver's port on that link.
    pub(super) fn pfc_receive(&mut self, now: SimTime, port: u32, id: PktId) {
        let pkt = self.pool.get(id);
        let (class, quanta) = (pkt.dscp as usize, pkt.pause_quanta);
        self.pool.free(id);
        self.packets_delivered += 1;
        let target = Network::reverse(port);
        let run = self.pfc.as_mut().expect("PFC");
        let from = now + run.response;
        let p = &mut self.net.ports[target as usize];
        let time = pfc::pause_time(quanta, p.rate);
        let resume_at = p.pfc.as_mut().expect("a PFC port").on_pause(now, class, from, time);
        if let Some(t) = resume_at {
            self.q.schedule(t, Ev::PfcResume { port: target, class: class as u8 });
        }
        if quanta > 0 && self.part.is_some() {
            run.first_pause.get_or_insert(now); // events come in time order
        } else if quanta > 0 && !run.watching {
            run.watching = true;
            self.q.schedule(now + run.deadlock_after, Ev::PfcWatch);
        }
        if quanta == 0 {
            if from > now {
                self.q.schedule(from, Ev::PfcResume { port: target, class: class as u8 });
            } else {
                self.pfc_restart(now, target);
            }
        }
    }

    /// A pause's time ran out (or a delayed resume took effect).
    pub(super) fn pfc_resume(&mut self, now: SimTime, port: u32, class: u8) {
        let p = self.net.ports[port as usize].pfc.as_mut().expect("a PFC port");
        if p.resume_due(now, class as usize) || p.paused_mask(now) & (1 << class) == 0 {
            self.pfc_restart(now, port);
        }
    }

    /// An idle port with waiting frames may send again.
    pub(super) fn pfc_restart(&mut self, now: SimTime, port: u32) {
        let p = &mut self.net.ports[port as usize];
        let shared = p.shared.map(|i| &mut self.net.shared[i as usize]);
        let (started, dropped) = p.resume(now, &mut self.pool, shared);
        self.packets_dropped += dropped as u64;
        let node = p.node;
        if started {
            self.start_tx(now, port);
        } else if self.rdma.is_some() && node < self.net.num_hosts {
            self.rdma_kick(now, node);
        }
    }

    /// Look for a pause cycle: ports each stopped for at least
    /// `deadlock_after` with frames of the class waiting, each paused by a
    /// switch whose own port towards the next is stopped too. Such frames
    /// can never leave (docs/models/pfc.md); the run stops and reports them.
    pub(super) fn pfc_watch(&mut self, now: SimTime) {
        let (stuck, any_paused) = self.pfc_stuck(now, |_| true);
        if self.pfc_stop_at_cycle(now, &stuck) {
            return;
        }
        let run = self.pfc.as_mut().expect("PFC");
        run.watching = any_paused;
        if any_paused {
            self.q.schedule(now + run.deadlock_after, Ev::PfcWatch);
        }
    }

    /// The stuck ports at `now` among those of the nodes `mine` selects, as
    /// (class, port) in that order, and whether any of them is stopped.
    fn pfc_stuck(&self, now: SimTime, mine: impl Fn(u32) -> bool) -> (Vec<(u8, u32)>, bool) {
        let run = self.pfc.as_ref().expect("PFC");
        let mut stuck = Vec::new();
        let mut any_paused = false;
        for class in 0..run.classes {
            for (i, p) in self.net.ports.iter().enumerate().filter(|(_, p)| mine(p.node)) {
                let stopped = p.pfc.as_ref().expect("a PFC port").stopped_for(now, class);
                any_paused |= stopped > Dur::ZERO;
                if stopped >= run.deadlock_after && p.class_backlog(class) > 0 {
                    stuck.push((class as u8, i as u32));
                }
            }
        }
        (stuck, any_paused)
    }

    /// A cycle among the `stuck` ports (sorted by class, then port), in the
    /// lowest class that has one: it stops the run. True if found.
    fn pfc_stop_at_cycle(&mut self, now: SimTime, stuck: &[(u8, u32)]) -> bool {
        for class_ports in stuck.chunk_by(|a, b| a.0 == b.0) {
            // Stuck ports per node, in port order.
            let mut stuck_at: Vec<Vec<u32>> = vec![Vec::new(); self.net.kinds.len()];
            for &(_, port) in class_ports {
                stuck_at[self.net.ports[port as usize].node as usize].push(port);
            }
            if let Some(cycle) = find_cycle(&stuck_at, |port| self.net.ports[port as usize].peer) {
                self.pfc.as_mut().expect("PFC").deadlock = Some((now, class_ports[0].0 as usize, cycle));
                self.stop_reason = Some("pfc deadlock");
                return true;
            }
        }
        false
    }

    /// Canonical order: this partition's part of the watch at the end of a
    /// window.
    pub(super) fn pfc_report(&mut self, end: SimTime) -> PfcReport {
        let run = self.pfc.as_mut().expect("PFC");
        let first_pause = run.first_pause.take();
        if !run.watch_due.is_some_and(|due| due <= end) {
            return PfcReport { first_pause, ..Default::default() };
        }
        let part = self.part.as_ref().expect("partitioned");
        let (stuck, any_paused) = self.pfc_stuck(end, |node| part.owns(node));
        PfcReport { first_pause, any_paused, stuck }
    }

    /// Canonical order: every partition's report of the window that ended
    /// at `end`, the same in every partition, so each decides the same. The
    /// watch runs at the first window end after it is due (a pause's first
    /// arrival plus `deadlock_after`, then every `deadlock_after` while a
    /// port is stopped). True if a pause cycle stops the run.
    pub(super) fn pfc_decide(&mut self, end: SimTime, reports: &[impl std::ops::Deref<Target = PfcReport>]) -> bool {
        let run = self.pfc.as_ref().expect("PFC");
        let (after, mut due) = (run.deadlock_after, run.watch_due);
        if due.is_some_and(|d| d <= end) {
            let mut stuck: Vec<(u8, u32)> = reports.iter().flat_map(|r| r.stuck.iter().copied()).collect();
            stuck.sort_unstable();
            if self.pfc_stop_at_cycle(end, &stuck) {
                return true;
            }
            due = reports.iter().any(|r| r.any_paused).then(|| end + after);
        }
        if due.is_none() {
            due = reports.iter().filter_map(|r| r.first_pause).min().map(|t| t + after);
        }
        self.pfc.as_mut().expect("PFC").watch_due = due;
        false
    }

    /// Per port and class with any PFC activity: its counters.
    pub(super) fn pfc_table(&mut self) -> Table {
        let now = self.q.now();
        let (mut port, mut node, mut peer, mut class) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut ps, mut rs, mut pr, mut rr) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut paused, mut longest, mut hdrops, mut maxin) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (i, p) in self.net.ports.iter_mut().enumerate() {
            let Some(pfc) = p.pfc.as_mut() else { continue };
            pfc.close(now);
            for (c, s) in pfc.stats.iter().enumerate() {
                if s.pauses_sent + s.pauses_received + s.headroom_drops + s.max_ingress_bytes == 0 {
                    continue;
                }
                port.push(i as u32);
                node.push(self.net.names[p.node as usize].clone());
                peer.push(self.net.names[p.peer as usize].clone());
                class.push(c as u32);
                ps.push(s.pauses_sent);
                rs.push(s.resumes_sent);
                pr.push(s.pauses_received);
                rr.push(s.resumes_received);
                paused.push(s.paused.as_secs_f64());
                longest.push(s.longest_pause.as_secs_f64());
                hdrops.push(s.headroom_drops);
                maxin.push(s.max_ingress_bytes);
            }
        }
        Table::new("pfc")
            .col("port", Col::U32(port))
            .col("node_name", Col::Str(node))
            .col("peer_name", Col::Str(peer))
            .col("class", Col::U32(class))
            .col("pauses_sent", Col::U64(ps))
            .col("resumes_sent", Col::U64(rs))
            .col("pauses_received", Col::U64(pr))
            .col("resumes_received", Col::U64(rr))
            .col("paused_time", Col::F64(paused))
            .col("longest_pause", Col::F64(longest))
            .col("headroom_drops", Col::U64(hdrops))
            .col("max_ingress_bytes", Col::U64(maxin))
    }
}

/// A cycle in the graph whose vertices are the stuck ports (listed per
/// owning node in `stuck_at`), with an edge from each port to the stuck
/// ports of its peer node. Returns the ports of one cycle, in order.
fn find_cycle(stuck_at: &[Vec<u32>], peer: impl Fn(u32) -> u32) -> Option<Vec<u32>> {
    // Iterative depth-first search; state per port id: 0 new, 1 on the path, 2 done.
    let mut state: std::collections::BTreeMap<u32, u8> = std::collections::BTreeMap::new();
    for &start in stuck_at.iter().flatten() {
        if state.contains_key(&start) {
            continue;
        }
        let mut path: Vec<(u32, usize)> = vec![(start, 0)];
        state.insert(start, 1);
        while let Some(&(port, next)) = path.last() {
            if let Some(&q) = stuck_at[peer(port) as usize].get(next) {
                path.last_mut().expect("non-empty").1 += 1;
                match state.get(&q) {
                    None => {
                        state.insert(q, 1);
                        path.push((q, 0));
                    }
                    Some(1) => {
                        let from = path.iter().position(|&(p, _)| p == q).expect("on the path");
                        return Some(path[from..].iter().map(|&(p, _)| p).collect());
                    }
                    _ => {}
                }
            } else {
                state.insert(port, 2);
                path.pop();
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::find_cycle;

    #[test]
    fn finds_a_pause_cycle_and_nothing_in_a_chain() {
        // Ports 0..3 in a ring of nodes 0 -> 1 -> 2 -> 0 (port i at node i, peer (i+1) % 3).
        let ring = vec![vec![0], vec![1], vec![2]];
        let cycle = find_cycle(&ring, |p| (p + 1) % 3).unwrap();
        assert_eq!(cycle, [0, 1, 2]);
        // A chain 0 -> 1 -> 2 (node 2 has no stuck port): no cycle.
        let chain = vec![vec![0], vec![1], vec![]];
        assert_eq!(find_cycle(&chain, |p| p + 1), None);
    }
}
