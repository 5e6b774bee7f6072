//! `blksim dsa-memfill`: drive the machine's DSA devices with the memfill
//! client and report completion interrupts, MSIs, notifications and bandwidth.

use blksim::machine::Machine;
use blksim::stats::{MsiCpuStats, RunReport};
use blksim_lab::frontend::{dsa_memfill, DSA_MEMFILL_USAGE};
use serde_json::json;

use crate::args::MachineArgs;
use crate::commands::DEFAULT_DSA_MACHINE;
use crate::failure::Failure;
use crate::options::{one_of, split_front_end, CommandOptions, Seen, Value};

/// `blksim dsa-memfill --help`.
pub fn dsa_memfill_help() -> String {
    format!("usage: blksim {DSA_MEMFILL_USAGE} [--machine NAME|FILE] [--cmdline \"...\"] [--set PATH=VALUE]... [--at TIME:PATH=VALUE]... [--seed N] [--format text|json] [--interrupts]")
}

/// What `blksim dsa-memfill` was asked to do: the machine options, the report's form, and the client's arguments.
#[derive(Debug)]
struct DsaArgs {
    knobs: MachineArgs,
    /// `text` or `json`.
    format: String,
    interrupts: bool,
    /// The memfill client's command line, in order.
    rest: Vec<String>,
}

impl CommandOptions for DsaArgs {
    fn option(&mut self, name: &str, value: &mut Value) -> Result<Seen, String> {
        if self.knobs.option(name, value)? {
            return Ok(Seen::Taken);
        }
        match name {
            "--format" => self.format = one_of("--format", value.take_any()?, &["text", "json"], "text or json")?,
            "--interrupts" => self.interrupts = true,
            _ => return Ok(Seen::Unknown),
        }
        Ok(Seen::Taken)
    }

    fn operand(&mut self, arg: &str) {
        self.rest.push(arg.to_string());
    }
}

/// `blksim dsa-memfill`'s options: the CLI's anywhere, every other argument (with its value) the client's.
fn parse_dsa_memfill(argv: &[String]) -> Result<DsaArgs, String> {
    let mut a =
        DsaArgs { knobs: MachineArgs::default(), format: "text".to_string(), interrupts: false, rest: Vec::new() };
    let usage = format!(
        "usage: blksim {DSA_MEMFILL_USAGE} [--machine M] [--cmdline ..] [--set ..] [--seed N] [--format text|json] [--interrupts]"
    );
    split_front_end(argv, &usage, true, &mut a)?;
    Ok(a)
}

/// `blksim dsa-memfill`: load the machine, build the settings and the clients, simulate, print the rates.
pub fn dsa_memfill_command(argv: &[String]) -> Result<(), Failure> {
    let args = parse_dsa_memfill(argv)?;
    let (machine, settings) = args.knobs.machine_and_settings(DEFAULT_DSA_MACHINE)?;
    let workload = dsa_memfill(&args.rest, &machine)?;
    let options = blksim::RunOptions { timed: args.knobs.at, ..Default::default() };
    let (report, _) = blksim::run_workload(&machine, &settings, &workload, args.knobs.seed, &options)?;
    let secs = workload.dsa.iter().map(|c| c.runtime_ns).max().unwrap_or(0) as f64 / 1e9;
    let rates = DsaRates::of(&report, secs);
    if args.format == "json" {
        println!("{}", serde_json::to_string_pretty(&dsa_json(&report, secs, &rates)).unwrap());
    } else {
        print_dsa_text(&machine, &report, secs, &rates);
    }
    if args.interrupts {
        print!("\n{}", blksim_fio::output::write_interrupts(&report));
    }
    Ok(())
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
fn print_dsa_text(machine: &Machine, report: &RunReport, secs: f64, r: &DsaRates) {
    println!("dsa-memfill on {} ({} MSI), {:.1} ms", machine.name, msi_mode(report), secs * 1e3);
    for c in &report.dsa {
        println!("  {} wq{}: {} descriptors, {:.2} GB/s", c.device, c.wq, c.completed, c.bytes as f64 / secs / 1e9);
    }
    println!("completion interrupts (one per descriptor): {:.3} M/s", r.completed / 1e6);
    println!("device IRQ handler invocations: {:.3} M/s", r.handled / 1e6);
    println!("device MSIs: {:.3} M/s; notifications: {:.3} M/s", r.msis / 1e6, r.notifications / 1e6);
    println!("bandwidth: {:.2} GB/s", r.bytes / 1e9);
}
