//! Errors the model reports, typed by what the caller should do with them:
//! bad input (the CLI exits 2), input the model cannot simulate yet (the
//! lab marks its cell pending), or a failure of the model itself (a stall,
//! a broken invariant: the CLI exits 70).

use std::fmt;

/// What kind of failure an [`Error`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The input is wrong: a job naming a device the machine lacks, a knob
    /// out of range, a profile that does not resolve.
    BadInput,
    /// The input is valid but needs a mechanism, device or option the model
    /// does not have yet; the message says what is missing.
    NotModelled,
    /// The model failed: the simulation stalled or an invariant broke. A bug.
    Internal,
}

/// An error found by the model or its input parsers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// What kind of failure it is.
    pub kind: ErrorKind,
    /// The job (index into the jobs given) the error is about, if any.
    pub job: Option<usize>,
    /// One line saying what is wrong and, where it helps, what was expected.
    pub message: String,
}

impl Error {
    /// Bad input, about no job in particular.
    pub fn bad_input(message: impl Into<String>) -> Error {
        Error { kind: ErrorKind::BadInput, job: None, message: message.into() }
    }

    /// Valid input the model cannot simulate yet; `message` says what is missing.
    pub fn not_modelled(message: impl Into<String>) -> Error {
        Error { kind: ErrorKind::NotModelled, job: None, message: message.into() }
    }

    /// A failure of the model itself.
    pub fn internal(message: impl Into<String>) -> Error {
        Error { kind: ErrorKind::Internal, job: None, message: message.into() }
    }

    /// The same error, about job `job`.
    pub fn for_job(self, job: usize) -> Error {
        Error { job: Some(job), ..self }
    }

    /// The same error with `prefix: ` in front of its message.
    pub fn context(self, prefix: impl fmt::Display) -> Error {
        Error { message: format!("{prefix}: {}", self.message), ..self }
    }

    /// Is it input the model cannot simulate yet?
    pub fn is_not_modelled(&self) -> bool {
        self.kind == ErrorKind::NotModelled
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
