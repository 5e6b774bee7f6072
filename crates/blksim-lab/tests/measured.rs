//! References from real runs: fio JSON written by Debian's real fio on this
//! machine (with /proc snapshots around it) becomes an experiment's
//! reference, read with the same metric definitions as simulated runs (a
//! cross-check, `--features crosscheck`); the committed example's fixture is
//! read in every run.

use blksim_lab::experiment::load;
use serde_json::Value;

#[cfg(feature = "crosscheck")]
#[path = "../../blksim-fio/tests/crosscheck/mod.rs"]
mod crosscheck;

/// Runs of the real fio as references.
#[cfg(feature = "crosscheck")]
mod real_fio {
    use std::path::{Path, PathBuf};

    use blksim_lab::experiment::load;
    use blksim_lab::{run_experiments, CellStatus, LabOptions};
    use serde_json::Value;

    use super::crosscheck;

    thread_local! {
        /// This test thread's scratch directory, removed when the thread (the test) ends.
        static SCRATCH: tempfile::TempDir = tempfile::Builder::new().prefix("blksim-lab-measured-").tempdir().unwrap();
    }

    fn tmp_dir(tag: &str) -> PathBuf {
        let d = SCRATCH.with(|s| s.path().join(tag));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// Run the real fio on `job`, with /proc snapshots before and after, into `dir`.
    fn real_fio(dir: &Path, job: &str) -> Value {
        std::fs::write(dir.join("job.fio"), job).unwrap();
        let snap = |src: &str, dst: &str| std::fs::copy(src, dir.join(dst)).unwrap();
        snap("/proc/interrupts", "interrupts.before");
        snap("/proc/stat", "stat.before");
        let out = crosscheck::fio_tool("fio")
            .args(["--output-format=json", "job.fio"])
            .env("RUNTIME", "300ms")
            .current_dir(dir)
            .output()
            .expect("run fio");
        snap("/proc/interrupts", "interrupts.after");
        snap("/proc/stat", "stat.after");
        assert!(out.status.success(), "fio failed: {}", String::from_utf8_lossy(&out.stderr));
        std::fs::write(dir.join("fio.json"), &out.stdout).unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap()
    }

    const NULL_JOB: &str =
    "[null]\nioengine=null\nrw=randread\nbs=4k\nsize=1g\niodepth=1\ntime_based\nruntime=${RUNTIME}\ncpus_allowed=0\n";

    #[test]
    fn a_real_fio_run_is_a_reference_read_with_the_same_metrics() {
        let dir = tmp_dir("measured");
        let fio = real_fio(&dir, NULL_JOB);
        let exp_text = r#"
description = "null engine against this machine's real fio"
machine = "spr-gen5"
tolerance = 0.5
job = "job.fio"
vars = { RUNTIME = "5ms" }
[[measured]]
label = "real"
fio_json = "fio.json"
proc_interrupts = ["interrupts.before", "interrupts.after"]
proc_stat = ["stat.before", "stat.after"]
metrics = ["iops", "job_usr_pct", "clat_mean_us", "clat_p50_us", "cpu_busy_pct", { metric = "iops", scale = 1e-6 }]
"#;
        // The scaled duplicate needs its own label: it would collide, which must be an error.
        std::fs::write(dir.join("dup.toml"), exp_text).unwrap();
        let e = load(&dir.join("dup.toml")).unwrap_err();
        assert!(e.contains("two cells are labelled 'real iops'"), "{e}");

        std::fs::write(dir.join("x.toml"), exp_text.replace(", { metric = \"iops\", scale = 1e-6 }", "")).unwrap();
        let exp = load(&dir.join("x.toml")).unwrap();
        let job = &fio["jobs"][0];
        let published = |label: &str| exp.cells.iter().find(|c| c.label == label).unwrap().published;
        assert_eq!(published("real iops"), job["read"]["iops"].as_f64().unwrap());
        assert!((published("real job_usr_pct") - job["usr_cpu"].as_f64().unwrap()).abs() < 1e-9);
        assert!(
            (published("real clat_mean_us") - job["read"]["clat_ns"]["mean"].as_f64().unwrap() / 1000.0).abs() < 1e-9
        );
        let p50 = job["read"]["clat_ns"]["percentile"]["50.000000"].as_f64().unwrap();
        assert_eq!(published("real clat_p50_us"), p50 / 1000.0);
        // fio spun one of this machine's CPUs for most of the snapshot interval.
        let busy = published("real cpu_busy_pct");
        let ncpus = std::thread::available_parallelism().unwrap().get() as f64;
        assert!(busy > 50.0 / ncpus && busy <= 100.0, "cpu_busy_pct {busy}");
        // (Device interrupts are left out: a quiet machine can take none in the
        // snapshot interval, and a zero reference has no relative error.)

        let r = &run_experiments(std::slice::from_ref(&exp), &LabOptions::default(), &|_, _| {}).unwrap()[0];
        for c in &r.cells {
            let sim = c.simulated.unwrap_or_else(|| panic!("{}: {:?}", c.label, c.note));
            assert_eq!(c.error, Some((sim - c.published) / c.published), "{}", c.label);
            assert_eq!(c.within, Some(c.error.unwrap().abs() <= 0.5));
            assert_ne!(c.status, CellStatus::Pending);
        }
    }

    #[test]
    fn fio_json_with_several_jobs_has_no_percentiles_but_sums_iops() {
        let dir = tmp_dir("measured-multi");
        let fio = real_fio(&dir, &format!("{}[a]\n[b]\n", NULL_JOB.replace("[null]", "[global]")));
        std::fs::write(
            dir.join("x.toml"),
            "description = \"d\"\nmachine = \"spr-gen5\"\ntolerance = 0.5\njob = \"job.fio\"\n\
         [[measured]]\nlabel = \"m\"\nfio_json = \"fio.json\"\nmetrics = [\"clat_p99_us\"]\n",
        )
        .unwrap();
        let e = load(&dir.join("x.toml")).unwrap_err();
        assert!(e.contains("group_reporting"), "{e}");
        std::fs::write(
            dir.join("y.toml"),
            "description = \"d\"\nmachine = \"spr-gen5\"\ntolerance = 0.5\njob = \"job.fio\"\n\
         [[measured]]\nlabel = \"m\"\nfio_json = \"fio.json\"\nmetrics = [\"iops\"]\n",
        )
        .unwrap();
        let exp = load(&dir.join("y.toml")).unwrap();
        let want: f64 = fio["jobs"].as_array().unwrap().iter().map(|j| j["read"]["iops"].as_f64().unwrap()).sum();
        assert_eq!(fio["jobs"].as_array().unwrap().len(), 2);
        assert_eq!(exp.cells[0].published, want);
    }
}

#[test]
fn the_committed_example_reads_its_real_fio_fixture() {
    let dir = blksim_lab::source_experiments_dir().join("examples");
    let exp = load(&dir.join("null-engine.toml")).unwrap();
    let text = std::fs::read_to_string(dir.join("measured/null-4k.json")).unwrap();
    let fio: Value = serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
    assert!(fio["fio version"].as_str().unwrap().starts_with("fio-3"), "a real fio's output");
    let iops = exp.cells.iter().find(|c| c.label == "fio-3.33 iops").unwrap();
    assert_eq!(iops.published, fio["jobs"][0]["read"]["iops"].as_f64().unwrap());
}
