//! fio: `io_submit_mode=offload`'s state (`workqueue.c`): on fio's job
//! its submit workers, on each worker its work list and whether it is
//! idle; the flow is `rate_submit.rs`.

use std::collections::VecDeque;

use crate::ids::{JobId, ReqId};

/// fio's workqueue of a job with `io_submit_mode=offload`, or one of its
/// submit workers.
#[derive(Clone, Debug)]
pub(crate) enum Offload {
    /// On fio's job: `struct workqueue`.
    Queue(Workqueue),
    /// On a worker thread: `struct submit_worker`.
    Worker(SubmitWorker),
}

/// `struct workqueue` as fio's thread uses it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Workqueue {
    /// Its `iodepth` workers, by index.
    pub workers: Vec<JobId>,
    /// `next_free_worker`: where `get_submit_worker` starts looking.
    pub next_free_worker: usize,
    /// `work_seq`: bumped at each enqueue.
    pub work_seq: u64,
    /// fio's thread waits in `pthread_cond_wait` (for a free io_u, or
    /// `workqueue_flush`), and a worker already woke it.
    pub waiting: bool,
    pub woken: bool,
}

/// `struct submit_worker`.
#[derive(Clone, Debug)]
pub(crate) struct SubmitWorker {
    /// fio's job it works for, and its index in the job's workqueue.
    pub parent: JobId,
    pub index: usize,
    /// `work_list`: io_us handed to it, not taken yet.
    pub work: VecDeque<ReqId>,
    /// `seq`: the workqueue's `work_seq` at its last work.
    pub seq: u64,
    /// `SW_F_IDLE`: set as it goes to wait with an empty list, cleared at an enqueue.
    pub idle: bool,
    /// It waits on its condition variable, and fio's thread already woke it.
    pub waiting: bool,
    pub woken: bool,
    /// Its statistics clock was set from fio's job (at its first work).
    pub clocked: bool,
    /// Its io_u in flight (`IO_U_F_FLIGHT`), from the overlap check it passed to its free.
    pub current: Option<ReqId>,
    /// Its job serializes overlapping io_us (`serialize_overlap`).
    pub serialize: bool,
}

impl Offload {
    pub(crate) fn queue(&mut self) -> &mut Workqueue {
        match self {
            Offload::Queue(q) => q,
            Offload::Worker(_) => unreachable!("a submit worker has no workqueue"),
        }
    }

    pub(crate) fn worker(&mut self) -> &mut SubmitWorker {
        match self {
            Offload::Worker(w) => w,
            Offload::Queue(_) => unreachable!("fio's job is not a submit worker"),
        }
    }

    /// The job a submit worker works for (none for fio's job itself).
    pub(crate) fn parent(&self) -> Option<crate::ids::JobId> {
        match self {
            Offload::Worker(w) => Some(w.parent),
            Offload::Queue(_) => None,
        }
    }

    /// It sleeps in a futex (`pthread_cond_wait`), not for I/O.
    pub(crate) fn waiting(&self) -> bool {
        match self {
            Offload::Queue(q) => q.waiting,
            Offload::Worker(w) => w.waiting,
        }
    }
}

impl Workqueue {
    /// `get_submit_worker`: the first idle worker from `next_free_worker`
    /// on (wrapping), else the one given work longest ago; the start moves
    /// past the one picked when it was the start. `idle` and `seq` are the
    /// workers' by index.
    pub(crate) fn pick(&mut self, idle: impl Fn(usize) -> bool, seq: impl Fn(usize) -> u64) -> usize {
        let n = self.workers.len();
        let next = self.next_free_worker;
        let mut best: Option<usize> = None;
        let mut found = None;
        for i in (next..n).chain(0..next) {
            if idle(i) {
                found = Some(i);
                break;
            }
            if best.is_none_or(|b| seq(i) < seq(b)) {
                best = Some(i);
            }
        }
        let sw = found.or(best).expect("a workqueue has workers");
        if sw == next {
            self.next_free_worker = if sw + 1 < n { sw + 1 } else { 0 };
        }
        sw
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_submit_worker_takes_the_first_idle_from_the_start_then_the_oldest() {
        let mut q = Workqueue { workers: (0..4).map(JobId::of).collect(), ..Default::default() };
        // All idle: 0, and the start moves on to 1.
        assert_eq!(q.pick(|_| true, |_| 0), 0);
        assert_eq!(q.next_free_worker, 1);
        // 1 busy, 2 idle: 2; the start stays (it was not the one picked).
        assert_eq!(q.pick(|i| i == 2, |_| 0), 2);
        assert_eq!(q.next_free_worker, 1);
        // None idle: the lowest seq (3), wrapping from the start.
        assert_eq!(q.pick(|_| false, |i| [5, 7, 6, 1][i]), 3);
        // The start at the end wraps to 0 when it is picked.
        q.next_free_worker = 3;
        assert_eq!(q.pick(|i| i == 3, |_| 0), 3);
        assert_eq!(q.next_free_worker, 0);
    }
}
