//! Devices (state): a block device as blk-mq sees it — its hardware
//! queues, CPU maps, queue settings and disk counters — with the driver and
//! device model behind it, and its I/O scheduler; `Driver`, the one type
//! whose methods (and `ops.rs`'s) are every capability a driver has, as
//! `blk_mq_ops` is in the kernel. No code outside `drivers/` asks which
//! kind of device it has.

pub(crate) mod completion;
pub(crate) mod dsa;
pub(crate) mod null_blk;
pub(crate) mod nvme;
pub(crate) mod ops;
pub(crate) mod scsi;

use crate::block::disk::DiskCounters;
use crate::block::elevator::Elevator;
use crate::block::hctx::{HwQueue, QueueMap};
use crate::block::merge_rules::MAX_DISCARD_SECTORS;
use crate::block::Request;
use crate::error::Error;
use crate::hw::cpu::Bill;
use crate::ids::{CpuId, HctxId, IdVec};
use crate::machine::{Costs, DeviceKind, DeviceSpec, Machine, ScsiSpec};
use crate::settings::{NullBlkSettings, QueueSettings, Settings};
use crate::stats::CpuStage;
use crate::workload::Direction;

use dsa::DsaState;
use nvme::controller::NvmeState;
use nvme::interrupt::Signal;
use scsi::{HostState, SdState};

/// The driver and device model behind a device: one arm per kind, each
/// built by its driver's `probe` from the profile and the settings. Every
/// match on it is exhaustive (no `_` arm): a new kind makes the compiler
/// list each capability it must answer.
// One per device, built once and never moved: the size difference costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone)]
pub(crate) enum Driver {
    /// An NVMe SSD: the controller model.
    Nvme(NvmeState),
    /// null_blk, with its module parameters.
    NullBlk(NullBlkSettings),
    /// An Intel DSA accelerator: its engines (its work queues are the queues).
    Dsa(DsaState),
    /// A SCSI over Fibre Channel host adapter (its ports are the queues); not a block device.
    ScsiHost(HostState),
    /// A SCSI disk (`sd`) behind a host adapter.
    ScsiDisk(Box<SdState>),
}

/// Probe the device `spec` describes with its driver. `instances` counts
/// the NVMe and DSA devices probed so far (their instance numbers); a
/// SCSI disk's host adapter is among `devs`, probed before it.
pub(crate) fn probe(
    spec: &DeviceSpec,
    ctx: &ProbeCtx,
    instances: &mut [u32; 2],
    devs: &mut [Device],
) -> Result<Probed, Error> {
    Ok(match &spec.kind {
        DeviceKind::Nvme(p) => {
            instances[0] += 1;
            nvme::probe(&spec.name, p, ctx, instances[0] - 1)?
        }
        DeviceKind::Dsa(p) => {
            instances[1] += 1;
            dsa::probe(&spec.name, p, ctx, instances[1] - 1)
        }
        DeviceKind::NullBlk => null_blk::probe(&spec.name, ctx)?,
        DeviceKind::Scsi(ScsiSpec::Host(p)) => scsi::probe_host(&spec.name, p, ctx)?,
        DeviceKind::Scsi(ScsiSpec::Disk(p)) => scsi::probe_disk(&spec.name, p, ctx, devs)?,
    })
}

impl Driver {
    /// Why the device is not a block device a job can open, if it is not.
    pub(crate) fn not_a_block_device(&self) -> Option<&'static str> {
        match self {
            Driver::Nvme(_) | Driver::NullBlk(_) | Driver::ScsiDisk(_) => None,
            Driver::Dsa(_) => Some("a DSA accelerator is not a block device (drive it with `blksim dsa-memfill`)"),
            Driver::ScsiHost(_) => Some("a SCSI host adapter is not a block device (its disks are)"),
        }
    }

    /// An fsync's flush (`blkdev_issue_flush`: an empty REQ_PREFLUSH bio)
    /// ends in `submit_bio_noacct` at once where the queue has no volatile
    /// write cache (no BLK_FEAT_WRITE_CACHE): the model takes it there. `Err`
    /// says why it cannot take the device's flush otherwise.
    pub(crate) fn flush_stripped(&self) -> Result<(), &'static str> {
        match self {
            Driver::Nvme(n) => match n.params.volatile_write_cache {
                Some(false) => Ok(()),
                Some(true) => Err(
                    "the drive has a volatile write cache, so the flush reaches it as an NVMe Flush command, whose time has no data-sheet source in the model",
                ),
                None => Err(
                    "its profile does not say whether the drive has a volatile write cache (`volatile_write_cache` of its device model)",
                ),
            },
            // null_blk sets BLK_FEAT_WRITE_CACHE only with its cache_size (not modelled).
            Driver::NullBlk(_) => Ok(()),
            Driver::ScsiDisk(_) => Err(
                "sd sends SYNCHRONIZE CACHE to a disk whose caching mode page sets WCE, and the profile does not say whether this one does",
            ),
            Driver::Dsa(_) | Driver::ScsiHost(_) => Err("it is not a block device"),
        }
    }

    /// Is it a DSA accelerator (what `dsa-memfill`'s clients drive)?
    pub(crate) fn is_dsa(&self) -> bool {
        match self {
            Driver::Dsa(_) => true,
            Driver::Nvme(_) | Driver::NullBlk(_) | Driver::ScsiHost(_) | Driver::ScsiDisk(_) => false,
        }
    }

    /// Has it NVMe generic char devices (`/dev/ngXnY`, for passthrough)?
    pub(crate) fn has_generic_char_device(&self) -> bool {
        match self {
            Driver::Nvme(_) => true,
            Driver::NullBlk(_) | Driver::Dsa(_) | Driver::ScsiHost(_) | Driver::ScsiDisk(_) => false,
        }
    }

    /// Does it take discards (`bdev_max_discard_sectors` > 0)? NVMe does
    /// (Dataset Management, Deallocate); a SCSI LUN that is thin
    /// provisioned does (UNMAP); a fully provisioned one has no logical
    /// block provisioning, so `sd` sets no discard limit; null_blk has none
    /// without `discard=1` (not modelled): BLKDISCARD fails there with
    /// -EOPNOTSUPP.
    pub(crate) fn discards(&self) -> bool {
        self.max_discard_segments() > 0
    }

    /// `queue_max_discard_segments`: the ranges one discard request may
    /// carry, 0 where there are no discards. NVMe: `nvme_config_discard`
    /// sets NVME_DSM_MAX_RANGES (256, the ranges one Dataset Management
    /// command takes) for a controller that reports no DMRL limit (no
    /// modelled drive reports one), and `nvme_setup_discard` writes one
    /// range per bio of the request. sd leaves the block layer's default,
    /// one: `sd_setup_unmap_cmnd` sends one block descriptor per UNMAP.
    pub(crate) fn max_discard_segments(&self) -> u32 {
        match self {
            Driver::Nvme(_) => 256,
            Driver::ScsiDisk(sd) => sd.disk.unmap() as u32,
            Driver::NullBlk(_) | Driver::Dsa(_) | Driver::ScsiHost(_) => 0,
        }
    }

    /// `max_discard_sectors` in bytes: the largest discard request. NVMe
    /// (no DMRSL limit): UINT_MAX sectors as `blk_queue_get_max_sectors`
    /// caps it; sd's `unmap` mode: SD_MAX_WS16_BLOCKS logical blocks of
    /// 512 bytes, for a LUN that names no smaller MAXIMUM UNMAP LBA COUNT.
    pub(crate) fn max_discard_bytes(&self) -> u64 {
        const SD_MAX_WS16_BLOCKS: u64 = 0x7f_ffff;
        match self {
            Driver::Nvme(_) => MAX_DISCARD_SECTORS * 512,
            Driver::ScsiDisk(sd) if sd.disk.unmap() => SD_MAX_WS16_BLOCKS * 512,
            Driver::ScsiDisk(_) | Driver::NullBlk(_) | Driver::Dsa(_) | Driver::ScsiHost(_) => 0,
        }
    }

    /// Does its IRQ handler look again for completions that arrived while
    /// it ran? (The adapter's handler does; idxd's walks its completion list
    /// once; `nvme_irq`'s loop takes what comes before its doorbell within
    /// the same step, and the controller signals what comes after.)
    pub(crate) fn irq_rescans(&self) -> bool {
        match self {
            Driver::NullBlk(_) | Driver::ScsiHost(_) | Driver::ScsiDisk(_) => true,
            Driver::Nvme(_) | Driver::Dsa(_) => false,
        }
    }

    /// The driver's cost to start a batch (`->commit_rqs`: the NVMe SQ
    /// doorbell, the adapter's request-ring doorbell; null_blk has none).
    pub(crate) fn commit_cost(&self, c: &Costs) -> u64 {
        match self {
            Driver::Nvme(_) | Driver::ScsiHost(_) | Driver::ScsiDisk(_) => c.doorbell_ns,
            Driver::NullBlk(_) | Driver::Dsa(_) => 0,
        }
    }

    /// `->queue_rq` of one request, billed: the driver's work and the DMA
    /// mapping (`dma_ns`; a SCSI disk's cost includes its own).
    pub(crate) fn queue_rq_bill(&self, c: &Costs, dma_ns: u64, bill: &mut Bill) -> u64 {
        match self {
            Driver::Nvme(_) => {
                bill.add(CpuStage::DriverSubmit, c.nvme_queue_rq_ns) + bill.add(CpuStage::DmaMap, dma_ns)
            }
            Driver::ScsiDisk(sd) => bill.add(CpuStage::DriverSubmit, sd.queue_rq_ns),
            // Not block devices: blk-mq never issues to them.
            Driver::NullBlk(_) | Driver::Dsa(_) | Driver::ScsiHost(_) => {
                bill.add(CpuStage::DriverSubmit, c.null_queue_rq_ns)
            }
        }
    }

    /// A plug flush's driver work for `n` requests of one queue, billed:
    /// with the plug's requests all for this queue NVMe takes them in one
    /// `->queue_rqs` (one `sq_lock` and doorbell); with several queues
    /// (Linux 6.10 to 6.15) `blk_mq_dispatch_rq_list` issues each with
    /// `->queue_rq`. The doorbell is the caller's (`commit_cost`).
    pub(crate) fn queue_rqs_bill(&self, c: &Costs, n: u64, several: bool, dma_ns: u64, bill: &mut Bill) -> u64 {
        match self {
            Driver::Nvme(_) if !several => {
                bill.add(CpuStage::DriverSubmit, n * c.nvme_queue_rqs_ns + c.nvme_sq_batch_ns)
                    + bill.add(CpuStage::DmaMap, n * dma_ns)
            }
            Driver::Nvme(_) => {
                bill.add(CpuStage::Block, n * c.blk_issue_direct_ns)
                    + bill.add(CpuStage::DriverSubmit, n * c.nvme_queue_rq_ns)
                    + bill.add(CpuStage::DmaMap, n * dma_ns)
            }
            Driver::ScsiDisk(sd) => bill.add(CpuStage::DriverSubmit, n * sd.queue_rq_ns),
            Driver::NullBlk(_) | Driver::Dsa(_) | Driver::ScsiHost(_) => {
                bill.add(CpuStage::DriverSubmit, n * c.null_queue_rq_ns)
            }
        }
    }

    /// With `iommu.strict=1`, does each completion's unmap wait for its
    /// IOTLB invalidation? (Modelled for NVMe's completions.)
    pub(crate) fn unmap_syncs_iotlb(&self) -> bool {
        match self {
            Driver::Nvme(_) => true,
            Driver::NullBlk(_) | Driver::Dsa(_) | Driver::ScsiHost(_) | Driver::ScsiDisk(_) => false,
        }
    }

    /// A completion of `queue` is in host memory: does the device raise
    /// the queue's MSI now, later or not yet? (An NVMe controller holds it
    /// while an earlier one is unacknowledged, or for coalescing; the
    /// others signal every completion.)
    pub(crate) fn cqe_posted(&mut self, queue: HctxId, now: u64) -> Signal {
        match self {
            Driver::Nvme(n) => n.irq.cqe_posted(queue, now),
            Driver::NullBlk(_) | Driver::Dsa(_) | Driver::ScsiHost(_) | Driver::ScsiDisk(_) => Signal::Now,
        }
    }

    /// The interrupt handler now draining `queue` writes its CQ head
    /// doorbell at `at_ns` (NVMe only has one; the controller holds the
    /// vector's next interrupt until then).
    pub(crate) fn doorbell_due(&mut self, queue: HctxId, at_ns: u64) {
        match self {
            Driver::Nvme(n) => n.irq.doorbell_due(queue, at_ns),
            Driver::NullBlk(_) | Driver::Dsa(_) | Driver::ScsiHost(_) | Driver::ScsiDisk(_) => {}
        }
    }

    /// The interrupt timer (generation `gen`) of `queue` expired at `now`:
    /// the CQ head doorbell it waited for reached the controller, or the
    /// aggregation time ran out.
    pub(crate) fn aggregation_timer(&mut self, queue: HctxId, gen: u32, now: u64) -> Signal {
        match self {
            Driver::Nvme(n) => n.irq.timer_fired(queue, gen, now),
            Driver::NullBlk(_) | Driver::Dsa(_) | Driver::ScsiHost(_) | Driver::ScsiDisk(_) => Signal::Hold,
        }
    }

    /// The action name (`request_irq`'s devname) `/proc/interrupts` shows
    /// for `queue`'s IRQ of device `dev_name`, number `instance`: made when
    /// asked, not kept per IRQ (a machine has thousands). null_blk and SCSI
    /// disks request no IRQ; their arms name the device's queue.
    pub(crate) fn irq_action(&self, dev_name: &str, instance: u32, queue: HctxId) -> String {
        match self {
            Driver::Nvme(_) => format!("nvme{instance}q{}", queue.0 + 1),
            Driver::Dsa(_) => format!("idxd-{dev_name}-wq{}", queue.0),
            Driver::ScsiHost(_) => format!("qla2xxx:{dev_name}:{}", queue.0),
            Driver::NullBlk(_) | Driver::ScsiDisk(_) => format!("{dev_name}-q{}", queue.0),
        }
    }

    /// The interrupt chip column `/proc/interrupts` shows for `queue`'s IRQ
    /// of device `instance`.
    pub(crate) fn irq_chip(&self, instance: u32, queue: HctxId) -> String {
        match self {
            // One interrupt per adapter port (a PCI function each).
            Driver::ScsiHost(_) | Driver::ScsiDisk(_) => format!("PCI-MSI {}-edge", queue.0),
            Driver::Nvme(_) | Driver::NullBlk(_) | Driver::Dsa(_) => {
                format!("IR-PCI-MSIX-0000:{:02x}:00.0 {}-edge", 0x10 + instance, queue.0 + 1)
            }
        }
    }
}

/// A device IRQ handler's pass over the completions it sees, foreseen
/// (its step is charged this before it runs) or run (at the step's end).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Drain {
    /// The pass's CPU cost (foreseen; a run's is not computed, it was charged).
    pub(crate) cost_ns: u64,
    /// The part of it that is follow-on work the completions cause
    /// (wake-ups, IPIs); for a run, what they really caused.
    pub(crate) follow_ns: u64,
    /// The foreseen cost by stage.
    pub(crate) bill: Bill,
    /// The part of `cost_ns` after the CQ head doorbell: the completion of
    /// the pass's `io_comp_batch` (`nvme_pci_complete_batch`).
    pub(crate) tail_ns: u64,
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
    /// moves it.
    pub(crate) fn unmanaged_per_queue(n: u32) -> Vec<IrqRequest> {
        (0..n).map(|q| IrqRequest { queue: HctxId(q as u16), cpu: CpuId(0), managed: false }).collect()
    }
}

#[derive(Clone)]
pub(crate) struct Device {
    pub name: String,
    /// Index among devices of its driver (nvme0, nvme1, ...).
    pub instance: u32,
    pub root_port: usize,
    pub queues: IdVec<HctxId, HwQueue>,
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
    /// The queue's I/O scheduler (`q->elevator`); `None` is `none`.
    pub elevator: Option<Elevator>,
    pub disk: DiskCounters,
    /// MSIs it sent.
    pub msis: u64,
    /// `queue/rotational`: a disk with moving heads.
    pub rotational: bool,
    /// A job sends it NVMe passthrough commands (io_uring_cmd): only then
    /// does a request need looking at for `blk_rq_is_passthrough`.
    pub passthru_users: bool,
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
            queues: IdVec::from(queues),
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
            passthru_users: false,
        }
    }

    /// The NVMe controller behind an NVMe device.
    pub(crate) fn nvme_mut(&mut self) -> &mut NvmeState {
        let Driver::Nvme(n) = &mut self.driver else { unreachable!("{} is not an NVMe device", self.name) };
        n
    }

    /// The DSA engines behind a DSA device.
    pub(crate) fn dsa_mut(&mut self) -> &mut DsaState {
        let Driver::Dsa(d) = &mut self.driver else { unreachable!("{} is not a DSA device", self.name) };
        d
    }

    /// null_blk's parameters, for a null_blk device.
    pub(crate) fn null_blk(&self) -> Option<&NullBlkSettings> {
        let Driver::NullBlk(nb) = &self.driver else { return None };
        Some(nb)
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
        // Discards have counters of their own (diskstats' fields 12-15), which fio does not show.
        if r.dir == Direction::Trim {
            self.disk.discards += 1;
        } else {
            let d = if r.dir == Direction::Read { 0 } else { 1 };
            self.disk.ios[d] += 1;
            self.disk.sectors[d] += r.dev_bytes as u64 / 512;
            self.disk.ticks_ns[d] += now - r.t_dispatch_ns;
        }
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
