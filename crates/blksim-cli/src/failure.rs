//! Why a command failed, and so its exit status: bad input (2) — a job file,
//! an option, a knob, a profile, or input blksim cannot simulate yet — or a
//! failure of blksim itself (70): the simulation stalled or broke an
//! invariant, or it panicked.

/// A failed command: what to print, and whether it is blksim's fault.
#[derive(Debug)]
pub struct Failure {
    /// A failure of the model (`blksim::ErrorKind::Internal`), not of the input.
    pub internal: bool,
    /// One line (or a usage text) for stderr, after `blksim: `.
    pub message: String,
}

impl Failure {
    /// The exit status: 2 for bad input, 70 (EX_SOFTWARE) for blksim's own failure.
    pub fn status(&self) -> u8 {
        if self.internal {
            70
        } else {
            2
        }
    }
}

/// Input errors of the CLI's own checks.
impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure { internal: false, message }
    }
}

/// The model's and the lab's errors keep their kind.
impl From<blksim::Error> for Failure {
    fn from(e: blksim::Error) -> Failure {
        Failure { internal: e.kind == blksim::ErrorKind::Internal, message: e.message }
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
}
