//! blk-mq: requests, hardware queues (hctx) with their tags, the per-CPU
//! software-queue to hctx map, and completion placement (`rq_affinity`,
//! `blk_cpu_done` lists, BLOCK_SOFTIRQ, batched completion).

pub(crate) mod blk_mq_sched;
pub(crate) mod complete;
pub(crate) mod disk;
pub(crate) mod elevator;
pub(crate) mod hctx;
pub(crate) mod kyber;
pub(crate) mod lock;
pub(crate) mod mq_deadline;
pub(crate) mod request;
pub(crate) mod submit;

pub(crate) use request::{Owner, Request, RequestPool};

/// Where a completed request ends (`blk_mq_complete_request`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Placement {
    /// Ended inline in the current context, inside an `io_comp_batch`.
    Batched,
    /// Ended inline, one by one.
    Inline,
    /// Queued on the submitting CPU's `blk_cpu_done` list (IPI + BLOCK_SOFTIRQ there).
    Remote,
    /// Queued on this CPU's `blk_cpu_done` list for BLOCK_SOFTIRQ (single hardware queue).
    LocalSoftirq,
}
