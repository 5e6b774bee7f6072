//! fio: the random map (`lib/axmap.c`, and `io_u.c`'s random_map_free,
//! axmap_next_free and mark_random_map). A random job without `norandommap`
//! does each block of its file once per pass: a drawn block already done
//! gives way to the next free one after it (wrapping to the start), and an
//! I/O marks the blocks it covers up to the first one already done. When
//! none is free the pass is over: a time-based job starts the file again
//! (fio_file_reset), any other stops there.
//!
//! One bit per block of `min(size, file)` / the job's smallest block size,
//! as fio's axmap. fio allocates the whole bitmap up front; here a map of a
//! large region holds only the 64-block words its I/Os touched, until that
//! would take more memory than the whole bitmap, which it then becomes: the
//! memory is at most fio's (one bit per block), and a short run on a large
//! drive takes what it touched.

/// Bitmaps up to this many 64-bit words (128 KiB, 8 Mi blocks) are whole from the start.
const DENSE_WORDS: u64 = 1 << 14;

/// The words a sparse map touched: open addressing with linear probing on
/// the word number (Fibonacci hashing, one multiplication), at most half
/// full. Leaner than a general hash map: the lookup is on every random I/O.
#[derive(Clone)]
struct WordTable {
    /// (word + 1, bits); a key of 0 is an empty slot.
    slots: Vec<(u64, u64)>,
    len: usize,
    /// 64 - log2(slots): the hash's top bits index the table.
    shift: u32,
}

impl WordTable {
    fn new() -> WordTable {
        WordTable { slots: vec![(0, 0); 1 << 10], len: 0, shift: 64 - 10 }
    }

    #[inline(always)]
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    #[inline(always)]
    fn get(&self, w: u64) -> Option<u64> {
        let key = w + 1;
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            match self.slots[i] {
                (0, _) => return None,
                (k, v) if k == key => return Some(v),
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// Word `w`'s bits, made (all free) if it had none.
    #[inline(always)]
    fn get_mut(&mut self, w: u64) -> &mut u64 {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let key = w + 1;
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        while self.slots[i].0 != 0 && self.slots[i].0 != key {
            i = (i + 1) & mask;
        }
        if self.slots[i].0 == 0 {
            self.slots[i] = (key, 0);
            self.len += 1;
        }
        &mut self.slots[i].1
    }

    #[cold]
    fn grow(&mut self) {
        let doubled = vec![(0, 0); self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, doubled);
        self.shift -= 1;
        let mask = self.slots.len() - 1;
        for (key, v) in old.into_iter().filter(|s| s.0 != 0) {
            let mut i = self.home(key);
            while self.slots[i].0 != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = (key, v);
        }
    }

    /// Bytes it takes.
    fn bytes(&self) -> u64 {
        self.slots.len() as u64 * 16
    }

    /// (word, bits) of every touched word.
    fn words(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.slots.iter().filter(|s| s.0 != 0).map(|&(k, v)| (k - 1, v))
    }
}

#[derive(Clone)]
pub(crate) struct RandomMap {
    nr_bits: u64,
    words: Words,
    /// The word after the map, which fio's axmap_set_nr writes when a run
    /// reaches a map of a whole number of words (its `bit_nr > nr_bits`
    /// test lets the bit just past the end through, and `__axmap_set`'s
    /// clamp is dropped): memory past its allocation, inside glibc's chunk
    /// for a map of one word or an even number of them, zero when
    /// allocated (taken as zero for every size), and never cleared by
    /// axmap_reset. Runs that reach it stop at its bits set by earlier ones.
    ghost: u64,
}

#[derive(Clone)]
enum Words {
    Dense(Vec<u64>),
    Sparse(WordTable),
}

impl RandomMap {
    /// A map of `nr_bits` blocks, all free.
    pub(crate) fn new(nr_bits: u64) -> RandomMap {
        let nr_words = nr_bits.div_ceil(64);
        let words = if nr_words <= DENSE_WORDS {
            Words::Dense(vec![0; nr_words as usize])
        } else {
            Words::Sparse(WordTable::new())
        };
        RandomMap { nr_bits, words, ghost: 0 }
    }

    fn word(&self, w: u64) -> u64 {
        match &self.words {
            Words::Dense(v) => v[w as usize],
            Words::Sparse(m) => m.get(w).unwrap_or(0),
        }
    }

    /// Set `bits` in word `w`; the bits it had.
    #[inline(always)]
    fn or_word(&mut self, w: u64, bits: u64) -> u64 {
        match &mut self.words {
            Words::Dense(v) => {
                let x = &mut v[w as usize];
                let had = *x;
                *x |= bits;
                had
            }
            Words::Sparse(m) => {
                let x = m.get_mut(w);
                let had = *x;
                *x |= bits;
                if m.bytes() > self.nr_bits.div_ceil(64) * 8 {
                    self.densify();
                }
                had
            }
        }
    }

    /// The sparse table takes more than the whole bitmap would: become it.
    #[cold]
    fn densify(&mut self) {
        if let Words::Sparse(m) = &self.words {
            let mut v = vec![0; self.nr_bits.div_ceil(64) as usize];
            for (k, b) in m.words() {
                v[k as usize] = b;
            }
            self.words = Words::Dense(v);
        }
    }

    /// axmap_isset: block `b` is done (a block past the map never is).
    pub(crate) fn is_set(&self, b: u64) -> bool {
        b < self.nr_bits && self.word(b / 64) & (1 << (b % 64)) != 0
    }

    /// Mark block `b` if it is free (the common I/O of one block): whether it was.
    #[inline(always)]
    fn set_one(&mut self, b: u64) -> bool {
        if b >= self.nr_bits {
            return false;
        }
        let bit = 1u64 << (b % 64);
        self.or_word(b / 64, bit) & bit == 0
    }

    /// axmap_set_nr: mark up to `n` blocks from `b`, stopping at the first
    /// one already done; how many it marked. Blocks past the map in its
    /// last word count as marked (fio sets them there, and a reset clears
    /// them before a run can reach them again); a run into the word after
    /// a map of whole words marks the `ghost` word as fio does.
    pub(crate) fn set_nr(&mut self, b: u64, n: u64) -> u64 {
        let mut done = 0;
        while done < n {
            let bit = b + done;
            if bit >= self.nr_bits {
                if bit != self.nr_bits || !bit.is_multiple_of(64) {
                    return n;
                }
                return done + self.set_ghost(n - done);
            }
            let (w, shift) = (bit / 64, bit % 64);
            let span = (n - done).min(64 - shift);
            let mask = if span == 64 { !0 } else { ((1u64 << span) - 1) << shift };
            let overlap = self.word(w) & mask;
            // Only a contiguous run of free blocks, up to the first done one.
            let free = if overlap == 0 { span } else { (overlap >> shift).trailing_zeros() as u64 };
            if free == 0 {
                break;
            }
            let mask = if free == 64 { !0 } else { ((1u64 << free) - 1) << shift };
            self.or_word(w, mask);
            done += free;
            if free < span {
                break;
            }
        }
        done
    }

    /// The rest of a run, `n` blocks, into the word after the map (fio's
    /// axmap_set_fn on `map[map_size]`, up to that word's end; the run
    /// ends there, its next word past `nr_bits` refused): what it marked.
    #[cold]
    fn set_ghost(&mut self, n: u64) -> u64 {
        let span = n.min(64);
        let mask = if span == 64 { !0 } else { (1u64 << span) - 1 };
        let overlap = self.ghost & mask;
        let free = if overlap == 0 { span } else { overlap.trailing_zeros() as u64 };
        self.ghost |= if free == 64 { !0 } else { (1u64 << free) - 1 };
        free
    }

    /// The first free block at or after `from`, if any (axmap_find_first_free).
    fn first_free(&self, from: u64) -> Option<u64> {
        if from >= self.nr_bits {
            return None;
        }
        let found = match &self.words {
            Words::Dense(v) => {
                let w0 = from / 64;
                let first = !v[w0 as usize] & (!0u64 << (from % 64));
                if first != 0 {
                    Some(w0 * 64 + first.trailing_zeros() as u64)
                } else {
                    v[w0 as usize + 1..]
                        .iter()
                        .position(|&x| x != !0)
                        .map(|i| (w0 + 1 + i as u64) * 64 + (!v[(w0 + 1) as usize + i]).trailing_zeros() as u64)
                }
            }
            Words::Sparse(m) => {
                let w0 = from / 64;
                let first = !m.get(w0).unwrap_or(0) & (!0u64 << (from % 64));
                if first != 0 {
                    Some(w0 * 64 + first.trailing_zeros() as u64)
                } else {
                    // The words after it, up to the first not full (an
                    // untouched one is all free).
                    let mut w = w0 + 1;
                    loop {
                        match m.get(w) {
                            Some(x) if x == !0 => w += 1,
                            Some(x) => break Some(w * 64 + (!x).trailing_zeros() as u64),
                            None => break Some(w * 64),
                        }
                    }
                }
            }
        };
        // A free bit in the last word's unused tail is no block.
        found.filter(|&b| b < self.nr_bits)
    }

    /// axmap_next_free: the first free block after `b`, wrapping to the
    /// start; `None` when every block is done.
    pub(crate) fn next_free(&self, b: u64) -> Option<u64> {
        if b >= self.nr_bits {
            return None;
        }
        let next = if b + 1 == self.nr_bits { 0 } else { b + 1 };
        self.first_free(next).or_else(|| if next != 0 { self.first_free(0) } else { None })
    }

    /// axmap_reset: every block free again.
    pub(crate) fn reset(&mut self) {
        let ghost = self.ghost;
        *self = RandomMap::new(self.nr_bits);
        self.ghost = ghost;
    }
}

/// How a file's random pass keeps each block once: fio's random map, or its LFSR.
#[derive(Clone)]
pub(crate) enum Pass {
    Map(RandomMap),
    Lfsr(crate::fio::lfsr::Lfsr),
}

/// A job's random passes, one per file (made at the file's first random
/// draw, when its region is known).
#[derive(Clone)]
pub(crate) struct RandomMaps {
    files: Vec<Option<Pass>>,
    /// `random_generator=lfsr`: the LFSR's seed (fio's FIO_RAND_BLOCK_OFF seed).
    lfsr_seed: Option<u64>,
    /// fio's `rw_min_bs` (the smallest block size of any direction): the map's block.
    block: u64,
    /// The offset just drawn was a random one: its I/O marks the map (fio
    /// marks no I/O it placed sequentially, IO_U_F_BUSY_OK).
    pub(crate) mark: bool,
}

impl RandomMaps {
    pub(crate) fn new(files: usize, block: u64, lfsr_seed: Option<u64>) -> RandomMaps {
        RandomMaps { files: (0..files.max(1)).map(|_| None).collect(), lfsr_seed, block: block.max(1), mark: false }
    }

    /// File `di`'s pass over `min(region, file)` / the map's block blocks
    /// (filesetup.c's init_random_map); `None` for a file of no block.
    #[inline(always)]
    pub(crate) fn file(&mut self, di: usize, region: u64, real: u64) -> Option<&mut Pass> {
        if self.files[di].is_none() {
            let nums = region.min(real) / self.block;
            self.files[di] = Some(match self.lfsr_seed {
                Some(seed) => Pass::Lfsr(crate::fio::lfsr::Lfsr::new(nums, seed)?),
                None => Pass::Map(RandomMap::new(nums)),
            });
        }
        self.files[di].as_mut()
    }

    /// Every file's pass starts again (a new loop of the job).
    pub(crate) fn reset(&mut self) {
        for di in 0..self.files.len() {
            self.reset_file(di);
        }
    }

    /// File `di`'s pass begins again (fio_file_reset: its map cleared, its LFSR reseeded).
    pub(crate) fn reset_file(&mut self, di: usize) {
        match self.files.get_mut(di).and_then(|p| p.as_mut()) {
            Some(Pass::Map(m)) => m.reset(),
            Some(Pass::Lfsr(l)) => l.reset(),
            None => {}
        }
    }

    /// mark_random_map for an I/O of `bytes` at `rel` in a direction whose
    /// smallest block is `min_bs`, if it was a random draw: the blocks it
    /// covers up to the first one already done; the I/O's length, cut there.
    pub(crate) fn placed(&mut self, di: usize, rel: u64, bytes: u64, min_bs: u64) -> u64 {
        if !std::mem::take(&mut self.mark) {
            return bytes;
        }
        let Some(Pass::Map(map)) = self.files[di].as_mut() else { return bytes };
        let min_bs = min_bs.max(1);
        let (block, n) = if min_bs.is_power_of_two() {
            let shift = min_bs.trailing_zeros();
            (rel >> shift, (bytes + min_bs - 1) >> shift)
        } else {
            (rel / min_bs, bytes.div_ceil(min_bs))
        };
        if n == 1 && map.set_one(block) {
            return bytes;
        }
        let set = map.set_nr(block, n);
        if set > 0 && set * min_bs < bytes {
            set * min_bs
        } else {
            bytes
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both forms: a small map is dense, a large one starts sparse.
    fn maps(nr_bits: u64) -> Vec<RandomMap> {
        let mut sparse = RandomMap::new(nr_bits);
        sparse.words = Words::Sparse(WordTable::new());
        vec![RandomMap::new(nr_bits), sparse]
    }

    #[test]
    fn next_free_skips_done_blocks_and_wraps_as_axmap_next_free() {
        for mut m in maps(200) {
            assert_eq!(m.next_free(5), Some(6));
            m.set_nr(6, 70); // 6..76 done
            assert_eq!(m.next_free(5), Some(76));
            assert_eq!(m.next_free(199), Some(0), "past the end it wraps");
            m.set_nr(0, 6);
            m.set_nr(76, 124);
            assert_eq!(m.next_free(10), None, "all done");
            m.reset();
            assert!(!m.is_set(100));
        }
    }

    #[test]
    fn set_nr_marks_a_run_up_to_the_first_done_block() {
        for mut m in maps(300) {
            m.set_nr(70, 1);
            assert_eq!(m.set_nr(60, 20), 10, "60..70 marked, 70 was done");
            assert!(m.is_set(69) && !m.is_set(71));
            assert_eq!(m.set_nr(70, 4), 0);
            assert_eq!(m.set_nr(100, 150), 150, "across words");
            assert!(m.is_set(249) && !m.is_set(250));
            assert_eq!(m.set_nr(299, 5), 5, "blocks past the map count as marked");
        }
    }

    #[test]
    fn a_run_past_a_map_of_whole_words_marks_the_word_after_it_for_good() {
        // fio's axmap_set_nr writes map[1] of a one-word map; axmap_reset clears map[0] only.
        let mut m = RandomMap::new(64);
        assert_eq!(m.set_nr(62, 4), 4, "62, 63 and two past the end");
        m.reset();
        assert_eq!(m.set_nr(63, 4), 1, "the word after the map keeps 64 and 65");
        m.reset();
        assert_eq!(m.set_nr(63, 8), 1, "it stops at the first one set");
        // A map whose last word has room keeps no such word.
        let mut m = RandomMap::new(100);
        assert_eq!(m.set_nr(98, 4), 4);
        m.reset();
        assert_eq!(m.set_nr(98, 4), 4);
    }

    #[test]
    fn every_block_once_whatever_the_draws() {
        // fio's rule on any draw sequence: a pass touches every block once.
        for mut m in maps(1000) {
            let mut x: u64 = 7;
            let mut seen = vec![false; 1000];
            for _ in 0..1000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let b = (x >> 33) % 1000;
                let b = if m.is_set(b) { m.next_free(b).unwrap() } else { b };
                assert_eq!(m.set_nr(b, 1), 1);
                assert!(!seen[b as usize]);
                seen[b as usize] = true;
            }
            assert!(m.next_free(0).is_none());
        }
    }

    #[test]
    fn a_sparse_map_becomes_the_whole_bitmap_before_it_would_take_more() {
        let nr_bits = (DENSE_WORDS + 1) * 64;
        let mut m = RandomMap::new(nr_bits);
        assert!(matches!(m.words, Words::Sparse(_)));
        for w in 0..nr_bits / 64 {
            m.set_nr(w * 64, 1);
            if let Words::Sparse(s) = &m.words {
                assert!(s.bytes() <= nr_bits / 8 * 2, "a sparse table of {} bytes", s.bytes());
            }
        }
        assert!(matches!(m.words, Words::Dense(_)));
        assert!(m.is_set(64 * 5) && !m.is_set(64 * 5 + 1));
        assert_eq!(m.next_free(0), Some(1));
    }
}
