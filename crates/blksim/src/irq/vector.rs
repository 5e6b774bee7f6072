//! The vectors of the CPUs' local APICs (state): which device IRQ each
//! vector of each CPU is bound to (x86's vector matrix, simplified: the
//! lowest free device vector is handed out).

use crate::hw::lapic::{FIRST_DEVICE_VECTOR, LAST_DEVICE_VECTOR};
use crate::ids::{CpuId, IrqId};

/// No IRQ on a vector (kept inside the table: callers see `Option`).
const UNBOUND: u32 = u32::MAX;

#[derive(Clone)]
pub(crate) struct VectorTable {
    /// (cpu * 256 + vector) -> IRQ index, or `UNBOUND`.
    irq: Vec<u32>,
}

impl VectorTable {
    /// Every vector of `ncpus` CPUs free.
    pub(crate) fn new(ncpus: usize) -> VectorTable {
        VectorTable { irq: vec![UNBOUND; ncpus * 256] }
    }

    /// The IRQ bound to `vector` on `cpu`, if any.
    #[inline(always)]
    pub(crate) fn get(&self, cpu: CpuId, vector: u8) -> Option<IrqId> {
        let irq = self.irq[cpu.idx() * 256 + vector as usize];
        (irq != UNBOUND).then_some(IrqId(irq))
    }

    /// The IRQ bound to `vector` on `cpu`, which has one (a device vector
    /// that arrived somewhere was bound there when it was sent).
    pub(crate) fn bound(&self, cpu: CpuId, vector: u8) -> IrqId {
        self.get(cpu, vector).unwrap_or_else(|| panic!("vector {vector:#x} on CPU {cpu} has no IRQ"))
    }

    /// The lowest free device vector on `cpu` (bind it to take it); `None`
    /// when the CPU has run out.
    pub(crate) fn alloc(&self, cpu: CpuId) -> Option<u8> {
        (FIRST_DEVICE_VECTOR..=LAST_DEVICE_VECTOR).find(|&v| self.get(cpu, v).is_none())
    }

    /// The device vectors bound on `cpu`.
    pub(crate) fn bound_on(&self, cpu: CpuId) -> Vec<u8> {
        (FIRST_DEVICE_VECTOR..=LAST_DEVICE_VECTOR).filter(|&v| self.get(cpu, v).is_some()).collect()
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
    fn the_lowest_free_vector_is_handed_out_until_the_device_range_ends() {
        let mut t = VectorTable::new(2);
        let (c0, c1) = (CpuId(0), CpuId(1));
        let take = |t: &mut VectorTable, c: CpuId| {
            let v = t.alloc(c)?;
            t.bind(c, v, IrqId(1));
            Some(v)
        };
        assert_eq!(take(&mut t, c0), Some(FIRST_DEVICE_VECTOR));
        assert_eq!(take(&mut t, c0), Some(FIRST_DEVICE_VECTOR + 1));
        assert_eq!(take(&mut t, c1), Some(FIRST_DEVICE_VECTOR));
        let n = (LAST_DEVICE_VECTOR - FIRST_DEVICE_VECTOR + 1) as usize;
        assert_eq!((2..n).filter_map(|_| take(&mut t, c0)).count(), n - 2);
        assert_eq!(t.alloc(c0), None, "CPU 0 has run out");
        assert_eq!(t.bound_on(c0).len(), n);
        // A freed vector is handed out again.
        t.unbind(c0, FIRST_DEVICE_VECTOR + 5);
        assert_eq!(t.alloc(c0), Some(FIRST_DEVICE_VECTOR + 5));
        t.bind(c1, 0x30, IrqId(7));
        assert_eq!((t.get(c1, 0x30), t.get(c0, 0x30)), (Some(IrqId(7)), Some(IrqId(1))));
        t.unbind(c1, 0x30);
        assert_eq!(t.get(c1, 0x30), None);
    }
}
