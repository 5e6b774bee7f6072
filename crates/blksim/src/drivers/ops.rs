//! Kernel path: the drivers' ops (`blk_mq_ops`, the interrupt handlers,
//! the completion side) as blk-mq and the interrupt code call them:
//! `->queue_rq`, `->commit_rqs`, the device IRQ handler (`nvme_irq`,
//! the adapter's, idxd's), the device finishing a command, the CQ head
//! doorbell, the softirq completion (`scsi_softirq_done`). Each delegates
//! to its driver's file; generic code calls these and never asks which
//! kind of device it has.

use super::{Drain, Driver};
use crate::hw::cpu::Bill;
use crate::ids::{CpuId, DevId, HctxId, ReqId};
use crate::stats::CpuStage;
use crate::system::Sim;
use crate::workload::Direction;

impl Sim {
    /// The driver's cost to start a batch on `dev` (`->commit_rqs`).
    pub(crate) fn driver_commit_cost(&self, dev: DevId) -> u64 {
        self.devs[dev].driver.commit_cost(&self.costs)
    }

    /// `->queue_rq` on `dev`, billed, with the DMA mapping's `dma_ns`.
    pub(crate) fn driver_queue_rq_bill(&self, dev: DevId, dma_ns: u64, bill: &mut Bill) -> u64 {
        self.devs[dev].driver.queue_rq_bill(&self.costs, dma_ns, bill)
    }

    /// `->queue_rq` of `req` (holding a tag of `hctx`) on `cpu`, the CPU
    /// that runs the queue. Returns the cost of work done inline (null_blk
    /// irqmode=0 completions, a SCSI command's lines reaching the issuing CPU).
    pub(crate) fn queue_rq(&mut self, cpu: CpuId, dev: DevId, hctx: HctxId, req: ReqId) -> u64 {
        match self.devs[dev].driver {
            Driver::Nvme(_) => {
                self.nvme_issue(dev, hctx, &[req]);
                0
            }
            Driver::ScsiDisk(_) => self.scsi_issue(cpu, dev, req),
            Driver::NullBlk(_) => self.null_blk_issue(cpu, dev, req),
            Driver::Dsa(_) | Driver::ScsiHost(_) => {
                unreachable!("{} is not a block device: blk-mq issues nothing to it", self.devs[dev].name)
            }
        }
    }

    /// The device IRQ handler of `queue` over the `n` completions visible:
    /// foreseen (`RUN = false`) or run.
    #[inline(always)]
    pub(crate) fn driver_irq_handler<const RUN: bool>(
        &mut self,
        cpu: CpuId,
        dev: DevId,
        queue: HctxId,
        n: u32,
    ) -> Drain {
        match self.devs[dev].driver {
            Driver::Nvme(_) => self.nvme_poll_cq::<RUN>(cpu, dev, queue, n),
            Driver::Dsa(_) => self.idxd_wq_irq::<RUN>(dev, queue, n),
            Driver::ScsiHost(_) => self.scsi_host_irq::<RUN>(cpu, dev, queue, n),
            Driver::NullBlk(_) | Driver::ScsiDisk(_) => {
                unreachable!("{} has no interrupt: its completions come another way", self.devs[dev].name)
            }
        }
    }

    /// `->poll` of queue `hctx` (`nvme_poll`, `null_poll`) over its first
    /// `n` completions, found at `at_ns`: the driver's work per completion,
    /// strict unmaps' IOTLB waits, the CQ head doorbell; billed.
    pub(crate) fn driver_poll_bill(&mut self, dev: DevId, hctx: HctxId, n: u32, at_ns: u64, bill: &mut Bill) {
        let c = &self.costs;
        let (cqe_ns, doorbell_ns) = (c.nvme_cqe_ns, c.cq_doorbell_ns);
        match self.devs[dev].driver {
            Driver::Nvme(_) => {
                // Strict unmaps wait for their IOTLB invalidations, after the walk.
                bill.add(CpuStage::DmaMap, self.iotlb_sync(dev, hctx, n, at_ns, cqe_ns));
                bill.add(CpuStage::DriverComplete, n as u64 * cqe_ns);
                bill.add(CpuStage::Doorbell, doorbell_ns);
            }
            // null_poll ends the requests on its poll_list: no hardware, no
            // doorbell; its per-request work is taken at nvme_poll's per-CQE
            // cost (it has no measurement of its own).
            Driver::NullBlk(_) => {
                bill.add(CpuStage::DriverComplete, n as u64 * cqe_ns);
            }
            Driver::Dsa(_) | Driver::ScsiHost(_) | Driver::ScsiDisk(_) => {
                unreachable!("{} has no poll queues", self.devs[dev].name)
            }
        }
    }

    /// The device finished `req`: its completion (with a read's data) goes
    /// upstream towards the host.
    pub(crate) fn device_completed(&mut self, dev: DevId, req: ReqId) {
        match self.devs[dev].driver {
            Driver::Nvme(_) => {
                let now = self.q.now_ns();
                let r = &self.reqs.reqs[req];
                let hctx = r.hctx;
                if r.dir == Direction::Read {
                    // The read's data crosses the link (in media-completion order) before the CQE.
                    let bytes = r.dev_bytes as u64;
                    let nvme = self.devs[dev].nvme_mut();
                    let upstream = nvme.params.pcie_switch.map(|s| &mut self.hw.pcie_switches[s]);
                    let at = nvme.read_link_done(now, bytes, upstream);
                    if at > now {
                        return self.q.at(at, crate::system::Event::CqeAtPort { dev, hctx, req });
                    }
                }
                self.cqe_at_port(dev, hctx, req);
            }
            Driver::ScsiDisk(_) => self.scsi_status_sent(dev, req),
            Driver::Dsa(_) => {
                let hctx = self.reqs.reqs[req].hctx;
                self.cqe_at_port(dev, hctx, req);
            }
            Driver::NullBlk(_) | Driver::ScsiHost(_) => {
                unreachable!("{} sends no completion upstream", self.devs[dev].name)
            }
        }
    }

    /// The driver's part of ending `req` in BLOCK_SOFTIRQ on `cpu` (SCSI's
    /// `scsi_io_completion` and the lines it pulls).
    #[inline(always)]
    pub(crate) fn driver_softirq_cost(&self, cpu: CpuId, req: ReqId) -> u64 {
        match self.devs[self.reqs.reqs[req].dev()].driver {
            Driver::ScsiDisk(_) => self.scsi_complete_cost(cpu, req),
            Driver::Nvme(_) | Driver::NullBlk(_) | Driver::Dsa(_) | Driver::ScsiHost(_) => 0,
        }
    }

    /// BLOCK_SOFTIRQ on `cpu` ended `req`: what the driver's completion leaves behind.
    #[inline(always)]
    pub(crate) fn driver_softirq_ended(&mut self, cpu: CpuId, req: ReqId) {
        match self.devs[self.reqs.reqs[req].dev()].driver {
            Driver::ScsiDisk(_) => self.scsi_ended(cpu, req),
            Driver::Nvme(_) | Driver::NullBlk(_) | Driver::Dsa(_) | Driver::ScsiHost(_) => {}
        }
    }

    /// The interrupt handler now draining `queue` of `dev` writes its CQ
    /// head doorbell (`nvme_ring_cq_doorbell`) at `at_ns`, after its drain
    /// and before its batch completion.
    pub(crate) fn driver_doorbell_due(&mut self, dev: DevId, queue: HctxId, at_ns: u64) {
        self.devs[dev].driver.doorbell_due(queue, at_ns);
    }

    /// The interrupt aggregation time of `hctx`'s vector ran out.
    pub(crate) fn driver_aggregation_timer(&mut self, dev: DevId, hctx: HctxId, gen: u32) {
        let now = self.q.now_ns();
        let signal = self.devs[dev].driver.aggregation_timer(hctx, gen, now);
        self.device_signal(dev, hctx, signal);
    }
}
