//! A queued spinlock (qspinlock): one owner, waiters in arrival order who
//! spin (busy, system time) until the owner hands the lock over; a hand-off
//! costs the lock's cache line moving to the next owner's core. Lockers are
//! tasks or a CPU's kworker (`Actor`).

use crate::ids::{CpuId, JobId};
use std::collections::VecDeque;

/// Who runs kernel code that takes a lock: a fio job's task, or the kworker
/// of a CPU (running a work item such as kblockd's queue run).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Actor {
    Task(JobId),
    Kworker(CpuId),
}

/// Lock statistics, as `perf lock contention` sees them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct LockStats {
    pub acquisitions: u64,
    /// Acquisitions that found the lock held and had to wait.
    pub contended: u64,
    /// Time spent waiting (spinning), summed over waiters, ns.
    pub wait_ns: u64,
    /// Time the lock was held, ns.
    pub hold_ns: u64,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct SpinLock {
    /// Who holds it.
    pub owner: Option<Actor>,
    /// Lockers spinning for it, with when they started, oldest first.
    pub waiters: VecDeque<(Actor, u64)>,
    /// When the current owner got it.
    pub held_since_ns: u64,
    /// The CPU of the last owner's section: the data the lock protects is in its cache.
    pub data_cpu: Option<CpuId>,
    pub stats: LockStats,
}

impl SpinLock {
    /// `spin_lock`: take it (`true`) or queue behind the owner (`false`).
    pub(crate) fn acquire(&mut self, who: Actor, now: u64) -> bool {
        self.stats.acquisitions += 1;
        if self.owner.is_none() {
            self.owner = Some(who);
            self.held_since_ns = now;
            true
        } else {
            self.stats.contended += 1;
            self.waiters.push_back((who, now));
            false
        }
    }

    /// `spin_trylock`: take it only if free.
    pub(crate) fn try_acquire(&mut self, who: Actor, now: u64) -> bool {
        if self.owner.is_none() {
            self.stats.acquisitions += 1;
            self.owner = Some(who);
            self.held_since_ns = now;
            true
        } else {
            false
        }
    }

    /// `spin_unlock`: the next waiter (if any) becomes the owner at
    /// `now + handoff_ns(next)` (the hand-off: the line moves to it);
    /// returns it and the hand-off time.
    pub(crate) fn release(&mut self, now: u64, handoff_ns: impl FnOnce(Actor) -> u64) -> Option<(Actor, u64)> {
        self.stats.hold_ns += now - self.held_since_ns;
        match self.waiters.pop_front() {
            Some((next, since)) => {
                let ns = handoff_ns(next);
                let at = now + ns;
                self.stats.wait_ns += at - since;
                self.owner = Some(next);
                self.held_since_ns = at;
                Some((next, ns))
            }
            None => {
                self.owner = None;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiters_get_the_lock_in_arrival_order_and_waits_are_counted() {
        let t = |j| Actor::Task(JobId(j));
        let mut l = SpinLock::default();
        assert!(l.acquire(t(1), 0));
        assert!(!l.acquire(t(2), 10));
        assert!(!l.acquire(Actor::Kworker(CpuId(3)), 20));
        assert!(!l.try_acquire(t(4), 25));
        assert_eq!(l.release(100, |_| 50), Some((t(2), 50)));
        assert_eq!(l.release(200, |_| 60), Some((Actor::Kworker(CpuId(3)), 60)));
        assert_eq!(l.release(300, |_| 0), None);
        assert_eq!(
            l.stats,
            LockStats { acquisitions: 3, contended: 2, wait_ns: (150 - 10) + (260 - 20), hold_ns: 100 + 50 + 40 }
        );
    }
}
