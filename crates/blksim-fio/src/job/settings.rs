//! A job's settings while its sections are applied (fio's `thread_options`):
//! values read by option kind, and the modelled options written into them.

use blksim::workload::{BsSplit, FileService, RandomDistribution, RateProcess, RwKind, Thinktime, DEFAULT_PERCENTILES};

use super::engine::{classify, EngineName, OptionTable};
use super::logs::{LogOptions, LogWindowValue};
use super::options::{Field, Kind};
use super::value::{self, SizeVal};
use super::ParseContext;

/// An option value read according to its kind.
#[derive(Clone, Debug)]
pub(crate) enum Parsed {
    Flag(bool),
    Bool(bool),
    Int(u64),
    Dirs([Option<u64>; 3]),
    Size(SizeVal),
    /// A size in zones (`size=8z`).
    Zones(u64),
    /// Microseconds.
    Time(u64),
    TimeRange(u64, u64),
    /// The valid value matched, and what followed a `:`.
    Choice(&'static str, Option<String>),
    Text(String),
    Floats(Vec<f64>),
    Ranges([Option<(u64, u64)>; 3]),
    Nothing,
}

fn required(value: Option<&str>) -> Result<&str, String> {
    value.ok_or_else(|| "needs a value (name=value)".to_string())
}

fn check_bounds(v: u64, min: u64, max: u64) -> Result<u64, String> {
    if v < min {
        Err(format!("{v} is below the minimum {min}"))
    } else if v > max {
        Err(format!("{v} is above the maximum {max}"))
    } else {
        Ok(v)
    }
}

/// Reads `value` (`None` for a bare option) as fio reads an option of `kind`.
pub(crate) fn parse_kind(kind: Kind, value: Option<&str>, kb_base: u64) -> Result<Parsed, String> {
    let first_field = |v: &str| value::dir_fields(v, false)[0].to_string();
    Ok(match kind {
        Kind::Flag => Parsed::Flag(value::parse_flag(value)?),
        Kind::Bool => Parsed::Bool(value::parse_bool(required(value)?)?),
        Kind::Int { min, max } => {
            let v = value::parse_bytes(&first_field(required(value)?), kb_base)?;
            Parsed::Int(check_bounds(v, min, max)?)
        }
        Kind::IntDirs { min } => {
            let fields = value::dir_fields(required(value)?, false);
            Parsed::Dirs(value::assign_dirs(&fields, |f| check_bounds(value::parse_bytes(f, kb_base)?, min, u64::MAX))?)
        }
        Kind::Size => {
            let v = first_field(required(value)?);
            match v.strip_suffix('z') {
                Some(n) if !n.is_empty() => Parsed::Zones(value::parse_bytes(n, kb_base)?),
                _ => Parsed::Size(value::parse_size(&v, kb_base)?),
            }
        }
        Kind::Time { seconds } => Parsed::Time(value::parse_time_us(&first_field(required(value)?), seconds)?),
        Kind::TimeDirs => {
            let fields = value::dir_fields(required(value)?, false);
            Parsed::Dirs(value::assign_dirs(&fields, |f| value::parse_time_us(f, false))?)
        }
        Kind::TimeRange => {
            let fields = value::dir_fields(required(value)?, false);
            let lo = value::parse_time_us(fields[0], true)?;
            let hi = if fields.len() > 1 { value::parse_time_us(fields[fields.len() - 1], true)? } else { lo };
            Parsed::TimeRange(lo, hi)
        }
        Kind::Choice(valid) => {
            let v = required(value)?;
            let (head, post) = value::choice_head(v);
            match valid.iter().find(|x| **x == head) {
                Some(x) => Parsed::Choice(x, post.map(str::to_string)),
                None => return Err(format!("'{v}' is not one of: {}", valid.join(", "))),
            }
        }
        Kind::Text => Parsed::Text(required(value)?.to_string()),
        Kind::OptText => Parsed::Text(value.unwrap_or("").to_string()),
        Kind::Floats { max_len, min, max } => Parsed::Floats(value::parse_floats(required(value)?, max_len, min, max)?),
        Kind::Range => Parsed::Ranges(value::parse_ranges(required(value)?, kb_base)?),
        Kind::Deprecated => return Err("is deprecated and fio no longer accepts it".into()),
        Kind::SoftDeprecated => Parsed::Nothing,
    })
}

/// Engine options of the io_uring, libaio and pvsync2 tables.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct EngineOpts {
    /// The table these values belong to.
    pub table: OptionTable,
    pub hipri: bool,
    pub fixedbufs: bool,
    pub registerfiles: bool,
    pub sqthread_poll: bool,
    pub sqthread_poll_cpu: Option<u32>,
    /// `cmdprio_percentage`, `cmdprio_class`, `cmdprio`, `cmdprio_hint` for reads and writes
    /// (libaio, io_uring); a class of 0 is fio's default, RT.
    pub cmdprio_percentage: [u64; 2],
    pub cmdprio_class: [u64; 2],
    pub cmdprio_level: [u64; 2],
    pub cmdprio_hint: [u64; 2],
    /// `cmdprio_bssplit` as parsed (reads, writes); `None`: not set (or empty).
    pub cmdprio_bssplit: Option<[Vec<value::SplitPrio>; 2]>,
}

impl EngineOpts {
    pub fn defaults(table: OptionTable) -> EngineOpts {
        EngineOpts {
            table,
            hipri: false,
            fixedbufs: false,
            registerfiles: false,
            sqthread_poll: false,
            sqthread_poll_cpu: None,
            cmdprio_percentage: [0; 2],
            cmdprio_class: [0; 2],
            cmdprio_level: [0; 2],
            cmdprio_hint: [0; 2],
            cmdprio_bssplit: None,
        }
    }
}

/// fio's option values for one job (or the global template).
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    /// `name=` in the job's own section renames the job.
    pub name: Option<String>,
    pub rw: RwKind,
    pub rwmixread: u32,
    pub bs: [u64; 3],
    /// `blockalign` per direction as written; 0: not set.
    pub ba: [u64; 3],
    /// The `rw=` suffix: a random job's I/Os per random offset (fio's `ddir_seq_nr`).
    pub ddir_seq_nr: u32,
    /// The `rw=` suffix: a sequential job's bytes between I/Os (fio's `ddir_seq_add`).
    pub ddir_seq_add: i64,
    /// `random_distribution`.
    pub random_distribution: RandomDistribution,
    /// `file_service_type`.
    pub file_service: FileService,
    /// `bsrange` overrides `bs` per direction: (min_bs, max_bs).
    pub bsrange: [Option<(u64, u64)>; 3],
    pub iodepth: u32,
    pub batch_submit: u32,
    pub complete_min: u32,
    pub complete_max: u32,
    pub iodepth_low: u32,
    pub engine: EngineName,
    /// `ioengine=` here or in the section it inherits from named an engine blksim
    /// refuses: its options cannot be checked (fio knows them as that engine's).
    pub engine_refused: bool,
    pub eng: EngineOpts,
    pub direct: bool,
    pub cpus: Option<Vec<u32>>,
    pub split: bool,
    /// The CPUs of the nodes `numa_cpu_nodes` names; they replace the CPUs `cpus_allowed` gives.
    pub numa_cpus: Option<Vec<u32>>,
    /// `verify_async`: fio's verify threads.
    pub verify_async: u64,
    /// `verify_async_cpus`.
    pub verify_cpus: Option<Vec<u32>>,
    pub filenames: Vec<String>,
    pub directory: Option<String>,
    pub size: Option<u64>,
    pub offset: u64,
    /// `offset_increment`: each clone's offset grows by it (fio's `get_start_offset`).
    pub offset_increment: u64,
    /// `size`, `offset`, `offset_increment` given as percentages of the file's device
    /// (fio's `size_percent`, `start_offset_percent`, `offset_increment_percent`).
    pub size_pct: Option<u64>,
    pub offset_pct: Option<u64>,
    pub offset_increment_pct: Option<u64>,
    /// `offset_align`, when given: what a percentage offset is aligned up to (else the
    /// job's smallest block size; fio's `start_offset_align`).
    pub offset_align: Option<u64>,
    pub runtime_us: u64,
    pub time_based: bool,
    pub ramp_us: u64,
    pub startdelay_us: u64,
    pub norandommap: bool,
    pub rw_identical: bool,
    /// `softrandommap`: fio runs without the map only where it cannot allocate one (never
    /// here); its one effect is fio_offset_overlap_risk's (verify's read-back sorted).
    pub softrandommap: bool,
    /// `io_submit_mode=offload`: fio's submit workers queue the io_us.
    pub offload: bool,
    /// `serialize_overlap`.
    pub serialize_overlap: bool,
    pub randrepeat: bool,
    /// `randseed`, when given.
    pub randseed: Option<u64>,
    /// `random_generator`.
    pub random_generator: blksim::workload::RandomGenerator,
    pub rate_iops: [u64; 3],
    pub rate: [u64; 3],
    /// `rate_min`, `rate_iops_min`, `rate_cycle` (ms).
    pub rate_min: [u64; 3],
    pub rate_iops_min: [u64; 3],
    pub rate_cycle_ms: u64,
    pub perc_rand: [u64; 3],
    /// `prioclass`, `prio`, `priohint`: `Some` once set (fio then calls `ioprio_set`).
    pub ioprio: [Option<u32>; 3],
    pub rate_process: RateProcess,
    pub rate_ignore_thinktime: bool,
    pub thinktime: Thinktime,
    pub thinkcycles: u64,
    /// `bssplit` per direction as fio parsed it (entries in fio's order); `None`: not set.
    pub bssplit: [Option<Vec<BsSplit>>; 3],
    pub bs_unaligned: bool,
    pub bs_is_seq_rand: bool,
    pub io_size: Option<u64>,
    pub number_ios: u64,
    /// `fsync`, `fdatasync`.
    pub sync_every: [u64; 2],
    pub end_fsync: bool,
    pub fsync_on_close: bool,
    /// `sync=sync|1|dsync`: O_SYNC or O_DSYNC.
    pub sync_io: bool,
    /// `num_range`: ranges per trim (io_uring_cmd's Dataset Management).
    pub num_range: u64,
    /// `zonemode` as given (none when not), `zonesize`, `zonerange`, `zoneskip` (bytes; a count of zones refused).
    pub zone_mode: Option<&'static str>,
    /// `filesize`: the null engine's file.
    pub filesize: Option<u64>,
    pub zone_size: u64,
    pub zone_range: u64,
    pub zone_skip: u64,
    pub loops: u32,
    pub numjobs: u32,
    pub group_reporting: bool,
    pub thread: bool,
    pub gtod_reduce: bool,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    pub slat_percentiles: bool,
    pub percentile_list: Vec<f64>,
    /// `disk_util`: fio's disk statistics list this job's devices.
    pub disk_util: bool,
    /// `description` (fio's report prints it; empty is none).
    pub description: Option<String>,
    pub unified_rw_reporting: blksim::workload::UnifiedRw,
    pub sig_figs: u32,
    pub bit_based: bool,
    pub stonewall: bool,
    /// `continue_on_error` other than none, `ignore_error`, `exitall_on_error`.
    pub error_options: blksim::workload::ErrorOptions,
    /// `exitall`, in any form (`exitall=0` too: fio's option only calls its callback, which
    /// sets the program's flag).
    pub exitall: bool,
    pub exit_what: blksim::workload::ExitWhat,
    /// `ioscheduler`, as written.
    pub ioscheduler: Option<String>,
    /// `max_latency` per direction, microseconds (0: none).
    pub max_latency_us: [u64; 3],
    /// `latency_target`, `latency_window` (microseconds; 0: none), `latency_percentile`, `latency_run`.
    pub latency_target_us: u64,
    pub latency_window_us: u64,
    pub latency_percentile: f64,
    pub latency_run: bool,
    pub new_group: bool,
    pub kb_base: u64,
    /// The log files the job writes.
    pub logs: LogOptions,
    /// `verify` (its algorithm `None` for `verify=0`) and its companions.
    pub verify: VerifyOptions,
    /// `flow`, `flow_id`, `flow_sleep`.
    pub flow: [u64; 3],
    /// `read_iolog` and its `replay_*` options.
    pub replay: super::iolog::ReplayOptions,
    /// Where each option in effect was written (fio's name → file, line), inherited ones included.
    pub lines: OptionLines,
}

/// fio's verify options as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VerifyOptions {
    pub algo: Option<blksim::workload::VerifyAlgo>,
    pub do_verify: bool,
    pub backlog: u64,
    pub backlog_batch: u64,
    pub experimental: bool,
    pub pattern: bool,
    /// `verify_state_save` (fio's default: on).
    pub state_save: bool,
    /// `verify_state_load`.
    pub state_load: bool,
}

/// Where options were written: fio's name of the option → (file, line).
pub type OptionLines = std::collections::BTreeMap<String, (std::path::PathBuf, usize)>;

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            name: None,
            rw: RwKind::Read,
            rwmixread: 50,
            bs: [4096; 3],
            ba: [0; 3],
            ddir_seq_nr: 1,
            ddir_seq_add: 0,
            random_distribution: RandomDistribution::Random,
            file_service: FileService::default(),
            bsrange: [None; 3],
            iodepth: 1,
            batch_submit: 1,
            complete_min: 1,
            complete_max: 0,
            iodepth_low: 0,
            engine: EngineName::Psync,
            engine_refused: false,
            eng: EngineOpts::defaults(OptionTable::None),
            direct: false,
            cpus: None,
            split: false,
            numa_cpus: None,
            verify_async: 0,
            verify_cpus: None,
            filenames: Vec::new(),
            directory: None,
            size: None,
            offset: 0,
            offset_increment: 0,
            size_pct: None,
            offset_pct: None,
            offset_increment_pct: None,
            offset_align: None,
            runtime_us: 0,
            time_based: false,
            ramp_us: 0,
            startdelay_us: 0,
            norandommap: false,
            rw_identical: false,
            softrandommap: false,
            offload: false,
            serialize_overlap: false,
            randrepeat: true,
            randseed: None,
            random_generator: blksim::workload::RandomGenerator::Default,
            rate_iops: [0; 3],
            rate: [0; 3],
            rate_min: [0; 3],
            rate_iops_min: [0; 3],
            rate_cycle_ms: 1000,
            perc_rand: [100; 3],
            ioprio: [None; 3],
            rate_process: RateProcess::Linear,
            rate_ignore_thinktime: false,
            thinktime: Thinktime::default(),
            thinkcycles: 0,
            bssplit: Default::default(),
            bs_unaligned: false,
            bs_is_seq_rand: false,
            io_size: None,
            number_ios: 0,
            sync_every: [0; 2],
            end_fsync: false,
            fsync_on_close: false,
            sync_io: false,
            num_range: 1,
            zone_mode: None,
            filesize: None,
            zone_size: 0,
            zone_range: 0,
            zone_skip: 0,
            loops: 1,
            numjobs: 1,
            group_reporting: false,
            thread: false,
            gtod_reduce: false,
            clat_percentiles: true,
            lat_percentiles: false,
            slat_percentiles: false,
            percentile_list: DEFAULT_PERCENTILES.to_vec(),
            description: None,
            disk_util: true,
            unified_rw_reporting: blksim::workload::UnifiedRw::Split,
            sig_figs: 4,
            bit_based: false,
            stonewall: false,
            error_options: Default::default(),
            exitall: false,
            exit_what: Default::default(),
            ioscheduler: None,
            max_latency_us: [0; 3],
            latency_target_us: 0,
            latency_window_us: 0,
            latency_percentile: 100.0,
            latency_run: false,
            new_group: false,
            lines: OptionLines::new(),
            kb_base: 1024,
            logs: LogOptions::default(),
            replay: Default::default(),
            flow: [0; 3],
            verify: VerifyOptions {
                algo: None,
                do_verify: true,
                backlog: 0,
                backlog_batch: 0,
                experimental: false,
                pattern: false,
                state_save: true,
                state_load: false,
            },
        }
    }
}

/// Why a modelled option's value is refused: it is bad, or it is a form of
/// the option that blksim does not model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    Bad(String),
    NotModelled(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Bad(m) | Refusal::NotModelled(m) => f.write_str(m),
        }
    }
}

impl From<String> for Refusal {
    fn from(m: String) -> Refusal {
        Refusal::Bad(m)
    }
}

fn rw_kind(name: &str) -> Result<RwKind, Refusal> {
    Ok(match name {
        "read" => RwKind::Read,
        "write" => RwKind::Write,
        "trim" => RwKind::Trim,
        "randread" => RwKind::RandRead,
        "randwrite" => RwKind::RandWrite,
        "randtrim" => RwKind::RandTrim,
        "rw" | "readwrite" => RwKind::ReadWrite,
        "randrw" => RwKind::RandRw,
        "trimwrite" => RwKind::TrimWrite,
        "randtrimwrite" => RwKind::RandTrimWrite,
        other => {
            return Err(Refusal::NotModelled(format!(
                "rw={other} is a file operation, not block I/O; blksim does not model it"
            )))
        }
    })
}

fn to_u32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

impl Settings {
    /// The engine options for the current engine: kept when they belong to
    /// its table, else fio's defaults (fio does not carry them across tables).
    pub fn engine_opts(&mut self) -> &mut EngineOpts {
        let table = self.engine.option_table();
        if self.eng.table != table {
            self.eng = EngineOpts::defaults(table);
        }
        &mut self.eng
    }

    /// Writes a modelled option. Errors are the tail of a message that names
    /// the option.
    pub fn apply(&mut self, field: Field, v: Parsed, ctx: &ParseContext) -> Result<(), Refusal> {
        use Parsed as P;
        match (field, v) {
            (Field::Name, P::Text(s)) => self.name = Some(s),
            (Field::Rw, P::Choice(name, post)) => {
                self.rw = rw_kind(name)?;
                // fio's str_rw_cb: each rw= resets both, then reads the suffix.
                self.ddir_seq_nr = 1;
                self.ddir_seq_add = 0;
                if let Some(post) = post {
                    self.rw_suffix(name, &post)?;
                }
            }
            (Field::RwMixRead, P::Int(v)) => self.rwmixread = v as u32,
            (Field::RwMixWrite, P::Int(v)) => self.rwmixread = 100 - v as u32,
            (Field::Bs, P::Dirs(d)) => set_dirs(&mut self.bs, d),
            (Field::BlockAlign, P::Dirs(d)) => set_dirs(&mut self.ba, d),
            (Field::FileService, P::Choice(name, post)) => {
                // fio's str_fst_cb: `:N` I/Os to a file before the next is picked (atoi).
                let nr = post.as_deref().map_or(1, |n| n.trim().parse::<u32>().unwrap_or(0));
                self.file_service = match name {
                    "roundrobin" => FileService::RoundRobin { nr },
                    "sequential" => FileService::Sequential,
                    "random" => FileService::Random { nr },
                    // str_fst_cb: the distribution's value and center as random_distribution's.
                    _ => FileService::Skewed(
                        value::parse_random_distribution(name, post.as_deref(), self.kb_base).map_err(Refusal::Bad)?,
                    ),
                };
            }
            (Field::RandomDistribution, P::Choice("sequence", _)) => {
                return Err(Refusal::NotModelled(
                    "random_distribution=sequence (a fixed sequence of blocks) is not modelled".into(),
                ))
            }
            (Field::RandomDistribution, P::Choice(name, post)) => {
                self.random_distribution =
                    value::parse_random_distribution(name, post.as_deref(), self.kb_base).map_err(Refusal::Bad)?
            }
            (Field::BsRange, P::Ranges(r)) => {
                for (slot, range) in self.bsrange.iter_mut().zip(r) {
                    match range {
                        // fio's fixup: a min_bs (or max_bs) of 0 is the direction's bs (4k by default).
                        Some((0, 0)) => *slot = None,
                        Some((lo, hi)) => *slot = Some((lo, hi)),
                        None => {}
                    }
                }
                // fio's bsrange writes min_bs and max_bs, which a bssplit written before it set.
                for (split, range) in self.bssplit.iter_mut().zip(r) {
                    if range.is_some() {
                        *split = None;
                    }
                }
            }
            (Field::BsSplit, P::Text(s)) => {
                for (d, split) in value::parse_bssplit(&s, self.kb_base)?.into_iter().enumerate() {
                    if let Some(split) = split {
                        // It sets min_bs and max_bs, which a bsrange written before it set.
                        self.bsrange[d] = None;
                        self.bssplit[d] = Some(split);
                    }
                }
            }
            (Field::BsUnaligned, P::Flag(b)) => self.bs_unaligned = b,
            (Field::BsIsSeqRand, P::Bool(b)) => self.bs_is_seq_rand = b,
            (Field::OffsetAlign, P::Int(v)) => self.offset_align = Some(v),
            (Field::IoDepth, P::Int(v)) => self.iodepth = to_u32(v),
            (Field::BatchSubmit, P::Int(v)) => self.batch_submit = to_u32(v),
            (Field::BatchCompleteMin, P::Int(v)) => self.complete_min = to_u32(v),
            (Field::BatchCompleteMax, P::Int(v)) => self.complete_max = to_u32(v),
            (Field::IoDepthLow, P::Int(v)) => self.iodepth_low = to_u32(v),
            (Field::IoEngine, P::Text(s)) => self.engine = classify(&s)?,
            (Field::Direct, P::Bool(b)) => self.direct = b,
            (Field::Buffered, P::Bool(b)) => self.direct = !b,
            (Field::CpusAllowed, P::Text(s)) => self.cpus = Some(value::parse_cpu_list(&s, ctx.ncpus)?),
            (Field::CpuMask, P::Int(v)) => self.cpus = Some(value::cpus_of_mask(v, ctx.ncpus)?),
            (Field::CpusPolicy, P::Choice(c, _)) => self.split = c == "split",
            (Field::NumaCpuNodes, P::Text(s)) => self.numa_cpus = Some(value::cpus_of_nodes(&s, ctx)?),
            (Field::Filename, P::Text(s)) => {
                let dir = self.directory.as_deref().map(|d| d.split(':').next().unwrap_or(d));
                for name in value::split_filenames(&s) {
                    self.filenames.push(match dir {
                        Some(d) => format!("{d}/{name}"),
                        None => name,
                    });
                }
            }
            (Field::Directory, P::Text(s)) => self.directory = Some(s.trim().to_string()),
            (Field::Size, P::Size(SizeVal::Bytes(b))) => (self.size, self.size_pct) = ((b > 0).then_some(b), None),
            (Field::Size, P::Size(SizeVal::Percent(100))) => (self.size, self.size_pct) = (None, None),
            (Field::Offset, P::Size(SizeVal::Bytes(b))) => (self.offset, self.offset_pct) = (b, None),
            (Field::Offset, P::Size(SizeVal::Percent(0))) => (self.offset, self.offset_pct) = (0, None),
            (Field::OffsetIncrement, P::Size(SizeVal::Bytes(b))) => {
                (self.offset_increment, self.offset_increment_pct) = (b, None)
            }
            (Field::OffsetIncrement, P::Size(SizeVal::Percent(0))) => {
                (self.offset_increment, self.offset_increment_pct) = (0, None)
            }
            (Field::Size | Field::Offset | Field::OffsetIncrement, P::Size(SizeVal::Percent(p))) if p > 100 => {
                return Err(Refusal::Bad(format!("{p}%: a percentage of the device is at most 100%")))
            }
            (Field::Size, P::Size(SizeVal::Percent(p))) => (self.size, self.size_pct) = (None, Some(p)),
            (Field::Offset, P::Size(SizeVal::Percent(p))) => (self.offset, self.offset_pct) = (0, Some(p)),
            (Field::OffsetIncrement, P::Size(SizeVal::Percent(p))) => {
                (self.offset_increment, self.offset_increment_pct) = (0, Some(p))
            }
            (Field::Size | Field::Offset | Field::OffsetIncrement, P::Zones(n)) => {
                return Err(Refusal::NotModelled(format!(
                    "a size in zones ({n}z) needs a zoned device, which blksim does not model"
                )))
            }
            (Field::Runtime, P::Time(us)) => self.runtime_us = us,
            (Field::TimeBased, P::Flag(b)) => self.time_based = b,
            (Field::RampTime, P::Time(us)) => self.ramp_us = us,
            (Field::StartDelay, P::TimeRange(lo, hi)) if lo == hi => self.startdelay_us = lo,
            (Field::StartDelay, P::TimeRange(..)) => {
                return Err(Refusal::NotModelled("a random start delay (a range) is not modelled by blksim".into()))
            }
            (Field::NoRandomMap, P::Flag(b)) => self.norandommap = b,
            (Field::SoftRandomMap, P::Bool(b)) => self.softrandommap = b,
            (Field::SubmitMode, P::Choice(c, _)) => self.offload = c == "offload",
            (Field::SerializeOverlap, P::Bool(b)) => self.serialize_overlap = b,
            (Field::RandRepeat, P::Bool(b)) => self.randrepeat = b,
            (Field::RandSeed, P::Int(v)) => self.randseed = Some(v),
            (Field::RandomGenerator, P::Choice(c, _)) => {
                use blksim::workload::RandomGenerator as G;
                self.random_generator = match c {
                    "lfsr" => G::Lfsr,
                    "tausworthe64" => G::Tausworthe64,
                    _ => G::Tausworthe,
                }
            }
            (Field::RateIops, P::Dirs(d)) => set_dirs(&mut self.rate_iops, d),
            (Field::Rate, P::Dirs(d)) => set_dirs(&mut self.rate, d),
            (Field::RateMin, P::Dirs(d)) => set_dirs(&mut self.rate_min, d),
            (Field::RateIopsMin, P::Dirs(d)) => set_dirs(&mut self.rate_iops_min, d),
            (Field::RateCycle, P::Int(v)) => self.rate_cycle_ms = v,
            (Field::PercRand, P::Dirs(d)) => {
                if let Some(v) = d.iter().flatten().find(|&&v| v > 100) {
                    return Err(Refusal::Bad(format!(
                        "{v} is above percentage_random's largest value, 100 (fio: out of range)"
                    )));
                }
                set_dirs(&mut self.perc_rand, d)
            }
            (Field::RwSequencer, P::Choice(c, _)) => self.rw_identical = c == "identical",
            (Field::RateProcess, P::Choice(c, _)) => {
                self.rate_process = if c == "poisson" { RateProcess::Poisson } else { RateProcess::Linear }
            }
            (Field::RateIgnoreThinktime, P::Bool(b)) => self.rate_ignore_thinktime = b,
            // fio's FIO_OPT_INT: microseconds in an unsigned int.
            (Field::Thinktime | Field::ThinktimeSpin | Field::ThinktimeIotime, P::Time(us)) if us > u32::MAX as u64 => {
                return Err(Refusal::Bad(format!(
                    "{us} µs is above the maximum {} µs (fio: max value out of range)",
                    u32::MAX
                )))
            }
            (Field::Thinktime, P::Time(us)) => self.thinktime.think_us = us,
            (Field::ThinktimeSpin, P::Time(us)) => self.thinktime.spin_us = us,
            (Field::ThinktimeBlocks, P::Int(v)) => {
                self.thinktime.blocks = v;
                self.thinktime.blocks_set = true;
            }
            (Field::ThinktimeBlocksType, P::Choice(c, _)) => self.thinktime.count_issued = c == "issue",
            (Field::ThinktimeIotime, P::Time(us)) => self.thinktime.iotime_us = us,
            (Field::Thinkcycles, P::Int(v)) => self.thinkcycles = v,
            (Field::IoSize, P::Size(SizeVal::Bytes(b))) => self.io_size = (b > 0).then_some(b),
            // fio's io_size_percent: 0 and 100 leave the amount as it is.
            (Field::IoSize, P::Size(SizeVal::Percent(0 | 100))) => self.io_size = None,
            (Field::IoSize, P::Size(SizeVal::Percent(p))) if p > 100 => {
                return Err(Refusal::Bad(format!(
                    "io_size={p}%: fio refuses it (fio: io_size values greater than 100% aren't supported)"
                )))
            }
            (Field::IoSize, P::Size(SizeVal::Percent(p))) => {
                return Err(Refusal::NotModelled(format!(
                    "io_size={p}%: a percentage of the device is not modelled by blksim; give a size in bytes"
                )))
            }
            (Field::IoSize, P::Zones(n)) => {
                return Err(Refusal::NotModelled(format!(
                    "io_size={n}z: a size in zones needs a zoned device, which blksim does not model"
                )))
            }
            (Field::NumberIos, P::Int(v)) => self.number_ios = v,
            (Field::Fsync, P::Int(v)) => self.sync_every[0] = v,
            (Field::Fdatasync, P::Int(v)) => self.sync_every[1] = v,
            (Field::EndFsync, P::Bool(b)) => self.end_fsync = b,
            (Field::FsyncOnClose, P::Bool(b)) => self.fsync_on_close = b,
            (Field::SyncIo, P::Choice(c, _)) => self.sync_io = !matches!(c, "none" | "0"),
            (Field::NumRange, P::Int(v)) => self.num_range = v,
            (Field::ZoneMode, P::Choice("zbd", _)) => {
                // Kept, so that zbd's zonesize is not also taken for zonemode=none's.
                self.zone_mode = Some("zbd");
                return Err(Refusal::NotModelled(
                    "zonemode=zbd: zoned block devices are not modelled (zonemode=strided is)".into(),
                ));
            }
            (Field::ZoneMode, P::Choice(c, _)) => self.zone_mode = Some(c),
            (Field::FileSize, P::Int(v)) => self.filesize = Some(v),
            (Field::ZoneSize, P::Int(v)) => self.zone_size = v,
            (Field::ZoneRange, P::Int(v)) => self.zone_range = v,
            (Field::ZoneSkip, P::Size(SizeVal::Bytes(v))) => self.zone_skip = v,
            (Field::ZoneSkip, P::Size(SizeVal::Percent(p))) => {
                return Err(Refusal::NotModelled(format!(
                    "zoneskip={p}%: a percentage of the device is not modelled by blksim; give a size in bytes"
                )))
            }
            (Field::ZoneSkip, P::Zones(n)) => {
                return Err(Refusal::NotModelled(format!(
                    "zoneskip={n}z: a count of zones is zonemode=zbd's, which blksim does not model"
                )))
            }
            (Field::Loops, P::Int(v)) => self.loops = to_u32(v),
            (Field::NumJobs, P::Int(v)) => self.numjobs = to_u32(v),
            (Field::GroupReporting, P::Flag(b)) => self.group_reporting = b,
            (Field::Thread, P::Flag(b)) => self.thread = b,
            (Field::GtodReduce, P::Bool(b)) => {
                self.gtod_reduce = b;
                if b {
                    // fio's str_gtod_reduce_cb.
                    let l = &mut self.logs;
                    (l.disable_lat, l.disable_clat, l.disable_slat, l.disable_bw) = (true, true, true, true);
                    self.clat_percentiles = false;
                    self.lat_percentiles = false;
                    self.slat_percentiles = false;
                }
            }
            (Field::ClatPercentiles, P::Bool(b)) => self.clat_percentiles = b,
            (Field::LatPercentiles, P::Bool(b)) => self.lat_percentiles = b,
            (Field::SlatPercentiles, P::Bool(b)) => self.slat_percentiles = b,
            (Field::PercentileList, P::Floats(list)) => self.percentile_list = list,
            (Field::Description, P::Text(s)) => self.description = Some(s).filter(|s| !s.is_empty()),
            (Field::SignificantFigures, P::Int(v)) => self.sig_figs = v as u32,
            (Field::UnitBase, P::Choice(c, _)) => self.bit_based = c == "1",
            (Field::UnifiedRwReporting, P::Choice(c, _)) => {
                use blksim::workload::UnifiedRw;
                self.unified_rw_reporting = match c {
                    "mixed" | "1" => UnifiedRw::Mixed,
                    "both" | "2" => UnifiedRw::Both,
                    _ => UnifiedRw::Split,
                }
            }
            (Field::Stonewall, P::Flag(b)) => self.stonewall = b,
            (Field::ContinueOnError, P::Choice(c, _)) => {
                self.error_options.continue_on_error = (!matches!(c, "none" | "0")).then(|| c.to_string());
            }
            (Field::IgnoreError, P::Text(s)) => {
                self.error_options.ignore_error = Some(s.trim().to_string()).filter(|s| !s.is_empty());
            }
            (Field::ExitallOnError, P::Flag(b)) => self.error_options.exitall = b,
            (Field::Exitall, P::Flag(_)) => self.exitall = true,
            (Field::MaxLatency, P::Dirs(d)) => set_dirs(&mut self.max_latency_us, d),
            (Field::LatencyTarget, P::Time(us)) => self.latency_target_us = us,
            (Field::LatencyWindow, P::Time(us)) => self.latency_window_us = us,
            (Field::LatencyPercentile, P::Floats(v)) => self.latency_percentile = v.first().copied().unwrap_or(100.0),
            (Field::LatencyRun, P::Bool(b)) => self.latency_run = b,
            (Field::ExitWhat, P::Choice(c, _)) => {
                use blksim::workload::ExitWhat;
                self.exit_what = match c {
                    "stonewall" => ExitWhat::Stonewall,
                    "all" => ExitWhat::All,
                    _ => ExitWhat::Group,
                }
            }
            (Field::NewGroup, P::Flag(b)) => self.new_group = b,
            (Field::KbBase, P::Choice(c, _)) => self.kb_base = if c == "1000" { 1000 } else { 1024 },
            (Field::Hipri, P::Flag(b)) => self.engine_opts().hipri = b,
            (Field::FixedBufs, P::Flag(b)) => self.engine_opts().fixedbufs = b,
            (Field::RegisterFiles, P::Flag(b)) => self.engine_opts().registerfiles = b,
            (Field::SqThreadPoll, P::Flag(b)) => self.engine_opts().sqthread_poll = b,
            (Field::SqThreadPollCpu, P::Int(cpu)) => {
                if cpu >= ctx.ncpus as u64 {
                    return Err(
                        format!("CPU {cpu} does not exist (the simulated machine has {} CPUs)", ctx.ncpus).into()
                    );
                }
                self.engine_opts().sqthread_poll_cpu = Some(cpu as u32);
            }
            (Field::CmdType, P::Choice("nvme", _)) => {}
            (Field::CmdType, P::Choice(other, _)) => {
                return Err(Refusal::NotModelled(format!(
                    "cmd_type={other} is not modelled by blksim; it simulates cmd_type=nvme"
                )))
            }
            (Field::WriteBwLog, P::Text(s)) => self.logs.bw = Some(s),
            (Field::WriteLatLog, P::Text(s)) => self.logs.lat = Some(s),
            (Field::WriteIopsLog, P::Text(s)) => self.logs.iops = Some(s),
            (Field::WriteHistLog, P::Text(s)) => self.logs.hist = Some(s),
            (Field::WriteIolog, P::Text(s)) => self.logs.iolog = Some(s),
            (Field::IoScheduler, P::Text(s)) => self.ioscheduler = Some(s),
            (Field::ReadIolog, P::Text(s)) => self.replay.file = Some(s),
            (Field::Verify, P::Choice(name, _)) => self.verify.algo = blksim::workload::VerifyAlgo::from_fio(name),
            (Field::DoVerify, P::Bool(b)) => self.verify.do_verify = b,
            (Field::VerifyPattern, P::Text(s)) => self.verify.pattern = !s.trim().is_empty(),
            (Field::VerifyBacklog, P::Int(v)) => self.verify.backlog = v,
            (Field::VerifyBacklogBatch, P::Int(v)) => self.verify.backlog_batch = v,
            (Field::ExperimentalVerify, P::Bool(b)) => self.verify.experimental = b,
            (Field::VerifyStateSave, P::Bool(b)) => self.verify.state_save = b,
            (Field::VerifyStateLoad, P::Bool(b)) => self.verify.state_load = b,
            (Field::VerifyAsync, P::Int(v)) => self.verify_async = v,
            (Field::VerifyAsyncCpus, P::Text(s)) => self.verify_cpus = Some(value::parse_cpu_list(&s, ctx.ncpus)?),
            (Field::Flow, P::Int(v)) => self.flow[0] = v,
            (Field::FlowId, P::Int(v)) => self.flow[1] = v,
            (Field::FlowSleep, P::Int(v)) => self.flow[2] = v,
            (Field::ReplayNoStall, P::Bool(b)) => self.replay.no_stall = b,
            (Field::ReplayRedirect, P::Text(s)) => self.replay.redirect = Some(s),
            (Field::ReplayScale, P::Int(v)) => self.replay.scale = v,
            (Field::ReplayAlign, P::Int(v)) => {
                if v != 0 && !v.is_power_of_two() {
                    return Err(format!("{v} is not a power of two").into());
                }
                self.replay.align = v;
            }
            (Field::ReplayTimeScale, P::Int(v)) => self.replay.time_scale = v,
            (Field::ReplaySkip, P::Text(s)) => self.replay.skip = super::iolog::parse_skip(&s)?,
            (Field::MergeBlktraceFile, P::Text(s)) => self.replay.merge.file = Some(s),
            // fio's init_merge_param_list: whole numbers (cast to int), the list ending at a 0.
            (Field::MergeBlktraceScalars, P::Floats(v)) => self.replay.merge.scalars = merge_params(&v),
            (Field::MergeBlktraceIters, P::Floats(v)) => self.replay.merge.iters = merge_params(&v),
            (Field::LogAvgMsec, P::Int(v)) => self.logs.avg_msec = v,
            (Field::LogHistMsec, P::Int(v)) => self.logs.hist_msec = v,
            (Field::LogHistCoarseness, P::Int(v)) => self.logs.hist_coarseness = v as u32,
            (Field::LogWindowValue, P::Choice(c, _)) => {
                self.logs.window = match c {
                    "max" | "1" => LogWindowValue::Max,
                    "both" => LogWindowValue::Both,
                    _ => LogWindowValue::Avg,
                }
            }
            (Field::LogOffset, P::Bool(b)) => self.logs.offset = b,
            (Field::LogAlternateEpoch, P::Bool(b)) => self.logs.alternate_epoch = b,
            (Field::DiskUtil, P::Bool(b)) => self.disk_util = b,
            (Field::LogPrio, P::Bool(b)) => self.logs.prio = b,
            (Field::Prio, P::Int(v)) => self.ioprio[1] = Some(v as u32),
            (Field::PrioClass, P::Int(v)) => self.ioprio[0] = Some(v as u32),
            (Field::PrioHint, P::Int(v)) => self.ioprio[2] = Some(v as u32),
            (
                f @ (Field::CmdprioPercentage | Field::CmdprioClass | Field::Cmdprio | Field::CmdprioHint),
                P::Dirs(d),
            ) => {
                // fio's maxval of each.
                let (name, max) = match f {
                    Field::CmdprioPercentage => ("cmdprio_percentage", 100),
                    Field::CmdprioClass => ("cmdprio_class", 3),
                    Field::Cmdprio => ("cmdprio", 7),
                    _ => ("cmdprio_hint", 1023),
                };
                if let Some(v) = d.iter().flatten().find(|&&v| v > max) {
                    return Err(Refusal::Bad(format!(
                        "{v} is above {name}'s largest value, {max} (fio: out of range)"
                    )));
                }
                let e = self.engine_opts();
                let target = match f {
                    Field::CmdprioPercentage => &mut e.cmdprio_percentage,
                    Field::CmdprioClass => &mut e.cmdprio_class,
                    Field::Cmdprio => &mut e.cmdprio_level,
                    _ => &mut e.cmdprio_hint,
                };
                // off1, off2: a trim value is ignored.
                for (t, v) in target.iter_mut().zip(d) {
                    if let Some(v) = v {
                        *t = v;
                    }
                }
            }
            (Field::CmdprioBssplit, P::Text(s)) => {
                let split = value::parse_cmdprio_bssplit(&s, self.kb_base).map_err(Refusal::Bad)?;
                self.engine_opts().cmdprio_bssplit = split.iter().any(|d| !d.is_empty()).then_some(split);
            }
            (Field::LogIssueTime, P::Bool(b)) => self.logs.issue_time = b,
            (Field::PerJobLogs, P::Bool(b)) => self.logs.per_job = b,
            (Field::BwAvgTime, P::Int(v)) => self.logs.bw_avg_msec = Some(v),
            (Field::IopsAvgTime, P::Int(v)) => self.logs.iops_avg_msec = Some(v),
            (Field::DisableLat, P::Bool(b)) => self.logs.disable_lat = b,
            (Field::DisableClat, P::Bool(b)) => self.logs.disable_clat = b,
            (Field::DisableSlat, P::Bool(b)) => self.logs.disable_slat = b,
            (Field::DisableBw, P::Bool(b)) => self.logs.disable_bw = b,
            (field, v) => {
                return Err(format!("internal error: the option table gives {field:?} the value {v:?}").into())
            }
        }
        Ok(())
    }

    /// Direction `d`'s `bssplit` as the job uses it: each size aligned to the smallest as fio's
    /// `get_next_buflen` aligns it (unless `bs_unaligned`); `None` without a split.
    pub fn bssplit_of(&self, d: usize) -> Option<Vec<BsSplit>> {
        let split = self.bssplit[d].as_ref()?;
        let min = split.iter().map(|e| e.bs).min()?;
        Some(
            split
                .iter()
                .map(|e| {
                    let bs = if self.bs_unaligned {
                        e.bs
                    } else if min.is_power_of_two() {
                        e.bs & !(min - 1)
                    } else {
                        e.bs - e.bs % min
                    };
                    BsSplit { bs, perc: e.perc }
                })
                .collect(),
        )
    }

    /// fio turns its random map off for `norandommap`, for the LFSR (which
    /// needs none), and for a random job whose `blockalign` differs from a
    /// direction's smallest block size.
    pub fn no_random_map(&self) -> bool {
        self.norandommap_set() || self.random_generator.is_lfsr()
    }

    /// fio's `o->norandommap`: given, or set by fixup_options when a random
    /// job's `blockalign` is not its smallest block size ("Any use of
    /// blockalign= turns off randommap") and for any `random_distribution`
    /// but `random` ("a non-uniform random distribution excludes usage of a
    /// random map").
    pub fn norandommap_set(&self) -> bool {
        let min = |d: usize| self.block_sizes_of(d).into_iter().min().unwrap_or(self.bs[d]);
        self.norandommap
            || self.random_distribution != RandomDistribution::Random
            || (self.rw.is_random() && (0..3).any(|d| self.ba[d] > 0 && self.ba[d] != min(d)))
    }

    /// Every block size direction `d` may use: its `bssplit`'s, else
    /// `bsrange`'s smallest and largest (the sizes between are multiples of
    /// the smallest), else `bs`.
    pub fn block_sizes_of(&self, d: usize) -> Vec<u64> {
        match self.bssplit_of(d) {
            Some(split) => split.iter().map(|e| e.bs).collect(),
            None => match self.bsrange[d] {
                Some((lo, hi)) => {
                    let lo = if lo == 0 { self.bs[d] } else { lo };
                    let hi = if hi == 0 { self.bs[d] } else { hi };
                    if lo == hi {
                        vec![lo]
                    } else {
                        vec![lo, hi]
                    }
                }
                None => vec![self.bs[d]],
            },
        }
    }

    /// fio's str_rw_cb: `rw=randread:N` draws a random offset every N I/Os
    /// (sequential in between; 1 to 2^32-1), `rw=read:N` adds N bytes (a
    /// size, negative to go backwards) after each I/O.
    fn rw_suffix(&mut self, name: &str, post: &str) -> Result<(), Refusal> {
        let (negative, digits) = match post.trim().strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, post.trim()),
        };
        let bad = |what: &str| Refusal::Bad(format!("rw={name}:{post}: the suffix must be {what}"));
        let v = value::parse_bytes(digits, self.kb_base)
            .map_err(|_| bad(if self.rw.is_random() { "a number of I/Os" } else { "a size" }))?;
        if self.rw.is_random() {
            if negative || v == 0 || v > u32::MAX as u64 {
                return Err(bad("a number of I/Os from 1 to 4294967295 (fio: randrw postfix parsing out of range)"));
            }
            self.ddir_seq_nr = v as u32;
        } else {
            let v = i64::try_from(v).map_err(|_| bad("a size below 8 EiB"))?;
            self.ddir_seq_add = if negative { -v } else { v };
        }
        Ok(())
    }
}

fn set_dirs(target: &mut [u64; 3], d: [Option<u64>; 3]) {
    for (t, v) in target.iter_mut().zip(d) {
        if let Some(v) = v {
            *t = v;
        }
    }
}

/// A merge_blktrace list as fio's `init_merge_param_list` takes it: each value
/// cast to an int, the list ending at its first 0.
fn merge_params(values: &[f64]) -> Vec<u64> {
    values.iter().map(|&v| v as u64).take_while(|&v| v != 0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_read_values_like_fio() {
        let p = |k, v| parse_kind(k, v, 1024);
        assert!(matches!(p(Kind::Flag, None), Ok(Parsed::Flag(true))));
        assert!(matches!(p(Kind::Flag, Some("0")), Ok(Parsed::Flag(false))));
        assert!(p(Kind::Bool, None).is_err(), "fio: 'Option direct requires an argument'");
        assert!(matches!(p(Kind::Int { min: 1, max: 10 }, Some(" 4")), Ok(Parsed::Int(4))));
        assert!(p(Kind::Int { min: 1, max: 10 }, Some("0")).is_err());
        assert!(p(Kind::Int { min: 1, max: 10 }, Some("11")).is_err());
        assert!(matches!(p(Kind::Int { min: 0, max: u64::MAX }, Some("4k,8")), Ok(Parsed::Int(4096))));
        assert!(matches!(p(Kind::Size, Some("8z")), Ok(Parsed::Zones(8))));
        assert!(matches!(p(Kind::Size, Some("50%")), Ok(Parsed::Size(SizeVal::Percent(50)))));
        assert!(matches!(p(Kind::TimeRange, Some("1-5")), Ok(Parsed::TimeRange(1_000_000, 5_000_000))));
        assert!(matches!(p(Kind::Choice(&["a", "bb"]), Some("bb:3")), Ok(Parsed::Choice("bb", Some(_)))));
        assert!(p(Kind::Choice(&["read"]), Some(" read")).is_err());
        assert!(p(Kind::Choice(&["read"]), Some("readx")).is_err());
        assert!(p(Kind::Text, None).is_err());
        assert!(matches!(p(Kind::OptText, None), Ok(Parsed::Text(_))));
        assert!(p(Kind::Deprecated, Some("1")).is_err());
        assert!(matches!(p(Kind::SoftDeprecated, Some("1")), Ok(Parsed::Nothing)));
    }
}
