//! `blksim fit`: fit chosen costs of a machine profile to chosen experiments,
//! write the result as an `extends` overlay and print the errors before and after.

use std::io::IsTerminal;

use blksim_lab::fit::{fit as run_fit, BaseProfile, FitSpec};
use blksim_lab::summary::experiment_stats;
use blksim_lab::LabOptions;

use crate::reproduce::{lab_option, load_experiments, split_opt, take_value, LabArgs};

pub const FIT_USAGE: &str = "usage: blksim fit [NAME|FILE.toml...|--all] --param COST... [--machine NAME|FILE] \
[--iterations N] [--output FILE] [--include-gaps] [--seed N] [--jobs N] [--dir DIR]\n  \
COST: a [costs] name (syscall_ns), or a cost of another table (iommu.remap_service_ns, root_port.msi_service_ns: \
every root port alike); each moves within its profile range min..max, minimising the mean squared relative error\n  \
of the cells with a simulated value (known gaps only with --include-gaps)";

pub fn fit(argv: &[String]) -> Result<(), String> {
    let mut a = LabArgs::default();
    let mut params: Vec<String> = Vec::new();
    let mut machine: Option<String> = None;
    let mut output: Option<String> = None;
    let mut iterations: u64 = 40;
    let mut include_gaps = false;
    let mut i = 0;
    while i < argv.len() {
        let (name, inline) = split_opt(argv, &mut i);
        let arg = argv[i].clone();
        let mut value = || take_value(argv, &mut i, &name, inline.clone(), FIT_USAGE);
        if lab_option(&mut a, &name, &mut value)? {
            i += 1;
            continue;
        }
        match name.as_str() {
            "--param" => params.extend(value()?.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty())),
            "--machine" => machine = Some(value()?),
            "--output" => output = Some(value()?),
            "--include-gaps" => include_gaps = true,
            "--iterations" => {
                let v = value()?;
                iterations = v
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("--iterations: expected a positive integer, got '{v}'"))?;
            }
            "--help" | "-h" => {
                println!("{FIT_USAGE}");
                return Ok(());
            }
            s if s.starts_with('-') => return Err(format!("unknown option '{s}'\n{FIT_USAGE}")),
            _ => a.names.push(arg),
        }
        i += 1;
    }
    if params.is_empty() {
        return Err(format!("no parameter to fit (give --param COST)\n{FIT_USAGE}"));
    }
    let exps = load_experiments(&a, FIT_USAGE)?;
    let machine = match machine {
        Some(m) => m,
        None => {
            let mut names: Vec<&str> = exps.iter().flat_map(|e| e.cases.iter().map(|c| c.machine.as_str())).collect();
            names.sort();
            names.dedup();
            match names.as_slice() {
                [one] => one.to_string(),
                _ => {
                    return Err(format!(
                        "the experiments run on several machines ({}): give --machine",
                        names.join(", ")
                    ))
                }
            }
        }
    };
    let base = BaseProfile::new(&machine)?;
    // Beside a profile file (so its `extends` finds the base), else in the current directory.
    let output = output.unwrap_or_else(|| {
        let file = format!("{}-fit.toml", base.name);
        base.dir.as_ref().map_or(file.clone(), |d| d.join(&file).display().to_string())
    });
    let spec = FitSpec {
        base,
        params,
        experiments: &exps,
        opts: LabOptions { threads: a.jobs, seed: a.seed, substitutes: Vec::new() },
        iterations,
        include_gaps,
    };
    let tty = std::io::stderr().is_terminal();
    let progress = move |n: usize, v: f64| {
        if tty {
            eprint!("\rcandidate {n}: mean squared error {v:.6}   ");
        }
    };
    let r = run_fit(&spec, &progress)?;
    if tty {
        eprintln!();
    }
    std::fs::write(&output, &r.overlay).map_err(|e| format!("--output {output}: {e}"))?;
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
    println!("  mean squared relative error: {:.6} -> {:.6}", r.objective_before, r.objective_after);
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
    println!("wrote {output} (use it with --machine {output}, or blksim reproduce --profile {output})");
    Ok(())
}
