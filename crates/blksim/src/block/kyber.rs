//! Kyber (state and ops), as `block/kyber-iosched.c` has it: requests
//! split into scheduling domains (READ, WRITE, DISCARD, OTHER); each
//! domain may have only so many requests in the device at once (its
//! domain tokens, a `sbitmap_queue` of 256, 128, 64 and 16 to begin with);
//! a timer 100 ms after a completion looks at the latency histograms
//! (buckets of a quarter of the domain's target: 2 ms for reads, 10 ms for
//! writes by default, `iosched/read_lat_nsec` and `write_lat_nsec`) and,
//! when some domain's p90 I/O latency is past its target (congestion),
//! shrinks the depth of the domains whose p99 total latency is good and
//! grows those whose p99 is bad, each in proportion to its p99 against the
//! target. Insertion and merges take the submitting CPU's `kcq->lock`; a
//! dispatch takes `khd->lock`, serves the current domain for a batch (16
//! reads, 8 writes) while it has requests and tokens, flushes the kcqs of
//! the domain it serves, and when it finds no token waits on the domain's
//! token queue: enough freed tokens (the sbitmap's wake batch) run the
//! queue again.
//!
//! Simplifications: one `kyber_hctx_data` for the device's hardware queues
//! (blk-mq-sched's state is one per device too); the software queues are
//! per CPU; the timer fires at ns resolution (no jiffies); a kcq's lock is
//! not contended by the flushing dispatcher. Every modelled request is
//! synchronous (reads, and O_DIRECT writes, which `dio_bio_write_op` marks
//! REQ_SYNC), so `limit_depth` never limits it and is not modelled.

use std::collections::VecDeque;

use crate::block::elevator::{Begin, Done, ElevatorInit, ElevatorOps, SchedEnv, Section};
use crate::block::merge_rules::{MergeHost, MergeLimits, MergePath};
use crate::block::request::{Request, RequestPool};
use crate::error::Error;
use crate::ids::{CpuId, ReqId};
use crate::locking::qspinlock::{Actor, LockStats, SpinLock};
use crate::workload::Direction;

/// The scheduling domains.
const KYBER_READ: usize = 0;
const KYBER_WRITE: usize = 1;
const KYBER_DISCARD: usize = 2;
const KYBER_OTHER: usize = 3;
const KYBER_NUM_DOMAINS: usize = 4;

/// Domain names, as its debugfs shows them.
const DOMAIN_NAMES: [&str; KYBER_NUM_DOMAINS] = ["read", "write", "discard", "other"];

/// `kyber_depth`: the most tokens (device-wide in-flight requests) of each domain, and its start.
const KYBER_DEPTH: [u32; KYBER_NUM_DOMAINS] = [256, 128, 64, 16];

/// `kyber_latency_targets`, ns (OTHER has none).
const KYBER_LATENCY_TARGETS: [u64; KYBER_OTHER] = [2_000_000, 10_000_000, 5_000_000_000];

/// `kyber_batch_size`: requests dispatched in a row from one domain.
const KYBER_BATCH_SIZE: [u32; KYBER_NUM_DOMAINS] = [16, 8, 1, 1];

/// Buckets are a quarter of the target wide; the first four are "good".
const KYBER_LATENCY_SHIFT: u32 = 2;
const KYBER_GOOD_BUCKETS: i32 = 1 << KYBER_LATENCY_SHIFT;
const KYBER_LATENCY_BUCKETS: usize = 2 << KYBER_LATENCY_SHIFT;

/// `KYBER_TOTAL_LATENCY` (from allocation) and `KYBER_IO_LATENCY` (from dispatch to the device).
const TOTAL: usize = 0;
const IO: usize = 1;

/// `timer_reduce(&kqd->timer, jiffies + HZ / 10)`.
const KYBER_TIMER_NS: u64 = 100_000_000;

/// `calculate_percentile` waits for 500 samples or one second (HZ).
const MIN_SAMPLES: u32 = 500;
const LATENCY_TIMEOUT_NS: u64 = 1_000_000_000;

/// `SBQ_WAIT_QUEUES` and `SBQ_WAKE_BATCH`: a waiter on a token queue is
/// woken after `clamp(depth / 8, 1, 8)` tokens were freed.
const SBQ_WAIT_QUEUES: u32 = 8;
const SBQ_WAKE_BATCH: u32 = 8;

/// The iosched/ attributes.
pub(crate) const ATTRS: &[&str] = &["read_lat_nsec", "write_lat_nsec"];

/// A domain's tokens (`kqd->domain_tokens[d]`).
#[derive(Clone, Debug, Default)]
struct Tokens {
    depth: u32,
    used: u32,
    /// `khd->domain_wait[d]` is on the token queue.
    waiting: bool,
    /// Tokens freed since it went on (toward the wake batch).
    freed: u32,
}

impl Tokens {
    fn wake_batch(&self) -> u32 {
        (self.depth / SBQ_WAIT_QUEUES).clamp(1, SBQ_WAKE_BATCH)
    }

    /// `kyber_get_domain_token`: a token, or the dispatch waits on the queue.
    fn get(&mut self) -> bool {
        if self.used < self.depth {
            self.used += 1;
            // Got one while waiting: off the wait queue.
            self.waiting = false;
            return true;
        }
        if !self.waiting {
            self.waiting = true;
            self.freed = 0;
        }
        false
    }

    /// `sbitmap_queue_clear`: does the freed token wake the waiting dispatch?
    fn put(&mut self) -> bool {
        self.used -= 1;
        if !self.waiting {
            return false;
        }
        self.freed += 1;
        if self.freed < self.wake_batch() {
            return false;
        }
        self.waiting = false;
        true
    }
}

/// A CPU's software queue (`struct kyber_ctx_queue`).
#[derive(Clone, Debug, Default)]
struct Kcq {
    lock: SpinLock,
    rq_list: [VecDeque<ReqId>; KYBER_NUM_DOMAINS],
}

/// Kyber's state for a device.
#[derive(Clone, Debug)]
pub(crate) struct Kyber {
    /// `kqd->domain_tokens`.
    tokens: [Tokens; KYBER_NUM_DOMAINS],
    /// `kqd->latency_targets`, ns.
    latency_targets: [u64; KYBER_OTHER],
    /// The latency histograms (the per-CPU ones summed as the timer flushes them).
    buckets: [[[u32; KYBER_LATENCY_BUCKETS]; 2]; KYBER_OTHER],
    /// `kqd->latency_timeout`: when a domain's percentiles are due with few samples.
    latency_timeout: [Option<u64>; KYBER_OTHER],
    /// `kqd->domain_p99`, remembered until congestion is seen.
    domain_p99: [i32; KYBER_OTHER],
    /// `khd->lock`.
    lock: SpinLock,
    /// `khd->rqs`: flushed requests by domain.
    rqs: [VecDeque<ReqId>; KYBER_NUM_DOMAINS],
    cur_domain: usize,
    batching: u32,
    /// Per CPU.
    kcqs: Vec<Kcq>,
    /// Requests inserted and not yet dispatched (`has_work`).
    queued: usize,
    /// The request the dispatch section in progress takes.
    chosen: Option<ReqId>,
    /// Requests that hold a domain token (`rq->elv.priv[0]`), by request id.
    has_token: Vec<bool>,
    /// Dispatches of a domain that found no token (`trace_kyber_throttled`).
    throttled: [u64; KYBER_NUM_DOMAINS],
    /// Depth changes (`trace_kyber_adjust`).
    adjustments: u64,
}

impl Kyber {
    /// `kyber_init_sched` for a queue whose `iosched/` writes are `init.attrs`.
    pub(crate) fn init(init: &ElevatorInit) -> Result<Kyber, Error> {
        let mut latency_targets = KYBER_LATENCY_TARGETS;
        for (attr, v) in init.attrs {
            match attr.as_str() {
                "read_lat_nsec" => latency_targets[KYBER_READ] = *v,
                "write_lat_nsec" => latency_targets[KYBER_WRITE] = *v,
                a => unreachable!("iosched/{a} is not one of kyber's ATTRS (the settings check it)"),
            }
        }
        Ok(Kyber {
            tokens: KYBER_DEPTH.map(|depth| Tokens { depth, ..Default::default() }),
            latency_targets,
            buckets: [[[0; KYBER_LATENCY_BUCKETS]; 2]; KYBER_OTHER],
            latency_timeout: [None; KYBER_OTHER],
            domain_p99: [-1; KYBER_OTHER],
            lock: SpinLock::default(),
            rqs: Default::default(),
            cur_domain: KYBER_READ,
            batching: 0,
            kcqs: vec![Kcq::default(); init.ncpus],
            queued: 0,
            chosen: None,
            has_token: Vec::new(),
            throttled: [0; KYBER_NUM_DOMAINS],
            adjustments: 0,
        })
    }

    /// `kyber_sched_domain`.
    fn domain(dir: Direction) -> usize {
        match dir {
            Direction::Read => KYBER_READ,
            Direction::Write => KYBER_WRITE,
            Direction::Trim => KYBER_DISCARD,
        }
    }

    /// The token depth of each domain now (read, write, discard, other).
    pub(crate) fn depths(&self) -> [u32; KYBER_NUM_DOMAINS] {
        self.tokens.clone().map(|t| t.depth)
    }

    /// `kyber_dispatch_cur_domain`: the current domain's next request, with
    /// a token; the CPUs whose kcqs a flush took it from go to `flushed`.
    fn dispatch_cur_domain(&mut self, flushed: &mut Vec<CpuId>) -> Option<ReqId> {
        let d = self.cur_domain;
        if self.rqs[d].is_empty() && !self.kcqs.iter().any(|k| !k.rq_list[d].is_empty()) {
            return None;
        }
        if !self.tokens[d].get() {
            self.throttled[d] += 1;
            return None;
        }
        if self.rqs[d].is_empty() {
            // kyber_flush_busy_kcqs: every kcq with requests of the domain, in CPU order.
            for (i, k) in self.kcqs.iter_mut().enumerate() {
                if !k.rq_list[d].is_empty() {
                    flushed.push(CpuId::of(i));
                    self.rqs[d].append(&mut k.rq_list[d]);
                }
            }
        }
        self.batching += 1;
        self.rqs[d].pop_front()
    }

    /// `kyber_dispatch_request`: batch from the current domain while it is
    /// entitled, else start a new batch at the next domain with requests and tokens.
    fn dispatch(&mut self, flushed: &mut Vec<CpuId>) -> Option<ReqId> {
        if self.batching < KYBER_BATCH_SIZE[self.cur_domain] {
            if let Some(rq) = self.dispatch_cur_domain(flushed) {
                return Some(rq);
            }
        }
        self.batching = 0;
        for _ in 0..KYBER_NUM_DOMAINS {
            self.cur_domain = (self.cur_domain + 1) % KYBER_NUM_DOMAINS;
            if let Some(rq) = self.dispatch_cur_domain(flushed) {
                return Some(rq);
            }
        }
        None
    }

    /// `calculate_percentile`: the bucket holding the `percentile`th sample
    /// of `domain`'s `kind` histogram, or -1 without enough samples yet;
    /// the histogram is cleared when it answers.
    fn calculate_percentile(&mut self, now: u64, domain: usize, kind: usize, percentile: u32) -> i32 {
        let buckets = &mut self.buckets[domain][kind];
        let samples: u32 = buckets.iter().sum();
        if samples == 0 {
            return -1;
        }
        let timeout = *self.latency_timeout[domain].get_or_insert(now + LATENCY_TIMEOUT_NS);
        if samples < MIN_SAMPLES && now < timeout {
            return -1;
        }
        self.latency_timeout[domain] = None;
        let mut rank = (samples as u64 * percentile as u64).div_ceil(100) as u32;
        let mut bucket = 0;
        while bucket < KYBER_LATENCY_BUCKETS - 1 {
            if buckets[bucket] >= rank {
                break;
            }
            rank -= buckets[bucket];
            bucket += 1;
        }
        *buckets = [0; KYBER_LATENCY_BUCKETS];
        bucket as i32
    }

    /// `kyber_resize_domain`.
    fn resize(&mut self, domain: usize, depth: u32) {
        let depth = depth.clamp(1, KYBER_DEPTH[domain]);
        if depth != self.tokens[domain].depth {
            self.tokens[domain].depth = depth;
            self.adjustments += 1;
        }
    }

    /// `add_latency_sample`.
    fn add_sample(&mut self, domain: usize, kind: usize, latency: u64) {
        let divisor = (self.latency_targets[domain] >> KYBER_LATENCY_SHIFT).max(1);
        let bucket = if latency > 0 { ((latency - 1) / divisor).min(KYBER_LATENCY_BUCKETS as u64 - 1) } else { 0 };
        self.buckets[domain][kind][bucket as usize] += 1;
    }

    fn has_token(&self, req: ReqId) -> bool {
        self.has_token.get(req.idx()).copied().unwrap_or(false)
    }

    fn set_token(&mut self, req: ReqId, v: bool) {
        if req.idx() >= self.has_token.len() {
            self.has_token.resize(req.idx() + 1, false);
        }
        self.has_token[req.idx()] = v;
    }
}

impl ElevatorOps for Kyber {
    fn bio_merge(&mut self, _env: &SchedEnv, _who: Actor, _cpu: CpuId) -> Begin {
        Begin::Lock
    }

    fn insert_requests(&mut self, _env: &SchedEnv, _who: Actor, _cpu: CpuId) -> Begin {
        Begin::Lock
    }

    fn dispatch_begin(&mut self, _env: &SchedEnv, _cpu: CpuId) -> Begin {
        Begin::Lock
    }

    fn lock(&mut self, section: Section, cpu: CpuId) -> &mut SpinLock {
        match section {
            Section::Merge | Section::Insert => &mut self.kcqs[cpu.idx()].lock,
            Section::Dispatch => &mut self.lock,
        }
    }

    fn section_cost(
        &mut self,
        env: &SchedEnv,
        section: Section,
        cpu: CpuId,
        from: Option<CpuId>,
        moving: &mut Vec<ReqId>,
    ) -> u64 {
        let c = env.costs;
        // The lock's line and the state under it (a kcq is one line) come from its last holder.
        let lines = |n: u64| from.map_or(0, |from| n * env.line_ns(from, cpu));
        match section {
            Section::Merge => lines(1) + c.kyber_merge_ns,
            Section::Insert => lines(1) + moving.len() as u64 * c.kyber_insert_ns,
            Section::Dispatch => {
                // The dispatch is decided now (the lock is held); its request goes at the end.
                let mut flushed = Vec::new();
                self.chosen = self.dispatch(&mut flushed);
                if let Some(rq) = self.chosen {
                    self.queued -= 1;
                    self.set_token(rq, true);
                }
                let kcq_lines: u64 = flushed.iter().map(|&k| env.line_ns(k, cpu)).sum();
                lines(c.kyber_lock_data_lines) + c.kyber_dispatch_ns + kcq_lines
            }
        }
    }

    fn inserted(&mut self, _env: &SchedEnv, cpu: CpuId, moving: &[ReqId], reqs: &RequestPool) -> bool {
        // kyber_insert_requests: onto the kcq of the request's CPU (the
        // inserting task's, whose lock it holds), by domain.
        for &r in moving {
            let r_ = &reqs.reqs[r];
            debug_assert_eq!(r_.submit_cpu, cpu);
            self.kcqs[r_.submit_cpu.idx()].rq_list[Kyber::domain(r_.dir)].push_back(r);
        }
        self.queued += moving.len();
        false
    }

    fn dispatch_request(&mut self, _env: &SchedEnv, _cpu: CpuId, _reqs: &RequestPool) -> Option<ReqId> {
        self.chosen.take()
    }

    fn deferred(&mut self, _cpu: CpuId, _pending: &mut Vec<ReqId>) -> bool {
        unreachable!("kyber never defers an insertion")
    }

    /// `kyber_bio_merge` → `blk_bio_list_merge`: a bio looks at the
    /// submitting CPU's list of its domain, newest first, at most eight
    /// requests (not gated by `nomerges=1`); kyber's insertion merges nothing.
    fn merge_host(
        &self,
        cpu: CpuId,
        req: ReqId,
        reqs: &RequestPool,
        limits: &MergeLimits,
        path: MergePath,
    ) -> Option<MergeHost> {
        if path == MergePath::Insert {
            return None;
        }
        let rq = &reqs.reqs[req];
        let list = &self.kcqs[cpu.idx()].rq_list[Kyber::domain(rq.dir)];
        let hit = |&h: &ReqId| {
            limits.takes(&reqs.reqs[h], rq, true, true).map(|kind| MergeHost { host: h, kind, hashed: false })
        };
        list.iter().rev().take(8).find_map(hit)
    }

    fn has_work(&self) -> bool {
        self.queued > 0
    }

    fn insert_ns(&self, env: &SchedEnv) -> u64 {
        env.costs.kyber_insert_ns
    }

    fn insert_waiter(&mut self, env: &SchedEnv, req: ReqId, reqs: &RequestPool) -> u64 {
        let r = &reqs.reqs[req];
        self.kcqs[r.submit_cpu.idx()].rq_list[Kyber::domain(r.dir)].push_back(req);
        self.queued += 1;
        self.insert_ns(env)
    }

    fn request_done(&mut self, env: &SchedEnv, req: ReqId, r: &Request) -> Done {
        let d = Kyber::domain(r.dir);
        let mut done = Done { cost_ns: env.costs.kyber_complete_ns, ..Done::default() };
        // kyber_finish_request: the domain token back, maybe waking the waiting dispatch.
        if self.has_token(req) {
            self.set_token(req, false);
            done.run_queue = self.tokens[d].put();
        }
        // kyber_completed_request: the latencies into the histograms, the timer due.
        if d != KYBER_OTHER {
            let now = env.now;
            self.add_sample(d, TOTAL, now - r.t_issue_ns);
            self.add_sample(d, IO, now - r.t_dispatch_ns);
            done.timer_at = Some(now + KYBER_TIMER_NS);
        }
        done
    }

    fn timer(&mut self, env: &SchedEnv) {
        let now = env.now;
        // Congestion: some domain's p90 I/O latency past its target.
        let mut bad = false;
        for d in 0..KYBER_OTHER {
            if self.calculate_percentile(now, d, IO, 90) >= KYBER_GOOD_BUCKETS {
                bad = true;
            }
        }
        for d in 0..KYBER_OTHER {
            let mut p99 = self.calculate_percentile(now, d, TOTAL, 99);
            if bad {
                if p99 < 0 {
                    p99 = self.domain_p99[d];
                }
                self.domain_p99[d] = -1;
            } else if p99 >= 0 {
                self.domain_p99[d] = p99;
            }
            if p99 < 0 {
                continue;
            }
            // Scale the depth by the p99 against the target: throttle a good
            // domain under congestion, ease off a bad one.
            if bad || p99 >= KYBER_GOOD_BUCKETS {
                let depth = (self.tokens[d].depth * (p99 as u32 + 1)) >> KYBER_LATENCY_SHIFT;
                self.resize(d, depth);
            }
        }
    }

    fn queued(&self) -> usize {
        self.queued + usize::from(self.chosen.is_some())
    }

    fn locks(&self) -> Vec<(&'static str, LockStats)> {
        let mut kcq = LockStats::default();
        for k in &self.kcqs {
            let s = &k.lock.stats;
            kcq.acquisitions += s.acquisitions;
            kcq.contended += s.contended;
            kcq.wait_ns += s.wait_ns;
            kcq.hold_ns += s.hold_ns;
        }
        vec![("khd->lock", self.lock.stats.clone()), ("kcq->lock", kcq)]
    }

    fn describe(&self) -> String {
        let depths: Vec<String> = (0..KYBER_NUM_DOMAINS)
            .map(|d| format!("{} {}/{}", DOMAIN_NAMES[d], self.tokens[d].used, self.tokens[d].depth))
            .collect();
        format!("{} in the scheduler, tokens used/depth: {}", self.queued(), depths.join(", "))
    }

    fn stats(&self) -> Vec<(String, u64)> {
        let mut rows = Vec::new();
        for (d, depth) in self.depths().into_iter().enumerate() {
            rows.push((format!("{}_depth", DOMAIN_NAMES[d]), depth as u64));
        }
        for (name, throttled) in DOMAIN_NAMES.iter().zip(self.throttled) {
            rows.push((format!("{name}_throttled"), throttled));
        }
        rows.push(("depth_adjustments".to_string(), self.adjustments));
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kyber() -> Kyber {
        let init = ElevatorInit {
            device: "nvme0n1",
            attrs: &[],
            driver_tags: 1023,
            sched_tags: 256,
            patch_mq_deadline_2024: false,
            ncpus: 4,
        };
        Kyber::init(&init).unwrap()
    }

    #[test]
    fn latency_buckets_are_quarters_of_the_target_and_the_last_takes_the_rest() {
        let mut k = kyber();
        // Reads: 2 ms target, 500 us buckets: (0, 500us] is bucket 0, (500us, 1ms] bucket 1.
        for lat in [0, 1, 500_000, 500_001, 2_000_000, 2_000_001, 50_000_000] {
            k.add_sample(KYBER_READ, TOTAL, lat);
        }
        assert_eq!(k.buckets[KYBER_READ][TOTAL], [3, 1, 0, 1, 1, 0, 0, 1]);
    }

    #[test]
    fn a_percentile_waits_for_500_samples_or_one_second_and_clears_the_histogram() {
        let mut k = kyber();
        for _ in 0..499 {
            k.add_sample(KYBER_WRITE, IO, 1_000);
        }
        assert_eq!(k.calculate_percentile(0, KYBER_WRITE, IO, 90), -1, "too few samples, the second not over");
        assert_eq!(k.calculate_percentile(LATENCY_TIMEOUT_NS - 1, KYBER_WRITE, IO, 90), -1);
        assert_eq!(k.calculate_percentile(LATENCY_TIMEOUT_NS, KYBER_WRITE, IO, 90), 0, "a second after the first look");
        assert_eq!(k.buckets[KYBER_WRITE][IO], [0; KYBER_LATENCY_BUCKETS]);
        // 500 samples answer at once: p99 of 95 in bucket 0 and 5 in bucket 5 is bucket 5.
        for i in 0..500 {
            k.add_sample(KYBER_WRITE, TOTAL, if i % 100 < 95 { 1_000 } else { 13_000_000 });
        }
        assert_eq!(k.calculate_percentile(5, KYBER_WRITE, TOTAL, 99), 5);
        assert_eq!(k.calculate_percentile(5, KYBER_WRITE, TOTAL, 99), -1, "cleared");
    }

    #[test]
    fn congestion_throttles_a_good_domain_and_eases_a_bad_one_in_proportion_to_its_p99() {
        let mut k = kyber();
        k.tokens[KYBER_READ].depth = 64;
        // Reads: p90 I/O latency 1.6 target (bucket 6: congestion), p99 total in bucket 6.
        for _ in 0..500 {
            k.add_sample(KYBER_READ, IO, 3_200_000);
            k.add_sample(KYBER_READ, TOTAL, 3_200_000);
        }
        // Writes: all good, p99 in bucket 1 (<= half the target).
        for _ in 0..500 {
            k.add_sample(KYBER_WRITE, IO, 4_000_000);
            k.add_sample(KYBER_WRITE, TOTAL, 4_000_000);
        }
        let env_costs = crate::machine::builtin("spr-gen5").unwrap();
        let actor_cpu = |_: Actor| CpuId(0);
        let env = SchedEnv { costs: &env_costs.costs, topo: &env_costs.topology, now: 0, actor_cpu: &actor_cpu };
        k.timer(&env);
        // Writes: 128 * (1 + 1) >> 2 = 64. Reads: 64 * (6 + 1) >> 2 = 112.
        assert_eq!(k.depths(), [112, 64, 64, 16]);
        assert_eq!(k.adjustments, 2);
        // Without new samples nothing changes; the remembered p99 was reset by the congestion.
        k.timer(&env);
        assert_eq!(k.depths(), [112, 64, 64, 16]);
    }

    #[test]
    fn a_dispatch_without_a_token_waits_and_enough_freed_tokens_run_the_queue() {
        let mut t = Tokens { depth: 16, ..Default::default() };
        for _ in 0..16 {
            assert!(t.get());
        }
        assert!(!t.get() && t.waiting);
        // The wake batch of a 16-deep queue is 2.
        assert!(!t.put());
        assert!(t.put(), "the second freed token wakes the dispatch");
        assert!(!t.waiting);
        assert!(!t.put(), "nobody waits any more");
    }

    #[test]
    fn batches_favour_the_current_domain_then_move_on() {
        let mut k = kyber();
        for i in 0..20 {
            k.kcqs[0].rq_list[KYBER_READ].push_back(ReqId(i));
            k.kcqs[1].rq_list[KYBER_WRITE].push_back(ReqId(100 + i));
        }
        k.queued = 40;
        let mut flushed = Vec::new();
        let order: Vec<u32> = (0..26).map(|_| k.dispatch(&mut flushed).unwrap().0).collect();
        // 16 reads (a read batch), 8 writes, then reads again.
        assert_eq!(&order[..16], &(0..16).collect::<Vec<_>>()[..]);
        assert_eq!(&order[16..24], &(100..108).collect::<Vec<_>>()[..]);
        assert_eq!(&order[24..], &[16, 17]);
        assert_eq!(flushed, [CpuId(0), CpuId(1)], "each domain's kcqs flushed once");
    }
}
