//! The fio job as a program on a CPU: fio's I/O loop (queue, commit, reap)
//! over the ioengines (psync/sync, pvsync2, libaio, io_uring with or without
//! IOPOLL, null), each with its system calls and kernel work.

pub mod job;
pub mod program;
pub mod sched;

pub use job::{Job, JobState, SchedOp};
