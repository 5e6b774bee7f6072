//! A request (fio's io_u and the kernel's request in one): where it goes and
//! the timestamps its latencies come from. Held in a pool, allocation-free.

use crate::workload::Direction;

/// No request.
pub const NO_REQ: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
pub struct Request {
    pub job: u32,
    pub dir: Direction,
    pub bytes: u32,
    pub offset: u64,
    pub dev: u16,
    pub hctx: u16,
    /// The CPU that submitted it (`rq->mq_ctx->cpu`).
    pub submit_cpu: u32,
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
    /// The next request merged into this one (`NO_REQ` if none): they
    /// complete with it.
    pub next_merged: u32,
    /// Merged into another request: it takes no tag and completes with it.
    pub merged: bool,
    /// Submitted with REQ_POLLED to a poll queue.
    pub polled: bool,
    /// Waiting for a tag.
    pub waiting_tag: bool,
}

impl Request {
    fn empty() -> Request {
        Request {
            job: 0,
            dir: Direction::Read,
            bytes: 0,
            offset: 0,
            dev: 0,
            hctx: 0,
            submit_cpu: 0,
            t_start_ns: 0,
            t_issue_ns: 0,
            t_dispatch_ns: 0,
            t_cqe_ns: 0,
            t_done_ns: 0,
            dev_bytes: 0,
            next_merged: NO_REQ,
            merged: false,
            polled: false,
            waiting_tag: false,
        }
    }
}

/// Fixed pool of requests with a free list.
#[derive(Default)]
pub struct RequestPool {
    pub reqs: Vec<Request>,
    free: Vec<u32>,
    /// Requests handed out and not yet freed (for the exactly-once invariant).
    pub live: u64,
}

impl RequestPool {
    pub fn alloc(&mut self) -> u32 {
        self.live += 1;
        match self.free.pop() {
            Some(id) => id,
            None => {
                self.reqs.push(Request::empty());
                (self.reqs.len() - 1) as u32
            }
        }
    }

    pub fn free(&mut self, id: u32) {
        debug_assert!(!self.free.contains(&id), "request freed twice");
        self.live -= 1;
        self.free.push(id);
    }
}
