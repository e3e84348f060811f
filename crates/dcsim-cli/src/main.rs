//! `dcsim-rs SCENARIO.toml [--threads N]`: run a scenario without Python
//! (for profiling with perf or callgrind) and print its summary as JSON. A
//! `.json` file is read as a resolved scenario (what
//! `dcsim.scenario.resolve` returns). `--threads` splits a run with
//! `run.event_order = "canonical"` over N threads.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let threads = match args.get(2).map(String::as_str) {
        None if args.len() == 2 => None,
        Some("--threads") if args.len() == 4 => match args[3].parse::<usize>() {
            Ok(n) => Some(n),
            Err(_) => {
                eprintln!("error: --threads: {:?} is not a whole number (allowed 1..=64)", args[3]);
                return ExitCode::from(2);
            }
        },
        _ => {
            eprintln!("usage: dcsim-rs SCENARIO.toml|SCENARIO.json [--threads N]");
            return ExitCode::from(2);
        }
    };
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
    let result = match threads {
        None => dcsim::run(&scenario, None),
        Some(n) => dcsim::world::run_threads(&scenario, n, None),
    };
    match result {
        Err(dcsim::world::RunError::Unsupported(why)) => {
            eprintln!("error: {why}");
            ExitCode::from(2)
        }
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
