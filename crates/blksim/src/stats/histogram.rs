//! fio's latency histogram: 29 groups of 64 buckets (relative error < 1%),
//! up to 2^34 ns, with fio's exact index arithmetic (`stat.c` plat_val_to_idx),
//! plus exact integer sums for the mean and standard deviation.

/// fio's FIO_IO_U_PLAT_BITS: the bits of precision per group.
pub const PLAT_BITS: u32 = 6;
/// fio's FIO_IO_U_PLAT_VAL: buckets per group.
pub const PLAT_VAL: usize = 1 << PLAT_BITS;
/// fio's FIO_IO_U_PLAT_GROUP_NR: groups.
pub const PLAT_GROUP_NR: usize = 29;
/// fio's FIO_IO_U_PLAT_NR: buckets in all.
pub const PLAT_NR: usize = PLAT_GROUP_NR * PLAT_VAL;

/// Latency statistics of one kind (slat, clat or lat) in nanoseconds:
/// min, max, mean, variance (Welford) and fio's bucketed histogram.
#[derive(Clone, Debug)]
pub struct LatencyStat {
    /// Samples.
    pub n: u64,
    /// Smallest sample, ns.
    pub min_ns: u64,
    /// Largest sample, ns.
    pub max_ns: u64,
    /// Exact sums of the samples and their squares.
    sum: u128,
    sum_sq: u128,
    /// PLAT_NR counts, allocated at the first sample (most jobs leave two
    /// of their three directions empty).
    pub buckets: Vec<u64>,
}

impl Default for LatencyStat {
    fn default() -> Self {
        LatencyStat { n: 0, min_ns: u64::MAX, max_ns: 0, sum: 0, sum_sq: 0, buckets: Vec::new() }
    }
}

/// fio's `plat_val_to_idx`.
pub fn plat_val_to_idx(val: u64) -> usize {
    let msb = if val == 0 { 0 } else { 63 - val.leading_zeros() };
    if msb <= PLAT_BITS {
        return val as usize;
    }
    let error_bits = msb - PLAT_BITS;
    let base = ((error_bits + 1) as usize) << PLAT_BITS;
    let offset = (PLAT_VAL - 1) & (val >> error_bits) as usize;
    (base + offset).min(PLAT_NR - 1)
}

/// fio's `plat_idx_to_val`: the bucket's midpoint.
pub fn plat_idx_to_val(idx: usize) -> u64 {
    assert!(idx < PLAT_NR);
    if idx < (PLAT_VAL << 1) {
        return idx as u64;
    }
    let error_bits = (idx >> PLAT_BITS) as u32 - 1;
    let base = 1u64 << (error_bits + PLAT_BITS);
    let k = (idx % PLAT_VAL) as f64;
    base + ((k + 0.5) * (1u64 << error_bits) as f64) as u64
}

impl LatencyStat {
    #[inline(always)]
    /// Add a sample of `ns`.
    pub fn record(&mut self, ns: u64) {
        if self.buckets.is_empty() {
            self.allocate();
        }
        self.n += 1;
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        self.sum += ns as u128;
        self.sum_sq += ns as u128 * ns as u128;
        self.buckets[plat_val_to_idx(ns)] += 1;
    }

    #[cold]
    fn allocate(&mut self) {
        self.buckets = vec![0; PLAT_NR];
    }

    /// Mean of the samples, ns (0 with none).
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum as f64 / self.n as f64
        }
    }

    /// Sample standard deviation, as fio prints it.
    pub fn stddev(&self) -> f64 {
        if self.n > 1 {
            // n·Σx² − (Σx)² is exact in integers; the division is the only rounding.
            let n = self.n as u128;
            let num = n * self.sum_sq - self.sum * self.sum;
            (num as f64 / (n * (n - 1)) as f64).sqrt()
        } else {
            0.0
        }
    }

    /// Merge another set of samples (parallel Welford).
    pub fn merge(&mut self, other: &LatencyStat) {
        if other.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = other.clone();
            return;
        }
        self.n += other.n;
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
        for (a, b) in self.buckets.iter_mut().zip(other.buckets.iter()) {
            *a += *b;
        }
    }

    /// fio's `calc_clat_percentiles`: for each wanted percentile the value of
    /// the first bucket at which the running count reaches it.
    pub fn percentiles(&self, list: &[f64]) -> Vec<(f64, u64)> {
        let mut sorted: Vec<f64> = list.to_vec();
        sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let mut out = Vec::with_capacity(sorted.len());
        if self.n == 0 {
            return sorted.into_iter().map(|p| (p, 0)).collect();
        }
        let mut sum = 0u64;
        let mut j = 0;
        for (i, &count) in self.buckets.iter().enumerate() {
            sum += count;
            while j < sorted.len() && sum as f64 >= sorted[j] / 100.0 * self.n as f64 {
                out.push((sorted[j], plat_idx_to_val(i)));
                j += 1;
            }
            if j == sorted.len() {
                break;
            }
        }
        while j < sorted.len() {
            out.push((sorted[j], plat_idx_to_val(PLAT_NR - 1)));
            j += 1;
        }
        out
    }

    /// Non-empty buckets as (midpoint ns, count), for json+ `bins`.
    pub fn bins(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.buckets.iter().enumerate().filter(|(_, c)| **c > 0).map(|(i, c)| (plat_idx_to_val(i), *c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_are_their_own_bucket() {
        for v in 0..128 {
            assert_eq!(plat_val_to_idx(v), v as usize);
            assert_eq!(plat_idx_to_val(v as usize), v);
        }
    }

    #[test]
    fn bucket_midpoint_is_within_one_percent() {
        for v in [200u64, 1_000, 12_345, 999_999, 5_000_000, 1 << 33] {
            let mid = plat_idx_to_val(plat_val_to_idx(v));
            let err = (mid as f64 - v as f64).abs() / v as f64;
            assert!(err < 0.01, "{v} -> {mid}");
        }
    }

    #[test]
    fn huge_values_land_in_the_last_bucket() {
        assert_eq!(plat_val_to_idx(u64::MAX), PLAT_NR - 1);
    }

    #[test]
    fn mean_stddev_and_merge_agree_with_direct_computation() {
        let mut a = LatencyStat::default();
        let mut b = LatencyStat::default();
        let mut all = LatencyStat::default();
        for i in 0..1000u64 {
            let v = 1000 + (i * 7919) % 5000;
            if i % 3 == 0 {
                a.record(v)
            } else {
                b.record(v)
            }
            all.record(v);
        }
        a.merge(&b);
        assert_eq!(a.n, 1000);
        assert!((a.mean() - all.mean()).abs() < 1e-6);
        assert!((a.stddev() - all.stddev()).abs() < 1e-6);
        assert_eq!(a.min_ns, all.min_ns);
        assert_eq!(a.max_ns, all.max_ns);
        assert_eq!(a.percentiles(&[50.0]), all.percentiles(&[50.0]));
    }

    #[test]
    fn median_of_uniform_samples_is_near_the_middle() {
        let mut s = LatencyStat::default();
        for v in 1..=10_000u64 {
            s.record(v * 100);
        }
        let p = s.percentiles(&[50.0, 99.0]);
        assert!((p[0].1 as f64 - 500_000.0).abs() / 500_000.0 < 0.01, "{:?}", p);
        assert!((p[1].1 as f64 - 990_000.0).abs() / 990_000.0 < 0.01, "{:?}", p);
    }
}
