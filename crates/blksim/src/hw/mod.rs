//! Hardware state: CPUs and their local APICs, PCIe links, root ports, interrupt
//! remapping units, each socket's interrupt delivery. Each module owns its data and local rules.

pub(crate) mod cpu;
pub(crate) mod delivery;
pub(crate) mod iommu;
pub(crate) mod lapic;
pub(crate) mod pcie;
pub(crate) mod root_port;

use delivery::InterruptRouter;
use iommu::RemapUnit;
use pcie::Link;
use root_port::RootPortState;

/// The platform between the devices and the CPUs: root ports, PCIe
/// switches' upstream links, the IOMMU's remapping units, each socket's
/// interrupt delivery.
pub(crate) struct Platform {
    pub root_ports: Vec<RootPortState>,
    /// The upstream links of PCIe switches, shared by the drives behind each.
    pub pcie_switches: Vec<Link>,
    /// The interrupt-remapping units (one per PCIe stack).
    pub iommus: Vec<RemapUnit>,
    /// Each socket's interrupt delivery.
    pub routers: Vec<InterruptRouter>,
}

/// How the kernel maps DMA (the DMA API over the IOMMU).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DmaMode {
    /// DMA goes through the IOMMU's translation (not `iommu=pt`, an IOMMU present).
    pub translated: bool,
    /// `iommu.strict=1`: each unmap invalidates the IOTLB.
    pub strict: bool,
    /// `--patch dma-premap`: fixed buffers mapped once, at registration.
    pub premap: bool,
}
