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
