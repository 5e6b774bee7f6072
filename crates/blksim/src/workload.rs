//! The workload the model runs: jobs as fio describes them, already resolved
//! (inheritance, units, clones, CPU masks done by the job-file parser).

/// One data direction, in fio's order (read, write, trim).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Direction {
    /// Reads.
    Read = 0,
    /// Writes.
    Write = 1,
    /// Trims.
    Trim = 2,
}

impl Direction {
    /// The three, in fio's order.
    pub const ALL: [Direction; 3] = [Direction::Read, Direction::Write, Direction::Trim];
    /// Its index in fio's per-direction arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// Its name as fio prints it (`io_ddir_name`): read, write, trim.
    pub fn name(self) -> &'static str {
        ["read", "write", "trim"][self.index()]
    }
}

/// `JobConfig::lat_off`: `disable_slat`.
pub const LAT_OFF_SLAT: u8 = 1;
/// `JobConfig::lat_off`: `disable_clat`.
pub const LAT_OFF_CLAT: u8 = 2;
/// `JobConfig::lat_off`: `disable_lat`.
pub const LAT_OFF_LAT: u8 = 4;

/// fio's `random_generator`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RandomGenerator {
    /// Not given: taus88, or taus258 for a file of more than 2^32 of the
    /// job's smallest blocks (fio's check_rand_gen_limits switches).
    #[default]
    Default,
    /// `tausworthe`: taus88 (32 bits) even for a file of more blocks.
    Tausworthe,
    /// `tausworthe64`: taus258.
    Tausworthe64,
    /// `lfsr`: fio's LFSR, each block once per pass without a random map.
    Lfsr,
}

impl RandomGenerator {
    /// `random_generator=lfsr`.
    pub fn is_lfsr(self) -> bool {
        self == RandomGenerator::Lfsr
    }
}

/// fio's `rw=` pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RwKind {
    /// `read`: sequential reads.
    Read,
    /// `write`: sequential writes.
    Write,
    /// `trim`: sequential trims.
    Trim,
    /// `randread`.
    RandRead,
    /// `randwrite`.
    RandWrite,
    /// `randtrim`.
    RandTrim,
    /// `rw`/`readwrite`: sequential mixed reads and writes.
    ReadWrite,
    /// `randrw`: random mixed reads and writes.
    RandRw,
    /// `trimwrite`: a trim then a write of each block.
    TrimWrite,
    /// `randtrimwrite`.
    RandTrimWrite,
}

impl RwKind {
    /// Does it write (fio's `td_write`)?
    pub fn writes(self) -> bool {
        matches!(
            self,
            RwKind::Write
                | RwKind::RandWrite
                | RwKind::ReadWrite
                | RwKind::RandRw
                | RwKind::TrimWrite
                | RwKind::RandTrimWrite
        )
    }
    /// A read/write mix (`rw`, `randrw`): rwmixread draws each run's direction.
    pub fn is_mixed(self) -> bool {
        matches!(self, RwKind::ReadWrite | RwKind::RandRw)
    }
    /// Are the offsets random?
    pub fn is_random(self) -> bool {
        matches!(self, RwKind::RandRead | RwKind::RandWrite | RwKind::RandTrim | RwKind::RandRw | RwKind::RandTrimWrite)
    }
    /// fio's name, as printed in the job header line (`rw=randread`).
    pub fn fio_name(self) -> &'static str {
        match self {
            RwKind::Read => "read",
            RwKind::Write => "write",
            RwKind::Trim => "trim",
            RwKind::RandRead => "randread",
            RwKind::RandWrite => "randwrite",
            RwKind::RandTrim => "randtrim",
            RwKind::ReadWrite => "rw",
            RwKind::RandRw => "randrw",
            RwKind::TrimWrite => "trimwrite",
            RwKind::RandTrimWrite => "randtrimwrite",
        }
    }
}

/// The ioengine a job uses, with the engine options that change the I/O path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IoEngine {
    /// `sync` (read/write) and `psync` (pread/pwrite): one blocking syscall per I/O.
    Sync,
    /// `psync`: pread/pwrite.
    Psync,
    /// `pvsync`: preadv/pwritev of one iovec (the kernel's path of `pvsync2` without flags).
    Pvsync,
    /// `pvsync2`: preadv2/pwritev2, optionally RWF_HIPRI (polled).
    Pvsync2 {
        /// RWF_HIPRI: polled completion.
        hipri: bool,
    },
    /// `libaio`: io_submit/io_getevents.
    Libaio,
    /// `io_uring`, with its options.
    IoUring(IoUringOptions),
    /// `io_uring_cmd` with `cmd_type=nvme`: NVMe passthrough on the char device.
    IoUringCmd(IoUringOptions),
    /// fio's `null` engine: no kernel I/O at all.
    Null,
    /// `posixaio`: glibc's POSIX AIO (`aio_read`/`aio_write`, `aio_error`,
    /// `aio_suspend`), which does each request with a blocking pread/pwrite
    /// on a helper thread, one request of a file descriptor at a time.
    Posixaio,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
/// io_uring's engine options that change the I/O path.
pub struct IoUringOptions {
    /// IORING_SETUP_IOPOLL (`hipri`).
    pub hipri: bool,
    /// `fixedbufs`: READ_FIXED/WRITE_FIXED on pre-registered buffers.
    pub fixedbufs: bool,
    /// `registerfiles`: IOSQE_FIXED_FILE.
    pub registerfiles: bool,
    /// `sqthread_poll`: IORING_SETUP_SQPOLL.
    pub sqthread_poll: bool,
    /// `sqthread_poll_cpu`, if set.
    pub sqthread_poll_cpu: Option<u32>,
    /// The ring's fd is registered (`IORING_REGISTER_RING_FDS`, t/io_uring's
    /// `-X1`): `io_uring_enter` takes no `fdget`/`fdput` of it. fio's engine
    /// does not register it.
    pub register_ring: bool,
}

impl IoEngine {
    /// fio's name for the engine (`ioengine=`).
    pub fn fio_name(&self) -> &'static str {
        match self {
            IoEngine::Sync => "sync",
            IoEngine::Psync => "psync",
            IoEngine::Pvsync => "pvsync",
            IoEngine::Pvsync2 { .. } => "pvsync2",
            IoEngine::Libaio => "libaio",
            IoEngine::IoUring(_) => "io_uring",
            IoEngine::IoUringCmd(_) => "io_uring_cmd",
            IoEngine::Null => "null",
            IoEngine::Posixaio => "posixaio",
        }
    }
    /// Synchronous engines have no submission latency (fio prints no slat).
    pub fn is_sync(&self) -> bool {
        matches!(self, IoEngine::Sync | IoEngine::Psync | IoEngine::Pvsync | IoEngine::Pvsync2 { .. })
    }

    /// fio's FIO_ASYNCIO_SYNC_TRIM: an asynchronous engine whose queue hook
    /// trims with a blocking BLKDISCARD (`do_io_u_trim`) and returns the
    /// trim completed.
    pub fn sync_trims(&self) -> bool {
        matches!(self, IoEngine::Libaio | IoEngine::Posixaio)
    }

    /// Whether a failed I/O of `dir` completed inside the engine's queue hook
    /// (FIO_Q_COMPLETED: fio takes its error in `td_io_queue`): io_uring's
    /// trims fail there too, as it trims from the hook once one through its
    /// ring failed (the ring's failure itself is no error to fio).
    pub fn completes_in_queue(&self, dir: Direction) -> bool {
        self.is_sync() || (dir == Direction::Trim && (self.sync_trims() || matches!(self, IoEngine::IoUring(_))))
    }
}

/// Which program's I/O loop a job runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Program {
    /// fio's do_io loop, with fio's per-I/O bookkeeping.
    #[default]
    Fio,
    /// fio's `t/io_uring`: the same queue/commit/reap shape with a lean user-space loop
    /// (fill an SQE, read a CQE; no per-I/O statistics).
    TIoUring,
    /// io_uring's SQ thread (`iou-sqp`) of an `sqthread_poll` ring: a kernel
    /// thread the model adds for such a job (not a fio job of its own).
    SqThread,
    /// glibc's AIO helper thread (`handle_fildes_io`) of a `posixaio` job:
    /// a thread of fio's process the model adds for such a job.
    AioHelper,
    /// fio's verify thread (`verify_async_thread`) of a `verify_async` job:
    /// a thread of fio's process the model adds for such a job.
    VerifyThread,
}

/// `zonemode=strided` (fio's `setup_strided_zone_mode`): `size` bytes of
/// I/O in a zone of `range` bytes, then the next zone `range + skip` further.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strided {
    /// `zonesize`: bytes of I/O in a zone before the next.
    pub size: u64,
    /// `zonerange`: the zone's length (`zonesize` when not given).
    pub range: u64,
    /// `zoneskip`: bytes skipped between one zone's end and the next one's start.
    pub skip: u64,
}

/// One fio job (a clone of a `numjobs` job is a job of its own).
///
/// Fields in declaration order (repr(C)): what a job reads on every I/O
/// first, on the same few cache lines.
#[derive(Clone, Debug, PartialEq)]
#[repr(C)]
pub struct JobConfig {
    /// Index of the stonewall phase: jobs of phase k start when every job of
    /// phase k-1 has finished.
    pub phase: u32,
    /// `rw`.
    pub rw: RwKind,
    /// Percentage of reads in mixed workloads (`rwmixread`).
    pub rwmixread: u32,
    /// Block size per direction (read, write, trim), bytes.
    pub bs: [u64; 3],
    /// `bsrange`'s largest size per direction (fio's `max_bs`; `bs` is its
    /// smallest): each I/O's size drawn between them as fio's
    /// `get_next_buflen` draws it. 0 (or `bs`): one size.
    pub bs_max: [u64; 3],
    /// `bs_unaligned`: a drawn size is not aligned to the smallest.
    pub bs_unaligned: bool,
    /// `bs_is_seq_rand`: an I/O's size is drawn as a read's when its offset was sequential,
    /// as a write's when random, whatever its direction (get_next_buflen).
    pub bs_is_seq_rand: bool,
    /// The run's `IoLog` hears each I/O as fio queues it (`write_iolog`).
    pub log_queued: bool,
    /// `iodepth`.
    pub iodepth: u32,
    /// Resolved: never 0 and never above iodepth.
    pub iodepth_batch_submit: u32,
    /// 0 means reap without waiting.
    pub iodepth_batch_complete_min: u32,
    /// `iodepth_batch_complete_max`.
    pub iodepth_batch_complete_max: u32,
    /// `iodepth_low`.
    pub iodepth_low: u32,
    /// `ioengine`, with its options.
    pub ioengine: IoEngine,
    /// Bytes of I/O region per file (`size`); `None` = the whole device.
    pub size: Option<u64>,
    /// Start offset in bytes (`offset`).
    pub offset: u64,
    /// `number_ios`: stop after this many I/Os (0 = no limit).
    pub number_ios: u64,
    /// `fsync` and `fdatasync`: an fsync(2) or fdatasync(2) of the file
    /// after every that many writes issued (0: never). fio's `get_rw_ddir`.
    pub sync_every: [u64; 2],
    /// `end_fsync` or `fsync_on_close`: an fsync of each file when the job's
    /// I/O is done (fio's `do_io` end, in state TD_FSYNCING: not accounted).
    pub end_fsync: bool,
    /// `sync=sync|1|dsync`: fio opens the file O_SYNC or O_DSYNC. A sync
    /// engine's direct write then ends with `generic_write_sync` (an fsync of
    /// its range: `blkdev_fsync`); an async one's bio carries REQ_FUA.
    pub dsync: bool,
    /// `num_range`: the ranges of each trim (fio's `fill_multi_range_io_u`
    /// draws that many offsets for one io_u; io_uring_cmd only), 1 by default.
    pub num_range: u32,
    /// `zonemode=strided` (or `zonesize` alone, as fio takes it), one file only.
    pub strided: Option<Strided>,
    /// `filesize` on the null engine: its file's size as fio knows it (its
    /// `real_file_size`: `u64::MAX` when fio does not) and the job's region of it.
    pub null_file: Option<(u64, u64)>,
    /// fio's `io_size` of each of several files (setup_files): `size=` in
    /// bytes shared among them (`size / nr_files`, the first files a block
    /// more for a remainder of whole blocks), or a percentage of each; empty
    /// for one file, or without `size` (each file whole).
    pub file_regions: Vec<u64>,
    /// `file_service_type`, for a job of several files.
    pub file_service: FileService,
    /// The null engine's start offset once fio's setup_files grew its file
    /// (a percentage `offset` of the grown real_file_size): where its later
    /// loops and passes start, and where io_u_fits and the sequential wrap
    /// measure the region from (fio's later get_start_offset calls); `None`
    /// when it is `offset`.
    pub later_start: Option<u64>,
    /// `gtod_reduce`: no latency statistics.
    pub gtod_reduce: bool,
    /// `disable_slat`, `disable_clat`, `disable_lat` as bits (`LAT_OFF_*`;
    /// all three with `gtod_reduce`): fio keeps no such statistic (a
    /// sync's time is a clat).
    pub lat_off: u8,
    /// The I/O priority fio's `ioprio_set` gives the job's thread (`prioclass`,
    /// `prio`, `priohint` as fio's `ioprio_value`: class << 13 | hint << 3 | level,
    /// class BE when unset); 0 when none is set (the kernel then takes the
    /// task's, best effort). Every I/O not given a `cmdprio` one has it.
    pub ioprio: u16,
    /// `cmdprio_percentage` / `cmdprio_bssplit` (libaio, io_uring): for reads
    /// and writes, the block sizes some I/Os of which get their own priority.
    /// Empty: the direction's I/Os all have `ioprio`.
    pub cmdprio: [Vec<CmdPrio>; 2],
    /// The program whose loop the job runs.
    pub program: Program,
    // Read at setup and for reports only.
    /// The section name (clones share it).
    pub name: String,
    /// fio's `subjob_number`: 0 for a section's job, then its clones count down from
    /// `numjobs - 1` in the order fio makes them.
    pub subjob: u32,
    /// Reporting group (fio's `groupid`).
    pub group_id: u32,
    /// `exitall` (in any job of the file: fio's flag is the program's): when this job ends,
    /// the jobs `exit_what` names are told to end (`fio_terminate_threads`).
    pub exitall: bool,
    /// `exit_what`: which jobs `exitall` and `exitall_on_error` end.
    pub exit_what: ExitWhat,
    /// `max_latency` per direction, ns (0: none): a measured I/O whose `lat` is longer ends the
    /// job with ETIMEDOUT (fio's `lat_fatal`).
    pub max_latency_ns: [u64; 3],
    /// O_DIRECT.
    pub direct: bool,
    /// CPUs the job may run on (already split per job for `cpus_allowed_policy=split`);
    /// `None` means any CPU.
    pub cpus_allowed: Option<Vec<u32>>,
    /// Block devices the job does I/O to (`filename`, `:`-separated), e.g. `/dev/nvme0n1`.
    pub filenames: Vec<String>,
    /// `runtime` in ns; `None` = no limit.
    pub runtime_ns: Option<u64>,
    /// `time_based`: keep going until the runtime is over.
    pub time_based: bool,
    /// `ramp_time` in ns: I/O done but not counted.
    pub ramp_time_ns: u64,
    /// `startdelay` in ns.
    pub startdelay_ns: u64,
    /// `latency_target` (with `latency_window`, `latency_percentile`, `latency_run`).
    pub latency_target: Option<LatencyTarget>,
    /// `ioscheduler`: the scheduler fio writes to `queue/scheduler` of each of
    /// the job's block devices as it sets up (`fio::ioscheduler`).
    pub ioscheduler: Option<String>,
    /// `norandommap`: a random job draws blocks without fio's random map
    /// (blocks may repeat before every one was done). Also set where fio
    /// turns the map off itself (a `random_distribution`, `blockalign`
    /// other than the block size).
    pub norandommap: bool,
    /// fio's `o->norandommap`: given, or set by a random job's `blockalign` or a
    /// `random_distribution` other than `random` (fixup_options; LFSR leaves it unset).
    pub fio_norandommap: bool,
    /// fio's fio_offset_overlap_risk: `norandommap` or `softrandommap` given, `rw=...:N` or a
    /// `ddir_seq_add`; verify then reads the writes back sorted by offset,
    /// else in the order they were issued (fio 3.42's log_io_piece).
    pub offset_overlap_risk: bool,
    /// fio's reset_io_counters keeps the count of files done across passes: neither
    /// time-based, nor over several `loops`, nor `do_verify` (on by default). A pass that
    /// follows one whose files all ran out gets no file, and the job ends.
    pub keeps_done_files: bool,
    /// `io_submit_mode=offload`: fio's `iodepth` submit workers (`rate-submit.c`)
    /// queue the io_us its thread prepares, each at iodepth 1 (`fio/rate_submit.rs`).
    pub offload: bool,
    /// `serialize_overlap`: (with offload) a worker holds an io_u that overlaps one in
    /// flight in any such job until it is done (`rate-submit.c` `check_overlap`).
    pub serialize_overlap: bool,
    /// `random_generator`: fio's generator of random offsets.
    pub random_generator: RandomGenerator,
    /// `randrepeat`: each of the job's `loops` draws the same offsets and sizes (fio's
    /// clear_io_state seeds its generators again); off, a loop goes on with the sequence.
    pub randrepeat: bool,
    /// fio's `td->o.rand_seed` where fio seeds from it (`randrepeat`, or `randseed` given):
    /// the offsets', block sizes' and read/write mix's generators are seeded from it as fio
    /// seeds them (`setup_random_seeds`); without it from the run's seed.
    pub fio_seed: Option<u64>,
    /// `rate_iops` per direction, 0 = unlimited.
    pub rate_iops: [u64; 3],
    /// `loops`.
    pub loops: u32,
    /// `group_reporting`: the job's group is reported as one block.
    pub group_reporting: bool,
    /// `thread`: jobs are threads, not processes (only changes output wording).
    pub thread: bool,
    /// `clat_percentiles`, `lat_percentiles`, `slat_percentiles`.
    pub clat_percentiles: bool,
    /// `lat_percentiles`.
    pub lat_percentiles: bool,
    /// `slat_percentiles`.
    pub slat_percentiles: bool,
    /// `percentile_list`, in percent.
    pub percentile_list: Vec<f64>,
    /// `description`: printed in the report (fio's `ts->description`), nothing else.
    pub description: Option<String>,
    /// `disk_util`: fio's disk statistics list the job's devices (fio's `init_disk_util`).
    pub disk_util: bool,
    /// `unified_rw_reporting`: how the report shows reads, writes and trims.
    pub unified_rw_reporting: UnifiedRw,
    /// `kb_base` (1024 or 1000): which units the report prints first, binary or decimal.
    pub kb_base: u64,
    /// `significant_figures`: digits of the report's scaled numbers (fio's `sig_figs`, 4).
    pub sig_figs: u32,
    /// `unit_base=1`: the report's bandwidths in bits per second (`unit_base=8` or `0`: bytes).
    pub bit_based: bool,
    /// Keep every measured I/O in `DirStats::ios` (fio's `write_lat_log`, `write_bw_log`, ... need them).
    pub record_ios: bool,
    /// `rate` per direction, bytes per second, 0 = unlimited.
    pub rate: [u64; 3],
    /// `rate_process`: when the next I/O of a rated direction may go.
    pub rate_process: RateProcess,
    /// `rate_min` per direction, bytes per second (0 = none): fio's `check_min_rate` ends
    /// the job with EIO when a `rate_cycle` falls below it (`fio/min_rate.rs`).
    pub rate_min: [u64; 3],
    /// `rate_iops_min` per direction, I/Os per second (0 = none), checked as `rate_min` is.
    pub rate_iops_min: [u64; 3],
    /// `rate_cycle` (alias `ratecycle`): the window over which the minimum rate is checked, ms.
    pub rate_cycle_ms: u64,
    /// `rate_ignore_thinktime`: the rate catches up the I/O a think time missed.
    pub rate_ignore_thinktime: bool,
    /// `thinktime` and its companions.
    pub thinktime: Thinktime,
    /// `thinkcycles`: iterations of fio's `cycles_spin` (one PAUSE each on x86) after each
    /// read, write or trim io_u of its main loop.
    pub thinkcycles: u64,
    /// fio's options that change what follows a job's error: an I/O error under
    /// `continue_on_error` or `ignore_error` is refused at run time (fio would go on);
    /// `exitall_on_error` ends others as `exitall` does.
    pub error_options: ErrorOptions,
    /// `bssplit` per direction, as fio keeps it after parsing: (block size,
    /// percentage) sorted by percentage; empty = every I/O is `bs`. With a
    /// split, `bs` holds the direction's smallest size (fio's `min_bs`).
    pub bssplit: [Vec<BsSplit>; 3],
    /// `io_size`: bytes of I/O to do (instead of `size` x `loops`); `None` = not set.
    pub io_size: Option<u64>,
    /// `blockalign` per direction: random offsets are multiples of it; 0 = the direction's `bs` (fio's default, min_bs).
    pub ba: [u64; 3],
    /// `rw=randX:N`: a random job draws a new random offset every N I/Os and
    /// continues sequentially in between (fio's `ddir_seq_nr`; 1 = every I/O random).
    pub ddir_seq_nr: u32,
    /// `percentage_random` per direction: of a random job's random draws, the
    /// share that is random (fio's `perc_rand`); the others go on sequentially.
    pub perc_rand: [u8; 3],
    /// `rw_sequencer=identical`: between a random job's random draws
    /// (`rw=randread:N`), each I/O repeats the direction's last offset.
    pub rw_identical: bool,
    /// `rw=X:N` of a sequential job: bytes added to the end of each I/O to
    /// find the next (holes; negative goes backwards; fio's `ddir_seq_add`).
    pub ddir_seq_add: i64,
    /// `random_distribution`.
    pub random_distribution: RandomDistribution,
    /// `verify` and its companions (`None`: `verify=0`).
    pub verify: Option<VerifyConfig>,
    /// `flow`: flow control among the jobs of a `flow_id` (`None`: `flow=0`).
    pub flow: Option<FlowConfig>,
    /// `read_iolog`: the recorded I/O the job replays instead of drawing its
    /// own (its files are `filenames`, in the log's order).
    pub replay: Option<std::sync::Arc<Replay>>,
    /// `verify_state_load`: the state a verifying job of this name saved
    /// (`verify_state_save`), which stops its verification where that job's
    /// writes stopped.
    pub verify_state: Option<std::sync::Arc<VerifyState>>,
    /// `verify_async`: threads that check the job's verifying reads in its
    /// place (0: fio's thread checks them as it reaps).
    pub verify_async: u32,
    /// `verify_async_cpus`: the CPUs fio's verify threads set as the affinity
    /// of the job's own thread (`fio_setaffinity(td->pid, ...)`; see `fio/verify_async.rs`).
    pub verify_async_cpus: Option<Vec<u32>>,
}

/// What fio's `verify_state_save` keeps of a writing job (`struct
/// thread_io_list`): how many writes it issued, and the numbers of those
/// still in flight when it saved (`u64::MAX`: a free slot).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyState {
    /// Writes issued (`inflight_issued`): the next write's number.
    pub numberio: u64,
    /// One slot per `iodepth`: the number of a write in flight, or `u64::MAX`.
    pub inflight: Vec<u64>,
    /// The offset generator's state (`struct thread_rand_state`): tausworthe64's five
    /// words, or tausworthe's three (in the first three); whether it is the former.
    pub rand: (bool, [u64; 5]),
}

impl VerifyState {
    /// fio's `verify_state_should_stop` for the I/O numbered `numberio`: the
    /// saved job never issued it, or it was in flight when the state was
    /// saved. `Some(why)` as fio logs it.
    pub fn should_stop(&self, numberio: u64) -> Option<String> {
        if numberio >= self.numberio {
            Some(format!("Stop verify because seq {numberio} >= {}", self.numberio))
        } else if self.inflight.contains(&numberio) {
            Some(format!("Stop verify because seq {numberio} was an inflight write"))
        } else {
            None
        }
    }
}

/// fio's `verify` options: what a job writes is read back and checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VerifyConfig {
    /// `verify=`: the checksum (or pattern) each block carries.
    pub algo: VerifyAlgo,
    /// `do_verify`: a writing job reads its blocks back once its writes are done.
    pub do_verify: bool,
    /// `verify_backlog`: read back after every this many writes (0: at the end only).
    pub backlog: u64,
    /// `verify_backlog_batch`: how many to read back then (0: `verify_backlog`).
    pub backlog_batch: u64,
    /// `experimental_verify`: no log of the writes; the job's offsets are drawn again.
    pub experimental: bool,
    /// `verify_pattern` is set: blocks are filled with it, not random data.
    pub pattern: bool,
    /// `verify_state_save`: a job that writes keeps its state at its end (`local-NAME-N-verify.state`).
    pub save_state: bool,
}

/// fio's `verify=` types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum VerifyAlgo {
    Md5,
    Crc64,
    Crc32,
    Crc32c,
    Crc16,
    Crc7,
    Sha1,
    Sha256,
    Sha512,
    Sha3_224,
    Sha3_256,
    Sha3_384,
    Sha3_512,
    Xxhash,
    /// A header of meta data (offset, time, job) checked, no checksum over the data.
    Meta,
    /// `verify_pattern` compared.
    Pattern,
    /// Nothing checked.
    Null,
}

impl VerifyAlgo {
    /// From fio's `verify=` value (`crc32c-intel` is `crc32c`).
    pub fn from_fio(name: &str) -> Option<VerifyAlgo> {
        use VerifyAlgo::*;
        Some(match name {
            "md5" => Md5,
            "crc64" => Crc64,
            "crc32" => Crc32,
            "crc32c" | "crc32c-intel" => Crc32c,
            "crc16" => Crc16,
            "crc7" => Crc7,
            "sha1" => Sha1,
            "sha256" => Sha256,
            "sha512" => Sha512,
            "sha3-224" => Sha3_224,
            "sha3-256" => Sha3_256,
            "sha3-384" => Sha3_384,
            "sha3-512" => Sha3_512,
            "xxhash" => Xxhash,
            "meta" => Meta,
            "pattern" => Pattern,
            "null" => Null,
            _ => return None,
        })
    }

    /// How fast fio's own implementation runs, MiB/s, as `fio --crctest`
    /// measured it (fio 3.33, one Xeon core); a pattern is filled and compared
    /// at `fio --memcpytest`'s 8 KiB memcpy rate; `None`: no per-byte work.
    pub fn mib_per_s(self) -> Option<f64> {
        use VerifyAlgo::*;
        Some(match self {
            Md5 => 737.66,
            Crc64 => 472.04,
            Crc32 => 420.21,
            Crc32c => 10097.42,
            Crc16 => 471.89,
            Crc7 => 462.16,
            Sha1 => 807.06,
            Sha256 => 344.58,
            Sha512 => 555.48,
            Sha3_224 => 108.99,
            Sha3_256 => 104.44,
            Sha3_384 => 77.36,
            Sha3_512 => 56.69,
            Xxhash => 3440.95,
            Pattern => 12308.80,
            Meta | Null => return None,
        })
    }
}

/// fio's `flow`, `flow_id` and `flow_sleep`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowConfig {
    /// `flow_id`: the group.
    pub id: u32,
    /// `flow`: the job's weight in it (1 to 1000).
    pub weight: u32,
    /// `flow_sleep`, µs: how long a held job sleeps (after quiescing); 0 spins.
    pub sleep_us: u64,
}

/// An I/O trace as fio's `read_iolog` holds it after reading (iolog.c's
/// `io_piece` list): what to issue, in order, and when.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Replay {
    /// The entries, in the log's order.
    pub entries: Vec<ReplayEntry>,
    /// Does the log issue trims (fio's `td_ddir` from the log)?
    pub trims: bool,
    /// Does it fsync?
    pub syncs: bool,
}

/// One entry of a replayed log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplayEntry {
    /// Version 3: µs after the previous entry's time stamp (scaled by
    /// `replay_time_scale`; 0 with `replay_no_stall`): fio's `iolog_delay`
    /// waits until that long after its last issue.
    pub delay_us: u64,
    /// What it does.
    pub op: ReplayOp,
    /// Its line in the log (for messages).
    pub line: u32,
}

/// What a replayed entry does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayOp {
    /// An I/O on the job's file `file` (index into `filenames`).
    Io {
        /// Its file.
        file: u16,
        /// Read, write or trim.
        dir: Direction,
        /// Bytes from the start of the file (after `replay_scale` and `replay_align`).
        offset: u64,
        /// Its length.
        bytes: u64,
    },
    /// An fsync (`sync`, `datasync`; a blktrace flush) of the job's file `file`.
    Sync {
        /// Its file.
        file: u16,
    },
    /// A file action (`add`, `open`, `close`): only its delay and the issue time it sets.
    File,
}

/// fio's `rate_process`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RateProcess {
    /// I/O at even intervals (`linear`, the default).
    #[default]
    Linear,
    /// Exponentially distributed gaps with the rate's mean (`poisson`).
    Poisson,
}

/// fio's `file_service_type`: which of a job's several files its next I/O
/// goes to (`get_next_file`), and for how many I/Os (`:N`, fio's
/// `file_service_nr`) before it picks again.
#[derive(Clone, Debug, PartialEq)]
pub enum FileService {
    /// `roundrobin`: the next file not done, in turn.
    RoundRobin {
        /// I/Os to a file before the next (`:N`, 1 by default).
        nr: u32,
    },
    /// `sequential`: each file until it is done, then the next.
    Sequential,
    /// `random`: a file drawn from fio's `next_file_state`.
    Random {
        /// I/Os to a file before the next draw (`:N`, 1 by default).
        nr: u32,
    },
    /// `zipf`, `pareto`, `normal` (`gauss`): each I/O's file drawn from the
    /// distribution over the job's files (fio's `next_file_zipf` or
    /// `next_file_gauss`, unhashed, over `nr_files << 10` ranges); a file
    /// whose offsets run out starts over (fio_file_reset), none is done.
    /// Its distribution is a `random_distribution`'s zipf, pareto or normal.
    Skewed(RandomDistribution),
}

impl Default for FileService {
    fn default() -> FileService {
        FileService::RoundRobin { nr: 1 }
    }
}

/// fio's `random_distribution`: how a random job picks its blocks.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum RandomDistribution {
    /// Uniform (fio's default).
    #[default]
    Random,
    /// `zipf:THETA[:CENTER]`.
    Zipf {
        /// The exponent (not 1).
        theta: f64,
        /// Where in the file (0 to 1) the hottest block lies; `None`: a random place.
        center: Option<f64>,
    },
    /// `pareto:H[:CENTER]`.
    Pareto {
        /// The power (0 < h < 1).
        h: f64,
        /// As zipf's.
        center: Option<f64>,
    },
    /// `normal:DEV[:CENTER]` (fio's gauss).
    Normal {
        /// The deviation in percent of the file (0 to below 100).
        dev: f64,
        /// Where in the file the mean lies, 0.5 being the middle; `None`: at its start.
        center: Option<f64>,
    },
    /// `zoned:` or `zoned_abs:`.
    Zoned {
        /// `zoned_abs`: zone sizes in bytes, not percent.
        absolute: bool,
        /// Per direction, the zones in file order, each with its share of the I/Os.
        zones: [Vec<Zone>; 3],
    },
}

/// One zone of a `zoned`/`zoned_abs` distribution, as fio keeps it (`struct zone_split`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Zone {
    /// Percent of the direction's I/Os that land in it.
    pub access_perc: u8,
    /// `zoned`: its size in percent of the file.
    pub size_perc: u8,
    /// `zoned_abs`: its size in bytes.
    pub size: u64,
}

/// One block size's `cmdprio` entries (fio's `cmdprio_bsprio`): an I/O of
/// `bs` bytes (any size with `cmdprio_percentage`) draws a number in 0..100;
/// below the first entry's percentage it takes that entry's priority, below
/// the first two entries' sum the second's, and so on; else the job's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CmdPrio {
    /// `None`: every block size (`cmdprio_percentage`).
    pub bs: Option<u64>,
    /// (percentage, ioprio), in fio's order; the percentages add up to 100 at most.
    pub prios: Vec<(u32, u16)>,
}

/// fio's `ioprio_value`: a priority `class` (0: none set, taken as best
/// effort), `level` and `hint` as one ioprio.
pub fn ioprio_value(class: u32, level: u32, hint: u32) -> u16 {
    let class = if class == 0 { IOPRIO_CLASS_BE } else { class };
    ((class << 13) | (hint << 3) | level) as u16
}

/// An ioprio's class, level and hint (fio's `ioprio_class`, `ioprio`, `ioprio_hint`).
pub fn ioprio_parts(ioprio: u16) -> [u16; 3] {
    [ioprio >> 13, ioprio & 7, (ioprio >> 3) & 1023]
}

/// `IOPRIO_CLASS_RT`: real time.
pub const IOPRIO_CLASS_RT: u32 = 1;
/// `IOPRIO_CLASS_BE`: best effort.
pub const IOPRIO_CLASS_BE: u32 = 2;
/// `IOPRIO_CLASS_IDLE`.
pub const IOPRIO_CLASS_IDLE: u32 = 3;

/// One entry of a `bssplit`: a block size and its share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BsSplit {
    /// Bytes.
    pub bs: u64,
    /// fio's percentage (an unsigned 32-bit value; entries without one get
    /// the rest, which fio computes in unsigned arithmetic).
    pub perc: u32,
}

/// `exit_what`: the jobs a job's end tells to end under `exitall` (fio's `fio_terminate_threads`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExitWhat {
    /// `group` (fio's default): the jobs of its reporting group, started or not.
    #[default]
    Group,
    /// `stonewall`: the jobs running now (past their ramp); the next stonewall's start as they would.
    Stonewall,
    /// `all`: every job, those of the stonewall groups to come too (they start and end at once).
    All,
}

/// fio's options that change what follows a job's error (fio's defaults: none of them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorOptions {
    /// `continue_on_error` other than `none`, its value: fio may go on past an I/O error.
    pub continue_on_error: Option<String>,
    /// `ignore_error`, its value: fio goes on past the errors it lists.
    pub ignore_error: Option<String>,
    /// `exitall_on_error`: a job's error ends the other jobs.
    pub exitall: bool,
}

impl ErrorOptions {
    /// Is one set that blksim does not model (`continue_on_error`, `ignore_error`)?
    pub fn any(&self) -> bool {
        self.continue_on_error.is_some() || self.ignore_error.is_some()
    }

    /// What fio would do after an I/O error under them that blksim does not. (A minimum rate
    /// not met ends the job under any of them; `exitall_on_error` is modelled: the job's end
    /// ends the others, `Sim::exitall`.)
    pub fn unmodelled(&self) -> Vec<String> {
        let mut why = Vec::new();
        if let Some(c) = &self.continue_on_error {
            why.push(format!("with continue_on_error={c} fio may go on past it"));
        }
        if let Some(i) = &self.ignore_error {
            why.push(format!("with ignore_error={i} fio may go on past it"));
        }
        why
    }
}

/// `latency_target` and its companions: the deepest queue that keeps
/// `percentile` of the I/Os' latencies under `target_ns` over each window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatencyTarget {
    /// `latency_target`, ns (fio's fixup_options makes the microseconds ns).
    pub target_ns: u64,
    /// `latency_window`, µs (fio compares microseconds since the window began).
    pub window_us: u64,
    /// `latency_percentile` (default 100).
    pub percentile: f64,
    /// `latency_run`: keep adjusting the depth after it settles.
    pub run: bool,
}

/// `thinktime`, `thinktime_spin`, `thinktime_blocks`, `thinktime_blocks_type`, `thinktime_iotime`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thinktime {
    /// `thinktime`, microseconds (0 = none: the others then do nothing).
    pub think_us: u64,
    /// `thinktime_spin`: the part of it spent spinning (user CPU), microseconds.
    pub spin_us: u64,
    /// `thinktime_blocks`: I/Os between think times.
    pub blocks: u64,
    /// `thinktime_blocks` was written (with `thinktime_iotime` it then also counts).
    pub blocks_set: bool,
    /// `thinktime_blocks_type=issue` (else `complete`): which I/Os `blocks` counts.
    pub count_issued: bool,
    /// `thinktime_iotime`: think after this long of I/O, microseconds (0 = not set).
    pub iotime_us: u64,
}

impl Default for Thinktime {
    fn default() -> Thinktime {
        Thinktime { think_us: 0, spin_us: 0, blocks: 1, blocks_set: false, count_issued: false, iotime_us: 0 }
    }
}

impl JobConfig {
    /// The job's files as fio names them: its `filename`s, or for a job with
    /// none (the null engine) `NAME.SUBJOB.0` (fio's `jobname.jobnum.filenum`).
    pub fn file_names(&self) -> Vec<String> {
        if self.filenames.is_empty() {
            vec![format!("{}.{}.0", self.name, self.subjob)]
        } else {
            self.filenames.clone()
        }
    }

    /// A job with fio's defaults for everything but the name.
    pub fn new(name: &str) -> JobConfig {
        JobConfig {
            name: name.to_string(),
            subjob: 0,
            group_id: 0,
            exitall: false,
            exit_what: ExitWhat::Group,
            max_latency_ns: [0; 3],
            phase: 0,
            rw: RwKind::Read,
            rwmixread: 50,
            bs: [4096; 3],
            bs_max: [0; 3],
            bs_unaligned: false,
            bs_is_seq_rand: false,
            log_queued: false,
            iodepth: 1,
            iodepth_batch_submit: 1,
            iodepth_batch_complete_min: 1,
            iodepth_batch_complete_max: 1,
            iodepth_low: 1,
            ioengine: IoEngine::Psync,
            direct: false,
            cpus_allowed: None,
            filenames: Vec::new(),
            size: None,
            offset: 0,
            runtime_ns: None,
            time_based: false,
            ramp_time_ns: 0,
            startdelay_ns: 0,
            ioscheduler: None,
            latency_target: None,
            norandommap: false,
            fio_norandommap: false,
            offset_overlap_risk: false,
            keeps_done_files: false,
            offload: false,
            serialize_overlap: false,
            random_generator: RandomGenerator::Default,
            randrepeat: true,
            fio_seed: Some(0x89),
            rate_iops: [0; 3],
            number_ios: 0,
            sync_every: [0; 2],
            end_fsync: false,
            dsync: false,
            num_range: 1,
            strided: None,
            null_file: None,
            file_regions: Vec::new(),
            file_service: FileService::default(),
            later_start: None,
            loops: 1,
            group_reporting: false,
            thread: false,
            gtod_reduce: false,
            lat_off: 0,
            ioprio: 0,
            cmdprio: Default::default(),
            clat_percentiles: true,
            lat_percentiles: false,
            slat_percentiles: false,
            percentile_list: DEFAULT_PERCENTILES.to_vec(),
            description: None,
            disk_util: true,
            unified_rw_reporting: UnifiedRw::Split,
            kb_base: 1024,
            sig_figs: 4,
            bit_based: false,
            record_ios: false,
            program: Program::Fio,
            rate: [0; 3],
            rate_process: RateProcess::Linear,
            rate_min: [0; 3],
            rate_iops_min: [0; 3],
            rate_cycle_ms: 1000,
            rate_ignore_thinktime: false,
            thinktime: Thinktime::default(),
            thinkcycles: 0,
            error_options: ErrorOptions::default(),
            bssplit: Default::default(),
            io_size: None,
            ba: [0; 3],
            ddir_seq_nr: 1,
            perc_rand: [100; 3],
            rw_identical: false,
            ddir_seq_add: 0,
            random_distribution: RandomDistribution::Random,
            replay: None,
            flow: None,
            verify: None,
            verify_state: None,
            verify_async: 0,
            verify_async_cpus: None,
        }
    }
}

/// fio's `unified_rw_reporting`, with fio's values (`UNIFIED_SPLIT`, `UNIFIED_MIXED`, `UNIFIED_BOTH`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UnifiedRw {
    /// `none` (or `0`): each direction on its own.
    #[default]
    Split = 0,
    /// `mixed` (or `1`): the directions summed and reported as one, `mixed`.
    Mixed = 1,
    /// `both` (or `2`): each direction, then their sum as `mixed`.
    Both = 2,
}

/// fio's default `percentile_list`.
pub const DEFAULT_PERCENTILES: [f64; 17] =
    [1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

impl JobConfig {
    /// Does the pattern issue trims?
    pub fn rw_has_trim(&self) -> bool {
        matches!(self.rw, RwKind::Trim | RwKind::RandTrim | RwKind::TrimWrite | RwKind::RandTrimWrite)
    }

    /// Does the job fsync (fio's `should_fsync`: only a job that writes; or the log it replays)?
    pub fn syncs(&self) -> bool {
        self.rw.writes() && (self.sync_every != [0, 0] || self.end_fsync)
            || self.replay.as_ref().is_some_and(|r| r.syncs)
    }

    /// Does it make the kernel flush (its syncs, or `sync=1`'s O_SYNC writes)?
    pub fn flushes(&self) -> bool {
        self.syncs() || self.dsync && (self.rw.writes() || self.replay.is_some())
    }

    /// Does the job trim (its `rw`, or the log it replays)?
    pub fn trims(&self) -> bool {
        match &self.replay {
            Some(r) => r.trims,
            None => self.rw_has_trim(),
        }
    }

    /// The smallest and largest block size of direction `d` (fio's `min_bs`, `max_bs`).
    pub fn bs_range(&self, d: usize) -> (u64, u64) {
        match self.bssplit[d].iter().map(|e| e.bs).max() {
            Some(max) => (self.bs[d], max),
            None => (self.bs[d], self.bs[d].max(self.bs_max[d])),
        }
    }

    /// fio's `io_in_polling`: both `iodepth_batch_complete` values 0, so
    /// do_io commits and reaps after each io_u, before it draws another.
    pub fn io_in_polling(&self) -> bool {
        self.iodepth_batch_complete_min == 0 && self.iodepth_batch_complete_max == 0
    }

    /// The smallest and largest size drawn for an I/O of direction `d`: its
    /// [`JobConfig::bs_range`], or with `bs_is_seq_rand` a read's or a write's.
    pub fn drawn_range(&self, d: usize) -> (u64, u64) {
        if !self.bs_is_seq_rand {
            return self.bs_range(d);
        }
        let ((rl, rh), (wl, wh)) = (self.bs_range(0), self.bs_range(1));
        (rl.min(wl), rh.max(wh))
    }

    /// The smallest and largest I/O of direction `d` the job can issue: a
    /// replayed log's own sizes, else [`JobConfig::drawn_range`].
    pub fn io_size_range(&self, d: usize) -> (u64, u64) {
        if self.rw == RwKind::RandTrimWrite && d == 1 {
            // Each write takes its trim's length.
            let ((wl, wh), (tl, th)) = (self.drawn_range(1), self.drawn_range(2));
            return (wl.min(tl), wh.max(th));
        }
        let writes = !matches!(self.rw, RwKind::Read | RwKind::RandRead);
        if self.verify.is_some() && writes && d == 0 && self.replay.is_none() {
            // Verify reads the writes back at their sizes.
            let ((rl, rh), (wl, wh)) = (self.drawn_range(0), self.io_size_range(1));
            return (rl.min(wl), rh.max(wh));
        }
        if d == 2 && self.num_range > 1 && self.replay.is_none() {
            // A trim of up to num_range ranges (a file's last one may have fewer).
            let (lo, hi) = self.drawn_range(2);
            return (lo, hi * self.num_range as u64);
        }
        let Some(log) = &self.replay else { return self.drawn_range(d) };
        let sizes = log.entries.iter().filter_map(|e| match e.op {
            ReplayOp::Io { dir, bytes, .. } if dir.index() == d => Some(bytes),
            _ => None,
        });
        sizes
            .fold(None, |r: Option<(u64, u64)>, b| Some(r.map_or((b, b), |(lo, hi)| (lo.min(b), hi.max(b)))))
            .unwrap_or((0, 0))
    }

    /// Are direction `d`'s sizes drawn (a `bssplit`, or a `bsrange` of more than one size)?
    pub fn bs_varies(&self, d: usize) -> bool {
        let (min, max) = self.bs_range(d);
        max > min
    }

    /// Does the job pace its I/O (`rate`, `rate_iops`) or think between I/Os (`thinktime`)?
    pub fn is_paced(&self) -> bool {
        self.rate.iter().chain(&self.rate_iops).any(|&r| r > 0) || self.thinktime.think_us > 0
    }

    /// Max latencies to look at per direction: `max_latency`'s and `latency_target`'s,
    /// the smaller (`u64::MAX`: none), so that an I/O under both costs one comparison.
    pub fn lat_watch_ns(&self) -> [u64; 3] {
        let target = self.latency_target.map_or(u64::MAX, |t| t.target_ns);
        self.max_latency_ns.map(|m| if m == 0 { target } else { m.min(target) })
    }

    /// Does a held flow job sleep (`flow_sleep`), which takes fio's pause machinery?
    pub fn flow_sleeps(&self) -> bool {
        self.flow.is_some_and(|f| f.sleep_us > 0)
    }
}

/// What a DSA client does (the workload of a DSA run).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DsaClientConfig {
    /// Device name, e.g. `dsa0`.
    pub device: String,
    /// Its work queue on the device.
    pub wq: u32,
    /// Descriptors kept in flight.
    pub outstanding: u32,
    /// Memfill size per descriptor, bytes.
    pub bytes: u32,
    /// How long the client keeps resubmitting, ns.
    pub runtime_ns: u64,
    /// Pin the WQ's completion IRQ to this CPU (`/proc/irq/N/smp_affinity_list`).
    pub irq_cpu: Option<u32>,
}
