//! The `blksim` command: run fio jobs on a simulated machine.
//!
//! Exit status: 0 on success (and when stdout's reader went away), 1 when a
//! job ended on an I/O error, the output could not be written or
//! `reproduce --check` found cells out of tolerance, 2 with one message on
//! bad input, 70 on an internal error (a bug, a stall), 130 after a signal
//! (the report so far printed).

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    // A panic is a bug in blksim, never the user's input: say so in one line.
    std::panic::set_hook(Box::new(|info| {
        let _ = writeln!(
            std::io::stderr(),
            "blksim: internal error (a bug; please report it with the job and command): {info}"
        );
        // With RUST_BACKTRACE set, where it happened, for the report.
        if std::env::var_os("RUST_BACKTRACE").is_some_and(|v| v != "0") {
            let _ = writeln!(std::io::stderr(), "{}", std::backtrace::Backtrace::force_capture());
        }
    }));
    match std::panic::catch_unwind(|| blksim_cli::commands::main(&argv)) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(failure)) => {
            if !failure.message.is_empty() {
                let _ = writeln!(std::io::stderr(), "blksim: {}", failure.message);
            }
            ExitCode::from(failure.status())
        }
        Err(_) => ExitCode::from(70),
    }
}
