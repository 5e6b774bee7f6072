//! fio: the `posixaio` engine's state in glibc's POSIX AIO (on fio's job
//! and on glibc's helper thread; the engine is `posixaio.rs`).

use std::collections::VecDeque;

use crate::ids::{JobId, ReqId};

/// glibc's AIO state of a `posixaio` job (on fio's job) and of its helper
/// thread (on the helper).
#[derive(Clone, Debug)]
pub(crate) struct Aio {
    /// On fio's job: its helper thread; on the helper: the job it serves.
    pub peer: JobId,
    /// On fio's job: requests `aio_read`/`aio_write` queued that the helper
    /// has not taken yet (the descriptor's `next_prio` list).
    pub pending: VecDeque<ReqId>,
    /// On fio's job: its free io_u indices (`io_u_freelist`, a stack), the
    /// index of each request in flight, and the requests its `aio_suspend`
    /// waits on.
    pub free: Vec<u32>,
    pub inflight: Vec<(ReqId, u32)>,
    pub listed: Vec<ReqId>,
    /// On fio's job: its helper thread was created (at the first request).
    pub created: bool,
    /// On the helper: it waits for work on the condition variable (until it runs again).
    pub idle: bool,
    /// On the helper: idle, and already woken.
    pub woken: bool,
    /// On the helper's current step: the request it finished (handed back at
    /// the step's end) and the one whose pread/pwrite it submits.
    pub finished: Option<ReqId>,
    pub next: Option<ReqId>,
}

/// fio's `SUSPEND_ENTRIES`: how many io_us its `aio_suspend` waits on.
pub(crate) const SUSPEND_ENTRIES: usize = 8;

impl Aio {
    /// The state of fio's job with `depth` io_us (`peer` its helper), or of
    /// a helper (`depth` 0, `peer` its job).
    pub(crate) fn new(peer: JobId, depth: u32) -> Aio {
        Aio {
            peer,
            pending: VecDeque::new(),
            // init_io_u pushes io_u 0 first: the first popped is the last.
            free: (0..depth).collect(),
            inflight: Vec::new(),
            listed: Vec::new(),
            created: false,
            idle: false,
            woken: false,
            finished: None,
            next: None,
        }
    }

    /// The io_u index of request `r` in flight.
    pub(crate) fn index(&self, r: ReqId) -> u32 {
        self.inflight.iter().find(|e| e.0 == r).expect("a posixaio request in flight").1
    }
}
