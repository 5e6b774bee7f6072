//! The `/proc/interrupts`-style table, laid out as the kernel's
//! `show_interrupts` (kernel/irq/proc.c) and x86 `arch_show_interrupts` print it.

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
    out
}
