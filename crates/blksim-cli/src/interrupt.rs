//! Signals during a simulation, as fio takes Ctrl-C: the first SIGINT,
//! SIGTERM or SIGHUP stops the run at the current virtual time, the report
//! so far is printed, and blksim says which signal and exits 130; a second
//! one ends blksim at once (also 130).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

use crate::failure::{Cause, Failure};

/// The signals that stop a run.
const SIGNALS: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

/// The last of them that arrived (0: none).
fn last_signal() -> &'static Arc<AtomicUsize> {
    static LAST: OnceLock<Arc<AtomicUsize>> = OnceLock::new();
    LAST.get_or_init(|| Arc::new(AtomicUsize::new(0)))
}

/// A flag that SIGINT, SIGTERM or SIGHUP sets, for `blksim::RunOptions::stop`.
pub fn stop_on_signals() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in SIGNALS {
        // Registering fails only for signals a process may not catch; these are not.
        signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&stop)).expect("signal handler");
        signal_hook::flag::register_usize(sig, Arc::clone(last_signal()), sig as usize).expect("signal handler");
        signal_hook::flag::register(sig, Arc::clone(&stop)).expect("signal handler");
    }
    stop
}

/// A flag that SIGUSR1 sets, for `blksim::StatusSink::asked`: as fio's `sig_show_status`, a
/// report of the run so far, then the run goes on.
pub fn status_on_sigusr1() -> Arc<AtomicBool> {
    let asked = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGUSR1, Arc::clone(&asked)).expect("signal handler");
    asked
}

/// fio's `check_for_running_stats`: a file `fio-dump-status` in `$TMPDIR` (else `$TEMP`, else
/// `/tmp`) asks for a report of the run so far, as SIGUSR1 does; it is removed when seen. Looked
/// for every 100 ms of wall time while `asked` lives; a file that cannot be removed stops the
/// looking, with fio's message.
pub fn status_on_file(asked: &Arc<AtomicBool>) {
    let dir = std::env::var_os("TMPDIR")
        .or_else(|| std::env::var_os("TEMP"))
        .map_or_else(|| std::path::PathBuf::from("/tmp"), std::path::PathBuf::from);
    let path = dir.join("fio-dump-status");
    let asked = Arc::downgrade(asked);
    std::thread::spawn(move || {
        while let Some(flag) = asked.upgrade() {
            if path.symlink_metadata().is_ok() {
                if let Err(e) = std::fs::remove_file(&path) {
                    eprintln!("fio: failed to unlink {}: {e}\nfio: disabling status file updates", path.display());
                    return;
                }
                flag.store(true, Ordering::Relaxed);
            }
            drop(flag);
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    });
}

/// The name of the signal that stopped the run.
fn signal_name() -> &'static str {
    match last_signal().load(Ordering::Relaxed) as i32 {
        SIGTERM => "SIGTERM",
        SIGHUP => "SIGHUP",
        _ => "Ctrl-C",
    }
}

/// After the report is out: exit 130 if a signal stopped the run (at `sim_time_ns` of virtual time).
pub fn check(stop: &AtomicBool, sim_time_ns: u64) -> Result<(), Failure> {
    if stop.load(Ordering::Relaxed) {
        return Err(Failure::new(
            Cause::Interrupted,
            format!(
                "interrupted ({}) at {:.3} ms of virtual time: the report covers the run so far",
                signal_name(),
                sim_time_ns as f64 / 1e6
            ),
        ));
    }
    Ok(())
}

/// A command that is not one run (a sweep): exit 130 if a signal stopped it, saying `what` it left.
pub fn check_stopped(stop: &AtomicBool, what: &str) -> Result<(), Failure> {
    if stop.load(Ordering::Relaxed) {
        return Err(Failure::new(Cause::Interrupted, format!("interrupted ({}): {what}", signal_name())));
    }
    Ok(())
}

/// `check()` unless a signal stopped the run (its I/Os are then still in flight).
pub fn unless_stopped(stop: &AtomicBool, check: impl FnOnce() -> Result<(), Failure>) -> Result<(), Failure> {
    if stop.load(Ordering::Relaxed) {
        return Ok(());
    }
    check()
}
