//! A hardware queue (`blk_mq_hw_ctx`, for NVMe one SQ/CQ pair) with its
//! tags, and the map from CPUs (software queues) to hardware queues.

use crate::ids::{CpuId, HctxId, IdVec, IrqId, JobId, ReqId};
use std::collections::VecDeque;

/// One hardware queue (hctx): for NVMe one SQ/CQ pair.
#[derive(Clone, Debug, Default)]
pub(crate) struct HwQueue {
    /// CQEs posted by the device and not yet consumed by the driver, in order.
    pub cq: VecDeque<ReqId>,
    /// A poll queue: created without IEN, raises no interrupt.
    pub polled: bool,
    /// Its IRQ; none for a poll queue (or a null_blk queue).
    pub irq: Option<IrqId>,
    pub tags_free: u32,
    /// Requests waiting for a tag, oldest first.
    pub tag_waiters: VecDeque<ReqId>,
    /// Jobs spinning on this queue's CQ.
    pub pollers: Vec<JobId>,
    /// Requests holding one of its tags or waiting for one (what a drain waits for).
    pub busy: u32,
    /// `BLK_MQ_S_INACTIVE`: none of its CPUs is active; it drains.
    pub inactive: bool,
}

/// Which CPUs map to each hardware queue, and back.
#[derive(Clone, Debug)]
pub(crate) struct QueueMap {
    /// CPU -> hardware queue index.
    pub cpu_to_hctx: IdVec<CpuId, HctxId>,
    /// hardware queue -> number of CPUs mapped to it (`hctx->nr_ctx`).
    pub nr_ctx: IdVec<HctxId, u32>,
    /// hardware queue -> its first CPU (where a managed IRQ's vector lives).
    pub first_cpu: IdVec<HctxId, CpuId>,
}

impl QueueMap {
    /// The CPUs of each queue, in CPU order.
    pub(crate) fn cpus_per_queue(&self) -> Vec<Vec<CpuId>> {
        let mut groups = vec![Vec::new(); self.nr_ctx.len()];
        for (c, q) in self.cpu_to_hctx.iter().enumerate() {
            groups[q.idx()].push(CpuId::of(c));
        }
        groups
    }

    /// `group_cpus_evenly`-style spread of `cpus` (in order) over `nr_queues` queues:
    /// consecutive, equal-as-possible groups.
    pub(crate) fn spread(cpus: &[CpuId], ncpus: usize, nr_queues: u32) -> QueueMap {
        let nr = nr_queues.max(1) as usize;
        let mut cpu_to_hctx = vec![HctxId(0); ncpus];
        let mut nr_ctx = vec![0u32; nr];
        let mut first_cpu: Vec<Option<CpuId>> = vec![None; nr];
        let per = cpus.len() / nr;
        let extra = cpus.len() % nr;
        let mut i = 0;
        for q in 0..nr {
            let take = per + usize::from(q < extra);
            for _ in 0..take {
                let c = cpus[i];
                cpu_to_hctx[c.idx()] = HctxId::of(q);
                nr_ctx[q] += 1;
                first_cpu[q].get_or_insert(c);
                i += 1;
            }
        }
        // Queues left without CPUs (more queues than CPUs) take the first CPU for their IRQ.
        let first = cpus.first().copied().unwrap_or(CpuId(0));
        QueueMap {
            cpu_to_hctx: IdVec::from(cpu_to_hctx),
            nr_ctx: IdVec::from(nr_ctx),
            first_cpu: first_cpu.into_iter().map(|f| f.unwrap_or(first)).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_gives_each_cpu_one_queue_and_balances_groups() {
        let cpus: Vec<CpuId> = crate::ids::cpus(10).collect();
        let m = QueueMap::spread(&cpus, 10, 4);
        assert_eq!(m.nr_ctx.to_vec(), vec![3, 3, 2, 2]);
        assert_eq!(m.cpu_to_hctx[CpuId(0)], HctxId(0));
        assert_eq!(m.cpu_to_hctx[CpuId(9)], HctxId(3));
        assert_eq!(m.first_cpu.to_vec(), [0, 3, 6, 8].map(CpuId));
        let one = QueueMap::spread(&cpus, 10, 10);
        assert!(one.nr_ctx.iter().all(|n| *n == 1));
    }
}
