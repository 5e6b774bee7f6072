//! Interrupts: device IRQs and their vectors, MSI delivery through the root
//! port and interrupt remapping to the target CPU's local APIC, IPIs, and the
//! interrupt-context frames (hardirq handlers, BLOCK_SOFTIRQ).

pub mod migrate;
pub mod posted;

use crate::block::Placement;
use crate::machine::cpu::{
    Frame, FrameKind, Stage, CALL_FUNCTION_SINGLE_VECTOR, LOCAL_TIMER_VECTOR, POSTED_MSI_NOTIFICATION_VECTOR,
};
use crate::run::{Event, Sim};
use crate::stats::{TraceName, Track};

/// A device interrupt (one per interrupt-driven NVMe queue).
pub struct Irq {
    /// Linux IRQ number, as `/proc/interrupts` shows it.
    pub number: u32,
    pub dev: u16,
    pub queue: u16,
    /// Target CPU (effective affinity) and vector there.
    pub cpu: u32,
    pub vector: u8,
    /// Action name, e.g. `nvme0q1`.
    pub name: String,
    /// Handler invocations per CPU.
    pub count: Vec<u64>,
    /// Managed affinity (NVMe queues): user space cannot move it.
    pub managed: bool,
    /// The CPU running its handler (IRQD_IRQ_INPROGRESS), if any.
    pub running_on: Option<u32>,
    /// IRQS_PENDING: it fired elsewhere while in progress; the handler runs again.
    pub replay: bool,
}

/// A root port's upstream write path: posted writes leave in order; an MSI
/// holds the writes behind it until the IOMMU has taken it and the port has
/// finished it (`service_ns`).
#[derive(Clone, Debug, Default)]
pub struct RootPortState {
    pub socket: usize,
    /// CQE writes held behind the port's last MSI, in order.
    pub waiting: std::collections::VecDeque<(u16, u16, u32)>,
    /// A `RootPortFree` event is scheduled.
    pub wake_pending: bool,
    pub free_at_ns: u64,
    pub service_ns: u64,
    pub busy_ns: u64,
    pub msis: u64,
}

/// A socket's interrupt-remapping unit: one interrupt message at a time.
#[derive(Clone, Debug, Default)]
pub struct IommuState {
    pub messages: u64,
    pub free_at_ns: u64,
    pub remap_ns: u64,
    pub post_ns: u64,
    pub busy_ns: u64,
}

/// First vector handed to device IRQs on each CPU.
pub const FIRST_DEVICE_VECTOR: u8 = 0x21;
/// Last device vector (0xea: 0xeb and up are system vectors).
pub const LAST_DEVICE_VECTOR: u8 = 0xea;

/// `MAX_SOFTIRQ_RESTART`: passes of `__do_softirq` before deferring to ksoftirqd.
pub const MAX_SOFTIRQ_RESTART: u8 = 10;
/// `MAX_SOFTIRQ_TIME`: 2 ms.
pub const MAX_SOFTIRQ_TIME_NS: u64 = 2_000_000;

/// MSI counters for the exactly-once invariant.
#[derive(Clone, Debug, Default)]
pub struct MsiCounters {
    /// Messages the devices sent.
    pub sent: u64,
    /// Messages that found their vector already pending in IRR and merged.
    pub merged: u64,
    /// Messages that set IRR and were later delivered to a handler.
    pub delivered: u64,
    /// Messages on their way (taken by the IOMMU, not yet at the LAPIC or PIR).
    pub in_flight: u64,
}

impl Sim {
    /// A device raises the MSI of `irq`: the root port serves it in order, then
    /// interrupt remapping sends the vector to its CPU.
    #[inline(always)]
    pub fn msi_send(&mut self, irq: u32) {
        if self.posting {
            return self.msi_post(irq);
        }
        let (cpu, vector, dev) = {
            let i = &self.irqs[irq as usize];
            (i.cpu, i.vector, i.dev)
        };
        let port = self.devs[dev as usize].root_port;
        let remap_ns = self.iommus[self.root_ports[port].socket].remap_ns;
        let taken = self.interrupt_write(port, remap_ns);
        self.msi.sent += 1;
        self.msi.in_flight += 1;
        self.cpus[cpu as usize].device_msis += 1;
        self.q.at(taken + self.costs.msi_latency_ns, Event::InterruptArrived { cpu, vector });
    }

    /// An MSI write reaches root port `port` behind the port's earlier
    /// writes; the socket's IOMMU takes one message at a time (`iommu_ns`),
    /// then the port finishes the message (`service_ns`) before letting the
    /// writes behind it go. Returns when the port is done with it.
    pub fn interrupt_write(&mut self, port: usize, iommu_ns: u64) -> u64 {
        let now = self.q.now_ns();
        let rp = &mut self.root_ports[port];
        let io = &mut self.iommus[rp.socket];
        let taken = now.max(rp.free_at_ns).max(io.free_at_ns) + iommu_ns;
        io.free_at_ns = taken;
        io.busy_ns += iommu_ns;
        io.messages += 1;
        let done = taken + rp.service_ns;
        rp.busy_ns += done - now.max(rp.free_at_ns);
        rp.free_at_ns = done;
        rp.msis += 1;
        done
    }

    /// An interrupt message reaches a CPU's local APIC.
    #[inline(always)]
    pub fn interrupt_arrived(&mut self, cpu: u32, vector: u8) {
        if self.offline[cpu as usize] && vector < POSTED_MSI_NOTIFICATION_VECTOR {
            return self.retrigger_from_offline(cpu, vector);
        }
        if let Some(t) = self.trace.as_mut() {
            let name = if vector == POSTED_MSI_NOTIFICATION_VECTOR {
                TraceName::NotificationSent
            } else {
                TraceName::MsiArrived
            };
            if vector < CALL_FUNCTION_SINGLE_VECTOR && vector != LOCAL_TIMER_VECTOR {
                t.instant(cpu, Track::Hardirq, name, self.q.now_ns());
            }
        }
        let c = &mut self.cpus[cpu as usize];
        if c.irr_set(vector) {
            if vector < POSTED_MSI_NOTIFICATION_VECTOR {
                self.msi.merged += 1;
            }
            return;
        }
        if c.irqs_enabled() {
            self.cpu_kick(cpu);
        }
    }

    /// A device vector reached (or was posted to) an offline CPU: it goes to
    /// the IRQ's current target as its real vector (`irq_retrigger`).
    pub fn retrigger_from_offline(&mut self, cpu: u32, vector: u8) {
        let irq = self.vector_irq[cpu as usize * 256 + vector as usize];
        assert!(irq != u32::MAX, "vector {vector:#x} on offline CPU {cpu} has no IRQ");
        let (to_cpu, to_vector) = (self.irqs[irq as usize].cpu, self.irqs[irq as usize].vector);
        self.retriggered += 1;
        self.interrupt_arrived(to_cpu, to_vector);
    }

    /// Send a CALL_FUNCTION_SINGLE IPI to `target` (remote completion).
    pub fn ipi_send(&mut self, target: u32) {
        self.cpus[target as usize].ipis += 1;
        self.q.after(
            self.costs.ipi_latency_ns,
            Event::InterruptArrived { cpu: target, vector: CALL_FUNCTION_SINGLE_VECTOR },
        );
    }

    /// The CPU takes `vector` (IRR -> handler): push its frame. Caller has charged the CPU.
    pub fn interrupt_enter(&mut self, cpu: u32, vector: u8) {
        let kind = if vector == CALL_FUNCTION_SINGLE_VECTOR {
            self.cpus[cpu as usize].cal_count += 1;
            FrameKind::CallFunctionIpi
        } else if vector == LOCAL_TIMER_VECTOR {
            self.cpus[cpu as usize].loc_count += 1;
            FrameKind::LocalTimer
        } else if vector == POSTED_MSI_NOTIFICATION_VECTOR {
            self.cpus[cpu as usize].pmn += 1;
            FrameKind::PostedNotification
        } else {
            let irq = self.vector_irq[cpu as usize * 256 + vector as usize];
            assert!(irq != u32::MAX, "vector {vector:#x} on CPU {cpu} has no IRQ");
            self.msi.delivered += 1;
            match self.irqs[irq as usize].running_on {
                // handle_edge_irq: in progress on another CPU (a move raced with it):
                // mark it pending and leave; the running handler goes round again.
                Some(other) if other != cpu => {
                    self.irqs[irq as usize].replay = true;
                    FrameKind::DeviceIrqBusy
                }
                _ => {
                    self.irqs[irq as usize].count[cpu as usize] += 1;
                    self.irqs[irq as usize].running_on = Some(cpu);
                    FrameKind::DeviceIrq { irq }
                }
            }
        };
        self.frame_push(cpu, kind);
    }

    fn frame_push(&mut self, cpu: u32, kind: FrameKind) {
        let mut frame = Frame::new(kind, self.q.now_ns());
        self.frame_begin(cpu, &mut frame);
        self.cpus[cpu as usize].frames.push(frame);
    }

    /// ksoftirqd gets the CPU: run the pending BLOCK_SOFTIRQ work in its thread.
    pub fn ksoftirqd_run(&mut self, cpu: u32) {
        self.frame_push(cpu, FrameKind::Ksoftirqd);
    }

    /// An hrtimer for `req` expired on `cpu` (null_blk irqmode=2).
    pub fn hrtimer_expired(&mut self, cpu: u32, req: u32) {
        self.cpus[cpu as usize].timer_expired.push_back(req);
        self.interrupt_arrived(cpu, LOCAL_TIMER_VECTOR);
    }

    /// The step of a device IRQ's handler (already off the stack) ended:
    /// the CQEs it handled complete; it exits, or drains again if more came.
    #[inline(always)]
    fn device_irq_step_done(&mut self, cpu: u32, irq: u32, stage: Stage, items: u32, foreseen_ns: u64, since_ns: u64) {
        let (dev, queue) = (self.irqs[irq as usize].dev, self.irqs[irq as usize].queue);
        let first = stage == Stage::Entry;
        let actual = self.nvme_drain(cpu, dev, queue, items);
        // Work the drain caused that was not foreseen is charged in one more pass.
        let debt = actual.saturating_sub(foreseen_ns.min(actual));
        let replay = std::mem::take(&mut self.irqs[irq as usize].replay);
        // nvme_irq drains until no new CQE turns up; idxd's handler goes
        // over its completion list once (later completions raise new MSIs).
        let d = &self.devs[dev as usize];
        let more = replay || (d.dsa.is_none() && !d.queues[queue as usize].cq.is_empty());
        if !more && debt == 0 {
            self.irqs[irq as usize].running_on = None;
            return self.irq_exit(cpu);
        }
        // Another pass of the same handler (a device frame carries nothing else).
        let mut f = Frame::new(FrameKind::DeviceIrq { irq }, since_ns);
        f.stage = Stage::Work;
        f.debt_ns = debt + if first && items == 0 && more { self.costs.cq_doorbell_ns } else { 0 };
        self.frame_begin(cpu, &mut f);
        self.cpus[cpu as usize].frames.push(f);
    }

    /// Set the cost of a frame's current stage.
    #[inline(always)]
    fn frame_begin(&mut self, cpu: u32, f: &mut Frame) {
        let c = &self.costs;
        let cost = match (f.kind, f.stage) {
            (FrameKind::DeviceIrq { irq }, _) => {
                // Entry, EOI (at ack, before the handler), the drain, the CQ
                // doorbell and the exit in one step; later passes drain only.
                let (dev, queue) = (self.irqs[irq as usize].dev, self.irqs[irq as usize].queue);
                let n = self.devs[dev as usize].queues[queue as usize].cq.len() as u32;
                f.items = n;
                let entry_exit = if f.stage == Stage::Entry {
                    c.irq_entry_ns + c.apic_eoi_ns + c.irq_exit_ns + if n > 0 { c.cq_doorbell_ns } else { 0 }
                } else {
                    0
                };
                let (drain, follow) = self.drain_cost(cpu, dev, queue, n);
                f.foreseen_ns = follow;
                entry_exit + drain
            }
            (FrameKind::CallFunctionIpi | FrameKind::DeviceIrqBusy, _) => {
                c.irq_entry_ns + c.apic_eoi_ns + c.irq_exit_ns
            }
            (FrameKind::Softirq { .. } | FrameKind::Ksoftirqd, _) => {
                let list = &self.cpus[cpu as usize].done_list;
                f.items = list.len() as u32;
                let entry = match (f.kind, f.stage) {
                    (FrameKind::Ksoftirqd, Stage::Entry) => c.context_switch_ns + c.softirq_entry_ns,
                    (_, Stage::Entry) => c.softirq_entry_ns,
                    _ => 0,
                };
                entry + list.iter().map(|&r| c.blk_complete_ns + self.engine_complete_cost(r)).sum::<u64>()
            }
            (FrameKind::PostedNotification, _) => self.posted_begin(cpu, f),
            (FrameKind::LocalTimer, _) => {
                let list = &self.cpus[cpu as usize].timer_expired;
                f.items = list.len() as u32;
                let entry = if f.stage == Stage::Entry { c.irq_entry_ns + c.apic_eoi_ns + c.irq_exit_ns } else { 0 };
                entry + list.iter().map(|&r| c.blk_complete_ns + self.engine_complete_cost(r)).sum::<u64>()
            }
        };
        f.remaining_ns = cost + std::mem::take(&mut f.debt_ns);
    }

    /// CPU cost of draining the first `n` CQEs of a queue on `cpu`,
    /// including the follow-on work the drain will cause (IPIs to
    /// submitters, wake-ups of waiting tasks), foreseen from the state now.
    /// Returns (total cost, the follow-on part of it).
    #[inline(always)]
    pub fn drain_cost(&mut self, cpu: u32, dev: u16, queue: u16, n: u32) -> (u64, u64) {
        let c = &self.costs;
        let mut seen = std::mem::take(&mut self.scratch);
        seen.clear();
        let (mut cost, mut follow) = (0, 0);
        if self.devs[dev as usize].dsa.is_some() {
            // Completion record check and callback, which submits the next descriptor.
            self.scratch = seen;
            return (n as u64 * (c.dsa_complete_ns + c.dsa_submit_ns), 0);
        }
        for &req in self.devs[dev as usize].queues[queue as usize].cq.iter().take(n as usize) {
            cost += c.nvme_cqe_ns;
            match self.placement(cpu, req) {
                Placement::Batched | Placement::Inline => {
                    cost += c.blk_complete_batch_ns + self.engine_complete_cost(req);
                    follow += self.foreseen_wake_ns(cpu, req, &mut seen);
                }
                Placement::Remote => {
                    let target = self.reqs.reqs[req as usize].submit_cpu;
                    let key = (u32::MAX, target);
                    cost += c.llist_add_ns;
                    if self.cpus[target as usize].done_list.is_empty() && !seen.contains(&key) {
                        seen.push(key);
                        follow += c.ipi_send_ns;
                    }
                }
                Placement::LocalSoftirq => cost += c.llist_add_ns,
            }
        }
        self.scratch = seen;
        (cost + follow, follow)
    }

    /// The waker's cost if completing `req` here wakes its task (the first
    /// completion that meets what the sleeping task waits for).
    fn foreseen_wake_ns(&self, cpu: u32, req: u32, seen: &mut Vec<(u32, u32)>) -> u64 {
        let r = &self.reqs.reqs[req as usize];
        let job = &self.jobs[r.job as usize];
        if job.state != crate::ioengine::JobState::Sleeping || job.tag_blocked || r.polled {
            return 0;
        }
        let i = match seen.iter().position(|&(j, _)| j == r.job) {
            Some(i) => i,
            None => {
                let have = if job.is_uring() { job.tw_pending.len() } else { job.ready.len() } as u32;
                seen.push((r.job, have));
                seen.len() - 1
            }
        };
        seen[i].1 += 1;
        if seen[i].1 == job.wait_for {
            let target = job.cpu;
            self.costs.wakeup_ns
                + if target != cpu && !self.cpus[target as usize].busy() { self.costs.ipi_send_ns } else { 0 }
        } else {
            0
        }
    }

    /// The step of the frame on top of `cpu` ended: apply its effects and move on.
    #[inline(always)]
    pub fn frame_step_done(&mut self, cpu: u32) {
        let frames = &mut self.cpus[cpu as usize].frames;
        if let Some(&Frame { kind: FrameKind::DeviceIrq { irq }, stage, items, foreseen_ns, since_ns, .. }) = frames.last() {
            // The common case, without copying the whole frame off the stack.
            frames.pop();
            return self.device_irq_step_done(cpu, irq, stage, items, foreseen_ns, since_ns);
        }
        let mut f = frames.pop().expect("frame");
        let debt;
        match f.kind {
            FrameKind::DeviceIrq { .. } => unreachable!("handled above"),
            FrameKind::DeviceIrqBusy => return self.irq_exit(cpu),
            FrameKind::CallFunctionIpi => {
                if !self.cpus[cpu as usize].done_list.is_empty() {
                    self.cpus[cpu as usize].softirq_pending = true;
                }
                return self.irq_exit(cpu);
            }
            FrameKind::Softirq { .. } | FrameKind::Ksoftirqd => {
                debt = self.block_softirq(cpu, f.items);
                let now = self.q.now_ns();
                let c = &mut self.cpus[cpu as usize];
                let pending = !c.done_list.is_empty();
                c.softirq_pending = false;
                if !pending && debt == 0 {
                    return;
                }
                if let FrameKind::Softirq { restarts } = f.kind {
                    // __do_softirq restarts while work is pending, up to
                    // MAX_SOFTIRQ_RESTART passes or MAX_SOFTIRQ_TIME; then ksoftirqd.
                    if pending && (restarts + 1 >= MAX_SOFTIRQ_RESTART || now - f.since_ns >= MAX_SOFTIRQ_TIME_NS) {
                        c.ksoftirqd_pending = true;
                        if debt == 0 {
                            return;
                        }
                        f.items = 0;
                    }
                    f.kind = FrameKind::Softirq { restarts: restarts + 1 };
                }
                f.stage = Stage::Work;
                f.debt_ns = debt;
            }
            FrameKind::PostedNotification => {
                if !self.posted_step_done(cpu, &mut f) {
                    return self.irq_exit(cpu);
                }
            }
            FrameKind::LocalTimer => {
                let mut d = 0;
                for _ in 0..f.items {
                    let req = self.cpus[cpu as usize].timer_expired.pop_front().unwrap();
                    d += self.end_request(cpu, req);
                }
                debt = d;
                if debt == 0 && self.cpus[cpu as usize].timer_expired.is_empty() {
                    return self.irq_exit(cpu);
                }
                f.stage = Stage::Work;
                f.debt_ns = debt;
            }
        }
        self.frame_begin(cpu, &mut f);
        self.cpus[cpu as usize].frames.push(f);
    }

    /// irq_exit: run pending softirqs unless nested in another interrupt context.
    fn irq_exit(&mut self, cpu: u32) {
        let c = &mut self.cpus[cpu as usize];
        if c.softirq_pending && c.frames.is_empty() {
            c.softirq_pending = false;
            self.frame_push(cpu, FrameKind::Softirq { restarts: 0 });
        }
    }
}
