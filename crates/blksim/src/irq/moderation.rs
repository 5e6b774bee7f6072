//! Kernel path: Global Software Interrupt Moderation (`--patch gsim`; Luigi
//! Rizzo's series, v4 of 15 Jan 2026, `kernel/irq/irq_moderation.[ch]`, out
//! of tree). After a device IRQ's handler, `irq_start_moderation` counts the
//! interrupt on its CPU; every 16th looks whether an epoch (`update_ms`) has
//! passed and, if so, measures the CPU's and the platform's interrupt rates
//! and the CPU's hardirq share and moves the CPU's delay (`mod_ns`) up
//! (above a target) or down. `irq_moderation_do_start` adds `mod_ns` to the
//! CPU's sleep; once that reaches 10 µs it arms the CPU's moderation hrtimer
//! (the sleep, with 2 µs of slack), and while the timer is queued every IRQ
//! the CPU handles is disabled (lazily: `__disable_irq`) and put on its list.
//! An interrupt of a listed IRQ finds it moderated: `handle_edge_irq` marks
//! it pending and masks its MSI-X vector, so the device sets its pending
//! bit instead. The timer (`timer_callback`, hardirq) empties the list:
//! each IRQ is enabled again (`__enable_irq`: unmasked — the device sends a
//! pending message — and, if pending, resent by a self-IPI of its vector).
//!
//! blksim's assumptions: the knobs (the patch's suggested values, or as
//! `--set` writes them) were set long before the run, on a machine idle
//! until it starts: every CPU's delay has decayed to 0 and its last epoch
//! was long ago. A write during the run (`--at`) is answered as the series
//! does: each CPU's next epoch re-reads the knobs and starts its delay at the
//! largest. Hardirq time is accounted (CONFIG_IRQ_TIME_ACCOUNTING); hotplug is
//! not modelled with it.

use crate::error::Error;
use crate::hw::lapic::LOCAL_TIMER_VECTOR;
use crate::ids::{CpuId, IdVec, IrqId};
use crate::settings::GsimSettings;
use crate::system::{Event, Sim};

/// `MIN_SCALING_FACTOR`: the controller's step count is below it.
const MIN_SCALING_FACTOR: u32 = 8;

/// The sleep below which no timer is armed (`irq_moderation_do_start`).
const MIN_SLEEP_NS: u32 = 10_000;

/// The moderation timer's slack (`hrtimer_start_range_ns`): the clock event
/// is programmed for the latest end of the range.
const TIMER_SLACK_NS: u64 = 2_000;

/// One CPU's moderation state (`struct irq_mod_state`).
#[derive(Clone, Debug, Default)]
pub(crate) struct ModState {
    pub timer_queued: bool,
    /// The timer expired: the local timer interrupt runs its callback.
    pub expired: bool,
    pub intr_count: u32,
    pub sleep_ns: u32,
    /// The adaptive delay.
    pub mod_ns: u32,
    /// The current epoch's start; `None`: long before the run.
    pub epoch_start_ns: Option<u64>,
    pub update_ns: u32,
    /// The knobs' version this CPU last read (`irq_mod_info.seq`; 0: none yet).
    pub seq: u32,
    pub delay_ns: u32,
    pub epoch_ns: u32,
    pub last_total_intrs: u32,
    pub last_total_cpus: u32,
    pub last_irqtime: u64,
    /// The moderated IRQs, disabled until the timer fires.
    pub descs: Vec<IrqId>,
    pub global_intr_rate: u32,
    pub local_intr_rate: u32,
    pub timer_set: u64,
    pub enqueue: u64,
    pub stray_irq: u64,
    pub epochs: u64,
    pub global_irq_high: u64,
    pub local_irq_high: u64,
    pub hardirq_high: u64,
}

/// The series' knobs and its global counters (`struct irq_mod_info`).
#[derive(Clone, Debug)]
pub(crate) struct Info {
    pub knobs: GsimSettings,
    /// Bumped by each write (the series' seqlock): 1 for the knobs set before the run.
    pub seq: u32,
    pub total_intrs: u32,
    pub total_cpus: u32,
}

/// GSIM: the knobs and every CPU's state, and what the run saw.
#[derive(Clone)]
pub(crate) struct Gsim {
    pub info: Info,
    pub cpus: IdVec<CpuId, ModState>,
    /// Interrupts that came while their IRQ was moderated (held, resent by the timer).
    pub held: u64,
    /// MSI-X masks those interrupts wrote.
    pub masks: u64,
    /// Time moderated IRQs spent on a list, and held interrupts waited, ns.
    pub listed_ns: u64,
    pub held_ns: u64,
    pub longest_held_ns: u64,
    /// Timer callbacks run.
    pub timer_fires: u64,
}

/// Smoothed average between `old` and `cur` (`smooth_avg`).
fn smooth_avg(old: u32, cur: u32, steps: u32) -> u32 {
    const SMOOTH: u64 = 64;
    let steps = steps.min(SMOOTH as u32 - 1) as u64;
    (((SMOOTH - steps) * old as u64 + steps * cur as u64) / SMOOTH) as u32
}

impl ModState {
    /// `hardirq_high`: the CPU's hardirq time over the epoch against `percent`.
    fn hardirq_high(&mut self, irqtime_ns: u64, percent: u32) -> bool {
        let irqtime = irqtime_ns - self.last_irqtime;
        self.last_irqtime = irqtime_ns;
        let high = irqtime * 100 > self.epoch_ns as u64 * percent as u64;
        self.hardirq_high += high as u64;
        high
    }

    /// `irqrate_high`: this CPU's rate times the CPUs handling interrupts
    /// (scaled) and the platform's rate, both against `target`.
    fn irqrate_high(&mut self, info: &mut Info, target: u32, steps: u32) -> bool {
        let epoch = self.epoch_ns as u64;
        let local = (self.intr_count as u64 * 1_000_000_000 / epoch) as u32;
        info.total_intrs = info.total_intrs.wrapping_add(self.intr_count);
        self.intr_count = 1;
        let delta = info.total_intrs.wrapping_sub(self.last_total_intrs);
        self.last_total_intrs = info.total_intrs;
        let global = (delta as u64 * 1_000_000_000 / epoch) as u32;
        // Each CPU handling interrupts adds one per epoch: scaled to update_ns.
        info.total_cpus = info.total_cpus.wrapping_add(1);
        let mut active = info.total_cpus.wrapping_sub(self.last_total_cpus);
        self.last_total_cpus = info.total_cpus;
        active = ((active as u64 * self.update_ns as u64 + epoch / 2) / epoch) as u32;
        let active = active.max(1);
        let global_high = global > target;
        let local_high = local as u64 * active as u64 * info.knobs.scale_cpus as u64 > target as u64 * 100;
        self.global_intr_rate = smooth_avg(self.global_intr_rate, global, steps);
        self.local_intr_rate = smooth_avg(self.local_intr_rate, local, steps);
        self.local_irq_high += local_high as u64;
        self.global_irq_high += global_high as u64;
        global_high && local_high
    }

    /// `irq_moderation_update_epoch`: re-read the knobs after a write, then
    /// move `mod_ns` up by `steps / increase_factor` above a target, down by
    /// half that below (to 0 under 500 ns).
    fn update_epoch(&mut self, info: &mut Info, irqtime_ns: u64) {
        const MIN_DELAY_NS: u32 = 500;
        self.epochs += 1;
        if self.seq != info.seq {
            let written = self.seq != 0;
            self.seq = info.seq;
            self.update_ns = info.knobs.update_ms * 1_000_000;
            self.delay_ns = info.knobs.delay_us * 1000;
            if written {
                // After a write, the largest delay "to help converge" (the knobs set
                // before the run were read long ago; the delay has decayed since).
                self.mod_ns = self.delay_ns;
            }
        }
        let (target, percent) = (info.knobs.target_intr_rate, info.knobs.hardirq_percent);
        if target == 0 && percent == 0 {
            self.mod_ns = self.delay_ns;
            return;
        }
        let steps = (self.epoch_ns / self.update_ns).clamp(1, MIN_SCALING_FACTOR - 1);
        let mut above = false;
        if target > 0 && self.irqrate_high(info, target, steps) {
            above = true;
        }
        if percent > 0 && self.hardirq_high(irqtime_ns, percent) {
            above = true;
        }
        if above {
            self.mod_ns = self.mod_ns.max(MIN_DELAY_NS);
            self.mod_ns += (self.mod_ns as u64 * steps as u64 / info.knobs.increase_factor as u64) as u32;
            self.mod_ns = self.mod_ns.min(self.delay_ns);
        } else {
            self.mod_ns -= (self.mod_ns as u64 * steps as u64 / (2 * info.knobs.increase_factor) as u64) as u32;
            if self.mod_ns < MIN_DELAY_NS {
                self.mod_ns = 0;
            }
        }
    }

    /// `check_epoch`: an epoch ends about every `update_ns` (5 µs early is fine).
    fn check_epoch(&mut self, info: &mut Info, now: u64, irqtime_ns: u64) {
        const SLACK_NS: u64 = 5000;
        let epoch = match self.epoch_start_ns {
            Some(start) => now - start,
            None => u32::MAX as u64,
        };
        if self.seq != 0 && epoch < (self.update_ns as u64).saturating_sub(SLACK_NS) {
            return;
        }
        self.epoch_ns = epoch.min(u32::MAX as u64) as u32;
        self.epoch_start_ns = Some(now);
        self.update_epoch(info, irqtime_ns);
    }
}

impl Gsim {
    /// GSIM on `cpus` CPUs with `knobs`.
    pub(crate) fn new(knobs: &GsimSettings, cpus: usize) -> Gsim {
        let info = Info { knobs: knobs.clone(), seq: 1, total_intrs: 0, total_cpus: 0 };
        Gsim {
            info,
            cpus: (0..cpus).map(|_| ModState::default()).collect(),
            held: 0,
            masks: 0,
            listed_ns: 0,
            held_ns: 0,
            longest_held_ns: 0,
            timer_fires: 0,
        }
    }
}

impl Sim {
    /// `--patch gsim`: moderation on for every device IRQ but those written
    /// off (`/proc/irq/N/soft_moderation=0`; each must exist). The series
    /// takes edge, single-target IRQs whose chip masks (`set_mode`): every
    /// device MSI-X vector here is one.
    pub(crate) fn irq_moderation_modes(&mut self, settings: &crate::settings::Settings) -> Result<(), Error> {
        let Some(g) = settings.gsim.as_ref() else { return Ok(()) };
        for &number in &g.off {
            if self.irq_numbered(number).is_none() {
                return Err(Error::bad_input(format!("/proc/irq/{number}/soft_moderation: {}", self.no_irq(number))));
            }
        }
        for i in self.intr.irqs.iter_mut() {
            i.moderation = !g.off.contains(&i.number);
        }
        Ok(())
    }

    /// `echo VALUE > /proc/irq/soft_moderation/KNOB` during the run: the
    /// knobs' version moves on, and each CPU's next epoch re-reads them.
    pub(crate) fn gsim_write(&mut self, knob: &str, value: &str) -> Result<(), String> {
        let g = self.intr.gsim.as_deref_mut().ok_or("/proc/irq/soft_moderation exists only with --patch gsim")?;
        let path = format!("/proc/irq/soft_moderation/{knob}");
        g.info.knobs.write(&path, knob, value).map_err(|e| e.message)?;
        g.info.seq += 1;
        Ok(())
    }

    /// `echo 0|1 > /proc/irq/N/soft_moderation` during the run (a listed IRQ
    /// stays listed until its CPU's timer).
    pub(crate) fn gsim_irq_mode(&mut self, number: u32, on: bool) -> Result<(), String> {
        if self.intr.gsim.is_none() {
            return Err(format!("/proc/irq/{number}/soft_moderation exists only with --patch gsim"));
        }
        let irq = self.irq_numbered(number).ok_or_else(|| self.no_irq(number))?;
        self.intr.irqs[irq].moderation = on;
        Ok(())
    }

    /// `irq_start_moderation` after `irq`'s handler ran on `cpu`: count it,
    /// update the CPU's delay at an epoch's end, and moderate the IRQ while
    /// the CPU's timer runs (arming it once the sleep reaches 10 µs).
    /// Returns the hook's CPU cost (none without `--patch gsim`).
    #[inline(always)]
    pub(crate) fn gsim_after_handler(&mut self, cpu: CpuId, irq: IrqId) -> u64 {
        if self.intr.gsim.is_none() {
            return 0;
        }
        self.gsim_moderate(cpu, irq)
    }

    #[inline(never)]
    fn gsim_moderate(&mut self, cpu: CpuId, irq: IrqId) -> u64 {
        let Some(g) = self.intr.gsim.as_deref_mut() else { return 0 };
        let i = &mut self.intr.irqs[irq];
        if !i.moderation || g.info.knobs.delay_us == 0 {
            return 0;
        }
        let now = self.q.now_ns();
        let m = &mut g.cpus[cpu];
        m.intr_count += 1;
        if m.intr_count & 0xf == 0 {
            m.check_epoch(&mut g.info, now, self.cpus[cpu].time.hardirq_ns);
        }
        let mut cost = self.costs.gsim_hook_ns;
        if !m.timer_queued {
            m.sleep_ns = m.sleep_ns.saturating_add(m.mod_ns);
            if m.sleep_ns < MIN_SLEEP_NS {
                return cost;
            }
            m.timer_set += 1;
            m.timer_queued = true;
            cost += self.costs.hrtimer_start_ns;
            self.q.at(now + m.sleep_ns as u64 + TIMER_SLACK_NS, Event::ModerationTimer { cpu });
        }
        if i.moderated {
            m.stray_irq += 1;
        } else {
            m.enqueue += 1;
            m.descs.push(irq);
            i.moderated = true;
            i.moderated_since_ns = now;
        }
        cost
    }

    /// An interrupt of `irq` reached its handler while the IRQ is moderated
    /// (`handle_edge_irq`: IRQS_PENDING, `mask_ack_irq`): held for the
    /// timer's resend. Returns the mask's CPU cost (none if masked already).
    pub(crate) fn gsim_hold(&mut self, irq: IrqId) -> u64 {
        let now = self.q.now_ns();
        let g = self.intr.gsim.as_deref_mut().expect("a moderated IRQ has GSIM");
        let i = &mut self.intr.irqs[irq];
        if std::mem::replace(&mut i.held, true) {
            // Pending already: this message merges with the held one.
            self.intr.msi.merged += 1;
        } else {
            i.held_since_ns = now;
            g.held += 1;
        }
        if std::mem::replace(&mut i.masked, true) {
            return 0;
        }
        g.masks += 1;
        self.costs.msix_mask_ns
    }

    /// The moderation timer of `cpu` expired: its local timer interrupt runs the callback.
    pub(crate) fn gsim_timer_expired(&mut self, cpu: CpuId) {
        let g = self.intr.gsim.as_deref_mut().expect("a moderation timer has GSIM");
        g.cpus[cpu].expired = true;
        self.interrupt_arrived(cpu, LOCAL_TIMER_VECTOR);
    }

    /// The CPU cost of `cpu`'s moderation timer callback, if its timer expired:
    /// per listed IRQ, its lock and state, the unmask, the resend's self-IPI.
    pub(crate) fn gsim_callback_cost(&self, cpu: CpuId) -> u64 {
        let Some(g) = self.intr.gsim.as_deref() else { return 0 };
        let m = &g.cpus[cpu];
        if !m.expired {
            return 0;
        }
        let c = &self.costs;
        m.descs
            .iter()
            .map(|&irq| {
                let i = &self.intr.irqs[irq];
                c.irq_flow_ns + if i.masked { c.msix_unmask_ns } else { 0 } + if i.held { c.ipi_send_ns } else { 0 }
            })
            .sum()
    }

    /// `timer_callback` on `cpu` (in its local timer interrupt): every
    /// moderated IRQ enabled again — unmasked (a pending bit set meanwhile
    /// sends its message) and, if an interrupt was held, resent to its CPU.
    pub(crate) fn gsim_timer_callback(&mut self, cpu: CpuId) {
        let now = self.q.now_ns();
        let Some(g) = self.intr.gsim.as_deref_mut() else { return };
        let m = &mut g.cpus[cpu];
        if !std::mem::take(&mut m.expired) {
            return;
        }
        m.timer_queued = false;
        m.sleep_ns = 0;
        g.timer_fires += 1;
        let descs = std::mem::take(&mut m.descs);
        for &irq in &descs {
            let g = self.intr.gsim.as_deref_mut().unwrap();
            let i = &mut self.intr.irqs[irq];
            i.moderated = false;
            g.listed_ns += now - i.moderated_since_ns;
            let resend = std::mem::take(&mut i.held);
            if resend {
                let waited = now - i.held_since_ns;
                g.held_ns += waited;
                g.longest_held_ns = g.longest_held_ns.max(waited);
            }
            let unmask = std::mem::take(&mut i.masked);
            let (to_cpu, vector) = (i.cpu, i.vector);
            if unmask {
                self.msix_unmasked(irq);
            }
            if resend {
                // check_irq_resend -> irq_chip_retrigger_hierarchy -> apic_retrigger_irq:
                // the vector as an IPI to the IRQ's CPU (this one unless it moved).
                self.intr.msi.in_flight += 1;
                let at = if to_cpu == cpu { now } else { now + self.costs.ipi_latency_ns };
                self.q.at(at, Event::InterruptArrived { cpu: to_cpu, vector });
            }
        }
        // Nothing lists on this CPU during its timer interrupt: the list keeps its allocation.
        let mut descs = descs;
        descs.clear();
        self.intr.gsim.as_deref_mut().unwrap().cpus[cpu].descs = descs;
    }
}

impl Sim {
    /// GSIM's counters for the report, summed over the CPUs.
    pub(crate) fn gsim_stats(&self) -> Option<crate::stats::GsimStats> {
        let g = self.intr.gsim.as_deref()?;
        let sum = |f: fn(&ModState) -> u64| g.cpus.iter().map(f).sum::<u64>();
        let moderated = sum(|m| m.enqueue);
        let mean = |total: u64, n: u64| total.checked_div(n).unwrap_or(0);
        Some(crate::stats::GsimStats {
            moderated,
            stray: sum(|m| m.stray_irq),
            timers_set: sum(|m| m.timer_set),
            timer_fires: g.timer_fires,
            held: g.held,
            masks: g.masks,
            mean_held_ns: mean(g.held_ns, g.held),
            max_held_ns: g.longest_held_ns,
            mean_listed_ns: mean(g.listed_ns, moderated),
            epochs: sum(|m| m.epochs),
            global_irq_high: sum(|m| m.global_irq_high),
            local_irq_high: sum(|m| m.local_irq_high),
            hardirq_high: sum(|m| m.hardirq_high),
            delay_ns: g
                .cpus
                .iter()
                .enumerate()
                .filter(|(_, m)| m.epochs > 0)
                .map(|(c, m)| (c as u32, m.mod_ns as u64))
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(target: u32, percent: u32) -> Info {
        let knobs = GsimSettings { target_intr_rate: target, hardirq_percent: percent, ..GsimSettings::suggested() };
        Info { knobs, seq: 1, total_intrs: 0, total_cpus: 0 }
    }

    /// A CPU that has run its first epoch (long after the knobs were set) at 10 s.
    fn started(target: u32, percent: u32) -> (Info, ModState, u64) {
        let (mut info, mut m, mut now) = (info(target, percent), ModState::default(), 10_000_000_000);
        epoch(&mut m, &mut info, &mut now, 16, 0, 0);
        (info, m, now)
    }

    /// One epoch of `update_ms` with `intrs` interrupts on this CPU and
    /// `others` on three other CPUs (none when `others` is 0).
    fn epoch(m: &mut ModState, info: &mut Info, now: &mut u64, intrs: u32, others: u32, irqtime: u64) {
        *now += info.knobs.update_ms as u64 * 1_000_000;
        info.total_intrs += others;
        if others > 0 {
            info.total_cpus += 3;
        }
        m.intr_count += intrs;
        m.check_epoch(info, *now, irqtime);
    }

    #[test]
    fn the_delay_grows_while_both_rates_are_high_and_decays_after() {
        let (mut info, mut m, mut now) = started(1_000_000, 0);
        assert_eq!(m.mod_ns, 0, "set before the run: an idle CPU starts at 0");
        // 2 M/s platform-wide on four CPUs, this CPU 0.5 M/s of it (5 ms epochs): above target.
        let mut last = 0;
        for _ in 0..60 {
            epoch(&mut m, &mut info, &mut now, 2_500, 7_500, 0);
            assert!(m.mod_ns >= last);
            last = m.mod_ns;
        }
        assert_eq!(m.mod_ns, 100_000, "capped at delay_us");
        // 1/8 up per epoch from 500 ns: 500 -> 562 (integer steps, as the kernel computes).
        let mut m2 = ModState::default();
        let mut info2 = info.clone();
        let mut now2 = now;
        epoch(&mut m2, &mut info2, &mut now2, 16, 0, 0);
        epoch(&mut m2, &mut info2, &mut now2, 2_500, 7_500, 0);
        assert_eq!(m2.mod_ns, 562);
        // Below target: down by 1/16 per epoch, to 0 under 500 ns.
        epoch(&mut m, &mut info, &mut now, 100, 100, 0);
        assert_eq!(m.mod_ns, 100_000 - 100_000 / 16);
        for _ in 0..100 {
            epoch(&mut m, &mut info, &mut now, 100, 100, 0);
        }
        assert_eq!(m.mod_ns, 0);
    }

    #[test]
    fn a_high_local_rate_alone_does_not_moderate() {
        // This CPU at 0.9 M/s, the platform at the same: under the 1 M/s target.
        let (mut info, mut m, mut now) = started(1_000_000, 0);
        for _ in 0..10 {
            epoch(&mut m, &mut info, &mut now, 4_500, 0, 0);
        }
        assert_eq!(m.mod_ns, 0);
        assert!(m.local_irq_high > 0 && m.global_irq_high == 0);
    }

    #[test]
    fn the_hardirq_share_moderates_on_its_own() {
        let (mut info, mut m, mut now) = started(0, 70);
        let mut irqtime = 0;
        // 80% of each 5 ms epoch in hardirq.
        for _ in 0..5 {
            irqtime += 4_000_000;
            epoch(&mut m, &mut info, &mut now, 10, 0, irqtime);
        }
        assert!(m.mod_ns > 500, "{}", m.mod_ns);
        assert_eq!(m.hardirq_high, 5);
    }

    #[test]
    fn fixed_mode_takes_the_delay_from_the_first_epoch() {
        let (mut info, mut m, mut now) = started(0, 0);
        assert_eq!(m.mod_ns, 100_000);
        epoch(&mut m, &mut info, &mut now, 1, 0, 0);
        assert_eq!(m.mod_ns, 100_000, "target 0 and hardirq 0: fixed delay");
    }

    #[test]
    fn a_write_during_the_run_starts_each_cpu_at_the_largest_delay() {
        let (mut info, mut m, mut now) = started(1_000_000, 0);
        assert_eq!(m.mod_ns, 0);
        info.knobs.delay_us = 40;
        info.seq += 1;
        // Under the target: the next epoch reads the write, starts at 40 us, and decays by 1/16.
        epoch(&mut m, &mut info, &mut now, 100, 100, 0);
        assert_eq!((m.delay_ns, m.mod_ns), (40_000, 40_000 - 40_000 / 16));
    }

    #[test]
    fn epochs_end_only_after_update_ms() {
        let mut info = info(1_000_000, 0);
        let mut m = ModState::default();
        m.check_epoch(&mut info, 1_000, 0);
        assert_eq!(m.epochs, 1);
        m.check_epoch(&mut info, 1_000 + 4_000_000, 0);
        assert_eq!(m.epochs, 1, "4 ms into a 5 ms epoch");
        m.check_epoch(&mut info, 1_000 + 4_996_000, 0);
        assert_eq!(m.epochs, 2, "5 us early is fine");
    }
}
