//! Cross-checks of fio's log files and terse lines (`--features crosscheck`; `.ci/run` installs what
//! they need): blksim's logs against the real fio's (Debian's `fio`, null engine: same files, lines and
//! columns), and the log readers people use on them: fio-plot's log graphs (`fio-plot -g`, from
//! PyPI) and fio2gnuplot (Debian's fio package). A missing tool fails the check, saying how to
//! get it; nothing is skipped.

#[path = "../../blksim-fio/tests/crosscheck/mod.rs"]
mod crosscheck;

use std::path::{Path, PathBuf};
use std::process::Command;

thread_local! {
    /// This test thread's scratch directory, removed when the thread (the test) ends.
    static SCRATCH: tempfile::TempDir = tempfile::Builder::new().prefix("blksim-logs-xc-").tempdir().unwrap();
}

fn dir(name: &str) -> PathBuf {
    let d = SCRATCH.with(|s| s.path().join(name));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Run `program job.fio` in `dir` with `job` as the job file; it must succeed.
fn run(mut cmd: Command, dir: &Path, job: &str) {
    std::fs::write(dir.join("job.fio"), job).unwrap();
    let out = cmd.arg("job.fio").current_dir(dir).output().unwrap();
    assert!(out.status.success(), "{:?} in {}: {}", cmd, dir.display(), String::from_utf8_lossy(&out.stderr));
}

/// Run `program --output-format=json job.fio` in `dir` with `job` as the job file; it must
/// succeed. Its JSON.
fn run_json(mut cmd: Command, dir: &Path, job: &str) -> serde_json::Value {
    std::fs::write(dir.join("job.fio"), job).unwrap();
    let out = cmd.args(["--output-format=json", "job.fio"]).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "{:?} in {}: {}", cmd, dir.display(), String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn blksim() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_blksim"));
    c.arg("run");
    c
}

/// The .log files in `dir`: name → lines (each split at ", ").
fn logs(dir: &Path) -> Vec<(String, Vec<Vec<String>>)> {
    let mut v: Vec<(String, Vec<Vec<String>>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let lines = text.lines().map(|l| l.split(", ").map(str::to_string).collect()).collect();
            (p.file_name().unwrap().to_string_lossy().into_owned(), lines)
        })
        .collect();
    v.sort();
    v
}

/// A tool from PyPI (`pip install PACKAGE`), which must be on the PATH.
fn pypi_tool(name: &str, package: &str) -> Command {
    let found =
        std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(name).is_file()));
    assert!(
        found,
        "cross-check input missing: `{name}` is not on the PATH (pip install {package}; .ci/run installs it)"
    );
    Command::new(name)
}

const NULL_JOB: &str = "[global]\nioengine=null\nsize=4m\nbs=4k\niodepth=8\n";

#[test]
fn log_files_have_fios_names_lines_and_columns() {
    // Per-I/O logs: the same files, one line per I/O, the same columns in every line.
    let cases = [
        "write_lat_log\nwrite_bw_log=pfx\nwrite_iops_log\n",
        "write_lat_log=o\nwrite_iops_log=o\nlog_offset=1\nlog_prio=1\n",
        "write_lat_log=s\nwrite_bw_log=s\nper_job_logs=0\n",
        "write_hist_log\nlog_hist_msec=1000\n",
    ];
    for (i, opts) in cases.iter().enumerate() {
        let job = format!("{NULL_JOB}{opts}[randread]\nrw=randread\nnumjobs=2\n");
        let (f, b) = (dir(&format!("fio{i}")), dir(&format!("blksim{i}")));
        run(crosscheck::fio_tool("fio"), &f, &job);
        run(blksim(), &b, &job);
        let (fio, ours) = (logs(&f), logs(&b));
        let names = |l: &[(String, Vec<Vec<String>>)]| l.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        assert_eq!(names(&ours), names(&fio), "{opts}");
        for ((name, a), (_, b)) in fio.iter().zip(&ours) {
            assert_eq!(a.len(), b.len(), "{opts}{name}: lines");
            let widths = |l: &[Vec<String>]| l.iter().map(Vec::len).collect::<std::collections::BTreeSet<_>>();
            assert_eq!(widths(a), widths(b), "{opts}{name}: columns");
        }
    }
    // Windowed logs: the same columns (times and counts depend on the run's timing; fio's helper
    // thread that samples bw and iops starts some 150 ms into a run, so the run is longer than that).
    let job = format!(
        "{NULL_JOB}write_lat_log=w\nwrite_bw_log=w\nwrite_iops_log=w\nlog_avg_msec=10\nlog_offset=1\ntime_based\n\
         runtime=400ms\n[randread]\nrw=randread\n"
    );
    let (f, b) = (dir("fio-window"), dir("blksim-window"));
    run(crosscheck::fio_tool("fio"), &f, &job);
    run(blksim(), &b, &job);
    let (fio, ours) = (logs(&f), logs(&b));
    assert_eq!(fio.len(), ours.len());
    for ((name, a), (_, b)) in fio.iter().zip(&ours) {
        assert_eq!(a.first().map(Vec::len), b.first().map(Vec::len), "{name}: columns");
        // Window lines: block size and offset 0.
        assert!(b.iter().all(|r| r[3] == "0" && r[4] == "0"), "{name}: {:?}", &b[..2]);
    }
}

/// A job whose logs are named as fio-plot's bench_fio names them.
fn fio_plot_logs(name: &str) -> PathBuf {
    let d = dir(name);
    let prefix = "randread-iodepth-8-numjobs-2";
    let job = format!(
        "[global]\nioengine=io_uring\ndirect=1\nfilename=/dev/nvme0n1\nbs=4k\niodepth=8\ntime_based\nruntime=50ms\n\
         write_lat_log={prefix}\nwrite_bw_log={prefix}\nwrite_iops_log={prefix}\nlog_avg_msec=5\n\
         [randread]\nrw=randread\nnumjobs=2\n"
    );
    run(blksim(), &d, &job);
    d
}

#[test]
fn fio_plot_draws_its_log_graphs_from_blksims_logs() {
    let d = fio_plot_logs("fio-plot");
    for types in [["iops", "lat"], ["bw", "clat"], ["slat", "iops"]] {
        let png = d.join(format!("{}-{}.png", types[0], types[1]));
        let out = pypi_tool("fio-plot", "fio-plot")
            .args([
                "-i", ".", "-T", "blksim", "-g", "-t", types[0], types[1], "-r", "randread", "-d", "8", "-n", "2", "-o",
            ])
            .arg(&png)
            .current_dir(&d)
            .output()
            .unwrap();
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success() && !said.contains("Traceback"), "fio-plot -g -t {types:?}: {said}");
        let size = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
        assert!(size > 10_000, "fio-plot -t {types:?} drew {} ({size} bytes)", png.display());
    }
}

#[test]
fn fio2gnuplot_reads_blksims_bandwidth_and_iops_logs() {
    let d = fio_plot_logs("fio2gnuplot");
    for (flag, what) in [("-b", "bw"), ("-i", "iops")] {
        let out_dir = d.join(format!("gnuplot-{what}"));
        std::fs::create_dir_all(&out_dir).unwrap();
        let out = crosscheck::fio_tool("fio2gnuplot")
            .args([flag, "-d"])
            .arg(format!("{}/", out_dir.display()))
            .current_dir(&d)
            .output()
            .unwrap();
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success() && !said.contains("Traceback"), "fio2gnuplot {flag}: {said}");
        // Its statistics over both jobs' logs.
        let global = std::fs::read_to_string(out_dir.join("result.global")).unwrap_or_default();
        let avg: f64 = global.lines().find_map(|l| l.strip_prefix("avg=")).and_then(|v| v.parse().ok()).unwrap_or(0.0);
        let count: u64 =
            global.lines().find_map(|l| l.strip_prefix("disks_count=")).and_then(|v| v.parse().ok()).unwrap_or(0);
        assert!(avg > 0.0 && count == 2, "fio2gnuplot {flag}: {global}");
    }
}

/// `write_iolog` (fio's iolog version 3) of jobs whose I/O order is fixed: the
/// same file as the real fio's, line for line, apart from the first column
/// (µs since the job started: real time there, simulated here) — version
/// line, each file's add and open, every I/O as queued, close and reopen
/// between loops, close, each job's trace appended in turn (the real fio's
/// jobs append theirs as each ends, in an order its threads race for: the
/// traces are compared as a set of per-job blocks).
#[test]
fn write_iolog_is_fios_apart_from_the_times() {
    let cases = [
        "rw=read:8k\nbs=4k\nsize=32k\n",
        "rw=read\nbs=4k\nsize=16k\nloops=2\n",
        "rw=write:-4k\nbs=4k\nsize=64k\noffset=16k\n",
        "rw=read\nbs=8k\nsize=64k\nnumjobs=2\n",
        // The clones' subjob numbers count down (their files' names, offset_increment).
        "rw=read\nbs=4k\nsize=8k\nnumjobs=3\noffset_increment=1m\n",
        // A sync's line: its io_u's last offset, length 0; end_fsync's logged too.
        "rw=write\nbs=4k\nsize=32k\nfsync=3\nend_fsync=1\n",
        "rw=write\nbs=4k\nsize=32k\nfsync=2\nfdatasync=3\n",
        // zonemode=strided: zones moved by range and skip, wrapped, reread, with holes.
        "rw=read\nbs=4k\nsize=64k\nzonemode=strided\nzonesize=8k\nzoneskip=8k\nloops=2\n",
        "rw=write\nbs=4k\nsize=64k\nzonemode=strided\nzonesize=16k\nzonerange=8k\nzoneskip=4k\noffset=8k\n",
        "rw=read\nbs=4k\nsize=32k\nio_size=96k\nzonemode=strided\nzonesize=12k\nzonerange=8k\n",
        "rw=read:4k\nbs=4k\nsize=64k\nzonemode=strided\nzonesize=8k\nzoneskip=4k\n",
        "rw=read\nbs=4k\nsize=64k\nzonemode=strided\nzonesize=8k\nzoneskip=4k\nloops=2\n",
        "rw=read\nbs=4k\nsize=64k\nio_size=96k\nzonemode=strided\nzonesize=12k\nzonerange=16k\n",
        "rw=randread\nbs=4k\nsize=64k\nzonemode=strided\nzonesize=8k\nzonerange=16k\nrandom_generator=lfsr\n\
         randrepeat=0\nrandseed=5\nloops=3\n",
        // The LFSR from fio's seed (setup_random_seeds; randrepeat=0 with a randseed seeds fio
        // 3.33 as 3.42), its reset passes (a loop, a strided zone's range) stepping as fio's.
        "rw=randwrite\nbs=4k\nsize=1m\nrandom_generator=lfsr\nrandrepeat=0\nrandseed=1234\n",
        "rw=randread\nbs=4k\nsize=64k\nrandom_generator=lfsr\nrandrepeat=0\nrandseed=1234\nloops=2\n",
        "rw=randread\nbs=4k\nsize=64k\nrandom_generator=lfsr\nrandrepeat=0\nrandseed=77\nnumjobs=2\n",
        "rw=randread\nbs=4k\nsize=256k\nzonemode=strided\nzonesize=64k\nzonerange=32k\nrandom_generator=lfsr\n\
         randrepeat=0\nrandseed=1234\n",
        // io_size past size: each pass a new one (files closed and opened), while a block's
        // worth is left (keep_running).
        "rw=write\nbs=4k\nsize=16k\nio_size=40k\n",
        "rw=read\nbs=4k\nsize=16k\nio_size=18k\n",
        // With loops: each loop a pass of at most io_size, then passes until io_size is done.
        "rw=write\nbs=4k\nsize=16k\nio_size=64k\nloops=2\n",
        "rw=write\nbs=4k\nsize=16k\nio_size=20k\nloops=3\n",
        "rw=write\nbs=4k\nsize=16k\nio_size=8k\nloops=2\n",
        "rw=randread\nbs=4k\nsize=64k\nio_size=256k\nrandom_generator=lfsr\nrandrepeat=0\nrandseed=9\n",
        // fio's tausworthe (taus88, taus258) from its seeds: offsets through the random map
        // (a busy block's next free one), block sizes per direction (bsrange's redraws near
        // the region's end, the map's cuts), the read/write mix's runs (get_rw_ddir, drawn
        // again at a new loop or pass), zoned distributions' zones.
        "rw=randread\nbs=4k\nsize=1m\nrandrepeat=0\nrandseed=1234\n",
        "rw=randwrite\nbs=4k\nsize=1m\nnorandommap\nrandrepeat=0\nrandseed=99\n",
        "rw=randrw\nrwmixread=70\nbs=4k\nsize=256k\nrandrepeat=0\nrandseed=7\n",
        "rw=randread\nbsrange=4k-64k\nsize=1m\nrandrepeat=0\nrandseed=5\n",
        "rw=randrw\nbssplit=4k/50:16k/30:64k/20\nsize=1m\nrandrepeat=0\nrandseed=5\n",
        "rw=randread\nbsrange=4k-16k\nsize=256k\nrandom_generator=tausworthe64\nrandrepeat=0\nrandseed=13\n",
        "rw=randrw\nbs=4k\nsize=128k\nloops=3\nrandrepeat=0\nrandseed=22\n",
        "rw=randrw\nbs=4k\nsize=128k\nio_size=512k\nrandrepeat=0\nrandseed=20\n",
        "rw=rw\nbs=4k\nsize=128k\nloops=3\nrandrepeat=0\nrandseed=23\n",
        "rw=randrw:4\nbs=4k\nsize=256k\nrandrepeat=0\nrandseed=16\n",
        "rw=randrw\nbs=4k\nsize=128k\nnumjobs=3\nrandrepeat=0\nrandseed=15\n",
        "rw=randread\nbs=4k\nsize=1m\nrandom_distribution=zoned:50/10:50/90\nrandrepeat=0\nrandseed=17\n\
         number_ios=200\n",
        // A randseed overrides randrepeat (fixup_options): the second loop's sizes go on.
        "rw=write\nbsrange=4k-16k\nsize=64k\nloops=2\nrandseed=228\n",
        // number_ios counts over the job, times its loops (exceeds_number_ios).
        "rw=randrw:2\nbs=4k\nsize=256k\nloops=2\nnumber_ios=100\nrandrepeat=0\nrandseed=4\n",
        // An asynchronous engine's pass (the null engine past iodepth 1) ends at its bytes, no
        // direction or offset drawn (do_io's bytes_issued); a sync engine's at a failing draw.
        // Without a map the asynchronous passes are loops of their own (files reopened).
        "iodepth=2\nrw=randread\nbs=4k\nsize=64k\nloops=2\nrandrepeat=0\nrandseed=5\n",
        "iodepth=4\nrw=randread\nbs=4k\nsize=64k\nloops=2\nnorandommap\nrandrepeat=0\nrandseed=8\n",
        "iodepth=4\nrw=randrw\nbs=4k\nsize=128k\nloops=2\nrandrepeat=0\nrandseed=956\n",
        "iodepth=2\nrw=rw\nbs=8k\nsize=64k\nloops=3\nrandrepeat=0\nrandseed=523\n",
        "iodepth=4\nrw=randread\nbs=4k\nsize=64k\nio_size=160k\nrandrepeat=0\nrandseed=11\n",
        // A size that is no multiple of the block size stays as given: the random map holds the
        // whole blocks (an asynchronous pass ends at a failing draw, short of its bytes), a
        // sequential stream ends where its next block would pass the file's end.
        "rw=write:8k\nbs=8k\nsize=100k\n",
        "rw=read\nbs=8k\nsize=100k\nloops=2\n",
        "iodepth=2\nrw=randread\nbs=8k\nsize=100k\nloops=2\nrandrepeat=0\nrandseed=562\n",
        "rw=write:8k\nbs=4k,8k\nsize=100k\nba=2k\nnumjobs=2\noffset_increment=64k\nrandrepeat=0\nrandseed=800\n",
        // An I/O that would end past the file is not issued (fill_io_u).
        "rw=read:4k\nbs=8k\nsize=256k\n",
        "iodepth=2\nrw=write:-4k\nbs=8k\nsize=128k\nzonemode=strided\nzonesize=16k\nzoneskip=16k\n",
        // A pass's total_bytes: size (strided zones wrap, so only the bytes end it), io_size
        // for a map-less random writer.
        "iodepth=2\nrw=write\nbs=4k\nsize=128k\nio_size=512k\nzonemode=strided\nzonesize=16k\nzoneskip=16k\n",
        "iodepth=2\nrw=randwrite\nbs=4k\nsize=64k\nio_size=160k\nnorandommap\nrandrepeat=0\nrandseed=21\n",
        // A trimwrite job's limit counts its writes (io_bytes_exceeded: td_write), its passes
        // all its bytes (keep_running).
        "rw=trimwrite\nbs=4k\nsize=64k\nloops=2\nio_size=40k\n",
        "iodepth=4\nrw=trimwrite\nbsrange=4k-8k\nsize=64k\nio_size=160k\nrandrepeat=0\nrandseed=5\n",
        "rw=randtrimwrite\nbs=4k\nsize=64k\nrandrepeat=0\nrandseed=5\n",
        // A size that fits, in a strided zone: within the region from the job's start.
        "rw=trim\nbsrange=4k-8k\nsize=256k\nloops=3\nzonemode=strided\nzonesize=32k\nzoneskip=16k\n\
         randrepeat=0\nrandseed=881\n",
        // A mixed sequential stream wraps at its region's end only when io_size passes size.
        "iodepth=4\nrw=randrw:3\nbs=8k\nsize=64k\nloops=3\nio_size=32k\nrandrepeat=0\nrandseed=69\n",
        // fio's limit is io_size x loops; past the loops, passes while io_size is not done.
        "rw=read\nbs=4k\nsize=16k\nio_size=40k\nloops=2\n",
        "iodepth=4\nrw=read\nbs=4k\nsize=16k\nio_size=40k\nloops=2\n",
        // Verify reads back each pass's writes (a loop's, an io_size pass's) before the next; a
        // sync engine's pass ends at its failing draw first; keep_running counts the reads too.
        "rw=randwrite\nbs=4k\nsize=64k\nloops=2\nrandrepeat=0\nrandseed=5\nverify=null\n",
        "iodepth=4\nrw=randwrite\nbs=4k\nsize=64k\nloops=2\nrandrepeat=0\nrandseed=6\nverify=null\n",
        "iodepth=4\nrw=randwrite\nbsrange=4k-8k\nsize=64k\nio_size=200k\nrandrepeat=0\nrandseed=195\n\
         verify=null\n",
        "rw=randwrite\nbs=4k\nsize=64k\nio_size=160k\nrandrepeat=0\nrandseed=7\nverify=null\n",
        "rw=write\nbs=4k\nsize=16k\nio_size=40k\nverify=null\n",
        // A sync map-less job's first loop writes every loop's bytes; the next loop has none.
        "rw=rw\nbs=4k\nsize=256k\nloops=2\nio_size=96k\nnorandommap\nrandrepeat=0\nrandseed=521\n\
         verify=null\n",
        // With norandommap the writes are read back sorted by offset (fio_offset_overlap_risk).
        "iodepth=4\nrw=randwrite\nbs=8k\nsize=256k\nloops=2\nnorandommap\nrandrepeat=0\nrandseed=995\n\
         verify=null\n",
        // The null engine's FIO_Q_BUSY: an io_u drawn while a commit's events wait is logged,
        // refused, reaped for, and logged again; a full queue reaps without it; null_getevents
        // returns the whole commit whatever iodepth_batch_complete_max says.
        "iodepth=8\nrw=read\nbs=8k\nsize=128k\niodepth_batch=2\n",
        "iodepth=3\nrw=randread\nbs=4k\nsize=64k\niodepth_batch=3\nrandrepeat=0\nrandseed=3\n",
        "iodepth=4\nrw=write\nbs=4k\nsize=64k\niodepth_batch_complete_max=1\nloops=2\n",
        // do_io's loop top checks number_ios before each io_u of a batch.
        "iodepth=4\nrw=randtrim\nbs=8k\nsize=100k\niodepth_batch=2\nnumber_ios=5\nrandrepeat=0\nrandseed=247\n",
        // Each loop is a do_io: what is queued and in flight drains, end_fsync syncs (the file a
        // failed draw closed is opened for it), then the next loop; a drain's short batch leaves
        // fio's io_u_queued counting into the next loop's first batch.
        "iodepth=3\nrw=read\nbs=4k\nsize=64k\niodepth_batch=3\nloops=3\n",
        "iodepth=8\nrw=read\nbs=8k\nsize=100k\niodepth_batch=8\nloops=3\n",
        "rw=randwrite\nbs=4k\nsize=32k\nfsync=3\nend_fsync=1\nloops=2\nrandrepeat=0\nrandseed=41\n",
        // percentage_random: should_do_random's draw from its one seed (every direction's),
        // the others sequential from the direction's last offset, with rw=...:N too.
        "rw=randread\nbs=4k\nsize=256k\npercentage_random=50\nrandrepeat=0\nrandseed=3\n",
        "iodepth=4\nrw=randrw\nbs=4k\nsize=256k\npercentage_random=30,80\nrandrepeat=0\nrandseed=9\nloops=2\n",
        "rw=randwrite\nbsrange=4k-16k\nsize=256k\npercentage_random=70\nrandrepeat=0\nrandseed=11\nnorandommap\n\
         number_ios=80\n",
        "rw=randread:4\nbs=4k\nsize=256k\npercentage_random=40\nrandrepeat=0\nrandseed=12\n",
        // rw_sequencer=identical: between the random draws, the direction's last offset again.
        "iodepth=4\nrw=randrw:3\nbs=4k\nsize=128k\nrw_sequencer=identical\nrandrepeat=0\nrandseed=5\nloops=2\n",
        "rw=randwrite:2\nbsrange=4k-16k\nsize=256k\nrw_sequencer=identical\nrandrepeat=0\nrandseed=11\n\
         norandommap\nnumber_ios=80\n",
        "rw=randread:5\nbs=8k\nsize=256k\nrw_sequencer=identical\npercentage_random=50\nrandrepeat=0\nrandseed=2\n\
         offset=64k\n",
    ];
    // Every line as fio writes it, its time apart: the null engine past iodepth 1 logs an io_u
    // again when it queues it after FIO_Q_BUSY, in both traces.
    let strip = |p: PathBuf| -> Vec<String> {
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        text.lines()
            .map(|l| l.split_once(' ').map_or(l, |(t, rest)| if t == "fio" { l } else { rest }).to_string())
            .collect()
    };
    for (i, case) in cases.iter().enumerate() {
        let job = format!("[a]\nioengine=null\n{case}write_iolog=trace\n");
        let (f, b) = (dir(&format!("iolog-fio{i}")), dir(&format!("iolog-blksim{i}")));
        run(crosscheck::fio_tool("fio"), &f, &job);
        run(blksim(), &b, &job);
        // Each job's block starts at its version line.
        let blocks = |lines: Vec<String>| {
            let mut v: Vec<Vec<String>> = Vec::new();
            for l in lines {
                match v.last_mut() {
                    Some(b) if !l.starts_with("fio version") => b.push(l),
                    _ => v.push(vec![l]),
                }
            }
            v.sort();
            v
        };
        let (fio, ours) = (blocks(strip(f.join("trace"))), blocks(strip(b.join("trace"))));
        assert_eq!(ours, fio, "{}", case.replace('\n', " "));
    }
}

#[test]
fn a_job_below_its_minimum_rate_fails_as_the_real_fio_fails_it() {
    // check_min_rate: 50 reads a second (a 20 ms think time each) against rate_iops_min=100.
    // The check 2 s in starts the cycle, the one a second later ends the job with EIO: exit 1,
    // err=5 and ~3 s of runtime from both, and fio's "not met" line on stderr.
    let job = "[c]\nioengine=null\nfilename=c\nsize=1g\nrw=randread\nbs=4k\nthinktime=20000\n\
               rate_iops_min=100\nruntime=5s\ntime_based\n";
    let outcome = |mut cmd: Command, d: &Path| {
        std::fs::write(d.join("job.fio"), job).unwrap();
        let out = cmd.args(["--output-format=json", "job.fio"]).current_dir(d).output().unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        // fio prints its thread's exit line (`fio: pid=...`) on stdout, before the JSON.
        let json: serde_json::Value = serde_json::from_str(&stdout[stdout.find('{').expect("JSON")..]).unwrap();
        let j = &json["jobs"][0];
        let got = stderr.lines().find(|l| l.starts_with("c: rate_iops_min=100 not met, got ")).map(str::to_string);
        (out.status.code(), j["error"].as_i64(), j["job_runtime"].as_u64().unwrap(), got, stderr.into_owned())
    };
    let ours = outcome(blksim(), &dir("min-rate-blksim"));
    let fio = outcome(crosscheck::fio_tool("fio"), &dir("min-rate-fio"));
    for (who, o) in [("blksim", &ours), ("fio", &fio)] {
        assert_eq!((o.0, o.1), (Some(1), Some(5)), "{who}: {}", o.4);
        assert!((3000..3100).contains(&o.2), "{who}: runtime {} ms", o.2);
        assert!(o.3.is_some(), "{who}: {}", o.4);
    }
}

#[test]
fn a_replayed_log_waits_as_the_real_fio_waits() {
    // fio's iolog_delay counts from its last issue: set when a synchronous
    // engine queues (the null engine at iodepth 1), never by the asynchronous
    // null engine (only the log's file actions set it), and a first stamp of
    // 0 counts as none. The job's runtime, ms, shows each rule; the real fio
    // and blksim must agree on it and on the I/Os.
    let mut log = String::from("fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n");
    for i in 0..10u64 {
        log += &format!("{} /dev/x read {} 4096\n", i * 1000, i * 8192);
    }
    for (depth, extra) in [(1, ""), (8, ""), (1, "replay_time_scale=50\n"), (1, "replay_no_stall=1\n")] {
        let job =
            format!("[r]\nioengine=null\niodepth={depth}\nread_iolog=trace.log\nreplay_redirect=/dev/null\n{extra}");
        let runtime = |cmd: Command, d: &Path| {
            std::fs::write(d.join("trace.log"), &log).unwrap();
            let v = run_json(cmd, d, &job);
            (v["jobs"][0]["read"]["total_ios"].as_u64(), v["jobs"][0]["job_runtime"].as_u64())
        };
        let ours = runtime(blksim(), &dir(&format!("replay-blksim-{depth}{}", extra.len())));
        // The same I/Os; the real fio's runtime (whole ms of real time) may run over by one on a
        // busy host, and by more when its thread is held back: its run is taken again, up to five times.
        let o = ours.1.unwrap();
        let mut fio = (None, None);
        for _ in 0..5 {
            fio = runtime(crosscheck::fio_tool("fio"), &dir(&format!("replay-fio-{depth}{}", extra.len())));
            if fio.1.is_some_and(|f| o <= f && f <= o + 1) {
                break;
            }
        }
        assert_eq!(ours.0, fio.0, "iodepth={depth} {extra}");
        let f = fio.1.unwrap();
        assert!(o <= f && f <= o + 1, "iodepth={depth} {extra}: runtime {o} ms, the real fio's {f} ms");
    }
}

#[test]
fn flows_share_the_io_as_the_real_fio_shares_it() {
    // fio's t0011 for 2 s: a job at rate_iops=1000 with flow=1 and a flow=8 job
    // of the same flow_id. The real fio issues 2,000 and ~16,000 I/Os (eight
    // per I/O of the first, plus the counter's start at 1).
    let job = "[global]\nbs=4k\nioengine=null\nsize=100g\nruntime=2\nflow_id=1\n[flow1]\nflow=1\nrate_iops=1000\n[flow2]\nflow=8\n";
    let ios = |cmd: Command, d: &Path| {
        let v = run_json(cmd, d, job);
        [0, 1].map(|i| v["jobs"][i]["read"]["total_ios"].as_u64().unwrap() as f64)
    };
    let ours = ios(blksim(), &dir("flow-blksim"));
    // blksim's first job is paced by rate_iops alone (2,000 in 2 s), and the second's count
    // is the race-free one: exactly eight per I/O of the first plus the start. The real
    // fio's counts both depend on the host: flow makes whichever job is ahead sleep, so a
    // busy host that delays the flow=8 thread holds the paced job back too (CI saw 1,948 of
    // 2,000), and flow_threshold_exceeded reads the shared counter without a lock while the
    // other thread adds to it: on a busy 2-CPU CI host it read 16,312, 19,269 and 39,856 for
    // blksim's 16,009 (a ratio of 19.9, outside fio's own t0011 bounds of 6 to 10). So the
    // paced job's count within 5% of the real fio's, and blksim's ratio by fio's t0011
    // criterion; the real fio's second count is not a reference on a shared host.
    assert_eq!(ours[0], 2000.0, "job 0: blksim {ours:?}");
    assert_eq!(ours[1], 8.0 * ours[0] + 9.0, "job 1: blksim {ours:?}");
    // A busy host only holds the real fio's paced job back (CI saw 1,948 and 1,887 of 2,000
    // beside the offload cross-check's minute of work), never ahead of its rate: its run is
    // taken again, up to five times, until one is within 5%.
    let mut fio = [0.0; 2];
    for _ in 0..5 {
        fio = ios(crosscheck::fio_tool("fio"), &dir("flow-fio"));
        if (ours[0] / fio[0] - 1.0).abs() < 0.05 {
            break;
        }
    }
    assert!((ours[0] / fio[0] - 1.0).abs() < 0.05, "job 0: blksim {ours:?}, fio {fio:?}");
    let ratio = ours[1] / ours[0];
    assert!((6.0..=10.0).contains(&ratio), "blksim: flow=8 / flow=1 = {ratio} ({ours:?}; the real fio {fio:?})");
}

#[test]
fn bandwidth_log_writes_the_files_the_real_fio_writes() {
    // fio's t0030 with --bandwidth-log[=NAME]: the same files, each line of the same five columns.
    // (Debian's fio 3.33 samples the aggregate only when it shows its ETA, which a run without a
    // terminal does not: with JSON output it writes one line per file, at the end; fio 62f35562 samples it every
    // bw_avg_time, as blksim does.)
    // (Its =NAME form is newer than 3.33: the t0030 test checks it.)
    for arg in ["--bandwidth-log"] {
        let job = "[test]\nioengine=null\nsize=1T\nrw=read\ntime_based\nruntime=3s\n";
        let (f, b) = (dir(&format!("bwlog-fio{}", arg.len())), dir(&format!("bwlog-blksim{}", arg.len())));
        let mut fio = crosscheck::fio_tool("fio");
        fio.args([arg, "--output-format=json"]);
        run(fio, &f, job);
        let mut ours = blksim();
        ours.args([arg, "--output-format=json"]);
        run(ours, &b, job);
        let (fio, ours) = (logs(&f), logs(&b));
        let names = |l: &[(String, Vec<Vec<String>>)]| l.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        assert_eq!(names(&ours), names(&fio), "{arg}");
        for ((name, a), (_, b)) in fio.iter().zip(&ours) {
            assert!(!a.is_empty() && !b.is_empty(), "{name}");
            let widths = |l: &[Vec<String>]| l.iter().map(Vec::len).collect::<std::collections::BTreeSet<_>>();
            assert_eq!(widths(a), widths(b), "{arg} {name}: columns");
        }
    }
}

#[test]
fn trimwrite_pairs_as_the_real_fio_pairs() {
    // fio's t0024 sections on the null engine: a sequential trimwrite's I/Os
    // (direction, size, offset) are the real fio's, line for line; the random
    // one (t0023) trims and writes as many blocks.
    for (rw, exact) in [("trimwrite", true), ("randtrimwrite", false)] {
        let job = format!(
            "[global]\nsize=1M\nioengine=null\nrw={rw}\nlog_offset=1\nper_job_logs=0\nwrite_bw_log\n\
             [basic]\n[bs]\nbs=8k,8k,8k\n"
        );
        let (f, b) = (dir(&format!("tw-fio-{rw}")), dir(&format!("tw-blksim-{rw}")));
        run(crosscheck::fio_tool("fio"), &f, &job);
        run(blksim(), &b, &job);
        let ios = |l: &[Vec<String>]| l.iter().map(|r| r[2..5].to_vec()).collect::<Vec<_>>();
        for ((name, a), (_, o)) in logs(&f).iter().zip(&logs(&b)) {
            assert_eq!(a.len(), o.len(), "{rw} {name}: lines");
            if exact {
                assert_eq!(ios(a), ios(o), "{rw} {name}");
            }
        }
    }
}

#[test]
fn verify_reads_back_as_the_real_fio_reads_back() {
    // The write_iolog of a verifying job (verify=null: the real fio's null
    // engine keeps no data to check) is the real fio's line for line: the
    // backlog batches between the writes, the reopen before do_verify, the
    // blocks read back in offset order.
    let cases = [
        "rw=write\nverify_backlog=32\n",
        "rw=write\n",
        "rw=read\n",
        "rw=write\nverify_backlog=8\nverify_backlog_batch=3\n",
        "rw=rw\nrwmixread=0\n",
        // Each loop's writes read back before the next loop (fio's thread_main).
        "rw=write\nloops=3\n",
    ];
    for (i, case) in cases.iter().enumerate() {
        let job = format!("[a]\nioengine=null\nsize=64k\nbs=4k\nverify=null\nwrite_iolog=trace\n{case}");
        let (f, b) = (dir(&format!("verify-fio{i}")), dir(&format!("verify-blksim{i}")));
        run(crosscheck::fio_tool("fio"), &f, &job);
        run(blksim(), &b, &job);
        let strip = |p: PathBuf| -> Vec<String> {
            std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .map(|l| l.split_once(' ').map_or(l, |x| x.1).to_string())
                .collect()
        };
        assert_eq!(strip(b.join("trace")), strip(f.join("trace")), "{}", case.replace('\n', " "));
    }
    // A random job's loops: the same I/O in the same order, the offsets aside (with randrepeat
    // fio 3.33 seeds its offsets otherwise than 3.42, and without a randseed from the system);
    // and with randrepeat (fio's default) each loop draws the first loop's offsets again, in
    // both; without it, not.
    for (i, repeat) in [(0, true), (1, false)] {
        let job = format!(
            "[a]\nioengine=null\nsize=64k\nbs=4k\nverify=null\nwrite_iolog=trace\nrw=randwrite\nloops=2\n\
             verify_backlog=5\nrandrepeat={}\n",
            repeat as u8
        );
        let (f, b) = (dir(&format!("verify-rand-fio{i}")), dir(&format!("verify-rand-blksim{i}")));
        run(crosscheck::fio_tool("fio"), &f, &job);
        run(blksim(), &b, &job);
        let ops = |p: PathBuf| -> Vec<(String, u64)> {
            std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .skip(1)
                .map(|l| {
                    let w: Vec<&str> = l.split(' ').collect();
                    (w[2].to_string(), w.get(3).map_or(u64::MAX, |o| o.parse().unwrap()))
                })
                .collect()
        };
        let (real, sim) = (ops(f.join("trace")), ops(b.join("trace")));
        let kinds = |v: &[(String, u64)]| v.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
        assert_eq!(kinds(&sim), kinds(&real), "randrepeat={repeat}");
        for (who, v) in [("fio", &real), ("blksim", &sim)] {
            let writes: Vec<u64> = v.iter().filter(|x| x.0 == "write").map(|x| x.1).collect();
            let (first, second) = writes.split_at(writes.len() / 2);
            assert_eq!(first == second, repeat, "{who}, randrepeat={repeat}: {writes:?}");
        }
    }
    // With a randseed the offsets are fio's too, line for line, and the verify state file
    // holds the real fio's offset generator words at the job's end (fio 3.33 writes its
    // version 3 layout, blksim 3.42's: the three taus88 words are found in it). (One loop: between
    // loops a sync engine's fio draws once more, failing on the full map, before its read-back;
    // blksim does not, see the README.)
    let job = "[w]\nioengine=null\nsize=64k\nbs=4k\nverify=null\nwrite_iolog=trace\nrw=randwrite\n\
               verify_backlog=5\nrandrepeat=0\nrandseed=5\n";
    let (f, b) = (dir("verify-seed-fio"), dir("verify-seed-blksim"));
    run(crosscheck::fio_tool("fio"), &f, job);
    run(blksim(), &b, job);
    let strip = |p: PathBuf| -> Vec<String> {
        std::fs::read_to_string(p).unwrap().lines().map(|l| l.split_once(' ').map_or(l, |x| x.1).to_string()).collect()
    };
    assert_eq!(strip(b.join("trace")), strip(f.join("trace")), "randseed=5");
    let (real, ours) = [&f, &b].map(|d| std::fs::read(d.join("local-w-0-verify.state")).unwrap()).into();
    // Ours: the header's 24 bytes, then depth, padding, numberio, index, use64 (32 bytes).
    let words = &ours[56..68];
    assert!(words.iter().any(|&x| x != 0), "{ours:?}");
    assert!(
        real.windows(12).any(|w| w == words),
        "the generator's words {words:?} not in the real fio's state {real:?}"
    );
}

#[path = "support/blktrace.rs"]
mod blktrace_file;

#[test]
fn a_blktrace_replays_as_the_real_fio_replays_it() {
    // blktrace cannot record here (the sandbox's debugfs refuses it): a synthetic
    // trace of queue, issue and complete events, replayed by the real fio and by
    // blksim on the null engine: the same I/Os in the same order, and the same
    // waits (runtime in whole ms; the real fio's may run over by one).
    let job = "[bt]\nioengine=null\nread_iolog=trace.bin\nreplay_redirect=/dev/null\nwrite_lat_log=bt\nlog_offset=1\n";
    let replay = |cmd: Command, d: &Path| {
        std::fs::write(d.join("trace.bin"), blktrace_file::blktrace(30, 300)).unwrap();
        std::fs::write(d.join("job.fio"), job).unwrap();
        let mut cmd = cmd;
        let out = cmd.args(["--output-format=json", "job.fio"]).current_dir(d).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let log = std::fs::read_to_string(d.join("bt_clat.1.log")).unwrap();
        let ios: Vec<Vec<String>> =
            log.lines().map(|l| l.split(", ").skip(2).take(3).map(str::to_string).collect()).collect();
        (ios, v["jobs"][0]["job_runtime"].as_u64().unwrap())
    };
    let (ours, ms) = replay(blksim(), &dir("bt-blksim"));
    // The real fio's sleeps overrun on a busy host (tests run in parallel on two cores: 11 ms
    // for 8 once): its run is taken again, up to three times, until it is within the criterion.
    let mut fio_ms = 0;
    for _ in 0..3 {
        let (fio, t) = replay(crosscheck::fio_tool("fio"), &dir("bt-fio"));
        assert_eq!(ours, fio);
        fio_ms = t;
        if ms <= fio_ms && fio_ms <= ms + 1 {
            break;
        }
    }
    assert!(ms <= fio_ms && fio_ms <= ms + 1, "runtime {ms} ms, the real fio's {fio_ms} ms");
}

#[test]
fn a_recorded_blktrace_and_fios_log_of_it_replay_as_the_real_fio_replays_them() {
    // examples/traces/loop-randrw.blktrace: a real trace of fio on a loop device
    // (scripts/record-blktrace.sh), and loop-randrw.iolog, that fio's write_iolog of the same
    // run. Each replayed on the null engine (the trace at the depth fio probes in it, 4; the log
    // at iodepth 4) by the real fio and by blksim: the same latency-log lines (direction,
    // length, offset) in the same order, and the same I/Os issued and bytes done per direction.
    // Both logs end with the file's close, so the replay runs out with I/Os in flight, which
    // fio never reaps (td->done): writes issued, never done. At iodepth 8 with batches of 4 a
    // reap takes reads and writes together: fio logs them in the order it reaps them.
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/traces");
    let cases = [
        ("loop-randrw.blktrace", "", 399),
        ("loop-randrw.iolog", "iodepth=4\n", 399),
        ("loop-randrw.iolog", "iodepth=8\niodepth_batch=4\n", 396),
        // io_in_polling: a reap after each io_u, nothing in flight at the end.
        ("loop-randrw.iolog", "iodepth=8\niodepth_batch=2\niodepth_batch_complete_min=0\n", 400),
    ];
    for (file, extra, done) in cases {
        let job = format!(
            "[r]\nioengine=null\nread_iolog={file}\nreplay_redirect=/dev/null\nreplay_no_stall=1\n\
             write_lat_log=r\nlog_offset=1\n{extra}"
        );
        let replay = |mut cmd: Command, d: &Path| {
            std::fs::copy(traces.join(file), d.join(file)).unwrap();
            std::fs::write(d.join("job.fio"), &job).unwrap();
            let out = cmd.args(["--output-format=json", "job.fio"]).current_dir(d).output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let j = &v["jobs"][0];
            let counts: Vec<(u64, u64)> = ["read", "write", "trim"]
                .iter()
                .map(|d| (j[d]["total_ios"].as_u64().unwrap(), j[d]["io_bytes"].as_u64().unwrap()))
                .collect();
            let log = std::fs::read_to_string(d.join("r_clat.1.log")).unwrap();
            let ios: Vec<String> =
                log.lines().map(|l| l.split(", ").skip(2).take(3).collect::<Vec<_>>().join(", ")).collect();
            (counts, ios)
        };
        let ours = replay(blksim(), &dir(&format!("rec-blksim-{file}-{done}")));
        let fio = replay(crosscheck::fio_tool("fio"), &dir(&format!("rec-fio-{file}-{done}")));
        assert_eq!(ours, fio, "{file} {extra}");
        assert_eq!((ours.0[1].0, ours.1.len()), (190, done), "{file} {extra}: I/Os issued, done");
    }
}

#[test]
fn terse_lines_have_the_real_fios_fields() {
    // The same jobs through the real fio and blksim with --minimal in terse versions 2 to 5 (3 is
    // fio's default): the same number of fields, each of the same kind (a count, a decimal, a
    // percentage, a percentile's `p%=value`), the same percentiles listed (a direction without
    // I/O lists the job's with zeros), and the same values where the run does not change them.
    // The second job reads only (write and trim have no samples), with its own percentile list
    // and continue_on_error (fio's error count and first error end its line).
    let jobs = [
        ("randrw", "[j]\nioengine=null\nsize=1m\nbs=4k\nrw=randrw\ndescription=two words\n"),
        ("read", "[j]\nioengine=null\nsize=1m\nbs=4k\nrw=read\npercentile_list=50:99.5:1\ncontinue_on_error=all\n"),
    ];
    let kind = |f: &str| -> &'static str {
        if f.contains("%=") {
            "percentile"
        } else if f.ends_with('%') {
            "percent"
        } else if f.parse::<u64>().is_ok() {
            "count"
        } else if f.parse::<f64>().is_ok() {
            "decimal"
        } else {
            "text"
        }
    };
    for (name, job) in jobs {
        for version in ["2", "3", "4", "5"] {
            let lines = |mut cmd: Command, d: &Path| -> Vec<String> {
                std::fs::write(d.join("job.fio"), job).unwrap();
                let out =
                    cmd.args(["--minimal", &format!("--terse-version={version}"), "job.fio"]).current_dir(d).output();
                let out = out.unwrap();
                assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
                // (Version 2 puts a line break before the description.)
                let text = String::from_utf8(out.stdout).unwrap().trim_end().replace('\n', "|");
                text.split(';').map(str::to_string).collect()
            };
            let what = format!("{name} terse {version}");
            let real = lines(crosscheck::fio_tool("fio"), &dir(&format!("terse-fio-{name}{version}")));
            let sim = lines(blksim(), &dir(&format!("terse-blksim-{name}{version}")));
            assert_eq!(sim.len(), real.len(), "{what}: {sim:?}\n{real:?}");
            // Version 2's line has no version string.
            let head = if version == "2" { 4 } else { 5 };
            for (i, (a, b)) in sim.iter().zip(&real).enumerate() {
                // Field 1 is the version string (from 3); a decimal may print as a whole number in either.
                let (ka, kb) = (kind(a), kind(b));
                let same = ka == kb
                    || (i == 1 && head == 5)
                    || matches!((ka, kb), ("count", "decimal") | ("decimal", "count"));
                assert!(same, "{what} field {i}: blksim {a:?}, fio {b:?}");
                if ka == "percentile" {
                    assert_eq!(a.split('=').next(), b.split('=').next(), "{what} field {i}: the percentile listed");
                }
            }
            // Version, name, group, error; the bytes read and written; the description, or the error count.
            assert_eq!(
                sim[..head].iter().filter(|f| !f.starts_with("blksim")).collect::<Vec<_>>(),
                real[..head].iter().filter(|f| !f.starts_with("fio-")).collect::<Vec<_>>(),
                "{what}"
            );
            let rw = head + if version == "5" { 47 } else { 41 };
            assert_eq!(
                sim[head].parse::<u64>().unwrap() + sim[rw].parse::<u64>().unwrap(),
                1024,
                "{what}: read + written KiB: {sim:?}"
            );
            assert_eq!(sim.last(), real.last(), "{what}");
            if name == "read" {
                assert_eq!(sim[sim.len() - 2..], ["0", "0"], "{what}: continue_on_error's total_err and first_error");
            }
        }
    }
}

#[test]
fn posixaio_reaps_in_the_batches_the_real_fio_reaps_in() {
    // fio's posixaio waits in aio_suspend on the first eight of its io_us by index, while
    // glibc's helper finishes them in queue order (LIFO-allocated, highest index first):
    // the real fio (on a file of the test directory, direct=1) and blksim (on a drive)
    // show the same IO depths and completion batches, bucket by bucket (within 8 points), at each iodepth.
    let depths = |cmd: Command, d: &Path, depth: u32, file: &str| {
        let job = format!("[test]\nioengine=posixaio\nsize=2M\niodepth={depth}\ndirect=1\nrw=read\nfilename={file}\n");
        let v = run_json(cmd, d, &job);
        let j = &v["jobs"][0];
        ["iodepth_level", "iodepth_complete"].map(|k| {
            let m = j[k].as_object().unwrap();
            m.iter().map(|(b, p)| (b.clone(), p.as_f64().unwrap())).collect::<Vec<_>>()
        })
    };
    // The first bucket more than 8 points apart, if any.
    let apart = |fio: &[Vec<(String, f64)>; 2], ours: &[Vec<(String, f64)>; 2], depth: u32| {
        for (f, o) in fio.iter().zip(ours) {
            assert_eq!(f.len(), o.len(), "iodepth={depth}: buckets {f:?} {o:?}");
            for ((bucket, fp), (ob, op)) in f.iter().zip(o) {
                assert_eq!(bucket, ob);
                if (fp - op).abs() >= 8.0 {
                    return Some(format!("iodepth={depth} bucket {bucket}: blksim {o:?}, fio {f:?}"));
                }
            }
        }
        None
    };
    for depth in [12, 16, 32, 64] {
        let ours = depths(blksim(), &dir("posixaio-blksim"), depth, "/dev/nvme0n1");
        // The real fio's thread timing on a busy host (tests run in parallel) moves a bucket by
        // a few points, now and then by 8 or more (CI once saw 9.6 three times in a row, beside
        // the offload cross-check's minute of work): its run is taken again, up to six times.
        // fio woken at every completion would put ~97% at the top depth where these put ~50% a
        // bucket lower.
        let mut off = None;
        for _ in 0..6 {
            let fio = depths(crosscheck::fio_tool("fio"), &dir("posixaio-fio"), depth, "data");
            off = apart(&fio, &ours, depth);
            if off.is_none() {
                break;
            }
        }
        assert!(off.is_none(), "{}", off.unwrap_or_default());
    }
}

#[test]
fn offload_hands_each_io_u_to_a_worker_as_the_real_fio_does() {
    // io_submit_mode=offload on the null engine, unpaced and at a fixed rate (the corpus's
    // fixed-rate-submission on the null engine): every io_u issued once, the IO depths
    // the workers' (1 = 100%), no commit or reap batches and no slat (the null engine at a
    // worker's iodepth 1 is synchronous), and the rate held by fio's thread alone.
    for (name, extra) in
        [("offload", "size=16m\niodepth=16\n"), ("offload-rate", "size=4m\niodepth=32\nrate_iops=1000\n")]
    {
        let job = format!("[t]\nioengine=null\nio_submit_mode=offload\n{extra}");
        let summary = |v: serde_json::Value| {
            let j = &v["jobs"][0];
            let maps = ["iodepth_level", "iodepth_submit", "iodepth_complete"].map(|k| j[k].to_string());
            let r = &j["read"];
            (r["total_ios"].as_u64(), r["slat_ns"]["N"].as_u64(), maps, r["iops"].as_f64().unwrap())
        };
        let fio = summary(real_fio_offload(&dir(&format!("{name}-fio")), &job));
        let ours = summary(run_json(blksim(), &dir(&format!("{name}-blksim")), &job));
        assert_eq!((ours.0, ours.1, &ours.2), (fio.0, fio.1, &fio.2), "{name}");
        if extra.contains("rate") {
            // (The real fio's runtime, in whole ms of real time, may stretch on a busy host.)
            assert!((ours.3 / fio.3 - 1.0).abs() < 0.05, "{name}: IOPS {} vs the real fio's {}", ours.3, fio.3);
        }
    }
}

/// The real fio's JSON for an offload `job`. Debian's fio 3.33 hangs at start in about a
/// third of offload runs on a 2-CPU host: `start_worker` sets a worker's flags to
/// SW_F_IDLE after `pthread_create`, clobbering the SW_F_RUNNING the new thread may have
/// set already, and `workqueue_init` waits forever (fixed in fio 736c2015, 2026). A run
/// that has not finished in 10 s is that hang (the job takes well under a second): killed
/// and run again, up to 16 times (on 2026-12-06 about half the runs hung, and 8 tries once
/// all did; all 16 hanging: ~0.002%).
fn real_fio_offload(d: &Path, job: &str) -> serde_json::Value {
    std::fs::write(d.join("job.fio"), job).unwrap();
    for _ in 0..16 {
        let mut child = crosscheck::fio_tool("fio")
            .args(["--output-format=json", "--output=out.json", "job.fio"])
            .current_dir(d)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_secs(10) {
            if let Some(status) = child.try_wait().unwrap() {
                assert!(status.success(), "the real fio failed on {job}");
                return serde_json::from_slice(&std::fs::read(d.join("out.json")).unwrap()).unwrap();
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // (fio's job process is its child, in a session of its own.)
        let _ = Command::new("pkill").args(["-KILL", "-P", &child.id().to_string()]).status();
        let _ = child.kill();
        let _ = child.wait();
    }
    panic!("the real fio hung in 16 runs of {job}");
}

#[test]
fn syncs_follow_the_writes_as_the_real_fio_issues_them() {
    // fsync=N, fdatasync=N and end_fsync on the real fio (a file; Debian's 3.33, whose
    // syncs agree with 3.42's on write-only jobs at iodepth 1) and on blksim (the
    // device, direct): the same writes, the same syncs (end_fsync's not counted), the
    // same IO depths over the data I/Os only (1=124.6%). fio 3.33 and 3.42 count an
    // fdatasync past total_io_u's end (as reads' short I/Os): its latencies' N is compared.
    for (engine, opts) in [
        ("psync", "fsync=4\nend_fsync=1\n"),
        ("psync", "fdatasync=2\n"),
        ("sync", "fsync=1\nfsync_on_close=1\n"),
        ("null", "fsync=32\n"),
        ("posixaio", "fsync=4\nend_fsync=1\n"),
        ("io_uring", "fsync=4\nend_fsync=1\n"),
        ("io_uring", "fdatasync=2\n"),
    ] {
        let common = format!("[t]\nioengine={engine}\nrw=write\nbs=4k\nsize=1m\n{opts}");
        let (f, b) = (dir(&format!("sync-fio-{engine}")), dir(&format!("sync-blksim-{engine}")));
        let fio_file = if engine == "null" { "" } else { "filename=f.dat\n" };
        let blksim_file = if engine == "null" { "" } else { "filename=/dev/nvme0n1\ndirect=1\n" };
        let real = run_json(crosscheck::fio_tool("fio"), &f, &format!("{common}{fio_file}"));
        let ours = run_json(blksim(), &b, &format!("{common}{blksim_file}"));
        let (r, o) = (&real["jobs"][0], &ours["jobs"][0]);
        let what = format!("{engine} {}", opts.replace('\n', " "));
        assert_eq!(r["write"]["total_ios"], o["write"]["total_ios"], "{what}");
        assert_eq!(r["sync"]["lat_ns"]["N"], o["sync"]["lat_ns"]["N"], "{what}");
        assert_eq!(o["sync"]["total_ios"], o["sync"]["lat_ns"]["N"], "{what}");
        if !opts.contains("fdatasync") {
            assert_eq!(r["sync"]["total_ios"], o["sync"]["total_ios"], "{what}");
        }
        assert_eq!(r["iodepth_level"]["1"], o["iodepth_level"]["1"], "{what}");
    }
}

#[test]
fn io_priorities_split_the_latencies_as_the_real_fio_splits_them() {
    // libaio on a file (the real fio, Debian's 3.33) and on the device (blksim): the same
    // per-priority entries in the same order for each direction, and about the same share of
    // I/Os for each (fio's draws are its own random numbers). Every job is paced at the same
    // rate: a group's shares follow its jobs' shares of the I/O, which on a file are the
    // host's timing (a CI run saw 0.38 against 0.51 unpaced).
    let common =
        "[global]\nioengine=libaio\nrw=randrw\nbs=4k\niodepth=4\nnorandommap\ntime_based\nruntime=300ms\nrate_iops=2000\n";
    for (name, jobs) in [
        ("perc", "[a]\ncmdprio_percentage=30\n"),
        ("own", "[a]\nprioclass=2\nprio=7\ncmdprio_percentage=20\ncmdprio_class=3\n"),
        ("split", "[a]\nbssplit=64k/40:16k/60,16k/100\ncmdprio_bssplit=64k/25/1/1:64k/75/3/2:16k/0,16k/0\n"),
        ("group", "[a]\ngroup_reporting\nprioclass=2\nprio=7\ncmdprio_percentage=30\ncmdprio=3\n[b]\ngroup_reporting\ncmdprio_percentage=50\n"),
        ("apart", "[a]\nprioclass=2\nprio=7\n[b]\nprioclass=3\n"),
        ("together", "[a]\ngroup_reporting\nprioclass=2\nprio=7\n[b]\ngroup_reporting\nprioclass=3\n"),
    ] {
        let (f, b) = (dir(&format!("prio-fio-{name}")), dir(&format!("prio-blksim-{name}")));
        std::fs::write(f.join("f.dat"), vec![0u8; 16 << 20]).unwrap();
        let real = run_json(
            crosscheck::fio_tool("fio"),
            &f,
            &format!("{common}filename=f.dat\nsize=16m\n{jobs}"),
        );
        let ours = run_json(blksim(), &b, &format!("{common}filename=/dev/nvme0n1\ndirect=1\n{jobs}"));
        let rj = real["jobs"].as_array().unwrap();
        let oj = ours["jobs"].as_array().unwrap();
        assert_eq!(rj.len(), oj.len(), "{name}: reported blocks");
        for (r, o) in rj.iter().zip(oj) {
            for d in ["read", "write"] {
                let entries = |j: &serde_json::Value| -> Vec<(u64, u64, f64)> {
                    let Some(p) = j[d].get("prios").and_then(|p| p.as_array()) else { return vec![] };
                    let n = j[d]["clat_ns"]["N"].as_f64().unwrap();
                    let u = |e: &serde_json::Value, k: &str| e[k].as_u64().unwrap();
                    p.iter().map(|e| (u(e, "prioclass"), u(e, "prio"), e["clat_ns"]["N"].as_f64().unwrap() / n)).collect()
                };
                let (re, oe) = (entries(r), entries(o));
                let order = |v: &[(u64, u64, f64)]| v.iter().map(|e| (e.0, e.1)).collect::<Vec<_>>();
                assert_eq!(order(&oe), order(&re), "{name} {d}: priorities");
                for (a, b) in oe.iter().zip(&re) {
                    assert!((a.2 - b.2).abs() < 0.08, "{name} {d}: share of {}/{}: {} against fio's {}", a.0, a.1, a.2, b.2);
                }
            }
        }
    }
}

#[test]
fn an_lfsr_seed_fio_cannot_start_is_refused_where_fio_fails_it() {
    // fio's lfsr_init fails when the job's offsets' seed puts the register in its all-ones
    // state ("fio: failed initializing LFSR", the job then runs no I/O); blksim refuses the
    // job with that reason. The same seeds, of forty, for a 16-block file.
    let (mut fio_failed, mut refused) = (Vec::new(), Vec::new());
    for seed in 650..690 {
        let job = format!(
            "[a]\nioengine=null\nrw=randread\nbs=4k\nsize=64k\nrandom_generator=lfsr\nrandrepeat=0\nrandseed={seed}\n"
        );
        let (f, b) = (dir("lfsr-seed-fio"), dir("lfsr-seed-blksim"));
        for (d, mut cmd, out) in [(&f, crosscheck::fio_tool("fio"), &mut fio_failed), (&b, blksim(), &mut refused)] {
            std::fs::write(d.join("job.fio"), &job).unwrap();
            let o = cmd.arg("job.fio").current_dir(d).output().unwrap();
            if String::from_utf8_lossy(&o.stderr).contains("failed initializing LFSR") {
                out.push(seed);
            }
        }
    }
    assert!(!fio_failed.is_empty(), "no seed of 40 fails fio's LFSR for 16 blocks");
    assert_eq!(refused, fio_failed);
}
