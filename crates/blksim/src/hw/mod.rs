//! Hardware state: CPUs and their local APICs, PCIe links, root ports, interrupt
//! remapping units, each socket's interrupt delivery. Each module owns its data and local rules.

pub(crate) mod cpu;
pub(crate) mod delivery;
pub(crate) mod iommu;
pub(crate) mod lapic;
pub(crate) mod pcie;
pub(crate) mod root_port;

use crate::ids::IrqId;
use delivery::InterruptRouter;
use iommu::RemapUnit;
use pcie::Link;
use root_port::RootPortState;

/// The platform between the devices and the CPUs: root ports, PCIe
/// switches' upstream links, the IOMMU's remapping units, each socket's
/// interrupt delivery.
#[derive(Clone)]
pub(crate) struct Platform {
    pub root_ports: Vec<RootPortState>,
    /// The upstream links of PCIe switches, shared by the drives behind each.
    pub pcie_switches: Vec<Link>,
    /// The interrupt-remapping units (one per PCIe stack).
    pub iommus: Vec<RemapUnit>,
    /// Each socket's interrupt delivery.
    pub routers: Vec<InterruptRouter>,
    /// The platform's MSI-X write serialisation (an affected platform's
    /// root complex or IOMMU block), one write at a time, if it has one.
    pub msi_serialisation: Option<InterruptRouter>,
}

impl Platform {
    /// The MSI write of `irq` reaches root port `port` at `now` behind the
    /// port's earlier writes; on an affected platform it first passes the
    /// platform's MSI-X write serialisation (one write at a time, every
    /// port's); the port's remapping unit takes it (one
    /// message at a time). Remapped, it becomes an interrupt message for the
    /// socket's interrupt delivery (one message at a time for the whole
    /// socket); posted, it is a write into a PIR. A posted write may not
    /// pass an earlier one (PCIe ordering), so the writes behind the MSI
    /// wait until it is performed — delivered, for a remapped MSI; written
    /// to the PIR, for a posted one (its notification goes on separately) —
    /// and the port has finished it (`service_ns`). Returns when the port is
    /// done with it.
    pub(crate) fn interrupt_write(&mut self, now: u64, port: usize, irq: IrqId, posted: bool) -> u64 {
        let rp = &mut self.root_ports[port];
        let mut at = now.max(rp.free_at_ns);
        if let Some(s) = self.msi_serialisation.as_mut() {
            at = s.route(at);
        }
        let taken = self.iommus[rp.unit].take(irq, at, posted);
        let handed = if posted { taken } else { self.routers[rp.socket].route(taken) };
        let done = handed + rp.service_ns;
        rp.busy_ns += done - now.max(rp.free_at_ns);
        rp.free_at_ns = done;
        rp.msis += 1;
        done
    }

    /// When an IPI sent at `now` to a CPU of `socket` leaves the socket's
    /// interrupt delivery (its flight follows).
    pub(crate) fn ipi_routed(&mut self, now: u64, socket: usize) -> u64 {
        self.routers[socket].route(now)
    }
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
