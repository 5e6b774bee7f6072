//! Interrupts: device IRQ descriptors and their vectors, MSI delivery
//! through the root port and interrupt remapping (remappable or posted) to
//! the target CPU's local APIC, IPIs, the interrupt-context frames
//! (hardirq handlers, BLOCK_SOFTIRQ), and moving IRQs between CPUs.

pub(crate) mod desc;
pub(crate) mod handle;
pub(crate) mod migrate;
pub(crate) mod msi;
pub(crate) mod posted_msi;
pub(crate) mod vector;
