//! Hardware state: CPUs and their local APICs, root ports, interrupt
//! remapping units. Each module owns its data and local rules.

pub(crate) mod cpu;
pub(crate) mod iommu;
pub(crate) mod lapic;
pub(crate) mod root_port;
