//! fio's own criteria for its latency percentiles (`t/latency_percentiles.py`
//! in fio's source, run by `t/run-fio-tests.py`), applied to blksim's
//! output. fio's script runs one job per case from the command line with
//! `--write_lat_log` and checks, for each direction the job did:
//!
//! - slat, clat and lat percentiles appear exactly when their
//!   `*_percentiles` option asks for them;
//! - each latency log holds one entry per I/O (`total_ios`);
//! - each reported percentile is within 1/128 of the value fio's own rank
//!   rule picks from the logged latencies (`ceil(p/100 * n)`th smallest):
//!   the bound fio's histogram guarantees (`stat.h`);
//! - with json+, the bins' smallest and largest keys match min and max
//!   (within 1/128) and their counts add up to N; without it there are no bins;
//! - with terse and json together, each terse percentile is the JSON value
//!   in microseconds, rounded down;
//! - directions the job did not do are empty, and with
//!   `unified_rw_reporting=mixed` only `mixed` is reported, its latencies
//!   being every direction's (checked against the logs of all directions).
//!
//! - with `fsync`, the sync section has percentiles, its N is its
//!   `total_ios`, and with json+ its bins agree as above; without, it is empty.
//!
//! - with `cmdprio_percentage` or `cmdprio_bssplit` (cases 15-22), the
//!   per-priority latencies (`prios`: clat, or lat with `lat_percentiles`)
//!   add up to the direction's: their N to its N, their smallest min and
//!   largest max to its, their weighted means to its mean (within 0.01%),
//!   and with json+ their bins, each within fio's bound, to its bins;
//!   without cmdprio there are none.
//!
//! The cases are fio's 1-22, with blksim's device for fio's file
//! (`--filename=/dev/nvme0n1 --direct=1`, as fio's regression jobs are run
//! here, `fio_t_jobs.rs`), libaio for fio's Linux `aio` and 20 ms for its
//! 2-5 s.
//! This is blksim's code, not a copy of fio's script.

mod common;

use serde_json::Value;

/// One of fio's cases: its options, and what it did.
struct Case {
    id: u32,
    ioengine: &'static str,
    rw: &'static str,
    format: &'static str,
    /// `slat_percentiles`, `clat_percentiles`, `lat_percentiles` as the case sets them (`None`: not set).
    pct: [Option<bool>; 3],
    /// `unified_rw_reporting=1`.
    unified: bool,
    numjobs: u32,
    /// `fsync`.
    fsync: u32,
    /// `cmdprio_percentage=50`, or `bssplit` and `cmdprio_bssplit` (fio's options).
    cmdprio: Option<&'static str>,
}

const fn case(id: u32, ioengine: &'static str, rw: &'static str, format: &'static str, pct: [Option<bool>; 3]) -> Case {
    Case { id, ioengine, rw, format, pct, unified: false, numjobs: 1, fsync: 0, cmdprio: None }
}

const ALL: [Option<bool>; 3] = [Some(true), Some(true), Some(true)];
const PERC: Option<&str> = Some("--cmdprio_percentage=50");
const BSSPLIT: Option<&str> = Some("--bssplit=64k/40:1024k/60 --cmdprio_bssplit=64k/25/1/1:64k/75/3/2:1024k/0");
const NONE: [Option<bool>; 3] = [None, None, None];

fn cases() -> Vec<Case> {
    let (f, t) = (Some(false), Some(true));
    vec![
        case(1, "null", "randread", "json", ALL),
        case(2, "null", "randwrite", "json", [f, f, t]),
        case(3, "null", "randtrim", "json", [f, t, f]),
        case(4, "libaio", "randread", "json+", ALL),
        case(5, "libaio", "randwrite", "json+", [f, t, t]),
        case(6, "libaio", "randread", "json+", NONE),
        case(7, "libaio", "randrw", "json+", [t, f, f]),
        Case { unified: true, ..case(8, "libaio", "randrw", "json+", ALL) },
        Case { fsync: 32, ..case(9, "null", "randwrite", "json+", ALL) },
        case(10, "libaio", "randrw", "terse,json+", ALL),
        case(11, "libaio", "randrw", "terse,json+", [f, f, t]),
        Case { numjobs: 4, ..case(12, "null", "randread", "json", ALL) },
        Case { numjobs: 4, ..case(13, "libaio", "randread", "json+", ALL) },
        Case { unified: true, numjobs: 4, ..case(14, "libaio", "randrw", "json+", ALL) },
        Case { cmdprio: PERC, ..case(15, "libaio", "randread", "json+", ALL) },
        Case { cmdprio: PERC, ..case(16, "libaio", "randwrite", "json+", [f, t, t]) },
        Case { cmdprio: PERC, ..case(17, "libaio", "randread", "json+", NONE) },
        Case { cmdprio: PERC, ..case(18, "libaio", "randrw", "json+", [t, f, f]) },
        Case { unified: true, cmdprio: PERC, ..case(19, "libaio", "randrw", "json+", ALL) },
        Case { unified: true, numjobs: 4, cmdprio: PERC, ..case(20, "libaio", "randrw", "json+", ALL) },
        Case { cmdprio: BSSPLIT, ..case(21, "libaio", "randrw", "json+", [f, t, f]) },
        Case { numjobs: 4, cmdprio: BSSPLIT, ..case(22, "libaio", "randrw", "json+", [f, t, f]) },
    ]
}

/// The options fio's script passes, with blksim's device for fio's file.
fn args(c: &Case, name: &str) -> Vec<String> {
    let mut a: Vec<String> = [
        "run",
        "--filename=/dev/nvme0n1",
        "--direct=1",
        "--max-jobs=16",
        "--name=latency",
        "--randrepeat=0",
        "--norandommap",
        "--time_based",
        "--size=16M",
        "--rwmixread=50",
        "--group_reporting=1",
        "--runtime=20ms",
    ]
    .map(String::from)
    .to_vec();
    a.push(format!("--write_lat_log={name}"));
    a.push(format!("--output={name}.out"));
    a.push(format!("--ioengine={}", c.ioengine));
    a.push(format!("--rw={}", c.rw));
    a.push(format!("--output-format={}", c.format));
    for (opt, v) in ["slat_percentiles", "clat_percentiles", "lat_percentiles"].iter().zip(c.pct) {
        if let Some(v) = v {
            a.push(format!("--{opt}={}", u8::from(v)));
        }
    }
    if c.unified {
        a.push("--unified_rw_reporting=1".into());
    }
    if c.numjobs > 1 {
        a.push(format!("--numjobs={}", c.numjobs));
    }
    if c.fsync > 0 {
        a.push(format!("--fsync={}", c.fsync));
    }
    a.extend(c.cmdprio.into_iter().flat_map(|o| o.split(' ').map(String::from)));
    a
}

/// fio's `check_prio_latencies` of one direction (`check_nocmdprio_lat` without cmdprio).
fn check_prios(c: &Case, obj: &Value, plus: bool) -> Vec<String> {
    let Some(prios) = obj.get("prios").and_then(Value::as_array) else {
        return if c.cmdprio.is_some() { vec!["no per-priority latencies".into()] } else { vec![] };
    };
    if c.cmdprio.is_none() {
        return vec!["per-priority latencies without cmdprio".into()];
    }
    // lat_percentiles makes them lat's (fio's check: clat unless the case set it).
    let key = if c.pct[2] == Some(true) { "lat_ns" } else { "clat_ns" };
    let whole = &obj[key];
    let u = |v: &Value, k: &str| v[k].as_u64().unwrap();
    let stats: Vec<&Value> = prios.iter().map(|p| &p[key]).collect();
    let mut bad = Vec::new();
    let n: u64 = stats.iter().map(|s| u(s, "N")).sum();
    if n != u(whole, "N") {
        bad.push(format!("prios: N {n} against {}", whole["N"]));
    }
    if stats.iter().map(|s| u(s, "min")).min() != Some(u(whole, "min")) {
        bad.push(format!("prios: min against {}", whole["min"]));
    }
    if stats.iter().map(|s| u(s, "max")).max() != Some(u(whole, "max")) {
        bad.push(format!("prios: max against {}", whole["max"]));
    }
    let f = |v: &Value, k: &str| v[k].as_f64().unwrap();
    let weighted: f64 = stats.iter().map(|s| f(s, "mean") * f(s, "N")).sum::<f64>() / f(whole, "N");
    if (weighted - f(whole, "mean")).abs() / f(whole, "mean") > 0.0001 {
        bad.push(format!("prios: weighted mean {weighted} against {}", whole["mean"]));
    }
    // json+ bins only where percentiles are on (fio's case 18 checks without them).
    if plus && (c.pct[1] != Some(false) || c.pct[2] == Some(true)) {
        let mut bins = std::collections::BTreeMap::<String, u64>::new();
        for s in &stats {
            let Some(b) = s.get("bins").and_then(Value::as_object) else {
                bad.push("prios: json+ without bins".into());
                return bad;
            };
            let keys: Vec<u64> = b.keys().map(|k| k.parse().unwrap()).collect();
            if !similar(u(s, "min"), *keys.iter().min().unwrap()) || !similar(u(s, "max"), *keys.iter().max().unwrap())
            {
                bad.push("prios: min or max against its bins".into());
            }
            for (k, v) in b {
                *bins.entry(k.clone()).or_default() += v.as_u64().unwrap();
            }
        }
        let all: std::collections::BTreeMap<String, u64> =
            whole["bins"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_u64().unwrap())).collect();
        if bins != all {
            bad.push("prios: merged bins differ from the direction's".into());
        }
    }
    bad
}

/// fio's `check_sync_lat`: percentiles, N its total_ios, json+ bins as for
/// the directions; and one sync after every `fsync` writes issued.
fn check_sync(c: &Case, job: &Value, plus: bool) -> Vec<String> {
    let sync = &job["sync"];
    let stat = &sync["lat_ns"];
    let n = stat["N"].as_u64().unwrap();
    if c.fsync == 0 {
        return if n != 0 || sync["total_ios"] != 0 { vec!["sync: not empty".into()] } else { vec![] };
    }
    let mut bad = Vec::new();
    if stat.get("percentile").is_none() {
        bad.push("sync: no percentiles".into());
    }
    if sync["total_ios"].as_u64() != Some(n) || n == 0 {
        bad.push(format!("sync: total_ios {} against N {n}", sync["total_ios"]));
    }
    match (plus, stat.get("bins").and_then(Value::as_object)) {
        (true, Some(bins)) => {
            let keys: Vec<u64> = bins.keys().map(|k| k.parse().unwrap()).collect();
            let count: u64 = bins.values().map(|v| v.as_u64().unwrap()).sum();
            let (min, max) = (stat["min"].as_u64().unwrap(), stat["max"].as_u64().unwrap());
            if !similar(min, *keys.iter().min().unwrap()) || !similar(max, *keys.iter().max().unwrap()) || count != n {
                bad.push(format!("sync: min {min} / max {max} / N {n} against the bins {bins:?}"));
            }
        }
        (true, None) => bad.push("sync: json+ without bins".into()),
        (false, Some(_)) => bad.push("sync: bins without json+".into()),
        (false, None) => {}
    }
    let writes = job["write"]["total_ios"].as_u64().unwrap();
    if writes / c.fsync as u64 - n > 1 {
        bad.push(format!("sync: {n} after {writes} writes with fsync={}", c.fsync));
    }
    bad
}

/// fio's bound on a histogram value's error: 1/128 of the value.
fn similar(reported: u64, actual: u64) -> bool {
    if actual == 0 {
        return reported == 0;
    }
    (reported as f64 - actual as f64).abs() / actual as f64 <= 1.0 / 128.0
}

/// The logged latencies of type `lat` (slat, clat, lat) for direction `ddir` (all with `None`), sorted.
fn logged(dir: &std::path::Path, name: &str, lat: &str, ddir: Option<u64>) -> Vec<u64> {
    let mut out = Vec::new();
    for i in 1..=10 {
        let Ok(text) = std::fs::read_to_string(dir.join(format!("{name}_{lat}.{i}.log"))) else { break };
        for line in text.lines() {
            let f: Vec<u64> = line.split(',').map(|x| x.trim().parse().unwrap()).collect();
            if ddir.is_none_or(|d| f[2] == d) {
                out.push(f[1]);
            }
        }
    }
    out.sort_unstable();
    out
}

/// fio's checks of one direction's three latency objects; the problems found.
fn check_dir(dir: &std::path::Path, name: &str, c: &Case, obj: &Value, ddir: Option<u64>, plus: bool) -> Vec<String> {
    let mut bad = Vec::new();
    // fio's defaults: clat percentiles on, slat and lat off. The null engine at
    // iodepth 1 completes each I/O as it queues it: no submission latency.
    let slat = c.pct[0].unwrap_or(false) && c.ioengine != "null";
    let wanted = [slat, c.pct[1].unwrap_or(true), c.pct[2].unwrap_or(false)];
    for (lat, want) in ["slat", "clat", "lat"].into_iter().zip(wanted) {
        let stat = &obj[format!("{lat}_ns")];
        let ptiles = stat.get("percentile");
        if !want {
            if ptiles.is_some() {
                bad.push(format!("{lat}: percentiles reported without {lat}_percentiles"));
            }
            continue;
        }
        let Some(ptiles) = ptiles.and_then(Value::as_object) else {
            bad.push(format!("{lat}: no percentiles"));
            continue;
        };
        match (plus, stat.get("bins").and_then(Value::as_object)) {
            (true, None) => bad.push(format!("{lat}: json+ without bins")),
            (false, Some(_)) => bad.push(format!("{lat}: bins without json+")),
            (true, Some(bins)) => {
                let keys: Vec<u64> = bins.keys().map(|k| k.parse().unwrap()).collect();
                let count: u64 = bins.values().map(|v| v.as_u64().unwrap()).sum();
                let (min, max) = (stat["min"].as_u64().unwrap(), stat["max"].as_u64().unwrap());
                if !similar(min, *keys.iter().min().unwrap()) || !similar(max, *keys.iter().max().unwrap()) {
                    bad.push(format!("{lat}: min {min} / max {max} against the bins' {keys:?}"));
                }
                if count != stat["N"].as_u64().unwrap() {
                    bad.push(format!("{lat}: bins count {count}, N {}", stat["N"]));
                }
            }
            (false, None) => {}
        }
        let values = logged(dir, name, lat, ddir);
        if values.len() as u64 != obj["total_ios"].as_u64().unwrap() {
            bad.push(format!("{lat}: total_ios {} but {} latencies logged", obj["total_ios"], values.len()));
            continue;
        }
        for (p, v) in ptiles {
            let p: f64 = p.parse().unwrap();
            let rank = (p / 100.0 * values.len() as f64).ceil() as usize;
            let want = values[rank.saturating_sub(1)];
            let got = v.as_u64().unwrap();
            if !similar(got, want) {
                bad.push(format!("{lat} {p}th percentile: reported {got}, the log's {want}"));
            }
        }
    }
    bad
}

/// The terse line's percentile fields `from..to` against the JSON's `lat_ns` percentiles (in µs, rounded down).
fn check_terse(terse: &[&str], json: &Value) -> Vec<String> {
    let ptiles = json["lat_ns"]["percentile"].as_object().expect("lat percentiles");
    let mut bad = Vec::new();
    for field in terse {
        let (p, v) = field.split_once("%=").expect("a percentile field");
        let key = ptiles.keys().find(|k| k.parse::<f64>().unwrap() == p.parse::<f64>().unwrap());
        let Some(key) = key else {
            bad.push(format!("terse {p}%: not in the JSON"));
            continue;
        };
        let want = ptiles[key].as_u64().unwrap() / 1000;
        if v.parse::<u64>().unwrap() != want {
            bad.push(format!("terse {p}%: {v}, JSON {want}"));
        }
    }
    bad
}

fn run_case(c: &Case) -> Vec<String> {
    let tmp = tempfile::tempdir().unwrap();
    let name = format!("latency{:03}", c.id);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_blksim"))
        .args(args(c, &name))
        .current_dir(tmp.path())
        .output()
        .unwrap();
    if out.status.code() != Some(0) {
        return vec![format!("exit {:?}: {}", out.status.code(), String::from_utf8_lossy(&out.stderr))];
    }
    let text = std::fs::read_to_string(tmp.path().join(format!("{name}.out"))).unwrap();
    let start = text.find("\n{").map_or(0, |i| i + 1);
    let doc: Value = serde_json::from_str(&text[start..]).expect("JSON output");
    let job = &doc["jobs"][0];
    let plus = c.format.contains("json+");
    let mut bad = Vec::new();
    if c.unified {
        for d in ["read", "write", "trim"] {
            if job.get(d).is_some() {
                bad.push(format!("{d} reported with unified_rw_reporting=1"));
            }
        }
        bad.extend(check_dir(tmp.path(), &name, c, &job["mixed"], None, plus));
        bad.extend(check_prios(c, &job["mixed"], plus));
        return bad;
    }
    let did = match c.rw {
        "randread" => [true, false, false],
        "randwrite" => [false, true, false],
        "randtrim" => [false, false, true],
        _ => [true, true, false],
    };
    for (d, (dname, did)) in ["read", "write", "trim"].into_iter().zip(did).enumerate() {
        let obj = &job[dname];
        if did {
            bad.extend(
                check_dir(tmp.path(), &name, c, obj, Some(d as u64), plus)
                    .into_iter()
                    .chain(check_prios(c, obj, plus))
                    .map(|b| format!("{dname}: {b}")),
            );
        } else if obj["total_ios"] != 0 || ["slat_ns", "clat_ns", "lat_ns"].iter().any(|l| obj[l]["N"] != 0) {
            bad.push(format!("{dname}: not empty"));
        }
    }
    bad.extend(check_sync(c, job, plus));
    if c.format.contains("terse") {
        let line = text.lines().find(|l| l.starts_with("3;")).expect("a terse line");
        let fields: Vec<&str> = line.split(';').collect();
        // Terse v3: the read direction's 17 percentile fields from field 17, the write's from 58.
        bad.extend(check_terse(&fields[17..34], &job["read"]));
        bad.extend(check_terse(&fields[58..75], &job["write"]));
    }
    bad
}

#[test]
fn reported_percentiles_match_the_latency_logs_as_fios_own_test_checks() {
    let mut failures = Vec::new();
    for c in cases() {
        let bad = run_case(&c);
        if !bad.is_empty() {
            failures.push(format!("case {} ({} {} {}):\n  {}", c.id, c.ioengine, c.rw, c.format, bad.join("\n  ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_mixed_report_sums_the_directions_and_both_adds_it_after_them() {
    let run = |unified: &str, format: &str| {
        let (code, out, err) = common::blksim(&[
            "run",
            "--filename=/dev/nvme0n1",
            "--direct=1",
            "--name=t",
            "--rw=randrw",
            "--ioengine=libaio",
            "--iodepth=4",
            "--runtime=5ms",
            "--time_based",
            &format!("--unified_rw_reporting={unified}"),
            &format!("--output-format={format}"),
        ]);
        assert_eq!(code, 0, "{err}");
        out
    };
    let split: Value = serde_json::from_str(&run("none", "json")).unwrap();
    let mixed: Value = serde_json::from_str(&run("mixed", "json")).unwrap();
    let both: Value = serde_json::from_str(&run("both", "json")).unwrap();
    let (s, m, b) = (&split["jobs"][0], &mixed["jobs"][0], &both["jobs"][0]);
    // The same run, reported three ways.
    let sum = |k: &str| s["read"][k].as_u64().unwrap() + s["write"][k].as_u64().unwrap();
    assert!(s["read"]["total_ios"].as_u64().unwrap() > 0 && s["write"]["total_ios"].as_u64().unwrap() > 0);
    for k in ["total_ios", "io_bytes"] {
        assert_eq!(m["mixed"][k].as_u64().unwrap(), sum(k), "mixed {k}");
        assert_eq!(b["mixed"][k].as_u64().unwrap(), sum(k), "both's mixed {k}");
    }
    let n = |j: &Value| j["clat_ns"]["N"].as_u64().unwrap();
    assert_eq!(n(&m["mixed"]), n(&s["read"]) + n(&s["write"]));
    let lo = s["read"]["clat_ns"]["min"].as_u64().unwrap().min(s["write"]["clat_ns"]["min"].as_u64().unwrap());
    assert_eq!(m["mixed"]["clat_ns"]["min"].as_u64().unwrap(), lo);
    // fio's keys: mixed alone (not even sync); both: read, write, trim, sync, then mixed.
    let dirs = |j: &Value| -> Vec<String> {
        j.as_object()
            .unwrap()
            .keys()
            .filter(|k| ["read", "write", "trim", "sync", "mixed"].contains(&k.as_str()))
            .cloned()
            .collect()
    };
    assert_eq!(dirs(m), ["mixed"]);
    assert_eq!(dirs(b), ["read", "write", "trim", "sync", "mixed"]);
    assert_eq!(b["read"], s["read"], "both reports each direction as none does");
    // Normal output: fio's labels.
    let text = run("mixed", "normal");
    assert!(text.contains("\n  mixed: IOPS=") && !text.contains("\n  read: IOPS="), "{text}");
    assert!(text.contains("\n  MIXED: bw=") && !text.contains("   READ: bw="), "{text}");
    assert!(
        text.contains("issued rwts: total=") && text.contains(&format!("total={},0,0,0", sum("total_ios"))),
        "{text}"
    );
    let text = run("both", "normal");
    for label in [
        "\n  read: IOPS=",
        "\n  write: IOPS=",
        "\n  mixed: IOPS=",
        "\n   READ: bw=",
        "\n  WRITE: bw=",
        "\n  MIXED: bw=",
    ] {
        assert!(text.contains(label), "{label:?} in {text}");
    }
    // both's mixed line comes from a thread_stat whose unit_base fio leaves 0: no unit on its
    // bandwidth (`BW=1000Mi (1049M)`), where each direction's has one (and mixed=1's line too).
    let line = |t: &str, label: &str| t.lines().find(|l| l.starts_with(label)).unwrap().to_string();
    assert!(line(&text, "  read: IOPS=").contains("B/s ("), "{text}");
    let mixed = line(&text, "  mixed: IOPS=");
    assert!(!mixed.contains("B/s") && mixed.contains("i ("), "{mixed}");
    assert!(line(&run("mixed", "normal"), "  mixed: IOPS=").contains("B/s ("));
    // Terse v3: mixed in read's place and no write section; both: read, write, then mixed.
    let fields = |t: String| t.lines().next().unwrap().split(';').count();
    let (split_n, mixed_n, both_n) =
        (fields(run("none", "terse")), fields(run("mixed", "terse")), fields(run("both", "terse")));
    let section = split_n - mixed_n;
    assert!(section > 40, "a direction's terse fields: {section}");
    assert_eq!(both_n, split_n + section);
}
