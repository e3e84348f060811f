//! Congestion dynamics: DCTCP holds the queue near K, NewReno fills a
//! drop-tail buffer, and an incast tail loss costs an RTO whose size follows
//! the RTT clock granularity (seed 004 §5.3.3-5.3.7).

use dcsim::{run, Scenario};

fn scenario(toml: &str) -> Scenario {
    Scenario::from_toml_str(toml).unwrap_or_else(|e| panic!("bad test scenario: {e}"))
}

fn dumbbell(cc: &str, aqm: &str, buffer: &str, flows: u32) -> Scenario {
    scenario(&format!(
        r#"
[run]
duration = "60ms"
[topology]
type = "dumbbell"
senders = {flows}
receivers = 1
access_rate = "10Gbps"
access_delay = "2us"
bottleneck_rate = "10Gbps"
bottleneck_delay = "2us"
[switch]
buffer = "{buffer}"
aqm = {aqm}
[tcp]
cc = "{cc}"
min_rto = "1ms"
[output]
queue_sample_interval = "10us"
[[workload]]
type = "bulk"
src = "0..{flows}"
dst = {flows}
size = "inf"
"#
    ))
}

/// The bottleneck is the left switch's port toward the right switch.
fn bottleneck_port(out: &dcsim::RunOutput, flows: u32) -> u32 {
    let ports = out.table("ports");
    let dcsim::results::Col::U32(node) = ports.get("node").unwrap() else { panic!() };
    let dcsim::results::Col::U32(peer) = ports.get("peer").unwrap() else { panic!() };
    let (left, right) = (flows + 1, flows + 2);
    (0..node.len()).find(|&i| node[i] == left && peer[i] == right).unwrap() as u32
}

struct Stats {
    mean_queue_pkts: f64,
    max_queue_pkts: u64,
    drops: u64,
    marks: u64,
    goodput_bps: f64,
    wire_utilisation: f64,
}

fn measure(out: &dcsim::RunOutput, flows: u32, warmup_s: f64) -> Stats {
    let port = bottleneck_port(out, flows);
    let q = out.table("queues");
    let dcsim::results::Col::U32(qport) = q.get("port").unwrap() else { panic!() };
    let (t, pk) = (q.f64("time"), q.u64("packets"));
    let samples: Vec<f64> = (0..q.rows()).filter(|&i| qport[i] == port && t[i] >= warmup_s).map(|i| pk[i] as f64).collect();
    let mean_queue_pkts = samples.iter().sum::<f64>() / samples.len() as f64;
    let ports = out.table("ports");
    let p = port as usize;
    let sim_s = out.summary["sim_seconds"].as_f64().unwrap();
    let delivered: u64 = out.table("flows").u64("delivered").iter().sum();
    Stats {
        mean_queue_pkts,
        max_queue_pkts: ports.u64("max_queue_packets")[p],
        drops: ports.u64("drops")[p],
        marks: ports.u64("ecn_marks")[p],
        goodput_bps: delivered as f64 * 8.0 / sim_s,
        wire_utilisation: ports.u64("tx_bytes")[p] as f64 * 8.0 / sim_s / 10e9,
    }
}

/// Payload goodput ceiling at 10 Gb/s with MTU 1500 and timestamps.
const MAX_GOODPUT: f64 = 10e9 * 1448.0 / 1518.0;

#[test]
fn dctcp_holds_the_queue_around_k_at_full_goodput() {
    let k = 65.0;
    let out = run(&dumbbell("dctcp", r#"{ type = "dctcp", k = "65pkt" }"#, "250pkt", 8), None).unwrap();
    let s = measure(&out, 8, 0.01);
    assert!(s.mean_queue_pkts >= 0.5 * k && s.mean_queue_pkts <= 1.5 * k, "mean queue {:.1} pkts", s.mean_queue_pkts);
    assert_eq!(s.drops, 0, "DCTCP with K = 65 and 250 packets of buffer should not drop");
    assert!(s.marks > 0);
    assert!(s.goodput_bps >= 0.95 * MAX_GOODPUT, "goodput {:.3e}", s.goodput_bps);
    assert!(s.wire_utilisation >= 0.95, "utilisation {:.3}", s.wire_utilisation);
}

#[test]
fn newreno_fills_a_droptail_buffer_and_drops() {
    let out = run(&dumbbell("newreno", r#"{ type = "droptail" }"#, "100pkt", 8), None).unwrap();
    let s = measure(&out, 8, 0.01);
    assert_eq!(s.max_queue_pkts, 100, "the queue fills to the buffer");
    assert!(s.drops > 0);
    assert!(s.mean_queue_pkts > 50.0, "mean queue {:.1}", s.mean_queue_pkts);
    assert!(s.goodput_bps >= 0.95 * MAX_GOODPUT, "goodput {:.3e}", s.goodput_bps);
    let flows = out.table("flows");
    assert!(flows.u64("fast_retransmits").iter().sum::<u64>() > 0);
}

fn incast(buffer_pkts: u32, granularity: &str, formula: &str) -> dcsim::RunOutput {
    incast_with_clock(buffer_pkts, "ticks", granularity, formula)
}

fn incast_with_clock(buffer_pkts: u32, clock: &str, granularity: &str, formula: &str) -> dcsim::RunOutput {
    let s = scenario(&format!(
        r#"
[topology]
type = "star"
hosts = 3
link_rate = "10Gbps"
link_delay = "134ns"
[switch]
forwarding_latency = "4us"
buffer = "{buffer_pkts}pkt"
[tcp]
min_rto = "0s"
rtt_clock = "{clock}"
rtt_granularity = "{granularity}"
rto_formula = "{formula}"
[[workload]]
type = "incast"
querier = 0
responders = [1, 2]
response_size = "100KB"
rounds = 1
"#
    ));
    run(&s, None).unwrap()
}

#[test]
fn incast_tail_loss_costs_an_rto_that_follows_the_rtt_clock() {
    // Shrink the buffer until the first loss that needs an RTO to repair.
    let mut found = None;
    for buffer in (2..=80).rev() {
        let out = incast(buffer, "1ms", "rfc6298");
        if out.table("queries").u64("timeouts")[0] > 0 {
            found = Some((buffer, out));
            break;
        }
    }
    let (buffer, coarse) = found.expect("some buffer size causes an RTO");
    let lossless = incast(1000, "1ms", "rfc6298").table("queries").f64("completion_time")[0];
    let t_coarse = coarse.table("queries").f64("completion_time")[0];
    let t_fine = incast(buffer, "1us", "rfc6298").table("queries").f64("completion_time")[0];
    // RFC 6298 with a 1 ms clock: RTO = SRTT + max(G, 4 RTTVAR) >= 2 ms, as
    // every sample of this ~20 us path measures one tick. With a 1 us clock
    // the RTO follows the path: completion is within a fraction of a ms.
    assert!(t_coarse - lossless > 1.9e-3, "coarse {t_coarse} vs lossless {lossless}");
    assert!(t_fine - lossless < 0.5e-3, "fine {t_fine} vs lossless {lossless}");
    let gap = t_coarse - t_fine;
    assert!((1.5e-3..=3.5e-3).contains(&gap), "gap {gap} s");
    // The BSD formula (no granularity term, as the thesis' FreeBSD stack)
    // gives the ~1 ms floor of the thesis' Fig. 21.
    let t_bsd = incast(buffer, "1ms", "bsd").table("queries").f64("completion_time")[0];
    let gap_bsd = t_bsd - t_fine;
    assert!((0.8e-3..=1.3e-3).contains(&gap_bsd), "BSD gap {gap_bsd} s (buffer {buffer})");
    // Linux: microsecond samples, RTO = SRTT + RTTVAR in whole 1 ms jiffies
    // (one here), on a timer that fires at the next jiffy boundary: the
    // wait is anywhere in (0, 1] ms.
    let t_linux = incast_with_clock(buffer, "linux", "1ms", "linux").table("queries").f64("completion_time")[0];
    let gap_linux = t_linux - t_fine;
    assert!(gap_linux > -0.1e-3 && gap_linux <= 1.05e-3, "Linux gap {gap_linux} s (buffer {buffer})");
}

#[test]
fn tcn_holds_the_sojourn_time_near_its_threshold() {
    // 8 DCTCP flows; TCN at 20 us = 16.5 full frames of 1518 B at 10 Gb/s.
    let out = run(&dumbbell("dctcp", r#"{ type = "tcn", threshold = "20us" }"#, "250pkt", 8), None).unwrap();
    let s = measure(&out, 8, 0.01);
    assert!(s.marks > 0 && s.drops == 0);
    assert!(s.mean_queue_pkts > 5.0 && s.mean_queue_pkts < 30.0, "mean queue {:.1} pkts", s.mean_queue_pkts);
    assert!(s.goodput_bps >= 0.9 * MAX_GOODPUT, "goodput {:.3e}", s.goodput_bps);
}

#[test]
fn ecn_sharp_persistent_marking_keeps_the_queue_below_tcn_with_the_same_instantaneous_threshold() {
    // With a high instantaneous threshold, ECN#'s persistent-queue marking
    // (target 10 us, interval 100 us) is what holds the queue down.
    let tcn_only = measure(&run(&dumbbell("dctcp", r#"{ type = "tcn", threshold = "200us" }"#, "400pkt", 8), None).unwrap(), 8, 0.01);
    let sharp = measure(&run(&dumbbell("dctcp", r#"{ type = "ecn_sharp", instantaneous = "200us", target = "10us", interval = "100us" }"#, "400pkt", 8), None).unwrap(), 8, 0.01);
    assert!(sharp.marks > 0 && sharp.drops == 0);
    assert!(sharp.mean_queue_pkts < 0.7 * tcn_only.mean_queue_pkts, "ECN# {:.1} vs TCN {:.1} pkts", sharp.mean_queue_pkts, tcn_only.mean_queue_pkts);
    assert!(sharp.goodput_bps >= 0.9 * MAX_GOODPUT, "goodput {:.3e}", sharp.goodput_bps);
}

#[test]
fn codel_drop_mode_drops_at_dequeue_before_the_buffer_fills() {
    let out = run(&dumbbell("newreno", r#"{ type = "codel", target = "10us", interval = "150us", action = "drop" }"#, "1000pkt", 8), None).unwrap();
    let s = measure(&out, 8, 0.01);
    // Drops without a full buffer: CoDel's, at dequeue.
    assert!(s.drops > 0 && s.max_queue_pkts < 1000, "drops {} max queue {}", s.drops, s.max_queue_pkts);
    assert_eq!(s.marks, 0);
    assert!(s.mean_queue_pkts < 100.0, "mean queue {:.1}", s.mean_queue_pkts);
    // Every packet is accounted for: created = delivered + dropped + in flight.
    let sum = |k: &str| out.summary[k].as_u64().unwrap();
    assert_eq!(sum("packets_created"), sum("packets_delivered") + sum("packets_dropped") + sum("packets_in_flight"));
    // Mark mode: the same flows with ECN are marked, not dropped.
    let marked = measure(&run(&dumbbell("dctcp", r#"{ type = "codel", target = "10us", interval = "150us" }"#, "1000pkt", 8), None).unwrap(), 8, 0.01);
    assert!(marked.marks > 0 && marked.drops == 0);
}

#[test]
fn dwrr_splits_the_bottleneck_by_quantum_among_classes() {
    // Seed 003 Fig. 20's setting: three long DCTCP flows with DSCP 0, 1, 2
    // through DWRR with quanta 3000 / 1500 / 1500 B and TCN per class.
    let s = scenario(
        r#"
[run]
duration = "100ms"
[topology]
type = "dumbbell"
senders = 3
receivers = 1
access_rate = "10Gbps"
access_delay = "5us"
bottleneck_rate = "10Gbps"
bottleneck_delay = "5us"
[switch]
buffer = "600pkt"
aqm = { type = "tcn", threshold = "50us" }
scheduler = { type = "dwrr", quanta = ["3000B", "1500B", "1500B"] }
[tcp]
cc = "dctcp"
min_rto = "5ms"
[[workload]]
type = "flows"
flows = [
  { src = 0, dst = 3, size = "inf", dscp = 0 },
  { src = 1, dst = 3, size = "inf", dscp = 1 },
  { src = 2, dst = 3, size = "inf", dscp = 2 },
]
"#,
    );
    let out = run(&s, None).unwrap();
    let flows = out.table("flows");
    let delivered = flows.u64("delivered");
    let total: u64 = delivered.iter().sum();
    let share: Vec<f64> = delivered.iter().map(|&d| d as f64 / total as f64).collect();
    for (got, want) in share.iter().zip([0.5, 0.25, 0.25]) {
        assert!((got - want).abs() < 0.05 * want, "shares {share:?}");
    }
    assert!(total as f64 * 8.0 / 0.1 > 0.9 * MAX_GOODPUT, "the link stays full");
}

/// One DCTCP flow whose own 10 Gb/s NIC is the bottleneck: no switch queue,
/// so no marks, and only the receive window stops cwnd.
fn nic_bound_flow(host: &str, tcp: &str) -> dcsim::RunOutput {
    let s = scenario(&format!(
        r#"
[run]
duration = "30ms"
[topology]
type = "star"
hosts = 2
link_rate = "10Gbps"
link_delay = "5us"
[host]
{host}
[switch]
buffer = "600pkt"
aqm = {{ type = "tcn", threshold = "20us" }}
[tcp]
cc = "dctcp"
rcv_buffer = "64MiB"
{tcp}
[output]
tcp_trace = true
[[workload]]
type = "bulk"
src = [1]
dst = 0
size = "inf"
"#
    ));
    run(&s, None).unwrap()
}

#[test]
fn tsq_bounds_a_senders_nic_queue_and_cwnd_validation_stops_a_window_that_does_not_limit() {
    let nic = |out: &dcsim::RunOutput| out.table("ports").u64("max_queue_bytes")[2];
    let max_cwnd = |out: &dcsim::RunOutput| *out.table("tcp_trace").u64("cwnd").iter().max().unwrap();
    let delivered = |out: &dcsim::RunOutput| out.table("flows").u64("delivered")[0];
    let plain = nic_bound_flow("", "");
    let tsq = nic_bound_flow(r#"tsq = "128KB""#, "");
    let both = nic_bound_flow(r#"tsq = "128KB""#, "cwnd_validation = true");
    // Without TSQ, slow start never ends: the NIC queue holds megabytes.
    assert!(nic(&plain) > 4_000_000, "NIC queue {}", nic(&plain));
    // With it, the NIC holds at most the limit plus one frame.
    for out in [&tsq, &both] {
        assert!(nic(out) <= 128_000 + 1538, "NIC queue {}", nic(out));
    }
    // TSQ alone lets cwnd run away; validation stops it near twice the flight.
    assert!(max_cwnd(&tsq) > 10 * max_cwnd(&both), "{} vs {}", max_cwnd(&tsq), max_cwnd(&both));
    assert!(max_cwnd(&both) < 2 * (128_000 + 64_000), "cwnd {}", max_cwnd(&both));
    // Throughput is the NIC's in all three.
    for out in [&plain, &tsq, &both] {
        assert!(delivered(out) as f64 * 8.0 / 0.03 > 0.95 * MAX_GOODPUT, "delivered {}", delivered(out));
    }
}

/// `start_jitter` delays each bulk flow by a uniform draw from the seed: the
/// same seed gives the same starts, another seed others, all within the
/// jitter; without it every sender starts in the same picosecond.
#[test]
fn bulk_start_jitter_spreads_starts_by_seed() {
    let starts = |jitter: &str, seed: u64| {
        let s = scenario(&format!(
            r#"
[run]
seed = {seed}
duration = "200us"
[topology]
type = "dumbbell"
senders = 8
receivers = 1
access_rate = "10Gbps"
access_delay = "2us"
bottleneck_rate = "10Gbps"
bottleneck_delay = "2us"
[[workload]]
type = "bulk"
src = "0..8"
dst = 8
size = "inf"
start_jitter = "{jitter}"
"#
        ));
        run(&s, None).unwrap().table("flows").f64("start").to_vec()
    };
    assert!(starts("0s", 1).iter().all(|&t| t == 0.0));
    let (a, b) = (starts("100us", 1), starts("100us", 2));
    assert_eq!(a, starts("100us", 1));
    assert_ne!(a, b);
    for t in a.iter().chain(&b) {
        assert!((0.0..100e-6).contains(t), "start {t} outside [0, 100 us)");
    }
    assert!(a.iter().any(|&t| t != a[0]), "every flow drew the same start: {a:?}");
}
