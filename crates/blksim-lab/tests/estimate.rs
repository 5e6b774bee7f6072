//! The cost estimate (the simulated I/Os a workload will do, which the
//! wall-time budget and the longest-first order of sweeps rest on) against
//! the I/Os runs really do, for every device kind and engine: within 2x.

use std::collections::BTreeMap;
use std::path::Path;

use blksim::machine::profile::builtin;
use blksim::machine::Machine;
use blksim::settings::Settings;
use blksim::{RunOptions, Workload};
use blksim_fio::job::{parse_job_text, ParseContext};
use blksim_lab::estimate::estimated_ios;

/// The jobs of fio job `text` on `machine`.
fn jobs(machine: &Machine, text: &str) -> Workload {
    let ctx = ParseContext::for_machine(machine, BTreeMap::new());
    let file = parse_job_text(text, Path::new("estimate.fio"), &ctx).unwrap_or_else(|e| panic!("{e}\n{text}"));
    Workload { jobs: file.jobs.into_iter().map(|j| j.config).collect(), dsa: Vec::new() }
}

/// The I/Os (and DSA descriptors) a run of `workload` did.
fn measured(machine: &Machine, workload: &Workload) -> f64 {
    let settings = Settings::default();
    let (report, _) = blksim::run_workload(machine, &settings, workload, 1, &RunOptions::default())
        .unwrap_or_else(|e| panic!("{}", e.message));
    let ios: u64 = report.jobs.iter().flat_map(|j| j.dirs.iter()).map(|d| d.total_ios).sum();
    (ios + report.dsa.iter().map(|c| c.completed).sum::<u64>()) as f64
}

/// Why the estimate of `workload` is not within 2x of its run, if it is not.
fn within_2x(label: &str, machine: &Machine, workload: &Workload) -> Option<String> {
    let est = estimated_ios(machine, workload);
    let got = measured(machine, workload);
    let ratio = est / got;
    eprintln!("{label}: estimated {est:.0} I/Os, the run did {got:.0} ({ratio:.2}x)");
    (got == 0.0 || !(0.5..=2.0).contains(&ratio))
        .then(|| format!("{label}: estimated {est:.0} I/Os, the run did {got:.0} ({ratio:.2}x)"))
}

const NVME: &str = "[global]\nfilename=/dev/nvme0n1\nrw=randread\nbs=4k\ndirect=1\n";

#[test]
fn every_device_kind_and_engine_is_estimated_within_2x() {
    let spr = builtin("spr-gen5").unwrap();
    let cases: Vec<(&str, String)> = vec![
        ("nvme libaio qd32", format!("{NVME}[a]\nioengine=libaio\niodepth=32\ntime_based\nruntime=2ms\n")),
        ("nvme psync", format!("{NVME}[a]\nioengine=psync\ntime_based\nruntime=2ms\n")),
        ("nvme sized", format!("{NVME}[a]\nioengine=libaio\niodepth=8\nsize=8m\n")),
        ("nvme loops", format!("{NVME}[a]\nioengine=libaio\niodepth=8\nsize=2m\nloops=4\n")),
        ("nvme io_size loops", format!("{NVME}[a]\nioengine=libaio\niodepth=8\nio_size=2m\nloops=4\n")),
        ("nvme verify", format!("{NVME}[a]\nioengine=libaio\nrw=write\niodepth=8\nsize=4m\nverify=crc32c\n")),
        (
            "nvme verify_backlog loops",
            format!("{NVME}[a]\nioengine=libaio\nrw=randwrite\niodepth=8\nio_size=2m\nloops=3\nverify=md5\nverify_backlog=4\n"),
        ),
        ("nvme number_ios", format!("{NVME}[a]\nioengine=libaio\niodepth=8\nnumber_ios=3000\n")),
        ("nvme 4 jobs", format!("{NVME}[a]\nioengine=libaio\niodepth=16\nnumjobs=4\ntime_based\nruntime=2ms\n")),
        ("nvme write 128k", format!("{NVME}[a]\nioengine=libaio\nrw=write\nbs=128k\niodepth=16\ntime_based\nruntime=2ms\n")),
        ("nvme sqpoll", format!("{NVME}[a]\nioengine=io_uring\nsqthread_poll=1\niodepth=32\ntime_based\nruntime=2ms\n")),
        ("nvme hipri", format!("{NVME}[a]\nioengine=io_uring\nhipri=1\niodepth=4\ntime_based\nruntime=2ms\n")),
        ("nvme paced", format!("{NVME}[a]\nioengine=libaio\niodepth=8\nrate_iops=20000\ntime_based\nruntime=20ms\n")),
        (
            "passthrough",
            "[a]\nfilename=/dev/ng0n1\nioengine=io_uring_cmd\ncmd_type=nvme\nrw=randread\nbs=4k\niodepth=32\ntime_based\nruntime=2ms\n"
                .into(),
        ),
        ("null_blk", "[a]\ndirect=1\nfilename=/dev/nullb0\nioengine=libaio\nrw=randread\niodepth=8\ntime_based\nruntime=2ms\n".into()),
        ("null engine", "[a]\nioengine=null\nrw=randread\nsize=1g\niodepth=8\ntime_based\nruntime=2ms\n".into()),
    ];
    let mut wrong: Vec<String> =
        cases.iter().filter_map(|(label, text)| within_2x(label, &spr, &jobs(&spr, text))).collect();
    let hp = builtin("hp-ia64-2008").unwrap();
    // A rotating disk: long enough runs for its seeks to settle.
    for (rw, depth, runtime) in [
        ("randread", 1, "200ms"),
        ("randread", 8, "200ms"),
        ("randread", 32, "200ms"),
        ("read", 4, "50ms"),
        ("randwrite", 8, "50ms"),
    ] {
        let text = format!("[a]\ndirect=1\nfilename=/dev/sda\nioengine=libaio\nrw={rw}\nbs=4k\niodepth={depth}\ntime_based\nruntime={runtime}\n");
        wrong.extend(within_2x(&format!("scsi {rw} qd{depth}"), &hp, &jobs(&hp, &text)));
    }
    let dsa = builtin("spr-dsa").unwrap();
    let args: Vec<String> = ["--runtime", "1ms"].iter().map(|s| s.to_string()).collect();
    wrong.extend(within_2x("dsa", &dsa, &blksim_lab::frontend::dsa_memfill(&args, &dsa).unwrap()));
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The estimate scales with the runtime and stops at what the drive can do.
#[test]
fn the_estimate_grows_with_runtime_and_is_bounded_by_the_devices() {
    let m = builtin("spr-gen5").unwrap();
    let job = |runtime: &str, depth: u32| {
        format!("{NVME}[a]\nioengine=libaio\niodepth={depth}\ntime_based\nruntime={runtime}\n")
    };
    let est = |text: &str| estimated_ios(&m, &jobs(&m, text));
    // The I/O in flight at the end completes too (one at depth 1).
    let (short, long) = (est(&job("10ms", 1)) - 1.0, est(&job("10s", 1)) - 1.0);
    assert!((long / short - 1000.0).abs() < 1e-6, "{short} {long}");
    // A deep queue is bounded by the drive's IOPS: spr-gen5's PM1743 does its data sheet's 4 KiB random reads.
    let rate = m.devices[0].service_estimate(&m, 0, 4096, true, 1).unwrap().iops.unwrap();
    assert!((1.9e6..2.1e6).contains(&rate), "{rate}");
    // One job is held to what its CPU can submit (the single-core IOPS limit), below the drive.
    let one = est(&job("1s", 4096)) - 4096.0;
    assert!((2e5..rate / 2.0).contains(&one), "{one} {rate}");
    // Eight jobs on one drive share it: together they do its rate.
    let eight = est(&format!("{}numjobs=8\n", job("1s", 4096))) - 8.0 * 4096.0;
    assert!((eight - rate).abs() < 1.0, "{eight} {rate}");
}

/// A job over a whole device (no size) is estimated as that many I/Os, whatever the device's kind.
#[test]
fn a_whole_device_job_counts_the_device_capacity() {
    let check = |machine: &Machine, file: &str, engine: &str, capacity: u64| {
        let w = jobs(machine, &format!("[a]\nfilename={file}\n{engine}\nrw=read\nbs=1m\n"));
        let est = estimated_ios(machine, &w);
        let ios = (capacity >> 20) as f64;
        assert!((est - ios).abs() <= 1.0, "{file}: {est} I/Os estimated, the device holds {ios} of 1 MiB");
    };
    let spr = builtin("spr-gen5").unwrap();
    let cap = |m: &Machine, name: &str| m.devices.iter().find(|d| d.name == name).unwrap().capacity_bytes();
    check(&spr, "/dev/nvme0n1", "ioengine=libaio", cap(&spr, "nvme0n1"));
    check(&spr, "/dev/nullb0", "ioengine=libaio", cap(&spr, "nullb0"));
    check(&spr, "/dev/ng0n1", "ioengine=io_uring_cmd\ncmd_type=nvme", cap(&spr, "nvme0n1"));
    let hp = builtin("hp-ia64-2008").unwrap();
    check(&hp, "/dev/sda", "ioengine=libaio", cap(&hp, "sda"));
}
