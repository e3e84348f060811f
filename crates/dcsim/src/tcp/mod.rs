//! TCP endpoints.
//!
//! Each connection has two [`Endpoint`]s, one per host; both can send and
//! receive. An endpoint is a state machine: it takes `(now, input)` (a packet,
//! a timer, an application write) and returns its outcome through [`TcpOut`]:
//! packets to transmit, bytes delivered in order to the application, and
//! whether the connection just opened. Timers are deadlines kept in the
//! endpoint; the world schedules their events lazily.
//!
//! What is implemented, and where it comes from:
//! - three-way handshake with MSS, window scale, SACK-permitted, timestamps,
//!   ECN setup (RFC 793/9293, RFC 7323, RFC 2018, RFC 3168 §6.1.1); FIN close.
//! - slow start and congestion avoidance with byte counting (RFC 5681 §3.1):
//!   slow start grows cwnd by min(acked, SMSS) per ACK; congestion avoidance
//!   by SMSS per cwnd of acked bytes.
//! - fast retransmit / fast recovery: NewReno (RFC 6582) without SACK; with
//!   SACK, the conservative loss recovery of RFC 6675 (pipe, NextSeg rules
//!   1-3, IsLost with DupThresh), byte-based.
//! - limited transmit (RFC 3042), dupthresh configurable.
//! - RTO per RFC 6298 with Karn's algorithm, exponential backoff, min/max
//!   bounds and clock granularity (see [`rtt`]); RTT from timestamps (RFC 7323
//!   §4) when negotiated, otherwise from one timed segment per window.
//! - ECN (RFC 3168) and DCTCP (RFC 8257), see [`cc`].
//! - delayed ACKs (RFC 5681 §4.2: at least every `count` full segments, at most
//!   `timeout` late; immediate ACK for out-of-order data, hole filling, FIN),
//!   Nagle (RFC 896), receive window honoured (send window = min(cwnd, rwnd)).

pub mod cc;
pub mod clock;
pub mod rack;
pub mod ranges;
pub mod rtt;
pub mod swift;

use crate::config::{CaCounting, CongestionControl, LossDetection, RecoveryExit, RtoBackoffReset, RttClock, Scenario, SsthreshBasis};
use crate::packet::{flags, Ecn, Packet, WScale, MAX_SACK_BLOCKS, MAX_SACK_BLOCKS_TS, OPT_TIMESTAMPS};
use cc::{Cc, EcnMode};
use clock::SendLog;
use dcsim_engine::{Dur, SimTime};
use rack::Rack;
use ranges::RangeSet;
use rtt::{Arrear, ArrearParams, RttEstimator, RttParams};
use swift::{Swift, SwiftParams};

/// Per-run TCP parameters (from the scenario's `[tcp]` table).
#[derive(Clone, Debug)]
pub struct TcpParams {
    pub cc: CongestionControl,
    pub ecn: bool,
    pub sack: bool,
    pub timestamps: bool,
    pub window_scale: bool,
    pub initial_cwnd: u32,
    pub initial_ssthresh: Option<u32>,
    pub rtt: RttParams,
    pub dupthresh: u32,
    pub limited_transmit: bool,
    pub detect_lost_retransmits: bool,
    pub rack_tlp: bool,
    pub tlp_max_ack_delay: Dur,
    pub tlp_slack: Dur,
    pub dsack: bool,
    pub ssthresh_basis: SsthreshBasis,
    pub ca_counting: CaCounting,
    pub recovery_exit: RecoveryExit,
    pub rto_backoff_reset: RtoBackoffReset,
    pub delack: bool,
    pub delack_count: u32,
    pub delack_timeout: Dur,
    pub nagle: bool,
    pub restart_after_idle: bool,
    pub cwnd_validation: bool,
    pub grow_in_cwr: bool,
    /// Segments per send opportunity (u16::MAX: no limit).
    pub max_burst: u16,
    pub frto: bool,
    pub bad_rexmit_undo: bool,
    pub rto_forgets_sack: bool,
    pub ack_before_app: bool,
    pub arrear: Option<ArrearParams>,
    /// HSCC's end-host shim: put our window scale in the reserved bits of ACKs.
    pub hscc_shim: bool,
    /// PIAS's host tagging: demotion thresholds in bytes (see crate::sched).
    pub pias: Option<Box<[u64]>>,
    pub rcv_buffer: u64,
    pub dctcp_g: f64,
    pub dctcp_alpha_init: f64,
    pub dctcp_min_cwnd: u32,
    /// MSS option value we advertise: MTU - 40.
    pub mss_option: u16,
    /// Swift's parameters when tcp.cc = "swift" (tcp/swift.rs).
    pub swift: Option<SwiftParams>,
}

impl TcpParams {
    pub fn from_scenario(s: &Scenario) -> TcpParams {
        let t = &s.tcp;
        TcpParams {
            cc: t.cc,
            ecn: t.ecn_enabled(),
            sack: t.sack,
            timestamps: t.timestamps,
            window_scale: t.window_scale,
            initial_cwnd: t.initial_cwnd,
            initial_ssthresh: t.initial_ssthresh,
            rtt: RttParams {
                clock: t.rtt_clock,
                // Linux's and ns-3's timestamps count milliseconds; Swift's
                // are the NIC's nanosecond stamps (§3.1).
                ts_tick: match t.rtt_clock {
                    _ if t.cc == CongestionControl::Swift => Dur::from_ns(1),
                    RttClock::Ticks => t.arrear.map_or(t.rtt_granularity.0, |a| a.clock.resolution()),
                    RttClock::Linux | RttClock::Ns3 | RttClock::Ns3Legacy => Dur::from_ms(1),
                },
                // With ARREAR, samples come from its clock.
                granularity: t.arrear.map_or(t.rtt_granularity.0, |a| a.clock.resolution()),
                min_rto: t.min_rto.0,
                max_rto: t.max_rto.0,
                initial_rto: t.initial_rto.0,
                syn_timeout_rto: t.syn_timeout_rto.0,
                formula: t.rto_formula,
            },
            dupthresh: t.dupthresh,
            limited_transmit: t.limited_transmit,
            detect_lost_retransmits: t.detect_lost_retransmits,
            rack_tlp: t.loss_detection == LossDetection::RackTlp,
            tlp_max_ack_delay: t.tlp_max_ack_delay.0,
            tlp_slack: t.tlp_slack.0,
            dsack: t.dsack,
            ssthresh_basis: t.ssthresh_basis,
            ca_counting: t.ca_counting,
            recovery_exit: t.recovery_exit,
            rto_backoff_reset: t.rto_backoff_reset,
            delack: t.delayed_ack.enabled,
            delack_count: if t.delayed_ack.enabled { t.delayed_ack.count } else { 1 },
            delack_timeout: t.delayed_ack.timeout.0,
            nagle: t.nagle,
            restart_after_idle: t.restart_after_idle,
            cwnd_validation: t.cwnd_validation,
            grow_in_cwr: t.grow_in_cwr,
            max_burst: if t.max_burst == 0 { u16::MAX } else { t.max_burst },
            frto: t.frto,
            bad_rexmit_undo: t.bad_rexmit_undo,
            rto_forgets_sack: t.rto_forgets_sack,
            ack_before_app: t.ack_before_app,
            arrear: t.arrear.map(|a| ArrearParams { clock: a.clock, source: a.source.0, msl: a.msl.0, syn_data: a.syn_data.0 as u32 }),
            hscc_shim: s.switch.hscc.as_ref().is_some_and(|h| h.shim),
            pias: s.host.pias.as_ref().map(|c| c.thresholds.iter().map(|b| b.0).collect()),
            rcv_buffer: t.rcv_buffer.0,
            dctcp_g: t.dctcp_g,
            dctcp_alpha_init: t.dctcp_alpha_init,
            dctcp_min_cwnd: t.dctcp_min_cwnd,
            mss_option: t.mss.map(|m| m.0).unwrap_or(s.link.mtu as u64 - 40) as u16,
            swift: (t.cc == CongestionControl::Swift).then(|| {
                let w = &t.swift;
                SwiftParams {
                    base_target: w.base_target.0,
                    per_hop: w.per_hop.0,
                    fs_range: w.fs_range.0,
                    fs_min_cwnd: w.fs_min_cwnd,
                    fs_max_cwnd: w.fs_max_cwnd,
                    endpoint_target: w.endpoint_target.0,
                    ai: w.ai,
                    beta: w.beta,
                    max_mdf: w.max_mdf,
                    min_cwnd: w.min_cwnd,
                    max_cwnd: w.max_cwnd,
                    retx_reset: w.retx_reset,
                }
            }),
        }
    }

    /// Our window-scale shift: the smallest that fits the buffer in 16 bits.
    pub fn own_wscale(&self) -> u8 {
        let mut s = 0u8;
        while (self.rcv_buffer >> s) > 65535 && s < 14 {
            s += 1;
        }
        s
    }

    /// Payload bytes of a full segment once the handshake agreed on `ts`.
    pub fn payload_mss(&self, ts: bool) -> u32 {
        self.mss_option as u32 - if ts { OPT_TIMESTAMPS as u32 } else { 0 }
    }
}

/// A timer kept as a deadline; the world keeps at most one live event for it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timer {
    pub deadline: Option<SimTime>,
    /// Time of the pending event, if one is scheduled.
    pub scheduled: Option<SimTime>,
    pub gen: u32,
}

impl Timer {
    pub fn arm(&mut self, at: SimTime) {
        self.deadline = Some(at);
    }
    pub fn cancel(&mut self) {
        self.deadline = None;
    }
    /// If the deadline is earlier than the pending event (or none is
    /// pending), a new event is needed: returns its time and generation.
    pub fn needs_event(&mut self) -> Option<(SimTime, u32)> {
        let d = self.deadline?;
        match self.scheduled {
            Some(s) if s <= d => None,
            _ => {
                self.gen = self.gen.wrapping_add(1);
                self.scheduled = Some(d);
                Some((d, self.gen))
            }
        }
    }
    /// The event with `gen` fired at `now`: is the timer due?
    pub fn fire(&mut self, now: SimTime, gen: u32) -> bool {
        if gen != self.gen {
            return false; // superseded by an earlier event
        }
        self.scheduled = None;
        match self.deadline {
            Some(d) if d <= now => {
                self.deadline = None;
                true
            }
            _ => false, // moved later (or cancelled); needs_event re-arms
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerKind {
    Rto = 0,
    DelAck = 1,
    /// RACK's reordering timer or TLP's probe timer (tcp.loss_detection).
    Rack = 2,
}

impl TimerKind {
    pub const ALL: [TimerKind; 3] = [TimerKind::Rto, TimerKind::DelAck, TimerKind::Rack];
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Listen,
    SynSent,
    SynRcvd,
    Established,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct TcpStats {
    pub segments_sent: u64,
    pub data_bytes_sent: u64,
    /// Retransmitted data segments (any cause).
    pub retransmits: u64,
    /// Fast-retransmit episodes (entries into fast recovery).
    pub fast_retransmits: u64,
    /// Retransmission timeouts (including SYN timeouts).
    pub timeouts: u64,
    /// Window reductions in response to ECN-Echo.
    pub ecn_reductions: u64,
    /// Data segments received that carried no new byte (a spurious
    /// retransmission by the peer, detected omnisciently at the receiver).
    pub duplicate_segments_received: u64,
    pub ce_received: u64,
    /// Timeouts F-RTO found spurious and undid (RFC 5682).
    pub spurious_timeouts: u64,
    /// Tail loss probes sent (RFC 8985 §7).
    pub tail_loss_probes: u64,
    /// Retransmissions found lost (and queued to be sent again).
    pub lost_retransmissions: u64,
}

impl TcpStats {
    /// Counts since `earlier` (a snapshot of the same endpoint).
    pub fn since(&self, earlier: &TcpStats) -> TcpStats {
        TcpStats {
            segments_sent: self.segments_sent - earlier.segments_sent,
            data_bytes_sent: self.data_bytes_sent - earlier.data_bytes_sent,
            retransmits: self.retransmits - earlier.retransmits,
            fast_retransmits: self.fast_retransmits - earlier.fast_retransmits,
            timeouts: self.timeouts - earlier.timeouts,
            ecn_reductions: self.ecn_reductions - earlier.ecn_reductions,
            duplicate_segments_received: self.duplicate_segments_received - earlier.duplicate_segments_received,
            ce_received: self.ce_received - earlier.ce_received,
            spurious_timeouts: self.spurious_timeouts - earlier.spurious_timeouts,
            tail_loss_probes: self.tail_loss_probes - earlier.tail_loss_probes,
            lost_retransmissions: self.lost_retransmissions - earlier.lost_retransmissions,
        }
    }
}

/// One row of the opt-in TCP state trace (recorded on every ACK).
#[derive(Clone, Copy, Debug)]
pub struct TraceRow {
    pub time: SimTime,
    pub conn: u32,
    pub side: u8,
    pub cwnd: u64,
    pub ssthresh: u64,
    pub srtt: Dur,
    pub rttvar: Dur,
    pub rto: Dur,
    pub in_flight: u64,
    /// The peer's advertised window, scaled (what HSCC's rewrite clamps).
    pub snd_wnd: u64,
    /// Data bytes cumulatively acknowledged so far.
    pub acked: u64,
    /// DCTCP's alpha (NaN for other congestion controls).
    pub alpha: f64,
}

/// What an endpoint produced while handling one input.
#[derive(Default)]
pub struct TcpOut {
    pub packets: Vec<Packet>,
    /// Bytes newly delivered in order to the application.
    pub delivered: u64,
    /// The connection reached ESTABLISHED during this call.
    pub established: bool,
    pub trace_enabled: bool,
    pub trace: Vec<TraceRow>,
    /// TCP Small Queues: bytes of data segments this call may still hand to
    /// the host (None: no limit). Sending stops once it reaches zero.
    pub tsq_room: Option<u64>,
}

impl TcpOut {
    pub fn clear(&mut self) {
        self.packets.clear();
        self.delivered = 0;
        self.established = false;
        self.tsq_room = None;
    }
}

/// F-RTO (RFC 5682) while it runs after a timeout: its step and the window
/// from before the timeout, kept to undo the reduction if it proves spurious.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Frto {
    Off,
    /// Step 2: the first unacknowledged segment, up to `rexmit_end`, was
    /// retransmitted; waiting for the ACK that acknowledges new data.
    Retransmitted { rexmit_end: u64, cwnd: u64, ssthresh: u64 },
    /// Step 3: up to two new segments went out beyond `frto_recover`; the
    /// next duplicate or new ACK decides.
    NewData { cwnd: u64, ssthresh: u64 },
}

/// What an ACK tells F-RTO.
#[derive(Clone, Copy, Debug)]
struct FrtoAck {
    /// It acknowledged new data (the cumulative ACK advanced).
    advanced: bool,
    /// A duplicate ACK as RFC 5681 §2 defines it (data outstanding, no data
    /// or SYN/FIN, the same ACK number and window).
    duplicate: bool,
    /// Bytes its SACK blocks acknowledged for the first time.
    newly_sacked: u64,
    /// The highest byte its SACK blocks cover (0 if none).
    sack_end: u64,
}

/// FreeBSD's bad-retransmit window after a first timeout (tcp_timer_rexmt's
/// t_badrxtwin): the time before which the next new ACK proves the
/// retransmission needless, and the state the timeout replaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct BadRexmit {
    until: SimTime,
    cwnd: u64,
    ssthresh: u64,
    recovery: Recovery,
    timeout_recover: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Recovery {
    Open,
    /// Fast recovery until `recover` (RFC 6582 "recover", RFC 6675 RecoveryPoint).
    Fast { recover: u64 },
}

/// Fields in the order a segment reads them (`repr(C)`): a fabric's open
/// flows do not fit in the cache, and each line a segment touches is a miss
/// (docs/benchmarks.md, 2026-11-29).
#[repr(C)]
pub struct Endpoint {
    // Line 0: who it is, the negotiated options, flags and small counters
    // (read by every segment).
    pub conn: u32,
    pub host: u32,
    pub peer_host: u32,
    pub flow_hash: u32,
    /// Initial sequence number (only for the 32-bit wire view).
    pub isn: u32,
    pub mss: u32,
    dupacks: u32,
    ts_recent: u32,
    unacked_segments: u32,
    /// tcp.max_burst: segments one ACK, timer or write may still send, and
    /// the number each of them allows (u16::MAX: no limit, never counted).
    burst_left: u16,
    sack_ok: bool,
    ts_ok: bool,
    ecn_ok: bool,
    window_scale_agreed: bool,
    fin_queued: bool,
    /// A NewReno partial ACK has restarted the timer in this recovery.
    partial_ack_restarted: bool,
    rack_probe: bool,
    syn_retransmitted: bool,
    /// A segment with ACK has been sent (so a later one can repeat it).
    acked_anything: bool,
    ack_now: bool,
    /// DCTCP: CE state of the last data packet (RFC 8257 §3.2).
    ce_state: bool,
    /// Classic ECN: ECE latched until CWR arrives (RFC 3168 §6.1.3).
    ece_latched: bool,
    /// The last ACK this sender took had ECE (reported to a HULL pacer).
    last_ack_ece: bool,
    /// The last send attempt stopped at the congestion window (for
    /// tcp.cwnd_validation).
    cwnd_limited: bool,
    /// The last send attempt stopped at the TSQ limit: the world calls
    /// flush again when this side's bytes leave the host.
    pub tsq_throttled: bool,
    pub state: State,
    pub side: u8,
    /// DSCP of the packets this side sends (its flow's class; PIAS's tagging overrides it for data).
    pub dscp: u8,
    snd_scale: u8,
    rcv_scale: u8,

    // Line 1: the send sequence space (stream offsets: SYN = 0, data from 1).
    pub snd_una: u64,
    snd_nxt: u64,
    pub snd_max: u64,
    /// One past the last byte the application has written.
    app_end: u64,
    snd_wnd: u64,
    /// The segment that last set snd_wnd: its SEQ and ACK (RFC 9293 SND.WL1, SND.WL2).
    snd_wl: (u64, u64),
    /// When the last send attempt ran, unless the application has written
    /// since (then NEVER). Sending depends only on the connection's state,
    /// so at the same instant with nothing new from the application (and no
    /// TSQ limit) another attempt sends nothing.
    tried: SimTime,

    // Line 2: the receive side; line 3 its SACK blocks.
    pub rcv_nxt: u64,
    last_ack_sent: u64,
    ooo: RangeSet,
    /// A duplicate segment to report in the next ACK's first block (RFC 2883).
    dsack_block: Option<(u64, u64)>,
    /// Most recently changed out-of-order blocks, newest first (RFC 2018 §4).
    recent_blocks: [(u64, u64); MAX_SACK_BLOCKS],

    // Line 4: recovery state every ACK reads.
    recovery: Recovery,
    fin_seq: Option<u64>,
    /// When this side last sent a data segment (for the restart after idle).
    last_data_sent: Option<SimTime>,
    high_rxt: u64,
    /// F-RTO's "recover" (RFC 5682 §2.1; "RecoveryPoint" in §3.1): while it
    /// is at or above snd_una, a timeout's conventional recovery is under way.
    frto_recover: u64,

    // Lines 5-6: timers and the SACK scoreboard; line 7 the RTT estimator; then congestion control.
    pub rto_timer: Timer,
    pub delack_timer: Timer,
    scoreboard: RangeSet,
    /// RACK-TLP's state (tcp.loss_detection = "rack_tlp" with SACK agreed).
    rack: Option<Box<Rack>>,
    /// ARREAR's token state (tcp.arrear), boxed: most runs do not use it.
    arrear: Option<Box<Arrear>>,
    /// Swift's windows (tcp.cc = "swift"), boxed likewise.
    swift: Option<Box<Swift>>,
    pub rtt: RttEstimator,
    pub cc: Cc,

    // Then the counters, and what only some configurations or events use.
    pub stats: TcpStats,
    /// Send times of segments in flight (every RTT clock but `ticks`).
    send_log: SendLog,
    /// Non-timestamp RTT timing: (sequence that must be acked, tick sent).
    timed: Option<(u64, u32)>,
    /// snd_max at the last timeout: without SACK, no fast retransmit until
    /// the cumulative ACK passes it (RFC 6582 §3.2 step 1 and §4.1; FreeBSD's
    /// snd_recover, SEQ_LEQ), so that duplicate ACKs of the go-back-N resends
    /// do not start one.
    timeout_recover: u64,
    /// Stream offsets where the previous and the current write began (the
    /// message boundaries PIAS's tagging counts from).
    msg_start: [u64; 2],
    /// RACK's reordering timer, or TLP's probe timer when `rack_probe`.
    pub rack_timer: Timer,
    frto: Frto,
    bad_rexmit: Option<BadRexmit>,
    /// Retransmissions of this recovery: (start, end, snd_max when sent).
    rexmits: Vec<(u64, u64, u64)>,
    /// Retransmissions found lost, to send again.
    relost: Vec<(u64, u64)>,
    pub established_at: Option<SimTime>,
}

const SEQ_DATA_START: u64 = 1;
/// Smallest MSS accepted from a peer (Linux TCP_MIN_MSS).
const MIN_PEER_MSS: u32 = 88;

/// One segment to send: data bytes [seq, end), optionally with FIN.
#[derive(Clone, Copy)]
struct Segment {
    seq: u64,
    end: u64,
    fin: bool,
    retx: bool,
}

impl Endpoint {
    pub fn new(conn: u32, side: u8, host: u32, peer_host: u32, flow_hash: u32, isn: u32, p: &TcpParams) -> Endpoint {
        let ecn_mode = if p.cc == CongestionControl::Dctcp { EcnMode::Dctcp } else if p.ecn { EcnMode::Classic } else { EcnMode::Off };
        Endpoint {
            conn,
            side,
            host,
            peer_host,
            flow_hash,
            dscp: 0,
            isn,
            state: State::Listen,
            established_at: None,
            sack_ok: false,
            ts_ok: false,
            ecn_ok: false,
            window_scale_agreed: false,
            snd_scale: 0,
            rcv_scale: 0,
            mss: p.payload_mss(p.timestamps),
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            app_end: SEQ_DATA_START,
            msg_start: [SEQ_DATA_START; 2],
            tried: SimTime::ZERO,
            burst_left: p.max_burst,
            fin_queued: false,
            snd_wnd: 0,
            snd_wl: (0, 0),
            cc: {
                let cc = Cc::new(ecn_mode, p.ca_counting, p.dctcp_g, p.dctcp_alpha_init, p.dctcp_min_cwnd as u64);
                if p.cc == CongestionControl::Cubic { cc.with_cubic() } else { cc }
            },
            dupacks: 0,
            recovery: Recovery::Open,
            frto: Frto::Off,
            frto_recover: 0,
            timeout_recover: 0,
            partial_ack_restarted: false,
            bad_rexmit: None,
            scoreboard: RangeSet::default(),
            high_rxt: 0,
            rexmits: Vec::new(),
            relost: Vec::new(),
            rack: None,
            rack_timer: Timer::default(),
            rack_probe: false,
            syn_retransmitted: false,
            rtt: RttEstimator::new(),
            arrear: p.arrear.map(|_| Box::default()),
            swift: p.swift.as_ref().map(|sp| Box::new(Swift::new(p.initial_cwnd as f64, 0, sp))),
            timed: None,
            send_log: SendLog::default(),
            rto_timer: Timer::default(),
            rcv_nxt: 0,
            ooo: RangeSet::default(),
            recent_blocks: [(0, 0); MAX_SACK_BLOCKS],
            dsack_block: None,
            fin_seq: None,
            ts_recent: 0,
            last_ack_sent: 0,
            acked_anything: false,
            unacked_segments: 0,
            ack_now: false,
            ce_state: false,
            ece_latched: false,
            last_ack_ece: false,
            last_data_sent: None,
            cwnd_limited: false,
            tsq_throttled: false,
            delack_timer: Timer::default(),
            stats: TcpStats::default(),
        }
    }

    /// FlightSize (RFC 5681): bytes sent and not yet cumulatively acknowledged.
    pub fn flight_size(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// FlightSize less the SACKed bytes, which have left the network. Used
    /// for ssthresh on a timeout: RFC 5681 would halve everything above
    /// snd_una, and after a long SACK recovery whose retransmission was lost
    /// that is everything sent meanwhile (thousands of segments). Linux
    /// halves cwnd instead; this keeps to the RFC's intent.
    /// What a multiplicative decrease halves (`tcp.ssthresh_basis`): RFC
    /// 5681's FlightSize (`flight`), RFC 6675's pipe (what ns-3 uses), cwnd
    /// (Linux Reno), or FreeBSD's cwnd, or min(snd_wnd, cwnd) at a timeout.
    fn halving_basis(&self, p: &TcpParams, flight: u64, timeout: bool) -> u64 {
        match p.ssthresh_basis {
            SsthreshBasis::Flightsize => flight,
            SsthreshBasis::Pipe if self.sack_ok && self.state == State::Established => self.pipe(p),
            SsthreshBasis::Pipe => flight,
            SsthreshBasis::Cwnd => self.cc.cwnd,
            SsthreshBasis::Freebsd => {
                // Doubled whole segments, so that the halving gives whole segments.
                let w = if timeout { self.cc.cwnd.min(self.snd_wnd) } else { self.cc.cwnd };
                w / (2 * self.mss as u64) * 2 * self.mss as u64
            }
        }
    }

    fn flight_in_network(&self) -> u64 {
        self.flight_size() - self.scoreboard.covered_in(self.snd_una, self.snd_max)
    }

    // ---- application interface ----------------------------------------------

    /// Active open: send the SYN.
    pub fn open(&mut self, now: SimTime, p: &TcpParams, out: &mut TcpOut) {
        self.state = State::SynSent;
        self.snd_una = 0;
        self.snd_nxt = 1;
        self.snd_max = 1;
        self.send_syn(now, p, out, false);
    }

    /// The application writes `bytes` more (and optionally closes after them).
    pub fn write(&mut self, bytes: u64, close: bool, p: &TcpParams) {
        debug_assert!(!self.fin_queued, "write after close");
        self.burst_left = p.max_burst;
        self.msg_start = [self.msg_start[1], self.app_end];
        self.app_end = self.app_end.saturating_add(bytes);
        self.fin_queued |= close;
        self.tried = SimTime::NEVER;
    }

    // ---- packet construction ---------------------------------------------------

    fn base_packet(&self, now: SimTime, p: &TcpParams) -> Packet {
        let mut pkt = Packet {
            conn: self.conn,
            side: self.side,
            src_host: self.host,
            dst_host: self.peer_host,
            flow_hash: self.flow_hash,
            dscp: self.dscp,
            got_ecn_echo: self.last_ack_ece,
            ..Default::default()
        };
        if self.ts_ok {
            pkt.has_ts = true;
            pkt.ts_val = self.arrear.as_ref().map_or_else(|| p.rtt.tick(now), |a| a.token);
            pkt.ts_ecr = self.ts_recent;
        }
        pkt
    }

    /// ARREAR: a segment that elicits an immediate reply (a SYN, data, a
    /// FIN) starts a measurement with a new token.
    fn arrear_stamp(&mut self, now: SimTime, pkt: &mut Packet, p: &TcpParams) {
        if let (Some(a), Some(ap)) = (&mut self.arrear, &p.arrear) {
            pkt.ts_val = a.stamp(now, true, self.rtt.srtt, ap);
        }
    }

    /// The RTT sample an echoed timestamp gives: clock ticks, or with
    /// ARREAR the measurement its token completes (if any).
    fn ts_sample(&mut self, now: SimTime, tsecr: u32, p: &TcpParams) -> Option<Dur> {
        match (&mut self.arrear, &p.arrear) {
            (Some(a), Some(ap)) => a.pair(now, tsecr, ap),
            _ => p.rtt.sample_from_ticks(now, tsecr),
        }
    }

    /// The tick clock's sample from an ACK of new data: RFC 7323 §4.1 with
    /// timestamps, else the timed segment.
    #[inline(always)]
    fn tick_rtt_sample(&mut self, now: SimTime, pkt: &Packet, p: &TcpParams) -> Option<Dur> {
        if self.ts_ok && pkt.has_ts {
            return self.ts_sample(now, pkt.ts_ecr, p);
        }
        match self.timed {
            Some((seq, t)) if pkt.ack >= seq => {
                self.timed = None;
                p.rtt.sample_from_ticks(now, t)
            }
            _ => None,
        }
    }

    /// A logging clock's sample from any ACK (`linux`, `ns3`, `ns3_legacy`).
    #[inline(never)]
    fn logged_rtt_sample(&mut self, now: SimTime, pkt: &Packet, first_new_sack: Option<u64>, p: &TcpParams) -> Option<Dur> {
        let ts = (self.ts_ok && pkt.has_ts && pkt.ack > self.snd_una).then_some(pkt.ts_ecr);
        let acked = self.send_log.acked(pkt.ack);
        let sacked_at = first_new_sack.and_then(|x| self.send_log.clean_send_time(x));
        clock::sample(&p.rtt, now, acked, sacked_at, ts)
    }

    fn window_field(&self, p: &TcpParams, syn: bool) -> u16 {
        let shift = if syn { 0 } else { self.rcv_scale };
        (p.rcv_buffer >> shift).min(65535) as u16
    }

    /// Attach ACK fields (ack number, window, ECE, SACK blocks) to `pkt`.
    #[inline(always)]
    fn fill_ack(&mut self, now: SimTime, pkt: &mut Packet, p: &TcpParams) {
        pkt.flags |= flags::ACK;
        pkt.ack = self.rcv_nxt;
        if p.swift.is_some() && pkt.has_ts {
            // Swift: how long the segment whose stamp this ACK echoes
            // (TS.Recent) was held here, its endpoint delay (§3.1). A held
            // ACK's timer was armed when that segment arrived.
            let since = self.delack_timer.deadline.map_or(Dur::ZERO, |d| now.since(SimTime(d.ps() - p.delack_timeout.ps())));
            pkt.set_echo_hold_ns((since.ps() / 1_000).min(u32::MAX as u64) as u32);
        }
        pkt.window = self.window_field(p, false);
        if p.hscc_shim {
            pkt.reserved = self.rcv_scale; // seed 002's tcp_scale.c (mechanisms.md §1.3)
        }
        let ece = match self.cc.ecn_mode() {
            _ if !self.ecn_ok => false,
            EcnMode::Dctcp => self.ce_state,
            EcnMode::Classic => self.ece_latched,
            EcnMode::Off => false,
        };
        if ece {
            pkt.flags |= flags::ECE;
        }
        if self.sack_ok && (!self.ooo.is_empty() || self.dsack_block.is_some()) {
            self.fill_sack(pkt);
        }
        self.last_ack_sent = self.rcv_nxt;
        self.acked_anything = true;
        self.unacked_segments = 0;
        self.ack_now = false;
        self.delack_timer.cancel();
    }

    /// SACK blocks, most recent first (RFC 2018 §4), as many as fit; a
    /// duplicate segment first (DSACK, RFC 2883 §4), followed by the block
    /// that holds it if it lies above the cumulative ACK.
    #[inline(never)]
    fn fill_sack(&mut self, pkt: &mut Packet) {
        let max = if self.ts_ok { MAX_SACK_BLOCKS_TS } else { MAX_SACK_BLOCKS };
        let dup = self.dsack_block.take();
        let holder = dup.and_then(|(a, b)| self.recent_blocks.iter().position(|&(x, y)| x < y && x <= a && b <= y));
        if let Some((a, b)) = dup {
            pkt.push_sack(a, b);
            if let Some(i) = holder {
                let (x, y) = self.recent_blocks[i];
                pkt.push_sack(x, y);
            }
        }
        for (i, &(a, b)) in self.recent_blocks.iter().enumerate() {
            if pkt.nsack as usize == max || a >= b {
                break;
            }
            if Some(i) != holder {
                pkt.push_sack(a, b);
            }
        }
    }

    fn send_syn(&mut self, now: SimTime, p: &TcpParams, out: &mut TcpOut, synack: bool) {
        let mut pkt = self.base_packet(now, p);
        pkt.seq = 0;
        pkt.flags = flags::SYN;
        pkt.syn_mss = p.mss_option;
        pkt.window = self.window_field(p, true);
        if synack {
            // Options only if the peer offered them (RFC 7323, 2018).
            pkt.has_ts = self.ts_ok;
            pkt.ts_val = p.rtt.tick(now);
            pkt.ts_ecr = self.ts_recent;
            pkt.syn_sack_perm = self.sack_ok;
            pkt.syn_wscale = WScale::new(self.window_scale_agreed.then_some(self.rcv_scale));
            if self.ecn_ok {
                pkt.flags |= flags::ECE;
            }
            pkt.flags |= flags::ACK;
            pkt.ack = self.rcv_nxt;
            // RFC 7323 §4.3's Last.ACK.sent: the first data segment's TSval
            // is then the one echoed (not the SYN's).
            self.last_ack_sent = self.rcv_nxt;
        } else {
            pkt.has_ts = p.timestamps;
            pkt.ts_val = p.rtt.tick(now);
            pkt.ts_ecr = 0;
            pkt.syn_sack_perm = p.sack;
            pkt.syn_wscale = WScale::new(p.window_scale.then(|| p.own_wscale()));
            if p.ecn {
                pkt.flags |= flags::ECE | flags::CWR;
            }
        }
        if pkt.has_ts {
            self.arrear_stamp(now, &mut pkt, p);
        }
        // Seed 004 §6.3.3: junk on the SYN, which the peer's on_syn ignores.
        pkt.payload = p.arrear.map_or(0, |a| a.syn_data);
        if self.cc.ecn_mode() == EcnMode::Dctcp && p.ecn {
            pkt.ecn = Ecn::Ect0; // DCTCP (as in Linux) sends every packet ECT
        }
        if self.timed.is_none() && !self.syn_retransmitted {
            self.timed = Some((1, p.rtt.tick(now)));
        }
        if p.rtt.clock != RttClock::Ticks {
            self.send_log.sent(0, 1, now, self.syn_retransmitted);
        }
        self.stats.segments_sent += 1;
        out.packets.push(pkt);
        self.arm_rto_if_idle(now, p);
    }

    // ---- timers --------------------------------------------------------------------

    fn arm_rto_if_idle(&mut self, now: SimTime, p: &TcpParams) {
        if self.rto_timer.deadline.is_none() {
            self.rto_timer.arm(p.rtt.deadline(now, self.rtt.rto(&p.rtt)));
        }
    }

    #[inline(always)]
    fn restart_rto(&mut self, now: SimTime, p: &TcpParams) {
        if self.snd_una >= self.snd_max {
            self.rto_timer.cancel();
        } else {
            self.rto_timer.arm(p.rtt.deadline(now, self.rtt.rto(&p.rtt)));
        }
    }

    /// The timer of one kind.
    #[inline]
    pub fn timer(&mut self, kind: TimerKind) -> &mut Timer {
        match kind {
            TimerKind::Rto => &mut self.rto_timer,
            TimerKind::DelAck => &mut self.delack_timer,
            TimerKind::Rack => &mut self.rack_timer,
        }
    }

    pub fn on_timer(&mut self, now: SimTime, kind: TimerKind, p: &TcpParams, out: &mut TcpOut) {
        self.burst_left = p.max_burst;
        match kind {
            TimerKind::DelAck => {
                if self.state == State::Established && (self.last_ack_sent < self.rcv_nxt || self.unacked_segments > 0) {
                    self.send_pure_ack(now, p, out);
                }
            }
            TimerKind::Rto => self.on_rto(now, p, out),
            TimerKind::Rack if self.rack_probe => self.send_probe(now, p, out),
            TimerKind::Rack => self.rack_reorder_timeout(now, p, out),
        }
    }

    fn on_rto(&mut self, now: SimTime, p: &TcpParams, out: &mut TcpOut) {
        if self.rack_probe && self.rack_timer.deadline.is_some_and(|d| d <= now) {
            // RFC 8985 §7.2: a probe due when the RTO is sends instead of it.
            return self.send_probe(now, p, out);
        }
        if self.swift.is_some() && self.state == State::Established && self.snd_una == self.snd_max {
            // Swift's pacing wake (sync_swift_window): nothing in flight times out.
            self.sync_swift_window(now);
            return self.try_send(now, p, out);
        }
        self.stats.timeouts += 1;
        self.rtt.backoff = (self.rtt.backoff + 1).min(62);
        self.timed = None; // Karn
        match self.state {
            State::SynSent => {
                self.syn_retransmitted = true;
                self.send_syn(now, p, out, false);
                return;
            }
            State::SynRcvd => {
                self.syn_retransmitted = true;
                self.send_syn(now, p, out, true);
                return;
            }
            State::Listen => return,
            State::Established => {}
        }
        let stalled = self.cc.cwnd < self.mss as u64 && self.app_end > self.snd_una;
        if self.snd_una >= self.snd_max && !stalled {
            return;
        }
        if p.rto_forgets_sack {
            // FreeBSD's tcp_timer_rexmt: tcp_free_sackholes() first.
            self.scoreboard.clear();
        }
        if p.frto {
            self.frto_timeout();
        }
        if let Some(rack) = &mut self.rack {
            // RFC 8985 §6.3 (RACK_mark_losses_on_RTO); the probe episode ends.
            let reo_wnd = rack.reo_wnd(true, p.dupthresh, self.rtt.srtt);
            rack.mark_losses_on_rto(now, self.snd_una, reo_wnd);
            rack.tlp_init();
            self.rack_timer.cancel();
        }
        // FreeBSD: a first timeout opens a window of SRTT/2. Seed 004's stack
        // keeps it in sbintime on its high-resolution clock (§5.2), so it is
        // real time here, whatever the RTT clock's resolution.
        self.bad_rexmit = (p.bad_rexmit_undo && self.rtt.backoff == 1).then(|| BadRexmit {
            until: now + Dur(self.rtt.srtt.ps() / 2),
            cwnd: self.cc.cwnd,
            ssthresh: self.cc.ssthresh,
            recovery: self.recovery,
            timeout_recover: self.timeout_recover,
        });
        // RFC 5681 (4): ssthresh = max(FlightSize/2, 2*SMSS); cwnd = 1 SMSS. When
        // the timer fires again for data it already resent, ssthresh is held (§3.1).
        let flight = self.flight_in_network();
        let first = self.rtt.backoff == 1;
        self.cc.on_timeout(self.halving_basis(p, flight, true), self.mss as u64, self.snd_max, first);
        if let (Some(s), Some(sp)) = (&mut self.swift, &p.swift) {
            s.on_timeout(now, sp);
            self.sync_swift_window(now);
        }
        self.timeout_recover = self.snd_max;
        self.recovery = Recovery::Open;
        self.clear_recovery_state();
        self.relost.clear();
        self.dupacks = 0;
        self.high_rxt = self.snd_una;
        // Go back N from the first unacknowledged byte (SACKed ranges are skipped).
        self.snd_nxt = self.snd_una;
        self.rto_timer.arm(p.rtt.deadline(now, self.rtt.rto(&p.rtt)));
        self.try_send(now, p, out);
    }

    // ---- receiving -------------------------------------------------------------------

    #[inline(always)]
    pub fn on_packet(&mut self, now: SimTime, pkt: &Packet, p: &TcpParams, out: &mut TcpOut) {
        self.burst_left = p.max_burst;
        if pkt.has(flags::SYN) {
            self.on_syn(now, pkt, p, out);
            return;
        }
        if self.state == State::SynRcvd && pkt.has(flags::ACK) && pkt.ack >= 1 {
            self.become_established(now, out);
            self.snd_una = 1;
            self.snd_nxt = self.snd_nxt.max(1);
            self.handshake_rtt_sample(now, pkt, p);
            self.init_cwnd(p);
            self.rto_timer.cancel();
        }
        if self.state != State::Established {
            return;
        }
        // RFC 7323 §4.3: remember the peer's timestamp to echo.
        if self.ts_ok && pkt.has_ts && pkt.seq <= self.last_ack_sent && (pkt.ts_val.wrapping_sub(self.ts_recent) as i32) >= 0 {
            self.ts_recent = pkt.ts_val;
        }
        if pkt.payload > 0 || pkt.has(flags::FIN) {
            self.receive_data(now, pkt, p, out);
        }
        if pkt.has(flags::ACK) {
            self.on_ack(now, pkt, p, out);
        }
    }

    fn become_established(&mut self, now: SimTime, out: &mut TcpOut) {
        self.state = State::Established;
        self.established_at = Some(now);
        out.established = true;
    }

    /// The SYN (or SYN-ACK) was answered: one RTT sample, unless it was
    /// retransmitted (Karn's rule, applied even with timestamps: a
    /// conservative choice of ours).
    fn handshake_rtt_sample(&mut self, now: SimTime, pkt: &Packet, p: &TcpParams) {
        let timed = self.timed.take();
        let syn = self.send_log.acked(1);
        if self.syn_retransmitted {
            self.rtt.after_syn_timeout(&p.rtt);
            return;
        }
        let ts = self.ts_ok && pkt.has_ts;
        let r = match p.rtt.clock {
            RttClock::Ticks if ts => self.ts_sample(now, pkt.ts_ecr, p),
            RttClock::Ticks => timed.and_then(|(_, t)| p.rtt.sample_from_ticks(now, t)),
            _ => clock::sample(&p.rtt, now, syn, None, ts.then_some(pkt.ts_ecr)),
        };
        if let Some(r) = r {
            self.rtt.sample(r, &p.rtt, 1, 1);
        }
    }

    /// RFC 5681 §4.1: new data after an idle period longer than the RTO
    /// starts from the restart window, min(IW, cwnd).
    fn restart_if_idle(&mut self, now: SimTime, p: &TcpParams) {
        let idle = self.snd_una == self.snd_max && self.snd_max < self.app_end && self.recovery == Recovery::Open;
        if !(p.restart_after_idle && idle) || self.swift.is_some() {
            return; // Swift has no slow start to restart
        }
        if let Some(last) = self.last_data_sent {
            if now.since(last) > self.rtt.rto(&p.rtt) {
                self.cc.restart(p.initial_cwnd as u64 * self.mss as u64);
            }
        }
    }

    fn init_cwnd(&mut self, p: &TcpParams) {
        // RFC 5681 §3.1: if the SYN or SYN-ACK was retransmitted, IW = 1 segment.
        let iw = if self.syn_retransmitted { 1 } else { p.initial_cwnd as u64 };
        self.cc.init(iw * self.mss as u64);
        // RFC 5681 §3.1: "arbitrarily high" unless the scenario sets one.
        if let Some(n) = p.initial_ssthresh {
            self.cc.ssthresh = n as u64 * self.mss as u64;
        }
        if let (Some(s), Some(sp)) = (&mut self.swift, &p.swift) {
            s.init(iw as f64, sp);
            self.sync_swift_window(SimTime::ZERO);
        }
    }

    /// Swift owns the window (tcp/swift.rs): after anything that moved it,
    /// cwnd is Swift's, and ssthresh with it (there is no slow start).
    /// Below one packet, one segment may be in flight (a window of one
    /// segment), and with none in flight the window stays shut (one byte:
    /// less than a segment sends nothing) until the pacing delay since the
    /// last packet has passed; the retransmission timer, idle then, wakes
    /// the sender (`on_rto`).
    fn sync_swift_window(&mut self, now: SimTime) {
        let Some(s) = &self.swift else { return };
        match s.paced_until(self.last_data_sent) {
            Some(t) if now < t && self.snd_una == self.snd_max => {
                self.cc.cwnd = 1;
                self.rto_timer.arm(t);
            }
            _ => self.cc.cwnd = s.window_bytes(self.mss as u64),
        }
        self.cc.ssthresh = self.cc.cwnd;
    }

    /// Swift: the switches on the path to the peer (the paper reads them
    /// from the TTL; the world counts them on the route).
    pub fn set_path_hops(&mut self, hops: u32) {
        if let Some(s) = &mut self.swift {
            s.hops = hops;
        }
    }

    fn negotiate(&mut self, pkt: &Packet, p: &TcpParams) {
        self.ts_ok = p.timestamps && pkt.has_ts;
        self.sack_ok = p.sack && pkt.syn_sack_perm;
        // RACK-TLP needs SACK (RFC 8985 §4); without it, DupThresh it is.
        self.rack = (p.rack_tlp && self.sack_ok).then(|| Box::new(Rack::new()));
        self.window_scale_agreed = p.window_scale && pkt.syn_wscale.get().is_some();
        if self.window_scale_agreed {
            self.snd_scale = pkt.syn_wscale.get().expect("agreed").min(14);
            self.rcv_scale = p.own_wscale();
        }
        // A peer MSS below Linux's floor (TCP_MIN_MSS = 88) is raised to it,
        // so a segment always carries data after its options.
        let peer_mss = (pkt.syn_mss as u32).max(MIN_PEER_MSS);
        let our = p.mss_option as u32;
        self.mss = our.min(peer_mss) - if self.ts_ok { OPT_TIMESTAMPS as u32 } else { 0 };
        self.snd_wnd = pkt.window as u64; // SYN windows are never scaled
        if self.ts_ok {
            self.ts_recent = pkt.ts_val;
        }
    }

    fn on_syn(&mut self, now: SimTime, pkt: &Packet, p: &TcpParams, out: &mut TcpOut) {
        match self.state {
            State::Listen if !pkt.has(flags::ACK) => {
                self.negotiate(pkt, p);
                self.ecn_ok = p.ecn && pkt.has(flags::ECE) && pkt.has(flags::CWR);
                self.rcv_nxt = 1;
                self.snd_una = 0;
                self.snd_nxt = 1;
                self.snd_max = 1;
                self.state = State::SynRcvd;
                self.send_syn(now, p, out, true);
            }
            State::SynRcvd if !pkt.has(flags::ACK) => {
                // Retransmitted SYN: answer again.
                self.send_syn(now, p, out, true);
            }
            State::SynSent if pkt.has(flags::ACK) && pkt.ack == 1 => {
                self.negotiate(pkt, p);
                self.ecn_ok = p.ecn && pkt.has(flags::ECE) && !pkt.has(flags::CWR);
                self.rcv_nxt = 1;
                self.snd_una = 1;
                self.handshake_rtt_sample(now, pkt, p);
                self.init_cwnd(p);
                self.rto_timer.cancel();
                self.become_established(now, out);
                // The handshake's third segment is a pure ACK; data follows.
                self.send_pure_ack(now, p, out);
            }
            State::Established if pkt.has(flags::ACK) => {
                // Retransmitted SYN-ACK (our ACK was lost): re-ACK it.
                self.send_pure_ack(now, p, out);
            }
            _ => {}
        }
    }

    #[inline(always)]
    fn receive_data(&mut self, now: SimTime, pkt: &Packet, p: &TcpParams, out: &mut TcpOut) {
        // RFC 9293 §3.10.7.4: data beyond the receive window is not
        // acceptable; answer with an ACK and drop it (trim what overlaps).
        let wnd_end = self.rcv_nxt.saturating_add(p.rcv_buffer);
        let start = pkt.seq;
        if start >= wnd_end {
            self.ack_now = true;
            return;
        }
        let full_end = pkt.seq.saturating_add(pkt.payload as u64);
        let end = full_end.min(wnd_end);
        if pkt.has(flags::FIN) && end == full_end {
            self.fin_seq = Some(end);
        }
        // ECN feedback state (before the ACK for this packet is decided).
        let ce = pkt.ecn == Ecn::Ce;
        if ce {
            self.stats.ce_received += 1;
        }
        if self.ecn_ok {
            match self.cc.ecn_mode() {
                EcnMode::Dctcp => {
                    if ce != self.ce_state {
                        // RFC 8257 §3.2: on a CE state change with an ACK held
                        // back, send that ACK at once with the old state.
                        if self.unacked_segments > 0 {
                            self.send_pure_ack(now, p, out);
                        }
                        self.ce_state = ce;
                    }
                }
                EcnMode::Classic => {
                    if pkt.has(flags::CWR) {
                        self.ece_latched = false;
                    }
                    if ce {
                        self.ece_latched = true;
                    }
                }
                EcnMode::Off => {}
            }
        }

        let had_holes = !self.ooo.is_empty();
        let before = self.rcv_nxt;
        let duplicate = (pkt.payload > 0 && end <= self.rcv_nxt) || (start > self.rcv_nxt && self.ooo.covers(start, end));
        if duplicate {
            self.stats.duplicate_segments_received += 1;
            self.ack_now = true;
            if p.dsack && self.sack_ok && pkt.payload > 0 {
                self.dsack_block = Some((start, end));
            }
        } else if start <= self.rcv_nxt {
            self.rcv_nxt = self.rcv_nxt.max(end);
            // Pull in out-of-order data that is now contiguous.
            while let Some((a, b)) = self.ooo.first() {
                if a > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(b);
                self.ooo.remove_below(b);
            }
            self.ooo.remove_below(self.rcv_nxt);
            self.prune_recent_blocks();
            if had_holes {
                self.ack_now = true;
            }
        } else if pkt.payload > 0 {
            let (_, block) = self.ooo.insert(start, end);
            self.note_recent_block(block);
            self.ack_now = true;
            if p.swift.is_some() && pkt.has_ts {
                // Swift's ACK echoes each packet's own stamp (§3.1), where
                // RFC 7323's TS.Recent takes only in-order ones; answered at
                // once, it was not held.
                self.ts_recent = pkt.ts_val;
                self.delack_timer.cancel();
            }
        }
        let delivered = self.rcv_nxt - before;
        if let Some(f) = self.fin_seq {
            if self.rcv_nxt == f {
                self.rcv_nxt = f + 1; // the FIN occupies one sequence number
                self.ack_now = true;
            }
        }
        out.delivered += delivered;
        if pkt.payload > 0 {
            self.unacked_segments += 1;
            if self.unacked_segments >= p.delack_count || !p.delack {
                self.ack_now = true;
            } else if self.delack_timer.deadline.is_none() {
                self.delack_timer.arm(now + p.delack_timeout);
            }
        }
    }

    fn note_recent_block(&mut self, block: (u64, u64)) {
        // Move the block containing the newest segment to the front (RFC 2018 §4).
        let mut blocks = [(0u64, 0u64); MAX_SACK_BLOCKS];
        blocks[0] = block;
        let mut n = 1;
        for &(a, b) in self.recent_blocks.iter() {
            if a >= b || n == MAX_SACK_BLOCKS {
                continue;
            }
            // Skip blocks merged into the new one.
            if a >= block.0 && b <= block.1 {
                continue;
            }
            blocks[n] = (a, b);
            n += 1;
        }
        self.recent_blocks = blocks;
    }

    fn prune_recent_blocks(&mut self) {
        let mut blocks = [(0u64, 0u64); MAX_SACK_BLOCKS];
        let mut n = 0;
        for &(a, b) in self.recent_blocks.iter() {
            if a < b && b > self.rcv_nxt && self.ooo.covers(a.max(self.rcv_nxt), b) {
                blocks[n] = (a.max(self.rcv_nxt), b);
                n += 1;
            }
        }
        self.recent_blocks = blocks;
    }

    #[inline(always)]
    fn on_ack(&mut self, now: SimTime, pkt: &Packet, p: &TcpParams, out: &mut TcpOut) {
        let ack = pkt.ack;
        if ack > self.snd_max {
            // Acknowledges something never sent (RFC 9293 §3.10.7.4): answer, drop.
            self.send_pure_ack(now, p, out);
            return;
        }
        let ece = self.ecn_ok && pkt.has(flags::ECE);
        self.last_ack_ece = ece;
        let mut exited_recovery = false;
        let old_wnd = self.snd_wnd;
        let snd_una_before = self.snd_una;
        // RFC 9293 §3.10.7.4: only a segment no older than the last one that
        // set the window may set it (SND.WL1, SND.WL2).
        let (wl1, wl2) = self.snd_wl;
        if ack >= self.snd_una && (wl1 < pkt.seq || (wl1 == pkt.seq && wl2 <= ack)) {
            self.snd_wnd = (pkt.window as u64) << self.snd_scale;
            self.snd_wl = (pkt.seq, ack);
        }
        let (mut newly_sacked, mut sack_end) = (0, 0);
        // The lowest newly SACKed byte (the `linux` clock may time its segment).
        let mut first_new_sack: Option<u64> = None;
        if self.sack_ok {
            for (a, b) in pkt.sack_blocks() {
                let a = a.max(ack);
                let b = b.min(self.snd_max);
                if a < b {
                    if p.rtt.clock == RttClock::Linux {
                        let x = match self.scoreboard.next_covered_from(a) {
                            Some((s, e)) if s <= a => e,
                            _ => a,
                        };
                        if x < b {
                            first_new_sack = Some(first_new_sack.map_or(x, |f| f.min(x)));
                        }
                    }
                    newly_sacked += self.scoreboard.insert(a, b).0;
                    sack_end = sack_end.max(b);
                }
            }
        }
        let mss = self.mss as u64;
        if newly_sacked > 0 && !self.rexmits.is_empty() {
            self.find_lost_retransmits(ack);
        }
        if p.rtt.clock != RttClock::Ticks {
            if let Some(r) = self.logged_rtt_sample(now, pkt, first_new_sack, p) {
                self.rtt.sample(r, &p.rtt, ack.max(self.snd_una), self.snd_max);
            }
        }
        if ack > self.snd_una {
            let acked = ack - self.snd_una;
            // FreeBSD's bad-retransmit check comes first, on the first new
            // ACK after a first timeout (the window closes with it).
            if let Some(b) = self.bad_rexmit {
                self.bad_rexmit = None;
                if now < b.until {
                    // CC_RTO_ERR: the window and any interrupted fast recovery
                    // return, and sending resumes where it left off: a second
                    // lost segment now waits for the next timeout.
                    self.stats.spurious_timeouts += 1;
                    self.cc.cwnd = b.cwnd;
                    self.cc.ssthresh = b.ssthresh;
                    self.recovery = b.recovery;
                    self.timeout_recover = b.timeout_recover;
                    self.snd_nxt = self.snd_max;
                }
            }
            if p.rtt.clock == RttClock::Ticks {
                if let Some(r) = self.tick_rtt_sample(now, pkt, p) {
                    self.rtt.sample(r, &p.rtt, ack, self.snd_max);
                }
            }
            if p.rto_backoff_reset == RtoBackoffReset::NewAck {
                self.rtt.backoff = 0;
            }
            self.snd_una = ack;
            if self.snd_nxt < ack {
                self.snd_nxt = ack;
            }
            self.scoreboard.remove_below(ack);
            if self.high_rxt < ack {
                self.high_rxt = ack;
            }
            self.dupacks = 0;
            self.cc.on_ack_bytes(acked, ece, self.snd_una, self.snd_max);
            let mut restart_timer = true;
            match self.recovery {
                Recovery::Fast { recover } if ack >= recover => {
                    // Full acknowledgement: leave recovery (RFC 6582 §3.2 (3), RFC 6675 §5).
                    self.recovery = Recovery::Open;
                    self.clear_recovery_state();
                    self.cc.exit_recovery(self.flight_size(), mss, p.recovery_exit);
                    exited_recovery = true;
                }
                Recovery::Fast { .. } => {
                    if !self.sack_ok {
                        // NewReno partial ACK (RFC 6582 §3.2 (5)): retransmit the
                        // next hole, deflate by the amount acked, add back one SMSS.
                        self.retransmit_at(now, self.snd_una, p, out);
                        self.cc.partial_ack_deflate(acked, mss);
                        // RFC 6582 §3.2 step 5, "Impatient" (§4): the first partial ACK only.
                        restart_timer = !self.partial_ack_restarted;
                        self.partial_ack_restarted = true;
                    }
                }
                Recovery::Open => {
                    // No growth on an ECN-Echo, nor until the window of the
                    // last ECN reduction is acknowledged (CWR state, as Linux
                    // and ns-3), unless tcp.grow_in_cwr (htsim).
                    let cwr = ece || self.cc.in_cwr(self.snd_una);
                    if (p.grow_in_cwr || !cwr) && self.may_grow(p, self.snd_max - snd_una_before) {
                        self.cc.grow(acked, mss, now, self.rtt.srtt);
                    }
                }
            }
            if restart_timer {
                self.restart_rto(now, p);
            }
        } else if ack == self.snd_una
            && self.snd_una < self.snd_max
            && pkt.payload == 0
            && !pkt.has(flags::FIN)
            && (if self.sack_ok { newly_sacked > 0 } else { self.snd_wnd == old_wnd })
        {
            self.dupacks += 1;
            match self.recovery {
                Recovery::Open => {
                    // Without SACK, a duplicate ACK of a go-back-N resend cannot be told from
                    // one of new data (RFC 6582 §4.1). With SACK it can (it SACKs nothing
                    // new), and SACK recovery is how the scoreboard repairs what the
                    // timeout's go-back-N loses again (Linux does that in its Loss
                    // state), so RFC 6675 §5.1's RecoveryPoint is not applied.
                    let after_timeout = self.sack_ok || self.snd_una > self.timeout_recover;
                    if self.rack.is_none() && after_timeout && (self.dupacks >= p.dupthresh || (self.sack_ok && self.is_lost(self.snd_una, p))) {
                        self.enter_recovery(now, p, out);
                    }
                }
                Recovery::Fast { .. } => {
                    if !self.sack_ok {
                        self.cc.inflate(mss); // RFC 6582 §3.2 (4)
                    }
                }
            }
        }
        if self.rack.is_some() {
            self.rack_on_ack(now, pkt, snd_una_before, exited_recovery, p, out);
        }
        if self.frto != Frto::Off {
            let duplicate = ack == snd_una_before
                && snd_una_before < self.snd_max
                && pkt.payload == 0
                && !pkt.has(flags::SYN | flags::FIN)
                && self.snd_wnd == old_wnd;
            self.frto_ack(FrtoAck { advanced: ack > snd_una_before, duplicate, newly_sacked, sack_end }, mss);
        }
        if self.swift.is_some() {
            self.swift_on_ack(now, pkt, (self.snd_una - snd_una_before) + newly_sacked, p);
        }
        // ECN-Echo: reduce at most once per window, not during loss recovery.
        if ece && self.recovery == Recovery::Open && self.cc.on_ece(self.snd_una, self.snd_max, self.halving_basis(p, self.flight_size(), false), mss) {
            self.stats.ecn_reductions += 1;
        }
        // Trace the data sender only: an ACK that acknowledged something or
        // arrived while data is outstanding (not the acks a pure receiver
        // finds on incoming data segments).
        if out.trace_enabled && (ack > snd_una_before || self.snd_una < self.snd_max) {
            out.trace.push(TraceRow {
                time: now,
                conn: self.conn,
                side: self.side,
                cwnd: self.cc.cwnd,
                ssthresh: self.cc.ssthresh,
                srtt: self.rtt.srtt,
                rttvar: self.rtt.rttvar,
                rto: self.rtt.rto(&p.rtt),
                in_flight: self.flight_size(),
                snd_wnd: self.snd_wnd,
                acked: self.snd_una.saturating_sub(SEQ_DATA_START),
                alpha: if self.cc.ecn_mode() == EcnMode::Dctcp { self.cc.alpha } else { f64::NAN },
            });
        }
        self.try_send(now, p, out);
    }

    // ---- loss recovery (RFC 6675 / RFC 6582) -------------------------------------

    /// Lowest sequence number that is *not* deemed lost: every un-SACKed byte
    /// below it is lost (RFC 6675 IsLost: more than (DupThresh-1)*SMSS bytes,
    /// or DupThresh discontiguous ranges, SACKed above it).
    fn lost_boundary(&self, p: &TcpParams) -> u64 {
        if let Some(rack) = &self.rack {
            return rack.lost_below();
        }
        let threshold = (p.dupthresh as u64 - 1) * self.mss as u64;
        let mut acc = 0u64;
        let mut by_bytes = 0u64;
        for &(a, b) in self.scoreboard.iter().rev() {
            if acc + (b - a) > threshold {
                by_bytes = b - (threshold - acc);
                break;
            }
            acc += b - a;
        }
        let by_count = if self.scoreboard.len() >= p.dupthresh as usize {
            self.scoreboard.iter().rev().nth(p.dupthresh as usize - 1).map(|r| r.0).unwrap_or(0)
        } else {
            0
        };
        by_bytes.max(by_count)
    }

    fn is_lost(&self, seq: u64, p: &TcpParams) -> bool {
        seq < self.lost_boundary(p)
    }

    /// RFC 6675 SetPipe, in bytes.
    fn pipe(&self, p: &TcpParams) -> u64 {
        let lost = self.lost_boundary(p).max(self.snd_una).min(self.snd_max);
        let rexmitted_end = self.high_rxt.clamp(self.snd_una, self.snd_max);
        let unsacked = |a: u64, b: u64| (b - a) - self.scoreboard.covered_in(a, b);
        // Retransmissions found lost have left the network.
        let relost: u64 = self.relost.iter().map(|&(a, b)| unsacked(a.max(self.snd_una), b.max(a.max(self.snd_una)))).sum();
        (unsacked(self.snd_una, rexmitted_end) + unsacked(lost, self.snd_max)).saturating_sub(relost)
    }

    /// Lost retransmissions (as Linux's tcp_mark_lost_retrans before RACK):
    /// on a FIFO path, once data first sent after a retransmission has been
    /// SACKed, the retransmission should have arrived before it; if it is
    /// still missing, it was lost too and is sent again, instead of waiting
    /// for the RTO that RFC 6675 alone would need.
    fn find_lost_retransmits(&mut self, ack: u64) {
        let highest_sacked = self.scoreboard.iter().next_back().map_or(0, |r| r.1);
        let mut rexmits = std::mem::take(&mut self.rexmits);
        rexmits.retain(|&(a, b, sent_before)| {
            if b <= ack.max(self.snd_una) || self.scoreboard.covers(a.max(ack), b) {
                false // delivered
            } else if highest_sacked > sent_before {
                self.relost.push((a, b));
                self.stats.lost_retransmissions += 1;
                false
            } else {
                true
            }
        });
        self.rexmits = rexmits;
    }

    fn clear_recovery_state(&mut self) {
        self.rexmits.clear();
        self.relost.clear();
    }

    fn enter_recovery(&mut self, now: SimTime, p: &TcpParams, out: &mut TcpOut) {
        match &mut self.rack {
            Some(rack) => {
                rack.tlp_init();
                rack.cut_for_relost = false;
                if self.rack_probe {
                    self.rack_probe = false;
                    self.rack_timer.cancel();
                }
            }
            None => self.clear_recovery_state(),
        }
        self.partial_ack_restarted = false;
        self.stats.fast_retransmits += 1;
        self.recovery = Recovery::Fast { recover: self.snd_max };
        let mss = self.mss as u64;
        // Inside a timeout's window (SACK only reaches here), the timeout was
        // this window's reduction: recovery repairs, it does not cut again.
        let repair_only = self.snd_una <= self.timeout_recover || self.rack.as_ref().is_some_and(|r| self.snd_una <= r.reduced_until);
        self.cc.enter_recovery(self.halving_basis(p, self.flight_size(), false), mss, self.sack_ok, self.snd_una, self.snd_max, repair_only);
        self.swift_loss(now, p);
        self.high_rxt = self.snd_una;
        // Retransmit the first segment presumed lost, whatever the window.
        self.retransmit_at(now, self.snd_una, p, out);
    }

    /// Swift's response to a loss found by SACK (fast recovery, or a lost
    /// retransmission): its own cut, once per RTT, instead of halving.
    fn swift_loss(&mut self, now: SimTime, p: &TcpParams) {
        if let (Some(s), Some(sp)) = (&mut self.swift, &p.swift) {
            s.on_fast_recovery(now, sp);
            self.sync_swift_window(now);
        }
    }

    /// Swift's delay sample from an ACK that acknowledged `acked` bytes of
    /// new data, cumulatively or by SACK: the RTT of the segment it echoes
    /// (nanosecond stamps), less the time the receiver held it.
    fn swift_on_ack(&mut self, now: SimTime, pkt: &Packet, acked: u64, p: &TcpParams) {
        let (Some(s), Some(sp)) = (&mut self.swift, &p.swift) else { return };
        if acked > 0 && pkt.has_ts && pkt.ts_ecr != 0 {
            let rtt = Dur::from_ns(p.rtt.tick(now).wrapping_sub(pkt.ts_ecr) as u64);
            s.on_ack(now, rtt, Dur::from_ns(pkt.echo_hold_ns() as u64), acked as f64 / self.mss as f64, sp);
        }
        self.sync_swift_window(now);
    }

    /// Retransmit one segment starting at `seq` (up to SMSS, stopping at the
    /// next SACKed range).
    fn retransmit_at(&mut self, now: SimTime, seq: u64, p: &TcpParams, out: &mut TcpOut) -> u64 {
        let mut end = (seq + self.mss as u64).min(self.app_end.max(seq));
        if let Some((a, _)) = self.scoreboard.next_covered_from(seq) {
            if a > seq {
                end = end.min(a);
            }
        }
        let fin = self.fin_queued && end == self.app_end && seq <= self.app_end;
        if end <= seq && !fin {
            return 0;
        }
        self.stats.retransmits += 1;
        self.timed = None; // Karn: no sample from a retransmitted range
        self.high_rxt = self.high_rxt.max(end + fin as u64);
        if p.detect_lost_retransmits && self.sack_ok && self.rack.is_none() && self.recovery != Recovery::Open {
            self.rexmits.push((seq, end.max(seq + fin as u64), self.snd_max));
        }
        self.emit_segment(now, Segment { seq, end, fin, retx: true }, p, out);
        end - seq
    }

    // ---- RACK-TLP (RFC 8985; tcp/rack.rs) ------------------------------------------------

    /// RACK's steps on an ACK (§6.2), the start of recovery on a loss it
    /// finds (§6.3), the reordering timer, and TLP's check of an
    /// outstanding probe (§7.4) with its congestion response.
    #[inline(never)]
    fn rack_on_ack(&mut self, now: SimTime, pkt: &Packet, snd_una_before: u64, exited_recovery: bool, p: &TcpParams, out: &mut TcpOut) {
        let ack = pkt.ack;
        // The ACK's blocks within [ack, snd_max), and whether the first
        // reports a duplicate (RFC 2883 §4: below the cumulative ACK, or
        // inside the second block).
        let (mut blocks, mut n) = ([(0u64, 0u64); MAX_SACK_BLOCKS], 0);
        for (a, b) in pkt.sack_blocks() {
            let (a, b) = (a.max(ack), b.min(self.snd_max));
            if a < b {
                blocks[n] = (a, b);
                n += 1;
            }
        }
        let mut sack = pkt.sack_blocks();
        let dsack = sack.next().filter(|&(a, b)| b <= ack || sack.next().is_some_and(|(x, y)| x <= a && b <= y));
        let info = rack::AckInfo {
            snd_una: self.snd_una,
            snd_nxt: self.snd_max,
            dsack: dsack.is_some(),
            exiting_recovery: exited_recovery,
            echo: (self.ts_ok && pkt.has_ts).then_some((pkt.ts_ecr, p.rtt.ts_tick)),
        };
        let dupack_without_sack = ack == snd_una_before && pkt.payload == 0 && pkt.nsack == 0 && snd_una_before < self.snd_max;
        let rack = self.rack.as_deref_mut().expect("RACK on");
        let dsack_of_probe = dsack.is_some_and(|(_, b)| Some(b) == rack.tlp_end_seq);
        let scoreboard = &self.scoreboard;
        rack.on_ack(now, &info, &blocks[..n], |a, b| scoreboard.covers(a, b));
        let probe_repaired = rack.tlp_on_ack(info.snd_una, dsack_of_probe, dupack_without_sack);
        self.rack_detect(now, p, out);
        if probe_repaired && self.recovery == Recovery::Open && self.snd_una > self.timeout_recover {
            // §7.4.2: the probe repaired a loss that nothing else saw; the
            // response is fast recovery's window reduction.
            let (mss, cwnd) = (self.mss as u64, self.cc.cwnd);
            self.cc.enter_recovery(self.halving_basis(p, self.flight_size(), false), mss, true, self.snd_una, self.snd_max, false);
            self.cc.cwnd = self.cc.cwnd.min(cwnd); // a response never raises the window
            self.swift_loss(now, p);
            // A loss found later in this window was part of the same event (RFC 5681 §3.2).
            self.rack.as_deref_mut().expect("RACK on").reduced_until = self.snd_max;
        }
        if info.snd_una >= self.snd_max {
            self.rack_timer.cancel();
        } else if ack > snd_una_before {
            self.arm_probe(now, p); // §7.2: on new data acknowledged
        }
    }

    /// RACK_detect_loss_and_arm_timer (§6.2 Step 5): mark losses, start
    /// recovery if any (§6.3), and arm the reordering timer for segments
    /// still inside the window.
    fn rack_detect(&mut self, now: SimTime, p: &TcpParams, out: &mut TcpOut) {
        let rack = self.rack.as_deref_mut().expect("RACK on");
        let reo_wnd = rack.reo_wnd(self.recovery != Recovery::Open, p.dupthresh, self.rtt.srtt);
        let relost_before = self.relost.len();
        let timeout = rack.detect_loss(now, reo_wnd, &mut self.relost);
        let lost = rack.lost_below() > self.snd_una || !self.relost.is_empty();
        self.stats.lost_retransmissions += (self.relost.len() - relost_before) as u64;
        if self.relost.len() > relost_before && matches!(self.recovery, Recovery::Fast { .. }) && !rack.cut_for_relost {
            // §9.3: without PRR, a lost retransmission is a second
            // congestion indication (RFC 5681 §3.2), answered once per recovery.
            rack.cut_for_relost = true;
            let basis = self.halving_basis(p, self.flight_size(), false);
            self.cc.cut_again(basis, self.mss as u64);
            self.swift_loss(now, p);
        }
        if timeout > Dur::ZERO {
            self.rack_timer.arm(now + timeout);
            self.rack_probe = false;
        } else if !self.rack_probe {
            self.rack_timer.cancel();
        }
        if lost && self.recovery == Recovery::Open && self.state == State::Established {
            self.enter_recovery(now, p, out);
        }
    }

    #[inline(never)]
    fn rack_reorder_timeout(&mut self, now: SimTime, p: &TcpParams, out: &mut TcpOut) {
        self.rack_detect(now, p, out);
        self.try_send(now, p, out);
    }

    /// TLP's probe timer (§7.2), after new data is sent or new data is
    /// acknowledged: not during a fast or timeout recovery, nor with
    /// segments SACKed, nor while RACK's reordering timer runs.
    #[inline(never)]
    fn arm_probe(&mut self, now: SimTime, p: &TcpParams) {
        let Some(rack) = &self.rack else { return };
        let in_timeout_recovery = self.snd_una <= self.timeout_recover && self.rtt.backoff > 0;
        if self.recovery != Recovery::Open || in_timeout_recovery || rack.segs_sacked() > 0 || self.snd_una >= self.snd_max {
            return;
        }
        if self.rack_timer.deadline.is_some() && !self.rack_probe {
            return;
        }
        let Some(rto_at) = self.rto_timer.deadline else { return };
        let srtt = self.rtt.has_sample.then_some(self.rtt.srtt);
        let one_segment = self.flight_size() <= self.mss as u64;
        let pto = Rack::pto(srtt, if one_segment { p.tlp_max_ack_delay } else { p.tlp_slack });
        // On Linux's jiffy timer with rto_formula = "linux", as its RTO.
        self.rack_timer.arm(p.rtt.deadline(now, pto).min(rto_at));
        self.rack_probe = true;
    }

    /// TLP_send_probe (§7.3): with no probe outstanding and an RTT
    /// measured since the last, one new segment if the application and the
    /// receive window allow, else the last segment sent again; cwnd does
    /// not limit it. The RTO restarts after the attempt.
    #[inline(never)]
    fn send_probe(&mut self, now: SimTime, p: &TcpParams, out: &mut TcpOut) {
        self.rack_probe = false;
        self.rack_timer.cancel();
        if self.state != State::Established || self.snd_una >= self.snd_max || self.recovery != Recovery::Open {
            return;
        }
        self.restart_rto(now, p);
        let rack = self.rack.as_deref().expect("RACK on");
        if rack.tlp_end_seq.is_some() || !rack.sampled_since_probe {
            return;
        }
        let mss = self.mss as u64;
        let seq = self.snd_max;
        let is_retrans = if self.app_end > seq && seq < self.snd_una + self.snd_wnd && self.snd_nxt == seq {
            let end = (seq + mss).min(self.app_end).min(self.snd_una + self.snd_wnd);
            let fin = self.fin_queued && end == self.app_end;
            self.emit_segment(now, Segment { seq, end, fin, retx: false }, p, out);
            self.snd_nxt = end + fin as u64;
            self.rack_timer.cancel(); // a probe does not re-arm the probe timer
            self.rack_probe = false;
            false
        } else {
            // The highest-sequence segment: the last MSS-sized piece below
            // snd_max (the FIN alone if that is all that is left).
            let data_end = self.snd_max - (self.fin_queued && self.snd_max > self.app_end) as u64;
            let start = data_end.saturating_sub(mss).max(self.snd_una);
            if self.retransmit_at(now, start, p, out) == 0 && data_end == self.snd_max {
                return;
            }
            true
        };
        self.stats.tail_loss_probes += 1;
        let rack = self.rack.as_deref_mut().expect("RACK on");
        rack.tlp_end_seq = Some(self.snd_max);
        rack.tlp_is_retrans = is_retrans;
        rack.sampled_since_probe = false;
    }

    // ---- sending ------------------------------------------------------------------------

    fn emit_segment(&mut self, now: SimTime, seg: Segment, p: &TcpParams, out: &mut TcpOut) {
        let Segment { seq, end, fin, retx } = seg;
        let mut pkt = self.base_packet(now, p);
        pkt.seq = seq;
        pkt.payload = (end - seq) as u32;
        pkt.is_retx = retx;
        if let (Some(thresholds), true) = (&p.pias, pkt.payload > 0) {
            // PIAS: the class is the number of thresholds the message's bytes
            // sent before this segment have passed.
            let [prev, cur] = self.msg_start;
            let sent = if seq >= cur { seq - cur } else { seq.saturating_sub(prev) };
            pkt.dscp = thresholds.partition_point(|&t| t <= sent) as u8;
        }
        if fin {
            pkt.flags |= flags::FIN;
        }
        if pkt.has_ts {
            self.arrear_stamp(now, &mut pkt, p);
        }
        if pkt.payload > 0 {
            pkt.flags |= flags::PSH * (end == self.app_end) as u8;
            self.last_data_sent = Some(now);
            if let Some(room) = &mut out.tsq_room {
                *room = room.saturating_sub(pkt.payload as u64);
            }
        }
        self.fill_ack(now, &mut pkt, p);
        if self.ecn_ok {
            let ect = match self.cc.ecn_mode() {
                EcnMode::Dctcp => true,                  // Linux DCTCP: every packet ECT
                EcnMode::Classic => !retx && pkt.payload > 0, // RFC 3168 §6.1.5
                EcnMode::Off => false,
            };
            if ect {
                pkt.ecn = Ecn::Ect0;
            }
            if self.cc.take_cwr(!retx && pkt.payload > 0) {
                pkt.flags |= flags::CWR;
            }
        }
        let seq_end = end + fin as u64;
        if !retx && self.timed.is_none() && !self.ts_ok && pkt.payload > 0 {
            self.timed = Some((seq_end, p.rtt.tick(now)));
        }
        if p.rtt.clock != RttClock::Ticks && seq_end > seq {
            self.send_log.sent(seq, seq_end, now, retx);
        }
        let mut new_data_sent = false;
        if let (Some(rack), true) = (&mut self.rack, seq_end > seq) {
            rack.sent(seq, seq_end, now, retx);
            new_data_sent = !retx;
        }
        if seq_end > self.snd_max {
            self.snd_max = seq_end;
        }
        self.stats.segments_sent += 1;
        self.stats.data_bytes_sent += pkt.payload as u64;
        if self.burst_left != u16::MAX {
            self.burst_left -= 1;
        }
        out.packets.push(pkt);
        self.arm_rto_if_idle(now, p);
        if new_data_sent {
            self.arm_probe(now, p); // RFC 8985 §7.2: after sending new data
        }
    }

    fn send_pure_ack(&mut self, now: SimTime, p: &TcpParams, out: &mut TcpOut) {
        let mut pkt = self.base_packet(now, p);
        // As Linux: the next new sequence number (our snd_max is its snd_nxt).
        pkt.seq = self.snd_max;
        pkt.is_dup_ack = self.acked_anything && self.last_ack_sent == self.rcv_nxt;
        self.fill_ack(now, &mut pkt, p);
        if self.ecn_ok && self.cc.ecn_mode() == EcnMode::Dctcp {
            pkt.ecn = Ecn::Ect0;
        }
        self.stats.segments_sent += 1;
        out.packets.push(pkt);
    }

    /// Send what the windows allow, then a pure ACK if one is owed.
    pub fn flush(&mut self, now: SimTime, p: &TcpParams, out: &mut TcpOut) {
        if self.state == State::Established {
            let before = out.packets.len();
            // After on_packet or on_timer, skip a second attempt that cannot send.
            if out.tsq_room.is_some() || self.tried != now {
                self.try_send(now, p, out);
            }
            if self.ack_now && out.packets.len() == before {
                self.send_pure_ack(now, p, out);
            }
        }
    }

    /// F-RTO step 1 (RFC 5682 §2.1, and §3.1 with SACK) at a timeout: the
    /// retransmission goes out as usual, and step 2 follows unless a
    /// recovery is under way.
    fn frto_timeout(&mut self) {
        // Not during an earlier timeout's recovery ("recover" at or above
        // snd_una; a timeout in step 2 has not set it, and restarts F-RTO),
        // nor during SACK loss recovery (§2.1: "loss recovery other than
        // Reno or NewReno"; §3.1).
        if self.frto_recover >= self.snd_una || (self.sack_ok && self.recovery != Recovery::Open) {
            self.frto_recover = self.snd_max;
            self.frto = Frto::Off;
            return;
        }
        // A restart keeps the window from before the first timeout.
        let (cwnd, ssthresh) = match self.frto {
            Frto::Retransmitted { cwnd, ssthresh, .. } | Frto::NewData { cwnd, ssthresh, .. } => (cwnd, ssthresh),
            Frto::Off => (self.cc.cwnd, self.cc.ssthresh),
        };
        let rexmit_end = (self.snd_una + self.mss as u64).min(self.snd_max);
        self.frto = Frto::Retransmitted { rexmit_end, cwnd, ssthresh };
    }

    /// F-RTO steps 2 and 3 on an ACK: the basic algorithm (RFC 5682 §2.1),
    /// or the SACK-enhanced one (§3.1) when SACK is in use. The response to
    /// a spurious timeout restores the window from before it (FreeBSD's
    /// undo, RFC 4015's aim).
    fn frto_ack(&mut self, a: FrtoAck, mss: u64) {
        self.frto = match self.frto {
            // Step 2 (§3.1): duplicate ACKs before the retransmission's ACK
            // only update the scoreboard (done), unless they started SACK
            // recovery. §2.1: ACKs that neither advance nor duplicate are ignored.
            Frto::Retransmitted { .. } if !a.advanced && (if self.sack_ok { self.recovery == Recovery::Open } else { !a.duplicate }) => self.frto,
            Frto::Retransmitted { rexmit_end, cwnd, ssthresh } if a.advanced => {
                self.frto_recover = self.snd_max;
                let may_send_new = self.app_end > self.snd_max && self.snd_max < self.snd_una + self.snd_wnd;
                if self.snd_una >= self.frto_recover || self.snd_una < rexmit_end || !may_send_new {
                    // Step 2a: all data acknowledged, the retransmission not
                    // (§2.1), or nothing new to send: conventional recovery.
                    Frto::Off
                } else {
                    // Step 2b: up to two new segments instead of going back N.
                    self.snd_nxt = self.snd_max;
                    self.cc.cwnd = self.flight_size() + 2 * mss;
                    Frto::NewData { cwnd, ssthresh }
                }
            }
            // Step 2a (§2.1): a duplicate ACK (§3.1: SACK recovery began).
            Frto::Retransmitted { .. } => {
                self.frto_recover = self.snd_max;
                Frto::Off
            }
            // Step 3 takes only duplicate and new ACKs.
            Frto::NewData { .. } if !a.advanced && !a.duplicate => self.frto,
            Frto::NewData { cwnd, ssthresh } => {
                let recover = self.frto_recover;
                let spurious = if self.sack_ok {
                    // §3.1 step 3: new data acknowledged (cumulatively or
                    // by SACK), all of it sent before the timeout.
                    self.snd_una <= recover && a.sack_end <= recover && (a.advanced || a.newly_sacked > 0)
                } else {
                    // §2.1 step 3b: the window advanced again.
                    a.advanced
                };
                if spurious {
                    self.stats.spurious_timeouts += 1;
                    self.frto_recover = self.snd_una;
                    // Undo the reduction, unless this ACK began SACK
                    // recovery of holes (§3.1), which sets its own window.
                    if self.recovery == Recovery::Open {
                        self.cc.cwnd = cwnd;
                        self.cc.ssthresh = ssthresh;
                    }
                } else {
                    // Step 3a: the timeout was genuine. Go back N in slow
                    // start from at most three segments.
                    self.cc.cwnd = self.cc.cwnd.min(3 * mss);
                    self.snd_nxt = self.snd_una;
                }
                Frto::Off
            }
            Frto::Off => Frto::Off,
        };
    }

    /// tcp.cwnd_validation (Linux's tcp_is_cwnd_limited): in slow start,
    /// grow while cwnd < 2 x the flight before this ACK; after it, only if
    /// sending last stopped at cwnd. Without it cwnd always grows (RFC 5681).
    fn may_grow(&self, p: &TcpParams, flight: u64) -> bool {
        !p.cwnd_validation || self.cwnd_limited || (self.cc.cwnd < self.cc.ssthresh && self.cc.cwnd < 2 * flight)
    }

    /// TCP Small Queues: stop sending data once the host holds enough of
    /// ours (the world calls flush again as they leave).
    fn tsq_full(&mut self, out: &TcpOut) -> bool {
        if out.tsq_room == Some(0) {
            self.tsq_throttled = true;
        }
        self.tsq_throttled
    }

    fn try_send(&mut self, now: SimTime, p: &TcpParams, out: &mut TcpOut) {
        if self.state != State::Established {
            return;
        }
        self.tried = now;
        self.tsq_throttled = false;
        match self.recovery {
            Recovery::Fast { .. } if self.sack_ok => self.send_sack_recovery(now, p, out),
            _ => self.send_window(now, p, out),
        }
    }

    /// RFC 6675 §5 step (C): while cwnd - pipe >= 1 SMSS, send NextSeg().
    fn send_sack_recovery(&mut self, now: SimTime, p: &TcpParams, out: &mut TcpOut) {
        let mss = self.mss as u64;
        let mut pipe = self.pipe(p);
        let lost = self.lost_boundary(p);
        for _ in 0..100_000 {
            if self.cc.cwnd < pipe + mss || self.tsq_full(out) || self.burst_left == 0 {
                break;
            }
            // First, retransmissions found lost (see find_lost_retransmits).
            if let Some(&(a, b)) = self.relost.first() {
                let seq = self.first_unsacked_from(a.max(self.snd_una));
                if seq >= b {
                    self.relost.remove(0);
                    continue;
                }
                let n = self.retransmit_at(now, seq, p, out);
                if seq + n >= b || n == 0 {
                    self.relost.remove(0);
                } else {
                    self.relost[0].0 = seq + n;
                }
                pipe += n;
                continue;
            }
            // Rule 1: the first un-SACKed byte above HighRxt that is lost.
            let s1 = self.first_unsacked_from(self.high_rxt.max(self.snd_una));
            if s1 < lost && s1 < self.snd_max {
                let n = self.retransmit_at(now, s1, p, out);
                if n == 0 {
                    break;
                }
                pipe += n;
                continue;
            }
            // Rule 2: new data, within the receive window.
            if self.snd_max < self.app_end && self.snd_max < self.snd_una + self.snd_wnd {
                let seq = self.snd_max;
                let end = (seq + mss).min(self.app_end).min(self.snd_una + self.snd_wnd);
                let fin = self.fin_queued && end == self.app_end;
                self.snd_nxt = end + fin as u64;
                self.emit_segment(now, Segment { seq, end, fin, retx: false }, p, out);
                pipe += end - seq;
                continue;
            }
            // Rule 3: an un-SACKed byte above HighRxt, below the highest
            // SACKed byte (1.a, 1.b), not yet deemed lost.
            // (Not with RACK, which resends only what it deems lost, as Linux.)
            let highest_sacked = self.scoreboard.iter().next_back().map_or(0, |r| r.1);
            if s1 < highest_sacked && self.rack.is_none() {
                let n = self.retransmit_at(now, s1, p, out);
                if n == 0 {
                    break;
                }
                pipe += n;
                continue;
            }
            break;
        }
    }

    fn first_unsacked_from(&self, mut seq: u64) -> u64 {
        while let Some((a, b)) = self.scoreboard.next_covered_from(seq) {
            if a <= seq {
                seq = b;
            } else {
                break;
            }
        }
        seq
    }

    /// Normal sending (and NewReno recovery with the inflated window, and
    /// go-back-N after a timeout): send while snd_nxt is inside
    /// snd_una + min(cwnd, rwnd).
    fn send_window(&mut self, now: SimTime, p: &TcpParams, out: &mut TcpOut) {
        let mss = self.mss as u64;
        self.restart_if_idle(now, p);
        // RFC 3042 §2: one segment of new data per duplicate ACK; never the
        // resends of a go-back-N after a timeout (snd_nxt below snd_max).
        let new_data = self.snd_nxt == self.snd_max;
        let limited_transmit =
            if p.limited_transmit && new_data && self.recovery == Recovery::Open && self.dupacks > 0 && self.dupacks < p.dupthresh {
                self.dupacks as u64 * mss
            } else {
                0
            };
        let limit = self.snd_una + (self.cc.cwnd + limited_transmit).min(self.snd_wnd);
        loop {
            if self.tsq_full(out) {
                self.cwnd_limited = false;
                return;
            }
            // Skip ranges the receiver already holds (go-back-N after a
            // timeout), unless the timeout forgot them (tcp.rto_forgets_sack:
            // FreeBSD's tcp_output consults SACK only in fast recovery).
            if !p.rto_forgets_sack {
                self.snd_nxt = self.first_unsacked_from(self.snd_nxt);
            }
            let seq = self.snd_nxt;
            let data_end = self.app_end;
            let retx = seq < self.snd_max;
            if seq >= data_end {
                self.cwnd_limited = false; // application-limited
                // Only the FIN may be left: send it if queued and not yet sent
                // (or being resent).
                if seq == data_end && self.fin_queued && (retx || self.snd_max == data_end) {
                    if retx {
                        self.stats.retransmits += 1;
                    }
                    self.emit_segment(now, Segment { seq, end: seq, fin: true, retx }, p, out);
                    self.snd_nxt = seq + 1;
                }
                return;
            }
            let mut end = (seq + mss).min(data_end);
            if retx && !p.rto_forgets_sack {
                if let Some((a, _)) = self.scoreboard.next_covered_from(seq) {
                    end = end.min(a.max(seq + 1));
                }
            }
            if end > limit {
                // Window-limited: a partial segment only as the first one
                // beyond snd_una (nothing in flight, or the go-back-N resend
                // after a timeout), so a receive window below one segment
                // cannot stall us. A congestion window below one SMSS
                // (only with tcp.dctcp_min_cwnd = 0) sends nothing: the flow
                // waits for the retransmission timer, as ns-3 3.44 does.
                if self.cc.cwnd < mss && self.snd_una == self.snd_max {
                    self.arm_rto_if_idle(now, p);
                    return;
                }
                if limit <= seq || seq > self.snd_una {
                    self.cwnd_limited = self.cc.cwnd + limited_transmit <= self.snd_wnd;
                    return;
                }
                end = limit;
            }
            if !retx && end - seq < mss && p.nagle && self.snd_una < self.snd_max {
                self.cwnd_limited = false;
                return; // Nagle: hold a small segment while data is unacknowledged
            }
            if self.burst_left == 0 {
                // tcp.max_burst: the window had room; the sender's own limit
                // stopped it, so cwnd counts as the limit (the fork this
                // models grows cwnd on every ACK).
                self.cwnd_limited = true;
                return;
            }
            let fin = self.fin_queued && end == data_end;
            if retx {
                self.stats.retransmits += 1;
                self.timed = None; // Karn
            }
            self.emit_segment(now, Segment { seq, end, fin, retx }, p, out);
            self.snd_nxt = end + fin as u64;
        }
    }

    /// ECN and SACK as the handshake agreed them.
    pub fn ecn_negotiated(&self) -> bool {
        self.ecn_ok
    }

    pub fn sack_negotiated(&self) -> bool {
        self.sack_ok
    }

    pub fn in_recovery(&self) -> bool {
        self.recovery != Recovery::Open
    }
}

#[cfg(test)]
mod tests {
    //! Segment exchanges between two endpoints over an ideal wire (zero
    //! delay, 1 us per hop of "time"), with packets dropped or marked by hand.
    use super::*;
    use crate::config::Scenario;

    /// Endpoint parameters from `[tcp]` keys. These tests were written for
    /// a 1 ms tick clock with RFC 6298's RTO, which they keep unless they
    /// set a clock or formula of their own.
    fn params(tcp: &str) -> TcpParams {
        let mut tcp = tcp.to_string();
        for (key, value) in [("rtt_clock", "\"ticks\""), ("rto_formula", "\"rfc6298\"")] {
            if !tcp.contains(key) {
                tcp = format!("{key} = {value}\n{tcp}");
            }
        }
        let s = Scenario::from_toml_str(&format!(
            "[run]\nduration = \"1s\"\n[topology]\ntype = \"star\"\nhosts = 2\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n[tcp]\n{tcp}\n"
        ))
        .unwrap();
        TcpParams::from_scenario(&s)
    }

    struct Pair {
        p: TcpParams,
        ep: [Endpoint; 2],
        now: SimTime,
    }

    impl Pair {
        /// Open a connection from 0 to 1 and complete the handshake.
        fn connected(p: TcpParams) -> Pair {
            let mut pair = Pair { ep: [Endpoint::new(0, 0, 0, 1, 7, 0, &p), Endpoint::new(0, 1, 1, 0, 7, 0, &p)], p, now: SimTime(0) };
            let mut out = TcpOut::default();
            pair.ep[0].open(pair.now, &pair.p, &mut out);
            let syn = out.packets.remove(0);
            let synack = pair.to(1, &syn).remove(0);
            let ack = pair.to(0, &synack);
            assert_eq!(ack.len(), 1);
            pair.to(1, &ack[0]);
            assert_eq!(pair.ep[0].state, State::Established);
            assert_eq!(pair.ep[1].state, State::Established);
            pair
        }

        /// Deliver `pkt` to endpoint `i` (1 us later) and return what it sends.
        fn to(&mut self, i: usize, pkt: &Packet) -> Vec<Packet> {
            self.now += Dur::from_us(1);
            let mut out = TcpOut::default();
            self.ep[i].on_packet(self.now, pkt, &self.p, &mut out);
            self.ep[i].flush(self.now, &self.p, &mut out);
            out.packets
        }

        fn write(&mut self, i: usize, bytes: u64) -> Vec<Packet> {
            let mut out = TcpOut::default();
            self.ep[i].write(bytes, false, &self.p);
            self.ep[i].flush(self.now, &self.p, &mut out);
            out.packets
        }
    }

    #[test]
    fn pias_tags_data_by_bytes_of_its_message_sent_before_it() {
        let mut p = params("initial_cwnd = 20");
        p.pias = Some(Box::new([2000, 5000]));
        let mut pair = Pair::connected(p);
        // mss 1448: offsets 0, 1448 | 2896, 4344 | 5792 -> classes 0 0 1 1 2.
        let first = data(&mut pair, 5);
        assert_eq!(first.iter().map(|s| s.dscp).collect::<Vec<_>>(), [0, 0, 1, 1, 2]);
        let acks: Vec<Packet> = first.iter().flat_map(|s| pair.to(1, s)).collect();
        assert!(acks.iter().all(|a| a.dscp == 0), "pure ACKs stay in class 0");
        for a in &acks {
            pair.to(0, a);
        }
        // The next write is a new message: its count starts again.
        let second = data(&mut pair, 3);
        assert_eq!(second.iter().map(|s| s.dscp).collect::<Vec<_>>(), [0, 0, 1]);
    }

    #[test]
    fn max_burst_sends_at_most_that_many_segments_per_ack_or_write() {
        let mut pair = Pair::connected(params("max_burst = 2\ndelayed_ack = { enabled = false }"));
        let mss = pair.ep[0].mss as u64;
        // IW 10, but one write releases 2 segments; each ACK releases 2 more
        // (one for the segment it acknowledges, one from slow start's growth).
        let mut flight = pair.write(0, 100 * mss);
        assert_eq!(flight.len(), 2);
        for round in 0..3 {
            let acks: Vec<Packet> = flight.iter().flat_map(|s| pair.to(1, s)).collect();
            let sent: Vec<Vec<Packet>> = acks.iter().map(|a| pair.to(0, a)).collect();
            assert!(sent.iter().all(|s| s.len() == 2), "round {round}: {:?}", sent.iter().map(Vec::len).collect::<Vec<_>>());
            flight = sent.concat();
        }
        // Without the limit the same write sends the whole initial window.
        let mut pair = Pair::connected(params("delayed_ack = { enabled = false }"));
        assert_eq!(pair.write(0, 100 * mss).len(), 10);
    }

    #[test]
    fn initial_ssthresh_is_high_unless_set_and_then_ends_slow_start_there() {
        let pair = Pair::connected(params(""));
        assert!(pair.ep[0].cc.ssthresh_is_infinite());
        let mut pair = Pair::connected(params("initial_ssthresh = 12\ntimestamps = false"));
        let mss = pair.ep[0].mss as u64;
        assert_eq!(pair.ep[0].cc.ssthresh, 12 * mss);
        // Slow start takes IW 10 only up to 12 segments; then about one segment per window.
        let mut flight = pair.write(0, 1000 * mss);
        for _ in 0..3 {
            let acks: Vec<Packet> = flight.iter().flat_map(|s| pair.to(1, s)).collect();
            flight = acks.iter().flat_map(|a| pair.to(0, a)).collect();
        }
        let cwnd = pair.ep[0].cc.cwnd;
        assert!((12 * mss..=15 * mss).contains(&cwnd), "cwnd {} segments", cwnd as f64 / mss as f64);
    }

    #[test]
    fn handshake_negotiates_options() {
        let pair = Pair::connected(params("ecn = true\nmss = \"1000B\""));
        for e in &pair.ep {
            assert!(e.sack_ok && e.ts_ok && e.ecn_ok && e.window_scale_agreed);
            assert_eq!(e.mss, 1000 - 12);
            assert_eq!(e.cc.cwnd, 10 * 988);
        }
        let pair = Pair::connected(params("sack = false\ntimestamps = false"));
        assert!(!pair.ep[0].sack_ok && !pair.ep[0].ts_ok && !pair.ep[0].ecn_ok);
        assert_eq!(pair.ep[0].mss, 1460);
    }

    fn data(pair: &mut Pair, n: usize) -> Vec<Packet> {
        let segs = pair.write(0, n as u64 * pair.ep[0].mss as u64);
        assert_eq!(segs.len(), n);
        segs
    }

    /// Send one segment at `at` and return the sender's latest sample once
    /// its ACK is back (2 us later on the test wire).
    fn one_exchange_rtt(pair: &mut Pair, at: SimTime) -> Dur {
        pair.now = at;
        let seg = data(pair, 1);
        let ack = pair.to(1, &seg[0]);
        pair.to(0, &ack[0]);
        pair.ep[0].rtt.latest
    }

    #[test]
    fn each_rtt_clock_measures_a_2us_exchange_as_its_stack_does() {
        let ms = |x: u64| SimTime(Dur::from_ms(x).ps());
        let late_in_a_ms = SimTime(Dur::from_us(10_999).ps());
        let clock = |c: &str, ts: bool| params(&format!("rtt_clock = \"{c}\"\nrtt_granularity = \"1ms\"\ntimestamps = {ts}"));
        // FreeBSD ticks: one whole tick, timestamps or not.
        for ts in [true, false] {
            let mut pair = Pair::connected(clock("ticks", ts));
            assert_eq!(one_exchange_rtt(&mut pair, ms(10)), Dur::from_ms(1), "timestamps {ts}");
        }
        // Linux: the send time in microseconds, timestamps or not.
        for ts in [true, false] {
            let mut pair = Pair::connected(clock("linux", ts));
            assert_eq!(one_exchange_rtt(&mut pair, ms(10)), Dur::from_us(2));
        }
        // ns-3 with timestamps: milliseconds, or 1 us within one millisecond.
        let mut pair = Pair::connected(clock("ns3", true));
        assert_eq!(one_exchange_rtt(&mut pair, ms(10)), Dur::from_us(1));
        assert_eq!(one_exchange_rtt(&mut pair, late_in_a_ms), Dur::from_ms(1));
        // ns-3 without: exact.
        let mut pair = Pair::connected(clock("ns3", false));
        assert_eq!(one_exchange_rtt(&mut pair, late_in_a_ms), Dur::from_us(2));
    }

    #[test]
    fn linux_retransmission_timer_is_whole_jiffies_above_min_rto() {
        let p = params("rtt_clock = \"linux\"\nrto_formula = \"linux\"\nrtt_granularity = \"1ms\"\nmin_rto = \"1ms\"");
        let mut pair = Pair::connected(p);
        for i in 0..20 {
            one_exchange_rtt(&mut pair, SimTime(Dur::from_us(1000 + 50 * i).ps()));
        }
        // SRTT about 2 us, RTTVAR = min_rto: 1.002 ms is 2 jiffies.
        assert_eq!(pair.ep[0].rtt.rto(&pair.p.rtt), Dur::from_ms(2));
        // Armed at 5.3 ms, the timer fires on the jiffy boundary at 7 ms.
        pair.now = SimTime(Dur::from_us(5_300).ps());
        let lost = data(&mut pair, 1);
        assert_eq!(lost.len(), 1);
        assert_eq!(pair.ep[0].rto_timer.deadline, Some(SimTime(Dur::from_ms(7).ps())));
    }

    #[test]
    fn dctcp_receiver_echoes_ce_state_with_delayed_acks() {
        // RFC 8257 §3.2 with m = 2: ACK every 2 segments; on a CE-state
        // change, the held ACK goes out at once carrying the old state.
        let mut pair = Pair::connected(params("cc = \"dctcp\"\ndelayed_ack = { enabled = true, count = 2 }"));
        let mut segs = data(&mut pair, 4);
        segs[1].ecn = Ecn::Ce;
        segs[2].ecn = Ecn::Ce;
        let mss = pair.ep[0].mss as u64;
        // 1st segment, no CE: held.
        assert!(pair.to(1, &segs[0]).is_empty());
        // 2nd, CE: the held ACK (for segment 1) goes out without ECE; the
        // new segment is now held.
        let acks = pair.to(1, &segs[1]);
        assert_eq!(acks.len(), 1);
        assert_eq!(acks[0].ack, 1 + mss);
        assert!(!acks[0].has(flags::ECE));
        // 3rd, CE: no change; two held -> ACK with ECE.
        let acks = pair.to(1, &segs[2]);
        assert_eq!(acks.len(), 1);
        assert_eq!(acks[0].ack, 1 + 3 * mss);
        assert!(acks[0].has(flags::ECE));
        // 4th, no CE: change, nothing held -> no immediate ACK; segment held.
        assert!(pair.to(1, &segs[3]).is_empty());
        assert!(pair.ep[1].delack_timer.deadline.is_some());
        // Every packet of a DCTCP connection is ECN-capable.
        assert!(segs.iter().all(|s| s.ecn != Ecn::NotEct));
    }

    #[test]
    fn classic_ecn_latches_ece_until_cwr_and_halves_once() {
        let mut pair = Pair::connected(params("ecn = true"));
        let mut segs = data(&mut pair, 3);
        assert!(segs.iter().all(|s| s.ecn == Ecn::Ect0));
        segs[0].ecn = Ecn::Ce;
        let ack1 = pair.to(1, &segs[0]).remove(0);
        let ack2 = pair.to(1, &segs[1]).remove(0);
        assert!(ack1.has(flags::ECE) && ack2.has(flags::ECE), "ECE stays set until CWR");
        // The sender halves once for the window, then marks CWR on new data.
        let cwnd = pair.ep[0].cc.cwnd;
        let more = pair.to(0, &ack1);
        assert_eq!(pair.ep[0].stats.ecn_reductions, 1);
        assert!(pair.ep[0].cc.cwnd <= cwnd / 2 + pair.ep[0].mss as u64);
        pair.to(0, &ack2);
        assert_eq!(pair.ep[0].stats.ecn_reductions, 1, "at most one reduction per window");
        let cwr = more.iter().chain(pair.write(0, 1000).iter()).find(|p| p.payload > 0).copied().expect("new data");
        assert!(cwr.has(flags::CWR));
        pair.to(1, &segs[2]);
        let ack = pair.to(1, &cwr).remove(0);
        assert!(!ack.has(flags::ECE), "CWR clears the echo");
    }

    #[test]
    fn nagle_holds_a_small_segment_until_the_ack() {
        let mut pair = Pair::connected(params("nagle = true"));
        let mss = pair.ep[0].mss as u64;
        let segs = pair.write(0, mss + 100);
        assert_eq!(segs.len(), 1, "the 100 B remainder waits");
        let ack = pair.to(1, &segs[0]).remove(0);
        let next = pair.to(0, &ack);
        assert_eq!(next.len(), 1);
        assert_eq!(next[0].payload, 100);
        let mut pair = Pair::connected(params("nagle = false"));
        assert_eq!(pair.write(0, mss + 100).len(), 2);
    }

    #[test]
    fn sack_fast_recovery_repairs_one_loss_without_timeout() {
        let mut pair = Pair::connected(params(""));
        let segs = data(&mut pair, 10);
        let mut acks = Vec::new();
        for (i, s) in segs.iter().enumerate() {
            if i != 2 {
                acks.extend(pair.to(1, s)); // segment 3 is lost
            }
        }
        // Segments 4..10 each produce a duplicate ACK with SACK blocks.
        assert_eq!(acks.iter().filter(|a| a.nsack > 0).count(), 7);
        let mut retx = Vec::new();
        for a in &acks {
            retx.extend(pair.to(0, a).into_iter().filter(|p| p.is_retx));
        }
        assert_eq!(pair.ep[0].stats.fast_retransmits, 1);
        assert_eq!(retx.len(), 1);
        assert_eq!(retx[0].seq, segs[2].seq);
        let ack = pair.to(1, &retx[0]).remove(0);
        assert_eq!(ack.ack, segs[9].seq + segs[9].payload as u64);
        pair.to(0, &ack);
        assert!(!pair.ep[0].in_recovery());
        assert_eq!(pair.ep[0].stats.timeouts, 0);
        assert_eq!(pair.ep[0].stats.retransmits, 1);
        // ssthresh = FlightSize / 2 at the loss.
        assert_eq!(pair.ep[0].cc.ssthresh, 4 * pair.ep[0].mss as u64); // FlightSize (8 segments after 2 were acked) / 2
    }

    #[test]
    fn swift_acks_echo_ts_recent_and_how_long_it_was_held() {
        let p = params("cc = \"swift\"\nrtt_clock = \"linux\"\n[tcp.delayed_ack]\nenabled = true\ntimeout = \"40us\"");
        let mut pair = Pair::connected(p);
        let mut segs = data(&mut pair, 4);
        // Nanosecond stamps (the NIC's, §3.1), not Linux's milliseconds.
        assert_eq!(segs[0].ts_val, pair.p.rtt.tick(pair.now));
        assert_eq!(pair.p.rtt.ts_tick, Dur::from_ns(1));
        for (k, s) in segs.iter_mut().enumerate() {
            s.ts_val += 100 * k as u32; // as if sent 100 ns apart
        }
        assert!(pair.to(1, &segs[0]).is_empty(), "held: the first of two");
        // The second calls for the ACK, which echoes the first (TS.Recent,
        // RFC 7323) and the time it was held: the harness' 1 µs step.
        let ack = pair.to(1, &segs[1]).remove(0);
        assert_eq!((ack.ts_ecr, ack.echo_hold_ns()), (segs[0].ts_val, 1_000));
        // Out of order (the third is lost), a packet is answered at once
        // with its own stamp.
        let dup = pair.to(1, &segs[3]).remove(0);
        assert_eq!((dup.ts_ecr, dup.echo_hold_ns()), (segs[3].ts_val, 0));
        // A lone segment's ACK waits for the delayed-ACK timer: 40 µs of
        // endpoint delay, which the sender takes out of the RTT.
        let mut pair = Pair::connected(params("cc = \"swift\"\nrtt_clock = \"linux\"\n[tcp.delayed_ack]\nenabled = true\ntimeout = \"40us\""));
        let seg = data(&mut pair, 1).remove(0);
        assert!(pair.to(1, &seg).is_empty());
        let mut out = TcpOut::default();
        pair.ep[1].on_timer(pair.now + Dur::from_us(40), TimerKind::DelAck, &pair.p, &mut out);
        assert_eq!((out.packets[0].ts_ecr, out.packets[0].echo_hold_ns()), (seg.ts_val, 40_000));
    }

    #[test]
    fn swift_cuts_by_max_mdf_when_sack_finds_a_loss_and_does_not_halve() {
        let mut pair = Pair::connected(params("cc = \"swift\"\nrtt_clock = \"linux\""));
        let segs = data(&mut pair, 10);
        let acks: Vec<Packet> = segs.iter().enumerate().filter(|&(i, _)| i != 2).flat_map(|(_, s)| pair.to(1, s)).collect();
        let window = |pair: &Pair| pair.ep[0].swift.as_ref().unwrap().cwnd();
        let mut before = 0.0;
        for a in &acks {
            if pair.ep[0].stats.fast_retransmits == 0 {
                before = window(&pair);
            }
            pair.to(0, a);
        }
        assert_eq!(pair.ep[0].stats.fast_retransmits, 1);
        // × (1 − max_mdf) at the loss, then ai/cwnd for each of the few
        // packets SACKed since (RTTs of a few µs are below the target).
        let after = window(&pair);
        assert!(after >= 0.5 * before && after < 0.5 * before + 1.0, "{before} -> {after}");
        assert_eq!(pair.ep[0].cc.cwnd, (after * pair.ep[0].mss as f64) as u64, "the TCP window is Swift's");
    }

    /// Segment 3 of 10 is lost, then its fast retransmission too, while new
    /// data keeps flowing and is SACKed. Returns the retransmissions sent
    /// after that new data was acknowledged, and the timeouts.
    fn lose_a_retransmission(config: &str) -> (Vec<Packet>, Vec<Packet>, u64) {
        let mut pair = Pair::connected(params(config));
        let segs = data(&mut pair, 10);
        let mut acks = Vec::new();
        for (i, s) in segs.iter().enumerate() {
            if i != 2 {
                acks.extend(pair.to(1, s));
            }
        }
        pair.write(0, 10 * pair.ep[0].mss as u64); // more data to send during recovery
        let mut sent = Vec::new();
        for a in &acks {
            sent.extend(pair.to(0, a));
        }
        assert_eq!(sent.iter().filter(|p| p.is_retx).count(), 1, "the fast retransmission");
        // It is lost; every other segment is delivered, and so on until quiet.
        let mut again = Vec::new();
        let mut queue: std::collections::VecDeque<Packet> = sent.iter().filter(|p| !p.is_retx).copied().collect();
        while let Some(seg) = queue.pop_front() {
            for a in pair.to(1, &seg) {
                for out in pair.to(0, &a) {
                    if out.is_retx {
                        again.push(out)
                    } else {
                        queue.push_back(out)
                    }
                }
            }
        }
        (segs, again, pair.ep[0].stats.timeouts)
    }

    #[test]
    fn a_lost_retransmission_is_sent_again_once_later_data_is_sacked() {
        let (segs, again, timeouts) = lose_a_retransmission("");
        assert_eq!(again.len(), 1, "sent again without waiting for the RTO");
        assert_eq!(again[0].seq, segs[2].seq);
        assert_eq!(timeouts, 0);
        // With the detection off, only the RTO would repair it.
        let (_, again, _) = lose_a_retransmission("detect_lost_retransmits = false");
        assert!(again.is_empty());
    }

    #[test]
    fn rack_finds_a_lost_retransmission_by_time() {
        let (segs, again, timeouts) = lose_a_retransmission("loss_detection = \"rack_tlp\"\ndetect_lost_retransmits = false");
        assert_eq!(again.len(), 1, "RACK resends it once data sent after it is SACKed");
        assert_eq!(again[0].seq, segs[2].seq);
        assert_eq!(timeouts, 0);
    }

    /// RFC 8985 §3.2: the last three of ten segments are lost. With RACK-TLP
    /// a probe (the tenth again) goes out after two SRTTs, its SACK shows
    /// the other two lost, and fast recovery repairs them: no timeout.
    /// With DupThresh only the RTO can.
    #[test]
    fn a_tail_loss_probe_turns_a_timeout_into_fast_recovery() {
        for rack in [true, false] {
            let config = if rack { "loss_detection = \"rack_tlp\"\n" } else { "" };
            let mut pair = Pair::connected(params(&format!("rtt_clock = \"linux\"\ndelayed_ack = {{ enabled = false }}\n{config}")));
            let segs = data(&mut pair, 10);
            let acks: Vec<Packet> = segs[..7].iter().flat_map(|s| pair.to(1, s)).collect();
            for a in &acks {
                assert!(pair.to(0, a).is_empty());
            }
            let rto_at = pair.ep[0].rto_timer.deadline.expect("RTO armed");
            let Some(pto) = pair.ep[0].rack_timer.deadline else {
                assert!(!rack, "RACK-TLP arms a probe");
                continue;
            };
            assert!(rack);
            // 2 SRTT after the last ACK (its clock is in whole microseconds).
            assert_eq!(pto, pair.now + pair.ep[0].rtt.srtt.saturating_mul(2));
            assert!(pto < rto_at);
            pair.now = pto;
            let mut out = TcpOut::default();
            pair.ep[0].on_timer(pto, TimerKind::Rack, &pair.p, &mut out);
            pair.ep[0].flush(pto, &pair.p, &mut out);
            assert_eq!(out.packets.len(), 1, "one probe");
            let probe = out.packets[0];
            assert!(probe.is_retx && probe.seq == segs[9].seq, "the highest segment again (no new data)");
            assert_eq!(pair.ep[0].stats.tail_loss_probes, 1);
            let sack = pair.to(1, &probe).remove(0);
            assert_eq!(sack.ack, segs[7].seq);
            // The probe's ACK takes an RTT like the others (the test wire is
            // faster than that, and RACK would take it for the original's).
            pair.now += pair.ep[0].rtt.srtt;
            let repairs = pair.to(0, &sack);
            assert_eq!(repairs.iter().map(|p| p.seq).collect::<Vec<_>>(), [segs[7].seq, segs[8].seq]);
            assert!(pair.ep[0].in_recovery());
            let mut last = Vec::new();
            for r in &repairs {
                last = pair.to(1, r);
            }
            pair.to(0, &last[0]);
            assert!(!pair.ep[0].in_recovery() && pair.ep[0].snd_una == pair.ep[0].snd_max);
            assert_eq!((pair.ep[0].stats.timeouts, pair.ep[0].stats.fast_retransmits), (0, 1));
        }
    }

    /// RFC 2883: a duplicate segment is reported in the first SACK block,
    /// and the sender reads it as such.
    #[test]
    fn a_duplicate_segment_is_reported_as_a_dsack() {
        let mut pair = Pair::connected(params("dsack = true"));
        let segs = data(&mut pair, 2);
        let ack = pair.to(1, &segs[0]).remove(0);
        pair.to(1, &segs[1]);
        let dup = pair.to(1, &segs[0]).remove(0);
        let blocks: Vec<(u64, u64)> = dup.sack_blocks().collect();
        assert_eq!(blocks, [(segs[0].seq, segs[0].seq + segs[0].payload as u64)]);
        assert!(ack.nsack == 0 && dup.ack > blocks[0].1, "below the cumulative ACK: a DSACK");
        let next = pair.to(1, &segs[1]).remove(0);
        assert_eq!(next.nsack, 1, "each duplicate is reported once");
    }

    #[test]
    fn newreno_without_sack_retransmits_each_hole_on_partial_acks() {
        let mut pair = Pair::connected(params("sack = false"));
        let segs = data(&mut pair, 10);
        let mut acks = Vec::new();
        for (i, s) in segs.iter().enumerate() {
            if i != 2 && i != 5 {
                acks.extend(pair.to(1, s));
            }
        }
        let mut retx = Vec::new();
        for a in &acks {
            retx.extend(pair.to(0, a).into_iter().filter(|p| p.is_retx));
        }
        assert_eq!(retx.len(), 1, "fast retransmit of the first hole");
        assert_eq!(retx[0].seq, segs[2].seq);
        // The retransmission yields a partial ACK, which retransmits the next hole.
        let partial = pair.to(1, &retx[0]).remove(0);
        assert_eq!(partial.ack, segs[5].seq);
        let second: Vec<Packet> = pair.to(0, &partial).into_iter().filter(|p| p.is_retx).collect();
        assert_eq!(second.len(), 1);
        assert_eq!(second[0].seq, segs[5].seq);
        let full = pair.to(1, &second[0]).remove(0);
        pair.to(0, &full);
        assert!(!pair.ep[0].in_recovery());
        assert_eq!(pair.ep[0].stats.fast_retransmits, 1);
        assert_eq!(pair.ep[0].stats.timeouts, 0);
    }

    #[test]
    fn a_dctcp_window_below_one_segment_waits_for_the_timer() {
        // tcp.dctcp_min_cwnd = 0 (ns-3 3.44): a fully marked 1-segment window
        // is cut to half a segment; with nothing in flight nothing may be
        // sent, so the flow waits for the retransmission timer, which sends a
        // full segment.
        let mut pair = Pair::connected(params("cc = \"dctcp\"\ndctcp_min_cwnd = 0\ninitial_cwnd = 1\nmin_rto = \"1ms\"\ndelayed_ack = { enabled = false }"));
        let mss = pair.ep[0].mss as u64;
        let mut seg = pair.write(0, 10 * mss);
        assert_eq!(seg.len(), 1);
        seg[0].ecn = Ecn::Ce;
        let ack = pair.to(1, &seg[0]).remove(0);
        assert!(ack.has(flags::ECE));
        assert!(pair.to(0, &ack).is_empty(), "a window below one segment sends nothing");
        assert_eq!(pair.ep[0].cc.cwnd, mss / 2);
        let deadline = pair.ep[0].rto_timer.deadline.expect("the stalled flow keeps a timer");
        let mut out = TcpOut::default();
        pair.ep[0].on_timer(deadline, TimerKind::Rto, &pair.p, &mut out);
        assert_eq!(pair.ep[0].stats.timeouts, 1);
        assert_eq!(out.packets.len(), 1);
        assert_eq!((out.packets[0].seq, out.packets[0].payload as u64), (1 + mss, mss));
        // With Linux's floor of 2 segments the same ACK sends at once.
        let mut pair = Pair::connected(params("cc = \"dctcp\"\ninitial_cwnd = 1\ndelayed_ack = { enabled = false }"));
        let mut seg = pair.write(0, 10 * mss);
        seg[0].ecn = Ecn::Ce;
        let ack = pair.to(1, &seg[0]).remove(0);
        assert_eq!(pair.to(0, &ack).len(), 2);
    }

    #[test]
    fn new_data_after_an_idle_rto_restarts_from_the_initial_window() {
        // RFC 5681 §4.1. Grow cwnd from 2 to 4 segments, go idle, then write again.
        let send_after_idle = |conf: &str, idle: Dur| {
            let mut pair = Pair::connected(params(conf));
            for seg in pair.write(0, 2 * pair.ep[0].mss as u64) {
                let ack = pair.to(1, &seg);
                pair.to(0, &ack[0]);
            }
            assert_eq!(pair.ep[0].cc.cwnd, 4 * pair.ep[0].mss as u64);
            pair.now += idle;
            pair.write(0, 20 * pair.ep[0].mss as u64).len()
        };
        let base = "initial_cwnd = 2\nmin_rto = \"10ms\"\ndelayed_ack = { enabled = false }";
        assert_eq!(send_after_idle(base, Dur::from_ms(20)), 2, "idle longer than the RTO: IW");
        assert_eq!(send_after_idle(base, Dur::from_ms(5)), 4, "idle shorter than the RTO: cwnd kept");
        assert_eq!(send_after_idle(&format!("{base}\nrestart_after_idle = false"), Dur::from_ms(20)), 4);
    }

    #[test]
    fn a_receive_window_below_one_segment_sends_partial_segments_and_resends_them_after_a_timeout() {
        // HSCC writes rwnd = 1 MSS into ACKs; with window scaling the field can
        // round below a full segment. The sender sends what fits when nothing
        // is in flight, and after a timeout resends it (go-back-N from
        // snd_una), rather than waiting for a window that never grows.
        let mut pair = Pair::connected(params("window_scale = false\nrcv_buffer = \"64KB\"\nmin_rto = \"10ms\"\ninitial_cwnd = 1\ndelayed_ack = { enabled = false }"));
        let mss = pair.ep[0].mss as u64;
        let seg = pair.write(0, 10 * mss);
        let mut ack = pair.to(1, &seg[0]).remove(0);
        ack.window = 1000;
        let partial = pair.to(0, &ack);
        assert_eq!(partial.len(), 1);
        assert_eq!((partial[0].seq, partial[0].payload), (1 + mss, 1000));
        // The partial segment is lost: the timer resends it.
        let deadline = pair.ep[0].rto_timer.deadline.expect("armed");
        let mut out = TcpOut::default();
        pair.ep[0].on_timer(deadline, TimerKind::Rto, &pair.p, &mut out);
        assert_eq!(out.packets.len(), 1);
        assert_eq!((out.packets[0].seq, out.packets[0].payload, out.packets[0].is_retx), (1 + mss, 1000, true));
    }

    #[test]
    fn the_ssthresh_bases_at_a_timeout() {
        // cwnd 9 segments, 7 in flight: RFC 5681 halves FlightSize (3.5),
        // Linux cwnd (4.5), FreeBSD cwnd in whole segments (4).
        for (basis, segments) in [("flightsize", 3.5), ("cwnd", 4.5), ("freebsd", 4.0)] {
            let mut pair = Pair::connected(params(&format!("initial_cwnd = 9\nmin_rto = \"1ms\"\nssthresh_basis = \"{basis}\"")));
            data(&mut pair, 7);
            fire_rto(&mut pair);
            let mss = pair.ep[0].mss as f64;
            assert_eq!(pair.ep[0].cc.ssthresh as f64 / mss, segments, "{basis}");
        }
    }

    #[test]
    fn rto_retransmits_from_snd_una_with_one_segment() {
        let mut pair = Pair::connected(params("min_rto = \"1ms\""));
        let segs = data(&mut pair, 4);
        let deadline = pair.ep[0].rto_timer.deadline.expect("RTO armed while data is outstanding");
        pair.now = deadline;
        let mut out = TcpOut::default();
        pair.ep[0].on_timer(deadline, TimerKind::Rto, &pair.p, &mut out);
        assert_eq!(pair.ep[0].stats.timeouts, 1);
        assert_eq!(out.packets.len(), 1, "cwnd = 1 SMSS after a timeout");
        assert_eq!(out.packets[0].seq, segs[0].seq);
        assert!(out.packets[0].is_retx);
        assert_eq!(pair.ep[0].rtt.backoff, 1);
    }

    #[test]
    fn backed_off_rto_returns_on_an_rtt_sample_or_with_ns3_on_any_new_ack() {
        // The ACK of a retransmitted segment is no RTT sample (Karn): RFC 6298
        // keeps the doubled RTO; ns-3's NewAck recomputes it on any new ACK.
        for (reset, backoff) in [("rtt_sample", 1), ("new_ack", 0)] {
            let mut pair = Pair::connected(params(&format!(
                "min_rto = \"1ms\"\ntimestamps = false\nrto_backoff_reset = \"{reset}\"")));
            let segs = data(&mut pair, 4);
            fire_rto(&mut pair);
            assert_eq!(pair.ep[0].rtt.backoff, 1, "{reset}");
            let rto = pair.ep[0].rtt.rto(&pair.p.rtt);
            deliver_ack_last(&mut pair, &segs[..1]);
            assert_eq!(pair.ep[0].rtt.backoff, backoff, "{reset}");
            let deadline = pair.ep[0].rto_timer.deadline.expect("data still outstanding");
            let expected = if backoff == 0 { Dur(rto.ps() / 2) } else { rto };
            assert_eq!(deadline, pair.now + expected, "{reset}");
        }
    }

    /// F-RTO after a spurious timeout: four segments are held up (not
    /// lost), the RTO fires and retransmits the first, and more data waits
    /// to be sent. Returns the pair, the four originals and the window
    /// before the timeout.
    fn frto_after_a_delay(tcp: &str) -> (Pair, Vec<Packet>, u64) {
        let mut pair = Pair::connected(params(&format!("frto = true\nmin_rto = \"1ms\"\n{tcp}")));
        // One segment first, so that the sender has the receiver's scaled
        // window (a changed window would make a duplicate ACK no duplicate).
        let first = data(&mut pair, 1);
        deliver_ack_last(&mut pair, &first);
        let segs = data(&mut pair, 4);
        pair.write(0, 10 * pair.ep[0].mss as u64);
        let cwnd = pair.ep[0].cc.cwnd;
        let rexmit = fire_rto(&mut pair);
        assert_eq!((rexmit.len(), rexmit[0].seq), (1, segs[0].seq));
        (pair, segs, cwnd)
    }

    fn fire_rto(pair: &mut Pair) -> Vec<Packet> {
        let deadline = pair.ep[0].rto_timer.deadline.expect("RTO armed while data is outstanding");
        pair.now = deadline;
        let mut out = TcpOut::default();
        pair.ep[0].on_timer(deadline, TimerKind::Rto, &pair.p, &mut out);
        out.packets
    }

    /// Deliver data segments to the receiver and the ACK of the last one to
    /// the sender (the earlier ACKs are lost); what the sender sends.
    fn deliver_ack_last(pair: &mut Pair, segs: &[Packet]) -> Vec<Packet> {
        let acks: Vec<Packet> = segs.iter().flat_map(|s| pair.to(1, s)).collect();
        pair.to(0, acks.last().expect("an ACK"))
    }

    #[test]
    fn frto_sends_new_data_after_the_first_ack_and_undoes_a_spurious_timeout() {
        for sack in ["sack = true", "sack = false"] {
            let (mut pair, segs, cwnd) = frto_after_a_delay(sack);
            // Step 2b: the original of the retransmitted segment arrives; two
            // new segments go out instead of going back N.
            let sent = deliver_ack_last(&mut pair, &segs[..1]);
            assert_eq!(sent.len(), 2, "{sack}");
            assert!(sent.iter().all(|p| !p.is_retx && p.seq >= segs[3].seq + segs[3].payload as u64), "{sack}: new data");
            // Step 3b: the next ACK acknowledges data sent before the timeout.
            deliver_ack_last(&mut pair, &segs[1..2]);
            assert_eq!(pair.ep[0].stats.spurious_timeouts, 1, "{sack}");
            assert_eq!(pair.ep[0].cc.cwnd, cwnd, "{sack}: window restored");
        }
    }

    #[test]
    fn bad_rexmit_undo_restores_an_interrupted_fast_recovery_and_resumes_at_snd_max() {
        // FreeBSD's CC_RTO_ERR (seed 004 §6.3.2). A 1 ms clock makes SRTT one
        // tick, so the window is 500 us of real time.
        let mut pair = Pair::connected(params("bad_rexmit_undo = true\nrtt_granularity = \"1ms\"\nmin_rto = \"0s\"\ndelayed_ack = { enabled = false }"));
        let segs = data(&mut pair, 6);
        // Segment 0 is lost; 1-3 arrive, and the third duplicate ACK starts
        // fast recovery with a retransmission of 0, which is lost too.
        let mut sent = vec![];
        for s in &segs[1..4] {
            let ack = pair.to(1, s).remove(0);
            sent.extend(pair.to(0, &ack));
        }
        assert!(sent.iter().any(|p| p.is_retx && p.seq == segs[0].seq));
        assert!(matches!(pair.ep[0].recovery, Recovery::Fast { .. }));
        let cwnd = pair.ep[0].cc.cwnd;
        // The timeout resends 0; its ACK returns 2 us later, inside the window.
        let rexmit = fire_rto(&mut pair);
        assert_eq!((rexmit.len(), rexmit[0].seq), (1, segs[0].seq));
        assert_eq!(pair.ep[0].recovery, Recovery::Open);
        let after = deliver_ack_last(&mut pair, &rexmit);
        assert_eq!(pair.ep[0].stats.spurious_timeouts, 1);
        assert_eq!(pair.ep[0].cc.cwnd, cwnd, "window restored");
        assert!(matches!(pair.ep[0].recovery, Recovery::Fast { .. }), "fast recovery resumed");
        assert_eq!(pair.ep[0].snd_nxt, pair.ep[0].snd_max);
        // Segments 4 and 5 count as in flight: nothing is resent now.
        assert!(after.iter().all(|p| !p.is_retx), "{after:?}");
    }

    #[test]
    fn sack_enhanced_frto_waits_through_duplicate_acks_in_step_2() {
        // A duplicate ACK before the retransmission's ACK: §2.1 falls back to
        // going back N; §3.1 notes the SACK block and waits (RFC 5682).
        for (sack, spurious) in [("sack = true", 1), ("sack = false", 0)] {
            let (mut pair, segs, _) = frto_after_a_delay(sack);
            deliver_ack_last(&mut pair, &segs[1..2]);
            deliver_ack_last(&mut pair, &segs[..1]);
            deliver_ack_last(&mut pair, &segs[2..3]);
            assert_eq!(pair.ep[0].stats.spurious_timeouts, spurious, "{sack}");
        }
    }

    #[test]
    fn sack_enhanced_frto_judges_step_3_by_what_is_sacked_below_the_recovery_point() {
        // Step 3 after 2b: a duplicate ACK that SACKs pre-timeout data proves
        // the timeout spurious with SACK (§3.1 3b); without, a duplicate ACK
        // means it was genuine (§2.1 3a).
        for (sack, spurious) in [("sack = true", 1), ("sack = false", 0)] {
            let (mut pair, segs, _) = frto_after_a_delay(sack);
            deliver_ack_last(&mut pair, &segs[..1]);
            deliver_ack_last(&mut pair, &segs[2..3]);
            assert_eq!(pair.ep[0].stats.spurious_timeouts, spurious, "{sack}");
        }
        // An ACK covering the new segments too: spurious for §2.1 (it
        // advanced), genuine for §3.1 (beyond the recovery point: 3a, back
        // to at most three segments in slow start).
        for (sack, spurious) in [("sack = true", 0), ("sack = false", 1)] {
            let (mut pair, segs, _) = frto_after_a_delay(sack);
            let new = deliver_ack_last(&mut pair, &segs[..1]);
            let all: Vec<Packet> = segs[1..].iter().chain(&new).copied().collect();
            deliver_ack_last(&mut pair, &all);
            assert_eq!(pair.ep[0].stats.spurious_timeouts, spurious, "{sack}");
            if spurious == 0 {
                assert!(pair.ep[0].cc.cwnd <= 3 * pair.ep[0].mss as u64, "{sack}");
            }
        }
    }

    #[test]
    fn frto_restarts_on_a_repeated_timeout_and_stays_out_of_a_timeout_recovery() {
        // A second timeout before any ACK restarts F-RTO (RFC 5682 §2.1),
        // still undoing to the window from before the first.
        let (mut pair, segs, cwnd) = frto_after_a_delay("");
        fire_rto(&mut pair);
        assert_eq!(pair.ep[0].rtt.backoff, 2);
        deliver_ack_last(&mut pair, &segs[..1]);
        deliver_ack_last(&mut pair, &segs[1..2]);
        assert_eq!(pair.ep[0].stats.spurious_timeouts, 1);
        assert_eq!(pair.ep[0].cc.cwnd, cwnd);
        // After a fall-back (a duplicate ACK in step 2, no SACK) the
        // timeout's recovery is under way: a timeout in it does not enter
        // F-RTO (step 1), and nothing is undone.
        let (mut pair, segs, _) = frto_after_a_delay("sack = false");
        deliver_ack_last(&mut pair, &segs[1..2]);
        assert_eq!(pair.ep[0].frto, Frto::Off);
        fire_rto(&mut pair);
        assert_eq!(pair.ep[0].frto, Frto::Off);
        deliver_ack_last(&mut pair, &segs[..1]);
        deliver_ack_last(&mut pair, &segs[2..3]);
        assert_eq!(pair.ep[0].stats.spurious_timeouts, 0);
    }

    #[test]
    fn a_timeout_that_forgets_sack_goes_back_n_over_sacked_segments() {
        // Segments 3 and 6 of 10 are lost and recovery does not repair them
        // before the timer fires. Going back N after the timeout, the ACK of
        // 3 lets two segments go: Linux (the default) sends only 6, skipping
        // the SACKed 7; FreeBSD's stack (tcp.rto_forgets_sack) forgot the
        // SACK and sends 6 and 7. The ACK of 6 then covers everything.
        let resent = |config: &str| {
            let mut pair = Pair::connected(params(&format!("min_rto = \"1ms\"\ndetect_lost_retransmits = false\n{config}")));
            let segs = data(&mut pair, 10);
            let acks: Vec<Packet> = segs.iter().enumerate().filter(|(i, _)| *i != 2 && *i != 5).flat_map(|(_, s)| pair.to(1, s)).collect();
            for a in &acks {
                pair.to(0, a); // fast retransmits, all lost
            }
            let mut sent = fire_rto(&mut pair);
            let mut seqs = Vec::new();
            while let Some(seg) = sent.pop() {
                seqs.push((seg.seq - segs[0].seq) / seg.payload as u64);
                for a in pair.to(1, &seg) {
                    sent.extend(pair.to(0, &a));
                }
            }
            seqs.sort();
            seqs
        };
        assert_eq!(resent(""), [2, 5]);
        assert_eq!(resent("rto_forgets_sack = true"), [2, 5, 6]);
    }

    // ---- review findings (issue 26): each test failed before its fix ----------

    /// Deliver packets in order until nothing is in flight: the first
    /// transmission of data segment i (counted in MSS from `first_seq`) is
    /// dropped if i is in `lose` and CE-marked if in `mark`.
    fn exchange(pair: &mut Pair, start: Vec<Packet>, first_seq: u64, lose: &[u64], mark: &[u64]) {
        let mss = pair.ep[0].mss as u64;
        let mut queue: std::collections::VecDeque<(usize, Packet)> = start.into_iter().map(|p| (1, p)).collect();
        let mut steps = 0;
        while let Some((to, mut pkt)) = queue.pop_front() {
            steps += 1;
            assert!(steps < 100_000, "the exchange does not end");
            if to == 1 && pkt.payload > 0 && !pkt.is_retx {
                let i = (pkt.seq - first_seq) / mss;
                if lose.contains(&i) {
                    continue;
                }
                if mark.contains(&i) {
                    pkt.ecn = Ecn::Ce;
                }
            }
            for out in pair.to(to, &pkt) {
                queue.push_back((1 - to, out));
            }
        }
    }

    #[test]
    fn an_ece_after_a_timeout_is_not_a_second_reduction_and_new_data_carries_cwr() {
        // RFC 3168 §6.1.2: a timeout is the window's reduction ("for any
        // reason"): an ECN-Echo for that window does not reduce again, and
        // the first new data after it carries CWR.
        for cc in ["ecn = true", "cc = \"dctcp\""] {
            let mut pair = Pair::connected(params(&format!("{cc}\nmin_rto = \"1ms\"\ndelayed_ack = {{ enabled = false }}")));
            let mss = pair.ep[0].mss as u64;
            let segs = data(&mut pair, 2);
            pair.to(1, &segs[1]); // segment 0 is lost, and the duplicate ACK too
            let mut rexmit = fire_rto(&mut pair);
            assert_eq!(pair.ep[0].cc.cwnd, mss);
            assert!(pair.write(0, 4 * mss).is_empty(), "the window is full");
            rexmit[0].ecn = Ecn::Ce;
            let ack = pair.to(1, &rexmit[0]).remove(0);
            assert!(ack.has(flags::ECE));
            let sent = pair.to(0, &ack);
            assert_eq!(pair.ep[0].stats.ecn_reductions, 0, "{cc}: the timeout was this window's reduction");
            assert_eq!(pair.ep[0].cc.cwnd, mss, "{cc}: no growth on ECN-Echo, and no window raised by a 'reduction'");
            let first_new = sent.iter().find(|p| p.payload > 0).expect("new data");
            assert!(first_new.has(flags::CWR), "{cc}: CWR after the timeout's reduction");
        }
    }

    #[test]
    fn a_mark_after_a_loss_in_one_window_is_one_reduction() {
        // Segment 2 is lost, segment 5 marked: one congestion event. The
        // receiver latches ECE until it sees CWR (RFC 3168 §6.1.3), so the
        // sender must send CWR after the fast retransmit's reduction, or the
        // echo outlives recovery and halves the window a second time.
        let mut pair = Pair::connected(params("ecn = true\ndelayed_ack = { enabled = false }"));
        let mss = pair.ep[0].mss as u64;
        let segs = data(&mut pair, 10);
        pair.write(0, 40 * mss);
        exchange(&mut pair, segs.clone(), segs[0].seq, &[2], &[5]);
        let e = &pair.ep[0];
        assert_eq!(e.snd_una, e.snd_max, "everything delivered");
        assert_eq!((e.stats.fast_retransmits, e.stats.timeouts), (1, 0));
        assert_eq!(e.stats.ecn_reductions, 0, "the loss was the window's reduction");
    }

    #[test]
    fn the_window_of_an_ecn_reduction_grows_only_with_grow_in_cwr() {
        // Segment 0 is marked: its ACK halves the window, and the other nine
        // ACKs (all echoing, as no CWR has been sent) leave it there, as
        // Linux's and ns-3's CWR state; htsim's TcpSrc grows on every ACK.
        for grow in [false, true] {
            let mut pair = Pair::connected(params(&format!("ecn = true\ndelayed_ack = {{ enabled = false }}\ngrow_in_cwr = {grow}")));
            let mss = pair.ep[0].mss as u64;
            let segs = data(&mut pair, 10);
            exchange(&mut pair, segs.clone(), segs[0].seq, &[], &[0]);
            let e = &pair.ep[0];
            // Halved from the nine segments in flight after the first ACK.
            assert_eq!((e.stats.ecn_reductions, e.cc.ssthresh), (1, 9 * mss / 2));
            if grow {
                assert!(e.cc.cwnd > e.cc.ssthresh, "cwnd {} ssthresh {}", e.cc.cwnd, e.cc.ssthresh);
            } else {
                assert_eq!(e.cc.cwnd, e.cc.ssthresh);
            }
        }
    }

    #[test]
    fn a_loss_after_a_mark_in_one_window_does_not_halve_again() {
        // Segment 1 is marked, segment 4 lost: the ECN reduction comes
        // first, and the fast retransmit in the same window keeps its
        // ssthresh (RFC 3168 §6.1.2: reduce once per window of data; Linux's
        // and ns-3's CWR state).
        let mut pair = Pair::connected(params("ecn = true\nssthresh_basis = \"cwnd\"\ndelayed_ack = { enabled = false }"));
        let segs = data(&mut pair, 10);
        exchange(&mut pair, segs[..3].to_vec(), segs[0].seq, &[], &[1]);
        assert_eq!(pair.ep[0].stats.ecn_reductions, 1);
        let after_mark = pair.ep[0].cc.ssthresh;
        exchange(&mut pair, segs[3..].to_vec(), segs[0].seq, &[4], &[]);
        let e = &pair.ep[0];
        assert_eq!((e.stats.fast_retransmits, e.stats.timeouts), (1, 0));
        assert_eq!(e.cc.ssthresh, after_mark, "one reduction for one window");
    }

    #[test]
    fn duplicate_acks_of_data_sent_before_a_timeout_do_not_start_a_fast_retransmit() {
        // Without SACK, going back N after a timeout resends segments the
        // receiver holds; their duplicate ACKs must not start a fast
        // retransmit (and a second halving) until everything sent before
        // the timeout is acknowledged (RFC 6582 §3.2 step 1 with "recover"
        // set at the timeout, §4.1; RFC 6675 §5.1; FreeBSD's snd_recover).
        for lost in [vec![0, 2, 4, 6], vec![0, 1, 3, 5, 7], vec![0, 3]] {
            let mut pair = Pair::connected(params("sack = false\nmin_rto = \"1ms\"\ndelayed_ack = { enabled = false }"));
            let mss = pair.ep[0].mss as u64;
            let segs = data(&mut pair, 10);
            for (i, s) in segs.iter().enumerate() {
                if !lost.contains(&(i as u64)) {
                    pair.to(1, s); // delivered; the duplicate ACKs are lost
                }
            }
            pair.write(0, 40 * mss);
            let rexmit = fire_rto(&mut pair);
            exchange(&mut pair, rexmit, segs[0].seq, &[], &[]);
            let e = &pair.ep[0];
            assert_eq!(e.snd_una, e.snd_max);
            assert_eq!((e.stats.timeouts, e.stats.fast_retransmits), (1, 0), "lost {lost:?}: a spurious fast retransmit");
        }
    }

    #[test]
    fn leaving_sack_recovery_the_window_is_ssthresh_or_flightsize_plus_one_as_configured() {
        // RFC 6582 §3.2 step 3: option (2), cwnd = ssthresh (the default, as
        // Linux and ns-3), or option (1), min(ssthresh, FlightSize + SMSS)
        // (tcp.recovery_exit = "flightsize", as FreeBSD).
        for (exit, segments) in [("ssthresh", 4), ("flightsize", 2)] {
            let mut pair = Pair::connected(params(&format!("recovery_exit = \"{exit}\"\ndelayed_ack = {{ enabled = false }}")));
            let mss = pair.ep[0].mss as u64;
            let segs = data(&mut pair, 10);
            exchange(&mut pair, segs.clone(), segs[0].seq, &[2], &[]);
            let e = &pair.ep[0];
            assert_eq!((e.stats.fast_retransmits, e.snd_una), (1, e.snd_max));
            assert_eq!(e.cc.ssthresh, 4 * mss);
            // Nothing is in flight at the full ACK: FlightSize + SMSS = 1 SMSS, at least 2 by max(FlightSize, SMSS).
            assert_eq!(e.cc.cwnd, segments * mss, "{exit}");
        }
    }

    #[test]
    fn newreno_restarts_the_timer_on_the_first_partial_ack_only() {
        // RFC 6582 §3.2 step 5 and §4: the "Impatient" variant, so that many
        // holes end in a timeout rather than one RTT per hole.
        let mut pair = Pair::connected(params("sack = false\ndelayed_ack = { enabled = false }"));
        let segs = data(&mut pair, 10);
        let acks: Vec<Packet> = segs.iter().enumerate().filter(|(i, _)| ![2, 5, 8].contains(i)).flat_map(|(_, s)| pair.to(1, s)).collect();
        let mut retx: Vec<Packet> = acks.iter().flat_map(|a| pair.to(0, a)).filter(|p| p.is_retx).collect();
        assert_eq!((retx.len(), pair.ep[0].stats.fast_retransmits), (1, 1));
        let mut deadlines = Vec::new();
        for _ in 0..2 {
            let partial = pair.to(1, &retx[0]).remove(0);
            pair.now += Dur::from_us(100);
            retx = pair.to(0, &partial).into_iter().filter(|p| p.is_retx).collect();
            deadlines.push(pair.ep[0].rto_timer.deadline.expect("armed"));
        }
        assert_eq!(deadlines[0], deadlines[1], "the second partial ACK does not restart the timer");
    }

    #[test]
    fn dctcp_updates_alpha_once_per_window_from_the_first_ack() {
        // RFC 8257 §3.3: WindowEnd starts at SND.NXT when the connection
        // starts, so the first ACK of data ends the first "window" and
        // updates alpha (as Linux's dctcp_init); from then on once per
        // window of data.
        let mut pair = Pair::connected(params("cc = \"dctcp\"\ndelayed_ack = { enabled = false }"));
        let g = 1.0 / 16.0;
        let segs = data(&mut pair, 4);
        let acks: Vec<Packet> = segs.iter().flat_map(|s| pair.to(1, s)).collect();
        pair.to(0, &acks[0]);
        assert!((pair.ep[0].cc.alpha - (1.0 - g)).abs() < 1e-12, "the first ACK: an unmarked window");
        for a in &acks[1..] {
            pair.to(0, a);
        }
        assert!((pair.ep[0].cc.alpha - (1.0 - g)).abs() < 1e-12, "the rest of the window is one update away");
    }

    #[test]
    fn an_ack_of_data_never_sent_is_answered_with_an_ack() {
        // RFC 9293 §3.10.7.4: SEG.ACK > SND.NXT: send an ACK, drop the segment.
        let mut pair = Pair::connected(params(""));
        let segs = data(&mut pair, 1);
        let mut ack = pair.to(1, &segs[0]).remove(0);
        ack.ack += 100_000;
        let answer = pair.to(0, &ack);
        assert_eq!(answer.len(), 1);
        assert!(answer[0].payload == 0 && answer[0].has(flags::ACK));
        assert_eq!(pair.ep[0].snd_una, segs[0].seq, "the bogus ACK acknowledged nothing");
    }

    #[test]
    fn an_old_segment_does_not_update_the_send_window() {
        // RFC 9293 §3.10.7.4: the window is taken from a segment only if
        // SND.WL1 < SEG.SEQ, or SND.WL1 = SEG.SEQ and SND.WL2 =< SEG.ACK.
        let mut pair = Pair::connected(params(""));
        let segs = data(&mut pair, 1);
        let ack = pair.to(1, &segs[0]).remove(0);
        let (mut newer, mut older) = (ack, ack);
        newer.seq += 1000; // the peer's later segment (it sent data meanwhile)
        older.window = 1; // reordered: an earlier segment with a smaller window
        pair.to(0, &newer);
        let wnd = pair.ep[0].snd_wnd;
        pair.to(0, &older);
        assert_eq!(pair.ep[0].snd_wnd, wnd);
    }

    #[test]
    fn after_a_syn_timeout_data_starts_with_a_three_second_rto() {
        // RFC 6298 §5.7 (and Linux's TCP_TIMEOUT_FALLBACK): no RTT sample
        // from the retransmitted SYN, and an RTO re-initialised to 3 s.
        let p = params("initial_rto = \"1s\"");
        let mut pair = Pair { ep: [Endpoint::new(0, 0, 0, 1, 7, 0, &p), Endpoint::new(0, 1, 1, 0, 7, 0, &p)], p, now: SimTime(0) };
        let mut out = TcpOut::default();
        pair.ep[0].open(pair.now, &pair.p, &mut out); // this SYN is lost
        let syn = fire_rto(&mut pair).remove(0);
        let synack = pair.to(1, &syn).remove(0);
        let ack = pair.to(0, &synack).remove(0);
        pair.to(1, &ack);
        let segs = data(&mut pair, 1);
        assert_eq!(pair.ep[0].rto_timer.deadline, Some(pair.now + Dur::from_secs(3)), "sent at {:?}", segs[0].seq);
    }

    #[test]
    fn without_the_syn_timeout_reset_the_backed_off_initial_rto_goes_on() {
        // tcp.syn_timeout_rto = "0s" (ns-2, ns-3): 200 ms doubled by the SYN's timeout.
        let p = params("initial_rto = \"200ms\"\nsyn_timeout_rto = \"0s\"");
        let mut pair = Pair { ep: [Endpoint::new(0, 0, 0, 1, 7, 0, &p), Endpoint::new(0, 1, 1, 0, 7, 0, &p)], p, now: SimTime(0) };
        let mut out = TcpOut::default();
        pair.ep[0].open(pair.now, &pair.p, &mut out);
        let syn = fire_rto(&mut pair).remove(0);
        let synack = pair.to(1, &syn).remove(0);
        let ack = pair.to(0, &synack).remove(0);
        pair.to(1, &ack);
        data(&mut pair, 1);
        assert_eq!(pair.ep[0].rto_timer.deadline, Some(pair.now + Dur::from_ms(400)));
    }

    #[test]
    fn a_repeated_timeout_of_the_same_data_holds_ssthresh() {
        // RFC 5681 §3.1: when the retransmission timer fires again for data
        // already retransmitted by it, ssthresh is held constant (Linux's
        // tcp_enter_loss, FreeBSD's t_rxtshift == 1 test).
        let mut pair = Pair::connected(params("min_rto = \"1ms\""));
        data(&mut pair, 10);
        fire_rto(&mut pair);
        let first = pair.ep[0].cc.ssthresh;
        assert_eq!(first, 5 * pair.ep[0].mss as u64);
        fire_rto(&mut pair);
        assert_eq!(pair.ep[0].cc.ssthresh, first, "held, not halved again from a one-segment flight");
    }
}
