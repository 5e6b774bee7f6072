//! A platform that serialises MSI-X writes (`gen5-msi-limited`: spr-gen5
//! with the platform-wide point GSIM's documentation describes on affected
//! SoCs): every device MSI write, remapped or posted, passes it one at a
//! time, and the DMA writes behind an MSI on its root port wait for it.

mod common;

use blksim::machine::profile::builtin;
use blksim::settings::Settings;
use blksim::stats::RunReport;
use blksim::workload::{IoEngine, JobConfig, RwKind};
use common::*;

/// Eight libaio jobs at QD64 per drive on `drives` drives of `machine`,
/// each drive's jobs on eight CPUs of their own, for `ms` ms after `ramp_ms`.
fn run_drives(machine: &str, drives: u32, cmdline: &str, writes: &[&str], ramp_ms: u64, ms: u64) -> RunReport {
    let m = builtin(machine).unwrap();
    let mut s = Settings::default();
    s.apply_cmdline(cmdline).unwrap();
    let devices: Vec<String> = (0..8).map(|i| format!("nvme{i}n1")).collect();
    if !writes.is_empty() {
        s.apply_patch("gsim").unwrap();
    }
    for w in writes {
        s.apply_write(w, &devices).unwrap();
    }
    let jobs: Vec<JobConfig> = (0..drives)
        .flat_map(|d| {
            (0..8).map(move |k| {
                let mut j =
                    job(&format!("d{d}j{k}"), IoEngine::Libaio, RwKind::RandRead, 4096, 64, &format!("nvme{d}n1"), ms);
                j.cpus_allowed = Some(vec![d * 8 + k]);
                j.ramp_time_ns = ramp_ms * 1_000_000;
                j
            })
        })
        .collect();
    run_checked(&m, &s, &jobs, 1).0
}

fn iops(r: &RunReport) -> f64 {
    let ios: u64 = r.jobs.iter().map(|j| j.dirs[0].total_ios).sum();
    let ns = r.jobs.iter().map(|j| j.runtime_ns).max().unwrap();
    ios as f64 * 1e9 / ns as f64
}

fn stage(r: &RunReport) -> (u64, f64) {
    let s = r.interrupt_path.iter().find(|p| p.name == "msi-serialisation").expect("the platform's serialisation");
    (s.messages, s.busy_pct)
}

#[test]
fn the_platforms_msi_write_limit_holds_the_drives_writes_and_adding_drives_gains_nothing() {
    for cmdline in ["", "intremap=posted_msi"] {
        let one = run_drives("gen5-msi-limited", 1, cmdline, &[], 0, 4);
        let four = run_drives("gen5-msi-limited", 4, cmdline, &[], 0, 4);
        let unaffected = run_drives("spr-gen5", 4, "intremap=posted_msi", &[], 0, 4);
        assert!(unaffected.interrupt_path.iter().all(|p| p.name != "msi-serialisation"));
        // Every device MSI passed the point (500 ns each: at most 2 M/s), and
        // the root port of the four drives, which holds the writes behind an
        // MSI until the MSI is through, was busy all the time.
        let (messages, _) = stage(&four);
        let sent: u64 = four.msi_per_cpu.iter().map(|c| c.device_msis).sum();
        assert_eq!(messages, sent, "{cmdline}");
        let limit = four.sim_time_ns as f64 / 500.0;
        assert!(messages as f64 <= limit + 1.0, "{cmdline}: {messages} MSIs in {} ns", four.sim_time_ns);
        let port = four.interrupt_path.iter().find(|p| p.name == "iio0").unwrap();
        assert!(port.busy_pct > 95.0, "{cmdline}: {port:?}");
        // A collapse, not a ceiling: four drives do no more than one, a
        // third or less of what the same drives do without the limit.
        assert!(iops(&four) < iops(&one) * 1.1, "{cmdline}: 1 drive {:.0}, 4 drives {:.0}", iops(&one), iops(&four));
        assert!(iops(&four) * 3.0 < iops(&unaffected), "{cmdline}: {:.0} vs {:.0}", iops(&four), iops(&unaffected));
    }
}

#[test]
fn gsim_moderation_takes_the_msi_rate_under_the_limit_and_the_drives_back() {
    // GSIM's fixed mode (delay_us=100): no ramp needed for its delays to settle.
    let writes = [
        "/proc/irq/soft_moderation/target_intr_rate=0",
        "/proc/irq/soft_moderation/hardirq_percent=0",
        "/proc/irq/soft_moderation/delay_us=100",
    ];
    let stock = run_drives("gen5-msi-limited", 2, "", &[], 0, 4);
    let gsim = run_drives("gen5-msi-limited", 2, "", &writes, 1, 4);
    let per_io = |r: &RunReport| stage(r).0 as f64 / r.jobs.iter().map(|j| j.dirs[0].total_ios).sum::<u64>() as f64;
    assert!(
        per_io(&gsim) < per_io(&stock) * 0.5,
        "MSIs per I/O: stock {:.3}, gsim {:.3}",
        per_io(&stock),
        per_io(&gsim)
    );
    assert!(iops(&gsim) > iops(&stock) * 2.0, "stock {:.0}, gsim {:.0}", iops(&stock), iops(&gsim));
}
