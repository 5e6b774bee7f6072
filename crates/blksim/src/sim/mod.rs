//! The simulation engine: integer-nanosecond virtual time, an event queue
//! ordered by (time, insertion sequence), and seeded random streams.

pub mod queue;
pub mod rng;

pub use queue::{EventQueue, Popped};
pub use rng::Rng;

/// Nanoseconds in one second.
pub const NS_PER_SEC: u64 = 1_000_000_000;
