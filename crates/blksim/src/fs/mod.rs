//! The ioengines' system calls in the kernel, between the task and the
//! block layer (`rw.rs`): what `io_uring_enter`, `io_submit` and `pread`
//! cost before the block layer, and `ki_complete`'s side of a completion.

pub(crate) mod rw;

use crate::machine::Costs;
use crate::workload::{Direction, IoEngine};

/// The engine's own per-I/O submission cost (before the block layer) for a
/// request of `bytes` in direction `dir`: io_uring's SQE and read/write
/// prep, libaio's iocb, a sync syscall's file reference; the file reference
/// without registered files; pinning the user pages (and dirtying them for
/// a read) without fixed buffers.
pub(crate) fn engine_submit_ns(c: &Costs, engine: &IoEngine, bytes: u32, dir: Direction) -> u64 {
    let pin = (bytes as u64).div_ceil(4096) * c.page_pin_ns;
    let dirty = if dir == Direction::Read { c.dio_dirty_ns } else { 0 };
    match engine {
        IoEngine::Libaio => c.aio_submit_ns + pin,
        // fio's trim: IORING_OP_URING_CMD with BLOCK_URING_CMD_DISCARD (blkdev_uring_cmd): a range, no pages.
        IoEngine::IoUring(o) if dir == Direction::Trim => {
            c.io_uring_sqe_ns + c.uring_cmd_prep_ns + if o.registerfiles { 0 } else { c.fget_fput_ns }
        }
        IoEngine::IoUring(o) => {
            c.io_uring_sqe_ns
                + c.io_uring_rw_ns
                + if o.registerfiles { 0 } else { c.fget_fput_ns }
                + if o.fixedbufs { 0 } else { pin + dirty }
        }
        // NVMe passthrough: io_uring_cmd_prep and nvme_uring_cmd_io build
        // the command and its request (the user buffer mapped into a bio);
        // fio's trim is a Dataset Management (Deallocate) command whose
        // buffer is its one range (16 bytes, one page pinned), not the data.
        IoEngine::IoUringCmd(o) => {
            c.io_uring_sqe_ns
                + c.uring_cmd_prep_ns
                + c.nvme_uring_cmd_ns
                + if o.registerfiles { 0 } else { c.fget_fput_ns }
                + if dir == Direction::Trim {
                    c.page_pin_ns
                } else if o.fixedbufs {
                    0
                } else {
                    pin + dirty
                }
        }
        // A trim is fio's BLKDISCARD ioctl (blk_ioctl_discard): a range, no pages to pin (what
        // the other engines' queue hooks issue too when they trim synchronously).
        IoEngine::Sync | IoEngine::Psync | IoEngine::Pvsync | IoEngine::Pvsync2 { .. } if dir == Direction::Trim => {
            c.fget_fput_ns
        }
        IoEngine::Sync | IoEngine::Psync | IoEngine::Pvsync | IoEngine::Pvsync2 { .. } => c.fget_fput_ns + pin,
        // glibc queues the request; its helper thread's pread/pwrite is the psync path.
        IoEngine::Null | IoEngine::Posixaio => 0,
    }
}

/// What an fsync io_u costs its submitting syscall: a sync engine's
/// fsync(2), `blkdev_fsync` (no kiocb, no bio of data); libaio's
/// IOCB_CMD_FSYNC, `io_submit_one` → `aio_fsync` (the fsync runs on a kworker);
/// io_uring's IORING_OP_FSYNC, the SQE and `io_fsync_prep` (no buffer; its
/// `io_queue_iowq` is `io_uring/io_wq.rs`'s).
pub(crate) fn fsync_submit_cost(c: &Costs, engine: &IoEngine, bill: &mut crate::hw::cpu::Bill) -> u64 {
    match engine {
        _ if engine.is_sync() => bill.add(crate::stats::CpuStage::Block, c.blkdev_fsync_ns),
        IoEngine::IoUring(o) => bill.add(
            crate::stats::CpuStage::UringSubmit,
            c.io_uring_sqe_ns + if o.registerfiles { 0 } else { c.fget_fput_ns },
        ),
        _ => bill.add(crate::stats::CpuStage::UringSubmit, engine_submit_ns(c, engine, 0, Direction::Write)),
    }
}
