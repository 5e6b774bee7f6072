//! fio's command-line job form: `fio --name=a --rw=randread --bs=4k ...`.
//! Options before the first `--name` are global; each `--name=X` starts a
//! job. Like fio's getopt: `--opt=VALUE`, or `--opt VALUE` for every option
//! but the bare flags (`--time_based`, `--group_reporting`), which take a
//! value only with `=`. The options become a job file, one per line, so that
//! the parser's messages can name the argument they are about.

use std::path::{Path, PathBuf};

use super::options::{find, Kind, GENERAL, IO_URING, LIBAIO, PVSYNC2};
use super::JobSource;
use crate::InputError;

/// fio's `--status-interval=TIME` (`init.c`): a time in seconds unless it names its unit
/// (`check_str_time`), at least 1 ms, kept in whole milliseconds; in ns.
pub fn status_interval_ns(value: &str) -> Result<u64, String> {
    let us =
        super::value::parse_time_us(value, true).map_err(|e| format!("{e}: expected a time such as 1s or 500ms"))?;
    if us < 1000 {
        return Err("too small: fio's smallest status interval is 1ms".to_string());
    }
    Ok(us / 1000 * 1_000_000)
}

/// fio's own command-line options (not job options) that blksim does not take, with why.
const FIO_PROGRAM_OPTIONS: &[(&str, &str)] = &[
    ("append-terse", "fio's terse lines after the normal output: give --output-format=normal,terse"),
    ("showcmd", "fio's conversion of a job file to a command line"),
    ("cmdhelp", "fio's option help: `blksim options` lists every option and what blksim does with it"),
    ("enghelp", "fio's engine help: `blksim options` lists every option and what blksim does with it"),
    ("debug", "fio's debug output"),
    ("server", "fio's client/server mode"),
    ("server-internal", "fio's client/server mode"),
    ("client", "fio's client/server mode"),
    ("remote-config", "fio's client/server mode"),
    ("daemonize", "fio's client/server mode"),
    ("version", "fio's version: `blksim --version` gives blksim's (it follows fio 3.42)"),
    (
        "latency-log",
        "deprecated in fio, which fails with \"--latency-log is deprecated. Use per-job latency log options.\"; \
         give write_lat_log in the job",
    ),
    ("cpuclock-test", "fio's test of the host's clock, which runs no job"),
    ("crctest", "fio's test of its checksums on the host, which runs no job"),
    ("memcpytest", "fio's test of the host's memcpy, which runs no job"),
    ("inflate-log", "fio's decompression of a compressed log file, which runs no job"),
    (
        "idle-prof",
        "fio's profile of the host's idle CPUs (threads of its own on the host); a simulated run's idle time \
         is in its report (--mpstat, the JSON's cpu_time)",
    ),
    ("trigger-file", "fio's trigger (a command run on the host, for crash tests)"),
    ("trigger-timeout", "fio's trigger (a command run on the host, for crash tests)"),
    ("trigger", "fio's trigger (a command run on the host, for crash tests)"),
    ("trigger-remote", "fio's trigger (a command run on the host, for crash tests)"),
    ("aux-path", "where fio writes its state files: blksim writes verify state files where it runs"),
    ("eta-interval", "how often fio redraws its ETA: blksim's progress takes --eta and --eta-newline"),
];

/// The message for `--NAME`, an argument of `blksim run` that is neither
/// one of blksim's options (`own`) nor a fio job option: fio's "Bad
/// option" with the closest of either, or why blksim does not take a fio
/// program option.
pub fn unknown_command_line_option<'a>(name: &str, own: impl Iterator<Item = &'a str>) -> String {
    if let Some((_, why)) = FIO_PROGRAM_OPTIONS.iter().find(|(n, _)| *n == name) {
        return format!("--{name}: {why}");
    }
    let fio = GENERAL.iter().map(|o| o.name);
    match super::options::closest_of(name, fio.chain(own)) {
        Some(close) => format!("unknown option '--{name}' (fio: Bad option); did you mean '--{close}'?"),
        None => format!("unknown option '--{name}' (fio: Bad option; `blksim options` lists fio's job options)"),
    }
}

/// What stands for the file in the messages about a command-line job.
pub const COMMAND_LINE: &str = "<command line>";

/// How fio's command line takes option `name` (without `--`): `None` if fio has no such job option
/// (general, or of an engine blksim simulates); else whether a value may follow as the next argument.
pub fn command_line_option(name: &str) -> Option<bool> {
    let spec = [GENERAL, IO_URING, LIBAIO, PVSYNC2].into_iter().find_map(|t| find(t, name))?;
    Some(!matches!(spec.kind, Kind::Flag))
}

/// fio's command-line job options (`--name=a`, `--rw`, `randread`, ...), as given: the job file they
/// make, and for each of its lines the argument it came from (to name it in messages).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommandLineJob {
    /// `--opt=VALUE` or `--flag`, one per option, values joined.
    pub args: Vec<String>,
}

impl CommandLineJob {
    /// Take `args[at]`, a job option, with its value from the next argument when it has none and
    /// takes one; returns how many arguments it used (1 or 2).
    pub fn take(&mut self, args: &[String], at: usize, takes_value: bool) -> usize {
        let arg = &args[at];
        match args.get(at + 1) {
            Some(next) if takes_value && !arg.contains('=') => {
                self.args.push(format!("{arg}={next}"));
                2
            }
            _ => {
                self.args.push(arg.clone());
                1
            }
        }
    }

    /// The job file: `[global]` for the options before the first `--name`, then a section per `--name`.
    pub fn source(&self) -> JobSource {
        let mut text = String::new();
        if !self.args.first().is_some_and(|a| a.starts_with("--name=")) {
            text.push_str("[global]\n");
        }
        for a in &self.args {
            let option = a.trim_start_matches('-');
            match option.strip_prefix("name=") {
                Some(name) => text += &format!("[{name}]\n"),
                None => text += &format!("{option}\n"),
            }
        }
        JobSource::Text { name: PathBuf::from(COMMAND_LINE), text }
    }

    /// An error of the parser about the command-line job, said about the argument it is about.
    pub fn locate(&self, mut e: InputError) -> InputError {
        e.more = std::mem::take(&mut e.more).into_iter().map(|m| self.locate(m)).collect();
        if e.file != Path::new(COMMAND_LINE) {
            return e;
        }
        let global = usize::from(!self.args.first().is_some_and(|a| a.starts_with("--name=")));
        if let Some(arg) = e.line.checked_sub(1 + global).and_then(|i| self.args.get(i)) {
            e.message = format!("'{arg}': {}", e.message);
        }
        InputError { line: 0, ..e }
    }
}
