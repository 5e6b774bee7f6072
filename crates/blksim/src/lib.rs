//! blksim: a discrete-event model of the Linux host storage I/O path.
//!
//! Architecture invariant: this crate does no I/O. It never reads a file, the
//! environment or the wall clock; the CLI and the bindings do.

pub mod block;
pub mod device;
pub mod ioengine;
pub mod irq;
pub mod machine;
pub mod run;
pub mod settings;
pub mod sim;
pub mod stats;
pub mod workload;

pub use run::{run, run_with, run_workload, validate, Invariants, ModelError, RunOptions, Workload};
