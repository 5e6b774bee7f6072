//! fio's normal (human) output: job header lines, then per block
//! `show_thread_status_normal`/`show_ddir_status`, `show_group_stats` and
//! `print_disk_util`, with fio's format strings.

use std::fmt::Write;

use blksim::stats::{LatencyStat, RunReport};
use blksim::workload::{JobConfig, UnifiedRw};

use super::fmt::{ctime, num2str, percentile_precision, scale_down_ns, scale_lat, N2sUnit};
use super::group::{self, Block, DirBlock, GroupStats};
use super::stats::{calc_lat, depth_percentages, lat_percentages};
use super::{report_time_secs, VERSION_LINE};
use crate::job::JobFile;

pub fn write(report: &RunReport, jobs: &JobFile) -> String {
    write_head(report, jobs) + &write_body(report, jobs)
}

/// The normal output's first part, before the JSON with `--output-format=normal,json`: the job
/// headers and `Starting N processes` (the rest, from the blank line after them: `write_body`).
pub fn write_head(report: &RunReport, jobs: &JobFile) -> String {
    let mut head = String::new();
    write_job_headers(&mut head, report, jobs);
    head.push_str(VERSION_LINE);
    head.push('\n');
    write_starting(&mut head, report);
    head
}

/// The report after the header (fio's `__show_run_stats`): each job's block, the groups, the disks.
pub fn write_body(report: &RunReport, jobs: &JobFile) -> String {
    let mut out = String::from("\n");

    let blocks = group::blocks(report, jobs);
    let groups = group::group_stats(&blocks);
    let time = ctime(report_time_secs(report));
    for block in &blocks {
        write_block(&mut out, block, &groups[block.group_id as usize], &time);
    }
    for group in &groups {
        write_group(&mut out, group);
    }
    write_disk_stats(&mut out, report);
    out
}

/// One line per job as fio's `add_job` prints it; clones of a `numjobs` job
/// print `...` once instead.
fn write_job_headers(out: &mut String, report: &RunReport, jobs: &JobFile) {
    let mut clone_index = 0;
    for (i, job) in report.jobs.iter().enumerate() {
        let is_clone = i > 0 && is_clone_of_previous(report, jobs, i);
        clone_index = if is_clone { clone_index + 1 } else { 0 };
        match clone_index {
            0 => write_job_header(out, &job.config),
            1 => out.push_str("...\n"),
            _ => {}
        }
    }
}

/// Clones share their section (file and line) in the job file; without one, their name.
fn is_clone_of_previous(report: &RunReport, jobs: &JobFile, i: usize) -> bool {
    match (jobs.jobs.get(i - 1), jobs.jobs.get(i)) {
        (Some(prev), Some(this)) => prev.file == this.file && prev.line == this.line,
        _ => report.jobs[i - 1].config.name == report.jobs[i].config.name,
    }
}

fn write_job_header(out: &mut String, config: &JobConfig) {
    // fio prints each direction's min_bs-max_bs (a bssplit's smallest and largest), in
    // binary units unless kb_base=1000.
    let i2p = config.kb_base.is_power_of_two();
    let bs = [0, 1, 2].map(|d| {
        let (min, max) = config.bs_range(d);
        let figs = config.sig_figs as usize;
        (num2str(min, figs, 1, i2p, N2sUnit::Byte), num2str(max, figs, 1, i2p, N2sUnit::Byte))
    });
    // With bs_is_seq_rand fio names the rule in place of the trims' sizes.
    let trims = match config.bs_is_seq_rand {
        true => "bs_is_seq_rand".to_string(),
        false => format!("(T) {}-{}", bs[2].0, bs[2].1),
    };
    let _ = writeln!(
        out,
        "{}: (g={}): rw={}, bs=(R) {}-{}, (W) {}-{}, {}, ioengine={}, iodepth={}",
        config.name,
        config.group_id,
        config.rw.fio_name(),
        bs[0].0,
        bs[0].1,
        bs[1].0,
        bs[1].1,
        trims,
        config.ioengine.fio_name(),
        config.iodepth
    );
}

fn write_starting(out: &mut String, report: &RunReport) {
    let threads = report.jobs.iter().filter(|j| j.config.thread).count();
    let processes = report.jobs.len() - threads;
    out.push_str("Starting ");
    if threads > 0 {
        let _ = write!(out, "{} thread{}", threads, if threads > 1 { "s" } else { "" });
    }
    if processes > 0 {
        if threads > 0 {
            out.push_str(" and ");
        }
        let _ = write!(out, "{} process{}", processes, if processes > 1 { "es" } else { "" });
    }
    out.push('\n');
}

/// fio's `show_thread_status_normal`.
fn write_block(out: &mut String, block: &Block, group: &GroupStats, time: &str) {
    if block.io_bytes() == 0 && block.total_ios() == 0 {
        return;
    }
    match block.verror() {
        None => {
            let _ = write!(
                out,
                "{}: (groupid={}, jobs={}): err= 0: pid={}: {}",
                block.name, block.group_id, block.members, block.pid, time
            );
        }
        Some(verror) => {
            let _ = write!(
                out,
                "{}: (groupid={}, jobs={}): err={:2} ({verror}): pid={}: {}",
                block.name,
                block.group_id,
                block.members,
                block.errno(),
                block.pid,
                time
            );
        }
    }
    if let Some(description) = block.description {
        let _ = writeln!(out, "  Description  : [{description}]");
    }
    for d in 0..3 {
        if block.dirs[d].io_bytes > 0 {
            write_dir(out, block, &block.dirs[d], block.dir_name(d), group, d, block.rate_unit);
        }
    }
    if block.unified == UnifiedRw::Both {
        // show_mixed_ddir_status: the sum, as fio's ddir 0, in a thread_stat of its own whose
        // unit_base gen_mixed_ddir_stats_from_ts leaves 0 (N2S_NONE): its bandwidth has no unit.
        write_dir(out, block, &block.mixed(), "mixed", group, 0, N2sUnit::None);
    }
    write_lat_buckets(out, block);
    // show_ddir_status(DDIR_SYNC), when there were any.
    if let Some((min, max, mean, dev)) = calc_lat(&block.sync_lat) {
        out.push_str("  fsync/fdatasync/sync_file_range/syncfs:\n");
        write_lat_line(out, "sync", min, max, mean, dev);
        write_percentiles(out, "sync", &block.sync_lat, &block.config.percentile_list);
    }

    let (usr, sys) = block.cpu_percent();
    let _ = writeln!(out, "  cpu          : usr={usr:3.2}%, sys={sys:3.2}%, ctx={}, majf=0, minf=0", block.ctx);
    let d = depth_percentages(&block.iodepth_level, block.queued_ios());
    let _ = writeln!(
        out,
        "  IO depths    : 1={:3.1}%, 2={:3.1}%, 4={:3.1}%, 8={:3.1}%, 16={:3.1}%, 32={:3.1}%, >=64={:3.1}%",
        d[0], d[1], d[2], d[3], d[4], d[5], d[6]
    );
    for (label, counts) in [("submit  ", &block.iodepth_submit), ("complete", &block.iodepth_complete)] {
        let d = depth_percentages(counts, counts.iter().sum());
        let _ = writeln!(
            out,
            "     {label}  : 0={:3.1}%, 4={:3.1}%, 8={:3.1}%, 16={:3.1}%, 32={:3.1}%, 64={:3.1}%, >=64={:3.1}%",
            d[0], d[1], d[2], d[3], d[4], d[5], d[6]
        );
    }
    let ios = block.dirs.each_ref().map(|d| d.total_ios);
    let _ = writeln!(
        out,
        "     issued rwts: total={},{},{},{} short=0,0,0,0 dropped=0,0,0,0",
        ios[0], ios[1], ios[2], block.sync_ios
    );
    if let Some((total, first)) = block.error_counts() {
        // (first_error is 0 in every report blksim writes: strerror(0) is "Success".)
        debug_assert_eq!(first, 0);
        let _ = writeln!(out, "     errors    : total={total}, first_error={first}/<Success>");
    }
    // latency_target (the last member's): without one target and window are 0, the percentile 100.
    let (target_ns, window_us, percentile) =
        block.config.latency_target.map_or((0, 0, 100.0), |t| (t.target_ns, t.window_us, t.percentile));
    let (target, target_unit) = scale_down_ns(target_ns);
    let (window, window_unit) = scale_down_ns(window_us.saturating_mul(1000));
    let _ = writeln!(
        out,
        "     latency   : target={target:.2}{target_unit}, window={window:.2}{window_unit}, percentile={percentile:.2}%, depth={}",
        block.latency_depth
    );
}

/// fio's `show_ddir_status` for `dir`, named `name`, direction `d` (read, write, trim; 0 for
/// mixed), its bandwidth in `rate_unit` (`ts->unit_base`).
fn write_dir(
    out: &mut String,
    block: &Block,
    dir: &DirBlock,
    name: &str,
    group: &GroupStats,
    d: usize,
    rate_unit: N2sUnit,
) {
    let runtime = dir.runtime_ms;
    if runtime == 0 {
        return;
    }
    let bw = 1000 * dir.io_bytes / runtime;
    let iops = 1000 * dir.total_ios / runtime;
    // kb_base=1000: decimal units first (fio's i2p, from the group's kb_base).
    let i2p = group.kb_base.is_power_of_two();
    let _ = writeln!(
        out,
        "  {}: IOPS={}, BW={} ({})({}/{}msec)",
        name,
        num2str(iops, block.sig_figs, 1, false, N2sUnit::None),
        num2str(bw, block.sig_figs, 1, i2p, rate_unit),
        num2str(bw, block.sig_figs, 1, !i2p, rate_unit),
        num2str(dir.io_bytes, block.sig_figs, 1, i2p, N2sUnit::Byte),
        runtime
    );
    for (name, stat) in [("slat", &dir.slat), ("clat", &dir.clat), (" lat", &dir.lat)] {
        if let Some((min, max, mean, dev)) = calc_lat(stat) {
            write_lat_line(out, name, min, max, mean, dev);
        }
    }
    let config = block.config;
    let clat_type = if config.lat_percentiles { "lat" } else { "clat" };
    let prio_name = |p: &blksim::stats::report::PrioStat| {
        let [class, level, hint] = blksim::workload::ioprio_parts(p.ioprio);
        format!("{clat_type} prio {class}/{level}/{hint}")
    };
    for p in dir.prios_shown().into_iter().flatten() {
        if let Some((min, max, mean, dev)) = calc_lat(&p.lat) {
            write_lat_line(out, &prio_name(p), min, max, mean, dev);
        }
    }
    for (on, name, stat) in [
        (config.slat_percentiles, "slat", &dir.slat),
        (config.clat_percentiles, "clat", &dir.clat),
        (config.lat_percentiles, "lat", &dir.lat),
    ] {
        if on && stat.n > 0 {
            write_percentiles(out, name, stat, &config.percentile_list);
        }
    }
    if config.clat_percentiles || config.lat_percentiles {
        let samples = if config.lat_percentiles { dir.lat.n } else { dir.clat.n };
        for p in dir.prios_shown().into_iter().flatten() {
            let share = 100.0 * p.lat.n as f64 / samples as f64;
            let name = format!("{} ({share:.2}% of IOs)", prio_name(p));
            write_percentiles(out, &name, &p.lat, &config.percentile_list);
        }
    }
    if let Some((min, max, mean, dev)) = dir.bw.calc() {
        let per = group::percent_of_agg(group, d, mean);
        // The samples are KiB/s whatever kb_base; fio divides them by kb_base
        // past kb_base^2 and calls the result MiB either way.
        let kb = group.kb_base as f64;
        let (mut min, mut max, mut mean, mut dev) = (min, max, mean, dev);
        let mut unit = if i2p { "KiB" } else { "kB" };
        if mean > kb * kb {
            min = (min as f64 / kb) as u64;
            max = (max as f64 / kb) as u64;
            mean /= kb;
            dev /= kb;
            unit = "MiB";
        }
        let _ = writeln!(
            out,
            "   bw ({unit:>5}/s): min={min:5}, max={max:5}, per={per:3.2}%, avg={mean:5.2}, stdev={dev:5.2}, samples={}",
            dir.bw.samples
        );
    }
    if let Some((min, max, mean, dev)) = dir.iops.calc() {
        let _ = writeln!(
            out,
            "   iops        : min={min:5}, max={max:5}, avg={mean:5.2}, stdev={dev:5.2}, samples={}",
            dir.iops.samples
        );
    }
}

/// fio's `display_lat`.
fn write_lat_line(out: &mut String, name: &str, min: u64, max: u64, mean: f64, dev: f64) {
    let (unit, min, max, mean, dev) = scale_lat(min, max, mean, dev);
    let _ = writeln!(
        out,
        "    {name} ({unit}): min={}, max={}, avg={mean:5.2}, stdev={dev:5.2}",
        num2str(min, 6, 1, false, N2sUnit::None),
        num2str(max, 6, 1, false, N2sUnit::None)
    );
}

/// fio's `show_clat_percentiles`: a unit for the whole block, values rounded up
/// to it, as many per line as fit in 80 columns.
fn write_percentiles(out: &mut String, name: &str, stat: &LatencyStat, list: &[f64]) {
    let values = stat.percentiles(list);
    if values.is_empty() {
        return;
    }
    let minv = values.iter().map(|v| v.1).min().unwrap_or(0);
    let maxv = values.iter().map(|v| v.1).max().unwrap_or(0);
    let (scale_down, divisor, unit) = if minv > 2_000_000 && maxv > 99_999_999 {
        (2, 1_000_000, "msec")
    } else if minv > 2000 && maxv > 99_999 {
        (1, 1000, "usec")
    } else {
        (0, 1, "nsec")
    };
    let _ = write!(out, "    {name} percentiles ({unit}):\n     |");

    let precision = percentile_precision(list);
    // (int)(log10(0) + 1) is INT_MIN in C, so an all-zero block keeps width 5.
    let time_width = ((((maxv / divisor) as f64).log10() + 1.0) as i32).max(5) as usize;
    let per_line = 73 / (precision + 10 + time_width);
    let last = values.len() - 1;
    for (j, &(pct, value)) in values.iter().enumerate() {
        if j != 0 && j % per_line == 0 {
            out.push_str("     |");
        }
        let mut value = value;
        for _ in 0..scale_down {
            value = value.div_ceil(1000);
        }
        let sep = if j == last { '\n' } else { ',' };
        let _ = write!(out, " {pct:>w$.p$}th=[{value:>time_width$}]{sep}", w = precision + 3, p = precision);
        if j == last {
            break;
        }
        if j % per_line == per_line - 1 {
            out.push('\n');
        }
    }
}

/// fio's `show_latencies`: the coarse completion-latency buckets, 0% left out, 5 per line.
fn write_lat_buckets(out: &mut String, block: &Block) {
    const RANGES: [&str; 12] =
        ["2=", "4=", "10=", "20=", "50=", "100=", "250=", "500=", "750=", "1000=", "2000=", ">=2000="];
    let total = block.total_ios();
    let buckets = &block.lat_buckets;
    for (unit, counts) in [("nsec", &buckets.nsec[..]), ("usec", &buckets.usec[..]), ("msec", &buckets.msec[..])] {
        let shown: Vec<(&str, f64)> = lat_percentages(counts, total)
            .into_iter()
            .enumerate()
            .filter(|(_, pct)| *pct > 0.0)
            .map(|(i, pct)| (RANGES[i], pct))
            .collect();
        for line in shown.chunks(5) {
            let items: Vec<String> = line.iter().map(|(range, pct)| format!("{range}{pct:3.2}%")).collect();
            let _ = writeln!(out, "  lat ({unit})   : {}", items.join(", "));
        }
    }
}

/// fio's `show_group_stats`.
fn write_group(out: &mut String, group: &GroupStats) {
    const NAMES: [&str; 3] = ["   READ", "  WRITE", "   TRIM"];
    let _ = writeln!(out, "\nRun status group {} (all jobs):", group.group_id);
    let figs = group.sig_figs;
    let rate = |v: u64, pow2: bool| num2str(v, figs, 1, pow2, group.rate_unit);
    let i2p = group.kb_base.is_power_of_two();
    let line = |out: &mut String, name: &str, [agg, min_bw, max_bw, io, min_run, max_run]: [u64; 6]| {
        let _ = writeln!(
            out,
            "{name}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={}-{}msec",
            rate(agg, i2p),
            rate(agg, !i2p),
            rate(min_bw, i2p),
            rate(max_bw, i2p),
            rate(min_bw, !i2p),
            rate(max_bw, !i2p),
            num2str(io, figs, 1, i2p, N2sUnit::Byte),
            num2str(io, figs, 1, !i2p, N2sUnit::Byte),
            min_run,
            max_run
        );
    };
    for (d, name) in NAMES.iter().enumerate() {
        if group.max_run[d] == 0 {
            continue;
        }
        let name = if group.mixed() { "  MIXED" } else { name };
        let g = group;
        line(out, name, [g.agg[d], g.min_bw[d], g.max_bw[d], g.io_bytes[d], g.min_run[d], g.max_run[d]]);
    }
    if group.both() {
        // show_mixed_group_stats: sums of the directions that ran, and the extremes of their ranges.
        let ran: Vec<usize> = (0..3).filter(|&d| group.max_run[d] > 0).collect();
        let sum = |v: &[u64; 3]| ran.iter().map(|&d| v[d]).sum::<u64>();
        let min = |v: &[u64; 3]| ran.iter().map(|&d| v[d]).min().unwrap_or(u64::MAX);
        let max = |v: &[u64; 3]| ran.iter().map(|&d| v[d]).max().unwrap_or(0);
        let g = group;
        line(
            out,
            "  MIXED",
            [sum(&g.agg), min(&g.min_bw), max(&g.max_bw), sum(&g.io_bytes), min(&g.min_run), max(&g.max_run)],
        );
    }
}

/// fio's `show_disk_util` and `print_disk_util` (no slave aggregation).
fn write_disk_stats(out: &mut String, report: &RunReport) {
    if !report.disks.iter().any(|d| d.fio_shows) {
        return;
    }
    out.push_str("\nDisk stats (read/write):\n");
    for disk in report.disks.iter().filter(|d| d.fio_shows) {
        let _ = writeln!(
            out,
            "  {}: ios={}/{}, sectors={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:3.2}%",
            disk.name,
            disk.ios[0],
            disk.ios[1],
            disk.sectors[0],
            disk.sectors[1],
            disk.merges[0],
            disk.merges[1],
            disk.ticks_ms[0],
            disk.ticks_ms[1],
            disk.in_queue_ms,
            disk.util_pct.min(100.0)
        );
    }
}
