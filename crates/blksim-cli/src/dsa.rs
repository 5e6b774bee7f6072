//! `blksim dsa-memfill`: drive the machine's DSA devices with the memfill
//! client and report completion interrupts, MSIs, notifications and bandwidth.

use blksim_lab::frontend::{dsa_memfill, DSA_MEMFILL_USAGE};
use serde_json::json;

use crate::commands::{knob_settings, load_machine, DEFAULT_DSA_MACHINE};

pub fn dsa_memfill_command(argv: &[String]) -> Result<(), String> {
    let mut machine_spec = DEFAULT_DSA_MACHINE.to_string();
    let (mut cmdline, mut sets, mut seed, mut format, mut interrupts) =
        (Vec::new(), Vec::new(), 1u64, "text".to_string(), false);
    let mut timed = Vec::new();
    let mut rest = Vec::new();
    let mut i = 0;
    while i < argv.len() {
        let take = |i: &mut usize| -> Result<String, String> {
            *i += 1;
            argv.get(*i).cloned().ok_or_else(|| format!("{} needs a value\nusage: blksim {DSA_MEMFILL_USAGE} [--machine M] [--cmdline ..] [--set ..] [--seed N] [--format text|json] [--interrupts]", argv[*i - 1]))
        };
        match argv[i].as_str() {
            "--machine" => machine_spec = take(&mut i)?,
            "--cmdline" => cmdline.push(take(&mut i)?),
            "--set" => sets.push(take(&mut i)?),
            "--at" => timed.push(blksim::settings::parse_timed_write(&take(&mut i)?)?),
            "--seed" => {
                let v = take(&mut i)?;
                seed = v.parse().map_err(|_| format!("--seed: expected a non-negative integer, got '{v}'"))?;
            }
            "--format" => {
                format = take(&mut i)?;
                if format != "text" && format != "json" {
                    return Err(format!("--format: expected text or json, got '{format}'"));
                }
            }
            "--interrupts" => interrupts = true,
            a => {
                rest.push(a.to_string());
                if a.starts_with("--") && !a.contains('=') {
                    if let Some(v) = argv.get(i + 1) {
                        rest.push(v.clone());
                        i += 1;
                    }
                }
            }
        }
        i += 1;
    }
    let machine = load_machine(&machine_spec)?;
    let settings = knob_settings(&machine, &cmdline, &sets)?;
    let workload = dsa_memfill(&rest, &machine)?;
    let options = blksim::RunOptions { timed, ..Default::default() };
    let (report, _) = blksim::run_workload(&machine, &settings, &workload, seed, &options).map_err(|e| e.message)?;
    let secs = workload.dsa.iter().map(|c| c.runtime_ns).max().unwrap_or(0) as f64 / 1e9;
    let sum = |f: fn(&blksim::stats::MsiCpuStats) -> u64| report.msi_per_cpu.iter().map(f).sum::<u64>();
    let (handled, msis, notes) = (sum(|c| c.device_irqs), sum(|c| c.device_msis), sum(|c| c.notifications));
    let bytes: u64 = report.dsa.iter().map(|c| c.bytes).sum();
    let completed: u64 = report.dsa.iter().map(|c| c.completed).sum();
    let per_sec = |n: u64| n as f64 / secs;
    if format == "json" {
        let clients: Vec<_> = report
            .dsa
            .iter()
            .map(|c| json!({"device": c.device, "wq": c.wq, "completed": c.completed, "bytes": c.bytes}))
            .collect();
        // Where the time of the CPUs that took device interrupts went.
        let irq_cpus: Vec<_> = report
            .msi_per_cpu
            .iter()
            .enumerate()
            .filter(|(_, c)| c.device_msis > 0)
            .map(|(i, _)| {
                let t = &report.cpu_time[i];
                let pct = |ns: u64| 100.0 * ns as f64 / report.sim_time_ns.max(1) as f64;
                json!({"cpu": i, "user_pct": pct(t.user_ns), "hardirq_pct": pct(t.hardirq_ns), "softirq_pct": pct(t.softirq_ns),
                       "sys_pct": pct(t.sys_ns), "idle_pct": pct(t.idle_ns + t.iowait_ns)})
            })
            .collect();
        let doc = json!({
            "mode": if report.posted_msi { "posted" } else { "remappable" },
            "runtime_ns": (secs * 1e9) as u64,
            // One completion interrupt per descriptor (what the DSA benchmarks count);
            // handler invocations are fewer when MSIs merge in the IRR or PIR.
            "completion_interrupts_per_sec": per_sec(completed),
            "handler_invocations_per_sec": per_sec(handled),
            "msis_per_sec": per_sec(msis),
            "notifications_per_sec": per_sec(notes),
            "bandwidth_bytes_per_sec": per_sec(bytes),
            "clients": clients,
            "irq_cpus": irq_cpus,
        });
        println!("{}", serde_json::to_string_pretty(&doc).unwrap());
    } else {
        println!(
            "dsa-memfill on {} ({} MSI), {:.1} ms",
            machine.name,
            if report.posted_msi { "posted" } else { "remappable" },
            secs * 1e3
        );
        for c in &report.dsa {
            println!("  {} wq{}: {} descriptors, {:.2} GB/s", c.device, c.wq, c.completed, c.bytes as f64 / secs / 1e9);
        }
        println!("completion interrupts (one per descriptor): {:.3} M/s", per_sec(completed) / 1e6);
        println!("device IRQ handler invocations: {:.3} M/s", per_sec(handled) / 1e6);
        println!("device MSIs: {:.3} M/s; notifications: {:.3} M/s", per_sec(msis) / 1e6, per_sec(notes) / 1e6);
        println!("bandwidth: {:.2} GB/s", per_sec(bytes) / 1e9);
    }
    if interrupts {
        print!("\n{}", blksim_fio::output::write_interrupts(&report));
    }
    Ok(())
}
