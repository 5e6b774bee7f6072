//! After every simulation the CLI checks the model's invariants, as the
//! model's own scenario tests do: a run that breaks one is blksim's failure
//! (exit 70), never a report to trust. (Not after Ctrl-C: I/Os are then
//! still in flight.)

use blksim::stats::RunReport;
use blksim::Invariants;

use crate::failure::{Cause, Failure};

/// Every issued I/O reaped once and no request left; every MSI delivered, merged or pending; each CPU's
/// time adding up to the simulated time, and its busy time by stage to its busy time; bytes = I/Os x block
/// size per job and direction.
pub fn check(report: &RunReport, inv: &Invariants) -> Result<(), Failure> {
    let mut broken = Vec::new();
    if inv.ios_issued != inv.ios_reaped || inv.requests_live != 0 {
        broken.push(format!(
            "{} I/Os issued, {} reaped, {} requests left allocated or counted in flight by a scheduler",
            inv.ios_issued, inv.ios_reaped, inv.requests_live
        ));
    }
    let m = &inv.msi;
    if m.sent != m.delivered + m.merged + inv.msi_pending {
        broken.push(format!(
            "{} MSIs sent, {} delivered + {} merged + {} pending",
            m.sent, m.delivered, m.merged, inv.msi_pending
        ));
    }
    for (cpu, t) in report.cpu_time.iter().enumerate() {
        if t.total_ns() != report.sim_time_ns {
            broken.push(format!("CPU {cpu}'s time adds up to {} ns of {} ns", t.total_ns(), report.sim_time_ns));
        }
        // Its busy time by stage of the I/O path adds up to its busy time by context.
        let busy = t.user_ns + t.sys_ns + t.hardirq_ns + t.softirq_ns;
        let staged: u64 = report.cpu_stage_ns.get(cpu).map_or(busy, |s| s.iter().sum());
        if staged != busy {
            broken.push(format!("CPU {cpu}'s busy time by stage adds up to {staged} ns of {busy} ns"));
        }
    }
    for j in &report.jobs {
        for (d, s) in j.dirs.iter().enumerate() {
            // With a bssplit, every I/O is one of the split's sizes.
            // (A failed I/O moved no bytes, nor a trim io_uring's ring refused, nor
            // one a replay left in flight when its log ran out.)
            let (min, max) = j.config.io_size_range(d);
            let moved = s.total_ios - s.failed_ios - s.empty_ios - s.abandoned_ios;
            if s.io_bytes < moved * min || s.io_bytes > moved * max {
                broken.push(format!(
                    "job '{}': {} bytes for {moved} I/Os of {min}-{max} bytes",
                    j.config.name, s.io_bytes
                ));
            }
        }
    }
    if broken.is_empty() {
        return Ok(());
    }
    Err(Failure::new(
        Cause::Internal,
        format!("internal error: the simulation broke an invariant (a bug; please report it): {}", broken.join("; ")),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use blksim::workload::{IoEngine, JobConfig};

    #[test]
    fn a_run_that_breaks_an_invariant_is_an_internal_failure() {
        let machine = blksim::machine::builtin("spr-gen5").unwrap();
        let mut job = JobConfig::new("a");
        job.ioengine = IoEngine::Null;
        job.size = Some(1 << 20);
        let (report, inv) = blksim::run(&machine, &Default::default(), &[job], 1).unwrap();
        check(&report, &inv).unwrap();
        let mut lost = inv.clone();
        lost.ios_reaped -= 1;
        let e = check(&report, &lost).unwrap_err();
        assert_eq!(e.status(), 70);
        assert!(e.message.contains("issued") && e.message.contains("invariant"), "{}", e.message);
        let mut slow = report.clone();
        slow.cpu_time[0].idle_ns += 1;
        assert!(check(&slow, &inv).unwrap_err().message.contains("CPU 0's time adds up"));
        let mut unstaged = report.clone();
        unstaged.cpu_stage_ns[0][0] += 1;
        assert!(check(&unstaged, &inv).unwrap_err().message.contains("by stage adds up"));
    }
}
