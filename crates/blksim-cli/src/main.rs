//! The `blksim` command: run fio jobs on a simulated machine.
fn main() {}
