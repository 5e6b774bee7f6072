//! The job file's structure, as fio's `__parse_jobs_ini` reads it: `[name]`
//! sections, `;`/`#` comments (also trailing), and `include` of option-only
//! files (from the working directory, else relative to the including file).

use std::path::{Path, PathBuf};

use crate::{ErrorKind, InputError};

/// One option line, as written (comments and surrounding blanks removed).
#[derive(Clone, Debug)]
pub(crate) struct RawOption {
    pub file: PathBuf,
    pub line: usize,
    pub text: String,
}

/// A `[name]` section and its option lines (included ones in place).
#[derive(Clone, Debug)]
pub(crate) struct Section {
    pub name: String,
    pub file: PathBuf,
    pub line: usize,
    /// fio treats every section whose name starts with `global` as global.
    pub global: bool,
    pub options: Vec<RawOption>,
}

const MAX_INCLUDE_DEPTH: usize = 16;

/// The most option lines a job file (with its includes) may have: 4096 jobs
/// (fio's limit) of 64 options. fio's job files are kilobytes; a file past
/// this is a generator gone wrong, and each line costs the parser memory.
pub(crate) const MAX_OPTION_LINES: usize = 4096 * 64;

/// The largest job file (or included file) read, bytes.
pub(crate) const MAX_JOB_FILE_BYTES: u64 = 16 << 20;

/// `path`'s bytes, unless it is larger than [`MAX_JOB_FILE_BYTES`] (said at `file`:`line`, the file
/// or the include that names it).
pub(crate) fn read_bounded(path: &Path, file: &Path, line: usize, what: &str) -> Result<Vec<u8>, InputError> {
    use std::io::Read;
    let cannot = |e: std::io::Error| {
        let which = if path == file { String::new() } else { format!(" '{}'", path.display()) };
        error(file, line, format!("cannot read {what}{which}: {e}"))
    };
    let f = std::fs::File::open(path).map_err(cannot)?;
    let mut bytes = Vec::new();
    f.take(MAX_JOB_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(cannot)?;
    if bytes.len() as u64 > MAX_JOB_FILE_BYTES {
        return Err(error(
            file,
            line,
            format!(
                "{what} '{}' is over {} MiB: blksim reads job files up to that size (fio's are kilobytes)",
                path.display(),
                MAX_JOB_FILE_BYTES >> 20
            ),
        ));
    }
    Ok(bytes)
}

pub(crate) fn error(file: &Path, line: usize, message: impl Into<String>) -> InputError {
    InputError { kind: ErrorKind::BadInput, file: file.to_path_buf(), line, message: message.into(), more: Vec::new() }
}

/// fio's `strip_blank_front` + `strip_blank_end`: blanks around, and
/// everything from the first `;` or `#`.
fn clean(line: &str) -> &str {
    let line = line.trim_start();
    let cut = line.find([';', '#']).unwrap_or(line.len());
    line[..cut].trim_end_matches(|c: char| c.is_whitespace() || c.is_control())
}

/// The sections of one job file, with its includes read.
pub(crate) fn read_sections(text: &str, file: &Path) -> Result<Vec<Section>, InputError> {
    let mut sections: Vec<Section> = Vec::new();
    let mut lines = 0;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let p = clean(raw);
        if p.is_empty() {
            continue;
        }
        if p.starts_with('[') {
            let name = section_name(p).map_err(|m| error(file, line, m))?;
            let global = name.starts_with("global");
            sections.push(Section { name, file: file.to_path_buf(), line, global, options: Vec::new() });
            continue;
        }
        let Some(section) = sections.last_mut() else {
            return Err(error(file, line, format!("option '{p}' is outside of any [job] section")));
        };
        option_line(p, file, line, &mut section.options, 0, &mut lines)?;
    }
    Ok(sections)
}

fn section_name(p: &str) -> Result<String, String> {
    let inner = p.strip_prefix('[').and_then(|s| s.strip_suffix(']'));
    match inner {
        Some(name) if !name.is_empty() => Ok(name.to_string()),
        Some(_) => Err("a section needs a name: [name]".into()),
        None => Err(format!("section header '{p}' does not end with ']'")),
    }
}

/// An option line or an `include`, appended to `out`; `lines` counts the file's option lines so far.
fn option_line(
    p: &str,
    file: &Path,
    line: usize,
    out: &mut Vec<RawOption>,
    depth: usize,
    lines: &mut usize,
) -> Result<(), InputError> {
    match p.strip_prefix("include") {
        Some(rest) => include(rest, file, line, out, depth, lines),
        None => {
            *lines += 1;
            if *lines > MAX_OPTION_LINES {
                return Err(error(
                    file,
                    line,
                    format!(
                        "more than {MAX_OPTION_LINES} option lines: blksim reads job files up to that many (4096 \
                         jobs, fio's limit, of 64 options)"
                    ),
                ));
            }
            out.push(RawOption { file: file.to_path_buf(), line, text: p.to_string() });
            Ok(())
        }
    }
}

fn include(
    rest: &str,
    file: &Path,
    line: usize,
    out: &mut Vec<RawOption>,
    depth: usize,
    lines: &mut usize,
) -> Result<(), InputError> {
    let name = rest.trim();
    if name.is_empty() {
        return Err(error(file, line, "include needs a file name"));
    }
    if depth >= MAX_INCLUDE_DEPTH {
        return Err(error(file, line, format!("include of '{name}' nests more than {MAX_INCLUDE_DEPTH} files deep")));
    }
    let path = resolve_include(name, file);
    let bytes = read_bounded(&path, file, line, "include file")?;
    let text = String::from_utf8_lossy(&bytes);
    for (i, raw) in text.lines().enumerate() {
        let p = clean(raw);
        if p.is_empty() {
            continue;
        }
        if p.starts_with('[') {
            return Err(error(&path, i + 1, "an included file holds options only, not [sections]"));
        }
        option_line(p, &path, i + 1, out, depth + 1, lines)?;
    }
    Ok(())
}

/// fio looks for an include in the working directory first, then next to
/// the including file.
fn resolve_include(name: &str, including: &Path) -> PathBuf {
    let direct = PathBuf::from(name);
    if direct.exists() {
        return direct;
    }
    match including.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(name),
        _ => direct,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sections(text: &str) -> Vec<Section> {
        read_sections(text, Path::new("t.fio")).unwrap()
    }

    #[test]
    fn sections_comments_and_globals() {
        let s = sections(
            "; a comment\n# another\n[global]\nbs=4k ; trailing\n\n[job one]\n  rw=read# x\n[global-2]\n[globalx]\n",
        );
        let names: Vec<_> = s.iter().map(|s| (s.name.as_str(), s.global, s.line)).collect();
        assert_eq!(names, [("global", true, 3), ("job one", false, 6), ("global-2", true, 8), ("globalx", true, 9)]);
        assert_eq!(s[0].options[0].text, "bs=4k");
        assert_eq!(s[0].options[0].line, 4);
        assert_eq!(s[1].options[0].text, "rw=read");
    }

    #[test]
    fn structural_errors_name_the_line() {
        let e = read_sections("bs=4k\n[a]\n", Path::new("t.fio")).unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.contains("outside"), "{}", e.message);
        let e = read_sections("[a]\n[b\n", Path::new("t.fio")).unwrap_err();
        assert_eq!((e.line, e.file.to_str()), (2, Some("t.fio")));
        assert!(read_sections("[]\n", Path::new("t.fio")).is_err());
    }

    #[test]
    fn includes_nest_and_resolve_next_to_the_including_file() {
        let guard = tempfile::Builder::new().prefix("blksim-ini-test-").tempdir().unwrap();
        let dir = guard.path().to_path_buf();
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("sub/inner.fio"), "iodepth=3\n").unwrap();
        std::fs::write(dir.join("outer.fio"), "; opts\nbs=16k\ninclude sub/inner.fio\n").unwrap();
        std::fs::write(dir.join("bad.fio"), "[x]\n").unwrap();
        let job = dir.join("job.fio");
        let s = read_sections("[a]\ninclude outer.fio\nrw=write\n", &job).unwrap();
        let texts: Vec<_> = s[0].options.iter().map(|o| (o.text.as_str(), o.line)).collect();
        assert_eq!(texts, [("bs=16k", 2), ("iodepth=3", 1), ("rw=write", 3)]);
        assert_eq!(s[0].options[1].file, dir.join("outer.fio").parent().unwrap().join("sub/inner.fio"));
        let e = read_sections("[a]\ninclude bad.fio\n", &job).unwrap_err();
        assert_eq!((e.file.clone(), e.line), (dir.join("bad.fio"), 1));
        let e = read_sections("[a]\ninclude missing.fio\n", &job).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("missing.fio"));
        std::fs::write(dir.join("loop.fio"), "include loop.fio\n").unwrap();
        let e = read_sections("[a]\ninclude loop.fio\n", &job).unwrap_err();
        assert!(e.message.contains("nests"), "{}", e.message);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
