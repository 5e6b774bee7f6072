//! Kernel path: io_uring handing a request to its io-wq (`io_uring/io-wq.c`).
//! IORING_OP_FSYNC must block, so `io_fsync_prep` marks it
//! REQ_F_FORCE_ASYNC: `io_submit_sqe` → `io_queue_sqe_fallback` →
//! `io_queue_iowq` → `io_wq_enqueue` (the work on the bound list under the
//! acct lock) → `io_wq_activate_free_worker` wakes the idle worker
//! (`wake_up_process`), or with none `io_wq_create_worker` →
//! `create_io_worker` → `create_io_thread` (a PF_IO_WORKER thread of the
//! submitting task, with its CPU mask). The worker (`io_wq_worker` →
//! `io_worker_handle_work` → `io_wq_submit_work` → `io_issue_sqe` →
//! `io_fsync` → `vfs_fsync_range` → `blkdev_fsync`, its flush stripped)
//! then completes the request: `io_req_complete_post` sees `lockless_cq`
//! (fio's ring is DEFER_TASKRUN) and adds it to the submitter's task_work,
//! as an interrupt's completion does.
//!
//! The model: one worker per ring, created at its first fsync and idle
//! between fsyncs (WORKER_IDLE_TIMEOUT is 5 s), placed where the scheduler
//! puts a new thread of the job (its CPU fixed at set-up); it runs on that
//! CPU's kernel-thread slot, the one the kworker uses (`sched/workqueue.rs`),
//! so it is switched in at the CPU's next scheduling point, at once on an
//! idle CPU. Not modelled: a second worker when an fsync waits behind
//! another (each takes ~blkdev_fsync_ns; fio keeps one in flight at a
//! time), the worker migrating, and its exit after 5 s idle.

use crate::hw::cpu::Work;
use crate::ids::{CpuId, JobId, ReqId};
use crate::system::Sim;

impl Sim {
    /// `io_queue_iowq` of job `j`'s fsync `req` from `cpu` (the submitting
    /// task's io_uring_enter): the work queued for the ring's worker,
    /// created first if it does not exist. Returns the submitter's cost.
    pub(crate) fn io_wq_enqueue(&mut self, cpu: CpuId, j: JobId, req: ReqId) -> u64 {
        let wq = self.jobs[j].engine.ring.io_wq.as_mut().expect("an io_uring job with syncs has an io-wq");
        let mut cost = self.costs.io_wq_enqueue_ns;
        if !std::mem::replace(&mut wq.created, true) {
            cost += self.costs.thread_create_ns;
        }
        let target = wq.cpu;
        cost + self.kworker_queue(target, Work::IoWqFsync(req), cpu)
    }
}
