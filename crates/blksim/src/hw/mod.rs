//! Hardware state: CPUs and their local APICs, PCIe links, root ports, interrupt
//! remapping units, each socket's interrupt delivery. Each module owns its data and local rules.

pub(crate) mod cpu;
pub(crate) mod delivery;
pub(crate) mod iommu;
pub(crate) mod lapic;
pub(crate) mod pcie;
pub(crate) mod root_port;
