//! fio: `io_completed` (`io_u.c`) for a reaped batch — each io_u's
//! latencies (slat, clat, lat and the model's stages), bytes and the
//! bandwidth/IOPS samples, a log record when the job writes fio logs, an
//! io_u error or an I/O over `max_latency` (`lat_fatal`) ending the job —
//! then the io_us freed.

use crate::fio::job::batch_bucket;
use crate::ids::JobId;
use crate::stats::IoRecord;
use crate::system::Sim;
use crate::workload::{IoEngine, LAT_OFF_LAT};

/// The most bandwidth/IOPS samples one reap may add (500 ms each: 15 years).
const MAX_SAMPLES: u64 = 1_000_000_000;

impl Sim {
    /// Whether the `reap` completions a chain takes (after running `tw`
    /// task_work items) include a failed I/O. A trim io_uring's ring refused
    /// is none: fio's `fio_ioring_event` sets `async_trim_fail` as it takes
    /// it, before queueing more, so trims go to the queue hook from then on.
    pub(crate) fn reaps_a_failure(&mut self, j: JobId, tw: u32, reap: u32) -> bool {
        let e = &self.jobs[j].engine;
        let taken = e.ready.iter().chain(e.ring.tw_pending.iter().take(tw as usize)).take(reap as usize);
        let (mut failed, mut refused) = (false, false);
        for &r in taken {
            let rq = &self.reqs.reqs[r];
            refused |= rq.async_trim_refused();
            failed |= rq.status < 0 && !rq.async_trim_refused();
        }
        self.jobs[j].async_trim_failed |= refused;
        failed
    }

    /// fio's io_completed for the reaped batch: latencies, bytes, samples; io_us freed.
    pub(crate) fn job_accounted(&mut self, j: JobId) {
        let interval = self.run.sample_interval_ns;
        let mut syncs = 0;
        let job = &mut self.jobs[j];
        if let Some(files) = job.files.as_deref_mut().filter(|f| f.deferred) {
            // The batch's io_us put their files, a sync's too (before it leaves the batch
            // below); end_fsync's io_u is IO_U_F_NO_FILE_PUT.
            files.deferred = false;
            files.io_us_put(&self.reqs.reqs, job.reaping.iter());
        }
        let reaping = if self.jobs[j].shaped {
            // The syncs first, out of the batch (they count in its size only); verify's read-backs.
            syncs = self.fsyncs_accounted(j);
            let reaping = std::mem::take(&mut self.jobs[j].reaping);
            if self.jobs[j].vasync.is_some() {
                self.verify_hand_over(j, &reaping);
            }
            reaping
        } else {
            std::mem::take(&mut self.jobs[j].reaping)
        };
        let is_null = matches!(self.jobs[j].cfg.ioengine, IoEngine::Null);
        let job = &mut self.jobs[j];
        let k = reaping.len() as u32 + syncs;
        job.inflight -= k;
        if job.shaped && !job.replay_accounts(reaping.len() as u32) {
            // The log ran out (td->done): fio never reaps these. Its issued count has them.
            let measured = job.ts.reap_ns >= job.ts.ramp_end_ns;
            for &req in &reaping {
                if measured {
                    job.dirs[self.reqs.reqs[req].dir.index()].abandoned();
                }
                self.reqs.free(req);
            }
            let mut reaping = reaping;
            reaping.clear();
            self.jobs[j].reaping = reaping;
            return;
        }
        let sync = job.cfg.ioengine.is_sync() || job.null_sync();
        // Trims from the queue hook complete in it (no slat): libaio's, posixaio's, and io_uring's
        // once one through its ring failed (io_us issued before that went through the ring).
        let sync_trims = job.sync_trims();
        // fio takes one timestamp for the batch, at the start of the reap.
        let mut t_reap = job.ts.reap_ns;
        let now = self.q.now_ns();
        if t_reap > now.saturating_add(1_000_000_000) {
            // A reap stamped far in the future is a broken step, not a run to sample.
            self.run.fail(crate::error::Error::internal(format!(
                "internal error: job {} reaps at {t_reap} ns, beyond the virtual time {now} ns",
                job.cfg.name
            )));
            t_reap = now;
        }
        let measured = t_reap >= job.ts.ramp_end_ns;
        if measured && !job.ts.ramp_done() {
            // fio's first io_completed past the ramp (`ramp_period_over`).
            job.ramp_over(t_reap, true);
            if let Some(parent) = job.offload.as_deref().and_then(|o| o.parent()) {
                if !self.jobs[parent].ts.ramp_done() {
                    self.jobs[parent].ramp_over(t_reap, false);
                }
            }
        }
        let job = &mut self.jobs[j];
        if !job.null_sync() {
            job.ts.iodepth_complete[batch_bucket(k)] += 1;
        }
        if sync && job.cfg.io_in_polling() {
            // io_in_polling's wait_for_completions after each io_u, none in
            // flight: td_io_getevents takes nothing and counts a reap of 0.
            job.ts.iodepth_complete[0] += k as u64;
        }
        if measured && t_reap >= job.ts.next_sample_ns && (t_reap - job.ts.next_sample_ns) / interval > MAX_SAMPLES {
            // Millions of empty samples: virtual time ran away, not a run to sample.
            self.run.fail(crate::error::Error::internal(format!(
                "internal error: job {} reaps at {t_reap} ns, {} sample intervals past its last sample",
                job.cfg.name,
                (t_reap - job.ts.next_sample_ns) / interval
            )));
            job.ts.next_sample_ns = t_reap + interval;
        }
        while measured && t_reap >= job.ts.next_sample_ns {
            // Per second: in u128, since bytes x 10^9 passes u64 from 18.4 GB a window
            // (a 500 ms window at 37 GB/s, or 10 s of bwavgtime at 1.8 GB/s).
            let per_sec = |n: u64| (u128::from(n) * 1_000_000_000 / u128::from(interval)) as u64;
            for d in 0..3 {
                job.dirs[d].bw_samples.push(per_sec(job.ts.sample_bytes[d]));
                job.dirs[d].iops_samples.push(per_sec(job.ts.sample_ios[d]));
            }
            job.ts.sample_bytes = [0; 3];
            job.ts.sample_ios = [0; 3];
            job.ts.next_sample_ns += interval;
        }
        let tio = job.cfg.program == crate::workload::Program::TIoUring;
        let mut new_error = false;
        for &req in &reaping {
            let r = &self.reqs.reqs[req];
            if tio {
                job.tio.pending[r.file as usize] -= 1;
            }
            if r.status < 0 && r.async_trim_refused() {
                // fio_ioring_event: a trim's error through the ring is no error; fio takes it
                // as done with nothing trimmed (resid = buflen). (`reaps_a_failure` set
                // async_trim_fail as the reap took it, before fio queued more.)
                job.failed = job.failed.saturating_sub(1);
                if measured {
                    job.dirs[r.dir.index()].empty_ios += 1;
                } else {
                    job.ts.ramp_empty[r.dir.index()] += 1;
                }
            } else if r.status < 0 {
                // fio: an io_u error ends the job (continue_on_error=none);
                // t/io_uring's reap_events_uring has ended its thread. fio's
                // issued count (total_io_u) has it; its bytes and latencies do not.
                if measured {
                    job.dirs[r.dir.index()].total_ios += 1;
                    job.dirs[r.dir.index()].failed_ios += 1;
                }
                new_error |= job.error.is_none();
                job.error.get_or_insert(crate::fio::job::IoError::of(r));
                job.failed = job.failed.saturating_sub(1);
                job.done_issuing = true;
                self.reqs.free(req);
                continue;
            }
            if t_reap < r.t_issue_ns {
                // Invariant: an I/O is reaped after it was issued (checked in
                // release builds too: a wrapped latency would be silent).
                self.run.fail(crate::error::Error::internal(format!(
                    "internal error: job {} reaps at {t_reap} ns an I/O issued at {} ns",
                    job.cfg.name, r.t_issue_ns
                )));
                continue;
            }
            if !measured {
                job.ts.ramp_ios[r.dir.index()] += 1;
                job.ts.ramp_bytes[r.dir.index()] += r.bytes as u64;
            } else {
                let d = r.dir.index();
                let s = &mut job.dirs[d];
                s.total_ios += 1;
                s.io_bytes += r.bytes as u64;
                if job.cfg.lat_off == 0 {
                    if !(sync || sync_trims && r.dir == crate::workload::Direction::Trim && r.status == 0) {
                        s.slat.record(r.t_issue_ns - r.t_start_ns);
                    }
                    s.clat.record(t_reap - r.t_issue_ns);
                    s.lat.record(t_reap - r.t_start_ns);
                } else {
                    let slat = !(sync || sync_trims && r.dir == crate::workload::Direction::Trim && r.status == 0);
                    s.record_some(job.cfg.lat_off, slat, r.t_start_ns, r.t_issue_ns, t_reap);
                }
                if !s.prios.is_empty() {
                    s.record_prio(&job.cfg, r.prio_index, r.t_start_ns, r.t_issue_ns, t_reap);
                }
                if job.cfg.record_ios {
                    let rec = IoRecord {
                        start_ns: r.t_start_ns,
                        issue_ns: r.t_issue_ns,
                        done_ns: t_reap,
                        offset: r.offset,
                        bytes: r.bytes,
                        ioprio: r.ioprio,
                        seq: job.ts.records,
                    };
                    job.ts.records += 1;
                    match &self.run.io_log {
                        Some(log) => log.0.lock().expect("io log").completed(j.idx(), d, job.ts.ramp_end_ns, &rec),
                        None => s.ios.push(rec),
                    }
                }
                job.ts.sample_bytes[d] += r.bytes as u64;
                if !is_null {
                    // The stages add up to fio's lat: each ends where the next begins.
                    let issue = r.t_issue_ns.max(r.t_start_ns);
                    let dispatch = r.t_dispatch_ns.max(issue);
                    let cqe = r.t_cqe_ns.max(dispatch);
                    let done = r.t_done_ns.max(cqe);
                    let reap = t_reap.max(done);
                    for (k, ns) in [issue - r.t_start_ns, dispatch - issue, cqe - dispatch, done - cqe, reap - done]
                        .into_iter()
                        .enumerate()
                    {
                        job.ts.breakdown_ns[k] += ns;
                    }
                }
                job.ts.sample_ios[d] += 1;
                // max_latency's lat_fatal, latency_target's failed I/O.
                if t_reap - r.t_start_ns > job.lat_watch_ns[d] && job.cfg.lat_off & LAT_OFF_LAT == 0 {
                    new_error |= job.lat_over(r, t_reap - r.t_start_ns, d);
                }
            }
            self.reqs.free(req);
        }
        let mut reaping = reaping;
        reaping.clear();
        self.jobs[j].reaping = reaping;
        if new_error && self.jobs[j].cfg.error_options.any() {
            let e = self.jobs[j].error.expect("the error just taken");
            let what = format!("an I/O error (errno {}) on a {}", -e.errno, e.dir.name());
            self.error_options_check(j, &what);
        }
        if self.jobs[j].shaped {
            // (Only a shaped job's free list holds a flagged io_u.)
            self.jobs[j].io_us_accounted(k);
            self.offload_freed(j, k);
            if self.jobs[j].min_rate.is_some() {
                self.jobs[j].min_rate_check(t_reap);
            }
            if self.jobs[j].lat_target.is_some() {
                self.lat_target_check(j);
            }
        }
    }
}

impl Sim {
    /// Job `j`'s new I/O error (`what`) under an option that changes what follows it:
    /// `continue_on_error` or `ignore_error` (fio may go on past it). Not modelled.
    #[cold]
    #[inline(never)]
    fn error_options_check(&mut self, j: JobId, what: &str) {
        let cfg = &self.jobs[j].cfg;
        let why = cfg.error_options.unmodelled();
        if why.is_empty() {
            return;
        }
        let e = crate::error::Error::not_modelled(format!(
            "job '{}': {what}: {}, which blksim does not model (it ends the job alone, as fio does without them)",
            cfg.name,
            why.join("; ")
        ));
        self.run.fail(e);
    }
}
