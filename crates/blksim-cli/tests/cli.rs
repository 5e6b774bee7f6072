//! The `blksim` command end to end: the README example, exit status and
//! messages on bad input, determinism of the JSON output.

mod common;
use common::blksim;

fn tmp_job(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("blksim-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

const SMALL_JOB: &str = "[r]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\niodepth=8\ntime_based\nruntime=5ms\nfilename=/dev/nvme0n1\ncpus_allowed=0\n";

#[test]
fn the_readme_example_runs_and_prints_fio_normal_output() {
    let (code, out, err) = blksim(&["run", "examples/randread-uring.fio"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("randread: (groupid=0, jobs=4)"), "{out}");
    assert!(out.contains("read: IOPS="));
    assert!(out.contains("Run status group 0 (all jobs):"));
    assert!(out.contains("Disk stats (read/write):"));
}

#[test]
fn same_seed_gives_identical_json_apart_from_wall_fields() {
    let job = tmp_job("det.fio", SMALL_JOB);
    let strip = |s: &str| -> String { s.lines().filter(|l| !l.contains("wall")).collect::<Vec<_>>().join("\n") };
    let a = blksim(&["run", &job, "--output-format", "json", "--seed", "5"]).1;
    let b = blksim(&["run", &job, "--output-format", "json", "--seed", "5"]).1;
    let c = blksim(&["run", &job, "--output-format", "json", "--seed", "6"]).1;
    assert!(a.contains("\"blksim\""));
    assert_eq!(strip(&a), strip(&b));
    assert_ne!(strip(&a), strip(&c));
}

#[test]
fn parse_only_validates_without_simulating() {
    let job = tmp_job("ok.fio", SMALL_JOB);
    let (code, out, _) = blksim(&["run", "--parse-only", &job]);
    assert_eq!((code, out.as_str()), (0, ""));
}

#[test]
fn bad_input_exits_2_with_one_message_naming_file_and_line() {
    let job = tmp_job("bad.fio", "[r]\nioengine=libaio\nrw=randred\n");
    let (code, out, err) = blksim(&["run", &job]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.contains("bad.fio:3") && err.contains("randred"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one message: {err}");

    let job = tmp_job("nodev.fio", &SMALL_JOB.replace("nvme0n1", "sdq"));
    let (code, _, err) = blksim(&["run", &job]);
    assert_eq!(code, 2);
    assert!(err.contains("nodev.fio:1") && err.contains("/dev/sdq"), "{err}");

    let job = tmp_job("ok2.fio", SMALL_JOB);
    for (args, needle) in [
        (vec!["run", &job, "--set", "/sys/block/nvme0n1/queue/rq_affinity=7"], "out of range"),
        (vec!["run", &job, "--cmdline", "nvme.bogus=1"], "unknown kernel parameter"),
        (vec!["run", &job, "--machine", "nosuch"], "unknown machine 'nosuch'"),
        (vec!["run", &job, "--frobnicate"], "unknown option '--frobnicate'"),
        (vec!["run", "/nonexistent/job.fio"], "/nonexistent/job.fio"),
        (vec!["bogus"], "unknown command 'bogus'"),
    ] {
        let (code, _, err) = blksim(&args);
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn interrupts_table_and_posted_mode_show_pmn() {
    let job = tmp_job("pmn.fio", SMALL_JOB);
    let (code, out, err) = blksim(&["run", &job, "--cmdline", "intremap=posted_msi", "--interrupts"]);
    assert_eq!(code, 0, "{err}");
    let pmn = out.lines().find(|l| l.trim_start().starts_with("PMN:")).expect("PMN row");
    assert!(pmn.contains("Posted MSI notification event"));
    assert!(out.lines().any(|l| l.contains("nvme0q1")));
}

#[test]
fn machines_lists_and_shows_the_builtin_profile() {
    let (code, out, _) = blksim(&["machines"]);
    assert_eq!(code, 0);
    assert!(out.contains("spr-gen5"));
    let (code, out, _) = blksim(&["machines", "spr-gen5"]);
    assert_eq!(code, 0);
    assert!(out.contains("syscall_ns") && out.contains("nvme0n1"));
}

#[cfg(feature = "crosscheck")]
#[path = "../../blksim-fio/tests/crosscheck/mod.rs"]
mod crosscheck;

/// Every file of fio's example corpus gets a result or one clear message
/// (exit 2, file:line), never a panic: `--parse-only` parses and checks the
/// jobs against the machine without simulating. A cross-check (`--features
/// crosscheck`): the corpus is in the project's shared/.
#[cfg(feature = "crosscheck")]
#[test]
fn every_corpus_file_is_accepted_or_rejected_cleanly() {
    let mut accepted = Vec::new();
    for f in &crosscheck::corpus_files() {
        let (code, out, err) = blksim(&["run", "--parse-only", f.to_str().unwrap()]);
        match code {
            0 => accepted.push(f.file_name().unwrap().to_string_lossy().into_owned()),
            2 => {
                let name = f.file_name().unwrap().to_string_lossy();
                assert!(err.contains(name.as_ref()), "{name}: message names the file: {err}");
                assert_eq!(err.trim_end().lines().count(), 1, "{name}: one message: {err}");
            }
            c => panic!("{}: exit {c}: {out}{err}", f.display()),
        }
    }
    // Only null.fio needs no device of the machine; the rest name files or
    // engines blksim does not simulate.
    assert_eq!(accepted, vec!["null.fio"]);
}

#[test]
fn trace_is_valid_chrome_json_with_cpu_tracks_and_interrupt_instants() {
    let job = tmp_job("trace.fio", SMALL_JOB);
    let out = std::env::temp_dir().join(format!("blksim-trace-{}.json", std::process::id()));
    for mode in ["", "intremap=posted_msi"] {
        let (code, _, err) =
            blksim(&["run", &job, "--cmdline", mode, "--trace", out.to_str().unwrap(), "--trace-window", "1ms:2ms"]);
        assert_eq!(code, 0, "{err}");
        let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).expect("valid JSON");
        let ev = doc["traceEvents"].as_array().unwrap();
        let has = |f: &dyn Fn(&serde_json::Value) -> bool| ev.iter().any(f);
        assert!(has(&|e| e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "CPU 0"));
        for track in ["task", "softirq", "hardirq"] {
            assert!(has(&|e| e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == track), "{track}");
        }
        assert!(has(&|e| e["ph"] == "X" && e["tid"] == 0 && e["args"]["job"] == "r"), "task slices");
        let irq = if mode.is_empty() { "nvme_irq" } else { "posted_msi_notification" };
        assert!(has(&|e| e["ph"] == "X" && e["tid"] == 2 && e["name"] == irq), "{irq} slices");
        let instant = if mode.is_empty() { "MSI" } else { "MSI posted" };
        assert!(has(&|e| e["ph"] == "i" && e["name"] == instant), "{instant} instants");
        assert!(has(&|e| e["ph"] == "C" && e["args"]["requests"].is_u64()), "queue depth counter");
        // Everything lies inside the window.
        for e in ev.iter().filter(|e| e["ph"] != "M") {
            let ts = e["ts"].as_f64().unwrap();
            let end = ts + e["dur"].as_f64().unwrap_or(0.0);
            assert!(ts >= 1000.0 && end <= 2000.0 + 1e-6, "{e}");
        }
    }
}

#[test]
fn dsa_memfill_reports_interrupt_rates_and_rejects_bad_options() {
    let (code, out, err) = blksim(&[
        "dsa-memfill",
        "--irq-cpu",
        "0",
        "--runtime",
        "1ms",
        "--cmdline",
        "intremap=posted_msi",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["mode"], "posted");
    let completions = doc["completion_interrupts_per_sec"].as_f64().unwrap();
    assert!(completions > 0.0);
    // MSIs of a pending vector merge: at most one handler call per completion.
    assert!(doc["handler_invocations_per_sec"].as_f64().unwrap() <= completions);
    assert_eq!(doc["msis_per_sec"].as_f64().unwrap(), completions, "one MSI per descriptor");
    // --irq-cpu 0: only CPU 0 takes the interrupts, and its time adds up.
    let cpus = doc["irq_cpus"].as_array().unwrap();
    assert_eq!(cpus.len(), 1);
    assert_eq!(cpus[0]["cpu"], 0);
    let total: f64 = ["user_pct", "hardirq_pct", "softirq_pct", "sys_pct", "idle_pct"]
        .iter()
        .map(|k| cpus[0][k].as_f64().unwrap())
        .sum();
    assert!((total - 100.0).abs() < 0.01, "{total}");
    assert!(doc["notifications_per_sec"].as_f64().unwrap() <= doc["msis_per_sec"].as_f64().unwrap());
    let (code, _, err) = blksim(&["dsa-memfill", "--op", "memcpy"]);
    assert_eq!(code, 2);
    assert!(err.contains("only memfill"), "{err}");
}

#[test]
fn t_io_uring_prints_its_own_lines_and_rejects_what_is_not_modelled() {
    let (code, out, err) = blksim(&[
        "t-io_uring",
        "--cmdline",
        "nvme.poll_queues=2",
        "-b512",
        "-d64",
        "-c16",
        "-s16",
        "-r",
        "2ms",
        "--taskset",
        "1",
        "--",
        "/dev/nvme0n1",
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("submitter=0, tid=") && lines[0].contains("file=/dev/nvme0n1, nfiles=1"), "{out}");
    assert_eq!(lines[1], "polled=1, fixedbufs=1, register_files=1, buffered=0, QD=64");
    assert!(lines[3].starts_with("IOPS=") && lines[3].contains(", BW=") && lines[3].contains(", IOS/call="), "{out}");
    assert!(lines.last().unwrap().starts_with("Maximum IOPS="));
    let (code, _, err) = blksim(&["t-io_uring", "-u", "1", "--", "/dev/nvme0n1"]);
    assert_eq!(code, 2);
    assert!(err.contains("-u"), "{err}");
}
