//! One logical CPU: what runs on it (a stack of interrupt-context frames over
//! the current task), preemption, the local APIC's IRR, time accounting by
//! context, SMT sharing of the core, and the run queue.

use std::collections::VecDeque;

use crate::block::elevator::SchedCtx;
use crate::block::Foresight;
use crate::hw::lapic::VectorSet;
use crate::ids::{CpuId, DevId, IdVec, IrqId, JobId, ReqId};
use crate::sched::cpumask::CpuMasks;
use crate::stats::{CpuStage, CpuTime, TraceName, Track};

/// Where a step's work goes, by stage (`CpuStage`), ns of work at full speed
/// (64-bit, so adds need no clamp: a stage would need 584 years of work to
/// overflow; 32-bit saturating adds cost ~90 instructions per simulated I/O).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Bill(pub [u64; CpuStage::COUNT]);

impl Bill {
    /// `ns` of `stage`.
    #[inline(always)]
    pub(crate) fn of(stage: CpuStage, ns: u64) -> Bill {
        let mut b = Bill::default();
        b.add(stage, ns);
        b
    }

    /// Add `ns` to `stage`; returns `ns` (so a cost can be billed where it is summed).
    #[inline(always)]
    pub(crate) fn add(&mut self, stage: CpuStage, ns: u64) -> u64 {
        self.0[stage as usize] += ns;
        ns
    }

    /// Add every stage of `other`.
    #[inline(always)]
    pub(crate) fn merge(&mut self, other: &Bill) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a += b;
        }
    }

    /// The ns of `stage` in the bill.
    pub(crate) fn get(&self, stage: CpuStage) -> u64 {
        self.0[stage as usize]
    }

    /// The work it holds, ns.
    pub(crate) fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// Share `wall` ns of a step over its stages from `first` into `out`:
    /// exactly the bill when `wall` is its work (a step at full speed),
    /// else in proportion (what rounding leaves, and all of it when the
    /// bill names nothing, goes to `default`).
    #[inline(always)]
    pub(crate) fn settle(&self, first: usize, wall: u64, default: CpuStage, out: &mut [u64; CpuStage::COUNT]) {
        let total: u64 = self.0[first..].iter().sum();
        self.settle_total(first, total, wall, default, out)
    }

    /// `settle` when the bill's work from `first` is known to be `total`.
    #[inline(always)]
    pub(crate) fn settle_total(
        &self,
        first: usize,
        total: u64,
        wall: u64,
        default: CpuStage,
        out: &mut [u64; CpuStage::COUNT],
    ) {
        if total == wall {
            // Fixed-size, so the adds unroll: the stages before `first` (a
            // task's user loop, charged as it runs) count nothing here.
            let mut b = self.0;
            for n in b.iter_mut().take(first) {
                *n = 0;
            }
            for (o, n) in out.iter_mut().zip(b) {
                *o += n;
            }
            return;
        }
        let mut given = 0;
        if total > 0 {
            for (o, &n) in out[first..].iter_mut().zip(&self.0[first..]) {
                let share = (wall as u128 * n as u128 / total as u128) as u64;
                *o += share;
                given += share;
            }
        }
        out[default as usize] += wall - given;
    }
}

/// Which account a step's time goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Acct {
    User,
    Sys,
    Softirq,
    Hardirq,
}

/// An interrupt-context activity on a CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FrameKind {
    /// A device IRQ's handler (e.g. `nvme_irq` for one queue).
    DeviceIrq { irq: IrqId },
    /// A device IRQ that arrived while its handler ran on another CPU: entry, ack, exit.
    DeviceIrqBusy,
    /// CALL_FUNCTION_SINGLE IPI: raises BLOCK_SOFTIRQ for `blk_cpu_done`;
    /// runs the queues of the requests handed over to this CPU (`queue_affinity`).
    CallFunctionIpi,
    /// `__do_softirq` running BLOCK_SOFTIRQ; `restarts` counts passes.
    Softirq { restarts: u8 },
    /// ksoftirqd running the softirq work deferred past the restart bound
    /// (or raised from task context).
    Ksoftirqd,
    /// LOCAL_TIMER_VECTOR: hrtimers expired (null_blk irqmode=2 completions).
    LocalTimer,
    /// POSTED_MSI_NOTIFICATION_VECTOR: demultiplex the PIR (`sysvec_posted_msi_notification`).
    PostedNotification,
    /// The CPU's kworker running kblockd work items (a task: system time,
    /// interrupts enabled; it runs before the CPU's fio task, like ksoftirqd).
    Kworker,
}

/// Stage of a frame's program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stage {
    /// Entry plus the first pass of work.
    Entry,
    /// A further pass of work (e.g. CQEs that arrived during the handler).
    Work,
    /// Exit: EOI/doorbells, irq_exit.
    Exit,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Frame {
    pub kind: FrameKind,
    pub stage: Stage,
    /// Work left in the current step, ns at full core speed.
    pub remaining_ns: u64,
    /// Items the current step handles (CQEs, requests); applied when it ends.
    pub items: u32,
    /// Cost of effects applied at the end of a step, charged in the next one.
    pub debt_ns: u64,
    pub acct: Acct,
    /// When the frame was entered (for MAX_SOFTIRQ_TIME).
    pub since_ns: u64,
    /// Follow-on cost (wake-ups, IPIs) already charged in the current step.
    pub foreseen_ns: u64,
    /// Posted notification: vectors harvested and not yet handled.
    pub pir: VectorSet,
    /// Posted notification: vectors in `pir` put back to replay a handler (IRQS_PENDING), not harvested.
    pub replayed: VectorSet,
    /// Posted notification: harvest passes done; `final_pass` once ON is cleared.
    pub passes: u32,
    pub final_pass: bool,
    /// Posted notification: the vector in hand has its handler running on
    /// another CPU (marked pending there, not run here).
    pub handler_busy: bool,
    /// Device IRQ: the drain has found entries (its CQ head doorbell is due).
    pub found: bool,
    /// Posted notification: the vector in hand is drained again (`nvme_irq`
    /// loops while its CQ shows entries): the same handler run.
    pub rescan: bool,
    /// Posted notification: PIR harvests done as the last step ended, charged
    /// in the next step as interrupt entry/exit work.
    pub carry_ns: u64,
    /// The current step's work by stage, and the wall time charged to it so far.
    pub bill: Bill,
    pub bill_wall: u64,
    /// The bill's work (`remaining_ns` when the step began).
    pub bill_total: u64,
    /// CALL_FUNCTION_SINGLE: requests handed over (`queue_affinity`) the current step issues.
    pub issues: u32,
}

impl FrameKind {
    /// The trace track and name of this kind of frame.
    pub(crate) fn trace_name(self) -> (Track, TraceName) {
        match self {
            FrameKind::DeviceIrq { .. } | FrameKind::DeviceIrqBusy => (Track::Hardirq, TraceName::DeviceIrq),
            FrameKind::PostedNotification => (Track::Hardirq, TraceName::PostedNotification),
            FrameKind::CallFunctionIpi => (Track::Hardirq, TraceName::CallFunctionIpi),
            FrameKind::LocalTimer => (Track::Hardirq, TraceName::LocalTimer),
            FrameKind::Softirq { .. } => (Track::Softirq, TraceName::BlockSoftirq),
            FrameKind::Ksoftirqd => (Track::Softirq, TraceName::Ksoftirqd),
            FrameKind::Kworker => (Track::Task, TraceName::Kworker),
        }
    }
}

impl Frame {
    pub(crate) fn new(kind: FrameKind, now_ns: u64) -> Frame {
        let acct = match kind {
            FrameKind::Softirq { .. } | FrameKind::Ksoftirqd => Acct::Softirq,
            FrameKind::Kworker => Acct::Sys,
            _ => Acct::Hardirq,
        };
        Frame {
            kind,
            stage: Stage::Entry,
            remaining_ns: 0,
            items: 0,
            debt_ns: 0,
            acct,
            since_ns: now_ns,
            foreseen_ns: 0,
            pir: VectorSet::default(),
            replayed: VectorSet::default(),
            passes: 0,
            final_pass: false,
            handler_busy: false,
            found: false,
            rescan: false,
            carry_ns: 0,
            issues: 0,
            bill: Bill::default(),
            bill_wall: 0,
            bill_total: 0,
        }
    }

    pub(crate) fn is_hardirq(&self) -> bool {
        self.acct == Acct::Hardirq
    }

    /// The stage of a step's work its bill does not name.
    pub(crate) fn default_stage(&self) -> CpuStage {
        match self.kind {
            FrameKind::DeviceIrq { .. } => CpuStage::DriverComplete,
            FrameKind::Softirq { .. } | FrameKind::Ksoftirqd => CpuStage::Softirq,
            FrameKind::Kworker => CpuStage::Other,
            FrameKind::DeviceIrqBusy
            | FrameKind::CallFunctionIpi
            | FrameKind::LocalTimer
            | FrameKind::PostedNotification => CpuStage::IrqEntryExit,
        }
    }
}

/// What the CPU is running right now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Running {
    Idle,
    Frame,
    Task(JobId),
}

/// Fields in declaration order (repr(C)): what every step touches first,
/// on the first two cache lines; counters and rarely used state after.
#[repr(C)]
#[derive(Clone)]
pub(crate) struct Cpu {
    pub running: Running,
    /// When the running entity last started or was last charged.
    pub since_ns: u64,
    /// Current slowdown in permille (1000 = full speed; more when the SMT sibling is busy).
    pub slow_pm: u64,
    pub time: CpuTime,
    /// Local APIC interrupt request register, one bit per vector.
    pub irr: VectorSet,
    pub frames: Vec<Frame>,
    /// The task that owns the CPU (runs when no frame is active).
    pub current: Option<JobId>,
    pub sibling: Option<CpuId>,
    /// Tasks of this CPU asleep waiting for I/O.
    pub io_sleepers: u32,
    /// BLOCK_SOFTIRQ raised.
    pub softirq_pending: bool,
    /// ksoftirqd was woken: softirq work waits for it.
    pub ksoftirqd_pending: bool,
    /// When the current task was switched in (for its time slice).
    pub task_since_ns: u64,
    pub runqueue: VecDeque<JobId>,
    /// `blk_cpu_done`: requests to complete in BLOCK_SOFTIRQ here.
    pub done_list: VecDeque<ReqId>,
    /// Requests handed over for this CPU to issue (`queue_affinity`).
    pub issue_list: VecDeque<ReqId>,
    pub id: CpuId,
    /// Requests whose hrtimer expired, for the local timer interrupt.
    pub timer_expired: VecDeque<ReqId>,
    /// Local timer interrupts taken.
    pub loc_count: u64,
    /// Posted MSI notifications handled (`PMN` in /proc/interrupts).
    pub pmn: u64,
    /// Notifications the IOMMU sent to this CPU.
    pub notifications_sent: u64,
    /// Device MSIs aimed at this CPU.
    pub device_msis: u64,
    /// IPIs received.
    pub ipis: u64,
    /// Per-vector delivery counts for system vectors (CAL).
    pub cal_count: u64,
    /// The CPU's kblockd worker.
    pub kworker: Kworker,
    /// Busy time by stage, ns.
    pub stage_ns: [u64; CpuStage::COUNT],
    /// LOCAL_TIMER_VECTOR: tasks whose `nanosleep` hrtimers expired (`hrtimer_wakeup`).
    pub timer_wake: Vec<JobId>,
    /// Scratch for foreseeing a completion pass on this CPU (reused: no allocation).
    pub foresight: Foresight,
}

/// A work item on a CPU's kworker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Work {
    /// kblockd's `hctx->run_work`: run the device's queue (`blk_mq_run_work_fn`).
    RunQueue(DevId),
    /// libaio's IOCB_CMD_FSYNC on system_wq (`aio_fsync_work`): the fsync, then `aio_complete`.
    AioFsync(ReqId),
    /// io_uring's IORING_OP_FSYNC on the ring's io-wq worker (`io_wq_submit_work`): the fsync, then its task_work.
    IoWqFsync(ReqId),
}

/// A CPU's kworker: the work items queued on it (queue runs of devices,
/// `hctx->run_work`, on kblockd's per-CPU high-priority pool; libaio's
/// fsyncs on system_wq's pool, run by the same modelled kworker) and the
/// scheduler program of the one it runs.
#[derive(Clone, Debug, Default)]
pub(crate) struct Kworker {
    /// Queued work items, in order.
    pub worklist: VecDeque<Work>,
    /// The fsync it runs (libaio's, or an io-wq worker's), if the item it runs is one.
    pub fsync: Option<ReqId>,
    /// Woken (runnable or running) and not yet asleep again.
    pub runnable: bool,
    /// The scheduler program of the work item it runs.
    pub sched: SchedCtx,
    /// Cost of effects applied at a step's end, charged in its next step.
    pub debt_ns: u64,
    /// When the work item it runs started.
    pub since_ns: u64,
    /// Work items run.
    pub items: u64,
}

impl Cpu {
    pub(crate) fn new(id: CpuId, sibling: Option<CpuId>) -> Cpu {
        Cpu {
            id,
            sibling,
            frames: Vec::with_capacity(8),
            current: None,
            runqueue: VecDeque::new(),
            running: Running::Idle,
            since_ns: 0,
            slow_pm: 1000,
            time: CpuTime::default(),
            irr: VectorSet::default(),
            softirq_pending: false,
            done_list: VecDeque::new(),
            issue_list: VecDeque::new(),
            ksoftirqd_pending: false,
            timer_expired: VecDeque::new(),
            timer_wake: Vec::new(),
            loc_count: 0,
            pmn: 0,
            notifications_sent: 0,
            device_msis: 0,
            task_since_ns: 0,
            ipis: 0,
            io_sleepers: 0,
            cal_count: 0,
            kworker: Kworker::default(),
            stage_ns: [0; CpuStage::COUNT],
            foresight: Foresight::default(),
        }
    }

    pub(crate) fn irqs_enabled(&self) -> bool {
        !self.frames.last().is_some_and(|f| f.is_hardirq())
    }

    /// Set `vector` in the IRR; returns whether it was pending already (the message merges).
    #[inline(always)]
    pub(crate) fn irr_set(&mut self, vector: u8) -> bool {
        self.irr.insert(vector)
    }

    /// Take the highest-priority pending vector.
    #[inline(always)]
    pub(crate) fn irr_take_highest(&mut self) -> Option<u8> {
        self.irr.take_highest()
    }

    /// Is the CPU doing anything (for SMT sharing)?
    pub(crate) fn busy(&self) -> bool {
        self.running != Running::Idle
    }
}

/// Wall time to do `work_ns` of work at `slow_pm`.
pub(crate) fn wall_ns(work_ns: u64, slow_pm: u64) -> u64 {
    if slow_pm == 1000 {
        work_ns
    } else {
        (work_ns as u128 * slow_pm as u128).div_ceil(1000) as u64
    }
}

/// Work done in `wall` ns at `slow_pm`.
pub(crate) fn work_ns(wall: u64, slow_pm: u64) -> u64 {
    if slow_pm == 1000 {
        wall
    } else {
        (wall as u128 * 1000 / slow_pm as u128) as u64
    }
}

/// The logical CPUs with the state kept beside them: whether each is busy
/// (apart, on a few lines, for the SMT check every busy/idle change makes
/// of the sibling), the SMT slow-down, and the hotplug masks. Indexed by
/// `CpuId`.
#[derive(Clone)]
pub(crate) struct Cpus {
    list: IdVec<CpuId, Cpu>,
    /// Per CPU: is it busy (`Cpu::busy`)?
    pub busy: IdVec<CpuId, bool>,
    /// Slowdown of a thread whose SMT sibling is busy, permille.
    pub smt_slow_pm: u64,
    /// CPU hotplug: which CPUs are online and active.
    pub mask: CpuMasks,
}

impl Cpus {
    pub(crate) fn new(list: Vec<Cpu>, smt_slow_pm: u64) -> Cpus {
        let n = list.len();
        Cpus { list: IdVec::from(list), busy: IdVec::from(vec![false; n]), smt_slow_pm, mask: CpuMasks::new(n) }
    }

    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    pub(crate) fn iter(&self) -> std::slice::Iter<'_, Cpu> {
        self.list.iter()
    }
}

impl std::ops::Index<CpuId> for Cpus {
    type Output = Cpu;
    #[inline(always)]
    fn index(&self, id: CpuId) -> &Cpu {
        &self.list[id]
    }
}

impl std::ops::IndexMut<CpuId> for Cpus {
    #[inline(always)]
    fn index_mut(&mut self, id: CpuId) -> &mut Cpu {
        &mut self.list[id]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn irr_merges_a_repeated_vector_and_yields_highest_first() {
        let mut c = Cpu::new(CpuId(0), None);
        assert!(!c.irr_set(0x30));
        assert!(c.irr_set(0x30));
        c.irr_set(0xfb);
        assert_eq!(c.irr_take_highest(), Some(0xfb));
        assert_eq!(c.irr_take_highest(), Some(0x30));
        assert_eq!(c.irr_take_highest(), None);
    }

    #[test]
    fn smt_slowdown_round_trips() {
        assert_eq!(wall_ns(1000, 1667), 1667);
        assert_eq!(work_ns(1667, 1667), 1000);
    }
}
