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
//! Times are virtual: the same run gives the same bytes. The lines are
//! written as the run makes them ([`LogWriter`] is the run's
//! `blksim::stats::IoLog`): a log holds what its windows hold, not the
//! run's I/Os. Logs shared by jobs of one name (`per_job_logs=0`) are
//! written beside their file and appended to it in job order at the end.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

use blksim::stats::histogram::{plat_val_to_idx, PLAT_NR};
use blksim::stats::{IoLog, IoRecord, RunReport};

use crate::job::{JobFile, LogOptions, LogWindowValue, ParsedJob};

/// One log file: where fio would write it, its text, and whether fio appends to it
/// (`per_job_logs=0`: jobs of one name share the file, opened for appending).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogFile {
    pub path: PathBuf,
    pub text: String,
    pub append: bool,
    /// Its lines' columns, as fio's documentation names them (`time_ms`, `value`, `ddir`, `bs`,
    /// `offset`, `prio`...); a clat_hist log's bins follow its named columns; none for a
    /// `write_iolog` trace (not a table).
    pub columns: Vec<&'static str>,
}

/// Every log file the jobs ask for, in fio's order per job (lat, slat, clat, clat_hist, bw, iops), from
/// a run that kept its jobs' I/Os in the report (no `IoLog`). `report.jobs` and `jobs.jobs` are in the
/// same order.
pub fn write_logs(report: &RunReport, jobs: &JobFile) -> Vec<LogFile> {
    let mut w = LogWriter::in_memory(jobs);
    for (i, stats) in report.jobs.iter().enumerate() {
        let epoch_ns = stats.end_ns.saturating_sub(stats.runtime_ns);
        if !stats.config.ioengine.is_sync() {
            let mut issued: Vec<(usize, &IoRecord)> =
                by_done(stats).into_iter().filter(|(_, r)| r.issue_ns >= epoch_ns).collect();
            issued.sort_by_key(|(_, r)| r.issue_ns);
            for (d, r) in issued {
                w.issued(i, d, epoch_ns, &IoRecord { done_ns: 0, ..*r });
            }
        }
        for (d, r) in by_done(stats) {
            w.completed(i, d, epoch_ns, r);
        }
    }
    w.finish_into(report).expect("memory")
}

/// A job's measured I/Os with their direction, in the order fio accounted them (a reap's events in
/// turn, whatever their direction).
fn by_done(stats: &blksim::stats::JobStats) -> Vec<(usize, &IoRecord)> {
    let mut v: Vec<(usize, &IoRecord)> =
        stats.dirs.iter().enumerate().flat_map(|(d, s)| s.ios.iter().map(move |r| (d, r))).collect();
    v.sort_by_key(|(_, r)| r.seq);
    v
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

/// Where a log's lines go.
pub enum Target {
    /// Kept, for [`write_logs`].
    Memory(Vec<u8>),
    /// A file (buffered).
    File(std::io::BufWriter<std::fs::File>),
}

impl std::io::Write for Target {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Target::Memory(v) => v.write(buf),
            Target::File(f) => f.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Target::Memory(_) => Ok(()),
            Target::File(f) => f.flush(),
        }
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
    /// The I/O's priority (fio's `log_sample.priority`; 0 for a window's entry).
    prio: u16,
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

    /// The names of a line's columns, in `format_sample`'s order (`value_max`: log_window_value=both's max).
    fn names(self) -> Vec<&'static str> {
        let mut v = vec!["time_ms", "value"];
        if self.both {
            v.push("value_max");
        }
        v.extend(["ddir", "bs"]);
        if self.offset {
            v.push("offset");
        }
        v.push("prio");
        if self.issue_time {
            v.push("issue_time_ns");
        }
        v
    }
}

/// A clat_hist log's named columns (its bins follow).
const HIST_COLUMNS: [&str; 3] = ["time_ms", "ddir", "bs"];
/// `--bandwidth-log`'s columns.
const AGGREGATE_BW_COLUMNS: [&str; 5] = ["time_ms", "value", "ddir", "bs", "offset"];

/// fio's `flush_samples` for one sample.
fn format_sample(out: &mut String, s: &Sample, c: Columns) {
    let _ = write!(out, "{}, {}", s.time_ms, s.value);
    if c.both {
        let _ = write!(out, ", {}", s.value1);
    }
    let _ = write!(out, ", {}, {}", s.ddir, s.bs);
    if c.offset {
        let _ = write!(out, ", {}", s.offset);
    }
    // log_prio: the whole ioprio; else whether its class is RT (ioprio_value_is_class_rt).
    if c.prio {
        let _ = write!(out, ", 0x{:04x}", s.prio);
    } else {
        let rt = blksim::workload::ioprio_parts(s.prio)[0] as u32 == blksim::workload::IOPRIO_CLASS_RT;
        out.push_str(if rt { ", 1" } else { ", 0" });
    }
    if c.issue_time {
        let _ = write!(out, ", {}", s.issue_ns);
    }
    out.push('\n');
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

/// fio's `add_log_sample` over samples in the order fio adds them, then `finalize_logs`' flush at the
/// job's end: every sample with no window, else window entries. The latency logs close a window when
/// a sample reaches its length; bw and iops logs (sampled by fio's helper thread at the window's
/// boundaries) are given one sample per window and close it at once.
#[derive(Clone, Debug)]
struct Windowing {
    avg_msec: u64,
    mode: LogWindowValue,
    windows: [Window; 3],
    last: [u64; 3],
}

impl Windowing {
    fn new(avg_msec: u64, mode: LogWindowValue) -> Windowing {
        Windowing { avg_msec, mode, windows: [Window::default(); 3], last: [0; 3] }
    }

    /// A sample in: the line it makes, if any.
    fn push(&mut self, s: Sample) -> Option<Sample> {
        if self.avg_msec == 0 {
            return Some(s);
        }
        let d = s.ddir;
        self.windows[d].add(s.value);
        if s.time_ms < self.last[d] || s.time_ms - self.last[d] < self.avg_msec {
            return None;
        }
        self.last[d] = s.time_ms - s.time_ms % self.avg_msec;
        self.windows[d].take(s.time_ms, d, self.mode)
    }

    /// The job ended at `end_ms`: what its open windows hold.
    fn finish(&mut self, end_ms: u64) -> Vec<Sample> {
        let mode = self.mode;
        self.windows.iter_mut().enumerate().filter_map(|(d, w)| w.take(end_ms, d, mode)).collect()
    }
}

/// A log that could not be written: its file and why.
type LogError = (PathBuf, std::io::Error);

/// One log being written: samples through fio's windows into lines.
struct Stream {
    path: PathBuf,
    out: Target,
    cols: Columns,
    /// Added to each line's time (`log_alternate_epoch`'s epoch, ms; else 0).
    epoch_ms: u64,
    windowing: Windowing,
    line: String,
}

impl Stream {
    fn push(&mut self, s: Sample) -> Result<(), LogError> {
        match self.windowing.push(s) {
            Some(line) => self.write(&line),
            None => Ok(()),
        }
    }

    fn write(&mut self, s: &Sample) -> Result<(), LogError> {
        self.line.clear();
        let s = Sample { time_ms: s.time_ms + self.epoch_ms, ..*s };
        format_sample(&mut self.line, &s, self.cols);
        self.out.write_all(self.line.as_bytes()).map_err(|e| (self.path.clone(), e))
    }

    fn finish(&mut self, end_ms: u64) -> Result<(), LogError> {
        for s in self.windowing.finish(end_ms) {
            self.write(&s)?;
        }
        self.out.flush().map_err(|e| (self.path.clone(), e))
    }
}

/// fio's `__add_samples` at each window's end (`calc_log_samples` keeps its helper on the window's
/// boundaries): per direction with I/O completed in the window, the rate. (The window's entry has block
/// size 0, as `__add_stat_to_log` writes it.)
struct PerWindow {
    window_ms: u64,
    /// The end of the window being counted, ms since the epoch.
    end_ms: u64,
    delta: [u64; 3],
    /// bw (KiB/s of bytes) or iops (I/Os).
    bytes: bool,
}

impl PerWindow {
    /// The windows that ended before `done_ms_exact` (ns since the epoch), into `s`.
    fn close_before(&mut self, since_epoch_ns: u64, s: &mut Stream) -> Result<(), LogError> {
        while since_epoch_ns > self.end_ms * 1_000_000 {
            self.close(s)?;
        }
        Ok(())
    }

    fn close(&mut self, s: &mut Stream) -> Result<(), LogError> {
        let end = self.end_ms;
        for d in 0..3 {
            let v = std::mem::take(&mut self.delta[d]);
            if v > 0 {
                let value = if self.bytes { v * 1000 / self.window_ms / 1024 } else { v * 1000 / self.window_ms };
                s.push(Sample { time_ms: end, value, ddir: d, ..Sample::default() })?;
            }
        }
        self.end_ms += self.window_ms;
        Ok(())
    }
}

/// fio's clat_hist log: `add_clat_sample`'s histogram windows, printed by `flush_hist_samples`.
struct Hist {
    path: PathBuf,
    out: Target,
    stride: usize,
    msec: u64,
    /// Added to each line's time, as a stream's.
    epoch_ms: u64,
    clat_percentiles: bool,
    /// Cumulative clat bins per direction, and the bins at each direction's previous line.
    bins: Vec<Vec<u64>>,
    before: Vec<Vec<u64>>,
    last: [u64; 3],
}

impl Hist {
    fn completed(&mut self, d: usize, elapsed_ms: u64, r: &IoRecord) -> Result<(), LogError> {
        if self.clat_percentiles {
            self.bins[d][plat_val_to_idx(r.done_ns - r.issue_ns)] += 1;
        }
        if self.last[d] == 0 {
            self.last[d] = elapsed_ms;
        }
        let this_window = elapsed_ms - self.last[d];
        if this_window < self.msec {
            return Ok(());
        }
        let mut line = format!("{}, {}, {}, ", elapsed_ms + self.epoch_ms, d, r.bytes);
        let (bins, before) = (&self.bins[d], &self.before[d]);
        let sums: Vec<String> = (0..PLAT_NR)
            .step_by(self.stride)
            .map(|j| (j..j + self.stride).map(|k| bins[k] - before[k]).sum::<u64>().to_string())
            .collect();
        line.push_str(&sums.join(", "));
        line.push('\n');
        self.before[d].clone_from(&self.bins[d]);
        self.last[d] = elapsed_ms - (this_window - self.msec);
        self.out.write_all(line.as_bytes()).map_err(|e| (self.path.clone(), e))
    }
}

/// The logs of one job.
struct JobLogs {
    lat: Option<Stream>,
    slat: Option<Stream>,
    clat: Option<Stream>,
    hist: Option<Hist>,
    /// bw: its stream, and its windows when it has them (else one line per I/O).
    bw: Option<(Stream, Option<PerWindow>)>,
    iops: Option<(Stream, Option<PerWindow>)>,
    /// fio's add_bw_sample takes the clat, 0 under gtod_reduce; no per-I/O iops lines then.
    gtod_reduce: bool,
    disable_bw: bool,
    epoch_ns: u64,
    /// `log_alternate_epoch`: lines stamped with the clock's time (the virtual clock's, whose epoch is the
    /// run's start), not the job's.
    alternate_epoch: bool,
    /// `per_job_logs`: its own files (else shared with the jobs of its name, appended to).
    per_job: bool,
    /// `write_iolog`'s trace.
    iolog: Option<IoTrace>,
}

/// fio's `write_iolog` (iolog.c, version 3): the version line, each file's
/// `add`, then every io_u as fio queues it (`td_io_queue`), each file's
/// `open` as fio's get_next_file opens it and `close` as fio closes it
/// (found done, at a loop's end, at the job's end); times in µs since the
/// job started. One file is opened as the job starts, and reopened at
/// once at each loop. Appended to the file, as fio opens it ("a").
struct IoTrace {
    path: PathBuf,
    out: Target,
    /// The job's files as fio names them.
    files: Vec<String>,
    /// Which of them are open (a job of several files opens each at its first io_u).
    open: Vec<bool>,
    /// Which of them the last io_u queued on them opened (end_fsync's sync of a closed file).
    opened_by_last: Vec<bool>,
    line: String,
}

impl IoTrace {
    fn new(path: PathBuf, mut out: Target, files: Vec<String>) -> Result<IoTrace, LogError> {
        let mut head = String::from("fio version 3 iolog\n");
        let one = files.len() == 1;
        for act in ["add", "open"].into_iter().take(1 + one as usize) {
            for f in &files {
                let _ = writeln!(head, "0 {f} {act}");
            }
        }
        out.write_all(head.as_bytes()).map_err(|e| (path.clone(), e))?;
        let open = vec![one; files.len()];
        let opened_by_last = vec![false; files.len()];
        Ok(IoTrace { path, out, files, open, opened_by_last, line: String::new() })
    }

    fn write_line(&mut self) -> Result<(), LogError> {
        self.out.write_all(self.line.as_bytes()).map_err(|e| (self.path.clone(), e))
    }

    /// `file`'s open or close line, where its state changes, into `line`.
    fn set_open(&mut self, file: usize, us: u64, open: bool) {
        if let Some(o) = self.open.get_mut(file).filter(|o| **o != open) {
            *o = open;
            let _ = writeln!(self.line, "{us} {} {}", self.files[file], if open { "open" } else { "close" });
        }
    }

    fn queued(
        &mut self,
        file: usize,
        dir: usize,
        since_start_ns: u64,
        offset: u64,
        bytes: u64,
    ) -> Result<(), LogError> {
        self.line.clear();
        let us = since_start_ns / 1000;
        if let Some(o) = self.opened_by_last.get_mut(file) {
            *o = !self.open[file];
        }
        self.set_open(file, us, true);
        let name = self.files.get(file).map_or("", String::as_str);
        // fio's io_ddir_name.
        let ddir = ["read", "write", "trim", "sync", "datasync"][dir.min(4)];
        let _ = writeln!(self.line, "{us} {name} {ddir} {offset} {bytes}");
        self.write_line()
    }

    /// The next loop: each file closed, and one file opened again (several open as they are used).
    fn reopened(&mut self, since_start_ns: u64) -> Result<(), LogError> {
        self.line.clear();
        let us = since_start_ns / 1000;
        (0..self.files.len()).for_each(|f| self.set_open(f, us, false));
        if self.files.len() == 1 {
            self.set_open(0, us, true);
        }
        self.write_line()
    }

    /// end_fsync's sync of `file` is done: fio_file_fsync closes the file
    /// when it had to open it for the sync (an open file stays open).
    fn end_fsync_done(&mut self, file: usize, since_start_ns: u64) -> Result<(), LogError> {
        if !self.opened_by_last.get(file).is_some_and(|&o| o) {
            return Ok(());
        }
        self.line.clear();
        self.set_open(file, since_start_ns / 1000, false);
        self.write_line()
    }

    /// `file` found done: closed, opened first if no io_u had (get_next_file opened it).
    fn file_done(&mut self, file: usize, since_start_ns: u64) -> Result<(), LogError> {
        self.line.clear();
        let us = since_start_ns / 1000;
        self.set_open(file, us, true);
        self.set_open(file, us, false);
        self.write_line()
    }

    fn close(&mut self, end_us: u64) -> Result<(), LogError> {
        self.line.clear();
        (0..self.files.len()).for_each(|f| self.set_open(f, end_us, false));
        self.write_line()?;
        self.out.flush().map_err(|e| (self.path.clone(), e))
    }
}

impl JobLogs {
    fn streams(&mut self) -> impl Iterator<Item = &mut Stream> {
        let (a, b, c) = (self.lat.as_mut(), self.slat.as_mut(), self.clat.as_mut());
        let (d, e) = (self.bw.as_mut().map(|x| &mut x.0), self.iops.as_mut().map(|x| &mut x.0));
        a.into_iter().chain(b).chain(c).chain(d).chain(e)
    }

    /// The job's epoch (its start after `ramp_time`); with `log_alternate_epoch` its ms are added to
    /// every line's time (fio's `td->alternate_epoch`, `set_epoch_time`).
    fn set_epoch(&mut self, epoch_ns: u64) {
        self.epoch_ns = epoch_ns;
        if self.alternate_epoch {
            let ms = epoch_ns / 1_000_000;
            for s in self.streams() {
                s.epoch_ms = ms;
            }
            if let Some(h) = &mut self.hist {
                h.epoch_ms = ms;
            }
        }
    }

    fn ms(&self, ns: u64) -> u64 {
        ns.saturating_sub(self.epoch_ns) / 1_000_000
    }

    fn issued(&mut self, d: usize, r: &IoRecord) -> Result<(), LogError> {
        let (time_ms, issue_ns) = (self.ms(r.issue_ns), r.issue_ns - self.epoch_ns);
        if let Some(s) = &mut self.slat {
            let value = r.issue_ns - r.start_ns;
            let (bs, offset, prio) = (r.bytes as u64, r.offset, r.ioprio);
            s.push(Sample { time_ms, value, value1: 0, ddir: d, bs, offset, issue_ns, prio })?;
        }
        Ok(())
    }

    /// An I/O accounted, in fio's order (a reap's events in turn, whatever their direction).
    fn completed(&mut self, d: usize, r: &IoRecord) -> Result<(), LogError> {
        let time_ms = self.ms(r.done_ns);
        let at = |value: u64, issue_ns: u64| Sample {
            time_ms,
            value,
            value1: 0,
            ddir: d,
            bs: r.bytes as u64,
            offset: r.offset,
            issue_ns,
            prio: r.ioprio,
        };
        if let Some(s) = &mut self.lat {
            s.push(at(r.done_ns - r.start_ns, 0))?;
        }
        let issue_ns = r.issue_ns.saturating_sub(self.epoch_ns);
        if let Some(s) = &mut self.clat {
            s.push(at(r.done_ns - r.issue_ns, issue_ns))?;
        }
        if let Some(h) = &mut self.hist {
            h.completed(d, time_ms, r)?;
        }
        let since_epoch = r.done_ns.saturating_sub(self.epoch_ns);
        if let Some((s, windows)) = &mut self.bw {
            match windows {
                Some(w) => {
                    w.close_before(since_epoch, s)?;
                    w.delta[d] += r.bytes as u64;
                }
                None if !self.disable_bw => {
                    // fio's add_bw_sample: the I/O's bytes over its clat (0 with gtod_reduce's clat of 0).
                    let spent = if self.gtod_reduce { 0 } else { r.done_ns - r.issue_ns };
                    let rate = (r.bytes as u64 * 1_000_000).checked_div(spent).unwrap_or(0);
                    s.push(at(rate, 0))?;
                }
                None => {}
            }
        }
        if let Some((s, windows)) = &mut self.iops {
            match windows {
                Some(w) => {
                    w.close_before(since_epoch, s)?;
                    w.delta[d] += 1;
                }
                None if !self.gtod_reduce => s.push(at(1, 0))?,
                None => {}
            }
        }
        Ok(())
    }

    /// The job ended `end_ms` after its epoch: the last windows, every file flushed.
    fn finish(&mut self, end_ms: u64) -> Result<(), LogError> {
        for (s, w) in [&mut self.bw, &mut self.iops].into_iter().flatten() {
            if let Some(w) = w {
                while w.end_ms <= end_ms {
                    w.close(s)?;
                }
            }
        }
        for s in self.streams() {
            s.finish(end_ms)?;
        }
        if let Some(h) = &mut self.hist {
            h.out.flush().map_err(|e| (h.path.clone(), e))?;
        }
        Ok(())
    }
}

/// fio's log files of a run's jobs, written as the run makes them: the
/// run's `IoLog`. Make it before the run (it opens the files), give it to
/// `RunOptions::io_log`, then [`LogWriter::finish`] with the report.
/// Memory: each log's open windows.
pub struct LogWriter {
    /// By job (index in the workload); `None` for a job without logs.
    jobs: Vec<Option<JobLogs>>,
    /// Files fio appends to (`per_job_logs=0`), in job order: (the file, its part written here).
    appends: Vec<(PathBuf, PathBuf)>,
    /// The first write that failed: the run goes on, `finish` says so.
    error: Option<LogError>,
}

impl LogWriter {
    /// The logs of `jobs`, each opened with `open(path, append)`.
    fn new(
        jobs: &JobFile,
        open: &mut dyn FnMut(&std::path::Path, bool) -> std::io::Result<Target>,
    ) -> Result<LogWriter, (PathBuf, std::io::Error)> {
        let mut w = LogWriter { jobs: Vec::new(), appends: Vec::new(), error: None };
        for (i, job) in jobs.jobs.iter().enumerate() {
            w.jobs.push(if job.logs.any() { Some(job_logs(job, i + 1, open)?) } else { None });
        }
        Ok(w)
    }

    /// The logs of `jobs` as files, where fio writes them (relative to the working directory); a log
    /// shared by jobs of one name (`per_job_logs=0`) is written beside its file and appended to it at
    /// the end. Files that cannot be created: the path and why.
    pub fn to_files(jobs: &JobFile) -> Result<LogWriter, (PathBuf, std::io::Error)> {
        let mut parts: Vec<(PathBuf, PathBuf)> = Vec::new();
        let mut open = |path: &std::path::Path, append: bool| -> std::io::Result<Target> {
            let at = if append {
                let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
                // (The error names the log's file, not the part's temporary name.)
                let bare = |e: std::io::Error| {
                    let text = e.to_string();
                    let cause = text.split(" at path ").next().unwrap_or(&text).to_string();
                    std::io::Error::new(e.kind(), cause)
                };
                let (_, part) = tempfile::Builder::new()
                    .prefix(".blksim-log-")
                    .tempfile_in(dir)
                    .map_err(bare)?
                    .keep()
                    .map_err(|e| bare(e.error))?;
                parts.push((path.to_path_buf(), part.clone()));
                part
            } else {
                path.to_path_buf()
            };
            Ok(Target::File(std::io::BufWriter::new(std::fs::File::create(at)?)))
        };
        let mut w = LogWriter::new(jobs, &mut open)?;
        w.appends = parts;
        Ok(w)
    }

    /// The logs of `jobs` kept in memory (the library's run: nothing written); [`LogWriter::finish_into`]
    /// gives their texts.
    pub fn in_memory(jobs: &JobFile) -> LogWriter {
        LogWriter::new(jobs, &mut |_, _| Ok(Target::Memory(Vec::new()))).expect("memory")
    }

    /// The jobs ended (`report`): their last windows written, the shared logs appended to, every file
    /// flushed. The first failure: the file and why.
    pub fn finish(&mut self, report: &RunReport) -> Result<(), LogError> {
        self.close(report)?;
        let appends = std::mem::take(&mut self.appends);
        let mut result = Ok(());
        for (path, part) in &appends {
            if result.is_ok() {
                result = append(path, part).map_err(|e| (path.clone(), e));
            }
            let _ = std::fs::remove_file(part);
        }
        result
    }

    /// `finish`, for logs kept in memory: each file's text.
    pub fn finish_into(mut self, report: &RunReport) -> Result<Vec<LogFile>, LogError> {
        self.close(report)?;
        let mut files = Vec::new();
        for job in self.jobs {
            let Some(mut job) = job else { continue };
            let mut take = |path: PathBuf, out: Target, per_job: bool, columns: Vec<&'static str>| {
                if let Target::Memory(v) = out {
                    let text = String::from_utf8_lossy(&v).into_owned();
                    files.push(LogFile { path, text, append: !per_job, columns });
                }
            };
            let per_job = job.per_job;
            for s in [job.lat.take(), job.slat.take(), job.clat.take()].into_iter().flatten() {
                take(s.path, s.out, per_job, s.cols.names());
            }
            if let Some(h) = job.hist.take() {
                take(h.path, h.out, per_job, HIST_COLUMNS.to_vec());
            }
            for (s, _) in [job.bw.take(), job.iops.take()].into_iter().flatten() {
                take(s.path, s.out, per_job, s.cols.names());
            }
            if let Some(t) = job.iolog.take() {
                // Appended to, whatever per_job_logs says (fio opens it with "a").
                take(t.path, t.out, false, Vec::new());
            }
        }
        Ok(files)
    }

    /// Every job's last windows, every file flushed.
    fn close(&mut self, report: &RunReport) -> Result<(), LogError> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        for (job, stats) in self.jobs.iter_mut().zip(&report.jobs) {
            let Some(job) = job else { continue };
            job.set_epoch(stats.end_ns.saturating_sub(stats.runtime_ns));
            job.finish(stats.runtime_ns / 1_000_000)?;
            if let Some(t) = &mut job.iolog {
                t.close(stats.end_ns.saturating_sub(stats.start_ns) / 1000)?;
            }
        }
        Ok(())
    }

    fn note(&mut self, r: Result<(), LogError>) {
        if let Err(e) = r {
            self.error.get_or_insert(e);
        }
    }
}

/// `part`'s bytes appended to `path` (created if it is not there).
fn append(path: &std::path::Path, part: &std::path::Path) -> std::io::Result<()> {
    let mut to = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
    let mut from = std::fs::File::open(part)?;
    std::io::copy(&mut from, &mut to)?;
    to.flush()
}

impl LogWriter {
    /// `write` to job `job`'s logs, unless a write failed already (the first failure is kept).
    fn write_job(&mut self, job: usize, write: impl FnOnce(&mut JobLogs) -> Result<(), LogError>) {
        if self.error.is_some() {
            return;
        }
        if let Some(Some(j)) = self.jobs.get_mut(job) {
            let result = write(j);
            self.note(result);
        }
    }
}

impl IoLog for LogWriter {
    fn issued(&mut self, job: usize, dir: usize, epoch_ns: u64, r: &IoRecord) {
        self.write_job(job, |j| {
            j.set_epoch(epoch_ns);
            j.issued(dir, r)
        });
    }

    fn completed(&mut self, job: usize, dir: usize, epoch_ns: u64, r: &IoRecord) {
        self.write_job(job, |j| {
            j.set_epoch(epoch_ns);
            j.completed(dir, r)
        });
    }

    fn queued(&mut self, job: usize, file: usize, dir: usize, since_start_ns: u64, offset: u64, bytes: u64) {
        self.write_job(job, |j| {
            j.iolog.as_mut().map_or(Ok(()), |t| t.queued(file, dir, since_start_ns, offset, bytes))
        });
    }

    fn reopened(&mut self, job: usize, since_start_ns: u64) {
        self.write_job(job, |j| j.iolog.as_mut().map_or(Ok(()), |t| t.reopened(since_start_ns)));
    }

    fn file_done(&mut self, job: usize, file: usize, since_start_ns: u64) {
        self.write_job(job, |j| j.iolog.as_mut().map_or(Ok(()), |t| t.file_done(file, since_start_ns)));
    }

    fn end_fsync_done(&mut self, job: usize, file: usize, since_start_ns: u64) {
        self.write_job(job, |j| j.iolog.as_mut().map_or(Ok(()), |t| t.end_fsync_done(file, since_start_ns)));
    }
}

/// The logs of one job (`number`: fio's 1-based thread number), opened.
fn job_logs(
    job: &ParsedJob,
    number: usize,
    open: &mut dyn FnMut(&std::path::Path, bool) -> std::io::Result<Target>,
) -> Result<JobLogs, (PathBuf, std::io::Error)> {
    let o = &job.logs;
    let cfg = &job.config;
    let cols = Columns::of(o);
    let iolog = match &o.iolog {
        Some(path) => {
            let path = PathBuf::from(path);
            let out = open(&path, true).map_err(|e| (path.clone(), e))?;
            Some(IoTrace::new(path, out, cfg.file_names())?)
        }
        None => None,
    };
    let mut file = |prefix: &str, kind: &str| -> Result<(PathBuf, Target), LogError> {
        let path = PathBuf::from(log_file_name(prefix, &cfg.name, kind, number, o.per_job));
        let out = open(&path, !o.per_job).map_err(|e| (path.clone(), e))?;
        Ok((path, out))
    };
    let stream = |(path, out): (PathBuf, Target), avg_msec: u64| Stream {
        path,
        out,
        cols,
        epoch_ms: 0,
        windowing: Windowing::new(avg_msec, o.window),
        line: String::new(),
    };
    let mut logs = JobLogs {
        lat: None,
        slat: None,
        clat: None,
        hist: None,
        bw: None,
        iops: None,
        gtod_reduce: cfg.gtod_reduce,
        disable_bw: o.disable_bw,
        epoch_ns: 0,
        alternate_epoch: o.alternate_epoch,
        per_job: o.per_job,
        iolog,
    };
    if let Some(prefix) = &o.lat {
        if !o.disable_lat {
            logs.lat = Some(stream(file(prefix, "lat")?, o.avg_msec));
        }
        if !o.disable_slat {
            // (Empty for a sync engine: fio logs slat as an async engine queues an io_u.)
            logs.slat = Some(stream(file(prefix, "slat")?, o.avg_msec));
        }
        if !o.disable_clat {
            logs.clat = Some(stream(file(prefix, "clat")?, o.avg_msec));
        }
    }
    if let Some(prefix) = &o.hist {
        let (path, out) = file(prefix, "clat_hist")?;
        // No lines without a window or with clat off.
        let msec = if o.hist_msec == 0 || o.disable_clat { u64::MAX } else { o.hist_msec };
        logs.hist = Some(Hist {
            path,
            out,
            stride: 1usize << o.hist_coarseness,
            msec,
            epoch_ms: 0,
            clat_percentiles: cfg.clat_percentiles,
            bins: vec![vec![0; PLAT_NR]; 3],
            before: vec![vec![0; PLAT_NR]; 3],
            last: [0; 3],
        });
    }
    if let Some(prefix) = &o.bw {
        let window = o.bw_window_msec();
        let w = (window > 0).then_some(PerWindow { window_ms: window, end_ms: window, delta: [0; 3], bytes: true });
        logs.bw = Some((stream(file(prefix, "bw")?, window), w));
    }
    if let Some(prefix) = &o.iops {
        let window = o.iops_window_msec();
        let w = (window > 0).then_some(PerWindow { window_ms: window, end_ms: window, delta: [0; 3], bytes: false });
        logs.iops = Some((stream(file(prefix, "iops")?, window), w));
    }
    Ok(logs)
}

/// fio's `--bandwidth-log[=NAME]` (`agg_io_log`): `NAME-read_bw.log`,
/// `NAME-write_bw.log` and `NAME-trim_bw.log`, the bandwidth of all jobs
/// together in KiB/s, one line per direction every sample interval (fio's
/// helper thread samples it every `bw_avg_time`, 500 ms, once no job is in
/// its ramp): `time, value, ddir, 0, 0`, time in ms since the run began.
/// A job's interval samples go to the first line at or after their end.
pub fn aggregate_bw_logs(report: &RunReport, name: &str) -> Vec<LogFile> {
    let interval = report.sample_interval_ns.max(1);
    let mut lines: std::collections::BTreeMap<u64, [u64; 3]> = std::collections::BTreeMap::new();
    for j in &report.jobs {
        let first_end = j.start_ns + j.config.ramp_time_ns + interval;
        for (d, dir) in j.dirs.iter().enumerate() {
            for (k, &bps) in dir.bw_samples.iter().enumerate() {
                let end = first_end + k as u64 * interval;
                let at = end.div_ceil(interval) * interval;
                lines.entry(at).or_default()[d] += bps;
            }
        }
    }
    ["read", "write", "trim"]
        .iter()
        .enumerate()
        .map(|(d, dir)| {
            let mut text = String::new();
            for (at, bps) in &lines {
                let _ = writeln!(text, "{}, {}, {d}, 0, 0", at / 1_000_000, bps[d] / 1024);
            }
            LogFile {
                path: PathBuf::from(format!("{name}-{dir}_bw.log")),
                text,
                append: false,
                columns: AGGREGATE_BW_COLUMNS.to_vec(),
            }
        })
        .collect()
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

    /// `windowed` as the streams do it: samples through a window, then the job's end.
    fn windowed(samples: Vec<Sample>, avg_msec: u64, mode: LogWindowValue, end_ms: u64) -> Vec<Sample> {
        let mut w = Windowing::new(avg_msec, mode);
        let mut out: Vec<Sample> = samples.into_iter().filter_map(|s| w.push(s)).collect();
        out.extend(w.finish(end_ms));
        out
    }

    #[test]
    fn lines_as_flush_samples() {
        let s = Sample { time_ms: 12, value: 345, value1: 999, ddir: 1, bs: 8192, offset: 4096, issue_ns: 77, prio: 0 };
        let line = |c| {
            let mut out = String::new();
            format_sample(&mut out, &s, c);
            out
        };
        assert_eq!(
            line(Columns { both: false, offset: false, prio: false, issue_time: false }),
            "12, 345, 1, 8192, 0\n"
        );
        assert_eq!(
            line(Columns { both: true, offset: true, prio: true, issue_time: true }),
            "12, 345, 999, 1, 8192, 4096, 0x0000, 77\n"
        );
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
