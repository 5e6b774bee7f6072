//! blksim's lab: calibration experiments as data (`experiments/*.toml`),
//! run in parallel and compared with published or measured numbers
//! (`blksim reproduce`), plotted as SVG, and used to fit a profile's costs
//! within their ranges (`blksim fit`).
//!
//! This crate reads files (experiments, fio JSON, `/proc` snapshots) and
//! writes figures; the model crate it drives does no I/O.

pub mod estimate;
pub mod experiment;
pub mod fit;
pub mod frontend;
pub mod metric;
pub mod observe;
pub mod plot;
pub mod runner;
pub mod summary;

pub use experiment::{Experiment, Workload};
pub use runner::{run_experiments, CellStatus, ExperimentResult, ExperimentStatus, LabOptions};

/// The repository's `experiments/` directory, as built (for tests and as the CLI's fallback).
pub fn source_experiments_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments")
}
