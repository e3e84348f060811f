//! Per-class queues behind one switch egress port, and the order they are
//! served in. A packet's class is its DSCP, capped at the last class; the
//! classes share the port's buffer (each optionally capped).
//!
//! * Strict priority, as PIAS's switches (Bai et al., NSDI 2015 §4; PIAS-NS2's
//!   `Priority` queue, reference mechanisms.md §1 and §4.1; HSCC's baseline in
//!   seed 002 §5.2): class 0 first; a class is served only when all classes
//!   before it are empty. See docs/models/pias.md.
//! * Deficit weighted round robin (Shreedhar & Varghese, SIGCOMM 1995), as
//!   ns3-ecn-sharp's DWRR (reference §2.4; seed 003): among the classes of
//!   the smallest priority value with packets, each sends up to its quantum
//!   of IP bytes, plus its saved deficit, per turn. See docs/models/aqm.md.

use crate::aqm::{Aqm, QueueView};
use crate::config::{ClassMarking, DwrrCfg, FullBuffer, Scheduler};
use crate::packet::{PacketPool, PktId};
use crate::units::QSize;
use dcsim_engine::Rng;
use std::collections::VecDeque;

pub struct Classes {
    queues: Box<[VecDeque<PktId>]>,
    bytes: Box<[u64]>,
    /// One AQM per class (`marking = "class"`); empty when the port's AQM
    /// judges the port's total queue.
    pub aqms: Box<[Aqm]>,
    pub push_out: bool,
    /// NDP's trimming (`full = "trim"`): the port's own coin for which
    /// packet to trim, the arrival or the data queue's tail.
    pub trim: Option<Rng>,
    /// NDP data packets trimmed to their headers here, and headers sent
    /// back to their senders (not counted in the port's drops).
    pub trims: u64,
    pub bounces: u64,
    /// A cap on each class's share of the port's buffer.
    pub class_buffer: Option<QSize>,
    order: Order,
}

enum Order {
    Strict,
    Dwrr(Dwrr),
}

/// DWRR's state: per class its quantum and deficit, and per priority level
/// the round-robin list of classes with packets.
struct Dwrr {
    quantum: Box<[u64]>,
    deficit: Box<[u64]>,
    /// Index into `active` of each class's priority level.
    level: Box<[usize]>,
    /// Per priority level (ascending value): classes with packets, head first.
    active: Box<[VecDeque<usize>]>,
}

impl Dwrr {
    fn new(c: &DwrrCfg) -> Dwrr {
        let n = c.quanta.len();
        let prio = c.priorities.clone().unwrap_or_else(|| vec![0; n]);
        let mut values = prio.clone();
        values.sort_unstable();
        values.dedup();
        Dwrr {
            quantum: c.quanta.iter().map(|q| q.0).collect(),
            deficit: vec![0; n].into_boxed_slice(),
            level: prio.iter().map(|p| values.binary_search(p).expect("own value")).collect(),
            active: values.iter().map(|_| VecDeque::new()).collect(),
        }
    }
}

impl Classes {
    /// `aqm` builds one class's AQM (called once per class when marking is per class).
    pub fn new(cfg: &Scheduler, mut aqm: impl FnMut(usize) -> Aqm) -> Classes {
        let (n, marking, push_out, class_buffer, order) = match cfg {
            Scheduler::StrictPriority(s) => (s.classes as usize, s.marking, s.full == FullBuffer::PushOutLowest, s.class_buffer, Order::Strict),
            Scheduler::Dwrr(d) => (d.quanta.len(), d.marking, false, d.class_buffer, Order::Dwrr(Dwrr::new(d))),
        };
        Classes {
            queues: (0..n).map(|_| VecDeque::new()).collect(),
            bytes: vec![0; n].into_boxed_slice(),
            aqms: match marking {
                ClassMarking::Class => (0..n).map(&mut aqm).collect(),
                ClassMarking::Port => Box::new([]),
            },
            push_out,
            trim: None,
            trims: 0,
            bounces: 0,
            class_buffer,
            order,
        }
    }

    #[inline]
    pub fn class_of(&self, dscp: u8) -> usize {
        (dscp as usize).min(self.queues.len() - 1)
    }

    /// What a class's own AQM sees.
    #[inline]
    pub fn view(&self, class: usize) -> QueueView {
        QueueView { packets: self.queues[class].len() as u64, bytes: self.bytes[class] }
    }

    /// Whether `class` may take `bytes` more under its own cap.
    #[inline]
    pub fn has_room(&self, class: usize, bytes: u64) -> bool {
        match self.class_buffer {
            None => true,
            Some(QSize::Packets(n)) => (self.queues[class].len() as u64) < n,
            Some(QSize::Bytes(n)) => self.bytes[class] + bytes <= n,
        }
    }

    #[inline]
    pub fn push(&mut self, class: usize, id: PktId, bytes: u64) {
        self.queues[class].push_back(id);
        self.bytes[class] += bytes;
        if let Order::Dwrr(d) = &mut self.order {
            if self.queues[class].len() == 1 {
                // Newly active: to the tail of its level, with a fresh quantum.
                d.active[d.level[class]].push_back(class);
                d.deficit[class] = d.quantum[class];
            }
        }
    }

    /// The next packet to send and its class, skipping the classes PFC
    /// has paused (bit c of `paused`: class c).
    #[inline]
    pub fn pop(&mut self, pool: &PacketPool, paused: u8) -> Option<(PktId, usize)> {
        let free = |c: usize| paused & (1 << c.min(7)) == 0;
        let class = match &mut self.order {
            Order::Strict => self.queues.iter().enumerate().position(|(c, q)| !q.is_empty() && free(c))?,
            Order::Dwrr(d) => {
                let level = d.active.iter_mut().find(|l| l.iter().any(|&c| free(c)))?;
                loop {
                    let c = *level.front().expect("a non-empty level");
                    if !free(c) {
                        // Paused: it keeps its deficit and yields the turn.
                        level.rotate_left(1);
                        continue;
                    }
                    let ip = pool.get(*self.queues[c].front().expect("active classes have packets")).ip_len();
                    if ip <= d.deficit[c] {
                        d.deficit[c] -= ip;
                        if self.queues[c].len() == 1 {
                            level.pop_front();
                        }
                        break c;
                    }
                    // Not enough saved: add a quantum and yield the turn.
                    d.deficit[c] += d.quantum[c];
                    level.rotate_left(1);
                }
            }
        };
        let id = self.queues[class].pop_front()?;
        self.bytes[class] -= pool.get(id).wire_bytes as u64;
        Some((id, class))
    }

    /// Push-out victim for an arrival of `class` (strict priority): the last
    /// packet of the lowest-priority non-empty class after it.
    pub fn evict_after(&mut self, class: usize, pool: &PacketPool) -> Option<PktId> {
        debug_assert!(matches!(self.order, Order::Strict));
        let victim = (class + 1..self.queues.len()).rev().find(|&c| !self.queues[c].is_empty())?;
        self.pop_tail(victim, pool)
    }

    /// Take the last packet of `class` (strict priority: push-out, trimming).
    pub fn pop_tail(&mut self, class: usize, pool: &PacketPool) -> Option<PktId> {
        debug_assert!(matches!(self.order, Order::Strict));
        let id = self.queues[class].pop_back()?;
        self.bytes[class] -= pool.get(id).wire_bytes as u64;
        Some(id)
    }

    /// The last class: with trimming, the data packets'.
    pub fn last(&self) -> usize {
        self.queues.len() - 1
    }

    pub fn is_empty(&self, class: usize) -> bool {
        self.queues[class].is_empty()
    }

    /// Every waiting packet (the link failed).
    pub fn take_all(&mut self) -> Vec<PktId> {
        self.bytes.iter_mut().for_each(|b| *b = 0);
        if let Order::Dwrr(d) = &mut self.order {
            d.active.iter_mut().for_each(|l| l.clear());
        }
        self.queues.iter_mut().flat_map(|q| q.drain(..)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{StrictPriorityCfg, Scheduler};
    use crate::packet::Packet;
    use crate::units::Bytes;

    fn strict(classes: u32) -> Classes {
        Classes::new(&Scheduler::StrictPriority(StrictPriorityCfg { classes, marking: ClassMarking::Port, full: FullBuffer::PushOutLowest, class_buffer: None }), |_| Aqm::DropTail)
    }

    /// A pool of `n` packets with `payload` bytes each (ip_len = payload + 40).
    fn pool(payloads: &[u32]) -> PacketPool {
        let mut p = PacketPool::default();
        for &payload in payloads {
            let mut pkt = Packet { payload, ..Default::default() };
            pkt.finalize_size(false);
            p.alloc(pkt);
        }
        p
    }

    #[test]
    fn strict_serves_the_first_nonempty_class_in_fifo_order() {
        let pool = pool(&[100; 4]);
        let mut s = strict(3);
        for (id, class) in [(0, 2), (1, 1), (2, 2), (3, 1)] {
            s.push(class, PktId(id), 158);
        }
        let order: Vec<_> = std::iter::from_fn(|| s.pop(&pool, 0)).collect();
        assert_eq!(order, [(PktId(1), 1), (PktId(3), 1), (PktId(0), 2), (PktId(2), 2)]);
    }

    #[test]
    fn paused_classes_are_skipped_and_keep_their_place() {
        let pool = pool(&[100; 4]);
        let mut s = strict(3);
        for (id, class) in [(0, 0), (1, 1), (2, 0), (3, 2)] {
            s.push(class, PktId(id), 158);
        }
        assert_eq!(s.pop(&pool, 0b001), Some((PktId(1), 1)));
        assert_eq!(s.pop(&pool, 0b011), Some((PktId(3), 2)));
        assert_eq!(s.pop(&pool, 0b111), None);
        assert_eq!(s.pop(&pool, 0), Some((PktId(0), 0)));
        let pool = self::pool(&[1460; 4]);
        let mut d = dwrr(&[1500, 1500], None);
        for k in 0..4u32 {
            d.push((k % 2) as usize, PktId(k), 1518);
        }
        let order: Vec<usize> = std::iter::from_fn(|| d.pop(&pool, 0b01).map(|x| x.1)).collect();
        assert_eq!(order, [1, 1], "class 0 paused: only class 1 is served");
        let order: Vec<usize> = std::iter::from_fn(|| d.pop(&pool, 0).map(|x| x.1)).collect();
        assert_eq!(order, [0, 0]);
    }

    #[test]
    fn dscp_beyond_the_last_class_goes_to_the_last() {
        let s = strict(4);
        assert_eq!(s.class_of(0), 0);
        assert_eq!(s.class_of(3), 3);
        assert_eq!(s.class_of(60), 3);
    }

    #[test]
    fn push_out_takes_the_tail_of_the_lowest_class_below_the_arrival() {
        let pool = pool(&[100; 3]);
        let mut s = strict(4);
        s.push(1, PktId(0), 158);
        s.push(3, PktId(1), 158);
        s.push(3, PktId(2), 158);
        assert_eq!(s.evict_after(0, &pool), Some(PktId(2)));
        assert_eq!(s.view(3).packets, 1);
        assert_eq!(s.evict_after(3, &pool), None, "nothing below the last class");
        assert_eq!(s.evict_after(1, &pool), Some(PktId(1)));
        assert_eq!(s.evict_after(1, &pool), None, "never a packet of the arrival's own class or above");
    }

    fn dwrr(quanta: &[u64], priorities: Option<Vec<u32>>) -> Classes {
        let cfg = DwrrCfg { quanta: quanta.iter().map(|&q| Bytes(q)).collect(), priorities, marking: ClassMarking::Port, class_buffer: None };
        Classes::new(&Scheduler::Dwrr(cfg), |_| Aqm::DropTail)
    }

    #[test]
    fn dwrr_shares_bytes_by_quantum() {
        // 1500-byte IP packets (1460 + 40), quanta 3000 / 1500 / 1500: a 2:1:1 share.
        let pool = pool(&[1460; 300]);
        let mut d = dwrr(&[3000, 1500, 1500], None);
        for k in 0..300u32 {
            d.push((k % 3) as usize, PktId(k), 1518);
        }
        let sent: Vec<usize> = (0..120).map(|_| d.pop(&pool, 0).unwrap().1).collect();
        let count = |c| sent.iter().filter(|&&x| x == c).count();
        assert_eq!((count(0), count(1), count(2)), (60, 30, 30));
        // A class keeps the head while it has deficit: class 0 sends two in a row.
        assert_eq!(&sent[..4], [0, 0, 1, 2]);
    }

    #[test]
    fn dwrr_saves_the_deficit_for_packets_larger_than_a_quantum() {
        // Class 0 has 1500-byte packets and a 1000-byte quantum; class 1 500-byte packets, quantum 1000.
        let mut payloads = vec![1460; 10];
        payloads.extend([460; 30]);
        let pool = pool(&payloads);
        let mut d = dwrr(&[1000, 1000], None);
        for k in 0..10u32 {
            d.push(0, PktId(k), 1518);
        }
        for k in 10..40u32 {
            d.push(1, PktId(k), 518);
        }
        let mut bytes = [0u64; 2];
        for _ in 0..20 {
            let (id, c) = d.pop(&pool, 0).unwrap();
            bytes[c] += pool.get(id).ip_len();
        }
        // Equal quanta, equal bytes over time, whatever the packet sizes (within one packet).
        assert!((bytes[0] as i64 - bytes[1] as i64).abs() <= 1500, "{bytes:?}");
    }

    #[test]
    fn dwrr_serves_a_smaller_priority_value_first() {
        let pool = pool(&[1460; 6]);
        let mut d = dwrr(&[1500, 1500], Some(vec![1, 0]));
        for k in 0..3u32 {
            d.push(0, PktId(k), 1518);
            d.push(1, PktId(k + 3), 1518);
        }
        let order: Vec<usize> = std::iter::from_fn(|| d.pop(&pool, 0).map(|x| x.1)).collect();
        assert_eq!(order, [1, 1, 1, 0, 0, 0]);
    }
}
