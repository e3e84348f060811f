//! `dcsim-rs SCENARIO.toml`: run a scenario without Python (for profiling with
//! perf or callgrind) and print its summary as JSON. A `.json` file is read
//! as a resolved scenario (what `dcsim.scenario.resolve` returns).

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 2 {
        eprintln!("usage: dcsim-rs SCENARIO.toml|SCENARIO.json");
        return ExitCode::from(2);
    }
    let text = match std::fs::read_to_string(&args[1]) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", args[1]);
            return ExitCode::from(2);
        }
    };
    let parsed = if args[1].ends_with(".json") { dcsim::Scenario::from_json_str(&text) } else { dcsim::Scenario::from_toml_str(&text) };
    let scenario = match parsed {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match dcsim::run(&scenario, None) {
        Ok(out) => {
            println!("{}", serde_json::Value::Object(out.summary));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e:?}");
            ExitCode::FAILURE
        }
    }
}
