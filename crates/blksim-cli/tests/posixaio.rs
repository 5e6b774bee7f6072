//! fio's `posixaio` engine on glibc's POSIX AIO (`crates/blksim/src/fio/posixaio.rs`):
//! one helper thread does a file's requests one at a time with pread; fio
//! waits in `aio_suspend` on the first eight of its io_us in index order.

mod common;

use std::process::Command;

/// Run `job` (JSON out); the parsed output.
fn run(job: &str) -> serde_json::Value {
    let (code, v, err) = common::run_job_json(job);
    assert_eq!(code, Some(0), "{err}");
    v.unwrap()
}

fn iops(v: &serde_json::Value) -> f64 {
    v["jobs"][0]["read"]["iops"].as_f64().unwrap()
}

const JOB: &str = "[test]\nfilename=/dev/nvme0n1\ndirect=1\nrw=randread\nsize=4m\n";

#[test]
fn the_helper_thread_sends_one_request_at_a_time() {
    // glibc queues a descriptor's requests behind the one its helper runs: iodepth=16
    // reaches the drive as a depth of one, at psync's rate, far below libaio's.
    let posix = iops(&run(&format!("{JOB}ioengine=posixaio\niodepth=16\n")));
    let psync = iops(&run(&format!("{JOB}ioengine=psync\n")));
    let libaio = iops(&run(&format!("{JOB}ioengine=libaio\niodepth=16\n")));
    assert!((posix / psync - 1.0).abs() < 0.1, "posixaio {posix:.0} IOPS, psync {psync:.0}");
    assert!(posix < libaio / 4.0, "posixaio {posix:.0} IOPS, libaio at iodepth 16 {libaio:.0}");
}

#[test]
fn fio_sleeps_through_the_io_us_it_does_not_wait_on() {
    // fio queues io_us 15, 14, ... 0 (a LIFO free list filled in index order) and
    // aio_suspend waits on the first eight by index: the helper finishes 15..8 before
    // fio wakes, so fio reaps in batches of 9 and refills from a depth of 8. Debian's
    // fio 3.33 printed for this job on a file (direct=1): IO depths 1=0.4%, 2=0.8%,
    // 4=1.6%, 8=50.0%, 16=47.3%; complete 4=95.5%, 8=0.3%, 16=4.2%.
    let v = run("[test]\nioengine=posixaio\nsize=1M\niodepth=16\nfilename=/dev/nvme0n1\ndirect=1\n");
    let j = &v["jobs"][0];
    let pct = |k: &str, b: &str| j[k][b].as_f64().unwrap();
    let depths: Vec<f64> = ["1", "2", "4", "8", "16"].iter().map(|b| pct("iodepth_level", b)).collect();
    assert_eq!(depths, [0.390625, 0.78125, 1.5625, 50.0, 47.265625], "IO depths");
    assert!((pct("iodepth_complete", "16") - 4.2).abs() < 0.5, "{}", j["iodepth_complete"]);
    assert!((pct("iodepth_complete", "4") - 95.5).abs() < 0.5, "{}", j["iodepth_complete"]);
    // The first aio_read created the helper thread: that io_u's submission latency holds it.
    let slat = &j["read"]["slat_ns"];
    assert!(slat["max"].as_f64().unwrap() > 10.0 * slat["min"].as_f64().unwrap(), "{slat}");
}

#[test]
fn the_helper_is_a_thread_of_fio_not_a_job() {
    // One job in fio's output; fio's CPU (usr/sys of its own thread) sleeps in a futex,
    // not in I/O; the helper's CPU sleeps in its pread (iowait) and takes the interrupts.
    let v = run(&format!("{JOB}ioengine=posixaio\niodepth=8\ncpus_allowed=2-3\n"));
    assert_eq!(v["jobs"].as_array().unwrap().len(), 1);
    let cpus = v["blksim"]["cpu_time"].as_array().unwrap();
    let cpu = |n: u64| cpus.iter().find(|c| c["cpu"] == n).unwrap();
    let ns = |n: u64, k: &str| cpu(n)[k].as_u64().unwrap();
    assert_eq!(ns(2, "iowait_ns"), 0, "fio's CPU: {}", cpu(2));
    assert!(ns(3, "iowait_ns") > ns(3, "idle_ns") * 10, "the helper's CPU: {}", cpu(3));
    assert!(ns(3, "hardirq_ns") > 0 && ns(2, "hardirq_ns") == 0, "{} {}", cpu(2), cpu(3));
}

/// Run `job` on a machine of `drives` spr-gen5 drives (a profile written beside it).
fn run_on_drives(job: &str, drives: usize) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let mut profile = String::from("name = \"many\"\ndescription = \"d\"\nextends = \"spr-gen5\"\n");
    for d in 0..drives {
        profile += &format!("[[device]]\nname = \"nvme{d}n1\"\nmodel = \"pm1743\"\nroot_port = \"iio{}\"\n", d % 2);
    }
    std::fs::write(dir.path().join("many.toml"), profile).unwrap();
    std::fs::write(dir.path().join("job.fio"), job).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_blksim"))
        .args(["run", "job.fio", "--output-format", "json", "--machine", "many.toml"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_helper_per_file_up_to_glibcs_twenty_threads() {
    // glibc runs one request per descriptor at a time, on up to aio_threads (20) helpers:
    // IOPS grow with the files to 20 and stop there.
    let job = |files: usize| {
        let names: Vec<String> = (0..files).map(|d| format!("/dev/nvme{d}n1")).collect();
        format!(
            "[t]\nioengine=posixaio\ndirect=1\nrw=randread\ntime_based\nruntime=4ms\niodepth=64\nfilename={}\n",
            names.join(":")
        )
    };
    let iops = |files: usize| run_on_drives(&job(files), 24)["jobs"][0]["read"]["iops"].as_f64().unwrap();
    let (one, ten, twenty, all) = (iops(1), iops(10), iops(20), iops(24));
    assert!(ten > 8.0 * one, "10 files {ten:.0} IOPS, 1 file {one:.0}");
    assert!(twenty > 1.6 * ten, "20 files {twenty:.0} IOPS, 10 files {ten:.0}");
    assert!((all / twenty - 1.0).abs() < 0.1, "24 files {all:.0} IOPS, 20 files {twenty:.0}");
}

#[test]
fn what_posixaio_does_not_model_is_refused() {
    // An I/O scheduler on the device (several files run on glibc's helper pool, tested above).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.fio");
    std::fs::write(&path, "[t]\nioengine=posixaio\ndirect=1\nsize=1m\nfilename=/dev/nvme0n1\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_blksim"))
        .args(["run", path.to_str().unwrap(), "--set", "/sys/block/nvme0n1/queue/scheduler=mq-deadline"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("I/O scheduler") && err.contains("posixaio"), "{err}");
}

#[test]
fn a_cpu_going_offline_moves_fios_futex_sleep_and_the_helpers_io_sleep() {
    // fio sleeps in aio_suspend's futex, the helper in its pread: taken off a CPU that
    // goes offline, each moves (only the pread is an I/O sleep), and the job runs on.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.fio");
    std::fs::write(&path, format!("{JOB}ioengine=posixaio\niodepth=8\ncpus_allowed=2-5\ntime_based\nruntime=2ms\n"))
        .unwrap();
    for cpu in [2, 3] {
        let at = format!("300us:/sys/devices/system/cpu/cpu{cpu}/online=0");
        let out = Command::new(env!("CARGO_BIN_EXE_blksim"))
            .args(["run", path.to_str().unwrap(), "--output-format", "json", "--at", &at])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "cpu{cpu}: {}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(v["jobs"][0]["job_runtime"].as_u64().unwrap() >= 2, "cpu{cpu}");
    }
}
