//! A hardware queue (`blk_mq_hw_ctx`, for NVMe one SQ/CQ pair) with its
//! tags, and the map from CPUs (software queues) to hardware queues.

use std::collections::VecDeque;

/// One hardware queue (hctx): for NVMe one SQ/CQ pair.
#[derive(Clone, Debug, Default)]
pub struct HwQueue {
    /// CQEs posted by the device and not yet consumed by the driver, in order.
    pub cq: VecDeque<u32>,
    /// A poll queue: created without IEN, raises no interrupt.
    pub polled: bool,
    /// Its IRQ (index into `Sim::irqs`), `u32::MAX` for a poll queue.
    pub irq: u32,
    pub tags_free: u32,
    /// Requests waiting for a tag, oldest first.
    pub tag_waiters: VecDeque<u32>,
    /// Jobs spinning on this queue's CQ.
    pub pollers: Vec<u32>,
}

/// Which CPUs map to each hardware queue, and back.
#[derive(Clone, Debug)]
pub struct QueueMap {
    /// CPU -> hardware queue index.
    pub cpu_to_hctx: Vec<u16>,
    /// hardware queue -> number of CPUs mapped to it (`hctx->nr_ctx`).
    pub nr_ctx: Vec<u32>,
    /// hardware queue -> its first CPU (where a managed IRQ's vector lives).
    pub first_cpu: Vec<u32>,
}

impl QueueMap {
    /// `group_cpus_evenly`-style spread of `cpus` (in order) over `nr_queues` queues:
    /// consecutive, equal-as-possible groups, offset by `base` queues.
    pub fn spread(cpus: &[u32], ncpus: usize, nr_queues: u32) -> QueueMap {
        let nr = nr_queues.max(1) as usize;
        let mut cpu_to_hctx = vec![0u16; ncpus];
        let mut nr_ctx = vec![0u32; nr];
        let mut first_cpu = vec![u32::MAX; nr];
        let per = cpus.len() / nr;
        let extra = cpus.len() % nr;
        let mut i = 0;
        for q in 0..nr {
            let take = per + usize::from(q < extra);
            for _ in 0..take {
                let c = cpus[i] as usize;
                cpu_to_hctx[c] = q as u16;
                nr_ctx[q] += 1;
                if first_cpu[q] == u32::MAX {
                    first_cpu[q] = c as u32;
                }
                i += 1;
            }
        }
        // Queues left without CPUs (more queues than CPUs) take the first CPU for their IRQ.
        for f in first_cpu.iter_mut() {
            if *f == u32::MAX {
                *f = cpus.first().copied().unwrap_or(0);
            }
        }
        QueueMap { cpu_to_hctx, nr_ctx, first_cpu }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_gives_each_cpu_one_queue_and_balances_groups() {
        let cpus: Vec<u32> = (0..10).collect();
        let m = QueueMap::spread(&cpus, 10, 4);
        assert_eq!(m.nr_ctx, vec![3, 3, 2, 2]);
        assert_eq!(m.cpu_to_hctx[0], 0);
        assert_eq!(m.cpu_to_hctx[9], 3);
        assert_eq!(m.first_cpu, vec![0, 3, 6, 8]);
        let one = QueueMap::spread(&cpus, 10, 10);
        assert!(one.nr_ctx.iter().all(|n| *n == 1));
    }
}
