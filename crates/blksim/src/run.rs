//! Simulation: the run. Build the simulated system from machine + settings + workload +
//! seed, run the event loop until every job has finished (or a stop is asked for), and report.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::drivers::dsa::DsaClient;
use crate::error::Error;
use crate::fio::job::JobState;
use crate::hw::lapic::POSTED_MSI_NOTIFICATION_VECTOR;
use crate::ids::{CpuId, DsaClientId, HctxId};
use crate::machine::Machine;
use crate::sched::cpumask::HotplugOp;
use crate::settings::{Settings, TimedAction, PATCH_REACH};
use crate::sim::Popped;
use crate::stats::Invariants;
use crate::stats::RunReport;
use crate::system::{Event, Sim};
use crate::workload::{DsaClientConfig, JobConfig};

/// Check that `jobs` can run on `machine` with `settings` (devices exist,
/// everything they use is modelled) without simulating anything.
pub fn validate(machine: &Machine, settings: &Settings, jobs: &[JobConfig]) -> Result<(), Error> {
    Sim::build(machine, settings, jobs, 0).map(|_| ())
}

/// How to run beyond the inputs: what to record, and when to stop early.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Record a timeline over [start, end) ns of virtual time.
    pub trace_window_ns: Option<(u64, u64)>,
    /// Actions at points of virtual time, ns.
    pub timed: Vec<(u64, TimedAction)>,
    /// Set from outside (Ctrl-C) to stop the run at the current virtual time:
    /// looked at every 16,384 events (about a millisecond of wall time). The report then covers
    /// the run so far, as fio's does when interrupted: a running job ends
    /// there, a job not started yet has no I/O.
    pub stop: Option<Arc<AtomicBool>>,
    /// Where the run loop writes the current virtual time (ns) as it goes, for
    /// a progress display: written when it looks at `stop`.
    pub progress: Option<Arc<AtomicU64>>,
    /// Where the I/Os of jobs that keep fio logs go as they happen (memory
    /// bounded by the I/Os in flight); `None`: kept in the report's `DirStats::ios`.
    pub io_log: Option<crate::stats::IoLogSink>,
    /// fio's `--status-interval`: the report of the run so far at every multiple of an
    /// interval of virtual time while the run goes on.
    pub status: Option<StatusSink>,
}

/// fio's `--status-interval` (its helper thread's `__show_running_run_stats`): every
/// `interval_ns` of virtual time from the run's start, until the run ends, `sink` gets the
/// report of the run so far: what an interrupted run would report there (a running job ends
/// at that time, one not started has no I/O). It is taken from a copy of the simulation, so
/// the run and its final report are the same as without it.
/// Also (fio's SIGUSR1, `sig_show_status`) a report at the virtual time `asked` is found set,
/// looked at with `RunOptions::stop`.
#[derive(Clone)]
pub struct StatusSink {
    /// The interval, ns of virtual time (more than 0); `None`: only when asked.
    pub interval_ns: Option<u64>,
    /// Set from outside for one report now (cleared when it is taken).
    pub asked: Option<Arc<AtomicBool>>,
    /// Gets each report as it is taken.
    pub sink: Arc<Mutex<dyn FnMut(RunReport) + Send>>,
}

impl std::fmt::Debug for StatusSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StatusSink({:?} ns)", self.interval_ns)
    }
}

/// How often (in events, a power of two) the run loop looks at [`RunOptions::stop`].
const STOP_CHECK_EVENTS: u64 = 1 << 14;

/// Checks (of `STOP_CHECK_EVENTS` events each) in a row without virtual
/// time moving after which the run is a livelock (about 10^7 events).
const LIVELOCK_CHECKS: u32 = 640;

/// Virtual time past the last running job's end after which the run is
/// stuck, ns: an hour (draining thousands of queued I/Os from a disk at a
/// hundred IOPS takes tens of seconds; a runaway step reaches 10^18 ns).
const OVERRUN_NS: u64 = 3_600_000_000_000;

/// The run loop's guard against a livelock (events without virtual time
/// advancing) and a run that goes on past its jobs' ends: both are
/// internal errors (exit 70), never a hang.
#[derive(Default)]
struct Watchdog {
    last_ns: u64,
    still: u32,
}

impl Watchdog {
    fn check(&mut self, sim: &Sim) -> Option<String> {
        let now = sim.q.now_ns();
        if now == self.last_ns && sim.q.processed > 0 {
            self.still += 1;
            if self.still >= LIVELOCK_CHECKS {
                return Some(format!(
                    "internal error: livelock: {} events without virtual time passing {now} ns",
                    self.still as u64 * STOP_CHECK_EVENTS
                ));
            }
        } else {
            self.still = 0;
            self.last_ns = now;
        }
        // A running job has an end; the run may not go far beyond the last.
        let ends = sim
            .jobs
            .iter()
            .filter(|j| !matches!(j.task.state, JobState::NotStarted | JobState::Done))
            .map(|j| j.end_ns);
        match ends.max() {
            Some(end) if end < u64::MAX / 2 && now > end.saturating_add(OVERRUN_NS) => Some(format!(
                "internal error: the run is at {now} ns, more than {} s past its jobs' end ({end} ns)",
                OVERRUN_NS / 1_000_000_000
            )),
            _ => None,
        }
    }
}

/// Run `jobs` on `machine` with `settings` and `seed`.
pub fn run(
    machine: &Machine,
    settings: &Settings,
    jobs: &[JobConfig],
    seed: u64,
) -> Result<(RunReport, Invariants), Error> {
    run_with(machine, settings, jobs, seed, &RunOptions::default())
}

/// `run`, recording what `options` ask for.
pub fn run_with(
    machine: &Machine,
    settings: &Settings,
    jobs: &[JobConfig],
    seed: u64,
    options: &RunOptions,
) -> Result<(RunReport, Invariants), Error> {
    run_workload(machine, settings, &Workload { jobs: jobs.to_vec(), dsa: Vec::new() }, seed, options)
}

/// Everything a run drives: fio jobs, and DSA clients.
#[derive(Clone, Debug, Default)]
pub struct Workload {
    /// fio jobs (each clone of a `numjobs` job is one).
    pub jobs: Vec<JobConfig>,
    /// DSA clients.
    pub dsa: Vec<DsaClientConfig>,
}

/// Run a whole workload.
pub fn run_workload(
    machine: &Machine,
    settings: &Settings,
    workload: &Workload,
    seed: u64,
    options: &RunOptions,
) -> Result<(RunReport, Invariants), Error> {
    run_built(Sim::build(machine, settings, &workload.jobs, seed)?, workload, options)
}

/// fio jobs on a machine, built and checked (`prepare`): what `validate`
/// checks, kept to run without building the machine again.
pub struct Prepared {
    sim: Box<Sim>,
}

/// Build `jobs` on `machine` with `settings` and `seed`: the checks of
/// `validate`, and the simulation ready to run (`Prepared::run`).
pub fn prepare(machine: &Machine, settings: &Settings, jobs: &[JobConfig], seed: u64) -> Result<Prepared, Error> {
    Ok(Prepared { sim: Box::new(Sim::build(machine, settings, jobs, seed)?) })
}

impl Prepared {
    /// Run it, recording what `options` ask for (as `run_with`).
    pub fn run(self, options: &RunOptions) -> Result<(RunReport, Invariants), Error> {
        run_built(*self.sim, &Workload::default(), options)
    }
}

/// Run a built simulation with `workload`'s DSA clients (its jobs are in the build).
fn run_built(mut sim: Sim, workload: &Workload, options: &RunOptions) -> Result<(RunReport, Invariants), Error> {
    for c in &workload.dsa {
        sim.add_dsa_client(c)?;
    }
    for (i, (at, action)) in options.timed.iter().enumerate() {
        sim.add_timed_action(i, *at, action)?;
    }
    for (client, c) in workload.dsa.iter().enumerate() {
        for _ in 0..c.outstanding {
            sim.dsa_submit(DsaClientId::of(client));
        }
    }
    if let Some((start, end)) = options.trace_window_ns {
        let mut t = crate::stats::Trace::new(start, end, sim.cpus.len());
        // Every task the run has: the jobs, then the SQ threads of SQPOLL rings.
        t.job_names = sim.jobs.iter().map(|j| j.cfg.name.clone()).collect();
        t.dev_names = sim.devs.iter().map(|d| d.name.clone()).collect();
        sim.trace = Some(t);
    }
    sim.run.io_log = options.io_log.clone();
    if let Some(status) = &options.status {
        match status.interval_ns {
            Some(0) => return Err(Error::bad_input("--status-interval: the interval must be more than 0")),
            Some(ns) => sim.q.at(ns, Event::StatusDump),
            None => {}
        }
        sim.run.status = Some(status.clone());
    }
    sim.run_loop(options)?;
    Ok(sim.report())
}

/// The `--patch`es `settings` gave that changed nothing in the run of `report`, each with why.
pub fn idle_patches(settings: &Settings, report: &RunReport) -> Vec<String> {
    let why = |name: &str| PATCH_REACH.iter().find(|r| r.0 == name).map_or("", |r| r.1);
    settings
        .given
        .iter()
        .filter_map(|g| g.strip_prefix("patch:"))
        .filter(|p| !report.patches_in_effect.contains(p))
        .map(|p| format!("--patch {p} changed nothing in this run: it needs {}", why(p)))
        .collect()
}

impl Sim {
    /// A DSA client on its device's work queue, with the WQ's IRQ moved
    /// where the client asks.
    fn add_dsa_client(&mut self, c: &DsaClientConfig) -> Result<(), Error> {
        let dev = self.devs.ids().find(|&d| self.devs[d].name == c.device && self.devs[d].driver.is_dsa()).ok_or_else(
            || {
                Error::bad_input(format!(
                    "DSA device '{}': machine '{}' has none by that name",
                    c.device, self.machine.name
                ))
            },
        )?;
        let wqs = self.devs[dev].queues.len() as u32;
        if c.wq >= wqs || c.outstanding == 0 || c.bytes == 0 {
            return Err(Error::bad_input(format!(
                "DSA client on {}: wq must be < {wqs}, outstanding and bytes > 0",
                c.device
            )));
        }
        let wq = HctxId(c.wq as u16);
        if let Some(cpu) = c.irq_cpu {
            let irq = self.devs[dev].queues[wq].irq.expect("a DSA work queue has an IRQ");
            self.irq_set_affinity(irq, &[cpu])
                .map_err(|e| Error::bad_input(format!("DSA client on {}: {e}", c.device)))?;
        }
        let client = DsaClient { dev, wq, bytes: c.bytes, stop_ns: c.runtime_ns, ..Default::default() };
        self.dsa_clients.push(client);
        Ok(())
    }

    /// Timed action `i` (a write at `at` ns of virtual time), checked now.
    fn add_timed_action(&mut self, i: usize, at: u64, action: &TimedAction) -> Result<(), Error> {
        if let TimedAction::CpuOffline { cpu } | TimedAction::CpuOnline { cpu } = action {
            if self.intr.gsim.is_some() {
                return Err(Error::not_modelled(
                    "--patch gsim with CPU hotplug: GSIM's hotplug callbacks (the moderated list flushed, the timer cancelled) are not modelled",
                ));
            }
            if *cpu as usize >= self.cpus.len() {
                return Err(Error::bad_input(format!(
                    "/sys/devices/system/cpu/cpu{cpu}/online: CPU {cpu} does not exist (machine has {} CPUs)",
                    self.cpus.len()
                )));
            }
        }
        if matches!(action, TimedAction::GsimKnob { .. } | TimedAction::GsimIrq { .. }) && self.intr.gsim.is_none() {
            return Err(Error::bad_input("--at /proc/irq/.../soft_moderation: the knobs exist only with --patch gsim"));
        }
        self.run.timed.push(action.clone());
        self.q.at(at, Event::Timed { index: i as u32 });
        Ok(())
    }

    /// Every phase ran and every DSA client stopped.
    pub(crate) fn all_done(&self) -> bool {
        self.run.phase >= self.run.phases && self.dsa_done()
    }

    /// The event loop, until everything is done or `stop` is set. No event
    /// left before that is a stall: an internal error.
    pub(crate) fn run_loop(&mut self, options: &RunOptions) -> Result<(), Error> {
        self.start_phase();
        let mut watch = Watchdog::default();
        while !self.all_done() {
            if self.q.processed.is_multiple_of(STOP_CHECK_EVENTS) {
                if self.stop_asked(options) {
                    break;
                }
                if let Some(why) = watch.check(self) {
                    return Err(Error::internal(format!("{why}\n{}", self.stall_report())));
                }
            }
            let Some(popped) = self.q.pop() else {
                return Err(Error::internal(self.stall_report()));
            };
            self.handle(popped);
            if self.run.failure.is_some() {
                let mut e = self.run.failure.take().expect("a failure");
                if e.kind == crate::error::ErrorKind::Internal {
                    e.message = format!("{}\n{}", e.message, self.stall_report());
                }
                return Err(e);
            }
        }
        Ok(())
    }

    /// Every 16,384 events: the virtual time written to `progress`, and
    /// whether `stop` is set; if so the running jobs and the DSA clients end
    /// now. Out of line, so the loop's hot path stays as it was.
    #[cold]
    #[inline(never)]
    fn stop_asked(&mut self, options: &RunOptions) -> bool {
        if let Some(progress) = &options.progress {
            progress.store(self.q.now_ns(), Ordering::Relaxed);
        }
        if options.status.as_ref().and_then(|s| s.asked.as_ref()).is_some_and(|a| a.swap(false, Ordering::Relaxed)) {
            self.status_report();
        }
        if !options.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed)) {
            return false;
        }
        self.end_running_now();
        true
    }

    /// The run stops now: the running jobs end here and the DSA clients stop.
    pub(crate) fn end_running_now(&mut self) {
        let now = self.q.now_ns();
        for j in &mut self.jobs {
            if !matches!(j.task.state, JobState::NotStarted | JobState::Done) {
                j.finish_ns = now;
            }
        }
        for c in &mut self.dsa_clients {
            c.stop_ns = c.stop_ns.min(now);
        }
    }

    /// What is stuck when the simulation stalls: jobs not done, CPUs with
    /// work pending, requests waiting for tags.
    pub(crate) fn stall_report(&self) -> String {
        let stuck: Vec<String> = self
            .jobs
            .iter()
            .filter(|j| j.task.state != JobState::Done && j.cfg.phase == self.run.phase)
            .map(|j| {
                format!(
                    "{}#{} in {:?} (inflight {}, ready {}, task_work {}, waits for {}, tag waits {})",
                    j.cfg.name,
                    j.index,
                    j.task.state,
                    j.inflight,
                    j.engine.ready.len(),
                    j.engine.ring.tw_pending.len(),
                    j.task.wait_for,
                    j.task.tag_waits
                )
            })
            .collect();
        let cpus: Vec<String> = self
            .cpus
            .iter()
            .filter(|c| !c.done_list.is_empty() || c.ksoftirqd_pending || !c.irr.is_empty() || !c.frames.is_empty())
            .map(|c| {
                let irr: Vec<String> = c.irr.iter().map(|v| format!("{v:#x}")).collect();
                format!(
                    "cpu{}: done_list {} ksoftirqd {} irr [{}] frames {}",
                    c.id,
                    c.done_list.len(),
                    c.ksoftirqd_pending,
                    irr.join(", "),
                    c.frames.len()
                )
            })
            .collect();
        let waits: usize = self.devs.iter().flat_map(|d| d.queues.iter()).map(|q| q.tag_waiters.len()).sum();
        let scheds: Vec<String> = self
            .devs
            .iter()
            .filter_map(|d| d.elevator.as_ref().map(|e| (d, e)))
            .filter(|(_, e)| e.has_pending() || e.ops().queued() > 0)
            .map(|(d, e)| {
                format!(
                    "{}: {}, {} on hctx->dispatch, {} driver tags free, run_work {:?}",
                    d.name,
                    e.ops().describe(),
                    e.dispatch.len(),
                    e.driver_tags_free,
                    e.run_work
                )
            })
            .collect();
        format!(
            "internal error: the simulation stalled ({}; {}; {waits} requests waiting for tags{}{})",
            stuck.join(", "),
            cpus.join("; "),
            if scheds.is_empty() { "" } else { "; " },
            scheds.join("; ")
        )
    }

    /// Run every event due up to `until_ns` (tests drive the model this way).
    #[cfg(test)]
    pub(crate) fn run_until(&mut self, until_ns: u64) {
        while self.q.peek_time_ns().is_some_and(|t| t <= until_ns) {
            let popped = self.q.pop().unwrap();
            self.handle(popped);
        }
    }

    #[inline(always)]
    pub(crate) fn handle(&mut self, popped: Popped<Event>) {
        let ev = match popped {
            // A CPU's timer: the step running on it reached its end.
            Popped::Timer(cpu) => return self.cpu_step_done(CpuId(cpu)),
            Popped::Event(ev) => ev,
        };
        match ev {
            Event::CqeSent { dev, req } => self.device_completed(dev, req),
            Event::CqeAtPort { dev, hctx, req } => self.cqe_at_port(dev, hctx, req),
            Event::RootPortFree { port } => self.root_port_free(port as usize),
            Event::InterruptArrived { cpu, vector } => {
                if vector < POSTED_MSI_NOTIFICATION_VECTOR {
                    self.intr.msi.in_flight -= 1;
                }
                self.interrupt_arrived(cpu, vector)
            }
            Event::TaskWoken { job } => self.task_woken(job),
            Event::MsiPosted { cpu, vector, port } => {
                self.intr.msi.in_flight -= 1;
                self.msi_posted(cpu, vector, port as usize)
            }
            Event::HrtimerExpired { cpu, req } => self.hrtimer_expired(cpu, req),
            Event::JobStarted { job } => {
                self.flow_join(job);
                self.offload_start(job);
                self.verify_async_start(job);
                self.job_start(job)
            }
            Event::HotplugStep { cpu } => self.cpu_down_step(cpu),
            Event::VectorCleanup { cpu, vector, irq } => self.vector_cleanup(cpu, vector, irq),
            Event::NvmeAggregationTimer { dev, hctx, gen } => self.driver_aggregation_timer(dev, hctx, gen),
            Event::RunWorkTimer { dev, gen } => self.run_work_timer(dev, gen),
            Event::ElevatorTimer { dev, gen } => self.elevator_timer(dev, gen),
            Event::KworkerWoken { cpu } => self.kworker_woken(cpu),
            Event::JobStuck { job } => self.tio_stuck_end(job),
            Event::SleepTimerExpired { job } => self.sleep_timer_expired(job),
            Event::ModerationTimer { cpu } => self.gsim_timer_expired(cpu),
            Event::StatusDump => self.status_dump(),
            Event::Timed { index } => {
                if let Err(e) = self.timed_action(index as usize) {
                    self.run.fail(Error::bad_input(e));
                }
            }
        }
    }

    /// Apply a timed action.
    pub(crate) fn timed_action(&mut self, index: usize) -> Result<(), String> {
        match self.run.timed[index].clone() {
            TimedAction::IrqAffinity { irq_number, cpus } => {
                let irq = self.irq_numbered(irq_number).ok_or_else(|| self.no_irq(irq_number))?;
                self.irq_move(irq, &cpus)
            }
            TimedAction::CpuOffline { cpu } => self.hotplug_write(HotplugOp::Down(CpuId(cpu))),
            TimedAction::CpuOnline { cpu } => self.hotplug_write(HotplugOp::Up(CpuId(cpu))),
            TimedAction::GsimKnob { knob, value } => self.gsim_write(&knob, &value),
            TimedAction::GsimIrq { irq_number, on } => self.gsim_irq_mode(irq_number, on),
        }
    }
}
