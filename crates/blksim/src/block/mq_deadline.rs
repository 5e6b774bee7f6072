//! mq-deadline (state and ops): `struct deadline_data` — `dd->lock` and
//! the FIFO of inserted requests — and, with the 2024 series
//! (`--patch mq-deadline-2024`, RFC v2), its `run_state` bits
//! (DD_DISPATCHING, DD_INSERTING, DD_BUCKETS) and per-CPU insertion
//! buckets. Every section takes `dd->lock`, a queued spinlock, so
//! contention and its collapse come from the load.
//!
//! The 2024 series: `dd_dispatch_request` returns nothing when
//! DD_DISPATCHING is set (the caller asks for a re-run
//! BLK_MQ_BUDGET_DELAY later, and the CPU dispatching re-checks for work
//! after each request); an inserter that finds `dd->lock` held while
//! another CPU inserts adds its requests to its CPU's bucket (DD_BUCKETS),
//! and the inserting lock holder drains the buckets, round after round; a
//! merge lookup is skipped when `dd->lock` is held (`spin_trylock`).
//! Simplifications: the DD_BUCKETS bit is set with the splice into the
//! bucket (one step's effect), bucket locks are not contended (one CPU per
//! bucket up to 32 CPUs).
//!
//! I/O priorities (`dd_per_prio`): one FIFO per class, RT, BE (and requests
//! without a class) and IDLE. `dd_dispatch_request` first takes a BE or
//! IDLE request that has waited `prio_aging_expire` (10 s) when two classes
//! are pending, then dispatches in class order, and takes nothing of a
//! lower class while a higher one is pending (`dd_queued`: inserted and
//! not yet completed, so in flight too). The kernel ages a request from its
//! insertion (`started_after`: `fifo_time` less the FIFO expiry); blksim
//! from its submission, later only by a wait for a scheduler tag.

use std::collections::VecDeque;

use crate::block::elevator::{Begin, Done, ElevatorInit, ElevatorOps, SchedEnv, Section};
use crate::block::merge_rules::{MergeHost, MergeKind, MergeLimits, MergePath};
use crate::block::request::{Request, RequestPool};
use crate::error::Error;
use crate::ids::{CpuId, ReqId};
use crate::locking::qspinlock::{Actor, LockStats, SpinLock};

/// `DD_CPU_BUCKETS`: insertion buckets of the 2024 series (CPU `c` uses bucket `c & 31`).
pub(crate) const DD_CPU_BUCKETS: usize = 32;

/// `DD_PRIO_COUNT`: RT, BE, IDLE.
pub(crate) const DD_PRIOS: usize = 3;
/// `DD_BE_PRIO`.
const DD_BE: usize = 1;
/// `prio_aging_expire`'s default, 10 s.
const DD_PRIO_AGING_EXPIRE_NS: u64 = 10_000_000_000;

/// `ioprio_class_to_prio`: a request's priority list (no class: BE).
fn dd_prio(ioprio: u16) -> usize {
    use crate::workload::{ioprio_parts, IOPRIO_CLASS_IDLE, IOPRIO_CLASS_RT};
    match ioprio_parts(ioprio)[0] as u32 {
        IOPRIO_CLASS_RT => 0,
        IOPRIO_CLASS_IDLE => 2,
        _ => DD_BE,
    }
}

/// mq-deadline's per-queue state.
#[derive(Clone, Debug, Default)]
pub(crate) struct Deadline {
    /// `--patch mq-deadline-2024`.
    pub patched: bool,
    /// `dd->lock`.
    pub lock: SpinLock,
    /// Inserted requests, in deadline (FIFO) order, per priority (`DD_RT_PRIO`,
    /// `DD_BE_PRIO`, `DD_IDLE_PRIO`).
    pub fifo: [VecDeque<ReqId>; DD_PRIOS],
    /// Per priority, requests dispatched and not yet completed (with those
    /// in `fifo`, `dd_queued`).
    pub started: [u32; DD_PRIOS],
    /// `q->last_merge`: the one-hit merge cache (the first request inserted
    /// while it was empty, then the last one merged into; cleared when dispatched).
    pub last_merge: Option<ReqId>,
    /// 2024 series: DD_DISPATCHING (a CPU is inside `dd_dispatch_request`).
    pub dispatching: bool,
    /// 2024 series: DD_INSERTING (the lock holder is inserting).
    pub inserting: bool,
    /// 2024 series: DD_BUCKETS (some bucket holds requests).
    pub buckets_set: bool,
    /// 2024 series: the per-CPU insertion buckets.
    pub buckets: Vec<VecDeque<ReqId>>,
    /// The CPU whose cache holds `run_state`'s line (the last to write it).
    pub run_state_cpu: CpuId,
    /// Dispatch attempts that found DD_DISPATCHING set and left.
    pub dispatch_skipped: u64,
    /// Insertions that went to a bucket.
    pub bucket_inserts: u64,
    /// Merge lookups skipped because `dd->lock` was held.
    pub merges_skipped: u64,
}

impl Deadline {
    /// `dd_init_sched`: mq-deadline has no `iosched/` attribute modelled.
    pub(crate) fn init(init: &ElevatorInit) -> Result<Deadline, Error> {
        if let Some((a, _)) = init.attrs.first() {
            return Err(Error::not_modelled(format!(
                "/sys/block/{}/queue/iosched/{a}: mq-deadline's tunables are not modelled",
                init.device
            )));
        }
        Ok(Deadline {
            patched: init.patch_mq_deadline_2024,
            buckets: vec![VecDeque::new(); DD_CPU_BUCKETS],
            ..Default::default()
        })
    }

    /// `dd_dispatch_request`'s choice: an aged request of a lower priority
    /// when two priorities are pending (`dd_dispatch_prio_aged_requests`), else
    /// the first request of the highest priority, none while a higher one
    /// is pending. The request counts as started (in flight) for its priority.
    fn dd_dispatch(&mut self, now: u64, reqs: &RequestPool) -> Option<ReqId> {
        let queued = |dd: &Deadline, p: usize| dd.started[p] > 0 || !dd.fifo[p].is_empty();
        let mut pick = None;
        if let Some(latest_start) = now.checked_sub(DD_PRIO_AGING_EXPIRE_NS) {
            if (0..DD_PRIOS).filter(|&p| queued(self, p)).count() >= 2 {
                let aged = |p: &usize| self.fifo[*p].front().is_some_and(|&r| reqs.reqs[r].t_issue_ns <= latest_start);
                pick = (DD_BE..DD_PRIOS).find(aged);
            }
        }
        if pick.is_none() {
            for p in 0..DD_PRIOS {
                if !self.fifo[p].is_empty() {
                    pick = Some(p);
                    break;
                }
                if queued(self, p) {
                    break;
                }
            }
        }
        let p = pick?;
        let rq = self.fifo[p].pop_front();
        self.started[p] += 1;
        rq
    }

    /// Requests in the insertion buckets.
    pub(crate) fn bucketed(&self) -> usize {
        self.buckets.iter().map(|b| b.len()).sum()
    }
}

impl ElevatorOps for Deadline {
    fn bio_merge(&mut self, env: &SchedEnv, who: Actor, cpu: CpuId) -> Begin {
        if !self.patched {
            return Begin::Lock;
        }
        match self.lock.owner {
            // spin_trylock failed: no merge lookup (the lock's line was read from its owner).
            Some(owner) => {
                self.merges_skipped += 1;
                Begin::Skip(env.line_ns((env.actor_cpu)(owner), cpu))
            }
            None => {
                self.lock.try_acquire(who, env.now);
                Begin::Locked
            }
        }
    }

    fn insert_requests(&mut self, env: &SchedEnv, who: Actor, _cpu: CpuId) -> Begin {
        if !self.patched {
            return Begin::Lock;
        }
        // dd_insert_to_bucket: the lock if it is free, or if nobody inserts; else the bucket.
        if self.lock.try_acquire(who, env.now) {
            Begin::Locked
        } else if !self.inserting {
            Begin::Lock
        } else {
            Begin::Defer(env.costs.dd_bucket_ns)
        }
    }

    fn dispatch_begin(&mut self, env: &SchedEnv, cpu: CpuId) -> Begin {
        if self.patched {
            if self.dispatching {
                // Another CPU is in dd_dispatch_request: leave it to that CPU.
                self.dispatch_skipped += 1;
                return Begin::Busy(env.line_ns(self.run_state_cpu, cpu));
            }
            self.dispatching = true;
            self.run_state_cpu = cpu;
        }
        Begin::Lock
    }

    fn lock(&mut self, _section: Section, _cpu: CpuId) -> &mut SpinLock {
        &mut self.lock
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
        // The scheduler state's lines move over when the last section ran on another core.
        let migrated = match from {
            Some(from) if from != cpu => c.dd_lock_data_lines * env.line_ns(from, cpu),
            _ => 0,
        };
        migrated
            + match section {
                Section::Merge => c.dd_merge_ns,
                Section::Dispatch => c.dd_dispatch_ns,
                Section::Insert => {
                    // A round of __dd_insert_requests: its own requests, then (2024
                    // series) whatever the buckets hold.
                    let mut drained = 0;
                    if self.patched {
                        self.inserting = true;
                        if std::mem::take(&mut self.buckets_set) {
                            for b in self.buckets.iter_mut().filter(|b| !b.is_empty()) {
                                drained += 1;
                                moving.extend(b.drain(..));
                            }
                        }
                    }
                    moving.len() as u64 * c.dd_insert_ns + drained * c.dd_bucket_ns
                }
            }
    }

    fn inserted(&mut self, _env: &SchedEnv, _cpu: CpuId, moving: &[ReqId], reqs: &RequestPool) -> bool {
        for &r in moving {
            self.fifo[dd_prio(reqs.reqs[r].ioprio)].push_back(r);
        }
        // dd_insert_request: `if (!q->last_merge) q->last_merge = rq`.
        self.last_merge = self.last_merge.or(moving.first().copied());
        let more = self.patched && self.buckets_set;
        if !more {
            self.inserting = false;
        }
        more
    }

    fn dispatch_request(&mut self, env: &SchedEnv, cpu: CpuId, reqs: &RequestPool) -> Option<ReqId> {
        let rq = self.dd_dispatch(env.now, reqs);
        if rq.is_some() && rq == self.last_merge {
            // deadline_remove_request
            self.last_merge = None;
        }
        if self.patched {
            self.dispatching = false;
            self.run_state_cpu = cpu;
        }
        rq
    }

    fn request_done(&mut self, _env: &SchedEnv, _req: ReqId, r: &Request) -> Done {
        // dd_finish_request: one more of its priority completed.
        let p = dd_prio(r.ioprio);
        self.started[p] = self.started[p].saturating_sub(1);
        Done::default()
    }

    fn deferred(&mut self, cpu: CpuId, pending: &mut Vec<ReqId>) -> bool {
        // The requests are in this CPU's bucket; the inserting lock holder takes them.
        self.buckets[cpu.idx() % DD_CPU_BUCKETS].extend(pending.drain(..));
        self.buckets_set = true;
        self.bucket_inserts += 1;
        // Too late if the inserter finished: then take the lock and drain the buckets.
        self.inserting
    }

    /// `elv_merge` (a bio) and `elv_attempt_insert_merge` (a request): the
    /// one-hit cache (where a discard merges anywhere, and a bio in front
    /// too), then, unless `nomerges=1`, the request hash: a queued request
    /// that ends where `req` starts (the newest first); a bio last tries
    /// the sort list for one that starts where it ends (`dd_request_merge`,
    /// `front_merges` on). With the 2024 series a bio's lookup is skipped
    /// while `dd->lock` is held (`spin_trylock`).
    fn merge_host(
        &self,
        _cpu: CpuId,
        req: ReqId,
        reqs: &RequestPool,
        limits: &MergeLimits,
        path: MergePath,
    ) -> Option<MergeHost> {
        let bio = path == MergePath::Bio;
        if self.patched && bio && self.lock.owner.is_some() {
            return None;
        }
        let rq = &reqs.reqs[req];
        let hit = |h: ReqId, anywhere: bool, front: bool, hashed: bool| {
            limits.takes(&reqs.reqs[h], rq, anywhere, front).map(|kind| MergeHost { host: h, kind, hashed })
        };
        let one_hit = self.last_merge.and_then(|h| hit(h, true, bio, false));
        if one_hit.is_some() || limits.noxmerges {
            return one_hit;
        }
        // The hash (a request that ends where it starts), then, for a bio, the sort list (front).
        let fifo = &self.fifo[dd_prio(rq.ioprio)];
        let queued = |front: bool| fifo.iter().rev().find_map(|&h| hit(h, false, front, !front));
        queued(false).or_else(|| if bio { queued(true) } else { None })
    }

    fn merged(&mut self, host: ReqId) {
        self.last_merge = Some(host);
    }

    /// `elv_rb_latter_request` / `elv_rb_former_request`: the queued request
    /// of the same direction that starts where `host` now ends (or ends
    /// where it now starts).
    fn neighbour(&self, host: ReqId, kind: MergeKind, reqs: &RequestPool) -> Option<ReqId> {
        let h = &reqs.reqs[host];
        let (start, end) = (h.dev_offset(), h.dev_offset() + h.dev_bytes as u64);
        self.fifo[dd_prio(h.ioprio)].iter().copied().find(|&r| {
            let n = &reqs.reqs[r];
            r != host
                && n.dir == h.dir
                && match kind {
                    MergeKind::Back => n.dev_offset() == end,
                    MergeKind::Front => n.dev_offset() + n.dev_bytes as u64 == start,
                    MergeKind::Discard => false,
                }
        })
    }

    /// `dd_merged_requests`: `next` leaves the FIFO, and `req` takes its
    /// place when `next` was older; `q->last_merge` is `req`.
    fn requests_merged(&mut self, req: ReqId, next: ReqId) {
        let at = |f: &VecDeque<ReqId>, r: ReqId| f.iter().position(|&x| x == r);
        // Both are of one priority: only requests of the same one merge.
        for fifo in &mut self.fifo {
            if let (Some(i), Some(n)) = (at(fifo, req), at(fifo, next)) {
                fifo.remove(n);
                if n < i {
                    fifo.remove(i - 1);
                    fifo.insert(n, req);
                }
            }
        }
        self.last_merge = Some(req);
    }

    fn has_work(&self) -> bool {
        self.fifo.iter().any(|f| !f.is_empty())
    }

    fn insert_ns(&self, env: &SchedEnv) -> u64 {
        env.costs.dd_insert_ns
    }

    fn insert_waiter(&mut self, env: &SchedEnv, req: ReqId, reqs: &RequestPool) -> u64 {
        self.fifo[dd_prio(reqs.reqs[req].ioprio)].push_back(req);
        self.last_merge = self.last_merge.or(Some(req));
        self.insert_ns(env)
    }

    fn locks(&self) -> Vec<(&'static str, LockStats)> {
        vec![("dd->lock", self.lock.stats.clone())]
    }

    fn queued(&self) -> usize {
        self.fifo.iter().map(VecDeque::len).sum::<usize>() + self.bucketed()
    }

    fn started(&self) -> u64 {
        self.started.iter().map(|&n| n as u64).sum()
    }

    fn describe(&self) -> String {
        let [rt, be, idle] = self.fifo.each_ref().map(VecDeque::len);
        format!("{} in the scheduler (RT {rt}, BE {be}, IDLE {idle}), {} in buckets", rt + be + idle, self.bucketed())
    }

    fn patch(&self) -> Option<&'static str> {
        self.patched.then_some("mq-deadline-2024")
    }
}

#[cfg(test)]
mod tests {
    use crate::block::elevator::{RunWork, Sched, SchedStep, Section};
    use crate::block::mq_deadline::Deadline;
    use crate::ids::DevId;
    use crate::locking::qspinlock::Actor;
    use crate::machine::builtin;
    use crate::settings::Settings;
    use crate::system::Sim;
    use crate::workload::{IoEngine, IoUringOptions, JobConfig};

    /// 32 io_uring submitters at QD4 on single-queue null_blk with mq-deadline.
    fn sim(patch: bool, jobs: u32) -> Sim {
        let m = builtin("ryzen-7950x").unwrap();
        let mut s = Settings::default();
        s.apply_cmdline("null_blk.submit_queues=1").unwrap();
        s.apply_write("/sys/block/nullb0/queue/scheduler=mq-deadline", &["nullb0".into()]).unwrap();
        if patch {
            s.apply_patch("mq-deadline-2024").unwrap();
        }
        let jobs: Vec<JobConfig> = (0..jobs)
            .map(|i| {
                let mut j = JobConfig::new(&format!("j{i}"));
                j.ioengine = IoEngine::IoUring(IoUringOptions { fixedbufs: true, ..Default::default() });
                j.direct = true;
                j.bs = [512; 3];
                j.iodepth = 4;
                j.iodepth_batch_submit = 4;
                j.iodepth_batch_complete_min = 4;
                j.iodepth_batch_complete_max = 4;
                j.filenames = vec!["/dev/nullb0".into()];
                j.runtime_ns = Some(2_000_000);
                j.time_based = true;
                j
            })
            .collect();
        Sim::build(&m, &s, &jobs, 1).unwrap()
    }

    /// Actors inside `dd_dispatch_request` (spinning for `dd->lock` to dispatch, or holding it to).
    fn dispatchers(s: &Sim) -> Vec<Actor> {
        let dispatching =
            |step: SchedStep| matches!(step, SchedStep::Spin(Section::Dispatch) | SchedStep::Hold(Section::Dispatch));
        let tasks = s.jobs.iter().filter(|j| dispatching(j.sched.step)).map(|j| Actor::Task(j.index));
        let workers = s.cpus.iter().filter(|c| dispatching(c.kworker.sched.step)).map(|c| Actor::Kworker(c.id));
        tasks.chain(workers).collect()
    }

    /// mq-deadline's state on nullb0.
    fn deadline(s: &Sim) -> &Deadline {
        let Sched::MqDeadline(dd) = &s.devs[DevId(0)].elevator.as_ref().unwrap().sched else {
            panic!("nullb0's scheduler is mq-deadline")
        };
        dd
    }

    /// Is someone about to dispatch what the scheduler holds: an actor in
    /// its scheduler program, or a kworker with the queue run on its list?
    /// (A run armed BLK_MQ_BUDGET_DELAY later does not count: the device
    /// would idle that long.)
    fn dispatch_coming(s: &Sim) -> bool {
        let e = s.devs[DevId(0)].elevator.as_ref().unwrap();
        let running = |step: SchedStep, ops_left: bool| step != SchedStep::None || ops_left;
        s.jobs.iter().any(|j| running(j.sched.step, !j.sched.ops.is_empty()))
            || s.cpus
                .iter()
                .any(|c| running(c.kworker.sched.step, !c.kworker.worklist.is_empty()) || c.kworker.runnable)
            || matches!(e.run_work, RunWork::Queued { .. })
    }

    /// Step the simulation event by event, checking `check` after each.
    fn step_all(s: &mut Sim, mut check: impl FnMut(&Sim)) {
        s.start_phase();
        while !s.all_done() {
            let Some(ev) = s.q.pop() else { panic!("{}", s.stall_report()) };
            s.handle(ev);
            check(s);
        }
    }

    #[test]
    fn with_the_2024_series_dispatch_never_runs_on_two_cpus_at_once() {
        let mut s = sim(true, 32);
        let (mut steps, mut busy) = (0u64, 0u64);
        step_all(&mut s, |s| {
            let d = dispatchers(s);
            assert!(d.len() <= 1, "two dispatchers at once: {d:?}");
            let dd = deadline(s);
            assert_eq!(dd.dispatching, !d.is_empty(), "DD_DISPATCHING is set exactly while someone dispatches");
            steps += 1;
            busy += d.len() as u64;
        });
        let dd = deadline(&s);
        assert!(dd.dispatch_skipped > 100, "other CPUs found dispatch busy and left: {}", dd.dispatch_skipped);
        assert!(busy * 10 > steps, "someone dispatched much of the time: {busy} of {steps}");
        // Without the series several CPUs dispatch at once.
        let mut s = sim(false, 32);
        let mut most = 0;
        step_all(&mut s, |s| most = most.max(dispatchers(s).len()));
        assert!(most >= 4, "mainline: {most} dispatchers at most");
    }

    #[test]
    fn a_skipped_dispatch_is_always_run_again_and_no_request_waits_while_the_device_has_room() {
        for (patch, jobs) in [(true, 32), (true, 3), (false, 32)] {
            let mut s = sim(patch, jobs);
            step_all(&mut s, |s| {
                let d = &s.devs[DevId(0)];
                let e = d.elevator.as_ref().unwrap();
                let waiting = e.ops().queued() + e.dispatch.len();
                // Requests wait while the device could take them (a driver tag is free).
                if waiting > 0 && (e.driver_tags_free > 0 || d.disk.inflight == 0) {
                    assert!(
                        dispatch_coming(s),
                        "patch {patch}, {jobs} jobs: {waiting} requests wait, the device has room and no dispatch is coming"
                    );
                }
            });
            // Every I/O completed: nothing was left behind.
            let inflight: u32 = s.jobs.iter().map(|j| j.inflight).sum();
            assert_eq!(inflight, 0, "patch {patch}: {inflight} I/Os never completed");
            assert_eq!(s.reqs.live, 0);
        }
    }
}
