//! Trims on a device: fio's `do_io_u_trim` is a blocking BLKDISCARD
//! (`blk_ioctl_discard`: a discard bio, `submit_bio_wait`), which NVMe
//! serves as Dataset Management with Deallocate: the controller's work, no
//! data on the link and no media time; a device without discards fails it.
//! libaio and posixaio issue it from their queue hook; io_uring and
//! io_uring_cmd send it through the ring.

mod common;

use common::run_job_json as run;

fn ok(job: &str) -> serde_json::Value {
    let (code, v, err) = run(job);
    assert_eq!(code, Some(0), "{err}");
    v.unwrap()
}

fn job(rw: &str, bs: &str, extra: &str) -> String {
    format!("[t]\nfilename=/dev/nvme0n1\ndirect=1\nioengine=psync\nrw={rw}\nbs={bs}\nsize=16m\n{extra}")
}

/// A direction's mean completion latency, ns.
fn clat(v: &serde_json::Value, dir: &str) -> f64 {
    v["jobs"][0][dir]["clat_ns"]["mean"].as_f64().unwrap()
}

#[test]
fn a_trim_is_a_deallocate_whose_time_does_not_grow_with_its_size() {
    let t4 = ok(&job("trim", "4k", ""));
    let t1m = ok(&job("trim", "1m", ""));
    let w4 = ok(&job("write", "4k", ""));
    let w1m = ok(&job("write", "1m", ""));
    // Every block of the region trimmed once, in fio's trim section.
    assert_eq!(t4["jobs"][0]["trim"]["total_ios"].as_u64(), Some(4096));
    assert_eq!(t1m["jobs"][0]["trim"]["io_bytes"].as_u64(), Some(16 << 20));
    assert_eq!(t1m["jobs"][0]["write"]["total_ios"].as_u64(), Some(0));
    // A 1 MiB write moves its data (link, media); a 1 MiB trim only names its range.
    let (a, b) = (clat(&t4, "trim"), clat(&t1m, "trim"));
    assert!((b / a - 1.0).abs() < 0.1, "trim clat 4k {a:.0} ns, 1m {b:.0} ns");
    assert!(clat(&w1m, "write") > 5.0 * clat(&w4, "write"), "{} vs {}", clat(&w1m, "write"), clat(&w4, "write"));
    assert!(b < clat(&w4, "write"), "a trim ({b:.0} ns) is no slower than a 4k write ({:.0} ns)", clat(&w4, "write"));
    // The disk's read and write counters (what fio's disk stats show) do not count discards.
    let disk = &t4["disk_util"][0];
    assert_eq!((disk["read_ios"].as_u64(), disk["write_ios"].as_u64()), (Some(0), Some(0)), "{disk}");
    assert!(disk["util"].as_f64().unwrap() > 0.0, "{disk}");
    let once = &t4["blksim"]["exactly_once"];
    assert_eq!(once["ios_issued"], once["ios_reaped"], "{once}");
}

#[test]
fn trimwrite_on_a_drive_trims_then_writes_every_block() {
    for rw in ["trimwrite", "randtrimwrite"] {
        let v = ok(&job(rw, "4k", "size=1m\n"));
        let j = &v["jobs"][0];
        assert_eq!(j["trim"]["total_ios"].as_u64(), Some(256), "{rw}");
        assert_eq!(j["write"]["total_ios"].as_u64(), Some(256), "{rw}");
    }
}

#[test]
fn io_uring_trims_are_async_discard_commands_through_the_ring() {
    // fio 3.42's io_uring engine sends IORING_OP_URING_CMD (BLOCK_URING_CMD_DISCARD):
    // many in flight, where psync's BLKDISCARD waits for each.
    let sync = ok(&job("randtrim", "4k", ""));
    let ring = ok(&job("randtrim", "4k", "ioengine=io_uring\niodepth=16\n"));
    let iops = |v: &serde_json::Value| v["jobs"][0]["trim"]["iops"].as_f64().unwrap();
    assert_eq!(ring["jobs"][0]["trim"]["total_ios"].as_u64(), Some(4096));
    assert!(iops(&ring) > 1.5 * iops(&sync), "io_uring {:.0}, psync {:.0}", iops(&ring), iops(&sync));
    let depth = &ring["jobs"][0]["iodepth_level"];
    assert!(depth[">=64"].as_f64().unwrap() + depth["16"].as_f64().unwrap() > 50.0, "{depth}");
}

#[test]
fn io_uring_trims_from_its_queue_hook_once_one_through_the_ring_fails() {
    // On an IOPOLL ring the block device takes no uring_cmd (no uring_cmd_iopoll):
    // the first trim's CQE is -EOPNOTSUPP, which fio's io_uring engine takes as a trim
    // of nothing done (no error), and from then on it trims with BLKDISCARD from its
    // queue hook, as libaio does.
    let sync = ok(&job("randtrim", "4k", ""));
    let v = ok(&job("randtrim", "4k", "ioengine=io_uring\nhipri=1\n"));
    let t = &v["jobs"][0]["trim"];
    assert_eq!((t["total_ios"].as_u64(), t["io_bytes"].as_u64()), (Some(4096), Some((16 << 20) - 4096)), "{t}");
    // Only the trim through the ring has a slat; the hook's are the ioctl's.
    assert_eq!(t["slat_ns"]["N"].as_u64(), Some(1), "{t}");
    let iops = |v: &serde_json::Value| v["jobs"][0]["trim"]["iops"].as_f64().unwrap();
    assert!((iops(&v) / iops(&sync) - 1.0).abs() < 0.2, "hipri io_uring {:.0}, psync {:.0}", iops(&v), iops(&sync));
    let once = &v["blksim"]["exactly_once"];
    assert_eq!(once["ios_issued"], once["ios_reaped"], "{once}");
    // Without hipri, on a device without discards: the ring's refusal is no error,
    // the hook's BLKDISCARD fails the job in td_io_queue (two trims issued, nothing trimmed).
    let (code, v, err) = run("[t]\nfilename=/dev/nullb0\ndirect=1\nioengine=io_uring\nrw=trim\nsize=1m\n");
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("err=95/file:ioengines.c:415, func=td_io_queue") && !err.contains("io_u error"), "{err}");
    let t = &v.unwrap()["jobs"][0]["trim"];
    assert_eq!((t["total_ios"].as_u64(), t["io_bytes"].as_u64()), (Some(2), Some(0)), "{t}");
}

#[test]
fn a_hook_trim_that_waited_for_a_tag_stays_off_the_rings_iopoll_list() {
    // Two tags a queue (nvme.io_queue_depth=2): the queue hook's BLKDISCARD waits for
    // a tag and is issued when a completion frees one. It is an ioctl, not a request
    // of the IOPOLL ring, so it does not join the ring's iopoll list there either
    // (it did, and the list then reaped its request a second time, after reuse).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.fio");
    let job = "[t]\nioengine=io_uring\nhipri\nrw=randtrimwrite\nbsrange=4k-16k\ndirect=1\n\
               filename=/dev/nvme4n1:/dev/nvme0n1\niodepth=4\ntime_based\nruntime=2ms\n";
    std::fs::write(&path, job).unwrap();
    let args = ["run", path.to_str().unwrap(), "--cmdline", "nvme.io_queue_depth=2", "--output-format", "json"];
    let (code, out, err) = common::blksim(&args);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let once = &v["blksim"]["exactly_once"];
    assert_eq!(once["ios_issued"], once["ios_reaped"], "{once}");
    assert_eq!(once["requests_live"].as_u64(), Some(0), "{once}");
    let j = &v["jobs"][0];
    let (trims, writes) = (j["trim"]["total_ios"].as_u64().unwrap(), j["write"]["total_ios"].as_u64().unwrap());
    // Each trim then a write of its blocks: as many, but for those the runtime cut (iodepth 4).
    assert!(trims > 20 && writes > 20 && trims.abs_diff(writes) <= 4, "{trims} trims, {writes} writes");
}

/// A direction's IO depth histogram bucket, percent.
fn depth(v: &serde_json::Value, bucket: &str) -> f64 {
    v["jobs"][0]["iodepth_level"][bucket].as_f64().unwrap()
}

#[test]
fn libaio_and_posixaio_trim_with_a_blocking_discard_in_their_queue_hook() {
    // fio's FIO_ASYNCIO_SYNC_TRIM: the queue hook issues BLKDISCARD and returns the
    // trim completed, so trims go one at a time whatever the depth, with no slat.
    let sync = ok(&job("randtrim", "4k", ""));
    let ring = ok(&job("randtrim", "4k", "ioengine=io_uring\niodepth=16\n"));
    let iops = |v: &serde_json::Value| v["jobs"][0]["trim"]["iops"].as_f64().unwrap();
    for engine in ["libaio", "posixaio"] {
        let v = ok(&job("randtrim", "4k", &format!("ioengine={engine}\niodepth=16\n")));
        let t = &v["jobs"][0]["trim"];
        assert_eq!((t["total_ios"].as_u64(), t["slat_ns"]["N"].as_u64()), (Some(4096), Some(0)), "{engine}: {t}");
        assert!((iops(&v) / iops(&sync) - 1.0).abs() < 0.2, "{engine} {:.0}, psync {:.0}", iops(&v), iops(&sync));
        assert!(iops(&ring) > 1.5 * iops(&v), "io_uring {:.0}, {engine} {:.0}", iops(&ring), iops(&v));
        assert_eq!(depth(&v, "1"), 100.0, "{engine}: one trim at a time");
    }
    // With trims and writes, libaio's writes stay in flight while fio's thread
    // sleeps in a BLKDISCARD (their events wait in the ring); posixaio's hook is
    // busy until nothing is in flight, so each trim waits for the write before it.
    // (Debian's fio 3.33 on a loop device, this job: IO depth 8 for 99.3% of
    // libaio's I/Os, 1 for 100% of posixaio's and for 99.95% of libaio's with
    // iodepth_batch_submit=4; no trim has a slat.)
    let mixed = |engine: &str, extra: &str| {
        let v = ok(&job("randtrimwrite", "4k", &format!("ioengine={engine}\niodepth=8\nsize=1m\n{extra}")));
        let j = &v["jobs"][0];
        assert_eq!((j["trim"]["total_ios"].as_u64(), j["write"]["total_ios"].as_u64()), (Some(256), Some(256)));
        assert_eq!((j["trim"]["slat_ns"]["N"].as_u64(), j["write"]["slat_ns"]["N"].as_u64()), (Some(0), Some(256)));
        let once = &v["blksim"]["exactly_once"];
        assert_eq!(once["ios_issued"], once["ios_reaped"], "{once}");
        v
    };
    let aio = mixed("libaio", "");
    assert!(depth(&aio, "8") > 90.0, "{}", aio["jobs"][0]["iodepth_level"]);
    let posix = mixed("posixaio", "");
    assert_eq!(depth(&posix, "1"), 100.0, "{}", posix["jobs"][0]["iodepth_level"]);
    assert!(iops(&aio) > 2.0 * iops(&posix), "libaio {:.0}, posixaio {:.0}", iops(&aio), iops(&posix));
    // libaio with a write queued and not committed (iodepth_batch_submit=4) returns
    // FIO_Q_BUSY for the trim: fio commits the write, reaps it, then trims. The last
    // write, committed by do_io's drain (getevents), is never counted in IO depths: 511 of 512.
    let batched = mixed("libaio", "iodepth_batch_submit=4\n");
    let one = depth(&batched, "1");
    assert!((one - 100.0 * 511.0 / 512.0).abs() < 1e-3, "{}", batched["jobs"][0]["iodepth_level"]);
    // A failed trim is taken in td_io_queue, as a sync engine's: no io_u error line.
    for engine in ["libaio", "posixaio"] {
        let (code, _, err) = run(&format!(
            "[t]\nfilename=/dev/nullb0\ndirect=1\nioengine={engine}\niodepth=4\nrw=randtrimwrite\nsize=1m\n"
        ));
        assert_eq!(code, Some(1), "{err}");
        assert!(err.contains("err=95/file:ioengines.c:415, func=td_io_queue") && !err.contains("io_u error"), "{err}");
    }
    // A submit worker would run the blocking discard: refused with the reason.
    for engine in ["libaio", "io_uring\nhipri=1"] {
        let (code, _, err) = run(&job("randtrim", "4k", &format!("ioengine={engine}\nio_submit_mode=offload\n")));
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("io_submit_mode=offload") && err.contains("BLKDISCARD"), "{err}");
    }
}

#[test]
fn a_device_that_takes_no_discards_fails_the_trim_as_linux_does() {
    // null_blk without discard=1 has no discard limit: blk_ioctl_discard
    // returns EOPNOTSUPP and fio's job ends on the error (exit 1). psync's
    // queue hook returns the trim completed with it, so fio records it in
    // td_io_queue (no io_u error line) and says so as the job's thread exits.
    let (code, v, err) = run("[t]\nfilename=/dev/nullb0\ndirect=1\nrw=trim\nsize=1m\n");
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.starts_with(
            "fio: pid=1001, err=95/file:ioengines.c:415, func=td_io_queue, error=Operation not supported\n"
        ) && !err.contains("io_u error"),
        "{err}"
    );
    let j = &v.unwrap()["jobs"][0];
    assert_eq!(j["error"], 95);
    // Issued, as fio counts it (total_io_u), with no bytes.
    assert_eq!((j["trim"]["total_ios"].as_u64(), j["trim"]["io_bytes"].as_u64()), (Some(1), Some(0)), "{j}");
    // The normal report has the job's block, as fio's has: its error, CPU, depths and issued counts.
    let (code, out, err) =
        common::blksim(&["run", "--name=t", "--filename=/dev/nullb0", "--direct=1", "--rw=trim", "--size=1m"]);
    assert_eq!(code, 1, "{err}");
    let pid_line =
        out.find("fio: pid=1001, err=95/file:ioengines.c:415, func=td_io_queue, error=Operation not supported");
    let block = out.find("t: (groupid=0, jobs=1): err=95 (file:ioengines.c:415, func=td_io_queue, error=Operation not supported): pid=1001:");
    assert!(pid_line.is_some() && block.is_some() && pid_line < block, "{out}");
    assert!(out.contains("     issued rwts: total=0,0,1,0 "), "{out}");
    assert!(!out.contains("  trim: IOPS="), "no trim section without bytes: {out}");
}

#[test]
fn io_uring_cmd_trims_are_dataset_management_passthrough_commands() {
    // fio 3.42's io_uring_cmd engine builds the Dataset Management command
    // (fio_nvme_uring_cmd_trim_prep: one range, Deallocate) and sends it as
    // NVMe passthrough: at the job's depth, its time not growing with the range.
    let cmd = |bs: &str, depth: u32| {
        ok(&format!(
            "[t]\nfilename=/dev/ng0n1\nioengine=io_uring_cmd\ncmd_type=nvme\nrw=randtrim\nbs={bs}\nsize=16m\niodepth={depth}\n"
        ))
    };
    let sync = ok(&job("randtrim", "4k", ""));
    let (q1_4k, q1_1m, q16) = (cmd("4k", 1), cmd("1m", 1), cmd("4k", 16));
    let trim = |v: &serde_json::Value| v["jobs"][0]["trim"].clone();
    assert_eq!(trim(&q16)["total_ios"].as_u64(), Some(4096));
    assert_eq!(trim(&q1_1m)["io_bytes"].as_u64(), Some(16 << 20));
    let (a, b) = (clat(&q1_4k, "trim"), clat(&q1_1m, "trim"));
    assert!((b / a - 1.0).abs() < 0.1, "passthrough trim clat 4k {a:.0} ns, 1m {b:.0} ns");
    let iops = |v: &serde_json::Value| trim(v)["iops"].as_f64().unwrap();
    assert!(iops(&q16) > 1.5 * iops(&sync), "io_uring_cmd QD16 {:.0}, psync {:.0}", iops(&q16), iops(&sync));
    let once = &q16["blksim"]["exactly_once"];
    assert_eq!(once["ios_issued"], once["ios_reaped"], "{once}");
    // With fixedbufs fio marks the command as using its registered buffer,
    // which does not hold the range list: io_import_fixed fails it with
    // EFAULT, and fio's job ends on the io_u error.
    let (code, v, err) =
        run("[t]\nfilename=/dev/ng0n1\nioengine=io_uring_cmd\ncmd_type=nvme\nfixedbufs=1\nrw=randtrim\nsize=1m\n");
    assert_eq!(code, Some(1), "{err}");
    assert!(err.starts_with("fio: io_u error on file /dev/ng0n1: Bad address: trim offset="), "{err}");
    let j = &v.unwrap()["jobs"][0];
    assert_eq!((j["error"].as_i64(), j["trim"]["io_bytes"].as_u64()), (Some(14), Some(0)), "{j}");
}

#[test]
fn io_uring_trims_submitted_together_merge_in_the_plug_as_ranges_of_one_discard() {
    // io_uring plugs a submission of more than two SQEs; a discard bio merges
    // into the plug's last discard request wherever it lies
    // (blk_discard_mergable: NVMe takes 256 ranges a request), up to 256
    // ranges; nvme_setup_discard writes one Dataset Management range per
    // bio. The diskstats discard counters show it (fio's disk stats do not).
    let dir = tempfile::tempdir().unwrap();
    let run_with = |extra: &str, args: &[&str]| {
        let path = dir.path().join("t.fio");
        std::fs::write(&path, job("randtrim", "4k", &format!("ioengine=io_uring\n{extra}"))).unwrap();
        let mut a = vec!["run", path.to_str().unwrap(), "--output-format", "json"];
        a.extend_from_slice(args);
        let (code, out, err) = common::blksim(&a);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap()
    };
    let disk = |v: &serde_json::Value| {
        let d = &v["blksim"]["disks"][0];
        (d["discards"].as_u64().unwrap(), d["discard_merges"].as_u64().unwrap())
    };
    let batched = "iodepth=16\niodepth_batch_submit=16\niodepth_batch_complete_min=16\n";
    let merged = run_with(batched, &[]);
    let (requests, merges) = disk(&merged);
    assert_eq!(merged["jobs"][0]["trim"]["total_ios"].as_u64(), Some(4096));
    assert_eq!(requests + merges, 4096, "every trim is a request or a range of one");
    assert_eq!(requests, 4096 / 16, "sixteen random trims a submission, one request");
    // Not write merges: fio's disk stats show none.
    assert_eq!(merged["disk_util"][0]["write_merges"].as_u64(), Some(0));
    // One at a time (no plug), or nomerges=2: a request per trim.
    assert_eq!(disk(&run_with("iodepth=16\n", &[])), (4096, 0));
    assert_eq!(disk(&run_with(batched, &["--set", "/sys/block/nvme0n1/queue/nomerges=2"])), (4096, 0));
    // At most 256 ranges a request: 512 trims a submission make two.
    let deep = run_with("iodepth=512\niodepth_batch_submit=512\niodepth_batch_complete_min=512\n", &[]);
    assert_eq!(disk(&deep), (4096 / 256, 4096 - 4096 / 256));
    // The controller deallocates range by range (an assumption: no data sheet
    // gives a Deallocate rate): the merge saves the host's work (a shorter
    // turn-around between rounds), not the device's.
    let alone = run_with(batched, &["--set", "/sys/block/nvme0n1/queue/nomerges=2"]);
    let iops = |v: &serde_json::Value| v["jobs"][0]["trim"]["iops"].as_f64().unwrap();
    let cpu = |v: &serde_json::Value| v["jobs"][0]["sys_cpu"].as_f64().unwrap();
    let gain = iops(&merged) / iops(&alone);
    assert!((1.0..1.1).contains(&gain), "{} vs {}", iops(&merged), iops(&alone));
    assert!(cpu(&merged) < 0.9 * cpu(&alone), "sys {}% merged, {}% alone", cpu(&merged), cpu(&alone));
    let once = &merged["blksim"]["exactly_once"];
    assert_eq!(once["ios_issued"], once["ios_reaped"], "{once}");
}

#[test]
fn io_uring_cmd_trims_of_several_ranges_as_fio_fills_them() {
    // fio's num_range (io_uring_cmd only, FIO_MULTI_RANGE_TRIM): each trim io_u
    // draws num_range offsets (fill_multi_range_io_u), one Dataset Management
    // command of that many ranges; its length is their sum.
    let cmd = |rw: &str, extra: &str| {
        format!(
            "[t]\nfilename=/dev/ng0n1\nioengine=io_uring_cmd\ncmd_type=nvme\nrw={rw}\nbs=4k\nsize=16m\niodepth=16\n{extra}"
        )
    };
    let one = ok(&cmd("randtrim", ""));
    let eight = ok(&cmd("randtrim", "num_range=8\n"));
    let trim = |v: &serde_json::Value| v["jobs"][0]["trim"].clone();
    // Every block once (the random map is marked per range), in an eighth as many I/Os.
    assert_eq!(trim(&eight)["total_ios"].as_u64(), Some(4096 / 8));
    assert_eq!(trim(&eight)["io_bytes"].as_u64(), Some(16 << 20));
    // The controller deallocates range by range: the bytes trimmed per second stay
    // the controller's, the commands per second fall about eightfold.
    let bw = |v: &serde_json::Value| trim(v)["bw"].as_f64().unwrap();
    assert!((bw(&eight) / bw(&one) - 1.0).abs() < 0.15, "bw {} KiB/s with 8 ranges, {} with 1", bw(&eight), bw(&one));
    let iops = |v: &serde_json::Value| trim(v)["iops"].as_f64().unwrap();
    assert!(iops(&eight) < iops(&one) / 6.0, "{} vs {}", iops(&eight), iops(&one));
    // A sequential trim whose last io_u reaches the end of the region with fewer ranges.
    let seq = ok(&cmd("trim", "num_range=3\nsize=40k\n"));
    assert_eq!((trim(&seq)["total_ios"].as_u64(), trim(&seq)["io_bytes"].as_u64()), (Some(4), Some(40 << 10)));
    // fio's own refusals, and a count of none.
    for (job, want) in [
        (cmd("randtrimwrite", "num_range=2\n"), "trimwrite cannot be used with multiple ranges"),
        (job("randtrim", "4k", "ioengine=libaio\nnum_range=2\n"), "can't use multiple ranges with IO engine libaio"),
        (cmd("randtrim", "num_range=0\n"), "give num_range=1 or more"),
        (cmd("randtrim", "num_range=257\n"), "num_range"),
    ] {
        let (code, _, err) = run(&job);
        assert_eq!(code, Some(2), "{job}: {err}");
        assert!(err.contains(want) && err.contains("job.fio:"), "{err}");
    }
    // No effect on reads, as in fio.
    let reads = ok(&cmd("randread", "num_range=8\n"));
    assert_eq!(reads["jobs"][0]["read"]["total_ios"].as_u64(), Some(4096));
}

#[test]
fn bios_merge_into_requests_the_scheduler_holds_discards_anywhere_others_next_to_them() {
    // blk_mq_sched_bio_merge before a bio takes a tag, and
    // elv_attempt_insert_merge as a request is inserted: mq-deadline looks at
    // q->last_merge (a discard merges there wherever it lies) and at the
    // request hash (a request that ends where the bio starts); kyber at the
    // submitting CPU's list. Only requests waiting in the scheduler are
    // candidates: here more are in flight than the device takes.
    let run_with = |text: &str, args: &[&str]| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.fio");
        std::fs::write(&path, text).unwrap();
        let mut a = vec!["run", path.to_str().unwrap(), "--output-format", "json"];
        a.extend_from_slice(args);
        let (code, out, err) = common::blksim(&a);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let once = &v["blksim"]["exactly_once"];
        assert_eq!(once["ios_issued"], once["ios_reaped"], "{once}");
        v
    };
    // Sequential 4 KiB writes, one per io_submit (no plug), 64 in flight to a
    // rotational SCSI disk that takes 32: the waiting ones merge at the back.
    let seq = "[w]\nfilename=/dev/sda\nioengine=libaio\ndirect=1\nrw=write\nbs=4k\niodepth=64\nsize=8m\n";
    let disk = |v: &serde_json::Value| {
        let d = &v["disk_util"][0];
        (d["write_ios"].as_u64().unwrap(), d["write_merges"].as_u64().unwrap())
    };
    let hp = ["--machine", "hp-ia64-2008"];
    let sched = |s: &str| format!("/sys/block/sda/queue/scheduler={s}");
    let none = run_with(seq, &hp);
    assert_eq!(disk(&none), (2048, 0), "no scheduler holds them: no merge");
    for s in ["mq-deadline", "kyber"] {
        let v = run_with(seq, &[&hp[..], &["--set", &sched(s)]].concat());
        let (ios, merges) = disk(&v);
        assert_eq!(ios + merges, 2048, "{s}: every bio a request or merged into one");
        assert!(merges > 512, "{s}: {merges} merges");
        // Fewer, larger requests: the disk streams more per command.
        let bw = |v: &serde_json::Value| v["jobs"][0]["write"]["bw_bytes"].as_f64().unwrap();
        assert!(bw(&v) > 1.3 * bw(&none), "{s}: {} vs {} B/s", bw(&v), bw(&none));
        // nomerges=2 forbids them.
        let off = run_with(seq, &[&hp[..], &["--set", &sched(s), "--set", "/sys/block/sda/queue/nomerges=2"]].concat());
        assert_eq!(disk(&off), (2048, 0), "{s} with nomerges=2");
    }
    // Backwards (fio's `rw=write:-8k`): each bio ends where a queued request
    // starts: front merges (mq-deadline's dd_request_merge, kyber's list).
    let back = seq.replace("rw=write", "rw=write:-8k");
    for s in ["mq-deadline", "kyber"] {
        let (ios, merges) = disk(&run_with(&back, &[&hp[..], &["--set", &sched(s)]].concat()));
        assert_eq!(ios + merges, 2048, "{s}");
        assert!(merges > 512, "{s} backwards: {merges} merges");
    }
    // In the plug too (io_uring submits 16 at a time): blk_try_merge's front merge.
    let plug = "[w]\nfilename=/dev/nvme0n1\nioengine=io_uring\ndirect=1\nrw=write:-8k\nbs=4k\niodepth=16\n\
                iodepth_batch_submit=16\niodepth_batch_complete_min=16\nsize=1m\n";
    let (ios, merges) = disk(&run_with(plug, &[]));
    // (fio starts at 0, then wraps to the region's end: the first submission is two runs.)
    assert_eq!((ios, merges), (256 / 16 + 1, 256 - 256 / 16 - 1), "sixteen a submission, one request");
    // Random writes over a larger region rarely continue a queued request.
    let rand = seq.replace("rw=write", "rw=randwrite\nnorandommap").replace("size=8m", "size=64m\nnumber_ios=2048");
    let (_, merges) = disk(&run_with(&rand, &[&hp[..], &["--set", &sched("mq-deadline")]].concat()));
    assert!(merges < 20, "random: {merges} merges");
    // Random trims on NVMe, four submitters sharing eight tags: a trim merges
    // into mq-deadline's last merged discard request as one more range.
    let trims = "[t]\nfilename=/dev/nvme0n1\nioengine=io_uring\ndirect=1\nrw=randtrim\nbs=4k\niodepth=16\n\
                 number_ios=1024\nnumjobs=4\ncpus_allowed=0-3\ncpus_allowed_policy=split\ngroup_reporting\n";
    let discards = |v: &serde_json::Value| {
        let d = &v["blksim"]["disks"][0];
        (d["discards"].as_u64().unwrap(), d["discard_merges"].as_u64().unwrap())
    };
    let on = |s: &str| {
        run_with(
            trims,
            &["--cmdline", "nvme.io_queue_depth=8", "--set", &format!("/sys/block/nvme0n1/queue/scheduler={s}")],
        )
    };
    assert_eq!(discards(&on("none")), (4096, 0));
    let (requests, merges) = discards(&on("mq-deadline"));
    assert_eq!(requests + merges, 4096);
    assert!(merges > 1000, "{merges} discard merges");
}

#[test]
fn a_thin_provisioned_scsi_lun_takes_unmap_one_range_a_command() {
    // sd's provisioning mode `unmap` for a LUN that reports UNMAP (`unmap =
    // true` in its model): a discard is an UNMAP whose parameter list (one
    // block descriptor: sd_setup_unmap_cmnd) crosses the FC link instead of
    // data, served by the array controller with no media work; sd leaves
    // max_discard_segments at 1, so only contiguous discards merge, at the
    // back as other bios do. A fully provisioned LUN fails the trim.
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("thin.toml");
    std::fs::write(
        &profile,
        "name = \"thin\"\ndescription = \"t\"\nextends = \"hp-ia64-2008\"\n[device_model.msa_lun]\nunmap = true\n",
    )
    .unwrap();
    let run_on = |machine: &str, text: &str| {
        let path = dir.path().join("j.fio");
        std::fs::write(&path, text).unwrap();
        let (code, out, err) =
            common::blksim(&["run", path.to_str().unwrap(), "--output-format", "json", "--machine", machine]);
        (code, serde_json::from_str::<serde_json::Value>(&out).ok(), err)
    };
    let thin = profile.to_str().unwrap();
    let sd = |rw: &str, bs: &str, extra: &str| {
        format!("[t]\nfilename=/dev/sda\ndirect=1\nioengine=psync\nrw={rw}\nbs={bs}\nsize=4m\n{extra}")
    };
    let done = |machine: &str, text: &str| {
        let (code, v, err) = run_on(machine, text);
        assert_eq!(code, 0, "{err}");
        let v = v.unwrap();
        let once = &v["blksim"]["exactly_once"];
        assert_eq!(once["ios_issued"], once["ios_reaped"], "{once}");
        v
    };
    let (t64k, t1m) = (done(thin, &sd("trim", "64k", "")), done(thin, &sd("trim", "1m", "")));
    assert_eq!(t64k["jobs"][0]["trim"]["total_ios"].as_u64(), Some(64));
    assert_eq!(t64k["blksim"]["disks"][0]["discards"].as_u64(), Some(64), "{}", t64k["blksim"]["disks"]);
    // The same command whatever its length: no data on the link, no media.
    let (c64k, c1m) = (clat(&t64k, "trim"), clat(&t1m, "trim"));
    assert!((c1m - c64k).abs() < 0.01 * c64k, "64k {c64k} ns, 1m {c1m} ns");
    let w1m = clat(&done(thin, &sd("write", "1m", "")), "write");
    assert!(c1m < w1m / 2.0, "a 1 MiB UNMAP {c1m} ns, a 1 MiB write {w1m} ns");
    // The built-in LUNs are fully provisioned: EOPNOTSUPP ends the job.
    let (code, _, err) = run_on("hp-ia64-2008", &sd("trim", "64k", ""));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("error=Operation not supported"), "{err}");
    // io_uring plugs its 16-trim submissions: sequential trims merge at the
    // back into one UNMAP of the first batch (fio then refills one at a
    // time); random ones do not merge, where NVMe would take them as ranges.
    let batch = "ioengine=io_uring\niodepth=16\niodepth_batch_submit=16\n";
    let disk = |v: &serde_json::Value| {
        let d = &v["blksim"]["disks"][0];
        (d["discards"].as_u64().unwrap(), d["discard_merges"].as_u64().unwrap())
    };
    let seq = done(thin, &sd("trim", "4k", batch).replace("ioengine=psync\n", "").replace("size=4m", "size=256k"));
    assert_eq!(disk(&seq), (64 - 15, 15), "{}", seq["blksim"]["disks"]);
    let rand = done(thin, &sd("randtrim", "4k", batch).replace("ioengine=psync\n", "").replace("size=4m", "size=256k"));
    let (discards, merges) = disk(&rand);
    assert!(discards + merges == 64 && merges < 4, "{}", rand["blksim"]["disks"]);
}
