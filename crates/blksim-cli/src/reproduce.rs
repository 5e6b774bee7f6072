//! `blksim reproduce`: run calibration experiments and print published,
//! simulated and relative error per cell, then a summary; `--plot DIR`
//! writes one SVG per experiment.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use blksim_lab::experiment::{find, list, load};
use blksim_lab::runner::load_overlay;
use blksim_lab::{plot, run_experiments, summary, CellStatus, Experiment, ExperimentResult, LabOptions};

use crate::args::{LabArgs, ReproduceArgs, ReproduceFormat};
use crate::failure::{Cause, Failure};
use crate::out;

impl LabArgs {
    /// The lab's options: threads (0: the machine's cores), seed and wall budget per case.
    pub fn options(&self) -> Result<LabOptions, Failure> {
        Ok(LabOptions {
            threads: self.jobs.unwrap_or(0),
            seed: self.seed,
            substitutes: Vec::new(),
            wall_budget_s: crate::budget::Budget::of(&self.budget)?.limit_s,
        })
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

/// Load the experiments the arguments name (or all of them with `--all`); `command` names the command in
/// the messages.
pub fn load_experiments(a: &LabArgs, command: &str) -> Result<Vec<Experiment>, String> {
    let usage = format!("(see blksim {command} --help)");
    let dir = experiments_dir(a);
    if a.all && !a.names.is_empty() {
        return Err(format!("give experiment names or --all, not both {usage}"));
    }
    if !a.all && a.names.is_empty() {
        return Err(format!("no experiment given (names, or --all) {usage}"));
    }
    experiments_named(&dir, if a.all { &[] } else { &a.names })
}

/// The experiments of `dir` named in `names` (each a name or a file), or all of them when `names` is empty.
pub fn experiments_named(dir: &Path, names: &[String]) -> Result<Vec<Experiment>, String> {
    let paths: Vec<PathBuf> = match names {
        [] => list(dir)?,
        names => names.iter().map(|n| find(dir, n)).collect::<Result<_, _>>()?,
    };
    if paths.is_empty() {
        return Err(format!("no experiment files (*.toml) in {}", dir.display()));
    }
    paths.iter().map(|p| load(p)).collect()
}

/// A progress callback drawing a bar on stderr (runs done of all, wall time, ETA), only when stderr is
/// a terminal; cleared when every run is done.
pub fn progress_bar(what: &'static str) -> Box<dyn Fn(usize, usize) + Sync> {
    if !std::io::stderr().is_terminal() {
        return Box::new(|_, _| {});
    }
    let style = indicatif::ProgressStyle::with_template("[{wide_bar}] {pos}/{len} {msg} wall {elapsed} ETA {eta}")
        .expect("template");
    let bar = indicatif::ProgressBar::new(0).with_style(style).with_message(what);
    Box::new(move |done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        if done == total {
            bar.finish_and_clear();
        }
    })
}

/// `blksim reproduce`: load and run the experiments, print the comparison, write the plots.
pub fn reproduce(args: &ReproduceArgs) -> Result<(), Failure> {
    let exps = load_experiments(&args.lab, "reproduce")?;
    let opts = reproduce_options(args)?;
    let bar = progress_bar("runs");
    let results = run_experiments(&exps, &opts, &*bar)?;
    out::print(&match args.format {
        ReproduceFormat::Json => {
            format!("{}\n", serde_json::to_string_pretty(&summary::to_json(&results)).expect("JSON"))
        }
        ReproduceFormat::Table => summary::to_table(&results),
    })?;
    if let Some(d) = &args.plot_dir {
        for f in plot::write_figures(&results, Path::new(&d))? {
            eprintln!("wrote {}", f.display());
        }
    }
    if args.check {
        check_tolerance(&results)?;
    }
    Ok(())
}

/// `--check`: an error naming the cells out of tolerance that are neither pending nor known gaps.
fn check_tolerance(results: &[ExperimentResult]) -> Result<(), Failure> {
    let failed: Vec<String> = results
        .iter()
        .flat_map(|r| {
            r.cells.iter().filter(|c| c.status == CellStatus::Fail).map(move |c| format!("{}: {}", r.name, c.label))
        })
        .collect();
    if failed.is_empty() {
        return Ok(());
    }
    Err(Failure::new(
        Cause::OutOfTolerance,
        format!("--check: {} cell(s) out of tolerance: {}", failed.len(), failed.join("; ")),
    ))
}

/// The lab's options: threads and seed, and the `--profile` overlay in place of the machine it extends.
fn reproduce_options(args: &ReproduceArgs) -> Result<LabOptions, Failure> {
    let mut opts = args.lab.options()?;
    if let Some(p) = &args.profile {
        let (base, machine) = load_overlay(Path::new(p)).map_err(|e| format!("--profile {e}"))?;
        opts.substitutes.push((base, Arc::new(machine)));
    }
    Ok(opts)
}
