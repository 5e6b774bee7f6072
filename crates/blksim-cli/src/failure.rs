//! Why a command failed, and so its exit status: bad input (2) — a job file,
//! an option, a knob, a profile, or input blksim cannot simulate yet — a
//! failure of blksim itself (70): the simulation stalled or broke an
//! invariant, or it panicked; a job that ended on an I/O error (1); output
//! that could not be written (1); cells
//! out of tolerance under `reproduce --check` (1); Ctrl-C (130, after the
//! report so far); and stdout closed by its reader (0, quietly: `| head`).

/// Why a command did not succeed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// The input: a job file, an option, a knob, a profile, something not modelled.
    BadInput,
    /// blksim itself (`blksim::ErrorKind::Internal`: a stall; or a panic).
    Internal,
    /// The output could not be written (a full disk, an I/O error).
    Output,
    /// `reproduce --check`: a cell that is neither pending nor a known gap is out of tolerance.
    OutOfTolerance,
    /// Ctrl-C: the run stopped, and what it had was printed.
    Interrupted,
    /// The reader of stdout went away (`blksim run ... | head`): nothing more to do.
    ClosedPipe,
    /// `run`: a job ended on an I/O error (exit 1, told apart from bad input's 2).
    JobErrors,
    /// The run outlived its wall budget: stopped, and what it had was printed.
    OverBudget,
}

/// A failed command: what to print, and why.
#[derive(Debug)]
pub struct Failure {
    pub cause: Cause,
    /// One line (or a usage text) for stderr, after `blksim: `; empty for nothing.
    pub message: String,
}

impl Failure {
    /// A failure of `cause` saying `message`.
    pub fn new(cause: Cause, message: impl Into<String>) -> Failure {
        Failure { cause, message: message.into() }
    }

    /// The exit status: 2 bad input, 70 (EX_SOFTWARE) blksim's own failure, 1 output not written or
    /// cells out of tolerance, 130 interrupted (128 + SIGINT), 0 for a closed pipe.
    pub fn status(&self) -> u8 {
        match self.cause {
            Cause::BadInput => 2,
            Cause::Internal => 70,
            Cause::Output | Cause::OutOfTolerance => 1,
            Cause::Interrupted => 130,
            Cause::ClosedPipe => 0,
            Cause::JobErrors | Cause::OverBudget => 1,
        }
    }
}

/// Input errors of the CLI's own checks.
impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure::new(Cause::BadInput, message)
    }
}

/// The model's and the lab's errors keep their kind.
impl From<blksim::Error> for Failure {
    fn from(e: blksim::Error) -> Failure {
        let cause = if e.kind == blksim::ErrorKind::Internal { Cause::Internal } else { Cause::BadInput };
        Failure::new(cause, e.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_failure_of_the_model_exits_70() {
        let f = |e: blksim::Error| Failure::from(e).status();
        assert_eq!(f(blksim::Error::internal("stalled")), 70);
        assert_eq!(f(blksim::Error::bad_input("no such device")), 2);
        assert_eq!(f(blksim::Error::not_modelled("trim")), 2);
        assert_eq!(Failure::from("unknown option".to_string()).status(), 2);
    }

    #[test]
    fn each_cause_has_its_documented_status() {
        let s = |c| Failure::new(c, "").status();
        assert_eq!(
            [Cause::Output, Cause::OutOfTolerance, Cause::Interrupted, Cause::ClosedPipe].map(s),
            [1, 1, 130, 0]
        );
    }
}
