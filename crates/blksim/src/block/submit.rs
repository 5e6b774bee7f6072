//! Kernel path: submission. `io_submit` / `io_uring_enter` / `pread` →
//! per I/O: the engine's SQE or iocb, `bio_alloc` (or the plug's cached
//! request), `blk_mq_submit_bio` → `blk_attempt_plug_merge` →
//! `blk_mq_get_tag` (wait when none is free) → `blk_mq_insert_request`
//! (mq-deadline: `elevator.rs`) or `nvme_queue_rq` / `nvme_queue_rqs` /
//! `null_queue_rq` → one SQ doorbell per device and batch.

use crate::drivers::scsi::ScsiState;
use crate::drivers::Driver;
use crate::ids::{CpuId, DevId, HctxId, JobId, ReqId};
use crate::ioengine::job::{batch_bucket, depth_bucket};
use crate::settings::PolledUnsupported;

/// `EINVAL` (22): direct I/O not aligned to the logical block.
pub(crate) const EINVAL: i32 = 22;

/// The logical block size of every modelled block device, bytes.
pub(crate) const LOGICAL_BLOCK: u32 = 512;

/// `EOPNOTSUPP` (95): what a polled bio to a queue without poll queues ends
/// with on 6.11 and later.
pub(crate) const EOPNOTSUPP: i32 = 95;
use crate::system::Sim;
use crate::workload::IoEngine;

impl Sim {
    /// The driver's cost per request on `dev`: `queue_rq`, or its share of
    /// `queue_rqs` for a plugged batch.
    pub(crate) fn driver_queue_rq_cost(&self, dev: DevId, plugged: bool) -> u64 {
        let c = &self.costs;
        match &self.devs[dev].driver {
            Driver::Nvme(_) => (if plugged { c.nvme_queue_rqs_ns } else { c.nvme_queue_rq_ns }) + c.dma_map_ns,
            Driver::Scsi(ScsiState::Disk(sd)) => sd.queue_rq_ns,
            _ => c.null_queue_rq_ns,
        }
    }

    /// The driver's cost to start a batch on `dev` (the NVMe SQ doorbell,
    /// the adapter's request-ring doorbell).
    pub(crate) fn driver_commit_cost(&self, dev: DevId) -> u64 {
        match self.devs[dev].driver {
            Driver::Nvme(_) | Driver::Scsi(_) => self.costs.doorbell_ns,
            _ => 0,
        }
    }

    /// The CPU `queue_affinity` (io-cpu-affinity-2008) makes issue `dev`'s
    /// requests, when it is not `cpu`.
    #[inline(always)]
    pub(crate) fn issue_elsewhere(&self, dev: DevId, cpu: CpuId) -> Option<CpuId> {
        self.devs[dev].queue_settings.queue_affinity.map(CpuId).filter(|&q| q != cpu)
    }

    /// Hand `req` (holding a tag of `hctx`) to the driver on `cpu`, or (with
    /// `queue_affinity` naming another CPU) hand it over to that CPU: onto
    /// its list, with a CALL_FUNCTION_SINGLE IPI if the list was empty, whose
    /// function runs the queue there (`queue_rq` in the IPI's handler).
    /// Returns the cost of work done inline (null_blk irqmode=0 completions,
    /// a SCSI command's lines reaching the issuing CPU, the hand-over).
    pub(crate) fn driver_issue(&mut self, cpu: CpuId, dev: DevId, hctx: HctxId, req: ReqId) -> u64 {
        if let Some(target) = self.issue_elsewhere(dev, cpu) {
            let list = &mut self.cpus[target].issue_list;
            list.push_back(req);
            if list.len() == 1 {
                self.ipi_send(target);
                return self.costs.llist_add_ns + self.costs.ipi_send_ns;
            }
            return self.costs.llist_add_ns;
        }
        self.driver_issue_here(cpu, dev, hctx, req)
    }

    /// The CPU cost of issuing a request handed over to this CPU: its `queue_rq` and a doorbell.
    pub(crate) fn handed_over_issue_cost(&self, req: ReqId) -> u64 {
        let dev = self.reqs.reqs[req].dev();
        self.driver_queue_rq_cost(dev, false) + self.driver_commit_cost(dev)
    }

    /// `queue_rq` of `req` on `cpu`, the CPU that runs the queue.
    pub(crate) fn driver_issue_here(&mut self, cpu: CpuId, dev: DevId, hctx: HctxId, req: ReqId) -> u64 {
        match self.devs[dev].driver {
            Driver::Nvme(_) => {
                self.nvme_issue(dev, hctx, &[req]);
                0
            }
            Driver::Scsi(_) => self.scsi_issue(cpu, dev, req),
            _ => self.null_blk_issue(cpu, dev, req),
        }
    }

    /// Per-I/O kernel cost of submitting `bytes` with this job's engine.
    /// `plugged`: the request goes in a plugged batch (more than two at once:
    /// io_uring's need_plug, io_submit's AIO_PLUG_THRESHOLD), so it comes from
    /// the plug's batch-allocated requests and the driver takes the batch via
    /// queue_rqs.
    pub(crate) fn submit_cost(&self, j: JobId, req: ReqId, plugged: bool) -> u64 {
        if matches!(self.jobs[j].cfg.ioengine, IoEngine::Null) {
            return 0;
        }
        let c = &self.costs;
        let r = &self.reqs.reqs[req];
        let pages = (r.bytes as u64).div_ceil(4096);
        let bio = if plugged { c.bio_submit_plugged_ns } else { c.bio_submit_ns };
        // With queue_affinity elsewhere the driver runs there (the hand-over is charged when it happens).
        let driver = match self.issue_elsewhere(r.dev(), self.jobs[j].cpu) {
            Some(_) => 0,
            None => self.driver_queue_rq_cost(r.dev(), plugged),
        };
        let block = bio + driver;
        let pin = pages * c.page_pin_ns;
        block
            + match &self.jobs[j].cfg.ioengine {
                IoEngine::Libaio => c.aio_submit_ns + pin,
                IoEngine::IoUring(o) | IoEngine::IoUringCmd(o) => {
                    c.io_uring_sqe_ns
                        + if o.registerfiles { 0 } else { c.fget_fput_ns }
                        + if o.fixedbufs { 0 } else { pin }
                }
                IoEngine::Sync | IoEngine::Psync | IoEngine::Pvsync2 { .. } => c.fget_fput_ns + pin,
                IoEngine::Null => 0,
            }
    }

    /// Cost of the submitting syscall for the queued io_us, and the
    /// task_work items it runs (io_uring_enter with GETEVENTS).
    #[inline(always)]
    pub(crate) fn submit_syscall_cost(&self, j: JobId, run_tw: bool) -> (u64, u32) {
        let job = &self.jobs[j];
        let mut cost = if matches!(job.cfg.ioengine, IoEngine::Null) { 0 } else { self.costs.syscall_ns };
        let plugged = job.queued.len() > 2 && matches!(job.cfg.ioengine, IoEngine::Libaio | IoEngine::IoUring(_));
        for &req in &job.queued {
            cost += self.submit_cost(j, req, plugged);
        }
        if !matches!(job.cfg.ioengine, IoEngine::Null) {
            // One doorbell per device the batch goes to (plugged: queue_rqs).
            for (i, &d) in job.devs.iter().enumerate() {
                if job.devs[..i].contains(&d) {
                    continue;
                }
                if job.queued.iter().any(|&r| self.reqs.reqs[r].dev == Some(d))
                    && self.issue_elsewhere(d, job.cpu).is_none()
                {
                    cost += self.driver_commit_cost(d);
                }
            }
        }
        let mut tw = 0;
        if run_tw && job.is_uring() && !job.iopoll() {
            // io_uring_enter with GETEVENTS runs pending task_work (posts CQEs).
            tw = job.tw_pending.len() as u32;
            cost += tw as u64 * self.costs.io_uring_cqe_ns;
        }
        (cost, tw)
    }

    /// The submitting syscall ends: requests reach the driver and the device.
    #[inline(always)]
    pub(crate) fn job_submitted(&mut self, cpu: CpuId, j: JobId, tw: u32) {
        let reqs = std::mem::take(&mut self.jobs[j].queued);
        let n = reqs.len() as u32;
        self.submit_bios(cpu, j, &reqs);
        if !matches!(self.jobs[j].cfg.ioengine, IoEngine::Null) {
            let iopoll = self.jobs[j].iopoll();
            for &req in &reqs {
                let r = &self.reqs.reqs[req];
                if !r.merged && r.status == 0 {
                    self.blk_mq_get_tag_and_issue(cpu, j, req);
                }
                // io_iopoll_req_issued: on the ring's iopoll list once issued
                // (a request waiting for a tag joins when it gets one).
                if iopoll && !self.reqs.reqs[req].waiting_tag && self.reqs.reqs[req].status != -EINVAL {
                    self.jobs[j].iopoll.push_back(req);
                }
            }
        }
        let job = &mut self.jobs[j];
        for _ in 0..tw {
            let r = job.tw_pending.pop_front().unwrap();
            job.ready.push_back(r);
        }
        job.inflight += n;
        let depth = job.cur_depth();
        job.iodepth_level[depth_bucket(depth)] += n as u64;
        job.iodepth_submit[batch_bucket(n)] += 1;
        self.queue_scheduler_sections(j);
        // Reuse the allocation for the next batch.
        let mut reqs = reqs;
        reqs.clear();
        self.jobs[j].queued = reqs;
    }

    /// `submit_bio` for each io_u on `cpu`: its issue time, its hardware
    /// queue (the POLL map for polled I/O), and a back merge into the
    /// previous request of a plugged batch (io_uring's need_plug,
    /// io_submit's AIO_PLUG_THRESHOLD) when it continues it. The null
    /// engine's io_us are done at once.
    #[inline(always)]
    fn submit_bios(&mut self, cpu: CpuId, j: JobId, reqs: &[ReqId]) {
        let now = self.q.now_ns();
        let job = &self.jobs[j];
        let (hipri, sync, direct) = (job.iopoll(), job.cfg.ioengine.is_sync(), job.cfg.direct);
        let is_null = matches!(job.cfg.ioengine, IoEngine::Null);
        let plugged = reqs.len() > 2 && matches!(job.cfg.ioengine, IoEngine::Libaio | IoEngine::IoUring(_));
        let mut last = None;
        for &req in reqs {
            let r = &mut self.reqs.reqs[req];
            // Sync engines take the issue time before the syscall (fio's FIO_SYNCIO).
            r.t_issue_ns = if sync { r.t_start_ns } else { now };
            r.submit_cpu = cpu;
            if is_null {
                self.jobs[j].ready.push_back(req);
                continue;
            }
            if direct && (!r.bytes.is_multiple_of(LOGICAL_BLOCK) || !r.offset.is_multiple_of(LOGICAL_BLOCK as u64)) {
                // blkdev_direct_IO → blkdev_dio_invalid: the read/write
                // returns -EINVAL before any bio (io_uring posts the CQE inline).
                r.status = -EINVAL;
                (r.t_dispatch_ns, r.t_cqe_ns, r.t_done_ns) = (now, now, now);
                self.jobs[j].ready.push_back(req);
                continue;
            }
            let dev = r.dev();
            let (hctx, polled) = self.devs[dev].hctx_for(cpu, hipri);
            let r = &mut self.reqs.reqs[req];
            r.hctx = hctx;
            r.polled = polled;
            if hipri && !polled && self.polled_unsupported == PolledUnsupported::Eopnotsupp {
                // 6.11+: blk_mq_submit_bio ends a REQ_POLLED bio to a queue
                // that cannot poll with BLK_STS_NOTSUPP; io_complete_rw_iopoll
                // marks it done with -EOPNOTSUPP.
                r.status = -EOPNOTSUPP;
                r.iopoll_done = true;
                (r.t_dispatch_ns, r.t_cqe_ns, r.t_done_ns) = (now, now, now);
                continue;
            }
            if plugged && last.is_some_and(|l| self.plug_merge(l, req)) {
                continue;
            }
            last = Some(req);
        }
    }

    /// `blk_mq_get_tag`, then the request goes to the scheduler (a
    /// scheduler tag) or straight to the driver; with no tag free it waits.
    #[inline(always)]
    fn blk_mq_get_tag_and_issue(&mut self, cpu: CpuId, j: JobId, req: ReqId) {
        let r = &self.reqs.reqs[req];
        let (dev, hctx) = (r.dev(), r.hctx);
        if !self.get_tag(dev, hctx, req) {
            self.jobs[j].tag_waits += 1;
        } else if self.devs[dev].elevator.is_some() {
            self.jobs[j].dd.pending.push(req);
        } else {
            let debt = self.driver_issue(cpu, dev, hctx, req);
            self.jobs[j].debt_ns += debt;
        }
    }

    /// `blk_attempt_plug_merge` (back merge): `req` continues `last` on the
    /// same device and direction and the result fits `max_sectors_kb`, so it
    /// rides with `last` and takes no tag of its own. `nomerges=2` forbids it.
    pub(crate) fn plug_merge(&mut self, last: ReqId, req: ReqId) -> bool {
        let (l, r) = (self.reqs.reqs[last], self.reqs.reqs[req]);
        let q = &self.devs[r.dev()].queue_settings;
        if q.nomerges == 2
            || l.dev() != r.dev()
            || l.dir != r.dir
            || l.hctx != r.hctx
            || l.offset + l.dev_bytes as u64 != r.offset
            || (l.dev_bytes + r.bytes) as u64 > q.max_sectors_kb as u64 * 1024
        {
            return false;
        }
        // Chain `req` at the end of `last`'s merged bios.
        let mut tail = last;
        while let Some(next) = self.reqs.reqs[tail].next_merged {
            tail = next;
        }
        self.reqs.reqs[tail].next_merged = Some(req);
        self.reqs.reqs[last].dev_bytes += r.bytes;
        self.reqs.reqs[req].merged = true;
        let d = if r.dir == crate::workload::Direction::Read { 0 } else { 1 };
        self.devs[r.dev()].disk.merges[d] += 1;
        true
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
