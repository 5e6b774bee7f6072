//! Where an average I/O's time goes (latency stages) and how much CPU time
//! each I/O costs by context: what fio cannot see.

use blksim::stats::{CpuStage, RunReport, LATENCY_STAGES};
use serde_json::{json, Value};

/// (measured I/Os, average ns per latency stage).
pub fn averages(report: &RunReport) -> (u64, Vec<f64>) {
    let ios: u64 = report.jobs.iter().flat_map(|j| j.dirs.iter()).map(|d| d.total_ios).sum();
    let sums: Vec<u64> =
        (0..LATENCY_STAGES.len()).map(|k| report.jobs.iter().map(|j| j.breakdown_ns[k]).sum()).collect();
    let avg = sums.iter().map(|s| if ios == 0 { 0.0 } else { *s as f64 / ios as f64 }).collect();
    (ios, avg)
}

/// CPU time per I/O of the whole machine, by context: (user, sys, hardirq, softirq) ns.
pub fn cpu_per_io(report: &RunReport) -> [f64; 4] {
    let ios: u64 = report.jobs.iter().flat_map(|j| j.dirs.iter()).map(|d| d.total_ios).sum();
    let mut t = [0u64; 4];
    for c in &report.cpu_time {
        t[0] += c.user_ns;
        t[1] += c.sys_ns;
        t[2] += c.hardirq_ns;
        t[3] += c.softirq_ns;
    }
    t.map(|x| if ios == 0 { 0.0 } else { x as f64 / ios as f64 })
}

/// CPU time per I/O of the whole machine, by stage of the I/O path
/// (`CpuStage::ALL` order), ns: they add up to `cpu_per_io`'s sum.
pub fn stage_per_io(report: &RunReport) -> Vec<f64> {
    let ios: u64 = report.jobs.iter().flat_map(|j| j.dirs.iter()).map(|d| d.total_ios).sum();
    (0..CpuStage::COUNT)
        .map(|s| {
            let t: u64 = report.cpu_stage_ns.iter().map(|c| c[s]).sum();
            if ios == 0 {
                0.0
            } else {
                t as f64 / ios as f64
            }
        })
        .collect()
}

/// The `blksim` JSON's `io_breakdown` object.
pub fn json(report: &RunReport) -> Value {
    let (ios, avg) = averages(report);
    let stages: serde_json::Map<String, Value> =
        LATENCY_STAGES.iter().zip(&avg).map(|((name, _), v)| (name.to_string(), json!(v.round()))).collect();
    let cpu = cpu_per_io(report);
    let by_stage: serde_json::Map<String, Value> = CpuStage::ALL
        .iter()
        .zip(stage_per_io(report))
        .map(|(s, v)| (s.name().to_string(), json!((v * 10.0).round() / 10.0)))
        .collect();
    json!({
        "ios": ios,
        "latency_ns": stages,
        "latency_total_ns": avg.iter().sum::<f64>().round(),
        "cpu_ns_per_io": {"user": cpu[0].round(), "sys": cpu[1].round(), "hardirq": cpu[2].round(), "softirq": cpu[3].round()},
        "cpu_ns_per_io_by_stage": by_stage,
        "cpu_ns_per_io_total": (cpu.iter().sum::<f64>() * 10.0).round() / 10.0,
    })
}

/// The text table of `--breakdown`.
pub fn write_breakdown(report: &RunReport) -> String {
    let (ios, avg) = averages(report);
    let mut s = format!("Where an I/O's time goes (average over {ios} measured I/Os, ns):\n");
    for ((name, what), v) in LATENCY_STAGES.iter().zip(&avg) {
        s += &format!("  {name:<11} {v:>12.0}  {what}\n");
    }
    s += &format!("  {:<11} {:>12.0}  fio's lat\n", "total", avg.iter().sum::<f64>());
    let cpu = cpu_per_io(report);
    s += &format!(
        "CPU time per I/O, all CPUs (ns): user {:.0}, sys {:.0}, hardirq {:.0}, softirq {:.0}\n",
        cpu[0], cpu[1], cpu[2], cpu[3]
    );
    s += &write_stages(report);
    s
}

/// The CPU time of an average I/O by stage of the path, all CPUs.
pub fn write_stages(report: &RunReport) -> String {
    let stages = stage_per_io(report);
    let mut s = String::from("CPU time per I/O by stage, all CPUs (ns):\n");
    for (stage, v) in CpuStage::ALL.iter().zip(&stages) {
        if *v > 0.0 {
            s += &format!("  {:<16} {v:>9.1}\n", stage.name());
        }
    }
    let cpu = cpu_per_io(report);
    s += &format!("  {:<16} {:>9.1}  (user + sys + hardirq + softirq per I/O)\n", "total", cpu.iter().sum::<f64>());
    s
}
