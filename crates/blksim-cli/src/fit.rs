//! `blksim fit`: fit chosen costs of a machine profile to chosen experiments,
//! write the result as an `extends` overlay and print the errors before and after.

use std::io::IsTerminal;

use blksim_lab::fit::{fit as run_fit, BaseProfile, FitResult, FitSpec};
use blksim_lab::summary::experiment_stats;
use blksim_lab::Experiment;

use crate::args::FitArgs;
use crate::failure::Failure;
use crate::out;
use crate::reproduce::load_experiments;

/// `blksim fit`: load the experiments and the base profile, fit, write the overlay, print the result.
pub fn fit(args: &FitArgs) -> Result<(), Failure> {
    let exps = load_experiments(&args.lab, "fit")?;
    let machine = match &args.machine {
        Some(m) => m.clone(),
        None => only_machine(&exps)?,
    };
    let base = BaseProfile::new(&machine)?;
    let output = args.output.clone().unwrap_or_else(|| default_output(&base));
    let spec = FitSpec {
        base,
        params: args.params.iter().map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect(),
        experiments: &exps,
        opts: args.lab.options()?,
        iterations: args.iterations,
        include_gaps: args.include_gaps,
    };
    let r = fit_with_progress(&spec)?;
    out::write_file(&output, r.overlay.as_bytes(), "--output")?;
    out::print(&format!(
        "{}wrote {output} (use it with --machine {output}, or blksim reproduce --profile {output})\n",
        fit_text(&machine, &exps, &r)
    ))
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

/// Fit, showing the candidates simulated, the last one's error and the wall time on stderr when it is
/// a terminal.
fn fit_with_progress(spec: &FitSpec) -> Result<FitResult, blksim::Error> {
    let bar = if std::io::stderr().is_terminal() {
        indicatif::ProgressBar::new_spinner()
            .with_style(indicatif::ProgressStyle::with_template("{spinner} {msg} wall {elapsed}").expect("template"))
    } else {
        indicatif::ProgressBar::hidden()
    };
    let progress = |n: usize, v: f64| {
        bar.set_message(format!("candidate {n}: mean squared error {v:.6}"));
        bar.tick();
    };
    let r = run_fit(spec, &progress);
    bar.finish_and_clear();
    r
}

/// What was fitted: the parameters before and after, the objective, and each experiment's errors.
fn fit_text(machine: &str, exps: &[Experiment], r: &FitResult) -> String {
    let mut s = format!(
        "fitted {} on {} ({} candidates simulated)\n",
        machine,
        exps.iter().map(|e| e.name.as_str()).collect::<Vec<_>>().join(", "),
        r.evaluations
    );
    s += &format!("  {:<32} {:>8} {:>8}  range\n", "parameter", "before", "after");
    for (p, v) in r.params.iter().zip(&r.fitted) {
        s += &format!("  {:<32} {:>8} {:>8}  {}..{}\n", p.name, p.ns, v, p.min, p.max);
    }
    s += &format!("  mean squared error in tolerances: {:.6} -> {:.6}\n", r.objective_before, r.objective_after);
    s + &experiment_errors(r)
}

/// Per experiment: the median and worst relative error, and the cells within tolerance, before and after.
fn experiment_errors(r: &FitResult) -> String {
    let pct = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{:.1}%", x * 100.0));
    let mut s = format!(
        "  {:<32} {:>22} {:>22} {:>14}\n",
        "experiment", "median|e| before/after", "worst|e| before/after", "within b/a"
    );
    for (b, a) in r.before.iter().zip(&r.after) {
        let (sb, sa) = (experiment_stats(b), experiment_stats(a));
        s += &format!(
            "  {:<32} {:>22} {:>22} {:>14}\n",
            b.name,
            format!("{} / {}", pct(sb.median_abs_error), pct(sa.median_abs_error)),
            format!("{} / {}", pct(sb.worst_abs_error), pct(sa.worst_abs_error)),
            format!("{}/{} / {}/{}", sb.within, sb.active, sa.within, sa.active)
        );
    }
    s
}
