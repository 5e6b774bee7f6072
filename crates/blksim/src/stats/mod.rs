//! Statistics: fio's latency histogram and what a run reports.

pub mod histogram;
pub mod report;

pub use histogram::LatencyStat;
pub use report::{CpuTime, DirStats, DiskStats, InterruptRow, JobStats, MsiCpuStats, PathStats, RunReport};
