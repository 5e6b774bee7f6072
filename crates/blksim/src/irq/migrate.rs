//! Kernel path: vector allocation, IRQ affinity changes and CPU hotplug.
//! `assign_irq_vector` at probe (managed NVMe vectors spread by the kernel,
//! others on CPU 0); `irq_set_affinity` → `apic_set_affinity` → a new vector
//! and IRTE → `__vector_cleanup` of the old one; `echo 0 > online` →
//! `fixup_irqs`: moving interrupts while they fire, losing none.
//!
//! A move allocates a vector on the new CPU and retargets the IRTE (so MSIs
//! sent from then on go there, remapped or posted); the old vector stays
//! bound to the IRQ until `__vector_cleanup` on the old CPU finds it no
//! longer pending in the IRR or the PIR (messages already on their way land
//! there and are handled through it); a pending one keeps it and the cleanup
//! retries 1 ms later. Offlining a CPU moves its IRQs away and retriggers
//! every vector still pending in its IRR or PIR on the new target: the real
//! vector is sent there directly, even in posted mode.

use crate::error::Error;
use crate::hw::cpu::FrameKind;
use crate::ids::{CpuId, DevId, HctxId, IrqId};
use crate::irq::desc::Irq;
use crate::settings::{Settings, TimedAction};
use crate::system::{Event, Sim};

/// When `__vector_cleanup` runs again after finding a moved vector pending.
pub(crate) const VECTOR_CLEANUP_RETRY_NS: u64 = 1_000_000;

impl Sim {
    /// A device IRQ with a vector on `cpu`: managed (NVMe queues, spread by
    /// the kernel) or not (movable from user space).
    pub(crate) fn alloc_irq(
        &mut self,
        dev: DevId,
        queue: HctxId,
        cpu: CpuId,
        name: String,
        managed: bool,
    ) -> Result<IrqId, Error> {
        let vector = self
            .vectors
            .alloc(cpu)
            .ok_or_else(|| Error::bad_input(format!("CPU {cpu} ran out of interrupt vectors")))?;
        let irq = IrqId::of(self.irqs.len());
        self.irqs.push(Irq::new(irq, dev, queue, cpu, vector, name, managed, self.cpus.len()));
        self.vectors.bind(cpu, vector, irq);
        Ok(irq)
    }

    /// The IRQ `/proc/interrupts` shows as `number`.
    pub(crate) fn irq_numbered(&self, number: u32) -> Option<IrqId> {
        self.irqs.iter().position(|i| i.number == number).map(IrqId::of)
    }

    /// `/proc/irq/N/smp_affinity_list` writes before the run.
    pub(crate) fn apply_irq_affinity(&mut self, settings: &Settings) -> Result<(), Error> {
        for (&number, cpus) in &settings.irq_affinity {
            let path = format!("/proc/irq/{number}/smp_affinity_list");
            let fail = |e: String| Error::bad_input(format!("{path}: {e}"));
            let irq = self.irq_numbered(number).ok_or_else(|| {
                fail(format!("no IRQ {number} on this machine (device IRQs are 128..{})", 128 + self.irqs.len()))
            })?;
            self.irq_set_affinity(irq, cpus).map_err(fail)?;
        }
        Ok(())
    }

    /// Move a device IRQ to the first CPU of `cpus` (x86 delivers to one CPU
    /// of the mask): a vector is allocated there and the old one freed.
    /// Managed IRQs refuse, as the kernel does (EIO).
    pub(crate) fn irq_set_affinity(&mut self, irq: IrqId, cpus: &[u32]) -> Result<(), String> {
        let (old_cpu, old_vector) = (self.irqs[irq].cpu, self.irqs[irq].vector);
        self.irq_set_affinity_keep_old(irq, cpus)?;
        self.vectors.unbind(old_cpu, old_vector);
        Ok(())
    }

    /// Retarget `irq` to a new vector on the first of `cpus`, leaving the old
    /// vector bound to it (messages already sent still arrive there).
    pub(crate) fn irq_set_affinity_keep_old(&mut self, irq: IrqId, cpus: &[u32]) -> Result<(), String> {
        let ncpus = self.cpus.len() as u32;
        let i = &self.irqs[irq];
        if i.managed {
            return Err(format!(
                "IRQ {} ({}) has managed affinity; the kernel refuses the write (EIO)",
                i.number, i.name
            ));
        }
        let &target = cpus.first().ok_or("empty CPU list")?;
        if let Some(bad) = cpus.iter().find(|&&c| c >= ncpus) {
            return Err(format!("CPU {bad} does not exist (machine has {ncpus} CPUs)"));
        }
        let target = CpuId(target);
        let vector = self.vectors.alloc(target).ok_or_else(|| format!("CPU {target} has no free interrupt vector"))?;
        let i = &mut self.irqs[irq];
        i.cpu = target;
        i.vector = vector;
        self.vectors.bind(target, vector, irq);
        Ok(())
    }

    /// Is `vector` pending on `cpu`: in its IRR, its PIR, or harvested by a
    /// notification handler that has not run it yet (`is_vector_pending`)?
    pub(crate) fn vector_pending(&self, cpu: CpuId, vector: u8) -> bool {
        let c = &self.cpus[cpu];
        c.irr.contains(vector)
            || self.pi_descs[cpu].pir.contains(vector)
            || c.frames.iter().any(|f| f.pir.contains(vector))
    }

    /// Retarget a non-managed IRQ to the first of `cpus` during the run.
    pub(crate) fn irq_move(&mut self, irq: IrqId, cpus: &[u32]) -> Result<(), String> {
        let (old_cpu, old_vector) = (self.irqs[irq].cpu, self.irqs[irq].vector);
        if cpus.iter().any(|&c| self.offline.get(c as usize).copied().unwrap_or(false)) {
            return Err(format!("CPU list {cpus:?} names an offline CPU"));
        }
        self.irq_set_affinity_keep_old(irq, cpus)?;
        self.q.after(VECTOR_CLEANUP_RETRY_NS, Event::VectorCleanup { cpu: old_cpu, vector: old_vector, irq });
        Ok(())
    }

    /// `__vector_cleanup`: free the moved IRQ's old vector unless it is still pending.
    pub(crate) fn vector_cleanup(&mut self, cpu: CpuId, vector: u8, irq: IrqId) {
        if self.vectors.get(cpu, vector) != Some(irq) {
            return;
        }
        if self.vector_pending(cpu, vector)
            || self.cpus[cpu].frames.iter().any(|f| f.kind == FrameKind::DeviceIrq { irq })
        {
            // "Moved interrupt pending in old target APIC": keep it, retry.
            self.q.after(VECTOR_CLEANUP_RETRY_NS, Event::VectorCleanup { cpu, vector, irq });
        } else {
            self.vectors.unbind(cpu, vector);
        }
    }

    /// `fixup_irqs` for a CPU going offline: move its IRQs, then retrigger
    /// what is still pending on it at the new targets.
    pub(crate) fn cpu_offline(&mut self, cpu: CpuId) -> Result<(), String> {
        if self.offline.iter().filter(|o| !**o).count() <= 1 {
            return Err("cannot offline the last online CPU".into());
        }
        self.offline[cpu] = true;
        let target = crate::ids::cpus(self.cpus.len()).find(|&c| !self.offline[c]).expect("an online CPU");
        for irq in (0..self.irqs.len()).map(IrqId::of) {
            let (irq_cpu, vector) = (self.irqs[irq].cpu, self.irqs[irq].vector);
            if irq_cpu != cpu {
                continue;
            }
            self.irq_set_affinity_keep_old(irq, &[target.0])?;
            // Retrigger a vector left pending in the dead CPU's IRR or PIR.
            let in_irr = self.cpus[cpu].irr.remove(vector);
            let in_pir = self.pi_descs[cpu].pir.remove(vector);
            if in_irr || in_pir {
                let new_vector = self.irqs[irq].vector;
                self.retriggered += 1;
                self.interrupt_arrived(target, new_vector);
            }
        }
        Ok(())
    }

    /// Apply a timed action.
    pub(crate) fn timed_action(&mut self, index: usize) -> Result<(), String> {
        match self.timed[index].clone() {
            TimedAction::IrqAffinity { irq_number, cpus } => {
                let irq = self.irq_numbered(irq_number).ok_or_else(|| format!("no IRQ {irq_number}"))?;
                self.irq_move(irq, &cpus)
            }
            TimedAction::CpuOffline { cpu } => self.cpu_offline(CpuId(cpu)),
        }
    }
}
