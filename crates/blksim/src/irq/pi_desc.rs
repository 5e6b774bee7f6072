//! A CPU's posted-interrupt descriptor (state, `struct pi_desc`): the PIR
//! the IOMMU sets a bit of for each posted MSI, ON (a notification is
//! outstanding) and SN, and which side last wrote its cache line.

use crate::hw::lapic::VectorSet;

/// The posted-interrupt descriptor of one CPU (`struct pi_desc`).
#[derive(Clone, Debug, Default)]
pub(crate) struct PiDesc {
    /// Posted interrupt requests, one bit per vector.
    pub pir: VectorSet,
    /// Outstanding notification.
    pub on: bool,
    /// Suppress notification (the host never sets it; tests do).
    pub sn: bool,
    /// The IOMMU wrote the line last (the CPU's next atomic pays a transfer), or the CPU did.
    pub iommu_owns_line: bool,
}
