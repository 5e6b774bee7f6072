//! fio's workload shaping in the job loop: `rate`/`rate_iops` (linear and
//! poisson), `thinktime` (sleeping or spinning), `thinkcycles`, `bssplit`'s size mix and
//! `io_size`'s I/O count, each run through the whole model.

mod common;

use blksim::stats::RunReport;
use blksim::workload::{
    BsSplit, Direction, IoEngine, JobConfig, RateProcess, RwKind, Thinktime, VerifyAlgo, VerifyConfig,
};
use common::{job, run_checked, small_machine, uring};

fn ios(r: &RunReport, d: Direction) -> u64 {
    r.jobs[0].dirs[d.index()].total_ios
}

fn randread(runtime_ms: u64, iodepth: u32) -> JobConfig {
    job("paced", uring(false), RwKind::RandRead, 4096, iodepth, "nvme0n1", runtime_ms)
}

fn run(j: JobConfig) -> RunReport {
    run_checked(&small_machine(2), &Default::default(), &[j], 1).0
}

#[test]
fn rate_1m_with_4k_blocks_gives_256_iops() {
    let mut j = randread(2000, 1);
    j.rate = [1 << 20, 0, 0];
    let r = run(j);
    // 1 MiB/s of 4 KiB: 256 a second, 512 in two seconds (linear: to the I/O).
    assert_eq!(ios(&r, Direction::Read), 512);
    assert_eq!(r.jobs[0].dirs[0].io_bytes, 2 << 20);
}

#[test]
fn rate_iops_holds_at_depth_and_per_direction() {
    let mut j = randread(1000, 8);
    j.rw = RwKind::RandRw;
    j.rate_iops = [3000, 1000, 0];
    let r = run(j);
    let (rd, wr) = (ios(&r, Direction::Read), ios(&r, Direction::Write));
    assert!((2990..=3000).contains(&rd), "reads {rd}");
    assert!((990..=1000).contains(&wr), "writes {wr}");
}

#[test]
fn an_unpaced_job_runs_faster_than_its_rate() {
    let free = ios(&run(randread(200, 1)), Direction::Read);
    let mut j = randread(200, 1);
    j.rate_iops = [1000, 0, 0];
    let paced = ios(&run(j), Direction::Read);
    assert!(free > 1000, "unpaced: {free} I/Os in 200 ms");
    assert_eq!(paced, 200);
}

#[test]
fn poisson_keeps_the_mean_rate_and_its_gaps_vary() {
    let mut j = randread(2000, 4);
    j.rate_iops = [2000, 0, 0];
    j.rate_process = RateProcess::Poisson;
    j.record_ios = true;
    let r = run(j);
    let n = ios(&r, Direction::Read);
    // 4000 expected; a Poisson count's deviation is its square root (63).
    assert!((3800..=4200).contains(&n), "{n} I/Os");
    let mut starts: Vec<u64> = r.jobs[0].dirs[0].ios.iter().map(|io| io.start_ns).collect();
    starts.sort_unstable();
    let gaps: Vec<f64> = starts.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
    let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
    let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
    // Exponential gaps: the deviation is about the mean; linear pacing would give almost none.
    assert!(sd > 0.6 * mean, "gaps: mean {mean} ns, deviation {sd} ns");

    let mut linear = randread(2000, 4);
    linear.rate_iops = [2000, 0, 0];
    linear.record_ios = true;
    let r = run(linear);
    let mut starts: Vec<u64> = r.jobs[0].dirs[0].ios.iter().map(|io| io.start_ns).collect();
    starts.sort_unstable();
    let gaps: Vec<f64> = starts.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
    let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
    let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
    assert!(sd < 0.2 * mean, "linear gaps: mean {mean} ns, deviation {sd} ns");
}

#[test]
fn thinktime_sleeps_and_lowers_iops_without_cpu() {
    let base = run(randread(500, 1));
    let mut j = randread(500, 1);
    j.thinktime = Thinktime { think_us: 1000, ..Thinktime::default() };
    let r = run(j);
    let (n0, n) = (ios(&base, Direction::Read), ios(&r, Direction::Read));
    // One think time of 1 ms (and some 50 µs of timer slack at most) per I/O.
    assert!(n < n0 / 5, "{n} I/Os with thinktime, {n0} without");
    assert!((440..=500).contains(&n), "{n} I/Os in 500 ms of 1 ms think times");
    // Sleeping costs no user time: the job's CPU use is well under its time.
    let busy = r.jobs[0].usr_ns + r.jobs[0].sys_ns;
    assert!(busy < r.jobs[0].runtime_ns / 20, "busy {busy} ns of {} ns", r.jobs[0].runtime_ns);
}

#[test]
fn thinktime_spin_shows_as_user_cpu() {
    let mut j = randread(500, 1);
    j.thinktime = Thinktime { think_us: 1000, spin_us: 1000, ..Thinktime::default() };
    let r = run(j);
    let job = &r.jobs[0];
    assert!(job.usr_ns > job.runtime_ns * 85 / 100, "user {} ns of {} ns", job.usr_ns, job.runtime_ns);
    let mut half = randread(500, 1);
    half.thinktime = Thinktime { think_us: 1000, spin_us: 500, ..Thinktime::default() };
    let h = run(half);
    let u = h.jobs[0].usr_ns as f64 / h.jobs[0].runtime_ns as f64;
    assert!((0.35..0.6).contains(&u), "half spun: user {u}");
}

#[test]
fn thinktime_blocks_thinks_after_every_nth_io() {
    let every = |blocks: u64, issue: bool| {
        let mut j = randread(500, 4);
        j.thinktime =
            Thinktime { think_us: 2000, blocks, blocks_set: true, count_issued: issue, ..Thinktime::default() };
        ios(&run(j), Direction::Read)
    };
    // About 2 ms per batch of N (the batch itself is short).
    let (one, eight) = (every(1, false), every(8, true));
    assert!((200..=250).contains(&one), "{one}");
    assert!((1600..=2000).contains(&eight), "{eight}");
}

#[test]
fn thinktime_iotime_thinks_after_that_long_of_io() {
    let mut j = randread(1000, 1);
    j.thinktime = Thinktime { think_us: 10_000, iotime_us: 10_000, ..Thinktime::default() };
    let r = run(j);
    let free = ios(&run(randread(1000, 1)), Direction::Read);
    let n = ios(&r, Direction::Read);
    // Half the time thinking: about half the I/O.
    assert!(n > free * 4 / 10 && n < free * 6 / 10, "{n} of {free}");
}

/// A psync job of `n` 4 KiB I/Os (`rw`), with `thinkcycles` set to `cycles`: its user time, ns.
fn user_ns_of(rw: RwKind, n: u64, cycles: u64, edit: impl Fn(&mut JobConfig)) -> u64 {
    let mut j = job("spin", IoEngine::Psync, rw, 4096, 1, "nvme0n1", 0);
    (j.runtime_ns, j.time_based, j.size) = (None, false, Some(n * 4096));
    j.thinkcycles = cycles;
    edit(&mut j);
    let r = run(j);
    r.jobs[0].usr_ns
}

#[test]
fn thinkcycles_spins_one_pause_a_cycle_after_each_io() {
    // fio's cycles_spin: `thinkcycles` iterations of its `nop` (PAUSE on x86) after each io_u,
    // user time, whatever else the loop does.
    let pause = small_machine(2).costs.pause_ns;
    let spun = user_ns_of(RwKind::Read, 200, 1000, |_| {}) - user_ns_of(RwKind::Read, 200, 0, |_| {});
    assert_eq!(spun, 200 * 1000 * pause);
    // The I/O rate drops by as much: the spin is in fio's loop, between one I/O and the next.
    let (mut fast, mut slow) = (randread(50, 1), randread(50, 1));
    (fast.ioengine, slow.ioengine, slow.thinkcycles) = (IoEngine::Psync, IoEngine::Psync, 1000);
    let (n0, n) = (ios(&run(fast), Direction::Read), ios(&run(slow), Direction::Read));
    let per_io = |n: u64| 50_000_000 / n;
    let added = per_io(n) - per_io(n0);
    assert!(added.abs_diff(1000 * pause) < 1000 * pause / 20, "{added} ns more an I/O ({n0} -> {n})");
}

#[test]
fn thinkcycles_skips_fsyncs_and_do_verifys_read_back() {
    let pause = small_machine(2).costs.pause_ns;
    // do_io spins only after a read, write or trim (`ddir_rw`): not after fsync=4's fsyncs.
    let fsync = |j: &mut JobConfig| j.sync_every = [4, 0];
    let spun = user_ns_of(RwKind::Write, 100, 10, fsync) - user_ns_of(RwKind::Write, 100, 0, fsync);
    assert_eq!(spun, 100 * 10 * pause);
    // do_verify's loop has no spin: the 100 writes spin, their 100 read-backs do not.
    let verify = |j: &mut JobConfig| {
        j.verify = Some(VerifyConfig {
            algo: VerifyAlgo::Crc32c,
            do_verify: true,
            backlog: 0,
            backlog_batch: 0,
            experimental: false,
            pattern: false,
            save_state: false,
        })
    };
    let spun = user_ns_of(RwKind::Write, 100, 10, verify) - user_ns_of(RwKind::Write, 100, 0, verify);
    assert_eq!(spun, 100 * 10 * pause);
}

#[test]
fn bssplit_mix_matches_its_percentages() {
    let mut j = randread(0, 8);
    j.runtime_ns = None;
    j.time_based = false;
    j.size = Some(256 << 20);
    j.bs = [4096; 3];
    j.bssplit[0] = vec![BsSplit { bs: 4096, perc: 30 }, BsSplit { bs: 65536, perc: 70 }];
    j.record_ios = true;
    // Without the random map: with it, fio cuts a 64k I/O short at the first
    // block already done (offsets.rs checks that).
    j.norandommap = true;
    let r = run(j);
    let sizes: Vec<u32> = r.jobs[0].dirs[0].ios.iter().map(|io| io.bytes).collect();
    let small = sizes.iter().filter(|&&b| b == 4096).count() as f64 / sizes.len() as f64;
    assert!(sizes.iter().all(|&b| b == 4096 || b == 65536));
    assert!((small - 0.30).abs() < 0.03, "4k share {small} of {} I/Os", sizes.len());
    // fio's count: I/O until the bytes reach size.
    let bytes = r.jobs[0].dirs[0].io_bytes;
    assert!((256 << 20..(256 << 20) + 65536).contains(&bytes), "{bytes}");
}

#[test]
fn sequential_bssplit_fits_the_region() {
    let mut j = randread(0, 4);
    j.rw = RwKind::Read;
    j.runtime_ns = None;
    j.time_based = false;
    j.size = Some(1 << 20);
    // 10% 4k, the rest (90%) 8k: the last entry takes what the percentages leave.
    j.bssplit[0] = vec![BsSplit { bs: 4096, perc: 10 }, BsSplit { bs: 8192, perc: 20 }];
    j.record_ios = true;
    let r = run(j);
    let d = &r.jobs[0].dirs[0];
    assert_eq!(d.io_bytes, 1 << 20, "sequential I/O ends where the region does");
    let small = d.ios.iter().filter(|io| io.bytes == 4096).count() as f64 / d.ios.len() as f64;
    assert!((0.03..0.2).contains(&small), "4k share {small}");
}

#[test]
fn io_size_caps_the_io_count_as_fio_does() {
    let count = |io_size: u64, size: u64, loops: u32, rw: RwKind| {
        let mut j = randread(0, 1);
        j.ioengine = IoEngine::Null;
        j.rw = rw;
        j.runtime_ns = None;
        j.time_based = false;
        j.size = Some(size);
        j.io_size = Some(io_size);
        j.loops = loops;
        ios(&run(j), Direction::Read)
    };
    // Issued until the bytes reach io_size (x loops): a last partial block counts.
    assert_eq!(count(10_001, 1 << 20, 1, RwKind::Read), 3);
    assert_eq!(count(10_001, 1 << 20, 2, RwKind::Read), 5);
    assert_eq!(count(3 << 20, 1 << 20, 1, RwKind::RandRead), 768);
    assert_eq!(count(1 << 20, 8 << 20, 1, RwKind::Read), 256);
}

#[test]
fn paced_runs_are_deterministic_and_every_engine_finishes() {
    for engine in [IoEngine::Psync, IoEngine::Libaio, uring(false), uring(true), IoEngine::Null] {
        let mut j = randread(100, 4);
        j.ioengine = engine.clone();
        j.size = Some(1 << 30);
        j.rw = RwKind::RandRw;
        j.rate_iops = [2000, 500, 0];
        j.rate_process = RateProcess::Poisson;
        j.thinktime = Thinktime { think_us: 300, spin_us: 100, blocks: 3, blocks_set: true, ..Thinktime::default() };
        j.rate_ignore_thinktime = true;
        j.bssplit[1] = vec![BsSplit { bs: 4096, perc: 50 }, BsSplit { bs: 16384, perc: 50 }];
        let a = run(j.clone());
        let b = run(j);
        assert_eq!(format!("{:?}", a.jobs[0].dirs), format!("{:?}", b.jobs[0].dirs), "{engine:?}");
        assert!(ios(&a, Direction::Read) > 0 && ios(&a, Direction::Write) > 0, "{engine:?}");
    }
}

#[test]
fn a_rate_too_low_for_its_blocks_is_refused_not_run_for_decades() {
    let mut j = randread(0, 1);
    j.ioengine = IoEngine::Null;
    j.rw = RwKind::Read;
    j.runtime_ns = None;
    j.time_based = false;
    j.bs = [2 << 30; 3];
    j.size = Some(8 << 30);
    j.rate = [1, 0, 0];
    let e = blksim::run(&small_machine(2), &Default::default(), &[j], 1).unwrap_err();
    assert_eq!(e.kind, blksim::ErrorKind::BadInput, "{e:?}");
    assert!(e.message.contains("rate too low"), "{}", e.message);
}
