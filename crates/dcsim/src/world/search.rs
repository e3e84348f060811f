//! Fan-out/fan-in search with server service times (seed 000 §III-B).

use super::*;

/// Fan-out/fan-in search (see config::Search).
pub(super) struct SearchApp {
    pub(super) workload: u32,
    pub(super) client: u32,
    pub(super) servers: Vec<u32>,
    pub(super) conns: Vec<u32>,
    pub(super) query: u64,
    pub(super) response: u64,
    pub(super) service: ServiceTime,
    pub(super) rate: f64,
    pub(super) deadline: Option<Dur>,
    pub(super) stop: SimTime,
    pub(super) rng: Rng,
    pub(super) established: u32,
    pub(super) generating: bool,
    /// Per query: send time, responses outstanding, responses in time, first flow id.
    pub(super) queries: Vec<(SimTime, u32, u32, u32)>,
    pub(super) open_queries: u32,
    /// Per server: query bytes and complete queries received, queries
    /// waiting (the front one is in service while busy), busy serving.
    pub(super) query_bytes: Vec<u64>,
    pub(super) received: Vec<u32>,
    pub(super) waiting: Vec<VecDeque<u32>>,
    pub(super) busy: Vec<bool>,
    /// Per server: response bytes received by the client, responses complete.
    pub(super) response_bytes: Vec<u64>,
    pub(super) responses_done: Vec<u32>,
}

impl World<'_> {
    pub(super) fn install_search(&mut self, workload: u32, p: &Search) {
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
    pub(super) fn search_query(&mut self, now: SimTime, app: u32) {
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
                dscp: 0,
                sender_rtt: None,
            });
            self.eps[(conn * 2) as usize].write(query, false, &self.tcp);
            self.out.clear();
            self.after_tcp(now, conn * 2);
        }
    }

    /// A server begins serving its next waiting query, if idle.
    pub(super) fn search_serve_next(&mut self, now: SimTime, app: u32, server: u32) {
        let a = &mut self.search[app as usize];
        let s = server as usize;
        if a.busy[s] || a.waiting[s].is_empty() {
            return;
        }
        a.busy[s] = true;
        let t = service_time(&mut a.rng, &a.service);
        self.q.schedule(now + t, Ev::SearchServed { app, server });
    }

    pub(super) fn search_served(&mut self, now: SimTime, app: u32, server: u32) {
        let a = &mut self.search[app as usize];
        let s = server as usize;
        a.waiting[s].pop_front();
        a.busy[s] = false;
        let (conn, response) = (a.conns[s], a.response);
        self.eps[(conn * 2 + 1) as usize].write(response, false, &self.tcp);
        self.out.clear();
        self.after_tcp(now, conn * 2 + 1);
        self.search_serve_next(now, app, server);
    }

    pub(super) fn search_react(&mut self, now: SimTime, app: u32, server: u32, side: u32, delivered: u64, established: bool) {
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
                self.complete_flow(first_flow as usize + s, now, response);
                if last {
                    self.finish_search_query(now, app, q);
                }
            }
        }
    }

    pub(super) fn finish_search_query(&mut self, now: SimTime, app: u32, q: usize) {
        let a = &mut self.search[app as usize];
        let (start, _, in_time, first_flow) = a.queries[q];
        a.open_queries -= 1;
        let (mut timeouts, mut retransmits) = (0, 0);
        for s in 0..a.servers.len() {
            // Every response has completed: its counters are its own.
            let f = &self.flows[first_flow as usize + s];
            timeouts += f.sender_at_start.timeouts;
            retransmits += f.sender_at_start.retransmits;
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
}
