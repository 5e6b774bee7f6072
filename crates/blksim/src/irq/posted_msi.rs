//! Kernel path: posted MSI, "Coalesced Interrupt Delivery". The
//! IOMMU posts a device MSI into the target CPU's PIR and sends one
//! notification only when ON was clear; the notification handler harvests
//! the PIR up to MAX_POSTED_MSI_COALESCING_LOOP - 1 times, clears ON,
//! harvests once more, sends one EOI, and softirqs run once at its exit.

use crate::hw::cpu::{Bill, Frame, Stage};
use crate::hw::lapic::{VectorSet, POSTED_MSI_NOTIFICATION_VECTOR};
use crate::ids::{CpuId, DevId, HctxId, IrqId};
use crate::stats::{CpuStage, TraceName, Track};
use crate::system::{Event, Sim};

impl Sim {
    /// The IOMMU's posting reaches the descriptor: PIR bit set, and a
    /// notification if ON was clear and SN clear.
    pub(crate) fn msi_posted(&mut self, cpu: CpuId, vector: u8, port: usize) {
        let now = self.q.now_ns();
        if !self.cpus.mask.online[cpu] {
            // The posting reached an offline CPU: the vector goes on as `irq_redeliver` says.
            return self.irq_redeliver(self.intr.vectors.bound(cpu, vector));
        }
        let transfer = self.costs.cacheline_transfer_ns;
        if let Some(t) = self.trace.as_mut() {
            t.instant(cpu.0, Track::Hardirq, TraceName::MsiPosted, now);
        }
        let d = &mut self.intr.pi_descs[cpu];
        let mut extra = 0;
        if !d.iommu_owns_line {
            // The CPU touched the line last: the IOMMU's atomic pulls it back.
            extra = transfer;
            d.iommu_owns_line = true;
        }
        if d.pir.insert(vector) {
            self.intr.msi.merged += 1;
        }
        let notify = !d.on && !d.sn;
        if notify {
            d.on = true;
        }
        let rp = &self.hw.root_ports[port];
        let socket = rp.socket;
        if extra > 0 {
            self.hw.iommus[rp.unit].hold(now, extra);
        }
        if notify {
            // The unit sends the notification itself, outside the device's
            // write stream: nothing waits behind it at the port; it is
            // delivered to the CPU as any interrupt is.
            self.cpus[cpu].notifications_sent += 1;
            let routed = self.hw.routers[socket].route(now);
            self.q.at(
                routed + self.costs.msi_latency_ns,
                Event::InterruptArrived { cpu, vector: POSTED_MSI_NOTIFICATION_VECTOR },
            );
        }
    }

    /// `handle_pending_pir`: read the PIR's words and take the posted
    /// vectors (xchg of each non-zero word; none when all are clear).
    /// Returns the harvest's CPU cost; the vectors go into the frame on top.
    pub(crate) fn pir_harvest(&mut self, cpu: CpuId, pir: &mut VectorSet) -> u64 {
        let d = &mut self.intr.pi_descs[cpu];
        if d.pir.is_empty() {
            return self.costs.pir_scan_ns;
        }
        let mut cost = self.costs.pir_harvest_ns;
        if d.iommu_owns_line {
            cost += self.costs.cacheline_transfer_ns;
            d.iommu_owns_line = false;
        }
        pir.take_from(&mut d.pir);
        cost
    }

    /// The IRQ of a vector posted to `cpu`.
    fn posted_irq(&self, cpu: CpuId, vector: u8) -> IrqId {
        self.intr.vectors.get(cpu, vector).expect("a posted vector has an IRQ")
    }

    /// Cost of the current stage of a posted-notification frame (and its
    /// harvests), with the demultiplexed driver handler's bill; a drain's
    /// CQ head doorbell goes into `doorbell` (how long before the step's end).
    pub(crate) fn posted_begin(
        &mut self,
        cpu: CpuId,
        f: &mut Frame,
        doorbell: &mut Option<(DevId, HctxId, u64)>,
    ) -> (u64, Bill) {
        match f.stage {
            Stage::Entry => (self.costs.irq_entry_ns, Bill::default()),
            Stage::Work => {
                // Handle the lowest pending vector: its flow handler and driver handler.
                let v = f.pir.lowest().expect("harvested vector");
                let irq = self.posted_irq(cpu, v);
                if self.intr.irqs[irq].moderated && !f.replayed.contains(v) {
                    // GSIM: handle_edge_irq finds it moderated: pending and masked, held
                    // for the timer's resend (not delivered: marked as a replay).
                    let mask = self.gsim_hold(irq);
                    f.replayed.insert(v);
                    f.handler_busy = true;
                    f.items = 0;
                    f.foreseen_ns = 0;
                    return (self.costs.irq_flow_ns + mask, Bill::of(CpuStage::IrqEntryExit, mask));
                }
                if self.intr.irqs[irq].running_on.is_some_and(|o| o != cpu) {
                    // In progress on another CPU (a move raced with it): marked pending only.
                    self.intr.irqs[irq].replay = true;
                    f.handler_busy = true;
                    f.items = 0;
                    f.foreseen_ns = 0;
                    return (self.costs.irq_flow_ns, Bill::default());
                }
                f.handler_busy = false;
                self.intr.irqs[irq].running_on = Some(cpu);
                let (dev, queue) = (self.intr.irqs[irq].dev, self.intr.irqs[irq].queue);
                let n = self.devs[dev].queues[queue].cq.len() as u32;
                f.items = n;
                // nvme_irq's CQ head doorbell, once, after the loop that found entries.
                let ring = if n > 0 && !f.found { self.costs.cq_doorbell_ns } else { 0 };
                f.found |= n > 0;
                let mut drain = self.driver_irq_handler::<false>(cpu, dev, queue, n);
                f.foreseen_ns = drain.follow_ns;
                if n > 0 {
                    *doorbell = Some((dev, queue, drain.tail_ns));
                }
                drain.bill.add(CpuStage::Doorbell, ring);
                // A rescan is the same handler's loop: no second demultiplexing.
                let demux = if f.rescan { 0 } else { self.costs.irq_flow_ns };
                (demux + ring + drain.cost_ns, drain.bill)
            }
            Stage::Exit => (self.costs.apic_eoi_ns + self.costs.irq_exit_ns, Bill::default()),
        }
    }

    /// A step of a posted-notification frame ended. Returns `false` when the frame is done.
    pub(crate) fn posted_step_done(&mut self, cpu: CpuId, f: &mut Frame) -> bool {
        let loop_passes = self.intr.max_coalescing_loop - 1;
        match f.stage {
            Stage::Entry => {
                // for (i = 1; i < MAX_POSTED_MSI_COALESCING_LOOP; i++) if (!harvest) break;
                if loop_passes > 0 {
                    f.passes = 1;
                    f.carry_ns += self.pir_harvest(cpu, &mut f.pir);
                    if !f.pir.is_empty() {
                        f.stage = Stage::Work;
                        return true;
                    }
                }
            }
            Stage::Work => {
                let v = f.pir.lowest().unwrap();
                f.pir.remove(v);
                let irq = self.posted_irq(cpu, v);
                if !f.replayed.remove(v) {
                    self.intr.msi.delivered += 1;
                }
                if !f.handler_busy {
                    if !f.rescan {
                        // Each demultiplexed MSI still counts on its own IRQ's row.
                        self.intr.irqs[irq].counted(cpu);
                    }
                    let (dev, queue) = (self.intr.irqs[irq].dev, self.intr.irqs[irq].queue);
                    let actual = self.driver_irq_handler::<true>(cpu, dev, queue, f.items).follow_ns;
                    f.debt_ns += actual.saturating_sub(f.foreseen_ns.min(actual));
                    let d = &self.devs[dev];
                    if d.driver.irq_rescans() && !d.queues[queue].cq.is_empty() {
                        // The handler goes round while its queue shows entries (as by a remapped vector).
                        f.rescan = true;
                        f.pir.insert(v);
                        f.replayed.insert(v);
                        return true;
                    }
                    f.rescan = false;
                    f.found = false;
                    self.intr.irqs[irq].running_on = None;
                    // GSIM's hook after handle_irq_event (`--patch gsim`).
                    f.carry_ns += self.gsim_after_handler(cpu, irq);
                    if std::mem::take(&mut self.intr.irqs[irq].replay) {
                        // IRQS_PENDING: it fired elsewhere meanwhile; run the handler again.
                        f.pir.insert(v);
                        f.replayed.insert(v);
                    }
                }
                if !f.pir.is_empty() {
                    return true;
                }
                // The pass is done: harvest again while the loop allows.
                if !f.final_pass && f.passes < loop_passes {
                    f.passes += 1;
                    f.carry_ns += self.pir_harvest(cpu, &mut f.pir);
                    if !f.pir.is_empty() {
                        return true;
                    }
                }
            }
            Stage::Exit => return false,
        }
        if !f.final_pass {
            // Clear ON (re-arming notifications), then one more harvest for
            // posts that raced with the clear.
            f.final_pass = true;
            self.intr.pi_descs[cpu].on = false;
            f.carry_ns += self.pir_harvest(cpu, &mut f.pir);
            if !f.pir.is_empty() {
                f.stage = Stage::Work;
                return true;
            }
        }
        f.stage = Stage::Exit;
        true
    }
}

#[cfg(test)]
mod tests {
    use crate::ids::{CpuId, IrqId};
    use crate::machine::{load_profile, Builtins};
    use crate::settings::Settings;
    use crate::system::{Event, Sim};

    /// A 2-CPU machine in posted mode; `extra` overlays the profile.
    fn sim(extra: &str) -> Sim {
        let text = format!(
            "name = \"t\"\ndescription = \"t\"\nextends = \"spr-gen5\"\n[cpu]\ncores_per_socket = 2\nthreads_per_core = 1\n{extra}"
        );
        let m = load_profile(&text, "t", &Builtins).unwrap();
        let mut s = Settings::default();
        s.apply_cmdline("intremap=posted_msi").unwrap();
        Sim::build(&m, &s, &[], 1).unwrap()
    }

    /// The device IRQs whose vectors live on CPU 0 (one per drive).
    fn irqs_on_cpu0(s: &Sim) -> Vec<IrqId> {
        (0..s.intr.irqs.len()).map(IrqId::of).filter(|&i| s.intr.irqs[i].cpu == CpuId(0)).collect()
    }

    /// An MSI of `irq` that the IOMMU posts at `t` (sent as the device would).
    fn post_at(s: &mut Sim, t: u64, irq: IrqId) {
        s.intr.msi.sent += 1;
        s.intr.msi.in_flight += 1;
        let (cpu, vector) = (s.intr.irqs[irq].cpu, s.intr.irqs[irq].vector);
        s.q.at(t, Event::MsiPosted { cpu, vector, port: 0 });
    }

    fn handled(s: &Sim, irq: IrqId) -> u64 {
        s.intr.irqs[irq].count_on(CpuId(0))
    }

    #[test]
    fn posted_burst_sends_one_notification() {
        let mut s = sim("");
        let irqs = irqs_on_cpu0(&s);
        assert!(irqs.len() >= 8);
        for &i in &irqs {
            post_at(&mut s, 0, i);
        }
        s.run_until(1_000_000);
        assert_eq!(s.cpus[CpuId(0)].notifications_sent, 1);
        assert_eq!(s.cpus[CpuId(0)].pmn, 1);
        for &i in &irqs {
            assert_eq!(handled(&s, i), 1, "each posted MSI is handled exactly once");
        }
        assert!(!s.intr.pi_descs[CpuId(0)].on, "ON is clear again after the handler");
        assert!(s.intr.pi_descs[CpuId(0)].pir.is_empty());
    }

    #[test]
    fn repeated_msi_of_one_vector_merges_in_the_pir() {
        let mut s = sim("");
        let i = irqs_on_cpu0(&s)[0];
        for _ in 0..5 {
            post_at(&mut s, 0, i);
        }
        s.run_until(1_000_000);
        assert_eq!(handled(&s, i), 1);
        assert_eq!(s.intr.msi.merged, 4);
    }

    #[test]
    pub(crate) fn msi_posted_after_the_last_loop_harvest_is_caught_by_the_final_harvest() {
        let mut s = sim("");
        let irqs = irqs_on_cpu0(&s);
        let (a, c, b) = (irqs[0], irqs[1], irqs[2]);
        let k = &s.costs;
        let (l, e, d, h) = (k.msi_latency_ns, k.irq_entry_ns, k.irq_flow_ns, k.pir_harvest_ns);
        // A notifies; the handler harvests A at l+e (pass 1), C lands while A is handled and is
        // harvested by pass 2, B lands while C is handled, after the last loop harvest.
        post_at(&mut s, 0, a);
        post_at(&mut s, l + e + 1, c);
        post_at(&mut s, l + e + (d + h) + 1, b);
        s.run_until(1_000_000);
        assert_eq!(s.cpus[CpuId(0)].notifications_sent, 1, "B found ON set: no notification");
        assert_eq!(s.cpus[CpuId(0)].pmn, 1);
        assert_eq!((handled(&s, a), handled(&s, c), handled(&s, b)), (1, 1, 1));
    }

    #[test]
    pub(crate) fn msi_posted_after_on_is_cleared_notifies_again() {
        let mut s = sim("");
        let irqs = irqs_on_cpu0(&s);
        post_at(&mut s, 0, irqs[0]);
        post_at(&mut s, 100_000, irqs[1]);
        s.run_until(1_000_000);
        assert_eq!(s.cpus[CpuId(0)].notifications_sent, 2);
        assert_eq!(s.cpus[CpuId(0)].pmn, 2);
    }

    #[test]
    fn with_sn_set_nothing_is_notified() {
        let mut s = sim("");
        s.intr.pi_descs[CpuId(0)].sn = true;
        let i = irqs_on_cpu0(&s)[0];
        post_at(&mut s, 0, i);
        s.run_until(1_000_000);
        assert_eq!(s.cpus[CpuId(0)].notifications_sent, 0);
        assert_eq!(s.cpus[CpuId(0)].pmn, 0);
        assert_eq!(handled(&s, i), 0);
        assert!(!s.intr.pi_descs[CpuId(0)].pir.is_empty(), "the MSI waits in the PIR");
    }

    #[test]
    fn max_loops_one_goes_straight_to_the_final_harvest() {
        let text = "name = \"t\"\ndescription = \"t\"\nextends = \"spr-gen5\"\n[cpu]\ncores_per_socket = 2\nthreads_per_core = 1\n";
        let m = load_profile(text, "t", &Builtins).unwrap();
        let mut st = Settings::default();
        st.apply_cmdline("intremap=posted_msi blksim.max_posted_msi_coalescing_loop=1").unwrap();
        let mut s = Sim::build(&m, &st, &[], 1).unwrap();
        let i = irqs_on_cpu0(&s)[0];
        post_at(&mut s, 0, i);
        s.run_until(1_000_000);
        assert_eq!((s.cpus[CpuId(0)].pmn, handled(&s, i)), (1, 1));
    }
}
