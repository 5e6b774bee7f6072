//! Kernel path: CPU hotplug (`echo 0|1 > /sys/devices/system/cpu/cpuN/online`).
//! Going down, in the kernel's teardown order: `sched_cpu_deactivate`
//! (the CPU leaves `cpu_active_mask`; runnable tasks move now, the running
//! one at the end of its current step, as `balance_push` does, each to the
//! CPU `select_fallback_rq` picks) → `blk_mq_hctx_notify_offline` (every
//! hardware queue none of whose CPUs is active is marked inactive and
//! drained: the wait polls every 5 ms until it has no request, its IRQ
//! still firing on the dying CPU) → `take_cpu_down` once nothing runs there
//! → `fixup_irqs` (`migrate.rs`: IRQs move; a managed IRQ whose mask has no
//! online CPU left is shut down). Coming up: the CPU is online and active
//! again, its queues active, and managed IRQs shut down for want of it
//! start again on it (a message the device raised while masked is sent
//! then). Operations are serialised: a write waits for the one before it.

use crate::error::Error;
use crate::ids::{CpuId, DevId, HctxId};
use crate::sched::cpumask::HotplugOp;
use crate::system::{Event, Sim};

/// `blk_mq_hctx_notify_offline`'s wait between checks of a draining queue.
pub(crate) const HCTX_DRAIN_POLL_NS: u64 = 5_000_000;
/// How soon the take-down looks again at a CPU still running something.
pub(crate) const TAKEDOWN_RETRY_NS: u64 = 1_000;
/// Drain polls (over all take-downs of a run) after which a queue that
/// does not drain is reported as a stall: 100 s of virtual time.
pub(crate) const DRAIN_WAITS_MAX: u64 = 20_000;

impl Sim {
    /// A write to a CPU's `online` file: done now, or after the hotplug
    /// operation in progress.
    pub(crate) fn hotplug_write(&mut self, op: HotplugOp) -> Result<(), String> {
        let cpu = match op {
            HotplugOp::Down(c) | HotplugOp::Up(c) => c,
        };
        if cpu.idx() >= self.cpus.len() {
            return Err(format!("CPU {cpu} does not exist (machine has {} CPUs)", self.cpus.len()));
        }
        if self.cpus.mask.going_down.is_some() {
            self.cpus.mask.waiting.push_back(op);
            return Ok(());
        }
        self.hotplug_start(op)
    }

    fn hotplug_start(&mut self, op: HotplugOp) -> Result<(), String> {
        match op {
            HotplugOp::Down(cpu) => self.cpu_down_begin(cpu),
            HotplugOp::Up(cpu) => {
                self.cpu_up(cpu);
                Ok(())
            }
        }
    }

    /// The operation in progress ended: the writes waiting for it run.
    fn hotplug_next(&mut self) -> Result<(), String> {
        while self.cpus.mask.going_down.is_none() {
            let Some(op) = self.cpus.mask.waiting.pop_front() else { break };
            self.hotplug_start(op)?;
        }
        Ok(())
    }

    /// Take-down, first half: deactivate, move the runnable tasks, stop and
    /// drain the queues only this CPU served.
    fn cpu_down_begin(&mut self, cpu: CpuId) -> Result<(), String> {
        if !self.cpus.mask.online[cpu] {
            // Writing 0 to an offline CPU's file changes nothing.
            return Ok(());
        }
        if self.cpus.mask.nr_active() <= 1 {
            return Err(format!("cannot offline CPU {cpu}: it is the last online CPU"));
        }
        self.cpus.mask.active[cpu] = false;
        self.cpus.mask.going_down = Some(cpu);
        let runnable = std::mem::take(&mut self.cpus[cpu].runqueue);
        for j in runnable {
            self.task_migrate(j, cpu, true);
        }
        self.hctxs_update_active();
        self.cpu_down_step(cpu);
        Ok(())
    }

    /// Take-down, second half: once the inactive queues are drained and
    /// nothing runs on the CPU, it goes offline and its IRQs move or shut
    /// down. Until then it looks again later.
    pub(crate) fn cpu_down_step(&mut self, cpu: CpuId) {
        if self.inactive_hctxs_busy() {
            self.cpus.mask.stats.drain_waits += 1;
            if self.cpus.mask.stats.drain_waits > DRAIN_WAITS_MAX {
                // The kernel would wait for ever; the model reports the stall.
                self.run.fail(Error::internal(format!(
                    "CPU {cpu} going offline: its hardware queues have not drained in {} s of polling",
                    DRAIN_WAITS_MAX * HCTX_DRAIN_POLL_NS / 1_000_000_000
                )));
                return;
            }
            return self.q.after(HCTX_DRAIN_POLL_NS, Event::HotplugStep { cpu });
        }
        let c = &self.cpus[cpu];
        let busy = !c.frames.is_empty() || c.current.is_some() || !c.runqueue.is_empty();
        let work_left = !c.done_list.is_empty()
            || !c.timer_expired.is_empty()
            || !c.timer_wake.is_empty()
            || c.softirq_pending
            || c.ksoftirqd_pending;
        if busy || work_left {
            return self.q.after(TAKEDOWN_RETRY_NS, Event::HotplugStep { cpu });
        }
        self.cpus.mask.online[cpu] = false;
        self.fixup_irqs(cpu);
        self.cpus.mask.stats.cpus_down += 1;
        self.cpus.mask.going_down = None;
        if let Err(e) = self.hotplug_next() {
            self.run.fail(Error::bad_input(e));
        }
    }

    /// Bring `cpu` up: online and active, its queues active, managed IRQs
    /// waiting for it started.
    fn cpu_up(&mut self, cpu: CpuId) {
        if self.cpus.mask.online[cpu] {
            return;
        }
        self.cpus.mask.online[cpu] = true;
        self.cpus.mask.active[cpu] = true;
        self.cpus.mask.stats.cpus_up += 1;
        self.hctxs_update_active();
        self.irqs_startup_on(cpu);
    }

    /// Is a CPU mapped to queue `hctx` of `dev` (by its map: default, read or poll) active?
    fn hctx_has_active_cpu(&self, dev: DevId, hctx: HctxId) -> bool {
        let d = &self.devs[dev];
        let (map, h) = d.map_of(hctx);
        map.cpu_to_hctx.iter().enumerate().any(|(c, &q)| q == h && self.cpus.mask.active[CpuId::of(c)])
    }

    /// Mark each hardware queue inactive when none of its CPUs is active
    /// (`BLK_MQ_S_INACTIVE`), active again when one is.
    fn hctxs_update_active(&mut self) {
        for d in (0..self.devs.len()).map(DevId::of) {
            for h in (0..self.devs[d].queues.len()).map(|h| HctxId(h as u16)) {
                let active = self.hctx_has_active_cpu(d, h);
                self.devs[d].queues[h].inactive = !active;
            }
        }
    }

    /// Does an inactive queue still hold a request (with a tag or waiting for one)?
    fn inactive_hctxs_busy(&self) -> bool {
        self.devs.iter().any(|d| d.queues.iter().any(|q| q.inactive && q.busy > 0))
    }
}
