//! fio: `random_distribution`, the block a random I/O goes to, drawn as
//! fio's `lib/zipf.c` (zipf, pareto), `lib/gauss.c` (normal) and
//! `io_u.c` (zoned, zoned_abs) draw it, from fio's generators: zipf,
//! pareto and normal from a 32-bit tausworthe per file seeded as fio 3.42's
//! `__init_rand_distribution` seeds it (the `jhash` of the file's name, the
//! job's number and its offsets' seed), the zoned ones from the job's
//! offset and zone generators. The popular ranks of zipf, pareto and
//! normal are scattered over the file by fio's `__hash_u64`.

use crate::fio::lfsr::Lfsr;
use crate::fio::rand::{FRand, RandStates};
use crate::workload::{RandomDistribution, Zone};

/// fio's `ZIPF_MAX_GEN`: zipf's normalisation sums at most this many terms.
const ZIPF_MAX_GEN: u64 = 10_000_000;
/// fio's `GAUSS_ITERS`.
const GAUSS_ITERS: u64 = 12;
/// fio's `GOLDEN_RATIO_64` (`__hash_u64`).
const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;
/// fio's `FRAND32_MAX`.
const FRAND32_MAX: f64 = u32::MAX as f64;

/// A random job's distribution state (none for `random`).
#[derive(Clone, Debug)]
pub(crate) struct Distribution {
    /// zipf, pareto, normal: per file.
    files: Vec<FileDist>,
    /// zoned: per direction, the zone of each of the 100 percent of I/Os (`zone_state_index`).
    zones: [Vec<ZoneIndex>; 3],
    absolute: bool,
}

/// One file's zipf, pareto or normal generator; also a skewed
/// `file_service_type`'s (fio's `next_file_zipf`, `next_file_gauss`).
#[derive(Clone, Debug)]
pub(crate) struct FileDist {
    nranges: u64,
    rand_off: u64,
    rng: FRand,
    kind: Kind,
    /// Ranks scattered by `__hash_u64` (`random_distribution`'s; a file
    /// service's is not: `zipf_disable_hash`, `gauss_disable_hash`).
    hash: bool,
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Zipf { theta: f64, zeta2: f64, zetan: f64 },
    Pareto { pow: f64 },
    Gauss { stddev: u64 },
}

/// One entry of fio's `zone_split_index`: where the zone starts and ends.
#[derive(Clone, Copy, Debug, Default)]
struct ZoneIndex {
    size_perc_prev: u64,
    size_perc: u64,
    size_prev: u64,
    size: u64,
}

/// A 32-bit draw (fio's `__rand` on a 32-bit tausworthe state).
fn rand32(rng: &mut FRand) -> u32 {
    rng.next() as u32
}

/// fio's `GOLDEN_RATIO_32`, jhash's start.
const JHASH_INITVAL: u32 = 0x61C8_8647;

/// fio's `jhash` (`hash.h`, Bob Jenkins'), as fio's code computes it: each
/// 12-byte block adds one byte to each of a, b and c (a `uint8_t *`
/// dereferenced), the last block its bytes in place.
pub(crate) fn jhash(key: &[u8], initval: u32) -> u32 {
    let mut a = JHASH_INITVAL.wrapping_add(key.len() as u32).wrapping_add(initval);
    let (mut b, mut c) = (a, a);
    let mut k = key;
    while k.len() > 12 {
        a = a.wrapping_add(k[0] as u32);
        b = b.wrapping_add(k[4] as u32);
        c = c.wrapping_add(k[8] as u32);
        // __jhash_mix: x -= z; x ^= rol32(z, r); z += y, for six (x, z, y).
        mix(&mut a, &mut c, b, 4);
        mix(&mut b, &mut a, c, 6);
        mix(&mut c, &mut b, a, 8);
        mix(&mut a, &mut c, b, 16);
        mix(&mut b, &mut a, c, 19);
        mix(&mut c, &mut b, a, 4);
        k = &k[12..];
    }
    if k.is_empty() {
        return c;
    }
    let word = |bytes: &[u8]| bytes.iter().enumerate().fold(0u32, |w, (i, &x)| w.wrapping_add((x as u32) << (8 * i)));
    a = a.wrapping_add(word(&k[..k.len().min(4)]));
    if k.len() > 4 {
        b = b.wrapping_add(word(&k[4..k.len().min(8)]));
    }
    if k.len() > 8 {
        c = c.wrapping_add(word(&k[8..]));
    }
    // __jhash_final: x ^= y; x -= rol32(y, r), for seven (x, y).
    let last = |x: u32, y: u32, r: u32| (x ^ y).wrapping_sub(y.rotate_left(r));
    c = last(c, b, 14);
    a = last(a, c, 11);
    b = last(b, a, 25);
    c = last(c, b, 16);
    a = last(a, c, 4);
    b = last(b, a, 14);
    last(c, b, 24)
}

/// One step of jhash's `__jhash_mix`.
fn mix(x: &mut u32, z: &mut u32, y: u32, r: u32) {
    *x = x.wrapping_sub(*z) ^ z.rotate_left(r);
    *z = z.wrapping_add(y);
}

impl Distribution {
    /// The state of a job whose files hold `nranges` ranges each (fio's
    /// `__init_rand_distribution`: the smaller of the read and write block
    /// sizes, over the smaller of the file and its region); `None` for `random`.
    /// `seeds`: each file's generator's seed.
    pub(crate) fn new(dist: &RandomDistribution, nranges: &[u64], seeds: &[u32]) -> Option<Distribution> {
        let (files, zones, absolute) = match dist {
            RandomDistribution::Random => return None,
            RandomDistribution::Zoned { absolute, zones } => (Vec::new(), zones.clone().map(|z| index(&z)), *absolute),
            d => {
                let files = nranges.iter().zip(seeds).map(|(&n, &seed)| FileDist::new(d, n.max(1), seed));
                (files.collect(), Default::default(), false)
            }
        };
        Some(Distribution { files, zones, absolute })
    }

    /// The block (of `ba` bytes) of file `di` for an I/O of direction `d`,
    /// whose file has `lastb` such blocks where an I/O fits (fio's
    /// `last_block`), from the job's generators (fio's `offset_state` and `zone_state`).
    /// With `random_generator=lfsr` (`lfsr`, the file's), a zone's block is
    /// the LFSR's next as it comes, not scaled to the zone (fio's
    /// `__get_next_rand_offset`), so it may lie past the zone or the file.
    /// `None`: `zoned_abs` zones past the file's end (fio fails the I/O), or
    /// the LFSR has no block left.
    pub(crate) fn block(
        &mut self,
        di: usize,
        d: usize,
        lastb: u64,
        ba: u64,
        rand: &mut RandStates,
        mut lfsr: Option<&mut Lfsr>,
    ) -> Option<u64> {
        if let Some(f) = self.files.get_mut(di) {
            return Some(f.next());
        }
        let rng = &mut rand.offset;
        let mut uniform = |n: u64| match lfsr {
            Some(ref mut l) => l.next(),
            None => Some(rng.scaled(n)),
        };
        let index = &self.zones[d];
        if index.is_empty() {
            return uniform(lastb);
        }
        let z = index[rand.zone.between(1, 100) as usize - 1];
        if self.absolute {
            let (start, end) = (z.size_prev / ba, z.size / ba);
            if end > lastb {
                return None;
            }
            Some(start + uniform(end - start)?)
        } else {
            let start = z.size_perc_prev * lastb / 100;
            Some(start + uniform(lastb * (z.size_perc - z.size_perc_prev) / 100)?)
        }
    }

    /// Whether zoned_abs's zones of direction `d` end past `lastb` blocks of `ba` bytes.
    pub(crate) fn zones_exceed(&self, d: usize, lastb: u64, ba: u64) -> bool {
        self.absolute && self.zones[d].last().is_some_and(|z| z.size / ba > lastb)
    }
}

/// fio's `__td_zone_gen_index`: the zone of each percent of the I/Os.
fn index(zones: &[Zone]) -> Vec<ZoneIndex> {
    if zones.is_empty() {
        return Vec::new();
    }
    let mut out = vec![ZoneIndex::default(); 100];
    let (mut aprev, mut sprev, mut sprev_sz) = (0usize, 0u64, 0u64);
    for z in zones {
        for e in out.iter_mut().skip(aprev).take(z.access_perc as usize) {
            *e = ZoneIndex {
                size_perc: sprev + z.size_perc as u64,
                size_perc_prev: sprev,
                size: sprev_sz + z.size,
                size_prev: sprev_sz,
            };
        }
        aprev += z.access_perc as usize;
        sprev += z.size_perc as u64;
        sprev_sz += z.size;
    }
    out
}

impl FileDist {
    fn new(dist: &RandomDistribution, nranges: u64, seed: u32) -> FileDist {
        let mut rng = FRand::new(seed as u64, false);
        // shared_rand_init (zipf, pareto): a random offset, replaced by a center when one is given.
        let mut off = |center: Option<f64>| {
            let random_off = rand32(&mut rng) as u64;
            center.map_or(random_off, |c| (nranges as f64 * c) as u64)
        };
        let (kind, rand_off) = match *dist {
            RandomDistribution::Zipf { theta, center } => {
                (Kind::Zipf { theta, zeta2: 1.0 + 0.5f64.powf(theta), zetan: zetan(nranges, theta) }, off(center))
            }
            RandomDistribution::Pareto { h, center } => (Kind::Pareto { pow: h.ln() / (1.0 - h).ln() }, off(center)),
            RandomDistribution::Normal { dev, center } => {
                let stddev =
                    if dev == 0.0 { 0 } else { ((nranges as f64 * dev / 100.0).ceil() as u64).min(nranges / 2) };
                // gauss_init: centred at 0 unless a center is given (then at nranges * (center - 0.5)).
                (Kind::Gauss { stddev }, center.map_or(0, |c| (nranges as f64 * (c - 0.5)) as i64 as u64))
            }
            _ => unreachable!("random and zoned have no per-file state"),
        };
        FileDist { nranges, rand_off, rng, kind, hash: true }
    }

    /// A skewed `file_service_type`'s generator (fio's init_rand_file_service):
    /// `dist` over `nranges` ranges (the files' number << FIO_FSERVICE_SHIFT),
    /// seeded with `seed` (`rand_seeds[FIO_RAND_FILE_OFF]`), unhashed.
    pub(crate) fn file_service(dist: &RandomDistribution, nranges: u64, seed: u32) -> FileDist {
        FileDist { hash: false, ..FileDist::new(dist, nranges.max(1), seed) }
    }

    /// zipf_next, pareto_next, gauss_next.
    pub(crate) fn next(&mut self) -> u64 {
        let n = self.nranges;
        let val = match self.kind {
            Kind::Zipf { theta, zeta2, zetan } => {
                let alpha = 1.0 / (1.0 - theta);
                let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                let rand_uni = rand32(&mut self.rng) as f64 / FRAND32_MAX;
                let rand_z = rand_uni * zetan;
                let val = if rand_z < 1.0 {
                    1
                } else if rand_z < 1.0 + 0.5f64.powf(theta) {
                    2
                } else {
                    1 + (n as f64 * (eta * rand_uni - eta + 1.0).powf(alpha)) as u64
                };
                val - 1
            }
            Kind::Pareto { pow } => {
                let r = rand32(&mut self.rng) as f64 / FRAND32_MAX;
                ((n - 1) as f64 * r.powf(pow)) as u64
            }
            Kind::Gauss { stddev } => {
                let mut sum: u64 = 0;
                for _ in 0..GAUSS_ITERS {
                    sum = sum.wrapping_add(rand32(&mut self.rng) as u64 % (n + 1));
                }
                sum = sum.div_ceil(GAUSS_ITERS);
                if stddev > 0 {
                    // gauss_dev: an int in [-stddev/2, stddev/2), halved until it stays in range.
                    let r = rand32(&mut self.rng) as f64;
                    let mut dev = (stddev as f64 * (r / (FRAND32_MAX + 1.0))) as i64 - (stddev / 2) as i64;
                    // fio halves forever when the sum itself is the last range (a
                    // region of two ranges with a deviation that rounds to 0): stop at 0.
                    while dev != 0 && sum.wrapping_add(dev as u64) >= n {
                        dev /= 2;
                    }
                    sum = sum.wrapping_add(dev as u64);
                }
                sum
            }
        };
        let val = if self.hash { val.wrapping_mul(GOLDEN_RATIO_64) } else { val };
        val.wrapping_add(self.rand_off) % n
    }
}

/// zipf_update's sum of k^-theta over the first `min(nranges, ZIPF_MAX_GEN)`
/// ranks. fio adds up to ten million powers; the first thousand are added
/// here and the rest is the Euler-Maclaurin sum (the integral, the end
/// terms and two derivative corrections), which is within 1e-12 of it.
fn zetan(nranges: u64, theta: f64) -> f64 {
    const EXACT: u64 = 1000;
    let n = nranges.min(ZIPF_MAX_GEN);
    let f = |k: f64| k.powf(-theta);
    let head: f64 = (1..=n.min(EXACT)).map(|k| f(k as f64)).sum();
    if n <= EXACT {
        return head;
    }
    // The tail from a = EXACT to n, both ends included, less f(a) (already in head).
    let (a, b) = (EXACT as f64, n as f64);
    let integral = (b.powf(1.0 - theta) - a.powf(1.0 - theta)) / (1.0 - theta);
    let d1 = |x: f64| -theta * x.powf(-theta - 1.0);
    let d3 = |x: f64| -theta * (theta + 1.0) * (theta + 2.0) * x.powf(-theta - 3.0);
    let tail = integral + (f(a) + f(b)) / 2.0 + (d1(b) - d1(a)) / 12.0 - (d3(b) - d3(a)) / 720.0;
    head + tail - f(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jhash_is_fios() {
        // fio 3.42's hash.h compiled as it is (gcc, x86-64): a short name, one of
        // exactly 12 bytes, one past three blocks.
        assert_eq!(jhash(b"a.0.0", 0), 2686932836);
        assert_eq!(jhash(b"/dev/nvme0n1", 0), 1437019758);
        assert_eq!(jhash(b"a-much-longer-file-name-of-37-bytes.0", 0), 1012025930);
    }

    fn dist(d: RandomDistribution, n: u64) -> Distribution {
        Distribution::new(&d, &[n], &[7]).unwrap()
    }

    /// The share of draws that land on the most popular `top` of the blocks.
    fn hot_share(d: RandomDistribution, n: u64, top: usize) -> f64 {
        let mut dist = dist(d, n);
        let mut rng = crate::fio::rand::RandStates::new(1, 1, false, false, false);
        let mut counts = vec![0u32; n as usize];
        let draws = 200_000;
        for _ in 0..draws {
            let b = dist.block(0, 0, n, 4096, &mut rng, None).unwrap();
            assert!(b < n, "block {b} of {n}");
            counts[b as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        counts[..top].iter().sum::<u32>() as f64 / draws as f64
    }

    #[test]
    fn zipf_and_pareto_concentrate_the_ios_and_uniform_does_not() {
        // zipf 1.2 puts more than half the I/Os on 1% of 10,000 blocks; pareto 0.2
        // is the 80/20 rule: 80% of them on 20% (ln 0.2 / ln 0.8 as the power).
        let zipf = hot_share(RandomDistribution::Zipf { theta: 1.2, center: None }, 10_000, 100);
        assert!((0.5..0.8).contains(&zipf), "zipf:1.2 top 1%: {zipf}");
        let pareto = hot_share(RandomDistribution::Pareto { h: 0.2, center: None }, 10_000, 2000);
        // (a little more: fio's hash modulo the ranges folds some ranks onto one block)
        assert!((0.78..0.92).contains(&pareto), "pareto:0.2 top 20%: {pareto}");
        let normal = hot_share(RandomDistribution::Normal { dev: 5.0, center: None }, 10_000, 1000);
        assert!(normal > 0.25, "normal:5 top 10%: {normal}");
        // Two ranges: every draw ends (fio's own loop would spin forever when the sum is 2).
        hot_share(RandomDistribution::Normal { dev: 20.0, center: None }, 2, 1);
        let zoned = Distribution::new(&RandomDistribution::Random, &[100], &[1]);
        assert!(zoned.is_none());
    }

    #[test]
    fn zetan_is_fios_sum_of_powers() {
        for theta in [0.5, 0.8, 1.2, 2.0] {
            // fio stops at ZIPF_MAX_GEN terms.
            assert_eq!(zetan(u64::MAX, theta), zetan(ZIPF_MAX_GEN, theta));
            for n in [10, 1000, 1001, 123_457, 2_000_000] {
                let terms = n.min(ZIPF_MAX_GEN);
                let exact: f64 = (0..terms).map(|i| (1.0 / (i + 1) as f64).powf(theta)).sum();
                let got = zetan(n, theta);
                assert!(((got - exact) / exact).abs() < 1e-9, "theta {theta} n {n}: {got} vs {exact}");
            }
        }
    }

    #[test]
    fn zoned_sends_each_share_of_the_ios_to_its_zone() {
        // zoned:50/5:30/15:20/80 — half the I/Os in the first 5%, 30% in the next 15%.
        let zones: Vec<Zone> =
            [(50, 5), (30, 15), (20, 80)].map(|(a, s)| Zone { access_perc: a, size_perc: s, size: 0 }).to_vec();
        let mut d =
            dist(RandomDistribution::Zoned { absolute: false, zones: [zones.clone(), zones.clone(), zones] }, 1);
        let mut rng = crate::fio::rand::RandStates::new(1, 1, false, false, false);
        let (mut first, mut second) = (0, 0);
        for _ in 0..100_000 {
            let b = d.block(0, 0, 1000, 4096, &mut rng, None).unwrap();
            assert!(b < 1000);
            first += (b < 50) as u32;
            second += (50..200).contains(&b) as u32;
        }
        assert!((49_000..51_000).contains(&first) && (29_000..31_000).contains(&second), "{first} {second}");
        // zoned_abs: sizes in bytes; zones past the file are refused.
        let abs = vec![Zone { access_perc: 100, size_perc: 0, size: 8 << 20 }];
        let d = dist(RandomDistribution::Zoned { absolute: true, zones: [abs.clone(), abs.clone(), abs] }, 1);
        assert!(d.zones_exceed(0, 1000, 4096) && !d.zones_exceed(0, 4096, 4096));
    }
}
