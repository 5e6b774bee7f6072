//! The metrics an experiment compares, by name, each read from an
//! `Observation` (simulated or measured alike).

use crate::observe::{Latency, Observation};

/// One metric. Names are what experiment files write.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Metric {
    /// `iops`: reads + writes per second, all jobs.
    Iops,
    /// `read_iops`, `write_iops`.
    DirIops(usize),
    /// `iops_per_device`: `iops` over the number of devices the jobs used.
    IopsPerDevice,
    /// `bw_bytes`: bytes per second, reads + writes, all jobs.
    BwBytes,
    /// `clat_mean_us`, `lat_mean_us`.
    LatMeanUs { total: bool },
    /// `clat_p99_us`, `lat_p99.9_us`: a percentile over all jobs and directions.
    LatPctUs { total: bool, pct: f64 },
    /// `job_usr_pct`, `job_sys_pct`: fio's usr_cpu / sys_cpu of the jobs' tasks (mean over jobs, as group_reporting).
    JobCpuPct { sys: bool },
    /// `cpu_busy_pct`: machine-wide non-idle share of CPU time.
    CpuBusyPct,
    /// `cpu_sys_pct`: machine-wide system (kernel task) share, mpstat's %sys.
    CpuSysPct,
    /// `cpu_irq_pct`: machine-wide hardirq + softirq share.
    CpuIrqPct,
    /// `interrupts_per_sec`: device interrupts handled per second.
    InterruptsPerSec,
    /// `notifications_per_sec`: posted-interrupt notifications per second.
    NotificationsPerSec,
    /// `ipis_per_sec`.
    IpisPerSec,
    /// `lock_contention_pct`: share of the CPUs' busy time spent spinning on the scheduler locks (a cycles profile's share).
    LockContentionPct,
}

/// Every fixed metric name, for error messages and docs.
pub const NAMES: &[&str] = &[
    "iops",
    "read_iops",
    "write_iops",
    "iops_per_device",
    "bw_bytes",
    "clat_mean_us",
    "lat_mean_us",
    "clat_pNN_us",
    "lat_pNN_us",
    "job_usr_pct",
    "job_sys_pct",
    "cpu_busy_pct",
    "cpu_sys_pct",
    "cpu_irq_pct",
    "interrupts_per_sec",
    "notifications_per_sec",
    "ipis_per_sec",
    "lock_contention_pct",
];

/// A metric the observation cannot give. `NotReported` means the model (or the
/// measured files) do not report it at all: the cell is pending, not failed.
#[derive(Clone, Debug, PartialEq)]
pub enum MetricError {
    NotReported(String),
    Invalid(String),
}

impl std::fmt::Display for MetricError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MetricError::NotReported(s) | MetricError::Invalid(s) => f.write_str(s),
        }
    }
}

impl From<MetricError> for String {
    fn from(e: MetricError) -> String {
        e.to_string()
    }
}

impl Metric {
    pub fn parse(name: &str) -> Result<Metric, String> {
        Ok(match name {
            "iops" => Metric::Iops,
            "read_iops" => Metric::DirIops(0),
            "write_iops" => Metric::DirIops(1),
            "iops_per_device" => Metric::IopsPerDevice,
            "bw_bytes" => Metric::BwBytes,
            "clat_mean_us" => Metric::LatMeanUs { total: false },
            "lat_mean_us" => Metric::LatMeanUs { total: true },
            "job_usr_pct" => Metric::JobCpuPct { sys: false },
            "job_sys_pct" => Metric::JobCpuPct { sys: true },
            "cpu_busy_pct" => Metric::CpuBusyPct,
            "cpu_sys_pct" => Metric::CpuSysPct,
            "cpu_irq_pct" => Metric::CpuIrqPct,
            "interrupts_per_sec" => Metric::InterruptsPerSec,
            "notifications_per_sec" => Metric::NotificationsPerSec,
            "ipis_per_sec" => Metric::IpisPerSec,
            "lock_contention_pct" => Metric::LockContentionPct,
            _ => {
                let pct = |rest: &str| -> Option<f64> {
                    let p: f64 = rest.strip_prefix('p')?.strip_suffix("_us")?.parse().ok()?;
                    (p > 0.0 && p <= 100.0).then_some(p)
                };
                if let Some(p) = name.strip_prefix("clat_").and_then(pct) {
                    Metric::LatPctUs { total: false, pct: p }
                } else if let Some(p) = name.strip_prefix("lat_").and_then(pct) {
                    Metric::LatPctUs { total: true, pct: p }
                } else {
                    return Err(format!("unknown metric '{name}' (known: {})", NAMES.join(", ")));
                }
            }
        })
    }

    pub fn name(&self) -> String {
        match *self {
            Metric::Iops => "iops".into(),
            Metric::DirIops(d) => if d == 0 { "read_iops" } else { "write_iops" }.into(),
            Metric::IopsPerDevice => "iops_per_device".into(),
            Metric::BwBytes => "bw_bytes".into(),
            Metric::LatMeanUs { total } => if total { "lat_mean_us" } else { "clat_mean_us" }.into(),
            Metric::LatPctUs { total, pct } => format!("{}_p{pct}_us", if total { "lat" } else { "clat" }),
            Metric::JobCpuPct { sys } => if sys { "job_sys_pct" } else { "job_usr_pct" }.into(),
            Metric::CpuBusyPct => "cpu_busy_pct".into(),
            Metric::CpuSysPct => "cpu_sys_pct".into(),
            Metric::CpuIrqPct => "cpu_irq_pct".into(),
            Metric::InterruptsPerSec => "interrupts_per_sec".into(),
            Metric::NotificationsPerSec => "notifications_per_sec".into(),
            Metric::IpisPerSec => "ipis_per_sec".into(),
            Metric::LockContentionPct => "lock_contention_pct".into(),
        }
    }

    /// The metric's value in its own unit (IOPS, bytes/s, µs, %, per second).
    pub fn eval(&self, o: &Observation) -> Result<f64, MetricError> {
        use MetricError::*;
        let iops = || o.jobs.iter().map(|j| j.iops[0] + j.iops[1]).sum::<f64>();
        let latency = |total: bool| -> Result<&Latency, MetricError> {
            let l = if total { &o.lat } else { &o.clat };
            l.as_ref().ok_or_else(|| {
                NotReported(o.latency_missing.clone().unwrap_or_else(|| "no latency statistics in the run".into()))
            })
        };
        let cpu = || o.cpu.ok_or_else(|| NotReported("no machine-wide CPU times (give /proc/stat snapshots)".into()));
        let share = |x: f64, total: f64| if total > 0.0 { 100.0 * x / total } else { 0.0 };
        let rates =
            || o.rates.ok_or_else(|| NotReported("no interrupt counts (give /proc/interrupts snapshots)".into()));
        Ok(match *self {
            Metric::Iops => iops(),
            Metric::DirIops(d) => o.jobs.iter().map(|j| j.iops[d]).sum(),
            Metric::IopsPerDevice => match o.devices {
                Some(n) if n > 0 => iops() / n as f64,
                _ => return Err(Invalid("the number of devices is unknown (set `devices` for measured runs)".into())),
            },
            Metric::BwBytes => o.jobs.iter().map(|j| j.bw_bytes[0] + j.bw_bytes[1]).sum(),
            Metric::LatMeanUs { total } => latency(total)?.mean_ns() / 1000.0,
            Metric::LatPctUs { total, pct } => latency(total)?.percentile_ns(pct).map_err(Invalid)? / 1000.0,
            Metric::JobCpuPct { sys } => {
                let run: f64 = o.jobs.iter().map(|j| j.run_time).sum();
                let t: f64 = o.jobs.iter().map(|j| if sys { j.sys } else { j.usr }).sum();
                share(t, run)
            }
            Metric::CpuBusyPct => {
                let c = cpu()?;
                share(c.user + c.sys + c.irq, c.total())
            }
            Metric::CpuSysPct => {
                let c = cpu()?;
                share(c.sys, c.total())
            }
            Metric::CpuIrqPct => {
                let c = cpu()?;
                share(c.irq, c.total())
            }
            Metric::InterruptsPerSec => rates()?.interrupts,
            Metric::NotificationsPerSec => rates()?.notifications,
            Metric::IpisPerSec => rates()?.ipis,
            Metric::LockContentionPct => o.lock_wait_pct.ok_or_else(|| {
                NotReported("the run had no scheduler lock (lock contention needs mq-deadline)".into())
            })?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::{CpuShares, JobObservation};

    #[test]
    fn names_round_trip() {
        for n in [
            "iops",
            "read_iops",
            "iops_per_device",
            "clat_p99_us",
            "lat_p99.9_us",
            "job_sys_pct",
            "cpu_irq_pct",
            "ipis_per_sec",
        ] {
            assert_eq!(Metric::parse(n).unwrap().name(), n);
        }
        assert!(Metric::parse("clat_p101_us").is_err());
        assert!(Metric::parse("iopz").unwrap_err().contains("known: iops"));
    }

    #[test]
    fn metrics_read_the_observation() {
        let o = Observation {
            jobs: vec![
                JobObservation { iops: [100.0, 50.0], bw_bytes: [4e5, 2e5], usr: 10.0, sys: 30.0, run_time: 100.0 },
                JobObservation { iops: [100.0, 0.0], bw_bytes: [4e5, 0.0], usr: 10.0, sys: 10.0, run_time: 100.0 },
            ],
            devices: Some(2),
            cpu: Some(CpuShares { user: 1.0, sys: 2.0, irq: 1.0, idle: 4.0 }),
            ..Default::default()
        };
        let v = |n: &str| Metric::parse(n).unwrap().eval(&o);
        assert_eq!(v("iops"), Ok(250.0));
        assert_eq!(v("write_iops"), Ok(50.0));
        assert_eq!(v("iops_per_device"), Ok(125.0));
        assert_eq!(v("bw_bytes"), Ok(1e6));
        assert_eq!(v("job_sys_pct"), Ok(20.0));
        assert_eq!(v("cpu_busy_pct"), Ok(50.0));
        assert_eq!(v("cpu_sys_pct"), Ok(25.0));
        assert!(matches!(v("interrupts_per_sec"), Err(MetricError::NotReported(_))));
        assert!(matches!(v("lock_contention_pct"), Err(MetricError::NotReported(_))));
        assert!(matches!(v("clat_p99_us"), Err(MetricError::NotReported(_))));
    }
}
