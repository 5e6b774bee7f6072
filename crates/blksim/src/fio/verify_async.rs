//! fio: `verify_async=N` (`verify.c`'s `verify_async_thread`,
//! `verify_io_u_async`; `io_u.c`'s `__get_io_u`).
//!
//! fio's thread starts N verify threads with the job (`verify_async_init`,
//! before its first I/O). A verifying read it reaps is accounted as any
//! I/O, then handed over instead of checked (`verify_io_u_async`): it
//! leaves the job's depth (`cur_depth--`) but keeps its io_u, goes on the
//! job's `verify_list` and signals `verify_cond` (a futex wake when a
//! thread waits there). A verify thread takes the whole list
//! (`flist_splice_init`), checks each io_u in turn (`verify_io_u`: the
//! same CPU per byte as an inline check, user time on its own CPU) and
//! frees it (`put_io_u`, which signals `free_cond`); with the list empty it
//! waits on `verify_cond`. So the job has `iodepth` io_us in all, in flight
//! or waiting for a check: when the threads fall behind, fio's thread finds
//! none free and waits on `free_cond` (`__get_io_u`'s
//! `pthread_cond_wait`), and the checks bound its rate. Write buffers are
//! still filled and summed by fio's thread.
//!
//! The threads are created by fio's thread and inherit its affinity (its
//! `cpus_allowed`, or its CPU under `cpus_allowed_policy=split`); each is
//! placed where the scheduler puts a new thread. `verify_async_cpus` does
//! not pin them: fio 3.42's thread calls `fio_setaffinity(td->pid, ...)`,
//! and `td->pid` is the job's own thread, so it is the job that moves to
//! those CPUs (here before its first I/O; the real threads race with it).
//!
//! Their CPU time is not the job's (fio's `RUSAGE_THREAD`): it is in the
//! CPUs' (the `blksim` section). At the job's end (`verify_async_exit`)
//! each thread ends at the top of its loop; io_us still on the list are
//! not checked, as in fio. Not modelled: fio's `io_u_lock`, which it takes
//! around each io_u and statistic once threads share them (uncontended:
//! tens of ns). Their state is `verify_list.rs`.

use std::collections::VecDeque;

use crate::error::Error;
use crate::fio::job::{Job, JobState};
use crate::fio::verify_list::{VerifyAsync, VerifyList, VerifyThread};
use crate::hw::cpu::Acct;
use crate::ids::{CpuId, JobId, ReqId};
use crate::sim::Rng;
use crate::stats::CpuStage;
use crate::system::Sim;
use crate::workload::{Direction, JobConfig, Program};

impl Sim {
    fn vlist(&mut self, j: JobId) -> &mut VerifyList {
        match self.jobs[j].vasync.as_deref_mut() {
            Some(VerifyAsync::Owner(o)) => o,
            _ => unreachable!("a verify_async job"),
        }
    }

    fn vthread(&mut self, w: JobId) -> &mut VerifyThread {
        match self.jobs[w].vasync.as_deref_mut() {
            Some(VerifyAsync::Thread(t)) => t,
            _ => unreachable!("a verify thread"),
        }
    }

    /// Job `i`'s `verify_async` threads, placed as new threads of its own
    /// (they inherit its affinity); then `verify_async_cpus` becomes the
    /// affinity of the job's own thread, as fio 3.42 sets it
    /// (`fio_setaffinity(td->pid, ...)`: see `fio/verify_async.rs`).
    pub(crate) fn add_verify_async(&mut self, i: usize, cfg: &JobConfig, load: &mut [u32]) -> Result<(), Error> {
        if cfg.verify_async == 0 {
            return Ok(());
        }
        let cpus = (0..cfg.verify_async).map(|_| self.place_task(i, cfg, load)).collect::<Result<Vec<_>, _>>()?;
        let app = JobId::of(i);
        let thread_cfg = verify_thread_config(cfg, i);
        let mut owner = VerifyList::default();
        for (k, &cpu) in cpus.iter().enumerate() {
            let index = JobId::of(self.jobs.len());
            let rng = Rng::stream(self.run.seed, &format!("verify/{i}/{k}"));
            let mut t = Job::new(index, thread_cfg.clone(), cpu, Vec::new(), rng);
            t.vasync = Some(Box::new(VerifyAsync::Thread(VerifyThread {
                parent: app,
                batch: VecDeque::new(),
                waiting: false,
                woken: false,
            })));
            owner.threads.push(index);
            self.jobs.push(t);
        }
        self.jobs[app].vasync = Some(Box::new(VerifyAsync::Owner(owner)));
        let Some(mask) = &cfg.verify_async_cpus else { return Ok(()) };
        let mut moved = cfg.clone();
        moved.cpus_allowed = Some(mask.clone());
        let cpu = self.jobs[app].task.cpu;
        if !mask.contains(&cpu.0) {
            let to = self.place_task(i, &moved, load).map_err(|e| {
                Error::bad_input(format!("verify_async_cpus: {}", e.message.trim_start_matches("cpus_allowed: ")))
                    .for_job(i)
            })?;
            load[cpu.idx()] -= 1;
            self.jobs[app].task.cpu = to;
        }
        self.jobs[app].cfg.cpus_allowed = moved.cpus_allowed;
        Ok(())
    }

    /// fio's job `j` starts: its verify threads start with it (`verify_async_init`).
    pub(crate) fn verify_async_start(&mut self, j: JobId) {
        let Some(VerifyAsync::Owner(o)) = self.jobs[j].vasync.as_deref() else { return };
        for w in o.threads.clone() {
            self.job_start(w);
        }
    }

    /// `verify_io_u_async` for the reaped `reqs` of job `j` on `cpu`: its
    /// verifying reads go to the list (their io_us stay taken), and a
    /// waiting thread is signalled.
    pub(crate) fn verify_hand_over(&mut self, j: JobId, reqs: &[ReqId]) {
        let mut n = 0;
        for &r in reqs {
            let r = &self.reqs.reqs[r];
            if r.dir == Direction::Read && r.status >= 0 {
                let bytes = r.bytes;
                self.vlist(j).list.push(bytes);
                n += 1;
            }
        }
        if n == 0 {
            return;
        }
        self.jobs[j].verify_held += n;
        let threads = std::mem::take(&mut self.vlist(j).threads);
        // pthread_cond_signal: one waiter is woken (a futex wake), none if all are busy.
        let sleeper = threads.iter().copied().find(|&w| {
            let t = self.vthread(w);
            t.waiting && !t.woken
        });
        self.vlist(j).threads = threads;
        if let Some(w) = sleeper {
            self.vthread(w).woken = true;
            let cpu = self.jobs[j].task.cpu;
            let cost = self.costs.syscall_ns + self.costs.futex_ns + self.wake(cpu, w);
            self.jobs[j].task.debt_ns += cost;
        }
    }

    /// `__get_io_u` found no io_u free (all in flight or waiting for a
    /// check, none to reap): fio's thread waits on `free_cond`.
    pub(crate) fn verify_free_wait(&mut self, j: JobId) {
        self.job_futex_wait(j, JobState::VerifyWait);
    }

    /// The wait's syscall ended on `cpu`: it sleeps unless what it waits for came meanwhile.
    pub(crate) fn verify_wait_entered(&mut self, cpu: CpuId, j: JobId) {
        let ready = match self.jobs[j].vasync.as_deref() {
            Some(VerifyAsync::Thread(t)) => {
                let o = match self.jobs[t.parent].vasync.as_deref() {
                    Some(VerifyAsync::Owner(o)) => o,
                    _ => unreachable!("a verify thread's job"),
                };
                !o.list.is_empty() || o.exit
            }
            _ => self.owner_may_go(j),
        };
        if ready {
            return self.verify_next(j);
        }
        match self.jobs[j].vasync.as_deref_mut().expect("verify_async") {
            VerifyAsync::Owner(o) => (o.waiting, o.woken) = (true, false),
            VerifyAsync::Thread(t) => (t.waiting, t.woken) = (true, false),
        }
        self.task_sleep(cpu, j, false);
    }

    /// fio's thread has an io_u free again.
    fn owner_may_go(&self, j: JobId) -> bool {
        let job = &self.jobs[j];
        job.cur_depth() + job.verify_held < job.engine.depth
    }

    /// A task that waited on a condition variable is back on its CPU.
    pub(crate) fn verify_woken(&mut self, j: JobId) {
        match self.jobs[j].vasync.as_deref_mut().expect("verify_async") {
            VerifyAsync::Owner(o) => o.waiting = false,
            VerifyAsync::Thread(t) => t.waiting = false,
        }
        self.verify_next(j);
        if self.jobs[j].task.state != JobState::Done {
            let cs = self.costs.context_switch_ns;
            self.jobs[j].task.add_head_sys(cs, CpuStage::Wakeup);
        }
    }

    /// fio's job goes on with its loop; a verify thread with its own.
    fn verify_next(&mut self, j: JobId) {
        if self.jobs[j].cfg.program == Program::VerifyThread {
            self.verify_thread_next(j)
        } else {
            self.job_next(j)
        }
    }

    /// A verify thread's loop: the next io_u of its batch checked; with
    /// none, the end if its job ended, else the job's list taken, else a
    /// wait on `verify_cond`.
    pub(crate) fn verify_thread_next(&mut self, w: JobId) {
        let p = self.vthread(w).parent;
        if let Some(&bytes) = self.vthread(w).batch.front() {
            let ns = self.jobs[p].verify.as_deref().map_or(0, |v| v.cpu_ns(false, bytes as u64));
            return self.job_set(w, JobState::VerifyWork, ns, Acct::User, CpuStage::UserLoop, 0);
        }
        if self.vlist(p).exit {
            let t = &mut self.jobs[w].task;
            t.state = JobState::Done;
            t.remaining_ns = 0;
            return;
        }
        if !self.vlist(p).list.is_empty() {
            let list = std::mem::take(&mut self.vlist(p).list);
            self.vthread(w).batch.extend(list);
            return self.verify_thread_next(w);
        }
        self.job_futex_wait(w, JobState::VerifyWait);
    }

    /// A verify thread on `cpu` checked its io_u: `put_io_u` frees it, and
    /// fio's thread is woken if it waits for one.
    pub(crate) fn verify_work_done(&mut self, cpu: CpuId, w: JobId) {
        let p = self.vthread(w).parent;
        self.vthread(w).batch.pop_front();
        self.jobs[p].verify_held -= 1;
        let go = self.owner_may_go(p);
        let o = self.vlist(p);
        if o.waiting && !o.woken && go {
            o.woken = true;
            let cost = self.costs.syscall_ns + self.costs.futex_ns + self.wake(cpu, p);
            self.jobs[w].task.debt_ns += cost;
        }
        self.verify_thread_next(w);
    }

    /// fio's job `j` ended (`verify_async_exit`): its threads end at the top
    /// of their loops; those waiting for work end now.
    pub(crate) fn verify_owner_done(&mut self, j: JobId) {
        let Some(VerifyAsync::Owner(o)) = self.jobs[j].vasync.as_deref_mut() else { return };
        o.exit = true;
        for w in o.threads.clone() {
            let t = self.vthread(w);
            if t.waiting && !t.woken {
                t.waiting = false;
                let task = &mut self.jobs[w].task;
                task.state = JobState::Done;
                task.remaining_ns = 0;
            }
        }
    }
}

/// The configuration of job `i`'s verify threads (`cfg` is the job's): no I/O of their own.
fn verify_thread_config(cfg: &JobConfig, i: usize) -> JobConfig {
    let mut c = JobConfig::new(&format!("fio-verify-{}", 1001 + i));
    c.program = Program::VerifyThread;
    c.phase = cfg.phase;
    c.cpus_allowed = cfg.cpus_allowed.clone();
    c.thread = cfg.thread;
    c
}
