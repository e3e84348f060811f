//! NDP in the world (crate::ndp has the state machines): each host's NIC
//! takes a data packet from its NDP senders when its port is free, round
//! robin among those that may send, so control frames (ACK, NACK, PULL),
//! which go straight to the port's queue, pass ahead of data (htsim's
//! host queue serves them first too). Each host has one pull pacer for the
//! flows it receives. See docs/models/ndp.md.

use super::*;
use crate::config::NdpCfg;
use crate::ndp::{NdpStats, PullPacer, Receiver, Sender};
use crate::packet::ndp_flags;

pub(super) struct NdpFlow {
    /// Index of the flow record.
    flow: u32,
    src: u32,
    dst: u32,
    tx: Sender,
    rx: Receiver,
    /// The sender's last send or feedback (its backstop timer runs from it).
    last_activity: SimTime,
    rto_armed: bool,
}

/// One host's NIC: its senders with packets to send or unacknowledged, and
/// the round-robin position.
#[derive(Default)]
struct Nic {
    flows: Vec<u32>,
    next: usize,
}

pub(super) struct NdpRun {
    cfg: NdpCfg,
    payload: u64,
    flows: Vec<NdpFlow>,
    nics: Vec<Nic>,
    pacers: Vec<PullPacer>,
}

impl NdpRun {
    pub(super) fn new(s: &Scenario, net: &Network, preamble: bool) -> NdpRun {
        let cfg = s.ndp.clone().expect("NDP");
        let payload = cfg.payload_for(s.link.mtu);
        let extra = if preamble { crate::packet::PREAMBLE } else { 0 };
        let frame = Packet { kind: FrameKind::NdpData, payload: payload as u32, ..Default::default() }.frame_len() + extra;
        let pacers = (0..net.num_hosts)
            .map(|h| {
                // One full data frame's time on the host's link, and its gap.
                let nic = &net.ports[net.nic(h) as usize];
                let ps = (nic.rate.tx_time(frame) + nic.gap).0 as f64 / cfg.pull_rate;
                PullPacer::new(Dur(ps.round() as u64))
            })
            .collect();
        NdpRun { payload, flows: Vec::new(), nics: (0..net.num_hosts).map(|_| Nic::default()).collect(), pacers, cfg }
    }
}

impl World<'_> {
    fn ndp(&mut self) -> &mut NdpRun {
        self.ndp.as_mut().expect("NDP")
    }

    /// Flow `f` starts: a sender at its source's NIC, which pushes its first window.
    pub(super) fn ndp_start(&mut self, now: SimTime, f: u32) {
        let fr = &self.flows[f as usize];
        let (src, dst, size) = (fr.src, fr.dst, fr.size);
        let seed = self.scenario.run.seed;
        let run = self.ndp.as_mut().expect("NDP");
        let idx = run.flows.len() as u32;
        let packets = size.map_or(u64::MAX / 2 / run.payload, |b| b.div_ceil(run.payload).max(1));
        let rng = Rng::stream(seed, StreamId { kind: streams::NDP_PATHS, index: idx as u64 });
        let paths = run.cfg.paths.unwrap_or_else(|| self.net.paths_between(src, dst));
        run.flows.push(NdpFlow {
            flow: f,
            src,
            dst,
            tx: Sender::new(packets, run.cfg.iw, paths, rng),
            rx: Receiver::default(),
            last_activity: now,
            rto_armed: false,
        });
        run.nics[src as usize].flows.push(idx);
        self.flows[f as usize].conn = idx;
        self.ndp_kick(now, src);
    }

    /// Let `host`'s NIC send data if its port is free: the next sender in
    /// round-robin order that may send.
    #[inline(never)]
    pub(super) fn ndp_kick(&mut self, now: SimTime, host: u32) {
        let p = &self.net.ports[self.net.nic(host) as usize];
        if p.transmitting.is_some() || p.queue_packets() > 0 {
            return;
        }
        let run = self.ndp.as_mut().expect("NDP");
        let nic = &mut run.nics[host as usize];
        let n = nic.flows.len();
        for k in 0..n {
            let i = (nic.next + k) % n;
            let idx = nic.flows[i];
            if run.flows[idx as usize].tx.can_send() {
                nic.next = (i + 1) % n;
                return self.ndp_send(now, host, idx);
            }
        }
    }

    /// Sender `idx` sends its next packet now.
    fn ndp_send(&mut self, now: SimTime, host: u32, idx: u32) {
        let run = self.ndp.as_mut().expect("NDP");
        let (payload, dscp, rto) = (run.payload, run.cfg.data_dscp, run.cfg.rto.0);
        let nf = &mut run.flows[idx as usize];
        let (pkt, path, resent) = nf.tx.next().expect("can_send");
        let size = self.flows[nf.flow as usize].size.unwrap_or(u64::MAX);
        let seq = pkt * payload;
        nf.last_activity = now;
        let arm = rto > Dur::ZERO && !std::mem::replace(&mut nf.rto_armed, true);
        let p = Packet {
            kind: FrameKind::NdpData,
            conn: idx,
            src_host: host,
            dst_host: nf.dst,
            flow_hash: path,
            seq,
            payload: (size - seq).min(payload) as u32,
            dscp,
            is_retx: resent,
            ..Default::default()
        };
        if arm {
            self.q.schedule(now + rto, Ev::NdpTimer(idx));
        }
        self.nic_inject(now, host, p);
    }

    /// A packet made at `host` (by NDP or Homa) joins its NIC's queue.
    pub(super) fn nic_inject(&mut self, now: SimTime, host: u32, pkt: Packet) {
        let id = self.pool.alloc(pkt);
        self.pool.get_mut(id).finalize_size(self.preamble);
        self.packets_created += 1;
        let nic = self.net.nic(host);
        self.enqueue(now, nic, id);
    }

    /// An NDP frame reached `host`. (Kept out of line: TCP runs pay nothing for it.)
    #[inline(never)]
    pub(super) fn ndp_deliver(&mut self, now: SimTime, host: u32, id: PktId) {
        self.packets_delivered += 1;
        let pkt = *self.pool.get(id);
        self.pool.free(id);
        let idx = pkt.conn;
        if pkt.kind == FrameKind::NdpData && !pkt.has(ndp_flags::BOUNCED) {
            return self.ndp_receive(now, host, idx, &pkt);
        }
        let payload = self.ndp().payload;
        let nf = &mut self.ndp().flows[idx as usize];
        nf.last_activity = now;
        match pkt.kind {
            FrameKind::NdpAck => nf.tx.on_ack(pkt.seq / payload, pkt.ack.div_ceil(payload)),
            FrameKind::NdpNack => nf.tx.on_nack(pkt.seq / payload),
            FrameKind::NdpData => nf.tx.on_bounce(pkt.seq / payload),
            _ => {}
        }
        if pkt.kind == FrameKind::NdpPull || pkt.has(ndp_flags::PULL) {
            nf.tx.on_pull(pkt.ts_val as u64);
        }
        if nf.tx.done() {
            self.ndp_finish(host, idx);
        }
        self.ndp_kick(now, host);
    }

    /// The receiver's side of a data packet or a trimmed header: ACK or
    /// NACK it at once, and earn its sender a pull.
    fn ndp_receive(&mut self, now: SimTime, host: u32, idx: u32, pkt: &Packet) {
        let run = self.ndp.as_mut().expect("NDP");
        let payload = run.payload;
        let nf = &mut run.flows[idx as usize];
        let f = nf.flow as usize;
        let trimmed = pkt.has(ndp_flags::TRIMMED);
        if !trimmed && nf.rx.on_data(pkt.seq / payload) {
            self.flows[f].received += pkt.payload as u64;
        }
        let fr = &mut self.flows[f];
        let size = fr.size.unwrap_or(u64::MAX);
        let complete = fr.end.is_none() && fr.size == Some(fr.received);
        let mut reply = Packet {
            kind: if trimmed { FrameKind::NdpNack } else { FrameKind::NdpAck },
            conn: idx,
            src_host: host,
            dst_host: pkt.src_host,
            // Control is sprayed too: over path numbers by packet number.
            flow_hash: (pkt.seq / payload) as u32,
            seq: pkt.seq,
            ack: (nf.rx.cumulative() * payload).min(size),
            ..Default::default()
        };
        if complete {
            fr.end = Some(now);
            nf.rx.owed = 0; // its queued pulls are released
            self.ndp_snapshot(idx);
            self.work_done();
        } else if fr.end.is_none() && run.pacers[host as usize].earn(now, idx, &mut nf.rx) {
            reply.flags |= ndp_flags::PULL;
            reply.ts_val = nf.rx.pull_no as u32;
        } else {
            self.ndp_wake_pacer(now, host);
        }
        self.nic_inject(now, host, reply);
    }

    /// Return-to-sender: a trimmed header that trimming switch port `port`
    /// could not take goes back to its sender from this switch, once (htsim's
    /// `CompositeQueue` bounce). Returns whether it did; else it is dropped.
    #[cold]
    #[inline(never)]
    pub(super) fn ndp_bounce(&mut self, now: SimTime, port: u32, id: PktId) -> bool {
        let p = &self.net.ports[port as usize];
        let (sw, trims) = (p.node, p.classes.as_ref().is_some_and(|c| c.trim.is_some()));
        let pkt = self.pool.get_mut(id);
        let header = pkt.kind == FrameKind::NdpData && pkt.has(ndp_flags::TRIMMED) && !pkt.has(ndp_flags::BOUNCED);
        if !self.ndp.as_ref().expect("NDP").cfg.bounce || !header || !trims {
            return false;
        }
        let Some(back) = self.net.route(sw, pkt.src_host, &mut pkt.flow_hash) else { return false };
        std::mem::swap(&mut pkt.src_host, &mut pkt.dst_host);
        pkt.flags |= ndp_flags::BOUNCED;
        let p = &mut self.net.ports[port as usize];
        p.stats.drops -= 1;
        p.classes.as_mut().expect("a trimming port").bounces += 1;
        self.enqueue(now, back, id);
        true
    }

    /// Make sure `host`'s pacer has an event for its next pull.
    fn ndp_wake_pacer(&mut self, now: SimTime, host: u32) {
        let pacer = &mut self.ndp().pacers[host as usize];
        if let Some(t) = pacer.due(now) {
            if pacer.wake.is_none_or(|w| w > t || w < now) {
                pacer.wake = Some(t);
                self.q.schedule(t, Ev::NdpPacer(host));
            }
        }
    }

    /// `host`'s pull pacer wakes: the next flow in turn gets a PULL.
    pub(super) fn ndp_pacer(&mut self, now: SimTime, host: u32) {
        let run = self.ndp.as_mut().expect("NDP");
        let pacer = &mut run.pacers[host as usize];
        if pacer.wake != Some(now) {
            return; // superseded
        }
        pacer.wake = None;
        if let Some(idx) = pacer.release(now, &mut run.flows, |f| &mut f.rx) {
            let nf = &run.flows[idx as usize];
            let size = self.flows[nf.flow as usize].size.unwrap_or(u64::MAX);
            let pull = Packet {
                kind: FrameKind::NdpPull,
                conn: idx,
                src_host: host,
                dst_host: nf.src,
                flow_hash: nf.rx.pull_no as u32,
                ack: (nf.rx.cumulative() * run.payload).min(size),
                ts_val: nf.rx.pull_no as u32,
                ..Default::default()
            };
            self.nic_inject(now, host, pull);
        }
        self.ndp_wake_pacer(now, host);
    }

    /// The backstop timer of sender `idx`: nothing heard for `rto` with
    /// packets out resends them.
    pub(super) fn ndp_timer(&mut self, now: SimTime, idx: u32) {
        let run = self.ndp.as_mut().expect("NDP");
        let (rto, iw) = (run.cfg.rto.0, run.cfg.iw);
        let nf = &mut run.flows[idx as usize];
        nf.rto_armed = false;
        if nf.tx.done() || nf.tx.outstanding() == 0 {
            return;
        }
        let mut next = nf.last_activity + rto;
        if next <= now {
            nf.tx.on_timeout(iw);
            nf.last_activity = now;
            next = now + rto;
        }
        nf.rto_armed = true;
        let host = nf.src;
        self.q.schedule(next, Ev::NdpTimer(idx));
        self.ndp_kick(now, host);
    }

    /// Sender `idx` has every packet acknowledged: it leaves its NIC.
    fn ndp_finish(&mut self, host: u32, idx: u32) {
        let nic = &mut self.ndp().nics[host as usize];
        if let Some(i) = nic.flows.iter().position(|&x| x == idx) {
            nic.flows.remove(i);
            if nic.next > i {
                nic.next -= 1;
            }
            if nic.next >= nic.flows.len() {
                nic.next = 0;
            }
        }
        self.ndp_snapshot(idx);
    }

    /// Copy sender `idx`'s counters into its flow record (the flows table reads them there).
    fn ndp_snapshot(&mut self, idx: u32) {
        let nf = &self.ndp.as_ref().expect("NDP").flows[idx as usize];
        let NdpStats { packets_sent, retransmits, timeouts, .. } = nf.tx.stats;
        let f = nf.flow as usize;
        self.flows[f].sender_at_start = TcpStats { segments_sent: packets_sent, retransmits, timeouts, ..Default::default() };
        self.flows[f].receiver_at_start = TcpStats::default();
    }

    /// The run ends: every flow takes its sender's counters so far.
    pub(super) fn ndp_close(&mut self) {
        let n = self.ndp.as_ref().map_or(0, |r| r.flows.len() as u32);
        for idx in 0..n {
            self.ndp_snapshot(idx);
        }
    }

    /// The ideal one-way FCT of `bytes` in NDP data frames.
    pub(super) fn ndp_ideal(&self, src: u32, dst: u32, bytes: u64) -> Option<Dur> {
        let payload = self.ndp.as_ref().expect("NDP").payload;
        self.one_way_ideal(src, dst, 0, bytes, payload, |len| Packet { kind: FrameKind::NdpData, payload: len as u32, ..Default::default() }.frame_len())
    }
}
