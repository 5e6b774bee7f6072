//! fio's log files (`write_lat_log`, `write_bw_log`, `write_iops_log`,
//! `write_hist_log`) from a simulated run, in fio's format (`iolog.c`
//! `flush_samples`, `flush_hist_samples`) and file names (`init.c`
//! `gen_log_name`), with fio's sampling (`stat.c` `add_log_sample`,
//! `__add_samples`, `add_clat_sample`):
//!
//! - a line is `time, value, [value1,] ddir, bs, [offset,] prio[, issue_time]`: time in ms since the
//!   job's start (after `ramp_time`), latencies in ns, bandwidth in KiB/s, ddir 0 read, 1 write, 2 trim;
//! - with `log_avg_msec=0` every I/O has a line (lat, clat and iops at its completion, slat at its
//!   issue; bw is its bytes over its clat); with a window the latency logs have one line per direction
//!   when an I/O completes a window (and at the end), the mean (`log_window_value=avg`), the maximum
//!   (`max`) or both, and bw and iops one line per direction and window with I/O in it;
//! - `clat_hist` lines are `time, ddir, bs, count...`: fio's 1856 clat bins (2^`log_hist_coarseness`
//!   summed per column) counted since the previous line, one line when an I/O completes
//!   `log_hist_msec` after the previous one.
//!
//! Times are virtual: the same run gives the same bytes.

use std::fmt::Write as _;
use std::path::PathBuf;

use blksim::stats::histogram::{plat_val_to_idx, PLAT_NR};
use blksim::stats::{IoRecord, JobStats, RunReport};

use crate::job::{JobFile, LogOptions, LogWindowValue, ParsedJob};

/// One log file: where fio would write it, its text, and whether fio appends to it
/// (`per_job_logs=0`: jobs of one name share the file, opened for appending).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogFile {
    pub path: PathBuf,
    pub text: String,
    pub append: bool,
}

/// Every log file the jobs ask for, in fio's order per job (lat, slat, clat, clat_hist, bw, iops).
/// `report.jobs` and `jobs.jobs` are in the same order.
pub fn write_logs(report: &RunReport, jobs: &JobFile) -> Vec<LogFile> {
    let mut files = Vec::new();
    for (number, (stats, job)) in report.jobs.iter().zip(&jobs.jobs).enumerate() {
        if job.logs.any() {
            files.extend(job_logs(stats, job, number + 1));
        }
    }
    files
}

/// fio's `gen_log_name`: `PREFIX_TYPE.N.log`, or `PREFIX_TYPE.log` without `per_job_logs`; the prefix
/// is the option's value, or the job's name when none is given.
pub fn log_file_name(prefix: &str, job_name: &str, kind: &str, number: usize, per_job: bool) -> String {
    let prefix = if prefix.is_empty() { job_name } else { prefix };
    if per_job {
        format!("{prefix}_{kind}.{number}.log")
    } else {
        format!("{prefix}_{kind}.log")
    }
}

/// The measured I/Os of one job, each with its direction, in the order fio accounted them.
struct JobIos<'a> {
    /// (direction, record), by completion.
    by_done: Vec<(usize, &'a IoRecord)>,
    /// ns of the job's log epoch (its start after ramp_time).
    epoch_ns: u64,
    /// ms from the epoch to the job's end.
    end_ms: u64,
}

impl<'a> JobIos<'a> {
    fn new(stats: &'a JobStats) -> JobIos<'a> {
        let mut by_done: Vec<(usize, &IoRecord)> =
            stats.dirs.iter().enumerate().flat_map(|(d, s)| s.ios.iter().map(move |r| (d, r))).collect();
        // Stable: within a direction the accounting order is kept.
        by_done.sort_by_key(|(_, r)| r.done_ns);
        let epoch_ns = stats.end_ns.saturating_sub(stats.runtime_ns);
        JobIos { by_done, epoch_ns, end_ms: stats.runtime_ns / 1_000_000 }
    }

    /// ms since the epoch (fio's mtime_since: truncated).
    fn ms(&self, ns: u64) -> u64 {
        ns.saturating_sub(self.epoch_ns) / 1_000_000
    }
}

/// One log sample as fio stores it (`struct io_sample`).
#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    time_ms: u64,
    value: u64,
    value1: u64,
    ddir: usize,
    bs: u64,
    offset: u64,
    issue_ns: u64,
}

/// The columns a log's lines have (`log_ddir_mask`).
#[derive(Clone, Copy, Debug)]
struct Columns {
    both: bool,
    offset: bool,
    prio: bool,
    issue_time: bool,
}

impl Columns {
    fn of(o: &LogOptions) -> Columns {
        Columns { both: o.window == LogWindowValue::Both, offset: o.offset, prio: o.prio, issue_time: o.issue_time }
    }
}

/// fio's `flush_samples`.
fn format_samples(samples: &[Sample], c: Columns) -> String {
    let mut out = String::with_capacity(samples.len() * 32);
    for s in samples {
        let _ = write!(out, "{}, {}", s.time_ms, s.value);
        if c.both {
            let _ = write!(out, ", {}", s.value1);
        }
        let _ = write!(out, ", {}, {}", s.ddir, s.bs);
        if c.offset {
            let _ = write!(out, ", {}", s.offset);
        }
        // No I/O priorities are modelled: class 0, level 0 (not RT).
        out.push_str(if c.prio { ", 0x0000" } else { ", 0" });
        if c.issue_time {
            let _ = write!(out, ", {}", s.issue_ns);
        }
        out.push('\n');
    }
    out
}

/// A window's running statistics (fio's `avg_window`, an `io_stat`).
#[derive(Clone, Copy, Debug, Default)]
struct Window {
    n: u64,
    sum: u128,
    max: u64,
}

impl Window {
    fn add(&mut self, v: u64) {
        self.n += 1;
        self.sum += v as u128;
        self.max = self.max.max(v);
    }

    /// fio's `__add_stat_to_log`: the entry for the window, if it had samples; then empty.
    fn take(&mut self, time_ms: u64, ddir: usize, mode: LogWindowValue) -> Option<Sample> {
        if self.n == 0 {
            return None;
        }
        let mean = (self.sum as f64 / self.n as f64 + 0.5) as u64;
        let (value, value1) = match mode {
            LogWindowValue::Avg => (mean, 0),
            LogWindowValue::Max => (self.max, 0),
            LogWindowValue::Both => (mean, self.max),
        };
        *self = Window::default();
        Some(Sample { time_ms, value, value1, ddir, ..Sample::default() })
    }
}

/// fio's `add_log_sample` over samples in the order fio adds them, then `finalize_logs`' flush at
/// the job's end: every sample with no window, else window entries. `inline` (the latency logs)
/// closes a window exactly at its length; bw and iops logs (sampled by fio's helper thread at the
/// window's boundaries) are given one sample per window and close it at once.
fn windowed(samples: Vec<Sample>, avg_msec: u64, mode: LogWindowValue, end_ms: u64) -> Vec<Sample> {
    if avg_msec == 0 {
        return samples;
    }
    let mut out = Vec::new();
    let mut windows = [Window::default(); 3];
    let mut last = [0u64; 3];
    for s in samples {
        let d = s.ddir;
        windows[d].add(s.value);
        if s.time_ms < last[d] || s.time_ms - last[d] < avg_msec {
            continue;
        }
        out.extend(windows[d].take(s.time_ms, d, mode));
        last[d] = s.time_ms - s.time_ms % avg_msec;
    }
    for (d, w) in windows.iter_mut().enumerate() {
        out.extend(w.take(end_ms, d, mode));
    }
    out
}

/// The log files of one job (`number`: fio's 1-based thread number).
fn job_logs(stats: &JobStats, job: &ParsedJob, number: usize) -> Vec<LogFile> {
    let o = &job.logs;
    let ios = JobIos::new(stats);
    let cfg = &stats.config;
    let name = |prefix: &str, kind: &str| PathBuf::from(log_file_name(prefix, &cfg.name, kind, number, o.per_job));
    let file = |path: PathBuf, text: String| LogFile { path, text, append: !o.per_job };
    let cols = Columns::of(o);
    let mut files = Vec::new();
    let at_done = |d: usize, r: &IoRecord, value: u64, issue_ns: u64| Sample {
        time_ms: ios.ms(r.done_ns),
        value,
        value1: 0,
        ddir: d,
        bs: r.bytes as u64,
        offset: r.offset,
        issue_ns,
    };
    if let Some(prefix) = &o.lat {
        if !o.disable_lat {
            let s = ios.by_done.iter().map(|&(d, r)| at_done(d, r, r.done_ns - r.start_ns, 0)).collect();
            let s = windowed(s, o.avg_msec, o.window, ios.end_ms);
            files.push(file(name(prefix, "lat"), format_samples(&s, cols)));
        }
        if !o.disable_slat {
            // fio logs slat when an async engine's io_u is queued (after ramp_time), at that time.
            let mut s: Vec<Sample> = Vec::new();
            if !cfg.ioengine.is_sync() {
                let mut issued: Vec<(usize, &IoRecord)> =
                    ios.by_done.iter().copied().filter(|(_, r)| r.issue_ns >= ios.epoch_ns).collect();
                issued.sort_by_key(|(_, r)| r.issue_ns);
                s = issued
                    .into_iter()
                    .map(|(d, r)| Sample {
                        time_ms: ios.ms(r.issue_ns),
                        value: r.issue_ns - r.start_ns,
                        value1: 0,
                        ddir: d,
                        bs: r.bytes as u64,
                        offset: r.offset,
                        issue_ns: r.issue_ns - ios.epoch_ns,
                    })
                    .collect();
            }
            let s = windowed(s, o.avg_msec, o.window, ios.end_ms);
            files.push(file(name(prefix, "slat"), format_samples(&s, cols)));
        }
        if !o.disable_clat {
            let s = ios
                .by_done
                .iter()
                .map(|&(d, r)| at_done(d, r, r.done_ns - r.issue_ns, r.issue_ns.saturating_sub(ios.epoch_ns)))
                .collect();
            let s = windowed(s, o.avg_msec, o.window, ios.end_ms);
            files.push(file(name(prefix, "clat"), format_samples(&s, cols)));
        }
    }
    if let Some(prefix) = &o.hist {
        files.push(file(name(prefix, "clat_hist"), hist_log(&ios, o, cfg.clat_percentiles)));
    }
    if let Some(prefix) = &o.bw {
        let window = o.bw_window_msec();
        let s = if window == 0 {
            // fio's add_bw_sample: the I/O's bytes over its clat (0 with gtod_reduce's clat of 0).
            let clat_known = !cfg.gtod_reduce;
            if o.disable_bw {
                Vec::new()
            } else {
                ios.by_done
                    .iter()
                    .map(|&(d, r)| {
                        let spent = if clat_known { r.done_ns - r.issue_ns } else { 0 };
                        let rate = (r.bytes as u64 * 1_000_000).checked_div(spent).unwrap_or(0);
                        at_done(d, r, rate, 0)
                    })
                    .collect()
            }
        } else {
            per_window(&ios, window, |r| r.bytes as u64, |bytes, ms| bytes * 1000 / ms / 1024)
        };
        let s = windowed(s, window, o.window, ios.end_ms);
        files.push(file(name(prefix, "bw"), format_samples(&s, cols)));
    }
    if let Some(prefix) = &o.iops {
        let window = o.iops_window_msec();
        let s = if window == 0 {
            if cfg.gtod_reduce {
                Vec::new()
            } else {
                ios.by_done.iter().map(|&(d, r)| at_done(d, r, 1, 0)).collect()
            }
        } else {
            per_window(&ios, window, |_| 1, |n, ms| n * 1000 / ms)
        };
        let s = windowed(s, window, o.window, ios.end_ms);
        files.push(file(name(prefix, "iops"), format_samples(&s, cols)));
    }
    files
}

/// fio's `__add_samples` at each window's end (`calc_log_samples` keeps its helper on the window's
/// boundaries): per direction with I/O completed in the window, `rate(amount, window_ms)`. (The window's
/// entry has block size 0, as `__add_stat_to_log` writes it.)
fn per_window(
    ios: &JobIos,
    window_ms: u64,
    amount: impl Fn(&IoRecord) -> u64,
    rate: impl Fn(u64, u64) -> u64,
) -> Vec<Sample> {
    let mut out = Vec::new();
    let mut next = ios.by_done.iter().peekable();
    let mut end = window_ms;
    while end <= ios.end_ms {
        let mut delta = [0u64; 3];
        let limit_ns = ios.epoch_ns + end * 1_000_000;
        while let Some(&&(d, r)) = next.peek() {
            if r.done_ns > limit_ns {
                break;
            }
            delta[d] += amount(r);
            next.next();
        }
        for (d, &v) in delta.iter().enumerate() {
            if v > 0 {
                out.push(Sample { time_ms: end, value: rate(v, window_ms), ddir: d, ..Sample::default() });
            }
        }
        end += window_ms;
    }
    out
}

/// fio's clat_hist log: `add_clat_sample`'s histogram windows, printed by `flush_hist_samples`.
fn hist_log(ios: &JobIos, o: &LogOptions, clat_percentiles: bool) -> String {
    let mut out = String::new();
    if o.hist_msec == 0 || o.disable_clat {
        return out;
    }
    let stride = 1usize << o.hist_coarseness;
    // Cumulative clat bins per direction, and the bins at each direction's previous line.
    let mut bins = vec![vec![0u64; PLAT_NR]; 3];
    let mut before = vec![vec![0u64; PLAT_NR]; 3];
    let mut last = [0u64; 3];
    for &(d, r) in &ios.by_done {
        if clat_percentiles {
            bins[d][plat_val_to_idx(r.done_ns - r.issue_ns)] += 1;
        }
        let elapsed = ios.ms(r.done_ns);
        if last[d] == 0 {
            last[d] = elapsed;
        }
        let this_window = elapsed - last[d];
        if this_window < o.hist_msec {
            continue;
        }
        let _ = write!(out, "{}, {}, {}, ", elapsed, d, r.bytes);
        let sums: Vec<String> = (0..PLAT_NR)
            .step_by(stride)
            .map(|j| (j..j + stride).map(|k| bins[d][k] - before[d][k]).sum::<u64>().to_string())
            .collect();
        out.push_str(&sums.join(", "));
        out.push('\n');
        before[d].clone_from(&bins[d]);
        last[d] = elapsed - (this_window - o.hist_msec);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(time_ms: u64, value: u64, ddir: usize) -> Sample {
        Sample { time_ms, value, ddir, bs: 4096, ..Sample::default() }
    }

    #[test]
    fn names_as_gen_log_name() {
        assert_eq!(log_file_name("", "job1", "lat", 3, true), "job1_lat.3.log");
        assert_eq!(log_file_name("foo", "job1", "bw", 1, true), "foo_bw.1.log");
        assert_eq!(log_file_name("d/foo", "job1", "clat_hist", 2, false), "d/foo_clat_hist.log");
    }

    #[test]
    fn lines_as_flush_samples() {
        let s = [Sample { time_ms: 12, value: 345, value1: 999, ddir: 1, bs: 8192, offset: 4096, issue_ns: 77 }];
        let plain = Columns { both: false, offset: false, prio: false, issue_time: false };
        assert_eq!(format_samples(&s, plain), "12, 345, 1, 8192, 0\n");
        let all = Columns { both: true, offset: true, prio: true, issue_time: true };
        assert_eq!(format_samples(&s, all), "12, 345, 999, 1, 8192, 4096, 0x0000, 77\n");
    }

    #[test]
    fn windows_close_when_an_io_completes_past_them_and_at_the_end() {
        let samples =
            vec![sample(0, 10, 0), sample(400, 20, 0), sample(999, 30, 1), sample(1000, 40, 0), sample(1700, 50, 0)];
        let out = windowed(samples, 1000, LogWindowValue::Both, 1800);
        let got: Vec<(u64, u64, u64, usize, u64)> =
            out.iter().map(|s| (s.time_ms, s.value, s.value1, s.ddir, s.bs)).collect();
        // The I/O at 1000 ms closes read's first window (and is in it); bs is 0 in window entries.
        assert_eq!(got, vec![(1000, 23, 40, 0, 0), (1800, 50, 50, 0, 0), (1800, 30, 30, 1, 0)]);
        let avg = windowed(vec![sample(5, 1, 0), sample(6, 2, 0)], 1000, LogWindowValue::Avg, 10);
        assert_eq!((avg[0].value, avg[0].time_ms), (2, 10), "mean 1.5 rounds up as fio's + 0.50");
        let max = windowed(vec![sample(5, 1, 0), sample(6, 2, 0)], 1000, LogWindowValue::Max, 10);
        assert_eq!(max[0].value, 2);
        assert_eq!(windowed(vec![sample(5, 1, 0)], 0, LogWindowValue::Avg, 10)[0].bs, 4096, "no window: every I/O");
    }
}
