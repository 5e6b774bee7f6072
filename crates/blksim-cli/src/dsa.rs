//! `blksim dsa-memfill`: drive the machine's DSA devices with the memfill
//! client and report completion interrupts, MSIs, notifications and bandwidth.

use blksim::machine::Machine;
use blksim::stats::{MsiCpuStats, RunReport};
use blksim_lab::frontend::dsa_memfill;
use serde_json::json;

use crate::args::{DsaArgs, DsaFormat};
use crate::commands::{timed_writes, DEFAULT_DSA_MACHINE};
use crate::failure::Failure;
use crate::interrupt;
use crate::out;

/// `blksim dsa-memfill`: load the machine, build the settings and the clients, simulate, print the rates.
pub fn dsa_memfill_command(args: &DsaArgs) -> Result<(), Failure> {
    let timed = timed_writes(&args.at.at)?;
    let (machine, settings) = args.knobs.machine_and_settings(DEFAULT_DSA_MACHINE)?;
    let workload = dsa_memfill(&args.front_end_args(), &machine)?;
    let budget = crate::budget::check(&machine, &workload, &args.budget)?;
    let signals = interrupt::stop_on_signals();
    let watch = crate::budget::Watch::start(&signals, budget);
    let options = blksim::RunOptions { timed, stop: Some(watch.stop.clone()), ..Default::default() };
    let (report, inv) = blksim::run_workload(&machine, &settings, &workload, args.knobs.seed, &options)?;
    interrupt::unless_stopped(&watch.stop, || crate::invariants::check(&report, &inv))?;
    // A stopped run's rates are over the virtual time it had.
    let runtime_ns = workload.dsa.iter().map(|c| c.runtime_ns).max().unwrap_or(0);
    let secs = runtime_ns.min(report.sim_time_ns).max(1) as f64 / 1e9;
    let rates = DsaRates::of(&report, secs);
    let mut out = match args.format {
        DsaFormat::Json => {
            format!("{}\n", serde_json::to_string_pretty(&dsa_json(&report, secs, &rates)).expect("JSON"))
        }
        DsaFormat::Text => dsa_text(&machine, &report, secs, &rates),
    };
    if let Some(view) = args.interrupts {
        out += &format!("\n{}", view.write(&report));
    }
    out::print(&out)?;
    watch.check(report.sim_time_ns)?;
    interrupt::check(&signals, report.sim_time_ns)
}

/// The run's totals per second.
struct DsaRates {
    /// One completion interrupt per descriptor (what the DSA benchmarks count).
    completed: f64,
    /// Device IRQ handler invocations: fewer when MSIs merge in the IRR or PIR.
    handled: f64,
    msis: f64,
    notifications: f64,
    bytes: f64,
}

impl DsaRates {
    /// The totals of `report` over `secs` seconds.
    fn of(report: &RunReport, secs: f64) -> DsaRates {
        let sum = |f: fn(&MsiCpuStats) -> u64| report.msi_per_cpu.iter().map(f).sum::<u64>();
        let per_sec = |n: u64| n as f64 / secs;
        DsaRates {
            completed: per_sec(report.dsa.iter().map(|c| c.completed).sum()),
            handled: per_sec(sum(|c| c.device_irqs)),
            msis: per_sec(sum(|c| c.device_msis)),
            notifications: per_sec(sum(|c| c.notifications)),
            bytes: per_sec(report.dsa.iter().map(|c| c.bytes).sum()),
        }
    }
}

/// The MSI mode of the run, as the reports name it.
fn msi_mode(report: &RunReport) -> &'static str {
    if report.posted_msi {
        "posted"
    } else {
        "remappable"
    }
}

/// `--format json`: the rates, the clients and where the time of the interrupted CPUs went.
fn dsa_json(report: &RunReport, secs: f64, r: &DsaRates) -> serde_json::Value {
    let clients: Vec<_> = report
        .dsa
        .iter()
        .map(|c| json!({"device": c.device, "wq": c.wq, "completed": c.completed, "bytes": c.bytes}))
        .collect();
    json!({
        "mode": msi_mode(report),
        "runtime_ns": (secs * 1e9) as u64,
        "completion_interrupts_per_sec": r.completed,
        "handler_invocations_per_sec": r.handled,
        "msis_per_sec": r.msis,
        "notifications_per_sec": r.notifications,
        "bandwidth_bytes_per_sec": r.bytes,
        "clients": clients,
        "irq_cpus": irq_cpus_json(report),
    })
}

/// Where the time of the CPUs that took device interrupts went.
fn irq_cpus_json(report: &RunReport) -> Vec<serde_json::Value> {
    let pct = |ns: u64| 100.0 * ns as f64 / report.sim_time_ns.max(1) as f64;
    report
        .msi_per_cpu
        .iter()
        .enumerate()
        .filter(|(_, c)| c.device_msis > 0)
        .map(|(i, _)| {
            let t = &report.cpu_time[i];
            json!({"cpu": i, "user_pct": pct(t.user_ns), "hardirq_pct": pct(t.hardirq_ns), "softirq_pct": pct(t.softirq_ns),
                   "sys_pct": pct(t.sys_ns), "idle_pct": pct(t.idle_ns + t.iowait_ns)})
        })
        .collect()
}

/// `--format text`: the run, one line per client, then the rates.
fn dsa_text(machine: &Machine, report: &RunReport, secs: f64, r: &DsaRates) -> String {
    let mut s = format!("dsa-memfill on {} ({} MSI), {:.1} ms\n", machine.name, msi_mode(report), secs * 1e3);
    for c in &report.dsa {
        s += &format!(
            "  {} wq{}: {} descriptors, {:.2} GB/s\n",
            c.device,
            c.wq,
            c.completed,
            c.bytes as f64 / secs / 1e9
        );
    }
    s += &format!("completion interrupts (one per descriptor): {:.3} M/s\n", r.completed / 1e6);
    s += &format!("device IRQ handler invocations: {:.3} M/s\n", r.handled / 1e6);
    s += &format!("device MSIs: {:.3} M/s; notifications: {:.3} M/s\n", r.msis / 1e6, r.notifications / 1e6);
    s += &format!("bandwidth: {:.2} GB/s\n", r.bytes / 1e9);
    s
}
