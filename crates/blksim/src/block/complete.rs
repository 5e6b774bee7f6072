//! Kernel path: completion placement and `end_request`.
//! `blk_mq_complete_request` → local (batched in an `io_comp_batch`, or
//! inline), or by `rq_affinity` onto the submitting CPU's `blk_cpu_done`
//! list + IPI → BLOCK_SOFTIRQ (`blk_done_softirq`) there →
//! `blk_mq_end_request` → disk accounting, the tag freed (or handed to a
//! waiter), SCHED_RESTART, the ioengine's completion.

use super::Placement;
use crate::fio::job::JobState;
use crate::ids::{CpuId, DevId, HctxId, JobId, ReqId};
use crate::system::Sim;

impl Sim {
    /// `blk_mq_complete_request` on `cpu`: where does `req` end?
    #[inline(always)]
    pub(crate) fn placement(&self, cpu: CpuId, req: ReqId) -> Placement {
        let r = &self.reqs.reqs[req];
        let dev = &self.devs[r.dev()];
        if r.polled {
            return Placement::Batched;
        }
        // hctx with a single ctx, completing on that ctx's CPU: no IPI.
        let (map, h) = dev.map_of(r.hctx);
        if map.nr_ctx[h] == 1 && r.submit_cpu == cpu {
            return if dev.elevator.is_some() { Placement::Inline } else { Placement::Batched };
        }
        let rq_affinity = dev.queue_settings.rq_affinity;
        // blk_mq_complete_need_ipi: never to an offline CPU.
        let need_ipi = self.cpus.mask.online[r.submit_cpu]
            && if self.blk.io_cpu_affinity_2008 {
                // The 2008 branch: any value but 0 completes on the submitter's
                // group (blk_cpu_to_group: its SMT siblings without SCHED_MC).
                rq_affinity >= 1 && self.smt_group(cpu) != self.smt_group(r.submit_cpu)
            } else {
                rq_affinity >= 1
                    && cpu != r.submit_cpu
                    && !(rq_affinity == 1 && self.machine.topology.share_cache(cpu.0, r.submit_cpu.0))
            };
        if need_ipi {
            Placement::Remote
        } else if dev.nr_hw_queues() == 1 {
            Placement::LocalSoftirq
        } else if dev.elevator.is_some() {
            // RQF_SCHED_TAGS: blk_mq_add_to_batch refuses it.
            Placement::Inline
        } else {
            Placement::Batched
        }
    }

    /// `blk_cpu_to_group` without SCHED_MC: the first CPU of `cpu`'s SMT siblings.
    fn smt_group(&self, cpu: CpuId) -> u32 {
        let sibling = self.machine.topology.cpus[cpu.idx()].sibling;
        sibling.map_or(cpu.0, |s| s.min(cpu.0))
    }

    /// BLOCK_SOFTIRQ on `cpu`: end the first `n` requests of its `blk_cpu_done` list.
    pub(crate) fn block_softirq(&mut self, cpu: CpuId, n: u32) -> u64 {
        let mut debt = 0;
        for _ in 0..n {
            let req = self.cpus[cpu].done_list.pop_front().expect("done list");
            debt += self.end_request(cpu, req);
            self.driver_softirq_ended(cpu, req);
        }
        debt
    }

    /// `blk_mq_end_request`: account the disk, free the tag, hand the result to
    /// the ioengine. Returns the cost of follow-on work (wake-ups, dispatch of
    /// a request that waited for the tag).
    #[inline(always)]
    pub(crate) fn end_request(&mut self, cpu: CpuId, req: ReqId) -> u64 {
        let now = self.q.now_ns();
        self.reqs.reqs[req].t_done_ns = now;
        let r = self.reqs.reqs[req];
        let passthru = self.devs[r.dev()].passthru_users && self.is_passthru(req);
        let dev = &mut self.devs[r.dev()];
        dev.disk.requests += 1;
        if !passthru {
            dev.account_done(now, &r);
        }
        if let Some(t) = self.trace.as_mut() {
            t.queue_depth(r.dev().0, now, dev.disk.inflight);
        }
        let mut debt = self.put_tag(cpu, r.dev(), r.hctx);
        // The driver tag is freed; SCHED_RESTART runs the queue; the scheduler's
        // completed_request and finish_request.
        debt += self.sched_request_done(cpu, r.dev(), req);
        let mut debt = debt + self.engine_complete(cpu, req);
        // Bios merged into this request end with it.
        let mut next = r.next_merged;
        while let Some(m) = next {
            let c = &mut self.reqs.reqs[m];
            (c.t_dispatch_ns, c.t_cqe_ns, c.t_done_ns) = (r.t_dispatch_ns, r.t_cqe_ns, now);
            let following = c.next_merged;
            debt += self.engine_complete(cpu, m);
            next = following;
        }
        debt
    }

    /// A tag of `hctx` on `dev` is freed on `cpu` (the request that held it
    /// ended, or merged into another in the scheduler): it goes straight to
    /// the oldest waiter, issued (or inserted into the scheduler) from here.
    /// Returns the cost of that follow-on work.
    #[inline(always)]
    pub(crate) fn put_tag(&mut self, cpu: CpuId, dev: DevId, hctx: HctxId) -> u64 {
        let q = &mut self.devs[dev].queues[hctx];
        q.busy -= 1;
        if q.tag_waiters.is_empty() {
            q.tags_free += 1;
            return 0;
        }
        self.tag_to_waiters(cpu, dev, hctx)
    }

    /// A freed tag of `hctx` goes to the oldest waiter, dispatched (or
    /// inserted into the scheduler) from here; a waiter that merges as it
    /// is inserted frees it again, for the next one.
    #[inline(never)]
    fn tag_to_waiters(&mut self, cpu: CpuId, dev: DevId, hctx: HctxId) -> u64 {
        let mut debt = 0;
        while let Some(waiter) = self.devs[dev].queues[hctx].tag_waiters.pop_front() {
            self.reqs.reqs[waiter].waiting_tag = false;
            let mut merged = false;
            if self.devs[dev].elevator.is_some() {
                // It goes into the scheduler (inserted from here, its lock not
                // modelled) and kblockd runs the queue.
                let (cost, m) = self.sched_insert_waiter(cpu, dev, waiter);
                debt += cost;
                merged = m;
            } else {
                debt += self.driver_queue_rq_cost(waiter) + self.driver_commit_cost(dev);
                debt += self.driver_issue(cpu, dev, hctx, waiter);
            }
            let wj = self.reqs.reqs[waiter].job();
            debt += self.tag_granted(cpu, wj);
            if self.jobs[wj].on_iopoll_list(&[waiter]) {
                // Issued from io-wq: it joins its ring's iopoll list.
                let now = self.q.now_ns();
                self.jobs[wj].engine.ring.iopoll_req_issued(waiter, &mut self.reqs.reqs[waiter], now);
                let poller = self.ring_poller(wj);
                self.iopoll_poke(poller);
            }
            if !merged {
                return debt;
            }
            // It merged as it was inserted: its tag is free again.
            self.devs[dev].queues[hctx].busy -= 1;
        }
        self.devs[dev].queues[hctx].tags_free += 1;
        debt
    }

    /// A request of `j` got the tag it waited for; the last one wakes a
    /// submitter sleeping for them. Returns the waker's cost.
    pub(crate) fn tag_granted(&mut self, cpu: CpuId, j: JobId) -> u64 {
        let job = &mut self.jobs[j];
        job.task.tag_waits -= 1;
        if job.task.tag_waits == 0 && job.task.tag_blocked && job.task.state == JobState::Sleeping {
            self.wake(cpu, j)
        } else {
            0
        }
    }
}
