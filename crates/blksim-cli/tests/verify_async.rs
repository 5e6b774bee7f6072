//! fio's `verify_async` (`crates/blksim/src/fio/verify_async.rs`): a
//! verifying read's check moves from fio's thread to its verify threads,
//! and its io_u stays taken until a thread has checked it.

mod common;

use common::run_job_json as run;

fn ok(job: &str) -> serde_json::Value {
    let (code, v, err) = run(job);
    assert_eq!(code, Some(0), "{err}");
    v.unwrap()
}

/// A job that checks every block it reads (fio verifies a read-only job's
/// reads) with a costly checksum: its checks, not the drive, bound it.
fn job(threads: u32, extra: &str) -> String {
    format!(
        "[v]\nfilename=/dev/nvme0n1\ndirect=1\nioengine=libaio\nrw=randread\nbs=64k\niodepth=16\nsize=64m\n\
         verify=sha512\nruntime=20ms\ntime_based=1\nverify_async={threads}\n{extra}"
    )
}

fn reads(v: &serde_json::Value) -> u64 {
    v["jobs"][0]["read"]["total_ios"].as_u64().unwrap()
}

/// `field` (user_ns, sys_ns) of CPUs 0-3 (the report lists the CPUs that ran anything).
fn cpu_ns(v: &serde_json::Value, field: &str) -> [u64; 4] {
    let mut ns = [0; 4];
    for c in v["blksim"]["cpu_time"].as_array().unwrap() {
        let cpu = c["cpu"].as_u64().unwrap() as usize;
        if cpu < 4 {
            ns[cpu] = c[field].as_u64().unwrap();
        }
    }
    ns
}

#[test]
fn the_checks_leave_fios_thread_for_the_verify_threads() {
    let inline = ok(&job(0, "cpus_allowed=0-3\n"));
    let two = ok(&job(2, "cpus_allowed=0-3\n"));
    let usr = |v: &serde_json::Value| v["jobs"][0]["usr_cpu"].as_f64().unwrap();
    // fio's thread no longer sums what it reads: its user time falls ...
    assert!(usr(&inline) > 90.0 && usr(&two) < 10.0, "usr {:.1}% with threads, {:.1}% inline", usr(&two), usr(&inline));
    // ... and the checks run on the threads' CPUs (nothing runs there inline).
    let (u0, u2) = (cpu_ns(&inline, "user_ns"), cpu_ns(&two, "user_ns"));
    assert_eq!(u0[1..].iter().sum::<u64>(), 0, "{u0:?}");
    assert!(u2[1] > 10_000_000 && u2[2] > 10_000_000, "{u2:?}");
    // Two threads check twice what fio's thread checked alone.
    assert!(reads(&two) as f64 > 1.6 * reads(&inline) as f64, "{} vs {}", reads(&two), reads(&inline));
    // Every I/O issued is reaped once.
    let once = &two["blksim"]["exactly_once"];
    assert_eq!(once["ios_issued"], once["ios_reaped"], "{once}");
    assert_eq!(once["requests_live"].as_u64(), Some(0), "{once}");
}

#[test]
fn the_threads_checks_bound_the_read_backs_and_fio_waits_for_free_io_us() {
    // sha512 at 64 KiB: each check takes longer than the drive's read; one
    // thread per CPU, so twice the threads check twice as many.
    let one = ok(&job(1, "cpus_allowed=0-2\n"));
    let two = ok(&job(2, "cpus_allowed=0-2\n"));
    let ratio = reads(&two) as f64 / reads(&one) as f64;
    assert!(ratio > 1.6, "reads {} with two threads, {} with one", reads(&two), reads(&one));
    // The lone thread is busy checking nearly all the time ...
    let busy = cpu_ns(&one, "user_ns")[1] as f64 / 20e6;
    assert!(busy > 0.9, "the thread's CPU is {:.0}% in user time", busy * 100.0);
    // ... and fio's thread, out of io_us, waits on free_cond (futex sleeps, not I/O waits).
    assert!(one["jobs"][0]["ctx"].as_u64().unwrap() > 100, "ctx {}", one["jobs"][0]["ctx"]);
}

#[test]
fn verify_async_cpus_move_the_jobs_thread_not_the_verify_threads() {
    // fio 3.42 sets verify_async_cpus as the affinity of td->pid: the job's thread.
    let v = ok(&job(1, "cpus_allowed=0\nverify_async_cpus=3\n"));
    let (u, sys) = (cpu_ns(&v, "user_ns"), cpu_ns(&v, "sys_ns"));
    // The thread inherited CPU 0 and checks there; fio's thread runs (and submits) on CPU 3.
    assert!(u[0] > 10_000_000 && sys[0] < sys[3], "user {u:?}, sys {sys:?}");
    assert!(u[3] > 0 && u[1] == 0 && u[2] == 0 && sys[1] == 0 && sys[2] == 0, "user {u:?}, sys {sys:?}");
    // A CPU the machine does not have is an error naming the option.
    let (code, _, err) = run(&job(1, "verify_async_cpus=4096\n"));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("verify_async_cpus"), "{err}");
}
