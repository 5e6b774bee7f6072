//! Ctrl-C during a simulation, as fio does it: the first stops the run at
//! the current virtual time, the report so far is printed and blksim exits
//! 130; a second Ctrl-C ends blksim at once (also 130).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use signal_hook::consts::SIGINT;

use crate::failure::{Cause, Failure};

/// A flag that Ctrl-C sets, for `blksim::RunOptions::stop`.
pub fn stop_on_ctrl_c() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    // Registering fails only for signals a process may not catch; SIGINT is not one.
    signal_hook::flag::register_conditional_shutdown(SIGINT, 130, Arc::clone(&stop)).expect("SIGINT handler");
    signal_hook::flag::register(SIGINT, Arc::clone(&stop)).expect("SIGINT handler");
    stop
}

/// After the report is out: exit 130 if Ctrl-C stopped the run (at `sim_time_ns` of virtual time).
pub fn check(stop: &AtomicBool, sim_time_ns: u64) -> Result<(), Failure> {
    if stop.load(Ordering::Relaxed) {
        return Err(Failure::new(
            Cause::Interrupted,
            format!(
                "interrupted (Ctrl-C) at {:.3} ms of virtual time: the report covers the run so far",
                sim_time_ns as f64 / 1e6
            ),
        ));
    }
    Ok(())
}

/// `check()` unless Ctrl-C stopped the run (its I/Os are then still in flight).
pub fn unless_stopped(stop: &AtomicBool, check: impl FnOnce() -> Result<(), Failure>) -> Result<(), Failure> {
    if stop.load(Ordering::Relaxed) {
        return Ok(());
    }
    check()
}
