//! The event queue: a binary min-heap on (time, sequence), so events at equal
//! times run in the order they were scheduled.

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

pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    now_ns: u64,
    /// Events popped so far.
    pub processed: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(1024), seq: 0, now_ns: 0, processed: 0 }
    }
}

impl<E> EventQueue<E> {
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

    /// The next event, advancing the clock to its time.
    pub fn pop(&mut self) -> Option<E> {
        let e = self.heap.pop()?;
        self.now_ns = e.time_ns;
        self.processed += 1;
        Some(e.event)
    }

    pub fn peek_time_ns(&self) -> Option<u64> {
        self.heap.peek().map(|e| e.time_ns)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_at_equal_times_run_in_insertion_order() {
        let mut q = EventQueue::default();
        q.at(10, "b");
        q.at(5, "a");
        q.at(10, "c");
        q.at(10, "d");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec!["a", "b", "c", "d"]);
        assert_eq!(q.now_ns(), 10);
    }
}
