//! A request (fio's io_u and the kernel's request in one): where it goes and
//! the timestamps its latencies come from. Held in a pool, allocation-free.

use crate::ids::{CpuId, DevId, DsaClientId, HctxId, IdVec, JobId, ReqId};
use crate::workload::Direction;

/// Whose I/O a request is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Owner {
    /// A fio job's io_u.
    Job(JobId),
    /// A DSA client's descriptor.
    Dsa(DsaClientId),
}

/// An io_u that is an fsync(2) or fdatasync(2) of its file (fio's
/// DDIR_SYNC, DDIR_DATASYNC) rather than data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fsync {
    /// Data: a read, write or trim.
    No,
    /// One of `fsync`/`fdatasync`'s, accounted.
    Io,
    /// `end_fsync`'s (fio's TD_FSYNCING: not accounted).
    End,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Request {
    pub owner: Owner,
    pub dir: Direction,
    pub bytes: u32,
    pub offset: u64,
    /// The device it goes to (`None`: fio's null engine, which has none).
    pub dev: Option<DevId>,
    pub hctx: HctxId,
    /// The CPU that submitted it (`rq->mq_ctx->cpu`).
    pub submit_cpu: CpuId,
    /// The CPU whose cache last wrote its command state (SCSI: where it was
    /// issued, then interrupted, then completed).
    pub cmd_cpu: CpuId,
    /// fio prepared it (slat and lat start).
    pub t_start_ns: u64,
    /// The submitting syscall handed it to the kernel (slat end, clat start).
    pub t_issue_ns: u64,
    /// It was issued to the device (block layer accounting start).
    pub t_dispatch_ns: u64,
    /// Its completion became visible to the host (CQE in memory, or the driver completed it).
    pub t_cqe_ns: u64,
    /// The block layer ended it (blk_mq_end_request).
    pub t_done_ns: u64,
    /// Bytes the device moves for this request: its own, plus those of the
    /// bios merged into it.
    pub dev_bytes: u32,
    /// Bytes of the bios merged in front of it: the device's I/O starts
    /// this much before `offset` (fio's offset of its own io_u).
    pub front_bytes: u32,
    /// The next request merged into this one: they complete with it.
    pub next_merged: Option<ReqId>,
    /// It takes no tag: merged into another request (it completes with
    /// it), or an fsync the kernel ended before any request.
    pub tagless: bool,
    /// Its bios, or a trim's Dataset Management ranges: 1, fio's
    /// `num_range` for io_uring_cmd's trim; the bios merged into it add theirs.
    pub ranges: u16,
    /// Submitted with REQ_POLLED to a poll queue.
    pub polled: bool,
    /// Waiting for a tag.
    pub waiting_tag: bool,
    /// Its IOPOLL ring's `iopoll_completed`: ended, waiting for `io_do_iopoll` to reap it.
    pub iopoll_done: bool,
    /// Which of its job's files (`Job::devs`) it goes to.
    pub file: u16,
    /// Its result's error, a negative errno (0: success).
    pub status: i32,
    /// Scratch mark while an IOPOLL pass is foreseen (drained by it).
    pub in_pass: bool,
    /// A hybrid IOPOLL ring slept for it before polling it (`REQ_F_IOPOLL_STATE`: once per request).
    pub hybrid_slept: bool,
    /// On a hybrid IOPOLL ring: when `io_rw_init_file` took it (`iopoll_start`).
    pub iopoll_start_ns: u64,
    /// An fsync's io_u (no data; `dir` is Write).
    pub fsync: Fsync,
    /// Its I/O priority (`rq->ioprio`: fio's io_u's, the job's thread's unless cmdprio gave
    /// it its own; 0 = none set, best effort).
    pub ioprio: u16,
    /// fio's `clat_prio_index`: where its latency goes in its job's per-priority statistics.
    pub prio_index: u8,
}

impl Request {
    /// fio's `ddir_rw`: a read or a write, not a trim or a sync.
    pub(crate) fn is_read_write(&self) -> bool {
        self.dir != Direction::Trim && self.fsync == Fsync::No
    }

    /// A trim sent through io_uring (`BLOCK_URING_CMD_DISCARD`) that the kernel refused:
    /// the CQE's error, which fio's io_uring engine takes as a trim of nothing done
    /// (`fio_ioring_event`: res 0, resid the whole length) before trimming with BLKDISCARD.
    pub(crate) fn async_trim_refused(&self) -> bool {
        self.dir == Direction::Trim && self.bytes == 0 && self.status < 0
    }

    fn empty() -> Request {
        Request {
            owner: Owner::Job(JobId(0)),
            dir: Direction::Read,
            bytes: 0,
            offset: 0,
            dev: None,
            hctx: HctxId(0),
            submit_cpu: CpuId(0),
            cmd_cpu: CpuId(0),
            t_start_ns: 0,
            t_issue_ns: 0,
            t_dispatch_ns: 0,
            t_cqe_ns: 0,
            t_done_ns: 0,
            dev_bytes: 0,
            front_bytes: 0,
            next_merged: None,
            tagless: false,
            ranges: 1,
            polled: false,
            waiting_tag: false,
            iopoll_done: false,
            file: 0,
            status: 0,
            in_pass: false,
            hybrid_slept: false,
            ioprio: 0,
            prio_index: 0,
            iopoll_start_ns: 0,
            fsync: Fsync::No,
        }
    }

    /// A fresh io_u of job `j` prepared at `now`: `bytes` at `offset` of its
    /// file `file` (device `dev`), in direction `dir` (an fsync's: Write, no bytes).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn io_u(
        &mut self,
        j: JobId,
        dir: Direction,
        bytes: u32,
        offset: u64,
        dev: Option<DevId>,
        file: u16,
        now: u64,
        fsync: Fsync,
    ) {
        self.owner = Owner::Job(j);
        self.dir = dir;
        self.bytes = bytes;
        self.offset = offset;
        self.dev = dev;
        self.t_start_ns = now;
        self.dev_bytes = bytes;
        self.front_bytes = 0;
        self.next_merged = None;
        self.tagless = false;
        self.polled = false;
        self.waiting_tag = false;
        self.iopoll_done = false;
        self.status = 0;
        self.file = file;
        self.ranges = 1;
        self.fsync = fsync;
        self.ioprio = 0;
        self.prio_index = 0;
    }

    /// The job whose io_u it is.
    #[inline(always)]
    pub(crate) fn job(&self) -> JobId {
        match self.owner {
            Owner::Job(j) => j,
            Owner::Dsa(c) => unreachable!("a DSA descriptor (client {c}) has no job"),
        }
    }

    /// Where the device's I/O starts: its own offset, less the bios merged in front.
    pub(crate) fn dev_offset(&self) -> u64 {
        self.offset - self.front_bytes as u64
    }

    /// fio's io_u puts its file back when it completes (`put_file_log`): all
    /// but `end_fsync`'s (`fio_io_sync` flags it IO_U_F_NO_FILE_PUT).
    pub(crate) fn puts_file(&self) -> bool {
        self.fsync != Fsync::End
    }

    /// The device of a block request (every engine's but fio's null one).
    #[inline(always)]
    pub(crate) fn dev(&self) -> DevId {
        self.dev.expect("a block request has a device")
    }
}

/// Fixed pool of requests with a free list.
#[derive(Default, Clone)]
pub(crate) struct RequestPool {
    pub reqs: IdVec<ReqId, Request>,
    free: Vec<ReqId>,
    /// Requests handed out and not yet freed (for the exactly-once invariant).
    pub live: u64,
}

impl RequestPool {
    pub(crate) fn alloc(&mut self) -> ReqId {
        self.live += 1;
        match self.free.pop() {
            Some(id) => id,
            None => {
                self.reqs.push(Request::empty());
                ReqId::of(self.reqs.len() - 1)
            }
        }
    }

    pub(crate) fn free(&mut self, id: ReqId) {
        debug_assert!(!self.free.contains(&id), "request freed twice");
        self.live -= 1;
        self.free.push(id);
    }
}
