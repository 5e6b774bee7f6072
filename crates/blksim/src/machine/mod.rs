//! The machine: topology, cost table and profiles.

pub mod costs;
pub mod profile;
pub mod topology;

pub use costs::{Cost, Costs};
pub use profile::{
    builtin, builtin_names, load_profile, Builtins, DeviceKind, DeviceSpec, DiskParams, DsaParams, HbaParams,
    InterruptDelivery, Iommu, Machine, NvmeParams, ProfileSource, RootPort, ScsiSpec,
};
pub use topology::Topology;

/// A cache line last written on CPU `from` read or written on `to`: a
/// transfer within the core, within a last-level cache or across them
/// (nothing on the same CPU).
pub(crate) fn line_ns(topo: &Topology, costs: &Costs, from: crate::ids::CpuId, to: crate::ids::CpuId) -> u64 {
    if from == to {
        0
    } else if topo.cpus[from.idx()].core == topo.cpus[to.idx()].core {
        costs.cacheline_transfer_ns / 4
    } else if topo.share_cache(from.0, to.0) {
        costs.cacheline_transfer_ns
    } else {
        costs.cacheline_transfer_llc_ns
    }
}
