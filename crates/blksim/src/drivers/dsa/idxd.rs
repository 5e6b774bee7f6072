//! Kernel path: a dmaengine client on an Intel DSA work queue (idxd). The
//! client writes a descriptor to the WQ portal (MOVDIR64B) → an engine
//! serves it → the completion record write and the WQ's MSI (`completion.rs`)
//! → idxd's interrupt handler checks completion records once per run →
//! the client's callback, which submits the next descriptor.

use crate::block::Owner;
use crate::drivers::Drain;
use crate::ids::{DevId, DsaClientId, HctxId, ReqId};
use crate::system::{Event, Sim};
use crate::workload::Direction;

impl Sim {
    /// The client hands one descriptor to its work queue.
    pub(crate) fn dsa_submit(&mut self, client: DsaClientId) {
        let now = self.q.now_ns();
        let c = &mut self.dsa_clients[client];
        c.inflight += 1;
        let (dev, wq, bytes) = (c.dev, c.wq, c.bytes);
        let req = self.reqs.alloc();
        let r = &mut self.reqs.reqs[req];
        r.owner = Owner::Dsa(client);
        r.dir = Direction::Write;
        r.bytes = bytes;
        r.dev_bytes = bytes;
        r.front_bytes = 0;
        r.next_merged = None;
        r.tagless = false;
        r.dev = Some(dev);
        r.hctx = wq;
        r.t_start_ns = now;
        r.t_issue_ns = now;
        r.t_dispatch_ns = now;
        r.polled = false;
        let done = self.devs[dev].dsa_mut().service(now, bytes as u64);
        self.q.at(done, Event::CqeSent { dev, req });
    }

    /// The interrupt handler found a completed descriptor: the client's
    /// callback counts it and submits the next one while it runs.
    pub(crate) fn dsa_complete(&mut self, req: ReqId) {
        let now = self.q.now_ns();
        let r = self.reqs.reqs[req];
        self.reqs.free(req);
        let Owner::Dsa(client) = r.owner else { unreachable!("a DSA completion is a client's descriptor") };
        let c = &mut self.dsa_clients[client];
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

    /// idxd's WQ interrupt handler over the `n` completions visible (it
    /// walks its completion list once per run; later completions raise new
    /// MSIs): foreseen (`RUN = false`: the completion-record checks and
    /// callbacks, which submit the next descriptors) or run; nothing
    /// follows here.
    #[inline(always)]
    pub(crate) fn idxd_wq_irq<const RUN: bool>(&mut self, dev: DevId, wq: HctxId, n: u32) -> Drain {
        if RUN {
            for _ in 0..n {
                let req = self.devs[dev].queues[wq].cq.pop_front().expect("a completion");
                self.dsa_complete(req);
            }
            Drain::default()
        } else {
            let cost = n as u64 * (self.costs.dsa_complete_ns + self.costs.dsa_submit_ns);
            let bill = crate::hw::cpu::Bill::of(crate::stats::CpuStage::DriverComplete, cost);
            Drain { cost_ns: cost, bill, ..Drain::default() }
        }
    }
}
