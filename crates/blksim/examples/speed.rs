//! Model speed without the job-file parser: the 8-drive, 64-CPU libaio
//! random-read scenario (4 or 8 drives, remappable or posted MSI).
//! `cargo run --release -p blksim --example speed [SIM_MS] [DRIVES] [posted]`.

use std::time::Instant;

use blksim::machine::builtin;
use blksim::settings::Settings;
use blksim::workload::{IoEngine, JobConfig, RwKind};

fn main() {
    let sim_ms: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100);
    let drives: u32 = std::env::args().nth(2).and_then(|a| a.parse().ok()).unwrap_or(8);
    let posted = std::env::args().nth(3).is_some_and(|a| a == "posted");
    let m = builtin("spr-gen5").unwrap();
    let mut settings = Settings::default();
    if posted {
        settings.apply_cmdline("intremap=posted_msi").unwrap();
    }
    let mut jobs = Vec::new();
    for d in 0..drives {
        for k in 0..8u32 {
            let mut j = JobConfig::new(&format!("disk{d}"));
            j.ioengine = IoEngine::Libaio;
            j.rw = RwKind::RandRead;
            j.iodepth = 64;
            j.iodepth_low = 64;
            j.direct = true;
            j.norandommap = true;
            j.time_based = true;
            j.runtime_ns = Some(sim_ms * 1_000_000);
            j.filenames = vec![format!("/dev/nvme{d}n1")];
            j.cpus_allowed = Some(vec![d * 8 + k]);
            jobs.push(j);
        }
    }
    let t = Instant::now();
    let (r, _) = blksim::run(&m, &settings, &jobs, 1).unwrap();
    let wall = t.elapsed().as_secs_f64();
    let ios: u64 = r.jobs.iter().map(|j| j.dirs[0].total_ios).sum();
    let msis: u64 = r.msi_per_cpu.iter().map(|c| c.device_msis).sum();
    let irqs: u64 = r.msi_per_cpu.iter().map(|c| c.device_irqs).sum();
    let pmn: u64 = r.msi_per_cpu.iter().map(|c| c.pmn).sum();
    let busy: f64 = r
        .cpu_time
        .iter()
        .take((drives * 8) as usize)
        .map(|t| 1.0 - t.idle_ns as f64 / r.sim_time_ns as f64)
        .sum::<f64>()
        / (drives * 8) as f64;
    println!(
        "{drives} drives, {}: {:.3} M IOPS per drive; MSIs {msis}, handler runs {irqs}, PMN {pmn}; job CPUs {:.0}% busy",
        if posted { "posted" } else { "remappable" },
        ios as f64 / (sim_ms as f64 / 1000.0) / 1e6 / drives as f64,
        busy * 100.0
    );
    for p in &r.interrupt_path {
        println!("  {}: {} messages, {:.1}% busy", p.name, p.messages, p.busy_pct);
    }
    println!(
        "simulated {} ms: {} I/Os ({:.2} M IOPS), {} events in {:.3} s wall: {:.2} M events/s, {:.2} M simulated I/Os per wall second",
        sim_ms,
        ios,
        ios as f64 / (sim_ms as f64 / 1000.0) / 1e6,
        r.events,
        wall,
        r.events as f64 / wall / 1e6,
        ios as f64 / wall / 1e6
    );
}
