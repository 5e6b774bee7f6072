//! `fit` end to end on the measured null-engine example: the error falls,
//! the result is the same on every run, every fitted cost stays in its range,
//! and the overlay written reproduces exactly the "after" numbers.

use std::sync::Arc;

use blksim_lab::experiment::load;
use blksim_lab::fit::{fit, BaseProfile, FitSpec};
use blksim_lab::runner::load_profile_file;
use blksim_lab::summary::to_json;
use blksim_lab::{run_experiments, LabOptions};

fn spec_for<'a>(exps: &'a [blksim_lab::Experiment], threads: usize) -> FitSpec<'a> {
    let dir = blksim_lab::source_experiments_dir().join("examples");
    FitSpec {
        base: BaseProfile::new(dir.join("vm-2cpu.toml").to_str().unwrap()).unwrap(),
        params: vec!["fio_prep_ns".into(), "fio_reap_ns".into(), "fio_reap_call_ns".into()],
        experiments: exps,
        opts: LabOptions { threads, ..Default::default() },
        iterations: 12,
        include_gaps: false,
    }
}

#[test]
fn fit_lowers_the_error_deterministically_within_ranges_and_its_overlay_reproduces_it() {
    let dir = blksim_lab::source_experiments_dir().join("examples");
    let exps = vec![load(&dir.join("null-engine.toml")).unwrap()];
    let a = fit(&spec_for(&exps, 2), &|_, _| {}).unwrap();
    assert!(a.objective_after < a.objective_before / 2.0, "{} -> {}", a.objective_before, a.objective_after);
    for (p, v) in a.params.iter().zip(&a.fitted) {
        assert!((p.min..=p.max).contains(v), "{} = {v} outside {}..{}", p.name, p.min, p.max);
    }
    // Same result with another thread count.
    let b = fit(&spec_for(&exps, 1), &|_, _| {}).unwrap();
    assert_eq!(a.fitted, b.fitted);
    assert_eq!(a.overlay, b.overlay);
    // The overlay, written beside its base and loaded as a user would, gives the "after" numbers.
    let guard = tempfile::Builder::new().prefix("blksim-lab-fit-").tempdir().unwrap();
    let out = guard.path().to_path_buf();
    std::fs::create_dir_all(&out).unwrap();
    std::fs::copy(dir.join("vm-2cpu.toml"), out.join("vm-2cpu.toml")).unwrap();
    std::fs::write(out.join("vm-2cpu-fit.toml"), &a.overlay).unwrap();
    let machine = load_profile_file(&out.join("vm-2cpu-fit.toml")).unwrap();
    let opts = LabOptions { substitutes: vec![("vm-2cpu".into(), Arc::new(machine))], ..Default::default() };
    let again = run_experiments(&exps, &opts, &|_, _| {}).unwrap();
    assert_eq!(to_json(&again), to_json(&a.after));
}

#[test]
fn fit_rejects_a_parameter_outside_the_cost_table_and_a_foreign_machine() {
    let dir = blksim_lab::source_experiments_dir().join("examples");
    let exps = vec![load(&dir.join("null-engine.toml")).unwrap()];
    let mut spec = spec_for(&exps, 1);
    spec.params = vec!["fio_prep_ms".into()];
    let e = fit(&spec, &|_, _| {}).err().unwrap().message;
    assert!(e.contains("'fio_prep_ms' is not a cost of machine 'vm-2cpu'"), "{e}");
    let mut spec = spec_for(&exps, 1);
    spec.base = BaseProfile::new("spr-gen5").unwrap();
    let e = fit(&spec, &|_, _| {}).err().unwrap().message;
    assert!(e.contains("not on 'spr-gen5'"), "{e}");
}
