//! A DSA-like accelerator (state): its engines, the kernel clients that
//! drive it, and its probe (the flows are in `idxd.rs`). Each work
//! queue has one MSI-X vector (not managed: its affinity can be set from
//! user space). A client keeps `outstanding` memfill descriptors in flight on
//! one WQ; the device's engines serve descriptors in order of arrival
//! (descriptor time plus the fill at the engine's bandwidth), write the
//! completion record and raise the WQ's MSI — one per completion. The
//! interrupt handler checks completion records and the client's callback
//! submits the next descriptor, so the rate is set by the whole loop: device,
//! interrupt path and the CPU that takes the interrupts.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{Device, Driver, IrqRequest, ProbeCtx, Probed};
use crate::block::hctx::{HwQueue, QueueMap};
use crate::ids::{DevId, HctxId};
use crate::machine::DsaParams;
use crate::sim::Rng;

pub(crate) mod idxd;

#[derive(Clone)]
pub(crate) struct DsaState {
    pub params: DsaParams,
    /// Free times of the engines (min-heap).
    engines: BinaryHeap<Reverse<u64>>,
    rng: Rng,
}

impl DsaState {
    pub(crate) fn new(params: DsaParams, rng: Rng) -> DsaState {
        let engines = (0..params.engines).map(|_| Reverse(0)).collect();
        DsaState { params, engines, rng }
    }

    /// When a descriptor arriving at `now` is complete: its descriptor
    /// time and fill, spread log-normally (`latency_sigma`).
    pub(crate) fn service(&mut self, now: u64, bytes: u64) -> u64 {
        let Reverse(free) = self.engines.pop().expect("engine");
        let p = &self.params;
        let base = p.descriptor_ns + bytes * 1000 / p.fill_mb_per_s;
        let t = (base as f64 * self.rng.lognormal_factor(p.latency_sigma)) as u64;
        let done = now.max(free) + t;
        self.engines.push(Reverse(done));
        done
    }
}

/// A running client and what it got done.
#[derive(Clone, Debug, Default)]
pub(crate) struct DsaClient {
    pub dev: DevId,
    pub wq: HctxId,
    pub bytes: u32,
    pub stop_ns: u64,
    pub inflight: u32,
    pub completed: u64,
    pub bytes_done: u64,
}

/// Probe DSA device number `instance`: one MSI-X vector per WQ, not
/// managed, on CPU 0 until user space moves it.
pub(crate) fn probe(name: &str, p: &DsaParams, ctx: &ProbeCtx, instance: u32) -> Probed {
    let queues = (0..p.wqs).map(|_| HwQueue::default()).collect();
    let irqs = IrqRequest::unmanaged_per_queue(p.wqs);
    let map = QueueMap::spread(&ctx.spread_order, ctx.ncpus, 1);
    let state = DsaState::new(p.clone(), Rng::stream(ctx.seed, &format!("dev/{name}")));
    let mut device = Device::new(name, Driver::Dsa(state), queues, map, ctx.settings.queue(name));
    device.instance = instance;
    device.root_port = p.root_port;
    Probed { device, irqs }
}
