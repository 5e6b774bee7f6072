//! fio: replaying an I/O log (`read_iolog`, iolog.c's `read_iolog_get` and
//! `iolog_delay`). Each io_u takes the log's next entry: its file, direction,
//! offset and length, or an fsync of its file (`fsync.rs`). A version 3 entry waits until its delay after fio's last
//! issue (`td->last_issue`: set when an async engine commits, when a sync
//! engine queues, and by a file action): fio spins in `iolog_delay`, reaping
//! what completes meanwhile (`io_u_queued_complete(td, 0)`), so here the task
//! spins with its completions poking it. The job ends when the log is done.

use crate::block::Fsync;
use crate::error::Error;
use crate::ids::{DevId, JobId};
use crate::system::Sim;
use crate::workload::{JobConfig, Replay, ReplayOp};

impl Sim {
    /// A replayed log's I/Os fit the job's files (job `i`, at build).
    pub(crate) fn check_replay(&self, i: usize, cfg: &JobConfig, log: &Replay, devs: &[DevId]) -> Result<(), Error> {
        for e in &log.entries {
            let ReplayOp::Io { file, offset, bytes, .. } = e.op else { continue };
            let Some(&dev) = devs.get(file as usize) else { continue };
            let capacity = self.devs[dev].capacity_bytes;
            if offset.saturating_add(bytes) > capacity {
                let name = cfg.filenames.get(file as usize).map_or("its file", String::as_str);
                return Err(Error::bad_input(format!(
                    "read_iolog: the I/O at line {} ({bytes} bytes at offset {offset}) goes past the end of {name} ({capacity} bytes)",
                    e.line
                ))
                .for_job(i));
            }
        }
        Ok(())
    }

    /// `job_prep` for a replaying job: up to `n` io_us from the log, stopping
    /// at an entry whose delay has not passed; the log's end ends the job.
    pub(crate) fn replay_prep(&mut self, j: JobId, n: u32) {
        let now = self.q.now_ns();
        let mut made = 0;
        while made < n {
            let job = &mut self.jobs[j];
            if job.sync_trim.is_some() {
                break;
            }
            let Some(cur) = job.replay.as_deref_mut() else { return };
            if cur.pending_until(now).is_some() {
                return;
            }
            let Some(e) = cur.log.entries.get(cur.pos).copied() else {
                // read_iolog_get: the log is empty, td->done. (Under io_in_polling fio committed
                // and reaped after the last io_u, before this get_io_u; blksim's reap of it comes
                // after: it stays fio's.)
                if !job.cfg.io_in_polling() {
                    cur.ran_out_ns = Some(now);
                    cur.got_before_out = made;
                }
                job.done_issuing = true;
                return;
            };
            cur.pos += 1;
            match e.op {
                ReplayOp::File => cur.last_issue_ns = Some(now),
                ReplayOp::Io { file, dir, offset, bytes } => {
                    if cur.at_queue && cur.sets_issue {
                        cur.last_issue_ns = Some(now);
                    }
                    let dev = job.devs.get(file as usize).copied();
                    self.prep_request(j, dir, bytes, offset, dev, file as usize, now);
                    made += 1;
                }
                ReplayOp::Sync { file } => {
                    if cur.at_queue && cur.sets_issue {
                        cur.last_issue_ns = Some(now);
                    }
                    self.prep_fsync(j, Fsync::Io, Some(file as usize), now);
                    made += 1;
                }
            }
        }
        // (Past the log's last entry fio's do_io goes round once more, its loop test not
        // the log's bytes: that get_io_u finds the log empty. Measured with fio 3.33 and 3.42.)
    }

    /// The job ended. If it replayed a log that ran out, do_io ended there
    /// (what it reaped after is not fio's), and io_us queued but never
    /// committed count as issued only, as in fio.
    pub(crate) fn replay_ended(&mut self, j: JobId) {
        let job = &mut self.jobs[j];
        let Some(at) = job.replay_ran_out_ns() else { return };
        job.finish_ns = at;
        for req in std::mem::take(&mut job.queued) {
            if at >= job.ts.ramp_end_ns {
                job.dirs[self.reqs.reqs[req].dir.index()].abandoned();
            }
            self.reqs.free(req);
        }
    }

    /// A replaying job's commit: an async engine sets `last_issue`.
    pub(crate) fn replay_committed(&mut self, j: JobId) {
        let now = self.q.now_ns();
        if let Some(cur) = self.jobs[j].replay.as_deref_mut() {
            if !cur.at_queue && cur.sets_issue {
                cur.last_issue_ns = Some(now);
            }
        }
    }
}
