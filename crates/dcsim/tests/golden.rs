//! Golden tests: small scenarios whose results are pinned in tests/golden/.
//! A change in any number must be explained in the commit that changes it.
//! Regenerate with `DCSIM_BLESS=1 cargo test --test golden`.

use dcsim::results::Col;
use dcsim::{run, Scenario};
use serde_json::{json, Value};

const CASES: &[(&str, &str)] = &[
    (
        "star_dctcp_incast",
        r#"
[run]
duration = "20ms"
[topology]
type = "star"
hosts = 8
link_rate = "10Gbps"
link_delay = "2us"
[switch]
forwarding_latency = "500ns"
buffer = "60pkt"
aqm = { type = "dctcp", k = "20pkt" }
[tcp]
cc = "dctcp"
min_rto = "1ms"
rtt_granularity = "1us"
[output]
queue_sample_interval = "0s"
[[workload]]
type = "bulk"
src = [1, 2]
dst = 0
size = "inf"
[[workload]]
type = "incast"
querier = 0
responders = "3..8"
response_size = "40KB"
rounds = 20
start = "1ms"
"#,
    ),
    (
        "dumbbell_reno_red_sack_off",
        r#"
[run]
seed = 11
[topology]
type = "dumbbell"
senders = 4
receivers = 2
access_rate = "10Gbps"
access_delay = "1us"
bottleneck_rate = "1Gbps"
bottleneck_delay = "10us"
[switch]
buffer = "40pkt"
aqm = { type = "red", min_th = "5pkt", max_th = "15pkt", max_p = 0.1, weight = 0.05, action = "drop" }
[tcp]
sack = false
timestamps = false
min_rto = "2ms"
delayed_ack = { enabled = true, count = 2, timeout = "500us" }
[output]
queue_sample_interval = "0s"
[[workload]]
type = "bulk"
src = "0..4"
dst = [4, 5]
size = "300KB"
stagger = "50us"
"#,
    ),
];

fn digest(text: &str) -> Value {
    let s = Scenario::from_toml_str(text).unwrap();
    let out = run(&s, None).unwrap();
    let ps = |v: &[f64]| -> Vec<Value> { v.iter().map(|x| if x.is_nan() { Value::Null } else { json!((x * 1e12).round() as i64) }).collect() };
    let flows = out.table("flows");
    let queries = out.table("queries");
    let ports = out.table("ports");
    let sum = |t: &dcsim::results::Table, c: &str| match t.get(c).unwrap() {
        Col::U64(v) => v.iter().sum::<u64>(),
        _ => unreachable!(),
    };
    let summary = &out.summary;
    json!({
        "events": summary["events"],
        "packets_created": summary["packets_created"],
        "packets_dropped": summary["packets_dropped"],
        "sim_ps": (summary["sim_seconds"].as_f64().unwrap() * 1e12).round() as i64,
        "flows_fct_ps": ps(flows.f64("fct")),
        "flows_delivered": flows.u64("delivered"),
        "retransmits": sum(flows, "retransmits"),
        "timeouts": sum(flows, "timeouts"),
        "queries_completion_ps": ps(queries.f64("completion_time")),
        "port_drops": ports.u64("drops"),
        "port_marks": ports.u64("ecn_marks"),
    })
}

#[test]
fn golden_summaries_are_unchanged() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let bless = std::env::var("DCSIM_BLESS").is_ok();
    for (name, text) in CASES {
        let got = digest(text);
        let path = dir.join(format!("{name}.json"));
        if bless {
            let pinned = json!({ "scenario": text, "result": got });
            std::fs::write(&path, serde_json::to_string_pretty(&pinned).unwrap() + "\n").unwrap();
            continue;
        }
        let pinned: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("missing {path:?}; run with DCSIM_BLESS=1"))).unwrap();
        assert_eq!(pinned["scenario"].as_str().unwrap(), *text, "{name}: the scenario changed; re-bless");
        assert_eq!(pinned["result"], got, "{name}: results changed; explain why in the commit and re-bless");
    }
}
