//! NDP (Handley et al., SIGCOMM 2017) on whole networks: switches trim
//! instead of dropping, receivers pull at their line rate, so an incast
//! finishes at the receiver link's speed without a timeout, a lone flow
//! meets its ideal, and what trimming cannot save the backstop timer does.

use dcsim::{run, RunOutput, Scenario};

fn scenario(toml: &str) -> Scenario {
    Scenario::from_toml_str(toml).unwrap_or_else(|e| panic!("bad test scenario: {e}"))
}

fn run_toml(toml: &str) -> RunOutput {
    run(&scenario(toml), None).unwrap()
}

/// The paper's fabric (htsim's NDP drivers): a k = 12 fat-tree (432 hosts)
/// of 10 Gb/s links of 1 µs, 9 KB packets, trimming switches with a data
/// queue of 6 frames waiting (htsim's "8 packets" of 9000 B hold 7 with the
/// one on the wire) and room for headers. `extra` is appended.
fn fattree(senders: &str, dst: u32, size: &str, extra: &str) -> String {
    format!(
        r#"
[run]
stop_when_done = true
duration = "1s"
[topology]
type = "fattree"
k = 12
link_rate = "10Gbps"
host_delay = "1us"
edge_agg_delay = "1us"
agg_core_delay = "1us"
[link]
mtu = 9046
[switch]
buffer = "200000B"
scheduler = {{ type = "strict_priority", classes = 2, full = "trim", class_buffer = "6pkt" }}
[[workload]]
type = "bulk"
src = {senders}
dst = {dst}
size = "{size}"
{extra}
"#
    )
}

/// A 9000 B payload in its 9064 B frame, at 10 Gb/s, in seconds.
const FRAME_S: f64 = 9064.0 * 8.0 / 10e9;

#[test]
fn an_incast_finishes_at_the_receivers_line_rate_without_timeouts() {
    // 100 senders of 450 KB (50 packets) into one host, first windows of 23
    // (far above the 6-packet queue): Fig. 16's setup at n = 100.
    let out = run_toml(&fattree("\"332..432\"", 0, "450000B", "[ndp]\niw = 23"));
    let flows = out.table("flows");
    let (end, fct) = (flows.f64("end"), flows.f64("fct"));
    assert!(end.iter().all(|e| e.is_finite()), "every flow completes");
    assert_eq!(flows.u64("timeouts").iter().sum::<u64>(), 0, "trimming loses nothing");
    let trims: u64 = out.table("ports").u64("trims").iter().sum();
    let resent: u64 = flows.u64("retransmits").iter().sum();
    assert!(trims > 1000, "23 x 100 packets into 6 slots: most are trimmed ({trims})");
    assert_eq!(resent, trims, "each trimmed packet is NACKed and sent again once");
    // The receiver's link is the bottleneck: 5,000 frames back to back, plus
    // about one RTT to start. Tolerance 1 %: the pull pacer's spacing is one
    // frame, so any idle slot on the last link shows.
    let optimum = 5000.0 * FRAME_S;
    let last = end.iter().cloned().fold(0.0, f64::max);
    assert!(last >= optimum && last <= 1.01 * optimum, "last completion {last:.6} s, optimum {optimum:.6} s");
    // Pulls are shared round robin: every flow finishes near the end
    // (Fig. 16 plots only min and max, "so close").
    let first = fct.iter().cloned().fold(f64::MAX, f64::min);
    assert!(first >= 0.9 * last, "first {first:.6} s, last {last:.6} s");
}

#[test]
fn a_lone_flow_meets_its_ideal_and_nothing_is_trimmed() {
    // The first window (23 x 9 KB) exceeds the path's BDP (~70 KB), and all
    // links run at one rate: the flow runs at line rate from the start and
    // never queues. Tolerance 2 %: the receiver's pull spacing is one frame
    // time, exactly the line rate, so only the first RTT's handover shows.
    let out = run_toml(&fattree("[431]", 0, "4500000B", "[ndp]\niw = 23"));
    let flows = out.table("flows");
    let slowdown = flows.f64("slowdown")[0];
    assert!((1.0..1.02).contains(&slowdown), "slowdown {slowdown:.4}");
    assert_eq!(out.table("ports").u64("trims").iter().sum::<u64>(), 0);
    assert_eq!(flows.u64("retransmits")[0], 0);
}

#[test]
fn headers_that_find_no_room_go_back_to_their_senders_or_time_out() {
    // A port buffer with room for the data queue and a few headers: in a
    // 200-sender incast headers overflow. Returned to their senders
    // (return-to-sender, as the paper's incasts ran) they are resent on a
    // pull or at once, and nothing times out; dropped (htsim's default),
    // the NACK never comes and only the backstop timer recovers them.
    let small = |bounce: bool| {
        let extra = format!("[ndp]\niw = 10\nrto = \"500us\"\nbounce = {bounce}");
        run_toml(&fattree("\"232..432\"", 0, "90000B", &extra).replace("buffer = \"200000B\"", "buffer = \"60000B\""))
    };
    let (bounced, dropped) = (small(true), small(false));
    for out in [&bounced, &dropped] {
        assert!(out.table("flows").f64("end").iter().all(|e| e.is_finite()), "every flow completes");
    }
    let sum = |out: &RunOutput, t: &str, c: &str| out.table(t).u64(c).iter().sum::<u64>();
    assert!(sum(&bounced, "ports", "bounces") > 0);
    assert_eq!(sum(&bounced, "flows", "timeouts"), 0, "a bounce stands for the lost NACK");
    assert_eq!(sum(&dropped, "ports", "bounces"), 0);
    assert!(sum(&dropped, "ports", "drops") > 0);
    assert!(sum(&dropped, "flows", "timeouts") > 0, "lost headers are recovered by the timer");
}

#[test]
fn trimming_changes_nothing_for_tcp() {
    // `full = "trim"` trims NDP data only: a TCP run gives the same bytes
    // as with "drop_arrival" (the trim check is the only difference).
    let tcp = |full: &str| {
        let s = fattree("\"424..432\"", 0, "200000B", "")
            .replace("full = \"trim\"", &format!("full = \"{full}\""))
            .replace("mtu = 9046", "mtu = 1500")
            .replace("buffer = \"200000B\"", "buffer = \"60000B\"");
        let out = run_toml(&format!("{s}\n[tcp]\nmin_rto = \"1ms\""));
        let ports = out.table("ports");
        let fct: Vec<u64> = out.table("flows").f64("fct").iter().map(|t| t.to_bits()).collect();
        assert!(out.table("flows").f64("fct").iter().all(|t| t.is_finite()));
        (fct, ports.u64("drops").to_vec(), ports.u64("tx_bytes").to_vec())
    };
    let (trim, drop) = (tcp("trim"), tcp("drop_arrival"));
    assert!(trim.1.iter().sum::<u64>() > 0, "the incast overflows the buffer");
    assert_eq!(trim, drop);
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let toml = fattree("\"380..432\"", 0, "450000B", "[ndp]\niw = 23\npaths = 8");
    let (a, b) = (run_toml(&toml), run_toml(&toml));
    assert_eq!(a.table("flows").f64("fct"), b.table("flows").f64("fct"));
    assert_eq!(a.table("ports").u64("trims"), b.table("ports").u64("trims"));
}

#[test]
fn bad_ndp_settings_name_their_key() {
    let bad = |extra: &str, key: &str| {
        let e = Scenario::from_toml_str(&fattree("[0]", 1, "1000B", extra)).err().unwrap_or_else(|| panic!("accepted {extra:?}")).to_string();
        assert!(e.contains(key), "{extra:?}: {e}");
    };
    bad("[ndp]\niw = 0", "ndp.iw");
    bad("[ndp]\npull_rate = 1.5", "ndp.pull_rate");
    bad("[ndp]\npayload = \"9100B\"", "ndp.payload");
    bad("[ndp]\npaths = 0", "ndp.paths");
    bad("[ndp]\n[host]\ntsq = \"100KB\"", "host.tsq");
    let no_cap = fattree("[0]", 1, "1000B", "[ndp]").replace(", class_buffer = \"6pkt\"", "");
    let e = Scenario::from_toml_str(&no_cap).err().unwrap().to_string();
    assert!(e.contains("switch.scheduler.full"), "{e}");
}
