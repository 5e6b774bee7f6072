//! The event queue: a calendar queue on (time, sequence). Near-future
//! entries go into fixed-width time buckets (a ring one window long), far
//! ones into a binary heap that refills the ring as the window moves; the
//! bucket being drained is sorted once (it is short). Each CPU has one re-armable timer
//! slot: re-arming pushes a fresh entry and bumps the slot's generation, and
//! an entry of an older generation is dropped when it comes out. Everything
//! at equal times runs in the order it was scheduled (timers included).
//!
//! A bucket's entries share their time's high bits (the bucket number), so
//! an entry in the ring keeps one word: the time's offset in its bucket
//! above the sequence's low `SEQ_BITS` bits. That orders a bucket exactly
//! while fewer than 2^57 events are scheduled (years of simulation at any
//! speed this model reaches); the far heap keeps whole times.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What an entry carries: an event, or a timer slot and its generation.
#[derive(Clone)]
enum Item<E> {
    Event(E),
    Timer { slot: u32, gen: u32 },
}

/// An entry in the ring or the bucket being drained.
#[derive(Clone)]
struct Entry<E> {
    /// (time mod bucket width) << SEQ_BITS | sequence mod 2^SEQ_BITS: one
    /// comparison orders a bucket by time, then sequence.
    key: u64,
    item: Item<E>,
}

/// Bits of the sequence in a ring entry's key.
const SEQ_BITS: u32 = 64 - SHIFT;
const SEQ_MASK: u64 = (1 << SEQ_BITS) - 1;

/// A ring entry's key for `time_ns` and sequence `seq`.
#[inline(always)]
fn bucket_key(time_ns: u64, seq: u64) -> u64 {
    (time_ns & ((1 << SHIFT) - 1)) << SEQ_BITS | (seq & SEQ_MASK)
}

/// A timer slot's word with its generation moved on (wrapping) and not armed.
#[inline(always)]
fn next_generation(word: u32) -> u32 {
    (word & !1).wrapping_add(2)
}

/// Far entries, earliest first out of the (max-)heap: time << 64 | sequence.
#[derive(Clone)]
struct Far<E> {
    key: u128,
    item: Item<E>,
}

impl<E> Far<E> {
    fn time_ns(&self) -> u64 {
        (self.key >> 64) as u64
    }

    /// Into the ring (or the bucket being drained).
    fn entry(self) -> Entry<E> {
        Entry { key: bucket_key(self.time_ns(), self.key as u64), item: self.item }
    }
}

impl<E> PartialEq for Far<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Far<E> {}
impl<E> PartialOrd for Far<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Far<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// What `pop` returns: a one-off event, or a timer slot that fired.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Popped<E> {
    Event(E),
    Timer(u32),
}

/// Bucket width, 2^SHIFT ns, and ring length: the window is 262 µs (a longer
/// ring spreads writes over more memory and misses more in L2 than it saves).
const SHIFT: u32 = 7;
const BUCKETS: usize = 2048;

#[derive(Clone)]
pub(crate) struct EventQueue<E> {
    /// Entries of the current bucket, sorted latest first so the next one
    /// is popped off the end.
    active: Vec<Entry<E>>,
    /// The current bucket's number (time >> SHIFT).
    cur: u64,
    /// Buckets cur+1 .. cur+BUCKETS-1, unsorted, at index bucket % BUCKETS.
    /// A fixed array, so that indexing it by `bucket % BUCKETS` needs no bounds check.
    ring: Box<[Vec<Entry<E>>; BUCKETS]>,
    /// One bit per non-empty ring bucket.
    occupied: [u64; BUCKETS / 64],
    /// Entries beyond the window.
    far: BinaryHeap<Far<E>>,
    /// Per timer slot: its current generation and whether it is armed, as
    /// one word (generation << 1 | armed), so a pop checks an entry with one load.
    timers: Vec<u32>,
    seq: u64,
    now_ns: u64,
    /// Events and timers popped so far.
    pub processed: u64,
}

impl<E> EventQueue<E> {
    /// A queue with `timer_slots` re-armable timers.
    pub(crate) fn new(timer_slots: usize) -> EventQueue<E> {
        EventQueue {
            active: Vec::with_capacity(64),
            cur: 0,
            ring: Box::new(std::array::from_fn(|_| Vec::new())),
            occupied: [0; BUCKETS / 64],
            far: BinaryHeap::new(),
            timers: vec![0; timer_slots],
            seq: 0,
            now_ns: 0,
            processed: 0,
        }
    }

    pub(crate) fn now_ns(&self) -> u64 {
        self.now_ns
    }

    /// Schedule `event` at absolute time `time_ns` (never in the past).
    #[inline(always)]
    pub(crate) fn at(&mut self, time_ns: u64, event: E) {
        debug_assert!(time_ns >= self.now_ns, "event scheduled in the past");
        self.push(time_ns.max(self.now_ns), Item::Event(event));
    }

    /// Schedule `event` after `delay_ns`.
    pub(crate) fn after(&mut self, delay_ns: u64, event: E) {
        self.at(self.now_ns + delay_ns, event);
    }

    /// Arm timer `slot` to fire at `time_ns`, replacing whatever it held.
    #[inline(always)]
    pub(crate) fn set_timer(&mut self, slot: u32, time_ns: u64) {
        let s = slot as usize;
        let word = next_generation(self.timers[s]) | 1;
        self.timers[s] = word;
        self.push(time_ns.max(self.now_ns), Item::Timer { slot, gen: word >> 1 });
    }

    /// Is a timer entry of `slot` and generation `gen` the slot's armed one (not stale)?
    #[inline(always)]
    fn timer_live(&self, slot: u32, gen: u32) -> bool {
        self.timers[slot as usize] == gen << 1 | 1
    }

    pub(crate) fn clear_timer(&mut self, slot: u32) {
        let s = slot as usize;
        self.timers[s] = next_generation(self.timers[s]);
    }

    #[inline(always)]
    fn push(&mut self, time_ns: u64, item: Item<E>) {
        let seq = self.seq;
        self.seq += 1;
        let b = time_ns >> SHIFT;
        if b <= self.cur {
            // Into the bucket being drained, in order (it is short). Never
            // before it: nothing is scheduled before the time just popped.
            debug_assert_eq!(b, self.cur);
            let key = bucket_key(time_ns, seq);
            let at = self.active.partition_point(|x| x.key > key);
            self.active.insert(at, Entry { key, item });
        } else if b < self.cur + BUCKETS as u64 {
            self.place(b, Entry { key: bucket_key(time_ns, seq), item });
        } else {
            self.far.push(Far { key: (time_ns as u128) << 64 | seq as u128, item });
        }
    }

    fn place(&mut self, b: u64, e: Entry<E>) {
        let i = (b % BUCKETS as u64) as usize;
        self.ring[i].push(e);
        self.occupied[i / 64] |= 1 << (i % 64);
    }

    /// The next non-empty ring bucket after the current one, if any.
    fn next_occupied(&self) -> Option<u64> {
        let start = ((self.cur + 1) % BUCKETS as u64) as usize;
        let words = BUCKETS / 64;
        for k in 0..=words {
            let w = (start / 64 + k) % words;
            let mut bits = self.occupied[w];
            if k == 0 {
                bits &= !0u64 << (start % 64);
            } else if k == words {
                bits &= !(!0u64 << (start % 64));
            }
            if bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                let ahead = (i + BUCKETS - start) % BUCKETS;
                return Some(self.cur + 1 + ahead as u64);
            }
        }
        None
    }

    /// The time of entry `e` of the bucket being drained: the bucket's start plus its offset.
    #[inline(always)]
    fn time_of(&self, e: &Entry<E>) -> u64 {
        self.cur << SHIFT | e.key >> SEQ_BITS
    }

    /// Move to the next bucket with entries; false when there are none.
    fn advance(&mut self) -> bool {
        let ring_next = self.next_occupied();
        let far_next = self.far.peek().map(|f| f.time_ns() >> SHIFT);
        let next = match (ring_next, far_next) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => return false,
        };
        self.cur = next;
        let i = (next % BUCKETS as u64) as usize;
        std::mem::swap(&mut self.active, &mut self.ring[i]);
        self.occupied[i / 64] &= !(1 << (i % 64));
        // The window moved: far entries now inside it come in.
        let end = self.cur + BUCKETS as u64;
        while self.far.peek().is_some_and(|f| f.time_ns() >> SHIFT < end) {
            let f = self.far.pop().unwrap();
            let b = f.time_ns() >> SHIFT;
            if b == self.cur {
                self.active.push(f.entry());
            } else {
                self.place(b, f.entry());
            }
        }
        self.active.sort_unstable_by_key(|e| std::cmp::Reverse(e.key));
        true
    }

    #[cfg(test)]
    fn live(&self, e: &Entry<E>) -> bool {
        match e.item {
            Item::Event(_) => true,
            Item::Timer { slot, gen } => self.timer_live(slot, gen),
        }
    }

    /// Drop stale timer entries off the front; false when the queue is empty.
    #[cfg(test)]
    fn settle(&mut self) -> bool {
        loop {
            match self.active.last() {
                Some(e) if self.live(e) => return true,
                Some(_) => {
                    self.active.pop();
                }
                None => {
                    if !self.advance() {
                        return false;
                    }
                }
            }
        }
    }

    /// The next event or timer, advancing the clock to its time. A timer that
    /// fires is disarmed: the caller re-arms it if it wants it again.
    pub(crate) fn pop(&mut self) -> Option<Popped<E>> {
        loop {
            let Some(e) = self.active.pop() else {
                if !self.advance() {
                    return None;
                }
                continue;
            };
            let time_ns = self.time_of(&e);
            let popped = match e.item {
                Item::Event(ev) => Popped::Event(ev),
                Item::Timer { slot, gen } => {
                    let s = slot as usize;
                    if !self.timer_live(slot, gen) {
                        continue; // stale: the slot was re-armed or cleared since
                    }
                    self.timers[s] &= !1;
                    Popped::Timer(slot)
                }
            };
            self.now_ns = time_ns;
            self.processed += 1;
            return Some(popped);
        }
    }

    /// Anything left to pop (or a stale timer entry that pop will skip), without moving on.
    pub(crate) fn has_entries(&self) -> bool {
        !self.active.is_empty() || self.occupied.iter().any(|&w| w != 0) || !self.far.is_empty()
    }

    /// When the next event or timer is due (tests step the model with it).
    #[cfg(test)]
    pub(crate) fn peek_time_ns(&mut self) -> Option<u64> {
        self.settle().then(|| self.time_of(self.active.last().unwrap()))
    }

    /// Nothing left to pop.
    #[cfg(test)]
    pub(crate) fn is_empty(&mut self) -> bool {
        !self.settle()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_at_equal_times_run_in_insertion_order() {
        let mut q = EventQueue::new(0);
        q.at(10, "b");
        q.at(5, "a");
        q.at(10, "c");
        q.at(10, "d");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        let want: Vec<_> = ["a", "b", "c", "d"].into_iter().map(Popped::Event).collect();
        assert_eq!(order, want);
        assert_eq!(q.now_ns(), 10);
    }

    #[test]
    fn interleaved_pushes_and_pops_come_out_in_time_then_insertion_order() {
        let mut q = EventQueue::new(0);
        let mut x: u64 = 12345;
        let mut pending = Vec::new();
        let mut seen = Vec::new();
        for i in 0..5000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let t = q.now_ns() + (x >> 33) % 50; // many equal times
            q.at(t, i);
            pending.push((t, i));
            if x.is_multiple_of(3) {
                if let Some(Popped::Event(e)) = q.pop() {
                    seen.push((q.now_ns(), e));
                }
            }
        }
        while let Some(Popped::Event(e)) = q.pop() {
            seen.push((q.now_ns(), e));
        }
        assert_eq!(seen.len(), pending.len());
        // Time never goes back, and equal times come out in insertion order.
        for w in seen.windows(2) {
            assert!(w[0].0 < w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1), "{:?}", w);
        }
        // Each event comes out at the time it was scheduled for.
        let mut by_event = pending.clone();
        by_event.sort_by_key(|p| p.1);
        let mut got = seen.clone();
        got.sort_by_key(|p| p.1);
        assert_eq!(got, by_event);
    }

    /// Against a plain ordered map: delays from 0 to several windows (ring,
    /// current bucket and far heap), timers re-armed and cleared at random.
    #[test]
    fn matches_an_ordered_map_across_buckets_windows_and_timers() {
        use std::collections::BTreeMap;
        let mut q = EventQueue::new(4);
        let mut reference: BTreeMap<(u64, u64), Popped<u64>> = BTreeMap::new();
        let mut timer_key: [Option<(u64, u64)>; 4] = [None; 4];
        let (mut x, mut seq, mut now) = (99u64, 0u64, 0u64);
        let mut rand = |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for i in 0..20_000u64 {
            match rand(10) {
                0..=4 => {
                    let delay = match rand(4) {
                        0 => rand(1 << SHIFT),
                        1 => rand(64 << SHIFT),
                        2 => rand((2 * BUCKETS as u64) << SHIFT),
                        _ => rand((5 * BUCKETS as u64) << SHIFT),
                    };
                    q.at(now + delay, i);
                    reference.insert((now + delay, seq), Popped::Event(i));
                    seq += 1;
                }
                5..=6 => {
                    let slot = rand(4) as u32;
                    let t = now + rand(3 << SHIFT);
                    q.set_timer(slot, t);
                    if let Some(k) = timer_key[slot as usize].take() {
                        reference.remove(&k);
                    }
                    reference.insert((t, seq), Popped::Timer(slot));
                    timer_key[slot as usize] = Some((t, seq));
                    seq += 1;
                }
                7 => {
                    let slot = rand(4) as u32;
                    q.clear_timer(slot);
                    if let Some(k) = timer_key[slot as usize].take() {
                        reference.remove(&k);
                    }
                }
                _ => {
                    let want = reference.pop_first();
                    let got = q.pop();
                    match want {
                        None => assert_eq!(got, None),
                        Some(((t, _), p)) => {
                            if let Popped::Timer(slot) = p {
                                timer_key[slot as usize] = None;
                            }
                            assert_eq!(got, Some(p), "at step {i}");
                            assert_eq!(q.now_ns(), t);
                            now = t;
                        }
                    }
                }
            }
        }
        while let Some(((t, _), p)) = reference.pop_first() {
            assert_eq!(q.pop(), Some(p));
            assert_eq!(q.now_ns(), t);
        }
        assert_eq!(q.pop(), None);
        assert!(q.is_empty());
    }

    #[test]
    fn a_rearmed_timer_fires_once_at_its_new_time_in_order_with_events() {
        let mut q = EventQueue::new(3);
        q.set_timer(1, 50);
        q.at(20, "e1");
        q.set_timer(1, 20); // replaces 50; scheduled after e1, so runs after it
        q.set_timer(2, 10);
        q.set_timer(0, 30);
        q.clear_timer(0);
        let mut order = Vec::new();
        while let Some(p) = q.pop() {
            if let Popped::Timer(slot) = p {
                q.clear_timer(slot);
            }
            order.push((q.now_ns(), p));
        }
        assert_eq!(order, vec![(10, Popped::Timer(2)), (20, Popped::Event("e1")), (20, Popped::Timer(1))]);
        assert!(q.is_empty());
    }
}
