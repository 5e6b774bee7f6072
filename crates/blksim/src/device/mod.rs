//! Block devices: the hardware queues blk-mq sees and the device models behind them.

pub mod dsa;
pub mod null_blk;
pub mod nvme;

use std::collections::VecDeque;

use crate::block::{QueueMap, Request};
use crate::settings::QueueSettings;
use crate::workload::Direction;

pub use nvme::NvmeState;

/// One hardware queue (hctx): for NVMe one SQ/CQ pair.
#[derive(Clone, Debug, Default)]
pub struct HwQueue {
    /// CQEs posted by the device and not yet consumed by the driver, in order.
    pub cq: VecDeque<u32>,
    /// A poll queue: created without IEN, raises no interrupt.
    pub polled: bool,
    /// Its IRQ (index into `Sim::irqs`), `u32::MAX` for a poll queue.
    pub irq: u32,
    pub tags_free: u32,
    /// Requests waiting for a tag, oldest first.
    pub tag_waiters: VecDeque<u32>,
    /// Jobs spinning on this queue's CQ.
    pub pollers: Vec<u32>,
}

/// Disk accounting as the block layer keeps it.
#[derive(Clone, Debug, Default)]
pub struct DiskCounters {
    pub ios: [u64; 2],
    /// Bios merged into another request (back merges in the plug).
    pub merges: [u64; 2],
    pub sectors: [u64; 2],
    pub ticks_ns: [u64; 2],
    pub inflight: u32,
    pub busy_since_ns: u64,
    pub busy_ns: u64,
}

pub struct Device {
    pub name: String,
    /// Index among devices of its driver (nvme0, nvme1, ...).
    pub instance: u32,
    pub root_port: usize,
    pub queues: Vec<HwQueue>,
    /// Default (interrupt) map: CPU -> hctx.
    pub map: QueueMap,
    /// Poll map (hctx indices after the interrupt queues), if there are poll queues.
    pub poll_map: Option<QueueMap>,
    pub nr_irq_queues: u16,
    pub queue_settings: QueueSettings,
    pub capacity_bytes: u64,
    pub nvme: Option<NvmeState>,
    /// The accelerator's state, for a DSA device.
    pub dsa: Option<dsa::DsaState>,
    /// mq-deadline's state, when it is the queue's scheduler.
    pub deadline: Option<crate::ioengine::sched::Deadline>,
    /// null_blk's module parameters, for a null_blk device.
    pub null_blk: Option<crate::settings::NullBlkSettings>,
    pub disk: DiskCounters,
}

impl Device {
    pub fn nr_hw_queues(&self) -> usize {
        self.queues.len()
    }

    /// The hctx a request from `cpu` goes to (`polled`: the POLL map if any).
    pub fn hctx_for(&self, cpu: u32, polled: bool) -> (u16, bool) {
        match (&self.poll_map, polled) {
            (Some(pm), true) => (self.nr_irq_queues + pm.cpu_to_hctx[cpu as usize], true),
            _ => (self.map.cpu_to_hctx[cpu as usize], false),
        }
    }

    /// Block-layer accounting at dispatch.
    pub fn account_start(&mut self, now: u64) {
        if self.disk.inflight == 0 {
            self.disk.busy_since_ns = now;
        }
        self.disk.inflight += 1;
    }

    /// Block-layer accounting at completion.
    pub fn account_done(&mut self, now: u64, r: &Request) {
        let d = if r.dir == Direction::Read { 0 } else { 1 };
        self.disk.ios[d] += 1;
        self.disk.sectors[d] += r.dev_bytes as u64 / 512;
        self.disk.ticks_ns[d] += now - r.t_dispatch_ns;
        self.disk.inflight -= 1;
        if self.disk.inflight == 0 {
            self.disk.busy_ns += now - self.disk.busy_since_ns;
        }
    }

    /// Busy time up to `now`, counting a busy period still open.
    pub fn busy_ns(&self, now: u64) -> u64 {
        self.disk.busy_ns + if self.disk.inflight > 0 { now - self.disk.busy_since_ns } else { 0 }
    }
}

impl crate::run::Sim {
    /// The driver's cost per request on `dev`: `queue_rq`, or its share of
    /// `queue_rqs` for a plugged batch.
    pub fn driver_queue_rq_cost(&self, dev: u16, plugged: bool) -> u64 {
        let c = &self.costs;
        if self.devs[dev as usize].nvme.is_some() {
            (if plugged { c.nvme_queue_rqs_ns } else { c.nvme_queue_rq_ns }) + c.dma_map_ns
        } else {
            c.null_queue_rq_ns
        }
    }

    /// The driver's cost to start a batch on `dev` (the NVMe SQ doorbell).
    pub fn driver_commit_cost(&self, dev: u16) -> u64 {
        if self.devs[dev as usize].nvme.is_some() {
            self.costs.doorbell_ns
        } else {
            0
        }
    }

    /// Hand `req` (holding a tag of `hctx`) to the driver on `cpu`. Returns the
    /// cost of work the driver did inline (null_blk irqmode=0 completions).
    pub fn driver_issue(&mut self, cpu: u32, dev: u16, hctx: u16, req: u32) -> u64 {
        if self.devs[dev as usize].nvme.is_some() {
            self.nvme_issue(dev, hctx, &[req]);
            0
        } else {
            self.null_blk_issue(cpu, dev, req)
        }
    }
}
