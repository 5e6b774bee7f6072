//! Kernel path: kblockd, a per-CPU high-priority workqueue, running
//! queues. `blk_mq_run_hw_queue(async)` / `blk_mq_delay_run_hw_queue` →
//! `kblockd_mod_delayed_work_on` (the run_work armed with a delay, or
//! queued now) → `queue_work_on` → `wake_up_process` of the CPU's kworker
//! (an IPI when that CPU is idle and another) → the kworker is switched in
//! at the CPU's next scheduling point → `process_one_work` →
//! `blk_mq_run_work_fn` → the dispatch (`blk_mq_sched.rs`) → the next work
//! item, or back to sleep. libaio's fsync the same way, on system_wq:
//! `aio_fsync` → `schedule_work` (the submitting CPU's pool) →
//! `aio_fsync_work` → `vfs_fsync` (`blkdev_fsync`, its flush stripped) →
//! `aio_complete`. The model runs both pools' items on one kworker per CPU,
//! and an io_uring ring's io-wq worker (`io_uring/io_wq.rs`) in the same
//! slot of its CPU: `io_wq_submit_work` → `io_fsync` → the submitter's task_work.

use crate::block::elevator::{RunWork, SchedCtx, SchedOp};
use crate::hw::cpu::{Bill, Frame, FrameKind, Stage, Work};
use crate::ids::{CpuId, DevId, ReqId};
use crate::locking::qspinlock::Actor;
use crate::stats::CpuStage;
use crate::system::{Event, Sim};

impl Sim {
    /// `blk_mq_delay_run_hw_queue(hctx, 0)` from `cpu`: queue `dev`'s
    /// run_work on kblockd now (a pending delay is cut short). A single
    /// hardware queue runs on the CPU that asks (WORK_CPU_UNBOUND); the
    /// model does the same for several. Returns the caller's cost.
    pub(crate) fn run_hw_queue_async(&mut self, cpu: CpuId, dev: DevId) -> u64 {
        let dd = self.devs[dev].elevator.as_mut().expect("a queue with a scheduler");
        match dd.run_work {
            RunWork::Queued { .. } => 0,
            RunWork::Delayed { .. } | RunWork::Idle => {
                // mod_delayed_work: the timer (if any) is cancelled.
                dd.run_work_gen += 1;
                dd.run_work = RunWork::Queued { cpu };
                self.kworker_queue(cpu, Work::RunQueue(dev), cpu)
            }
        }
    }

    /// `blk_mq_delay_run_hw_queues(q, delay)`: arm `dev`'s run_work to run
    /// on `cpu` after `delay_ns`, unless it is pending already (then its
    /// delay stands). Arming the timer is not charged.
    pub(crate) fn run_hw_queue_delayed(&mut self, cpu: CpuId, dev: DevId, delay_ns: u64) -> u64 {
        let at_ns = self.q.now_ns() + delay_ns;
        let dd = self.devs[dev].elevator.as_mut().expect("a queue with a scheduler");
        if dd.run_work != RunWork::Idle {
            return 0;
        }
        dd.run_work_gen += 1;
        let gen = dd.run_work_gen;
        dd.run_work = RunWork::Delayed { cpu, at_ns, gen };
        self.q.at(at_ns, Event::RunWorkTimer { dev, gen });
        0
    }

    /// A run_work's timer expired: the work goes on its CPU's kworker.
    pub(crate) fn run_work_timer(&mut self, dev: DevId, gen: u32) {
        let dd = self.devs[dev].elevator.as_mut().expect("a queue with a scheduler");
        let RunWork::Delayed { cpu, gen: armed, .. } = dd.run_work else { return };
        if armed != gen {
            return;
        }
        dd.run_work = RunWork::Queued { cpu };
        // The timer softirq that queues it is not charged.
        let _ = self.kworker_queue(cpu, Work::RunQueue(dev), cpu);
        if !self.cpus[cpu].busy() {
            self.cpu_kick(cpu);
        }
    }

    /// `queue_work_on(target)` from `waker`: the item joins the worklist and
    /// the kworker is woken if it sleeps. Returns the waker's cost.
    pub(crate) fn kworker_queue(&mut self, target: CpuId, work: Work, waker: CpuId) -> u64 {
        let kw = &mut self.cpus[target].kworker;
        kw.worklist.push_back(work);
        if kw.runnable {
            return 0;
        }
        let mut cost = self.costs.wakeup_ns;
        if target != waker && !self.cpus[target].busy() {
            cost += self.reschedule_ipi(target, Event::KworkerWoken { cpu: target });
        } else {
            self.cpus[target].kworker.runnable = true;
            if target != waker && !self.cpus[target].busy() {
                self.cpu_kick(target);
            } else {
                // A task spinning there (a poller) notices need_resched() at once; the
                // waker may be a timer interrupting it (a delayed queue run).
                self.resched_spinner(target);
            }
        }
        cost
    }

    /// libaio's `aio_fsync` from `cpu`: `schedule_work` of `req`'s fsync on
    /// the CPU's pool. Returns the caller's cost (a wake-up).
    pub(crate) fn aio_fsync_queue(&mut self, cpu: CpuId, req: ReqId) -> u64 {
        self.kworker_queue(cpu, Work::AioFsync(req), cpu)
    }

    /// The wake-up IPI reached the kworker's idle CPU.
    pub(crate) fn kworker_woken(&mut self, cpu: CpuId) {
        self.cpus[cpu].kworker.runnable = true;
        self.cpu_kick(cpu);
    }

    /// The kworker's frame on `cpu` (below any interrupt that came in).
    pub(crate) fn kworker_frame(&mut self, cpu: CpuId) -> &mut Frame {
        self.cpus[cpu].frames.iter_mut().rev().find(|f| f.kind == FrameKind::Kworker).expect("a kworker frame")
    }

    /// A step of the kworker on `cpu` ended (its frame is on top).
    pub(crate) fn kworker_step_done(&mut self, cpu: CpuId) {
        let stage = self.cpus[cpu].frames.last().expect("kworker frame").stage;
        match stage {
            Stage::Entry => self.kworker_item_done(cpu),
            Stage::Work => match self.cpus[cpu].kworker.fsync.take() {
                Some(req) => self.fsync_done(cpu, req),
                None => self.sched_step_done(cpu, Actor::Kworker(cpu)),
            },
            Stage::Exit => {
                self.cpus[cpu].frames.pop();
                let kw = &mut self.cpus[cpu].kworker;
                // Work queued while it was leaving wakes it again at once.
                kw.runnable = !kw.worklist.is_empty();
            }
        }
    }

    /// The kworker finished a work item (or was just switched in): the next
    /// one (`process_one_work` → `blk_mq_run_work_fn`), or it sleeps.
    pub(crate) fn kworker_item_done(&mut self, cpu: CpuId) {
        let now = self.q.now_ns();
        let Some(work) = self.cpus[cpu].kworker.worklist.pop_front() else {
            // Back to the task it preempted (if any).
            let cost = if self.cpus[cpu].current.is_some() { self.costs.context_switch_ns } else { 0 };
            let debt = std::mem::take(&mut self.cpus[cpu].kworker.debt_ns);
            let f = self.kworker_frame(cpu);
            f.stage = Stage::Exit;
            f.remaining_ns = cost + debt;
            return;
        };
        let dev = match work {
            Work::RunQueue(dev) => dev,
            Work::AioFsync(req) => return self.fsync_work(cpu, req, self.costs.kblockd_work_ns),
            Work::IoWqFsync(req) => return self.fsync_work(cpu, req, self.costs.io_wq_work_ns),
        };
        // The work is no longer pending once it runs: it can be queued again.
        let dd = self.devs[dev].elevator.as_mut().expect("a queue with a scheduler");
        if dd.run_work == (RunWork::Queued { cpu }) {
            dd.run_work = RunWork::Idle;
        }
        let kw = &mut self.cpus[cpu].kworker;
        kw.items += 1;
        kw.since_ns = now;
        kw.debt_ns += self.costs.kblockd_work_ns;
        let mut ops = std::mem::take(&mut kw.sched.ops);
        ops.clear();
        ops.push_back(SchedOp::Run(dev));
        kw.sched = SchedCtx { dev: Some(dev), ops, ..std::mem::take(&mut kw.sched) };
        self.sched_next_op(cpu, Actor::Kworker(cpu));
    }

    /// The fsync `req` on `cpu`'s kworker: libaio's `aio_fsync_work`
    /// (process_one_work, `vfs_fsync` → `blkdev_fsync`, the flush stripped,
    /// then `aio_complete`: the event into the ring, the wake-up check), or
    /// io_uring's on its io-wq worker (`io_worker_handle_work` →
    /// `io_wq_submit_work` → `io_fsync`, then `io_req_complete_post` adds the
    /// completion to the submitter's task_work); `item_ns` is the worker's
    /// own cost of taking the item.
    fn fsync_work(&mut self, cpu: CpuId, req: ReqId, item_ns: u64) {
        let now = self.q.now_ns();
        let c = &self.costs;
        // (The engine's completion: libaio's aio_complete, io_uring's task_work add.)
        let work = item_ns + c.blkdev_fsync_ns + self.engine_complete_cost(req);
        let kw = &mut self.cpus[cpu].kworker;
        kw.items += 1;
        kw.since_ns = now;
        kw.fsync = Some(req);
        let debt = std::mem::take(&mut kw.debt_ns);
        let f = self.kworker_frame(cpu);
        f.stage = Stage::Work;
        f.remaining_ns = work + debt;
        f.bill = Bill::of(CpuStage::Block, work);
        f.bill.add(CpuStage::Wakeup, debt);
        f.bill_total = f.bill.total();
    }

    /// The kworker's fsync of `req` ended: `aio_complete` (or io_uring's
    /// task_work) hands it to fio's ring (and wakes fio's task if it waits
    /// for it); then its next item.
    fn fsync_done(&mut self, cpu: CpuId, req: ReqId) {
        let now = self.q.now_ns();
        let r = &mut self.reqs.reqs[req];
        (r.t_dispatch_ns, r.t_cqe_ns, r.t_done_ns) = (now, now, now);
        let wake = self.engine_complete(cpu, req);
        self.cpus[cpu].kworker.debt_ns += wake;
        self.kworker_item_done(cpu);
    }
}
