//! Behaviour tests of whole runs: each checks a mechanism and, through
//! `run_checked`, every invariant.

mod common;

use blksim::settings::Settings;
use blksim::workload::{IoEngine, JobConfig, RwKind};
use common::*;

fn iops(r: &blksim::stats::RunReport, job: usize) -> f64 {
    let j = &r.jobs[job];
    j.dirs[0].total_ios as f64 / (j.runtime_ns as f64 / 1e9)
}

#[test]
fn libaio_randread_completes_every_io() {
    let m = small_machine(4);
    let j = job("r", IoEngine::Libaio, RwKind::RandRead, 4096, 32, "nvme0n1", 20);
    let (r, inv) = run_checked(&m, &Settings::default(), &[j], 1);
    assert!(inv.ios_issued > 1000);
    assert!(iops(&r, 0) > 10_000.0);
}

#[test]
fn psync_qd1_latency_is_device_time_plus_path_costs() {
    let m = small_machine_with(2, "[device_model.pm1743]\nlatency_sigma = 0.0\n");
    let mut j = job("r", IoEngine::Psync, RwKind::RandRead, 4096, 1, "nvme0n1", 5);
    j.cpus_allowed = Some(vec![0]);
    let (r, _) = run_checked(&m, &Settings::default(), &[j], 1);
    let c = &m.costs;
    let blksim::machine::DeviceKind::Nvme(p) = &m.devices[0].kind else { panic!() };
    let device = p.fetch_ns
        + p.command_ns[0]
        + 4096 * 1000 / p.drive_mb_per_s[0]
        + p.latency_ns[0]
        + 4096 * 1000 / p.link_mb_per_s;
    let submit = c.syscall_ns
        + c.fget_fput_ns
        + c.page_pin_ns
        + c.bio_submit_ns
        + c.nvme_queue_rq_ns
        + c.dma_map_ns
        + c.doorbell_ns;
    let unit = &m.iommus[m.root_ports[0].iommu];
    let msi =
        m.root_ports[0].msi_service_ns + unit.remap_service_ns + m.interrupt_delivery.service_ns + c.msi_latency_ns;
    let irq = c.irq_entry_ns
        + c.irq_flow_ns
        + c.apic_eoi_ns
        + c.nvme_cqe_ns
        + c.blk_complete_batch_ns
        + c.blk_end_batch_ns
        + c.irq_exit_ns
        + c.cq_doorbell_ns
        + c.wakeup_ns;
    let back = c.context_switch_ns + c.user_wake_ns + c.fio_clock_ns + c.fio_reap_call_ns;
    let expected = submit + device + msi + irq + back;
    let clat = &r.jobs[0].dirs[0].clat;
    assert_eq!(clat.min_ns, expected, "clat = submit {submit} + device {device} + msi {msi} + irq {irq} + wake {back}");
    // Only the first MSI misses the remapping unit's interrupt-entry cache.
    assert_eq!(clat.max_ns, expected + unit.iec_miss_ns);
}

#[test]
fn iops_rise_with_iodepth_and_flatten_at_the_device_limit() {
    let m = small_machine_with(2, "[device_model.pm1743]\niops_max_read = 150000\n");
    let mut last = 0.0;
    let mut seen = Vec::new();
    for qd in [1, 2, 4, 8, 16, 64] {
        let mut j = job("r", IoEngine::Libaio, RwKind::RandRead, 4096, qd, "nvme0n1", 20);
        j.cpus_allowed = Some(vec![0]);
        let (r, _) = run_checked(&m, &Settings::default(), &[j], 1);
        let v = iops(&r, 0);
        seen.push((qd, v as u64));
        assert!(v >= last * 0.98, "IOPS fell from {last} to {v} at QD{qd}: {seen:?}");
        last = v;
    }
    assert!(seen[0].1 < 20_000, "QD1 is latency bound: {seen:?}");
    let top = seen.last().unwrap().1 as f64;
    assert!((top - 150_000.0).abs() / 150_000.0 < 0.03, "QD64 sits at the device limit: {seen:?}");
    let qd16 = seen[4].1 as f64;
    assert!((top - qd16).abs() / top < 0.05, "flat past the knee: {seen:?}");
}

#[test]
fn polled_io_raises_no_interrupt_and_keeps_the_cpu_busy() {
    let m = small_machine(4);
    let mut s = Settings::default();
    s.apply_cmdline("nvme.poll_queues=1").unwrap();
    let mut j = job("p", uring(true), RwKind::RandRead, 4096, 32, "nvme0n1", 10);
    j.cpus_allowed = Some(vec![1]);
    j.iodepth_batch_submit = 8;
    j.iodepth_batch_complete_min = 1;
    j.iodepth_batch_complete_max = 8;
    let (r, inv) = run_checked(&m, &s, &[j], 1);
    assert!(inv.ios_issued > 1000);
    assert_eq!(inv.msi.sent, 0, "no MSI from a poll queue");
    let device_irqs: u64 = r.interrupts.iter().filter(|row| row.label != "CAL").map(|row| row.total()).sum();
    assert_eq!(device_irqs, 0);
    let t = &r.cpu_time[1];
    let busy = r.sim_time_ns - t.idle_ns;
    assert!(busy as f64 / r.sim_time_ns as f64 > 0.99, "polling CPU busy {busy} of {}", r.sim_time_ns);
    assert_eq!(t.hardirq_ns, 0);
}

/// One queue for all CPUs: its IRQ lands on CPU 0, the job runs on CPU 2.
fn remote_completion(rq_affinity: &str, engine: IoEngine, qd: u32) -> (blksim::stats::RunReport, u64) {
    let m = small_machine_with(4, "[device_model.pm1743]\nmax_queues = 1\n");
    let mut s = Settings::default();
    s.apply_write(&format!("/sys/block/nvme0n1/queue/rq_affinity={rq_affinity}"), &["nvme0n1".into()]).unwrap();
    let mut j = job("r", engine, RwKind::RandRead, 4096, qd, "nvme0n1", 10);
    j.cpus_allowed = Some(vec![2]);
    let (r, inv) = run_checked(&m, &s, &[j], 1);
    (r, inv.ios_issued)
}

fn cal(r: &blksim::stats::RunReport, cpu: usize) -> u64 {
    r.interrupts.iter().find(|row| row.label == "CAL").unwrap().count(cpu as u32)
}

#[test]
fn rq_affinity_2_sends_an_ipi_per_io_completed_off_its_cpu() {
    let (r, ios) = remote_completion("2", IoEngine::Psync, 1);
    assert!(ios > 100);
    // QD1: every completion finds the submitter's done list empty and sends one IPI.
    assert_eq!(cal(&r, 2), ios);
    assert_eq!(r.ipis_per_cpu[2], ios, "only completion IPIs (the task's CPU is never idle-woken remotely)");
    assert!(r.cpu_time[2].softirq_ns > 0, "completions run in BLOCK_SOFTIRQ on the submitter");
    assert_eq!(r.cpu_time[0].softirq_ns, 0);
}

#[test]
fn rq_affinity_0_and_1_in_one_llc_send_none() {
    for v in ["0", "1"] {
        let (r, ios) = remote_completion(v, IoEngine::Libaio, 16);
        assert!(ios > 100);
        assert_eq!(cal(&r, 2), 0, "rq_affinity={v}");
    }
}

#[test]
fn rq_affinity_2_batches_ipis_at_depth() {
    let (r, ios) = remote_completion("2", IoEngine::Libaio, 32);
    let ipis = cal(&r, 2);
    assert!(ipis > 0 && ipis <= ios, "{ipis} IPIs for {ios} I/Os");
}

#[test]
fn same_seed_same_result_other_seed_differs() {
    let m = small_machine(4);
    let j = job("r", IoEngine::Libaio, RwKind::RandRead, 4096, 16, "nvme0n1", 10);
    let a = format!("{:?}", run_checked(&m, &Settings::default(), std::slice::from_ref(&j), 7).0);
    let b = format!("{:?}", run_checked(&m, &Settings::default(), std::slice::from_ref(&j), 7).0);
    let c = format!("{:?}", run_checked(&m, &Settings::default(), &[j], 8).0);
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn jobs_on_many_devices_and_cpus_keep_every_invariant() {
    let m = server();
    let mut jobs = Vec::new();
    for d in 0..4 {
        for k in 0..4 {
            let mut j = job("multi", IoEngine::Libaio, RwKind::RandRead, 4096, 16, &format!("nvme{d}n1"), 5);
            j.cpus_allowed = Some(vec![d * 8 + k]);
            jobs.push(j);
        }
    }
    let (r, _) = run_checked(&m, &Settings::default(), &jobs, 3);
    assert_eq!(r.disks.len(), 4);
}

#[test]
fn a_job_on_an_unknown_device_is_an_error_naming_it() {
    let m = small_machine(2);
    let j = job("r", IoEngine::Libaio, RwKind::RandRead, 4096, 1, "sdz", 1);
    let e = blksim::run(&m, &Settings::default(), &[j], 1).unwrap_err();
    assert_eq!(e.job, Some(0));
    assert!(e.message.contains("/dev/sdz") && e.message.contains("/dev/nvme0n1"), "{}", e.message);
}

fn null_blk_run(params: &str, engine: IoEngine, qd: u32) -> (blksim::stats::RunReport, blksim::Invariants) {
    let m = small_machine(2);
    let mut s = Settings::default();
    s.apply_cmdline(params).unwrap();
    let mut j = job("n", engine, RwKind::RandRead, 512, qd, "nullb0", 2);
    j.cpus_allowed = Some(vec![1]);
    run_checked(&m, &s, &[j], 1)
}

#[test]
fn null_blk_irqmode_0_completes_inline_without_interrupts_or_softirq() {
    let (r, inv) = null_blk_run("null_blk.irqmode=0", IoEngine::Libaio, 4);
    assert!(inv.ios_issued > 1000);
    assert_eq!(r.cpu_time[1].softirq_ns + r.cpu_time[1].hardirq_ns, 0);
    assert!(r.interrupts.iter().all(|row| row.total() == 0));
}

#[test]
fn null_blk_irqmode_1_completes_in_block_softirq_on_the_submitter() {
    // One hardware queue (no poll queue): blk_mq_complete_request raises BLOCK_SOFTIRQ.
    let (r, _) = null_blk_run("null_blk.irqmode=1 null_blk.poll_queues=0", IoEngine::Libaio, 4);
    assert!(r.cpu_time[1].softirq_ns > 0);
    assert_eq!(r.cpu_time[0].softirq_ns, 0);
    // With its default poll queue nr_hw_queues is 2: the completion runs inline.
    let (r, _) = null_blk_run("null_blk.irqmode=1", IoEngine::Libaio, 4);
    assert_eq!(r.cpu_time[1].softirq_ns, 0);
}

#[test]
fn hipri_on_null_blk_polls_its_poll_queue_and_without_one_completes_by_softirq() {
    let (r, inv) = null_blk_run("null_blk.irqmode=1", uring(true), 32);
    assert!(inv.ios_issued > 1000);
    assert_eq!(r.cpu_time[1].softirq_ns + r.cpu_time[1].hardirq_ns, 0, "null_poll ends them");
    let (r, inv) = null_blk_run("null_blk.irqmode=1 null_blk.poll_queues=0", uring(true), 32);
    // Each submission raises BLOCK_SOFTIRQ from task context: ksoftirqd takes the CPU.
    assert!(inv.ios_issued > 300);
    assert!(r.cpu_time[1].softirq_ns > 0, "the polled flag is cleared: BLOCK_SOFTIRQ ends them");
}

#[test]
fn pvsync2_hipri_is_not_polled_the_task_sleeps() {
    let m = small_machine(2);
    let mut s = Settings::default();
    s.apply_cmdline("nvme.poll_queues=1").unwrap();
    let mut j = job("s", IoEngine::Pvsync2 { hipri: true }, RwKind::RandRead, 4096, 1, "nvme0n1", 5);
    j.cpus_allowed = Some(vec![1]);
    let (r, inv) = run_checked(&m, &s, &[j], 1);
    assert!(inv.ios_issued > 20);
    let t = &r.cpu_time[1];
    assert!(t.iowait_ns > r.sim_time_ns / 2, "sleeps in submit_bio_wait: {t:?}");
    assert!(inv.msi.sent > 0, "completes by interrupt");
}

#[test]
fn null_blk_irqmode_2_completes_from_a_timer_after_completion_nsec() {
    let (r, inv) = null_blk_run("null_blk.irqmode=2 null_blk.completion_nsec=20000", IoEngine::Psync, 1);
    let loc = r.interrupts.iter().find(|row| row.label == "LOC").unwrap();
    assert_eq!(loc.count(1), inv.ios_issued, "one timer interrupt per I/O at QD1");
    let clat = &r.jobs[0].dirs[0].clat;
    assert!(clat.min_ns > 20_000 && clat.max_ns < 25_000, "clat {}..{}", clat.min_ns, clat.max_ns);
}

#[test]
fn posted_mode_keeps_every_invariant_and_coalesces_under_load() {
    let m = small_machine(4);
    let mut s = Settings::default();
    s.apply_cmdline("intremap=posted_msi").unwrap();
    // Two drives: each CPU has a vector of each, so a notification can
    // carry both (one vector is signalled once per drain: NVMe holds its
    // next interrupt until the CQ head doorbell).
    let mut jobs = Vec::new();
    for cpu in 0..4 {
        for dev in ["nvme0n1", "nvme1n1"] {
            let mut j = job("p", IoEngine::Libaio, RwKind::RandRead, 4096, 64, dev, 20);
            j.cpus_allowed = Some(vec![cpu]);
            jobs.push(j);
        }
    }
    let (r, inv) = run_checked(&m, &s, &jobs, 1);
    let msis: u64 = r.msi_per_cpu.iter().map(|c| c.device_msis).sum();
    let pmn: u64 = r.msi_per_cpu.iter().map(|c| c.pmn).sum();
    let notes: u64 = r.msi_per_cpu.iter().map(|c| c.notifications).sum();
    assert_eq!(msis, inv.msi.sent);
    assert_eq!(pmn, notes, "every notification is handled once");
    assert!(pmn > 0 && pmn < msis, "coalescing under load: {msis} MSIs, {pmn} notifications");
    assert!(r.interrupts.iter().any(|row| row.label == "PMN"));
}

/// `nvme_irq` writes the CQ head doorbell when its drain ends and only
/// then completes its `io_comp_batch`: a CQE that comes after the host's
/// write is signalled anew when the doorbell reaches the controller (a
/// PCIe traversal later), maybe while the handler still runs. With one
/// vector per CPU in use, a posted notification carries a second MSI of
/// the same vector only that way (its PIR bit posted again before the
/// handler's next harvest): when the batch completion outlasts the
/// doorbell's flight and the posting's path. Shorter, the MSI comes as a
/// notification of its own.
#[test]
fn a_vector_signalled_again_coalesces_only_when_the_batch_outlasts_the_doorbells_flight() {
    // A drive fast enough for CQEs to come during a batch (as x86-gen5-5m's).
    let drive = "[device_model.pm1743]\niops_max_read = 5000000\niops_block_size = 512\nread_latency_ns = 8000\n";
    let run = |costs: &str| {
        let m = small_machine_with(2, &format!("{drive}{costs}"));
        let mut s = Settings::default();
        s.apply_cmdline("intremap=posted_msi").unwrap();
        let jobs: Vec<JobConfig> = (0..2)
            .map(|cpu| {
                let mut j = job("u", uring(false), RwKind::RandRead, 512, 128, "nvme0n1", 5);
                j.iodepth_batch_submit = 32;
                j.iodepth_batch_complete_max = 32;
                j.cpus_allowed = Some(vec![cpu]);
                j
            })
            .collect();
        let (r, inv) = run_checked(&m, &s, &jobs, 1);
        let msis: u64 = r.msi_per_cpu.iter().map(|c| c.device_msis).sum();
        let notes: u64 = r.msi_per_cpu.iter().map(|c| c.notifications).sum();
        assert_eq!(msis, inv.msi.sent);
        (msis, notes)
    };
    // As the base profile has it (10 ns a request): the batch ends before the doorbell lands.
    let (msis, notes) = run("");
    assert!(notes as f64 >= msis as f64 * 0.99, "a short batch: {msis} MSIs in {notes} notifications");
    // 80 ns a request (the top of its range): the same notification harvests the vector again.
    let (msis, notes) = run("[costs]\nblk_complete_batch_ns = { ns = 80, min = 8, max = 80, note = \"t\" }\n");
    assert!(
        notes as f64 <= msis as f64 * 0.95,
        "a long batch: {msis} MSIs in {notes} notifications (some must be harvested again)"
    );
}

#[test]
fn posted_mode_does_no_harm_at_a_low_interrupt_rate() {
    let m = small_machine(2);
    let mut posted = Settings::default();
    posted.apply_cmdline("intremap=posted_msi").unwrap();
    let mut j = job("qd1", IoEngine::Psync, RwKind::RandRead, 4096, 1, "nvme0n1", 50);
    j.cpus_allowed = Some(vec![0]);
    let (a, _) = run_checked(&m, &Settings::default(), &[j.clone()], 1);
    let (b, _) = run_checked(&m, &posted, &[j], 1);
    let (ia, ib) = (iops(&a, 0), iops(&b, 0));
    assert!((ia - ib).abs() / ia < 0.01, "remappable {ia:.0} vs posted {ib:.0} IOPS");
    let pmn: u64 = b.msi_per_cpu.iter().map(|c| c.pmn).sum();
    let msis: u64 = b.msi_per_cpu.iter().map(|c| c.device_msis).sum();
    assert_eq!(pmn, msis, "at QD1 every MSI needs its own notification");
}

/// Two DSA devices, one WQ each, both completion IRQs pinned to CPU 0.
fn dsa_run(extra_cmdline: &str, outstanding: u32) -> (blksim::stats::RunReport, blksim::Invariants) {
    let m = blksim::machine::builtin("spr-dsa").unwrap();
    let mut s = Settings::default();
    s.apply_cmdline(extra_cmdline).unwrap();
    let dsa = (0..2)
        .map(|d| blksim::workload::DsaClientConfig {
            device: format!("dsa{d}"),
            wq: 0,
            outstanding,
            bytes: 512,
            runtime_ns: 2_000_000,
            irq_cpu: Some(0),
        })
        .collect();
    let w = blksim::Workload { jobs: vec![], dsa };
    let (r, inv) = blksim::run_workload(&m, &s, &w, 1, &Default::default()).unwrap();
    check_invariants(&r, &inv);
    (r, inv)
}

#[test]
fn dsa_completions_interrupt_one_cpu_and_posting_raises_the_rate() {
    let (remap, inv) = dsa_run("", 8);
    let (posted, _) = dsa_run("intremap=posted_msi", 8);
    let handled = |r: &blksim::stats::RunReport| r.msi_per_cpu[0].device_irqs;
    let completed = |r: &blksim::stats::RunReport| r.dsa.iter().map(|c| c.completed).sum::<u64>();
    // Every completion is handled on CPU 0 and nowhere else.
    assert!(r_only_cpu0(&remap));
    assert_eq!(inv.msi.sent, completed(&remap), "one MSI per completion");
    assert!(handled(&remap) > 0 && handled(&remap) <= completed(&remap));
    // The CPU taking the interrupts is the bottleneck; posting makes each MSI cheaper there.
    assert!(remap.cpu_time[0].idle_ns * 20 < remap.sim_time_ns, "CPU 0 saturated in remappable mode");
    assert!(
        completed(&posted) as f64 > completed(&remap) as f64 * 1.1,
        "posted {} vs remappable {}",
        completed(&posted),
        completed(&remap)
    );
}

/// The published max-loops trend: more harvest passes per notification mean
/// fewer notifications per completion and a rate that never falls.
#[test]
fn dsa_more_coalescing_loops_mean_fewer_notifications_and_no_lower_rate() {
    let mut last: Option<(f64, u64)> = None;
    for loops in 2..=6 {
        let (r, _) = dsa_run(&format!("intremap=posted_msi blksim.max_posted_msi_coalescing_loop={loops}"), 8);
        let completed: u64 = r.dsa.iter().map(|c| c.completed).sum();
        let pmn: u64 = r.msi_per_cpu.iter().map(|c| c.pmn).sum();
        let per_completion = pmn as f64 / completed as f64;
        if let Some((prev_ratio, prev_completed)) = last {
            assert!(
                per_completion < prev_ratio,
                "max_loops={loops}: {per_completion} notifications per completion, was {prev_ratio}"
            );
            assert!(completed >= prev_completed, "max_loops={loops}: {completed} completions, was {prev_completed}");
        }
        last = Some((per_completion, completed));
    }
}

fn r_only_cpu0(r: &blksim::stats::RunReport) -> bool {
    r.msi_per_cpu.iter().skip(1).all(|c| c.device_irqs == 0 && c.pmn == 0)
}

#[test]
fn irq_affinity_writes_move_a_dsa_irq_and_managed_nvme_irqs_refuse() {
    let m = blksim::machine::builtin("spr-dsa").unwrap();
    let mut s = Settings::default();
    s.apply_write("/proc/irq/129/smp_affinity_list=5-7", &[]).unwrap();
    let w = blksim::Workload {
        jobs: vec![],
        dsa: vec![blksim::workload::DsaClientConfig {
            device: "dsa1".into(),
            wq: 0,
            outstanding: 4,
            bytes: 4096,
            runtime_ns: 100_000,
            irq_cpu: None,
        }],
    };
    let (r, _) = blksim::run_workload(&m, &s, &w, 1, &Default::default()).unwrap();
    let row = r.interrupts.iter().find(|row| row.label == "129").unwrap();
    assert!(row.count(5) > 0 && row.total() == row.count(5), "{:?}", row.per_cpu);

    let m = small_machine(2);
    let mut s = Settings::default();
    s.apply_write("/proc/irq/128/smp_affinity_list=1", &[]).unwrap();
    let j = job("r", IoEngine::Libaio, RwKind::RandRead, 4096, 1, "nvme0n1", 1);
    let e = blksim::run(&m, &s, &[j], 1).unwrap_err();
    assert!(e.message.contains("managed") && e.message.contains("EIO"), "{}", e.message);
}

/// Affinity churn and CPUs going offline under a high MSI rate, in both
/// modes: every MSI is handled exactly once and every descriptor completes.
#[test]
fn affinity_change_and_cpu_offline_lose_no_interrupt() {
    use blksim::settings::TimedAction;
    let m = blksim::machine::builtin("spr-dsa").unwrap();
    for cmdline in ["", "intremap=posted_msi"] {
        let mut s = Settings::default();
        s.apply_cmdline(cmdline).unwrap();
        let dsa = (0..2)
            .map(|d| blksim::workload::DsaClientConfig {
                device: format!("dsa{d}"),
                wq: 0,
                outstanding: 16,
                bytes: 256,
                runtime_ns: 3_000_000,
                irq_cpu: Some(0),
            })
            .collect();
        let mut timed = Vec::new();
        // Move both IRQs around CPUs 0-5 every 37 us (an odd period, so moves hit handlers mid-flight).
        for k in 0..70u64 {
            let cpu = (k % 6) as u32;
            timed.push((k * 37_000, TimedAction::IrqAffinity { irq_number: 128 + (k % 2) as u32, cpus: vec![cpu] }));
        }
        // Offline CPUs while they hold the IRQs.
        timed.push((1_000_000, TimedAction::CpuOffline { cpu: 2 }));
        timed.push((1_500_000, TimedAction::CpuOffline { cpu: 3 }));
        timed.sort_by_key(|t| t.0);
        // After a CPU is offline, moves to it are refused: keep them off those CPUs.
        let timed: Vec<_> = timed
            .into_iter()
            .map(|(t, a)| match a {
                TimedAction::IrqAffinity { irq_number, cpus }
                    if (t >= 1_000_000 && cpus[0] == 2) || (t >= 1_500_000 && cpus[0] == 3) =>
                {
                    (t, TimedAction::IrqAffinity { irq_number, cpus: vec![4] })
                }
                a => (t, a),
            })
            .collect();
        let w = blksim::Workload { jobs: vec![], dsa };
        let opts = blksim::RunOptions { timed, ..Default::default() };
        let (r, inv) = blksim::run_workload(&m, &s, &w, 1, &opts).unwrap();
        check_invariants(&r, &inv);
        assert_eq!(inv.msi.sent, inv.msi.delivered + inv.msi.merged + inv.msi_pending, "{cmdline}: {inv:?}");
        let completed: u64 = r.dsa.iter().map(|c| c.completed).sum();
        assert!(completed > 1000, "{cmdline}: {completed}");
        // Interrupts were handled on several CPUs, and none on the offline ones after they went down.
        let cpus_used = r.msi_per_cpu.iter().filter(|c| c.device_irqs > 0).count();
        assert!(cpus_used >= 4, "{cmdline}: interrupts on {cpus_used} CPUs");
    }
}

/// Mutated machine profiles and knob strings give a result or an error, never a panic.
#[test]
fn mutated_profiles_and_knobs_never_panic() {
    for base in [include_str!("../../../profiles/spr-gen5.toml"), include_str!("../../../profiles/hp-ia64-2008.toml")] {
        mutated_profiles_never_panic(base);
    }
}

fn mutated_profiles_never_panic(base: &str) {
    let mut x: u64 = 7;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let pieces =
        ["0", "-1", "=", "[", "]", "\n", "1e99", "\"", "{", "}", "ns", "max", "99999999999999999999", "cpu", "."];
    let mut errors = 0;
    for _ in 0..400 {
        let mut s = base.to_string();
        for _ in 0..1 + next() % 3 {
            let at = (next() as usize) % s.len();
            let at = (0..=at).rev().find(|i| s.is_char_boundary(*i)).unwrap();
            s.insert_str(at, pieces[(next() as usize) % pieces.len()]);
        }
        match blksim::machine::load_profile(&s, "mutant.toml", &blksim::machine::Builtins) {
            Err(e) => {
                assert!(e.contains("mutant.toml"), "{e}");
                errors += 1;
            }
            // A profile that loads boots (its devices probe) or says why not.
            Ok(m) => {
                let _ = blksim::validate(&m, &Settings::default(), &[]);
            }
        }
    }
    assert!(errors > 0);
    let mut st = Settings::default();
    for w in [
        "nvme.poll_queues=",
        "=",
        "nvme.poll_queues=99999999999999999999999",
        "intremap=",
        "null_blk.irqmode=-1",
        "a=b=c",
    ] {
        assert!(st.apply_cmdline(w).is_err(), "{w}");
    }
    for w in [
        "/sys/block//queue/rq_affinity=1",
        "/proc/irq/x/smp_affinity_list=1",
        "/proc/irq/1/smp_affinity_list=3-1",
        "/sys=1",
        "nothing",
        "/sys/block/nvme0n1/queue/queue_affinity=x",
        "/sys/block/nvme0n1/queue/rotational=2",
    ] {
        assert!(st.apply_write(w, &["nvme0n1".into()]).is_err(), "{w}");
    }
}

/// Sequential I/O submitted in plugged batches back-merges into larger
/// requests; `nomerges=2` and random offsets do not.
#[test]
fn plugged_sequential_bios_merge_into_larger_requests() {
    let m = small_machine(2);
    let run_seq = |rw: RwKind, nomerges: &str| {
        let mut s = Settings::default();
        s.apply_write(&format!("/sys/block/nvme0n1/queue/nomerges={nomerges}"), &["nvme0n1".into()]).unwrap();
        let mut j = job("s", uring(false), rw, 4096, 32, "nvme0n1", 5);
        j.cpus_allowed = Some(vec![0]);
        j.iodepth_batch_submit = 8;
        j.iodepth_batch_complete_min = 8;
        j.iodepth_batch_complete_max = 8;
        let (r, inv) = run_checked(&m, &s, &[j], 1);
        let d = &r.disks[0];
        (inv.ios_issued, d.ios[0], d.merges[0], d.sectors[0])
    };
    let (ios, requests, merges, sectors) = run_seq(RwKind::Read, "0");
    assert!(merges > 0 && requests + merges >= ios - 64, "{ios} I/Os, {requests} requests, {merges} merges");
    assert!(requests * 4 < ios, "batches of 8 sequential 4 KiB reads become ~32 KiB requests: {requests} for {ios}");
    assert_eq!(sectors, (requests + merges) * 8, "every merged bio's bytes reach the disk");
    let (ios, requests, merges, _) = run_seq(RwKind::Read, "2");
    assert_eq!(merges, 0);
    assert!(requests + 64 >= ios, "nomerges=2: one request per I/O ({requests} for {ios})");
    let (_, _, merges, _) = run_seq(RwKind::RandRead, "0");
    assert!(merges < 10, "random offsets rarely continue each other: {merges}");
}

/// With fewer tags than the job's depth, io_submit sleeps for tags and the
/// tags, not the depth, bound the I/O in flight.
#[test]
fn a_submitter_out_of_tags_sleeps_until_completions_free_them() {
    let m = small_machine_with(2, "[device_model.pm1743]\nlatency_sigma = 0.0\n");
    let run_with = |nr: Option<u32>| {
        let mut s = Settings::default();
        if let Some(n) = nr {
            s.apply_write(&format!("/sys/block/nvme0n1/queue/nr_requests={n}"), &["nvme0n1".into()]).unwrap();
        }
        let mut j = job("t", IoEngine::Libaio, RwKind::RandRead, 4096, 16, "nvme0n1", 10);
        j.cpus_allowed = Some(vec![0]);
        j.iodepth_batch_submit = 8;
        let (r, _) = run_checked(&m, &s, &[j], 1);
        (iops(&r, 0), r.jobs[0].ctx)
    };
    let (free, ctx_free) = run_with(None);
    let (tight, ctx_tight) = run_with(Some(4));
    // 4 tags at ~62 us each bound the rate near 4 / 62 us = 64 K IOPS.
    assert!(tight < 70_000.0 && tight > 40_000.0, "{tight:.0} IOPS with 4 tags");
    assert!(free > tight * 2.0, "depth 16 without the tag limit: {free:.0}");
    assert!(ctx_tight > ctx_free, "sleeping for tags switches context: {ctx_tight} vs {ctx_free}");
}

#[test]
fn latency_stages_add_up_to_fio_lat_and_the_device_dominates_at_qd1() {
    let m = small_machine(2);
    let mut j = job("b", IoEngine::Psync, RwKind::RandRead, 4096, 1, "nvme0n1", 5);
    j.cpus_allowed = Some(vec![0]);
    let (r, _) = run_checked(&m, &Settings::default(), &[j], 1);
    let js = &r.jobs[0];
    let lat = &js.dirs[0].lat;
    let total: u64 = js.breakdown_ns.iter().sum();
    let lat_sum = lat.mean() * lat.n as f64;
    assert!((total as f64 - lat_sum).abs() <= 1e-9 * lat_sum, "stages sum to fio's lat: {total} vs {lat_sum}");
    let device = js.breakdown_ns[2] as f64 / total as f64;
    assert!(device > 0.9, "device share at QD1: {device}");
}

#[test]
fn a_cpu_idle_while_its_task_waits_for_io_counts_iowait() {
    let m = small_machine(2);
    let mut j = job("w", IoEngine::Psync, RwKind::RandRead, 4096, 1, "nvme0n1", 5);
    j.cpus_allowed = Some(vec![1]);
    let (r, _) = run_checked(&m, &Settings::default(), &[j], 1);
    let t = &r.cpu_time[1];
    assert!(
        t.iowait_ns as f64 > 0.9 * r.sim_time_ns as f64,
        "QD1 psync: CPU 1 waits for the device most of the time: {t:?}"
    );
    assert_eq!(r.cpu_time[0].iowait_ns, 0, "no task of CPU 0 waits");
}

/// 32 io_uring submitters on one mq-deadline queue: `dd->lock` is taken per
/// merge lookup, insertion and dispatch, so the lock, not the device,
/// bounds the rate and the CPUs spin; scheduler `none` has no such lock.
fn mq_deadline_run(sched: &str, patch: bool) -> blksim::stats::RunReport {
    let m = blksim::machine::builtin("ryzen-7950x").unwrap();
    let mut s = Settings::default();
    s.apply_cmdline("null_blk.submit_queues=1").unwrap();
    s.apply_write(&format!("/sys/block/nullb0/queue/scheduler={sched}"), &["nullb0".into()]).unwrap();
    if patch {
        s.apply_patch("mq-deadline-2024").unwrap();
    }
    let jobs: Vec<_> = (0..32)
        .map(|_| {
            let mut j = job("t", uring(false), RwKind::RandRead, 512, 4, "nullb0", 2);
            j.iodepth_batch_submit = 4;
            j.iodepth_batch_complete_min = 4;
            j.iodepth_batch_complete_max = 4;
            j.gtod_reduce = true;
            j
        })
        .collect();
    run_checked(&m, &s, &jobs, 1).0
}

#[test]
fn one_scheduler_lock_collapses_under_32_submitters() {
    let none = mq_deadline_run("none", false);
    let dd = mq_deadline_run("mq-deadline", false);
    let total = |r: &blksim::stats::RunReport| r.jobs.iter().map(|j| j.dirs[0].total_ios).sum::<u64>();
    assert!(none.locks.is_empty());
    let lock = &dd.locks[0];
    assert!(lock.name.contains("dd->lock"));
    let cpu_ns: u64 = dd.cpu_time.iter().map(|c| c.total_ns()).sum();
    assert!(lock.contended * 10 > lock.acquisitions * 9, "almost every acquisition waits: {lock:?}");
    assert!(lock.wait_ns * 2 > cpu_ns, "CPUs spend most of their time spinning: {} of {cpu_ns}", lock.wait_ns);
    assert!(total(&none) > total(&dd) * 2, "none {} vs mq-deadline {}", total(&none), total(&dd));
}

#[test]
fn the_2024_series_takes_the_lock_far_less_often_and_contends_less() {
    let before = mq_deadline_run("mq-deadline", false);
    let after = mq_deadline_run("mq-deadline", true);
    let (b, a) = (&before.locks[0], &after.locks[0]);
    assert_eq!(after.locks.len(), 1, "dd->lock (the buckets' locks are per CPU)");
    let total = |r: &blksim::stats::RunReport| r.jobs.iter().map(|j| j.dirs[0].total_ios).sum::<u64>();
    let (tb, ta) = (total(&before), total(&after));
    assert!(ta > tb * 3 / 2, "after {ta} before {tb}");
    // Per I/O: fewer acquisitions (merge lookups skipped, dispatch serialised) and far less spinning.
    let per_io = |n: u64, t: u64| n as f64 / t as f64;
    assert!(per_io(a.acquisitions, ta) < per_io(b.acquisitions, tb) * 0.75, "acquisitions per I/O: {a:?} vs {b:?}");
    assert!(per_io(a.wait_ns, ta) * 10.0 < per_io(b.wait_ns, tb), "spin per I/O: {a:?} vs {b:?}");
}

/// A rotational disk behind an FC adapter: 4 KiB sequential writes, batched
/// by libaio, merge in the plug into large requests that stream at the
/// media rate; random 4 KiB writes pay a seek and half a turn each, so the
/// two differ by the factor the seek and rotation imply.
#[test]
fn sequential_writes_to_a_rotational_disk_merge_and_beat_random_ones_by_the_seek() {
    let m = scsi_machine(2, false);
    let run_w = |rw: RwKind| {
        let mut j = job("w", IoEngine::Libaio, rw, 4096, 32, "sda", 500);
        j.cpus_allowed = Some(vec![1]);
        j.iodepth_batch_submit = 8;
        j.iodepth_batch_complete_min = 8;
        j.iodepth_batch_complete_max = 8;
        let (r, _) = run_checked(&m, &Settings::default(), &[j], 1);
        let d = r.disks[0].clone();
        let iops = r.jobs[0].dirs[1].total_ios as f64 / (r.jobs[0].runtime_ns as f64 / 1e9);
        (iops, d)
    };
    let (seq, ds) = run_w(RwKind::Write);
    let (rnd, dr) = run_w(RwKind::RandWrite);
    // Sequential: bios merge (8 per request) and the disk streams at 100 MB/s.
    assert!(ds.merges[1] * 10 > ds.ios[1] * 8 * 6, "merges {} for {} requests", ds.merges[1], ds.ios[1]);
    let media_iops = 100e6 / 4096.0;
    assert!((seq - media_iops).abs() / media_iops < 0.15, "sequential {seq:.0} IOPS vs the media's {media_iops:.0}");
    // Random: one seek (average 3.4 ms), half a turn (2 ms), the transfer and the controller per write.
    assert!(dr.merges[1] < 5, "random writes do not merge: {}", dr.merges[1]);
    let per_write_ns = 3_400_000.0 + 2_000_000.0 + 41_000.0 + 50_000.0;
    let expect_rnd = 1e9 / per_write_ns;
    assert!((rnd - expect_rnd).abs() / expect_rnd < 0.2, "random {rnd:.0} IOPS vs {expect_rnd:.0}");
    let factor = per_write_ns / (4096.0 * 1e9 / 100e6);
    assert!(
        (seq / rnd - factor).abs() / factor < 0.25,
        "sequential / random = {:.0}, seek implies {factor:.0}",
        seq / rnd
    );
    // iostat's view: %util near 100 for both, write await far longer at random.
    assert!(ds.util_pct > 90.0 && dr.util_pct > 90.0, "{} {}", ds.util_pct, dr.util_pct);
}

/// 4 KiB sequential synchronous reads hit the disk's read-ahead: one media
/// read, then the cache's rate (controller, firmware, link and the CPU path).
#[test]
fn sequential_sync_reads_are_served_from_the_disk_cache() {
    let m = scsi_machine(2, false);
    let mut j = job("r", IoEngine::Psync, RwKind::Read, 4096, 1, "sda", 100);
    j.cpus_allowed = Some(vec![1]);
    let (r, inv) = run_checked(&m, &Settings::default(), &[j], 1);
    assert!(inv.ios_issued > 700, "{}", inv.ios_issued);
    let lat = r.jobs[0].dirs[0].clat.mean();
    // Controller 50 us + the hit 20 us + firmware 10 us + 4 KiB at 200 MB/s (20 us) + the host's
    // path: well under a revolution (4 ms), so no read waited for the media.
    assert!(lat < 150_000.0 && lat > 100_000.0, "mean clat {lat} ns");
    // Interrupts on CPU 0 (the port's IRQ, not moved), the task on CPU 1.
    let irqs: u64 = r.interrupts.iter().filter(|row| row.name.starts_with("qla2xxx")).map(|row| row.count(0)).sum();
    assert!(irqs >= inv.ios_issued - 1, "{irqs} interrupts on CPU 0 for {} reads", inv.ios_issued);
}

/// The 2008 machine: 4 cells of 4 CPUs, a cell one cache domain; port 0 of
/// host0 (sda, sdb) interrupts CPU 0. A sync reader of sda on `cpu`.
fn ia64_completions(cpu: u32, rq_affinity: u8, patch: bool) -> blksim::stats::RunReport {
    let m = blksim::machine::builtin("hp-ia64-2008").unwrap();
    let devs: Vec<String> = m.devices.iter().filter(|d| d.is_block()).map(|d| d.name.clone()).collect();
    let mut s = Settings::default();
    if patch {
        s.apply_patch("io-cpu-affinity-2008").unwrap();
    }
    s.apply_write("/proc/irq/128/smp_affinity_list=0", &devs).unwrap();
    s.apply_write(&format!("/sys/block/sda/queue/rq_affinity={rq_affinity}"), &devs).unwrap();
    let mut j = job("r", IoEngine::Sync, RwKind::Read, 4096, 1, "sda", 20);
    j.cpus_allowed = Some(vec![cpu]);
    run_checked(&m, &s, &[j], 1).0
}

/// The CPU that ran BLOCK_SOFTIRQ (the completions) in a run of one reader.
fn completing_cpu(r: &blksim::stats::RunReport) -> usize {
    let busy: Vec<usize> = (0..r.cpu_time.len()).filter(|&c| r.cpu_time[c].softirq_ns > 0).collect();
    assert_eq!(busy.len(), 1, "completions ran on one CPU: {busy:?}");
    busy[0]
}

/// `rq_affinity` as today's kernel reads it: 0 completes where the
/// interrupt came (CPU 0), 1 in the submitter's cache domain (its cell: CPU
/// 0 for a reader on CPU 1 of cell 0, the reader's CPU for one in cell 1), 2
/// on the submitter; with the 2008 branch, 1 means the submitting CPU.
#[test]
fn rq_affinity_places_completions_on_the_irq_cpu_the_submitters_cell_or_the_submitter() {
    assert_eq!(completing_cpu(&ia64_completions(1, 0, false)), 0, "0: the interrupted CPU");
    assert_eq!(completing_cpu(&ia64_completions(5, 0, false)), 0, "0: the interrupted CPU");
    assert_eq!(completing_cpu(&ia64_completions(1, 1, false)), 0, "1: CPU 0 shares cell 0's cache with the reader");
    assert_eq!(completing_cpu(&ia64_completions(5, 1, false)), 5, "1: another cell: back to the reader");
    assert_eq!(completing_cpu(&ia64_completions(1, 2, false)), 1, "2: always the submitter");
    assert_eq!(completing_cpu(&ia64_completions(1, 1, true)), 1, "2008 branch: 1 is the submitting CPU");
    // A remote completion is an IPI (CAL) to the submitter for each I/O.
    let r = ia64_completions(1, 2, false);
    let cal = r.interrupts.iter().find(|row| row.label == "CAL").unwrap();
    let ios = r.jobs[0].dirs[0].total_ios;
    assert!(cal.count(1) >= ios, "{} IPIs to CPU 1 for {ios} reads", cal.count(1));
}

/// `queue_affinity` needs the 2008 patch; with it, requests are handed over
/// by IPI to the CPU named, which issues them (in its IPI handler).
#[test]
fn queue_affinity_needs_its_patch_and_issues_from_the_cpu_it_names() {
    let m = blksim::machine::builtin("hp-ia64-2008").unwrap();
    let devs: Vec<String> = m.devices.iter().filter(|d| d.is_block()).map(|d| d.name.clone()).collect();
    let mut j = job("r", IoEngine::Sync, RwKind::Read, 4096, 1, "sda", 20);
    j.cpus_allowed = Some(vec![1]);
    let mut s = Settings::default();
    let e = s.apply_write("/sys/block/host0/queue/queue_affinity=6", &devs).unwrap_err();
    assert!(e.message.contains("no block device 'host0'"), "a host adapter has no queue: {}", e.message);
    s.apply_write("/sys/block/sda/queue/queue_affinity=6", &devs).unwrap();
    let e = blksim::run(&m, &s, &[j.clone()], 1).unwrap_err();
    assert_eq!(e.kind, blksim::ErrorKind::BadInput);
    assert!(e.message.contains("--patch io-cpu-affinity-2008"), "{}", e.message);
    s.apply_patch("io-cpu-affinity-2008").unwrap();
    s.apply_write("/sys/block/sda/queue/queue_affinity=99", &devs).unwrap();
    assert!(blksim::run(&m, &s, &[j.clone()], 1).unwrap_err().message.contains("CPU 99 does not exist"));
    s.apply_write("/sys/block/sda/queue/queue_affinity=6", &devs).unwrap();
    let (r, _) = run_checked(&m, &s, &[j], 1);
    let ios = r.jobs[0].dirs[0].total_ios;
    let cal = r.interrupts.iter().find(|row| row.label == "CAL").unwrap();
    assert!(cal.count(6) >= ios, "{} hand-over IPIs to CPU 6 for {ios} reads", cal.count(6));
    assert!(r.cpu_time[6].hardirq_ns > 0 && r.cpu_time[6].softirq_ns == 0, "CPU 6 issues, in its IPI handler");
}

fn sqpoll_run(hipri: bool) -> (blksim::stats::RunReport, blksim::Invariants) {
    let m = small_machine(4);
    let mut s = Settings::default();
    s.apply_cmdline("nvme.poll_queues=1").unwrap();
    let engine = IoEngine::IoUring(blksim::workload::IoUringOptions {
        hipri,
        fixedbufs: true,
        registerfiles: true,
        sqthread_poll: true,
        sqthread_poll_cpu: Some(2),
        ..Default::default()
    });
    let mut j = job("sq", engine, RwKind::RandRead, 4096, 64, "nvme0n1", 5);
    j.cpus_allowed = Some(vec![1]);
    j.iodepth_batch_submit = 16;
    j.iodepth_batch_complete_min = 16;
    j.iodepth_batch_complete_max = 64;
    run_checked(&m, &s, &[j], 1)
}

#[test]
fn sqpoll_moves_the_kernel_work_to_the_sq_thread_on_its_own_cpu() {
    for hipri in [true, false] {
        let (r, inv) = sqpoll_run(hipri);
        assert!(inv.ios_issued > 1000, "hipri {hipri}");
        assert_eq!(r.jobs.len(), 1, "the SQ thread is not a fio job");
        let (app, sq) = (&r.cpu_time[1], &r.cpu_time[2]);
        let t = r.sim_time_ns as f64;
        // fio spins on its CQ ring in user space (its only system time the
        // switch in at its start); the SQ thread submits, polls and posts CQEs
        // (by interrupt its queue's IRQ lands on its CPU: it submitted there).
        assert!(app.user_ns as f64 > 0.99 * t && app.sys_ns <= 1000, "hipri {hipri}: app CPU {app:?}");
        let sq_busy = sq.sys_ns + sq.hardirq_ns + sq.softirq_ns;
        assert!(sq_busy as f64 > 0.99 * t && sq.user_ns == 0, "hipri {hipri}: SQ CPU {sq:?}");
        if hipri {
            assert_eq!(sq.hardirq_ns, 0, "polled: no interrupt");
        }
        assert!(r.jobs[0].sys_ns <= 1000, "no syscall: the commit is a store to the SQ tail");
    }
}

#[test]
fn nvme_write_queues_send_reads_and_writes_to_separate_queue_sets() {
    let m = small_machine(4);
    let rows = |cmdline: &str| {
        let mut s = Settings::default();
        s.apply_cmdline(cmdline).unwrap();
        let mut j = job("rw", IoEngine::Libaio, RwKind::RandRw, 4096, 8, "nvme0n1", 5);
        j.cpus_allowed = Some(vec![2]);
        let (r, inv) = run_checked(&m, &s, &[j], 1);
        assert!(inv.ios_issued > 500);
        let count = |name: &str, cpu: usize| {
            r.interrupts.iter().find(|row| row.name == name).map_or(0, |row| row.count(cpu as u32))
        };
        (count("nvme0q1", 0), count("nvme0q3", 2), count("nvme0q4", 2), r.interrupts.len())
    };
    // One set: CPU 2's queue (nvme0q3, its vector on CPU 2) takes both directions.
    let (q1, q3, q4, _) = rows("nvme.write_queues=0");
    assert!(q1 == 0 && q3 > 200 && q4 == 0, "q1 {q1} q3 {q3} q4 {q4}");
    // write_queues=1: 5 interrupt queues, 1 default (writes, vector on CPU 0) and 4 read
    // (nvme0q2..q5, one per CPU): CPU 2's reads on nvme0q4, its writes on nvme0q1.
    let (q1, q3, q4, n) = rows("nvme.write_queues=1");
    assert!(q1 > 100 && q4 > 100 && q3 == 0, "q1 {q1} q3 {q3} q4 {q4}");
    assert!(n >= 5, "{n} interrupt rows");
}

/// Reads at QD16 beside 128 KiB writes at QD64 on one drive: the reads
/// queue behind the writes in the device.
fn mixed_load() -> Vec<blksim::workload::JobConfig> {
    let mut reader = job("reader", uring(false), RwKind::RandRead, 4096, 16, "nvme0n1", 1000);
    reader.cpus_allowed = Some(vec![0]);
    let mut writer = job("writer", uring(false), RwKind::RandWrite, 128 << 10, 64, "nvme0n1", 1000);
    writer.cpus_allowed = Some(vec![1]);
    vec![reader, writer]
}

fn kyber_settings(read_lat_nsec: Option<u64>) -> Settings {
    let dev = ["nvme0n1".to_string()];
    let mut s = Settings::default();
    s.apply_write("/sys/block/nvme0n1/queue/scheduler=kyber", &dev).unwrap();
    if let Some(ns) = read_lat_nsec {
        s.apply_write(&format!("/sys/block/nvme0n1/queue/iosched/read_lat_nsec={ns}"), &dev).unwrap();
    }
    s
}

fn kyber_counter(r: &blksim::stats::RunReport, name: &str) -> u64 {
    let s = r.schedulers.iter().find(|s| s.device == "nvme0n1" && s.scheduler == "kyber").expect("kyber's counters");
    s.counters.iter().find(|(k, _)| k == name).map(|(_, v)| *v).expect(name)
}

#[test]
fn kyber_throttles_writes_to_keep_reads_under_their_target_on_a_mixed_load() {
    let m = small_machine(4);
    let jobs = mixed_load();
    let target_ns = 500_000.0;
    let (none, _) = run_checked(&m, &Settings::default(), &jobs, 1);
    let (kyber, _) = run_checked(&m, &kyber_settings(Some(500_000)), &jobs, 1);
    let read_mean = |r: &blksim::stats::RunReport| r.jobs[0].dirs[0].clat.mean();
    assert!(
        read_mean(&none) > 2.0 * target_ns,
        "without a scheduler the reads wait behind the writes: {}",
        read_mean(&none)
    );
    assert!(read_mean(&kyber) < target_ns / 2.0, "kyber keeps the reads under their target: {}", read_mean(&kyber));
    assert!(iops(&kyber, 0) > 5.0 * iops(&none, 0), "reads: {} vs {} IOPS", iops(&kyber, 0), iops(&none, 0));
    // By throttling the writes: fewer write tokens, dispatches that found none.
    let write_iops =
        |r: &blksim::stats::RunReport| r.jobs[1].dirs[1].total_ios as f64 / (r.jobs[1].runtime_ns as f64 / 1e9);
    assert!(write_iops(&kyber) < write_iops(&none), "writes pay: {} vs {}", write_iops(&kyber), write_iops(&none));
    assert!(kyber_counter(&kyber, "write_depth") < 128 / 4, "write depth {}", kyber_counter(&kyber, "write_depth"));
    assert!(kyber_counter(&kyber, "write_throttled") > 0);
    assert_eq!(kyber_counter(&kyber, "read_depth"), 256, "reads are never throttled below their maximum");
    // With the default 2 ms read target these reads are good: kyber leaves the depths alone.
    let (default, _) = run_checked(&m, &kyber_settings(None), &jobs, 1);
    assert_eq!(kyber_counter(&default, "depth_adjustments"), 0);
    assert!(read_mean(&default) < 2_000_000.0 && read_mean(&default) > 2.0 * target_ns);
}

#[test]
fn a_job_over_two_devices_inserts_each_request_into_its_own_devices_scheduler() {
    // One io_uring job over nvme0n1 (mq-deadline) and nvme1n1 (kyber): a
    // batch holds requests of both; each scheduler gets only its device's.
    let m = small_machine(2);
    let dev = ["nvme0n1".to_string(), "nvme1n1".to_string()];
    let mut s = Settings::default();
    s.apply_write("/sys/block/nvme0n1/queue/scheduler=mq-deadline", &dev).unwrap();
    s.apply_write("/sys/block/nvme1n1/queue/scheduler=kyber", &dev).unwrap();
    let mut j = job("two", uring(false), RwKind::RandRead, 4096, 32, "nvme0n1", 5);
    j.filenames.push("/dev/nvme1n1".into());
    j.iodepth_batch_submit = 16;
    let (r, _) = run_checked(&m, &s, &[j], 1);
    let disk = |name: &str| r.disks.iter().find(|d| d.name == name).unwrap_or_else(|| panic!("{name}")).ios[0];
    let (a, b) = (disk("nvme0n1"), disk("nvme1n1"));
    assert!(a > 1000 && b > 1000 && a.abs_diff(b) * 50 < a, "both devices did their share: {a} and {b}");
    let lock = |name: &str| r.locks.iter().find(|l| l.name == name).unwrap_or_else(|| panic!("{name}")).acquisitions;
    // mq-deadline takes dd->lock to insert and dispatch nvme0n1's requests only; kyber its own locks for nvme1n1's.
    assert!(lock("nvme0n1 dd->lock") >= a && lock("nvme0n1 dd->lock") < 4 * a);
    assert!(lock("nvme1n1 khd->lock") >= b && lock("nvme1n1 khd->lock") < 4 * b);
}
