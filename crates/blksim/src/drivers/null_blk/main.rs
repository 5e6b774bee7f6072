//! Kernel path: null_blk, a block device with no hardware.
//! `null_queue_rq` → irqmode 0: `blk_mq_end_request` inside `queue_rq`;
//! 1: `blk_mq_complete_request` → BLOCK_SOFTIRQ (on the CPU that ran
//! queue_rq, raised from task context so ksoftirqd or the next irq_exit
//! runs it, or on the
//! submitter's CPU by IPI as `rq_affinity` decides); 2: an hrtimer of
//! `completion_nsec` → the local timer interrupt on the submitting CPU →
//! `end_request`. A REQ_POLLED request on a poll queue (`poll_queues`,
//! default 1) waits on the queue's `poll_list` until `null_poll` ends it.

use crate::hw::lapic::LOCAL_TIMER_VECTOR;
use crate::ids::{CpuId, DevId, ReqId};
use crate::system::{Event, Sim};

impl Sim {
    /// `null_queue_rq` for `req` on `cpu`. Returns the cost of work done inline.
    pub(crate) fn null_blk_issue(&mut self, cpu: CpuId, dev: DevId, req: ReqId) -> u64 {
        let now = self.q.now_ns();
        self.reqs.reqs[req].t_dispatch_ns = now;
        let hctx = self.reqs.reqs[req].hctx;
        if self.devs[dev].queues[hctx].polled {
            // null_queue_rq on a poll queue: onto its poll_list, ended by the next null_poll.
            self.devs[dev].account_start(now);
            self.cqe_written(dev, hctx, req);
            return 0;
        }
        // null_blk completes it at once (irqmode 0, 1) or when its timer fires (2).
        self.reqs.reqs[req].t_cqe_ns = now
            + if self.devs[dev].null_blk().is_some_and(|n| n.irqmode == 2) {
                self.devs[dev].null_blk().unwrap().completion_nsec
            } else {
                0
            };
        let d = &mut self.devs[dev];
        d.account_start(now);
        if let Some(t) = self.trace.as_mut() {
            t.queue_depth(dev.0, now, d.disk.inflight);
        }
        let nb = d.null_blk().expect("null_blk device");
        match nb.irqmode {
            0 => self.costs.blk_complete_ns + self.end_request(cpu, req),
            // blk_mq_complete_request from queue_rq: the submitter's CPU by
            // IPI when rq_affinity asks for it; with one hardware queue
            // (nr_hw_queues counts the poll queues) this CPU's BLOCK_SOFTIRQ
            // (raised from task context: ksoftirqd runs it); else inline.
            1 => match self.placement(cpu, req) {
                crate::block::Placement::Batched | crate::block::Placement::Inline => {
                    self.costs.blk_complete_ns + self.end_request(cpu, req)
                }
                crate::block::Placement::Remote => {
                    let target = self.reqs.reqs[req].submit_cpu;
                    let list = &mut self.cpus[target].done_list;
                    list.push_back(req);
                    if list.len() == 1 {
                        self.ipi_send(target);
                        self.costs.llist_add_ns + self.costs.ipi_send_ns
                    } else {
                        self.costs.llist_add_ns
                    }
                }
                // Raised from task context: pending here (the next irq_exit runs
                // it) and ksoftirqd woken, whichever comes first.
                _ => {
                    let c = &mut self.cpus[cpu];
                    c.done_list.push_back(req);
                    c.softirq_pending = true;
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
    pub(crate) fn hrtimer_expired(&mut self, cpu: CpuId, req: ReqId) {
        self.cpus[cpu].timer_expired.push_back(req);
        self.interrupt_arrived(cpu, LOCAL_TIMER_VECTOR);
    }
}
