//! The event queue: a binary min-heap on (time, sequence) for one-off events,
//! plus one re-armable timer slot per CPU kept in a tournament tree, so a
//! CPU's rescheduled step replaces its old end instead of leaving a stale
//! event behind. Everything at equal times runs in the order it was
//! scheduled.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    time_ns: u64,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.time_ns == other.time_ns && self.seq == other.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap.
        (other.time_ns, other.seq).cmp(&(self.time_ns, self.seq))
    }
}

/// What `pop` returns: a one-off event, or a timer slot that fired.
#[derive(Debug, PartialEq, Eq)]
pub enum Popped<E> {
    Event(E),
    Timer(u32),
}

/// Timer slots in a tournament tree: each inner node holds its subtree's
/// earliest (key, slot), so a walk up compares keys without indirection.
struct Timers {
    leaves: usize,
    tree: Vec<((u64, u64), u32)>,
}

const NONE: (u64, u64) = (u64::MAX, u64::MAX);

impl Timers {
    fn new(n: usize) -> Timers {
        let leaves = n.max(2).next_power_of_two();
        let mut tree = vec![(NONE, 0u32); 2 * leaves];
        for i in 0..leaves {
            tree[leaves + i].1 = i as u32;
        }
        for node in (1..leaves).rev() {
            tree[node] = tree[2 * node];
        }
        Timers { leaves, tree }
    }

    fn set(&mut self, slot: u32, key: (u64, u64)) {
        let mut node = self.leaves + slot as usize;
        let tree = &mut self.tree[..2 * self.leaves];
        tree[node].0 = key;
        while node > 1 {
            let sibling = node ^ 1;
            let parent = node / 2;
            // Keys are unique (their sequence numbers differ) except empty slots.
            let winner = if tree[node].0 <= tree[sibling].0 { tree[node] } else { tree[sibling] };
            let old = tree[parent];
            tree[parent] = winner;
            // Above here nothing changes if the same other slot still wins.
            if old == winner && winner.1 != slot {
                break;
            }
            node = parent;
        }
    }

    fn min(&self) -> (u32, (u64, u64)) {
        let (key, slot) = self.tree[1];
        (slot, key)
    }
}

pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    timers: Timers,
    seq: u64,
    now_ns: u64,
    /// Events and timers popped so far.
    pub processed: u64,
}

impl<E> EventQueue<E> {
    /// A queue with `timer_slots` re-armable timers.
    pub fn new(timer_slots: usize) -> EventQueue<E> {
        EventQueue {
            heap: BinaryHeap::with_capacity(1024),
            timers: Timers::new(timer_slots),
            seq: 0,
            now_ns: 0,
            processed: 0,
        }
    }

    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }

    /// Schedule `event` at absolute time `time_ns` (never in the past).
    pub fn at(&mut self, time_ns: u64, event: E) {
        debug_assert!(time_ns >= self.now_ns, "event scheduled in the past");
        let time_ns = time_ns.max(self.now_ns);
        self.heap.push(Entry { time_ns, seq: self.seq, event });
        self.seq += 1;
    }

    /// Schedule `event` after `delay_ns`.
    pub fn after(&mut self, delay_ns: u64, event: E) {
        self.at(self.now_ns + delay_ns, event);
    }

    /// Arm timer `slot` to fire at `time_ns`, replacing whatever it held.
    pub fn set_timer(&mut self, slot: u32, time_ns: u64) {
        let time_ns = time_ns.max(self.now_ns);
        self.timers.set(slot, (time_ns, self.seq));
        self.seq += 1;
    }

    pub fn clear_timer(&mut self, slot: u32) {
        self.timers.set(slot, NONE);
    }

    /// The next event or timer, advancing the clock to its time. A timer that
    /// fires stays armed at its time: the caller re-arms or clears it.
    pub fn pop(&mut self) -> Option<Popped<E>> {
        let (slot, key) = self.timers.min();
        let heap_key = self.heap.peek().map(|e| (e.time_ns, e.seq));
        match heap_key {
            Some(h) if h < key => {
                let e = self.heap.pop().unwrap();
                self.now_ns = e.time_ns;
                self.processed += 1;
                Some(Popped::Event(e.event))
            }
            _ if key != NONE => {
                self.now_ns = key.0;
                self.processed += 1;
                Some(Popped::Timer(slot))
            }
            _ => None,
        }
    }

    /// When the next event or timer is due.
    pub fn peek_time_ns(&self) -> Option<u64> {
        let t = self.timers.min().1;
        let h = self.heap.peek().map(|e| (e.time_ns, e.seq));
        match h {
            Some(h) if h < t => Some(h.0),
            _ if t != NONE => Some(t.0),
            _ => None,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty() && self.timers.min().1 == NONE
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
            if x % 3 == 0 {
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
