//! Global Software Interrupt Moderation (`--patch gsim`, the v4 series of
//! 15 Jan 2026): per-CPU delays driven by the measured interrupt rates and
//! hardirq share; a moderated IRQ is disabled until its CPU's hrtimer fires,
//! an interrupt meanwhile masks it and is resent by the timer.

mod common;

use blksim::error::ErrorKind;
use blksim::settings::Settings;
use blksim::stats::{GsimStats, RunReport};
use blksim::workload::{IoEngine, JobConfig, RwKind};
use common::*;

/// Four libaio jobs at iodepth 32 on four drives of a 4-core machine, one per
/// CPU, for `ms` ms, under `cmdline` and the `--set` writes given.
fn run_with(cmdline: &str, gsim: bool, writes: &[&str], ms: u64) -> RunReport {
    let m = small_machine(4);
    let mut s = Settings::default();
    s.apply_cmdline(cmdline).unwrap();
    if gsim {
        s.apply_patch("gsim").unwrap();
    }
    let devices: Vec<String> = (0..8).map(|i| format!("nvme{i}n1")).collect();
    for w in writes {
        s.apply_write(w, &devices).unwrap();
    }
    let jobs: Vec<JobConfig> = (0..4)
        .map(|i| {
            let mut j = job(&format!("j{i}"), IoEngine::Libaio, RwKind::RandRead, 4096, 32, &format!("nvme{i}n1"), ms);
            j.cpus_allowed = Some(vec![i]);
            j
        })
        .collect();
    run_checked(&m, &s, &jobs, 1).0
}

fn ios(r: &RunReport) -> u64 {
    r.jobs.iter().map(|j| j.dirs[0].total_ios).sum()
}

fn handler_runs(r: &RunReport) -> u64 {
    r.msi_per_cpu.iter().map(|c| c.device_irqs).sum()
}

fn p50(r: &RunReport) -> u64 {
    r.jobs[0].dirs[0].clat.percentiles(&[50.0])[0].1
}

fn stats(r: &RunReport) -> &GsimStats {
    r.gsim.as_ref().expect("a GSIM run")
}

#[test]
fn over_the_target_rate_cpus_moderate_and_each_handler_run_ends_more_io() {
    // A low target (100k interrupts/s) that four CPUs at several 100k/s exceed.
    // The delay grows by an eighth per 5 ms epoch from 500 ns: 100 ms to reach a few us.
    let (plain, gsim) = (
        run_with("", false, &[], 100),
        run_with("", true, &["/proc/irq/soft_moderation/target_intr_rate=100000"], 100),
    );
    let g = stats(&gsim);
    assert!(g.moderated > 100 && g.timer_fires > 100, "{g:?}");
    assert!(g.global_irq_high > 0 && g.local_irq_high > 0, "{g:?}");
    // Every moderated IRQ came back: as many timers fired as were set (less one per CPU still running).
    assert!(g.timers_set - g.timer_fires <= 4, "{g:?}");
    // A held interrupt waits at most the delay's cap plus the timer's slack (and its resend).
    assert!(g.held > 0 && g.max_held_ns <= 100_000 + 2_000 + 1_000, "{g:?}");
    assert!(g.delay_ns.iter().all(|&(_, d)| d > 0), "{g:?}");
    // Handler runs per I/O fall: each run finds the CQEs of its moderated window.
    let per_io = |r: &RunReport| handler_runs(r) as f64 / ios(r) as f64;
    assert!(
        per_io(&gsim) < per_io(&plain) * 0.8,
        "runs per I/O: plain {:.3}, gsim {:.3}",
        per_io(&plain),
        per_io(&gsim)
    );
    assert!(gsim.patches_in_effect.contains(&"gsim"));
    assert!(plain.gsim.is_none());
}

#[test]
fn under_its_targets_gsim_changes_nothing() {
    let (plain, gsim) = (
        run_with("", false, &[], 10),
        run_with("", true, &["/proc/irq/soft_moderation/target_intr_rate=50000000"], 10),
    );
    let g = stats(&gsim);
    assert_eq!((g.moderated, g.held, g.timers_set), (0, 0, 0), "{g:?}");
    assert!(g.epochs > 0);
    // The hook's counting after each handler is all it costs.
    let (a, b) = (ios(&plain) as f64, ios(&gsim) as f64);
    assert!((b / a - 1.0).abs() < 0.01, "I/Os: plain {a}, gsim {b}");
    // The median within one of fio's latency buckets (1/64 of its power of two: ~1.5% here).
    let bucket = |r: &RunReport| blksim::stats::histogram::plat_val_to_idx(p50(r)) as i64;
    assert!((bucket(&gsim) - bucket(&plain)).abs() <= 1, "p50: plain {}, gsim {}", p50(&plain), p50(&gsim));
    assert!(!gsim.patches_in_effect.contains(&"gsim"));
}

#[test]
fn fixed_mode_holds_interrupts_up_to_delay_us_and_adds_latency() {
    // target_intr_rate=0 and hardirq_percent=0: the fixed delay (the series' "FIXED MODERATION").
    let writes = [
        "/proc/irq/soft_moderation/target_intr_rate=0",
        "/proc/irq/soft_moderation/hardirq_percent=0",
        "/proc/irq/soft_moderation/delay_us=50",
    ];
    let (plain, gsim) = (run_with("", false, &[], 10), run_with("", true, &writes, 10));
    let g = stats(&gsim);
    assert!(g.delay_ns.iter().all(|&(_, d)| d == 50_000), "{g:?}");
    // A listed IRQ stays listed for the sleep (50 us) and the slack (2 us), less the
    // time since the timer was armed.
    assert!(g.mean_listed_ns > 20_000 && g.max_held_ns <= 52_000 + 1_000, "{g:?}");
    assert!(p50(&gsim) > p50(&plain) + 10_000, "p50 plain {} gsim {}", p50(&plain), p50(&gsim));
}

#[test]
fn posted_msis_are_moderated_through_the_notification_handler() {
    let gsim = run_with("intremap=posted_msi", true, &["/proc/irq/soft_moderation/target_intr_rate=100000"], 20);
    let g = stats(&gsim);
    assert!(gsim.posted_msi && g.moderated > 100 && g.held > 0, "{g:?}");
}

#[test]
fn moderation_is_per_irq_and_the_knobs_are_checked() {
    // Every device IRQ turned off: nothing is moderated.
    let m = small_machine(4);
    let mut s = Settings::default();
    s.apply_patch("gsim").unwrap();
    let devices = vec!["nvme0n1".to_string()];
    s.apply_write("/proc/irq/soft_moderation/target_intr_rate=100000", &devices).unwrap();
    let mut j = job("j", IoEngine::Libaio, RwKind::RandRead, 4096, 32, "nvme0n1", 5);
    j.cpus_allowed = Some(vec![0]);
    let (r, _) = run_checked(&m, &s, std::slice::from_ref(&j), 1);
    let listed: Vec<u32> = r.interrupts.iter().filter_map(|row| row.label.parse().ok()).collect();
    assert!(!listed.is_empty());
    for n in &listed {
        s.apply_write(&format!("/proc/irq/{n}/soft_moderation=0"), &devices).unwrap();
    }
    let (r, _) = run_checked(&m, &s, &[j.clone()], 1);
    assert_eq!(stats(&r).moderated, 0);
    // An IRQ the machine does not have.
    s.apply_write("/proc/irq/9999/soft_moderation=0", &devices).unwrap();
    let e = blksim::run(&m, &s, &[j], 1).unwrap_err();
    assert_eq!(e.kind, ErrorKind::BadInput);
    assert!(e.message.contains("/proc/irq/9999/soft_moderation"), "{}", e.message);
    // The knobs exist only with the patch, and in the series' ranges.
    let mut plain = Settings::default();
    let e = plain.apply_write("/proc/irq/soft_moderation/delay_us=100", &devices).unwrap_err();
    assert!(e.message.contains("--patch gsim"), "{}", e.message);
    let e = s.apply_write("/proc/irq/soft_moderation/delay_us=501", &devices).unwrap_err();
    assert!(e.message.contains("0..500"), "{}", e.message);
    let e = s.apply_write("/proc/irq/soft_moderation/timer_rounds=2", &devices).unwrap_err();
    assert_eq!(e.kind, ErrorKind::NotModelled, "{}", e.message);
    // v1-v3's name for the target.
    s.apply_write("/proc/irq/soft_moderation/target_irq_rate=2000000", &devices).unwrap();
    assert_eq!(s.gsim.as_ref().unwrap().target_intr_rate, 2_000_000);
    let e = s.apply_write("/proc/irq/soft_moderation/bogus=1", &devices).unwrap_err();
    assert!(e.message.contains("unknown knob"), "{}", e.message);
}

#[test]
fn knobs_written_during_the_run_take_effect_at_each_cpus_next_epoch() {
    use blksim::settings::parse_timed_write;
    use blksim::{run_with, RunOptions};
    // Fixed mode from the start, then delay_us=0 (GSIM off) at 10 ms: nothing is listed after it.
    let m = small_machine(4);
    let mut s = Settings::default();
    s.apply_patch("gsim").unwrap();
    let devices = vec!["nvme0n1".to_string()];
    for w in ["/proc/irq/soft_moderation/target_intr_rate=0", "/proc/irq/soft_moderation/hardirq_percent=0"] {
        s.apply_write(w, &devices).unwrap();
    }
    let mut j = job("j", IoEngine::Libaio, RwKind::RandRead, 4096, 32, "nvme0n1", 20);
    j.cpus_allowed = Some(vec![0]);
    let off = parse_timed_write("10ms:/proc/irq/soft_moderation/delay_us=0").unwrap();
    let opts = RunOptions { timed: vec![off], ..Default::default() };
    let (r, inv) = run_with(&m, &s, std::slice::from_ref(&j), 1, &opts).unwrap();
    check_invariants(&r, &inv);
    let with_off = stats(&r).moderated;
    let (whole, _) = run_checked(&m, &s, &[j.clone()], 1);
    assert!(with_off > 0 && with_off < stats(&whole).moderated * 3 / 4, "{with_off} vs {}", stats(&whole).moderated);
    // The knobs exist only with the patch; a bad value or IRQ is refused.
    let plain = Settings::default();
    let e = run_with(&m, &plain, &[j.clone()], 1, &opts).unwrap_err();
    assert!(e.message.contains("--patch gsim"), "{}", e.message);
    assert!(parse_timed_write("1ms:/proc/irq/soft_moderation/delay_us=600").is_err());
    let bogus = RunOptions {
        timed: vec![parse_timed_write("1ms:/proc/irq/99999/soft_moderation=0").unwrap()],
        ..Default::default()
    };
    let e = run_with(&m, &s, &[j], 1, &bogus).unwrap_err();
    assert!(e.message.contains("99999"), "{}", e.message);
}
