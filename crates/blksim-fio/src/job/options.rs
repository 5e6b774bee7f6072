//! The option table: every option fio 3.42 knows (its `options.c` table, the
//! built-in profiles' options and the options of the engines blksim
//! simulates), each with its value syntax and blksim's decision: modelled
//! (mapped into `JobConfig`), a no-op for a simulated run, or rejected.

/// The syntax of an option's value, after fio's option types.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    /// `FIO_OPT_STR_SET`: a bare flag, or `=N` (non-zero sets it).
    Flag,
    /// `FIO_OPT_BOOL`: `=0` or `=1`.
    Bool,
    /// `FIO_OPT_INT`/`STR_VAL`: one integer with size suffixes.
    Int { min: u64, max: u64 },
    /// An integer per direction (`bs=8k,32k`).
    IntDirs { min: u64 },
    /// A size that may be a percentage or a zone count (`FIO_OPT_STR_VAL_ZONE`).
    Size,
    /// `FIO_OPT_STR_VAL_TIME`; `seconds`: no suffix means seconds.
    Time { seconds: bool },
    /// A time, or a `lo-hi` range of times (`startdelay`).
    TimeRange,
    /// A time per direction (`max_latency=10ms,20ms`; microseconds without a suffix).
    TimeDirs,
    /// `FIO_OPT_STR` with valid values.
    Choice(&'static [&'static str]),
    /// `FIO_OPT_STR_STORE`: any text, the `=` required.
    Text,
    /// `FIO_OPT_STR` handled by a callback: any text or none.
    OptText,
    /// `FIO_OPT_FLOAT_LIST`.
    Floats { max_len: usize, min: f64, max: f64 },
    /// `FIO_OPT_RANGE` (`bsrange`).
    Range,
    /// `FIO_OPT_DEPRECATED`: fio fails on it.
    Deprecated,
    /// `FIO_OPT_SOFT_DEPRECATED`: fio warns and ignores it.
    SoftDeprecated,
}

/// The `JobConfig` setting a modelled option writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field {
    Name,
    Rw,
    RwMixRead,
    RwMixWrite,
    Bs,
    BlockAlign,
    RandomDistribution,
    BsRange,
    IoDepth,
    BatchSubmit,
    BatchCompleteMin,
    BatchCompleteMax,
    IoDepthLow,
    IoEngine,
    Direct,
    Buffered,
    CpusAllowed,
    CpuMask,
    CpusPolicy,
    NumaCpuNodes,
    Filename,
    Directory,
    Size,
    Offset,
    OffsetIncrement,
    Runtime,
    TimeBased,
    RampTime,
    StartDelay,
    NoRandomMap,
    SoftRandomMap,
    SubmitMode,
    SerializeOverlap,
    RandRepeat,
    RandSeed,
    RandomGenerator,
    RateIops,
    Rate,
    RateMin,
    RateIopsMin,
    RateCycle,
    PercRand,
    FileService,
    RwSequencer,
    RateProcess,
    RateIgnoreThinktime,
    Thinktime,
    ThinktimeSpin,
    ThinktimeBlocks,
    Thinkcycles,
    ThinktimeBlocksType,
    ThinktimeIotime,
    BsSplit,
    BsUnaligned,
    BsIsSeqRand,
    OffsetAlign,
    IoSize,
    NumberIos,
    Fsync,
    Fdatasync,
    EndFsync,
    SyncIo,
    FsyncOnClose,
    NumRange,
    ZoneMode,
    FileSize,
    ZoneSize,
    ZoneRange,
    ZoneSkip,
    Loops,
    NumJobs,
    GroupReporting,
    Thread,
    GtodReduce,
    ClatPercentiles,
    LatPercentiles,
    SlatPercentiles,
    PercentileList,
    Description,
    UnifiedRwReporting,
    SignificantFigures,
    UnitBase,
    Stonewall,
    ContinueOnError,
    IgnoreError,
    ExitallOnError,
    MaxLatency,
    LatencyTarget,
    LatencyWindow,
    LatencyPercentile,
    LatencyRun,
    Exitall,
    ExitWhat,
    IoScheduler,
    NewGroup,
    KbBase,
    Hipri,
    FixedBufs,
    RegisterFiles,
    SqThreadPoll,
    SqThreadPollCpu,
    CmdType,
    // Log files (`write_*_log`, `log_*`) and what decides which latencies they hold.
    WriteBwLog,
    WriteLatLog,
    WriteIopsLog,
    WriteHistLog,
    WriteIolog,
    ReadIolog,
    Verify,
    DoVerify,
    VerifyPattern,
    VerifyBacklog,
    VerifyBacklogBatch,
    ExperimentalVerify,
    VerifyStateSave,
    VerifyStateLoad,
    VerifyAsync,
    VerifyAsyncCpus,
    Flow,
    FlowId,
    FlowSleep,
    ReplayNoStall,
    ReplayRedirect,
    ReplayScale,
    ReplayAlign,
    ReplayTimeScale,
    ReplaySkip,
    MergeBlktraceFile,
    MergeBlktraceScalars,
    MergeBlktraceIters,
    LogAvgMsec,
    LogHistMsec,
    LogHistCoarseness,
    LogWindowValue,
    LogOffset,
    LogAlternateEpoch,
    DiskUtil,
    LogPrio,
    LogIssueTime,
    Prio,
    PrioClass,
    PrioHint,
    CmdprioPercentage,
    CmdprioClass,
    Cmdprio,
    CmdprioHint,
    CmdprioBssplit,
    PerJobLogs,
    BwAvgTime,
    IopsAvgTime,
    DisableLat,
    DisableClat,
    DisableSlat,
    DisableBw,
}

/// What blksim does with an option.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Decision {
    Model(Field),
    /// Accepted (its value checked like fio does) and ignored: the reason
    /// says why it does not change a simulated run.
    NoOp(&'static str),
    /// Rejected with the reason, unless its value is one of `unless` (values
    /// that leave the job as fio's defaults do).
    Reject {
        why: &'static str,
        unless: &'static [&'static str],
    },
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct OptSpec {
    pub name: &'static str,
    pub alias: Option<&'static str>,
    pub kind: Kind,
    pub decision: Decision,
    /// fio applies a section's options by priority, highest first
    /// (`kb_base` before sizes, `filename` after `directory`).
    pub prio: i8,
}

impl OptSpec {
    pub fn matches(&self, name: &str) -> bool {
        self.name == name || self.alias == Some(name)
    }
}

// Reasons for no-ops.
const RANDOM: &str = "only seeds or selects fio's random number generator";
const LOG_MEMORY: &str = "only changes how fio keeps its logs in memory while it runs";
const LOG_COMPRESSION: &str =
    "makes fio keep its logs compressed in memory; blksim writes the logs fio writes without it \
     (fio 3.33 was seen to add bw and iops samples with it, at the wall-clock times its helper thread wakes)";
const LOG_CLOCK: &str = "every clock reads blksim's virtual clock, which starts at 0 (the report's date is the Unix \
     epoch plus the simulated time)";
const REPORT_TRIM_ERRORS: &str =
    "adds a histogram of trim errors to fio's report; blksim simulates no I/O errors and prints none";
const DATA: &str = "only changes the data in the buffers, which does not change the simulated I/O";
const ERRORS: &str = "only changes what fio prints about an error";
const SETUP: &str = "only affects laying out or cleaning up files, outside the measured I/O";
const OUTPUT: &str = "only changes how fio formats its report";
const PROFILE_OPT: &str = "is an option of a built-in fio profile and has no effect without profile=";
const COMPANION: &str = "only matters together with an option that blksim rejects or does not model";
const PROCESS: &str = "only changes the job's process setup (credentials, memory), not its I/O";
const SOFT_DEPRECATED: &str = "is deprecated and ignored by fio";
const PATH_DETAIL: &str = "is a detail of the engine's submission that blksim does not distinguish";
const DEPRECATED: &str = "is deprecated, and fio rejects it";

// Reasons for rejections.
const VERIFY: &str = "changes data verification in a way blksim does not model (verify, do_verify, verify_backlog, verify_async and experimental_verify are modelled)";
const VERIFY_CPU: &str = "moves where in a block the checksum sits, which changes no I/O and no CPU time per byte";
const PATTERN: &str = "changes which offsets or block sizes the job uses, which blksim does not model";
const AMOUNT: &str = "changes how much I/O the job does in a way blksim does not model (size, io_size, number_ios, loops and runtime are modelled)";
const ZONED: &str = "needs a zoned block device, which blksim does not model";
const FILES: &str = "works with files in a filesystem, which blksim does not model (it simulates block devices)";
const SYNC: &str = "adds flush or sync operations that blksim does not model (fsync, fdatasync, end_fsync, fsync_on_close and sync are modelled)";
const PRIO: &str = "sets I/O or CPU priorities, which blksim does not model";
const NUMA_MEM: &str = "places the job's buffers on chosen NUMA nodes, which blksim does not model (it takes them to be local to the job's CPU, as default and local place them)";
const NVME: &str =
    "uses NVMe command features (placement, protection information, FUA, write modes) that blksim does not model";
const CHUNKED: &str = "reads the replayed log in parts as it goes, which changes fio's memory use, not the I/O";
const LOG_COMPRESSED: &str = "stores the log files compressed (.fz), which blksim does not write";
const EXEC: &str = "runs an external command, which blksim does not do";
const ENGINE_PATH: &str = "changes how the ioengine submits or reaps I/O in a way blksim does not model";
const WAIT: &str = "makes jobs wait for or stop other jobs, which blksim does not model (stonewall is modelled)";
const REPORT: &str = "changes what fio measures or reports in a way blksim's output does not support";
const CGROUP: &str = "runs the job in a cgroup, which blksim does not model";
const PROFILE: &str = "runs a built-in fio profile, which blksim does not support";
const GPU: &str = "uses GPU memory, which blksim does not model";
const CACHE: &str = "depends on page-cache state, which blksim does not model";
const ATOMIC: &str = "issues atomic writes, which blksim does not model";
const STEADY: &str = "stops the job when a steady state is detected, which blksim does not model";
const DATAPLACE: &str = "uses NVMe flexible data placement, which blksim does not model";
const RAMP_SIZE: &str = "ends the ramp after an amount of I/O, as fio's helper thread checks it now and then; \
     blksim models ramp_time";

const U32: u64 = u32::MAX as u64;
/// fio's limit on the number of jobs (`REAL_MAX_JOBS`).
pub(crate) const MAX_JOBS: usize = 4096;
const INT: Kind = Kind::Int { min: 0, max: U32 };
const PCT: Kind = Kind::Int { min: 0, max: 100 };
const SIZE: Kind = Kind::Int { min: 0, max: u64::MAX };
const SECS: Kind = Kind::Time { seconds: true };
const USECS: Kind = Kind::Time { seconds: false };

const RW_VALUES: &[&str] = &[
    "read",
    "write",
    "trim",
    "randread",
    "randwrite",
    "randtrim",
    "rw",
    "readwrite",
    "randrw",
    "trimwrite",
    "randtrimwrite",
    "filecreate",
    "filestat",
    "filedelete",
];
const VERIFY_VALUES: &[&str] = &[
    "0",
    "md5",
    "crc64",
    "crc32",
    "crc32c-intel",
    "crc32c",
    "crc16",
    "crc7",
    "sha1",
    "sha256",
    "sha512",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "xxhash",
    "meta",
    "pattern",
    "null",
];

const fn spec(name: &'static str, alias: Option<&'static str>, kind: Kind, decision: Decision) -> OptSpec {
    OptSpec { name, alias, kind, decision, prio: 0 }
}
const fn model(name: &'static str, kind: Kind, field: Field) -> OptSpec {
    spec(name, None, kind, Decision::Model(field))
}
const fn model_a(name: &'static str, alias: &'static str, kind: Kind, field: Field) -> OptSpec {
    spec(name, Some(alias), kind, Decision::Model(field))
}
const fn noop(name: &'static str, kind: Kind, why: &'static str) -> OptSpec {
    spec(name, None, kind, Decision::NoOp(why))
}
const fn noop_a(name: &'static str, alias: &'static str, kind: Kind, why: &'static str) -> OptSpec {
    spec(name, Some(alias), kind, Decision::NoOp(why))
}
const fn reject(name: &'static str, kind: Kind, why: &'static str) -> OptSpec {
    spec(name, None, kind, Decision::Reject { why, unless: &[] })
}
const fn reject_a(name: &'static str, alias: &'static str, kind: Kind, why: &'static str) -> OptSpec {
    spec(name, Some(alias), kind, Decision::Reject { why, unless: &[] })
}
const fn reject_unless(name: &'static str, kind: Kind, why: &'static str, unless: &'static [&'static str]) -> OptSpec {
    spec(name, None, kind, Decision::Reject { why, unless })
}
const fn reject_unless_a(
    name: &'static str,
    alias: &'static str,
    kind: Kind,
    why: &'static str,
    unless: &'static [&'static str],
) -> OptSpec {
    spec(name, Some(alias), kind, Decision::Reject { why, unless })
}
const fn prio(mut o: OptSpec, prio: i8) -> OptSpec {
    o.prio = prio;
    o
}

/// fio's general options (`fio_options[]`), in fio's order.
pub(crate) static GENERAL: &[OptSpec] = &[
    // Job description and files.
    model("description", Kind::Text, Field::Description),
    model("name", Kind::Text, Field::Name),
    reject("wait_for", Kind::Text, WAIT),
    prio(model("filename", Kind::Text, Field::Filename), -1),
    prio(reject_unless("lockfile", Kind::Choice(&["none", "exclusive", "readwrite"]), FILES, &["none"]), 1),
    model("directory", Kind::Text, Field::Directory),
    prio(noop("filename_format", Kind::Text, SETUP), -1),
    noop("unique_filename", Kind::Bool, SETUP),
    noop("filetype", Kind::Choice(&["none", "file", "block", "char"]), SETUP),
    reject("opendir", Kind::Text, FILES),
    model_a("rw", "readwrite", Kind::Choice(RW_VALUES), Field::Rw),
    model("rw_sequencer", Kind::Choice(&["sequential", "identical"]), Field::RwSequencer),
    // Applied first (its value depends on no other option) so that a job for
    // an engine blksim rejects is reported as such, not for an option of it.
    prio(model("ioengine", Kind::Text, Field::IoEngine), 2),
    model("iodepth", Kind::Int { min: 1, max: U32 }, Field::IoDepth),
    model_a("iodepth_batch", "iodepth_batch_submit", INT, Field::BatchSubmit),
    model_a("iodepth_batch_complete_min", "iodepth_batch_complete", INT, Field::BatchCompleteMin),
    model("iodepth_batch_complete_max", INT, Field::BatchCompleteMax),
    model("iodepth_low", INT, Field::IoDepthLow),
    model("serialize_overlap", Kind::Bool, Field::SerializeOverlap),
    model("io_submit_mode", Kind::Choice(&["inline", "offload"]), Field::SubmitMode),
    model("size", Kind::Size, Field::Size),
    model_a("io_size", "io_limit", Kind::Size, Field::IoSize),
    reject_unless_a("fill_device", "fill_fs", Kind::Bool, AMOUNT, &["0"]),
    model("filesize", Kind::Int { min: 1, max: u64::MAX }, Field::FileSize),
    reject_unless("file_append", Kind::Bool, FILES, &["0"]),
    model_a("offset", "fileoffset", Kind::Size, Field::Offset),
    model("offset_align", INT, Field::OffsetAlign),
    model("offset_increment", Kind::Size, Field::OffsetIncrement),
    model("number_ios", SIZE, Field::NumberIos),
    model_a("bs", "blocksize", Kind::IntDirs { min: 1 }, Field::Bs),
    model_a("ba", "blockalign", Kind::IntDirs { min: 1 }, Field::BlockAlign),
    model_a("bsrange", "blocksize_range", Kind::Range, Field::BsRange),
    model("bssplit", Kind::Text, Field::BsSplit),
    model_a("bs_unaligned", "blocksize_unaligned", Kind::Flag, Field::BsUnaligned),
    model("bs_is_seq_rand", Kind::Bool, Field::BsIsSeqRand),
    model("randrepeat", Kind::Bool, Field::RandRepeat),
    model("randseed", SIZE, Field::RandSeed),
    model("norandommap", Kind::Flag, Field::NoRandomMap),
    model("softrandommap", Kind::Bool, Field::SoftRandomMap),
    model("random_generator", Kind::Choice(&["tausworthe", "lfsr", "tausworthe64"]), Field::RandomGenerator),
    model(
        "random_distribution",
        Kind::Choice(&["random", "zipf", "pareto", "normal", "zoned", "zoned_abs", "sequence"]),
        Field::RandomDistribution,
    ),
    reject_unless("random_sequence_stride", INT, PATTERN, &["0"]),
    model("percentage_random", Kind::IntDirs { min: 0 }, Field::PercRand),
    noop("percentage_sequential", Kind::Deprecated, DEPRECATED),
    noop("allrandrepeat", Kind::Bool, RANDOM),
    reject_unless_a("nrfiles", "nr_files", INT, FILES, &["1"]),
    noop("openfiles", INT, COMPANION),
    model(
        "file_service_type",
        Kind::Choice(&["random", "zipf", "pareto", "normal", "gauss", "roundrobin", "sequential"]),
        Field::FileService,
    ),
    noop("fallocate", Kind::Choice(&["none", "native", "posix", "keep", "truncate", "0", "1"]), SETUP),
    noop("fadvise_hint", Kind::Choice(&["0", "1", "random", "sequential"]), COMPANION),
    model("fsync", INT, Field::Fsync),
    model("fdatasync", INT, Field::Fdatasync),
    reject_unless("write_barrier", INT, SYNC, &["0"]),
    reject("sync_file_range", Kind::OptText, SYNC),
    model("direct", Kind::Bool, Field::Direct),
    reject_unless("atomic", Kind::Bool, ATOMIC, &["0"]),
    model("buffered", Kind::Bool, Field::Buffered),
    noop("overwrite", Kind::Bool, SETUP),
    model("loops", INT, Field::Loops),
    model("numjobs", Kind::Int { min: 1, max: MAX_JOBS as u64 }, Field::NumJobs),
    model("startdelay", Kind::TimeRange, Field::StartDelay),
    model_a("runtime", "timeout", SECS, Field::Runtime),
    model("time_based", Kind::Flag, Field::TimeBased),
    reject("verify_only", Kind::Flag, VERIFY),
    model("ramp_time", SECS, Field::RampTime),
    reject_unless("ramp_size", SIZE, RAMP_SIZE, &["0"]),
    noop("clocksource", Kind::Choice(&["gettimeofday", "clock_gettime", "cpu"]), OUTPUT),
    noop_a(
        "mem",
        "iomem",
        Kind::Choice(&["malloc", "shm", "shmhuge", "mmap", "mmapshared", "mmaphuge", "cudamalloc"]),
        PROCESS,
    ),
    noop_a("iomem_align", "mem_align", INT, PROCESS),
    // Verification.
    model("verify", Kind::Choice(VERIFY_VALUES), Field::Verify),
    model("do_verify", Kind::Bool, Field::DoVerify),
    noop("verifysort", Kind::SoftDeprecated, SOFT_DEPRECATED),
    noop("verifysort_nr", Kind::SoftDeprecated, SOFT_DEPRECATED),
    noop("verify_interval", INT, VERIFY_CPU),
    noop("verify_offset", INT, VERIFY_CPU),
    model("verify_pattern", Kind::OptText, Field::VerifyPattern),
    noop("verify_pattern_interval", INT, DATA),
    noop("verify_fatal", Kind::Bool, COMPANION),
    noop("verify_dump", Kind::Bool, COMPANION),
    model("verify_async", INT, Field::VerifyAsync),
    model("verify_backlog", SIZE, Field::VerifyBacklog),
    model("verify_backlog_batch", INT, Field::VerifyBacklogBatch),
    model("verify_async_cpus", Kind::OptText, Field::VerifyAsyncCpus),
    model("experimental_verify", Kind::Bool, Field::ExperimentalVerify),
    model("verify_state_load", Kind::Bool, Field::VerifyStateLoad),
    model("verify_state_save", Kind::Bool, Field::VerifyStateSave),
    noop("verify_write_sequence", Kind::Bool, COMPANION),
    noop("verify_header_seed", Kind::Bool, COMPANION),
    reject_unless("trim_percentage", PCT, VERIFY, &["0"]),
    noop("trim_verify_zero", Kind::Bool, COMPANION),
    reject_unless("trim_backlog", SIZE, VERIFY, &["0"]),
    noop("trim_backlog_batch", INT, COMPANION),
    // I/O logs and traces.
    model("write_iolog", Kind::Text, Field::WriteIolog),
    model("read_iolog", Kind::Text, Field::ReadIolog),
    noop("read_iolog_chunked", Kind::Bool, CHUNKED),
    model("replay_no_stall", Kind::Bool, Field::ReplayNoStall),
    model("replay_redirect", Kind::Text, Field::ReplayRedirect),
    model("replay_scale", INT, Field::ReplayScale),
    model("replay_align", INT, Field::ReplayAlign),
    model("replay_time_scale", Kind::Int { min: 1, max: U32 }, Field::ReplayTimeScale),
    model("replay_skip", Kind::OptText, Field::ReplaySkip),
    model("merge_blktrace_file", Kind::Text, Field::MergeBlktraceFile),
    model("merge_blktrace_scalars", Kind::Floats { max_len: 20, min: 0.0, max: f64::MAX }, Field::MergeBlktraceScalars),
    model("merge_blktrace_iters", Kind::Floats { max_len: 20, min: 0.0, max: f64::MAX }, Field::MergeBlktraceIters),
    reject("exec_prerun", Kind::Text, EXEC),
    reject("exec_postrun", Kind::Text, EXEC),
    model("ioscheduler", Kind::Text, Field::IoScheduler),
    // Zoned devices and data placement.
    model("zonemode", Kind::Choice(&["none", "strided", "zbd"]), Field::ZoneMode),
    model("zonesize", SIZE, Field::ZoneSize),
    reject_unless("zonecapacity", SIZE, ZONED, &["0"]),
    model("zonerange", SIZE, Field::ZoneRange),
    model("zoneskip", Kind::Size, Field::ZoneSkip),
    noop("read_beyond_wp", Kind::Bool, COMPANION),
    reject_unless("max_open_zones", INT, ZONED, &["0"]),
    reject_unless("job_max_open_zones", INT, ZONED, &["0"]),
    noop("ignore_zone_limits", Kind::Bool, COMPANION),
    reject("zone_reset_threshold", Kind::Floats { max_len: 1, min: 0.0, max: 1.0 }, ZONED),
    reject("zone_reset_frequency", Kind::Floats { max_len: 1, min: 0.0, max: 1.0 }, ZONED),
    noop("recover_zbd_write_error", Kind::Bool, COMPANION),
    noop("write_zone_remainder", Kind::Bool, COMPANION),
    reject_unless("fdp", Kind::Bool, DATAPLACE, &["0"]),
    reject_unless_a("dataplacement", "data_placement", Kind::Choice(&["none", "fdp", "streams"]), DATAPLACE, &["none"]),
    reject_a("fdp_pli_select", "plid_select", Kind::Choice(&["random", "roundrobin", "scheme"]), DATAPLACE),
    reject_a("fdp_pli", "plids", Kind::OptText, DATAPLACE),
    reject("dp_scheme", Kind::Text, DATAPLACE),
    model("num_range", Kind::Int { min: 0, max: 256 }, Field::NumRange),
    noop("lockmem", SIZE, PROCESS),
    // Mixes, priorities, pacing.
    model("rwmixread", PCT, Field::RwMixRead),
    model("rwmixwrite", PCT, Field::RwMixWrite),
    noop("rwmixcycle", Kind::Deprecated, DEPRECATED),
    noop("comm", Kind::Text, PROCESS),
    reject_unless("nice", Kind::Int { min: 0, max: U32 }, PRIO, &["0"]),
    model("prio", Kind::Int { min: 0, max: 7 }, Field::Prio),
    model("prioclass", Kind::Int { min: 0, max: 3 }, Field::PrioClass),
    model("priohint", Kind::Int { min: 0, max: 1023 }, Field::PrioHint),
    model("thinktime", USECS, Field::Thinktime),
    model("thinktime_spin", USECS, Field::ThinktimeSpin),
    model("thinktime_blocks", INT, Field::ThinktimeBlocks),
    model("thinktime_blocks_type", Kind::Choice(&["complete", "issue"]), Field::ThinktimeBlocksType),
    model("thinktime_iotime", SECS, Field::ThinktimeIotime),
    model("thinkcycles", INT, Field::Thinkcycles),
    model("rate", Kind::IntDirs { min: 0 }, Field::Rate),
    model_a("rate_min", "ratemin", Kind::IntDirs { min: 0 }, Field::RateMin),
    model("rate_iops", Kind::IntDirs { min: 0 }, Field::RateIops),
    model("rate_iops_min", Kind::IntDirs { min: 0 }, Field::RateIopsMin),
    model("rate_process", Kind::Choice(&["linear", "poisson"]), Field::RateProcess),
    model_a("rate_cycle", "ratecycle", INT, Field::RateCycle),
    model("rate_ignore_thinktime", Kind::Bool, Field::RateIgnoreThinktime),
    model("max_latency", Kind::TimeDirs, Field::MaxLatency),
    model("latency_target", USECS, Field::LatencyTarget),
    model("latency_window", USECS, Field::LatencyWindow),
    model("latency_percentile", Kind::Floats { max_len: 1, min: 0.0, max: 100.0 }, Field::LatencyPercentile),
    model("latency_run", Kind::Bool, Field::LatencyRun),
    noop("invalidate", Kind::Bool, SETUP),
    model("sync", Kind::Choice(&["none", "0", "sync", "1", "dsync"]), Field::SyncIo),
    noop("write_hint", Kind::Choice(&["none", "short", "medium", "long", "extreme"]), PATH_DETAIL),
    noop("create_serialize", Kind::Bool, SETUP),
    noop("create_fsync", Kind::Bool, SETUP),
    noop("create_on_open", Kind::Bool, SETUP),
    reject_unless("create_only", Kind::Bool, AMOUNT, &["0"]),
    noop("allow_file_create", Kind::Bool, SETUP),
    noop("allow_mounted_write", Kind::Bool, SETUP),
    reject_unless("pre_read", Kind::Bool, CACHE, &["0"]),
    // CPUs and NUMA.
    model("cpumask", INT, Field::CpuMask),
    model("cpus_allowed", Kind::OptText, Field::CpusAllowed),
    prio(model("cpus_allowed_policy", Kind::Choice(&["shared", "split"]), Field::CpusPolicy), 1),
    model("numa_cpu_nodes", Kind::OptText, Field::NumaCpuNodes),
    reject_unless("numa_mem_policy", Kind::OptText, NUMA_MEM, &["default", "local"]),
    reject("gpu_dev_id", INT, GPU),
    model("end_fsync", Kind::Bool, Field::EndFsync),
    reject_unless("end_syncfs", Kind::Bool, FILES, &["0"]),
    model("fsync_on_close", Kind::Bool, Field::FsyncOnClose),
    noop("unlink", Kind::Bool, SETUP),
    noop("unlink_each_loop", Kind::Bool, SETUP),
    // Job control.
    model("exitall", Kind::Flag, Field::Exitall),
    model("exit_what", Kind::Choice(&["group", "stonewall", "all"]), Field::ExitWhat),
    model("exitall_on_error", Kind::Flag, Field::ExitallOnError),
    model_a("stonewall", "wait_for_previous", Kind::Flag, Field::Stonewall),
    model("new_group", Kind::Flag, Field::NewGroup),
    model("thread", Kind::Flag, Field::Thread),
    // Logs.
    model("per_job_logs", Kind::Bool, Field::PerJobLogs),
    model("write_bw_log", Kind::OptText, Field::WriteBwLog),
    model("write_lat_log", Kind::OptText, Field::WriteLatLog),
    model("write_iops_log", Kind::OptText, Field::WriteIopsLog),
    noop("log_entries", INT, LOG_MEMORY),
    model("log_avg_msec", INT, Field::LogAvgMsec),
    model("log_hist_msec", INT, Field::LogHistMsec),
    model("log_hist_coarseness", Kind::Int { min: 0, max: 6 }, Field::LogHistCoarseness),
    model("write_hist_log", Kind::OptText, Field::WriteHistLog),
    // fio's current name; log_max_value (0 or 1) is its older alias.
    model_a(
        "log_window_value",
        "log_max_value",
        Kind::Choice(&["avg", "max", "both", "0", "1"]),
        Field::LogWindowValue,
    ),
    model("log_offset", Kind::Bool, Field::LogOffset),
    model("log_prio", Kind::Bool, Field::LogPrio),
    model("log_issue_time", Kind::Bool, Field::LogIssueTime),
    noop("log_compression", SIZE, LOG_COMPRESSION),
    noop("log_compression_cpus", Kind::OptText, LOG_MEMORY),
    reject_unless("log_store_compressed", Kind::Bool, LOG_COMPRESSED, &["0"]),
    model_a("log_alternate_epoch", "log_unix_epoch", Kind::Bool, Field::LogAlternateEpoch),
    noop("log_alternate_epoch_clock_id", INT, LOG_CLOCK),
    noop("block_error_percentiles", Kind::Bool, REPORT_TRIM_ERRORS),
    model("bwavgtime", INT, Field::BwAvgTime),
    model("iopsavgtime", INT, Field::IopsAvgTime),
    // Statistics and reporting.
    model("group_reporting", Kind::Flag, Field::GroupReporting),
    reject_unless("stats", Kind::Bool, REPORT, &["1"]),
    noop("zero_buffers", Kind::Flag, DATA),
    noop("refill_buffers", Kind::Flag, DATA),
    noop("scramble_buffers", Kind::Bool, DATA),
    noop("buffer_pattern", Kind::OptText, DATA),
    noop("buffer_compress_percentage", PCT, DATA),
    noop("buffer_compress_chunk", INT, DATA),
    noop("dedupe_percentage", PCT, DATA),
    noop("dedupe_global", Kind::Bool, DATA),
    noop("dedupe_mode", Kind::Choice(&["repeat", "working_set"]), DATA),
    noop("dedupe_working_set_percentage", PCT, DATA),
    model("clat_percentiles", Kind::Bool, Field::ClatPercentiles),
    model("lat_percentiles", Kind::Bool, Field::LatPercentiles),
    model("slat_percentiles", Kind::Bool, Field::SlatPercentiles),
    model("percentile_list", Kind::Floats { max_len: 20, min: 0.0, max: 100.0 }, Field::PercentileList),
    model("significant_figures", Kind::Int { min: 1, max: 10 }, Field::SignificantFigures),
    model("disk_util", Kind::Bool, Field::DiskUtil),
    model("gtod_reduce", Kind::Bool, Field::GtodReduce),
    model("disable_lat", Kind::Bool, Field::DisableLat),
    model("disable_clat", Kind::Bool, Field::DisableClat),
    model("disable_slat", Kind::Bool, Field::DisableSlat),
    model_a("disable_bw_measurement", "disable_bw", Kind::Bool, Field::DisableBw),
    noop("gtod_cpu", INT, OUTPUT),
    noop("job_start_clock_id", INT, LOG_CLOCK),
    model("unified_rw_reporting", Kind::Choice(&["none", "mixed", "both", "0", "1", "2"]), Field::UnifiedRwReporting),
    model(
        "continue_on_error",
        Kind::Choice(&["none", "read", "write", "io", "verify", "all", "0", "1"]),
        Field::ContinueOnError,
    ),
    model("ignore_error", Kind::OptText, Field::IgnoreError),
    noop("error_dump", Kind::Bool, ERRORS),
    reject("profile", Kind::Text, PROFILE),
    reject("cgroup", Kind::Text, CGROUP),
    noop("cgroup_nodelete", Kind::Bool, COMPANION),
    noop("cgroup_weight", INT, COMPANION),
    noop("uid", INT, PROCESS),
    noop("gid", INT, PROCESS),
    prio(model("kb_base", Kind::Choice(&["1024", "1000"]), Field::KbBase), 1),
    prio(model("unit_base", Kind::Choice(&["0", "8", "1"]), Field::UnitBase), 1),
    noop("hugepage-size", SIZE, PROCESS),
    model("flow_id", INT, Field::FlowId),
    model("flow", Kind::Int { min: 0, max: 1000 }, Field::Flow),
    noop("flow_watermark", Kind::SoftDeprecated, SOFT_DEPRECATED),
    model("flow_sleep", INT, Field::FlowSleep),
    reject_a("steadystate", "ss", Kind::OptText, STEADY),
    reject_unless_a("steadystate_duration", "ss_dur", SECS, STEADY, &["0"]),
    noop_a("steadystate_ramp_time", "ss_ramp", SECS, COMPANION),
    noop_a("steadystate_check_interval", "ss_interval", SECS, COMPANION),
    reject_unless("sprandom", Kind::Bool, PATTERN, &["0"]),
    noop("spr_op", Kind::Floats { max_len: 1, min: 0.0, max: 1.0 }, COMPANION),
    noop("spr_num_regions", INT, COMPANION),
    noop("spr_cs", INT, COMPANION),
    // Options of fio's built-in profiles (tiobench, act), which fio adds to its table.
    noop("block", INT, PROFILE_OPT),
    noop("numruns", INT, PROFILE_OPT),
    noop("dir", Kind::Text, PROFILE_OPT),
    noop("threads", INT, PROFILE_OPT),
    noop("device-names", Kind::Text, PROFILE_OPT),
    noop("load", INT, PROFILE_OPT),
    noop("test-duration", SECS, PROFILE_OPT),
    noop("threads-per-queue", INT, PROFILE_OPT),
    noop("read-req-num-512-blocks", INT, PROFILE_OPT),
    noop("large-block-op-kbytes", INT, PROFILE_OPT),
    noop("prep", Kind::Flag, PROFILE_OPT),
];

/// Options of the io_uring and io_uring_cmd engines (one table in fio).
pub(crate) static IO_URING: &[OptSpec] = &[
    model("hipri", Kind::Flag, Field::Hipri),
    reject_unless("readfua", Kind::Bool, NVME, &["0"]),
    reject_unless("writefua", Kind::Bool, NVME, &["0"]),
    reject_unless("write_mode", Kind::OptText, NVME, &["write"]),
    model("fixedbufs", Kind::Flag, Field::FixedBufs),
    model("registerfiles", Kind::Flag, Field::RegisterFiles),
    model("sqthread_poll", Kind::Flag, Field::SqThreadPoll),
    model("sqthread_poll_cpu", INT, Field::SqThreadPollCpu),
    noop("nonvectored", Kind::Int { min: 0, max: u64::MAX }, PATH_DETAIL),
    noop("uncached", Kind::SoftDeprecated, SOFT_DEPRECATED),
    reject_unless("nowait", Kind::Bool, ENGINE_PATH, &["0"]),
    reject_unless("force_async", INT, ENGINE_PATH, &["0"]),
    model("cmd_type", Kind::Choice(&["nvme", "bsg"]), Field::CmdType),
    model("cmdprio_percentage", Kind::IntDirs { min: 0 }, Field::CmdprioPercentage),
    model("cmdprio_class", Kind::IntDirs { min: 1 }, Field::CmdprioClass),
    model("cmdprio", Kind::IntDirs { min: 0 }, Field::Cmdprio),
    model("cmdprio_hint", Kind::IntDirs { min: 0 }, Field::CmdprioHint),
    model("cmdprio_bssplit", Kind::OptText, Field::CmdprioBssplit),
    reject_unless("md_per_io_size", INT, NVME, &["0"]),
    reject("pi_act", Kind::Bool, NVME),
    reject("pi_chk", Kind::Text, NVME),
    reject("apptag", INT, NVME),
    reject("apptag_mask", INT, NVME),
    reject_unless("verify_mode", Kind::Choice(&["read", "compare"]), NVME, &["read"]),
    reject_unless("deac", Kind::Bool, NVME, &["0"]),
];

/// Options of the libaio engine.
pub(crate) static LIBAIO: &[OptSpec] = &[
    reject_unless("userspace_reap", Kind::Flag, ENGINE_PATH, &["0"]),
    noop("libaio_vectored", Kind::Bool, PATH_DETAIL),
    model("cmdprio_percentage", Kind::IntDirs { min: 0 }, Field::CmdprioPercentage),
    model("cmdprio_class", Kind::IntDirs { min: 1 }, Field::CmdprioClass),
    model("cmdprio", Kind::IntDirs { min: 0 }, Field::Cmdprio),
    model("cmdprio_hint", Kind::IntDirs { min: 0 }, Field::CmdprioHint),
    model("cmdprio_bssplit", Kind::OptText, Field::CmdprioBssplit),
    reject_unless("nowait", Kind::Bool, ENGINE_PATH, &["0"]),
];

/// Options of the pvsync2 engine.
pub(crate) static PVSYNC2: &[OptSpec] = &[
    model("hipri", Kind::Flag, Field::Hipri),
    reject_unless("hipri_percentage", PCT, ENGINE_PATH, &["100"]),
    noop("uncached", Kind::SoftDeprecated, SOFT_DEPRECATED),
    reject_unless("nowait", Kind::Bool, ENGINE_PATH, &["0"]),
];

/// Reasons of no-op options that would change a real fio run's output (its report or the files it
/// writes) although they change nothing in a simulated one: blksim warns once per run about each.
const CHANGES_REAL_OUTPUT: &[&str] = &[LOG_COMPRESSION, REPORT_TRIM_ERRORS];

/// The values of warned options that leave fio's output as it is by default (no warning for them).
pub(crate) fn default_values(name: &str) -> &'static [&'static str] {
    match name {
        "block_error_percentiles" | "log_compression" => &["0"],
        _ => &[],
    }
}

/// Would this no-op option (with this reason) change a real run's output?
pub(crate) fn changes_real_output(why: &str) -> bool {
    CHANGES_REAL_OUTPUT.contains(&why)
}

/// The syntax of a value of `kind`, in fio's words (`fio --cmdhelp` prints the type).
pub(crate) fn syntax(kind: Kind) -> String {
    let s = match kind {
        Kind::Flag => "flag",
        Kind::Bool => "bool",
        Kind::Int { .. } => "int",
        Kind::IntDirs { .. } => "int[,int][,int]",
        Kind::Size => "size",
        Kind::Time { .. } => "time",
        Kind::TimeDirs => "time[,time][,time]",
        Kind::TimeRange => "time[-time]",
        Kind::Choice(values) => return values.join("|"),
        Kind::Text => "str",
        Kind::OptText => "[str]",
        Kind::Floats { .. } => "float[:float]...",
        Kind::Range => "range",
        Kind::Deprecated => "deprecated",
        Kind::SoftDeprecated => "deprecated (ignored)",
    };
    s.to_string()
}

/// The option named `name` (or with that alias) in `table`.
pub(crate) fn find<'t>(table: &'t [OptSpec], name: &str) -> Option<&'t OptSpec> {
    table.iter().find(|o| o.matches(name))
}

/// fio's "Did you mean ...?": the closest general option name, if close enough.
pub(crate) fn closest(name: &str) -> Option<&'static str> {
    closest_of(name, GENERAL.iter().map(|o| o.name))
}

/// The name of `names` closest to `name` (fio's string_distance), if close enough to be a typo of it.
pub(crate) fn closest_of<'a>(name: &str, names: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let best = names.map(|n| (distance(name, n), n)).min()?;
    let ok = best.0 <= name.len().div_ceil(2);
    ok.then_some(best.1)
}

/// Levenshtein distance, as fio's `string_distance`.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_and_aliases_are_unique_per_table() {
        for table in [GENERAL, IO_URING, LIBAIO, PVSYNC2] {
            let mut seen = HashSet::new();
            for o in table {
                assert!(seen.insert(o.name), "duplicate {}", o.name);
                if let Some(a) = o.alias {
                    assert!(seen.insert(a), "duplicate alias {a}");
                }
            }
        }
    }

    #[test]
    fn engine_options_do_not_shadow_general_ones() {
        for table in [IO_URING, LIBAIO, PVSYNC2] {
            for o in table {
                assert!(find(GENERAL, o.name).is_none(), "{} is also a general option", o.name);
            }
        }
    }

    #[test]
    fn lookup_by_alias_and_suggestions() {
        assert_eq!(find(GENERAL, "readwrite").unwrap().name, "rw");
        assert_eq!(find(GENERAL, "blocksize").unwrap().name, "bs");
        assert_eq!(find(GENERAL, "iodepth_batch_submit").unwrap().name, "iodepth_batch");
        assert_eq!(find(GENERAL, "iodepth_batch_complete").unwrap().name, "iodepth_batch_complete_min");
        assert_eq!(find(GENERAL, "wait_for_previous").unwrap().name, "stonewall");
        assert_eq!(find(GENERAL, "timeout").unwrap().name, "runtime");
        assert!(find(GENERAL, "Bs").is_none(), "names are case-sensitive");
        assert_eq!(closest("iodepht"), Some("iodepth"));
        assert_eq!(closest("zzzzzzzzzzzzzzzzzzzzz"), None);
    }
}
