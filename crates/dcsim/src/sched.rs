//! Per-class queues behind one switch egress port.
//!
//! Strict priority as PIAS's switches use it (Bai et al., NSDI 2015 §4;
//! PIAS-NS2's `Priority` queue, reference mechanisms.md §1 and §4.1, HSCC's
//! baseline in seed 002 §5.2): the class of a packet is its DSCP, capped at
//! the last class; class 0 is served first; a class is served only when all
//! classes before it are empty. The port's buffer is shared by the classes.
//! See docs/models/pias.md.

use crate::aqm::{Aqm, QueueView};
use crate::config::{ClassMarking, FullBuffer, StrictPriorityCfg};
use crate::packet::PktId;
use std::collections::VecDeque;

pub struct StrictPriority {
    queues: Box<[VecDeque<PktId>]>,
    bytes: Box<[u64]>,
    /// One AQM per class (`marking = "class"`); empty when the port's AQM
    /// judges the port's total queue.
    pub aqms: Box<[Aqm]>,
    pub push_out: bool,
}

impl StrictPriority {
    /// `aqm` builds one class's AQM (called once per class when marking is per class).
    pub fn new(cfg: &StrictPriorityCfg, mut aqm: impl FnMut(usize) -> Aqm) -> StrictPriority {
        let n = cfg.classes as usize;
        StrictPriority {
            queues: (0..n).map(|_| VecDeque::new()).collect(),
            bytes: vec![0; n].into_boxed_slice(),
            aqms: match cfg.marking {
                ClassMarking::Class => (0..n).map(&mut aqm).collect(),
                ClassMarking::Port => Box::new([]),
            },
            push_out: cfg.full == FullBuffer::PushOutLowest,
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

    #[inline]
    pub fn push(&mut self, class: usize, id: PktId, bytes: u64) {
        self.queues[class].push_back(id);
        self.bytes[class] += bytes;
    }

    /// The head of the first non-empty class, and that class.
    #[inline]
    pub fn pop(&mut self, size: impl Fn(PktId) -> u64) -> Option<(PktId, usize)> {
        let class = self.queues.iter().position(|q| !q.is_empty())?;
        let id = self.queues[class].pop_front()?;
        self.bytes[class] -= size(id);
        Some((id, class))
    }

    /// Push-out victim for an arrival of `class`: the last packet of the
    /// lowest-priority non-empty class after it.
    pub fn evict_after(&mut self, class: usize, size: impl Fn(PktId) -> u64) -> Option<PktId> {
        let victim = (class + 1..self.queues.len()).rev().find(|&c| !self.queues[c].is_empty())?;
        let id = self.queues[victim].pop_back()?;
        self.bytes[victim] -= size(id);
        Some(id)
    }

    pub fn is_empty(&self, class: usize) -> bool {
        self.queues[class].is_empty()
    }

    /// Every waiting packet, highest class first.
    pub fn take_all(&mut self) -> Vec<PktId> {
        self.bytes.iter_mut().for_each(|b| *b = 0);
        self.queues.iter_mut().flat_map(|q| q.drain(..)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sp(classes: u32) -> StrictPriority {
        StrictPriority::new(&StrictPriorityCfg { classes, marking: ClassMarking::Port, full: FullBuffer::PushOutLowest }, |_| Aqm::DropTail)
    }

    #[test]
    fn serves_the_first_nonempty_class_in_fifo_order() {
        let mut s = sp(3);
        for (id, class) in [(0, 2), (1, 1), (2, 2), (3, 1)] {
            s.push(class, PktId(id), 100);
        }
        let order: Vec<_> = std::iter::from_fn(|| s.pop(|_| 100)).collect();
        assert_eq!(order, [(PktId(1), 1), (PktId(3), 1), (PktId(0), 2), (PktId(2), 2)]);
    }

    #[test]
    fn dscp_beyond_the_last_class_goes_to_the_last() {
        let s = sp(4);
        assert_eq!(s.class_of(0), 0);
        assert_eq!(s.class_of(3), 3);
        assert_eq!(s.class_of(60), 3);
    }

    #[test]
    fn push_out_takes_the_tail_of_the_lowest_class_below_the_arrival() {
        let mut s = sp(4);
        s.push(1, PktId(0), 100);
        s.push(3, PktId(1), 100);
        s.push(3, PktId(2), 100);
        assert_eq!(s.evict_after(0, |_| 100), Some(PktId(2)));
        assert_eq!(s.view(3).packets, 1);
        assert_eq!(s.evict_after(3, |_| 100), None, "nothing below the last class");
        assert_eq!(s.evict_after(1, |_| 100), Some(PktId(1)));
        assert_eq!(s.evict_after(1, |_| 100), None, "never a packet of the arrival's own class or above");
    }
}
