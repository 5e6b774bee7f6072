//! CPU hotplug with managed NVMe IRQs: a queue whose CPUs all go offline
//! drains, its IRQ shuts down and starts again when a CPU comes back; tasks
//! move; nothing is lost, in either MSI mode.

mod common;

use blksim::settings::{Settings, TimedAction};
use blksim::stats::RunReport;
use blksim::workload::{IoEngine, JobConfig, RwKind};
use blksim::{run_with, Invariants, RunOptions};
use common::*;

const MODES: [&str; 2] = ["", "intremap=posted_msi"];

fn run_timed(
    m: &blksim::machine::Machine,
    cmdline: &str,
    jobs: &[JobConfig],
    timed: Vec<(u64, TimedAction)>,
) -> (RunReport, Invariants) {
    let mut s = Settings::default();
    s.apply_cmdline(cmdline).unwrap();
    let (r, inv) = run_with(m, &s, jobs, 1, &RunOptions { timed, ..Default::default() }).expect("run");
    check_invariants(&r, &inv);
    (r, inv)
}

/// IRQ `name`'s count on each CPU.
fn row(r: &RunReport, name: &str) -> Vec<u64> {
    let row = r.interrupts.iter().find(|row| row.name == name).unwrap_or_else(|| panic!("no IRQ {name}"));
    (0..r.cpu_time.len() as u32).map(|c| row.count(c)).collect()
}

/// One job on CPU 1 of a 4-CPU machine: CPU 1 goes offline at 2 ms and
/// comes back at 8 ms. Its queue (nvme0q2, whose managed IRQ has CPU 1
/// alone in its mask) drains, its IRQ shuts down, the job moves to CPU 0
/// and its I/O goes through CPU 0's queue; back online, the IRQ starts again.
#[test]
fn offlining_the_last_cpu_of_a_managed_irq_drains_its_queue_and_loses_nothing() {
    let m = small_machine(4);
    for mode in MODES {
        let mut j = job("r", IoEngine::Libaio, RwKind::RandRead, 4096, 32, "nvme0n1", 12);
        j.cpus_allowed = Some(vec![1]);
        let timed =
            vec![(2_000_000, TimedAction::CpuOffline { cpu: 1 }), (8_000_000, TimedAction::CpuOnline { cpu: 1 })];
        let (r, inv) = run_timed(&m, mode, &[j], timed);
        let h = &r.hotplug;
        assert_eq!((h.cpus_down, h.cpus_up), (1, 1), "{mode}: {h:?}");
        // One IRQ per NVMe drive has CPU 1 alone in its mask.
        let drives = m.devices.iter().filter(|d| matches!(d.kind, blksim::machine::DeviceKind::Nvme(_))).count() as u64;
        assert_eq!((h.irqs_shut_down, h.irqs_started), (drives, drives), "{mode}: {h:?}");
        assert!(h.task_migrations >= 1 && h.drain_waits >= 1, "{mode}: {h:?}");
        // CPU 1's queue took interrupts on CPU 1 only; CPU 0's queue took the job's I/O meanwhile.
        let q2 = row(&r, "nvme0q2");
        assert!(q2[1] > 0 && q2[0] + q2[2] + q2[3] == 0, "{mode}: {q2:?}");
        assert!(row(&r, "nvme0q1")[0] > 0, "{mode}");
        // I/O went on: more than the 2 ms before the offline could do.
        let before = inv.ios_issued as f64 * 2.0 / 12.0;
        assert!(r.jobs[0].dirs[0].total_ios as f64 > 2.0 * before, "{mode}: {}", r.jobs[0].dirs[0].total_ios);
        assert_eq!(r.invariants.msi.sent, inv.msi.sent);
    }
}

/// The 8-drive benchmark (64 libaio jobs at QD64, job i on CPU i) while
/// CPUs with and without jobs go offline and back every 300 us (writes
/// wait for the take-down in progress, as on Linux), in both MSI modes:
/// every I/O completes exactly once, every MSI is handled exactly once, and
/// the report carries the counts the check uses.
#[test]
fn cpu_churn_on_the_8_drive_job_loses_no_io_and_no_interrupt() {
    let m = server();
    let jobs: Vec<JobConfig> = (0..64u32)
        .map(|i| {
            let mut j =
                job(&format!("j{i}"), IoEngine::Libaio, RwKind::RandRead, 4096, 64, &format!("nvme{}n1", i / 8), 15);
            j.cpus_allowed = Some(vec![i]);
            j
        })
        .collect();
    let cpus = [5u32, 70, 13, 100, 62, 66, 33, 127];
    let timed: Vec<(u64, TimedAction)> = (0..40u64)
        .map(|k| {
            let cpu = cpus[(k / 2) as usize % cpus.len()];
            let action = if k % 2 == 0 { TimedAction::CpuOffline { cpu } } else { TimedAction::CpuOnline { cpu } };
            (500_000 + k * 300_000, action)
        })
        .collect();
    for mode in MODES {
        let (r, inv) = run_timed(&m, mode, &jobs, timed.clone());
        let h = &r.hotplug;
        assert!(h.cpus_down >= 3 && h.cpus_up >= 3, "{mode}: {h:?}");
        assert!(h.irqs_shut_down >= 8 && h.irqs_started >= 8 && h.task_migrations >= 2, "{mode}: {h:?}");
        // The report's counts are the ones checked.
        let e = &r.invariants;
        assert_eq!((e.ios_issued, e.ios_reaped, e.requests_live), (inv.ios_issued, inv.ios_reaped, 0), "{mode}");
        assert_eq!(
            (e.msi.sent, e.msi.delivered, e.msi.merged, e.msi_pending),
            (inv.msi.sent, inv.msi.delivered, inv.msi.merged, inv.msi_pending)
        );
        assert!(inv.msi.sent > 10_000, "{mode}: {inv:?}");
    }
}

/// An affinity list naming an offline CPU is accepted when it names an
/// online one too (the IRQ goes to the online one), refused when it names
/// none; offlining the last online CPU is refused.
#[test]
fn affinity_lists_may_name_offline_cpus_and_the_last_cpu_stays() {
    let m = blksim::machine::builtin("spr-dsa").unwrap();
    let dsa = vec![blksim::workload::DsaClientConfig {
        device: "dsa0".into(),
        wq: 0,
        outstanding: 8,
        bytes: 4096,
        runtime_ns: 2_000_000,
        irq_cpu: Some(0),
    }];
    let w = blksim::Workload { jobs: vec![], dsa };
    let timed = vec![
        (100_000, TimedAction::CpuOffline { cpu: 3 }),
        (300_000, TimedAction::IrqAffinity { irq_number: 128, cpus: vec![3, 4] }),
    ];
    let (r, inv) =
        blksim::run_workload(&m, &Settings::default(), &w, 1, &RunOptions { timed, ..Default::default() }).unwrap();
    check_invariants(&r, &inv);
    let q = row(&r, "idxd-dsa0-wq0");
    assert!(q[4] > 0 && q[3] == 0, "{:?}", &q[..6]);
    let timed = vec![
        (100_000, TimedAction::CpuOffline { cpu: 3 }),
        (300_000, TimedAction::IrqAffinity { irq_number: 128, cpus: vec![3] }),
    ];
    match blksim::run_workload(&m, &Settings::default(), &w, 1, &RunOptions { timed, ..Default::default() }) {
        Err(e) => assert!(e.message.contains("names no online CPU"), "{}", e.message),
        Ok(_) => panic!("a list of offline CPUs only was accepted"),
    }
    // The second write waits for the first take-down (a drain of 5 ms), then fails.
    let small = small_machine(2);
    let j = job("r", IoEngine::Libaio, RwKind::RandRead, 4096, 4, "nvme0n1", 20);
    let timed = vec![(500_000, TimedAction::CpuOffline { cpu: 0 }), (600_000, TimedAction::CpuOffline { cpu: 1 })];
    match run_with(&small, &Settings::default(), &[j], 1, &RunOptions { timed, ..Default::default() }) {
        Err(e) => assert!(e.message.contains("last online CPU"), "{}", e.message),
        Ok(_) => panic!("offlining the last online CPU was accepted"),
    }
}
