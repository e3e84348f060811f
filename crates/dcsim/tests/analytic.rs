//! Scenario tests against closed-form results: line-rate goodput, a lone
//! flow's completion time, handshake RTTs, and a lossless incast.

use dcsim::packet::{flags, Packet};
use dcsim::world::World;
use dcsim::{run, Scenario};
use dcsim_engine::{Dur, Rate};

fn scenario(toml: &str) -> Scenario {
    Scenario::from_toml_str(toml).unwrap_or_else(|e| panic!("bad test scenario: {e}"))
}

fn ns(d: Dur) -> f64 {
    d.ps() as f64 / 1000.0
}

/// Frame sizes as the wire sees them with timestamps on (Linux option layout):
/// SYN = 14 + 20 + 20 + 20 (MSS, SACKOK+TS, WS) + 4 = 78 B; pure ACK = 70 B;
/// data = 14 + 20 + 32 + payload + 4.
const SYN: u64 = 78;
const ACK: u64 = 70;
fn data_frame(payload: u64) -> u64 {
    14 + 20 + 32 + payload + 4
}

#[test]
fn frame_constants_match_the_packet_model() {
    let syn = Packet { flags: flags::SYN, has_ts: true, syn_sack_perm: true, syn_wscale: dcsim::packet::WScale::new(Some(5)), ..Default::default() };
    assert_eq!(syn.frame_len(), SYN);
    assert_eq!(Packet { flags: flags::ACK, has_ts: true, ..Default::default() }.frame_len(), ACK);
    assert_eq!(Packet { flags: flags::ACK, has_ts: true, payload: 1448, ..Default::default() }.frame_len(), data_frame(1448));
}

#[test]
fn one_flow_reaches_line_rate_goodput() {
    // 50 MB over one 10 Gb/s hop pair. The analytic goodput with MTU 1500 and
    // timestamps is C * 1448 / 1518 (payload / Ethernet frame incl. FCS),
    // 9.5389 Gb/s; slow start and the handshake cost a few RTTs of ~8 us.
    let s = scenario(
        r#"
[topology]
type = "star"
hosts = 2
link_rate = "10Gbps"
link_delay = "2us"
[tcp]
rcv_buffer = "4MiB"
[[workload]]
type = "bulk"
src = 0
dst = 1
size = "50MB"
"#,
    );
    let out = run(&s, None).unwrap();
    let f = out.table("flows");
    let fct = f.f64("fct")[0];
    let goodput = 50e6 * 8.0 / fct;
    let analytic = 10e9 * 1448.0 / 1518.0;
    let err = (goodput - analytic).abs() / analytic;
    assert!(err < 0.005, "goodput {goodput:.4e} vs analytic {analytic:.4e} ({:.3}%)", err * 100.0);
    // With preamble and IFG on the wire the ceiling is C * 1448 / 1538.
    let s2 = scenario(&format!("{}\n[link]\nframing = \"preamble_ifg\"\n", s_text_star_50mb()));
    let fct2 = run(&s2, None).unwrap().table("flows").f64("fct")[0];
    let analytic2 = 10e9 * 1448.0 / 1538.0;
    let err2 = (50e6 * 8.0 / fct2 - analytic2).abs() / analytic2;
    assert!(err2 < 0.005, "with preamble+IFG: {:.3}%", err2 * 100.0);
}

fn s_text_star_50mb() -> &'static str {
    r#"
[topology]
type = "star"
hosts = 2
link_rate = "10Gbps"
link_delay = "2us"
[tcp]
rcv_buffer = "4MiB"
[[workload]]
type = "bulk"
src = 0
dst = 1
size = "50MB"
"#
}

#[test]
fn lone_flow_fct_is_handshake_plus_serialisation_plus_propagation() {
    // Star, two 10 Gb/s hops of 2 us, forwarding latency 300 ns. The flow fits
    // in the initial window (10 segments), so nothing waits for an ACK:
    //   handshake = 2 * [2 * ser(SYN) + 2 * 2 us + 300 ns]
    //   data: the client's pure ACK leaves first, then the frames back to
    //         back. Store-and-forward: a short last frame can catch up with
    //         the full frame ahead of it and wait at the switch, so the
    //         switch finishes it at max(its arrival, previous departure) + ser.
    // With link.framing = "ifg" a frame starts no sooner than 12 B (9.6 ns)
    // after the end of the one before it; a frame on an idle link is not delayed.
    let ser = |b: u64| Rate::from_gbps(10).tx_time(b);
    let prop = Dur::from_us(2);
    let fwd = Dur::from_ns(300);
    for (framing, gap) in [("frame", Dur::ZERO), ("ifg", Dur(9600))] {
    for (bytes, full, last) in [(14480u64, 10u64, 0u64), (1448, 1, 0), (5000, 3, 656), (1, 0, 1)] {
        let s = scenario(&format!(
            r#"
[topology]
type = "star"
hosts = 3
link_rate = "10Gbps"
link_delay = "2us"
[link]
framing = "{framing}"
[switch]
forwarding_latency = "300ns"
[[workload]]
type = "bulk"
src = 2
dst = 0
size = "{bytes}B"
"#
        ));
        let handshake = (ser(SYN) + ser(SYN) + prop + prop + fwd) + (ser(SYN) + ser(SYN) + prop + prop + fwd);
        // Departure times (after the handshake) at the NIC and at the switch.
        let mut nic_done = ser(ACK);
        let mut switch_done = nic_done + prop + fwd + ser(ACK);
        let mut frames = vec![data_frame(1448); full as usize];
        if last > 0 {
            frames.push(data_frame(last));
        }
        for &f in &frames {
            nic_done += gap + ser(f);
            switch_done = (nic_done + prop + fwd).max(switch_done + gap) + ser(f);
        }
        let expected = handshake + switch_done + prop;
        let out = run(&s, None).unwrap();
        let f = out.table("flows");
        let fct_ps = (f.f64("fct")[0] * 1e12).round() as u64;
        assert_eq!(fct_ps, expected.ps(), "{framing}, {bytes} B: fct {} ns, analytic {} ns", fct_ps as f64 / 1e3, ns(expected));
        // The reported ideal FCT is the same formula.
        let ideal_ps = (f.f64("ideal_fct")[0] * 1e12).round() as u64;
        assert_eq!(ideal_ps, expected.ps(), "{framing}, {bytes} B");
        assert!((f.f64("slowdown")[0] - 1.0).abs() < 1e-9);
    }
    }
}

#[test]
fn handshake_rtt_on_a_star_matches_table5_conditions() {
    // Seed 004 Table 5: 5 ns port-to-port forwarding, 3.45 ns/m media, 25 m /
    // 5 m / 50 cm links, 10/100/400 Gb/s. The handshake RTT is
    //   4 * ser(SYN frame) + 4 * propagation + 2 * forwarding.
    for (meters_x100, rate_g) in [(2500u64, 10u64), (2500, 100), (2500, 400), (500, 10), (500, 100), (500, 400), (50, 10), (50, 100), (50, 400)] {
        let prop = Dur(meters_x100 * 3450 / 100); // ps: 3.45 ns/m = 3450 ps/m
        let s = scenario(&format!(
            r#"
[topology]
type = "star"
hosts = 2
link_rate = "{rate_g}Gbps"
link_delay = "{}ps"
[switch]
forwarding_latency = "5ns"
[tcp]
rtt_clock = "ticks"
rtt_granularity = "1ps"
[[workload]]
type = "bulk"
src = 1
dst = 0
size = "1B"
"#,
            prop.ps()
        ));
        let ser = Rate::from_gbps(rate_g).tx_time(SYN);
        let expected = Dur(4 * ser.ps() + 4 * prop.ps() + 2 * 5000);
        let mut w = World::new(&s);
        w.run(None).unwrap();
        let client = &w.endpoints()[0];
        let rtt = client.established_at.unwrap().ps();
        assert_eq!(rtt, expected.ps(), "{} m at {rate_g}G", meters_x100 as f64 / 100.0);
        // With a 1 ps clock the first RTT sample is the handshake RTT exactly.
        assert_eq!(client.rtt.latest, expected);
    }
}

#[test]
fn lossless_incast_completes_at_the_analytic_time() {
    // 2 responders x 100 KB to one querier over 10 Gb/s, thesis-like links
    // (134 ns, 4 us forwarding), large buffer. After the 500 B query reaches
    // the responders, the querier's link is the bottleneck and never idles:
    //   T = query transfer + first response frame to the switch + all
    //       response frames serialised on the querier link + propagation.
    let s = scenario(
        r#"
[topology]
type = "star"
hosts = 3
link_rate = "10Gbps"
link_delay = "134ns"
[switch]
forwarding_latency = "4us"
buffer = "1000pkt"
[tcp]
min_rto = "0s"
[[workload]]
type = "incast"
querier = 0
responders = [1, 2]
query_size = "500B"
response_size = "100KB"
rounds = 1
"#,
    );
    let out = run(&s, None).unwrap();
    let ports = out.table("ports");
    assert_eq!(ports.u64("drops").iter().sum::<u64>(), 0);
    let q = out.table("queries");
    assert_eq!(q.rows(), 1);
    let measured = q.f64("completion_time")[0];
    let ser = |b: u64| Rate::from_gbps(10).tx_time(b).as_secs_f64();
    let (prop, fwd) = (134e-9, 4e-6);
    let query = ser(data_frame(500)) + prop + fwd + ser(data_frame(500)) + prop;
    // 100000 B = 69 full segments + 88 B per responder.
    let frames = 2.0 * (69.0 * ser(data_frame(1448)) + ser(data_frame(88)));
    let analytic = query + ser(data_frame(1448)) + prop + fwd + frames + prop;
    let err = (measured - analytic).abs() / analytic;
    assert!(err < 0.01, "incast completion {measured:.9} s vs analytic {analytic:.9} s ({:.2}%)", err * 100.0);
}
