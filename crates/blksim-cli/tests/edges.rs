//! Inputs at the edges, each a case a fuzzer or a new user found (issue 23):
//! every one ends with the right exit status and one clear line, or with
//! fio's behaviour where fio accepts it; never a panic, a lost report or
//! an answer that looks right and is not.

use std::process::{Command, Output, Stdio};
use std::time::Duration;

mod common;
use common::blksim;

thread_local! {
    /// This test thread's scratch directory, removed when the thread (the test) ends.
    static SCRATCH: tempfile::TempDir = tempfile::Builder::new().prefix("blksim-edges-").tempdir().unwrap();
}

fn tmp(name: &str, text: &str) -> String {
    let p = SCRATCH.with(|d| d.path().join(name));
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

const JOB: &str =
    "[r]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\niodepth=8\ntime_based\nruntime=2ms\nfilename=/dev/nvme0n1\n";

fn json(out: &str) -> serde_json::Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

#[test]
fn bsrange_0_0_is_fios_default_block_size() {
    // fio takes a zero range as unset: 4 KiB I/Os.
    let sized =
        tmp("bs0.fio", "[a]\nioengine=libaio\ndirect=1\nrw=randread\nbsrange=0-0\nsize=1m\nfilename=/dev/nvme0n1\n");
    let (code, out, err) = blksim(&["run", &sized, "--output-format", "json"]);
    assert_eq!(code, 0, "{err}");
    let read = &json(&out)["jobs"][0]["read"];
    assert_eq!((read["total_ios"].as_u64(), read["io_bytes"].as_u64()), (Some(256), Some(1 << 20)), "{read}");
    let zoned = tmp(
        "bs0z.fio",
        "[a]\nioengine=libaio\ndirect=1\nrw=randread\nbsrange=0-0\nrandom_distribution=zoned_abs:60/1m:40/2m\nnumber_ios=64\nfilename=/dev/nvme0n1\n",
    );
    let (code, _, err) = blksim(&["run", &zoned]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn sqpoll_with_a_trace_writes_the_trace() {
    let job = tmp("sq.fio", &JOB.replace("ioengine=libaio", "ioengine=io_uring\nsqthread_poll=1"));
    let trace = SCRATCH.with(|d| d.path().join("t.json"));
    let (code, _, err) = blksim(&["run", &job, "--trace", trace.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let t = json(&std::fs::read_to_string(&trace).unwrap());
    assert!(t["traceEvents"].as_array().is_some_and(|e| !e.is_empty()), "{t}");
}

#[test]
fn sweep_plot_needs_an_axis_and_a_metric_before_anything_runs() {
    let dir = SCRATCH.with(|d| d.path().to_path_buf());
    std::fs::write(dir.join("job.fio"), JOB).unwrap();
    let spec = tmp("empty.toml", "job = \"job.fio\"\n[axes]\n");
    let (code, _, err) = blksim(&["sweep", &spec, "--plot"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("has no axis to draw iops against (its [axes] table is empty)"), "{err}");
    assert!(!dir.join("empty.csv").exists(), "nothing ran");
}

#[test]
fn t_io_uring_refuses_a_block_size_fio_cannot_take() {
    for bs in ["4294967296", "5g"] {
        let (code, _, err) = blksim(&["t-io_uring", "-b", bs, "/dev/nvme0n1"]);
        assert_eq!(code, 2, "-b {bs}: {err}");
        assert!(err.starts_with("blksim: t/io_uring: -b") && err.contains("bad value"), "{err}");
    }
}

#[test]
fn the_null_engine_needs_a_size_as_in_fio() {
    let job = tmp("null.fio", "[n]\nioengine=null\nrw=randread\ntime_based\nruntime=1ms\n");
    let (code, _, err) = blksim(&["run", &job]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("you need to specify size="), "{err}");
}

#[test]
fn a_closed_stdout_is_an_error() {
    let job = tmp("closed.fio", JOB);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_blksim"));
    cmd.args(["run", &job]).current_dir(common::root()).stderr(Stdio::piped());
    // `>&-`: no file descriptor 1 at all.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            libc::close(1);
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("stdout"), "{err}");
}

#[test]
fn jobs_that_fail_exit_1_not_2() {
    let job = tmp("eop.fio", &JOB.replace("ioengine=libaio", "ioengine=io_uring\nhipri=1\nnumjobs=2"));
    let cmdline = "nvme.poll_queues=0 blksim.polled_unsupported=eopnotsupp";
    let (code, _, err) = blksim(&["run", &job, "--cmdline", cmdline]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("blksim: 2 of 2 jobs ended on an I/O error"), "{err}");
}

/// fio's check_min_rate: a null job that thinks 20 ms after each read does 50 a second; with
/// `rate_iops_min=100` the check 2 s in starts the cycle and the one 1 s later finds 50, and
/// the job ends with EIO (fio 3.42: exit 1, "c: rate_iops_min=100 not met, got 49 IOPS",
/// err=5 in its JSON, 150 reads in 3,011 ms). A job at its minimum runs to its end.
#[test]
fn a_job_below_its_minimum_rate_ends_with_eio_after_a_cycle() {
    let job = "[c]\nioengine=null\nfilename=c\nsize=1g\nrw=randread\nbs=4k\nthinktime=20000\n\
               rate_iops_min=100\nruntime=5s\ntime_based\n";
    let path = tmp("min-rate.fio", job);
    let (code, out, err) = blksim(&["run", &path, "--output-format", "json"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("c: rate_iops_min=100 not met, got 50 IOPS\n"), "{err}");
    assert!(err.contains("fio: pid=1001, err=5/file:backend.c:1297, func=check_min_rate, error=Input/output error"));
    assert!(err.contains("blksim: 1 of 1 jobs ended below their minimum rate"), "{err}");
    let j = &json(&out)["jobs"][0];
    assert_eq!(j["error"], 5);
    assert_eq!(j["job_runtime"], 3000, "ended at the check 3 s in, not at runtime=5s");
    assert_eq!(j["read"]["total_ios"], 151);
    // Bytes: 4 KiB reads at 50 a second are 200 KiB/s, below 1 MiB/s.
    let bytes = tmp("min-rate-bytes.fio", &job.replace("rate_iops_min=100", "rate_min=1m"));
    let (code, _, err) = blksim(&["run", &bytes]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("c: rate_min=1048576B/s not met, got 204800B/s\n"), "{err}");
    // Both directions below the minimum: fio checks each and logs each (fio 3.42, randrw:
    // "got 29 IOPS", then "got 19 IOPS", err=5 at 3,011 ms).
    let mixed = tmp("min-rate-rw.fio", &job.replace("rw=randread", "rw=randrw"));
    let (code, _, err) = blksim(&["run", &mixed]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("c: rate_iops_min=100 not met, got 31 IOPS\nc: rate_iops_min=100 not met, got 19 IOPS\n"),
        "{err}"
    );
    // 50 a second meets a minimum of 50, and a cycle of 10 s is never over before the end.
    for ok in ["rate_iops_min=50", "rate_iops_min=100\nrate_cycle=10000"] {
        let met = tmp("min-rate-met.fio", &job.replace("rate_iops_min=100", ok));
        let (code, out, err) = blksim(&["run", &met, "--output-format", "json"]);
        assert_eq!(code, 0, "{ok}: {err}");
        assert_eq!(json(&out)["jobs"][0]["job_runtime"], 5000, "{ok}");
    }
}

/// An error under an option that changes what follows it is refused when it happens (exit 2,
/// naming the option): fio goes on past an I/O error with continue_on_error or ignore_error.
/// continue_on_error does not touch check_min_rate's error; exitall_on_error is modelled: the
/// failed job's end ends the others of its group (fio's fio_terminate_threads), and the run
/// exits 1 for the failed job.
#[test]
fn an_error_under_an_error_handling_option_is_refused_when_it_happens() {
    let job =
        tmp("eop-continue.fio", &JOB.replace("ioengine=libaio", "ioengine=io_uring\nhipri=1\ncontinue_on_error=io"));
    let cmdline = "nvme.poll_queues=0 blksim.polled_unsupported=eopnotsupp";
    let (code, _, err) = blksim(&["run", &job, "--cmdline", cmdline]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("an I/O error (errno 95) on a read: with continue_on_error=io fio may go on past it"),
        "{err}"
    );
    let slow = "[c]\nioengine=null\nfilename=c\nsize=1g\nrw=randread\nbs=4k\nthinktime=20000\n\
                rate_iops_min=100\nruntime=5s\ntime_based\n";
    let other = "[d]\nioengine=null\nfilename=d\nsize=1g\nrw=read\nruntime=5s\ntime_based\n";
    for (name, text) in [
        ("exitall-alone.fio", format!("{slow}exitall_on_error\n")),
        ("continue-rate.fio", format!("{slow}continue_on_error=all\n")),
    ] {
        let (code, _, err) = blksim(&["run", &tmp(name, &text)]);
        assert_eq!(code, 1, "{name}: {err}");
    }
    let text = format!("{slow}exitall_on_error\n{other}");
    let (code, out, err) = blksim(&["run", &tmp("exitall-others.fio", &text), "--output-format", "json"]);
    assert_eq!(code, 1, "{err}");
    let v = json(&out);
    let runtime = |i: usize| v["jobs"][i]["job_runtime"].as_u64().unwrap();
    // d, time-based for 5 s, ends when c fails (within the I/O it had in flight).
    assert!(runtime(0) < 5000 && runtime(1).abs_diff(runtime(0)) <= 1, "{} {}", runtime(0), runtime(1));
}

/// `max_latency`: a measured I/O whose `lat` is over the direction's maximum ends its job
/// with ETIMEDOUT, as fio's `lat_fatal` does (its log line as fio prints it, err=110 from
/// io_u.c:1551, exit 1); the I/O itself completes and counts, and so do those in flight.
/// A maximum no I/O reaches, or one for another direction, changes nothing.
#[test]
fn an_io_over_max_latency_ends_its_job_with_etimedout() {
    let job = |max: &str| {
        format!(
            "[a]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\niodepth=4\nfilename=/dev/nvme0n1\n\
             number_ios=5000\nmax_latency={max}\n"
        )
    };
    let (code, out, err) = blksim(&["run", &tmp("max-lat.fio", &job("20us")), "--output-format", "json"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("fio: latency of ")
            && err.contains(" nsec exceeds specified max (20000 nsec): /dev/nvme0n1 read ")
    );
    assert!(err.contains("ended on an I/O over their max_latency"), "{err}");
    let v = json(&out);
    assert_eq!(v["jobs"][0]["error"], 110);
    let ios = v["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    assert!((1..=8).contains(&ios), "{ios}");
    for (name, max) in [("max-lat-far.fio", "1s"), ("max-lat-write.fio", "0,10us")] {
        let (code, out, err) = blksim(&["run", &tmp(name, &job(max)), "--output-format", "json"]);
        assert_eq!(code, 0, "{name}: {err}");
        assert_eq!(json(&out)["jobs"][0]["read"]["total_ios"], 5000, "{name}");
    }
}

/// `exitall` as fio's `fio_terminate_threads` does it, with each `exit_what` (the jobs' ends
/// checked against fio 3.42 on the null engine): when `short` ends, `group` ends the jobs of
/// its group (`long`), `stonewall` the jobs running (`long` and `other`, of a group of its
/// own), `all` every job, so the next stonewall group's `later` starts and ends with no I/O.
/// `exitall=0` turns it on too, as in fio.
#[test]
fn exitall_ends_the_jobs_exit_what_names() {
    for (what, other_ends, later_ios) in [("group", false, 500), ("stonewall", true, 500), ("all", true, 0)] {
        let text = format!(
            "[global]\nioengine=null\nbs=4k\nsize=1g\nrw=randread\nexit_what={what}\n\
             [short]\nfilename=a\nnumber_ios=2000\nthinktime=10\nexitall=0\n\
             [long]\nfilename=b\ntime_based\nruntime=1s\n\
             [other]\nnew_group\nfilename=c\ntime_based\nruntime=1s\n\
             [later]\nstonewall\nfilename=d\nnumber_ios=500\n"
        );
        let (code, out, err) = blksim(&["run", &tmp(&format!("exitall-{what}.fio"), &text), "--output-format", "json"]);
        assert_eq!(code, 0, "{what}: {err}");
        let v = json(&out);
        let runtime = |i: usize| v["jobs"][i]["job_runtime"].as_u64().unwrap();
        let ios = |i: usize| v["jobs"][i]["read"]["total_ios"].as_u64().unwrap();
        assert_eq!(ios(0), 2000, "{what}");
        assert!(runtime(0) < 1000 && runtime(1).abs_diff(runtime(0)) <= 1, "{what}: long {}", runtime(1));
        assert_eq!(runtime(2).abs_diff(runtime(0)) <= 1, other_ends, "{what}: other {}", runtime(2));
        assert_eq!(ios(3), later_ios, "{what}");
    }
}

#[test]
fn json_stays_json_with_the_tables() {
    let job = tmp("tables.fio", JOB);
    for table in ["--interrupts", "--iostat", "--mpstat", "--breakdown"] {
        let (code, out, err) = blksim(&["run", &job, "--output-format", "json", table]);
        assert_eq!(code, 0, "{table}: {err}");
        json(&out);
        assert!(err.lines().count() > 2, "{table}: the table goes to stderr: {err}");
    }
}

#[test]
fn every_device_kind_is_under_the_wall_budget() {
    // Whole-device jobs: hours of simulation on any kind of device.
    let whole = |file: &str, engine: &str| format!("[w]\n{engine}\nrw=read\nbs=4k\nfilename={file}\n");
    for (machine, file, engine) in [
        ("spr-gen5", "/dev/nvme0n1", "ioengine=libaio\ndirect=1"),
        ("spr-gen5", "/dev/nullb0", "ioengine=libaio\ndirect=1"),
        ("spr-gen5", "/dev/ng0n1", "ioengine=io_uring_cmd\ncmd_type=nvme"),
        ("hp-ia64-2008", "/dev/sda", "ioengine=libaio\ndirect=1"),
    ] {
        let job = tmp("whole.fio", &whole(file, engine));
        let (code, _, err) = blksim(&["run", &job, "--machine", machine, "--wall-budget", "1s"]);
        assert_eq!(code, 2, "{file}: {err}");
        assert!(err.contains("would take about") && err.contains("over the wall budget of 1.0 s"), "{file}: {err}");
    }
    // reproduce applies it to each case.
    let (code, _, err) = blksim(&["reproduce", "single-core-iops", "--wall-budget", "0"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("would take about") && err.contains("over the wall budget of 0.0 s"), "{err}");
}

/// Run `blksim ARGS`, and once it catches `sig` (its bit in SigCgt of
/// /proc/PID/status) and has run a little, send it `sig`.
fn signalled(args: &[&str], sig: i32) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_blksim"))
        .args(args)
        .current_dir(common::root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    common::wait_until_it_catches(&mut child, sig);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
    child.wait_with_output().unwrap()
}

#[test]
fn sigterm_and_sighup_print_the_report_so_far() {
    let job = tmp("long.fio", &JOB.replace("runtime=2ms", "runtime=1h"));
    for (sig, name) in [(libc::SIGTERM, "SIGTERM"), (libc::SIGHUP, "SIGHUP")] {
        let out = signalled(&["run", &job, "--output-format", "json", "--yes"], sig);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "{err}");
        assert!(err.starts_with(&format!("blksim: interrupted ({name}) at ")), "{err}");
        let doc = json(&String::from_utf8_lossy(&out.stdout));
        assert!(doc["jobs"][0]["read"]["total_ios"].as_u64().unwrap() > 0);
    }
}

#[test]
fn ctrl_c_stops_dsa_memfill_cleanly() {
    let out = signalled(&["dsa-memfill", "--runtime", "3600s", "--yes"], libc::SIGINT);
    let err = String::from_utf8_lossy(&out.stderr);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.starts_with("blksim: interrupted (Ctrl-C) at "), "{err}");
    assert!(!text.is_empty(), "the rates so far: {err}");
}

#[test]
fn ctrl_c_stops_a_sweep_which_a_rerun_finishes() {
    let dir = SCRATCH.with(|d| d.path().to_path_buf());
    // Points of about a second (the longest first), so that the signal comes during the first.
    std::fs::write(dir.join("job.fio"), JOB.replace("runtime=2ms", "runtime=2s")).unwrap();
    let spec = tmp("long.toml", "job = \"job.fio\"\n[axes]\niodepth = [1, 2, 4, 8, 16, 32]\n");
    let out = signalled(&["sweep", &spec, "--jobs", "1"], libc::SIGINT);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(last.starts_with("blksim: interrupted (Ctrl-C): ") && last.contains("of 6 points done"), "{err}");
    let csv = std::fs::read_to_string(dir.join("long.csv")).unwrap();
    let done = csv.lines().count() - 1;
    assert!(done < 6, "{csv}");
    assert!(!dir.join("long.parquet").exists(), "no Parquet for a sweep not done");
    let (code, _, err) = blksim(&["sweep", &spec]);
    assert_eq!(code, 0, "{err}");
    assert!(done == 0 || err.contains(&format!("{done} of 6 points already in")), "{err}");
    assert_eq!(std::fs::read_to_string(dir.join("long.csv")).unwrap().lines().count(), 7);
}

#[test]
fn a_patch_that_changes_nothing_says_so() {
    let job = tmp("patch.fio", JOB);
    let (code, _, err) = blksim(&["run", &job, "--patch", "mq-deadline-2024"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("warning: --patch mq-deadline-2024 changed nothing in this run"), "{err}");
    let set = "/sys/block/nvme0n1/queue/scheduler=mq-deadline";
    let (code, _, err) = blksim(&["run", &job, "--patch", "mq-deadline-2024", "--set", set]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("changed nothing"), "{err}");
}

#[test]
fn a_directory_without_a_device_is_refused_for_that() {
    let job = tmp("dir.fio", "[d]\ndirectory=/tmp\nrw=randread\nsize=1g\ntime_based\nruntime=1h\n");
    let (code, _, err) = blksim(&["run", &job]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("dir.fio:2: job 'd': directory=/tmp without filename=") && !err.contains("wall"), "{err}");
    // directory= as a prefix of a device name works.
    let job = tmp("dev.fio", "[d]\ndirectory=/dev\nfilename=nvme0n1\ndirect=1\nrw=randread\ntime_based\nruntime=1ms\n");
    let (code, _, err) = blksim(&["run", &job]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_mistyped_option_on_the_command_line_gets_the_job_files_message() {
    let base = ["run", "--name=a", "--rw=randread", "--filename=/dev/nvme0n1", "--direct=1"];
    let (code, _, err) = blksim(&[&base[..], &["--iodeph=32"]].concat());
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.trim_end(), "blksim: unknown option '--iodeph' (fio: Bad option); did you mean '--iodepth'?");
    let (code, _, err) = blksim(&[&base[..], &["--append-terse"]].concat());
    assert_eq!(code, 2, "{err}");
    assert!(err.starts_with("blksim: --append-terse: fio's terse lines after the normal output"), "{err}");
    // fio's --minimal is blksim's too: the terse line of the command-line job.
    let (code, out, err) = blksim(&[&base[..], &["--size=1m", "--minimal"]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("3;") && out.lines().count() == 1 && out.contains(";a;0;0;1024;"), "{out}");
    // One of blksim's own options, mistyped.
    let (code, _, err) = blksim(&[&base[..], &["--outptu", "x.json"]].concat());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("did you mean '--output'?"), "{err}");
}

/// Run `blksim ARGS` in `dir`: its exit status and its peak resident memory, KiB (wait4's ru_maxrss).
// The child is reaped by wait4 (for its rusage), which clippy does not see.
#[allow(clippy::zombie_processes)]
fn peak_kib(args: &[&str], dir: &std::path::Path) -> (i32, i64) {
    let child = Command::new(env!("CARGO_BIN_EXE_blksim"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (mut status, mut usage) = (0, unsafe { std::mem::zeroed::<libc::rusage>() });
    // SAFETY: waits for our own child, into locals.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    (libc::WEXITSTATUS(status), usage.ru_maxrss)
}

#[test]
fn a_logged_run_holds_its_windows_not_its_ios() {
    // fio's logs of a job of millions of I/Os: the memory stays what a short run takes (once every
    // I/O was kept until the end: 40 bytes each, 2.6 GB for a long run).
    let dir = SCRATCH.with(|d| d.path().join("mem"));
    std::fs::create_dir_all(&dir).unwrap();
    let job = |runtime: &str| {
        format!(
            "[m]\nioengine=null\nrw=randread\nsize=1g\ntime_based\nruntime={runtime}\nwrite_lat_log=m\nwrite_bw_log=m\n\
             write_iops_log=m\nwrite_hist_log=m\nlog_hist_msec=100\nlog_avg_msec=100\n"
        )
    };
    std::fs::write(dir.join("short.fio"), job("300ms")).unwrap();
    std::fs::write(dir.join("long.fio"), job("3s")).unwrap();
    let (code, short) = peak_kib(&["run", "short.fio"], &dir);
    assert_eq!(code, 0);
    let (code, long) = peak_kib(&["run", "long.fio", "--yes"], &dir);
    assert_eq!(code, 0);
    let lines = std::fs::read_to_string(dir.join("m_lat.1.log")).unwrap().lines().count();
    assert_eq!(lines, 30, "a line per 100 ms window");
    // The long run does 4 M I/Os more (160 MB of records as they were kept).
    assert!(long - short < 16 * 1024, "peak {short} KiB for 300 ms, {long} KiB for 3 s");
}

#[test]
fn a_log_file_that_cannot_be_made_is_named_in_one_line() {
    for opt in ["write_iolog=/nonexistent-blksim/trace", "write_bw_log=/nonexistent-blksim/b\nper_job_logs=0"] {
        let job = tmp("nolog.fio", &format!("[a]\nioengine=null\nrw=randread\nsize=64k\n{opt}\n"));
        let (code, _, err) = blksim(&["run", &job]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("/nonexistent-blksim/") && err.contains("No such file"), "{err}");
        assert!(!err.contains(".blksim-log-"), "names a temporary file: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}

#[test]
fn io_uring_cmd_needs_no_direct_and_refuses_it_as_fios_open_does() {
    // fio's own examples (uring-cmd-ng.fio) leave direct unset: passthrough
    // commands bypass the page cache. With direct=1 fio opens /dev/ngXnY
    // with O_DIRECT, which a character device refuses (EINVAL).
    let ng = "[p]\nioengine=io_uring_cmd\ncmd_type=nvme\nrw=randread\niodepth=8\nsize=1m\nfilename=/dev/ng0n1\n";
    let (code, out, err) = blksim(&["run", &tmp("ng.fio", ng), "--output-format", "json"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["jobs"][0]["read"]["total_ios"].as_u64(), Some(256));
    let (code, _, err) = blksim(&["run", &tmp("ngd.fio", &format!("{ng}direct=1\n"))]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("ngd.fio:8") && err.contains("O_DIRECT") && err.contains("EINVAL"), "{err}");
    // Its block size must be whole logical blocks, as fio checks at open.
    let (code, _, err) = blksim(&["run", &tmp("ngb.fio", &format!("{ng}bs=1000\n"))]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("bs=1000") && err.contains("multiple of LBA data size"), "{err}");
}

#[test]
fn passthrough_requests_go_past_the_namespaces_scheduler() {
    // blk_mq_insert_request puts a passthrough request on hctx->dispatch, past the
    // scheduler (no merge, no insertion, no RQF_USE_SCHED): with mq-deadline set, NVMe
    // passthrough never takes dd->lock, where io_uring on the block device inserts and
    // dispatches through it; each I/O completes once either way.
    let sched = ["--set", "/sys/block/nvme0n1/queue/scheduler=mq-deadline", "--output-format", "json"];
    let dd_lock = |name: &str, job: &str| {
        let (code, out, err) = blksim(&[&["run", &tmp(name, job)][..], &sched].concat());
        assert_eq!(code, 0, "{name}: {err}");
        let v = json(&out);
        assert_eq!(v["jobs"][0]["read"]["total_ios"].as_u64(), Some(256), "{name}");
        let once = &v["blksim"]["exactly_once"];
        assert_eq!(once["ios_issued"], once["ios_reaped"], "{name}: {once}");
        let locks = v["blksim"]["locks"].as_array().unwrap().clone();
        let dd = locks.iter().find(|l| l["name"] == "nvme0n1 dd->lock").unwrap_or_else(|| panic!("{name}: {locks:?}"));
        dd["acquisitions"].as_u64().unwrap()
    };
    let job = "[p]\nrw=randread\niodepth=8\nsize=1m\n";
    let ng = dd_lock("ngs.fio", &format!("{job}ioengine=io_uring_cmd\ncmd_type=nvme\nfilename=/dev/ng0n1\n"));
    let blk = dd_lock("blk.fio", &format!("{job}ioengine=io_uring\ndirect=1\nfilename=/dev/nvme0n1\n"));
    assert_eq!(ng, 0, "passthrough took dd->lock");
    assert!(blk >= 256, "io_uring's requests go through mq-deadline: {blk}");
}

#[test]
fn passthrough_is_not_in_the_disk_statistics_and_fio_lists_no_disk_for_a_char_device() {
    // Linux leaves passthrough commands out of a disk's statistics
    // (blk_account_io_start, iostats_passthrough off), and fio's disk util
    // finds no disk for a char device (get_device_numbers): an io_uring_cmd
    // job on /dev/ng0n1 prints no disk stats. blksim's own counts still see
    // the device's requests and MSIs.
    let job = "[p]\nrw=randread\niodepth=8\nsize=1m\n";
    let ng = tmp("ng-stats.fio", &format!("{job}ioengine=io_uring_cmd\ncmd_type=nvme\nfilename=/dev/ng0n1\n"));
    let (code, out, err) = blksim(&["run", &ng, "--output-format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v = json(&out);
    assert!(v.get("disk_util").is_none(), "{}", v["disk_util"]);
    let disk = &v["blksim"]["disks"][0];
    assert_eq!((disk["ios"].as_u64(), disk["requests"].as_u64()), (Some(0), Some(256)), "{disk}");
    assert!(disk["device_msis"].as_u64().unwrap() > 0 && disk["ios_per_msi"].as_f64().unwrap() >= 1.0, "{disk}");
    let (code, out, err) = blksim(&["run", &ng]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("Disk stats"), "{out}");
    // The same reads through the block device are in them.
    let blk = tmp("blk-stats.fio", &format!("{job}ioengine=io_uring\ndirect=1\nfilename=/dev/nvme0n1\n"));
    let (code, out, err) = blksim(&["run", &blk, "--output-format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v = json(&out);
    assert_eq!(v["disk_util"][0]["read_ios"].as_u64(), Some(256), "{}", v["disk_util"]);
}

#[test]
fn ioscheduler_switches_the_jobs_devices_as_a_sysfs_write_before_the_run_does() {
    // fio writes `ioscheduler` to queue/scheduler as the job sets up, before its I/O: the run is
    // the one with that scheduler set beforehand, byte for byte.
    let with = |extra: &str| format!("{JOB}iodepth=32\n{extra}");
    let set = "/sys/block/nvme0n1/queue/scheduler=kyber";
    let (code, by_set, err) = blksim(&["run", &tmp("set.fio", &with("")), "--output-format", "json", "--set", set]);
    assert_eq!(code, 0, "{err}");
    let (code, by_job, err) =
        blksim(&["run", &tmp("job.fio", &with("ioscheduler=kyber\n")), "--output-format", "json"]);
    assert_eq!(code, 0, "{err}");
    let (set_v, job) = (json(&by_set), json(&by_job));
    assert_eq!(job["blksim"]["schedulers"][0]["scheduler"], "kyber", "{}", job["blksim"]["schedulers"]);
    assert_eq!(job["jobs"][0]["read"], set_v["jobs"][0]["read"]);
    let (code, plain, err) = blksim(&["run", &tmp("plain.fio", &with("")), "--output-format", "json"]);
    assert_eq!(code, 0, "{err}");
    assert_ne!(json(&plain)["jobs"][0]["read"], job["jobs"][0]["read"], "kyber changes the run");
    // The null engine is diskless: fio switches nothing, whatever the name.
    let null = tmp("null.fio", "[n]\nioengine=null\nsize=1m\nioscheduler=cfq\n");
    let (code, _, err) = blksim(&["run", &null]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn ioscheduler_names_the_kernel_or_fio_refuses_are_refused_at_the_line() {
    for (name, code, says) in [
        ("cfq", 2, "the kernel has no scheduler 'cfq'"),
        ("deadline", 2, "shows [mq-deadline], not [deadline]"),
        ("bfq", 2, "the bfq scheduler is not modelled yet"),
    ] {
        let f = tmp(&format!("sched-{name}.fio"), &format!("{JOB}ioscheduler={name}\n"));
        let (got, _, err) = blksim(&["run", &f]);
        assert_eq!(got, code, "{name}: {err}");
        assert!(err.contains(":10: job 'r': ioscheduler=") && err.contains(says), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
    }
    // mq-deadline in use already: the alias still fails fio's read-back.
    let f = tmp("sched-alias.fio", &format!("{JOB}ioscheduler=deadline\n"));
    let (got, _, err) = blksim(&["run", &f, "--set", "/sys/block/nvme0n1/queue/scheduler=mq-deadline"]);
    assert_eq!(got, 2, "{err}");
    assert!(err.contains("shows [mq-deadline], not [deadline]"), "{err}");
}

#[test]
fn ioscheduler_may_not_switch_a_device_under_earlier_io() {
    // A later stonewall group switching a device an earlier group used: the model keeps one
    // scheduler per device for the run.
    let two = |second: &str| {
        format!(
            "[global]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\ntime_based\nruntime=1ms\n\
             [first]\nfilename=/dev/nvme0n1\n[second]\nstonewall\nfilename={second}\nioscheduler=mq-deadline\n"
        )
    };
    let (code, _, err) = blksim(&["run", &tmp("later.fio", &two("/dev/nvme0n1"))]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("switches /dev/nvme0n1 from none to mq-deadline after I/O already ran on it"), "{err}");
    // Another device, or the scheduler already in use: nothing to refuse.
    let (code, _, err) = blksim(&["run", &tmp("other.fio", &two("/dev/nvme1n1"))]);
    assert_eq!(code, 0, "{err}");
    let set = "/sys/block/nvme0n1/queue/scheduler=mq-deadline";
    let (code, _, err) = blksim(&["run", &tmp("same.fio", &two("/dev/nvme0n1")), "--set", set]);
    assert_eq!(code, 0, "{err}");
    // A job started late by startdelay switches under the I/O of its group's others.
    let late = "[global]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\ntime_based\nruntime=1ms\n\
                filename=/dev/nvme0n1\n[a]\n[b]\nstartdelay=500us\nioscheduler=kyber\n";
    let (code, _, err) = blksim(&["run", &tmp("late.fio", late)]);
    assert_eq!(code, 2, "{err}");
    // Jobs set up together: the last one's write is what the group's I/O meets.
    let both = "[global]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\ntime_based\nruntime=1ms\n\
                filename=/dev/nvme0n1\n[a]\nioscheduler=mq-deadline\n[b]\nioscheduler=kyber\n";
    let (code, out, err) = blksim(&["run", &tmp("both.fio", both), "--output-format", "json"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["blksim"]["schedulers"][0]["scheduler"], "kyber");
}

/// A `latency_target` job's JSON and exit status.
fn latency_target_run(name: &str, extra: &str) -> (i32, serde_json::Value, String) {
    let text = format!(
        "[t]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\niodepth=64\ntime_based\nruntime=40ms\n\
         filename=/dev/nvme0n1\nlatency_window=2ms\n{extra}"
    );
    let (code, out, err) = blksim(&["run", &tmp(name, &text), "--output-format", "json"]);
    let v = if code == 0 || code == 1 { json(&out) } else { serde_json::Value::Null };
    (code, v, err)
}

#[test]
fn latency_target_searches_the_depth_and_measures_only_its_final_run() {
    // The null engine's I/Os are all under 1 ms: the depth doubles each 2 ms window to the
    // iodepth, which does not move, so the final run starts (statistics and runtime from
    // there) and the window after it ends the job (td->done): 6 windows, a 2 ms job_runtime
    // and latency_depth 16, as fio 3.42 reports the same job with 100 ms windows (100 ms).
    let text = "[n]\nioengine=null\nsize=1g\nrw=randread\nbs=4k\niodepth=16\nlatency_target=1000\n\
                latency_window=2000\nlatency_percentile=99\ntime_based\nruntime=10s\n";
    let (code, out, err) = blksim(&["run", &tmp("lt-null.fio", text), "--output-format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v = json(&out);
    let j = &v["jobs"][0];
    assert_eq!(j["latency_depth"], 16);
    assert_eq!((j["latency_target"].as_u64(), j["latency_window"].as_u64()), (Some(1_000_000), Some(2000)));
    assert_eq!(j["latency_percentile"].as_f64(), Some(99.0));
    assert_eq!(j["job_runtime"], 2, "{j}");
    let sim = v["blksim"]["sim_time_ns"].as_u64().unwrap();
    assert!((12_000_000..12_100_000).contains(&sim), "six windows: {sim}");
    // A target the drive meets at any depth: the search reaches iodepth; one it meets at
    // none (with a percentile under 100) keeps depth 1 for the whole runtime.
    let (code, lax, err) = latency_target_run("lt-lax.fio", "latency_target=5ms\n");
    assert_eq!(code, 0, "{err}");
    assert_eq!(lax["jobs"][0]["latency_depth"], 64);
    assert!(lax["jobs"][0]["job_runtime"].as_u64().unwrap() <= 3, "{}", lax["jobs"][0]["job_runtime"]);
    let (code, tight, err) = latency_target_run("lt-tight.fio", "latency_target=10us\nlatency_percentile=99\n");
    assert_eq!(code, 0, "{err}");
    let t = &tight["jobs"][0];
    assert_eq!((t["latency_depth"].as_u64(), t["job_runtime"].as_u64()), (Some(1), Some(40)));
    // Between them: a depth whose final run keeps its p99 near the target, and a deeper
    // queue than the tight one's, a shallower one than the lax one's.
    let (code, mid, err) = latency_target_run("lt-mid.fio", "latency_target=150us\nlatency_percentile=99\n");
    assert_eq!(code, 0, "{err}");
    let m = &mid["jobs"][0];
    let depth = m["latency_depth"].as_u64().unwrap();
    assert!((2..64).contains(&depth), "{depth}");
    assert!(m["read"]["iops"].as_f64() > t["read"]["iops"].as_f64(), "a deeper queue, more IOPS");
    assert!(m["read"]["lat_ns"]["mean"].as_f64() < lax["jobs"][0]["read"]["lat_ns"]["mean"].as_f64());
}

#[test]
fn latency_target_at_percentile_100_ends_the_job_over_it_at_depth_1() {
    let (code, v, err) = latency_target_run("lt-fatal.fio", "latency_target=10us\n");
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("exceeds specified max (10000 nsec): /dev/nvme0n1 read"), "{err}");
    assert!(err.contains("1 of 1 jobs ended on an I/O over their latency_target at depth 1"), "{err}");
    assert_eq!(v["jobs"][0]["error"], 110);
    // The normal output's latency line shows the target and the depth.
    let text = "[t]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\niodepth=8\ntime_based\nruntime=5ms\n\
                filename=/dev/nvme0n1\nlatency_target=5ms\nlatency_window=500us\n";
    let (code, out, err) = blksim(&["run", &tmp("lt-normal.fio", text)]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("latency   : target=5.00ms, window=500.00us, percentile=100.00%, depth=8"), "{out}");
    // What it does not combine with is refused at its line.
    let (code, _, err) = latency_target_run("lt-rate.fio", "latency_target=5ms\nrate_iops=1000\n");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("latency_target with rate, rate_iops or thinktime is not modelled yet"), "{err}");
}
