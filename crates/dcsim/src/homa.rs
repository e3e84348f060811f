//! Homa (Montazeri, Li, Alizadeh and Ousterhout, "Homa: A Receiver-Driven
//! Low-Latency Transport Protocol Using Network Priorities", SIGCOMM 2018):
//! one-way messages over switches with strict priority queues.
//!
//! * A sender sends the first RTTbytes of a message at once, unscheduled,
//!   at a priority chosen by the bytes the message still has to send
//!   (cut-offs that split the workload's unscheduled bytes equally between
//!   the unscheduled levels, computed from its size distribution); it
//!   sends its messages shortest-remaining first (SRPT).
//! * The receiver grants the rest a packet at a time, in SRPT order over
//!   its senders (one message per sender), to at most `overcommit` senders
//!   at once, each with at most RTTbytes granted but not received; the
//!   grant names the scheduled priority: the most preferred sender the
//!   highest of the scheduled levels in use, which are the lowest levels.
//! * Grants to a sender are paced one packet time apart.
//!
//! The paper's text beyond its abstract was not available here: the rules
//! follow the authors' simulator (PlatformLab/HomaSimulation ab09ecb,
//! `HomaTransport.cc`, `PriorityResolver.cc`, `WorkloadEstimator.cc`),
//! which has no RESEND, BUSY or incast rules (queues there are unbounded).
//! docs/models/homa.md lists the deviations. The state here is pure;
//! crate::world wires it.

use crate::packet::{ETH_FCS, ETH_HEADER, ETH_MIN_FRAME, HOMA_GRANT_HEADER, HOMA_SCHED_HEADER, HOMA_UNSCHED_HEADER, IPV4_HEADER, UDP_HEADER};
use dcsim_engine::{Rate, SimTime};
use std::collections::{BTreeMap, VecDeque};

/// Homa's packet sizes on a link: payloads, bytes on the wire, and the
/// unscheduled share of a message.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    /// Bytes a frame costs besides its Ethernet frame (preamble and gap
    /// when the link counts them).
    extra: u64,
    pub unsched_payload: u64,
    pub sched_payload: u64,
    /// Data bytes a message sends before any grant: what fits in
    /// `rtt_bytes` on the wire (9,328 B for 10,000 B, as the simulator's
    /// `defaultReqBytes` + `defaultUnschedBytes`).
    pub unsched_bytes: u64,
}

impl Sizes {
    pub fn new(mtu: u64, extra: u64, rtt_bytes: u64) -> Sizes {
        let room = mtu - IPV4_HEADER - UDP_HEADER;
        let mut s = Sizes { extra, unsched_payload: room - HOMA_UNSCHED_HEADER, sched_payload: room - HOMA_SCHED_HEADER, unsched_bytes: 0 };
        let full = s.unsched_wire(s.unsched_payload);
        s.unsched_bytes = rtt_bytes / full * s.unsched_payload + (rtt_bytes % full).saturating_sub(s.unsched_wire(0));
        s
    }

    fn wire(&self, data: u64, header: u64) -> u64 {
        (ETH_HEADER + IPV4_HEADER + UDP_HEADER + header + data + ETH_FCS).max(ETH_MIN_FRAME) + self.extra
    }
    /// One unscheduled packet of `data` bytes on the wire.
    pub fn unsched_wire(&self, data: u64) -> u64 {
        self.wire(data, HOMA_UNSCHED_HEADER)
    }
    /// One scheduled packet of `data` bytes on the wire.
    pub fn sched_wire(&self, data: u64) -> u64 {
        self.wire(data, HOMA_SCHED_HEADER)
    }
    pub fn grant_wire(&self) -> u64 {
        self.wire(0, HOMA_GRANT_HEADER)
    }
    /// `bytes` of data in full scheduled packets and a last short one, on the
    /// wire (the simulator's `getBytesOnWire`).
    pub fn sched_bytes_wire(&self, bytes: u64) -> u64 {
        let (full, rest) = (bytes / self.sched_payload, bytes % self.sched_payload);
        full * self.sched_wire(self.sched_payload) + if rest > 0 || full == 0 { self.sched_wire(rest) } else { 0 }
    }
    /// The unscheduled bytes of a message of `size` bytes, on the wire.
    pub fn unsched_bytes_wire(&self, size: u64) -> u64 {
        let u = size.min(self.unsched_bytes);
        let (full, rest) = (u / self.unsched_payload, u % self.unsched_payload);
        full * self.unsched_wire(self.unsched_payload) + if rest > 0 || full == 0 { self.unsched_wire(rest) } else { 0 }
    }

    /// A message's packets in order: (offset, bytes, unscheduled).
    pub fn packets(&self, size: u64) -> impl Iterator<Item = (u64, u64, bool)> + '_ {
        let unsched = size.min(self.unsched_bytes);
        let mut at = 0;
        std::iter::from_fn(move || {
            if at >= size {
                return None;
            }
            let (len, u) = if at < unsched { ((unsched - at).min(self.unsched_payload), true) } else { ((size - at).min(self.sched_payload), false) };
            let p = (at, len, u);
            at += len;
            Some(p)
        })
    }
}

/// Unscheduled priority cut-offs: level i takes remaining sizes up to
/// `upper[i]` bytes (the last is unbounded). Level 0 is the highest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cutoffs(pub Vec<u64>);

impl Cutoffs {
    /// `upper` ascending; an unbounded last level is added if missing.
    pub fn new(mut upper: Vec<u64>) -> Cutoffs {
        if upper.last() != Some(&u64::MAX) {
            upper.push(u64::MAX);
        }
        Cutoffs(upper)
    }

    /// The level of a message with `remaining` bytes (`getMesgPrio`).
    #[inline]
    pub fn level(&self, remaining: u64) -> u8 {
        self.0.partition_point(|&c| c < remaining) as u8
    }

    /// The simulator's `STATIC_CBF_GRADUATED` cut-offs for `levels`
    /// unscheduled levels over a size distribution given as atoms (bytes,
    /// probability): every packet in a message's first `cap` or last `boost`
    /// wire bytes counts its wire bytes at the message's remaining size when
    /// it is sent, all grant bytes count at size 0, and cut-off k is the
    /// first remaining size where the cumulative share of bytes reaches
    /// k / levels (`WorkloadEstimator::getRemainSizeCdfCbf`,
    /// `PriorityResolver::setPrioCutOffs`).
    pub fn from_sizes(atoms: &[(u64, f64)], levels: u32, sizes: &Sizes, cap: u64, boost: u64) -> Cutoffs {
        let mut by_remaining: BTreeMap<u64, f64> = BTreeMap::new();
        let (mut total, mut grants) = (0.0, 0.0);
        for &(size, prob) in atoms {
            let packets: Vec<(u64, u64)> = sizes.packets(size).map(|(_, len, u)| (len, if u { sizes.unsched_wire(len) } else { sizes.sched_wire(len) })).collect();
            let sched = sizes.packets(size).filter(|p| !p.2).count() as u64;
            grants += prob * (sched * sizes.grant_wire()) as f64;
            let (mut sent_wire, mut left_wire, mut remaining) = (0, packets.iter().map(|p| p.1).sum::<u64>(), size);
            for (len, wire) in packets {
                if !(sent_wire >= cap && left_wire >= boost) {
                    *by_remaining.entry(remaining).or_insert(0.0) += prob * wire as f64;
                    total += prob * wire as f64;
                }
                sent_wire += wire;
                left_wire -= wire;
                remaining -= len;
            }
        }
        total += grants;
        let mut cbf = vec![(0u64, grants / total)];
        let mut sum = grants / total;
        for (&remaining, &bytes) in &by_remaining {
            sum += bytes / total;
            cbf.push((remaining, sum));
        }
        let step = 1.0 / levels as f64;
        let (mut upper, mut i, mut prob) = (Vec::new(), 0, step);
        while prob < 1.0 - 1e-9 {
            while i < cbf.len() {
                if upper.last() == Some(&cbf[i].0) {
                    i += 1;
                    continue;
                }
                if cbf[i].1 >= prob {
                    upper.push(cbf[i].0);
                    break;
                }
                i += 1;
            }
            prob += step;
        }
        Cutoffs::new(upper)
    }
}

/// Homa's knobs, resolved for a run (crate::config's `HomaCfg`).
#[derive(Clone, Debug)]
pub struct Params {
    pub priorities: u8,
    pub sched_priorities: u8,
    pub overcommit: u8,
    /// The most wire bytes granted (or unscheduled) and not yet received
    /// per message: RTTbytes.
    pub window: u64,
    /// Grants for a message's last `boost_tail` wire bytes go at the
    /// unscheduled level of its remaining size when that is higher (0: off).
    pub boost_tail: u64,
    pub sizes: Sizes,
    pub cutoffs: Cutoffs,
}

/// A message, at both ends (one struct: the simulation knows both).
#[derive(Debug, Default)]
pub struct Msg {
    pub flow: u32,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    created: SimTime,
    // Sender.
    sent: u64,
    unsched: u64,
    /// Grants heard and not yet used: (bytes, priority), in offset order.
    grants: VecDeque<(u64, u8)>,
    ready: bool,
    // Receiver.
    pub received: u64,
    known: bool,
    to_grant: u64,
    granted_to: u64,
    in_flight: u64,
}

impl Msg {
    fn key(&self, id: u32) -> (u64, u64, SimTime, u32) {
        (self.to_grant, self.size, self.created, id)
    }
    fn sendable(&self) -> bool {
        self.sent < self.unsched || !self.grants.is_empty()
    }
}

/// A receiver's view of one sender with messages to grant.
#[derive(Debug)]
struct Peer {
    src: u32,
    /// Its messages still needing grants.
    msgs: Vec<u32>,
    /// The sort key of its top message (u64::MAX first: none).
    key: (u64, u64, SimTime, u32),
    /// When its grant pacer fires (pending), and its last grant's level.
    timer: Option<SimTime>,
    last_prio: u8,
}

/// The senders a receiver grants to: at most `overcommit` ≤ 7.
#[derive(Clone, Copy, Default)]
struct Top {
    n: usize,
    srcs: [u32; 8],
}

impl Top {
    fn has(&self, src: u32) -> bool {
        self.srcs[..self.n].contains(&src)
    }
}

/// A data packet to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Data {
    pub msg: u32,
    pub offset: u64,
    pub len: u64,
    pub prio: u8,
    pub unsched: bool,
}

/// What the receiver's scheduler asks the world to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Grant { msg: u32, to: u32, offset: u64, bytes: u64, prio: u8 },
    /// Wake the grant pacer of (receiver `host`, sender `src`) at `at`.
    Timer { at: SimTime, host: u32, src: u32 },
}

pub struct Homa {
    pub p: Params,
    msgs: Vec<Msg>,
    free: Vec<u32>,
    /// Per host: its messages with packets to send.
    ready: Vec<Vec<u32>>,
    /// Per host: the senders it grants to, most preferred first.
    peers: Vec<Vec<Peer>>,
    /// Per host: its link rate (grant pacing).
    rates: Vec<Rate>,
    /// Scratch: the senders a grant pass has tried.
    tried: Vec<u32>,
}

impl Homa {
    pub fn new(p: Params, rates: Vec<Rate>) -> Homa {
        let n = rates.len();
        Homa { p, msgs: Vec::new(), free: Vec::new(), ready: vec![Vec::new(); n], peers: (0..n).map(|_| Vec::new()).collect(), rates, tried: Vec::new() }
    }

    pub fn msg(&self, id: u32) -> &Msg {
        &self.msgs[id as usize]
    }

    /// A message of flow `flow` starts at `src`; returns its id.
    pub fn start(&mut self, now: SimTime, flow: u32, src: u32, dst: u32, size: u64) -> u32 {
        let sizes = self.p.sizes;
        let unsched = size.min(sizes.unsched_bytes);
        let id = self.free.pop().unwrap_or_else(|| {
            self.msgs.push(Msg::default());
            self.msgs.len() as u32 - 1
        });
        let m = &mut self.msgs[id as usize];
        let grants = std::mem::take(&mut m.grants);
        *m = Msg { flow, src, dst, size, created: now, unsched, grants, ready: true, to_grant: size - unsched, in_flight: sizes.unsched_bytes_wire(size), ..Msg::default() };
        self.ready[src as usize].push(id);
        id
    }

    /// Message `id` is done at both ends: its slot is reused.
    pub fn release(&mut self, id: u32) {
        self.free.push(id);
    }

    /// Whether `host` has a packet to send.
    pub fn has_data(&self, host: u32) -> bool {
        !self.ready[host as usize].is_empty()
    }

    /// `host`'s next data packet: from its message with the fewest bytes
    /// left to send (ties: the older, then the lower id), unscheduled bytes
    /// first, then one packet per grant at the grant's level.
    pub fn next_data(&mut self, host: u32) -> Option<Data> {
        let ready = &mut self.ready[host as usize];
        let msgs = &self.msgs;
        let (i, &id) = ready.iter().enumerate().min_by_key(|(_, &id)| {
            let m = &msgs[id as usize];
            (m.size - m.sent, m.created, id)
        })?;
        let m = &mut self.msgs[id as usize];
        let offset = m.sent;
        let d = if m.sent < m.unsched {
            let len = (m.unsched - m.sent).min(self.p.sizes.unsched_payload);
            Data { msg: id, offset, len, prio: self.p.cutoffs.level(m.size - m.sent), unsched: true }
        } else {
            let (bytes, prio) = m.grants.pop_front().expect("a ready message has a grant");
            Data { msg: id, offset, len: bytes.min(m.size - m.sent), prio, unsched: false }
        };
        m.sent += d.len;
        if !m.sendable() {
            m.ready = false;
            ready.swap_remove(i);
        }
        Some(d)
    }

    /// The sender of message `id` hears a grant.
    pub fn on_grant(&mut self, id: u32, bytes: u64, prio: u8) {
        let m = &mut self.msgs[id as usize];
        m.grants.push_back((bytes, prio));
        if !m.ready {
            m.ready = true;
            self.ready[m.src as usize].push(id);
        }
    }

    fn top(&self, host: u32) -> Top {
        let mut t = Top::default();
        for p in self.peers[host as usize].iter().take(self.p.overcommit as usize) {
            if p.msgs.is_empty() {
                break;
            }
            t.srcs[t.n] = p.src;
            t.n += 1;
        }
        t
    }

    fn active(&self, host: u32) -> usize {
        self.peers[host as usize].iter().take_while(|p| !p.msgs.is_empty()).count()
    }

    /// Re-rank `host`'s senders by their top messages; drop the idle ones.
    fn rank(&mut self, host: u32) {
        let msgs = &self.msgs;
        let peers = &mut self.peers[host as usize];
        peers.retain(|p| !p.msgs.is_empty() || p.timer.is_some());
        for p in peers.iter_mut() {
            p.key = p.msgs.iter().map(|&id| msgs[id as usize].key(id)).min().unwrap_or((u64::MAX, u64::MAX, SimTime::NEVER, u32::MAX));
        }
        peers.sort_unstable_by_key(|p| (p.key, p.src));
    }

    /// Data packet `d` of message `id` reached its receiver `host`.
    /// Returns whether the message is now complete.
    pub fn on_data(&mut self, now: SimTime, host: u32, id: u32, len: u64, unsched: bool, out: &mut Vec<Action>) -> bool {
        let before = self.top(host);
        let wire = if unsched { self.p.sizes.unsched_wire(len) } else { self.p.sizes.sched_wire(len) };
        let m = &mut self.msgs[id as usize];
        m.received += len;
        m.in_flight = m.in_flight.saturating_sub(wire);
        let src = m.src;
        if !m.known {
            m.known = true;
            if m.to_grant > 0 {
                let peers = &mut self.peers[host as usize];
                match peers.iter_mut().find(|p| p.src == src) {
                    Some(p) => p.msgs.push(id),
                    None => peers.push(Peer { src, msgs: vec![id], key: (0, 0, SimTime::ZERO, 0), timer: None, last_prio: self.p.priorities }),
                }
            }
        }
        let done = m.received >= m.size;
        self.rank(host);
        self.grant_pass(now, host, before, Some(src), out);
        done
    }

    /// The grant pacer of (`host`, `src`) fires.
    pub fn on_timer(&mut self, now: SimTime, host: u32, src: u32, out: &mut Vec<Action>) {
        let Some(p) = self.peers[host as usize].iter_mut().find(|p| p.src == src) else { return };
        if p.timer != Some(now) {
            return; // cancelled or moved
        }
        p.timer = None;
        let before = self.top(host);
        self.rank(host);
        self.grant_pass(now, host, before, Some(src), out);
    }

    /// Grant to `trigger` if it is among the senders granted to, and to every
    /// sender that has joined them since `before` (the simulator's
    /// `handlePktArrivalEvent` and `handleGrantSentEvent`), each once.
    fn grant_pass(&mut self, now: SimTime, host: u32, before: Top, trigger: Option<u32>, out: &mut Vec<Action>) {
        // A grant that completes a sender's granting can let another in,
        // whose grant can do the same: a cascade of any length.
        let mut tried = std::mem::take(&mut self.tried);
        tried.clear();
        loop {
            let top = self.top(host);
            let next = (0..top.n).find(|&r| {
                let s = top.srcs[r];
                !tried.contains(&s) && (Some(s) == trigger || !before.has(s))
            });
            let Some(rank) = next else { break };
            tried.push(top.srcs[rank]);
            if self.try_grant(now, host, rank, out) {
                self.rank(host);
            }
        }
        self.tried = tried;
    }

    /// The grant level of the sender at `rank` among `active` senders: the
    /// scheduled levels in use are the lowest, the first sender the highest
    /// of them (`SchedSenders::getPrioForMesg`, without its slot memory).
    fn sched_level(&self, rank: usize, active: usize) -> u8 {
        let p = &self.p;
        let used = active.min(p.overcommit as usize).min(p.sched_priorities as usize);
        (p.priorities as usize - used + rank).min(p.priorities as usize - 1) as u8
    }

    /// Grant the next packet of the top message of the sender at `rank`,
    /// unless its window is full or its pacer runs with a level at least
    /// as high (`SenderState::sendAndScheduleGrant`).
    fn try_grant(&mut self, now: SimTime, host: u32, rank: usize, out: &mut Vec<Action>) -> bool {
        let active = self.active(host);
        let mut prio = self.sched_level(rank, active);
        let (sizes, window, boost) = (self.p.sizes, self.p.window, self.p.boost_tail);
        let peer = &self.peers[host as usize][rank];
        let id = peer.key.3;
        let m = &self.msgs[id as usize];
        if sizes.sched_bytes_wire(m.to_grant) < boost {
            prio = prio.min(self.p.cutoffs.level(m.to_grant));
        }
        if peer.timer.is_some() && peer.last_prio <= prio {
            return false;
        }
        if m.in_flight >= window {
            return false;
        }
        let bytes = m.to_grant.min(sizes.sched_payload);
        let m = &mut self.msgs[id as usize];
        let offset = m.granted_to.max(m.unsched);
        m.to_grant -= bytes;
        m.granted_to = offset + bytes;
        m.in_flight += sizes.sched_wire(bytes);
        let (to, more) = (m.src, m.to_grant > 0);
        out.push(Action::Grant { msg: id, to, offset, bytes, prio });
        let peer = &mut self.peers[host as usize][rank];
        peer.last_prio = prio;
        peer.timer = None;
        if !more {
            peer.msgs.retain(|&x| x != id);
        }
        // The next grant to this sender one granted packet's time later, if
        // its (new) top message has room.
        let msgs = &self.msgs;
        let next = peer.msgs.iter().map(|&x| (msgs[x as usize].key(x), x)).min().map(|(_, x)| x);
        if next.is_some_and(|x| msgs[x as usize].in_flight < window) {
            let at = now + self.rates[host as usize].tx_time(sizes.sched_wire(bytes));
            peer.timer = Some(at);
            out.push(Action::Timer { at, host, src: to });
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes() -> Sizes {
        Sizes::new(1500, 20, 10_000)
    }

    fn homa(sched: u8, cutoffs: Vec<u64>) -> Homa {
        let p = Params { priorities: 8, sched_priorities: sched, overcommit: sched, window: 10_000, boost_tail: 10_000, sizes: sizes(), cutoffs: Cutoffs::new(cutoffs) };
        Homa::new(p, vec![Rate::from_bps(10_000_000_000); 8])
    }

    #[test]
    fn the_simulators_sizes() {
        let s = sizes();
        assert_eq!((s.unsched_payload, s.sched_payload), (1442, 1456));
        // 9,328 B unscheduled: 6 × 1,538 + 772 = 10,000 B on the wire.
        assert_eq!(s.unsched_bytes, 9328);
        assert_eq!(s.unsched_bytes_wire(1_000_000), 10_000);
        assert_eq!(s.sched_wire(1456), 1538);
        assert_eq!(s.grant_wire(), 84);
        assert_eq!(s.unsched_wire(100), 196);
        let p: Vec<_> = s.packets(12_000).collect();
        assert_eq!(p.len(), 9);
        assert_eq!(p[6], (8652, 676, true));
        assert_eq!(p[7], (9328, 1456, false));
        assert_eq!(p[8], (10_784, 1216, false));
    }

    #[test]
    fn levels_follow_the_remaining_size() {
        let c = Cutoffs::new(vec![433, 2339, 6756]);
        // A 3,000-B message's packets leave 3000, 1558 and 116 B to send.
        assert_eq!([c.level(3000), c.level(1558), c.level(116)], [2, 1, 0]);
        assert_eq!(c.level(433), 0);
        assert_eq!(c.level(10_000_000), 3);
    }

    #[test]
    fn cutoffs_split_the_unscheduled_bytes_equally() {
        // Two sizes, equally likely: 100 B (196 B on the wire) and 1,000 B
        // (1,096 B). No grants. Two levels: the byte share reaches 1/2 at
        // remaining size 1,000 (196 / 1,292 < 1/2).
        let c = Cutoffs::from_sizes(&[(100, 0.5), (1000, 0.5)], 2, &sizes(), 10_000, 10_000);
        assert_eq!(c.0, vec![1000, u64::MAX]);
        // Four levels: shares 0.152 at 100 and 1.0 at 1,000: every k/4 is
        // first reached at 1,000, taken once.
        let c = Cutoffs::from_sizes(&[(100, 0.5), (1000, 0.5)], 4, &sizes(), 10_000, 10_000);
        assert_eq!(c.0, vec![1000, u64::MAX]);
    }

    #[test]
    fn a_sender_sends_shortest_remaining_first_and_unscheduled_bytes_at_once() {
        let mut h = homa(7, vec![]);
        let big = h.start(SimTime::ZERO, 0, 0, 1, 1_000_000);
        let d = h.next_data(0).unwrap();
        assert_eq!((d.msg, d.offset, d.len, d.unsched), (big, 0, 1442, true));
        let small = h.start(SimTime(100_000), 1, 0, 2, 5000);
        // The 5-KB message goes next, all of it unscheduled.
        let d = h.next_data(0).unwrap();
        assert_eq!((d.msg, d.len), (small, 1442));
        for _ in 0..3 {
            assert_eq!(h.next_data(0).unwrap().msg, small);
        }
        // Then the big one's unscheduled rest, 9,328 B in all, and it waits for grants.
        let mut sent = 1442;
        while let Some(d) = h.next_data(0) {
            assert_eq!(d.msg, big);
            sent += d.len;
        }
        assert_eq!(sent, 9328);
        h.on_grant(big, 1456, 7);
        assert_eq!(h.next_data(0), Some(Data { msg: big, offset: 9328, len: 1456, prio: 7, unsched: false }));
    }

    fn grants(out: &[Action]) -> Vec<(u32, u32, u8)> {
        out.iter().filter_map(|a| if let Action::Grant { msg, to, prio, .. } = *a { Some((msg, to, prio)) } else { None }).collect()
    }

    /// Deliver every unscheduled packet of `id` to its receiver.
    fn deliver_unscheduled(h: &mut Homa, now: SimTime, id: u32, out: &mut Vec<Action>) {
        let (src, dst) = (h.msg(id).src, h.msg(id).dst);
        while h.msgs[id as usize].sent < h.msgs[id as usize].unsched {
            let d = h.next_data(src).unwrap();
            h.on_data(now, dst, d.msg, d.len, d.unsched, out);
        }
    }

    #[test]
    fn a_lone_message_is_granted_at_the_lowest_level_one_packet_per_packet() {
        let mut h = homa(7, vec![]);
        let id = h.start(SimTime::ZERO, 0, 0, 1, 1_000_000);
        let mut out = Vec::new();
        for k in 1..=3 {
            let d = h.next_data(0).unwrap();
            h.on_data(SimTime(k * 1_230_400), 1, d.msg, d.len, true, &mut out);
            // Each arrival frees a packet of the 10,000-B window: one grant,
            // level 7; the window is full again, so no pacer.
            assert_eq!(grants(&out), vec![(id, 0, 7); k as usize]);
            assert!(out.iter().all(|a| matches!(a, Action::Grant { .. })), "{out:?}");
        }
    }

    #[test]
    fn grants_to_a_sender_are_paced_one_packet_apart() {
        let mut h = homa(7, vec![]);
        h.p.window = 20_000;
        let id = h.start(SimTime::ZERO, 0, 0, 1, 1_000_000);
        let mut out = Vec::new();
        let d = h.next_data(0).unwrap();
        h.on_data(SimTime::ZERO, 1, d.msg, d.len, true, &mut out);
        // Room in the window: a grant and the pacer one scheduled packet's
        // time (1,538 B at 10 Gb/s) later.
        assert_eq!(grants(&out), vec![(id, 0, 7)]);
        let Action::Timer { at, .. } = out[1] else { panic!("{out:?}") };
        assert_eq!(at, SimTime(1_230_400));
        // A packet while the pacer runs earns no grant; the pacer does.
        out.clear();
        let d = h.next_data(0).unwrap();
        h.on_data(SimTime(500_000), 1, d.msg, d.len, true, &mut out);
        assert!(grants(&out).is_empty());
        h.on_timer(at, 1, 0, &mut out);
        assert_eq!(grants(&out), vec![(id, 0, 7)]);
    }

    #[test]
    fn overcommitment_grants_the_shortest_senders_at_distinct_levels() {
        // Two scheduled levels: senders of 50 KB, 200 KB and 1 MB.
        let mut h = homa(2, vec![]);
        let mut out = Vec::new();
        let ids: Vec<u32> = [(0, 50_000), (2, 200_000), (3, 1_000_000)].iter().map(|&(s, b)| h.start(SimTime::ZERO, s, s, 1, b)).collect();
        // Every sender's first packet, then its second.
        for round in 0..2 {
            out.clear();
            for &id in &ids {
                let src = h.msg(id).src;
                let d = h.next_data(src).unwrap();
                h.on_data(SimTime(round), 1, d.msg, d.len, d.unsched, &mut out);
            }
        }
        // Only the two shortest are granted: 50 KB at 6, 200 KB at 7.
        assert_eq!(grants(&out), vec![(ids[0], 0, 6), (ids[1], 2, 7)]);
        assert_eq!(h.top(1).n, 2);
    }

    #[test]
    fn the_tail_is_granted_at_its_unscheduled_level() {
        let mut h = homa(4, vec![433, 2339, 6756]);
        let id = h.start(SimTime::ZERO, 0, 0, 1, 12_000);
        let mut out = Vec::new();
        deliver_unscheduled(&mut h, SimTime::ZERO, id, &mut out);
        // 2,672 B left to grant (< 10,000 B on the wire): level 2, not 7.
        assert_eq!(grants(&out)[0], (id, 0, 2));
    }
}
