//! Kernel path: blk-mq-sched with mq-deadline, as its submitters run it:
//! `blk_mq_sched_insert_requests` → `dd_insert_requests`;
//! `blk_mq_run_hw_queue` → `__blk_mq_sched_dispatch_requests` →
//! `dd_dispatch_request` → `queue_rq`; SCHED_RESTART from a completion. After the
//! syscall's bio work, a submitter takes `dd->lock` for each bio's merge
//! lookup, once to insert its requests, and once per dispatched request;
//! the lock is a queued spinlock, so contention and its collapse come from
//! the load. The 2024 series (`--patch mq-deadline-2024`) serialises
//! dispatch (a dispatcher that finds another one running leaves), inserts
//! onto a separate list under its own lock (the dispatcher moves them in),
//! and skips merge lookups when the lock is held.
//!
//! Simplification: when a completion frees a driver tag while requests wait
//! (SCHED_RESTART), the completing context dispatches them at once if
//! `dd->lock` is free (and no serialised dispatch runs), instead of a kblockd
//! worker spinning for the lock.

use crate::block::mq_deadline::SchedOp;
use crate::hw::cpu::{Acct, Running};
use crate::ids::{CpuId, DevId, JobId};
use crate::ioengine::fio_loop::SPIN_NS;
use crate::ioengine::job::JobState;
use crate::system::Sim;

impl Sim {
    pub(crate) fn deadline_dev(&self, j: JobId) -> DevId {
        self.jobs[j].devs[0]
    }

    /// Cost of handing a lock from `from` to `to` (the lock's line moves to
    /// the new owner, and its MCS node first).
    pub(crate) fn lock_handoff_ns(&self, from: CpuId, to: CpuId) -> u64 {
        let t = &self.machine.topology;
        let c = &self.costs;
        let one = if t.cpus[from].core == t.cpus[to].core {
            c.cacheline_transfer_ns / 4
        } else if t.share_cache(from.0, to.0) {
            c.cacheline_transfer_ns
        } else {
            c.cacheline_transfer_llc_ns
        };
        2 * one
    }

    /// Start the job's next scheduler step, or go on with fio's loop.
    pub(crate) fn sched_next_op(&mut self, cpu: CpuId, j: JobId) {
        let dev = self.deadline_dev(j);
        let patched = self.patch_mq_deadline_2024;
        let Some(op) = self.jobs[j].dd.ops.front().copied() else {
            return self.job_after_submit(cpu, j);
        };
        let now = self.q.now_ns();
        let dd = self.devs[dev].elevator.as_mut().expect("mq-deadline");
        let insert_lock = patched && op == SchedOp::Insert;
        match op {
            // The 2024 series: spin_trylock, and no merge if it fails.
            SchedOp::Merge if patched && dd.lock.owner.is_some() => {
                self.jobs[j].dd.ops.pop_front();
                return self.sched_next_op(cpu, j);
            }
            // The 2024 series: another CPU is dispatching; it will pick ours up.
            SchedOp::Dispatch if patched && dd.dispatching && !self.jobs[j].dd.dispatching => {
                self.jobs[j].dd.ops.pop_front();
                return self.sched_next_op(cpu, j);
            }
            SchedOp::Dispatch if patched => {
                dd.dispatching = true;
                self.jobs[j].dd.dispatching = true;
            }
            _ => {}
        }
        self.jobs[j].dd.on_insert_lock = insert_lock;
        let lock = if insert_lock { &mut dd.insert_lock } else { &mut dd.lock };
        if lock.acquire(j, now) {
            self.sched_hold(j);
        } else {
            self.job_set(j, JobState::LockSpin, SPIN_NS, Acct::Sys, 0);
        }
    }

    /// The job owns the lock: its locked section for the current op.
    pub(crate) fn sched_hold(&mut self, j: JobId) {
        let dev = self.deadline_dev(j);
        let c = &self.costs;
        let job = &self.jobs[j];
        let dd = self.devs[dev].elevator.as_ref().unwrap();
        let cost = match job.dd.ops.front().copied().unwrap() {
            SchedOp::Merge => c.dd_merge_ns,
            SchedOp::Insert if job.dd.on_insert_lock => job.dd.pending.len() as u64 * c.dd_insert_list_ns,
            SchedOp::Insert => job.dd.pending.len() as u64 * c.dd_insert_ns,
            // The dispatcher first moves the insertion list in (2024 series).
            SchedOp::Dispatch => c.dd_dispatch_ns + dd.insert_list.len() as u64 * c.dd_insert_ns,
        };
        self.job_set(j, JobState::LockHold, cost, Acct::Sys, 0);
    }

    /// The lock was handed to a spinning job (or it found it free).
    pub(crate) fn sched_lock_granted(&mut self, _cpu: CpuId, j: JobId) {
        self.sched_hold(j);
    }

    /// The locked section ended: its effect, then the lock goes to the next waiter.
    pub(crate) fn sched_hold_done(&mut self, cpu: CpuId, j: JobId) {
        let now = self.q.now_ns();
        let dev = self.deadline_dev(j);
        let op = self.jobs[j].dd.ops.pop_front().unwrap();
        let on_insert_lock = self.jobs[j].dd.on_insert_lock;
        let pending = std::mem::take(&mut self.jobs[j].dd.pending);
        let dd = self.devs[dev].elevator.as_mut().unwrap();
        let mut issue = None;
        match op {
            SchedOp::Merge => {}
            SchedOp::Insert if on_insert_lock => dd.insert_list.extend(pending.iter().copied()),
            SchedOp::Insert => dd.fifo.extend(pending.iter().copied()),
            SchedOp::Dispatch => {
                while let Some(r) = dd.insert_list.pop_front() {
                    dd.fifo.push_back(r);
                }
                if dd.driver_tags_free > 0 {
                    if let Some(r) = dd.fifo.pop_front() {
                        dd.driver_tags_free -= 1;
                        issue = Some(r);
                    }
                }
            }
        }
        if op != SchedOp::Insert {
            self.jobs[j].dd.pending = pending;
        }
        // spin_unlock: hand the lock to the oldest waiter.
        let lock = if on_insert_lock { &mut dd.insert_lock } else { &mut dd.lock };
        let next = lock.release(now, |_| now);
        if let Some(n) = next {
            let ns = self.lock_handoff_ns(self.jobs[j].cpu, self.jobs[n].cpu);
            let l = if on_insert_lock {
                &mut self.devs[dev].elevator.as_mut().unwrap().insert_lock
            } else {
                &mut self.devs[dev].elevator.as_mut().unwrap().lock
            };
            // The new owner holds it from when the hand-off completes.
            l.held_since_ns = now + ns;
            l.stats.wait_ns += ns;
            self.lock_spin_ends(n, ns);
        }
        if op == SchedOp::Dispatch {
            if issue.is_some() {
                // queue_rq outside the lock, then another dispatch round.
                self.jobs[j].dd.issue = issue;
                let cost = self.driver_queue_rq_cost(dev, false);
                return self.job_set(j, JobState::SchedIssue, cost, Acct::Sys, 0);
            }
            // Nothing (or no driver tag) left: the dispatch is over.
            if self.jobs[j].dd.dispatching {
                self.jobs[j].dd.dispatching = false;
                self.devs[dev].elevator.as_mut().unwrap().dispatching = false;
            }
        }
        self.sched_next_op(cpu, j);
    }

    /// The driver took the dispatched request: issue it, then dispatch again.
    pub(crate) fn sched_issued(&mut self, cpu: CpuId, j: JobId) {
        let req = self.jobs[j].dd.issue.take().expect("a dispatched request");
        let (dev, hctx) = (self.reqs.reqs[req].dev(), self.reqs.reqs[req].hctx);
        let debt = self.driver_issue(cpu, dev, hctx, req);
        self.jobs[j].debt_ns += debt;
        self.jobs[j].dd.ops.push_front(SchedOp::Dispatch);
        self.sched_next_op(cpu, j);
    }

    /// SCHED_RESTART: a completion freed a driver tag while requests wait in
    /// the scheduler, so the queue is run again from the completing context.
    /// Modelled as a try-lock dispatch of what the free driver tags allow,
    /// charged to the completing context (the kblockd hand-off is not
    /// modelled). Returns its cost.
    #[inline(always)]
    pub(crate) fn sched_restart(&mut self, cpu: CpuId, dev: DevId) -> u64 {
        if self.devs[dev].elevator.is_none() {
            return 0;
        }
        self.sched_restart_deadline(cpu, dev)
    }

    pub(crate) fn sched_restart_deadline(&mut self, cpu: CpuId, dev: DevId) -> u64 {
        let patched = self.patch_mq_deadline_2024;
        let now = self.q.now_ns();
        let Some(dd) = self.devs[dev].elevator.as_mut() else { return 0 };
        if (dd.fifo.is_empty() && dd.insert_list.is_empty())
            || dd.driver_tags_free == 0
            || dd.lock.owner.is_some()
            || (patched && dd.dispatching)
        {
            return 0;
        }
        dd.lock.stats.acquisitions += 1;
        while let Some(r) = dd.insert_list.pop_front() {
            dd.fifo.push_back(r);
        }
        let mut issue = Vec::new();
        while dd.driver_tags_free > 0 {
            let Some(r) = dd.fifo.pop_front() else { break };
            dd.driver_tags_free -= 1;
            issue.push(r);
        }
        let _ = now;
        let mut cost = 0;
        for r in issue {
            let hctx = self.reqs.reqs[r].hctx;
            cost += self.costs.dd_dispatch_ns + self.driver_queue_rq_cost(dev, false);
            cost += self.driver_issue(cpu, dev, hctx, r);
        }
        cost
    }

    /// A job spinning for a lock gets it `after_ns` from now.
    pub(crate) fn lock_spin_ends(&mut self, j: JobId, after_ns: u64) {
        debug_assert_eq!(self.jobs[j].state, JobState::LockSpin);
        let cpu = self.jobs[j].cpu;
        let running = self.cpus[cpu].running == Running::Task(j);
        if running {
            self.cpu_charge(cpu);
        }
        self.job_set_segs(j, JobState::LockSpin, [(Acct::Sys, after_ns), (Acct::User, 0), (Acct::Sys, 0)], 0);
        if running {
            self.cpu_dispatch(cpu);
        }
    }
}
