//! The `/proc/interrupts`-style table, laid out as the kernel's
//! `show_interrupts` (kernel/irq/proc.c) and x86 `arch_show_interrupts` print it,
//! then, after a blank line, what it does not show: each device's MSIs and
//! handler runs against its I/Os, and the exactly-once counts.

use std::fmt::Write;

use blksim::stats::RunReport;

pub fn write(report: &RunReport) -> String {
    let row_cpus = report.interrupts.iter().map(|r| r.per_cpu.len()).max().unwrap_or(0);
    let cpus = if report.cpu_time.is_empty() { row_cpus } else { report.cpu_time.len() };
    // The kernel sizes the label column by the IRQ count (at least 3);
    // here it fits the longest label.
    let prec = report.interrupts.iter().map(|r| r.label.len()).max().unwrap_or(0).max(3);

    let mut out = String::new();
    let _ = write!(out, "{:width$}", "", width = prec + 8);
    for cpu in 0..cpus {
        let _ = write!(out, "CPU{cpu:<8}");
    }
    out.push('\n');
    for row in &report.interrupts {
        let _ = write!(out, "{:>prec$}: ", row.label);
        for cpu in 0..cpus {
            let _ = write!(out, "{:10} ", row.per_cpu.get(cpu).copied().unwrap_or(0));
        }
        if row.chip.is_empty() {
            // System vectors (NMI, LOC, PMN, ...): counts, then the description.
            let _ = writeln!(out, "  {}", row.name);
        } else {
            let _ = writeln!(out, " {:>8}  {}", row.chip, row.name);
        }
    }
    out += &device_summary(report);
    out
}

/// Per device: I/Os, MSIs sent, handler runs and the ratios; then the
/// run's exactly-once counts.
fn device_summary(report: &RunReport) -> String {
    let ratio = |a: u64, b: u64| if b == 0 { "-".to_string() } else { format!("{:.2}", a as f64 / b as f64) };
    let mut out = String::from("\ndevice      I/Os         MSIs         handler runs  I/Os per MSI  I/Os per run\n");
    for d in &report.disks {
        let ios = d.ios[0] + d.ios[1];
        let _ = writeln!(
            out,
            "{:<11} {:<12} {:<12} {:<13} {:<13} {}",
            d.name,
            ios,
            d.msis,
            d.irq_handler_runs,
            ratio(ios, d.msis),
            ratio(ios, d.irq_handler_runs)
        );
    }
    let inv = &report.invariants;
    let _ = writeln!(
        out,
        "exactly once: I/Os issued {}, reaped {}, requests live {}; MSIs sent {} = handled {} + merged {} + pending {}",
        inv.ios_issued,
        inv.ios_reaped,
        inv.requests_live,
        inv.msi.sent,
        inv.msi.delivered,
        inv.msi.merged,
        inv.msi_pending
    );
    out
}
