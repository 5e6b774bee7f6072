//! fio: its stonewall groups (`run_threads`' loop in backend.c): a
//! phase's jobs start together, each after its `startdelay`; when the last
//! of them ends, the next phase with jobs starts. A job's end under
//! `exitall` (or its error under `exitall_on_error`) tells others to end
//! (`thread_main` → `fio_terminate_threads` → `fio_mark_td_terminate`).

use crate::fio::job::JobState;
use crate::ids::JobId;
use crate::system::{Event, Sim};
use crate::workload::{ExitWhat, Program};

impl Sim {
    /// The next stonewall phase with jobs: its jobs start (after their startdelay).
    pub(crate) fn start_phase(&mut self) {
        while self.run.phase < self.run.phases {
            // An SQ thread starts with its ring's job, glibc's AIO helper at its job's first request.
            let members: Vec<JobId> = self
                .jobs
                .iter()
                .filter(|j| j.cfg.phase == self.run.phase && !j.is_engine_thread())
                .map(|j| j.index)
                .collect();
            if members.is_empty() {
                self.run.phase += 1;
                continue;
            }
            self.run.jobs_left = members.len();
            for j in members {
                let delay = self.jobs[j].cfg.startdelay_ns;
                self.q.after(delay, Event::JobStarted { job: j });
            }
            return;
        }
    }

    /// A job ended: when its whole phase has, the next phase starts. One
    /// whose skewed file service found no I/O that fits gave up, where fio
    /// never ends: the run fails with why.
    pub(crate) fn job_finished(&mut self, j: JobId) {
        if self.jobs[j].files.as_deref().is_some_and(|f| f.never_ends()) {
            self.run.fail(crate::error::Error::not_modelled(format!(
                "job {}: file_service_type draws its files, and none has an I/O that fits (each closed and \
                 started over a million times in a row): fio draws and reopens them for ever and never ends",
                self.jobs[j].cfg.name
            )));
        }
        self.exitall(j);
        self.flow_leave(j);
        self.aio_owner_done(j);
        self.offload_owner_done(j);
        self.verify_owner_done(j);
        self.run.jobs_left -= 1;
        if self.run.jobs_left == 0 {
            self.run.phase += 1;
            self.start_phase();
        }
    }

    /// fio's `fio_terminate_threads` as job `j` ends, under `exitall` (or `exitall_on_error`
    /// after its error): the jobs `exit_what` names are marked to end (`td->terminate`). One
    /// running stops issuing at its loop's next look, as at its runtime's end (its I/O drains and
    /// `end_fsync` runs; no read-back and no next loop follow); a sleep it is in ends as it would
    /// (fio looks at the mark between sleeps of up to a second). One not started yet
    /// (`exit_what=group` or `all`: a later stonewall group too) ends as it starts (one waiting
    /// out its `startdelay` when that is over, where fio's sets it to 0 and starts it at once).
    fn exitall(&mut self, j: JobId) {
        let job = &self.jobs[j];
        if !(job.cfg.exitall || job.cfg.error_options.exitall && job.error.is_some()) || job.is_engine_thread() {
            return;
        }
        let (group, what, now) = (job.cfg.group_id, job.cfg.exit_what, self.q.now_ns());
        for t in self.jobs.iter_mut().filter(|t| t.index != j && t.cfg.program == Program::Fio) {
            if !t.running_fio_job() || t.terminate {
                continue;
            }
            let started = t.task.state != JobState::NotStarted;
            let hit = match what {
                ExitWhat::Group => t.cfg.group_id == group,
                // (td->runstate >= TD_RUNNING: started and past its ramp.)
                ExitWhat::Stonewall => started && now >= t.ts.ramp_end_ns,
                ExitWhat::All => true,
            };
            if hit {
                t.terminate = true;
                t.end_ns = t.end_ns.min(now);
            }
        }
    }

    /// A job told to end before its task first ran (`exitall`): fio's thread_main finds
    /// `td->terminate` at keep_running and does no I/O.
    pub(crate) fn job_ended_unstarted(&mut self, j: JobId) {
        let now = self.q.now_ns();
        let job = &mut self.jobs[j];
        (job.task.state, job.finish_ns) = (JobState::Done, now);
        self.job_finished(j);
    }
}
