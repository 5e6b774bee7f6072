//! The I/O scheduler slot of a request queue (state): `Elevator` is
//! `q->elevator` (`struct elevator_queue`) with blk-mq-sched's per-queue
//! state around it (driver tags, `hctx->dispatch`, SCHED_RESTART, the
//! queue's `run_work`, the scheduler's timer), and `ElevatorOps` is the
//! `elevator_mq_ops` table each scheduler implements in its own file
//! (`mq_deadline.rs`, `kyber.rs`). The generic dispatch that calls the ops is
//! `blk_mq_sched.rs`; `none` is no elevator at all, as in the kernel.
//!
//! A new scheduler is its file, one arm of `Sched` and one entry of
//! `ELEVATORS` (its name and `iosched/` attributes).

use std::collections::VecDeque;

use crate::block::kyber::{self, Kyber};
use crate::block::merge_rules::{MergeHost, MergeKind, MergeLimits, MergePath};
use crate::block::mq_deadline::Deadline;
use crate::block::request::{Request, RequestPool};
use crate::error::Error;
use crate::ids::{CpuId, DevId, ReqId};
use crate::locking::qspinlock::{Actor, LockStats, SpinLock};
use crate::machine::{Costs, Topology};

/// `BLK_MQ_BUDGET_DELAY`: a dispatch that got nothing re-runs the queue this much later, ns.
pub(crate) const BLK_MQ_BUDGET_DELAY_NS: u64 = 3_000_000;

/// An elevator type (`struct elevator_type`): its name in
/// `/sys/block/DEV/queue/scheduler`, the attributes of its `iosched/`
/// directory and its `init_sched`.
pub(crate) struct ElevatorType {
    pub(crate) name: &'static str,
    /// `elevator_alias`: another name a write to `queue/scheduler` may use.
    pub(crate) alias: Option<&'static str>,
    pub(crate) attrs: &'static [&'static str],
    pub(crate) init: fn(&ElevatorInit) -> Result<Sched, Error>,
}

/// The schedulers the model has (`elv_list`).
pub(crate) const ELEVATORS: &[ElevatorType] = &[
    ElevatorType {
        name: "mq-deadline",
        alias: Some("deadline"),
        attrs: &[],
        init: |i| Ok(Sched::MqDeadline(Deadline::init(i)?)),
    },
    ElevatorType { name: "kyber", alias: None, attrs: kyber::ATTRS, init: |i| Ok(Sched::Kyber(Kyber::init(i)?)) },
];

/// Schedulers the kernel has that the model does not.
pub(crate) const NOT_MODELLED: &[&str] = &["bfq"];

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

/// Which locked section of the scheduler an actor holds (or spins for) a lock for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Section {
    /// `bio_merge` for one bio.
    Merge,
    /// `insert_requests`: the actor's requests (a round at a time).
    Insert,
    /// One `dispatch_request`.
    Dispatch,
}

/// How a scheduler op's section begins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Begin {
    /// `spin_lock` of the section's lock: hold it, or spin for it.
    Lock,
    /// A `spin_trylock` took the section's lock: hold it.
    Locked,
    /// No section: the op is skipped after `cost_ns` (a failed `spin_trylock`).
    Skip(u64),
    /// The requests are left for the lock's holder (a per-CPU bucket) after `cost_ns`.
    Defer(u64),
    /// Another CPU is dispatching: leave it to that CPU after `cost_ns`.
    Busy(u64),
}

/// What ending a request asks of blk-mq-sched.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Done {
    /// The scheduler's work in the completing context, ns.
    pub(crate) cost_ns: u64,
    /// Run the queue (a freed resource woke a waiting dispatch).
    pub(crate) run_queue: bool,
    /// Fire the scheduler's timer at this time, unless it is armed to fire earlier (`timer_reduce`).
    pub(crate) timer_at: Option<u64>,
}

/// What the ops see of the machine: costs, the CPUs' cache distances,
/// the time and where each actor runs.
pub(crate) struct SchedEnv<'a> {
    pub(crate) costs: &'a Costs,
    pub(crate) topo: &'a Topology,
    pub(crate) now: u64,
    pub(crate) actor_cpu: &'a dyn Fn(Actor) -> CpuId,
}

impl SchedEnv<'_> {
    /// A line last written on `from` read or written on `to` (nothing on the same CPU).
    pub(crate) fn line_ns(&self, from: CpuId, to: CpuId) -> u64 {
        crate::machine::line_ns(self.topo, self.costs, from, to)
    }
}

/// `struct elevator_mq_ops` as the model calls it: each scheduler's state
/// answers these; blk-mq-sched (`blk_mq_sched.rs`) runs the sections, takes
/// and hands over the locks and dispatches what they give.
pub(crate) trait ElevatorOps {
    /// `bio_merge` for a bio `who` submits on `cpu`: how its section begins.
    fn bio_merge(&mut self, env: &SchedEnv, who: Actor, cpu: CpuId) -> Begin;
    /// `insert_requests` of `who`'s requests from `cpu`: how its section begins.
    fn insert_requests(&mut self, env: &SchedEnv, who: Actor, cpu: CpuId) -> Begin;
    /// A `dispatch_request` on `cpu` (the scheduler has work): how its section begins.
    fn dispatch_begin(&mut self, env: &SchedEnv, cpu: CpuId) -> Begin;
    /// The lock `section` takes on `cpu`.
    fn lock(&mut self, section: Section, cpu: CpuId) -> &mut SpinLock;
    /// What `section`, now held on `cpu`, costs; `from` is the CPU of the
    /// lock's previous section (its data is in that cache). An insertion
    /// round takes `moving` (and may add what others left for it).
    fn section_cost(
        &mut self,
        env: &SchedEnv,
        section: Section,
        cpu: CpuId,
        from: Option<CpuId>,
        moving: &mut Vec<ReqId>,
    ) -> u64;
    /// An insertion round's requests are in: does another round follow
    /// (the lock still held)?
    fn inserted(&mut self, env: &SchedEnv, cpu: CpuId, moving: &[ReqId], reqs: &RequestPool) -> bool;
    /// `dispatch_request` at the end of its section on `cpu`: the request it gives, if any.
    fn dispatch_request(&mut self, env: &SchedEnv, cpu: CpuId, reqs: &RequestPool) -> Option<ReqId>;
    /// A `Defer` step of `cpu` ended: `pending` are left where the lock's
    /// holder takes them; `true` if it will, `false` if it is too late and
    /// the inserter must take the lock itself (and insert them).
    fn deferred(&mut self, cpu: CpuId, pending: &mut Vec<ReqId>) -> bool;
    /// The queued request that `req` (a bio submitted, or a request about
    /// to be inserted, on `cpu`: `path`) merges into, and how, looked up as
    /// the scheduler looks (`limits.takes` decides each candidate); none by default.
    fn merge_host(
        &self,
        _cpu: CpuId,
        _req: ReqId,
        _reqs: &RequestPool,
        _limits: &MergeLimits,
        _path: MergePath,
    ) -> Option<MergeHost> {
        None
    }
    /// A request merged into `host` (`elv_merged_request`).
    fn merged(&mut self, _host: ReqId) {}
    /// After `host` grew by a bio (`kind`), the queued request next to it
    /// in sector order (`elv_latter_request` after a back merge,
    /// `elv_former_request` after a front one), for a scheduler that keeps
    /// that order (`next_request` / `former_request` ops); none by default.
    fn neighbour(&self, _host: ReqId, _kind: MergeKind, _reqs: &RequestPool) -> Option<ReqId> {
        None
    }
    /// `next` merged into `req` (`elv_merge_requests` → `requests_merged`):
    /// it leaves the scheduler.
    fn requests_merged(&mut self, _req: ReqId, _next: ReqId) {}
    /// `has_work`: does it hold requests to dispatch?
    fn has_work(&self) -> bool;
    /// The work of one insertion (`insert_requests` for one request, as for
    /// a waiter that merged instead).
    fn insert_ns(&self, env: &SchedEnv) -> u64;
    /// A request that waited for a scheduler tag is inserted by the
    /// completion that freed one (its lock not modelled): that context's cost.
    fn insert_waiter(&mut self, env: &SchedEnv, req: ReqId, reqs: &RequestPool) -> u64;
    /// `completed_request` and `finish_request` of `req` (`r`), ended at
    /// `env.now`: what the completing context pays and asks for.
    fn request_done(&mut self, _env: &SchedEnv, _req: ReqId, _r: &Request) -> Done {
        Done::default()
    }
    /// The scheduler's timer (armed by a `Done::timer_at`) fired.
    fn timer(&mut self, _env: &SchedEnv) {}
    /// Requests it holds (inserted, not yet dispatched).
    fn queued(&self) -> usize;
    /// Requests it dispatched that have not completed (mq-deadline's
    /// per-priority count; 0 for a scheduler that keeps none): none at the end of a run.
    fn started(&self) -> u64 {
        0
    }
    /// Its locks, for the report (name and statistics; a lock of each CPU summed).
    fn locks(&self) -> Vec<(&'static str, LockStats)>;
    /// Its own counters for the report (name, value): what it decided.
    fn stats(&self) -> Vec<(String, u64)> {
        Vec::new()
    }
    /// What it holds, for a stall report.
    fn describe(&self) -> String;
    /// The `--patch` that changed what it did, if one did.
    fn patch(&self) -> Option<&'static str> {
        None
    }
}

/// The scheduler behind a queue: one arm per elevator type. Unboxed: one
/// per device, made at build and never moved, and each op reaches it
/// without a pointer chase.
#[allow(clippy::large_enum_variant)]
#[derive(Clone)]
pub(crate) enum Sched {
    /// mq-deadline (with or without the 2024 series).
    MqDeadline(Deadline),
    /// Kyber.
    Kyber(Kyber),
}

impl Sched {
    pub(crate) fn ops(&self) -> &dyn ElevatorOps {
        match self {
            Sched::MqDeadline(d) => d,
            Sched::Kyber(k) => k,
        }
    }

    pub(crate) fn ops_mut(&mut self) -> &mut dyn ElevatorOps {
        match self {
            Sched::MqDeadline(d) => d,
            Sched::Kyber(k) => k,
        }
    }
}

/// What a scheduler's `init_sched` is given.
pub(crate) struct ElevatorInit<'a> {
    /// The device's name (for messages).
    pub(crate) device: &'a str,
    /// The `iosched/` attributes written, with their values.
    pub(crate) attrs: &'a [(String, u64)],
    /// Driver tags of the device (all its hardware queues).
    pub(crate) driver_tags: u32,
    /// Scheduler tags per hardware queue (`nr_requests`).
    pub(crate) sched_tags: u32,
    /// `--patch mq-deadline-2024`.
    pub(crate) patch_mq_deadline_2024: bool,
    /// CPUs of the machine (software queues).
    pub(crate) ncpus: usize,
}

/// `q->elevator` with blk-mq-sched's per-queue state. The model's
/// simplifications: the device's hardware queues share one driver-tag
/// pool, one `hctx->dispatch` list and one `run_work`.
#[derive(Clone)]
pub(crate) struct Elevator {
    pub(crate) sched: Sched,
    /// Driver tags free (the hardware queues' depth).
    pub(crate) driver_tags_free: u32,
    /// `hctx->dispatch`: requests taken from the scheduler that found no driver tag.
    pub(crate) dispatch: VecDeque<ReqId>,
    /// BLK_MQ_S_SCHED_RESTART: a freed driver tag runs the queue.
    pub(crate) restart: bool,
    /// `max_dispatch` of one dispatch round (`nr_requests`).
    pub(crate) max_dispatch: u32,
    /// `hctx->run_work`.
    pub(crate) run_work: RunWork,
    /// Generation of `run_work`'s timer (a re-armed or cancelled timer's old event is stale).
    pub(crate) run_work_gen: u32,
    /// When the scheduler's timer fires, if armed.
    pub(crate) timer_at: Option<u64>,
    /// Generation of the scheduler's timer (an event of an earlier one is stale).
    pub(crate) timer_gen: u32,
}

impl Elevator {
    /// `elevator_init_mq` with elevator type `e`.
    pub(crate) fn init(e: &ElevatorType, init: &ElevatorInit) -> Result<Elevator, Error> {
        Ok(Elevator {
            sched: (e.init)(init)?,
            driver_tags_free: init.driver_tags,
            dispatch: VecDeque::new(),
            restart: false,
            max_dispatch: init.sched_tags,
            run_work: RunWork::Idle,
            run_work_gen: 0,
            timer_at: None,
            timer_gen: 0,
        })
    }

    pub(crate) fn ops(&self) -> &dyn ElevatorOps {
        self.sched.ops()
    }

    pub(crate) fn ops_mut(&mut self) -> &mut dyn ElevatorOps {
        self.sched.ops_mut()
    }

    /// Anything to dispatch (the scheduler's `has_work`, or `hctx->dispatch`)?
    pub(crate) fn has_pending(&self) -> bool {
        self.ops().has_work() || !self.dispatch.is_empty()
    }
}

/// A task's or a kworker's blk-mq-sched program: the ops left of a
/// syscall's scheduler work or of a queue run, and where it is in the
/// current one.
#[derive(Clone, Debug, Default)]
pub(crate) struct SchedCtx {
    /// The device whose scheduler it works on.
    pub dev: Option<DevId>,
    /// Requests holding a scheduler tag, not yet inserted (of any device).
    pub pending: Vec<ReqId>,
    /// The devices of this submission's bios that merged into a request
    /// their scheduler held (each still takes its merge section).
    pub bio_merged: Vec<DevId>,
    /// The current insertion's requests (the pending ones of its device).
    pub inserting: Vec<ReqId>,
    /// The ops left, in order.
    pub ops: VecDeque<SchedOp>,
    pub step: SchedStep,
    /// The insertion section's round: requests it moves into the scheduler at its end.
    pub moving: Vec<ReqId>,
    /// This dispatch round's requests (`rq_list`) and whether each got a driver tag.
    pub collected: Vec<(ReqId, bool)>,
    /// The round asked for a queue re-run (`run_queue`: dispatch found nothing or was busy).
    pub run_queue: bool,
    /// The round stopped taking requests (no driver tag, or the round is full).
    pub round_full: bool,
}

/// An op of a blk-mq-sched program, in order, on a device's queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SchedOp {
    /// `blk_mq_sched_bio_merge` → `bio_merge` for one bio.
    Merge(DevId),
    /// `blk_mq_insert_requests` → `insert_requests` of the actor's new requests for the device.
    Insert(DevId),
    /// `blk_mq_run_hw_queue` → `blk_mq_sched_dispatch_requests`.
    Run(DevId),
}

impl SchedOp {
    /// The device whose queue it works on.
    pub(crate) fn dev(self) -> DevId {
        match self {
            SchedOp::Merge(d) | SchedOp::Insert(d) | SchedOp::Run(d) => d,
        }
    }
}

/// What the step an actor is in does when it ends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum SchedStep {
    #[default]
    None,
    /// Spinning for a section's lock (ended by the hand-off).
    Spin(Section),
    /// Holding a section's lock.
    Hold(Section),
    /// An op skipped at a cost (`Begin::Skip`).
    Skipped,
    /// Leaving the requests for the lock's holder (`Begin::Defer`).
    Deferred,
    /// Another CPU dispatches (`Begin::Busy`).
    Busy,
    /// `blk_mq_dispatch_rq_list`: `queue_rq` for the round's requests.
    Issue,
}

/// The elevator type named `name`, if the model has it.
pub(crate) fn elevator_type(name: &str) -> Option<&'static ElevatorType> {
    ELEVATORS.iter().find(|e| e.name == name)
}

/// What a write of `name` to `queue/scheduler` selects (`elevator_change`).
pub(crate) enum SchedulerWrite {
    /// `none`, or a scheduler the model has, by its name or its alias (`elevator_match`).
    Known(&'static str),
    /// A scheduler the kernel has that the model does not.
    NotModelled,
    /// No scheduler of that name: the write fails with EINVAL.
    Unknown,
}

/// The scheduler a write of `name` to `queue/scheduler` selects.
pub(crate) fn scheduler_write(name: &str) -> SchedulerWrite {
    if name == "none" {
        return SchedulerWrite::Known("none");
    }
    match ELEVATORS.iter().find(|e| e.name == name || e.alias == Some(name)) {
        Some(e) => SchedulerWrite::Known(e.name),
        None if NOT_MODELLED.contains(&name) => SchedulerWrite::NotModelled,
        None => SchedulerWrite::Unknown,
    }
}

/// The schedulers the model has, by name, `, `-separated.
pub(crate) fn scheduler_names() -> String {
    ELEVATORS.iter().map(|e| e.name).collect::<Vec<_>>().join(", ")
}
