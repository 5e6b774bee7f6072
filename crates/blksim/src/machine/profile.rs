//! Machine profiles: TOML text in, a validated `Machine` out. `extends`
//! overlays one profile on another (tables merge key by key, arrays and
//! values replace); unknown keys are errors.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::costs::{Cost, Costs};
use super::topology::Topology;

/// Built-in profiles: (name, TOML text).
pub const BUILTIN: &[(&str, &str)] = &[
    ("spr-gen5", include_str!("../../../../profiles/spr-gen5.toml")),
    ("spr-dsa", include_str!("../../../../profiles/spr-dsa.toml")),
    ("x86-gen5-5m", include_str!("../../../../profiles/x86-gen5-5m.toml")),
    ("gen5-msi-limited", include_str!("../../../../profiles/gen5-msi-limited.toml")),
    ("ryzen-7950x", include_str!("../../../../profiles/ryzen-7950x.toml")),
    ("hp-ia64-2008", include_str!("../../../../profiles/hp-ia64-2008.toml")),
];

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    name: String,
    description: String,
    cpu: RawCpu,
    iommu: Vec<RawIommu>,
    interrupt_delivery: RawDelivery,
    #[serde(default)]
    msi_serialisation: Option<RawDelivery>,
    #[serde(default)]
    root_port: Vec<RawRootPort>,
    #[serde(default)]
    pcie_switch: Vec<RawSwitch>,
    #[serde(default)]
    device_model: BTreeMap<String, RawDevice>,
    #[serde(default)]
    device: Vec<RawDevice>,
    costs: BTreeMap<String, Cost>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCpu {
    sockets: u32,
    cores_per_socket: u32,
    threads_per_core: u32,
    numa_nodes_per_socket: u32,
    llc_per_socket: u32,
    smt_throughput: f64,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIommu {
    name: String,
    socket: u32,
    /// The root ports whose interrupt messages this unit remaps.
    root_ports: Vec<String>,
    #[serde(default)]
    posting_capable: bool,
    remap_service_ns: Cost,
    post_service_ns: Cost,
    iec_entries: u32,
    iec_miss_ns: Cost,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDelivery {
    service_ns: Cost,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRootPort {
    name: String,
    socket: u32,
    msi_service_ns: Cost,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSwitch {
    name: String,
    root_port: String,
    upstream_mb_per_s: u64,
}

/// A device or a device model: every field optional so a device can take the
/// rest from its `model`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDevice {
    name: Option<String>,
    model: Option<String>,
    kind: Option<String>,
    root_port: Option<String>,
    pcie_switch: Option<String>,
    capacity_gib: Option<u64>,
    max_queues: Option<u32>,
    max_queue_entries: Option<u32>,
    iops_max_read: Option<u64>,
    iops_max_write: Option<u64>,
    iops_block_size: Option<u64>,
    read_mb_per_s: Option<u64>,
    write_mb_per_s: Option<u64>,
    media_units: Option<u32>,
    read_latency_ns: Option<u64>,
    write_latency_ns: Option<u64>,
    read_ns_per_kib: Option<u64>,
    write_ns_per_kib: Option<u64>,
    latency_sigma: Option<f64>,
    fetch_ns: Option<u64>,
    link_mb_per_s: Option<u64>,
    wqs: Option<u32>,
    engines: Option<u32>,
    descriptor_ns: Option<u64>,
    fill_mb_per_s: Option<u64>,
    ports: Option<u32>,
    queue_depth: Option<u32>,
    fw_cmd_ns: Option<Cost>,
    host: Option<String>,
    port: Option<u32>,
    target: Option<String>,
    rpm: Option<u32>,
    media_mb_per_s: Option<u64>,
    seek_track_ns: Option<Cost>,
    seek_avg_ns: Option<Cost>,
    seek_full_ns: Option<Cost>,
    controller_ns: Option<Cost>,
    cache_hit_ns: Option<Cost>,
    cache_mib: Option<u64>,
    read_ahead_kib: Option<u64>,
    write_cache: Option<bool>,
    unmap: Option<bool>,
    volatile_write_cache: Option<bool>,
}

/// The keys a device of each kind takes, besides `name`, `model` and `kind`.
const DEVICE_KEYS: &[(&str, &[&str])] = &[
    (
        "nvme",
        &[
            "root_port",
            "pcie_switch",
            "capacity_gib",
            "max_queues",
            "max_queue_entries",
            "iops_max_read",
            "iops_max_write",
            "iops_block_size",
            "read_mb_per_s",
            "write_mb_per_s",
            "media_units",
            "read_latency_ns",
            "write_latency_ns",
            "read_ns_per_kib",
            "write_ns_per_kib",
            "latency_sigma",
            "fetch_ns",
            "link_mb_per_s",
            "volatile_write_cache",
        ],
    ),
    ("null_blk", &[]),
    ("dsa", &["root_port", "pcie_switch", "wqs", "engines", "descriptor_ns", "fill_mb_per_s", "latency_sigma"]),
    ("fc_hba", &["root_port", "ports", "queue_depth", "link_mb_per_s", "fw_cmd_ns"]),
    (
        "scsi_disk",
        &[
            "host",
            "port",
            "target",
            "capacity_gib",
            "rpm",
            "media_mb_per_s",
            "seek_track_ns",
            "seek_avg_ns",
            "seek_full_ns",
            "controller_ns",
            "cache_hit_ns",
            "latency_sigma",
            "cache_mib",
            "read_ahead_kib",
            "write_cache",
            "unmap",
        ],
    ),
];

/// Every field of `RawDevice`, once, handed to macro `$m` (`or` and `keys` are built over them).
macro_rules! raw_device_fields {
    ($m:ident) => {
        $m!(
            name,
            model,
            kind,
            root_port,
            pcie_switch,
            capacity_gib,
            max_queues,
            max_queue_entries,
            iops_max_read,
            iops_max_write,
            iops_block_size,
            read_mb_per_s,
            write_mb_per_s,
            media_units,
            read_latency_ns,
            write_latency_ns,
            read_ns_per_kib,
            write_ns_per_kib,
            latency_sigma,
            fetch_ns,
            link_mb_per_s,
            wqs,
            engines,
            descriptor_ns,
            fill_mb_per_s,
            ports,
            queue_depth,
            fw_cmd_ns,
            host,
            port,
            target,
            rpm,
            media_mb_per_s,
            seek_track_ns,
            seek_avg_ns,
            seek_full_ns,
            controller_ns,
            cache_hit_ns,
            cache_mib,
            read_ahead_kib,
            write_cache,
            unmap,
            volatile_write_cache
        )
    };
}

impl RawDevice {
    /// The keys it sets (its model's included once merged).
    fn keys(&self) -> Vec<&'static str> {
        macro_rules! set { ($($f:ident),*) => { [$((stringify!($f), self.$f.is_some()),)*] } }
        raw_device_fields!(set).into_iter().filter_map(|(k, on)| on.then_some(k)).collect()
    }

    /// Fill the unset fields from `base`.
    fn or(self, base: &RawDevice) -> RawDevice {
        macro_rules! pick { ($($f:ident),*) => { RawDevice { $($f: self.$f.or_else(|| base.$f.clone()),)* } } }
        raw_device_fields!(pick)
    }
}

/// A root port (PCIe / IIO stack) through which devices' MSIs pass.
#[derive(Clone, Debug, PartialEq)]
pub struct RootPort {
    /// Its name in the profile (devices name it in `root_port`).
    pub name: String,
    /// The socket it belongs to.
    pub socket: u32,
    /// Service time per interrupt message (ordering behind DMA), ns.
    pub msi_service_ns: u64,
    /// Index into `Machine::iommus` of the unit that remaps its interrupts.
    pub iommu: usize,
}

#[derive(Clone, Debug, PartialEq)]
/// What kind of device a profile entry is, with its model's parameters.
pub enum DeviceKind {
    /// An NVMe SSD.
    Nvme(NvmeParams),
    /// null_blk (its parameters are module parameters, in the settings).
    NullBlk,
    /// An Intel DSA-like accelerator.
    Dsa(DsaParams),
    /// SCSI over Fibre Channel: a host adapter, or a disk behind one of its ports.
    Scsi(ScsiSpec),
}

/// A SCSI device of the profile: a host adapter (`kind = "fc_hba"`) or a
/// disk behind one of its ports (`kind = "scsi_disk"`).
#[derive(Clone, Debug, PartialEq)]
pub enum ScsiSpec {
    /// A Fibre Channel host adapter.
    Host(HbaParams),
    /// A disk (LUN) behind a host adapter's port.
    Disk(DiskParams),
}

/// A Fibre Channel host adapter: ports, each with its firmware's command
/// processing, its link and one interrupt.
#[derive(Clone, Debug, PartialEq)]
pub struct HbaParams {
    /// FC ports.
    pub ports: u32,
    /// The port firmware's time per command (IOCB fetch, exchange set-up, status), ns.
    pub fw_cmd_ns: u64,
    /// The FC link's payload bandwidth per port, MB/s.
    pub link_mb_per_s: u64,
    /// Commands the driver queues per LUN (the disk's tags).
    pub queue_depth: u32,
    /// Index into `Machine::root_ports`.
    pub root_port: usize,
}

/// A rotational disk (or an array's LUN presented as one) behind an FC port:
/// geometry, seek curve, rotation, media rate, controller and cache.
#[derive(Clone, Debug, PartialEq)]
pub struct DiskParams {
    /// Its host adapter (index into `Machine::devices`).
    pub host: usize,
    /// The host adapter's port it is behind.
    pub port: u32,
    /// The target controller it shares with other LUNs of the same name (an array controller), if any.
    pub target: Option<String>,
    /// Capacity, bytes.
    pub capacity_bytes: u64,
    /// Spindle speed, revolutions per minute.
    pub rpm: u32,
    /// Sustained media transfer rate, MB/s (a revolution passes this many
    /// bytes under the head: a track; consecutive bytes need no seek).
    pub media_mb_per_s: u64,
    /// Seek times: track to track, average (a third of the stroke), full stroke, ns.
    pub seek_ns: [u64; 3],
    /// The controller's time per command (decode, cache lookup, status),
    /// one command at a time, ns.
    pub controller_ns: u64,
    /// A read served from the cache: its data reaches the port this much
    /// later (moved by the controller's DMA engines, which overlap with
    /// other commands), ns.
    pub cache_hit_ns: u64,
    /// Log-normal spread of `cache_hit_ns` (sigma of its logarithm).
    pub latency_sigma: f64,
    /// Read cache, bytes.
    pub cache_bytes: u64,
    /// Read-ahead after a media read, bytes.
    pub read_ahead_bytes: u64,
    /// Writes complete from the cache and are destaged later (else written through).
    pub write_cache: bool,
    /// A thin-provisioned LUN that takes UNMAP (READ CAPACITY(16)'s LBPME,
    /// the Logical Block Provisioning VPD page's LBPU), with no limit of its
    /// own on the blocks one UNMAP may name: sd's provisioning mode `unmap`.
    /// Else fully provisioned: no discards.
    pub unmap: bool,
}

/// A DSA-like accelerator: work queues feeding parallel engines; each
/// completed descriptor writes a completion record and raises its WQ's MSI.
#[derive(Clone, Debug, PartialEq)]
pub struct DsaParams {
    /// Work queues (one MSI-X vector each).
    pub wqs: u32,
    /// Processing engines serving descriptors in parallel.
    pub engines: u32,
    /// Engine time per descriptor besides moving data, ns.
    pub descriptor_ns: u64,
    /// Fill bandwidth of one engine, MB/s.
    pub fill_mb_per_s: u64,
    /// Log-normal spread of a descriptor's time (sigma of its logarithm).
    pub latency_sigma: f64,
    /// Index into `Machine::root_ports`.
    pub root_port: usize,
}

#[derive(Clone, Debug, PartialEq)]
/// An NVMe SSD's model: queues, controller and media limits, latency, link.
pub struct NvmeParams {
    /// Namespace capacity, bytes.
    pub capacity_bytes: u64,
    /// I/O queue pairs the controller offers.
    pub max_queues: u32,
    /// Entries per queue (MQES + 1).
    pub max_queue_entries: u32,
    /// The controller's time per command besides moving its data,
    /// [read, write], ns: the data sheet's random IOPS figure less its
    /// block's time at the drive's bandwidth.
    pub command_ns: [u64; 2],
    /// The drive's own data bandwidth (its rated sequential figures),
    /// [read, write], MB/s.
    pub drive_mb_per_s: [u64; 2],
    /// Media units (dies/planes) serving commands in parallel.
    pub media_units: u32,
    /// Media time of a 4 KiB command, [read, write], ns.
    pub latency_ns: [u64; 2],
    /// Extra media time per KiB above 4 KiB, [read, write], ns.
    pub ns_per_kib: [u64; 2],
    /// Log-normal spread of the media time (sigma of its logarithm).
    pub latency_sigma: f64,
    /// Command fetch after the doorbell, ns.
    pub fetch_ns: u64,
    /// Link bandwidth, MB/s (10^6 bytes per second).
    pub link_mb_per_s: u64,
    /// Index into `Machine::root_ports`.
    pub root_port: usize,
    /// Index into `Machine::pcie_switches` of the switch it sits behind.
    pub pcie_switch: Option<usize>,
    /// Identify Controller's VWC bit: a volatile write cache, which the
    /// kernel flushes on fsync (`nvme_update_disk_info` sets
    /// BLK_FEAT_WRITE_CACHE from it). `None`: the profile does not say.
    pub volatile_write_cache: Option<bool>,
}

/// A PCIe switch whose one upstream link the drives behind it share.
#[derive(Clone, Debug, PartialEq)]
pub struct PcieSwitch {
    /// Its name in the profile (devices name it in `pcie_switch`).
    pub name: String,
    /// Index into `Machine::root_ports` of the port its upstream link ends at.
    pub root_port: usize,
    /// Its upstream link's payload bandwidth per direction, MB/s.
    pub upstream_mb_per_s: u64,
}

#[derive(Clone, Debug, PartialEq)]
/// A device of the machine as the profile declares it.
pub struct DeviceSpec {
    /// Block device name, e.g. `nvme0n1` (jobs name it `/dev/nvme0n1`).
    pub name: String,
    /// Its kind and model parameters.
    pub kind: DeviceKind,
}

/// How a device serves a stream of I/Os, as a first estimate: see [`DeviceSpec::service_estimate`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ServiceEstimate {
    /// The commands per second it completes at most (`None`: no bound of its own, null_blk).
    pub iops: Option<f64>,
    /// One command's latency on an idle device, ns.
    pub latency_ns: f64,
    /// Host CPU its driver spends per command: queueing it, taking its completion, ns.
    pub driver_ns: f64,
    /// Host CPU per completion interrupt (or softirq) when completions are not polled, ns.
    pub irq_ns: f64,
}

impl DeviceSpec {
    /// Is it a block device (`/sys/block/NAME`)? A DSA accelerator and a SCSI host adapter are not.
    pub fn is_block(&self) -> bool {
        !matches!(self.kind, DeviceKind::Dsa(_) | DeviceKind::Scsi(ScsiSpec::Host(_)))
    }

    /// Is it a DSA accelerator (what `dsa-memfill` drives)?
    pub fn is_dsa(&self) -> bool {
        matches!(self.kind, DeviceKind::Dsa(_))
    }

    /// Its capacity, bytes (0 for what is not a block device). null_blk's
    /// is its default (`gb=250`).
    pub fn capacity_bytes(&self) -> u64 {
        match &self.kind {
            DeviceKind::Nvme(p) => p.capacity_bytes,
            DeviceKind::Scsi(ScsiSpec::Disk(p)) => p.capacity_bytes,
            DeviceKind::NullBlk => 250 << 30,
            DeviceKind::Dsa(_) | DeviceKind::Scsi(ScsiSpec::Host(_)) => 0,
        }
    }

    /// A first estimate of how it serves I/Os of `bs` bytes in direction
    /// `dir` (0 read, 1 write), at random places or one after another,
    /// `depth` at a time, on machine `m` (for planning a run, not for the
    /// model): from its data sheet and its driver's costs. `None` for what
    /// takes no block I/O (a DSA accelerator, a SCSI host adapter).
    pub fn service_estimate(
        &self,
        m: &Machine,
        dir: usize,
        bs: u64,
        random: bool,
        depth: u32,
    ) -> Option<ServiceEstimate> {
        let c = &m.costs;
        let irq = c.irq_entry_ns + c.irq_flow_ns + c.irq_exit_ns + c.apic_eoi_ns;
        match &self.kind {
            DeviceKind::Nvme(p) => {
                // The controller takes one command at a time (its work, then
                // the data at the drive's bandwidth); a media unit then reads
                // or writes it; the data crosses the link.
                let controller_ns = p.command_ns[dir] as f64 + bs as f64 * 1e3 / p.drive_mb_per_s[dir].max(1) as f64;
                let media_ns = (p.latency_ns[dir] + (bs / 1024).saturating_sub(4) * p.ns_per_kib[dir]) as f64;
                let link_ns = bs as f64 * 1e3 / p.link_mb_per_s.max(1) as f64;
                let busiest_ns = controller_ns.max(media_ns / p.media_units.max(1) as f64).max(link_ns);
                Some(ServiceEstimate {
                    iops: Some(1e9 / busiest_ns.max(1.0)),
                    latency_ns: p.fetch_ns as f64 + controller_ns + media_ns + link_ns,
                    driver_ns: (c.nvme_queue_rq_ns + c.dma_map_ns + c.doorbell_ns + c.nvme_cqe_ns + c.cq_doorbell_ns)
                        as f64,
                    irq_ns: irq as f64,
                })
            }
            // Completed in the submitter's softirq: the CPU is the only bound.
            DeviceKind::NullBlk => Some(ServiceEstimate {
                iops: None,
                latency_ns: 0.0,
                driver_ns: c.null_queue_rq_ns as f64,
                irq_ns: c.softirq_entry_ns as f64,
            }),
            DeviceKind::Scsi(ScsiSpec::Disk(p)) => {
                let DeviceKind::Scsi(ScsiSpec::Host(hba)) = &m.devices.get(p.host)?.kind else { return None };
                let transfer_ns = bs as f64 * 1e3 / p.media_mb_per_s.max(1) as f64;
                let link_ns = bs as f64 * 1e3 / hba.link_mb_per_s.max(1) as f64;
                // A random read waits for the head (a seek and half a turn;
                // the elevator orders the `depth` queued ones, so each seek
                // covers 1/depth of the average distance, and seek time goes
                // as its square root); a sequential one, or a write into the
                // write cache, is a cache hit; the controller and the port's
                // firmware take one command at a time.
                let from_media = random && (dir == 0 || !p.write_cache);
                let queued = depth.clamp(1, hba.queue_depth.max(1)) as f64;
                let service_ns = if from_media {
                    p.seek_ns[1] as f64 / queued.sqrt() + 30e9 / p.rpm.max(1) as f64 + transfer_ns
                } else {
                    transfer_ns.max(p.controller_ns as f64).max(link_ns)
                };
                let one_at_a_time = service_ns.max(p.controller_ns as f64).max(hba.fw_cmd_ns as f64);
                let host = [c.scsi_complete_ns, c.scsi_queue_rq_ns, c.hba_queuecommand_ns, c.hba_irq_ns, c.hba_cqe_ns];
                Some(ServiceEstimate {
                    iops: Some(1e9 / one_at_a_time.max(1.0)),
                    latency_ns: if from_media { service_ns } else { p.cache_hit_ns as f64 } + p.controller_ns as f64,
                    driver_ns: (c.dma_map_ns + host.iter().flatten().sum::<u64>()) as f64,
                    irq_ns: irq as f64,
                })
            }
            DeviceKind::Dsa(_) | DeviceKind::Scsi(ScsiSpec::Host(_)) => None,
        }
    }

    /// Its line of `blksim machines NAME`: kind, where it attaches and its model's parameters.
    pub fn describe(&self, m: &Machine) -> String {
        let d = self;
        match &d.kind {
            DeviceKind::Nvme(p) => format!(
                "device {}: nvme on {}{}, {} GiB, {} queues x {} entries, {}/{} ns per command + {}/{} MB/s r/w, {} media units, {}/{} ns r/w latency, {} MB/s link\n",
                d.name,
                m.root_ports[p.root_port].name,
                p.pcie_switch.map(|s| format!(" via {}", m.pcie_switches[s].name)).unwrap_or_default(),
                p.capacity_bytes >> 30,
                p.max_queues,
                p.max_queue_entries,
                p.command_ns[0],
                p.command_ns[1],
                p.drive_mb_per_s[0],
                p.drive_mb_per_s[1],
                p.media_units,
                p.latency_ns[0],
                p.latency_ns[1],
                p.link_mb_per_s
            ),
            DeviceKind::NullBlk => format!("device {}: null_blk\n", d.name),
            DeviceKind::Dsa(p) => format!(
                "device {}: dsa on {}, {} WQ(s), {} engines, {} ns per descriptor, {} MB/s fill per engine\n",
                d.name, m.root_ports[p.root_port].name, p.wqs, p.engines, p.descriptor_ns, p.fill_mb_per_s
            ),
            DeviceKind::Scsi(ScsiSpec::Host(p)) => format!(
                "device {}: fc_hba on {}, {} port(s), {} ns firmware per command, {} MB/s link per port, queue depth {} per LUN\n",
                d.name, m.root_ports[p.root_port].name, p.ports, p.fw_cmd_ns, p.link_mb_per_s, p.queue_depth
            ),
            DeviceKind::Scsi(ScsiSpec::Disk(p)) => format!(
                "device {}: scsi_disk (rotational=1) on {} port {}{}, {} GiB, {} rpm, seek {}/{}/{} ns track/avg/full, {} MB/s media, {} ns controller, {} MiB cache, {} KiB read-ahead, write cache {}{}\n",
                d.name,
                m.devices[p.host].name,
                p.port,
                p.target.as_ref().map(|t| format!(" (target {t})")).unwrap_or_default(),
                p.capacity_bytes >> 30,
                p.rpm,
                p.seek_ns[0],
                p.seek_ns[1],
                p.seek_ns[2],
                p.media_mb_per_s,
                p.controller_ns,
                p.cache_bytes >> 20,
                p.read_ahead_bytes >> 10,
                if p.write_cache { "on" } else { "off" },
                if p.unmap { ", thin provisioned (UNMAP)" } else { "" }
            ),
        }
    }
}

/// An interrupt-remapping hardware unit (a DRHD of the ACPI DMAR table,
/// `dmarN` in Linux): one per PCIe root complex / IIO stack, remapping the
/// interrupt messages of its root ports one at a time.
#[derive(Clone, Debug, PartialEq)]
pub struct Iommu {
    /// Its name (`dmar0`).
    pub name: String,
    /// Its socket.
    pub socket: u32,
    /// Indexes into `Machine::root_ports` of the ports behind it.
    pub root_ports: Vec<usize>,
    /// It can post interrupts (IRQ_POSTING_CAP).
    pub posting_capable: bool,
    /// Remapping one interrupt message whose IRTE is in the interrupt-entry cache, ns.
    pub remap_service_ns: u64,
    /// Posting one MSI into a PIR (IRTE cached), ns.
    pub post_service_ns: u64,
    /// Entries of its interrupt-entry cache (IRTEs), least recently used out.
    pub iec_entries: u32,
    /// Extra time to fetch an IRTE from memory on an IEC miss, ns.
    pub iec_miss_ns: u64,
}

/// A socket's interrupt delivery (on Intel Xeons the Ubox, which routes
/// device MSIs, IPIs and other interrupt messages to the cores): every
/// interrupt delivered to a core — a remappable device MSI, a posted-MSI
/// notification, an IPI — passes it, one at a time. Posted MSIs do not:
/// they are memory writes into a PIR.
#[derive(Clone, Debug, PartialEq)]
pub struct InterruptDelivery {
    /// Routing one interrupt message to its core, ns.
    pub service_ns: u64,
}

/// A platform whose MSI-X writes pass one serialisation point in the
/// root complex or the IOMMU block, one at a time, for every root port and
/// both kinds of MSI (remapped or posted): the platforms GSIM's
/// documentation describes as losing throughput past 1-3 M interrupts/s.
/// A posted write may not pass an earlier one, so the DMA writes behind an
/// MSI on its port wait for it too.
#[derive(Clone, Debug, PartialEq)]
pub struct MsiSerialisation {
    /// Retiring one MSI-X write, ns.
    pub service_ns: u64,
}

impl Machine {
    /// Every remapping unit can post interrupts (IRQ_POSTING_CAP): `intremap=posted_msi` can take effect.
    pub fn posting_capable(&self) -> bool {
        !self.iommus.is_empty() && self.iommus.iter().all(|u| u.posting_capable)
    }

    /// The device a job's `filename` names: `/dev/NAME`, or an NVMe
    /// namespace's generic char device `/dev/ngXnY` (the namespace `nvmeXnY`).
    pub fn device_of_file(&self, filename: &str) -> Option<&DeviceSpec> {
        let name = filename.strip_prefix("/dev/").unwrap_or(filename);
        let named = |n: &str| self.devices.iter().find(|d| d.name == n);
        named(name).or_else(|| named(&format!("nvme{}", name.strip_prefix("ng")?)))
    }
}

/// A resolved, validated machine.
#[derive(Clone, Debug, PartialEq)]
pub struct Machine {
    /// The profile's name.
    pub name: String,
    /// One line describing the machine.
    pub description: String,
    /// Sockets, nodes, cores, threads and last-level caches.
    pub topology: Topology,
    /// Its interrupt-remapping units.
    pub iommus: Vec<Iommu>,
    /// Each socket's interrupt delivery.
    pub interrupt_delivery: InterruptDelivery,
    /// The platform's MSI-X write serialisation, on an affected platform.
    pub msi_serialisation: Option<MsiSerialisation>,
    /// Root ports (PCIe root complex / IIO stacks) devices attach to.
    pub root_ports: Vec<RootPort>,
    /// PCIe switches between root ports and devices.
    pub pcie_switches: Vec<PcieSwitch>,
    /// Its devices, in profile order.
    pub devices: Vec<DeviceSpec>,
    /// What each operation costs.
    pub costs: Costs,
}

/// Looks up profiles by name for `extends`: the built-ins, then whatever the caller knows.
pub trait ProfileSource {
    /// The TOML text of the profile called `name`, if this source has it.
    fn profile_text(&self, name: &str) -> Option<String>;
}

/// Only the built-in profiles.
pub struct Builtins;

impl ProfileSource for Builtins {
    fn profile_text(&self, name: &str) -> Option<String> {
        BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, t)| t.to_string())
    }
}

/// Parse and resolve a profile's TOML text (`origin` names it in errors).
pub fn load_profile(text: &str, origin: &str, source: &dyn ProfileSource) -> Result<Machine, String> {
    let merged = merged_value(text, origin, source, 0)?;
    let raw: RawProfile = merged.try_into().map_err(|e: toml::de::Error| toml_error_at(text, origin, &e))?;
    resolve(raw).map_err(|e| format!("{origin}: {e}"))
}

/// A built-in profile by name.
pub fn builtin(name: &str) -> Result<Machine, String> {
    let text = Builtins
        .profile_text(name)
        .ok_or_else(|| format!("unknown machine '{name}'; built-in machines: {}", builtin_names().join(", ")))?;
    load_profile(&text, name, &Builtins)
}

/// The built-in profiles' names.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(n, _)| *n).collect()
}

/// A profile's TOML with its `extends` chain resolved (tables merged key by
/// key, everything else replaced), before validation.
pub fn merged_profile(text: &str, origin: &str, source: &dyn ProfileSource) -> Result<toml::Value, String> {
    merged_value(text, origin, source, 0)
}

fn merged_value(text: &str, origin: &str, source: &dyn ProfileSource, depth: u32) -> Result<toml::Value, String> {
    if depth > 8 {
        return Err(format!("{origin}: `extends` chain is too deep (a cycle?)"));
    }
    let mut value: toml::Value = toml::from_str(text).map_err(|e| toml_error_at(text, origin, &e))?;
    let parent = value.get("extends").and_then(|v| v.as_str()).map(str::to_string);
    if let Some(parent) = parent {
        let parent_text =
            source.profile_text(&parent).ok_or_else(|| format!("{origin}: extends unknown machine '{parent}'"))?;
        let mut base = merged_value(&parent_text, &parent, source, depth + 1)?;
        if let Some(t) = value.as_table_mut() {
            t.remove("extends");
        }
        overlay(&mut base, value);
        value = base;
    }
    Ok(value)
}

/// Tables merge key by key; anything else replaces.
fn overlay(base: &mut toml::Value, over: toml::Value) {
    match (base, over) {
        (toml::Value::Table(b), toml::Value::Table(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(slot) if slot.is_table() && v.is_table() => overlay(slot, v),
                    _ => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (b, o) => *b = o,
    }
}

fn resolve(raw: RawProfile) -> Result<Machine, String> {
    let c = &raw.cpu;
    if c.sockets == 0 || c.cores_per_socket == 0 || c.threads_per_core == 0 || c.threads_per_core > 2 {
        return Err("cpu: sockets and cores_per_socket must be >= 1 and threads_per_core 1 or 2".into());
    }
    if c.numa_nodes_per_socket == 0 || !c.cores_per_socket.is_multiple_of(c.numa_nodes_per_socket) {
        return Err("cpu: numa_nodes_per_socket must divide cores_per_socket".into());
    }
    if c.llc_per_socket == 0 || !c.cores_per_socket.is_multiple_of(c.llc_per_socket) {
        return Err("cpu: llc_per_socket must divide cores_per_socket".into());
    }
    if !(1.0..=2.0).contains(&c.smt_throughput) {
        return Err(format!("cpu: smt_throughput must be within 1.0..2.0, got {}", c.smt_throughput));
    }
    let cpus = c.sockets as u64 * c.cores_per_socket as u64 * c.threads_per_core as u64;
    if cpus > crate::settings::MAX_CPUS as u64 {
        return Err(format!(
            "cpu: {cpus} CPUs; Linux supports at most {} (sockets x cores_per_socket x threads_per_core)",
            crate::settings::MAX_CPUS
        ));
    }
    if raw.root_port.len() > MAX_DEVICES || raw.device.len() > MAX_DEVICES {
        return Err(format!("at most {MAX_DEVICES} root ports and {MAX_DEVICES} devices"));
    }
    let topology = Topology::new(
        c.sockets,
        c.cores_per_socket,
        c.threads_per_core,
        c.numa_nodes_per_socket,
        c.llc_per_socket,
        c.smt_throughput,
    );
    let mut root_ports = Vec::new();
    for rp in &raw.root_port {
        if rp.socket >= c.sockets {
            return Err(format!("root_port '{}': socket {} does not exist", rp.name, rp.socket));
        }
        rp.msi_service_ns.check(&format!("root_port '{}' msi_service_ns", rp.name))?;
        root_ports.push(RootPort {
            name: rp.name.clone(),
            socket: rp.socket,
            msi_service_ns: rp.msi_service_ns.ns,
            iommu: usize::MAX,
        });
    }
    let mut pcie_switches: Vec<PcieSwitch> = Vec::new();
    for sw in &raw.pcie_switch {
        if pcie_switches.iter().any(|x| x.name == sw.name) {
            return Err(format!("pcie_switch '{}' is defined twice", sw.name));
        }
        let root_port = root_ports
            .iter()
            .position(|r| r.name == sw.root_port)
            .ok_or_else(|| format!("pcie_switch '{}': unknown root_port '{}'", sw.name, sw.root_port))?;
        if sw.upstream_mb_per_s == 0 {
            return Err(format!("pcie_switch '{}': upstream_mb_per_s must be > 0", sw.name));
        }
        pcie_switches.push(PcieSwitch { name: sw.name.clone(), root_port, upstream_mb_per_s: sw.upstream_mb_per_s });
    }
    let mut devices = Vec::new();
    for (i, d) in raw.device.iter().enumerate() {
        let d = match &d.model {
            Some(m) => {
                let base = raw.device_model.get(m).ok_or_else(|| format!("device #{}: unknown model '{m}'", i + 1))?;
                d.clone().or(base)
            }
            None => d.clone(),
        };
        let name = d.name.clone().ok_or_else(|| format!("device #{}: missing `name`", i + 1))?;
        if devices.iter().any(|x: &DeviceSpec| x.name == name) {
            return Err(format!("device '{name}' is defined twice"));
        }
        if let Some((kind, allowed)) = DEVICE_KEYS.iter().find(|(k, _)| d.kind.as_deref() == Some(k)) {
            let common = ["name", "model", "kind"];
            if let Some(k) = d.keys().into_iter().find(|k| !common.contains(k) && !allowed.contains(k)) {
                return Err(format!(
                    "device '{name}': `{k}` is not a key of kind {kind} (its keys: {})",
                    allowed.join(", ")
                ));
            }
        }
        let kind = match d.kind.as_deref() {
            Some("nvme") => DeviceKind::Nvme(nvme_params(&name, &d, &root_ports, &pcie_switches)?),
            Some("null_blk") => DeviceKind::NullBlk,
            Some("dsa") => DeviceKind::Dsa(dsa_params(&name, &d, &root_ports)?),
            Some("fc_hba") => DeviceKind::Scsi(ScsiSpec::Host(hba_params(&name, &d, &root_ports)?)),
            Some("scsi_disk") => DeviceKind::Scsi(ScsiSpec::Disk(disk_params(&name, &d, &devices)?)),
            Some(k) => {
                return Err(format!(
                    "device '{name}': unknown kind '{k}' (expected nvme, null_blk, dsa, fc_hba or scsi_disk)"
                ))
            }
            None => return Err(format!("device '{name}': missing `kind`")),
        };
        devices.push(DeviceSpec { name, kind });
    }
    let iommus = iommu_units(&raw.iommu, &mut root_ports, c.sockets)?;
    raw.interrupt_delivery.service_ns.check("interrupt_delivery.service_ns")?;
    if let Some(m) = &raw.msi_serialisation {
        m.service_ns.check("msi_serialisation.service_ns")?;
    }
    let costs = Costs::from_table(&raw.costs)?;
    Ok(Machine {
        name: raw.name,
        description: raw.description,
        topology,
        iommus,
        interrupt_delivery: InterruptDelivery { service_ns: raw.interrupt_delivery.service_ns.ns },
        msi_serialisation: raw.msi_serialisation.map(|m| MsiSerialisation { service_ns: m.service_ns.ns }),
        root_ports,
        pcie_switches,
        devices,
        costs,
    })
}

/// The `[[iommu]]` units, each with its root ports (every port behind
/// exactly one unit of its own socket), and each port told its unit.
fn iommu_units(raw: &[RawIommu], root_ports: &mut [RootPort], sockets: u32) -> Result<Vec<Iommu>, String> {
    let mut units = Vec::new();
    for (u, r) in raw.iter().enumerate() {
        let what = format!("iommu '{}'", r.name);
        if r.socket >= sockets {
            return Err(format!("{what}: socket {} does not exist", r.socket));
        }
        for (field, cost) in [
            ("remap_service_ns", &r.remap_service_ns),
            ("post_service_ns", &r.post_service_ns),
            ("iec_miss_ns", &r.iec_miss_ns),
        ] {
            cost.check(&format!("{what} {field}"))?;
        }
        if r.iec_entries == 0 {
            return Err(format!("{what}: iec_entries must be at least 1"));
        }
        let mut ports = Vec::new();
        for name in &r.root_ports {
            let p = root_ports
                .iter()
                .position(|p| &p.name == name)
                .ok_or_else(|| format!("{what}: unknown root_port '{name}'"))?;
            if root_ports[p].iommu != usize::MAX {
                return Err(format!("{what}: root_port '{name}' is behind another unit already"));
            }
            if root_ports[p].socket != r.socket {
                return Err(format!(
                    "{what}: root_port '{name}' is on socket {}, the unit on {}",
                    root_ports[p].socket, r.socket
                ));
            }
            root_ports[p].iommu = u;
            ports.push(p);
        }
        units.push(Iommu {
            name: r.name.clone(),
            socket: r.socket,
            root_ports: ports,
            posting_capable: r.posting_capable,
            remap_service_ns: r.remap_service_ns.ns,
            post_service_ns: r.post_service_ns.ns,
            iec_entries: r.iec_entries,
            iec_miss_ns: r.iec_miss_ns.ns,
        });
    }
    if let Some(p) = root_ports.iter().find(|p| p.iommu == usize::MAX) {
        return Err(format!("root_port '{}' is behind no [[iommu]] unit (list it in one unit's root_ports)", p.name));
    }
    Ok(units)
}
/// The most root ports, and the most devices, of a machine.
const MAX_DEVICES: usize = 1024;

fn need<T: Clone>(name: &str, field: &str, v: &Option<T>) -> Result<T, String> {
    v.clone().ok_or_else(|| format!("device '{name}': needs `{field}`"))
}

fn root_port_of(name: &str, d: &RawDevice, root_ports: &[RootPort]) -> Result<usize, String> {
    let rp_name = need(name, "root_port", &d.root_port)?;
    root_ports
        .iter()
        .position(|r| r.name == rp_name)
        .ok_or_else(|| format!("device '{name}': unknown root_port '{rp_name}'"))
}

/// A cost-valued device field: its value, checked against its range.
fn need_cost(name: &str, field: &str, v: &Option<Cost>) -> Result<u64, String> {
    let c = need(name, field, v)?;
    c.check(&format!("device '{name}' {field}"))?;
    Ok(c.ns)
}

fn hba_params(name: &str, d: &RawDevice, root_ports: &[RootPort]) -> Result<HbaParams, String> {
    let p = HbaParams {
        ports: need(name, "ports", &d.ports)?,
        fw_cmd_ns: need_cost(name, "fw_cmd_ns", &d.fw_cmd_ns)?,
        link_mb_per_s: need(name, "link_mb_per_s", &d.link_mb_per_s)?,
        queue_depth: need(name, "queue_depth", &d.queue_depth)?,
        root_port: root_port_of(name, d, root_ports)?,
    };
    if !(1..=16).contains(&p.ports) || p.link_mb_per_s == 0 || !(1..=4096).contains(&p.queue_depth) {
        return Err(format!(
            "device '{name}': ports must be within 1..16, queue_depth within 1..4096 and link_mb_per_s > 0"
        ));
    }
    Ok(p)
}

fn disk_params(name: &str, d: &RawDevice, devices: &[DeviceSpec]) -> Result<DiskParams, String> {
    let host_name = need(name, "host", &d.host)?;
    let host = devices.iter().position(|x| x.name == host_name).ok_or_else(|| {
        format!("device '{name}': unknown host '{host_name}' (a host adapter listed before its disks)")
    })?;
    let DeviceKind::Scsi(ScsiSpec::Host(h)) = &devices[host].kind else {
        return Err(format!("device '{name}': host '{host_name}' is not a host adapter (kind fc_hba)"));
    };
    let port = need(name, "port", &d.port)?;
    if port >= h.ports {
        return Err(format!("device '{name}': host '{host_name}' has ports 0..{}, not {port}", h.ports));
    }
    let p = DiskParams {
        host,
        port,
        target: d.target.clone(),
        capacity_bytes: need(name, "capacity_gib", &d.capacity_gib)? << 30,
        rpm: need(name, "rpm", &d.rpm)?,
        media_mb_per_s: need(name, "media_mb_per_s", &d.media_mb_per_s)?,
        seek_ns: [
            need_cost(name, "seek_track_ns", &d.seek_track_ns)?,
            need_cost(name, "seek_avg_ns", &d.seek_avg_ns)?,
            need_cost(name, "seek_full_ns", &d.seek_full_ns)?,
        ],
        controller_ns: need_cost(name, "controller_ns", &d.controller_ns)?,
        cache_hit_ns: need_cost(name, "cache_hit_ns", &d.cache_hit_ns)?,
        latency_sigma: d.latency_sigma.unwrap_or(0.0),
        cache_bytes: need(name, "cache_mib", &d.cache_mib)? << 20,
        read_ahead_bytes: need(name, "read_ahead_kib", &d.read_ahead_kib)? << 10,
        write_cache: need(name, "write_cache", &d.write_cache)?,
        unmap: d.unmap.unwrap_or(false),
    };
    if !(3600..=20000).contains(&p.rpm) {
        return Err(format!("device '{name}': rpm must be within 3600..20000"));
    }
    if p.capacity_bytes == 0 || p.media_mb_per_s == 0 {
        return Err(format!("device '{name}': capacity_gib and media_mb_per_s must be > 0"));
    }
    if !(p.seek_ns[0] <= p.seek_ns[1] && p.seek_ns[1] <= p.seek_ns[2]) {
        return Err(format!("device '{name}': seeks must be track-to-track <= average <= full stroke"));
    }
    if !(0.0..=2.0).contains(&p.latency_sigma) {
        return Err(format!("device '{name}': latency_sigma must be within 0..2"));
    }
    if p.read_ahead_bytes > p.cache_bytes {
        return Err(format!("device '{name}': read_ahead_kib must fit in cache_mib"));
    }
    Ok(p)
}

fn dsa_params(name: &str, d: &RawDevice, root_ports: &[RootPort]) -> Result<DsaParams, String> {
    if d.pcie_switch.is_some() {
        return Err(format!("device '{name}': pcie_switch is modelled for nvme devices only"));
    }
    let p = DsaParams {
        wqs: need(name, "wqs", &d.wqs)?,
        engines: need(name, "engines", &d.engines)?,
        descriptor_ns: need(name, "descriptor_ns", &d.descriptor_ns)?,
        fill_mb_per_s: need(name, "fill_mb_per_s", &d.fill_mb_per_s)?,
        latency_sigma: need(name, "latency_sigma", &d.latency_sigma)?,
        root_port: root_port_of(name, d, root_ports)?,
    };
    if p.wqs == 0 || p.engines == 0 || p.fill_mb_per_s == 0 {
        return Err(format!("device '{name}': wqs, engines and fill_mb_per_s must be > 0"));
    }
    if !(0.0..=2.0).contains(&p.latency_sigma) {
        return Err(format!("device '{name}': latency_sigma must be within 0..2"));
    }
    if p.wqs > 64 || p.engines > 64 {
        return Err(format!("device '{name}': wqs and engines must be at most 64"));
    }
    Ok(p)
}

/// A device behind a PCIe switch takes its root port from the switch.
fn switch_of(
    name: &str,
    d: &RawDevice,
    switches: &[PcieSwitch],
    root_ports: &[RootPort],
) -> Result<(usize, Option<usize>), String> {
    let Some(sw_name) = &d.pcie_switch else {
        return Ok((root_port_of(name, d, root_ports)?, None));
    };
    let sw = switches
        .iter()
        .position(|s| &s.name == sw_name)
        .ok_or_else(|| format!("device '{name}': unknown pcie_switch '{sw_name}'"))?;
    let port = switches[sw].root_port;
    if let Some(rp) = &d.root_port {
        if *rp != root_ports[port].name {
            return Err(format!(
                "device '{name}': root_port '{rp}' is not the root port of its pcie_switch '{sw_name}' ('{}')",
                root_ports[port].name
            ));
        }
    }
    Ok((port, Some(sw)))
}

/// The controller's time per command besides its data, from the data
/// sheet's random IOPS at its block size and the drive's bandwidth.
fn command_ns(name: &str, dir: &str, iops: u64, block: u64, mb_per_s: u64) -> Result<u64, String> {
    let per_command = 1_000_000_000 / iops;
    let data = block * 1000 / mb_per_s;
    per_command.checked_sub(data).ok_or_else(|| {
        format!(
            "device '{name}': {dir}_mb_per_s = {mb_per_s} cannot carry iops_max_{dir} = {iops} commands of {block} B per second (needs at least {} MB/s)",
            (iops * block).div_ceil(1_000_000)
        )
    })
}

fn nvme_params(
    name: &str,
    d: &RawDevice,
    root_ports: &[RootPort],
    switches: &[PcieSwitch],
) -> Result<NvmeParams, String> {
    let (root_port, pcie_switch) = switch_of(name, d, switches, root_ports)?;
    let iops = [need(name, "iops_max_read", &d.iops_max_read)?, need(name, "iops_max_write", &d.iops_max_write)?];
    let drive_mb_per_s =
        [need(name, "read_mb_per_s", &d.read_mb_per_s)?, need(name, "write_mb_per_s", &d.write_mb_per_s)?];
    if iops.contains(&0) || drive_mb_per_s.contains(&0) {
        return Err(format!("device '{name}': iops_max_*, read_mb_per_s and write_mb_per_s must be > 0"));
    }
    let block = d.iops_block_size.unwrap_or(4096);
    if block == 0 || !block.is_multiple_of(512) {
        return Err(format!("device '{name}': iops_block_size must be a multiple of 512 bytes"));
    }
    let p = NvmeParams {
        capacity_bytes: need(name, "capacity_gib", &d.capacity_gib)?
            .checked_mul(1 << 30)
            .ok_or_else(|| format!("device '{name}': capacity_gib is above 16 EiB"))?,
        max_queues: need(name, "max_queues", &d.max_queues)?,
        max_queue_entries: need(name, "max_queue_entries", &d.max_queue_entries)?,
        command_ns: [
            command_ns(name, "read", iops[0], block, drive_mb_per_s[0])?,
            command_ns(name, "write", iops[1], block, drive_mb_per_s[1])?,
        ],
        drive_mb_per_s,
        media_units: need(name, "media_units", &d.media_units)?,
        latency_ns: [
            need(name, "read_latency_ns", &d.read_latency_ns)?,
            need(name, "write_latency_ns", &d.write_latency_ns)?,
        ],
        ns_per_kib: [
            need(name, "read_ns_per_kib", &d.read_ns_per_kib)?,
            need(name, "write_ns_per_kib", &d.write_ns_per_kib)?,
        ],
        latency_sigma: need(name, "latency_sigma", &d.latency_sigma)?,
        fetch_ns: need(name, "fetch_ns", &d.fetch_ns)?,
        link_mb_per_s: need(name, "link_mb_per_s", &d.link_mb_per_s)?,
        root_port,
        pcie_switch,
        volatile_write_cache: d.volatile_write_cache,
    };
    if p.max_queues == 0 || p.media_units == 0 || p.link_mb_per_s == 0 {
        return Err(format!("device '{name}': max_queues, media_units and link_mb_per_s must be > 0"));
    }
    if !(2..=65536).contains(&p.max_queue_entries) {
        return Err(format!("device '{name}': max_queue_entries must be within 2..65536"));
    }
    // NVMe queue ids are 16 bits (65535 I/O queues at most); media units are the device's dies.
    if p.max_queues > 65535 || p.media_units > 65536 {
        return Err(format!("device '{name}': max_queues must be at most 65535 and media_units at most 65536"));
    }
    if !(0.0..=2.0).contains(&p.latency_sigma) {
        return Err(format!("device '{name}': latency_sigma must be within 0..2"));
    }
    Ok(p)
}

/// A TOML error in one line: `ORIGIN:LINE:COLUMN: KEY: message`. The place
/// is the error's span in `text` (a syntax or type error read from the text),
/// or else where `text` writes the key the error names (an error found in the
/// merged profile); without either, `ORIGIN: KEY: message` (the key may come
/// from the profile `text` extends).
pub fn toml_error_at(text: &str, origin: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim().replace('\n', "; ");
    // Deserializing a value names the key in the error's text: "...\nin `costs.syscall_ns`"; an unknown
    // field is named in the message, below that key.
    let shown = e.to_string();
    let table = shown.trim_end().rsplit_once("\nin `").and_then(|(_, k)| k.strip_suffix('`').map(str::to_string));
    let unknown = message.strip_prefix("unknown field `").and_then(|m| m.split_once('`')).map(|(f, _)| f);
    let named = match (table, unknown) {
        (Some(t), Some(f)) => Some(format!("{t}.{f}")),
        (t, f) => t.or(f.map(str::to_string)),
    };
    let (place, key) = match e.span() {
        Some(span) => {
            let (line, column) = line_column(text, span.start);
            (Some((line, column)), key_on_line(text, line))
        }
        None => (named.as_deref().and_then(|k| find_key(text, k)), named),
    };
    let key = key.map_or(String::new(), |k| format!("{k}: "));
    match place {
        Some((line, column)) => format!("{origin}:{line}:{column}: {key}{message}"),
        None => format!("{origin}: {key}{message}"),
    }
}

/// 1-based line and column (in characters) of byte `at` of `text`.
fn line_column(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (before.matches('\n').count() + 1, before[line_start..].chars().count() + 1)
}

/// The table header `[a.b]` / `[[a]]` a trimmed line opens, as its dotted name.
fn header(line: &str) -> Option<&str> {
    let inner = line.strip_prefix("[[").and_then(|h| h.strip_suffix("]]"));
    inner.or_else(|| line.strip_prefix('[').and_then(|h| h.strip_suffix(']'))).map(str::trim)
}

/// The dotted key written on line `line` of `text` (`table.key`), if the line holds `key = ...`.
fn key_on_line(text: &str, line: usize) -> Option<String> {
    let mut table = None;
    for (i, l) in text.lines().enumerate().take(line) {
        let l = l.trim();
        if let Some(h) = header(l) {
            table = Some(h);
        } else if i + 1 == line {
            let key = l.split_once('=')?.0.trim();
            return Some(table.map_or(key.to_string(), |t| format!("{t}.{key}")));
        }
    }
    table.map(str::to_string)
}

/// Line and column where `text` writes dotted key `key` (array indices ignored): the key's line, or the
/// header of the table it names.
fn find_key(text: &str, key: &str) -> Option<(usize, usize)> {
    let want: Vec<&str> = key.split('.').filter(|p| p.parse::<usize>().is_err()).collect();
    let parts = |s: &str| -> Vec<String> { s.split('.').map(|p| p.trim().trim_matches('"').to_string()).collect() };
    let mut table: Vec<String> = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let column = l.len() - l.trim_start().len() + 1;
        let l = l.trim();
        let full = match header(l) {
            Some(h) => {
                table = parts(h);
                table.clone()
            }
            None => match l.split_once('=') {
                Some((k, _)) => table.iter().cloned().chain(parts(k)).collect(),
                None => continue,
            },
        };
        let prefix = !full.is_empty() && full.len() <= want.len() && want.iter().zip(&full).all(|(w, f)| w == f);
        // A key line on the path, or the header of the table the path names.
        if prefix && (full.len() == want.len() || header(l).is_none()) {
            return Some((i + 1, column));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    struct WithChild(&'static str);
    impl ProfileSource for WithChild {
        fn profile_text(&self, name: &str) -> Option<String> {
            if name == "child" {
                Some(self.0.to_string())
            } else {
                Builtins.profile_text(name)
            }
        }
    }

    #[test]
    fn builtin_profile_resolves() {
        let m = builtin("spr-gen5").unwrap();
        assert_eq!(m.topology.cpu_count(), 128);
        assert_eq!(m.devices.iter().filter(|d| matches!(d.kind, DeviceKind::Nvme(_))).count(), 8);
        assert!(m.costs.syscall_ns > 0);
    }

    #[test]
    fn extends_overrides_one_field_and_keeps_the_rest() {
        let text = "name = \"small\"\ndescription = \"d\"\nextends = \"spr-gen5\"\n[cpu]\ncores_per_socket = 8\n[costs]\nsyscall_ns = { ns = 300, min = 34, max = 400, note = \"x\" }\n";
        let m = load_profile(text, "small.toml", &Builtins).unwrap();
        assert_eq!(m.name, "small");
        assert_eq!(m.topology.cpu_count(), 16);
        assert_eq!(m.costs.syscall_ns, 300);
        assert_eq!(m.costs.irq_entry_ns, builtin("spr-gen5").unwrap().costs.irq_entry_ns);
    }

    #[test]
    fn unknown_key_is_an_error_naming_it() {
        let text = "name = \"x\"\ndescription = \"d\"\nextends = \"spr-gen5\"\n[cpu]\ncorez = 3\n";
        let e = load_profile(text, "x.toml", &Builtins).unwrap_err();
        assert!(e.contains("corez"), "{e}");
    }

    #[test]
    fn a_key_of_another_device_kind_is_an_error_naming_it_and_the_kinds_keys() {
        // A disk's spindle speed on an NVMe drive, a LUN's UNMAP on one: not
        // ignored, refused; on a SCSI disk `unmap` is taken.
        for (model, key) in [("pm1743", "rpm = 15000"), ("pm1743", "unmap = true")] {
            let text =
                format!("name = \"x\"\ndescription = \"d\"\nextends = \"spr-gen5\"\n[device_model.{model}]\n{key}\n");
            let e = load_profile(&text, "x.toml", &Builtins).unwrap_err();
            let k = key.split(' ').next().unwrap();
            assert!(e.contains(&format!("`{k}` is not a key of kind nvme")) && e.contains("read_latency_ns"), "{e}");
        }
        let thin =
            "name = \"x\"\ndescription = \"d\"\nextends = \"hp-ia64-2008\"\n[device_model.msa_lun]\nunmap = true\n";
        let m = load_profile(thin, "x.toml", &Builtins).unwrap();
        let unmaps = |m: &Machine| {
            m.devices.iter().filter(|d| matches!(&d.kind, DeviceKind::Scsi(ScsiSpec::Disk(p)) if p.unmap)).count()
        };
        assert_eq!((unmaps(&m), unmaps(&builtin("hp-ia64-2008").unwrap())), (24, 0));
    }

    #[test]
    fn cost_outside_its_range_is_an_error() {
        let text = "name = \"x\"\ndescription = \"d\"\nextends = \"spr-gen5\"\n[costs]\nsyscall_ns = { ns = 5000, min = 34, max = 400, note = \"x\" }\n";
        let e = load_profile(text, "x.toml", &Builtins).unwrap_err();
        assert!(e.contains("syscall_ns") && e.contains("34"), "{e}");
    }

    #[test]
    fn extends_chain_through_a_user_profile() {
        let src =
            WithChild("name = \"child\"\ndescription = \"c\"\nextends = \"spr-gen5\"\n[cpu]\nthreads_per_core = 1\n");
        let m = load_profile("name = \"g\"\ndescription = \"g\"\nextends = \"child\"\n", "g", &src).unwrap();
        assert_eq!(m.topology.cpu_count(), 64);
    }

    fn with(extra: &str) -> Result<Machine, String> {
        load_profile(
            &format!("name = \"x\"\ndescription = \"d\"\nextends = \"spr-gen5\"\n{extra}"),
            "x.toml",
            &Builtins,
        )
    }

    fn nvme(m: &Machine, name: &str) -> NvmeParams {
        match &m.devices.iter().find(|d| d.name == name).unwrap().kind {
            DeviceKind::Nvme(p) => p.clone(),
            _ => panic!("{name} is not nvme"),
        }
    }

    #[test]
    fn the_controller_cost_per_command_comes_from_the_data_sheet() {
        let p = nvme(&builtin("spr-gen5").unwrap(), "nvme0n1");
        // 2.0 M IOPS at 4 KiB: 500 ns per read, 315 ns of it the data at 13 GB/s.
        assert_eq!(p.command_ns[0], 500 - 4096 * 1000 / 13000);
        assert_eq!(p.drive_mb_per_s, [13000, 6600]);
        let e = with("[device_model.pm1743]\nread_mb_per_s = 5000\n").unwrap_err();
        assert!(e.contains("read_mb_per_s = 5000 cannot carry iops_max_read") && e.contains("8192 MB/s"), "{e}");
    }

    #[test]
    fn a_device_behind_a_switch_takes_its_root_port() {
        let sw = "[[pcie_switch]]\nname = \"sw0\"\nroot_port = \"iio1\"\nupstream_mb_per_s = 28000\n";
        let m =
            with(&format!("{sw}[[device]]\nname = \"nvme9n1\"\nmodel = \"pm1743\"\npcie_switch = \"sw0\"\n")).unwrap();
        let p = nvme(&m, "nvme9n1");
        assert_eq!(m.root_ports[p.root_port].name, "iio1");
        assert_eq!(p.pcie_switch, Some(0));
        let e = with(&format!(
            "{sw}[[device]]\nname = \"nvme9n1\"\nmodel = \"pm1743\"\npcie_switch = \"sw0\"\nroot_port = \"iio0\"\n"
        ))
        .unwrap_err();
        assert!(e.contains("root_port 'iio0' is not the root port of its pcie_switch 'sw0'"), "{e}");
        let e = with("[[device]]\nname = \"nvme9n1\"\nmodel = \"pm1743\"\npcie_switch = \"nope\"\n").unwrap_err();
        assert!(e.contains("unknown pcie_switch 'nope'"), "{e}");
    }
}
