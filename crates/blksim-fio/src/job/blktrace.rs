//! fio's `read_iolog` of a blktrace binary (`blktrace.c`): the queue events
//! (`__BLK_TA_QUEUE`) of each `struct blk_io_trace` become the I/Os replayed
//! — reads, writes, discards as trims — with the delay between their time
//! stamps; notify events are skipped, as are the other actions (merges,
//! issues, completions), which only feed the queue depth fio probes for a
//! job that sets no `iodepth`. A trace names its devices by major:minor, so
//! blksim needs `replay_redirect=/dev/DEVICE` to put them on a simulated one.

use std::path::Path;
use std::sync::Arc;

use blksim::workload::{Direction, Replay, ReplayEntry, ReplayOp};

use super::iolog::{MergeOptions, ReplayOptions};
use crate::{ErrorKind, InputError};

const MAGIC: u32 = 0x6561_7400;
const VERSION: u32 = 0x07;
/// `sizeof(struct blk_io_trace)`.
const TRACE_BYTES: usize = 48;

const TC_WRITE: u32 = 1 << 1;
const TC_FLUSH: u32 = 1 << 2;
const TC_NOTIFY: u32 = 1 << 10;
const TC_DISCARD: u32 = 1 << 13;
const TC_READ: u32 = 1 << 0;
const TA_QUEUE: u32 = 1;
const TA_BACKMERGE: u32 = 2;
const TA_FRONTMERGE: u32 = 3;
const TA_COMPLETE: u32 = 8;

/// `BLK_TC_ACT`.
const fn act(tc: u32) -> u32 {
    tc << 16
}

/// Is it a blktrace binary (fio's `is_blktrace`: the first trace's magic, either byte order)?
pub(crate) fn is_blktrace(bytes: &[u8]) -> bool {
    bytes.len() >= 4 && {
        let m = [bytes[0], bytes[1], bytes[2], bytes[3]];
        (u32::from_le_bytes(m) & 0xffff_ff00) == MAGIC || (u32::from_be_bytes(m) & 0xffff_ff00) == MAGIC
    }
}

/// Is a blktrace (`is_blktrace` holds) in big-endian order (fio's `swap`)?
fn big_endian(bytes: &[u8]) -> bool {
    (u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) & 0xffff_ff00) != MAGIC
}

/// One `struct blk_io_trace`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Trace {
    pub magic: u32,
    pub time_ns: u64,
    pub sector: u64,
    pub bytes: u32,
    pub action: u32,
    pub device: u32,
    pub pdu_len: u16,
}

impl Trace {
    /// The trace at the start of `b` (48 bytes), in the file's byte order.
    fn read(b: &[u8], big: bool) -> Trace {
        let u32_at = |o: usize| {
            let a = [b[o], b[o + 1], b[o + 2], b[o + 3]];
            if big {
                u32::from_be_bytes(a)
            } else {
                u32::from_le_bytes(a)
            }
        };
        let u64_at = |o: usize| {
            let a: [u8; 8] = b[o..o + 8].try_into().expect("8 bytes");
            if big {
                u64::from_be_bytes(a)
            } else {
                u64::from_le_bytes(a)
            }
        };
        let pdu = [b[46], b[47]];
        Trace {
            magic: u32_at(0),
            time_ns: u64_at(8),
            sector: u64_at(16),
            bytes: u32_at(24),
            action: u32_at(28),
            device: u32_at(36),
            pdu_len: if big { u16::from_be_bytes(pdu) } else { u16::from_le_bytes(pdu) },
        }
    }

    /// The bytes of `self` as blktrace writes them (little-endian), for tests.
    #[cfg(test)]
    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        out.extend(self.magic.to_le_bytes());
        out.extend(0u32.to_le_bytes());
        out.extend(self.time_ns.to_le_bytes());
        out.extend(self.sector.to_le_bytes());
        out.extend(self.bytes.to_le_bytes());
        out.extend(self.action.to_le_bytes());
        out.extend(0u32.to_le_bytes());
        out.extend(self.device.to_le_bytes());
        out.extend(0u32.to_le_bytes());
        out.extend(0u16.to_le_bytes());
        out.extend(self.pdu_len.to_le_bytes());
    }

    /// `t_get_ddir`: 0 read, 1 write, 2 trim.
    fn ddir(&self) -> Option<usize> {
        if self.action & act(TC_READ) != 0 {
            Some(0)
        } else if self.action & act(TC_WRITE) != 0 {
            Some(1)
        } else if self.action & act(TC_DISCARD) != 0 {
            Some(2)
        } else {
            None
        }
    }
}

/// The fields of `struct blk_io_trace` (offset, size): magic, sequence, time,
/// sector, bytes, action, pid, device, cpu, error, pdu_len.
const FIELDS: [(usize, usize); 11] =
    [(0, 4), (4, 4), (8, 8), (16, 8), (24, 4), (28, 4), (32, 4), (36, 4), (40, 4), (44, 2), (46, 2)];

/// A trace being merged: where it is, how it is played.
struct Cursor<'a> {
    bytes: &'a [u8],
    big: bool,
    at: usize,
    scalar: u64,
    iters: u64,
    iter: u64,
    /// The trace's length (fio's `bc->length`): the time of the last record
    /// read when its end was first reached.
    length: u64,
    last_time: u64,
    /// The queue event to write next (little-endian, its time scaled).
    next: [u8; TRACE_BYTES],
}

impl Cursor<'_> {
    /// fio's read_trace: the next queue event of a known direction (the
    /// others skipped), its time `(time + iter * length) * scalar / 100`;
    /// false at the end of the trace.
    fn read(&mut self) -> bool {
        while self.bytes.len() - self.at >= TRACE_BYTES {
            let raw = &self.bytes[self.at..self.at + TRACE_BYTES];
            let t = Trace::read(raw, self.big);
            self.at += TRACE_BYTES + t.pdu_len as usize;
            self.at = self.at.min(self.bytes.len());
            if t.action & 0xffff != TA_QUEUE || t.ddir().is_none() {
                self.last_time = t.time_ns;
                continue;
            }
            let time = (t.time_ns.wrapping_add(self.iter.wrapping_mul(self.length))).wrapping_mul(self.scalar) / 100;
            self.last_time = time;
            // byteswap_trace: the record in the host's (little-endian) order; write_trace: no pdu.
            for (o, n) in FIELDS {
                let field = &mut self.next[o..o + n];
                field.copy_from_slice(&raw[o..o + n]);
                if self.big {
                    field.reverse();
                }
            }
            self.next[8..16].copy_from_slice(&time.to_le_bytes());
            self.next[46..48].copy_from_slice(&0u16.to_le_bytes());
            return true;
        }
        if self.length == 0 {
            self.length = self.last_time;
        }
        false
    }

    fn time(&self) -> u64 {
        u64::from_le_bytes(self.next[8..16].try_into().expect("8 bytes"))
    }
}

/// fio's merge_blktrace_iologs as its documentation describes it: the queue
/// events of every trace (`read_iolog`'s `:`-list, each at least one
/// record long), each trace's times scaled by its `merge_blktrace_scalars`
/// percentage and played `merge_blktrace_iters` times (a repeat starts
/// one trace length later), merged in time order (on equal times, the
/// trace first in fio's cursor array: a finished trace's slot takes the
/// last one's) into one blktrace, little-endian, without payloads.
/// (fio 3.42 never gets there: its read_trace reads 8 bytes into the
/// pointer, "iolog short read", and it replays the list unmerged; fixed
/// after 3.42 by c55d29ef. At a repeat fio also writes the trace's last
/// record once more, which is not copied here.)
pub(crate) fn merge(traces: &[Vec<u8>], opts: &MergeOptions) -> Result<Vec<u8>, String> {
    let n = traces.len();
    for (what, list) in [("merge_blktrace_scalars", &opts.scalars), ("merge_blktrace_iters", &opts.iters)] {
        if !list.is_empty() && list.len() != n {
            let k = list.len();
            return Err(format!(
                "{what} lists {k} for the {n} traces of read_iolog (fio: {what}({k}) != nr_logs({n}))"
            ));
        }
    }
    let mut cursors: Vec<Cursor> = Vec::new();
    for (i, bytes) in traces.iter().enumerate() {
        let big = big_endian(bytes);
        cursors.push(Cursor {
            bytes,
            big,
            at: 0,
            scalar: opts.scalars.get(i).copied().unwrap_or(100),
            iters: opts.iters.get(i).copied().unwrap_or(1),
            iter: 0,
            length: 0,
            last_time: 0,
            next: [0; TRACE_BYTES],
        });
    }
    // Each cursor's first event (a trace without one is dropped, the others keep their order).
    cursors.retain_mut(|c| c.read());
    // Its next event; a trace played out is dropped, its slot taken by the last (fio's memmove).
    let advance = |cursors: &mut Vec<Cursor>, i: usize| loop {
        let c = &mut cursors[i];
        if c.read() {
            return;
        }
        c.iter += 1;
        if c.iter >= c.iters {
            cursors.swap_remove(i);
            return;
        }
        c.at = 0;
    };
    let mut out = Vec::new();
    while !cursors.is_empty() {
        let mut first = 0;
        for (k, c) in cursors.iter().enumerate() {
            if c.time() < cursors[first].time() {
                first = k;
            }
        }
        out.extend_from_slice(&cursors[first].next);
        advance(&mut cursors, first);
    }
    if out.is_empty() {
        return Err("merge_blktrace_file: the traces have no queue events to merge".into());
    }
    Ok(out)
}

/// A blktrace read as fio reads it: the replay, its one file (the redirect
/// target), and the queue depth fio probes from the trace.
pub(crate) fn parse(
    bytes: &[u8],
    path: &Path,
    opts: &ReplayOptions,
) -> Result<(Arc<Replay>, Vec<String>, u32, u64), InputError> {
    let error = |kind: ErrorKind, message: String| InputError {
        kind,
        file: path.to_path_buf(),
        line: 0,
        message,
        more: Vec::new(),
    };
    let Some(redirect) = opts.redirect.clone() else {
        return Err(error(
            ErrorKind::BadInput,
            "a blktrace names its devices by major:minor, which are the traced machine's: give \
             replay_redirect=/dev/DEVICE to replay it on a simulated device"
                .into(),
        ));
    };
    let big = big_endian(bytes);
    let mut entries = vec![ReplayEntry { delay_us: 0, op: ReplayOp::File, line: 0 }];
    let (mut this_depth, mut depth) = ([0i64; 3], [0i64; 3]);
    let mut ios = [0u64; 3];
    let mut syncs = false;
    let mut last_ttime = 0u64;
    let mut skipped_writes = 0u64;
    let mut at = 0usize;
    let mut n = 0u32;
    while at < bytes.len() {
        n += 1;
        if bytes.len() - at < TRACE_BYTES {
            // fio: "iolog short read", and it stops there.
            break;
        }
        let t = Trace::read(&bytes[at..], big);
        let trace_error = |m: String| error(ErrorKind::BadInput, format!("trace {n} (byte {at}): {m}"));
        if t.magic & 0xffff_ff00 != MAGIC {
            return Err(trace_error(format!("bad magic {:#x} (fio: bad magic in blktrace data)", t.magic)));
        }
        if t.magic & 0xff != VERSION {
            return Err(trace_error(format!("blktrace version {} (fio reads version {VERSION})", t.magic & 0xff)));
        }
        at += TRACE_BYTES + t.pdu_len as usize;
        let notify = t.action & act(TC_NOTIFY) != 0;
        if !notify {
            match t.action & 0xffff {
                TA_QUEUE => t.ddir().into_iter().for_each(|d| this_depth[d] += 1),
                TA_BACKMERGE | TA_FRONTMERGE => t.ddir().into_iter().for_each(|d| this_depth[d] -= 1),
                TA_COMPLETE => t.ddir().into_iter().for_each(|d| {
                    depth[d] = depth[d].max(this_depth[d]);
                    this_depth[d] = 0;
                }),
                _ => {}
            }
        }
        if !notify && opts.read_only && t.action & act(TC_WRITE | TC_DISCARD) != 0 {
            // fio's read_blktrace with --readonly: every write and discard event (of any action)
            // skipped and counted, before its time is taken.
            skipped_writes += 1;
            continue;
        }
        if t.action & 0xffff != TA_QUEUE || notify {
            continue;
        }
        // fio's delay_since_ttime on nanosecond stamps, stored in µs.
        let delay_ns = if last_ttime == 0 || opts.no_stall || t.time_ns < last_ttime {
            0
        } else if opts.time_scale == 100 {
            t.time_ns - last_ttime
        } else {
            ((t.time_ns - last_ttime) as f64 * (100.0 / opts.time_scale as f64)) as u64
        };
        last_ttime = t.time_ns;
        let mut len = t.bytes as u64;
        if opts.align > 0 {
            len = (len + opts.align - 1) & !(opts.align - 1);
        }
        let dir = if t.action & act(TC_DISCARD) != 0 {
            Direction::Trim
        } else if t.action & act(TC_FLUSH) != 0 {
            // fio's handle_trace_flush: an fsync of the file (replay_skip=sync skips it).
            if opts.skip & (1 << 3) == 0 {
                syncs = true;
                entries.push(ReplayEntry { delay_us: delay_ns / 1000, op: ReplayOp::Sync { file: 0 }, line: n });
            }
            continue;
        } else if t.action & act(TC_WRITE) != 0 {
            Direction::Write
        } else {
            Direction::Read
        };
        if opts.skip & (1 << dir.index()) != 0 || (dir != Direction::Trim && len == 0) {
            // fio ignores (and warns about) zero-byte traces.
            continue;
        }
        let Some(mut offset) = t.sector.checked_mul(512) else {
            return Err(error(ErrorKind::BadInput, format!("trace {n}: sector {} is past any device", t.sector)));
        };
        if opts.scale > 1 {
            offset /= opts.scale;
        }
        if opts.align > 0 {
            offset &= !(opts.align - 1);
        }
        if len > u32::MAX as u64 {
            return Err(error(ErrorKind::NotModelled, format!("trace {n}: an I/O of {len} bytes (4 GiB or more)")));
        }
        ios[dir.index()] += 1;
        entries.push(ReplayEntry {
            delay_us: delay_ns / 1000,
            op: ReplayOp::Io { file: 0, dir, offset, bytes: len },
            line: n,
        });
    }
    if ios.iter().all(|&c| c == 0) {
        let why = if skipped_writes > 0 {
            format!(" (--readonly skipped its {skipped_writes} write and discard events)")
        } else {
            String::new()
        };
        return Err(error(
            ErrorKind::BadInput,
            format!("no I/O in the blktrace{why} (fio: found no ios in blktrace data)"),
        ));
    }
    // fio's probed depth: at most 1024, at least 1 for a direction with I/O.
    let probed = (0..3)
        .map(|d| {
            if depth[d] > 1024 {
                1024
            } else if depth[d] == 0 && ios[d] > 0 {
                1
            } else {
                depth[d]
            }
        })
        .max()
        .unwrap_or(1)
        .max(1) as u32;
    entries.push(ReplayEntry { delay_us: 0, op: ReplayOp::File, line: 0 });
    let trims = ios[2] > 0;
    Ok((Arc::new(Replay { entries, trims, syncs }), vec![redirect], probed, skipped_writes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(time_ns: u64, sector: u64, bytes: u32, action: u32) -> Trace {
        Trace { magic: MAGIC | VERSION, time_ns, sector, bytes, action, device: 7 << 20, pdu_len: 0 }
    }

    #[test]
    fn queue_events_become_the_replay_with_their_delays() {
        let q = |tc: u32| TA_QUEUE | act(tc | (1 << 4));
        let mut b = Vec::new();
        for t in [
            trace(1_000, 8, 4096, q(TC_READ)),
            trace(1_500, 8, 4096, 7 | act(TC_READ | (1 << 6))), // issue: not replayed
            trace(6_000, 16, 8192, q(TC_WRITE)),
            trace(7_000, 0, 0, act(TC_NOTIFY)),
            trace(9_000, 16, 8192, TA_COMPLETE | act(TC_WRITE | (1 << 7))),
            trace(26_000, 100, 4096, q(TC_DISCARD)),
        ] {
            t.write(&mut b);
        }
        assert!(is_blktrace(&b));
        let o = ReplayOptions { redirect: Some("/dev/x".into()), ..Default::default() };
        let (r, files, depth, _) = parse(&b, Path::new("t"), &o).unwrap();
        assert_eq!(files, ["/dev/x"]);
        assert_eq!(depth, 1);
        let ios: Vec<_> = r
            .entries
            .iter()
            .filter_map(|e| match e.op {
                ReplayOp::Io { dir, offset, bytes, .. } => Some((e.delay_us, dir, offset, bytes)),
                ReplayOp::File | ReplayOp::Sync { .. } => None,
            })
            .collect();
        assert_eq!(
            ios,
            [(0, Direction::Read, 4096, 4096), (5, Direction::Write, 8192, 8192), (20, Direction::Trim, 51200, 4096)]
        );
        assert!(r.trims);
        // Without a redirect the trace's devices cannot be placed.
        let e = parse(&b, Path::new("t"), &ReplayOptions::default()).unwrap_err();
        assert!(e.message.contains("replay_redirect"), "{e}");
    }

    #[test]
    fn read_only_skips_every_write_and_discard_event_before_its_time_is_taken() {
        // fio's read_blktrace with --readonly: a write or discard event of any action is counted and
        // skipped after the depth probe and before queue_trace, so the next read's delay runs from
        // the last replayed queue event.
        let q = |tc: u32| TA_QUEUE | act(tc | (1 << 4));
        let mut b = Vec::new();
        for t in [
            trace(1_000, 8, 4096, q(TC_READ)),
            trace(6_000, 16, 8192, q(TC_WRITE)),
            trace(7_000, 0, 0, act(TC_NOTIFY)),
            trace(9_000, 16, 8192, TA_COMPLETE | act(TC_WRITE | (1 << 7))),
            trace(26_000, 100, 4096, q(TC_DISCARD)),
            trace(30_000, 200, 4096, q(TC_READ)),
        ] {
            t.write(&mut b);
        }
        let delays = |o: &ReplayOptions| {
            let (r, _, _, skipped) = parse(&b, Path::new("t"), o).unwrap();
            let ios: Vec<(u64, Direction)> = r
                .entries
                .iter()
                .filter_map(|e| match e.op {
                    ReplayOp::Io { dir, .. } => Some((e.delay_us, dir)),
                    ReplayOp::File | ReplayOp::Sync { .. } => None,
                })
                .collect();
            (ios, skipped)
        };
        let rw = ReplayOptions { redirect: Some("/dev/x".into()), ..Default::default() };
        let (all, none) = delays(&rw);
        assert_eq!(none, 0);
        assert_eq!(all.len(), 4);
        assert_eq!(all[3], (4, Direction::Read), "from the discard's stamp");
        let ro = ReplayOptions { read_only: true, ..rw.clone() };
        let (reads, skipped) = delays(&ro);
        assert_eq!(skipped, 3, "two write events and the discard; the notify is not a write");
        assert_eq!(reads, [(0, Direction::Read), (29, Direction::Read)]);
        // A trace of writes only: nothing to replay, and the message says why.
        let mut w = Vec::new();
        trace(1_000, 8, 4096, q(TC_WRITE)).write(&mut w);
        let e = parse(&w, Path::new("w"), &ro).unwrap_err();
        assert!(e.message.contains("--readonly skipped its 1 write"), "{e}");
    }
}

#[cfg(test)]
mod robustness {
    use super::*;

    /// A small deterministic generator (SplitMix64).
    struct Gen(u64);
    impl Gen {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
    }

    #[test]
    fn mangled_logs_and_traces_are_refused_or_read_never_a_panic() {
        let mut g = Gen(42);
        let opts = ReplayOptions { redirect: Some("/dev/x".into()), align: 4096, scale: 3, ..Default::default() };
        let words = [
            "fio",
            "version",
            "3",
            "2",
            "iolog",
            "/dev/x",
            "add",
            "open",
            "close",
            "read",
            "write",
            "trim",
            "sync",
            "wait",
            "0",
            "4096",
            "18446744073709551615",
            "-1",
            "x",
            "",
        ];
        for _ in 0..100_000 {
            // A text log: a version line, then lines of random words.
            let mut text = String::from(if g.next().is_multiple_of(2) {
                "fio version 3 iolog\n"
            } else {
                "fio version 2 iolog\n"
            });
            for _ in 0..g.next() % 6 {
                for _ in 0..g.next() % 7 {
                    text += words[(g.next() % words.len() as u64) as usize];
                    text.push(' ');
                }
                text.push('\n');
            }
            let _ = super::super::iolog::parse(&text, Path::new("t"), &opts, g.next().is_multiple_of(2), false);
            // A binary trace: whole or cut traces with random fields, the magic mostly right.
            let mut b = Vec::new();
            for _ in 0..g.next() % 5 {
                let t = Trace {
                    magic: if g.next().is_multiple_of(8) { g.next() as u32 } else { MAGIC | VERSION },
                    time_ns: g.next() % 1_000_000,
                    sector: g.next(),
                    bytes: g.next() as u32,
                    action: g.next() as u32,
                    device: 0,
                    pdu_len: (g.next() % 64) as u16,
                };
                t.write(&mut b);
                b.truncate(b.len() - (g.next() % 3) as usize * 7);
            }
            if is_blktrace(&b) {
                let _ = parse(&b, Path::new("t"), &opts);
            }
        }
    }
}
