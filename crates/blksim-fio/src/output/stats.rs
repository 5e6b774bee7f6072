//! fio's per-job statistics arithmetic (`stat.c`): `io_stat` for bandwidth
//! and IOPS samples, the coarse completion-latency buckets, and the
//! percentage helpers `stat_calc_lat` and `stat_calc_dist`.

use blksim::stats::{histogram, LatencyStat};

/// fio's `struct io_stat` for bandwidth and IOPS samples: min, max, Welford mean and S.
#[derive(Clone, Debug)]
pub struct IoStat {
    pub min: u64,
    pub max: u64,
    pub samples: u64,
    pub mean: f64,
    pub s: f64,
}

impl Default for IoStat {
    fn default() -> Self {
        IoStat { min: u64::MAX, max: 0, samples: 0, mean: 0.0, s: 0.0 }
    }
}

impl IoStat {
    /// fio's `add_stat_sample` over every value.
    pub fn from_samples(values: impl IntoIterator<Item = u64>) -> IoStat {
        let mut stat = IoStat::default();
        for value in values {
            stat.max = stat.max.max(value);
            stat.min = stat.min.min(value);
            let x = value as f64;
            let delta = x - stat.mean;
            if delta != 0.0 {
                stat.mean += delta / (stat.samples as f64 + 1.0);
                stat.s += delta * (x - stat.mean);
            }
            stat.samples += 1;
        }
        stat
    }

    /// fio's `sum_stat(.., pure_sum = true)`: group_reporting adds bandwidths up,
    /// min, max, mean and S alike.
    pub fn pure_sum(&mut self, other: &IoStat) {
        if other.samples == 0 {
            return;
        }
        if self.samples == 0 {
            *self = other.clone();
            return;
        }
        self.min += other.min;
        self.max += other.max;
        self.samples += other.samples;
        self.mean += other.mean;
        self.s += other.s;
    }

    /// fio's `calc_lat`: (min, max, mean, stddev), or `None` without samples.
    pub fn calc(&self) -> Option<(u64, u64, f64, f64)> {
        if self.samples == 0 {
            return None;
        }
        let n = self.samples as f64;
        let dev = if n > 1.0 { (self.s / (n - 1.0)).sqrt() } else { 0.0 };
        Some((self.min, self.max, self.mean, dev))
    }
}

/// `calc_lat` for a latency statistic.
pub fn calc_lat(stat: &LatencyStat) -> Option<(u64, u64, f64, f64)> {
    (stat.n > 0).then(|| (stat.min_ns, stat.max_ns, stat.mean(), stat.stddev()))
}

/// Completion-latency distribution in fio's coarse buckets (`io_u_lat_n/u/m`).
#[derive(Clone, Debug, Default)]
pub struct LatBuckets {
    /// Below 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000 ns.
    pub nsec: [u64; 10],
    /// Same bounds in µs.
    pub usec: [u64; 10],
    /// Same bounds in ms, then below 2000 ms and 2000 ms or more.
    pub msec: [u64; 12],
}

const LAT_BOUNDS: [u64; 11] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000];

impl LatBuckets {
    /// fio's `io_u_mark_latency` for `count` completions of `ns`.
    pub fn mark(&mut self, ns: u64, count: u64) {
        let index = |v: u64, bounds: &[u64]| bounds.iter().position(|&b| v < b).unwrap_or(bounds.len());
        if ns < 1000 {
            self.nsec[index(ns, &LAT_BOUNDS[..10])] += count;
        } else if ns < 1_000_000 {
            self.usec[index(ns / 1000, &LAT_BOUNDS[..10])] += count;
        } else {
            self.msec[index(ns / 1_000_000, &LAT_BOUNDS)] += count;
        }
    }

    /// Buckets from a completion-latency histogram. The model keeps fio's fine
    /// histogram, not fio's coarse counters: a fine bucket inside one coarse
    /// bucket goes there whole (exact); one that straddles a coarse bound (50 µs,
    /// 100 µs, 250 µs, ... fall inside fine buckets) is split in proportion to
    /// the part of its range on each side, as if its samples were spread evenly.
    pub fn from_histogram(stat: &LatencyStat) -> LatBuckets {
        let mut buckets = LatBuckets::default();
        for (idx, &count) in stat.buckets.iter().enumerate() {
            if count == 0 {
                continue;
            }
            let (lo, hi) = fine_bucket_range(idx);
            match coarse_bounds().find(|&b| lo < b && b <= hi) {
                None => buckets.mark(lo, count),
                Some(bound) => {
                    let width = (hi - lo + 1) as u128;
                    let below = ((count as u128 * (bound - lo) as u128 * 2 + width) / (2 * width)) as u64;
                    buckets.mark(lo, below);
                    buckets.mark(bound, count - below);
                }
            }
        }
        buckets
    }

    pub fn add(&mut self, other: &LatBuckets) {
        let pairs = self.nsec.iter_mut().zip(&other.nsec);
        let pairs = pairs.chain(self.usec.iter_mut().zip(&other.usec));
        for (a, b) in pairs.chain(self.msec.iter_mut().zip(&other.msec)) {
            *a += *b;
        }
    }
}

/// Every value in ns at which fio's coarse latency bucket changes.
fn coarse_bounds() -> impl Iterator<Item = u64> {
    let scaled = [1, 1000, 1_000_000].into_iter().flat_map(|unit| LAT_BOUNDS[..10].iter().map(move |b| b * unit));
    scaled.chain(std::iter::once(2000 * 1_000_000))
}

/// The values (inclusive) that fio's histogram bucket `idx` holds (`stat.c` plat_val_to_idx inverted).
fn fine_bucket_range(idx: usize) -> (u64, u64) {
    const BITS: u32 = histogram::PLAT_BITS;
    let val = histogram::PLAT_VAL;
    if idx < val << 1 {
        return (idx as u64, idx as u64);
    }
    let error_bits = (idx >> BITS) as u32 - 1;
    let lo = (1u64 << (error_bits + BITS)) + (idx % val) as u64 * (1u64 << error_bits);
    (lo, lo + (1u64 << error_bits) - 1)
}

/// fio's `stat_calc_lat`: each bucket as a percentage of `total` I/Os, at least 0.01 when non-zero.
pub fn lat_percentages(counts: &[u64], total: u64) -> Vec<f64> {
    counts
        .iter()
        .map(|&c| {
            if total == 0 {
                return 0.0;
            }
            let pct = c as f64 / total as f64 * 100.0;
            if pct < 0.01 && c > 0 {
                0.01
            } else {
                pct
            }
        })
        .collect()
}

/// fio's `stat_calc_dist`: each bucket as a percentage of `total`, at least 0.1 when non-zero.
pub fn depth_percentages(counts: &[u64; 7], total: u64) -> [f64; 7] {
    counts.map(|c| {
        if total == 0 {
            return 0.0;
        }
        let pct = c as f64 / total as f64 * 100.0;
        if pct < 0.1 && c > 0 {
            0.1
        } else {
            pct
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use blksim::stats::histogram::{plat_idx_to_val, plat_val_to_idx, PLAT_NR};

    #[test]
    fn fine_bucket_ranges_hold_the_values_that_map_to_them() {
        for idx in [0, 5, 127, 128, 200, 1000, PLAT_NR - 2] {
            let (lo, hi) = fine_bucket_range(idx);
            assert_eq!(plat_val_to_idx(lo), idx);
            assert_eq!(plat_val_to_idx(hi), idx);
            assert_eq!(plat_val_to_idx(hi + 1), idx + 1);
            assert!(lo <= plat_idx_to_val(idx) && plat_idx_to_val(idx) <= hi);
        }
    }

    #[test]
    fn straddling_bucket_is_split_by_overlap() {
        // 50 µs lies inside the fine bucket [49664, 50175]: 336 of its 512 values are below.
        let mut stat = LatencyStat::default();
        for _ in 0..512 {
            stat.record(49_700);
        }
        let buckets = LatBuckets::from_histogram(&stat);
        assert_eq!(buckets.usec[4], 336);
        assert_eq!(buckets.usec[5], 176);
    }

    #[test]
    fn coarse_buckets_follow_fio_bounds() {
        let mut b = LatBuckets::default();
        for ns in [0, 1, 2, 999, 1000, 1999, 2000, 999_999, 1_000_000, 1_999_999_999, 2_000_000_000] {
            b.mark(ns, 1);
        }
        assert_eq!(b.nsec, [2, 1, 0, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(b.usec, [2, 1, 0, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(b.msec, [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1]);
    }
}
