//! PyO3 bindings: conversions, error mapping and GIL release only. No model
//! logic lives here.

use dcsim::results::Col;
use dcsim::world::{Progress, RunError};
use dcsim::Scenario;
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::sync::atomic::Ordering;
use std::sync::Arc;

create_exception!(_core, ScenarioError, PyValueError, "A scenario was rejected before running.");
create_exception!(_core, Cancelled, PyRuntimeError, "A run was cancelled.");

/// A ScenarioError whose str() is "key.path: message", with the key path and
/// the message also as attributes.
fn parse(py: Python<'_>, scenario_json: &str) -> PyResult<Scenario> {
    Scenario::from_json_str(scenario_json).map_err(|e| {
        let err = ScenarioError::new_err(e.to_string());
        let value = err.value(py);
        let _ = value.setattr("path", e.path.as_str());
        let _ = value.setattr("message", e.message.as_str());
        err
    })
}

/// The PGO profile this extension was built with (`pip install .`,
/// backend/dcsim_build.py), or None for a plain build: benchmark provenance.
#[pyfunction]
fn build_profile() -> Option<&'static str> {
    option_env!("DCSIM_PGO_PROFILE")
}

/// The dcsim version of the compiled core.
#[pyfunction]
fn version() -> &'static str {
    dcsim::VERSION
}

/// Validate a scenario (JSON text). Returns (resolved scenario JSON, hash).
#[pyfunction]
fn validate(py: Python<'_>, scenario_json: &str) -> PyResult<(String, String)> {
    let s = parse(py, scenario_json)?;
    Ok((s.resolved_json(), s.hash()))
}

/// Sizes from an empirical CDF (points [bytes, probability]) with the
/// simulator's sampler: (mean of `n` random draws, mean of the quantiles at
/// the `n` stratified points (i + 0.5) / n, mean of the linear CDF).
#[pyfunction]
fn cdf_sample_means(points: Vec<[f64; 2]>, n: u64, seed: u64) -> (f64, f64, f64) {
    let dist = dcsim::traffic::SizeDist::new(&points);
    let mut rng = dcsim::traffic::Rng::from_seed_u64(seed);
    let n = n.max(1);
    let random: f64 = (0..n).map(|_| dist.sample(&mut rng) as f64).sum();
    let strata: f64 = (0..n).map(|i| dist.quantile((i as f64 + 0.5) / n as f64) as f64).sum();
    (random / n as f64, strata / n as f64, dist.mean())
}

/// One simulation run. Create it, then call `run()` (from any thread: it
/// releases the GIL); `progress()` and `cancel()` may be called meanwhile.
#[pyclass(frozen)]
struct Simulation {
    scenario: Scenario,
    progress: Arc<Progress>,
}

fn column<'py>(py: Python<'py>, c: &Col) -> PyResult<(&'static str, Bound<'py, PyAny>)> {
    fn bytes_of<'py, T: Copy>(py: Python<'py>, v: &[T], to_le: impl Fn(T) -> Vec<u8>) -> Bound<'py, PyAny> {
        let mut buf = Vec::with_capacity(std::mem::size_of_val(v));
        for &x in v {
            buf.extend_from_slice(&to_le(x));
        }
        PyBytes::new(py, &buf).into_any()
    }
    Ok(match c {
        Col::F64(v) => ("f64", bytes_of(py, v, |x| x.to_le_bytes().to_vec())),
        Col::I64(v) => ("i64", bytes_of(py, v, |x| x.to_le_bytes().to_vec())),
        Col::U64(v) => ("u64", bytes_of(py, v, |x| x.to_le_bytes().to_vec())),
        Col::U32(v) => ("u32", bytes_of(py, v, |x| x.to_le_bytes().to_vec())),
        Col::Str(v) => ("str", PyList::new(py, v)?.into_any()),
    })
}

#[pymethods]
impl Simulation {
    #[new]
    fn new(py: Python<'_>, scenario_json: &str) -> PyResult<Self> {
        Ok(Simulation { scenario: parse(py, scenario_json)?, progress: Arc::new(Progress::default()) })
    }

    #[getter]
    fn resolved_json(&self) -> String {
        self.scenario.resolved_json()
    }

    #[getter]
    fn scenario_hash(&self) -> String {
        self.scenario.hash()
    }

    /// Simulated end time in seconds, if the scenario sets a duration.
    #[getter]
    fn duration_s(&self) -> Option<f64> {
        self.scenario.run.duration.map(|d| d.0.as_secs_f64())
    }

    /// Run to completion without holding the GIL. Returns
    /// {"summary": json text, "tables": {name: [(column, dtype, data)]},
    /// "pcaps": {name: pcap file bytes}}.
    /// With `threads`, a canonical-order scenario runs split over that
    /// many threads (the same results for every count).
    #[pyo3(signature = (threads=None))]
    fn run<'py>(&self, py: Python<'py>, threads: Option<usize>) -> PyResult<Bound<'py, PyDict>> {
        let scenario = &self.scenario;
        let progress = &*self.progress;
        let out = py
            .detach(|| match threads {
                None => dcsim::run(scenario, Some(progress)),
                Some(n) => dcsim::world::run_threads(scenario, n, Some(progress)),
            })
            .map_err(|e| match e {
                RunError::Cancelled => Cancelled::new_err("the run was cancelled"),
                RunError::Unsupported(why) => ScenarioError::new_err(why),
            })?;
        let result = PyDict::new(py);
        result.set_item("summary", serde_json::Value::Object(out.summary).to_string())?;
        let tables = PyDict::new(py);
        for t in &out.tables {
            let cols = PyList::empty(py);
            for (name, c) in &t.columns {
                let (dtype, data) = column(py, c)?;
                cols.append((name.as_str(), dtype, data))?;
            }
            tables.set_item(t.name.as_str(), cols)?;
        }
        result.set_item("tables", tables)?;
        let pcaps = PyDict::new(py);
        for (name, bytes) in &out.pcaps {
            pcaps.set_item(name.as_str(), PyBytes::new(py, bytes))?;
        }
        result.set_item("pcaps", pcaps)?;
        Ok(result)
    }

    /// (simulated seconds, events executed, fraction done in [0, 1]).
    fn progress(&self) -> (f64, u64, f64) {
        let p = &self.progress;
        (p.now_ps.load(Ordering::Relaxed) as f64 * 1e-12, p.events.load(Ordering::Relaxed), p.fraction())
    }

    /// Ask a running `run()` to stop; it raises `Cancelled`.
    fn cancel(&self) {
        self.progress.cancel.store(true, Ordering::Relaxed);
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(build_profile, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(cdf_sample_means, m)?)?;
    m.add_class::<Simulation>()?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("Cancelled", m.py().get_type::<Cancelled>())?;
    Ok(())
}
