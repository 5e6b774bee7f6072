//! `blksim._blksim`: the extension module under the Python package
//! (`python/blksim/`). It is thin: each function hands its arguments to
//! `blksim_cli::api` — the same steps and texts as the `blksim` command — with
//! the GIL released while the model runs, and turns the model's errors into
//! the package's exceptions by kind. Everything shaped for Python users
//! (DataFrames, the `Result` object, plots) is in the Python layer.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use blksim::ErrorKind;
use blksim_cli::api;
use blksim_cli::sweep::SweepSpec;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(_blksim, BlksimError, PyException, "An error of blksim; its message is the command's.");
create_exception!(
    _blksim,
    BadInput,
    BlksimError,
    "The input is wrong: a job file, an option, a knob, a profile (the command's exit status 2)."
);
create_exception!(
    _blksim,
    NotModelled,
    BlksimError,
    "The input is valid but needs a mechanism blksim does not model yet (the command's exit status 2)."
);
create_exception!(
    _blksim,
    InternalError,
    BlksimError,
    "A failure of blksim itself: a stall, a broken invariant, a panic (the command's exit status 70)."
);

/// The model's error as the package's exception of its kind.
fn raise(e: blksim::Error) -> PyErr {
    match e.kind {
        ErrorKind::BadInput => BadInput::new_err(e.message),
        ErrorKind::NotModelled => NotModelled::new_err(e.message),
        ErrorKind::Internal => InternalError::new_err(e.message),
    }
}

/// `model`, for a run that looks at `stop`: the run goes on in a thread of its own while this
/// one, every 50 ms, looks at Python's signals with the GIL; on Ctrl-C (or any signal handler
/// raising) it sets `stop`, waits for the run to stop at its next look (about a millisecond of
/// wall time) and raises what the handler raised (KeyboardInterrupt).
fn interruptible<T: Send>(
    py: Python<'_>,
    stop: Arc<AtomicBool>,
    f: impl FnOnce() -> Result<T, blksim::Error> + Send,
) -> PyResult<T> {
    std::thread::scope(|s| {
        let (tx, mut rx) = mpsc::channel();
        s.spawn(move || {
            let _ = tx.send(catch_unwind(AssertUnwindSafe(f)));
        });
        loop {
            // The receiver goes into the GIL-free wait and comes back out (it is not Sync).
            let (got, back) = py.allow_threads(move || (rx.recv_timeout(Duration::from_millis(50)), rx));
            rx = back;
            match got {
                Ok(result) => return settle(result),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if let Err(e) = py.check_signals() {
                        stop.store(true, Ordering::Relaxed);
                        let _ = py.allow_threads(move || rx.recv());
                        return Err(e);
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(InternalError::new_err("internal error: the run's thread ended without a result"))
                }
            }
        }
    })
}

/// A run's outcome: its value, its error as the package's exception, a panic as InternalError.
fn settle<T>(result: std::thread::Result<Result<T, blksim::Error>>) -> PyResult<T> {
    result
        .unwrap_or_else(|p| {
            let what = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(blksim::Error::internal(format!(
                "internal error (a bug; please report it with the job and call): {what}"
            )))
        })
        .map_err(raise)
}

/// Run `f` without the GIL; a panic is blksim's failure, never the caller's input.
fn model<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T, blksim::Error> + Send) -> PyResult<T> {
    settle(py.allow_threads(|| catch_unwind(AssertUnwindSafe(f))))
}

/// What `run` returns.
type RunTuple = (String, String, Vec<String>, Vec<(usize, &'static str, u64)>, Vec<LogTuple>, Vec<StateTuple>);

/// A verify state file: (its name, its bytes).
type StateTuple = (String, std::borrow::Cow<'static, [u8]>);

/// One of fio's log files: (the path fio writes it to, its text, whether fio appends to it, its columns).
type LogTuple = (String, String, bool, Vec<&'static str>);

/// A fio log's text (lines of comma-separated integers) as columns: (rows, each column's
/// values as little-endian i64 bytes), for Arrow arrays over those bytes (`Result.logs`: no
/// text parsed in Python). None when a field is not an integer (`log_prio=1`'s `0x0000`)
/// or the lines differ in their number of fields: the caller parses the text itself.
#[pyfunction]
fn log_columns(py: Python<'_>, text: &str) -> Option<(usize, Vec<std::borrow::Cow<'static, [u8]>>)> {
    py.allow_threads(|| {
        let (rows, cols) = parse_int_rows(text.as_bytes())?;
        Some((rows, cols.into_iter().map(std::borrow::Cow::Owned).collect()))
    })
}

/// Lines of comma-separated integers (spaces around them allowed) as columns of
/// little-endian i64 bytes, and the number of lines; None for anything else.
fn parse_int_rows(text: &[u8]) -> Option<(usize, Vec<Vec<u8>>)> {
    let mut cols: Vec<Vec<u8>> = Vec::new();
    let (mut rows, mut k) = (0usize, 0usize);
    let (mut v, mut neg, mut digits) = (0i64, false, 0u32);
    let end_field = |cols: &mut Vec<Vec<u8>>, k: &mut usize, v: &mut i64, neg: &mut bool, digits: &mut u32, rows| {
        if *digits == 0 {
            return None;
        }
        let x = if *neg { -*v } else { *v };
        if rows == 0 {
            cols.push(Vec::with_capacity(text.len() / 4));
        }
        cols.get_mut(*k)?.extend_from_slice(&x.to_le_bytes());
        (*k, *v, *neg, *digits) = (*k + 1, 0, false, 0);
        Some(())
    };
    for &b in text {
        match b {
            b'0'..=b'9' => {
                v = v.checked_mul(10)?.checked_add((b - b'0') as i64)?;
                digits += 1;
            }
            b'-' if digits == 0 && !neg => neg = true,
            b' ' | b'\t' | b'\r' => {}
            b',' => end_field(&mut cols, &mut k, &mut v, &mut neg, &mut digits, rows)?,
            b'\n' => {
                if k == 0 && digits == 0 {
                    continue; // an empty line
                }
                end_field(&mut cols, &mut k, &mut v, &mut neg, &mut digits, rows)?;
                if k != cols.len() {
                    return None;
                }
                (rows, k) = (rows + 1, 0);
            }
            _ => return None,
        }
    }
    if k > 0 || digits > 0 {
        end_field(&mut cols, &mut k, &mut v, &mut neg, &mut digits, rows)?;
        if k != cols.len() {
            return None;
        }
        rows += 1;
    }
    Some((rows, cols))
}

/// Run one fio job file (`path`) or job text (`text`, errors name it `name`) on a machine.
/// Returns (fio's JSON text, `json+`'s with `json_plus`; fio's normal report; warnings; each CPU's
/// busy time by stage as (CPU, stage, ns); fio's log files as (path, text, append, columns); verify state files as (name, bytes)). The Python layer's `blksim.run`
/// is the documented entry point.
#[pyfunction]
#[pyo3(signature = (*, text=None, path=None, name="<python>".to_string(), machine=None, cmdline=Vec::new(),
    sets=Vec::new(), patches=Vec::new(), at=Vec::new(), seed=1, json_plus=false, sections=Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    text: Option<String>,
    path: Option<String>,
    name: String,
    machine: Option<String>,
    cmdline: Vec<String>,
    sets: Vec<String>,
    patches: Vec<String>,
    at: Vec<String>,
    seed: u64,
    json_plus: bool,
    sections: Vec<String>,
) -> PyResult<RunTuple> {
    let job = match (text, path) {
        (Some(t), None) => api::job_text(&name, &t),
        (None, Some(p)) => api::job_file(p),
        _ => return Err(BadInput::new_err("give the job as text or as a path, one of the two")),
    };
    let stop = Arc::new(AtomicBool::new(false));
    let stop_flag = Some(stop.clone());
    let req = api::RunRequest { job, machine, cmdline, sets, patches, at, seed, json_plus, sections, stop: stop_flag };
    let out = interruptible(py, stop, || api::run(&req))?;
    let logs = out.logs.into_iter().map(|l| (l.path.display().to_string(), l.text, l.append, l.columns)).collect();
    let states = out.verify_states.into_iter().map(|(name, bytes)| (name, std::borrow::Cow::Owned(bytes))).collect();
    Ok((out.json, out.normal, out.warnings, out.cpu_stages, logs, states))
}

/// fio's terse lines of a run (`--output-format=terse`, `--terse-version`) from its JSON document.
#[pyfunction]
#[pyo3(signature = (json, version=3))]
fn terse(json: &str, version: u32) -> PyResult<String> {
    let versions = blksim_fio::output::TERSE_VERSIONS;
    if !versions.contains(&version) {
        return Err(BadInput::new_err(format!("terse version {version}: expected one of {versions:?}")));
    }
    Ok(blksim_fio::output::write_terse(json, version))
}

/// `blksim machines`: the built-in machines, one line each.
#[pyfunction]
fn machines(py: Python<'_>) -> PyResult<String> {
    model(py, api::machines)
}

/// One machine (a built-in name or a profile file) as the JSON of a run's `blksim.machine`.
#[pyfunction]
fn machine(py: Python<'_>, name: String) -> PyResult<String> {
    model(py, || api::machine(&name).map(|v| v.to_string()))
}

/// `blksim options`: (name, alias, syntax, table, status, why) for every fio option blksim knows.
#[pyfunction]
fn options() -> Vec<(String, String, String, String, String, String)> {
    blksim_cli::fio_options::option_records().into_iter().map(|[a, b, c, d, e, f]| (a, b, c, d, e, f)).collect()
}

/// `blksim t-io_uring ARGS`: (t/io_uring's lines, its maximum IOPS, warnings).
#[pyfunction]
#[pyo3(signature = (args, *, machine=None, cmdline=Vec::new(), sets=Vec::new(), patches=Vec::new(), seed=1))]
fn t_io_uring(
    py: Python<'_>,
    args: Vec<String>,
    machine: Option<String>,
    cmdline: Vec<String>,
    sets: Vec<String>,
    patches: Vec<String>,
    seed: u64,
) -> PyResult<(String, f64, Vec<String>)> {
    let stop = Arc::new(AtomicBool::new(false));
    let watch = Some(stop.clone());
    let out =
        interruptible(py, stop, || api::t_io_uring(&args, machine.as_deref(), &cmdline, &sets, &patches, seed, watch))?;
    Ok((out.text, out.iops, out.warnings))
}

/// `blksim reproduce --format json`: the experiments named (all when none) compared with the
/// published numbers, as JSON text.
#[pyfunction]
#[pyo3(signature = (names=Vec::new(), *, dir=None, seed=None, threads=0))]
fn reproduce(
    py: Python<'_>,
    names: Vec<String>,
    dir: Option<String>,
    seed: Option<u64>,
    threads: usize,
) -> PyResult<String> {
    model(py, || api::reproduce(&names, dir.as_deref(), seed, threads).map(|v| v.to_string()))
}

/// A sweep spec (`blksim sweep`'s TOML): its row columns and its number of points.
#[pyfunction]
fn sweep_spec(py: Python<'_>, path: String) -> PyResult<(Vec<String>, usize, Vec<String>)> {
    model(py, || {
        let spec = SweepSpec::load(Path::new(&path))?;
        let metrics = SweepSpec::metrics().iter().map(|m| m.to_string()).collect();
        Ok((spec.columns(), spec.points(), metrics))
    })
}

/// Point `i`'s resume key ("" when the point cannot be prepared).
#[pyfunction]
fn sweep_key(py: Python<'_>, path: String, i: usize) -> PyResult<String> {
    model(py, || Ok(SweepSpec::load(Path::new(&path))?.key(i)))
}

/// Run point `i` of the sweep: its row's fields, as `sweep_spec`'s columns (a failed point: empty
/// metrics and its error).
#[pyfunction]
fn sweep_point(py: Python<'_>, path: String, i: usize) -> PyResult<Vec<String>> {
    model(py, || SweepSpec::load(Path::new(&path))?.run_point(i))
}

#[pymodule]
fn _blksim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(terse, m)?)?;
    m.add_function(wrap_pyfunction!(log_columns, m)?)?;
    m.add_function(wrap_pyfunction!(machines, m)?)?;
    m.add_function(wrap_pyfunction!(machine, m)?)?;
    m.add_function(wrap_pyfunction!(options, m)?)?;
    m.add_function(wrap_pyfunction!(t_io_uring, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_spec, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_key, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_point, m)?)?;
    let py = m.py();
    m.add("BlksimError", py.get_type::<BlksimError>())?;
    m.add("BadInput", py.get_type::<BadInput>())?;
    m.add("NotModelled", py.get_type::<NotModelled>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
