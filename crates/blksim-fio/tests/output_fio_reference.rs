//! Checks the writers against real fio: reports are rebuilt from fio-3.33's own
//! json+ (its histogram bins, sample counts and totals), written by blksim, and
//! compared with what that fio printed for the same run.

mod output_support;

use std::path::PathBuf;

use blksim::stats::report::PrioStat;
use blksim::stats::{DirStats, JobStats, RunReport};
use blksim::workload::{IoEngine, JobConfig, RwKind};
use blksim_fio::job::{JobFile, ParsedJob};
use blksim_fio::output::{write_json, write_normal};
use output_support::{golden_path, stat_from_bins, MS};
use serde_json::Value;

struct Fixture {
    name: &'static str,
    config: JobConfig,
    iodepth_level: [u64; 7],
    iodepth_submit: [u64; 7],
    iodepth_complete: [u64; 7],
}

fn psync_fixture() -> Fixture {
    let mut config = JobConfig::new("psync_ref");
    config.rw = RwKind::RandRead;
    config.ioengine = IoEngine::Psync;
    config.lat_percentiles = true;
    Fixture {
        name: "psync",
        config,
        iodepth_level: [14491, 0, 0, 0, 0, 0, 0],
        iodepth_submit: [0, 14491, 0, 0, 0, 0, 0],
        iodepth_complete: [0, 14491, 0, 0, 0, 0, 0],
    }
}

fn aio_fixture() -> Fixture {
    let mut config = JobConfig::new("aio_ref");
    config.rw = RwKind::RandRw;
    config.ioengine = IoEngine::Libaio;
    config.bs = [4096, 8192, 8192];
    config.iodepth = 8;
    config.slat_percentiles = true;
    config.lat_percentiles = true;
    config.percentile_list = vec![1.0, 50.0, 99.0, 99.9, 99.999];
    // Counts chosen to give fio's printed shares (1=0.1%, ..., 8=99.9%; complete 4=100.0%, 8=0.1%).
    Fixture {
        name: "aio",
        config,
        iodepth_level: [9, 9, 10, 26027, 0, 0, 0],
        iodepth_submit: [0, 26055, 0, 0, 0, 0, 0],
        iodepth_complete: [0, 6507, 1, 0, 0, 0, 0],
    }
}

fn fio_json(fixture: &Fixture) -> Value {
    let text = std::fs::read_to_string(golden_path(&format!("fio-3.33/{}.json", fixture.name))).expect("fixture");
    serde_json::from_str(&text).expect("fio's JSON parses")
}

fn samples(dir: &Value, min: &str, max: &str, count: &str) -> Vec<u64> {
    let (min, max) = (dir[min].as_u64().unwrap(), dir[max].as_u64().unwrap());
    match dir[count].as_u64().unwrap() {
        0 => vec![],
        1 => vec![min],
        2 => vec![min, max],
        n => panic!("{n} samples cannot be rebuilt from min and max"),
    }
}

/// The run as blksim's model would have reported it, rebuilt from fio's json+.
fn rebuild(fixture: &Fixture) -> (RunReport, JobFile) {
    let fio = fio_json(fixture);
    let job = &fio["jobs"][0];
    let dirs = ["read", "write", "trim"].map(|name| {
        let d = &job[name];
        DirStats {
            total_ios: d["total_ios"].as_u64().unwrap(),
            failed_ios: 0,
            empty_ios: 0,
            abandoned_ios: 0,
            io_bytes: d["io_bytes"].as_u64().unwrap(),
            slat: stat_from_bins(&d["slat_ns"]),
            clat: stat_from_bins(&d["clat_ns"]),
            lat: stat_from_bins(&d["lat_ns"]),
            bw_samples: samples(d, "bw_min", "bw_max", "bw_samples").iter().map(|kib| kib * 1024).collect(),
            iops_samples: samples(d, "iops_min", "iops_max", "iops_samples"),
            ios: Vec::new(),
            prios: d.get("prios").and_then(Value::as_array).map_or_else(Vec::new, |p| {
                p.iter()
                    .map(|e| {
                        let ioprio = (e["prioclass"].as_u64().unwrap() << 13 | e["prio"].as_u64().unwrap()) as u16;
                        PrioStat { ioprio, lat: stat_from_bins(&e["clat_ns"]) }
                    })
                    .collect()
            }),
        }
    });
    let job_runtime_ns = job["job_runtime"].as_u64().unwrap() * MS;
    let share = |key: &str| (job[key].as_f64().unwrap() / 100.0 * job_runtime_ns as f64) as u64;
    let stats = JobStats {
        config: fixture.config.clone(),
        runtime_ns: job["read"]["runtime"].as_u64().unwrap() * MS,
        start_ns: 0,
        epoch_ns: 0,
        end_ns: job_runtime_ns,
        usr_ns: share("usr_cpu"),
        sys_ns: share("sys_cpu"),
        ctx: job["ctx"].as_u64().unwrap(),
        iodepth_level: fixture.iodepth_level,
        iodepth_unmarked: 0,
        iodepth_submit: fixture.iodepth_submit,
        iodepth_complete: fixture.iodepth_complete,
        cpu: 0,
        breakdown_ns: [0; 5],
        error: None,
        stuck: None,
        hybrid_iopoll: None,
        verify_state: None,
        verify_stopped: None,
        latency_depth: None,
        dirs,
        sync: Default::default(),
    };
    let report = RunReport {
        jobs: vec![stats],
        cpu_time: vec![],
        cpu_stage_ns: vec![],
        interrupts: vec![],
        ipis_per_cpu: vec![],
        posted_msi: false,
        msi_per_cpu: vec![],
        interrupt_path: vec![],
        disks: vec![],
        sim_time_ns: 2 * 1_000_000_000,
        events: 0,
        seed: 1,
        sample_interval_ns: 500 * MS,
        trace: None,
        dsa: vec![],
        locks: vec![],
        schedulers: vec![],
        invariants: Default::default(),
        hotplug: Default::default(),
        gsim: None,
        patches_in_effect: Vec::new(),
    };
    let options = job["job options"].as_object().unwrap();
    let options = options.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string())).collect();
    let parsed = ParsedJob {
        config: fixture.config.clone(),
        options,
        file: PathBuf::from("cmdline"),
        line: 1,
        option_lines: Default::default(),
        logs: Default::default(),
    };
    (report, JobFile { global_options: vec![], jobs: vec![parsed], warnings: Vec::new() })
}

/// fio's lines minus those fio-3.42 prints differently or blksim cannot rebuild
/// from json+: the version line, file layout, the job header's pid and date,
/// min/max/avg latency lines (json+ keeps bucket midpoints, not samples), the
/// cpu line (minor faults), the latency-target line and disk stats (3.42's
/// formats), and 3.33's "; 0 zone resets" suffix.
fn comparable_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let lat_line = ["slat (", "clat (", "lat ("].iter().any(|p| trimmed.starts_with(p)) && line.contains("min=");
        let skipped = i == 1
            || line.contains("Laying out IO file")
            || lat_line
            || trimmed.starts_with("cpu          :")
            || trimmed.starts_with("latency   :")
            || line.starts_with("Disk stats")
            || line.starts_with("  vda:")
            || line.starts_with("  nvme");
        if skipped {
            continue;
        }
        let line = line.replace("; 0 zone resets", "");
        let line = match line.find("err= 0: pid=") {
            Some(at) => line[..at + "err= 0:".len()].to_string(),
            None => line,
        };
        lines.push(line);
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

/// The coarse latency buckets blksim derives from fio's fine histogram differ
/// from fio's own counters where a bound falls inside a fine bucket; the share
/// may be off by this much (percentage points).
const LAT_BUCKET_TOLERANCE: f64 = 0.05;

/// `("  lat (usec)   ", [("50", 0.37), ...])` of a coarse-bucket line.
fn lat_bucket_items(line: &str) -> Option<(String, Vec<(String, f64)>)> {
    let (head, items) = line.split_once(": ")?;
    if !head.starts_with("  lat (") {
        return None;
    }
    let items = items.split(", ").map(|item| {
        let (key, pct) = item.split_once('=').expect("key=pct%");
        (key.to_string(), pct.trim_end_matches('%').parse().expect("a percentage"))
    });
    Some((head.to_string(), items.collect()))
}

fn assert_close(ours: &(String, Vec<(String, f64)>), fio: &(String, Vec<(String, f64)>), what: &str) {
    assert_eq!(ours.0, fio.0, "{what}");
    let keys = |v: &[(String, f64)]| v.iter().map(|i| i.0.clone()).collect::<Vec<_>>();
    assert_eq!(keys(&ours.1), keys(&fio.1), "{what}: buckets shown");
    for ((key, a), (_, b)) in ours.1.iter().zip(&fio.1) {
        assert!((a - b).abs() <= LAT_BUCKET_TOLERANCE, "{what}: bucket {key}: {a} vs fio's {b}");
    }
}

fn check_normal_matches_fio(fixture: Fixture) {
    let (report, jobs) = rebuild(&fixture);
    let ours = write_normal(&report, &jobs);
    let fio = std::fs::read_to_string(golden_path(&format!("fio-3.33/{}.txt", fixture.name))).unwrap();
    let (ours, fio) = (comparable_lines(&ours), comparable_lines(&fio));
    for (k, (a, b)) in ours.iter().zip(&fio).enumerate() {
        match (lat_bucket_items(a), lat_bucket_items(b)) {
            (Some(a), Some(b)) => assert_close(&a, &b, &format!("line {k}")),
            _ => assert_eq!(a, b, "line {k} differs from fio's"),
        }
    }
    assert_eq!(ours.len(), fio.len(), "ours:\n{}\nfio:\n{}", ours.join("\n"), fio.join("\n"));
}

fn check_json_matches_fio(fixture: Fixture) {
    let (report, jobs) = rebuild(&fixture);
    let ours: Value = serde_json::from_str(&write_json(&report, &jobs, true, Value::Null)).expect("valid JSON");
    let fio = fio_json(&fixture);
    let (ours, fio) = (&ours["jobs"][0], &fio["jobs"][0]);

    // Keys in fio's order; 3.42 adds job_start, latency_target_ns and latency_window_us.
    let added = ["job_start", "latency_target_ns", "latency_window_us"];
    let our_keys: Vec<&String> = ours.as_object().unwrap().keys().filter(|k| !added.contains(&k.as_str())).collect();
    let fio_keys: Vec<&String> = fio.as_object().unwrap().keys().collect();
    assert_eq!(our_keys, fio_keys);
    assert_eq!(ours["job options"], fio["job options"]);

    for dir in ["read", "write", "trim"] {
        let (o, f) = (&ours[dir], &fio[dir]);
        let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(o), keys(f), "{dir} keys");
        for key in [
            "io_bytes",
            "io_kbytes",
            "bw_bytes",
            "bw",
            "iops",
            "runtime",
            "total_ios",
            "bw_min",
            "bw_max",
            "bw_agg",
            "bw_mean",
            "bw_samples",
            "iops_min",
            "iops_max",
            "iops_mean",
            "iops_samples",
        ] {
            assert_eq!(o[key], f[key], "{dir}.{key}");
        }
        for lat in ["slat_ns", "clat_ns", "lat_ns"] {
            assert_eq!(keys(&o[lat]), keys(&f[lat]), "{dir}.{lat} keys");
            assert_eq!(o[lat]["N"], f[lat]["N"], "{dir}.{lat}.N");
            assert_eq!(o[lat]["percentile"], f[lat]["percentile"], "{dir}.{lat}.percentile");
            assert_eq!(o[lat]["bins"], f[lat]["bins"], "{dir}.{lat}.bins");
        }
    }
    for key in ["job_runtime", "usr_cpu", "sys_cpu", "ctx", "latency_depth", "latency_percentile"] {
        assert_eq!(ours[key], fio[key], "{key}");
    }
    for key in ["latency_ns", "latency_us", "latency_ms"] {
        let items = |v: &Value| {
            let map = v[key].as_object().unwrap();
            (key.to_string(), map.iter().map(|(k, v)| (k.clone(), v.as_f64().unwrap())).collect::<Vec<_>>())
        };
        assert_close(&items(ours), &items(fio), key);
    }
}

/// A libaio job of priority 2/7 with `cmdprio_percentage=30` (fio 3.33, `prio.json`, `prio.txt`).
fn prio_fixture() -> Fixture {
    let mut config = JobConfig::new("prio_ref");
    config.rw = RwKind::RandRw;
    config.ioengine = IoEngine::Libaio;
    config.iodepth = 8;
    config.ioprio = blksim::workload::ioprio_value(2, 7, 0);
    Fixture { name: "prio", config, iodepth_level: [0; 7], iodepth_submit: [0; 7], iodepth_complete: [0; 7] }
}

/// The per-priority parts of the report against fio's: JSON `prios` (fio 3.42
/// adds `priohint`) and the normal report's `clat prio` percentile blocks
/// (3.42 prints class/level/hint where 3.33 prints class/level).
fn check_prios_match_fio(fixture: Fixture) {
    let (report, jobs) = rebuild(&fixture);
    let ours: Value = serde_json::from_str(&write_json(&report, &jobs, true, Value::Null)).expect("valid JSON");
    let fio = fio_json(&fixture);
    for dir in ["read", "write"] {
        let (o, f) = (&ours["jobs"][0][dir]["prios"], &fio["jobs"][0][dir]["prios"]);
        let (o, f) = (o.as_array().expect("our prios"), f.as_array().expect("fio's prios"));
        assert_eq!(o.len(), f.len(), "{dir}");
        for (a, b) in o.iter().zip(f) {
            let keys: Vec<&String> = a.as_object().unwrap().keys().filter(|k| *k != "priohint").collect();
            assert_eq!(keys, b.as_object().unwrap().keys().collect::<Vec<_>>(), "{dir} prio keys");
            assert_eq!(a["priohint"], 0);
            for k in ["prioclass", "prio"] {
                assert_eq!(a[k], b[k], "{dir}.{k}");
            }
            for k in ["N", "percentile", "bins"] {
                assert_eq!(a["clat_ns"][k], b["clat_ns"][k], "{dir} prio {}/{}: {k}", b["prioclass"], b["prio"]);
            }
        }
    }
    // The percentile blocks of each priority, in fio's order, as fio prints them.
    let blocks = |text: &str, three: bool| -> Vec<String> {
        let mut out = Vec::new();
        let mut inside = false;
        for line in text.lines() {
            if line.starts_with("    clat prio ") && line.ends_with("percentiles (nsec):")
                || line.starts_with("    clat prio ") && line.ends_with("percentiles (usec):")
            {
                inside = true;
                out.push(if three { line.replacen("/0 (", " (", 1) } else { line.to_string() });
            } else if inside && line.starts_with("     |") {
                out.push(line.to_string());
            } else {
                inside = false;
            }
        }
        out
    };
    let text = std::fs::read_to_string(golden_path(&format!("fio-3.33/{}.txt", fixture.name))).unwrap();
    let (ours, fio) = (blocks(&write_normal(&report, &jobs), true), blocks(&text, false));
    assert!(fio.len() > 20, "{fio:?}");
    assert_eq!(ours, fio);
}

mod fio_reference_output {
    use super::*;

    #[test]
    fn per_priority_latencies_match_fio() {
        check_prios_match_fio(prio_fixture());
    }

    #[test]
    fn psync_normal_output_matches_fio() {
        check_normal_matches_fio(psync_fixture());
    }

    #[test]
    fn libaio_normal_output_matches_fio() {
        check_normal_matches_fio(aio_fixture());
    }

    #[test]
    fn psync_json_plus_matches_fio() {
        check_json_matches_fio(psync_fixture());
    }

    #[test]
    fn libaio_json_plus_matches_fio() {
        check_json_matches_fio(aio_fixture());
    }
}
