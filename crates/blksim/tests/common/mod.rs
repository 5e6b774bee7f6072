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
    // IOPS x block size = bandwidth, per job and direction.
    for j in &report.jobs {
        for (d, s) in j.dirs.iter().enumerate() {
            assert_eq!(s.io_bytes, s.total_ios * j.config.bs[d], "bytes = ios x bs");
        }
    }
}
