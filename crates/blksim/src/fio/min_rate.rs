//! fio: `check_min_rate` (`backend.c`), a job's `rate_min` / `rate_iops_min`
//! (state). After a loop's first 2 s (`td->start`: each loop's start, or the
//! ramp's end), each direction that has completed I/O is checked once a
//! `rate_cycle` has passed since its last check: the bytes (`rate_min`) or the
//! I/Os (`rate_iops_min`) completed since then, per second, below the minimum
//! ends the job with EIO. The first check only records where the cycle starts.

use crate::stats::MinRateMiss;

/// fio's settle time before the first check (`mtime_since(&td->start, now) < 2000`).
const SETTLE_MS: u64 = 2000;

/// A job's minimum rates and its last check of each direction.
#[derive(Clone, Debug)]
pub(crate) struct MinRate {
    /// `rate_min` per direction, bytes per second (0: none).
    bytes_min: [u64; 3],
    /// `rate_iops_min` per direction, I/Os per second (0: none).
    iops_min: [u64; 3],
    /// `rate_cycle`, ms.
    cycle_ms: u64,
    /// `td->start`: the current loop's start (or the ramp's end), ns.
    pub start_ns: u64,
    /// `last_rate_check_bytes`, `_blocks` and `_time` per direction.
    last_bytes: [u64; 3],
    last_ios: [u64; 3],
    last_ns: [u64; 3],
}

impl MinRate {
    /// The job's minimum rates, if it has one (`rate_min`, `rate_iops_min`).
    pub(crate) fn of(cfg: &crate::workload::JobConfig) -> Option<Box<MinRate>> {
        (cfg.rate_min.iter().chain(&cfg.rate_iops_min).any(|&r| r > 0)).then(|| {
            Box::new(MinRate {
                bytes_min: cfg.rate_min,
                iops_min: cfg.rate_iops_min,
                cycle_ms: cfg.rate_cycle_ms,
                start_ns: 0,
                last_bytes: [0; 3],
                last_ios: [0; 3],
                last_ns: [0; 3],
            })
        })
    }

    /// The ramp ended at `now` (`reset_all_stats`): the counts start again, and so does the settle time.
    pub(crate) fn reset(&mut self, now: u64) {
        (self.start_ns, self.last_bytes, self.last_ios) = (now, [0; 3], [0; 3]);
    }

    /// `check_min_rate` at `now` (the reap's time, fio's `comp_time`) for
    /// direction `d`, which has completed `bytes` in `ios` I/Os since the ramp
    /// (fio's `this_io_bytes`, `this_io_blocks`): the miss, if the cycle
    /// just ended fell below the minimum.
    pub(crate) fn check(&mut self, d: usize, now: u64, bytes: u64, ios: u64) -> Option<MinRateMiss> {
        let (bytes_min, iops_min) = (self.bytes_min[d], self.iops_min[d]);
        if bytes_min == 0 && iops_min == 0 {
            return None;
        }
        if ms_between(self.start_ns, now) < SETTLE_MS {
            return None;
        }
        if self.last_bytes[d] > 0 || self.last_ios[d] > 0 {
            let spent = ms_between(self.last_ns[d], now);
            if spent < self.cycle_ms || spent == 0 {
                return None;
            }
            // fio's unsigned arithmetic: the counts only grow between resets.
            let miss = if bytes_min > 0 {
                let got = bytes.wrapping_sub(self.last_bytes[d]).wrapping_mul(1000) / spent;
                (got < bytes_min).then_some(MinRateMiss { iops: false, min: bytes_min, got })
            } else {
                let got = ios.wrapping_sub(self.last_ios[d]).wrapping_mul(1000) / spent;
                (got < iops_min).then_some(MinRateMiss { iops: true, min: iops_min, got })
            };
            if miss.is_some() {
                return miss;
            }
        }
        (self.last_bytes[d], self.last_ios[d], self.last_ns[d]) = (bytes, ios, now);
        None
    }
}

impl crate::fio::job::Job {
    /// do_io's `check_min_rate` after a reap at `now` (not in the ramp, nor in
    /// do_verify's loop), for each direction with I/O done: a miss ends the job
    /// with EIO (`td_verror(td, EIO, "check_min_rate")`); what is in flight drains.
    pub(crate) fn min_rate_check(&mut self, now: u64) {
        if now < self.ts.ramp_end_ns || self.error.is_some() || self.verify.as_deref().is_some_and(|v| v.phase) {
            return;
        }
        let Some(m) = self.min_rate.as_deref_mut() else { return };
        // Every direction is checked (and logs its miss), as fio's loop does.
        let mut misses = [None; 3];
        for (d, s) in self.dirs.iter().enumerate() {
            if s.io_bytes > 0 {
                misses[d] = m.check(d, now, s.io_bytes, s.total_ios - s.failed_ios - s.empty_ios);
            }
        }
        let Some(d) = misses.iter().position(Option::is_some) else { return };
        self.error = Some(crate::fio::job::IoError {
            errno: -5,
            file: 0,
            dir: crate::workload::Direction::ALL[d],
            offset: 0,
            bytes: 0,
            min_rate: misses,
            max_latency: None,
        });
        self.done_issuing = true;
    }
}

/// fio's `mtime_since`: whole ms from `from` to `to` (0 if `to` is earlier).
fn ms_between(from: u64, to: u64) -> u64 {
    to.saturating_sub(from) / 1_000_000
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(bytes_min: u64, iops_min: u64) -> MinRate {
        let mut cfg = crate::workload::JobConfig::new("j");
        cfg.rate_min[0] = bytes_min;
        cfg.rate_iops_min[0] = iops_min;
        *MinRate::of(&cfg).expect("a minimum")
    }

    const MS: u64 = 1_000_000;

    #[test]
    fn nothing_is_checked_in_the_first_two_seconds_and_the_first_check_only_records() {
        let mut m = rate(1 << 20, 0);
        // 1 KiB/s is far below 1 MiB/s, but within the settle time.
        assert_eq!(m.check(0, 1999 * MS, 1999, 1), None);
        // The first check after it records the cycle's start.
        assert_eq!(m.check(0, 2000 * MS, 2000, 1), None);
        // Before a cycle (1000 ms) has passed: no check.
        assert_eq!(m.check(0, 2999 * MS, 2999, 1), None);
        // A cycle later: 1,000 bytes in 1,000 ms is 1,000 B/s.
        assert_eq!(m.check(0, 3000 * MS, 3000, 2), Some(MinRateMiss { iops: false, min: 1 << 20, got: 1000 }));
    }

    #[test]
    fn a_rate_at_the_minimum_passes_and_starts_the_next_cycle() {
        let mut m = rate(0, 100);
        assert_eq!(m.check(0, 2000 * MS, 1, 1), None);
        // 100 I/Os in 1 s: met; the next cycle starts here.
        assert_eq!(m.check(0, 3000 * MS, 0, 101), None);
        // 99 more in the next 1.5 s is 66 IOPS.
        assert_eq!(m.check(0, 4500 * MS, 0, 200), Some(MinRateMiss { iops: true, min: 100, got: 66 }));
        // The other directions have no minimum.
        assert_eq!(m.check(1, 9000 * MS, 0, 1), None);
    }

    #[test]
    fn nothing_completed_records_nothing_and_the_ramp_starts_the_settle_again() {
        let mut m = rate(1000, 0);
        // No bytes at the first check: fio records 0 and so never computes a rate.
        assert_eq!(m.check(0, 2000 * MS, 0, 0), None);
        assert_eq!(m.check(0, 3000 * MS, 0, 0), None);
        m.reset(5000 * MS);
        assert_eq!(m.check(0, 6000 * MS, 10, 1), None);
    }
}
