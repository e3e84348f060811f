//! The scenario parser never panics: random JSON trees, random mutations of
//! valid scenarios, and a kept corpus of bad inputs (tests/corpus/*.toml,
//! each naming the key path its error must report) all give Ok or a clear Err.
//! Run it long with `DCSIM_FUZZ_CASES=1000000` (see validation/fuzz.sh).

use dcsim::Scenario;
use proptest::prelude::*;
use serde_json::{json, Value};

const VALID: &str = r#"
[run]
seed = 3
[topology]
type = "dumbbell"
senders = 2
receivers = 1
access_rate = "10Gbps"
access_delay = "2us"
bottleneck_rate = "1Gbps"
bottleneck_delay = "10us"
[switch]
buffer = "64KiB"
aqm = { type = "red", min_th = "10KB", max_th = "30KB" }
[tcp]
cc = "dctcp"
delayed_ack = { enabled = true }
[[workload]]
type = "bulk"
src = "0..2"
dst = 2
size = "1MB"
[[workload]]
type = "incast"
querier = 2
responders = [0, 1]
response_size = "20KB"
"#;

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| json!(i)),
        any::<f64>().prop_map(|f| json!(f)),
        "[a-z0-9_.]{0,12}".prop_map(Value::String),
        prop_oneof![
            Just("10Gbps"), Just("0Gbps"), Just("2us"), Just("-1us"), Just("inf"), Just("100pkt"), Just("0pkt"),
            Just("star"), Just("dumbbell"), Just("incast"), Just("bulk"), Just("red"), Just("dctcp"), Just("0..3"),
            Just("99999999999999999999999Gbps"), Just("1.5ps"), Just("1e9B"), Just("µs")
        ]
        .prop_map(|s| Value::String(s.to_string())),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map(
                prop_oneof![
                    "[a-z_]{1,10}",
                    Just("type".to_string()), Just("topology".to_string()), Just("hosts".to_string()),
                    Just("workload".to_string()), Just("src".to_string()), Just("dst".to_string()),
                    Just("size".to_string()), Just("link_rate".to_string()), Just("link_delay".to_string())
                ],
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn valid_json() -> Value {
    toml::from_str(VALID).unwrap()
}

/// Replace the value at a random path of `v` with `new`.
fn mutate(v: &mut Value, mut pick: u64, new: Value) {
    let mut cur = v;
    loop {
        let n = match cur {
            Value::Object(m) => m.len() as u64,
            Value::Array(a) => a.len() as u64,
            _ => 0,
        };
        if n == 0 || pick.is_multiple_of(5) {
            *cur = new;
            return;
        }
        let i = ((pick / 5) % n) as usize;
        pick /= 7;
        cur = match cur {
            Value::Object(m) => m.values_mut().nth(i).unwrap(),
            Value::Array(a) => &mut a[i],
            _ => unreachable!(),
        };
    }
}

fn cases(default: u32) -> u32 {
    std::env::var("DCSIM_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(2000), ..ProptestConfig::default() })]

    #[test]
    fn random_trees_never_panic(v in arb_json()) {
        if let Err(e) = Scenario::from_json_value(v) {
            prop_assert!(!e.message.is_empty());
        }
    }

    #[test]
    fn mutated_valid_scenarios_never_panic(pick in any::<u64>(), new in arb_json()) {
        let mut v = valid_json();
        mutate(&mut v, pick, new);
        match Scenario::from_json_value(v) {
            Ok(s) => {
                // Whatever validates must also build a network.
                let _ = dcsim::world::World::new(&s);
            }
            Err(e) => prop_assert!(!e.message.is_empty()),
        }
    }

    #[test]
    fn random_text_never_panics(text in "\\PC{0,200}") {
        let _ = Scenario::from_toml_str(&text);
        let _ = Scenario::from_json_str(&text);
    }
}

#[test]
fn the_valid_base_scenario_parses() {
    Scenario::from_toml_str(VALID).unwrap();
}

/// Every file in tests/corpus starts with `# expect: <key path>` and must fail
/// with exactly that path.
#[test]
fn corpus_of_bad_inputs_reports_the_right_key_path() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let expect = text.lines().next().and_then(|l| l.strip_prefix("# expect: ")).unwrap_or_else(|| panic!("{path:?} lacks '# expect: <path>'")).trim();
        let err = Scenario::from_toml_str(&text).expect_err(&format!("{path:?} should be rejected"));
        assert_eq!(err.path, expect, "{path:?}: {err}");
        assert!(err.message.len() > 10, "{path:?}: message too terse: {err}");
        n += 1;
    }
    assert!(n >= 10, "corpus has only {n} files");
}
