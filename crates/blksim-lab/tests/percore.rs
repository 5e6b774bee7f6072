//! Issue 10, point 7: what one CPU does with t/io_uring, from its command
//! line through the model: polled IOPS per core rise with the batch size;
//! registered files and fixed buffers each take system time off an I/O;
//! two devices on one polling CPU keep it fully busy below the sum of what
//! the devices could do.

use blksim::machine::builtin;
use blksim::settings::Settings;
use blksim::stats::RunReport;
use blksim_lab::frontend::t_io_uring;

/// Run t/io_uring's command line `args` on `machine` with `cmdline`.
fn run(machine: &str, cmdline: &str, args: &str) -> RunReport {
    let m = builtin(machine).unwrap();
    let mut s = Settings::default();
    s.apply_cmdline(cmdline).unwrap();
    let a: Vec<String> = args.split_whitespace().map(str::to_string).collect();
    let w = t_io_uring(&a).unwrap();
    let (r, inv) = blksim::run_workload(&m, &s, &w, 1, &Default::default()).unwrap();
    assert_eq!(inv.ios_issued, inv.ios_reaped, "every I/O reaped: {args}");
    assert_eq!(inv.requests_live, 0);
    r
}

fn iops(r: &RunReport) -> f64 {
    r.jobs.iter().map(|j| j.dirs[0].total_ios as f64 / (j.runtime_ns as f64 / 1e9)).sum()
}

const POLLED: &str = "nvme.poll_queues=4 iommu=pt";

#[test]
fn polled_iops_per_core_rise_with_the_batch_size() {
    let mut last = 0.0;
    let mut seen = Vec::new();
    for b in [1, 2, 4, 8, 16] {
        let r = run(
            "x86-gen5-5m",
            POLLED,
            &format!("-b512 -d128 -c{b} -s{b} -p1 -F1 -B1 -r 5ms --taskset 0 -- /dev/nvme0n1 /dev/nvme1n1"),
        );
        let v = iops(&r);
        seen.push((b, (v / 1e3) as u64));
        assert!(v > last, "IOPS did not rise at batch {b}: {seen:?} (kIOPS)");
        last = v;
    }
    // Unplugged (one or two SQEs per call: a tag, a queue_rq and a doorbell
    // each) against plugged batches of 16 (cached requests, queue_rqs).
    assert!(seen[4].1 as f64 > 1.8 * seen[0].1 as f64, "{seen:?}");
}

/// The submitting task's system time per I/O.
fn sys_per_io(args: &str) -> f64 {
    let r = run("x86-gen5-5m", "iommu=pt", args);
    let j = &r.jobs[0];
    j.sys_ns as f64 / j.dirs[0].total_ios as f64
}

#[test]
fn registered_files_and_fixed_buffers_each_lower_system_time_per_io() {
    // Interrupt-driven at a depth one device serves without the CPU saturating.
    let base = "-b4096 -d16 -c4 -s4 -p0 -r 5ms --taskset 0 -- /dev/nvme0n1";
    let both = sys_per_io(&format!("-F1 -B1 {base}"));
    let no_files = sys_per_io(&format!("-F0 -B1 {base}"));
    let no_bufs = sys_per_io(&format!("-F1 -B0 {base}"));
    // fget/fput per I/O without registered files; pinning the page (and dirtying it) without fixed buffers.
    assert!(no_files > both + 10.0, "registered files: {both:.0} ns vs {no_files:.0} ns without");
    assert!(no_bufs > both + 50.0, "fixed buffers: {both:.0} ns vs {no_bufs:.0} ns without");
}

#[test]
fn two_devices_on_one_polling_cpu_keep_it_busy_below_the_sum_of_their_limits() {
    let r = run(
        "x86-gen5-5m",
        POLLED,
        "-b512 -d128 -c32 -s32 -p1 -F1 -B1 -r 10ms --taskset 0 -- /dev/nvme0n1 /dev/nvme1n1",
    );
    let t = &r.cpu_time[0];
    let busy = r.sim_time_ns - t.idle_ns - t.iowait_ns;
    assert!(busy as f64 >= 0.995 * r.sim_time_ns as f64, "CPU 0 busy {busy} of {} ns", r.sim_time_ns);
    let v = iops(&r);
    // More than one drive could do (5 M each), less than both together: the CPU is the limit.
    assert!(v > 5.1e6 && v < 10e6, "{v} IOPS");
    // The same submitter on one device is bound by the drive (its controller's 5 M IOPS).
    let one =
        iops(&run("x86-gen5-5m", POLLED, "-b512 -d128 -c32 -s32 -p1 -F1 -B1 -r 10ms --taskset 0 -- /dev/nvme0n1"));
    assert!((one - 5.0e6).abs() < 0.05e6, "{one} IOPS from one drive");
}

#[test]
fn cpu_time_by_stage_adds_up_to_the_cpu_time_polled_and_by_interrupt() {
    for (cmdline, args) in [
        (POLLED, "-b512 -d128 -c32 -s32 -p1 -r 2ms --taskset 0 -- /dev/nvme0n1 /dev/nvme1n1"),
        ("iommu=pt", "-b512 -d128 -c32 -s32 -p0 -r 2ms --taskset 0 -- /dev/nvme0n1"),
        ("", "-b4096 -d8 -c2 -s2 -p0 -F0 -B0 -S1 -n2 -r 2ms -- /dev/nvme0n1"),
    ] {
        let r = run("x86-gen5-5m", cmdline, args);
        for (cpu, t) in r.cpu_time.iter().enumerate() {
            let busy = t.user_ns + t.sys_ns + t.hardirq_ns + t.softirq_ns;
            assert_eq!(r.cpu_stage_ns[cpu].iter().sum::<u64>(), busy, "CPU {cpu}: {args}");
            // The program's loop is exactly the user time.
            assert_eq!(r.cpu_stage_ns[cpu][blksim::stats::CpuStage::UserLoop as usize], t.user_ns, "CPU {cpu}: {args}");
        }
        let stages = blksim_fio::output::stage_per_io(&r);
        let ios: u64 = r.jobs.iter().map(|j| j.dirs[0].total_ios).sum();
        let busy: u64 = r.cpu_time.iter().map(|t| t.user_ns + t.sys_ns + t.hardirq_ns + t.softirq_ns).sum();
        let total: f64 = stages.iter().sum();
        assert!((total - busy as f64 / ios as f64).abs() < 1e-6, "{args}: {total} vs {}", busy as f64 / ios as f64);
    }
}

/// All CPUs' busy time per I/O.
fn cpu_ns_per_io(r: &RunReport) -> f64 {
    let busy: u64 = r.cpu_time.iter().map(|t| t.user_ns + t.sys_ns + t.hardirq_ns + t.softirq_ns).sum();
    busy as f64 / r.jobs.iter().map(|j| j.dirs[0].total_ios).sum::<u64>() as f64
}

#[test]
fn nvme_passthrough_costs_fewer_ns_per_io_than_the_block_path() {
    // Two drives keep one polling CPU busy: its time per I/O is the path's cost.
    let opts = "-b512 -d128 -c32 -s32 -p1 -F1 -B1 -r 5ms --taskset 0 --";
    let block = run("x86-gen5-5m", POLLED, &format!("-u0 {opts} /dev/nvme0n1 /dev/nvme1n1"));
    let pt = run("x86-gen5-5m", POLLED, &format!("-u1 -O0 {opts} /dev/ng0n1 /dev/ng1n1"));
    let (b, p) = (cpu_ns_per_io(&block), cpu_ns_per_io(&pt));
    assert!(p + 5.0 < b, "passthrough {p:.1} ns per I/O, block path {b:.1}");
    assert!(iops(&pt) > iops(&block), "{} vs {}", iops(&pt), iops(&block));
    // Without poll queues a uring_cmd is not refused (6.11's EOPNOTSUPP is the block path's):
    // it completes by interrupt and task_work, which the polling task runs.
    let r = run("x86-gen5-5m", "blksim.polled_unsupported=eopnotsupp", "-u1 -O0 -r 1ms --taskset 0 -- /dev/ng0n1");
    assert!(r.jobs[0].error.is_none() && r.jobs[0].dirs[0].total_ios > 100);
}

#[test]
fn two_submitters_on_smt_siblings_share_one_core() {
    // x86-gen5-5m: CPU 32 is CPU 0's sibling; two threads, one drive each (t/io_uring's -n2).
    let opts = "-b512 -d128 -c32 -s32 -p1 -F1 -B1 -r 5ms";
    let one = iops(&run("x86-gen5-5m", POLLED, &format!("{opts} --taskset 0 -- /dev/nvme0n1")));
    let siblings = run("x86-gen5-5m", POLLED, &format!("{opts} -n2 --taskset 0,32 -- /dev/nvme0n1 /dev/nvme1n1"));
    let cores = run("x86-gen5-5m", POLLED, &format!("{opts} -n2 --taskset 0,1 -- /dev/nvme0n1 /dev/nvme1n1"));
    let (s, c) = (iops(&siblings), iops(&cores));
    // Two cores do what two drives can (each thread alone is drive-bound);
    // two threads of one core share its throughput (smt_throughput 1.2):
    // more than one thread, less than two cores.
    assert!(c > 1.9 * one, "two cores {c}, one {one}");
    assert!(s < 0.97 * c && s > 1.2 * one, "siblings {s}, two cores {c}, one thread {one}");
    // Both siblings are busy all the time (each spinning or working).
    for cpu in [0, 32] {
        let t = &siblings.cpu_time[cpu];
        assert!(t.idle_ns + t.iowait_ns < siblings.sim_time_ns / 100, "CPU {cpu}: {t:?}");
    }
}

#[test]
fn nosmt_takes_each_cores_second_thread_offline() {
    let m = builtin("x86-gen5-5m").unwrap();
    let mut s = Settings::default();
    s.apply_cmdline("nosmt nvme.poll_queues=4 iommu=pt").unwrap();
    let args = |a: &str| a.split_whitespace().map(str::to_string).collect::<Vec<String>>();
    // CPU 32, CPU 0's sibling, is offline: a thread pinned there cannot run.
    let w = t_io_uring(&args("-r 1ms --taskset 32 -- /dev/nvme0n1")).unwrap();
    let e = blksim::run_workload(&m, &s, &w, 1, &Default::default()).unwrap_err();
    assert_eq!(e.kind, blksim::ErrorKind::BadInput);
    assert!(e.message.contains("offline (nosmt)"), "{}", e.message);
    // Two threads allowed every CPU land on two cores' first threads: no sibling shares a core.
    let w = t_io_uring(&args("-b512 -d128 -c32 -s32 -r 5ms -n2 -- /dev/nvme0n1 /dev/nvme1n1")).unwrap();
    let (r, _) = blksim::run_workload(&m, &s, &w, 1, &Default::default()).unwrap();
    assert_eq!((r.jobs[0].cpu, r.jobs[1].cpu), (0, 1));
    assert!(iops(&r) > 9.0e6, "{}", iops(&r));
    // The NVMe driver still made a queue per possible CPU; the offline threads' IRQs are shut down.
    assert!(r.hotplug.irqs_shut_down > 0, "{:?}", r.hotplug);
    for cpu in 32..64 {
        assert_eq!(r.cpu_time[cpu].idle_ns, r.sim_time_ns, "CPU {cpu} is offline");
    }
}

/// `run` with `--patch` names too.
fn run_patched(cmdline: &str, patches: &[&str], args: &str) -> RunReport {
    let m = builtin("x86-gen5-5m").unwrap();
    let mut s = Settings::default();
    s.apply_cmdline(cmdline).unwrap();
    for p in patches {
        s.apply_patch(p).unwrap();
    }
    let a: Vec<String> = args.split_whitespace().map(str::to_string).collect();
    blksim::run_workload(&m, &s, &t_io_uring(&a).unwrap(), 1, &Default::default()).unwrap().0
}

#[test]
fn dma_mapping_costs_least_untranslated_then_lazy_then_strict_and_premapped_buffers_skip_it() {
    let opts = "-b512 -d128 -c32 -s32 -p1 -r 5ms --taskset 0 -- /dev/nvme0n1 /dev/nvme1n1";
    let dma = |r: &RunReport| {
        let t: u64 = r.cpu_stage_ns.iter().map(|c| c[blksim::stats::CpuStage::DmaMap as usize]).sum();
        t as f64 / r.jobs[0].dirs[0].total_ios as f64
    };
    let pt = run_patched("nvme.poll_queues=4 iommu=pt", &[], opts);
    let lazy = run_patched("nvme.poll_queues=4", &[], opts);
    let strict = run_patched("nvme.poll_queues=4 iommu.strict=1", &[], opts);
    let (p, l, s) = (dma(&pt), dma(&lazy), dma(&strict));
    assert!(p < l && l < s, "DMA ns per I/O: passthrough {p:.1}, lazy {l:.1}, strict {s:.1}");
    assert!(cpu_ns_per_io(&pt) < cpu_ns_per_io(&lazy) && cpu_ns_per_io(&lazy) < cpu_ns_per_io(&strict));
    // Pre-mapped fixed buffers: less than even dma-direct; without fixed buffers the patch changes nothing.
    let premap = run_patched("nvme.poll_queues=4", &["dma-premap"], opts);
    assert!(dma(&premap) < p, "{} vs {p}", dma(&premap));
    let unfixed = format!("-B0 {opts}");
    let a = run_patched("nvme.poll_queues=4", &["dma-premap"], &unfixed);
    let b = run_patched("nvme.poll_queues=4", &[], &unfixed);
    assert_eq!(a.jobs[0].dirs[0].total_ios, b.jobs[0].dirs[0].total_ios);
    assert_eq!(a.cpu_stage_ns, b.cpu_stage_ns);
    // Premapped also with requests waiting for tags (16 under a depth of 128), and strict mode
    // has nothing to invalidate: the DMA stage is the address lookup alone.
    let premap_ns = builtin("x86-gen5-5m").unwrap().costs.dma_premap_ns as f64;
    let tag_wait = "-b512 -d128 -c32 -s32 -p1 -r 2ms --taskset 0 -- /dev/nvme0n1";
    for cmdline in
        ["nvme.poll_queues=4 nvme.io_queue_depth=16", "nvme.poll_queues=4 nvme.io_queue_depth=16 iommu.strict=1"]
    {
        let r = run_patched(cmdline, &["dma-premap"], tag_wait);
        let d = dma(&r);
        assert!((d - premap_ns).abs() < premap_ns * 0.05, "{cmdline}: {d:.2} ns per I/O, premapped {premap_ns}");
    }
}

/// t/io_uring `args` on spr-gen5 (nvme0-3 behind dmar0, nvme4-7 behind dmar1) with `cmdline`.
fn run_spr(cmdline: &str, args: &str) -> RunReport {
    run("spr-gen5", cmdline, args)
}

#[test]
fn strict_invalidations_serialise_per_iommu_unit() {
    let svc = builtin("spr-gen5").unwrap().costs.iotlb_sync_ns as f64;
    // Four polling CPUs, a drive each.
    let args = |devs: &str| format!("-b512 -d128 -c32 -s32 -p1 -F1 -B1 -n4 -r 5ms --taskset 0-3 -- {devs}");
    let one_unit = args("/dev/nvme0n1 /dev/nvme1n1 /dev/nvme2n1 /dev/nvme3n1");
    let strict = run_spr("nvme.poll_queues=4 iommu.strict=1", &one_unit);
    let lazy = run_spr("nvme.poll_queues=4", &one_unit);
    // One invalidation at a time in dmar0: at most one I/O per service time.
    let cap = 1e9 / svc;
    let (s, l) = (iops(&strict), iops(&lazy));
    assert!(s <= cap * 1.01 && s > cap * 0.9, "strict behind one unit: {s:.0} IOPS, the queue's limit {cap:.0}");
    assert!(l > 1.5 * s, "lazy {l:.0} vs strict {s:.0}");
    let lock = strict.locks.iter().find(|l| l.name == "dmar0 qi->q_lock").expect("dmar0's invalidation queue lock");
    // Four CPUs queue for one unit: they spin longer than the unit works.
    assert!(lock.contended > 0 && lock.wait_ns > lock.hold_ns, "{lock:?}");
    assert_eq!(lock.hold_ns, lock.acquisitions * svc as u64);
    assert!(
        lazy.locks.iter().all(|l| !l.name.contains("qi->q_lock")),
        "lazy mode invalidates in batches (not modelled per I/O)"
    );
    // The same four drives split over dmar0 and dmar1: two queues, more I/O (a CPU spinning for
    // its unit's lock does nothing else, so each unit is less busy with two CPUs than with four).
    let two_units =
        run_spr("nvme.poll_queues=4 iommu.strict=1", &args("/dev/nvme0n1 /dev/nvme1n1 /dev/nvme4n1 /dev/nvme5n1"));
    let t = iops(&two_units);
    assert!(t > 1.3 * s && t <= 2.0 * cap * 1.01, "two units {t:.0} vs one {s:.0}");
}
