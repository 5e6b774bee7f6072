//! What a run showed, whichever way it ran: an `Observation` built from a
//! simulated `RunReport`, or from a real run's fio JSON plus optional
//! `/proc/interrupts` and `/proc/stat` snapshots taken before and after.
//! Metrics (`metric.rs`) read only this, so simulated and measured numbers
//! mean the same thing.

use std::collections::BTreeSet;

use blksim::stats::{LatencyStat, RunReport};
use serde_json::Value;

/// The run, reduced to what metrics need.
#[derive(Clone, Debug, Default)]
pub struct Observation {
    /// Per job (or per group-reported job entry): IOPS and bytes/s as [read, write].
    pub jobs: Vec<JobObservation>,
    /// Distinct block devices the jobs did I/O to, when known.
    pub devices: Option<u32>,
    /// Completion and total latency over every job and direction.
    pub clat: Option<Latency>,
    pub lat: Option<Latency>,
    /// Why latency is missing, when it is.
    pub latency_missing: Option<String>,
    /// Machine-wide CPU time by context (any unit: ns or jiffies).
    pub cpu: Option<CpuShares>,
    /// Rates over the run, per second.
    pub rates: Option<Rates>,
    /// Share of the CPUs' busy time (not idle, not iowait) spent spinning
    /// on the scheduler locks, %, when the run had any: what a cycles
    /// profile (`perf`) shows, since idle CPUs take no samples.
    pub lock_wait_pct: Option<f64>,
}

#[derive(Clone, Debug, Default)]
pub struct JobObservation {
    pub iops: [f64; 2],
    pub bw_bytes: [f64; 2],
    /// CPU time of the job's task, ns (or any unit, as long as `run_time` uses the same).
    pub usr: f64,
    pub sys: f64,
    pub run_time: f64,
}

#[derive(Clone, Debug)]
pub enum Latency {
    /// The whole histogram (a simulated run): any percentile.
    Histogram(LatencyStat),
    /// fio's JSON summary: the mean and the percentiles of its `percentile_list`, ns.
    Summary { mean_ns: f64, percentiles: Vec<(f64, f64)> },
}

impl Latency {
    pub fn mean_ns(&self) -> f64 {
        match self {
            Latency::Histogram(h) => h.mean(),
            Latency::Summary { mean_ns, .. } => *mean_ns,
        }
    }

    pub fn percentile_ns(&self, p: f64) -> Result<f64, String> {
        match self {
            Latency::Histogram(h) => {
                if h.n == 0 {
                    return Err("no latency samples".into());
                }
                Ok(h.percentiles(&[p])[0].1 as f64)
            }
            Latency::Summary { percentiles, .. } => percentiles
                .iter()
                .find(|(q, _)| (q - p).abs() < 1e-6)
                .map(|(_, v)| *v)
                .ok_or_else(|| format!("percentile {p} is not in the fio output (its percentile_list)")),
        }
    }
}

/// CPU time by context, summed over every CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuShares {
    pub user: f64,
    pub sys: f64,
    /// Hard and soft interrupt context.
    pub irq: f64,
    pub idle: f64,
}

impl CpuShares {
    pub fn total(&self) -> f64 {
        self.user + self.sys + self.irq + self.idle
    }
}

/// Event rates, per second.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Rates {
    /// Device interrupts (MSI/MSI-X vectors handled).
    pub interrupts: f64,
    /// Posted-interrupt notifications (`PMN`).
    pub notifications: f64,
    /// IPIs (function-call and rescheduling).
    pub ipis: f64,
}

/// `/proc` snapshots of a real run, as text: `[before, after]`.
#[derive(Clone, Debug, Default)]
pub struct ProcSnapshots {
    pub interrupts: Option<[String; 2]>,
    pub stat: Option<[String; 2]>,
    /// Only rows whose description contains this count as device interrupts.
    pub irq_match: Option<String>,
}

impl Observation {
    /// From a simulated run.
    pub fn from_report(report: &RunReport) -> Observation {
        let mut jobs = Vec::new();
        let mut clat = LatencyStat::default();
        let mut lat = LatencyStat::default();
        let mut devices = BTreeSet::new();
        let mut with_latency = false;
        for j in &report.jobs {
            let secs = j.runtime_ns as f64 / 1e9;
            let rate = |x: u64| if secs > 0.0 { x as f64 / secs } else { 0.0 };
            let run_time = j.total_run_ns();
            jobs.push(JobObservation {
                iops: [rate(j.dirs[0].total_ios), rate(j.dirs[1].total_ios)],
                bw_bytes: [rate(j.dirs[0].io_bytes), rate(j.dirs[1].io_bytes)],
                usr: j.usr_ns as f64,
                sys: j.sys_ns as f64,
                run_time: run_time as f64,
            });
            if !j.config.gtod_reduce {
                with_latency = true;
                for d in &j.dirs[..2] {
                    clat.merge(&d.clat);
                    lat.merge(&d.lat);
                }
            }
            devices.extend(j.config.filenames.iter().cloned());
        }
        // DSA clients count like jobs: descriptors as I/Os, filled bytes as bandwidth.
        for c in &report.dsa {
            let secs = c.runtime_ns as f64 / 1e9;
            let rate = |x: u64| if secs > 0.0 { x as f64 / secs } else { 0.0 };
            jobs.push(JobObservation {
                iops: [0.0, rate(c.completed)],
                bw_bytes: [0.0, rate(c.bytes)],
                usr: 0.0,
                sys: 0.0,
                run_time: c.runtime_ns as f64,
            });
            devices.insert(c.device.clone());
        }
        let mut cpu = CpuShares::default();
        for t in &report.cpu_time {
            cpu.user += t.user_ns as f64;
            cpu.sys += t.sys_ns as f64;
            cpu.irq += (t.hardirq_ns + t.softirq_ns) as f64;
            cpu.idle += (t.idle_ns + t.iowait_ns) as f64;
        }
        let secs = report.sim_time_ns as f64 / 1e9;
        let row_total = |pred: &dyn Fn(&str) -> bool| -> u64 {
            report.interrupts.iter().filter(|r| pred(&r.label)).map(|r| r.total()).sum()
        };
        let rates = (secs > 0.0).then(|| Rates {
            interrupts: row_total(&|l| l.chars().all(|c| c.is_ascii_digit())) as f64 / secs,
            notifications: row_total(&|l| l == "PMN") as f64 / secs,
            ipis: report.ipis_per_cpu.iter().sum::<u64>() as f64 / secs,
        });
        Observation {
            jobs,
            devices: Some(devices.len() as u32),
            clat: with_latency.then_some(Latency::Histogram(clat)),
            lat: with_latency.then_some(Latency::Histogram(lat)),
            latency_missing: (!with_latency)
                .then(|| "the jobs ran with gtod_reduce (no latency statistics)".to_string()),
            lock_wait_pct: (!report.locks.is_empty()).then(|| {
                let busy_ns: u64 = report.cpu_time.iter().map(|c| c.total_ns() - c.idle_ns - c.iowait_ns).sum();
                let wait: u64 = report.locks.iter().map(|l| l.wait_ns).sum();
                if busy_ns == 0 {
                    0.0
                } else {
                    wait as f64 * 100.0 / busy_ns as f64
                }
            }),
            cpu: Some(cpu),
            rates,
        }
    }

    /// From a real run: fio's `--output-format=json` (or json+) text and optional `/proc` snapshots.
    /// `devices` overrides the device count read from the jobs' `filename` options.
    pub fn from_fio_json(text: &str, snapshots: &ProcSnapshots, devices: Option<u32>) -> Result<Observation, String> {
        // fio prints notes (e.g. "note: both iodepth >= 1 ...") before the JSON; skip to the first '{'.
        let start = text.find('{').ok_or("no JSON object in the file")?;
        let v: Value = serde_json::from_str(&text[start..]).map_err(|e| format!("not fio JSON: {e}"))?;
        let jobs_v = v.get("jobs").and_then(Value::as_array).ok_or("no `jobs` array: not fio JSON output")?;
        if jobs_v.is_empty() {
            return Err("the fio JSON has no jobs".into());
        }
        let num = |j: &Value, path: &[&str]| -> Result<f64, String> {
            let mut cur = j;
            for p in path {
                cur = cur.get(*p).ok_or_else(|| format!("job entry has no `{}`", path.join(".")))?;
            }
            cur.as_f64().ok_or_else(|| format!("`{}` is not a number", path.join(".")))
        };
        let mut jobs = Vec::new();
        let mut files = BTreeSet::new();
        let global_files = v.get("global options").and_then(|g| g.get("filename")).and_then(Value::as_str);
        for j in jobs_v {
            let run_ms = num(j, &["job_runtime"]).unwrap_or(0.0);
            jobs.push(JobObservation {
                iops: [num(j, &["read", "iops"])?, num(j, &["write", "iops"])?],
                bw_bytes: [num(j, &["read", "bw_bytes"])?, num(j, &["write", "bw_bytes"])?],
                usr: num(j, &["usr_cpu"])? * run_ms / 100.0,
                sys: num(j, &["sys_cpu"])? * run_ms / 100.0,
                run_time: run_ms,
            });
            let f = j.get("job options").and_then(|o| o.get("filename")).and_then(Value::as_str).or(global_files);
            if let Some(f) = f {
                files.extend(f.split(':').filter(|s| !s.is_empty()).map(str::to_string));
            }
        }
        let (clat, lat, latency_missing) = if jobs_v.len() == 1 {
            let j = &jobs_v[0];
            (json_latency(j, "clat_ns"), json_latency(j, "lat_ns"), None)
        } else {
            (None, None, Some(format!("{} job entries: percentiles need one (use group_reporting)", jobs_v.len())))
        };
        let cpu = match &snapshots.stat {
            Some([a, b]) => Some(proc_stat_delta(a, b)?),
            None => None,
        };
        let rates = match &snapshots.interrupts {
            Some([a, b]) => {
                let secs = match (&snapshots.stat, &cpu) {
                    (Some([a, _]), Some(c)) => c.total() / proc_stat_cpus(a)? as f64 / USER_HZ,
                    _ => jobs_v.iter().filter_map(|j| j.get("elapsed").and_then(Value::as_f64)).fold(0.0, f64::max),
                };
                if secs <= 0.0 {
                    return Err("cannot tell the run's length for interrupt rates (give proc_stat snapshots)".into());
                }
                let d = proc_interrupts_delta(a, b, snapshots.irq_match.as_deref())?;
                Some(Rates {
                    interrupts: d.interrupts / secs,
                    notifications: d.notifications / secs,
                    ipis: d.ipis / secs,
                })
            }
            None => None,
        };
        Ok(Observation {
            jobs,
            devices: devices.or((!files.is_empty()).then_some(files.len() as u32)),
            clat,
            lat,
            latency_missing,
            cpu,
            rates,
            lock_wait_pct: None,
        })
    }
}

/// Linux's USER_HZ: /proc/stat counts in 1/100 s.
const USER_HZ: f64 = 100.0;

/// One direction's latency block of a fio JSON job, the directions with I/O combined
/// (the mean weighted by sample counts; percentiles only when one direction has I/O).
fn json_latency(job: &Value, key: &str) -> Option<Latency> {
    let mut with_io = Vec::new();
    for dir in ["read", "write", "trim"] {
        let l = job.get(dir)?.get(key)?;
        let n = l.get("N").and_then(Value::as_f64).unwrap_or(0.0);
        if n > 0.0 {
            with_io.push((n, l));
        }
    }
    let total: f64 = with_io.iter().map(|(n, _)| n).sum();
    if total == 0.0 {
        return None;
    }
    let mean_ns =
        with_io.iter().map(|(n, l)| n * l.get("mean").and_then(Value::as_f64).unwrap_or(0.0)).sum::<f64>() / total;
    let percentiles = match with_io.as_slice() {
        [(_, l)] => l
            .get("percentile")
            .and_then(Value::as_object)
            .map(|m| m.iter().filter_map(|(k, v)| Some((k.parse::<f64>().ok()?, v.as_f64()?))).collect())
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    Some(Latency::Summary { mean_ns, percentiles })
}

fn proc_stat_cpu_line(text: &str) -> Result<Vec<f64>, String> {
    let line = text.lines().find(|l| l.starts_with("cpu ")).ok_or("/proc/stat snapshot has no `cpu ` line")?;
    line.split_whitespace()
        .skip(1)
        .map(|x| x.parse::<f64>().map_err(|_| format!("/proc/stat: bad number '{x}'")))
        .collect()
}

fn proc_stat_cpus(text: &str) -> Result<usize, String> {
    let n =
        text.lines().filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit)).count();
    if n == 0 {
        return Err("/proc/stat snapshot has no per-CPU lines".into());
    }
    Ok(n)
}

/// Machine-wide CPU time between two `/proc/stat` snapshots (jiffies):
/// user+nice, system, irq+softirq, idle+iowait (steal counts as busy user time).
pub fn proc_stat_delta(before: &str, after: &str) -> Result<CpuShares, String> {
    let a = proc_stat_cpu_line(before)?;
    let b = proc_stat_cpu_line(after)?;
    if a.len() < 7 || b.len() != a.len() {
        return Err("/proc/stat snapshots: the `cpu` lines differ in shape or are too short".into());
    }
    let d: Vec<f64> = a.iter().zip(&b).map(|(x, y)| y - x).collect();
    if d.iter().any(|x| *x < 0.0) {
        return Err("/proc/stat snapshots: a counter went backwards (before and after swapped?)".into());
    }
    let steal = d.get(7).copied().unwrap_or(0.0);
    Ok(CpuShares { user: d[0] + d[1] + steal, sys: d[2], irq: d[5] + d[6], idle: d[3] + d[4] })
}

/// Counts (not rates) between two `/proc/interrupts` snapshots.
pub fn proc_interrupts_delta(before: &str, after: &str, irq_match: Option<&str>) -> Result<Rates, String> {
    let a = parse_proc_interrupts(before)?;
    let b = parse_proc_interrupts(after)?;
    let mut out = Rates::default();
    for (label, desc, count) in &b {
        let prev = a.iter().find(|(l, _, _)| l == label).map(|(_, _, c)| *c).unwrap_or(0);
        let delta = count.saturating_sub(prev) as f64;
        if label.chars().all(|c| c.is_ascii_digit()) {
            if irq_match.is_none_or(|m| desc.contains(m)) {
                out.interrupts += delta;
            }
        } else if label == "PMN" {
            out.notifications += delta;
        } else if label == "CAL" || label == "RES" {
            out.ipis += delta;
        }
    }
    Ok(out)
}

/// `/proc/interrupts` rows: (label, description, total over CPUs).
pub fn parse_proc_interrupts(text: &str) -> Result<Vec<(String, String, u64)>, String> {
    let mut lines = text.lines();
    let header = lines.next().ok_or("/proc/interrupts snapshot is empty")?;
    let ncpus = header.split_whitespace().filter(|w| w.starts_with("CPU")).count();
    if ncpus == 0 {
        return Err("/proc/interrupts snapshot: the first line does not name CPUs (CPU0 CPU1 ...)".into());
    }
    let mut rows = Vec::new();
    for line in lines {
        let Some((label, rest)) = line.split_once(':') else { continue };
        let mut words = rest.split_whitespace().peekable();
        let mut total = 0u64;
        for _ in 0..ncpus {
            match words.peek().and_then(|w| w.parse::<u64>().ok()) {
                Some(n) => {
                    total += n;
                    words.next();
                }
                None => break,
            }
        }
        rows.push((label.trim().to_string(), words.collect::<Vec<_>>().join(" "), total));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    const INT_BEFORE: &str = "           CPU0       CPU1\n 24:        10          5  IR-PCI-MSIX-0000:01:00.0 0-edge nvme0q1\n 25:   1 2 IO-APIC 6-edge ACPI:Ged\nPMN:    3   4   Posted MSI notification event\nCAL:   100  200  Function call interrupts\nERR:          0\n";
    const INT_AFTER: &str = "           CPU0       CPU1\n 24:        30          5  IR-PCI-MSIX-0000:01:00.0 0-edge nvme0q1\n 25:   3 2 IO-APIC 6-edge ACPI:Ged\nPMN:    5   4   Posted MSI notification event\nCAL:   110  210  Function call interrupts\nERR:          0\n";

    #[test]
    fn proc_interrupts_deltas_split_device_rows_notifications_and_ipis() {
        let d = proc_interrupts_delta(INT_BEFORE, INT_AFTER, None).unwrap();
        assert_eq!(d, Rates { interrupts: 22.0, notifications: 2.0, ipis: 20.0 });
        let d = proc_interrupts_delta(INT_BEFORE, INT_AFTER, Some("nvme")).unwrap();
        assert_eq!(d.interrupts, 20.0);
        assert!(parse_proc_interrupts("nonsense\n").is_err());
    }

    #[test]
    fn proc_stat_delta_sums_contexts() {
        let a = "cpu  100 1 50 1000 10 5 5 0 0 0\ncpu0 50 0 25 500 5 2 3 0 0 0\ncpu1 50 1 25 500 5 3 2 0 0 0\n";
        let b = "cpu  200 1 70 1100 10 15 5 0 0 0\ncpu0 100 0 35 550 5 7 3 0 0 0\ncpu1 100 1 35 550 5 8 2 0 0 0\n";
        let c = proc_stat_delta(a, b).unwrap();
        assert_eq!(c, CpuShares { user: 100.0, sys: 20.0, irq: 10.0, idle: 100.0 });
        assert_eq!(proc_stat_cpus(a).unwrap(), 2);
        assert!(proc_stat_delta(b, a).unwrap_err().contains("backwards"));
    }
}
