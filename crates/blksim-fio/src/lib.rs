//! fio's side of blksim: job files in (`job`), fio's reports out (`output`).

pub mod job;
pub mod output;
pub mod verify_state;

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
    /// The other problems found in the same input, each at its own line (shown after this one).
    pub more: Vec<InputError>,
}

impl InputError {
    /// The first of `problems` (in the order found), with the others as [`InputError::more`], sorted by
    /// file and line; bad input if any problem is, else not modelled. `None` for no problem.
    pub fn all(mut problems: Vec<InputError>) -> Option<InputError> {
        if problems.is_empty() {
            return None;
        }
        let mut first = problems.remove(0);
        problems.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
        if problems.iter().any(|p| p.kind == ErrorKind::BadInput) {
            first.kind = ErrorKind::BadInput;
        }
        first.more = problems;
        Some(first)
    }
}

/// One line per problem: `file:line: message` (`file: message` about the file as a whole).
impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in std::iter::once(self).chain(&self.more).enumerate() {
            let sep = if i > 0 { "\n" } else { "" };
            if e.line > 0 {
                write!(f, "{sep}{}:{}: {}", e.file.display(), e.line, e.message)?;
            } else {
                write!(f, "{sep}{}: {}", e.file.display(), e.message)?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for InputError {}
