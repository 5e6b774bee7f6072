//! Request completion: placement by `rq_affinity` (kernel-mechanisms §3),
//! the NVMe CQ drain, BLOCK_SOFTIRQ, ending requests, and tags.

use super::Placement;
use crate::run::Sim;

impl Sim {
    /// `blk_mq_complete_request` on `cpu`: where does `req` end?
    #[inline(always)]
    pub fn placement(&self, cpu: u32, req: u32) -> Placement {
        let r = &self.reqs.reqs[req as usize];
        let dev = &self.devs[r.dev as usize];
        if r.polled {
            return Placement::Batched;
        }
        // hctx with a single ctx, completing on that ctx's CPU: no IPI.
        if dev.map.nr_ctx[r.hctx as usize] == 1 && r.submit_cpu == cpu {
            return if dev.deadline.is_some() { Placement::Inline } else { Placement::Batched };
        }
        let rq_affinity = dev.queue_settings.rq_affinity;
        let need_ipi = rq_affinity >= 1
            && cpu != r.submit_cpu
            && !(rq_affinity == 1 && self.machine.topology.share_cache(cpu, r.submit_cpu));
        if need_ipi {
            Placement::Remote
        } else if dev.nr_hw_queues() == 1 {
            Placement::LocalSoftirq
        } else if dev.deadline.is_some() {
            // RQF_SCHED_TAGS: blk_mq_add_to_batch refuses it.
            Placement::Inline
        } else {
            Placement::Batched
        }
    }

    /// `nvme_irq`'s loop over the first `n` CQEs of a queue, run on `cpu`.
    /// Returns the cost of follow-on work (IPIs, wake-ups) to charge next.
    #[inline(always)]
    pub fn nvme_drain(&mut self, cpu: u32, dev: u16, queue: u16, n: u32) -> u64 {
        let mut debt = 0;
        for _ in 0..n {
            let req = self.devs[dev as usize].queues[queue as usize].cq.pop_front().expect("CQE");
            if self.devs[dev as usize].dsa.is_some() {
                self.dsa_complete(req);
                continue;
            }
            debt += match self.placement(cpu, req) {
                Placement::Batched => self.end_request(cpu, req),
                Placement::Inline => self.end_request(cpu, req),
                Placement::Remote => {
                    let target = self.reqs.reqs[req as usize].submit_cpu;
                    let list = &mut self.cpus[target as usize].done_list;
                    list.push_back(req);
                    if list.len() == 1 {
                        self.ipi_send(target);
                        self.costs.ipi_send_ns
                    } else {
                        0
                    }
                }
                Placement::LocalSoftirq => {
                    let c = &mut self.cpus[cpu as usize];
                    c.done_list.push_back(req);
                    c.softirq_pending = true;
                    0
                }
            };
        }
        debt
    }

    /// BLOCK_SOFTIRQ on `cpu`: end the first `n` requests of its `blk_cpu_done` list.
    pub fn block_softirq(&mut self, cpu: u32, n: u32) -> u64 {
        let mut debt = 0;
        for _ in 0..n {
            let req = self.cpus[cpu as usize].done_list.pop_front().expect("done list");
            debt += self.end_request(cpu, req);
        }
        debt
    }

    /// `blk_mq_end_request`: account the disk, free the tag, hand the result to
    /// the ioengine. Returns the cost of follow-on work (wake-ups, dispatch of
    /// a request that waited for the tag).
    #[inline(always)]
    pub fn end_request(&mut self, cpu: u32, req: u32) -> u64 {
        let now = self.q.now_ns();
        self.reqs.reqs[req as usize].t_done_ns = now;
        let r = self.reqs.reqs[req as usize];
        let dev = &mut self.devs[r.dev as usize];
        dev.account_done(now, &r);
        if let Some(t) = self.trace.as_mut() {
            t.queue_depth(r.dev, now, dev.disk.inflight);
        }
        let mut debt = 0;
        let hctx = &mut dev.queues[r.hctx as usize];
        match hctx.tag_waiters.pop_front() {
            // The freed tag goes straight to the oldest waiter, dispatched from here.
            Some(waiter) => {
                self.reqs.reqs[waiter as usize].waiting_tag = false;
                if let Some(dd) = dev.deadline.as_mut() {
                    // It goes to the scheduler's FIFO (inserted from here, lock not modelled).
                    dd.fifo.push_back(waiter);
                    debt += self.costs.dd_insert_ns;
                } else {
                    debt += self.driver_queue_rq_cost(r.dev, false) + self.driver_commit_cost(r.dev);
                    debt += self.driver_issue(cpu, r.dev, r.hctx, waiter);
                }
                let wj = self.reqs.reqs[waiter as usize].job;
                debt += self.tag_granted(cpu, wj);
            }
            None => hctx.tags_free += 1,
        }
        if let Some(dd) = self.devs[r.dev as usize].deadline.as_mut() {
            dd.driver_tags_free += 1;
        }
        debt += self.sched_restart(cpu, r.dev);
        let mut debt = debt + self.engine_complete(cpu, req);
        // Bios merged into this request end with it.
        let mut next = r.next_merged;
        while next != crate::block::NO_REQ {
            let c = &mut self.reqs.reqs[next as usize];
            (c.t_dispatch_ns, c.t_cqe_ns, c.t_done_ns) = (r.t_dispatch_ns, r.t_cqe_ns, now);
            let following = c.next_merged;
            debt += self.engine_complete(cpu, next);
            next = following;
        }
        debt
    }

    /// Take a tag on `hctx` for `req`, or queue it to wait for one.
    pub fn get_tag(&mut self, dev: u16, hctx: u16, req: u32) -> bool {
        let q = &mut self.devs[dev as usize].queues[hctx as usize];
        if q.tags_free > 0 {
            q.tags_free -= 1;
            true
        } else {
            q.tag_waiters.push_back(req);
            self.reqs.reqs[req as usize].waiting_tag = true;
            false
        }
    }
}
