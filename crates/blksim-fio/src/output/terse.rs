//! fio's terse output (`--output-format=terse`, `--minimal`; `stat.c`'s
//! `show_thread_status_terse_all`, `show_ddir_status_terse`,
//! `print_disk_util`): one `;`-separated line per job (per group with
//! `group_reporting`), terse versions 2 (fio's oldest: no version string,
//! the trim direction, no disk statistics), 3 (fio's default), 4 (with the
//! trim direction) and 5 (with bandwidth samples and IOPS statistics).
//! Written from the run's fio JSON, so both say the same numbers; the disk
//! statistics follow each line (from version 3) as fio appends them to a
//! local run's. A direction without samples prints the job's percentile
//! list with zeros, as fio computes it there (its JSON leaves such a
//! direction's percentiles out), and the first microsecond latency bucket
//! holds the nanosecond buckets' I/Os too: both from the `blksim` object's
//! `terse` entry of the job, which has what fio's JSON does not.

use std::fmt::Write as _;

use serde_json::Value;

/// The terse versions written.
pub const TERSE_VERSIONS: [u32; 4] = [2, 3, 4, 5];

/// fio's `FIO_IO_U_LIST_MAX_LEN`: percentile fields per direction.
const PERCENTILE_FIELDS: usize = 20;

/// The terse lines of a run whose fio JSON document (not json+) is `json`, in terse `version`.
pub fn write(json: &str, version: u32) -> String {
    let doc: Value = serde_json::from_str(json).expect("the run's own JSON");
    let fio_version = doc["fio version"].as_str().unwrap_or_default();
    let extra = doc["blksim"]["terse"].as_array();
    let mut out = String::new();
    for (i, job) in doc["jobs"].as_array().into_iter().flatten().enumerate() {
        let (name, group, error) =
            (job["jobname"].as_str().unwrap_or_default(), int(&job["groupid"]), int(&job["error"]));
        if version == 2 {
            let _ = write!(out, "2;{name};{group};{error}");
        } else {
            let _ = write!(out, "{version};{fio_version};{name};{group};{error}");
        }
        let extra = extra.and_then(|e| e.get(i)).unwrap_or(&Value::Null);
        // The percentile list of a direction without samples.
        let list: Vec<String> =
            extra["percentile_list"].as_array().into_iter().flatten().map(|p| format!("{:.6}", float(p))).collect();
        // unified_rw_reporting=mixed leaves only `mixed`, in read's place; =both adds it after trim.
        let dirs: &[&str] = if version != 3 { &["read", "write", "trim"] } else { &["read", "write"] };
        let dirs = if job.get("read").is_none() { &["mixed"][..] } else { dirs };
        for d in dirs {
            ddir(&mut out, &job[*d], version, &list);
        }
        if dirs.len() > 1 && job.get("mixed").is_some() {
            ddir(&mut out, &job["mixed"], version, &list);
        }
        let _ = write!(
            out,
            ";{:.6}%;{:.6}%;{};{};{}",
            float(&job["usr_cpu"]),
            float(&job["sys_cpu"]),
            int(&job["ctx"]),
            int(&job["majf"]),
            int(&job["minf"])
        );
        for k in ["1", "2", "4", "8", "16", "32", ">=64"] {
            let _ = write!(out, ";{:3.1}%", float(&job["iodepth_level"][k]));
        }
        // fio's stat_calc_lat_nu: the nanosecond buckets' I/Os are in the first microsecond one.
        for k in ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"] {
            let ns = if k == "2" { float(&extra["lat_under_1us"]) } else { 0.0 };
            let _ = write!(out, ";{:3.2}%", float(&job["latency_us"][k]) + ns);
        }
        for k in ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000"] {
            let _ = write!(out, ";{:3.2}%", float(&job["latency_ms"][k]));
        }
        let disks = if version >= 3 { doc["disk_util"].as_array() } else { None };
        for du in disks.into_iter().flatten() {
            let _ = write!(
                out,
                ";{};{};{};{};{};{};{};{};{:3.2}%",
                du["name"].as_str().unwrap_or_default(),
                int(&du["read_ios"]),
                int(&du["write_ios"]),
                int(&du["read_merges"]),
                int(&du["write_merges"]),
                int(&du["read_ticks"]),
                int(&du["write_ticks"]),
                int(&du["in_queue"]),
                float(&du["util"])
            );
        }
        // continue_on_error's error count and first error.
        if job.get("total_err").is_some() {
            let _ = write!(out, ";{};{}", int(&job["total_err"]), int(&job["first_error"]));
        }
        if let Some(text) = job["desc"].as_str() {
            if version == 2 {
                out.push('\n');
            }
            let _ = write!(out, ";{text}");
        }
        out.push('\n');
    }
    out
}

/// One direction's fields (`show_ddir_status_terse`); `list` the job's
/// percentiles, printed with zeros where the direction has none.
fn ddir(out: &mut String, d: &Value, version: u32, list: &[String]) {
    let (bytes, ios, runtime) = (int(&d["io_bytes"]), int(&d["total_ios"]), int(&d["runtime"]));
    let bw = (1000 * bytes).checked_div(runtime).unwrap_or(0) / 1024;
    let iops = (1000 * ios).checked_div(runtime).unwrap_or(0);
    let _ = write!(out, ";{};{bw};{iops};{runtime}", bytes >> 10);
    stat(out, &d["slat_ns"]);
    stat(out, &d["clat_ns"]);
    // lat_percentiles, else clat_percentiles (the JSON has one of the two, as fio's).
    let pct = d["lat_ns"]["percentile"].as_object().or(d["clat_ns"]["percentile"].as_object());
    let pct: Vec<(&String, u64)> = match pct {
        Some(pct) => pct.iter().map(|(p, v)| (p, v.as_u64().unwrap_or(0))).collect(),
        None => list.iter().map(|p| (p, 0)).collect(),
    };
    for i in 0..PERCENTILE_FIELDS {
        match pct.get(i) {
            Some((p, v)) => {
                let _ = write!(out, ";{p}%={}", v / 1000);
            }
            None => out.push_str(";0%=0"),
        }
    }
    stat(out, &d["lat_ns"]);
    let bw_samples = int(&d["bw_samples"]);
    if bw_samples > 0 {
        let _ = write!(
            out,
            ";{};{};{:.6}%;{:.6};{:.6}",
            int(&d["bw_min"]),
            int(&d["bw_max"]),
            float(&d["bw_agg"]),
            float(&d["bw_mean"]),
            float(&d["bw_dev"])
        );
    } else {
        out.push_str(";0;0;0.000000%;0.000000;0.000000");
    }
    if version == 5 {
        let _ = write!(
            out,
            ";{bw_samples};{};{};{:.6};{:.6};{}",
            int(&d["iops_min"]),
            int(&d["iops_max"]),
            float(&d["iops_mean"]),
            float(&d["iops_stddev"]),
            int(&d["iops_samples"])
        );
    }
}

/// A latency's `min;max;mean;stddev` in µs (fio's `calc_lat` over ns, divided by 1000), zeros without samples.
fn stat(out: &mut String, s: &Value) {
    if int(&s["N"]) == 0 {
        out.push_str(";0;0;0.000000;0.000000");
        return;
    }
    let _ = write!(
        out,
        ";{};{};{:.6};{:.6}",
        int(&s["min"]) / 1000,
        int(&s["max"]) / 1000,
        float(&s["mean"]) / 1000.0,
        float(&s["stddev"]) / 1000.0
    );
}

fn int(v: &Value) -> u64 {
    v.as_u64().or_else(|| v.as_i64().map(|i| i.max(0) as u64)).unwrap_or(0)
}

fn float(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_direction_without_io_is_fios_zeros() {
        let mut out = String::new();
        ddir(&mut out, &serde_json::json!({}), 3, &[]);
        let fields: Vec<&str> = out[1..].split(';').collect();
        // io, bw, iops, runtime; slat 4; clat 4; 20 percentiles; lat 4; bw 5.
        assert_eq!(fields.len(), 4 + 4 + 4 + 20 + 4 + 5);
        assert_eq!(fields[8..12], ["0", "0", "0.000000", "0.000000"]);
        assert!(fields[12..32].iter().all(|f| *f == "0%=0"));
        assert_eq!(fields[36..], ["0", "0", "0.000000%", "0.000000", "0.000000"]);
    }

    #[test]
    fn what_fios_json_lacks_comes_from_the_blksim_objects_terse_entry() {
        // A read-only job: its write and trim directions list the job's percentiles with zeros;
        // the nanosecond buckets' share goes into the first microsecond bucket; a job with
        // continue_on_error ends its line with fio's error count and first error.
        let pct = serde_json::json!({"1.000000": 2000, "50.000000": 3000, "99.500000": 9000});
        let doc = serde_json::json!({
            "fio version": "fio-3.42",
            "jobs": [{
                "jobname": "j", "groupid": 0, "error": 0,
                "read": {"io_bytes": 4096, "total_ios": 1, "runtime": 1, "clat_ns": {"N": 1, "percentile": pct}},
                "write": {}, "trim": {},
                "latency_us": {"2": 25.0, "4": 5.0}, "total_err": 0, "first_error": 0
            }],
            "blksim": {"terse": [{"percentile_list": [1.0, 50.0, 99.5], "lat_under_1us": 70.0}]}
        });
        let line = write(&doc.to_string(), 2);
        let f: Vec<&str> = line.trim_end().split(';').collect();
        assert_eq!(f[..4], ["2", "j", "0", "0"]);
        // read's percentiles from its samples, write's (from field 4 + 41) from the list.
        assert_eq!(f[4 + 12..4 + 15], ["1.000000%=2", "50.000000%=3", "99.500000%=9"]);
        assert_eq!(f[45 + 12..45 + 16], ["1.000000%=0", "50.000000%=0", "99.500000%=0", "0%=0"]);
        let us = 4 + 3 * 41 + 5 + 7;
        assert_eq!(f[us..us + 3], ["95.00%", "5.00%", "0.00%"]);
        assert_eq!(f[f.len() - 2..], ["0", "0"]);
        assert_eq!(f.len(), us + 10 + 12 + 2, "no disk statistics in version 2");
    }
}
