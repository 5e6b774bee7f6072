//! The scheduler side of a CPU: what runs, for how long, wake-ups, and
//! the kworkers of kblockd.

pub(crate) mod core;
pub(crate) mod cpumask;
pub(crate) mod hotplug;
pub(crate) mod switch;
pub(crate) mod task;
pub(crate) mod workqueue;
