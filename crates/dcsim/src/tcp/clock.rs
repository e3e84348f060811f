//! The RTT clock: which event a sender times and at what resolution
//! (`tcp.rtt_clock`; docs/models/tcp.md, "The RTT clock").
//!
//! - `ticks` needs no state here: TSval is a tick count of G and the timed
//!   segment carries one ([`super::rtt::RttParams::sample_from_ticks`]).
//! - `linux`, `ns3` and `ns3_legacy` time segments from their exact send
//!   times, which the [`SendLog`] keeps as Linux's retransmit queue
//!   (`skb->skb_mstamp_ns`) and ns-3's `m_history` (RttHistory) do.

use super::rtt::RttParams;
use crate::config::RttClock;
use dcsim_engine::{Dur, SimTime};

/// One segment of new data in flight: [seq, end), when it was first sent,
/// and whether any of it has been sent again since.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Sent {
    seq: u64,
    end: u64,
    at: SimTime,
    retx: bool,
}

/// Segments in flight in sequence order (new data goes out in sequence
/// order, so also in order of first transmission). Used by every clock but
/// `ticks`; the vector grows to the window's size once and is reused.
#[derive(Clone, Debug, Default)]
pub struct SendLog {
    /// Entries q[head..] are in flight; the acknowledged prefix is dropped
    /// when it is empty or half the vector (cheaper per ACK than a ring).
    q: Vec<Sent>,
    head: usize,
}

/// What a cumulative ACK removed from the log.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Acked {
    /// It acknowledged at least one segment in full.
    pub any: bool,
    /// The oldest of those: when it was sent, and whether it was resent.
    pub oldest_at: SimTime,
    pub oldest_retx: bool,
    /// Some segment it acknowledged had been retransmitted.
    pub any_retx: bool,
}

impl SendLog {
    /// A segment [seq, end) leaves: new data is appended, a retransmission
    /// marks every logged segment it overlaps.
    #[inline]
    pub fn sent(&mut self, seq: u64, end: u64, now: SimTime, retx: bool) {
        let last_end = self.q.last().map_or(0, |s| s.end);
        if !retx && end > last_end {
            self.q.push(Sent { seq: seq.max(last_end), end, at: now, retx: false });
            return;
        }
        let live = &mut self.q[self.head..];
        let first = live.partition_point(|s| s.end <= seq);
        for s in &mut live[first..] {
            if s.seq >= end {
                break;
            }
            s.retx = true;
        }
    }

    /// Remove the segments a cumulative ACK of `ack` covers in full.
    #[inline]
    pub fn acked(&mut self, ack: u64) -> Acked {
        let mut a = Acked::default();
        while let Some(s) = self.q.get(self.head) {
            if s.end > ack {
                break;
            }
            if !a.any {
                a = Acked { any: true, oldest_at: s.at, oldest_retx: s.retx, any_retx: s.retx };
            }
            a.any_retx |= s.retx;
            self.head += 1;
        }
        if a.any && 2 * self.head >= self.q.len() {
            self.q.drain(..self.head);
            self.head = 0;
        }
        a
    }

    /// The send time of the segment holding byte `seq`, if it was never
    /// retransmitted (a newly SACKed segment Linux may time).
    pub fn clean_send_time(&self, seq: u64) -> Option<SimTime> {
        let live = &self.q[self.head..];
        let i = live.partition_point(|s| s.end <= seq);
        live.get(i).filter(|s| s.seq <= seq && !s.retx).map(|s| s.at)
    }
}

/// Linux's send stamps: microseconds of a nanosecond clock
/// (tcp_stamp_us_delta of two values each floored to 1 us).
fn linux_us(now: SimTime, at: SimTime) -> Dur {
    const US: u64 = 1_000_000;
    Dur::from_us((now.ps() / US).saturating_sub(at.ps() / US))
}

/// The sample an ACK gives under a clock that keeps a send log, after the log
/// has been updated with it: `acked` is what it acknowledged cumulatively,
/// `sacked_at` the send time of the first segment it newly SACKed (if never
/// retransmitted), `tsecr` its timestamp echo when timestamps are in use
/// and it acknowledges new data (Linux's FLAG_ACKED).
pub fn sample(p: &RttParams, now: SimTime, acked: Acked, sacked_at: Option<SimTime>, tsecr: Option<u32>) -> Option<Dur> {
    match p.clock {
        RttClock::Ticks => None,
        // tcp_clean_rtx_queue: no sample from the cumulative ACK if it
        // covers a retransmission (Karn); then the SACK's; then, if
        // something was acknowledged, the echo (tcp_rtt_tsopt_us: whole
        // milliseconds, at least one).
        RttClock::Linux => {
            if acked.any && !acked.any_retx {
                Some(linux_us(now, acked.oldest_at))
            } else if let Some(at) = sacked_at {
                Some(linux_us(now, at))
            } else {
                tsecr.filter(|&e| e != 0).and_then(|e| p.sample_from_ticks(now, e))
            }
        }
        // Only when the oldest outstanding segment is acknowledged in full.
        RttClock::Ns3 if !acked.any => None,
        RttClock::Ns3 => match tsecr {
            // TcpOptionTS::ElapsedTimeFromTsValue: zero unless now (ms) > echo;
            // CalculateRttSample makes a zero 1 us (since ns-3.34).
            Some(e) => Some(ns3_elapsed(p, now, e).unwrap_or(Dur::from_us(1))),
            None => (!acked.oldest_retx).then(|| now - acked.oldest_at),
        },
        // Before 3.34 (EstimateRtt): Karn on the oldest segment, timestamps
        // or not, and a zero is no measurement.
        RttClock::Ns3Legacy if !acked.any || acked.oldest_retx => None,
        RttClock::Ns3Legacy => match tsecr {
            Some(e) => ns3_elapsed(p, now, e),
            None => Some(now - acked.oldest_at),
        },
    }
}

/// ns-3's milliseconds since an echoed TSval, if more than zero.
fn ns3_elapsed(p: &RttParams, now: SimTime, tsecr: u32) -> Option<Dur> {
    let now_ms = p.tick(now);
    (now_ms > tsecr).then(|| p.ts_tick.saturating_mul((now_ms - tsecr) as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RtoFormula;

    fn params(clock: RttClock) -> RttParams {
        RttParams {
            clock,
            ts_tick: Dur::from_ms(1),
            granularity: Dur::from_ms(1),
            min_rto: Dur::from_ms(1),
            max_rto: Dur::from_secs(60),
            initial_rto: Dur::from_secs(1),
            syn_timeout_rto: Dur::from_secs(3),
            formula: RtoFormula::Linux,
        }
    }
    fn us(x: u64) -> SimTime {
        SimTime(Dur::from_us(x).ps())
    }

    #[test]
    fn the_log_keeps_first_send_times_and_marks_retransmissions() {
        let mut log = SendLog::default();
        log.sent(1, 1001, us(0), false);
        log.sent(1001, 2001, us(1), false);
        log.sent(2001, 3001, us(2), false);
        log.sent(1001, 2001, us(9), true); // a retransmission keeps the first time
        assert_eq!(log.clean_send_time(1500), None);
        assert_eq!(log.clean_send_time(2500), Some(us(2)));
        assert_eq!(log.acked(500), Acked::default(), "a partial ACK removes nothing");
        assert_eq!(log.acked(2001), Acked { any: true, oldest_at: us(0), oldest_retx: false, any_retx: true });
        assert_eq!(log.acked(3001).oldest_at, us(2));
        assert!(log.q[log.head..].is_empty());
    }

    #[test]
    fn linux_times_clean_segments_in_microseconds_and_falls_back_to_the_millisecond_echo() {
        let p = params(RttClock::Linux);
        let clean = Acked { any: true, oldest_at: SimTime(1_234_567), oldest_retx: false, any_retx: false };
        // 20.7 us after a send at 1.234567 us: floor(21.9) - floor(1.2) = 20 us.
        assert_eq!(sample(&p, SimTime(21_934_567), clean, None, Some(7)), Some(Dur::from_us(20)));
        // An ACK covering a retransmission: the SACKed segment's time instead...
        let dirty = Acked { any_retx: true, ..clean };
        assert_eq!(sample(&p, us(500), dirty, Some(us(470)), Some(0)), Some(Dur::from_us(30)));
        // ...else the echo, a millisecond at least even on a 20 us path.
        let now = us(5_020);
        assert_eq!(sample(&p, now, dirty, None, Some(p.tick(us(5_000)))), Some(Dur::from_ms(1)));
        // A duplicate ACK with no new SACK gives nothing (it carries no
        // echo to use: the caller passes one only with new data acknowledged).
        assert_eq!(sample(&p, now, Acked::default(), None, None), None);
    }

    #[test]
    fn ns3_echo_samples_are_milliseconds_or_one_microsecond() {
        let p = params(RttClock::Ns3);
        let acked = Acked { any: true, oldest_at: us(980), oldest_retx: true, any_retx: true };
        // Sent at 0.98 ms (TSval 0), acked at 1.003 ms: one whole millisecond.
        assert_eq!(sample(&p, us(1_003), acked, None, Some(0)), Some(Dur::from_ms(1)));
        // Within the same millisecond: 1 us.
        assert_eq!(sample(&p, us(1_020), acked, None, Some(1)), Some(Dur::from_us(1)));
        // Without timestamps a retransmitted head gives nothing (Karn), a clean one the exact time.
        assert_eq!(sample(&p, us(1_003), acked, None, None), None);
        let clean = Acked { oldest_retx: false, any_retx: false, ..acked };
        assert_eq!(sample(&p, SimTime(Dur::from_us(1_003).ps() + 7), clean, None, None), Some(Dur(Dur::from_us(23).ps() + 7)));
        // Nothing when the oldest segment is not acknowledged in full.
        assert_eq!(sample(&p, us(1_003), Acked::default(), None, Some(0)), None);
    }

    #[test]
    fn ns3_before_3_34_drops_zero_samples_and_retransmitted_heads() {
        let p = params(RttClock::Ns3Legacy);
        let clean = Acked { any: true, oldest_at: us(980), oldest_retx: false, any_retx: false };
        assert_eq!(sample(&p, us(1_003), clean, None, Some(0)), Some(Dur::from_ms(1)));
        assert_eq!(sample(&p, us(1_020), clean, None, Some(1)), None, "zero is no sample");
        let resent = Acked { oldest_retx: true, any_retx: true, ..clean };
        assert_eq!(sample(&p, us(1_003), resent, None, Some(0)), None, "Karn even with timestamps");
        assert_eq!(sample(&p, us(1_003), clean, None, None), Some(Dur::from_us(23)));
    }
}
