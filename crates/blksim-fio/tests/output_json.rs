//! fio's JSON and json+ from synthetic reports: keys in fio's order and typed
//! as fio types them, percentile and bins maps, the `blksim` object, and a
//! cross-check with fio's own json+ consumer, `fio_jsonplus_clat2csv`.

mod output_support;

use blksim::stats::{DirStats, RunReport};
use blksim::workload::{IoEngine, RwKind};
use blksim_fio::output::write_json;
use output_support::*;
use serde_json::{json, Value};

fn sync_report() -> RunReport {
    let mut rng = Lcg::new(3);
    let read = with_samples(dir(20_000, 4096, |_| None, |_| rng.range(60_000, 90_000)), 4096, &[10_000, 10_000]);
    let config = config("sync", IoEngine::Psync, RwKind::RandRead, 1);
    report(vec![job(config, [read, DirStats::default(), DirStats::default()], 2 * SEC)])
}

/// Two libaio randrw jobs with every latency percentile (and so every bins map) on.
fn libaio_report() -> RunReport {
    let mut jobs = Vec::new();
    for k in 0..2u64 {
        let mut c = config(&format!("aio{k}"), IoEngine::Libaio, RwKind::RandRw, 16);
        c.slat_percentiles = true;
        c.lat_percentiles = true;
        let mut rng = Lcg::new(10 + k);
        let mut lat = |n: u64| {
            let slats: Vec<u64> = (0..n).map(|_| rng.range(500, 3_000)).collect();
            let clats: Vec<u64> = (0..n).map(|_| rng.range(20_000, 2_000_000)).collect();
            dir(n, 4096, |i| Some(slats[i as usize]), |i| clats[i as usize])
        };
        let (read, write) = (lat(6_000 + k), lat(4_000));
        jobs.push(job(c, [read, write, DirStats::default()], SEC));
    }
    report(jobs)
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().expect("an object").keys().map(|k| k.as_str()).collect()
}

fn extra() -> Value {
    json!({"machine": {"name": "test-box", "cpus": 2}, "settings": {"seed": 42}, "wall_time_s": 0.25})
}

mod json_output {
    use super::*;

    #[test]
    fn top_level_job_and_direction_keys_follow_fio() {
        let report = sync_report();
        let doc = parse(&write_json(&report, &job_file(&report, &[("direct", "1"), ("thread", "")]), false, extra()));
        assert_eq!(
            keys(&doc),
            ["fio version", "timestamp", "timestamp_ms", "time", "global options", "jobs", "disk_util", "blksim"]
        );
        let job = &doc["jobs"][0];
        assert_eq!(
            keys(job),
            [
                "jobname",
                "groupid",
                "job_start",
                "error",
                "eta",
                "elapsed",
                "job options",
                "read",
                "write",
                "trim",
                "sync",
                "job_runtime",
                "usr_cpu",
                "sys_cpu",
                "ctx",
                "majf",
                "minf",
                "iodepth_level",
                "iodepth_submit",
                "iodepth_complete",
                "latency_ns",
                "latency_us",
                "latency_ms",
                "latency_depth",
                "latency_target",
                "latency_target_ns",
                "latency_percentile",
                "latency_window",
                "latency_window_us",
            ]
        );
        for dir in ["read", "write", "trim"] {
            assert_eq!(
                keys(&job[dir]),
                [
                    "io_bytes",
                    "io_kbytes",
                    "bw_bytes",
                    "bw",
                    "iops",
                    "runtime",
                    "total_ios",
                    "short_ios",
                    "drop_ios",
                    "slat_ns",
                    "clat_ns",
                    "lat_ns",
                    "bw_min",
                    "bw_max",
                    "bw_agg",
                    "bw_mean",
                    "bw_dev",
                    "bw_samples",
                    "iops_min",
                    "iops_max",
                    "iops_mean",
                    "iops_stddev",
                    "iops_samples",
                ]
            );
        }
        assert_eq!(keys(&job["read"]["clat_ns"]), ["min", "max", "mean", "stddev", "N", "percentile"]);
        assert_eq!(keys(&job["read"]["lat_ns"]), ["min", "max", "mean", "stddev", "N"]);
        assert_eq!(keys(&job["sync"]), ["total_ios", "lat_ns"]);
        assert_eq!(keys(&job["iodepth_level"]), ["1", "2", "4", "8", "16", "32", ">=64"]);
        assert_eq!(keys(&job["iodepth_submit"]), ["0", "4", "8", "16", "32", "64", ">=64"]);
        assert_eq!(
            keys(&job["latency_ms"]),
            ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000"]
        );
        assert_eq!(
            keys(&doc["disk_util"][0]),
            [
                "name",
                "read_ios",
                "write_ios",
                "read_sectors",
                "write_sectors",
                "read_merges",
                "write_merges",
                "read_ticks",
                "write_ticks",
                "in_queue",
                "util"
            ]
        );
    }

    #[test]
    fn values_are_typed_and_formatted_as_fio_prints_them() {
        let report = sync_report();
        let text = write_json(&report, &job_file(&report, &[]), false, Value::Null);
        let doc = parse(&text);
        let read = &doc["jobs"][0]["read"];
        assert!(read["iops"].is_f64() && read["iops"].as_f64() == Some(10_000.0));
        assert!(read["total_ios"].is_u64() && read["runtime"].as_u64() == Some(2000));
        assert_eq!(read["bw_bytes"], 40_960_000);
        assert_eq!(read["bw"], 40_000);
        assert!(read["clat_ns"]["mean"].is_f64() && read["clat_ns"]["N"].is_u64());
        assert!(read["clat_ns"]["percentile"]["99.000000"].is_u64());
        assert!(read["clat_ns"]["percentile"]["99.990000"].is_u64());
        assert!(read["bw_agg"].is_f64() && read["bw_min"].is_u64());
        assert_eq!(read["slat_ns"]["N"], 0, "a sync engine has no slat");
        // fio prints floats with %f and integers as integers, "key" : value, two-space indents.
        assert!(text.contains("\n        \"iops\" : 10000.000000,\n"), "{text}");
        assert!(text.contains("\n        \"total_ios\" : 20000,\n"));
        assert!(
            text.starts_with("{\n  \"fio version\" : \"blksim-0.1.0 (fio-3.42 compatible)\",\n  \"timestamp\" : 2,\n")
        );
        assert_eq!(doc["timestamp_ms"], 2000);
        assert_eq!(doc["time"], "Thu Jan  1 00:00:02 1970");
        assert!(text.ends_with("}\n"));
        // Percentages of the coarse latency buckets and depths are floats too.
        assert!(doc["jobs"][0]["latency_us"]["100"].as_f64().unwrap() > 99.0);
        assert_eq!(doc["jobs"][0]["iodepth_level"]["1"], 100.0);
        assert!(!text.contains("\"bins\""), "plain JSON has no bins");
    }

    #[test]
    fn options_drop_bare_flags_and_empty_lists() {
        let report = sync_report();
        let doc =
            parse(&write_json(&report, &job_file(&report, &[("direct", "1"), ("thread", "")]), false, Value::Null));
        assert_eq!(doc["global options"], json!({"direct": "1"}));
        assert_eq!(doc["jobs"][0]["job options"], json!({"rw": "randread", "ioengine": "psync", "iodepth": "1"}));
        let no_globals = parse(&write_json(&report, &job_file(&report, &[]), false, Value::Null));
        assert!(no_globals.get("global options").is_none());
    }

    #[test]
    fn json_plus_bins_sum_to_total_ios() {
        let report = libaio_report();
        let doc = parse(&write_json(&report, &job_file(&report, &[]), true, Value::Null));
        let mut maps = 0;
        for job in doc["jobs"].as_array().unwrap() {
            for dir in ["read", "write"] {
                for lat in ["slat_ns", "clat_ns", "lat_ns"] {
                    let bins = job[dir][lat]["bins"].as_object().unwrap_or_else(|| panic!("{dir}.{lat} has bins"));
                    let sum: u64 = bins.values().map(|c| c.as_u64().unwrap()).sum();
                    assert_eq!(sum, job[dir]["total_ios"].as_u64().unwrap(), "{dir}.{lat}");
                    assert!(bins.values().all(|c| c.as_u64().unwrap() > 0), "only non-empty bins");
                    assert!(bins.keys().all(|k| k.parse::<u64>().is_ok()), "keys are ns values");
                    maps += 1;
                }
            }
            assert!(job["trim"]["clat_ns"].get("bins").is_none(), "no samples, no percentiles, no bins");
        }
        assert_eq!(maps, 12);
    }

    #[test]
    fn group_reporting_gives_one_job_entry() {
        let mut report = libaio_report();
        for job in &mut report.jobs {
            job.config.group_reporting = true;
        }
        let doc = parse(&write_json(&report, &job_file(&report, &[]), false, Value::Null));
        let jobs = doc["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 1);
        assert_eq!(jobs[0]["jobname"], "aio0");
        assert_eq!(jobs[0]["read"]["total_ios"], 12_001);
        assert_eq!(jobs[0]["read"]["clat_ns"]["N"], 12_001);
    }

    #[test]
    fn blksim_object_holds_what_fio_cannot_see_then_extra() {
        let report = sync_report();
        let doc = parse(&write_json(&report, &job_file(&report, &[]), false, extra()));
        let blksim = &doc["blksim"];
        assert_eq!(
            keys(blksim),
            [
                "cpu_time",
                "interrupts",
                "ipis_per_cpu",
                "disks",
                "exactly_once",
                "hotplug",
                "msi",
                "io_breakdown",
                "locks",
                "interrupt_path",
                "sim_time_ns",
                "events",
                "seed",
                "terse",
                "machine",
                "settings",
                "wall_time_s"
            ]
        );
        let cpu0 = &blksim["cpu_time"][0];
        assert_eq!(cpu0["cpu"], 0);
        let pct: f64 = ["user_pct", "sys_pct", "hardirq_pct", "softirq_pct", "idle_pct", "iowait_pct"]
            .iter()
            .map(|k| cpu0[k].as_f64().unwrap())
            .sum();
        assert!((pct - 100.0).abs() < 1e-6, "{pct}");
        // CPU 1, idle for the whole run, is left out.
        assert_eq!(blksim["cpu_time"].as_array().unwrap().len(), 1);
        // Only the rows that counted something, each with the CPUs that counted it.
        assert_eq!(
            blksim["interrupts"],
            json!([{"label": "146", "per_cpu": {"0": 20000}, "total": 20000, "chip": "IR-PCI-MSIX-0000:01:00.0", "name": "nvme0q1"}])
        );
        assert_eq!(blksim["ipis_per_cpu"], json!([0, 12]));
        assert_eq!(
            blksim["disks"][0],
            json!({"name": "nvme0n1", "iops": 10000.0, "util_pct": 70.0, "ios": 20000, "discards": 0, "discard_merges": 0, "requests": 20000, "device_msis": 20000,
                   "irq_handler_runs": 20000, "ios_per_msi": 1.0, "ios_per_handler_run": 1.0})
        );
        assert_eq!(
            blksim["exactly_once"],
            json!({"ios_issued": 0, "ios_reaped": 0, "requests_live": 0, "msis_sent": 0, "msis_handled": 0,
                   "msis_merged": 0, "msis_pending": 0})
        );
        assert_eq!(blksim["msi"]["mode"], "remappable");
        assert_eq!(blksim["msi"]["total"]["device_msis"], 20000);
        assert_eq!(blksim["msi"]["total"]["device_msis_per_sec"], 10000.0);
        assert_eq!(blksim["msi"]["per_cpu"].as_array().unwrap().len(), 1, "idle CPUs are left out");
        assert_eq!(blksim["interrupt_path"][0]["busy_pct"], 40.0);
        assert_eq!(blksim["sim_time_ns"], 2 * SEC);
        assert_eq!(blksim["events"], 123_456);
        assert_eq!(blksim["seed"], 42);
        assert_eq!(blksim["machine"], json!({"name": "test-box", "cpus": 2}));
        assert_eq!(blksim["wall_time_s"], 0.25);
    }

    #[test]
    fn no_disks_means_no_disk_util() {
        let mut report = sync_report();
        report.disks.clear();
        let doc = parse(&write_json(&report, &job_file(&report, &[]), false, Value::Null));
        assert!(doc.get("disk_util").is_none());
    }
}

#[cfg(feature = "crosscheck")]
#[path = "crosscheck/mod.rs"]
mod crosscheck;

/// A cross-check (`--features crosscheck`): fio's own json+ consumer reads our json+.
#[cfg(feature = "crosscheck")]
mod clat2csv {
    use std::collections::BTreeMap;

    use super::*;

    /// Debian's fio package ships fio's own json+ consumer; it must read our
    /// json+ and write, per job, CSV rows whose counts are our bins.
    #[test]
    fn fio_jsonplus_clat2csv_reads_json_plus() {
        let report = libaio_report();
        let text = write_json(&report, &job_file(&report, &[]), true, extra());
        let doc = parse(&text);

        let guard = tempfile::Builder::new().prefix("blksim-output-clat2csv-").tempdir().unwrap();
        let dir = guard.path().to_path_buf();
        std::fs::create_dir_all(&dir).unwrap();
        let source = dir.join("run.json");
        std::fs::write(&source, &text).unwrap();
        let output = crosscheck::fio_tool("fio_jsonplus_clat2csv")
            .arg(&source)
            .arg(dir.join("lat.csv"))
            .output()
            .expect("run fio_jsonplus_clat2csv");
        assert!(output.status.success(), "exit {:?}: {}", output.status, String::from_utf8_lossy(&output.stderr));

        for (jobnum, job) in doc["jobs"].as_array().unwrap().iter().enumerate() {
            // The script names its output <stub>_job<N><ext>.
            let csv = std::fs::read_to_string(dir.join(format!("lat_job{jobnum}.csv"))).expect("CSV per job");
            let from_csv = csv_counts(&csv);
            let mut rows = 0;
            for ddir in ["read", "write", "trim"] {
                for lat in ["slat_ns", "clat_ns", "lat_ns"] {
                    let bins: BTreeMap<u64, u64> = job[ddir][lat]
                        .get("bins")
                        .and_then(|b| b.as_object())
                        .map(|b| b.iter().map(|(k, v)| (k.parse().unwrap(), v.as_u64().unwrap())).collect())
                        .unwrap_or_default();
                    let key = format!("{ddir}_{lat}");
                    assert_eq!(from_csv.get(&key).cloned().unwrap_or_default(), bins, "job {jobnum} {key}");
                    rows += bins.len();
                }
            }
            assert!(rows > 0);
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Per `<ddir>_<lat>` column group of the script's CSV, the (nsec, count) of every row with a count.
    fn csv_counts(csv: &str) -> BTreeMap<String, BTreeMap<u64, u64>> {
        let mut lines = csv.lines();
        let header: Vec<String> = lines.next().expect("a header").split(',').map(|c| c.trim().to_string()).collect();
        assert_eq!(header[0], "nsec");
        let mut counts: BTreeMap<String, BTreeMap<u64, u64>> = BTreeMap::new();
        for line in lines.filter(|l| !l.trim().is_empty()) {
            let values: Vec<&str> = line.split(',').map(|v| v.trim()).collect();
            let nsec: u64 = values[0].parse().expect("nsec column");
            for (col, name) in header.iter().enumerate() {
                if let Some(group) = name.strip_suffix("_count") {
                    if !values[col].is_empty() {
                        counts.entry(group.to_string()).or_default().insert(nsec, values[col].parse().unwrap());
                    }
                }
            }
        }
        counts
    }
}
