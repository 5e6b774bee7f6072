//! Statistics: fio's latency histogram and what a run reports.

pub mod histogram;
pub mod report;
pub mod trace;

pub use histogram::LatencyStat;
pub use report::{
    CpuStage, CpuTime, DirStats, DiskStats, DsaStats, GsimStats, HotplugStats, HybridIopollStats, InterruptRow,
    Invariants, IoLog, IoLogSink, IoRecord, JobError, JobStats, LockReport, MinRateMiss, MsiCounters, MsiCpuStats,
    PathStats, RunReport, SchedulerReport, SyncStats, LATENCY_STAGES,
};
pub use trace::{Trace, TraceName, TraceRecord, Track};
