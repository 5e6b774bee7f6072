//! The commands: `main` reads the command line and runs one; `run`,
//! `machines`, `completions` and `man` live here, the others in their own
//! files.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use blksim::machine::{builtin, builtin_names, load_profile, Builtins, Machine, ProfileSource};
use blksim::settings::{parse_time_ns, parse_timed_write, Settings, TimedAction};
use blksim::stats::RunReport;
use blksim_fio::job::{option_line_of, parse_job_sources, JobFile, JobSource, ParseContext, COMMAND_LINE};
use blksim_fio::output::{write_breakdown, write_iostat, write_json, write_mpstat, write_trace, LogWriter};
use clap::CommandFactory;
use serde_json::json;

use crate::args::{Cli, Command, MachineArgs, OutputFormat, ProgressArgs, RunArgs};
use crate::failure::{Cause, Failure};
use crate::interrupt;
use crate::out;
use crate::progress::{total_virtual_ns, Progress};

/// The default machine: the built-in Sapphire Rapids Gen5 server.
pub const DEFAULT_MACHINE: &str = "spr-gen5";
/// The default machine of `dsa-memfill`.
pub const DEFAULT_DSA_MACHINE: &str = "spr-dsa";

/// Default trace window: the first 10 ms of the run.
pub const DEFAULT_TRACE_WINDOW_NS: (u64, u64) = (0, 10_000_000);

/// Read the command line (`argv`, the program's name first) and run the command it names.
pub fn main(argv: &[String]) -> Result<(), Failure> {
    let Some(cli) = crate::parse::parse(argv)? else {
        return Ok(());
    };
    match cli.command {
        Command::Run(args) => run(args),
        Command::Machines(args) => machines(args.machine.as_deref()),
        Command::TIoUring(args) => crate::tio_uring::t_io_uring_command(&args),
        Command::DsaMemfill(args) => crate::dsa::dsa_memfill_command(&args),
        Command::Reproduce(args) => crate::reproduce::reproduce(&args),
        Command::Fit(args) => crate::fit::fit(&args),
        Command::Sweep(args) => crate::sweep::sweep(&args),
        Command::Options(args) => crate::fio_options::options(&args),
        Command::Completions(args) => completions(args.shell),
        Command::Man(args) => man(args.dir.as_deref()),
        Command::Version => out::print_line(&format!("blksim {}", env!("CARGO_PKG_VERSION"))),
    }
}

impl MachineArgs {
    /// The machine (`--machine`, else `default`) and the settings `--cmdline` and `--set` make on it.
    pub fn machine_and_settings(&self, default: &str) -> Result<(Machine, Settings), blksim::Error> {
        self.with_patches(default, &[])
    }

    /// `machine_and_settings`, then the `--patch`es.
    pub fn with_patches(&self, default: &str, patches: &[String]) -> Result<(Machine, Settings), blksim::Error> {
        machine_settings(self.machine.as_deref().unwrap_or(default), &self.cmdline, &self.sets, patches)
    }
}

/// A machine (a built-in name or a profile file) and the settings `--cmdline`, `--set` and `--patch` make
/// on it: what every command that runs the model, and the library call, start from.
pub fn machine_settings(
    machine: &str,
    cmdline: &[String],
    sets: &[String],
    patches: &[String],
) -> Result<(Machine, Settings), blksim::Error> {
    let machine = load_machine(machine).map_err(blksim::Error::bad_input)?;
    let settings = knob_settings(&machine, cmdline, sets, patches)?;
    Ok((machine, settings))
}

/// `--at TIME:PATH=VALUE`s, read.
pub fn timed_writes(at: &[String]) -> Result<Vec<(u64, TimedAction)>, Failure> {
    at.iter().map(|a| parse_timed_write(a).map_err(Failure::from)).collect()
}

/// `--trace-window START:END` in ns; END must be after START.
fn parse_trace_window(v: &str) -> Result<(u64, u64), String> {
    let (s, e) =
        v.split_once(':').ok_or_else(|| format!("--trace-window '{v}': expected START:END, e.g. 10ms:12ms"))?;
    let (s, e) = (parse_time_ns(s)?, parse_time_ns(e)?);
    if e <= s {
        return Err(format!("--trace-window '{v}': END must be after START"));
    }
    Ok((s, e))
}

/// Profiles next to a user's profile file, for `extends`.
pub struct DirSource(pub PathBuf);

impl ProfileSource for DirSource {
    fn profile_text(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.0.join(format!("{name}.toml"))).ok().or_else(|| Builtins.profile_text(name))
    }
}

/// A built-in name, or a TOML profile file.
pub fn load_machine(spec: &str) -> Result<Machine, String> {
    let path = Path::new(spec);
    if spec.ends_with(".toml") || path.exists() {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{spec}: {e}"))?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        load_profile(&text, spec, &DirSource(dir))
    } else {
        builtin(spec)
    }
}

/// A parameter blksim does not model but that changes the modelled path (CPUs, interrupt
/// delivery and affinity, the IOMMU, the NVMe driver's queues): what it changes. Every other
/// parameter a real `/proc/cmdline` has (`BOOT_IMAGE`, `root`, `quiet`, `mitigations`,
/// `intel_iommu=on`, ...) is ignored with a warning, as the kernel ignores what it does not know.
fn path_changing_param(name: &str, word: &str) -> Option<&'static str> {
    Some(match name {
        "maxcpus" | "nr_cpus" | "possible_cpus" | "isolcpus" | "nohz_full" | "rcu_nocbs" => {
            "changes the CPUs or where tasks and interrupts may run"
        }
        "irqaffinity" | "threadirqs" | "noirqdebug" | "noapic" | "nox2apic" | "pci" => {
            "changes interrupt delivery or affinity"
        }
        "iommu" | "amd_iommu" | "intel_iommu" if word.ends_with("=off") => {
            "turns off the IOMMU and interrupt remapping"
        }
        _ if name.starts_with("nvme.") || name.starts_with("nvme_core.") || name.starts_with("null_blk.") => {
            "is a parameter of a driver blksim simulates that it does not model"
        }
        _ if name.starts_with("blk_mq") || name.starts_with("scsi_mod.") => "changes the block layer",
        _ => return None,
    })
}

/// Settings from `--cmdline` strings and `--set` sysfs writes, checked against the machine's devices.
pub fn knob_settings(
    machine: &Machine,
    cmdline: &[String],
    sets: &[String],
    patches: &[String],
) -> Result<Settings, blksim::Error> {
    let mut settings = Settings::default();
    // Patches first: a patch's own knobs (GSIM's /proc/irq/soft_moderation) exist only with it.
    for p in patches {
        settings.apply_patch(p)?;
    }
    let mut ignored = Vec::new();
    for c in cmdline {
        for word in c.split_whitespace() {
            let name = word.split_once('=').map_or(word, |(n, _)| n);
            if blksim::settings::CMDLINE_PARAMS.contains(&name) || name.starts_with("blksim.") {
                settings.apply_cmdline(word).map_err(|e| e.context("--cmdline"))?;
            } else if let Some(why) = path_changing_param(name, word) {
                return Err(blksim::Error::not_modelled(format!(
                    "--cmdline: '{word}' {why}, which blksim does not model"
                )));
            } else if !ignored.contains(&name) {
                ignored.push(name);
            }
        }
    }
    if !ignored.is_empty() {
        // The kernel itself ignores parameters it does not know.
        eprintln!(
            "blksim: warning: --cmdline: ignored, not modelled (they do not change the simulated I/O path): {}",
            ignored.join(", ")
        );
    }
    let dev_names: Vec<String> = machine.devices.iter().filter(|d| d.is_block()).map(|d| d.name.clone()).collect();
    for s in sets {
        settings.apply_write(s, &dev_names)?;
    }
    Ok(settings)
}

/// `blksim run`: load the machine, build the settings, parse the jobs, simulate, write the outputs.
fn run(args: RunArgs) -> Result<(), Failure> {
    let status_ns = match args.progress.status_interval.as_deref() {
        Some(v) => Some(blksim_fio::job::status_interval_ns(v).map_err(|e| format!("--status-interval {v}: {e}"))?),
        None => None,
    };
    let timed = timed_writes(&args.at.at)?;
    let trace_window_ns = args.trace_window.as_deref().map(parse_trace_window).transpose()?;
    let (machine, settings) = args.knobs.with_patches(DEFAULT_MACHINE, &args.patches)?;
    let jobs = parse_jobs(&args, &machine)?;
    if let (true, Some(w)) = (args.warnings_fatal, jobs.warnings.first()) {
        return Err(Failure::from(format!("{w} (an error with --warnings-fatal)")));
    }
    for w in &jobs.warnings {
        eprintln!("blksim: warning: {w}");
    }
    if let Some(kib) = args.alloc_size {
        eprintln!("blksim: warning: --alloc-size={kib}: sizes fio's shared memory pool, which a simulated run does not have; ignored");
    }
    if args.readonly {
        readonly_check(&jobs)?;
    }
    // fio's add_job: a job's merge_blktrace_file is written as its read_iolog is read (above),
    // then with --merge-blktrace-only no job is kept.
    if args.merge_blktrace_only {
        return Ok(());
    }
    let configs: Vec<_> = jobs.jobs.iter().map(|j| j.config.clone()).collect();
    if let (Some(_), Some((start, _)), Some(total)) = (&args.trace, trace_window_ns, total_virtual_ns(&configs)) {
        if start >= total {
            return Err(Failure::from(format!(
                "--trace-window {}: starts at or after the end of the jobs' I/O ({}), so the trace would be empty",
                args.trace_window.as_deref().unwrap_or_default(),
                time_text(total)
            )));
        }
    }
    // Like fio's --parse-only, plus the check that the machine can run the jobs: also before the
    // wall-time estimate, which is for jobs that can run.
    // (Built once: the run takes the machine as checked.)
    let wall = Instant::now();
    let prepared = blksim::prepare(&machine, &settings, &configs, args.knobs.seed).map_err(|e| locate(&jobs, e))?;
    if args.parse_only {
        return Ok(());
    }
    let budget =
        crate::budget::check(&machine, &blksim::Workload { jobs: configs.clone(), dsa: Vec::new() }, &args.budget)?;
    // fio's logs, written as the run makes them (opened now: one that cannot be is bad input).
    let logs = match jobs.jobs.iter().any(|j| j.logs.any()) {
        true => Some(std::sync::Arc::new(std::sync::Mutex::new(
            LogWriter::to_files(&jobs).map_err(|(path, e)| format!("log file {}: {e}", path.display()))?,
        ))),
        false => None,
    };
    let signals = interrupt::stop_on_signals();
    let watch = crate::budget::Watch::start(&signals, budget);
    let progress = Progress::start(&args.progress, total_virtual_ns(&configs))?;
    // The output as it comes: fio's --status-interval reports as the run takes them (the normal
    // report's header ahead of the first, as fio prints it when the jobs start), then the final one.
    let output = Arc::new(std::sync::Mutex::new(out::Output::new(args.output.as_deref())));
    // fio's reports of the run so far: every --status-interval, and when asked by SIGUSR1 or the
    // file fio-dump-status (the jobs and machine shared with their writer, not copied: a
    // replay's jobs can be large).
    let (args, jobs, machine, settings) = (Arc::new(args), Arc::new(jobs), Arc::new(machine), Arc::new(settings));
    let status = {
        let (args, jobs, machine, settings, output) =
            (args.clone(), jobs.clone(), machine.clone(), settings.clone(), output.clone());
        let stop = watch.stop.clone();
        let sink = move |report: RunReport| {
            let extra = run_json_extra(&machine, &settings, &report, wall.elapsed().as_nanos() as u64);
            let (terse, json, body) = report_formats(&args, &report, &jobs, extra);
            let mut output = output.lock().expect("the output");
            let head = match !output.written() && normal_format(&args) {
                true => blksim_fio::output::write_normal_head(&report, &jobs),
                false => String::new(),
            };
            output.write(&(head + &terse + &json + &body));
            if output.failed() {
                // Nowhere to write (a reader gone, a full disk): the run ends here.
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        };
        let asked = interrupt::status_on_sigusr1();
        interrupt::status_on_file(&asked);
        blksim::StatusSink { interval_ns: status_ns, asked: Some(asked), sink: Arc::new(std::sync::Mutex::new(sink)) }
    };
    let options = blksim::RunOptions {
        trace_window_ns: args.trace.as_ref().map(|_| trace_window_ns.unwrap_or(DEFAULT_TRACE_WINDOW_NS)),
        timed,
        stop: Some(watch.stop.clone()),
        progress: Some(progress.virtual_ns.clone()),
        io_log: logs.clone().map(|w| blksim::stats::IoLogSink(w)),
        status: Some(status),
    };
    let result = prepared.run(&options);
    progress.finish();
    let (report, inv) = result.map_err(|e| locate(&jobs, e))?;
    interrupt::unless_stopped(&watch.stop, || crate::invariants::check(&report, &inv))?;
    for note in blksim::idle_patches(&settings, &report) {
        eprintln!("blksim: warning: {note}");
    }
    write_trace_file(&args, &report, trace_window_ns)?;
    if let Some(logs) = &logs {
        logs.lock().expect("logs").finish(&report).map_err(|(path, e)| {
            Failure::new(crate::failure::Cause::Output, format!("writing log file {}: {e}", path.display()))
        })?;
    }
    for (path, bytes) in verify_state_files(&report, &jobs) {
        std::fs::write(&path, bytes).map_err(|e| {
            Failure::new(crate::failure::Cause::Output, format!("writing verify state file {path}: {e}"))
        })?;
    }
    if let Some(name) = &args.bandwidth_log {
        for log in blksim_fio::output::aggregate_bw_logs(&report, name) {
            std::fs::write(&log.path, &log.text).map_err(|e| {
                Failure::new(crate::failure::Cause::Output, format!("writing log file {}: {e}", log.path.display()))
            })?;
        }
    }
    let extra = run_json_extra(&machine, &settings, &report, wall.elapsed().as_nanos() as u64);
    // fio's io_u error lines come as the I/Os fail, before its report.
    io_u_errors(&report);
    let mut output = output.lock().expect("the output");
    let out = run_output(&args, &report, &jobs, extra, output.written());
    output.write(&out);
    output.finish()?;
    watch.check(report.sim_time_ns)?;
    interrupt::check(&signals, report.sim_time_ns)?;
    // A job that failed is exit 1, apart from input blksim could not take (2).
    let errors: Vec<_> = report.jobs.iter().filter_map(|j| j.error.as_ref()).collect();
    if !errors.is_empty() {
        let n = report.jobs.len();
        let slow = errors.iter().filter(|e| !e.min_rate.is_empty()).count();
        let late = errors.iter().filter(|e| e.max_latency.is_some()).count();
        // Of those, the ones whose latency_target failed at depth 1 (not a max_latency).
        let target = report
            .jobs
            .iter()
            .filter(|j| {
                let (Some(e), Some(t)) = (j.error.as_ref(), j.config.latency_target) else { return false };
                e.max_latency.is_some_and(|(_, max)| max == t.target_ns && !j.config.max_latency_ns.contains(&max))
            })
            .count();
        let late = late - target;
        let mut why = Vec::new();
        if errors.len() > slow + late + target {
            why.push(format!("{} of {n} jobs ended on an I/O error", errors.len() - slow - late - target));
        }
        if slow > 0 {
            why.push(format!("{slow} of {n} jobs ended below their minimum rate (rate_min, rate_iops_min)"));
        }
        if target > 0 {
            why.push(format!("{target} of {n} jobs ended on an I/O over their latency_target at depth 1"));
        }
        if late > 0 {
            why.push(format!("{late} of {n} jobs ended on an I/O over their max_latency"));
        }
        return Err(Failure::new(Cause::JobErrors, why.join("; ")));
    }
    Ok(())
}

/// The verify state files of the jobs that save one (`verify_state_save`): fio's name for each, its bytes.
pub(crate) fn verify_state_files(
    report: &blksim::stats::RunReport,
    jobs: &blksim_fio::job::JobFile,
) -> Vec<(String, Vec<u8>)> {
    report
        .jobs
        .iter()
        .enumerate()
        .filter_map(|(i, j)| j.verify_state.as_ref().map(|s| (i, j, s)))
        .map(|(i, j, s)| {
            let name = &jobs.jobs[i].config.name;
            debug_assert_eq!(name, &j.config.name);
            (blksim_fio::verify_state::file_name(name, i), blksim_fio::verify_state::encode(s, name, i))
        })
        .collect()
}

/// What fio logs (`log_info`) as a job's verification stops at a loaded state: one line per job.
pub(crate) fn verify_stop_lines(report: &blksim::stats::RunReport) -> String {
    report.jobs.iter().filter_map(|j| j.verify_stopped.as_ref()).map(|why| format!("{why}\n")).collect()
}

/// fio's `io_u error` line on stderr for each job an I/O error ended, as
/// the failed I/O completes. A synchronous engine's queue hook (libaio's
/// and posixaio's for a trim) returns its I/O completed with the error, which fio takes in `td_io_queue` without
/// that line (its thread's exit line says it: `job_error_lines`). A job
/// below its minimum rate gets `check_min_rate`'s line instead, one over `max_latency` `lat_fatal`'s.
fn io_u_errors(report: &blksim::stats::RunReport) {
    for j in &report.jobs {
        let Some(e) = j.error.as_ref() else { continue };
        if !e.min_rate.is_empty() {
            // check_min_rate's log_err, for each direction below its minimum.
            let name = &j.config.name;
            for m in &e.min_rate {
                match m.iops {
                    true => eprintln!("{name}: rate_iops_min={} not met, got {} IOPS", m.min, m.got),
                    false => eprintln!("{name}: rate_min={}B/s not met, got {}B/s", m.min, m.got),
                }
            }
            continue;
        }
        if let Some((lat, max)) = e.max_latency {
            // lat_fatal's log_err (io_u.c), as the I/O completes.
            let (dir, file) = (e.dir.name(), &e.file);
            eprintln!(
                "fio: latency of {lat} nsec exceeds specified max ({max} nsec): {file} {dir} {} {}",
                e.offset, e.bytes
            );
            continue;
        }
        if j.config.ioengine.completes_in_queue(e.dir) {
            continue;
        }
        let dir = e.dir.name();
        eprintln!(
            "fio: io_u error on file {}: {}: {dir} offset={}, buflen={}",
            e.file,
            blksim_fio::output::strerror(-e.errno),
            e.offset,
            e.bytes
        );
    }
}

/// `t-io_uring` takes fio's `--status-interval`; say once that it changes nothing there.
pub fn status_interval_note(progress: &ProgressArgs) {
    if let Some(v) = &progress.status_interval {
        eprintln!("blksim: --status-interval {v}: fio's periodic report, which t/io_uring does not have; ignored");
    }
}

/// The jobs of `run` (job files, `-` for stdin, or fio's command-line job form), parsed as fio would on
/// `machine`.
fn parse_jobs(args: &RunArgs, machine: &Machine) -> Result<JobFile, String> {
    let cmdline = &args.fio_job;
    let sources: Vec<JobSource> = match (args.job_files.is_empty(), cmdline.args.is_empty()) {
        (true, true) => {
            return Err("no job given: give job files (JOB.fio, `-` for stdin) or fio's command-line job options \
                        (--name=NAME --rw=... ); see blksim run --help"
                .into())
        }
        (false, false) => {
            return Err(format!(
                "give job files or fio's command-line job options, not both (job file '{}', option '{}')",
                args.job_files[0], cmdline.args[0]
            ))
        }
        (true, false) => vec![cmdline.source()],
        (false, true) => args.job_files.iter().map(|f| job_source(f)).collect::<Result<_, _>>()?,
    };
    let mut ctx = ParseContext::for_machine(machine, std::env::vars().collect::<BTreeMap<_, _>>());
    ctx.sections = args.sections.clone();
    ctx.read_only = args.readonly;
    parse_job_sources(&sources, &ctx).map_err(|e| cmdline.locate(e).to_string())
}

/// A job file, or `-`: a job file on stdin.
fn job_source(file: &str) -> Result<JobSource, String> {
    if file != "-" {
        return Ok(JobSource::File(PathBuf::from(file)));
    }
    let mut bytes = Vec::new();
    // The same bound as a job file's (the parser's MAX_JOB_FILE_BYTES).
    const MAX: u64 = 16 << 20;
    std::io::stdin()
        .take(MAX + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("<stdin>: cannot read the job file: {e}"))?;
    if bytes.len() as u64 > MAX {
        return Err(format!("<stdin>: the job file is over {} MiB: blksim reads job files up to that size", MAX >> 20));
    }
    Ok(JobSource::Text { name: PathBuf::from("<stdin>"), text: String::from_utf8_lossy(&bytes).into_owned() })
}

/// A model error, prefixed with the file and line of the option it is about (also when written in
/// `[global]`; else the job's section) and the job's name.
fn locate(jobs: &JobFile, e: blksim::Error) -> Failure {
    locate_error(jobs, e).into()
}

/// `locate`, keeping the error's kind (the library call's exceptions tell bad input from not modelled).
pub(crate) fn locate_error(jobs: &JobFile, e: blksim::Error) -> blksim::Error {
    match e.job {
        Some(i) => {
            let pj = &jobs.jobs[i];
            let (file, line) = option_line_of(&pj.option_lines, &e.message).unwrap_or((&pj.file, pj.line));
            let at = if file == Path::new(COMMAND_LINE) {
                COMMAND_LINE.to_string()
            } else {
                format!("{}:{line}", file.display())
            };
            e.context(format!("{at}: job '{}'", pj.config.name))
        }
        None => e,
    }
}

/// `--trace FILE`: write the run's trace there; a window that starts after the run ended (jobs that
/// finished early) is said on stderr and no file is written.
fn write_trace_file(args: &RunArgs, report: &RunReport, window: Option<(u64, u64)>) -> Result<(), Failure> {
    if let (Some(path), Some(trace)) = (&args.trace, &report.trace) {
        let (start, _) = window.unwrap_or(DEFAULT_TRACE_WINDOW_NS);
        if start >= report.sim_time_ns {
            eprintln!(
                "blksim: warning: --trace-window starts at {}, after the run ended at {}: no trace written to {path}",
                time_text(start),
                time_text(report.sim_time_ns)
            );
            return Ok(());
        }
        out::write_file(path, write_trace(trace).as_bytes(), "--trace")?;
    }
    Ok(())
}

/// `ns` as a time the options take back (`12.5ms`).
fn time_text(ns: u64) -> String {
    match ns {
        0..=999_999 => format!("{}us", ns as f64 / 1e3),
        1_000_000..=999_999_999 => format!("{}ms", ns as f64 / 1e6),
        _ => format!("{}s", ns as f64 / 1e9),
    }
}

/// blksim's own fields of the JSON output: the machine, the settings and the wall-clock rates.
pub(crate) fn run_json_extra(
    machine: &Machine,
    settings: &Settings,
    report: &RunReport,
    wall_ns: u64,
) -> serde_json::Value {
    let ios: u64 = report.jobs.iter().flat_map(|j| j.dirs.iter()).map(|d| d.total_ios).sum();
    let wall_s = (wall_ns as f64 / 1e9).max(1e-9);
    json!({
        "machine": machine_json(machine),
        "settings": settings.given,
        "wall_time_ns": wall_ns,
        "wall_events_per_sec": (report.events as f64 / wall_s).round(),
        "wall_ios_per_sec": (ios as f64 / wall_s).round(),
    })
}

/// The report in the formats asked for, in fio's order: terse lines, JSON, and the normal
/// report without its header (fio's `__show_run_stats`, as `--status-interval` prints it too).
fn report_formats(
    args: &RunArgs,
    report: &RunReport,
    jobs: &JobFile,
    extra: serde_json::Value,
) -> (String, String, String) {
    let formats = &args.output_format;
    // fio's --minimal is terse alone.
    let terse = args.minimal || formats.contains(&OutputFormat::Terse);
    let normal = normal_format(args);
    let plus = !args.minimal && formats.contains(&OutputFormat::JsonPlus);
    let wants_json = !args.minimal && (plus || formats.contains(&OutputFormat::Json));
    let terse = terse.then(|| {
        let json = write_json(report, jobs, false, extra.clone());
        blksim_fio::output::write_terse(&json, args.terse_version)
    });
    let json = wants_json.then(|| write_json(report, jobs, plus, extra));
    let body = if normal { blksim_fio::output::write_normal_body(report, jobs) } else { String::new() };
    (terse.unwrap_or_default(), json.unwrap_or_default(), body)
}

/// Is fio's normal report asked for (`--minimal` is terse alone)?
fn normal_format(args: &RunArgs) -> bool {
    !args.minimal && args.output_format.contains(&OutputFormat::Normal)
}

/// The output of a run: the normal report's header (unless `head_out`: it went ahead of the
/// `--status-interval` reports), the final report in `--output-format` (fio's list: with normal
/// and JSON, the JSON goes between the job headers and the results, as fio prints it), then the
/// tables asked for (`--interrupts`, ...).
fn run_output(args: &RunArgs, report: &RunReport, jobs: &JobFile, extra: serde_json::Value, head_out: bool) -> String {
    let normal = normal_format(args);
    let (terse, json, body) = report_formats(args, report, jobs, extra);
    let pure_json = !json.is_empty() && !normal && terse.is_empty();
    // fio's order: the normal report's header (as the jobs start), then terse, JSON and the report.
    let head = match normal && !head_out {
        true => blksim_fio::output::write_normal_head(report, jobs),
        false => String::new(),
    };
    // fio logs each failed job's error as its thread exits, after the header and the status
    // reports before it (ahead of the report); after JSON alone it goes to stderr.
    let mut failed = blksim_fio::output::job_error_lines(report);
    if pure_json {
        eprint!("{failed}");
        failed.clear();
    }
    let mut out = head + &failed + &terse + &json + &body;
    // fio logs these as the run goes, ahead of its report; after JSON alone they go to stderr.
    let stops = verify_stop_lines(report);
    if pure_json {
        eprint!("{stops}");
    } else {
        out.insert_str(0, &stops);
    }
    // The text tables follow a normal report; after JSON alone they go to
    // stderr, so that the output stays one JSON document (their numbers are
    // in its `blksim` object).
    let mut tables = String::new();
    if let Some(view) = args.interrupts {
        tables.push('\n');
        tables.push_str(&view.write(report));
    }
    for (wanted, text) in [
        (args.mpstat, write_mpstat as fn(&RunReport) -> String),
        (args.iostat, write_iostat),
        (args.breakdown, write_breakdown),
    ] {
        if wanted {
            tables.push('\n');
            tables.push_str(&text(report));
        }
    }
    if pure_json {
        eprint!("{}", tables.trim_start_matches('\n'));
    } else {
        out.push_str(&tables);
    }
    out
}

/// The machine as the JSON output describes it.
pub(crate) fn machine_json(m: &Machine) -> serde_json::Value {
    let t = &m.topology;
    json!({
        "name": m.name,
        "description": m.description,
        "sockets": t.sockets,
        "cores_per_socket": t.cores_per_socket,
        "threads_per_core": t.threads_per_core,
        "cpus": t.cpu_count(),
        "devices": m.devices.iter().map(|d| d.name.clone()).collect::<Vec<_>>(),
        "costs_ns": m.costs.table.iter().map(|(k, c)| (k.clone(), json!(c.ns))).collect::<serde_json::Map<_, _>>(),
    })
}

/// `blksim machines [NAME|FILE]`: list the built-in machines, or show one resolved.
fn machines(machine: Option<&str>) -> Result<(), Failure> {
    match machine {
        None => out::print(&list_machines()?),
        Some(name) => out::print(&describe(&load_machine(name)?)),
    }
}

/// `blksim completions SHELL`: the shell's completion script on stdout.
fn completions(shell: clap_complete::Shell) -> Result<(), Failure> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "blksim", &mut script);
    out::print(&String::from_utf8_lossy(&script))
}

/// `blksim man`: one complete page on stdout (every command with its options), or with `--dir DIR`
/// blksim.1 and a page per command written there.
fn man(dir: Option<&str>) -> Result<(), Failure> {
    let cmd = Cli::command();
    let Some(dir) = dir else {
        return out::print(&whole_man_page(&cmd));
    };
    std::fs::create_dir_all(dir).map_err(|e| format!("--dir {dir}: {e}"))?;
    let mut pages = vec![("blksim.1".to_string(), man_page(&cmd))];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let sub = sub.clone().name(format!("blksim-{}", sub.get_name()));
        pages.push((format!("{}.1", sub.get_name()), man_page(&sub)));
    }
    for (file, page) in pages {
        let path = Path::new(dir).join(&file);
        out::write_file(&path.to_string_lossy(), &page, "--dir")?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

/// blksim.1 with every command in it: the tool's sections, then a COMMANDS
/// section with each command's synopsis, description, options and notes
/// (their section headings as paragraph headings), then EXIT STATUS.
fn whole_man_page(cmd: &clap::Command) -> String {
    let section = |f: &dyn Fn(&mut Vec<u8>) -> std::io::Result<()>| {
        let mut b = Vec::new();
        f(&mut b).expect("writing to a Vec");
        // Each render starts with roff's preamble (the Aq string): keep the first page's only.
        String::from_utf8_lossy(&b)
            .lines()
            .filter(|l| !l.starts_with(".ie \\n(.g") && !l.starts_with(".el .ds Aq"))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    };
    let top = clap_mangen::Man::new(cmd.clone());
    let mut page = String::from_utf8_lossy(&{
        let mut b = Vec::new();
        top.render_title(&mut b).expect("writing to a Vec");
        b
    })
    .into_owned();
    page += &section(&|b| top.render_name_section(b));
    page += &section(&|b| top.render_synopsis_section(b));
    page += &section(&|b| top.render_description_section(b));
    page += ".SH COMMANDS\n";
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help") {
        let name = format!("blksim {}", sub.get_name());
        let m = clap_mangen::Man::new(sub.clone().name(&name).bin_name(&name));
        page += &format!(".SS \"{name}\"\n");
        let mut text = section(&|b| m.render_description_section(b));
        text += &section(&|b| m.render_synopsis_section(b));
        text += &section(&|b| m.render_options_section(b));
        if sub.get_after_help().is_some() || sub.get_after_long_help().is_some() {
            text += &section(&|b| m.render_extra_section(b));
        }
        // Within a command: its sections as bold paragraph headings.
        for line in text.lines() {
            match line.strip_prefix(".SH ") {
                Some("DESCRIPTION") => {}
                Some("EXTRA") => page += ".PP\n\\fBNotes\\fR\n.br\n",
                Some(h) => {
                    let h = h.trim_matches('"').to_lowercase();
                    page += &format!(".PP\n\\fB{}{}\\fR\n.br\n", h[..1].to_uppercase(), &h[1..]);
                }
                None => page += &format!("{line}\n"),
            }
        }
    }
    page += ".SH \"EXIT STATUS\"\n";
    let codes = crate::args::EXIT_STATUS.trim_start_matches("Exit status: ").trim_end_matches('.');
    for item in codes.split("; ") {
        let (code, what) = item.split_once(' ').unwrap_or((item, ""));
        page += &format!(".TP\n\\fB{code}\\fR\n{}\n", what.replace('-', "\\-"));
    }
    page += &section(&|b| top.render_version_section(b));
    page
}

/// One command's man page (roff).
fn man_page(cmd: &clap::Command) -> Vec<u8> {
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut page).expect("writing to a Vec");
    page
}

/// One line per built-in machine: its name and description.
pub(crate) fn list_machines() -> Result<String, String> {
    let mut s = String::new();
    let width = builtin_names().iter().map(|n| n.len()).max().unwrap_or(0);
    for name in builtin_names() {
        let m = builtin(name)?;
        s += &format!("{name:<width$} {}\n", m.description);
    }
    Ok(s)
}

/// A machine resolved, as `blksim machines NAME` shows it.
fn describe(m: &Machine) -> String {
    let mut s = format!("{}: {}\n", m.name, m.description);
    s += &describe_platform(m);
    for d in &m.devices {
        s += &d.describe(m);
    }
    s += "costs (ns, range, source):\n";
    for (k, c) in &m.costs.table {
        s += &format!("  {:<24} {:>6}  [{}..{}]  {}\n", k, c.ns, c.min, c.max, c.note);
    }
    s
}

/// The CPU, IOMMU and root-port lines of [`describe`].
fn describe_platform(m: &Machine) -> String {
    let t = &m.topology;
    let mut s = format!(
        "cpu: {} socket(s) x {} cores x {} threads = {} CPUs; {} NUMA node(s)/socket; {} LLC(s)/socket; SMT throughput {}\n",
        t.sockets, t.cores_per_socket, t.threads_per_core, t.cpu_count(), t.numa_nodes_per_socket, t.llc_per_socket, t.smt_throughput
    );
    for u in &m.iommus {
        let ports: Vec<&str> = u.root_ports.iter().map(|&p| m.root_ports[p].name.as_str()).collect();
        s += &format!(
            "iommu {}: socket {}, root ports {}, posting capable: {}, remap_service_ns {}, post_service_ns {}, IEC {} entries, iec_miss_ns {}\n",
            u.name, u.socket, ports.join(" "), u.posting_capable, u.remap_service_ns, u.post_service_ns, u.iec_entries, u.iec_miss_ns
        );
    }
    for r in &m.root_ports {
        s += &format!("root port {}: socket {}, msi_service_ns {}\n", r.name, r.socket, r.msi_service_ns);
    }
    for w in &m.pcie_switches {
        s += &format!(
            "pcie switch {}: on {}, upstream {} MB/s per direction\n",
            w.name, m.root_ports[w.root_port].name, w.upstream_mb_per_s
        );
    }
    s += &format!("interrupt delivery: service_ns {} per message, per socket\n", m.interrupt_delivery.service_ns);
    if let Some(ser) = &m.msi_serialisation {
        s += &format!(
            "msi serialisation: service_ns {} per MSI-X write, every root port's, both kinds\n",
            ser.service_ns
        );
    }
    s
}

/// fio's `--readonly` (`fixup_options`): a job that writes or trims is an error, said at its `rw`
/// (or its section). A replayed log's writes and trims were skipped as the log was read
/// (`ParseContext::read_only`, as fio's readers skip them).
fn readonly_check(jobs: &blksim_fio::job::JobFile) -> Result<(), Failure> {
    for j in &jobs.jobs {
        let c = &j.config;
        let (file, line) = j.option_lines.get("rw").cloned().unwrap_or((j.file.clone(), j.line));
        if c.rw.writes() || c.rw_has_trim() {
            return Err(Failure::from(format!(
                "{}:{line}: job '{}': --readonly with a job that writes or trims (fio: trim and write operations are \
                 not allowed with the --readonly parameter)",
                file.display(),
                c.name
            )));
        }
    }
    Ok(())
}
