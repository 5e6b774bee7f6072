//! Command-line parsing for `blksim run`: fio-style `--opt VALUE` and `--opt=VALUE`;
//! and the machine options `run`, `t-io_uring` and `dsa-memfill` share.

use blksim::machine::Machine;
use blksim::settings::TimedAction;
use blksim::settings::{parse_timed_write, Settings};

use crate::commands::{knob_settings, load_machine};
use crate::options::{one_of, parse_options, parse_seed, CommandOptions, Needs, Seen, Value};

/// The machine, its knobs and the seed: `--machine`, `--cmdline`, `--set`, `--at` and `--seed`.
#[derive(Debug)]
pub struct MachineArgs {
    pub machine: Option<String>,
    pub cmdline: Vec<String>,
    pub sets: Vec<String>,
    /// `--at TIME:PATH=VALUE`: writes during the run.
    pub at: Vec<(u64, TimedAction)>,
    pub seed: u64,
}

impl Default for MachineArgs {
    fn default() -> Self {
        MachineArgs { machine: None, cmdline: Vec::new(), sets: Vec::new(), at: Vec::new(), seed: 1 }
    }
}

impl MachineArgs {
    /// Take `name` if it is one of the machine options; `Ok(false)` if it is not.
    pub fn option(&mut self, name: &str, value: &mut Value) -> Result<bool, String> {
        match name {
            "--machine" => self.machine = Some(value.take("a machine name or profile file")?),
            "--cmdline" => self.cmdline.push(value.take("a kernel command line")?),
            "--set" => self.sets.push(value.take("PATH=VALUE")?),
            "--at" => self.at.push(parse_timed_write(&value.take("TIME:PATH=VALUE")?)?),
            "--seed" => self.seed = parse_seed(&value.take("a number")?)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The machine (`--machine`, else `default`) and the settings `--cmdline` and `--set` make on it.
    pub fn machine_and_settings(&self, default: &str) -> Result<(Machine, Settings), String> {
        let machine = load_machine(self.machine.as_deref().unwrap_or(default))?;
        let settings = knob_settings(&machine, &self.cmdline, &self.sets)?;
        Ok((machine, settings))
    }
}

/// What `blksim run` was asked to do.
#[derive(Debug)]
pub struct RunArgs {
    pub job_files: Vec<String>,
    /// `--machine`, `--cmdline`, `--set`, `--at`, `--seed` (read through, as `args.seed`).
    pub knobs: MachineArgs,
    pub patches: Vec<String>,
    pub output_format: String,
    pub output: Option<String>,
    pub interrupts: bool,
    pub breakdown: bool,
    pub mpstat: bool,
    pub iostat: bool,
    pub parse_only: bool,
    pub trace: Option<String>,
    /// [start, end) of virtual time to trace, ns.
    pub trace_window_ns: (u64, u64),
}

impl Default for RunArgs {
    fn default() -> Self {
        RunArgs {
            job_files: Vec::new(),
            knobs: MachineArgs::default(),
            patches: Vec::new(),
            output_format: "normal".into(),
            output: None,
            interrupts: false,
            breakdown: false,
            mpstat: false,
            iostat: false,
            parse_only: false,
            trace: None,
            trace_window_ns: DEFAULT_TRACE_WINDOW_NS,
        }
    }
}

/// Default trace window: the first 10 ms of the run.
pub const DEFAULT_TRACE_WINDOW_NS: (u64, u64) = (0, 10_000_000);

pub use blksim::settings::parse_time_ns;

pub const RUN_USAGE: &str =
    "usage: blksim run JOB.fio... [--machine NAME|FILE] [--cmdline \"...\"] [--set PATH=VALUE]... \
[--at TIME:PATH=VALUE]... [--seed N] [--output-format normal|json|json+] [--output FILE] [--interrupts] [--mpstat] [--iostat] [--breakdown] [--parse-only] \
[--trace FILE [--trace-window START:END]]";

impl CommandOptions for RunArgs {
    fn option(&mut self, name: &str, value: &mut Value) -> Result<Seen, String> {
        if self.knobs.option(name, value)? {
            return Ok(Seen::Taken);
        }
        match name {
            "--patch" => self.patches.push(value.take("a patch name")?),
            "--output-format" => {
                let v = value.take("normal, json or json+")?;
                self.output_format =
                    one_of("--output-format", v, &["normal", "json", "json+"], "normal, json or json+")?;
            }
            "--output" => self.output = Some(value.take("a file name")?),
            "--trace" => self.trace = Some(value.take("a file name")?),
            "--trace-window" => self.trace_window_ns = parse_trace_window(&value.take("START:END, e.g. 10ms:12ms")?)?,
            _ => return Ok(self.flag(name)),
        }
        Ok(Seen::Taken)
    }

    fn operand(&mut self, arg: &str) {
        self.job_files.push(arg.to_string());
    }
}

impl RunArgs {
    /// Set the flag option `name` (it takes no value).
    fn flag(&mut self, name: &str) -> Seen {
        match name {
            "--interrupts" => self.interrupts = true,
            "--breakdown" => self.breakdown = true,
            "--mpstat" => self.mpstat = true,
            "--iostat" => self.iostat = true,
            "--parse-only" => self.parse_only = true,
            _ => return Seen::Unknown,
        }
        Seen::Taken
    }
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

/// `blksim run`'s options; at least one job file.
pub fn parse_run(argv: &[String]) -> Result<RunArgs, String> {
    let mut a = RunArgs::default();
    parse_options(argv, RUN_USAGE, Needs::What, &mut a)?;
    if a.job_files.is_empty() {
        return Err(format!("no job file given\n{RUN_USAGE}"));
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn both_option_forms_parse() {
        let a = parse_run(&v(&["j.fio", "--seed=5", "--set", "/sys/x=1", "--output-format", "json+"])).unwrap();
        assert_eq!(a.knobs.seed, 5);
        assert_eq!(a.knobs.sets, vec!["/sys/x=1"]);
        assert_eq!(a.output_format, "json+");
        assert_eq!(a.job_files, vec!["j.fio"]);
    }

    #[test]
    fn trace_window_takes_times_with_units() {
        let a = parse_run(&v(&["j.fio", "--trace", "t.json", "--trace-window", "1.5ms:2ms"])).unwrap();
        assert_eq!(a.trace.as_deref(), Some("t.json"));
        assert_eq!(a.trace_window_ns, (1_500_000, 2_000_000));
        assert!(parse_run(&v(&["j.fio", "--trace-window", "2ms:1ms"])).unwrap_err().contains("after START"));
        assert!(parse_run(&v(&["j.fio", "--trace-window", "1xs:2ms"])).unwrap_err().contains("unknown unit"));
    }

    #[test]
    fn bad_options_are_errors() {
        assert!(parse_run(&v(&["j.fio", "--bogus"])).unwrap_err().contains("unknown option '--bogus'"));
        assert!(parse_run(&v(&["j.fio", "--seed", "x"])).unwrap_err().contains("--seed"));
        assert!(parse_run(&v(&["j.fio", "--output-format=xml"])).unwrap_err().contains("xml"));
        assert!(parse_run(&v(&[])).unwrap_err().contains("no job file"));
    }
}
