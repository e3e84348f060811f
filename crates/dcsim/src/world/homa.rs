//! Homa in the world (crate::homa has the state machines): each host's NIC
//! takes a data packet from its Homa sender when its port is free, so
//! grants, which go straight to the port's queue, pass ahead of data (the
//! simulator's `sendOrQueue` sends grants first too). Every packet takes a
//! random path (the simulator's ToRs pick a random uplink per packet).
//! See docs/models/homa.md.

use super::*;
use crate::homa::{Action, Cutoffs, Homa, Params, Sizes};
use crate::packet::homa_flags;

pub(super) struct HomaRun {
    homa: Homa,
    /// Per host: path numbers for its packets.
    paths: Vec<Rng>,
    /// The scheduler's requests, drained after each call.
    acts: Vec<Action>,
}

impl HomaRun {
    pub(super) fn new(s: &Scenario, net: &Network, preamble: bool) -> HomaRun {
        let cfg = s.homa.clone().expect("Homa");
        let extra = if s.link.framing.gap() { crate::packet::PREAMBLE + crate::packet::IFG } else if preamble { crate::packet::PREAMBLE } else { 0 };
        let sizes = Sizes::new(s.link.mtu as u64, extra, cfg.rtt_bytes.0);
        let unsched_levels = (cfg.priorities - cfg.sched_priorities) as u32;
        let cutoffs = match (&cfg.cutoffs, s.homa_size_atoms()) {
            (Some(c), _) => Cutoffs::new(c.iter().map(|b| b.0).collect()),
            (None, Some(atoms)) => Cutoffs::from_sizes(&atoms, unsched_levels, &sizes, cfg.rtt_bytes.0, cfg.rtt_bytes.0),
            (None, None) => Cutoffs::new(Vec::new()),
        };
        let p = Params {
            priorities: cfg.priorities,
            sched_priorities: cfg.sched_priorities,
            overcommit: cfg.overcommit(),
            window: cfg.rtt_bytes.0,
            boost_tail: if cfg.boost_tail { cfg.rtt_bytes.0 } else { 0 },
            sizes,
            cutoffs,
        };
        let rates = (0..net.num_hosts).map(|h| net.ports[net.nic(h) as usize].rate).collect();
        let paths = (0..net.num_hosts).map(|h| Rng::stream(s.run.seed, StreamId { kind: streams::HOMA_PATHS, index: h as u64 })).collect();
        HomaRun { homa: Homa::new(p, rates), paths, acts: Vec::new() }
    }

    /// The unscheduled levels' upper bounds in use (the output's metadata).
    pub(super) fn cutoffs(&self) -> &[u64] {
        &self.homa.p.cutoffs.0
    }
}

impl World<'_> {
    fn homa(&mut self) -> &mut HomaRun {
        self.homa.as_mut().expect("Homa")
    }

    /// Flow `f` starts: a message at its source, which sends its
    /// unscheduled bytes as soon as its NIC is free.
    pub(super) fn homa_start(&mut self, now: SimTime, f: u32) {
        let fr = &self.flows[f as usize];
        let (src, dst, size) = (fr.src, fr.dst, fr.size.unwrap_or(u64::MAX / 4));
        let id = self.homa().homa.start(now, f, src, dst, size);
        self.flows[f as usize].conn = id;
        self.homa_kick(now, src);
    }

    /// Let `host`'s NIC send its next data packet if its port is free.
    #[inline(never)]
    pub(super) fn homa_kick(&mut self, now: SimTime, host: u32) {
        let p = &self.net.ports[self.net.nic(host) as usize];
        if p.transmitting.is_some() || p.queue_packets() > 0 {
            return;
        }
        let run = self.homa.as_mut().expect("Homa");
        let Some(d) = run.homa.next_data(host) else { return };
        let m = run.homa.msg(d.msg);
        let p = Packet {
            kind: FrameKind::HomaData,
            conn: d.msg,
            src_host: host,
            dst_host: m.dst,
            flow_hash: run.paths[host as usize].next_u32(),
            seq: d.offset,
            ack: m.size,
            payload: d.len as u32,
            dscp: d.prio,
            flags: if d.unsched { homa_flags::UNSCHED } else { 0 },
            ..Default::default()
        };
        self.flows[m.flow as usize].sender_at_start.segments_sent += 1;
        self.nic_inject(now, host, p);
    }

    /// A Homa frame reached `host`. (Out of line: TCP runs pay nothing for it.)
    #[inline(never)]
    pub(super) fn homa_deliver(&mut self, now: SimTime, host: u32, id: PktId) {
        self.packets_delivered += 1;
        let pkt = *self.pool.get(id);
        self.pool.free(id);
        let run = self.homa.as_mut().expect("Homa");
        if pkt.kind == FrameKind::HomaGrant {
            run.homa.on_grant(pkt.conn, pkt.ack, pkt.ts_val as u8);
            return self.homa_kick(now, host);
        }
        let mut acts = std::mem::take(&mut run.acts);
        let done = run.homa.on_data(now, host, pkt.conn, pkt.payload as u64, pkt.has(homa_flags::UNSCHED), &mut acts);
        let f = run.homa.msg(pkt.conn).flow as usize;
        self.flows[f].received += pkt.payload as u64;
        if done {
            self.flows[f].end = Some(now);
            self.homa().homa.release(pkt.conn);
            self.work_done();
        }
        self.homa_act(now, host, &mut acts);
    }

    /// Send the grants and set the pacers the scheduler asked for.
    fn homa_act(&mut self, now: SimTime, host: u32, acts: &mut Vec<Action>) {
        for a in acts.drain(..) {
            match a {
                Action::Grant { msg, to, offset, bytes, prio } => {
                    let flow_hash = self.homa().paths[host as usize].next_u32();
                    let g = Packet { kind: FrameKind::HomaGrant, conn: msg, src_host: host, dst_host: to, flow_hash, seq: offset, ack: bytes, ts_val: prio as u32, ..Default::default() };
                    self.nic_inject(now, host, g);
                }
                Action::Timer { at, host, src } => self.q.schedule(at, Ev::HomaGrant { host, src }),
            }
        }
        self.homa().acts = std::mem::take(acts);
    }

    /// The grant pacer of receiver `host` for sender `src` fires.
    pub(super) fn homa_timer(&mut self, now: SimTime, host: u32, src: u32) {
        let run = self.homa.as_mut().expect("Homa");
        let mut acts = std::mem::take(&mut run.acts);
        run.homa.on_timer(now, host, src, &mut acts);
        self.homa_act(now, host, &mut acts);
    }

    /// The ideal one-way FCT of a `bytes` message in Homa's packets on an
    /// empty network (World::ideal_of_frames).
    pub(super) fn homa_ideal(&self, src: u32, dst: u32, bytes: u64) -> Option<Dur> {
        let sizes = self.homa.as_ref().expect("Homa").homa.p.sizes;
        let frame = |len: u64, unsched: bool| Packet { kind: FrameKind::HomaData, payload: len as u32, flags: if unsched { homa_flags::UNSCHED } else { 0 }, ..Default::default() }.frame_len() + self.preamble_bytes();
        let (mut first, mut total, mut n) = (0, 0, 0);
        for (_, len, unsched) in sizes.packets(bytes) {
            let f = frame(len, unsched);
            first = if n == 0 { f } else { first };
            total += f;
            n += 1;
        }
        self.ideal_of_frames(src, dst, 0, first, total, n)
    }
}
