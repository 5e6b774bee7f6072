//! fio: flow control in `do_io`'s loop (`flow.c`'s `flow_init_job`,
//! `flow_threshold_exceeded`, `flow_exit_job`): each job of a `flow_id`
//! joins its group when it starts and leaves it when it ends; before each
//! io_u it takes its turn or holds, spinning (poked when the group moves)
//! or, with `flow_sleep`, sleeping through its pause (`pace_loop.rs`).

use crate::fio::flow::FlowMember;
use crate::fio::job::JobState;
use crate::hw::cpu::Acct;
use crate::ids::JobId;
use crate::stats::CpuStage;
use crate::system::Sim;

impl Sim {
    /// `flow_init_job`, as job `j` starts.
    pub(crate) fn flow_join(&mut self, j: JobId) {
        if let Some(f) = self.jobs[j].cfg.flow {
            let group = self.run.flows.join(f.id, f.weight, j);
            self.jobs[j].flow = Some(FlowMember { group, weight: f.weight, counter: 0, sleep_us: f.sleep_us });
        }
    }

    /// `flow_exit_job`, as job `j` ends: the others' shares change.
    pub(crate) fn flow_leave(&mut self, j: JobId) {
        if let Some(m) = self.jobs[j].flow.take() {
            self.run.flows.leave(&m, j);
            self.flow_poke(m.group);
        }
    }

    /// `flow_threshold_exceeded` before an io_u: false while the job is
    /// over its share; else the job's and the group's counts go up (and the
    /// group's held jobs look again).
    pub(crate) fn flow_take(&mut self, j: JobId) -> bool {
        let Some(m) = self.jobs[j].flow.as_mut() else { return true };
        if self.run.flows.exceeded(m) {
            return false;
        }
        m.counter += 1;
        let g = m.group;
        self.run.flows.groups[g].counter += 1;
        self.flow_poke(g);
        true
    }

    /// Is fio's loop held by the job's flow (spinning, without `flow_sleep`)?
    /// Then the task spins until another job of the flow pokes it (at most a
    /// scheduler slice at a time, and not past the job's end).
    pub(crate) fn flow_spins(&mut self, j: JobId) -> bool {
        let job = &self.jobs[j];
        let Some(m) = job.flow.filter(|m| m.sleep_us == 0) else { return false };
        if job.done_issuing
            || !job.queued.is_empty()
            || job.cur_depth() >= job.engine.depth
            || !self.run.flows.exceeded(&m)
        {
            return false;
        }
        let now = self.q.now_ns();
        let ns = job.end_ns.saturating_sub(now).clamp(1, crate::sched::core::SCHED_SLICE_NS);
        self.job_set(j, JobState::FlowSpin, ns, Acct::User, CpuStage::UserLoop, 0);
        self.jobs[j].task.spin = true;
        true
    }

    /// The held jobs of flow group `g` look again.
    fn flow_poke(&mut self, g: usize) {
        let mut i = 0;
        while let Some(&k) = self.run.flows.groups[g].members.get(i) {
            if self.jobs[k].task.state == JobState::FlowSpin {
                self.iopoll_poke(k);
            }
            i += 1;
        }
    }
}
