//! The scheduler side of a CPU: what runs, for how long, and wake-ups.

pub(crate) mod core;
pub(crate) mod cpumask;
pub(crate) mod hotplug;
