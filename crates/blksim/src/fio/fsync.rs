//! fio: fsync and fdatasync io_us. `get_rw_ddir` makes the next io_u an
//! fsync (or fdatasync) after every `fsync` (`fdatasync`) writes issued,
//! when the last io_u issued was a write (`should_fsync`); `fill_io_u`
//! gives it no offset and no length, on the file `set_io_u_file` chose.
//! `end_fsync` (and `fsync_on_close`): at the end of `do_io`, `fio_io_sync`
//! of each file in turn, in state TD_FSYNCING (not accounted), unless the
//! last io_u issued was a sync. A sync engine's fsync is its thread's
//! system call (`do_io_u_sync`; `blkdev_fsync`, its flush stripped, in
//! `block/submit.rs`); libaio queues it as IOCB_CMD_FSYNC (run on the CPU's
//! kworker, `sched/workqueue.rs`); the null engine queues it as any io_u.
//! A replayed log's syncs come here too (`iolog.rs`).

use crate::block::Fsync;
use crate::fio::job::LastIssued;
use crate::ids::{JobId, ReqId};
use crate::system::Sim;
use crate::workload::{Direction, LAT_OFF_CLAT};

/// fio's `enum fio_ddir` for an fsync and an fdatasync io_u.
const DDIR_SYNC: usize = 3;
const DDIR_DATASYNC: usize = 4;

impl Sim {
    /// The syncs among the `reap` completions a chain step takes (after
    /// its `tw` task_work items), for `number_ios`'s count at the loop top
    /// that follows (`Fsyncs::reaped`), until they are accounted.
    #[inline(always)]
    pub(crate) fn fsyncs_reaping(&mut self, j: JobId, tw: u32, reap: u32) {
        let job = &self.jobs[j];
        if !job.shaped || job.fsync.is_none() || job.cfg.number_ios == 0 {
            return;
        }
        let e = &job.engine;
        let taken = e.ready.iter().chain(e.ring.tw_pending.iter().take(tw as usize)).take(reap as usize);
        let syncs = taken.filter(|&&r| self.reqs.reqs[r].fsync != Fsync::No).count() as u64;
        if let Some(f) = self.jobs[j].fsync.as_deref_mut() {
            f.reaped = Some(syncs);
        }
    }

    /// An fsync io_u queued on the job: on `file`, or on the file fio's
    /// file service picks next.
    pub(crate) fn prep_fsync(&mut self, j: JobId, kind: Fsync, file: Option<usize>, now: u64) -> ReqId {
        let job = &mut self.jobs[j];
        let (di, dev) = match file {
            Some(di) => (di, job.devs.get(di).copied()),
            None => {
                let devs = &self.devs;
                let (di, dev, _, _) = job.next_file(job.cfg.bs[1], |d| devs[d].capacity_bytes);
                (di, dev)
            }
        };
        let req = self.reqs.alloc();
        self.reqs.reqs[req].io_u(j, Direction::Write, 0, 0, dev, di as u16, now, kind);
        self.reqs.reqs[req].ioprio = job.cfg.ioprio;
        job.queued.push(req);
        let mut ddir = DDIR_SYNC;
        if let Some(f) = job.fsync.as_deref_mut() {
            // get_rw_ddir: fsync's interval first, then fdatasync's; end_fsync's is an fsync.
            let [every, _] = job.cfg.sync_every;
            if kind == Fsync::Io && job.replay.is_none() && !(every > 0 && f.writes.is_multiple_of(every)) {
                ddir = DDIR_DATASYNC;
            }
            f.last = LastIssued::Sync;
            f.outstanding += 1;
        }
        if job.cfg.log_queued {
            self.log_queued(j, req, di, ddir, None, now);
        }
        req
    }

    /// The io_us of the `reap` completions the chain step takes (after `tw`
    /// task_work items) are put (`ios_completed` → `put_io_u`), before the
    /// next are prepared: with `write_iolog` back on fio's free list in that
    /// order; with a skewed file service each puts its file (a file closed
    /// while io_us held it is closed when the last goes), after the next
    /// fill where fio fills it before it reaps (`Job::fills_before_reap`:
    /// `FileSet::deferred`, put by `job_accounted` as the step ends).
    pub(crate) fn io_us_put(&mut self, j: JobId, tw: u32, reap: u32) {
        let job = &mut self.jobs[j];
        let later = job.fills_before_reap();
        if !later {
            job.io_us_reaped(reap);
        }
        if let Some(files) = job.files.as_deref_mut().filter(|f| f.skewed()) {
            if later {
                files.deferred = true;
            } else {
                let e = &job.engine;
                let taken = e.ready.iter().chain(e.ring.tw_pending.iter().take(tw as usize)).take(reap as usize);
                files.io_us_put(&self.reqs.reqs, taken);
            }
        }
        let Some(io_us) = job.fsync.as_deref_mut().and_then(|f| f.io_us.as_mut()) else { return };
        let e = &job.engine;
        e.ready
            .iter()
            .chain(e.ring.tw_pending.iter().take(tw as usize))
            .take(reap as usize)
            .for_each(|&r| io_us.put(r));
    }

    /// `write_iolog`'s line for io_u `req` of job `j` as fio's `td_io_queue`
    /// writes it (`log_io_u`): its file, `ddir` (fio's `enum fio_ddir`), offset
    /// and length (`io`); a sync (none) shows its io_u's stale offset and 0.
    pub(crate) fn log_queued(
        &mut self,
        j: JobId,
        req: ReqId,
        di: usize,
        ddir: usize,
        io: Option<(u64, u64)>,
        now: u64,
    ) {
        let Some(log) = &self.run.io_log else { return };
        let job = &mut self.jobs[j];
        let (offset, bytes) = io.unzip();
        let stale = job.fsync.as_deref_mut().and_then(|f| f.io_us.as_mut()).map_or(0, |io_us| io_us.get(req, offset));
        let since = now.saturating_sub(job.start_ns);
        let mut log = log.0.lock().unwrap();
        job.log_files_done(&mut *log, j.idx(), since);
        // An io_u the null engine refused with FIO_Q_BUSY was logged when it was refused too.
        for _ in 0..1 + std::mem::take(&mut job.engine.busy) as u8 {
            log.queued(j.idx(), di, ddir, since, offset.unwrap_or(stale), bytes.unwrap_or(0));
        }
    }

    /// `write_iolog`'s close and open of job `j`'s files for a pass that
    /// began (`Job::reopened`) and has logged no io_u yet: at the job's end,
    /// a last pass that drew nothing still opened them (get_next_file).
    pub(crate) fn log_reopened(&mut self, j: JobId, now: u64) {
        let Some(log) = &self.run.io_log else { return };
        let job = &mut self.jobs[j];
        let since = now.saturating_sub(job.start_ns);
        let mut log = log.0.lock().unwrap();
        job.log_files_done(&mut *log, j.idx(), since);
    }

    /// `end_fsync` once the job's I/O is done: the next file's fsync queued,
    /// for fio's loop to commit (fio waits for each before the next). Returns
    /// whether it queued one; false once every file is done, or when there is none to do.
    pub(crate) fn end_fsync_next(&mut self, j: JobId) -> bool {
        let job = &mut self.jobs[j];
        let files = job.files.as_deref().map_or(job.devs.len().max(1), |f| f.len()) as u16;
        let end = job.cfg.end_fsync;
        // do_io's end, not do_verify's: its read-backs end with no sync. Nor after an error (an
        // I/O's, a minimum rate missed): do_io's end drains and syncs only `if (!td->error)`.
        if job.verify.as_deref().is_some_and(|v| v.phase) || job.error.is_some() {
            return false;
        }
        let Some(f) = job.fsync.as_deref_mut() else { return false };
        let left = match f.end_left {
            // fio's should_fsync: not right after a sync.
            None if end && f.last != LastIssued::Sync => files,
            None => return false,
            Some(0) => {
                f.end_left = None;
                return false;
            }
            Some(n) => n,
        };
        f.end_left = Some(left - 1);
        // fio_io_sync commits it with td_io_commit: io_u_queued (what getevents left, and the
        // sync) marked in IO depths, counted from zero again.
        job.commit_marks = Some(job.stale_queued + 1);
        job.stale_queued = 0;
        let now = self.q.now_ns();
        self.prep_fsync(j, Fsync::End, Some((files - left) as usize), now);
        true
    }

    /// fio's io_completed for the sync io_us among the reaped batch, taken
    /// out of it (how many it took): each one's time from issue
    /// (`add_sync_clat_sample`), unless clat is off; no bytes, no slat or
    /// lat; nothing for end_fsync's, whose depth count a sync engine never
    /// took (`td_io_queue` in TD_FSYNCING) and an async one's queue did.
    pub(crate) fn fsyncs_accounted(&mut self, j: JobId) -> u32 {
        let reqs = &mut self.reqs;
        let job = &mut self.jobs[j];
        let t_reap = job.ts.reap_ns;
        let measured = t_reap >= job.ts.ramp_end_ns;
        let sync = job.cfg.ioengine.is_sync() || job.null_sync();
        let record = job.cfg.lat_off & LAT_OFF_CLAT == 0;
        let since = t_reap.saturating_sub(job.start_ns);
        let log = self.run.io_log.as_ref().filter(|_| job.cfg.log_queued);
        let (Some(f), ts, reaping) = (job.fsync.as_deref_mut(), &mut job.ts, &mut job.reaping) else { return 0 };
        let before = reaping.len();
        reaping.retain(|&req| {
            let (kind, issued) = (reqs.reqs[req].fsync, reqs.reqs[req].t_issue_ns);
            if let (Fsync::End, Some(log)) = (kind, log) {
                log.0.lock().unwrap().end_fsync_done(j.idx(), reqs.reqs[req].file as usize, since);
            }
            match kind {
                Fsync::No => return true,
                Fsync::Io if measured => {
                    f.stats.total_ios += 1;
                    if record {
                        f.stats.lat.record(t_reap.saturating_sub(issued));
                    }
                }
                Fsync::End if sync => ts.iodepth_level[0] = ts.iodepth_level[0].saturating_sub(1),
                Fsync::End if measured => f.stats.end_in_depth += 1,
                Fsync::Io | Fsync::End => {}
            }
            reqs.free(req);
            false
        });
        let taken = before - reaping.len();
        f.outstanding -= taken as u64;
        f.reaped = None;
        taken as u32
    }
}
