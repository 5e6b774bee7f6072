//! What a run reports: per-job statistics in fio's terms, plus what fio
//! cannot see (CPU time by context, interrupts, IPIs, devices).

use super::histogram::LatencyStat;
use crate::workload::JobConfig;

/// Statistics of one direction of one job, over the measured period (after ramp).
#[derive(Clone, Debug, Default)]
pub struct DirStats {
    /// I/Os issued and completed in the measured period, failed ones
    /// included (fio's `total_io_u`).
    pub total_ios: u64,
    /// Of those, the ones that failed (no bytes, no latency).
    pub failed_ios: u64,
    /// Of those, the ones done with nothing moved: a trim io_uring's ring
    /// refused, which fio takes as done with its whole length left (resid).
    pub empty_ios: u64,
    /// Of those, the ones a replay left in flight when its log ran out
    /// (fio's `td->done`): issued, never reaped, so no bytes and no latency.
    pub abandoned_ios: u64,
    /// Bytes those I/Os moved.
    pub io_bytes: u64,
    /// Submission latency (fio's slat): from fio queueing the I/O to the
    /// kernel accepting it. Empty for sync engines.
    pub slat: LatencyStat,
    /// Completion latency (fio's clat): from submission to fio seeing the completion.
    pub clat: LatencyStat,
    /// Total latency (fio's lat) = slat + clat.
    pub lat: LatencyStat,
    /// Bandwidth in bytes/s, one sample per `sample_interval_ns` (fio's bw log, 500 ms).
    pub bw_samples: Vec<u64>,
    /// IOPS, one sample per interval.
    pub iops_samples: Vec<u64>,
    /// Every measured I/O, in the order fio accounted it, when the job asked for them
    /// (`JobConfig::record_ios`, for fio's log files) and the run had no [`IoLog`]; empty otherwise.
    pub ios: Vec<IoRecord>,
    /// fio's per-priority latencies (`ts->clat_prio[ddir]`), for a job whose
    /// I/Os of this direction have more than one priority (cmdprio): its
    /// clat samples, or its lat samples with `lat_percentiles`. Empty otherwise.
    pub prios: Vec<PrioStat>,
}

/// One priority's latencies (fio's `struct clat_prio_stat`).
#[derive(Clone, Debug, Default)]
pub struct PrioStat {
    /// The ioprio: class << 13 | hint << 3 | level.
    pub ioprio: u16,
    /// Its I/Os' latencies.
    pub lat: LatencyStat,
}

impl PrioStat {
    /// No samples yet, of `ioprio`.
    pub fn of(ioprio: u16) -> PrioStat {
        PrioStat { ioprio, lat: LatencyStat::default() }
    }
}

impl DirStats {
    /// fio's `reset_io_stats` (a latency target's final run): counts, bytes,
    /// latencies and samples start again; the I/Os kept for the log files stay
    /// (fio's logs are not reset), as do the priorities being tracked.
    pub(crate) fn reset_measured(&mut self) {
        let ios = std::mem::take(&mut self.ios);
        let prios = self.prios.iter().map(|p| PrioStat::of(p.ioprio)).collect();
        *self = DirStats { ios, prios, ..Default::default() };
    }

    /// An I/O's latencies, but those `off` (`JobConfig::lat_off`'s bits):
    /// slat (when it has one), clat, lat.
    #[inline(never)]
    pub(crate) fn record_some(&mut self, off: u8, slat: bool, start_ns: u64, issue_ns: u64, done_ns: u64) {
        use crate::workload::{LAT_OFF_CLAT, LAT_OFF_LAT, LAT_OFF_SLAT};
        if slat && off & LAT_OFF_SLAT == 0 {
            self.slat.record(issue_ns - start_ns);
        }
        if off & LAT_OFF_CLAT == 0 {
            self.clat.record(done_ns - issue_ns);
        }
        if off & LAT_OFF_LAT == 0 {
            self.lat.record(done_ns - start_ns);
        }
    }

    /// fio's per-priority sample of an I/O of statistics index `index`
    /// (`add_clat_sample` / `add_lat_sample`): its lat with `lat_percentiles`,
    /// else its clat; none when fio keeps no such statistic.
    #[inline(never)]
    pub(crate) fn record_prio(&mut self, cfg: &JobConfig, index: u8, start_ns: u64, issue_ns: u64, done_ns: u64) {
        use crate::workload::{LAT_OFF_CLAT, LAT_OFF_LAT};
        let (off, ns) =
            if cfg.lat_percentiles { (LAT_OFF_LAT, done_ns - start_ns) } else { (LAT_OFF_CLAT, done_ns - issue_ns) };
        if cfg.lat_off & off == 0 {
            self.prios[index as usize].lat.record(ns);
        }
    }

    /// An I/O fio issued and never reaped (a replay's log ran out): in its
    /// issued count only.
    pub(crate) fn abandoned(&mut self) {
        self.total_ios += 1;
        self.abandoned_ios += 1;
    }

    /// Add another thread's statistics of the same direction (fio's
    /// `sum_thread_stats`): counts and histograms summed, samples summed
    /// interval by interval (both on the same clock).
    pub(crate) fn absorb(&mut self, other: DirStats) {
        self.total_ios += other.total_ios;
        self.failed_ios += other.failed_ios;
        self.empty_ios += other.empty_ios;
        self.abandoned_ios += other.abandoned_ios;
        self.io_bytes += other.io_bytes;
        self.slat.merge(&other.slat);
        self.clat.merge(&other.clat);
        self.lat.merge(&other.lat);
        for (mine, theirs) in [(&mut self.bw_samples, other.bw_samples), (&mut self.iops_samples, other.iops_samples)] {
            if mine.len() < theirs.len() {
                mine.resize(theirs.len(), 0);
            }
            for (a, b) in mine.iter_mut().zip(theirs) {
                *a += b;
            }
        }
        self.ios.extend(other.ios);
    }
}

/// One measured I/O's times and place, for fio's per-I/O log files (`write_lat_log`, ...).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IoRecord {
    /// fio prepared it (slat and lat start), virtual ns.
    pub start_ns: u64,
    /// The submitting syscall handed it to the kernel (slat end, clat start); `start_ns` for sync engines.
    pub issue_ns: u64,
    /// fio reaped it (the batch's timestamp: clat and lat end).
    pub done_ns: u64,
    /// Byte offset on the device.
    pub offset: u64,
    /// Bytes.
    pub bytes: u32,
    /// Its I/O priority (fio's `io_u->ioprio`, the logs' prio column).
    pub ioprio: u16,
    /// Where it comes in the job's accounting order (fio's `ios_completed`
    /// takes a reap's events in turn, whatever their direction); 0 for an
    /// issued-only record.
    pub seq: u64,
}

/// Where the measured I/Os of jobs that keep logs (`JobConfig::record_ios`)
/// go as the run makes them: fio's log files, written as they are produced
/// (`RunOptions::io_log`). Without one, the records are kept in
/// [`DirStats::ios`]. `job` is the job's index in the workload, `dir` 0
/// read, 1 write, 2 trim; the job measures from `epoch_ns` (its start
/// after `ramp_time`).
pub trait IoLog: Send {
    /// fio queued an I/O of an async engine at `r.issue_ns` (its slat ends), after the epoch;
    /// `r.done_ns` is 0.
    fn issued(&mut self, job: usize, dir: usize, epoch_ns: u64, r: &IoRecord);
    /// fio accounted a measured I/O's completion, at `r.done_ns` (in time order per job).
    fn completed(&mut self, job: usize, dir: usize, epoch_ns: u64, r: &IoRecord);
    /// fio queued an io_u of `bytes` at `offset` of the job's file number
    /// `file` (`td_io_queue`, where `write_iolog` logs it), `since_start_ns`
    /// after the job started; only for jobs with `JobConfig::log_queued`.
    fn queued(&mut self, job: usize, file: usize, dir: usize, since_start_ns: u64, offset: u64, bytes: u64) {
        let _ = (job, file, dir, since_start_ns, offset, bytes);
    }
    /// A job with `JobConfig::log_queued` began its next loop (`loops`):
    /// fio closed and reopened its files, `since_start_ns` after it started.
    fn reopened(&mut self, job: usize, since_start_ns: u64) {
        let _ = (job, since_start_ns);
    }
    /// A job of several files with `JobConfig::log_queued` found its file
    /// number `file` done (get_io_u's fill_io_u failed on it): fio closed
    /// it, having opened it first if no io_u had, `since_start_ns` after
    /// the job started.
    fn file_done(&mut self, job: usize, file: usize, since_start_ns: u64) {
        let _ = (job, file, since_start_ns);
    }
    /// `end_fsync`'s sync of the job's file number `file` is done,
    /// `since_start_ns` after the job started: fio's `fio_file_fsync`
    /// closes the file if it opened it for the sync.
    fn end_fsync_done(&mut self, job: usize, file: usize, since_start_ns: u64) {
        let _ = (job, file, since_start_ns);
    }
}

/// A shared [`IoLog`], for [`crate::RunOptions`].
#[derive(Clone)]
pub struct IoLogSink(pub std::sync::Arc<std::sync::Mutex<dyn IoLog>>);

impl std::fmt::Debug for IoLogSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IoLogSink")
    }
}

impl JobStats {
    /// fio's `total_run_time`: from the epoch (the start, or the end of the
    /// ramp) to the end, ns; the measured run time if that is empty.
    pub fn total_run_ns(&self) -> u64 {
        if self.end_ns > self.epoch_ns {
            self.end_ns - self.epoch_ns
        } else {
            self.runtime_ns
        }
    }
}

/// fio's fsync and fdatasync accounting (`sync_stat`, `io_u_sync_plat`,
/// `total_io_u[DDIR_SYNC]`): the ones issued while the job ran, not
/// `end_fsync`'s.
#[derive(Clone, Debug, Default)]
pub struct SyncStats {
    /// Syncs issued and completed in the measured period.
    pub total_ios: u64,
    /// Each one's time from issue to completion (fio's `add_sync_clat_sample`).
    pub lat: LatencyStat,
    /// `end_fsync`'s io_us an async engine queued (libaio's IOCB_CMD_FSYNC,
    /// posixaio's `aio_fsync`): `td_io_commit` gave each an IO depth count,
    /// which fio's IO depths line does not divide by.
    pub end_in_depth: u64,
}

/// One job's results.
#[derive(Clone, Debug)]
pub struct JobStats {
    /// The job as configured.
    pub config: JobConfig,
    /// fio's per-direction order: read, write, trim.
    pub dirs: [DirStats; 3],
    /// Its fsyncs and fdatasyncs.
    pub sync: SyncStats,
    /// Measured run time (after ramp) in ns.
    pub runtime_ns: u64,
    /// Virtual time at which the job started and ended, ns.
    pub start_ns: u64,
    /// Virtual time at which it ended, ns.
    pub end_ns: u64,
    /// fio's epoch: the start, or the end of the ramp where fio reset the
    /// job's statistics (its CPU time, depths and run time count from here).
    pub epoch_ns: u64,
    /// CPU time of the job's own task, ns: user and system (as getrusage reports it).
    pub usr_ns: u64,
    /// System time of the job's task, ns.
    pub sys_ns: u64,
    /// Voluntary + involuntary context switches of the job's task.
    pub ctx: u64,
    /// fio's `IO depths` distribution: counts for depth buckets 1,2,4,8,16,32,>=64.
    pub iodepth_level: [u64; 7],
    /// io_us queued but never counted in `iodepth_level`: getevents
    /// committed them short of a batch and no td_io_commit came after
    /// (fio's `io_u_queued` left at the end). fio's depth percentages
    /// divide by every queued io_u, these too.
    pub iodepth_unmarked: u64,
    /// Submit batch sizes: buckets 0,4,8,16,32,64,>=64 (fio's io_u_submit).
    pub iodepth_submit: [u64; 7],
    /// Completion batch sizes, same buckets.
    pub iodepth_complete: [u64; 7],
    /// The CPU the job's task ran on.
    pub cpu: u32,
    /// Where measured I/Os spent their time: sums over I/Os of `LatencyBreakdown` stages, ns.
    pub breakdown_ns: [u64; LATENCY_STAGES.len()],
    /// The I/O error that ended the job, if one did.
    pub error: Option<JobError>,
    /// The program would have waited for ever (the run ended it at its runtime): what it waited for.
    pub stuck: Option<String>,
    /// Its ring's hybrid IOPOLL (`--patch hybrid-iopoll`), if it had one.
    pub hybrid_iopoll: Option<HybridIopollStats>,
    /// A verifying job that writes, with `verify_state_save`: the state fio saves at its end
    /// (every write has completed by then: no slot holds one).
    pub verify_state: Option<crate::workload::VerifyState>,
    /// Why its verification stopped at a loaded state (`verify_state_load`), as fio logs it.
    pub verify_stopped: Option<String>,
    /// A job with `latency_target`: the depth its search ended at (fio's `td->latency_qd`).
    pub latency_depth: Option<u32>,
}

/// What a hybrid IOPOLL ring did (io_uring/rw.c's `io_hybrid_iopoll_delay`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HybridIopollStats {
    /// Sleeps before a request's first poll (at most one per request).
    pub sleeps: u64,
    /// Their total length asked, ns (the hrtimer's; the switches around each are CPU time).
    pub sleep_ns: u64,
    /// The ring's `hybrid_poll_time` at the end, ns (`None`: it never polled).
    pub poll_time_ns: Option<u64>,
}

/// What GSIM did over a run (`--patch gsim`), summed over the CPUs as
/// `/proc/irq/soft_moderation/stats` shows them per CPU.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GsimStats {
    /// IRQs put on a CPU's moderated list after their handler (`enqueue`).
    pub moderated: u64,
    /// Handler runs of an IRQ already listed (`stray_irq`).
    pub stray: u64,
    /// Moderation timers armed (`timer_set`).
    pub timers_set: u64,
    /// Moderation timer callbacks run.
    pub timer_fires: u64,
    /// Interrupts that came while their IRQ was moderated: held and resent by the timer.
    pub held: u64,
    /// MSI-X masks those interrupts wrote.
    pub masks: u64,
    /// Mean time a held interrupt waited for its resend (the latency moderation added to it), ns.
    pub mean_held_ns: u64,
    /// The longest such wait, ns.
    pub max_held_ns: u64,
    /// Mean time an IRQ stayed listed, ns.
    pub mean_listed_ns: u64,
    /// Epochs evaluated (`update_ms` each, per CPU handling interrupts).
    pub epochs: u64,
    /// Epochs in which the platform's interrupt rate was above `target_intr_rate`.
    pub global_irq_high: u64,
    /// Epochs in which a CPU's own rate, scaled by the CPUs handling interrupts, was above it.
    pub local_irq_high: u64,
    /// Epochs in which a CPU's hardirq share was above `hardirq_percent`.
    pub hardirq_high: u64,
    /// Per CPU that handled interrupts: its delay (`mod_ns`) at the end, ns.
    pub delay_ns: Vec<(u32, u64)>,
}

/// What ended a job: an I/O that failed (fio's `io_u error`, t/io_uring's
/// `unexpected ret`), or a rate below its minimum (`min_rate`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobError {
    /// The result, a negative errno (-95: EOPNOTSUPP; -5, EIO, for a rate missed).
    pub errno: i32,
    /// The file (`/dev/nvme0n1`).
    pub file: String,
    /// Its direction, offset and length.
    pub dir: crate::workload::Direction,
    /// Byte offset.
    pub offset: u64,
    /// Length in bytes.
    pub bytes: u64,
    /// fio's `check_min_rate` failed, in direction `dir` first (and in each
    /// direction it lists, in fio's order): no I/O failed.
    pub min_rate: Vec<MinRateMiss>,
    /// fio's `lat_fatal`: the I/O (`dir`, `offset`, `bytes`) took this long, ns, over
    /// `max_latency` (the second, ns); it completed, and ended its job (ETIMEDOUT).
    pub max_latency: Option<(u64, u64)>,
}

/// A `rate_min` or `rate_iops_min` not met over a `rate_cycle` (fio's `check_min_rate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MinRateMiss {
    /// `rate_iops_min` (I/Os per second), else `rate_min` (bytes per second).
    pub iops: bool,
    /// The minimum.
    pub min: u64,
    /// What the cycle did, in the same unit.
    pub got: u64,
}

/// The stages of an I/O's latency, in order; their sums over I/Os are in
/// `JobStats::breakdown_ns`. Together they make fio's `lat`.
pub const LATENCY_STAGES: [(&str, &str); 5] = [
    ("prep", "fio prepares it until its issue time (async engines: the submitting syscall returns)"),
    ("issue", "from the issue time until the driver hands it to the device (sync engines: the syscall's submit path; tag waits)"),
    ("device", "device: fetch, controller, media, transfer, root port"),
    ("completion", "completion: MSI delivery, interrupt, drain, softirq or IPI"),
    ("reap", "until fio reaps it: wake-up, reaping syscall"),
];

/// A stage of the I/O path that CPU time is charged to (`--breakdown`):
/// every cost of the model belongs to one. For a task, `UserLoop` is user
/// time and every other stage system time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CpuStage {
    /// The program's own loop: fio's or t/io_uring's user code.
    UserLoop = 0,
    /// Syscall entry and exit, `io_uring_enter`'s own work, io_submit/io_getevents per call.
    Syscall,
    /// The engine's per-I/O submission: io_uring SQE prep and issue, aio iocbs, file references, page pinning.
    UringSubmit,
    /// The engine's side of completions: io_uring task_work, CQE posting and flushing, aio events.
    UringComplete,
    /// The block layer: bios, requests and tags, the plug, I/O accounting, ending requests, the scheduler.
    Block,
    /// The driver's submission: `queue_rq` / `queue_rqs`, the SQ lock.
    DriverSubmit,
    /// Doorbell writes: SQ tail and CQ head (MMIO).
    Doorbell,
    /// DMA mapping and unmapping, IOTLB invalidations.
    DmaMap,
    /// Polling: `io_do_iopoll`'s poll calls and spinning.
    Poll,
    /// Interrupt entry, EOI and exit; posted-MSI notification handling.
    IrqEntryExit,
    /// The driver's completion work per entry, from its interrupt handler or from polling alike
    /// (`nvme_handle_cqe` under `nvme_irq` or `nvme_poll`, the SCSI adapter's handler, idxd's).
    DriverComplete,
    /// Softirq entry and BLOCK_SOFTIRQ's lists.
    Softirq,
    /// Wake-ups, context switches, IPIs sent, and other follow-on work of completions.
    Wakeup,
    /// Everything else: scheduler locks spun on, kblockd, SCSI line transfers.
    Other,
}

impl CpuStage {
    /// How many stages there are.
    pub const COUNT: usize = 14;
    /// Every stage, in order.
    pub const ALL: [CpuStage; CpuStage::COUNT] = [
        CpuStage::UserLoop,
        CpuStage::Syscall,
        CpuStage::UringSubmit,
        CpuStage::UringComplete,
        CpuStage::Block,
        CpuStage::DriverSubmit,
        CpuStage::Doorbell,
        CpuStage::DmaMap,
        CpuStage::Poll,
        CpuStage::IrqEntryExit,
        CpuStage::DriverComplete,
        CpuStage::Softirq,
        CpuStage::Wakeup,
        CpuStage::Other,
    ];

    /// Its name in the breakdown and the JSON.
    pub fn name(self) -> &'static str {
        match self {
            CpuStage::UserLoop => "user loop",
            CpuStage::Syscall => "syscall",
            CpuStage::UringSubmit => "engine submit",
            CpuStage::UringComplete => "engine complete",
            CpuStage::Block => "block layer",
            CpuStage::DriverSubmit => "driver submit",
            CpuStage::Doorbell => "doorbell",
            CpuStage::DmaMap => "dma map",
            CpuStage::Poll => "polling",
            CpuStage::IrqEntryExit => "irq entry/exit",
            CpuStage::DriverComplete => "driver complete",
            CpuStage::Softirq => "softirq",
            CpuStage::Wakeup => "wake-up",
            CpuStage::Other => "other",
        }
    }
}

/// Time spent by one logical CPU, by context, ns. They add up to the run's elapsed time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuTime {
    /// User time, ns.
    pub user_ns: u64,
    /// System (kernel, task context) time, ns.
    pub sys_ns: u64,
    /// Hardirq time, ns.
    pub hardirq_ns: u64,
    /// Softirq time, ns.
    pub softirq_ns: u64,
    /// Idle time with no task waiting for I/O, ns.
    pub idle_ns: u64,
    /// Idle while a task of this CPU sleeps waiting for I/O (as /proc/stat's iowait).
    pub iowait_ns: u64,
}

impl CpuTime {
    /// The sum of every context's time.
    pub fn total_ns(&self) -> u64 {
        self.user_ns + self.sys_ns + self.hardirq_ns + self.softirq_ns + self.idle_ns + self.iowait_ns
    }
}

/// One row of `/proc/interrupts`: an IRQ (or a system vector such as PMN) and its count per CPU.
#[derive(Clone, Debug)]
pub struct InterruptRow {
    /// `"145"` for a device IRQ, `"PMN"`, `"CAL"`, `"LOC"`-style names for system vectors.
    pub label: String,
    /// The CPUs that counted it, with their counts, by CPU (the others
    /// counted none): a row costs what it counted, not the machine's size.
    pub per_cpu: Vec<(u32, u64)>,
    /// Chip column, e.g. `"IR-PCI-MSIX-0000:01:00.0"` or `"INTEL-IR-POST"`; empty for system vectors.
    pub chip: String,
    /// Last column: the action (e.g. `"nvme0q3"`) or the description (`"Posted MSI notification event"`).
    pub name: String,
}

impl InterruptRow {
    /// Its count on `cpu`.
    pub fn count(&self, cpu: u32) -> u64 {
        self.per_cpu.iter().find(|&&(c, _)| c == cpu).map_or(0, |&(_, n)| n)
    }

    /// Its count over every CPU.
    pub fn total(&self) -> u64 {
        self.per_cpu.iter().map(|&(_, n)| n).sum()
    }
}

/// Interrupt delivery seen from one CPU.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MsiCpuStats {
    /// Device MSIs aimed at this CPU.
    pub device_msis: u64,
    /// Posted-MSI notifications the IOMMU sent it (0 in remappable mode).
    pub notifications: u64,
    /// Notification handler runs (`PMN`).
    pub pmn: u64,
    /// Device interrupt handler runs (the device IRQ rows, summed).
    pub device_irqs: u64,
}

/// A shared interrupt-path resource (a root port or a socket's IOMMU): how busy it was.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PathStats {
    /// What it is, e.g. `iio0` or `iommu0`.
    pub name: String,
    /// Interrupt messages through it.
    pub messages: u64,
    /// Share of the run it was busy, %.
    pub busy_pct: f64,
}

/// A lock's statistics over the run (`perf lock contention`-like).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LockReport {
    /// e.g. `nullb0 dd->lock`.
    pub name: String,
    /// Times it was taken.
    pub acquisitions: u64,
    /// Acquisitions that found it held.
    pub contended: u64,
    /// Time spent spinning for it, summed over CPUs, ns.
    pub wait_ns: u64,
    /// Time it was held, ns.
    pub hold_ns: u64,
}

/// What a device's I/O scheduler decided over the run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SchedulerReport {
    /// The device.
    pub device: String,
    /// The scheduler (`kyber`).
    pub scheduler: String,
    /// Its counters, by name (`read_depth`, `write_throttled`, ...).
    pub counters: Vec<(String, u64)>,
}

/// One DSA client's results.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DsaStats {
    /// The DSA device, e.g. `dsa0`.
    pub device: String,
    /// Its work queue.
    pub wq: u32,
    /// Descriptors completed (and handled by the interrupt handler).
    pub completed: u64,
    /// Bytes those descriptors filled.
    pub bytes: u64,
    /// How long the client submitted, ns.
    pub runtime_ns: u64,
}

/// Disk statistics as `/proc/diskstats` and fio's "Disk stats" show them.
#[derive(Clone, Debug, Default)]
pub struct DiskStats {
    /// Block device name, e.g. `nvme0n1`.
    pub name: String,
    /// [read, write].
    pub ios: [u64; 2],
    /// Sectors (512 B) moved, [read, write].
    pub sectors: [u64; 2],
    /// Bios merged into other requests, [read, write].
    pub merges: [u64; 2],
    /// Discard requests completed (diskstats' field 12, which fio does not show).
    pub discards: u64,
    /// Discard bios merged into other requests, each one more range of a
    /// request (diskstats' field 13).
    pub discard_merges: u64,
    /// Every request the device completed: reads, writes, discards and
    /// passthrough commands (which Linux's statistics leave out).
    pub requests: u64,
    /// Milliseconds spent on I/Os of each direction (sum over I/Os).
    pub ticks_ms: [u64; 2],
    /// Milliseconds of I/O time, summed over both directions.
    pub in_queue_ms: u64,
    /// Percentage of elapsed time with at least one I/O in flight (the
    /// block layer's count, `io_ticks`: passthrough commands are not in it).
    pub util_pct: f64,
    /// Requests completed per second by the device over the whole run
    /// (discards and passthrough commands included).
    pub iops: f64,
    /// MSIs the device sent.
    pub msis: u64,
    /// Runs of its interrupt handlers (its rows of `/proc/interrupts`, summed).
    pub irq_handler_runs: u64,
    /// fio's disk util lists it: a job did I/O to it as a block device. A
    /// device used only through its NVMe generic char device (`/dev/ngXnY`)
    /// is not (fio's `get_device_numbers` skips a char device), and its
    /// passthrough commands are not in its statistics (Linux's
    /// `blk_account_io_start`, with `iostats_passthrough` off).
    pub fio_shows: bool,
}

/// Everything a run produced.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// Per job, in job order.
    pub jobs: Vec<JobStats>,
    /// Per logical CPU.
    pub cpu_time: Vec<CpuTime>,
    /// Per logical CPU: its busy time (user, sys, hardirq, softirq) by stage, ns.
    pub cpu_stage_ns: Vec<[u64; CpuStage::COUNT]>,
    /// `/proc/interrupts` rows: device IRQs, then system vectors.
    pub interrupts: Vec<InterruptRow>,
    /// IPIs received per CPU (function-call IPIs for remote completion, wake-ups).
    pub ipis_per_cpu: Vec<u64>,
    /// Device MSIs are posted (`intremap=posted_msi`).
    pub posted_msi: bool,
    /// Per CPU: MSIs, notifications, handler runs.
    pub msi_per_cpu: Vec<MsiCpuStats>,
    /// Root ports, then each socket's IOMMU.
    pub interrupt_path: Vec<PathStats>,
    /// Block devices that did I/O.
    pub disks: Vec<DiskStats>,
    /// Virtual time simulated, ns.
    pub sim_time_ns: u64,
    /// Events processed by the event loop.
    pub events: u64,
    /// The seed of the run.
    pub seed: u64,
    /// Bandwidth/IOPS sample interval, ns.
    pub sample_interval_ns: u64,
    /// DSA clients: what each got done.
    pub dsa: Vec<DsaStats>,
    /// Scheduler locks.
    pub locks: Vec<LockReport>,
    /// I/O schedulers that keep counters of what they decided (kyber's
    /// domain depths and throttled dispatches), per device.
    pub schedulers: Vec<SchedulerReport>,
    /// The timeline, when one was asked for.
    pub trace: Option<super::trace::Trace>,
    /// The exactly-once counts.
    pub invariants: Invariants,
    /// What CPU hotplug did.
    pub hotplug: HotplugStats,
    /// What GSIM did (`--patch gsim`).
    pub gsim: Option<GsimStats>,
    /// The `--patch`es whose code the run reached (a patch given and not
    /// here changed nothing: `crate::run::idle_patches`).
    pub patches_in_effect: Vec<&'static str>,
}

/// MSI counters for the exactly-once invariant.
#[derive(Clone, Debug, Default)]
pub struct MsiCounters {
    /// Messages the devices sent.
    pub sent: u64,
    /// Messages that found their vector already pending in IRR and merged.
    pub merged: u64,
    /// Messages that set IRR and were later delivered to a handler.
    pub delivered: u64,
    /// Messages on their way (taken by the IOMMU, not yet at the LAPIC or PIR).
    pub in_flight: u64,
}

/// The exactly-once counts of a run: each I/O completes once, each MSI is
/// handled once (the JSON shows them as `exactly_once`).
#[derive(Clone, Debug, Default)]
pub struct Invariants {
    /// I/Os the jobs issued.
    pub ios_issued: u64,
    /// I/Os fio reaped.
    pub ios_reaped: u64,
    /// Requests still allocated at the end, or counted in flight by an I/O
    /// scheduler (0 when every one completed once).
    pub requests_live: u64,
    /// MSIs: sent, merged, delivered, on their way.
    pub msi: MsiCounters,
    /// MSIs still pending at the end: on their way, or in an IRR or PIR.
    pub msi_pending: u64,
}

/// What CPU hotplug did over a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HotplugStats {
    /// CPUs taken offline.
    pub cpus_down: u64,
    /// CPUs brought back online.
    pub cpus_up: u64,
    /// Tasks moved off a CPU going down.
    pub task_migrations: u64,
    /// IRQs moved to another CPU of their mask by `fixup_irqs`.
    pub irqs_moved: u64,
    /// Managed IRQs shut down (no online CPU left in their mask).
    pub irqs_shut_down: u64,
    /// Managed IRQs started again when a CPU of their mask came back.
    pub irqs_started: u64,
    /// Times a take-down waited for its hardware queues to drain.
    pub drain_waits: u64,
}
