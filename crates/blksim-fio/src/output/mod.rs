//! fio's output formats written from a simulated run: normal text, JSON, json+,
//! and the `/proc/interrupts`-style table.
//!
//! Times: the simulated run starts at the Unix epoch, so dates are virtual and
//! deterministic. A report is dated at the end of the simulated run
//! (`sim_time_ns` after 1970-01-01 00:00:00 UTC), as fio dates its report when
//! the run ends; a job's `job_start` is its start in ms after the epoch (after
//! its `ramp_time`, as fio sets it again then), and `log_unix_epoch` adds that
//! to its log lines' times.

mod blksim_json;
mod breakdown;
pub mod fmt;
mod group;
mod interrupts;
mod json;
mod json_print;
mod logs;
mod normal;
mod stats;
mod sysstat;
mod terse;
mod trace;

use blksim::stats::RunReport;

use crate::job::JobFile;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Normal,
    Json,
    JsonPlus,
}

/// The version line of the normal output and the JSON `fio version`: blksim's
/// own, saying which fio's formats it writes.
pub const VERSION_LINE: &str = concat!("blksim-", env!("CARGO_PKG_VERSION"), " (fio-3.42 compatible)");

/// fio's normal (human) output.
pub fn write_normal(report: &RunReport, jobs: &JobFile) -> String {
    normal::write(report, jobs)
}

/// fio's terse lines (`--output-format=terse`, `--minimal`) in terse `version` (3, 4 or 5:
/// [`TERSE_VERSIONS`]) from the run's fio JSON document (`write_json` without `plus`).
pub fn write_terse(json: &str, version: u32) -> String {
    terse::write(json, version)
}

pub use terse::TERSE_VERSIONS;

/// The normal report's header: each job's line, fio's version, "Starting N processes".
pub fn write_normal_head(report: &RunReport, jobs: &JobFile) -> String {
    normal::write_head(report, jobs)
}

/// The normal report without its header: what fio's `__show_run_stats` prints (also at
/// each `--status-interval`).
pub fn write_normal_body(report: &RunReport, jobs: &JobFile) -> String {
    normal::write_body(report, jobs)
}

/// fio's `--output-format=json` (or json+ with `plus`), with the extra top-level `blksim` object:
/// what the report holds beyond fio, merged with `extra` (resolved machine, settings, wall time).
pub fn write_json(report: &RunReport, jobs: &JobFile, plus: bool, extra: serde_json::Value) -> String {
    json::write(report, jobs, plus, extra)
}

/// The `/proc/interrupts`-style table, every CPU and row (`--interrupts=full`).
pub fn write_interrupts(report: &RunReport) -> String {
    interrupts::write(report)
}

/// The `/proc/interrupts`-style table with only the CPUs and rows that counted something, and a line
/// saying how many were left out (`--interrupts`).
pub fn write_interrupts_compact(report: &RunReport) -> String {
    interrupts::write_compact(report)
}

/// Virtual time of the report, ns after the epoch: the end of the simulated run.
fn report_time_ns(report: &RunReport) -> u64 {
    report.sim_time_ns
}

fn report_time_secs(report: &RunReport) -> u64 {
    report_time_ns(report) / 1_000_000_000
}

pub use breakdown::{stage_per_io, write_breakdown, write_stages};
pub use group::{job_error_lines, strerror};
pub use logs::{aggregate_bw_logs, log_file_name, write_logs, LogFile, LogWriter};
pub use sysstat::{write_iostat, write_mpstat};
pub use trace::write_trace;
