//! blk-mq: requests, hardware queues (hctx) with their tags, the per-CPU
//! software-queue to hctx map, and completion placement (`rq_affinity`,
//! `blk_cpu_done` lists, BLOCK_SOFTIRQ, batched completion).

pub(crate) mod blk_mq_sched;
pub(crate) mod complete;
pub(crate) mod disk;
pub(crate) mod elevator;
pub(crate) mod hctx;
pub(crate) mod issue;
pub(crate) mod kyber;
pub(crate) mod merge;
pub(crate) mod merge_rules;
pub(crate) mod mq_deadline;
pub(crate) mod request;
pub(crate) mod submit;
pub(crate) mod tag;

pub(crate) use request::{Fsync, Owner, Request, RequestPool};

/// Block-layer behaviour the kernel's version or a patch decides.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BlockConfig {
    /// `blksim.polled_unsupported`: what a polled bio to a queue that cannot poll gets.
    pub polled_unsupported: crate::settings::PolledUnsupported,
    /// `--patch io-cpu-affinity-2008`: `rq_affinity` as the 2008 branch defined it.
    pub io_cpu_affinity_2008: bool,
}

/// What a foreseen completion pass has counted so far: completions per
/// sleeping job (starting from what it already has) and the CPUs already
/// sent an IPI. A CPU keeps one to reuse.
#[derive(Default, Clone)]
pub(crate) struct Foresight {
    pub(crate) wakes: Vec<(crate::ids::JobId, u32)>,
    pub(crate) ipis: Vec<crate::ids::CpuId>,
}

impl Foresight {
    pub(crate) fn clear(&mut self) {
        self.wakes.clear();
        self.ipis.clear();
    }
}

/// Where a completed request ends (`blk_mq_complete_request`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Placement {
    /// Ended inline in the current context, inside an `io_comp_batch`.
    Batched,
    /// Ended inline, one by one.
    Inline,
    /// Queued on the submitting CPU's `blk_cpu_done` list (IPI + BLOCK_SOFTIRQ there).
    Remote,
    /// Queued on this CPU's `blk_cpu_done` list for BLOCK_SOFTIRQ (single hardware queue).
    LocalSoftirq,
}
