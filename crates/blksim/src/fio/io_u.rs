//! fio: where a job's next I/O goes in its file, `get_next_offset`
//! (`io_u.c`). A random job draws a block of `blockalign` bytes every
//! `ddir_seq_nr` I/Os (`rw=randread:N`) and goes on sequentially in between;
//! a sequential job starts each I/O where the last one of its direction
//! ended, plus `ddir_seq_add` (`rw=read:8k` leaves holes, `rw=read:-8k`
//! goes backwards). Positions are kept per file and direction, as fio's
//! `f->last_pos[ddir]`: a sequential `rw=readwrite` job reads and writes
//! two streams from the start of its region. A random job keeps fio's
//! random map (`random_map.rs`) unless `norandommap`: each block once per pass.

use crate::fio::job::{Job, LoopEnd};
use crate::fio::pace::{bsrange_pick, bssplit_pick};
use crate::workload::{Direction, RwKind};

/// `rw=trimwrite` / `randtrimwrite`: each block trimmed, then written
/// (fio's `set_rw_ddir`, `get_next_offset`, `get_next_buflen`). Per file and
/// direction the start of the last I/O (`f->last_start`, none at first): a
/// write is next while the last trim started elsewhere than the last write.
/// A random job's write takes its trim's offset and length; a sequential
/// one follows the trim's stream with the same sizes (fio seeds the trim's
/// `bsrange_state` as the write's).
#[derive(Clone)]
pub(crate) struct TrimWrite {
    pub last_start: Vec<u64>,
}
use crate::fio::random_map::Pass;
use crate::ids::DevId;
use crate::workload::Program;

/// Draws of a size before giving up on one that fits: fio draws until one does (near a
/// region's end, `bsrange=512-1m` takes ~2,000 draws on average for its 512 bytes), which never
/// ends when only `bssplit` entries of 0% fit; blksim then takes the direction's smallest size
/// at once, and after this many draws otherwise.
const BUFLEN_TRIES: u32 = 1 << 20;

/// Why `Job::next_offset` gave no offset.
pub(crate) enum NoOffset {
    /// Another file, or the next pass, may have one: get_io_u tries again.
    Retry,
    /// None is left: the job's I/O is done.
    Done,
}

impl Job {
    /// The file the next I/O of at least `bs` bytes goes to (fio's
    /// get_next_file: round robin, t/io_uring's by pending depth): its index,
    /// device, size and the job's region of it. The null engine's one file
    /// is `offset + size` long (offsets span `size`); `capacity` gives a
    /// device's size.
    #[inline(always)]
    pub(crate) fn next_file(&mut self, bs: u64, capacity: impl Fn(DevId) -> u64) -> (usize, Option<DevId>, u64, u64) {
        if let Some(files) = self.files.as_deref_mut() {
            // Several files: the next not done, its region its share of `size`.
            let di = files.next(&mut self.rand);
            let (real, region) = files.sizes[di];
            return (di, self.devs.get(di).copied(), real, region.max(bs));
        }
        let (di, dev, real) = if self.devs.is_empty() {
            if let Some((real, region)) = self.cfg.null_file {
                return (0, None, real, region.max(bs));
            }
            // (A strided job's offset moves with its zone; its file does not.)
            let start = self.strided.as_deref().map_or(self.cfg.offset, |z| z.start);
            (0, None, start + self.cfg.size.unwrap_or(bs))
        } else {
            let di = if self.cfg.program == Program::TIoUring {
                self.tio_next_file()
            } else {
                let di = self.next_dev;
                self.next_dev = if di + 1 == self.devs.len() { 0 } else { di + 1 };
                di
            };
            let dev = self.devs[di];
            (di, Some(dev), capacity(dev))
        };
        (di, dev, real, self.cfg.size.unwrap_or(real).max(bs))
    }

    /// The offset, relative to the job's `offset`, of the next I/O of at
    /// least the direction's smallest size in direction `d` on its file `di`,
    /// whose region (fio's `io_size`) is `region` bytes of a file of `real`
    /// bytes. When the file has none left (fio's get_next_offset fails),
    /// the job's next loop starts over, or with `io_size` bytes left another
    /// pass does, as fio's thread_main goes round again while keep_running
    /// (its files closed and opened, its generators seeded again with
    /// `randrepeat`), and with `redraw` a mixed job draws the pass's first
    /// direction again into `d` (fio's new get_io_u); `NoOffset::Done` when
    /// it was the last loop (the job is done). A job of several files
    /// instead finds the file done and tries the next (`NoOffset::Retry`),
    /// the next pass once every file is done.
    #[inline(always)]
    pub(crate) fn next_offset(
        &mut self,
        di: usize,
        d: &mut usize,
        region: u64,
        real: u64,
        redraw: bool,
    ) -> Result<u64, NoOffset> {
        if let Some(o) = self.draw_offset(di, *d, self.cfg.bs[*d], region, real) {
            return Ok(o);
        }
        if !self.fill_failed(di) {
            return Err(NoOffset::Done);
        }
        if self.files.is_some() {
            return Err(NoOffset::Retry);
        }
        // The next pass's get_io_u.
        self.io_u_get();
        if redraw && self.cfg.rw.is_mixed() {
            *d = self.next_dir().index();
        }
        self.draw_offset(di, *d, self.cfg.bs[*d], region, real).ok_or(NoOffset::Done)
    }

    /// fill_io_u failed on file `di` (no offset left, or the I/O does not
    /// fit): with several files, that one is done and get_io_u tries the
    /// next; with one, or once every file is done, the pass is over
    /// (`pass_failed`). Whether get_io_u goes on.
    pub(crate) fn fill_failed(&mut self, di: usize) -> bool {
        // The io_u keeps the IO_U_F_BUSY_OK a sequential draw set (fio clears it as the io_u
        // completes): filled again on the next file, it is the same io_u.
        self.busy_ok_carried |= self.drew_seq;
        if let Some(files) = self.files.as_deref_mut() {
            if files.skewed() {
                // set_io_u_file: a skewed service's file is closed and starts over (fio_file_reset).
                if files.file_restarted(di) {
                    let fo = self.cfg.offset;
                    self.file_reset(di, fo);
                    return true;
                }
            } else if files.file_done(di) {
                return true;
            }
        }
        self.io_u_put_back();
        self.pass_failed()
    }

    /// get_io_u takes an io_u off the free list (`__get_io_u`), once per io_u
    /// filled: the one on top, which carries IO_U_F_BUSY_OK if a failed
    /// get_io_u put it back with the flag and nothing was freed on top of it since.
    #[inline(always)]
    pub(crate) fn io_u_get(&mut self) {
        if self.busy_ok_free.is_empty() || self.io_u_taken {
            return;
        }
        self.io_u_taken = true;
        let above = self.busy_ok_free.last_mut().expect("not empty");
        if *above == 0 {
            self.busy_ok_free.pop();
            self.busy_ok_carried = true;
        } else {
            *above -= 1;
        }
    }

    /// A failed get_io_u puts its io_u back on top of the free list, with its
    /// IO_U_F_BUSY_OK if it has one that matters (a random map to mark). Such a
    /// job takes the shaped loop (`init.rs`): in the others the list stays empty.
    fn io_u_put_back(&mut self) {
        if std::mem::take(&mut self.busy_ok_carried) && self.random_maps.is_some() {
            self.busy_ok_free.push(0);
        } else {
            self.io_us_freed(1);
        }
        self.io_u_taken = false;
    }

    /// `n` io_us completed (or were put back without the flag): on top of the free list.
    #[inline(always)]
    pub(crate) fn io_us_freed(&mut self, n: u32) {
        if let Some(above) = self.busy_ok_free.last_mut() {
            *above += n;
        }
    }

    /// A chain reaped `n` io_us before its fills (fio reaps before its next get_io_u, unless
    /// the null engine's FIO_Q_BUSY has it fill first): on the free list now.
    pub(crate) fn io_us_reaped(&mut self, n: u32) {
        self.io_us_freed(n);
        self.io_us_freed_early += n;
    }

    /// `k` io_us accounted: those not put on the free list as they were reaped go now.
    #[inline(always)]
    pub(crate) fn io_us_accounted(&mut self, k: u32) {
        let early = std::mem::take(&mut self.io_us_freed_early);
        self.io_us_freed(k.saturating_sub(early));
    }

    /// The io_u being filled is queued (placed, or a read-back's or an fsync's): its
    /// IO_U_F_BUSY_OK is cleared as it completes.
    #[inline(always)]
    pub(crate) fn io_u_used(&mut self) {
        self.busy_ok_carried = false;
        self.io_u_taken = false;
    }

    /// get_io_u failed (no offset left, or fill_io_u refused the I/O):
    /// do_io's pass ends, and the next starts if the job has one; false
    /// when it has none.
    pub(crate) fn pass_failed(&mut self) -> bool {
        self.drew_out = true;
        if !self.next_pass() {
            // get_io_u closed the file it found done; end_fsync's fsync opens it again. (A job
            // of several files logs each file it found done as it closed it: `FileSet::log_done`.)
            self.reopened |= self.files.is_none() && self.end_fsync_due();
            return false;
        }
        true
    }

    /// Does fill_io_u refuse an io_u placed at `o` (relative to the job's
    /// offset) of `bytes` in a region of `region` bytes of a file of `real`
    /// bytes (past the region, or past the file's end)? If so, the io_u
    /// keeps that offset (`fill_refused`).
    pub(crate) fn io_u_refused(&mut self, o: u64, bytes: u64, region: u64, real: u64) -> bool {
        let refused = o >= region || self.cfg.offset.saturating_add(o).saturating_add(bytes) > real;
        if refused {
            self.fill_refused(o, region);
        }
        refused
    }

    /// The job's next loop, or with `io_size` bytes left its next pass
    /// (fio's thread_main going round again while keep_running); false when
    /// the job has none.
    pub(crate) fn next_pass(&mut self) -> bool {
        // The pass ended at its loop's top or at a failed get_io_u: no io_u was refused.
        self.busy_cancel();
        // do_verify reads a pass's writes back before the next pass starts (`verify_next_loop`).
        if self.verify.as_deref().is_some_and(|v| v.cfg.do_verify && !v.phase && self.cfg.rw.writes()) {
            return false;
        }
        // do_io's end stops a job whose pass did no I/O (td->done), whatever is left of it;
        // keep_running goes on with a time-based job until its runtime ends.
        let more = self.pass_ios > 0
            && !(self.cfg.keeps_done_files && self.drew_out)
            && (self.cfg.time_based || self.loops_left > 1 || self.io_size_left() || self.number_ios_left());
        // fio's do_io returns at a loop's end: what is queued or in flight drains, end_fsync's
        // fsyncs run (`Sim::end_fsync_next`); then the next loop (`Sim::next_loop`).
        let busy = self.inflight > 0 || !self.queued.is_empty() || self.end_fsync_due();
        if more && busy && self.loop_end == LoopEnd::Running {
            self.loop_end = LoopEnd::Deferred;
            return false;
        }
        if !more {
            return false;
        }
        self.loops_left -= (self.loops_left > 1) as u32;
        self.rewind();
        true
    }

    /// do_io returned, drained (and synced): thread_main's next loop, if
    /// the job's loop ended with one to come (`LoopEnd::Deferred`). Whether it did.
    pub(crate) fn next_loop(&mut self) -> bool {
        if self.loop_end != LoopEnd::Deferred || self.error.is_some() || self.replay_ran_out_ns().is_some() {
            return false;
        }
        self.loop_end = LoopEnd::Drained;
        self.done_issuing = !self.next_pass();
        !self.done_issuing
    }

    /// do_io's end will run `end_fsync` (fio's should_fsync: not right after a sync).
    pub(crate) fn end_fsync_due(&self) -> bool {
        self.cfg.end_fsync && self.fsync.as_deref().is_some_and(|f| f.last != crate::fio::job::LastIssued::Sync)
    }

    /// do_io's loop top for an asynchronous engine: the io_us queued in this
    /// pass reached its `total_bytes`, so the pass ends before get_io_u (no
    /// direction or offset drawn); the next one starts, if the job has one.
    /// False when the job is done issuing (then marked so).
    #[inline(always)]
    pub(crate) fn pass_check(&mut self) -> bool {
        // (do_verify's read-back is not do_io's.)
        let go =
            self.pass_bytes < self.pass_total || self.verify.as_deref().is_some_and(|v| v.phase) || self.next_pass();
        self.done_issuing |= !go;
        go
    }

    /// fio's keep_running for a job that is not time-based, past its loops:
    /// `io_size` bytes not yet done (its I/Os and verify's read-backs, fio's
    /// `io_bytes`), at least its largest block's worth.
    pub(crate) fn io_size_left(&self) -> bool {
        !self.cfg.time_based && self.cfg.io_size.is_some_and(|io| io.saturating_sub(self.io_bytes()) >= self.max_bs())
    }

    #[inline(always)]
    pub(crate) fn draw_offset(&mut self, di: usize, d: usize, bs: u64, region: u64, real: u64) -> Option<u64> {
        let hit = self.cfg.rw.is_random() && self.seq_tick();
        let random = hit && {
            // should_do_random: `percentage_random` of them random, the others sequential.
            let perc = self.cfg.perc_rand[d];
            perc == 100 || self.rand.seq_rand[d].between(1, 100) <= perc as u64
        };
        self.drew_seq = !random;
        let pos = if random {
            let pos = self.random_offset(di, d, bs, region, real);
            if let Some(maps) = self.random_maps.as_deref_mut() {
                maps.mark = pos.is_some() && !self.busy_ok_carried;
            }
            pos
        } else if let Some(ls) = self.last_start.as_deref().filter(|_| !hit) {
            // rw_sequencer=identical: the direction's last offset again (the file's start at first).
            let last = ls[di * 3 + d];
            Some(if last == u64::MAX { 0 } else { last.wrapping_sub(self.cfg.offset) })
        } else {
            // Between the random draws of a random job, sequential I/O; at
            // the end of the file, a random one.
            match self.seq_offset(di, d, region, real) {
                None if self.cfg.rw.is_random() => self.random_offset(di, d, bs, region, real),
                pos => pos,
            }
        }?;
        // get_next_buflen's direction: with bs_is_seq_rand, a write's sizes after a random
        // draw, a read's after a sequential one.
        let sd = match self.cfg.bs_is_seq_rand {
            true => random as usize,
            false => d,
        };
        self.size_dir = sd;
        // fill_io_u: an I/O past the file's end is not issued; a varying size must fit its
        // region from there at its smallest (get_next_buflen's io_u_fits: else fill_io_u
        // fails, and do_io's pass ends).
        let (varies, bs) = (self.cfg.bs_varies(sd), if sd == d { bs } else { self.cfg.bs[sd] });
        let refused = self.io_u_refused(pos, if varies { 1 } else { bs }, region, real);
        let fits = !refused && (!varies || self.region_fits(pos, bs, region));
        if !fits {
            // The refused draw marks nothing, and the io_u filled next is marked by its own draw
            // (a sequential one sets IO_U_F_BUSY_OK), not by this one's.
            if let Some(maps) = self.random_maps.as_deref_mut() {
                maps.mark = false;
            }
            if !refused {
                // No size fits (get_next_buflen): the offset was the io_u's already.
                self.fill_refused(pos, region);
            }
        }
        fits.then_some(pos)
    }

    /// fill_io_u refused the io_u it had placed at `rel` (relative to the job's offset) in a
    /// region of `region` bytes: fio's get_next_offset left that offset in `io_u->offset` as
    /// it was when the check failed (relative past the region, `offset >= io_size`; with the
    /// file's offset added past that check), and get_io_u put the io_u back on top of the free
    /// list, where a sync filled next finds it (its `write_iolog` line shows that offset).
    fn fill_refused(&mut self, rel: u64, region: u64) {
        // get_next_block takes an offset of -1 for none ("bug in offset generation", a
        // randtrimwrite's write after its zone reset the file at offset 0): it fails before
        // it stores it, and the io_u keeps the offset it had.
        if rel == u64::MAX {
            return;
        }
        // (A strided job's `cfg.offset` is its zone's, fio's `f->file_offset`.)
        let stored = match rel >= region {
            true => rel,
            false => self.cfg.offset.saturating_add(rel),
        };
        if let Some(io_us) = self.fsync.as_deref_mut().and_then(|f| f.io_us.as_mut()) {
            io_us.refused(stored);
        }
    }

    /// get_next_offset's count of `ddir_seq_nr` (`rw=randread:N`): whether
    /// this io_u is the one of every N drawn at random. Every io_u counts,
    /// a randtrimwrite's write (placed where its trim was) too;
    /// td->ddir_seq_nr starts at 1, so the first is random.
    pub(crate) fn seq_tick(&mut self) -> bool {
        self.seq_left -= 1;
        let hit = self.seq_left == 0;
        if hit {
            self.seq_left = self.cfg.ddir_seq_nr;
        }
        hit
    }

    /// fio's get_next_buflen for an I/O at `o` whose offset was just drawn,
    /// in a region of `region` bytes, with the sizes of the direction the
    /// draw named (`size_dir`): its smallest when they do not vary, else a
    /// `bsrange` or `bssplit` draw that fits (where the smallest does not,
    /// no offset was drawn: `draw_offset`). Its length.
    pub(crate) fn next_buflen(&mut self, o: u64, region: u64) -> u64 {
        let d = self.size_dir;
        let min_bs = self.cfg.bs[d];
        if !self.cfg.bs_varies(d) {
            return min_bs;
        }
        let room = self.region_room(region);
        let fits = |b: u64| o + b <= room;
        let split = &self.cfg.bssplit[d];
        if !split.is_empty() && !split.iter().any(|e| e.perc > 0 && fits(e.bs)) {
            return min_bs;
        }
        for _ in 0..BUFLEN_TRIES {
            // The direction's bsrange_state (a trimwrite job's trims' is seeded as its writes').
            let state = &mut self.rand.bsrange[d];
            let (r, max) = (state.next(), state.max());
            let b = if self.cfg.bssplit[d].is_empty() {
                bsrange_pick(min_bs, self.cfg.bs_max[d], self.cfg.bs_unaligned, r, max)
            } else {
                bssplit_pick(&self.cfg.bssplit[d], r, max, fits)
            };
            if b > 0 && fits(b) {
                return b;
            }
        }
        min_bs
    }

    /// fio's io_u_fits: the bytes past the job's (or its strided zone's)
    /// offset that the region of `region` bytes leaves, counted from the
    /// job's start (a strided zone's offset is past it).
    fn region_room(&self, region: u64) -> u64 {
        region.saturating_add(self.start_offset()).saturating_sub(self.cfg.offset)
    }

    /// What fio's get_start_offset gives now: the job's offset (a strided
    /// job's first zone's), or the null engine's later start once its file
    /// grew (`JobConfig::later_start`).
    pub(crate) fn start_offset(&self) -> u64 {
        self.cfg.later_start.unwrap_or_else(|| self.strided.as_deref().map_or(self.cfg.offset, |z| z.start))
    }

    /// io_u_fits for `bytes` at `o` (relative to the job's offset).
    fn region_fits(&self, o: u64, bytes: u64, region: u64) -> bool {
        o.saturating_add(bytes) <= self.region_room(region)
    }

    /// fio's fill_multi_range_io_u: a trim of up to `num_range` ranges on
    /// file `di` (io_uring_cmd's Dataset Management), the first at `o`;
    /// each further range's offset and length drawn as an io_u's
    /// (get_next_offset, get_next_buflen), the random map marked for each
    /// (its cut ignored: the range stays whole). Fewer when the file has no
    /// offset left. The io_u's offset (its last range's), its length (their
    /// sum) and its ranges.
    pub(crate) fn fill_ranges(&mut self, di: usize, o: u64, min_bs: u64, region: u64, real: u64) -> (u64, u64, u16) {
        let (mut last, mut total, mut ranges) = (o, 0, 0);
        let mut next = Some(o);
        while let Some(o) = next {
            let b = self.next_buflen(o, region);
            self.io_placed(di, 2, o, b);
            self.last_pos[di * 3 + 2] = self.cfg.offset + o + b;
            (last, total, ranges) = (o, total + b, ranges + 1);
            if ranges as u32 == self.cfg.num_range {
                break;
            }
            next = self.draw_offset(di, 2, min_bs, region, real);
        }
        (last, total, ranges)
    }

    /// Record an I/O of `bytes` at `rel` (relative to the job's `offset`) in
    /// direction `d` on file `di`: a random draw marks the random map, which
    /// may cut the I/O short at the first block already done (fio's
    /// mark_random_map); the next sequential one starts at its end. Its length.
    #[inline(always)]
    pub(crate) fn io_placed(&mut self, di: usize, d: usize, rel: u64, bytes: u64) -> u64 {
        let bytes = match self.random_maps.as_deref_mut() {
            Some(maps) => maps.placed(di, rel, bytes, self.cfg.bs[d]),
            None => bytes,
        };
        self.io_u_used();
        self.last_pos[di * 3 + d] = self.cfg.offset + rel + bytes;
        if let Some(ls) = self.last_start.as_deref_mut() {
            ls[di * 3 + d] = self.cfg.offset + rel;
        }
        bytes
    }

    /// A new loop of the job (`loops`): every file's positions back at the
    /// start, its random maps free, and with `randrepeat` its generators as
    /// seeded (fio's clear_io_state): the loop draws what the first drew.
    pub(crate) fn rewind(&mut self) {
        (self.pass_bytes, self.pass_ios) = (0, 0);
        // Its files closed and opened again: the sync engine's positions at 0.
        self.sync_pos.fill(0);
        // thread_main's loop: td->start again (after the drain, at the last reap).
        if let Some(m) = self.min_rate.as_deref_mut() {
            m.start_ns = self.ts.reap_ns;
        }
        self.drew_out = false;
        if let Some(seeds) = self.loop_seeds.as_deref() {
            self.rand = seeds.clone();
        }
        // clear_io_state: the file offset back at its start (get_start_offset), reset_io_counters:
        // no zone bytes.
        let start = self.start_offset();
        self.cfg.offset = start;
        if let Some(z) = self.strided.as_deref_mut() {
            z.bytes = 0;
            z.offsets.iter_mut().for_each(|o| *o = start);
        }
        self.last_pos.iter_mut().for_each(|p| *p = start);
        if let Some(tw) = self.trimwrite.as_deref_mut() {
            tw.last_start.iter_mut().for_each(|p| *p = u64::MAX);
            // do_io doubles a trimwrite job's number_ios each time it starts (a trim and its
            // write count): the limit grows with every loop and pass.
            self.cfg.number_ios = self.cfg.number_ios.saturating_mul(2);
        }
        if let Some(ls) = self.last_start.as_deref_mut() {
            ls.iter_mut().for_each(|p| *p = u64::MAX);
        }
        // reset_io_counters: the run's length, not its direction.
        self.rwmix.issues = 0;
        if let Some(maps) = self.random_maps.as_deref_mut() {
            maps.reset();
        }
        if let Some(files) = self.files.as_deref_mut() {
            files.reset();
        }
        if let Some(v) = self.verify.as_deref_mut() {
            v.prune();
        }
        self.reopened = true;
        self.loop_end = LoopEnd::Running;
    }

    /// fio's setup_strided_zone_mode before the next I/O of direction `d` on
    /// file `di` of `real` bytes (`zonemode=strided`): after `zonesize`
    /// bytes the zone moves `zonerange + zoneskip` on (back to the start
    /// past the file's end) and the direction's position to it; a position
    /// past the zone's range goes back to its start; at every `zonerange`
    /// bytes the file is reset (fio_file_reset: positions, random map or LFSR).
    /// With several files each has its zone, and the zone bytes are the job's.
    pub(crate) fn strided_zone(&mut self, di: usize, d: usize, real: u64) {
        let start = self.start_offset();
        let Some(z) = self.strided.as_deref_mut() else { return };
        if let Some(&fo) = z.offsets.get(di) {
            self.cfg.offset = fo;
        }
        let range = z.cfg.range;
        if z.bytes >= z.cfg.size {
            z.bytes = 0;
            let next = self.cfg.offset.saturating_add(range + z.cfg.skip);
            self.cfg.offset = if next >= real { start } else { next };
            if let Some(fo) = z.offsets.get_mut(di) {
                *fo = self.cfg.offset;
            }
            self.last_pos[di * 3 + d] = self.cfg.offset;
        }
        let (fo, reset) = (self.cfg.offset, z.bytes.is_multiple_of(range));
        if self.last_pos[di * 3 + d] >= fo.saturating_add(range) {
            self.last_pos[di * 3 + d] = fo;
        }
        if reset {
            self.file_reset(di, fo);
        }
    }

    /// fio_file_reset of file `di`, whose offset (`file_offset`) is `fo`:
    /// its positions back at it, no last start, its random map cleared or
    /// its LFSR reseeded.
    pub(crate) fn file_reset(&mut self, di: usize, fo: u64) {
        self.file_positions_reset(di, fo);
        if let Some(maps) = self.random_maps.as_deref_mut() {
            maps.reset_file(di);
        }
    }

    /// fio_file_reset's positions of file `di`: every direction's back at
    /// `fo`, no last start (trimwrite's pairs, `rw_sequencer=identical`).
    fn file_positions_reset(&mut self, di: usize, fo: u64) {
        self.last_pos[di * 3..di * 3 + 3].iter_mut().for_each(|p| *p = fo);
        if let Some(tw) = self.trimwrite.as_deref_mut() {
            tw.last_start[di * 3..di * 3 + 3].iter_mut().for_each(|p| *p = u64::MAX);
        }
        if let Some(ls) = self.last_start.as_deref_mut() {
            ls[di * 3..di * 3 + 3].iter_mut().for_each(|p| *p = u64::MAX);
        }
    }

    /// `zonemode=strided`: an I/O of `bytes` in the zone (fio's `td->zone_bytes`).
    pub(crate) fn strided_placed(&mut self, bytes: u64) {
        if let Some(z) = self.strided.as_deref_mut() {
            z.bytes += bytes;
        }
    }

    /// A verifying job logs a write of `bytes` at `o` (relative to the job's
    /// offset) on file `di` for its read-back (do_io's log_io_piece: every
    /// write, a randtrimwrite's too), numbered by the writes issued.
    pub(crate) fn verify_logged(&mut self, di: usize, d: usize, o: u64, bytes: u64) {
        let offset = self.cfg.offset + o;
        if let Some(v) = self.verify.as_deref_mut().filter(|v| d == 1 && v.cfg.do_verify && !v.phase) {
            v.logged(di as u16, offset, bytes, v.issues[1] - 1);
        }
    }

    /// fio's get_next_rand_block: block `b` of `blockalign` bytes among
    /// those where a `bs` I/O still fits (`last_block`), uniform or as
    /// `random_distribution` draws it. With the random map, a block already
    /// done gives way to the next free one; when none is free the pass is
    /// over: a time-based job, or one whose `io_size` is not done yet (fio's
    /// keep_running starts another pass), starts the file again
    /// (fio_file_reset: its map and positions); any other has no offset left.
    #[inline(always)]
    fn random_offset(&mut self, di: usize, d: usize, bs: u64, region: u64, real: u64) -> Option<u64> {
        // (fio's last_block and random map: a strided job draws within its zone's range, even
        // one larger than the job's region, whose offsets past the region then end the pass.)
        // (init_random_map sizes a strided job's map or LFSR by its zone's range alone, past the
        // file's end too; any other's by the region within the file.)
        let (region, real) = match self.strided.as_deref() {
            Some(z) => (z.cfg.range, u64::MAX),
            None => (region, real),
        };
        let ba = match self.cfg.ba[d] {
            0 => bs,
            ba => ba,
        };
        let span = region - bs.saturating_sub(ba).min(region);
        let blocks = self.blocks_of(span, ba);
        if let Some(dist) = self.dist.as_deref_mut() {
            let lfsr = match self.random_maps.as_deref_mut().and_then(|m| m.file(di, region, real)) {
                Some(Pass::Lfsr(l)) => Some(l),
                _ => None,
            };
            return dist.block(di, d, blocks, ba, &mut self.rand, lfsr).map(|b| b * ba);
        }
        let Some(maps) = self.random_maps.as_deref_mut() else {
            return Some(self.rand.offset.scaled(blocks) * ba);
        };
        let Some(pass) = maps.file(di, region, real) else {
            return Some(self.rand.offset.scaled(blocks) * ba);
        };
        // (get_next_rand_block: a time-based job's pass starts again at once; io_size's makes a
        // new pass, `next_offset`.)
        let again = self.cfg.time_based || self.files.as_deref().is_some_and(|f| f.skewed());
        let b = match pass {
            Pass::Lfsr(lfsr) => match lfsr.next() {
                Some(b) => return Some(b * ba),
                None if !again => return None,
                None => {
                    lfsr.reset();
                    lfsr.next()?
                }
            },
            Pass::Map(map) => {
                let b = self.rand.offset.scaled(blocks);
                if !map.is_set(b) {
                    return Some(b * ba);
                }
                if let Some(free) = map.next_free(b) {
                    return Some(free * ba);
                }
                if !again {
                    return None;
                }
                map.reset();
                self.rand.offset.scaled(blocks)
            }
        };
        // fio_file_reset: the map or LFSR is reset above (before the draw).
        self.file_positions_reset(di, self.cfg.offset);
        Some(b * ba)
    }

    /// The direction of a trimwrite job's next I/O, on the file it goes to next.
    #[inline(never)]
    pub(crate) fn trimwrite_dir(&mut self) -> Direction {
        let Some(tw) = self.trimwrite.as_deref() else { return Direction::Write };
        let f = match self.files.as_deref_mut() {
            Some(files) => files.serve_ahead(&mut self.rand),
            None if self.devs.is_empty() => 0,
            None => self.next_dev,
        };
        if tw.last_start[f * 3 + 1] == tw.last_start[f * 3 + 2] {
            Direction::Trim
        } else {
            Direction::Write
        }
    }

    /// A random trimwrite job's write (direction `d` 1) on file `di`: its
    /// trim's offset (relative to the job's `offset`) and length. A zone
    /// that moved on (or reset its file) after the trim leaves an offset
    /// "before" the file offset, or none (-1): fio's unsigned difference,
    /// past any region.
    pub(crate) fn randtrimwrite_write(&self, di: usize, d: usize) -> Option<(u64, u64)> {
        let tw = self.trimwrite.as_deref()?;
        let start = tw.last_start[di * 3 + 2];
        if self.cfg.rw != RwKind::RandTrimWrite || d != 1 {
            return None;
        }
        Some((start.wrapping_sub(self.cfg.offset), self.last_pos[di * 3 + 2].wrapping_sub(start)))
    }

    /// A trimwrite job placed an I/O of direction `d` at `abs` on file `di`
    /// (fio's `f->last_start`; a random trim drawn where the last one began
    /// moves the last write's start, so that a write follows it).
    pub(crate) fn trimwrite_placed(&mut self, di: usize, d: usize, abs: u64) {
        let random = self.cfg.rw == RwKind::RandTrimWrite;
        let Some(tw) = self.trimwrite.as_deref_mut() else { return };
        if random && d == 2 && tw.last_start[di * 3 + 2] == abs {
            tw.last_start[di * 3 + 1] = tw.last_start[di * 3 + 1].wrapping_sub(1);
        }
        tw.last_start[di * 3 + d] = abs;
    }

    /// fio's get_next_seq_offset, in its own terms: `last_pos` and the file
    /// offset are absolute, the position returned relative to the file offset.
    #[inline(always)]
    fn seq_offset(&mut self, di: usize, d: usize, region: u64, real: u64) -> Option<u64> {
        let (start, first) = (self.cfg.offset, self.start_offset());
        let add = self.cfg.ddir_seq_add;
        // A time-based job of one file, or a mixed one whose io_size goes past its size (td_rw),
        // goes round its region again; another's io_size makes a new pass (`next_offset`), and
        // so does a time-based job's of several files once each is done (keep_running).
        let mixed = matches!(self.cfg.rw, RwKind::ReadWrite | RwKind::RandRw);
        let past = self.cfg.io_size.is_some_and(|io| io > self.cfg.size.unwrap_or(real));
        let wrap = (self.cfg.time_based && self.files.is_none()) || (mixed && past);
        let last = &mut self.last_pos[di * 3 + d];
        // (fio measures the region's end from get_start_offset, the position goes back to the file offset.)
        if wrap && *last >= first.saturating_add(region) {
            *last = start;
        }
        if *last >= real {
            return None;
        }
        let end = region.min(real);
        // Backwards I/O from a file offset starts at the end of the region.
        if *last == start && start != 0 && add < 0 {
            *last = end;
        }
        let mut pos = last.wrapping_sub(start);
        if pos != 0 && add != 0 {
            pos = pos.wrapping_add_signed(add);
            // Past either end: holes wrap to the file offset, backwards I/O to the end.
            if pos >= real {
                pos = if add > 0 { start } else { end.wrapping_add_signed(add) };
            }
        }
        Some(pos)
    }
}
