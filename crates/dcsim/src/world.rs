//! The world: every component, the event queue, and the one `dispatch` that
//! moves packets between them.

use crate::config::{
    bulk_pairs, Bulk, Flows, Incast, LoadReference, Poisson, RequestArrival, Requests, SamplePorts, Scenario, Search, ServiceTime, Topology,
    Workload,
};
use crate::traffic::{exp_interval, service_time, PoissonGen, SizeDist};
use crate::packet::{Packet, PacketPool, PktId};
use crate::pcap::{Capture, Isns};
use crate::port::Offer;
use crate::results::{Col, Table};
use crate::tcp::{Endpoint, TcpOut, TcpParams, TcpStats, TimerKind, TraceRow};
use crate::topology::{streams, Network, NodeKind};
use crate::units::FlowSize;
use dcsim_engine::{Dur, EventQueue, Rng, SimTime, StreamId};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

const NO_CAPTURE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
enum Ev {
    /// A port finished serialising its current frame.
    TxDone(u32),
    /// The head frame on a port's link reached the other end.
    LinkArrive(u32),
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
    /// A link (given by one of its ports) fails or recovers.
    Link { port: u32, up: bool },
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
    /// Sender and receiver counters when the flow started (for deltas on
    /// persistent connections).
    sender_at_start: TcpStats,
    receiver_at_start: TcpStats,
    new_connection: bool,
}

#[derive(Clone, Copy, Debug)]
enum ConnApp {
    Bulk { flow: u32 },
    Incast { app: u32, slot: u32 },
    Search { app: u32, server: u32 },
    Requests { app: u32, slot: u32 },
}

struct IncastApp {
    workload: u32,
    querier: u32,
    query: u64,
    rounds: u32,
    think: Dur,
    /// Per connection slot: conn id, responder host, response bytes.
    conns: Vec<u32>,
    responder_of: Vec<u32>,
    response: Vec<u64>,
    established: u32,
    round: u32,
    round_start: SimTime,
    pending: u32,
    /// Querier side: response bytes received per slot (cumulative).
    got: Vec<u64>,
    /// Responder side: query bytes received and responses written per slot.
    query_bytes_seen: Vec<u64>,
    responses_written: Vec<u64>,
    /// Flow record of the current round per slot.
    flow_of_slot: Vec<u32>,
    stats_at_round_start: Vec<TcpStats>,
}

/// Fan-out/fan-in search (see config::Search).
struct SearchApp {
    workload: u32,
    client: u32,
    servers: Vec<u32>,
    conns: Vec<u32>,
    query: u64,
    response: u64,
    service: ServiceTime,
    rate: f64,
    deadline: Option<Dur>,
    stop: SimTime,
    rng: Rng,
    established: u32,
    generating: bool,
    /// Per query: send time, responses outstanding, responses in time, first flow id.
    queries: Vec<(SimTime, u32, u32, u32)>,
    open_queries: u32,
    /// Per server: query bytes and complete queries received, queries
    /// waiting (the front one is in service while busy), busy serving.
    query_bytes: Vec<u64>,
    received: Vec<u32>,
    waiting: Vec<VecDeque<u32>>,
    busy: Vec<bool>,
    /// Per server: response bytes received by the client, responses complete.
    response_bytes: Vec<u64>,
    responses_done: Vec<u32>,
}

/// Request/response over pooled persistent connections (see config::Requests).
struct RequestsApp {
    workload: u32,
    client: u32,
    servers: Vec<u32>,
    request: u64,
    dist: SizeDist,
    arrival: RequestArrival,
    rate: f64,
    stop: SimTime,
    rng: Rng,
    next_server: usize,
    slots: Vec<RequestSlot>,
    /// Per server: its connection slots.
    pool: Vec<Vec<u32>>,
    generating: bool,
    open: u32,
}

/// One connection of a requests app and the request it carries.
struct RequestSlot {
    conn: u32,
    server: u32,
    busy: bool,
    /// The response size and flow of the current request.
    size: u64,
    flow: u32,
    /// Server side: request bytes received and requests answered; client
    /// side: response bytes received in all.
    request_bytes: u64,
    answered: u64,
    response_bytes: u64,
    /// Response bytes of the requests before the current one.
    response_base: u64,
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
    preamble_ifg: bool,
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
    /// Per port: index into `captures` of the capture on its link end, or NO_CAPTURE.
    capture_at: Vec<u32>,
    /// Flow filters of captures, resolved to connections when flows start.
    capture_flow: Vec<Option<u32>>,
    // Packet conservation.
    pub packets_created: u64,
    pub packets_delivered: u64,
    pub packets_dropped: u64,
}

impl<'a> World<'a> {
    pub fn new(s: &'a Scenario) -> World<'a> {
        let net = Network::build(s);
        let switches = net.kinds.len() - net.num_hosts as usize;
        let sampled_ports: Vec<u32> = (0..net.ports.len() as u32)
            .filter(|&p| {
                s.output.queue_sample_ports == SamplePorts::All
                    || net.kinds[net.ports[p as usize].node as usize] == NodeKind::Switch
            })
            .collect();
        let mut capture_at = vec![NO_CAPTURE; net.ports.len()];
        let mut captures = Vec::new();
        let mut capture_flow = Vec::new();
        for c in &s.output.pcap {
            let port = c.port.unwrap_or_else(|| c.host.map(|h| net.nic(h)).expect("validated: host or port"));
            capture_at[port as usize] = captures.len() as u32;
            captures.push(Capture::new(c.file_name(), port, c.flow.is_some(), c.snaplen));
            capture_flow.push(c.flow);
        }
        let mut w = World {
            scenario: s,
            q: EventQueue::new(),
            net,
            pool: PacketPool::default(),
            fwd_line: (0..switches).map(|_| VecDeque::new()).collect(),
            preamble_ifg: s.link.preamble_ifg,
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
            capture_at,
            capture_flow,
            packets_created: 0,
            packets_delivered: 0,
            packets_dropped: 0,
        };
        w.delay_lines = (0..w.net.num_hosts as usize * w.delay_classes.len()).map(|_| VecDeque::new()).collect();
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
            w.q.schedule(SimTime::ZERO, Ev::Sample);
        }
        w
    }

    fn install_workloads(&mut self) {
        for (wi, w) in self.scenario.workload.iter().enumerate() {
            let wi = wi as u32;
            match w {
                Workload::Bulk(Bulk { src, dst, size, start, stagger, pairing }) => {
                    for (k, (s, d)) in bulk_pairs(src, dst, *pairing).into_iter().enumerate() {
                        let at = SimTime::ZERO + start.0 + stagger.0.saturating_mul(k as u64);
                        self.add_bulk_flow(wi, s, d, *size, at);
                    }
                }
                Workload::Flows(Flows { flows }) => {
                    for f in flows {
                        self.add_bulk_flow(wi, f.src, f.dst, f.size, SimTime::ZERO + f.start.0);
                    }
                }
                Workload::Poisson(p) => self.install_poisson(wi, p),
                Workload::Search(p) => self.install_search(wi, p),
                Workload::Requests(p) => self.install_requests(wi, p),
                Workload::Incast(Incast { querier, responders, query_size, response_size, rounds, think_time, start, connections_per_responder }) => {
                    let app = self.incast.len() as u32;
                    let k = *connections_per_responder as u64;
                    let mut a = IncastApp {
                        workload: wi,
                        querier: *querier,
                        query: query_size.0,
                        rounds: *rounds,
                        think: think_time.0,
                        conns: Vec::new(),
                        responder_of: Vec::new(),
                        response: Vec::new(),
                        established: 0,
                        round: 0,
                        round_start: SimTime::ZERO,
                        pending: 0,
                        got: Vec::new(),
                        query_bytes_seen: Vec::new(),
                        responses_written: Vec::new(),
                        flow_of_slot: Vec::new(),
                        stats_at_round_start: Vec::new(),
                    };
                    for &r in &responders.0 {
                        for j in 0..k {
                            // Split the response evenly; the first connections take the remainder.
                            let share = response_size.0 / k + u64::from(j < response_size.0 % k);
                            a.responder_of.push(r);
                            a.response.push(share);
                        }
                    }
                    let n = a.response.len();
                    a.got = vec![0; n];
                    a.query_bytes_seen = vec![0; n];
                    a.responses_written = vec![0; n];
                    a.flow_of_slot = vec![u32::MAX; n];
                    a.stats_at_round_start = vec![TcpStats::default(); n];
                    self.incast.push(a);
                    self.unfinished += 1;
                    self.q.schedule(SimTime::ZERO + start.0, Ev::IncastNext(app));
                }
            }
        }
    }

    /// The reference capacity of `host` for a load figure, in bits/s.
    fn reference_rate(&self, host: u32, reference: LoadReference) -> f64 {
        let nic = self.net.ports[self.net.nic(host) as usize].rate.bps as f64;
        match (reference, &self.scenario.topology) {
            (LoadReference::UplinkShare, Topology::Leafspine(t)) => {
                (t.spines as f64 * t.links_per_pair as f64 * t.uplink().bps as f64 / t.hosts_per_leaf as f64).min(nic)
            }
            _ => nic,
        }
    }

    fn install_poisson(&mut self, workload: u32, p: &Poisson) {
        let app = self.poisson.len() as u32;
        let rng = Rng::stream(self.scenario.run.seed, StreamId { kind: streams::POISSON, index: app as u64 });
        let stop = SimTime::ZERO + p.stop.or(self.scenario.run.duration).map(|d| d.0).unwrap_or(Dur::ZERO);
        let racks = (0..self.net.num_hosts).map(|h| self.scenario.topology.rack_of(h)).collect();
        let mut g = PoissonGen::new(workload, p, self.net.num_hosts, |h| self.reference_rate(h, p.load_reference), racks, stop, rng);
        let first = g.first_arrivals(SimTime::ZERO + p.start.0);
        if !first.is_empty() {
            self.unfinished += 1;
        }
        for (at, source) in first {
            self.q.schedule(at, Ev::PoissonArrival { app, source });
        }
        self.poisson.push(g);
    }

    fn install_requests(&mut self, workload: u32, p: &Requests) {
        let app = self.requests.len() as u32;
        let dist = p.response.dist();
        let rate = match p.arrival {
            RequestArrival::Poisson => {
                p.load.unwrap_or(0.0) * self.reference_rate(p.client, LoadReference::Host) / (8.0 * dist.mean())
            }
            RequestArrival::ClosedLoop => 0.0,
        };
        self.requests.push(RequestsApp {
            workload,
            client: p.client,
            servers: p.servers.0.clone(),
            request: p.request_size.0,
            dist,
            arrival: p.arrival,
            rate,
            stop: SimTime::ZERO + p.stop.or(self.scenario.run.duration).map(|d| d.0).unwrap_or(Dur::ZERO),
            rng: Rng::stream(self.scenario.run.seed, StreamId { kind: streams::REQUESTS, index: app as u64 }),
            next_server: 0,
            slots: Vec::new(),
            pool: vec![Vec::new(); p.servers.0.len()],
            generating: true,
            open: 0,
        });
        if p.arrival == RequestArrival::Poisson {
            self.unfinished += 1;
        }
        self.q.schedule(SimTime::ZERO + p.start.0, Ev::Request(app));
    }

    /// Closed loop: ask every server at once (first call). Poisson: one
    /// request to the next server in round robin, and schedule the next.
    fn request_event(&mut self, now: SimTime, app: u32) {
        let a = &mut self.requests[app as usize];
        match a.arrival {
            RequestArrival::ClosedLoop => {
                for server in 0..a.servers.len() as u32 {
                    self.send_request(now, app, server);
                }
            }
            RequestArrival::Poisson => {
                if now >= a.stop {
                    a.generating = false;
                    if a.open == 0 {
                        self.work_done();
                    }
                    return;
                }
                let server = a.next_server as u32;
                a.next_server = (a.next_server + 1) % a.servers.len();
                let next = now + Dur((exp_interval(&mut a.rng, a.rate) * 1e12) as u64);
                self.q.schedule(next, Ev::Request(app));
                self.send_request(now, app, server);
            }
        }
    }

    /// Send a request to `server` on an idle pooled connection, or a new one.
    fn send_request(&mut self, now: SimTime, app: u32, server: u32) {
        let a = &mut self.requests[app as usize];
        let size = a.dist.sample(&mut a.rng);
        a.open += 1;
        let idle = a.pool[server as usize].iter().copied().find(|&s| !a.slots[s as usize].busy);
        let (slot, new_conn) = match idle {
            Some(s) => (s, false),
            None => {
                let slot = a.slots.len() as u32;
                let (client, host) = (a.client, a.servers[server as usize]);
                let conn = self.new_connection(client, host, ConnApp::Requests { app, slot });
                let a = &mut self.requests[app as usize];
                a.slots.push(RequestSlot { conn, server, busy: false, size: 0, flow: 0, request_bytes: 0, answered: 0, response_bytes: 0, response_base: 0 });
                a.pool[server as usize].push(slot);
                (slot, true)
            }
        };
        let a = &mut self.requests[app as usize];
        let (workload, client, host, request) = (a.workload, a.client, a.servers[server as usize], a.request);
        let conn = a.slots[slot as usize].conn;
        let flow = self.flows.len() as u32;
        self.flows.push(FlowRec {
            workload,
            kind: FlowKind::Response,
            src: host,
            dst: client,
            size: Some(size),
            start: now,
            conn,
            received: 0,
            end: None,
            round: 0,
            sender_at_start: self.eps[(conn * 2 + 1) as usize].stats,
            receiver_at_start: self.eps[(conn * 2) as usize].stats,
            new_connection: new_conn,
        });
        let a = &mut self.requests[app as usize];
        let st = &mut a.slots[slot as usize];
        st.busy = true;
        st.size = size;
        st.flow = flow;
        let ep = (conn * 2) as usize;
        self.eps[ep].write(request, false);
        self.out.clear();
        if new_conn {
            self.eps[ep].open(now, &self.tcp, &mut self.out);
        }
        self.after_tcp(now, conn * 2);
    }

    fn requests_react(&mut self, now: SimTime, app: u32, slot: u32, side: u32, delivered: u64) {
        let a = &mut self.requests[app as usize];
        let request = a.request;
        let st = &mut a.slots[slot as usize];
        if side == 1 && delivered > 0 {
            // Server: answer each complete request with its response.
            st.request_bytes += delivered;
            while st.request_bytes >= (st.answered + 1) * request {
                st.answered += 1;
                let (conn, size) = (st.conn, st.size);
                self.eps[(conn * 2 + 1) as usize].write(size, false);
            }
        } else if side == 0 && delivered > 0 {
            st.response_bytes += delivered;
            if st.busy && st.response_bytes >= st.response_base + st.size {
                st.response_base += st.size;
                st.busy = false;
                let (flow, size, server) = (st.flow, st.size, st.server);
                let f = &mut self.flows[flow as usize];
                f.received = size;
                f.end = Some(now);
                a.open -= 1;
                match a.arrival {
                    RequestArrival::ClosedLoop => self.send_request(now, app, server),
                    RequestArrival::Poisson if !a.generating && a.open == 0 => self.work_done(),
                    RequestArrival::Poisson => {}
                }
            }
        }
    }

    fn install_search(&mut self, workload: u32, p: &Search) {
        let app = self.search.len() as u32;
        let n = p.servers.0.len();
        let rate = p.query_rate.unwrap_or_else(|| p.server_load.unwrap_or(0.0) / p.service_time.mean_seconds());
        self.search.push(SearchApp {
            workload,
            client: p.client,
            servers: p.servers.0.clone(),
            conns: Vec::new(),
            query: p.query_size.0,
            response: p.response_size.0,
            service: p.service_time.clone(),
            rate,
            deadline: p.deadline.map(|d| d.0),
            stop: SimTime::ZERO + p.stop.or(self.scenario.run.duration).map(|d| d.0).unwrap_or(Dur::ZERO),
            rng: Rng::stream(self.scenario.run.seed, StreamId { kind: streams::SEARCH, index: app as u64 }),
            established: 0,
            generating: true,
            queries: Vec::new(),
            open_queries: 0,
            query_bytes: vec![0; n],
            received: vec![0; n],
            waiting: (0..n).map(|_| VecDeque::new()).collect(),
            busy: vec![false; n],
            response_bytes: vec![0; n],
            responses_done: vec![0; n],
        });
        self.unfinished += 1;
        self.q.schedule(SimTime::ZERO + p.start.0, Ev::SearchQuery(app));
    }

    /// Open the connections, or send a query to every server and schedule the next.
    fn search_query(&mut self, now: SimTime, app: u32) {
        let a = &mut self.search[app as usize];
        if a.conns.is_empty() {
            let (client, servers) = (a.client, a.servers.clone());
            for (i, s) in servers.into_iter().enumerate() {
                let conn = self.new_connection(client, s, ConnApp::Search { app, server: i as u32 });
                self.search[app as usize].conns.push(conn);
                self.out.clear();
                self.eps[(conn * 2) as usize].open(now, &self.tcp, &mut self.out);
                self.after_tcp(now, conn * 2);
            }
            return; // the first query goes out when every connection is up
        }
        if now >= a.stop {
            a.generating = false;
            if a.open_queries == 0 {
                self.work_done();
            }
            return;
        }
        let q = a.queries.len() as u32;
        let first_flow = self.flows.len() as u32;
        a.queries.push((now, a.servers.len() as u32, 0, first_flow));
        a.open_queries += 1;
        let next = now + Dur((exp_interval(&mut a.rng, a.rate) * 1e12) as u64);
        self.q.schedule(next, Ev::SearchQuery(app));
        let (workload, client, query, response) = (a.workload, a.client, a.query, a.response);
        let targets: Vec<(u32, u32)> = a.servers.iter().copied().zip(a.conns.iter().copied()).collect();
        for (server, conn) in targets {
            let sender_at_start = self.eps[(conn * 2 + 1) as usize].stats;
            let receiver_at_start = self.eps[(conn * 2) as usize].stats;
            self.flows.push(FlowRec {
                workload,
                kind: FlowKind::Response,
                src: server,
                dst: client,
                size: Some(response),
                start: now,
                conn,
                received: 0,
                end: None,
                round: q + 1,
                sender_at_start,
                receiver_at_start,
                new_connection: false,
            });
            self.eps[(conn * 2) as usize].write(query, false);
            self.out.clear();
            self.after_tcp(now, conn * 2);
        }
    }

    /// A server begins serving its next waiting query, if idle.
    fn search_serve_next(&mut self, now: SimTime, app: u32, server: u32) {
        let a = &mut self.search[app as usize];
        let s = server as usize;
        if a.busy[s] || a.waiting[s].is_empty() {
            return;
        }
        a.busy[s] = true;
        let t = service_time(&mut a.rng, &a.service);
        self.q.schedule(now + t, Ev::SearchServed { app, server });
    }

    fn search_served(&mut self, now: SimTime, app: u32, server: u32) {
        let a = &mut self.search[app as usize];
        let s = server as usize;
        a.waiting[s].pop_front();
        a.busy[s] = false;
        let (conn, response) = (a.conns[s], a.response);
        self.eps[(conn * 2 + 1) as usize].write(response, false);
        self.out.clear();
        self.after_tcp(now, conn * 2 + 1);
        self.search_serve_next(now, app, server);
    }

    fn search_react(&mut self, now: SimTime, app: u32, server: u32, side: u32, delivered: u64, established: bool) {
        let s = server as usize;
        if established && side == 0 {
            let a = &mut self.search[app as usize];
            a.established += 1;
            if a.established == a.conns.len() as u32 {
                self.q.schedule(now, Ev::SearchQuery(app));
            }
        }
        if delivered > 0 && side == 1 {
            // Server: every complete query joins its FIFO (queries arrive in order).
            let a = &mut self.search[app as usize];
            a.query_bytes[s] += delivered;
            let complete = (a.query_bytes[s] / a.query) as u32;
            for q in a.received[s]..complete {
                a.waiting[s].push_back(q);
            }
            a.received[s] = complete;
            self.search_serve_next(now, app, server);
        }
        if delivered > 0 && side == 0 {
            // Client: each server's responses come back in query order.
            self.search[app as usize].response_bytes[s] += delivered;
            loop {
                let a = &mut self.search[app as usize];
                if a.response_bytes[s] < (a.responses_done[s] as u64 + 1) * a.response {
                    break;
                }
                let q = a.responses_done[s] as usize;
                a.responses_done[s] += 1;
                let response = a.response;
                let deadline = a.deadline;
                let entry = &mut a.queries[q];
                entry.1 -= 1;
                if deadline.is_none_or(|d| now - entry.0 <= d) {
                    entry.2 += 1;
                }
                let (first_flow, last) = (entry.3, entry.1 == 0);
                let f = &mut self.flows[first_flow as usize + s];
                f.received = response;
                f.end = Some(now);
                if last {
                    self.finish_search_query(now, app, q);
                }
            }
        }
    }

    fn finish_search_query(&mut self, now: SimTime, app: u32, q: usize) {
        let a = &mut self.search[app as usize];
        let (start, _, in_time, first_flow) = a.queries[q];
        a.open_queries -= 1;
        let (mut timeouts, mut retransmits) = (0, 0);
        for s in 0..a.servers.len() {
            let f = &self.flows[first_flow as usize + s];
            let st = &self.eps[(f.conn * 2 + 1) as usize].stats;
            timeouts += st.timeouts - f.sender_at_start.timeouts;
            retransmits += st.retransmits - f.sender_at_start.retransmits;
        }
        let row = QueryRow {
            workload: a.workload,
            round: q as u32 + 1,
            start,
            end: now,
            responders: a.servers.len() as u32,
            timeouts,
            retransmits,
            within_deadline: if a.deadline.is_some() { in_time as i64 } else { -1 },
        };
        self.queries.push(row);
        let a = &self.search[app as usize];
        if !a.generating && a.open_queries == 0 {
            self.work_done();
        }
    }

    fn poisson_arrival(&mut self, now: SimTime, app: u32, source: u32) {
        let g = &mut self.poisson[app as usize];
        let a = g.arrive(source, now);
        let (workload, done) = (g.workload, g.chains_alive == 0 && a.next.is_none());
        let f = self.add_flow_record(workload, a.src, a.dst, FlowSize::Bytes(a.bytes), now);
        self.start_flow(now, f);
        match a.next {
            Some(at) => self.q.schedule(at, Ev::PoissonArrival { app, source }),
            None if done => self.work_done(),
            None => {}
        }
    }

    fn add_bulk_flow(&mut self, workload: u32, src: u32, dst: u32, size: FlowSize, start: SimTime) {
        let id = self.add_flow_record(workload, src, dst, size, start);
        self.q.schedule(start, Ev::FlowStart(id));
    }

    fn add_flow_record(&mut self, workload: u32, src: u32, dst: u32, size: FlowSize, start: SimTime) -> u32 {
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
        conn
    }

    // ---- the run loop ----------------------------------------------------------------

    pub fn run(&mut self, progress: Option<&Progress>) -> Result<(), RunError> {
        let end = self.scenario.run.duration.map(|d| d.0.ps());
        let total_work = self.unfinished.max(1) as f64;
        while let Some((now, ev)) = self.q.pop() {
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
        if self.stop_reason.is_none() {
            self.stop_reason = Some("no more events");
        }
        if let Some(p) = progress {
            p.now_ps.store(self.q.now().ps(), Ordering::Relaxed);
            p.events.store(self.q.events_executed(), Ordering::Relaxed);
            p.fraction_bits.store(1f64.to_bits(), Ordering::Relaxed);
        }
        Ok(())
    }

    fn dispatch(&mut self, now: SimTime, ev: Ev) {
        match ev {
            Ev::TxDone(port) => {
                let p = &mut self.net.ports[port as usize];
                let shared = p.shared.map(|i| &mut self.net.shared[i as usize]);
                let done = p.finish_tx(now, &self.pool, shared);
                if done.first_on_wire {
                    self.q.schedule(now + p.delay, Ev::LinkArrive(port));
                }
                if done.lost {
                    self.pool.free(done.frame);
                    self.packets_dropped += 1;
                }
                if done.started_next {
                    self.start_tx(now, port);
                }
            }
            Ev::LinkArrive(port) => {
                let p = &mut self.net.ports[port as usize];
                let (t, id) = p.on_wire.pop_front().expect("arrival without a frame on the wire");
                debug_assert_eq!(t, now);
                let node = p.peer;
                if let Some(&(next, _)) = p.on_wire.front() {
                    self.q.schedule(next, Ev::LinkArrive(port));
                }
                if !p.up {
                    // The link failed while the frame was propagating.
                    p.stats.link_losses += 1;
                    self.pool.free(id);
                    self.packets_dropped += 1;
                    return;
                }
                if !self.captures.is_empty() {
                    self.capture(now, self.net.reverse[port as usize], id);
                }
                match self.net.kinds[node as usize] {
                    NodeKind::Host => self.deliver(now, node, id),
                    NodeKind::Switch => self.switch_receive(now, node, id),
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
                let e = &mut self.eps[ep as usize];
                let timer = match kind {
                    TimerKind::Rto => &mut e.rto_timer,
                    TimerKind::DelAck => &mut e.delack_timer,
                };
                if timer.fire(now, gen) {
                    let mut out = std::mem::take(&mut self.out);
                    out.clear();
                    self.eps[ep as usize].on_timer(now, kind, &self.tcp, &mut out);
                    self.out = out;
                }
                self.after_tcp(now, ep);
            }
            Ev::FlowStart(f) => self.start_flow(now, f),
            Ev::IncastNext(app) => self.incast_next(now, app),
            Ev::PoissonArrival { app, source } => self.poisson_arrival(now, app, source),
            Ev::SearchQuery(app) => self.search_query(now, app),
            Ev::SearchServed { app, server } => self.search_served(now, app, server),
            Ev::Request(app) => self.request_event(now, app),
            Ev::Link { port, up } => {
                for id in self.net.set_link(port, up, &self.pool) {
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
                let nic = self.net.nic(host);
                self.enqueue(now, nic, id);
            }
            Ev::Sample => {
                let t = now.as_secs_f64();
                for &p in &self.sampled_ports {
                    let port = &self.net.ports[p as usize];
                    self.samples.time.push(t);
                    self.samples.port.push(p);
                    self.samples.bytes.push(port.queue_bytes());
                    self.samples.packets.push(port.queue_packets());
                }
                self.q.schedule(now + self.sample_interval, Ev::Sample);
            }
            Ev::Stop => self.stop_reason = Some("duration"),
        }
    }

    fn switch_receive(&mut self, now: SimTime, sw: u32, id: PktId) {
        let pkt = self.pool.get(id);
        let Some(port) = self.net.route(sw, pkt.dst_host, pkt.flow_hash) else {
            // No route (failed links): the switch drops the frame.
            self.pool.free(id);
            self.packets_dropped += 1;
            return;
        };
        let latency = self.net.fwd_latency[(sw - self.net.num_hosts) as usize];
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

    #[inline]
    fn enqueue(&mut self, now: SimTime, port: u32, id: PktId) {
        let p = &mut self.net.ports[port as usize];
        let shared = p.shared.map(|i| &mut self.net.shared[i as usize]);
        match p.offer(now, id, &mut self.pool, shared) {
            Offer::Dropped => {
                self.pool.free(id);
                self.packets_dropped += 1;
            }
            Offer::Queued => {}
            Offer::StartTx => self.start_tx(now, port),
        }
    }

    /// A port begins serialising its current frame.
    #[inline]
    fn start_tx(&mut self, now: SimTime, port: u32) {
        let p = &self.net.ports[port as usize];
        let d = p.tx_duration(&self.pool);
        self.q.schedule(now + d, Ev::TxDone(port));
        if !self.captures.is_empty() {
            let id = p.transmitting.expect("transmitting");
            self.capture(now, port, id);
        }
    }

    /// Record a frame crossing the link end of `port` (either direction).
    fn capture(&mut self, now: SimTime, port: u32, id: PktId) {
        let c = self.capture_at[port as usize];
        if c == NO_CAPTURE {
            return;
        }
        let pkt = self.pool.get(id);
        let isns = Isns {
            own: self.eps[(pkt.conn * 2 + pkt.side as u32) as usize].isn,
            peer: self.eps[(pkt.conn * 2 + 1 - pkt.side as u32) as usize].isn,
        };
        self.captures[c as usize].record(now.ps(), pkt, isns);
    }

    fn deliver(&mut self, now: SimTime, host: u32, id: PktId) {
        let pkt = *self.pool.get(id);
        self.pool.free(id);
        self.packets_delivered += 1;
        let ep = pkt.conn * 2 + (1 - pkt.side as u32);
        debug_assert_eq!(self.eps[ep as usize].host, host);
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        self.eps[ep as usize].on_packet(now, &pkt, &self.tcp, &mut out);
        self.out = out;
        self.after_tcp(now, ep);
    }

    /// After an endpoint handled an input: let the application react, send
    /// what the endpoint now may, inject its packets, and schedule its timers.
    fn after_tcp(&mut self, now: SimTime, ep: u32) {
        let delivered = self.out.delivered;
        let established = self.out.established;
        if delivered > 0 || established {
            self.app_react(now, ep, delivered, established);
        }
        let mut out = std::mem::take(&mut self.out);
        self.eps[ep as usize].flush(now, &self.tcp, &mut out);
        let nic = self.net.nic(self.eps[ep as usize].host);
        for pkt in out.packets.drain(..) {
            self.inject(now, nic, pkt);
        }
        out.delivered = 0;
        out.established = false;
        self.out = out;
        let e = &mut self.eps[ep as usize];
        if let Some((t, gen)) = e.rto_timer.needs_event() {
            self.q.schedule(t, Ev::Timer { ep, kind: TimerKind::Rto, gen });
        }
        if let Some((t, gen)) = e.delack_timer.needs_event() {
            self.q.schedule(t, Ev::Timer { ep, kind: TimerKind::DelAck, gen });
        }
    }

    fn inject(&mut self, now: SimTime, nic: u32, mut pkt: Packet) {
        pkt.finalize_size(self.preamble_ifg);
        self.packets_created += 1;
        let (host, class) = (pkt.src_host, self.delay_class(pkt.conn, pkt.side));
        let id = self.pool.alloc(pkt);
        match class {
            Some((c, d)) if d > Dur::ZERO => {
                let line = host as usize * self.delay_classes.len() + c;
                if self.delay_lines[line].is_empty() {
                    self.q.schedule(now + d, Ev::HostDelay(line as u32));
                }
                self.delay_lines[line].push_back((now + d, id));
            }
            _ => self.enqueue(now, nic, id),
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
        let (src, dst, size) = {
            let fr = &self.flows[f as usize];
            (fr.src, fr.dst, fr.size)
        };
        let conn = self.new_connection(src, dst, ConnApp::Bulk { flow: f });
        self.flows[f as usize].conn = conn;
        for (i, filter) in self.capture_flow.iter().enumerate() {
            if *filter == Some(f) {
                self.captures[i].conn = Some(conn);
            }
        }
        let ep = conn * 2;
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        let e = &mut self.eps[ep as usize];
        // A long-lived flow writes "forever" (far more than any run can send).
        e.write(size.unwrap_or(u64::MAX / 4), size.is_some());
        e.open(now, &self.tcp, &mut out);
        self.out = out;
        self.after_tcp(now, ep);
    }

    fn app_react(&mut self, now: SimTime, ep: u32, delivered: u64, established: bool) {
        let conn = ep / 2;
        let side = ep % 2;
        match self.conn_app[conn as usize] {
            ConnApp::Bulk { flow } => {
                if side == 1 && delivered > 0 {
                    let fr = &mut self.flows[flow as usize];
                    fr.received += delivered;
                    if fr.end.is_none() && Some(fr.received) == fr.size {
                        fr.end = Some(now);
                        self.work_done();
                    }
                }
            }
            ConnApp::Search { app, server } => self.search_react(now, app, server, side, delivered, established),
            ConnApp::Requests { app, slot } => self.requests_react(now, app, slot, side, delivered),
            ConnApp::Incast { app, slot } => {
                let a = &mut self.incast[app as usize];
                let s = slot as usize;
                if established && side == 0 {
                    a.established += 1;
                    if a.established == a.conns.len() as u32 {
                        self.q.schedule(now, Ev::IncastNext(app));
                    }
                }
                if delivered > 0 && side == 1 {
                    // Responder: answer every complete query.
                    a.query_bytes_seen[s] += delivered;
                    while a.query_bytes_seen[s] >= (a.responses_written[s] + 1) * a.query {
                        a.responses_written[s] += 1;
                        let bytes = a.response[s];
                        self.eps[ep as usize].write(bytes, false);
                    }
                }
                if delivered > 0 && side == 0 {
                    a.got[s] += delivered;
                    if a.got[s] == a.response[s] * a.round as u64 {
                        let f = a.flow_of_slot[s] as usize;
                        self.flows[f].received = a.response[s];
                        self.flows[f].end = Some(now);
                        a.pending -= 1;
                        if a.pending == 0 {
                            self.finish_round(now, app);
                        }
                    }
                }
            }
        }
    }

    fn incast_next(&mut self, now: SimTime, app: u32) {
        let a = &self.incast[app as usize];
        if a.conns.is_empty() {
            // Open the persistent connections; round 1 starts when all are up.
            let (querier, responders) = (a.querier, a.responder_of.clone());
            for (slot, r) in responders.into_iter().enumerate() {
                let conn = self.new_connection(querier, r, ConnApp::Incast { app, slot: slot as u32 });
                self.incast[app as usize].conns.push(conn);
                let mut out = std::mem::take(&mut self.out);
                out.clear();
                self.eps[(conn * 2) as usize].open(now, &self.tcp, &mut out);
                self.out = out;
                self.after_tcp(now, conn * 2);
            }
            return;
        }
        // Start a round: send the query on every connection.
        let a = &mut self.incast[app as usize];
        a.round += 1;
        a.round_start = now;
        a.pending = a.conns.len() as u32;
        let round = a.round;
        let query = a.query;
        let conns = a.conns.clone();
        for (slot, &conn) in conns.iter().enumerate() {
            let responder_stats = self.eps[(conn * 2 + 1) as usize].stats;
            let querier_stats = self.eps[(conn * 2) as usize].stats;
            let a = &mut self.incast[app as usize];
            a.stats_at_round_start[slot] = responder_stats;
            let flow = self.flows.len() as u32;
            a.flow_of_slot[slot] = flow;
            self.flows.push(FlowRec {
                workload: a.workload,
                kind: FlowKind::Response,
                src: a.responder_of[slot],
                dst: a.querier,
                size: Some(a.response[slot]),
                start: now,
                conn,
                received: 0,
                end: None,
                round,
                sender_at_start: responder_stats,
                receiver_at_start: querier_stats,
                new_connection: false,
            });
            self.eps[(conn * 2) as usize].write(query, false);
            self.out.clear();
            self.after_tcp(now, conn * 2);
        }
    }

    fn finish_round(&mut self, now: SimTime, app: u32) {
        let a = &self.incast[app as usize];
        let (mut timeouts, mut retransmits) = (0, 0);
        for (slot, &conn) in a.conns.iter().enumerate() {
            let s = &self.eps[(conn * 2 + 1) as usize].stats;
            timeouts += s.timeouts - a.stats_at_round_start[slot].timeouts;
            retransmits += s.retransmits - a.stats_at_round_start[slot].retransmits;
        }
        self.queries.push(QueryRow {
            workload: a.workload,
            round: a.round,
            start: a.round_start,
            end: now,
            responders: a.conns.len() as u32,
            timeouts,
            retransmits,
            within_deadline: -1,
        });
        if a.round < a.rounds {
            let at = now + a.think;
            self.q.schedule(at, Ev::IncastNext(app));
        } else {
            self.work_done();
        }
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
        self.pool.live() as u64
    }
    pub fn endpoints(&self) -> &[Endpoint] {
        &self.eps
    }
    pub fn network(&self) -> &Network {
        &self.net
    }

    fn flows_table(&self) -> Table {
        let ideal = crate::ideal::IdealModel::new(self.scenario, &self.net, &self.tcp);
        let n = self.flows.len();
        let (mut id, mut wl, mut kind, mut src, mut dst, mut bytes, mut delivered) =
            (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        let (mut start, mut end, mut fct, mut ideal_fct, mut slowdown, mut round) =
            (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        let (mut retx, mut fast, mut tos, mut spur, mut ecnr) = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (i, f) in self.flows.iter().enumerate() {
            id.push(i as u64);
            wl.push(f.workload);
            kind.push(match f.kind {
                FlowKind::Bulk => "bulk".to_string(),
                FlowKind::Response => "response".to_string(),
            });
            src.push(f.src);
            dst.push(f.dst);
            bytes.push(f.size.map(|b| b as i64).unwrap_or(-1));
            start.push(f.start.as_secs_f64());
            round.push(if f.kind == FlowKind::Response { f.round as i64 } else { -1 });
            let (s_now, r_now) = if f.conn == u32::MAX {
                (TcpStats::default(), TcpStats::default())
            } else {
                let (sender, receiver) = match f.kind {
                    FlowKind::Bulk => (f.conn * 2, f.conn * 2 + 1),
                    FlowKind::Response => (f.conn * 2 + 1, f.conn * 2),
                };
                (self.eps[sender as usize].stats, self.eps[receiver as usize].stats)
            };
            let got = if f.end.is_some() { f.received } else { self.partial_response(i, f) };
            delivered.push(got);
            retx.push(s_now.retransmits - f.sender_at_start.retransmits);
            fast.push(s_now.fast_retransmits - f.sender_at_start.fast_retransmits);
            tos.push(s_now.timeouts - f.sender_at_start.timeouts);
            ecnr.push(s_now.ecn_reductions - f.sender_at_start.ecn_reductions);
            spur.push(r_now.duplicate_segments_received - f.receiver_at_start.duplicate_segments_received);
            let ideal_t = f.size.map(|b| {
                let query = match self.conn_app.get(f.conn as usize) {
                    Some(ConnApp::Incast { app, .. }) => Some(self.incast[*app as usize].query),
                    Some(ConnApp::Search { app, .. }) => Some(self.search[*app as usize].query),
                    Some(ConnApp::Requests { app, .. }) => Some(self.requests[*app as usize].request),
                    _ => None,
                };
                let hash = if f.conn == u32::MAX { 0 } else { self.eps[(f.conn * 2) as usize].flow_hash };
                // RTT variation: extra delay of the packets the source and the destination send.
                let side = |s: u8| if f.conn == u32::MAX { Dur::ZERO } else { self.delay_class(f.conn, s).map_or(Dur::ZERO, |c| c.1) };
                let extra = match f.kind {
                    FlowKind::Bulk => (side(0), side(1)),
                    FlowKind::Response => (side(1), side(0)),
                };
                ideal.flow(f.src, f.dst, hash, b, f.new_connection, query, extra)
            }).flatten();
            match f.end {
                Some(e) => {
                    let t = (e - f.start).as_secs_f64();
                    end.push(e.as_secs_f64());
                    fct.push(t);
                    let it = ideal_t.map(|d| d.as_secs_f64()).unwrap_or(f64::NAN);
                    ideal_fct.push(it);
                    slowdown.push(t / it);
                }
                None => {
                    end.push(f64::NAN);
                    fct.push(f64::NAN);
                    ideal_fct.push(ideal_t.map(|d| d.as_secs_f64()).unwrap_or(f64::NAN));
                    slowdown.push(f64::NAN);
                }
            }
        }
        Table::new("flows")
            .col("id", Col::U64(id))
            .col("workload", Col::U32(wl))
            .col("kind", Col::Str(kind))
            .col("src", Col::U32(src))
            .col("dst", Col::U32(dst))
            .col("bytes", Col::I64(bytes))
            .col("delivered", Col::U64(delivered))
            .col("start", Col::F64(start))
            .col("end", Col::F64(end))
            .col("fct", Col::F64(fct))
            .col("ideal_fct", Col::F64(ideal_fct))
            .col("slowdown", Col::F64(slowdown))
            .col("round", Col::I64(round))
            .col("retransmits", Col::U64(retx))
            .col("fast_retransmits", Col::U64(fast))
            .col("timeouts", Col::U64(tos))
            .col("spurious_retransmits", Col::U64(spur))
            .col("ecn_reductions", Col::U64(ecnr))
    }

    /// Bytes of an unfinished response received so far (responses on one
    /// connection arrive in order, so only the oldest open one has any).
    fn partial_response(&self, id: usize, f: &FlowRec) -> u64 {
        match self.conn_app.get(f.conn as usize) {
            Some(&ConnApp::Incast { app, slot }) => {
                let a = &self.incast[app as usize];
                a.got[slot as usize] - a.response[slot as usize] * (f.round as u64 - 1)
            }
            Some(&ConnApp::Search { app, server }) => {
                let a = &self.search[app as usize];
                let s = server as usize;
                if a.responses_done[s] + 1 == f.round {
                    a.response_bytes[s] - a.responses_done[s] as u64 * a.response
                } else {
                    0
                }
            }
            Some(&ConnApp::Requests { app, slot }) => {
                let st = &self.requests[app as usize].slots[slot as usize];
                if st.busy && st.flow as usize == id {
                    st.response_bytes - st.response_base
                } else {
                    0
                }
            }
            _ => f.received,
        }
    }

    fn queries_table(&self) -> Table {
        let q = &self.queries;
        Table::new("queries")
            .col("workload", Col::U32(q.iter().map(|r| r.workload).collect()))
            .col("round", Col::U32(q.iter().map(|r| r.round).collect()))
            .col("start", Col::F64(q.iter().map(|r| r.start.as_secs_f64()).collect()))
            .col("end", Col::F64(q.iter().map(|r| r.end.as_secs_f64()).collect()))
            .col("completion_time", Col::F64(q.iter().map(|r| (r.end - r.start).as_secs_f64()).collect()))
            .col("responders", Col::U32(q.iter().map(|r| r.responders).collect()))
            .col("timeouts", Col::U64(q.iter().map(|r| r.timeouts).collect()))
            .col("retransmits", Col::U64(q.iter().map(|r| r.retransmits).collect()))
            .col("within_deadline", Col::I64(q.iter().map(|r| r.within_deadline).collect()))
    }

    fn ports_table(&self) -> Table {
        let ports = &self.net.ports;
        let kind = |n: u32| match self.net.kinds[n as usize] {
            NodeKind::Host => "host".to_string(),
            NodeKind::Switch => "switch".to_string(),
        };
        Table::new("ports")
            .col("port", Col::U32((0..ports.len() as u32).collect()))
            .col("node", Col::U32(ports.iter().map(|p| p.node).collect()))
            .col("node_kind", Col::Str(ports.iter().map(|p| kind(p.node)).collect()))
            .col("node_name", Col::Str(ports.iter().map(|p| self.net.names[p.node as usize].clone()).collect()))
            .col("peer_name", Col::Str(ports.iter().map(|p| self.net.names[p.peer as usize].clone()).collect()))
            .col("peer", Col::U32(ports.iter().map(|p| p.peer).collect()))
            .col("rate_bps", Col::U64(ports.iter().map(|p| p.rate.bps).collect()))
            .col("delay", Col::F64(ports.iter().map(|p| p.delay.as_secs_f64()).collect()))
            .col("tx_packets", Col::U64(ports.iter().map(|p| p.stats.tx_packets).collect()))
            .col("tx_bytes", Col::U64(ports.iter().map(|p| p.stats.tx_bytes).collect()))
            .col("enqueued", Col::U64(ports.iter().map(|p| p.stats.enqueued).collect()))
            .col("drops", Col::U64(ports.iter().map(|p| p.stats.drops).collect()))
            .col("link_losses", Col::U64(ports.iter().map(|p| p.stats.link_losses).collect()))
            .col("ecn_marks", Col::U64(ports.iter().map(|p| p.stats.marks).collect()))
            .col("max_queue_bytes", Col::U64(ports.iter().map(|p| p.stats.max_queue_bytes).collect()))
            .col("max_queue_packets", Col::U64(ports.iter().map(|p| p.stats.max_queue_packets).collect()))
    }

    fn queues_table(&mut self) -> Table {
        let s = std::mem::replace(&mut self.samples, QueueSamples { time: Vec::new(), port: Vec::new(), bytes: Vec::new(), packets: Vec::new() });
        Table::new("queues")
            .col("time", Col::F64(s.time))
            .col("port", Col::U32(s.port))
            .col("bytes", Col::U64(s.bytes))
            .col("packets", Col::U64(s.packets))
    }

    fn trace_table(&mut self) -> Table {
        let rows: Vec<TraceRow> = std::mem::take(&mut self.out.trace);
        Table::new("tcp_trace")
            .col("time", Col::F64(rows.iter().map(|r| r.time.as_secs_f64()).collect()))
            .col("conn", Col::U32(rows.iter().map(|r| r.conn).collect()))
            .col("side", Col::U32(rows.iter().map(|r| r.side as u32).collect()))
            .col("cwnd", Col::U64(rows.iter().map(|r| r.cwnd).collect()))
            .col("ssthresh", Col::U64(rows.iter().map(|r| r.ssthresh.min(u32::MAX as u64 * 4)).collect()))
            .col("srtt", Col::F64(rows.iter().map(|r| r.srtt.as_secs_f64()).collect()))
            .col("rttvar", Col::F64(rows.iter().map(|r| r.rttvar.as_secs_f64()).collect()))
            .col("rto", Col::F64(rows.iter().map(|r| r.rto.as_secs_f64()).collect()))
            .col("bytes_in_flight", Col::U64(rows.iter().map(|r| r.in_flight).collect()))
            .col("dctcp_alpha", Col::F64(rows.iter().map(|r| r.alpha).collect()))
    }

    /// Build the result tables and summary (consumes the samples and traces).
    pub fn finish(&mut self, wall_seconds: f64) -> RunOutput {
        let flows = self.flows_table();
        let queries = self.queries_table();
        let ports = self.ports_table();
        let queues = self.queues_table();
        let trace = self.trace_table();
        let sim_s = self.q.now().as_secs_f64();
        let events = self.q.events_executed();
        let mut m = serde_json::Map::new();
        let s = self.scenario;
        use serde_json::json;
        m.insert("dcsim_version".into(), json!(crate::VERSION));
        m.insert("name".into(), json!(s.name));
        m.insert("seed".into(), json!(s.run.seed));
        m.insert("scenario_hash".into(), json!(s.hash()));
        m.insert("stopped_by".into(), json!(self.stop_reason.unwrap_or("running")));
        m.insert("events".into(), json!(events));
        m.insert("sim_seconds".into(), json!(sim_s));
        m.insert("wall_seconds".into(), json!(wall_seconds));
        m.insert("events_per_s".into(), json!(if wall_seconds > 0.0 { events as f64 / wall_seconds } else { 0.0 }));
        m.insert("packets_created".into(), json!(self.packets_created));
        m.insert("packets_delivered".into(), json!(self.packets_delivered));
        m.insert("packets_dropped".into(), json!(self.packets_dropped));
        m.insert("packets_in_flight".into(), json!(self.packets_in_flight()));
        m.insert("flows".into(), json!(self.flows.len()));
        m.insert("flows_completed".into(), json!(self.flows.iter().filter(|f| f.end.is_some()).count()));
        m.insert("queries_completed".into(), json!(self.queries.len()));
        let caps = std::mem::take(&mut self.captures);
        let counts: Vec<_> = caps.iter().map(|c| c.counts).collect();
        let captures = Table::new("captures")
            .col("name", Col::Str(caps.iter().map(|c| c.name.clone()).collect()))
            .col("port", Col::U32(caps.iter().map(|c| c.port).collect()))
            .col("frames", Col::U64(counts.iter().map(|c| c.frames).collect()))
            .col("retransmissions", Col::U64(counts.iter().map(|c| c.retransmissions).collect()))
            .col("duplicate_acks", Col::U64(counts.iter().map(|c| c.duplicate_acks).collect()))
            .col("ce", Col::U64(counts.iter().map(|c| c.ce).collect()))
            .col("ece", Col::U64(counts.iter().map(|c| c.ece).collect()))
            .col("cwr", Col::U64(counts.iter().map(|c| c.cwr).collect()));
        let pcaps = caps.into_iter().map(|c| (c.name.clone(), c.into_bytes())).collect();
        RunOutput { tables: vec![flows, queries, queues, ports, trace, captures], summary: m, pcaps }
    }
}

/// Run a scenario to completion. `progress`, if given, is updated as the run
/// goes and can cancel it.
pub fn run(s: &Scenario, progress: Option<&Progress>) -> Result<RunOutput, RunError> {
    let t0 = Instant::now();
    let mut w = World::new(s);
    w.run(progress)?;
    Ok(w.finish(t0.elapsed().as_secs_f64()))
}

