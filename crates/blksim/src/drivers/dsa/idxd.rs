//! Kernel path: a dmaengine client on an Intel DSA work queue (idxd). The
//! client writes a descriptor to the WQ portal (MOVDIR64B) → an engine
//! serves it → the completion record write and the WQ's MSI (`completion.rs`)
//! → idxd's interrupt handler checks completion records once per run →
//! the client's callback, which submits the next descriptor.

use super::DSA_CLIENT;
use crate::system::{Event, Sim};
use crate::workload::Direction;

impl Sim {
    /// The client hands one descriptor to its work queue.
    pub(crate) fn dsa_submit(&mut self, client: u32) {
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
        let done = self.devs[dev as usize].dsa_mut().service(now, bytes as u64);
        self.q.at(done, Event::CqeSent { dev, req });
    }

    /// The interrupt handler found a completed descriptor: the client's
    /// callback counts it and submits the next one while it runs.
    pub(crate) fn dsa_complete(&mut self, req: u32) {
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
    pub(crate) fn dsa_done(&self) -> bool {
        self.dsa_clients.iter().all(|c| c.inflight == 0 && self.q.now_ns() >= c.stop_ns)
    }
}
