//! Kernel path: interrupt handlers. `common_interrupt` /
//! `sysvec_*` entry → `handle_edge_irq` (or IRQS_PENDING when the handler
//! runs on another CPU) → the device's handler (`nvme_irq`, idxd's) → EOI →
//! `irq_exit` → `__do_softirq` (BLOCK_SOFTIRQ, restarted up to
//! MAX_SOFTIRQ_RESTART / MAX_SOFTIRQ_TIME, then ksoftirqd); the
//! CALL_FUNCTION_SINGLE and local timer vectors. Each handler is a frame on
//! its CPU whose steps cost time and whose effects happen at their ends.

use crate::hw::cpu::{wall_ns, Bill, Frame, FrameKind, Stage};
use crate::hw::lapic::{CALL_FUNCTION_SINGLE_VECTOR, LOCAL_TIMER_VECTOR, POSTED_MSI_NOTIFICATION_VECTOR};
use crate::ids::{CpuId, DevId, HctxId, IrqId};
use crate::stats::CpuStage;
use crate::system::Sim;

/// `MAX_SOFTIRQ_RESTART`: passes of `__do_softirq` before deferring to ksoftirqd.
pub(crate) const MAX_SOFTIRQ_RESTART: u8 = 10;

/// `MAX_SOFTIRQ_TIME`: 2 ms.
pub(crate) const MAX_SOFTIRQ_TIME_NS: u64 = 2_000_000;

/// What a device IRQ frame's ended step leaves for its next: read off the
/// frame stack without copying the whole frame.
#[derive(Clone, Copy)]
pub(crate) struct DeviceIrqStep {
    stage: Stage,
    items: u32,
    foreseen_ns: u64,
    since_ns: u64,
    found: bool,
}

impl Sim {
    /// The CPU takes `vector` (IRR -> handler): push its frame. Caller has charged the CPU.
    pub(crate) fn interrupt_enter(&mut self, cpu: CpuId, vector: u8) {
        let kind = if vector == CALL_FUNCTION_SINGLE_VECTOR {
            self.cpus[cpu].cal_count += 1;
            FrameKind::CallFunctionIpi
        } else if vector == LOCAL_TIMER_VECTOR {
            self.cpus[cpu].loc_count += 1;
            FrameKind::LocalTimer
        } else if vector == POSTED_MSI_NOTIFICATION_VECTOR {
            self.cpus[cpu].pmn += 1;
            FrameKind::PostedNotification
        } else {
            let irq = self
                .intr
                .vectors
                .get(cpu, vector)
                .unwrap_or_else(|| panic!("vector {vector:#x} on CPU {cpu} has no IRQ"));
            if self.intr.irqs[irq].moderated {
                // GSIM: handle_edge_irq finds it moderated: pending, masked, held for the timer.
                let mask = self.gsim_hold(irq);
                let mut frame = Frame::new(FrameKind::DeviceIrqBusy, self.q.now_ns());
                frame.carry_ns = mask;
                self.frame_begin(cpu, &mut frame);
                return self.cpus[cpu].frames.push(frame);
            }
            self.intr.msi.delivered += 1;
            match self.intr.irqs[irq].running_on {
                // handle_edge_irq: in progress on another CPU (a move raced with it):
                // mark it pending and leave; the running handler goes round again.
                Some(other) if other != cpu => {
                    self.intr.irqs[irq].replay = true;
                    FrameKind::DeviceIrqBusy
                }
                _ => {
                    self.intr.irqs[irq].counted(cpu);
                    self.intr.irqs[irq].running_on = Some(cpu);
                    FrameKind::DeviceIrq { irq }
                }
            }
        };
        self.frame_push(cpu, kind);
    }

    pub(crate) fn frame_push(&mut self, cpu: CpuId, kind: FrameKind) {
        let mut frame = Frame::new(kind, self.q.now_ns());
        self.frame_begin(cpu, &mut frame);
        self.cpus[cpu].frames.push(frame);
    }

    /// Set the cost of a frame's current stage.
    #[inline(always)]
    pub(crate) fn frame_begin(&mut self, cpu: CpuId, f: &mut Frame) {
        let c = &self.costs;
        let mut bill = Bill::default();
        // A driver handler's drain in this step: its CQ head doorbell falls
        // this long before the step's end.
        let mut doorbell: Option<(DevId, HctxId, u64)> = None;
        let cost = match (f.kind, f.stage) {
            // After the drain: only what its completions caused is left to charge.
            (FrameKind::DeviceIrq { .. }, Stage::Exit) => {
                f.items = 0;
                f.foreseen_ns = 0;
                0
            }
            (FrameKind::DeviceIrq { irq }, _) => {
                // Entry, EOI (at ack, before the handler), the drain, the CQ
                // doorbell (once, with the first entries found) and the exit
                // in one step; later passes drain only.
                let (dev, queue) = (self.intr.irqs[irq].dev, self.intr.irqs[irq].queue);
                let n = self.devs[dev].queues[queue].cq.len() as u32;
                f.items = n;
                let entry_exit = if f.stage == Stage::Entry {
                    c.irq_entry_ns + c.irq_flow_ns + c.apic_eoi_ns + c.irq_exit_ns
                } else {
                    0
                };
                let ring = if n > 0 && !f.found { c.cq_doorbell_ns } else { 0 };
                f.found |= n > 0;
                let drain = self.driver_irq_handler::<false>(cpu, dev, queue, n);
                f.foreseen_ns = drain.follow_ns;
                if n > 0 {
                    let exit = if f.stage == Stage::Entry { self.costs.irq_exit_ns } else { 0 };
                    doorbell = Some((dev, queue, drain.tail_ns + exit));
                }
                bill = drain.bill;
                bill.add(CpuStage::IrqEntryExit, entry_exit);
                bill.add(CpuStage::Doorbell, ring);
                entry_exit + ring + drain.cost_ns
            }
            (FrameKind::DeviceIrqBusy, _) => c.irq_entry_ns + c.irq_flow_ns + c.apic_eoi_ns + c.irq_exit_ns,
            (FrameKind::CallFunctionIpi, stage) => {
                // The IPI's function runs the queues of the requests handed over (queue_affinity).
                let issue = &self.cpus[cpu].issue_list;
                f.issues = issue.len() as u32;
                let issue: u64 = issue.iter().map(|&r| self.handed_over_issue_cost(r)).sum();
                bill.add(CpuStage::DriverSubmit, issue);
                issue + if stage == Stage::Entry { c.irq_entry_ns + c.apic_eoi_ns + c.irq_exit_ns } else { 0 }
            }
            (FrameKind::Softirq { .. } | FrameKind::Ksoftirqd, _) => {
                let list = &self.cpus[cpu].done_list;
                f.items = list.len() as u32;
                let entry = match (f.kind, f.stage) {
                    (FrameKind::Ksoftirqd, Stage::Entry) => c.context_switch_ns + c.softirq_entry_ns,
                    (_, Stage::Entry) => c.softirq_entry_ns,
                    _ => 0,
                };
                let engine: u64 = list.iter().map(|&r| self.engine_complete_cost(r)).sum();
                let driver: u64 = list.iter().map(|&r| self.driver_softirq_cost(cpu, r)).sum();
                let block = list.len() as u64 * c.blk_complete_ns;
                bill.add(CpuStage::Softirq, entry);
                bill.add(CpuStage::Block, block);
                bill.add(CpuStage::UringComplete, engine);
                bill.add(CpuStage::DriverComplete, driver);
                entry + block + engine + driver
            }
            (FrameKind::PostedNotification, _) => {
                // The demultiplexed vector's driver handler: the drain's bill; the rest is the notification's.
                let (cost, drain_bill) = self.posted_begin(cpu, f, &mut doorbell);
                bill = drain_bill;
                cost
            }
            // The kworker's first step: the context switch to it.
            (FrameKind::Kworker, _) => c.context_switch_ns,
            (FrameKind::LocalTimer, _) => {
                let list = &self.cpus[cpu].timer_expired;
                f.items = list.len() as u32;
                let entry = if f.stage == Stage::Entry { c.irq_entry_ns + c.apic_eoi_ns + c.irq_exit_ns } else { 0 };
                let engine: u64 = list.iter().map(|&r| self.engine_complete_cost(r)).sum();
                bill.add(CpuStage::Block, list.len() as u64 * c.blk_complete_ns);
                bill.add(CpuStage::UringComplete, engine);
                // GSIM's moderation timer (`--patch gsim`), if it expired: its callback.
                let gsim = bill.add(CpuStage::IrqEntryExit, self.gsim_callback_cost(cpu));
                entry + list.len() as u64 * c.blk_complete_ns + engine + gsim
            }
        };
        // A posted notification's harvests, done as its last step ended.
        let carry = std::mem::take(&mut f.carry_ns);
        let cost = cost + bill.add(CpuStage::IrqEntryExit, carry);
        // What the bill does not name is the frame's own (entry/exit, its softirq, its kworker).
        bill.add(CpuStage::Wakeup, f.debt_ns);
        let debt = std::mem::take(&mut f.debt_ns);
        let named = bill.total();
        bill.add(f.default_stage(), (cost + debt).saturating_sub(named));
        f.bill = bill;
        f.bill_total = cost + debt;
        f.remaining_ns = cost + debt;
        if let Some((dev, queue, tail)) = doorbell {
            let at = self.q.now_ns() + wall_ns(cost + debt - tail, self.cpus[cpu].slow_pm);
            self.driver_doorbell_due(dev, queue, at);
        }
    }

    /// The step of a device IRQ's handler (already off the stack) ended:
    /// the CQEs it handled complete (NVMe's CQ head doorbell went as its
    /// drain ended: `Drain::tail_ns`); it drains again if more came and the
    /// driver looks again (the adapter's handler), then charges what the
    /// completions caused, and exits.
    #[inline(always)]
    pub(crate) fn device_irq_step_done(&mut self, cpu: CpuId, irq: IrqId, step: DeviceIrqStep) {
        let (dev, queue) = (self.intr.irqs[irq].dev, self.intr.irqs[irq].queue);
        let draining = step.stage != Stage::Exit;
        let actual = if draining { self.driver_irq_handler::<true>(cpu, dev, queue, step.items).follow_ns } else { 0 };
        // Work the drain caused that was not foreseen is charged in one more pass.
        let debt = actual.saturating_sub(step.foreseen_ns.min(actual));
        let replay = std::mem::take(&mut self.intr.irqs[irq].replay);
        let d = &self.devs[dev];
        let rescan = draining && d.driver.irq_rescans() && !d.queues[queue].cq.is_empty();
        let mut hook = 0;
        let next = if replay || rescan {
            Stage::Work
        } else {
            if draining {
                // GSIM's hook after handle_irq_event (`--patch gsim`).
                hook = self.gsim_after_handler(cpu, irq);
            }
            if debt == 0 && hook == 0 {
                self.intr.irqs[irq].running_on = None;
                return self.irq_exit(cpu);
            }
            Stage::Exit
        };
        // Another pass of the same handler (a device frame carries nothing else).
        let mut f = Frame::new(FrameKind::DeviceIrq { irq }, step.since_ns);
        f.stage = next;
        // A pass after the doorbell (a replay) looks for entries anew.
        f.found = step.found && rescan;
        f.debt_ns = debt;
        f.carry_ns = hook;
        self.frame_begin(cpu, &mut f);
        self.cpus[cpu].frames.push(f);
    }

    /// The step of the frame on top of `cpu` ended: apply its effects and move on.
    #[inline(always)]
    pub(crate) fn frame_step_done(&mut self, cpu: CpuId) {
        let frames = &mut self.cpus[cpu].frames;
        if let Some(&Frame { kind: FrameKind::DeviceIrq { irq }, stage, items, foreseen_ns, since_ns, found, .. }) =
            frames.last()
        {
            // The common case, without copying the whole frame off the stack.
            frames.pop();
            let step = DeviceIrqStep { stage, items, foreseen_ns, since_ns, found };
            return self.device_irq_step_done(cpu, irq, step);
        }
        if frames.last().is_some_and(|f| f.kind == FrameKind::Kworker) {
            // The kworker keeps its frame from step to step.
            return self.kworker_step_done(cpu);
        }
        let mut f = frames.pop().expect("frame");
        let again = match f.kind {
            FrameKind::DeviceIrq { .. } | FrameKind::Kworker => unreachable!("handled above"),
            FrameKind::DeviceIrqBusy => false,
            FrameKind::CallFunctionIpi => {
                let mut debt = 0;
                for _ in 0..f.issues {
                    let req = self.cpus[cpu].issue_list.pop_front().expect("handed-over request");
                    let (dev, hctx) = (self.reqs.reqs[req].dev(), self.reqs.reqs[req].hctx);
                    debt += self.queue_rq(cpu, dev, hctx, req);
                }
                if !self.cpus[cpu].done_list.is_empty() {
                    self.cpus[cpu].softirq_pending = true;
                }
                // What the issues cost beyond queue_rq, and requests handed over meanwhile: one more pass.
                if debt > 0 || !self.cpus[cpu].issue_list.is_empty() {
                    f.stage = Stage::Work;
                    f.debt_ns = debt;
                    true
                } else {
                    false
                }
            }
            FrameKind::Softirq { .. } | FrameKind::Ksoftirqd => {
                if !self.softirq_step_done(cpu, &mut f) {
                    // A softirq frame leaves without irq_exit.
                    return;
                }
                true
            }
            FrameKind::PostedNotification => self.posted_step_done(cpu, &mut f),
            FrameKind::LocalTimer => self.local_timer_step_done(cpu, &mut f),
        };
        if !again {
            return self.irq_exit(cpu);
        }
        self.frame_begin(cpu, &mut f);
        self.cpus[cpu].frames.push(f);
    }

    /// BLOCK_SOFTIRQ (or ksoftirqd) ended a pass over its `blk_cpu_done`
    /// list. `__do_softirq` restarts while work is pending, up to
    /// MAX_SOFTIRQ_RESTART passes or MAX_SOFTIRQ_TIME, then leaves the rest
    /// to ksoftirqd. Returns whether the frame runs another step.
    fn softirq_step_done(&mut self, cpu: CpuId, f: &mut Frame) -> bool {
        let debt = self.block_softirq(cpu, f.items);
        let now = self.q.now_ns();
        let c = &mut self.cpus[cpu];
        let pending = !c.done_list.is_empty();
        c.softirq_pending = false;
        if !pending && debt == 0 {
            return false;
        }
        if let FrameKind::Softirq { restarts } = f.kind {
            if pending && (restarts + 1 >= MAX_SOFTIRQ_RESTART || now - f.since_ns >= MAX_SOFTIRQ_TIME_NS) {
                c.ksoftirqd_pending = true;
                self.resched_spinner(cpu);
                if debt == 0 {
                    return false;
                }
                f.items = 0;
            }
            f.kind = FrameKind::Softirq { restarts: restarts + 1 };
        }
        f.stage = Stage::Work;
        f.debt_ns = debt;
        true
    }

    /// The local timer interrupt ended the requests whose hrtimers expired;
    /// it runs again for those that expired meanwhile (or to charge what
    /// the completions caused). Returns whether the frame runs another step.
    fn local_timer_step_done(&mut self, cpu: CpuId, f: &mut Frame) -> bool {
        self.gsim_timer_callback(cpu);
        let mut debt = 0;
        for _ in 0..f.items {
            let req = self.cpus[cpu].timer_expired.pop_front().unwrap();
            debt += self.end_request(cpu, req);
        }
        // hrtimer_wakeup of sleeping tasks (fio's nanosleep): try_to_wake_up.
        if !self.cpus[cpu].timer_wake.is_empty() {
            for j in std::mem::take(&mut self.cpus[cpu].timer_wake) {
                debt += self.wake(cpu, j);
            }
        }
        if debt == 0 && self.cpus[cpu].timer_expired.is_empty() {
            return false;
        }
        f.stage = Stage::Work;
        f.debt_ns = debt;
        true
    }

    /// irq_exit: run pending softirqs unless nested in another interrupt
    /// context (a kworker below is task context).
    pub(crate) fn irq_exit(&mut self, cpu: CpuId) {
        let c = &mut self.cpus[cpu];
        if c.softirq_pending && c.frames.last().is_none_or(|f| f.kind == FrameKind::Kworker) {
            c.softirq_pending = false;
            self.frame_push(cpu, FrameKind::Softirq { restarts: 0 });
        }
    }

    /// ksoftirqd gets the CPU: run the pending BLOCK_SOFTIRQ work in its thread.
    pub(crate) fn ksoftirqd_run(&mut self, cpu: CpuId) {
        self.frame_push(cpu, FrameKind::Ksoftirqd);
    }
}
