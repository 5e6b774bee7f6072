//! Interrupts: device IRQ descriptors and their vectors, MSI delivery
//! through the root port and interrupt remapping (remappable or posted) to
//! the target CPU's local APIC, IPIs, the interrupt-context frames
//! (hardirq handlers, BLOCK_SOFTIRQ), and moving IRQs between CPUs.

pub(crate) mod desc;
pub(crate) mod handle;
pub(crate) mod migrate;
pub(crate) mod moderation;
pub(crate) mod msi;
pub(crate) mod pi_desc;
pub(crate) mod posted_msi;
pub(crate) mod vector;

use crate::ids::{CpuId, IdVec, IrqId};
use crate::stats::MsiCounters;
use desc::Irq;
use pi_desc::PiDesc;
use vector::VectorTable;

/// The interrupt subsystem's state: the device IRQs and the vectors they
/// are bound to, the MSI counters, and each CPU's posted-interrupt
/// descriptor with the posting mode (`intremap=posted_msi`).
#[derive(Clone)]
pub(crate) struct Interrupts {
    /// The device IRQs (`/proc/interrupts` numbers them from 128).
    pub irqs: IdVec<IrqId, Irq>,
    /// Which IRQ each vector of each CPU is bound to.
    pub vectors: VectorTable,
    pub msi: MsiCounters,
    /// Per CPU: its posted-interrupt descriptor (`posted_msi_pi_desc`).
    pub pi_descs: IdVec<CpuId, PiDesc>,
    /// Device MSIs are posted (`intremap=posted_msi`).
    pub posting: bool,
    /// `MAX_POSTED_MSI_COALESCING_LOOP`.
    pub max_coalescing_loop: u32,
    /// Vectors retriggered on a new CPU after their old CPU went offline.
    pub retriggered: u64,
    /// Global Software Interrupt Moderation (`--patch gsim`).
    pub gsim: Option<Box<moderation::Gsim>>,
}
