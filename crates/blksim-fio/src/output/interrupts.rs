//! The `/proc/interrupts`-style table (whole, or only the CPUs and rows that
//! counted something), laid out as the kernel's
//! `show_interrupts` (kernel/irq/proc.c) and x86 `arch_show_interrupts` print it,
//! then, after a blank line, what it does not show: each device's MSIs and
//! handler runs against its I/Os, and the exactly-once counts.

use std::fmt::Write;

use blksim::stats::{InterruptRow, RunReport};

/// The whole table: every CPU and every row, as `/proc/interrupts` has them (`--interrupts=full`).
pub fn write(report: &RunReport) -> String {
    let cpus: Vec<usize> = (0..cpu_count(report)).collect();
    let rows: Vec<&InterruptRow> = report.interrupts.iter().collect();
    table(&rows, &cpus) + &device_summary(report)
}

/// The table with only the CPUs and rows that counted something (`--interrupts`, the default): the
/// same layout with the all-zero columns and rows left out, then a line saying how many were, so a
/// 128-CPU machine's table shows the CPUs and queues the run used.
pub fn write_compact(report: &RunReport) -> String {
    let all_cpus = cpu_count(report);
    let rows: Vec<&InterruptRow> = report.interrupts.iter().filter(|r| r.total() > 0).collect();
    let mut cpus: Vec<usize> = rows.iter().flat_map(|r| r.per_cpu.iter().map(|&(c, _)| c as usize)).collect();
    cpus.sort_unstable();
    cpus.dedup();
    let mut out = table(&rows, &cpus);
    let _ = writeln!(
        out,
        "(all zero, not shown: {} of {} CPUs, {} of {} rows; --interrupts=full shows them)",
        all_cpus - cpus.len(),
        all_cpus,
        report.interrupts.len() - rows.len(),
        report.interrupts.len()
    );
    out + &device_summary(report)
}

/// The CPUs of the table: the machine's, else as many as the rows have counts for.
fn cpu_count(report: &RunReport) -> usize {
    let row_cpus =
        report.interrupts.iter().flat_map(|r| r.per_cpu.last()).map(|&(c, _)| c as usize + 1).max().unwrap_or(0);
    if report.cpu_time.is_empty() {
        row_cpus
    } else {
        report.cpu_time.len()
    }
}

/// The table's header and `rows`, with the columns of `cpus`.
fn table(rows: &[&InterruptRow], cpus: &[usize]) -> String {
    // The kernel sizes the label column by the IRQ count (at least 3);
    // here it fits the longest label.
    let prec = rows.iter().map(|r| r.label.len()).max().unwrap_or(0).max(3);

    let mut out = String::new();
    let _ = write!(out, "{:width$}", "", width = prec + 8);
    for cpu in cpus {
        let _ = write!(out, "CPU{cpu:<8}");
    }
    out.push('\n');
    for row in rows {
        let _ = write!(out, "{:>prec$}: ", row.label);
        for &cpu in cpus {
            let _ = write!(out, "{:10} ", row.count(cpu as u32));
        }
        if row.chip.is_empty() {
            // System vectors (NMI, LOC, PMN, ...): counts, then the description.
            let _ = writeln!(out, "  {}", row.name);
        } else {
            let _ = writeln!(out, " {:>8}  {}", row.chip, row.name);
        }
    }
    out
}

/// Per device: requests completed, MSIs sent, handler runs and the ratios; then the
/// run's exactly-once counts.
fn device_summary(report: &RunReport) -> String {
    let ratio = |a: u64, b: u64| if b == 0 { "-".to_string() } else { format!("{:.2}", a as f64 / b as f64) };
    let mut out = String::from("\ndevice      requests     MSIs         handler runs  per MSI       per run\n");
    for d in &report.disks {
        let ios = d.requests;
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
