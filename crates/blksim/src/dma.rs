//! Kernel path: the DMA API for a request's buffers. `dma_map_*` at
//! `->queue_rq` and `dma_unmap_*` at completion, through the IOMMU
//! (`iommu_dma_map_*`, lazy or, with `iommu.strict=1`, each unmap waiting
//! for its IOTLB invalidation on the unit's queue) or dma-direct
//! (`iommu=pt`, no IOMMU); with `--patch dma-premap` a fixed buffer is
//! mapped once, at registration, and only looked up per I/O.

use crate::block::Owner;
use crate::ids::{DevId, HctxId, JobId};
use crate::system::Sim;
use crate::workload::IoEngine;

impl Sim {
    /// DMA map + unmap per request: through the IOMMU, or dma-direct
    /// (`iommu=pt`, no IOMMU).
    #[inline(always)]
    pub(crate) fn dma_cost(&self) -> u64 {
        if self.dma.translated {
            self.costs.dma_map_ns
        } else {
            self.costs.dma_direct_ns
        }
    }

    /// The completion side's DMA work beyond `dma_cost` (which charges the
    /// map and the unmap at submission): with `iommu.strict=1`, the unmap
    /// of each of the first `n` CQEs' requests of queue `hctx` of NVMe
    /// device `dev` waits for its IOTLB invalidation on the device's IOMMU
    /// unit (`InvalidationQueue`), one after the other from `at_ns` with
    /// `between_ns` of other work between them; a fixed buffer premapped
    /// (`--patch dma-premap`) is not unmapped. Returns the CPU time spent in
    /// the unmaps (spinning for the lock and the hardware); 0 otherwise.
    pub(crate) fn iotlb_sync(&mut self, dev: DevId, hctx: HctxId, n: u32, at_ns: u64, between_ns: u64) -> u64 {
        if !self.dma.strict || !self.devs[dev].driver.unmap_syncs_iotlb() {
            return 0;
        }
        let unit = self.hw.root_ports[self.devs[dev].root_port].unit;
        let (mut t, mut spent) = (at_ns, 0);
        for i in 0..n as usize {
            let r = self.devs[dev].queues[hctx].cq[i];
            if matches!(self.reqs.reqs[r].owner, Owner::Job(j) if self.job_premapped(j)) {
                continue;
            }
            let done = self.hw.iommus[unit].qi.sync(t + between_ns, self.costs.iotlb_sync_ns);
            spent += done - (t + between_ns);
            t = done;
        }
        spent
    }

    /// `--patch dma-premap` if it changed this run: a job on a device with
    /// fixed buffers premapped, and DMA through the IOMMU's translation.
    pub(crate) fn dma_patch(&self) -> Option<&'static str> {
        let premapped = self.jobs.ids().any(|j| self.job_premapped(j) && !self.jobs[j].devs.is_empty());
        (self.dma.translated && premapped).then_some("dma-premap")
    }

    /// Are job `j`'s buffers mapped once at registration (`--patch
    /// dma-premap` and fixed buffers)?
    #[inline(always)]
    fn job_premapped(&self, j: JobId) -> bool {
        self.dma.premap
            && matches!(&self.jobs[j].cfg.ioengine, IoEngine::IoUring(o) | IoEngine::IoUringCmd(o) if o.fixedbufs)
    }

    /// The DMA cost of job `j`'s requests: with `--patch dma-premap` a
    /// fixed buffer's address is looked up (mapped once at registration).
    #[inline(always)]
    pub(crate) fn job_dma_cost(&self, j: JobId) -> u64 {
        if self.job_premapped(j) {
            self.costs.dma_premap_ns
        } else {
            self.dma_cost()
        }
    }
}
