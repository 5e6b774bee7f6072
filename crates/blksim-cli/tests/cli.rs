//! The `blksim` command end to end: the README example, exit status and
//! messages on bad input, determinism of the JSON output.

mod common;
use common::blksim;

thread_local! {
    /// This test thread's scratch directory, removed when the thread (the test) ends.
    static SCRATCH: tempfile::TempDir = tempfile::Builder::new().prefix("blksim-cli-test-").tempdir().unwrap();
}

fn tmp_job(name: &str, text: &str) -> String {
    let p = SCRATCH.with(|d| d.path().join(name));
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
fn fios_readonly_refuses_writing_jobs_and_its_max_jobs_is_ignored_as_fio_ignores_it() {
    // fio's fixup_options: "trim and write operations are not allowed with the --readonly
    // parameter"; fio 3.42 takes --max-jobs and ignores it.
    let w = tmp_job("ro-write.fio", "[w]\nfilename=/dev/nvme0n1\ndirect=1\nrw=randwrite\nsize=64k\n");
    let (code, out, err) = blksim(&["run", "--readonly", &w]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains("ro-write.fio:4: job 'w'") && err.contains("not allowed with the --readonly"), "{err}");
    let r = tmp_job("ro-read.fio", "[r]\nfilename=/dev/nvme0n1\ndirect=1\nrw=randread\nsize=64k\n");
    let no_wall = |s: &str| s.lines().filter(|l| !l.contains("wall")).collect::<Vec<_>>().join("\n");
    let (_, plain, _) = blksim(&["run", &r, "--output-format", "json"]);
    for extra in [&["--readonly"][..], &["--max-jobs=1"], &["--max-jobs", "4"]] {
        let (code, out, err) = blksim(&[&["run", &r, "--output-format", "json"][..], extra].concat());
        assert_eq!(code, 0, "{extra:?}: {err}");
        assert_eq!(no_wall(&out), no_wall(&plain), "{extra:?} changes nothing in a reading job");
    }
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
    // At the line of the option the model refuses (before: the job's section line).
    assert!(err.contains("nodev.fio:9: job 'r': filename=/dev/sdq"), "{err}");

    let job = tmp_job("ok2.fio", SMALL_JOB);
    for (args, needle) in [
        (vec!["run", &job, "--set", "/sys/block/nvme0n1/queue/rq_affinity=7"], "out of range"),
        (vec!["run", &job, "--cmdline", "nvme.bogus=1"], "nvme.bogus=1' is a parameter of a driver blksim simulates"),
        (vec!["run", &job, "--machine", "nosuch"], "unknown machine 'nosuch'"),
        // `run`'s arguments that are neither blksim's nor fio's options get fio's message.
        (vec!["run", &job, "--frobnicate"], "unknown option '--frobnicate' (fio: Bad option)"),
        (vec!["run", &job, "--intrerupts"], "did you mean '--interrupts'?"),
        // fio's program options that run no job, or run one on the host: why, not "Bad option".
        (vec!["run", &job, "--version"], "--version: fio's version: `blksim --version`"),
        (vec!["run", &job, "--latency-log=x"], "--latency-log: deprecated in fio"),
        (vec!["run", &job, "--idle-prof=system"], "--idle-prof: fio's profile of the host's idle CPUs"),
        (vec!["run", &job, "--trigger-file=f"], "--trigger-file: fio's trigger"),
        (vec!["machines", "--frobnicate"], "unexpected argument '--frobnicate'"),
        (vec!["machine", "spr-gen5"], "a similar subcommand exists: 'machines'"),
        (vec!["run", "/nonexistent/job.fio"], "/nonexistent/job.fio"),
        (vec!["bogus"], "unrecognized subcommand 'bogus'"),
    ] {
        let (code, _, err) = blksim(&args);
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// fio's --warnings-fatal makes a warning about the jobs an error (exit 2, the warning the
/// message), and --alloc-size is taken with a warning (fio's memory pool is not simulated).
#[test]
fn warnings_fatal_fails_on_a_warning_and_alloc_size_warns() {
    let job = tmp_job("trim-errors.fio", &format!("{SMALL_JOB}block_error_percentiles=1\n"));
    let (code, _, err) = blksim(&["run", &job, "--warnings-fatal"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("option 'block_error_percentiles'") && err.contains("an error with --warnings-fatal"),
        "{err}"
    );
    let (code, _, err) = blksim(&["run", &job, "--alloc-size=1024"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("blksim: warning: ") && err.contains("trim-errors.fio:11: option 'block_error_percentiles'"),
        "{err}"
    );
    assert!(err.contains("blksim: warning: --alloc-size=1024"), "{err}");
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
                // One line per problem, each naming the file and the line.
                let at = format!("{}:", f.display());
                // (Warnings about ignored options come first.)
                let problems = err.trim_end().lines().filter(|l| !l.starts_with("blksim: warning: "));
                for (i, line) in problems.enumerate() {
                    let line = if i == 0 { line.strip_prefix("blksim: ").unwrap_or("") } else { line };
                    let rest = line.strip_prefix(&at).unwrap_or_else(|| panic!("{name}: names the file: {err}"));
                    assert!(rest.split(':').next().unwrap().parse::<usize>().is_ok(), "{name}: a line: {err}");
                }
            }
            c => panic!("{}: exit {c}: {out}{err}", f.display()),
        }
    }
    // null.fio and zipf.fio (null engine, a zipf distribution) need no
    // device of the machine; jesd219.fio names the machine's /dev/nvme0n1 and
    // is valid, though unbounded (the whole device, four times): the run asks
    // the wall budget first (below); uring-cmd-ng.fio is NVMe passthrough on
    // /dev/ng0n1 (direct left unset, as passthrough needs), and
    // uring-cmd-trim-multi-range.fio its trims of eight ranges (num_range);
    // cross-stripe-verify.fio thirty clones spread by offset_increment, each writing io_size=120g
    // twice (loops=2) and reading it back (verify_backlog): over the wall budget too.
    // The rest name files, engines or NVMe command features blksim does not
    // simulate.
    assert_eq!(
        accepted,
        vec![
            "cross-stripe-verify.fio",
            "jesd219.fio",
            "null.fio",
            "uring-cmd-ng.fio",
            "uring-cmd-trim-multi-range.fio",
            "zipf.fio"
        ]
    );
    for long in ["jesd219.fio", "cross-stripe-verify.fio"] {
        let f = crosscheck::corpus_files().into_iter().find(|f| f.ends_with(long)).unwrap();
        let (code, _, err) = blksim(&["run", f.to_str().unwrap()]);
        assert_eq!(code, 2, "{long}: {err}");
        assert!(err.contains("over the wall budget") && err.contains("--yes"), "{long}: {err}");
    }
}

#[test]
fn the_wall_budget_counts_io_size_not_the_whole_device() {
    // Thirty clones of 1 MiB each (io_size), spread over the drive by
    // offset_increment: a few thousand I/Os, not thirty drives' worth.
    let job = tmp_job(
        "io-size.fio",
        "[w]\nfilename=/dev/nvme0n1\ndirect=1\nrw=write\nbs=16k\nio_size=1m\nnumjobs=30\n\
         offset=120k\noffset_increment=100g\ngroup_reporting\n",
    );
    let (code, out, err) = blksim(&["run", &job, "--output-format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["jobs"][0]["write"]["io_bytes"].as_u64(), Some(30 << 20));
}

#[test]
fn trace_is_valid_chrome_json_with_cpu_tracks_and_interrupt_instants() {
    let job = tmp_job("trace.fio", SMALL_JOB);
    let out = SCRATCH.with(|d| d.path().join("trace.json"));
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
    assert!(err.contains("/dev/ngXnY"), "{err}");
    let (code, _, err) = blksim(&["t-io_uring", "-O", "0", "--", "/dev/nvme0n1"]);
    assert_eq!(code, 2);
    assert!(err.contains("-O 0"), "{err}");
}

/// Runs `blksim ARGS` with stdout going to `stdout` (a closed pipe, /dev/full).
fn blksim_to(args: &[&str], stdout: std::process::Stdio) -> (i32, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_blksim"))
        .args(args)
        .current_dir(common::root())
        .stdout(stdout)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn a_closed_pipe_ends_quietly_and_a_full_disk_is_one_line() {
    let job = tmp_job("pipe.fio", SMALL_JOB);
    // A reader that went away before the report (`| head` after its lines).
    let (read_end, write_end) = std::io::pipe().unwrap();
    drop(read_end);
    let (code, err) = blksim_to(&["run", &job], write_end.into());
    assert_eq!((code, err.as_str()), (0, ""));
    let (read_end, write_end) = std::io::pipe().unwrap();
    drop(read_end);
    assert_eq!(blksim_to(&["machines"], write_end.into()), (0, String::new()));

    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let (code, err) = blksim_to(&["run", &job], full.into());
    assert_eq!(code, 1);
    assert_eq!(err.trim_end(), "blksim: writing stdout: No space left on device (os error 28)");
    assert_eq!(err.lines().count(), 1);
}

#[test]
fn ctrl_c_prints_the_report_so_far_and_exits_130() {
    let job = tmp_job("long.fio", &SMALL_JOB.replace("runtime=5ms", "runtime=1h"));
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_blksim"))
        .args(["run", &job, "--output-format", "json", "--yes"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once blksim catches SIGINT, the run is under way.
    common::wait_until_it_catches(&mut child, libc::SIGINT);
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(
        err.starts_with("blksim: interrupted (Ctrl-C) at ") && err.contains("the report covers the run so far"),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the JSON report so far");
    let job = &doc["jobs"][0];
    let ios = job["read"]["total_ios"].as_u64().unwrap();
    let runtime_ms = job["read"]["runtime"].as_u64().unwrap();
    assert!(ios > 0 && runtime_ms > 0 && runtime_ms < 3_600_000, "{ios} I/Os in {runtime_ms} ms");
}

#[test]
fn sigusr1_prints_the_report_so_far_and_the_run_goes_on() {
    // fio's sig_show_status: SIGUSR1 has its helper thread print __show_running_run_stats.
    let job = tmp_job("usr1.fio", &SMALL_JOB.replace("runtime=5ms", "runtime=1h"));
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_blksim"))
        .args(["run", &job, "--minimal", "--yes"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    common::wait_until_it_catches(&mut child, libc::SIGUSR1);
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGUSR1) }, 0);
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut first).unwrap();
    // Terse version 3's sixth field: KiB read.
    let read_kib = |line: &str| line.split(';').nth(5).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
    assert!(first.starts_with("3;") && read_kib(&first) > 0, "{first}");
    assert!(child.try_wait().unwrap().is_none(), "the run goes on after the report");
    // Then Ctrl-C: the final report so far, with more I/O done.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(rest.lines().count(), 1, "{rest}");
    assert!(read_kib(&rest) > read_kib(&first), "{first}{rest}");
}

#[test]
fn the_fio_dump_status_file_asks_for_the_report_so_far() {
    // fio's check_for_running_stats: $TMPDIR/fio-dump-status, removed when seen.
    let dir = SCRATCH.with(|d| d.path().join("tmpdir"));
    std::fs::create_dir_all(&dir).unwrap();
    let job = tmp_job("dump.fio", &SMALL_JOB.replace("runtime=5ms", "runtime=1h"));
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_blksim"))
        .args(["run", &job, "--minimal", "--yes"])
        .env("TMPDIR", &dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let file = dir.join("fio-dump-status");
    std::fs::write(&file, "").unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut first).unwrap();
    assert!(first.starts_with("3;"), "{first}");
    assert!(!file.exists(), "the file is removed when seen");
    assert!(child.try_wait().unwrap().is_none(), "the run goes on after the report");
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn every_command_has_help_and_the_tool_has_completions_and_a_man_page() {
    for command in ["run", "machines", "t-io_uring", "dsa-memfill", "reproduce", "fit", "sweep", "completions", "man"] {
        let (code, out, err) = blksim(&[command, "--help"]);
        assert_eq!(code, 0, "{command}: {err}");
        assert!(out.contains(&format!("Usage: blksim {command}")), "{command}: {out}");
    }
    let (code, out, _) = blksim(&["run", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("--output-format <FORMAT[,FORMAT]>") && out.contains("fio's command-line job form"), "{out}");
    for shell in ["bash", "zsh", "fish"] {
        let (code, out, err) = blksim(&["completions", shell]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("t-io_uring") && out.contains("output-format"), "{shell}: {out}");
    }
    let (code, out, _) = blksim(&["man"]);
    assert_eq!(code, 0);
    assert!(out.starts_with(".ie") || out.contains(".TH blksim 1"), "{out}");
    // One complete page: every command with its options, and the exit status.
    for command in ["run", "machines", "t-io_uring", "dsa-memfill", "reproduce", "fit", "sweep", "options"] {
        assert!(out.contains(&format!(".SS \"blksim {command}\"")), "{command}: {out}");
    }
    assert!(out.contains("trace\\-window") && out.contains("\\-\\-wall\\-budget"), "the commands' options: {out}");
    assert!(out.contains(".SH \"EXIT STATUS\"") && out.contains(".TP\n\\fB130\\fR\n"), "{out}");
    assert_eq!(out.matches(".el .ds Aq").count(), 1, "one preamble: {out}");
    let dir = SCRATCH.with(|d| d.path().join("man"));
    let (code, _, err) = blksim(&["man", "--dir", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let run_page = std::fs::read_to_string(dir.join("blksim-run.1")).unwrap();
    assert!(run_page.contains(".TH blksim-run 1") && run_page.contains("trace\\-window"), "{run_page}");
}

#[test]
fn fios_command_line_job_form_and_a_job_file_on_stdin_run_the_same_job() {
    let job = tmp_job("same.fio", SMALL_JOB);
    let strip = |s: &str| -> String { s.lines().filter(|l| !l.contains("wall")).collect::<Vec<_>>().join("\n") };
    let (code, from_file, err) = blksim(&["run", &job, "--output-format", "json"]);
    assert_eq!(code, 0, "{err}");
    // fio's form: --opt=VALUE, or --opt VALUE but for bare flags; blksim's own options mixed in.
    let cmdline = [
        "run",
        "--name=r",
        "--ioengine=libaio",
        "--direct=1",
        "--rw",
        "randread",
        "--output-format",
        "json",
        "--bs=4k",
        "--iodepth=8",
        "--time_based",
        "--runtime=5ms",
        "--filename=/dev/nvme0n1",
        "--cpus_allowed=0",
    ];
    let (code, from_cmdline, err) = blksim(&cmdline);
    assert_eq!(code, 0, "{err}");
    assert_eq!(strip(&from_cmdline), strip(&from_file));

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_blksim"))
        .args(["run", "-", "--output-format", "json"])
        .stdin(std::fs::File::open(&job).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(strip(&String::from_utf8_lossy(&out.stdout)), strip(&from_file));

    // A bad value is named by its argument; job files and command-line options do not mix.
    let (code, _, err) = blksim(&["run", "--name=r", "--rw=randred", "--filename=/dev/nvme0n1"]);
    assert_eq!(code, 2);
    assert!(err.starts_with("blksim: <command line>: '--rw=randred': option 'rw'"), "{err}");
    let (code, _, err) = blksim(&["run", &job, "--name=x"]);
    assert_eq!(code, 2);
    assert!(err.contains("not both"), "{err}");
    let (code, _, err) = blksim(&["run"]);
    assert_eq!(code, 2);
    assert!(err.contains("no job given"), "{err}");
}

#[test]
fn output_format_takes_fios_list_with_json_between_the_headers_and_the_results() {
    let job = tmp_job("formats.fio", SMALL_JOB);
    let (code, both, err) = blksim(&["run", &job, "--output-format=json,normal"]);
    assert_eq!(code, 0, "{err}");
    let (_, normal, _) = blksim(&["run", &job]);
    let (_, json, _) = blksim(&["run", &job, "--output-format=json"]);
    let split = normal.find("Starting 1 process\n").unwrap() + "Starting 1 process\n".len();
    let strip = |s: &str| -> String { s.lines().filter(|l| !l.contains("wall")).collect::<Vec<_>>().join("\n") };
    assert_eq!(strip(&both), strip(&format!("{}{json}{}", &normal[..split], &normal[split..])));
    let reversed = blksim(&["run", &job, "--output-format=normal,json"]).1;
    assert_eq!(strip(&reversed), strip(&both), "the order given does not matter");
    let (_, plus, _) = blksim(&["run", &job, "--output-format=json,json+"]);
    assert!(plus.contains("\"bins\""), "json+ wins over json");
    let (code, _, err) = blksim(&["run", &job, "--output-format=json,xml"]);
    assert_eq!(code, 2);
    assert!(err.contains("invalid value 'xml'"), "{err}");
}

#[test]
fn terse_lines_say_the_jsons_numbers_in_fios_order() {
    let job = tmp_job("terse.fio", SMALL_JOB);
    let (code, terse, err) = blksim(&["run", &job, "--minimal"]);
    assert_eq!(code, 0, "{err}");
    let (_, json, _) = blksim(&["run", &job, "--output-format=json"]);
    let j: serde_json::Value = serde_json::from_str(&json).unwrap();
    let r = &j["jobs"][0]["read"];
    let f: Vec<&str> = terse.trim_end().split(';').collect();
    // fio's v3 line: 5 + 2 x 41 directions + 5 CPU + 7 depths + 10 us + 12 ms, then each disk's 9.
    assert_eq!(f.len(), 121 + 9, "{terse}");
    assert_eq!((f[0], f[2], f[3], f[4]), ("3", "r", "0", "0"));
    assert_eq!(f[5].parse::<u64>().unwrap(), r["io_kbytes"].as_u64().unwrap());
    assert_eq!(f[8].parse::<u64>().unwrap(), r["runtime"].as_u64().unwrap());
    // clat (us): min, max, mean; its 17 percentiles then fio's 20 fields' padding.
    assert_eq!(f[13].parse::<u64>().unwrap(), r["clat_ns"]["min"].as_u64().unwrap() / 1000);
    let mean = f[15].parse::<f64>().unwrap();
    assert!((mean - r["clat_ns"]["mean"].as_f64().unwrap() / 1000.0).abs() < 1e-5);
    assert_eq!(f[23], format!("50.000000%={}", r["clat_ns"]["percentile"]["50.000000"].as_u64().unwrap() / 1000));
    assert_eq!(&f[34..37], ["0%=0"; 3]);
    // The write direction has no samples: fio lists its percentiles with zeros all the same.
    assert_eq!(f[46], "0");
    assert_eq!((f[58], f[74]), ("1.000000%=0", "99.990000%=0"));
    assert_eq!(&f[75..78], ["0%=0"; 3]);
    assert_eq!(&f[121..123], ["nvme0n1", &j["disk_util"][0]["read_ios"].to_string()]);
    // With the other formats: the normal report's header, the terse line, the JSON, the report.
    let (_, all, _) = blksim(&["run", &job, "--output-format=normal,json,terse"]);
    let (_, normal, _) = blksim(&["run", &job]);
    let at = all.find("\n3;").unwrap() + 1;
    assert!(normal.starts_with(&all[..at]) && all[at..].starts_with(terse.trim_end()), "{all}");
    assert_eq!(all.find("\n{").unwrap(), at + terse.trim_end().len());
    // Version 2: no version string, the trim direction, no disk statistics.
    let (code, v2, err) = blksim(&["run", &job, "--minimal", "--terse-version=2"]);
    assert_eq!(code, 0, "{err}");
    let f2: Vec<&str> = v2.trim_end().split(';').collect();
    assert_eq!(f2.len(), 4 + 3 * 41 + 5 + 7 + 10 + 12, "{v2}");
    assert_eq!((f2[0], f2[1]), ("2", "r"));
    assert_eq!(&f2[4..86], &f[5..87], "read and write as in version 3");
    let (code, _, err) = blksim(&["run", &job, "--minimal", "--terse-version=6"]);
    assert_eq!(code, 2);
    assert!(err.contains("expected one of [2, 3, 4, 5]"), "{err}");
}

#[test]
fn a_description_is_printed_where_fio_prints_it() {
    // Inherited from [global] as written (quotes kept), or the job's own; a group shows its
    // first member's: the normal report's line under the job's, the JSON's desc, terse's last field.
    let job = tmp_job(
        "described.fio",
        &format!(
            "[global]\ndescription=\"all of them\"\n{SMALL_JOB}{}description=mine\n",
            SMALL_JOB.replace("[r]", "[own]")
        ),
    );
    let (code, normal, err) = blksim(&["run", &job]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("warning"), "{err}");
    for (name, desc) in [("r", "\"all of them\""), ("own", "mine")] {
        let at = normal.find(&format!("\n{name}: (groupid=")).unwrap() + 1;
        assert_eq!(normal[at..].lines().nth(1), Some(format!("  Description  : [{desc}]").as_str()), "{normal}");
    }
    let (_, json, _) = blksim(&["run", &job, "--output-format=json"]);
    let j: serde_json::Value = serde_json::from_str(&json).unwrap();
    let keys: Vec<&String> = j["jobs"][1].as_object().unwrap().keys().collect();
    assert_eq!(keys[keys.len() - 2..], ["latency_window_us", "desc"]);
    assert_eq!((j["jobs"][0]["desc"].as_str(), j["jobs"][1]["desc"].as_str()), (Some("\"all of them\""), Some("mine")));
    let (_, terse, _) = blksim(&["run", &job, "--minimal"]);
    let last: Vec<&str> = terse.lines().map(|l| l.rsplit(';').next().unwrap()).collect();
    assert_eq!(last, ["\"all of them\"", "mine"]);
    // Without one, none of them.
    let (_, plain, _) = blksim(&["run", &tmp_job("undescribed.fio", SMALL_JOB), "--output-format=normal,json"]);
    assert!(!plain.contains("Description") && !plain.contains("\"desc\""), "{plain}");
}

#[test]
fn continue_on_error_shows_fios_error_counts_in_every_format() {
    // fio prints total_err and first_error wherever a job sets continue_on_error (0 and 0 here:
    // an I/O error under it is refused, as fio would go on past it).
    let job = tmp_job("coe.fio", &format!("{SMALL_JOB}continue_on_error=all\n"));
    let (code, normal, err) = blksim(&["run", &job]);
    assert_eq!(code, 0, "{err}");
    let issued = normal.find("issued rwts").unwrap();
    assert!(
        normal[issued..].lines().nth(1).unwrap() == "     errors    : total=0, first_error=0/<Success>",
        "{normal}"
    );
    let (_, json, _) = blksim(&["run", &job, "--output-format=json"]);
    let j: serde_json::Value = serde_json::from_str(&json).unwrap();
    let keys: Vec<&String> = j["jobs"][0].as_object().unwrap().keys().collect();
    let at = keys.iter().position(|k| *k == "total_err").expect("total_err");
    assert_eq!(keys[at - 1..at + 3], ["latency_ms", "total_err", "first_error", "latency_depth"]);
    let (_, terse, _) = blksim(&["run", &job, "--minimal", "--terse-version=2"]);
    assert!(terse.trim_end().ends_with(";0;0"), "{terse}");
    // Without it, none of them.
    let (_, plain, _) = blksim(&["run", &tmp_job("no-coe.fio", SMALL_JOB), "--output-format=normal,json"]);
    assert!(!plain.contains("errors    :") && !plain.contains("total_err"), "{plain}");
}

/// fio's sync engine reads at the file's position: `fio_syncio_prep` calls lseek(2) before an
/// io_u that does not start where the file's last one ended (`engine_pos`, 0 at open), and takes
/// the io_u's start time after it. So a random sync reader pays one more syscall per I/O than
/// psync's pread (the lseek: syscall, fdget_pos and blkdev_llseek, 175 ns on spr-gen5) outside its
/// latency, and a sequential one pays none (its first I/O is at 0, where the file opened).
#[test]
fn the_sync_engine_seeks_before_an_io_off_the_files_position() {
    let run = |engine: &str, rw: &str, extra: &str| {
        let job = format!(
            "[a]\nioengine={engine}\ndirect=1\nrw={rw}\nbs=4k\ntime_based\nruntime=20ms\n\
             filename=/dev/nullb0\ncpus_allowed=0\n{extra}"
        );
        let (code, out, err) = blksim(&["run", &tmp_job(&format!("{engine}-{rw}.fio"), &job), "--output-format=json"]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let r = &v["jobs"][0]["read"];
        (
            r["total_ios"].as_u64().unwrap(),
            r["lat_ns"]["mean"].as_f64().unwrap(),
            r["clat_ns"]["mean"].as_f64().unwrap(),
        )
    };
    let (psync, sync) = (run("psync", "randread", ""), run("sync", "randread", ""));
    let per_io = |ios: u64| 20e6 / ios as f64;
    let seek = per_io(sync.0) - per_io(psync.0);
    assert!((150.0..200.0).contains(&seek), "an lseek per random read: {seek:.0} ns ({psync:?} {sync:?})");
    // Outside fio's lat and clat: the lseek comes before the io_u's start time.
    assert!((sync.1 - psync.1).abs() < 5.0 && (sync.2 - psync.2).abs() < 5.0, "{psync:?} {sync:?}");
    // Sequential: no seek at all, the same run as psync's.
    assert_eq!(run("sync", "read", ""), run("psync", "read", ""));
    // Started away from the file's position (offset=): one seek, then none.
    let (a, b) = (run("sync", "read", "offset=1m\n"), run("psync", "read", "offset=1m\n"));
    assert!(a.0 == b.0 || a.0 + 1 == b.0, "{a:?} {b:?}");
}

/// fio's `disk_util=0`: `init_disk_util` registers none of the job's files, so fio's disk statistics
/// (the normal report's "Disk stats", the JSON's `disk_util`, terse version 3's disk fields) leave
/// out the devices only such jobs used, and are not printed at all when no job has it on (fio 3.42 on a
/// loop device: no `disk_util` key, a terse line of 121 fields against 130).
#[test]
fn disk_util_0_leaves_a_jobs_devices_out_of_fios_disk_statistics() {
    let two = "[global]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\nsize=64k\n\
               [a]\nfilename=/dev/nvme0n1\ndisk_util=0\n[b]\nfilename=/dev/nvme1n1\n";
    let job = tmp_job("du-one.fio", two);
    let (code, out, err) = blksim(&["run", &job]);
    assert_eq!(code, 0, "{err}");
    let disks = &out[out.find("Disk stats (read/write):").expect(&out)..];
    assert!(disks.contains("nvme1n1: ios=") && !disks.contains("nvme0n1"), "{disks}");
    let (_, out, _) = blksim(&["run", &job, "--output-format=json"]);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    let names: Vec<&str> = j["disk_util"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["nvme1n1"]);
    // The same device used by a job with it on is listed.
    let (_, shared, _) =
        blksim(&["run", &tmp_job("du-shared.fio", &two.replace("nvme1n1", "nvme0n1")), "--output-format=json"]);
    let j: serde_json::Value = serde_json::from_str(&shared).unwrap();
    assert_eq!(j["disk_util"][0]["name"], "nvme0n1");
    assert_eq!(j["disk_util"][0]["read_ios"], 32, "both jobs' reads: {}", j["disk_util"]);
    // Off for every job: no disk statistics in any format.
    let off = tmp_job("du-none.fio", &format!("{two}disk_util=0\n"));
    let (code, out, err) = blksim(&["run", &off]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("Disk stats"), "{out}");
    let (_, out, _) = blksim(&["run", &off, "--output-format=json"]);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(j.get("disk_util").is_none(), "{}", j["disk_util"]);
    assert_eq!(j["jobs"][0]["job options"]["disk_util"], "0", "the option is echoed as fio echoes it");
    let (_, on, _) = blksim(&["run", &job, "--minimal"]);
    let (_, none, _) = blksim(&["run", &off, "--minimal"]);
    let fields = |t: &str| t.lines().next().unwrap().split(';').count();
    assert_eq!(fields(&on), fields(&none) + 9, "{on}\n{none}");
}

#[test]
fn toml_errors_name_the_file_line_column_and_key() {
    let cases = [
        (
            "extends = \"spr-gen5\"\n[cpu]\nsockets = \"two\"\n",
            "type.toml:3:1: cpu.sockets: invalid type: string \"two\"",
        ),
        ("extends = \"spr-gen5\"\n[cpu]\nsockets = 1\n  foo = 2\n", "unknown.toml:4:3: cpu.foo: unknown field `foo`"),
        ("extends = \"spr-gen5\"\nbogus = 1\n", "top.toml:2:1: bogus: unknown field `bogus`"),
        (
            "extends = \"spr-gen5\"\n[costs]\nsyscall_ns = { ns = \"x\" }\n",
            "inline.toml:3:1: costs.syscall_ns.ns: invalid type",
        ),
        ("x = [1,\n", "syntax.toml:2:1: invalid array; expected `]`"),
    ];
    let names = ["type.toml", "unknown.toml", "top.toml", "inline.toml", "syntax.toml"];
    for ((text, want), name) in cases.iter().zip(names) {
        let path = tmp_job(name, text);
        let (code, _, err) = blksim(&["machines", &path]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(want), "want '{want}' in: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let exp = tmp_job("exp.toml", "description = \"x\"\nmachine = \"spr-gen5\"\ntolerance = \"a\"\n");
    let (code, _, err) = blksim(&["reproduce", &exp]);
    assert_eq!(code, 2);
    assert!(err.contains("exp.toml:3:13: tolerance: invalid type: string \"a\", expected f64"), "{err}");
}

#[test]
fn every_problem_of_a_job_file_is_reported_at_its_options_line_also_from_global() {
    let job = tmp_job(
        "many.fio",
        "[global]\nioengine=libaio\ndirect=1\nrw=randred\n[a]\nfilename=/dev/nvme0n1\niodepth=0\nfoo=1\n",
    );
    let (code, _, err) = blksim(&["run", &job]);
    assert_eq!(code, 2);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert!(lines[0].starts_with("blksim: ") && lines[0].contains("many.fio:4: option 'rw'"), "{err}");
    assert!(lines[1].contains("many.fio:7: option 'iodepth'") && lines[2].contains("many.fio:8: unknown option 'foo'"));
    // A problem the model finds with an option written in [global] is said at that line.
    let job = tmp_job("global.fio", "[global]\nioengine=libaio\ndirect=1\nfilename=/dev/nvme9n1\n[a]\nrw=randread\n");
    let (code, _, err) = blksim(&["run", &job]);
    assert_eq!(code, 2);
    assert!(err.contains("global.fio:4: job 'a': filename=/dev/nvme9n1"), "{err}");
}

#[test]
fn a_run_over_the_wall_budget_asks_for_yes_with_the_estimate() {
    // The 8-drive, 64-job example for an hour: hours of wall time.
    let text = std::fs::read_to_string(common::root().join("examples/bench-8drive-libaio.fio")).unwrap();
    let job = tmp_job("hour.fio", &text.replace("runtime=", "runtime=3600s\n#"));
    let (code, out, err) = blksim(&["run", &job]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains("would take about") && err.contains(" h of wall time") && err.contains("--yes"), "{err}");
    let (code, _, err) = blksim(&["run", &job, "--parse-only"]);
    assert_eq!(code, 0, "parsing needs no budget: {err}");
    let (code, _, err) = blksim(&["run", &tmp_job("small.fio", SMALL_JOB), "--wall-budget", "0.0001s"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("over the wall budget"), "{err}");
}

#[test]
fn cpu_lists_and_machine_sizes_are_bounded() {
    let job = tmp_job("bounds.fio", SMALL_JOB);
    let (code, _, err) = blksim(&["run", &job, "--set", "/proc/irq/130/smp_affinity_list=0-4294967295"]);
    assert_eq!(code, 2);
    assert!(err.contains("beyond the largest CPU number Linux supports (8191)"), "{err}");
    let profile = tmp_job("huge.toml", "extends = \"spr-gen5\"\n[cpu]\nsockets = 1000\ncores_per_socket = 1000\n");
    let (code, _, err) = blksim(&["machines", &profile]);
    assert_eq!(code, 2);
    assert!(err.contains("2000000 CPUs; Linux supports at most 8192"), "{err}");
}

#[test]
fn progress_goes_to_stderr_only_when_asked_or_a_terminal() {
    // Long enough (some 100 ms of wall time) that a line comes even on a loaded host.
    let job = tmp_job("progress.fio", &SMALL_JOB.replace("runtime=5ms", "runtime=1s"));
    // Not a terminal: nothing, unless --eta always (then lines every --eta-newline).
    let (code, out, err) = blksim(&["run", &job]);
    assert_eq!((code, err.as_str()), (0, ""));
    let (code, with_lines, err) = blksim(&["run", &job, "--eta", "always", "--eta-newline", "1ms"]);
    assert_eq!(code, 0, "{err}");
    let first = err.lines().next().unwrap_or_else(|| panic!("progress lines: {err}"));
    assert!(
        first.starts_with("blksim: virtual ") && first.contains(" of 1.00s (") && first.contains(", wall "),
        "{err}"
    );
    assert_eq!(with_lines, out, "progress changes nothing on stdout");
}

#[test]
fn status_interval_prints_the_report_so_far_at_each_interval_and_leaves_the_final_one_as_it_was() {
    // fio's --status-interval (init.c; helper_thread.c runs __show_running_run_stats, which
    // prints __show_run_stats' report with each running job's run time up to now).
    let job = tmp_job("status.fio", &SMALL_JOB.replace("runtime=5ms", "runtime=2500us"));
    let run = |extra: &[&str]| {
        let (code, out, err) = blksim(&[&["run", job.as_str(), "--seed", "3"], extra].concat());
        assert_eq!((code, err.as_str()), (0, ""), "{extra:?}");
        out
    };
    let docs = |text: &str| -> Vec<serde_json::Value> {
        serde_json::Deserializer::from_str(text).into_iter().collect::<Result<_, _>>().expect("JSON documents")
    };
    let plain = docs(&run(&["--output-format", "json"]));
    let dumped = docs(&run(&["--output-format", "json", "--status-interval", "1ms"]));
    // At 1 ms and 2 ms of the 2.5 ms run, then the final report.
    assert_eq!((plain.len(), dumped.len()), (1, 3));
    let ios: Vec<u64> = dumped.iter().map(|d| d["jobs"][0]["read"]["total_ios"].as_u64().unwrap()).collect();
    assert!(0 < ios[0] && ios[0] < ios[1] && ios[1] < ios[2], "{ios:?}");
    let runtime: Vec<u64> = dumped.iter().map(|d| d["jobs"][0]["job_runtime"].as_u64().unwrap()).collect();
    assert_eq!(&runtime[..2], [1, 2]);
    // The dumps come from a copy: the run and its final report are as without them.
    let unwalled = |mut d: serde_json::Value| {
        d["blksim"].as_object_mut().expect("the blksim object").retain(|k, _| !k.starts_with("wall"));
        d
    };
    assert_eq!(unwalled(dumped[2].clone()), unwalled(plain[0].clone()));
    // The normal output: the header once, a report per interval, the final one last.
    let normal = run(&["--status-interval", "1ms"]);
    let plain_normal = run(&[]);
    assert_eq!(normal.matches("Starting 1 process").count(), 1);
    assert_eq!(normal.matches("Run status group 0 (all jobs):").count(), 3);
    assert_eq!(normal.matches("Disk stats (read/write):").count(), 3);
    let body = &plain_normal[plain_normal.find("\nr: (groupid").unwrap()..];
    assert!(normal.ends_with(body));
    // --minimal: a terse line per report.
    assert_eq!(run(&["--minimal", "--status-interval", "1ms"]).lines().count(), 3);
    // An interval as long as the run: no report before the final one.
    assert_eq!(run(&["--status-interval", "1"]), plain_normal);
    // --output gets what stdout does.
    let file = SCRATCH.with(|d| d.path().join("status.out")).to_string_lossy().into_owned();
    assert_eq!(run(&["--status-interval", "1ms", "--output", &file]), "");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), normal);
    // The reports come out as the run takes them: the first while the run goes on.
    let long = tmp_job("status-long.fio", &SMALL_JOB.replace("runtime=5ms", "runtime=5s"));
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_blksim"))
        .args(["run", &long, "--minimal", "--status-interval", "1ms"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut first).unwrap();
    assert!(first.starts_with("3;"), "{first}");
    assert!(child.try_wait().unwrap().is_none(), "the first report came out before the run's end");
    child.kill().unwrap();
    child.wait().unwrap();
    // In the ramp, fio's counts are the ramp's (io_bytes, total_io_u, the run time from the
    // start), with no latency (reset_all_stats clears them at its end): as fio 3.42 prints them.
    let ramp = tmp_job(
        "status-ramp.fio",
        "[a]\nioengine=null\nrw=randread\nbs=4k\nsize=1g\ntime_based\nruntime=1s\nramp_time=2s\nrate_iops=1000\n",
    );
    let (code, out, err) = blksim(&["run", &ramp, "--status-interval", "1", "--output-format", "json"]);
    assert_eq!(code, 0, "{err}");
    let seen: Vec<(u64, u64, u64)> = docs(&out)
        .iter()
        .map(|d| {
            let r = &d["jobs"][0]["read"];
            (r["total_ios"].as_u64().unwrap(), r["runtime"].as_u64().unwrap(), r["clat_ns"]["N"].as_u64().unwrap())
        })
        .collect();
    // At 1 s and 2 s (the ramp not yet ended by a completion), at 3 s, then the final report.
    assert_eq!(seen, [(1000, 1000, 0), (2000, 2000, 0), (1000, 1000, 1000), (1000, 1000, 1000)]);
    // fio's bounds: at least 1 ms; anything else is bad input.
    for (value, says) in [("500us", "too small"), ("0", "too small"), ("soon", "not a time")] {
        let (code, out, err) = blksim(&["run", &job, "--status-interval", value]);
        assert_eq!((code, out.as_str()), (2, ""), "{value}");
        assert!(err.starts_with(&format!("blksim: --status-interval {value}: ")) && err.contains(says), "{err}");
    }
    // t/io_uring has no such report: taken with a note.
    let (code, _, err) = blksim(&["t-io_uring", "-r", "1ms", "--status-interval", "1", "/dev/nvme0n1"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("--status-interval 1: fio's periodic report, which t/io_uring does not have"), "{err}");
}

/// fio's --status-interval against the installed fio: a null-engine job paced at 1,000 IOPS for
/// 2.5 s with a report a second gives the same reports (two so far, then the final one) with
/// the same bandwidth samples in each (1, 3, 4: fio's 500 ms sample interval). fio's reports
/// come a second after its helper thread starts, a little before its job's start, so its run
/// times so far are a little under blksim's whole seconds.
#[cfg(feature = "crosscheck")]
#[test]
fn status_interval_gives_fios_reports_so_far() {
    let job = tmp_job(
        "status-null.fio",
        "[a]\nioengine=null\nrw=randread\nbs=4k\nsize=1g\ntime_based\nruntime=2500ms\nrate_iops=1000\n",
    );
    let args = ["--output-format=json", "--status-interval=1"];
    let fio = crosscheck::fio_tool("fio").arg(&job).args(args).output().expect("fio runs");
    assert!(fio.status.success(), "{}", String::from_utf8_lossy(&fio.stderr));
    let (code, ours, err) = blksim(&[&["run", job.as_str()], &args[..]].concat());
    assert_eq!(code, 0, "{err}");
    let reports = |text: &str| -> Vec<(u64, u64, u64)> {
        serde_json::Deserializer::from_str(text)
            .into_iter::<serde_json::Value>()
            .map(|d| {
                let r = &d.expect("a JSON document")["jobs"][0]["read"];
                (r["total_ios"].as_u64().unwrap(), r["runtime"].as_u64().unwrap(), r["bw_samples"].as_u64().unwrap())
            })
            .collect()
    };
    let (theirs, ours) = (reports(&String::from_utf8_lossy(&fio.stdout)), reports(&ours));
    assert_eq!(ours, [(1000, 1000, 1), (2000, 2000, 3), (2500, 2500, 4)]);
    assert_eq!(theirs.len(), ours.len(), "{theirs:?}");
    for (t, o) in theirs.iter().zip(&ours) {
        assert_eq!(t.2, o.2, "bandwidth samples: fio {theirs:?}, blksim {ours:?}");
        assert!(t.1.abs_diff(o.1) < 250, "run time so far: fio {theirs:?}, blksim {ours:?}");
    }
}

#[test]
fn sweep_writes_one_row_per_point_and_resumes() {
    let dir = SCRATCH.with(|d| d.path().join("sweep"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("job.fio"), SMALL_JOB.replace("runtime=5ms", "runtime=2ms")).unwrap();
    let spec = dir.join("s.toml");
    std::fs::write(
        &spec,
        "job = \"job.fio\"\n[axes]\niodepth = [1, 16]\ncmdline = [\"\", \"intremap=posted_msi\"]\n\
         \"profile.cpu.cores_per_socket\" = [4]\n",
    )
    .unwrap();
    let (code, _, err) = blksim(&["sweep", spec.to_str().unwrap(), "--jobs", "2"]);
    assert_eq!(code, 0, "{err}");
    let csv = std::fs::read_to_string(dir.join("s.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    // The axes in the spec's order (not the TOML table's name order), the last fastest.
    assert!(lines[0].starts_with("point,iodepth,cmdline,profile.cpu.cores_per_socket,iops,bw_bytes,"), "{csv}");
    assert_eq!(lines.len(), 5, "{csv}");
    for (i, l) in lines[1..].iter().enumerate() {
        let f: Vec<&str> = l.split(',').collect();
        assert_eq!(f[0], i.to_string());
        assert!(f[4].parse::<f64>().unwrap() > 0.0, "iops: {l}");
        // No error; the point's resume key (16 hex digits) last.
        let n = f.len();
        assert!(f[n - 2].is_empty() && f[n - 1].len() == 16, "no error, then the key: {l}");
        assert!(f[n - 1].chars().all(|c| c.is_ascii_hexdigit()), "{l}");
    }
    assert!(lines[0].ends_with(",error,key"), "{csv}");
    // Points 0 and 2: iodepth 1 and 16 (remappable); the deeper queue gives more IOPS.
    assert!(lines[1].starts_with("0,1,,4,") && lines[3].starts_with("2,16,,4,"), "{csv}");
    let iops = |l: &str| l.split(',').nth(4).unwrap().parse::<f64>().unwrap();
    assert!(iops(lines[3]) > 2.0 * iops(lines[1]), "{csv}");
    // The same table as Parquet beside the CSV.
    let parquet = std::fs::read(dir.join("s.parquet")).unwrap();
    assert!(parquet.starts_with(b"PAR1") && parquet.ends_with(b"PAR1") && parquet.len() > 1000);
    for column in ["point", "cmdline", "iodepth", "iops", "clat_p99_us", "error", "key"] {
        assert!(parquet.windows(column.len()).any(|w| w == column.as_bytes()), "{column} in the schema");
    }
    // A rerun with every point done runs none and writes the same file; --plot draws the metric
    // against the first axis (iodepth, as the spec writes it), a line per value of the others.
    let (code, _, err) = blksim(&["sweep", spec.to_str().unwrap(), "--plot", "--metric", "clat_p99_us"]);
    let svg = std::fs::read_to_string(dir.join("s.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("clat_p99_us against iodepth"), "{svg}");
    assert!(svg.contains("cmdline=intremap=posted_msi, profile.cpu.cores_per_socket=4"), "a line per cmdline");
    let (bad, _, e) = blksim(&["sweep", spec.to_str().unwrap(), "--plot", "--metric", "nosuch"]);
    assert!(bad == 2 && e.contains("--metric nosuch"), "{e}");
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("4 of 4 points already in") && err.contains("running the other 0"), "{err}");
    assert_eq!(std::fs::read_to_string(dir.join("s.csv")).unwrap(), csv);
    // An interrupted sweep (two rows missing) runs only those, and the result is the same.
    std::fs::write(dir.join("s.csv"), lines[..3].join("\n") + "\n").unwrap();
    let (code, _, err) = blksim(&["sweep", spec.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("running the other 2"), "{err}");
    assert_eq!(std::fs::read_to_string(dir.join("s.csv")).unwrap(), csv);
    // A changed job file changes every point's key: all run again, none is reused.
    std::fs::write(dir.join("job.fio"), SMALL_JOB.replace("runtime=5ms", "runtime=2ms").replace("bs=4k", "bs=64k"))
        .unwrap();
    let (code, _, err) = blksim(&["sweep", spec.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("0 of 4 points already in") && err.contains("running the other 4 (4 changed since"), "{err}");
    let big = std::fs::read_to_string(dir.join("s.csv")).unwrap();
    assert!(iops(big.lines().nth(1).unwrap()) < iops(lines[1]), "64 KiB reads are fewer: {big}");
    // A new value on an axis: the points whose parameters moved run again, the others are kept.
    std::fs::write(
        &spec,
        "job = \"job.fio\"\n[axes]\niodepth = [1, 16, 32]\ncmdline = [\"\", \"intremap=posted_msi\"]\n\
         \"profile.cpu.cores_per_socket\" = [4]\n",
    )
    .unwrap();
    let (code, _, err) = blksim(&["sweep", spec.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("4 of 6 points already in") && err.contains("running the other 2"), "{err}");
    assert_eq!(std::fs::read_to_string(dir.join("s.csv")).unwrap().lines().count(), 7);
    // Different axes: different columns, so nothing of the old file is kept.
    std::fs::write(&spec, "job = \"job.fio\"\n[axes]\niodepth = [1, 16]\n").unwrap();
    let (code, _, err) = blksim(&["sweep", spec.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("columns are not this spec's") && !err.contains("already in"), "{err}");
    // A point over the wall budget is refused before any runs.
    let refused = dir.join("refused.csv");
    let (code, _, err) =
        blksim(&["sweep", spec.to_str().unwrap(), "--wall-budget", "0", "--output", refused.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(!refused.exists(), "nothing ran");
    assert!(err.contains("2 of 2 points are over the wall budget (point 0 would take about"), "{err}");
    // A bad point is a row with its error, and exit 2; a rerun runs it again.
    std::fs::write(dir.join("bad.csv"), "").unwrap();
    std::fs::write(&spec, "job = \"job.fio\"\n[axes]\nrw = [\"randread\", \"randred\"]\n").unwrap();
    let (code, _, err) = blksim(&["sweep", spec.to_str().unwrap(), "--output", dir.join("bad.csv").to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("1 of 2 points failed"), "{err}");
    let bad = std::fs::read_to_string(dir.join("bad.csv")).unwrap();
    assert!(bad.lines().nth(2).unwrap().contains("randred"), "{bad}");
    let (code, _, err) = blksim(&["sweep", spec.to_str().unwrap(), "--output", dir.join("bad.csv").to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("1 of 2 points already in") && err.contains("1 failed before"), "{err}");
}

#[test]
fn a_pasted_proc_cmdline_runs_with_a_warning_unless_a_parameter_changes_the_path() {
    let job = tmp_job("cmdline.fio", SMALL_JOB);
    let real = "BOOT_IMAGE=/vmlinuz-6.8 root=UUID=1234 ro quiet intel_iommu=on mitigations=off intremap=posted_msi";
    let (code, out, err) = blksim(&["run", &job, "--cmdline", real]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("read: IOPS="));
    assert!(err.contains("ignored, not modelled") && err.contains("BOOT_IMAGE, root, ro, quiet, mitigations"), "{err}");
    for refused in ["isolcpus=2", "nohz_full=1-3", "nvme.max_host_mem_size_mb=0"] {
        let (code, _, err) = blksim(&["run", &job, "--cmdline", refused]);
        assert_eq!(code, 2, "{refused}: {err}");
        assert!(err.contains(refused) && err.contains("does not model"), "{err}");
    }
}

#[test]
fn a_ramp_resets_the_depths_the_cpu_time_and_the_run_time_as_fio_does() {
    // fio's first io_completed past ramp_time zeroes io_u_map, the batch
    // counts and the rusage and restarts the epoch (reset_all_stats,
    // reset_io_stats): the report covers the 5 ms after the ramp only.
    let plain = tmp_job("ramp0.fio", SMALL_JOB);
    let ramped = tmp_job("ramp1.fio", &format!("{SMALL_JOB}ramp_time=5ms\n"));
    let json = |job: &str| -> serde_json::Value {
        let (code, out, err) = blksim(&["run", job, "--output-format", "json"]);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap()
    };
    let (a, b) = (json(&plain), json(&ramped));
    let (a, b) = (&a["jobs"][0], &b["jobs"][0]);
    let depth_sum = |j: &serde_json::Value| -> f64 {
        j["iodepth_level"].as_object().unwrap().values().map(|v| v.as_f64().unwrap()).sum()
    };
    assert!((depth_sum(a) - 100.0).abs() < 0.5, "{}", a["iodepth_level"]);
    assert!((depth_sum(b) - 100.0).abs() < 0.5, "{}", b["iodepth_level"]);
    assert_eq!(b["job_runtime"], a["job_runtime"]);
    let ctx = |j: &serde_json::Value| j["ctx"].as_f64().unwrap();
    assert!((ctx(b) / ctx(a) - 1.0).abs() < 0.1, "ctx {} vs {}", ctx(a), ctx(b));
    let sys = |j: &serde_json::Value| j["sys_cpu"].as_f64().unwrap();
    assert!((sys(b) / sys(a) - 1.0).abs() < 0.1, "sys {} vs {}", sys(a), sys(b));
}
