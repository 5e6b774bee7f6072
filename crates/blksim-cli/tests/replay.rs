//! Replaying an I/O log (`read_iolog`): the log's I/O in its order, its
//! delays waited out as fio's `iolog_delay` waits (spinning, reaping as
//! completions come), and the `replay_*` options.

#[path = "support/blktrace.rs"]
mod blktrace_file;
use blktrace_file::blktrace;

fn run(dir: &std::path::Path, log: &str, job: &str) -> serde_json::Value {
    std::fs::write(dir.join("trace.log"), log).unwrap();
    let path = dir.join("job.fio");
    std::fs::write(&path, format!("[replay]\nfilename=/dev/nvme0n1\ndirect=1\nread_iolog=trace.log\n{job}")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_blksim"))
        .args(["run", path.to_str().unwrap(), "--output-format", "json"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["jobs"][0].clone()
}

/// Ten 4 KiB reads, `gap_us` apart (version 3 time stamps).
fn spaced_reads(gap_us: u64) -> String {
    let mut log = String::from("fio version 3 iolog\n0 /dev/nvme0n1 add\n0 /dev/nvme0n1 open\n");
    for i in 0..10u64 {
        log += &format!("{} /dev/nvme0n1 read {} 4096\n", i * gap_us, i * 8192);
    }
    log
}

#[test]
fn delays_are_waited_out_spinning_and_completions_are_reaped_as_they_come() {
    let dir = tempfile::tempdir().unwrap();
    let j = run(dir.path(), &spaced_reads(1000), "ioengine=libaio\niodepth=8\n");
    assert_eq!(j["read"]["total_ios"].as_u64(), Some(10));
    // Eight gaps of 1 ms (fio's delay_since_ttime takes a last stamp of 0 as
    // none: the read at 1000 after the one at 0 does not wait): fio's loop
    // spins through them (user time).
    let runtime_ms = j["job_runtime"].as_u64().unwrap();
    assert!((8..=9).contains(&runtime_ms), "{runtime_ms} ms");
    assert!(j["usr_cpu"].as_f64().unwrap() > 90.0, "{}", j["usr_cpu"]);
    // Each read is reaped when it completes, not when the next delay ends.
    let clat_us = j["read"]["clat_ns"]["max"].as_f64().unwrap() / 1000.0;
    assert!(clat_us < 200.0, "clat max {clat_us} µs: a completion waited for the spin to end");
}

#[test]
fn no_stall_and_time_scale_change_the_waits_only() {
    let dir = tempfile::tempdir().unwrap();
    let log = spaced_reads(1000);
    let fast = run(dir.path(), &log, "ioengine=libaio\niodepth=8\nreplay_no_stall=1\n");
    assert_eq!(fast["read"]["total_ios"].as_u64(), Some(10));
    assert!(fast["job_runtime"].as_u64().unwrap() < 1, "as fast as it can: under a millisecond");
    let slow = run(dir.path(), &log, "ioengine=libaio\niodepth=8\nreplay_time_scale=50\n");
    let ms = slow["job_runtime"].as_u64().unwrap();
    assert!((16..=17).contains(&ms), "half speed: 16 ms of gaps, got {ms} ms");
}

#[test]
fn the_log_decides_what_is_issued() {
    let dir = tempfile::tempdir().unwrap();
    let log = "fio version 2 iolog\n/dev/sdz add\n/dev/sdz open\n/dev/sdz write 1048576 8192\n/dev/sdz read 0 512\n/dev/sdz read 4096 4096\n/dev/sdz close\n";
    // replay_redirect puts the log's device on the job's; replay_skip drops the reads.
    let j = run(dir.path(), log, "ioengine=psync\nreplay_redirect=/dev/nvme0n1\n");
    assert_eq!((j["write"]["total_ios"].as_u64(), j["write"]["io_bytes"].as_u64()), (Some(1), Some(8192)));
    assert_eq!((j["read"]["total_ios"].as_u64(), j["read"]["io_bytes"].as_u64()), (Some(2), Some(4608)));
    let j = run(dir.path(), log, "ioengine=psync\nreplay_redirect=/dev/nvme0n1\nreplay_skip=read\n");
    assert_eq!((j["read"]["total_ios"].as_u64(), j["write"]["total_ios"].as_u64()), (Some(0), Some(1)));
}

#[test]
fn readonly_replays_the_logs_reads_and_skips_its_writes_and_trims_as_fio_does() {
    // fio's --readonly with read_iolog: read_iolog2 (and read_blktrace) skip the log's writes and
    // trims; the job runs its reads. blksim says how many it skipped, at the read_iolog line.
    let dir = tempfile::tempdir().unwrap();
    let log = "fio version 2 iolog\n/dev/nvme0n1 add\n/dev/nvme0n1 open\n/dev/nvme0n1 write 1048576 8192\n\
               /dev/nvme0n1 read 0 512\n/dev/nvme0n1 trim 65536 4096\n/dev/nvme0n1 read 4096 4096\n/dev/nvme0n1 close\n";
    std::fs::write(dir.path().join("trace.log"), log).unwrap();
    let job = "[replay]\nfilename=/dev/nvme0n1\ndirect=1\nioengine=psync\nread_iolog=trace.log\n";
    let (code, out, err) = run_job(dir.path(), job, &["--readonly", "--output-format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("job.fio:5: option 'read_iolog'") && err.contains("writes and trims are not replayed (2 skipped)"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let j = &v["jobs"][0];
    let ios = |d: &str| (j[d]["total_ios"].as_u64(), j[d]["io_bytes"].as_u64());
    assert_eq!(
        (ios("read"), ios("write"), ios("trim")),
        ((Some(2), Some(4608)), (Some(0), Some(0)), (Some(0), Some(0)))
    );
    // Without --readonly the same job writes and trims.
    let (code, out, err) = run_job(dir.path(), job, &["--output-format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["jobs"][0]["write"]["total_ios"].as_u64(), Some(1));
    assert_eq!(v["jobs"][0]["trim"]["total_ios"].as_u64(), Some(1));
    // A job whose rw says it writes is still refused, as fio's fixup_options refuses it.
    let (code, _, err) = run_job(dir.path(), &format!("{job}rw=write\n"), &["--readonly"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("job.fio:6") && err.contains("not allowed with the --readonly"), "{err}");
}

/// `blksim run job.fio ARGS...` in `dir` with `job` as the job file: exit status, stdout, stderr.
fn run_job(dir: &std::path::Path, job: &str, args: &[&str]) -> (Option<i32>, Vec<u8>, String) {
    std::fs::write(dir.join("job.fio"), job).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_blksim"))
        .args(["run", "job.fio"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (out.status.code(), out.stdout, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Run the replay job with `log` as its trace: the exit status and stderr.
fn refused(dir: &std::path::Path, log: &str) -> (Option<i32>, String) {
    std::fs::write(dir.join("trace.log"), log).unwrap();
    let (code, _, err) = run_job(dir, "[replay]\nfilename=/dev/nvme0n1\ndirect=1\nread_iolog=trace.log\n", &[]);
    (code, err)
}

#[test]
fn a_bad_log_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err) = refused(dir.path(), "fio version 3 iolog\n0 /dev/nvme0n1 add\n5 /dev/nvme0n1 read x 4096\n");
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("trace.log:3") && err.contains("'x'"), "{err}");
    // A trim replays as a BLKDISCARD on a sync engine (fio's default, psync), from libaio's
    // queue hook, and from io_uring's on an IOPOLL ring after its first trim through the ring
    // fails; a log past the device's end is bad input.
    let trims = "fio version 3 iolog\n0 /dev/nvme0n1 add\n5 /dev/nvme0n1 trim 0 4096\n";
    let (code, err) = refused(dir.path(), trims);
    assert_eq!(code, Some(0), "{err}");
    let replay = "[replay]\nfilename=/dev/nvme0n1\ndirect=1\nread_iolog=trace.log\n";
    let (code, _, err) = run_job(dir.path(), &format!("{replay}ioengine=libaio\n"), &[]);
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = run_job(dir.path(), &format!("{replay}ioengine=io_uring\nhipri=1\n"), &[]);
    assert_eq!(code, Some(0), "{err}");
    let (code, err) =
        refused(dir.path(), "fio version 3 iolog\n0 /dev/nvme0n1 add\n5 /dev/nvme0n1 read 1099511627776000 4096\n");
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("line 3") && err.contains("past the end"), "{err}");
}

#[test]
fn a_blktrace_replays_its_queued_ios_on_the_redirected_device() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("trace.bin"), blktrace(20, 200)).unwrap();
    let job = "[bt]\nioengine=libaio\ndirect=1\nread_iolog=trace.bin\nreplay_redirect=/dev/nvme1n1\nwrite_lat_log=bt\nlog_offset=1\n";
    let (code, out, err) = run_job(dir.path(), job, &["--output-format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    let j: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let j = &j["jobs"][0];
    assert_eq!((j["read"]["total_ios"].as_u64(), j["write"]["total_ios"].as_u64()), (Some(10), Some(10)));
    // The queued I/Os in order (depth 1, probed from the trace): sector * 512.
    let log = std::fs::read_to_string(dir.path().join("bt_clat.1.log")).unwrap();
    let offsets: Vec<u64> = log.lines().map(|l| l.split(", ").nth(4).unwrap().parse().unwrap()).collect();
    let expect: Vec<u64> = (0..20u64).map(|i| (i * 7919 % 2048) * 8 * 512).collect();
    assert_eq!(offsets, expect);
    // 19 gaps of 200 µs after the first: about 3.8 ms.
    let ms = j["job_runtime"].as_u64().unwrap();
    assert!((3..=4).contains(&ms), "{ms} ms");
    // Without replay_redirect the trace's major:minor cannot be placed.
    let (code, _, err) = run_job(dir.path(), "[bt]\nioengine=libaio\ndirect=1\nread_iolog=trace.bin\n", &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("replay_redirect"), "{err}");
}

#[test]
fn a_verify_the_real_fio_would_fail_passes_here_and_says_so() {
    // Reading a drive nothing wrote with verify=md5 fails in fio (bad magic header).
    // blksim simulates no data: the job runs its reads and their checksum CPU, and
    // says on stderr that its checks pass.
    let dir = tempfile::tempdir().unwrap();
    let job = "[r]\nfilename=/dev/nvme3n1\ndirect=1\nrw=read\nsize=64k\nverify=md5\n";
    let (code, _, err) = run_job(dir.path(), job, &["--output-format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("job.fio:6: option 'verify'") && err.contains("every check passes"), "{err}");
    assert!(!err.contains("ignored"), "{err}");
}

#[test]
fn merge_blktrace_file_merges_the_listed_traces_into_one_that_is_replayed() {
    // fio's merge_blktrace_file (as its documentation says; fio 3.42's own merge
    // fails on a misread): the queue events of every trace in read_iolog's list,
    // scaled by merge_blktrace_scalars (percent) and repeated merge_blktrace_iters
    // times (a repeat one trace length later: the time of its last record),
    // merged in time order into one blktrace file, which the job replays.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.bin"), blktrace(10, 200)).unwrap();
    std::fs::write(dir.path().join("b.bin"), blktrace(10, 300)).unwrap();
    let job = |extra: &str| {
        format!(
            "[m]\nioengine=libaio\ndirect=1\nread_iolog=a.bin:b.bin\nreplay_redirect=/dev/nvme1n1\n\
             merge_blktrace_file=merged.bin\nreplay_no_stall=1\n{extra}"
        )
    };
    let (code, out, err) = run_job(
        dir.path(),
        &job("merge_blktrace_scalars=50:100\nmerge_blktrace_iters=2:1\n"),
        &["--output-format", "json"],
    );
    assert_eq!(code, Some(0), "{err}");
    let merged = std::fs::read(dir.path().join("merged.bin")).unwrap();
    let field = |r: &[u8], o: usize, n: usize| r[o..o + n].iter().rev().fold(0u64, |v, &b| v << 8 | b as u64);
    let records: Vec<(u64, u64, u64)> =
        merged.chunks(48).map(|r| (field(r, 8, 8), field(r, 28, 4) & 0xffff, field(r, 46, 2))).collect();
    assert_eq!(merged.len(), 30 * 48, "a's ten queued I/Os twice, b's once");
    assert!(records.iter().all(|&(_, action, pdu)| action == 1 && pdu == 0), "queue events only, no payloads");
    let mut want: Vec<u64> = Vec::new();
    let a_length = 1_000_000 + 9 * 200_000 + 20_000; // a's last record: the tenth I/O's completion
    for iter in 0..2 {
        want.extend((0..10u64).map(|i| (1_000_000 + i * 200_000 + iter * a_length) * 50 / 100));
    }
    want.extend((0..10u64).map(|i| 1_000_000 + i * 300_000));
    want.sort();
    assert_eq!(records.iter().map(|r| r.0).collect::<Vec<_>>(), want);
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let j = &v["jobs"][0];
    assert_eq!((j["read"]["total_ios"].as_u64(), j["write"]["total_ios"].as_u64()), (Some(15), Some(15)));
    // fio's --merge-blktrace-only: the merged trace written, nothing run.
    std::fs::remove_file(dir.path().join("merged.bin")).unwrap();
    let (code, out, err) = run_job(dir.path(), &job(""), &["--merge-blktrace-only"]);
    assert_eq!((code, out.is_empty()), (Some(0), true), "{err}");
    assert_eq!(std::fs::read(dir.path().join("merged.bin")).unwrap().len(), 20 * 48);
    // The lists without a merge change nothing, in fio too: said, not silent.
    let plain =
        "[r]\nioengine=libaio\ndirect=1\nread_iolog=a.bin\nreplay_redirect=/dev/nvme1n1\nmerge_blktrace_iters=3\n";
    let (code, _, err) = run_job(dir.path(), plain, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("job.fio:6: option 'merge_blktrace_iters'") && err.contains("ignored"), "{err}");
    // A list whose length is not the number of traces is fio's error.
    let (code, _, err) = run_job(dir.path(), &job("merge_blktrace_scalars=50\n"), &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("merge_blktrace_scalars(1) != nr_logs(2)") && err.contains("job.fio:4"), "{err}");
}

/// `examples/traces/loop-randrw.blktrace`: a real trace (the kernel's blk tracer through ftrace,
/// `scripts/record-blktrace.sh`) of Debian's fio 3.33 running `loop-randrw.fio` (libaio, iodepth
/// 4, 4-16 KiB random reads and writes) on a loop device; `loop-randrw.iolog` is that fio's
/// `write_iolog` of the same run: the I/Os it issued, in order.
fn recorded(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/traces").join(name)
}

/// (direction, offset, bytes) of the I/O lines of a version 3 iolog.
fn iolog_ios(log: &str) -> Vec<(u64, u64, u64)> {
    log.lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let d = ["read", "write", "trim"].iter().position(|a| w.get(2) == Some(a))? as u64;
            Some((d, w[3].parse().unwrap(), w[4].parse().unwrap()))
        })
        .collect()
}

/// (direction, offset, bytes) of each line of a latency log (log_offset=1), in its order.
fn lat_log_ios(log: &str) -> Vec<(u64, u64, u64)> {
    log.lines()
        .map(|l| {
            let f: Vec<u64> = l.split(", ").map(|x| x.parse().unwrap()).collect();
            (f[2], f[4], f[3])
        })
        .collect()
}

#[test]
fn a_recorded_blktrace_replays_the_ios_fio_issued_in_their_order() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(recorded("loop-randrw.blktrace"), dir.path().join("trace.bin")).unwrap();
    let issued = iolog_ios(&std::fs::read_to_string(recorded("loop-randrw.iolog")).unwrap());
    assert_eq!(issued.len(), 400);
    // At depth 1 each I/O is reaped before the next is drawn: every one is fio's.
    let job = "[bt]\nioengine=libaio\ndirect=1\niodepth=1\nread_iolog=trace.bin\nreplay_redirect=/dev/nvme0n1\n\
               write_lat_log=bt\nlog_offset=1\n";
    let (code, out, err) = run_job(dir.path(), job, &["--output-format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    let log = std::fs::read_to_string(dir.path().join("bt_clat.1.log")).unwrap();
    assert_eq!(lat_log_ios(&log), issued);
    let j: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let j = &j["jobs"][0];
    let bytes = |d: u64| issued.iter().filter(|i| i.0 == d).map(|i| i.2).sum::<u64>();
    assert_eq!((j["read"]["io_bytes"].as_u64(), j["write"]["io_bytes"].as_u64()), (Some(bytes(0)), Some(bytes(1))));
}

#[test]
fn a_replay_whose_log_runs_out_never_reaps_what_is_still_in_flight() {
    // fio's read_iolog_get sets td->done when the log is empty (a trace ends with its file's
    // close), and td_io_getevents returns nothing from then on: the I/Os in flight then are
    // issued (total_ios) but never done (no bytes, no latency), and do_io ends there. On the
    // null engine at the trace's depth (4) that is its last write: fio 3.33 and 3.42 both
    // report 2060288 bytes read and 1945600 written of 1957888, and log 399 latencies.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(recorded("loop-randrw.blktrace"), dir.path().join("trace.bin")).unwrap();
    let issued = iolog_ios(&std::fs::read_to_string(recorded("loop-randrw.iolog")).unwrap());
    let replay = |engine: &str| {
        let job = format!(
            "[bt]\nioengine={engine}\ndirect=1\nread_iolog=trace.bin\nreplay_redirect=/dev/nvme0n1\nwrite_lat_log={engine}\n\
             log_offset=1\nreplay_no_stall=1\n"
        );
        let (code, out, err) = run_job(dir.path(), &job, &["--output-format", "json"]);
        assert_eq!(code, Some(0), "{err}");
        let j: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let log = std::fs::read_to_string(dir.path().join(format!("{engine}_clat.1.log"))).unwrap();
        (j["jobs"][0].clone(), lat_log_ios(&log))
    };
    let (j, done) = replay("null");
    let dirs = |j: &serde_json::Value, k: &str| (j["read"][k].as_u64().unwrap(), j["write"][k].as_u64().unwrap());
    assert_eq!(dirs(&j, "total_ios"), (210, 190));
    assert_eq!(dirs(&j, "io_bytes"), (2060288, 1945600));
    assert_eq!(done, issued[..399]);
    // libaio at depth 4: what the last reap before the log ran out left in flight is not done.
    let (j, done) = replay("libaio");
    assert_eq!(dirs(&j, "total_ios"), (210, 190));
    let left = 400 - done.len();
    assert!((1..=3).contains(&left), "{left} I/Os left in flight");
    let mut sorted = done.clone();
    sorted.sort();
    let mut first: Vec<_> = issued[..done.len()].to_vec();
    first.sort();
    assert_eq!(sorted, first, "the done I/Os are the first issued");
    let (r, w) = dirs(&j, "io_bytes");
    assert_eq!(r + w, done.iter().map(|i| i.2).sum::<u64>());
    // The null engine at iodepth 8, commits of 4: a reap takes reads and writes together and
    // fio logs them in turn, so the log is the issue order, less the 4 the log's end leaves.
    let job = "[bt]\nioengine=null\nread_iolog=trace.bin\nreplay_redirect=/dev/null\nwrite_lat_log=b\nlog_offset=1\n\
               replay_no_stall=1\niodepth=8\niodepth_batch=4\n";
    let (code, _, err) = run_job(dir.path(), job, &[]);
    assert_eq!(code, Some(0), "{err}");
    let done = lat_log_ios(&std::fs::read_to_string(dir.path().join("b_clat.1.log")).unwrap());
    assert_eq!(done, issued[..396]);
    // Under io_in_polling (both iodepth_batch_complete values 0) fio commits and reaps after each
    // io_u, before it draws the next: nothing is in flight when the log runs out (fio 3.42).
    let polled = job.replace("write_lat_log=b", "write_lat_log=p") + "iodepth_batch_complete_min=0\n";
    let (code, _, err) = run_job(dir.path(), &polled, &[]);
    assert_eq!(code, Some(0), "{err}");
    let done = lat_log_ios(&std::fs::read_to_string(dir.path().join("p_clat.1.log")).unwrap());
    assert_eq!(done, issued);
}
