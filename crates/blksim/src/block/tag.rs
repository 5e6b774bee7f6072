//! Kernel path: `blk_mq_get_tag` (`block/blk-mq-tag.c`) as a submitter
//! takes a request's tag: a driver tag, or a scheduler tag where the queue
//! has an elevator; then the request goes to the scheduler
//! (`blk_mq_sched.rs`) or straight to its driver (`issue.rs`). With no tag
//! free it waits on the hardware queue (`tag_waiters`), and a blocking
//! submitter sleeps (`fio/backend.rs`'s `job_blocks_on_tags`).

use crate::ids::{CpuId, DevId, HctxId, JobId, ReqId};
use crate::system::Sim;

impl Sim {
    /// `blk_mq_get_tag`, then the request goes to the scheduler (a
    /// scheduler tag) or straight to the driver; with no tag free it waits.
    #[inline(always)]
    pub(crate) fn blk_mq_get_tag_and_issue(&mut self, cpu: CpuId, j: JobId, req: ReqId) {
        let r = &self.reqs.reqs[req];
        let (dev, hctx) = (r.dev(), r.hctx);
        if !self.get_tag(dev, hctx, req) {
            self.jobs[j].task.tag_waits += 1;
        } else if self.devs[dev].elevator.is_some() {
            self.jobs[j].sched.pending.push(req);
        } else {
            let debt = self.driver_issue(cpu, dev, hctx, req);
            self.jobs[j].task.debt_ns += debt;
        }
    }

    /// Take a tag on `hctx` for `req`, or queue it to wait for one.
    pub(crate) fn get_tag(&mut self, dev: DevId, hctx: HctxId, req: ReqId) -> bool {
        let q = &mut self.devs[dev].queues[hctx];
        q.busy += 1;
        if q.tags_free > 0 {
            q.tags_free -= 1;
            true
        } else {
            q.tag_waiters.push_back(req);
            self.reqs.reqs[req].waiting_tag = true;
            false
        }
    }
}
