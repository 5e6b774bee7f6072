//! fio's `--output-format=json` and `json+` (`stat.c` show_thread_status_json,
//! add_ddir_status_json, add_ddir_lat_json, json_array_add_disk_util), keys in
//! fio's order, followed by the `blksim` object.

use blksim::stats::{LatencyStat, RunReport};
use blksim::workload::UnifiedRw;
use serde_json::{json, Map, Value};

use super::fmt::ctime;
use super::group::{self, Block, DirBlock, GroupStats};
use super::json_print::{float, print};
use super::stats::{calc_lat, depth_percentages, lat_percentages};
use super::{blksim_json, report_time_ns, VERSION_LINE};
use crate::job::JobFile;

pub fn write(report: &RunReport, jobs: &JobFile, plus: bool, extra: Value) -> String {
    let time_ns = report_time_ns(report);
    let mut root = Map::new();
    root.insert("fio version".into(), json!(VERSION_LINE));
    root.insert("timestamp".into(), json!(time_ns / 1_000_000_000));
    root.insert("timestamp_ms".into(), json!(time_ns / 1_000_000));
    root.insert("time".into(), json!(ctime(time_ns / 1_000_000_000).trim_end()));
    if let Some(options) = options_object(&jobs.global_options) {
        root.insert("global options".into(), options);
    }

    let blocks = group::blocks(report, jobs);
    let groups = group::group_stats(&blocks);
    let elapsed_s = (report.sim_time_ns / 1_000_000).div_ceil(1000);
    let job_values =
        blocks.iter().map(|b| Value::Object(job_object(b, &groups[b.group_id as usize], elapsed_s, plus))).collect();
    root.insert("jobs".into(), Value::Array(job_values));
    if report.disks.iter().any(|d| d.fio_shows) {
        root.insert("disk_util".into(), disk_util(report));
    }
    let terse = Value::Array(blocks.iter().map(terse_object).collect());
    root.insert("blksim".into(), Value::Object(blksim_json::object(report, terse, extra)));
    print(&root)
}

/// What fio's terse line of `block` prints that fio's JSON does not carry (`output::terse`
/// reads it): `percentile_list`, the percentiles a direction without samples lists (with
/// zeros; the JSON leaves that direction's out), null with clat_percentiles and
/// lat_percentiles off; `lat_under_1us`, the share of I/Os in the nanosecond latency
/// buckets (%), which terse adds to its first microsecond bucket (fio's `stat_calc_lat_nu`,
/// from the counts: the JSON's `latency_ns` are each at least 0.01 when not zero).
fn terse_object(block: &Block) -> Value {
    let c = block.config;
    // fio's calc_clat_percentiles over no samples: the sorted list, each at zero.
    let list = (c.clat_percentiles || c.lat_percentiles).then(|| {
        let empty = LatencyStat::default().percentiles(&c.percentile_list);
        Value::Array(empty.into_iter().map(|(p, _)| float(p)).collect())
    });
    let total = block.total_ios();
    let ns: u64 = block.lat_buckets.nsec.iter().sum();
    let under_1us = if total > 0 { 100.0 * ns as f64 / total as f64 } else { 0.0 };
    json!({"percentile_list": list.unwrap_or(Value::Null), "lat_under_1us": float(under_1us)})
}

/// fio's `json_add_job_opts`: options as written; fio drops empty values (bare
/// flags), and an empty list leaves the key out.
fn options_object(options: &[(String, String)]) -> Option<Value> {
    let map: Map<String, Value> =
        options.iter().filter(|(_, v)| !v.is_empty()).map(|(k, v)| (k.clone(), json!(v))).collect();
    (!map.is_empty()).then_some(Value::Object(map))
}

/// fio's `show_thread_status_json`.
fn job_object(block: &Block, group: &GroupStats, elapsed_s: u64, plus: bool) -> Map<String, Value> {
    let mut job = Map::new();
    job.insert("jobname".into(), json!(block.name));
    job.insert("groupid".into(), json!(block.group_id));
    job.insert("job_start".into(), json!(block.job_start_ms));
    job.insert("error".into(), json!(block.errno()));
    job.insert("eta".into(), json!(0));
    job.insert("elapsed".into(), json!(elapsed_s));
    if let Some(options) = options_object(block.options) {
        job.insert("job options".into(), options);
    }
    if block.unified == UnifiedRw::Mixed {
        // add_ddir_status_json returns at once for every direction but the first (sync too).
        job.insert("mixed".into(), Value::Object(dir_object(block, &block.dirs[0], group, 0, plus)));
    } else {
        for (d, name) in ["read", "write", "trim"].into_iter().enumerate() {
            job.insert(name.into(), Value::Object(dir_object(block, &block.dirs[d], group, d, plus)));
        }
        // add_ddir_status_json(DDIR_SYNC): percentiles with lat_percentiles or clat_percentiles.
        let config = block.config;
        let percentiles = config.lat_percentiles || config.clat_percentiles;
        let sync_lat = lat_object(&block.sync_lat, percentiles, &config.percentile_list, plus);
        job.insert("sync".into(), json!({"total_ios": block.sync_ios, "lat_ns": sync_lat}));
    }
    if block.unified == UnifiedRw::Both {
        // add_mixed_ddir_status_json: the sum, as fio's ddir 0 (its share of the group's read aggregate).
        job.insert("mixed".into(), Value::Object(dir_object(block, &block.mixed(), group, 0, plus)));
    }

    let (usr, sys) = block.cpu_percent();
    job.insert("job_runtime".into(), json!(block.total_run_ns / 1_000_000));
    job.insert("usr_cpu".into(), float(usr));
    job.insert("sys_cpu".into(), float(sys));
    job.insert("ctx".into(), json!(block.ctx));
    job.insert("majf".into(), json!(0));
    job.insert("minf".into(), json!(0));

    let total = block.total_ios();
    let level = depth_percentages(&block.iodepth_level, block.queued_ios());
    job.insert("iodepth_level".into(), percent_map(&["1", "2", "4", "8", "16", "32", ">=64"], &level));
    const BATCH_KEYS: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];
    let submit = depth_percentages(&block.iodepth_submit, block.iodepth_submit.iter().sum());
    job.insert("iodepth_submit".into(), percent_map(&BATCH_KEYS, &submit));
    let complete = depth_percentages(&block.iodepth_complete, block.iodepth_complete.iter().sum());
    job.insert("iodepth_complete".into(), percent_map(&BATCH_KEYS, &complete));

    const LAT_KEYS: [&str; 12] = ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000"];
    let buckets = &block.lat_buckets;
    job.insert("latency_ns".into(), percent_map(&LAT_KEYS[..10], &lat_percentages(&buckets.nsec, total)));
    job.insert("latency_us".into(), percent_map(&LAT_KEYS[..10], &lat_percentages(&buckets.usec, total)));
    job.insert("latency_ms".into(), percent_map(&LAT_KEYS, &lat_percentages(&buckets.msec, total)));
    if let Some((total_err, first_error)) = block.error_counts() {
        job.insert("total_err".into(), json!(total_err));
        job.insert("first_error".into(), json!(first_error));
    }

    // fio's latency_target fields (the last member's): without one, the depth is iodepth.
    let target = block.config.latency_target.unwrap_or(blksim::workload::LatencyTarget {
        target_ns: 0,
        window_us: 0,
        percentile: 100.0,
        run: false,
    });
    job.insert("latency_depth".into(), json!(block.latency_depth));
    job.insert("latency_target".into(), json!(target.target_ns));
    job.insert("latency_target_ns".into(), json!(target.target_ns));
    job.insert("latency_percentile".into(), float(target.percentile));
    job.insert("latency_window".into(), json!(target.window_us));
    job.insert("latency_window_us".into(), json!(target.window_us));
    if let Some(description) = block.description {
        job.insert("desc".into(), json!(description));
    }
    job
}

fn percent_map(keys: &[&str], values: &[f64]) -> Value {
    Value::Object(keys.iter().zip(values).map(|(k, v)| (k.to_string(), float(*v))).collect())
}

/// fio's `add_ddir_status_json` for `dir`, direction `d` (read, write, trim; 0 for mixed).
fn dir_object(block: &Block, dir: &DirBlock, group: &GroupStats, d: usize, plus: bool) -> Map<String, Value> {
    let bw_bytes = (1000 * dir.io_bytes).checked_div(dir.runtime_ms).unwrap_or(0);
    let iops = if dir.runtime_ms > 0 { 1000.0 * dir.total_ios as f64 / dir.runtime_ms as f64 } else { 0.0 };
    let config = block.config;
    let list = &config.percentile_list;
    let mut obj = Map::new();
    obj.insert("io_bytes".into(), json!(dir.io_bytes));
    obj.insert("io_kbytes".into(), json!(dir.io_bytes >> 10));
    obj.insert("bw_bytes".into(), json!(bw_bytes));
    obj.insert("bw".into(), json!(bw_bytes / 1024));
    obj.insert("iops".into(), float(iops));
    obj.insert("runtime".into(), json!(dir.runtime_ms));
    obj.insert("total_ios".into(), json!(dir.total_ios));
    obj.insert("short_ios".into(), json!(0));
    obj.insert("drop_ios".into(), json!(0));
    obj.insert("slat_ns".into(), lat_object(&dir.slat, config.slat_percentiles, list, plus));
    obj.insert("clat_ns".into(), lat_object(&dir.clat, config.clat_percentiles, list, plus));
    obj.insert("lat_ns".into(), lat_object(&dir.lat, config.lat_percentiles, list, plus));
    if let Some(prios) = dir.prios_shown() {
        let key = if config.lat_percentiles { "lat_ns" } else { "clat_ns" };
        let percentiles = config.clat_percentiles || config.lat_percentiles;
        let entries = prios.map(|p| {
            let mut o = Map::new();
            let [class, level, hint] = blksim::workload::ioprio_parts(p.ioprio);
            o.insert("prioclass".into(), json!(class));
            o.insert("prio".into(), json!(level));
            o.insert("priohint".into(), json!(hint));
            o.insert(key.into(), lat_object(&p.lat, percentiles, list, plus));
            Value::Object(o)
        });
        obj.insert("prios".into(), Value::Array(entries.collect()));
    }

    let (min, max, agg, mean, dev) = match dir.bw.calc() {
        Some((min, max, mean, dev)) => (min, max, group::percent_of_agg(group, d, mean), mean, dev),
        None => (0, 0, 0.0, 0.0, 0.0),
    };
    obj.insert("bw_min".into(), json!(min));
    obj.insert("bw_max".into(), json!(max));
    obj.insert("bw_agg".into(), float(agg));
    obj.insert("bw_mean".into(), float(mean));
    obj.insert("bw_dev".into(), float(dev));
    obj.insert("bw_samples".into(), json!(dir.bw.samples));

    let (min, max, mean, dev) = dir.iops.calc().unwrap_or((0, 0, 0.0, 0.0));
    obj.insert("iops_min".into(), json!(min));
    obj.insert("iops_max".into(), json!(max));
    obj.insert("iops_mean".into(), float(mean));
    obj.insert("iops_stddev".into(), float(dev));
    obj.insert("iops_samples".into(), json!(dir.iops.samples));
    obj
}

/// fio's `add_ddir_lat_json`: min/max/mean/stddev/N, then the percentile map
/// (keys `"%f"`, values in ns) when enabled and samples exist, and with json+
/// the non-empty histogram buckets as `bins`.
fn lat_object(stat: &LatencyStat, percentiles: bool, list: &[f64], plus: bool) -> Value {
    let (min, max, mean, dev) = calc_lat(stat).unwrap_or((0, 0, 0.0, 0.0));
    let mut obj = Map::new();
    obj.insert("min".into(), json!(min));
    obj.insert("max".into(), json!(max));
    obj.insert("mean".into(), float(mean));
    obj.insert("stddev".into(), float(dev));
    obj.insert("N".into(), json!(stat.n));
    if percentiles && stat.n > 0 && !list.is_empty() {
        let map = stat.percentiles(list).into_iter().map(|(p, v)| (format!("{p:.6}"), json!(v))).collect();
        obj.insert("percentile".into(), Value::Object(map));
        if plus {
            let bins = stat.bins().map(|(ns, count)| (ns.to_string(), json!(count))).collect();
            obj.insert("bins".into(), Value::Object(bins));
        }
    }
    Value::Object(obj)
}

/// fio's `json_array_add_disk_util` (no slave aggregation).
fn disk_util(report: &RunReport) -> Value {
    let disks = report.disks.iter().filter(|d| d.fio_shows).map(|disk| {
        json!({
            "name": disk.name,
            "read_ios": disk.ios[0],
            "write_ios": disk.ios[1],
            "read_sectors": disk.sectors[0],
            "write_sectors": disk.sectors[1],
            "read_merges": disk.merges[0],
            "write_merges": disk.merges[1],
            "read_ticks": disk.ticks_ms[0],
            "write_ticks": disk.ticks_ms[1],
            "in_queue": disk.in_queue_ms,
            "util": float(disk.util_pct.min(100.0)),
        })
    });
    Value::Array(disks.collect())
}
