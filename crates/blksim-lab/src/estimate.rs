//! How much simulating a workload costs, before running it: the simulated
//! I/Os it will do (each job at the rate its queue depth and devices allow,
//! for its runtime or its size). The CLI's wall-time budget and the order in
//! which `reproduce` and `sweep` run their points (longest first, so the
//! cores stay busy to the end) both use it.

use blksim::machine::Machine;
use blksim::workload::{IoEngine, JobConfig, RwKind};
use blksim::Workload;

/// What a job without a device (the null engine, null_blk) can do per second: fio's own loop.
const NO_DEVICE_IOPS: f64 = 5e6;

/// DSA descriptors per second of one memfill client.
const DSA_IOPS: f64 = 2e6;

/// The simulated I/Os of the workload: each job at the rate its queue depth and its devices allow
/// (a device's rate shared by the jobs on it), for its runtime or its size, whichever ends it first.
pub fn estimated_ios(machine: &Machine, workload: &Workload) -> f64 {
    let jobs = &workload.jobs;
    let sharing = |dev: &str| jobs.iter().filter(|j| j.filenames.iter().any(|f| f == dev)).count().max(1) as f64;
    let job_ios: f64 = jobs.iter().map(|j| job_rate(machine, j, &sharing) * job_seconds(j, machine)).sum();
    let dsa_ios: f64 = workload.dsa.iter().map(|c| DSA_IOPS * c.runtime_ns as f64 / 1e9).sum();
    job_ios + dsa_ios
}

/// I/Os per second of job `j`: its queue depth over the device latency, at most its share of its devices'
/// IOPS, and at most its `rate`/`rate_iops` when every direction it does has one.
fn job_rate(machine: &Machine, j: &JobConfig, sharing: &dyn Fn(&str) -> f64) -> f64 {
    let free = unpaced_rate(machine, j, sharing);
    let dirs: &[usize] = match j.rw {
        RwKind::Read | RwKind::RandRead => &[0],
        RwKind::Write | RwKind::RandWrite => &[1],
        _ => &[0, 1],
    };
    let cap = |d: usize| match (j.rate_iops[d], j.rate[d]) {
        (0, 0) => None,
        (0, bps) => Some(bps as f64 / j.bs[d].max(1) as f64),
        (iops, _) => Some(iops as f64),
    };
    let caps: Option<Vec<f64>> = dirs.iter().map(|&d| cap(d)).collect();
    caps.map_or(free, |c| free.min(c.iter().sum::<f64>().max(1e-3)))
}

fn unpaced_rate(machine: &Machine, j: &JobConfig, sharing: &dyn Fn(&str) -> f64) -> f64 {
    let write = matches!(j.rw, RwKind::Write | RwKind::RandWrite);
    let dir = usize::from(write);
    let mut device_iops = 0.0;
    let mut latency_ns = f64::MAX;
    for f in &j.filenames {
        let name = f.strip_prefix("/dev/").unwrap_or(f);
        let Some(d) = machine.devices.iter().find(|d| d.name == name) else { continue };
        let bs = j.bs.iter().copied().filter(|&b| b > 0).min().unwrap_or(4096);
        match d.service_estimate(dir, bs) {
            Some((iops, latency)) => {
                device_iops += iops / sharing(f);
                latency_ns = latency_ns.min(latency.max(1) as f64);
            }
            None => device_iops += NO_DEVICE_IOPS,
        }
    }
    if matches!(j.ioengine, IoEngine::Null) || device_iops == 0.0 {
        return NO_DEVICE_IOPS;
    }
    let depth_bound = if latency_ns == f64::MAX { f64::MAX } else { j.iodepth as f64 * 1e9 / latency_ns };
    depth_bound.min(device_iops)
}

/// How long job `j` runs, in simulated seconds: its runtime if time-based, else until its size is done
/// (as seconds at one I/O per second per I/O, so the caller's rate turns it into a count), whichever
/// is first.
fn job_seconds(j: &JobConfig, machine: &Machine) -> f64 {
    let runtime_s = j.runtime_ns.map(|r| r as f64 / 1e9);
    if j.time_based {
        return runtime_s.unwrap_or(0.0) + j.ramp_time_ns as f64 / 1e9;
    }
    let bs = j.bs.iter().copied().filter(|&b| b > 0).min().unwrap_or(4096) as f64;
    let capacity: u64 = j
        .filenames
        .iter()
        .filter_map(|f| machine.devices.iter().find(|d| Some(d.name.as_str()) == f.strip_prefix("/dev/")))
        .map(|d| d.capacity_bytes())
        .sum();
    let bytes = j.size.unwrap_or(capacity) as f64 * j.loops.max(1) as f64;
    let size_ios = bytes / bs;
    let ios = if j.number_ios > 0 { size_ios.min(j.number_ios as f64) } else { size_ios };
    // Seconds at the job's rate come out in `estimated_ios`: express the size bound as a time there.
    let size_s = ios / job_rate(machine, j, &|_| 1.0);
    runtime_s.map_or(size_s, |r| r.min(size_s))
}
