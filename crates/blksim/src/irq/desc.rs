//! Interrupt descriptors (state): one per device IRQ — its number, target
//! CPU and vector, per-CPU counts, managed or not, and whether its handler
//! is running somewhere (`IRQD_IRQ_INPROGRESS`) — and the MSI counts the
//! exactly-once invariant checks.

use crate::ids::{CpuId, DevId, HctxId, IrqId};

/// A device interrupt (one per interrupt-driven NVMe queue).
#[derive(Clone)]
pub(crate) struct Irq {
    /// Linux IRQ number, as `/proc/interrupts` shows it.
    pub number: u32,
    pub dev: DevId,
    pub queue: HctxId,
    /// Target CPU (effective affinity) and vector there.
    pub cpu: CpuId,
    pub vector: u8,
    /// Handler invocations per CPU, for the CPUs that ran it (most IRQs
    /// run on one or two: the count costs what it holds, not the machine's size).
    pub count: Vec<(CpuId, u64)>,
    /// Managed affinity (NVMe queues): user space cannot move it.
    pub managed: bool,
    /// The CPU running its handler (IRQD_IRQ_INPROGRESS), if any.
    pub running_on: Option<CpuId>,
    /// IRQS_PENDING: it fired elsewhere while in progress; the handler runs again.
    pub replay: bool,
    /// Shut down (a managed IRQ whose CPUs all went offline): its MSI-X
    /// vector is masked; `cpu`/`vector` are where it was.
    pub shutdown: bool,
    /// The device raised it while masked: the MSI-X pending bit, sent when
    /// the IRQ starts again.
    pub masked_pending: bool,
    /// GSIM (`--patch gsim`): moderation is on for it (`/proc/irq/N/soft_moderation`).
    pub moderation: bool,
    /// GSIM: on its CPU's moderated list, disabled until the CPU's
    /// moderation timer fires (IRQD_IRQ_MODERATED), since `moderated_since_ns`.
    pub moderated: bool,
    pub moderated_since_ns: u64,
    /// GSIM: its MSI-X vector masked by an interrupt that came while it was
    /// moderated (`mask_ack_irq`); the device sets its pending bit instead of sending.
    pub masked: bool,
    /// GSIM: an interrupt came while it was moderated (IRQS_PENDING), since
    /// `held_since_ns`: the timer resends it.
    pub held: bool,
    pub held_since_ns: u64,
    /// The CPUs of its affinity mask (a managed IRQ's queue's CPUs; all
    /// CPUs for others until user space writes a list).
    pub mask: Vec<CpuId>,
}

impl Irq {
    /// Its handler ran on `cpu` once more.
    #[inline(always)]
    pub(crate) fn counted(&mut self, cpu: CpuId) {
        match self.count.iter_mut().find(|e| e.0 == cpu) {
            Some(e) => e.1 += 1,
            None => self.count.push((cpu, 1)),
        }
    }

    /// Its handler runs on `cpu`.
    #[cfg(test)]
    pub(crate) fn count_on(&self, cpu: CpuId) -> u64 {
        self.count.iter().find(|e| e.0 == cpu).map_or(0, |e| e.1)
    }

    /// IRQ `irq` of queue `queue` of `dev`, on `vector` of `cpu`; no
    /// interrupt counted yet.
    pub(crate) fn new(irq: IrqId, dev: DevId, queue: HctxId, cpu: CpuId, vector: u8, managed: bool) -> Irq {
        Irq {
            number: 128 + irq.0,
            dev,
            queue,
            cpu,
            vector,
            count: Vec::new(),
            managed,
            running_on: None,
            replay: false,
            shutdown: false,
            masked_pending: false,
            moderation: false,
            moderated: false,
            moderated_since_ns: 0,
            masked: false,
            held: false,
            held_since_ns: 0,
            mask: Vec::new(),
        }
    }
}
