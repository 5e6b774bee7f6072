//! Kernel path: SQPOLL. A ring set up with IORING_SETUP_SQPOLL (fio's
//! `sqthread_poll`, pinned by `sqthread_poll_cpu` with IORING_SETUP_SQ_AFF)
//! has a kernel thread, `io_sq_thread`, that does what the program's
//! `io_uring_enter` would: each iteration (`__io_sq_thread`) runs the
//! ring's task_work (`io_sq_tw`: completions by interrupt, their CQEs
//! posted), one non-spinning `io_do_iopoll` pass on an IOPOLL ring, and
//! `io_submit_sqes` of every SQE the program has put on the SQ ring. With
//! nothing to do it spins (for `sq_thread_idle`, 1 s by default, longer
//! than any run here) until an SQE or a completion appears. The program
//! commits by moving the SQ tail and waits for CQEs by spinning on the CQ
//! ring in user space: no syscall either way.

use crate::fio::job::batch_bucket;
use crate::fio::job::JobState;
use crate::hw::cpu::{Acct, Bill};
use crate::ids::{CpuId, JobId};
use crate::stats::CpuStage;
use crate::system::Sim;

impl Sim {
    /// The SQ thread `t` starts its next iteration, or spins.
    pub(crate) fn sq_next(&mut self, t: JobId) {
        let ring = self.jobs[t].engine.ring.sq_ring.expect("an SQ thread serves a ring");
        if matches!(self.jobs[ring].task.state, JobState::Done) {
            // The ring is torn down with its program.
            let job = &mut self.jobs[t];
            job.task.state = JobState::Done;
            job.task.remaining_ns = 0;
            return;
        }
        let cpu = self.jobs[t].task.cpu;
        let mut bill = Bill::default();
        let app = &self.jobs[ring];
        let tw = app.engine.ring.tw_pending.len() as u32;
        bill.add(CpuStage::UringComplete, crate::io_uring::ring::tw_run_ns(&self.costs, tw));
        let mut pass = false;
        if app.iopoll() && !app.engine.ring.iopoll_list.is_empty() {
            if let Some(b) = self.iopoll_plan(ring) {
                bill.merge(&b);
                pass = true;
            }
        }
        // io_submit_sqes: every SQE on the SQ ring, submitted from this CPU
        // (taken onto the SQ thread's own list: its ring's configuration is its).
        let mut taken = std::mem::take(&mut self.jobs[t].queued);
        taken.extend(self.jobs[ring].engine.ring.sq_pending.drain(..));
        let n = taken.len() as u32;
        self.jobs[t].queued = taken;
        if n > 0 {
            self.block_submit_cost(t, cpu, &mut bill);
        }
        if tw == 0 && !pass && n == 0 {
            return self.iopoll_spin_for(t, ring);
        }
        bill.add(CpuStage::Syscall, self.costs.sqpoll_iter_ns);
        self.jobs[t].engine.ring.sq_work = (tw, pass, n);
        self.job_set_bill(t, JobState::SqIter, bill, 0);
    }

    /// An iteration of SQ thread `t` on `cpu` ended: its task_work posted
    /// CQEs, its pass reaped, its SQEs went to the devices.
    pub(crate) fn sq_iter_done(&mut self, cpu: CpuId, t: JobId) {
        let ring = self.jobs[t].engine.ring.sq_ring.expect("an SQ thread serves a ring");
        let (tw, pass, n) = std::mem::take(&mut self.jobs[t].engine.ring.sq_work);
        let before = self.jobs[ring].engine.ready.len();
        let app = &mut self.jobs[ring];
        let iopoll = app.iopoll();
        for _ in 0..tw {
            let r = app.engine.ring.tw_pending.pop_front().expect("task_work");
            if iopoll {
                // A uring_cmd that did not go to a poll queue: done, for the pass to reap.
                self.reqs.reqs[r].iopoll_done = true;
            } else {
                app.engine.ready.push_back(r);
            }
        }
        if pass {
            self.iopoll_apply(cpu, ring);
        }
        if n > 0 {
            self.submit_queued_for(cpu, t, ring);
        }
        // The SQ thread's follow-on work is its own (its ring's task_work and poll pass's too).
        let debt = std::mem::take(&mut self.jobs[ring].task.debt_ns);
        self.jobs[t].task.debt_ns += debt;
        if self.jobs[ring].engine.ready.len() > before && self.jobs[ring].task.spin {
            // The program spinning on its CQ ring sees them.
            self.iopoll_poke(ring);
        }
        self.sq_next(t);
    }

    /// SQPOLL: the program waits for `min` CQEs spinning on its CQ ring.
    pub(crate) fn cq_spin(&mut self, j: JobId) {
        self.job_set(j, JobState::CqSpin, crate::sched::task::SPIN_NS, Acct::User, CpuStage::UserLoop, 0);
        self.jobs[j].task.spin = true;
    }

    /// SQPOLL: the program committed its queued SQEs (a store to the SQ
    /// tail, no syscall): in flight for the program, on the SQ ring for its
    /// SQ thread, which is poked.
    pub(crate) fn sq_committed(&mut self, j: JobId) {
        let job = &mut self.jobs[j];
        let n = job.queued.len() as u32;
        let (q, p) = (&mut job.queued, &mut job.engine.ring.sq_pending);
        p.extend(q.drain(..));
        job.inflight += n;
        let depth = job.cur_depth() + job.engine.ring.sq_pending.len() as u32;
        job.mark_depth(depth, n);
        job.ts.iodepth_submit[batch_bucket(n)] += 1;
        if let Some(sq) = job.engine.ring.sq_thread {
            self.iopoll_poke(sq);
        }
    }
}
