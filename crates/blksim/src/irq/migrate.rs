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
use crate::settings::Settings;
use crate::system::{Event, Sim};

/// When `__vector_cleanup` runs again after finding a moved vector pending.
pub(crate) const VECTOR_CLEANUP_RETRY_NS: u64 = 1_000_000;

impl Sim {
    /// A device IRQ with a vector on `cpu`: managed (NVMe queues, spread by
    /// the kernel) or not (movable from user space).
    pub(crate) fn alloc_irq(&mut self, dev: DevId, queue: HctxId, cpu: CpuId, managed: bool) -> Result<IrqId, Error> {
        let vector = self
            .intr
            .vectors
            .alloc(cpu)
            .ok_or_else(|| Error::bad_input(format!("CPU {cpu} ran out of interrupt vectors")))?;
        let irq = IrqId::of(self.intr.irqs.len());
        self.intr.irqs.push(Irq::new(irq, dev, queue, cpu, vector, managed));
        self.intr.vectors.bind(cpu, vector, irq);
        Ok(irq)
    }

    /// `irq`'s action name, as `/proc/interrupts` shows it (`nvme0q1`).
    pub(crate) fn irq_action(&self, irq: &Irq) -> String {
        let d = &self.devs[irq.dev];
        d.driver.irq_action(&d.name, d.instance, irq.queue)
    }

    /// The IRQ `/proc/interrupts` shows as `number`.
    pub(crate) fn irq_numbered(&self, number: u32) -> Option<IrqId> {
        self.intr.irqs.iter().position(|i| i.number == number).map(IrqId::of)
    }

    /// Why IRQ `number` is not there: the machine's device IRQs, by name when few.
    pub(crate) fn no_irq(&self, number: u32) -> String {
        let listed = match self.intr.irqs.len() {
            0 => "it has no device IRQ".to_string(),
            1..=16 => {
                let names: Vec<String> =
                    self.intr.irqs.iter().map(|i| format!("{} {}", i.number, self.irq_action(i))).collect();
                format!("its device IRQs: {}", names.join(", "))
            }
            n => format!(
                "its device IRQs are {}..{} (`--interrupts` names them)",
                self.intr.irqs[IrqId(0)].number,
                self.intr.irqs[IrqId::of(n - 1)].number
            ),
        };
        format!("no IRQ {number} on this machine ({listed})")
    }

    /// `/proc/irq/N/smp_affinity_list` writes before the run.
    pub(crate) fn apply_irq_affinity(&mut self, settings: &Settings) -> Result<(), Error> {
        for (&number, cpus) in &settings.irq_affinity {
            let path = format!("/proc/irq/{number}/smp_affinity_list");
            let fail = |e: String| Error::bad_input(format!("{path}: {e}"));
            let irq = self.irq_numbered(number).ok_or_else(|| fail(self.no_irq(number)))?;
            self.irq_set_affinity(irq, cpus).map_err(fail)?;
        }
        Ok(())
    }

    /// Move a device IRQ to the first CPU of `cpus` (x86 delivers to one CPU
    /// of the mask): a vector is allocated there and the old one freed.
    /// Managed IRQs refuse, as the kernel does (EIO).
    pub(crate) fn irq_set_affinity(&mut self, irq: IrqId, cpus: &[u32]) -> Result<(), String> {
        let (old_cpu, old_vector) = (self.intr.irqs[irq].cpu, self.intr.irqs[irq].vector);
        self.irq_set_affinity_keep_old(irq, cpus)?;
        self.intr.vectors.unbind(old_cpu, old_vector);
        Ok(())
    }

    /// Retarget `irq` to a new vector on the first online CPU of `cpus`
    /// (offline ones are accepted when one is online, as the kernel does),
    /// leaving the old vector bound to it (messages already sent still
    /// arrive there).
    pub(crate) fn irq_set_affinity_keep_old(&mut self, irq: IrqId, cpus: &[u32]) -> Result<(), String> {
        let ncpus = self.cpus.len() as u32;
        let i = &self.intr.irqs[irq];
        if i.managed {
            return Err(format!(
                "IRQ {} ({}) has managed affinity; the kernel refuses the write (EIO)",
                i.number,
                self.irq_action(i)
            ));
        }
        if cpus.is_empty() {
            return Err("empty CPU list".into());
        }
        if let Some(bad) = cpus.iter().find(|&&c| c >= ncpus) {
            return Err(format!("CPU {bad} does not exist (machine has {ncpus} CPUs)"));
        }
        let target = cpus
            .iter()
            .map(|&c| CpuId(c))
            .find(|&c| self.cpus.mask.online[c])
            .ok_or_else(|| format!("CPU list {cpus:?} names no online CPU"))?;
        self.intr.irqs[irq].mask = cpus.iter().map(|&c| CpuId(c)).collect();
        self.irq_retarget(irq, target)
    }

    /// Point `irq` at a new vector on `target`; the old vector stays bound
    /// until cleaned up.
    pub(crate) fn irq_retarget(&mut self, irq: IrqId, target: CpuId) -> Result<(), String> {
        let vector =
            self.intr.vectors.alloc(target).ok_or_else(|| format!("CPU {target} has no free interrupt vector"))?;
        let i = &mut self.intr.irqs[irq];
        i.cpu = target;
        i.vector = vector;
        self.intr.vectors.bind(target, vector, irq);
        Ok(())
    }

    /// Is `vector` pending on `cpu`: in its IRR, its PIR, or harvested by a
    /// notification handler that has not run it yet (`is_vector_pending`)?
    pub(crate) fn vector_pending(&self, cpu: CpuId, vector: u8) -> bool {
        let c = &self.cpus[cpu];
        c.irr.contains(vector)
            || self.intr.pi_descs[cpu].pir.contains(vector)
            || c.frames.iter().any(|f| f.pir.contains(vector))
    }

    /// Retarget a non-managed IRQ to the first online CPU of `cpus` during the run.
    pub(crate) fn irq_move(&mut self, irq: IrqId, cpus: &[u32]) -> Result<(), String> {
        let (old_cpu, old_vector) = (self.intr.irqs[irq].cpu, self.intr.irqs[irq].vector);
        self.irq_set_affinity_keep_old(irq, cpus)?;
        self.q.after(VECTOR_CLEANUP_RETRY_NS, Event::VectorCleanup { cpu: old_cpu, vector: old_vector, irq });
        Ok(())
    }

    /// `__vector_cleanup`: free the moved IRQ's old vector unless it is still pending.
    pub(crate) fn vector_cleanup(&mut self, cpu: CpuId, vector: u8, irq: IrqId) {
        // Gone already, or the IRQ's current vector again (it moved back).
        if self.intr.vectors.get(cpu, vector) != Some(irq)
            || (self.intr.irqs[irq].cpu, self.intr.irqs[irq].vector) == (cpu, vector)
        {
            return;
        }
        if self.vector_pending(cpu, vector)
            || self.cpus[cpu].frames.iter().any(|f| f.kind == FrameKind::DeviceIrq { irq })
        {
            // "Moved interrupt pending in old target APIC": keep it, retry.
            self.q.after(VECTOR_CLEANUP_RETRY_NS, Event::VectorCleanup { cpu, vector, irq });
        } else {
            self.intr.vectors.unbind(cpu, vector);
        }
    }

    /// `fixup_irqs` / `irq_migrate_all_off_this_cpu` for `cpu`, now
    /// offline: each IRQ aimed at it moves to the first online CPU of its
    /// mask (a non-managed one with none left breaks affinity and goes to
    /// the first online CPU); a managed one with none left is shut down.
    /// Then what is still pending in the dead CPU's IRR or PIR is
    /// retriggered at the IRQ's new target, or kept as the masked vector's
    /// pending bit.
    pub(crate) fn fixup_irqs(&mut self, cpu: CpuId) {
        for irq in (0..self.intr.irqs.len()).map(IrqId::of) {
            let (irq_cpu, vector) = (self.intr.irqs[irq].cpu, self.intr.irqs[irq].vector);
            if irq_cpu != cpu || self.intr.irqs[irq].shutdown {
                continue;
            }
            let online = |c: &CpuId| self.cpus.mask.online[*c];
            let target = match self.intr.irqs[irq].mask.iter().copied().find(online) {
                Some(t) => Some(t),
                None if self.intr.irqs[irq].managed => None,
                None => crate::ids::cpus(self.cpus.len()).find(online),
            };
            match target {
                Some(t) => {
                    self.irq_retarget(irq, t).unwrap_or_else(|e| panic!("fixup_irqs: {e}"));
                    self.cpus.mask.stats.irqs_moved += 1;
                }
                None => {
                    // irq_shutdown_and_deactivate: the vector stays bound on
                    // the dead CPU for messages already on their way.
                    self.intr.irqs[irq].shutdown = true;
                    self.cpus.mask.stats.irqs_shut_down += 1;
                }
            }
            let in_irr = self.cpus[cpu].irr.remove(vector);
            let in_pir = self.intr.pi_descs[cpu].pir.remove(vector);
            if in_irr || in_pir {
                self.irq_redeliver(irq);
            }
        }
    }

    /// `irq_affinity_online_cpu` for `cpu`, back online: its stale vectors
    /// (IRQs that moved away when it went down) are freed, and each managed
    /// IRQ shut down for want of it starts there (`irq_startup`); a pending
    /// bit set while it was masked sends its message now.
    pub(crate) fn irqs_startup_on(&mut self, cpu: CpuId) {
        for irq in (0..self.intr.irqs.len()).map(IrqId::of) {
            let i = &self.intr.irqs[irq];
            if i.shutdown && i.mask.contains(&cpu) {
                let (old_cpu, old_vector) = (i.cpu, i.vector);
                if old_cpu != cpu {
                    self.irq_retarget(irq, cpu).unwrap_or_else(|e| panic!("irq_startup: {e}"));
                    self.intr.vectors.unbind(old_cpu, old_vector);
                }
                self.intr.irqs[irq].shutdown = false;
                self.cpus.mask.stats.irqs_started += 1;
                self.msix_unmasked(irq);
            }
        }
        for v in self.intr.vectors.bound_on(cpu) {
            let irq = self.intr.vectors.get(cpu, v).expect("bound");
            let i = &self.intr.irqs[irq];
            if (i.cpu, i.vector) != (cpu, v) {
                self.intr.vectors.unbind(cpu, v);
            }
        }
    }
}
