//! CPU hotplug state: the kernel's `cpu_online_mask` and `cpu_active_mask`,
//! the take-down in progress and the writes waiting for it (hotplug
//! operations are serialised by `cpu_hotplug_lock`: a write to `online`
//! returns when its operation is done, and the next one starts then).

use std::collections::VecDeque;

use crate::ids::{CpuId, IdVec};
use crate::stats::HotplugStats;

/// A write to `/sys/devices/system/cpu/cpuN/online`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HotplugOp {
    /// `echo 0`.
    Down(CpuId),
    /// `echo 1`.
    Up(CpuId),
}

/// Which CPUs are online and active, and the operations in progress.
#[derive(Clone, Debug)]
pub(crate) struct CpuMasks {
    /// `cpu_online_mask`: the CPU takes interrupts and runs code.
    pub online: IdVec<CpuId, bool>,
    /// `cpu_active_mask`: the scheduler may put tasks there (cleared first
    /// when a CPU goes down, while it still takes interrupts).
    pub active: IdVec<CpuId, bool>,
    /// The CPU being taken down.
    pub going_down: Option<CpuId>,
    /// Writes waiting for the operation in progress, in order.
    pub waiting: VecDeque<HotplugOp>,
    /// What hotplug did over the run.
    pub stats: HotplugStats,
}

impl CpuMasks {
    /// `ncpus` CPUs, all online and active.
    pub(crate) fn new(ncpus: usize) -> CpuMasks {
        CpuMasks {
            online: IdVec::from(vec![true; ncpus]),
            active: IdVec::from(vec![true; ncpus]),
            going_down: None,
            waiting: VecDeque::new(),
            stats: HotplugStats::default(),
        }
    }

    /// Active CPUs.
    pub(crate) fn nr_active(&self) -> usize {
        self.active.iter().filter(|&&a| a).count()
    }

    /// The first active CPU of `cpus`, if any.
    pub(crate) fn first_active(&self, cpus: impl IntoIterator<Item = CpuId>) -> Option<CpuId> {
        cpus.into_iter().find(|&c| self.active[c])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_active_skips_inactive_cpus() {
        let mut m = CpuMasks::new(4);
        m.active[CpuId(1)] = false;
        assert_eq!(m.first_active([CpuId(1), CpuId(3), CpuId(2)]), Some(CpuId(3)));
        assert_eq!(m.first_active([CpuId(1)]), None);
        assert_eq!(m.nr_active(), 3);
    }
}
