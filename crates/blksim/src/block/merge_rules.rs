//! The rules by which a bio joins a request (state): the attempt's limits
//! as `blk_rq_merge_ok` and `blk_try_merge` read them (`blk-merge.c`), and
//! where a scheduler merge is tried. The merges themselves are `merge.rs`'s.

use crate::block::request::Request;
use crate::ids::{DevId, HctxId, ReqId};
use crate::workload::Direction;

/// `blk_queue_get_max_sectors` of a discard: `max_discard_sectors`, at
/// most UINT_MAX >> SECTOR_SHIFT sectors (NVMe's, without a DMRSL limit,
/// is UINT_MAX).
pub(crate) const MAX_DISCARD_SECTORS: u64 = (u32::MAX >> 9) as u64;

/// A request (or a bio) as a merge looks at it.
#[derive(Clone, Copy)]
pub(crate) struct PlugTail {
    pub(crate) dev: DevId,
    hctx: HctxId,
    dir: Direction,
    /// Where its first bio starts and its last ends, bytes.
    start: u64,
    end: u64,
    bytes: u64,
    /// Its bios (a discard request's ranges).
    bios: u32,
    /// Its I/O priority: only requests and bios of the same one merge.
    ioprio: u16,
}

impl PlugTail {
    pub(crate) fn of(dev: DevId, hctx: HctxId, dir: Direction, offset: u64, bytes: u32) -> PlugTail {
        PlugTail { dev, hctx, dir, start: offset, end: offset + bytes as u64, bytes: bytes as u64, bios: 1, ioprio: 0 }
    }

    /// Request `r` with its merged bios (their bytes and ranges).
    pub(crate) fn request(r: &Request) -> PlugTail {
        let tail = PlugTail::of(r.dev(), r.hctx, r.dir, r.dev_offset(), r.dev_bytes);
        PlugTail { bios: r.ranges as u32, ioprio: r.ioprio, ..tail }
    }

    /// Of I/O priority `ioprio`.
    pub(crate) fn with_ioprio(self, ioprio: u16) -> PlugTail {
        PlugTail { ioprio, ..self }
    }

    /// The plug keeps a list per hardware queue: only a request of the same one is a candidate.
    pub(crate) fn same_queue(&self, other: &PlugTail) -> bool {
        self.hctx == other.hctx
    }

    /// Bio `r` (a request's own I/O).
    pub(crate) fn bio(r: &Request) -> PlugTail {
        PlugTail { ioprio: r.ioprio, ..PlugTail::of(r.dev(), r.hctx, r.dir, r.offset, r.bytes) }
    }
}

/// How a bio joins a request (`enum elv_merge`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MergeKind {
    /// At its end (`bio_attempt_back_merge`).
    Back,
    /// Before its start (`bio_attempt_front_merge`).
    Front,
    /// As one more range of a discard (`bio_attempt_discard_merge`).
    Discard,
}

/// A queue's merge limits, as `blk_rq_merge_ok` and the bio attempts read them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MergeLimits {
    /// `max_sectors_kb`, in bytes.
    pub(crate) max_bytes: u64,
    /// `max_discard_segments` (0 or 1: a discard merges only where it continues a request).
    pub(crate) discard_segments: u32,
    /// `max_discard_sectors`, in bytes: a discard request's limit in place of `max_bytes`.
    pub(crate) discard_max_bytes: u64,
    /// `nomerges=1` (QUEUE_FLAG_NOXMERGES): the elevator tries its one-hit cache only.
    pub(crate) noxmerges: bool,
}

impl MergeLimits {
    /// `blk_try_merge` of `bio` into `host` and the attempt's limits
    /// (same device and direction): a discard into a request that takes several
    /// ranges anywhere (`blk_discard_mergable`, `bio_attempt_discard_merge`:
    /// fewer ranges than `max_discard_segments`, within the discard size
    /// limit) when `anywhere` (the plug and the one-hit cache, not the
    /// request hash, which finds only a request that ends where the bio
    /// starts); any other bio at the back, contiguous, or, when `front`,
    /// before the start, within `max_sectors_kb` (a discard's, of a device
    /// that takes one range a request: within `max_discard_sectors`). `host`
    /// grows by `bio` when it merges.
    pub(crate) fn merges(&self, host: &mut PlugTail, bio: &PlugTail, anywhere: bool, front: bool) -> Option<MergeKind> {
        // blk_rq_merge_ok: same device, direction and I/O priority.
        if host.dev != bio.dev || host.dir != bio.dir || host.ioprio != bio.ioprio {
            return None;
        }
        let back = host.end == bio.start;
        let kind = if bio.dir == Direction::Trim && self.discard_segments > 1 {
            ((anywhere || back)
                && host.bios < self.discard_segments
                && host.bytes + bio.bytes <= self.discard_max_bytes)
                .then_some(MergeKind::Discard)
        } else if host.bytes + bio.bytes > self.max_request_bytes(bio.dir) {
            None
        } else if back {
            Some(MergeKind::Back)
        } else if front && bio.end == host.start {
            Some(MergeKind::Front)
        } else {
            None
        };
        match kind {
            Some(MergeKind::Front) => host.start = bio.start,
            Some(_) => host.end = bio.end,
            None => return None,
        }
        (host.bytes, host.bios) = (host.bytes + bio.bytes, host.bios + 1);
        kind
    }

    /// `attempt_merge` of two queued requests: `next` starts where `req`
    /// ends, same device and direction, within `max_sectors_kb` (a
    /// discard's limit for discards).
    pub(crate) fn joins(&self, req: &Request, next: &Request) -> bool {
        let (r, n) = (PlugTail::request(req), PlugTail::request(next));
        r.dev == n.dev
            && r.dir == n.dir
            && r.ioprio == n.ioprio
            && r.end == n.start
            && r.bytes + n.bytes <= self.max_request_bytes(r.dir)
    }

    /// `blk_rq_get_max_sectors` in bytes: `max_discard_sectors` for a
    /// discard, `max_sectors_kb` for the others.
    fn max_request_bytes(&self, dir: Direction) -> u64 {
        if dir == Direction::Trim {
            self.discard_max_bytes
        } else {
            self.max_bytes
        }
    }

    /// How request `bio` merges into the queued request `host`, if it does
    /// (`anywhere`: a discard may lie anywhere, as for the one-hit cache;
    /// `front`: before its start too).
    pub(crate) fn takes(&self, host: &Request, bio: &Request, anywhere: bool, front: bool) -> Option<MergeKind> {
        self.merges(&mut PlugTail::request(host), &PlugTail::bio(bio), anywhere, front)
    }
}

/// The queued request a scheduler found for a merge, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MergeHost {
    pub(crate) host: ReqId,
    pub(crate) kind: MergeKind,
    /// Found in the request hash, past the one-hit cache (`q->last_merge`):
    /// an insertion's merge then tries again for the grown request
    /// (`elv_attempt_insert_merge`'s loop).
    pub(crate) hashed: bool,
}

/// Where a scheduler merge is tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MergePath {
    /// A bio as it is submitted (`->bio_merge`), before it has a request.
    Bio,
    /// A request as it is inserted (`blk_mq_sched_try_insert_merge`).
    Insert,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ios_of_one_priority_merge() {
        let limits =
            MergeLimits { max_bytes: 1 << 20, discard_segments: 1, discard_max_bytes: 1 << 30, noxmerges: false };
        let tail = |offset: u64, ioprio: u16| {
            PlugTail::of(DevId(0), HctxId(0), Direction::Write, offset, 4096).with_ioprio(ioprio)
        };
        // Contiguous, same direction: a back merge when the priorities agree (RT/0 = 0x2000).
        assert_eq!(limits.merges(&mut tail(0, 0x2000), &tail(4096, 0x2000), false, false), Some(MergeKind::Back));
        assert_eq!(limits.merges(&mut tail(0, 0), &tail(4096, 0x2000), false, false), None);
        assert_eq!(limits.merges(&mut tail(4096, 0x4000), &tail(0, 0x6007), false, true), None);
    }
}
