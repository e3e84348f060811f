//! PFC (IEEE 802.1Qbb) end to end: lossless incast with the derived
//! headroom, what too little headroom costs, congestion spreading to a
//! victim flow, a pause cycle found and reported, and no cost when off.

use dcsim::results::{Col, Table};
use dcsim::{run, RunOutput, Scenario};

fn scenario(toml: &str) -> Scenario {
    Scenario::from_toml_str(toml).unwrap_or_else(|e| panic!("bad test scenario: {e}\n{toml}"))
}

fn u64s<'a>(t: &'a Table, name: &str) -> &'a [u64] {
    t.u64(name)
}

fn f64s<'a>(t: &'a Table, name: &str) -> &'a [f64] {
    t.f64(name)
}

fn summary_u64(out: &RunOutput, key: &str) -> u64 {
    out.summary[key].as_u64().unwrap_or_else(|| panic!("{key}"))
}

/// 8 senders to one receiver on a star, TCP bulk flows, a 100-packet
/// switch buffer that would drop without PFC.
fn incast(pfc: &str) -> String {
    format!(
        r#"
[topology]
type = "star"
hosts = 9
link_rate = "10Gbps"
link_delay = "2us"
[switch]
buffer = "100pkt"
{pfc}
[[workload]]
type = "bulk"
src = "0..8"
dst = 8
size = "2MB"
"#
    )
}

#[test]
fn incast_is_lossless_with_the_derived_headroom() {
    let out = run(&scenario(&incast("[switch.pfc]\nxoff = \"20KB\"")), None).unwrap();
    let ports = out.table("ports");
    assert_eq!(u64s(ports, "drops").iter().sum::<u64>(), 0, "no frame is dropped anywhere");
    let flows = out.table("flows");
    assert!(f64s(flows, "fct").iter().all(|t| t.is_finite()), "every flow completes");
    assert_eq!(u64s(flows, "retransmits").iter().sum::<u64>(), 0, "so nothing is retransmitted");
    let pfc = out.table("pfc");
    let sent: u64 = u64s(pfc, "pauses_sent").iter().sum();
    let received: u64 = u64s(pfc, "pauses_received").iter().sum();
    assert!(sent > 0, "the switch paused the senders");
    assert_eq!(sent, received, "every PAUSE arrives (no loss on the wire)");
    assert_eq!(u64s(pfc, "headroom_drops").iter().sum::<u64>(), 0);
    // Ingress bytes stay within XOFF + the headroom: 20 KB + 2 * 1518 + 64 + 2 * 2 us * 10 Gb/s.
    let most = *u64s(pfc, "max_ingress_bytes").iter().max().unwrap();
    assert!(most <= 20_000 + 2 * 1518 + 64 + 5_000, "{most}");
    assert!(f64s(pfc, "paused_time").iter().sum::<f64>() > 0.0);
    // The receiver's link stays busy: 16 MB at 10 Gb/s take 12.8 ms of payload time.
    let done = f64s(flows, "end").iter().cloned().fold(0.0, f64::max);
    assert!(done < 14.5e-3, "finished at {done}");
    let (made, got, in_flight) = (summary_u64(&out, "packets_created"), summary_u64(&out, "packets_delivered"), summary_u64(&out, "packets_in_flight"));
    assert_eq!(made, got + in_flight, "PAUSE frames are conserved like any other");
    assert!(out.summary["pfc_deadlock"].is_null());
}

#[test]
fn too_little_headroom_drops_and_says_so() {
    let out = run(&scenario(&incast("[switch.pfc]\nxoff = \"20KB\"\nheadroom = \"1KB\"")), None).unwrap();
    let pfc = out.table("pfc");
    let hdrops: u64 = u64s(pfc, "headroom_drops").iter().sum();
    assert!(hdrops > 0, "frames in flight when the pause was sent overflow 1 KB");
    assert_eq!(summary_u64(&out, "packets_dropped"), hdrops);
}

#[test]
fn without_pfc_the_same_incast_drops() {
    let out = run(&scenario(&incast("")), None).unwrap();
    assert!(u64s(out.table("ports"), "drops").iter().sum::<u64>() > 0);
    assert_eq!(out.table("pfc").rows(), 0, "no PFC, no rows");
}

/// Two switches: hosts 0-3 on the left, 4-5 on the right. Hosts 0-2 send
/// to host 4 (congested); host 3 sends to host 5 (the victim, whose own
/// path is uncongested but shares the inter-switch link).
fn spreading(pfc: &str) -> String {
    format!(
        r#"
[run]
duration = "20ms"
[topology]
type = "dumbbell"
senders = 4
receivers = 2
access_rate = "10Gbps"
access_delay = "2us"
bottleneck_rate = "40Gbps"
bottleneck_delay = "2us"
[switch]
buffer = "100pkt"
{pfc}
[[workload]]
type = "bulk"
src = "0..3"
dst = 4
size = "inf"
[[workload]]
type = "bulk"
src = 3
dst = 5
size = "inf"
"#
    )
}

/// Bytes delivered to `dst` over the run.
fn delivered_to(out: &RunOutput, dst: u32) -> u64 {
    let flows = out.table("flows");
    let d = match flows.get("dst") {
        Some(Col::U32(v)) => v,
        _ => unreachable!(),
    };
    u64s(flows, "delivered").iter().zip(d).filter(|(_, &x)| x == dst).map(|(b, _)| *b).sum()
}

#[test]
fn pauses_spread_congestion_to_a_victim_flow() {
    let lossy = run(&scenario(&spreading("")), None).unwrap();
    let lossless = run(&scenario(&spreading("[switch.pfc]\nxoff = \"20KB\"")), None).unwrap();
    // Without PFC the victim's path is free: it runs near 10 Gb/s (25 MB in 20 ms).
    let free = delivered_to(&lossy, 5);
    assert!(free > 22_000_000, "{free}");
    // With PFC the right switch pauses the shared link whenever host 4's
    // port backs up, and the victim's frames wait behind the paused ones.
    let victim = delivered_to(&lossless, 5);
    eprintln!("victim {victim} B with PFC, {free} B without");
    assert!((victim as f64) < 0.6 * free as f64, "victim {victim} B against {free} B without PFC");
    let pfc = lossless.table("pfc");
    let names = match pfc.get("node_name") {
        Some(Col::Str(v)) => v,
        _ => unreachable!(),
    };
    let left_paused = names.iter().zip(u64s(pfc, "pauses_received")).any(|(n, &r)| n == "left" && r > 0);
    assert!(left_paused, "the pause reached the left switch's port on the shared link");
}

#[test]
fn a_pause_cycle_on_a_ring_is_found_and_stops_the_run() {
    // Five switches in a ring; the host on switch i sends to the host on
    // switch i + 2, the short way round (clockwise), so every ring link
    // carries two flows and each switch's buffer waits on the next one's.
    let flows: String = (0..5).map(|i| format!("[[workload]]\ntype = \"bulk\"\nsrc = {i}\ndst = {}\nsize = \"inf\"\n", (i + 2) % 5)).collect();
    let toml = format!(
        r#"
[run]
duration = "1s"
[topology]
type = "ring"
switches = 5
hosts_per_switch = 1
link_rate = "10Gbps"
host_delay = "1us"
link_delay = "1us"
[switch.pfc]
xoff = "30KB"
deadlock_after = "5ms"
{flows}"#
    );
    let out = run(&scenario(&toml), None).unwrap();
    assert_eq!(out.summary["stopped_by"], "pfc deadlock");
    let d = &out.summary["pfc_deadlock"];
    eprintln!("{d}");
    let ports: Vec<u64> = d["ports"].as_array().unwrap().iter().map(|p| p.as_u64().unwrap()).collect();
    assert_eq!(ports.len(), 5, "the cycle is the five clockwise ring ports: {d}");
    assert!(d["at"].as_f64().unwrap() < 0.1, "found within a few watch periods: {d}");
}

#[test]
fn pfc_off_changes_nothing() {
    // The same incast with PFC configured but never triggered (XOFF above
    // anything the switch can hold) gives the same flows as without PFC.
    let off = run(&scenario(&incast("")), None).unwrap();
    let idle = run(&scenario(&incast("[switch.pfc]\nxoff = \"100MB\"\nclasses = []")), None).unwrap();
    assert_eq!(f64s(off.table("flows"), "fct"), f64s(idle.table("flows"), "fct"));
    assert_eq!(summary_u64(&off, "packets_dropped"), summary_u64(&idle, "packets_dropped"));
}

#[test]
fn one_lossless_class_among_four_and_nics_stop_for_it() {
    // The incast's flows in class 3 (DSCP 3) of a 4-class strict-priority
    // switch, only class 3 lossless: the NICs, with one FIFO, stop when
    // their head frame's class is paused.
    let pfc = "scheduler = { type = \"strict_priority\", classes = 4, full = \"drop_arrival\" }\n[switch.pfc]\nxoff = \"20KB\"\nclasses = [3]";
    let toml = incast(pfc).replace("size = \"2MB\"", "size = \"2MB\"\ndscp = 3");
    let out = run(&scenario(&toml), None).unwrap();
    assert_eq!(u64s(out.table("ports"), "drops").iter().sum::<u64>(), 0);
    let pfc = out.table("pfc");
    let classes = match pfc.get("class") {
        Some(Col::U32(v)) => v,
        _ => unreachable!(),
    };
    assert!(classes.iter().all(|&c| c == 3), "only class 3 pauses: {classes:?}");
    assert!(u64s(pfc, "pauses_received").iter().sum::<u64>() > 0);
}

#[test]
fn dynamic_thresholds_stay_lossless_while_the_buffer_fills() {
    // 31 line-rate RoCE senders into one 100 Gb/s port, a 4 MB shared
    // buffer with XOFF at 1/8 of its free bytes: as it fills, the XOFF
    // level falls below what ports already hold. The headroom counts from
    // the bytes held when the pause went out, so nothing is dropped.
    let toml = r#"
[run]
duration = "10ms"
[topology]
type = "star"
hosts = 32
link_rate = "100Gbps"
link_delay = "1us"
[switch]
buffer = "100MB"
shared_buffer = { size = "4MB", alpha = 1.0 }
pfc = { xoff = "dynamic", alpha = 0.125 }
[rdma]
cc = { type = "none" }
[[workload]]
type = "bulk"
src = "0..31"
dst = 31
size = "1MB"
"#;
    let out = run(&scenario(toml), None).unwrap();
    assert_eq!(summary_u64(&out, "packets_dropped"), 0);
    assert_eq!(u64s(out.table("pfc"), "headroom_drops").iter().sum::<u64>(), 0);
    assert!(f64s(out.table("flows"), "fct").iter().all(|t| t.is_finite()));
    assert!(u64s(out.table("pfc"), "pauses_sent").iter().sum::<u64>() > 31, "every sender was paused");
}

#[test]
fn a_faster_ingress_port_gets_a_larger_share_of_the_free_buffer_with_per() {
    // 8 line-rate RoCE senders at 100 Gb/s send 200 KB each across a
    // 400 Gb/s link into one 100 Gb/s receiver: the far switch's 400 Gb/s
    // ingress holds most of the 1.6 MB burst. At 1/8 of the 4 MB buffer's
    // free bytes it pauses the near switch; with `per = "100Gbps"` its
    // share is 4 x 1/8 (the HPCC authors' rule) and the burst fits.
    let pauses_over_the_fabric = |per: &str| {
        let toml = format!(
            r#"
[run]
duration = "2ms"
[topology]
type = "dumbbell"
senders = 8
receivers = 1
access_rate = "100Gbps"
access_delay = "1us"
bottleneck_rate = "400Gbps"
bottleneck_delay = "1us"
[switch]
buffer = "100MB"
shared_buffer = {{ size = "4MB", alpha = 1.0 }}
pfc = {{ xoff = "dynamic", alpha = 0.125{per} }}
[rdma]
cc = {{ type = "none" }}
[[workload]]
type = "bulk"
src = "0..8"
dst = 8
size = "200KB"
"#
        );
        let out = run(&scenario(&toml), None).unwrap();
        assert_eq!(summary_u64(&out, "packets_dropped"), 0);
        assert!(f64s(out.table("flows"), "fct").iter().all(|t| t.is_finite()));
        let pfc = out.table("pfc");
        let (Some(Col::Str(names)), Some(Col::Str(peers))) = (pfc.get("node_name"), pfc.get("peer_name")) else { unreachable!() };
        // PAUSE frames the far (right) switch sent over the 400 Gb/s link.
        let sent = u64s(pfc, "pauses_sent");
        (0..sent.len()).filter(|&i| names[i] == "right" && peers[i] == "left").map(|i| sent[i]).sum::<u64>()
    };
    assert!(pauses_over_the_fabric("") > 0, "at 1/8 the fabric link is paused");
    assert_eq!(pauses_over_the_fabric(", per = \"100Gbps\""), 0, "at 1/2 the burst fits");
}
