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
    assert_eq!(net.path(0, 1, 7).len(), 2);
    assert_eq!(net.path(0, 2, 7).len(), 4);
    assert_eq!(net.path(0, 15, 7).len(), 6);
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
    assert_eq!(net.path(0, 7, 1).len(), 2);
    assert_eq!(net.path(0, 8, 1).len(), 4);
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
        let path = net.path(src, dst, rng.next_u32());
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
    let text = format!("{}\n[switch]\nrouting = \"spray\"\nbuffer = \"1000pkt\"\n[[workload]]\ntype = \"bulk\"\nsrc = 0\ndst = 31\nsize = \"2MB\"\n", LEAFSPINE.replace("1ms", "20ms"));
    let out = run(&scenario(&text), None).unwrap();
    let ports = out.table("ports");
    let (Some(Col::Str(node)), Some(Col::Str(peer))) = (ports.get("node_name"), ports.get("peer_name")) else { panic!() };
    let tx = ports.u64("tx_packets");
    let up: Vec<u64> = (0..node.len()).filter(|&i| node[i] == "leaf0" && peer[i].starts_with("spine")).map(|i| tx[i]).collect();
    assert_eq!(up.len(), 4);
    let (lo, hi) = (*up.iter().min().unwrap(), *up.iter().max().unwrap());
    assert!(lo > 0 && hi - lo <= 1, "round robin over 4 uplinks: {up:?}");
    assert_eq!(out.table("flows").u64("delivered")[0], 2_000_000);
    // With ECMP the same flow uses one uplink.
    let out = run(&scenario(&text.replace("\"spray\"", "\"ecmp\"")), None).unwrap();
    let ports = out.table("ports");
    let tx = ports.u64("tx_packets");
    let used = (0..node.len()).filter(|&i| node[i] == "leaf0" && peer[i].starts_with("spine") && tx[i] > 0).count();
    assert_eq!(used, 1);
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
