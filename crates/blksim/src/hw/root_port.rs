//! A PCIe root port's upstream write path (state): posted writes leave in
//! order, and an interrupt message holds the writes behind it until the
//! remapping hardware has taken it and the port has finished it.

use crate::ids::{DevId, HctxId, ReqId};

/// A root port's upstream write path: posted writes leave in order; an MSI
/// holds the writes behind it until the IOMMU has taken it and the port has
/// finished it (`service_ns`).
#[derive(Clone, Debug, Default)]
pub(crate) struct RootPortState {
    pub socket: usize,
    /// The remapping unit behind it (index into `Sim::iommus`).
    pub unit: usize,
    /// CQE writes held behind the port's last MSI, in order.
    pub waiting: std::collections::VecDeque<(DevId, HctxId, ReqId)>,
    /// A `RootPortFree` event is scheduled.
    pub wake_pending: bool,
    pub free_at_ns: u64,
    pub service_ns: u64,
    pub busy_ns: u64,
    pub msis: u64,
}
