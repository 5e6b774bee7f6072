//! Devices (state): a block device as blk-mq sees it — its hardware
//! queues, CPU maps, queue settings and disk counters — with the driver and
//! device model behind it, and its I/O scheduler.

pub(crate) mod completion;
pub(crate) mod dsa;
pub(crate) mod null_blk;
pub(crate) mod nvme;
pub(crate) mod scsi;

use crate::block::disk::DiskCounters;
use crate::block::hctx::{HwQueue, QueueMap};
use crate::block::mq_deadline::Deadline;
use crate::block::Request;
use crate::error::Error;
use crate::ids::{CpuId, HctxId};
use crate::machine::{Costs, Machine};
use crate::settings::{NullBlkSettings, QueueSettings, Settings};
use crate::workload::Direction;

use dsa::DsaState;
use nvme::controller::NvmeState;
use scsi::ScsiState;

/// The driver and device model behind a device: one arm per kind, each
/// built by its driver's `probe` from the profile and the settings.
// One per device, built once and never moved: the size difference costs nothing.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Driver {
    /// An NVMe SSD: the controller model.
    Nvme(NvmeState),
    /// null_blk, with its module parameters.
    NullBlk(NullBlkSettings),
    /// An Intel DSA accelerator: its engines (its work queues are the queues).
    Dsa(DsaState),
    /// SCSI over Fibre Channel: a host adapter (its ports are the queues), or a disk behind one.
    Scsi(ScsiState),
}

/// What a driver's probe needs to know of the machine and the settings.
pub(crate) struct ProbeCtx<'a> {
    pub(crate) ncpus: usize,
    /// CPUs in `group_cpus_evenly` order: per node and core, its threads together.
    pub(crate) spread_order: Vec<CpuId>,
    pub(crate) settings: &'a Settings,
    pub(crate) costs: &'a Costs,
    pub(crate) seed: u64,
}

impl ProbeCtx<'_> {
    pub(crate) fn new<'a>(machine: &'a Machine, settings: &'a Settings, seed: u64) -> ProbeCtx<'a> {
        let topo = &machine.topology;
        let ncpus = topo.cpu_count() as usize;
        let mut spread_order: Vec<CpuId> = crate::ids::cpus(ncpus).collect();
        spread_order.sort_by_key(|&c| (topo.cpus[c.idx()].node, topo.cpus[c.idx()].core, c));
        ProbeCtx { ncpus, spread_order, settings, costs: &machine.costs, seed }
    }
}

/// A device as its driver's probe leaves it, and the IRQs it asks for.
pub(crate) struct Probed {
    pub(crate) device: Device,
    /// In the order they are allocated (IRQ numbers follow it).
    pub(crate) irqs: Vec<IrqRequest>,
}

/// An IRQ a driver asks for at probe: queue `queue`'s vector on `cpu`.
pub(crate) struct IrqRequest {
    pub(crate) queue: HctxId,
    pub(crate) cpu: CpuId,
    /// The action name `/proc/interrupts` shows (`nvme0q1`).
    pub(crate) name: String,
    /// Managed affinity (spread by the kernel; user space cannot move it).
    pub(crate) managed: bool,
}

/// Driver tags per hardware queue: `nr_requests` if it was written (at
/// most the driver's `depth`, which `limit` names in the error), else `depth`.
pub(crate) fn driver_tags(name: &str, nr_requests: Option<u32>, depth: u32, limit: &str) -> Result<u32, Error> {
    match nr_requests {
        Some(n) if n > depth => {
            Err(Error::bad_input(format!("/sys/block/{name}/queue/nr_requests={n} exceeds {limit}")))
        }
        Some(n) => Ok(n),
        None => Ok(depth),
    }
}

impl IrqRequest {
    /// One IRQ per queue `0..n`, not managed: on CPU 0 until user space
    /// moves it. `name` gives queue q's action name.
    pub(crate) fn unmanaged_per_queue(n: u32, name: impl Fn(u32) -> String) -> Vec<IrqRequest> {
        (0..n).map(|q| IrqRequest { queue: HctxId(q as u16), cpu: CpuId(0), name: name(q), managed: false }).collect()
    }
}

pub(crate) struct Device {
    pub name: String,
    /// Index among devices of its driver (nvme0, nvme1, ...).
    pub instance: u32,
    pub root_port: usize,
    pub queues: Vec<HwQueue>,
    /// Default map (`HCTX_TYPE_DEFAULT`): CPU -> hctx, the first queues.
    pub map: QueueMap,
    /// Read map (`HCTX_TYPE_READ`, NVMe with `nvme.write_queues`): reads'
    /// queues, hctx indices from `nr_default_queues` on.
    pub read_map: Option<QueueMap>,
    /// Poll map (hctx indices after the interrupt queues), if there are poll queues.
    pub poll_map: Option<QueueMap>,
    /// Queues of the default map (the read map's start).
    pub nr_default_queues: u16,
    /// Queues with an interrupt (default and read maps; the poll map's start).
    pub nr_irq_queues: u16,
    pub queue_settings: QueueSettings,
    pub capacity_bytes: u64,
    /// The driver and the device model behind it.
    pub driver: Driver,
    /// mq-deadline's state, when it is the queue's scheduler (`q->elevator`).
    pub elevator: Option<Deadline>,
    pub disk: DiskCounters,
    /// MSIs it sent.
    pub msis: u64,
    /// `queue/rotational`: a disk with moving heads.
    pub rotational: bool,
}

impl Device {
    /// A device with `queues`, no scheduler and no I/O yet.
    pub(crate) fn new(name: &str, driver: Driver, queues: Vec<HwQueue>, map: QueueMap, qs: QueueSettings) -> Device {
        Device {
            name: name.to_string(),
            instance: 0,
            root_port: 0,
            nr_default_queues: queues.len() as u16,
            nr_irq_queues: queues.len() as u16,
            queues,
            map,
            read_map: None,
            poll_map: None,
            queue_settings: qs,
            capacity_bytes: 0,
            driver,
            elevator: None,
            disk: Default::default(),
            msis: 0,
            rotational: false,
        }
    }

    /// Does its IRQ handler look again for completions that arrived while
    /// it ran? (`nvme_irq` drains until no new CQE turns up; idxd's handler
    /// walks its completion list once.)
    pub(crate) fn irq_rescans(&self) -> bool {
        !self.is_dsa()
    }

    /// Is it a DSA accelerator (not a block device)?
    pub(crate) fn is_dsa(&self) -> bool {
        matches!(self.driver, Driver::Dsa(_))
    }

    /// Is it a block device (not an accelerator or a host adapter)?
    pub(crate) fn is_block(&self) -> bool {
        !matches!(self.driver, Driver::Dsa(_) | Driver::Scsi(ScsiState::Host(_)))
    }

    /// The NVMe controller behind an NVMe device.
    pub(crate) fn nvme_mut(&mut self) -> &mut NvmeState {
        match &mut self.driver {
            Driver::Nvme(n) => n,
            _ => unreachable!("{} is not an NVMe device", self.name),
        }
    }

    /// The DSA engines behind a DSA device.
    pub(crate) fn dsa_mut(&mut self) -> &mut DsaState {
        match &mut self.driver {
            Driver::Dsa(d) => d,
            _ => unreachable!("{} is not a DSA device", self.name),
        }
    }

    /// null_blk's parameters, for a null_blk device.
    pub(crate) fn null_blk(&self) -> Option<&NullBlkSettings> {
        match &self.driver {
            Driver::NullBlk(nb) => Some(nb),
            _ => None,
        }
    }

    pub(crate) fn nr_hw_queues(&self) -> usize {
        self.queues.len()
    }

    /// The hctx a request from `cpu` goes to (`blk_mq_get_hctx_type`): a
    /// polled one to the POLL map if any, a read to the READ map if any,
    /// else the default map. Returns it and whether it polls.
    #[inline(always)]
    pub(crate) fn hctx_for(&self, cpu: CpuId, polled: bool, read: bool) -> (HctxId, bool) {
        match (&self.poll_map, &self.read_map) {
            (Some(pm), _) if polled => (HctxId(self.nr_irq_queues + pm.cpu_to_hctx[cpu].0), true),
            (_, Some(rm)) if read => (HctxId(self.nr_default_queues + rm.cpu_to_hctx[cpu].0), false),
            _ => (self.map.cpu_to_hctx[cpu], false),
        }
    }

    /// The map that places CPUs on queue `hctx` (default, read or poll),
    /// and the queue's index in it.
    pub(crate) fn map_of(&self, hctx: HctxId) -> (&QueueMap, HctxId) {
        match (&self.poll_map, &self.read_map) {
            (Some(pm), _) if hctx.0 >= self.nr_irq_queues => (pm, HctxId(hctx.0 - self.nr_irq_queues)),
            (_, Some(rm)) if hctx.0 >= self.nr_default_queues => (rm, HctxId(hctx.0 - self.nr_default_queues)),
            _ => (&self.map, hctx),
        }
    }

    /// Block-layer accounting at dispatch.
    pub(crate) fn account_start(&mut self, now: u64) {
        if self.disk.inflight == 0 {
            self.disk.busy_since_ns = now;
        }
        self.disk.inflight += 1;
    }

    /// Block-layer accounting at completion.
    pub(crate) fn account_done(&mut self, now: u64, r: &Request) {
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
    pub(crate) fn busy_ns(&self, now: u64) -> u64 {
        self.disk.busy_ns + if self.disk.inflight > 0 { now - self.disk.busy_since_ns } else { 0 }
    }
}
