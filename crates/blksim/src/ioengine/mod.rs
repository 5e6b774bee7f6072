//! The fio job as a program on a CPU: fio's I/O loop (queue, commit, reap)
//! over the ioengines (psync/sync, pvsync2, libaio, io_uring with or without
//! IOPOLL, null), each with its system calls and kernel work.

pub(crate) mod complete;
pub(crate) mod distribution;
pub(crate) mod fio_loop;
pub(crate) mod iopoll;
pub(crate) mod job;
pub(crate) mod offset;
pub(crate) mod pace;
pub(crate) mod pace_loop;
pub(crate) mod sq_loop;
pub(crate) mod tio_loop;
