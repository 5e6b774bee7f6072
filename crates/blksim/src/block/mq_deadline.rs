//! mq-deadline's state (`struct deadline_data`): `dd->lock`, the FIFO of
//! inserted requests, the driver tags it dispatches into, and the 2024
//! series' insertion list under its own lock and its DD_DISPATCHING flag;
//! and the scheduler work a submitter has left to do.

use std::collections::VecDeque;

use crate::block::lock::SpinLock;
use crate::ids::ReqId;

/// mq-deadline's per-queue state.
#[derive(Clone, Debug, Default)]
pub(crate) struct Deadline {
    /// `dd->lock`.
    pub lock: SpinLock,
    /// Inserted requests, in deadline (FIFO) order.
    pub fifo: VecDeque<ReqId>,
    /// Driver tags free (the hardware queue's depth).
    pub driver_tags_free: u32,
    /// 2024 series: `insert_lock` and the insertion list.
    pub insert_lock: SpinLock,
    pub insert_list: VecDeque<ReqId>,
    /// 2024 series: DD_DISPATCHING.
    pub dispatching: bool,
}

/// A step of mq-deadline work a submitter does after its syscall's bio work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SchedOp {
    /// `dd_bio_merge` for one bio, under `dd->lock`.
    Merge,
    /// `dd_insert_requests` of the job's new requests, under `dd->lock`
    /// (with the 2024 series: onto the insertion list under `insert_lock`).
    Insert,
    /// `dd_dispatch_request` rounds until nothing is left to dispatch.
    Dispatch,
}

/// A submitting task's way through mq-deadline's locked sections after its
/// syscall's bio work (what `dd_insert_requests` and the dispatch rounds it
/// runs have left to do).
#[derive(Clone, Debug, Default)]
pub(crate) struct DdSubmitter {
    /// Requests holding a scheduler tag, not yet inserted.
    pub pending: Vec<ReqId>,
    /// The sections left, in order.
    pub ops: VecDeque<SchedOp>,
    /// The request its dispatch round took, to issue outside the lock.
    pub issue: Option<ReqId>,
    /// The lock it spins for or holds is the insertion lock (2024 series), not `dd->lock`.
    pub on_insert_lock: bool,
    /// It runs the (serialised) dispatch.
    pub dispatching: bool,
}
