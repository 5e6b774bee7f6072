//! fio: `do_io` (`backend.c`: queue io_us, commit every `iodepth_batch_submit`, reap when the
//! queue is full) as a state machine of the job's task on its CPU: each step a system call or a
//! stretch of user code, sleeping in `io_getevents` / `io_cqring_wait` / the sync syscall until
//! woken; the task's steps are set and charged here for t/io_uring's loop too.

use crate::fio::io_u::NoOffset;
use crate::fio::job::{Chain, JobState, SyncTrim};
use crate::hw::cpu::{Acct, Bill};
use crate::ids::{CpuId, JobId};
use crate::locking::qspinlock::Actor;
use crate::stats::CpuStage;
use crate::system::Sim;
use crate::workload::{IoEngine, Program};

impl Sim {
    /// Decide the job's next step after the previous one ended (fio's do_io loop).
    #[inline(always)]
    pub(crate) fn job_next(&mut self, j: JobId) {
        let now = self.q.now_ns();
        let prep_ns = self.user_costs(j).prep + self.spin_ns(j);
        self.jobs[j].check_done_issuing(self.q.now_ns());
        if self.jobs[j].sync_trim.is_some() {
            return self.sync_trim_next(j);
        }
        if self.jobs[j].shaped {
            let held = if self.jobs[j].offload.is_some() { self.offload_hold(j) } else { self.shaped_hold(j) };
            if held {
                return;
            }
        }
        let job = &mut self.jobs[j];
        let depth = job.cur_depth();
        let queued = job.queued.len() as u32;
        // (io_us handed to verify_async's threads are not free either.)
        let full = depth + job.verify_held >= job.engine.depth || job.engine.refuses && depth > 0;
        if queued > 0 && (queued >= job.batch_submit() || full || job.done_issuing && job.replay_commits()) {
            job.committed(queued);
            return self.job_submit(j);
        }
        if !job.done_issuing && !job.reaps_to_low(depth + job.verify_held) && !full {
            let want =
                (job.batch_submit().saturating_sub(queued)).min(job.engine.depth - depth - job.verify_held).max(1);
            let cost = want as u64 * prep_ns;
            return self.job_set(j, JobState::Prep, cost, Acct::User, CpuStage::UserLoop, want);
        }
        // (Nothing is left queued here, but what a replay queued when its log ran out.)
        if job.inflight > 0 || !job.engine.ready.is_empty() {
            return self.job_reap(j);
        }
        if job.verify_held > 0 && !job.done_issuing {
            // No io_u free and none to reap: they wait for verify_async's checks.
            return self.verify_free_wait(j);
        }
        // Quiesced for a pause of its pacing (a rate's sleep, a think time): it takes it.
        if job.shaped && self.pace_idle(j) {
            return;
        }
        // do_io's end: end_fsync's fsync of each file.
        if self.jobs[j].fsync.is_some() && self.end_fsync_next(j) {
            return self.job_submit(j);
        }
        // fio's do_verify: the logged writes read back; then the job's next loop, if it has one.
        if self.verify_phase_start(j) || self.verify_next_loop(j) || self.jobs[j].next_loop() {
            self.lat_target_restart(j);
            return self.job_next(j);
        }
        self.log_reopened(j, now);
        let job = &mut self.jobs[j];
        (job.task.state, job.finish_ns) = (JobState::Done, now);
        self.replay_ended(j);
        self.job_finished(j);
    }

    /// Prepare `n` io_us: pick direction, device and offset.
    #[inline(always)]
    pub(crate) fn job_prep(&mut self, j: JobId, n: u32) {
        if self.jobs[j].shaped {
            if self.jobs[j].replay.is_some() {
                return self.replay_prep(j, n);
            }
            if self.jobs[j].offload_worker().is_some() {
                return self.offload_take(j, n);
            }
            return self.job_prep_shaped(j, n);
        }
        let now = self.q.now_ns();
        let mut left = n;
        while left > 0 {
            let job = &mut self.jobs[j];
            let stop = job.done_issuing || job.limit_reached() || job.sync_trim.is_some();
            if stop || !job.pass_check() {
                break;
            }
            let mut d = job.next_dir().index();
            let devs = &self.devs;
            let (di, dev, capacity, region) = job.next_file(job.cfg.bs[d], |d| devs[d].capacity_bytes);
            let rel = match job.next_offset(di, &mut d, region, capacity, true) {
                Ok(rel) => rel,
                // The file is done: the next one.
                Err(NoOffset::Retry) => continue,
                Err(NoOffset::Done) => {
                    job.done_issuing = true;
                    break;
                }
            };
            left -= 1;
            let dir = crate::workload::Direction::ALL[d];
            let bytes = job.io_placed(di, d, rel, job.cfg.bs[d]);
            let offset = job.cfg.offset + rel;
            self.prep_request(j, dir, bytes, offset, dev, di, now);
        }
    }

    /// Commit the queued io_us with the engine's submitting syscall, after the user side of the commit.
    pub(crate) fn job_submit(&mut self, j: JobId) {
        let (mut bill, tw) = self.submit_syscall_cost(j, true);
        bill.add(CpuStage::UserLoop, self.user_costs(j).submit_call);
        // posixaio's aio_read/aio_write are user time too.
        let user = bill.get(CpuStage::UserLoop);
        self.take_debt(j, &mut bill);
        let sys = bill.total() - user;
        self.job_set_segs(j, JobState::Submit, [(Acct::User, user), (Acct::Sys, sys), (Acct::Sys, 0)], bill, tw);
    }

    #[inline(always)]
    pub(crate) fn job_reap(&mut self, j: JobId) {
        let (min, max) = self.jobs[j].reap_bounds(self.q.now_ns());
        let sys = self.costs.syscall_ns;
        let job = &mut self.jobs[j];
        job.task.wait_for = min;
        let engine = job.cfg.ioengine.clone();
        match engine {
            // null_getevents returns every event of the last commit, whatever the maximum.
            IoEngine::Null => {
                let k = job.engine.ready.len() as u32;
                self.job_chain(j, Bill::default(), 0, 0, k)
            }
            // pvsync2's RWF_HIPRI is not polled (`__blkdev_direct_IO_simple`
            // sleeps in submit_bio_wait): every sync engine sleeps.
            IoEngine::Sync | IoEngine::Psync | IoEngine::Pvsync | IoEngine::Pvsync2 { .. } => {
                if !job.engine.ready.is_empty() {
                    let head = Bill::of(CpuStage::Block, self.write_sync_ns(j));
                    self.job_chain(j, head, 0, 0, 1)
                } else {
                    let cs = self.costs.context_switch_ns;
                    self.job_set(j, JobState::SleepOut, cs, Acct::Sys, CpuStage::Wakeup, 0)
                }
            }
            IoEngine::Posixaio => self.aio_getevents(j, Bill::default(), 0),
            IoEngine::Libaio => {
                if job.engine.ready.len() as u32 >= min {
                    // io_getevents finds enough events at once.
                    let k = (job.engine.ready.len() as u32).min(max);
                    let mut head = Bill::of(CpuStage::Syscall, sys);
                    head.add(CpuStage::UringComplete, k as u64 * self.costs.aio_getevents_ns);
                    self.job_chain(j, head, 0, 0, k)
                } else {
                    // Not enough events: the syscall goes on to schedule() out.
                    let mut bill = Bill::of(CpuStage::Syscall, sys);
                    bill.add(CpuStage::Wakeup, self.costs.context_switch_ns);
                    self.job_set_bill(j, JobState::ReapEnter, bill, 0)
                }
            }
            IoEngine::IoUring(_) | IoEngine::IoUringCmd(_) => {
                if job.engine.ready.len() as u32 >= min {
                    // Enough CQEs in the ring: reaped in user space, no syscall.
                    let k = (job.engine.ready.len() as u32).min(max);
                    self.job_chain(j, Bill::default(), 0, 0, k)
                } else if job.engine.ring.sq_thread.is_some() {
                    // SQPOLL: fio spins on the CQ ring, no syscall.
                    self.cq_spin(j)
                } else if job.iopoll() {
                    // io_uring_enter(0, min, GETEVENTS) → io_iopoll_check.
                    let cost = sys + self.costs.io_uring_enter_ns;
                    self.job_set(j, JobState::ReapEnter, cost, Acct::Sys, CpuStage::Syscall, 0)
                } else {
                    let tw = job.engine.ring.tw_pending.len() as u32;
                    let mut bill = Bill::of(CpuStage::Syscall, sys + self.costs.io_uring_enter_ns);
                    bill.add(CpuStage::UringComplete, crate::io_uring::ring::tw_run_ns(&self.costs, tw));
                    bill.add(CpuStage::Wakeup, self.costs.context_switch_ns);
                    self.job_set_bill(j, JobState::ReapEnter, bill, tw)
                }
            }
        }
    }

    /// fio's loop up to its next blocking point as one step: a sys `head`
    /// (the reaping syscall, or schedule() after a wake-up) that runs `tw`
    /// task_work items, then fio takes `reap` completions, accounts them and
    /// prepares the io_us it queues next (user), then commits them (sys) if
    /// fio would. The user part starts with `user_ns` (a wake-up's refill).
    /// The io_us are prepared now; everything else happens when the step
    /// ends (`job_chain_done`).
    #[inline(always)]
    pub(crate) fn job_chain(&mut self, j: JobId, head: Bill, user_ns: u64, tw: u32, reap: u32) {
        let now = self.q.now_ns();
        let user = self.user_costs(j);
        let mut bill = head;
        bill.add(CpuStage::UringComplete, crate::io_uring::ring::tw_run_ns(&self.costs, tw));
        self.take_debt(j, &mut bill);
        let head = bill.total();
        let call = if reap > 0 { user.reap_call } else { 0 };
        let (verify, handed) = if self.jobs[j].verify.is_some() { self.verify_reap(j, tw, reap) } else { (0, 0) };
        let mut body = user_ns + call + reap as u64 * user.reap + verify;
        self.jobs[j].ts.reap_ns = now + head + user_ns + call;
        // What fio's do_io does after reaping: queue io_us while there is
        // room and the submit batch is not complete, then commit; a failed
        // I/O among those reaped ends its loop instead (continue_on_error=none).
        if self.jobs[j].failed > 0 && reap > 0 && self.reaps_a_failure(j, tw, reap) {
            self.jobs[j].done_issuing = true;
        }
        self.fsyncs_reaping(j, tw, reap);
        self.jobs[j].check_done_issuing(self.q.now_ns());
        let busy = reap > 0 && self.jobs[j].busy_begin();
        if self.jobs[j].shaped {
            self.pace_check(j, reap);
            self.io_us_put(j, tw, reap);
        }
        let job = &mut self.jobs[j];
        let depth = job.inflight - reap + job.verify_held + handed;
        let queued = job.queued.len() as u32;
        let mut n = 0;
        let room = !job.done_issuing && !job.reaps_to_low(depth + queued);
        if room && depth + queued < job.engine.depth && queued < job.batch_submit() {
            n = (job.batch_submit() - queued).min(job.engine.depth - depth - queued);
        }
        let requeue = self.jobs[j].verify.is_some() && self.verify_reaped_first(j, busy && n > 0, tw, reap);
        if n > 0 {
            if requeue {
                self.job_prep(j, 1);
                self.verify_requeued(j, queued as usize, tw, reap);
            }
            if n > requeue as u32 {
                self.job_prep(j, n - requeue as u32);
            }
            if self.jobs[j].shaped {
                self.jobs[j].replay_reaped_before(reap);
            }
            // A paced job may prepare fewer (one ahead of its rate waits).
            let n = self.jobs[j].queued.len() as u32 - queued;
            body += n as u64 * user.prep + self.spins_ns(j, queued);
            let t = now + head + body;
            // (An offload worker's io_us started when fio's thread got them.)
            if !self.jobs[j].shaped || self.jobs[j].offload.is_none() {
                for &r in &self.jobs[j].queued[queued as usize..] {
                    self.reqs.reqs[r].t_start_ns = t;
                }
                if let Some(SyncTrim::Held { req, .. }) = self.jobs[j].sync_trim {
                    self.reqs.reqs[req].t_start_ns = t;
                }
            }
        }
        if busy {
            self.jobs[j].busy_cancel();
        }
        let job = &self.jobs[j];
        let queued = job.queued.len() as u32;
        let full = depth + queued >= job.engine.depth;
        let submit = queued > 0 && (queued >= job.batch_submit() || full || job.done_issuing && job.replay_commits());
        let tail = if submit {
            self.jobs[j].committed(queued);
            body += user.submit_call;
            let (tail, _) = self.submit_syscall_cost(j, false);
            bill.merge(&tail);
            // posixaio's aio_read/aio_write (user) are in the bill already.
            let glibc = tail.get(CpuStage::UserLoop);
            bill.add(CpuStage::UserLoop, body);
            body += glibc;
            tail.total() - glibc
        } else {
            bill.add(CpuStage::UserLoop, body);
            0
        };
        self.jobs[j].task.chain = Chain { tw, reap, submit };
        self.job_set_segs(j, JobState::Chain, [(Acct::Sys, head), (Acct::User, body), (Acct::Sys, tail)], bill, reap);
    }

    /// A chain step ended: task_work, reap, account, commit, in that order.
    pub(crate) fn job_chain_done(&mut self, cpu: CpuId, j: JobId) {
        let ch = self.jobs[j].task.chain;
        let job = &mut self.jobs[j];
        for _ in 0..ch.tw {
            let r = job.engine.ring.tw_pending.pop_front().unwrap();
            job.engine.ready.push_back(r);
        }
        for _ in 0..ch.reap {
            let r = job.engine.ready.pop_front().unwrap();
            job.reaping.push(r);
        }
        self.job_accounted(j);
        if ch.submit && self.jobs[j].engine.ring.sq_thread.is_some() {
            self.sq_committed(j);
            return self.job_next(j);
        }
        if ch.submit && self.jobs[j].engine.aio.is_some() {
            self.aio_queued(cpu, j);
            return self.job_next(j);
        }
        if ch.submit {
            self.job_submitted(cpu, j, 0);
            return self.job_after_submit(cpu, j);
        }
        self.job_next(j);
    }

    /// After the submitting syscall's block-layer work: the scheduler's
    /// locked sections if the queue has one, a sleep for tags, or on with
    /// fio's loop.
    pub(crate) fn job_after_submit(&mut self, cpu: CpuId, j: JobId) {
        if self.jobs[j].shaped {
            self.replay_committed(j);
        }
        if !self.jobs[j].sched.ops.is_empty() {
            return self.sched_next_op(cpu, Actor::Task(j));
        }
        if self.jobs[j].cfg.program == Program::TIoUring {
            return self.tio_after_submit(cpu, j);
        }
        if self.job_blocks_on_tags(cpu, j) {
            // Sleeps in blk_mq_get_tag; tag_granted wakes it.
        } else if self.jobs[j].cfg.ioengine.is_sync() {
            self.job_reap(j);
        } else if self.jobs[j].iopoll() && !self.jobs[j].in_sync_trim() {
            // fio commits with io_uring_enter(nr, 0, GETEVENTS): on an IOPOLL
            // ring that is one io_do_iopoll pass (force_nonspin).
            self.iopoll_check(j, 0);
        } else {
            self.job_next(j);
        }
    }

    /// The job's task is back on its CPU after sleeping (`woke`) or did not
    /// need to sleep: `head_ns` of schedule(), then the syscall takes what
    /// woke it; after a sleep, fio's user code refills what it lost.
    pub(crate) fn job_woken_chain(&mut self, j: JobId, head_ns: u64, woke: bool) {
        if self.is_tio_uring(j) {
            let wake = if woke { self.user_costs(j).wake } else { 0 };
            let tw = self.jobs[j].engine.ring.tw_pending.len() as u32;
            return self.tio_round(j, head_ns, wake, tw);
        }
        if let Some(SyncTrim::Issued(req)) = self.jobs[j].sync_trim {
            return self.sync_trim_returned(j, req, head_ns, woke);
        }
        if self.jobs[j].engine.aio.is_some() {
            return self.aio_woken(j, head_ns, woke);
        }
        let (_, max) = self.jobs[j].reap_bounds(self.q.now_ns());
        let job = &self.jobs[j];
        let tw = job.engine.ring.tw_pending.len() as u32;
        let have = job.engine.ready.len() as u32 + tw;
        let k = have.min(if job.cfg.ioengine.is_sync() { 1 } else { max }).max(1);
        // io_getevents per event; a sync engine's O_SYNC write returns through generic_write_sync.
        let (stage, ns) = if matches!(job.cfg.ioengine, IoEngine::Libaio) {
            (CpuStage::UringComplete, k as u64 * self.costs.aio_getevents_ns)
        } else if job.cfg.dsync {
            (CpuStage::Block, self.write_sync_ns(j))
        } else {
            (CpuStage::UringComplete, 0)
        };
        let wake = if woke { self.user_costs(j).wake } else { 0 };
        let mut head = Bill::of(CpuStage::Wakeup, head_ns);
        head.add(stage, ns);
        self.job_chain(j, head, wake, tw, k);
    }

    /// The job's current step on `cpu` ended.
    #[inline(always)]
    pub(crate) fn task_step_done(&mut self, cpu: CpuId, j: JobId) {
        let state = self.jobs[j].task.state;
        let items = self.jobs[j].task.items;
        match state {
            JobState::Prep => {
                self.job_prep(j, items);
                self.job_next(j);
            }
            JobState::Submit if self.jobs[j].engine.ring.sq_thread.is_some() && !self.jobs[j].in_sync_trim() => {
                self.sq_committed(j);
                self.job_next(j);
            }
            JobState::Submit if self.jobs[j].engine.aio.is_some() && !self.jobs[j].in_sync_trim() => {
                self.aio_queued(cpu, j);
                self.job_next(j);
            }
            JobState::Submit => {
                self.job_submitted(cpu, j, items);
                self.job_after_submit(cpu, j);
            }
            JobState::LockSpin | JobState::Sched => self.sched_step_done(cpu, Actor::Task(j)),
            JobState::ReapEnter => self.job_reap_entered(cpu, j, items),
            JobState::SleepOut => self.job_slept_out(cpu, j),
            JobState::PollSpin if self.jobs[j].engine.ring.sq_ring.is_some() => self.iopoll_spin_done_sq(j),
            JobState::PollSpin => self.iopoll_spin_done(j),
            JobState::SqIter => self.sq_iter_done(cpu, j),
            JobState::AioWork => self.aio_work_done(cpu, j),
            JobState::WqEnqueue => self.wq_enqueued(cpu, j),
            JobState::WqWait => self.wq_wait_entered(cpu, j),
            JobState::VerifyWork => self.verify_work_done(cpu, j),
            JobState::VerifyWait => self.verify_wait_entered(cpu, j),
            JobState::CqSpin => {
                self.jobs[j].task.spin = false;
                self.job_reap(j);
            }
            JobState::PollPass => self.iopoll_pass_done(cpu, j),
            JobState::Chain => self.job_chain_done(cpu, j),
            JobState::PaceSpin => self.pace_spin_done(j),
            JobState::ReplaySpin | JobState::FlowSpin | JobState::OverlapSpin => {
                self.jobs[j].task.spin = false;
                self.job_next(j);
            }
            JobState::SleepEnter => self.pace_sleep_entered(cpu, j),
            JobState::PollSleepEnter => self.iopoll_sleep_entered(cpu, j),
            JobState::TioRound => self.tio_round_done(cpu, j),
            JobState::NotStarted | JobState::Sleeping | JobState::Nanosleep | JobState::Done => {
                unreachable!("{state:?} has no step")
            }
        }
    }

    /// The reaping syscall's entry ran `items` task_work items: enough
    /// completions end it (a reap chain), else it polls (IOPOLL) or sleeps.
    fn job_reap_entered(&mut self, cpu: CpuId, j: JobId, items: u32) {
        let min = self.jobs[j].task.wait_for;
        let job = &mut self.jobs[j];
        for _ in 0..items {
            let r = job.engine.ring.tw_pending.pop_front().unwrap();
            job.engine.ready.push_back(r);
        }
        if job.iopoll() {
            self.iopoll_check(j, min);
        } else if job.engine.aio.is_some() {
            self.aio_suspended(cpu, j);
        } else if job.engine.ready.len() as u32 >= min {
            let k = self.jobs[j].reap_bounds(self.q.now_ns()).1.min(self.jobs[j].engine.ready.len() as u32);
            let aio = matches!(self.jobs[j].cfg.ioengine, IoEngine::Libaio);
            let getevents = if aio { k as u64 * self.costs.aio_getevents_ns } else { 0 };
            self.job_chain(j, Bill::of(CpuStage::UringComplete, getevents), 0, 0, k);
        } else {
            self.job_sleep(cpu, j);
        }
    }

    /// fio's io_uring_enter on its IOPOLL ring returned: after a commit
    /// (one pass) fio's loop goes on; after getevents it reaps what the CQ
    /// holds, or enters again.
    pub(crate) fn fio_iopoll_returned(&mut self, j: JobId) {
        if self.jobs[j].engine.ring.iopoll_min == 0 {
            return self.job_next(j);
        }
        let k = self.jobs[j].reap_bounds(self.q.now_ns()).1.min(self.jobs[j].engine.ready.len() as u32);
        if k > 0 {
            self.job_chain(j, Bill::default(), 0, 0, k);
        } else {
            self.job_reap(j);
        }
    }

    /// A sync syscall's schedule() out: it sleeps, unless the completion
    /// came in first.
    fn job_slept_out(&mut self, cpu: CpuId, j: JobId) {
        let job = &mut self.jobs[j];
        let min = job.task.wait_for;
        let uring = job.is_uring();
        let have = job.engine.ready.len() as u32 + if uring { job.engine.ring.tw_pending.len() as u32 } else { 0 };
        if have >= min || self.sync_trim_ended(j) {
            // The completion came in before the task slept: no sleep.
            self.job_woken_chain(j, 0, false);
        } else {
            self.job_sleep(cpu, j);
        }
    }

    /// A blocking submitter (io_submit, pread) whose requests found no tag
    /// sleeps in `blk_mq_get_tag` until completions hand it tags; io_uring
    /// does not (its requests wait, as if punted to io-wq).
    pub(crate) fn job_blocks_on_tags(&mut self, cpu: CpuId, j: JobId) -> bool {
        let job = &mut self.jobs[j];
        if job.task.tag_waits == 0 || job.is_uring() {
            return false;
        }
        job.task.tag_blocked = true;
        self.task_sleep(cpu, j, true);
        true
    }

    /// The task sleeps in its syscall until enough completions are in. `wait_for` counts what
    /// wakes it: ready events (libaio, sync), or task_work items on top of the CQEs posted (io_uring).
    pub(crate) fn job_sleep(&mut self, cpu: CpuId, j: JobId) {
        let job = &mut self.jobs[j];
        if job.is_uring() {
            job.task.wait_for = job.task.wait_for.saturating_sub(job.engine.ready.len() as u32).max(1);
        }
        // The wait checks its condition before sleeping: completions that came
        // in during the syscall (task_work, aio events) end it at once.
        let have = if job.is_uring() { job.engine.ring.tw_pending.len() } else { job.engine.ready.len() } as u32;
        if have >= job.task.wait_for {
            return self.job_woken_chain(j, 0, false);
        }
        self.task_sleep(cpu, j, true);
    }
}
