//! blksim: a discrete-event model of the Linux host storage I/O path.
//!
//! Architecture invariant: this crate does no I/O. It never reads a file, the
//! environment or the wall clock; the CLI and the bindings do.

#![warn(missing_docs, unreachable_pub)]

pub(crate) mod block;
pub(crate) mod build;
pub(crate) mod dma;
pub(crate) mod drivers;
pub mod error;
pub(crate) mod fio;
pub(crate) mod fs;
pub(crate) mod hw;
pub(crate) mod ids;
pub(crate) mod io_uring;
pub(crate) mod irq;
pub(crate) mod locking;
pub mod machine;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod sched;
pub mod settings;
pub(crate) mod sim;
pub mod stats;
pub(crate) mod system;
pub mod workload;

pub use error::{Error, ErrorKind};
pub use run::{
    idle_patches, prepare, run, run_with, run_workload, validate, Prepared, RunOptions, StatusSink, Workload,
};
pub use sched::core::SCHED_SLICE_NS;
pub use stats::Invariants;
pub use stats::MsiCounters;
