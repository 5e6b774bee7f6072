//! `blksim run` as a library call, for the Python package (`crates/blksim-py`):
//! the same steps as the command — the machine and its knobs, fio's parse of
//! the job, the model's check, the simulation, the invariants — and the same
//! texts as `--output-format json` and `normal`, without the terminal (no
//! progress bar, no files written, nothing printed: warnings and fio's log
//! files are returned).
//! Errors keep their kind (bad input, not modelled, internal), which the
//! Python package turns into its exceptions.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use blksim::Error;
use blksim_fio::job::{parse_job_sources, JobSource, ParseContext};
use blksim_fio::output::{write_json, write_normal, LogFile, LogWriter};

use crate::commands::{load_machine, locate_error, machine_settings, run_json_extra, DEFAULT_MACHINE};

/// What to run: `blksim run`'s inputs.
#[derive(Clone, Debug)]
pub struct RunRequest {
    /// The fio job: a file, or its text with the name errors give it.
    pub job: JobSource,
    /// A built-in machine or a profile file; `None`: the CLI's default.
    pub machine: Option<String>,
    /// `--cmdline` strings (kernel parameters).
    pub cmdline: Vec<String>,
    /// `--set PATH=VALUE` sysfs writes.
    pub sets: Vec<String>,
    /// `--patch NAME`s.
    pub patches: Vec<String>,
    /// `--at TIME:PATH=VALUE` timed writes.
    pub at: Vec<String>,
    pub seed: u64,
    /// `json+` rather than `json`: the latency histograms' buckets too.
    pub json_plus: bool,
    /// `--section NAME`s: only these job sections of the job file (empty: all).
    pub sections: Vec<String>,
    /// Set from outside to stop the run at its current virtual time (the caller's Ctrl-C).
    pub stop: Option<Arc<AtomicBool>>,
}

/// What a run gives.
#[derive(Clone, Debug)]
pub struct RunOutput {
    /// `--output-format json`'s document, or `json+`'s (its `blksim` object included).
    pub json: String,
    /// `--output-format normal`'s report.
    pub normal: String,
    /// What the command would print as `blksim: warning: ...` (options without effect, idle patches).
    pub warnings: Vec<String>,
    /// Each CPU's busy time by stage of the I/O path (`--breakdown`'s stages), the non-zero ones:
    /// (CPU, stage, ns).
    pub cpu_stages: Vec<(usize, &'static str, u64)>,
    /// fio's log files the jobs ask for (`write_lat_log`, `write_bw_log`, `write_iolog`...), in
    /// memory: the path fio would write each to (relative to the working directory), its text,
    /// its columns. Nothing is written.
    pub logs: Vec<LogFile>,
    /// The verify state files fio writes at the end of a job that writes and verifies
    /// (`verify_state_save`): file name, bytes. Nothing is written.
    pub verify_states: Vec<(String, Vec<u8>)>,
}

/// Run `req` as `blksim run` would.
pub fn run(req: &RunRequest) -> Result<RunOutput, Error> {
    let timed = req.at.iter().map(|a| blksim::settings::parse_timed_write(a)).collect::<Result<Vec<_>, _>>()?;
    let (machine, settings) =
        machine_settings(req.machine.as_deref().unwrap_or(DEFAULT_MACHINE), &req.cmdline, &req.sets, &req.patches)?;
    let mut ctx = ParseContext::for_machine(&machine, std::env::vars().collect::<BTreeMap<_, _>>());
    ctx.sections = req.sections.clone();
    let jobs = parse_job_sources(std::slice::from_ref(&req.job), &ctx).map_err(|e| Error::bad_input(e.to_string()))?;
    let mut warnings: Vec<String> = jobs.warnings.iter().map(ToString::to_string).collect();
    let configs: Vec<_> = jobs.jobs.iter().map(|j| j.config.clone()).collect();
    let wall = Instant::now();
    let prepared = blksim::prepare(&machine, &settings, &configs, req.seed).map_err(|e| locate_error(&jobs, e))?;
    // fio's logs, made as the run goes (as the command makes them), kept in memory.
    let logs = jobs.jobs.iter().any(|j| j.logs.any()).then(|| Arc::new(Mutex::new(LogWriter::in_memory(&jobs))));
    let options = blksim::RunOptions {
        timed,
        stop: req.stop.clone(),
        io_log: logs.clone().map(|w| blksim::stats::IoLogSink(w)),
        ..Default::default()
    };
    let (report, inv) = prepared.run(&options).map_err(|e| locate_error(&jobs, e))?;
    drop(options);
    crate::invariants::check(&report, &inv).map_err(|f| Error::internal(f.message))?;
    warnings.extend(blksim::idle_patches(&settings, &report));
    let extra = run_json_extra(&machine, &settings, &report, wall.elapsed().as_nanos() as u64);
    let cpu_stages = report
        .cpu_stage_ns
        .iter()
        .enumerate()
        .flat_map(|(cpu, ns)| {
            blksim::stats::CpuStage::ALL.iter().zip(ns).filter(|(_, &n)| n > 0).map(move |(s, &n)| (cpu, s.name(), n))
        })
        .collect();
    let logs = match logs.map(Arc::try_unwrap) {
        Some(Ok(w)) => {
            w.into_inner().map_err(|_| Error::internal("fio's logs: a writer panicked"))?.finish_into(&report)
        }
        Some(Err(_)) => return Err(Error::internal("fio's logs: still held after the run")),
        None => Ok(Vec::new()),
    }
    .map_err(|(path, e)| Error::internal(format!("log {}: {e}", path.display())))?;
    let verify_states = crate::commands::verify_state_files(&report, &jobs);
    let stops = crate::commands::verify_stop_lines(&report) + &blksim_fio::output::job_error_lines(&report);
    warnings.extend(stops.lines().map(String::from));
    Ok(RunOutput {
        logs,
        verify_states,
        json: write_json(&report, &jobs, req.json_plus, extra),
        normal: stops + &write_normal(&report, &jobs),
        warnings,
        cpu_stages,
    })
}

/// What `blksim t-io_uring` gives.
#[derive(Clone, Debug)]
pub struct TIoUringOutput {
    /// t/io_uring's lines, as the command prints them.
    pub text: String,
    /// Its `Maximum IOPS`, unrounded.
    pub iops: f64,
    /// What the command would print as notes and warnings.
    pub warnings: Vec<String>,
}

/// `blksim t-io_uring ARGS` on a machine: `args` are t/io_uring's own (`-d128 -b512 -p0 /dev/nvme0n1`).
pub fn t_io_uring(
    args: &[String],
    machine: Option<&str>,
    cmdline: &[String],
    sets: &[String],
    patches: &[String],
    seed: u64,
    stop: Option<Arc<AtomicBool>>,
) -> Result<TIoUringOutput, Error> {
    let (machine, settings) = machine_settings(machine.unwrap_or(DEFAULT_MACHINE), cmdline, sets, patches)?;
    let (workload, notes) = blksim_lab::frontend::t_io_uring_with_notes(args)?;
    let mut warnings = notes;
    let options = blksim::RunOptions { stop, ..Default::default() };
    let (report, inv) =
        blksim::run_workload(&machine, &settings, &workload, seed, &options).map_err(|e| match e.job {
            Some(j) => e.context(format!("t/io_uring submitter {j}")),
            None => e,
        })?;
    crate::invariants::check(&report, &inv).map_err(|f| Error::internal(f.message))?;
    warnings.extend(blksim::idle_patches(&settings, &report));
    for (i, j) in report.jobs.iter().enumerate() {
        if let Some(why) = &j.stuck {
            warnings.push(format!("submitter {i}: {why}"));
        }
    }
    let text = crate::tio_uring::write_report(&report, false);
    Ok(TIoUringOutput { text, iops: crate::tio_uring::total_iops(&report), warnings })
}

/// `blksim reproduce`: the calibration experiments named (all of them when `names` is empty) from
/// `dir` (default: the source tree's `experiments/`), run on `threads` (0: every core), compared
/// with the published numbers: `reproduce --format json`'s document.
pub fn reproduce(
    names: &[String],
    dir: Option<&str>,
    seed: Option<u64>,
    threads: usize,
) -> Result<serde_json::Value, Error> {
    let dir = dir.map(PathBuf::from).unwrap_or_else(blksim_lab::source_experiments_dir);
    let exps = crate::reproduce::experiments_named(&dir, names).map_err(Error::bad_input)?;
    let opts = blksim_lab::LabOptions { threads, seed, substitutes: Vec::new(), wall_budget_s: None };
    let results = blksim_lab::run_experiments(&exps, &opts, &|_, _| {})?;
    Ok(blksim_lab::summary::to_json(&results))
}

/// A job file on disk, as the command reads one.
pub fn job_file(path: impl Into<PathBuf>) -> JobSource {
    JobSource::File(path.into())
}

/// A job file's text; `name` is where errors say it is (`<python>`, a notebook's cell).
pub fn job_text(name: &str, text: &str) -> JobSource {
    JobSource::Text { name: PathBuf::from(name), text: text.to_string() }
}

/// `blksim machines`' list: each built-in machine, one line.
pub fn machines() -> Result<String, Error> {
    crate::commands::list_machines().map_err(Error::bad_input)
}

/// `blksim machines NAME`'s description as JSON (the run's `blksim.machine` object).
pub fn machine(name: &str) -> Result<serde_json::Value, Error> {
    let m = load_machine(name).map_err(Error::bad_input)?;
    Ok(crate::commands::machine_json(&m))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(text: &str) -> RunRequest {
        RunRequest {
            job: job_text("<test>", text),
            machine: Some("spr-gen5".into()),
            cmdline: vec![],
            sets: vec![],
            patches: vec![],
            at: vec![],
            seed: 1,
            json_plus: false,
            sections: vec![],
            stop: None,
        }
    }

    #[test]
    fn a_run_gives_fio_json_and_the_normal_report() {
        let out = run(&request(
            "[j]\nfilename=/dev/nvme0n1\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\niodepth=8\nnumber_ios=200\n",
        ))
        .unwrap();
        let v: serde_json::Value = serde_json::from_str(&out.json).unwrap();
        assert_eq!(v["jobs"][0]["read"]["total_ios"], 200);
        assert!(out.normal.contains("read: IOPS="), "{}", out.normal);
    }

    #[test]
    fn errors_keep_their_kind_and_say_where() {
        let e = run(&request("[j]\nfilename=/dev/nvme0n1\nrw=bogus\n")).unwrap_err();
        assert_eq!(e.kind, blksim::ErrorKind::BadInput);
        assert!(e.message.contains("<test>:3"), "{}", e.message);
        let e = run(&request("[j]\nfilename=/dev/nvme0n1\nioengine=libaio\nrw=randread\nnumber_ios=1\n")).unwrap_err();
        assert_eq!(e.kind, blksim::ErrorKind::NotModelled, "{}", e.message);
    }
}
