//! Typed ids: each kind of object the model indexes (CPUs, devices, their
//! hardware queues, requests, IRQs, jobs) has its own id type, and a
//! collection of such objects is an `IdVec` indexed by its own id only
//! (`self.jobs[cpu]` does not compile); "no object" is an `Option`, never
//! a sentinel value.

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut, Index, IndexMut};

/// An id type: an index into its own `IdVec`s.
pub(crate) trait Id: Copy {
    fn idx(self) -> usize;
    fn of(i: usize) -> Self;
}

macro_rules! ids {
    ($($(#[doc = $doc:literal])* $name:ident($int:ty);)*) => {$(
        $(#[doc = $doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(transparent)]
        pub(crate) struct $name(pub(crate) $int);

        impl $name {
            /// The index it stands for.
            #[inline(always)]
            pub(crate) fn idx(self) -> usize {
                self.0 as usize
            }

            /// The id of index `i`.
            #[inline(always)]
            pub(crate) fn of(i: usize) -> $name {
                $name(i as $int)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl Id for $name {
            #[inline(always)]
            fn idx(self) -> usize {
                $name::idx(self)
            }

            #[inline(always)]
            fn of(i: usize) -> $name {
                $name::of(i)
            }
        }
    )*};
}

ids! {
    /// A logical CPU, numbered as Linux numbers them.
    CpuId(u32);
    /// A device of the machine (block device or accelerator), in profile order.
    DevId(u16);
    /// A hardware queue of a device (`hctx->queue_num`; a DSA work queue).
    HctxId(u16);
    /// A request in the request pool.
    ReqId(u32);
    /// A device IRQ (`/proc/interrupts` shows it as 128 + its index).
    IrqId(u32);
    /// A fio job (a clone of a `numjobs` job is a job of its own).
    JobId(u32);
    /// A DSA client of the workload.
    DsaClientId(u32);
}

/// The CPUs `0..n`.
pub(crate) fn cpus(n: usize) -> impl Iterator<Item = CpuId> {
    (0..n).map(CpuId::of)
}

/// A vector of objects indexed by their id type `I` only. It reads as a
/// slice (`len`, `iter`, `is_empty`, positions by `usize`), and grows by
/// `push`, which returns the new object's id.
pub(crate) struct IdVec<I, T> {
    v: Vec<T>,
    _id: PhantomData<fn(I) -> I>,
}

impl<I: Id, T> IdVec<I, T> {
    pub(crate) fn new() -> Self {
        IdVec { v: Vec::new(), _id: PhantomData }
    }

    /// Add `t`; its id.
    pub(crate) fn push(&mut self, t: T) -> I {
        self.v.push(t);
        I::of(self.v.len() - 1)
    }

    /// The ids, in order.
    pub(crate) fn ids(&self) -> impl Iterator<Item = I> {
        (0..self.v.len()).map(I::of)
    }
}

impl<I, T> From<Vec<T>> for IdVec<I, T> {
    fn from(v: Vec<T>) -> Self {
        IdVec { v, _id: PhantomData }
    }
}

impl<I, T> FromIterator<T> for IdVec<I, T> {
    fn from_iter<It: IntoIterator<Item = T>>(it: It) -> Self {
        IdVec { v: it.into_iter().collect(), _id: PhantomData }
    }
}

impl<I, T: Clone> Clone for IdVec<I, T> {
    fn clone(&self) -> Self {
        IdVec { v: self.v.clone(), _id: PhantomData }
    }
}

impl<I, T: fmt::Debug> fmt::Debug for IdVec<I, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.v.fmt(f)
    }
}

impl<I, T: PartialEq> PartialEq for IdVec<I, T> {
    fn eq(&self, other: &Self) -> bool {
        self.v == other.v
    }
}

impl<I, T> Default for IdVec<I, T> {
    fn default() -> Self {
        IdVec { v: Vec::new(), _id: PhantomData }
    }
}

impl<I, T> Deref for IdVec<I, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.v
    }
}

impl<I, T> DerefMut for IdVec<I, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.v
    }
}

// Indexing by id is checked where it can be afforded and not where it
// cannot. Every id the model holds is in range of its own collections by
// construction: made from that collection's positions (`push`, `ids`), or
// read from input and checked against the machine there (a CPU list, a
// device name, an IRQ number are refused when they name nothing). Debug
// builds, which `cargo test` and the swarm run (the dev profile keeps debug
// assertions, and `architecture.rs` checks that it does), check every index
// and panic on one out of range, as slice indexing would. Release builds do
// not check: the bounds checks were a tenth of a run's instructions (about
// 650 per simulated I/O of the bench job; docs/speed-history.md,
// 2026-12-07), the largest single cost left in the event loop.

impl<I: Id, T> Index<I> for IdVec<I, T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, id: I) -> &T {
        let i = id.idx();
        debug_assert!(i < self.v.len(), "id {i} out of range of a collection of {}", self.v.len());
        // SAFETY: ids are in range by construction (above); debug builds check it.
        unsafe { self.v.get_unchecked(i) }
    }
}

impl<I: Id, T> IndexMut<I> for IdVec<I, T> {
    #[inline(always)]
    fn index_mut(&mut self, id: I) -> &mut T {
        let i = id.idx();
        debug_assert!(i < self.v.len(), "id {i} out of range of a collection of {}", self.v.len());
        // SAFETY: ids are in range by construction (above); debug builds check it.
        unsafe { self.v.get_unchecked_mut(i) }
    }
}

impl<'a, I, T> IntoIterator for &'a IdVec<I, T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.v.iter()
    }
}

impl<'a, I, T> IntoIterator for &'a mut IdVec<I, T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.v.iter_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_indexes_what_its_collection_holds() {
        let mut v: IdVec<CpuId, u32> = IdVec::new();
        let a = v.push(7);
        let b = v.push(9);
        v[b] += 1;
        assert_eq!((v[a], v[b]), (7, 10));
        assert_eq!(v.ids().collect::<Vec<_>>(), vec![a, b]);
    }

    #[test]
    #[should_panic(expected = "id 2 out of range of a collection of 2")]
    fn an_id_out_of_range_panics_in_the_builds_tests_run() {
        let v: IdVec<CpuId, u32> = IdVec::from(vec![1, 2]);
        let _ = v[CpuId(2)];
    }
}
