//! Shared helpers for the output tests: synthetic run reports, hand-built job
//! files, reports rebuilt from real fio json+, and golden files with an update switch.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use blksim::stats::{
    CpuTime, DirStats, DiskStats, InterruptRow, JobStats, LatencyStat, MsiCpuStats, PathStats, RunReport,
};
use blksim::workload::{IoEngine, JobConfig, RwKind};
use blksim_fio::job::{JobFile, ParsedJob};

pub const MS: u64 = 1_000_000;
pub const SEC: u64 = 1_000_000_000;

/// A small deterministic generator (64-bit LCG), so synthetic latencies never change.
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Lcg {
        Lcg(seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407))
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    /// Uniform in lo..hi.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo)
    }
}

pub fn config(name: &str, engine: IoEngine, rw: RwKind, iodepth: u32) -> JobConfig {
    let mut config = JobConfig::new(name);
    config.ioengine = engine;
    config.rw = rw;
    config.iodepth = iodepth;
    config.iodepth_low = iodepth;
    config.filenames = vec!["/dev/nvme0n1".into()];
    config
}

/// A direction with `ios` I/Os of `bs` bytes; `slat_ns`/`clat_ns` give each I/O's
/// latencies (slat `None` for sync engines) and lat is their sum.
pub fn dir(
    ios: u64,
    bs: u64,
    mut slat_ns: impl FnMut(u64) -> Option<u64>,
    mut clat_ns: impl FnMut(u64) -> u64,
) -> DirStats {
    let mut d = DirStats { total_ios: ios, io_bytes: ios * bs, ..Default::default() };
    for i in 0..ios {
        let slat = slat_ns(i);
        let clat = clat_ns(i);
        if let Some(s) = slat {
            d.slat.record(s);
        }
        d.clat.record(clat);
        d.lat.record(clat + slat.unwrap_or(0));
    }
    d
}

/// Interval samples: IOPS as given, bandwidth (bytes/s) = IOPS x `bs`.
pub fn with_samples(mut d: DirStats, bs: u64, iops: &[u64]) -> DirStats {
    d.iops_samples = iops.to_vec();
    d.bw_samples = iops.iter().map(|n| n * bs).collect();
    d
}

pub fn job(config: JobConfig, dirs: [DirStats; 3], runtime_ns: u64) -> JobStats {
    let ios: u64 = dirs.iter().map(|d| d.total_ios).sum();
    let mut level = [0; 7];
    level[depth_index(config.iodepth)] = ios;
    let mut batches = [0; 7];
    batches[1] = ios;
    JobStats {
        config,
        dirs,
        sync: Default::default(),
        runtime_ns,
        start_ns: 0,
        epoch_ns: 0,
        end_ns: runtime_ns,
        usr_ns: runtime_ns / 50,
        sys_ns: runtime_ns * 2 / 5,
        ctx: ios / 3,
        iodepth_level: level,
        iodepth_unmarked: 0,
        iodepth_submit: batches,
        iodepth_complete: batches,
        cpu: 0,
        breakdown_ns: [0; 5],
        error: None,
        stuck: None,
        hybrid_iopoll: None,
        verify_state: None,
        verify_stopped: None,
        latency_depth: None,
    }
}

fn depth_index(depth: u32) -> usize {
    match depth {
        0..=1 => 0,
        2..=3 => 1,
        4..=7 => 2,
        8..=15 => 3,
        16..=31 => 4,
        32..=63 => 5,
        _ => 6,
    }
}

pub fn report(jobs: Vec<JobStats>) -> RunReport {
    let sim_time_ns = jobs.iter().map(|j| j.end_ns).max().unwrap_or(0);
    RunReport {
        jobs,
        cpu_time: vec![
            CpuTime {
                user_ns: sim_time_ns / 50,
                sys_ns: sim_time_ns * 2 / 5,
                hardirq_ns: sim_time_ns / 20,
                softirq_ns: sim_time_ns / 10,
                idle_ns: 0,
                iowait_ns: 0,
            },
            CpuTime { idle_ns: sim_time_ns, ..Default::default() },
        ],
        cpu_stage_ns: vec![],
        interrupts: vec![
            InterruptRow {
                label: "145".into(),
                per_cpu: vec![],
                chip: "IR-PCI-MSIX-0000:01:00.0".into(),
                name: "nvme0q0".into(),
            },
            InterruptRow {
                label: "146".into(),
                per_cpu: vec![(0, 20_000)],
                chip: "IR-PCI-MSIX-0000:01:00.0".into(),
                name: "nvme0q1".into(),
            },
            InterruptRow {
                label: "PMN".into(),
                per_cpu: vec![],
                chip: String::new(),
                name: "Posted MSI notification event".into(),
            },
        ],
        ipis_per_cpu: vec![0, 12],
        posted_msi: false,
        msi_per_cpu: vec![
            MsiCpuStats { device_msis: 20_000, notifications: 0, pmn: 0, device_irqs: 20_000 },
            MsiCpuStats::default(),
        ],
        interrupt_path: vec![PathStats { name: "iio0".into(), messages: 20_000, busy_pct: 40.0 }],
        disks: vec![DiskStats {
            name: "nvme0n1".into(),
            ios: [20_000, 0],
            sectors: [160_000, 0],
            merges: [0, 0],
            discards: 0,
            discard_merges: 0,
            requests: 20_000,
            ticks_ms: [1_400, 0],
            in_queue_ms: 1_400,
            util_pct: 70.0,
            iops: 10_000.0,
            msis: 20_000,
            irq_handler_runs: 20_000,
            fio_shows: true,
        }],
        sim_time_ns,
        events: 123_456,
        seed: 42,
        sample_interval_ns: 500 * MS,
        trace: None,
        dsa: vec![],
        locks: vec![],
        schedulers: vec![],
        invariants: Default::default(),
        hotplug: Default::default(),
        gsim: None,
        patches_in_effect: Vec::new(),
    }
}

/// A job file as the parser would give it: one section per job (clones share
/// one), each with its options as written.
pub fn job_file(report: &RunReport, global_options: &[(&str, &str)]) -> JobFile {
    let mut jobs = Vec::new();
    let mut line = 0;
    for (i, job) in report.jobs.iter().enumerate() {
        let clone = i > 0 && report.jobs[i - 1].config.name == job.config.name;
        if !clone {
            line += 5;
        }
        let c = &job.config;
        let options = vec![
            ("rw".to_string(), c.rw.fio_name().to_string()),
            ("ioengine".to_string(), c.ioengine.fio_name().to_string()),
            ("iodepth".to_string(), c.iodepth.to_string()),
            ("time_based".to_string(), String::new()),
        ];
        jobs.push(ParsedJob {
            config: c.clone(),
            options,
            file: PathBuf::from("test.fio"),
            line,
            option_lines: Default::default(),
            logs: Default::default(),
        });
    }
    let global_options = global_options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    JobFile { global_options, jobs, warnings: Vec::new() }
}

/// Compares `actual` with `tests/output_golden/<name>`. With `UPDATE_EXPECT=1`
/// the file is rewritten instead (review the diff before committing it).
pub fn check_golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/output_golden").join(name);
    if std::env::var("UPDATE_EXPECT").as_deref() == Ok("1") {
        std::fs::write(&path, actual).expect("write golden file");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with UPDATE_EXPECT=1 to create it)", path.display()));
    if expected != actual {
        let first_diff = expected.lines().zip(actual.lines()).position(|(e, a)| e != a);
        panic!(
            "{} differs from the output (first differing line: {:?}); rerun with UPDATE_EXPECT=1 and review the diff\n--- actual ---\n{actual}",
            path.display(),
            first_diff.map(|i| i + 1)
        );
    }
}

/// Path of a file under `tests/output_golden`.
pub fn golden_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/output_golden").join(name)
}

/// A latency statistic whose histogram equals fio's `bins` map (each bin's value recorded `count` times).
pub fn stat_from_bins(lat: &serde_json::Value) -> LatencyStat {
    let mut stat = LatencyStat::default();
    if let Some(bins) = lat.get("bins").and_then(|b| b.as_object()) {
        for (ns, count) in bins {
            let ns: u64 = ns.parse().expect("bin key is a number");
            for _ in 0..count.as_u64().expect("bin count") {
                stat.record(ns);
            }
        }
    }
    stat
}
