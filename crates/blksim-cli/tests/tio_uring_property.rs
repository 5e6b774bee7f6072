//! Issue 10, point 7: every t/io_uring option combination the front end
//! accepts runs to the end on every built-in machine. A seeded sample of
//! option combinations (block size, depth, batches, polling, registered
//! files and buffers, sync, sequential, threads, files, CPUs, kernel knobs
//! that make queues poll or not) goes through the real binary; each run
//! must exit 0 (or 2 with one clear message for what is refused), never 70
//! (a stall or a broken invariant, which the CLI checks after every run)
//! and never panic, within a wall-clock bound.
//!
//! `BLKSIM_TIO_SEED=S` and `BLKSIM_TIO_CASES=N` rerun a failing case (its
//! seed is printed) or run a longer sample.

use std::process::Command;
use std::time::{Duration, Instant};

#[path = "../../blksim-fio/tests/splitmix/mod.rs"]
mod splitmix;
use splitmix::Gen;

/// The built-in machines: name, CPUs, block devices, NVMe generic char devices.
const MACHINES: &[(&str, u32, &[&str], &[&str])] = &[
    ("spr-gen5", 128, &["/dev/nvme0n1", "/dev/nvme1n1", "/dev/nvme5n1", "/dev/nullb0"], &["/dev/ng0n1", "/dev/ng5n1"]),
    ("x86-gen5-5m", 64, &["/dev/nvme0n1", "/dev/nvme1n1"], &["/dev/ng0n1", "/dev/ng1n1"]),
    ("ryzen-7950x", 32, &["/dev/nullb0"], &[]),
    ("hp-ia64-2008", 16, &["/dev/sda", "/dev/sdb", "/dev/sdm"], &[]),
    ("spr-dsa", 128, &["/dev/dsa0"], &[]),
];

/// A depth, mostly small, up to 512.
fn depth(g: &mut Gen) -> u64 {
    match g.below(4) {
        0 => 1 + g.below(4),
        1 => 1 + g.below(32),
        2 => 1 + g.below(128),
        _ => 1 + g.below(512),
    }
}

/// One case's arguments to `blksim t-io_uring`.
fn case(seed: u64) -> Vec<String> {
    let mut g = Gen(seed);
    let (machine, ncpus, blocks, generic) = MACHINES[g.below(MACHINES.len() as u64) as usize];
    // NVMe passthrough (-u1) on the generic char devices; now and then on a block device (refused).
    let passthru = !generic.is_empty() && g.chance(20);
    let devices = if passthru && !g.chance(5) { generic } else { blocks };
    let mut a: Vec<String> = vec!["t-io_uring".into(), "--machine".into(), machine.into()];
    let d = depth(&mut g);
    a.push(format!("-b{}", g.pick(&["512", "4096", "4096", "131072", "1000"])));
    a.push(format!("-d{d}"));
    a.push(format!("-c{}", g.below(d + 9)));
    a.push(format!("-s{}", g.below(d + 9)));
    if passthru {
        // (A char device refuses t/io_uring's default O_DIRECT open: -O0, now and then forgotten.)
        a.push("-u1".into());
        if !g.chance(5) {
            a.push("-O0".into());
        }
    }
    for flag in ["-p", "-F", "-B", "-X", "-R"] {
        if g.chance(60) {
            a.push(format!("{flag}{}", g.below(2)));
        }
    }
    if g.chance(10) {
        a.push("-S1".into());
    }
    for flag in ["-V", "-e"] {
        if g.chance(5) {
            a.push(format!("{flag}{}", g.below(2)));
        }
    }
    a.extend(["-n".into(), (1 + g.below(4)).to_string()]);
    a.extend(["-r".into(), format!("{}us", 100 + g.below(900))]);
    if g.chance(70) {
        let lo = g.below(ncpus as u64);
        let cpus =
            if g.chance(60) { lo.to_string() } else { format!("{lo}-{}", (lo + g.below(4)).min(ncpus as u64 - 1)) };
        a.extend(["--taskset".into(), cpus]);
    }
    let mut cmdline = Vec::new();
    for (chance, knob) in [
        (40, format!("nvme.poll_queues={}", g.pick(&["1", "4", "126"]))),
        (10, format!("nvme.write_queues={}", g.pick(&["1", "4", "64"]))),
        (20, format!("null_blk.poll_queues={}", g.pick(&["0", "1", "4"]))),
        (20, format!("null_blk.irqmode={}", g.pick(&["0", "1", "2"]))),
        (15, "blksim.polled_unsupported=eopnotsupp".to_string()),
        (10, format!("nvme.io_queue_depth={}", g.pick(&["2", "16", "64"]))),
        (15, "intremap=posted_msi".to_string()),
        (15, g.pick(&["iommu=pt", "iommu.strict=1", "intel_iommu=off"]).to_string()),
        (10, "nosmt".to_string()),
    ] {
        if g.chance(chance) {
            cmdline.push(knob);
        }
    }
    if !cmdline.is_empty() {
        a.extend(["--cmdline".into(), cmdline.join(" ")]);
    }
    if g.chance(10) {
        a.extend(["--patch".into(), "dma-premap".into()]);
    }
    if g.chance(10) {
        a.extend(["--patch".into(), "hybrid-iopoll".into()]);
    }
    if g.chance(10) {
        a.push("--breakdown".into());
    }
    a.extend(["--seed".into(), g.below(100).to_string(), "--".into()]);
    for _ in 0..1 + g.below(3) {
        a.push(devices[g.below(devices.len() as u64) as usize].into());
    }
    a
}

/// What is wrong with a case's outcome, if anything: Ok(exit status).
fn check(args: &[String]) -> Result<i32, String> {
    let t0 = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_blksim")).args(args).output().unwrap();
    let wall = t0.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code().unwrap_or(-1);
    if wall > Duration::from_secs(20) {
        return Err(format!("took {wall:?}"));
    }
    match code {
        0 => {
            let stdout = String::from_utf8_lossy(&out.stdout);
            let ended = stdout.contains("Maximum IOPS=")
                || stdout.contains("io: unexpected ret=")
                || stdout.contains("preadv2: ");
            if !ended {
                return Err(format!("exit 0 without t/io_uring's last lines: {stdout}"));
            }
            Ok(0)
        }
        2 if err.starts_with("blksim: ") && !err.contains("panicked") && !err.contains("internal error") => Ok(2),
        c => Err(format!("exit {c}: {err}")),
    }
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| v.parse().unwrap_or_else(|_| panic!("{name}={v}: a number")))
}

#[test]
fn every_accepted_t_io_uring_option_combination_runs_to_the_end_on_every_machine() {
    let base = env_u64("BLKSIM_TIO_SEED").unwrap_or(0x7105_eed0);
    let cases = env_u64("BLKSIM_TIO_CASES").unwrap_or(240);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
    let t0 = Instant::now();
    let results: Vec<(u64, Result<i32, String>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    (t..cases).step_by(threads as usize).map(|i| (base + i, check(&case(base + i)))).collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let ran = results.iter().filter(|(_, r)| r == &Ok(0)).count();
    let refused = results.iter().filter(|(_, r)| r == &Ok(2)).count();
    println!("t/io_uring sample: {cases} cases, {ran} ran, {refused} refused, in {:.1} s", t0.elapsed().as_secs_f64());
    let failures: Vec<String> = results
        .iter()
        .filter_map(|(seed, r)| r.as_ref().err().map(|e| (seed, e)))
        .map(|(seed, e)| {
            format!("seed {seed} (BLKSIM_TIO_SEED={seed} BLKSIM_TIO_CASES=1): {e}\n  blksim {}", case(*seed).join(" "))
        })
        .collect();
    assert!(failures.is_empty(), "{} of {cases} cases failed:\n{}", failures.len(), failures.join("\n"));
    // The sample mostly runs: refusals are the exception (bad block sizes, DSA, what is not modelled).
    assert!(ran > cases as usize / 2, "{ran} of {cases} ran");
}
