//! fio: the `posixaio` engine's state in glibc's POSIX AIO (on fio's job
//! and on each of glibc's helper threads; the engine is `posixaio.rs`).

use std::collections::VecDeque;

use crate::fio::job::Job;
use crate::ids::{IdVec, JobId, ReqId};

/// The glibc helper thread of posixaio job `j` whose pread/pwrite is `req`.
pub(crate) fn runner(jobs: &IdVec<JobId, Job>, j: JobId, req: ReqId) -> Option<JobId> {
    let helpers = &jobs[j].engine.aio.as_ref()?.helpers;
    helpers.iter().copied().find(|&h| jobs[h].engine.aio.as_ref().is_some_and(|a| a.current == Some(req)))
}

/// glibc's AIO state of a `posixaio` job (on fio's job) and of one of its
/// helper threads (on the helper).
#[derive(Clone, Debug)]
pub(crate) struct Aio {
    /// On a helper: the job it serves.
    pub peer: JobId,
    /// On fio's job: glibc's helper threads it may have (one per file with
    /// work, at most `aio_threads`), and how many were created so far (in order).
    pub helpers: Vec<JobId>,
    pub started: usize,
    /// On fio's job, per file descriptor: a request of it runs or waits on
    /// the run list, and the requests queued behind it (`next_prio`).
    pub busy: Vec<bool>,
    pub chains: Vec<VecDeque<ReqId>>,
    /// On fio's job: `runlist`, the requests a helper may take next (one per descriptor).
    pub runlist: VecDeque<ReqId>,
    /// On fio's job: its free io_u indices (`io_u_freelist`, a stack), the
    /// index of each request in flight, and the requests its `aio_suspend`
    /// waits on.
    pub free: Vec<u32>,
    pub inflight: Vec<(ReqId, u32)>,
    pub listed: Vec<ReqId>,
    /// On a helper: it waits for work on the condition variable (until it runs again).
    pub idle: bool,
    /// On a helper: idle, and already woken.
    pub woken: bool,
    /// On a helper's current step: the request it finished (handed back at
    /// the step's end) and the one whose pread/pwrite it submits; then that
    /// one until it is done.
    pub finished: Option<ReqId>,
    pub next: Option<ReqId>,
    pub current: Option<ReqId>,
}

/// fio's `SUSPEND_ENTRIES`: how many io_us its `aio_suspend` waits on.
pub(crate) const SUSPEND_ENTRIES: usize = 8;

/// glibc's default `aio_threads` (`optim.aio_threads`, aio_misc.c): the
/// most helper threads a process runs.
pub(crate) const AIO_THREADS: usize = 20;

impl Aio {
    /// The state of fio's job with `depth` io_us over `files` descriptors
    /// (`helpers` its helper threads), or of a helper (`peer` its job).
    pub(crate) fn new(peer: JobId, depth: u32, files: usize, helpers: Vec<JobId>) -> Aio {
        Aio {
            peer,
            helpers,
            started: 0,
            busy: vec![false; files],
            chains: vec![VecDeque::new(); files],
            runlist: VecDeque::new(),
            // init_io_u pushes io_u 0 first: the first popped is the last.
            free: (0..depth).collect(),
            inflight: Vec::new(),
            listed: Vec::new(),
            idle: false,
            woken: false,
            finished: None,
            next: None,
            current: None,
        }
    }

    /// The io_u index of request `r` in flight.
    pub(crate) fn index(&self, r: ReqId) -> u32 {
        self.inflight.iter().find(|e| e.0 == r).expect("a posixaio request in flight").1
    }

    /// `__aio_enqueue_request` for descriptor `file`: behind the request it
    /// has running, or onto the run list (true: a thread is wanted for it).
    pub(crate) fn enqueue(&mut self, r: ReqId, file: usize) -> bool {
        if std::mem::replace(&mut self.busy[file], true) {
            self.chains[file].push_back(r);
            false
        } else {
            self.runlist.push_back(r);
            true
        }
    }

    /// A helper finished `r` of descriptor `file`: the descriptor's next
    /// request joins the run list (`add_request_to_runlist`), or it has none.
    pub(crate) fn dequeue(&mut self, file: usize) {
        match self.chains[file].pop_front() {
            Some(next) => self.runlist.push_back(next),
            None => self.busy[file] = false,
        }
    }
}
