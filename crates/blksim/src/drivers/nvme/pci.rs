//! Kernel path: the NVMe PCI driver's I/O path. `nvme_queue_rq` /
//! `nvme_queue_rqs` → SQ entries and one SQ doorbell → the controller
//! (`controller.rs`); `nvme_irq` → `nvme_poll_cq` (every CQE visible,
//! again while more arrive) → `nvme_pci_complete_rq` →
//! `blk_mq_complete_request` → the CQ head doorbell.

use crate::block::Placement;
use crate::ids::{CpuId, DevId, HctxId, JobId, ReqId};
use crate::ioengine::job::JobState;
use crate::system::{Event, Sim};

impl Sim {
    /// The driver rang the SQ doorbell of `hctx` with `reqs`: the device takes them.
    #[inline(always)]
    pub(crate) fn nvme_issue(&mut self, dev: DevId, hctx: HctxId, reqs: &[ReqId]) {
        let now = self.q.now_ns();
        for &req in reqs {
            let r = &mut self.reqs.reqs[req];
            r.t_dispatch_ns = now;
            let (dir, bytes) = (r.dir, r.dev_bytes as u64);
            let d = &mut self.devs[dev];
            d.account_start(now);
            if let Some(t) = self.trace.as_mut() {
                t.queue_depth(dev.0, now, d.disk.inflight);
            }
            let nvme = d.nvme_mut();
            let done = nvme.service(now, dir, bytes);
            debug_assert_eq!(self.reqs.reqs[req].hctx, hctx);
            self.q.at(done, Event::CqeSent { dev, req });
        }
    }

    /// `nvme_irq` → `nvme_poll_cq` over the first `n` CQEs of `queue` on
    /// `cpu`, in one of two passes over the same code: `RUN = false`
    /// foresees it (nothing changes; the handler's step is charged this
    /// cost before it runs), `RUN = true` does it at the step's end (the
    /// CQEs are consumed and each request is completed where `rq_affinity`
    /// places it). Returns (cost, follow-on part of it: wake-ups and IPIs);
    /// the run's cost is not computed (it was charged), its follow-on is
    /// what the completions really caused.
    #[inline(always)]
    pub(crate) fn nvme_poll_cq<const RUN: bool>(
        &mut self,
        cpu: CpuId,
        dev: DevId,
        queue: HctxId,
        n: u32,
    ) -> (u64, u64) {
        let mut foresight = std::mem::take(&mut self.foresight);
        foresight.clear();
        let (mut cost, mut follow) = (0, 0);
        for i in 0..n as usize {
            let cq = &mut self.devs[dev].queues[queue].cq;
            let req = if RUN { cq.pop_front().expect("CQE") } else { cq[i] };
            let c = &self.costs;
            if !RUN {
                cost += c.nvme_cqe_ns;
            }
            match self.placement(cpu, req) {
                // blk_mq_complete_request_remote is false: complete here,
                // in an io_comp_batch (or one by one with a scheduler).
                Placement::Batched | Placement::Inline => {
                    if RUN {
                        follow += self.end_request(cpu, req);
                    } else {
                        cost += c.blk_complete_batch_ns + self.engine_complete_cost(req);
                        follow += self.foreseen_wake_ns(cpu, req, &mut foresight);
                    }
                }
                // blk_mq_complete_send_ipi: onto the submitter's blk_cpu_done,
                // with an IPI when the list was empty.
                Placement::Remote => {
                    let target = self.reqs.reqs[req].submit_cpu;
                    if RUN {
                        let list = &mut self.cpus[target].done_list;
                        list.push_back(req);
                        if list.len() == 1 {
                            self.ipi_send(target);
                            follow += self.costs.ipi_send_ns;
                        }
                    } else {
                        cost += c.llist_add_ns;
                        if self.cpus[target].done_list.is_empty() && !foresight.ipis.contains(&target) {
                            foresight.ipis.push(target);
                            follow += c.ipi_send_ns;
                        }
                    }
                }
                // blk_mq_raise_softirq: this CPU's blk_cpu_done, BLOCK_SOFTIRQ at irq exit.
                Placement::LocalSoftirq => {
                    if RUN {
                        let c = &mut self.cpus[cpu];
                        c.done_list.push_back(req);
                        c.softirq_pending = true;
                    } else {
                        cost += c.llist_add_ns;
                    }
                }
            }
        }
        self.foresight = foresight;
        (cost + follow, follow)
    }

    /// The waker's cost if completing `req` here wakes its task (the first
    /// completion that meets what the sleeping task waits for), counting
    /// the completions foreseen so far in this pass.
    pub(crate) fn foreseen_wake_ns(&self, cpu: CpuId, req: ReqId, foresight: &mut Foresight) -> u64 {
        let r = &self.reqs.reqs[req];
        let j = r.job();
        let job = &self.jobs[j];
        if job.state != JobState::Sleeping || job.tag_blocked || r.polled {
            return 0;
        }
        let i = match foresight.wakes.iter().position(|&(w, _)| w == j) {
            Some(i) => i,
            None => {
                let have = if job.is_uring() { job.tw_pending.len() } else { job.ready.len() } as u32;
                foresight.wakes.push((j, have));
                foresight.wakes.len() - 1
            }
        };
        foresight.wakes[i].1 += 1;
        if foresight.wakes[i].1 == job.wait_for {
            let target = job.cpu;
            self.costs.wakeup_ns + if target != cpu && !self.cpus[target].busy() { self.costs.ipi_send_ns } else { 0 }
        } else {
            0
        }
    }
}

/// What a foreseen pass has counted so far: completions per sleeping job
/// (starting from what it already has) and the CPUs already sent an IPI.
#[derive(Default)]
pub(crate) struct Foresight {
    pub(crate) wakes: Vec<(JobId, u32)>,
    pub(crate) ipis: Vec<CpuId>,
}

impl Foresight {
    fn clear(&mut self) {
        self.wakes.clear();
        self.ipis.clear();
    }
}
