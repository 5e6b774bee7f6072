//! How much simulating a workload costs, before running it: the simulated
//! I/Os it will do (each job at the rate its queue depth and devices allow,
//! for its runtime or its size). The CLI's wall-time budget and the order in
//! which `reproduce` and `sweep` run their points (longest first, so the
//! cores stay busy to the end) both use it.

use std::collections::BTreeSet;

use blksim::machine::Machine;
use blksim::workload::{IoEngine, JobConfig, RwKind};
use blksim::Workload;

/// Simulated I/Os per wall second of the release build on one core (the
/// 8-drive libaio job does 1.0-1.1 M since the CPU time by stage is billed,
/// a single-drive job more): the planning rate.
pub const IOS_PER_WALL_SEC: f64 = 1.1e6;

/// About how long simulating `workload` on `machine` takes on one core, wall seconds.
pub fn estimated_wall_seconds(machine: &Machine, workload: &Workload) -> f64 {
    estimated_ios(machine, workload) / IOS_PER_WALL_SEC
}

/// `s` seconds as `4.5 s`, `45 s`, `12 min` or `3.4 h`.
pub fn human_time(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.1} s")
    } else if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// DSA descriptors per second of one memfill client.
const DSA_IOPS: f64 = 2e6;

/// The simulated I/Os of the workload: each job at the rate its queue depth, its CPUs and its devices allow
/// (a device's rate shared by the jobs on it), for its runtime or its size, whichever ends it first, and the
/// I/Os still in flight then.
pub fn estimated_ios(machine: &Machine, workload: &Workload) -> f64 {
    let jobs = &workload.jobs;
    // The jobs on a device that run at once: at most one per CPU they may
    // run on (jobs pinned to fewer CPUs take turns, each for its runtime).
    let sharing = |dev: &str| {
        let on: Vec<&JobConfig> = jobs.iter().filter(|j| j.filenames.iter().any(|f| f == dev)).collect();
        let cpus: Option<BTreeSet<u32>> = on
            .iter()
            .map(|j| j.cpus_allowed.as_ref().map(|c| c.iter().copied()))
            .try_fold(BTreeSet::new(), |mut s, c| {
                s.extend(c?);
                Some(s)
            });
        on.len().min(cpus.map_or(usize::MAX, |c| c.len())).max(1) as f64
    };
    let job_ios: f64 = jobs.iter().map(|j| job_ios(machine, j, &flow(machine, j, &sharing))).sum();
    let dsa_ios: f64 = workload.dsa.iter().map(|c| DSA_IOPS * c.runtime_ns as f64 / 1e9).sum();
    job_ios + dsa_ios
}

/// How a job's I/Os flow once it runs.
struct Flow {
    /// I/Os completed per second.
    iops: f64,
    /// I/Os fio's task can put in flight per second at most.
    submit_iops: f64,
    /// I/Os in flight (Little's law: the rate times the time each takes, at most the queue depth).
    in_flight: f64,
}

/// The I/Os job `j` does: at its rate for its runtime (a time-based job
/// ends with its queue full, and those complete too, but no more than fio
/// could submit), or its size's worth.
fn job_ios(machine: &Machine, j: &JobConfig, f: &Flow) -> f64 {
    let running = |s: f64| (f.iops * s + f.in_flight).min(f.submit_iops * s).max(f.iops * s);
    let runtime_s = j.runtime_ns.map(|r| r as f64 / 1e9);
    if j.time_based {
        return running(runtime_s.unwrap_or(0.0) + j.ramp_time_ns as f64 / 1e9);
    }
    if let Some(log) = &j.replay {
        // A replayed log: its I/Os (each spin of its delays is one more step, reaps between are I/Os' own).
        let entries = log.entries.len() as f64;
        return runtime_s.map_or(entries, |s| entries.min(running(s)));
    }
    let capacity: u64 = j.filenames.iter().filter_map(|f| machine.device_of_file(f)).map(|d| d.capacity_bytes()).sum();
    // fio: `io_size` bytes if set, else the region (`size`, or the device past `offset`), each of `loops`.
    let region = j.size.unwrap_or(capacity.saturating_sub(j.offset));
    let bytes = j.io_size.unwrap_or(region) as f64 * j.loops.max(1) as f64;
    let size_ios = bytes / block_size(j) as f64;
    let ios = if j.number_ios > 0 { size_ios.min(j.number_ios as f64) } else { size_ios };
    // A verifying writer reads back what it wrote (after its writes, or as it goes with verify_backlog).
    let ios = ios * (1.0 + verify_share(j));
    runtime_s.map_or(ios, |s| ios.min(running(s)))
}

/// The I/Os a job's verify reads back per I/O it does: its writes' share, if it verifies them.
fn verify_share(j: &JobConfig) -> f64 {
    match j.verify {
        Some(v) if v.do_verify || v.backlog > 0 => mix(j)[1],
        _ => 0.0,
    }
}

/// The share of job `j`'s I/Os in each direction (trims count as writes).
fn mix(j: &JobConfig) -> [f64; 2] {
    match j.rw {
        RwKind::Read | RwKind::RandRead => [1.0, 0.0],
        RwKind::Write | RwKind::RandWrite | RwKind::Trim | RwKind::RandTrim => [0.0, 1.0],
        RwKind::TrimWrite | RwKind::RandTrimWrite => [0.0, 1.0],
        RwKind::ReadWrite | RwKind::RandRw => {
            let r = j.rwmixread.min(100) as f64 / 100.0;
            [r, 1.0 - r]
        }
    }
}

/// Job `j`'s smallest block size (fio's 4 KiB if none is set).
fn block_size(j: &JobConfig) -> u64 {
    j.bs.iter().copied().filter(|&b| b > 0).min().unwrap_or(4096)
}

/// Job `j`'s flow: its queue depth over an I/O's latency (the device's
/// plus the CPU's), at most its share of its devices' IOPS, what its CPUs
/// can push, its `rate`/`rate_iops` and its think times.
fn flow(machine: &Machine, j: &JobConfig, sharing: &dyn Fn(&str) -> f64) -> Flow {
    let null = matches!(j.ioengine, IoEngine::Null);
    let mix = mix(j);
    // Sequential I/Os submitted together merge in the plug, up to max_sectors_kb (128 KiB).
    let merged =
        |bs: u64| if j.rw.is_random() || batch(j) == 1 { 1 } else { batch(j).min((128 << 10) / bs.max(1)).max(1) };
    // Per direction: device time per I/O (s), latency and driver work (ns), weighted by the mix.
    let (mut device_s, mut latency_ns, mut driver_ns, mut irq_ns) = (0.0, 0.0, 0.0, 0.0);
    let mut any_device = false;
    for (d, &share) in mix.iter().enumerate() {
        if share == 0.0 {
            continue;
        }
        let bs = if j.bs[d] > 0 { j.bs[d] } else { block_size(j) };
        let m = merged(bs);
        let (mut iops, mut lat, mut drv, mut irq) = (0.0, f64::MAX, 0.0f64, 0.0f64);
        for f in j.filenames.iter().filter(|_| !null) {
            let Some(dev) = machine.device_of_file(f) else { continue };
            let Some(s) = dev.service_estimate(machine, d, bs * m, j.rw.is_random(), j.iodepth) else { continue };
            iops += s.iops.unwrap_or(f64::INFINITY) * m as f64 / sharing(f);
            lat = lat.min(s.latency_ns);
            drv = drv.max(s.driver_ns / m as f64);
            irq = irq.max(s.irq_ns / m as f64);
        }
        if lat == f64::MAX {
            continue;
        }
        any_device = true;
        device_s += share / iops;
        latency_ns += share * lat;
        driver_ns += share * drv;
        irq_ns += share * irq;
    }
    let device_iops = if device_s > 0.0 { 1.0 / device_s } else { f64::INFINITY };
    let polled = polled(j);
    let driver_ns = driver_ns + if polled { 0.0 } else { irq_ns };
    let (task_ns, offloaded_ns) = cpu_ns(machine, j, driver_ns, latency_ns, !null && any_device);
    let depth = in_flight(j);
    // A rate keeps fio from issuing ahead of it.
    let pace = pace_iops(j, &mix);
    let submit_iops = (1e9 / task_ns.max(1.0)).min(pace);
    let mut offload_iops = 1e9 / offloaded_ns.max(1.0);
    if sq_thread_shares_cpu(j) {
        // The SQ thread spins on fio's only CPU: each has it for a slice in
        // turn, a queue's worth of I/O per round.
        offload_iops = offload_iops.min(depth * 1e9 / (2 * blksim::SCHED_SLICE_NS) as f64);
    }
    let response_ns = (latency_ns + task_ns + offloaded_ns).max(1.0);
    let free = (depth * 1e9 / response_ns).min(device_iops).min(submit_iops).min(offload_iops);
    let iops = free.min(thinking_iops(j, free, response_ns));
    // A bottleneck past fio's task (the device, an SQPOLL thread) keeps the
    // whole queue waiting; a thinking job fills it before its first think.
    let queued = iops >= device_iops.min(offload_iops) * 0.999 || j.thinktime.think_us > 0;
    let in_flight = if queued { depth } else { (iops * response_ns / 1e9).min(depth) };
    Flow { iops, submit_iops, in_flight }
}

/// Does job `j`'s SQPOLL thread run on the one CPU fio's task may run on?
fn sq_thread_shares_cpu(j: &JobConfig) -> bool {
    match (&j.ioengine, &j.cpus_allowed) {
        (IoEngine::IoUring(o) | IoEngine::IoUringCmd(o), Some(cpus)) if o.sqthread_poll => {
            o.sqthread_poll_cpu.is_some_and(|sq| cpus.as_slice() == [sq])
        }
        _ => false,
    }
}

/// What job `j`'s think times leave of `free` I/Os per second, each taking
/// `response_ns`: fio's handle_thinktime waits for every I/O in flight
/// (io_u_quiesce), then thinks, after every `thinktime_blocks` I/Os (or
/// after `thinktime_iotime` of I/O).
fn thinking_iops(j: &JobConfig, free: f64, response_ns: f64) -> f64 {
    let t = &j.thinktime;
    if t.think_us == 0 {
        return f64::INFINITY;
    }
    let pause_s = t.think_us as f64 / 1e6 + response_ns / 1e9;
    if t.iotime_us > 0 && !t.blocks_set {
        let io_s = t.iotime_us as f64 / 1e6;
        return free * io_s / (io_s + pause_s);
    }
    let blocks = t.blocks.max(1) as f64;
    blocks / (pause_s + blocks / free)
}

/// Job `j`'s `rate`/`rate_iops` as I/Os per second, when every direction it does has one.
fn pace_iops(j: &JobConfig, mix: &[f64; 2]) -> f64 {
    let cap = |d: usize| match (j.rate_iops[d], j.rate[d]) {
        (0, 0) => None,
        (0, bps) => Some(bps as f64 / j.bs[d].max(1) as f64),
        (iops, _) => Some(iops as f64),
    };
    let caps: Option<Vec<f64>> = (0..2).filter(|&d| mix[d] > 0.0).map(cap).collect();
    caps.map_or(f64::INFINITY, |c| c.iter().sum::<f64>().max(1e-3))
}

/// The I/Os job `j` keeps in flight at most: its `iodepth`, one for a synchronous engine
/// (and for posixaio, whose helper thread does one request of a file at a time).
fn in_flight(j: &JobConfig) -> f64 {
    match j.ioengine {
        IoEngine::Sync | IoEngine::Psync | IoEngine::Pvsync | IoEngine::Pvsync2 { .. } | IoEngine::Posixaio => 1.0,
        _ => j.iodepth.max(1) as f64,
    }
}

/// Does job `j` poll for its completions (`hipri`)?
fn polled(j: &JobConfig) -> bool {
    match &j.ioengine {
        IoEngine::IoUring(o) | IoEngine::IoUringCmd(o) => o.hipri,
        IoEngine::Pvsync2 { hipri } => *hipri,
        _ => false,
    }
}

/// I/Os fio hands the kernel per submitting call (per commit of the SQ
/// ring for an SQPOLL thread): one for a synchronous engine, else `iodepth_batch_submit`.
fn batch(j: &JobConfig) -> u64 {
    match &j.ioengine {
        IoEngine::Sync | IoEngine::Psync | IoEngine::Pvsync | IoEngine::Pvsync2 { .. } | IoEngine::Null => 1,
        _ => j.iodepth_batch_submit.clamp(1, j.iodepth.max(1)) as u64,
    }
}

/// Host CPU per I/O of job `j` whose driver spends `driver_ns` per I/O
/// (on a device `latency_ns` away, through the block layer if `block`): on
/// fio's CPU (its own loop, the engine's system calls, the block layer, the
/// completion), and on an SQPOLL thread's CPU.
fn cpu_ns(machine: &Machine, j: &JobConfig, driver_ns: f64, latency_ns: f64, block: bool) -> (f64, f64) {
    let c = &machine.costs;
    let fio = (c.fio_prep_ns + c.fio_reap_ns + 4 * c.fio_clock_ns) as f64;
    if !block {
        return (fio, 0.0);
    }
    let depth = in_flight(j);
    let per_call = |ns: u64| ns as f64 / batch(j) as f64;
    let (fixedbufs, registerfiles) = match &j.ioengine {
        IoEngine::IoUring(o) | IoEngine::IoUringCmd(o) => (o.fixedbufs, o.registerfiles),
        _ => (false, false),
    };
    let pages = block_size(j).div_ceil(4096);
    let kernel = (if registerfiles { 0 } else { c.fget_fput_ns }
        + if fixedbufs { 0 } else { pages * c.page_pin_ns }
        + c.bio_submit_ns
        + c.dio_bio_ns
        + c.blk_submit_ns
        + c.blk_rq_init_ns
        + c.blk_mq_get_tag_ns
        + c.blk_iostat_ns
        + c.blk_free_rq_ns) as f64
        + driver_ns;
    // Polled completions end in a batch; interrupts one at a time.
    let completion = if polled(j) { c.blk_complete_batch_ns } else { c.blk_complete_ns } as f64;
    let reap_call = c.fio_reap_call_ns as f64 / depth;
    let (user, submit) = match &j.ioengine {
        IoEngine::Null => (0.0, 0.0),
        IoEngine::Sync | IoEngine::Psync | IoEngine::Pvsync | IoEngine::Pvsync2 { hipri: false } => {
            // The task sleeps until the device answers (null_blk answers at once).
            let sleep = if latency_ns > 0.0 { (c.context_switch_ns + c.wakeup_ns) as f64 } else { 0.0 };
            (c.fio_submit_call_ns as f64, sleep)
        }
        IoEngine::Pvsync2 { hipri: true } => (c.fio_submit_call_ns as f64, 0.0),
        IoEngine::Libaio => (
            per_call(c.fio_submit_call_ns) + reap_call,
            (c.aio_submit_ns + c.aio_complete_ns + c.aio_getevents_ns) as f64,
        ),
        IoEngine::Posixaio => {
            // fio queues with aio_read, walks its io_us and waits in aio_suspend (a futex); glibc's
            // helper does the pread on its own CPU, sleeping until the device answers.
            let wait = (c.syscall_ns + c.futex_ns + c.context_switch_ns + c.wakeup_ns) as f64;
            let user = (c.glibc_aio_enqueue_ns + c.glibc_aio_suspend_ns) as f64
                + depth * c.glibc_aio_error_ns as f64
                + per_call(c.fio_submit_call_ns)
                + reap_call;
            let sleep = if latency_ns > 0.0 { (c.context_switch_ns + c.wakeup_ns) as f64 } else { 0.0 };
            let helper = (c.syscall_ns + c.glibc_aio_done_ns) as f64 + kernel + completion + sleep + wait;
            return (fio + user + wait, helper);
        }
        IoEngine::IoUring(o) | IoEngine::IoUringCmd(o) => {
            let ring = (c.io_uring_sqe_ns + c.io_uring_rw_ns + c.io_uring_cqe_ns) as f64;
            if o.sqthread_poll {
                // The SQ thread submits on its own CPU; completions come back to fio's.
                let sq = ring + per_call(c.sqpoll_iter_ns) + kernel;
                return (fio + reap_call + completion, sq);
            }
            (per_call(c.fio_submit_call_ns) + reap_call, ring + per_call(c.io_uring_enter_ns))
        }
    };
    (fio + user + submit + kernel + completion, 0.0)
}
