//! fio: `io_submit_mode=offload` (`rate-submit.c` on `workqueue.c`; its
//! state is `workqueue.rs`).
//!
//! fio's thread starts `iodepth` submit workers with the job (each a copy
//! of the job at iodepth 1 with its own engine context) and then only
//! prepares io_us: `get_io_u` (the io_u's start time, so its slat and lat
//! include the hand-over), then `workqueue_enqueue` to the first idle
//! worker from `next_free_worker` on (else the one given work longest
//! ago), waking it if it waits on its condition variable (a futex wake).
//! With no free io_u it waits on `free_cond`; at its end it waits for the
//! workers to go idle (`workqueue_flush`). A worker queues its io_u with
//! the engine as fio's own loop does at iodepth 1 (`io_workqueue_fn`:
//! `td_io_queue`, then reaping at least one), accounts it (in its own
//! statistics, summed into the job's when it exits: `sum_thread_stats`),
//! frees it (`put_io_u` signals `free_cond`: a futex wake if fio's thread
//! waits) and takes its next work, or marks itself idle (it becomes
//! `next_free_worker`) and waits. So the device sees up to `iodepth` I/Os
//! from as many threads, each at depth 1, and fio's IO depths line shows
//! 1 = 100%.
//!
//! The job's CPU line is its own thread's (`RUSAGE_THREAD`; the workers'
//! `thread_stat` carries no rusage of theirs): the workers' time is on
//! their CPUs, in the `blksim` section.
//!
//! A rate paces fio's thread alone: ahead of its rate it sleeps without
//! waiting for its io_us in flight (`rate_ddir` quiesces in inline mode
//! only), so io_us go out at the rate whatever the device's latency.
//!
//! `serialize_overlap`: before queueing, a worker checks every serializing
//! job's io_us in flight (`check_overlap`, by offset and length only) and
//! spins on fio's `overlap_check` mutex while one overlaps its own; a
//! freed io_u ends the spin.
//!
//! Refused (exit 2, said why): `thinktime`, `flow`,
//! `verify`, a replayed log, per-I/O logs, `posixaio` and
//! `sqthread_poll` with offload; `serialize_overlap` without offload (fio's
//! inline check requeues the io_u and reaps first: not modelled).

use crate::fio::job::{Job, JobState};
use crate::fio::workqueue::{Offload, SubmitWorker, Workqueue};
use crate::hw::cpu::Acct;
use crate::ids::{CpuId, JobId};
use crate::sim::Rng;
use crate::stats::CpuStage;
use crate::system::Sim;
use crate::workload::{IoEngine, JobConfig};

impl Sim {
    fn wq(&mut self, j: JobId) -> &mut Workqueue {
        self.jobs[j].offload.as_deref_mut().expect("an offload job").queue()
    }

    fn sw(&mut self, w: JobId) -> &mut SubmitWorker {
        self.jobs[w].offload.as_deref_mut().expect("a submit worker").worker()
    }

    /// Job `i`'s submit workers (its configuration `cfg`, each placed on
    /// `cpus[k]`, where the scheduler puts a new thread of fio's).
    pub(crate) fn add_submit_workers(&mut self, i: usize, cpus: &[CpuId]) -> Result<(), crate::error::Error> {
        let app = JobId::of(i);
        let job = &self.jobs[app];
        let why = if job.pace.as_deref().is_some_and(|p| p.think.think_us > 0) {
            Some("thinktime")
        } else if job.cfg.flow.is_some() {
            Some("flow")
        } else if job.verify.is_some() {
            Some("verify")
        } else if job.replay.is_some() {
            Some("read_iolog")
        } else if job.cfg.record_ios {
            Some("per-I/O logs (write_*_log, write_iolog)")
        } else if job.cfg.ioengine == IoEngine::Posixaio {
            Some("ioengine=posixaio")
        } else if job.engine.ring.sq_thread.is_some() {
            Some("sqthread_poll")
        } else {
            None
        };
        if let Some(what) = why {
            return Err(crate::fio::job_check::not_modelled(
                i,
                format!("io_submit_mode=offload with {what} is not modelled"),
            ));
        }
        let job_serializes = job.cfg.serialize_overlap;
        let cfg = worker_config(&job.cfg, i);
        let devs = job.devs.clone();
        let mut q = Workqueue::default();
        for (k, &cpu) in cpus.iter().enumerate() {
            let index = JobId::of(self.jobs.len());
            let rng = Rng::stream(self.run.seed, &format!("wq/{i}/{k}"));
            let mut w = Job::new(index, cfg.clone(), cpu, devs.clone(), rng);
            // Its io_us come from the job (`offload_take`), through fio's slow path.
            w.shaped = true;
            w.offload = Some(Box::new(Offload::Worker(SubmitWorker {
                parent: app,
                index: k,
                work: Default::default(),
                seq: 0,
                idle: false,
                waiting: false,
                woken: false,
                clocked: false,
                current: None,
                serialize: job_serializes,
            })));
            q.workers.push(index);
            self.jobs.push(w);
        }
        let job = &mut self.jobs[app];
        // fio's thread queues io_us one at a time up to iodepth, whatever the engine.
        (job.engine.depth, job.engine.refuses) = (job.cfg.iodepth.max(1), false);
        job.cfg.iodepth_batch_submit = 1;
        job.shaped = true;
        job.offload = Some(Box::new(Offload::Queue(q)));
        Ok(())
    }

    /// fio's job `j` starts: its workers start with it (`workqueue_init`).
    pub(crate) fn offload_start(&mut self, j: JobId) {
        let Some(Offload::Queue(q)) = self.jobs[j].offload.as_deref() else { return };
        for w in q.workers.clone() {
            self.job_start(w);
        }
    }

    /// The top of fio's loop for an offload job or one of its workers:
    /// true when this took the step (an enqueue, a wait, a worker's end),
    /// false when fio's own loop goes on (prepare, submit, reap).
    pub(crate) fn offload_hold(&mut self, j: JobId) -> bool {
        if let Some(p) = self.jobs[j].offload_worker() {
            return self.worker_hold(j, p);
        }
        let job = &self.jobs[j];
        if !job.queued.is_empty() {
            let cost = job.queued.len() as u64 * self.costs.fio_workqueue_ns;
            self.job_set(j, JobState::WqEnqueue, cost, Acct::User, CpuStage::UserLoop, 0);
            return true;
        }
        if job.pace.is_some() {
            // rate_ddir: ahead of its rate, fio's thread sleeps without quiescing
            // (only inline mode waits for its I/Os first): offload's fixed rate.
            self.pace_check(j, 0);
            if self.pace_idle(j) {
                return true;
            }
        }
        let job = &self.jobs[j];
        if job.inflight > 0 && (job.done_issuing || job.inflight >= job.engine.depth) {
            // No free io_u (get_io_u's wait on free_cond), or workqueue_flush.
            self.wq_wait(j);
            return true;
        }
        false
    }

    /// A worker's loop: its io_u in flight goes on (fio's own reap),
    /// work waiting is taken, else it ends with its job or waits.
    fn worker_hold(&mut self, w: JobId, p: JobId) -> bool {
        let job = &self.jobs[w];
        if job.cur_depth() > 0 || !job.engine.ready.is_empty() {
            return false;
        }
        if let Some(&r) = self.sw(w).work.front() {
            if self.sw(w).serialize && self.overlaps_in_flight(w, r) {
                // check_overlap: it spins on the mutex until the io_u in its way is done.
                let ns = crate::sched::core::SCHED_SLICE_NS;
                self.job_set(w, JobState::OverlapSpin, ns, Acct::User, CpuStage::UserLoop, 0);
                self.jobs[w].task.spin = true;
                return true;
            }
            return false;
        }
        if self.jobs[p].task.state == JobState::Done {
            self.worker_end(w);
            return true;
        }
        // SW_F_IDLE, and it becomes next_free_worker.
        let sw = self.sw(w);
        sw.idle = true;
        let index = sw.index;
        self.wq(p).next_free_worker = index;
        self.wq_wait(w);
        true
    }

    /// `check_overlap`: does `r` overlap an io_u in flight in any job that
    /// serializes (by offset and length, as fio compares them, whatever the file)?
    fn overlaps_in_flight(&self, w: JobId, r: crate::ids::ReqId) -> bool {
        let (x1, x2) = {
            let q = &self.reqs.reqs[r];
            (q.offset, q.offset + q.bytes as u64)
        };
        self.jobs.iter().any(|k| match k.offload.as_deref() {
            Some(Offload::Worker(s)) if s.serialize && k.index != w => s.current.is_some_and(|c| {
                let q = &self.reqs.reqs[c];
                x1 < q.offset + q.bytes as u64 && q.offset < x2
            }),
            _ => false,
        })
    }

    fn worker_end(&mut self, w: JobId) {
        let job = &mut self.jobs[w];
        job.task.state = JobState::Done;
        job.task.remaining_ns = 0;
    }

    /// pthread_cond_wait: the futex wait's syscall and schedule().
    fn wq_wait(&mut self, j: JobId) {
        self.job_futex_wait(j, JobState::WqWait);
    }

    /// The wait's syscall ended on `cpu`: it sleeps unless what it waits
    /// for came meanwhile.
    pub(crate) fn wq_wait_entered(&mut self, cpu: CpuId, j: JobId) {
        let ready = match self.jobs[j].offload_worker() {
            Some(p) => !self.sw(j).work.is_empty() || self.jobs[p].task.state == JobState::Done,
            None => self.parent_may_go(j),
        };
        if ready {
            return self.job_next(j);
        }
        match self.jobs[j].offload.as_deref_mut().expect("offload") {
            Offload::Queue(q) => (q.waiting, q.woken) = (true, false),
            Offload::Worker(w) => (w.waiting, w.woken) = (true, false),
        }
        self.task_sleep(cpu, j, false);
    }

    /// fio's thread may go on: an io_u is free (and it still issues), or all are (the flush).
    fn parent_may_go(&self, j: JobId) -> bool {
        let job = &self.jobs[j];
        job.inflight == 0 || (!job.done_issuing && job.inflight < job.engine.depth)
    }

    /// A task that waited on a condition variable is back on its CPU.
    pub(crate) fn wq_woken(&mut self, j: JobId) {
        match self.jobs[j].offload.as_deref_mut().expect("offload") {
            Offload::Queue(q) => q.waiting = false,
            Offload::Worker(w) => w.waiting = false,
        }
        self.job_next(j);
        if self.jobs[j].task.state != JobState::Done {
            let cs = self.costs.context_switch_ns;
            self.jobs[j].task.add_head_sys(cs, CpuStage::Wakeup);
        }
    }

    /// fio's enqueue step on `cpu` ended: each prepared io_u goes to a
    /// worker, which is woken if it waits for work.
    pub(crate) fn wq_enqueued(&mut self, cpu: CpuId, j: JobId) {
        let reqs = std::mem::take(&mut self.jobs[j].queued);
        self.jobs[j].inflight += reqs.len() as u32;
        for r in reqs {
            let workers = std::mem::take(&mut self.wq(j).workers);
            let (idle, seq): (Vec<bool>, Vec<u64>) = workers
                .iter()
                .map(|&w| match self.jobs[w].offload.as_deref() {
                    Some(Offload::Worker(sw)) => (sw.idle, sw.seq),
                    _ => unreachable!("a workqueue's workers are submit workers"),
                })
                .unzip();
            let q = self.wq(j);
            q.workers = workers;
            let k = q.pick(|i| idle[i], |i| seq[i]);
            q.work_seq += 1;
            let (w, seq) = (q.workers[k], q.work_seq);
            let sw = self.sw(w);
            sw.work.push_back(r);
            sw.seq = seq;
            sw.idle = false;
            if sw.waiting && !sw.woken {
                sw.woken = true;
                let cost = self.costs.syscall_ns + self.costs.futex_ns + self.wake(cpu, w);
                self.jobs[j].task.debt_ns += cost;
            }
        }
        self.job_next(j);
    }

    /// A worker's prepare step: it takes up to `n` io_us of its list
    /// (their start times are fio's thread's).
    pub(crate) fn offload_take(&mut self, w: JobId, n: u32) {
        let p = self.jobs[w].offload_worker().expect("a submit worker");
        if !std::mem::replace(&mut self.sw(w).clocked, true) {
            // Its samples and ramp on the job's clock, which sums them.
            let (ramp, sample) = (self.jobs[p].ts.ramp_end_ns, self.jobs[p].ts.next_sample_ns);
            (self.jobs[w].ts.ramp_end_ns, self.jobs[w].ts.next_sample_ns) = (ramp, sample);
        }
        for _ in 0..n {
            let Some(&r) = self.sw(w).work.front() else { break };
            if self.sw(w).serialize {
                // check_overlap, then IO_U_F_FLIGHT: from here the others see it in flight.
                if self.overlaps_in_flight(w, r) {
                    break;
                }
                self.sw(w).current = Some(r);
            }
            self.sw(w).work.pop_front();
            self.reqs.reqs[r].owner = crate::block::Owner::Job(w);
            self.jobs[w].queued.push(r);
        }
    }

    /// A worker accounted `k` io_us: they are free in fio's job
    /// (`put_io_u`), whose thread is woken if it waits for one. An I/O
    /// error ends the job as its own would.
    pub(crate) fn offload_freed(&mut self, w: JobId, k: u32) {
        let Some(p) = self.jobs[w].offload_worker() else { return };
        if let Some(e) = self.jobs[w].error.take() {
            // (The worker serves on: its job stops issuing.)
            self.jobs[w].done_issuing = false;
            let job = &mut self.jobs[p];
            job.error.get_or_insert(e);
            job.done_issuing = true;
        }
        self.jobs[p].inflight -= k;
        if std::mem::take(&mut self.sw(w).current).is_some() {
            // Workers spinning in check_overlap look again.
            let spinning: Vec<JobId> =
                self.jobs.iter().filter(|k| k.task.state == JobState::OverlapSpin).map(|k| k.index).collect();
            for k in spinning {
                self.iopoll_poke(k);
            }
        }
        let go = self.parent_may_go(p);
        let q = self.wq(p);
        if q.waiting && !q.woken && go {
            q.woken = true;
            let cpu = self.jobs[w].task.cpu;
            let cost = self.costs.syscall_ns + self.costs.futex_ns + self.wake(cpu, p);
            self.jobs[w].task.debt_ns += cost;
        }
    }

    /// fio's offload job `j` ended: its workers exit (each waits for work
    /// by now) and their statistics are summed into the job's.
    pub(crate) fn offload_owner_done(&mut self, j: JobId) {
        let Some(Offload::Queue(q)) = self.jobs[j].offload.as_deref() else { return };
        for w in q.workers.clone() {
            let job = &self.jobs[w];
            if job.task.state == JobState::Sleeping && job.offload.as_ref().is_some_and(|o| o.waiting()) {
                self.sw(w).waiting = false;
                self.worker_end(w);
            }
            let (dirs, ts) = {
                let job = &mut self.jobs[w];
                (std::mem::take(&mut job.dirs), job.ts.clone())
            };
            let job = &mut self.jobs[j];
            for (s, d) in job.dirs.iter_mut().zip(dirs) {
                s.absorb(d);
            }
            for b in 0..7 {
                job.ts.iodepth_level[b] += ts.iodepth_level[b];
                job.ts.iodepth_submit[b] += ts.iodepth_submit[b];
                job.ts.iodepth_complete[b] += ts.iodepth_complete[b];
            }
            for (a, b) in job.ts.breakdown_ns.iter_mut().zip(ts.breakdown_ns) {
                *a += b;
            }
        }
    }
}

/// The configuration of job `i`'s submit workers (`cfg` is the job's): a
/// copy at iodepth 1 (`io_workqueue_init_worker_fn`) that issues only what
/// it is handed.
fn worker_config(cfg: &JobConfig, i: usize) -> JobConfig {
    let mut c = cfg.clone();
    c.name = format!("fio-wq-{}", 1001 + i);
    c.iodepth = 1;
    c.iodepth_low = 1;
    c.iodepth_batch_submit = 1;
    c.iodepth_batch_complete_min = 1;
    c.iodepth_batch_complete_max = 1;
    c.offload = false;
    c.runtime_ns = None;
    c.time_based = false;
    c.number_ios = 0;
    c.norandommap = true;
    c.random_generator = crate::workload::RandomGenerator::Default;
    c
}
