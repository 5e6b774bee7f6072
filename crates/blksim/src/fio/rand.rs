//! fio: its generators (`lib/rand.h`, `lib/rand.c`), L'Ecuyer's maximally
//! equidistributed combined Tausworthe generators, taus88 (32 bits,
//! `random_generator=tausworthe`, fio's default) and taus258 (64 bits,
//! `tausworthe64`), seeded as fio's `init_rand_seed` seeds them, and the
//! job's set of them as `td_fill_rand_seeds` seeds it from
//! `setup_random_seeds`' seeds: the offsets', the block sizes' (one per
//! direction) and the read/write mix's. Drawn with the same arithmetic as
//! fio, they give fio's offsets, sizes and directions.

use crate::fio::job::fio_rand_seed;

/// fio's `FIO_RAND_BS_OFF`, `FIO_RAND_BS1_OFF`, `FIO_RAND_BS2_OFF`: the block sizes' seeds.
const FIO_RAND_BS_OFF: [u64; 3] = [0, 1, 2];
/// fio's `FIO_RAND_MIX_OFF`: the read/write mix's seed.
const FIO_RAND_MIX_OFF: u64 = 4;
/// fio's `FIO_RAND_FILE_OFF`: `file_service_type=random`'s seed.
const FIO_RAND_FILE_OFF: u64 = 5;
/// fio's `FIO_RAND_ZONE_OFF`: the zoned distributions' zone seed.
const FIO_RAND_ZONE_OFF: u64 = 16;
/// fio's `FIO_RAND_POISSON_OFF`, `FIO_RAND_POISSON2_OFF`, `FIO_RAND_POISSON3_OFF`: `rate_process=poisson`'s
/// seeds, reads', writes' and trims'.
const FIO_RAND_POISSON_OFF: [u64; 3] = [15, 17, 18];
/// fio's `FIO_RAND_PRIO_CMDS`: cmdprio's seed.
const FIO_RAND_PRIO_CMDS: u64 = 19;
/// fio's `FIO_RAND_SEQ_RAND_READ_OFF`: `percentage_random`'s seed, every
/// direction's (`td_fill_rand_seeds_internal` seeds all three from it).
const FIO_RAND_SEQ_RAND_READ_OFF: u64 = 10;
/// fio's `FIO_RAND_BLOCK_OFF`: the offsets' seed.
pub(crate) const FIO_RAND_BLOCK_OFF: u64 = 6;

/// One of fio's `frand_state`s.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FRand {
    /// taus88: `s1`, `s2`, `s3`.
    Taus88([u32; 3]),
    /// taus258: `s1` to `s5`.
    Taus258([u64; 5]),
}

/// fio's `__seed`: a seed word below `m` is moved up by `m` (each word's top bits must not be zero).
fn floor(x: u64, m: u64) -> u64 {
    if x < m {
        x + m
    } else {
        x
    }
}

/// `(2^31) + (2^17) + (2^7)` in fio's C: exclusive ors, 29 + 19 + 5.
const LCG_START: u64 = 53;

impl FRand {
    /// fio's `init_rand_seed`: a 32-bit state from the seed's low 32 bits, or a 64-bit one; six draws discarded.
    pub(crate) fn new(seed: u64, use64: bool) -> FRand {
        let mut s = if use64 {
            let lcg = |x: u64| x.wrapping_mul(6_906_969_069) ^ seed;
            let mut w = [0u64; 5];
            let mut prev = LCG_START;
            for (i, m) in [1, 7, 15, 33, 49].into_iter().enumerate() {
                w[i] = floor(lcg(prev), m);
                prev = w[i];
            }
            FRand::Taus258(w)
        } else {
            let seed = seed as u32;
            let lcg = |x: u32| x.wrapping_mul(69_069) ^ seed;
            let mut w = [0u32; 3];
            let mut prev = LCG_START as u32;
            for (i, m) in [1, 7, 15].into_iter().enumerate() {
                w[i] = floor(lcg(prev) as u64, m) as u32;
                prev = w[i];
            }
            FRand::Taus88(w)
        };
        for _ in 0..6 {
            s.next();
        }
        s
    }

    /// fio's `__rand`.
    #[inline(always)]
    pub(crate) fn next(&mut self) -> u64 {
        match self {
            FRand::Taus88(s) => {
                #[inline(always)]
                fn taus(s: u32, a: u32, b: u32, c: u32, d: u32) -> u32 {
                    ((s & c) << d) ^ (((s << a) ^ s) >> b)
                }
                s[0] = taus(s[0], 13, 19, 4_294_967_294, 12);
                s[1] = taus(s[1], 2, 25, 4_294_967_288, 4);
                s[2] = taus(s[2], 3, 11, 4_294_967_280, 17);
                (s[0] ^ s[1] ^ s[2]) as u64
            }
            FRand::Taus258(s) => {
                #[inline(always)]
                fn taus(s: u64, a: u32, b: u32, c: u64, d: u32) -> u64 {
                    ((s & c) << d) ^ (((s << a) ^ s) >> b)
                }
                s[0] = taus(s[0], 1, 53, 18_446_744_073_709_551_614, 10);
                s[1] = taus(s[1], 24, 50, 18_446_744_073_709_551_104, 5);
                s[2] = taus(s[2], 3, 23, 18_446_744_073_709_547_520, 29);
                s[3] = taus(s[3], 5, 24, 18_446_744_073_709_420_544, 23);
                s[4] = taus(s[4], 3, 33, 18_446_744_073_701_163_008, 8);
                s[0] ^ s[1] ^ s[2] ^ s[3] ^ s[4]
            }
        }
    }

    /// The state as fio's `verify_save_state` saves it: whether it is
    /// taus258, and its words (taus88's three first).
    pub(crate) fn words(&self) -> (bool, [u64; 5]) {
        match *self {
            FRand::Taus88([a, b, c]) => (false, [a as u64, b as u64, c as u64, 0, 0]),
            FRand::Taus258(s) => (true, s),
        }
    }

    /// fio's `rand_max`.
    #[inline(always)]
    pub(crate) fn max(&self) -> u64 {
        match self {
            FRand::Taus88(_) => u32::MAX as u64,
            FRand::Taus258(_) => u64::MAX,
        }
    }

    /// A draw scaled to `[0, n)` as fio scales one: `n * (r / (rand_max + 1.0))`
    /// (`__get_next_rand_offset`'s block).
    #[inline(always)]
    pub(crate) fn scaled(&mut self, n: u64) -> u64 {
        let r = self.next();
        (n as f64 * (r as f64 / (self.max() as f64 + 1.0))) as u64
    }

    /// fio's `rand_between` (both ends included), on a 32-bit state as fio's
    /// 32-bit callers use it: `start + (end - start + 1) * (r / 2^32)`.
    #[inline(always)]
    pub(crate) fn between(&mut self, start: u64, end: u64) -> u64 {
        let r = self.next();
        let span = end - start + 1;
        let one = self.max() as f64 + 1.0;
        start + (span as f64 * (r as f64 / one)) as u64
    }
}

/// A job's fio generators (`td_fill_rand_seeds`), seeded again for each
/// loop with `randrepeat` (clear_io_state).
#[derive(Clone, Debug)]
pub(crate) struct RandStates {
    /// `offset_state`: random offsets (`__get_next_rand_offset`, zoned distributions).
    pub offset: FRand,
    /// `bsrange_state`, per direction: `bsrange` and `bssplit` draws (`get_next_buflen`).
    pub bsrange: [FRand; 3],
    /// `rwmix_state` (32 bits): the read/write mix's direction (`get_rand_ddir`).
    pub rwmix: FRand,
    /// `zone_state` (32 bits): a zoned distribution's zone.
    pub zone: FRand,
    /// `prio_state` (32 bits): which io_us cmdprio gives a priority.
    pub prio: FRand,
    /// `seq_rand_state` per direction (32 bits): whether a random job's draw
    /// is random (`should_do_random`, `percentage_random`).
    pub seq_rand: [FRand; 3],
    /// `next_file_state`: `file_service_type=random`'s file.
    pub file: FRand,
    /// A skewed `file_service_type`'s generator (`next_file_zipf`,
    /// `next_file_gauss`), set by the job when it has several files.
    pub file_skew: Option<Box<crate::fio::distribution::FileDist>>,
    /// `file_service_type`'s seed (`rand_seeds[FIO_RAND_FILE_OFF]`).
    file_seed: u64,
    /// The offsets' seed (`rand_seeds[FIO_RAND_BLOCK_OFF]`).
    offset_seed: u64,
    /// `rate_process=poisson`'s states (`poisson_state`, 32 bits), reads', writes' and trims' as seeded.
    poisson: [FRand; 3],
}

impl RandStates {
    /// The generators of the job numbered `thread_number` (from 1) from
    /// `rand_seed` (fio's `td->o.rand_seed`); 64-bit ones with `use64`.
    /// With `verify` the writes' sizes are drawn as the reads' (fio seeds
    /// them alike so a read-back finds the sizes written), with
    /// `trimwrite` the trims' as the writes'.
    pub(crate) fn new(rand_seed: u64, thread_number: u64, use64: bool, verify: bool, trimwrite: bool) -> RandStates {
        let seed = |k| fio_rand_seed(rand_seed, thread_number, k);
        let read = seed(FIO_RAND_BS_OFF[0]);
        let write = if verify { read } else { seed(FIO_RAND_BS_OFF[1]) };
        let trim = if trimwrite { write } else { seed(FIO_RAND_BS_OFF[2]) };
        RandStates {
            offset: FRand::new(seed(FIO_RAND_BLOCK_OFF), use64),
            offset_seed: seed(FIO_RAND_BLOCK_OFF),
            poisson: FIO_RAND_POISSON_OFF.map(|k| FRand::new(seed(k), false)),
            bsrange: [read, write, trim].map(|s| FRand::new(s, use64)),
            rwmix: FRand::new(seed(FIO_RAND_MIX_OFF), false),
            zone: FRand::new(seed(FIO_RAND_ZONE_OFF), false),
            prio: FRand::new(seed(FIO_RAND_PRIO_CMDS), false),
            seq_rand: [0; 3].map(|_| FRand::new(seed(FIO_RAND_SEQ_RAND_READ_OFF), false)),
            file: FRand::new(seed(FIO_RAND_FILE_OFF), use64),
            file_skew: None,
            file_seed: seed(FIO_RAND_FILE_OFF),
        }
    }
}

impl RandStates {
    /// Direction `d`'s `poisson_state` as seeded.
    pub(crate) fn poisson(&self, d: usize) -> FRand {
        self.poisson[d].clone()
    }

    /// `file_service_type`'s seed (`rand_seeds[FIO_RAND_FILE_OFF]`).
    pub(crate) fn file_seed(&self) -> u64 {
        self.file_seed
    }

    /// The offsets' seed (`rand_seeds[FIO_RAND_BLOCK_OFF]`).
    pub(crate) fn offset_seed(&self) -> u64 {
        self.offset_seed
    }

    /// The offsets from tausworthe64 from their seed (fio's
    /// `init_rand_offset_seed` after check_rand_gen_limits switched).
    pub(crate) fn offsets_64(&mut self) {
        self.offset = FRand::new(self.offset_seed, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The first four draws, then rand_between(1, 100) and a block of 1,000,
    // of fio 3.42's lib/rand.h and rand.c compiled as they are (gcc, x86-64).
    #[test]
    fn draws_are_fios() {
        let cases: [(bool, u64, [u64; 4], u64, u64); 4] = [
            (false, 1, [2634262343, 4072702554, 2367269570, 3770928454], 617, 88),
            (false, 0x89, [4195301155, 3725684139, 3310918406, 1964443401], 71, 73),
            (false, 16045690984503111693, [850923228, 1825867778, 249531888, 4088447677], 886, 37),
            (true, 1, [11128779724671416100, 6550831460819418398, 17807837793713620933, 1552060697069500858], 674, 66),
        ];
        for (use64, seed, first, block, between) in cases {
            let mut s = FRand::new(seed, use64);
            assert_eq!([0; 4].map(|_| s.next()), first, "seed {seed} use64 {use64}");
            assert_eq!(s.between(1, 100), between);
            assert_eq!(s.scaled(1000), block);
        }
        let mut s = FRand::new(12345678901, true);
        let first = [12593746450870132365, 5534917862297789121, 2676168422874577284, 10033578801314977963];
        assert_eq!([0; 4].map(|_| s.next()), first);
        assert_eq!((s.between(1, 100), s.scaled(1000)), (16, 736));
    }

    #[test]
    fn verify_and_trimwrite_share_the_size_seeds_as_fio_does() {
        let plain = RandStates::new(0x89, 1, false, false, false);
        assert_ne!(plain.bsrange[0], plain.bsrange[1]);
        assert_ne!(plain.bsrange[1], plain.bsrange[2]);
        let v = RandStates::new(0x89, 1, false, true, true);
        assert_eq!(v.bsrange[0], v.bsrange[1]);
        assert_eq!(v.bsrange[1], v.bsrange[2]);
        assert_eq!(v.offset, plain.offset);
    }
}
