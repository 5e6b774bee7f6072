//! `blksim reproduce`: run calibration experiments and print published,
//! simulated and relative error per cell, then a summary; `--plot DIR`
//! writes one SVG per experiment.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use blksim_lab::experiment::{find, list, load};
use blksim_lab::runner::load_overlay;
use blksim_lab::{plot, run_experiments, summary, Experiment, LabOptions};

use crate::failure::Failure;
use crate::options::{one_of, parse_options, parse_positive, parse_seed, CommandOptions, Needs, Seen, Value};

pub const REPRODUCE_USAGE: &str =
    "usage: blksim reproduce [NAME|FILE.toml...] [--all] [--format table|json] [--plot DIR] \
[--jobs N] [--seed N] [--dir DIR] [--profile FILE]\n  \
NAME: an experiment of the experiments directory (--dir, else ./experiments, else the source tree's);\n  \
--all: every experiment there; --profile FILE: use this overlay profile in place of the machine it extends";

/// Options shared by `reproduce` and `fit`.
#[derive(Debug, Default)]
pub struct LabArgs {
    pub names: Vec<String>,
    pub all: bool,
    pub dir: Option<String>,
    pub jobs: usize,
    pub seed: Option<u64>,
    /// `--help`: print the usage and do nothing else.
    pub help: bool,
}

impl LabArgs {
    /// Take `name` if it is an option common to the lab commands (`--help` among them); `Ok(None)` if it is not.
    pub fn option(&mut self, name: &str, value: &mut Value) -> Result<Option<Seen>, String> {
        match name {
            "--all" => self.all = true,
            "--dir" => self.dir = Some(value.take_any()?),
            "--jobs" | "-j" => self.jobs = parse_positive(name, &value.take_any()?)?,
            "--seed" => self.seed = Some(parse_seed(&value.take_any()?)?),
            "--help" | "-h" => {
                self.help = true;
                return Ok(Some(Seen::Stop));
            }
            _ => return Ok(None),
        }
        Ok(Some(Seen::Taken))
    }

    /// With `--help`: print `usage` and say so.
    pub fn usage_asked(&self, usage: &str) -> bool {
        if self.help {
            println!("{usage}");
        }
        self.help
    }
}

/// The experiments directory: `--dir`, else `./experiments`, else the source tree's.
fn experiments_dir(a: &LabArgs) -> PathBuf {
    match &a.dir {
        Some(d) => PathBuf::from(d),
        None if Path::new("experiments").is_dir() => PathBuf::from("experiments"),
        None => blksim_lab::source_experiments_dir(),
    }
}

/// Load the experiments the arguments name (or all of them with `--all`).
pub fn load_experiments(a: &LabArgs, usage: &str) -> Result<Vec<Experiment>, String> {
    let dir = experiments_dir(a);
    let paths: Vec<PathBuf> = if a.all {
        if !a.names.is_empty() {
            return Err(format!("give experiment names or --all, not both\n{usage}"));
        }
        list(&dir)?
    } else {
        if a.names.is_empty() {
            return Err(format!("no experiment given (names, or --all)\n{usage}"));
        }
        a.names.iter().map(|n| find(&dir, n)).collect::<Result<_, _>>()?
    };
    if paths.is_empty() {
        return Err(format!("no experiment files (*.toml) in {}", dir.display()));
    }
    paths.iter().map(|p| load(p)).collect()
}

/// A progress callback drawing a bar on stderr, only when stderr is a terminal.
pub fn progress_bar(what: &'static str) -> Box<dyn Fn(usize, usize) + Sync> {
    if !std::io::stderr().is_terminal() {
        return Box::new(|_, _| {});
    }
    Box::new(move |done, total| {
        let width = 30;
        let filled = (done * width).checked_div(total).unwrap_or(width);
        let mut e = std::io::stderr().lock();
        let _ = write!(e, "\r[{}{}] {done}/{total} {what}", "#".repeat(filled), " ".repeat(width - filled));
        if done == total {
            let _ = write!(e, "\r{}\r", " ".repeat(width + 20 + what.len()));
        }
        let _ = e.flush();
    })
}

/// What `blksim reproduce` was asked to do.
#[derive(Debug)]
struct ReproduceArgs {
    lab: LabArgs,
    /// `table` or `json`.
    format: String,
    plot_dir: Option<String>,
    profile: Option<String>,
}

impl CommandOptions for ReproduceArgs {
    fn option(&mut self, name: &str, value: &mut Value) -> Result<Seen, String> {
        if let Some(seen) = self.lab.option(name, value)? {
            return Ok(seen);
        }
        match name {
            "--format" => self.format = one_of("--format", value.take_any()?, &["table", "json"], "table or json")?,
            "--plot" => self.plot_dir = Some(value.take_any()?),
            "--profile" => self.profile = Some(value.take_any()?),
            _ => return Ok(Seen::Unknown),
        }
        Ok(Seen::Taken)
    }

    fn operand(&mut self, arg: &str) {
        self.lab.names.push(arg.to_string());
    }
}

/// `blksim reproduce`'s options.
fn parse_reproduce(argv: &[String]) -> Result<ReproduceArgs, String> {
    let mut a = ReproduceArgs { lab: LabArgs::default(), format: "table".to_string(), plot_dir: None, profile: None };
    parse_options(argv, REPRODUCE_USAGE, Needs::AValue, &mut a)?;
    Ok(a)
}

/// `blksim reproduce`: load and run the experiments, print the comparison, write the plots.
pub fn reproduce(argv: &[String]) -> Result<(), Failure> {
    let args = parse_reproduce(argv)?;
    if args.lab.usage_asked(REPRODUCE_USAGE) {
        return Ok(());
    }
    let exps = load_experiments(&args.lab, REPRODUCE_USAGE)?;
    let opts = reproduce_options(&args)?;
    let bar = progress_bar("runs");
    let results = run_experiments(&exps, &opts, &*bar)?;
    match args.format.as_str() {
        "json" => println!("{}", serde_json::to_string_pretty(&summary::to_json(&results)).expect("JSON")),
        _ => print!("{}", summary::to_table(&results)),
    }
    if let Some(d) = args.plot_dir {
        for f in plot::write_figures(&results, Path::new(&d))? {
            eprintln!("wrote {}", f.display());
        }
    }
    Ok(())
}

/// The lab's options: threads and seed, and the `--profile` overlay in place of the machine it extends.
fn reproduce_options(args: &ReproduceArgs) -> Result<LabOptions, String> {
    let mut opts = LabOptions { threads: args.lab.jobs, seed: args.lab.seed, substitutes: Vec::new() };
    if let Some(p) = &args.profile {
        let (base, machine) = load_overlay(Path::new(p)).map_err(|e| format!("--profile {e}"))?;
        opts.substitutes.push((base, Arc::new(machine)));
    }
    Ok(opts)
}
