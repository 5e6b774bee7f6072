//! The `blksim` command: run fio jobs on a simulated machine.
//!
//! Exit status: 0 on success, 2 with one message on bad input.

mod args;
mod commands;

use std::process::ExitCode;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    match commands::dispatch(&argv) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("blksim: {message}");
            ExitCode::from(2)
        }
    }
}
