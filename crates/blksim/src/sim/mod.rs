//! The simulation engine: integer-nanosecond virtual time, an event queue
//! ordered by (time, insertion sequence), and seeded random streams.

pub mod queue;
pub mod rng;

pub use queue::{EventQueue, Popped};
pub use rng::Rng;

/// Nanoseconds in one second.
pub const NS_PER_SEC: u64 = 1_000_000_000;

/// Ask the CPU to start loading `items` into cache (a hint: no effect on results).
pub fn prefetch_slice<T>(items: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let (start, len) = (items.as_ptr() as *const i8, std::mem::size_of_val(items));
        for off in (0..len).step_by(64) {
            // SAFETY: a prefetch never faults and does not change memory; the
            // addresses lie inside `items`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(start.add(off)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = items;
}
