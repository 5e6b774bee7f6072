//! Behaviour tests of whole runs: each checks a mechanism and, through
//! `run_checked`, every invariant.

mod common;

use blksim::settings::Settings;
use blksim::workload::{IoEngine, RwKind};
use common::*;

#[test]
fn smoke_libaio_randread() {
    let m = small_machine(4);
    let j = job("r", IoEngine::Libaio, RwKind::RandRead, 4096, 32, "nvme0n1", 20);
    let (r, inv) = run_checked(&m, &Settings::default(), &[j], 1);
    let iops = r.jobs[0].dirs[0].total_ios as f64 / (r.jobs[0].runtime_ns as f64 / 1e9);
    eprintln!("iops={iops:.0} events={} inv={inv:?}", r.events);
    assert!(iops > 10_000.0);
}
