//! The world: every component, the event queue, and the one `dispatch` that
//! moves packets between them.

use crate::config::{
    bulk_pairs, EventOrder, Bulk, Flows, Incast, LoadReference, Poisson, RequestArrival, Requests, SamplePorts, Scenario, Search, ServiceTime, Topology,
    Workload,
};
use crate::traffic::{exp_interval, service_time, PoissonGen, SizeDist};
use crate::pacer::{Admit, HullPacer, PacerFlow};
use crate::packet::{flags, FrameKind, Packet, PacketPool, PktId};
use crate::pcap::{Capture, Isns};
use crate::port::Offer;
use crate::results::{Col, Table};
use crate::tcp::{Endpoint, TcpOut, TcpParams, TcpStats, TimerKind, TraceRow};
use crate::topology::{streams, Network, NodeKind};
use crate::units::{FlowSize, QSize};
use crate::voq::VoqSwitch;
use dcsim_engine::{Dur, EventQueue, Rng, SimTime, StreamId};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

mod incast;
mod homa;
mod ndp;
mod parallel;
mod pfc;
mod poisson;
mod rdma;
mod requests;
mod search;
mod tables;

use incast::IncastApp;
use homa::HomaRun;
use ndp::NdpRun;
use parallel::Part;
pub use parallel::{run_threads, unsupported};
use pfc::PfcRun;
use rdma::RdmaRun;
use requests::RequestsApp;
use search::SearchApp;

const NO_CAPTURE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
enum Ev {
    /// A port finished serialising its current frame.
    TxDone(u32),
    /// The head frame on a port's link (port, frame) reached the other end.
    LinkArrive(u32, PktId),
    /// The head of a switch's forwarding-latency line is due at its egress port.
    SwitchOut(u32),
    Timer { ep: u32, kind: TimerKind, gen: u32 },
    FlowStart(u32),
    /// Incast app: open connections (before round 1) or start the next round.
    IncastNext(u32),
    /// A Poisson workload's source (index into its sources) starts a flow.
    PoissonArrival { app: u32, source: u32 },
    /// The head of a host's RTT-variation delay line is due at its NIC.
    HostDelay(u32),
    /// Search app: open the connections (first time) or send the next query.
    SearchQuery(u32),
    /// Search app: a server finished serving its current query.
    SearchServed { app: u32, server: u32 },
    /// Requests app: open the closed-loop connections, or the next Poisson request.
    Request(u32),
    /// Requests app: a closed-loop request whose send jitter has passed.
    RequestSend { app: u32, server: u32 },
    /// A host's pacer may release its head packet (or its rate update moves it).
    Pacer { host: u32, generation: u32 },
    /// A link (given by one of its ports) fails or recovers.
    Link { port: u32, up: bool },
    /// A VOQ switch's oracle: an egress port can take a waiting frame now.
    VoqWake { sw: u32, egress: u32 },
    /// PFC: resend a port's PAUSE for a class if still above XON (stale
    /// unless `gen` is the class's refresh generation).
    PfcRefresh { port: u32, class: u8, gen: u32 },
    /// PFC: a port's pause of a class may have ended.
    PfcResume { port: u32, class: u8 },
    /// PFC: look for pause cycles.
    PfcWatch,
    /// RDMA: a host's NIC may send (a rate limiter allows a QP again).
    RdmaWake(u32),
    /// RDMA: a QP's timer (rdma::RTO, ALPHA, INCREASE, DECREASE) of a generation.
    RdmaTimer { qp: u32, kind: u8, gen: u32 },
    /// NDP: a receiving host's pull pacer may send its next PULL.
    NdpPacer(u32),
    /// NDP: a sender's backstop timer.
    NdpTimer(u32),
    /// Homa: receiver `host`'s grant pacer for sender `src` may fire.
    HomaGrant { host: u32, src: u32 },
    Sample,
    Stop,
}

/// Shared with another thread to watch a run and to cancel it.
#[derive(Default)]
pub struct Progress {
    pub now_ps: AtomicU64,
    pub events: AtomicU64,
    /// Fraction of the run done, as f64 bits.
    pub fraction_bits: AtomicU64,
    pub cancel: AtomicBool,
}

impl Progress {
    pub fn fraction(&self) -> f64 {
        f64::from_bits(self.fraction_bits.load(Ordering::Relaxed))
    }
}

#[derive(Debug)]
pub enum RunError {
    Cancelled,
    /// The scenario cannot run this way (the message says why).
    Unsupported(String),
}

pub struct RunOutput {
    pub tables: Vec<Table>,
    pub summary: serde_json::Map<String, serde_json::Value>,
    /// Packet captures: (file name without .pcap, pcap file bytes).
    pub pcaps: Vec<(String, Vec<u8>)>,
}

impl RunOutput {
    pub fn table(&self, name: &str) -> &Table {
        self.tables.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no table {name}"))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FlowKind {
    Bulk,
    Response,
}

impl FlowRec {
    /// Sending and receiving endpoints.
    fn endpoints(&self) -> (u32, u32) {
        match self.kind {
            FlowKind::Bulk => (self.conn * 2, self.conn * 2 + 1),
            FlowKind::Response => (self.conn * 2 + 1, self.conn * 2),
        }
    }
}

struct FlowRec {
    workload: u32,
    kind: FlowKind,
    src: u32,
    dst: u32,
    size: Option<u64>,
    start: SimTime,
    conn: u32,
    /// Bytes of this flow delivered in order at the destination.
    received: u64,
    end: Option<SimTime>,
    round: u32,
    /// Sender and receiver counters when the flow started; once it has
    /// ended, its own counts (a persistent connection's later flows must not
    /// count toward it). See `World::complete_flow`.
    sender_at_start: TcpStats,
    receiver_at_start: TcpStats,
    new_connection: bool,
    /// DSCP of the sender's packets.
    dscp: u8,
    /// The sender's (smallest RTT sample, SRTT) when the flow ended.
    sender_rtt: Option<(Dur, Dur)>,
}

#[derive(Clone, Copy, Debug)]
enum ConnApp {
    /// `persistent`: back to the pool of its host pair when the flow ends.
    Bulk { flow: u32, persistent: bool },
    Incast { app: u32, slot: u32 },
    Search { app: u32, server: u32 },
    Requests { app: u32, slot: u32 },
}

struct QueryRow {
    workload: u32,
    round: u32,
    start: SimTime,
    end: SimTime,
    responders: u32,
    timeouts: u64,
    retransmits: u64,
    /// Responses within the workload's deadline (-1: no deadline).
    within_deadline: i64,
}

struct QueueSamples {
    time: Vec<f64>,
    port: Vec<u32>,
    bytes: Vec<u64>,
    packets: Vec<u64>,
}

pub struct World<'a> {
    scenario: &'a Scenario,
    q: EventQueue<Ev>,
    net: Network,
    pool: PacketPool,
    /// Per switch (index node - num_hosts): frames waiting out the forwarding latency.
    fwd_line: Vec<VecDeque<(SimTime, PktId, u32)>>,
    /// Some switch has a forwarding latency (else no frame reads the table).
    switch_latency: bool,
    preamble: bool,
    tcp: TcpParams,
    eps: Vec<Endpoint>,
    conn_app: Vec<ConnApp>,
    flows: Vec<FlowRec>,
    incast: Vec<IncastApp>,
    poisson: Vec<PoissonGen>,
    search: Vec<SearchApp>,
    requests: Vec<RequestsApp>,
    queries: Vec<QueryRow>,
    out: TcpOut,
    isn_rng: Rng,
    hash_rng: Rng,
    unfinished: u64,
    stop_reason: Option<&'static str>,
    sampled_ports: Vec<u32>,
    samples: QueueSamples,
    sample_interval: Dur,
    captures: Vec<Capture>,
    /// Per-flow RTT variation: class delays (the last entry is the reverse
    /// direction's), each connection's class, and one FIFO line per
    /// (host, class).
    delay_classes: Vec<Dur>,
    conn_class: Vec<u8>,
    delay_lines: Vec<VecDeque<(SimTime, PktId)>>,
    class_rng: Rng,
    /// Per host: its pacer (empty when none is configured); per endpoint:
    /// its association and counters; scratch for released packets.
    pacers: Vec<HullPacer>,
    pacer_flows: Vec<PacerFlow>,
    released: Vec<PktId>,
    /// VOQ switches (seed 004 §4.3), one per switch when configured, each
    /// port's index within its switch, and the ingress occupancy samples.
    voqs: Vec<VoqSwitch>,
    voq_local: Vec<u32>,
    voq_samples: QueueSamples,
    /// TCP Small Queues: the limit in bytes (0: off) and, per endpoint, its
    /// bytes between TCP and the wire of its host.
    tsq_limit: u64,
    tsq_held: Vec<u64>,
    /// Prefetch the next event's state (large networks only: where ports
    /// fit in the cache it only costs instructions).
    prefetch: bool,
    /// Per source host: idle persistent connections as (destination, connection).
    idle_conns: Vec<Vec<(u32, u32)>>,
    /// Per port: index into `captures` of the capture on its link end, or NO_CAPTURE.
    capture_at: Vec<u32>,
    /// Flow filters of captures, resolved to connections when flows start.
    capture_flow: Vec<Option<u32>>,
    /// PFC's settings and deadlock report, when configured.
    pfc: Option<PfcRun>,
    /// RDMA's queue pairs and NICs, when flows run over RDMA.
    rdma: Option<RdmaRun>,
    /// NDP's senders, receivers and pull pacers, when flows run over NDP.
    ndp: Option<NdpRun>,
    /// Homa's messages and schedulers, when flows are Homa messages.
    homa: Option<Box<HomaRun>>,
    /// The hosts' NICs take data from RDMA QPs, NDP senders or Homa
    /// messages when their port is free (`nic_free`).
    nic_pulls: bool,
    /// HPCC: switch ports stamp INT records on data packets.
    int_on: bool,
    /// A frame's start concerns more than its port (`started_tx_extras`).
    start_extras: bool,
    /// With the canonical event order: this world's partition of the run.
    part: Option<Box<Part>>,
    /// Packets held by the other partitions when they were merged into this one.
    live_elsewhere: u64,
    // Packet conservation.
    pub packets_created: u64,
    pub packets_delivered: u64,
    pub packets_dropped: u64,
}

impl<'a> World<'a> {
    pub fn new(s: &'a Scenario) -> World<'a> {
        let net = Network::build(s);
        let switches = net.kinds.len() - net.num_hosts as usize;
        let sampled_ports: Vec<u32> = match &s.output.queue_sample_ports {
            SamplePorts::Ports(ports) => ports.clone(),
            which => (0..net.ports.len() as u32)
                .filter(|&p| *which == SamplePorts::All || net.kinds[net.ports[p as usize].node as usize] == NodeKind::Switch)
                .collect(),
        };
        let mut capture_at = vec![NO_CAPTURE; net.ports.len()];
        let mut captures = Vec::new();
        let mut capture_flow = Vec::new();
        for c in &s.output.pcap {
            let port = c.port.unwrap_or_else(|| c.host.map(|h| net.nic(h)).expect("validated: host or port"));
            capture_at[port as usize] = captures.len() as u32;
            captures.push(Capture::new(c.file_name(), port, c.flow.is_some(), c.snaplen));
            capture_flow.push(c.flow);
        }
        let net_hosts = net.num_hosts;
        let net_ports = net.ports.len();
        let nic_rates: Vec<dcsim_engine::Rate> = if s.host.pacer.is_some() { (0..net_hosts).map(|h| net.ports[net.nic(h) as usize].rate).collect() } else { Vec::new() };
        let switch_latency = net.fwd_latency.iter().any(|&d| d > Dur::ZERO);
        let mut w = World {
            scenario: s,
            q: match s.run.event_order {
                EventOrder::Scheduled if net_ports >= WHEEL_MIN_PORTS => EventQueue::with_wheel(),
                EventOrder::Scheduled => EventQueue::new(),
                EventOrder::Canonical => World::canonical_queue(&net, net_ports >= WHEEL_MIN_PORTS),
            },
            net,
            pool: PacketPool::default(),
            fwd_line: (0..switches).map(|_| VecDeque::new()).collect(),
            switch_latency,
            preamble: s.link.framing.preamble(),
            tcp: TcpParams::from_scenario(s),
            eps: Vec::new(),
            conn_app: Vec::new(),
            flows: Vec::new(),
            incast: Vec::new(),
            poisson: Vec::new(),
            search: Vec::new(),
            requests: Vec::new(),
            queries: Vec::new(),
            out: TcpOut { trace_enabled: s.output.tcp_trace, ..Default::default() },
            isn_rng: Rng::stream(s.run.seed, StreamId { kind: streams::TCP_ISN, index: 0 }),
            hash_rng: Rng::stream(s.run.seed, StreamId { kind: streams::FLOW_HASH, index: 0 }),
            unfinished: 0,
            stop_reason: None,
            sampled_ports,
            samples: QueueSamples { time: Vec::new(), port: Vec::new(), bytes: Vec::new(), packets: Vec::new() },
            sample_interval: s.output.queue_sample_interval.0,
            captures,
            delay_classes: match &s.host.rtt_variation {
                Some(crate::config::RttVariation::PerFlow(v)) => v.classes.iter().map(|d| d.0).chain([v.reverse.0]).collect(),
                _ => Vec::new(),
            },
            conn_class: Vec::new(),
            delay_lines: Vec::new(),
            class_rng: Rng::stream(s.run.seed, StreamId { kind: streams::RTT_VARIATION, index: 0 }),
            pacers: match &s.host.pacer {
                Some(crate::config::Pacer::Hull(cfg)) => (0..net_hosts)
                    .map(|h| HullPacer::new(cfg, nic_rates[h as usize], Rng::stream(s.run.seed, StreamId { kind: streams::PACER, index: h as u64 })))
                    .collect(),
                None => Vec::new(),
            },
            pacer_flows: Vec::new(),
            released: Vec::new(),
            voqs: Vec::new(),
            voq_local: Vec::new(),
            voq_samples: QueueSamples { time: Vec::new(), port: Vec::new(), bytes: Vec::new(), packets: Vec::new() },
            tsq_limit: s.host.tsq.map_or(0, |b| b.0),
            tsq_held: Vec::new(),
            prefetch: net_ports >= PREFETCH_MIN_PORTS,
            idle_conns: vec![Vec::new(); net_hosts as usize],
            capture_at,
            capture_flow,
            pfc: None,
            rdma: None,
            ndp: None,
            homa: None,
            nic_pulls: s.rdma.is_some() || s.ndp.is_some() || s.homa.is_some(),
            int_on: false,
            start_extras: false,
            part: None,
            live_elsewhere: 0,
            packets_created: 0,
            packets_delivered: 0,
            packets_dropped: 0,
        };
        w.delay_lines = (0..w.net.num_hosts as usize * w.delay_classes.len()).map(|_| VecDeque::new()).collect();
        if let Some(cfg) = &s.switch.voq {
            w.voq_local = vec![u32::MAX; w.net.ports.len()];
            for sw in w.net.num_hosts as usize..w.net.kinds.len() {
                let ports = w.net.node_ports[sw].clone();
                for (i, &p) in ports.iter().enumerate() {
                    w.voq_local[p as usize] = i as u32;
                }
                w.voqs.push(VoqSwitch::new(cfg, ports));
            }
        }
        if s.switch.pfc.is_some() {
            w.pfc = Some(PfcRun::new(s, &mut w.net));
        }
        if s.rdma.is_some() {
            w.rdma = Some(RdmaRun::new(s, &w.net, w.preamble));
        }
        if s.ndp.is_some() {
            w.ndp = Some(NdpRun::new(s, &w.net, w.preamble));
        }
        if s.homa.is_some() {
            w.homa = Some(Box::new(HomaRun::new(s, &w.net, w.preamble)));
        }
        let int = w.rdma.as_ref().is_some_and(|r| r.int_hops > 0);
        w.int_on = int;
        w.start_extras = int || !w.captures.is_empty() || !w.voqs.is_empty();
        // Ports where a frame's end only starts the next one (Port::end_known_at_start).
        for p in &mut w.net.ports {
            if s.link.framing.gap() {
                p.gap = p.rate.tx_time(crate::packet::IFG);
            }
            let host_port = p.node < w.net.num_hosts;
            p.end_known_at_start = s.failure.is_empty()
                && p.gap == Dur::ZERO
                && p.loss.is_none()
                && p.shared.is_none()
                && p.pq.is_none()
                && p.pfc.is_none()
                && !(host_port && w.tsq_limit > 0)
                && !(host_port && w.nic_pulls)
                && (host_port || s.switch.voq.is_none());
            // Queued frames start lazily where one FIFO serves them and
            // nothing judges a frame as it leaves (no sojourn-time AQM):
            // their starts are then fixed at enqueue. An arrival settles the
            // port first, so a frame that ends in the picosecond another
            // arrives has left before it, as with TxDone events, which run
            // first in their picosecond. A capture records each frame as it
            // starts: that needs the start as an event (and changes nothing else).
            // HPCC stamps each frame as it starts: that needs the start as an event.
            // HSCC's relay hears the queue as `settle` starts each frame, and
            // an ACK settles the port before it reads the relay.
            // DCTCP's step at dequeue judges only the bytes behind a frame as
            // it starts, which `settle` knows (in the scheduled order: a split
            // run mails a frame when it is wired, before it starts).
            let marker = match p.aqm {
                crate::aqm::Aqm::Step { k: QSize::Bytes(k), at_dequeue: true } => k > 0 && s.run.event_order == EventOrder::Scheduled,
                _ => !p.aqm.at_dequeue(),
            };
            p.start_known_at_enqueue = p.end_known_at_start
                && !int
                && p.classes.is_none()
                && marker
                && s.output.pcap.is_empty();
            p.marks_lazily = p.start_known_at_enqueue && p.aqm.at_dequeue();
        }
        w.install_workloads();
        if let Some(d) = s.run.duration {
            w.q.schedule(SimTime::ZERO + d.0, Ev::Stop);
        }
        for f in &s.failure {
            w.q.schedule(SimTime::ZERO + f.at.0, Ev::Link { port: f.port, up: false });
            if let Some(u) = f.until {
                w.q.schedule(SimTime::ZERO + u.0, Ev::Link { port: f.port, up: true });
            }
        }
        if w.sample_interval > Dur::ZERO && !w.sampled_ports.is_empty() {
            w.q.schedule(SimTime::ZERO + s.output.queue_sample_start.0, Ev::Sample);
        }
        w
    }

    fn install_workloads(&mut self) {
        for (wi, w) in self.scenario.workload.iter().enumerate() {
            let wi = wi as u32;
            match w {
                Workload::Bulk(Bulk { src, dst, size, start, stagger, start_jitter, pairing, dscp }) => {
                    let mut rng = Rng::stream(self.scenario.run.seed, StreamId { kind: streams::BULK_START, index: wi as u64 });
                    for (k, (s, d)) in bulk_pairs(src, dst, *pairing).into_iter().enumerate() {
                        let jitter = if start_jitter.0 > Dur::ZERO { Dur(rng.below(start_jitter.0.ps())) } else { Dur::ZERO };
                        let at = SimTime::ZERO + start.0 + stagger.0.saturating_mul(k as u64) + jitter;
                        self.add_bulk_flow(wi, s, d, *size, at, *dscp);
                    }
                }
                Workload::Flows(Flows { flows }) => {
                    for f in flows {
                        self.add_bulk_flow(wi, f.src, f.dst, f.size, SimTime::ZERO + f.start.0, f.dscp);
                    }
                }
                Workload::Poisson(p) => self.install_poisson(wi, p),
                Workload::Search(p) => self.install_search(wi, p),
                Workload::Requests(p) => self.install_requests(wi, p),
                Workload::Incast(p) => self.install_incast(wi, p),
            }
        }
    }

    fn add_bulk_flow(&mut self, workload: u32, src: u32, dst: u32, size: FlowSize, start: SimTime, dscp: u8) {
        let id = self.add_flow_record(workload, src, dst, size, start, dscp);
        self.q.schedule(start, Ev::FlowStart(id));
    }

    fn add_flow_record(&mut self, workload: u32, src: u32, dst: u32, size: FlowSize, start: SimTime, dscp: u8) -> u32 {
        let id = self.flows.len() as u32;
        let size = match size {
            FlowSize::Bytes(b) => {
                self.unfinished += 1;
                Some(b)
            }
            FlowSize::Infinite => None,
        };
        self.flows.push(FlowRec {
            workload,
            kind: FlowKind::Bulk,
            src,
            dst,
            size,
            start,
            conn: u32::MAX,
            received: 0,
            end: None,
            round: 0,
            sender_at_start: TcpStats::default(),
            receiver_at_start: TcpStats::default(),
            new_connection: true,
            dscp,
            sender_rtt: None,
        });
        id
    }

    /// Create a connection's two endpoints; returns the connection id.
    fn new_connection(&mut self, client: u32, server: u32, app: ConnApp) -> u32 {
        let conn = self.conn_app.len() as u32;
        self.conn_app.push(app);
        let hash = self.hash_rng.next_u32();
        let isn_a = self.isn_rng.next_u32();
        let isn_b = self.isn_rng.next_u32();
        if !self.delay_classes.is_empty() {
            let n = self.delay_classes.len() as u64 - 1;
            self.conn_class.push(self.class_rng.below(n) as u8);
        }
        self.eps.push(Endpoint::new(conn, 0, client, server, hash, isn_a, &self.tcp));
        self.eps.push(Endpoint::new(conn, 1, server, client, hash, isn_b, &self.tcp));
        if self.tcp.swift.is_some() {
            let hops = self.net.switches_between(client, server, hash);
            for e in &mut self.eps[2 * conn as usize..] {
                e.set_path_hops(hops);
            }
        }
        if !self.pacers.is_empty() {
            self.pacer_flows.extend([PacerFlow::default(); 2]);
        }
        if self.tsq_limit > 0 {
            self.tsq_held.extend([0, 0]);
        }
        conn
    }

    // ---- the run loop ----------------------------------------------------------------

    pub fn run(&mut self, progress: Option<&Progress>) -> Result<(), RunError> {
        if self.prefetch {
            self.run_events::<true>(progress)
        } else {
            self.run_events::<false>(progress)
        }
    }

    /// The loop, compiled twice: for a large network (`LARGE`) it
    /// prefetches and has the wheel's pop inlined, and a small network's
    /// loop keeps its instructions.
    #[inline(always)]
    fn run_events<const LARGE: bool>(&mut self, progress: Option<&Progress>) -> Result<(), RunError> {
        let end = self.scenario.run.duration.map(|d| d.0.ps());
        let total_work = self.unfinished.max(1) as f64;
        while let Some((now, ev)) = if LARGE { self.q.pop_large() } else { self.q.pop() } {
            if LARGE {
                self.prefetch_next();
            }
            self.dispatch(now, ev);
            if self.stop_reason.is_some() {
                break;
            }
            if self.q.events_executed() & 0x3FFF == 0 {
                if let Some(p) = progress {
                    p.now_ps.store(now.ps(), Ordering::Relaxed);
                    p.events.store(self.q.events_executed(), Ordering::Relaxed);
                    let frac = match end {
                        Some(e) => now.ps() as f64 / e as f64,
                        None => 1.0 - self.unfinished as f64 / total_work,
                    };
                    p.fraction_bits.store(frac.to_bits(), Ordering::Relaxed);
                    if p.cancel.load(Ordering::Relaxed) {
                        return Err(RunError::Cancelled);
                    }
                }
            }
        }
        self.ended(progress);
        Ok(())
    }

    /// The run is over: say why if nothing did, and report it done.
    fn ended(&mut self, progress: Option<&Progress>) {
        if self.stop_reason.is_none() {
            self.stop_reason = Some("no more events");
        }
        if let Some(p) = progress {
            p.now_ps.store(self.q.now().ps(), Ordering::Relaxed);
            p.events.store(self.q.events_executed(), Ordering::Relaxed);
            p.fraction_bits.store(1f64.to_bits(), Ordering::Relaxed);
        }
    }

    /// Start loading the state the next event will touch while this one is
    /// handled: in a large fabric most of an event's time is cache misses.
    #[inline]
    fn prefetch_next(&self) {
        match self.q.peek_large() {
            Some(Ev::LinkArrive(port, id)) => {
                // An arrival reads only the link's frames and far end.
                let p = &self.net.ports[*port as usize];
                prefetch(&p.on_wire);
                prefetch(&p.peer);
                prefetch(self.pool.get(*id));
            }
            Some(Ev::TxDone(port)) => prefetch(&self.net.ports[*port as usize]),
            Some(Ev::Timer { ep, .. }) => prefetch(&self.eps[*ep as usize]),
            _ => {}
        }
    }

    /// `dispatch` for the canonical order's loop (world/parallel.rs), kept
    /// apart so that the scheduled order's loop stays as it was compiled.
    #[inline(never)]
    fn dispatch_canonical(&mut self, now: SimTime, ev: Ev) {
        self.dispatch(now, ev)
    }

    #[inline(always)]
    fn dispatch(&mut self, now: SimTime, ev: Ev) {
        match ev {
            Ev::TxDone(port) if self.net.ports[port as usize].end_known_at_start => {
                let (started_next, dropped) = self.net.ports[port as usize].finish_on_wire(now, &mut self.pool);
                self.packets_dropped += dropped as u64;
                if started_next {
                    self.start_tx(now, port);
                }
            }
            Ev::TxDone(port) => {
                let p = &mut self.net.ports[port as usize];
                let shared = p.shared.map(|i| &mut self.net.shared[i as usize]);
                let done = p.finish_tx(now, &mut self.pool, shared);
                let (node, arrive) = (p.node, now + p.delay);
                if !done.lost {
                    self.wired(port, arrive, done.frame, done.first_on_wire);
                }
                if self.pfc.is_some() && node >= self.net.num_hosts {
                    self.pfc_depart(now, done.frame);
                }
                if self.tsq_limit > 0 && self.net.ports[port as usize].node < self.net.num_hosts {
                    self.tsq_leave(now, done.frame, true);
                }
                if done.lost {
                    self.pool.free(done.frame);
                    self.packets_dropped += 1;
                }
                self.packets_dropped += done.dropped as u64;
                if done.started_next {
                    self.start_tx(now, port);
                } else if self.nic_pulls && node < self.net.num_hosts {
                    self.nic_free(now, node);
                }
            }
            Ev::LinkArrive(port, id) => {
                let p = &mut self.net.ports[port as usize];
                if p.marks_lazily {
                    // The frame was put on the wire when queued: judge it now.
                    p.settle(now, &mut self.pool);
                }
                let head = p.on_wire.pop_front().expect("arrival without a frame on the wire");
                debug_assert_eq!(head, (now, id));
                let node = p.peer;
                if let Some(&(next, next_id)) = p.on_wire.front() {
                    match &self.part {
                        None => self.q.schedule(next, Ev::LinkArrive(port, next_id)),
                        Some(part) => self.q.schedule_tagged(next, part.arrival_tag(port), Ev::LinkArrive(port, next_id)),
                    }
                }
                if !p.up {
                    // The link failed while the frame was propagating.
                    p.stats.link_losses += 1;
                    self.pool.free(id);
                    self.packets_dropped += 1;
                    return;
                }
                if !self.captures.is_empty() {
                    self.capture(now, Network::reverse(port), id);
                }
                if self.pfc.is_some() && self.pool.get(id).kind == FrameKind::Pause {
                    return self.pfc_receive(now, port, id);
                }
                if node < self.net.num_hosts {
                    self.deliver(now, node, id)
                } else {
                    self.switch_receive(now, node, Network::reverse(port), id)
                }
            }
            Ev::SwitchOut(sw) => {
                let line = &mut self.fwd_line[(sw - self.net.num_hosts) as usize];
                let (_, id, port) = line.pop_front().expect("forwarding line empty");
                if let Some(&(next, _, _)) = line.front() {
                    self.q.schedule(next, Ev::SwitchOut(sw));
                }
                self.enqueue(now, port, id);
            }
            Ev::Timer { ep, kind, gen } => {
                if self.eps[ep as usize].timer(kind).fire(now, gen) {
                    self.out.clear();
                    self.out.tsq_room = self.tsq_room(ep, &[]);
                    self.eps[ep as usize].on_timer(now, kind, &self.tcp, &mut self.out);
                }
                self.after_tcp(now, ep);
            }
            Ev::FlowStart(f) => self.start_flow(now, f),
            Ev::IncastNext(app) => self.incast_next(now, app),
            Ev::PoissonArrival { app, source } => self.poisson_arrival(now, app, source),
            Ev::SearchQuery(app) => self.search_query(now, app),
            Ev::SearchServed { app, server } => self.search_served(now, app, server),
            Ev::Request(app) => self.request_event(now, app),
            Ev::RequestSend { app, server } => self.send_request(now, app, server),
            Ev::Pacer { host, generation } => {
                let pacer = &mut self.pacers[host as usize];
                if generation != pacer.generation {
                    return; // superseded
                }
                pacer.scheduled = None;
                let mut released = std::mem::take(&mut self.released);
                pacer.release_due(now, &mut released, &mut self.pacer_flows);
                let nic = self.net.nic(host);
                for id in released.drain(..) {
                    self.enqueue(now, nic, id);
                }
                self.released = released;
                self.wake_pacer(host);
            }
            Ev::Link { port, up } => {
                for id in self.net.set_link(now, port, up, &self.pool) {
                    if self.pfc.is_some() {
                        self.pfc_depart(now, id);
                    }
                    self.pool.free(id);
                    self.packets_dropped += 1;
                }
            }
            Ev::HostDelay(line) => {
                let l = &mut self.delay_lines[line as usize];
                let (_, id) = l.pop_front().expect("delay line empty");
                if let Some(&(next, _)) = l.front() {
                    self.q.schedule(next, Ev::HostDelay(line));
                }
                let host = line / self.delay_classes.len() as u32;
                self.send_to_nic(now, host, id);
            }
            Ev::VoqWake { sw, egress } => {
                let v = &mut self.voqs[(sw - self.net.num_hosts) as usize];
                if v.wake[egress as usize] == Some(now) {
                    v.wake[egress as usize] = None;
                }
                self.voq_schedule(now, sw, egress as usize);
            }
            Ev::PfcRefresh { port, class, gen } => self.pfc_refresh(now, port, class, gen),
            Ev::PfcResume { port, class } => self.pfc_resume(now, port, class),
            Ev::PfcWatch => self.pfc_watch(now),
            Ev::RdmaWake(host) => self.rdma_wake(now, host),
            Ev::RdmaTimer { qp, kind, gen } => self.rdma_timer(now, qp, kind, gen),
            Ev::NdpPacer(host) => self.ndp_pacer(now, host),
            Ev::NdpTimer(idx) => self.ndp_timer(now, idx),
            Ev::HomaGrant { host, src } => self.homa_timer(now, host, src),
            Ev::Sample => {
                let t = now.as_secs_f64();
                if !self.voqs.is_empty() {
                    self.sample_voqs(t);
                }
                for &p in &self.sampled_ports {
                    let port = &mut self.net.ports[p as usize];
                    if port.end_known_at_start {
                        port.settle(now, &mut self.pool);
                    }
                    self.samples.time.push(t);
                    self.samples.port.push(p);
                    self.samples.bytes.push(port.queue_bytes());
                    self.samples.packets.push(port.queue_packets());
                }
                let next = now + self.sample_interval;
                if self.scenario.output.queue_sample_stop.is_none_or(|stop| next <= SimTime::ZERO + stop.0) {
                    self.q.schedule(next, Ev::Sample);
                }
            }
            Ev::Stop => self.stop_reason = Some("duration"),
        }
    }

    /// A frame reaches switch `sw` on the link whose egress port (the other
    /// direction) is `in_port`. (Always inlined, as `deliver`: with two
    /// loops calling `dispatch`, the compiler stopped inlining them.)
    #[inline(always)]
    fn switch_receive(&mut self, now: SimTime, sw: u32, in_port: u32, id: PktId) {
        if self.pfc.is_some() && !self.pfc_arrive(now, in_port, id) {
            self.pool.free(id);
            self.packets_dropped += 1;
            return;
        }
        let pkt = self.pool.get(id);
        let next = match self.net.routing {
            crate::config::Routing::Ecmp => self.net.next_port(sw, pkt.dst_host, pkt.flow_hash),
            _ => self.route_per_packet(sw, id),
        };
        let Some(port) = next else {
            // No route (failed links): the switch drops the frame.
            self.pool.free(id);
            self.packets_dropped += 1;
            return;
        };
        if self.scenario.switch.hscc.is_some() {
            self.hscc_forward(now, in_port, port, id);
        }
        if !self.voqs.is_empty() {
            return self.voq_receive(now, sw, in_port, port, id);
        }
        let latency = if self.switch_latency { self.net.fwd_latency[(sw - self.net.num_hosts) as usize] } else { Dur::ZERO };
        if latency == Dur::ZERO {
            self.enqueue(now, port, id);
        } else {
            let line = &mut self.fwd_line[(sw - self.net.num_hosts) as usize];
            let at = now + latency;
            if line.is_empty() {
                self.q.schedule(at, Ev::SwitchOut(sw));
            }
            line.push_back((at, id, port));
        }
    }

    /// Per-packet routing (spraying, source routes), out of ECMP's way.
    #[inline(never)]
    fn route_per_packet(&mut self, sw: u32, id: PktId) -> Option<u32> {
        let pkt = self.pool.get_mut(id);
        self.net.route(sw, pkt.dst_host, &mut pkt.flow_hash)
    }

    /// Ingress buffer occupancy of the sampled ports of VOQ switches.
    fn sample_voqs(&mut self, t: f64) {
        for &p in &self.sampled_ports {
            let node = self.net.ports[p as usize].node;
            if node < self.net.num_hosts {
                continue;
            }
            let v = &self.voqs[(node - self.net.num_hosts) as usize];
            let i = self.voq_local[p as usize] as usize;
            self.voq_samples.time.push(t);
            self.voq_samples.port.push(p);
            self.voq_samples.bytes.push(v.ingress_used[i] as u64);
            self.voq_samples.packets.push(v.ingress_frames[i] as u64);
        }
    }

    /// A VOQ switch: the frame waits in its ingress port's VOQ for `egress`
    /// (or is dropped when the ingress buffer is full), then the egress's
    /// scheduler runs.
    fn voq_receive(&mut self, now: SimTime, sw: u32, in_port: u32, egress: u32, id: PktId) {
        let v = &mut self.voqs[(sw - self.net.num_hosts) as usize];
        let cells = v.cells(self.pool.get(id).frame_len());
        let (i, e) = (self.voq_local[in_port as usize] as usize, self.voq_local[egress as usize] as usize);
        if !v.arrive(i, e, id, cells) {
            self.pool.free(id);
            self.packets_dropped += 1;
            return;
        }
        self.voq_schedule(now, sw, e);
    }

    /// Run a VOQ switch's scheduler for its egress port `e`: admitted frames
    /// cross the backplane (the switch's forwarding line).
    fn voq_schedule(&mut self, now: SimTime, sw: u32, e: usize) {
        let swi = (sw - self.net.num_hosts) as usize;
        let v = &mut self.voqs[swi];
        let egress = v.ports[e];
        let port = &self.net.ports[egress as usize];
        let (rate, gap, pool) = (port.rate, port.gap, &self.pool);
        // Until the next frame may start: this one, then the inter-frame gap.
        let admitted = v.schedule(now, e, |id| rate.tx_time(pool.get(id).wire_bytes as u64) + gap);
        if let Some(t) = admitted.wake {
            if v.wake[e] != Some(t) {
                v.wake[e] = Some(t);
                self.q.schedule(t, Ev::VoqWake { sw, egress: e as u32 });
            }
        }
        let at = now + v.backplane;
        let line = &mut self.fwd_line[swi];
        for id in admitted.frames {
            if line.is_empty() {
                self.q.schedule(at, Ev::SwitchOut(sw));
            }
            line.push_back((at, id, egress));
        }
    }

    /// HSCC at a switch (seed 002 §3; mechanisms.md §1.2): count the flows
    /// leaving through `out_port` (SYN - FIN), and while `in_port` is in CBR
    /// mode cut the window of ACKs arriving on it (their flows' data leaves
    /// through it; SYN-ACKs only with `syn_ack`) to the CBR window, reading
    /// the sender's scale from the shim's reserved bits. The bits are
    /// cleared at the last hop.
    fn hscc_forward(&mut self, now: SimTime, in_port: u32, out_port: u32, id: PktId) {
        let back = &mut self.net.ports[in_port as usize];
        if back.end_known_at_start {
            back.settle(now, &mut self.pool); // the relay hears the frames started by now
        }
        let pkt = self.pool.get_mut(id);
        if let Some(h) = &mut self.net.ports[out_port as usize].hscc {
            h.flows += pkt.has(flags::SYN) as i64 - pkt.has(flags::FIN) as i64;
        }
        let ack = pkt.has(flags::ACK) && !pkt.has(flags::FIN | flags::RST);
        let syn = pkt.has(flags::SYN);
        if let Some(h) = &mut self.net.ports[in_port as usize].hscc {
            if h.cbr && ack && (!syn || h.syn_ack) {
                let scale = if self.tcp.hscc_shim { pkt.reserved } else { 0 };
                let field = (h.window(self.tcp.mss_option as u64) >> scale).min(65535) as u16;
                if field < pkt.window {
                    pkt.window = field;
                    h.stats.rewrites += 1;
                }
            }
        }
        let peer = self.net.ports[out_port as usize].peer;
        if self.net.kinds[peer as usize] == NodeKind::Host {
            pkt.reserved = 0;
        }
    }

    #[inline]
    fn enqueue(&mut self, now: SimTime, port: u32, id: PktId) {
        let p = &mut self.net.ports[port as usize];
        if p.end_known_at_start {
            p.settle(now, &mut self.pool);
        }
        let lazy = p.start_known_at_enqueue;
        let offer = if lazy {
            p.offer_lazy(now, id, &mut self.pool)
        } else {
            let shared = p.shared.map(|i| &mut self.net.shared[i as usize]);
            p.offer(now, id, &mut self.pool, shared)
        };
        match offer {
            Offer::Dropped { evicted } => {
                if self.ndp.is_some() && self.ndp_bounce(now, port, id) {
                    self.packets_dropped += evicted as u64;
                    return;
                }
                if self.tsq_limit > 0 && self.net.ports[port as usize].node < self.net.num_hosts {
                    self.tsq_leave(now, id, false);
                }
                if self.pfc.is_some() && self.net.ports[port as usize].node >= self.net.num_hosts {
                    self.pfc_depart(now, id);
                }
                self.pool.free(id);
                self.packets_dropped += 1 + evicted as u64;
            }
            Offer::Queued { evicted } if lazy => {
                self.packets_dropped += evicted as u64;
                // It is sent right after the frames before it: on the wire already.
                let p = &mut self.net.ports[port as usize];
                let arrive = p.busy_until + p.delay;
                let first = p.put_on_wire(arrive, id);
                self.wired(port, arrive, id, first);
            }
            Offer::Queued { evicted } => {
                self.packets_dropped += evicted as u64;
                let p = &self.net.ports[port as usize];
                if p.pfc.is_some() && p.transmitting.is_none() {
                    // Queued behind a paused class: another may go now.
                    return self.pfc_restart(now, port);
                }
                // A frame now waits behind one whose end has no event yet.
                if let Some(t) = self.net.ports[port as usize].idle_at.take() {
                    self.q.schedule_first(t, Ev::TxDone(port));
                }
            }
            Offer::StartTx => self.start_tx(now, port),
        }
    }

    /// Frame `id` was put on the wire of `port`, to arrive at `arrive`
    /// (`first`: alone there, so its arrival needs an event now).
    #[inline(always)]
    fn wired(&mut self, port: u32, arrive: SimTime, id: PktId, first: bool) {
        if self.part.is_some() {
            return self.wired_canonical(port, id);
        }
        if first {
            self.q.schedule(arrive, Ev::LinkArrive(port, id));
        }
    }

    /// A port begins serialising its current frame.
    #[inline(always)]
    fn start_tx(&mut self, now: SimTime, port: u32) {
        let p = &mut self.net.ports[port as usize];
        let d = p.tx_duration();
        let (node, id) = (p.node, p.transmitting.expect("transmitting"));
        let mut wait = Dur::ZERO;
        if p.end_known_at_start {
            // Its last bit arrives at now + d + delay: on the wire already.
            let arrive = now + d + p.delay;
            let first = p.put_on_wire(arrive, id);
            p.busy_until = now + d;
            if p.queue_packets() > 0 && !p.start_known_at_enqueue {
                // Ahead of its picosecond's arrivals, as `settle` has it.
                self.q.schedule_first(now + d, Ev::TxDone(port));
            } else {
                p.idle_at = Some(now + d);
            }
            // After the TxDone: a frame's end comes before its arrival anyway
            // (schedule_first), and the two pushes' numbers are consecutive.
            self.wired(port, arrive, id, first);
        } else {
            // The first bit leaves once the inter-frame gap has passed.
            wait = p.gap_wait(now);
            p.busy_until = now + wait + d;
            self.q.schedule(now + wait + d, Ev::TxDone(port));
        }
        if self.start_extras {
            self.started_tx_extras(now, wait, port, node, id);
        }
    }

    /// What else a frame's start concerns: a capture on the link, a VOQ's
    /// cells, HPCC's INT record.
    #[cold]
    #[inline(never)]
    fn started_tx_extras(&mut self, now: SimTime, wait: Dur, port: u32, node: u32, id: PktId) {
        if self.int_on && node >= self.net.num_hosts {
            self.int_stamp(now + wait, port, id);
        }
        if !self.captures.is_empty() {
            self.capture(now + wait, port, id);
        }
        if !self.voqs.is_empty() && node >= self.net.num_hosts {
            // A VOQ egress hands its frame's cells back to the backplane.
            let e = self.voq_local[port as usize] as usize;
            let v = &mut self.voqs[(node - self.net.num_hosts) as usize];
            let cells = v.cells(self.pool.get(id).frame_len());
            if v.started(e, cells) {
                self.voq_schedule(now, node, e);
            }
        }
    }

    /// Record a frame crossing the link end of `port` (either direction).
    fn capture(&mut self, now: SimTime, port: u32, id: PktId) {
        let c = self.capture_at[port as usize];
        if c == NO_CAPTURE {
            return;
        }
        let pkt = self.pool.get(id);
        let isns = match pkt.kind {
            FrameKind::Tcp => Isns {
                own: self.eps[(pkt.conn * 2 + pkt.side as u32) as usize].isn,
                peer: self.eps[(pkt.conn * 2 + 1 - pkt.side as u32) as usize].isn,
            },
            _ => Isns { own: 0, peer: 0 },
        };
        self.captures[c as usize].record(now.ps(), pkt, isns);
    }

    #[inline(always)]
    fn deliver(&mut self, now: SimTime, host: u32, id: PktId) {
        if self.nic_pulls {
            return self.deliver_other(now, host, id);
        }
        self.packets_delivered += 1;
        let pkt = self.pool.get(id);
        let ep = pkt.conn * 2 + (1 - pkt.side as u32);
        debug_assert_eq!(self.eps[ep as usize].host, host);
        self.out.clear();
        self.out.tsq_room = self.tsq_room(ep, &[]);
        // The packet is read in place (no copy) and freed once handled.
        self.eps[ep as usize].on_packet(now, self.pool.get(id), &self.tcp, &mut self.out);
        self.pool.free(id);
        self.after_tcp(now, ep);
    }

    /// A RoCE, NDP or Homa frame reached `host` (with [rdma], [ndp] or
    /// [homa] every flow's frames are). Out of line: TCP runs pay nothing for it.
    #[inline(never)]
    fn deliver_other(&mut self, now: SimTime, host: u32, id: PktId) {
        let kind = self.pool.get(id).kind;
        if kind.is_roce() {
            self.rdma_deliver(now, host, id)
        } else if kind.is_homa() {
            self.homa_deliver(now, host, id)
        } else {
            self.ndp_deliver(now, host, id)
        }
    }

    /// tcp.ack_before_app: the input path's own output, the ACK it owes,
    /// leaves before the application reads.
    #[cold]
    #[inline(never)]
    fn ack_before_app(&mut self, now: SimTime, ep: u32) {
        self.eps[ep as usize].flush(now, &self.tcp, &mut self.out);
    }

    /// `host`'s NIC port is free: RDMA, NDP or Homa may send.
    #[inline(never)]
    fn nic_free(&mut self, now: SimTime, host: u32) {
        if self.rdma.is_some() {
            self.rdma_kick(now, host);
        } else if self.homa.is_some() {
            self.homa_kick(now, host);
        } else {
            self.ndp_kick(now, host);
        }
    }

    /// After an endpoint handled an input: let the application react, send
    /// what the endpoint now may, inject its packets, and schedule its timers.
    fn after_tcp(&mut self, now: SimTime, ep: u32) {
        let delivered = self.out.delivered;
        let established = self.out.established;
        if delivered > 0 || established {
            if delivered > 0 && self.tcp.ack_before_app {
                self.ack_before_app(now, ep);
            }
            self.app_react(now, ep, delivered, established);
        }
        self.out.tsq_room = self.tsq_room(ep, &self.out.packets);
        self.eps[ep as usize].flush(now, &self.tcp, &mut self.out);
        self.out.tsq_room = None;
        self.out.delivered = 0;
        self.out.established = false;
        // Only the packets leave `out` while they are injected.
        let mut packets = std::mem::take(&mut self.out.packets);
        for pkt in &packets {
            self.inject(now, pkt);
        }
        packets.clear();
        self.out.packets = packets;
        let e = &mut self.eps[ep as usize];
        if let Some((t, gen)) = e.rto_timer.needs_event() {
            self.q.schedule(t, Ev::Timer { ep, kind: TimerKind::Rto, gen });
        }
        if let Some((t, gen)) = e.delack_timer.needs_event() {
            self.q.schedule(t, Ev::Timer { ep, kind: TimerKind::DelAck, gen });
        }
        if let Some((t, gen)) = e.rack_timer.needs_event() {
            self.q.schedule(t, Ev::Timer { ep, kind: TimerKind::Rack, gen });
        }
    }

    fn inject(&mut self, now: SimTime, pkt: &Packet) {
        let id = self.pool.alloc(*pkt);
        let pkt = self.pool.get_mut(id);
        pkt.finalize_size(self.preamble);
        self.packets_created += 1;
        if self.tsq_limit > 0 {
            self.tsq_held[(pkt.conn * 2 + pkt.side as u32) as usize] += pkt.wire_bytes as u64;
        }
        let (host, conn, side) = (pkt.src_host, pkt.conn, pkt.side);
        let class = self.delay_class(conn, side);
        match class {
            Some((c, d)) if d > Dur::ZERO => {
                let line = host as usize * self.delay_classes.len() + c;
                if self.delay_lines[line].is_empty() {
                    self.q.schedule(now + d, Ev::HostDelay(line as u32));
                }
                self.delay_lines[line].push_back((now + d, id));
            }
            _ => self.send_to_nic(now, host, id),
        }
    }

    /// TCP Small Queues: the data bytes `ep` may still hand to its host,
    /// counting its packets not yet injected (None: no limit).
    fn tsq_room(&self, ep: u32, pending: &[Packet]) -> Option<u64> {
        if self.tsq_limit == 0 {
            return None;
        }
        let mine = pending.iter().filter(|p| p.conn * 2 + p.side as u32 == ep).map(|p| p.payload as u64).sum::<u64>();
        Some(self.tsq_limit.saturating_sub(self.tsq_held[ep as usize] + mine))
    }

    /// TCP Small Queues: a packet left its host (on the wire, or dropped
    /// there). With `wake`, a throttled sender that is now below the limit
    /// sends again (drops do not wake it: a full NIC queue will).
    fn tsq_leave(&mut self, now: SimTime, id: PktId, wake: bool) {
        let pkt = self.pool.get(id);
        let ep = pkt.conn * 2 + pkt.side as u32;
        let held = &mut self.tsq_held[ep as usize];
        *held -= pkt.wire_bytes as u64;
        if wake && *held < self.tsq_limit && self.eps[ep as usize].tsq_throttled {
            self.out.clear();
            self.after_tcp(now, ep);
        }
    }

    /// A host's packet goes to its NIC queue, through the pacer if there is one.
    #[inline(always)]
    fn send_to_nic(&mut self, now: SimTime, host: u32, id: PktId) {
        if self.pacers.is_empty() {
            let nic = self.net.nic(host);
            return self.enqueue(now, nic, id);
        }
        self.send_to_pacer(now, host, id);
    }

    /// A host's packet offered to its pacer (HULL): sent, held or dropped.
    #[inline(never)]
    fn send_to_pacer(&mut self, now: SimTime, host: u32, id: PktId) {
        let pkt = self.pool.get(id);
        let (bytes, echo, ep) = (pkt.wire_bytes as u64, pkt.got_ecn_echo, pkt.conn * 2 + pkt.side as u32);
        match self.pacers[host as usize].offer(now, id, bytes, echo, ep, &mut self.pacer_flows) {
            Admit::Send => {
                let nic = self.net.nic(host);
                self.enqueue(now, nic, id);
            }
            Admit::Held => self.wake_pacer(host),
            Admit::Dropped => {
                if self.tsq_limit > 0 {
                    self.tsq_leave(now, id, false);
                }
                self.pool.free(id);
                self.packets_dropped += 1;
            }
        }
    }

    /// Make sure the pacer's next action has an event.
    fn wake_pacer(&mut self, host: u32) {
        let pacer = &mut self.pacers[host as usize];
        if let Some(t) = pacer.next_event() {
            if pacer.scheduled != Some(t) {
                pacer.generation = pacer.generation.wrapping_add(1);
                pacer.scheduled = Some(t);
                self.q.schedule(t, Ev::Pacer { host, generation: pacer.generation });
            }
        }
    }

    /// The RTT-variation class and delay of a packet sent by `side` of `conn`.
    fn delay_class(&self, conn: u32, side: u8) -> Option<(usize, Dur)> {
        if self.delay_classes.is_empty() {
            return None;
        }
        let c = if side == 0 { self.conn_class[conn as usize] as usize } else { self.delay_classes.len() - 1 };
        Some((c, self.delay_classes[c]))
    }

    // ---- applications ---------------------------------------------------------------

    fn start_flow(&mut self, now: SimTime, f: u32) {
        self.start_flow_on(now, f, false)
    }

    /// Start flow `f`; with `persistent`, on an idle connection of its host
    /// pair if there is one (the flow then starts without a handshake).
    fn start_flow_on(&mut self, now: SimTime, f: u32, persistent: bool) {
        if self.rdma.is_some() {
            return self.rdma_start(now, f);
        }
        if self.ndp.is_some() {
            return self.ndp_start(now, f);
        }
        if self.homa.is_some() {
            return self.homa_start(now, f);
        }
        let (src, dst, size, dscp) = {
            let fr = &self.flows[f as usize];
            (fr.src, fr.dst, fr.size, fr.dscp)
        };
        if persistent {
            let idle = &mut self.idle_conns[src as usize];
            if let Some(i) = idle.iter().position(|&(d, _)| d == dst) {
                let conn = idle.swap_remove(i).1;
                self.conn_app[conn as usize] = ConnApp::Bulk { flow: f, persistent };
                let fr = &mut self.flows[f as usize];
                fr.conn = conn;
                fr.new_connection = false;
                fr.sender_at_start = self.eps[(conn * 2) as usize].stats;
                fr.receiver_at_start = self.eps[(conn * 2 + 1) as usize].stats;
                self.eps[(conn * 2) as usize].dscp = dscp;
                self.eps[(conn * 2) as usize].write(size.expect("persistent flows have a size"), false, &self.tcp);
                return self.after_tcp(now, conn * 2);
            }
        }
        let conn = self.new_connection(src, dst, ConnApp::Bulk { flow: f, persistent });
        self.flows[f as usize].conn = conn;
        for (i, filter) in self.capture_flow.iter().enumerate() {
            if *filter == Some(f) {
                self.captures[i].conn = Some(conn);
            }
        }
        let ep = conn * 2;
        self.out.clear();
        let e = &mut self.eps[ep as usize];
        e.dscp = dscp;
        // A long-lived flow writes "forever" (far more than any run can send).
        e.write(size.unwrap_or(u64::MAX / 4), size.is_some() && !persistent, &self.tcp);
        e.open(now, &self.tcp, &mut self.out);
        self.after_tcp(now, ep);
    }

    fn app_react(&mut self, now: SimTime, ep: u32, delivered: u64, established: bool) {
        let conn = ep / 2;
        let side = ep % 2;
        match self.conn_app[conn as usize] {
            ConnApp::Bulk { flow, persistent } => {
                if side == 1 && delivered > 0 {
                    let fr = &mut self.flows[flow as usize];
                    fr.received += delivered;
                    if let (None, Some(size)) = (fr.end, fr.size.filter(|&s| s == fr.received)) {
                        if persistent {
                            self.idle_conns[fr.src as usize].push((fr.dst, conn));
                        }
                        self.complete_flow(flow as usize, now, size);
                        self.work_done();
                    }
                }
            }
            ConnApp::Search { app, server } => self.search_react(now, app, server, side, delivered, established),
            ConnApp::Requests { app, slot } => self.requests_react(now, app, slot, side, delivered),
            ConnApp::Incast { app, slot } => self.incast_react(now, app, slot, side, delivered, established),
        }
    }

    /// Flow `f` has all its `bytes` at `now`: record it, and turn its
    /// counters from snapshots at the start into the flow's own counts.
    fn complete_flow(&mut self, f: usize, now: SimTime, bytes: u64) {
        let fr = &self.flows[f];
        let (sender, receiver) = fr.endpoints();
        let (s, r) = (self.eps[sender as usize].stats.since(&fr.sender_at_start), self.eps[receiver as usize].stats.since(&fr.receiver_at_start));
        let sender_rtt = self.eps[sender as usize].rtt.summary();
        let fr = &mut self.flows[f];
        fr.sender_rtt = sender_rtt;
        fr.received = bytes;
        fr.end = Some(now);
        fr.sender_at_start = s;
        fr.receiver_at_start = r;
    }

    fn work_done(&mut self) {
        self.unfinished -= 1;
        if self.unfinished == 0 && self.scenario.run.stop_when_done {
            self.stop_reason = Some("workload done");
        }
    }

    // ---- results ----------------------------------------------------------------------

    pub fn now(&self) -> SimTime {
        self.q.now()
    }
    pub fn events_executed(&self) -> u64 {
        self.q.events_executed()
    }
    /// Packets in queues, on links or in switches right now.
    pub fn packets_in_flight(&self) -> u64 {
        self.pool.live() as u64 + self.live_elsewhere
    }
    pub fn endpoints(&self) -> &[Endpoint] {
        &self.eps
    }
    pub fn network(&self) -> &Network {
        &self.net
    }

}

/// Run a scenario to completion. `progress`, if given, is updated as the run
/// goes and can cancel it.
pub fn run(s: &Scenario, progress: Option<&Progress>) -> Result<RunOutput, RunError> {
    if s.run.event_order == EventOrder::Canonical {
        return run_threads(s, 1, progress);
    }
    let t0 = Instant::now();
    let mut w = World::new(s);
    w.run(progress)?;
    Ok(w.finish(t0.elapsed().as_secs_f64()))
}

/// Networks with at least this many ports keep their events due soon in a
/// timing wheel rather than a heap (dcsim_engine::queue; results identical).
/// Measured (docs/benchmarks.md, 2026-11-26): the wheel takes 17 % off the
/// 360-port leaf-spine and 16 % off the k = 8 fat-tree, but adds 10-13 % to
/// dumbbell-dctcp-64 and incast-64, whose heaps hold a few events.
const WHEEL_MIN_PORTS: usize = 320;

/// Networks with at least this many ports prefetch. Measured: the 360-port
/// leaf-spine gains ~5 % wall, the k = 16 fat-tree ~28 %; the dumbbells
/// (at most 258 ports, all in cache) would pay ~4 % more instructions.
const PREFETCH_MIN_PORTS: usize = 320;

/// Hint the CPU to bring `x` (up to its first 8 cache lines) into the cache.
/// No effect on results; a no-op on other architectures than x86-64.
#[inline(always)]
fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = x as *const T as *const i8;
        let lines = std::mem::size_of::<T>().div_ceil(64).min(8);
        for i in 0..lines {
            // SAFETY: prefetching never faults, and the address is inside `x`.
            unsafe { _mm_prefetch(p.add(i * 64), _MM_HINT_T0) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::size_of;

    /// The sizes docs/benchmarks.md's memory model (2026-11-26) rests on: a
    /// change that grows one of these updates the model.
    #[test]
    fn state_per_event_port_frame_endpoint_and_flow_fits_the_memory_model() {
        for (name, size, model) in [
            ("Ev", size_of::<Ev>(), 16),
            ("Port", size_of::<crate::port::Port>(), 512),
            ("Packet", size_of::<Packet>(), 112),
            ("Endpoint", size_of::<Endpoint>(), 1024),
            ("FlowRec", size_of::<FlowRec>(), 272),
        ] {
            assert!(size <= model, "{name} is {size} bytes, the memory model says {model}");
        }
    }
}
