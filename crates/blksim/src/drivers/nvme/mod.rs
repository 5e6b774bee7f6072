//! NVMe: the controller (device hardware, `controller.rs`) and the PCI
//! driver's I/O path (`pci.rs`); `probe` sets a controller up as
//! `nvme_probe` → `nvme_setup_io_queues` does.

pub(crate) mod controller;
pub(crate) mod interrupt;
pub(crate) mod pci;

use super::{driver_tags, Device, Driver, IrqRequest, ProbeCtx, Probed};
use crate::block::hctx::{HwQueue, QueueMap};
use crate::error::Error;
use crate::ids::HctxId;
use crate::machine::NvmeParams;
use crate::sim::Rng;
use controller::NvmeState;
use interrupt::{Coalescing, InterruptGen};

/// Probe NVMe controller number `instance`: one I/O queue per CPU plus
/// `nvme.poll_queues` (up to the controller's limit), the interrupt queues
/// first, each with a managed vector on the first CPU of its group; poll
/// queues without an interrupt; `nvme.io_queue_depth - 1` tags per queue.
pub(crate) fn probe(name: &str, p: &NvmeParams, ctx: &ProbeCtx, instance: u32) -> Result<Probed, Error> {
    let settings = ctx.settings;
    let qs = settings.queue(name);
    let nr_io = (ctx.ncpus as u32 + settings.nvme_poll_queues).min(p.max_queues).max(1);
    let poll = settings.nvme_poll_queues.min(nr_io - 1);
    let nr_irq = nr_io - poll;
    let depth = settings.nvme_io_queue_depth.min(p.max_queue_entries) - 1;
    let tags = driver_tags(name, qs.nr_requests, depth, &format!("the tag depth {depth} (nvme.io_queue_depth - 1)"))?;
    let map = QueueMap::spread(&ctx.spread_order, ctx.ncpus, nr_irq);
    let poll_map = (poll > 0).then(|| QueueMap::spread(&ctx.spread_order, ctx.ncpus, poll));
    let mut queues = Vec::new();
    let mut irqs = Vec::new();
    for qi in 0..nr_io {
        let mut hq = HwQueue { tags_free: tags, ..Default::default() };
        if qi < nr_irq {
            let name = format!("nvme{instance}q{}", qi + 1);
            irqs.push(IrqRequest { queue: HctxId(qi as u16), cpu: map.first_cpu[qi as usize], name, managed: true });
        } else {
            hq.polled = true;
        }
        queues.push(hq);
    }
    let mut controller = NvmeState::new(p.clone(), Rng::stream(ctx.seed, &format!("dev/{name}")));
    let (thr, time) = settings.nvme_interrupt_coalescing.get(&format!("nvme{instance}")).copied().unwrap_or((0, 0));
    controller.irq = InterruptGen::new(nr_irq as usize, Coalescing { thr, time });
    let mut device = Device::new(name, Driver::Nvme(controller), queues, map, qs);
    device.instance = instance;
    device.root_port = p.root_port;
    device.poll_map = poll_map;
    device.nr_irq_queues = nr_irq as u16;
    device.capacity_bytes = p.capacity_bytes;
    Ok(Probed { device, irqs })
}
