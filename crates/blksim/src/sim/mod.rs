//! The simulation engine: integer-nanosecond virtual time, an event queue
//! ordered by (time, insertion sequence), and seeded random streams.

pub(crate) mod queue;
pub(crate) mod rng;

pub(crate) use queue::{EventQueue, Popped};
pub(crate) use rng::Rng;
