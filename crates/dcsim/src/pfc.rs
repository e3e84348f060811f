//! Priority-based flow control: IEEE 802.1Qbb-2011 (now IEEE 802.1Q-2018
//! Clause 36), whose PAUSE frame is the MAC Control frame of IEEE 802.3
//! Clause 31 and Annex 31D. See docs/models/pfc.md.
//!
//! Two halves live on every port of a network with PFC:
//!
//! * **Egress** (every port, hosts' NICs too): the peer's PAUSE frames stop
//!   this port from *starting* frames of a class for the time they give
//!   (802.1Q §36.1.3.2); a frame already on the wire finishes. A PAUSE with
//!   zero quanta resumes the class at once.
//! * **Ingress** (switch ports): the bytes of each lossless class that came
//!   in on this port's link and are still in the switch (waiting out the
//!   forwarding latency, queued at any egress, or being sent). Past XOFF the
//!   switch sends PAUSE upstream on this port, refreshes it while the bytes
//!   stay above XON, and sends a zero-quanta PAUSE (XON) once they fall below.
//!
//! A PAUSE frame is a control frame: it waits only for the frame being sent,
//! then goes before any queued data (802.3 §31.4: MAC Control frames have
//! precedence), and is never itself paused.

use crate::packet::PktId;
use dcsim_engine::{Dur, Rate, SimTime};
use std::collections::VecDeque;

/// 802.1Qbb carries a time for each of 8 priorities.
pub const CLASSES: usize = 8;
/// A PAUSE frame: DA, SA, EtherType 0x8808, opcode 0x0101, the class-enable
/// vector, 8 times, padding, FCS (802.3 Annex 31D, Figure 31D-1).
pub const PAUSE_FRAME_BYTES: u64 = 64;
/// One pause quantum is 512 bit times at the link's rate (802.3 §31B.2).
pub const QUANTUM_BYTES: u64 = 512 / 8;

/// How long `quanta` pause quanta last on a link of `rate`.
pub fn pause_time(quanta: u16, rate: Rate) -> Dur {
    rate.tx_time(quanta as u64 * QUANTUM_BYTES)
}

/// Headroom per ingress port and class: the most bytes that can still
/// arrive after the one that crosses XOFF, with every term at its worst
/// (IEEE 802.1Qbb Annex N's "PFC delay" budget, in this model's terms):
///
/// * our port is sending a full frame when XOFF is crossed, and the PAUSE
///   waits for it (`max_frame`), then is sent itself (64 B);
/// * it propagates to the upstream port (`delay`);
/// * the upstream port takes `response` to react, then finishes the full
///   frame it has begun (`max_frame`);
/// * everything it sent meanwhile is still on the wire (`delay`).
pub fn headroom(rate: Rate, delay: Dur, response: Dur, max_frame: u64) -> u64 {
    let in_flight = (rate.bps as u128 * (2 * delay.ps() + response.ps()) as u128).div_ceil(8 * 1_000_000_000_000) as u64;
    2 * max_frame + PAUSE_FRAME_BYTES + in_flight
}

/// Per class counters of one port.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClassStats {
    /// PAUSE frames with non-zero quanta sent upstream (XOFF and refreshes).
    pub pauses_sent: u64,
    /// Zero-quanta PAUSE frames sent upstream (XON).
    pub resumes_sent: u64,
    /// PAUSE frames with non-zero quanta received from the peer.
    pub pauses_received: u64,
    pub resumes_received: u64,
    /// Time this port's sending of the class was stopped, and the longest stop.
    pub paused: Dur,
    pub longest_pause: Dur,
    /// Frames dropped because they arrived beyond XOFF plus the headroom.
    pub headroom_drops: u64,
    /// Most ingress bytes held at once.
    pub max_ingress_bytes: u64,
}

/// What an arrival's or a departure's accounting asks the switch to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    None,
    /// Send PAUSE upstream (and arm its refresh).
    Xoff,
    /// Send a zero-quanta PAUSE upstream.
    Xon,
}

pub struct PfcPort {
    /// Lossless classes (bit c: class c).
    pub lossless: u8,
    /// Classes at the switches (a packet's class is min(dscp, classes - 1)).
    classes: u8,
    // ---- egress: this port's sending, as the peer's PAUSE frames allow
    /// Per class: no frame starts in [paused_from, paused_until).
    paused_from: [SimTime; CLASSES],
    paused_until: [SimTime; CLASSES],
    /// Per class: when the current stop began (for the counters).
    stop_began: [Option<SimTime>; CLASSES],
    /// PAUSE frames waiting to go before any data.
    pub control: VecDeque<PktId>,
    // ---- ingress: frames that came in on this port's link
    pub ingress_bytes: [u64; CLASSES],
    /// Classes whose upstream we are pausing, and the bytes held when each
    /// pause went out: the headroom counts from there (with dynamic
    /// thresholds the XOFF level may have fallen far below the bytes held
    /// by the time an arrival crosses it).
    pausing: u8,
    xoff_at: [u64; CLASSES],
    /// Bumped on every XON, so a refresh armed before it is stale.
    pub refresh_gen: [u32; CLASSES],
    pub stats: [ClassStats; CLASSES],
}

impl PfcPort {
    pub fn new(lossless: u8, classes: usize) -> PfcPort {
        PfcPort {
            lossless,
            classes: classes.clamp(1, CLASSES) as u8,
            paused_from: [SimTime::ZERO; CLASSES],
            paused_until: [SimTime::ZERO; CLASSES],
            stop_began: [None; CLASSES],
            control: VecDeque::new(),
            ingress_bytes: [0; CLASSES],
            pausing: 0,
            xoff_at: [0; CLASSES],
            refresh_gen: [0; CLASSES],
            stats: [ClassStats::default(); CLASSES],
        }
    }

    /// The class of a packet with `dscp` (a port without per-class queues,
    /// such as a NIC, still stops for the class of its head frame).
    #[inline]
    pub fn class_of(&self, dscp: u8) -> usize {
        dscp.min(self.classes - 1) as usize
    }

    #[inline]
    pub fn is_lossless(&self, class: usize) -> bool {
        self.lossless & (1 << class) != 0
    }

    // ---- egress ----------------------------------------------------------------

    /// Classes whose frames may not start at `now` (bit c: class c).
    #[inline]
    pub fn paused_mask(&self, now: SimTime) -> u8 {
        let mut mask = 0;
        for c in 0..CLASSES {
            if self.paused_from[c] <= now && now < self.paused_until[c] {
                mask |= 1 << c;
            }
        }
        mask
    }

    /// A PAUSE frame for `class` arrived: stop the class from `from` (the
    /// arrival plus the response time) for `time` (zero: resume at `from`).
    /// Returns when the class may send again, if a resume event is needed.
    pub fn on_pause(&mut self, now: SimTime, class: usize, from: SimTime, time: Dur) -> Option<SimTime> {
        let until = from + time;
        let s = &mut self.stats[class];
        if time == Dur::ZERO {
            s.resumes_received += 1;
        } else {
            s.pauses_received += 1;
        }
        let running = self.paused_until[class] > now;
        if !running {
            self.paused_from[class] = from;
        }
        self.paused_until[class] = until;
        if time > Dur::ZERO && self.stop_began[class].is_none() {
            self.stop_began[class] = Some(from);
        }
        if time == Dur::ZERO {
            self.end_stop(class, from);
        }
        Some(until).filter(|&t| t > now)
    }

    /// The stop of `class` ended at `at` (a resume, or its quanta ran out).
    pub fn end_stop(&mut self, class: usize, at: SimTime) {
        if let Some(t0) = self.stop_began[class].take() {
            let d = at.since(t0);
            let s = &mut self.stats[class];
            s.paused += d;
            s.longest_pause = s.longest_pause.max(d);
        }
    }

    /// A resume event for `class` at `now`: true if the stop really ended now
    /// (a later PAUSE may have extended it).
    pub fn resume_due(&mut self, now: SimTime, class: usize) -> bool {
        if self.paused_until[class] != now {
            return false;
        }
        self.end_stop(class, now);
        true
    }

    /// How long `class` has been stopped without a break at `now` (zero if it is not).
    pub fn stopped_for(&self, now: SimTime, class: usize) -> Dur {
        match self.stop_began[class] {
            Some(t0) if self.paused_until[class] > now => now.since(t0),
            _ => Dur::ZERO,
        }
    }

    /// The run ends: close the counters of stops still running.
    pub fn close(&mut self, now: SimTime) {
        for c in 0..CLASSES {
            if self.stop_began[c].is_some() {
                self.end_stop(c, now.min(self.paused_until[c]));
            }
        }
    }

    // ---- ingress ---------------------------------------------------------------

    /// May a frame of `bytes` of lossless `class` enter? Beyond the bytes
    /// held when the pause went out plus the headroom it may not (a
    /// headroom drop).
    #[inline]
    pub fn admits(&mut self, class: usize, bytes: u64, headroom: u64) -> bool {
        if self.pausing & (1 << class) == 0 {
            return true;
        }
        let ok = self.ingress_bytes[class] + bytes <= self.xoff_at[class] + headroom;
        if !ok {
            self.stats[class].headroom_drops += 1;
        }
        ok
    }

    /// A lossless frame came in; `xoff` is the class's XOFF level now.
    #[inline]
    pub fn arrive(&mut self, class: usize, bytes: u64, xoff: u64) -> Signal {
        let held = self.ingress_bytes[class] + bytes;
        self.ingress_bytes[class] = held;
        let s = &mut self.stats[class];
        s.max_ingress_bytes = s.max_ingress_bytes.max(held);
        if self.pausing & (1 << class) == 0 && held > xoff {
            self.pausing |= 1 << class;
            self.xoff_at[class] = held;
            s.pauses_sent += 1;
            return Signal::Xoff;
        }
        Signal::None
    }

    /// A lossless frame left the switch; resume once the bytes held are at
    /// most `xon`.
    #[inline]
    pub fn depart(&mut self, class: usize, bytes: u64, xon: u64) -> Signal {
        self.ingress_bytes[class] -= bytes;
        if self.pausing & (1 << class) != 0 && self.ingress_bytes[class] <= xon {
            self.pausing &= !(1 << class);
            self.refresh_gen[class] = self.refresh_gen[class].wrapping_add(1);
            self.stats[class].resumes_sent += 1;
            return Signal::Xon;
        }
        Signal::None
    }

    /// A refresh for `class` with generation `gen` fell due: true if the
    /// upstream is still to be paused (a PAUSE goes again).
    pub fn refresh_due(&mut self, class: usize, gen: u32) -> bool {
        let due = self.pausing & (1 << class) != 0 && self.refresh_gen[class] == gen;
        if due {
            self.stats[class].pauses_sent += 1;
        }
        due
    }

}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quantum_is_512_bit_times() {
        // 65535 quanta at 100 Gb/s: 65535 * 512 bits / 1e11 = 335.5 us.
        assert_eq!(pause_time(65535, Rate::from_gbps(100)), Dur(335_539_200));
        assert_eq!(pause_time(1, Rate::from_gbps(10)), Dur::from_ns(51) + Dur(200));
    }

    #[test]
    fn headroom_counts_two_frames_the_pause_and_the_round_trip() {
        // 100 Gb/s, 1 us cable, no response time, 1518 B frames:
        // 2 * 1518 + 64 + 2 us * 100 Gb/s (25,000 B).
        assert_eq!(headroom(Rate::from_gbps(100), Dur::from_us(1), Dur::ZERO, 1518), 2 * 1518 + 64 + 25_000);
    }

    #[test]
    fn xoff_then_refresh_then_xon() {
        let mut p = PfcPort::new(0b1000, 8);
        assert!(p.is_lossless(3) && !p.is_lossless(0));
        assert_eq!(p.arrive(3, 1000, 1500), Signal::None);
        assert_eq!(p.arrive(3, 1000, 1500), Signal::Xoff, "2000 B > XOFF 1500 B");
        assert_eq!(p.arrive(3, 1000, 1500), Signal::None, "one XOFF until XON");
        let gen = p.refresh_gen[3];
        assert!(p.refresh_due(3, gen));
        assert!(p.admits(3, 1000, 2000), "3000 + 1000 <= 2000 held at the pause + headroom 2000");
        assert_eq!(p.depart(3, 1000, 500), Signal::None);
        assert_eq!(p.depart(3, 1000, 500), Signal::None);
        assert_eq!(p.depart(3, 1000, 500), Signal::Xon);
        assert!(!p.refresh_due(3, gen), "the refresh armed before XON is stale");
        assert_eq!(p.stats[3].pauses_sent, 2);
        assert_eq!(p.stats[3].resumes_sent, 1);
        assert_eq!(p.stats[3].max_ingress_bytes, 3000);
    }

    #[test]
    fn beyond_the_headroom_a_frame_is_dropped_and_counted() {
        let mut p = PfcPort::new(1, 1);
        assert_eq!(p.arrive(0, 2000, 1500), Signal::Xoff);
        assert!(p.admits(0, 1000, 1000), "2000 + 1000 <= 2000 held at the pause + 1000");
        p.arrive(0, 1000, 1500);
        assert!(!p.admits(0, 1, 1000));
        assert_eq!(p.stats[0].headroom_drops, 1);
    }

    #[test]
    fn pauses_stop_a_class_for_their_time_and_zero_quanta_resume() {
        let mut p = PfcPort::new(0xFF, 8);
        let t = |us| SimTime::ZERO + Dur::from_us(us);
        assert_eq!(p.on_pause(t(10), 2, t(10), Dur::from_us(5)), Some(t(15)));
        assert_eq!(p.paused_mask(t(12)), 0b100);
        assert_eq!(p.paused_mask(t(15)), 0);
        // A refresh before the end extends the stop; the first resume event is stale.
        assert_eq!(p.on_pause(t(14), 2, t(14), Dur::from_us(5)), Some(t(19)));
        assert!(!p.resume_due(t(15), 2));
        assert_eq!(p.stopped_for(t(18), 2), Dur::from_us(8));
        // XON at 17 us: the stop lasted 7 us.
        assert_eq!(p.on_pause(t(17), 2, t(17), Dur::ZERO), None);
        assert_eq!(p.paused_mask(t(17)), 0);
        assert_eq!(p.stats[2].paused, Dur::from_us(7));
        assert_eq!(p.stats[2].pauses_received, 2);
        assert_eq!(p.stats[2].resumes_received, 1);
        // A response time delays the stop: frames may still start before it.
        p.on_pause(t(20), 1, t(21), Dur::from_us(5));
        assert_eq!(p.paused_mask(t(20)), 0);
        assert_eq!(p.paused_mask(t(21)), 0b10);
    }
}
