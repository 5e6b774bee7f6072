//! fsync and fdatasync as fio issues them (`get_rw_ddir`: after every
//! `fsync` writes issued, when the last io_u was a write) and as a block
//! device without a volatile write cache takes them (`blkdev_fsync`: the
//! flush stripped in `submit_bio_noacct`, nothing reaches the device);
//! libaio's IOCB_CMD_FSYNC run by the CPU's kworker (`aio_fsync_work`);
//! io_uring's IORING_OP_FSYNC by the ring's io-wq worker;
//! `end_fsync` unaccounted; fio's report (the sync section, `issued rwts`'
//! fourth count, IO depths over the data I/Os only); and the refusals.

mod common;

use common::run_job_json as run;
use serde_json::Value;

fn ok(job: &str) -> Value {
    let (code, v, err) = run(job);
    assert_eq!(code, Some(0), "{err}");
    v.unwrap()
}

fn job(engine: &str, rw: &str, extra: &str) -> String {
    format!(
        "[t]\nfilename=/dev/nvme0n1\ndirect=1\nioengine={engine}\nrw={rw}\nbs=4k\nsize=64m\nruntime=5ms\ntime_based\n{extra}"
    )
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

#[test]
fn an_fsync_follows_every_nth_write_and_never_reaches_the_device() {
    for (opt, n) in [("fsync", 4), ("fdatasync", 2), ("fsync", 1)] {
        let v = ok(&job("psync", "randwrite", &format!("{opt}={n}")));
        let j = &v["jobs"][0];
        let (writes, syncs) = (u(&j["write"]["total_ios"]), u(&j["sync"]["total_ios"]));
        assert!(writes > 50, "{opt}={n}: {writes} writes");
        // One after each n-th write; the run may end between a write and its sync.
        assert!(writes / n - syncs <= 1 && syncs <= writes / n, "{opt}={n}: {syncs} syncs after {writes} writes");
        assert_eq!(u(&j["sync"]["lat_ns"]["N"]), syncs, "{opt}={n}");
        // The flush is stripped: the device sees the writes only.
        assert_eq!(u(&v["disk_util"][0]["write_ios"]), writes, "{opt}={n}");
        // fio divides the depth counts, syncs included, by the data I/Os: 1=125.0% with fsync=4.
        let depth1 = j["iodepth_level"]["1"].as_f64().unwrap();
        let want = 100.0 * (writes + syncs) as f64 / writes as f64;
        assert!((depth1 - want).abs() < 0.1, "{opt}={n}: IO depths 1={depth1}%, want {want:.1}%");
        // A sync engine's fsync: the syscall and blkdev_fsync, far below a write's device time.
        let (sync_ns, write_ns) =
            (j["sync"]["lat_ns"]["mean"].as_f64().unwrap(), j["write"]["clat_ns"]["mean"].as_f64().unwrap());
        assert!(
            sync_ns > 100.0 && sync_ns * 10.0 < write_ns,
            "{opt}={n}: sync {sync_ns:.0} ns, write {write_ns:.0} ns"
        );
    }
}

#[test]
fn libaio_hands_its_fsync_to_the_cpus_kworker() {
    let v = ok(&job("libaio", "randwrite", "iodepth=16\nfsync=8"));
    let j = &v["jobs"][0];
    let (writes, syncs) = (u(&j["write"]["total_ios"]), u(&j["sync"]["total_ios"]));
    assert!(writes > 200 && writes / 8 - syncs <= 1, "{syncs} syncs after {writes} writes");
    assert_eq!(u(&v["disk_util"][0]["write_ios"]), writes);
    // io_submit queues the work (aio_fsync → schedule_work); the woken kworker runs at
    // the CPU's next scheduling point, and fio reaps the sync in its next getevents:
    // switches and the work, well below a write's device time, above a sync engine's fsync(2).
    let sync_ns = j["sync"]["lat_ns"]["mean"].as_f64().unwrap();
    let write_ns = j["write"]["clat_ns"]["mean"].as_f64().unwrap();
    let psync = ok(&job("psync", "randwrite", "fsync=8"));
    let psync_ns = psync["jobs"][0]["sync"]["lat_ns"]["mean"].as_f64().unwrap();
    assert!(
        sync_ns > 1000.0 && sync_ns > 2.0 * psync_ns && sync_ns * 4.0 < write_ns,
        "{sync_ns} {psync_ns} {write_ns}"
    );
    // The kworker's time is the CPU's, not fio's thread's.
    let cpu_sys = v["blksim"]["cpu_time"][0]["sys_pct"].as_f64().unwrap();
    assert!(cpu_sys > j["sys_cpu"].as_f64().unwrap() + 1.0, "CPU sys {cpu_sys}%, the job's {}", j["sys_cpu"]);
}

#[test]
fn io_uring_hands_its_fsync_to_the_rings_io_wq_worker() {
    // IORING_OP_FSYNC is force-async: io_queue_iowq wakes the ring's io-wq worker (created
    // at the first fsync), which runs blkdev_fsync and completes it through the submitter's
    // task_work. The counts and IO depths are fio's (the cross-check runs the real fio).
    let v = ok(&job("io_uring", "randwrite", "iodepth=16\nfsync=8"));
    let j = &v["jobs"][0];
    let (writes, syncs) = (u(&j["write"]["total_ios"]), u(&j["sync"]["total_ios"]));
    assert!(writes > 200 && writes / 8 - syncs <= 1, "{syncs} syncs after {writes} writes");
    assert_eq!(u(&v["disk_util"][0]["write_ios"]), writes);
    let depth1 = j["iodepth_level"]["1"].as_f64().unwrap();
    assert!(depth1 < 1.0, "IO depths 1={depth1}% at iodepth 16");
    // The first fsync waits for the worker's creation (create_io_thread); the later ones
    // wake it: a switch to it and back, well below a write's device time.
    let lat = &j["sync"]["lat_ns"];
    let (max, p50, write_ns) = (
        u(&lat["max"]) as f64,
        u(&lat["percentile"]["50.000000"]) as f64,
        j["write"]["clat_ns"]["mean"].as_f64().unwrap(),
    );
    assert!(max > 10_000.0 && p50 < 10_000.0 && p50 > 1000.0 && p50 * 4.0 < write_ns, "{max} {p50} {write_ns}");
    // Pinned to one CPU, fio's thread and the worker share it: the worker runs when fio's
    // thread sleeps, so the syncs wait longer than with the worker on an idle CPU.
    let pinned = ok(&job("io_uring", "randwrite", "iodepth=16\nfsync=8\ncpus_allowed=2"));
    let pinned_p50 = u(&pinned["jobs"][0]["sync"]["lat_ns"]["percentile"]["50.000000"]) as f64;
    assert!(pinned_p50 > p50 * 1.2, "pinned {pinned_p50} ns, spread {p50} ns");
    // The worker's time is the CPU's, not fio's thread's.
    let cpu_sys: f64 = v["blksim"]["cpu_time"].as_array().unwrap().iter().map(|c| c["sys_pct"].as_f64().unwrap()).sum();
    assert!(cpu_sys > j["sys_cpu"].as_f64().unwrap() + 1.0, "CPU sys {cpu_sys}%, the job's {}", j["sys_cpu"]);
}

#[test]
fn write_iolog_logs_each_sync_with_the_stale_offset_of_its_io_u() {
    // fio's log_io_u writes a sync as `sync`/`datasync` with the offset its io_u kept from
    // its last use (get_io_u clears the length only) and length 0; end_fsync's too. The
    // free list is a stack: at iodepth 1 that is the write before it; deeper, the io_u
    // freed last. The log replays to the same writes and syncs.
    let dir = tempfile::tempdir().unwrap();
    let run = |job: &str| -> (Value, String) {
        std::fs::write(dir.path().join("job.fio"), job).unwrap();
        if !job.contains("read_iolog") {
            // (fio appends to a write_iolog.)
            let _ = std::fs::remove_file(dir.path().join("w.log"));
        }
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_blksim"))
            .args(["run", "job.fio", "--output-format", "json"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        (serde_json::from_slice(&out.stdout).unwrap(), std::fs::read_to_string(dir.path().join("w.log")).unwrap())
    };
    let base = "[t]\nfilename=/dev/nvme0n1\ndirect=1\nrw=randwrite\nbs=4k\nsize=1m\nwrite_iolog=w.log\n";
    for (engine, extra) in
        [("psync", "fsync=3\nfdatasync=2\nend_fsync=1\n"), ("libaio", "iodepth=8\nfsync=5\nend_fsync=1\n")]
    {
        let (v, log) = run(&format!("{base}ioengine={engine}\n{extra}"));
        let ios: Vec<Vec<&str>> =
            log.lines().skip(1).map(|l| l.split(' ').skip(1).collect()).filter(|f: &Vec<&str>| f.len() == 4).collect();
        let (mut writes, mut syncs, mut datasyncs) = (Vec::new(), 0, 0);
        let mut recent: Vec<&str> = Vec::new();
        for f in &ios {
            match f[1] {
                "write" => {
                    writes.push(f[2]);
                    recent.push(f[2]);
                }
                kind @ ("sync" | "datasync") => {
                    assert_eq!(f[3], "0", "{f:?}");
                    if engine == "psync" {
                        assert_eq!(Some(&f[2]), writes.last(), "{engine}: {f:?} after {:?}", writes.last());
                    } else {
                        // One of the last iodepth io_us' offsets (or a fresh io_u's 0).
                        let window = &recent[recent.len().saturating_sub(9)..];
                        assert!(f[2] == "0" || window.contains(&f[2]), "{engine}: {f:?} not in {window:?}");
                    }
                    if kind == "sync" {
                        syncs += 1
                    } else {
                        datasyncs += 1
                    }
                }
                other => panic!("{other}"),
            }
        }
        let j = &v["jobs"][0];
        assert_eq!(writes.len() as u64, u(&j["write"]["total_ios"]), "{engine}");
        // fio's sync section counts fsync's and fdatasync's, not end_fsync's (its last sync line).
        assert_eq!(syncs + datasyncs - 1, u(&j["sync"]["total_ios"]), "{engine}");
        assert!(datasyncs > 0 || engine != "psync");
        // Replayed: the same writes, and every sync line an fsync again.
        let (r, _) = run(&format!("[r]\nioengine={engine}\ndirect=1\nread_iolog=w.log\n"));
        let rj = &r["jobs"][0];
        assert_eq!(u(&rj["write"]["total_ios"]), writes.len() as u64, "{engine} replayed");
        assert_eq!(u(&rj["sync"]["total_ios"]), syncs + datasyncs, "{engine} replayed");
    }
}

#[test]
fn a_job_that_does_not_write_never_syncs() {
    // fio's should_fsync needs td_write: the option is inert, on any engine.
    let v = ok(&job("libaio", "randread", "fsync=1\nend_fsync=1"));
    assert_eq!(u(&v["jobs"][0]["sync"]["total_ios"]), 0);
    assert!(u(&v["jobs"][0]["read"]["total_ios"]) > 0);
}

#[test]
fn end_fsync_costs_its_system_call_and_is_not_accounted() {
    let base = ok(&job("psync", "write", "number_ios=100"));
    let end = ok(&job("psync", "write", "number_ios=100\nend_fsync=1"));
    let close = ok(&job("psync", "write", "number_ios=100\nfsync_on_close=1"));
    let sys = |v: &Value| v["jobs"][0]["sys_cpu"].as_f64().unwrap();
    for v in [&end, &close] {
        let j = &v["jobs"][0];
        assert_eq!(u(&j["write"]["total_ios"]), 100);
        assert_eq!(u(&j["sync"]["total_ios"]), 0);
        assert_eq!(u(&j["sync"]["lat_ns"]["N"]), 0);
        // The same writes, then one more system call on the job's CPU.
        assert_eq!(j["write"]["clat_ns"]["mean"], base["jobs"][0]["write"]["clat_ns"]["mean"]);
        assert!(sys(v) > sys(&base), "sys {} vs {}", sys(v), sys(&base));
    }
}

#[test]
fn the_null_engine_queues_an_fsync_as_any_io_u_and_the_group_sums_them() {
    let v = ok("[t]\nioengine=null\nrw=randwrite\nbs=4k\nsize=1g\nnumber_ios=640\nfsync=32\niodepth=8\nnumjobs=2\ngroup_reporting\n");
    let j = &v["jobs"][0];
    assert_eq!(u(&j["write"]["total_ios"]), 1280);
    // 20 per job: after writes 32, 64, ... 640 but the last (the job ends at its 640th I/O).
    assert_eq!(u(&j["sync"]["total_ios"]), 2 * 19);
}

#[test]
fn the_normal_report_shows_the_syncs_as_fio_does() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.fio");
    std::fs::write(&path, job("psync", "randwrite", "fsync=2")).unwrap();
    let (code, out, err) = common::blksim(&["run", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let at = out.find("  fsync/fdatasync/sync_file_range/syncfs:\n    sync (nsec): min=").expect(&out);
    assert!(out[at..].contains("    sync percentiles (nsec):\n     |  1.00th=["), "{out}");
    // After the latency buckets, before the cpu line (show_thread_status_normal's order).
    assert!(out.find("  lat (usec)").unwrap() < at && at < out.find("  cpu          :").unwrap());
    let issued = out.lines().find(|l| l.starts_with("     issued rwts: total=0,")).unwrap();
    let counts: Vec<u64> = issued[24..].split(' ').next().unwrap().split(',').map(|n| n.parse().unwrap()).collect();
    assert!(counts[1] / 2 - counts[3] <= 1 && counts[3] > 0, "{issued}");
}

#[test]
fn what_blksim_cannot_sync_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[&str], &str); 5] = [
        // io_init_req: an opcode without `iopoll` fails with EINVAL on an IOPOLL ring.
        ("io_uring\nhipri", &[], "EINVAL"),
        ("io_uring\nsqthread_poll", &[], "sqthread_poll"),
        ("psync", &["--machine", "x86-gen5-5m"], "volatile_write_cache"),
        ("psync", &["--machine", "hp-ia64-2008"], "SYNCHRONIZE CACHE"),
        ("psync", &["--verify=crc32c"], "verify"),
    ];
    for (engine, extra, says) in cases {
        let path = dir.path().join("job.fio");
        let filename = if extra.contains(&"hp-ia64-2008") { "/dev/sda" } else { "/dev/nvme0n1" };
        let text = job(engine, "randwrite", "fsync=8").replace("/dev/nvme0n1", filename);
        std::fs::write(&path, text).unwrap();
        let mut args = vec!["run", path.to_str().unwrap()];
        args.extend_from_slice(extra);
        let (code, _, err) = common::blksim(&args);
        assert_eq!(code, 2, "{engine} {extra:?}: {err}");
        assert!(err.contains(says) && err.contains("job.fio"), "{engine} {extra:?}: {err}");
    }
}

#[test]
fn a_replayed_logs_syncs_and_a_blktraces_flushes_are_fsyncs() {
    let dir = tempfile::tempdir().unwrap();
    let log = "fio version 2 iolog\n/dev/nvme0n1 add\n/dev/nvme0n1 open\n/dev/nvme0n1 write 0 4096\n\
               /dev/nvme0n1 sync 0 0\n/dev/nvme0n1 write 4096 4096\n/dev/nvme0n1 datasync 0 0\n/dev/nvme0n1 close\n";
    std::fs::write(dir.path().join("r.log"), log).unwrap();
    // A blktrace: a queued 4 KiB write, then a queued flush (BLK_TC_FLUSH, no data).
    let mut trace = Vec::new();
    for (time_ns, sector, bytes, tc) in [(1_000u64, 8u64, 4096u32, 2u32), (50_000, 0, 0, 1 << 2)] {
        trace.extend(0x6561_7407u32.to_le_bytes());
        trace.extend(0u32.to_le_bytes());
        trace.extend(time_ns.to_le_bytes());
        trace.extend(sector.to_le_bytes());
        trace.extend(bytes.to_le_bytes());
        trace.extend((1 | (tc | 1 << 4) << 16).to_le_bytes()); // __BLK_TA_QUEUE
        trace.extend(1234u32.to_le_bytes());
        trace.extend((259u32 << 20 | 1).to_le_bytes());
        trace.extend([0u8; 8]);
    }
    std::fs::write(dir.path().join("t.bin"), trace).unwrap();
    let run = |job: &str| -> (i32, Option<Value>, String) {
        let path = dir.path().join("job.fio");
        std::fs::write(&path, job).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_blksim"))
            .args(["run", path.to_str().unwrap(), "--output-format", "json"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            serde_json::from_slice(&out.stdout).ok(),
            String::from_utf8_lossy(&out.stderr).into(),
        )
    };
    let syncs = |v: &Option<Value>| u(&v.as_ref().unwrap()["jobs"][0]["sync"]["total_ios"]);
    for (engine, skip, want) in
        [("psync", "", 2), ("libaio", "", 2), ("io_uring", "", 2), ("psync", "replay_skip=sync\n", 1)]
    {
        let (code, v, err) = run(&format!("[r]\nioengine={engine}\ndirect=1\nread_iolog=r.log\n{skip}"));
        assert_eq!(code, 0, "{err}");
        assert_eq!(syncs(&v), want, "{engine} {skip}");
        assert_eq!(u(&v.unwrap()["jobs"][0]["write"]["total_ios"]), 2);
    }
    let (code, v, err) = run("[t]\nioengine=psync\ndirect=1\nread_iolog=t.bin\nreplay_redirect=/dev/nvme1n1\n");
    assert_eq!(code, 0, "{err}");
    assert_eq!((syncs(&v), u(&v.unwrap()["jobs"][0]["write"]["total_ios"])), (1, 1));
    // The engines that cannot fsync refuse the log's syncs; fsync=N on top of a log is not modelled.
    let (code, _, err) = run("[r]\nioengine=io_uring\nhipri\ndirect=1\nread_iolog=r.log\n");
    assert!(code == 2 && err.contains("read_iolog's syncs") && err.contains("EINVAL"), "{err}");
    let (code, _, err) = run("[r]\nioengine=psync\ndirect=1\nread_iolog=r.log\nrw=write\nfsync=2\n");
    assert!(code == 2 && err.contains("read_iolog"), "{err}");
}

#[test]
fn sync_1_adds_a_sync_engines_write_sync_and_leaves_async_writes_alone() {
    // O_SYNC: blkdev_write_iter ends a sync engine's direct write with
    // generic_write_sync (blkdev_fsync, its flush stripped): each write's clat
    // grows by that, exactly, the same seed giving the same device times. An
    // async write's bio carries REQ_FUA, stripped too: nothing changes.
    let clat = |v: &Value| v["jobs"][0]["write"]["clat_ns"]["mean"].as_f64().unwrap();
    let plain = ok(&job("psync", "write", "number_ios=200"));
    let synced = ok(&job("psync", "write", "number_ios=200\nsync=1"));
    let dsync = ok(&job("psync", "write", "number_ios=200\nsync=dsync"));
    let added = clat(&synced) - clat(&plain);
    assert!((added - 150.0).abs() < 1.0, "sync=1 adds {added:.1} ns (blkdev_fsync_ns is 150)");
    assert_eq!(clat(&synced), clat(&dsync));
    assert_eq!(u(&synced["jobs"][0]["sync"]["total_ios"]), 0, "not fio's syncs");
    // Reads are not synced.
    let reads = |extra: &str| ok(&job("psync", "read", &format!("number_ios=100\n{extra}")));
    assert_eq!(reads("")["jobs"][0]["read"]["clat_ns"], reads("sync=1")["jobs"][0]["read"]["clat_ns"]);
    let aio = |extra: &str| ok(&job("libaio", "randwrite", &format!("iodepth=8\n{extra}")));
    assert_eq!(aio("")["jobs"][0]["write"], aio("sync=1")["jobs"][0]["write"]);
    // posixaio: glibc's helper thread's pwrite returns through generic_write_sync before it
    // tells fio, at iodepth 1 the same 150 ns on each write's clat.
    let posix = |extra: &str| ok(&job("posixaio", "write", &format!("number_ios=100\n{extra}")));
    let added = clat(&posix("sync=1")) - clat(&posix(""));
    assert!((added - 150.0).abs() < 1.0, "posixaio: sync=1 adds {added:.1} ns");
    // Refused where the drive's cache is unknown.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.fio");
    std::fs::write(&path, job("psync", "write", "sync=1")).unwrap();
    let (code, _, err) = common::blksim(&["run", path.to_str().unwrap(), "--machine", "x86-gen5-5m"]);
    assert!(code == 2 && err.contains("volatile_write_cache") && err.contains("sync=1"), "{err}");
}

#[test]
fn posixaio_syncs_on_its_helper_thread_and_end_fsync_takes_an_async_depth_count() {
    // fsync=4 and end_fsync at iodepth 1 over 1 MiB: 256 writes, 63 syncs accounted (the last
    // write's is end_fsync's). An async engine's queue gives end_fsync a depth count that
    // fio's IO depths line does not divide by: 1=125.0%, as fio 3.33 prints for posixaio.
    for engine in ["posixaio", "libaio"] {
        let text = format!(
            "[t]\nfilename=/dev/nvme0n1\ndirect=1\nioengine={engine}\nrw=randwrite\nbs=4k\nsize=1m\nfsync=4\nend_fsync=1\n"
        );
        let v = ok(&text);
        let j = &v["jobs"][0];
        assert_eq!((u(&j["write"]["total_ios"]), u(&j["sync"]["total_ios"])), (256, 63), "{engine}");
        assert_eq!(j["iodepth_level"]["1"].as_f64(), Some(125.0), "{engine}");
        // A sync waits for nothing at the device: its time is the syscall's path.
        let (sync, write) =
            (j["sync"]["lat_ns"]["mean"].as_f64().unwrap(), j["write"]["clat_ns"]["mean"].as_f64().unwrap());
        assert!(sync > 0.0 && sync < write, "{engine}: sync {sync} ns, write {write} ns");
    }
}
