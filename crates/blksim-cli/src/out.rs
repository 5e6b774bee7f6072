//! Writing what a command prints: to stdout, where a reader that went away
//! (`| head`) ends the command quietly and any other error (`> /dev/full`)
//! is one line; or to a file (`--output`, `--trace`).

use std::io::{ErrorKind, Write};

use crate::failure::{Cause, Failure};

/// `text` on stdout.
pub fn print(text: &str) -> Result<(), Failure> {
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

/// The failure of a write to `to`.
fn written(to: &str, e: std::io::Error) -> Failure {
    match e.kind() {
        ErrorKind::BrokenPipe => Failure::new(Cause::ClosedPipe, ""),
        _ => Failure::new(Cause::Output, format!("writing {to}: {e}")),
    }
}
