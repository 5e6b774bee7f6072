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
