//! SCSI over Fibre Channel (state): a host adapter (HBA) whose ports each
//! have the firmware that processes commands one at a time, an FC link and
//! a response queue with one interrupt; the target controllers behind the
//! ports (an array controller serves its LUNs one command at a time); the
//! disks (LUNs), each a block device with one hardware queue of the
//! adapter's per-LUN depth over a rotational disk (`disk.rs`). `probe_host`
//! and `probe_disk` set them up as qla2xxx and sd do; the I/O path is in
//! `hba.rs`.

pub(crate) mod disk;
pub(crate) mod hba;

use super::{driver_tags, Device, Driver, IrqRequest, ProbeCtx, Probed};
use crate::block::hctx::{HwQueue, QueueMap};
use crate::error::Error;
use crate::ids::{DevId, HctxId};
use crate::machine::{DiskParams, HbaParams};
use crate::sim::Rng;
use disk::RotationalDisk;

/// A host adapter: its ports and the target controllers behind them.
#[derive(Clone)]
pub(crate) struct HostState {
    pub params: HbaParams,
    pub ports: Vec<PortState>,
    pub targets: Vec<Target>,
    /// The interrupt handler's CPU cost per pass and per completed command, ns.
    pub irq_ns: u64,
    pub cqe_ns: u64,
}

/// One FC port: when its firmware and its link are next free.
#[derive(Clone, Debug, Default)]
pub(crate) struct PortState {
    pub fw_free_ns: u64,
    pub link_free_ns: u64,
}

/// A target controller behind a port, serving its LUNs' commands in order.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    /// Its name in the profile (`target`); `None` for a disk that is its own target.
    pub name: Option<String>,
    pub port: u32,
    pub free_ns: u64,
}

/// A SCSI disk (`sd`): where it is, what its path costs the CPU, the disk itself.
#[derive(Clone)]
pub(crate) struct SdState {
    pub host: DevId,
    /// The host's queue (port) its commands and completions use.
    pub port: HctxId,
    /// Index into the host's targets.
    pub target: usize,
    pub controller_ns: u64,
    pub disk: RotationalDisk,
    /// CPU cost per request: `queue_rq` (SCSI midlayer, sd, the adapter's
    /// queuecommand, DMA map) and the softirq completion, ns.
    pub queue_rq_ns: u64,
    pub complete_ns: u64,
    /// Cache lines that move between CPUs: the command's, the submitter's
    /// side of the I/O, a remote wake-up's.
    pub cmd_lines: u64,
    pub bio_lines: u64,
    pub wake_lines: u64,
    /// A miss to another node's memory (the adapter's rings from another cell), ns.
    pub numa_remote_ns: u64,
}

/// `qla2x00_probe_one` for each port of host adapter `name`: a response
/// queue per port with one interrupt (not managed: on CPU 0 until user
/// space moves it). The adapter is not a block device.
pub(crate) fn probe_host(name: &str, p: &HbaParams, ctx: &ProbeCtx) -> Result<Probed, Error> {
    let c = ctx.costs;
    let need = |v, n| c.need(v, n, name).map_err(Error::bad_input);
    let host = HostState {
        params: p.clone(),
        ports: vec![PortState::default(); p.ports as usize],
        targets: Vec::new(),
        irq_ns: need(c.hba_irq_ns, "hba_irq_ns")?,
        cqe_ns: need(c.hba_cqe_ns, "hba_cqe_ns")?,
    };
    let queues = (0..p.ports).map(|_| HwQueue::default()).collect();
    let irqs = IrqRequest::unmanaged_per_queue(p.ports);
    let map = QueueMap::spread(&ctx.spread_order, ctx.ncpus, 1);
    let mut device = Device::new(name, Driver::ScsiHost(host), queues, map, ctx.settings.queue(name));
    device.root_port = p.root_port;
    Ok(Probed { device, irqs })
}

/// `sd_probe` of disk `name` behind its host adapter (device `host` of
/// `devs`, probed before it): one hardware queue of the adapter's per-LUN
/// depth, its target controller found or added behind the port.
pub(crate) fn probe_disk(name: &str, p: &DiskParams, ctx: &ProbeCtx, devs: &mut [Device]) -> Result<Probed, Error> {
    let c = ctx.costs;
    let need = |v, n| c.need(v, n, name).map_err(Error::bad_input);
    let qs = ctx.settings.queue(name);
    let hostdev = &mut devs[p.host];
    let root_port = hostdev.root_port;
    let Driver::ScsiHost(host) = &mut hostdev.driver else { unreachable!("a disk's host is a host adapter") };
    let depth = host.params.queue_depth;
    let tags = driver_tags(name, qs.nr_requests, depth, &format!("the adapter's queue depth {depth}"))?;
    let target = match host.targets.iter().position(|t| t.name.is_some() && t.name == p.target && t.port == p.port) {
        Some(t) => t,
        None => {
            host.targets.push(Target { name: p.target.clone(), port: p.port, free_ns: 0 });
            host.targets.len() - 1
        }
    };
    let rng = Rng::stream(ctx.seed, &format!("dev/{name}"));
    let sd = SdState {
        host: DevId::of(p.host),
        port: HctxId(p.port as u16),
        target,
        controller_ns: p.controller_ns,
        disk: RotationalDisk::new(p, rng),
        queue_rq_ns: need(c.scsi_queue_rq_ns, "scsi_queue_rq_ns")?
            + need(c.hba_queuecommand_ns, "hba_queuecommand_ns")?
            + if ctx.settings.dma_translated() { c.dma_map_ns } else { c.dma_direct_ns },
        complete_ns: need(c.scsi_complete_ns, "scsi_complete_ns")?,
        cmd_lines: need(c.scsi_cmd_lines, "scsi_cmd_lines")?,
        bio_lines: need(c.scsi_bio_lines, "scsi_bio_lines")?,
        wake_lines: need(c.wake_remote_lines, "wake_remote_lines")?,
        numa_remote_ns: need(c.numa_remote_ns, "numa_remote_ns")?,
    };
    let queues = vec![HwQueue { tags_free: tags, ..Default::default() }];
    let map = QueueMap::spread(&ctx.spread_order, ctx.ncpus, 1);
    let mut device = Device::new(name, Driver::ScsiDisk(Box::new(sd)), queues, map, qs);
    device.root_port = root_port;
    device.capacity_bytes = p.capacity_bytes;
    device.rotational = true;
    Ok(Probed { device, irqs: Vec::new() })
}
