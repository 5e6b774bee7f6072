//! Shared helpers for scenario tests: small machines, jobs, and the invariant checker.

#![allow(dead_code)]

use blksim::machine::{builtin, load_profile, Builtins, Machine};
use blksim::settings::Settings;
use blksim::stats::RunReport;
use blksim::workload::{IoEngine, IoUringOptions, JobConfig, RwKind};
use blksim::{run, Invariants};

/// The built-in server cut down to `cores` cores without SMT (fast tests).
pub fn small_machine(cores: u32) -> Machine {
    let text = format!(
        "name = \"small\"\ndescription = \"test\"\nextends = \"spr-gen5\"\n[cpu]\ncores_per_socket = {cores}\nthreads_per_core = 1\n"
    );
    load_profile(&text, "small", &Builtins).unwrap()
}

/// `small_machine` with extra profile TOML overlaid (e.g. device model fields).
pub fn small_machine_with(cores: u32, extra: &str) -> Machine {
    let text = format!(
        "name = \"small\"\ndescription = \"test\"\nextends = \"spr-gen5\"\n[cpu]\ncores_per_socket = {cores}\nthreads_per_core = 1\n{extra}"
    );
    load_profile(&text, "small", &Builtins).unwrap()
}

pub fn server() -> Machine {
    builtin("spr-gen5").unwrap()
}

pub fn job(name: &str, engine: IoEngine, rw: RwKind, bs: u64, iodepth: u32, dev: &str, runtime_ms: u64) -> JobConfig {
    let mut j = JobConfig::new(name);
    j.ioengine = engine;
    j.rw = rw;
    j.bs = [bs; 3];
    j.iodepth = iodepth;
    j.iodepth_low = iodepth;
    j.direct = true;
    j.filenames = vec![format!("/dev/{dev}")];
    j.runtime_ns = Some(runtime_ms * 1_000_000);
    j.time_based = true;
    j
}

pub fn uring(hipri: bool) -> IoEngine {
    IoEngine::IoUring(IoUringOptions { hipri, fixedbufs: true, registerfiles: true, ..Default::default() })
}

/// Run and check every invariant that must hold in any scenario.
pub fn run_checked(m: &Machine, s: &Settings, jobs: &[JobConfig], seed: u64) -> (RunReport, Invariants) {
    let (report, inv) = run(m, s, jobs, seed).expect("run");
    check_invariants(&report, &inv);
    (report, inv)
}

pub fn check_invariants(report: &RunReport, inv: &Invariants) {
    // Each submitted I/O completes exactly once and every request is freed.
    assert_eq!(inv.ios_issued, inv.ios_reaped, "every issued I/O is reaped");
    assert_eq!(inv.requests_live, 0, "no request left allocated");
    // Each MSI is handled exactly once: delivered, merged into a pending one, or still pending.
    assert_eq!(inv.msi.sent, inv.msi.delivered + inv.msi.merged + inv.msi_pending, "MSI accounting");
    // Each CPU's time by context sums to the elapsed time.
    for (i, t) in report.cpu_time.iter().enumerate() {
        assert_eq!(t.total_ns(), report.sim_time_ns, "CPU {i} time adds up");
    }
    // IOPS x block size = bandwidth, per job and direction (with a bssplit, within its sizes).
    for j in &report.jobs {
        for (d, s) in j.dirs.iter().enumerate() {
            let (min, max) = j.config.io_size_range(d);
            if min == max {
                assert_eq!(s.io_bytes, s.total_ios * min, "bytes = ios x bs");
            } else {
                assert!(
                    (s.total_ios * min..=s.total_ios * max).contains(&s.io_bytes),
                    "bytes within the split's sizes"
                );
            }
        }
    }
}

/// `small_machine(cores)` with an FC host adapter (two ports) on its first
/// root port and one 15k rpm disk, `sda`, behind port 0 (write cache as
/// given), with the SCSI path's costs.
pub fn scsi_machine(cores: u32, write_cache: bool) -> Machine {
    let text = format!(
        r#"name = "fc"
description = "test"
extends = "spr-gen5"
[cpu]
cores_per_socket = {cores}
threads_per_core = 1
[device_model.hba]
kind = "fc_hba"
root_port = "iio0"
ports = 2
queue_depth = 32
fw_cmd_ns = {{ ns = 10000, min = 1000, max = 50000, note = "t" }}
link_mb_per_s = 200
[device_model.disk15k]
kind = "scsi_disk"
capacity_gib = 146
rpm = 15000
media_mb_per_s = 100
seek_track_ns = {{ ns = 200000, min = 100000, max = 1000000, note = "t" }}
seek_avg_ns = {{ ns = 3400000, min = 2000000, max = 5000000, note = "t" }}
seek_full_ns = {{ ns = 7000000, min = 5000000, max = 10000000, note = "t" }}
controller_ns = {{ ns = 50000, min = 10000, max = 500000, note = "t" }}
cache_hit_ns = {{ ns = 20000, min = 0, max = 500000, note = "t" }}
cache_mib = 16
read_ahead_kib = 512
write_cache = {write_cache}
[[device]]
name = "host0"
model = "hba"
[[device]]
name = "sda"
model = "disk15k"
host = "host0"
port = 0
[costs]
scsi_queue_rq_ns = {{ ns = 1000, min = 100, max = 10000, note = "t" }}
hba_queuecommand_ns = {{ ns = 1000, min = 100, max = 10000, note = "t" }}
hba_irq_ns = {{ ns = 1000, min = 100, max = 10000, note = "t" }}
hba_cqe_ns = {{ ns = 500, min = 100, max = 10000, note = "t" }}
scsi_complete_ns = {{ ns = 1000, min = 100, max = 10000, note = "t" }}
scsi_cmd_lines = {{ ns = 4, min = 0, max = 20, note = "t" }}
scsi_bio_lines = {{ ns = 6, min = 0, max = 20, note = "t" }}
wake_remote_lines = {{ ns = 4, min = 0, max = 20, note = "t" }}
numa_remote_ns = {{ ns = 100, min = 0, max = 1000, note = "t" }}
"#
    );
    load_profile(&text, "fc", &Builtins).unwrap()
}
