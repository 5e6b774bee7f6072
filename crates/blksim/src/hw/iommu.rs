//! IOMMU hardware (state): one unit per PCIe root complex / IIO stack (a
//! DRHD of the DMAR table). Each interrupt message of its root ports is
//! looked up in the interrupt remapping table — in the unit's
//! interrupt-entry cache (IEC) when the IRTE is there, from memory when it
//! is not — and remapped or posted, one message at a time. With
//! `iommu.strict=1` every DMA unmap invalidates the unit's IOTLB through its
//! invalidation queue, one invalidation at a time (`InvalidationQueue`).

use crate::ids::IrqId;
use crate::locking::qspinlock::LockStats;
use crate::machine::Iommu;

/// A remapping unit and its interrupt-entry cache.
#[derive(Clone, Debug, Default)]
pub(crate) struct RemapUnit {
    /// When it can take the next message.
    pub(crate) free_at_ns: u64,
    remap_ns: u64,
    post_ns: u64,
    iec_miss_ns: u64,
    iec: Iec,
    /// Messages it took, IEC misses among them, and its busy time.
    pub(crate) messages: u64,
    pub(crate) iec_misses: u64,
    pub(crate) busy_ns: u64,
    /// The unit's queued invalidation interface (DMA side).
    pub(crate) qi: InvalidationQueue,
}

/// A unit's queued invalidation interface as a strict unmap uses it:
/// `qi_submit_sync` takes the unit's `qi->q_lock`, queues the IOTLB
/// invalidation with a wait descriptor and spins until the hardware writes
/// the wait descriptor's status, then unlocks. One invalidation is in the
/// hardware at a time per unit; CPUs unmapping behind the same unit spin
/// on the lock, in arrival order (a queued spinlock). As
/// `perf lock contention` would show `qi->q_lock`.
#[derive(Clone, Debug, Default)]
pub(crate) struct InvalidationQueue {
    /// When the invalidation in the hardware is done.
    free_at_ns: u64,
    pub(crate) stats: LockStats,
}

impl InvalidationQueue {
    /// An invalidation (`service_ns` in the hardware) submitted at `at_ns`:
    /// when it is done, behind those ahead of it.
    pub(crate) fn sync(&mut self, at_ns: u64, service_ns: u64) -> u64 {
        self.stats.acquisitions += 1;
        let start = at_ns.max(self.free_at_ns);
        if start > at_ns {
            self.stats.contended += 1;
            self.stats.wait_ns += start - at_ns;
        }
        self.free_at_ns = start + service_ns;
        self.stats.hold_ns += service_ns;
        self.free_at_ns
    }
}

impl RemapUnit {
    /// The unit as the profile describes it, with a cold cache.
    pub(crate) fn new(spec: &Iommu) -> RemapUnit {
        RemapUnit {
            remap_ns: spec.remap_service_ns,
            post_ns: spec.post_service_ns,
            iec_miss_ns: spec.iec_miss_ns,
            iec: Iec::new(spec.iec_entries as usize),
            ..Default::default()
        }
    }

    /// Take the message of `irq` arriving at `at_ns`: remap it (or post it,
    /// `posted`), after the messages ahead of it. Returns when it is done.
    pub(crate) fn take(&mut self, irq: IrqId, at_ns: u64, posted: bool) -> u64 {
        let mut service = if posted { self.post_ns } else { self.remap_ns };
        if !self.iec.lookup(irq) {
            self.iec_misses += 1;
            service += self.iec_miss_ns;
        }
        self.occupy(at_ns, service)
    }

    /// Hold the unit for `service_ns` more from `at_ns` (or when it
    /// frees) without a message (e.g. pulling a descriptor's cache line
    /// back); returns when that ends.
    pub(crate) fn hold(&mut self, at_ns: u64, service_ns: u64) -> u64 {
        let done = at_ns.max(self.free_at_ns) + service_ns;
        self.free_at_ns = done;
        self.busy_ns += service_ns;
        done
    }

    fn occupy(&mut self, at_ns: u64, service_ns: u64) -> u64 {
        self.messages += 1;
        self.hold(at_ns, service_ns)
    }
}

/// A fully associative interrupt-entry cache of IRTEs, least recently used
/// out. Hits cost nothing more; a miss reads the IRTE from memory.
#[derive(Clone, Debug, Default)]
struct Iec {
    capacity: usize,
    /// Per IRQ: when it was last used (0: not cached).
    last_use: Vec<u64>,
    cached: usize,
    tick: u64,
}

impl Iec {
    fn new(capacity: usize) -> Iec {
        Iec { capacity, ..Default::default() }
    }

    /// Is `irq`'s IRTE cached? It is afterwards, evicting the least recently used.
    #[inline(always)]
    fn lookup(&mut self, irq: IrqId) -> bool {
        self.tick += 1;
        if self.last_use.len() <= irq.idx() {
            self.last_use.resize(irq.idx() + 1, 0);
        }
        let hit = self.last_use[irq.idx()] != 0;
        if !hit {
            if self.cached == self.capacity {
                let (lru, _) =
                    self.last_use.iter().enumerate().filter(|(_, &t)| t != 0).min_by_key(|(_, &t)| t).unwrap();
                self.last_use[lru] = 0;
            } else {
                self.cached += 1;
            }
        }
        self.last_use[irq.idx()] = self.tick;
        hit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(iec_entries: u32) -> RemapUnit {
        RemapUnit::new(&Iommu {
            name: "dmar0".into(),
            socket: 0,
            root_ports: vec![0],
            posting_capable: true,
            remap_service_ns: 100,
            post_service_ns: 20,
            iec_entries,
            iec_miss_ns: 300,
        })
    }

    #[test]
    fn a_cached_irte_costs_the_service_and_a_miss_reads_it_from_memory() {
        let mut u = unit(2);
        assert_eq!(u.take(IrqId(1), 0, false), 400, "cold: miss");
        assert_eq!(u.take(IrqId(1), 1_000, false), 1_100, "hit");
        assert_eq!(u.take(IrqId(1), 2_000, true), 2_020, "posting: hit");
        u.take(IrqId(2), 3_000, false);
        u.take(IrqId(3), 4_000, false); // evicts 1, the least recently used
        assert_eq!(u.take(IrqId(2), 5_000, false), 5_100, "2 was used after 1");
        assert_eq!(u.take(IrqId(1), 6_000, false), 6_400, "1 was evicted");
        assert_eq!((u.messages, u.iec_misses), (7, 4));
    }

    #[test]
    fn strict_invalidations_of_one_unit_take_turns_and_the_waits_are_counted() {
        let (mut a, mut b) = (unit(8), unit(8));
        // Three CPUs unmap at once behind unit a, one behind unit b.
        let done = [a.qi.sync(0, 357), a.qi.sync(0, 357), a.qi.sync(100, 357), b.qi.sync(0, 357)];
        assert_eq!(done, [357, 714, 1071, 357]);
        assert_eq!((a.qi.stats.acquisitions, a.qi.stats.contended), (3, 2));
        assert_eq!(a.qi.stats.wait_ns, 357 + 614);
        assert_eq!(a.qi.stats.hold_ns, 3 * 357);
        // An invalidation after the queue drained starts at once.
        assert_eq!(a.qi.sync(5_000, 357), 5_357);
        assert_eq!(a.qi.stats.contended, 2);
        // Interrupt remapping does not queue behind invalidations.
        assert_eq!(a.take(IrqId(0), 0, false), 400);
    }

    #[test]
    fn messages_queue_behind_each_other_in_one_unit_only() {
        let (mut a, mut b) = (unit(8), unit(8));
        let t = [a.take(IrqId(0), 0, false), a.take(IrqId(0), 0, false), b.take(IrqId(1), 0, false)];
        // The second message of unit a waits for the first; unit b's does not.
        assert_eq!(t, [400, 500, 400]);
    }
}
