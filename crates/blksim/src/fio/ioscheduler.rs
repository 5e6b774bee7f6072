//! fio: `switch_ioscheduler` (`backend.c`): a job with `ioscheduler` writes
//! the name to `queue/scheduler` of each of its block devices as its
//! thread sets up (`thread_main`, before its files are set up), then reads
//! the file back and fails the job unless it shows `[NAME]`. The kernel's
//! `elevator_change` takes `none`, a scheduler's name or its alias (a write
//! of the scheduler in use changes nothing: its `iosched/` attributes stay;
//! a switch starts the new one from its defaults). fio sets up the jobs of
//! a stonewall group one after another in job order (`run_threads` waits
//! for each thread's start-up), before any of them does I/O: the last
//! write to a device is what the group's I/O meets. The null engine is
//! diskless (`FIO_DISKLESSIO`) and an NVMe generic char device is no block
//! device: no switch.
//!
//! The model keeps one scheduler per device for the run, so the writes are
//! applied to the settings before the machine is built: a switch that would
//! change the scheduler under I/O already done on the device (an earlier
//! stonewall group's, or a job started late by `startdelay` in a group
//! already running) is refused as not modelled.

use std::borrow::Cow;

use crate::block::elevator::{scheduler_names, scheduler_write, SchedulerWrite};
use crate::error::Error;
use crate::fio::job_check::{bad_input, not_modelled};
use crate::settings::Settings;
use crate::workload::{IoEngine, JobConfig};

/// `settings` with the jobs' `ioscheduler` writes applied, as fio makes them;
/// borrowed as it is when no job has one. `devices`: the machine's block devices.
pub(crate) fn switched<'a>(
    settings: &'a Settings,
    jobs: &[JobConfig],
    devices: &[String],
) -> Result<Cow<'a, Settings>, Error> {
    if jobs.iter().all(|c| c.ioscheduler.is_none()) {
        return Ok(Cow::Borrowed(settings));
    }
    let mut out = settings.clone();
    // Jobs set up together: a group's jobs of one start time (its `startdelay`), in job order.
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&i| (jobs[i].phase, jobs[i].startdelay_ns, i));
    // Devices some job set up before this batch did I/O on (it ran, or runs now).
    let mut used: Vec<&str> = Vec::new();
    let mut batch = 0;
    for (k, &i) in order.iter().enumerate() {
        let cfg = &jobs[i];
        let first = &jobs[order[batch]];
        if (first.phase, first.startdelay_ns) != (cfg.phase, cfg.startdelay_ns) {
            used.extend(order[batch..k].iter().flat_map(|&j| block_devices(&jobs[j], devices)));
            batch = k;
        }
        let Some(name) = cfg.ioscheduler.as_deref() else { continue };
        let name = name.trim();
        for dev in block_devices(cfg, devices) {
            let to = scheduler(i, name)?;
            if name != to {
                // The kernel takes the alias (and switches, or has it already); fio's read-back
                // looks for `[NAME]`.
                return Err(bad_input(
                    i,
                    format!(
                        "ioscheduler={name}: the kernel takes it as {to} (its alias), and fio's read-back of \
                         queue/scheduler shows [{to}], not [{name}]: fio fails the job (unable to set io \
                         scheduler to {name}, EINVAL); write ioscheduler={to}"
                    ),
                ));
            }
            let now = out.queue(dev).scheduler;
            if now == to {
                continue;
            }
            if used.contains(&dev) {
                return Err(not_modelled(
                    i,
                    format!(
                        "ioscheduler={name}: switches /dev/{dev} from {now} to {to} after I/O already ran on it \
                         (an earlier stonewall group's, or this group's before a startdelay ended): \
                         blksim keeps one scheduler per device for the run"
                    ),
                ));
            }
            out.apply_write(&format!("/sys/block/{dev}/queue/scheduler={to}"), devices)?;
        }
    }
    Ok(Cow::Owned(out))
}

/// The scheduler the kernel switches to for `name`, or why job `i` fails.
fn scheduler(i: usize, name: &str) -> Result<&'static str, Error> {
    match scheduler_write(name) {
        SchedulerWrite::Known(to) => Ok(to),
        SchedulerWrite::NotModelled => Err(not_modelled(
            i,
            format!("ioscheduler={name}: the {name} scheduler is not modelled yet (only none, {})", scheduler_names()),
        )),
        SchedulerWrite::Unknown => Err(bad_input(
            i,
            format!(
                "ioscheduler={name}: the kernel has no scheduler '{name}' (the write fails with EINVAL and fio \
                 fails the job: unable to set io scheduler); expected none, {}",
                scheduler_names()
            ),
        )),
    }
}

/// The block devices of `cfg` whose scheduler fio writes: its files that are
/// the machine's block devices (not the null engine's, not a generic char device).
fn block_devices<'d>(cfg: &JobConfig, devices: &'d [String]) -> Vec<&'d str> {
    let mut v: Vec<&'d str> = Vec::new();
    if matches!(cfg.ioengine, IoEngine::Null) {
        return v;
    }
    for f in &cfg.filenames {
        let name = f.strip_prefix("/dev/").unwrap_or(f);
        if let Some(d) = devices.iter().find(|d| *d == name) {
            if !v.contains(&d.as_str()) {
                v.push(d);
            }
        }
    }
    v
}
