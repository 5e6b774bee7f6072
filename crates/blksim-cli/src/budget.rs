//! The wall-time budget: before simulating, estimate how long the run will
//! take (simulated I/Os at the release build's rate) and refuse a run over
//! `--wall-budget` unless `--yes` says to go on, naming the estimate.

use blksim::machine::Machine;
use blksim::workload::{IoEngine, JobConfig, RwKind};
use blksim::Workload;

use crate::args::BudgetArgs;
use crate::failure::Failure;

/// Simulated I/Os per wall second of the release build on one core (the
/// 8-drive libaio job does 1.0-1.1 M since the CPU time by stage is billed,
/// a single-drive job more): the planning rate.
const IOS_PER_WALL_SEC: f64 = 1.1e6;

/// What a job without a device (the null engine, null_blk) can do per second: fio's own loop.
const NO_DEVICE_IOPS: f64 = 5e6;

/// DSA descriptors per second of one memfill client.
const DSA_IOPS: f64 = 2e6;

/// Refuse `workload` on `machine` when its estimated wall time is over the budget and `--yes` was not given.
pub fn check(machine: &Machine, workload: &Workload, args: &BudgetArgs) -> Result<(), Failure> {
    let budget_s = wall_seconds(&args.wall_budget)?;
    let ios = estimated_ios(machine, workload);
    let wall_s = ios / IOS_PER_WALL_SEC;
    if args.yes || wall_s <= budget_s {
        return Ok(());
    }
    Err(format!(
        "this run would take about {} of wall time (about {:.2e} simulated I/Os at ~{:.1} M per wall second), \
         over the wall budget of {}: shorten the runtime (or size), or run it anyway with --yes \
         (or a larger --wall-budget)",
        human_time(wall_s),
        ios,
        IOS_PER_WALL_SEC / 1e6,
        human_time(budget_s)
    )
    .into())
}

/// A wall time: seconds, or a number with `s`, `m` or `h`.
fn wall_seconds(v: &str) -> Result<f64, String> {
    let split = v.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let scale = match unit {
        "" | "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(format!("--wall-budget '{v}': expected seconds, or a time with s, m or h (10m)")),
    };
    num.parse::<f64>()
        .ok()
        .filter(|n| n.is_finite() && *n >= 0.0)
        .map(|n| n * scale)
        .ok_or_else(|| format!("--wall-budget '{v}': expected seconds, or a time with s, m or h (10m)"))
}

/// `s` seconds as `45 s`, `12 min` or `3.4 h`.
fn human_time(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.1} s")
    } else if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// The simulated I/Os of the workload: each job at the rate its queue depth and its devices allow
/// (a device's rate shared by the jobs on it), for its runtime or its size, whichever ends it first.
pub fn estimated_ios(machine: &Machine, workload: &Workload) -> f64 {
    let jobs = &workload.jobs;
    let sharing = |dev: &str| jobs.iter().filter(|j| j.filenames.iter().any(|f| f == dev)).count().max(1) as f64;
    let job_ios: f64 = jobs.iter().map(|j| job_rate(machine, j, &sharing) * job_seconds(j, machine)).sum();
    let dsa_ios: f64 = workload.dsa.iter().map(|c| DSA_IOPS * c.runtime_ns as f64 / 1e9).sum();
    job_ios + dsa_ios
}

/// I/Os per second of job `j`: its queue depth over the device latency, at most its share of its devices'
/// IOPS, and at most its `rate`/`rate_iops` when every direction it does has one.
fn job_rate(machine: &Machine, j: &JobConfig, sharing: &dyn Fn(&str) -> f64) -> f64 {
    let free = unpaced_rate(machine, j, sharing);
    let dirs: &[usize] = match j.rw {
        RwKind::Read | RwKind::RandRead => &[0],
        RwKind::Write | RwKind::RandWrite => &[1],
        _ => &[0, 1],
    };
    let cap = |d: usize| match (j.rate_iops[d], j.rate[d]) {
        (0, 0) => None,
        (0, bps) => Some(bps as f64 / j.bs[d].max(1) as f64),
        (iops, _) => Some(iops as f64),
    };
    let caps: Option<Vec<f64>> = dirs.iter().map(|&d| cap(d)).collect();
    caps.map_or(free, |c| free.min(c.iter().sum::<f64>().max(1e-3)))
}

fn unpaced_rate(machine: &Machine, j: &JobConfig, sharing: &dyn Fn(&str) -> f64) -> f64 {
    let write = matches!(j.rw, RwKind::Write | RwKind::RandWrite);
    let dir = usize::from(write);
    let mut device_iops = 0.0;
    let mut latency_ns = f64::MAX;
    for f in &j.filenames {
        let name = f.strip_prefix("/dev/").unwrap_or(f);
        let Some(d) = machine.devices.iter().find(|d| d.name == name) else { continue };
        let bs = j.bs.iter().copied().filter(|&b| b > 0).min().unwrap_or(4096);
        match d.service_estimate(dir, bs) {
            Some((iops, latency)) => {
                device_iops += iops / sharing(f);
                latency_ns = latency_ns.min(latency.max(1) as f64);
            }
            None => device_iops += NO_DEVICE_IOPS,
        }
    }
    if matches!(j.ioengine, IoEngine::Null) || device_iops == 0.0 {
        return NO_DEVICE_IOPS;
    }
    let depth_bound = if latency_ns == f64::MAX { f64::MAX } else { j.iodepth as f64 * 1e9 / latency_ns };
    depth_bound.min(device_iops)
}

/// How long job `j` runs, in simulated seconds: its runtime if time-based, else until its size is done
/// (as seconds at one I/O per second per I/O, so the caller's rate turns it into a count), whichever
/// is first.
fn job_seconds(j: &JobConfig, machine: &Machine) -> f64 {
    let runtime_s = j.runtime_ns.map(|r| r as f64 / 1e9);
    if j.time_based {
        return runtime_s.unwrap_or(0.0) + j.ramp_time_ns as f64 / 1e9;
    }
    let bs = j.bs.iter().copied().filter(|&b| b > 0).min().unwrap_or(4096) as f64;
    let capacity: u64 = j
        .filenames
        .iter()
        .filter_map(|f| machine.devices.iter().find(|d| Some(d.name.as_str()) == f.strip_prefix("/dev/")))
        .map(|d| d.capacity_bytes())
        .sum();
    let bytes = j.size.unwrap_or(capacity) as f64 * j.loops.max(1) as f64;
    let size_ios = bytes / bs;
    let ios = if j.number_ios > 0 { size_ios.min(j.number_ios as f64) } else { size_ios };
    // Seconds at the job's rate come out in `estimated_ios`: express the size bound as a time there.
    let size_s = ios / job_rate(machine, j, &|_| 1.0);
    runtime_s.map_or(size_s, |r| r.min(size_s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use blksim::settings::parse_time_ns;

    fn job(runtime: &str, depth: u32) -> JobConfig {
        let mut j = JobConfig::new("a");
        j.filenames = vec!["/dev/nvme0n1".into()];
        j.ioengine = IoEngine::Libaio;
        j.iodepth = depth;
        j.time_based = true;
        j.runtime_ns = Some(parse_time_ns(runtime).unwrap());
        j
    }

    #[test]
    fn the_estimate_grows_with_runtime_and_is_bounded_by_the_devices() {
        let m = blksim::machine::builtin("spr-gen5").unwrap();
        let w = |jobs: Vec<JobConfig>| Workload { jobs, dsa: Vec::new() };
        let short = estimated_ios(&m, &w(vec![job("10ms", 1)]));
        let long = estimated_ios(&m, &w(vec![job("10s", 1)]));
        assert!((long / short - 1000.0).abs() < 1e-6, "{short} {long}");
        // A deep queue is bounded by the drive's IOPS.
        let deep = estimated_ios(&m, &w(vec![job("1s", 100_000)]));
        let (rate, _) = m.devices[0].service_estimate(0, 4096).unwrap();
        assert!((deep - rate).abs() < 1.0, "{deep}");
        // spr-gen5's PM1743: its data sheet's 4 KiB random read rate comes back.
        assert!((1.9e6..2.1e6).contains(&deep), "{deep}");
        // Two jobs on one drive share it.
        assert!((estimated_ios(&m, &w(vec![job("1s", 100_000), job("1s", 100_000)])) - deep).abs() < 1.0);
    }

    #[test]
    fn a_run_over_the_budget_needs_yes() {
        let m = blksim::machine::builtin("spr-gen5").unwrap();
        let w = Workload { jobs: vec![job("3600s", 128)], dsa: Vec::new() };
        let args = |yes| BudgetArgs { yes, wall_budget: "10m".into() };
        assert_eq!(wall_seconds("2h"), Ok(7200.0));
        assert_eq!(wall_seconds("90"), Ok(90.0));
        assert!(wall_seconds("5d").is_err());
        let e = check(&m, &w, &args(false)).unwrap_err();
        assert!(e.message.contains("would take about") && e.message.contains("--yes"), "{}", e.message);
        assert_eq!(e.status(), 2);
        check(&m, &w, &args(true)).unwrap();
        let short = Workload { jobs: vec![job("200ms", 128)], dsa: Vec::new() };
        check(&m, &short, &args(false)).unwrap();
    }
}
