//! Typed ids: each kind of object the model indexes (CPUs, devices, their
//! hardware queues, requests, IRQs, jobs) has its own id type, so that one
//! cannot be used for another. A `Vec` of such objects is indexed by its id
//! directly (`self.cpus[cpu]`); "no object" is an `Option`, never a
//! sentinel value.

use std::collections::VecDeque;
use std::fmt;
use std::ops::{Index, IndexMut};

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

        impl<T> Index<$name> for Vec<T> {
            type Output = T;
            #[inline(always)]
            fn index(&self, id: $name) -> &T {
                &self[id.idx()]
            }
        }

        impl<T> IndexMut<$name> for Vec<T> {
            #[inline(always)]
            fn index_mut(&mut self, id: $name) -> &mut T {
                &mut self[id.idx()]
            }
        }

        impl<T> Index<$name> for [T] {
            type Output = T;
            #[inline(always)]
            fn index(&self, id: $name) -> &T {
                &self[id.idx()]
            }
        }

        impl<T> IndexMut<$name> for [T] {
            #[inline(always)]
            fn index_mut(&mut self, id: $name) -> &mut T {
                &mut self[id.idx()]
            }
        }

        impl<T> Index<$name> for VecDeque<T> {
            type Output = T;
            #[inline(always)]
            fn index(&self, id: $name) -> &T {
                &self[id.idx()]
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
