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
    /// IRQ's vector is masked: the message sets its pending bit instead).
    #[inline(always)]
    pub(crate) fn msi_send(&mut self, irq: IrqId) {
        let (cpu, dev) = (self.intr.irqs[irq].cpu, self.intr.irqs[irq].dev);
        self.msi_counted(cpu, dev);
        if self.intr.irqs[irq].shutdown {
            if std::mem::replace(&mut self.intr.irqs[irq].masked_pending, true) {
                // The pending bit was set already: one message.
                self.intr.msi.in_flight -= 1;
                self.intr.msi.merged += 1;
            }
            return;
        }
        self.msi_deliver(irq);
    }

    /// A counted MSI of `irq` goes out: posted, or through the root port and
    /// interrupt remapping to its CPU.
    #[inline(always)]
    pub(crate) fn msi_deliver(&mut self, irq: IrqId) {
        if self.intr.posting {
            return self.msi_post(irq);
        }
        let (cpu, vector, dev) = {
            let i = &self.intr.irqs[irq];
            (i.cpu, i.vector, i.dev)
        };
        let port = self.devs[dev].root_port;
        let routed = self.interrupt_write(port, irq, false);
        self.q.at(routed + self.costs.msi_latency_ns, Event::InterruptArrived { cpu, vector });
    }

    /// Count a device MSI of `dev` aimed at `cpu`, on its way.
    pub(crate) fn msi_counted(&mut self, cpu: CpuId, dev: DevId) {
        self.intr.msi.sent += 1;
        self.intr.msi.in_flight += 1;
        self.cpus[cpu].device_msis += 1;
        self.devs[dev].msis += 1;
    }

    /// The MSI write of `irq` reaches root port `port` behind the port's
    /// earlier writes; the port's remapping unit takes it (one message at a
    /// time). Remapped, it becomes an interrupt message for the socket's
    /// interrupt delivery (one message at a time for the whole socket);
    /// posted, it is a write into a PIR. A posted write may not pass an
    /// earlier one (PCIe ordering), so the writes behind the MSI wait until
    /// it is performed — delivered, for a remapped MSI; written to the PIR,
    /// for a posted one (its notification goes on separately) — and the
    /// port has finished it (`service_ns`). Returns when the port is done
    /// with it.
    pub(crate) fn interrupt_write(&mut self, port: usize, irq: IrqId, posted: bool) -> u64 {
        let now = self.q.now_ns();
        let rp = &mut self.hw.root_ports[port];
        let taken = self.hw.iommus[rp.unit].take(irq, now.max(rp.free_at_ns), posted);
        let handed = if posted { taken } else { self.hw.routers[rp.socket].route(taken) };
        let done = handed + rp.service_ns;
        rp.busy_ns += done - now.max(rp.free_at_ns);
        rp.free_at_ns = done;
        rp.msis += 1;
        done
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
            return self.retrigger_from_offline(cpu, vector);
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

    /// A device vector reached (or was posted to) an offline CPU: it goes
    /// on as `irq_redeliver` says.
    pub(crate) fn retrigger_from_offline(&mut self, cpu: CpuId, vector: u8) {
        let irq = self
            .intr
            .vectors
            .get(cpu, vector)
            .unwrap_or_else(|| panic!("vector {vector:#x} on offline CPU {cpu} has no IRQ"));
        self.irq_redeliver(irq);
    }

    /// Send a CALL_FUNCTION_SINGLE IPI to `target` (remote completion).
    pub(crate) fn ipi_send(&mut self, target: CpuId) {
        self.cpus[target].ipis += 1;
        let at = self.ipi_routed(target);
        self.q.at(at, Event::InterruptArrived { cpu: target, vector: CALL_FUNCTION_SINGLE_VECTOR });
    }

    /// When an IPI sent now to `target` reaches it: through the socket's
    /// interrupt delivery, then its flight.
    pub(crate) fn ipi_routed(&mut self, target: CpuId) -> u64 {
        let socket = self.machine.topology.cpus[target.idx()].socket as usize;
        self.hw.routers[socket].route(self.q.now_ns()) + self.costs.ipi_latency_ns
    }
}
