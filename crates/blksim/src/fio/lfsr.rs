//! fio: `random_generator=lfsr` (`lib/lfsr.c`). A maximal-length linear
//! feedback shift register of the fewest bits whose period covers the
//! file's blocks gives each block once per pass, in a scrambled order,
//! without a random map: values past the last block are skipped. fio's tap
//! table, XNOR step and spin 0 (whose first step is two steps).

/// Tap positions per register width (fio's `lfsr_taps`, widths 3..=63).
const TAPS: [&[u8]; 64] = [
    &[],
    &[],
    &[],
    &[3, 2],
    &[4, 3],
    &[5, 3],
    &[6, 5],
    &[7, 6],
    &[8, 6, 5, 4],
    &[9, 5],
    &[10, 7],
    &[11, 9],
    &[12, 6, 4, 1],
    &[13, 4, 3, 1],
    &[14, 5, 3, 1],
    &[15, 14],
    &[16, 15, 13, 4],
    &[17, 14],
    &[18, 11],
    &[19, 6, 2, 1],
    &[20, 17],
    &[21, 19],
    &[22, 21],
    &[23, 18],
    &[24, 23, 22, 17],
    &[25, 22],
    &[26, 6, 2, 1],
    &[27, 5, 2, 1],
    &[28, 25],
    &[29, 27],
    &[30, 6, 4, 1],
    &[31, 28],
    &[32, 31, 29, 1],
    &[33, 20],
    &[34, 27, 2, 1],
    &[35, 33],
    &[36, 25],
    &[37, 5, 4, 3, 2, 1],
    &[38, 6, 5, 1],
    &[39, 35],
    &[40, 38, 21, 19],
    &[41, 38],
    &[42, 41, 20, 19],
    &[43, 42, 38, 37],
    &[44, 43, 18, 17],
    &[45, 44, 42, 41],
    &[46, 45, 26, 25],
    &[47, 42],
    &[48, 47, 21, 20],
    &[49, 40],
    &[50, 49, 24, 23],
    &[51, 50, 36, 35],
    &[52, 49],
    &[53, 52, 38, 37],
    &[54, 53, 18, 17],
    &[55, 31],
    &[56, 55, 35, 34],
    &[57, 50],
    &[58, 39],
    &[59, 58, 38, 37],
    &[60, 59],
    &[61, 60, 46, 45],
    &[62, 61, 6, 5],
    &[63, 62],
];

#[derive(Clone)]
pub(crate) struct Lfsr {
    last_val: u64,
    max_val: u64,
    xormask: u64,
    cached_bit: u64,
    num_vals: u64,
    /// Steps until the two-step (spin + 1) one: 1 after a reset (fio's
    /// prepare_spin for spin 0), then none.
    cycle_length: u64,
    seed: u64,
}

impl Lfsr {
    /// lfsr_init for `nums` values (blocks) from `seed`, spin 0. `None` for
    /// no blocks or more than 2^63.
    pub(crate) fn new(nums: u64, seed: u64) -> Option<Lfsr> {
        if nums == 0 {
            return None;
        }
        let bits = (3..64).find(|&i| (1u64 << i) > nums)?;
        let taps = TAPS[bits];
        let xormask = taps.iter().fold(0u64, |m, &t| m | 1 << (t - 1));
        let cached_bit = 1u64 << (taps[0] - 1);
        // prepare_spin (spin 0): the first step after lfsr_init is a double one.
        let mut l = Lfsr { last_val: 0, max_val: nums - 1, xormask, cached_bit, num_vals: 0, cycle_length: 1, seed };
        l.reset();
        Some(l)
    }

    /// lfsr_reset's refusal: for `nums` values, does `seed` start the
    /// register in its all-ones state (illegal for an XNOR register)? fio's
    /// lfsr_init then fails ("failed initializing LFSR").
    pub(crate) fn seed_is_illegal(nums: u64, seed: u64) -> bool {
        Lfsr::new(nums, 0).is_some_and(|l| {
            let bitmask = (l.cached_bit << 1) - 1;
            seed & bitmask == bitmask
        })
    }

    /// lfsr_reset: the pass starts again from the seed, with single steps
    /// (the double first step is lfsr_init's only, so a reset pass begins
    /// at the state lfsr_init's skipped, as fio's does). fio refuses the
    /// all-ones state (illegal for an XNOR register), and so does the job's
    /// set-up (`seed_is_illegal`); were one here, it would lose its top bit.
    pub(crate) fn reset(&mut self) {
        let bitmask = (self.cached_bit << 1) - 1;
        self.num_vals = 0;
        self.last_val = self.seed & bitmask;
        if self.last_val == bitmask {
            self.last_val &= !self.cached_bit;
        }
    }

    fn step(&mut self) {
        let v = self.last_val;
        self.last_val = ((v >> 1) | self.cached_bit) ^ ((v & 1).wrapping_sub(1) & self.xormask);
    }

    /// lfsr_next: the next block, `None` when the pass has given every one.
    pub(crate) fn next(&mut self) -> Option<u64> {
        let n = self.num_vals;
        self.num_vals += 1;
        if n > self.max_val {
            return None;
        }
        loop {
            if self.cycle_length > 0 {
                self.cycle_length -= 1;
                if self.cycle_length == 0 {
                    self.step();
                }
            }
            self.step();
            if self.last_val <= self.max_val {
                return Some(self.last_val);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_gives_every_block_once_then_ends() {
        for nums in [1u64, 5, 8, 256, 1000, 4097] {
            let mut l = Lfsr::new(nums, 0x1234_5678).unwrap();
            let mut seen = vec![false; nums as usize];
            for _ in 0..nums {
                let b = l.next().unwrap() as usize;
                assert!(!seen[b], "{nums}: block {b} twice");
                seen[b] = true;
            }
            assert!(l.next().is_none(), "{nums}: the pass is over");
            l.reset();
            assert!(l.next().is_some());
        }
    }

    #[test]
    fn the_sequence_is_fios() {
        // fio's own lib/lfsr.c, compiled and run (lfsr_init(nums, seed, 0),
        // then lfsr_next until it fails).
        let first = |nums, seed, n| {
            let mut l = Lfsr::new(nums, seed).unwrap();
            (0..n).map(|_| l.next().unwrap()).collect::<Vec<_>>()
        };
        assert_eq!(first(256, 0x1234_5678, 12), [6, 19, 210, 121, 142, 87, 245, 173, 187, 199, 252, 110]);
        assert_eq!(first(1000, 987_654_321, 8), [364, 246, 59, 541, 782, 455, 739, 881]);
        assert_eq!(first(1000, 987_654_321, 1000)[997..], [482, 177, 600]);
        assert_eq!(first(5_000_000, 42, 5), [4259850, 2260997, 2793473, 2664448, 1463296]);
    }

    #[test]
    fn a_reset_pass_is_fios() {
        // fio's lib/lfsr.c: lfsr_init, the whole pass, lfsr_reset(seed), the pass again. The
        // reset pass steps once from the seed, where lfsr_init's first step is a double one.
        let mut l = Lfsr::new(16, 0x5629_aad4_732c_04d8).unwrap();
        let init: Vec<u64> = std::iter::from_fn(|| l.next()).collect();
        assert_eq!(init, [0, 4, 6, 7, 10, 1, 12, 2, 5, 13, 15, 11, 9, 14, 3, 8]);
        l.reset();
        let again: Vec<u64> = std::iter::from_fn(|| l.next()).collect();
        assert_eq!(again, [8, 0, 4, 6, 7, 10, 1, 12, 2, 5, 13, 15, 11, 9, 14, 3]);
    }

    #[test]
    fn the_register_is_the_narrowest_that_covers_the_blocks() {
        // 256 blocks: a 9-bit register (taps 9 and 5), as fio's find_lfsr.
        let l = Lfsr::new(256, 1).unwrap();
        assert_eq!((l.cached_bit, l.xormask), (1 << 8, (1 << 8) | (1 << 4)));
        assert!(Lfsr::new(0, 1).is_none());
    }
}
