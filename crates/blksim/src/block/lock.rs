//! A queued spinlock (qspinlock): one owner, waiters in arrival order who
//! spin (busy, system time) until the owner hands the lock over; a hand-off
//! costs the lock's cache line moving to the next owner's core.

use crate::ids::JobId;
use std::collections::VecDeque;

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
    /// The job holding it.
    pub owner: Option<JobId>,
    /// Jobs spinning for it, with when they started, oldest first.
    pub waiters: VecDeque<(JobId, u64)>,
    /// When the current owner got it.
    pub held_since_ns: u64,
    pub stats: LockStats,
}

impl SpinLock {
    /// `spin_lock`: take it (`true`) or queue behind the owner (`false`).
    pub(crate) fn acquire(&mut self, job: JobId, now: u64) -> bool {
        self.stats.acquisitions += 1;
        if self.owner.is_none() {
            self.owner = Some(job);
            self.held_since_ns = now;
            true
        } else {
            self.stats.contended += 1;
            self.waiters.push_back((job, now));
            false
        }
    }

    /// `spin_trylock`: take it only if free.
    #[cfg(test)]
    pub(crate) fn try_acquire(&mut self, job: JobId, now: u64) -> bool {
        if self.owner.is_none() {
            self.stats.acquisitions += 1;
            self.owner = Some(job);
            self.held_since_ns = now;
            true
        } else {
            false
        }
    }

    /// `spin_unlock`: the next waiter (if any) becomes the owner at `granted_ns`
    /// (after the hand-off); returns it.
    pub(crate) fn release(&mut self, now: u64, granted_ns: impl FnOnce(JobId) -> u64) -> Option<JobId> {
        self.stats.hold_ns += now - self.held_since_ns;
        match self.waiters.pop_front() {
            Some((next, since)) => {
                let at = granted_ns(next);
                self.stats.wait_ns += at - since;
                self.owner = Some(next);
                self.held_since_ns = at;
                Some(next)
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
        let mut l = SpinLock::default();
        assert!(l.acquire(JobId(1), 0));
        assert!(!l.acquire(JobId(2), 10));
        assert!(!l.acquire(JobId(3), 20));
        assert!(!l.try_acquire(JobId(4), 25));
        assert_eq!(l.release(100, |_| 150), Some(JobId(2)));
        assert_eq!(l.release(200, |_| 260), Some(JobId(3)));
        assert_eq!(l.release(300, |_| 0), None);
        assert_eq!(
            l.stats,
            LockStats { acquisitions: 3, contended: 2, wait_ns: (150 - 10) + (260 - 20), hold_ns: 100 + 50 + 40 }
        );
    }
}
