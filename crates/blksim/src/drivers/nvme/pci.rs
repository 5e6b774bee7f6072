//! Kernel path: the NVMe PCI driver's I/O path. `nvme_queue_rq` /
//! `nvme_queue_rqs` → SQ entries and one SQ doorbell → the controller
//! (`controller.rs`); `nvme_irq` → `nvme_poll_cq` (every CQE visible,
//! again while more arrive) → `nvme_pci_complete_rq` →
//! `blk_mq_complete_request` → the CQ head doorbell.

use crate::block::Placement;
use crate::system::{Event, Sim};

impl Sim {
    /// The driver rang the SQ doorbell of `hctx` with `reqs`: the device takes them.
    #[inline(always)]
    pub(crate) fn nvme_issue(&mut self, dev: u16, hctx: u16, reqs: &[u32]) {
        let now = self.q.now_ns();
        for &req in reqs {
            let r = &mut self.reqs.reqs[req as usize];
            r.t_dispatch_ns = now;
            let (dir, bytes) = (r.dir, r.dev_bytes as u64);
            let d = &mut self.devs[dev as usize];
            d.account_start(now);
            if let Some(t) = self.trace.as_mut() {
                t.queue_depth(dev, now, d.disk.inflight);
            }
            let nvme = d.nvme_mut();
            let done = nvme.service(now, dir, bytes);
            debug_assert_eq!(self.reqs.reqs[req as usize].hctx, hctx);
            self.q.at(done, Event::CqeSent { dev, req });
        }
    }

    /// CPU cost of draining the first `n` CQEs of a queue on `cpu`,
    /// including the follow-on work the drain will cause (IPIs to
    /// submitters, wake-ups of waiting tasks), foreseen from the state now.
    /// Returns (total cost, the follow-on part of it).
    #[inline(always)]
    pub(crate) fn drain_cost(&mut self, cpu: u32, dev: u16, queue: u16, n: u32) -> (u64, u64) {
        let c = &self.costs;
        let mut seen = std::mem::take(&mut self.scratch);
        seen.clear();
        let (mut cost, mut follow) = (0, 0);
        if self.devs[dev as usize].is_dsa() {
            // Completion record check and callback, which submits the next descriptor.
            self.scratch = seen;
            return (n as u64 * (c.dsa_complete_ns + c.dsa_submit_ns), 0);
        }
        for &req in self.devs[dev as usize].queues[queue as usize].cq.iter().take(n as usize) {
            cost += c.nvme_cqe_ns;
            match self.placement(cpu, req) {
                Placement::Batched | Placement::Inline => {
                    cost += c.blk_complete_batch_ns + self.engine_complete_cost(req);
                    follow += self.foreseen_wake_ns(cpu, req, &mut seen);
                }
                Placement::Remote => {
                    let target = self.reqs.reqs[req as usize].submit_cpu;
                    let key = (u32::MAX, target);
                    cost += c.llist_add_ns;
                    if self.cpus[target as usize].done_list.is_empty() && !seen.contains(&key) {
                        seen.push(key);
                        follow += c.ipi_send_ns;
                    }
                }
                Placement::LocalSoftirq => cost += c.llist_add_ns,
            }
        }
        self.scratch = seen;
        (cost + follow, follow)
    }

    /// The waker's cost if completing `req` here wakes its task (the first
    /// completion that meets what the sleeping task waits for).
    pub(crate) fn foreseen_wake_ns(&self, cpu: u32, req: u32, seen: &mut Vec<(u32, u32)>) -> u64 {
        let r = &self.reqs.reqs[req as usize];
        let job = &self.jobs[r.job as usize];
        if job.state != crate::ioengine::job::JobState::Sleeping || job.tag_blocked || r.polled {
            return 0;
        }
        let i = match seen.iter().position(|&(j, _)| j == r.job) {
            Some(i) => i,
            None => {
                let have = if job.is_uring() { job.tw_pending.len() } else { job.ready.len() } as u32;
                seen.push((r.job, have));
                seen.len() - 1
            }
        };
        seen[i].1 += 1;
        if seen[i].1 == job.wait_for {
            let target = job.cpu;
            self.costs.wakeup_ns
                + if target != cpu && !self.cpus[target as usize].busy() { self.costs.ipi_send_ns } else { 0 }
        } else {
            0
        }
    }

    /// `nvme_irq`'s loop over the first `n` CQEs of a queue, run on `cpu`.
    /// Returns the cost of follow-on work (IPIs, wake-ups) to charge next.
    #[inline(always)]
    pub(crate) fn nvme_drain(&mut self, cpu: u32, dev: u16, queue: u16, n: u32) -> u64 {
        let mut debt = 0;
        for _ in 0..n {
            let req = self.devs[dev as usize].queues[queue as usize].cq.pop_front().expect("CQE");
            if self.devs[dev as usize].is_dsa() {
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
}
