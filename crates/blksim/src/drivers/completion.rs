//! Kernel path: device completion. The device finishes a command (an NVMe
//! read's data crosses the link first) → its completion write (CQE,
//! completion record) goes upstream through the root port, ordered behind
//! the port's earlier interrupt messages → in host memory, visible to the
//! driver → the queue's MSI (`msi.rs`, `posted_msi.rs`), or a poller sees it.

use crate::drivers::nvme::interrupt::Signal;
use crate::ids::{DevId, HctxId, ReqId};
use crate::system::{Event, Sim};

impl Sim {
    /// A CQE write reaches its root port. Posted writes are ordered: it waits
    /// behind the port's earlier writes and MSIs. The queue (`hctx`) rides
    /// along so that the write does not reload the request.
    #[inline(always)]
    pub(crate) fn cqe_at_port(&mut self, dev: DevId, hctx: HctxId, req: ReqId) {
        let now = self.q.now_ns();
        let port = self.devs[dev].root_port;
        let rp = &mut self.hw.root_ports[port];
        if rp.free_at_ns > now || !rp.waiting.is_empty() {
            rp.waiting.push_back((dev, hctx, req));
            if !rp.wake_pending {
                rp.wake_pending = true;
                let at = rp.free_at_ns.max(now);
                self.q.at(at, Event::RootPortFree { port: port as u16 });
            }
        } else {
            self.cqe_written(dev, hctx, req);
        }
    }

    /// A root port finished its last message: let the writes behind it go,
    /// until the next MSI holds the port again.
    pub(crate) fn root_port_free(&mut self, port: usize) {
        let now = self.q.now_ns();
        self.hw.root_ports[port].wake_pending = false;
        while self.hw.root_ports[port].free_at_ns <= now {
            let Some((dev, hctx, req)) = self.hw.root_ports[port].waiting.pop_front() else {
                return;
            };
            self.cqe_written(dev, hctx, req);
        }
        let rp = &mut self.hw.root_ports[port];
        if !rp.waiting.is_empty() {
            rp.wake_pending = true;
            let at = rp.free_at_ns;
            self.q.at(at, Event::RootPortFree { port: port as u16 });
        }
    }

    /// A CQE is in host memory, visible to the driver: a poll queue's
    /// pollers see it; on an interrupt queue the device raises the queue's
    /// MSI when its interrupt generation says so (an NVMe controller holds
    /// it while an earlier one is unacknowledged; a DSA WQ signals every
    /// completion record).
    #[inline(always)]
    pub(crate) fn cqe_written(&mut self, dev: DevId, hctx: HctxId, req: ReqId) {
        let now = self.q.now_ns();
        self.reqs.reqs[req].t_cqe_ns = now;
        let d = &mut self.devs[dev];
        let q = &mut d.queues[hctx];
        q.cq.push_back(req);
        if q.polled {
            self.poll_queue_poke(dev, hctx);
            return;
        }
        let signal = d.driver.cqe_posted(hctx, now);
        self.device_signal(dev, hctx, signal);
    }

    /// Entries appeared on poll queue `hctx`: its spinning pollers look.
    pub(crate) fn poll_queue_poke(&mut self, dev: DevId, hctx: HctxId) {
        let mut i = 0;
        // A poke unregisters the poller from its queues: take them in turn.
        while let Some(&job) = self.devs[dev].queues[hctx].pollers.get(i) {
            self.iopoll_poke(job);
            if self.devs[dev].queues[hctx].pollers.get(i) == Some(&job) {
                i += 1;
            }
        }
    }

    /// Act on a device's interrupt decision for `hctx`'s vector.
    #[inline(always)]
    pub(crate) fn device_signal(&mut self, dev: DevId, hctx: HctxId, signal: Signal) {
        match signal {
            Signal::Now => {
                let irq = self.devs[dev].queues[hctx].irq.expect("an interrupt queue has an IRQ");
                self.msi_send(irq);
            }
            Signal::At { at_ns, gen } => self.q.at(at_ns, Event::NvmeAggregationTimer { dev, hctx, gen }),
            Signal::Hold => {}
        }
    }
}
