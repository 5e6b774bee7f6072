//! NVMe: the controller (device hardware) and the PCI driver's I/O path.

pub(crate) mod controller;
pub(crate) mod pci;
