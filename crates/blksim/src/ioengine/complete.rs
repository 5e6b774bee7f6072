//! Kernel path: the ioengine's side of a completion, and fio's. From
//! `blk_mq_end_request`: io_uring's `io_req_task_work_add` (task_work that
//! posts the CQE), `aio_complete` (an event in the ring), or the sync
//! syscall's result → the waiting task woken when it has what it waits
//! for; then fio's `io_completed` accounting of a reaped batch.

use crate::ids::{CpuId, JobId, ReqId};
use crate::ioengine::job::{batch_bucket, JobState};
use crate::stats::IoRecord;
use crate::system::Sim;
use crate::workload::IoEngine;

/// The most bandwidth/IOPS samples one reap may add (500 ms each: 15 years).
const MAX_SAMPLES: u64 = 1_000_000_000;

impl Sim {
    /// Cost, in the completing context, of handing `req` to its engine.
    pub(crate) fn engine_complete_cost(&self, req: ReqId) -> u64 {
        let job = &self.jobs[self.reqs.reqs[req].job()];
        match job.cfg.ioengine {
            IoEngine::Libaio => self.costs.aio_complete_ns,
            // nvme_uring_cmd_end_io on a queue that cannot poll: task_work.
            IoEngine::IoUringCmd(_) if job.iopoll() && !self.reqs.reqs[req].polled => self.costs.io_uring_tw_add_ns,
            // io_complete_rw_iopoll: a store to iopoll_completed.
            IoEngine::IoUring(_) | IoEngine::IoUringCmd(_) if job.iopoll() => 0,
            IoEngine::IoUring(_) | IoEngine::IoUringCmd(_) => self.costs.io_uring_tw_add_ns,
            _ => 0,
        }
    }

    /// Hand a completed request to its engine (from irq, softirq or a poller on `cpu`).
    /// Returns the cost of wake-ups it caused.
    #[inline(always)]
    pub(crate) fn engine_complete(&mut self, cpu: CpuId, req: ReqId) -> u64 {
        let j = self.reqs.reqs[req].job();
        let job = &mut self.jobs[j];
        if job.iopoll() {
            if job.passthru() && !self.reqs.reqs[req].polled {
                // nvme_uring_cmd_end_io: not on a poll queue, the completion
                // goes to task_work (io_uring_cmd_do_in_task_lazy), which the
                // polling task runs; io_uring_cmd_done then marks it done.
                job.tw_pending.push_back(req);
            } else {
                // io_complete_rw_iopoll, polled or (its polled flag cleared)
                // completed by interrupt: marked done; its ring reaps it in io_do_iopoll.
                self.reqs.reqs[req].iopoll_done = true;
            }
            let poller = self.ring_poller(j);
            if self.jobs[poller].spin {
                self.iopoll_poke(poller);
            }
            return 0;
        }
        if let Some(sq) = job.sq_thread {
            // SQPOLL: the SQ thread runs the ring's task_work (io_sq_tw) and posts the CQE.
            job.tw_pending.push_back(req);
            if self.jobs[sq].spin {
                self.iopoll_poke(sq);
            }
            return 0;
        }
        let have = if job.is_uring() {
            job.tw_pending.push_back(req);
            job.tw_pending.len()
        } else {
            job.ready.push_back(req);
            job.ready.len()
        } as u32;
        match job.state {
            JobState::Sleeping if have >= job.wait_for && !job.tag_blocked => self.wake(cpu, j),
            _ => 0,
        }
    }

    /// fio's io_completed for the reaped batch: latencies, bytes, samples; io_us freed.
    pub(crate) fn job_accounted(&mut self, j: JobId) {
        let interval = self.run.sample_interval_ns;
        let reaping = std::mem::take(&mut self.jobs[j].reaping);
        let is_null = matches!(self.jobs[j].cfg.ioengine, IoEngine::Null);
        let job = &mut self.jobs[j];
        let k = reaping.len() as u32;
        job.inflight -= k;
        job.iodepth_complete[batch_bucket(k)] += 1;
        // fio takes one timestamp for the batch, at the start of the reap.
        let mut t_reap = job.reap_ns;
        let now = self.q.now_ns();
        if t_reap > now.saturating_add(1_000_000_000) {
            // A reap stamped far in the future is a broken step, not a run to sample.
            self.run.fail(crate::error::Error::internal(format!(
                "internal error: job {} reaps at {t_reap} ns, beyond the virtual time {now} ns",
                job.cfg.name
            )));
            t_reap = now;
        }
        let measured = t_reap >= job.ramp_end_ns;
        if measured && t_reap >= job.next_sample_ns && (t_reap - job.next_sample_ns) / interval > MAX_SAMPLES {
            // Millions of empty samples: virtual time ran away, not a run to sample.
            self.run.fail(crate::error::Error::internal(format!(
                "internal error: job {} reaps at {t_reap} ns, {} sample intervals past its last sample",
                job.cfg.name,
                (t_reap - job.next_sample_ns) / interval
            )));
            job.next_sample_ns = t_reap + interval;
        }
        while measured && t_reap >= job.next_sample_ns {
            for d in 0..3 {
                job.dirs[d].bw_samples.push(job.sample_bytes[d] * 1_000_000_000 / interval);
                job.dirs[d].iops_samples.push(job.sample_ios[d] * 1_000_000_000 / interval);
            }
            job.sample_bytes = [0; 3];
            job.sample_ios = [0; 3];
            job.next_sample_ns += interval;
        }
        let tio = job.cfg.program == crate::workload::Program::TIoUring;
        for &req in &reaping {
            let r = self.reqs.reqs[req];
            if tio {
                job.tio.pending[r.file as usize] -= 1;
            }
            if r.status < 0 {
                // fio: an io_u error ends the job (continue_on_error=none);
                // t/io_uring's reap_events_uring has ended its thread.
                job.error.get_or_insert(crate::ioengine::job::IoError::of(&r));
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
            if measured {
                let d = r.dir.index();
                let s = &mut job.dirs[d];
                s.total_ios += 1;
                s.io_bytes += r.bytes as u64;
                if !job.cfg.gtod_reduce {
                    if !job.cfg.ioengine.is_sync() {
                        s.slat.record(r.t_issue_ns - r.t_start_ns);
                    }
                    s.clat.record(t_reap - r.t_issue_ns);
                    s.lat.record(t_reap - r.t_start_ns);
                }
                if job.cfg.record_ios {
                    s.ios.push(IoRecord {
                        start_ns: r.t_start_ns,
                        issue_ns: r.t_issue_ns,
                        done_ns: t_reap,
                        offset: r.offset,
                        bytes: r.bytes,
                    });
                }
                job.sample_bytes[d] += r.bytes as u64;
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
                        job.breakdown_ns[k] += ns;
                    }
                }
                job.sample_ios[d] += 1;
            }
            self.reqs.free(req);
        }
        let mut reaping = reaping;
        reaping.clear();
        self.jobs[j].reaping = reaping;
    }
}
