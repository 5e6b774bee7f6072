//! fio: its `t/io_uring` submitter (`submitter_uring_fn`) as a
//! program on its CPU. One round of its loop is one step: the task_work
//! its last `io_uring_enter` ran (sys), `reap_events_uring` over every CQE
//! and `prep_more_ios_uring` (user: `get_next_file`, `get_offset`), then
//! the next `io_uring_enter(to_submit, to_wait, GETEVENTS if to_wait)`'s
//! submission (sys), with t/io_uring's own arithmetic: `inflight` counts
//! the prepared SQEs, `to_wait = 0` while `inflight + to_submit <= depth`,
//! else `min(inflight + to_submit, -c)`. The enter then waits: on an
//! IOPOLL ring in `io_iopoll_check` (`iopoll.rs`), otherwise in
//! `io_cqring_wait` (DEFER_TASKRUN: local task_work, a lazy wake-up when
//! enough completions are queued). A wait for more CQEs than there are
//! I/Os in flight never ends on Linux: the submitter is stuck, and the run
//! ends it at its runtime.

use crate::fio::job::{Chain, IoError, JobState};
use crate::hw::cpu::{Acct, Bill};
use crate::ids::{CpuId, JobId};
use crate::stats::CpuStage;
use crate::system::{Event, Sim};
use crate::workload::Program;

/// How often a stuck submitter's end looks again for I/Os still in flight.
const STUCK_RECHECK_NS: u64 = 100_000;

impl Sim {
    /// Does job `j` run t/io_uring's io_uring loop (not its sync `-S1` loop)?
    pub(crate) fn is_tio_uring(&self, j: JobId) -> bool {
        let job = &self.jobs[j];
        job.cfg.program == Program::TIoUring && job.is_uring()
    }

    /// The submitter thread starts its loop.
    pub(crate) fn tio_start(&mut self, j: JobId) {
        if self.is_tio_uring(j) {
            self.tio_round(j, 0, 0, 0)
        } else {
            self.job_next(j)
        }
    }

    /// Plan one round: `head_ns` of sys time first (a context switch back
    /// from sleep), running `tw` task_work items (their CQEs posted); then
    /// the user part (`user_ns`, then the reap of every CQE, the round's
    /// overhead and the SQEs prepared), then the enter's submission.
    pub(crate) fn tio_round(&mut self, j: JobId, head_ns: u64, user_ns: u64, tw: u32) {
        let now = self.q.now_ns();
        let c = &self.costs;
        let (prep_ns, reap_ns, round_ns) = (c.tio_prep_ns, c.tio_reap_ns, c.tio_round_ns);
        let mut bill = Bill::of(CpuStage::Wakeup, head_ns);
        bill.add(CpuStage::UringComplete, crate::io_uring::ring::tw_run_ns(&self.costs, tw));
        self.take_debt(j, &mut bill);
        let head = bill.total();
        self.jobs[j].check_done_issuing(self.q.now_ns());
        let job = &self.jobs[j];
        let reap = job.engine.ready.len() as u32 + tw;
        let depth = job.cfg.iodepth;
        let inflight = job.inflight - reap;
        let finish = job.done_issuing || job.error.is_some();
        let to_prep =
            if !finish && inflight < depth { (depth - inflight).min(job.cfg.iodepth_batch_submit) } else { 0 };
        let mut user = user_ns + round_ns + reap as u64 * reap_ns + to_prep as u64 * prep_ns;
        if to_prep > 0 {
            self.job_prep(j, to_prep);
            let t = now + head + user;
            for &r in &self.jobs[j].queued {
                self.reqs.reqs[r].t_start_ns = t;
            }
        }
        let job = &self.jobs[j];
        let to_submit = job.queued.len() as u32;
        // t/io_uring's inflight already counts the prepared SQEs.
        let inflight = inflight + to_submit;
        let to_wait = if to_submit > 0 && inflight + to_submit <= depth {
            0
        } else {
            (inflight + to_submit).min(job.cfg.iodepth_batch_complete_min)
        };
        // Finishing with nothing left: the reap is the last thing it does.
        let last = finish && inflight == 0;
        let tail = if last {
            user -= round_ns;
            0
        } else {
            let (tail, _) = self.submit_syscall_cost(j, false);
            bill.merge(&tail);
            tail.total()
        };
        bill.add(CpuStage::UserLoop, user);
        let job = &mut self.jobs[j];
        // reap_events_uring runs after user_ns: the reaped I/Os' completion time.
        job.ts.reap_ns = now + head + user_ns;
        job.tio.to_wait = to_wait;
        job.task.chain = Chain { tw, reap, submit: to_submit > 0 };
        self.job_set_segs(
            j,
            JobState::TioRound,
            [(Acct::Sys, head), (Acct::User, user), (Acct::Sys, tail)],
            bill,
            reap,
        );
    }

    /// The round's step ended: CQEs posted and reaped, SQEs submitted.
    pub(crate) fn tio_round_done(&mut self, cpu: CpuId, j: JobId) {
        let ch = self.jobs[j].task.chain;
        let job = &mut self.jobs[j];
        for _ in 0..ch.tw {
            let r = job.engine.ring.tw_pending.pop_front().expect("task_work");
            job.engine.ready.push_back(r);
        }
        for _ in 0..ch.reap {
            let r = job.engine.ready.pop_front().expect("CQE");
            // reap_events_uring: a result other than bs (and not EIO/ENODATA) ends the thread.
            let rq = &self.reqs.reqs[r];
            if rq.status < 0 && job.error.is_none() {
                job.error = Some(IoError::of(rq));
                job.done_issuing = true;
            }
            job.reaping.push(r);
        }
        self.job_accounted(j);
        if ch.submit {
            self.job_submitted(cpu, j, 0);
            return self.job_after_submit(cpu, j);
        }
        self.tio_after_submit(cpu, j);
    }

    /// After the enter's submission: its wait (GETEVENTS), or the next round.
    pub(crate) fn tio_after_submit(&mut self, cpu: CpuId, j: JobId) {
        let now = self.q.now_ns();
        let job = &self.jobs[j];
        let finish = job.done_issuing || job.error.is_some();
        if finish && job.inflight == 0 && job.queued.is_empty() {
            let job = &mut self.jobs[j];
            job.task.state = JobState::Done;
            job.finish_ns = now;
            return self.job_finished(j);
        }
        let to_wait = job.tio.to_wait;
        if to_wait == 0 {
            return self.tio_round(j, 0, 0, 0);
        }
        if job.iopoll() {
            return self.iopoll_check(j, to_wait);
        }
        // io_cqring_wait with DEFER_TASKRUN: the local task_work first.
        let have = (job.engine.ready.len() + job.engine.ring.tw_pending.len()) as u32;
        if have >= to_wait {
            let tw = job.engine.ring.tw_pending.len() as u32;
            return self.tio_round(j, 0, 0, tw);
        }
        if to_wait > job.inflight {
            return self.tio_stuck(cpu, j, to_wait);
        }
        self.jobs[j].task.wait_for = to_wait;
        let cs = self.costs.context_switch_ns;
        self.job_set(j, JobState::SleepOut, cs, Acct::Sys, CpuStage::Wakeup, 0);
    }

    /// The enter waits for `to_wait` CQEs but fewer I/Os are in flight: on
    /// Linux the submitter sleeps in `io_cqring_wait` for ever (t/io_uring
    /// with `-p0` and `-c` above `-d` minus `-s`). The run ends it at its runtime.
    fn tio_stuck(&mut self, cpu: CpuId, j: JobId, to_wait: u32) {
        let now = self.q.now_ns();
        let job = &mut self.jobs[j];
        job.stuck = Some(format!(
            "io_uring_enter waits for {to_wait} completions with {} I/Os in flight: t/io_uring would hang here \
             (-p0 with -c above -d minus -s); blksim ends the submitter at its runtime",
            job.inflight
        ));
        job.task.wait_for = u32::MAX;
        let end = job.end_ns;
        self.task_sleep(cpu, j, true);
        self.q.at(end.max(now), Event::JobStuck { job: j });
    }

    /// A stuck submitter's runtime is over: once its I/Os have all
    /// completed, the ring's teardown takes them and the thread ends.
    pub(crate) fn tio_stuck_end(&mut self, j: JobId) {
        let now = self.q.now_ns();
        let job = &mut self.jobs[j];
        if job.task.state != JobState::Sleeping {
            return;
        }
        if job.inflight as usize != job.engine.ready.len() + job.engine.ring.tw_pending.len() {
            self.q.at(now + STUCK_RECHECK_NS, Event::JobStuck { job: j });
            return;
        }
        let cpu = job.task.cpu;
        let mut done: Vec<_> = job.engine.ready.drain(..).collect();
        done.extend(job.engine.ring.tw_pending.drain(..));
        job.inflight = 0;
        job.task.state = JobState::Done;
        job.finish_ns = job.end_ns.min(now);
        for r in done {
            let f = self.reqs.reqs[r].file as usize;
            if let Some(p) = self.jobs[j].tio.pending.get_mut(f) {
                *p = p.saturating_sub(1);
            }
            self.reqs.free(r);
        }
        self.cpus[cpu].io_sleepers -= 1;
        self.job_finished(j);
    }
}
