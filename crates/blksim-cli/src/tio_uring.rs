//! `blksim t-io_uring [t/io_uring options] -- DEVICE...`: fio's t/io_uring
//! benchmark on the simulated machine, answering in its output format
//! (one rate line for the whole run instead of one per second).

use blksim::stats::RunReport;
use blksim::workload::{IoEngine, JobConfig};
use blksim_lab::frontend::t_io_uring_with_notes;

use crate::args::TIoUringArgs;
use crate::commands::DEFAULT_MACHINE;
use crate::failure::Failure;
use crate::interrupt;
use crate::out;
use crate::progress::{total_virtual_ns, Progress};

/// t/io_uring's IOPS: `%.2fM` above 10^6, `%.2fK` above 10^5, else an integer.
pub fn fmt_iops(iops: f64) -> String {
    if iops > 1e6 {
        format!("{:.2}M", iops / 1e6)
    } else if iops > 1e5 {
        format!("{:.2}K", iops / 1e3)
    } else {
        format!("{}", iops as u64)
    }
}

/// t/io_uring's bandwidth: integer MiB/s, above 2000 as GiB/s from MiB / 1000 (its quirk).
pub fn fmt_bw(iops: f64, bs: u64) -> String {
    let mib = (iops / ((1u64 << 20) as f64 / bs as f64)) as u64;
    if mib > 2000 {
        format!("{:.2}GiB/s", mib as f64 / 1000.0)
    } else {
        format!("{mib}MiB/s")
    }
}

/// `blksim t-io_uring`: load the machine, build the settings and the workload, simulate, print t/io_uring's lines.
pub fn t_io_uring_command(args: &TIoUringArgs) -> Result<(), Failure> {
    let (machine, settings) = args.knobs.with_patches(DEFAULT_MACHINE, &args.patches)?;
    let (workload, notes) = t_io_uring_with_notes(&args.front_end_args())?;
    for n in notes {
        eprintln!("blksim: note: {n}");
    }
    let budget = crate::budget::check(&machine, &workload, &args.budget)?;
    crate::commands::status_interval_note(&args.progress);
    let signals = interrupt::stop_on_signals();
    let watch = crate::budget::Watch::start(&signals, budget);
    let progress = Progress::start(&args.progress, total_virtual_ns(&workload.jobs))?;
    let options = blksim::RunOptions {
        stop: Some(watch.stop.clone()),
        progress: Some(progress.virtual_ns.clone()),
        ..Default::default()
    };
    let result = blksim::run_workload(&machine, &settings, &workload, args.knobs.seed, &options);
    progress.finish();
    let (report, inv) = result.map_err(|e| match e.job {
        Some(j) => e.context(format!("t/io_uring submitter {j}")),
        None => e,
    })?;
    interrupt::unless_stopped(&watch.stop, || crate::invariants::check(&report, &inv))?;
    for note in blksim::idle_patches(&settings, &report) {
        eprintln!("blksim: warning: {note}");
    }
    for (i, j) in report.jobs.iter().enumerate() {
        if let Some(why) = &j.stuck {
            eprintln!("blksim: warning: submitter {i}: {why}");
        }
    }
    let mut text = write_report(&report, watch.stopped());
    if args.breakdown {
        text += &blksim_fio::output::write_stages(&report);
    }
    out::print(&text)?;
    watch.check(report.sim_time_ns)?;
    interrupt::check(&signals, report.sim_time_ns)
}

/// t/io_uring's lines for a finished run (`interrupted`: ended by Ctrl-C).
pub fn write_report(report: &RunReport, interrupted: bool) -> String {
    let mut out = String::new();
    let total_iops = total_iops(report);
    let mut bs = 4096;
    for (i, j) in report.jobs.iter().enumerate() {
        bs = j.config.bs[0];
        out += &submitter_lines(i, &j.config);
    }
    // reap_events_uring's lines for a CQE it did not expect; the thread
    // ends and, with it, t/io_uring's main loop before it prints a rate.
    let mut failed = false;
    for j in &report.jobs {
        if let Some(e) = &j.error {
            if matches!(j.config.ioengine, IoEngine::Pvsync2 { .. }) {
                // submitter_sync_fn: perror("preadv2").
                out += &format!("preadv2: {}\n", blksim_fio::output::strerror(-e.errno));
                failed = true;
                continue;
            }
            out += &format!("io: unexpected ret={}\n", e.errno);
            if e.errno == -95 && matches!(&j.config.ioengine, IoEngine::IoUring(o) | IoEngine::IoUringCmd(o) if o.hipri)
            {
                out += "Your filesystem/driver/kernel doesn't support polled IO\n";
            }
            failed = true;
        }
    }
    if failed {
        return out;
    }
    out += &rate_line(report, total_iops, bs);
    out += if interrupted { "Exiting on signal\n" } else { "Exiting on timeout\n" };
    out += &format!("Maximum IOPS={}\n", fmt_iops(total_iops));
    out
}

/// The lines t/io_uring prints as submitter `i` starts (the settings and
/// the engine once, after the first submitter's line).
/// The submitters' IOPS summed, as t/io_uring's `Maximum IOPS` line counts them.
pub fn total_iops(report: &RunReport) -> f64 {
    report.jobs.iter().map(|j| j.dirs[0].total_ios as f64 / (j.runtime_ns.max(1) as f64 / 1e9)).sum()
}

fn submitter_lines(i: usize, c: &JobConfig) -> String {
    let mut out = format!(
        "submitter={i}, tid={}, file={}, nfiles={}, node=-1\n",
        1001 + i,
        c.filenames.last().cloned().unwrap_or_default(),
        c.filenames.len()
    );
    if i > 0 {
        return out;
    }
    let (polled, engine, o) = match &c.ioengine {
        IoEngine::IoUring(o) | IoEngine::IoUringCmd(o) => {
            // The kernel rounds both rings up to a power of two.
            let n = c.iodepth.next_power_of_two();
            (o.hipri, format!("Engine=io_uring, sq_ring={n}, cq_ring={n}"), o.clone())
        }
        IoEngine::Pvsync2 { hipri } => (*hipri, "Engine=preadv2".to_string(), Default::default()),
        _ => (false, String::new(), Default::default()),
    };
    out += &format!(
        "polled={}, fixedbufs={}, register_files={}, buffered=0, QD={}\n",
        polled as u8, o.fixedbufs as u8, o.registerfiles as u8, c.iodepth
    );
    out += &engine;
    out += "\n";
    out
}

/// The rate line: IOPS, bandwidth of `bs`-byte I/Os, I/Os per submit and reap call.
fn rate_line(report: &RunReport, total_iops: f64, bs: u64) -> String {
    let ios: u64 = report.jobs.iter().map(|j| j.dirs[0].total_ios).sum();
    let submits: u64 = report.jobs.iter().flat_map(|j| j.iodepth_submit.iter()).sum();
    let reaps: u64 = report.jobs.iter().flat_map(|j| j.iodepth_complete.iter()).sum();
    let per = |n: u64| ios.checked_div(n).unwrap_or(0);
    format!("IOPS={}, BW={}, IOS/call={}/{}\n", fmt_iops(total_iops), fmt_bw(total_iops, bs), per(submits), per(reaps))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_print_as_t_io_uring_prints_them() {
        assert_eq!(fmt_iops(5_020_000.0), "5.02M");
        assert_eq!(fmt_iops(250_000.0), "250.00K");
        assert_eq!(fmt_iops(99_999.0), "99999");
        // 5.02 M x 512 B = 2451 MiB/s, printed as 2.45GiB/s (MiB / 1000).
        assert_eq!(fmt_bw(5_020_000.0, 512), "2.45GiB/s");
        assert_eq!(fmt_bw(100_000.0, 4096), "390MiB/s");
    }
}
