//! fio's `read_iolog`: an I/O log (version 2 or 3, as fio's `write_iolog`
//! writes version 3) read as fio's `read_iolog` (iolog.c) reads it, with
//! `replay_redirect`, `replay_scale`, `replay_align`, `replay_time_scale`,
//! `replay_no_stall` and `replay_skip`: the entries the job replays and the
//! files it opens. fio warns about a line it cannot read and goes on; blksim
//! stops at it, naming the log and the line.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use blksim::workload::{Direction, Replay, ReplayEntry, ReplayOp};

use super::checks::LOGICAL_BLOCK_BYTES;
use crate::{ErrorKind, InputError};

const VERSION_2: &str = "fio version 2 iolog";
const VERSION_3: &str = "fio version 3 iolog";

/// The largest log read, bytes (fio reads it whole unless `read_iolog_chunked`).
const MAX_LOG_BYTES: u64 = 1 << 30;

/// fio's replay options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayOptions {
    /// `read_iolog`: the log (a `:`-list gives each clone its own).
    pub file: Option<String>,
    pub no_stall: bool,
    pub redirect: Option<String>,
    /// `replay_scale`: offsets divided by it (0 and 1: as logged).
    pub scale: u64,
    /// `replay_align`: offsets rounded down to it (a power of two; 0: as logged).
    pub align: u64,
    /// `replay_time_scale`, percent.
    pub time_scale: u64,
    /// `replay_skip`: bit per direction (read 0, write 1, trim 2, sync 3).
    pub skip: u32,
    /// `merge_blktrace_file` and its lists.
    pub merge: MergeOptions,
    /// fio's `--readonly`: the log's writes and trims are not replayed (`read_iolog2`,
    /// `read_blktrace`); set from the command line, not by an option.
    pub read_only: bool,
}

/// fio's `merge_blktrace_file`, `merge_blktrace_scalars`, `merge_blktrace_iters`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MergeOptions {
    /// Where the merged trace is written (then replayed in place of `read_iolog`'s list).
    pub file: Option<String>,
    /// Per listed trace: its times scaled by this percentage (empty: 100 each).
    pub scalars: Vec<u64>,
    /// Per listed trace: how many times it is played (empty: once each).
    pub iters: Vec<u64>,
}

impl Default for ReplayOptions {
    fn default() -> ReplayOptions {
        ReplayOptions {
            file: None,
            no_stall: false,
            redirect: None,
            scale: 1,
            align: 0,
            time_scale: 100,
            skip: 0,
            merge: MergeOptions::default(),
            read_only: false,
        }
    }
}

/// `replay_skip`'s value, as fio's `str_replay_skip_cb` reads it.
pub(crate) fn parse_skip(value: &str) -> Result<u32, String> {
    let mut skip = 0;
    for word in value.trim().split(',') {
        skip |= match word {
            "read" => 1 << 0,
            "write" => 1 << 1,
            "trim" => 1 << 2,
            "sync" => 1 << 3,
            other => return Err(format!("unknown skip type '{other}' (expected read, write, trim or sync)")),
        };
    }
    Ok(skip)
}

/// A log read for a job: its replay, the files it names (in its order), and
/// the queue depth fio probes from a blktrace.
pub(crate) struct Loaded {
    pub replay: Arc<Replay>,
    pub files: Vec<String>,
    pub probed_depth: Option<u32>,
    /// With `--readonly`: how many of the log's writes (and trims) fio's reader skips and counts.
    pub skipped_writes: u64,
}

/// The log of clone `subjob` (fio's `get_name_by_idx`: the `:`-list's entry, round robin).
fn name_of(list: &str, subjob: usize) -> &str {
    let names: Vec<&str> = list.split(':').filter(|s| !s.is_empty()).collect();
    if names.is_empty() {
        list
    } else {
        names[subjob % names.len()]
    }
}

/// Read the log of clone `subjob` (option written at `at`): the replay and the job's files, in the log's order.
pub(crate) fn read(
    opts: &ReplayOptions,
    list: &str,
    subjob: usize,
    direct: bool,
    null_engine: bool,
    at: (&Path, usize),
) -> Result<Loaded, InputError> {
    let name = name_of(list, subjob);
    let path = PathBuf::from(name);
    let option_error = |kind: ErrorKind, message: String| InputError {
        kind,
        file: at.0.to_path_buf(),
        line: at.1,
        message,
        more: Vec::new(),
    };
    let read_bytes = |name: &str| {
        if name == "-" {
            return Err(option_error(
                ErrorKind::NotModelled,
                "read_iolog=-: blksim reads a log from a file, not stdin".into(),
            ));
        }
        use std::io::Read;
        let f = std::fs::File::open(name)
            .map_err(|e| option_error(ErrorKind::BadInput, format!("read_iolog={name}: cannot read the log: {e}")))?;
        let mut bytes = Vec::new();
        f.take(MAX_LOG_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| option_error(ErrorKind::BadInput, format!("read_iolog={name}: cannot read the log: {e}")))?;
        if bytes.len() as u64 > MAX_LOG_BYTES {
            return Err(option_error(
                ErrorKind::NotModelled,
                format!("read_iolog={name}: the log is over {} MiB, more than blksim reads", MAX_LOG_BYTES >> 20),
            ));
        }
        Ok(bytes)
    };
    if let Some(out) = &opts.merge.file {
        // fio's merge_blktrace_iologs (at add_job, before the clones): every listed
        // trace merged into one, written to `out`, which every clone replays.
        let mut traces = Vec::new();
        for name in list.split(':').filter(|s| !s.is_empty()) {
            let bytes = read_bytes(name)?;
            if !super::blktrace::is_blktrace(&bytes) {
                return Err(option_error(
                    ErrorKind::BadInput,
                    format!("merge_blktrace_file: {name} is not a blktrace (fio: file is not a blktrace: {name})"),
                ));
            }
            traces.push(bytes);
        }
        let merged = super::blktrace::merge(&traces, &opts.merge).map_err(|m| option_error(ErrorKind::BadInput, m))?;
        std::fs::write(out, &merged).map_err(|e| {
            option_error(ErrorKind::BadInput, format!("merge_blktrace_file={out}: cannot write the merged trace: {e}"))
        })?;
        let (replay, files, depth, skipped_writes) = super::blktrace::parse(&merged, Path::new(out), opts)?;
        return Ok(Loaded { replay, files, probed_depth: Some(depth), skipped_writes });
    }
    let bytes = read_bytes(name)?;
    if super::blktrace::is_blktrace(&bytes) {
        let (replay, files, depth, skipped_writes) = super::blktrace::parse(&bytes, &path, opts)?;
        return Ok(Loaded { replay, files, probed_depth: Some(depth), skipped_writes });
    }
    let text = String::from_utf8_lossy(&bytes);
    let (replay, files, skipped_writes) = parse(&text, &path, opts, direct, null_engine)?;
    Ok(Loaded { replay, files, probed_depth: None, skipped_writes })
}

/// Parse a log's text (`path` names it in messages).
pub(crate) fn parse(
    text: &str,
    path: &Path,
    opts: &ReplayOptions,
    direct: bool,
    null_engine: bool,
) -> Result<(Arc<Replay>, Vec<String>, u64), InputError> {
    let error = |line: usize, message: String| InputError {
        kind: ErrorKind::BadInput,
        file: path.to_path_buf(),
        line,
        message,
        more: Vec::new(),
    };
    let not_modelled =
        |line: usize, message: String| InputError { kind: ErrorKind::NotModelled, ..error(line, message) };
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    let version = match lines.next() {
        Some((_, l)) if l.starts_with(VERSION_3) => 3,
        Some((_, l)) if l.starts_with(VERSION_2) => 2,
        Some(_) => {
            return Err(error(
                1,
                format!("not a fio iolog: the first line is not '{VERSION_3}' or '{VERSION_2}' (fio: iolog version 1 is no longer supported)"),
            ))
        }
        None => return Err(error(0, "the log is empty (fio: unable to read iolog)".into())),
    };
    let mut files: Vec<String> = Vec::new();
    let mut entries = Vec::new();
    let mut last_ttime = 0u64;
    let mut trims = false;
    let mut syncs = false;
    let mut skipped_writes = 0;
    for (n, line) in lines {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.is_empty() {
            continue;
        }
        let (delay_us, words) = if version == 3 {
            let ttime: u64 = words[0]
                .parse()
                .map_err(|_| error(n, format!("'{}': a version 3 entry starts with its time in µs", words[0])))?;
            // fio's delay_since_ttime.
            let delay = if last_ttime == 0 || opts.no_stall || ttime < last_ttime {
                0
            } else if opts.time_scale == 100 {
                ttime - last_ttime
            } else {
                ((ttime - last_ttime) as f64 * (100.0 / opts.time_scale as f64)) as u64
            };
            last_ttime = ttime;
            (delay, &words[1..])
        } else {
            (0, &words[..])
        };
        let Some(&logged) = words.first() else {
            return Err(error(n, "bad iolog3 line: expected TIME FILE ACTION [OFFSET LENGTH]".into()));
        };
        let fname = opts.redirect.as_deref().unwrap_or(logged);
        let fileno = |files: &Vec<String>| files.iter().position(|f| f == fname);
        match words {
            [_, act] => {
                match *act {
                    "add" => {
                        if fileno(&files).is_none() {
                            files.push(fname.to_string());
                        }
                    }
                    "open" | "close" => {
                        if fileno(&files).is_none() {
                            return Err(error(n, format!("{act} of '{fname}', which the log has not added")));
                        }
                    }
                    "wait" if version == 3 => continue, // fio: "ignoring wait command with version 3"
                    other => return Err(error(n, format!("bad file action '{other}' (expected add, open or close)"))),
                }
                entries.push(ReplayEntry { delay_us, op: ReplayOp::File, line: n as u32 });
            }
            [_, act, offset, bytes] => {
                let dir = match *act {
                    "read" => Direction::Read,
                    "write" => Direction::Write,
                    "trim" => Direction::Trim,
                    "sync" | "datasync" => {
                        // fio's read_iolog2: replay_skip=sync skips `sync` (not `datasync`);
                        // the offset and length are read and not used.
                        if opts.skip & (1 << 3) != 0 && *act == "sync" {
                            continue;
                        }
                        let Some(file) = fileno(&files) else {
                            return Err(error(n, format!("{act} of '{fname}', which the log has not added")));
                        };
                        syncs = true;
                        entries.push(ReplayEntry {
                            delay_us,
                            op: ReplayOp::Sync { file: file as u16 },
                            line: n as u32,
                        });
                        continue;
                    }
                    // fio: "ignoring wait command with version 3".
                    "wait" if version == 3 => continue,
                    "wait" => {
                        return Err(not_modelled(
                            n,
                            "version 2 'wait' (a sleep until a time since fio started) is not modelled".into(),
                        ))
                    }
                    other => {
                        return Err(error(
                            n,
                            format!("bad iolog action '{other}' (expected read, write, trim, sync or datasync)"),
                        ))
                    }
                };
                if opts.skip & (1 << dir.index()) != 0 {
                    continue;
                }
                if opts.read_only && dir != Direction::Read {
                    // fio's read_iolog2: "Don't add a write (a trim) for ro mode".
                    skipped_writes += 1;
                    continue;
                }
                let offset: u64 =
                    offset.parse().map_err(|_| error(n, format!("'{offset}': expected an offset in bytes")))?;
                let bytes: u64 = bytes.parse().ok().filter(|&b| b <= u32::MAX as u64).ok_or_else(|| {
                    error(n, format!("'{bytes}': expected a length in bytes (fio reads an unsigned int)"))
                })?;
                if bytes == 0 {
                    return Err(error(n, "an I/O of 0 bytes".into()));
                }
                let mut offset = if opts.scale > 1 { offset / opts.scale } else { offset };
                if opts.align > 0 {
                    offset &= !(opts.align - 1);
                }
                if direct
                    && !null_engine
                    && (!offset.is_multiple_of(LOGICAL_BLOCK_BYTES) || !bytes.is_multiple_of(LOGICAL_BLOCK_BYTES))
                {
                    return Err(error(
                        n,
                        format!(
                            "{bytes} bytes at offset {offset} with direct=1: O_DIRECT I/O on a block device must be a multiple of its logical block size ({LOGICAL_BLOCK_BYTES} bytes here) in size and offset; Linux fails it with EINVAL"
                        ),
                    ));
                }
                let Some(file) = fileno(&files) else {
                    return Err(error(n, format!("I/O on '{fname}', which the log has not added")));
                };
                trims |= dir == Direction::Trim;
                entries.push(ReplayEntry {
                    delay_us,
                    op: ReplayOp::Io { file: file as u16, dir, offset, bytes },
                    line: n as u32,
                });
            }
            _ => {
                let form =
                    if version == 3 { "TIME FILE ACTION [OFFSET LENGTH]" } else { "FILE ACTION [OFFSET LENGTH]" };
                return Err(error(n, format!("bad iolog{version} line: expected {form}")));
            }
        }
    }
    if !entries.iter().any(|e| matches!(e.op, ReplayOp::Io { .. })) {
        let why = if skipped_writes > 0 {
            format!(" (--readonly skipped its {skipped_writes} writes and trims)")
        } else {
            String::new()
        };
        return Err(error(0, format!("the log has no I/O to replay{why} (fio: failed initializing iolog)")));
    }
    Ok((Arc::new(Replay { entries, trims, syncs }), files, skipped_writes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(text: &str, opts: &ReplayOptions) -> (Arc<Replay>, Vec<String>) {
        let (r, files, _) = parse(text, Path::new("log"), opts, true, false).unwrap();
        (r, files)
    }

    #[test]
    fn read_only_skips_the_writes_and_trims_as_fio_does_and_counts_them() {
        // fio's read_iolog2 with --readonly: "Don't add a write (a trim) for ro mode". A version 3
        // stamp is taken before the skip, so the read after a skipped write waits from the write's stamp.
        let text = "fio version 3 iolog\n0 /dev/a add\n0 /dev/a open\n10 /dev/a read 0 4096\n\
                    30 /dev/a write 4096 4096\n35 /dev/a trim 0 4096\n50 /dev/a read 8192 4096\n";
        let ro = ReplayOptions { read_only: true, ..Default::default() };
        let (r, files, skipped) = parse(text, Path::new("log"), &ro, true, false).unwrap();
        assert_eq!((files.len(), skipped), (1, 2));
        let ios: Vec<(Direction, u64, u64)> = r
            .entries
            .iter()
            .filter_map(|e| match e.op {
                ReplayOp::Io { dir, offset, .. } => Some((dir, offset, e.delay_us)),
                _ => None,
            })
            .collect();
        assert_eq!(ios, [(Direction::Read, 0, 0), (Direction::Read, 8192, 15)], "15: from the trim's stamp");
        assert!(!r.trims);
        // The same log without --readonly replays all four.
        let (all, _, none) = parse(text, Path::new("log"), &ReplayOptions::default(), true, false).unwrap();
        assert_eq!(none, 0);
        assert_eq!(all.entries.iter().filter(|e| matches!(e.op, ReplayOp::Io { .. })).count(), 4);
        // A log of writes only has nothing left: fio's "failed initializing iolog", with the reason.
        let writes = "fio version 2 iolog\n/dev/a add\n/dev/a write 0 4096\n";
        let e = parse(writes, Path::new("w.log"), &ro, true, false).unwrap_err();
        assert!(e.message.contains("--readonly skipped its 1 writes"), "{e}");
    }

    #[test]
    fn version_3_delays_are_the_time_stamps_differences() {
        let text = "fio version 3 iolog\n0 /dev/a add\n5 /dev/a open\n10 /dev/a write 0 4096\n25 /dev/a read 4096 4096\n20 /dev/a read 0 512\n";
        let (r, files) = parse_ok(text, &ReplayOptions::default());
        assert_eq!(files, ["/dev/a"]);
        let delays: Vec<u64> = r.entries.iter().map(|e| e.delay_us).collect();
        // The first stamp has no predecessor (fio's last_ttime starts at 0); a stamp that goes back waits 0.
        assert_eq!(delays, [0, 0, 5, 15, 0]);
        assert_eq!(r.entries[3].op, ReplayOp::Io { file: 0, dir: Direction::Read, offset: 4096, bytes: 4096 });
        assert_eq!(r.entries[3].line, 5);
        let slow = ReplayOptions { time_scale: 50, ..Default::default() };
        let (r, _) = parse_ok(text, &slow);
        assert_eq!(r.entries[3].delay_us, 30, "replay_time_scale=50 plays at half speed");
        let fast = ReplayOptions { no_stall: true, ..Default::default() };
        assert!(parse_ok(text, &fast).0.entries.iter().all(|e| e.delay_us == 0));
    }

    #[test]
    fn redirect_scale_align_and_skip() {
        let text = "fio version 2 iolog\n/dev/a add\n/dev/b add\n/dev/b write 8192 4096\n/dev/a read 12800 512\n/dev/a trim 0 4096\n";
        let (r, files) = parse_ok(text, &ReplayOptions::default());
        assert_eq!(files, ["/dev/a", "/dev/b"]);
        assert!(r.trims);
        assert_eq!(r.entries[2].op, ReplayOp::Io { file: 1, dir: Direction::Write, offset: 8192, bytes: 4096 });
        let o = ReplayOptions {
            redirect: Some("/dev/x".into()),
            scale: 2,
            align: 4096,
            skip: parse_skip("trim").unwrap(),
            ..Default::default()
        };
        let (r, files) = parse_ok(text, &o);
        assert_eq!(files, ["/dev/x"], "every file is the redirect target");
        assert!(!r.trims, "trims skipped");
        assert_eq!(r.entries[2].op, ReplayOp::Io { file: 0, dir: Direction::Write, offset: 4096, bytes: 4096 });
        assert_eq!(
            r.entries[3].op,
            ReplayOp::Io { file: 0, dir: Direction::Read, offset: 4096, bytes: 512 },
            "6400 aligned down"
        );
        assert!(parse_skip("read,bogus").unwrap_err().contains("bogus"));
    }

    #[test]
    fn bad_logs_are_refused_at_their_line() {
        let o = ReplayOptions::default();
        let e = |text: &str| parse(text, Path::new("t.log"), &o, true, false).unwrap_err();
        let v1 = e("/dev/a read 0 4096\n");
        assert_eq!(v1.line, 1);
        assert!(v1.message.contains("version 1"), "{v1}");
        let bad = e("fio version 3 iolog\n0 /dev/a add\n1 /dev/a scribble 0 4096\n");
        assert_eq!((bad.line, bad.kind), (3, ErrorKind::BadInput));
        assert!(bad.message.contains("scribble"), "{bad}");
        let unaligned = e("fio version 3 iolog\n0 /dev/a add\n1 /dev/a read 100 4096\n");
        assert!(unaligned.message.contains("EINVAL"), "{unaligned}");
        let bare = e("fio version 3 iolog\n0 /dev/a add\n17\n");
        assert_eq!(bare.line, 3, "{bare}");
        let unknown = e("fio version 3 iolog\n0 /dev/a add\n1 /dev/b read 0 4096\n");
        assert!(unknown.message.contains("/dev/b"), "{unknown}");
        let sync = e("fio version 3 iolog\n0 /dev/a add\n1 /dev/b sync 0 0\n");
        assert_eq!((sync.line, sync.kind), (3, ErrorKind::BadInput));
        assert!(sync.message.contains("/dev/b"), "{sync}");
        // Syncs alone are no I/O (fio: "empty iolog").
        let syncs = e("fio version 3 iolog\n0 /dev/a add\n1 /dev/a sync 0 0\n");
        assert!(syncs.message.contains("no I/O"), "{syncs}");
        let empty = e("fio version 3 iolog\n0 /dev/a add\n");
        assert!(empty.message.contains("no I/O"), "{empty}");
        let is_blktrace = super::super::blktrace::is_blktrace;
        assert!(is_blktrace(&0x6561_7407u32.to_le_bytes()) && is_blktrace(&0x6561_7407u32.to_be_bytes()));
    }
}
