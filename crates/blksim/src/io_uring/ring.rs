//! An io_uring instance as the model keeps it (state, `struct
//! io_ring_ctx`): completions whose task_work has not run, the IOPOLL
//! list and the pass in progress, and SQPOLL's thread and its pending SQEs.

use std::collections::VecDeque;

use crate::block::Request;
use crate::ids::{CpuId, DevId, HctxId, JobId, ReqId};

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
    /// The io-wq that runs its fsyncs (a job with syncs).
    pub io_wq: Option<IoWq>,
    /// IORING_SETUP_HYBRID_IOPOLL (`--patch hybrid-iopoll`).
    pub hybrid: Option<Box<HybridPoll>>,
}

/// A ring's io-wq (`io_uring/io_wq.rs`): its worker's CPU, and whether the worker exists yet.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IoWq {
    pub cpu: CpuId,
    pub created: bool,
}

impl Ring {
    /// `io_iopoll_req_issued`: `req` joins the iopoll list; on a hybrid
    /// ring `io_rw_init_file` cleared its REQ_F_IOPOLL_STATE (its sleep is
    /// not taken yet) and stamped `iopoll_start` (`init_ns`).
    #[inline(always)]
    pub(crate) fn iopoll_req_issued(&mut self, r: ReqId, rq: &mut Request, init_ns: u64) {
        self.iopoll_list.push_back(r);
        if self.hybrid.is_some() {
            rq.hybrid_slept = false;
            rq.iopoll_start_ns = init_ns;
        }
    }
}

/// A hybrid IOPOLL ring's state (io_uring/rw.c, 6.13: `io_hybrid_iopoll_delay`,
/// `io_uring_hybrid_poll`). The first time `io_do_iopoll`'s walk reaches a
/// request it sleeps half of `poll_time` on an hrtimer, then polls; after
/// every poll of a request, `runtime = now - iopoll_start - (the sleep just
/// taken for it)` and `poll_time` keeps the least runtime ever measured.
#[derive(Clone, Debug)]
pub(crate) struct HybridPoll {
    /// `ctx->hybrid_poll_time`, ns: `u64::MAX` (the kernel's LLONG_MAX: no
    /// sleep yet) until the first poll.
    pub poll_time: u64,
    /// The request the task sleeps for and the sleep (`sleep_time`), until it polls it.
    pub slept: Option<(ReqId, u64)>,
    /// When the sleep's hrtimer expires.
    pub wake_at: u64,
    /// Sleeps taken and their total, ns.
    pub sleeps: u64,
    pub sleep_ns: u64,
}

impl Default for HybridPoll {
    fn default() -> HybridPoll {
        HybridPoll { poll_time: u64::MAX, slept: None, wake_at: 0, sleeps: 0, sleep_ns: 0 }
    }
}

impl HybridPoll {
    /// A poll of a request measured `runtime` ns: the ring keeps the least.
    #[inline(always)]
    pub(crate) fn measured(&mut self, runtime: u64) {
        self.poll_time = self.poll_time.min(runtime);
    }
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
