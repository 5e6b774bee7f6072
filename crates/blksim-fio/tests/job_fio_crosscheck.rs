//! blksim's job parser against the real fio (Debian's fio 3.33; a
//! cross-check, `--features crosscheck`: CI installs fio, and these tests
//! fail without it). For each fixture in tests/jobs/:
//! fio and blksim agree on accepting or rejecting it; for an accepted one,
//! fio runs it (null engine or /dev/null, a few MiB) and its JSON (job names,
//! group ids, job and global options) and its job header lines (rw, block
//! sizes per direction, ioengine, iodepth) match blksim's jobs. Also: every
//! option fio 3.33 lists is in blksim's option table.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use blksim_fio::job::{option_status, parse_job_files, JobFile, ParseContext};
use serde_json::Value;

#[path = "crosscheck/mod.rs"]
mod crosscheck;

/// A fixture: its job files, whether fio and blksim accept it, and whether
/// fio can run it here (else only `--parse-only` is compared).
struct Case {
    files: &'static [&'static str],
    accepted: bool,
    run: bool,
}

const fn ok(files: &'static [&'static str]) -> Case {
    Case { files, accepted: true, run: true }
}
const fn parse_only(files: &'static [&'static str]) -> Case {
    Case { files, accepted: true, run: false }
}
const fn bad(files: &'static [&'static str]) -> Case {
    Case { files, accepted: false, run: true }
}

const CASES: &[Case] = &[
    ok(&["xc_inherit.fio"]),
    ok(&["xc_numjobs.fio"]),
    ok(&["xc_units.fio"]),
    ok(&["xc_bs_dirs.fio"]),
    ok(&["xc_groups.fio"]),
    ok(&["xc_split.fio"]),
    ok(&["xc_include.fio"]),
    ok(&["xc_env.fio"]),
    ok(&["xc_syntax.fio"]),
    ok(&["xc_multi_a.fio", "xc_multi_b.fio"]),
    ok(&["xc_engines.fio"]),
    parse_only(&["xc_uring_opts.fio"]),
    bad(&["xc_bad_option.fio"]),
    bad(&["xc_bad_blank.fio"]),
    bad(&["xc_bad_bool.fio"]),
    bad(&["xc_bad_bare_bool.fio"]),
    bad(&["xc_bad_outside.fio"]),
    bad(&["xc_bad_choice.fio"]),
    bad(&["xc_bad_deprecated.fio"]),
    bad(&["xc_bad_engine_option.fio"]),
    bad(&["xc_bad_include_section.fio"]),
    bad(&["xc_bad_empty.fio"]),
    bad(&["xc_bad_min.fio"]),
    bad(&["xc_bad_max.fio"]),
    bad(&["xc_bad_cpu.fio"]),
];

/// The environment of the `${VAR}` fixture.
const SET_VAR: (&str, &str) = ("BLKSIM_XC_RW", "randwrite");
const UNSET_VAR: &str = "BLKSIM_XC_UNSET";

/// What fio prints when it refuses an option or a job file.
const FIO_ERRORS: &[&str] =
    &["Bad option", "failed parsing", "No new sections", "outside of [] job section", "requires an argument"];

fn fio(args: &[&str]) -> Output {
    crosscheck::fio_tool("fio").args(args).env(SET_VAR.0, SET_VAR.1).env_remove(UNSET_VAR).output().expect("run fio")
}

fn getconf(name: &str) -> u64 {
    let out = Command::new("getconf").arg(name).output().expect("getconf");
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap_or_else(|_| panic!("getconf {name}"))
}

/// This machine, as fio sees it (`$ncpus`, `$mb_memory`, `$pagesize`, CPU checks).
fn ctx() -> ParseContext {
    let pagesize = getconf("PAGESIZE");
    ParseContext {
        ncpus: getconf("_NPROCESSORS_CONF") as u32,
        mb_memory: getconf("_PHYS_PAGES") * pagesize / (1 << 20),
        pagesize,
        env: BTreeMap::from([(SET_VAR.0.to_string(), SET_VAR.1.to_string())]),
        numa_nodes: Vec::new(),
        sections: Vec::new(),
        read_only: false,
        device_bytes: BTreeMap::new(),
    }
}

/// Fixture paths relative to the crate directory (the tests' working
/// directory), as given to fio too, so that includes resolve the same way.
fn paths(case: &Case) -> Vec<PathBuf> {
    case.files.iter().map(|f| Path::new("tests/jobs").join(f)).collect()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// fio refuses a job file when it fails, or reports an error (for a section
/// in an included file it reports one and still exits 0).
fn fio_refused(out: &Output) -> bool {
    let err = stderr(out);
    !out.status.success() || FIO_ERRORS.iter().any(|e| err.contains(e))
}

/// One job header of fio's normal output:
/// `name: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) ..., (T) ..., ioengine=null, iodepth=1`.
#[derive(Debug, PartialEq)]
struct Header {
    name: String,
    group: u32,
    rw: String,
    bs: [(u64, u64); 3],
    ioengine: String,
    iodepth: u32,
}

/// fio's `num2str` block sizes back to bytes: `4096B`, `16.0KiB`, `1024KiB`, `16.0kB`.
fn size_of(s: &str) -> u64 {
    let split = s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let mult = match unit {
        "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "kB" => 1000.0,
        "MB" => 1e6,
        "GB" => 1e9,
        _ => panic!("unit of '{s}'"),
    };
    (num.parse::<f64>().unwrap_or_else(|_| panic!("number in '{s}'")) * mult).round() as u64
}

fn parse_header(line: &str) -> Option<Header> {
    let (name, rest) = line.split_once(": (g=")?;
    let (group, rest) = rest.split_once("): rw=")?;
    let (rw, rest) = rest.split_once(", bs=")?;
    let (sizes, rest) = rest.split_once(", ioengine=")?;
    let (ioengine, depth) = rest.split_once(", iodepth=")?;
    let mut bs = [(0, 0); 3];
    for (slot, tag) in bs.iter_mut().zip(["(R) ", "(W) ", "(T) "]) {
        let start = sizes.find(tag)? + tag.len();
        let range = sizes[start..].split(',').next()?;
        let (lo, hi) = range.split_once('-')?;
        *slot = (size_of(lo), size_of(hi));
    }
    Some(Header {
        name: name.to_string(),
        group: group.parse().ok()?,
        rw: rw.to_string(),
        bs,
        ioengine: ioengine.to_string(),
        iodepth: depth.trim().parse().ok()?,
    })
}

/// fio's JSON document within `--output-format=normal,json` output.
fn json_of(stdout: &str) -> Value {
    let start = stdout.find("\n{\n").expect("JSON in fio's output") + 1;
    let mut stream = serde_json::Deserializer::from_str(&stdout[start..]).into_iter::<Value>();
    stream.next().expect("a JSON value").expect("valid JSON")
}

/// Options as fio's JSON prints them: bare flags left out, the last value of a name kept.
fn options_map(options: &[(String, String)]) -> BTreeMap<String, String> {
    options.iter().filter(|(_, v)| !v.is_empty()).map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn json_options(v: Option<&Value>) -> BTreeMap<String, String> {
    let Some(Value::Object(map)) = v else { return BTreeMap::new() };
    map.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect()
}

/// `Err(message)` unless `a == b`.
fn same<T: PartialEq + std::fmt::Debug>(a: T, b: T, what: impl FnOnce() -> String) -> Result<(), String> {
    if a == b {
        Ok(())
    } else {
        Err(format!("{}: fio {a:?}, blksim {b:?}", what()))
    }
}

/// Compares fio's run of an accepted fixture with blksim's jobs.
fn compare_run(jobs: &JobFile, out: &Output) -> Result<(), String> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json = json_of(&stdout);
    let fio_jobs = json["jobs"].as_array().ok_or("no jobs in fio's JSON")?;
    same(fio_jobs.len(), jobs.jobs.len(), || "number of jobs".into())?;
    for (i, (f, b)) in fio_jobs.iter().zip(&jobs.jobs).enumerate() {
        let c = &b.config;
        same(f["jobname"].as_str(), Some(c.name.as_str()), || format!("name of job {i}"))?;
        same(f["groupid"].as_u64(), Some(c.group_id as u64), || format!("group of job {i} ({})", c.name))?;
        same(json_options(f.get("job options")), options_map(&b.options), || {
            format!("options of job {i} ({})", c.name)
        })?;
    }
    same(json_options(json.get("global options")), options_map(&jobs.global_options), || "global options".into())?;

    let headers: Vec<Header> = stdout.lines().filter_map(parse_header).collect();
    // fio prints a header for each job section, not for its clones.
    let firsts: Vec<_> = jobs
        .jobs
        .iter()
        .enumerate()
        .filter(|(i, j)| {
            *i == 0 || (jobs.jobs[i - 1].file.as_path(), jobs.jobs[i - 1].line) != (j.file.as_path(), j.line)
        })
        .map(|(_, j)| &j.config)
        .collect();
    same(headers.len(), firsts.len(), || "number of job header lines".into())?;
    for (h, c) in headers.into_iter().zip(firsts) {
        let want = Header {
            name: c.name.clone(),
            group: c.group_id,
            rw: c.rw.fio_name().to_string(),
            bs: [0, 1, 2].map(|d| c.bs_range(d)),
            ioengine: c.ioengine.fio_name().to_string(),
            iodepth: c.iodepth,
        };
        same(h, want, || format!("header of {}", c.name))?;
    }
    Ok(())
}

fn check(case: &Case, ctx: &ParseContext) -> Result<(), String> {
    let files = paths(case);
    let args: Vec<&str> = files.iter().map(|p| p.to_str().unwrap()).collect();
    let blksim = parse_job_files(&files, ctx);
    let parse_only = fio(&[&["--parse-only"], args.as_slice()].concat());
    let run = (case.run && !fio_refused(&parse_only))
        .then(|| fio(&[&["--output-format=normal,json"], args.as_slice()].concat()));
    let fio_accepts = !fio_refused(&parse_only) && !run.as_ref().is_some_and(fio_refused);
    let fio_said = stderr(run.as_ref().unwrap_or(&parse_only));
    if fio_accepts != case.accepted {
        return Err(format!("fio's verdict changed (accepts: {fio_accepts}); fio said:\n{fio_said}"));
    }
    match (blksim, case.accepted) {
        (Ok(jobs), true) => run.map_or(Ok(()), |out| compare_run(&jobs, &out)),
        (Err(e), false) if e.line > 0 => Ok(()),
        (Err(e), false) => Err(format!("blksim's error names no line: {e}")),
        (Ok(_), false) => Err(format!("fio rejects it, blksim accepts it; fio said:\n{fio_said}")),
        (Err(e), true) => Err(format!("fio accepts it, blksim rejects it: {e}")),
    }
}

#[test]
fn fixtures_agree_with_real_fio() {
    assert!(CASES.iter().filter(|c| c.accepted && c.run).count() >= 10);
    let ctx = ctx();
    // Runs the fixtures side by side: fio mostly waits, the whole takes a few seconds.
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = CASES.iter().map(|case| (case, s.spawn(|| check(case, &ctx)))).collect();
        handles
            .into_iter()
            .filter_map(|(case, h)| match h.join() {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(format!("{}: {e}", case.files.join(" + "))),
                Err(_) => Some(format!("{}: panicked", case.files.join(" + "))),
            })
            .collect()
    });
    assert!(failures.is_empty(), "{} fixture(s) disagree with fio:\n{}", failures.len(), failures.join("\n\n"));
}

/// Option names of `fio --cmdhelp=all` or `--enghelp=ENGINE` (`name : help`,
/// children indented).
fn listed_options(arg: &str) -> Vec<String> {
    let out = fio(&[arg]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(':').map(|(name, _)| name.trim().to_string()))
        .filter(|n| !n.is_empty() && !n.contains(' '))
        .collect()
}

#[test]
fn every_option_fio_lists_is_in_blksims_table() {
    let general = listed_options("--cmdhelp=all");
    assert!(general.len() > 200, "fio --cmdhelp=all listed {} options", general.len());
    let missing: Vec<_> = general.iter().filter(|n| option_status(n, None).is_none()).collect();
    assert!(missing.is_empty(), "general options blksim does not know: {missing:?}");
    for engine in ["io_uring", "io_uring_cmd", "libaio", "pvsync2"] {
        let names = listed_options(&format!("--enghelp={engine}"));
        assert!(!names.is_empty(), "fio --enghelp={engine}");
        let missing: Vec<_> = names.iter().filter(|n| option_status(n, Some(engine)).is_none()).collect();
        assert!(missing.is_empty(), "{engine} options blksim does not know: {missing:?}");
    }
}

/// For sizes that are not multiples of the block size, blksim issues as many
/// I/Os as fio does (null engine, so nothing but fio's accounting counts).
#[test]
fn io_counts_for_sizes_that_are_not_multiples_of_bs_match_fio() {
    let machine = blksim::machine::builtin("spr-gen5").unwrap();
    let cases = [
        "rw=randread\nbs=4k\nsize=10001\n",
        "rw=read\nbs=4k\nsize=10001\n",
        "rw=randread\nbs=4k\nsize=10001\nnorandommap\n",
        "rw=randwrite\nbs=3000\nsize=10001\n",
        "rw=write\nbs=3000\nsize=10001\nloops=2\n",
        "rw=randread\nbs=8k\nsize=40000\nnorandommap\n",
        "rw=read\nbs=1m\nsize=5000000\n",
    ];
    let mut failures = Vec::new();
    for case in cases {
        let text = format!("[a]\nioengine=null\n{case}");
        let dir = SCRATCH.with(|s| s.path().join("count"));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("count.fio");
        std::fs::write(&path, &text).unwrap();
        let out = fio(&["--output-format=json", path.to_str().unwrap()]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let json: Value = serde_json::from_str(&stdout[stdout.find('{').expect("fio's JSON")..]).unwrap();
        let want: Vec<u64> =
            ["read", "write"].iter().map(|d| json["jobs"][0][d]["total_ios"].as_u64().unwrap()).collect();

        let jobs = parse_job_files(&[path], &ctx()).unwrap();
        let configs: Vec<_> = jobs.jobs.into_iter().map(|j| j.config).collect();
        let (report, _) = blksim::run(&machine, &Default::default(), &configs, 1).unwrap();
        let got: Vec<u64> = report.jobs[0].dirs[..2].iter().map(|d| d.total_ios).collect();
        if got != want {
            failures.push(format!("{}: fio {want:?}, blksim {got:?}", case.replace('\n', " ")));
        }
    }
    assert!(failures.is_empty(), "I/O counts differ:\n{}", failures.join("\n"));
}

thread_local! {
    /// This test thread's scratch directory, removed when the thread (the test) ends.
    static SCRATCH: tempfile::TempDir = tempfile::Builder::new().prefix("blksim-xc-").tempdir().unwrap();
}

/// fio's JSON for `text` run with the null engine: per direction (read, write) its I/O count and bytes.
fn fio_counts(text: &str, tag: &str) -> (Vec<u64>, Vec<u64>, PathBuf) {
    let dir = SCRATCH.with(|s| s.path().join(tag));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("count.fio");
    std::fs::write(&path, text).unwrap();
    let out = fio(&["--output-format=json", path.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json: Value = serde_json::from_str(&stdout[stdout.find('{').expect("fio's JSON")..]).unwrap();
    let field = |f: &str| ["read", "write"].iter().map(|d| json["jobs"][0][d][f].as_u64().unwrap()).collect();
    (field("total_ios"), field("io_bytes"), path)
}

/// blksim's run of the job file at `path`: per direction its I/O count and bytes.
fn blksim_counts(path: &Path) -> (Vec<u64>, Vec<u64>) {
    let machine = blksim::machine::builtin("spr-gen5").unwrap();
    let jobs = parse_job_files(&[path.to_path_buf()], &ctx()).unwrap();
    let configs: Vec<_> = jobs.jobs.into_iter().map(|j| j.config).collect();
    let (report, _) = blksim::run(&machine, &Default::default(), &configs, 1).unwrap();
    let dirs = &report.jobs[0].dirs[..2];
    (dirs.iter().map(|d| d.total_ios).collect(), dirs.iter().map(|d| d.io_bytes).collect())
}

/// `io_size` sets how much I/O a job does: blksim issues as many I/Os as fio (null engine).
#[test]
fn io_size_counts_match_fio() {
    let cases = [
        "rw=read\nbs=4k\nsize=1m\nio_size=10001\n",
        "rw=read\nbs=4k\nsize=1m\nio_size=10001\nloops=2\n",
        "rw=randread\nbs=4k\nsize=1m\nio_size=10001\n",
        "rw=read\nbs=4k\nsize=1m\nio_size=3m\n",
        "rw=randread\nbs=4k\nsize=1m\nio_size=3m\n",
        "rw=write\nbs=8k\nsize=8m\nio_limit=1m\n",
        "rw=randrw\nbs=4k\nsize=4m\nio_size=100%\n",
    ];
    let mut failures = Vec::new();
    for case in cases {
        let (want, _, path) = fio_counts(&format!("[a]\nioengine=null\n{case}"), "iosize");
        let (got, _) = blksim_counts(&path);
        // A mixed job's split between reads and writes is random: compare the total.
        let (w, g) =
            if case.contains("randrw") { (vec![want.iter().sum()], vec![got.iter().sum()]) } else { (want, got) };
        if g != w {
            failures.push(format!("{}: fio {w:?}, blksim {g:?}", case.replace('\n', " ")));
        }
    }
    assert!(failures.is_empty(), "I/O counts differ:\n{}", failures.join("\n"));
}

/// `bssplit`: the sizes fio draws are random, but sequential I/O ends where the region does (the
/// same bytes), and a split whose percentages leave one size (fio's unsigned arithmetic) gives
/// fio's exact count.
#[test]
fn bssplit_bytes_and_degenerate_counts_match_fio() {
    let exact_bytes = [
        "rw=read\nbssplit=4k/10:8k/20\nsize=1m\n",
        "rw=write\nbssplit=4k/50:12k\nsize=1m\nio_size=2m\n",
        "rw=read\nbssplit=4k/50:12k\nsize=1m\nloops=3\n",
        "rw=read\nbssplit=512/30:4k/30:64k\nsize=4m\n",
    ];
    let exact_counts = [
        // 16k gets (100 - 120) in unsigned arithmetic: every I/O is 16k.
        "rw=read\nbssplit=4k/60:8k/60:16k\nsize=1m\n",
        // 8k gets what 100% leaves, 0%: every I/O is 4k.
        "rw=randread\nbssplit=4k/100:8k\nsize=1m\nnorandommap\n",
        // Per direction: reads all 8k, writes all 4k.
        "rw=write\nbssplit=8k,4k\nsize=1m\n",
        "rw=read\nbssplit=8k,4k\nsize=1m\n",
    ];
    let mut failures = Vec::new();
    for (case, counts) in exact_bytes.iter().map(|c| (c, false)).chain(exact_counts.iter().map(|c| (c, true))) {
        let (want_n, want_b, path) = fio_counts(&format!("[a]\nioengine=null\n{case}"), "bssplit");
        let (got_n, got_b) = blksim_counts(&path);
        if got_b != want_b || (counts && got_n != want_n) {
            failures.push(format!(
                "{}: fio {want_n:?} I/Os {want_b:?} bytes, blksim {got_n:?} I/Os {got_b:?} bytes",
                case.replace('\n', " ")
            ));
        }
    }
    assert!(failures.is_empty(), "bssplit runs differ:\n{}", failures.join("\n"));
}

/// fio's offsets per direction (read, write) for `text` run with the null
/// engine (its `write_iolog`), and blksim's for the same job file.
fn offsets_of(text: &str, tag: &str) -> ([Vec<u64>; 2], [Vec<u64>; 2]) {
    let dir = SCRATCH.with(|s| s.path().join(tag));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("offsets.fio");
    let iolog = dir.join("iolog");
    // fio appends to an iolog that exists.
    let _ = std::fs::remove_file(&iolog);
    std::fs::write(&path, format!("{text}write_iolog={}\n", iolog.display())).unwrap();
    let out = fio(&[path.to_str().unwrap()]);
    assert!(out.status.success(), "fio failed: {}", String::from_utf8_lossy(&out.stderr));
    let mut want: [Vec<u64>; 2] = Default::default();
    for line in std::fs::read_to_string(&iolog).unwrap().lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if let [_, _, op @ ("read" | "write"), off, _] = f[..] {
            want[(op == "write") as usize].push(off.parse().unwrap());
        }
    }
    std::fs::write(&path, text).unwrap();
    let machine = blksim::machine::builtin("spr-gen5").unwrap();
    let jobs = parse_job_files(&[path], &ctx()).unwrap();
    let mut configs: Vec<_> = jobs.jobs.into_iter().map(|j| j.config).collect();
    configs[0].record_ios = true;
    let (report, _) = blksim::run(&machine, &Default::default(), &configs, 1).unwrap();
    let mut got: [Vec<u64>; 2] = Default::default();
    for (d, offsets) in got.iter_mut().enumerate() {
        let mut ios = report.jobs[0].dirs[d].ios.clone();
        ios.sort_by_key(|r| r.start_ns);
        *offsets = ios.iter().map(|r| r.offset).collect();
    }
    (want, got)
}

/// fio's sequential offsets (`get_next_seq_offset`): holes and backwards I/O
/// (`rw=read:8k`, `rw=read:-8k`), a start `offset`, loops, and mixed reads
/// and writes each on their own stream from the start — the same offsets in
/// the same order as the real fio (null engine). A mixed job's split between
/// directions is random, so each direction's stream is compared as far as
/// both ran it.
#[test]
fn sequential_offsets_match_fio() {
    let cases = [
        "rw=read:8k\nbs=4k\nsize=64k\n",
        "rw=read:-8k\nbs=4k\nsize=64k\n",
        "rw=write:-4k\nbs=4k\nsize=64k\noffset=16k\n",
        "rw=read:4k\nbs=4k\nsize=64k\noffset=8k\n",
        "rw=read:8k\nbs=4k\nsize=64k\nloops=2\n",
        "rw=read:-12k\nbs=8k\nsize=128k\noffset=64k\n",
        "rw=rw:4k\nbs=4k\nsize=64k\n",
        "rw=readwrite\nbs=4k\nsize=256k\n",
    ];
    let mut failures = Vec::new();
    for case in cases {
        let (want, got) = offsets_of(&format!("[a]\nioengine=null\n{case}"), "offsets");
        let same = |d: usize| {
            if case.contains("rw=rw") || case.contains("readwrite") {
                let n = want[d].len().min(got[d].len());
                n > 0 && want[d][..n] == got[d][..n]
            } else {
                want[d] == got[d]
            }
        };
        if !(same(0) && same(1)) {
            failures.push(format!("{}: fio {want:?}, blksim {got:?}", case.replace('\n', " ")));
        }
    }
    assert!(failures.is_empty(), "offsets differ:\n{}", failures.join("\n"));
}

/// `random_distribution`: blksim draws its blocks as fio's zipf, pareto,
/// normal and zoned generators do (its own random stream, fio's formulas and
/// hash): the share of the I/Os on the most used 1% and 10% of the blocks,
/// and in the file's first 5%, agree with the real fio's within 3 points
/// (10,240 I/Os over 10,240 blocks, null engine).
#[test]
fn random_distributions_match_fio() {
    let shares = |offsets: &[u64]| {
        let mut counts: BTreeMap<u64, u32> = BTreeMap::new();
        for &o in offsets {
            *counts.entry(o).or_default() += 1;
        }
        let mut v: Vec<u32> = counts.into_values().collect();
        v.sort_unstable_by(|a, b| b.cmp(a));
        let n = offsets.len() as f64;
        let top = |k: usize| v.iter().take(k).sum::<u32>() as f64 / n;
        let first = offsets.iter().filter(|&&o| o < (40 << 20) / 20).count() as f64 / n;
        [top(102), top(1024), first]
    };
    let mut failures = Vec::new();
    for dist in [
        "zipf:1.2",
        "zipf:0.8",
        "pareto:0.2",
        "normal:10",
        "normal:10:0.3",
        "zoned:50/5:50/95",
        "zoned_abs:60/4m:40/36m",
    ] {
        let text = format!("[a]\nioengine=null\nrw=randread\nbs=4k\nsize=40m\nrandom_distribution={dist}\n");
        let (want, got) = offsets_of(&text, "dist");
        assert_eq!(want[0].len(), 10240, "{dist}: fio's I/O count");
        let (w, g) = (shares(&want[0]), shares(&got[0]));
        if got[0].len() != want[0].len() || w.iter().zip(&g).any(|(a, b)| (a - b).abs() > 0.03) {
            failures.push(format!("{dist}: fio {w:.3?}, blksim {g:.3?} ({} I/Os)", got[0].len()));
        }
    }
    assert!(failures.is_empty(), "distributions differ:\n{}", failures.join("\n"));
}

/// fio's num2str, as the real fio prints it: the run status line's
/// `io=IEC (SI)` of null-engine jobs whose sizes sit on either side of the
/// places where a fraction rounds up and carries (19.99 -> 20.0).
#[test]
fn num2str_prints_what_fio_prints_for_sizes_around_its_carries() {
    use blksim_fio::output::fmt::{num2str, N2sUnit};
    let sizes: Vec<u64> = [
        1u64, 2, 999, 1000, 1001, 1023, 1024, 1025, 1953, 1954, 1999, 2000, 19_521, 19_522, 19_531, 19_532, 20_470,
        20_479, 39_040, 99_990, 195_312, 195_313, 200_000,
    ]
    .iter()
    .map(|n| n * 512)
    .collect();
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for (i, size) in sizes.iter().enumerate() {
        text += &format!("[s{i}]\nioengine=null\nbs=512\nsize={size}\nstonewall\n");
    }
    std::fs::write(dir.path().join("sizes.fio"), &text).unwrap();
    let out = crosscheck::fio_tool("fio").arg("sizes.fio").current_dir(dir.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    // One "READ: bw=..., io=IEC (SI), run=..." line per group, in order.
    let printed: Vec<&str> =
        stdout.lines().filter_map(|l| l.split(", io=").nth(1)).map(|r| r.split(", run=").next().unwrap()).collect();
    assert_eq!(printed.len(), sizes.len(), "{stdout}");
    for (size, fio) in sizes.iter().zip(printed) {
        let ours =
            format!("{} ({})", num2str(*size, 4, 1, true, N2sUnit::Byte), num2str(*size, 4, 1, false, N2sUnit::Byte));
        assert_eq!(ours, fio, "io={size} bytes");
    }
}
