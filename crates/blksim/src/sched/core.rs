//! Kernel path: a CPU running its contexts — `schedule()` picking the
//! interrupt frame on top, ksoftirqd or the current task; a step's time
//! charged to user, sys, hardirq or softirq as it runs; SMT siblings
//! re-rated when one starts or stops; `try_to_wake_up` → `ttwu_queue` →
//! IPI to an idle CPU → the task on its run queue.

use crate::block::elevator::SchedStep;
use crate::fio::job::JobState;
use crate::hw::cpu::{wall_ns, work_ns, Acct, FrameKind, Running};
use crate::ids::{CpuId, JobId};
use crate::sched::task::SPIN_NS;
use crate::stats::{CpuStage, TraceName, Track};
use crate::system::{Event, Sim};

/// Scheduler time slice before a CPU-bound task yields to another runnable one.
pub const SCHED_SLICE_NS: u64 = 3_000_000;

impl Sim {
    /// The least-loaded CPU of the job's `cpus_allowed` (first on ties), as
    /// the scheduler would spread tasks.
    pub(crate) fn place_task(
        &self,
        i: usize,
        cfg: &crate::workload::JobConfig,
        load: &mut [u32],
    ) -> Result<CpuId, crate::error::Error> {
        let ncpus = self.cpus.len() as u32;
        let allowed: Vec<u32> = match &cfg.cpus_allowed {
            Some(list) => {
                if let Some(missing) = list.iter().find(|c| **c >= ncpus) {
                    return Err(bad(
                        i,
                        format!("cpus_allowed: CPU {missing} does not exist (machine has {ncpus} CPUs)"),
                    ));
                }
                list.clone()
            }
            None => (0..ncpus).collect(),
        };
        if allowed.is_empty() {
            return Err(bad(i, "cpus_allowed is empty".into()));
        }
        let allowed: Vec<u32> = allowed.into_iter().filter(|&c| self.cpus.mask.active[CpuId(c)]).collect();
        if allowed.is_empty() {
            return Err(bad(
                i,
                "cpus_allowed: every CPU it names is offline (nosmt): sched_setaffinity fails with EINVAL".into(),
            ));
        }
        let cpu = *allowed.iter().min_by_key(|&&c| (load[c as usize], c)).unwrap();
        load[cpu as usize] += 1;
        Ok(CpuId(cpu))
    }

    /// Charge the time since the last charge to whatever ran, and take it off its step.
    #[inline(always)]
    pub(crate) fn cpu_charge(&mut self, cpu: CpuId) {
        let now = self.q.now_ns();
        let c = &mut self.cpus[cpu];
        let wall = now - c.since_ns;
        c.since_ns = now;
        if wall == 0 {
            return;
        }
        let done = work_ns(wall, c.slow_pm);
        if self.trace.is_some() {
            self.trace_charge(cpu, now, wall, done);
        }
        let c = &mut self.cpus[cpu];
        match c.running {
            // Idle with a task of this CPU asleep in an I/O wait counts as iowait.
            Running::Idle if c.io_sleepers > 0 => c.time.iowait_ns += wall,
            Running::Idle => c.time.idle_ns += wall,
            Running::Frame => {
                let f = c.frames.last_mut().expect("running frame");
                f.remaining_ns = f.remaining_ns.saturating_sub(done);
                f.bill_wall += wall;
                match f.acct {
                    Acct::Softirq => c.time.softirq_ns += wall,
                    Acct::Sys => c.time.sys_ns += wall,
                    _ => c.time.hardirq_ns += wall,
                }
            }
            Running::Task(j) => {
                let job = &mut self.jobs[j];
                let (user, sys) = job.task.consume(done);
                // Split the wall time like the work; rounding goes to sys.
                let user_wall = match (user, sys) {
                    (0, _) => 0,
                    (_, 0) => wall,
                    // At full speed the wall time is the work: no division.
                    _ if user + sys == wall => user,
                    _ => match wall.checked_mul(user) {
                        Some(p) => p / (user + sys),
                        None => (wall as u128 * user as u128 / (user + sys) as u128) as u64,
                    },
                };
                c.time.user_ns += user_wall;
                job.task.usr_ns += user_wall;
                c.time.sys_ns += wall - user_wall;
                job.task.sys_ns += wall - user_wall;
                // By stage: the user part is the program's loop; the rest is
                // shared over the bill's other stages when the step ends.
                c.stage_ns[CpuStage::UserLoop as usize] += user_wall;
                job.task.bill_sys_wall += wall - user_wall;
                job.task.bill_cpu = cpu;
            }
        }
    }

    /// Trace slices for the time `cpu_charge` just charged (`wall` ns ending now, `done` ns of work).
    #[cold]
    #[inline(never)]
    pub(crate) fn trace_charge(&mut self, cpu: CpuId, now: u64, wall: u64, done: u64) {
        let c = &self.cpus[cpu];
        let Some(t) = self.trace.as_mut() else { return };
        let start = now - wall;
        match c.running {
            Running::Idle => {}
            Running::Frame => {
                let f = c.frames.last().expect("running frame");
                let (track, name) = f.kind.trace_name();
                t.slice(cpu.0, track, name, start, now);
            }
            Running::Task(j) => {
                // One slice per segment the work went through (sys head, user body, sys tail).
                let (mut t0, mut left) = (start, done);
                for seg in self.jobs[j].task.segs.iter().filter(|s| s.1 > 0) {
                    let take = left.min(seg.1);
                    left -= take;
                    let t1 =
                        if left == 0 { now } else { t0 + (wall as u128 * take as u128 / done.max(1) as u128) as u64 };
                    t.slice(cpu.0, Track::Task, TraceName::Job { job: j.0, user: seg.0 == Acct::User }, t0, t1);
                    t0 = t1;
                    if left == 0 {
                        break;
                    }
                }
            }
        }
    }

    /// Decide what runs now on `cpu` and schedule the end of its step.
    /// Call after `cpu_charge` whenever the CPU's state changed.
    #[inline(always)]
    pub(crate) fn cpu_dispatch(&mut self, cpu: CpuId) {
        let now = self.q.now_ns();
        // Deliver pending interrupts while interrupts are enabled.
        loop {
            let c = &mut self.cpus[cpu];
            if !c.irqs_enabled() {
                break;
            }
            let Some(vector) = c.irr_take_highest() else {
                break;
            };
            self.interrupt_enter(cpu, vector);
        }
        let c = &self.cpus[cpu];
        if c.frames.is_empty() && c.kworker.runnable && self.task_preemptible(cpu) {
            // A kblockd kworker (high priority) is runnable: it runs before the task goes on.
            // The kworker is switched in: its frame's first step.
            self.frame_push(cpu, FrameKind::Kworker);
        }
        let c = &self.cpus[cpu];
        if c.frames.is_empty() && c.ksoftirqd_pending && self.task_preemptible(cpu) {
            // ksoftirqd is runnable: the scheduler runs it before the task goes on.
            self.cpus[cpu].ksoftirqd_pending = false;
            self.ksoftirqd_run(cpu);
        }
        loop {
            let c = &mut self.cpus[cpu];
            if !(c.frames.is_empty() && c.current.is_none()) {
                break;
            }
            let Some(j) = c.runqueue.pop_front() else { break };
            c.current = Some(j);
            c.task_since_ns = now;
            self.task_switched_in(j);
            // A job whose run ended before its task first ran leaves at once.
            if self.jobs[j].task.state == JobState::Done {
                self.cpus[cpu].current = None;
            }
        }
        let c = &mut self.cpus[cpu];
        let was_busy = c.busy();
        let (running, remaining) = if let Some(f) = c.frames.last() {
            (Running::Frame, f.remaining_ns)
        } else if let Some(j) = c.current {
            (Running::Task(j), self.jobs[j].task.remaining_ns)
        } else {
            (Running::Idle, 0)
        };
        c.running = running;
        c.since_ns = now;
        // An open-ended spin (a lock waiter, a poller) has no end of its own:
        // a hand-off or a poke ends it.
        let mut end =
            if remaining >= SPIN_NS / 2 { u64::MAX } else { now.saturating_add(wall_ns(remaining, c.slow_pm)) };
        if let Running::Task(j) = running {
            // A spinning poller checks need_resched(): with another task
            // runnable its spin ends when its time slice does.
            if self.jobs[j].task.spin && !c.runqueue.is_empty() {
                end = end.min((c.task_since_ns + SCHED_SLICE_NS).max(now));
            }
        }
        if running != Running::Idle && end < u64::MAX / 2 {
            self.q.set_timer(cpu.0, end);
        } else {
            self.q.clear_timer(cpu.0);
        }
        let busy = running != Running::Idle;
        if busy != was_busy {
            self.cpus.busy[cpu] = busy;
            self.smt_update(cpu);
        }
    }

    /// A sibling's busy state changed: both threads re-rate their steps.
    pub(crate) fn smt_update(&mut self, cpu: CpuId) {
        let Some(sib) = self.cpus[cpu].sibling else {
            return;
        };
        let both = self.cpus.busy[cpu] && self.cpus.busy[sib];
        let slow = if both { self.cpus.smt_slow_pm } else { 1000 };
        if self.cpus[cpu].slow_pm == slow {
            // The two threads are always re-rated together (below), so the
            // sibling runs at this rate too: nothing changes.
            return;
        }
        for c in [cpu, sib] {
            if self.cpus[c].slow_pm != slow {
                self.cpu_charge(c);
                self.cpus[c].slow_pm = slow;
                let cc = &self.cpus[c];
                let remaining = match cc.running {
                    Running::Idle => continue,
                    Running::Frame => cc.frames.last().unwrap().remaining_ns,
                    Running::Task(j) => self.jobs[j].task.remaining_ns,
                };
                let end = if remaining >= SPIN_NS / 2 {
                    u64::MAX
                } else {
                    self.q.now_ns().saturating_add(wall_ns(remaining, slow))
                };
                if end < u64::MAX / 2 {
                    self.q.set_timer(c.0, end);
                } else if let Running::Task(j) = cc.running {
                    // A spinning poller still ends at its slice when another task waits.
                    if self.jobs[j].task.spin && !cc.runqueue.is_empty() {
                        let bound = (cc.task_since_ns + SCHED_SLICE_NS).max(self.q.now_ns());
                        self.q.set_timer(c.0, bound);
                    }
                }
            }
        }
    }

    /// The step running on `cpu` has ended.
    #[inline(always)]
    pub(crate) fn cpu_step_done(&mut self, cpu: CpuId) {
        self.cpu_charge(cpu);
        match self.cpus[cpu].running {
            Running::Idle => {}
            Running::Frame => {
                let c = &mut self.cpus[cpu];
                let f = c.frames.last_mut().unwrap();
                f.remaining_ns = 0;
                f.bill.settle_total(
                    0,
                    f.bill_total,
                    std::mem::take(&mut f.bill_wall),
                    f.default_stage(),
                    &mut c.stage_ns,
                );
                // A next step that names nothing is the frame's own.
                f.bill = Default::default();
                f.bill_total = 0;
                self.frame_step_done(cpu);
            }
            Running::Task(j) => {
                self.jobs[j].task.remaining_ns = 0;
                self.task_step_done(cpu, j);
                self.task_leave_or_yield(cpu, j, self.q.now_ns());
            }
        }
        self.cpu_dispatch(cpu);
    }

    /// Something changed on `cpu` from outside its running step (an interrupt
    /// arrived, a task was woken): re-decide what runs.
    #[inline(always)]
    pub(crate) fn cpu_kick(&mut self, cpu: CpuId) {
        self.cpu_charge(cpu);
        self.cpu_dispatch(cpu);
    }

    /// One cache line moving from `from`'s core to `to`'s: a quarter of a
    /// transfer between SMT siblings, a transfer within a last-level cache,
    /// a cross-cache (cross-socket, cross-cell) transfer otherwise.
    pub(crate) fn core_line_ns(&self, from: CpuId, to: CpuId) -> u64 {
        if from == to {
            // The same CPU: as for its core (the lock hand-off's MCS node).
            return self.costs.cacheline_transfer_ns / 4;
        }
        crate::machine::line_ns(&self.machine.topology, &self.costs, from, to)
    }

    /// A line last written on `from` read or written on `to` (nothing on the same CPU).
    pub(crate) fn line_ns(&self, from: CpuId, to: CpuId) -> u64 {
        crate::machine::line_ns(&self.machine.topology, &self.costs, from, to)
    }

    /// try_to_wake_up of a sleeping job's task from `cpu`. Returns the waker's cost.
    pub(crate) fn wake(&mut self, cpu: CpuId, j: JobId) -> u64 {
        self.jobs[j].task.wait_for = u32::MAX;
        let mut target = self.jobs[j].task.cpu;
        if !self.cpus.mask.active[target] {
            // select_task_rq: its CPU is going or gone; wake it elsewhere.
            target = self.task_migrate(j, target, false);
        }
        let mut cost = self.costs.wakeup_ns;
        if target != cpu && !self.cpus[target].busy() {
            cost += self.reschedule_ipi(target, Event::TaskWoken { job: j });
        } else {
            self.cpus[target].runqueue.push_back(j);
            if target != cpu {
                // The target is busy: it notices at its next scheduling point
                // (a spinning poller at its time slice's end).
                let spinning = matches!(self.cpus[target].running, Running::Task(t) if self.jobs[t].task.spin);
                if self.cpus[target].running == Running::Idle || spinning {
                    self.cpu_kick(target);
                }
            }
        }
        cost
    }

    /// A reschedule IPI to the idle `target` for a wake-up: `woken` happens
    /// when it arrives. Returns the sender's cost.
    #[inline(always)]
    pub(crate) fn reschedule_ipi(&mut self, target: CpuId, woken: Event) -> u64 {
        self.cpus[target].ipis += 1;
        let socket = self.machine.topology.cpus[target.idx()].socket as usize;
        let at = self.hw.ipi_routed(self.q.now_ns(), socket) + self.costs.ipi_latency_ns;
        self.q.at(at, woken);
        self.costs.ipi_send_ns
    }

    /// A woken task's IPI arrived at its idle CPU.
    pub(crate) fn task_woken(&mut self, j: JobId) {
        let cpu = self.jobs[j].task.cpu;
        if !self.cpus.mask.active[cpu] {
            self.task_migrate(j, cpu, true);
            return;
        }
        self.cpus[cpu].runqueue.push_back(j);
        self.cpu_kick(cpu);
    }

    /// The job's phase began: put its task on its CPU. Its clock (runtime,
    /// ramp) starts when the task first runs (`job_begin`), as fio's
    /// `thread_main` takes its start time in the thread.
    pub(crate) fn job_start(&mut self, j: JobId) {
        if let Some(sq) = self.jobs[j].engine.ring.sq_thread {
            self.job_start(sq);
        }
        let mut cpu = self.jobs[j].task.cpu;
        if !self.cpus.mask.active[cpu] {
            cpu = self.task_migrate(j, cpu, false);
        }
        self.cpus[cpu].runqueue.push_back(j);
        self.cpu_kick(cpu);
    }

    /// After a task's step on `cpu`: it leaves the CPU if it sleeps or
    /// ended, and yields to a runnable task once its time slice is used up.
    pub(crate) fn task_leave_or_yield(&mut self, cpu: CpuId, j: JobId, now: u64) {
        let st = self.jobs[j].task.state;
        let preemptible = self.job_preemptible(j);
        let active = self.cpus.mask.active[cpu];
        let c = &mut self.cpus[cpu];
        // Spinning for or holding a spinlock, the task runs with preemption
        // disabled: it neither yields nor moves until it is out.
        if st == JobState::Sleeping || st == JobState::Nanosleep || st == JobState::Done {
            c.current = None;
        } else if !preemptible {
        } else if !active {
            // balance_push: its CPU is going down; it moves on.
            c.current = None;
            self.task_migrate(j, cpu, true);
        } else if !c.runqueue.is_empty() && now - c.task_since_ns >= SCHED_SLICE_NS {
            c.current = None;
            c.runqueue.push_back(j);
        }
    }

    /// Move job `j` off inactive CPU `from`: a sleeping task's wait moves
    /// with it, a `runnable` one joins its new CPU's run queue (a polling
    /// one polls the queues of the requests on its iopoll list, wherever
    /// they were issued).
    pub(crate) fn task_migrate(&mut self, j: JobId, from: CpuId, runnable: bool) -> CpuId {
        // What the step ran on the old CPU is that CPU's.
        self.settle_job_bill(j);
        let to = self.fallback_cpu(j, from);
        self.cpus.mask.stats.task_migrations += 1;
        self.jobs[j].task.cpu = to;
        let state = self.jobs[j].task.state;
        if state == JobState::Sleeping && !self.jobs[j].futex_sleeper() {
            self.cpus[from].io_sleepers -= 1;
            self.cpus[to].io_sleepers += 1;
        }
        if runnable {
            self.cpus[to].runqueue.push_back(j);
            self.cpu_kick(to);
        }
        to
    }

    /// `select_fallback_rq`: the first active CPU the task may use, else
    /// the first active CPU of its node (its affinity is broken, as the
    /// kernel reports "no longer affine to cpuN"), else any active CPU.
    fn fallback_cpu(&self, j: JobId, from: CpuId) -> CpuId {
        let allowed = self.jobs[j].cfg.cpus_allowed.iter().flatten().map(|&c| CpuId(c));
        if let Some(c) = self.cpus.mask.first_active(allowed) {
            return c;
        }
        let topo = &self.machine.topology;
        let node = topo.cpus[from.idx()].node;
        let same_node = crate::ids::cpus(self.cpus.len()).filter(|c| topo.cpus[c.idx()].node == node);
        self.cpus
            .mask
            .first_active(same_node)
            .or_else(|| self.cpus.mask.first_active(crate::ids::cpus(self.cpus.len())))
            .expect("an active CPU")
    }

    /// May a kernel thread (kworker, ksoftirqd) take the CPU from its task
    /// now? Not while the task spins for or holds a spinlock (preemption
    /// is off there).
    #[inline(always)]
    pub(crate) fn task_preemptible(&self, cpu: CpuId) -> bool {
        self.cpus[cpu].current.is_none_or(|j| self.job_preemptible(j))
    }

    /// Is `j` outside a spinlock section (neither spinning for a lock nor holding one)?
    pub(crate) fn job_preemptible(&self, j: JobId) -> bool {
        let job = &self.jobs[j];
        job.task.state != JobState::LockSpin && !matches!(job.sched.step, SchedStep::Hold(_))
    }
}

/// A job's bad input (its CPUs), for job `i`.
fn bad(i: usize, message: String) -> crate::error::Error {
    crate::error::Error::bad_input(message).for_job(i)
}
