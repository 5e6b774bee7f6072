//! The local APIC's interrupt vectors: the range handed to device IRQs and
//! the system vectors blksim delivers (x86's irq_vectors.h numbering).

/// First vector handed to device IRQs on each CPU.
pub(crate) const FIRST_DEVICE_VECTOR: u8 = 0x21;

/// Last device vector (0xea: 0xeb and up are system vectors).
pub(crate) const LAST_DEVICE_VECTOR: u8 = 0xea;

/// CALL_FUNCTION_SINGLE_VECTOR.
pub(crate) const CALL_FUNCTION_SINGLE_VECTOR: u8 = 0xfb;

/// LOCAL_TIMER_VECTOR.
pub(crate) const LOCAL_TIMER_VECTOR: u8 = 0xec;

/// POSTED_MSI_NOTIFICATION_VECTOR.
pub(crate) const POSTED_MSI_NOTIFICATION_VECTOR: u8 = 0xeb;

/// A set of vectors, one bit each: the local APIC's IRR, a posted-interrupt
/// descriptor's PIR, the vectors a notification handler harvested.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct VectorSet([u64; 4]);

impl VectorSet {
    /// Is `vector` in the set?
    #[inline(always)]
    pub(crate) fn contains(&self, vector: u8) -> bool {
        self.0[(vector >> 6) as usize] >> (vector & 63) & 1 == 1
    }

    /// Add `vector`; returns whether it was already there (a merged request).
    #[inline(always)]
    pub(crate) fn insert(&mut self, vector: u8) -> bool {
        let was = self.contains(vector);
        self.0[(vector >> 6) as usize] |= 1 << (vector & 63);
        was
    }

    /// Take `vector` out; returns whether it was there.
    #[inline(always)]
    pub(crate) fn remove(&mut self, vector: u8) -> bool {
        let was = self.contains(vector);
        self.0[(vector >> 6) as usize] &= !(1 << (vector & 63));
        was
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0 == [0; 4]
    }

    /// How many vectors are in the set.
    pub(crate) fn len(&self) -> u64 {
        self.0.iter().map(|w| w.count_ones() as u64).sum()
    }

    /// The highest vector (the one the APIC delivers first).
    #[inline(always)]
    pub(crate) fn highest(&self) -> Option<u8> {
        (0..4).rev().find(|&w| self.0[w] != 0).map(|w| (w as u32 * 64 + 63 - self.0[w].leading_zeros()) as u8)
    }

    /// The lowest vector (the order `handle_pending_pir` runs them in).
    #[inline(always)]
    pub(crate) fn lowest(&self) -> Option<u8> {
        self.0.iter().enumerate().find(|(_, w)| **w != 0).map(|(i, w)| (i as u32 * 64 + w.trailing_zeros()) as u8)
    }

    /// Take the highest vector out.
    #[inline(always)]
    pub(crate) fn take_highest(&mut self) -> Option<u8> {
        if self.is_empty() {
            return None;
        }
        let v = self.highest()?;
        self.remove(v);
        Some(v)
    }

    /// Move every vector of `other` into this set (`other` ends empty).
    pub(crate) fn take_from(&mut self, other: &mut VectorSet) {
        for (dst, src) in self.0.iter_mut().zip(other.0.iter_mut()) {
            *dst |= std::mem::take(src);
        }
    }

    /// The vectors in the set, lowest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = u8> + '_ {
        (0..=255u8).filter(|&v| self.contains(v))
    }
}
