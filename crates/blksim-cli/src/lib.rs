//! The `blksim` command's code as a library: the binary (`main.rs`) calls
//! [`commands::main`]; the Python package (`crates/blksim-py`) calls
//! [`api`], the same steps as `blksim run` without the terminal.

pub mod api;
pub mod args;
pub mod budget;
pub mod commands;
pub mod dsa;
pub mod failure;
pub mod fio_options;
pub mod fit;
pub mod interrupt;
pub mod invariants;
pub mod out;
pub mod parse;
pub mod progress;
pub mod reproduce;
pub mod sweep;
pub mod tio_uring;
