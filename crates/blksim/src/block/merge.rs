//! Kernel path: the plug merge (`blk-merge.c`). `blk_attempt_plug_merge`
//! → `blk_attempt_bio_merge`: `blk_rq_merge_ok`, then `blk_try_merge` picks
//! a discard merge (`bio_attempt_discard_merge`: one more range, anywhere)
//! or a back merge (`bio_attempt_back_merge`: contiguous); the merged bio
//! rides with the request and ends with it.

use crate::ids::{DevId, HctxId, ReqId};
use crate::system::Sim;
use crate::workload::Direction;

/// `blk_queue_get_max_sectors` of a discard: `max_discard_sectors`, at
/// most UINT_MAX >> SECTOR_SHIFT sectors (NVMe's, without a DMRSL limit,
/// is UINT_MAX).
const MAX_DISCARD_SECTORS: u64 = (u32::MAX >> 9) as u64;

/// The plug list's last request as `blk_attempt_bio_merge` looks at it.
#[derive(Clone, Copy)]
pub(crate) struct PlugTail {
    dev: DevId,
    hctx: HctxId,
    dir: Direction,
    /// Where its last bio ends, bytes.
    end: u64,
    bytes: u64,
    /// Its bios (a discard request's ranges).
    bios: u32,
}

impl PlugTail {
    pub(crate) fn of(dev: DevId, hctx: HctxId, dir: Direction, offset: u64, bytes: u32) -> PlugTail {
        PlugTail { dev, hctx, dir, end: offset + bytes as u64, bytes: bytes as u64, bios: 1 }
    }
}

impl Sim {
    /// `blk_rq_merge_ok` and `blk_try_merge` of `bio` into the plug's last
    /// request `tail` (same device, queue and direction; `nomerges=2`
    /// forbids every merge), and `tail` grown by it when it merges. A
    /// discard on a device that takes several ranges per request
    /// (`blk_discard_mergable`) merges wherever it lies, as one more range,
    /// while the request has fewer than `max_discard_segments` and stays
    /// within the discard size limit (`bio_attempt_discard_merge`); any
    /// other bio only at the back, contiguous, within `max_sectors_kb`.
    pub(crate) fn plug_merges(&self, tail: &mut PlugTail, bio: &PlugTail) -> bool {
        let q = &self.devs[bio.dev].queue_settings;
        if q.nomerges == 2 || tail.dev != bio.dev || tail.hctx != bio.hctx || tail.dir != bio.dir {
            return false;
        }
        let segments = self.devs[bio.dev].driver.max_discard_segments();
        let fits = if bio.dir == Direction::Trim && segments > 1 {
            tail.bios < segments && (tail.bytes + bio.bytes) / 512 <= MAX_DISCARD_SECTORS
        } else {
            tail.end == bio.end - bio.bytes && tail.bytes + bio.bytes <= q.max_sectors_kb as u64 * 1024
        };
        if fits {
            (tail.end, tail.bytes, tail.bios) = (bio.end, tail.bytes + bio.bytes, tail.bios + 1);
        }
        fits
    }

    /// `blk_attempt_plug_merge`: `req` merges into `last`, the plug's last
    /// request (`plug_merges`), rides with it and takes no tag of its own.
    pub(crate) fn plug_merge(&mut self, last: ReqId, req: ReqId) -> bool {
        let (l, r) = (&self.reqs.reqs[last], &self.reqs.reqs[req]);
        // `last`'s ranges are its bios' (a block-layer discard has one range a bio).
        let mut tail =
            PlugTail { bios: l.ranges as u32, ..PlugTail::of(l.dev(), l.hctx, l.dir, l.offset, l.dev_bytes) };
        if !self.plug_merges(&mut tail, &PlugTail::of(r.dev(), r.hctx, r.dir, r.offset, r.bytes)) {
            return false;
        }
        let (dev, dir, bytes, ranges) = (r.dev(), r.dir, r.bytes, r.ranges);
        // Chained at the end of `last`'s merged bios.
        let mut end = last;
        while let Some(next) = self.reqs.reqs[end].next_merged {
            end = next;
        }
        self.reqs.reqs[end].next_merged = Some(req);
        self.reqs.reqs[last].dev_bytes += bytes;
        self.reqs.reqs[last].ranges += ranges;
        self.reqs.reqs[req].merged = true;
        let disk = &mut self.devs[dev].disk;
        match dir {
            Direction::Read => disk.merges[0] += 1,
            Direction::Trim => disk.discard_merges += 1,
            Direction::Write => disk.merges[1] += 1,
        }
        true
    }
}
