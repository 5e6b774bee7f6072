//! fio: verify as the I/O it issues (`backend.c`'s `do_verify`, `io_u.c`'s
//! `check_get_verify`, `verify.c`). A writing job logs each write it queues;
//! with `verify_backlog=N`, after every N logged writes it reads a batch of
//! completed ones back before going on; with `do_verify` it reads every
//! block still logged once its writes are done. The read-backs are reads
//! (fio's read statistics count them). Each write's buffer is filled (random
//! data, or `verify_pattern`) and summed, each read summed and compared:
//! user time billed when fio reaps the I/O (fio fills before it submits;
//! the sum over a block is the same). Data itself is not simulated: every
//! check passes.

use crate::fio::verify_log::Piece;
use crate::ids::JobId;
use crate::system::Sim;
use crate::workload::Direction;

impl Sim {
    /// The block a verifying job reads back next instead of its own I/O, if any.
    pub(crate) fn verify_take(&mut self, j: JobId) -> Option<Piece> {
        let v = self.jobs[j].verify.as_deref_mut()?;
        if v.phase {
            return v.next();
        }
        if v.cfg.backlog == 0 || v.len() == 0 || !v.batch_running(v.len()) {
            return None;
        }
        // None completed yet: the job's own I/O goes, the batch stays due.
        let p = v.next()?;
        v.batch -= 1;
        Some(p)
    }

    /// fio's `do_verify` after the job's I/O (`clear_io_state` closes and
    /// reopens its files first): does it read anything back (blocks are
    /// logged)? Then nothing bounds it but the log and the job's runtime. A
    /// job whose runtime ran out in its I/O has ended (`fio_mark_td_terminate`):
    /// no read-back.
    pub(crate) fn verify_phase_start(&mut self, j: JobId) -> bool {
        let now = self.q.now_ns();
        let job = &mut self.jobs[j];
        let Some(v) = job.verify.as_deref_mut() else { return false };
        // A job that only reads has nothing logged and goes on to its end (the real fio logs no reopen).
        let writes = !matches!(job.cfg.rw, crate::workload::RwKind::Read | crate::workload::RwKind::RandRead);
        // fio's thread_main: an error ends the job before its do_verify (`td->error`: break),
        // as does a pass that did no I/O (`fio_mark_td_terminate`: no clear_io_state).
        if v.phase || !v.cfg.do_verify || !writes || now >= job.end_ns || job.error.is_some() || job.pass_ios == 0 {
            return false;
        }
        v.phase = true;
        // What the next loop goes on with (`verify_next_loop`), whether or not anything is read back.
        v.resume = (job.bytes_limit, job.cfg.number_ios);
        let empty = v.len() == 0;
        // clear_io_state closes the files and do_verify's first read opens them again; with
        // nothing to read back they stay closed until the next pass opens them (its reopen).
        if job.cfg.log_queued && !empty {
            if let Some(log) = &self.run.io_log {
                let since = now.saturating_sub(job.start_ns);
                let mut log = log.0.lock().expect("io log");
                // (`v` holds the job's verify state: the files alone.)
                if let Some(files) = job.files.as_deref_mut() {
                    files.log_done(&mut *log, j.idx(), since, false);
                }
                log.reopened(j.idx(), since);
            }
        }
        if empty {
            return false;
        }
        job.done_issuing = false;
        job.bytes_limit = u64::MAX;
        job.cfg.number_ios = 0;
        true
    }

    /// After `do_verify`'s pass: fio's thread_main starts the job's next loop
    /// (`clear_io_state`: its files reopened, their positions and random maps
    /// back at the start) if it has one. Returns whether it does.
    pub(crate) fn verify_next_loop(&mut self, j: JobId) -> bool {
        let now = self.q.now_ns();
        let job = &mut self.jobs[j];
        let Some(v) = job.verify.as_deref() else { return false };
        // A time-based job loops until its runtime ends (fio's keep_running), any other `loops`
        // times, then passes while io_size is not done.
        let time_based = job.cfg.time_based;
        if !v.phase || job.error.is_some() {
            return false;
        }
        let limit = v.resume.0;
        let number_ios = v.resume.1;
        // (A pass with nothing left to issue does no I/O: fio_mark_td_terminate, no read-back.)
        // keep_running: do_verify's clear_io_state marked no file done, so a job whose pass ended
        // short of size= (holes, a draw that failed) passes on until its bytes, the read-backs
        // too, reach it.
        // (Its exceeds_number_ios comes first; and a pass that did no I/O ended the job: td->done.)
        let ios_left = number_ios == 0 || job.ios_issued < number_ios;
        let size_left = job.cfg.io_size.is_none() && ios_left && job.size_left(limit);
        let keep = job.pass_ios > 0 && (job.loops_left > 1 || job.io_size_left() || size_left);
        let more = if time_based { now < job.end_ns } else { keep && job.bytes_issued < limit };
        // keep_running goes on, but do_io's loop finds its bytes issued (io_issue_bytes_exceeded):
        // a pass of no I/O whose end still runs end_fsync (the read-backs were the last issued),
        // each file opened for its sync and closed again; then the job ends (no bytes done).
        let empty = !time_based && keep && !more && job.end_fsync_due();
        let Some(v) = job.verify.as_deref_mut().filter(|_| more || empty) else { return false };
        // (A backlog's batch left running goes on: fio never resets `td->verify_batch`.)
        v.phase = false;
        job.cfg.number_ios = number_ios;
        job.bytes_limit = limit;
        job.loops_left = job.loops_left.saturating_sub(1).max(1);
        // (Its iolog shows the files reopened at the loop's first I/O.)
        job.rewind();
        job.done_issuing = empty;
        true
    }

    /// The verify work of the `reap` completions fio takes next (its
    /// `ready` ones, then `tw` task_work items), user ns, and how many of
    /// them `verify_async`'s threads will hold (their io_us not freed).
    pub(crate) fn verify_reap(&self, j: JobId, tw: u32, reap: u32) -> (u64, u32) {
        let job = &self.jobs[j];
        let Some(v) = job.verify.as_deref() else { return (0, 0) };
        let mut handed = 0;
        // With verify_async the reads are checked by its threads.
        let reads = job.vasync.is_none();
        let next =
            job.engine.ready.iter().chain(job.engine.ring.tw_pending.iter().take(tw as usize)).take(reap as usize);
        let ns = next
            .map(|&r| {
                let r = &self.reqs.reqs[r];
                // (A sync's `bytes` are 0: no data to fill or sum.)
                let write = r.dir == Direction::Write;
                if write || reads {
                    v.cpu_ns(write, r.bytes as u64)
                } else {
                    handed += (r.status >= 0) as u32;
                    0
                }
            })
            .sum::<u64>();
        (ns, handed)
    }

    /// do_io reaps before its next get_io_u (`verify_reaped`), but it got
    /// the io_u the null engine refused (FIO_Q_BUSY, `refused`) before the
    /// reap, and gets it again after (`verify_requeued`). Whether it did.
    pub(crate) fn verify_reaped_first(&mut self, j: JobId, refused: bool, tw: u32, reap: u32) -> bool {
        if !refused {
            self.verify_reaped(j, tw, reap);
        }
        refused
    }

    /// The io_u the null engine refused, `queued[first]`, back from the
    /// requeue list after do_io's reap of `reap` completions (after `tw`
    /// task_work items): get_io_u's check_get_verify runs for it again.
    /// get_next_verify keeps a requeued io_u as it is, yet the backlog's batch
    /// counts it, or starts with it (a refused write is not in the log's
    /// length: unlog_io_piece).
    pub(crate) fn verify_requeued(&mut self, j: JobId, first: usize, tw: u32, reap: u32) {
        self.verify_reaped(j, tw, reap);
        let job = &mut self.jobs[j];
        let Some(&req) = job.queued.get(first) else { return };
        // (do_verify's loop takes its io_us with __get_io_u: no check_get_verify.)
        let Some(v) = job.verify.as_deref_mut().filter(|v| v.cfg.backlog > 0 && !v.phase) else { return };
        let r = &self.reqs.reqs[req];
        let unlogged = r.dir == Direction::Write && r.fsync == crate::block::Fsync::No && v.cfg.do_verify;
        let len = v.len() - unlogged as u64;
        if len > 0 && v.batch_running(len) {
            v.batch -= 1;
        }
    }

    /// fio's io_completed for the `reap` completions a chain takes (after `tw`
    /// task_work items), as do_io's reap runs it before its next get_io_u:
    /// their writes may be read back now, and the last says whether fio
    /// completed a read last (`td->last_ddir_completed`).
    pub(crate) fn verify_reaped(&mut self, j: JobId, tw: u32, reap: u32) {
        let job = &mut self.jobs[j];
        let Some(v) = job.verify.as_deref_mut() else { return };
        let e = &job.engine;
        for &r in e.ready.iter().chain(e.ring.tw_pending.iter().take(tw as usize)).take(reap as usize) {
            let r = &self.reqs.reqs[r];
            // io_completed: a sync is neither logged nor fio's last_ddir_completed.
            if r.fsync != crate::block::Fsync::No {
                continue;
            }
            if r.dir == Direction::Write {
                v.completed(r.file, r.offset);
            }
            v.last_completed_read = r.dir == Direction::Read;
        }
    }
}

impl crate::fio::job::Job {
    /// A read-back of `bytes` was prepared (as an I/O of the job's, whose mix was `rwmix`):
    /// td_io_queue does not count a read-back (IO_U_F_VER_LIST) in io_issue_bytes nor io_issues,
    /// and get_rw_ddir did not choose it; it is fio's last_ddir_issued (no fsync is due after it).
    pub(crate) fn read_back_issued(&mut self, bytes: u64, rwmix: crate::fio::job::Rwmix) {
        self.io_u_used();
        (self.bytes_issued, self.io_issues[0], self.rwmix) = (self.bytes_issued - bytes, self.io_issues[0] - 1, rwmix);
        if let Some(v) = self.verify.as_deref_mut() {
            v.read_back_bytes += bytes;
        }
        if let Some(f) = self.fsync.as_deref_mut() {
            f.issued(Direction::Read);
        }
    }
}

/// Counts the job's next I/O of direction `d` (fio's `io_issues`) and applies
/// `verify_state_should_stop` where fio's `do_io` and `do_verify` do, with a
/// loaded state (`verify_state_load`): a verifying read (a read-only job's
/// own, or a read-back of the job's log) numbered by the reads issued so far,
/// or in `do_verify`'s pass by the number of the write it reads back
/// (`read_back`). Stopping ends the job's issuing; fio logs why.
pub(crate) fn verify_state_stops(job: &mut crate::fio::job::Job, d: usize, read_back: Option<u64>) -> bool {
    let reads_only = matches!(job.cfg.rw, crate::workload::RwKind::Read | crate::workload::RwKind::RandRead);
    let Some(v) = job.verify.as_deref_mut() else { return false };
    let numberio = match read_back {
        Some(n) if v.phase => n,
        _ => v.issues[d],
    };
    let checked = d == 0 && (reads_only || read_back.is_some());
    match job.cfg.verify_state.as_deref().filter(|_| checked).and_then(|s| s.should_stop(numberio)) {
        Some(why) => {
            v.stopped.get_or_insert(why);
            true
        }
        None => {
            v.issues[d] += 1;
            false
        }
    }
}
