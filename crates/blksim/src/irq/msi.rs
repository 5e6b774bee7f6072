//! Kernel path: interrupt delivery, remappable. A device's MSI write →
//! its root port (behind the port's earlier writes) → the remapping unit of
//! its PCIe stack (IRTE from the interrupt-entry cache or memory) → the
//! socket's interrupt delivery (Ubox), one message at a time → the target
//! CPU's local APIC IRR (a pending vector merges) → delivered when the CPU
//! has interrupts enabled. IPIs (`smp_call_function_single_async`,
//! wake-ups) take the last two steps.

use crate::hw::lapic::{CALL_FUNCTION_SINGLE_VECTOR, LOCAL_TIMER_VECTOR, POSTED_MSI_NOTIFICATION_VECTOR};
use crate::ids::{CpuId, DevId, IrqId};
use crate::stats::{TraceName, Track};
use crate::system::{Event, Sim};

impl Sim {
    /// A device raises the MSI of `irq`: counted, then sent (a shut-down
    /// IRQ's vector is masked, as is a moderated one's that fired: the
    /// message sets its pending bit instead).
    #[inline(always)]
    pub(crate) fn msi_send(&mut self, irq: IrqId) {
        let i = &self.intr.irqs[irq];
        let (cpu, dev, masked) = (i.cpu, i.dev, i.shutdown | i.masked);
        self.msi_counted(cpu, dev);
        if masked {
            if std::mem::replace(&mut self.intr.irqs[irq].masked_pending, true) {
                // The pending bit was set already: one message.
                self.intr.msi.in_flight -= 1;
                self.intr.msi.merged += 1;
            }
            return;
        }
        self.msi_deliver(irq);
    }

    /// A counted MSI of `irq` goes out through its root port and the IOMMU:
    /// remapped and delivered to its CPU, or, on a posted IRTE, posted into
    /// the CPU's PIR (`posted_msi.rs` takes it from there).
    #[inline(always)]
    pub(crate) fn msi_deliver(&mut self, irq: IrqId) {
        let (cpu, vector, dev) = {
            let i = &self.intr.irqs[irq];
            (i.cpu, i.vector, i.dev)
        };
        let port = self.devs[dev].root_port;
        let posted = self.intr.posting;
        let done = self.hw.interrupt_write(self.q.now_ns(), port, irq, posted);
        if posted {
            self.q.at(done, Event::MsiPosted { cpu, vector, port: port as u16 });
        } else {
            self.q.at(done + self.costs.msi_latency_ns, Event::InterruptArrived { cpu, vector });
        }
    }

    /// The MSI-X vector of `irq` is unmasked: a pending bit set while it
    /// was masked sends its message now.
    pub(crate) fn msix_unmasked(&mut self, irq: IrqId) {
        if std::mem::take(&mut self.intr.irqs[irq].masked_pending) {
            self.msi_deliver(irq);
        }
    }

    /// Count a device MSI of `dev` aimed at `cpu`, on its way.
    pub(crate) fn msi_counted(&mut self, cpu: CpuId, dev: DevId) {
        self.intr.msi.sent += 1;
        self.intr.msi.in_flight += 1;
        self.cpus[cpu].device_msis += 1;
        self.devs[dev].msis += 1;
    }

    /// An interrupt message reaches a CPU's local APIC.
    #[inline(always)]
    pub(crate) fn interrupt_arrived(&mut self, cpu: CpuId, vector: u8) {
        if !self.cpus.mask.online[cpu] {
            return self.interrupt_at_offline_cpu(cpu, vector);
        }
        if let Some(t) = self.trace.as_mut() {
            let name = if vector == POSTED_MSI_NOTIFICATION_VECTOR {
                TraceName::NotificationSent
            } else {
                TraceName::MsiArrived
            };
            if vector < CALL_FUNCTION_SINGLE_VECTOR && vector != LOCAL_TIMER_VECTOR {
                t.instant(cpu.0, Track::Hardirq, name, self.q.now_ns());
            }
        }
        let c = &mut self.cpus[cpu];
        if c.irr_set(vector) {
            if vector < POSTED_MSI_NOTIFICATION_VECTOR {
                self.intr.msi.merged += 1;
            }
            return;
        }
        if c.irqs_enabled() {
            self.cpu_kick(cpu);
        }
    }

    /// An interrupt reached an offline CPU. A device vector goes on as
    /// `irq_redeliver` says; a remote-completion IPI's work moves to an
    /// online CPU (`blk_softirq_cpu_dead` splices the dead CPU's
    /// `blk_cpu_done` list), as do expired hrtimers (`hrtimers_cpu_dying`);
    /// a posted-MSI notification finds nothing (the PIR was emptied by
    /// `fixup_irqs`).
    fn interrupt_at_offline_cpu(&mut self, cpu: CpuId, vector: u8) {
        if vector < POSTED_MSI_NOTIFICATION_VECTOR {
            // A device vector goes on as `irq_redeliver` says.
            return self.irq_redeliver(self.intr.vectors.bound(cpu, vector));
        }
        let to = crate::ids::cpus(self.cpus.len()).find(|&c| self.cpus.mask.online[c]).expect("an online CPU");
        if vector == CALL_FUNCTION_SINGLE_VECTOR {
            let moved = std::mem::take(&mut self.cpus[cpu].done_list);
            self.cpus[to].done_list.extend(moved);
            self.interrupt_arrived(to, vector);
        } else if vector == LOCAL_TIMER_VECTOR {
            let moved = std::mem::take(&mut self.cpus[cpu].timer_expired);
            self.cpus[to].timer_expired.extend(moved);
            let woken = std::mem::take(&mut self.cpus[cpu].timer_wake);
            self.cpus[to].timer_wake.extend(woken);
            self.interrupt_arrived(to, vector);
        }
    }

    /// Send a CALL_FUNCTION_SINGLE IPI to `target` (remote completion).
    pub(crate) fn ipi_send(&mut self, target: CpuId) {
        self.cpus[target].ipis += 1;
        let socket = self.machine.topology.cpus[target.idx()].socket as usize;
        let at = self.hw.ipi_routed(self.q.now_ns(), socket) + self.costs.ipi_latency_ns;
        self.q.at(at, Event::InterruptArrived { cpu: target, vector: CALL_FUNCTION_SINGLE_VECTOR });
    }

    /// A message of `irq` found its old CPU gone: to the IRQ's current
    /// target as its real vector (`irq_retrigger`, even in posted mode), or,
    /// the IRQ shut down, into its masked vector's pending bit.
    pub(crate) fn irq_redeliver(&mut self, irq: IrqId) {
        self.intr.retriggered += 1;
        if self.intr.irqs[irq].shutdown {
            if std::mem::replace(&mut self.intr.irqs[irq].masked_pending, true) {
                self.intr.msi.merged += 1;
            } else {
                self.intr.msi.in_flight += 1;
            }
            return;
        }
        let (to_cpu, to_vector) = (self.intr.irqs[irq].cpu, self.intr.irqs[irq].vector);
        self.interrupt_arrived(to_cpu, to_vector);
    }
}
