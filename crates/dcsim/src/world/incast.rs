//! The barrier-synchronised query/response workload (seed 004 §4.2).

use super::*;

pub(super) struct IncastApp {
    pub(super) workload: u32,
    pub(super) querier: u32,
    pub(super) query: u64,
    pub(super) rounds: u32,
    pub(super) think: Dur,
    /// Per connection slot: conn id, responder host, response bytes.
    pub(super) conns: Vec<u32>,
    pub(super) responder_of: Vec<u32>,
    pub(super) response: Vec<u64>,
    pub(super) established: u32,
    pub(super) round: u32,
    pub(super) round_start: SimTime,
    pub(super) pending: u32,
    /// Querier side: response bytes received per slot (cumulative).
    pub(super) got: Vec<u64>,
    /// Responder side: query bytes received and responses written per slot.
    pub(super) query_bytes_seen: Vec<u64>,
    pub(super) responses_written: Vec<u64>,
    /// Flow record of the current round per slot.
    pub(super) flow_of_slot: Vec<u32>,
    pub(super) stats_at_round_start: Vec<TcpStats>,
}

impl World<'_> {
    pub(super) fn install_incast(&mut self, wi: u32, p: &Incast) {
        let Incast { querier, responders, query_size, response_size, rounds, think_time, start, connections_per_responder } = p;
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

    pub(super) fn incast_react(&mut self, now: SimTime, app: u32, slot: u32, side: u32, delivered: u64, established: bool) {
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
                let (bytes, conn) = (a.response[s], a.conns[s]);
                self.eps[(conn * 2 + 1) as usize].write(bytes, false, &self.tcp);
            }
        }
        if delivered > 0 && side == 0 {
            a.got[s] += delivered;
            if a.got[s] == a.response[s] * a.round as u64 {
                let f = a.flow_of_slot[s] as usize;
                let bytes = a.response[s];
                a.pending -= 1;
                let round_done = a.pending == 0;
                self.complete_flow(f, now, bytes);
                if round_done {
                    self.finish_round(now, app);
                }
            }
        }
    }

    pub(super) fn incast_next(&mut self, now: SimTime, app: u32) {
        let a = &self.incast[app as usize];
        if a.conns.is_empty() {
            // Open the persistent connections; round 1 starts when all are up.
            let (querier, responders) = (a.querier, a.responder_of.clone());
            for (slot, r) in responders.into_iter().enumerate() {
                let conn = self.new_connection(querier, r, ConnApp::Incast { app, slot: slot as u32 });
                self.incast[app as usize].conns.push(conn);
                self.out.clear();
                self.eps[(conn * 2) as usize].open(now, &self.tcp, &mut self.out);
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
                dscp: 0,
                sender_rtt: None,
            });
            self.eps[(conn * 2) as usize].write(query, false, &self.tcp);
            self.out.clear();
            self.after_tcp(now, conn * 2);
        }
    }

    pub(super) fn finish_round(&mut self, now: SimTime, app: u32) {
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
}
