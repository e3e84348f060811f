//! RACK-TLP loss detection (RFC 8985), `tcp.loss_detection = "rack_tlp"`.
//!
//! RACK (§6) deems a segment lost once a segment sent after it has been
//! delivered and a reordering window has passed since: time, not a count of
//! duplicate ACKs. TLP (§7) sends one probe when the ACKs of a flight's
//! tail stop coming, so that RACK sees a loss there before the RTO would.
//!
//! This file keeps RACK's and TLP's state and answers the endpoint's
//! questions (what is lost, when to look again, when to probe); the endpoint
//! (tcp/mod.rs) sends, retransmits and reduces its window. The names follow
//! the RFC's pseudocode (RACK.xmit_ts, RACK.end_seq, ...).
//! docs/models/rack-tlp.md lists the sources and the deviations.

use dcsim_engine::{Dur, SimTime};

/// RFC 8985 §6.2 Step 4: DSACK-free recoveries before the window's
/// multiplier returns to 1.
const REO_WND_PERSIST: u32 = 16;

/// One segment in flight (RFC 8985 §5.1, per-segment state): [seq, end),
/// when it was last sent, whether it was ever resent, whether it is deemed
/// lost or has been SACKed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Seg {
    seq: u64,
    end: u64,
    xmit_ts: SimTime,
    retx: bool,
    lost: bool,
    sacked: bool,
}

/// What the ACK being processed tells RACK, beyond the segments it delivers.
#[derive(Clone, Copy, Debug)]
pub struct AckInfo {
    /// The cumulative ACK (SND.UNA after it).
    pub snd_una: u64,
    /// SND.NXT (the endpoint's snd_max: the highest sequence sent).
    pub snd_nxt: u64,
    /// The ACK carries a DSACK block (RFC 2883).
    pub dsack: bool,
    /// This ACK ends a recovery (RFC 8985 §6.2 Step 4's persistence count).
    pub exiting_recovery: bool,
    /// TSecr of the ACK, and the length of a timestamp tick, when timestamps
    /// are in use (Step 2's check for a retransmission's ambiguous sample).
    pub echo: Option<(u32, Dur)>,
}

/// RACK's and TLP's state for one sender.
#[derive(Clone, Debug, Default)]
pub struct Rack {
    /// Segments in flight in sequence order; q[head..] are live (the acked
    /// prefix is dropped in bulk, as the send log does).
    q: Vec<Seg>,
    head: usize,
    /// RACK.xmit_ts and RACK.end_seq: the most recently sent segment that
    /// has been delivered (cumulatively acked or SACKed).
    xmit_ts: SimTime,
    end_seq: u64,
    /// RACK.rtt: the RTT of that segment's delivery.
    rtt: Dur,
    /// RACK.min_RTT (over the connection's life; RFC 8985 §6.2 Step 1).
    min_rtt: Option<Dur>,
    /// RACK.fack: the highest sequence delivered.
    fack: u64,
    /// RACK.reordering_seen.
    pub reordering_seen: bool,
    /// RACK.segs_sacked: segments SACKed and not yet cumulatively acked.
    segs_sacked: u32,
    /// RACK.dsack_round, RACK.reo_wnd_mult, RACK.reo_wnd_persist.
    dsack_round: Option<u64>,
    reo_wnd_mult: u32,
    reo_wnd_persist: u32,
    /// The end of the highest never-retransmitted segment deemed lost. New
    /// data leaves in sequence (and time) order, so those lost form a prefix
    /// of the never-retransmitted ones: the endpoint's loss boundary.
    lost_below: u64,
    /// TLP.end_seq and TLP.is_retrans: the outstanding probe, if any.
    pub tlp_end_seq: Option<u64>,
    pub tlp_is_retrans: bool,
    /// An RTT was measured since the last probe (§7.3's second condition).
    pub sampled_since_probe: bool,
    /// This recovery has answered a lost retransmission (§9.3).
    pub cut_for_relost: bool,
    /// The window of the last reduction for a loss a probe repaired (§7.4.2).
    pub reduced_until: u64,
}

/// RACK_sent_after (RFC 8985 §6.2): was (t1, seq1) sent after (t2, seq2)?
fn sent_after(t1: SimTime, seq1: u64, t2: SimTime, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

impl Rack {
    pub fn new() -> Rack {
        Rack { reo_wnd_mult: 1, ..Rack::default() }
    }

    fn live(&self) -> &[Seg] {
        &self.q[self.head..]
    }

    /// A segment [seq, end) was sent at `now` (RFC 8985 §6.1): new data is
    /// appended; a retransmission stamps every segment it overlaps anew and
    /// clears their lost mark.
    pub fn sent(&mut self, seq: u64, end: u64, now: SimTime, retx: bool) {
        let last_end = self.q.last().map_or(0, |s| s.end);
        if !retx && end > last_end {
            self.q.push(Seg { seq: seq.max(last_end), end, xmit_ts: now, retx: false, lost: false, sacked: false });
            return;
        }
        let head = self.head;
        let first = self.q[head..].partition_point(|s| s.end <= seq);
        for s in &mut self.q[head + first..] {
            if s.seq >= end {
                break;
            }
            s.xmit_ts = now;
            s.retx = true;
            s.lost = false;
        }
    }

    /// Steps 1-3 of RFC 8985 §6.2 for an ACK: the segments it delivers,
    /// cumulatively or SACKed in full (`blocks` are the ACK's SACK blocks,
    /// `covered` asks the scoreboard after it), update RACK.min_RTT,
    /// RACK.rtt, RACK.xmit_ts/end_seq and the reordering state; the
    /// cumulatively acknowledged segments leave the list. Only the
    /// acknowledged prefix and the segments under the blocks are visited.
    pub fn on_ack(&mut self, now: SimTime, info: &AckInfo, blocks: &[(u64, u64)], covered: impl Fn(u64, u64) -> bool) {
        // The most recently sent valid delivery of this ACK (Step 2 visits
        // in order of transmission, so its RTT is the one RACK.rtt keeps).
        let mut latest: Option<(SimTime, u64, Dur)> = None;
        let acked = self.live().partition_point(|s| s.end <= info.snd_una);
        for i in self.head..self.head + acked {
            let s = self.q[i];
            if s.sacked {
                self.segs_sacked -= 1;
            } else {
                self.deliver(now, s, info, &mut latest);
            }
        }
        self.head += acked;
        for &(a, b) in blocks {
            let from = self.head + self.live().partition_point(|s| s.end <= a);
            for i in from..self.q.len() {
                let s = self.q[i];
                if s.seq >= b {
                    break;
                }
                if !s.sacked && covered(s.seq, s.end) {
                    self.q[i].sacked = true;
                    self.q[i].lost = false;
                    self.segs_sacked += 1;
                    self.deliver(now, s, info, &mut latest);
                }
            }
        }
        if let Some((ts, end, rtt)) = latest {
            self.rtt = rtt;
            self.sampled_since_probe = true;
            if sent_after(ts, end, self.xmit_ts, self.end_seq) {
                self.xmit_ts = ts;
                self.end_seq = end;
            }
        }
        if 2 * self.head >= self.q.len() {
            self.q.drain(..self.head);
            self.head = 0;
        }
        self.update_dsack_state(info);
    }

    /// One delivered segment: Step 1 (min_RTT), Step 2's validity check,
    /// and Step 3 (RACK.fack, reordering).
    fn deliver(&mut self, now: SimTime, s: Seg, info: &AckInfo, latest: &mut Option<(SimTime, u64, Dur)>) {
        let rtt = now - s.xmit_ts;
        if !s.retx && s.end < self.fack {
            self.reordering_seen = true;
        } else {
            self.fack = self.fack.max(s.end);
        }
        if s.retx {
            // The ACK may be for an earlier transmission: not valid if the
            // echo predates the last retransmission, or if the RTT is
            // shorter than any seen.
            let echo_older = info.echo.is_some_and(|(tsecr, tick)| (tsecr as u64) < s.xmit_ts.ps() / tick.ps());
            if echo_older || self.min_rtt.is_some_and(|m| rtt < m) {
                return;
            }
        } else {
            self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        }
        if latest.is_none_or(|(ts, end, _)| sent_after(s.xmit_ts, s.end, ts, end)) {
            *latest = Some((s.xmit_ts, s.end, rtt));
        }
    }

    /// RACK_update_reo_wnd's DSACK bookkeeping (Step 4): the multiplier
    /// grows by one per round trip that sees a DSACK, and returns to 1
    /// after 16 recoveries without one.
    fn update_dsack_state(&mut self, info: &AckInfo) {
        if self.dsack_round.is_some_and(|r| info.snd_una >= r) {
            self.dsack_round = None;
        }
        if self.dsack_round.is_none() && info.dsack {
            self.dsack_round = Some(info.snd_nxt);
            self.reo_wnd_mult += 1;
            self.reo_wnd_persist = REO_WND_PERSIST;
        } else if info.exiting_recovery && self.reo_wnd_persist > 0 {
            self.reo_wnd_persist -= 1;
            if self.reo_wnd_persist == 0 {
                self.reo_wnd_mult = 1;
            }
        }
    }

    /// RACK.reo_wnd (Step 4): zero while no reordering has been seen and
    /// the sender is recovering or DupThresh segments are SACKed (so RACK
    /// is at least as fast as the DupThresh rule), or without an RTT
    /// estimate (§3.3.2); otherwise a quarter of the minimum RTT per
    /// multiplier, at most SRTT.
    pub fn reo_wnd(&self, in_recovery: bool, dupthresh: u32, srtt: Dur) -> Dur {
        match self.min_rtt {
            _ if !self.reordering_seen && (in_recovery || self.segs_sacked >= dupthresh) => Dur::ZERO,
            None => Dur::ZERO,
            Some(m) => Dur(m.ps().saturating_mul(self.reo_wnd_mult as u64) / 4).min(srtt),
        }
    }

    /// RACK.segs_sacked.
    pub fn segs_sacked(&self) -> u32 {
        self.segs_sacked
    }

    /// RACK_detect_loss (Step 5): mark lost every un-SACKed segment sent
    /// before the most recently delivered one whose RACK.rtt + reo_wnd has
    /// passed. Returns the time left until the next may be (zero: none
    /// waits), and puts the ranges of lost retransmissions in `relost`.
    pub fn detect_loss(&mut self, now: SimTime, reo_wnd: Dur, relost: &mut Vec<(u64, u64)>) -> Dur {
        let mut timeout = Dur::ZERO;
        let (rack_ts, rack_end, rack_rtt) = (self.xmit_ts, self.end_seq, self.rtt);
        let head = self.head;
        for s in &mut self.q[head..] {
            if s.sacked || s.lost {
                continue;
            }
            if !sent_after(rack_ts, rack_end, s.xmit_ts, s.end) {
                if s.retx {
                    continue;
                }
                // Never-resent segments leave in order: the rest were sent later still.
                break;
            }
            let due = s.xmit_ts + rack_rtt + reo_wnd;
            if due <= now {
                s.lost = true;
                if s.retx {
                    relost.push((s.seq, s.end));
                } else {
                    self.lost_below = self.lost_below.max(s.end);
                }
            } else {
                timeout = timeout.max(due - now);
            }
        }
        timeout
    }

    /// RACK's losses at a retransmission timeout (RFC 8985 §6.3): the first
    /// un-SACKed segment, and every one whose RACK.rtt + reo_wnd has passed
    /// since it was sent.
    pub fn mark_losses_on_rto(&mut self, now: SimTime, snd_una: u64, reo_wnd: Dur) {
        let rack_rtt = self.rtt;
        let head = self.head;
        for s in &mut self.q[head..] {
            if s.sacked || s.lost {
                continue;
            }
            if s.seq <= snd_una || s.xmit_ts + rack_rtt + reo_wnd <= now {
                s.lost = true;
                if !s.retx {
                    self.lost_below = self.lost_below.max(s.end);
                }
            }
        }
    }

    /// Every byte below this that is neither SACKed nor resent is lost.
    pub fn lost_below(&self) -> u64 {
        self.lost_below
    }

    /// TLP_calc_PTO (RFC 8985 §7.2): twice SRTT plus `extra` (the peer's
    /// worst-case delayed-ACK time when only one segment is in flight,
    /// TLP.max_ack_delay; else any slack the stack adds); one second without
    /// an RTT sample. The caller caps it at the RTO's expiry.
    pub fn pto(srtt: Option<Dur>, extra: Dur) -> Dur {
        match srtt {
            Some(srtt) => srtt.saturating_mul(2) + extra,
            None => Dur::from_secs(1),
        }
    }

    /// TLP_process_ack (RFC 8985 §7.4.2): does this ACK end the probe's
    /// episode, and did the probe repair a loss (which calls for a
    /// congestion response)? `dsack_of_probe`: the ACK DSACKs a block
    /// ending at TLP.end_seq; `dupack_without_sack`: it is a duplicate ACK
    /// with no SACK option (both copies arrived at a receiver without DSACK).
    pub fn tlp_on_ack(&mut self, ack: u64, dsack_of_probe: bool, dupack_without_sack: bool) -> bool {
        match self.tlp_end_seq {
            Some(end) if ack >= end => {
                let repaired = self.tlp_is_retrans && !dsack_of_probe && ack > end;
                if !self.tlp_is_retrans || dsack_of_probe || ack > end || dupack_without_sack {
                    self.tlp_end_seq = None;
                }
                repaired
            }
            _ => false,
        }
    }

    /// TLP_init (§7.1), at the start of a fast or timeout recovery.
    pub fn tlp_init(&mut self) {
        self.tlp_end_seq = None;
        self.tlp_is_retrans = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime(Dur::from_ms(x).ps())
    }
    fn info(snd_una: u64, snd_nxt: u64) -> AckInfo {
        AckInfo { snd_una, snd_nxt, dsack: false, exiting_recovery: false, echo: None }
    }
    /// Segment i of 1000 bytes: [1 + 1000 i, 1 + 1000 (i + 1)).
    fn seg(i: u64) -> (u64, u64) {
        (1 + 1000 * i, 1 + 1000 * (i + 1))
    }
    /// Deliver an ACK of `ack` SACKing `blocks` (the scoreboard is the blocks).
    fn ack(r: &mut Rack, at: SimTime, ack: u64, blocks: &[(u64, u64)]) {
        let covered = |a: u64, b: u64| blocks.iter().any(|&(x, y)| x <= a && b <= y);
        r.on_ack(at, &info(ack, seg(9).1), blocks, covered);
    }
    fn detect(r: &mut Rack, at: SimTime, in_recovery: bool) -> (Dur, Vec<(u64, u64)>) {
        let mut relost = Vec::new();
        let reo = r.reo_wnd(in_recovery, 3, Dur::from_ms(100));
        (r.detect_loss(at, reo, &mut relost), relost)
    }

    /// RFC 8985 §3.4 (Figure 1) with an RTT of 100 ms and an RTO of 1 s: P1,
    /// P2 and P3 lost, the probe (P3 again) SACKed, P1 and P2 found lost,
    /// then the retransmission of P1 found lost once P2's is SACKed.
    #[test]
    fn rfc8985_section_3_4_fast_recovery_example() {
        let mut r = Rack::new();
        for i in 0..4 {
            r.sent(seg(i).0, seg(i).1, ms(0), false);
        }
        ack(&mut r, ms(100), seg(0).1, &[]);
        assert_eq!(detect(&mut r, ms(100), false).0, Dur::ZERO, "nothing was sent after P0");
        // TLP_calc_PTO after the ACK: 2 SRTT (200 ms), well before the RTO.
        assert_eq!(Rack::pto(Some(Dur::from_ms(100)), Dur::ZERO), Dur::from_ms(200));
        // The probe retransmits the highest segment, P3, at 300 ms; its SACK comes back at 400 ms.
        r.sent(seg(3).0, seg(3).1, ms(300), true);
        ack(&mut r, ms(400), seg(0).1, &[seg(3)]);
        assert_eq!(r.reo_wnd(false, 3, Dur::from_ms(100)), Dur::from_ms(25), "one SACKed segment: min_RTT / 4");
        let (timeout, relost) = detect(&mut r, ms(400), false);
        assert_eq!((timeout, relost.len()), (Dur::ZERO, 0));
        assert_eq!(r.lost_below(), seg(2).1, "P1 and P2 are lost");
        // Recovery retransmits P1 and P2 at 400 ms; P1's copy is lost, P2's SACKed at 500 ms.
        r.sent(seg(1).0, seg(1).1, ms(400), true);
        r.sent(seg(2).0, seg(2).1, ms(400), true);
        ack(&mut r, ms(500), seg(0).1, &[(seg(2).0, seg(3).1)]);
        assert_eq!(r.reo_wnd(true, 3, Dur::from_ms(100)), Dur::ZERO, "in recovery, no reordering seen");
        let (_, relost) = detect(&mut r, ms(500), true);
        assert_eq!(relost, [seg(1)], "P1's retransmission is lost: 400 + 100 + 0 - 500 <= 0");
    }

    /// RFC 8985 §3.5: at an RTO only the first segment, and segments sent at
    /// least RACK.rtt + reo_wnd ago, are lost; those sent just before are not.
    #[test]
    fn rfc8985_section_3_5_rto_marks_only_what_has_had_time() {
        let mut r = Rack::new();
        r.sent(seg(0).0, seg(0).1, ms(0), false);
        ack(&mut r, ms(100), seg(0).1, &[]); // RACK.rtt = 100 ms
        r.sent(seg(1).0, seg(1).1, ms(100), false);
        r.sent(seg(2).0, seg(2).1, ms(1090), false);
        r.sent(seg(3).0, seg(3).1, ms(1090), false);
        r.mark_losses_on_rto(ms(1100), seg(1).0, Dur::from_ms(25));
        assert_eq!(r.lost_below(), seg(1).1, "segment 1 only: 1090 + 100 + 25 > 1100");
    }

    /// RFC 8985 §9.1, example 1: P1 and P3 of a flight are lost. The SACK of
    /// P2 finds P1; the ACK of P1's retransmission finds P3, with no RTO
    /// (neither DupThresh nor RFC 6675 could).
    #[test]
    fn rfc8985_section_9_1_drops_at_the_tail_of_a_flight() {
        let mut r = Rack::new();
        r.sent(seg(0).0, seg(0).1, ms(0), false);
        ack(&mut r, ms(100), seg(0).1, &[]);
        for (i, t) in [(1, 100), (2, 150), (3, 200)] {
            r.sent(seg(i).0, seg(i).1, ms(t), false);
        }
        ack(&mut r, ms(250), seg(0).1, &[seg(2)]);
        let (timeout, _) = detect(&mut r, ms(250), false);
        assert_eq!((r.lost_below(), timeout), (seg(1).1, Dur::ZERO), "P1: 100 + 100 + 25 <= 250");
        r.sent(seg(1).0, seg(1).1, ms(250), true);
        ack(&mut r, ms(350), seg(2).1, &[]);
        detect(&mut r, ms(350), true);
        assert_eq!(r.lost_below(), seg(3).1, "P3, sent before R1, is lost");
    }

    /// A segment delivered below RACK.fack that was never resent shows
    /// reordering: the window then stays at min_RTT / 4 even with DupThresh
    /// segments SACKed, and losses inside it wait for the reordering timer.
    #[test]
    fn reordering_keeps_the_window_and_arms_the_timer() {
        let mut r = Rack::new();
        r.sent(seg(0).0, seg(0).1, ms(0), false);
        ack(&mut r, ms(100), seg(0).1, &[]);
        for i in 1..6 {
            r.sent(seg(i).0, seg(i).1, ms(100 + i), false);
        }
        // P3 first, then P2 (reordered), then P4 and P5: four SACKed, P1 missing.
        ack(&mut r, ms(203), seg(0).1, &[seg(3)]);
        assert!(!r.reordering_seen);
        ack(&mut r, ms(204), seg(0).1, &[(seg(2).0, seg(3).1)]);
        assert!(r.reordering_seen);
        ack(&mut r, ms(205), seg(0).1, &[(seg(2).0, seg(5).1)]);
        assert_eq!(r.segs_sacked(), 4);
        assert_eq!(r.reo_wnd(false, 3, Dur::from_ms(100)), Dur::from_ms(25));
        let (timeout, _) = detect(&mut r, ms(205), false);
        // P1 (sent at 101 ms) is lost at 101 + 100 (RACK.rtt) + 25 = 226 ms.
        assert_eq!((r.lost_below(), timeout), (0, Dur::from_ms(21)));
        detect(&mut r, ms(226), false);
        assert_eq!(r.lost_below(), seg(1).1);
    }

    /// Step 4: the multiplier grows once per round trip that sees a DSACK
    /// and returns to 1 after 16 recoveries without one.
    #[test]
    fn dsack_rounds_grow_the_window_and_sixteen_clean_recoveries_reset_it() {
        let mut r = Rack::new();
        r.sent(seg(0).0, seg(0).1, ms(0), false);
        ack(&mut r, ms(100), seg(0).1, &[]);
        r.reordering_seen = true;
        let dsack = |una| AckInfo { dsack: true, ..info(una, seg(5).1) };
        r.on_ack(ms(110), &dsack(seg(0).1), &[], |_, _| false);
        r.on_ack(ms(120), &dsack(seg(0).1), &[], |_, _| false); // same round: no growth
        assert_eq!(r.reo_wnd(false, 3, Dur::from_ms(100)), Dur::from_ms(50));
        r.on_ack(ms(130), &dsack(seg(5).1), &[], |_, _| false); // next round
        assert_eq!(r.reo_wnd(false, 3, Dur::from_ms(100)), Dur::from_ms(75));
        for _ in 0..16 {
            r.on_ack(ms(140), &AckInfo { exiting_recovery: true, ..info(seg(5).1, seg(5).1) }, &[], |_, _| false);
        }
        assert_eq!(r.reo_wnd(false, 3, Dur::from_ms(100)), Dur::from_ms(25));
        // Bounded by SRTT.
        r.reo_wnd_mult = 9;
        assert_eq!(r.reo_wnd(false, 3, Dur::from_ms(100)), Dur::from_ms(100));
    }

    /// TLP_calc_PTO (§7.2): 1 s without SRTT, else 2 SRTT and the extra.
    #[test]
    fn probe_timeout_rules() {
        assert_eq!(Rack::pto(None, Dur::from_ms(200)), Dur::from_secs(1));
        assert_eq!(Rack::pto(Some(Dur::from_ms(10)), Dur::from_ms(200)), Dur::from_ms(220));
    }

    /// TLP_process_ack (§7.4.2) for a retransmitted probe ending at 5001.
    #[test]
    fn a_retransmitted_probe_repairs_a_loss_only_without_a_sign_both_copies_arrived() {
        let probe = |r: &mut Rack| {
            r.tlp_end_seq = Some(5001);
            r.tlp_is_retrans = true;
        };
        let mut r = Rack::new();
        probe(&mut r);
        assert!(!r.tlp_on_ack(4001, false, false), "below the probe: the episode goes on");
        assert!(!r.tlp_on_ack(5001, false, false) && r.tlp_end_seq.is_some(), "at it, with SACK: still open");
        assert!(r.tlp_on_ack(6001, false, false) && r.tlp_end_seq.is_none(), "beyond it: a loss was repaired");
        probe(&mut r);
        assert!(!r.tlp_on_ack(5001, true, false) && r.tlp_end_seq.is_none(), "DSACK of the probe: no loss");
        probe(&mut r);
        assert!(!r.tlp_on_ack(5001, false, true) && r.tlp_end_seq.is_none(), "a plain duplicate ACK: no loss");
        r.tlp_end_seq = Some(5001);
        r.tlp_is_retrans = false;
        assert!(!r.tlp_on_ack(6001, false, false) && r.tlp_end_seq.is_none(), "new data delivered: no loss");
    }
}
