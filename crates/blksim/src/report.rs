//! Simulation: the run's end. Every CPU's time charged up to now, then what happened
//! gathered into the `RunReport` (jobs, CPU time, interrupts, disks, the
//! interrupt path, locks, DSA clients) and the invariant counters.

use crate::drivers::Device;
use crate::ids::CpuId;
use crate::locking::qspinlock::LockStats;
use crate::stats::Invariants;
use crate::stats::{
    DiskStats, DsaStats, InterruptRow, JobStats, LockReport, MsiCpuStats, PathStats, RunReport, SchedulerReport,
};
use crate::system::Sim;

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

impl Sim {
    /// The report and the invariant counters (the simulation ends here).
    pub(crate) fn report(mut self) -> (RunReport, Invariants) {
        let end = self.q.now_ns();
        for c in crate::ids::cpus(self.cpus.len()) {
            self.cpu_charge(c);
            // Steps cut by the end of the run: what they ran, by their bills.
            let cpu = &mut self.cpus[c];
            for f in cpu.frames.iter_mut() {
                f.bill.settle(0, std::mem::take(&mut f.bill_wall), f.default_stage(), &mut cpu.stage_ns);
            }
        }
        for j in 0..self.jobs.len() {
            self.settle_job_bill(crate::ids::JobId::of(j));
        }
        let jobs = self.job_stats();
        let inv = self.invariants();
        let report = RunReport {
            jobs,
            cpu_time: self.cpus.iter().map(|c| c.time.clone()).collect(),
            cpu_stage_ns: self.cpus.iter().map(|c| c.stage_ns).collect(),
            interrupts: self.interrupt_rows(),
            ipis_per_cpu: self.cpus.iter().map(|c| c.ipis).collect(),
            posted_msi: self.intr.posting,
            msi_per_cpu: self.msi_per_cpu(),
            interrupt_path: self.interrupt_path(end),
            disks: self.disk_reports(end),
            sim_time_ns: end,
            events: self.q.processed,
            seed: self.run.seed,
            sample_interval_ns: self.run.sample_interval_ns,
            trace: self.trace.take(),
            locks: self.lock_reports(),
            schedulers: self.scheduler_reports(),
            dsa: self.dsa_stats(),
            invariants: inv.clone(),
            hotplug: self.cpus.mask.stats.clone(),
            gsim: self.gsim_stats(),
            patches_in_effect: self.patches_in_effect(),
        };
        (report, inv)
    }

    /// fio's `--status-interval` report (`RunOptions::status`), then the next one an interval
    /// on, unless nothing else is left to happen (a stalled run stays a stall). Not an event of
    /// the model: the count of events stays as it was.
    #[cold]
    #[inline(never)]
    pub(crate) fn status_dump(&mut self) {
        self.q.processed -= 1;
        self.status_report();
        if let (Some(ns), true) = (self.run.status.as_ref().and_then(|s| s.interval_ns), self.q.has_entries()) {
            self.q.at(self.q.now_ns() + ns, crate::system::Event::StatusDump);
        }
    }

    /// The report of the run so far to `RunOptions::status`'s sink: that of a copy of the
    /// simulation stopped now, so the run goes on as if none was taken.
    #[cold]
    #[inline(never)]
    pub(crate) fn status_report(&mut self) {
        let Some(status) = self.run.status.clone() else { return };
        let trace = self.trace.take();
        let mut copy = self.clone();
        self.trace = trace;
        copy.run.io_log = None;
        copy.run.status = None;
        copy.end_running_now();
        let (report, _) = copy.report();
        let written = status.sink.lock().map(|mut sink| sink(report)).is_ok();
        if !written {
            self.run.fail(crate::Error::internal("--status-interval: the report's writer failed"));
        }
    }

    /// The `--patch`es whose code this run reached: a scheduler of a device
    /// that did I/O, the DMA premapping, the 2008 completion placement (any
    /// block I/O completed by interrupt).
    fn patches_in_effect(&self) -> Vec<&'static str> {
        let mut p: Vec<&'static str> = self
            .devs
            .iter()
            .filter(|d| d.disk.ios.iter().sum::<u64>() > 0)
            .filter_map(|d| d.elevator.as_ref()?.ops().patch())
            .collect();
        p.extend(self.dma_patch());
        if self.blk.io_cpu_affinity_2008 && self.devs.iter().any(|d| d.disk.ios.iter().sum::<u64>() > 0) {
            p.push("io-cpu-affinity-2008");
        }
        if self.intr.gsim.as_deref().is_some_and(|g| g.cpus.iter().any(|m| m.enqueue > 0)) {
            p.push("gsim");
        }
        // A hybrid ring that polled measured its poll time.
        if self.jobs.iter().any(|j| j.engine.ring.hybrid.as_deref().is_some_and(|h| h.poll_time < u64::MAX)) {
            p.push("hybrid-iopoll");
        }
        p.sort_unstable();
        p.dedup();
        p
    }

    /// Each job's statistics, its histograms moved out (they are most of a job's memory).
    fn job_stats(&mut self) -> Vec<JobStats> {
        self.jobs
            .iter_mut()
            // SQ threads and glibc's AIO helpers are not fio jobs: their time is in the CPUs'
            // (fio's usr/sys are its own thread's, getrusage(RUSAGE_THREAD)).
            .filter(|j| !j.is_engine_thread())
            .map(|j| JobStats {
                error: j.error.map(|e| crate::stats::JobError {
                    errno: e.errno,
                    file: j.cfg.file_names().get(e.file as usize).cloned().unwrap_or_default(),
                    dir: e.dir,
                    offset: e.offset,
                    bytes: e.bytes as u64,
                    min_rate: e.min_rate.iter().flatten().copied().collect(),
                    max_latency: e.max_latency,
                }),
                stuck: j.stuck.clone(),
                hybrid_iopoll: j.engine.ring.hybrid.as_deref().map(|h| crate::stats::HybridIopollStats {
                    sleeps: h.sleeps,
                    sleep_ns: h.sleep_ns,
                    poll_time_ns: (h.poll_time < u64::MAX).then_some(h.poll_time),
                }),
                verify_state: j.verify.as_deref().filter(|v| v.cfg.save_state && j.cfg.rw.writes()).map(|v| {
                    crate::workload::VerifyState {
                        numberio: v.issues[1],
                        inflight: vec![u64::MAX; j.cfg.iodepth as usize],
                        rand: j.rand.offset.words(),
                    }
                }),
                verify_stopped: j.verify.as_deref().and_then(|v| v.stopped.clone()),
                latency_depth: j.lat_target.as_deref().map(|t| t.qd),
                config: j.cfg.clone(),
                dirs: {
                    let mut dirs = std::mem::take(&mut j.dirs);
                    if !j.ts.ramp_done() {
                        // Before the ramp's end (a run stopped in it, a report so far, a job
                        // done within it) fio's counts are the ramp's, with no latencies.
                        for (d, s) in dirs.iter_mut().enumerate() {
                            (s.total_ios, s.io_bytes, s.empty_ios) =
                                (j.ts.ramp_ios[d], j.ts.ramp_bytes[d], j.ts.ramp_empty[d]);
                        }
                    }
                    dirs
                },
                sync: j.fsync.take().map(|f| f.stats).unwrap_or_default(),
                // fio's runtime from td->start: the start, then the ramp's end.
                runtime_ns: match j.ts.ramp_done() {
                    true => j.finish_ns.saturating_sub(j.ts.ramp_end_ns),
                    false => j.finish_ns.saturating_sub(j.start_ns),
                },
                start_ns: j.start_ns,
                end_ns: j.finish_ns,
                epoch_ns: j.ts.epoch_ns,
                usr_ns: j.task.usr_ns,
                sys_ns: j.task.sys_ns,
                ctx: j.task.ctx,
                iodepth_level: j.ts.iodepth_level,
                iodepth_unmarked: j.stale_queued as u64,
                iodepth_submit: j.ts.iodepth_submit,
                iodepth_complete: j.ts.iodepth_complete,
                cpu: j.task.cpu.0,
                breakdown_ns: j.ts.breakdown_ns,
            })
            .collect()
    }

    /// Every disk a job used (fio prints ios=0/0 for one that did none),
    /// with its handler runs.
    fn disk_reports(&self, end: u64) -> Vec<DiskStats> {
        let mut runs = vec![0u64; self.devs.len()];
        for irq in self.intr.irqs.iter() {
            runs[irq.dev.idx()] += irq.count.iter().map(|&(_, n)| n).sum::<u64>();
        }
        // Used by a job: as a block device by a job with `disk_util` on (fio's
        // disk util finds it), or otherwise: only through its NVMe generic char
        // device (fio finds no disk for one), or by jobs with `disk_util=0`
        // (fio's `init_disk_util` registers none of their files).
        let mut used = vec![None; self.devs.len()];
        for j in self.jobs.iter() {
            for d in &j.devs {
                let block = used[d.idx()].unwrap_or(false) || !j.passthru() && j.cfg.disk_util;
                used[d.idx()] = Some(block);
            }
        }
        self.devs
            .iter()
            .enumerate()
            .filter_map(|(i, d)| {
                let ios = d.disk.ios.iter().sum::<u64>();
                let shows = ios > 0 && used[i].is_none() || used[i] == Some(true);
                (ios > 0 || used[i].is_some()).then(|| disk_stats(d, end, runs[i], shows))
            })
            .collect()
    }

    /// `/proc/interrupts`: the device IRQs, then PMN (posted mode), LOC and CAL.
    fn interrupt_rows(&self) -> Vec<InterruptRow> {
        let mut rows: Vec<InterruptRow> = self
            .intr
            .irqs
            .iter()
            .map(|irq| InterruptRow {
                label: irq.number.to_string(),
                per_cpu: {
                    let mut counts: Vec<(u32, u64)> = irq.count.iter().map(|&(c, n)| (c.0, n)).collect();
                    counts.sort_unstable();
                    counts
                },
                chip: self.devs[irq.dev].driver.irq_chip(self.devs[irq.dev].instance, irq.queue),
                name: self.irq_action(irq),
            })
            .collect();
        let system = |label: &str, name: &str, count: fn(&crate::hw::cpu::Cpu) -> u64| InterruptRow {
            label: label.into(),
            per_cpu: self.cpus.iter().map(|c| (c.id.0, count(c))).filter(|&(_, n)| n > 0).collect(),
            chip: String::new(),
            name: name.into(),
        };
        if self.intr.posting {
            rows.push(system("PMN", "Posted MSI notification event", |c| c.pmn));
        }
        rows.push(system("LOC", "Local timer interrupts", |c| c.loc_count));
        rows.push(system("CAL", "Function call interrupts", |c| c.cal_count));
        rows
    }

    /// Per CPU: device MSIs aimed at it, notifications, handler runs.
    fn msi_per_cpu(&self) -> Vec<MsiCpuStats> {
        let mut runs = vec![0u64; self.cpus.len()];
        for (c, n) in self.intr.irqs.iter().flat_map(|i| i.count.iter()) {
            runs[c.idx()] += n;
        }
        self.cpus
            .iter()
            .zip(runs)
            .map(|(c, device_irqs)| MsiCpuStats {
                device_msis: c.device_msis,
                notifications: c.notifications_sent,
                pmn: c.pmn,
                device_irqs,
            })
            .collect()
    }

    /// The root ports, the platform's MSI-X write serialisation (if it has
    /// one), the remapping units, each socket's interrupt delivery: messages and busy share.
    fn interrupt_path(&self, end: u64) -> Vec<PathStats> {
        let ports = self.hw.root_ports.iter().zip(&self.machine.root_ports).map(|(s, p)| PathStats {
            name: p.name.clone(),
            messages: s.msis,
            busy_pct: pct(s.busy_ns, end),
        });
        let iommus = self.hw.iommus.iter().zip(&self.machine.iommus).map(|(s, u)| PathStats {
            name: u.name.clone(),
            messages: s.messages,
            busy_pct: pct(s.busy_ns, end),
        });
        let routers = self.hw.routers.iter().enumerate().map(|(i, s)| PathStats {
            name: format!("interrupt-delivery{i}"),
            messages: s.messages,
            busy_pct: pct(s.busy_ns, end),
        });
        let serialisation = self.hw.msi_serialisation.iter().map(|s| PathStats {
            name: "msi-serialisation".to_string(),
            messages: s.messages,
            busy_pct: pct(s.busy_ns, end),
        });
        ports.chain(serialisation).chain(iommus).chain(routers).collect()
    }

    /// The I/O schedulers' locks, per device that has one; the IOMMU
    /// units' invalidation queue locks that strict unmaps took.
    fn lock_reports(&self) -> Vec<LockReport> {
        let rep = |stats: &LockStats, name: String| LockReport {
            name,
            acquisitions: stats.acquisitions,
            contended: stats.contended,
            wait_ns: stats.wait_ns,
            hold_ns: stats.hold_ns,
        };
        let dd = self.devs.iter().flat_map(|d| {
            let locks = d.elevator.as_ref().map(|e| e.ops().locks()).unwrap_or_default();
            locks.into_iter().map(|(lock, stats)| rep(&stats, format!("{} {lock}", d.name)))
        });
        let qi = self
            .hw
            .iommus
            .iter()
            .zip(&self.machine.iommus)
            .filter(|(u, _)| u.qi.stats.acquisitions > 0)
            .map(|(u, spec)| rep(&u.qi.stats, format!("{} qi->q_lock", spec.name)));
        dd.chain(qi).collect()
    }

    /// The counters of the devices' schedulers that keep some.
    fn scheduler_reports(&self) -> Vec<SchedulerReport> {
        self.devs
            .iter()
            .filter_map(|d| {
                let e = d.elevator.as_ref()?;
                let counters = e.ops().stats();
                (!counters.is_empty()).then(|| SchedulerReport {
                    device: d.name.clone(),
                    scheduler: d.queue_settings.scheduler.to_string(),
                    counters,
                })
            })
            .collect()
    }

    /// What each DSA client got done.
    fn dsa_stats(&self) -> Vec<DsaStats> {
        self.dsa_clients
            .iter()
            .map(|c| DsaStats {
                device: self.devs[c.dev].name.clone(),
                wq: c.wq.0 as u32,
                completed: c.completed,
                bytes: c.bytes_done,
                runtime_ns: c.stop_ns,
            })
            .collect()
    }

    /// The exactly-once counts: I/Os issued and reaped, requests still
    /// allocated, MSIs sent, delivered, merged and still pending.
    fn invariants(&self) -> Invariants {
        Invariants {
            ios_issued: self.jobs.iter().map(|j| j.ios_issued).sum(),
            ios_reaped: self.jobs.iter().map(|j| j.ios_completed(0)).sum(),
            // A request a scheduler still counts as dispatched is live too.
            requests_live: self.reqs.live
                + self.devs.iter().filter_map(|d| d.elevator.as_ref()).map(|e| e.ops().started()).sum::<u64>(),
            msi: self.intr.msi.clone(),
            msi_pending: crate::ids::cpus(self.cpus.len()).map(|c| self.msis_pending_on(c)).sum::<u64>()
                + self.intr.msi.in_flight
                // Held by GSIM for its timer's resend.
                + self.intr.irqs.iter().filter(|i| i.held).count() as u64,
        }
    }

    /// Device MSIs still pending on `cpu` at the end: in its IRR, its PIR,
    /// or harvested by a notification handler and not yet run.
    fn msis_pending_on(&self, cpu: CpuId) -> u64 {
        let c = &self.cpus[cpu];
        let irr = c.irr.iter().filter(|&v| self.intr.vectors.get(cpu, v).is_some()).count() as u64;
        let harvested: u64 = c.frames.iter().map(|f| f.pir.len() - f.replayed.len()).sum();
        irr + self.intr.pi_descs[cpu].pir.len() + harvested
    }
}

/// A device's `/proc/diskstats`-like counters over the run.
fn disk_stats(d: &Device, end: u64, irq_handler_runs: u64, fio_shows: bool) -> DiskStats {
    DiskStats {
        name: d.name.clone(),
        ios: d.disk.ios,
        sectors: d.disk.sectors,
        merges: d.disk.merges,
        discards: d.disk.discards,
        discard_merges: d.disk.discard_merges,
        requests: d.disk.requests,
        ticks_ms: [d.disk.ticks_ns[0] / 1_000_000, d.disk.ticks_ns[1] / 1_000_000],
        in_queue_ms: (d.disk.ticks_ns[0] + d.disk.ticks_ns[1]) / 1_000_000,
        util_pct: if end > 0 { d.busy_ns(end) as f64 * 100.0 / end as f64 } else { 0.0 },
        iops: if end > 0 { d.disk.requests as f64 * 1e9 / end as f64 } else { 0.0 },
        msis: d.msis,
        irq_handler_runs,
        fio_shows,
    }
}
