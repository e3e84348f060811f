//! Datacenter fabrics: leaf-spine and fat-tree shapes, shortest paths, ECMP
//! spreading (chi-square), per-packet spraying, per-tier latencies.

use dcsim::results::Col;
use dcsim::topology::Network;
use dcsim::{run, Scenario};
use dcsim_engine::{Rng, StreamId};

fn scenario(toml: &str) -> Scenario {
    Scenario::from_toml_str(toml).unwrap_or_else(|e| panic!("bad test scenario: {e}\n{toml}"))
}

const FATTREE4: &str = r#"
[run]
duration = "1ms"
[topology]
type = "fattree"
k = 4
link_rate = "10Gbps"
host_delay = "1us"
edge_agg_delay = "1us"
agg_core_delay = "1us"
"#;

const LEAFSPINE: &str = r#"
[run]
duration = "1ms"
[topology]
type = "leafspine"
leaves = 4
spines = 4
hosts_per_leaf = 8
host_rate = "10Gbps"
oversubscription = 2.0
host_delay = "1us"
uplink_delay = "1us"
"#;

#[test]
fn fat_tree_has_the_right_shape_and_path_lengths() {
    let s = scenario(FATTREE4);
    let net = Network::build(&s);
    assert_eq!(net.num_hosts, 16);
    assert_eq!(net.kinds.len() - 16, 20, "k^2/2 edge+agg... 8 edge, 8 agg, 4 core");
    assert_eq!(net.ports.len() as u64, s.topology.num_ports());
    // Same edge switch: 2 links; same pod: 4; other pod: 6.
    assert_eq!(net.path(0, 1, 7).unwrap().len(), 2);
    assert_eq!(net.path(0, 2, 7).unwrap().len(), 4);
    assert_eq!(net.path(0, 15, 7).unwrap().len(), 6);
    assert_eq!(net.names[16], "edge0.0");
}

#[test]
fn leaf_spine_uplinks_follow_the_oversubscription() {
    let s = scenario(LEAFSPINE);
    let net = Network::build(&s);
    assert_eq!(net.num_hosts, 32);
    // 8 hosts x 10G per leaf over 4 uplinks at 2:1 -> 10G each.
    let uplink = net.ports.iter().find(|p| net.names[p.node as usize] == "leaf0" && net.names[p.peer as usize] == "spine0").unwrap();
    assert_eq!(uplink.rate.bps, 10_000_000_000);
    assert_eq!(net.path(0, 7, 1).unwrap().len(), 2);
    assert_eq!(net.path(0, 8, 1).unwrap().len(), 4);
}

#[test]
fn ecmp_spreads_flows_evenly_over_equal_cost_paths() {
    // 4000 flows from pod 0 to pod 3 of a k=4 fat-tree: each crosses one of
    // 4 core switches. Chi-square against uniform, 3 degrees of freedom:
    // 16.27 is the 0.1% critical value.
    let s = scenario(FATTREE4);
    let net = Network::build(&s);
    let mut rng = Rng::stream(42, StreamId { kind: 9, index: 0 });
    let mut per_core = std::collections::BTreeMap::<String, u64>::new();
    let n = 4000u64;
    for i in 0..n {
        let (src, dst) = ((i % 4) as u32, 12 + ((i / 4) % 4) as u32);
        let path = net.path(src, dst, rng.next_u32()).unwrap();
        let core = path.iter().map(|&p| net.names[net.ports[p as usize].node as usize].clone()).find(|name| name.starts_with("core")).unwrap();
        *per_core.entry(core).or_default() += 1;
    }
    assert_eq!(per_core.len(), 4);
    let expected = n as f64 / 4.0;
    let chi2: f64 = per_core.values().map(|&o| (o as f64 - expected).powi(2) / expected).sum();
    assert!(chi2 < 16.27, "chi-square {chi2:.2}: {per_core:?}");
}

#[test]
fn spraying_uses_every_uplink_for_one_flow() {
    // Run the full 20 ms (past the flow's end) so that no frame is left in flight.
    let text = format!("{}\n[switch]\nrouting = \"spray\"\nbuffer = \"1000pkt\"\n[[workload]]\ntype = \"bulk\"\nsrc = 0\ndst = 31\nsize = \"2MB\"\n", LEAFSPINE.replace("\"1ms\"", "\"20ms\"\nstop_when_done = false"));
    let out = run(&scenario(&text), None).unwrap();
    let ports = out.table("ports");
    let (Some(Col::Str(node)), Some(Col::Str(peer))) = (ports.get("node_name"), ports.get("peer_name")) else { panic!() };
    let tx = ports.u64("tx_packets");
    let up: Vec<u64> = (0..node.len()).filter(|&i| node[i] == "leaf0" && peer[i].starts_with("spine")).map(|i| tx[i]).collect();
    assert_eq!(up.len(), 4);
    let (lo, hi) = (*up.iter().min().unwrap(), *up.iter().max().unwrap());
    assert!(lo > 0 && hi - lo <= 1, "round robin over 4 uplinks: {up:?}");
    assert_eq!(out.table("flows").u64("delivered")[0], 2_000_000);
    switches_send_what_they_receive(&out);
    // With ECMP the same flow uses one uplink.
    let out = run(&scenario(&text.replace("\"spray\"", "\"ecmp\"")), None).unwrap();
    let ports = out.table("ports");
    let tx = ports.u64("tx_packets");
    let used = (0..node.len()).filter(|&i| node[i] == "leaf0" && peer[i].starts_with("spine") && tx[i] > 0).count();
    assert_eq!(used, 1);
    switches_send_what_they_receive(&out);
}

/// A run that ended with nothing in flight and no drops: every switch sent on its ports the
/// frames and bytes its peers sent to it (the ports table counts each frame
/// once, with its own size, even when its slot was reused before the
/// port's books were settled).
fn switches_send_what_they_receive(out: &dcsim::RunOutput) {
    let ports = out.table("ports");
    let (Some(Col::U32(node)), Some(Col::U32(peer))) = (ports.get("node"), ports.get("peer")) else { panic!() };
    let Some(Col::Str(kind)) = ports.get("node_kind") else { panic!() };
    assert_eq!(out.summary["packets_in_flight"], 0);
    assert_eq!(ports.u64("drops").iter().sum::<u64>(), 0);
    for col in ["tx_packets", "tx_bytes"] {
        let tx = ports.u64(col);
        for sw in (0..ports.rows()).filter(|&p| kind[p] == "switch").map(|p| node[p]) {
            let sent: u64 = (0..ports.rows()).filter(|&p| node[p] == sw).map(|p| tx[p]).sum();
            let received: u64 = (0..ports.rows()).filter(|&p| peer[p] == sw).map(|p| tx[p]).sum();
            assert_eq!(sent, received, "switch {sw}: {col}");
        }
    }
}

#[test]
fn per_tier_latency_adds_to_the_handshake() {
    // Host 0 to host 15 crosses edge, agg, core, agg, edge: 5 switches each way.
    let base = format!("{FATTREE4}\n[tcp]\nrtt_granularity = \"1ps\"\n[[workload]]\ntype = \"bulk\"\nsrc = 0\ndst = 15\nsize = \"1B\"\n");
    let rtt = |text: &str| {
        let s = scenario(text);
        let mut w = dcsim::world::World::new(&s);
        w.run(None).unwrap();
        w.endpoints()[0].established_at.unwrap().ps()
    };
    let plain = rtt(&base);
    let slow_core = rtt(&base.replace("agg_core_delay = \"1us\"", "agg_core_delay = \"1us\"\ncore_latency = \"300ns\""));
    assert_eq!(slow_core - plain, 2 * 300_000, "one core crossing each way");
}

#[test]
fn shared_buffer_dynamic_threshold_limits_each_port() {
    // Broadcom-style dynamic thresholds: with n congested ports each settles
    // at alpha * B / (1 + n * alpha). B = 150 KB, alpha = 1: one hot port
    // peaks near 75 KB, two hot ports near 50 KB each.
    let run_with = |receivers: &str| {
        let text = format!(
            "[run]\nduration = \"20ms\"\n[topology]\ntype = \"star\"\nhosts = 10\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n[switch]\nbuffer = \"10000pkt\"\nshared_buffer = {{ size = \"150KB\", alpha = 1.0 }}\n[tcp]\nmin_rto = \"1ms\"\n[output]\nqueue_sample_interval = \"0s\"\n{receivers}"
        );
        run(&scenario(&text), None).unwrap()
    };
    let one = run_with("[[workload]]\ntype = \"bulk\"\nsrc = \"2..10\"\ndst = 0\nsize = \"inf\"\n");
    let two = run_with("[[workload]]\ntype = \"bulk\"\nsrc = \"2..6\"\ndst = 0\nsize = \"inf\"\n[[workload]]\ntype = \"bulk\"\nsrc = \"6..10\"\ndst = 1\nsize = \"inf\"\n");
    let maxq = |o: &dcsim::RunOutput, port: usize| o.table("ports").u64("max_queue_bytes")[port] as f64;
    // Port 1 is the switch's port toward host 0, port 3 toward host 1.
    let q1 = maxq(&one, 1);
    assert!(q1 <= 75_000.0 + 1518.0 && q1 > 60_000.0, "one hot port: {q1}");
    let (a, b) = (maxq(&two, 1), maxq(&two, 3));
    assert!(a <= 50_000.0 + 1518.0 && b <= 50_000.0 + 1518.0, "two hot ports: {a}, {b}");
    assert!(a > 35_000.0 && b > 35_000.0, "two hot ports: {a}, {b}");
    assert!(one.table("ports").u64("drops")[1] > 0);
}

#[test]
fn rtt_variation_per_flow_classes_and_per_host_delays() {
    // Flows one after another (no overlap) on a star; each connection draws a
    // class; the data direction waits the class delay before the NIC, ACKs
    // wait `reverse`. The ideal FCT includes them, so every slowdown is 1.
    let text = r#"
[topology]
type = "star"
hosts = 2
link_rate = "10Gbps"
link_delay = "1us"
[host.rtt_variation]
type = "per_flow"
classes = ["1us", "20us", "50us", "80us", "160us"]
reverse = "1us"
[[workload]]
type = "bulk"
src = 0
dst = 1
size = "1448B"
"#;
    let mut flows = String::new();
    for i in 0..40 {
        flows += &format!("{{ src = 0, dst = 1, size = \"1448B\", start = \"{}us\" }}, ", i * 1000);
    }
    let text = text.replace("[[workload]]\ntype = \"bulk\"\nsrc = 0\ndst = 1\nsize = \"1448B\"\n", &format!("[[workload]]\ntype = \"flows\"\nflows = [{flows}]\n"));
    let out = run(&scenario(&text), None).unwrap();
    let f = out.table("flows");
    let mut fcts: Vec<u64> = f.f64("fct").iter().map(|x| (x * 1e12).round() as u64).collect();
    for (fct, ideal) in f.f64("fct").iter().zip(f.f64("ideal_fct")) {
        assert_eq!((fct * 1e12).round() as u64, (ideal * 1e12).round() as u64);
    }
    fcts.sort_unstable();
    fcts.dedup();
    assert_eq!(fcts.len(), 5, "five classes, five distinct FCTs");
    // The FCT (handshake + data) grows by 2 x the class delay: SYN and data wait.
    assert_eq!(fcts[4] - fcts[0], 2 * (160_000_000 - 1_000_000));
    // Per host: host i's link gets delays[i % n] more.
    let per_host = r#"
[run]
duration = "1ms"
[topology]
type = "star"
hosts = 3
link_rate = "10Gbps"
link_delay = "1us"
[host.rtt_variation]
type = "per_host"
delays = ["0us", "10us"]
"#;
    let out = run(&scenario(per_host), None).unwrap();
    let delays = out.table("ports").f64("delay").to_vec();
    assert_eq!(delays, vec![1e-6, 1e-6, 11e-6, 11e-6, 1e-6, 1e-6]);
}

#[test]
fn a_failed_uplink_is_routed_around_and_recovers() {
    // Leaf-spine with 2 spines; spraying sends one flow over both uplinks.
    // When leaf0's uplink to spine0 fails, routes are recomputed and the flow
    // finishes over spine1; frames caught on the failed link are lost and
    // recovered by TCP. After recovery both uplinks carry traffic again.
    let base = r#"
[run]
duration = "30ms"
[topology]
type = "leafspine"
leaves = 2
spines = 2
hosts_per_leaf = 2
host_rate = "10Gbps"
uplink_rate = "10Gbps"
host_delay = "1us"
uplink_delay = "1us"
[switch]
buffer = "1000pkt"
routing = "spray"
[tcp]
min_rto = "1ms"
[[workload]]
type = "bulk"
src = 0
dst = 3
size = "inf"
"#;
    let s = scenario(base);
    let net = Network::build(&s);
    let uplink = (0..net.ports.len()).find(|&p| net.names[net.ports[p].node as usize] == "leaf0" && net.names[net.ports[p].peer as usize] == "spine0").unwrap();
    let failing = format!("{base}\n[[failure]]\nport = {uplink}\nat = \"5ms\"\nuntil = \"20ms\"\n");
    let out = run(&scenario(&failing), None).unwrap();
    let delivered = out.table("flows").u64("delivered")[0] as f64;
    // The flow kept going: far more than 5 ms worth of data at ~9.5 Gb/s.
    assert!(delivered * 8.0 / 0.03 > 8e9, "goodput {:.3e}", delivered * 8.0 / 0.03);
    let ports = out.table("ports");
    let tx = ports.u64("tx_packets");
    let other = (0..ports.rows()).find(|&p| net.names[net.ports[p].node as usize] == "leaf0" && net.names[net.ports[p].peer as usize] == "spine1").unwrap();
    // spine0's uplink carried traffic before the failure and after the recovery, but less than spine1's.
    assert!(tx[uplink] > 0 && tx[other] > tx[uplink], "{} vs {}", tx[uplink], tx[other]);
    // A failure without recovery: the uplink stops carrying anything new.
    let permanent = format!("{base}\n[[failure]]\nport = {uplink}\nat = \"5ms\"\n");
    let out2 = run(&scenario(&permanent), None).unwrap();
    assert!(out2.table("ports").u64("tx_packets")[uplink] < tx[uplink]);
    assert!(out2.table("flows").u64("delivered")[0] as f64 * 8.0 / 0.03 > 8e9);
}

#[test]
fn a_large_fat_tree_runs_repeatably_and_accounts_for_every_packet() {
    // k = 8 (768 ports): large enough that the run loop prefetches each
    // next event's port, frame or endpoint (a hint that must change nothing).
    let workload = r#"
[switch]
buffer = "100pkt"
aqm = { type = "dctcp", k = "65pkt" }
[tcp]
cc = "dctcp"
min_rto = "1ms"
[[workload]]
type = "poisson"
size = { points = [[0.0, 0.0], [10000.0, 0.5], [1000000.0, 1.0]] }
load = 0.5
load_reference = "host"
pattern = "all_to_all"
"#;
    let toml = format!("{}{workload}", FATTREE4.replace("k = 4", "k = 8").replace("\"1ms\"", "\"3ms\""));
    let s = scenario(&toml);
    assert!(Network::build(&s).ports.len() >= 320);
    let a = run(&s, None).unwrap();
    let b = run(&s, None).unwrap();
    let n = |o: &dcsim::RunOutput, k: &str| o.summary[k].as_u64().unwrap();
    for k in ["events", "packets_created", "packets_delivered", "packets_dropped", "flows_completed"] {
        assert_eq!(n(&a, k), n(&b, k), "{k}");
    }
    assert_eq!(n(&a, "packets_created"), n(&a, "packets_delivered") + n(&a, "packets_dropped") + n(&a, "packets_in_flight"));
    assert!(n(&a, "flows_completed") > 100, "{}", n(&a, "flows_completed"));
    assert_eq!(a.table("flows").u64("delivered"), b.table("flows").u64("delivered"));
}
