//! fio: a trim on an engine flagged FIO_ASYNCIO_SYNC_TRIM (libaio,
//! posixaio), or on io_uring once a trim through its ring failed
//! (`async_trim_fail`: an IOPOLL ring takes no block uring_cmd, a device
//! without discards fails it). Their queue hook (`fio_libaio_queue`,
//! `fio_posixaio_queue`, `fio_ioring_queue`) returns FIO_Q_BUSY while
//! libaio or io_uring holds io_us not yet committed, or
//! while posixaio has any request in flight; fio's `do_io` then commits
//! (`td_io_commit`), reaps at least one completion (`wait_for_completions`,
//! as the queue is busy with I/O in flight) and takes the trim again. When
//! the hook takes it, `do_io_u_trim` issues BLKDISCARD
//! (`blk_ioctl_discard`: the discard bios, then `submit_bio_wait`): fio's
//! thread sleeps in the ioctl until the discard ends, whatever of its
//! asynchronous I/O completes meanwhile (libaio's events wait in the ring),
//! and the hook returns the trim completed: issue time taken before the
//! hook, no slat, accounted at once (`io_u_sync_complete`).

use crate::fio::job::{JobState, SyncTrim};
use crate::hw::cpu::{Acct, Bill};
use crate::ids::{CpuId, JobId, ReqId};
use crate::stats::CpuStage;
use crate::system::Sim;

impl Sim {
    /// fio's loop with a trim in the engine's queue hook.
    #[inline(never)]
    pub(crate) fn sync_trim_next(&mut self, j: JobId) {
        let now = self.q.now_ns();
        let job = &mut self.jobs[j];
        let state = job.sync_trim.expect("a trim in the queue hook");
        let (req, requeued) = match state {
            SyncTrim::Held { req, busy } => (req, busy),
            SyncTrim::Requeued(req) => (req, true),
            SyncTrim::Issued(req) => {
                if job.engine.ready.contains(&req) {
                    // The discard ended (or failed) before the task slept.
                    return self.sync_trim_returned(j, req, 0, false);
                }
                // submit_bio_wait: nothing but the discard's end wakes the task.
                job.task.wait_for = u32::MAX;
                let cs = self.costs.context_switch_ns;
                return self.job_set(j, JobState::SleepOut, cs, Acct::Sys, CpuStage::Wakeup, 0);
            }
        };
        if !job.queued.is_empty() {
            // FIO_Q_BUSY: td_io_commit.
            return self.job_submit(j);
        }
        if job.error.is_some() || (requeued && now >= job.end_ns) {
            // do_io's loop ended (a failed I/O, the runtime) before it took the trim again.
            job.sync_trim = None;
            self.reqs.free(req);
            return self.job_next(j);
        }
        // BUSY with I/O in flight: wait_for_completions, then the trim again. libaio
        // takes it then; posixaio stays busy while anything is in flight.
        let busy = match state {
            SyncTrim::Held { busy, .. } => busy,
            _ => job.engine.aio.is_some(),
        };
        if busy && job.inflight > 0 {
            job.sync_trim = Some(SyncTrim::Requeued(req));
            return self.job_reap(j);
        }
        if requeued {
            // get_io_u takes the requeued io_u again: a new start time.
            self.reqs.reqs[req].t_start_ns = now;
        }
        job.queued.push(req);
        job.sync_trim = Some(SyncTrim::Issued(req));
        self.job_submit(j)
    }

    /// The discard of job `j`'s BLKDISCARD ended on `cpu` (`submit_bio_wait_endio`):
    /// the ioctl's result, and its task woken if it sleeps. Returns the wake-up's cost.
    pub(crate) fn sync_trim_end_io(&mut self, cpu: CpuId, j: JobId, req: ReqId) -> u64 {
        let job = &mut self.jobs[j];
        job.engine.ready.push_back(req);
        if job.task.state == JobState::Sleeping && !job.task.tag_blocked {
            self.wake(cpu, j)
        } else {
            0
        }
    }

    /// Whether the job's task sleeps in a BLKDISCARD that has ended.
    pub(crate) fn sync_trim_ended(&self, j: JobId) -> bool {
        let job = &self.jobs[j];
        matches!(job.sync_trim, Some(SyncTrim::Issued(req)) if job.engine.ready.contains(&req))
    }

    /// The ioctl returned (after `head_ns` of schedule() if it slept):
    /// fio accounts the trim as the hook's completed io_u, then its loop
    /// goes on (the asynchronous events that came meanwhile are reaped
    /// when it next reaps).
    pub(crate) fn sync_trim_returned(&mut self, j: JobId, req: ReqId, head_ns: u64, woke: bool) {
        let job = &mut self.jobs[j];
        let Some(at) = job.engine.ready.iter().position(|&r| r == req) else {
            // Woken before the discard ended: wait_for_completion sleeps again.
            return self.sync_trim_next(j);
        };
        job.sync_trim = None;
        job.task.wait_for = 1;
        let ready = &mut job.engine.ready;
        ready.remove(at);
        ready.push_front(req);
        let wake = if woke { self.user_costs(j).wake } else { 0 };
        self.job_chain(j, Bill::of(CpuStage::Wakeup, head_ns), wake, 0, 1);
    }
}
