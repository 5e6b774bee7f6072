//! io_uring's hybrid IOPOLL (`--patch hybrid-iopoll`, io_uring/rw.c of
//! Linux 6.13): each request sleeps once, before its first poll, for half
//! the ring's least measured poll time; the task gives its CPU up for it.

mod common;

use blksim::error::ErrorKind;
use blksim::settings::Settings;
use blksim::stats::RunReport;
use blksim::workload::{IoEngine, IoUringOptions, RwKind};
use common::*;

/// One io_uring job at queue depth 8 on CPU 1 of a 4-core machine with
/// poll queues: by interrupt (`hipri` off), polled, or polled with the patch.
fn run_mode(hipri: bool, hybrid: bool) -> RunReport {
    run_bs(hipri, hybrid, 4096)
}

fn run_bs(hipri: bool, hybrid: bool, bs: u64) -> RunReport {
    let m = small_machine(4);
    let mut s = Settings::default();
    s.apply_cmdline("nvme.poll_queues=4").unwrap();
    if hybrid {
        s.apply_patch("hybrid-iopoll").unwrap();
    }
    let engine = IoEngine::IoUring(IoUringOptions { hipri, ..Default::default() });
    let mut j = job("r", engine, RwKind::RandRead, bs, 8, "nvme0n1", 20);
    j.cpus_allowed = Some(vec![1]);
    let (r, inv) = run_checked(&m, &s, &[j], 1);
    assert!(inv.ios_issued > 1000);
    r
}

fn iops(r: &RunReport) -> f64 {
    r.jobs[0].dirs[0].total_ios as f64 / (r.jobs[0].runtime_ns as f64 / 1e9)
}

/// Share of CPU 1's time that was busy (user, system, interrupts).
fn busy(r: &RunReport) -> f64 {
    let t = &r.cpu_time[1];
    (t.user_ns + t.sys_ns + t.hardirq_ns + t.softirq_ns) as f64 / r.sim_time_ns as f64
}

/// The job's CPU use as fio reports it (usr + sys of its task, getrusage).
fn job_cpu(r: &RunReport) -> f64 {
    let j = &r.jobs[0];
    (j.usr_ns + j.sys_ns) as f64 / j.runtime_ns as f64
}

#[test]
fn hybrid_polling_lands_between_interrupts_and_polling_in_iops_and_below_polling_in_cpu() {
    let (irq, polled, hybrid) = (run_mode(false, false), run_mode(true, false), run_mode(true, true));
    let (i, p, h) = (iops(&irq), iops(&polled), iops(&hybrid));
    assert!(i < h && h <= p, "IOPS: interrupts {i:.0}, hybrid {h:.0}, polled {p:.0}");
    // fio's CPU % (the task's usr + sys): the poller's 100% falls by the time
    // its task is off the CPU; interrupts are far below both.
    let (ic, pc, hc) = (job_cpu(&irq), job_cpu(&polled), job_cpu(&hybrid));
    assert!(ic < hc && hc < pc - 0.03 && pc > 0.99, "job CPU: interrupts {ic:.3}, hybrid {hc:.3}, polled {pc:.3}");
    // Each sleep is a switch out and back in; a polling task never leaves its CPU.
    assert!(polled.jobs[0].ctx <= 2, "polled ctx {}", polled.jobs[0].ctx);
    let hs = hybrid.jobs[0].hybrid_iopoll.expect("a hybrid ring");
    assert!(hs.sleeps > 100 && hybrid.jobs[0].ctx >= hs.sleeps, "{hs:?}, ctx {}", hybrid.jobs[0].ctx);
    assert!(hybrid.patches_in_effect.contains(&"hybrid-iopoll"));
    assert!(polled.jobs[0].hybrid_iopoll.is_none() && irq.jobs[0].hybrid_iopoll.is_none());
}

#[test]
fn the_cpu_gains_time_only_when_the_sleep_outlasts_the_switch_around_it() {
    // 4 KiB reads: the submission path, so the least poll time, is short;
    // the sleep (half of it) ends before schedule() has switched the task
    // out (context_switch_ns): the timer's interrupt and the switches
    // fill it, and the CPU stays busy. 128 KiB reads pin 32 pages first: the
    // sleep outlasts the switch and the CPU idles for the rest.
    let switch = small_machine(4).costs.context_switch_ns;
    for (bs, gains) in [(4096u64, false), (131072, true)] {
        let (polled, hybrid) = (run_bs(true, false, bs), run_bs(true, true, bs));
        let hs = hybrid.jobs[0].hybrid_iopoll.expect("a hybrid ring");
        let sleep = hs.poll_time_ns.unwrap() / 2;
        assert_eq!(sleep > switch, gains, "bs {bs}: sleep {sleep} ns, switch {switch} ns");
        let (p, h) = (busy(&polled), busy(&hybrid));
        assert!(p > 0.999, "bs {bs}: polled CPU busy {p:.4}");
        if gains {
            assert!(h < p - 0.02, "bs {bs}: CPU busy hybrid {h:.4}, polled {p:.4}");
        } else {
            assert!(h > 0.999, "bs {bs}: CPU busy hybrid {h:.4}");
        }
    }
}

#[test]
fn a_request_sleeps_at_most_once_for_half_the_least_poll_time() {
    let r = run_mode(true, true);
    let hs = r.jobs[0].hybrid_iopoll.expect("a hybrid ring");
    let ios = r.jobs[0].dirs[0].total_ios;
    // REQ_F_IOPOLL_STATE: one sleep per request at most (the I/Os still in
    // flight at the end were issued, not counted in total_ios: at most the depth).
    assert!(hs.sleeps <= ios + 8, "{} sleeps for {ios} I/Os", hs.sleeps);
    // The poll time only falls (a running minimum), so no sleep is longer
    // than half the first measurement, and the last ones are half the final
    // value: the mean lies between.
    let least = hs.poll_time_ns.expect("it polled");
    let mean = hs.sleep_ns / hs.sleeps;
    assert!(mean >= least / 2, "mean sleep {mean} ns, least poll time {least} ns");
    // The least poll time is a submission path (io_rw_init_file to the
    // first poll), far below the device's ~60 us.
    assert!(least > 0 && least < 5_000, "hybrid_poll_time {least} ns");
}

#[test]
fn without_polling_the_patch_changes_nothing_and_says_so() {
    let r = run_mode(false, true);
    assert!(r.jobs[0].hybrid_iopoll.is_none());
    let mut s = Settings::default();
    s.apply_patch("hybrid-iopoll").unwrap();
    let idle = blksim::idle_patches(&s, &r);
    assert!(idle.len() == 1 && idle[0].contains("hybrid-iopoll") && idle[0].contains("hipri"), "{idle:?}");
}

#[test]
fn an_sq_thread_polling_a_hybrid_ring_is_not_modelled() {
    let m = small_machine(4);
    let mut s = Settings::default();
    s.apply_cmdline("nvme.poll_queues=4").unwrap();
    s.apply_patch("hybrid-iopoll").unwrap();
    let engine = IoEngine::IoUring(IoUringOptions { hipri: true, sqthread_poll: true, ..Default::default() });
    let j = job("sq", engine, RwKind::RandRead, 4096, 8, "nvme0n1", 5);
    let e = blksim::run(&m, &s, &[j], 1).expect_err("refused");
    assert_eq!(e.kind, ErrorKind::NotModelled);
    assert!(e.message.contains("sqthread_poll"), "{}", e.message);
}
