//! Devices (state): a block device as blk-mq sees it — its hardware
//! queues, CPU maps, queue settings and disk counters — with the driver and
//! device model behind it, and its I/O scheduler.

pub(crate) mod completion;
pub(crate) mod dsa;
pub(crate) mod null_blk;
pub(crate) mod nvme;

use crate::block::disk::DiskCounters;
use crate::block::hctx::{HwQueue, QueueMap};
use crate::block::Request;
use crate::settings::QueueSettings;
use crate::workload::Direction;

use nvme::controller::NvmeState;

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
    pub deadline: Option<crate::block::mq_deadline::Deadline>,
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
