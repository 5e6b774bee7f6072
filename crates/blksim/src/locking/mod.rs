//! Kernel locking primitives: the queued spinlock (`qspinlock.rs`).

pub(crate) mod qspinlock;
