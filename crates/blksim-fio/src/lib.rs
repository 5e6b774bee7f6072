//! fio's side of blksim: job files in (`job`), fio's reports out (`output`).

pub mod job;
pub mod output;

use std::fmt;
use std::path::PathBuf;

pub use blksim::ErrorKind;

/// An input error: one clear message naming the file, line and what was
/// expected. The CLI prints it and exits with status 2.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// Bad input, or a valid fio job that needs something blksim does not
    /// model (an option, an engine, a form of a value).
    pub kind: ErrorKind,
    pub file: PathBuf,
    /// 1-based line number; 0 when the error is about the file as a whole.
    pub line: usize,
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: {}", self.file.display(), self.line, self.message)
        } else {
            write!(f, "{}: {}", self.file.display(), self.message)
        }
    }
}

impl std::error::Error for InputError {}
