//! Kernel path: a request leaves the block layer for its driver
//! (`blk_mq_dispatch_rq_list` / `blk_mq_request_issue_directly` →
//! `->queue_rq`), here or, with io-cpu-affinity-2008's `queue_affinity`, on
//! the CPU it names (the request on that CPU's list, a
//! CALL_FUNCTION_SINGLE IPI when the list was empty). Submission
//! (`submit.rs`), the scheduler's dispatch (`blk_mq_sched.rs`) and a
//! completion that frees a tag (`complete.rs`) all issue through here; it
//! calls only down, into the driver's ops.

use crate::block::request::Owner;
use crate::hw::cpu::Bill;
use crate::ids::{CpuId, DevId, HctxId, ReqId};
use crate::system::Sim;

impl Sim {
    /// The CPU `queue_affinity` (io-cpu-affinity-2008) makes issue `dev`'s
    /// requests, when it is not `cpu`.
    #[inline(always)]
    pub(crate) fn issue_elsewhere(&self, dev: DevId, cpu: CpuId) -> Option<CpuId> {
        self.devs[dev].queue_settings.queue_affinity.map(CpuId).filter(|&q| q != cpu)
    }

    /// Hand `req` (holding a tag of `hctx`) to the driver on `cpu`, or (with
    /// `queue_affinity` naming another CPU) hand it over to that CPU: onto
    /// its list, with a CALL_FUNCTION_SINGLE IPI if the list was empty, whose
    /// function runs the queue there (`queue_rq` in the IPI's handler).
    /// Returns the cost of work done inline (null_blk irqmode=0 completions,
    /// a SCSI command's lines reaching the issuing CPU, the hand-over).
    pub(crate) fn driver_issue(&mut self, cpu: CpuId, dev: DevId, hctx: HctxId, req: ReqId) -> u64 {
        if let Some(target) = self.issue_elsewhere(dev, cpu) {
            let list = &mut self.cpus[target].issue_list;
            list.push_back(req);
            if list.len() == 1 {
                self.ipi_send(target);
                return self.costs.llist_add_ns + self.costs.ipi_send_ns;
            }
            return self.costs.llist_add_ns;
        }
        self.queue_rq(cpu, dev, hctx, req)
    }

    /// The CPU cost of issuing a request handed over to this CPU: its `queue_rq` and a doorbell.
    pub(crate) fn handed_over_issue_cost(&self, req: ReqId) -> u64 {
        self.driver_queue_rq_cost(req) + self.driver_commit_cost(self.reqs.reqs[req].dev())
    }

    /// The driver's cost to issue `req` alone (`->queue_rq`), its DMA
    /// mapping included (premapped fixed buffers too, wherever the request
    /// is dispatched from: a tag wait, the scheduler).
    pub(crate) fn driver_queue_rq_cost(&self, req: ReqId) -> u64 {
        let rq = &self.reqs.reqs[req];
        let dma = match rq.owner {
            Owner::Job(j) => self.job_dma_cost(j),
            Owner::Dsa(_) => self.dma_cost(),
        };
        self.driver_queue_rq_bill(rq.dev(), dma, &mut Bill::default())
    }
}
