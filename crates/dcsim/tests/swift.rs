//! Swift (Kumar et al., SIGCOMM 2020) on whole networks: it holds the
//! bottleneck's queueing delay near its target at full goodput without
//! ECN or drops, shares the link fairly, and with more senders than the
//! path holds packets it paces windows below one packet instead of losing.

use dcsim::{run, RunOutput, Scenario};

fn scenario(toml: &str) -> Scenario {
    Scenario::from_toml_str(toml).unwrap_or_else(|e| panic!("bad test scenario: {e}"))
}

fn run_toml(toml: &str) -> RunOutput {
    run(&scenario(toml), None).unwrap()
}

/// `flows` long-lived Swift flows over a 10 Gb/s dumbbell with 2 µs links.
fn dumbbell(flows: u32, swift: &str, duration: &str) -> RunOutput {
    run_toml(&format!(
        r#"
[run]
duration = "{duration}"
[topology]
type = "dumbbell"
senders = {flows}
receivers = 1
access_rate = "10Gbps"
access_delay = "2us"
bottleneck_rate = "10Gbps"
bottleneck_delay = "2us"
[switch]
buffer = "1000pkt"
[tcp]
cc = "swift"
min_rto = "1ms"
[tcp.swift]
{swift}
[output]
queue_sample_interval = "5us"
[[workload]]
type = "bulk"
src = "0..{flows}"
dst = {flows}
size = "inf"
"#
    ))
}

/// The left switch's port toward the right switch.
fn bottleneck(out: &RunOutput, flows: u32) -> usize {
    let ports = out.table("ports");
    let dcsim::results::Col::U32(node) = ports.get("node").unwrap() else {
        panic!()
    };
    let dcsim::results::Col::U32(peer) = ports.get("peer").unwrap() else {
        panic!()
    };
    (0..node.len())
        .find(|&i| node[i] == flows + 1 && peer[i] == flows + 2)
        .unwrap()
}

/// Mean queue at `port` after `warmup_s`, in microseconds at 10 Gb/s.
fn mean_queue_us(out: &RunOutput, port: usize, warmup_s: f64) -> f64 {
    let q = out.table("queues");
    let dcsim::results::Col::U32(p) = q.get("port").unwrap() else {
        panic!()
    };
    let (t, b) = (q.f64("time"), q.u64("bytes"));
    let s: Vec<f64> = (0..q.rows())
        .filter(|&i| p[i] == port as u32 && t[i] >= warmup_s)
        .map(|i| b[i] as f64 * 8.0 / 10e9 * 1e6)
        .collect();
    s.iter().sum::<f64>() / s.len() as f64
}

/// Jain's fairness index of the flows' delivered bytes.
fn jain(x: &[f64]) -> f64 {
    x.iter().sum::<f64>().powi(2) / (x.len() as f64 * x.iter().map(|v| v * v).sum::<f64>())
}

/// The dumbbell's RTT with empty queues: 6 links of 2 µs, a 1518 B data
/// frame serialised at each of 3 hops and a 66 B ACK at each on the way back.
const DUMBBELL_BASE_RTT_US: f64 = 12.0 + 3.0 * (1518.0 + 66.0) * 8.0 / 10e3;

#[test]
fn swift_holds_the_queueing_delay_at_its_target_less_the_base_rtt() {
    // Without flow scaling the fabric target is base + 2 switches x per_hop
    // (§3.5), and Swift's AIMD keeps the RTT around it: the queue holds the
    // difference. Tolerance (set from AIMD's sawtooth, which rides at and
    // above the target): half the expected delay, and 5 µs on the shift.
    let queue_at = |per_hop_us: f64| {
        let out = dumbbell(
            8,
            &format!("fs_range = \"0s\"\nper_hop = \"{per_hop_us}us\""),
            "30ms",
        );
        let port = bottleneck(&out, 8);
        let ports = out.table("ports");
        assert_eq!(
            ports.u64("drops")[port],
            0,
            "Swift at its target does not fill 1000 packets"
        );
        let sim_s = out.summary["sim_seconds"].as_f64().unwrap();
        let util = ports.u64("tx_bytes")[port] as f64 * 8.0 / sim_s / 10e9;
        assert!(util >= 0.98, "utilisation {util:.3}");
        let delivered: Vec<f64> = out
            .table("flows")
            .u64("delivered")
            .iter()
            .map(|&b| b as f64)
            .collect();
        assert!(
            jain(&delivered) >= 0.99,
            "Jain's index {:.3}",
            jain(&delivered)
        );
        mean_queue_us(&out, port, 0.005)
    };
    let expected = 25.0 + 2.0 * 1.0 - DUMBBELL_BASE_RTT_US;
    let q1 = queue_at(1.0);
    assert!(
        (q1 - expected).abs() <= 0.5 * expected,
        "queue {q1:.1} µs, expected about {expected:.1}"
    );
    // Topology scaling: 9 µs more per hop over 2 switches is 18 µs more queue.
    let q10 = queue_at(10.0);
    assert!(
        (q10 - q1 - 18.0).abs() <= 5.0,
        "queue {q1:.1} -> {q10:.1} µs"
    );
}

#[test]
fn flow_scaling_raises_the_target_as_windows_shrink() {
    // Eight flows with windows of a few packets: the flow term adds tens of
    // µs (§3.5), between nothing and fs_range (100 µs).
    let with = dumbbell(8, "", "30ms");
    let without = dumbbell(8, "fs_range = \"0s\"", "30ms");
    let (qw, qo) = (
        mean_queue_us(&with, bottleneck(&with, 8), 0.005),
        mean_queue_us(&without, bottleneck(&without, 8), 0.005),
    );
    assert!(
        qw > qo + 5.0 && qw < qo + 100.0,
        "queue {qo:.1} µs without flow scaling, {qw:.1} with"
    );
}

/// `senders` long-lived Swift flows into one host of a 10 Gb/s star.
fn incast(senders: u32, buffer: &str, swift: &str, duration: &str) -> RunOutput {
    run_toml(&format!(
        r#"
[run]
duration = "{duration}"
[topology]
type = "star"
hosts = {hosts}
link_rate = "10Gbps"
link_delay = "1us"
[switch]
buffer = "{buffer}"
[tcp]
cc = "swift"
min_rto = "1ms"
initial_cwnd = 1
[tcp.swift]
{swift}
[output]
queue_sample_interval = "5us"
[[workload]]
type = "bulk"
src = "1..{hosts}"
dst = 0
size = "inf"
"#,
        hosts = senders + 1
    ))
}

#[test]
fn windows_below_one_packet_keep_a_500_sender_incast_near_its_target() {
    // 500 senders into one 10 Gb/s port whose path holds about 5 packets:
    // with windows of at least one packet the queue must hold about 495;
    // Swift's paced sub-packet windows (min_cwnd 0.001) hold it near the
    // largest target, base + 1 switch + fs_range = 126 µs of RTT (§3.5).
    // Tolerance: 25 % of that target; the floor-1 queue at least 400 packets.
    let measure = |swift: &str| {
        let (out, early) = (
            incast(500, "1000pkt", swift, "40ms"),
            incast(500, "1000pkt", swift, "20ms"),
        );
        let ports = out.table("ports");
        let dcsim::results::Col::U32(peer) = ports.get("peer").unwrap() else {
            panic!()
        };
        let dcsim::results::Col::U32(node) = ports.get("node").unwrap() else {
            panic!()
        };
        let port = (0..peer.len())
            .find(|&i| peer[i] == 0 && node[i] == 501)
            .unwrap();
        assert_eq!(ports.u64("drops")[port], 0);
        // The second 20 ms: the same run's first 20 ms is the shorter run.
        let late: Vec<f64> = out
            .table("flows")
            .u64("delivered")
            .iter()
            .zip(early.table("flows").u64("delivered"))
            .map(|(a, b)| (a - b) as f64)
            .collect();
        (mean_queue_us(&out, port, 0.005), jain(&late))
    };
    let (q, fairness) = measure("");
    assert!((q - 126.0).abs() <= 0.25 * 126.0, "mean queue {q:.1} µs");
    assert!(
        fairness >= 0.9,
        "Jain's index over the last 20 ms {fairness:.3}"
    );
    let (q_floor, _) = measure("min_cwnd = 1.0");
    assert!(
        q_floor * 10e9 / 8.0 / 1e6 / 1518.0 >= 400.0,
        "with a one-packet floor the queue is {q_floor:.1} µs"
    );
}

#[test]
fn bad_swift_settings_are_clear_errors() {
    for (set, path) in [
        ("[tcp]\ncc = \"swift\"\nsack = false", "tcp.sack"),
        ("[tcp]\ncc = \"swift\"\necn = true", "tcp.ecn"),
        (
            "[tcp]\ncc = \"swift\"\n[tcp.swift]\nmax_mdf = 1.5",
            "tcp.swift.max_mdf",
        ),
        (
            "[tcp]\ncc = \"swift\"\n[tcp.swift]\nfs_min_cwnd = 300.0",
            "tcp.swift.fs_min_cwnd",
        ),
    ] {
        let e = Scenario::from_toml_str(&format!("[topology]\ntype = \"star\"\nhosts = 2\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n{set}\n")).unwrap_err();
        assert!(e.to_string().contains(path), "{e}");
    }
}
