//! fio: the log of written blocks that verify reads back (`io_hist_list` /
//! `io_hist_tree`, `log_io_piece`, `get_next_verify` in `iolog.c` and
//! `verify.c`; state). A random job with its random map keeps them in the
//! order written; any other in offset order, a later write replacing the
//! blocks it overlaps. A block is read back only once its write completed.

use std::collections::BTreeMap;

use crate::workload::{VerifyAlgo, VerifyConfig};

/// One written block: its file, offset and length, and whether its write is still in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Piece {
    pub file: u16,
    pub offset: u64,
    pub bytes: u64,
    pub in_flight: bool,
    /// The write's number (fio's `numberio`: the job's writes issued before it).
    pub numberio: u64,
}

/// A verifying job's state.
#[derive(Clone)]
pub(crate) struct VerifyLog {
    pub cfg: VerifyConfig,
    /// Issue order (`io_hist_list`) rather than offset order (`io_hist_tree`).
    by_issue: bool,
    /// The pieces, keyed by issue number or by (file, offset).
    pieces: BTreeMap<(u16, u64), Piece>,
    /// (file, offset) → keys of its writes in flight, oldest first (issue order only).
    keys: BTreeMap<(u16, u64), std::collections::VecDeque<(u16, u64)>>,
    /// (file, offset) → writes in flight that a later write took off the tree (offset order
    /// only): fio's log_io_piece unlinks such a piece without freeing it, so its completion
    /// marks nothing on the tree.
    unlinked: BTreeMap<(u16, u64), u32>,
    seq: u64,
    /// In `do_verify`, reading everything back.
    pub phase: bool,
    /// Reads left in the current backlog batch (`td->verify_batch`).
    pub batch: u64,
    /// The direction fio completed last was a read (`td->last_ddir_completed`).
    pub last_completed_read: bool,
    /// CPU per KiB: the checksum over a block, and a write's buffer fill (ns/KiB).
    pub check_ns_per_kib: u64,
    pub fill_ns_per_kib: u64,
    /// I/Os issued so far by direction (fio's `io_issues`): the job's own, and for reads its
    /// read-backs too; the next one's number (`numberio`).
    pub issues: [u64; 3],
    /// Why verification stopped at a loaded state (`verify_state_load`), as fio logs it.
    pub stopped: Option<String>,
    /// Bytes read back so far (in fio's `io_bytes`, for keep_running).
    pub read_back_bytes: u64,
    /// What `do_verify`'s pass lifted, for the loop after it: the bytes limit and `number_ios`.
    pub resume: (u64, u64),
}

impl VerifyLog {
    pub(crate) fn new(
        cfg: VerifyConfig,
        by_issue: bool,
        md5_ns_per_kib: u64,
        fill_random_ns_per_kib: u64,
    ) -> VerifyLog {
        let md5 = VerifyAlgo::Md5.mib_per_s().expect("md5 has a rate");
        let check = cfg.algo.mib_per_s().map_or(0, |r| (md5_ns_per_kib as f64 * md5 / r).round() as u64);
        // A pattern is copied in (at the pattern's compare rate), else random data is made.
        let fill = match (cfg.pattern, VerifyAlgo::Pattern.mib_per_s()) {
            (true, Some(r)) => (md5_ns_per_kib as f64 * md5 / r).round() as u64,
            _ => fill_random_ns_per_kib,
        };
        VerifyLog {
            cfg,
            by_issue: by_issue || cfg.experimental,
            pieces: BTreeMap::new(),
            keys: BTreeMap::new(),
            unlinked: BTreeMap::new(),
            seq: 0,
            phase: false,
            batch: 0,
            last_completed_read: false,
            check_ns_per_kib: check,
            fill_ns_per_kib: fill,
            issues: [0; 3],
            stopped: None,
            read_back_bytes: 0,
            resume: (0, 0),
        }
    }

    /// `prune_io_piece_log` at thread_main's loop top: what the last pass logged and did not
    /// read back is forgotten (nothing is in flight: do_io drained).
    pub(crate) fn prune(&mut self) {
        self.pieces.clear();
        self.keys.clear();
        self.unlinked.clear();
    }

    /// check_get_verify: a backlog's batch of read-backs is running, or starts now (of
    /// `verify_batch`, else `verify_backlog` reads) where the log's length `len` is a multiple
    /// of `verify_backlog` and fio did not complete a read last.
    pub(crate) fn batch_running(&mut self, len: u64) -> bool {
        if self.batch == 0 {
            if !len.is_multiple_of(self.cfg.backlog) || self.last_completed_read {
                return false;
            }
            self.batch = if self.cfg.backlog_batch > 0 { self.cfg.backlog_batch } else { self.cfg.backlog };
        }
        true
    }

    /// Blocks logged and not read back yet (`td->io_hist_len`).
    pub(crate) fn len(&self) -> u64 {
        self.pieces.len() as u64
    }

    /// `log_io_piece`: a write of `bytes` at `offset` of `file`, numbered `numberio`, was queued.
    pub(crate) fn logged(&mut self, file: u16, offset: u64, bytes: u64, numberio: u64) {
        let piece = Piece { file, offset, bytes, in_flight: true, numberio };
        if self.by_issue {
            let key = (0, self.seq);
            self.seq += 1;
            self.pieces.insert(key, piece);
            self.keys.entry((file, offset)).or_default().push_back(key);
            return;
        }
        // The tree drops what the new write overlaps. Its pieces do not
        // overlap each other: those that start inside the write, and the one
        // before it if that reaches into it.
        let end = offset + bytes;
        let before = self.pieces.range((file, 0)..(file, offset)).next_back();
        let overlapping: Vec<(u16, u64)> = before
            .filter(|(_, p)| p.offset + p.bytes > offset)
            .into_iter()
            .chain(self.pieces.range((file, offset)..(file, end)))
            .map(|(k, _)| *k)
            .collect();
        for k in overlapping {
            if self.pieces.remove(&k).is_some_and(|p| p.in_flight) {
                *self.unlinked.entry(k).or_default() += 1;
            }
        }
        self.pieces.insert((file, offset), piece);
    }

    /// A logged write completed.
    pub(crate) fn completed(&mut self, file: u16, offset: u64) {
        let key = if self.by_issue {
            let q = self.keys.get_mut(&(file, offset));
            let key = q.and_then(|q| q.pop_front());
            if self.keys.get(&(file, offset)).is_some_and(|q| q.is_empty()) {
                self.keys.remove(&(file, offset));
            }
            key
        } else if let Some(n) = self.unlinked.get_mut(&(file, offset)) {
            // The oldest write there completes first: one a later write unlinked.
            *n -= 1;
            if *n == 0 {
                self.unlinked.remove(&(file, offset));
            }
            None
        } else {
            Some((file, offset))
        };
        if let Some(p) = key.and_then(|k| self.pieces.get_mut(&k)) {
            p.in_flight = false;
        }
    }

    /// `get_next_verify`: the first logged block taken off the log, if its write has
    /// completed; while it is in flight, none (fio looks at the first alone).
    pub(crate) fn next(&mut self) -> Option<Piece> {
        let (&key, p) = self.pieces.iter().next()?;
        if p.in_flight {
            return None;
        }
        self.pieces.remove(&key)
    }

    /// The CPU of checking a block of `bytes` (a read), or of filling and summing one (a write), ns.
    pub(crate) fn cpu_ns(&self, write: bool, bytes: u64) -> u64 {
        let per_kib = if write { self.fill_ns_per_kib + self.check_ns_per_kib } else { self.check_ns_per_kib };
        per_kib * bytes / 1024
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> VerifyConfig {
        VerifyConfig {
            algo: VerifyAlgo::Md5,
            do_verify: true,
            backlog: 0,
            backlog_batch: 0,
            experimental: false,
            pattern: false,
            save_state: true,
        }
    }

    #[test]
    fn offset_order_drops_overwritten_blocks_and_waits_for_the_first_blocks_write() {
        let mut v = VerifyLog::new(cfg(), false, 1000, 300);
        v.logged(0, 8192, 4096, 0);
        v.logged(0, 0, 4096, 1);
        v.logged(0, 6144, 4096, 2); // overlaps the block at 8192: it replaces it
        assert_eq!(v.len(), 2);
        assert_eq!(v.next(), None, "nothing completed");
        v.completed(0, 6144);
        assert_eq!(v.next(), None, "the first block's write (at 0) is still in flight");
        v.completed(0, 0);
        assert_eq!(v.next().map(|p| p.offset), Some(0));
        assert_eq!(v.next().map(|p| p.offset), Some(6144));
        assert_eq!(v.next(), None);
    }

    #[test]
    fn a_write_in_flight_that_a_later_one_replaced_completes_without_marking_the_later_one() {
        let mut v = VerifyLog::new(cfg(), false, 1000, 300);
        v.logged(0, 0, 4096, 0);
        v.logged(0, 0, 4096, 1); // the first write is still in flight: unlinked, not freed
        v.completed(0, 0); // the first write's completion
        assert_eq!(v.next(), None, "the second write is still in flight");
        v.completed(0, 0);
        assert_eq!(v.next().map(|p| p.numberio), Some(1));
    }

    #[test]
    fn issue_order_keeps_every_write() {
        let mut v = VerifyLog::new(cfg(), true, 1000, 300);
        for o in [8192, 0, 8192] {
            v.logged(0, o, 4096, o / 4096);
        }
        for o in [8192, 0] {
            v.completed(0, o);
        }
        let got: Vec<u64> = std::iter::from_fn(|| v.next()).map(|p| p.offset).collect();
        assert_eq!(
            got,
            [8192, 0],
            "in issue order (the first write of 8192 completed first); its rewrite still in flight"
        );
        v.completed(0, 8192);
        assert_eq!(v.next().map(|p| p.offset), Some(8192));
        // md5 at 1000 ns/KiB; crc32c is fio's fastest sum.
        assert_eq!(v.cpu_ns(false, 4096), 4000);
        let c = VerifyLog::new(VerifyConfig { algo: VerifyAlgo::Crc32c, ..cfg() }, true, 1000, 300);
        assert!(c.cpu_ns(false, 4096) < 400 && c.cpu_ns(true, 4096) > 1200);
    }
}
