//! `blksim reproduce`: run calibration experiments and print published,
//! simulated and relative error per cell, then a summary; `--plot DIR`
//! writes one SVG per experiment.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use blksim_lab::experiment::{find, list, load};
use blksim_lab::runner::load_overlay;
use blksim_lab::{plot, run_experiments, summary, Experiment, LabOptions};

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
}

/// `--opt VALUE` or `--opt=VALUE`: the option's name and a way to take its value.
pub fn split_opt(argv: &[String], i: &mut usize) -> (String, Option<String>) {
    let arg = &argv[*i];
    match arg.split_once('=') {
        Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
        _ => (arg.clone(), None),
    }
}

pub fn take_value(
    argv: &[String],
    i: &mut usize,
    name: &str,
    inline: Option<String>,
    usage: &str,
) -> Result<String, String> {
    if let Some(v) = inline {
        return Ok(v);
    }
    *i += 1;
    argv.get(*i).cloned().ok_or_else(|| format!("{name} needs a value\n{usage}"))
}

/// Handle an option common to the lab commands; `Ok(false)` if `name` is not one.
pub fn lab_option(
    a: &mut LabArgs,
    name: &str,
    value: &mut dyn FnMut() -> Result<String, String>,
) -> Result<bool, String> {
    match name {
        "--all" => a.all = true,
        "--dir" => a.dir = Some(value()?),
        "--jobs" | "-j" => {
            let v = value()?;
            a.jobs = v
                .parse()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("{name}: expected a positive integer, got '{v}'"))?;
        }
        "--seed" => {
            let v = value()?;
            a.seed = Some(v.parse().map_err(|_| format!("--seed: expected a non-negative integer, got '{v}'"))?);
        }
        _ => return Ok(false),
    }
    Ok(true)
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

pub fn reproduce(argv: &[String]) -> Result<(), String> {
    let mut a = LabArgs::default();
    let mut format = "table".to_string();
    let mut plot_dir: Option<String> = None;
    let mut profile: Option<String> = None;
    let mut i = 0;
    while i < argv.len() {
        let (name, inline) = split_opt(argv, &mut i);
        let arg = argv[i].clone();
        let mut value = || take_value(argv, &mut i, &name, inline.clone(), REPRODUCE_USAGE);
        if lab_option(&mut a, &name, &mut value)? {
            i += 1;
            continue;
        }
        match name.as_str() {
            "--format" => {
                format = value()?;
                if format != "table" && format != "json" {
                    return Err(format!("--format: expected table or json, got '{format}'"));
                }
            }
            "--plot" => plot_dir = Some(value()?),
            "--profile" => profile = Some(value()?),
            "--help" | "-h" => {
                println!("{REPRODUCE_USAGE}");
                return Ok(());
            }
            s if s.starts_with('-') => return Err(format!("unknown option '{s}'\n{REPRODUCE_USAGE}")),
            _ => a.names.push(arg),
        }
        i += 1;
    }
    let exps = load_experiments(&a, REPRODUCE_USAGE)?;
    let mut opts = LabOptions { threads: a.jobs, seed: a.seed, substitutes: Vec::new() };
    if let Some(p) = &profile {
        let (base, machine) = load_overlay(Path::new(p)).map_err(|e| format!("--profile {e}"))?;
        opts.substitutes.push((base, Arc::new(machine)));
    }
    let bar = progress_bar("runs");
    let results = run_experiments(&exps, &opts, &*bar)?;
    match format.as_str() {
        "json" => println!("{}", serde_json::to_string_pretty(&summary::to_json(&results)).expect("JSON")),
        _ => print!("{}", summary::to_table(&results)),
    }
    if let Some(d) = plot_dir {
        for f in plot::write_figures(&results, Path::new(&d))? {
            eprintln!("wrote {}", f.display());
        }
    }
    Ok(())
}
