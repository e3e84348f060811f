//! The scenario schema: what a user writes (TOML, or the same structure as a
//! Python dict / JSON), its defaults, and its validation.
//!
//! Rust owns the schema. Unknown keys are rejected (`deny_unknown_fields`),
//! quantities need units (see [`crate::units`]), and [`Scenario::validate`]
//! checks everything that would make a run meaningless *before* anything
//! runs. Every error names the key path, the bad value and what is allowed.

use crate::units::{Bytes, Clock, DurV, FlowSize, Headroom, QSize, RateV, Xoff};
use dcsim_engine::Dur;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;

/// A scenario rejected before running: the key path, and what is wrong there.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub path: String,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() || self.path == "." {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}
impl std::error::Error for ConfigError {}

fn err(path: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError { path: path.into(), message: message.into() }
}

// ---- tagged enums ------------------------------------------------------------
//
// Variants are chosen by a `type` key. serde's internally tagged enums buffer
// their content and lose the key path of errors inside a variant, so these
// enums deserialize through `tagged()`, which carries the inner path out in
// the error text; `split_nested` puts it back together.

const NESTED: char = '\u{1}';

/// Join an outer key path with a nested error of the form "\u{1}inner\u{1}message".
fn split_nested(outer: &str, msg: &str) -> (String, String) {
    match msg.strip_prefix(NESTED).and_then(|rest| rest.split_once(NESTED)) {
        Some((inner, m)) => {
            let path = match (outer, inner) {
                (".", i) | ("", i) => i.to_string(),
                (o, ".") | (o, "") => o.to_string(),
                (o, i) if i.starts_with('[') => format!("{o}{i}"),
                (o, i) => format!("{o}.{i}"),
            };
            (path, m.to_string())
        }
        None => (outer.to_string(), msg.to_string()),
    }
}

/// Builds one variant of a tagged enum from its table (the `type` key removed).
type VariantFn<T> = fn(serde_json::Value) -> Result<T, serde_path_to_error::Error<serde_json::Error>>;

pub(crate) fn tagged<'de, D, T>(d: D, what: &str, variants: &[(&str, VariantFn<T>)]) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
{
    use serde::de::Error;
    let mut v = serde_json::Value::deserialize(d)?;
    let names: Vec<String> = variants.iter().map(|(n, _)| format!("{n:?}")).collect();
    let obj = v.as_object_mut().ok_or_else(|| D::Error::custom(format!("expected a table with a \"type\" key ({})", names.join(", "))))?;
    let tag = match obj.remove("type") {
        Some(serde_json::Value::String(t)) => t,
        Some(other) => {
            return Err(D::Error::custom(format!("{NESTED}type{NESTED}invalid {what} type {other}: expected one of {}", names.join(", "))))
        }
        None => return Err(D::Error::custom(format!("missing key \"type\": the {what} type, one of {}", names.join(", ")))),
    };
    let (_, build) = variants.iter().find(|(n, _)| *n == tag).ok_or_else(|| {
        D::Error::custom(format!("{NESTED}type{NESTED}unknown {what} type {tag:?}: expected one of {}", names.join(", ")))
    })?;
    build(v).map_err(|e| {
        let (path, msg) = split_nested(&e.path().to_string(), &e.into_inner().to_string());
        D::Error::custom(format!("{NESTED}{path}{NESTED}{msg}"))
    })
}

macro_rules! tagged_deserialize {
    ($enum:ident, $what:literal, { $($name:literal => $([$unit:ident])? $($variant:ident)?),* $(,)? }) => {
        impl<'de> Deserialize<'de> for $enum {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                tagged(d, $what, &[$(($name, |v| {
                    $(
                        #[derive(Deserialize)]
                        #[serde(deny_unknown_fields)]
                        struct Empty {}
                        let _: Empty = serde_path_to_error::deserialize(v)?;
                        Ok($enum::$unit)
                    )?
                    $( serde_path_to_error::deserialize(v).map($enum::$variant) )?
                })),*])
            }
        }
    };
}

// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub run: RunCfg,
    pub topology: Topology,
    #[serde(default)]
    pub link: LinkCfg,
    #[serde(default)]
    pub switch: SwitchCfg,
    #[serde(default)]
    pub host: HostCfg,
    #[serde(default)]
    pub tcp: TcpCfg,
    /// RoCEv2 queue pairs instead of TCP connections for every flow (crate::rdma).
    #[serde(default)]
    pub rdma: Option<RdmaCfg>,
    /// NDP flows instead of TCP connections for every flow (crate::ndp).
    #[serde(default)]
    pub ndp: Option<NdpCfg>,
    /// Homa messages instead of TCP connections for every flow (crate::homa).
    #[serde(default)]
    pub homa: Option<HomaCfg>,
    #[serde(default)]
    pub workload: Vec<Workload>,
    /// Link failures (and recoveries) at given times.
    #[serde(default)]
    pub failure: Vec<Failure>,
    #[serde(default)]
    pub output: OutputCfg,
}

/// The link of `port` (both directions; ids in the ports table) fails at
/// `at` and, with `until`, recovers then. Routes are recomputed each time.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Failure {
    pub port: u32,
    pub at: DurV,
    #[serde(default)]
    pub until: Option<DurV>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunCfg {
    /// Master seed: every random stream derives from it.
    #[serde(default = "one")]
    pub seed: u64,
    /// Simulated time at which the run stops. Required with long-lived flows.
    #[serde(default)]
    pub duration: Option<DurV>,
    /// Stop as soon as every finite workload has completed.
    #[serde(default = "yes")]
    pub stop_when_done: bool,
    /// The order of events due in the same picosecond.
    #[serde(default)]
    pub event_order: EventOrder,
}
impl Default for RunCfg {
    fn default() -> Self {
        RunCfg { seed: 1, duration: None, stop_when_done: true, event_order: EventOrder::Scheduled }
    }
}

/// How events due in the same picosecond are ordered (docs/design.md,
/// "Parallel runs").
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum EventOrder {
    /// In the order they were scheduled, over the whole network.
    #[default]
    Scheduled,
    /// By (origin, the origin's own order): a node's events never wait on
    /// another's, so the run splits over threads (`threads`) with the same
    /// results for every thread count.
    Canonical,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Topology {
    Star(Star),
    Dumbbell(Dumbbell),
    Leafspine(LeafSpine),
    Fattree(FatTree),
    Ring(Ring),
}
tagged_deserialize!(Topology, "topology", { "star" => Star, "dumbbell" => Dumbbell, "leafspine" => Leafspine, "fattree" => Fattree, "ring" => Ring });

/// `switches` switches in a ring (switch i linked to switch i + 1 mod n),
/// `hosts_per_switch` hosts on each (host h on switch h / hosts_per_switch).
/// Routes take the shorter way round: the cyclic buffer dependencies of
/// PFC deadlocks (docs/models/pfc.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ring {
    pub switches: u32,
    pub hosts_per_switch: u32,
    pub link_rate: RateV,
    pub host_delay: DurV,
    pub link_delay: DurV,
}

/// `hosts` hosts on one switch; host i is attached to switch port i.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Star {
    pub hosts: u32,
    pub link_rate: RateV,
    pub link_delay: DurV,
}

/// Senders 0..S-1 on the left switch, receivers S..S+R-1 on the right
/// switch, one bottleneck link between the two switches.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dumbbell {
    pub senders: u32,
    pub receivers: u32,
    pub access_rate: RateV,
    pub access_delay: DurV,
    pub bottleneck_rate: RateV,
    pub bottleneck_delay: DurV,
}

/// Two-tier leaf-spine: hosts 0..H-1 in leaf order (host h is on leaf
/// h / hosts_per_leaf); every leaf connects to every spine with
/// `links_per_pair` links.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeafSpine {
    pub leaves: u32,
    pub spines: u32,
    pub hosts_per_leaf: u32,
    pub host_rate: RateV,
    /// Leaf-spine link rate. Give this or `oversubscription`.
    #[serde(default)]
    pub uplink_rate: Option<RateV>,
    /// Host capacity over uplink capacity per leaf; sets the uplink rate to
    /// host_rate * hosts_per_leaf / (spines * links_per_pair * oversubscription).
    #[serde(default)]
    pub oversubscription: Option<f64>,
    #[serde(default = "one_u32")]
    pub links_per_pair: u32,
    pub host_delay: DurV,
    pub uplink_delay: DurV,
    /// Forwarding latency per tier (default: switch.forwarding_latency).
    #[serde(default)]
    pub leaf_latency: Option<DurV>,
    #[serde(default)]
    pub spine_latency: Option<DurV>,
}

impl LeafSpine {
    pub fn uplink(&self) -> dcsim_engine::Rate {
        match (self.uplink_rate, self.oversubscription) {
            (Some(r), _) => r.0,
            (None, Some(o)) => {
                let bps = self.host_rate.0.bps as f64 * self.hosts_per_leaf as f64 / (self.spines as f64 * self.links_per_pair as f64 * o);
                dcsim_engine::Rate::from_bps(bps.round().max(1.0) as u64)
            }
            (None, None) => self.host_rate.0,
        }
    }
}

/// k-ary fat-tree (Al-Fares et al. 2008): k pods of k/2 edge and k/2
/// aggregation switches, (k/2)^2 core switches, k^3/4 hosts; host h is on edge
/// switch h / (k/2) (pods in order). `pods`, `hosts_per_edge` and
/// `fabric_rate` build the partial fat-trees of papers, such as the HPCC
/// authors' 5 pods of k = 8 with 16 hosts per edge and 400 Gb/s links.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FatTree {
    pub k: u32,
    /// Pods built (default k; each core switch has one link per pod).
    #[serde(default)]
    pub pods: Option<u32>,
    /// Hosts per edge switch (default k/2).
    #[serde(default)]
    pub hosts_per_edge: Option<u32>,
    /// The hosts' links, and the switches' unless `fabric_rate` is given.
    pub link_rate: RateV,
    #[serde(default)]
    pub fabric_rate: Option<RateV>,
    pub host_delay: DurV,
    pub edge_agg_delay: DurV,
    pub agg_core_delay: DurV,
    #[serde(default)]
    pub edge_latency: Option<DurV>,
    #[serde(default)]
    pub agg_latency: Option<DurV>,
    #[serde(default)]
    pub core_latency: Option<DurV>,
}

impl FatTree {
    pub fn pods(&self) -> u32 {
        self.pods.unwrap_or(self.k)
    }
    pub fn hosts_per_edge(&self) -> u32 {
        self.hosts_per_edge.unwrap_or(self.k / 2)
    }
    pub fn hosts(&self) -> u64 {
        self.pods() as u64 * (self.k / 2) as u64 * self.hosts_per_edge() as u64
    }
    pub fn fabric_rate(&self) -> RateV {
        self.fabric_rate.unwrap_or(self.link_rate)
    }
}

impl Topology {
    pub fn num_hosts(&self) -> u32 {
        match self {
            Topology::Star(t) => t.hosts,
            Topology::Dumbbell(t) => t.senders.saturating_add(t.receivers),
            Topology::Leafspine(t) => t.leaves.saturating_mul(t.hosts_per_leaf),
            Topology::Fattree(t) => t.hosts().min(u32::MAX as u64) as u32,
            Topology::Ring(t) => t.switches.saturating_mul(t.hosts_per_switch),
        }
    }
    /// Egress ports (two per full-duplex link).
    pub fn num_ports(&self) -> u64 {
        match self {
            Topology::Star(t) => 2 * t.hosts as u64,
            Topology::Dumbbell(t) => 2 * (t.senders as u64 + t.receivers as u64 + 1),
            Topology::Leafspine(t) => 2 * (self.num_hosts() as u64 + t.leaves as u64 * t.spines as u64 * t.links_per_pair as u64),
            Topology::Fattree(t) => 2 * (t.hosts() + 2 * t.pods() as u64 * (t.k as u64 / 2).pow(2)),
            Topology::Ring(t) => 2 * (self.num_hosts() as u64 + t.switches as u64),
        }
    }
    /// The most ports any one switch has.
    pub fn max_switch_ports(&self) -> u64 {
        match self {
            Topology::Star(t) => t.hosts as u64,
            Topology::Dumbbell(t) => t.senders.max(t.receivers) as u64 + 1,
            Topology::Leafspine(t) => {
                let uplinks = t.links_per_pair as u64;
                (t.hosts_per_leaf as u64 + t.spines as u64 * uplinks).max(t.leaves as u64 * uplinks)
            }
            Topology::Fattree(t) => (t.hosts_per_edge() as u64 + t.k as u64 / 2).max(t.k as u64).max(t.pods() as u64),
            Topology::Ring(t) => t.hosts_per_switch as u64 + 2,
        }
    }
    /// The switches' names, in the order the network numbers them (node
    /// num_hosts() + i is switch i).
    pub fn switch_names(&self) -> Vec<String> {
        match self {
            Topology::Star(_) => vec!["switch".into()],
            Topology::Dumbbell(_) => vec!["left".into(), "right".into()],
            Topology::Leafspine(t) => (0..t.leaves).map(|i| format!("leaf{i}")).chain((0..t.spines).map(|i| format!("spine{i}"))).collect(),
            Topology::Fattree(t) => {
                let half = t.k / 2;
                let pods = (0..t.pods()).flat_map(|pod| (0..half).map(move |i| format!("edge{pod}.{i}")).chain((0..half).map(move |i| format!("agg{pod}.{i}"))));
                pods.chain((0..half * half).map(|i| format!("core{i}"))).collect()
            }
            Topology::Ring(t) => (0..t.switches).map(|i| format!("ring{i}")).collect(),
        }
    }
    /// Hosts sharing a first-hop switch with `h` form its rack.
    pub fn rack_of(&self, h: u32) -> u32 {
        match self {
            Topology::Star(_) => 0,
            Topology::Dumbbell(t) => (h >= t.senders) as u32,
            Topology::Leafspine(t) => h / t.hosts_per_leaf.max(1),
            Topology::Fattree(t) => h / t.hosts_per_edge().max(1),
            Topology::Ring(t) => h / t.hosts_per_switch.max(1),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkCfg {
    /// IP MTU in bytes (the Ethernet payload). 1500 by default; jumbo up to 9000+.
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    /// What a frame occupies on the wire besides its bytes (see [`Framing`]).
    #[serde(default)]
    pub framing: Framing,
    /// Independent random loss: each frame sent on any link (either
    /// direction, data and ACKs) is lost on the wire with this probability.
    #[serde(default)]
    pub loss_rate: f64,
}
impl Default for LinkCfg {
    fn default() -> Self {
        LinkCfg { mtu: default_mtu(), framing: Framing::Frame, loss_rate: 0.0 }
    }
}

/// Ethernet's overhead around a frame (IEEE 802.3 §4.4.2). The 8-byte
/// preamble and SFD precede the frame, so they delay its arrival; the
/// 12-byte inter-frame gap only keeps the next frame from starting earlier,
/// so a frame on an idle link arrives as soon as without it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Framing {
    /// The frame alone, header to FCS (ns-3's point-to-point device, htsim).
    #[default]
    Frame,
    /// A 12-byte gap between frames, no preamble: ns-3's CSMA device with
    /// its InterframeGap set, as CLUES (seed 004 Fig. 3: back-to-back
    /// 1518 B frames 1224 ns apart at 10 Gb/s).
    Ifg,
    /// Preamble+SFD and the gap: 20 bytes per frame, as on real Ethernet.
    PreambleIfg,
}

impl Framing {
    pub fn preamble(self) -> bool {
        self == Framing::PreambleIfg
    }
    pub fn gap(self) -> bool {
        self != Framing::Frame
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchCfg {
    /// Delay between a frame being fully received and it being queued at the
    /// egress port (store-and-forward plus lookup).
    #[serde(default)]
    pub forwarding_latency: DurV,
    /// Capacity of each switch egress queue (waiting frames, not the one on the wire).
    #[serde(default = "default_switch_buffer")]
    pub buffer: QSize,
    /// One buffer shared by all ports of a switch, with Broadcom-style
    /// dynamic thresholds. `buffer` still caps each port.
    #[serde(default)]
    pub shared_buffer: Option<SharedBufferCfg>,
    /// Admission / marking on enqueue at every switch egress port.
    #[serde(default)]
    pub aqm: Aqm,
    /// A phantom queue (HULL) beside every switch egress port.
    #[serde(default)]
    pub phantom_queue: Option<PhantomQueueCfg>,
    /// HSCC's hysteresis and ACK window rewriting at every switch egress port.
    #[serde(default)]
    pub hscc: Option<HsccCfg>,
    /// Several queues per switch egress port (default: one FIFO).
    #[serde(default)]
    pub scheduler: Option<Scheduler>,
    /// A virtual-output-queued switch with cell buffers (seed 004 §4.3)
    /// instead of output queues.
    #[serde(default)]
    pub voq: Option<VoqCfg>,
    /// How a switch picks among equal-cost next hops.
    #[serde(default)]
    pub routing: Routing,
    /// Priority-based flow control (IEEE 802.1Qbb) at every switch; hosts'
    /// NICs obey its PAUSE frames.
    #[serde(default)]
    pub pfc: Option<PfcCfg>,
}
impl Default for SwitchCfg {
    fn default() -> Self {
        SwitchCfg {
            forwarding_latency: DurV(Dur::ZERO),
            buffer: default_switch_buffer(),
            shared_buffer: None,
            aqm: Aqm::default(),
            phantom_queue: None,
            hscc: None,
            scheduler: None,
            voq: None,
            routing: Routing::default(),
            pfc: None,
        }
    }
}

/// PFC (IEEE 802.1Qbb; see crate::pfc and docs/models/pfc.md). A packet's
/// class is its egress scheduler class (its DSCP, capped at the last class;
/// class 0 with one FIFO).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PfcCfg {
    /// The lossless classes (default: every class).
    #[serde(default)]
    pub classes: Option<Vec<u8>>,
    /// Pause the upstream once an ingress port holds more than this of a
    /// class: a size, or "dynamic": `alpha` times the shared buffer's free
    /// bytes (switch.shared_buffer, less the headroom it reserves).
    pub xoff: Xoff,
    /// With xoff = "dynamic": the share of the free buffer.
    #[serde(default = "pfc_alpha")]
    pub alpha: f64,
    /// With xoff = "dynamic": `alpha` is for an ingress port of this rate,
    /// and each port's share scales with its rate, up to 1 (the HPCC
    /// authors' simulator: 1/8 at the NICs' rate, doubled per doubling of
    /// a link's rate); none: every port has `alpha`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per: Option<RateV>,
    /// Resume once the ingress bytes are this far below the XOFF level
    /// (default: two full-sized frames).
    #[serde(default)]
    pub xon_offset: Option<Bytes>,
    /// Bytes an ingress port may take beyond XOFF while the pause takes
    /// effect: a size, or "auto" (crate::pfc::headroom, per link).
    #[serde(default)]
    pub headroom: Headroom,
    /// From a PAUSE frame's arrival until the receiver stops starting frames.
    #[serde(default)]
    pub response_time: DurV,
    /// Pause time each PAUSE frame asks for, in quanta of 512 bit times.
    #[serde(default = "pfc_quanta")]
    pub quanta: u16,
    /// Resend PAUSE this long after the last while still above XON (default:
    /// half the pause time at the link's rate).
    #[serde(default)]
    pub refresh: Option<DurV>,
    /// Report a pause cycle (a deadlock) and stop the run once every port
    /// of a cycle has been paused this long without a break.
    #[serde(default = "pfc_deadlock_after")]
    pub deadlock_after: DurV,
}

fn pfc_alpha() -> f64 {
    1.0 / 8.0
}
fn pfc_quanta() -> u16 {
    65535
}
fn pfc_deadlock_after() -> DurV {
    DurV(Dur::from_ms(10))
}

/// An RDMA transport (RoCEv2 reliable connection; crate::rdma and
/// docs/models/rdma.md): every flow is a queue pair at its host's NIC.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RdmaCfg {
    /// Congestion control at the sender's NIC.
    #[serde(default)]
    pub cc: RdmaCc,
    /// Payload bytes per data packet (the RoCE path MTU's payload).
    #[serde(default = "rdma_payload")]
    pub payload: Bytes,
    /// The receiver acknowledges every this many in-order data packets
    /// (and always the last of a message).
    #[serde(default = "one_u32")]
    pub ack_every: u32,
    /// A receiver NACKs a sequence gap once, then again only after this.
    #[serde(default = "rdma_nack_interval")]
    pub nack_interval: DurV,
    /// Go back to the first unacknowledged byte when nothing is acknowledged for this long.
    #[serde(default = "rdma_rto")]
    pub rto: DurV,
    /// A receiver sends at most one CNP per queue pair per this interval (DCQCN's N).
    #[serde(default = "rdma_cnp_interval")]
    pub cnp_interval: DurV,
    /// DSCP (class) of ACKs, NACKs and CNPs; data uses the flow's `dscp`.
    #[serde(default)]
    pub control_dscp: u8,
    /// The NIC's rate limiter granularity: rates are rounded down to a
    /// multiple of this (none: exact).
    #[serde(default)]
    pub rate_step: Option<RateV>,
    /// When a flow is complete (its `end`), and what its ideal FCT is.
    #[serde(default)]
    pub completion: RdmaCompletion,
    /// Loss recovery: go-back-N (RoCE NICs), or IRN's selective repeat.
    #[serde(default)]
    pub recovery: RdmaRecovery,
    /// Cap a QP's unacknowledged bytes at its rate times the network's
    /// largest base RTT, as HPCC's window does (HPCC §5.1 adds it to DCQCN
    /// and TIMELY as "DCQCN+win", "TIMELY+win"; the HPCC authors' DCTCP
    /// runs with it). HPCC always has its own window.
    #[serde(default)]
    pub window: bool,
}

#[derive(Debug, Clone, Serialize, Default)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RdmaRecovery {
    /// Back to the first unacknowledged byte on a NAK or a timeout.
    #[default]
    GoBackN,
    /// IRN (Mittal et al., SIGCOMM 2018): selective repeat and BDP-FC.
    Irn(IrnCfg),
}
tagged_deserialize!(RdmaRecovery, "rdma.recovery", { "go_back_n" => [GoBackN], "irn" => Irn });

/// IRN's settings (Mittal et al. 2018, §3.1-3.2); the defaults are the paper's.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IrnCfg {
    /// The timeout while at most `low_packets` packets are outstanding.
    #[serde(default = "irn_rto_low")]
    pub rto_low: DurV,
    /// The timeout otherwise.
    #[serde(default = "irn_rto_high")]
    pub rto_high: DurV,
    #[serde(default = "irn_low_packets")]
    pub low_packets: u32,
    /// BDP-FC: at most one bandwidth-delay product (line rate times the
    /// largest base RTT) of bytes outstanding.
    #[serde(default = "yes")]
    pub bdp_cap: bool,
}

fn irn_rto_low() -> DurV {
    DurV(Dur::from_us(100))
}
fn irn_rto_high() -> DurV {
    DurV(Dur::from_us(320))
}
fn irn_low_packets() -> u32 {
    3
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RdmaCompletion {
    /// When the last byte reaches the receiver (as dcsim's TCP flows); the
    /// ideal is that one-way time on an empty network.
    #[default]
    Receiver,
    /// When the ACK of the last byte reaches the sender, as the HPCC
    /// authors' simulator and htsim count it; the ideal is the base RTT
    /// plus the flow's bytes at the bottleneck, with RoCE's headers but no
    /// INT (the HPCC authors' "standalone" FCT).
    Sender,
}

fn rdma_payload() -> Bytes {
    Bytes(1000)
}
fn rdma_nack_interval() -> DurV {
    DurV(Dur::from_us(500))
}
fn rdma_rto() -> DurV {
    DurV(Dur::from_ms(1))
}
fn rdma_cnp_interval() -> DurV {
    DurV(Dur::from_us(50))
}

/// NDP (Handley et al., SIGCOMM 2017; crate::ndp and docs/models/ndp.md):
/// every flow is an NDP flow, pushed for its first window and then pulled
/// by its receiver. Its switches trim with `switch.scheduler.full = "trim"`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NdpCfg {
    /// Payload bytes per data packet (default: what `link.mtu` leaves after
    /// IPv4's 20 B and NDP's 26 B).
    #[serde(default)]
    pub payload: Option<Bytes>,
    /// Packets a flow sends at line rate before its first pull (§3.2's
    /// first window; htsim's `-cwnd`).
    #[serde(default = "ndp_iw")]
    pub iw: u32,
    /// The receiver's pulls leave at this fraction of its line rate (one per
    /// full data frame's time; htsim: 1.0 in the paper's drivers, 0.99 in
    /// `main_ndp`).
    #[serde(default = "one_f64")]
    pub pull_rate: f64,
    /// Path numbers each flow sprays its packets over, in a random order
    /// drawn again every pass (default: the equal-cost paths between its
    /// hosts, as htsim's "perm"). With `switch.routing = "path"` a number
    /// is a route; under ECMP the switches hash it.
    #[serde(default)]
    pub paths: Option<u32>,
    /// The DSCP (switch class) of data packets; headers and control use 0.
    #[serde(default = "one_u8")]
    pub data_dscp: u8,
    /// A sender that hears nothing for this long with packets unacknowledged
    /// resends them (a backstop: htsim's NDP has none, §3.3's NACKs are the
    /// recovery). 0: never.
    #[serde(default = "ndp_rto")]
    pub rto: DurV,
    /// Return-to-sender: a switch port with no room for a trimmed header
    /// sends it back to its sender instead of dropping it (at most once),
    /// which the paper's incast simulations had on (htsim's
    /// EXAMPLES/incast_* READMEs; htsim's default is off).
    #[serde(default = "yes")]
    pub bounce: bool,
}

fn ndp_iw() -> u32 {
    23
}
fn ndp_rto() -> DurV {
    DurV(Dur::from_ms(1))
}
fn one_f64() -> f64 {
    1.0
}
fn one_u8() -> u8 {
    1
}

impl NdpCfg {
    /// Payload bytes per data packet under `mtu`.
    pub fn payload_for(&self, mtu: u32) -> u64 {
        self.payload.map_or((mtu as u64).saturating_sub(crate::packet::IPV4_HEADER + crate::packet::NDP_HEADER), |b| b.0)
    }
}

/// Homa (Montazeri et al., SIGCOMM 2018; crate::homa and
/// docs/models/homa.md): every flow is a one-way Homa message, its first
/// RTTbytes unscheduled and the rest granted by its receiver. Its switches
/// need `switch.scheduler = { type = "strict_priority", classes = 8 }`
/// (class 0 first) and room enough not to drop: Homa's simulator has no
/// loss recovery, and neither has this model.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HomaCfg {
    /// Priority levels (DSCP 0..priorities; 0 the highest).
    #[serde(default = "homa_priorities")]
    pub priorities: u8,
    /// The lowest levels, for granted bytes; the rest are unscheduled
    /// levels. The simulator's per workload: 1, 3, 4, 7, 7 for W1 to W5.
    pub sched_priorities: u8,
    /// Senders a receiver grants to at once (default: `sched_priorities`).
    #[serde(default)]
    pub overcommit: Option<u8>,
    /// Bytes on the wire a message sends before its first grant, and the
    /// most it may have granted and not received (RTTbytes).
    #[serde(default = "homa_rtt_bytes")]
    pub rtt_bytes: Bytes,
    /// Upper bounds (remaining message bytes) of the unscheduled levels but
    /// the last, ascending (default: computed from the poisson workload's
    /// size distribution, as the simulator's STATIC_CBF_GRADUATED).
    #[serde(default)]
    pub cutoffs: Option<Vec<Bytes>>,
    /// Grant a message's last RTTbytes at its remaining size's unscheduled
    /// level when that is higher (the simulator's `boostTailBytesPrio`).
    #[serde(default = "yes")]
    pub boost_tail: bool,
}

fn homa_priorities() -> u8 {
    8
}
fn homa_rtt_bytes() -> Bytes {
    Bytes(10_000)
}

impl HomaCfg {
    pub fn overcommit(&self) -> u8 {
        self.overcommit.unwrap_or(self.sched_priorities)
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RdmaCc {
    /// Line rate, no reaction (RoCE over PFC alone).
    None,
    /// DCQCN (Zhu et al., SIGCOMM 2015; crate::dcqcn).
    Dcqcn(DcqcnCfg),
    /// TIMELY (Mittal et al., SIGCOMM 2015; crate::timely).
    Timely(TimelyCfg),
    /// HPCC (Li et al., SIGCOMM 2019; crate::hpcc).
    Hpcc(HpccCfg),
    /// DCTCP's control law on the NIC's rate (Alizadeh et al. 2010, as
    /// HPCC §5.1 ran it; crate::rdma_dctcp).
    Dctcp(RdmaDctcpCfg),
}
tagged_deserialize!(RdmaCc, "rdma.cc", { "none" => [None], "dcqcn" => Dcqcn, "timely" => Timely, "hpcc" => Hpcc, "dctcp" => Dctcp });

/// DCTCP on the RDMA NIC; the defaults are the HPCC authors' at 100 Gb/s
/// (docs/models/rdma-dctcp.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RdmaDctcpCfg {
    /// The alpha EWMA gain (DCTCP's g).
    #[serde(default = "rdma_dctcp_g")]
    pub g: f64,
    /// The increase per window without a cut: one packet per RTT as a rate
    /// (1 KB per 13 us: 615 Mb/s).
    #[serde(default = "rdma_dctcp_ai")]
    pub ai: RateV,
    #[serde(default = "hpcc_min_rate")]
    pub min_rate: RateV,
}

fn rdma_dctcp_g() -> f64 {
    1.0 / 16.0
}
fn rdma_dctcp_ai() -> RateV {
    RateV(dcsim_engine::Rate::from_bps(615_000_000))
}

/// TIMELY's rate control (Mittal et al. 2015, Algorithm 1); the defaults
/// are the paper's (docs/models/timely.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimelyCfg {
    /// Below it, increase additively.
    #[serde(default = "timely_t_low")]
    pub t_low: DurV,
    /// Above it, decrease in proportion to the excess.
    #[serde(default = "timely_t_high")]
    pub t_high: DurV,
    /// The additive step (delta).
    #[serde(default = "timely_delta")]
    pub delta: RateV,
    /// The multiplicative decrease factor (beta).
    #[serde(default = "timely_beta")]
    pub beta: f64,
    /// The EWMA weight of a new RTT difference (alpha).
    #[serde(default = "timely_alpha")]
    pub alpha: f64,
    /// Normalises the RTT gradient.
    #[serde(default = "timely_min_rtt")]
    pub min_rtt: DurV,
    /// One rate update per this many acknowledged bytes (a completion event).
    #[serde(default = "timely_segment")]
    pub segment: Bytes,
    /// Instead, one update per window of data (when the ACKs pass the byte
    /// that was next to send at the last update), as the HPCC authors'
    /// simulator updates.
    #[serde(default)]
    pub per_window: bool,
    /// After this many gradient-based increases in a row, increase by 5 delta (HAI).
    #[serde(default = "timely_hai_after")]
    pub hai_after: u32,
    /// Count updates whose RTT fell below the previous one for HAI (the
    /// authors' published code) instead of gradient-based increases.
    #[serde(default)]
    pub hai_counts_rtt_falls: bool,
    /// Scale each change by the time since the last update over `min_rtt`,
    /// at most 1 (§5, "rate update frequency"; the authors' `delta_factor`).
    #[serde(default)]
    pub scale_by_interval: bool,
    /// One update cuts at most this fraction of the rate (eRPC's port of
    /// the authors' code keeps at least half: 0.5); 1, no bound (Algorithm 1).
    #[serde(default = "one_f64")]
    pub max_cut: f64,
    /// Pace whole segments, each sent as a burst of packets (the paper's
    /// NIC, §3.3), rather than each packet.
    #[serde(default = "yes")]
    pub segment_bursts: bool,
    #[serde(default = "timely_min_rate")]
    pub min_rate: RateV,
}

fn timely_t_low() -> DurV {
    DurV(Dur::from_us(50))
}
fn timely_t_high() -> DurV {
    DurV(Dur::from_us(500))
}
fn timely_delta() -> RateV {
    RateV(dcsim_engine::Rate::from_bps(10_000_000))
}
fn timely_beta() -> f64 {
    0.8
}
fn timely_alpha() -> f64 {
    0.875
}
fn timely_min_rtt() -> DurV {
    DurV(Dur::from_us(20))
}
fn timely_segment() -> Bytes {
    Bytes(16_384)
}
fn timely_hai_after() -> u32 {
    5
}
fn timely_min_rate() -> RateV {
    // The paper gives none: one additive step (the HPCC authors' runs use
    // 1 Gb/s at 100 Gb/s, which forty flows sharing 20 Gb/s could not reach).
    RateV(dcsim_engine::Rate::from_bps(10_000_000))
}

/// HPCC (Li et al. 2019, Algorithm 1); the defaults are the paper's
/// (docs/models/hpcc.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HpccCfg {
    /// Target utilisation (eta).
    #[serde(default = "hpcc_eta")]
    pub eta: f64,
    /// Additive-increase stages before a multiplicative update (maxStage).
    #[serde(default = "hpcc_max_stage")]
    pub max_stage: u32,
    /// The additive step W_AI, as a rate (W_AI / T).
    #[serde(default = "hpcc_ai")]
    pub ai: RateV,
    /// The base RTT T (default: the network's largest host-to-host base RTT).
    #[serde(default)]
    pub base_rtt: Option<DurV>,
    /// INT records a packet can carry (the header is 2 + 8 per hop bytes).
    #[serde(default = "hpcc_max_hops")]
    pub max_hops: u8,
    #[serde(default = "hpcc_min_rate")]
    pub min_rate: RateV,
}

fn hpcc_eta() -> f64 {
    0.95
}
fn hpcc_max_stage() -> u32 {
    5
}
fn hpcc_ai() -> RateV {
    RateV(dcsim_engine::Rate::from_bps(50_000_000))
}
fn hpcc_max_hops() -> u8 {
    5
}
fn hpcc_min_rate() -> RateV {
    RateV(dcsim_engine::Rate::from_bps(100_000_000))
}

impl Default for RdmaCc {
    fn default() -> Self {
        RdmaCc::Dcqcn(DcqcnCfg::default())
    }
}

/// DCQCN's reaction point (Zhu et al. 2015 §3.2, Fig. 7's algorithm). The
/// defaults are the paper's (docs/models/dcqcn.md gives each value's source).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DcqcnCfg {
    /// The alpha EWMA gain.
    #[serde(default = "dcqcn_g")]
    pub g: f64,
    /// Alpha decays by (1 - g) after each such interval without a CNP (K).
    #[serde(default = "dcqcn_55us")]
    pub alpha_interval: DurV,
    /// The rate-increase timer (T).
    #[serde(default = "dcqcn_55us")]
    pub increase_timer: DurV,
    /// The rate-increase byte counter (B; "0B": none, only the timer counts).
    #[serde(default = "dcqcn_byte_counter")]
    pub byte_counter: Bytes,
    /// Fast-recovery steps before additive increase (F).
    #[serde(default = "dcqcn_f")]
    pub fast_recovery: u32,
    /// Additive and hyper increase steps (R_AI, R_HAI).
    #[serde(default = "dcqcn_ai")]
    pub ai: RateV,
    #[serde(default = "dcqcn_hai")]
    pub hai: RateV,
    /// The rate never falls below this.
    #[serde(default = "dcqcn_min_rate")]
    pub min_rate: RateV,
    /// Cut at most once per this interval, if a CNP came in it, and raise
    /// alpha on the alpha timer when a CNP came in its period (the later
    /// NICs, as the HPCC authors model them); none: cut and raise alpha on
    /// every CNP, as the paper.
    #[serde(default)]
    pub decrease_interval: Option<DurV>,
    /// A cut sets the target rate to the current one (the paper). False:
    /// only when the rate rose since the last cut (the NICs' default).
    #[serde(default = "yes")]
    pub clamp_target: bool,
}

impl Default for DcqcnCfg {
    fn default() -> Self {
        DcqcnCfg {
            g: dcqcn_g(),
            alpha_interval: dcqcn_55us(),
            increase_timer: dcqcn_55us(),
            byte_counter: dcqcn_byte_counter(),
            fast_recovery: dcqcn_f(),
            ai: dcqcn_ai(),
            hai: dcqcn_hai(),
            min_rate: dcqcn_min_rate(),
            decrease_interval: None,
            clamp_target: true,
        }
    }
}

fn dcqcn_g() -> f64 {
    1.0 / 256.0
}
fn dcqcn_55us() -> DurV {
    DurV(Dur::from_us(55))
}
fn dcqcn_byte_counter() -> Bytes {
    Bytes(10_000_000)
}
fn dcqcn_f() -> u32 {
    5
}
fn dcqcn_ai() -> RateV {
    RateV(dcsim_engine::Rate::from_bps(40_000_000))
}
fn dcqcn_hai() -> RateV {
    RateV(dcsim_engine::Rate::from_bps(100_000_000))
}
fn dcqcn_min_rate() -> RateV {
    RateV(dcsim_engine::Rate::from_bps(10_000_000))
}

/// ARREAR's settings (seed 004 §6.2.2).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArrearCfg {
    /// Resolution of the sender's clock: a duration, or "sbintime" (2^-32 s,
    /// where the thesis' FreeBSD implementation keeps its clock reads).
    #[serde(default = "default_arrear_clock")]
    pub clock: Clock,
    /// Resolution of the time source the clock reads: each read is the
    /// current time floored to this, then expressed in `clock`'s units. CLUES'
    /// sbinuptime() reads ns-3's scheduler, "a 1 ns resolution" (§6.2.2).
    /// The default, 1ps, reads the simulated time exactly.
    #[serde(default = "default_arrear_source")]
    pub source: DurV,
    /// TSval tokens must not wrap within this MSL (net.inet.tcp.msl, 30 s).
    #[serde(default = "default_msl")]
    pub msl: DurV,
    /// §6.3.3's proof of concept: this many junk bytes ride on the SYN (and
    /// SYN-ACK), outside the sequence space; the receiver drops them. The
    /// handshake's RTT sample then includes a full frame's serialisation.
    #[serde(default)]
    pub syn_data: Bytes,
}

fn default_arrear_clock() -> Clock {
    Clock::every(Dur::from_ns(1))
}
fn default_arrear_source() -> DurV {
    DurV(Dur(1))
}
fn default_msl() -> DurV {
    DurV(Dur::from_secs(30))
}

/// CLUES' VOQ switch (seed 004 §4.3, Table 3; see crate::voq). The
/// defaults are the thesis' Table 4.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VoqCfg {
    /// Cells of each port's ingress buffer, shared by its VOQs (RxQueueCellsPerPort).
    pub ingress_cells: u32,
    /// Cells of each port's egress transmit queue (TxQueueCellsPerPort).
    #[serde(default = "default_egress_cells")]
    pub egress_cells: u32,
    /// Bytes per cell (BytesPerCell).
    #[serde(default = "default_cell_bytes")]
    pub cell_bytes: Bytes,
    /// From ingress VOQ to egress queue (BackplaneLatency).
    #[serde(default = "default_backplane_latency")]
    pub backplane_latency: DurV,
    /// When a frame may cross the backplane (TxQueueMgmtScheme).
    #[serde(default)]
    pub admission: VoqAdmission,
}

fn default_egress_cells() -> u32 {
    24
}
fn default_cell_bytes() -> Bytes {
    Bytes(256)
}
fn default_backplane_latency() -> DurV {
    DurV(Dur::from_us(4))
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum VoqAdmission {
    /// Egress cells are tokens, returned when the egress starts sending a frame.
    Cellcredit,
    /// Exact projection of the egress queue: no lost transmission opportunity.
    #[default]
    Oracle,
}

/// HSCC (seed 002 §3; see crate::hscc).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HsccCfg {
    /// alpha1: leave CBR mode when the queue falls below this fraction of the buffer.
    #[serde(default = "default_hscc_low")]
    pub low: f64,
    /// alpha2: enter CBR mode when the queue rises above this fraction.
    #[serde(default = "default_hscc_high")]
    pub high: f64,
    /// The window written into ACKs in CBR mode: one MSS (the paper) or the
    /// NetFPGA's fair share of the buffer above `low` (in bytes, or in the
    /// Verilog's units).
    #[serde(default)]
    pub window: HsccWindow,
    /// sigma: this fraction of the buffer is kept for control packets (pure
    /// ACKs, SYNs, FINs); 0 (off) as in the seed's ns-2 runs.
    #[serde(default)]
    pub control_reserve: f64,
    /// The end-host shim: hosts carry their window scale in the TCP
    /// header's reserved bits for the switch (cleared at the last hop).
    /// Off: the switch assumes no scaling.
    #[serde(default = "yes")]
    pub shim: bool,
    /// Rewrite SYN-ACKs too, as the NetFPGA does (hscc_main.v's WORD_6
    /// admits every ACK without FIN or RST): a connection opened into a
    /// port in CBR mode starts clamped. Off: only the ACKs of open
    /// connections, the paper's rule (§3).
    #[serde(default)]
    pub syn_ack: bool,
    /// The switches that run HSCC, by name (`Topology::switch_names`);
    /// absent: every switch. Seed 002's testbed (§6.1) had it on the NetFPGA
    /// core only, its racks' switches being plain ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switches: Option<Vec<String>>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum HsccWindow {
    #[default]
    OneMss,
    FairShare,
    /// The fair share as `hscc_main.v` computes it: the buffer counted in
    /// 8-byte words, the quotient used as bytes (mechanisms.md §1.2 notes
    /// the mismatch), so an eighth of `fair_share`'s window, at least 146 B.
    FairShareWords,
}

/// Per-class queues at a switch egress port; a packet's class is its DSCP
/// (capped at the last class). See crate::sched.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Scheduler {
    StrictPriority(StrictPriorityCfg),
    Dwrr(DwrrCfg),
}
tagged_deserialize!(Scheduler, "scheduler", { "strict_priority" => StrictPriority, "dwrr" => Dwrr });

/// Deficit weighted round robin (Shreedhar & Varghese, SIGCOMM 1995), as
/// ns3-ecn-sharp's DWRR queue disc (reference mechanisms.md §2.4): each
/// class sends up to its quantum (plus what it saved) per round; classes of
/// a smaller `priority` value are served first.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DwrrCfg {
    /// Bytes per round for each class (IP packet sizes, as ns-3 counts);
    /// the number of classes is their number.
    pub quanta: Vec<Bytes>,
    /// Per class (default: all 0, plain DWRR). Lower values first.
    #[serde(default)]
    pub priorities: Option<Vec<u32>>,
    /// What `switch.aqm` sees: each class's own queue (the default, as
    /// ns3-ecn-sharp's inner queue discs) or the port's total.
    #[serde(default = "class_marking")]
    pub marking: ClassMarking,
    /// At most this much of the port's buffer per class (ns-3: each inner
    /// queue disc's own limit); default: no per-class limit.
    #[serde(default)]
    pub class_buffer: Option<QSize>,
}
fn class_marking() -> ClassMarking {
    ClassMarking::Class
}

/// Strict priority (class 0 first), as PIAS's switches (reference §1, PIAS-NS2).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StrictPriorityCfg {
    /// Number of queues (DSCP 0..classes-1; larger DSCPs go to the last).
    #[serde(default = "default_classes")]
    pub classes: u32,
    /// What `switch.aqm` sees: the port's total queue (PIAS-NS2's per-port
    /// marking, ECN_scheme_ 2) or each class's own queue (an AQM per class).
    #[serde(default)]
    pub marking: ClassMarking,
    /// When the port's buffer is full: drop the arrival, or push out the
    /// last packet of the lowest-priority class below the arrival's first
    /// (PIAS-NS2's drop_prio_).
    #[serde(default)]
    pub full: FullBuffer,
    /// At most this much of the port's buffer per class; default: none.
    #[serde(default)]
    pub class_buffer: Option<QSize>,
}
fn default_classes() -> u32 {
    8
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ClassMarking {
    #[default]
    Port,
    Class,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum FullBuffer {
    #[default]
    DropArrival,
    PushOutLowest,
    /// NDP's switch (§3.1): an NDP data packet that finds the last class
    /// (data) at `class_buffer` is trimmed to its header, which joins class 0
    /// (headers and control, capped only by the port's buffer); half the
    /// time the data queue's tail is trimmed instead and the arrival queued.
    Trim,
}

/// Phantom queue (seed 000 §II-A, seed 001; see crate::phantom).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhantomQueueCfg {
    /// Drain rate: a fraction of the port's line rate (0.95) or a rate ("900Mbps").
    pub drain: PhantomDrain,
    /// Mark when the counter exceeds this many bytes.
    #[serde(default = "default_pq_threshold")]
    pub threshold: Bytes,
    /// Where the counter sees packets: leaving the real queue (HULL, seed 000)
    /// or arriving at it (seed 001's Linux RED variant).
    #[serde(default)]
    pub placement: PqPlacement,
    /// Keep the port's own AQM marking as well (its drops always stay).
    #[serde(default)]
    pub port_marking: bool,
    /// How a packet enters the counter: all at once ("packet", seed 000's
    /// ns-2 and seed 001's Linux code) or bit by bit at the line rate while
    /// the counter drains ("serialised": a queue in series with the link).
    #[serde(default)]
    pub counting: PqCounting,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum PqCounting {
    #[default]
    Packet,
    Serialised,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PhantomDrain {
    Fraction(f64),
    Rate(RateV),
}
impl Serialize for PhantomDrain {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PhantomDrain::Fraction(g) => s.serialize_f64(*g),
            PhantomDrain::Rate(r) => r.serialize(s),
        }
    }
}
impl<'de> Deserialize<'de> for PhantomDrain {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::Number(n) => Ok(PhantomDrain::Fraction(n.as_f64().unwrap_or(f64::NAN))),
            serde_json::Value::String(s) => crate::units::parse_rate(&s).map(|r| PhantomDrain::Rate(RateV(r))).map_err(D::Error::custom),
            other => Err(D::Error::custom(format!(
                "invalid drain {other}: expected a fraction of the line rate like 0.95 or a rate like \"900Mbps\""
            ))),
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum PqPlacement {
    #[default]
    Departure,
    Arrival,
}

/// Dynamic thresholds (Choudhury & Hahne, ToN 1998; Broadcom's "alpha"): a
/// port may queue a frame only while its occupancy stays below
/// alpha * (free shared buffer).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SharedBufferCfg {
    pub size: Bytes,
    #[serde(default = "one_f")]
    pub alpha: f64,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Routing {
    /// Per flow: a seeded hash of the connection, fixed for its lifetime.
    #[default]
    Ecmp,
    /// Per packet: round robin over the equal-cost ports at each switch.
    Spray,
    /// Each packet names its path: a switch with n equal-cost ports takes
    /// the next digit of the packet's path number (`flow_hash`) in base n,
    /// as a source route would (NDP's per-packet path choice, §3.2; htsim's
    /// "perm" routes). A TCP flow's number is its hash: one path per flow.
    Path,
}

#[derive(Debug, Clone, Serialize, Default)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Aqm {
    /// Drop arrivals when the queue is full.
    #[default]
    Droptail,
    /// DCTCP step marking (RFC 8257 §3.1).
    Dctcp(DctcpStep),
    /// Classic RED (Floyd & Jacobson 1993) with optional gentle mode.
    Red(RedCfg),
    /// TCN: mark at dequeue when the sojourn time exceeds the threshold.
    Tcn(TcnCfg),
    /// ECN# (seed 003): TCN's marking plus conservative marking of a persistent queue.
    EcnSharp(EcnSharpCfg),
    /// CoDel (RFC 8289, as Linux runs it), marking or dropping.
    Codel(CodelCfg),
}
tagged_deserialize!(Aqm, "aqm", { "droptail" => [Droptail], "dctcp" => Dctcp, "red" => Red, "tcn" => Tcn, "ecn_sharp" => EcnSharp, "codel" => Codel });

impl Aqm {
    /// The marking as a port of `rate` applies it: thresholds given `per`
    /// a rate scaled to this one.
    pub fn for_rate(&self, rate: dcsim_engine::Rate) -> Aqm {
        let scaled = |q: QSize, per: RateV| {
            let f = rate.bps as f64 / per.0.bps as f64;
            match q {
                QSize::Packets(n) => QSize::Packets((n as f64 * f).round() as u64),
                QSize::Bytes(n) => QSize::Bytes((n as f64 * f).round() as u64),
            }
        };
        match self {
            Aqm::Dctcp(d @ DctcpStep { per: Some(per), .. }) => Aqm::Dctcp(DctcpStep { k: scaled(d.k, *per), ..d.clone() }),
            Aqm::Red(r @ RedCfg { per: Some(per), .. }) => Aqm::Red(RedCfg { min_th: scaled(r.min_th, *per), max_th: scaled(r.max_th, *per), ..r.clone() }),
            other => other.clone(),
        }
    }
}

/// TCN (reference mechanisms.md §2.1); the public code's default threshold.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcnCfg {
    #[serde(default = "default_tcn_threshold")]
    pub threshold: DurV,
}

/// ECN# (seed 003; reference §2.2); defaults are the public ns-3 code's.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EcnSharpCfg {
    /// Mark any packet whose sojourn time exceeds this.
    #[serde(default = "default_ecn_sharp_instantaneous")]
    pub instantaneous: DurV,
    /// A queue is persistent while sojourn times stay at or above `target`
    /// for longer than `interval`.
    #[serde(default = "default_ecn_sharp_target")]
    pub target: DurV,
    #[serde(default = "default_ecn_sharp_interval")]
    pub interval: DurV,
}

/// CoDel (RFC 8289; Linux's codel_impl.h). Defaults are RFC 8289's.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodelCfg {
    #[serde(default = "default_codel_target")]
    pub target: DurV,
    #[serde(default = "default_codel_interval")]
    pub interval: DurV,
    /// No action while at most this many bytes are queued (Linux: one MTU).
    #[serde(default = "default_codel_min_bytes")]
    pub min_bytes: Bytes,
    /// "mark": set CE on ECN-capable packets (drop the others), as Linux's
    /// `ecn` flag and ns3-ecn-sharp's MarkingMode; "drop": always drop.
    #[serde(default)]
    pub action: RedAction,
}
fn default_tcn_threshold() -> DurV {
    DurV(Dur::from_us(10))
}
fn default_ecn_sharp_instantaneous() -> DurV {
    DurV(Dur::from_us(20))
}
fn default_ecn_sharp_target() -> DurV {
    DurV(Dur::from_us(10))
}
fn default_ecn_sharp_interval() -> DurV {
    DurV(Dur::from_us(100))
}
fn default_codel_target() -> DurV {
    DurV(Dur::from_ms(5))
}
fn default_codel_interval() -> DurV {
    DurV(Dur::from_ms(100))
}
fn default_codel_min_bytes() -> Bytes {
    Bytes(1500)
}

/// Mark CE when the queue found on arrival holds at least `k` (or, with
/// `at = "dequeue"`, when at least `k` bytes wait behind a departing packet).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DctcpStep {
    pub k: QSize,
    #[serde(default)]
    pub at: MarkAt,
    /// K is for a port of this rate and scales with each port's rate (the
    /// HPCC authors' KMIN_MAP/KMAX_MAP: 30 KB per 10 Gb/s); none: every
    /// port marks at K.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per: Option<RateV>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedCfg {
    pub min_th: QSize,
    pub max_th: QSize,
    #[serde(default = "default_max_p")]
    pub max_p: f64,
    #[serde(default = "default_red_weight")]
    pub weight: f64,
    #[serde(default = "yes")]
    pub gentle: bool,
    /// "mark": set CE on ECN-capable packets (drop the others); "drop": always drop.
    #[serde(default)]
    pub action: RedAction,
    /// "count": Floyd & Jacobson's spacing (p_a = p_b / (1 - count p_b), §7);
    /// "independent": every packet with probability p_b, as DCQCN's switches
    /// (Zhu et al. 2015 §3.1).
    #[serde(default)]
    pub spacing: RedSpacing,
    /// Judge a packet as it joins the queue (the classic RED), or as it
    /// leaves it, by the bytes behind it (the HPCC authors' switches mark
    /// there; a mark then reaches the receiver without the queue's delay).
    /// "dequeue" needs byte thresholds and the instantaneous queue (weight 1).
    #[serde(default)]
    pub at: MarkAt,
    /// The thresholds are for a port of this rate and scale with each
    /// port's rate (the HPCC authors' KMIN_MAP/KMAX_MAP: 100/400 KB per
    /// 25 Gb/s); none: every port uses them as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per: Option<RateV>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum MarkAt {
    #[default]
    Enqueue,
    Dequeue,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RedSpacing {
    #[default]
    Count,
    Independent,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RedAction {
    #[default]
    Mark,
    Drop,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[derive(Default)]
pub struct HostCfg {
    /// Host NIC egress queue. "unlimited" (default, as in the thesis' Table 4:
    /// overflows only at switches) or a size like "1000pkt".
    #[serde(default)]
    pub nic_buffer: NicBuffer,
    /// TCP Small Queues (Linux): a connection stops handing data segments
    /// to its host once this many of its bytes wait there (delay line, NIC
    /// queue, serialisation), and resumes as they leave. None: no limit.
    #[serde(default)]
    pub tsq: Option<Bytes>,
    /// Extra delay before the NIC, to vary RTTs (ECN#'s method, see
    /// docs/models/network.md).
    #[serde(default)]
    pub rtt_variation: Option<RttVariation>,
    /// A pacer between the TCP stack and the NIC queue of every host.
    #[serde(default)]
    pub pacer: Option<Pacer>,
    /// PIAS's host tagging: a data packet's DSCP is its priority class, by
    /// the bytes of its message sent before it.
    #[serde(default)]
    pub pias: Option<PiasCfg>,
}

/// PIAS (Bai et al., NSDI 2015) as HSCC's baseline (seed 002 §5.2): class k
/// for a packet whose message offset is in [thresholds[k-1], thresholds[k]);
/// the last class beyond the last threshold. Pure ACKs and SYNs are class 0.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PiasCfg {
    /// Demotion thresholds in bytes, increasing.
    pub thresholds: Vec<Bytes>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Pacer {
    Hull(HullPacerCfg),
}
tagged_deserialize!(Pacer, "pacer", { "hull" => Hull });

/// The HULL pacer (seed 000 §II-C, Table I; see crate::pacer). Defaults are
/// the paper's and its ns-2 code's (reference §3.3).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HullPacerCfg {
    /// Token bucket depth.
    #[serde(default = "default_pacer_bucket")]
    pub bucket: Bytes,
    /// Tokens are added every `refill_interval` (at the current rate).
    #[serde(default = "default_pacer_refill")]
    pub refill_interval: DurV,
    /// T_r: the rate is re-estimated this often.
    #[serde(default = "default_pacer_rate_interval")]
    pub rate_interval: DurV,
    #[serde(default = "default_pacer_eta")]
    pub eta: f64,
    /// Per second: the rate grows by beta x (bits queued in the pacer).
    #[serde(default = "default_pacer_beta")]
    pub beta: f64,
    /// Probability that a packet sent after an ECN echo associates its flow.
    #[serde(default = "default_pacer_p_assoc")]
    pub p_assoc: f64,
    /// T_i: a flow is released this long after its last association.
    #[serde(default = "default_pacer_release")]
    pub release_after: DurV,
    /// Rate before the first estimate (the seed's ns-2 script: 100 Mb/s).
    #[serde(default = "default_pacer_initial_rate")]
    pub initial_rate: RateV,
    /// The pacer's own queue (associated flows only); arrivals beyond it are dropped.
    #[serde(default = "default_pacer_queue")]
    pub queue: QSize,
    /// As seed 000's ns-2 `HullPacer`: the pacer sits after the host queue
    /// and blocks it while it holds a packet, so every packet waits behind a
    /// held one, the rate estimate counts what the pacer lets out, and its
    /// queue term sees at most the held packet (reference §3.3). `queue` is
    /// then the host queue's limit. Off: the seed's description (a FIFO of
    /// associated packets only; everything else bypasses).
    #[serde(default)]
    pub holds_host_queue: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RttVariation {
    PerFlow(PerFlowDelay),
    PerHost(PerHostDelay),
}
tagged_deserialize!(RttVariation, "rtt_variation", { "per_flow" => PerFlow, "per_host" => PerHost });

/// Each connection draws one class uniformly; the packets its opening side
/// sends wait that long before the NIC; the other side's packets wait `reverse`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerFlowDelay {
    pub classes: Vec<DurV>,
    #[serde(default)]
    pub reverse: DurV,
}

/// Host h's link gets delays[h mod len] more propagation delay (both directions).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerHostDelay {
    pub delays: Vec<DurV>,
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum NicBuffer {
    #[default]
    Unlimited,
    Limited(QSize),
}
impl Serialize for NicBuffer {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            NicBuffer::Unlimited => s.serialize_str("unlimited"),
            NicBuffer::Limited(q) => q.serialize(s),
        }
    }
}
impl<'de> Deserialize<'de> for NicBuffer {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s == "unlimited" {
            return Ok(NicBuffer::Unlimited);
        }
        QSize::parse(&s).map(NicBuffer::Limited).map_err(|e| serde::de::Error::custom(format!("{e}; or \"unlimited\"")))
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CongestionControl {
    /// NewReno (RFC 5681, RFC 6582), SACK loss recovery (RFC 6675) when negotiated.
    Newreno,
    /// DCTCP (RFC 8257) on top of the same loss recovery.
    Dctcp,
    /// CUBIC (RFC 9438: the cubic window, the Reno-friendly region, fast
    /// convergence, beta = 0.7) on top of the same loss recovery; no HyStart.
    Cubic,
    /// Swift (Kumar et al., SIGCOMM 2020): AIMD on fabric and endpoint
    /// delay, pacing below one packet (tcp/swift.rs, `[tcp.swift]`), on top
    /// of SACK loss recovery.
    Swift,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum SsthreshBasis {
    /// RFC 5681 eq. (4): max(FlightSize / 2, 2 SMSS); on a timeout the SACKed
    /// bytes are left out of FlightSize (see docs/models/tcp.md).
    #[default]
    Flightsize,
    /// max(pipe / 2, 2 SMSS), pipe as in RFC 6675 SetPipe (ns-3's BytesInFlight).
    Pipe,
    /// max(cwnd / 2, 2 SMSS) (Linux Reno's ssthresh).
    Cwnd,
    /// FreeBSD (seed 004's stack): max(w / 2 / SMSS, 2) SMSS in whole
    /// segments, w = cwnd (cc_newreno), or min(snd_wnd, cwnd) at a timeout
    /// (tcp_input.c, cc_cong_signal).
    Freebsd,
}

/// How congestion avoidance counts acknowledged data.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum CaCounting {
    /// RFC 5681 §3.1 byte counting: +1 SMSS per cwnd of acknowledged bytes.
    #[default]
    Bytes,
    /// Linux's tcp_cong_avoid_ai as ns-3's TcpLinuxReno does it on a byte
    /// window: +1 SMSS per floor(cwnd / SMSS) acknowledged segments, the
    /// count kept across window reductions (as ns-3 does).
    Segments,
}

/// The window when fast recovery ends (RFC 6582 §3.2 step 3).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum RecoveryExit {
    /// cwnd = ssthresh: RFC 6582 option (2), and RFC 6675's window at the end
    /// of SACK recovery; Linux (tcp_end_cwnd_reduction) and ns-3
    /// (TcpClassicRecovery::ExitRecovery).
    #[default]
    Ssthresh,
    /// cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS): RFC 6582 option
    /// (1), no burst when little is in flight; FreeBSD's
    /// newreno_post_recovery, with or without SACK (seed 004's stack).
    Flightsize,
}

/// When a backed-off retransmission timer returns to the estimator's RTO.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum RtoBackoffReset {
    /// On a new RTT sample (RFC 6298 §5, last paragraph: Karn's algorithm
    /// keeps the backed-off RTO until a segment that was not retransmitted
    /// is acknowledged; Linux's tcp_ack_update_rtt, where timestamps make
    /// most ACKs a sample).
    #[default]
    RttSample,
    /// On every ACK of new data, sample or not: ns-3 3.44's
    /// TcpSocketBase::NewAck recomputes m_rto from the estimator.
    NewAck,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RtoFormula {
    /// RFC 6298: RTO = SRTT + max(G, 4*RTTVAR), G the clock granularity.
    Rfc6298,
    /// BSD/FreeBSD: RTO = SRTT + 4*RTTVAR (no granularity term).
    Bsd,
    /// Linux (tcp_rtt_estimator, tcp_set_rto): RTO = SRTT + RTTVAR, where
    /// RTTVAR follows the largest mean deviation of the last RTT and is at
    /// least min_rto; counted in whole jiffies of G and run on a jiffy timer.
    Linux,
}

/// Loss detection of a SACK sender (docs/models/rack-tlp.md).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LossDetection {
    /// RFC 6675: a segment is lost once DupThresh segments (or
    /// (DupThresh - 1) x SMSS bytes) above it are SACKed.
    #[default]
    Dupthresh,
    /// RFC 8985: RACK's time-based detection and TLP's tail loss probes.
    RackTlp,
}

/// How a sender times its RTT samples (docs/models/tcp.md, "The RTT clock").
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RttClock {
    /// One clock of ticks of G: TSval is the tick count, and a sample
    /// (timestamp echo or the one timed segment per RTT) is
    /// max(1, ticks elapsed) x G. FreeBSD's `ticks` (seed 004's stack), and
    /// ns-2 without timestamps.
    Ticks,
    /// Linux: the microsecond send time of the oldest newly acknowledged
    /// segment that was never retransmitted (else of the first newly SACKed
    /// one), and only failing both the timestamp echo, in milliseconds with
    /// a floor of one (tcp_ack_update_rtt, tcp_rtt_tsopt_us).
    Linux,
    /// ns-3 (TcpSocketBase::CalculateRttSample): when the oldest outstanding
    /// segment is acknowledged; with timestamps, now in milliseconds minus
    /// the echoed milliseconds, and 1 us if that is zero; without, the exact
    /// time since it was sent, unless it was retransmitted.
    Ns3,
    /// ns-3 before 3.34 (2021), the ns-3 of ECN#'s public code (seed 003):
    /// as `ns3`, but a zero timestamp difference is no sample (not 1 us),
    /// and a retransmitted oldest segment gives none even with timestamps.
    #[serde(rename = "ns3_legacy")]
    Ns3Legacy,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DelayedAck {
    #[serde(default)]
    pub enabled: bool,
    /// Acknowledge at least every `count` full-sized segments.
    #[serde(default = "two")]
    pub count: u32,
    /// Send a held ACK after this long.
    #[serde(default = "default_delack_timeout")]
    pub timeout: DurV,
}
impl Default for DelayedAck {
    fn default() -> Self {
        DelayedAck { enabled: false, count: 2, timeout: default_delack_timeout() }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpCfg {
    #[serde(default = "default_cc")]
    pub cc: CongestionControl,
    /// ECN negotiation (RFC 3168). DCTCP always uses ECN.
    #[serde(default)]
    pub ecn: bool,
    #[serde(default = "yes")]
    pub sack: bool,
    #[serde(default = "yes")]
    pub timestamps: bool,
    #[serde(default = "yes")]
    pub window_scale: bool,
    /// Initial congestion window in segments (RFC 6928 default 10).
    #[serde(default = "default_iw")]
    pub initial_cwnd: u32,
    /// Initial slow-start threshold in segments (RFC 5681 §3.1: "arbitrarily
    /// high" by default, as here; Linux's per-route `ssthresh` metric and
    /// htsim's datacenter programs set one).
    #[serde(default)]
    pub initial_ssthresh: Option<u32>,
    #[serde(default = "default_min_rto")]
    pub min_rto: DurV,
    #[serde(default = "default_initial_rto")]
    pub initial_rto: DurV,
    /// After a SYN or SYN-ACK timeout, data starts with an RTO of at least
    /// this and no backoff (RFC 6298 §5.7: 3 s; Linux's TCP_TIMEOUT_FALLBACK).
    /// "0s": no reset, the backed-off initial RTO goes on (ns-2, ns-3).
    #[serde(default = "default_syn_timeout_rto")]
    pub syn_timeout_rto: DurV,
    #[serde(default = "default_max_rto")]
    pub max_rto: DurV,
    /// How RTT samples are taken (ticks, linux, ns3).
    #[serde(default = "default_rtt_clock")]
    pub rtt_clock: RttClock,
    /// Granularity G: with the `ticks` clock the clock itself; with `linux`
    /// the jiffy (1/HZ) the RTO is counted in; with `ns3` its
    /// ClockGranularity, the G of RFC 6298's RTO. (The timestamps of
    /// `linux` and `ns3` tick in milliseconds, as theirs do.)
    #[serde(default = "default_granularity")]
    pub rtt_granularity: DurV,
    #[serde(default = "default_rto_formula")]
    pub rto_formula: RtoFormula,
    #[serde(default = "three")]
    pub dupthresh: u32,
    /// How a SACK sender decides a segment is lost: RFC 6675's DupThresh
    /// rule, or RACK-TLP (RFC 8985; tcp/rack.rs).
    #[serde(default)]
    pub loss_detection: LossDetection,
    /// TLP.max_ack_delay (RFC 8985 §7.2): what a probe timeout adds for the
    /// peer's delayed ACK when one segment is in flight.
    #[serde(default = "default_tlp_max_ack_delay")]
    pub tlp_max_ack_delay: DurV,
    /// What a probe timeout adds when more than one segment is in flight:
    /// none in RFC 8985 §7.2; Linux adds TCP_TIMEOUT_MIN, two jiffies
    /// (tcp_schedule_loss_probe).
    #[serde(default)]
    pub tlp_slack: DurV,
    /// Report a duplicate segment in the first SACK block (DSACK, RFC 2883),
    /// as Linux does (net.ipv4.tcp_dsack); RACK's reordering window grows
    /// with them, and TLP tells a needless probe by one.
    #[serde(default)]
    pub dsack: bool,
    /// Limited transmit (RFC 3042).
    #[serde(default = "yes")]
    pub limited_transmit: bool,
    /// During SACK recovery, resend a retransmission once data sent after it
    /// has been SACKed (as Linux does); RFC 6675 alone waits for the RTO.
    #[serde(default = "yes")]
    pub detect_lost_retransmits: bool,
    /// What ssthresh halves on a loss or ECN response.
    #[serde(default)]
    pub ssthresh_basis: SsthreshBasis,
    /// How congestion avoidance counts acknowledged data.
    #[serde(default)]
    pub ca_counting: CaCounting,
    /// The window when fast recovery ends.
    #[serde(default)]
    pub recovery_exit: RecoveryExit,
    /// When a backed-off RTO returns to the estimator's value.
    #[serde(default)]
    pub rto_backoff_reset: RtoBackoffReset,
    #[serde(default)]
    pub delayed_ack: DelayedAck,
    #[serde(default)]
    pub nagle: bool,
    /// RFC 5681 §4.1: after sending nothing for longer than the RTO, restart
    /// from cwnd = min(IW, cwnd) (Linux's tcp_slow_start_after_idle, ns-2's
    /// slow_start_restart_). ns-3 does not restart.
    #[serde(default = "yes")]
    pub restart_after_idle: bool,
    /// F-RTO (RFC 5682 §2.1; §3.1 when SACK is in use): detect a spurious
    /// timeout by sending new data, and undo its window reduction.
    #[serde(default)]
    pub frto: bool,
    /// FreeBSD's bad-retransmit undo (t_badrxtwin, Allman & Paxson): a first
    /// timeout whose next new ACK arrives within SRTT/2 of it was needless;
    /// restore the window and resume where sending left off. The behaviour
    /// seed 004 §6.3.2 describes. An alternative to `frto`.
    #[serde(default)]
    pub bad_rexmit_undo: bool,
    /// At a timeout, forget what the receiver SACKed and go back N over
    /// every byte, SACKed or not (FreeBSD of seed 004's time: tcp_timer_rexmt
    /// frees the SACK holes, and tcp_output uses SACK only in fast recovery;
    /// the reset RFC 5682 §3.1 step 1 cites from RFC 2018). Off: keep the
    /// scoreboard and skip SACKed ranges when going back N (Linux).
    #[serde(default)]
    pub rto_forgets_sack: bool,
    /// An ACK owed at once (delayed ACK off, or out of order) leaves before
    /// the application reads the data, so a request's ACK precedes the
    /// response instead of riding on it: the stack's input path sends it,
    /// and the application runs afterwards (FreeBSD through NSC in CLUES,
    /// seed 004 Fig. 3). Off: the application answers within the same
    /// instant and the response carries the ACK.
    #[serde(default)]
    pub ack_before_app: bool,
    /// ARREAR (seed 004 §6.2): timestamps carry measurement tokens and RTT
    /// samples have the resolution of the sender's own clock.
    #[serde(default)]
    pub arrear: Option<ArrearCfg>,
    /// Grow cwnd only while it limits sending (RFC 7661's idea, as Linux's
    /// tcp_is_cwnd_limited): in slow start while cwnd < 2 x the data in
    /// flight, otherwise only if the last send attempt stopped at cwnd.
    #[serde(default)]
    pub cwnd_validation: bool,
    /// Grow cwnd on every ACK of new data, an ECN-Echo or the window after
    /// an ECN reduction included (htsim's TcpSrc). Off: neither grows it,
    /// as Linux's and ns-3's CWR state.
    #[serde(default)]
    pub grow_in_cwr: bool,
    /// At most this many segments leave in response to one ACK, timer or
    /// application write (ns-2's `maxburst_`; the ECN# authors' ns-3 fork
    /// sends at most 2 per `SendPendingData`). 0: no limit.
    #[serde(default)]
    pub max_burst: u16,
    /// MSS option to advertise (and the largest segment to send, less TCP
    /// options). Default: MTU - 40.
    #[serde(default)]
    pub mss: Option<Bytes>,
    /// Receive buffer: the advertised window (the application reads at once).
    #[serde(default = "default_rcv_buffer")]
    pub rcv_buffer: Bytes,
    /// DCTCP EWMA gain g.
    #[serde(default = "default_dctcp_g")]
    pub dctcp_g: f64,
    /// DCTCP alpha before the first update (RFC 8257 suggests 1).
    #[serde(default = "one_f")]
    pub dctcp_alpha_init: f64,
    /// Smallest cwnd a DCTCP cut leaves, in segments (Linux 2; ns-2 1; 0 =
    /// no floor, as ns-3 3.44).
    #[serde(default = "two")]
    pub dctcp_min_cwnd: u32,
    /// Swift's parameters (used when cc = "swift").
    #[serde(default)]
    pub swift: SwiftCfg,
}
impl Default for TcpCfg {
    fn default() -> Self {
        serde_json::from_str("{}").expect("defaults deserialize")
    }
}

impl TcpCfg {
    pub fn ecn_enabled(&self) -> bool {
        self.ecn || self.cc == CongestionControl::Dctcp
    }
}

/// Swift's parameters (Kumar et al., SIGCOMM 2020, Algorithm 1 and §3.5;
/// docs/models/swift.md). The paper gives none of their production values;
/// the defaults are those of Google's Falcon simulator (isekai), which says
/// they come from Swift in Pony Express, but min_cwnd, which is the paper's.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwiftCfg {
    /// Fabric target delay before hop and flow scaling.
    #[serde(default = "swift_base_target")]
    pub base_target: DurV,
    /// Target added per switch on the path (topology-based scaling).
    #[serde(default = "swift_per_hop")]
    pub per_hop: DurV,
    /// Flow-based scaling: up to this much more target as the fabric window
    /// falls from fs_max_cwnd to fs_min_cwnd packets ("0s": none).
    #[serde(default = "swift_fs_range")]
    pub fs_range: DurV,
    #[serde(default = "swift_fs_min_cwnd")]
    pub fs_min_cwnd: f64,
    #[serde(default = "swift_max_cwnd")]
    pub fs_max_cwnd: f64,
    /// Target of the endpoint delay (the time the receiver held a packet
    /// before acknowledging it).
    #[serde(default = "swift_base_target")]
    pub endpoint_target: DurV,
    /// Additive increment, packets per RTT.
    #[serde(default = "one_f")]
    pub ai: f64,
    /// Multiplicative-decrease gain.
    #[serde(default = "swift_beta")]
    pub beta: f64,
    /// Largest fraction of the window one decrease takes.
    #[serde(default = "swift_max_mdf")]
    pub max_mdf: f64,
    /// Window bounds, packets.
    #[serde(default = "swift_min_cwnd")]
    pub min_cwnd: f64,
    #[serde(default = "swift_max_cwnd")]
    pub max_cwnd: f64,
    /// Timeouts in a row after which the window drops to min_cwnd.
    #[serde(default = "three")]
    pub retx_reset: u32,
}
impl Default for SwiftCfg {
    fn default() -> Self {
        serde_json::from_str("{}").expect("defaults deserialize")
    }
}
fn swift_base_target() -> DurV {
    DurV(Dur::from_us(25))
}
fn swift_per_hop() -> DurV {
    DurV(Dur::from_us(1))
}
fn swift_fs_range() -> DurV {
    DurV(Dur::from_us(100))
}
fn swift_fs_min_cwnd() -> f64 {
    0.1
}
fn swift_beta() -> f64 {
    0.8
}
fn swift_max_mdf() -> f64 {
    0.5
}
fn swift_min_cwnd() -> f64 {
    0.001
}
fn swift_max_cwnd() -> f64 {
    256.0
}

/// A set of host indices: `3`, `[0, 2, 5]` or `"0..8"` (end exclusive).
#[derive(Debug, Clone, PartialEq)]
pub struct HostSet(pub Vec<u32>);

impl Serialize for HostSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}
impl<'de> Deserialize<'de> for HostSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde_json::Value;
        let v = Value::deserialize(d)?;
        let bad = || {
            serde::de::Error::custom(format!(
                "invalid host set {v}: expected a host index like 3, a list like [0, 2], or a range like \"0..8\" (end excluded)"
            ))
        };
        let index = |x: &Value| x.as_u64().and_then(|h| u32::try_from(h).ok());
        match &v {
            Value::Number(_) => Ok(HostSet(vec![index(&v).ok_or_else(bad)?])),
            Value::Array(items) => items.iter().map(|x| index(x).ok_or_else(bad)).collect::<Result<_, _>>().map(HostSet),
            Value::String(s) => {
                let (a, b) = s.split_once("..").ok_or_else(bad)?;
                let a: u32 = a.trim().parse().map_err(|_| bad())?;
                let b: u32 = b.trim().parse().map_err(|_| bad())?;
                if b <= a || b - a > 1_000_000 {
                    return Err(bad());
                }
                Ok(HostSet((a..b).collect()))
            }
            _ => Err(bad()),
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Pairing {
    /// Every source sends to every destination (pairs with src == dst skipped).
    #[default]
    All,
    /// The i-th source sends to the i-th destination.
    Zip,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub src: u32,
    pub dst: u32,
    pub size: FlowSize,
    #[serde(default)]
    pub start: DurV,
    /// The DSCP of the sender's packets (the class at a scheduler).
    #[serde(default)]
    pub dscp: u8,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Workload {
    Bulk(Bulk),
    Flows(Flows),
    Incast(Incast),
    Poisson(Poisson),
    Search(Search),
    Requests(Requests),
}
tagged_deserialize!(Workload, "workload", { "bulk" => Bulk, "flows" => Flows, "incast" => Incast, "poisson" => Poisson, "search" => Search, "requests" => Requests });

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RequestArrival {
    /// Each server is asked again as soon as its response is complete
    /// (seed 000's static-flow experiment).
    ClosedLoop,
    /// Requests at Poisson times at `load` of the client's link, to the
    /// servers in round robin (seed 000's dynamic-flow experiment).
    Poisson,
}

/// A client fetches responses from servers over persistent connections.
/// Poisson requests use a pool per server: an idle connection if there is
/// one, else a new connection (whose handshake counts in that response's FCT).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requests {
    pub client: u32,
    pub servers: HostSet,
    #[serde(default = "default_query_size")]
    pub request_size: Bytes,
    pub response: SizeSpec,
    pub arrival: RequestArrival,
    /// Poisson: the responses' load on the client's link.
    #[serde(default)]
    pub load: Option<f64>,
    #[serde(default)]
    pub start: DurV,
    /// Poisson: no new requests after this time (default: run.duration).
    #[serde(default)]
    pub stop: Option<DurV>,
    /// Closed loop: requests per entry of `servers` (ApacheBench's -n over
    /// -c: list a server c times for c concurrent requests); the workload is
    /// done when all are answered. Default: ask again until the run ends.
    #[serde(default)]
    pub count: Option<u32>,
    /// Closed loop: each request leaves after a uniform random delay in
    /// [0, send_jitter), drawn from the run's seed: a testbed host's
    /// scheduling noise, which a simulator otherwise lacks (default 0).
    #[serde(default)]
    pub send_jitter: DurV,
    /// `persistent` (default): pooled connections, as above. `per_flow`: a
    /// new connection for every request, which the server closes after its
    /// response and the client then closes too (HTTP without keep-alive,
    /// ApacheBench without -k).
    #[serde(default = "persistent_connections")]
    pub connections: Connections,
}

fn persistent_connections() -> Connections {
    Connections::Persistent
}

/// Fan-out/fan-in search (seed 000 §III-B, after OLDISim): the client sends a
/// query to every server at Poisson times; each server serves its queries
/// one at a time, for a random service time, then answers; a query is
/// complete when the slowest server has answered.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Search {
    pub client: u32,
    pub servers: HostSet,
    #[serde(default = "default_search_query")]
    pub query_size: Bytes,
    pub response_size: Bytes,
    pub service_time: ServiceTime,
    /// Mean queries per second. Give this or `server_load`.
    #[serde(default)]
    pub query_rate: Option<f64>,
    /// Fraction of a server's time spent serving: query_rate = server_load / mean service time.
    #[serde(default)]
    pub server_load: Option<f64>,
    /// Responses later than this count as missing (queries table).
    #[serde(default)]
    pub deadline: Option<DurV>,
    #[serde(default)]
    pub start: DurV,
    /// No new queries after this time (default: run.duration).
    #[serde(default)]
    pub stop: Option<DurV>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ServiceTime {
    Constant(ConstantTime),
    Exponential(ExponentialTime),
    Gamma(GammaTime),
}
tagged_deserialize!(ServiceTime, "service_time", { "constant" => Constant, "exponential" => Exponential, "gamma" => Gamma });

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConstantTime {
    pub value: DurV,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExponentialTime {
    pub mean: DurV,
}

/// unit * Gamma(shape, scale) + offset; seed 000's search uses shape 0.7,
/// scale 20000, unit 180 ns, offset 10 us (mean 2.53 ms).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GammaTime {
    pub shape: f64,
    pub scale: f64,
    pub unit: DurV,
    #[serde(default)]
    pub offset: DurV,
}

impl ServiceTime {
    pub fn mean_seconds(&self) -> f64 {
        match self {
            ServiceTime::Constant(c) => c.value.0.as_secs_f64(),
            ServiceTime::Exponential(e) => e.mean.0.as_secs_f64(),
            ServiceTime::Gamma(g) => g.shape * g.scale * g.unit.0.as_secs_f64() + g.offset.0.as_secs_f64(),
        }
    }
}

/// A flow-size distribution: a fixed size ("64KB") or an empirical CDF.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SizeSpec {
    Fixed(Bytes),
    Mix(MixSpec),
    Cdf(CdfSpec),
}

/// A discrete mix of sizes with weights: `{ mix = [["900B", 4], ["10MB", 1]] }`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MixSpec {
    pub mix: Vec<(Bytes, f64)>,
}

/// An empirical CDF: points [bytes, P(size <= bytes)], increasing, ending at
/// probability 1. The Python front end fills `points` from a packaged CDF
/// (`cdf = "websearch"`) or a file (`cdf_file`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CdfSpec {
    #[serde(default)]
    pub cdf: Option<String>,
    #[serde(default)]
    pub cdf_file: Option<String>,
    /// For files in packets: bytes per packet.
    #[serde(default)]
    pub packet_bytes: Option<u64>,
    #[serde(default)]
    pub points: Vec<[f64; 2]>,
}

impl SizeSpec {
    pub fn dist(&self) -> crate::traffic::SizeDist {
        match self {
            SizeSpec::Fixed(b) => crate::traffic::SizeDist::fixed(b.0),
            SizeSpec::Mix(m) => crate::traffic::SizeDist::discrete(&m.mix.iter().map(|(b, w)| (b.0, *w)).collect::<Vec<_>>()),
            SizeSpec::Cdf(c) => crate::traffic::SizeDist::new(&c.points),
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// Each source picks a destination uniformly among the other hosts.
    AllToAll,
    /// Every other host sends to `target`.
    AllToOne,
    /// `target` sends to the other hosts, chosen uniformly.
    OneToAll,
    /// A random derangement fixed at the start: each host always sends to
    /// the same other host.
    Permutation,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LoadReference {
    /// The host's own link rate.
    Host,
    /// The host's share of its leaf's uplinks: host rate / oversubscription
    /// (ns3-ecn-sharp's large-scale example). Leaf-spine and fat-tree only.
    UplinkShare,
}

/// Open-loop flows with Poisson arrivals at a target load (see
/// docs/models/workloads.md for the rate formula).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Poisson {
    pub size: SizeSpec,
    /// Offered load as a fraction of the reference capacity.
    pub load: f64,
    pub load_reference: LoadReference,
    pub pattern: Pattern,
    /// Hosts taking part (default: all).
    #[serde(default)]
    pub hosts: Option<HostSet>,
    /// The single destination (all_to_one) or source (one_to_all).
    #[serde(default)]
    pub target: Option<u32>,
    /// all_to_all only: destinations only outside the source's rack.
    #[serde(default)]
    pub other_racks_only: bool,
    #[serde(default)]
    pub start: DurV,
    /// No new flows after this time (default: run.duration).
    #[serde(default)]
    pub stop: Option<DurV>,
    /// A new connection per flow (handshake and FIN), or persistent ones: a
    /// flow takes an idle connection of its (source, destination) pair and
    /// opens another only when all are busy (PIAS-NS2 and T-RACKs, which
    /// seed 002's simulations use).
    #[serde(default)]
    pub connections: Connections,
    /// The DSCP of the senders' packets (the class at a scheduler).
    #[serde(default)]
    pub dscp: u8,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Connections {
    #[default]
    PerFlow,
    Persistent,
}

/// Bulk transfers: one TCP connection per (src, dst) pair, iperf-like when
/// `size = "inf"`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bulk {
    pub src: HostSet,
    pub dst: HostSet,
    pub size: FlowSize,
    #[serde(default)]
    pub start: DurV,
    /// Flow k (in generation order) starts at start + k * stagger.
    #[serde(default)]
    pub stagger: DurV,
    /// Plus a uniform random [0, start_jitter) drawn from the seed: breaks
    /// the phase lock of senders started in the same picosecond.
    #[serde(default)]
    pub start_jitter: DurV,
    #[serde(default)]
    pub pairing: Pairing,
    /// The DSCP of the senders' packets (the class at a scheduler).
    #[serde(default)]
    pub dscp: u8,
}

/// An explicit flow list (the Python front end also fills it from CSV or
/// Parquet files with columns src, dst, bytes, start).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flows {
    pub flows: Vec<FlowSpec>,
}

/// Barrier-synchronised query/response (seed 004 §4.2): the querier sends
/// `query_size` to every responder over persistent connections; each answers
/// `response_size`; the next round starts when all responses are complete
/// (plus `think_time`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Incast {
    pub querier: u32,
    pub responders: HostSet,
    #[serde(default = "default_query_size")]
    pub query_size: Bytes,
    pub response_size: Bytes,
    #[serde(default = "one_u32")]
    pub rounds: u32,
    #[serde(default)]
    pub think_time: DurV,
    /// When the querier opens its connections.
    #[serde(default)]
    pub start: DurV,
    /// Parallel connections per responder; the response is split evenly.
    #[serde(default = "one_u32")]
    pub connections_per_responder: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SamplePorts {
    /// Switch egress ports only.
    #[default]
    Switches,
    /// Switch egress ports and host NICs.
    All,
    /// These ports (ids from the ports table).
    Ports(Vec<u32>),
}
impl Serialize for SamplePorts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SamplePorts::Switches => s.serialize_str("switches"),
            SamplePorts::All => s.serialize_str("all"),
            SamplePorts::Ports(v) => v.serialize(s),
        }
    }
}
impl<'de> Deserialize<'de> for SamplePorts {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        const ALLOWED: &str = "allowed: \"switches\", \"all\" or a list of port ids like [3, 17]";
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(s) if s == "switches" => Ok(SamplePorts::Switches),
            serde_json::Value::String(s) if s == "all" => Ok(SamplePorts::All),
            serde_json::Value::Array(a) => a
                .iter()
                .map(|v| v.as_u64().and_then(|n| u32::try_from(n).ok()))
                .collect::<Option<Vec<u32>>>()
                .map(SamplePorts::Ports)
                .ok_or_else(|| serde::de::Error::custom(format!("invalid port list {}: {ALLOWED}", serde_json::Value::Array(a.clone())))),
            other => Err(serde::de::Error::custom(format!("invalid value {other}: {ALLOWED}"))),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputCfg {
    /// Interval of queue-occupancy samples; "0s" turns sampling off.
    #[serde(default = "default_sample_interval")]
    pub queue_sample_interval: DurV,
    #[serde(default)]
    pub queue_sample_ports: SamplePorts,
    /// Sampling starts at this time (a window of interest in a long run).
    #[serde(default)]
    pub queue_sample_start: DurV,
    /// No samples after this time (default: to the end of the run).
    #[serde(default)]
    pub queue_sample_stop: Option<DurV>,
    /// Record cwnd, ssthresh, srtt, rttvar, rto, bytes in flight on every ACK.
    #[serde(default)]
    pub tcp_trace: bool,
    /// Packet captures (nanosecond pcap), one file each.
    #[serde(default)]
    pub pcap: Vec<PcapCfg>,
}
impl Default for OutputCfg {
    fn default() -> Self {
        OutputCfg {
            queue_sample_interval: default_sample_interval(),
            queue_sample_ports: SamplePorts::Switches,
            queue_sample_start: DurV(Dur::ZERO),
            queue_sample_stop: None,
            tcp_trace: false,
            pcap: Vec::new(),
        }
    }
}

/// A capture point: the link at a host's NIC (`host`) or at a port (`port`,
/// an id from the ports table), both directions, as tcpdump on that
/// interface would see them.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcapCfg {
    /// File name (without .pcap). Default: "host<H>" or "port<P>".
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub host: Option<u32>,
    #[serde(default)]
    pub port: Option<u32>,
    /// Only the packets of this flow's connection (an id of the flows table).
    #[serde(default)]
    pub flow: Option<u32>,
    /// Bytes kept per frame: the headers (128 B) by default.
    #[serde(default = "default_snaplen")]
    pub snaplen: u32,
}

impl PcapCfg {
    pub fn file_name(&self) -> String {
        match (&self.name, self.host, self.port) {
            (Some(n), _, _) => n.clone(),
            (None, Some(h), _) => format!("host{h}"),
            (None, None, Some(p)) => format!("port{p}"),
            _ => "capture".to_string(),
        }
    }
}

/// The most ports a VOQ switch may have (crate::voq keeps ports² queues).
const MAX_VOQ_PORTS: u64 = 4096;

// ---- defaults -----------------------------------------------------------------

fn one() -> u64 {
    1
}
fn one_u32() -> u32 {
    1
}
fn default_hscc_low() -> f64 {
    0.25
}
fn default_hscc_high() -> f64 {
    0.5
}
fn default_pq_threshold() -> Bytes {
    Bytes(1000)
}
fn default_pacer_bucket() -> Bytes {
    Bytes(3000)
}
fn default_pacer_refill() -> DurV {
    DurV(Dur::from_us(16))
}
fn default_pacer_rate_interval() -> DurV {
    DurV(Dur::from_us(64))
}
fn default_pacer_eta() -> f64 {
    0.125
}
fn default_pacer_beta() -> f64 {
    16.0
}
fn default_pacer_p_assoc() -> f64 {
    0.125
}
fn default_pacer_release() -> DurV {
    DurV(Dur::from_ms(10))
}
fn default_pacer_initial_rate() -> RateV {
    RateV(dcsim_engine::Rate::from_bps(100_000_000))
}
fn default_pacer_queue() -> QSize {
    QSize::Packets(1000)
}
fn one_f() -> f64 {
    1.0
}
fn two() -> u32 {
    2
}
fn three() -> u32 {
    3
}
fn yes() -> bool {
    true
}
fn default_mtu() -> u32 {
    1500
}
fn default_switch_buffer() -> QSize {
    QSize::Packets(100)
}
fn default_max_p() -> f64 {
    0.1
}
fn default_red_weight() -> f64 {
    0.002
}
fn default_cc() -> CongestionControl {
    CongestionControl::Newreno
}
fn default_iw() -> u32 {
    10
}
fn default_min_rto() -> DurV {
    DurV(Dur::from_ms(200))
}
fn default_initial_rto() -> DurV {
    DurV(Dur::from_secs(1))
}
fn default_syn_timeout_rto() -> DurV {
    DurV(Dur::from_secs(3))
}
fn default_max_rto() -> DurV {
    DurV(Dur::from_secs(60))
}
fn default_granularity() -> DurV {
    DurV(Dur::from_ms(1))
}
/// The packaged defaults are Linux's: what a user comparing with a modern
/// Linux testbed expects (docs/models/tcp.md, "The RTT clock").
fn default_rto_formula() -> RtoFormula {
    RtoFormula::Linux
}
fn default_rtt_clock() -> RttClock {
    RttClock::Linux
}
/// RFC 8985 §7.2: 200 ms, Linux's TCP_DELACK_MAX.
fn default_tlp_max_ack_delay() -> DurV {
    DurV(Dur::from_ms(200))
}
fn default_delack_timeout() -> DurV {
    DurV(Dur::from_ms(40))
}
fn default_rcv_buffer() -> Bytes {
    Bytes(1 << 20)
}
fn default_dctcp_g() -> f64 {
    1.0 / 16.0
}
fn default_query_size() -> Bytes {
    Bytes(500)
}
fn default_search_query() -> Bytes {
    Bytes(3500)
}
fn default_snaplen() -> u32 {
    128
}
fn default_sample_interval() -> DurV {
    DurV(Dur::from_us(100))
}

// ---- parsing --------------------------------------------------------------------

/// serde fills a struct from a sequence by position, so `run = []` would read
/// as an empty `[run]` and `run = [1]` as its first field. An error at the
/// first key path where the input has an array and the resolved scenario a table.
fn array_read_as_table(input: &serde_json::Value, resolved: &serde_json::Value, path: String) -> Option<ConfigError> {
    use serde_json::Value;
    match (input, resolved) {
        (Value::Array(_), Value::Object(_)) => Some(err(path, format!("expected a table, found the array {input}"))),
        (Value::Object(a), Value::Object(b)) => a.iter().find_map(|(key, value)| {
            let inner = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
            b.get(key).and_then(|r| array_read_as_table(value, r, inner))
        }),
        (Value::Array(a), Value::Array(b)) => {
            a.iter().zip(b).enumerate().find_map(|(i, (x, y))| array_read_as_table(x, y, format!("{path}[{i}]")))
        }
        _ => None,
    }
}

impl Scenario {
    /// Parse a scenario from a JSON value (the Python front end turns TOML
    /// files and dicts into this), checking the schema and then the semantics.
    pub fn from_json_value(v: serde_json::Value) -> Result<Scenario, ConfigError> {
        let s: Scenario = serde_path_to_error::deserialize(v.clone()).map_err(|e| {
            let path = e.path().to_string();
            let (path, msg) = split_nested(&path, &e.into_inner().to_string());
            err(if path == "." { String::new() } else { path }, msg)
        })?;
        let resolved = serde_json::to_value(&s).expect("a scenario always serialises");
        if let Some(e) = array_read_as_table(&v, &resolved, String::new()) {
            return Err(e);
        }
        s.validate()?;
        Ok(s)
    }

    pub fn from_json_str(text: &str) -> Result<Scenario, ConfigError> {
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| err("", format!("the scenario is not valid JSON: {e}")))?;
        Self::from_json_value(v)
    }

    pub fn from_toml_str(text: &str) -> Result<Scenario, ConfigError> {
        let v: serde_json::Value =
            toml::from_str(text).map_err(|e| err("", format!("the scenario is not valid TOML: {e}")))?;
        Self::from_json_value(v)
    }

    /// The resolved scenario (every default filled in) as canonical JSON.
    pub fn resolved_json(&self) -> String {
        serde_json::to_string(self).expect("a scenario always serialises")
    }

    /// SHA-256 of the resolved scenario's canonical JSON, hex.
    pub fn hash(&self) -> String {
        let digest = Sha256::digest(self.resolved_json().as_bytes());
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Largest Ethernet frame a host can send, in bytes (header + FCS included).
    pub fn max_frame_bytes(&self) -> u64 {
        self.link.mtu as u64 + crate::packet::ETH_HEADER + crate::packet::ETH_FCS
    }

    /// Traffic classes at a switch egress port (1 with one FIFO).
    pub fn switch_classes(&self) -> usize {
        match &self.switch.scheduler {
            None => 1,
            Some(Scheduler::StrictPriority(s)) => s.classes as usize,
            Some(Scheduler::Dwrr(d)) => d.quanta.len(),
        }
    }

    /// The lossless classes of `switch.pfc` as a bit set.
    pub fn pfc_lossless(&self) -> u8 {
        match self.switch.pfc.as_ref().and_then(|p| p.classes.as_ref()) {
            Some(cs) => cs.iter().fold(0, |m, &c| m | 1u8 << c.min(7)),
            None => ((1u16 << self.switch_classes().min(8)) - 1) as u8,
        }
    }

    /// A transport other than TCP (`section`) runs the flow workloads only:
    /// the applications (incast, search, requests) are TCP's.
    fn flow_workloads_only(&self, section: &str, incast: &str) -> Result<(), ConfigError> {
        for (i, w) in self.workload.iter().enumerate() {
            let kind = match w {
                Workload::Bulk(_) | Workload::Flows(_) | Workload::Poisson(_) => continue,
                Workload::Incast(_) => "incast",
                Workload::Search(_) => "search",
                Workload::Requests(_) => "requests",
            };
            return Err(err(
                format!("workload[{i}].type"),
                format!("\"{kind}\" runs over TCP; with [{section}] the workloads are \"bulk\", \"flows\" and \"poisson\" (an incast is {incast})"),
            ));
        }
        Ok(())
    }

    /// A receiver-driven transport (`section`) runs without the other
    /// transports in `transports` and without TCP's host and switch add-ons.
    fn alone(&self, section: &str, transports: &[(bool, &str)], why: &str) -> Result<(), ConfigError> {
        let add_ons = [
            (self.host.pacer.is_some(), "host.pacer"),
            (self.host.tsq.is_some(), "host.tsq"),
            (self.host.rtt_variation.is_some(), "host.rtt_variation"),
            (self.switch.hscc.is_some(), "switch.hscc"),
            (self.switch.pfc.is_some(), "switch.pfc"),
            (self.switch.voq.is_some(), "switch.voq"),
        ];
        match transports.iter().chain(&add_ons).find(|(set, _)| *set) {
            Some((_, what)) => Err(err(section, format!("{what} cannot be combined with [{section}] ({why})"))),
            None => Ok(()),
        }
    }

    fn validate_ndp(&self, n: &NdpCfg) -> Result<(), ConfigError> {
        self.flow_workloads_only("ndp", "a bulk many-to-one")?;
        self.alone("ndp", &[(self.rdma.is_some(), "rdma")], "NDP needs neither: its switches trim, its receivers pace")?;
        let room = (self.link.mtu as u64).saturating_sub(crate::packet::IPV4_HEADER + crate::packet::NDP_HEADER);
        let payload = n.payload_for(self.link.mtu);
        if payload == 0 || payload > room {
            return Err(err("ndp.payload", format!("{payload}B does not fit: allowed 1B..={room}B with link.mtu = {} (IPv4 and NDP's header take 46 B)", self.link.mtu)));
        }
        if n.iw == 0 {
            return Err(err("ndp.iw", "0: a flow must push at least 1 packet before its first pull"));
        }
        if !(n.pull_rate > 0.0 && n.pull_rate <= 1.0) {
            return Err(err("ndp.pull_rate", format!("{} is out of range: allowed (0, 1] of the receiver's line rate", n.pull_rate)));
        }
        if n.paths == Some(0) {
            return Err(err("ndp.paths", "0: allowed at least 1 path per flow"));
        }
        if n.data_dscp > 63 {
            return Err(err("ndp.data_dscp", format!("{} is out of range: allowed 0..=63 (6 bits)", n.data_dscp)));
        }
        Ok(())
    }

    fn validate_homa(&self, h: &HomaCfg) -> Result<(), ConfigError> {
        self.flow_workloads_only("homa", "a bulk many-to-one")?;
        let transports = [(self.rdma.is_some(), "rdma"), (self.ndp.is_some(), "ndp")];
        self.alone("homa", &transports, "Homa's receivers schedule, its switches only prioritise")?;
        if !(2..=8).contains(&h.priorities) {
            return Err(err("homa.priorities", format!("{} is out of range: allowed 2..=8 levels", h.priorities)));
        }
        if h.sched_priorities == 0 || h.sched_priorities >= h.priorities {
            return Err(err("homa.sched_priorities", format!("{} is out of range: allowed 1..={} (at least one of the {} levels stays unscheduled)", h.sched_priorities, h.priorities - 1, h.priorities)));
        }
        if h.overcommit == Some(0) || h.overcommit() > h.sched_priorities {
            return Err(err("homa.overcommit", format!("{} is out of range: allowed 1..={} (homa.sched_priorities)", h.overcommit(), h.sched_priorities)));
        }
        let min_mtu = crate::packet::IPV4_HEADER + crate::packet::UDP_HEADER + crate::packet::HOMA_UNSCHED_HEADER + 1;
        if (self.link.mtu as u64) < min_mtu {
            return Err(err("link.mtu", format!("{} leaves no payload for Homa: allowed at least {min_mtu}", self.link.mtu)));
        }
        if h.rtt_bytes.0 < 2 * self.link.mtu as u64 {
            return Err(err("homa.rtt_bytes", format!("{}B is too small: allowed at least two full frames ({}B with link.mtu = {})", h.rtt_bytes.0, 2 * self.link.mtu, self.link.mtu)));
        }
        let unsched = (h.priorities - h.sched_priorities) as usize;
        match &h.cutoffs {
            Some(c) => {
                if c.len() >= unsched {
                    return Err(err("homa.cutoffs", format!("{} bounds for {unsched} unscheduled levels: allowed at most {} (the last level is unbounded)", c.len(), unsched - 1)));
                }
                if c.windows(2).any(|w| w[0].0 >= w[1].0) {
                    return Err(err("homa.cutoffs", "the bounds must increase"));
                }
            }
            None if unsched > 1 && self.homa_size_atoms().is_none() => {
                return Err(err("homa.cutoffs", format!("no poisson workload to compute them from: give {} ascending bounds (bytes) for the {unsched} unscheduled levels", unsched - 1)));
            }
            None => {}
        }
        match &self.switch.scheduler {
            Some(Scheduler::StrictPriority(sp)) if sp.classes >= h.priorities as u32 => Ok(()),
            Some(Scheduler::StrictPriority(sp)) => Err(err("switch.scheduler.classes", format!("{} classes for {} Homa levels: allowed at least homa.priorities", sp.classes, h.priorities))),
            _ => Ok(()), // no priorities: a control experiment, as asked
        }
    }

    /// The first poisson workload's sizes as atoms (bytes, probability):
    /// a CDF's rows, each point taking the probability since the one
    /// before (Homa's simulator reads its CDF files so).
    pub fn homa_size_atoms(&self) -> Option<Vec<(u64, f64)>> {
        let size = self.workload.iter().find_map(|w| if let Workload::Poisson(p) = w { Some(&p.size) } else { None })?;
        Some(match size {
            SizeSpec::Fixed(b) => vec![(b.0, 1.0)],
            SizeSpec::Mix(m) => {
                let total: f64 = m.mix.iter().map(|x| x.1).sum();
                m.mix.iter().map(|(b, w)| (b.0, w / total)).collect()
            }
            SizeSpec::Cdf(c) => {
                let mut prev = 0.0;
                let mut atoms = Vec::new();
                for &[x, p] in &c.points {
                    if p > prev {
                        atoms.push(((x.ceil() as u64).max(1), p - prev));
                    }
                    prev = p;
                }
                atoms
            }
        })
    }

    fn validate_rdma(&self, r: &RdmaCfg) -> Result<(), ConfigError> {
        self.flow_workloads_only("rdma", "a poisson pattern")?;
        let tcp_only = [
            (self.host.pacer.is_some(), "host.pacer"),
            (self.host.tsq.is_some(), "host.tsq"),
            (self.host.rtt_variation.is_some(), "host.rtt_variation"),
            (self.switch.hscc.is_some(), "switch.hscc"),
        ];
        if let Some((_, what)) = tcp_only.iter().find(|(set, _)| *set) {
            return Err(err("rdma", format!("{what} acts on TCP and cannot be combined with [rdma]")));
        }
        let room = (self.link.mtu as u64).saturating_sub(crate::packet::IPV4_HEADER + crate::packet::UDP_HEADER + crate::packet::ROCE_BTH + crate::packet::ROCE_ICRC);
        if r.payload.0 == 0 || r.payload.0 > room {
            return Err(err("rdma.payload", format!("{} does not fit: allowed 1B..={room}B with link.mtu = {} (IP, UDP, BTH and ICRC take 44 B)", r.payload, self.link.mtu)));
        }
        if r.ack_every == 0 {
            return Err(err("rdma.ack_every", "0: allowed at least 1 (every packet)"));
        }
        if r.rto.0 == Dur::ZERO {
            return Err(err("rdma.rto", "the retransmission timeout must be greater than zero"));
        }
        if r.rate_step.is_some_and(|s| s.0.bps == 0) {
            return Err(err("rdma.rate_step", "must be greater than zero (omit it for exact rates)"));
        }
        match &r.cc {
            RdmaCc::Timely(t) => {
                if !(t.beta > 0.0 && t.beta <= 1.0 && t.alpha > 0.0 && t.alpha <= 1.0) {
                    return Err(err("rdma.cc", format!("beta {} and alpha {} must be in (0, 1]", t.beta, t.alpha)));
                }
                if !(t.max_cut > 0.0 && t.max_cut <= 1.0) {
                    return Err(err("rdma.cc.max_cut", format!("{} is out of range: allowed (0, 1]", t.max_cut)));
                }
                if t.t_low.0 >= t.t_high.0 {
                    return Err(err("rdma.cc.t_high", format!("{} must be above t_low ({})", crate::units::dur_string(t.t_high.0), crate::units::dur_string(t.t_low.0))));
                }
                if t.min_rtt.0 == Dur::ZERO || t.segment.0 == 0 || t.min_rate.0.bps == 0 {
                    return Err(err("rdma.cc", "min_rtt, segment and min_rate must be greater than zero"));
                }
            }
            RdmaCc::Hpcc(h) => {
                if !(h.eta > 0.0 && h.eta <= 1.0) {
                    return Err(err("rdma.cc.eta", format!("{} is out of range: allowed (0, 1]", h.eta)));
                }
                if !(1..=16).contains(&h.max_hops) {
                    return Err(err("rdma.cc.max_hops", format!("{} is out of range: allowed 1..=16", h.max_hops)));
                }
                if h.base_rtt.is_some_and(|t| t.0 == Dur::ZERO) || h.min_rate.0.bps == 0 {
                    return Err(err("rdma.cc", "base_rtt and min_rate must be greater than zero"));
                }
            }
            RdmaCc::Dctcp(d) => {
                if !(d.g > 0.0 && d.g <= 1.0) {
                    return Err(err("rdma.cc.g", format!("{} is out of range: allowed (0, 1]", d.g)));
                }
                if d.min_rate.0.bps == 0 {
                    return Err(err("rdma.cc.min_rate", "must be greater than zero"));
                }
            }
            _ => {}
        }
        if let RdmaCc::Dcqcn(d) = &r.cc {
            if !(d.g > 0.0 && d.g <= 1.0) {
                return Err(err("rdma.cc.g", format!("{} is out of range: allowed (0, 1]", d.g)));
            }
            for (key, v) in [("alpha_interval", d.alpha_interval), ("increase_timer", d.increase_timer)] {
                if v.0 == Dur::ZERO {
                    return Err(err(format!("rdma.cc.{key}"), "must be greater than zero"));
                }
            }
            if d.decrease_interval.is_some_and(|v| v.0 == Dur::ZERO) {
                return Err(err("rdma.cc.decrease_interval", "must be greater than zero (omit it to cut on every CNP)"));
            }
            if d.min_rate.0.bps == 0 {
                return Err(err("rdma.cc.min_rate", "must be greater than zero"));
            }
        }
        Ok(())
    }

    fn validate_pfc(&self, pfc: &PfcCfg) -> Result<(), ConfigError> {
        let classes = self.switch_classes();
        if classes > crate::pfc::CLASSES {
            return Err(err("switch.scheduler", format!("{classes} classes with switch.pfc: PFC has 8 priorities, allowed 1..=8 classes")));
        }
        for (i, &c) in pfc.classes.iter().flatten().enumerate() {
            if c as usize >= classes {
                return Err(err(format!("switch.pfc.classes[{i}]"), format!("class {c} does not exist: the switch has {classes} class(es), 0..={}", classes - 1)));
            }
        }
        if self.switch.voq.is_some() {
            return Err(err("switch.pfc", "PFC cannot be combined with switch.voq (the VOQ switch has its own ingress buffers)"));
        }
        if let Some(Scheduler::StrictPriority(StrictPriorityCfg { full: FullBuffer::PushOutLowest, .. })) = &self.switch.scheduler {
            return Err(err("switch.scheduler.full", "\"push_out_lowest\" would drop lossless frames: with switch.pfc use \"drop_arrival\""));
        }
        match pfc.xoff {
            Xoff::Dynamic if self.switch.shared_buffer.is_none() => {
                return Err(err("switch.pfc.xoff", "\"dynamic\" thresholds are a share of the free shared buffer: set switch.shared_buffer, or give a size"));
            }
            Xoff::Bytes(0) => return Err(err("switch.pfc.xoff", "0B would pause at every frame: allowed a size above 0, or \"dynamic\"")),
            Xoff::Bytes(b) if pfc.xon_offset.is_some_and(|o| o.0 > b) => {
                return Err(err("switch.pfc.xon_offset", format!("{} is above XOFF ({b}B): allowed at most XOFF", pfc.xon_offset.unwrap())));
            }
            _ => {}
        }
        if pfc.per.is_some() && !matches!(pfc.xoff, Xoff::Dynamic) {
            return Err(err("switch.pfc.per", "scales the share of the free buffer: it needs xoff = \"dynamic\""));
        }
        if !(pfc.alpha > 0.0 && pfc.alpha <= 64.0) {
            return Err(err("switch.pfc.alpha", format!("{} is out of range: allowed (0, 64]", pfc.alpha)));
        }
        if pfc.quanta == 0 {
            return Err(err("switch.pfc.quanta", "0 quanta would never pause: allowed 1..=65535"));
        }
        if pfc.refresh.is_some_and(|r| r.0 == Dur::ZERO) {
            return Err(err("switch.pfc.refresh", "the refresh interval must be greater than zero"));
        }
        if pfc.deadlock_after.0 == Dur::ZERO {
            return Err(err("switch.pfc.deadlock_after", "must be greater than zero"));
        }
        if let (Some(sb), crate::units::Headroom::Bytes(h)) = (self.switch.shared_buffer, pfc.headroom) {
            if h >= sb.size.0 {
                return Err(err("switch.pfc.headroom", format!("{h}B per port and class does not fit in the shared buffer of {}", sb.size)));
            }
        }
        Ok(())
    }

    /// Swift (tcp.cc = "swift") measures delay with the timestamp option and
    /// recovers from loss with SACK; it replaces the window arithmetic the
    /// other options adjust, and reacts to delay, not ECN.
    fn validate_swift(&self) -> Result<(), ConfigError> {
        let t = &self.tcp;
        let w = &t.swift;
        for (key, on) in [("timestamps", !t.timestamps), ("sack", !t.sack)] {
            if on {
                return Err(err(format!("tcp.{key}"), "false with tcp.cc = \"swift\": Swift needs it (delay samples ride on timestamps, loss recovery on SACK)"));
            }
        }
        for (key, on) in [("ecn", t.ecn), ("frto", t.frto), ("bad_rexmit_undo", t.bad_rexmit_undo), ("cwnd_validation", t.cwnd_validation)] {
            if on {
                return Err(err(format!("tcp.{key}"), "true with tcp.cc = \"swift\": Swift reacts to delay and owns its window; set it to false"));
            }
        }
        if t.arrear.is_some() || t.rtt_clock == RttClock::Ticks {
            return Err(err("tcp.rtt_clock", "Swift takes its own nanosecond send stamps: it needs rtt_clock = \"linux\", \"ns3\" or \"ns3_legacy\" and no tcp.arrear"));
        }
        let positive = |key: &str, v: f64| -> Result<(), ConfigError> {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(err(format!("tcp.swift.{key}"), format!("{v} is out of range: allowed a finite number > 0")))
            }
        };
        for (key, v) in [("fs_min_cwnd", w.fs_min_cwnd), ("fs_max_cwnd", w.fs_max_cwnd), ("ai", w.ai), ("beta", w.beta), ("min_cwnd", w.min_cwnd), ("max_cwnd", w.max_cwnd)] {
            positive(key, v)?;
        }
        if w.fs_min_cwnd >= w.fs_max_cwnd {
            return Err(err("tcp.swift.fs_min_cwnd", format!("{} is not below fs_max_cwnd = {}", w.fs_min_cwnd, w.fs_max_cwnd)));
        }
        if w.min_cwnd > w.max_cwnd {
            return Err(err("tcp.swift.min_cwnd", format!("{} is above max_cwnd = {}", w.min_cwnd, w.max_cwnd)));
        }
        if !(w.max_mdf > 0.0 && w.max_mdf < 1.0) {
            return Err(err("tcp.swift.max_mdf", format!("{} is out of range: allowed (0, 1)", w.max_mdf)));
        }
        if w.retx_reset == 0 {
            return Err(err("tcp.swift.retx_reset", "0 is out of range: allowed at least 1"));
        }
        for (key, d) in [("base_target", w.base_target), ("endpoint_target", w.endpoint_target)] {
            if d.0 == Dur::ZERO {
                return Err(err(format!("tcp.swift.{key}"), "must be greater than zero"));
            }
        }
        Ok(())
    }

    /// Semantic checks that serde cannot express.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let hosts = self.topology.num_hosts();
        match &self.topology {
            Topology::Star(Star { hosts, .. }) => {
                if *hosts < 2 {
                    return Err(err("topology.hosts", format!("a star needs at least 2 hosts, got {hosts}")));
                }
                if *hosts > 100_000 {
                    return Err(err("topology.hosts", format!("at most 100000 hosts are supported, got {hosts}")));
                }
            }
            Topology::Leafspine(t) => {
                for (key, v) in [("leaves", t.leaves), ("spines", t.spines), ("hosts_per_leaf", t.hosts_per_leaf), ("links_per_pair", t.links_per_pair)] {
                    if v == 0 || v > 10_000 {
                        return Err(err(format!("topology.{key}"), format!("{v} is out of range: allowed 1..=10000")));
                    }
                }
                if t.leaves as u64 * t.hosts_per_leaf as u64 > 100_000 || t.leaves as u64 * t.spines as u64 * t.links_per_pair as u64 > 1_000_000 {
                    return Err(err("topology", "at most 100000 hosts and 1000000 leaf-spine links are supported"));
                }
                if t.leaves * t.hosts_per_leaf < 2 {
                    return Err(err("topology.hosts_per_leaf", "a leaf-spine needs at least 2 hosts"));
                }
                match (t.uplink_rate, t.oversubscription) {
                    (Some(_), Some(_)) => return Err(err("topology.oversubscription", "give `uplink_rate` or `oversubscription`, not both")),
                    (None, Some(o)) if !(o > 0.0 && o <= 1000.0) => {
                        return Err(err("topology.oversubscription", format!("{o} is out of range: allowed (0, 1000]")))
                    }
                    _ => {}
                }
            }
            Topology::Fattree(t) => {
                if t.k < 2 || t.k % 2 != 0 || t.k > 72 {
                    return Err(err("topology.k", format!("k = {} is not allowed: k must be even, 2..=72", t.k)));
                }
                if !(1..=t.k).contains(&t.pods()) {
                    return Err(err("topology.pods", format!("{} is out of range: allowed 1..={} (k)", t.pods(), t.k)));
                }
                if !(1..=1000).contains(&t.hosts_per_edge()) {
                    return Err(err("topology.hosts_per_edge", format!("{} is out of range: allowed 1..=1000", t.hosts_per_edge())));
                }
                if t.hosts() > 100_000 || t.hosts() < 2 {
                    return Err(err("topology", format!("{} hosts: allowed 2..=100000", t.hosts())));
                }
            }
            Topology::Ring(t) => {
                if !(3..=1000).contains(&t.switches) {
                    return Err(err("topology.switches", format!("{} is out of range: a ring has 3..=1000 switches", t.switches)));
                }
                if !(1..=1000).contains(&t.hosts_per_switch) {
                    return Err(err("topology.hosts_per_switch", format!("{} is out of range: allowed 1..=1000", t.hosts_per_switch)));
                }
            }
            Topology::Dumbbell(Dumbbell { senders, receivers, .. }) => {
                if *senders < 1 {
                    return Err(err("topology.senders", format!("a dumbbell needs at least 1 sender, got {senders}")));
                }
                if *receivers < 1 {
                    return Err(err("topology.receivers", format!("a dumbbell needs at least 1 receiver, got {receivers}")));
                }
                if senders.saturating_add(*receivers) > 100_000 {
                    return Err(err("topology", "at most 100000 hosts are supported"));
                }
            }
        }
        let mtu = self.link.mtu;
        if !(576..=9216).contains(&mtu) {
            return Err(err("link.mtu", format!("MTU {mtu} is out of range: allowed 576..=9216 bytes")));
        }
        if !(0.0..1.0).contains(&self.link.loss_rate) {
            return Err(err("link.loss_rate", format!("{} is out of range: allowed [0, 1)", self.link.loss_rate)));
        }
        let max_frame = self.max_frame_bytes();
        let check_capacity = |path: &str, q: QSize| -> Result<(), ConfigError> {
            match q {
                QSize::Packets(0) => Err(err(path, "a buffer must hold at least one packet, got \"0pkt\"")),
                QSize::Bytes(b) if b < max_frame => Err(err(
                    path,
                    format!("a buffer of {b}B cannot hold one full-sized frame ({max_frame}B with MTU {mtu}); allowed: at least {max_frame}B or \"1pkt\""),
                )),
                _ => Ok(()),
            }
        };
        check_capacity("switch.buffer", self.switch.buffer)?;
        match &self.host.rtt_variation {
            Some(RttVariation::PerFlow(v)) if v.classes.is_empty() || v.classes.len() > 64 => {
                return Err(err("host.rtt_variation.classes", format!("{} classes: allowed 1..=64", v.classes.len())));
            }
            Some(RttVariation::PerHost(v)) if v.delays.is_empty() => {
                return Err(err("host.rtt_variation.delays", "give at least one delay"));
            }
            _ => {}
        }
        if let Some(sb) = self.switch.shared_buffer {
            if sb.size.0 < max_frame {
                return Err(err("switch.shared_buffer.size", format!("{} cannot hold one full-sized frame ({max_frame}B)", sb.size)));
            }
            if !(sb.alpha > 0.0 && sb.alpha <= 64.0) {
                return Err(err("switch.shared_buffer.alpha", format!("{} is out of range: allowed (0, 64]", sb.alpha)));
            }
        }
        if let NicBuffer::Limited(q) = self.host.nic_buffer {
            check_capacity("host.nic_buffer", q)?;
        }
        if self.tcp.frto && self.tcp.bad_rexmit_undo {
            return Err(err("tcp.bad_rexmit_undo", "true together with tcp.frto = true: the two detect spurious timeouts in different ways; enable one"));
        }
        if self.tcp.cc == CongestionControl::Swift {
            self.validate_swift()?;
        }
        if let Some(a) = &self.tcp.arrear {
            if !self.tcp.timestamps {
                return Err(err("tcp.arrear", "ARREAR carries its tokens in the timestamp option: it needs tcp.timestamps = true"));
            }
            if a.clock.resolution() == Dur::ZERO {
                return Err(err("tcp.arrear.clock", "the clock resolution must be at least 1ps"));
            }
            if a.source.0 == Dur::ZERO {
                return Err(err("tcp.arrear.source", "the time source's resolution must be at least 1ps"));
            }
            if a.msl.0 == Dur::ZERO {
                return Err(err("tcp.arrear.msl", "the MSL must be greater than zero"));
            }
            // A SYN has 40 B of IP and TCP headers and 20 B of options.
            let room = (self.link.mtu as u64).saturating_sub(60);
            if a.syn_data.0 > room {
                return Err(err("tcp.arrear.syn_data", format!("{} B does not fit in a SYN: at most {room} B with link.mtu = {}", a.syn_data.0, self.link.mtu)));
            }
            if self.tcp.rtt_clock != RttClock::Ticks {
                let name = match self.tcp.rtt_clock {
                    RttClock::Ticks => "ticks",
                    RttClock::Linux => "linux",
                    RttClock::Ns3 => "ns3",
                    RttClock::Ns3Legacy => "ns3_legacy",
                };
                return Err(err("tcp.rtt_clock", format!("ARREAR (tcp.arrear) replaces the samples of the tick clock and needs rtt_clock = \"ticks\"; got \"{name}\" (\"linux\" is the default)")));
            }
        }
        if self.host.tsq.is_some_and(|b| b.0 == 0) {
            return Err(err("host.tsq", "a TSQ limit must be at least one byte (omit it for no limit)"));
        }
        if let Some(v) = &self.switch.voq {
            let sw = &self.switch;
            let others = [
                (sw.forwarding_latency.0 != Dur::ZERO, "forwarding_latency (the VOQ switch's delay is voq.backplane_latency)"),
                (sw.shared_buffer.is_some(), "shared_buffer"),
                (sw.scheduler.is_some(), "scheduler"),
                (sw.hscc.is_some(), "hscc"),
                (sw.phantom_queue.is_some(), "phantom_queue"),
            ];
            if let Some((_, what)) = others.iter().find(|(set, _)| *set) {
                return Err(err("switch.voq", format!("a VOQ switch cannot be combined with switch.{what}")));
            }
            // A queue per (ingress, egress) pair: 4,096 ports are 16.8 M queues (0.5 GB).
            let ports = self.topology.max_switch_ports();
            if ports > MAX_VOQ_PORTS {
                return Err(err(
                    "switch.voq",
                    format!("a VOQ switch keeps a queue for every (ingress, egress) pair of its ports, and a switch here has {ports} ({} queues); allowed: at most {MAX_VOQ_PORTS} ports", ports * ports),
                ));
            }
            if v.cell_bytes.0 == 0 || v.cell_bytes.0 > 16384 {
                return Err(err("switch.voq.cell_bytes", format!("{}B is out of range: allowed 1B to 16384B", v.cell_bytes.0)));
            }
            // A full-sized frame must fit both buffers, or it could never pass.
            let frame_cells = (self.link.mtu as u64 + 18).div_ceil(v.cell_bytes.0);
            for (key, cells) in [("ingress_cells", v.ingress_cells), ("egress_cells", v.egress_cells)] {
                if (cells as u64) < frame_cells {
                    return Err(err(
                        format!("switch.voq.{key}"),
                        format!("{cells} cells of {}B cannot hold one full-sized frame ({frame_cells} cells with MTU {}); allowed: at least {frame_cells}", v.cell_bytes.0, self.link.mtu),
                    ));
                }
            }
        }
        if let Some(pfc) = &self.switch.pfc {
            self.validate_pfc(pfc)?;
        }
        if let Some(r) = &self.rdma {
            self.validate_rdma(r)?;
        }
        if let Some(n) = &self.ndp {
            self.validate_ndp(n)?;
        }
        if let Some(h) = &self.homa {
            self.validate_homa(h)?;
        }
        match &self.switch.aqm {
            Aqm::Droptail => {}
            Aqm::Dctcp(DctcpStep { k, at, .. }) => {
                if k.is_zero() {
                    return Err(err("switch.aqm.k", "K must be greater than zero"));
                }
                if *at == MarkAt::Dequeue && !matches!(k, QSize::Bytes(_)) {
                    return Err(err("switch.aqm.at", format!("\"dequeue\" judges the bytes behind a departing packet: it needs K in bytes, not {k}")));
                }
            }
            Aqm::Red(RedCfg { min_th, max_th, max_p, weight, .. }) => {
                let same_unit = matches!((min_th, max_th), (QSize::Packets(_), QSize::Packets(_)) | (QSize::Bytes(_), QSize::Bytes(_)));
                if !same_unit {
                    return Err(err("switch.aqm.max_th", format!("min_th ({min_th}) and max_th ({max_th}) must use the same unit")));
                }
                let (a, b) = match (min_th, max_th) {
                    (QSize::Packets(a), QSize::Packets(b)) | (QSize::Bytes(a), QSize::Bytes(b)) => (*a, *b),
                    _ => unreachable!(),
                };
                if a >= b {
                    return Err(err("switch.aqm.max_th", format!("max_th ({max_th}) must be greater than min_th ({min_th})")));
                }
                if !(*max_p > 0.0 && *max_p <= 1.0) {
                    return Err(err("switch.aqm.max_p", format!("max_p {max_p} is out of range: allowed (0, 1]")));
                }
                if !(*weight > 0.0 && *weight <= 1.0) {
                    return Err(err("switch.aqm.weight", format!("weight {weight} is out of range: allowed (0, 1]")));
                }
                if let Aqm::Red(RedCfg { at: MarkAt::Dequeue, .. }) = &self.switch.aqm {
                    if !matches!(min_th, QSize::Bytes(_)) || *weight != 1.0 {
                        return Err(err("switch.aqm.at", "\"dequeue\" judges the bytes behind a departing packet: it needs byte thresholds (min_th, max_th) and weight = 1.0"));
                    }
                }
            }
            Aqm::Tcn(_) => {}
            Aqm::EcnSharp(e) => {
                if e.interval.0 == Dur::ZERO {
                    return Err(err("switch.aqm.interval", "the interval must be greater than zero"));
                }
            }
            Aqm::Codel(c) => {
                if c.interval.0 == Dur::ZERO {
                    return Err(err("switch.aqm.interval", "the interval must be greater than zero"));
                }
            }
        }
        if let Some(pq) = &self.switch.phantom_queue {
            match pq.drain {
                PhantomDrain::Fraction(g) if !(g > 0.0 && g <= 1.0) => {
                    return Err(err("switch.phantom_queue.drain", format!("{g} is out of range: a fraction of the line rate in (0, 1], or a rate like \"900Mbps\"")));
                }
                PhantomDrain::Rate(r) if r.0.bps == 0 => {
                    return Err(err("switch.phantom_queue.drain", "the drain rate must be greater than zero"));
                }
                _ => {}
            }
        }
        if let Some(h) = &self.switch.hscc {
            if !(0.0 <= h.low && h.low < h.high && h.high <= 1.0) {
                return Err(err("switch.hscc", format!("low = {} and high = {}: need 0 <= low < high <= 1 (fractions of the buffer)", h.low, h.high)));
            }
            if !(0.0..0.5).contains(&h.control_reserve) {
                return Err(err("switch.hscc.control_reserve", format!("{} is out of range: allowed [0, 0.5)", h.control_reserve)));
            }
            if let Some(names) = &h.switches {
                let known = self.topology.switch_names();
                if let Some((i, bad)) = names.iter().enumerate().find(|(_, n)| !known.contains(n)) {
                    let shown = known.iter().take(8).map(String::as_str).collect::<Vec<_>>().join(", ");
                    let more = if known.len() > 8 { format!(", ... ({} switches)", known.len()) } else { String::new() };
                    return Err(err(format!("switch.hscc.switches[{i}]"), format!("{bad:?} is not a switch of this topology: allowed {shown}{more}")));
                }
            }
        }
        for (i, w) in self.workload.iter().enumerate() {
            let dscp = match w {
                Workload::Bulk(b) => b.dscp,
                Workload::Poisson(p) => p.dscp,
                Workload::Flows(f) => f.flows.iter().map(|x| x.dscp).max().unwrap_or(0),
                _ => 0,
            };
            if dscp > 63 {
                return Err(err(format!("workload[{i}].dscp"), format!("{dscp} is out of range: allowed 0..=63 (6 bits)")));
            }
            if let Workload::Requests(r) = w {
                match (r.count, r.arrival) {
                    (Some(0), _) => return Err(err(format!("workload[{i}].count"), "0 requests: allowed at least 1")),
                    (Some(_), RequestArrival::Poisson) => {
                        return Err(err(format!("workload[{i}].count"), "a count applies to closed-loop requests only (Poisson requests stop at `stop`)"));
                    }
                    _ => {}
                }
            }
        }
        match &self.switch.scheduler {
            Some(Scheduler::StrictPriority(sp)) => {
                if !(1..=64).contains(&sp.classes) {
                    return Err(err("switch.scheduler.classes", format!("{} is out of range: allowed 1..=64 (the DSCP values)", sp.classes)));
                }
                if let Some(q) = sp.class_buffer {
                    check_capacity("switch.scheduler.class_buffer", q)?;
                }
                if sp.full == FullBuffer::Trim && (sp.classes < 2 || sp.class_buffer.is_none()) {
                    return Err(err(
                        "switch.scheduler.full",
                        "\"trim\" keeps headers in class 0 and caps data, the last class, at class_buffer: allowed with classes >= 2 and a class_buffer",
                    ));
                }
            }
            Some(Scheduler::Dwrr(d)) => {
                if !(1..=64).contains(&d.quanta.len()) {
                    return Err(err("switch.scheduler.quanta", format!("{} classes: allowed 1..=64 (the DSCP values)", d.quanta.len())));
                }
                if let Some(k) = d.quanta.iter().position(|q| q.0 == 0) {
                    return Err(err(format!("switch.scheduler.quanta[{k}]"), "a quantum of 0 bytes would never send: allowed at least 1 byte"));
                }
                if let Some(p) = d.priorities.as_ref().filter(|p| p.len() != d.quanta.len()) {
                    return Err(err("switch.scheduler.priorities", format!("{} priorities for {} classes: give one per quantum", p.len(), d.quanta.len())));
                }
                if let Some(q) = d.class_buffer {
                    check_capacity("switch.scheduler.class_buffer", q)?;
                }
            }
            None => {}
        }
        if let Some(pias) = &self.host.pias {
            let t = &pias.thresholds;
            if t.is_empty() || t.len() > 63 {
                return Err(err("host.pias.thresholds", format!("{} thresholds: allowed 1..=63 (classes = thresholds + 1, at most 64 DSCP values)", t.len())));
            }
            if let Some(k) = (1..t.len()).find(|&k| t[k].0 <= t[k - 1].0) {
                return Err(err(format!("host.pias.thresholds[{k}]"), format!("{} must be greater than the threshold before it ({})", t[k].0, t[k - 1].0)));
            }
            if t[0].0 == 0 {
                return Err(err("host.pias.thresholds[0]", "0 would put no packet in class 0: allowed at least 1 byte"));
            }
        }
        if let Some(Pacer::Hull(h)) = &self.host.pacer {
            let path = |k: &str| format!("host.pacer.{k}");
            for (key, d) in [("refill_interval", h.refill_interval), ("rate_interval", h.rate_interval), ("release_after", h.release_after)] {
                if d.0 < Dur::from_ns(1) {
                    return Err(err(path(key), format!("{} is too short: allowed at least 1ns", crate::units::dur_string(d.0))));
                }
            }
            if h.bucket.0 == 0 {
                return Err(err(path("bucket"), "the bucket must hold at least one byte"));
            }
            if h.initial_rate.0.bps == 0 {
                return Err(err(path("initial_rate"), "the initial rate must be greater than zero"));
            }
            if !(h.eta > 0.0 && h.eta <= 1.0) {
                return Err(err(path("eta"), format!("{} is out of range: allowed (0, 1]", h.eta)));
            }
            if !(h.beta >= 0.0 && h.beta <= 1e9) {
                return Err(err(path("beta"), format!("{} is out of range: allowed [0, 1e9] per second", h.beta)));
            }
            if !(0.0..=1.0).contains(&h.p_assoc) {
                return Err(err(path("p_assoc"), format!("{} is out of range: allowed [0, 1]", h.p_assoc)));
            }
            check_capacity("host.pacer.queue", h.queue)?;
        }
        let tcp = &self.tcp;
        if tcp.initial_cwnd == 0 || tcp.initial_cwnd > 1000 {
            return Err(err("tcp.initial_cwnd", format!("{} is out of range: allowed 1..=1000 segments", tcp.initial_cwnd)));
        }
        if let Some(n) = tcp.initial_ssthresh {
            if !(2..=1_000_000).contains(&n) {
                return Err(err("tcp.initial_ssthresh", format!("{n} is out of range: allowed 2..=1000000 segments")));
            }
        }
        if tcp.min_rto.0 > tcp.max_rto.0 {
            return Err(err("tcp.min_rto", format!("min_rto ({}) must not exceed max_rto ({})", crate::units::dur_string(tcp.min_rto.0), crate::units::dur_string(tcp.max_rto.0))));
        }
        if tcp.initial_rto.0 == Dur::ZERO {
            return Err(err("tcp.initial_rto", "the initial RTO must be greater than zero"));
        }
        if tcp.max_rto.0 == Dur::ZERO {
            return Err(err("tcp.max_rto", "the maximum RTO must be greater than zero"));
        }
        if tcp.rtt_granularity.0 == Dur::ZERO {
            return Err(err("tcp.rtt_granularity", "the RTT clock granularity must be at least 1ps (use \"1ns\" for a fine clock)"));
        }
        if tcp.dupthresh == 0 || tcp.dupthresh > 1000 {
            return Err(err("tcp.dupthresh", format!("{} is out of range: allowed 1..=1000", tcp.dupthresh)));
        }
        if tcp.loss_detection == LossDetection::RackTlp && !tcp.sack {
            return Err(err("tcp.loss_detection", "\"rack_tlp\" with tcp.sack = false: RACK-TLP works from SACKs (RFC 8985 §4); enable tcp.sack or use \"dupthresh\""));
        }
        if tcp.delayed_ack.count == 0 || tcp.delayed_ack.count > 64 {
            return Err(err("tcp.delayed_ack.count", format!("{} is out of range: allowed 1..=64", tcp.delayed_ack.count)));
        }
        if tcp.delayed_ack.enabled && tcp.delayed_ack.timeout.0 == Dur::ZERO {
            return Err(err("tcp.delayed_ack.timeout", "must be greater than zero when delayed ACKs are enabled"));
        }
        if !(tcp.dctcp_g > 0.0 && tcp.dctcp_g <= 1.0) {
            return Err(err("tcp.dctcp_g", format!("{} is out of range: allowed (0, 1]", tcp.dctcp_g)));
        }
        if tcp.dctcp_min_cwnd > 1000 {
            return Err(err("tcp.dctcp_min_cwnd", format!("{} is out of range: allowed 0..=1000 segments (0: no floor)", tcp.dctcp_min_cwnd)));
        }
        if !(0.0..=1.0).contains(&tcp.dctcp_alpha_init) {
            return Err(err("tcp.dctcp_alpha_init", format!("{} is out of range: allowed [0, 1]", tcp.dctcp_alpha_init)));
        }
        if let Some(mss) = tcp.mss {
            if mss.0 < 64 || mss.0 > mtu as u64 - 40 {
                return Err(err("tcp.mss", format!("{mss} is out of range: allowed 64B to {}B (MTU - 40)", mtu - 40)));
            }
        }
        let max_rcv = if tcp.window_scale { 65535u64 << 14 } else { 65535 };
        if tcp.rcv_buffer.0 < mtu as u64 || tcp.rcv_buffer.0 > max_rcv {
            return Err(err(
                "tcp.rcv_buffer",
                format!("{} is out of range: allowed {}B (one MTU) to {}B{}", tcp.rcv_buffer, mtu, max_rcv, if tcp.window_scale { "" } else { " without window scaling" }),
            ));
        }
        if let Some(stop) = self.output.queue_sample_stop {
            if stop.0 <= self.output.queue_sample_start.0 {
                return Err(err("output.queue_sample_stop", format!("{} must be after queue_sample_start ({})", stop.0, self.output.queue_sample_start.0)));
            }
        }
        if self.output.queue_sample_interval.0 != Dur::ZERO && self.output.queue_sample_interval.0 < Dur::from_ns(1) {
            return Err(err("output.queue_sample_interval", "must be 0s (off) or at least 1ns"));
        }

        let host_ok = |path: String, h: u32| -> Result<(), ConfigError> {
            if h >= hosts {
                Err(err(path, format!("host index {h} is out of range: this topology has hosts 0..{} (0 to {})", hosts, hosts - 1)))
            } else {
                Ok(())
            }
        };
        let mut has_infinite = false;
        let mut has_any = false;
        for (i, w) in self.workload.iter().enumerate() {
            let p = format!("workload[{i}]");
            match w {
                Workload::Bulk(Bulk { src, dst, size, pairing, .. }) => {
                    if src.0.is_empty() {
                        return Err(err(format!("{p}.src"), "the host set is empty"));
                    }
                    if dst.0.is_empty() {
                        return Err(err(format!("{p}.dst"), "the host set is empty"));
                    }
                    for &h in &src.0 {
                        host_ok(format!("{p}.src"), h)?;
                    }
                    for &h in &dst.0 {
                        host_ok(format!("{p}.dst"), h)?;
                    }
                    if *pairing == Pairing::Zip && src.0.len() != dst.0.len() {
                        return Err(err(format!("{p}.dst"), format!("pairing \"zip\" needs as many destinations as sources ({} vs {})", dst.0.len(), src.0.len())));
                    }
                    // Counted, not built: src x dst can be 10^10 pairs.
                    let pairs = bulk_pair_count(src, dst, *pairing);
                    if pairs == 0 {
                        return Err(err(format!("{p}.dst"), "no flows: every source equals its destination"));
                    }
                    if pairs > u32::MAX as u64 {
                        return Err(err(format!("{p}.dst"), format!("{pairs} flows ({} sources x {} destinations): at most {} flows", src.0.len(), dst.0.len(), u32::MAX)));
                    }
                    if *pairing == Pairing::Zip {
                        if let Some((s, _)) = src.0.iter().zip(&dst.0).find(|(s, d)| s == d) {
                            return Err(err(format!("{p}.dst"), format!("host {s} would send to itself")));
                        }
                    }
                    has_infinite |= *size == FlowSize::Infinite;
                    if *size == FlowSize::Bytes(0) {
                        return Err(err(format!("{p}.size"), "a flow must carry at least 1B"));
                    }
                    has_any = true;
                }
                Workload::Flows(Flows { flows }) => {
                    for (j, f) in flows.iter().enumerate() {
                        host_ok(format!("{p}.flows[{j}].src"), f.src)?;
                        host_ok(format!("{p}.flows[{j}].dst"), f.dst)?;
                        if f.src == f.dst {
                            return Err(err(format!("{p}.flows[{j}].dst"), format!("host {} would send to itself", f.src)));
                        }
                        if f.size == FlowSize::Bytes(0) {
                            return Err(err(format!("{p}.flows[{j}].size"), "a flow must carry at least 1B"));
                        }
                        has_infinite |= f.size == FlowSize::Infinite;
                        has_any = true;
                    }
                }
                Workload::Poisson(w) => {
                    if !(w.load > 0.0 && w.load <= 10.0) {
                        return Err(err(format!("{p}.load"), format!("{} is out of range: allowed (0, 10] (a fraction of the reference capacity)", w.load)));
                    }
                    match &w.size {
                        SizeSpec::Fixed(b) if b.0 == 0 => return Err(err(format!("{p}.size"), "a flow must carry at least 1B")),
                        SizeSpec::Cdf(c) => check_cdf(&format!("{p}.size"), c)?,
                        SizeSpec::Mix(m) => check_mix(&format!("{p}.size"), m)?,
                        _ => {}
                    }
                    let members = w.hosts.as_ref().map(|h| h.0.clone()).unwrap_or_else(|| (0..hosts).collect());
                    for &h in &members {
                        host_ok(format!("{p}.hosts"), h)?;
                    }
                    if members.len() < 2 {
                        return Err(err(format!("{p}.hosts"), "at least two hosts must take part"));
                    }
                    match (w.pattern, w.target) {
                        (Pattern::AllToOne | Pattern::OneToAll, None) => {
                            return Err(err(format!("{p}.target"), "all_to_one and one_to_all need a `target` host"))
                        }
                        (Pattern::AllToOne | Pattern::OneToAll, Some(t)) => {
                            host_ok(format!("{p}.target"), t)?;
                            if !members.contains(&t) {
                                return Err(err(format!("{p}.target"), format!("host {t} is not among the workload's hosts")));
                            }
                        }
                        (_, Some(_)) => return Err(err(format!("{p}.target"), "`target` is only for all_to_one and one_to_all")),
                        _ => {}
                    }
                    if w.other_racks_only {
                        if w.pattern != Pattern::AllToAll {
                            return Err(err(format!("{p}.other_racks_only"), "only for the all_to_all pattern"));
                        }
                        let racks: std::collections::BTreeSet<u32> = members.iter().map(|&h| self.topology.rack_of(h)).collect();
                        if racks.len() < 2 {
                            return Err(err(format!("{p}.other_racks_only"), "all the workload's hosts are in one rack"));
                        }
                    }
                    if w.load_reference == LoadReference::UplinkShare && !matches!(self.topology, Topology::Leafspine(_) | Topology::Fattree(_)) {
                        return Err(err(format!("{p}.load_reference"), "\"uplink_share\" needs a leaf-spine or fat-tree topology; use \"host\""));
                    }
                    if w.stop.is_none() && self.run.duration.is_none() {
                        return Err(err(format!("{p}.stop"), "a Poisson workload needs `stop` (when arrivals end) or a run.duration"));
                    }
                    has_any = true;
                }
                Workload::Requests(w) => {
                    client_and_servers(&p, w.client, &w.servers, &host_ok)?;
                    if w.request_size.0 == 0 {
                        return Err(err(format!("{p}.request_size"), "a request must carry at least 1B"));
                    }
                    match &w.response {
                        SizeSpec::Fixed(b) if b.0 == 0 => return Err(err(format!("{p}.response"), "a response must carry at least 1B")),
                        SizeSpec::Mix(m) => check_mix(&format!("{p}.response"), m)?,
                        SizeSpec::Cdf(c) => check_cdf(&format!("{p}.response"), c)?,
                        _ => {}
                    }
                    match (w.arrival, w.load) {
                        (RequestArrival::Poisson, Some(l)) if l > 0.0 && l <= 10.0 => {
                            if w.stop.is_none() && self.run.duration.is_none() {
                                return Err(err(format!("{p}.stop"), "Poisson requests need `stop` or a run.duration"));
                            }
                        }
                        (RequestArrival::Poisson, l) => {
                            let got = l.map_or("no load".to_string(), |l| format!("load {l}"));
                            return Err(err(format!("{p}.load"), format!("{got}: Poisson requests need a load in (0, 10] (a fraction of the client's link)")))
                        }
                        (RequestArrival::ClosedLoop, Some(_)) => return Err(err(format!("{p}.load"), "closed-loop requests have no load")),
                        (RequestArrival::ClosedLoop, None) => {
                            has_infinite = true;
                        }
                    }
                    has_any = true;
                }
                Workload::Search(w) => {
                    client_and_servers(&p, w.client, &w.servers, &host_ok)?;
                    if w.query_size.0 == 0 || w.response_size.0 == 0 {
                        return Err(err(format!("{p}.query_size"), "queries and responses must carry at least 1B"));
                    }
                    match &w.service_time {
                        ServiceTime::Gamma(g) if !(g.shape > 0.0 && g.shape < 1e6 && g.scale > 0.0 && g.scale < 1e12) => {
                            return Err(err(format!("{p}.service_time"), "gamma shape and scale must be positive"))
                        }
                        _ => {}
                    }
                    let mean = w.service_time.mean_seconds();
                    match (w.query_rate, w.server_load) {
                        (Some(r), None) if r > 0.0 && r < 1e9 => {}
                        (None, Some(l)) if l > 0.0 && l < 1.0 && mean > 0.0 => {
                            let rate = l / mean;
                            if rate >= 1e9 {
                                let service = crate::units::dur_string(Dur((mean * 1e12).round() as u64));
                                return Err(err(
                                    format!("{p}.server_load"),
                                    format!("{l} of a {service} mean service time is {rate:.3e} queries per second: allowed up to 1e9 (a longer service time or a lower load)"),
                                ));
                            }
                        }
                        (None, Some(l)) => {
                            return Err(err(format!("{p}.server_load"), format!("{l} is out of range: allowed (0, 1), with a service time above zero")))
                        }
                        (Some(r), None) => return Err(err(format!("{p}.query_rate"), format!("{r} is out of range: allowed (0, 1e9) queries per second"))),
                        _ => return Err(err(&p, "give exactly one of `query_rate` and `server_load`")),
                    }
                    if w.stop.is_none() && self.run.duration.is_none() {
                        return Err(err(format!("{p}.stop"), "a search workload needs `stop` (when queries end) or a run.duration"));
                    }
                    has_any = true;
                }
                Workload::Incast(Incast { querier, responders, query_size, response_size, rounds, connections_per_responder, .. }) => {
                    host_ok(format!("{p}.querier"), *querier)?;
                    if responders.0.is_empty() {
                        return Err(err(format!("{p}.responders"), "at least one responder is needed"));
                    }
                    for &h in &responders.0 {
                        host_ok(format!("{p}.responders"), h)?;
                        if h == *querier {
                            return Err(err(format!("{p}.responders"), format!("host {h} is the querier; it cannot also respond")));
                        }
                    }
                    let mut sorted = responders.0.clone();
                    sorted.sort_unstable();
                    if sorted.windows(2).any(|w| w[0] == w[1]) {
                        return Err(err(format!("{p}.responders"), "a responder is listed twice"));
                    }
                    if query_size.0 == 0 {
                        return Err(err(format!("{p}.query_size"), "a query must carry at least 1B"));
                    }
                    if *connections_per_responder == 0 || *connections_per_responder > 64 {
                        return Err(err(format!("{p}.connections_per_responder"), format!("{connections_per_responder} is out of range: allowed 1..=64")));
                    }
                    if response_size.0 < *connections_per_responder as u64 {
                        return Err(err(format!("{p}.response_size"), format!("a response of {} cannot be split over {connections_per_responder} connections", response_size)));
                    }
                    if *rounds == 0 {
                        return Err(err(format!("{p}.rounds"), "at least one round is needed"));
                    }
                    has_any = true;
                }
            }
        }
        let static_flows: usize = self
            .workload
            .iter()
            .map(|w| match w {
                Workload::Bulk(b) => bulk_pair_count(&b.src, &b.dst, b.pairing) as usize,
                Workload::Flows(f) => f.flows.len(),
                Workload::Incast(_) | Workload::Poisson(_) | Workload::Search(_) | Workload::Requests(_) => 0,
            })
            .sum();
        for (i, f) in self.failure.iter().enumerate() {
            if f.port as u64 >= self.topology.num_ports() {
                return Err(err(format!("failure[{i}].port"), format!("port {} is out of range: this topology has ports 0..{}", f.port, self.topology.num_ports())));
            }
            if f.until.is_some_and(|u| u.0 <= f.at.0) {
                return Err(err(format!("failure[{i}].until"), "the link must recover after it fails (until > at)"));
            }
        }
        if let SamplePorts::Ports(ports) = &self.output.queue_sample_ports {
            if let Some(&port) = ports.iter().find(|&&p| p as u64 >= self.topology.num_ports()) {
                return Err(err("output.queue_sample_ports", format!("port {port} is out of range: this topology has ports 0..{}", self.topology.num_ports())));
            }
        }
        let mut names = std::collections::BTreeSet::new();
        for (i, c) in self.output.pcap.iter().enumerate() {
            let p = format!("output.pcap[{i}]");
            match (c.host, c.port) {
                (Some(h), None) => host_ok(format!("{p}.host"), h)?,
                (None, Some(port)) => {
                    if port as u64 >= self.topology.num_ports() {
                        return Err(err(format!("{p}.port"), format!("port {port} is out of range: this topology has ports 0..{}", self.topology.num_ports())));
                    }
                }
                _ => return Err(err(&p, "give exactly one of `host` (a host's NIC) or `port` (a port id from the ports table)")),
            }
            if let Some(f) = c.flow {
                if f as usize >= static_flows {
                    return Err(err(format!("{p}.flow"), format!("flow {f} does not exist: the bulk and flows workloads create flows 0..{static_flows} (incast responses cannot be filtered; capture at a host or port instead)")));
                }
            }
            if !(64..=65535).contains(&c.snaplen) {
                return Err(err(format!("{p}.snaplen"), format!("{} is out of range: allowed 64..=65535 bytes", c.snaplen)));
            }
            let name = c.file_name();
            if name.is_empty() || !name.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_') {
                return Err(err(format!("{p}.name"), format!("{name:?} is not a usable file name: use letters, digits, '-' and '_'")));
            }
            if !names.insert(name.clone()) {
                return Err(err(format!("{p}.name"), format!("two captures would both write {name}.pcap")));
            }
        }
        if !has_any && self.run.duration.is_none() {
            return Err(err("workload", "the scenario has no workload and no run.duration: nothing would happen"));
        }
        if has_infinite && self.run.duration.is_none() {
            return Err(err("run.duration", "long-lived flows (size = \"inf\") and closed-loop requests need a run.duration such as \"100ms\""));
        }
        if let Some(d) = self.run.duration {
            if d.0 == Dur::ZERO {
                return Err(err("run.duration", "the duration must be greater than zero"));
            }
        }
        Ok(())
    }
}

/// A client host and a non-empty set of other hosts as its servers.
fn client_and_servers(p: &str, client: u32, servers: &HostSet, host_ok: &dyn Fn(String, u32) -> Result<(), ConfigError>) -> Result<(), ConfigError> {
    host_ok(format!("{p}.client"), client)?;
    if servers.0.is_empty() {
        return Err(err(format!("{p}.servers"), "at least one server is needed"));
    }
    for &h in &servers.0 {
        host_ok(format!("{p}.servers"), h)?;
        if h == client {
            return Err(err(format!("{p}.servers"), format!("host {h} is the client; it cannot also serve")));
        }
    }
    Ok(())
}

fn check_mix(path: &str, m: &MixSpec) -> Result<(), ConfigError> {
    if m.mix.is_empty() || m.mix.iter().any(|(b, w)| b.0 == 0 || !(*w > 0.0 && w.is_finite())) {
        return Err(err(format!("{path}.mix"), "give [size, weight] pairs with sizes of at least 1B and positive weights"));
    }
    Ok(())
}

fn check_cdf(path: &str, c: &CdfSpec) -> Result<(), ConfigError> {
    if c.points.len() < 2 {
        return Err(err(path, "the CDF has no points: name a packaged one with `cdf = \"websearch\"` or a file with `cdf_file` (the Python front end loads it)"));
    }
    let mut prev = [0.0f64, 0.0f64];
    for (i, &[x, p]) in c.points.iter().enumerate() {
        if !((0.0..=1e15).contains(&x) && (0.0..=1.0).contains(&p)) {
            return Err(err(format!("{path}.points[{i}]"), format!("[{x}, {p}]: sizes must be 0..=1e15 bytes and probabilities in [0, 1]")));
        }
        if x < prev[0] || p < prev[1] {
            return Err(err(format!("{path}.points[{i}]"), format!("[{x}, {p}] goes back after [{}, {}]: sizes and probabilities must not decrease", prev[0], prev[1])));
        }
        prev = [x, p];
    }
    if (prev[1] - 1.0).abs() > 1e-9 {
        return Err(err(path, format!("the CDF ends at probability {}, not 1", prev[1])));
    }
    Ok(())
}

/// How many pairs `bulk_pairs` generates, without building them.
pub fn bulk_pair_count(src: &HostSet, dst: &HostSet, pairing: Pairing) -> u64 {
    match pairing {
        Pairing::All => {
            let mut sorted = dst.0.clone();
            sorted.sort_unstable();
            let same = |s: u32| (sorted.partition_point(|&d| d <= s) - sorted.partition_point(|&d| d < s)) as u64;
            src.0.iter().map(|&s| dst.0.len() as u64 - same(s)).sum()
        }
        Pairing::Zip => src.0.len().min(dst.0.len()) as u64,
    }
}

/// The (src, dst) pairs a bulk workload generates, in generation order.
pub fn bulk_pairs(src: &HostSet, dst: &HostSet, pairing: Pairing) -> Vec<(u32, u32)> {
    match pairing {
        Pairing::All => src.0.iter().flat_map(|&s| dst.0.iter().filter(move |&&d| d != s).map(move |&d| (s, d))).collect(),
        Pairing::Zip => src.0.iter().copied().zip(dst.0.iter().copied()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_switch_is_counted_as_the_network_builds_it() {
        let topologies = [
            "type = \"star\"\nhosts = 5\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"",
            "type = \"dumbbell\"\nsenders = 3\nreceivers = 6\naccess_rate = \"10Gbps\"\naccess_delay = \"1us\"\nbottleneck_rate = \"10Gbps\"\nbottleneck_delay = \"1us\"",
            "type = \"leafspine\"\nleaves = 9\nspines = 2\nhosts_per_leaf = 3\nhost_rate = \"10Gbps\"\nlinks_per_pair = 2\nhost_delay = \"1us\"\nuplink_delay = \"1us\"",
            "type = \"leafspine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 7\nhost_rate = \"10Gbps\"\nhost_delay = \"1us\"\nuplink_delay = \"1us\"",
            "type = \"fattree\"\nk = 4\nlink_rate = \"10Gbps\"\nhost_delay = \"1us\"\nedge_agg_delay = \"1us\"\nagg_core_delay = \"1us\"",
            "type = \"fattree\"\nk = 4\npods = 3\nhosts_per_edge = 3\nlink_rate = \"10Gbps\"\nhost_delay = \"1us\"\nedge_agg_delay = \"1us\"\nagg_core_delay = \"1us\"",
            "type = \"ring\"\nswitches = 4\nhosts_per_switch = 2\nlink_rate = \"10Gbps\"\nhost_delay = \"1us\"\nlink_delay = \"1us\"",
        ];
        for t in topologies {
            let s = parse(&format!("[topology]\n{t}\n[[workload]]\ntype = \"bulk\"\nsrc = 1\ndst = 0\nsize = \"1KB\"\n")).unwrap();
            let net = crate::topology::Network::build(&s);
            let built = (net.num_hosts as usize..net.kinds.len()).map(|n| net.node_ports[n].len() as u64).max().unwrap();
            assert_eq!(s.topology.max_switch_ports(), built, "{t}");
        }
    }

    #[test]
    fn bulk_pairs_are_counted_as_they_would_be_built() {
        let set = |v: &[u32]| HostSet(v.to_vec());
        for (src, dst) in [(set(&[0, 1, 2]), set(&[0, 1, 2])), (set(&[1, 1, 2]), set(&[2, 2, 3])), (set(&[5]), set(&[5]))] {
            for pairing in [Pairing::All, Pairing::Zip] {
                assert_eq!(bulk_pair_count(&src, &dst, pairing), bulk_pairs(&src, &dst, pairing).len() as u64);
            }
        }
        let big = HostSet((0..100_000).collect());
        assert_eq!(bulk_pair_count(&big, &big, Pairing::All), 100_000 * 99_999);
    }

    fn parse(t: &str) -> Result<Scenario, ConfigError> {
        Scenario::from_toml_str(t)
    }

    const STAR: &str = r#"
[topology]
type = "star"
hosts = 4
link_rate = "10Gbps"
link_delay = "2us"
[[workload]]
type = "bulk"
src = [0, 1]
dst = 3
size = "64KB"
"#;

    #[test]
    fn every_aqm_and_scheduler_survives_the_resolved_json_round_trip() {
        // The resolved JSON is parsed again (the Python front end, sweeps):
        // each tagged variant must serialise under the name it parses from.
        let switches = [
            r#"aqm = { type = "droptail" }"#,
            r#"aqm = { type = "dctcp", k = "65pkt" }"#,
            r#"aqm = { type = "red", min_th = "5pkt", max_th = "15pkt" }"#,
            r#"aqm = { type = "red", min_th = "100KB", max_th = "400KB", per = "25Gbps" }"#,
            r#"aqm = { type = "tcn", threshold = "80us" }"#,
            r#"aqm = { type = "ecn_sharp" }"#,
            r#"aqm = { type = "codel", action = "drop" }"#,
            r#"scheduler = { type = "strict_priority" }"#,
            r#"scheduler = { type = "dwrr", quanta = ["3000B", "1500B"] }"#,
        ];
        for sw in switches {
            let s = parse(&format!("{STAR}\n[switch]\n{sw}\n")).unwrap();
            let again = Scenario::from_json_str(&s.resolved_json()).unwrap_or_else(|e| panic!("{sw}: {e}"));
            assert_eq!(again.resolved_json(), s.resolved_json(), "{sw}");
        }
    }

    #[test]
    fn thresholds_given_per_rate_scale_with_each_ports_rate() {
        // The HPCC authors' maps: RED at 100/400 KB per 25 Gb/s, DCTCP's K at 30 KB per 10 Gb/s.
        let s = parse(&format!("{STAR}\n[switch]\naqm = {{ type = \"red\", min_th = \"100KB\", max_th = \"400KB\", per = \"25Gbps\" }}\n")).unwrap();
        match s.switch.aqm.for_rate(dcsim_engine::Rate::from_gbps(400)) {
            Aqm::Red(r) => assert_eq!((r.min_th, r.max_th), (QSize::Bytes(1_600_000), QSize::Bytes(6_400_000))),
            other => panic!("{other:?}"),
        }
        let s = parse(&format!("{STAR}\n[switch]\naqm = {{ type = \"dctcp\", k = \"30KB\", per = \"10Gbps\" }}\n")).unwrap();
        match s.switch.aqm.for_rate(dcsim_engine::Rate::from_gbps(100)) {
            Aqm::Dctcp(d) => assert_eq!(d.k, QSize::Bytes(300_000)),
            other => panic!("{other:?}"),
        }
        // Without `per`, every port marks as given, and the resolved scenario does not name it.
        let s = parse(&format!("{STAR}\n[switch]\naqm = {{ type = \"dctcp\", k = \"30KB\" }}\n")).unwrap();
        assert!(matches!(s.switch.aqm.for_rate(dcsim_engine::Rate::from_gbps(100)), Aqm::Dctcp(DctcpStep { k: QSize::Bytes(30_000), .. })));
        assert!(!s.resolved_json().contains("\"per\""));
    }

    #[test]
    fn minimal_star_parses_with_defaults() {
        let s = parse(STAR).unwrap();
        assert_eq!(s.tcp.initial_cwnd, 10);
        assert_eq!(s.switch.buffer, QSize::Packets(100));
        assert_eq!(s.hash().len(), 64);
        // The resolved scenario parses back to the same hash.
        let again = Scenario::from_json_str(&s.resolved_json()).unwrap();
        assert_eq!(again.hash(), s.hash());
    }

    #[test]
    fn errors_name_the_key_path_value_and_what_is_allowed() {
        let e = parse(&STAR.replace("\"10Gbps\"", "\"10\"")).unwrap_err();
        assert_eq!(e.path, "topology.link_rate", "{e}");
        assert!(e.message.contains("\"10\"") && e.message.contains("Gbps"), "{e}");

        let e = parse(&STAR.replace("dst = 3", "dst = 9")).unwrap_err();
        assert_eq!(e.path, "workload[0].dst");
        assert!(e.message.contains('9') && e.message.contains("0..4"), "{e}");

        let e = parse(&format!("{STAR}\n[tcp]\nbogus = 1\n")).unwrap_err();
        assert_eq!(e.path, "tcp.bogus");
        assert!(e.message.contains("bogus"), "{e}");

        let e = parse(&format!("{STAR}\n[switch]\nbuffer = \"1KB\"\n")).unwrap_err();
        assert_eq!(e.path, "switch.buffer");
        assert!(e.message.contains("1518B"), "{e}");

        let e = parse(&STAR.replace("\"64KB\"", "\"inf\"")).unwrap_err();
        assert_eq!(e.path, "run.duration");

        let e = parse(&format!("{STAR}\n[tcp]\nfrto = true\nbad_rexmit_undo = true\n")).unwrap_err();
        assert_eq!(e.path, "tcp.bad_rexmit_undo");
        assert!(e.message.contains("tcp.frto"), "{e}");

        let e = parse(&STAR.replace("\"star\"", "\"torus\"")).unwrap_err();
        assert!(e.message.contains("torus") && e.message.contains("star"), "{e}");

        let e = parse(&format!("{STAR}\n[switch.pfc]\nxoff = \"dynamic\"\n")).unwrap_err();
        assert_eq!(e.path, "switch.pfc.xoff");
        assert!(e.message.contains("shared_buffer"), "{e}");
        let e = parse(&format!("{STAR}\n[switch.pfc]\nxoff = \"lots\"\n")).unwrap_err();
        assert_eq!(e.path, "switch.pfc.xoff");
        assert!(e.message.contains("\"dynamic\""), "{e}");
        let e = parse(&format!("{STAR}\n[switch.pfc]\nxoff = \"40KB\"\nclasses = [1]\n")).unwrap_err();
        assert_eq!(e.path, "switch.pfc.classes[0]");
        assert!(e.message.contains("1 class(es)"), "{e}");
        let e = parse(&format!("{STAR}\n[switch.pfc]\nxoff = \"40KB\"\nquanta = 0\n")).unwrap_err();
        assert_eq!(e.path, "switch.pfc.quanta");
    }
}
