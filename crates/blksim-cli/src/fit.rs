//! `blksim fit`: fit chosen costs of a machine profile to chosen experiments,
//! write the result as an `extends` overlay and print the errors before and after.

use std::io::IsTerminal;

use blksim_lab::fit::{fit as run_fit, BaseProfile, FitResult, FitSpec};
use blksim_lab::summary::experiment_stats;
use blksim_lab::{Experiment, LabOptions};

use crate::failure::Failure;
use crate::options::{parse_options, parse_positive, CommandOptions, Needs, Seen, Value};
use crate::reproduce::{load_experiments, LabArgs};

pub const FIT_USAGE: &str = "usage: blksim fit [NAME|FILE.toml...|--all] --param COST... [--machine NAME|FILE] \
[--iterations N] [--output FILE] [--include-gaps] [--seed N] [--jobs N] [--dir DIR]\n  \
COST: a [costs] name (syscall_ns), or a cost of another table (iommu.remap_service_ns, root_port.msi_service_ns: \
every root port alike); each moves within its profile range min..max, minimising the mean squared error in tolerances ((relative error / tolerance)²)\n  \
of the cells with a simulated value (known gaps only with --include-gaps)";

/// What `blksim fit` was asked to do.
#[derive(Debug)]
struct FitArgs {
    lab: LabArgs,
    /// The costs to fit (`--param`, comma-separated or repeated).
    params: Vec<String>,
    machine: Option<String>,
    output: Option<String>,
    iterations: u64,
    include_gaps: bool,
}

impl CommandOptions for FitArgs {
    fn option(&mut self, name: &str, value: &mut Value) -> Result<Seen, String> {
        if let Some(seen) = self.lab.option(name, value)? {
            return Ok(seen);
        }
        match name {
            "--param" => {
                self.params.extend(value.take_any()?.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()))
            }
            "--machine" => self.machine = Some(value.take_any()?),
            "--output" => self.output = Some(value.take_any()?),
            "--include-gaps" => self.include_gaps = true,
            "--iterations" => self.iterations = parse_positive("--iterations", &value.take_any()?)?,
            _ => return Ok(Seen::Unknown),
        }
        Ok(Seen::Taken)
    }

    fn operand(&mut self, arg: &str) {
        self.lab.names.push(arg.to_string());
    }
}

/// `blksim fit`'s options; at least one `--param` (unless `--help`).
fn parse_fit(argv: &[String]) -> Result<FitArgs, String> {
    let mut a = FitArgs {
        lab: LabArgs::default(),
        params: Vec::new(),
        machine: None,
        output: None,
        iterations: 40,
        include_gaps: false,
    };
    parse_options(argv, FIT_USAGE, Needs::AValue, &mut a)?;
    if a.params.is_empty() && !a.lab.help {
        return Err(format!("no parameter to fit (give --param COST)\n{FIT_USAGE}"));
    }
    Ok(a)
}

/// `blksim fit`: load the experiments and the base profile, fit, write the overlay, print the result.
pub fn fit(argv: &[String]) -> Result<(), Failure> {
    let args = parse_fit(argv)?;
    if args.lab.usage_asked(FIT_USAGE) {
        return Ok(());
    }
    let exps = load_experiments(&args.lab, FIT_USAGE)?;
    let machine = match &args.machine {
        Some(m) => m.clone(),
        None => only_machine(&exps)?,
    };
    let base = BaseProfile::new(&machine)?;
    let output = args.output.clone().unwrap_or_else(|| default_output(&base));
    let spec = FitSpec {
        base,
        params: args.params,
        experiments: &exps,
        opts: LabOptions { threads: args.lab.jobs, seed: args.lab.seed, substitutes: Vec::new() },
        iterations: args.iterations,
        include_gaps: args.include_gaps,
    };
    let r = fit_with_progress(&spec)?;
    std::fs::write(&output, &r.overlay).map_err(|e| format!("--output {output}: {e}"))?;
    print_fit(&machine, &exps, &r);
    println!("wrote {output} (use it with --machine {output}, or blksim reproduce --profile {output})");
    Ok(())
}

/// The one machine the experiments run on (else an error asking for `--machine`).
fn only_machine(exps: &[Experiment]) -> Result<String, String> {
    let mut names: Vec<&str> = exps.iter().flat_map(|e| e.cases.iter().map(|c| c.machine.as_str())).collect();
    names.sort();
    names.dedup();
    match names.as_slice() {
        [one] => Ok(one.to_string()),
        _ => Err(format!("the experiments run on several machines ({}): give --machine", names.join(", "))),
    }
}

/// Where the overlay goes without `--output`: beside a profile file (so its `extends` finds the base),
/// else in the current directory.
fn default_output(base: &BaseProfile) -> String {
    let file = format!("{}-fit.toml", base.name);
    base.dir.as_ref().map_or(file.clone(), |d| d.join(&file).display().to_string())
}

/// Fit, showing each candidate's error on stderr when it is a terminal.
fn fit_with_progress(spec: &FitSpec) -> Result<FitResult, blksim::Error> {
    let tty = std::io::stderr().is_terminal();
    let progress = move |n: usize, v: f64| {
        if tty {
            eprint!("\rcandidate {n}: mean squared error {v:.6}   ");
        }
    };
    let r = run_fit(spec, &progress)?;
    if tty {
        eprintln!();
    }
    Ok(r)
}

/// What was fitted: the parameters before and after, the objective, and each experiment's errors.
fn print_fit(machine: &str, exps: &[Experiment], r: &FitResult) {
    println!(
        "fitted {} on {} ({} candidates simulated)",
        machine,
        exps.iter().map(|e| e.name.as_str()).collect::<Vec<_>>().join(", "),
        r.evaluations
    );
    println!("  {:<32} {:>8} {:>8}  range", "parameter", "before", "after");
    for (p, v) in r.params.iter().zip(&r.fitted) {
        println!("  {:<32} {:>8} {:>8}  {}..{}", p.name, p.ns, v, p.min, p.max);
    }
    println!("  mean squared error in tolerances: {:.6} -> {:.6}", r.objective_before, r.objective_after);
    print_experiment_errors(r);
}

/// Per experiment: the median and worst relative error, and the cells within tolerance, before and after.
fn print_experiment_errors(r: &FitResult) {
    let pct = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{:.1}%", x * 100.0));
    println!(
        "  {:<32} {:>22} {:>22} {:>14}",
        "experiment", "median|e| before/after", "worst|e| before/after", "within b/a"
    );
    for (b, a) in r.before.iter().zip(&r.after) {
        let (sb, sa) = (experiment_stats(b), experiment_stats(a));
        println!(
            "  {:<32} {:>22} {:>22} {:>14}",
            b.name,
            format!("{} / {}", pct(sb.median_abs_error), pct(sa.median_abs_error)),
            format!("{} / {}", pct(sb.worst_abs_error), pct(sa.worst_abs_error)),
            format!("{}/{} / {}/{}", sb.within, sb.active, sa.within, sa.active)
        );
    }
}
