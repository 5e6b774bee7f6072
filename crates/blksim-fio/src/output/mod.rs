//! fio's output formats written from a simulated run: normal text, JSON, json+,
//! and the `/proc/interrupts`-style table.

use blksim::stats::RunReport;

use crate::job::JobFile;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Normal,
    Json,
    JsonPlus,
}

/// fio's normal (human) output.
pub fn write_normal(report: &RunReport, jobs: &JobFile) -> String {
    let _ = (report, jobs);
    unimplemented!("normal output")
}

/// fio's `--output-format=json` (or json+ with `plus`), with the extra top-level `blksim` object:
/// what the report holds beyond fio, merged with `extra` (resolved machine, settings, wall time).
pub fn write_json(report: &RunReport, jobs: &JobFile, plus: bool, extra: serde_json::Value) -> String {
    let _ = (report, jobs, plus, extra);
    unimplemented!("json output")
}

/// The `/proc/interrupts`-style table.
pub fn write_interrupts(report: &RunReport) -> String {
    let _ = report;
    unimplemented!("interrupts table")
}
