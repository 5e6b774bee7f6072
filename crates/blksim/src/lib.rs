//! blksim: a discrete-event model of the Linux host storage I/O path.
//!
//! Architecture invariant: this crate does no I/O. It never reads a file, the
//! environment or the wall clock; the CLI and the bindings do.

pub mod machine;
pub mod stats;
pub mod workload;
