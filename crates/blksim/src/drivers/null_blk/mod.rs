//! null_blk (state): a block device with no hardware; `probe` sets it up
//! as `null_add_dev` does. Its I/O path is `main.rs`.

pub(crate) mod main;

use crate::block::hctx::{HwQueue, QueueMap};
use crate::drivers::{driver_tags, Device, Driver, ProbeCtx, Probed};
use crate::error::Error;

/// `null_add_dev`: `submit_queues` hardware queues (at most one per CPU) of
/// `hw_queue_depth` tags, no interrupt, 250 GiB (null_blk's default gb=250).
pub(crate) fn probe(name: &str, ctx: &ProbeCtx) -> Result<Probed, Error> {
    let nb = ctx.settings.null_blk.clone();
    let qs = ctx.settings.queue(name);
    let nr = nb.submit_queues.min(ctx.ncpus as u32).max(1);
    // null_init: poll_queues at most one per CPU; a HCTX_TYPE_POLL map after the default one.
    let poll = nb.poll_queues.min(ctx.ncpus as u32);
    let depth = nb.hw_queue_depth;
    let tags = driver_tags(name, qs.nr_requests, depth, &format!("null_blk.hw_queue_depth={depth}"))?;
    let queues = (0..nr + poll).map(|q| HwQueue { tags_free: tags, polled: q >= nr, ..Default::default() }).collect();
    let map = QueueMap::spread(&ctx.spread_order, ctx.ncpus, nr);
    let mut device = Device::new(name, Driver::NullBlk(nb), queues, map, qs);
    device.nr_irq_queues = nr as u16;
    device.poll_map = (poll > 0).then(|| QueueMap::spread(&ctx.spread_order, ctx.ncpus, poll));
    device.capacity_bytes = 250 << 30;
    Ok(Probed { device, irqs: Vec::new() })
}
