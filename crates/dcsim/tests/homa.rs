//! Homa (Montazeri et al., SIGCOMM 2018) on whole networks: a lone message
//! meets its ideal, an incast keeps the receiver's link busy with a bounded
//! queue, and priorities let short messages pass long ones.

use dcsim::{run, RunOutput, Scenario};

fn run_toml(toml: &str) -> RunOutput {
    let s = Scenario::from_toml_str(toml).unwrap_or_else(|e| panic!("bad test scenario: {e}"));
    run(&s, None).unwrap()
}

/// The simulator's fabric, two racks of it: 16 hosts per leaf at 10 Gb/s,
/// 40 Gb/s uplinks, 0.25 µs per switch, preamble and gap on the wire,
/// eight strict priorities with room never to drop. `extra` is appended.
fn leafspine(homa: &str, scheduler: &str, extra: &str) -> String {
    format!(
        r#"
[run]
stop_when_done = true
duration = "1s"
[topology]
type = "leafspine"
leaves = 2
spines = 2
hosts_per_leaf = 16
host_rate = "10Gbps"
uplink_rate = "40Gbps"
host_delay = "0.75us"
uplink_delay = "0us"
leaf_latency = "0.25us"
spine_latency = "0.25us"
[link]
mtu = 1500
framing = "preamble_ifg"
[switch]
buffer = "50MB"
{scheduler}
[homa]
{homa}
{extra}
"#
    )
}

const PRIORITIES: &str = r#"scheduler = { type = "strict_priority", classes = 8 }"#;

fn bulk(src: &str, dst: u32, size: &str, start: &str) -> String {
    format!("[[workload]]\ntype = \"bulk\"\nsrc = {src}\ndst = {dst}\nsize = \"{size}\"\nstart = \"{start}\"\n")
}

/// A 1,538-B frame (1,456 B scheduled) at 10 Gb/s, in seconds.
const FRAME_S: f64 = 1538.0 * 8.0 / 10e9;

#[test]
fn a_lone_message_across_racks_meets_its_ideal() {
    // RTTbytes (10,000 B) covers the path's bandwidth-delay product (about
    // 9,700 B): the grants keep the sender busy from its first packet.
    let out = run_toml(&leafspine("sched_priorities = 7", PRIORITIES, &bulk("1", 17, "1MB", "0s")));
    let slowdown = out.table("flows").f64("slowdown")[0];
    assert!((1.0..1.001).contains(&slowdown), "slowdown {slowdown:.5}");
    // Below the BDP the sender waits for grants: a negative control.
    let out = run_toml(&leafspine("sched_priorities = 7\nrtt_bytes = \"4000B\"", PRIORITIES, &bulk("1", 17, "1MB", "0s")));
    let slowdown = out.table("flows").f64("slowdown")[0];
    assert!(slowdown > 1.5, "a 4,000-B window on a ~9,700-B path: slowdown {slowdown:.3}");
}

#[test]
fn an_incast_keeps_the_receivers_link_busy_in_shortest_first_order() {
    // 15 senders of 500 KB (with distinct sizes so SRPT has an order) into
    // host 0: its link carries every frame back to back after the first
    // arrival; the queue stays near overcommit x RTTbytes; no drops.
    let mut w = String::new();
    for s in 1..16u32 {
        w += &bulk(&s.to_string(), 0, &format!("{}B", 400_000 + 10_000 * s), "0s");
    }
    let out = run_toml(&leafspine("sched_priorities = 7", PRIORITIES, &w));
    let flows = out.table("flows");
    let (end, bytes) = (flows.f64("end"), flows.u64("delivered"));
    let frames: f64 = bytes.iter().map(|&b| (b as f64 / 1456.0).ceil()).sum();
    let last = end.iter().cloned().fold(0.0, f64::max);
    // Tolerance 1 %: the first unscheduled packet's way in (about 3 µs) and
    // the shorter unscheduled frames' headers.
    assert!(last >= 0.99 * frames * FRAME_S && last <= 1.01 * frames * FRAME_S, "last {last:.6} s, {frames} frames need {:.6} s", frames * FRAME_S);
    let ports = out.table("ports");
    assert_eq!(ports.u64("drops").iter().sum::<u64>(), 0);
    let peak = ports.u64("max_queue_bytes").iter().cloned().max().unwrap();
    assert!(peak <= 16 * 10_000, "15 unscheduled windows and 7 granted ones at most: {peak} B");
    // Shortest first: completions in the order of size, up to the seven
    // granted at once.
    let mut order: Vec<usize> = (0..15).collect();
    order.sort_by(|&a, &b| end[a].total_cmp(&end[b]));
    let out_of_order = order.windows(2).filter(|w| bytes[w[0]] > bytes[w[1]]).count();
    assert!(out_of_order <= 3, "completion order by size {order:?}");
}

#[test]
fn short_messages_pass_a_long_one_only_with_priorities() {
    // A 5-MB message from host 1 to host 0, and 40 messages of 3 KB from
    // hosts 2..17 to host 0 while it runs. With eight priority levels the
    // short ones wait for at most a frame per hop; with one FIFO they wait
    // behind the long message's queue (up to RTTbytes).
    let mut w = bulk("1", 0, "5MB", "0s");
    for k in 0..40u32 {
        w += &bulk(&(2 + k % 16).to_string(), 0, "3000B", &format!("{}us", 100 + 50 * k));
    }
    let p99 = |scheduler: &str| {
        let out = run_toml(&leafspine("sched_priorities = 7", scheduler, &w));
        let flows = out.table("flows");
        let mut sd: Vec<f64> = flows.f64("slowdown")[1..].to_vec();
        sd.sort_by(f64::total_cmp);
        sd[sd.len() * 99 / 100]
    };
    let (prio, fifo) = (p99(PRIORITIES), p99(""));
    assert!(prio < 1.6, "with priorities: p99 slowdown {prio:.3}");
    assert!(fifo > 1.5 * prio, "one FIFO: {fifo:.3} against {prio:.3}");
}

#[test]
fn homa_is_repeatable() {
    let w = "[[workload]]\ntype = \"poisson\"\nsize = { cdf = \"x\", points = [[100, 0.5], [100, 0.5], [50000, 1.0]] }\nload = 0.5\nload_reference = \"host\"\npattern = \"all_to_all\"\nstop = \"1ms\"\n";
    let a = run_toml(&leafspine("sched_priorities = 4", PRIORITIES, w));
    let b = run_toml(&leafspine("sched_priorities = 4", PRIORITIES, w));
    assert_eq!(a.table("flows").f64("end"), b.table("flows").f64("end"));
    assert!(a.table("flows").f64("end").len() > 100);
}
