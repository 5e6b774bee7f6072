//! The simulation engine: integer-nanosecond virtual time, an event queue
//! ordered by (time, insertion sequence), and seeded random streams.

pub(crate) mod queue;
pub(crate) mod rng;

pub(crate) use queue::{EventQueue, Popped};
pub(crate) use rng::Rng;

/// Ask the CPU to start loading `items` into cache (a hint: no effect on results).
pub(crate) fn prefetch_slice<T>(items: &[T]) {
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
