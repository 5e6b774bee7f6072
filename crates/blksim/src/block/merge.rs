//! Kernel path: merging a bio into a request (`blk-merge.c`, `elevator.c`).
//! In the plug: `blk_attempt_plug_merge` → `blk_attempt_bio_merge`:
//! `blk_rq_merge_ok`, then `blk_try_merge` picks a discard merge
//! (`bio_attempt_discard_merge`: one more range, anywhere), a back merge
//! (`bio_attempt_back_merge`: contiguous) or a front merge
//! (`bio_attempt_front_merge`: it ends where the request starts). In the
//! I/O scheduler the scheduler offers its queued requests in its lookup
//! order (mq-deadline's `q->last_merge`, request hash and sort list,
//! kyber's per-CPU list) and the first that takes it is its host: a bio as
//! it is submitted, before it takes a tag (`blk_mq_sched_bio_merge`:
//! mq-deadline's `elv_merge`, kyber's `blk_bio_list_merge`), and a request
//! as it is inserted (`elv_attempt_insert_merge`, mq-deadline's; back and
//! discard merges; its scheduler tag is freed, `blk_mq_free_requests`). A
//! merged bio rides with its request and ends with it.

use crate::block::merge_rules::{MergeKind, MergeLimits, MergePath, PlugTail};
use crate::ids::{CpuId, DevId, ReqId};
use crate::system::Sim;
use crate::workload::Direction;

impl Sim {
    /// The merge limits of `dev`'s queue; `None` with `nomerges=2`, which
    /// forbids every merge.
    pub(crate) fn merge_limits(&self, dev: DevId) -> Option<MergeLimits> {
        let d = &self.devs[dev];
        let q = &d.queue_settings;
        (q.nomerges != 2).then(|| MergeLimits {
            max_bytes: q.max_sectors_kb as u64 * 1024,
            discard_segments: d.driver.max_discard_segments(),
            noxmerges: q.nomerges == 1,
        })
    }

    /// `blk_rq_merge_ok` and `blk_try_merge` of `bio` into the plug's last
    /// request `tail` (same device, queue and direction; `nomerges=2`
    /// forbids every merge), and `tail` grown by it when it merges: a
    /// discard anywhere (`MergeLimits::merges`), any other bio at the back
    /// or the front.
    pub(crate) fn plug_merges(&self, tail: &mut PlugTail, bio: &PlugTail) -> Option<MergeKind> {
        self.merge_limits(bio.dev).and_then(|l| l.merges(tail, bio, true, true, true))
    }

    /// `blk_attempt_plug_merge`: `req` merges into `last`, the plug's last
    /// request (`plug_merges`), rides with it and takes no tag of its own.
    pub(crate) fn plug_merge(&mut self, last: ReqId, req: ReqId) -> bool {
        let (l, r) = (&self.reqs.reqs[last], &self.reqs.reqs[req]);
        let Some(kind) = self.plug_merges(&mut PlugTail::request(l), &PlugTail::bio(r)) else {
            return false;
        };
        self.merge_into(last, req, kind);
        true
    }

    /// `req` rides with `host` from now on (`kind`: at its back, as a
    /// range, or in front, where the device's I/O then starts): chained
    /// after its merged bios, its bytes and ranges added, counted in the
    /// disk's merges.
    fn merge_into(&mut self, host: ReqId, req: ReqId, kind: MergeKind) {
        let r = &self.reqs.reqs[req];
        let (dev, dir, bytes, ranges) = (r.dev(), r.dir, r.bytes, r.ranges);
        let mut end = host;
        while let Some(next) = self.reqs.reqs[end].next_merged {
            end = next;
        }
        self.reqs.reqs[end].next_merged = Some(req);
        self.reqs.reqs[host].dev_bytes += bytes;
        if kind == MergeKind::Front {
            self.reqs.reqs[host].front_bytes += bytes;
        }
        self.reqs.reqs[host].ranges += ranges;
        self.reqs.reqs[req].merged = true;
        let disk = &mut self.devs[dev].disk;
        match dir {
            Direction::Read => disk.merges[0] += 1,
            Direction::Trim => disk.discard_merges += 1,
            Direction::Write => disk.merges[1] += 1,
        }
    }

    /// `blk_mq_sched_bio_merge`: the bio of `req`, submitted on `cpu`,
    /// merges into a request `dev`'s scheduler holds (before it takes a
    /// tag, as the kernel tries it before allocating a request): it rides
    /// with that request and takes no tag of its own.
    #[inline(never)]
    pub(crate) fn elv_bio_merge(&mut self, cpu: CpuId, dev: DevId, req: ReqId) -> bool {
        self.elv_merge(cpu, dev, req, MergePath::Bio).is_some()
    }

    /// The requests `moving` that `dev`'s scheduler is about to insert (on
    /// `cpu`, its lock held) each try to merge into one it holds
    /// (`blk_mq_sched_try_insert_merge`); one that merges leaves `moving`
    /// and gives its scheduler tag back. Returns the cost of what the freed
    /// tags start (a waiter's insertion).
    pub(crate) fn elv_insert_merges(&mut self, cpu: CpuId, dev: DevId, moving: &mut Vec<ReqId>) -> u64 {
        let mut debt = 0;
        let mut i = 0;
        while i < moving.len() {
            let req = moving[i];
            if !self.elv_insert_merge(cpu, dev, req) {
                i += 1;
                continue;
            }
            moving.remove(i);
            let hctx = self.reqs.reqs[req].hctx;
            debt += self.put_tag(cpu, dev, hctx);
        }
        debt
    }

    /// `blk_mq_sched_try_insert_merge` of `req` (holding a scheduler tag,
    /// which the caller frees if it merged).
    pub(crate) fn elv_insert_merge(&mut self, cpu: CpuId, dev: DevId, req: ReqId) -> bool {
        self.elv_merge(cpu, dev, req, MergePath::Insert).is_some()
    }

    /// `req` offered to the requests `dev`'s scheduler holds, in its lookup
    /// order for `path` (`ElevatorOps::merge_host`); merged into the first
    /// that takes it, which is returned.
    fn elv_merge(&mut self, cpu: CpuId, dev: DevId, req: ReqId, path: MergePath) -> Option<ReqId> {
        let limits = self.merge_limits(dev)?;
        let e = self.devs[dev].elevator.as_mut()?;
        let (host, kind) = e.ops().merge_host(cpu, req, &self.reqs, &limits, path)?;
        e.ops_mut().merged(host);
        self.merge_into(host, req, kind);
        Some(host)
    }
}
