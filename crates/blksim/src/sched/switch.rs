//! Kernel path: a task switched in (`finish_task_switch`): the CPU goes
//! back into the program the task runs (fio's `do_io`, t/io_uring's loop,
//! `io_sq_thread`, glibc's AIO helper) where it left off — its first step, back from a sleep
//! for completions or tags, back from a rate's nanosleep. The programs set
//! their steps with `task.rs`'s setters; only this file calls up into them.

use crate::fio::job::JobState;
use crate::ids::JobId;
use crate::stats::CpuStage;
use crate::system::Sim;
use crate::workload::Program;

impl Sim {
    /// The CPU picked the job's task from its run queue.
    pub(crate) fn task_switched_in(&mut self, j: JobId) {
        self.jobs[j].task.ctx += 1;
        // (posixaio's futex sleeps are not I/O sleeps.)
        if self.jobs[j].task.state == JobState::Sleeping && !self.jobs[j].futex_sleeper() {
            let cpu = self.jobs[j].task.cpu;
            self.cpus[cpu].io_sleepers -= 1;
        }
        match self.jobs[j].task.state {
            JobState::NotStarted => {
                self.job_begin(j);
                if self.jobs[j].terminate {
                    return self.job_ended_unstarted(j);
                }
                match self.jobs[j].cfg.program {
                    Program::Fio => self.job_next(j),
                    Program::TIoUring => self.tio_start(j),
                    Program::SqThread => self.sq_next(j),
                    Program::AioHelper => self.aio_helper_next(j, 0),
                    Program::VerifyThread => self.verify_thread_next(j),
                }
                // Its run may be over before it began (runtime=0): no step.
                if self.jobs[j].task.state != JobState::Done {
                    let cs = self.costs.context_switch_ns;
                    self.jobs[j].task.add_head_sys(cs, CpuStage::Wakeup);
                }
            }
            // Back from sleep: schedule() returns, the syscall finds its completions.
            // Back from waiting for tags: the submitting syscall returns.
            JobState::Sleeping if self.jobs[j].task.tag_blocked => {
                self.jobs[j].task.tag_blocked = false;
                if self.jobs[j].cfg.ioengine.is_sync() {
                    self.job_reap(j);
                } else {
                    self.job_next(j);
                }
                let cs = self.costs.context_switch_ns;
                self.jobs[j].task.add_head_sys(cs, CpuStage::Wakeup);
            }
            JobState::Sleeping if self.jobs[j].cfg.program == Program::AioHelper => {
                self.aio_helper_next(j, self.costs.context_switch_ns)
            }
            JobState::Sleeping if self.jobs[j].offload.as_ref().is_some_and(|o| o.waiting()) => self.wq_woken(j),
            JobState::Sleeping if self.jobs[j].vasync.as_ref().is_some_and(|v| v.waiting()) => self.verify_woken(j),
            JobState::Sleeping => self.job_woken_chain(j, self.costs.context_switch_ns, true),
            // Back from nanosleep (a rate's or a think time's sleep), or a hybrid IOPOLL sleep.
            JobState::Nanosleep => {
                if self.hybrid_sleeping(j) {
                    self.iopoll_hybrid_woke(j);
                } else {
                    self.pace_woke(j);
                }
                if self.jobs[j].task.state != JobState::Done {
                    let cs = self.costs.context_switch_ns;
                    self.jobs[j].task.add_head_sys(cs, CpuStage::Wakeup);
                }
            }
            _ => {
                let cs = self.costs.context_switch_ns;
                self.jobs[j].task.add_head_sys(cs, CpuStage::Wakeup);
            }
        }
    }

    /// The job's task runs for the first time: its clock starts.
    pub(crate) fn job_begin(&mut self, j: JobId) {
        let now = self.q.now_ns();
        let interval = self.run.sample_interval_ns;
        let job = &mut self.jobs[j];
        job.start_ns = now;
        if let Some(m) = job.min_rate.as_deref_mut() {
            m.start_ns = now;
        }
        job.ts.ramp_end_ns = now + job.cfg.ramp_time_ns;
        job.ts.epoch_ns = now;
        if let Some(t) = job.lat_target.as_deref_mut() {
            // lat_target_init as do_io starts: the first window from now.
            t.init(now, 0);
        }
        job.ts.next_sample_ns = job.ts.ramp_end_ns + interval;
        if let Some(rt) = job.cfg.runtime_ns {
            job.end_ns = job.ts.ramp_end_ns + rt;
        }
    }
}
