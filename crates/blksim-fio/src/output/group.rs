//! fio's report aggregation (`stat.c` __show_run_stats, sum_thread_stats,
//! sum_group_stats): jobs into reported blocks (one per job, or one per group
//! with `group_reporting`) and per-group run statistics.

use blksim::stats::report::PrioStat;
use blksim::stats::{DirStats, JobStats, LatencyStat, RunReport};
use blksim::workload::{JobConfig, UnifiedRw};

use super::fmt::N2sUnit;
use super::stats::{IoStat, LatBuckets};
use crate::job::JobFile;

/// One direction of a reported block (fio's per-ddir fields of `thread_stat`).
#[derive(Clone, Debug, Default)]
pub struct DirBlock {
    pub total_ios: u64,
    pub io_bytes: u64,
    /// Milliseconds; 0 when the direction did no I/O.
    pub runtime_ms: u64,
    pub slat: LatencyStat,
    pub clat: LatencyStat,
    pub lat: LatencyStat,
    /// KiB/s samples, as fio's bw_stat.
    pub bw: IoStat,
    pub iops: IoStat,
    /// Per-priority latencies (fio's `clat_prio[ddir]`), when the block keeps them.
    pub prios: Vec<PrioStat>,
}

impl DirBlock {
    /// fio's `sum_thread_stats` for one direction into another: latencies
    /// merged, bandwidth and IOPS samples summed as fio sums them (`sum_stat`
    /// with `pure_sum`), the longer run time.
    fn add(&mut self, other: &DirBlock) {
        self.slat.merge(&other.slat);
        self.clat.merge(&other.clat);
        self.lat.merge(&other.lat);
        self.bw.pure_sum(&other.bw);
        self.iops.pure_sum(&other.iops);
        self.io_bytes += other.io_bytes;
        self.total_ios += other.total_ios;
        self.runtime_ms = self.runtime_ms.max(other.runtime_ms);
    }

    /// The priorities of which it has samples (fio's `get_nr_prios_with_samples`):
    /// fio reports them from two on.
    pub fn prios_shown(&self) -> Option<impl Iterator<Item = &PrioStat>> {
        let with_samples = || self.prios.iter().filter(|p| p.lat.n > 0);
        (with_samples().count() >= 2).then(with_samples)
    }
}

/// fio's `sum_clat_prio_stats` of one direction: a source without
/// per-priority statistics adds its clat (lat with `lat_percentiles`) as
/// `ioprio`'s; one with them is copied into an empty `dst`, else added priority by priority.
fn sum_prios(dst: &mut Vec<PrioStat>, src: &[PrioStat], whole: (&LatencyStat, &LatencyStat), ioprio: u16, lat: bool) {
    if src.is_empty() {
        add_prio(dst, ioprio, if lat { whole.1 } else { whole.0 });
    } else if dst.is_empty() {
        dst.extend(src.iter().cloned());
    } else {
        for p in src {
            add_prio(dst, p.ioprio, &p.lat);
        }
    }
}

/// fio's `clat_prio_stat_add_samples`.
fn add_prio(dst: &mut Vec<PrioStat>, ioprio: u16, stat: &LatencyStat) {
    if stat.n == 0 {
        return;
    }
    let i = match dst.iter().position(|p| p.ioprio == ioprio) {
        Some(i) => i,
        None => {
            dst.push(PrioStat::of(ioprio));
            dst.len() - 1
        }
    };
    dst[i].lat.merge(stat);
}

/// One reported block: a job, or a group merged by `group_reporting` (fio's `thread_stat`).
#[derive(Clone, Debug)]
pub struct Block<'a> {
    /// Name, group, pid and start time come from the first member.
    pub name: String,
    pub group_id: u32,
    pub pid: u32,
    pub job_start_ms: u64,
    pub members: u32,
    /// The first member's `description` (fio copies it with the name).
    pub description: Option<&'a str>,
    /// The last member's configuration: fio copies percentile settings and the
    /// latency depth from each member in turn, so the last one wins.
    pub config: &'a JobConfig,
    /// The last member's own options (fio's `opt_lists[j]`).
    pub options: &'a [(String, String)],
    /// The last member's `td->latency_qd`: where its `latency_target` search
    /// ended, or its `iodepth` without one.
    pub latency_depth: u32,
    /// Read, write, trim; with `unified_rw_reporting=mixed` all in the first (fio's ddir 0).
    pub dirs: [DirBlock; 3],
    /// fsyncs and fdatasyncs (fio's `total_io_u[DDIR_SYNC]`, `sync_stat`).
    pub sync_ios: u64,
    /// end_fsync's io_us counted in the IO depths (an async engine's), not divided by.
    pub end_syncs_in_depth: u64,
    /// Queued io_us not in the depth counts (`JobReport::iodepth_unmarked`).
    pub unmarked_ios: u64,
    pub sync_lat: LatencyStat,
    /// The first member's `unified_rw_reporting` (fio's `ts->unified_rw_rep`).
    pub unified: UnifiedRw,
    /// The first member's `kb_base` (fio's `ts->kb_base`).
    pub kb_base: u64,
    /// The first member's `significant_figures` (fio's `ts->sig_figs`).
    pub sig_figs: usize,
    /// The first member's bandwidth unit (fio's `ts->unit_base`).
    pub rate_unit: N2sUnit,
    pub usr_ns: u64,
    pub sys_ns: u64,
    pub ctx: u64,
    /// Sum of the members' run times, ns (fio's total_run_time).
    pub total_run_ns: u64,
    pub iodepth_level: [u64; 7],
    pub iodepth_submit: [u64; 7],
    pub iodepth_complete: [u64; 7],
    pub lat_buckets: LatBuckets,
    /// The first member's I/O error (fio's `ts->error`, `ts->verror`).
    pub error: Option<&'a blksim::stats::JobError>,
    /// The first member's I/O priority (fio's `ts->ioprio`).
    pub ioprio: u16,
    /// It keeps per-priority latencies (fio's `!ts->disable_prio_stat`): a
    /// member has them, or members' priorities differ.
    pub prio_stats: bool,
}

impl Block<'_> {
    /// fio's `err=` value: the errno, positive.
    pub fn errno(&self) -> i32 {
        self.error.map_or(0, |e| -e.errno)
    }

    /// fio's `total_err_count` and `first_error`, shown when the last member
    /// sets `continue_on_error` (fio's `ts->continue_on_error`). Both are 0 in
    /// every report blksim writes: an I/O error under `continue_on_error` ends
    /// the run as not modelled (`ErrorOptions::unmodelled`), and the errors
    /// blksim does model (a minimum rate missed) are not counted there by fio.
    pub fn error_counts(&self) -> Option<(u64, i32)> {
        self.config.error_options.continue_on_error.as_ref().map(|_| (0, 0))
    }

    /// fio's `td->verror` for an io_u error.
    pub fn verror(&self) -> Option<String> {
        self.error.map(|e| verror(self.config, e))
    }

    pub fn total_ios(&self) -> u64 {
        self.dirs.iter().map(|d| d.total_ios).sum()
    }
    /// fio's `total_io_u` as its IO depths line divides by: the I/Os
    /// queued since the epoch (the depth counts' sum; after a ramp, less
    /// those in flight when fio reset), or the completed ones if no depth was counted.
    pub fn queued_ios(&self) -> u64 {
        match self.iodepth_level.iter().sum() {
            0 => self.total_ios(),
            // fio divides by the reads, writes and trims issued, while its depth
            // counts have the syncs too (so 1=200.0% with fsync=1).
            // Those queued and never counted (`unmarked_ios`) are in fio's divisor.
            n => (n + self.unmarked_ios).saturating_sub(self.sync_ios + self.end_syncs_in_depth).max(1),
        }
    }
    pub fn io_bytes(&self) -> u64 {
        self.dirs.iter().map(|d| d.io_bytes).sum()
    }
    /// fio's `gen_mixed_ddir_stats_from_ts`: the directions summed into one,
    /// reported as `mixed` after them with `unified_rw_reporting=both`.
    pub fn mixed(&self) -> DirBlock {
        let mut sum = DirBlock::default();
        let mut prios = Vec::new();
        for dir in &self.dirs {
            sum.add(dir);
            // gen_mixed_ddir_stats_from_ts sums with the priorities kept.
            sum_prios(&mut prios, &dir.prios, (&dir.clat, &dir.lat), self.ioprio, self.config.lat_percentiles);
        }
        sum.prios = prios;
        sum
    }
    /// The name of direction `d` in the report: fio's `io_ddir_name`, or
    /// `mixed` for the one direction of `unified_rw_reporting=mixed`.
    pub fn dir_name(&self, d: usize) -> &'static str {
        if self.unified == UnifiedRw::Mixed {
            "mixed"
        } else {
            ["read", "write", "trim"][d]
        }
    }
    /// Percentage of the block's run time spent in user and system mode.
    pub fn cpu_percent(&self) -> (f64, f64) {
        if self.total_run_ns == 0 {
            return (0.0, 0.0);
        }
        let runtime = self.total_run_ns as f64;
        (self.usr_ns as f64 * 100.0 / runtime, self.sys_ns as f64 * 100.0 / runtime)
    }
}

/// fio 3.42's `td->verror` for a job's failed I/O: a synchronous engine's
/// queue hook (or libaio's and posixaio's, for a trim) returns it completed with its error, which `td_io_queue`
/// records (ioengines.c); an asynchronous engine's is found as it
/// completes (`__io_u_log_error`, io_u.c).
pub fn verror(config: &blksim::workload::JobConfig, e: &blksim::stats::JobError) -> String {
    let error = strerror(-e.errno);
    if !e.min_rate.is_empty() {
        format!("file:backend.c:1297, func=check_min_rate, error={error}")
    } else if e.max_latency.is_some() {
        format!("file:io_u.c:1551, func=max latency exceeded, error={error}")
    } else if config.ioengine.completes_in_queue(e.dir) {
        format!("file:ioengines.c:415, func=td_io_queue, error={error}")
    } else {
        format!("file:io_u.c:2018, func=io_u error, error={error}")
    }
}

/// What fio logs as each failed job's thread exits (backend.c's
/// `fio: pid=N, err=E/VERROR`), one line per job, in job order.
pub fn job_error_lines(report: &blksim::stats::RunReport) -> String {
    let mut out = String::new();
    for (i, j) in report.jobs.iter().enumerate() {
        if let Some(e) = &j.error {
            out.push_str(&format!("fio: pid={}, err={}/{}\n", job_pid(i + 1), -e.errno, verror(&j.config, e)));
        }
    }
    out
}

/// A job's simulated pid: blksim has no processes, so a stable made-up number.
fn job_pid(thread_number: usize) -> u32 {
    1000 + thread_number as u32
}

/// Milliseconds of a direction's run time: fio's runtime[ddir] is set only for
/// directions that moved data. A simulated run can be shorter than a
/// millisecond; it counts as 1 ms so its I/O is still reported.
fn dir_runtime_ms(job: &JobStats, io_bytes: u64) -> u64 {
    if io_bytes == 0 {
        0
    } else {
        (job.runtime_ns / 1_000_000).max(1)
    }
}

/// fio's `td->job_start`: the clock when the job's epoch was set (`set_epoch_time`), at its start and
/// again when its `ramp_time` ended (`reset_all_stats`).
fn job_epoch_ns(job: &JobStats) -> u64 {
    if job.runtime_ns > 0 {
        job.end_ns.saturating_sub(job.runtime_ns)
    } else {
        job.start_ns
    }
}

fn new_block<'a>(job: &'a JobStats, index: usize, options: &'a [(String, String)]) -> Block<'a> {
    Block {
        name: job.config.name.clone(),
        group_id: job.config.group_id,
        pid: job_pid(index + 1),
        job_start_ms: job_epoch_ns(job) / 1_000_000,
        members: 0,
        description: job.config.description.as_deref(),
        config: &job.config,
        options,
        latency_depth: job.config.iodepth,
        dirs: Default::default(),
        sync_ios: 0,
        end_syncs_in_depth: 0,
        unmarked_ios: 0,
        sync_lat: LatencyStat::default(),
        unified: job.config.unified_rw_reporting,
        kb_base: job.config.kb_base,
        sig_figs: job.config.sig_figs as usize,
        rate_unit: rate_unit(&job.config),
        usr_ns: 0,
        sys_ns: 0,
        ctx: 0,
        total_run_ns: 0,
        iodepth_level: [0; 7],
        iodepth_submit: [0; 7],
        iodepth_complete: [0; 7],
        lat_buckets: LatBuckets::default(),
        error: None,
        ioprio: job.config.ioprio,
        prio_stats: false,
    }
}

/// `strerror` for the errnos the model produces.
pub fn strerror(errno: i32) -> &'static str {
    match errno {
        95 => "Operation not supported",
        14 => "Bad address",
        5 => "Input/output error",
        22 => "Invalid argument",
        110 => "Connection timed out",
        _ => "Unknown error",
    }
}

fn add_member<'a>(block: &mut Block<'a>, job: &'a JobStats, options: &'a [(String, String)]) {
    let config = &job.config;
    let with_lat = !config.gtod_reduce;
    let with_slat = with_lat && !config.ioengine.is_sync();
    for (d, dir) in job.dirs.iter().enumerate() {
        // unified_rw_reporting=mixed: every direction into the first.
        let sum = &mut block.dirs[if block.unified == UnifiedRw::Mixed { 0 } else { d }];
        if with_slat {
            sum.slat.merge(&dir.slat);
        }
        if with_lat {
            sum.clat.merge(&dir.clat);
            sum.lat.merge(&dir.lat);
            block.lat_buckets.add(&LatBuckets::from_histogram(&dir.clat));
        }
        sum.bw.pure_sum(&IoStat::from_samples(dir.bw_samples.iter().map(|b| b / 1024)));
        sum.iops.pure_sum(&IoStat::from_samples(dir.iops_samples.iter().copied()));
        sum.io_bytes += dir.io_bytes;
        sum.total_ios += dir.total_ios;
        sum.runtime_ms = sum.runtime_ms.max(dir_runtime_ms(job, dir.io_bytes));
    }
    block.sync_ios += job.sync.total_ios;
    block.end_syncs_in_depth += job.sync.end_in_depth;
    block.unmarked_ios += job.iodepth_unmarked;
    block.sync_lat.merge(&job.sync.lat);
    block.usr_ns += job.usr_ns;
    block.sys_ns += job.sys_ns;
    block.ctx += job.ctx;
    block.total_run_ns += job.total_run_ns();
    for k in 0..7 {
        block.iodepth_level[k] += job.iodepth_level[k];
        block.iodepth_submit[k] += job.iodepth_submit[k];
        block.iodepth_complete[k] += job.iodepth_complete[k];
    }
    // fio's __show_run_stats: a member of another priority, or with its own per-priority ones.
    if (block.members > 0 && config.ioprio != block.ioprio) || job.dirs.iter().any(|d| !d.prios.is_empty()) {
        block.prio_stats = true;
    }
    block.config = config;
    block.options = options;
    block.latency_depth = job.latency_depth.unwrap_or(config.iodepth);
    block.members += 1;
    if block.error.is_none() {
        block.error = job.error.as_ref();
    }
}

/// The reported blocks in fio's order. A job joins the block before it when it
/// has `group_reporting` and the same group id as the job before it
/// (`__show_run_stats`). Report jobs pair with `jobs.jobs` by index.
pub fn blocks<'a>(report: &'a RunReport, jobs: &'a JobFile) -> Vec<Block<'a>> {
    let mut out: Vec<Block<'a>> = Vec::new();
    let mut last_group = None;
    let mut member_of = Vec::with_capacity(report.jobs.len());
    for (index, job) in report.jobs.iter().enumerate() {
        let options = jobs.jobs.get(index).map_or(&[][..], |p| p.options.as_slice());
        let joins = job.config.group_reporting && last_group == Some(job.config.group_id);
        if out.is_empty() || !joins {
            out.push(new_block(job, index, options));
        }
        add_member(out.last_mut().expect("a block was just pushed"), job, options);
        member_of.push(out.len() - 1);
        last_group = Some(job.config.group_id);
    }
    // sum_thread_stats' per-priority part, once the blocks know whether they keep them.
    for (job, &b) in report.jobs.iter().zip(&member_of) {
        let block = &mut out[b];
        if block.prio_stats && !job.config.gtod_reduce {
            add_prios(block, job);
        }
    }
    out
}

/// A member's per-priority latencies into its block (`unified_rw_reporting=mixed`: all into the first).
fn add_prios(block: &mut Block, job: &JobStats) {
    let mixed = block.unified == UnifiedRw::Mixed;
    for (d, dir) in job.dirs.iter().enumerate() {
        let DirStats { prios, clat, lat, .. } = dir;
        let dst = &mut block.dirs[if mixed { 0 } else { d }].prios;
        sum_prios(dst, prios, (clat, lat), job.config.ioprio, job.config.lat_percentiles);
    }
}

/// fio's `unit_base` after `fixup_options`: bytes per second, or bits with `unit_base=1`.
fn rate_unit(config: &JobConfig) -> N2sUnit {
    if config.bit_based {
        N2sUnit::BitPerSec
    } else {
        N2sUnit::BytePerSec
    }
}

/// fio's `group_run_stats` for one reporting group, per direction.
#[derive(Clone, Debug, Default)]
pub struct GroupStats {
    pub group_id: u32,
    /// Run time in ms of the shortest and longest block.
    pub min_run: [u64; 3],
    pub max_run: [u64; 3],
    /// Bandwidth in bytes/s of the slowest and fastest block.
    pub min_bw: [u64; 3],
    pub max_bw: [u64; 3],
    pub io_bytes: [u64; 3],
    /// Aggregate bandwidth, bytes/s: all bytes over the longest run time.
    pub agg: [u64; 3],
    /// fio's `rs->unified_rw_rep`: its members' `UnifiedRw` values OR-ed.
    pub unified: u8,
    /// fio's `rs->kb_base`: the last block's.
    pub kb_base: u64,
    /// fio's `rs->sig_figs` and `rs->unit_base`: the last block's.
    pub sig_figs: usize,
    pub rate_unit: N2sUnit,
}

impl GroupStats {
    /// The group's lines say `MIXED` for its one direction.
    pub fn mixed(&self) -> bool {
        self.unified == UnifiedRw::Mixed as u8
    }
    /// fio's `show_mixed_group_stats` line follows the directions' lines.
    pub fn both(&self) -> bool {
        self.unified == UnifiedRw::Both as u8
    }
}

/// Run statistics of groups 0..=highest group id, in order (empty groups included, as fio does).
pub fn group_stats(blocks: &[Block]) -> Vec<GroupStats> {
    let highest = blocks.iter().map(|b| b.group_id).max();
    let count = highest.map_or(0, |g| g as usize + 1);
    let mut groups: Vec<GroupStats> = (0..count)
        .map(|g| GroupStats { group_id: g as u32, min_bw: [u64::MAX; 3], min_run: [u64::MAX; 3], ..Default::default() })
        .collect();
    for block in blocks {
        let group = &mut groups[block.group_id as usize];
        group.kb_base = block.kb_base;
        group.sig_figs = block.sig_figs;
        group.rate_unit = block.rate_unit;
        group.unified |= block.unified as u8;
        for (d, dir) in block.dirs.iter().enumerate() {
            if dir.runtime_ms == 0 {
                continue;
            }
            group.min_run[d] = group.min_run[d].min(dir.runtime_ms);
            group.max_run[d] = group.max_run[d].max(dir.runtime_ms);
            let bw = dir.io_bytes * 1000 / dir.runtime_ms;
            group.min_bw[d] = group.min_bw[d].min(bw);
            group.max_bw[d] = group.max_bw[d].max(bw);
            group.io_bytes[d] += dir.io_bytes;
        }
    }
    for group in &mut groups {
        for d in 0..3 {
            group.agg[d] = (group.io_bytes[d] * 1000).checked_div(group.max_run[d]).unwrap_or(0);
        }
    }
    groups
}

/// fio's `convert_agg_kbytes_percent`: a block's mean bandwidth (KiB/s, truncated
/// to an int as fio passes it) as a share of its group's aggregate, at most 100.
pub fn percent_of_agg(group: &GroupStats, dir: usize, mean_kib: f64) -> f64 {
    let agg = group.agg[dir];
    if agg <= 1024 {
        return 100.0;
    }
    let mean = mean_kib as i32;
    (f64::from(mean) * 100.0 / (agg as f64 / 1024.0)).min(100.0)
}
