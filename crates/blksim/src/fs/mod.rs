//! The ioengines' system calls in the kernel, between the task and the
//! block layer (`rw.rs`): what `io_uring_enter`, `io_submit` and `pread`
//! cost before the block layer, and `ki_complete`'s side of a completion.

pub(crate) mod rw;
