//! Kernel path: IOPOLL. `io_uring_enter(GETEVENTS)` on a ring set up with
//! IORING_SETUP_IOPOLL → `io_iopoll_check(ctx, min)` → passes of
//! `io_do_iopoll` over the ring's `iopoll_list` (requests in issue order):
//! the walk stops at the first completed request (`iopoll_completed`), or
//! at the first whose `iocb_bio_iopoll` → `bio_poll` → `blk_mq_poll` →
//! `nvme_poll` / `null_poll` found entries in its queue's CQ (drained into
//! the pass's `io_comp_batch`; a request that went to an interrupt queue
//! has no cookie and polls nothing); `iob.complete` →
//! `blk_mq_end_request_batch` → `io_complete_rw_iopoll` marks each done;
//! then the contiguous run of completed requests from where the walk
//! stopped is reaped (`__io_submit_flush_completions` posts their CQEs).
//! The loop ends at `min` events, an empty list, or `need_resched()`. A
//! walk that finds nothing is a spin: the CPU stays busy until a CQE, a
//! completion by interrupt or a request issued from io-wq pokes it.
//! A hybrid ring (IORING_SETUP_HYBRID_IOPOLL, `--patch hybrid-iopoll`)
//! sleeps before the first poll of each request the walk reaches
//! (`io_hybrid_iopoll_delay`), for half its least measured poll time.

use crate::fio::job::JobState;
use crate::hw::cpu::{Acct, Bill, Running};
use crate::ids::{CpuId, JobId};
use crate::sched::core::SCHED_SLICE_NS;
use crate::sched::task::SPIN_NS;
use crate::stats::CpuStage;
use crate::system::{Event, Sim};
use crate::workload::Program;

impl Sim {
    /// `io_iopoll_check(ctx, min)`, entered after the enter's submission.
    /// `min` = 0 (fio's commit, `force_nonspin`): exactly one pass.
    pub(crate) fn iopoll_check(&mut self, j: JobId, min: u32) {
        let job = &mut self.jobs[j];
        job.engine.ring.iopoll_min = min;
        job.engine.ring.iopoll_events = 0;
        job.engine.ring.pass.passes = 0;
        // "Don't enter poll loop if we already have events pending."
        if !job.engine.ready.is_empty() {
            return self.iopoll_return(j);
        }
        self.iopoll_next(j);
    }

    /// An iteration of SQ thread `t`'s loop ended or its spin was poked.
    pub(crate) fn iopoll_spin_done_sq(&mut self, t: JobId) {
        if self.jobs[t].task.spin {
            self.iopoll_unspin(t);
        }
        self.sq_next(t);
    }

    /// `need_resched()` on the job's CPU: a kernel thread woken there
    /// (ksoftirqd, a kblockd kworker: wake-up preemption), or a runnable
    /// task waiting past the time slice.
    pub(crate) fn need_resched(&self, j: JobId) -> bool {
        let c = &self.cpus[self.jobs[j].task.cpu];
        c.ksoftirqd_pending
            || c.kworker.runnable
            || (!c.runqueue.is_empty() && self.q.now_ns() - c.task_since_ns >= SCHED_SLICE_NS)
    }

    /// A kernel thread was woken on `cpu`: a task spinning there notices
    /// need_resched() at once.
    pub(crate) fn resched_spinner(&mut self, cpu: CpuId) {
        if let Some(j) = self.cpus[cpu].current {
            if self.jobs[j].task.spin {
                self.iopoll_poke(j);
            }
        }
    }

    /// The loop of `io_iopoll_check`: another pass, a spin, or back to the program.
    pub(crate) fn iopoll_next(&mut self, j: JobId) {
        let job = &self.jobs[j];
        let min = job.engine.ring.iopoll_min;
        let passes = job.engine.ring.pass.passes;
        if (job.engine.ring.iopoll_events >= min && (min > 0 || passes > 0)) || self.need_resched(j) {
            return self.iopoll_return(j);
        }
        if !job.engine.ring.tw_pending.is_empty() {
            // io_iopoll_check runs pending task_work first (io_run_local_work_locked):
            // uring_cmd completions that came by interrupt.
            let n = job.engine.ring.tw_pending.len() as u32;
            let pass = &mut self.jobs[j].engine.ring.pass;
            (pass.tw, pass.drain, pass.reap) = (n, None, 0);
            let bill = Bill::of(CpuStage::UringComplete, crate::io_uring::ring::tw_run_ns(&self.costs, n));
            return self.job_set_bill(j, JobState::PollPass, bill, 0);
        }
        if job.engine.ring.iopoll_list.is_empty() {
            // Requests punted to io-wq (no tag yet) join the list when issued:
            // the task goes round io_uring_enter until one does (a spin here).
            if job.task.tag_waits > 0 && job.engine.ring.iopoll_events == 0 && min > 0 {
                return self.iopoll_spin(j);
            }
            return self.iopoll_return(j);
        }
        if self.jobs[j].engine.ring.hybrid.is_some() && self.hybrid_sleep(j) {
            return;
        }
        match self.iopoll_plan(j) {
            Some(bill) => {
                self.jobs[j].engine.ring.pass.passes += 1;
                self.job_set_bill(j, JobState::PollPass, bill, 0);
            }
            // force_nonspin (min = 0): one walk over the list, then back.
            None if min == 0 => {
                self.jobs[j].engine.ring.pass.passes += 1;
                let cost = self.jobs[j].engine.ring.iopoll_list.len() as u64 * self.costs.poll_ns;
                self.jobs[j].engine.ring.pass.reap = 0;
                self.jobs[j].engine.ring.pass.drain = None;
                self.job_set(j, JobState::PollPass, cost, Acct::Sys, CpuStage::Poll, 0);
            }
            None => self.iopoll_spin(j),
        }
    }

    /// Foresee one `io_do_iopoll` pass from the list as it is: its work by
    /// stage, or `None` if the walk would find nothing (every request
    /// incomplete and every polled queue empty).
    pub(crate) fn iopoll_plan(&mut self, j: JobId) -> Option<Bill> {
        let c = &self.costs;
        let job = &self.jobs[j];
        let mut bill = Bill::default();
        let mut polls = 0;
        let mut found = None;
        let mut drain = None;
        // A hybrid ring measures each poll: the least `now - iopoll_start` of the walk.
        let (hybrid, now, mut least) = (job.engine.ring.hybrid.is_some(), self.q.now_ns(), u64::MAX);
        for (i, &r) in job.engine.ring.iopoll_list.iter().enumerate() {
            let rq = &self.reqs.reqs[r];
            if rq.iopoll_done {
                found = Some(i);
                break;
            }
            polls += 1;
            if hybrid {
                least = least.min((now + polls * c.poll_ns).saturating_sub(rq.iopoll_start_ns));
            }
            if rq.polled {
                let (d, h) = (rq.dev(), rq.hctx);
                let n = self.devs[d].queues[h].cq.len() as u32;
                if n > 0 {
                    drain = Some((d, h, n));
                    found = Some(i);
                    break;
                }
            }
        }
        if hybrid {
            self.jobs[j].engine.ring.hybrid.as_deref_mut().expect("hybrid").measured(least);
        }
        let pos = found?;
        let c = &self.costs;
        bill.add(CpuStage::Poll, polls * c.poll_ns);
        // The drain: every CQE its queue shows, ended in one batch
        // (blk_mq_end_request_batch), the CQ head doorbell written once.
        if let Some((d, h, n)) = drain {
            // The driver's ->poll after the walk, then blk_mq_end_request_batch.
            let at = self.q.now_ns() + polls * self.costs.poll_ns;
            self.driver_poll_bill(d, h, n, at, &mut bill);
            let c = &self.costs;
            let q = &self.devs[d].queues[h];
            bill.add(CpuStage::Block, n as u64 * c.blk_complete_batch_ns + c.blk_end_batch_ns);
            for &r in q.cq.iter().take(n as usize) {
                self.reqs.reqs[r].in_pass = true;
            }
        }
        // The run of completed requests from where the walk stopped.
        let job = &self.jobs[j];
        let mut reap = 0u32;
        for &r in job.engine.ring.iopoll_list.iter().skip(pos) {
            let rq = &self.reqs.reqs[r];
            if !(rq.iopoll_done || rq.in_pass) {
                break;
            }
            reap += 1;
        }
        if let Some((d, h, n)) = drain {
            for i in 0..n as usize {
                let r = self.devs[d].queues[h].cq[i];
                self.reqs.reqs[r].in_pass = false;
            }
        }
        if reap > 0 {
            bill.add(CpuStage::UringComplete, reap as u64 * self.costs.io_uring_cqe_ns + self.costs.io_uring_flush_ns);
        }
        let pass = &mut self.jobs[j].engine.ring.pass;
        pass.pos = pos as u32;
        pass.drain = drain;
        pass.reap = reap;
        Some(bill)
    }

    /// `io_hybrid_iopoll_delay`: the walk reaches a request it has not slept
    /// for (past requests that are not done and whose queues show nothing),
    /// and the ring has measured a poll: the task sleeps half the ring's
    /// `hybrid_poll_time` before polling it, on an hrtimer without slack
    /// (`hrtimer_set_expires`), in `io_schedule()`: the walk up to it and the
    /// switch out, then off its CPU until the timer's interrupt wakes it (a
    /// timer that expires during the switch wakes it as soon as it is out).
    /// A sleep of 0 ns schedules nothing. Returns whether it sleeps.
    fn hybrid_sleep(&mut self, j: JobId) -> bool {
        let ring = &self.jobs[j].engine.ring;
        let poll_time = ring.hybrid.as_deref().expect("a hybrid ring").poll_time;
        if poll_time == u64::MAX {
            return false;
        }
        let mut walked = 0u64;
        let mut due = None;
        for &r in ring.iopoll_list.iter() {
            let rq = &self.reqs.reqs[r];
            if rq.iopoll_done {
                break;
            }
            if !rq.hybrid_slept {
                due = Some(r);
                break;
            }
            walked += 1;
            if rq.polled && !self.devs[rq.dev()].queues[rq.hctx].cq.is_empty() {
                break;
            }
        }
        let Some(r) = due else { return false };
        self.reqs.reqs[r].hybrid_slept = true;
        let sleep = poll_time / 2;
        if sleep == 0 {
            return false;
        }
        let c = &self.costs;
        let walk = walked * c.poll_ns;
        let wake_at = self.q.now_ns() + walk + sleep;
        let h = self.jobs[j].engine.ring.hybrid.as_deref_mut().expect("a hybrid ring");
        h.slept = Some((r, sleep));
        h.wake_at = wake_at;
        h.sleeps += 1;
        h.sleep_ns += sleep;
        let cost = walk + c.context_switch_ns;
        self.job_set(j, JobState::PollSleepEnter, cost, Acct::Sys, CpuStage::Poll, 0);
        true
    }

    /// The hybrid sleep's switch out on `cpu` ended: off the CPU until its
    /// hrtimer fires (LOCAL_TIMER_VECTOR, `hrtimer_wakeup`), at once if it
    /// expired meanwhile.
    pub(crate) fn iopoll_sleep_entered(&mut self, cpu: CpuId, j: JobId) {
        let now = self.q.now_ns();
        let at = self.jobs[j].engine.ring.hybrid.as_deref().expect("a hybrid ring").wake_at;
        let at = at.max(now);
        let job = &mut self.jobs[j];
        job.task.state = JobState::Nanosleep;
        job.task.remaining_ns = 0;
        self.cpus[cpu].current = None;
        self.q.at(at, Event::SleepTimerExpired { job: j });
    }

    /// The hybrid sleep is over: the request it was for is polled now and
    /// the ring measures `runtime = now - iopoll_start - sleep_time`; the
    /// walk goes on.
    pub(crate) fn iopoll_hybrid_woke(&mut self, j: JobId) {
        let now = self.q.now_ns();
        let h = self.jobs[j].engine.ring.hybrid.as_deref_mut().expect("a hybrid ring");
        if let Some((r, sleep)) = h.slept.take() {
            h.measured(now.saturating_sub(self.reqs.reqs[r].iopoll_start_ns).saturating_sub(sleep));
        }
        self.iopoll_next(j);
    }

    /// Is job `j` off its CPU in a hybrid IOPOLL sleep?
    pub(crate) fn hybrid_sleeping(&self, j: JobId) -> bool {
        self.jobs[j].engine.ring.hybrid.as_deref().is_some_and(|h| h.slept.is_some())
    }

    /// The pass on `cpu` ended: drain, end the batch, reap the run.
    pub(crate) fn iopoll_pass_done(&mut self, cpu: CpuId, j: JobId) {
        self.iopoll_apply(cpu, j);
        self.iopoll_next(j);
    }

    /// The effects of ring `j`'s planned pass, run on `cpu`: task_work
    /// run, the CQ drained, the batch ended, the completed run reaped onto
    /// the CQ ring. Returns the CQEs reaped.
    pub(crate) fn iopoll_apply(&mut self, cpu: CpuId, j: JobId) -> u32 {
        for _ in 0..std::mem::take(&mut self.jobs[j].engine.ring.pass.tw) {
            // io_uring_cmd_done: the task_work posts nothing yet on an IOPOLL ring, it marks the request done.
            let r = self.jobs[j].engine.ring.tw_pending.pop_front().expect("task_work");
            self.reqs.reqs[r].iopoll_done = true;
        }
        let mut debt = 0;
        if let Some((d, h, n)) = self.jobs[j].engine.ring.pass.drain.take() {
            let n = n.min(self.devs[d].queues[h].cq.len() as u32);
            for _ in 0..n {
                let req = self.devs[d].queues[h].cq.pop_front().expect("CQE");
                debt += self.end_request(cpu, req);
            }
        }
        let (pos, want) = (self.jobs[j].engine.ring.pass.pos as usize, self.jobs[j].engine.ring.pass.reap);
        let job = &mut self.jobs[j];
        let mut k = 0;
        while k < want as usize
            && pos + k < job.engine.ring.iopoll_list.len()
            && self.reqs.reqs[job.engine.ring.iopoll_list[pos + k]].iopoll_done
        {
            k += 1;
        }
        for r in job.engine.ring.iopoll_list.drain(pos..pos + k) {
            self.reqs.reqs[r].iopoll_done = false;
            job.engine.ready.push_back(r);
        }
        job.engine.ring.iopoll_events += k as u32;
        job.task.debt_ns += debt;
        k as u32
    }

    /// Nothing to reap and nothing visible: spin until a completion pokes
    /// the task (registered as a poller of the queues its incomplete
    /// polled requests are on), or `need_resched()` ends the wait.
    fn iopoll_spin(&mut self, j: JobId) {
        self.iopoll_spin_for(j, j);
    }

    /// Task `t` spins over ring `ring`'s iopoll list (its own, or, an SQ
    /// thread, the ring it serves): a poller of the queues its incomplete
    /// polled requests are on.
    pub(crate) fn iopoll_spin_for(&mut self, t: JobId, ring: JobId) {
        self.job_set(t, JobState::PollSpin, SPIN_NS, Acct::Sys, CpuStage::Poll, 0);
        let mut queues = std::mem::take(&mut self.jobs[t].task.spin_queues);
        queues.clear();
        for &r in self.jobs[ring].engine.ring.iopoll_list.iter() {
            let rq = &self.reqs.reqs[r];
            if rq.polled && !rq.iopoll_done {
                let q = (rq.dev(), rq.hctx);
                if !queues.contains(&q) {
                    queues.push(q);
                }
            }
        }
        for &(d, h) in &queues {
            self.devs[d].queues[h].pollers.push(t);
        }
        let job = &mut self.jobs[t];
        job.task.spin = true;
        job.task.spin_queues = queues;
    }

    /// Who polls ring `j`'s requests: its SQ thread, or its own task.
    #[inline(always)]
    pub(crate) fn ring_poller(&self, j: JobId) -> JobId {
        self.jobs[j].engine.ring.sq_thread.unwrap_or(j)
    }

    /// The spin ends: no longer a poller of its queues.
    pub(crate) fn iopoll_unspin(&mut self, j: JobId) {
        let job = &mut self.jobs[j];
        job.task.spin = false;
        for &(d, h) in &job.task.spin_queues {
            self.devs[d].queues[h].pollers.retain(|&p| p != j);
        }
        job.task.spin_queues.clear();
    }

    /// Something the spinning job can reap may have appeared (a CQE on a
    /// queue it polls, one of its requests completed by an interrupt or
    /// another poller, a request issued from io-wq): its spin ends now and
    /// the next pass starts.
    pub(crate) fn iopoll_poke(&mut self, j: JobId) {
        if !self.jobs[j].task.spin {
            return;
        }
        let cpu = self.jobs[j].task.cpu;
        let running = self.cpus[cpu].running == Running::Task(j) && self.cpus[cpu].current == Some(j);
        if running {
            self.cpu_charge(cpu);
        }
        self.iopoll_unspin(j);
        self.settle_job_bill(j);
        // A step of no work left: it ends as soon as the task runs.
        let job = &mut self.jobs[j];
        job.task.segs = [(Acct::Sys, 0), (Acct::User, 0), (Acct::Sys, 0)];
        job.task.remaining_ns = 0;
        job.task.bill_sys_total = 0;
        if running {
            self.cpu_dispatch(cpu);
        }
    }

    /// The `PollSpin` step ended: poked (the next pass), or cut short by
    /// `need_resched()` (back to the program, which yields the CPU).
    pub(crate) fn iopoll_spin_done(&mut self, j: JobId) {
        if self.jobs[j].task.spin {
            self.iopoll_unspin(j);
            return self.iopoll_return(j);
        }
        self.iopoll_next(j);
    }

    /// `io_iopoll_check` returns: the program goes on with the CQEs it has.
    fn iopoll_return(&mut self, j: JobId) {
        match self.jobs[j].cfg.program {
            Program::TIoUring => self.tio_round(j, 0, 0, 0),
            Program::Fio => self.fio_iopoll_returned(j),
            Program::SqThread => self.sq_next(j),
            Program::AioHelper | Program::VerifyThread => unreachable!("{:?} does not poll", self.jobs[j].cfg.program),
        }
    }
}
