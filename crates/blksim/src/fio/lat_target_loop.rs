//! fio: `latency_target` in `do_io`'s loop (`backend.c`: `lat_target_init`
//! at its start, `lat_target_check` at the end of each pass of the loop past
//! the ramp, `queue_full` holding the io_us past `td->latency_qd`) and in
//! `account_io_completion` (`io_u.c`: an I/O's `lat` over the target fails
//! the window, or is counted against the percentile). A depth that moves
//! down quiesces the job (`io_u_quiesce`: what is queued is committed and
//! every io_u in flight reaped before another is filled); the final run
//! quiesces, then `reset_all_stats` and `reset_io_stats` start the job's
//! statistics and its runtime again; the window after it at the same
//! depth ends the job (`td->done`). Here the check follows each reap's
//! accounting (fio looks at the end of each pass of its loop, a reap's or a
//! submit's: the same window to within the time between them).

use crate::fio::lat_target::Verdict;
use crate::ids::JobId;
use crate::system::Sim;

impl Sim {
    /// `lat_target_check` after a reap (past the ramp).
    pub(crate) fn lat_target_check(&mut self, j: JobId) {
        let now = self.q.now_ns();
        let job = &mut self.jobs[j];
        // (fio's io_u_quiesce reaps without looking: a quiesce under way holds the check.)
        let quiescing = job.pace.as_deref().is_some_and(|p| p.action.is_some());
        if !job.ts.ramp_done() || quiescing {
            return;
        }
        let ios = job.ios_done();
        let Some(t) = job.lat_target.as_deref_mut() else { return };
        match t.check(now, ios) {
            Verdict::Go | Verdict::Fatal => {}
            Verdict::Quiesce { reset } => job.lat_quiesce(reset),
            Verdict::Done => {
                // td->done: keep_running ends the job after this pass, as at its runtime's end.
                job.terminate = true;
                job.end_ns = job.end_ns.min(now);
            }
        }
        job.lat_depth();
    }

    /// `lat_target_init` as a new loop's `do_io` starts (the search from depth 1 again), for a job with a target.
    pub(crate) fn lat_target_restart(&mut self, j: JobId) {
        let now = self.q.now_ns();
        let job = &mut self.jobs[j];
        let ios = job.ios_done();
        if let Some(t) = job.lat_target.as_deref_mut() {
            t.init(now, ios);
            job.lat_depth();
        }
    }

    /// The quiesce a depth change asked for is over (nothing in flight): with
    /// `reset` the final run starts (`reset_all_stats`, `reset_io_stats`: the
    /// statistics and the runtime from now); a new window (`lat_new_cycle`).
    pub(crate) fn lat_quiesced(&mut self, j: JobId, reset: bool) {
        let now = self.q.now_ns();
        let interval = self.run.sample_interval_ns;
        let job = &mut self.jobs[j];
        if reset {
            // As at the ramp's end: measured from now (the runtime, the log times).
            job.ts.ramp_end_ns = now;
            job.ramp_over(now, true);
            for d in &mut job.dirs {
                d.reset_measured();
            }
            job.ts.sample_bytes = [0; 3];
            job.ts.sample_ios = [0; 3];
            job.ts.next_sample_ns = now + interval;
            if let Some(rt) = job.cfg.runtime_ns.filter(|_| !job.terminate) {
                job.end_ns = now.saturating_add(rt);
            }
        }
        let ios = job.ios_done();
        if let Some(t) = job.lat_target.as_deref_mut() {
            t.new_window(now, ios);
        }
        job.lat_depth();
    }
}
