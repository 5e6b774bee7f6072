//! fio job files: parsed natively with fio's semantics into resolved jobs.
//!
//! `ini` reads sections, comments and includes; `subst` does fio's
//! substitutions; `value` reads values; `options` is the table of every fio
//! option with blksim's decision (modelled, no-op, rejected); `engine` sorts
//! ioengines; `settings` holds a job's values; `resolve` builds the jobs.

mod blktrace;
mod checks;
mod cmdline;
mod engine;
mod ini;
mod iolog;
mod logs;
mod options;
mod resolve;
mod settings;
mod subst;
#[cfg(test)]
mod tests;
mod value;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use blksim::workload::JobConfig;

use crate::InputError;

pub use cmdline::{command_line_option, status_interval_ns, unknown_command_line_option, CommandLineJob, COMMAND_LINE};
pub use logs::{LogOptions, LogWindowValue};
pub use resolve::option_line_of;
pub use settings::OptionLines;

/// What the parser needs to know of the simulated system (`$ncpus`, ...) and the environment (`${VAR}`).
#[derive(Clone, Debug)]
pub struct ParseContext {
    pub ncpus: u32,
    pub mb_memory: u64,
    pub pagesize: u64,
    /// Environment variables for `${VAR}` substitution.
    pub env: BTreeMap<String, String>,
    /// The CPUs of each NUMA node, by node number (`numa_cpu_nodes`); empty: one node holding every CPU.
    pub numa_nodes: Vec<Vec<u32>>,
    /// fio's `--section`: only the job sections of these names are read (`[global]` always); empty: all.
    pub sections: Vec<String>,
    /// fio's `--readonly`: a replayed log's writes and trims are skipped as fio's readers skip them.
    pub read_only: bool,
    /// The machine's block devices and their sizes in bytes, by name (`nvme0n1`): a `size`,
    /// `offset` or `offset_increment` given as a percentage is of its file's device.
    pub device_bytes: BTreeMap<String, u64>,
}

impl ParseContext {
    /// The context of a simulated machine: its CPUs and NUMA nodes, its
    /// block devices' sizes, 256 GiB of memory (`$mb_memory`), 4 KiB pages,
    /// and `env` for `${VAR}`.
    pub fn for_machine(machine: &blksim::machine::Machine, env: BTreeMap<String, String>) -> ParseContext {
        let topology = &machine.topology;
        let mut numa_nodes = vec![Vec::new(); topology.node_count() as usize];
        for (cpu, place) in topology.cpus.iter().enumerate() {
            numa_nodes[place.node as usize].push(cpu as u32);
        }
        let device_bytes =
            machine.devices.iter().filter(|d| d.is_block()).map(|d| (d.name.clone(), d.capacity_bytes())).collect();
        ParseContext {
            ncpus: topology.cpu_count(),
            mb_memory: 256 * 1024,
            pagesize: 4096,
            env,
            numa_nodes,
            sections: Vec::new(),
            read_only: false,
            device_bytes,
        }
    }

    /// The size of the device behind `file` (`/dev/nvme0n1`, or its generic char device `/dev/ng0n1`).
    pub(crate) fn file_bytes(&self, file: &str) -> Option<u64> {
        let name = file.strip_prefix("/dev/").unwrap_or(file);
        let named = |n: &str| self.device_bytes.get(n).copied();
        named(name).or_else(|| named(&format!("nvme{}", name.strip_prefix("ng")?)))
    }
}

/// One or more job files, parsed.
#[derive(Clone, Debug, Default)]
pub struct JobFile {
    /// Options set in `[global]` sections, as written (name, value; value empty for a bare flag), in file order.
    /// As in fio's JSON `global options`: fio's name for the option (aliases resolved), the value after
    /// `${VAR}`/keyword substitution, and only the last job file's globals (fio resets them per file).
    pub global_options: Vec<(String, String)>,
    /// Every job, clones of `numjobs` included, in fio's order.
    pub jobs: Vec<ParsedJob>,
    /// Options accepted with no effect on the simulated run that would change a real run's output:
    /// each option once (the first place it is written), to be said on stderr.
    pub warnings: Vec<OptionWarning>,
}

/// An option blksim accepts and ignores although a real fio run's output would show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionWarning {
    /// fio's name of the option.
    pub option: String,
    pub file: PathBuf,
    pub line: usize,
    /// What it does in fio that blksim does not (or what it did).
    pub why: std::borrow::Cow<'static, str>,
    /// The option is ignored (else it runs, and `why` says how it differs).
    pub ignored: bool,
}

impl std::fmt::Display for OptionWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.line > 0 {
            format!("{}:{}", self.file.display(), self.line)
        } else {
            self.file.display().to_string()
        };
        let ignored = if self.ignored { "; ignored (see blksim options)" } else { "" };
        write!(f, "{at}: option '{}' {}{ignored}", self.option, self.why)
    }
}

/// One job: its resolved configuration and where it came from.
#[derive(Clone, Debug)]
pub struct ParsedJob {
    pub config: JobConfig,
    /// Options set in the job's own section, as written (for fio's JSON `job options`): fio's name
    /// for the option, the value after substitution (empty for a bare flag), included files' options in place.
    pub options: Vec<(String, String)>,
    pub file: PathBuf,
    /// Line of the section header.
    pub line: usize,
    /// Where each option in effect was written (fio's name → file, line), `[global]`'s included: to say
    /// a problem found later (by the model) at its option's line ([`option_line_of`]).
    pub option_lines: OptionLines,
    /// The log files it writes (`write_lat_log`, ...).
    pub logs: LogOptions,
}

/// Parse job files (several files: the template resets per file and later files start with a stonewall).
pub fn parse_job_files(paths: &[PathBuf], ctx: &ParseContext) -> Result<JobFile, InputError> {
    let sources: Vec<JobSource> = paths.iter().cloned().map(JobSource::File).collect();
    parse_job_sources(&sources, ctx)
}

/// Where the text of a job file comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobSource {
    /// A file, read by the parser.
    File(PathBuf),
    /// Text read by the caller (a job file on stdin, fio's command-line job form): `name` stands for the
    /// file in messages, and `include`s resolve from the working directory.
    Text { name: PathBuf, text: String },
}

/// Parse job files given as [`JobSource`]s, as [`parse_job_files`] does.
pub fn parse_job_sources(sources: &[JobSource], ctx: &ParseContext) -> Result<JobFile, InputError> {
    let Some(first) = sources.first() else {
        return Err(ini::error(&PathBuf::from("-"), 0, "no job file given"));
    };
    let mut builder = resolve::Builder::new(ctx);
    for source in sources {
        match source {
            JobSource::File(path) => {
                // fio reads bytes; a stray non-UTF-8 byte should not make the file unreadable.
                let bytes = ini::read_bounded(path, path, 0, "job file")?;
                builder.add_file(&String::from_utf8_lossy(&bytes), path)?;
            }
            JobSource::Text { name, text } => builder.add_file(text, name)?,
        }
    }
    builder.finish(match first {
        JobSource::File(path) => path,
        JobSource::Text { name, .. } => name,
    })
}

/// Parse one job file's text; `file` names it in errors and resolves `include`.
pub fn parse_job_text(text: &str, file: &Path, ctx: &ParseContext) -> Result<JobFile, InputError> {
    let mut builder = resolve::Builder::new(ctx);
    builder.add_file(text, file)?;
    builder.finish(file)
}

/// What blksim does with a fio option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionStatus {
    /// Mapped into `JobConfig`.
    Modelled,
    /// Accepted and ignored; the reason says why it does not change a simulated run.
    NoOp(&'static str),
    /// Accepted and ignored although it would change a real run's output (its report or the files it
    /// writes); the reason says what blksim leaves out, and a run warns once on stderr.
    Warned(&'static str),
    /// Rejected with this reason (some options are accepted at their default value).
    Rejected(&'static str),
    /// Deprecated: fio itself rejects it.
    Deprecated,
}

/// What a modelled option is limited to, where it is limited (`blksim options` shows it).
pub fn modelled_note(name: &str) -> Option<&'static str> {
    const NOTES: &[(&str, &str)] = &[
        ("direct", "direct=1 for block devices (buffered I/O is refused: no page cache is modelled); left unset for io_uring_cmd on /dev/ngXnY, whose char device fio cannot open with O_DIRECT"),
        ("directory", "as a prefix of filename= (directory=/dev, filename=nvme0n1); the files fio makes in a directory are not simulated"),
        ("file_service_type", "roundrobin (the default), sequential and random, with :N I/Os to a file before the next is picked, as fio's __get_next_file serves a job's several files (random draws fio's next_file_state); zipf, pareto, normal and gauss[:VALUE[:CENTER]] draw each I/O's file from fio's unhashed next_file_zipf / next_file_gauss, and a file that runs out starts over (fio_file_reset) instead of being done"),
        ("filename", "the machine's block devices (/dev/NAME), NVMe generic char devices (/dev/ngXnY) for io_uring_cmd; several (a:b) are served round robin as fio's get_next_file serves them, size= in bytes shared among them (fio's io_size per file), a file done when its offsets run out, opened at its first I/O"),
        ("size", "in bytes, or a percentage of the file's device (fio's size_percent: aligned down to the smallest block size, at most what lies past the offset); a number of zones is refused"),
        ("offset", "in bytes, or a percentage of the file's device (aligned up to the smallest block size, as fio's get_start_offset does); a number of zones is refused"),
        ("offset_increment", "in bytes or a percentage of the file's device: each clone's offset grows by it (fio's subjob number times it); a number of zones is refused"),
        ("io_size", "in bytes; a percentage or a number of zones is refused"),
        ("startdelay", "one time; a range (a random delay) is refused"),
        ("random_distribution", "random, zipf, pareto, normal, zoned, zoned_abs; sequence is refused"),
        ("cmd_type", "nvme; bsg is refused"),
        ("randseed", "seeds the job's offsets, block sizes, read/write mix, random distributions, cmdprio draws and Poisson rate gaps as fio 3.42 seeds them (setup_random_seeds: from randseed and the job's number); the devices and the kernel draw from --seed"),
        ("zonemode", "none and strided (fio's setup_strided_zone_mode: zonesize bytes in each zone of zonerange, then zonerange plus zoneskip further, back to the start past the file's end; with several files each file's zone moves on its own, the zone bytes the job's); zbd is refused (no zoned devices)"),
        ("zonesize", "with zonemode=strided, which needs it; with zonemode=none refused as fio refuses it"),
        ("zonerange", "with zonemode=strided (zonesize when 0); random offsets and the random map span one zone's range"),
        ("zoneskip", "with zonemode=strided, in bytes; a percentage or a number of zones (zbd's) is refused"),
        ("filesize", "the null engine's file (one size; the job's region is what lies past its offset); refused with other engines, which run on block devices"),
        ("merge_blktrace_file", "the blktraces of read_iolog's :-list merged into this file (written), which every clone replays, as fio's documentation describes (fio 3.42's own merge fails on a misread and replays the list unmerged); the merged file's times are what merge_blktrace_scalars and merge_blktrace_iters make them"),
        ("merge_blktrace_scalars", "with merge_blktrace_file, a percentage per read_iolog trace that its times are scaled by, as a whole number, the list ending at a 0 (fio's init_merge_param_list); without it ignored with a warning, as fio ignores it"),
        ("merge_blktrace_iters", "with merge_blktrace_file, how many times each read_iolog trace is played, as a whole number, the list ending at a 0; without it ignored with a warning, as fio ignores it"),
        ("num_range", "with io_uring_cmd trims: each trim draws that many offsets, one Dataset Management command of that many ranges (fio's fill_multi_range_io_u); with trimwrite and other engines' trims refused as fio refuses them, 0 refused for io_uring_cmd trims; no effect on reads and writes"),
        ("rw", "reads, writes and their mixes, with :N; the trim forms (trim, randtrim, trimwrite, randtrimwrite) on ioengine=null, and on NVMe drives with psync, sync or pvsync2 (fio's BLKDISCARD), libaio or posixaio (BLKDISCARD from their queue hook, one at a time) or io_uring (its BLOCK_URING_CMD_DISCARD; from its queue hook once one failed, as on an IOPOLL ring), as NVMe Dataset Management, and with io_uring_cmd as fio's Dataset Management passthrough command; io_uring_cmd with fixedbufs fails each with EFAULT as the kernel does (fio marks its range list as in the registered buffer), queue-hook trims under io_submit_mode=offload are refused; a device without discards (SCSI disks, null_blk) fails them with EOPNOTSUPP as Linux does"),
        ("read_iolog", "fio's iolog versions 2 and 3 and blktrace binaries (with replay_redirect), one log per clone with a :-list (merged into one with merge_blktrace_file, as fio's documentation describes: its scalars and iters); a log's trims run where rw's trims run, its syncs and blktrace flushes are fsyncs (where the engine and drive take them); version 2 waits and stdin are refused"),
        ("verify", "the read-back I/O fio issues (do_verify after each loop's writes, verify_backlog) and the checksum's CPU per byte (fio --crctest); no data is simulated, so every check passes"),
        ("verify_async", "fio's verify threads: a verifying read's check moves off the job's thread, its io_u held until checked (the job waits on free_cond when none is free); the threads inherit the job's affinity"),
        ("verify_async_cpus", "as fio 3.42 applies it: the verify threads set it as the affinity of the job's own thread (fio_setaffinity(td->pid)), not their own"),
        ("verify_state_save", "fio 3.42's local-NAME-N-verify.state (writes issued, none in flight at the job's end, the offset generator's state as fio saves it)"),
        ("verify_state_load", "reads local-NAME-N-verify.state from the working directory before the run; verification stops where the saved job's writes stopped, as fio's verify_state_should_stop"),
        ("io_submit_mode", "offload as fio's rate-submit.c: iodepth submit workers at iodepth 1; with thinktime, flow, verify, read_iolog, per-I/O logs, posixaio or sqthread_poll it is refused"),
        ("serialize_overlap", "with io_submit_mode=offload (check_overlap across the serializing jobs); without offload it is refused"),
        ("flow", "as fio's flow.c: a held job spins in fio's loop, or with flow_sleep quiesces and usleep()s"),
        ("random_generator", "fio's tausworthe, tausworthe64 and lfsr, seeded and drawn as fio draws them (tausworthe64 also where fio switches to it: a file of more than 2^32 blocks and no generator named)"),
        ("randrepeat", "each of a job's loops draws the first loop's offsets, sizes and directions again (fio's clear_io_state), or with 0 goes on, as with randseed given (which overrides it, as fio's fixup_options does); seeded from randseed (0x89 by default), or with 0 and no randseed from --seed where fio takes the system's random numbers"),
        ("cmdprio_percentage", "libaio and io_uring, drawn per io_u as fio's cmdprio.c (from its prio_state, seeded as fio seeds it); with io_uring_cmd refused (a passthrough command's priority is not modelled); the kernel's mq-deadline dispatches by class, none and kyber and the devices ignore it"),
        ("cmdprio_bssplit", "as cmdprio_percentage, per block size: bs/perc[/class/level[/hint]]"),
        ("cmdprio_class", "with cmdprio_percentage or cmdprio_bssplit (RT by default)"),
        ("cmdprio", "with cmdprio_percentage or cmdprio_bssplit"),
        ("cmdprio_hint", "with cmdprio_percentage or cmdprio_bssplit; reported, no modelled device uses hints"),
        ("prioclass", "the job's I/O priority (fio's ioprio_set): mq-deadline dispatches by class, none and kyber and the devices ignore it"),
        ("prio", "the job's I/O priority level, with prioclass (best effort without it)"),
        ("priohint", "the job's I/O priority hint: reported, no modelled device uses hints"),
    ];
    NOTES.iter().find(|(n, _)| *n == name).map(|(_, note)| *note)
}

/// blksim's decision on option `name` (a name or alias, case-sensitive):
/// a general fio option, or else an option of `ioengine` when that is an
/// engine blksim simulates. `None`: fio does not know the option ("Bad option").
pub fn option_status(name: &str, ioengine: Option<&str>) -> Option<OptionStatus> {
    let table = ioengine.and_then(|e| engine::classify(e).ok()).map(|e| e.option_table().specs()).unwrap_or(&[]);
    let spec = options::find(options::GENERAL, name).or_else(|| options::find(table, name))?;
    Some(match (spec.kind, spec.decision) {
        (options::Kind::Deprecated, _) => OptionStatus::Deprecated,
        (_, options::Decision::Model(_)) => OptionStatus::Modelled,
        (_, options::Decision::NoOp(why)) if options::changes_real_output(why) => OptionStatus::Warned(why),
        (_, options::Decision::NoOp(why)) => OptionStatus::NoOp(why),
        (_, options::Decision::Reject { why, .. }) => OptionStatus::Rejected(why),
    })
}

/// One row of `blksim options`: an option (and its alias), the table it is in (`general`, or the
/// ioengines whose option it is), its value's syntax and blksim's decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionRow {
    pub name: &'static str,
    pub alias: Option<&'static str>,
    /// `general`, or the engines (`io_uring,io_uring_cmd`, `libaio`, `pvsync2`).
    pub table: &'static str,
    /// The value's syntax, as fio's option types (`bool`, `int`, `str`, ...).
    pub syntax: String,
    pub status: OptionStatus,
    /// Values accepted although the option is rejected otherwise (those that leave fio's default).
    pub accepted_values: &'static [&'static str],
}

/// Every fio option blksim knows, with its decision: the general table in fio's order, then each
/// simulated ioengine's own options.
pub fn option_table() -> Vec<OptionRow> {
    let tables: [(&'static str, &'static [options::OptSpec]); 4] = [
        ("general", options::GENERAL),
        ("io_uring,io_uring_cmd", options::IO_URING),
        ("libaio", options::LIBAIO),
        ("pvsync2", options::PVSYNC2),
    ];
    let mut rows = Vec::new();
    for (table, specs) in tables {
        for o in specs {
            let status = match (o.kind, o.decision) {
                (options::Kind::Deprecated, _) => OptionStatus::Deprecated,
                (_, options::Decision::Model(_)) => OptionStatus::Modelled,
                (_, options::Decision::NoOp(why)) if options::changes_real_output(why) => OptionStatus::Warned(why),
                (_, options::Decision::NoOp(why)) => OptionStatus::NoOp(why),
                (_, options::Decision::Reject { why, .. }) => OptionStatus::Rejected(why),
            };
            let accepted_values = match o.decision {
                options::Decision::Reject { unless, .. } => unless,
                _ => &[],
            };
            rows.push(OptionRow {
                name: o.name,
                alias: o.alias,
                table,
                syntax: options::syntax(o.kind),
                status,
                accepted_values,
            });
        }
    }
    rows
}
