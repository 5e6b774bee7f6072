//! Kernel path: blk-mq-sched, as a task or a kworker runs it, calling
//! the queue's elevator ops (`elevator.rs`; mq-deadline in
//! `mq_deadline.rs`). After a syscall's bio work: `bio_merge` per bio →
//! `insert_requests` → `blk_mq_run_hw_queue` →
//! `blk_mq_sched_dispatch_requests` (`hctx->dispatch` first) →
//! `__blk_mq_do_dispatch_sched`: rounds of `dispatch_request` (one locked
//! section per request, until the scheduler has no work, the round is
//! full or no driver tag is free) → `blk_mq_dispatch_rq_list` →
//! `queue_rq`; a request without a driver tag goes to `hctx->dispatch`
//! and marks SCHED_RESTART, and the completion that frees a driver tag
//! runs the queue on kblockd (`workqueue.rs`). The scheduler's locks are
//! queued spinlocks: an actor spins for a section's lock (sys time) until
//! the holder hands it over, at the cost of the line moving.

use crate::block::elevator::{
    Begin, Elevator, SchedCtx, SchedEnv, SchedOp, SchedStep, Section, BLK_MQ_BUDGET_DELAY_NS,
};
use crate::block::request::Owner;
use crate::fio::job::JobState;
use crate::hw::cpu::{Acct, Bill, Stage};
use crate::ids::{CpuId, DevId, ReqId};
use crate::locking::qspinlock::Actor;
use crate::sched::task::SPIN_NS;
use crate::stats::CpuStage;
use crate::system::{Event, Sim};

/// `blk_mq_do_dispatch_sched` gives up the CPU after dispatching this long (HZ).
const DISPATCH_BOUND_NS: u64 = 1_000_000_000;

/// The elevator of `dev` and what its ops see, borrowed apart from the rest of `Sim`.
macro_rules! elevator_env {
    ($sim:expr, $dev:expr) => {{
        let Sim { devs, costs, machine, jobs, q, .. } = $sim;
        let actor_cpu = move |a: Actor| match a {
            Actor::Task(j) => jobs[j].task.cpu,
            Actor::Kworker(cpu) => cpu,
        };
        let e = devs[$dev].elevator.as_mut().expect("a queue with a scheduler");
        (e, costs, machine, q.now_ns(), actor_cpu)
    }};
}

impl Sim {
    /// The CPU an actor runs on.
    pub(crate) fn actor_cpu(&self, a: Actor) -> CpuId {
        match a {
            Actor::Task(j) => self.jobs[j].task.cpu,
            Actor::Kworker(cpu) => cpu,
        }
    }

    fn ctx(&mut self, a: Actor) -> &mut SchedCtx {
        match a {
            Actor::Task(j) => &mut self.jobs[j].sched,
            Actor::Kworker(cpu) => &mut self.cpus[cpu].kworker.sched,
        }
    }

    fn ctx_dev(&self, a: Actor) -> DevId {
        match a {
            Actor::Task(j) => self.jobs[j].sched.dev,
            Actor::Kworker(cpu) => self.cpus[cpu].kworker.sched.dev,
        }
        .expect("a scheduler program names its device")
    }

    /// The elevator of the device the actor's program works on.
    fn elevator(&mut self, a: Actor) -> &mut Elevator {
        let dev = self.ctx_dev(a);
        self.devs[dev].elevator.as_mut().expect("a queue with a scheduler")
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

    /// Start the actor's next scheduler op, or end its program.
    pub(crate) fn sched_next_op(&mut self, cpu: CpuId, a: Actor) {
        let Some(op) = self.ctx(a).ops.pop_front() else {
            self.ctx(a).step = SchedStep::None;
            return match a {
                Actor::Task(j) => self.job_after_submit(cpu, j),
                Actor::Kworker(c) => self.kworker_item_done(c),
            };
        };
        self.ctx(a).dev = Some(op.dev());
        let (section, begin) = match op {
            SchedOp::Run(_) => return self.sched_run(cpu, a),
            SchedOp::Merge(_) => (Section::Merge, self.elevator_begin(a, cpu, Section::Merge)),
            SchedOp::Insert(dev) => {
                // This device's pending requests, in order.
                let reqs = &self.reqs;
                let ctx = match a {
                    Actor::Task(j) => &mut self.jobs[j].sched,
                    Actor::Kworker(c) => &mut self.cpus[c].kworker.sched,
                };
                let mine = ctx.pending.extract_if(.., |r| reqs.reqs[*r].dev() == dev);
                ctx.inserting.extend(mine);
                if ctx.inserting.is_empty() {
                    return self.sched_next_op(cpu, a);
                }
                (Section::Insert, self.elevator_begin(a, cpu, Section::Insert))
            }
        };
        self.sched_begin(cpu, a, section, begin);
    }

    /// Ask the elevator how `section` of `a` on `cpu` begins.
    fn elevator_begin(&mut self, a: Actor, cpu: CpuId, section: Section) -> Begin {
        let dev = self.ctx_dev(a);
        let (e, costs, machine, now, actor_cpu) = elevator_env!(self, dev);
        let env = SchedEnv { costs, topo: &machine.topology, now, actor_cpu: &actor_cpu };
        match section {
            Section::Merge => e.ops_mut().bio_merge(&env, a, cpu),
            Section::Insert => e.ops_mut().insert_requests(&env, a, cpu),
            Section::Dispatch => e.ops_mut().dispatch_begin(&env, cpu),
        }
    }

    /// Begin `section` as the elevator said.
    fn sched_begin(&mut self, cpu: CpuId, a: Actor, section: Section, begin: Begin) {
        match begin {
            Begin::Lock => self.sched_acquire(cpu, a, section),
            Begin::Locked => self.sched_hold(cpu, a, section),
            Begin::Skip(cost) => self.sched_step(a, SchedStep::Skipped, cost),
            Begin::Defer(cost) => self.sched_step(a, SchedStep::Deferred, cost),
            Begin::Busy(cost) => self.sched_step(a, SchedStep::Busy, cost),
        }
    }

    /// `spin_lock` of `section`'s lock: hold it now, or spin.
    fn sched_acquire(&mut self, cpu: CpuId, a: Actor, section: Section) {
        let now = self.q.now_ns();
        if self.elevator(a).ops_mut().lock(section, cpu).acquire(a, now) {
            self.sched_hold(cpu, a, section);
        } else {
            self.sched_step(a, SchedStep::Spin(section), 0);
        }
    }

    /// The actor holds `section`'s lock: the section's work, as the
    /// elevator costs it (its data's lines included).
    fn sched_hold(&mut self, cpu: CpuId, a: Actor, section: Section) {
        let mut moving = std::mem::take(&mut self.ctx(a).moving);
        if section == Section::Insert {
            moving.append(&mut self.ctx(a).inserting);
        }
        let dev = self.ctx_dev(a);
        let (e, costs, machine, now, actor_cpu) = elevator_env!(self, dev);
        let env = SchedEnv { costs, topo: &machine.topology, now, actor_cpu: &actor_cpu };
        let ops = e.ops_mut();
        let from = ops.lock(section, cpu).data_cpu.replace(cpu);
        let cost = ops.section_cost(&env, section, cpu, from, &mut moving);
        self.ctx(a).moving = moving;
        self.sched_step(a, SchedStep::Hold(section), cost);
    }

    /// `spin_unlock` of `section`'s lock: the oldest waiter gets it after the hand-off.
    fn sched_unlock(&mut self, cpu: CpuId, a: Actor, section: Section) {
        let now = self.q.now_ns();
        // The hand-off's cost depends on where the next owner runs (added below).
        if let Some((next, _)) = self.elevator(a).ops_mut().lock(section, cpu).release(now, |_| 0) {
            let ns = self.lock_handoff_ns(cpu, self.actor_cpu(next));
            let l = self.elevator(a).ops_mut().lock(section, cpu);
            l.held_since_ns += ns;
            l.stats.wait_ns += ns;
            self.lock_spin_ends(next, ns);
        }
    }

    /// The actor's current scheduler step ended.
    pub(crate) fn sched_step_done(&mut self, cpu: CpuId, a: Actor) {
        match self.ctx(a).step {
            SchedStep::None => unreachable!("a scheduler step without a program"),
            // The lock was handed over: the section begins.
            SchedStep::Spin(section) => self.sched_hold(cpu, a, section),
            SchedStep::Skipped => self.sched_next_op(cpu, a),
            SchedStep::Hold(Section::Merge) => {
                self.sched_unlock(cpu, a, Section::Merge);
                self.sched_next_op(cpu, a);
            }
            SchedStep::Hold(Section::Insert) => {
                let mut moving = std::mem::take(&mut self.ctx(a).moving);
                let dev = self.ctx_dev(a);
                // Each request first tries to merge into one the scheduler holds.
                let debt = self.elv_insert_merges(cpu, dev, &mut moving);
                self.add_actor_debt(a, debt);
                let (e, costs, machine, now, actor_cpu) = elevator_env!(self, dev);
                let env = SchedEnv { costs, topo: &machine.topology, now, actor_cpu: &actor_cpu };
                let more = e.ops_mut().inserted(&env, cpu, &moving, &self.reqs);
                moving.clear();
                self.ctx(a).moving = moving;
                if more {
                    // More requests were left for the holder meanwhile: another round.
                    return self.sched_hold(cpu, a, Section::Insert);
                }
                self.sched_unlock(cpu, a, Section::Insert);
                self.sched_next_op(cpu, a);
            }
            SchedStep::Deferred => {
                let mut inserting = std::mem::take(&mut self.ctx(a).inserting);
                let taken = self.elevator(a).ops_mut().deferred(cpu, &mut inserting);
                self.ctx(a).inserting = inserting;
                if taken {
                    self.sched_next_op(cpu, a)
                } else {
                    // Too late: the inserter finished. Take the lock and insert.
                    self.sched_acquire(cpu, a, Section::Insert)
                }
            }
            SchedStep::Hold(Section::Dispatch) => {
                let dev = self.ctx_dev(a);
                let (e, costs, machine, now, actor_cpu) = elevator_env!(self, dev);
                let env = SchedEnv { costs, topo: &machine.topology, now, actor_cpu: &actor_cpu };
                let rq = e.ops_mut().dispatch_request(&env, cpu, &self.reqs);
                match rq {
                    Some(r) => {
                        // blk_mq_get_driver_tag: without one the round stops.
                        let tagged = e.driver_tags_free > 0;
                        if tagged {
                            e.driver_tags_free -= 1;
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
                self.sched_unlock(cpu, a, Section::Dispatch);
                self.sched_dispatch_next(cpu, a);
            }
            SchedStep::Busy => {
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
        let e = self.elevator(a);
        if !e.has_pending() {
            return self.sched_next_op(cpu, a);
        }
        if e.dispatch.is_empty() {
            return self.sched_round(cpu, a);
        }
        let n = e.dispatch.len().min(e.driver_tags_free as usize);
        if n == 0 {
            e.restart = true;
            return self.sched_next_op(cpu, a);
        }
        e.driver_tags_free -= n as u32;
        let taken: Vec<_> = e.dispatch.drain(..n).collect();
        if !e.dispatch.is_empty() {
            e.restart = true;
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

    /// Take the round's next request from the scheduler (`has_work`, then
    /// `dispatch_request`), or end the round.
    fn sched_dispatch_next(&mut self, cpu: CpuId, a: Actor) {
        let (full, taken) = {
            let ctx = self.ctx(a);
            (ctx.round_full, ctx.collected.len() as u32)
        };
        let e = self.elevator(a);
        if full || taken >= e.max_dispatch || !e.ops().has_work() {
            return self.sched_round_end(cpu, a);
        }
        let begin = self.elevator_begin(a, cpu, Section::Dispatch);
        self.sched_begin(cpu, a, Section::Dispatch, begin);
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
            Actor::Task(j) => &self.jobs[j].sched,
            Actor::Kworker(c) => &self.cpus[c].kworker.sched,
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
                let e = self.devs[dev].elevator.as_mut().expect("a queue with a scheduler");
                e.dispatch.push_back(req);
                e.restart = true;
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

    /// A request that waited for a scheduler tag got one from a completion
    /// on `cpu`: it is inserted from there (merged into a request the
    /// scheduler holds if it can: then `true`, and its tag is free again)
    /// and kblockd runs the queue. Returns the completing context's cost.
    pub(crate) fn sched_insert_waiter(&mut self, cpu: CpuId, dev: DevId, req: ReqId) -> (u64, bool) {
        if self.is_passthru(req) {
            // Past the scheduler, on hctx->dispatch (`queue_scheduler_sections`).
            self.devs[dev].elevator.as_mut().expect("a scheduler").dispatch.push_back(req);
            return (self.run_hw_queue_async(cpu, dev), false);
        }
        let merged = self.elv_insert_merge(cpu, dev, req);
        let (e, costs, machine, now, actor_cpu) = elevator_env!(self, dev);
        let env = SchedEnv { costs, topo: &machine.topology, now, actor_cpu: &actor_cpu };
        if let Some(freed) = merged {
            // The insertion's work, its merge lookup in it; and what the tags its merges freed start.
            return (e.ops().insert_ns(&env) + freed, true);
        }
        let cost = e.ops_mut().insert_waiter(&env, req, &self.reqs);
        (cost + self.run_hw_queue_async(cpu, dev), false)
    }

    /// `need_resched()` in the dispatch loop: a task yields to the kworker or
    /// ksoftirqd woken on its CPU; a kworker yields to nothing.
    fn sched_need_resched(&self, a: Actor) -> bool {
        match a {
            Actor::Task(j) => {
                let c = &self.cpus[self.jobs[j].task.cpu];
                c.kworker.runnable || c.ksoftirqd_pending
            }
            Actor::Kworker(cpu) => self.q.now_ns() - self.cpus[cpu].kworker.since_ns >= DISPATCH_BOUND_NS,
        }
    }

    /// `req` is an NVMe passthrough command (`blk_rq_is_passthrough`).
    pub(crate) fn is_passthru(&self, req: ReqId) -> bool {
        matches!(self.reqs.reqs[req].owner, Owner::Job(j) if self.jobs[j].passthru())
    }

    fn add_actor_debt(&mut self, a: Actor, ns: u64) {
        match a {
            Actor::Task(j) => self.jobs[j].task.debt_ns += ns,
            Actor::Kworker(c) => self.cpus[c].kworker.debt_ns += ns,
        }
    }

    /// A completion on `cpu` ended `req` of `dev`: its driver tag is freed
    /// (SCHED_RESTART runs the queue on kblockd) and the scheduler's
    /// `completed_request` / `finish_request` run. Returns the completing
    /// context's cost.
    #[inline(always)]
    pub(crate) fn sched_request_done(&mut self, cpu: CpuId, dev: DevId, req: ReqId) -> u64 {
        let Some(e) = self.devs[dev].elevator.as_mut() else { return 0 };
        e.driver_tags_free += 1;
        let mut cost = 0;
        if std::mem::take(&mut e.restart) {
            cost += self.run_hw_queue_async(cpu, dev);
        }
        if self.is_passthru(req) {
            // Not the scheduler's (no RQF_USE_SCHED): no completed_request or finish_request.
            return cost;
        }
        let (e, costs, machine, now, actor_cpu) = elevator_env!(self, dev);
        let env = SchedEnv { costs, topo: &machine.topology, now, actor_cpu: &actor_cpu };
        let done = e.ops_mut().request_done(&env, req, &self.reqs.reqs[req]);
        if let Some(at) = done.timer_at {
            if e.timer_at.is_none_or(|t| at < t) {
                e.timer_at = Some(at);
                e.timer_gen += 1;
                let gen = e.timer_gen;
                self.q.at(at, Event::ElevatorTimer { dev, gen });
            }
        }
        if done.run_queue {
            cost += self.run_hw_queue_async(cpu, dev);
        }
        cost + done.cost_ns
    }

    /// The timer of `dev`'s scheduler fired (its softirq is not charged).
    pub(crate) fn elevator_timer(&mut self, dev: DevId, gen: u32) {
        let (e, costs, machine, now, actor_cpu) = elevator_env!(self, dev);
        if gen != e.timer_gen || e.timer_at.is_none() {
            return;
        }
        e.timer_at = None;
        let env = SchedEnv { costs, topo: &machine.topology, now, actor_cpu: &actor_cpu };
        e.ops_mut().timer(&env);
    }
}
