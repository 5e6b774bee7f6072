//! The wall-time budget: before simulating, estimate how long the run will
//! take (simulated I/Os at the release build's rate) and refuse a run over
//! `--wall-budget` unless `--yes` says to go on, naming the estimate; while
//! simulating, stop a run that outlives the budget all the same (the
//! estimate is a first estimate), and say so after the report so far.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use blksim::machine::Machine;
use blksim::Workload;
use blksim_lab::estimate::{estimated_wall_seconds, human_time, IOS_PER_WALL_SEC};

use crate::args::BudgetArgs;
use crate::failure::{Cause, Failure};

/// A simulation's wall-time limit (none with `--yes`).
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// The limit, seconds (`None`: `--yes`, run to the end).
    pub limit_s: Option<f64>,
}

impl Budget {
    /// The budget `args` set.
    pub fn of(args: &BudgetArgs) -> Result<Budget, Failure> {
        let limit_s = wall_seconds(&args.wall_budget)?;
        Ok(Budget { limit_s: (!args.yes).then_some(limit_s) })
    }

    /// Why `workload` on `machine` is over the budget, if it is: its estimated wall time.
    pub fn refusal(&self, machine: &Machine, workload: &Workload) -> Option<String> {
        let limit_s = self.limit_s?;
        let wall_s = estimated_wall_seconds(machine, workload);
        (wall_s > limit_s).then(|| {
            format!(
                "would take about {} of wall time (about {:.2e} simulated I/Os at ~{:.1} M per wall second), \
                 over the wall budget of {}",
                human_time(wall_s),
                wall_s * IOS_PER_WALL_SEC,
                IOS_PER_WALL_SEC / 1e6,
                human_time(limit_s)
            )
        })
    }
}

/// Refuse `workload` on `machine` when its estimated wall time is over the budget and `--yes` was not
/// given; else the budget to watch the run with.
pub fn check(machine: &Machine, workload: &Workload, args: &BudgetArgs) -> Result<Budget, Failure> {
    let budget = Budget::of(args)?;
    match budget.refusal(machine, workload) {
        None => Ok(budget),
        Some(why) => Err(format!(
            "this run {why}: shorten the runtime (or size), or run it anyway with --yes (or a larger --wall-budget)"
        )
        .into()),
    }
}

/// A run's stop flag (`RunOptions::stop`): set when `signals` is (SIGINT,
/// SIGTERM, SIGHUP) or when the run has taken its wall budget.
pub struct Watch {
    /// The flag the run loop looks at.
    pub stop: Arc<AtomicBool>,
    over: Arc<AtomicBool>,
    done: Arc<AtomicBool>,
    limit_s: Option<f64>,
    thread: Option<JoinHandle<()>>,
}

/// How often the watch looks at the signal flag and the clock.
const WATCH_TICK: Duration = Duration::from_millis(20);

/// How long a run stopped at its budget may take to end and write its report
/// (the loop stops within 16,384 events; the largest reports take seconds).
const STUCK_GRACE: Duration = Duration::from_secs(60);

impl Watch {
    /// Start watching a run from now. A run that has not ended a minute after
    /// its budget stopped it is stuck inside one event (the loop looks at the
    /// flag between events): a bug; blksim says so and exits 70 rather than hang.
    pub fn start(signals: &Arc<AtomicBool>, budget: Budget) -> Watch {
        Watch::start_with(signals, budget, STUCK_GRACE, || {
            let _ = writeln!(
                std::io::stderr(),
                "blksim: internal error (a bug; please report it with the job and command): the simulation did not \
                 stop within {} s of its wall budget (stuck inside one event)",
                STUCK_GRACE.as_secs()
            );
            std::process::exit(70)
        })
    }

    /// `start`, with the grace after the budget and what to do when it has passed.
    fn start_with(
        signals: &Arc<AtomicBool>,
        budget: Budget,
        grace: Duration,
        stuck: impl FnOnce() + Send + 'static,
    ) -> Watch {
        let (stop, over, done) =
            (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        let deadline = budget.limit_s.map(|s| Instant::now() + Duration::from_secs_f64(s.min(1e9)));
        let (t_stop, t_over, t_done, t_signals) = (stop.clone(), over.clone(), done.clone(), signals.clone());
        let thread = std::thread::spawn(move || {
            while !t_done.load(Ordering::Relaxed) {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    t_over.store(true, Ordering::Relaxed);
                    t_stop.store(true, Ordering::Relaxed);
                    let asked = Instant::now();
                    while !t_done.load(Ordering::Relaxed) {
                        if asked.elapsed() >= grace {
                            return stuck();
                        }
                        std::thread::park_timeout(WATCH_TICK);
                    }
                    return;
                }
                if t_signals.load(Ordering::Relaxed) {
                    t_stop.store(true, Ordering::Relaxed);
                    return;
                }
                std::thread::park_timeout(WATCH_TICK);
            }
        });
        Watch { stop, over, done, limit_s: budget.limit_s, thread: Some(thread) }
    }

    /// Did the run stop?
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// After the report so far is out: exit 1 if the run outlived its wall budget (at `sim_time_ns`).
    pub fn check(&self, sim_time_ns: u64) -> Result<(), Failure> {
        if !self.over.load(Ordering::Relaxed) {
            return Ok(());
        }
        Err(Failure::new(
            Cause::OverBudget,
            format!(
                "stopped at the wall budget of {} ({:.3} ms of virtual time): the report covers the run so far; \
                 a larger --wall-budget, or --yes, runs it to the end",
                human_time(self.limit_s.unwrap_or_default()),
                sim_time_ns as f64 / 1e6
            ),
        ))
    }

    /// Why the run stopped, for a row of a sweep: its wall budget, or a signal.
    pub fn why_stopped(&self) -> Option<String> {
        if self.over.load(Ordering::Relaxed) {
            return Some(format!("stopped at the wall budget of {}", human_time(self.limit_s.unwrap_or_default())));
        }
        self.stopped().then(|| "interrupted".to_string())
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
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

    /// Wait (at most 10 s) for `w` to stop.
    fn stops(w: &Watch) -> bool {
        let t = Instant::now();
        while !w.stopped() && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(5));
        }
        w.stopped()
    }

    #[test]
    fn a_run_that_outlives_its_budget_is_stopped_and_says_so() {
        let signals = Arc::new(AtomicBool::new(false));
        let w = Watch::start(&signals, Budget { limit_s: Some(0.05) });
        assert!(stops(&w));
        let e = w.check(2_500_000).unwrap_err();
        assert_eq!(e.status(), 1);
        assert!(e.message.contains("wall budget of 0.1 s (2.500 ms of virtual time)"), "{}", e.message);
        assert_eq!(w.why_stopped().as_deref(), Some("stopped at the wall budget of 0.1 s"));
        // A signal stops a run with no budget (--yes), which is then not over it.
        let w = Watch::start(&signals, Budget { limit_s: None });
        assert!(!w.stopped());
        signals.store(true, Ordering::Relaxed);
        assert!(stops(&w));
        w.check(0).unwrap();
        assert_eq!(w.why_stopped().as_deref(), Some("interrupted"));
    }

    /// Wait (at most 10 s) for `flag`.
    fn set_soon(flag: &AtomicBool) -> bool {
        let t = Instant::now();
        while !flag.load(Ordering::Relaxed) && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(5));
        }
        flag.load(Ordering::Relaxed)
    }

    #[test]
    fn a_run_stuck_after_its_budget_is_called_stuck_and_one_that_ends_is_not() {
        let signals = Arc::new(AtomicBool::new(false));
        let budget = Budget { limit_s: Some(0.02) };
        // Never ends (the Watch lives on): the grace passes, the run is stuck.
        let stuck = Arc::new(AtomicBool::new(false));
        let s = stuck.clone();
        let w =
            Watch::start_with(&signals, budget, Duration::from_millis(50), move || s.store(true, Ordering::Relaxed));
        assert!(stops(&w));
        assert!(set_soon(&stuck), "a run that never ended was not called stuck");
        drop(w);
        // Ends (the Watch dropped) within the grace: not stuck.
        let stuck = Arc::new(AtomicBool::new(false));
        let s = stuck.clone();
        let w = Watch::start_with(&signals, budget, Duration::from_secs(5), move || s.store(true, Ordering::Relaxed));
        assert!(stops(&w));
        drop(w);
        std::thread::sleep(Duration::from_millis(50));
        assert!(!stuck.load(Ordering::Relaxed), "a run that ended was called stuck");
    }
}
