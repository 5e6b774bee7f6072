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

/// Probe NVMe controller number `instance` as `nvme_setup_io_queues`
/// does: one I/O queue per CPU plus `nvme.write_queues` plus
/// `nvme.poll_queues` (up to the controller's limit; at least one queue
/// keeps an interrupt); the interrupt queues first, split into the default
/// and the read set as `nvme_calc_irq_sets` splits them (with
/// `nvme.write_queues` > 0 the default set takes writes and the read set
/// reads), each set spread over the CPUs on its own, each queue with a
/// managed vector on the first CPU of its group; poll queues without an
/// interrupt; `nvme.io_queue_depth - 1` tags per queue.
pub(crate) fn probe(name: &str, p: &NvmeParams, ctx: &ProbeCtx, instance: u32) -> Result<Probed, Error> {
    let settings = ctx.settings;
    let qs = settings.queue(name);
    let wanted = ctx.ncpus as u32 + settings.nvme_write_queues + settings.nvme_poll_queues;
    let nr_io = wanted.min(p.max_queues).max(1);
    let poll = settings.nvme_poll_queues.min(nr_io - 1);
    let nr_irq = nr_io - poll;
    let (nr_default, nr_read) = irq_sets(nr_irq, settings.nvme_write_queues);
    let depth = settings.nvme_io_queue_depth.min(p.max_queue_entries) - 1;
    let tags = driver_tags(name, qs.nr_requests, depth, &format!("the tag depth {depth} (nvme.io_queue_depth - 1)"))?;
    let map = QueueMap::spread(&ctx.spread_order, ctx.ncpus, nr_default);
    let read_map = (nr_read > 0).then(|| QueueMap::spread(&ctx.spread_order, ctx.ncpus, nr_read));
    let poll_map = (poll > 0).then(|| QueueMap::spread(&ctx.spread_order, ctx.ncpus, poll));
    let mut queues = Vec::new();
    let mut irqs = Vec::new();
    for qi in 0..nr_io {
        let mut hq = HwQueue { tags_free: tags, ..Default::default() };
        if qi < nr_irq {
            let cpu = match &read_map {
                Some(rm) if qi >= nr_default => rm.first_cpu[HctxId((qi - nr_default) as u16)],
                _ => map.first_cpu[HctxId(qi as u16)],
            };
            irqs.push(IrqRequest { queue: HctxId(qi as u16), cpu, managed: true });
        } else {
            hq.polled = true;
        }
        queues.push(hq);
    }
    let mut controller = NvmeState::new(p.clone(), Rng::stream(ctx.seed, &format!("dev/{name}")));
    let (thr, time) = settings.nvme_interrupt_coalescing.get(&format!("nvme{instance}")).copied().unwrap_or((0, 0));
    // The CQ head doorbell, a posted write, crosses the link down as an MSI crosses it up.
    controller.irq = InterruptGen::new(nr_irq as usize, Coalescing { thr, time }, ctx.costs.msi_latency_ns);
    let mut device = Device::new(name, Driver::Nvme(controller), queues, map, qs);
    device.instance = instance;
    device.root_port = p.root_port;
    device.read_map = read_map;
    device.poll_map = poll_map;
    device.nr_default_queues = nr_default as u16;
    device.nr_irq_queues = nr_irq as u16;
    device.capacity_bytes = p.capacity_bytes;
    Ok(Probed { device, irqs })
}

/// `nvme_calc_irq_sets`: the interrupt queues split into the default set
/// and the read set. Without write queues (or with one interrupt queue)
/// every queue is a default one; with as many write queues as interrupt
/// queues or more, one read queue and the rest default; else the write
/// queues are the default set and the rest read.
fn irq_sets(nr_irq: u32, write_queues: u32) -> (u32, u32) {
    if nr_irq <= 1 || write_queues == 0 {
        (nr_irq, 0)
    } else if write_queues >= nr_irq {
        (nr_irq - 1, 1)
    } else {
        (write_queues, nr_irq - write_queues)
    }
}

#[cfg(test)]
mod tests {
    use super::irq_sets;

    #[test]
    fn interrupt_queues_split_into_default_and_read_sets_as_nvme_calc_irq_sets_does() {
        assert_eq!(irq_sets(8, 0), (8, 0), "no write queues: one set");
        assert_eq!(irq_sets(1, 4), (1, 0), "one interrupt queue serves both");
        assert_eq!(irq_sets(8, 2), (2, 6), "write queues are the default set, the rest read");
        assert_eq!(irq_sets(8, 8), (7, 1), "at least one read queue");
        assert_eq!(irq_sets(8, 100), (7, 1));
    }
}
