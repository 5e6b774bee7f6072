//! fio: its stonewall groups (`run_threads`' loop in backend.c): a
//! phase's jobs start together, each after its `startdelay`; when the last
//! of them ends, the next phase with jobs starts.

use crate::ids::JobId;
use crate::system::{Event, Sim};

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
}
