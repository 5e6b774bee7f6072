//! The command line, declared once with clap (derive): every command and
//! option with its help text, from which `--help`, the completions
//! (`blksim completions SHELL`) and the man page (`blksim man`) are made.
//! Values that need the model to read them (`--at`, `--trace-window`, the
//! front ends' options) are taken as text here and read by the commands,
//! so their messages are the model's own.

use clap::{Args, Parser, Subcommand, ValueEnum};

/// The exit statuses, for `--help` and the man page.
pub const EXIT_STATUS: &str = "Exit status: 0 done (also when the reader of stdout went away, as with `| head`); \
1 a job ended on an I/O error, a run was stopped at its wall budget (after the report so far), the output \
could not be written (a full disk, stdout closed with `>&-`), or `reproduce --check` found a cell out of \
tolerance; \
2 bad input (one message naming the file, line and what was expected); \
70 a failure of blksim itself (the simulation stalled, an invariant broke, a bug); \
130 interrupted by SIGINT (Ctrl-C), SIGTERM or SIGHUP: `run`, `t-io_uring` and `dsa-memfill` print the report \
so far first, `sweep` keeps the rows done, and a second signal ends blksim at once. \
SIGUSR1 has `run` print the report so far, as fio does, and go on.";

/// blksim: the Linux host storage I/O path (fio → io_uring/libaio → blk-mq → NVMe → MSI/IOMMU → CPU
/// contexts), simulated event by event in virtual time.
#[derive(Debug, Parser)]
#[command(name = "blksim", version, after_help = EXIT_STATUS, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// Made once per process: the size of a variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Simulate fio jobs: job files, `-` for a job file on stdin, or fio's command-line job form
    /// (`--name=a --rw=randread --filename=/dev/nvme0n1 ...`)
    #[command(after_help = RUN_AFTER_HELP)]
    Run(RunArgs),
    /// List the built-in machine profiles, or show one (or a profile file) resolved
    Machines(MachinesArgs),
    /// fio's t/io_uring benchmark on the simulated machine (its options, its output lines)
    #[command(name = "t-io_uring")]
    TIoUring(TIoUringArgs),
    /// Drive the machine's DSA devices with a kernel memfill client
    DsaMemfill(DsaArgs),
    /// Run calibration experiments: published against simulated, per cell, then a summary
    Reproduce(ReproduceArgs),
    /// Fit profile costs within their ranges to experiments; write an `extends` overlay profile
    Fit(FitArgs),
    /// Run a cartesian sweep (SPEC.toml) over job options, kernel knobs, patches and profile fields on all
    /// cores: one CSV row per point, resumable
    #[command(after_help = SWEEP_AFTER_HELP)]
    Sweep(SweepArgs),
    /// List every fio option blksim knows: modelled, no effect on a simulated run (warned about when a
    /// real run's output would show it), or rejected, with why (like `fio --cmdhelp`)
    Options(OptionsArgs),
    /// Print a shell completion script (e.g. `blksim completions bash > /etc/bash_completion.d/blksim`)
    Completions(CompletionsArgs),
    /// Print blksim's man page (roff), or write one page per command into a directory
    Man(ManArgs),
    /// Print the version (as `--version`)
    #[command(hide = true)]
    Version,
}

const RUN_AFTER_HELP: &str = "fio's command-line job form: options before the first --name are global, each \
--name=NAME starts a job; --opt=VALUE or --opt VALUE (bare flags such as --time_based only with =). \
Example: blksim run --name=a --ioengine=io_uring --rw=randread --direct=1 --filename=/dev/nvme0n1 \
--runtime=10ms --time_based";

const SWEEP_AFTER_HELP: &str = "SPEC.toml: job = \"job.fio\", machine = \"spr-gen5\" (or a profile file), seed = 1, \
cmdline = \"...\" (for every point), and [axes]: a fio option (iodepth = [1, 8, 32], set in every job section), \
cmdline = [\"\", \"intremap=posted_msi\"], a sysfs/procfs path (\"/sys/block/nvme0n1/queue/rq_affinity\" = [0, 1, 2]), \
patch = [\"\", \"mq-deadline-2024\"], or a profile field (\"profile.cpu.cores_per_socket\" = [8, 16]). Columns: point, the \
axes, iops, bw_bytes, clat mean/p50/p99/p99.9 (us), job usr/sys %, CPU busy/sys/irq %, interrupts, notifications and \
IPIs per second, error. A rerun skips the points the CSV already has. When all points are done the table is also \
written as Parquet beside the CSV (SPEC.parquet), and --plot draws --metric against the first axis.";

/// `blksim options`.
#[derive(Args, Debug)]
pub struct OptionsArgs {
    /// Show this option only (a name or an alias)
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
    /// Show only the options with this status
    #[arg(long, value_enum)]
    pub status: Option<OptionsStatus>,
}

/// `blksim options --status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OptionsStatus {
    /// Options that change the simulated run
    Modelled,
    /// Options accepted with no effect on a simulated run
    NoEffect,
    /// Options with no effect here that a real run's output would show: a run warns once about each
    Warns,
    /// Options refused (some at their default value accepted), and deprecated ones
    Rejected,
}

/// `blksim sweep`.
#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The sweep's spec file
    #[arg(value_name = "SPEC.toml")]
    pub spec: String,
    /// The CSV to write (and to resume from) [default: SPEC.csv beside the spec]
    #[arg(long, value_name = "FILE")]
    pub output: Option<String>,
    /// Worker threads [default: the machine's cores]; results do not depend on it
    #[arg(long, short = 'j', value_name = "N", value_parser = positive)]
    pub jobs: Option<usize>,
    /// Draw --metric against the first axis, one line per value of the other axes, as an SVG [default
    /// file: the CSV's name with .svg]
    #[arg(long, value_name = "FILE.svg", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub plot: Option<String>,
    /// The metric --plot draws: a metric column of the CSV (iops, bw_bytes, clat_p99_us, ...)
    #[arg(long, value_name = "NAME", default_value = "iops")]
    pub metric: String,
    #[command(flatten)]
    pub budget: BudgetArgs,
}

/// The machine, its kernel knobs and the seed (`run`, `t-io_uring`, `dsa-memfill`).
#[derive(Args, Clone, Debug, Default)]
pub struct MachineArgs {
    /// The machine: a built-in profile (`blksim machines` lists them) or a TOML profile file
    #[arg(long, value_name = "NAME|FILE")]
    pub machine: Option<String>,
    /// Kernel command line and module parameters by their real names, e.g. "intremap=posted_msi
    /// nvme.poll_queues=4" (repeatable)
    #[arg(long, value_name = "PARAMS")]
    pub cmdline: Vec<String>,
    /// A sysfs or procfs write before the run, e.g. /sys/block/nvme0n1/queue/rq_affinity=2 (repeatable)
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
    /// Seed of the run's random streams: same inputs and seed, same output
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
}

/// `--at`: writes at points of virtual time.
#[derive(Args, Clone, Debug, Default)]
pub struct AtArgs {
    /// A write at a point of virtual time, e.g. 5ms:/proc/irq/130/smp_affinity_list=3 or
    /// 8ms:/sys/devices/system/cpu/cpu3/online=0 (repeatable)
    #[arg(long = "at", value_name = "TIME:PATH=VALUE")]
    pub at: Vec<String>,
}

/// The wall-time budget of a simulation (`run`, `t-io_uring`, `dsa-memfill`; each point of `sweep`,
/// each case of `reproduce` and `fit`).
#[derive(Args, Clone, Debug)]
pub struct BudgetArgs {
    /// Run even when the estimated wall time is over --wall-budget
    #[arg(long)]
    pub yes: bool,
    /// Refuse (without --yes) a run estimated to take longer than this wall time, e.g. 10m, 2h
    #[arg(long, value_name = "TIME", default_value = "10m")]
    pub wall_budget: String,
}

impl Default for BudgetArgs {
    fn default() -> BudgetArgs {
        BudgetArgs { yes: false, wall_budget: "10m".into() }
    }
}

/// When to show progress (fio's `--eta`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Eta {
    /// When stderr is a terminal
    Auto,
    /// Always (plain lines every --eta-newline, 1s by default, when stderr is not a terminal)
    Always,
    /// Never
    Never,
}

/// Progress while simulating, with fio's options for it.
#[derive(Args, Clone, Debug)]
pub struct ProgressArgs {
    /// Progress on stderr: virtual time done, wall time, ETA
    #[arg(long, value_enum, default_value = "auto")]
    pub eta: Eta,
    /// Progress as a new line every TIME (e.g. 1s) instead of a bar
    #[arg(long, value_name = "TIME")]
    pub eta_newline: Option<String>,
    /// fio's full report of the run so far every TIME of virtual time (at least 1ms; seconds
    /// unless a unit is given), ahead of the final one
    #[arg(long, value_name = "TIME")]
    pub status_interval: Option<String>,
}

/// One of fio's output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
pub enum OutputFormat {
    /// fio's human-readable report
    Normal,
    /// fio's JSON, with blksim's `blksim` object
    Json,
    /// JSON with the latency histograms' bins
    #[value(name = "json+")]
    JsonPlus,
    /// fio's terse lines: one `;`-separated line per job (`--terse-version`)
    Terse,
}

/// The `--interrupts` table's view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum InterruptsView {
    /// Only the CPUs and rows with a non-zero count, and a line saying how many were left out
    Compact,
    /// Every CPU and every row, as /proc/interrupts has them
    Full,
}

impl InterruptsView {
    /// The table in this view.
    pub fn write(self, report: &blksim::stats::RunReport) -> String {
        match self {
            InterruptsView::Compact => blksim_fio::output::write_interrupts_compact(report),
            InterruptsView::Full => blksim_fio::output::write_interrupts(report),
        }
    }
}

/// What `blksim run` was asked to do.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// fio job files; `-` reads a job file from stdin
    #[arg(value_name = "JOB.fio")]
    pub job_files: Vec<String>,
    #[command(flatten)]
    pub knobs: MachineArgs,
    #[command(flatten)]
    pub at: AtArgs,
    #[command(flatten)]
    pub budget: BudgetArgs,
    #[command(flatten)]
    pub progress: ProgressArgs,
    /// An out-of-tree patch set by name: mq-deadline-2024, io-cpu-affinity-2008, dma-premap, hybrid-iopoll, gsim (repeatable)
    #[arg(long = "patch", value_name = "NAME")]
    pub patches: Vec<String>,
    /// Output formats, fio's comma-separated list: normal, json, json+, terse (e.g. json,normal)
    #[arg(long, value_name = "FORMAT[,FORMAT]", value_enum, value_delimiter = ',', default_value = "normal")]
    pub output_format: Vec<OutputFormat>,
    /// fio's --section: run only the job section NAME of the job files ([global] always applies; repeatable)
    #[arg(long = "section", value_name = "NAME")]
    pub sections: Vec<String>,
    /// fio's --minimal: the terse output alone (as --output-format=terse)
    #[arg(long)]
    pub minimal: bool,
    /// The terse output's version: 3 (fio's default), 2 (no version string or disk statistics), 4 (with trim) or 5 (with bandwidth samples and IOPS)
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = terse_version)]
    pub terse_version: u32,
    /// Write the report to FILE instead of stdout
    #[arg(long, value_name = "FILE")]
    pub output: Option<String>,
    /// After the report: a /proc/interrupts-shaped table of the run: only the CPUs and rows that
    /// counted something (the default), or =full for every CPU and row
    #[arg(long, value_name = "VIEW", value_enum, num_args = 0..=1, require_equals = true, default_missing_value = "compact")]
    pub interrupts: Option<InterruptsView>,
    /// After the report: `mpstat -P ALL`-shaped CPU time by context
    #[arg(long)]
    pub mpstat: bool,
    /// After the report: `iostat -x`-shaped device statistics
    #[arg(long)]
    pub iostat: bool,
    /// After the report: where an average I/O's time goes, and the CPU time per I/O by context and by stage of the I/O path
    #[arg(long)]
    pub breakdown: bool,
    /// fio's aggregate bandwidth logs: NAME-read_bw.log, NAME-write_bw.log, NAME-trim_bw.log (all
    /// jobs together, KiB/s, every 500 ms) [NAME default: agg]
    #[arg(long, value_name = "NAME", num_args = 0..=1, require_equals = true, default_missing_value = "agg")]
    pub bandwidth_log: Option<String>,
    /// Parse the jobs and check them against the machine, without simulating (as fio's --parse-only)
    #[arg(long)]
    pub parse_only: bool,
    /// Write the merged traces of the jobs with merge_blktrace_file, and run nothing (as fio's
    /// --merge-blktrace-only)
    #[arg(long)]
    pub merge_blktrace_only: bool,
    /// fio's guard: a job that writes or trims is refused, a replayed log's writes and trims skipped (as fio's --readonly)
    #[arg(long)]
    pub readonly: bool,
    /// fio's --max-jobs: accepted and ignored, as fio 3.42 ignores it ("we don't track/need this anymore")
    #[arg(long, value_name = "N")]
    pub max_jobs: Option<u32>,
    /// fio's --alloc-size (KiB of fio's shared memory pool): accepted with a warning; a simulated
    /// run has no fio memory pool to run out of
    #[arg(long, value_name = "KIB")]
    pub alloc_size: Option<u64>,
    /// fio's --warnings-fatal: a warning about the jobs (an option with no effect on a simulated
    /// run, say) is an error instead (exit 2)
    #[arg(long)]
    pub warnings_fatal: bool,
    /// Write a Chrome/Perfetto trace (JSON) of --trace-window to FILE
    #[arg(long, value_name = "FILE")]
    pub trace: Option<String>,
    /// The virtual time span of --trace, e.g. 100ms:100.2ms [default: 0:10ms]
    #[arg(long, value_name = "START:END", requires = "trace")]
    pub trace_window: Option<String>,
    /// fio's command-line job options, taken from the arguments before clap reads them.
    #[arg(skip)]
    pub fio_job: blksim_fio::job::CommandLineJob,
}

/// `blksim machines`.
#[derive(Args, Debug)]
pub struct MachinesArgs {
    /// A built-in profile or a TOML profile file to show resolved; without it, list the built-ins
    #[arg(value_name = "NAME|FILE")]
    pub machine: Option<String>,
}

/// `blksim t-io_uring`: t/io_uring's own options (short, as t/io_uring takes them: `-b512` or `-b 512`),
/// passed on to the front end in `blksim_lab::frontend`, which reads and checks them.
#[derive(Args, Debug)]
pub struct TIoUringArgs {
    #[command(flatten)]
    pub knobs: MachineArgs,
    #[command(flatten)]
    pub budget: BudgetArgs,
    #[command(flatten)]
    pub progress: ProgressArgs,
    /// An out-of-tree patch set by name: dma-premap (fixed buffers mapped once, at registration), hybrid-iopoll, gsim (repeatable)
    #[arg(long = "patch", value_name = "NAME")]
    pub patches: Vec<String>,
    /// After t/io_uring's lines: the CPU time per I/O by stage of the I/O path (user loop, syscall, io_uring, block layer, driver, doorbell, DMA map, polling, interrupts, softirq, wake-ups), all CPUs
    #[arg(long)]
    pub breakdown: bool,
    /// Block size in bytes [default: 4096]
    #[arg(short = 'b', value_name = "BS")]
    pub bs: Option<String>,
    /// Queue depth [default: 128]
    #[arg(short = 'd', value_name = "DEPTH")]
    pub depth: Option<String>,
    /// Completion batch: CQEs to wait for when the ring is full [default: 32]
    #[arg(short = 'c', value_name = "N")]
    pub complete: Option<String>,
    /// Submission batch [default: 32]
    #[arg(short = 's', value_name = "N")]
    pub submit: Option<String>,
    /// Polled I/O: IOPOLL, on poll queues when the device has them (nvme.poll_queues; null_blk has one), else completed by interrupt while the task polls (blksim.polled_unsupported) [default: 1]
    #[arg(short = 'p', value_name = "0|1")]
    pub polled: Option<String>,
    /// Registered files [default: 1]
    #[arg(short = 'F', value_name = "0|1")]
    pub fixed_files: Option<String>,
    /// Fixed (registered) buffers [default: 1]
    #[arg(short = 'B', value_name = "0|1")]
    pub fixed_bufs: Option<String>,
    /// Submitter threads, each with its own ring; devices assigned as t/io_uring does (threads share a device when there are more threads than devices) [default: 1]
    #[arg(short = 'n', value_name = "N")]
    pub threads: Option<String>,
    /// O_DIRECT (only 1 is modelled) [default: 1]
    #[arg(short = 'O', value_name = "0|1")]
    pub direct: Option<String>,
    /// Random I/O (0: sequential) [default: 1]
    #[arg(short = 'R', value_name = "0|1")]
    pub random: Option<String>,
    /// Registered ring fd (0: io_uring_enter takes fdget/fdput of the ring) [default: 1]
    #[arg(short = 'X', value_name = "0|1")]
    pub registered_ring: Option<String>,
    /// Latency tracking (only 0 is modelled) [default: 0]
    #[arg(short = 't', value_name = "0|1")]
    pub track_latency: Option<String>,
    /// Legacy aio instead of io_uring (only 0 is modelled)
    #[arg(short = 'a', value_name = "0|1")]
    pub aio: Option<String>,
    /// Sync I/O: one preadv2 per I/O (RWF_HIPRI with -p1, which Linux does not poll) instead of io_uring [default: 0]
    #[arg(short = 'S', value_name = "0|1")]
    pub sync: Option<String>,
    /// NVMe passthrough: IORING_OP_URING_CMD on the generic char devices /dev/ngXnY [default: 0]
    #[arg(short = 'u', value_name = "0|1")]
    pub passthrough: Option<String>,
    /// TSC rate in Hz (only scales latency tracking; no effect)
    #[arg(short = 'T', value_name = "HZ")]
    pub tsc_rate: Option<String>,
    /// Place each thread on its device's home node (only 0 is modelled)
    #[arg(short = 'P', value_name = "0|1")]
    pub numa_placement: Option<String>,
    /// Vectored reads, READV (no effect with fixed buffers) [default: 0]
    #[arg(short = 'V', value_name = "0|1")]
    pub vectored: Option<String>,
    /// Opcode restriction filter, set once at ring setup (no effect) [default: 0]
    #[arg(short = 'e', value_name = "0|1")]
    pub restriction: Option<String>,
    /// No-op requests (only 0 is modelled)
    #[arg(short = 'N', value_name = "0|1")]
    pub nop: Option<String>,
    /// hugetlbfs file for the buffers (not modelled)
    #[arg(short = 'H', value_name = "PATH")]
    pub hugetlb: Option<String>,
    /// Simulated runtime: seconds, or a time with a unit (20ms); 0, t/io_uring's "unlimited", is 10ms [default: 10ms]
    #[arg(short = 'r', value_name = "RUNTIME")]
    pub runtime: Option<String>,
    /// Allow the submitter threads only these CPUs, as `taskset -c CPUS t/io_uring ...` would (the scheduler spreads them over the list)
    #[arg(long, value_name = "CPUS")]
    pub taskset: Option<String>,
    /// Block devices of the machine, e.g. /dev/nvme0n1
    #[arg(value_name = "DEVICE", required = true)]
    pub devices: Vec<String>,
}

impl TIoUringArgs {
    /// t/io_uring's command line for the front end: the options given, then `--` and the devices.
    pub fn front_end_args(&self) -> Vec<String> {
        let options = [
            ("-b", &self.bs),
            ("-d", &self.depth),
            ("-c", &self.complete),
            ("-s", &self.submit),
            ("-p", &self.polled),
            ("-F", &self.fixed_files),
            ("-B", &self.fixed_bufs),
            ("-n", &self.threads),
            ("-O", &self.direct),
            ("-R", &self.random),
            ("-X", &self.registered_ring),
            ("-t", &self.track_latency),
            ("-a", &self.aio),
            ("-S", &self.sync),
            ("-u", &self.passthrough),
            ("-T", &self.tsc_rate),
            ("-P", &self.numa_placement),
            ("-V", &self.vectored),
            ("-e", &self.restriction),
            ("-N", &self.nop),
            ("-H", &self.hugetlb),
            ("-r", &self.runtime),
            ("--taskset", &self.taskset),
        ];
        let mut args = given(&options);
        args.push("--".to_string());
        args.extend(self.devices.iter().cloned());
        args
    }
}

/// `FLAG VALUE` for each option given.
fn given(options: &[(&str, &Option<String>)]) -> Vec<String> {
    options.iter().filter_map(|(f, v)| v.as_ref().map(|v| [f.to_string(), v.clone()])).flatten().collect()
}

/// The report's form of `dsa-memfill`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DsaFormat {
    Text,
    Json,
}

/// `blksim dsa-memfill`: the memfill client's options, passed on to the front end in
/// `blksim_lab::frontend`, which reads and checks them.
#[derive(Args, Debug)]
pub struct DsaArgs {
    #[command(flatten)]
    pub knobs: MachineArgs,
    #[command(flatten)]
    pub at: AtArgs,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// DSA devices to drive, comma-separated [default: every DSA device of the machine]
    #[arg(long, value_name = "DEV,...")]
    pub devices: Option<String>,
    /// Work queue of each device: a number, or `dedicated` (the first) [default: 0]
    #[arg(long, value_name = "N|dedicated")]
    pub wq: Option<String>,
    /// The operation (only memfill is modelled)
    #[arg(long, value_name = "OP")]
    pub op: Option<String>,
    /// Bytes per descriptor: 512, 4k, 1m [default: 4096]
    #[arg(long, value_name = "SIZE")]
    pub bytes: Option<String>,
    /// Descriptors kept in flight per client [default: 32]
    #[arg(long, value_name = "N")]
    pub outstanding: Option<String>,
    /// Pin the work queues' interrupts to this CPU
    #[arg(long, value_name = "CPU")]
    pub irq_cpu: Option<String>,
    /// Simulated runtime, e.g. 10ms [default: 10ms]
    #[arg(long, value_name = "TIME")]
    pub runtime: Option<String>,
    /// The report's form
    #[arg(long, value_enum, default_value = "text")]
    pub format: DsaFormat,
    /// After the report: a /proc/interrupts-shaped table of the run: only the CPUs and rows that
    /// counted something (the default), or =full for every CPU and row
    #[arg(long, value_name = "VIEW", value_enum, num_args = 0..=1, require_equals = true, default_missing_value = "compact")]
    pub interrupts: Option<InterruptsView>,
}

impl DsaArgs {
    /// The memfill client's command line for the front end.
    pub fn front_end_args(&self) -> Vec<String> {
        given(&[
            ("--devices", &self.devices),
            ("--wq", &self.wq),
            ("--op", &self.op),
            ("--bytes", &self.bytes),
            ("--outstanding", &self.outstanding),
            ("--irq-cpu", &self.irq_cpu),
            ("--runtime", &self.runtime),
        ])
    }
}

/// What `reproduce` and `fit` share: which experiments, threads and seed.
#[derive(Args, Clone, Debug, Default)]
pub struct LabArgs {
    /// Experiments: names in the experiments directory, or experiment files
    #[arg(value_name = "NAME|FILE.toml")]
    pub names: Vec<String>,
    /// Every experiment of the experiments directory
    #[arg(long)]
    pub all: bool,
    /// The experiments directory [default: ./experiments, else the source tree's]
    #[arg(long, value_name = "DIR")]
    pub dir: Option<String>,
    /// Worker threads [default: the machine's cores]; results do not depend on it
    #[arg(long, short = 'j', value_name = "N", value_parser = positive)]
    pub jobs: Option<usize>,
    /// One seed for every run [default: each experiment's own]
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub budget: BudgetArgs,
}

/// A terse version fio writes (`--terse-version`: 2 to 5).
fn terse_version(v: &str) -> Result<u32, String> {
    let versions = blksim_fio::output::TERSE_VERSIONS;
    v.parse().ok().filter(|n| versions.contains(n)).ok_or_else(|| format!("expected one of {versions:?}"))
}

/// A count above zero.
fn positive(v: &str) -> Result<usize, String> {
    v.parse().ok().filter(|&n| n > 0).ok_or_else(|| "expected a positive integer".to_string())
}

/// The form of `reproduce`'s comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReproduceFormat {
    Table,
    Json,
}

/// `blksim reproduce`.
#[derive(Args, Debug)]
pub struct ReproduceArgs {
    #[command(flatten)]
    pub lab: LabArgs,
    /// The comparison's form
    #[arg(long, value_enum, default_value = "table")]
    pub format: ReproduceFormat,
    /// Write one SVG figure per experiment into DIR
    #[arg(long = "plot", value_name = "DIR")]
    pub plot_dir: Option<String>,
    /// Use this overlay profile (`extends = ...`) in place of the machine it extends
    #[arg(long, value_name = "FILE")]
    pub profile: Option<String>,
    /// Exit 1 when a cell that is neither pending nor a known gap is out of tolerance
    #[arg(long)]
    pub check: bool,
}

/// `blksim fit`.
#[derive(Args, Debug)]
#[command(after_help = "COST: a [costs] name (syscall_ns), or a cost of another table (iommu.remap_service_ns, \
root_port.msi_service_ns: every root port alike). Each moves within its profile range min..max, minimising the mean \
squared relative error of the cells with a simulated value (known gaps only with --include-gaps).")]
pub struct FitArgs {
    #[command(flatten)]
    pub lab: LabArgs,
    /// Costs to fit, comma-separated or repeated
    #[arg(long = "param", value_name = "COST", value_delimiter = ',', required = true)]
    pub params: Vec<String>,
    /// The base machine [default: the experiments' one machine]
    #[arg(long, value_name = "NAME|FILE")]
    pub machine: Option<String>,
    /// Where to write the overlay profile [default: NAME-fit.toml beside a profile file, else here]
    #[arg(long, value_name = "FILE")]
    pub output: Option<String>,
    /// Nelder-Mead iterations
    #[arg(long, value_name = "N", default_value_t = 40, value_parser = clap::value_parser!(u64).range(1..))]
    pub iterations: u64,
    /// Fit known-gap cells too
    #[arg(long)]
    pub include_gaps: bool,
}

/// `blksim completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `blksim man`.
#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write blksim.1 and one page per command (blksim-run.1, ...) into DIR instead of printing blksim.1
    #[arg(long, value_name = "DIR")]
    pub dir: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent_and_every_option_has_help() {
        Cli::command().debug_assert();
        for sub in Cli::command().get_subcommands().filter(|s| !s.is_hide_set()) {
            assert!(sub.get_about().is_some(), "{} has no help", sub.get_name());
            for arg in sub.get_arguments().filter(|a| !a.is_hide_set()) {
                assert!(arg.get_help().is_some(), "{} {} has no help", sub.get_name(), arg.get_id());
            }
        }
    }

    #[test]
    fn output_format_takes_fios_comma_list() {
        let cli = Cli::try_parse_from(["blksim", "run", "j.fio", "--output-format=json,normal"]).unwrap();
        let Command::Run(r) = cli.command else { panic!() };
        assert_eq!(r.output_format, [OutputFormat::Json, OutputFormat::Normal]);
        assert!(Cli::try_parse_from(["blksim", "run", "j.fio", "--output-format=json,xml"]).is_err());
    }

    #[test]
    fn t_io_uring_takes_short_options_with_attached_values() {
        let cli =
            Cli::try_parse_from(["blksim", "t-io_uring", "-b512", "-d", "64", "-p0", "-r", "2ms", "--", "/dev/x"])
                .unwrap();
        let Command::TIoUring(t) = cli.command else { panic!() };
        assert_eq!(t.front_end_args(), ["-b", "512", "-d", "64", "-p", "0", "-r", "2ms", "--", "/dev/x"]);
    }
}
