//! Kernel path: the ioengines' system calls between the task and the block
//! layer. Submission: `io_uring_enter` (`io_submit_sqes` → `io_read` /
//! `io_write`), `io_submit` (`aio_read` / `aio_write`) or `pread` → the
//! kiocb → `blkdev_direct_IO` (`block/fops.c`): what each costs before the
//! block layer. Completion, from `blk_mq_end_request` → `bio_endio` →
//! `ki_complete`: io_uring's `io_req_task_work_add` (task_work that posts
//! the CQE), `aio_complete` (an event in the ring), or the sync syscall's
//! result → the waiting task woken when it has what it waits for
//! (`posixaio`'s, glibc's helper thread: `fio/posixaio.rs`).

use crate::fio::job::{JobState, SyncTrim};
use crate::hw::cpu::Bill;
use crate::ids::{CpuId, JobId, ReqId};
use crate::io_uring::ring::tw_run_ns;
use crate::stats::CpuStage;
use crate::system::Sim;
use crate::workload::IoEngine;

impl Sim {
    /// Cost, in the completing context, of handing `req` to its engine.
    pub(crate) fn engine_complete_cost(&self, req: ReqId) -> u64 {
        let job = &self.jobs[self.reqs.reqs[req].job()];
        if job.sync_trim == Some(SyncTrim::Issued(req)) {
            // The queue hook's BLKDISCARD: submit_bio_wait's end wakes the task (the wake-up's cost).
            return 0;
        }
        match job.cfg.ioengine {
            IoEngine::Libaio => self.costs.aio_complete_ns,
            // nvme_uring_cmd_end_io on a queue that cannot poll: task_work.
            IoEngine::IoUringCmd(_) if job.iopoll() && !self.reqs.reqs[req].polled => self.costs.io_uring_tw_add_ns,
            // io_complete_rw_iopoll: a store to iopoll_completed.
            IoEngine::IoUring(_) | IoEngine::IoUringCmd(_) if job.iopoll() => 0,
            IoEngine::IoUring(_) | IoEngine::IoUringCmd(_) => self.costs.io_uring_tw_add_ns,
            _ => 0,
        }
    }

    /// Hand a completed request to its engine (from irq, softirq or a poller on `cpu`).
    /// Returns the cost of wake-ups it caused.
    #[inline(always)]
    pub(crate) fn engine_complete(&mut self, cpu: CpuId, req: ReqId) -> u64 {
        let j = self.reqs.reqs[req].job();
        let job = &mut self.jobs[j];
        if job.sync_trim == Some(SyncTrim::Issued(req)) {
            return self.sync_trim_end_io(cpu, j, req);
        }
        if job.iopoll() {
            if job.passthru() && !self.reqs.reqs[req].polled {
                // nvme_uring_cmd_end_io: not on a poll queue, the completion
                // goes to task_work (io_uring_cmd_do_in_task_lazy), which the
                // polling task runs; io_uring_cmd_done then marks it done.
                job.engine.ring.tw_pending.push_back(req);
            } else {
                // io_complete_rw_iopoll, polled or (its polled flag cleared)
                // completed by interrupt: marked done; its ring reaps it in io_do_iopoll.
                self.reqs.reqs[req].iopoll_done = true;
            }
            let poller = self.ring_poller(j);
            if self.jobs[poller].task.spin {
                self.iopoll_poke(poller);
            }
            return 0;
        }
        if let Some(sq) = job.engine.ring.sq_thread {
            // SQPOLL: the SQ thread runs the ring's task_work (io_sq_tw) and posts the CQE.
            job.engine.ring.tw_pending.push_back(req);
            if self.jobs[sq].task.spin {
                self.iopoll_poke(sq);
            }
            return 0;
        }
        if job.engine.aio.is_some() {
            // posixaio: the pread/pwrite of the glibc helper thread that runs it returns.
            let h = crate::fio::aio::runner(&self.jobs, j, req).expect("a helper runs each posixaio request");
            return self.engine_ready(cpu, h, req);
        }
        if matches!(job.cfg.ioengine, IoEngine::Sync) {
            self.sync_io_end(j, req);
        }
        self.engine_ready(cpu, j, req)
    }

    /// fio's sync engine (`engines/sync.c`, read(2)/write(2) at the file's position):
    /// `fio_syncio_prep` seeks with lseek(2) before a read or write that does not start where
    /// its file's last one ended (`engine_pos`). An lseek's cost, ns.
    fn lseek_ns(&self) -> u64 {
        self.costs.syscall_ns + self.costs.fget_fput_ns + self.costs.llseek_ns
    }

    /// Whether the sync engine's io_u `req` needs an lseek first (a read or write off its file's position).
    fn sync_seeks(&self, j: JobId, req: ReqId) -> bool {
        let r = &self.reqs.reqs[req];
        r.is_read_write() && self.jobs[j].sync_pos.get(r.file as usize).is_some_and(|&pos| pos != r.offset)
    }

    /// `fio_io_end`: the file's position after `req`. fio takes an io_u's start and issue times
    /// after its prep, so an io_u that sought starts after its lseek (which its commit's step ran
    /// first).
    fn sync_io_end(&mut self, j: JobId, req: ReqId) {
        if self.sync_seeks(j, req) {
            let seek = self.lseek_ns();
            let r = &mut self.reqs.reqs[req];
            r.t_start_ns += seek;
            r.t_issue_ns = r.t_issue_ns.max(r.t_start_ns);
        }
        let r = &self.reqs.reqs[req];
        if r.is_read_write() {
            if let Some(pos) = self.jobs[j].sync_pos.get_mut(r.file as usize) {
                *pos = r.offset + r.bytes as u64;
            }
        }
    }

    /// `req` is done for job `j`'s task: on its CQ (task_work to run), its
    /// aio ring or its syscall's result; a task sleeping for it is woken.
    /// Returns the cost of the wake-up.
    #[inline(always)]
    pub(crate) fn engine_ready(&mut self, cpu: CpuId, j: JobId, req: ReqId) -> u64 {
        let job = &mut self.jobs[j];
        let have = if job.is_uring() {
            job.engine.ring.tw_pending.push_back(req);
            job.engine.ring.tw_pending.len()
        } else {
            job.engine.ready.push_back(req);
            job.engine.ready.len()
        } as u32;
        match job.task.state {
            JobState::Sleeping if have >= job.task.wait_for && !job.task.tag_blocked => self.wake(cpu, j),
            // fio's iolog_delay reaps as completions come.
            JobState::ReplaySpin => {
                self.iopoll_poke(j);
                0
            }
            _ => 0,
        }
    }

    /// A sync engine's syscall returning the write it waited for, on a file
    /// opened O_SYNC or O_DSYNC (`sync=1`): `blkdev_write_iter` ends with
    /// `generic_write_sync`, an fsync of the written range (`blkdev_fsync`,
    /// its flush stripped). The cost, or 0.
    pub(crate) fn write_sync_ns(&self, j: JobId) -> u64 {
        let job = &self.jobs[j];
        let Some(&req) = job.engine.ready.front().filter(|_| job.cfg.dsync && job.cfg.ioengine.is_sync()) else {
            return 0;
        };
        let r = &self.reqs.reqs[req];
        if r.dir == crate::workload::Direction::Write && r.fsync == crate::block::Fsync::No && r.status == 0 {
            self.costs.blkdev_fsync_ns
        } else {
            0
        }
    }

    /// Cost of the submitting syscall for the queued io_us (billed), and
    /// the task_work items it runs (io_uring_enter with GETEVENTS).
    #[inline(always)]
    pub(crate) fn submit_syscall_cost(&self, j: JobId, run_tw: bool) -> (Bill, u32) {
        let job = &self.jobs[j];
        let c = &self.costs;
        let mut bill = Bill::default();
        // (A trim from the queue hook: fio's BLKDISCARD, a syscall of fio's thread.)
        let in_hook = job.is_hook_trim(&job.queued);
        if job.engine.ring.sq_thread.is_some() && !in_hook {
            // SQPOLL: the commit is a store to the SQ tail; the SQ thread submits.
            return (bill, 0);
        }
        match &job.cfg.ioengine {
            IoEngine::Null => {}
            // aio_read/aio_write per io_u, in glibc (user): no syscall; the
            // helper thread's wake-up is charged when it happens.
            // (A trim: fio's BLKDISCARD from the queue hook, a syscall of fio's thread.)
            IoEngine::Posixaio if !in_hook => {
                bill.add(CpuStage::UserLoop, job.queued.len() as u64 * c.glibc_aio_enqueue_ns);
                if !job.queued.is_empty() && job.engine.aio.as_ref().is_some_and(|a| a.started == 0) {
                    // The first request creates the helper thread (pthread_create).
                    bill.add(CpuStage::Syscall, c.thread_create_ns);
                }
                return (bill, 0);
            }
            // io_uring_enter: the ring's fd taken with fdget unless registered.
            IoEngine::IoUring(o) | IoEngine::IoUringCmd(o) if !in_hook => {
                bill.add(
                    CpuStage::Syscall,
                    c.syscall_ns + c.io_uring_enter_ns + if o.register_ring { 0 } else { c.fget_fput_ns },
                );
            }
            IoEngine::Sync => {
                let seeks = job.queued.iter().filter(|&&r| self.sync_seeks(j, r)).count() as u64;
                bill.add(CpuStage::Syscall, c.syscall_ns + seeks * self.lseek_ns());
            }
            _ => {
                bill.add(CpuStage::Syscall, c.syscall_ns);
            }
        };
        if !job.queued.is_empty() && !matches!(job.cfg.ioengine, IoEngine::Null) {
            self.block_submit_cost(j, job.task.cpu, &mut bill);
        }
        let mut tw = 0;
        if run_tw && job.is_uring() && !job.iopoll() && !in_hook {
            // io_uring_enter with GETEVENTS runs pending task_work (posts CQEs).
            tw = job.engine.ring.tw_pending.len() as u32;
            bill.add(CpuStage::UringComplete, tw_run_ns(c, tw));
        }
        (bill, tw)
    }
}
