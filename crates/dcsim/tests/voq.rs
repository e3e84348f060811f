//! The VOQ switch in the thesis' incast (seed 004 §5.3.1-5.3.3, Table 4):
//! two responders return 200 kB in all at 10 Gb/s through a switch with
//! 256-byte cells, 24 egress cells and a 4 us backplane. The thesis found
//! 199 ingress cells to be the least without loss, one fewer to cost a tail
//! loss and an RTO, and 179 to lose more but recover by SACK.

use dcsim::{run, RunOutput, Scenario};

/// The thesis' incast; `tcp` adds lines to the [tcp] table.
fn incast_with(ingress_cells: u32, admission: &str, tcp: &str) -> RunOutput {
    two_responders(ingress_cells, admission, "100KB", "", tcp)
}

/// Two responders of `response` bytes each; `link` and `tcp` add lines to
/// those tables.
fn two_responders(ingress_cells: u32, admission: &str, response: &str, link: &str, tcp: &str) -> RunOutput {
    let s = Scenario::from_toml_str(&format!(
        r#"
[topology]
type = "star"
hosts = 3
link_rate = "10Gbps"
link_delay = "134ns"
[link]
{link}
[switch]
voq = {{ ingress_cells = {ingress_cells}, egress_cells = 24, cell_bytes = "256B", backplane_latency = "4us", admission = "{admission}" }}
[tcp]
min_rto = "0s"
rtt_clock = "ticks"
rto_formula = "bsd"
rtt_granularity = "1ms"
{tcp}
[output]
queue_sample_interval = "100ns"
[[workload]]
type = "incast"
querier = 0
responders = [1, 2]
query_size = "500B"
response_size = "{response}"
start = "1ms"
"#
    ))
    .unwrap();
    run(&s, None).unwrap()
}

fn incast(ingress_cells: u32, admission: &str) -> RunOutput {
    incast_with(ingress_cells, admission, "")
}

fn drops(out: &RunOutput) -> u64 {
    out.table("ports").u64("ingress_drops").iter().sum()
}

fn timeouts(out: &RunOutput) -> u64 {
    out.table("queries").u64("timeouts")[0]
}

/// A flows-table column summed over the flows.
fn flows_sum(out: &RunOutput, col: &str) -> u64 {
    out.table("flows").u64(col).iter().sum()
}

fn completion(out: &RunOutput) -> f64 {
    out.table("queries").f64("completion_time")[0]
}

#[test]
fn the_oracle_switch_needs_199_cells_to_avoid_loss_as_in_the_thesis() {
    let fits = incast(199, "oracle");
    assert_eq!((drops(&fits), timeouts(&fits)), (0, 0));
    let tail = incast(198, "oracle");
    assert_eq!((drops(&tail), timeouts(&tail)), (1, 1), "one cell fewer: a tail loss that only the RTO recovers");
    let sack = incast(179, "oracle");
    assert!(drops(&sack) > 1 && timeouts(&sack) == 0, "179 cells: losses that SACK recovers ({} drops)", drops(&sack));
}

#[test]
fn buffers_hold_their_cells() {
    for admission in ["oracle", "cellcredit"] {
        let out = incast(199, admission);
        let voq = out.table("voq");
        assert!(voq.rows() > 0);
        assert!(voq.u64("cells").iter().all(|&c| c <= 199), "{admission}: an ingress buffer above its cells");
        // The switch's egress queues (a star's odd ports) never hold more than
        // their 24 cells: four full-sized frames.
        let max = out.table("ports").u64("max_queue_bytes");
        assert!(max.iter().skip(1).step_by(2).all(|&b| b <= 4 * 1518), "{admission}: egress queue above 24 cells: {max:?}");
        assert_eq!(out.table("ports").u64("drops").iter().sum::<u64>(), 0, "a VOQ switch drops only at ingress");
    }
}

/// `responders` x `bytes` through a deep VOQ switch (no loss), with ARREAR:
/// its microsecond RTOs fire spuriously while the queue grows (§6.3.2).
/// `syn_data` junk bytes ride on the SYNs (§6.3.3); `undo` is a [tcp] line
/// choosing how spurious timeouts are undone.
fn deep_incast(responders: u32, bytes: u32, cells: u32, undo: &str, syn_data: u32) -> RunOutput {
    let s = Scenario::from_toml_str(&format!(
        r#"
[topology]
type = "star"
hosts = {}
link_rate = "10Gbps"
link_delay = "134ns"
[switch]
voq = {{ ingress_cells = {cells} }}
[tcp]
min_rto = "0s"
rtt_clock = "ticks"
rto_formula = "bsd"
arrear = {{ clock = "1ns", syn_data = "{syn_data}B" }}
{undo}
[output]
queue_sample_interval = "0s"
[[workload]]
type = "incast"
querier = 0
responders = "1..{}"
query_size = "500B"
response_size = "{bytes}B"
"#,
        responders + 1,
        responders + 1
    ))
    .unwrap();
    run(&s, None).unwrap()
}

#[test]
fn frto_detects_spurious_timeouts_and_undoes_them() {
    let plain = deep_incast(32, 200_000, 1524, "", 0);
    let frto = deep_incast(32, 200_000, 1524, "frto = true", 0);
    assert_eq!(drops(&plain), 0, "no loss: every timeout is spurious");
    assert!(flows_sum(&plain, "timeouts") > 0 && flows_sum(&plain, "retransmits") > 2 * flows_sum(&plain, "timeouts"), "go-back-N resends whole windows");
    // With F-RTO each spurious timeout costs one retransmission and is undone.
    assert_eq!(flows_sum(&frto, "spurious_timeouts"), flows_sum(&frto, "timeouts"));
    assert_eq!(flows_sum(&frto, "retransmits"), flows_sum(&frto, "timeouts"));
    assert!(completion(&frto) < completion(&plain));
}

/// Seed 004 §6.3.2: FreeBSD undoes a timeout only if the next new ACK comes
/// back within SRTT/2 of it; "other scenarios examined were not so lucky".
#[test]
fn bad_rexmit_undo_rescues_only_the_timeouts_whose_ack_returns_within_half_an_srtt() {
    let plain = deep_incast(32, 200_000, 1524, "", 0);
    let bsd = deep_incast(32, 200_000, 1524, "bad_rexmit_undo = true", 0);
    let frto = deep_incast(32, 200_000, 1524, "frto = true", 0);
    assert_eq!(flows_sum(&bsd, "timeouts"), flows_sum(&plain, "timeouts"));
    let undone = flows_sum(&bsd, "spurious_timeouts");
    assert!(undone > 0 && undone < flows_sum(&bsd, "timeouts"), "some timeouts undone, not all: {undone} of {}", flows_sum(&bsd, "timeouts"));
    assert!(flows_sum(&frto, "retransmits") < flows_sum(&bsd, "retransmits") && flows_sum(&bsd, "retransmits") < flows_sum(&plain, "retransmits"));
    assert!(completion(&frto) < completion(&bsd) && completion(&bsd) < completion(&plain));
}

#[test]
fn bad_rexmit_undo_leaves_a_one_segment_tail_loss_as_it_was() {
    // The retransmission's ACK returns inside SRTT/2 (SRTT is 1 ms under the
    // 1 ms clock), so FreeBSD calls the timeout needless; with nothing else
    // lost that changes nothing.
    genuine_tail_loss_timeout_stands("bad_rexmit_undo = true");
}

#[test]
fn frto_leaves_a_genuine_tail_loss_timeout_alone() {
    let frto = genuine_tail_loss_timeout_stands("frto = true");
    assert_eq!(flows_sum(&frto, "spurious_timeouts"), 0);
}

/// 198 cells: one tail loss that only the RTO recovers; `undo` must not
/// change the transaction.
fn genuine_tail_loss_timeout_stands(undo: &str) -> RunOutput {
    let (plain, with) = (incast_with(198, "oracle", ""), incast_with(198, "oracle", undo));
    assert_eq!(timeouts(&with), 1);
    assert_eq!(plain.table("queries").f64("completion_time"), with.table("queries").f64("completion_time"));
    with
}

/// Seed 004 Fig. 24b (footnote 12): 2 responders x 56,482 B, 48 cells, the
/// thesis' TCP. Both lose their tail; the second responder its last two
/// segments. The timeout resends the first of them and its ACK returns
/// within SRTT/2, so the undo resumes sending at snd_max and the last
/// segment waits for a second timeout: "2 non-parallel RTOs".
#[test]
fn bad_rexmit_undo_makes_a_two_segment_tail_loss_cost_two_timeouts() {
    let case_b = |undo: bool| {
        let tcp = format!(
            "nagle = false\nbad_rexmit_undo = {undo}\nrto_forgets_sack = true\nack_before_app = true\ndetect_lost_retransmits = false\nrcv_buffer = \"1MiB\""
        );
        two_responders(48, "oracle", "56482B", "framing = \"ifg\"", &tcp)
    };
    let (plain, bsd) = (case_b(false), case_b(true));
    assert_eq!(timeouts(&plain), 2, "one timeout each, in parallel");
    assert_eq!(timeouts(&bsd), 3, "the second responder times out twice");
    let extra = completion(&bsd) - completion(&plain);
    assert!((extra - 1e-3).abs() < 20e-6, "a second 1 ms timeout: {extra}");
}

/// Seed 004 §6.3.3: junk data on the SYN puts a full frame's serialisation
/// into the handshake's RTT sample, and the initial RTO no longer fires
/// while the initial windows queue.
#[test]
fn arrear_data_on_syn_measures_a_full_frame_and_avoids_spurious_timeouts() {
    let (plain, padded) = (deep_incast(32, 20_000, 1524, "frto = true", 0), deep_incast(32, 20_000, 1524, "frto = true", 1440));
    let timeouts = |out: &RunOutput| flows_sum(out, "timeouts");
    let min_rtt_ns = |out: &RunOutput| out.table("flows").f64("min_rtt").iter().fold(f64::MAX, |a, &b| a.min(b)) * 1e9;
    // The smallest responder sample (the other SYN-ACKs queue behind it):
    // SYN-ACK out, ACK back, two hops each way with a 4 us backplane, on a
    // 1 ns clock: 78 B or 1518 B, then 70 B.
    let path = 4.0 * 134.0 + 2.0 * 4000.0;
    assert!((min_rtt_ns(&plain) - (path + 2.0 * (78.0 + 70.0) * 0.8)).abs() <= 1.0, "{}", min_rtt_ns(&plain));
    assert!((min_rtt_ns(&padded) - (path + 2.0 * (1518.0 + 70.0) * 0.8)).abs() <= 1.0, "{}", min_rtt_ns(&padded));
    assert!(timeouts(&plain) >= 20 && timeouts(&padded) * 4 <= timeouts(&plain), "{} -> {}", timeouts(&plain), timeouts(&padded));
}
