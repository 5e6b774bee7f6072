//! Kernel path: posted MSI, "Coalesced Interrupt Delivery". The
//! IOMMU posts a device MSI into the target CPU's PIR and sends one
//! notification only when ON was clear; the notification handler harvests
//! the PIR up to MAX_POSTED_MSI_COALESCING_LOOP - 1 times, clears ON,
//! harvests once more, sends one EOI, and softirqs run once at its exit.

use crate::hw::cpu::{Frame, Stage};
use crate::hw::lapic::POSTED_MSI_NOTIFICATION_VECTOR;
use crate::stats::{TraceName, Track};
use crate::system::{Event, Sim};

/// The posted-interrupt descriptor of one CPU (`struct pi_desc`).
#[derive(Clone, Debug, Default)]
pub struct PiDesc {
    /// Posted interrupt requests, one bit per vector.
    pub pir: [u64; 4],
    /// Outstanding notification.
    pub on: bool,
    /// Suppress notification (the host never sets it; tests do).
    pub sn: bool,
    /// The IOMMU wrote the line last (the CPU's next atomic pays a transfer), or the CPU did.
    pub iommu_owns_line: bool,
}

impl Sim {
    /// A device MSI on a posted IRTE: it crosses the root port and the IOMMU
    /// like any interrupt write, and the IOMMU posts it instead of delivering it.
    pub(crate) fn msi_post(&mut self, irq: u32) {
        let (cpu, vector, dev) = {
            let i = &self.irqs[irq as usize];
            (i.cpu, i.vector, i.dev)
        };
        let port = self.devs[dev as usize].root_port;
        let post_ns = self.iommus[self.root_ports[port].socket].post_ns;
        let taken = self.interrupt_write(port, post_ns);
        self.msi.sent += 1;
        self.msi.in_flight += 1;
        self.cpus[cpu as usize].device_msis += 1;
        self.q.at(taken, Event::MsiPosted { cpu, vector, port: port as u16 });
    }

    /// The IOMMU's posting reaches the descriptor: PIR bit set, and a
    /// notification if ON was clear and SN clear.
    pub(crate) fn msi_posted(&mut self, cpu: u32, vector: u8, port: usize) {
        let now = self.q.now_ns();
        if self.offline[cpu as usize] {
            return self.retrigger_from_offline(cpu, vector);
        }
        let transfer = self.costs.cacheline_transfer_ns;
        if let Some(t) = self.trace.as_mut() {
            t.instant(cpu, Track::Hardirq, TraceName::MsiPosted, now);
        }
        let d = &mut self.pi_descs[cpu as usize];
        let mut extra = 0;
        if !d.iommu_owns_line {
            // The CPU touched the line last: the IOMMU's atomic pulls it back.
            extra = transfer;
            d.iommu_owns_line = true;
        }
        let (w, b) = ((vector >> 6) as usize, vector & 63);
        if d.pir[w] >> b & 1 == 1 {
            self.msi.merged += 1;
        }
        d.pir[w] |= 1 << b;
        let notify = !d.on && !d.sn;
        if notify {
            d.on = true;
        }
        let io = &mut self.iommus[self.root_ports[port].socket];
        if extra > 0 {
            io.free_at_ns = io.free_at_ns.max(now) + extra;
            io.busy_ns += extra;
        }
        if notify {
            // The IOMMU sends the notification itself, outside the device's
            // write stream: nothing waits behind it.
            self.cpus[cpu as usize].notifications_sent += 1;
            self.q.at(
                now + self.costs.msi_latency_ns,
                Event::InterruptArrived { cpu, vector: POSTED_MSI_NOTIFICATION_VECTOR },
            );
        }
    }

    /// `pi_harvest_pir`: take the posted vectors (xchg of each non-zero word).
    /// Returns the harvest's CPU cost; the vectors go into the frame on top.
    pub(crate) fn pir_harvest(&mut self, cpu: u32, pir: &mut [u64; 4]) -> u64 {
        let mut cost = self.costs.pir_harvest_ns;
        let d = &mut self.pi_descs[cpu as usize];
        if d.pir.iter().any(|w| *w != 0) {
            if d.iommu_owns_line {
                cost += self.costs.cacheline_transfer_ns;
                d.iommu_owns_line = false;
            }
            for (dst, src) in pir.iter_mut().zip(d.pir.iter_mut()) {
                *dst |= std::mem::take(src);
            }
        }
        cost
    }

    /// Cost of the current stage of a posted-notification frame, and its harvests.
    pub(crate) fn posted_begin(&mut self, cpu: u32, f: &mut Frame) -> u64 {
        match f.stage {
            Stage::Entry => self.costs.irq_entry_ns,
            Stage::Work => {
                // Handle the lowest pending vector: its flow handler and driver handler.
                let v = lowest_vector(&f.pir).expect("harvested vector");
                let irq = self.vector_irq[cpu as usize * 256 + v as usize];
                if self.irqs[irq as usize].running_on.is_some_and(|o| o != cpu) {
                    // In progress on another CPU (a move raced with it): marked pending only.
                    self.irqs[irq as usize].replay = true;
                    f.items = BUSY;
                    f.foreseen_ns = 0;
                    return self.costs.posted_msi_demux_ns;
                }
                self.irqs[irq as usize].running_on = Some(cpu);
                let (dev, queue) = (self.irqs[irq as usize].dev, self.irqs[irq as usize].queue);
                let n = self.devs[dev as usize].queues[queue as usize].cq.len() as u32;
                f.items = n;
                let (drain, follow) = self.drain_cost(cpu, dev, queue, n);
                f.foreseen_ns = follow;
                self.costs.posted_msi_demux_ns + drain
            }
            Stage::Exit => self.costs.apic_eoi_ns + self.costs.irq_exit_ns,
        }
    }

    /// A step of a posted-notification frame ended. Returns `false` when the frame is done.
    pub(crate) fn posted_step_done(&mut self, cpu: u32, f: &mut Frame) -> bool {
        let loop_passes = self.max_posted_msi_coalescing_loop - 1;
        match f.stage {
            Stage::Entry => {
                // for (i = 1; i < MAX_POSTED_MSI_COALESCING_LOOP; i++) if (!harvest) break;
                if loop_passes > 0 {
                    f.passes = 1;
                    f.debt_ns += self.pir_harvest(cpu, &mut f.pir);
                    if lowest_vector(&f.pir).is_some() {
                        f.stage = Stage::Work;
                        return true;
                    }
                }
            }
            Stage::Work => {
                let v = lowest_vector(&f.pir).unwrap();
                f.pir[(v >> 6) as usize] &= !(1 << (v & 63));
                let irq = self.vector_irq[cpu as usize * 256 + v as usize];
                let (w, b) = ((v >> 6) as usize, v & 63);
                if f.replayed[w] >> b & 1 == 1 {
                    f.replayed[w] &= !(1 << b);
                } else {
                    self.msi.delivered += 1;
                }
                if f.items != BUSY {
                    // Each demultiplexed MSI still counts on its own IRQ's row.
                    self.irqs[irq as usize].count[cpu as usize] += 1;
                    let (dev, queue) = (self.irqs[irq as usize].dev, self.irqs[irq as usize].queue);
                    let actual = self.nvme_drain(cpu, dev, queue, f.items);
                    f.debt_ns += actual.saturating_sub(f.foreseen_ns.min(actual));
                    if f.items > 0 {
                        f.debt_ns += self.costs.cq_doorbell_ns;
                    }
                    self.irqs[irq as usize].running_on = None;
                    if std::mem::take(&mut self.irqs[irq as usize].replay) {
                        // IRQS_PENDING: it fired elsewhere meanwhile; run the handler again.
                        f.pir[w] |= 1 << b;
                        f.replayed[w] |= 1 << b;
                    }
                }
                if lowest_vector(&f.pir).is_some() {
                    return true;
                }
                // The pass is done: harvest again while the loop allows.
                if !f.final_pass && f.passes < loop_passes {
                    f.passes += 1;
                    f.debt_ns += self.pir_harvest(cpu, &mut f.pir);
                    if lowest_vector(&f.pir).is_some() {
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
            self.pi_descs[cpu as usize].on = false;
            f.debt_ns += self.pir_harvest(cpu, &mut f.pir);
            if lowest_vector(&f.pir).is_some() {
                f.stage = Stage::Work;
                return true;
            }
        }
        f.stage = Stage::Exit;
        true
    }
}

/// `Frame::items` of a vector whose handler was busy on another CPU.
const BUSY: u32 = u32::MAX;

fn lowest_vector(pir: &[u64; 4]) -> Option<u8> {
    pir.iter().enumerate().find(|(_, w)| **w != 0).map(|(i, w)| (i as u32 * 64 + w.trailing_zeros()) as u8)
}

/// Which posted MSIs a frame has in hand, for the exactly-once count.
pub fn pir_count(pir: &[u64; 4]) -> u64 {
    pir.iter().map(|w| w.count_ones() as u64).sum()
}

#[cfg(test)]
mod tests {
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
    fn irqs_on_cpu0(s: &Sim) -> Vec<u32> {
        (0..s.irqs.len() as u32).filter(|&i| s.irqs[i as usize].cpu == 0).collect()
    }

    /// An MSI of `irq` that the IOMMU posts at `t` (sent as the device would).
    fn post_at(s: &mut Sim, t: u64, irq: u32) {
        s.msi.sent += 1;
        s.msi.in_flight += 1;
        let (cpu, vector) = (s.irqs[irq as usize].cpu, s.irqs[irq as usize].vector);
        s.q.at(t, Event::MsiPosted { cpu, vector, port: 0 });
    }

    fn handled(s: &Sim, irq: u32) -> u64 {
        s.irqs[irq as usize].count[0]
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
        assert_eq!(s.cpus[0].notifications_sent, 1);
        assert_eq!(s.cpus[0].pmn, 1);
        for &i in &irqs {
            assert_eq!(handled(&s, i), 1, "each posted MSI is handled exactly once");
        }
        assert!(!s.pi_descs[0].on, "ON is clear again after the handler");
        assert_eq!(s.pi_descs[0].pir, [0; 4]);
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
        assert_eq!(s.msi.merged, 4);
    }

    #[test]
    pub(crate) fn msi_posted_after_the_last_loop_harvest_is_caught_by_the_final_harvest() {
        let mut s = sim("");
        let irqs = irqs_on_cpu0(&s);
        let (a, c, b) = (irqs[0], irqs[1], irqs[2]);
        let k = &s.costs;
        let (l, e, d, h) = (k.msi_latency_ns, k.irq_entry_ns, k.posted_msi_demux_ns, k.pir_harvest_ns);
        // A notifies; the handler harvests A at l+e (pass 1), C lands while A is handled and is
        // harvested by pass 2, B lands while C is handled, after the last loop harvest.
        post_at(&mut s, 0, a);
        post_at(&mut s, l + e + 1, c);
        post_at(&mut s, l + e + (d + h) + 1, b);
        s.run_until(1_000_000);
        assert_eq!(s.cpus[0].notifications_sent, 1, "B found ON set: no notification");
        assert_eq!(s.cpus[0].pmn, 1);
        assert_eq!((handled(&s, a), handled(&s, c), handled(&s, b)), (1, 1, 1));
    }

    #[test]
    pub(crate) fn msi_posted_after_on_is_cleared_notifies_again() {
        let mut s = sim("");
        let irqs = irqs_on_cpu0(&s);
        post_at(&mut s, 0, irqs[0]);
        post_at(&mut s, 100_000, irqs[1]);
        s.run_until(1_000_000);
        assert_eq!(s.cpus[0].notifications_sent, 2);
        assert_eq!(s.cpus[0].pmn, 2);
    }

    #[test]
    fn with_sn_set_nothing_is_notified() {
        let mut s = sim("");
        s.pi_descs[0].sn = true;
        let i = irqs_on_cpu0(&s)[0];
        post_at(&mut s, 0, i);
        s.run_until(1_000_000);
        assert_eq!(s.cpus[0].notifications_sent, 0);
        assert_eq!(s.cpus[0].pmn, 0);
        assert_eq!(handled(&s, i), 0);
        assert_ne!(s.pi_descs[0].pir, [0; 4], "the MSI waits in the PIR");
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
        assert_eq!((s.cpus[0].pmn, handled(&s, i)), (1, 1));
    }
}
