//! `zonemode=strided` as fio's own `t/strided.py` checks it (fio 3.42; our
//! code, fio's cases and criterion): the null engine, `rw=randread`,
//! `zonerange`, `zonesize`, `bs`, `size`, `io_size`, `filesize` (the size),
//! with a random map, the LFSR or `norandommap`, and an `offset` in some.
//! Read from the IOPS log with `log_offset=1`, one line per I/O: every I/O
//! lies in its zone (the zone moves by `zonerange` after `zonesize` bytes,
//! back to the offset past the file's end); with a random map or the LFSR
//! no block repeats before the zone's range is covered, and each range is
//! covered whole. Then fio's refusals, and the sequential form
//! (`examples`' `disk-zone-profile.fio`) against offsets worked out by hand.

mod common;

const K: u64 = 1024;
const M: u64 = K * K;

struct Case {
    generator: Option<&'static str>,
    norandommap: bool,
    range: u64,
    size: u64,
    offset: Option<u64>,
    file: u64,
    io_size: u64,
}

/// (zonerange, zonesize, offset, size and filesize, io_size).
type Zones = (u64, u64, Option<u64>, u64, u64);

fn cases() -> Vec<Case> {
    let (mut v, bs) = (Vec::new(), 4096);
    // (zonerange, zonesize, offset, size, io_size) per group, as t/strided.py lists them.
    let small = |r, s, o| (r, s, o, 16 * bs, 16 * bs);
    let big = |r, s| (r, s, None, 256 * M, 256 * K * 204);
    let groups: [(Option<&'static str>, bool, [Zones; 7]); 3] = [
        (
            None,
            false,
            [
                small(bs, bs, Some(8 * bs)),
                small(bs, bs, None),
                big(16 * M, 16 * M),
                small(bs, 4 * bs, None),
                big(16 * M, 32 * M),
                small(8 * K, bs, None),
                big(16 * M, 8 * M),
            ],
        ),
        (
            Some("lfsr"),
            false,
            [
                (4 * M, 4 * M, Some(32 * M), 64 * M, 64 * M),
                (4 * M, 4 * M, None, 64 * M, 64 * M),
                big(16 * M, 16 * M),
                (4 * M, 16 * M, None, 64 * M, 64 * M),
                big(16 * M, 32 * M),
                (8 * M, 4 * M, None, 64 * M, 64 * M),
                big(16 * M, 8 * M),
            ],
        ),
        (
            None,
            true,
            [
                small(bs, bs, Some(8 * bs)),
                small(bs, bs, None),
                big(16 * M, 16 * M),
                small(bs, 2 * bs, None),
                big(16 * M, 32 * M),
                small(8 * K, bs, None),
                (16 * M, 8 * M, None, 256 * M, 256 * M),
            ],
        ),
    ];
    for (generator, norandommap, list) in groups {
        for (range, size, offset, file, io_size) in list {
            v.push(Case { generator, norandommap, range, size, offset, file, io_size });
        }
    }
    v
}

/// Run case `c` and give the I/Os' offsets from its IOPS log, in order.
fn offsets(c: &Case, dir: &std::path::Path) -> Vec<u64> {
    let log = dir.join("iops");
    let mut args = vec![
        "run".to_string(),
        "--name=strided".into(),
        "--zonemode=strided".into(),
        "--log_offset=1".into(),
        "--randrepeat=0".into(),
        "--rw=randread".into(),
        format!("--write_iops_log={}", log.display()),
        format!("--output={}", dir.join("out").display()),
        format!("--zonerange={}", c.range),
        format!("--zonesize={}", c.size),
        "--bs=4096".into(),
    ];
    if c.norandommap {
        args.push("--norandommap=1".into());
    }
    if let Some(g) = c.generator {
        args.push(format!("--random_generator={g}"));
    }
    if let Some(o) = c.offset {
        args.push(format!("--offset={o}"));
    }
    args.push("--ioengine=null".into());
    args.push(format!("--size={}", c.file));
    args.push(format!("--io_size={}", c.io_size));
    args.push(format!("--filesize={}", c.file));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, _, err) = common::blksim(&args);
    assert_eq!(code, 0, "{args:?}: {err}");
    let text = std::fs::read_to_string(dir.join("iops_iops.1.log")).unwrap();
    text.lines().map(|l| l.split(',').nth(4).unwrap().trim().parse().unwrap()).collect()
}

/// t/strided.py's check_result: `None` when it passes, else what failed.
fn check(c: &Case, offsets: &[u64]) -> Option<String> {
    let bs = 4096;
    let start = c.offset.unwrap_or(0);
    let (per_size, per_range) = (c.size / bs, c.range / bs);
    let (mut zone, mut in_zone) = (start, 0);
    let mut seen = std::collections::BTreeSet::new();
    for &o in offsets {
        if in_zone == per_size {
            (in_zone, seen) = (0, Default::default());
            zone += c.range;
            if zone >= c.file {
                zone = start;
            }
        }
        in_zone += 1;
        if o < zone || o >= zone + c.range {
            return Some(format!("offset {o} outside of the zone starting at {zone}"));
        }
        if c.norandommap && c.generator != Some("lfsr") {
            continue;
        }
        if !seen.insert((o - zone) / bs) {
            return Some(format!("offset {o} in a zone already touched"));
        }
        if in_zone % per_range == 0 {
            if seen.len() as u64 != per_range {
                return Some(format!("{per_range} blocks expected in the zone, {} seen", seen.len()));
            }
            seen.clear();
        }
    }
    None
}

#[test]
fn fios_strided_tests_pass() {
    let dir = tempfile::tempdir().unwrap();
    for (i, c) in cases().iter().enumerate() {
        let offs = offsets(c, dir.path());
        // io_size's I/Os, all of them.
        assert_eq!(offs.len() as u64, c.io_size / 4096, "test {}", i + 1);
        assert_eq!(check(c, &offs), None, "t/strided.py test {}", i + 1);
    }
}

#[test]
fn the_criterion_catches_io_outside_the_zone() {
    // Without zones the same job's offsets spread over the file, and the check fails.
    let c = &cases()[1];
    let spread: Vec<u64> = (0..16).rev().map(|b| b * 4096).collect();
    assert!(check(c, &spread).is_some());
    // A block read twice in one pass of a zone's range fails the random-map cases, not when
    // the zone's size is several passes of its range.
    let c = &cases()[3];
    let twice = [0, 0, 0, 0, 4096, 4096, 4096, 4096];
    assert!(check(c, &twice).is_none(), "zonesize = 4 x zonerange: each block four times");
    let c = &cases()[12];
    assert!(check(c, &[0, 0]).unwrap().contains("already touched"));
}

#[test]
fn sequential_zones_move_by_range_and_skip() {
    // disk-zone-profile's shape: 8 KiB read in each zone of 8 KiB, 8 KiB skipped between:
    // 0, 4k, 16k, 20k, ... and after the file's end back to the start (a second loop of size).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.fio");
    std::fs::write(
        &path,
        "[z]\nioengine=null\nrw=read\nbs=4k\nsize=64k\nzonemode=strided\nzonesize=8k\nzoneskip=8k\nwrite_iolog=w.log\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_blksim"))
        .args(["run", "job.fio"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let log = std::fs::read_to_string(dir.path().join("w.log")).unwrap();
    let got: Vec<u64> =
        log.lines().filter(|l| l.contains(" read ")).map(|l| l.split(' ').nth(3).unwrap().parse().unwrap()).collect();
    let want: Vec<u64> = [0, 1, 4, 5, 8, 9, 12, 13].iter().cycle().take(16).map(|b| b * 4096).collect();
    assert_eq!(got, want);
}

#[test]
fn zone_options_fio_refuses_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.fio");
    for (extra, code, says) in [
        ("zonesize=8k\n", 2, "--zonemode=none and --zonesize are not compatible"),
        ("zonemode=none\nzonesize=8k\n", 2, "not compatible"),
        ("zonemode=strided\n", 2, "--zonesize must be specified"),
        ("zonemode=zbd\nzonesize=8k\n", 2, "zoned block devices are not modelled"),
        ("zonemode=strided\nzonesize=8k\nzoneskip=2z\n", 2, "zones"),
        ("filesize=16k\noffset=32k\n", 2, "offset extends end"),
    ] {
        std::fs::write(&path, format!("[z]\nioengine=null\nrw=read\nbs=4k\nsize=64k\n{extra}")).unwrap();
        let (c, _, err) = common::blksim(&["run", path.to_str().unwrap()]);
        assert!(c == code && err.contains(says) && err.contains("job.fio"), "{extra:?}: {c} {err}");
    }
    // filesize on a device: its size is the device's.
    std::fs::write(&path, "[z]\nfilename=/dev/nvme0n1\ndirect=1\nrw=read\nbs=4k\nsize=64k\nfilesize=1m\n").unwrap();
    let (c, _, err) = common::blksim(&["run", path.to_str().unwrap()]);
    assert!(c == 2 && err.contains("filesize") && err.contains("null engine"), "{c} {err}");
}
