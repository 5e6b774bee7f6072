//! Kernel path: submission. `io_submit` / `io_uring_enter` / `pread` →
//! per I/O: the engine's SQE or iocb, `bio_alloc` (or the plug's cached
//! request), `blk_mq_submit_bio` → `blk_attempt_plug_merge` →
//! `blk_mq_get_tag` (wait when none is free) → `blk_mq_insert_request`
//! (a scheduler: `blk_mq_sched.rs`) or `nvme_queue_rq` / `nvme_queue_rqs` /
//! `null_queue_rq` → one SQ doorbell per device and batch.

use crate::block::elevator::SchedOp;
use crate::block::merge_rules::PlugTail;
use crate::block::Fsync;
use crate::fio::job::batch_bucket;
use crate::fs::{engine_submit_ns, fsync_submit_cost};
use crate::hw::cpu::Bill;
use crate::ids::{CpuId, DevId, HctxId, JobId, ReqId};
use crate::settings::PolledUnsupported;
use crate::stats::{CpuStage, IoRecord};
use crate::system::Sim;
use crate::workload::{Direction, IoEngine};

/// `EINVAL` (22): direct I/O not aligned to the logical block.
pub(crate) const EINVAL: i32 = 22;
/// The logical block size of every modelled block device, bytes.
pub(crate) const LOGICAL_BLOCK: u32 = 512;

/// `EFAULT` (14): an io_uring_cmd whose buffer is not in the registered buffer it names.
pub(crate) const EFAULT: i32 = 14;

/// `EOPNOTSUPP` (95): what a polled bio to a queue without poll queues ends
/// with on 6.11 and later, and a trim of a device that takes no discards.
pub(crate) const EOPNOTSUPP: i32 = 95;

/// `BLK_MAX_REQUEST_COUNT`: a plug's cache and flush size.
const BLK_MAX_REQUEST_COUNT: u32 = 32;

/// `BLK_PLUG_FLUSH_SIZE`: a request this big flushes the plug when the next one is added.
const BLK_PLUG_FLUSH_SIZE: u32 = 128 * 1024;

/// A plug's list since its last flush, as its cost needs it.
#[derive(Default)]
struct PlugList {
    /// (device, queue, requests) in order of first appearance.
    queues: Vec<(DevId, HctxId, u32)>,
    count: u32,
    /// The last request added is of BLK_PLUG_FLUSH_SIZE or more.
    last_big: bool,
}

impl PlugList {
    fn add(&mut self, dev: DevId, hctx: HctxId, bytes: u32) {
        match self.queues.iter_mut().find(|q| q.0 == dev && q.1 == hctx) {
            Some(q) => q.2 += 1,
            None => self.queues.push((dev, hctx, 1)),
        }
        self.count += 1;
        self.last_big = bytes >= BLK_PLUG_FLUSH_SIZE;
    }

    /// `blk_plug_max_rq_count`: twice as many with requests for several queues.
    fn limit(&self) -> u32 {
        if self.queues.len() > 1 {
            2 * BLK_MAX_REQUEST_COUNT
        } else {
            BLK_MAX_REQUEST_COUNT
        }
    }
}

impl Sim {
    /// The block layer's and the driver's work for the job's queued io_us,
    /// foreseen as the submission will do it. A plugged batch (io_uring's
    /// `need_plug`: more than two SQEs; io_submit's AIO_PLUG_THRESHOLD) is
    /// walked as `blk_mq_submit_bio` and the plug do: the first request
    /// allocation fills the plug's cache with `min(n, 32)` requests of its
    /// queue (io_uring's `blk_start_plug_nr_ios`; libaio's plain
    /// `blk_start_plug` asks for one), a request for another queue is
    /// allocated alone, back merges ride on the previous request, the plug
    /// flushes at 32 requests (64 with several queues) or after a request
    /// of 128 KiB or more; a flush of one queue goes to `nvme_queue_rqs`
    /// (one doorbell), of several (Linux 6.10 to 6.15, before 9712c57ec111
    /// "block: avoid hctx spinlock for plug with multiple queues") to
    /// `blk_mq_dispatch_plug_list` per queue: into `hctx->dispatch` under
    /// `hctx->lock`, out again under it, `->queue_rq` for each request and
    /// a doorbell per queue; unused cached requests are freed at the end.
    /// Unplugged, each request is allocated and issued alone with its
    /// doorbell.
    pub(crate) fn block_submit_cost(&self, j: JobId, cpu: CpuId, bill: &mut Bill) -> u64 {
        let job = &self.jobs[j];
        let c = &self.costs;
        // A trim in the queue hook is the sync engines' BLKDISCARD ioctl.
        let in_hook = job.is_hook_trim(&job.queued);
        let engine = if in_hook { &IoEngine::Psync } else { &job.cfg.ioengine };
        let uring = job.is_uring() && !in_hook;
        // A passthrough command has no bio of its own to submit, merge or account.
        let passthru = job.passthru();
        let plugged = job.queued.len() > 2
            && matches!(job.cfg.ioengine, IoEngine::Libaio | IoEngine::IoUring(_) | IoEngine::IoUringCmd(_));
        let iopoll = job.iopoll();
        let fsyncs = job.fsync.is_some();
        let mut cost = 0;
        if !plugged {
            for &req in &job.queued {
                let r = &self.reqs.reqs[req];
                if fsyncs && r.fsync != Fsync::No {
                    cost += fsync_submit_cost(c, engine, bill);
                    continue;
                }
                cost += bill.add(CpuStage::UringSubmit, engine_submit_ns(c, engine, r.bytes, r.dir));
                if self.submit_errno(j, req).is_some() {
                    continue;
                }
                let dev = r.dev();
                cost += if passthru {
                    bill.add(CpuStage::Block, c.blk_mq_get_tag_ns + c.blk_rq_init_ns)
                } else if uring {
                    bill.add(
                        CpuStage::Block,
                        c.dio_bio_ns + c.blk_submit_ns + c.blk_mq_get_tag_ns + c.blk_rq_init_ns + c.blk_iostat_ns,
                    )
                } else {
                    bill.add(CpuStage::Block, c.bio_submit_ns)
                };
                // With a scheduler the driver runs when it dispatches (`blk_mq_sched.rs`); with
                // queue_affinity elsewhere, there (the hand-over is charged when it happens).
                if self.devs[dev].elevator.is_none() && self.issue_elsewhere(dev, cpu).is_none() {
                    cost += self.driver_queue_rq_bill(dev, self.job_dma_cost(j), bill);
                    cost += bill.add(CpuStage::Doorbell, self.driver_commit_cost(dev));
                }
            }
            return cost;
        }
        let mut nr_ios = if uring { (job.queued.len() as u32).min(BLK_MAX_REQUEST_COUNT) } else { 1 };
        // The plug's cached requests: (device, queue, how many left).
        let mut cached: Option<(DevId, HctxId, u32)> = None;
        // The plug list since the last flush: its queues and request count.
        let mut list = PlugList::default();
        let mut last: Option<PlugTail> = None;
        let mut block = c.blk_plug_ns;
        for &req in &job.queued {
            let r = &self.reqs.reqs[req];
            if fsyncs && r.fsync != Fsync::No {
                cost += fsync_submit_cost(c, engine, bill);
                continue;
            }
            cost += bill.add(CpuStage::UringSubmit, engine_submit_ns(c, engine, r.bytes, r.dir));
            if self.submit_errno(j, req).is_some() {
                continue;
            }
            let r = &self.reqs.reqs[req];
            let dev = r.dev();
            let (hctx, polled) = self.devs[dev].hctx_for(cpu, iopoll, r.dir == Direction::Read);
            if !passthru {
                block += c.dio_bio_ns + c.blk_submit_ns;
                if iopoll && !polled && self.blk.polled_unsupported == PolledUnsupported::Eopnotsupp {
                    continue;
                }
            }
            // blk_attempt_plug_merge: a merge into the last request.
            let bio = PlugTail::of(dev, hctx, r.dir, r.offset, r.bytes).with_ioprio(r.ioprio);
            if let Some(tail) = last.as_mut().filter(|_| !passthru) {
                if self.plug_merges(tail, &bio).is_some() {
                    continue;
                }
            }
            last = Some(bio);
            block += c.blk_rq_init_ns + if passthru { 0 } else { c.blk_iostat_ns };
            match cached {
                Some((d, h, left)) if d == dev && h == hctx && left > 0 => cached = Some((d, h, left - 1)),
                _ if nr_ios > 1 => {
                    // A fill: nr_ios requests and tags at once, one used now.
                    if let Some((_, _, left)) = cached {
                        block += left as u64 * c.blk_free_rq_ns;
                    }
                    block += c.blk_tag_batch_ns;
                    cached = Some((dev, hctx, nr_ios - 1));
                    nr_ios = 1;
                }
                _ => block += c.blk_mq_get_tag_ns,
            }
            // blk_add_rq_to_plug: a full plug (or one ending in a big request) flushes first.
            if list.count >= list.limit() || list.last_big {
                cost += self.plug_flush_cost(&list, self.job_dma_cost(j), bill);
                list = PlugList::default();
            }
            list.add(dev, hctx, r.bytes);
        }
        cost += self.plug_flush_cost(&list, self.job_dma_cost(j), bill);
        if let Some((_, _, left)) = cached {
            block += left as u64 * c.blk_free_rq_ns;
        }
        cost + bill.add(CpuStage::Block, block)
    }

    /// `blk_mq_flush_plug_list` of `list`: the driver's work per request and per queue.
    fn plug_flush_cost(&self, list: &PlugList, dma_ns: u64, bill: &mut Bill) -> u64 {
        let c = &self.costs;
        let mut cost = 0;
        let several = list.queues.len() > 1;
        for &(dev, _, n) in &list.queues {
            let n = n as u64;
            if self.devs[dev].elevator.is_some() {
                // Inserted into the scheduler; the driver runs when it dispatches (`blk_mq_sched.rs`).
                continue;
            }
            if several {
                cost += bill.add(CpuStage::Block, c.blk_plug_queue_ns);
            }
            cost += self.devs[dev].driver.queue_rqs_bill(c, n, several, dma_ns, bill);
            cost += bill.add(CpuStage::Doorbell, self.driver_commit_cost(dev));
        }
        cost
    }

    /// The errno of an I/O that fails before the block layer: direct I/O
    /// not aligned to the logical block (`blkdev_dio_invalid`: -EINVAL), a
    /// trim of a device that takes no discards (`blk_ioctl_discard`:
    /// -EOPNOTSUPP), a trim through an IOPOLL ring (`io_uring_cmd`: -EOPNOTSUPP).
    #[inline(always)]
    pub(crate) fn submit_errno(&self, j: JobId, req: ReqId) -> Option<i32> {
        let r = &self.reqs.reqs[req];
        if self.jobs[j].cfg.direct
            && (!r.bytes.is_multiple_of(LOGICAL_BLOCK) || !r.offset.is_multiple_of(LOGICAL_BLOCK as u64))
        {
            return Some(-EINVAL);
        }
        if r.dir == Direction::Trim && !self.devs[r.dev()].driver.discards() {
            return Some(-EOPNOTSUPP);
        }
        let job = &self.jobs[j];
        if r.dir == Direction::Trim && matches!(&job.cfg.ioengine, IoEngine::IoUringCmd(o) if o.fixedbufs) {
            // fio 3.42 marks its Dataset Management command IORING_URING_CMD_FIXED with the
            // io_u's registered buffer, which does not hold the range list (fio's own dsm
            // array): io_import_fixed fails the command before any request.
            return Some(-EFAULT);
        }
        if r.dir == Direction::Trim && job.iopoll() && !job.passthru() && !job.is_hook_trim(&[req]) {
            // io_uring_cmd on an IOPOLL ring: the block device's file has no uring_cmd_iopoll.
            return Some(-EOPNOTSUPP);
        }
        None
    }

    /// The submitting syscall ends: requests reach the driver and the device.
    #[inline(always)]
    pub(crate) fn job_submitted(&mut self, cpu: CpuId, j: JobId, tw: u32) {
        let reqs = std::mem::take(&mut self.jobs[j].queued);
        let n = reqs.len() as u32;
        self.submit_queued(cpu, j, &reqs);
        let job = &mut self.jobs[j];
        for _ in 0..tw {
            let r = job.engine.ring.tw_pending.pop_front().unwrap();
            job.engine.ready.push_back(r);
        }
        job.inflight += n;
        let depth = job.cur_depth();
        job.mark_depth(depth, n);
        // (fio marks a commit's batch; the null engine at iodepth 1 queues synchronously and never commits.)
        if !job.null_sync() {
            job.ts.iodepth_submit[batch_bucket(n)] += 1;
        }
        self.queue_scheduler_sections(j);
        // Reuse the allocation for the next batch.
        let mut reqs = reqs;
        reqs.clear();
        self.jobs[j].queued = reqs;
    }

    /// A task's scheduler work after its syscall's bio work, per device its
    /// requests went to (in the order they first appear): a merge lookup
    /// per bio (none with `nomerges=2`), the insertion of its requests, a
    /// run of the queue. Passthrough requests (io_uring_cmd) skip the
    /// scheduler: `blk_mq_insert_request` (`blk_mq_dispatch_plug_list` from
    /// a plug) puts them on `hctx->dispatch` holding their scheduler tag,
    /// without RQF_USE_SCHED, and the queue runs.
    #[inline(always)]
    pub(crate) fn queue_scheduler_sections(&mut self, j: JobId) {
        if self.jobs[j].sched.pending.is_empty() && self.jobs[j].sched.bio_merged.is_empty() {
            // No scheduler took any of its bios.
            return;
        }
        self.scheduler_sections(j)
    }

    #[inline(never)]
    fn scheduler_sections(&mut self, j: JobId) {
        let merged = std::mem::take(&mut self.jobs[j].sched.bio_merged);
        let pending = &self.jobs[j].sched.pending;
        let mut devs: Vec<DevId> = Vec::new();
        for d in pending.iter().map(|&r| self.reqs.reqs[r].dev()).chain(merged.iter().copied()) {
            if !devs.contains(&d) {
                devs.push(d);
            }
        }
        let passthru = self.jobs[j].passthru();
        for dev in devs {
            if passthru {
                let reqs = &self.reqs;
                let ctx = &mut self.jobs[j].sched;
                let mine = ctx.pending.extract_if(.., |r| reqs.reqs[*r].dev() == dev);
                self.devs[dev].elevator.as_mut().expect("a scheduler").dispatch.extend(mine);
                ctx.ops.push_back(SchedOp::Run(dev));
                continue;
            }
            let n = self.jobs[j].sched.pending.iter().filter(|&&r| self.reqs.reqs[r].dev() == dev).count();
            // A merge lookup per bio, the ones that merged included.
            let bios = n + merged.iter().filter(|&&d| d == dev).count();
            let merges = if self.devs[dev].queue_settings.nomerges == 2 { 0 } else { bios };
            let ctx = &mut self.jobs[j].sched;
            ctx.ops.extend(std::iter::repeat_n(SchedOp::Merge(dev), merges));
            if n > 0 {
                ctx.ops.push_back(SchedOp::Insert(dev));
                ctx.ops.push_back(SchedOp::Run(dev));
            }
        }
        let mut merged = merged;
        merged.clear();
        self.jobs[j].sched.bio_merged = merged;
    }

    /// Thread `t` (an SQ thread, glibc's AIO helper) submits the requests it
    /// took (`t`'s `queued`) for job `j` on `cpu`; the driver's follow-on
    /// work is `t`'s, which submitted.
    pub(crate) fn submit_queued_for(&mut self, cpu: CpuId, t: JobId, j: JobId) {
        let reqs = std::mem::take(&mut self.jobs[t].queued);
        let before = self.jobs[j].task.debt_ns;
        self.submit_queued(cpu, j, &reqs);
        // (The thread runs no scheduler sections of the job's.)
        self.jobs[j].sched.bio_merged.clear();
        let added = self.jobs[j].task.debt_ns - before;
        self.jobs[j].task.debt_ns = before;
        self.jobs[t].task.debt_ns += added;
        let mut reqs = reqs;
        reqs.clear();
        self.jobs[t].queued = reqs;
    }

    /// `io_submit_sqes` of `reqs` (the job's queued io_us) on `cpu`: bios,
    /// tags and the driver; on an IOPOLL ring each issued one joins the
    /// iopoll list.
    pub(crate) fn submit_queued(&mut self, cpu: CpuId, j: JobId, reqs: &[ReqId]) {
        self.submit_bios(cpu, j, reqs);
        if !matches!(self.jobs[j].cfg.ioengine, IoEngine::Null) {
            let iopoll = self.jobs[j].on_iopoll_list(reqs);
            let init_ns =
                if self.jobs[j].engine.ring.hybrid.is_some() { self.iopoll_init_ns(j, reqs.len()) } else { 0 };
            for &req in reqs {
                let r = &self.reqs.reqs[req];
                if !r.tagless && r.status == 0 {
                    self.blk_mq_get_tag_and_issue(cpu, j, req);
                }
                // io_iopoll_req_issued: on the ring's iopoll list once issued
                // (a request waiting for a tag joins when it gets one), or failed
                // as polled (-EOPNOTSUPP, marked done); one that failed before
                // any request has its CQE posted inline, not on the list.
                let r = &self.reqs.reqs[req];
                if iopoll && !r.waiting_tag && (r.status == 0 || r.iopoll_done) {
                    self.jobs[j].engine.ring.iopoll_req_issued(req, &mut self.reqs.reqs[req], init_ns);
                }
            }
        }
    }

    /// When `io_rw_init_file` took the last of `n` requests the submitting
    /// step (ending now) issued: one request's block-layer, DMA-mapping and
    /// driver path before the step's end (the last request of a batch is
    /// the one a hybrid ring's least poll time follows).
    fn iopoll_init_ns(&self, j: JobId, n: usize) -> u64 {
        let bill = &self.jobs[j].task.bill;
        let below: u64 =
            [CpuStage::UringSubmit, CpuStage::Block, CpuStage::DriverSubmit, CpuStage::Doorbell, CpuStage::DmaMap]
                .iter()
                .map(|&s| bill.0[s as usize])
                .sum();
        self.q.now_ns().saturating_sub(below / n.max(1) as u64)
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
        // (A trim in the engine's queue hook is a sync engine's: BLKDISCARD, a plain bio.)
        let in_hook = job.is_hook_trim(reqs);
        let sync = job.cfg.ioengine.is_sync() || in_hook;
        let (hipri, passthru) = (job.iopoll() && !in_hook, job.passthru());
        let uring = job.is_uring() && !in_hook;
        let is_null = matches!(job.cfg.ioengine, IoEngine::Null);
        let fsyncs = job.fsync.is_some();
        let plugged = reqs.len() > 2
            && matches!(job.cfg.ioengine, IoEngine::Libaio | IoEngine::IoUring(_) | IoEngine::IoUringCmd(_));
        let mut last = None;
        // posixaio's issue time is when glibc took the request (`aio_queued`), before its helper's pread.
        let aio = job.engine.aio.is_some() && !in_hook;
        for &req in reqs {
            let r = &mut self.reqs.reqs[req];
            r.submit_cpu = cpu;
            if !aio {
                // Sync engines take the issue time before the syscall (fio's FIO_SYNCIO).
                r.t_issue_ns = if sync { r.t_start_ns } else { now };
                if !sync {
                    self.log_issued(j, req, now);
                }
            }
            if is_null {
                self.jobs[j].engine.ready.push_back(req);
                continue;
            }
            if fsyncs && self.reqs.reqs[req].fsync != Fsync::No {
                // No request, no tag. A sync engine's fsync(2): blkdev_fsync's flush, stripped
                // (no volatile write cache), ends in submit_bio_noacct and the call returns;
                // libaio's IOCB_CMD_FSYNC (the CPU's kworker) or io_uring's FSYNC (its io-wq worker).
                let r = &mut self.reqs.reqs[req];
                r.tagless = true;
                if sync {
                    (r.t_dispatch_ns, r.t_cqe_ns, r.t_done_ns) = (now, now, now);
                    self.jobs[j].engine.ready.push_back(req);
                } else {
                    let q = if uring { self.io_wq_enqueue(cpu, j, req) } else { self.aio_fsync_queue(cpu, req) };
                    self.jobs[j].task.debt_ns += q;
                }
                continue;
            }
            if let Some(errno) = self.submit_errno(j, req) {
                let r = &mut self.reqs.reqs[req];
                // blkdev_direct_IO → blkdev_dio_invalid, or blk_ioctl_discard: the syscall fails
                // before any bio (io_uring posts the CQE inline, posixaio's helper returns it).
                r.status = errno;
                (r.t_dispatch_ns, r.t_cqe_ns, r.t_done_ns) = (now, now, now);
                if uring && !passthru && r.dir == Direction::Trim {
                    // A refused discard uring_cmd: fio takes its CQE as a trim of nothing (`async_trim_refused`).
                    r.bytes = 0;
                }
                self.jobs[j].failed += 1;
                let to = if aio { crate::fio::aio::runner(&self.jobs, j, req).unwrap_or(j) } else { j };
                self.jobs[to].engine.ready.push_back(req);
                continue;
            }
            let dev = self.reqs.reqs[req].dev();
            let read = self.reqs.reqs[req].dir == Direction::Read;
            let (hctx, polled) = self.devs[dev].hctx_for(cpu, hipri, read);
            let r = &mut self.reqs.reqs[req];
            r.hctx = hctx;
            r.polled = polled;
            // uring_cmd on a queue that cannot poll is not refused: it completes by task_work.
            if hipri && !polled && self.blk.polled_unsupported == PolledUnsupported::Eopnotsupp && !passthru {
                // 6.11+: blk_mq_submit_bio ends a REQ_POLLED bio to a queue
                // that cannot poll with BLK_STS_NOTSUPP; io_complete_rw_iopoll
                // marks it done with -EOPNOTSUPP.
                r.status = -EOPNOTSUPP;
                r.iopoll_done = true;
                (r.t_dispatch_ns, r.t_cqe_ns, r.t_done_ns) = (now, now, now);
                self.jobs[j].failed += 1;
                continue;
            }
            if plugged && !passthru && last.is_some_and(|l| self.plug_merge(l, req)) {
                continue;
            }
            // blk_mq_sched_bio_merge: into a request the scheduler holds.
            if !passthru && self.devs[dev].elevator.is_some() {
                if let Some(debt) = self.elv_bio_merge(cpu, dev, req) {
                    self.jobs[j].task.debt_ns += debt;
                    self.jobs[j].sched.bio_merged.push(dev);
                    continue;
                }
            }
            last = Some(req);
        }
    }

    /// fio logs slat as an async engine's io_u is queued (after ramp_time):
    /// `req` of job `j`, issued at `now`, to the run's I/O log if it keeps one.
    #[inline(always)]
    pub(crate) fn log_issued(&self, j: JobId, req: ReqId, now: u64) {
        if self.run.io_log.is_some() {
            self.log_issued_to(j, req, now)
        }
    }

    #[inline(never)]
    fn log_issued_to(&self, j: JobId, req: ReqId, now: u64) {
        if let Some(log) = &self.run.io_log {
            let job = &self.jobs[j];
            if job.cfg.record_ios && now >= job.ts.ramp_end_ns {
                let r = &self.reqs.reqs[req];
                let rec = IoRecord {
                    start_ns: r.t_start_ns,
                    issue_ns: now,
                    offset: r.offset,
                    bytes: r.bytes,
                    ioprio: r.ioprio,
                    ..IoRecord::default()
                };
                log.0.lock().expect("io log").issued(j.idx(), r.dir.index(), job.ts.ramp_end_ns, &rec);
            }
        }
    }
}
