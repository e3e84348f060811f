//! RDMA (RoCEv2-style queue pairs) end to end: a lone flow at line rate,
//! go-back-N through losses, DCQCN sharing a bottleneck and sparing PFC.

use dcsim::results::Col;
use dcsim::{run, RunOutput, Scenario};

fn scenario(toml: &str) -> Scenario {
    Scenario::from_toml_str(toml).unwrap_or_else(|e| panic!("bad test scenario: {e}\n{toml}"))
}

fn dsts(out: &RunOutput) -> Vec<u32> {
    match out.table("flows").get("dst") {
        Some(Col::U32(v)) => v.clone(),
        _ => unreachable!(),
    }
}

#[test]
fn a_lone_flow_runs_at_line_rate() {
    let out = run(
        &scenario(
            r#"
[topology]
type = "star"
hosts = 2
link_rate = "100Gbps"
link_delay = "1us"
[rdma]
cc = { type = "none" }
[[workload]]
type = "bulk"
src = 0
dst = 1
size = "1MB"
"#,
        ),
        None,
    )
    .unwrap();
    let flows = out.table("flows");
    let (fct, ideal) = (flows.f64("fct")[0], flows.f64("ideal_fct")[0]);
    // 1000 packets of 1062 B at 100 Gb/s (84.96 us), two hops of 1 us and
    // one store-and-forward: the ideal, met to the picosecond.
    assert!((ideal - (1000.0 * 1062.0 * 8.0 / 100e9 + 2e-6 + 1062.0 * 8.0 / 100e9)).abs() < 1e-12, "{ideal}");
    assert!((fct - ideal).abs() < 1e-11, "fct {fct} ideal {ideal}");
    assert_eq!(flows.u64("retransmits")[0], 0);
    // One ACK per packet: 1000 data packets and 1000 ACKs.
    assert_eq!(out.summary["packets_created"].as_u64().unwrap(), 2000);
}

#[test]
fn sender_completion_adds_the_last_acks_way_back() {
    let toml = |completion: &str| {
        format!("[topology]\ntype = \"star\"\nhosts = 2\nlink_rate = \"100Gbps\"\nlink_delay = \"1us\"\n[rdma]\ncc = {{ type = \"none\" }}\ncompletion = \"{completion}\"\n[[workload]]\ntype = \"bulk\"\nsrc = 0\ndst = 1\nsize = \"1MB\"\n")
    };
    let recv = run(&scenario(&toml("receiver")), None).unwrap();
    let send = run(&scenario(&toml("sender")), None).unwrap();
    let (fr, fs) = (recv.table("flows").f64("fct")[0], send.table("flows").f64("fct")[0]);
    // The 66 B ACK crosses two 1 us hops, stored and forwarded: 2 us + 2 x 5.28 ns.
    let back = 2e-6 + 2.0 * 66.0 * 8.0 / 100e9;
    assert!((fs - fr - back).abs() < 1e-11, "{fs} - {fr}");
    assert!((send.table("flows").f64("ideal_fct")[0] - fs).abs() < 1e-11, "alone: the ideal to the picosecond");
}

const INCAST: &str = r#"
[run]
duration = "200ms"
[topology]
type = "star"
hosts = 9
link_rate = "40Gbps"
link_delay = "1us"
[switch]
buffer = "200pkt"
"#;

fn incast(extra: &str, size: &str) -> RunOutput {
    let toml = format!("{INCAST}{extra}\n[[workload]]\ntype = \"bulk\"\nsrc = \"0..8\"\ndst = 8\nsize = \"{size}\"\n");
    run(&scenario(&toml), None).unwrap()
}

#[test]
fn go_back_n_recovers_an_incast_without_pfc() {
    let out = incast("[rdma]\ncc = { type = \"none\" }", "4MB");
    let flows = out.table("flows");
    assert!(flows.f64("fct").iter().all(|t| t.is_finite()), "every flow completes");
    assert!(out.summary["packets_dropped"].as_u64().unwrap() > 0, "line-rate senders overflow the port");
    assert!(flows.u64("retransmits").iter().sum::<u64>() > 0);
}

#[test]
fn with_pfc_the_incast_is_lossless_and_without_cc_it_pauses_a_lot() {
    let out = incast("[switch.pfc]\nxoff = \"100KB\"\n[rdma]\ncc = { type = \"none\" }", "4MB");
    assert_eq!(out.summary["packets_dropped"].as_u64().unwrap(), 0);
    let flows = out.table("flows");
    assert_eq!(flows.u64("retransmits").iter().sum::<u64>(), 0);
    assert!(flows.f64("fct").iter().all(|t| t.is_finite()));
    assert!(out.table("pfc").u64("pauses_sent").iter().sum::<u64>() > 10);
}

const DCQCN_MARKING: &str = r#"
[switch.aqm]
type = "red"
min_th = "5KB"
max_th = "200KB"
max_p = 0.01
weight = 1.0
gentle = false
spacing = "independent"
"#;

#[test]
fn dcqcn_shares_the_bottleneck_and_spares_pfc() {
    let none = incast("[switch.pfc]\nxoff = \"100KB\"\n[rdma]\ncc = { type = \"none\" }", "4MB");
    let dcqcn = incast(&format!("{DCQCN_MARKING}[switch.pfc]\nxoff = \"100KB\"\n[rdma]\n"), "4MB");
    let pauses = |o: &RunOutput| o.table("pfc").u64("pauses_sent").iter().sum::<u64>();
    assert!(pauses(&dcqcn) * 4 < pauses(&none), "DCQCN {} pauses against {} without", pauses(&dcqcn), pauses(&none));
    assert!(dcqcn.table("flows").u64("ecn_reductions").iter().all(|&c| c > 0), "every sender cut its rate");
    // Longer flows: DCQCN shares the port fairly and keeps it busy (after
    // its start-up, where line-rate senders trigger PFC).
    let long = incast(&format!("{DCQCN_MARKING}[switch.pfc]\nxoff = \"100KB\"\n[rdma]\n"), "40MB");
    let fct = long.table("flows").f64("fct");
    let (lo, hi) = fct.iter().fold((f64::MAX, 0f64), |(a, b), &t| (a.min(t), b.max(t)));
    assert!(lo > 0.85 * hi, "FCTs {lo} .. {hi}");
    let goodput = 8.0 * 40e6 * 8.0 / hi;
    assert!(goodput > 0.85 * 40e9 * 1000.0 / 1062.0, "{goodput} b/s of payload");
    assert_eq!(dsts(&long), [8; 8]);
}

/// Per-flow FCT spread and the port's payload goodput of the 8 x 40 MB incast.
fn spread_and_goodput(out: &RunOutput) -> (f64, f64) {
    let fct = out.table("flows").f64("fct");
    let (lo, hi) = fct.iter().fold((f64::MAX, 0f64), |(a, b), &t| (a.min(t), b.max(t)));
    (lo / hi, 8.0 * 40e6 * 8.0 / hi)
}

#[test]
fn hpcc_keeps_the_queue_near_empty_at_eta() {
    let out = incast("[switch.pfc]\nxoff = \"100KB\"\n[rdma]\ncc = { type = \"hpcc\" }\n[output]\nqueue_sample_interval = \"10us\"\nqueue_sample_ports = [17]", "40MB");
    assert_eq!(out.table("pfc").u64("pauses_sent").iter().sum::<u64>(), 0, "no PFC at all");
    let q = out.table("queues").u64("bytes");
    let mut sorted = q.to_vec();
    sorted.sort_unstable();
    let p99 = sorted[sorted.len() * 99 / 100];
    assert!(p99 < 10_000, "99th percentile queue {p99} B: a few packets");
    let (spread, goodput) = spread_and_goodput(&out);
    assert!(spread > 0.75, "{spread}");
    // Data frames carry 42 B of INT: 1104 B for 1000 B of payload. HPCC aims at eta = 95 %.
    let capacity = 40e9 * 1000.0 / 1104.0;
    assert!(goodput > 0.88 * capacity && goodput < capacity, "{goodput} of {capacity}");
}

#[test]
fn timely_reacts_to_rtt_and_spares_pfc() {
    let none = incast("[switch.pfc]\nxoff = \"100KB\"\n[rdma]\ncc = { type = \"none\" }", "4MB");
    let timely = incast("[switch.pfc]\nxoff = \"100KB\"\n[rdma]\ncc = { type = \"timely\" }", "4MB");
    let pauses = |o: &RunOutput| o.table("pfc").u64("pauses_sent").iter().sum::<u64>();
    assert!(pauses(&timely) * 10 < pauses(&none), "TIMELY {} pauses against {}", pauses(&timely), pauses(&none));
    let flows = timely.table("flows");
    assert!(flows.f64("fct").iter().all(|t| t.is_finite()));
    assert!(flows.u64("ecn_reductions").iter().all(|&c| c > 0), "every sender cut its rate on RTT");
}

#[test]
fn irn_resends_only_what_was_lost_and_bdp_fc_prevents_the_losses() {
    // One 10 MB flow over a link that loses 1 frame in 1000: go-back-N
    // resends everything after each loss, IRN about the lost packets only.
    let lossy = |recovery: &str| {
        let toml = format!(
            "[topology]\ntype = \"star\"\nhosts = 2\nlink_rate = \"100Gbps\"\nlink_delay = \"1us\"\n[link]\nloss_rate = 0.001\n[rdma]\ncc = {{ type = \"none\" }}\nrecovery = {{ type = \"{recovery}\" }}\n[[workload]]\ntype = \"bulk\"\nsrc = 0\ndst = 1\nsize = \"10MB\"\n"
        );
        run(&scenario(&toml), None).unwrap()
    };
    let (gbn, irn) = (lossy("go_back_n"), lossy("irn"));
    let retx = |o: &RunOutput| o.table("flows").u64("retransmits")[0];
    let fct = |o: &RunOutput| o.table("flows").f64("fct")[0];
    let lost = irn.summary["packets_dropped"].as_u64().unwrap();
    assert!(lost > 5, "{lost} frames lost");
    // Lost ACKs and NAKs are counted too, so a retransmission per lost frame is an upper bound.
    assert!(retx(&irn) <= lost, "IRN resent {} for {lost} losses", retx(&irn));
    assert!(retx(&irn) * 5 < retx(&gbn), "IRN {} against go-back-N {}", retx(&irn), retx(&gbn));
    assert!(fct(&irn) < fct(&gbn), "{} vs {}", fct(&irn), fct(&gbn));
    // BDP-FC: eight line-rate senders hold at most eight BDPs (8 x ~25 KB),
    // which the 200-packet port absorbs: no loss at all, and line rate.
    let fc = incast("[rdma]\ncc = { type = \"none\" }\nrecovery = { type = \"irn\" }", "4MB");
    assert_eq!(fc.summary["packets_dropped"].as_u64().unwrap(), 0);
    let last = fc.table("flows").f64("fct").iter().cloned().fold(0.0, f64::max);
    assert!(last < 1.02 * 8.0 * 4e6 * 1062.0 * 8.0 / 1000.0 / 40e9, "{last}");
}

#[test]
fn rdma_dctcp_keeps_the_queue_at_k() {
    // 8 x 40 MB into one 40 Gb/s port, marked at K = 40 KB: DCTCP's cuts
    // hold the queue near K, below PFC's XOFF, and share the port; the
    // window (rate x base RTT) keeps each flow's cut from overshooting.
    let dctcp = |window: bool| {
        incast(
            &format!("[switch.aqm]\ntype = \"dctcp\"\nk = \"40KB\"\nat = \"dequeue\"\n[switch.pfc]\nxoff = \"200KB\"\n[rdma]\nwindow = {window}\ncc = {{ type = \"dctcp\" }}\n[output]\nqueue_sample_interval = \"10us\"\nqueue_sample_ports = [17]"),
            "40MB",
        )
    };
    let queue = |out: &RunOutput| {
        let mut q = out.table("queues").u64("bytes").to_vec();
        q.sort_unstable();
        (q[q.len() / 2], q[q.len() * 99 / 100])
    };
    let out = dctcp(true);
    let flows = out.table("flows");
    assert!(flows.u64("ecn_reductions").iter().all(|&c| c > 10), "every sender cut on echoed marks");
    let (median, p99) = queue(&out);
    assert!(median > 20_000 && median < 60_000, "median queue {median} B near K = 40 KB");
    assert!(p99 < 100_000, "99th percentile queue {p99} B below XOFF");
    let (spread, goodput) = spread_and_goodput(&out);
    assert!(spread > 0.8, "{spread}");
    assert!(goodput > 0.9 * 40e9 * 1000.0 / 1062.0, "{goodput} b/s of payload");
    let (_, p99_without) = queue(&dctcp(false));
    assert!(p99_without > 2 * p99, "without the window the queue's tail is longer: {p99_without} against {p99}");
}
