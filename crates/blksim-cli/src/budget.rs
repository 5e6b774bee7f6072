//! The wall-time budget: before simulating, estimate how long the run will
//! take (simulated I/Os at the release build's rate) and refuse a run over
//! `--wall-budget` unless `--yes` says to go on, naming the estimate.

use blksim::machine::Machine;
use blksim::Workload;
use blksim_lab::estimate::estimated_ios;

use crate::args::BudgetArgs;
use crate::failure::Failure;

/// Simulated I/Os per wall second of the release build on one core (the
/// 8-drive libaio job does 1.0-1.1 M since the CPU time by stage is billed,
/// a single-drive job more): the planning rate.
const IOS_PER_WALL_SEC: f64 = 1.1e6;

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

#[cfg(test)]
mod tests {
    use super::*;
    use blksim::settings::parse_time_ns;
    use blksim::workload::{IoEngine, JobConfig};

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
