//! fio's log files from `blksim run` (file names, line counts, columns, windows), `blksim options`,
//! the warning about ignored options that a real run would show, `--interrupts` views and
//! `--trace-window` past the run. Nothing outside the repository is needed.

mod common;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::blksim;

thread_local! {
    /// This test thread's scratch directory, removed when the thread (the test) ends.
    static SCRATCH: tempfile::TempDir = tempfile::Builder::new().prefix("blksim-logs-").tempdir().unwrap();
}

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    let d = SCRATCH.with(|s| s.path().join(name));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Run `blksim run job.fio EXTRA...` in `dir` with `job` as the job file: (status, stdout, stderr).
fn run_in(dir: &Path, job: &str, extra: &[&str]) -> (i32, String, String) {
    std::fs::write(dir.join("job.fio"), job).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_blksim"))
        .arg("run")
        .arg("job.fio")
        .args(extra)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// `job` run in `dir` with JSON output, which must succeed: its first job's object.
fn first_job(dir: &Path, job: &str) -> serde_json::Value {
    let (code, out, err) = run_in(dir, job, &["--output-format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    v["jobs"][0].clone()
}

fn lines(path: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().map(|l| l.split(", ").map(str::to_string).collect()).collect()
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".log"))
        .collect();
    v.sort();
    v
}

const BASE: &str = "[global]\nioengine=libaio\ndirect=1\nfilename=/dev/nvme0n1\nbs=4k\niodepth=4\ncpus_allowed=0\n";

/// `job` (writing `write_iolog=trace`) run in `dir`, which must succeed: its
/// first job's (reads, writes) and the file opens its trace logs.
fn reads_writes_opens(dir: &Path, job: &str) -> ((u64, u64), usize) {
    let j = first_job(dir, job);
    let ios = |d: &str| j[d]["total_ios"].as_u64().unwrap();
    let trace = std::fs::read_to_string(dir.join("trace")).unwrap();
    ((ios("read"), ios("write")), trace.lines().filter(|l| l.ends_with(" open")).count())
}

/// The `write_iolog` trace `trace` in `dir`: the offsets of its I/Os of
/// direction `dir_name` (fio's action word), in blocks of `block` bytes, in order.
fn trace_blocks(dir: &Path, dir_name: &str, block: u64) -> Vec<u64> {
    std::fs::read_to_string(dir.join("trace"))
        .unwrap()
        .lines()
        .map(|l| l.split(' ').collect::<Vec<_>>())
        .filter(|w| w.len() == 5 && w[2] == dir_name)
        .map(|w| w[3].parse::<u64>().unwrap() / block)
        .collect()
}

#[test]
fn per_io_logs_have_fios_names_one_line_per_io_and_fios_columns() {
    let d = dir("per-io");
    let job = format!(
        "{BASE}write_lat_log\nwrite_bw_log=pfx\nwrite_iops_log\nlog_offset=1\n[rr]\nrw=randread\nsize=4m\nnumjobs=2\n"
    );
    let (code, _, err) = run_in(&d, &job, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        names(&d),
        [
            "pfx_bw.1.log",
            "pfx_bw.2.log",
            "rr_clat.1.log",
            "rr_clat.2.log",
            "rr_iops.1.log",
            "rr_iops.2.log",
            "rr_lat.1.log",
            "rr_lat.2.log",
            "rr_slat.1.log",
            "rr_slat.2.log"
        ]
    );
    for name in names(&d) {
        let rows = lines(&d.join(&name));
        assert_eq!(rows.len(), 1024, "{name}: 4 MiB of 4 KiB I/Os");
        // time, value, ddir, bs, offset, prio
        for r in &rows {
            assert_eq!(r.len(), 6, "{name}: {r:?}");
            assert_eq!((r[2].as_str(), r[3].as_str(), r[5].as_str()), ("0", "4096", "0"), "{name}: {r:?}");
            assert_eq!(r[4].parse::<u64>().unwrap() % 4096, 0);
        }
        let times: Vec<u64> = rows.iter().map(|r| r[0].parse().unwrap()).collect();
        if !name.contains("slat") {
            assert!(times.windows(2).all(|w| w[0] <= w[1]), "{name}: in completion order");
        }
    }
    // Each I/O's lat is its slat plus its clat, and iops lines say 1.
    let lat = lines(&d.join("rr_lat.1.log"));
    let clat = lines(&d.join("rr_clat.1.log"));
    assert!(lat.iter().zip(&clat).all(|(l, c)| l[1].parse::<u64>().unwrap() > c[1].parse::<u64>().unwrap()));
    assert!(lines(&d.join("rr_iops.1.log")).iter().all(|r| r[1] == "1"));
}

#[test]
fn windowed_logs_average_per_direction_and_window() {
    let d = dir("window");
    let job = format!(
        "{BASE}time_based\nruntime=20ms\nwrite_lat_log=w\nwrite_bw_log=w\nwrite_iops_log=w\nlog_avg_msec=5\nlog_window_value=both\n[rw]\nrw=randrw\n"
    );
    let (code, _, err) = run_in(&d, &job, &[]);
    assert_eq!(code, 0, "{err}");
    for kind in ["lat", "clat", "slat", "bw", "iops"] {
        let rows = lines(&d.join(format!("w_{kind}.1.log")));
        assert!(!rows.is_empty(), "{kind}");
        for r in &rows {
            // time, mean, max, ddir, bs, prio
            assert_eq!(r.len(), 6, "{kind}: {r:?}");
            let (mean, max): (u64, u64) = (r[1].parse().unwrap(), r[2].parse().unwrap());
            assert!(mean <= max && mean > 0, "{kind}: {r:?}");
            assert!(r[3] == "0" || r[3] == "1", "{kind}: {r:?}");
        }
        let reads = rows.iter().filter(|r| r[3] == "0").count();
        let writes = rows.iter().filter(|r| r[3] == "1").count();
        if kind == "bw" || kind == "iops" {
            // One line per direction at 5, 10, 15, 20 ms, with the direction's block size.
            assert_eq!((reads, writes), (4, 4), "{kind}: {rows:?}");
            let times: Vec<&str> = rows.iter().filter(|r| r[3] == "0").map(|r| r[0].as_str()).collect();
            assert_eq!(times, ["5", "10", "15", "20"]);
            assert!(rows.iter().all(|r| r[4] == "0"), "window lines have bs 0, as fio's __add_stat_to_log");
        } else {
            assert!((4..=5).contains(&reads) && (4..=5).contains(&writes), "{kind}: {rows:?}");
            assert!(rows.iter().all(|r| r[4] == "0"), "window lines have bs 0");
        }
    }
    // iops per window x window = I/Os; bw is KiB/s.
    let iops = lines(&d.join("w_iops.1.log"));
    let bw = lines(&d.join("w_bw.1.log"));
    for (i, b) in iops.iter().zip(&bw) {
        let (i, b): (u64, u64) = (i[1].parse().unwrap(), b[1].parse().unwrap());
        assert!(b.abs_diff(i * 4) <= 4, "bw {b} KiB/s for {i} IOPS of 4 KiB");
    }
}

#[test]
fn histogram_logs_sum_bins_by_coarseness_and_count_the_window() {
    let d = dir("hist");
    let job = format!(
        "{BASE}time_based\nruntime=30ms\nwrite_hist_log\nlog_hist_msec=10\nlog_hist_coarseness=2\n[h]\nrw=randread\n"
    );
    let (code, _, err) = run_in(&d, &job, &[]);
    assert_eq!(code, 0, "{err}");
    let rows = lines(&d.join("h_clat_hist.1.log"));
    assert!((2..=3).contains(&rows.len()), "{rows:?}");
    for r in &rows {
        assert_eq!(r.len(), 3 + 1856 / 4, "time, ddir, bs, then fio's 1856 bins 4 by 4");
        assert_eq!((r[1].as_str(), r[2].as_str()), ("0", "4096"));
        let counted: u64 = r[3..].iter().map(|v| v.parse::<u64>().unwrap()).sum();
        assert!(counted > 100, "each line counts the I/Os of its window: {counted}");
    }
}

#[test]
fn per_job_logs_off_shares_one_file_and_appends() {
    let d = dir("shared");
    let job = format!("{BASE}write_iops_log=s\nper_job_logs=0\n[a]\nrw=read\nsize=64k\nnumjobs=2\n");
    assert_eq!(run_in(&d, &job, &[]).0, 0);
    assert_eq!(names(&d), ["s_iops.log"]);
    assert_eq!(lines(&d.join("s_iops.log")).len(), 32, "both jobs' 16 I/Os");
    assert_eq!(run_in(&d, &job, &[]).0, 0);
    assert_eq!(lines(&d.join("s_iops.log")).len(), 64, "appended, as fio does");
}

#[test]
fn log_options_are_checked_as_fio_checks_them() {
    let d = dir("checks");
    let (code, _, err) = run_in(&d, &format!("{BASE}log_issue_time=1\n[a]\nrw=read\nsize=64k\n"), &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("job.fio:8") && err.contains("requires write_lat_log and log_offset"), "{err}");
    let (code, _, err) = run_in(&d, &format!("{BASE}log_hist_coarseness=7\n[a]\nrw=read\nsize=64k\n"), &[]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = run_in(&d, &format!("{BASE}log_store_compressed=1\n[a]\nrw=read\nsize=64k\n"), &[]);
    assert_eq!(code, 2, "{err}");
    // With issue times: slat and clat lines end with the issue time (ns since the job's start).
    let job = format!("{BASE}write_lat_log=i\nlog_offset=1\nlog_issue_time=1\nlog_prio=1\n[a]\nrw=read\nsize=64k\n");
    assert_eq!(run_in(&d, &job, &[]).0, 0);
    let clat = lines(&d.join("i_clat.1.log"));
    assert_eq!(clat[0].len(), 7);
    assert_eq!(clat[0][5], "0x0000");
    assert!(lines(&d.join("i_lat.1.log")).iter().all(|r| r[6] == "0"), "lat lines have no issue time");
}

#[test]
fn ignored_options_a_real_run_would_show_are_warned_about_once() {
    let d = dir("warn");
    let job = format!(
        "{BASE}log_compression=64k\nlog_unix_epoch=1\n[a]\nrw=read\nsize=64k\nblock_error_percentiles=1\n[b]\nrw=read\nsize=64k\nblock_error_percentiles=1\n"
    );
    let (code, _, err) = run_in(&d, &job, &[]);
    assert_eq!(code, 0, "{err}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(
        warnings.len(),
        2,
        "log_compression and block_error_percentiles once each; log_unix_epoch is modelled: {err}"
    );
    assert!(warnings[0].contains("job.fio:8: option 'log_compression'"), "{err}");
    assert!(warnings[1].contains("job.fio:13: option 'block_error_percentiles'"), "{err}");
    // log_compression: fio writes the same logs by its documentation, but a real run was seen
    // to add bw and iops samples with it; 0 (fio's default) is not warned about.
    let job = format!("{BASE}write_bw_log=c\nlog_compression=64k\n[a]\nrw=read\nsize=64k\n");
    let (code, _, err) = run_in(&d, &job, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("job.fio:9: option 'log_compression'") && err.contains("helper thread"), "{err}");
    let (code, _, err) = run_in(&d, &job.replace("log_compression=64k", "log_compression=0"), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("warning"), "{err}");
}

#[test]
fn options_lists_every_option_with_its_status() {
    let (code, out, _) = blksim(&["options"]);
    assert_eq!(code, 0);
    assert!(out.lines().count() > 280, "{out}");
    for (option, status) in [
        ("bs (blocksize)", "modelled"),
        ("write_lat_log", "modelled"),
        ("log_avg_msec", "modelled"),
        ("randrepeat", "modelled"),
        ("randseed", "modelled"),
        ("allrandrepeat", "no effect"),
        ("description", "modelled"),
        ("log_alternate_epoch (log_unix_epoch)", "modelled"),
        ("disk_util", "modelled"),
        ("block_error_percentiles", "no effect, warns"),
        ("verify", "modelled"),
        ("verify_async", "modelled"),
        ("verify_only", "rejected"),
        ("rwmixcycle", "deprecated"),
    ] {
        let row = out.lines().find(|l| l.starts_with(&format!("{option} "))).unwrap_or_else(|| panic!("{option}"));
        assert!(row.contains(&format!(" {status} ")) || row.ends_with(status), "{row}");
    }
    assert!(out.contains("options of ioengine=io_uring,io_uring_cmd:"));
    let (code, out, _) = blksim(&["options", "--status", "warns"]);
    assert_eq!(code, 0);
    assert!(out.lines().skip(1).all(|l| l.contains("no effect, warns")), "{out}");
    let (code, _, err) = blksim(&["options", "nosuch"]);
    assert_eq!(code, 2);
    assert!(err.contains("'nosuch'"), "{err}");
}

#[test]
fn interrupts_shows_the_used_cpus_and_rows_unless_full() {
    let job = "examples/bench-8drive-libaio.fio";
    let (code, compact, err) = blksim(&["run", job, "--interrupts"]);
    assert_eq!(code, 0, "{err}");
    let (_, full, _) = blksim(&["run", job, "--interrupts=full"]);
    let table = |s: &str| -> Vec<String> {
        s.lines()
            .skip_while(|l| !l.trim_start().starts_with("CPU0"))
            .take_while(|l| !l.is_empty())
            .map(str::to_string)
            .collect()
    };
    let (c, f) = (table(&compact), table(&full));
    assert!(f[0].contains("CPU127") && f.len() > 1000, "the full table: every CPU and IRQ");
    assert!(c.len() < 100 && c[0].len() < 1000, "the compact one: {}", c.join("\n"));
    assert!(c.last().unwrap().starts_with("(all zero, not shown:"), "{}", c.last().unwrap());
    assert!(c[1..c.len() - 1]
        .iter()
        .all(|row| row.split_whitespace().skip(1).any(|v| v.parse::<u64>().is_ok_and(|n| n > 0))));
    // The summary after the table is the same.
    assert_eq!(compact.split("\n\ndevice").nth(1), full.split("\n\ndevice").nth(1));
}

#[test]
fn a_trace_window_after_the_run_is_refused() {
    let d = dir("trace");
    let job = format!("{BASE}time_based\nruntime=5ms\n[a]\nrw=randread\n");
    let (code, out, err) = run_in(&d, &job, &["--trace", "t.json", "--trace-window", "6ms:7ms"]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty() && err.contains("--trace-window 6ms:7ms") && err.contains("5ms"), "{err}");
    assert!(!d.join("t.json").exists());
    // Jobs without a runtime end when their I/O is done: a window after that is said, and no file written.
    let job = format!("{BASE}[a]\nrw=read\nsize=64k\n");
    let (code, _, err) = run_in(&d, &job, &["--trace", "t.json", "--trace-window", "1s:2s"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("warning: --trace-window starts at 1s, after the run ended"), "{err}");
    assert!(!d.join("t.json").exists());
}

#[test]
fn offsets_sizes_and_directions_are_fio_3_42s() {
    // The first 16 I/Os (direction, block of 4 KiB, length in blocks) of each job's write_iolog
    // on the null engine, with fio's defaults (randrepeat=1, randseed 0x89): as fio 3.42, built
    // from its source (the fio-3.42 tag), wrote them. Debian's fio 3.33, which the cross-checks
    // run, seeds the offsets and zipf, pareto and normal otherwise by default.
    let cases = [
        ("rw=randread\nbs=4k\nsize=1m\n", "r:250:1 r:221:1 r:168:1 r:132:1 r:154:1 r:251:1 r:3:1 r:57:1 r:83:1 r:214:1 r:172:1 r:144:1 r:243:1 r:97:1 r:4:1 r:191:1"),
        ("rw=randrw\nbsrange=4k-32k\nsize=1m\n", "r:250:2 r:221:6 r:168:7 w:132:2 r:154:3 r:252:1 w:3:1 w:57:4 w:83:5 r:214:7 w:175:5 r:144:2 w:243:3 r:97:2 r:4:2 r:191:2"),
        ("rw=randread\nbs=4k\nsize=1m\nrandom_distribution=zipf:1.2\n", "r:92:1 r:5:1 r:219:1 r:240:1 r:47:1 r:72:1 r:177:1 r:26:1 r:156:1 r:47:1 r:122:1 r:76:1 r:47:1 r:180:1 r:47:1 r:47:1"),
        ("rw=randread\nbs=4k\nsize=1m\nrandom_distribution=pareto:0.3\n", "r:82:1 r:9:1 r:206:1 r:97:1 r:47:1 r:197:1 r:210:1 r:198:1 r:105:1 r:47:1 r:24:1 r:230:1 r:47:1 r:191:1 r:47:1 r:47:1"),
        ("rw=randread\nbs=4k\nsize=1m\nrandom_distribution=normal:10\n", "r:115:1 r:220:1 r:157:1 r:212:1 r:73:1 r:157:1 r:237:1 r:36:1 r:94:1 r:224:1 r:170:1 r:40:1 r:99:1 r:48:1 r:229:1 r:6:1"),
    ];
    for (i, (case, fio)) in cases.iter().enumerate() {
        let d = dir(&format!("fio342-{i}"));
        let job = format!("[a]\nioengine=null\n{case}number_ios=16\nwrite_iolog=trace\n");
        let (code, _, err) = run_in(&d, &job, &[]);
        assert_eq!(code, 0, "{err}");
        let trace = std::fs::read_to_string(d.join("trace")).unwrap();
        let ours: Vec<String> = trace
            .lines()
            .map(|l| l.split(' ').collect::<Vec<_>>())
            .filter(|w| w.len() == 5)
            .map(|w| {
                format!(
                    "{}:{}:{}",
                    &w[2][..1],
                    w[3].parse::<u64>().unwrap() / 4096,
                    w[4].parse::<u64>().unwrap() / 4096
                )
            })
            .collect();
        assert_eq!(ours.join(" "), *fio, "{}", case.replace('\n', " "));
    }
}

#[test]
fn an_asynchronous_engines_loop_ends_at_its_bytes_and_a_sync_engines_at_a_failing_draw() {
    // fio's do_io counts the bytes an asynchronous engine queued in the pass and ends the pass
    // at `size` (files closed and reopened, the generators seeded again with randrepeat); a sync
    // engine's io_us complete in its queue hook and are not counted, so a job without the random
    // map (nothing makes a draw fail) does all its loops' I/O in one pass, from one stream.
    let passes = |iodepth: u32| {
        let d = dir(&format!("pass-bytes-{iodepth}"));
        let job = format!(
            "[a]\nioengine=null\niodepth={iodepth}\nrw=randread\nbs=4k\nsize=64k\nloops=2\nnorandommap\n\
             write_iolog=trace\n"
        );
        let (code, _, err) = run_in(&d, &job, &[]);
        assert_eq!(code, 0, "{err}");
        let trace = std::fs::read_to_string(d.join("trace")).unwrap();
        let mut passes: Vec<Vec<u64>> = Vec::new();
        for w in trace.lines().map(|l| l.split(' ').collect::<Vec<_>>()) {
            match w.as_slice() {
                [_, _, "open"] => passes.push(Vec::new()),
                [_, _, "read", offset, _] => passes.last_mut().unwrap().push(offset.parse().unwrap()),
                _ => {}
            }
        }
        passes
    };
    // Past iodepth 1 the null engine refuses each io_u after a pass's first with FIO_Q_BUSY
    // while its one committed event waits: fio logs it, reaps, and logs it again when queued.
    let (sync, mut queued) = (passes(1), passes(4));
    for pass in &mut queued {
        assert_eq!(pass.len(), 31, "{pass:?}");
        assert!(pass[1..].chunks(2).all(|twice| twice[0] == twice[1]), "{pass:?}");
        pass.dedup();
    }
    assert_eq!(sync.len(), 1, "{sync:?}");
    assert_eq!(sync[0].len(), 32);
    assert_ne!(sync[0][..16], sync[0][16..], "one stream of draws");
    assert_eq!(queued.len(), 2, "{queued:?}");
    assert_eq!(queued[0], queued[1], "randrepeat: the second loop draws the first's offsets");
    assert_eq!(queued[0], sync[0][..16], "the same generator, seeded alike");
}

#[test]
fn each_loop_drains_and_syncs_before_the_next_and_number_ios_stops_within_a_batch() {
    // fio's thread_main runs do_io once a loop: it drains what is queued and in flight, and
    // end_fsync syncs the file at its end, every loop. Its loop top checks number_ios before
    // each io_u, so a batch of two stops at the fifth.
    let trace = |name: &str, job: &str| {
        let d = dir(name);
        let (code, _, err) = run_in(&d, &format!("[a]\nioengine=null\n{job}write_iolog=trace\n"), &[]);
        assert_eq!(code, 0, "{err}");
        let text = std::fs::read_to_string(d.join("trace")).unwrap();
        text.lines().skip(1).map(|l| l.split(' ').skip(2).collect::<Vec<_>>().join(" ")).collect::<Vec<_>>()
    };
    let lines = trace("loop-end-fsync", "iodepth=4\nrw=write\nbs=4k\nsize=16k\nloops=2\nend_fsync=1\n");
    let acts: Vec<&str> = lines.iter().map(|l| l.split(' ').next().unwrap()).collect();
    let one_loop = ["write", "write", "write", "write", "write", "write", "write", "sync", "close", "open"];
    assert_eq!(acts[..2], ["add", "open"], "{lines:?}");
    assert_eq!(acts[2..12], one_loop, "{lines:?}");
    assert_eq!(acts[12..19], one_loop[..7], "{lines:?}");
    assert_eq!(acts[19..], ["sync", "close"], "{lines:?}");
    let lines = trace("number-ios-batch", "iodepth=4\nrw=read\nbs=4k\nsize=64k\niodepth_batch=2\nnumber_ios=5\n");
    let mut reads: Vec<&String> = lines.iter().filter(|l| l.starts_with("read")).collect();
    reads.dedup();
    assert_eq!(reads.len(), 5, "{lines:?}");
}

/// fio's `exceeds_number_ios` counts the data io_us done and every io_u
/// queued or in flight, a sync too: a sync in flight ends do_io's loop one
/// short, and thread_main's keep_running (`number_ios` not reached, `size`
/// not done) runs another pass, from the file's start (the same offsets
/// with randrepeat); a pass that did no data ends the job. A full queue is
/// reaped before the loop top counts; a trimwrite job's count doubles with
/// each do_io. The expected lines are fio 3.42's
/// (`write_iolog`, times and file names cut; its 3.33 issued a sync after
/// each write queued at once, a bug fixed in 3.38).
#[test]
fn number_ios_counts_a_sync_in_flight_and_keep_running_runs_another_pass() {
    let trace = |name: &str, job: &str| {
        let d = dir(name);
        let (code, _, err) =
            run_in(&d, &format!("[a]\nioengine=null\nbs=4k\nsize=256k\n{job}write_iolog=trace\n"), &[]);
        assert_eq!(code, 0, "{err}");
        let text = std::fs::read_to_string(d.join("trace")).unwrap();
        text.lines().skip(1).map(|l| l.split(' ').skip(2).collect::<Vec<_>>().join(" ")).collect::<Vec<_>>()
    };
    // iodepth 2: the null engine refuses an io_u while its last commit's event waits (each
    // refused one logged twice); the twelfth write's loop top finds the eleventh sync in flight.
    let lines = trace("nios-sync-in-flight", "rw=write\nnumber_ios=12\nfsync=1\niodepth=2\n");
    let mut writes: Vec<&String> = lines.iter().filter(|l| l.starts_with("write")).collect();
    writes.dedup();
    assert_eq!(writes.len(), 12, "{lines:?}");
    let tail = ["sync 0 0", "sync 0 0", "close", "open", "write 0 4096", "close"];
    assert_eq!(lines[lines.len() - tail.len()..], tail, "{lines:?}");
    // A full queue (4 of 4: two writes, a sync, a write) is reaped first: the fourth write goes.
    let lines = trace("nios-full-queue", "rw=write\nnumber_ios=4\nfsync=2\niodepth=4\niodepth_batch=4\n");
    let want = ["add", "open", "write 0 4096", "write 4096 4096", "sync 0 0", "write 8192 4096", "write 12288 4096"];
    assert_eq!(lines, [&want[..], &["close"]].concat(), "{lines:?}");
    // The extra pass draws the first pass's offsets again (randrepeat).
    let job = "rw=randwrite\nnumber_ios=3\nfsync=2\nfdatasync=4\niodepth=14\niodepth_batch=4\n\
               iodepth_batch_complete_min=1\n";
    let lines = trace("nios-random-pass", job);
    let want = ["add", "open", "write 253952 4096", "write 225280 4096", "sync 0 0", "close", "open"];
    assert_eq!(lines, [&want[..], &["write 253952 4096", "close"]].concat(), "{lines:?}");
    // do_io doubles a trimwrite job's number_ios each time it starts: 6 x 2 x 2 loops the first
    // loop (12 trims and their writes), twice that over the second (as many again).
    let lines =
        trace("nios-trimwrite-loops", "rw=trimwrite\nsize=64k\nnumber_ios=6\nloops=2\niodepth=3\niodepth_batch=3\n");
    let passes: Vec<usize> =
        lines.split(|l| l == "open").skip(1).map(|p| p.iter().filter(|l| !l.ends_with("close")).count()).collect();
    assert_eq!(passes, [24, 24], "{lines:?}");
    // A sync engine's sync completes as it is queued (FIO_Q_COMPLETED): never in flight.
    let lines = trace("nios-sync-engine", "rw=write\nnumber_ios=5\nfsync=1\n");
    assert_eq!(lines.iter().filter(|l| l.starts_with("write")).count(), 5, "{lines:?}");
    assert_eq!(lines.iter().filter(|l| l.as_str() == "open").count(), 1, "{lines:?}");
}

#[test]
fn percentage_random_makes_the_rest_of_a_random_jobs_offsets_sequential() {
    // fio's should_do_random: percentage_random=0 leaves a random job sequential from its
    // start; 50 makes about half its offsets follow the last one.
    let offsets = |name: &str, perc: u32| {
        let d = dir(name);
        let job =
            format!("[a]\nioengine=null\nrw=randwrite\nbs=4k\nsize=1m\npercentage_random={perc}\nwrite_iolog=trace\n");
        let (code, _, err) = run_in(&d, &job, &[]);
        assert_eq!(code, 0, "{err}");
        let trace = std::fs::read_to_string(d.join("trace")).unwrap();
        let writes = trace.lines().filter(|l| l.contains(" write "));
        writes.map(|l| l.split(' ').nth(3).unwrap().parse::<u64>().unwrap()).collect::<Vec<_>>()
    };
    let seq = offsets("perc-rand-0", 0);
    assert_eq!(seq, (0..256).map(|i| i * 4096).collect::<Vec<_>>());
    let half = offsets("perc-rand-50", 50);
    assert_eq!(half.len(), 256);
    let follow = half.windows(2).filter(|w| w[1] == w[0] + 4096).count();
    assert!((90..=170).contains(&follow), "{follow} of 255 follow the last offset");
}

#[test]
fn rw_sequencer_identical_repeats_the_last_offset_between_random_draws() {
    // fio's get_next_block without a hit of ddir_seq_nr: with rw_sequencer=identical the
    // direction's last offset (f->last_start) again, so rw=randread:4 reads each offset 4 times.
    let d = dir("rw-identical");
    let job = "[a]\nioengine=null\nrw=randread:4\nbs=4k\nsize=256k\nrw_sequencer=identical\nwrite_iolog=trace\n";
    let (code, _, err) = run_in(&d, job, &[]);
    assert_eq!(code, 0, "{err}");
    let trace = std::fs::read_to_string(d.join("trace")).unwrap();
    let reads: Vec<&str> =
        trace.lines().filter(|l| l.contains(" read ")).map(|l| l.split(' ').nth(3).unwrap()).collect();
    assert_eq!(reads.len(), 64);
    assert!(reads.chunks(4).all(|c| c.iter().all(|o| *o == c[0])), "{reads:?}");
    assert_ne!(reads[0], reads[4]);
}

/// A time-based job whose random map is full starts its file again with
/// fio_file_reset, which also forgets each direction's last start: the next
/// I/O of `rw_sequencer=identical` that repeats one goes to the file's start.
/// fio 3.42's write_iolog of this job (times cut), as direction and block;
/// blksim kept the last starts and sent the 34th I/O to block 6, not 0.
#[test]
fn a_random_maps_reset_forgets_the_last_starts_as_fio_file_reset_does() {
    let trace = trace_text(
        "identical-reset",
        "rw=randrw:2\nrw_sequencer=identical\nbs=4k\nsize=64k\ntime_based\nruntime=100us\nrandseed=7\n",
    );
    let got: Vec<String> = trace
        .split('|')
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            matches!(f.get(1), Some(&"read" | &"write"))
                .then(|| format!("{}{}", &f[1][..1], f[2].parse::<u64>().unwrap() / 4096))
        })
        .take(72)
        .collect();
    let fio = "w8 w8 r9 r9 r12 w8 w15 w15 r0 w15 r7 w15 r1 r1 r13 w15 r2 w15 w10 r2 w11 r2 w14 w14 w3 r2 r4 w3 r5 w3 \
               r6 w3 w4 r0 r6 w4 r0 w4 r9 r9 w7 w7 w12 r9 r10 w12 w11 r10 r13 w11 r14 w11 w15 r14 r8 w15 r1 w15 w2 \
               w2 w3 w3 w5 w5 r15 w0 w7 w7 w8 w8 w11 r15";
    assert_eq!(got.join(" "), fio);
}

#[test]
fn a_size_that_is_not_a_multiple_of_bs_ends_where_fio_ends_it() {
    // size=10001, bs=4k on the null engine (a file of 10,001 bytes): a sequential stream stops
    // where its next block would pass the file's end, the random map holds the whole blocks,
    // and without the map the job issues until its bytes reach size (one block more).
    for (rw, reads) in [("rw=read\n", 2), ("rw=randread\n", 2), ("rw=randread\nnorandommap\n", 3)] {
        let d = dir(&format!("size-10001-{reads}-{}", rw.len()));
        let (code, out, err) =
            run_in(&d, &format!("[a]\nioengine=null\nbs=4k\nsize=10001\n{rw}"), &["--output-format", "json"]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["jobs"][0]["read"]["total_ios"].as_u64(), Some(reads), "{rw}");
    }
}

/// fio's io_in_polling (both `iodepth_batch_complete` values 0): do_io
/// queues an io_u, then `wait_for_completions` takes exactly one event
/// (min 1, and td_io_getevents raises the maximum 0 to it), its getevents
/// committing what is queued first. One io_u is in flight at a time
/// whatever `iodepth` says (a sync engine's wait finds none and counts a
/// reap of 0): fio 3.33 on libaio at iodepth 16 reports
/// "IO depths: 1=100.0%", and fio 3.42's `write_iolog` of a null job with
/// fsyncs shows each sync on the one io_u the last write used.
#[test]
fn io_in_polling_keeps_one_io_u_in_flight() {
    let d = dir("io-in-polling-libaio");
    let job = "[a]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\nruntime=2ms\ntime_based=1\n\
               filename=/dev/nvme0n1\niodepth=16\n";
    let run = |job: &str| first_job(&d, job);
    let queued = run(job);
    let polled = run(&format!("{job}iodepth_batch_complete_min=0\n"));
    let qd1 = run(&job.replace("iodepth=16", "iodepth=1"));
    assert_eq!(polled["iodepth_level"]["1"].as_f64(), Some(100.0), "{}", polled["iodepth_level"]);
    assert!(queued["iodepth_level"]["16"].as_f64().unwrap() > 90.0, "{}", queued["iodepth_level"]);
    assert_eq!(polled["read"]["total_ios"], qd1["read"]["total_ios"]);
    assert!(queued["read"]["total_ios"].as_u64().unwrap() > 4 * polled["read"]["total_ios"].as_u64().unwrap());
    // A sync engine's io_u completes as it is queued: the wait after it finds none in flight
    // and counts a reap of 0 (fio 3.33, psync: "IO complete: 0=50.0%, 4=50.0%").
    let psync = run(&format!("{}iodepth_batch_complete_min=0\n", job.replace("libaio", "psync")));
    assert_eq!(psync["iodepth_complete"]["0"].as_f64(), Some(50.0), "{}", psync["iodepth_complete"]);
    assert_eq!(psync["iodepth_complete"]["4"].as_f64(), Some(50.0), "{}", psync["iodepth_complete"]);
    // The null engine, syncs every 2 writes, batches of 4 (fio 3.42's lines, times cut).
    let d = dir("io-in-polling-null");
    let job = "[a]\nioengine=null\nbs=4k\nsize=32k\nrw=write\niodepth=4\niodepth_batch=4\n\
               iodepth_batch_complete_min=0\nfsync=2\nwrite_iolog=trace\n";
    let (code, _, err) = run_in(&d, job, &[]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(d.join("trace")).unwrap();
    let lines: Vec<String> = text.lines().skip(1).map(|l| l.split(' ').skip(2).collect::<Vec<_>>().join(" ")).collect();
    let mut want = vec!["add".to_string(), "open".to_string()];
    for pair in 0..4u64 {
        want.push(format!("write {} 4096", pair * 8192));
        want.push(format!("write {} 4096", pair * 8192 + 4096));
        if pair < 3 {
            want.push(format!("sync {} 0", pair * 8192 + 4096));
        }
    }
    want.push("close".to_string());
    assert_eq!(lines, want);
}

/// fio's IO depths count io_us as td_io_commit marks them (`io_u_mark_depth`
/// of fio's `io_u_queued`): a batch getevents committed (a full queue's
/// wait, do_io's drain) is counted by the next td_io_commit, or never, but
/// fio divides by every io_u queued. Expected: fio 3.42's JSON for each job.
#[test]
fn io_depths_count_what_td_io_commit_marks() {
    let levels = |name: &str, job: &str| {
        let j = first_job(&dir(name), &format!("[j]\nioengine=null\nsize=256k\nbs=4k\n{job}"));
        let l = &j["iodepth_level"];
        ["1", "2", "4", "8", "16"].map(|k| (l[k].as_f64().unwrap() * 1e4).round() / 1e4)
    };
    // The seventh io_u goes at do_io's end, committed by getevents: never counted (6 of 7).
    assert_eq!(
        levels("depth-drain", "rw=randrw\niodepth=2\niodepth_batch=8\nnumber_ios=7\n"),
        [0.0, 85.7143, 0.0, 0.0, 0.0]
    );
    // end_fsync's td_io_commit counts the last io_u with its sync, at depth 1.
    let job = "rw=write\niodepth=8\niodepth_batch=4\nnumber_ios=33\nend_fsync=1\n";
    assert_eq!(levels("depth-end-fsync", job), [6.0606, 0.0, 96.9697, 0.0, 0.0]);
    // Full queues (a sync among 16) commit through getevents; the next td_io_commit counts all.
    let job = "rw=write\niodepth=16\niodepth_batch=16\nfsync=1\nnumber_ios=100\n";
    assert_eq!(levels("depth-full", job), [0.0, 0.0, 0.0, 0.0, 175.0]);
}

/// `iodepth_low`: fio's wait_for_completions reaps a full queue until no
/// more than `iodepth_low` io_us are left, then fio refills it, so its IO
/// depths spread over the refill. fio 3.33 on libaio at iodepth 32 with
/// iodepth_low=8 (a file with direct=1): 8=29.2%, 16=66.7%, 32=4.2%;
/// without it 32=100%.
#[test]
fn iodepth_low_reaps_a_full_queue_down_before_fio_refills_it() {
    let d = dir("iodepth-low");
    let job = "[a]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\nruntime=5ms\ntime_based=1\n\
               filename=/dev/nvme0n1\niodepth=32\n";
    let levels = |job: &str| {
        let j = first_job(&d, job);
        (["8", "16", "32"].map(|k| j["iodepth_level"][k].as_f64().unwrap()), j["read"]["iops"].as_f64().unwrap())
    };
    let (full, iops) = levels(job);
    assert!(full[2] > 95.0, "{full:?}");
    let (low, low_iops) = levels(&format!("{job}iodepth_low=8\n"));
    for (got, want) in low.iter().zip([29.2, 66.7, 4.2]) {
        assert!((got - want).abs() < 3.0, "{low:?}");
    }
    assert!(low_iops < iops, "{low_iops} vs {iops}");
}

/// The read offsets (bytes) and the read count of a null-engine job with
/// `write_iolog`, or the run's exit code and message when it fails.
fn null_reads(name: &str, case: &str) -> Result<(Vec<u64>, u64), (i32, String)> {
    let d = dir(name);
    let job = format!("[a]\nioengine=null\nfilename=/dev/nvme0n1\n{case}write_iolog=trace\n");
    let (code, out, err) = run_in(&d, &job, &["--output-format", "json"]);
    if code != 0 {
        return Err((code, err));
    }
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ios = v["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    let trace = std::fs::read_to_string(d.join("trace")).unwrap();
    let offsets = trace
        .lines()
        .map(|l| l.split(' ').collect::<Vec<_>>())
        .filter(|w| w.len() == 5)
        .map(|w| w[3].parse().unwrap())
        .collect();
    Ok((offsets, ios))
}

/// The null engine's file is what fio's setup_files makes of it: fio never
/// looks at it, so with `filesize` the job's region is the file past its
/// offset and `size=` is how much I/O it does; `size=N%` is a share of
/// `filesize`, an offset's percentage a share of `size=` in bytes (fio's
/// real_file_size), and zipf's ranges span the region. Expected: fio 3.42's
/// JSON and `write_iolog` for each job (filename=/dev/nvme0n1, no such
/// file); blksim took percentages of the machine's drive and zipf's ranges
/// from `size=` (a 1.6 MB region read whole, an offset past the file's end
/// and no I/O at all, exit 0).
#[test]
fn the_null_engines_file_and_its_percentages_are_fios() {
    let (_, ios) = null_reads("null-size-pct", "rw=read\nbs=4k\nsize=10%\nfilesize=16m\n").unwrap();
    assert_eq!(ios, 409, "10% of 16 MiB, down to 4 KiB blocks");
    let (offsets, _) = null_reads(
        "null-zipf",
        "rw=randread\nbs=4k\nsize=1m\nfilesize=16m\nrandom_distribution=zipf:1.2\nnumber_ios=6\n",
    )
    .unwrap();
    assert_eq!(offsets, [14831616, 12341248, 13475840, 15802368, 13475840, 3194880]);
    let (offsets, ios) = null_reads("null-offset-pct", "rw=read\nbs=4k\nsize=1m\noffset=2%\nfilesize=16m\n").unwrap();
    assert_eq!((offsets[..2].to_vec(), ios), (vec![24576, 28672], 256), "2% of size=1m, up to 4 KiB");
    // fio: "you need to specify valid offset=" (exit 1) and "you need to specify size=".
    let (code, err) = null_reads("null-offset-pct-nosize", "rw=read\nbs=4k\noffset=2%\nfilesize=16m\n").unwrap_err();
    assert_eq!(code, 2);
    assert!(err.contains("job.fio:6: option 'offset'") && err.contains("size= in bytes"), "{err}");
    let (code, err) = null_reads("null-size-pct-nofile", "rw=read\nbs=4k\nsize=10%\n").unwrap_err();
    assert_eq!(code, 2);
    assert!(err.contains("option 'size'") && err.contains("filesize="), "{err}");
}

/// fio's get_next_buflen fails where a varying block size no longer fits
/// the region at its smallest (io_u_fits), and fill_io_u's failure ends
/// do_io's pass: a sequential job with `bs_unaligned` stops short of its
/// region's end (blksim started over at the region's start for one more).
/// With `random_generator=lfsr`, a zoned distribution takes the LFSR's
/// next block unscaled (fio's __get_next_rand_offset) plus its zone's
/// start, and the pass ends at the first past the region. Expected: fio
/// 3.42's counts and offsets.
#[test]
fn a_varying_size_that_no_longer_fits_and_zoned_lfsr_draws_end_the_pass_as_in_fio() {
    let (_, ios) =
        null_reads("unaligned-end", "rw=read\nbsrange=4k-16k\nbs_unaligned=1\nsize=1m\nrandseed=1\n").unwrap();
    assert_eq!(ios, 86);
    let (offsets, ios) = null_reads(
        "zoned-lfsr",
        "rw=randread\nbs=4k\nsize=1m\nrandom_distribution=zoned:50/10:50/90\nrandom_generator=lfsr\n",
    )
    .unwrap();
    assert_eq!(ios, 25);
    assert_eq!(offsets[..6], [933888, 401408, 135168, 724992, 479232, 253952]);
}

/// Three more of fio 3.42's rules, each a wrong answer with exit 0 before:
/// a percentage offset is aligned to `td_min_bs`, the smallest block of
/// every direction (a read job's `bs=16k,4k` aligns to 4 KiB, not 16);
/// `blockalign` turning the random map off sets fio's `o->norandommap`, so
/// a random writer's pass runs to `io_size` (one pass, not four); and a
/// pass that ended at a draw finding no offset marks the file done, so
/// `number_ios` keeps no further pass going (2 I/Os, not 64). Expected:
/// fio 3.42's JSON and `write_iolog`.
#[test]
fn td_min_bs_blockaligns_norandommap_and_a_drawn_out_pass_are_fios() {
    let (offsets, ios) = null_reads("td-min-bs", "rw=randread\nbs=16k,4k\nsize=1m\noffset=2%\nnumber_ios=3\n").unwrap();
    assert_eq!((offsets, ios), (vec![1040384, 925696, 712704], 3));
    let d = dir("blockalign-pass");
    let job = "[a]\nioengine=null\nfilename=/dev/nvme0n1\nrw=randwrite\nbsrange=512-8k\nblockalign=4k\nsize=838656\n\
               randseed=868004\nio_size=3m\niodepth=16\nwrite_iolog=trace\n";
    let (code, out, err) = run_in(&d, job, &["--output-format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["jobs"][0]["write"]["total_ios"].as_u64(), Some(736));
    let trace = std::fs::read_to_string(d.join("trace")).unwrap();
    assert_eq!(trace.lines().filter(|l| l.ends_with(" open")).count(), 1, "one pass");
    let d = dir("drawn-out");
    let job = "[a]\nioengine=null\nfilename=/dev/nvme0n1\nrw=randrw:4\nrwmixread=70\nbs=64k\nblockalign=4k\nsize=4m\n\
               offset=4k\nnumber_ios=333\niodepth=4\n";
    let (code, out, err) = run_in(&d, job, &["--output-format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ios = |dir: &str| v["jobs"][0][dir]["total_ios"].as_u64().unwrap();
    assert_eq!((ios("read"), ios("write")), (2, 0));
}

/// fio's random map past its end: a map of a whole number of 64-block words
/// (a strided zone of 64 KiB over 512-byte blocks) is written one word past
/// its end by axmap_set_nr, and axmap_reset never clears that word, so a
/// later zone's run to the map's end stops at the blocks an earlier one
/// marked there: shorter reads, more of them. Expected: fio 3.42's JSON for
/// each job (blksim: 330 reads where fio does 349; 66 where it does 67).
#[test]
fn a_run_past_the_random_maps_end_is_cut_where_fios_map_word_after_it_says() {
    let (_, ios) =
        null_reads("axmap-ghost", "rw=randread\nbsrange=512-8k\nsize=1m\nzonemode=strided\nzonesize=64k\niodepth=16\n")
            .unwrap();
    assert_eq!(ios, 349);
    let d = dir("axmap-ghost-rw");
    let job = "[a]\nioengine=null\nfilename=/dev/nvme0n1\nrw=randrw\nbssplit=4k/10:16k/90\nsize=2m\n\
               zonemode=strided\nzonesize=256k\nzoneskip=64k\niodepth=16\n";
    let (code, out, err) = run_in(&d, job, &["--output-format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let j = &v["jobs"][0];
    let got = |dir: &str, what: &str| j[dir][what].as_u64().unwrap();
    assert_eq!((got("read", "total_ios"), got("write", "total_ios")), (67, 69));
    assert_eq!((got("read", "io_bytes"), got("write", "io_bytes")), (778240, 802816));
}

/// The null engine's percentage offset once fio's setup_files grew its file
/// to the region past the first offset: fio's later get_start_offset calls
/// take the percentage of the grown size, so a second loop starts further
/// in and stops at the file's grown end, and io_u_fits measures a varying
/// size's room from that later start (fill_io_u then refuses what passes
/// the file's end, and the pass ends). Expected: fio 3.42's `write_iolog`
/// and JSON (blksim: the second loop from 20480 again, 32 reads; 70 reads
/// of 512 KiB for a 256 KiB region where fio does 40 of 312 KiB).
#[test]
fn a_later_loop_starts_where_fio_rederives_the_null_engines_offset() {
    let (offsets, ios) = null_reads("later-start", "rw=read\nbs=4k\nsize=64k\noffset=30%\nloops=2\n").unwrap();
    assert_eq!(ios, 30);
    let second: Vec<u64> = (28672..=81920).step_by(4096).collect();
    assert_eq!(offsets[..16], (20480..=81920).step_by(4096).collect::<Vec<u64>>()[..]);
    assert_eq!(offsets[16..], second[..], "30% of 64 KiB + 20 KiB, up to 4 KiB; to 84 KiB");
    let d = dir("later-start-bsrange");
    let job =
        "[a]\nioengine=null\nfilename=/dev/nvme0n1\nrw=randread\nbsrange=4k-16k\nsize=256k\noffset=10%\nloops=2\n";
    let (code, out, err) = run_in(&d, job, &["--output-format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let read = &v["jobs"][0]["read"];
    assert_eq!((read["total_ios"].as_u64(), read["io_bytes"].as_u64()), (Some(40), Some(319488)));
}

/// A pass that issues nothing stops the job, whatever `io_size` or `loops`
/// leave (do_io's end: "stop job if we failed doing any IO"). zipf draws
/// blocks of the smallest size, `blockalign=8k` doubles them, and the first
/// lands past the region: fio 3.42 does no I/O (exit 0); blksim started
/// pass after pass until `io_size` was done (96 writes).
#[test]
fn a_pass_without_io_ends_the_job_as_fios_do_io_does() {
    let d = dir("empty-pass");
    let job = "[a]\nioengine=null\nfilename=/dev/nvme0n1\nrw=randwrite\nbs=4k\nblockalign=8k\nsize=2m\n\
               random_distribution=zipf:1.2\nio_size=1m\niodepth=16\n";
    let (code, out, err) = run_in(&d, job, &["--output-format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["jobs"][0]["write"]["total_ios"].as_u64(), Some(0));
}

/// `rw_sequencer=identical` in strided zones: fio's fio_file_reset at each
/// zone's start forgets the last offset (`last_start`), so an identical I/O
/// that opens a zone goes to the zone's start. Expected: fio 3.42's
/// `write_iolog` (blksim took the last zone's offset relative to the new
/// one, found it past the region and ended the job after 3 writes).
#[test]
fn an_identical_io_opening_a_strided_zone_goes_to_its_start() {
    let (offsets, _) = null_reads(
        "identical-zones",
        "rw=randwrite:4\nbs=4k\nsize=256k\nzonemode=strided\nzonesize=12k\nzoneskip=16k\nzonerange=64k\n\
         rw_sequencer=identical\n",
    )
    .unwrap();
    assert_eq!(offsets.len(), 64);
    assert_eq!(
        offsets[..12],
        [61440, 61440, 61440, 81920, 135168, 135168, 163840, 163840, 204800, 245760, 245760, 245760]
    );
}

/// A non-uniform `random_distribution` sets fio's `o->norandommap`
/// (fixup_options), so verify's log sorts the writes by offset and keeps
/// one per block (fio_offset_overlap_risk): the read-back is each block
/// once, in offset order. Expected: fio 3.42's `write_iolog` (blksim read
/// back all 16 writes in write order).
#[test]
fn a_distributions_writes_are_read_back_by_offset_as_fio_sorts_them() {
    let d = dir("zipf-verify");
    let job = "[a]\nioengine=null\nfilename=/dev/nvme0n1\nrw=randwrite\nbs=4k\nsize=64k\n\
               random_distribution=zipf:1.2\nverify=md5\nwrite_iolog=trace\n";
    let (code, _, err) = run_in(&d, job, &["--output-format", "json"]);
    assert_eq!(code, 0, "{err}");
    let blocks = |dir: &str| trace_blocks(&d, dir, 4096);
    assert_eq!(blocks("write"), [11, 7, 10, 12, 10, 11, 11, 0, 5, 10, 10, 10, 0, 12, 10, 10]);
    assert_eq!(blocks("read"), [0, 5, 7, 10, 11, 12]);
}

/// `rw=randtrimwrite:N` counts every io_u towards its N, the writes that
/// follow their trims too (get_next_offset decrements td->ddir_seq_nr
/// before it finds the write's offset): with `:2` every trim is drawn at
/// random. Expected: fio 3.42's `write_iolog` (blksim counted only the
/// trims, so every other trim went on sequentially).
#[test]
fn a_randtrimwrites_writes_count_towards_its_sequential_run() {
    let (offsets, _) =
        null_reads("randtrimwrite-seq-nr", "rw=randtrimwrite:2\nbs=8k\nsize=256k\nnumber_ios=8\n").unwrap();
    let blocks: Vec<u64> = offsets.iter().map(|o| o / 8192).collect();
    assert_eq!(blocks, [31, 31, 27, 27, 21, 21, 16, 16, 19, 19, 0, 0, 1, 1, 7, 7]);
}

/// Strided zones as fio's get_next_offset bounds them: a zone's range
/// larger than the job's region draws offsets past it, which end the pass
/// (and a pass without I/O the job); a randtrimwrite write whose trim a
/// zone moved away from has no offset (fio's unsigned difference from the
/// new file offset), which ends the pass too. Expected: fio 3.42 (no I/O;
/// trim, write, trim and no more), where blksim did 16 reads, and wrote on
/// at random offsets without trims.
#[test]
fn strided_zones_end_passes_where_fios_offsets_do() {
    let (offsets, ios) =
        null_reads("zone-past-region", "rw=randread\nbs=4k\nsize=64k\nzonemode=strided\nzonesize=64k\nzonerange=1m\n")
            .unwrap();
    assert_eq!((offsets.len(), ios), (0, 0));
    let (offsets, _) = null_reads(
        "zone-moved-trim",
        "rw=randtrimwrite\nbs=16k\nsize=1m\nzonemode=strided\nzonesize=48k\nzoneskip=64k\nzonerange=64k\n",
    )
    .unwrap();
    assert_eq!(offsets, [3 * 16384, 3 * 16384, 0]);
}

/// After do_verify's read-back fio's clear_io_state marks no file done, so
/// a job whose pass ended short of its size (a sequential mix with holes
/// reaching its region's end) goes on with another pass, its generators
/// seeded again, and reads that back too, until its bytes (read-backs
/// included) reach `size`. Expected: fio 3.42's JSON and `write_iolog` (two
/// passes and two read-backs; blksim stopped after the first).
#[test]
fn a_verifying_job_passes_on_until_its_size_is_done() {
    let d = dir("verify-passes");
    let job = "[a]\nioengine=null\nfilename=/dev/nvme0n1\nrw=readwrite:16k\nbs=4k\nsize=1%\nfilesize=16m\n\
               rw_sequencer=identical\nverify=md5\niodepth=16\nwrite_iolog=trace\n";
    assert_eq!(reads_writes_opens(&d, job), ((28, 12), 4), "two passes, each read back");
}

/// A time-based job goes on while its runtime lasts (fio's keep_running):
/// a pass whose next I/O does not fit (a hole) ends, its file closed, and
/// the next starts with the generators seeded again (blksim ended the job
/// after its first pass); one of several files does not go round its region
/// (get_next_seq_offset wraps a time-based job of one file only): each file
/// is done at its end and the pass starts again (blksim wrapped each file).
/// And a strided job's LFSR spans its zone's range (init_random_map), past
/// a smaller region: fio's first draw falls past it and the job does no I/O
/// (blksim sized the LFSR by the region and wrote its 16 blocks). Expected:
/// fio 3.42's write_iolog (the time-based ones up to where each stopped).
#[test]
fn a_time_based_job_starts_its_passes_again_as_fios_keep_running_does() {
    let cases = [
        (
            "time-hole",
            "rw=rw:4k\nbs=64k\nsize=256k\ntime_based\nruntime=2ms\n",
            "j.0.0 add|j.0.0 open|j.0.0 read 0 65536|j.0.0 read 69632 65536|j.0.0 read 139264 65536|\
             j.0.0 write 0 65536|j.0.0 close|j.0.0 open|j.0.0 read 0 65536|j.0.0 read 69632 65536|\
             j.0.0 read 139264 65536|j.0.0 write 0 65536|j.0.0 write 69632 65536|j.0.0 close|j.0.0 open|\
             j.0.0 read 0 65536|j.0.0 read 69632 65536|j.0.0 read 139264 65536|j.0.0 write 0 65536|j.0.0 close|\
             j.0.0 open|j.0.0 read 0 65536|j.0.0 read 69632 65536|j.0.0 read 139264 65536|j.0.0 write 0 65536|\
             j.0.0 write 69632 65536|j.0.0 close|j.0.0 open|j.0.0 read 0 65536",
        ),
        (
            "time-files",
            "filename=a:b\nrw=write\nbs=16k\nsize=64k\ntime_based\nruntime=2ms\n",
            "a add|b add|a open|a write 0 16384|b open|b write 0 16384|a write 16384 16384|b write 16384 16384|\
             a close|b close|a open|a write 0 16384|b open|b write 0 16384|a write 16384 16384|b write 16384 16384|\
             a close|b close|a open",
        ),
        (
            "strided-lfsr-range",
            "rw=randwrite\nbs=4k\nsize=64k\nrandom_generator=lfsr\nzonemode=strided\nzonesize=256k\nzoneskip=1m\n",
            "j.0.0 add|j.0.0 open|j.0.0 close",
        ),
    ];
    for (name, job, fio) in cases {
        let got = trace_text(name, job);
        let n = fio.split('|').count();
        let head: Vec<&str> = got.split('|').take(n).collect();
        assert_eq!(head.join("|"), fio, "{name}");
    }
}

/// A random draw whose I/O does not fit marks nothing in the random map,
/// and neither does the io_u filled after it: a sequential one, IO_U_F_BUSY_OK
/// (blksim kept the refused draw's mark for the next I/O placed). Here the
/// last draw of a time-based pass falls past the file, and the next pass's
/// first read, sequential, marked block 0, which a later draw then found
/// done (null sweep --time-based seed 430113). Expected: fio 3.42's
/// write_iolog, up to the second pass's reads of file 0 again.
#[test]
fn a_refused_random_draw_leaves_the_next_io_unmarked() {
    let trace = trace_text(
        "refused-draw-mark",
        "filename=/dev/nvme0n1:/dev/nvme1n1\nrw=randrw:2\nrwmixread=50\nbs=8k,4k\nsize=64k\niodepth=16\n\
         time_based\nruntime=2ms\n",
    )
    .replace("/dev/nvme", "");
    let fio = "0n1 add|1n1 add|0n1 open|0n1 read 24576 8192|1n1 open|1n1 read 0 8192|1n1 read 0 8192|0n1 close|\
         1n1 write 0 4096|1n1 write 0 4096|1n1 read 16384 8192|1n1 read 16384 8192|1n1 read 24576 8192|\
         1n1 read 24576 8192|1n1 write 16384 4096|1n1 write 16384 4096|1n1 write 20480 4096|\
         1n1 write 20480 4096|1n1 write 20480 4096|1n1 write 20480 4096|1n1 read 24576 8192|\
         1n1 read 24576 8192|1n1 write 0 4096|1n1 write 0 4096|1n1 read 8192 8192|1n1 read 8192 8192|\
         1n1 write 12288 4096|1n1 write 12288 4096|1n1 read 16384 8192|1n1 read 16384 8192|1n1 close|\
         0n1 open|0n1 read 0 8192|1n1 open|1n1 read 24576 8192|1n1 read 24576 8192|0n1 read 8192 8192|\
         0n1 read 8192 8192|1n1 write 24576 4096|1n1 write 24576 4096|0n1 read 16384 8192|\
         0n1 read 16384 8192|1n1 read 16384 8192|1n1 read 16384 8192|0n1 write 0 4096|0n1 write 0 4096|\
         1n1 write 16384 4096|1n1 write 16384 4096|0n1 write 4096 4096|0n1 write 4096 4096|1n1 close|\
         0n1 write 8192 4096|0n1 write 8192 4096|0n1 read 24576 8192|0n1 read 24576 8192|\
         0n1 write 12288 4096|0n1 write 12288 4096|0n1 read 0 8192|0n1 read 0 8192|0n1 read 8192 8192|\
         0n1 read 8192 8192";
    let n = fio.split('|').count();
    let head: Vec<&str> = trace.split('|').take(n).collect();
    assert_eq!(head.join("|"), fio);
}

/// verify_backlog's read-backs as fio 3.42's do_io gets them (its write_iolog
/// below, times cut). The null engine at a depth above 1 refuses an io_u
/// with FIO_Q_BUSY while completions wait; get_io_u takes it back from the
/// requeue list and check_get_verify counts it in the batch again, so a
/// batch of 4 reads back 2 blocks (blksim read 4). At the end, do_verify
/// reads the rest.
#[test]
fn a_verify_backlog_batch_counts_a_refused_io_u_again_as_fios_requeue_does() {
    let trace = one_file_trace("backlog-busy", "rw=write\nbs=512\nsize=8k\niodepth=16\nverify=md5\nverify_backlog=4\n");
    let fio = "add|open|write 0 512|write 512 512|write 512 512|write 1024 512|write 1024 512|write 1536 512|\
               write 1536 512|read 0 512|read 0 512|read 512 512|read 512 512|write 2048 512|write 2048 512|\
               write 2560 512|write 2560 512|read 1024 512|read 1024 512|read 1536 512|read 1536 512|\
               write 3072 512|write 3072 512|write 3584 512|write 3584 512|read 2048 512|read 2048 512|\
               read 2560 512|read 2560 512|write 4096 512|write 4096 512|write 4608 512|write 4608 512|\
               read 3072 512|read 3072 512|read 3584 512|read 3584 512|write 5120 512|write 5120 512|\
               write 5632 512|write 5632 512|read 4096 512|read 4096 512|read 4608 512|read 4608 512|\
               write 6144 512|write 6144 512|write 6656 512|write 6656 512|read 5120 512|read 5120 512|\
               read 5632 512|read 5632 512|write 7168 512|write 7168 512|write 7680 512|write 7680 512|close|\
               open|read 6144 512|read 6656 512|read 6656 512|read 7168 512|read 7168 512|read 7680 512|\
               read 7680 512|close";
    assert_eq!(trace, fio);
}

/// get_next_verify looks at the first logged block alone (offset order
/// here: `norandommap`): while its write is in flight nothing is read back
/// (blksim took the first completed one). And do_io reaps before its next
/// get_io_u: a write the sync null engine (depth 1) completed can be read
/// back by the next io_u (blksim still had it in flight). fio 3.42's
/// write_iolog, times cut.
#[test]
fn a_verify_backlog_reads_back_the_first_logged_block_once_its_write_is_reaped() {
    let trace = one_file_trace(
        "backlog-first",
        "rw=randwrite\nbs=4k\nsize=64k\nnorandommap=1\niodepth=1\nverify=crc32c\nverify_backlog=4\nrandseed=7\n",
    );
    let fio = "add|open|write 32768 4096|write 32768 4096|write 49152 4096|write 61440 4096|write 0 4096|\
               read 0 4096|read 32768 4096|read 49152 4096|read 61440 4096|write 28672 4096|write 4096 4096|\
               write 49152 4096|write 61440 4096|read 4096 4096|read 28672 4096|read 49152 4096|\
               read 61440 4096|write 40960 4096|write 36864 4096|write 45056 4096|write 61440 4096|\
               read 36864 4096|read 40960 4096|read 45056 4096|read 61440 4096|write 57344 4096|\
               write 53248 4096|write 0 4096|close|open|read 0 4096|read 53248 4096|read 57344 4096|close";
    assert_eq!(trace, fio);
}

/// After do_verify's read-back a time-based job passes again: clear_io_state
/// closes every open file in order (a, b, c), then the pass's first
/// get_next_file finds c done at once (opened and closed) and goes on with a.
/// blksim logged c's close first, then a's and b's (null sweep seed 501097;
/// the sequence is fio 3.42's write_iolog there, times cut).
#[test]
fn a_pass_after_the_read_back_closes_every_file_before_the_one_it_finds_done() {
    let trace = trace_text(
        "verify-pass-closes",
        "filename=a:b:c\nrw=randrw\nrwmixread=10\nbsrange=4k-16k\nblockalign=4k\nsize=256k\n\
         random_distribution=zipf:1.2\niodepth=16\nverify=crc32c\ntime_based=1\nruntime=2ms\n",
    );
    let fio = "c read 81920 4096|a close|b close|c close|c open|c close|a open|a read 77824 4096|";
    assert!(trace.contains(fio), "{trace}");
}

/// A skewed distribution turns the random map off, so verify's log is the
/// offset-ordered tree; a write over a block whose earlier write is still
/// in flight takes that piece off the tree without freeing it
/// (log_io_piece), so the earlier write's completion marks nothing there:
/// the block is read back once the later write is reaped (blksim took the
/// earlier completion for the later write's and read the block back
/// sooner). fio 3.42's write_iolog, times cut (the distribution's seed
/// hashes the file's name).
#[test]
fn a_write_over_one_in_flight_is_read_back_after_its_own_completion() {
    let trace = trace_text(
        "backlog-unlinked",
        "filename=/dev/nvme0n1\nrw=randwrite\nbs=4k\nsize=64k\nrandseed=2\nrandom_distribution=zipf:1.2\n\
         iodepth=16\nverify=crc32c\nverify_backlog=4\nnumber_ios=40\n",
    )
    .replace("/dev/nvme0n1 ", "");
    let fio = "add|open|write 4096 4096|write 32768 4096|write 32768 4096|write 8192 4096|write 8192 4096|\
               write 24576 4096|write 24576 4096|read 4096 4096|read 4096 4096|read 8192 4096|read 8192 4096|\
               write 28672 4096|write 28672 4096|write 24576 4096|write 24576 4096|write 61440 4096|\
               write 61440 4096|read 24576 4096|read 24576 4096|read 28672 4096|read 28672 4096|\
               write 53248 4096|write 53248 4096|write 24576 4096|write 24576 4096|write 49152 4096|\
               write 49152 4096|read 24576 4096|read 24576 4096|read 32768 4096|read 32768 4096|\
               write 16384 4096|write 16384 4096|write 45056 4096|write 45056 4096|read 16384 4096|\
               read 16384 4096|read 45056 4096|read 45056 4096|write 28672 4096|write 28672 4096|\
               write 24576 4096|write 24576 4096|write 24576 4096|write 24576 4096|write 53248 4096|\
               write 53248 4096|close|open|read 24576 4096|read 28672 4096|read 28672 4096|\
               read 49152 4096|read 49152 4096|read 53248 4096|read 53248 4096|read 61440 4096|\
               read 61440 4096|close";
    assert_eq!(trace, fio);
}

/// fio's reset_io_counters forgets the files done between passes only for a
/// time-based job, one of several `loops`, or one with `do_verify` (on by
/// default): with `do_verify=0`, the pass after one whose file ran out gets
/// no file, and the job ends short of its `io_size` (blksim wrote it
/// twice). fio 3.42's write_iolog, times cut.
#[test]
fn do_verify_off_keeps_a_file_done_so_the_next_pass_does_nothing() {
    let off = one_file_trace("do-verify-off", "rw=write\nbs=16k\nsize=64k\nio_size=128k\ndo_verify=0\n");
    let on = one_file_trace("do-verify-on", "rw=write\nbs=16k\nsize=64k\nio_size=128k\n");
    let pass = "write 0 16384|write 16384 16384|write 32768 16384|write 49152 16384|close";
    assert_eq!(off, format!("add|open|{pass}"));
    assert_eq!(on, format!("add|open|{pass}|open|{pass}"));
}

/// A time-based job with `verify` set ends do_io's pass at `size` bytes
/// queued even without `do_verify`: thread_main then goes round again
/// (clear_io_state: the file closed and opened), with nothing read back.
/// blksim wrote on without a pass's end. fio 3.42's write_iolog, times cut,
/// over its first two passes.
#[test]
fn a_time_based_job_with_verify_but_no_do_verify_ends_its_pass_at_size() {
    let trace = one_file_trace(
        "verify-no-do-verify",
        "rw=write\nbs=8k\nsize=64k\niodepth=4\nverify=md5\ndo_verify=0\ntime_based\nruntime=2ms\n",
    );
    let pass = "write 0 8192|write 8192 8192|write 8192 8192|write 16384 8192|write 16384 8192|write 24576 8192|\
                write 24576 8192|write 32768 8192|write 32768 8192|write 40960 8192|write 40960 8192|\
                write 49152 8192|write 49152 8192|write 57344 8192|write 57344 8192|close|open|";
    assert!(trace.starts_with(&format!("add|open|{pass}{pass}")), "{trace}");
}

/// A time-based trimwrite job with verify: do_io counts the trims it queued
/// too, against `size` plus the job's total I/O size (fio's `total_bytes`),
/// so its pass can end between a trim and the write of its block. That
/// write is never issued (clear_io_state forgets the pair) and its block is
/// not read back; blksim ended the pass after the write (`size` bytes of
/// writes). fio 3.42's write_iolog, times cut, over the first pass and its
/// read-back.
#[test]
fn a_time_based_trimwrite_pass_with_verify_ends_where_do_io_counts_its_trims() {
    let trace = one_file_trace(
        "trimwrite-verify-pass",
        "rw=randtrimwrite\nbsrange=4k-16k\nsize=64k\nnorandommap=1\nrandseed=3\nverify=crc32c\niodepth=4\n\
         time_based\nruntime=2ms\n",
    );
    let fio = "add|open|trim 32768 16384|write 32768 16384|write 32768 16384|trim 45056 16384|trim 45056 16384|\
               write 45056 16384|write 45056 16384|trim 28672 8192|trim 28672 8192|write 28672 8192|\
               write 28672 8192|trim 61440 4096|trim 61440 4096|write 61440 4096|write 61440 4096|\
               trim 0 16384|trim 0 16384|write 0 16384|write 0 16384|trim 53248 8192|trim 53248 8192|close|\
               open|read 0 16384|read 28672 8192|read 28672 8192|read 45056 16384|read 45056 16384|\
               read 61440 4096|read 61440 4096|close|open|trim 8192 4096|";
    assert!(trace.starts_with(fio), "{trace}");
}

/// A verifying pass that wrote nothing has nothing to read back: do_verify's
/// clear_io_state closes the file and the next pass opens it, one close and
/// one open (blksim logged a reopen for the empty read-back and another for
/// the pass). The job is the null sweep's seed 430016 (time-based); expected:
/// fio 3.42's write_iolog around its first read-only pass.
#[test]
fn a_read_back_with_nothing_to_read_reopens_the_file_once() {
    let trace = one_file_trace(
        "verify-nothing",
        "rw=readwrite\nbs=16k\nsize=64k\nrandseed=463852\nverify=crc32c\niodepth=16\ntime_based\nruntime=2ms\n",
    );
    assert!(!trace.contains("close|open|close"), "{trace}");
    let fio = "read 16384 16384|read 32768 16384|read 32768 16384|read 49152 16384|read 49152 16384|close|open|\
               write 0 16384|write 16384 16384|write 16384 16384|read 0 16384|read 0 16384|write 32768 16384|\
               write 32768 16384|close|";
    assert!(trace.contains(fio), "{trace}");
}

/// A time-based verifying job's do_io ends its pass at `size` bytes queued
/// (io_queue_event's FIO_Q_QUEUED) to read them back. The null engine at
/// depth 1 (FIO_SYNCIO, like psync) completes each io_u in its queue hook
/// and adds nothing: the job writes, wrapping at the region's end, until
/// its runtime ends. Expected: fio 3.42's write_iolog (at depth 1 no read;
/// at depth 4 the first read-back after 64 writes, all but the first logged
/// twice, and the file reopened); blksim read back at depth 1 too.
#[test]
fn a_time_based_verifying_job_reads_back_only_what_its_engine_queued() {
    let job = "rw=write\nbs=16k\nsize=1m\nverify=crc32c\ntime_based\nruntime=2ms\n";
    let sync = trace_text("verify-time-sync", &format!("{job}iodepth=1\n"));
    assert!(!sync.contains(" read "), "{sync}");
    assert_eq!(sync.matches(" open").count(), 1, "{sync}");
    assert!(sync.contains("|j.0.0 write 1032192 16384|j.0.0 write 0 16384|"), "{sync}");
    let queued = trace_text("verify-time-queued", &format!("{job}iodepth=4\n"));
    let first = queued.split('|').position(|l| l.contains(" read ")).expect("a read-back");
    assert_eq!(first, 131, "{queued}");
    assert_eq!(queued.split('|').nth(129), Some("j.0.0 close"));
}

/// A verifying job whose `number_ios` is spent stops after its read-back:
/// keep_running's exceeds_number_ios comes before its size, and a pass
/// without I/O ends the job. Expected: fio 3.42's JSON and `write_iolog`.
/// (A first version of the size rule above started empty pass after empty
/// pass within one event, writing close and open lines without end.)
#[test]
fn a_verifying_job_stops_when_its_number_ios_is_spent() {
    let d = dir("verify-number-ios");
    let job = "[a]\nioengine=null\nfilename=/dev/nvme0n1\nrw=randwrite\nbssplit=512/30:4k/70\nsize=4m\n\
               random_generator=lfsr\nrandom_distribution=pareto:0.3\nzonemode=strided\nzonesize=64k\nzoneskip=1m\n\
               number_ios=100\nverify=crc32c\niodepth=4\nwrite_iolog=trace\n";
    assert_eq!(reads_writes_opens(&d, job), ((52, 53), 4));
}

/// `bs_is_seq_rand`: get_next_buflen takes a write's block sizes for an
/// I/O whose offset was drawn at random and a read's for a sequential one,
/// whatever its direction, and fio's job line says so in place of the
/// trims' sizes. Expected: fio 3.42's `write_iolog` and normal output (a
/// random read of the write's 16 KiB opens each run of four, three
/// sequential reads of 4 KiB follow; a sequential write job writes the
/// read's 4 KiB; half the random writes' offsets sequential, their sizes
/// from the read's or the write's `bsrange`). blksim refused the option.
#[test]
fn bs_is_seq_rand_sizes_an_io_by_how_its_offset_was_drawn() {
    let ios = |name: &str, case: &str| -> Vec<(String, u64, u64)> {
        let d = dir(name);
        let job = format!("[a]\nioengine=null\nfilename=/dev/nvme0n1\n{case}bs_is_seq_rand=1\nwrite_iolog=trace\n");
        let (code, _, err) = run_in(&d, &job, &["--output-format", "json"]);
        assert_eq!(code, 0, "{err}");
        std::fs::read_to_string(d.join("trace"))
            .unwrap()
            .lines()
            .map(|l| l.split(' ').collect::<Vec<_>>())
            .filter(|w| w.len() == 5)
            .map(|w| (w[2].to_string(), w[3].parse().unwrap(), w[4].parse().unwrap()))
            .collect()
    };
    let sizes = |v: &[(String, u64, u64)], dir: &str| -> Vec<(u64, u64)> {
        assert!(v.iter().all(|(d, _, _)| d == dir), "{v:?}");
        v.iter().map(|&(_, o, l)| (o, l)).collect()
    };
    let a = ios("bs-seq-rand-reads", "rw=randread:4\nbs=4k,16k\nsize=1m\nnumber_ios=12\nrandseed=1\n");
    let k = 1024;
    #[rustfmt::skip]
    let want = [(72 * k, 16 * k), (88 * k, 4 * k), (92 * k, 4 * k), (96 * k, 4 * k),
                (220 * k, 16 * k), (236 * k, 4 * k), (240 * k, 4 * k), (244 * k, 4 * k),
                (836 * k, 16 * k), (852 * k, 4 * k), (856 * k, 4 * k), (860 * k, 4 * k)];
    assert_eq!(sizes(&a, "read"), want);
    let b = ios("bs-seq-rand-writes", "rw=write\nbs=4k,64k\nsize=64k\n");
    assert_eq!(sizes(&b, "write"), (0..16).map(|i| (i * 4 * k, 4 * k)).collect::<Vec<_>>());
    let c =
        ios("bs-seq-rand-range", "rw=randwrite\nbsrange=4k-8k,16k-32k\npercentage_random=50\nsize=1m\nnumber_ios=10\n");
    #[rustfmt::skip]
    let want = [(1015808, 16384), (1032192, 4096), (1036288, 8192), (901120, 16384), (917504, 8192),
                (688128, 16384), (704512, 4096), (540672, 32768), (622592, 32768), (1032192, 16384)];
    assert_eq!(sizes(&c, "write"), want);
    // fio's job line names the rule where the trims' sizes were.
    let d = dir("bs-seq-rand-line");
    let job = "[a]\nioengine=null\nfilename=/dev/nvme0n1\nrw=randread\nbs=4k,16k\nsize=64k\nbs_is_seq_rand=1\n";
    let (code, out, err) = run_in(&d, job, &[]);
    assert_eq!(code, 0, "{err}");
    let want =
        "a: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) 16.0KiB-16.0KiB, bs_is_seq_rand, ioengine=null, iodepth=1";
    assert_eq!(out.lines().next(), Some(want), "{out}");
}

/// `offset_align`: a percentage offset (and a percentage `offset_increment`)
/// is aligned up to it instead of the smallest block size (fio's
/// get_start_offset); an offset in bytes is not aligned; `offset_align=0`
/// with a percentage is refused, as fio divides by it (SIGFPE, exit 136).
/// Expected: fio 3.42's `write_iolog` (blksim refused the option).
#[test]
fn offset_align_aligns_a_percentage_offset_as_fio_does() {
    let k = 1024;
    let (offsets, _) =
        null_reads("offset-align", "rw=read\nbs=4k\nsize=1m\noffset=10%\noffset_align=64k\nnumber_ios=2\n").unwrap();
    assert_eq!(offsets, [128 * k, 132 * k]);
    let (offsets, _) = null_reads(
        "offset-align-clones",
        "rw=read\nbs=4k\nsize=1m\noffset_increment=10%\nnumjobs=3\noffset_align=48k\nnumber_ios=2\n",
    )
    .unwrap();
    let mut offsets = offsets;
    offsets.sort();
    assert_eq!(offsets, [0, 4 * k, 144 * k, 148 * k, 240 * k, 244 * k]);
    let (offsets, _) =
        null_reads("offset-align-bytes", "rw=read\nbs=512\nsize=1m\noffset=5000\noffset_align=64k\nnumber_ios=2\n")
            .unwrap();
    assert_eq!(offsets, [5000, 5512]);
    let (code, err) =
        null_reads("offset-align-zero", "rw=read\nbs=4k\nsize=1m\noffset=10%\noffset_align=0\n").unwrap_err();
    assert_eq!(code, 2);
    assert!(err.contains("job.fio:") && err.contains("offset_align=0") && err.contains("divides by zero"), "{err}");
}

/// A verifying job whose pass did no I/O ends there (fio's thread_main:
/// `fio_mark_td_terminate`, no `clear_io_state`, no do_verify): its files
/// are not closed and opened again. Expected: fio 3.42's `write_iolog` (the
/// first draw lies past the region, so no I/O; one open and one close),
/// where blksim logged a second open and close. Found by the sweep.
#[test]
fn a_verifying_job_whose_pass_did_no_io_does_not_reopen_its_files() {
    let d = dir("verify-empty-pass");
    let job = "[j]\nioengine=null\nfilename=/dev/nvme0n1\nrw=randwrite:8\nbs=4k\nblockalign=8k\nsize=16m\n\
               norandommap=1\nrandom_generator=tausworthe64\nrandom_distribution=pareto:0.3\n\
               percentage_random=50\nloops=3\nverify=crc32c\nwrite_iolog=trace\n";
    let (code, _, err) = run_in(&d, job, &["--output-format", "json"]);
    assert_eq!(code, 0, "{err}");
    let trace = std::fs::read_to_string(d.join("trace")).unwrap();
    let actions: Vec<&str> = trace.lines().skip(1).map(|l| l.rsplit(' ').next().unwrap()).collect();
    assert_eq!(actions, ["add", "open", "close"], "{trace}");
}

/// A verifying `rw=randtrimwrite` job logs its writes for the read-back as
/// any write (do_io's log_io_piece), so do_verify reads each back in the
/// order written. Expected: fio 3.42's `write_iolog`, where blksim read
/// nothing back. Found by a sweep with verify on every writing job.
#[test]
fn a_randtrimwrite_jobs_writes_are_read_back() {
    let d = dir("randtrimwrite-verify");
    let job = "[j]\nioengine=null\nfilename=/dev/nvme0n1\nrw=randtrimwrite\nbs=4k\nsize=64k\nfilesize=16m\n\
               verify=crc32c\nwrite_iolog=trace\n";
    let (code, _, err) = run_in(&d, job, &["--output-format", "json"]);
    assert_eq!(code, 0, "{err}");
    let blocks = |dir: &str| trace_blocks(&d, dir, 4096);
    let written = [4001, 3546, 2690, 2114, 2469, 4004, 59, 926, 1340, 3424, 2761, 2316, 3895, 1567, 52, 3062];
    assert_eq!(blocks("trim"), written);
    assert_eq!(blocks("write"), written);
    assert_eq!(blocks("read"), written);
}

/// A rate for trims: fio paces trims as it paces reads and writes (`rate_ddir`; blksim refused
/// it, and before that ran `rw=trim` with `rate_iops=1000` at 16,000 trims a second, exit 0).
/// Expected: fio 3.42's, 16 trims at 1,067 a second (15 ms), and for `rate_process=poisson`
/// the trims' own seed (FIO_RAND_POISSON3_OFF): 1,420 trims in 500 ms at 3,000 a second.
#[test]
fn a_rate_for_trims_paces_them_as_fio_does() {
    for rw in ["trim", "randtrim"] {
        let j = first_job(
            &dir(&format!("trim-rate-{rw}")),
            &format!("[a]\nioengine=null\nfilename=/dev/nvme0n1\nrw={rw}\nbs=4k\nsize=64k\nrate_iops=1000\n"),
        );
        assert_eq!(j["trim"]["total_ios"], 16, "{rw}");
        assert_eq!(j["trim"]["iops"].as_f64().unwrap().round(), 1067.0, "{rw}");
    }
    let j = first_job(
        &dir("trim-rate-poisson"),
        "[a]\nioengine=null\nsize=64m\nbs=4k\nrw=randtrim\nrate_iops=,,3000\nrate_process=poisson\ntime_based\nruntime=500ms\n",
    );
    assert_eq!(j["trim"]["total_ios"], 1420);
    // A randtrimwrite job's writes count towards the rate, as any write (blksim ran it unpaced:
    // 16,000 a second, 1 ms; fio 3.42: 1,000 a second, 16 ms; blksim now 1,067, 15 ms, as it and
    // fio 3.42 run rw=trimwrite). A trimwrite job goes at its writes' rate whatever its trims'
    // (fio 3.42 with rate_iops=,1000,500: 1,067 trims and writes a second).
    for (name, rw, rate) in [("paired", "randtrimwrite", "1000"), ("apart", "trimwrite", ",1000,500")] {
        let j = first_job(
            &dir(&format!("trim-rate-{name}")),
            &format!("[a]\nioengine=null\nfilename=/dev/nvme0n1\nrw={rw}\nbs=4k\nsize=64k\nrate_iops={rate}\n"),
        );
        for d in ["write", "trim"] {
            let iops = j[d]["iops"].as_f64().unwrap();
            assert!((1000.0..1100.0).contains(&iops), "{name} {d}: {iops} a second");
        }
    }
}

/// fio's get_rw_ddir asks a trimwrite job's writes' rate before every io_u, a trim's too
/// (set_rw_ddir makes it the trim after), and a trim does not move the writes' next time: each
/// pair waits before its trim and its write follows at once. blksim held the write instead
/// (trim at 1 µs, write at 1,001; fio 3.42's write_iolog: trim at 1,112, write at 1,115).
#[test]
fn a_trimwrite_pair_waits_for_the_writes_rate_before_its_trim() {
    let d = dir("trim-rate-order");
    let job =
        "[a]\nioengine=null\nfilename=/dev/nvme0n1\nrw=trimwrite\nbs=4k\nsize=32k\nrate_iops=1000\nwrite_iolog=trace\n";
    let (code, _, err) = run_in(&d, job, &["--output-format", "json"]);
    assert_eq!(code, 0, "{err}");
    let trace = std::fs::read_to_string(d.join("trace")).unwrap();
    let ios: Vec<(u64, String)> = trace
        .lines()
        .map(|l| l.split(' ').collect::<Vec<_>>())
        .filter(|w| w.len() == 5)
        .map(|w| (w[0].parse().unwrap(), w[2].to_string()))
        .collect();
    assert_eq!(ios.len(), 16, "{trace}");
    for (k, pair) in ios.chunks(2).enumerate() {
        assert_eq!((pair[0].1.as_str(), pair[1].1.as_str()), ("trim", "write"), "{trace}");
        assert!(pair[1].0 - pair[0].0 <= 5, "pair {k}: the write waited\n{trace}");
        if k > 0 {
            let gap = pair[0].0 - ios[2 * k - 1].0;
            assert!((900..=1100).contains(&gap), "pair {k}: its trim {gap} µs after the last write\n{trace}");
        }
    }
}

/// `job` (a null-engine section's options, with `write_iolog=trace`) run in
/// a scratch directory `name`: its trace's lines without fio's time column,
/// after the version line, joined by `|`.
/// Run `job` (a whole job file) in a directory of its own, named `name`:
/// it must be refused (exit 2); its message.
fn refused(name: &str, job: &str) -> String {
    let (code, _, err) = run_in(&dir(name), job, &[]);
    assert_eq!(code, 2, "{err}");
    err
}

fn trace_text(name: &str, job: &str) -> String {
    let d = dir(name);
    let (code, _, err) = run_in(&d, &format!("[j]\nioengine=null\nwrite_iolog=trace\n{job}"), &[]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(d.join("trace")).unwrap();
    let cut: Vec<String> =
        text.lines().skip(1).map(|l| l.split_once(' ').map_or(l, |(_, rest)| rest).to_string()).collect();
    cut.join("|")
}

/// `trace_text` of a job of one file, fio's default name for it (`j.0.0`) cut from each line.
fn one_file_trace(name: &str, job: &str) -> String {
    trace_text(name, job).replace("j.0.0 ", "")
}

/// A job of several files, as fio 3.42's get_next_file and setup_files
/// serve them (its write_iolog, times cut): `size=` shared among the files
/// (each file's io_size; blksim gave each file all of it), round robin, each
/// file opened at its first io_u (blksim opened every file at the start), a
/// file whose offsets ran out closed there while the others go on (blksim
/// ended the pass), each loop's files closed and opened again as used; on
/// the null engine the job's files are its names (blksim did all the I/O on
/// the first), each of `filesize` past the offset when it is given.
#[test]
fn several_files_share_size_and_open_and_close_as_fio_serves_them() {
    let cases = [
        (
            "files-bsrange",
            "rw=randread\nbsrange=4k-16k\nsize=96k\nfilename=a:b\n",
            "a add|b add|a open|a read 45056 4096|b open|b read 40960 8192|a read 28672 16384|b read 24576 4096|\
             a read 0 16384|b read 0 4096|a read 16384 4096|b read 8192 4096|a read 20480 4096|b read 4096 4096|\
             a read 24576 4096|b read 28672 4096|a close|b read 16384 4096|b read 12288 4096|b read 32768 8192|\
             b read 20480 4096|b close",
        ),
        (
            "files-loops",
            "rw=read\nsize=32k\nbs=4k\nfilename=a:b\nloops=2\n",
            "a add|b add|a open|a read 0 4096|b open|b read 0 4096|a read 4096 4096|b read 4096 4096|a read 8192 4096|\
             b read 8192 4096|a read 12288 4096|b read 12288 4096|a close|b close|a open|a read 0 4096|b open|\
             b read 0 4096|a read 4096 4096|b read 4096 4096|a read 8192 4096|b read 8192 4096|a read 12288 4096|\
             b read 12288 4096|a close|b close",
        ),
        (
            "files-randrw",
            "rw=randrw\nbs=4k\nsize=40k\nfilename=a:b:c\n",
            "a add|b add|c add|a open|a read 8192 4096|b open|b read 8192 4096|c open|c read 4096 4096|\
             a write 4096 4096|b read 4096 4096|c read 8192 4096|a write 0 4096|b write 0 4096|c write 0 4096|\
             a close|b close|c close",
        ),
        (
            "files-filesize",
            "rw=write\noffset=4k\nfilesize=32k\nsize=1m\nbs=4k\nfilename=a:b\n",
            "a add|b add|a open|a write 4096 4096|b open|b write 4096 4096|a write 8192 4096|b write 8192 4096|\
             a write 12288 4096|b write 12288 4096|a write 16384 4096|b write 16384 4096|a write 20480 4096|\
             b write 20480 4096|a write 24576 4096|b write 24576 4096|a write 28672 4096|b write 28672 4096|\
             a close|b close",
        ),
        (
            "files-devices",
            "rw=randread\nsize=32k\nbs=4k\nfilename=/dev/nvme0n1:/dev/nvme1n1\n",
            "/dev/nvme0n1 add|/dev/nvme1n1 add|/dev/nvme0n1 open|/dev/nvme0n1 read 12288 4096|/dev/nvme1n1 open|\
             /dev/nvme1n1 read 12288 4096|/dev/nvme0n1 read 8192 4096|/dev/nvme1n1 read 8192 4096|\
             /dev/nvme0n1 read 0 4096|/dev/nvme1n1 read 0 4096|/dev/nvme0n1 read 4096 4096|/dev/nvme1n1 read 4096 4096|\
             /dev/nvme0n1 close|/dev/nvme1n1 close",
        ),
    ];
    for (name, job, fio) in cases {
        assert_eq!(trace_text(name, job), fio, "{job}");
    }
}

/// On the machine's drives: `size=` shared between two devices puts each
/// one's random reads in its first half, every block once (blksim spread
/// them over all of `size` on each).
#[test]
fn a_job_on_two_drives_reads_each_ones_share_of_size() {
    let d = dir("files-drives");
    let job = "[j]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\niodepth=4\nsize=256k\n\
               filename=/dev/nvme0n1:/dev/nvme1n1\nwrite_iolog=trace\n";
    let (code, out, err) = run_in(&d, job, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("nvme0n1: ios=32/0") && out.contains("nvme1n1: ios=32/0"), "{out}");
    let text = std::fs::read_to_string(d.join("trace")).unwrap();
    for dev in ["/dev/nvme0n1", "/dev/nvme1n1"] {
        let mut blocks: Vec<u64> = text
            .lines()
            .map(|l| l.split(' ').collect::<Vec<_>>())
            .filter(|w| w.len() == 5 && w[1] == dev && w[2] == "read")
            .map(|w| w[3].parse::<u64>().unwrap() / 4096)
            .collect();
        blocks.sort();
        assert_eq!(blocks, (0..32).collect::<Vec<_>>(), "{dev}");
    }
}

/// `zonemode=strided` over several files, as fio 3.42 runs it (its
/// write_iolog, times cut): each file has its zone (its `file_offset`), the
/// zone bytes are the job's, so a zone moves on whichever file the I/O that
/// fills it goes to (here b's first zone ends after one read, a's after
/// two), and the file reset at each `zonerange` bytes is that file's only.
/// blksim refused several files with zones.
#[test]
fn strided_zones_over_several_files_move_each_files_zone_as_fio_does() {
    let seq = trace_text(
        "files-strided",
        "filename=a:b\nrw=read\nbs=4k\nsize=64k\nzonemode=strided\nzonesize=12k\nzonerange=16k\nzoneskip=8k\n",
    );
    assert_eq!(
        seq,
        "a add|b add|a open|a read 0 4096|b open|b read 0 4096|a read 4096 4096|b read 24576 4096|a read 8192 4096|\
         b read 28672 4096|a read 24576 4096|b close|a read 28672 4096|a close"
    );
    let random = trace_text(
        "files-strided-random",
        "filename=a:b:c\nrw=randread\nbs=4k\nsize=96k\nzonemode=strided\nzonesize=8k\nzoneskip=16k\n\
         file_service_type=roundrobin:2\n",
    );
    assert_eq!(
        random,
        "a add|b add|c add|a open|a read 4096 4096|a read 0 4096|b open|b read 28672 4096|b read 24576 4096|c open|\
         c read 28672 4096|c read 24576 4096|a read 24576 4096|a read 28672 4096|b read 0 4096|b read 4096 4096|\
         c read 4096 4096|c read 0 4096|a read 4096 4096|a read 0 4096|b read 24576 4096|b read 28672 4096|\
         c read 28672 4096|c read 24576 4096|a read 28672 4096|a read 24576 4096|b read 0 4096|b read 4096 4096|\
         c read 0 4096|c read 4096 4096|a close|b close|c close"
    );
}

/// fio's set_io_u_file fills the same io_u again on the next file when one
/// is found done, and the IO_U_F_BUSY_OK a sequential draw set on it there
/// stays (fio clears it when the io_u completes): the next file's random
/// draw then marks no block, and a later one finds it free again. Found by
/// the null sweep (seed 261130): after file c is done, fio 3.42 reads b's
/// four blocks from 335872 twice (each io_u logged twice, the null engine's
/// FIO_Q_BUSY); blksim read on past them.
#[test]
fn an_io_u_filled_again_on_the_next_file_keeps_its_busy_ok_flag() {
    let trace = trace_text(
        "files-busy-ok",
        "rw=randread:4\nbs=4k,8k\nsize=1m\noffset=64k\nrandom_generator=tausworthe64\nloops=3\niodepth=4\n\
         filename=a:b:c\n",
    );
    assert_eq!(trace.split('|').count(), 958, "fio 3.42's log has 958 lines after its version line");
    let after_c: String = ["335872", "339968", "344064", "348160", "335872", "339968", "344064", "348160", "94208"]
        .iter()
        .map(|o| format!("|b read {o} 4096|b read {o} 4096"))
        .collect();
    assert!(trace.contains(&format!("c close{after_c}")), "{trace}");
}

/// A get_io_u that fails puts its io_u back on top of fio's free list (a
/// stack) with the IO_U_F_BUSY_OK its sequential draw set; the io_us that
/// complete in the loop's drain go on top of it, and the next loop's
/// get_io_u takes them first: the carried io_u is the second filled here
/// (one was in flight), and its random draw on c marks no block. fio 3.42
/// then writes c's 32768 and 49152 twice in that loop (each io_u logged twice,
/// the null engine's FIO_Q_BUSY); blksim dropped the flag when an io_u was
/// in flight at the failure, and wrote c's 0 and 16384 there instead.
#[test]
fn a_failed_get_io_u_puts_its_busy_ok_io_u_under_the_ones_that_complete() {
    let trace = trace_text(
        "busy-ok-free-list",
        "rw=randwrite\nbs=16k\nsize=256k\npercentage_random=90\niodepth=4\nfilename=a:b:c\nrandseed=8\nloops=20\n",
    );
    assert_eq!(trace.split('|').count(), 719, "fio 3.42's log has 719 lines after its version line");
    let w = |f: &str, o: u32| format!("{f} write {o} 16384|{f} write {o} 16384");
    let fio = [w("c", 65536), w("a", 0), w("b", 16384), w("c", 32768), w("a", 65536), w("b", 32768), w("c", 49152)];
    assert!(trace.contains(&fio.join("|")), "{trace}");
    let loop_start = "b close|c close|a close|b open|b write 49152 16384|c open|c write 32768 16384";
    assert!(trace.contains(loop_start), "{trace}");
}

/// At iodepth 1 fio reaps each I/O before its next get_io_u (wait_for_completions as the queue
/// fills), so the io_u a failed get_io_u puts back lies on top of the one it reaped, and the
/// next get_io_u takes it with its IO_U_F_BUSY_OK: its random draw is marked nowhere and its
/// length is not cut at a block already done. fio 3.42's write_iolog of this job (1,181 lines):
/// a's 12288 bytes at 348160 at line 273 (blksim, once it put the reap on the free list after
/// the fills, gave that get_io_u a clean io_u and read 8192 at 352256 there).
#[test]
fn at_depth_1_the_reap_goes_under_the_io_u_a_failed_get_io_u_puts_back() {
    let trace = trace_text(
        "busy-ok-depth-1",
        "rw=randread:2\nbsrange=4k-16k\nsize=1m\noffset=64k\nfilename=a:b:c\niodepth=1\nrandseed=9\nloops=10\n",
    );
    assert_eq!(trace.split('|').count(), 1181, "fio 3.42's log has 1,181 lines after its version line");
    let fio = "b read 118784 12288|c read 188416 4096|a read 348160 12288|b read 131072 16384|c read 290816 16384";
    assert!(trace.contains(fio), "{trace}");
}

/// `file_service_type` as fio 3.42's __get_next_file serves a job's files
/// (its write_iolog, times cut): `roundrobin:2` two I/Os to each file in
/// turn, `sequential` each file until it is done, `random` a file drawn
/// from fio's `next_file_state` (seeded from the job's) among those not
/// done (blksim refused all but plain `roundrobin`).
#[test]
fn file_service_type_picks_the_files_as_fio_does() {
    let cases = [
        (
            "fst-rr2",
            "rw=randread\nsize=48k\nbs=4k\nfilename=a:b:c\nfile_service_type=roundrobin:2\n",
            "a add|b add|c add|a open|a read 12288 4096|a read 0 4096|b open|b read 8192 4096|b read 12288 4096|c open|\
             c read 8192 4096|c read 12288 4096|a read 4096 4096|a read 8192 4096|b read 4096 4096|b read 0 4096|\
             c read 0 4096|c read 4096 4096|a close|b close|c close",
        ),
        (
            "fst-seq",
            "rw=randwrite\nsize=48k\nbs=4k\nfilename=a:b:c\nfile_service_type=sequential\n",
            "a add|b add|c add|a open|a write 12288 4096|a write 0 4096|a write 8192 4096|a write 4096 4096|a close|\
             b open|b write 12288 4096|b write 0 4096|b write 4096 4096|b write 8192 4096|b close|c open|\
             c write 8192 4096|c write 12288 4096|c write 0 4096|c write 4096 4096|c close",
        ),
        (
            "fst-rand",
            "rw=randread\nsize=64k\nbs=4k\nfilename=a:b:c:d\nfile_service_type=random\n",
            "a add|b add|c add|d add|d open|d read 12288 4096|d read 0 4096|a open|a read 8192 4096|a read 12288 4096|\
             c open|c read 8192 4096|a read 0 4096|c read 0 4096|d read 4096 4096|c read 4096 4096|d read 8192 4096|\
             d close|b open|b read 8192 4096|b read 12288 4096|c read 12288 4096|a read 4096 4096|c close|\
             b read 0 4096|a close|b read 4096 4096|b close",
        ),
    ];
    for (name, job, fio) in cases {
        assert_eq!(trace_text(name, job), fio, "{job}");
    }
}

/// A trimwrite job's direction is its file's (set_rw_ddir after set_io_u_file: a trim where
/// the file's last trim was written, else the write of its last trim), so its files drawn by a
/// random or skewed `file_service_type` each trim then write in turn as fio 3.42's write_iolog
/// shows (times cut; blksim refused a drawn service with trimwrite).
#[test]
fn a_trimwrite_job_of_drawn_files_trims_and_writes_each_file_as_fio_does() {
    let cases = [
        (
            "tw-random",
            "rw=randtrimwrite\nsize=48k\nbs=4k\nfilename=a:b:c\nfile_service_type=random\nrandseed=3\n",
            "a add|b add|c add|b open|b trim 8192 4096|c open|c trim 8192 4096|b write 8192 4096|a open|\
             a trim 4096 4096|c write 8192 4096|a write 4096 4096|c trim 12288 4096|c write 12288 4096|\
             c trim 0 4096|c write 0 4096|a trim 12288 4096|a write 12288 4096|c trim 4096 4096|\
             b trim 12288 4096|a trim 0 4096|b write 12288 4096|c write 4096 4096|c close|b trim 4096 4096|\
             b write 4096 4096|b trim 0 4096|b write 0 4096|b close|a write 0 4096|a trim 8192 4096|\
             a write 8192 4096|a close",
        ),
        (
            "tw-zipf",
            "rw=trimwrite\nsize=48k\nbs=4k\nfilename=a:b:c\nfile_service_type=zipf:1.2\nrandseed=3\n",
            "a add|b add|c add|c open|c trim 0 4096|c write 0 4096|c trim 4096 4096|a open|a trim 0 4096|\
             c write 4096 4096|c trim 8192 4096|a write 0 4096|c write 8192 4096|a trim 4096 4096|\
             c trim 12288 4096|c write 12288 4096|c close|c open|c trim 0 4096|c write 0 4096|\
             c trim 4096 4096|c write 4096 4096|c trim 8192 4096|c write 8192 4096|c trim 12288 4096|\
             c write 12288 4096|c close|c open|c trim 0 4096|c write 0 4096|c trim 4096 4096|\
             c write 4096 4096|c trim 8192 4096|c write 8192 4096|a close|c close",
        ),
    ];
    for (name, job, fio) in cases {
        assert_eq!(trace_text(name, job), fio, "{name}");
    }
}

/// A verifying job whose read-backs kept up with its writes (verify_backlog=1: nothing left in
/// the log when its writes end) still goes on to its next loop, as fio 3.42's write_iolog shows
/// (34 lines; blksim ended the job after its first loop: 11).
#[test]
fn a_verifying_job_with_nothing_left_to_read_back_goes_on_to_its_next_loop() {
    let trace = trace_text(
        "verify-empty-loops",
        "filename=a\nrw=write\nverify=crc32c\nsize=32k\nbs=8k\nverify_backlog=1\nloops=3\n",
    );
    let pass = "a open|a write 0 8192|a read 0 8192|a write 8192 8192|a read 8192 8192|a write 16384 8192|\
                a read 16384 8192|a write 24576 8192";
    let fio = format!(
        "a add|{pass}|a read 24576 8192|a close|{pass}|a read 24576 8192|a close|{pass}|a close|a open|a read 24576 8192|a close"
    );
    assert_eq!(trace, fio);
}

/// fsync (and end_fsync) with verify: a sync is due after a write only (a backlog's read-back
/// issued last puts it off), it is neither logged for verify nor fio's last completed direction,
/// and do_verify's pass ends with no end_fsync; fio 3.42's write_iolog, times cut (blksim refused
/// fsync with verify).
#[test]
fn fsync_with_verify_syncs_where_fio_does() {
    let trace = trace_text(
        "fsync-verify",
        "filename=a\nrw=write\nverify=crc32c\nsize=32k\nbs=4k\nfsync=3\nverify_backlog=2\nend_fsync=1\nloops=2\n",
    );
    let fio = "a add|a open|a write 0 4096|a write 4096 4096|a read 0 4096|a read 4096 4096|a write 8192 4096|\
               a sync 8192 0|a write 12288 4096|a read 8192 4096|a read 12288 4096|a write 16384 4096|\
               a write 20480 4096|a read 16384 4096|a read 20480 4096|a write 24576 4096|a write 28672 4096|\
               a read 24576 4096|a read 28672 4096|a close|a open|a sync 28672 0|a close|a open|a write 0 4096|\
               a sync 0 0|a write 4096 4096|a read 0 4096|a read 4096 4096|a write 8192 4096|a write 12288 4096|\
               a read 8192 4096|a read 12288 4096|a write 16384 4096|a write 20480 4096|a read 16384 4096|\
               a read 20480 4096|a write 24576 4096|a sync 24576 0|a write 28672 4096|a sync 28672 0|a close|\
               a open|a read 24576 4096|a read 28672 4096|a close";
    assert_eq!(trace, fio);
}

/// fsync with trimwrite, as fio 3.42 issues it (its write_iolog, times
/// cut; blksim refused it): set_rw_ddir keeps get_rw_ddir's sync over the
/// trimwrite's own choice, so a sync is due after each `fsync`-th write, as
/// in a write job; a random trimwrite's write (placed where its trim went)
/// counts as a write issued. end_fsync syncs at the end.
#[test]
fn fsync_with_trimwrite_syncs_after_every_nth_write_as_fio_does() {
    let job = |rw: &str| format!("filename=a\nrw={rw}\nsize=64k\nbs=8k\nfsync=3\nend_fsync=1\nrandseed=7\n");
    assert_eq!(
        trace_text("fsync-randtrimwrite", &job("randtrimwrite")),
        "a add|a open|a trim 32768 8192|a write 32768 8192|a trim 40960 8192|a write 40960 8192|\
         a trim 49152 8192|a write 49152 8192|a sync 49152 0|a trim 57344 8192|a write 57344 8192|\
         a trim 0 8192|a write 0 8192|a trim 24576 8192|a write 24576 8192|a sync 24576 0|\
         a trim 8192 8192|a write 8192 8192|a trim 16384 8192|a write 16384 8192|a sync 16384 0|a close"
    );
    assert_eq!(
        trace_text("fsync-trimwrite", &job("trimwrite")),
        "a add|a open|a trim 0 8192|a write 0 8192|a trim 8192 8192|a write 8192 8192|a trim 16384 8192|\
         a write 16384 8192|a sync 16384 0|a trim 24576 8192|a write 24576 8192|a trim 32768 8192|\
         a write 32768 8192|a trim 40960 8192|a write 40960 8192|a sync 40960 0|a trim 49152 8192|\
         a write 49152 8192|a trim 57344 8192|a write 57344 8192|a sync 57344 0|a close"
    );
}

/// end_fsync over several files as fio 3.42's `fio_file_fsync` logs it
/// (its write_iolog, times cut): an open file is synced; a file closed
/// before (here `a`, done before `b` began) is opened, synced and closed
/// again before the next file's sync. blksim closed it only at the job's
/// end, after `b`'s sync.
#[test]
fn end_fsync_opens_syncs_and_closes_a_closed_file_in_turn_as_fio_does() {
    let trace = trace_text(
        "end-fsync-files",
        "filename=a:b\nrw=write\nbs=8k\nsize=64k\nend_fsync=1\nfile_service_type=sequential\n",
    );
    assert_eq!(
        trace,
        "a add|b add|a open|a write 0 8192|a write 8192 8192|a write 16384 8192|a write 24576 8192|a close|\
         b open|b write 0 8192|b write 8192 8192|b write 16384 8192|b write 24576 8192|a open|a sync 24576 0|\
         a close|b sync 24576 0|b close"
    );
}

/// A sync's line shows the offset its io_u was left with by a fill that failed
/// (fio 3.42's write_iolog, times cut): the region's last 8 KiB write does not
/// fit the 4 KiB left, so fill_io_u refuses the io_u get_next_offset had
/// placed at 20480 (the file offset added), get_io_u puts it back on top, and
/// end_fsync's sync takes it. blksim showed the offset of the io_u's last write
/// (12288, and 8192 below). With several files, each file found done is
/// closed once, as fio closes it; blksim also logged a close of every file and
/// an open and close of each before end_fsync's (`a close|b close|a open|a
/// close|b open|b close|a open|a sync ...`). A strided zone's file offset
/// is the zone's, and the offset left is relative to it (below).
#[test]
fn a_sync_shows_the_offset_a_failed_fill_left_in_its_io_u_as_fio_does() {
    let one = trace_text("stale-fill-one", "filename=a\nrw=write\nbs=8k\nsize=20k\noffset=4k\nend_fsync=1\n");
    assert_eq!(one, "a add|a open|a write 4096 8192|a write 12288 8192|a close|a open|a sync 20480 0|a close");
    let two = trace_text("stale-fill-two", "filename=a:b\nrw=write\nbs=8k\nsize=40k\nend_fsync=1\n");
    assert_eq!(
        two,
        "a add|b add|a open|a write 0 8192|b open|b write 0 8192|a write 8192 8192|b write 8192 8192|a close|\
         b close|a open|a sync 16384 0|a close|b open|b sync 16384 0|b close"
    );
    // A strided zone: after its trim the zone moves 1 MiB on and resets the
    // file (fio_file_reset: no last start, -1), so the trim's write is placed
    // at -1 less the zone's file offset, past the region: the io_u keeps that
    // relative offset (blksim showed the trim's 524288).
    let strided = trace_text(
        "stale-fill-strided",
        "filename=a\nrw=randtrimwrite\nbs=64k\nsize=512k\nfilesize=16m\nzonemode=strided\nzonesize=64k\n\
         zonerange=1m\nend_fsync=1\nrandseed=3\n",
    );
    assert_eq!(strided, "a add|a open|a trim 524288 65536|a close|a open|a sync 18446744073708503039 0|a close");
    // Two files: `a`'s write, after the zone moved 1 MiB + 64 KiB on, is
    // refused at -1 less that; `b`'s zone, still at 0, resets its file too,
    // so its write comes out at -1 itself, which fio's get_next_block takes
    // for no offset ("fio: bug in offset generation"): it fails before it
    // stores it, and the io_u keeps `a`'s (blksim showed -1).
    let minus_one = trace_text(
        "stale-fill-minus-one",
        "filename=a:b\nrw=randtrimwrite\nbs=32k\nsize=256k\nfilesize=16m\nzonemode=strided\nzonesize=64k\n\
         zoneskip=1m\nend_fsync=1\nrandseed=5\n",
    );
    assert_eq!(
        minus_one,
        "a add|b add|a open|a trim 0 32768|b open|b trim 32768 32768|a close|b close|a open|\
         a sync 18446744073708437503 0|a close|b open|b sync 18446744073708437503 0|b close"
    );
}

/// A job that ends on an error runs no `end_fsync`: fio's do_io drains and syncs at its end
/// only `if (!td->error)` (fio 3.42's write_iolog of this job ends `c write ...|c close`, its
/// minimum rate missed at 3 s). blksim synced after the error.
#[test]
fn a_job_ended_by_an_error_runs_no_end_fsync_as_fio_does() {
    let d = dir("min-rate-end-fsync");
    let job = "[c]\nioengine=null\nfilename=c\nsize=1g\nrw=randwrite\nbs=4k\nthinktime=20000\n\
               rate_iops_min=100\nruntime=5s\ntime_based\nend_fsync=1\nwrite_iolog=trace\n";
    let (code, _, err) = run_in(&d, job, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("rate_iops_min=100 not met"), "{err}");
    let text = std::fs::read_to_string(d.join("trace")).unwrap();
    let last: Vec<&str> = text.lines().rev().take(2).map(|l| l.split_once(' ').unwrap().1).collect();
    assert!(last[0] == "c close" && last[1].starts_with("c write "), "{last:?}");
    assert!(!text.contains(" sync "), "{text}");
}

/// A verifying writer whose first pass issued the bytes of all its loops
/// (random writes with `norandommap` go on to `size` x `loops`), with
/// `end_fsync`: after do_verify's read-backs fio's keep_running starts the
/// next loop (loops are left), its do_io finds its bytes issued and issues
/// nothing, and its end still runs end_fsync (the last io_u issued was a
/// read): each file opened for its sync and closed again, then the job ends
/// (fio 3.42's write_iolog, times cut). blksim ended the job after the
/// read-backs, without those syncs.
#[test]
fn a_pass_with_no_io_left_after_a_read_back_still_runs_end_fsync_as_fio_does() {
    let job = "rw=randwrite\nbs=4k\nsize=16k\nnorandommap=1\nrandseed=7\nloops=2\nverify=crc32c\nend_fsync=1\n";
    let one = trace_text("verify-end-fsync-one", &format!("filename=a\n{job}"));
    assert_eq!(
        one,
        "a add|a open|a write 8192 4096|a write 8192 4096|a write 12288 4096|a write 12288 4096|a write 0 4096|\
         a write 4096 4096|a write 0 4096|a write 12288 4096|a sync 12288 0|a close|a open|a read 0 4096|\
         a read 4096 4096|a read 8192 4096|a read 12288 4096|a close|a open|a sync 12288 0|a close"
    );
    let two = trace_text("verify-end-fsync-two", &format!("filename=a:b\n{job}"));
    assert_eq!(
        two,
        "a add|b add|a open|a write 4096 4096|b open|b write 4096 4096|a write 4096 4096|b write 4096 4096|\
         a write 0 4096|b write 0 4096|a write 0 4096|b write 4096 4096|a sync 4096 0|b sync 4096 0|a close|\
         b close|a open|a read 0 4096|a read 4096 4096|b open|b read 0 4096|b read 4096 4096|a close|b close|\
         a open|a sync 4096 0|a close|b open|b sync 4096 0|b close"
    );
}

/// A sync's io_u holds the file it was served, as a write's does, and puts
/// it when reaped (fio 3.42's write_iolog, times cut): with a skewed service
/// at depth 4 on the null engine (which fills before it reaps), `a` runs
/// out and closes while io_us hold it; once the last is put, the next draw
/// of `a` opens it again for a sync. blksim put only the data io_us' files
/// on that path, so `a` stayed closing and its draws went elsewhere (42
/// lines against fio's 46, from the 22nd on another file).
#[test]
fn a_sync_puts_its_file_so_a_closed_file_opens_again_as_fio_does() {
    let trace = trace_text(
        "fsync-zipf",
        "filename=a:b:c\nrw=write\nbs=8k\nsize=96k\nfsync=2\niodepth=4\nfile_service_type=zipf:1.2\n",
    );
    assert_eq!(
        trace,
        "a add|b add|c add|a open|a write 0 8192|a write 8192 8192|a write 8192 8192|a sync 0 0|a sync 0 0|\
         a write 16384 8192|a write 16384 8192|a write 24576 8192|a write 24576 8192|a sync 16384 0|\
         a sync 16384 0|b open|b write 0 8192|b write 0 8192|a close|b write 8192 8192|b write 8192 8192|\
         a open|a sync 0 0|a sync 0 0|a write 0 8192|a write 0 8192|a write 8192 8192|a write 8192 8192|\
         a sync 0 0|a sync 0 0|a write 16384 8192|a write 16384 8192|a write 24576 8192|a write 24576 8192|\
         a sync 16384 0|a sync 16384 0|a close|c open|c write 0 8192|c write 0 8192|a open|a write 0 8192|\
         a write 0 8192|a close|b close|c close"
    );
}

/// A skewed `file_service_type` (`zipf`, `pareto`, `normal`), as fio 3.42
/// serves it (its write_iolog, times cut): each I/O's file drawn from fio's
/// unhashed `next_file_zipf` over `nr_files << 10` ranges, one I/O each; a
/// file whose offsets ran out is closed and starts over (fio_file_reset),
/// none is done, and the job ends by its bytes (blksim refused these). A
/// file closed while io_us still hold it is `closing`: draws that land on
/// it are drawn again until the last is reaped. Here the null engine at
/// depth 4 fills each io_u before it reaps the one before (FIO_Q_BUSY, each
/// logged twice): when `a` runs out its last read is in flight, so the
/// draws of `a` that follow are passed over and `b` is read before `a`
/// opens again; at depth 1 `a` would open again at once.
#[test]
fn a_skewed_file_service_draws_its_files_and_starts_a_file_over_as_fio_does() {
    let pareto = trace_text("fst-pareto", "rw=randread\nsize=64k\nbs=4k\nfilename=a:b:c:d\nfile_service_type=pareto\n");
    assert_eq!(
        pareto,
        "a add|b add|c add|d add|a open|a read 12288 4096|d open|d read 12288 4096|d read 8192 4096|d read 0 4096|\
         d read 4096 4096|d read 0 4096|b open|b read 0 4096|d read 4096 4096|b read 12288 4096|a read 8192 4096|\
         d read 8192 4096|d read 12288 4096|d read 0 4096|b read 8192 4096|d read 12288 4096|d read 4096 4096|\
         a close|b close|d close"
    );
    let closing = trace_text(
        "fst-zipf-closing",
        "rw=read\nsize=48k\nbs=4k\niodepth=4\nfilename=a:b:c\nfile_service_type=zipf:1.2\n",
    );
    let twice = |f: &str, offsets: &[u32]| -> String {
        offsets.iter().map(|o| format!("{f} read {o} 4096|{f} read {o} 4096|")).collect()
    };
    let want = format!(
        "a add|b add|c add|a open|a read 0 4096|{}a close|b open|{}a open|{}{}{}a close|c open|{}a open|{}\
         a close|b close|c close",
        twice("a", &[4096, 8192, 12288]),
        twice("b", &[0]),
        twice("a", &[0]),
        twice("b", &[4096]),
        twice("a", &[4096, 8192, 12288]),
        twice("c", &[0]),
        twice("a", &[0]),
    );
    assert_eq!(closing, want);
}

/// fio's keep_running ends a job whose `io_size` bytes left are fewer than
/// its largest block (`td_max_bs`), a `bssplit`'s largest among them: fio
/// 3.42 reads this file twice (256 KiB, 44 KiB short of `io_size`, under
/// the 64 KiB block); blksim took only `bs`/`bsrange` as the largest and
/// began a third pass.
#[test]
fn a_job_ends_when_fewer_bytes_than_its_largest_bssplit_block_are_left() {
    let job = "filename=f\nrw=read\nbssplit=4k/50:64k/50\nsize=128k\nio_size=300k\n";
    let mut pass = vec!["f open".to_string(), "f read 0 4096".into(), "f read 4096 65536".into()];
    pass.extend((69632..131072).step_by(4096).map(|o| format!("f read {o} 4096")));
    pass.push("f close".into());
    let want = format!("f add|{}|{}", pass.join("|"), pass.join("|"));
    assert_eq!(trace_text("bssplit-max-bs", job), want);
}

/// A skewed file service whose files have no I/O that fits (this job, from
/// the null sweep's seed 340165: fio 3.42 issues none, and closes, reopens
/// and draws its files for ever, its log growing past 1 GiB): blksim
/// gives up after a million files in a row and fails the run saying why,
/// rather than hang or end the job as if it had done its I/O.
#[test]
fn a_skewed_file_service_with_no_io_that_fits_fails_saying_fio_never_ends() {
    let job = "[j]\nioengine=null\nrw=randread\nbs=4k,8k\nblockalign=8k\nsize=10%\nfilesize=16m\n\
               random_generator=lfsr\niodepth=4\nfilename=/dev/nvme0n1:/dev/nvme1n1\nfile_service_type=zipf\n";
    let err = refused("fst-never", job);
    assert!(err.contains("file_service_type draws its files") && err.contains("never ends"), "{err}");
}

/// `rw=trimwrite:-4k` with 4 KiB trims: fio 3.42 trims one block for ever
/// (each trim where the last began; trims are not the job's bytes) and
/// never ends (null sweep seed 360358); blksim ran for ever too. It is
/// refused with why; a hole that moves (`-2k`) runs.
#[test]
fn a_trimwrite_whose_hole_undoes_its_trim_is_refused_as_fio_never_ends() {
    let job = "[j]\nioengine=null\nfilename=/dev/nvme0n1\nrw=trimwrite:-4k\nbs=16k,4k\nsize=1m\n";
    let err = refused("trimwrite-never", job);
    assert!(err.contains("rw=trimwrite:-4096") && err.contains("never ends"), "{err}");
    let ends = trace_text("trimwrite-moves", "filename=f\nrw=trimwrite:-2k\nbs=4k\nsize=16k\n");
    assert_eq!(
        ends,
        "f add|f open|f trim 0 4096|f write 0 4096|f trim 2048 4096|f write 2048 4096|f trim 4096 4096|\
         f write 4096 4096|f trim 6144 4096|f write 6144 4096|f close",
        "fio 3.42's log"
    );
}

/// fio's `log_alternate_epoch` (`log_unix_epoch`): `__add_log_sample` adds `td->alternate_epoch`, the
/// clock's ms when the job's epoch was set (`set_epoch_time`: at its start, again after `ramp_time`), to
/// every log line's time (not to `write_iolog`'s). blksim's clocks are its virtual clock, whose epoch is
/// the run's start: the job below starts at 3 ms and ramps for 2 ms, so every line moves by 5 ms.
#[test]
fn log_unix_epoch_stamps_every_log_line_with_the_virtual_clocks_time() {
    let d = dir("epoch");
    let job = format!(
        "{BASE}[a]\nrw=randread\nsize=1m\nstartdelay=3ms\nramp_time=2ms\ntime_based\nruntime=6ms\n\
         write_lat_log=e\nwrite_bw_log=e\nwrite_hist_log=e\nlog_hist_msec=1\nlog_avg_msec=1\n"
    );
    assert_eq!(run_in(&d, &job, &[]).0, 0);
    let kinds = ["lat", "clat", "slat", "bw", "clat_hist"];
    let plain: Vec<_> = kinds.iter().map(|k| lines(&d.join(format!("e_{k}.1.log")))).collect();
    for k in kinds {
        std::fs::remove_file(d.join(format!("e_{k}.1.log"))).unwrap();
    }
    for option in ["log_unix_epoch=1", "log_alternate_epoch=1\nlog_alternate_epoch_clock_id=1"] {
        let (code, out, err) = run_in(&d, &format!("{job}{option}\n"), &["--output-format=json"]);
        assert_eq!(code, 0, "{err}");
        // fio's JSON job_start is the same clock's time (set with it, again after the ramp).
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["jobs"][0]["job_start"], 5, "{option}");
        // fio 3.42's log_unix_epoch is an alias of log_alternate_epoch: its JSON echoes that name.
        assert_eq!(v["jobs"][0]["job options"]["log_alternate_epoch"], "1", "{option}");
        assert!(!err.contains("warning"), "{option}: {err}");
        for (k, before) in kinds.iter().zip(&plain) {
            let after = lines(&d.join(format!("e_{k}.1.log")));
            assert!(before.len() > 2, "{k}: {before:?}");
            assert_eq!(after.len(), before.len(), "{k}");
            for (a, b) in after.iter().zip(before) {
                let t = |l: &Vec<String>| l[0].parse::<u64>().unwrap();
                assert_eq!(t(a), t(b) + 5, "{option} {k}: {a:?} against {b:?}");
                assert_eq!(a[1..], b[1..], "{k}");
            }
            std::fs::remove_file(d.join(format!("e_{k}.1.log"))).unwrap();
        }
    }
}
