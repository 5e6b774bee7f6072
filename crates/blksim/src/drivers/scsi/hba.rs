//! Kernel path: SCSI over Fibre Channel. `scsi_queue_rq` → `sd_init_command`
//! → the adapter's `queuecommand` (an IOCB on the port's request ring, the
//! ring's doorbell) → the port's firmware (one command at a time) → for a
//! write, the data over the port's FC link (for an UNMAP, its parameter
//! list: `sd_setup_unmap_cmnd`'s one block descriptor) → the target
//! controller (one command at a time for all its LUNs) → the disk
//! (`disk.rs`; a thin-provisioned LUN unmaps without media work) → for a read,
//! the data over the link → the status entry on the port's response queue,
//! through the root port → the port's interrupt → the adapter's interrupt
//! handler (`qla2x00_intr_handler`: every status entry there, then again
//! while more arrive) → `scsi_done` → `blk_mq_complete_request` (placed by
//! `rq_affinity`; one hardware queue, so BLOCK_SOFTIRQ) →
//! `scsi_softirq_done` → `scsi_io_completion` → the waiter woken.
//!
//! Where the stages run decides what moves between caches: the command's
//! lines from the CPU that issued it to the one that takes the interrupt and
//! the one that completes it, the submitter's side of the I/O (bio,
//! direct-I/O state) to the completing CPU and back to the woken task, a
//! remote wake-up's lines; each costs a line transfer at the CPUs' distance.

use crate::drivers::{Drain, Driver};
use crate::ids::{CpuId, DevId, HctxId, ReqId};
use crate::system::{Event, Sim};
use crate::workload::Direction;

/// `sd_setup_unmap_cmnd`'s UNMAP parameter list: its header and one block descriptor.
const UNMAP_PARAMETER_BYTES: u64 = 8 + 16;

impl Sim {
    // Projections to this driver's own state (the ops table dispatched here by kind).
    fn sd(&self, dev: DevId) -> &super::SdState {
        let Driver::ScsiDisk(sd) = &self.devs[dev].driver else {
            unreachable!("{} is not a SCSI disk", self.devs[dev].name)
        };
        sd
    }

    fn sd_mut(&mut self, dev: DevId) -> &mut super::SdState {
        let Driver::ScsiDisk(sd) = &mut self.devs[dev].driver else { unreachable!("a SCSI disk") };
        sd
    }

    fn scsi_host_mut(&mut self, host: DevId) -> &mut super::HostState {
        let Driver::ScsiHost(h) = &mut self.devs[host].driver else { unreachable!("a SCSI host adapter") };
        h
    }

    /// Is `cpu` on another NUMA node than the host adapter behind `dev`'s root port?
    fn off_node(&self, cpu: CpuId, dev: DevId) -> bool {
        let socket = self.machine.root_ports[self.devs[dev].root_port].socket;
        self.machine.topology.cpus[cpu.idx()].socket != socket
    }

    /// The adapter took `req` for disk `dev` from `cpu` (its doorbell
    /// rang): the command goes through the port's firmware, the target and
    /// the disk. Returns the issuing CPU's cost of reaching the command's
    /// lines (built on the submitter) and the adapter's ring from here.
    pub(crate) fn scsi_issue(&mut self, cpu: CpuId, dev: DevId, req: ReqId) -> u64 {
        let now = self.q.now_ns();
        let r = &mut self.reqs.reqs[req];
        r.t_dispatch_ns = now;
        r.cmd_cpu = cpu;
        let (dir, offset, bytes, submit) = (r.dir, r.dev_offset(), r.dev_bytes as u64, r.submit_cpu);
        let d = &mut self.devs[dev];
        d.account_start(now);
        if let Some(t) = self.trace.as_mut() {
            t.queue_depth(dev.0, now, d.disk.inflight);
        }
        let sd = self.sd(dev);
        let (host, port, target, controller_ns) = (sd.host, sd.port, sd.target, sd.controller_ns);
        let mut cost = sd.cmd_lines * self.line_ns(submit, cpu);
        if self.off_node(cpu, dev) {
            cost += sd.numa_remote_ns;
        }
        let h = self.scsi_host_mut(host);
        let (fw_ns, link) = (h.params.fw_cmd_ns, h.params.link_mb_per_s);
        let p = &mut h.ports[port.idx()];
        let mut t = now.max(p.fw_free_ns) + fw_ns;
        p.fw_free_ns = t;
        if dir != Direction::Read {
            // The data goes to the target before it can write it; an UNMAP's
            // parameter list (an 8-byte header, one 16-byte block descriptor).
            let out = if dir == Direction::Trim { UNMAP_PARAMETER_BYTES } else { bytes };
            t = t.max(p.link_free_ns) + (out * 1000).div_ceil(link);
            p.link_free_ns = t;
        }
        let tg = &mut h.targets[target];
        t = t.max(tg.free_ns) + controller_ns;
        tg.free_ns = t;
        let disk = &mut self.sd_mut(dev).disk;
        let ready = match dir {
            Direction::Read => disk.read(t, offset, bytes),
            Direction::Write => disk.write(t, offset, bytes),
            Direction::Trim => disk.unmapped(t, offset, bytes),
        };
        self.q.at(ready, Event::CqeSent { dev, req });
        cost
    }

    /// Disk `dev` has the status of `req` (a read's data ready): a read's
    /// data crosses the port's link (in the order the disks finish), then the
    /// status entry goes up to the adapter's response queue.
    pub(crate) fn scsi_status_sent(&mut self, dev: DevId, req: ReqId) {
        let now = self.q.now_ns();
        let (host, port) = (self.sd(dev).host, self.sd(dev).port);
        let r = &self.reqs.reqs[req];
        if r.dir == Direction::Read {
            let bytes = r.dev_bytes as u64;
            let h = self.scsi_host_mut(host);
            let link = h.params.link_mb_per_s;
            let p = &mut h.ports[port.idx()];
            let at = now.max(p.link_free_ns) + (bytes * 1000).div_ceil(link);
            p.link_free_ns = at;
            return self.q.at(at, Event::CqeAtPort { dev: host, hctx: port, req });
        }
        self.cqe_at_port(host, port, req);
    }

    /// The adapter's interrupt handler for port `port` of `host` over the
    /// first `n` status entries, foreseen (`RUN = false`) or run: a pass
    /// costs its register reads, each entry its handling and the command's
    /// lines coming from where it was issued, then it is completed where
    /// `rq_affinity` puts it.
    #[inline(always)]
    pub(crate) fn scsi_host_irq<const RUN: bool>(&mut self, cpu: CpuId, host: DevId, port: HctxId, n: u32) -> Drain {
        let irq_ns = self.scsi_host_mut(host).irq_ns;
        let cqe_ns = self.scsi_host_mut(host).cqe_ns;
        if RUN {
            for i in 0..n as usize {
                let req = self.devs[host].queues[port].cq[i];
                self.reqs.reqs[req].cmd_cpu = cpu;
            }
        }
        let mut d = self.drain_cq::<RUN, false>(cpu, host, port, 0, n, |s, req| {
            let r = &s.reqs.reqs[req];
            cqe_ns + s.sd(r.dev()).cmd_lines * s.line_ns(r.cmd_cpu, cpu)
        });
        if !RUN {
            d.cost_ns += d.bill.add(crate::stats::CpuStage::DriverComplete, irq_ns);
        }
        d
    }

    /// The SCSI part of ending `req` in BLOCK_SOFTIRQ on `cpu`:
    /// `scsi_io_completion`, the command's lines from the interrupted CPU,
    /// the submitter's side of the I/O, and a remote wake-up's lines.
    pub(crate) fn scsi_complete_cost(&self, cpu: CpuId, req: ReqId) -> u64 {
        let r = &self.reqs.reqs[req];
        let sd = self.sd(r.dev());
        let task = self.jobs[r.job()].task.cpu;
        let wake = if task == cpu { 0 } else { sd.wake_lines * self.line_ns(cpu, task) };
        sd.complete_ns
            + sd.cmd_lines * self.line_ns(r.cmd_cpu, cpu)
            + sd.bio_lines * self.line_ns(r.submit_cpu, cpu)
            + wake
    }

    /// `req` of a SCSI disk ended on `cpu`: the woken task will find the
    /// submitter's side of the I/O in that CPU's cache (its next step pays).
    pub(crate) fn scsi_ended(&mut self, cpu: CpuId, req: ReqId) {
        let r = &self.reqs.reqs[req];
        let j = r.job();
        let task = self.jobs[j].task.cpu;
        if task != cpu {
            let ns = self.sd(r.dev()).bio_lines * self.line_ns(cpu, task);
            self.jobs[j].task.debt_ns += ns;
        }
        self.reqs.reqs[req].cmd_cpu = cpu;
    }
}
