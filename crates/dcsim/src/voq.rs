//! CLUES' virtual-output-queued (VOQ) Ethernet switch (seed 004 §4.3,
//! Figs. 4-6; docs/models/voq.md).
//!
//! Each switch port has an ingress buffer of `ingress_cells` fixed-size
//! cells, shared by one FIFO per egress port (its VOQs). A frame that finds
//! too few free cells on arrival is dropped: this is where a VOQ switch
//! loses packets. Per egress port a scheduler serves the VOQs of all ingress
//! ports round robin, one frame per turn, and stops at the first VOQ whose
//! head frame the egress cannot take yet; the next invocation starts there
//! (§4.3: no starvation by smaller frames, at the price of a lost
//! opportunity when another VOQ's frame would have fitted). A forwarded
//! frame crosses the backplane in a fixed latency and joins the egress
//! port's transmit FIFO of `egress_cells` cells.
//!
//! Admission to the backplane ("TxQueueMgmtScheme"):
//! * `cellcredit`: the egress cells are tokens. Admitting a frame takes its
//!   cells; the egress returns them when it starts transmitting the frame,
//!   and then runs its scheduler.
//! * `oracle`: the switch projects its egress queue exactly (frames leave
//!   back to back at line rate), admits a frame when the egress queue will
//!   have room for it when it arrives, and otherwise wakes the scheduler at
//!   the first moment it will. No transmission opportunity is lost.

use std::collections::VecDeque;

use dcsim_engine::{Dur, SimTime};

use crate::config::{VoqAdmission, VoqCfg};
use crate::packet::PktId;

/// The frames a scheduler run admitted, and when it must run again.
pub struct Admitted {
    pub frames: Vec<PktId>,
    /// Oracle only: the scheduler must run again at this time.
    pub wake: Option<SimTime>,
}

pub struct VoqSwitch {
    /// The switch's ports (global ids); a port's local index is its position.
    pub ports: Vec<u32>,
    cell_bytes: u64,
    ingress_cells: u32,
    egress_cells: u32,
    pub backplane: Dur,
    admission: VoqAdmission,
    /// Per ingress port: cells and frames held, and frames dropped.
    pub ingress_used: Vec<u32>,
    pub ingress_frames: Vec<u32>,
    pub ingress_drops: Vec<u64>,
    /// Per ingress port, its VOQ per egress port: (frame, cells), at
    /// [ingress * n + egress].
    voqs: Vec<VecDeque<(PktId, u32)>>,
    /// Per egress port: the ingress port whose VOQ is served first.
    cursor: Vec<usize>,
    /// Per egress port, `cellcredit`: free egress cells.
    tokens: Vec<u32>,
    /// Per egress port, `oracle`: projected transmission start and cells of
    /// the admitted frames that have not started, and when the last ends.
    pending: Vec<VecDeque<(SimTime, u32)>>,
    busy_until: Vec<SimTime>,
    /// Per egress port, `oracle`: the wake-up already asked for.
    pub wake: Vec<Option<SimTime>>,
}

impl VoqSwitch {
    pub fn new(cfg: &VoqCfg, ports: Vec<u32>) -> VoqSwitch {
        let n = ports.len();
        VoqSwitch {
            ports,
            cell_bytes: cfg.cell_bytes.0,
            ingress_cells: cfg.ingress_cells,
            egress_cells: cfg.egress_cells,
            backplane: cfg.backplane_latency.0,
            admission: cfg.admission,
            ingress_used: vec![0; n],
            ingress_frames: vec![0; n],
            ingress_drops: vec![0; n],
            voqs: (0..n * n).map(|_| VecDeque::new()).collect(),
            cursor: vec![0; n],
            tokens: vec![cfg.egress_cells; n],
            pending: (0..n).map(|_| VecDeque::new()).collect(),
            busy_until: vec![SimTime::ZERO; n],
            wake: vec![None; n],
        }
    }

    /// Cells a frame of `frame_bytes` (Ethernet header to FCS) occupies.
    pub fn cells(&self, frame_bytes: u64) -> u32 {
        frame_bytes.div_ceil(self.cell_bytes) as u32
    }

    /// A frame arrived on `ingress` for `egress`: queue it in its VOQ, or
    /// drop it (false) if the ingress buffer lacks the cells.
    pub fn arrive(&mut self, ingress: usize, egress: usize, id: PktId, cells: u32) -> bool {
        if self.ingress_used[ingress] + cells > self.ingress_cells {
            self.ingress_drops[ingress] += 1;
            return false;
        }
        self.ingress_used[ingress] += cells;
        self.ingress_frames[ingress] += 1;
        let n = self.ports.len();
        self.voqs[ingress * n + egress].push_back((id, cells));
        true
    }

    /// The egress started transmitting a frame of `cells`. `cellcredit`
    /// gets its cells back and must run the scheduler (true); the oracle
    /// has projected this already.
    pub fn started(&mut self, egress: usize, cells: u32) -> bool {
        if self.admission == VoqAdmission::Cellcredit {
            self.tokens[egress] += cells;
        }
        self.admission == VoqAdmission::Cellcredit
    }

    /// Serve `egress`'s VOQs round robin (Fig. 6). `tx_time` gives a frame's
    /// serialisation time at the egress (for the oracle's projection).
    pub fn schedule(&mut self, now: SimTime, egress: usize, tx_time: impl Fn(PktId) -> Dur) -> Admitted {
        let n = self.ports.len();
        let mut out = Admitted { frames: Vec::new(), wake: None };
        if self.admission == VoqAdmission::Oracle {
            // Frames that have started transmitting no longer hold egress cells.
            let p = &mut self.pending[egress];
            while p.front().is_some_and(|&(start, _)| start <= now) {
                p.pop_front();
            }
        }
        let mut idle_turns = 0;
        while idle_turns < n {
            let ingress = self.cursor[egress];
            let Some(&(id, cells)) = self.voqs[ingress * n + egress].front() else {
                idle_turns += 1;
                self.cursor[egress] = (ingress + 1) % n;
                continue;
            };
            if !self.admit(now, egress, id, cells, &tx_time, &mut out.wake) {
                break; // the next run starts at this VOQ
            }
            self.voqs[ingress * n + egress].pop_front();
            self.ingress_used[ingress] -= cells;
            self.ingress_frames[ingress] -= 1;
            out.frames.push(id);
            idle_turns = 0;
            self.cursor[egress] = (ingress + 1) % n;
        }
        out
    }

    /// May a frame of `cells` cross the backplane to `egress` now?
    fn admit(&mut self, now: SimTime, egress: usize, id: PktId, cells: u32, tx_time: &impl Fn(PktId) -> Dur, wake: &mut Option<SimTime>) -> bool {
        match self.admission {
            VoqAdmission::Cellcredit => {
                if self.tokens[egress] < cells {
                    return false;
                }
                self.tokens[egress] -= cells;
                true
            }
            VoqAdmission::Oracle => {
                // The frame reaches the egress queue at `arrival`; the
                // admitted frames still waiting then are those that start
                // later (they arrived earlier: the backplane is FIFO).
                let arrival = now + self.backplane;
                let pending = &mut self.pending[egress];
                let waiting: u32 = pending.iter().filter(|&&(start, _)| start > arrival).map(|&(_, c)| c).sum();
                if waiting + cells > self.egress_cells {
                    // Wait until enough of them have started.
                    let mut free = self.egress_cells - waiting;
                    let when = pending.iter().filter(|&&(start, _)| start > arrival).find_map(|&(start, c)| {
                        free += c;
                        (free >= cells).then_some(start)
                    });
                    *wake = when.map(|start| SimTime::ZERO + ((start - SimTime::ZERO) - self.backplane));
                    return false;
                }
                let start = arrival.max(self.busy_until[egress]);
                self.busy_until[egress] = start + tx_time(id);
                pending.push_back((start, cells));
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Bytes, DurV};

    fn switch(ports: usize, ingress_cells: u32, egress_cells: u32, admission: VoqAdmission) -> VoqSwitch {
        let cfg = VoqCfg { ingress_cells, egress_cells, cell_bytes: Bytes(256), backplane_latency: DurV(Dur::from_us(4)), admission };
        VoqSwitch::new(&cfg, (0..ports as u32).collect())
    }

    const US: Dur = Dur::from_us(1);

    #[test]
    fn a_frame_takes_whole_cells_and_a_full_ingress_buffer_drops() {
        let mut v = switch(3, 12, 24, VoqAdmission::Cellcredit);
        assert_eq!((v.cells(1518), v.cells(256), v.cells(257), v.cells(64)), (6, 1, 2, 1));
        assert!(v.arrive(0, 2, PktId(0), 6));
        assert!(v.arrive(0, 1, PktId(1), 6)); // the ingress buffer is shared by its VOQs
        assert!(!v.arrive(0, 2, PktId(2), 1));
        assert_eq!((v.ingress_used[0], v.ingress_frames[0], v.ingress_drops[0]), (12, 2, 1));
        assert!(v.arrive(1, 2, PktId(3), 6), "each ingress port has its own buffer");
    }

    #[test]
    fn cellcredit_serves_voqs_round_robin_and_resumes_at_the_one_that_failed() {
        // Three ingress ports with two 6-cell frames each for egress 3, which
        // has 18 cells: three frames fit.
        let mut v = switch(4, 199, 18, VoqAdmission::Cellcredit);
        for i in 0..3 {
            for k in 0..2 {
                assert!(v.arrive(i, 3, PktId((i * 2 + k) as u32), 6));
            }
        }
        let now = SimTime::ZERO;
        let a = v.schedule(now, 3, |_| US);
        assert_eq!(a.frames, [PktId(0), PktId(2), PktId(4)], "one frame per VOQ per turn");
        assert_eq!(a.wake, None);
        assert_eq!(v.ingress_used[..3], [6, 6, 6]);
        // Ingress 0's second frame failed: the next run starts there once a
        // frame's cells come back.
        assert!(v.started(3, 6));
        assert_eq!(v.schedule(now, 3, |_| US).frames, [PktId(1)]);
        assert!(v.started(3, 6));
        assert!(v.started(3, 6));
        assert_eq!(v.schedule(now, 3, |_| US).frames, [PktId(3), PktId(5)]);
        assert_eq!(v.ingress_used[..3], [0, 0, 0]);
    }

    #[test]
    fn the_oracle_admits_what_the_egress_queue_will_hold_on_arrival_and_wakes_when_it_will() {
        // 12 egress cells = two 6-cell frames waiting; 1 us per frame; 4 us backplane.
        let mut v = switch(2, 199, 12, VoqAdmission::Oracle);
        for k in 0..5 {
            assert!(v.arrive(0, 1, PktId(k), 6));
        }
        let a = v.schedule(SimTime::ZERO, 1, |_| US);
        // Projected starts 4, 5, 6 us: at 4 us the first leaves at once and
        // two wait (12 cells). The fourth would make three.
        assert_eq!(a.frames, [PktId(0), PktId(1), PktId(2)]);
        // It fits once the frame starting at 5 us has left: admit at 5 - 4 = 1 us.
        assert_eq!(a.wake, Some(SimTime::ZERO + US));
        let b = v.schedule(SimTime::ZERO + US, 1, |_| US);
        assert_eq!(b.frames, [PktId(3)]);
        assert_eq!(b.wake, Some(SimTime::ZERO + Dur::from_us(2)));
        // No lost opportunity: the egress runs back to back (4, 5, 6, 7 us ...).
        assert_eq!(v.busy_until[1], SimTime::ZERO + Dur::from_us(8));
    }
}
