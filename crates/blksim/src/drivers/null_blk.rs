//! Kernel path: null_blk, a block device with no hardware. `null_queue_rq` → `irqmode` 0 ends a request
//! inside `queue_rq`, 1 completes it through BLOCK_SOFTIRQ (on the CPU that
//! ran queue_rq, raised from task context so ksoftirqd runs it, or on the
//! submitter's CPU by IPI as `rq_affinity` decides), 2 arms an hrtimer
//! of `completion_nsec` whose expiry (a local timer interrupt on the
//! submitting CPU) ends it.

use crate::hw::lapic::LOCAL_TIMER_VECTOR;
use crate::system::{Event, Sim};

impl Sim {
    /// `null_queue_rq` for `req` on `cpu`. Returns the cost of work done inline.
    pub(crate) fn null_blk_issue(&mut self, cpu: u32, dev: u16, req: u32) -> u64 {
        let now = self.q.now_ns();
        self.reqs.reqs[req as usize].t_dispatch_ns = now;
        // null_blk completes it at once (irqmode 0, 1) or when its timer fires (2).
        self.reqs.reqs[req as usize].t_cqe_ns = now
            + if self.devs[dev as usize].null_blk.as_ref().is_some_and(|n| n.irqmode == 2) {
                self.devs[dev as usize].null_blk.as_ref().unwrap().completion_nsec
            } else {
                0
            };
        let d = &mut self.devs[dev as usize];
        d.account_start(now);
        if let Some(t) = self.trace.as_mut() {
            t.queue_depth(dev, now, d.disk.inflight);
        }
        let nb = d.null_blk.as_ref().expect("null_blk device");
        match nb.irqmode {
            0 => self.costs.blk_complete_ns + self.end_request(cpu, req),
            // blk_mq_complete_request from queue_rq: the submitter's CPU by
            // IPI when rq_affinity asks for it, else this CPU's BLOCK_SOFTIRQ
            // (raised from task context: ksoftirqd runs it).
            1 => match self.placement(cpu, req) {
                crate::block::Placement::Remote => {
                    let target = self.reqs.reqs[req as usize].submit_cpu;
                    let list = &mut self.cpus[target as usize].done_list;
                    list.push_back(req);
                    if list.len() == 1 {
                        self.ipi_send(target);
                        self.costs.llist_add_ns + self.costs.ipi_send_ns
                    } else {
                        self.costs.llist_add_ns
                    }
                }
                _ => {
                    let c = &mut self.cpus[cpu as usize];
                    c.done_list.push_back(req);
                    c.ksoftirqd_pending = true;
                    self.costs.llist_add_ns
                }
            },
            _ => {
                let at = now + nb.completion_nsec;
                self.q.at(at, Event::HrtimerExpired { cpu, req });
                0
            }
        }
    }

    /// An hrtimer for `req` expired on `cpu` (null_blk irqmode=2).
    pub(crate) fn hrtimer_expired(&mut self, cpu: u32, req: u32) {
        self.cpus[cpu as usize].timer_expired.push_back(req);
        self.interrupt_arrived(cpu, LOCAL_TIMER_VECTOR);
    }
}
