//! Trims on a device: fio's `do_io_u_trim` is a blocking BLKDISCARD
//! (`blk_ioctl_discard`: a discard bio, `submit_bio_wait`), which NVMe
//! serves as Dataset Management with Deallocate: the controller's work, no
//! data on the link and no media time; a device without discards fails it.

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
fn trims_fio_does_inside_an_engines_queue_call_are_refused() {
    for engine in ["libaio", "posixaio", "io_uring\nhipri=1"] {
        let (code, _, err) = run(&job("randtrim", "4k", &format!("ioengine={engine}\n")));
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("rw=randtrim") && err.contains("BLKDISCARD") && err.contains("psync"), "{err}");
    }
}

#[test]
fn a_device_that_takes_no_discards_fails_the_trim_as_linux_does() {
    // null_blk without discard=1 has no discard limit: blk_ioctl_discard
    // returns EOPNOTSUPP and fio's job ends on the io_u error (exit 1).
    let (code, v, err) = run("[t]\nfilename=/dev/nullb0\ndirect=1\nrw=trim\nsize=1m\n");
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.starts_with("fio: io_u error on file /dev/nullb0: Operation not supported: trim offset=0, buflen=4096"),
        "{err}"
    );
    assert_eq!(v.unwrap()["jobs"][0]["error"], 95);
}
