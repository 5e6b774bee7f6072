//! A seeded swarm through the real `blksim` binary, every front end: random
//! small machines (custom profiles), fio jobs, kernel knobs and `--at`
//! actions for `run`, and `t-io_uring`, `dsa-memfill`, `sweep` and
//! `reproduce` cases, with the inputs that once broke it (`bsrange=0-0`,
//! SQPOLL with `--trace`, a sweep `--plot` without axes, a t/io_uring block
//! size past an int, the null engine without a size); each run
//! checked for exit status 0 or 2 only (the CLI itself checks the model's
//! invariants after every run and exits 70 when one breaks: every I/O
//! completes once, every MSI is handled once, CPU time adds up, bytes = I/Os
//! x block size), a clear message on bad input, each CPU's time adding up in
//! the JSON, and the same output for the same inputs.
//!
//! `BLKSIM_SWARM_SEED=S` and `BLKSIM_SWARM_CASES=N` rerun a failing case (its
//! seed is printed) or run a longer swarm.
//!
//! Polled I/O (`hipri`, t/io_uring's `-p1`, with and without poll queues)
//! and jobs sharing CPUs are in the mix (issue 10 made both run to the end),
//! and I/O schedulers (mq-deadline, kyber) on one or two devices that jobs
//! over several devices share.

use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../../blksim-fio/tests/splitmix/mod.rs"]
mod splitmix;
use splitmix::Gen;

/// One generated input: the files it needs and the command line.
#[derive(Clone)]
struct Case {
    seed: u64,
    files: Vec<(String, String)>,
    args: Vec<String>,
    /// The JSON report's form was asked for (so CPU time can be read).
    json: bool,
}

/// A small machine: spr-gen5's devices on 1-2 sockets of 1-8 cores, with or without SMT.
fn machine(g: &mut Gen) -> (String, u32) {
    let sockets = 1 + g.below(2) as u32;
    let cores = [1, 2, 4, 6, 8][g.below(5) as usize];
    let threads = 1 + g.below(2) as u32;
    let numa = if cores % 2 == 0 && g.chance(30) { 2 } else { 1 };
    let text = format!(
        "extends = \"spr-gen5\"\nname = \"swarm\"\n[cpu]\nsockets = {sockets}\ncores_per_socket = {cores}\n\
         threads_per_core = {threads}\nnuma_nodes_per_socket = {numa}\nllc_per_socket = {numa}\n"
    );
    (text, sockets * cores * threads)
}

/// A CPU list over `ncpus` CPUs (sometimes past them: bad input).
fn cpu_list(g: &mut Gen, ncpus: u32) -> String {
    let limit = if g.chance(5) { ncpus + 4 } else { ncpus };
    let lo = g.below(limit as u64) as u32;
    if g.chance(50) {
        lo.to_string()
    } else {
        format!("{lo}-{}", lo + g.below((limit - lo) as u64) as u32)
    }
}

/// A device of the machine (sometimes none of its own: bad input).
fn device(g: &mut Gen) -> String {
    match g.below(20) {
        0 => "/dev/nvme9n1".into(),
        1 => "/dev/nullb0".into(),
        _ => format!("/dev/nvme{}n1", g.below(8)),
    }
}

/// CPUs of their own for `n` jobs: a range of `n` from `next` (`None` when the machine has too few).
fn own_cpus(next: &mut u32, n: u32, ncpus: u32) -> Option<String> {
    if *next + n > ncpus {
        return None;
    }
    let first = *next;
    *next += n;
    Some(if n == 1 { first.to_string() } else { format!("{first}-{}", first + n - 1) })
}

/// A job section.
fn job(g: &mut Gen, i: usize, ncpus: u32, next_cpu: &mut u32, text: &mut String) {
    let _ = writeln!(text, "[j{i}]");
    if i > 0 && g.chance(30) {
        text.push_str(if g.chance(50) { "stonewall\n" } else { "new_group\n" });
    }
    // A job's end ends others (fio's fio_terminate_threads; exitall in one job is every job's).
    if g.chance(4) {
        let _ = writeln!(text, "exitall\nexit_what={}", g.pick(&["group", "stonewall", "all"]));
    }
    // An I/O over it ends the job with ETIMEDOUT (exit 1).
    if g.chance(3) {
        let _ = writeln!(text, "max_latency={}", g.pick(&["50us", "2ms", "0,100us"]));
    }
    // The deepest queue under a latency target (fio's latency_target search).
    if g.chance(3) {
        let _ = writeln!(
            text,
            "latency_target={}\nlatency_window={}\nlatency_percentile={}\nlatency_run={}",
            g.pick(&["20us", "300us", "5ms"]),
            g.pick(&["0", "200us", "2ms"]),
            g.pick(&["100", "99.9", "50"]),
            g.pick(&["0", "0", "1"])
        );
    }
    // The scheduler written to the job's devices as it sets up.
    if g.chance(3) {
        let _ = writeln!(text, "ioscheduler={}", g.pick(&["none", "mq-deadline", "kyber"]));
    }
    let engine =
        g.pick(&["libaio", "io_uring", "psync", "pvsync2", "null", "libaio", "io_uring", "io_uring_cmd", "posixaio"]);
    let _ = writeln!(text, "ioengine={engine}");
    if engine == "io_uring_cmd" {
        text.push_str("cmd_type=nvme\n");
    }
    // Now and then the trim forms (io_uring_cmd with fixedbufs fails them with EFAULT, exit 1).
    let rw = if g.chance(6) {
        g.pick(&["trim", "randtrim", "trimwrite", "randtrimwrite"])
    } else {
        g.pick(&["read", "randread", "write", "randwrite", "rw", "randrw"])
    };
    // Offsets: fio's rw= suffix (holes, backwards, I/Os per random draw) and blockalign.
    let suffix = if !g.chance(15) {
        ""
    } else if rw.starts_with("rand") {
        g.pick(&[":4", ":1", ":0"])
    } else {
        g.pick(&[":8k", ":-8k", ":-4k", ":3"])
    };
    let _ = writeln!(text, "rw={rw}{suffix}");
    // Trims of several ranges (io_uring_cmd's; other engines and trimwrite refuse them).
    if rw.contains("trim") && g.chance(30) {
        let _ = writeln!(text, "num_range={}", 1 + g.below(16));
    }
    if g.chance(10) {
        let _ = writeln!(text, "ba={}", g.pick(&["512", "2k", "64k", "1k,4k"]));
    }
    if g.chance(10) {
        let d = ["zipf:1.2", "pareto:0.3:0.5", "normal:20", "zoned:50/5:50/95", "zoned_abs:60/1m:40/2m", "zipf:1"];
        let _ = writeln!(text, "random_distribution={}", g.pick(&d));
    }
    let bs = if g.chance(3) { "1000" } else { g.pick(&["4k", "4k", "512", "8k", "16k,4k", "64k", "128k"]) };
    let _ = writeln!(text, "bs={bs}");
    // (NVMe passthrough goes around the page cache; fio's open of its char device with O_DIRECT fails.)
    let direct = if engine == "io_uring_cmd" { g.chance(3) } else { g.chance(97) };
    let _ = writeln!(text, "direct={}", direct as u8);
    if engine != "null" {
        let files = 1 + g.below(2);
        let names: Vec<String> = (0..files)
            .map(|_| {
                // NVMe passthrough on the generic char devices (now and then a block device: refused).
                let d = device(g);
                match d.strip_prefix("/dev/nvme") {
                    Some(rest) if engine == "io_uring_cmd" && !g.chance(5) => format!("/dev/ng{rest}"),
                    _ => d,
                }
            })
            .collect();
        let _ = writeln!(text, "filename={}", names.join(":"));
    }
    if matches!(engine, "libaio" | "io_uring" | "io_uring_cmd" | "posixaio") {
        let depth = [1, 2, 4, 8, 16, 32, 64][g.below(7) as usize];
        let _ = writeln!(text, "iodepth={depth}");
        if g.chance(50) {
            let _ = writeln!(text, "iodepth_batch_submit={}", 1 + g.below(depth));
            let _ = writeln!(text, "iodepth_batch_complete_max={}", 1 + g.below(depth));
        }
    }
    if engine.starts_with("io_uring") && g.chance(50) {
        text.push_str("fixedbufs=1\nregisterfiles=1\n");
    }
    if matches!(engine, "io_uring" | "io_uring_cmd" | "pvsync2") && g.chance(40) {
        text.push_str("hipri\n");
    }
    let numjobs = if g.chance(40) { 1 + g.below(3) as u32 } else { 1 }.min(ncpus - *next_cpu);
    let _ = writeln!(text, "numjobs={numjobs}");
    match own_cpus(next_cpu, numjobs, ncpus) {
        // Sometimes all of them on one CPU (they share it, 3 ms slices).
        Some(_) if g.chance(20) => {
            let _ = writeln!(text, "cpus_allowed={}", g.below(ncpus as u64));
        }
        // Sometimes the CPUs of NUMA nodes (node 1 is bad input on a one-node machine).
        Some(_) if g.chance(8) => {
            let _ = writeln!(text, "numa_cpu_nodes={}", g.pick(&["0", "all", "1", "0-1"]));
        }
        // Now and then a CPU the machine does not have: bad input.
        _ if g.chance(4) => {
            let _ = writeln!(text, "cpus_allowed={}", ncpus + g.below(4) as u32);
        }
        Some(cpus) => {
            let _ = writeln!(text, "cpus_allowed={cpus}\ncpus_allowed_policy=split");
        }
        None => {
            let _ = writeln!(text, "cpus_allowed={ncpus}");
        }
    }
    if g.chance(3) {
        // fio takes a zero range as its default block size.
        text.push_str("bsrange=0-0\n");
    } else if g.chance(8) {
        let _ = writeln!(text, "bsrange={}", g.pick(&["4k-16k", "512-64k", "8k-4k,4k-4k", "4k-128k", "0-8k"]));
    }
    if g.chance(5) {
        text.push_str("bs_is_seq_rand=1\n");
    }
    if g.chance(3) {
        // (offset_align=0 with a percentage: refused, fio divides by it.)
        let _ = writeln!(text, "offset={}%\noffset_align={}", g.below(50), g.pick(&["0", "4k", "1m", "12345"]));
    }
    if g.chance(75) {
        let _ = writeln!(text, "time_based\nruntime={}us", 300 + g.below(2000));
        if engine == "null" && !g.chance(10) {
            // (Without a size the null engine is refused, as fio refuses it.)
            text.push_str("size=1g\n");
        }
    } else {
        let size = if g.chance(5) { "1" } else { g.pick(&["64k", "256k", "1m", "10001", "40000"]) };
        let _ = writeln!(text, "size={size}");
    }
    if g.chance(20) {
        let _ = writeln!(text, "ramp_time={}us", g.below(500));
    }
    // Flow control between the jobs, and verify's read-backs.
    if g.chance(8) {
        let _ = writeln!(text, "flow={}\nflow_id={}", 1 + g.below(8), g.below(2));
        if g.chance(40) {
            let _ = writeln!(text, "flow_sleep={}", g.below(200));
        }
    }
    if g.chance(8) {
        let _ = writeln!(text, "verify={}", g.pick(&["md5", "crc32c", "null", "sha256", "pattern", "meta"]));
        if g.chance(40) {
            let _ = writeln!(text, "verify_backlog={}", 1 + g.below(64));
        }
        if g.chance(20) {
            text.push_str("do_verify=0\n");
        }
    }
    // Pacing and size mixes (fio's rate, thinktime, bssplit, io_size).
    if g.chance(10) {
        let _ = writeln!(text, "rate_iops={}", g.pick(&["1", "2000", "50000", "1000000", "3000,500"]));
    } else if g.chance(8) {
        let _ = writeln!(text, "rate={}", g.pick(&["1m", "64k", "100m", "4m,1m"]));
    }
    if g.chance(5) {
        text.push_str(
            "rate_process=poisson
",
        );
    }
    if g.chance(8) {
        let _ = writeln!(text, "thinktime={}us", g.below(300));
        if g.chance(50) {
            let _ = writeln!(text, "thinktime_spin={}us", g.below(100));
        }
        if g.chance(50) {
            let _ = writeln!(text, "thinktime_blocks={}", 1 + g.below(8));
        }
    }
    if g.chance(6) {
        let _ =
            writeln!(text, "bssplit={}", g.pick(&["4k/50:64k/50", "512/10:4k/60:128k", "4k/60:8k/60:16k", "8k/30,4k"]));
    }
    if g.chance(5) {
        let _ = writeln!(text, "io_size={}", g.pick(&["8k", "1m", "100%"]));
    }
    if g.chance(10) {
        let _ = writeln!(text, "startdelay={}us", g.below(500));
    }
    if g.chance(20) {
        text.push_str("norandommap\n");
    }
    if g.chance(10) {
        let _ = writeln!(text, "random_generator={}", g.pick(&["lfsr", "tausworthe", "tausworthe64"]));
    }
    if g.chance(8) {
        // fio's logs, written into the case's directory.
        text.push_str(g.pick(&[
            "write_iolog=trace\n",
            "write_bw_log=s\nlog_offset=1\n",
            "write_lat_log\nlog_avg_msec=1\n",
        ]));
    }
    if g.chance(8) {
        // I/O priorities: the thread's, and libaio's and io_uring's per-I/O ones (refused elsewhere).
        text.push_str(g.pick(&[
            "prioclass=1\n",
            "prioclass=3\nprio=7\n",
            "cmdprio_percentage=30\n",
            "cmdprio_percentage=50,10\ncmdprio_class=3\n",
            "cmdprio_bssplit=4k/50/1/0:64k/20\n",
            "prio=2\ncmdprio_percentage=100\ncmdprio=5\n",
        ]));
    }
    if g.chance(8) {
        // Syncs (the async engines, devices with unknown caches and some companions refuse them).
        text.push_str(g.pick(&[
            "fsync=1\n",
            "fsync=4\n",
            "fdatasync=2\n",
            "end_fsync=1\n",
            "fsync=3\nend_fsync=1\n",
            "sync=1\n",
        ]));
    }
    if g.chance(10) {
        // zonemode=strided: the zone moves (one file only; fio drops it for more).
        text.push_str(g.pick(&[
            "zonemode=strided\nzonesize=64k\n",
            "zonemode=strided\nzonesize=16k\nzonerange=64k\nzoneskip=1m\n",
            "zonemode=strided\nzonesize=256k\nzonerange=64k\n",
        ]));
    }
    if g.chance(20) {
        text.push_str("group_reporting\n");
    }
    if g.chance(2) {
        text.push_str("sqthread_poll=1\n");
    }
    if g.chance(6) {
        // How the report shows it (fio's stat.c): unified directions, units, digits.
        text.push_str(g.pick(&[
            "unified_rw_reporting=mixed\n",
            "unified_rw_reporting=both\n",
            "kb_base=1000\n",
            "unit_base=1\n",
            "significant_figures=2\n",
            "significant_figures=10\n",
        ]));
    }
}

/// Kernel knobs and timed actions.
fn knobs(g: &mut Gen, ncpus: u32, args: &mut Vec<String>) {
    let mut cmdline = Vec::new();
    if g.chance(40) {
        cmdline.push("intremap=posted_msi".to_string());
    }
    if g.chance(20) {
        cmdline.push(format!("blksim.max_posted_msi_coalescing_loop={}", 1 + g.below(4)));
    }
    if g.chance(15) {
        cmdline.push(format!("nvme.io_queue_depth={}", [2, 16, 64, 1024][g.below(4) as usize]));
    }
    if g.chance(30) {
        cmdline.push(format!("nvme.poll_queues={}", [1, 2, 4, 126][g.below(4) as usize]));
    }
    if g.chance(10) {
        cmdline.push("blksim.polled_unsupported=eopnotsupp".to_string());
    }
    if g.chance(10) {
        cmdline.push(format!("nvme.write_queues={}", [1, 2, 64][g.below(3) as usize]));
    }
    if g.chance(15) {
        cmdline.push(g.pick(&["iommu=pt", "iommu.strict=1", "intel_iommu=off"]).to_string());
    }
    if g.chance(5) {
        cmdline.push("nosmt".to_string());
    }
    if !cmdline.is_empty() {
        args.extend(["--cmdline".to_string(), cmdline.join(" ")]);
    }
    let dev = format!("nvme{}n1", g.below(8));
    let sets = [
        format!("/sys/block/{dev}/queue/rq_affinity={}", g.below(3)),
        format!("/sys/block/{dev}/queue/nomerges={}", g.below(3)),
        format!("/sys/block/{dev}/queue/nr_requests={}", [4, 32, 256][g.below(3) as usize]),
        format!("/sys/block/{dev}/queue/max_sectors_kb={}", [4, 128, 1024][g.below(3) as usize]),
    ];
    for s in sets {
        if g.chance(15) {
            args.extend(["--set".to_string(), s]);
        }
    }
    if g.chance(10) {
        args.extend(["--patch".to_string(), "mq-deadline-2024".to_string()]);
    }
    if g.chance(10) {
        args.extend(["--patch".to_string(), "hybrid-iopoll".to_string()]);
    }
    if g.chance(10) {
        args.extend(["--patch".to_string(), "gsim".to_string()]);
        // A low target or the fixed mode, so that short runs moderate.
        for knob in ["target_intr_rate=10000", "target_intr_rate=0", "hardirq_percent=0", "delay_us=20"] {
            if g.chance(40) {
                args.extend(["--set".to_string(), format!("/proc/irq/soft_moderation/{knob}")]);
            }
        }
    }
    // Most device IRQs are managed (affinity writes fail with EIO) and most CPUs run a job or a managed
    // IRQ (offlining them is not modelled): a few of each, mostly refused.
    if g.chance(5) {
        args.extend([
            "--set".to_string(),
            format!("/proc/irq/{}/smp_affinity_list={}", 120 + g.below(40), cpu_list(g, ncpus)),
        ]);
    }
    for _ in 0..u64::from(g.chance(12)) * (1 + g.below(2)) {
        let at = format!("{}us", g.below(2000));
        let action = if g.chance(50) {
            format!("/proc/irq/{}/smp_affinity_list={}", 120 + g.below(40), cpu_list(g, ncpus))
        } else {
            format!("/sys/devices/system/cpu/cpu{}/online=0", g.below(ncpus as u64))
        };
        args.extend(["--at".to_string(), format!("{at}:{action}")]);
    }
}

/// A `blksim run` case, or (one in eight) a t/io_uring one.
fn case(seed: u64) -> Case {
    let mut g = Gen(seed);
    let (profile, ncpus) = machine(&mut g);
    let mut files = vec![("machine.toml".to_string(), profile)];
    let mut args = Vec::new();
    let mut json = false;
    if g.chance(6) {
        return dsa_case(seed, &mut g);
    }
    if g.chance(5) {
        return sweep_case(seed, &mut g, files);
    }
    if g.chance(1) {
        // A calibration experiment, under another seed (cells may miss: exit 0 without --check).
        let exp = g.pick(&["single-core-iops", "rq-affinity", "posted-msi-nvme", "posted-msi-dsa"]);
        let args = vec![
            "reproduce".into(),
            exp.into(),
            "--jobs".into(),
            "1".into(),
            "--seed".into(),
            g.below(100).to_string(),
        ];
        return Case { seed, files: Vec::new(), args, json: false };
    }
    if g.chance(12) {
        // t/io_uring, polled or interrupt-driven.
        args.push("t-io_uring".into());
        for (flag, values) in [
            ("-b", &["512", "4096", "8192"][..]),
            ("-d", &["1", "8", "32", "128"]),
            ("-s", &["1", "8", "32"]),
            ("-c", &["1", "8", "32"]),
        ] {
            if g.chance(60) {
                args.push(format!("{flag}{}", g.pick(values)));
            }
        }
        args.extend([format!("-p{}", g.below(2)), "-r".into(), format!("{}us", 300 + g.below(1500))]);
        if g.chance(3) {
            // Past t/io_uring's int block size: refused.
            args.extend(["-b".into(), g.pick(&["4294967296", "5g", "0"]).into()]);
        }
        let threads = 1 + g.below(3) as u32;
        args.extend(["-n".into(), threads.to_string()]);
        if g.chance(70) {
            args.extend(["--taskset".into(), cpu_list(&mut g, ncpus)]);
        }
        args.extend(["--machine".into(), "machine.toml".into(), "--seed".into(), g.below(1000).to_string()]);
        let mut cmdline = Vec::new();
        if g.chance(40) {
            cmdline.push("intremap=posted_msi");
        }
        if g.chance(50) {
            cmdline.push(g.pick(&["nvme.poll_queues=1", "nvme.poll_queues=4", "null_blk.poll_queues=0"]));
        }
        if !cmdline.is_empty() {
            args.extend(["--cmdline".into(), cmdline.join(" ")]);
        }
        args.push("--".into());
        for _ in 0..1 + g.below(3) {
            args.push(device(&mut g));
        }
    } else {
        let mut text = String::new();
        if g.chance(40) {
            text.push_str("[global]\n");
            let _ = writeln!(text, "ioengine={}", g.pick(&["libaio", "io_uring"]));
            text.push_str("direct=1\n");
        }
        let scheduler = g.chance(15);
        let mut next_cpu = 0;
        // Jobs mostly on CPUs of their own (no more jobs than CPUs), some sharing one.
        for i in 0..(1 + g.below(3) as usize).min(ncpus as usize) {
            if next_cpu == ncpus {
                break;
            }
            job(&mut g, i, ncpus, &mut next_cpu, &mut text);
        }
        files.push(("job.fio".into(), text));
        args.extend(["run".into(), "job.fio".into(), "--machine".into(), "machine.toml".into()]);
        for _ in 0..if scheduler { 1 + g.below(2) } else { 0 } {
            let dev = g.below(8);
            let sched = g.pick(&["none", "mq-deadline", "kyber"]);
            args.extend(["--set".into(), format!("/sys/block/nvme{dev}n1/queue/scheduler={sched}")]);
            if sched == "kyber" && g.chance(50) {
                // Targets from tight (throttling at once) to kyber's defaults.
                let attr = g.pick(&["read_lat_nsec", "write_lat_nsec"]);
                let ns = g.pick(&["20000", "200000", "2000000", "10000000"]);
                args.extend(["--set".into(), format!("/sys/block/nvme{dev}n1/queue/iosched/{attr}={ns}")]);
            }
        }
        knobs(&mut g, ncpus, &mut args);
        let format = g.pick(&["json", "json+", "normal", "json,normal", "terse,json"]);
        json = format == "json" || format == "json+";
        args.extend(["--output-format".into(), format.into()]);
        args.extend(["--seed".into(), g.below(1000).to_string()]);
        for extra in ["--interrupts", "--mpstat", "--iostat", "--breakdown"] {
            if g.chance(10) {
                // After JSON alone the tables go to stderr: stdout stays JSON.
                args.push(extra.into());
            }
        }
        if g.chance(5) {
            args.extend(["--trace".into(), "trace.json".into()]);
        }
        if g.chance(8) {
            // fio's report of the run so far, from a copy of the simulation mid-run.
            args.extend(["--status-interval".into(), format!("{}us", 1000 + g.below(3000))]);
        }
    }
    Case { seed, files, args, json }
}

/// `dsa-memfill` on spr-dsa: clients, sizes, IRQ CPUs, posted or not.
fn dsa_case(seed: u64, g: &mut Gen) -> Case {
    let mut args: Vec<String> = vec!["dsa-memfill".into(), "--machine".into(), "spr-dsa".into()];
    args.extend(["--runtime".into(), format!("{}us", 50 + g.below(500))]);
    if g.chance(50) {
        args.extend(["--outstanding".into(), (1 + g.below(64)).to_string()]);
    }
    if g.chance(50) {
        args.extend(["--bytes".into(), g.pick(&["64", "4096", "65536", "1m", "0"]).into()]);
    }
    if g.chance(30) {
        args.extend(["--irq-cpu".into(), g.below(130).to_string()]);
    }
    if g.chance(20) {
        args.extend(["--wq".into(), g.pick(&["0", "1", "dedicated", "9"]).into()]);
    }
    if g.chance(50) {
        args.extend(["--cmdline".into(), "intremap=posted_msi".into()]);
    }
    let json = g.chance(50);
    args.extend([
        "--format".into(),
        if json { "json" } else { "text" }.into(),
        "--seed".into(),
        g.below(1000).to_string(),
    ]);
    Case { seed, files: Vec::new(), args, json: false }
}

/// `sweep` over a small job on the case's machine: one or two axes of job options, knobs, patches and
/// profile fields.
fn sweep_case(seed: u64, g: &mut Gen, mut files: Vec<(String, String)>) -> Case {
    let job = "[s]\nioengine=libaio\ndirect=1\nrw=randread\nfilename=/dev/nvme0n1\ntime_based\nruntime=300us\n";
    files.push(("job.fio".into(), job.into()));
    let axes = [
        "iodepth = [1, 8]",
        "cmdline = [\"\", \"intremap=posted_msi\"]",
        "\"/sys/block/nvme0n1/queue/rq_affinity\" = [0, 2]",
        "patch = [\"\", \"mq-deadline-2024\"]",
        "\"profile.cpu.cores_per_socket\" = [2, 4]",
        "rw = [\"randread\", \"randwrite\", \"randred\"]",
        "bs = [\"4k\", \"64k\"]",
    ];
    let mut spec = String::from("job = \"job.fio\"\nmachine = \"machine.toml\"\n[axes]\n");
    for _ in 0..g.below(3) {
        let _ = writeln!(spec, "{}", g.pick(&axes));
    }
    files.push(("spec.toml".into(), spec));
    let mut args: Vec<String> = vec!["sweep".into(), "spec.toml".into(), "--jobs".into(), "1".into()];
    if g.chance(30) {
        args.push("--plot".into());
    }
    Case { seed, files, args, json: false }
}

/// A case's wall-time limit: cases take well under a second (debug builds a
/// few); one that runs past this hangs, and is killed and reported.
const CASE_LIMIT: Duration = Duration::from_secs(120);

/// Run a case's command in `dir`: (status, stdout, stderr); status -2 when it
/// ran past `CASE_LIMIT` and was killed.
fn run(case: &Case, dir: &Path) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_blksim"))
        .args(&case.args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.read_to_end(&mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let start = Instant::now();
    // Polls close together at first: most cases end within milliseconds.
    let mut nap = Duration::from_micros(100);
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code().unwrap_or(-1);
        }
        if start.elapsed() > CASE_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break -2;
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(20));
    };
    let (out, mut err) = (out.join().unwrap(), err.join().unwrap());
    if code == -2 {
        err = format!("hung: killed after {} s\n{err}", CASE_LIMIT.as_secs());
    }
    (code, out, err)
}

/// Everything but the wall-clock fields.
fn without_wall(s: &str) -> String {
    s.lines().filter(|l| !l.contains("wall")).collect::<Vec<_>>().join("\n")
}

/// What is wrong with a case's outcome, if anything.
fn check(case: &Case, dir: &Path, deterministic: bool) -> Result<u8, String> {
    let (code, out, err) = run(case, dir);
    // Jobs an I/O error ended (EOPNOTSUPP: polled I/O without poll queues
    // under blksim.polled_unsupported=eopnotsupp; a trim on a device without
    // discards; an I/O over max_latency): exit 1, told apart from bad input by blksim's closing line.
    let io_errors = err
        .lines()
        .filter(|l| {
            l.ends_with(" ended on an I/O error")
                || l.ends_with(" over their max_latency")
                || l.ends_with(" over their latency_target at depth 1")
        })
        .count() as i32;
    match code {
        0 => {}
        1 if io_errors > 0 => {}
        2 => {
            if !err.starts_with("blksim: ") || err.contains("panicked") || err.contains("internal error") {
                return Err(format!("exit 2 without one clear message: {err}"));
            }
            if std::env::var_os("BLKSIM_SWARM_VERBOSE").is_some() {
                eprintln!("bad input: {}", err.trim_end());
            }
            return Ok(2);
        }
        c => return Err(format!("exit {c}: {err}")),
    }
    // Each report (with --status-interval, one per interval, then the final one): CPU time adds up.
    let docs: Vec<serde_json::Value> = match case.json {
        true => serde_json::Deserializer::from_str(&out)
            .into_iter()
            .collect::<Result<_, _>>()
            .map_err(|e| format!("not JSON ({e})"))?,
        false => Vec::new(),
    };
    if case.json && docs.is_empty() {
        return Err("no JSON document".into());
    }
    for doc in &docs {
        let sim = doc["blksim"]["sim_time_ns"].as_u64().ok_or("no sim_time_ns")?;
        for c in doc["blksim"]["cpu_time"].as_array().ok_or("no cpu_time")? {
            let sum: u64 = ["user_ns", "sys_ns", "hardirq_ns", "softirq_ns", "idle_ns", "iowait_ns"]
                .iter()
                .map(|k| c[k].as_u64().unwrap_or(0))
                .sum();
            if sum != sim {
                return Err(format!("CPU {} time adds up to {sum} of {sim} ns", c["cpu"]));
            }
        }
    }
    if let (Some(i), Some(last)) = (case.args.iter().position(|a| a == "--status-interval"), docs.last()) {
        // The reports so far come from copies: the final report is the same without them.
        let mut plain = case.clone();
        plain.args.drain(i..i + 2);
        let (code2, out2, _) = run(&plain, dir);
        let doc: serde_json::Value = serde_json::from_str(&out2).map_err(|e| format!("not JSON ({e})"))?;
        let unwalled = |d: &serde_json::Value| without_wall(&serde_json::to_string_pretty(d).unwrap());
        if code2 != code || unwalled(&doc) != unwalled(last) {
            return Err("--status-interval changed the final report".into());
        }
    }
    if deterministic {
        let (code2, out2, _) = run(case, dir);
        if code2 != code || without_wall(&out2) != without_wall(&out) {
            return Err("the same inputs gave a different output".into());
        }
    }
    Ok(0)
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| {
        let n = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
            Some(hex) => u64::from_str_radix(hex, 16),
            None => v.parse(),
        };
        n.unwrap_or_else(|_| panic!("{name}={v}: a number (decimal, or hexadecimal after 0x)"))
    })
}

#[test]
fn random_machines_jobs_knobs_and_timed_actions_exit_0_or_2_with_invariants_and_determinism() {
    let base = env_u64("BLKSIM_SWARM_SEED").unwrap_or(0x005e_ed13);
    let cases = env_u64("BLKSIM_SWARM_CASES").unwrap_or(1000);
    let guard = tempfile::Builder::new().prefix("blksim-swarm-").tempdir().unwrap();
    let root = guard.path().to_path_buf();
    let t0 = Instant::now();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
    let results: Vec<(u64, Result<u8, String>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let root = &root;
                s.spawn(move || {
                    (t..cases)
                        .step_by(threads as usize)
                        .map(|i| {
                            let case = case(base + i);
                            let dir: PathBuf = root.join(i.to_string());
                            std::fs::create_dir_all(&dir).unwrap();
                            for (name, text) in &case.files {
                                std::fs::write(dir.join(name), text).unwrap();
                            }
                            (case.seed, check(&case, &dir, i % 4 == 0))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let wall = t0.elapsed().as_secs_f64();
    let ok = results.iter().filter(|(_, r)| r == &Ok(0)).count();
    let bad = results.iter().filter(|(_, r)| r == &Ok(2)).count();
    // Per front end: (ran, bad input).
    let mut by_command: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    for (seed, r) in &results {
        let e = by_command.entry(case(*seed).args[0].clone()).or_default();
        match r {
            Ok(0) => e.0 += 1,
            Ok(_) => e.1 += 1,
            Err(_) => {}
        }
    }
    let per: Vec<String> = by_command.iter().map(|(c, (r, b))| format!("{c} {r}+{b}")).collect();
    println!(
        "swarm: {cases} inputs from seed {base:#x}: {ok} ran, {bad} bad input, in {wall:.1} s ({:.1} runs/s); \
         ran+bad per command: {}",
        cases as f64 / wall,
        per.join(", ")
    );
    let failures: Vec<String> = results
        .iter()
        .filter_map(|(seed, r)| r.as_ref().err().map(|e| (seed, e)))
        .map(|(seed, e)| {
            let c = case(*seed);
            let files: String = c.files.iter().map(|(n, t)| format!("--- {n}\n{t}")).collect();
            format!(
                "seed {seed:#x} (rerun: BLKSIM_SWARM_SEED={seed} BLKSIM_SWARM_CASES=1): {e}\n  blksim {}\n{files}",
                c.args.join(" ")
            )
        })
        .collect();
    std::fs::remove_dir_all(&root).ok();
    assert!(failures.is_empty(), "{} of {cases} swarm cases failed:\n{}", failures.len(), failures.join("\n"));
    // The generator reaches both outcomes: runs that simulate, and bad input; and every front end
    // runs (not asked of a rerun of a few cases).
    assert!(cases < 100 || (ok > cases as usize / 4 && bad > 0), "{ok} ran, {bad} bad input");
    if cases >= 1000 {
        for command in ["run", "t-io_uring", "dsa-memfill", "sweep", "reproduce"] {
            assert!(by_command.get(command).is_some_and(|c| c.0 > 0), "no {command} case ran: {per:?}");
        }
    }
}
