//! Model speed without the job-file parser: the 8-drive, 64-CPU libaio
//! random-read scenario. `cargo run --release -p blksim --example speed [SIM_MS]`.

use std::time::Instant;

use blksim::machine::builtin;
use blksim::settings::Settings;
use blksim::workload::{IoEngine, JobConfig, RwKind};

fn main() {
    let sim_ms: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100);
    let m = builtin("spr-gen5").unwrap();
    let mut jobs = Vec::new();
    for d in 0..8u32 {
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
    let (r, _) = blksim::run(&m, &Settings::default(), &jobs, 1).unwrap();
    let wall = t.elapsed().as_secs_f64();
    let ios: u64 = r.jobs.iter().map(|j| j.dirs[0].total_ios).sum();
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
