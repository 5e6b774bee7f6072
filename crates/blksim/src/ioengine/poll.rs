//! Kernel path: polled completion. io_uring's `io_do_iopoll` (IOPOLL) /
//! `blk_poll` for RWF_HIPRI → `nvme_poll` on the task's poll queues: the
//! task spins until a CQE is visible, reaps what it sees
//! (`blk_mq_end_request_batch`), and IOPOLL completions of another ring
//! wait for that ring's next poll.

use crate::hw::cpu::{Acct, Running};
use crate::ids::{CpuId, JobId};
use crate::ioengine::fio_loop::SPIN_NS;
use crate::ioengine::job::JobState;
use crate::system::Sim;

impl Sim {
    /// Start or continue polling the job's poll queues (IOPOLL / RWF_HIPRI).
    pub(crate) fn job_poll(&mut self, j: JobId) {
        let visible: u32 = self.jobs[j].poll_queues.iter().map(|&(d, h)| self.devs[d].queues[h].cq.len() as u32).sum();
        if visible > 0 || !self.jobs[j].iopoll_done.is_empty() || !self.jobs[j].ready.is_empty() {
            let c = &self.costs;
            let per =
                c.nvme_cqe_ns + c.blk_complete_batch_ns + if self.jobs[j].is_uring() { c.io_uring_cqe_ns } else { 0 };
            let cost = c.poll_ns + visible as u64 * per;
            self.job_set(j, JobState::PollReap, cost, Acct::Sys, visible);
        } else {
            self.job_set(j, JobState::PollSpin, SPIN_NS, Acct::Sys, 0);
            for i in 0..self.jobs[j].poll_queues.len() {
                let (d, h) = self.jobs[j].poll_queues[i];
                self.devs[d].queues[h].pollers.push(j);
            }
        }
    }

    pub(crate) fn job_unregister_poller(&mut self, j: JobId) {
        for i in 0..self.jobs[j].poll_queues.len() {
            let (d, h) = self.jobs[j].poll_queues[i];
            self.devs[d].queues[h].pollers.retain(|&p| p != j);
        }
    }

    /// A completion the spinning job can see appeared: its spin ends after one more poll.
    pub(crate) fn poll_poke(&mut self, j: JobId) {
        if self.jobs[j].state != JobState::PollSpin || self.jobs[j].remaining_ns < SPIN_NS {
            return;
        }
        let cpu = self.jobs[j].cpu;
        let running = self.cpus[cpu].running == Running::Task(j);
        if running {
            self.cpu_charge(cpu);
        }
        let poll = self.costs.poll_ns;
        self.job_set_segs(j, JobState::PollSpin, [(Acct::Sys, poll), (Acct::User, 0), (Acct::Sys, 0)], 0);
        if running {
            self.cpu_dispatch(cpu);
        }
    }

    /// The poll found `items` CQEs on the task's poll queues: they end
    /// here (`blk_mq_end_request_batch`), then the task reaps what it has,
    /// or polls again.
    pub(crate) fn job_poll_reaped(&mut self, cpu: CpuId, j: JobId, items: u32) {
        self.polling_job = Some(j);
        let mut debt = 0;
        let mut left = items;
        for i in 0..self.jobs[j].poll_queues.len() {
            let (d, h) = self.jobs[j].poll_queues[i];
            while left > 0 {
                let Some(req) = self.devs[d].queues[h].cq.pop_front() else {
                    break;
                };
                left -= 1;
                debt += self.end_request(cpu, req);
            }
        }
        self.polling_job = None;
        let job = &mut self.jobs[j];
        job.debt_ns += debt;
        while let Some(r) = job.iopoll_done.pop_front() {
            job.ready.push_back(r);
        }
        let min = job.wait_for.min(job.cur_depth()).max(1);
        if job.ready.len() as u32 >= min {
            let k =
                if job.cfg.ioengine.is_sync() { 1 } else { self.reap_bounds(j).1.min(self.jobs[j].ready.len() as u32) };
            self.job_chain(j, 0, 0, 0, k);
        } else {
            self.job_poll(j);
        }
    }
}
