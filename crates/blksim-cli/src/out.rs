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

/// `text` appended to file `path`, created if it is not there (fio's logs with `per_job_logs=0`).
pub fn append_file(path: &str, text: &[u8], what: &str) -> Result<(), Failure> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| Failure::from(format!("{what} {path}: {e}")))?;
    f.write_all(text).and_then(|()| f.flush()).map_err(|e| written(&format!("{what} {path}"), e))
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
