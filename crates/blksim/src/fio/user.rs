//! fio: the user time of a job's program (fio's `do_io`, t/io_uring's
//! submitter loop; none for a thread the model adds for an engine) per io_u
//! and per call, as the CPU steps of `backend.rs` charge it.

use crate::block::Fsync;
use crate::ids::JobId;
use crate::system::Sim;
use crate::workload::{IoEngine, Program};

impl Sim {
    /// fio's `thinkcycles` spin (user), charged before each read, write or trim io_u is prepared:
    /// the one after the io_u before it. do_io's `cycles_spin`: its thread's, not a submit
    /// worker's; do_verify's loop has none.
    #[inline(always)]
    pub(crate) fn spin_ns(&self, j: JobId) -> u64 {
        let job = &self.jobs[j];
        if job.cfg.thinkcycles == 0 {
            return 0;
        }
        if job.shaped && job.offload_worker().is_some() || job.verify.as_deref().is_some_and(|v| v.phase) {
            return 0;
        }
        job.cfg.thinkcycles.saturating_mul(self.costs.pause_ns)
    }

    /// The `thinkcycles` spins of the read, write and trim io_us queued on the job from its
    /// `from`-th on (an fsync io_u has none: do_io spins only for `ddir_rw`).
    #[inline(always)]
    pub(crate) fn spins_ns(&self, j: JobId, from: u32) -> u64 {
        let spin = self.spin_ns(j);
        if spin == 0 {
            return 0;
        }
        let queued = &self.jobs[j].queued[from as usize..];
        let rw = queued.iter().filter(|&&r| self.reqs.reqs[r].fsync == Fsync::No).count() as u64;
        rw.saturating_mul(spin)
    }

    /// User time of the job's program per io_u and per call.
    pub(crate) fn user_costs(&self, j: JobId) -> UserCosts {
        let c = &self.costs;
        let job = &self.jobs[j];
        match job.cfg.program {
            // fio: get_io_u + a clock per io_u; io_u_queued_complete's
            // batch (init_icd's clock, ios_completed, bytes done) per reap;
            // td_io_commit (io_u_mark_depth, the engine's commit wrapper)
            // per commit, which sync engines never make (nor the null
            // engine at iodepth=1: null_init makes it FIO_SYNCIO).
            Program::Fio => UserCosts {
                // An offload worker's io_us come prepared: it takes them off its list.
                prep: if job.shaped && job.offload_worker().is_some() {
                    c.fio_workqueue_ns
                } else {
                    c.fio_prep_ns + c.fio_clock_ns
                },
                reap: c.fio_reap_ns,
                reap_call: c.fio_clock_ns + c.fio_reap_call_ns,
                submit_call: if job.cfg.ioengine.is_sync()
                    || (job.cfg.ioengine == IoEngine::Null && job.cfg.iodepth == 1)
                {
                    0
                } else {
                    c.fio_submit_call_ns
                },
                wake: c.user_wake_ns,
            },
            // t/io_uring: one round of its submitter loop (prep, enter,
            // reap_events) per reap; no clock, no per-call accounting.
            Program::TIoUring => UserCosts {
                prep: c.tio_prep_ns,
                reap: c.tio_reap_ns,
                reap_call: c.tio_round_ns,
                submit_call: 0,
                wake: c.user_wake_ns,
            },
            // A kernel thread has no user code; glibc's AIO helper's and a verify thread's are their own.
            Program::SqThread | Program::AioHelper | Program::VerifyThread => {
                UserCosts { prep: 0, reap: 0, reap_call: 0, submit_call: 0, wake: 0 }
            }
        }
    }
}

/// User time of a job's program, ns (`Sim::user_costs`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct UserCosts {
    /// Preparing one io_u.
    pub prep: u64,
    /// Accounting one reaped io_u.
    pub reap: u64,
    /// Once per reaping call: the completion batch's bookkeeping.
    pub reap_call: u64,
    /// Once per commit: the user side of the submitting call.
    pub submit_call: u64,
    /// Once after the task slept: the user working set refilled.
    pub wake: u64,
}
