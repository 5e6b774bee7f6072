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
//! discard merges; its scheduler tag is freed, `blk_mq_free_requests`;
//! after a merge found in the request hash the grown request tries again,
//! joining the one that ends where it starts, and so on); after a bio's
//! merge the grown request may join its neighbour in sector order
//! (`attempt_back_merge`, `attempt_front_merge`). A merged bio (or
//! request) rides with its request and ends with it.

use crate::block::merge_rules::{MergeHost, MergeKind, MergeLimits, MergePath, PlugTail};
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
            discard_max_bytes: d.driver.max_discard_bytes(),
            noxmerges: q.nomerges == 1,
        })
    }

    /// `blk_rq_merge_ok` and `blk_try_merge` of `bio` into the plug's last
    /// request `tail` (same device, queue and direction; `nomerges=2`
    /// forbids every merge), and `tail` grown by it when it merges: a
    /// discard anywhere (`MergeLimits::merges`), any other bio at the back
    /// or the front.
    pub(crate) fn plug_merges(&self, tail: &mut PlugTail, bio: &PlugTail) -> Option<MergeKind> {
        if !tail.same_queue(bio) {
            return None;
        }
        self.merge_limits(bio.dev).and_then(|l| l.merges(tail, bio, true, true))
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
        // A bio's bytes, or a request's with its merged bios (attempt_merge).
        let (dev, dir, bytes, ranges) = (r.dev(), r.dir, r.dev_bytes, r.ranges);
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
        self.reqs.reqs[req].tagless = true;
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
    /// with that request and takes no tag of its own. Returns the cost of
    /// what a freed tag starts, if it merged.
    #[inline(never)]
    pub(crate) fn elv_bio_merge(&mut self, cpu: CpuId, dev: DevId, req: ReqId) -> Option<u64> {
        let found = self.elv_merge(cpu, dev, req, MergePath::Bio)?;
        let joined = self.attempt_request_merge(dev, found.host, found.kind);
        Some(joined.map_or(0, |(_, next)| self.put_merged_tag(cpu, dev, next)))
    }

    /// `attempt_back_merge` / `attempt_front_merge`: `host`, grown, may now
    /// touch the request next to it in the scheduler (after it, `Back`; before
    /// it, `Front`); if so the later of the two joins the earlier and leaves
    /// the scheduler. Returns the two (the one that stays, the one whose tag
    /// the caller frees).
    fn attempt_request_merge(&mut self, dev: DevId, host: ReqId, kind: MergeKind) -> Option<(ReqId, ReqId)> {
        let limits = self.merge_limits(dev)?;
        let e = self.devs[dev].elevator.as_mut()?;
        let other = e.ops().neighbour(host, kind, &self.reqs)?;
        let (req, next) = if kind == MergeKind::Back { (host, other) } else { (other, host) };
        if !limits.joins(&self.reqs.reqs[req], &self.reqs.reqs[next]) {
            return None;
        }
        e.ops_mut().requests_merged(req, next);
        self.merge_into(req, next, MergeKind::Back);
        Some((req, next))
    }

    /// The scheduler tag of `req`, which merged into another request, is
    /// freed (`blk_mq_free_requests`). Returns what the freed tag starts.
    fn put_merged_tag(&mut self, cpu: CpuId, dev: DevId, req: ReqId) -> u64 {
        let hctx = self.reqs.reqs[req].hctx;
        self.put_tag(cpu, dev, hctx)
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
            let Some(freed) = self.elv_insert_merge(cpu, dev, req) else {
                i += 1;
                continue;
            };
            moving.remove(i);
            debt += freed + self.put_merged_tag(cpu, dev, req);
        }
        debt
    }

    /// `blk_mq_sched_try_insert_merge` of `req` (holding a scheduler tag,
    /// which the caller frees if it merged): `elv_attempt_insert_merge`.
    /// After a merge found in the request hash (not the one-hit cache) the
    /// grown request looks up the one that ends where it starts and joins
    /// it, and so on; each request that joins another frees its tag, the
    /// last to join first (`blk_mq_free_requests` over the free list).
    /// Returns what those tags start, if `req` merged.
    pub(crate) fn elv_insert_merge(&mut self, cpu: CpuId, dev: DevId, req: ReqId) -> Option<u64> {
        let found = self.elv_merge(cpu, dev, req, MergePath::Insert)?;
        let mut joined = Vec::new();
        if found.hashed {
            let mut host = found.host;
            while let Some((req, next)) = self.attempt_request_merge(dev, host, MergeKind::Front) {
                joined.push(next);
                host = req;
            }
        }
        Some(joined.into_iter().rev().map(|next| self.put_merged_tag(cpu, dev, next)).sum())
    }

    /// `req` offered to the requests `dev`'s scheduler holds, in its lookup
    /// order for `path` (`ElevatorOps::merge_host`); merged into the first
    /// that takes it, which is returned with how it was found.
    fn elv_merge(&mut self, cpu: CpuId, dev: DevId, req: ReqId, path: MergePath) -> Option<MergeHost> {
        let limits = self.merge_limits(dev)?;
        let e = self.devs[dev].elevator.as_mut()?;
        let found = e.ops().merge_host(cpu, req, &self.reqs, &limits, path)?;
        e.ops_mut().merged(found.host);
        self.merge_into(found.host, req, found.kind);
        Some(found)
    }
}

#[cfg(test)]
mod tests {
    use crate::block::elevator::Sched;
    use crate::block::Owner;
    use crate::ids::{CpuId, DevId, HctxId, JobId, ReqId};
    use crate::machine::builtin;
    use crate::settings::Settings;
    use crate::system::Sim;
    use crate::workload::{Direction, IoEngine, JobConfig};

    /// Single-queue null_blk with mq-deadline and one libaio job (not run).
    fn sim() -> Sim {
        let m = builtin("ryzen-7950x").unwrap();
        let mut s = Settings::default();
        s.apply_cmdline("null_blk.submit_queues=1").unwrap();
        s.apply_write("/sys/block/nullb0/queue/scheduler=mq-deadline", &["nullb0".into()]).unwrap();
        let mut j = JobConfig::new("w");
        j.ioengine = IoEngine::Libaio;
        j.direct = true;
        j.filenames = vec!["/dev/nullb0".into()];
        Sim::build(&m, &s, &[j], 1).unwrap()
    }

    /// A 4 KiB write of the job at `offset`.
    fn write(s: &mut Sim, offset: u64) -> ReqId {
        let req = s.reqs.alloc();
        let r = &mut s.reqs.reqs[req];
        (r.owner, r.dir, r.offset, r.bytes, r.dev_bytes) = (Owner::Job(JobId(0)), Direction::Write, offset, 4096, 4096);
        (r.dev, r.hctx, r.ranges, r.front_bytes) = (Some(DevId(0)), HctxId(0), 1, 0);
        (r.next_merged, r.tagless) = (None, false);
        req
    }

    /// `req` queued in mq-deadline, holding a scheduler tag.
    fn queued(s: &mut Sim, req: ReqId) {
        assert!(s.get_tag(DevId(0), HctxId(0), req));
        let e = s.devs[DevId(0)].elevator.as_mut().unwrap();
        let Sched::MqDeadline(dd) = &mut e.sched else { panic!("mq-deadline") };
        dd.fifo[1].push_back(req);
        dd.last_merge = dd.last_merge.or(Some(req));
    }

    /// A sim with 4 KiB writes at `lo` and `hi` queued apart, `lo` first
    /// (the one-hit cache's) or `hi` first.
    fn two_queued(lo: u64, hi: u64, lo_first: bool) -> (Sim, ReqId, ReqId) {
        let mut s = sim();
        let (l, h) = (write(&mut s, lo), write(&mut s, hi));
        let order = if lo_first { [l, h] } else { [h, l] };
        order.iter().for_each(|&r| queued(&mut s, r));
        (s, l, h)
    }

    fn fifo(s: &Sim) -> Vec<ReqId> {
        let Sched::MqDeadline(dd) = &s.devs[DevId(0)].elevator.as_ref().unwrap().sched else { panic!() };
        dd.fifo[1].iter().copied().collect()
    }

    #[test]
    fn a_bio_that_fills_the_gap_between_two_queued_requests_joins_them_into_one() {
        // The one-hit cache first: with [0, 4k) there (inserted first) the bio
        // back-merges into it and attempt_back_merge finds [8k, 12k) starting
        // where it now ends; with [8k, 12k) there the bio merges in front and
        // attempt_front_merge finds [0, 4k) ending where it now starts. Either
        // way the later request joins the earlier, leaves the scheduler (the
        // survivor takes the older FIFO place) and frees its tag; two merges.
        for a_first in [true, false] {
            let (mut s, a, c) = two_queued(0, 8192, a_first);
            let busy = s.devs[DevId(0)].queues[HctxId(0)].busy;
            let b = write(&mut s, 4096);
            assert!(s.elv_bio_merge(CpuId(0), DevId(0), b).is_some());
            assert_eq!(fifo(&s), [a], "c left");
            assert_eq!((s.reqs.reqs[a].dev_offset(), s.reqs.reqs[a].dev_bytes), (0, 12288));
            let next = |r: ReqId| s.reqs.reqs[r].next_merged;
            let chain = if a_first { (Some(b), Some(c), None) } else { (Some(c), None, Some(b)) };
            assert_eq!((next(a), next(b), next(c)), chain, "a_first {a_first}");
            assert!(s.reqs.reqs[b].tagless && s.reqs.reqs[c].tagless);
            assert_eq!(s.devs[DevId(0)].disk.merges[1], 2);
            assert_eq!(s.devs[DevId(0)].queues[HctxId(0)].busy, busy - 1, "c's tag is free");
        }
    }

    #[test]
    fn a_bio_before_a_queued_request_merges_in_front_and_the_device_starts_there() {
        let mut s = sim();
        let c = write(&mut s, 8192);
        queued(&mut s, c);
        let b = write(&mut s, 4096);
        assert!(s.elv_bio_merge(CpuId(0), DevId(0), b).is_some());
        assert_eq!((s.reqs.reqs[c].dev_offset(), s.reqs.reqs[c].dev_bytes), (4096, 8192));
        assert_eq!(s.reqs.reqs[c].offset, 8192, "fio's offset of c's own io_u is unchanged");
        // Not contiguous, or nomerges=2: no merge.
        let far = write(&mut s, 65536);
        assert!(s.elv_bio_merge(CpuId(0), DevId(0), far).is_none());
        s.devs[DevId(0)].queue_settings.nomerges = 2;
        let d = write(&mut s, 0);
        assert!(s.elv_bio_merge(CpuId(0), DevId(0), d).is_none());
        assert_eq!(fifo(&s), [c]);
    }

    #[test]
    fn a_request_that_merges_in_the_hash_at_insertion_takes_its_host_into_the_one_before() {
        // [0, 4k) and [4k, 8k) queued apart; [8k, 12k) inserted. With [0, 4k)
        // the one-hit cache it does not take the request, the hash finds
        // [4k, 8k), and elv_attempt_insert_merge looks again for the grown
        // request: [0, 4k) ends where it starts, and it joins it. Both
        // merged requests' tags are free. With [4k, 8k) the one-hit cache
        // the loop does not run: two requests stay.
        for hash in [true, false] {
            let (mut s, z, a) = two_queued(0, 4096, hash);
            let c = write(&mut s, 8192);
            assert!(s.get_tag(DevId(0), HctxId(0), c));
            let busy = s.devs[DevId(0)].queues[HctxId(0)].busy;
            let mut moving = vec![c];
            s.elv_insert_merges(CpuId(0), DevId(0), &mut moving);
            assert!(moving.is_empty(), "c merged");
            let bytes = |s: &Sim, r: ReqId| (s.reqs.reqs[r].dev_offset(), s.reqs.reqs[r].dev_bytes);
            let freed = busy - s.devs[DevId(0)].queues[HctxId(0)].busy;
            if hash {
                assert_eq!(fifo(&s), [z]);
                assert_eq!(bytes(&s, z), (0, 12288));
                assert_eq!((s.reqs.reqs[z].next_merged, s.reqs.reqs[a].next_merged), (Some(a), Some(c)));
                assert_eq!((s.devs[DevId(0)].disk.merges[1], freed), (2, 2));
            } else {
                assert_eq!(fifo(&s), [a, z]);
                assert_eq!(bytes(&s, a), (4096, 8192));
                assert_eq!((s.devs[DevId(0)].disk.merges[1], freed), (1, 1));
            }
        }
    }
}
