//! Request/response over pooled persistent connections (seed 000 §III-A),
//! or a new connection per request (`connections = "per_flow"`).

use super::*;

/// Request/response over pooled persistent connections (see config::Requests).
pub(super) struct RequestsApp {
    pub(super) workload: u32,
    pub(super) client: u32,
    pub(super) servers: Vec<u32>,
    pub(super) request: u64,
    pub(super) dist: SizeDist,
    pub(super) arrival: RequestArrival,
    pub(super) rate: f64,
    pub(super) stop: SimTime,
    pub(super) rng: Rng,
    pub(super) next_server: usize,
    pub(super) slots: Vec<RequestSlot>,
    /// Per server: its connection slots.
    pub(super) pool: Vec<Vec<u32>>,
    pub(super) generating: bool,
    pub(super) open: u32,
    /// Closed loop with a count: requests sent per server entry, and the count.
    pub(super) sent: Vec<u32>,
    pub(super) count: Option<u32>,
    /// Closed loop: each request waits a uniform random [0, send_jitter).
    pub(super) send_jitter: Dur,
    /// A new connection per request, closed after its response.
    pub(super) per_request: bool,
}

/// One connection of a requests app and the request it carries.
pub(super) struct RequestSlot {
    pub(super) conn: u32,
    pub(super) server: u32,
    pub(super) busy: bool,
    /// The response size and flow of the current request.
    pub(super) size: u64,
    pub(super) flow: u32,
    /// Server side: request bytes received and requests answered; client
    /// side: response bytes received in all.
    pub(super) request_bytes: u64,
    pub(super) answered: u64,
    pub(super) response_bytes: u64,
    /// Response bytes of the requests before the current one.
    pub(super) response_base: u64,
}

impl World<'_> {
    pub(super) fn install_requests(&mut self, workload: u32, p: &Requests) {
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
            sent: vec![0; p.servers.0.len()],
            count: p.count,
            send_jitter: p.send_jitter.0,
            per_request: p.connections == crate::config::Connections::PerFlow,
        });
        if p.arrival == RequestArrival::Poisson || p.count.is_some() {
            self.unfinished += 1;
        }
        self.q.schedule(SimTime::ZERO + p.start.0, Ev::Request(app));
    }

    /// Closed loop: ask every server at once (first call). Poisson: one
    /// request to the next server in round robin, and schedule the next.
    pub(super) fn request_event(&mut self, now: SimTime, app: u32) {
        let a = &mut self.requests[app as usize];
        match a.arrival {
            RequestArrival::ClosedLoop => {
                for server in 0..a.servers.len() as u32 {
                    self.send_request_after_jitter(now, app, server);
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

    /// Closed loop: send now, or after this app's random send jitter.
    fn send_request_after_jitter(&mut self, now: SimTime, app: u32, server: u32) {
        let a = &mut self.requests[app as usize];
        if a.send_jitter == Dur::ZERO {
            self.send_request(now, app, server);
        } else {
            let delay = Dur(a.rng.below(a.send_jitter.ps()));
            self.q.schedule(now + delay, Ev::RequestSend { app, server });
        }
    }

    /// Send a request to `server` on an idle pooled connection, or a new one.
    pub(super) fn send_request(&mut self, now: SimTime, app: u32, server: u32) {
        let a = &mut self.requests[app as usize];
        let size = a.dist.sample(&mut a.rng);
        a.open += 1;
        a.sent[server as usize] += 1;
        let idle = if a.per_request { None } else { a.pool[server as usize].iter().copied().find(|&s| !a.slots[s as usize].busy) };
        let (slot, new_conn) = match idle {
            Some(s) => (s, false),
            None => {
                let slot = a.slots.len() as u32;
                let (client, host) = (a.client, a.servers[server as usize]);
                let conn = self.new_connection(client, host, ConnApp::Requests { app, slot });
                let a = &mut self.requests[app as usize];
                a.slots.push(RequestSlot { conn, server, busy: false, size: 0, flow: 0, request_bytes: 0, answered: 0, response_bytes: 0, response_base: 0 });
                if !a.per_request {
                    a.pool[server as usize].push(slot);
                }
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
            dscp: 0,
            sender_rtt: None,
        });
        let a = &mut self.requests[app as usize];
        let st = &mut a.slots[slot as usize];
        st.busy = true;
        st.size = size;
        st.flow = flow;
        let ep = (conn * 2) as usize;
        self.eps[ep].write(request, false, &self.tcp);
        self.out.clear();
        if new_conn {
            self.eps[ep].open(now, &self.tcp, &mut self.out);
        }
        self.after_tcp(now, conn * 2);
    }

    pub(super) fn requests_react(&mut self, now: SimTime, app: u32, slot: u32, side: u32, delivered: u64) {
        let a = &mut self.requests[app as usize];
        let (request, per_request) = (a.request, a.per_request);
        let st = &mut a.slots[slot as usize];
        if side == 1 && delivered > 0 {
            // Server: answer each complete request with its response (and
            // close, without keep-alive).
            st.request_bytes += delivered;
            while st.request_bytes >= (st.answered + 1) * request {
                st.answered += 1;
                let (conn, size) = (st.conn, st.size);
                self.eps[(conn * 2 + 1) as usize].write(size, per_request, &self.tcp);
            }
        } else if side == 0 && delivered > 0 {
            st.response_bytes += delivered;
            if st.busy && st.response_bytes >= st.response_base + st.size {
                st.response_base += st.size;
                st.busy = false;
                let (flow, size, server, conn) = (st.flow, st.size, st.server, st.conn);
                a.open -= 1;
                if per_request {
                    self.eps[(conn * 2) as usize].write(0, true, &self.tcp); // the client closes its side
                }
                self.complete_flow(flow as usize, now, size);
                let a = &mut self.requests[app as usize];
                match a.arrival {
                    RequestArrival::ClosedLoop => match a.count {
                        Some(c) if a.sent[server as usize] >= c => {
                            if a.open == 0 && a.sent.iter().all(|&s| s >= c) {
                                self.work_done();
                            }
                        }
                        _ => self.send_request_after_jitter(now, app, server),
                    },
                    RequestArrival::Poisson if !a.generating && a.open == 0 => self.work_done(),
                    RequestArrival::Poisson => {}
                }
            }
        }
    }
}
