//! The vectors of the CPUs' local APICs (state): which device IRQ each
//! vector of each CPU is bound to, and the next free device vector per CPU
//! (x86's vector matrix, simplified: vectors are handed out in order from
//! FIRST_DEVICE_VECTOR and a freed one is not reused).

use crate::hw::lapic::{FIRST_DEVICE_VECTOR, LAST_DEVICE_VECTOR};
use crate::ids::{CpuId, IrqId};

/// No IRQ on a vector (kept inside the table: callers see `Option`).
const UNBOUND: u32 = u32::MAX;

pub(crate) struct VectorTable {
    /// (cpu * 256 + vector) -> IRQ index, or `UNBOUND`.
    irq: Vec<u32>,
    /// Per CPU: the next device vector to hand out.
    next: Vec<u8>,
}

impl VectorTable {
    /// Every vector of `ncpus` CPUs free.
    pub(crate) fn new(ncpus: usize) -> VectorTable {
        VectorTable { irq: vec![UNBOUND; ncpus * 256], next: vec![FIRST_DEVICE_VECTOR; ncpus] }
    }

    /// The IRQ bound to `vector` on `cpu`, if any.
    #[inline(always)]
    pub(crate) fn get(&self, cpu: CpuId, vector: u8) -> Option<IrqId> {
        let irq = self.irq[cpu.idx() * 256 + vector as usize];
        (irq != UNBOUND).then_some(IrqId(irq))
    }

    /// A free device vector on `cpu`, taken; `None` when the CPU has run out.
    pub(crate) fn alloc(&mut self, cpu: CpuId) -> Option<u8> {
        let vector = self.next[cpu];
        if vector > LAST_DEVICE_VECTOR {
            return None;
        }
        self.next[cpu] += 1;
        Some(vector)
    }

    /// Bind `vector` on `cpu` to `irq`.
    pub(crate) fn bind(&mut self, cpu: CpuId, vector: u8, irq: IrqId) {
        self.irq[cpu.idx() * 256 + vector as usize] = irq.0;
    }

    /// Free `vector` on `cpu`.
    pub(crate) fn unbind(&mut self, cpu: CpuId, vector: u8) {
        self.irq[cpu.idx() * 256 + vector as usize] = UNBOUND;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_are_handed_out_in_order_until_the_device_range_ends() {
        let mut t = VectorTable::new(2);
        let (c0, c1) = (CpuId(0), CpuId(1));
        assert_eq!(t.alloc(c0), Some(FIRST_DEVICE_VECTOR));
        assert_eq!(t.alloc(c0), Some(FIRST_DEVICE_VECTOR + 1));
        assert_eq!(t.alloc(c1), Some(FIRST_DEVICE_VECTOR));
        let n = (LAST_DEVICE_VECTOR - FIRST_DEVICE_VECTOR + 1) as usize;
        assert_eq!((2..n).filter_map(|_| t.alloc(c0)).count(), n - 2);
        assert_eq!(t.alloc(c0), None, "CPU 0 has run out");
        t.bind(c1, 0x30, IrqId(7));
        assert_eq!((t.get(c1, 0x30), t.get(c0, 0x30)), (Some(IrqId(7)), None));
        t.unbind(c1, 0x30);
        assert_eq!(t.get(c1, 0x30), None);
    }
}
