//! Issue 10, point 1: each stall, hang, loss and panic the issue lists, run
//! end to end through the binary. Every run must end (exit 0 here, well
//! within a wall-clock bound), do I/O on every device it names and keep
//! the CLI's invariant checks (every I/O completes once, CPU time adds up).

mod common;
use common::blksim;
use std::time::{Duration, Instant};

thread_local! {
    /// This test thread's scratch directory, removed when the thread (the test) ends.
    static SCRATCH: tempfile::TempDir = tempfile::Builder::new().prefix("blksim-polled-test-").tempdir().unwrap();
}

fn tmp_job(name: &str, text: &str) -> String {
    let p = SCRATCH.with(|d| d.path().join(name));
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

/// A profile file `name`: spr-gen5 with two sockets of `cores` cores of `threads` threads.
fn small_spr(name: &str, cores: u32, threads: u32) -> String {
    tmp_job(
        name,
        &format!(
            "extends = \"spr-gen5\"\nname = \"small\"\n[cpu]\nsockets = 2\ncores_per_socket = {cores}\n\
             threads_per_core = {threads}\nnuma_nodes_per_socket = 1\nllc_per_socket = 1\n"
        ),
    )
}

/// Run `blksim ARGS`: it must exit 0 within a few seconds; its stdout.
fn runs(args: &[&str]) -> String {
    let t0 = Instant::now();
    let (code, out, err) = blksim(args);
    assert_eq!(code, 0, "blksim {}: {err}", args.join(" "));
    assert!(t0.elapsed() < Duration::from_secs(10), "blksim {} took {:?}", args.join(" "), t0.elapsed());
    out
}

/// t/io_uring's total IOPS from its rate line.
fn t_iops(out: &str) -> f64 {
    let line = out.lines().find(|l| l.starts_with("IOPS=")).unwrap_or_else(|| panic!("no rate line: {out}"));
    let v = line.trim_start_matches("IOPS=").split(',').next().unwrap();
    let (num, scale) = match v.chars().last().unwrap() {
        'M' => (&v[..v.len() - 1], 1e6),
        'K' => (&v[..v.len() - 1], 1e3),
        _ => (v, 1.0),
    };
    num.parse::<f64>().unwrap() * scale
}

#[test]
fn the_readme_command_without_poll_queues_completes_by_interrupt_while_the_task_polls() {
    // Linux 6.10: the polled flag is cleared, the I/O completes by interrupt.
    let out = runs(&[
        "t-io_uring",
        "-b512",
        "-d128",
        "-c32",
        "-s32",
        "-p1",
        "-F1",
        "-B1",
        "--taskset",
        "0",
        "--",
        "/dev/nvme0n1",
    ]);
    assert!(t_iops(&out) > 100_000.0, "{out}");
    let json = runs(&[
        "run",
        "--name=p",
        "--ioengine=io_uring",
        "--hipri",
        "--direct=1",
        "--rw=randread",
        "--bs=512",
        "--iodepth=32",
        "--filename=/dev/nvme0n1",
        "--cpus_allowed=0",
        "--time_based",
        "--runtime=2ms",
        "--output-format=json",
    ]);
    let d: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(d["jobs"][0]["read"]["total_ios"].as_u64().unwrap() > 100);
    let cpu0 = &d["blksim"]["cpu_time"][0];
    assert!(cpu0["hardirq_ns"].as_u64().unwrap() > 0, "completions by interrupt: {cpu0}");
    let sim = d["blksim"]["sim_time_ns"].as_u64().unwrap();
    let idle = cpu0["idle_ns"].as_u64().unwrap() + cpu0["iowait_ns"].as_u64().unwrap();
    assert!(idle * 100 < sim * 5, "the task spins in io_do_iopoll, it does not sleep: {cpu0}");
}

#[test]
fn polled_runs_that_hung_end() {
    for args in [
        &["-r", "1ms", "--", "/dev/nvme0n1", "/dev/nullb0"][..],
        &["-c65", "-r", "1ms", "--", "/dev/nullb0"],
        &["-r", "1ms", "--machine", "x86-gen5-5m", "--", "/dev/nvme0n1"],
        &["-d", "32", "-r", "1ms", "--cmdline", "nvme.poll_queues=4", "--", "/dev/nullb0", "/dev/nvme0n1"],
    ] {
        let mut a = vec!["t-io_uring"];
        a.extend_from_slice(args);
        let out = runs(&a);
        assert!(t_iops(&out) > 10_000.0, "{}: {out}", a.join(" "));
    }
}

#[test]
fn a_polled_job_beside_a_sync_one_whose_interrupts_land_on_its_cpu_keeps_memory_flat() {
    let job = tmp_job(
        "mem.fio",
        "[global]\ndirect=1\nrw=randread\ntime_based\nruntime=5ms\n[a]\nioengine=io_uring\nhipri\niodepth=32\n\
         filename=/dev/nvme0n1\ncpus_allowed=0\n[b]\nioengine=psync\nfilename=/dev/nvme1n1\ncpus_allowed=1\n",
    );
    let out = runs(&["run", &job, "--cmdline", "nvme.poll_queues=126", "--output-format", "json"]);
    let d: serde_json::Value = serde_json::from_str(&out).unwrap();
    for j in d["jobs"].as_array().unwrap() {
        assert!(j["read"]["total_ios"].as_u64().unwrap() > 10, "{j}");
        // One bandwidth sample per 500 ms at most: none in a 5 ms run.
        assert!(j["read"]["bw_samples"].as_u64().unwrap_or(0) <= 1, "{j}");
    }
}

#[test]
fn two_polled_jobs_on_one_cpu_both_do_io_and_both_disks_are_reported() {
    let job = tmp_job(
        "lost.fio",
        "[global]\ndirect=1\nrw=randread\ntime_based\nruntime=5ms\nioengine=io_uring\nhipri\niodepth=32\n\
         cpus_allowed=0\n[a]\nfilename=/dev/nvme0n1\n[b]\nfilename=/dev/nullb0\n",
    );
    let out = runs(&["run", &job, "--cmdline", "nvme.poll_queues=4", "--output-format", "json"]);
    let d: serde_json::Value = serde_json::from_str(&out).unwrap();
    for j in d["jobs"].as_array().unwrap() {
        assert!(j["read"]["total_ios"].as_u64().unwrap() > 100, "{j}");
    }
    let disks: Vec<&str> = d["disk_util"].as_array().unwrap().iter().map(|x| x["name"].as_str().unwrap()).collect();
    assert_eq!(disks, ["nvme0n1", "nullb0"]);
}

#[test]
fn two_jobs_on_one_cpu_whose_run_ends_before_they_run_do_not_panic() {
    let job = tmp_job(
        "short.fio",
        "[j]\nioengine=io_uring\ndirect=1\nrw=randread\nfilename=/dev/nvme0n1\nnumjobs=2\ncpus_allowed=3\n\
         runtime=1us\ntime_based\n",
    );
    runs(&["run", &job]);
    let (code, _, err) =
        blksim(&["t-io_uring", "-n2", "-r", "0", "-p0", "--taskset", "3", "--", "/dev/nvme0n1", "/dev/nvme1n1"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("-r 0: t/io_uring runs until interrupted"), "{err}");
}

#[test]
fn polled_io_fails_with_eopnotsupp_as_on_linux_6_11_when_asked() {
    let out =
        runs(&["t-io_uring", "-r", "1ms", "--cmdline", "blksim.polled_unsupported=eopnotsupp", "--", "/dev/nvme0n1"]);
    assert!(out.contains("io: unexpected ret=-95\nYour filesystem/driver/kernel doesn't support polled IO\n"), "{out}");
    assert!(!out.contains("IOPS="), "t/io_uring stops before its first rate line: {out}");
    // With poll queues the same run polls.
    let out = runs(&[
        "t-io_uring",
        "-r",
        "1ms",
        "--cmdline",
        "blksim.polled_unsupported=eopnotsupp nvme.poll_queues=1",
        "--",
        "/dev/nvme0n1",
    ]);
    assert!(t_iops(&out) > 100_000.0, "{out}");
    // fio: err=95 in its report, fio's io_u error line, exit status 1 (one job failed).
    let (code, out, err) = blksim(&[
        "run",
        "--name=p",
        "--ioengine=io_uring",
        "--hipri",
        "--direct=1",
        "--rw=randread",
        "--filename=/dev/nvme0n1",
        "--time_based",
        "--runtime=1ms",
        "--output-format=json",
        "--cmdline",
        "blksim.polled_unsupported=eopnotsupp",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.starts_with("fio: io_u error on file /dev/nvme0n1: Operation not supported: read offset="), "{err}");
    let d: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(d["jobs"][0]["error"], 95);
}

#[test]
fn t_io_uring_with_more_threads_than_files_runs_every_thread() {
    let out = runs(&["t-io_uring", "-n2", "-r", "1ms", "-p0", "--", "/dev/nvme0n1"]);
    assert!(out.contains("submitter=0,") && out.contains("submitter=1,"), "{out}");
}

#[test]
fn a_wait_t_io_uring_could_never_finish_ends_at_the_runtime_with_a_warning() {
    // -p0 -d128 -c128 -s100: the first round submits 100 and, as
    // inflight + to_submit > depth, waits for min(200, 128) CQEs: never.
    let (code, out, err) = blksim(&["t-io_uring", "-p0", "-d128", "-c128", "-s100", "-r", "1ms", "--", "/dev/nullb0"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Maximum IOPS="), "{out}");
    assert!(err.contains("submitter 0: io_uring_enter waits for 128 completions with 100 I/Os in flight"), "{err}");
    // IOPOLL ends the same wait when its iopoll list is empty.
    let out = runs(&["t-io_uring", "-p1", "-d128", "-c128", "-s100", "-r", "1ms", "--", "/dev/nullb0"]);
    assert!(t_iops(&out) > 100_000.0, "{out}");
}

#[test]
fn misaligned_direct_io_fails_as_t_io_uring_reports_it() {
    let out = runs(&["t-io_uring", "-b1000", "-r", "1ms", "--", "/dev/nvme0n1"]);
    assert!(out.contains("io: unexpected ret=-22"), "{out}");
    let out = runs(&["t-io_uring", "-S1", "-b1000", "-r", "1ms", "--", "/dev/nvme0n1"]);
    assert!(out.contains("preadv2: Invalid argument"), "{out}");
}

/// fio's read IOPS and CPU usr/sys of job 0 from `--output-format json`.
fn fio_job(out: &str) -> (f64, f64, f64) {
    let d: serde_json::Value = serde_json::from_str(out).unwrap();
    let j = &d["jobs"][0];
    (j["read"]["iops"].as_f64().unwrap(), j["usr_cpu"].as_f64().unwrap(), j["sys_cpu"].as_f64().unwrap())
}

#[test]
fn sqpoll_on_its_own_cpu_takes_the_kernel_work_off_a_cpu_bound_job() {
    // fio on CPU 1 is CPU-bound (its user loop, io_uring_enter, the block
    // layer, the interrupts); with sqthread_poll the SQ thread on CPU 3
    // submits and posts CQEs, fio only spins on its rings in user space.
    let run = |sq: &str, hipri: &str| {
        let job = tmp_job(
            &format!("sq{sq}{hipri}.fio"),
            &format!(
                "[global]\nioengine=io_uring\ndirect=1\nrw=randread\nbs=4k\niodepth=32\niodepth_batch_submit=8\n\
                 runtime=5ms\ntime_based\nfilename=/dev/nvme0n1\ncpus_allowed=1\nhipri={hipri}\n\
                 sqthread_poll={sq}\nsqthread_poll_cpu=3\n[j]\n"
            ),
        );
        fio_job(&runs(&[
            "run",
            &job,
            "--machine",
            "x86-gen5-5m",
            "--cmdline",
            "iommu=pt nvme.poll_queues=4",
            "--output-format",
            "json",
        ]))
    };
    for hipri in ["0", "1"] {
        let (base, _, base_sys) = run("0", hipri);
        let (sq, usr, sys) = run("1", hipri);
        assert!(base_sys > 10.0, "hipri={hipri}: without SQPOLL fio enters the kernel: sys {base_sys}%");
        assert!(sq > 1.3 * base, "hipri={hipri}: SQPOLL {sq} IOPS vs {base}");
        assert!(usr > 99.0 && sys < 1.0, "hipri={hipri}: fio spins in user space: usr {usr}% sys {sys}%");
    }
    // The SQ thread pinned to fio's own CPU: both spin, each until its
    // slice ends (fio in user space until the tick preempts it; the SQ
    // thread until need_resched()), so the I/Os of one turn wait about a
    // slice: slow, as on Linux, but the run ends and does I/O.
    let job = tmp_job(
        "sqshared.fio",
        "[global]\nioengine=io_uring\ndirect=1\nrw=randread\nbs=4k\niodepth=8\nruntime=20ms\ntime_based\n\
         filename=/dev/nvme0n1\nhipri\nsqthread_poll=1\nsqthread_poll_cpu=0\ncpus_allowed=0\n[j]\n",
    );
    let out = runs(&["run", &job, "--cmdline", "nvme.poll_queues=4", "--output-format", "json"]);
    let d: serde_json::Value = serde_json::from_str(&out).unwrap();
    let r = &d["jobs"][0]["read"];
    assert!(r["total_ios"].as_u64().unwrap() >= 8, "{r}");
    assert!(r["clat_ns"]["mean"].as_f64().unwrap() > 1e6, "an I/O waits for the other task's slice: {r}");
}

#[test]
fn a_failed_passthrough_trim_leaves_nothing_on_its_iopoll_list() {
    // io_uring_cmd's trim with fixedbufs fails before any request (EFAULT): its CQE
    // is posted inline, not put on the ring's iopoll list. It used to be both: reaped
    // and freed, its stale id on the list then named another job's request, and that
    // job (here on the failing one's SMT sibling) polled for ever (exit 70, a stall).
    let machine = small_spr("smt.toml", 1, 2);
    let job = tmp_job(
        "efault.fio",
        "[j0]\nioengine=io_uring_cmd\ncmd_type=nvme\nrw=randwrite\nfilename=/dev/ng4n1\niodepth=64\nhipri\n\
         cpus_allowed=3\ntime_based\nruntime=1772us\n\
         [j1]\nioengine=io_uring_cmd\ncmd_type=nvme\nrw=trimwrite\nbs=64k\nfilename=/dev/ng2n1\niodepth=16\n\
         fixedbufs=1\nhipri\ncpus_allowed=1\ntime_based\nruntime=605us\n",
    );
    let t0 = Instant::now();
    let (code, out, err) =
        blksim(&["run", &job, "--machine", &machine, "--cmdline", "nvme.poll_queues=1", "--output-format", "json"]);
    assert!(t0.elapsed() < Duration::from_secs(10), "took {:?}", t0.elapsed());
    // j1 ends on its trim's error (exit 1); j0 runs its time.
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("Bad address") && err.contains("1 of 2 jobs"), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["jobs"][0]["write"]["total_ios"].as_u64().unwrap() > 100, "{}", v["jobs"][0]["write"]);
    assert_eq!(v["jobs"][1]["error"], 14);
}

#[test]
fn a_polling_task_yields_to_the_delayed_queue_run_of_its_scheduler() {
    // A swarm case (seed 0x7beaa): an io_uring hipri job at iodepth 2 on a device with
    // mq-deadline (2024 series) and cmdprio, GSIM on. A best-effort request waits in the scheduler
    // while the job's real-time one is in flight (dd_queued); the dispatch gives nothing and
    // asks for a run BLK_MQ_BUDGET_DELAY later. The task then spins polling for it on the CPU
    // whose kworker the delayed run wakes: it must notice need_resched() (it spun forever).
    let machine = small_spr("m.toml", 2, 1);
    let job = tmp_job(
        "delayed-run.fio",
        "[j0]\nioengine=io_uring\nrw=randread\nba=1k,4k\nbs=4k\ndirect=1\nfilename=/dev/nvme3n1\niodepth=2\n\
         hipri\ncpus_allowed=0\ntime_based\nruntime=1196us\nramp_time=23us\ncmdprio_percentage=30\n",
    );
    runs(&[
        "run",
        &job,
        "--machine",
        &machine,
        "--set",
        "/sys/block/nvme3n1/queue/scheduler=mq-deadline",
        "--set",
        "/sys/block/nvme7n1/queue/scheduler=none",
        "--patch",
        "mq-deadline-2024",
        "--patch",
        "gsim",
        "--set",
        "/proc/irq/soft_moderation/target_intr_rate=0",
        "--set",
        "/proc/irq/soft_moderation/hardirq_percent=0",
        "--seed",
        "71",
    ]);
}
