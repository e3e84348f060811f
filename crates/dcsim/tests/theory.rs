//! Checks against theory, each formula written out in its test: line-rate
//! goodput for any MTU and option set, DCTCP's queue band and alpha, NewReno
//! under random loss against Mathis et al., and the incast onset.
//! (Ideal FCT and handshake RTTs are in analytic.rs.)

use dcsim::results::Col;
use dcsim::{run, RunOutput, Scenario};

fn scenario(toml: &str) -> Scenario {
    Scenario::from_toml_str(toml).unwrap_or_else(|e| panic!("bad test scenario: {e}\n{toml}"))
}

fn u32s(t: &dcsim::results::Table, c: &str) -> Vec<u32> {
    match t.get(c) {
        Some(Col::U32(v)) => v.clone(),
        _ => panic!("no u32 column {c}"),
    }
}

#[test]
fn goodput_reaches_line_rate_for_any_mtu_and_option_set() {
    // goodput = C * payload / wire bytes per segment, where
    //   payload = MTU - 20 (IP) - 20 (TCP) - 12 (timestamps, if on)
    //   wire    = MTU + 14 (Ethernet header) + 4 (FCS), + 12 (inter-frame gap)
    //             and + 8 (preamble) with the framings that count them
    for mtu in [576u64, 1500, 9000] {
        for ts in [true, false] {
            for (framing, extra) in [("frame", 0u64), ("ifg", 12), ("preamble_ifg", 20)] {
                let s = scenario(&format!(
                    "[topology]\ntype = \"star\"\nhosts = 2\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n[link]\nmtu = {mtu}\nframing = \"{framing}\"\n[tcp]\ntimestamps = {ts}\nrcv_buffer = \"8MiB\"\n[output]\nqueue_sample_interval = \"0s\"\n[[workload]]\ntype = \"bulk\"\nsrc = 0\ndst = 1\nsize = \"40MB\"\n"
                ));
                let fct = run(&s, None).unwrap().table("flows").f64("fct")[0];
                let payload = (mtu - 40 - if ts { 12 } else { 0 }) as f64;
                let wire = (mtu + 18 + extra) as f64;
                let analytic = 10e9 * payload / wire;
                let goodput = 40e6 * 8.0 / fct;
                let err = (goodput - analytic).abs() / analytic;
                assert!(err < 0.005, "MTU {mtu}, ts {ts}, framing {framing}: {goodput:.4e} vs {analytic:.4e}");
            }
        }
    }
}

fn dctcp_dumbbell(n: u32) -> RunOutput {
    run(
        &scenario(&format!(
            r#"
[run]
duration = "60ms"
[topology]
type = "dumbbell"
senders = {n}
receivers = 1
access_rate = "10Gbps"
access_delay = "2us"
bottleneck_rate = "10Gbps"
bottleneck_delay = "2us"
[switch]
buffer = "1000pkt"
aqm = {{ type = "dctcp", k = "65pkt" }}
[tcp]
cc = "dctcp"
min_rto = "1ms"
[output]
queue_sample_interval = "1us"
tcp_trace = true
[[workload]]
type = "bulk"
src = "0..{n}"
dst = {n}
size = "inf"
"#
        )),
        None,
    )
    .unwrap()
}

#[test]
fn dctcp_queue_oscillates_between_k_plus_n_minus_a_and_k_plus_n() {
    // Alizadeh et al., "Analysis of DCTCP" (SIGMETRICS 2011), N synchronised
    // flows: Q_max = K + N, oscillation amplitude A = 1/2 sqrt(2 N (C*RTT + K))
    // packets. Here C*RTT: 6 links x 2 us plus serialisation, ~13 packets.
    let k = 65.0;
    for n in [2u32, 8] {
        let out = dctcp_dumbbell(n);
        let ports = out.table("ports");
        let (node, peer) = (u32s(ports, "node"), u32s(ports, "peer"));
        let port = (0..node.len()).find(|&i| node[i] == n + 1 && peer[i] == n + 2).unwrap() as u32;
        let q = out.table("queues");
        let (qp, t, pk) = (u32s(q, "port"), q.f64("time"), q.u64("packets"));
        let mut s: Vec<u64> = (0..q.rows()).filter(|&i| qp[i] == port && t[i] > 0.01).map(|i| pk[i]).collect();
        s.sort_unstable();
        let (p1, max) = (s[s.len() / 100] as f64, *s.last().unwrap() as f64);
        let bdp = 10e9 * (12e-6 + 3.0 * 1518.0 * 8.0 / 10e9 + 3.0 * 70.0 * 8.0 / 10e9) / (1518.0 * 8.0);
        let amplitude = 0.5 * (2.0 * n as f64 * (bdp + k)).sqrt();
        let qmax = k + n as f64;
        assert!(max <= qmax + 1.0, "N={n}: max queue {max} above K + N = {qmax}");
        if n == 2 {
            // The synchronised-flow amplitude holds for few flows.
            assert!(p1 >= qmax - amplitude - 2.0, "N={n}: 1st percentile {p1} below K + N - A = {:.1}", qmax - amplitude);
        }
        // Alpha tracks the fraction of marked packets.
        let marked = ports.u64("ecn_marks")[port as usize] as f64 / ports.u64("tx_packets")[port as usize] as f64;
        let tr = out.table("tcp_trace");
        let alphas: Vec<f64> = tr.f64("dctcp_alpha").iter().zip(tr.f64("time")).filter(|(_, &t)| t > 0.01).map(|(a, _)| *a).collect();
        let mean_alpha = alphas.iter().sum::<f64>() / alphas.len() as f64;
        assert!((mean_alpha - marked).abs() / marked < 0.15, "N={n}: mean alpha {mean_alpha:.3} vs marked fraction {marked:.3}");
    }
}

#[test]
fn newreno_under_random_loss_follows_mathis() {
    // Mathis et al. (CCR 1997): throughput = MSS / RTT * sqrt(3 / (2 p)).
    // One flow over two links of 250 us (RTT 1 ms); every frame is lost with
    // probability q on each link, so a data segment is lost with
    // p = 1 - (1 - q)^2. min RTO 5 ms keeps timeouts (outside the model) short.
    for sack in [true, false] {
        for q in [0.001, 0.003, 0.01] {
            let mut total = 0.0;
            for seed in 1..=3 {
                let s = scenario(&format!(
                    "[run]\nduration = \"3s\"\nseed = {seed}\n[topology]\ntype = \"star\"\nhosts = 2\nlink_rate = \"10Gbps\"\nlink_delay = \"250us\"\n[link]\nloss_rate = {q}\n[switch]\nbuffer = \"1000pkt\"\n[tcp]\nsack = {sack}\nmin_rto = \"5ms\"\nrcv_buffer = \"16MiB\"\n[output]\nqueue_sample_interval = \"0s\"\n[[workload]]\ntype = \"bulk\"\nsrc = 0\ndst = 1\nsize = \"inf\"\n"
                ));
                total += run(&s, None).unwrap().table("flows").u64("delivered")[0] as f64 * 8.0 / 3.0;
            }
            let measured = total / 3.0;
            let p: f64 = 1.0 - (1.0 - q) * (1.0 - q);
            let rtt = 1e-3 + 2.0 * 1518.0 * 8.0 / 10e9 + 2.0 * 70.0 * 8.0 / 10e9;
            let mathis = 1448.0 * 8.0 / rtt * (1.5 / p).sqrt();
            let ratio = measured / mathis;
            assert!((0.8..=1.2).contains(&ratio), "sack {sack}, loss {q}: {measured:.3e} vs Mathis {mathis:.3e} (ratio {ratio:.2})");
        }
    }
}

#[test]
fn incast_onset_is_the_analytic_high_water_mark() {
    // N responders answer with k = 10 full segments each, all inside the
    // initial window, so each sends its k frames back to back. The querier
    // sends its N queries one after another, so responder i starts i*d later
    // (d: serialisation of one query frame, 570 B) and the querier's port
    // serves one frame per T (1518 B). The queue peaks at the last arrival:
    //   HWM = N k - (frames served by then) - 1 (the one on the wire)
    //       = (N - 1) k - floor((N - 1) d / T)   waiting frames.
    // A buffer of HWM packets loses nothing; HWM - 1 loses one frame.
    let (t, d, k) = (1_214_400u64, 456_000u64, 10u64); // ps at 10 Gb/s
    for n in [2u64, 4, 8, 16, 32] {
        let incast = |buffer: u64| {
            run(
                &scenario(&format!(
                    "[topology]\ntype = \"star\"\nhosts = {}\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n[switch]\nbuffer = \"{buffer}pkt\"\n[tcp]\nmin_rto = \"1ms\"\n[output]\nqueue_sample_interval = \"0s\"\n[[workload]]\ntype = \"incast\"\nquerier = 0\nresponders = \"1..{}\"\nresponse_size = \"14480B\"\n",
                    n + 1,
                    n + 1
                )),
                None,
            )
            .unwrap()
        };
        let hwm = (n - 1) * k - (n - 1) * d / t;
        let big = incast(100_000);
        assert_eq!(big.table("ports").u64("max_queue_packets")[1], hwm, "N={n}: the port toward the querier (port 1)");
        let drops = |o: &RunOutput| o.table("ports").u64("drops").iter().sum::<u64>();
        assert_eq!(drops(&incast(hwm)), 0, "N={n}: a buffer of HWM = {hwm} is lossless");
        assert_eq!(drops(&incast(hwm - 1)), 1, "N={n}: one packet less loses exactly one frame");
    }
}
