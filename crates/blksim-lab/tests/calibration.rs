//! Calibration discipline: every table of calibration.toml has its
//! experiment with the numbers copied exactly (a cross-check, `--features
//! crosscheck`: it reads the project's shared/), and no calibration cell that
//! is not pending leaves its tolerance (known gaps must stay outside it, or
//! their entry goes). Experiments marked `slow`, and every experiment at ten
//! times its simulated duration, run with `--features slow-experiments`.

use std::path::PathBuf;

use blksim_lab::experiment::{list, load};
use blksim_lab::runner::CellStatus;
use blksim_lab::summary::to_table;
use blksim_lab::{run_experiments, Experiment, ExperimentResult, LabOptions};

fn experiments_dir() -> PathBuf {
    blksim_lab::source_experiments_dir()
}

#[cfg(feature = "crosscheck")]
#[path = "../../blksim-fio/tests/crosscheck/mod.rs"]
mod crosscheck;

#[cfg(feature = "crosscheck")]
fn calibration_toml() -> toml::Value {
    let p = crosscheck::shared("reference/calibration.toml");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    toml::from_str(&text).unwrap()
}

fn all_experiments() -> Vec<Experiment> {
    list(&experiments_dir()).unwrap().iter().map(|p| load(p).unwrap()).collect()
}

#[cfg(feature = "crosscheck")]
#[test]
fn every_calibration_table_has_its_experiment_with_the_numbers_copied() {
    let cal = calibration_toml();
    let tables = cal.as_table().unwrap();
    for (table, published) in tables {
        let name = table.replace('_', "-");
        let path = experiments_dir().join(format!("{name}.toml"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("[{table}] needs {}: {e}", path.display()));
        let exp: toml::Value = toml::from_str(&text).unwrap();
        assert_eq!(exp["calibration"].as_str(), Some(table.as_str()), "{name}: calibration = \"{table}\"");
        let copy = &exp["published"];
        for key in ["source", "machine", "workload", "compare", "metric", "columns", "rows", "note"] {
            assert_eq!(
                copy.get(key),
                published.get(key),
                "{name}: published.{key} differs from calibration.toml [{table}]"
            );
        }
        // A table to compare relatively says so, and the experiment reads it that way.
        let relative = published.get("compare").and_then(|c| c.as_str()).is_some_and(|c| c.starts_with("relative"));
        assert_eq!(copy.get("relative_to").is_some(), relative, "{name}: relative_to exactly when compare is relative");
        // Loads, and has one cell per number of every value column (but the
        // row a relative table is divided by).
        let e = load(&path).unwrap();
        let rows = published["rows"].as_array().unwrap().len() - usize::from(relative);
        let values = copy["value"].as_array().unwrap().len();
        assert_eq!(e.cells.len(), rows * values, "{name}: cells");
    }
    for e in all_experiments() {
        if let Some(t) = &e.calibration {
            assert!(tables.contains_key(t), "{}: calibration = \"{t}\" is not a table of calibration.toml", e.name);
        }
    }
}

fn run(exps: &[Experiment]) -> Vec<ExperimentResult> {
    run_experiments(exps, &LabOptions::default(), &|_, _| {}).unwrap()
}

/// Cells that break the discipline: outside tolerance without being a documented
/// gap, or a documented gap that is now within tolerance.
fn breaches(results: &[ExperimentResult]) -> Vec<String> {
    let mut out = Vec::new();
    for r in results {
        for c in &r.cells {
            match (c.status, c.known_gap, c.within) {
                (CellStatus::Fail, _, _) => out.push(format!(
                    "{}: {}: simulated {:.4} vs published {} ({:+.1}%, tolerance ±{:.0}%)",
                    r.name,
                    c.label,
                    c.simulated.unwrap(),
                    c.published,
                    c.error.unwrap() * 100.0,
                    c.tolerance * 100.0
                )),
                (_, true, Some(true)) => out.push(format!(
                    "{}: {}: within tolerance but listed as a known gap: remove its [[known_gap]]",
                    r.name, c.label
                )),
                _ => {}
            }
        }
    }
    out
}

#[test]
fn fast_calibration_experiments_stay_within_tolerance() {
    let exps: Vec<Experiment> = all_experiments().into_iter().filter(|e| e.calibration.is_some() && !e.slow).collect();
    assert!(!exps.is_empty());
    let results = run(&exps);
    println!("{}", to_table(&results));
    let bad = breaches(&results);
    assert!(bad.is_empty(), "calibration cells out of tolerance:\n  {}", bad.join("\n  "));
    // Something is actually checked: at least one calibration cell has a simulated value.
    assert!(results.iter().flat_map(|r| &r.cells).any(|c| c.simulated.is_some()), "every calibration cell is pending");
}

#[test]
fn posted_column_is_pending_exactly_while_the_model_rejects_posted_msi() {
    let exp = load(&experiments_dir().join("posted-msi-nvme.toml")).unwrap();
    let modelled = blksim::settings::Settings::default().apply_cmdline("intremap=posted_msi").is_ok();
    let r = &run(std::slice::from_ref(&exp))[0];
    for c in &r.cells {
        let posted = c.label.ends_with("posted");
        assert_eq!(c.status == CellStatus::Pending, posted && !modelled, "{}: {:?} ({:?})", c.label, c.status, c.note);
    }
}

/// "20ms" -> "200ms": `RUNTIME`/`RAMP` scaled by `k`.
#[cfg(feature = "slow-experiments")]
fn scale_duration(v: &str, k: u64) -> String {
    let digits: String = v.chars().take_while(|c| c.is_ascii_digit()).collect();
    let n: u64 = digits.parse().unwrap_or_else(|_| panic!("duration '{v}'"));
    format!("{}{}", n * k, &v[digits.len()..])
}

#[cfg(feature = "slow-experiments")]
#[test]
fn slow_experiments_and_every_experiment_at_ten_times_its_duration_stay_within_tolerance() {
    let cal: Vec<Experiment> = all_experiments().into_iter().filter(|e| e.calibration.is_some()).collect();
    // The experiments the default run leaves out, at their own duration.
    let slow: Vec<Experiment> = cal.iter().filter(|e| e.slow).cloned().collect();
    // Every experiment again with RUNTIME and RAMP x10: the short simulated runs are not an artefact.
    let mut long = cal.clone();
    for e in &mut long {
        for c in &mut e.cases {
            for key in ["RUNTIME", "RAMP"] {
                if let Some(v) = c.vars.get_mut(key) {
                    *v = scale_duration(v, 10);
                }
            }
        }
    }
    let mut bad = Vec::new();
    for (what, exps) in [("slow", slow), ("10x duration", long)] {
        let results = run(&exps);
        println!("{what}:\n{}", to_table(&results));
        bad.extend(breaches(&results).into_iter().map(|b| format!("{what}: {b}")));
    }
    assert!(bad.is_empty(), "calibration cells out of tolerance:\n  {}", bad.join("\n  "));
}
