//! fio's `io_submit_mode=offload` (`crates/blksim/src/fio/rate_submit.rs`):
//! fio's thread prepares io_us and hands each to one of `iodepth` submit
//! workers, each queueing its io_u with the engine at iodepth 1.

mod common;

use common::run_job_json as run;

fn ok(job: &str) -> serde_json::Value {
    let (code, v, err) = run(job);
    assert_eq!(code, Some(0), "{err}");
    v.unwrap()
}

fn read(v: &serde_json::Value) -> &serde_json::Value {
    &v["jobs"][0]["read"]
}

const JOB: &str = "[test]\nfilename=/dev/nvme0n1\ndirect=1\nrw=randread\nsize=8m\n";

#[test]
fn sixteen_workers_keep_sixteen_ios_at_the_drive_each_at_depth_one() {
    let off = ok(&format!("{JOB}ioengine=libaio\niodepth=16\nio_submit_mode=offload\n"));
    let inline = ok(&format!("{JOB}ioengine=libaio\niodepth=16\n"));
    let qd1 = ok(&format!("{JOB}ioengine=libaio\niodepth=1\n"));
    let iops = |v: &serde_json::Value| read(v)["iops"].as_f64().unwrap();
    // The drive sees as many I/Os in flight as inline at iodepth 16, far more than at 1.
    assert!((iops(&off) / iops(&inline) - 1.0).abs() < 0.1, "offload {:.0}, inline {:.0}", iops(&off), iops(&inline));
    assert!(iops(&off) > 4.0 * iops(&qd1), "offload {:.0}, iodepth 1 {:.0}", iops(&off), iops(&qd1));
    // Every io_u is issued and accounted once.
    assert_eq!(read(&off)["total_ios"].as_u64(), Some(2048));
    // fio's IO depths are the workers': all at 1; each commits and reaps one at a time.
    let j = &off["jobs"][0];
    assert_eq!(j["iodepth_level"]["1"].as_f64(), Some(100.0), "{}", j["iodepth_level"]);
    assert_eq!(j["iodepth_submit"]["4"].as_f64(), Some(100.0), "{}", j["iodepth_submit"]);
    assert_eq!(j["iodepth_complete"]["4"].as_f64(), Some(100.0), "{}", j["iodepth_complete"]);
    // slat runs from fio's thread getting the io_u to the worker's io_submit: the hand-over
    // (the enqueue, the worker's wake-up) makes it longer than inline's; slat + clat = lat.
    let mean = |v: &serde_json::Value, k: &str| read(v)[k]["mean"].as_f64().unwrap();
    assert!(
        mean(&off, "slat_ns") > mean(&inline, "slat_ns"),
        "slat {} vs {}",
        mean(&off, "slat_ns"),
        mean(&inline, "slat_ns")
    );
    assert!((mean(&off, "slat_ns") + mean(&off, "clat_ns") - mean(&off, "lat_ns")).abs() <= 1.0);
}

#[test]
fn a_sync_engine_offloaded_runs_iodepth_preads_at_once() {
    // psync caps an inline job at depth 1; offload's workers each block in their own pread.
    let off = ok(&format!("{JOB}ioengine=psync\niodepth=16\nio_submit_mode=offload\n"));
    let inline = ok(&format!("{JOB}ioengine=psync\niodepth=16\n"));
    let iops = |v: &serde_json::Value| read(v)["iops"].as_f64().unwrap();
    assert!(iops(&off) > 4.0 * iops(&inline), "offload {:.0}, inline {:.0}", iops(&off), iops(&inline));
    // A sync engine has no slat; its depth is 1 in each worker.
    assert!(read(&off)["slat_ns"]["N"].as_u64().unwrap_or(0) == 0, "{}", read(&off)["slat_ns"]);
    assert_eq!(off["jobs"][0]["iodepth_level"]["1"].as_f64(), Some(100.0));
}

#[test]
fn the_null_engine_offloaded_completes_every_io_once() {
    // fio's t0010 (a tenth as large): it runs and completes the job.
    let v = ok("[test]\nioengine=null\nsize=1g\nio_submit_mode=offload\niodepth=16\n");
    assert_eq!((read(&v)["total_ios"].as_u64(), v["jobs"][0]["error"].as_u64()), (Some(262_144), Some(0)));
    // The null engine at a worker's iodepth 1 is synchronous: no slat, no commits.
    assert!(read(&v)["slat_ns"]["N"].as_u64().unwrap_or(0) == 0, "{}", read(&v)["slat_ns"]);
    assert_eq!(v["jobs"][0]["iodepth_submit"]["4"].as_f64(), Some(0.0));
}

#[test]
fn a_rate_is_held_by_fios_thread_alone_whatever_the_device_latency() {
    // Inline, a sync engine's rate cannot pass one I/O per device latency (fio waits for each);
    // offloaded, fio's thread sleeps between io_us without waiting for those in flight, and
    // 32 workers carry them: the rate is held.
    let rated = format!("{JOB}ioengine=psync\niodepth=32\nrate_iops=50000\n");
    let off = ok(&format!("{rated}io_submit_mode=offload\n"));
    let inline = ok(&rated);
    let iops = |v: &serde_json::Value| read(v)["iops"].as_f64().unwrap();
    assert!((iops(&off) / 50_000.0 - 1.0).abs() < 0.02, "offload {:.0} IOPS", iops(&off));
    assert!(iops(&inline) < 25_000.0, "inline {:.0} IOPS", iops(&inline));
}

#[test]
fn serialize_overlap_lets_one_overlapping_io_u_fly_at_a_time_across_jobs() {
    // Four offloaded jobs on the same 4 KiB: serialized, one I/O in flight at a time across
    // them (a lone job's rate at depth 1); unserialized, four at once.
    let job = |s: u32| {
        format!(
            "[t]\nioengine=libaio\ndirect=1\nfilename=/dev/nvme0n1\nthread=1\nsize=4k\nio_submit_mode=offload\n\
             iodepth=1\nnumjobs=4\nloops=1000000\nruntime=20ms\ngroup_reporting\nserialize_overlap={s}\n"
        )
    };
    let one = ok("[t]\nioengine=libaio\ndirect=1\nfilename=/dev/nvme0n1\nsize=4k\nloops=1000000\nruntime=20ms\n");
    let iops = |v: &serde_json::Value| read(v)["iops"].as_f64().unwrap();
    let (on, off, lone) = (iops(&ok(&job(1))), iops(&ok(&job(0))), iops(&one));
    assert!((on / lone - 1.0).abs() < 0.1, "serialized {on:.0} IOPS, a lone job {lone:.0}");
    assert!(off > 3.0 * lone, "unserialized {off:.0} IOPS, a lone job {lone:.0}");
}

#[test]
fn t0013_eight_jobs_serializing_on_one_block_run_to_the_end() {
    // fio's t0013 (a hundredth as long): criterion, exit 0; here also every job did I/O.
    let v = ok("[test]\nioengine=null\nthread=1\nsize=4K\nblocksize=4K\nio_submit_mode=offload\niodepth=1\n\
                serialize_overlap=1\nnumjobs=8\nloops=1000000\nruntime=100ms\n");
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 8);
    for j in jobs {
        assert!(j["read"]["total_ios"].as_u64().unwrap() > 1000 && j["error"].as_u64() == Some(0), "{}", j["jobname"]);
    }
}

#[test]
fn what_offload_does_not_model_is_refused() {
    let (code, _, err) = run(&format!("{JOB}ioengine=libaio\nserialize_overlap=1\n"));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("serialize_overlap without io_submit_mode=offload"), "{err}");
    for (extra, what) in [
        ("thinktime=10\n", "thinktime"),
        ("verify=crc32c\nrw=randwrite\n", "verify"),
        ("write_lat_log=x\n", "per-I/O logs"),
    ] {
        let (code, _, err) = run(&format!("{JOB}ioengine=libaio\niodepth=4\nio_submit_mode=offload\n{extra}"));
        assert_eq!(code, Some(2), "{extra}: {err}");
        assert!(err.contains(&format!("io_submit_mode=offload with {what}")), "{extra}: {err}");
    }
}
