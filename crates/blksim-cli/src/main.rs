//! The `blksim` command: run fio jobs on a simulated machine.
//!
//! Exit status: 0 on success, 2 with one message on bad input, 70 on an
//! internal error (a bug).

mod args;
mod commands;
mod dsa;
mod failure;
mod fit;
mod options;
mod reproduce;
mod tio_uring;

use std::process::ExitCode;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    // A panic is a bug in blksim, never the user's input: say so in one line.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("blksim: internal error (a bug; please report it with the job and command): {info}");
    }));
    match std::panic::catch_unwind(|| commands::dispatch(&argv)) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(failure)) => {
            eprintln!("blksim: {}", failure.message);
            ExitCode::from(failure.status())
        }
        Err(_) => ExitCode::from(70),
    }
}
