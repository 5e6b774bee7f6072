//! Kernel locking primitives: the queued spinlock (`qspinlock.rs`) and
//! its hand-off to a spinning locker (`handoff.rs`).

pub(crate) mod handoff;
pub(crate) mod qspinlock;
