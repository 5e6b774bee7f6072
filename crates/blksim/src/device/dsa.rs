//! A DSA-like accelerator and the kernel client that drives it. Each work
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

use crate::machine::DsaParams;
use crate::run::{Event, Sim};
use crate::workload::Direction;

/// Requests whose `job` has this bit set are DSA descriptors of client `job & !DSA_CLIENT`.
pub const DSA_CLIENT: u32 = 0x8000_0000;

pub struct DsaState {
    pub params: DsaParams,
    /// Free times of the engines (min-heap).
    engines: BinaryHeap<Reverse<u64>>,
}

impl DsaState {
    pub fn new(params: DsaParams) -> DsaState {
        let engines = (0..params.engines).map(|_| Reverse(0)).collect();
        DsaState { params, engines }
    }

    /// When a descriptor arriving at `now` is complete.
    pub fn service(&mut self, now: u64, bytes: u64) -> u64 {
        let Reverse(free) = self.engines.pop().expect("engine");
        let done = now.max(free) + self.params.descriptor_ns + bytes * 1000 / self.params.fill_mb_per_s;
        self.engines.push(Reverse(done));
        done
    }
}

/// What a DSA client does (the workload of a DSA run).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DsaClientConfig {
    /// Device name, e.g. `dsa0`.
    pub device: String,
    pub wq: u32,
    /// Descriptors kept in flight.
    pub outstanding: u32,
    /// Memfill size per descriptor, bytes.
    pub bytes: u32,
    /// How long the client keeps resubmitting, ns.
    pub runtime_ns: u64,
    /// Pin the WQ's completion IRQ to this CPU (`/proc/irq/N/smp_affinity_list`).
    pub irq_cpu: Option<u32>,
}

/// A running client and what it got done.
#[derive(Clone, Debug, Default)]
pub struct DsaClient {
    pub dev: u16,
    pub wq: u16,
    pub bytes: u32,
    pub stop_ns: u64,
    pub inflight: u32,
    pub completed: u64,
    pub bytes_done: u64,
}

impl Sim {
    /// The client hands one descriptor to its work queue.
    pub fn dsa_submit(&mut self, client: u32) {
        let now = self.q.now_ns();
        let c = &mut self.dsa_clients[client as usize];
        c.inflight += 1;
        let (dev, wq, bytes) = (c.dev, c.wq, c.bytes);
        let req = self.reqs.alloc();
        let r = &mut self.reqs.reqs[req as usize];
        r.job = DSA_CLIENT | client;
        r.dir = Direction::Write;
        r.bytes = bytes;
        r.dev_bytes = bytes;
        r.next_merged = crate::block::NO_REQ;
        r.merged = false;
        r.dev = dev;
        r.hctx = wq;
        r.t_start_ns = now;
        r.t_issue_ns = now;
        r.t_dispatch_ns = now;
        r.polled = false;
        let done = self.devs[dev as usize].dsa.as_mut().expect("dsa device").service(now, bytes as u64);
        self.q.at(done, Event::CqeSent { dev, req });
    }

    /// The interrupt handler found a completed descriptor: the client's
    /// callback counts it and submits the next one while it runs.
    pub fn dsa_complete(&mut self, req: u32) {
        let now = self.q.now_ns();
        let r = self.reqs.reqs[req as usize];
        self.reqs.free(req);
        let client = r.job & !DSA_CLIENT;
        let c = &mut self.dsa_clients[client as usize];
        c.inflight -= 1;
        c.completed += 1;
        c.bytes_done += r.bytes as u64;
        if now < c.stop_ns {
            self.dsa_submit(client);
        }
    }

    /// Every client stopped and has nothing in flight.
    pub fn dsa_done(&self) -> bool {
        self.dsa_clients.iter().all(|c| c.inflight == 0 && self.q.now_ns() >= c.stop_ns)
    }
}
