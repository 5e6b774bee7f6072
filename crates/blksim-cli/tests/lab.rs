//! `blksim reproduce` and `blksim fit` end to end: the JSON shape, results
//! independent of the thread count, SVG figures, and exit status 2 with one
//! message on bad input.

mod common;
use common::{blksim, root};

use std::path::PathBuf;

use serde_json::Value;

thread_local! {
    /// This test thread's scratch directory, removed when the thread (the test) ends.
    static SCRATCH: tempfile::TempDir = tempfile::Builder::new().prefix("blksim-cli-lab-").tempdir().unwrap();
}

fn tmp(name: &str) -> PathBuf {
    let d = SCRATCH.with(|s| s.path().join(name));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn reproduce_all_as_json_has_every_calibration_experiment_and_does_not_depend_on_threads() {
    let plots = tmp("plots");
    let plot_arg = plots.to_str().unwrap();
    let (code, one, err) = blksim(&["reproduce", "--all", "--format", "json", "--jobs", "1", "--plot", plot_arg]);
    assert_eq!(code, 0, "{err}");
    let (code, two, err) = blksim(&["reproduce", "--all", "--format=json", "--jobs=2"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(one, two, "results depend on the thread count");
    let v: Value = serde_json::from_str(&one).unwrap();
    let exps = v["experiments"].as_array().unwrap();
    let names: Vec<&str> = exps.iter().map(|e| e["name"].as_str().unwrap()).collect();
    for want in [
        "posted-msi-nvme",
        "posted-msi-dsa",
        "posted-msi-max-loops",
        "mq-deadline-scalability",
        "rq-affinity",
        "single-core-iops",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    for e in exps {
        assert!(e["source"].as_str().is_some_and(|s| !s.is_empty()));
        let status = e["status"].as_str().unwrap();
        for c in e["cells"].as_array().unwrap() {
            for key in ["label", "metric", "published", "simulated", "error", "tolerance", "within"] {
                assert!(c.get(key).is_some(), "cell without {key}: {c}");
            }
            match c["simulated"].as_f64() {
                Some(sim) => {
                    let p = c["published"].as_f64().unwrap();
                    let want = (sim - p) / p;
                    assert!((c["error"].as_f64().unwrap() - want).abs() <= 1e-12, "{c}");
                }
                None => {
                    assert_eq!(c["status"], "pending");
                    assert_eq!(status, "pending", "an experiment with a pending cell is pending, never a pass");
                }
            }
        }
        // One figure per experiment.
        let svg = std::fs::read_to_string(plots.join(format!("{}.svg", e["name"].as_str().unwrap()))).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains(e["name"].as_str().unwrap()));
    }
    let overall = &v["summary"]["overall"];
    let cells: u64 = exps.iter().map(|e| e["cells"].as_array().unwrap().len() as u64).sum();
    assert_eq!(overall["cells"].as_u64(), Some(cells));
    assert!(overall["within"].as_u64().unwrap() <= overall["active"].as_u64().unwrap());
}

#[test]
fn reproduce_table_prints_each_row_and_the_summary() {
    let (code, out, err) = blksim(&["reproduce", "posted-msi-nvme"]);
    assert_eq!(code, 0, "{err}");
    for want in
        ["disks=4 remappable", "disks=8 posted", "published", "simulated", "error", "summary", "overall", "median|e|"]
    {
        assert!(out.contains(want), "'{want}' missing:\n{out}");
    }
    assert!(err.is_empty(), "no progress bar when stderr is not a terminal: {err}");
}

#[test]
fn bad_input_exits_2_with_one_message() {
    let bad = tmp("bad");
    std::fs::write(
        bad.join("broken.toml"),
        "description = \"x\"\nmachine = \"spr-gen5\"\ntolerance = 0.1\nbogus = 3\n",
    )
    .unwrap();
    let broken = bad.join("broken.toml");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["reproduce", "no-such-experiment"], "unknown experiment 'no-such-experiment'"),
        (vec!["reproduce", broken.to_str().unwrap()], "broken.toml"),
        (vec!["reproduce"], "no experiment given"),
        (vec!["reproduce", "--all", "--format", "xml"], "--format"),
        (
            vec!["fit", "posted-msi-nvme", "--param", "no_such_cost_ns"],
            "'no_such_cost_ns' is not a cost of machine 'spr-gen5'",
        ),
        // (Before clap: "no parameter to fit (give --param COST)".)
        (vec!["fit", "posted-msi-nvme"], "required arguments were not provided:\n  --param <COST>"),
        (vec!["fit", "--all", "--param", "syscall_ns"], "several machines"),
    ];
    for (args, want) in cases {
        let (code, out, err) = blksim(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.starts_with("blksim: ") && err.contains(want), "{args:?}: want '{want}' in: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn fit_writes_an_overlay_that_reproduce_takes() {
    let out = tmp("fit");
    // Beside its base, so `extends = "vm-2cpu"` resolves.
    std::fs::copy(root().join("experiments/examples/vm-2cpu.toml"), out.join("vm-2cpu.toml")).unwrap();
    let overlay = out.join("vm-2cpu-fit.toml");
    let exp = "experiments/examples/null-engine.toml";
    let (code, text, err) = blksim(&[
        "fit",
        exp,
        "--param",
        "fio_prep_ns,fio_reap_ns",
        "--machine",
        "experiments/examples/vm-2cpu.toml",
        "--iterations",
        "8",
        "--output",
        overlay.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("costs.fio_prep_ns") && text.contains("mean squared error in tolerances"), "{text}");
    let written = std::fs::read_to_string(&overlay).unwrap();
    assert!(written.contains("extends = \"vm-2cpu\"") && written.contains("[costs]"), "{written}");
    let (code, table, err) = blksim(&["reproduce", exp, "--profile", overlay.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(table.contains("null-engine"), "{table}");
}

#[test]
fn reproduce_check_exits_1_only_for_cells_out_of_tolerance_that_are_not_known_gaps() {
    // The committed example's iops cell is outside its ±25% (a fit's starting point).
    let exp = "experiments/examples/null-engine.toml";
    let (code, out, err) = blksim(&["reproduce", exp, "--check"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("fio-3.33 iops") && out.contains("summary"), "the table is printed first: {out}");
    assert_eq!(err.trim_end(), "blksim: --check: 1 cell(s) out of tolerance: null-engine: fio-3.33 iops");
    // Without --check the same run succeeds.
    assert_eq!(blksim(&["reproduce", exp]).0, 0);
    // single-core-iops is outside tolerance only in cells listed as known gaps.
    let (code, out, err) = blksim(&["reproduce", "single-core-iops", "--check"]);
    assert!(out.contains(" gap"), "{out}");
    assert_eq!(code, 0, "{err}");
}
