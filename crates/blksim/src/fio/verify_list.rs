//! fio: `verify_async`'s state (`td->verify_list`, the verify threads;
//! their flow is `verify_async.rs`).

use std::collections::VecDeque;

use crate::ids::JobId;

/// A `verify_async` job's part, or one of its verify threads'.
#[derive(Clone)]
pub(crate) enum VerifyAsync {
    /// On fio's job: its threads and what it shares with them.
    Owner(VerifyList),
    /// On a verify thread.
    Thread(VerifyThread),
}

/// What fio's job shares with its verify threads (`td->verify_list` under `io_u_lock`).
#[derive(Default, Clone)]
pub(crate) struct VerifyList {
    pub threads: Vec<JobId>,
    /// The bytes of each io_u handed over and not yet taken by a thread.
    pub list: Vec<u32>,
    /// fio's thread waits on `free_cond` (no io_u free).
    pub waiting: bool,
    /// ... and a thread has woken it.
    pub woken: bool,
    /// `verify_thread_exit`: the job has ended.
    pub exit: bool,
}

/// A verify thread.
#[derive(Clone)]
pub(crate) struct VerifyThread {
    pub parent: JobId,
    /// The io_us it took off the list, checked in order (their bytes).
    pub batch: VecDeque<u32>,
    /// It waits on `verify_cond`.
    pub waiting: bool,
    /// ... and fio's thread has signalled it.
    pub woken: bool,
}

impl VerifyAsync {
    /// It sleeps in a futex (`pthread_cond_wait`), not for I/O.
    pub(crate) fn waiting(&self) -> bool {
        match self {
            VerifyAsync::Owner(o) => o.waiting,
            VerifyAsync::Thread(t) => t.waiting,
        }
    }
}
