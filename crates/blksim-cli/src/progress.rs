//! Progress on stderr while a simulation runs: virtual time done (of the
//! run's total when the jobs have runtimes), wall time and ETA, as an
//! indicatif bar when stderr is a terminal (`--eta auto`, fio's default), as
//! plain lines every `--eta-newline` otherwise with `--eta always`, never with
//! `--eta never`. The model writes its virtual time into a shared counter as
//! it runs (`blksim::RunOptions::progress`); a thread here reads it.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use blksim::workload::JobConfig;
use indicatif::{ProgressBar, ProgressStyle};

use crate::args::{Eta, ProgressArgs};

/// A progress display running beside a simulation.
pub struct Progress {
    /// The model's virtual time, ns.
    pub virtual_ns: Arc<AtomicU64>,
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// The virtual time the jobs will run, ns, when every phase's jobs have a runtime: per stonewall phase,
/// the longest start delay + ramp + runtime.
pub fn total_virtual_ns(jobs: &[JobConfig]) -> Option<u64> {
    let phases = jobs.iter().map(|j| j.phase).max()? + 1;
    (0..phases)
        .map(|p| {
            jobs.iter()
                .filter(|j| j.phase == p)
                .map(|j| j.runtime_ns.map(|r| j.startdelay_ns + j.ramp_time_ns + r))
                .try_fold(0, |longest, j| j.map(|ns| longest.max(ns)))
        })
        .sum()
}

/// `ns` as fio prints times: `850us`, `12.3ms`, `4.50s`.
fn virtual_time(ns: u64) -> String {
    match ns {
        0..=999_999 => format!("{}us", ns / 1000),
        1_000_000..=999_999_999 => format!("{:.1}ms", ns as f64 / 1e6),
        _ => format!("{:.2}s", ns as f64 / 1e9),
    }
}

/// One plain progress line: virtual time done (and of what), wall time, ETA.
fn line(done_ns: u64, total_ns: Option<u64>, wall: Duration) -> String {
    let mut s = format!("blksim: virtual {}", virtual_time(done_ns));
    if let Some(total) = total_ns.filter(|&t| t > 0) {
        let frac = done_ns as f64 / total as f64;
        s += &format!(" of {} ({:.0}%)", virtual_time(total), 100.0 * frac.min(1.0));
        if frac > 0.0 {
            s += &format!(", ETA {:.0}s", wall.as_secs_f64() * (1.0 - frac).max(0.0) / frac);
        }
    }
    s + &format!(", wall {:.1}s", wall.as_secs_f64())
}

impl Progress {
    /// Start showing the progress of a run of `total_ns` virtual ns (if known), as `args` asks.
    pub fn start(args: &ProgressArgs, total_ns: Option<u64>) -> Result<Progress, String> {
        let virtual_ns = Arc::new(AtomicU64::new(0));
        let done = Arc::new(AtomicBool::new(false));
        let terminal = std::io::stderr().is_terminal();
        let period = match &args.eta_newline {
            Some(v) => {
                Duration::from_nanos(blksim::settings::parse_time_ns(v).map_err(|e| format!("--eta-newline: {e}"))?)
            }
            None => Duration::from_secs(1),
        };
        let show = match args.eta {
            Eta::Never => None,
            Eta::Auto if !terminal => None,
            _ if terminal && args.eta_newline.is_none() => Some(None),
            _ => Some(Some(period.max(Duration::from_millis(1)))),
        };
        let thread = show.map(|lines| {
            let (virtual_ns, done) = (virtual_ns.clone(), done.clone());
            std::thread::spawn(move || match lines {
                Some(period) => show_lines(&virtual_ns, &done, total_ns, period),
                None => show_bar(&virtual_ns, &done, total_ns),
            })
        });
        Ok(Progress { virtual_ns, done, thread })
    }

    /// Stop the display (the bar is cleared).
    pub fn finish(mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Lines on stderr every `period` until `done`.
fn show_lines(virtual_ns: &AtomicU64, done: &AtomicBool, total_ns: Option<u64>, period: Duration) {
    let start = Instant::now();
    let mut next = start + period;
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(5).min(period));
        if Instant::now() >= next {
            next += period;
            let _ =
                writeln!(std::io::stderr(), "{}", line(virtual_ns.load(Ordering::Relaxed), total_ns, start.elapsed()));
        }
    }
}

/// An indicatif bar (a spinner when the total is not known) until `done`.
fn show_bar(virtual_ns: &AtomicU64, done: &AtomicBool, total_ns: Option<u64>) {
    let bar = match total_ns {
        Some(total) => ProgressBar::new(total).with_style(
            ProgressStyle::with_template("{spinner} virtual {msg} [{wide_bar}] {percent}% wall {elapsed} ETA {eta}")
                .expect("template"),
        ),
        None => ProgressBar::new_spinner()
            .with_style(ProgressStyle::with_template("{spinner} virtual {msg} wall {elapsed}").expect("template")),
    };
    let of = total_ns.map_or(String::new(), |t| format!(" of {}", virtual_time(t)));
    while !done.load(Ordering::Relaxed) {
        let now = virtual_ns.load(Ordering::Relaxed);
        bar.set_position(now);
        bar.set_message(format!("{}{of}", virtual_time(now)));
        bar.tick();
        std::thread::sleep(Duration::from_millis(100));
    }
    bar.finish_and_clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(phase: u32, runtime_ms: Option<u64>, ramp_ms: u64) -> JobConfig {
        let mut j = JobConfig::new("j");
        j.phase = phase;
        j.runtime_ns = runtime_ms.map(|ms| ms * 1_000_000);
        j.ramp_time_ns = ramp_ms * 1_000_000;
        j
    }

    #[test]
    fn the_total_is_the_longest_job_of_each_phase_added_up_or_unknown() {
        assert_eq!(total_virtual_ns(&[job(0, Some(10), 0), job(0, Some(20), 5), job(1, Some(7), 0)]), Some(32_000_000));
        assert_eq!(total_virtual_ns(&[job(0, Some(10), 0), job(1, None, 0)]), None);
        assert_eq!(total_virtual_ns(&[]), None);
    }

    #[test]
    fn a_line_says_virtual_time_of_the_total_wall_time_and_eta() {
        let l = line(50_000_000, Some(200_000_000), Duration::from_secs(2));
        assert_eq!(l, "blksim: virtual 50.0ms of 200.0ms (25%), ETA 6s, wall 2.0s");
        assert_eq!(line(1_500, None, Duration::from_millis(300)), "blksim: virtual 1us, wall 0.3s");
    }
}
