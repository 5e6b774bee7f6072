//! Moving interrupts while they fire: an IRQ affinity change and a CPU going
//! offline, losing none (kernel-mechanisms §1, "Not losing interrupts").
//!
//! A move allocates a vector on the new CPU and retargets the IRTE (so MSIs
//! sent from then on go there, remapped or posted); the old vector stays
//! bound to the IRQ until `__vector_cleanup` on the old CPU finds it no
//! longer pending in the IRR or the PIR (messages already on their way land
//! there and are handled through it); a pending one keeps it and the cleanup
//! retries 1 ms later. Offlining a CPU moves its IRQs away and retriggers
//! every vector still pending in its IRR or PIR on the new target: the real
//! vector is sent there directly, even in posted mode.

use crate::machine::cpu::Frame;
use crate::run::{Event, Sim};

/// When `__vector_cleanup` runs again after finding a moved vector pending.
pub const VECTOR_CLEANUP_RETRY_NS: u64 = 1_000_000;

/// An action at a point of virtual time, written as on a real machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TimedAction {
    /// `echo CPUS > /proc/irq/N/smp_affinity_list`.
    IrqAffinity { irq_number: u32, cpus: Vec<u32> },
    /// `echo 0 > /sys/devices/system/cpu/cpuN/online`.
    CpuOffline { cpu: u32 },
}

fn pending_in(bits: &[u64; 4], vector: u8) -> bool {
    bits[(vector >> 6) as usize] >> (vector & 63) & 1 == 1
}

impl Sim {
    /// Is `vector` pending on `cpu`: in its IRR, its PIR, or harvested by a
    /// notification handler that has not run it yet (`is_vector_pending`)?
    pub fn vector_pending(&self, cpu: u32, vector: u8) -> bool {
        let c = &self.cpus[cpu as usize];
        pending_in(&c.irr, vector)
            || pending_in(&c.pi_desc.pir, vector)
            || c.frames.iter().any(|f: &Frame| pending_in(&f.pir, vector))
    }

    /// Retarget a non-managed IRQ to the first of `cpus` during the run.
    pub fn irq_move(&mut self, irq: u32, cpus: &[u32]) -> Result<(), String> {
        let (old_cpu, old_vector) = (self.irqs[irq as usize].cpu, self.irqs[irq as usize].vector);
        if cpus.iter().any(|&c| self.offline.get(c as usize).copied().unwrap_or(false)) {
            return Err(format!("CPU list {cpus:?} names an offline CPU"));
        }
        self.irq_set_affinity_keep_old(irq, cpus)?;
        self.q.after(VECTOR_CLEANUP_RETRY_NS, Event::VectorCleanup { cpu: old_cpu, vector: old_vector, irq });
        Ok(())
    }

    /// `__vector_cleanup`: free the moved IRQ's old vector unless it is still pending.
    pub fn vector_cleanup(&mut self, cpu: u32, vector: u8, irq: u32) {
        let slot = cpu as usize * 256 + vector as usize;
        if self.vector_irq[slot] != irq {
            return;
        }
        if self.vector_pending(cpu, vector)
            || self.cpus[cpu as usize]
                .frames
                .iter()
                .any(|f| f.kind == crate::machine::cpu::FrameKind::DeviceIrq { irq })
        {
            // "Moved interrupt pending in old target APIC": keep it, retry.
            self.q.after(VECTOR_CLEANUP_RETRY_NS, Event::VectorCleanup { cpu, vector, irq });
        } else {
            self.vector_irq[slot] = u32::MAX;
        }
    }

    /// `fixup_irqs` for a CPU going offline: move its IRQs, then retrigger
    /// what is still pending on it at the new targets.
    pub fn cpu_offline(&mut self, cpu: u32) -> Result<(), String> {
        if self.offline.iter().filter(|o| !**o).count() <= 1 {
            return Err("cannot offline the last online CPU".into());
        }
        self.offline[cpu as usize] = true;
        let target = (0..self.cpus.len() as u32).find(|&c| !self.offline[c as usize]).expect("an online CPU");
        for irq in 0..self.irqs.len() as u32 {
            let (irq_cpu, vector) = (self.irqs[irq as usize].cpu, self.irqs[irq as usize].vector);
            if irq_cpu != cpu {
                continue;
            }
            self.irq_set_affinity_keep_old(irq, &[target])?;
            // Retrigger a vector left pending in the dead CPU's IRR or PIR.
            let c = &mut self.cpus[cpu as usize];
            let (w, b) = ((vector >> 6) as usize, vector & 63);
            let was = (c.irr[w] >> b & 1 == 1) || (c.pi_desc.pir[w] >> b & 1 == 1);
            c.irr[w] &= !(1 << b);
            c.pi_desc.pir[w] &= !(1 << b);
            if was {
                let new_vector = self.irqs[irq as usize].vector;
                self.retriggered += 1;
                self.interrupt_arrived(target, new_vector);
            }
        }
        Ok(())
    }

    /// Apply a timed action.
    pub fn timed_action(&mut self, index: usize) -> Result<(), String> {
        match self.timed[index].clone() {
            TimedAction::IrqAffinity { irq_number, cpus } => {
                let irq = self
                    .irqs
                    .iter()
                    .position(|i| i.number == irq_number)
                    .ok_or_else(|| format!("no IRQ {irq_number}"))?;
                self.irq_move(irq as u32, &cpus)
            }
            TimedAction::CpuOffline { cpu } => self.cpu_offline(cpu),
        }
    }
}
