//! fio: the `posixaio` engine (`engines/posixaio.c`) on glibc's POSIX AIO
//! (`sysdeps/pthread/aio_misc.c`, `aio_suspend.c`); its state is `aio.rs`.
//!
//! fio queues each io_u with `aio_read`/`aio_write` (the engine has no
//! commit): `__aio_enqueue_request` links it, under `__aio_requests_mutex`,
//! behind the request its file descriptor has running, or onto the run
//! list, waking an idle helper thread (`pthread_cond_signal`: a futex wake)
//! or, with none idle, creating one (`pthread_create`, up to `aio_threads`,
//! 20). A helper thread (`handle_fildes_io`) does one request at a time with
//! a blocking pread/pwrite, stores its result, wakes an `aio_suspend` that
//! waits for it (`__aio_notify`: a futex wake), puts the descriptor's next
//! request at the end of the run list and takes the run list's first (waking
//! or creating another helper if more wait); with none it waits on the
//! condition variable (for `aio_idle_time`, 1 s). So each file's requests
//! reach the device one at a time, whatever fio's iodepth, and a job's files
//! run on as many helpers, up to 20.
//!
//! fio's getevents walks all its io_us in index order (`io_u_qiter`),
//! calling `aio_error` on those in flight and taking every one done (not
//! capped at `max`); with fewer than `min` done it calls `aio_suspend` on the
//! first eight still in progress, which sleeps in a futex until one of those
//! eight is done, and walks again. fio takes io_us from a LIFO free list
//! filled in index order, so the first it queues have the highest indices
//! and the helper finishes them before the ones fio waits on: fio sleeps
//! through several completions and reaps them together.
//!
//! Not modelled, and why it is small: contention on `__aio_requests_mutex`
//! between fio's thread and the helper (each holds it for a few hundred ns
//! per request); the helper's exit after `aio_idle_time` without work
//! (longer than fio's gaps between requests); glibc's limit of 20 helper
//! threads per process shared by the jobs run as threads (`thread`) of one
//! fio process (each job here has its own up to 20); request priorities
//! (`aio_reqprio`, 0 from fio); fio queueing an io_u to glibc as soon as it is prepared
//! when `iodepth_batch_submit` > 1 (here the batch goes at its commit: the
//! helper starts a batch's first request that much later).

use crate::fio::aio::{Aio, SUSPEND_ENTRIES};
use crate::fio::job::{batch_bucket, Job, JobState};
use crate::hw::cpu::{Acct, Bill};
use crate::ids::{CpuId, JobId, ReqId};
use crate::sim::Rng;
use crate::stats::CpuStage;
use crate::system::Sim;
use crate::workload::{IoEngine, JobConfig, Program};

impl Sim {
    /// glibc's AIO helper threads of posixaio job `i` (configured by
    /// `aio_helper_config`), one per file up to `aio_threads`, each on its
    /// CPU of `cpus` (where the scheduler puts a new thread: the
    /// least-loaded CPU fio may use); they do the requests' pread/pwrite,
    /// the psync path, and are created as glibc creates them.
    pub(crate) fn add_aio_helpers(
        &mut self,
        i: usize,
        cfg: JobConfig,
        cpus: &[CpuId],
    ) -> Result<(), crate::error::Error> {
        let app = JobId::of(i);
        if self.jobs[app].devs.iter().any(|&d| self.devs[d].elevator.is_some()) {
            return Err(crate::fio::job_check::not_modelled(
                i,
                "ioengine=posixaio with an I/O scheduler on the device is not modelled",
            ));
        }
        let devs = self.jobs[app].devs.clone();
        let mut helpers = Vec::new();
        for (k, &cpu) in cpus.iter().enumerate() {
            let index = JobId::of(self.jobs.len());
            let mut c = cfg.clone();
            if k > 0 {
                c.name = format!("{}.{k}", cfg.name);
            }
            let stream = if k == 0 { format!("aio/{i}") } else { format!("aio/{i}/{k}") };
            let mut helper = Job::new(index, c, cpu, devs.clone(), Rng::stream(self.run.seed, &stream));
            helper.engine.aio = Some(Box::new(Aio::new(app, 0, 0, Vec::new())));
            // aio_fsync: the helper runs fsync(2) (fdatasync's O_SYNC too, as fio asks).
            helper.fsync = self.jobs[app].fsync.as_ref().map(|_| Box::default());
            helpers.push(index);
            self.jobs.push(helper);
        }
        let depth = self.jobs[app].engine.depth;
        self.jobs[app].engine.aio = Some(Box::new(Aio::new(app, depth, devs.len().max(1), helpers)));
        Ok(())
    }

    fn aio(&mut self, j: JobId) -> &mut Aio {
        self.jobs[j].engine.aio.as_deref_mut().expect("a posixaio job or its helper")
    }

    /// fio's io_us went to glibc with `aio_read`/`aio_write` (the step that
    /// called them ended): in flight for fio, queued for the helper thread,
    /// which is created at the first request and woken if it waits for work.
    pub(crate) fn aio_queued(&mut self, cpu: CpuId, j: JobId) {
        let now = self.q.now_ns();
        let mut reqs = std::mem::take(&mut self.jobs[j].queued);
        for &r in &reqs {
            // fio takes an async engine's issue time as its queue hook returns.
            self.reqs.reqs[r].t_issue_ns = now;
            self.log_issued(j, r, now);
        }
        let n = reqs.len() as u64;
        let job = &mut self.jobs[j];
        job.inflight += n as u32;
        let depth = job.cur_depth();
        job.mark_depth(depth, n as u32);
        // td_io_queue marks a submit and a completion of one io_u per queued
        // io_u for an engine without a commit hook (and getevents marks its
        // completions again).
        job.ts.iodepth_submit[batch_bucket(1)] += n;
        job.ts.iodepth_complete[batch_bucket(1)] += n;
        let aio = job.engine.aio.as_deref_mut().expect("posixaio");
        let mut wanted = 0;
        for &r in &reqs {
            let index = aio.free.pop().expect("a free io_u for each queued");
            aio.inflight.push((r, index));
            wanted += aio.enqueue(r, self.reqs.reqs[r].file as usize) as u32;
        }
        reqs.clear();
        self.jobs[j].queued = reqs;
        if self.jobs[j].shaped {
            self.replay_committed(j);
        }
        for _ in 0..wanted {
            self.aio_thread_for_work(cpu, j, j);
        }
    }

    /// A request went onto job `j`'s run list (`__aio_enqueue_request`), or
    /// a helper took one and more wait (`handle_fildes_io`): an idle helper
    /// is signalled (a futex wake), or with none idle a new one is created
    /// (up to `aio_threads`; wake_up_new_task puts it on a run queue). The
    /// cost is `payer`'s, except the first thread's, which the queueing
    /// step paid (`submit_syscall_cost`).
    fn aio_thread_for_work(&mut self, cpu: CpuId, j: JobId, payer: JobId) {
        let aio = self.aio(j);
        let (started, helpers) = (aio.started, aio.helpers.clone());
        let idle: Vec<JobId> = helpers[..started].iter().copied().filter(|&h| self.aio(h).idle).collect();
        if !idle.is_empty() {
            // pthread_cond_signal wakes one waiter; one already woken is no longer waiting.
            if let Some(&h) = idle.iter().find(|&&h| !self.aio(h).woken) {
                self.aio(h).woken = true;
                let cost = self.costs.syscall_ns + self.costs.futex_ns + self.wake(cpu, h);
                self.jobs[payer].task.debt_ns += cost;
            }
            return;
        }
        if started < helpers.len() {
            self.aio(j).started += 1;
            if started > 0 {
                self.jobs[payer].task.debt_ns += self.costs.thread_create_ns;
            }
            self.job_start(helpers[started]);
        }
    }

    /// fio's posixaio getevents: walk the io_us in index order (`aio_error`
    /// on each in flight) and take every one done; fewer than `min`,
    /// `aio_suspend` on the first eight in progress (its wait list, a futex
    /// wait). `head` and `user_ns` come before (a wake-up's).
    pub(crate) fn aio_getevents(&mut self, j: JobId, head: Bill, user_ns: u64) {
        let (min, _) = self.jobs[j].reap_bounds(self.q.now_ns());
        let walk = self.jobs[j].engine.depth as u64 * self.costs.glibc_aio_error_ns;
        let job = &mut self.jobs[j];
        let aio = job.engine.aio.as_deref_mut().expect("posixaio");
        let ready = job.engine.ready.len() as u32;
        if ready >= min {
            // Taken in index order, each io_u back on the free list as fio accounts it.
            job.engine.ready.make_contiguous().sort_by_key(|&r| aio.index(r));
            for &r in &job.engine.ready {
                let at = aio.inflight.iter().position(|e| e.0 == r).expect("in flight");
                let (_, index) = aio.inflight.swap_remove(at);
                aio.free.push(index);
            }
            aio.listed.clear();
            return self.job_chain(j, head, user_ns + walk, 0, ready);
        }
        let mut waiting: Vec<(u32, ReqId)> =
            aio.inflight.iter().filter(|e| !job.engine.ready.contains(&e.0)).map(|&(r, i)| (i, r)).collect();
        waiting.sort_unstable();
        aio.listed = waiting.iter().take(SUSPEND_ENTRIES).map(|&(_, r)| r).collect();
        let mut bill = head;
        self.take_debt(j, &mut bill);
        let c = &self.costs;
        let pre = bill.total();
        let user = bill.add(CpuStage::UserLoop, user_ns + walk + c.glibc_aio_suspend_ns);
        let sys =
            bill.add(CpuStage::Syscall, c.syscall_ns + c.futex_ns) + bill.add(CpuStage::Wakeup, c.context_switch_ns);
        self.job_set_segs(j, JobState::ReapEnter, [(Acct::Sys, pre), (Acct::User, user), (Acct::Sys, sys)], bill, 0);
    }

    /// fio's `aio_suspend` entered its futex wait (the `ReapEnter` step
    /// ended on `cpu`): it sleeps unless one of the requests it waits on is
    /// done already.
    pub(crate) fn aio_suspended(&mut self, cpu: CpuId, j: JobId) {
        let job = &self.jobs[j];
        let listed = &job.engine.aio.as_ref().expect("posixaio").listed;
        if listed.iter().any(|r| job.engine.ready.contains(r)) {
            return self.aio_woken(j, 0, false);
        }
        self.task_sleep(cpu, j, false);
    }

    /// The helper finished `r` for fio's job `j` (`__aio_notify`, on
    /// `cpu`): fio's walk will find it done; `aio_suspend` waiting on it
    /// is woken. Returns the cost of the wake-up.
    fn aio_notify(&mut self, cpu: CpuId, j: JobId, r: ReqId) -> u64 {
        let job = &mut self.jobs[j];
        job.engine.ready.push_back(r);
        match job.task.state {
            JobState::Sleeping if job.engine.aio.as_ref().is_some_and(|a| a.listed.contains(&r)) => {
                job.engine.aio.as_deref_mut().expect("posixaio").listed.clear();
                self.wake(cpu, j)
            }
            // fio's iolog_delay reaps as completions come.
            JobState::ReplaySpin => {
                self.iopoll_poke(j);
                0
            }
            _ => 0,
        }
    }

    /// fio's thread back from `aio_suspend` (woken, or a request it waits
    /// on was done before it slept): it walks its io_us again.
    pub(crate) fn aio_woken(&mut self, j: JobId, head_ns: u64, woke: bool) {
        let wake = if woke { self.user_costs(j).wake } else { 0 };
        self.aio_getevents(j, Bill::of(CpuStage::Wakeup, head_ns), wake);
    }

    /// The helper thread `h` runs (created, woken for work, or back from
    /// its pread/pwrite after `head_ns` of schedule()): the request it
    /// finished goes back to fio, the next is taken and submitted; with
    /// none it waits on the condition variable, or ends with fio's job.
    pub(crate) fn aio_helper_next(&mut self, h: JobId, head_ns: u64) {
        let j = self.aio(h).peer;
        self.aio(h).idle = false;
        // A pwrite on a file opened O_SYNC (`sync=1`) returns through generic_write_sync.
        let write_sync = self.write_sync_ns(h);
        let finished = self.jobs[h].engine.ready.pop_front();
        if let Some(r) = finished {
            self.aio(h).current = None;
            let file = self.reqs.reqs[r].file as usize;
            self.aio(j).dequeue(file);
        }
        let next = self.aio(j).runlist.pop_front();
        if next.is_some() && !self.aio(j).runlist.is_empty() {
            // More on the run list than this one: another thread for them.
            let cpu = self.jobs[h].task.cpu;
            self.aio_thread_for_work(cpu, j, h);
        }
        if finished.is_none() && next.is_none() && self.jobs[j].task.state == JobState::Done {
            let job = &mut self.jobs[h];
            job.task.state = JobState::Done;
            job.task.remaining_ns = 0;
            return;
        }
        let cpu = self.jobs[h].task.cpu;
        let mut bill = Bill::of(CpuStage::Wakeup, head_ns);
        self.take_debt(h, &mut bill);
        bill.add(CpuStage::Block, write_sync);
        let c = &self.costs;
        let pre = bill.total();
        let user = bill.add(CpuStage::UserLoop, if finished.is_some() { c.glibc_aio_done_ns } else { 0 });
        let mut sys = bill.add(CpuStage::Syscall, c.syscall_ns);
        if let Some(r) = next {
            // pread/pwrite: the sync path's block submission, then schedule() out until it completes.
            self.jobs[h].queued.push(r);
            sys += self.block_submit_cost(h, cpu, &mut bill);
        } else {
            // pthread_cond_timedwait: a futex wait, schedule() out.
            sys += bill.add(CpuStage::Syscall, self.costs.futex_ns);
        }
        sys += bill.add(CpuStage::Wakeup, self.costs.context_switch_ns);
        let aio = self.aio(h);
        aio.finished = finished;
        aio.next = next;
        self.job_set_segs(h, JobState::AioWork, [(Acct::Sys, pre), (Acct::User, user), (Acct::Sys, sys)], bill, 0);
    }

    /// The helper's step on `cpu` ended: fio hears of the finished request
    /// (a futex wake if it waits in `aio_suspend`), the next one's bio went
    /// to the device; the helper sleeps until it completes, or for work.
    pub(crate) fn aio_work_done(&mut self, cpu: CpuId, h: JobId) {
        let j = self.aio(h).peer;
        let (finished, next) = {
            let aio = self.aio(h);
            (aio.finished.take(), aio.next.take())
        };
        if let Some(r) = finished {
            let woke = self.aio_notify(cpu, j, r);
            if woke > 0 {
                self.jobs[h].task.debt_ns += self.costs.syscall_ns + self.costs.futex_ns + woke;
            }
        }
        if next.is_some() {
            self.aio(h).current = next;
            self.submit_queued_for(cpu, h, j);
        }
        // The completion (or, waiting for work, a request) may already be in.
        let more = if next.is_some() { !self.jobs[h].engine.ready.is_empty() } else { !self.aio(j).runlist.is_empty() };
        // (With nothing to do and fio's job over, the helper ends.)
        if more || (next.is_none() && self.jobs[j].task.state == JobState::Done) {
            return self.aio_helper_next(h, 0);
        }
        // Sleeping in the pread (iowait) until its completion wakes it, or for work.
        self.task_sleep(cpu, h, next.is_some());
        if next.is_some() {
            self.jobs[h].task.wait_for = 1;
        } else {
            self.jobs[h].task.wait_for = u32::MAX;
            let aio = self.aio(h);
            aio.idle = true;
            aio.woken = false;
        }
    }

    /// fio's posixaio job `j` ended: a helper that waits for work (or was
    /// never created) ends with it.
    pub(crate) fn aio_owner_done(&mut self, j: JobId) {
        let Some((helpers, started)) = self.jobs[j].engine.aio.as_ref().map(|a| (a.helpers.clone(), a.started)) else {
            return;
        };
        for (k, h) in helpers.into_iter().enumerate() {
            let st = self.jobs[h].task.state;
            if k >= started || (st == JobState::Sleeping && self.aio(h).idle && !self.aio(h).woken) {
                self.aio(h).idle = false;
                let job = &mut self.jobs[h];
                job.task.state = JobState::Done;
                job.task.remaining_ns = 0;
            }
        }
    }
}

/// The configuration of job `i`'s helper thread (`cfg` is the job's): a
/// thread of fio's process with its CPU affinity, doing pread/pwrite.
pub(crate) fn aio_helper_config(cfg: &JobConfig, i: usize) -> JobConfig {
    let mut cfg = cfg.clone();
    cfg.name = format!("aio-{}", 1001 + i);
    cfg.program = Program::AioHelper;
    cfg.ioengine = IoEngine::Psync;
    cfg
}
