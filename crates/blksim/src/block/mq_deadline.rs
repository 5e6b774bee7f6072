//! mq-deadline's state (`struct deadline_data`) with blk-mq-sched's around
//! it: `dd->lock`, the FIFO of inserted requests, the driver tags dispatch
//! takes, `hctx->dispatch` and SCHED_RESTART, the queue's `run_work`; the
//! 2024 series' `run_state` bits (DD_DISPATCHING, DD_INSERTING, DD_BUCKETS)
//! and its per-CPU insertion buckets; and the scheduler program a task or a
//! kworker is running (`DdCtx`).

use std::collections::VecDeque;

use crate::block::lock::SpinLock;
use crate::ids::{CpuId, DevId, ReqId};

/// `DD_CPU_BUCKETS`: insertion buckets of the 2024 series (CPU `c` uses bucket `c & 31`).
pub(crate) const DD_CPU_BUCKETS: usize = 32;

/// `BLK_MQ_BUDGET_DELAY`: a dispatch that got nothing re-runs the queue this much later, ns.
pub(crate) const BLK_MQ_BUDGET_DELAY_NS: u64 = 3_000_000;

/// A queue's `hctx->run_work` (a delayed work item on kblockd): pending
/// (armed with a delay, or queued on a CPU's kworker) or not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum RunWork {
    #[default]
    Idle,
    /// Armed to be queued on `cpu` at `at_ns`; `gen` tells its timer event apart from cancelled ones.
    Delayed { cpu: CpuId, at_ns: u64, gen: u32 },
    /// On `cpu`'s kblockd worklist.
    Queued { cpu: CpuId },
}

/// mq-deadline's per-queue state, with blk-mq-sched's dispatch state.
#[derive(Clone, Debug, Default)]
pub(crate) struct Deadline {
    /// `dd->lock`.
    pub lock: SpinLock,
    /// Inserted requests, in deadline (FIFO) order.
    pub fifo: VecDeque<ReqId>,
    /// Driver tags free (the hardware queues' depth).
    pub driver_tags_free: u32,
    /// `hctx->dispatch`: requests taken from the scheduler that found no driver tag.
    pub dispatch: VecDeque<ReqId>,
    /// BLK_MQ_S_SCHED_RESTART: a freed driver tag runs the queue.
    pub restart: bool,
    /// `max_dispatch` of one dispatch round (`nr_requests`).
    pub max_dispatch: u32,
    /// `hctx->run_work`.
    pub run_work: RunWork,
    /// Generation of `run_work`'s timer (a re-armed or cancelled timer's old event is stale).
    pub run_work_gen: u32,
    /// 2024 series: DD_DISPATCHING (a CPU is inside `dd_dispatch_request`).
    pub dispatching: bool,
    /// 2024 series: DD_INSERTING (the lock holder is inserting).
    pub inserting: bool,
    /// 2024 series: DD_BUCKETS (some bucket holds requests).
    pub buckets_set: bool,
    /// 2024 series: the per-CPU insertion buckets.
    pub buckets: Vec<VecDeque<ReqId>>,
    /// The CPU whose cache holds `run_state`'s line (the last to write it).
    pub run_state_cpu: CpuId,
    /// Dispatch attempts that found DD_DISPATCHING set and left.
    pub dispatch_skipped: u64,
    /// Insertions that went to a bucket.
    pub bucket_inserts: u64,
    /// Merge lookups skipped because `dd->lock` was held.
    pub merges_skipped: u64,
}

impl Deadline {
    /// A queue with `driver_tags` driver tags whose dispatch rounds take up to `max_dispatch`.
    pub(crate) fn new(driver_tags: u32, max_dispatch: u32) -> Deadline {
        Deadline {
            driver_tags_free: driver_tags,
            max_dispatch,
            buckets: vec![VecDeque::new(); DD_CPU_BUCKETS],
            ..Default::default()
        }
    }

    /// `dd_has_work` (and `hctx->dispatch`): is there anything to dispatch?
    pub(crate) fn has_pending(&self) -> bool {
        !self.fifo.is_empty() || !self.dispatch.is_empty()
    }

    /// Requests in the insertion buckets.
    pub(crate) fn bucketed(&self) -> usize {
        self.buckets.iter().map(|b| b.len()).sum()
    }
}

/// A step of scheduler work an actor does, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SchedOp {
    /// `dd_bio_merge` for one bio, under `dd->lock`.
    Merge,
    /// `dd_insert_requests` of the actor's new requests.
    Insert,
    /// `blk_mq_run_hw_queue` → `blk_mq_sched_dispatch_requests`.
    Run,
}

/// Which locked section an actor holds (or spins for) `dd->lock` for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Section {
    Merge,
    /// `__dd_insert_requests`: its own requests and the buckets, round after round.
    Insert,
    /// One `dd_dispatch_request`.
    Dispatch,
}

/// What the step an actor is in does when it ends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum SchedStep {
    #[default]
    None,
    /// Spinning for `dd->lock` (ended by the hand-off).
    Spin(Section),
    /// Holding `dd->lock` for a section.
    Hold(Section),
    /// A failed `spin_trylock` (2024 series: the merge lookup is skipped).
    TrylockFailed,
    /// 2024 series: adding its requests to its CPU's bucket.
    Bucket,
    /// 2024 series: `dd_dispatch_request` found DD_DISPATCHING set.
    FlagSeen,
    /// `blk_mq_dispatch_rq_list`: `queue_rq` for the round's requests.
    Issue,
}

/// The scheduler program of a task (after its syscall's bio work) or of a
/// kworker running a queue: the ops left and where it is in the current one.
#[derive(Clone, Debug, Default)]
pub(crate) struct DdCtx {
    /// The device whose scheduler it works on.
    pub dev: Option<DevId>,
    /// Requests holding a scheduler tag, not yet inserted.
    pub pending: Vec<ReqId>,
    /// The ops left, in order.
    pub ops: VecDeque<SchedOp>,
    pub step: SchedStep,
    /// The insert section's round: requests it moves into the scheduler at its end.
    pub moving: Vec<ReqId>,
    /// This dispatch round's requests (`rq_list`) and whether each got a driver tag.
    pub collected: Vec<(ReqId, bool)>,
    /// The round asked for a queue re-run (`run_queue`: dispatch found nothing or was busy).
    pub run_queue: bool,
    /// The round stopped taking requests (no driver tag, or the round is full).
    pub round_full: bool,
}
