//! `mpstat -P ALL` and `iostat -x` shapes: headers, one row per CPU or device,
//! shares that add up, rates from the report's counters.

mod output_support;

use blksim::stats::{DirStats, RunReport};
use blksim::workload::{IoEngine, RwKind};
use blksim_fio::output::{write_iostat, write_mpstat};
use output_support::*;

fn sync_report() -> RunReport {
    let read = dir(20_000, 4096, |_| None, |i| 60_000 + i * 7 % 30_000);
    let config = config("sync", IoEngine::Psync, RwKind::RandRead, 1);
    report(vec![job(config, [read, DirStats::default(), DirStats::default()], 2 * SEC)])
}

#[test]
fn mpstat_has_an_all_row_and_one_row_per_cpu_whose_shares_add_up() {
    let report = sync_report();
    let text = write_mpstat(&report);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("CPU") && lines[0].ends_with("%idle"));
    assert!(lines[1].starts_with("all"));
    assert_eq!(lines.len(), 2 + report.cpu_time.len());
    for l in &lines[1..] {
        let v: Vec<f64> = l.split_whitespace().skip(1).map(|x| x.parse().unwrap()).collect();
        assert!((v.iter().sum::<f64>() - 100.0).abs() < 0.05, "{l}");
    }
}

#[test]
fn iostat_rates_come_from_the_disk_counters() {
    let report = sync_report();
    let text = write_iostat(&report);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("avg-cpu:") && lines[3].starts_with("Device"), "{text}");
    let row: Vec<&str> = lines[4].split_whitespace().collect();
    let d = &report.disks[0];
    let secs = report.sim_time_ns as f64 / 1e9;
    assert_eq!(row[0], d.name);
    let rps: f64 = row[1].parse().unwrap();
    assert!((rps - d.ios[0] as f64 / secs).abs() < 0.01, "r/s {rps}");
    let util: f64 = row.last().unwrap().parse().unwrap();
    assert!((util - d.util_pct).abs() < 0.01);
}

/// iostat's `%system` is sys + irq + softirq over all CPUs (sysstat adds
/// them), and the shares add up to 100.
#[test]
fn iostat_avg_cpu_counts_interrupt_time_as_system() {
    let mut report = sync_report();
    for (i, t) in report.cpu_time.iter_mut().enumerate() {
        let hardirq = 5 * (i as u64 % 3);
        *t = blksim::stats::CpuTime {
            user_ns: 10,
            sys_ns: 20,
            hardirq_ns: hardirq,
            softirq_ns: 5,
            idle_ns: 40 - hardirq,
            iowait_ns: 25,
        };
    }
    let text = write_iostat(&report);
    let v: Vec<f64> = text.lines().nth(1).unwrap().split_whitespace().map(|x| x.parse().unwrap()).collect();
    let n = report.cpu_time.len() as f64;
    let irq: f64 = (0..report.cpu_time.len()).map(|i| 5.0 * (i % 3) as f64).sum::<f64>() / n;
    assert!((v[2] - (20.0 + 5.0 + irq)).abs() < 0.01, "{text}");
    assert!((v[3] - 25.0).abs() < 0.01, "%iowait: {text}");
    assert!((v.iter().sum::<f64>() - 100.0).abs() < 0.05, "{text}");
}
