//! An io_uring instance as the model keeps it (state, `struct
//! io_ring_ctx`): completions whose task_work has not run, the IOPOLL
//! list and the pass in progress, and SQPOLL's thread and its pending SQEs.

use std::collections::VecDeque;

use crate::ids::{DevId, HctxId, JobId, ReqId};

/// A job's io_uring ring.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ring {
    /// Completions whose task_work has not run yet (CQE not posted).
    pub tw_pending: VecDeque<ReqId>,
    /// IOPOLL: `ctx->iopoll_list`, requests in issue order until
    /// `io_do_iopoll` reaps them (`Request::iopoll_done` marks the completed).
    pub iopoll_list: VecDeque<ReqId>,
    /// IOPOLL: what the `io_do_iopoll` pass in progress does.
    pub pass: IopollPass,
    /// IOPOLL: `io_iopoll_check`'s `min` and the events reaped so far.
    pub iopoll_min: u32,
    pub iopoll_events: u32,
    /// SQPOLL: the ring's SQ thread (on the job), the ring it serves (on the SQ thread).
    pub sq_thread: Option<JobId>,
    pub sq_ring: Option<JobId>,
    /// SQPOLL: SQEs the program committed (SQ tail moved) that the SQ thread has not taken yet.
    pub sq_pending: VecDeque<ReqId>,
    /// SQPOLL, on the SQ thread: what its current iteration does (task_work items, a poll pass, SQEs submitted).
    pub sq_work: (u32, bool, u32),
}

/// What one `io_do_iopoll` pass does, foreseen when it starts.
#[derive(Clone, Debug, Default)]
pub(crate) struct IopollPass {
    /// Where in the iopoll list the walk stopped (the reaped run starts here).
    pub pos: u32,
    /// The CQ the pass drains (`nvme_poll` found entries): (device, queue, CQEs).
    pub drain: Option<(DevId, HctxId, u32)>,
    /// Completed requests it reaps from `pos`.
    pub reap: u32,
    /// Passes of the current `io_iopoll_check`.
    pub passes: u32,
    /// Task_work items the pass runs first (uring_cmd completed by interrupt).
    pub tw: u32,
}

/// io_uring running `n` completions' task_work in the task: each posts its
/// CQE, the batch is flushed once.
#[inline(always)]
pub(crate) fn tw_run_ns(c: &crate::machine::Costs, n: u32) -> u64 {
    if n == 0 {
        0
    } else {
        n as u64 * (c.io_uring_tw_run_ns + c.io_uring_cqe_ns) + c.io_uring_flush_ns
    }
}
