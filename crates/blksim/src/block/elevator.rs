//! Kernel path: blk-mq-sched with mq-deadline, as a task or a kworker runs
//! it. After a syscall's bio work: `dd_bio_merge` per bio →
//! `dd_insert_requests` → `blk_mq_run_hw_queue` →
//! `blk_mq_sched_dispatch_requests` (`hctx->dispatch` first) →
//! `blk_mq_do_dispatch_sched`: rounds of `dd_dispatch_request` (one
//! `dd->lock` section per request, until nothing is left, the round is full
//! or no driver tag is free) → `blk_mq_dispatch_rq_list` → `queue_rq`;
//! a request without a driver tag goes to `hctx->dispatch` and marks
//! SCHED_RESTART, and the completion that frees a driver tag runs the queue
//! on kblockd (`workqueue.rs`). `dd->lock` is a queued spinlock, so
//! contention and its collapse come from the load.
//!
//! The 2024 series (`--patch mq-deadline-2024`, RFC v2): `dd_dispatch_request`
//! returns nothing when DD_DISPATCHING is set (the caller asks for a re-run
//! BLK_MQ_BUDGET_DELAY later, and the CPU dispatching re-checks for work
//! after each request); an inserter that finds `dd->lock` held while
//! another CPU inserts adds its requests to its CPU's bucket (DD_BUCKETS),
//! and the inserting lock holder drains the buckets, round after round; a
//! merge lookup is skipped when `dd->lock` is held (`spin_trylock`).
//! Simplifications: the DD_BUCKETS bit is set with the splice into the
//! bucket (one step's effect), bucket locks are not contended (one CPU per
//! bucket up to 32 CPUs), and the device's queues share one driver-tag pool
//! and one `run_work`.

use crate::block::lock::Actor;
use crate::block::mq_deadline::{SchedOp, SchedStep, Section, BLK_MQ_BUDGET_DELAY_NS, DD_CPU_BUCKETS};
use crate::hw::cpu::{Acct, Bill, FrameKind, Running, Stage};
use crate::ids::{CpuId, DevId, JobId};
use crate::ioengine::fio_loop::SPIN_NS;
use crate::ioengine::job::JobState;
use crate::stats::CpuStage;
use crate::system::Sim;

/// `blk_mq_do_dispatch_sched` gives up the CPU after dispatching this long (HZ).
const DISPATCH_BOUND_NS: u64 = 1_000_000_000;

impl Sim {
    /// The CPU an actor runs on.
    pub(crate) fn actor_cpu(&self, a: Actor) -> CpuId {
        match a {
            Actor::Task(j) => self.jobs[j].cpu,
            Actor::Kworker(cpu) => cpu,
        }
    }

    fn ctx(&mut self, a: Actor) -> &mut crate::block::mq_deadline::DdCtx {
        match a {
            Actor::Task(j) => &mut self.jobs[j].dd,
            Actor::Kworker(cpu) => &mut self.cpus[cpu].kworker.dd,
        }
    }

    fn ctx_dev(&self, a: Actor) -> DevId {
        match a {
            Actor::Task(j) => self.jobs[j].dd.dev,
            Actor::Kworker(cpu) => self.cpus[cpu].kworker.dd.dev,
        }
        .expect("a scheduler program names its device")
    }

    /// The actor's next step: `step`, costing `cost_ns` (a spin has no end
    /// until the lock is handed over).
    fn sched_step(&mut self, a: Actor, step: SchedStep, cost_ns: u64) {
        self.ctx(a).step = step;
        let spin = matches!(step, SchedStep::Spin(_));
        // The scheduler's sections are block-layer work, its dispatch the driver's; spinning is neither.
        let stage = match step {
            SchedStep::Spin(_) => CpuStage::Other,
            SchedStep::Issue => CpuStage::DriverSubmit,
            _ => CpuStage::Block,
        };
        match a {
            Actor::Task(j) => {
                let (state, cost) = if spin { (JobState::LockSpin, SPIN_NS) } else { (JobState::Sched, cost_ns) };
                self.job_set(j, state, cost, Acct::Sys, stage, 0);
            }
            Actor::Kworker(cpu) => {
                let debt = if spin { 0 } else { std::mem::take(&mut self.cpus[cpu].kworker.debt_ns) };
                let f = self.kworker_frame(cpu);
                f.stage = Stage::Work;
                f.remaining_ns = if spin { SPIN_NS } else { cost_ns + debt };
                f.bill = if spin { Bill::default() } else { Bill::of(stage, cost_ns) };
                f.bill.add(CpuStage::Wakeup, debt);
                f.bill_total = f.bill.total();
            }
        }
    }

    /// Cost of handing a lock from `from` to `to` (the lock's line moves to
    /// the new owner, and its MCS node first).
    pub(crate) fn lock_handoff_ns(&self, from: CpuId, to: CpuId) -> u64 {
        2 * self.core_line_ns(from, to)
    }

    /// A task's scheduler work after its syscall's bio work: a merge lookup
    /// per bio, the insertion of its requests, a run of the queue.
    pub(crate) fn queue_scheduler_sections(&mut self, j: JobId) {
        let Some(&first) = self.jobs[j].dd.pending.first() else { return };
        let dev = self.reqs.reqs[first].dev();
        let merges = if self.devs[dev].queue_settings.nomerges == 2 { 0 } else { self.jobs[j].dd.pending.len() };
        let dd = &mut self.jobs[j].dd;
        dd.dev = Some(dev);
        dd.ops.extend(std::iter::repeat_n(SchedOp::Merge, merges));
        dd.ops.push_back(SchedOp::Insert);
        dd.ops.push_back(SchedOp::Run);
    }

    /// Start the actor's next scheduler op, or end its program.
    pub(crate) fn sched_next_op(&mut self, cpu: CpuId, a: Actor) {
        let Some(op) = self.ctx(a).ops.pop_front() else {
            self.ctx(a).step = SchedStep::None;
            return match a {
                Actor::Task(j) => self.job_after_submit(cpu, j),
                Actor::Kworker(c) => self.kworker_item_done(c),
            };
        };
        let dev = self.ctx_dev(a);
        let patched = self.patch_mq_deadline_2024;
        let now = self.q.now_ns();
        let nothing_to_insert = self.ctx(a).pending.is_empty();
        let dd = self.devs[dev].elevator.as_mut().expect("mq-deadline");
        match op {
            SchedOp::Merge if patched => match dd.lock.owner {
                // spin_trylock failed: no merge lookup (the lock's line was read from its owner).
                Some(owner) => {
                    dd.merges_skipped += 1;
                    let cost = self.line_ns(self.actor_cpu(owner), cpu);
                    self.sched_step(a, SchedStep::TrylockFailed, cost);
                }
                None => {
                    dd.lock.try_acquire(a, now);
                    self.sched_hold(cpu, a, Section::Merge);
                }
            },
            SchedOp::Merge => self.sched_acquire(cpu, a, Section::Merge),
            SchedOp::Insert if nothing_to_insert => self.sched_next_op(cpu, a),
            SchedOp::Insert if patched => {
                // dd_insert_to_bucket: the lock if it is free, or if nobody inserts; else the bucket.
                if dd.lock.try_acquire(a, now) {
                    self.sched_hold(cpu, a, Section::Insert);
                } else if !dd.inserting {
                    self.sched_acquire(cpu, a, Section::Insert);
                } else {
                    let cost = self.costs.dd_bucket_ns;
                    self.sched_step(a, SchedStep::Bucket, cost);
                }
            }
            SchedOp::Insert => self.sched_acquire(cpu, a, Section::Insert),
            SchedOp::Run => self.sched_run(cpu, a),
        }
    }

    /// `spin_lock(&dd->lock)` for `section`: hold it now, or spin.
    fn sched_acquire(&mut self, cpu: CpuId, a: Actor, section: Section) {
        let now = self.q.now_ns();
        let dev = self.ctx_dev(a);
        if self.devs[dev].elevator.as_mut().unwrap().lock.acquire(a, now) {
            self.sched_hold(cpu, a, section);
        } else {
            self.sched_step(a, SchedStep::Spin(section), 0);
        }
    }

    /// The actor holds `dd->lock`: its section's work, plus the scheduler
    /// state's lines moving over when the last section ran on another core.
    fn sched_hold(&mut self, cpu: CpuId, a: Actor, section: Section) {
        let dev = self.ctx_dev(a);
        let patched = self.patch_mq_deadline_2024;
        let lock = &mut self.devs[dev].elevator.as_mut().unwrap().lock;
        let migrated = match lock.data_cpu.replace(cpu) {
            Some(from) if from != cpu => self.costs.dd_lock_data_lines * self.line_ns(from, cpu),
            _ => 0,
        };
        let c = &self.costs;
        let cost = migrated
            + match section {
                Section::Merge => c.dd_merge_ns,
                Section::Dispatch => c.dd_dispatch_ns,
                Section::Insert => {
                    // A round of __dd_insert_requests: its own requests, then (2024
                    // series) whatever the buckets hold.
                    let (insert_ns, bucket_ns) = (c.dd_insert_ns, c.dd_bucket_ns);
                    let mut moving = std::mem::take(&mut self.ctx(a).moving);
                    moving.append(&mut self.ctx(a).pending);
                    let dd = self.devs[dev].elevator.as_mut().unwrap();
                    let mut drained = 0;
                    if patched {
                        dd.inserting = true;
                        if std::mem::take(&mut dd.buckets_set) {
                            for b in dd.buckets.iter_mut().filter(|b| !b.is_empty()) {
                                drained += 1;
                                moving.extend(b.drain(..));
                            }
                        }
                    }
                    let cost = moving.len() as u64 * insert_ns + drained * bucket_ns;
                    self.ctx(a).moving = moving;
                    cost
                }
            };
        self.sched_step(a, SchedStep::Hold(section), cost);
    }

    /// `spin_unlock(&dd->lock)`: the oldest waiter gets it after the hand-off.
    fn sched_unlock(&mut self, cpu: CpuId, dev: DevId) {
        let now = self.q.now_ns();
        let dd = self.devs[dev].elevator.as_mut().unwrap();
        // The hand-off's cost depends on where the next owner runs (added below).
        if let Some((next, _)) = dd.lock.release(now, |_| 0) {
            let ns = self.lock_handoff_ns(cpu, self.actor_cpu(next));
            let l = &mut self.devs[dev].elevator.as_mut().unwrap().lock;
            l.held_since_ns += ns;
            l.stats.wait_ns += ns;
            self.lock_spin_ends(next, ns);
        }
    }

    /// The actor's current scheduler step ended.
    pub(crate) fn sched_step_done(&mut self, cpu: CpuId, a: Actor) {
        let dev = self.ctx_dev(a);
        let patched = self.patch_mq_deadline_2024;
        match self.ctx(a).step {
            SchedStep::None => unreachable!("a scheduler step without a program"),
            // The lock was handed over: the section begins.
            SchedStep::Spin(section) => self.sched_hold(cpu, a, section),
            SchedStep::TrylockFailed => self.sched_next_op(cpu, a),
            SchedStep::Hold(Section::Merge) => {
                self.sched_unlock(cpu, dev);
                self.sched_next_op(cpu, a);
            }
            SchedStep::Hold(Section::Insert) => {
                let moving = std::mem::take(&mut self.ctx(a).moving);
                let dd = self.devs[dev].elevator.as_mut().unwrap();
                dd.fifo.extend(moving.iter().copied());
                let more = patched && dd.buckets_set;
                if !more {
                    dd.inserting = false;
                }
                let mut moving = moving;
                moving.clear();
                self.ctx(a).moving = moving;
                if more {
                    // More requests reached the buckets meanwhile: another round.
                    return self.sched_hold(cpu, a, Section::Insert);
                }
                self.sched_unlock(cpu, dev);
                self.sched_next_op(cpu, a);
            }
            SchedStep::Bucket => {
                // The requests are in this CPU's bucket; the inserting lock holder takes them.
                let pending = std::mem::take(&mut self.ctx(a).pending);
                let dd = self.devs[dev].elevator.as_mut().unwrap();
                dd.buckets[cpu.idx() % DD_CPU_BUCKETS].extend(pending);
                dd.buckets_set = true;
                dd.bucket_inserts += 1;
                if dd.inserting {
                    self.sched_next_op(cpu, a)
                } else {
                    // Too late: the inserter finished. Take the lock and drain the buckets.
                    self.sched_acquire(cpu, a, Section::Insert)
                }
            }
            SchedStep::Hold(Section::Dispatch) => {
                let dd = self.devs[dev].elevator.as_mut().unwrap();
                match dd.fifo.pop_front() {
                    Some(r) => {
                        // blk_mq_get_driver_tag: without one the round stops.
                        let tagged = dd.driver_tags_free > 0;
                        if tagged {
                            dd.driver_tags_free -= 1;
                        }
                        let ctx = self.ctx(a);
                        ctx.collected.push((r, tagged));
                        ctx.round_full |= !tagged;
                    }
                    None => {
                        let ctx = self.ctx(a);
                        ctx.run_queue = true;
                        ctx.round_full = true;
                    }
                }
                let dd = self.devs[dev].elevator.as_mut().unwrap();
                if patched {
                    dd.dispatching = false;
                    dd.run_state_cpu = cpu;
                }
                self.sched_unlock(cpu, dev);
                self.sched_dispatch_next(cpu, a);
            }
            SchedStep::FlagSeen => {
                let ctx = self.ctx(a);
                ctx.run_queue = true;
                ctx.round_full = true;
                self.sched_round_end(cpu, a);
            }
            SchedStep::Issue => self.sched_issued(cpu, a),
        }
    }

    /// `blk_mq_run_hw_queue` → `blk_mq_sched_dispatch_requests`: requests
    /// left on `hctx->dispatch` first (they hold no scheduler lock), then
    /// rounds from the scheduler.
    fn sched_run(&mut self, cpu: CpuId, a: Actor) {
        let dev = self.ctx_dev(a);
        let dd = self.devs[dev].elevator.as_mut().unwrap();
        if !dd.has_pending() {
            return self.sched_next_op(cpu, a);
        }
        if dd.dispatch.is_empty() {
            return self.sched_round(cpu, a);
        }
        let n = dd.dispatch.len().min(dd.driver_tags_free as usize);
        if n == 0 {
            dd.restart = true;
            return self.sched_next_op(cpu, a);
        }
        dd.driver_tags_free -= n as u32;
        let taken: Vec<_> = dd.dispatch.drain(..n).collect();
        if !dd.dispatch.is_empty() {
            dd.restart = true;
        }
        let ctx = self.ctx(a);
        ctx.collected.clear();
        ctx.collected.extend(taken.into_iter().map(|r| (r, true)));
        self.sched_issue(a);
    }

    /// A new round of `__blk_mq_do_dispatch_sched`.
    fn sched_round(&mut self, cpu: CpuId, a: Actor) {
        let ctx = self.ctx(a);
        ctx.collected.clear();
        ctx.run_queue = false;
        ctx.round_full = false;
        self.sched_dispatch_next(cpu, a);
    }

    /// Take the round's next request from the scheduler, or end the round.
    fn sched_dispatch_next(&mut self, cpu: CpuId, a: Actor) {
        let dev = self.ctx_dev(a);
        let patched = self.patch_mq_deadline_2024;
        let (full, taken) = {
            let ctx = self.ctx(a);
            (ctx.round_full, ctx.collected.len() as u32)
        };
        let dd = self.devs[dev].elevator.as_mut().unwrap();
        if full || taken >= dd.max_dispatch || dd.fifo.is_empty() {
            return self.sched_round_end(cpu, a);
        }
        if patched {
            if dd.dispatching {
                // Another CPU is in dd_dispatch_request: leave it to that CPU.
                dd.dispatch_skipped += 1;
                let from = dd.run_state_cpu;
                let cost = self.line_ns(from, cpu);
                return self.sched_step(a, SchedStep::FlagSeen, cost);
            }
            dd.dispatching = true;
            dd.run_state_cpu = cpu;
        }
        self.sched_acquire(cpu, a, Section::Dispatch);
    }

    /// The round has its requests: issue them, or (none) ask for a re-run
    /// if the scheduler had work it could not give.
    fn sched_round_end(&mut self, cpu: CpuId, a: Actor) {
        if !self.ctx(a).collected.is_empty() {
            return self.sched_issue(a);
        }
        if self.ctx(a).run_queue {
            let dev = self.ctx_dev(a);
            let cost = self.run_hw_queue_delayed(cpu, dev, BLK_MQ_BUDGET_DELAY_NS);
            self.add_actor_debt(a, cost);
        }
        self.sched_next_op(cpu, a)
    }

    /// `blk_mq_dispatch_rq_list`: `queue_rq` for each request with a driver tag.
    fn sched_issue(&mut self, a: Actor) {
        let dev = self.ctx_dev(a);
        let ctx = match a {
            Actor::Task(j) => &self.jobs[j].dd,
            Actor::Kworker(c) => &self.cpus[c].kworker.dd,
        };
        let tagged = ctx.collected.iter().filter(|c| c.1);
        let (n, queue_rq): (u64, u64) =
            tagged.fold((0, 0), |(n, ns), &(r, _)| (n + 1, ns + self.driver_queue_rq_cost(r)));
        let cost = queue_rq + if n > 0 { self.driver_commit_cost(dev) } else { 0 };
        self.sched_step(a, SchedStep::Issue, cost);
    }

    /// The driver took the round's requests; one without a driver tag goes
    /// to `hctx->dispatch` (SCHED_RESTART). Another round follows if this
    /// one dispatched anything, unless the CPU is wanted elsewhere.
    fn sched_issued(&mut self, cpu: CpuId, a: Actor) {
        let dev = self.ctx_dev(a);
        let collected = std::mem::take(&mut self.ctx(a).collected);
        let mut dispatched = false;
        let mut debt = 0;
        for &(req, tagged) in &collected {
            if tagged {
                dispatched = true;
                let hctx = self.reqs.reqs[req].hctx;
                debt += self.driver_issue(cpu, dev, hctx, req);
            } else {
                let dd = self.devs[dev].elevator.as_mut().unwrap();
                dd.dispatch.push_back(req);
                dd.restart = true;
            }
        }
        let mut collected = collected;
        collected.clear();
        self.ctx(a).collected = collected;
        self.add_actor_debt(a, debt);
        if !dispatched {
            return self.sched_next_op(cpu, a);
        }
        if self.sched_need_resched(a) {
            // The CPU is wanted: kblockd runs the queue instead.
            let cost = self.run_hw_queue_async(cpu, dev);
            self.add_actor_debt(a, cost);
            return self.sched_next_op(cpu, a);
        }
        self.sched_round(cpu, a)
    }

    /// `need_resched()` in the dispatch loop: a task yields to the kworker or
    /// ksoftirqd woken on its CPU; a kworker yields to nothing.
    fn sched_need_resched(&self, a: Actor) -> bool {
        match a {
            Actor::Task(j) => {
                let c = &self.cpus[self.jobs[j].cpu];
                c.kworker.runnable || c.ksoftirqd_pending
            }
            Actor::Kworker(cpu) => self.q.now_ns() - self.cpus[cpu].kworker.since_ns >= DISPATCH_BOUND_NS,
        }
    }

    fn add_actor_debt(&mut self, a: Actor, ns: u64) {
        match a {
            Actor::Task(j) => self.jobs[j].debt_ns += ns,
            Actor::Kworker(c) => self.cpus[c].kworker.debt_ns += ns,
        }
    }

    /// A completion freed a driver tag of `dev`: SCHED_RESTART runs the
    /// queue on kblockd. Returns the completing context's cost.
    #[inline(always)]
    pub(crate) fn sched_restart(&mut self, cpu: CpuId, dev: DevId) -> u64 {
        let Some(dd) = self.devs[dev].elevator.as_mut() else { return 0 };
        dd.driver_tags_free += 1;
        if !std::mem::take(&mut dd.restart) {
            return 0;
        }
        self.run_hw_queue_async(cpu, dev)
    }

    /// An actor spinning for a lock gets it `after_ns` from now.
    pub(crate) fn lock_spin_ends(&mut self, a: Actor, after_ns: u64) {
        match a {
            Actor::Task(j) => {
                debug_assert_eq!(self.jobs[j].state, JobState::LockSpin);
                let cpu = self.jobs[j].cpu;
                let running = self.cpus[cpu].running == Running::Task(j);
                if running {
                    self.cpu_charge(cpu);
                }
                let bill = Bill::of(CpuStage::Other, after_ns);
                self.job_set_segs(
                    j,
                    JobState::LockSpin,
                    [(Acct::Sys, after_ns), (Acct::User, 0), (Acct::Sys, 0)],
                    bill,
                    0,
                );
                if running {
                    self.cpu_dispatch(cpu);
                }
            }
            Actor::Kworker(cpu) => {
                let top = self.cpus[cpu].frames.last().is_some_and(|f| f.kind == FrameKind::Kworker);
                let running = top && self.cpus[cpu].running == Running::Frame;
                if running {
                    self.cpu_charge(cpu);
                }
                self.kworker_frame(cpu).remaining_ns = after_ns;
                if running {
                    self.cpu_dispatch(cpu);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::block::lock::Actor;
    use crate::block::mq_deadline::{RunWork, SchedStep, Section};
    use crate::ids::DevId;
    use crate::machine::builtin;
    use crate::settings::Settings;
    use crate::system::Sim;
    use crate::workload::{IoEngine, IoUringOptions, JobConfig};

    /// 32 io_uring submitters at QD4 on single-queue null_blk with mq-deadline.
    fn sim(patch: bool, jobs: u32) -> Sim {
        let m = builtin("ryzen-7950x").unwrap();
        let mut s = Settings::default();
        s.apply_cmdline("null_blk.submit_queues=1").unwrap();
        s.apply_write("/sys/block/nullb0/queue/scheduler=mq-deadline", &["nullb0".into()]).unwrap();
        if patch {
            s.apply_patch("mq-deadline-2024").unwrap();
        }
        let jobs: Vec<JobConfig> = (0..jobs)
            .map(|i| {
                let mut j = JobConfig::new(&format!("j{i}"));
                j.ioengine = IoEngine::IoUring(IoUringOptions { fixedbufs: true, ..Default::default() });
                j.direct = true;
                j.bs = [512; 3];
                j.iodepth = 4;
                j.iodepth_batch_submit = 4;
                j.iodepth_batch_complete_min = 4;
                j.iodepth_batch_complete_max = 4;
                j.filenames = vec!["/dev/nullb0".into()];
                j.runtime_ns = Some(2_000_000);
                j.time_based = true;
                j
            })
            .collect();
        Sim::build(&m, &s, &jobs, 1).unwrap()
    }

    /// Actors inside `dd_dispatch_request` (spinning for `dd->lock` to dispatch, or holding it to).
    fn dispatchers(s: &Sim) -> Vec<Actor> {
        let dispatching =
            |step: SchedStep| matches!(step, SchedStep::Spin(Section::Dispatch) | SchedStep::Hold(Section::Dispatch));
        let tasks = s.jobs.iter().filter(|j| dispatching(j.dd.step)).map(|j| Actor::Task(j.index));
        let workers = s.cpus.iter().filter(|c| dispatching(c.kworker.dd.step)).map(|c| Actor::Kworker(c.id));
        tasks.chain(workers).collect()
    }

    /// Is someone about to dispatch what the scheduler holds: an actor in
    /// its scheduler program, or a kworker with the queue run on its list?
    /// (A run armed BLK_MQ_BUDGET_DELAY later does not count: the device
    /// would idle that long.)
    fn dispatch_coming(s: &Sim) -> bool {
        let dd = s.devs[DevId(0)].elevator.as_ref().unwrap();
        let running = |step: SchedStep, ops_left: bool| step != SchedStep::None || ops_left;
        s.jobs.iter().any(|j| running(j.dd.step, !j.dd.ops.is_empty()))
            || s.cpus.iter().any(|c| running(c.kworker.dd.step, !c.kworker.worklist.is_empty()) || c.kworker.runnable)
            || matches!(dd.run_work, RunWork::Queued { .. })
    }

    /// Step the simulation event by event, checking `check` after each.
    fn step_all(s: &mut Sim, mut check: impl FnMut(&Sim)) {
        s.start_phase();
        while !s.all_done() {
            let Some(ev) = s.q.pop() else { panic!("{}", s.stall_report()) };
            s.handle(ev);
            check(s);
        }
    }

    #[test]
    fn with_the_2024_series_dispatch_never_runs_on_two_cpus_at_once() {
        let mut s = sim(true, 32);
        let (mut steps, mut busy) = (0u64, 0u64);
        step_all(&mut s, |s| {
            let d = dispatchers(s);
            assert!(d.len() <= 1, "two dispatchers at once: {d:?}");
            let dd = s.devs[DevId(0)].elevator.as_ref().unwrap();
            assert_eq!(dd.dispatching, !d.is_empty(), "DD_DISPATCHING is set exactly while someone dispatches");
            steps += 1;
            busy += d.len() as u64;
        });
        let dd = s.devs[DevId(0)].elevator.as_ref().unwrap();
        assert!(dd.dispatch_skipped > 100, "other CPUs found dispatch busy and left: {}", dd.dispatch_skipped);
        assert!(busy * 10 > steps, "someone dispatched much of the time: {busy} of {steps}");
        // Without the series several CPUs dispatch at once.
        let mut s = sim(false, 32);
        let mut most = 0;
        step_all(&mut s, |s| most = most.max(dispatchers(s).len()));
        assert!(most >= 4, "mainline: {most} dispatchers at most");
    }

    #[test]
    fn a_skipped_dispatch_is_always_run_again_and_no_request_waits_while_the_device_has_room() {
        for (patch, jobs) in [(true, 32), (true, 3), (false, 32)] {
            let mut s = sim(patch, jobs);
            step_all(&mut s, |s| {
                let d = &s.devs[DevId(0)];
                let dd = d.elevator.as_ref().unwrap();
                let waiting = dd.fifo.len() + dd.dispatch.len() + dd.bucketed();
                // Requests wait while the device could take them (a driver tag is free).
                if waiting > 0 && (dd.driver_tags_free > 0 || d.disk.inflight == 0) {
                    assert!(
                        dispatch_coming(s),
                        "patch {patch}, {jobs} jobs: {waiting} requests wait, the device has room and no dispatch is coming"
                    );
                }
            });
            // Every I/O completed: nothing was left behind.
            let inflight: u32 = s.jobs.iter().map(|j| j.inflight).sum();
            assert_eq!(inflight, 0, "patch {patch}: {inflight} I/Os never completed");
            assert_eq!(s.reqs.live, 0);
        }
    }
}
