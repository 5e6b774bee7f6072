//! Writing what a command prints: to stdout, where a reader that went away
//! (`| head`) ends the command quietly and any other error (`> /dev/full`)
//! is one line; or to a file (`--output`, `--trace`).

use std::io::{ErrorKind, Write};
use std::os::fd::{AsFd, AsRawFd};

use crate::failure::{Cause, Failure};

/// `text` on stdout.
pub fn print(text: &str) -> Result<(), Failure> {
    if stdout_closed() {
        return Err(Failure::new(Cause::Output, "writing stdout: it is closed (>&-): the report would be lost"));
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()).map_err(|e| written("stdout", e))
}

/// `text` and a newline on stdout.
pub fn print_line(text: &str) -> Result<(), Failure> {
    print(&format!("{text}\n"))
}

/// `text` into file `path` (`what` names the option that asked for it): a file that cannot be created
/// is bad input (exit 2), one that cannot be written an output error (exit 1).
pub fn write_file(path: &str, text: &[u8], what: &str) -> Result<(), Failure> {
    let mut f = std::fs::File::create(path).map_err(|e| Failure::from(format!("{what} {path}: {e}")))?;
    f.write_all(text).and_then(|()| f.flush()).map_err(|e| written(&format!("{what} {path}"), e))
}

/// A run's output as it comes: stdout, or the `--output` file, made at the first write and
/// written on after it (fio's `--status-interval` reports as they are taken, then the final one).
/// After a failure nothing more is written; `finish` gives it.
pub struct Output {
    path: Option<String>,
    file: Option<std::fs::File>,
    written: bool,
    failed: Option<Failure>,
}

impl Output {
    /// To `path` (`--output`), else stdout.
    pub fn new(path: Option<&str>) -> Output {
        Output { path: path.map(str::to_string), file: None, written: false, failed: None }
    }

    /// Anything written yet?
    pub fn written(&self) -> bool {
        self.written
    }

    /// Did a write fail?
    pub fn failed(&self) -> bool {
        self.failed.is_some()
    }

    /// `text`, unless a write failed before.
    pub fn write(&mut self, text: &str) {
        if self.failed.is_some() {
            return;
        }
        let result = match (&self.path, &mut self.file) {
            (None, _) => print(text),
            (Some(path), file) => append(file, path, text),
        };
        match result {
            Ok(()) => self.written = true,
            Err(e) => self.failed = Some(e),
        }
    }

    /// The first failure, if a write failed.
    pub fn finish(&mut self) -> Result<(), Failure> {
        self.failed.take().map_or(Ok(()), Err)
    }
}

/// `text` at the end of `file`, made (`--output`) at `path` if not yet.
fn append(file: &mut Option<std::fs::File>, path: &str, text: &str) -> Result<(), Failure> {
    let f = match file {
        Some(f) => f,
        None => file.insert(std::fs::File::create(path).map_err(|e| Failure::from(format!("--output {path}: {e}")))?),
    };
    f.write_all(text.as_bytes()).and_then(|()| f.flush()).map_err(|e| written(&format!("--output {path}"), e))
}

/// Replace file `path` with `text` at once: written beside it, then renamed over it (a crash leaves
/// the old file or the new one, never half of one).
pub fn replace_file(path: &std::path::Path, text: &[u8], what: &str) -> Result<(), Failure> {
    let shown = path.display();
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| Failure::from(format!("{what} {shown}: {e}")))?;
    tmp.write_all(text).and_then(|()| tmp.flush()).map_err(|e| written(&format!("{what} {shown}"), e))?;
    tmp.persist(path).map_err(|e| Failure::from(format!("{what} {shown}: {}", e.error)))?;
    Ok(())
}

/// Was blksim started with fd 1 closed (`>&-`)? Rust's runtime reopens a
/// closed standard descriptor on /dev/null before `main`, read-write; a
/// shell's `>/dev/null` opens it write-only. So: /dev/null, read-write.
fn stdout_closed() -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let fd = std::io::stdout().as_fd().as_raw_fd();
    let Ok(meta) = std::fs::metadata(format!("/proc/self/fd/{fd}")) else { return false };
    // /dev/null is character device 1:3.
    if !meta.file_type().is_char_device() || meta.rdev() != (1 << 8 | 3) {
        return false;
    }
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")).unwrap_or_default();
    let flags = info.lines().find_map(|l| l.strip_prefix("flags:")).and_then(|f| u32::from_str_radix(f.trim(), 8).ok());
    // O_ACCMODE is 3, O_RDWR 2.
    flags.is_some_and(|f| f & 3 == 2)
}

/// The failure of a write to `to`.
fn written(to: &str, e: std::io::Error) -> Failure {
    match e.kind() {
        ErrorKind::BrokenPipe => Failure::new(Cause::ClosedPipe, ""),
        _ => Failure::new(Cause::Output, format!("writing {to}: {e}")),
    }
}
