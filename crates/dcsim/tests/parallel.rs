//! One run over several threads (issue 30, deliverable 2): with the
//! canonical event order, every output of 1, 2 and 4 threads is identical,
//! on fabrics with and without ECMP, with incast and with a link failure,
//! under TCP, NDP, Homa and RDMA.

use dcsim::results::Col;
use dcsim::world::{run_threads, unsupported, RunError, RunOutput};
use dcsim::Scenario;

const FATTREE: &str = r#"
[run]
duration = "4ms"
event_order = "canonical"
[topology]
type = "fattree"
k = 4
link_rate = "10Gbps"
host_delay = "1us"
edge_agg_delay = "1us"
agg_core_delay = "2us"
[switch]
buffer = "60pkt"
forwarding_latency = "300ns"
aqm = { type = "dctcp", k = "20pkt" }
[tcp]
cc = "dctcp"
min_rto = "1ms"
[output]
queue_sample_interval = "50us"
queue_sample_ports = "all"
[[workload]]
type = "poisson"
size = "40KB"
load = 0.6
load_reference = "host"
pattern = "all_to_all"
[[workload]]
type = "incast"
querier = 0
responders = "4..16"
response_size = "20KB"
rounds = 10
start = "500us"
"#;

/// Every table and the summary, but for the wall clock and thread count.
fn outputs(s: &Scenario, threads: usize) -> (Vec<String>, RunOutput) {
    let mut out = run_threads(s, threads, None).unwrap_or_else(|e| panic!("{threads} threads: {e:?}"));
    for key in ["wall_seconds", "events_per_s", "threads"] {
        out.summary.remove(key);
    }
    let pcaps = out.pcaps.iter().map(|(name, bytes)| format!("pcap {name}: {bytes:?}"));
    let text = out.tables.iter().map(|t| format!("{}: {:?}", t.name, t.columns)).chain([format!("{:?}", out.summary)]).chain(pcaps).collect();
    (text, out)
}

fn same_for_1_2_and_4_threads(text: &str) -> RunOutput {
    let s = Scenario::from_toml_str(text).unwrap();
    let (one, out) = outputs(&s, 1);
    for threads in [2, 4] {
        let (many, _) = outputs(&s, threads);
        for (a, b) in one.iter().zip(&many) {
            // Show where they part: the table and the text around it.
            let at = a.bytes().zip(b.bytes()).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
            let from = at.saturating_sub(150);
            assert!(a == b, "{threads} threads differ from 1 in {}:\n…{}\n…{}", &a[..a.find(':').unwrap_or(0)], &a[from..a.len().min(at + 60)], &b[from..b.len().min(at + 60)]);
        }
    }
    // Not a run that did nothing: packets crossed the fabric and flows ended.
    assert!(out.summary["flows_completed"].as_u64().unwrap() > 50, "{:?}", out.summary);
    assert!(out.table("queues").rows() > 1000);
    out
}

#[test]
fn fat_tree_with_ecmp_and_incast() {
    let out = same_for_1_2_and_4_threads(FATTREE);
    assert_eq!(out.summary["stopped_by"], "duration");
    assert!(out.table("queries").rows() >= 2, "{} queries", out.table("queries").rows());
}

#[test]
fn fat_tree_with_a_link_failure_and_recovery() {
    // An edge switch's uplink (port 17 of the k = 4 fat-tree: edge0 to agg1) fails for 2 ms.
    let text = format!("{FATTREE}\n[[failure]]\nport = 17\nat = \"1ms\"\nuntil = \"3ms\"\n[[failure]]\nport = 25\nat = \"1.5ms\"\n");
    let out = same_for_1_2_and_4_threads(&text);
    let ports = out.table("ports");
    assert!(ports.u64("drops").iter().sum::<u64>() + ports.u64("link_losses").iter().sum::<u64>() > 0);
}

#[test]
fn per_packet_spraying_and_a_single_path_fabric_stopping_when_done() {
    same_for_1_2_and_4_threads(&FATTREE.replace("[switch]", "[switch]\nrouting = \"spray\""));
    // One spine: every route is the only one. The run stops when the incast is done.
    let leafspine = r#"
[run]
event_order = "canonical"
[topology]
type = "leafspine"
leaves = 4
spines = 1
hosts_per_leaf = 8
host_rate = "10Gbps"
oversubscription = 4.0
host_delay = "1us"
uplink_delay = "1us"
[switch]
buffer = "80pkt"
[tcp]
min_rto = "1ms"
[output]
queue_sample_interval = "20us"
queue_sample_ports = "all"
[[workload]]
type = "incast"
querier = 0
responders = "8..32"
response_size = "30KB"
rounds = 8
[[workload]]
type = "bulk"
src = "1..8"
dst = "24..31"
size = "300KB"
stagger = "10us"
"#;
    let out = same_for_1_2_and_4_threads(leafspine);
    assert_eq!(out.summary["stopped_by"], "workload done");
}

#[test]
fn voq_switches_split_too() {
    // CLUES' VOQ switch in every switch of the fat-tree: its cells, the
    // backplane's wake-ups and the sampled ingress buffers per partition.
    let out = same_for_1_2_and_4_threads(&FATTREE.replace("forwarding_latency = \"300ns\"", "voq = { ingress_cells = 200 }"));
    assert!(out.table("voq").rows() > 1000, "the ingress buffers were sampled");
    assert!(out.table("ports").u64("ingress_drops").iter().sum::<u64>() > 0, "the ingress buffers overflowed");
}

#[test]
fn a_capture_at_a_host_splits_too() {
    let out = same_for_1_2_and_4_threads(&format!("{FATTREE}\n[[output.pcap]]\nhost = 1\n"));
    assert!(out.pcaps[0].1.len() > 100_000, "the host's frames were captured");
}

#[test]
fn a_large_fat_tree_splits_too() {
    // k = 8: the timing wheel and the prefetching run loop.
    let text = FATTREE.replace("k = 4", "k = 8").replace("duration = \"4ms\"", "duration = \"1ms\"");
    let s = Scenario::from_toml_str(&text).unwrap();
    let (one, _) = outputs(&s, 1);
    let (two, _) = outputs(&s, 2);
    assert!(one == two, "k = 8: 2 threads differ from 1");
}

#[test]
fn a_split_run_can_be_cancelled() {
    let s = Scenario::from_toml_str(&FATTREE.replace("duration = \"4ms\"", "duration = \"10s\"")).unwrap();
    let progress = dcsim::Progress::default();
    std::thread::scope(|scope| {
        let run = scope.spawn(|| run_threads(&s, 2, Some(&progress)));
        while progress.events.load(std::sync::atomic::Ordering::Relaxed) == 0 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        progress.cancel.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(matches!(run.join().unwrap(), Err(RunError::Cancelled)));
    });
}

#[test]
fn what_cannot_split_says_why() {
    let scheduled = Scenario::from_toml_str(&FATTREE.replace("event_order = \"canonical\"", "")).unwrap();
    let why = unsupported(&scheduled, 2).expect("the scheduled order cannot split");
    assert!(why.contains("run.event_order = \"canonical\""), "{why}");
    assert!(matches!(run_threads(&scheduled, 2, None), Err(RunError::Unsupported(_))));
    let canonical = Scenario::from_toml_str(FATTREE).unwrap();
    assert!(unsupported(&canonical, 0).unwrap().contains("1..=64"));
    assert!(unsupported(&canonical, 4).is_none());
    // A capture at a switch port: its frames' TCP state is the hosts'.
    let pcap = Scenario::from_toml_str(&format!("{FATTREE}\n[[output.pcap]]\nport = 40\n")).unwrap();
    match run_threads(&pcap, 2, None) {
        Err(RunError::Unsupported(why)) => assert!(why.contains("output.pcap[0]") && why.contains("switch port"), "{why}"),
        other => panic!("expected an error, got {:?}", other.map(|o| o.summary)),
    }
    // No lookahead: a zero-delay link.
    let star = r#"
[run]
event_order = "canonical"
[topology]
type = "star"
hosts = 3
link_rate = "10Gbps"
link_delay = "0us"
[[workload]]
type = "incast"
querier = 0
responders = [1, 2]
response_size = "50KB"
rounds = 3
"#;
    let s = Scenario::from_toml_str(star).unwrap();
    match run_threads(&s, 2, None) {
        Err(RunError::Unsupported(why)) => assert!(why.contains("positive delay") && why.contains("host0 - switch"), "{why}"),
        other => panic!("expected an error, got {:?}", other.map(|o| o.summary)),
    }
    assert_eq!(run_threads(&s, 1, None).unwrap().table("queries").rows(), 3);
}

/// The k = 4 fat-tree's Poisson traffic under another transport for 2 ms,
/// its incast as a many-to-one bulk transfer (these transports have no
/// query app).
fn fat_tree_with(switch: &str, transport: &str) -> String {
    let tcp = "[switch]\nbuffer = \"60pkt\"\nforwarding_latency = \"300ns\"\naqm = { type = \"dctcp\", k = \"20pkt\" }\n[tcp]\ncc = \"dctcp\"\nmin_rto = \"1ms\"\n";
    let incast = "type = \"incast\"\nquerier = 0\nresponders = \"4..16\"\nresponse_size = \"20KB\"\nrounds = 10\n";
    let base = FATTREE.replace(tcp, "").replace(incast, "type = \"bulk\"\nsrc = \"4..16\"\ndst = 0\nsize = \"200KB\"\n").replace("\"4ms\"", "\"2ms\"");
    assert!(!base.contains("incast") && !base.contains("[tcp]"));
    format!("{base}\n[switch]\n{switch}\n{transport}\n")
}

#[test]
fn ndp_homa_and_rdma_split_too() {
    // NDP: trimming switches, pulls paced at the receivers.
    same_for_1_2_and_4_threads(&fat_tree_with(
        "buffer = \"200000B\"\nrouting = \"path\"\nscheduler = { type = \"strict_priority\", classes = 2, full = \"trim\", class_buffer = \"6pkt\" }",
        "[ndp]\niw = 23",
    ));
    // Homa: grants and priorities.
    same_for_1_2_and_4_threads(&fat_tree_with("buffer = \"1MB\"\nscheduler = { type = \"strict_priority\", classes = 8 }", "[homa]\nsched_priorities = 4"));
    // RDMA without PFC (go-back-N on drops): HPCC's telemetry stamped at
    // every switch, DCQCN's marks and CNPs.
    same_for_1_2_and_4_threads(&fat_tree_with("buffer = \"200KB\"", "[rdma]\ncc = { type = \"hpcc\" }"));
    same_for_1_2_and_4_threads(&fat_tree_with(
        "buffer = \"200KB\"\naqm = { type = \"red\", min_th = \"20KB\", max_th = \"80KB\", max_p = 0.2, weight = 1.0 }",
        "[rdma]\ncc = { type = \"dcqcn\" }",
    ));
}

#[test]
fn pfc_splits_too() {
    // PAUSE frames cross partitions as frames do; the incast pauses the
    // fabric's ports, and DCQCN's hosts, on every thread count alike.
    let out = same_for_1_2_and_4_threads(&fat_tree_with(
        "buffer = \"200KB\"\naqm = { type = \"red\", min_th = \"20KB\", max_th = \"80KB\", max_p = 0.2, weight = 1.0 }\npfc = { xoff = \"40KB\" }",
        "[rdma]\ncc = { type = \"dcqcn\" }",
    ));
    let pfc = out.table("pfc");
    let Some(Col::Str(nodes)) = pfc.get("node_name") else { panic!("node names") };
    let pausing = nodes.iter().zip(pfc.u64("pauses_sent")).filter(|(n, &sent)| !n.starts_with("host") && sent > 0).count();
    assert!(pausing >= 2, "{pausing} switch ports sent PAUSE frames");
    assert_eq!(out.table("ports").u64("drops").iter().sum::<u64>(), 0, "lossless");

    // A pause cycle on a ring of five switches (tests/pfc.rs) is found by
    // the watch, which a split run keeps at window ends: the same cycle,
    // at the same time, for every thread count.
    let flows: String = (0..5).map(|i| format!("[[workload]]\ntype = \"bulk\"\nsrc = {i}\ndst = {}\nsize = \"inf\"\n", (i + 2) % 5)).collect();
    let ring = format!(
        "[run]\nduration = \"1s\"\nevent_order = \"canonical\"\n[topology]\ntype = \"ring\"\nswitches = 5\nhosts_per_switch = 1\nlink_rate = \"10Gbps\"\nhost_delay = \"1us\"\nlink_delay = \"1us\"\n[switch.pfc]\nxoff = \"30KB\"\ndeadlock_after = \"5ms\"\n{flows}"
    );
    let s = Scenario::from_toml_str(&ring).unwrap();
    let (one, out) = outputs(&s, 1);
    assert_eq!(out.summary["stopped_by"], "pfc deadlock");
    let d = &out.summary["pfc_deadlock"];
    assert_eq!(d["ports"].as_array().unwrap().len(), 5, "the five clockwise ring ports: {d}");
    assert!(d["at"].as_f64().unwrap() < 0.1, "{d}");
    for threads in [2, 4] {
        assert!(outputs(&s, threads).0 == one, "the ring on {threads} threads differs from 1");
    }
}
