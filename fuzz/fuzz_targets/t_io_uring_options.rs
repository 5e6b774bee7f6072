//! t/io_uring's and dsa-memfill's command lines (whitespace-separated
//! arguments): each gives a workload or a message; a workload is checked
//! against the built-in machines. Never a panic.
#![no_main]

use blksim_lab::frontend::{dsa_memfill, t_io_uring};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
use common::machine;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let args: Vec<String> = text.split_whitespace().map(str::to_string).collect();
    if let Ok(workload) = t_io_uring(&args) {
        let machine = machine("spr-gen5");
        let _ = blksim::validate(machine, &Default::default(), &workload.jobs);
    }
    let dsa = machine("spr-dsa");
    let _ = dsa_memfill(&args, dsa);
});
