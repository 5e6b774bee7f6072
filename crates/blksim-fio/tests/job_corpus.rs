//! Every fio example job file (shared/corpus/fio-examples): it parses, or it
//! is rejected with a message naming the file, the line and the option. The
//! expected outcome of each file is listed, so that any change shows up.
//! A cross-check (`--features crosscheck`): it needs the project's shared/.

#[path = "crosscheck/mod.rs"]
mod crosscheck;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use blksim::workload::{IoEngine, RwKind};
use blksim_fio::job::{parse_job_files, JobFile, ParseContext};

fn corpus_dir() -> PathBuf {
    crosscheck::shared("corpus/fio-examples")
}

fn ctx() -> ParseContext {
    ParseContext {
        ncpus: 16,
        mb_memory: 65536,
        pagesize: 4096,
        env: BTreeMap::new(),
        numa_nodes: Vec::new(),
        sections: Vec::new(),
        read_only: false,
        device_bytes: BTreeMap::new(),
    }
}

/// Files that parse, with their number of jobs (clones included). These are
/// the block-I/O files of fio-formats.md section 6 that use only options
/// blksim models or ignores.
const PARSED: &[(&str, usize)] = &[
    ("backwards-read", 1),
    ("basic-verify", 1),
    ("butterfly", 2),
    ("cmdprio-bssplit", 4),
    ("cmdprio-percentage", 1),
    ("cross-stripe-verify", 30),
    ("flow", 2),
    ("dedupe-global", 2),
    ("disk-zone-profile", 1),
    ("fio-rand-RW", 4),
    ("fio-rand-read", 1),
    ("fio-rand-write", 4),
    ("fio-seq-RW", 4),
    ("fio-seq-read", 1),
    ("fio-seq-write", 1),
    // io_submit_mode=offload parses; with a rate it is refused when the job is built.
    ("fixed-rate-submission", 1),
    ("fsx", 1),
    ("iometer-file-access-server", 1),
    ("jesd219", 4),
    ("latency-profile", 1),
    ("rand-zones", 1),
    ("zipf", 1),
    ("null", 1),
    ("poisson-rate-submission", 1),
    ("ssd-steadystate", 5),
    ("ssd-test", 4),
    ("tiobench-example", 16),
    ("uring-cmd-ng", 3),
    ("uring-cmd-trim-multi-range", 2),
];

/// Files rejected: the line of the first option blksim rejects, and that option.
const REJECTED: &[(&str, usize, &str)] = &[
    // directory= without filename=: fio would make files in tmp (its ratemin is modelled).
    ("1mbs_clients", 5, "directory"),
    // directory= without filename=: fio would make files in /data1.
    ("aio-read", 8, "directory"),
    ("atomic-verify", 32, "atomic"),
    ("cpp_null", 6, "ioengine"),
    ("cpuio", 2, "ioengine"),
    ("dev-dax", 3, "ioengine"),
    ("dfs", 2, "ioengine"),
    ("dircreate-ioengine", 15, "ioengine"),
    ("dirdelete-ioengine", 8, "ioengine"),
    ("dirstat-ioengine", 7, "ioengine"),
    ("e4defrag", 2, "ioengine"),
    ("e4defrag2", 6, "ioengine"),
    ("enospc-pressure", 11, "filesize"),
    ("example_latency_steadystate", 22, "steadystate"),
    ("exec", 6, "ioengine"),
    ("exitwhat", 12, "filesize"),
    ("falloc", 2, "ioengine"),
    ("filecreate-ioengine", 15, "ioengine"),
    ("filedelete-ioengine", 8, "ioengine"),
    ("filestat-ioengine", 7, "ioengine"),
    ("ftruncate", 4, "ioengine"),
    ("gfapi", 4, "ioengine"),
    ("gpudirect-rdmaio-client", 3, "ioengine"),
    ("gpudirect-rdmaio-server", 3, "ioengine"),
    ("http-s3-crypto", 9, "ioengine"),
    ("http-s3-storage-class", 9, "ioengine"),
    ("http-s3", 24, "ioengine"),
    ("http-swift", 2, "ioengine"),
    ("http-webdav", 2, "ioengine"),
    ("ime", 26, "ioengine"),
    ("libblkio-io_uring", 13, "ioengine"),
    ("libblkio-virtio-blk-vfio-pci", 14, "ioengine"),
    ("libcufile-cufile", 10, "ioengine"),
    ("libcufile-posix", 10, "ioengine"),
    ("libhdfs", 6, "ioengine"),
    ("libhipfile-hipfile", 10, "ioengine"),
    ("libhipfile-posix", 10, "ioengine"),
    ("libiscsi", 2, "ioengine"),
    ("libpmem", 4, "ioengine"),
    ("libzbc-rand-write", 9, "zonemode"),
    ("libzbc-seq-read", 11, "zonemode"),
    ("mtd", 4, "ioengine"),
    ("nbd", 21, "ioengine"),
    ("netio", 3, "ioengine"),
    ("netio_multicast", 3, "ioengine"),
    ("netio_vsock", 3, "ioengine"),
    ("netio_vsock_receiver", 3, "ioengine"),
    ("netio_vsock_sender", 3, "ioengine"),
    ("nfs", 5, "ioengine"),
    ("numa", 15, "numa_mem_policy"),
    ("page_fault", 3, "ioengine"),
    ("rados", 14, "ioengine"),
    ("rbd", 14, "ioengine"),
    ("rdmaio-client", 3, "ioengine"),
    ("rdmaio-server", 3, "ioengine"),
    ("sequence-distribution", 22, "random_distribution"),
    ("sg_verify-fail", 24, "ioengine"),
    ("sg_verify", 27, "ioengine"),
    ("sg_write_same_ndob", 24, "ioengine"),
    ("sprandom", 32, "bs"),
    ("steadystate", 20, "ss"),
    ("surface-scan", 15, "fill_device"),
    ("uring-cmd-bsg", 6, "cmd_type"),
    ("uring-cmd-fdp", 14, "fdp"),
    ("uring-cmd-pi-ext", 20, "pi_act"),
    ("uring-cmd-pi-sb", 20, "md_per_io_size"),
    ("uring-cmd-write-mode", 21, "write_mode"),
    ("uring-cmd-zoned-append", 12, "zonemode"),
    ("uring-cmd-zoned", 14, "zonemode"),
    ("waitfor", 5, "filesize"),
    ("xnvme-compare", 70, "rw"),
    ("xnvme-fdp", 48, "fdp"),
    ("xnvme-pi", 41, "md_per_io_size"),
    ("xnvme-zoned", 59, "zonemode"),
    ("zbd-rand-write-trim-gc", 13, "zonemode"),
    ("zbd-rand-write-zone-reset-gc", 14, "zonemode"),
    ("zbd-rand-write", 9, "zonemode"),
    ("zbd-seq-read", 10, "zonemode"),
];

use crosscheck::corpus_files;

fn stem(path: &Path) -> &str {
    path.file_stem().unwrap().to_str().unwrap()
}

fn parse(name: &str) -> JobFile {
    let path = corpus_dir().join(format!("{name}.fio"));
    parse_job_files(&[path], &ctx()).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_corpus_file_has_its_expected_outcome() {
    let files = corpus_files();
    let parsed: BTreeMap<&str, usize> = PARSED.iter().copied().collect();
    let rejected: BTreeMap<&str, (usize, &str)> = REJECTED.iter().map(|(f, l, o)| (*f, (*l, *o))).collect();
    let mut outcomes = Vec::new();
    for path in &files {
        let name = stem(path);
        match (parse_job_files(std::slice::from_ref(path), &ctx()), parsed.get(name), rejected.get(name)) {
            (Ok(jobs), Some(&n), None) => assert_eq!(jobs.jobs.len(), n, "{name}: number of jobs"),
            (Err(e), None, Some(&(line, option))) => {
                assert_eq!(e.file, *path, "{name}: the error names the file");
                assert_eq!(e.line, line, "{name}: {e}");
                assert!(e.message.contains(option), "{name}: '{}' does not name '{option}'", e.message);
                let text = std::fs::read_to_string(path).unwrap();
                let written = text.lines().nth(line - 1).unwrap().trim_start();
                assert!(written.starts_with(option), "{name}:{line} is '{written}', not option {option}");
            }
            (Ok(_), ..) => panic!("{name} parses but is not in PARSED"),
            (Err(e), ..) => panic!("{name} is rejected but not listed in REJECTED: {e}"),
        }
        outcomes.push(name.to_string());
    }
    let listed: BTreeSet<&str> = parsed.keys().chain(rejected.keys()).copied().collect();
    let seen: BTreeSet<&str> = outcomes.iter().map(String::as_str).collect();
    let stale: Vec<_> = listed.difference(&seen).collect();
    assert!(stale.is_empty(), "listed but not in the corpus: {stale:?}");
}

#[test]
fn every_error_names_file_line_and_option() {
    for path in corpus_files() {
        let Err(e) = parse_job_files(std::slice::from_ref(&path), &ctx()) else { continue };
        let shown = e.to_string();
        assert!(shown.starts_with(&format!("{}:{}: ", path.display(), e.line)), "{shown}");
        assert!(e.line > 0, "{shown}");
        assert!(e.message.contains('\'') || e.message.contains('='), "names no option: {shown}");
    }
}

#[test]
fn simulable_files_resolve_to_the_jobs_fio_would_run() {
    let f = parse("fio-rand-RW");
    let c = &f.jobs[0].config;
    assert_eq!((c.name.as_str(), c.rw, c.rwmixread, c.bs), ("file1", RwKind::RandRw, 60, [4096; 3]));
    assert_eq!((c.ioengine.clone(), c.iodepth, c.size), (IoEngine::Libaio, 16, Some(10 << 30)));
    assert_eq!((c.runtime_ns, c.time_based, c.direct), (Some(900_000_000_000), true, false));
    assert_eq!(c.filenames, ["fio-rand-RW"]);
    assert!(f.jobs.iter().all(|j| j.config.name == "file1" && j.config.group_id == 0));

    let f = parse("ssd-test");
    let phases: Vec<_> = f.jobs.iter().map(|j| (j.config.name.as_str(), j.config.group_id, j.config.phase)).collect();
    assert_eq!(phases, [("seq-read", 0, 0), ("rand-read", 1, 1), ("seq-write", 2, 2), ("rand-write", 3, 3)]);
    assert_eq!(f.jobs[0].config.filenames, ["/mount-point-of-ssd/ssd.test.file"]);

    let f = parse("tiobench-example");
    let c = &f.jobs[0].config;
    assert_eq!((c.bs, c.size, c.runtime_ns, c.direct), ([4096; 3], Some(512 << 20), Some(60_000_000_000), true));
    let groups: Vec<u32> = f.jobs.iter().map(|j| j.config.group_id).collect();
    assert_eq!(groups, [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]);

    let f = parse("uring-cmd-ng");
    let IoEngine::IoUringCmd(o) = &f.jobs[2].config.ioengine else { panic!("io_uring_cmd") };
    assert!(o.sqthread_poll && o.registerfiles && o.sqthread_poll_cpu == Some(0));
    assert!(f.jobs[0].config.thread);

    let f = parse("uring-cmd-trim-multi-range");
    let trims: Vec<_> = f.jobs.iter().map(|j| (j.config.rw, j.config.num_range)).collect();
    assert_eq!(trims, [(RwKind::RandTrim, 8), (RwKind::Trim, 8)]);

    let f = parse("null");
    let c = &f.jobs[0].config;
    assert!(c.gtod_reduce && c.norandommap && !c.clat_percentiles && c.ioengine == IoEngine::Null);

    let f = parse("latency-profile");
    let t = f.jobs[0].config.latency_target.expect("latency_target");
    assert_eq!((t.target_ns, t.window_us, t.percentile, t.run), (500_000_000, 5_000_000, 99.9, false));

    let f = parse("ssd-steadystate");
    assert!(f.jobs.iter().all(|j| j.config.group_reporting));
    assert_eq!(f.jobs[1].config.iodepth, 32);
}
