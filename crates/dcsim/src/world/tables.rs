//! The result tables, built once at the end of a run.

use super::*;

impl World<'_> {
    /// The one-way time `bytes` sent in frames of `frame(len)` bytes
    /// (`payload` per frame) take from `src` to `dst` alone: each hop's
    /// propagation and the first frame's store-and-forward, then the rest
    /// of the frames at the slowest link.
    pub(super) fn one_way_ideal(&self, src: u32, dst: u32, hash: u32, bytes: u64, payload: u64, frame: impl Fn(u64) -> u64) -> Option<Dur> {
        let wire = |len: u64| frame(len) + self.preamble_bytes();
        let (full, rest) = (bytes / payload, bytes % payload);
        let total = full * wire(payload) + if rest > 0 { wire(rest) } else { 0 };
        self.ideal_of_frames(src, dst, hash, wire(payload.min(bytes)), total, bytes.div_ceil(payload).max(1))
    }

    /// Each frame's preamble, when the link counts it.
    pub(super) fn preamble_bytes(&self) -> u64 {
        if self.preamble { crate::packet::PREAMBLE } else { 0 }
    }

    /// The ideal one-way time of `frames` frames of `total` bytes
    /// (preambles included): the `first` store-and-forwarded at every hop
    /// (and each switch's forwarding latency), the rest back to back at the
    /// slowest link, with its inter-frame gaps.
    pub(super) fn ideal_of_frames(&self, src: u32, dst: u32, hash: u32, first: u64, total: u64, frames: u64) -> Option<Dur> {
        let path = self.net.path(src, dst, hash)?;
        let mut t = Dur::ZERO;
        let mut slowest = &self.net.ports[path[0] as usize];
        for &p in &path {
            let port = &self.net.ports[p as usize];
            t += port.delay + port.rate.tx_time(first);
            if port.peer >= self.net.num_hosts {
                t += self.net.fwd_latency[(port.peer - self.net.num_hosts) as usize];
            }
            if port.rate.bps < slowest.rate.bps {
                slowest = port;
            }
        }
        Some(t + slowest.rate.tx_time(total - first) + Dur(slowest.gap.0 * (frames - 1)))
    }

    pub(super) fn flows_table(&self) -> Table {
        let ideal = crate::ideal::IdealModel::new(self.scenario, &self.net, &self.tcp);
        let n = self.flows.len();
        let (mut id, mut wl, mut kind, mut src, mut dst, mut bytes, mut delivered) =
            (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        let (mut start, mut end, mut fct, mut ideal_fct, mut slowdown, mut round) =
            (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        let (mut retx, mut fast, mut tos, mut spur, mut ecnr, mut conn) = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::with_capacity(n));
        let mut dscp = Vec::with_capacity(n);
        let mut undone = Vec::with_capacity(n);
        let mut probes = Vec::with_capacity(n);
        let (mut min_rtt, mut srtt) = (Vec::with_capacity(n), Vec::with_capacity(n));
        // RDMA and NDP flows keep their counters in their records (rdma_snapshot, ndp_snapshot).
        let rdma = self.rdma.is_some() || self.ndp.is_some() || self.homa.is_some();
        for (i, f) in self.flows.iter().enumerate() {
            id.push(i as u64);
            wl.push(f.workload);
            kind.push(match f.kind {
                FlowKind::Bulk => "bulk".to_string(),
                FlowKind::Response => "response".to_string(),
            });
            src.push(f.src);
            dst.push(f.dst);
            conn.push(if f.conn == u32::MAX { -1 } else { f.conn as i64 });
            dscp.push(f.dscp as u32);
            bytes.push(f.size.map(|b| b as i64).unwrap_or(-1));
            start.push(f.start.as_secs_f64());
            round.push(if f.kind == FlowKind::Response { f.round as i64 } else { -1 });
            // A finished flow holds its own counts; a running one its snapshot at the start.
            let (s, r) = if f.end.is_some() || f.conn == u32::MAX || rdma {
                (f.sender_at_start, f.receiver_at_start)
            } else {
                let (sender, receiver) = f.endpoints();
                (self.eps[sender as usize].stats.since(&f.sender_at_start), self.eps[receiver as usize].stats.since(&f.receiver_at_start))
            };
            let got = if f.end.is_some() { f.received } else { self.partial_response(i, f) };
            delivered.push(got);
            retx.push(s.retransmits);
            fast.push(s.fast_retransmits);
            tos.push(s.timeouts);
            ecnr.push(s.ecn_reductions);
            undone.push(s.spurious_timeouts);
            probes.push(s.tail_loss_probes);
            spur.push(r.duplicate_segments_received);
            let rtt = if f.end.is_some() || f.conn == u32::MAX || rdma { f.sender_rtt } else { self.eps[f.endpoints().0 as usize].rtt.summary() };
            min_rtt.push(rtt.map_or(f64::NAN, |r| r.0.as_secs_f64()));
            srtt.push(rtt.map_or(f64::NAN, |r| r.1.as_secs_f64()));
            let ideal_t = f.size.and_then(|b| {
                if self.ndp.is_some() {
                    return self.ndp_ideal(f.src, f.dst, b);
                }
                if self.homa.is_some() {
                    return self.homa_ideal(f.src, f.dst, b);
                }
                if rdma {
                    let hash = if f.conn == u32::MAX { 0 } else { self.rdma_flow_hash(f.conn) };
                    return self.rdma_ideal(f.src, f.dst, hash, b);
                }
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
            });
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
            .col("conn", Col::I64(conn))
            .col("dscp", Col::U32(dscp))
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
            .col("spurious_timeouts", Col::U64(undone))
            .col("tail_loss_probes", Col::U64(probes))
            .col("min_rtt", Col::F64(min_rtt))
            .col("srtt", Col::F64(srtt))
    }

    /// Bytes of an unfinished response received so far (responses on one
    /// connection arrive in order, so only the oldest open one has any).
    pub(super) fn partial_response(&self, id: usize, f: &FlowRec) -> u64 {
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

    pub(super) fn queries_table(&self) -> Table {
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

    pub(super) fn ports_table(&self) -> Table {
        let ports = &self.net.ports;
        let now_ps = self.q.now().ps();
        let kind = |n: u32| match self.net.kinds[n as usize] {
            NodeKind::Host => "host".to_string(),
            NodeKind::Switch => "switch".to_string(),
        };
        let mut t = Table::new("ports")
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
            .col("pq_marks", Col::U64(ports.iter().map(|p| p.stats.pq_marks).collect()))
            .col("hscc_cbr_entries", Col::U64(ports.iter().map(|p| p.hscc.as_ref().map_or(0, |h| h.stats.cbr_entries)).collect()))
            .col("hscc_cbr_time", Col::F64(ports.iter().map(|p| p.hscc.as_ref().map_or(0.0, |h| h.cbr_time_ps(now_ps) as f64 * 1e-12)).collect()))
            .col("hscc_rewrites", Col::U64(ports.iter().map(|p| p.hscc.as_ref().map_or(0, |h| h.stats.rewrites)).collect()))
            .col("max_queue_bytes", Col::U64(ports.iter().map(|p| p.stats.max_queue_bytes).collect()))
            .col("max_queue_packets", Col::U64(ports.iter().map(|p| p.stats.max_queue_packets).collect()))
            .col("ingress_drops", Col::U64((0..ports.len()).map(|p| self.voq_ingress_drops(p)).collect()));
        // NDP's switches: trimmed packets (only where a port trims, so other outputs keep their columns).
        if ports.iter().any(|p| p.classes.as_ref().is_some_and(|c| c.trim.is_some())) {
            let count = |f: fn(&crate::sched::Classes) -> u64| Col::U64(ports.iter().map(|p| p.classes.as_deref().map_or(0, f)).collect());
            t = t.col("trims", count(|c| c.trims)).col("bounces", count(|c| c.bounces));
        }
        t
    }

    /// Frames a VOQ switch port dropped on arrival (0 without VOQs).
    fn voq_ingress_drops(&self, port: usize) -> u64 {
        let node = self.net.ports[port].node;
        if self.voqs.is_empty() || node < self.net.num_hosts {
            return 0;
        }
        self.voqs[(node - self.net.num_hosts) as usize].ingress_drops[self.voq_local[port] as usize]
    }

    pub(super) fn queues_table(&mut self) -> Table {
        let s = std::mem::replace(&mut self.samples, QueueSamples { time: Vec::new(), port: Vec::new(), bytes: Vec::new(), packets: Vec::new() });
        Table::new("queues")
            .col("time", Col::F64(s.time))
            .col("port", Col::U32(s.port))
            .col("bytes", Col::U64(s.bytes))
            .col("packets", Col::U64(s.packets))
    }

    /// VOQ switches' ingress buffers: cells and frames held per sampled port.
    pub(super) fn voq_table(&mut self) -> Table {
        let s = std::mem::replace(&mut self.voq_samples, QueueSamples { time: Vec::new(), port: Vec::new(), bytes: Vec::new(), packets: Vec::new() });
        Table::new("voq").col("time", Col::F64(s.time)).col("port", Col::U32(s.port)).col("cells", Col::U64(s.bytes)).col("frames", Col::U64(s.packets))
    }

    pub(super) fn trace_table(&mut self) -> Table {
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
            .col("snd_wnd", Col::U64(rows.iter().map(|r| r.snd_wnd).collect()))
            .col("bytes_acked", Col::U64(rows.iter().map(|r| r.acked).collect()))
            .col("dctcp_alpha", Col::F64(rows.iter().map(|r| r.alpha).collect()))
    }

    /// The workload a connection belongs to.
    fn conn_workload(&self, conn: u32) -> u32 {
        match self.conn_app[conn as usize] {
            ConnApp::Bulk { flow, .. } => self.flows[flow as usize].workload,
            ConnApp::Incast { app, .. } => self.incast[app as usize].workload,
            ConnApp::Search { app, .. } => self.search[app as usize].workload,
            ConnApp::Requests { app, .. } => self.requests[app as usize].workload,
        }
    }

    /// Per sending endpoint that passed a pacer: its association counters.
    fn pacer_table(&self) -> Table {
        let end = self.q.now();
        let rows: Vec<(u32, &PacerFlow)> = self.pacer_flows.iter().enumerate().filter(|(_, f)| f.packets > 0).map(|(i, f)| (i as u32, f)).collect();
        let u64s = |get: fn(&PacerFlow) -> u64| Col::U64(rows.iter().map(|(_, f)| get(f)).collect());
        Table::new("pacer")
            .col("host", Col::U32(rows.iter().map(|(ep, _)| self.eps[*ep as usize].host).collect()))
            .col("conn", Col::U32(rows.iter().map(|(ep, _)| ep / 2).collect()))
            .col("side", Col::U32(rows.iter().map(|(ep, _)| ep % 2).collect()))
            .col("workload", Col::U32(rows.iter().map(|(ep, _)| self.conn_workload(ep / 2)).collect()))
            .col("packets", u64s(|f| f.packets))
            .col("echo_packets", u64s(|f| f.echo_packets))
            .col("associations", u64s(|f| f.associations))
            .col("releases", Col::U64(rows.iter().map(|(_, f)| f.releases_at(end)).collect()))
            .col("paced_packets", u64s(|f| f.paced_packets))
    }

    /// Build the result tables and summary (consumes the samples and traces).
    pub fn finish(&mut self, wall_seconds: f64) -> RunOutput {
        let now = self.q.now();
        self.rdma_close();
        self.ndp_close();
        for p in &mut self.net.ports {
            p.settle(now, &mut self.pool);
        }
        let flows = self.flows_table();
        let queries = self.queries_table();
        let ports = self.ports_table();
        let queues = self.queues_table();
        let trace = self.trace_table();
        let pacer = self.pacer_table();
        let voq = self.voq_table();
        let pfc = self.pfc_table();
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
        m.insert("pacer_drops".into(), json!(self.pacers.iter().map(|p| p.drops).sum::<u64>()));
        if let Some(run) = &self.homa {
            let upper: Vec<_> = run.cutoffs().iter().map(|&c| if c == u64::MAX { serde_json::Value::Null } else { json!(c) }).collect();
            m.insert("homa_cutoffs".into(), json!(upper));
        }
        if let Some(run) = &self.pfc {
            let deadlock = run.deadlock.as_ref().map(|(at, class, ports)| json!({"at": at.as_secs_f64(), "class": class, "ports": ports}));
            m.insert("pfc_deadlock".into(), json!(deadlock));
        }
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
        RunOutput { tables: vec![flows, queries, queues, ports, trace, captures, pacer, voq, pfc], summary: m, pcaps }
    }
}
