//! Kernel path: a task's steps on its CPU. Each step of a task (fio's
//! job, t/io_uring's submitter, an SQ thread) is a stretch of up to three
//! segments of user and system time with its work by stage (the bill) and
//! the debt of follow-on work its last effects caused (wake-ups, IPIs).
//! The programs set their next step here; `switch.rs` hands the CPU back
//! to a program when its task is switched in.

use crate::fio::job::{JobState, Segments};
use crate::hw::cpu::{Acct, Bill};
use crate::ids::JobId;
use crate::stats::CpuStage;
use crate::system::Sim;

/// A spin with no end in sight: ended by a poke when a completion appears.
pub(crate) const SPIN_NS: u64 = u64::MAX / 4;

impl Sim {
    /// Job `j`'s task goes off `cpu` to sleep (`io`: in an I/O wait, which
    /// the CPU's idle time counts as iowait; else in a futex).
    pub(crate) fn task_sleep(&mut self, cpu: crate::ids::CpuId, j: JobId, io: bool) {
        let task = &mut self.jobs[j].task;
        task.state = JobState::Sleeping;
        task.remaining_ns = 0;
        self.cpus[cpu].current = None;
        self.cpus[cpu].io_sleepers += io as u32;
    }

    /// The job's next step: `cost_ns` of one account and stage (the debt
    /// of follow-on work, wake-ups and the like, charged with it).
    pub(crate) fn job_set(&mut self, j: JobId, state: JobState, cost_ns: u64, acct: Acct, stage: CpuStage, items: u32) {
        if cost_ns >= SPIN_NS {
            // An open-ended spin: all of it goes to its stage.
            self.job_set_segs(j, state, [(acct, SPIN_NS), (Acct::User, 0), (Acct::Sys, 0)], Bill::default(), items);
            self.jobs[j].task.stage_default = stage;
            return;
        }
        let debt = std::mem::take(&mut self.jobs[j].task.debt_ns);
        let mut bill = Bill::of(stage, cost_ns);
        bill.add(CpuStage::Wakeup, debt);
        // The debt is kernel work (wake-ups, IPIs): in front of a user step, its own sys segment.
        let segs = if acct == Acct::User && debt > 0 {
            [(Acct::Sys, debt), (Acct::User, cost_ns), (Acct::Sys, 0)]
        } else {
            [(acct, cost_ns + debt), (Acct::User, 0), (Acct::Sys, 0)]
        };
        self.job_set_segs(j, state, segs, bill, items);
    }

    /// The job's next step in up to three segments, its work by stage in `bill`.
    pub(crate) fn job_set_segs(&mut self, j: JobId, state: JobState, segs: Segments, bill: Bill, items: u32) {
        self.settle_job_bill(j);
        let job = &mut self.jobs[j];
        job.task.state = state;
        job.task.items = items;
        job.task.segs = segs;
        job.task.spin = false;
        job.task.bill = bill;
        job.task.stage_default = CpuStage::Other;
        job.task.remaining_ns = segs.iter().map(|s| s.1).sum();
        job.task.bill_sys_total = segs.iter().filter(|s| s.0 != Acct::User).map(|s| s.1).sum();
    }

    /// The job's next step, all system time, its work by stage in `bill` (and its debt).
    pub(crate) fn job_set_bill(&mut self, j: JobId, state: JobState, mut bill: Bill, items: u32) {
        self.take_debt(j, &mut bill);
        let sys = bill.total();
        self.job_set_segs(j, state, [(Acct::Sys, sys), (Acct::User, 0), (Acct::Sys, 0)], bill, items);
    }

    /// The job's next step is `pthread_cond_wait`'s futex wait: the syscall
    /// and schedule(), until `state`'s end decides whether it sleeps.
    pub(crate) fn job_futex_wait(&mut self, j: JobId, state: JobState) {
        let c = &self.costs;
        let mut bill = Bill::of(CpuStage::Syscall, c.syscall_ns + c.futex_ns);
        bill.add(CpuStage::Wakeup, c.context_switch_ns);
        self.job_set_bill(j, state, bill, 0);
    }

    /// Take the job's debt (follow-on work of earlier steps) into `bill` as wake-up work.
    pub(crate) fn take_debt(&mut self, j: JobId, bill: &mut Bill) -> u64 {
        let debt = std::mem::take(&mut self.jobs[j].task.debt_ns);
        bill.add(CpuStage::Wakeup, debt)
    }

    /// Share the system time charged to job `j`'s step so far over its
    /// bill, on the CPU it ran on (when the step is replaced, the task
    /// moves, or the run ends).
    pub(crate) fn settle_job_bill(&mut self, j: JobId) {
        let job = &mut self.jobs[j];
        let wall = std::mem::take(&mut job.task.bill_sys_wall);
        if wall > 0 {
            let total = job.task.bill_sys_total;
            // A bill names the step's system work exactly (an open-ended spin's, only what was put in front of it).
            #[cfg(debug_assertions)]
            {
                let named: u64 = job.task.bill.0[1..].iter().sum();
                debug_assert!(
                    named == total || total >= crate::sched::task::SPIN_NS,
                    "job {j:?}'s bill names {named} of {total} ns: {:?}",
                    job.task.bill
                );
            }
            job.task.bill.settle_total(
                1,
                total,
                wall,
                job.task.stage_default,
                &mut self.cpus[job.task.bill_cpu].stage_ns,
            );
        }
    }
}
