//! The run's end: every CPU's time charged up to now, then what happened
//! gathered into the `RunReport` (jobs, CPU time, interrupts, disks, the
//! interrupt path, locks, DSA clients) and the invariant counters.

use crate::stats::{CpuTime, DiskStats, InterruptRow, JobStats, LockReport, MsiCpuStats, PathStats, RunReport};
use crate::system::{Invariants, Sim};

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

impl Sim {
    pub(crate) fn report(mut self) -> (RunReport, Invariants) {
        let end = self.q.now_ns();
        for c in 0..self.cpus.len() as u32 {
            self.cpu_charge(c);
        }
        let ncpus = self.cpus.len();
        let jobs = self
            .jobs
            .iter_mut()
            .map(|j| JobStats {
                config: j.cfg.clone(),
                // Moved, not cloned: the histograms are most of a job's memory.
                dirs: std::mem::take(&mut j.dirs),
                runtime_ns: j.finish_ns.saturating_sub(j.ramp_end_ns),
                start_ns: j.start_ns,
                end_ns: j.finish_ns,
                usr_ns: j.usr_ns,
                sys_ns: j.sys_ns,
                ctx: j.ctx,
                iodepth_level: j.iodepth_level,
                iodepth_submit: j.iodepth_submit,
                iodepth_complete: j.iodepth_complete,
                cpu: j.cpu,
                breakdown_ns: j.breakdown_ns,
            })
            .collect();
        let mut interrupts: Vec<InterruptRow> = self
            .irqs
            .iter()
            .map(|irq| {
                let dev = &self.devs[irq.dev as usize];
                InterruptRow {
                    label: irq.number.to_string(),
                    per_cpu: irq.count.clone(),
                    chip: format!("IR-PCI-MSIX-0000:{:02x}:00.0 {}-edge", 0x10 + dev.instance, irq.queue + 1),
                    name: irq.name.clone(),
                }
            })
            .collect();
        if self.posting {
            interrupts.push(InterruptRow {
                label: "PMN".into(),
                per_cpu: self.cpus.iter().map(|c| c.pmn).collect(),
                chip: String::new(),
                name: "Posted MSI notification event".into(),
            });
        }
        interrupts.push(InterruptRow {
            label: "LOC".into(),
            per_cpu: self.cpus.iter().map(|c| c.loc_count).collect(),
            chip: String::new(),
            name: "Local timer interrupts".into(),
        });
        interrupts.push(InterruptRow {
            label: "CAL".into(),
            per_cpu: self.cpus.iter().map(|c| c.cal_count).collect(),
            chip: String::new(),
            name: "Function call interrupts".into(),
        });
        let disks = self
            .devs
            .iter()
            .filter(|d| d.disk.ios.iter().sum::<u64>() > 0)
            .map(|d| DiskStats {
                name: d.name.clone(),
                ios: d.disk.ios,
                sectors: d.disk.sectors,
                merges: d.disk.merges,
                ticks_ms: [d.disk.ticks_ns[0] / 1_000_000, d.disk.ticks_ns[1] / 1_000_000],
                in_queue_ms: (d.disk.ticks_ns[0] + d.disk.ticks_ns[1]) / 1_000_000,
                util_pct: if end > 0 { d.busy_ns(end) as f64 * 100.0 / end as f64 } else { 0.0 },
                iops: if end > 0 { (d.disk.ios[0] + d.disk.ios[1]) as f64 * 1e9 / end as f64 } else { 0.0 },
            })
            .collect();
        // Device vectors still pending at the end: in an IRR, a PIR, or a frame's harvest.
        let msi_pending: u64 = self
            .cpus
            .iter()
            .map(|c| {
                let irr = (0..256u32)
                    .filter(|v| {
                        c.irr[(v / 64) as usize] >> (v % 64) & 1 == 1
                            && self.vector_irq[c.id as usize * 256 + *v as usize] != u32::MAX
                    })
                    .count() as u64;
                irr + crate::irq::posted_msi::pir_count(&self.pi_descs[c.id as usize].pir)
                    + c.frames
                        .iter()
                        .map(|f| {
                            crate::irq::posted_msi::pir_count(&f.pir) - crate::irq::posted_msi::pir_count(&f.replayed)
                        })
                        .sum::<u64>()
            })
            .sum();
        let msi_per_cpu = self
            .cpus
            .iter()
            .map(|c| MsiCpuStats {
                device_msis: c.device_msis,
                notifications: c.notifications_sent,
                pmn: c.pmn,
                device_irqs: self.irqs.iter().map(|i| i.count[c.id as usize]).sum(),
            })
            .collect();
        let inv = Invariants {
            ios_issued: self.jobs.iter().map(|j| j.ios_issued).sum(),
            ios_reaped: self.jobs.iter().map(|j| j.ios_issued - j.inflight as u64 - j.queued.len() as u64).sum(),
            requests_live: self.reqs.live,
            msi: self.msi.clone(),
            msi_pending: msi_pending + self.msi.in_flight,
        };
        let report = RunReport {
            jobs,
            cpu_time: self.cpus.iter().map(|c| c.time.clone()).collect::<Vec<CpuTime>>(),
            interrupts,
            ipis_per_cpu: self.cpus.iter().map(|c| c.ipis).collect(),
            posted_msi: self.posting,
            msi_per_cpu,
            interrupt_path: self
                .root_ports
                .iter()
                .zip(&self.machine.root_ports)
                .map(|(s, p)| PathStats { name: p.name.clone(), messages: s.msis, busy_pct: pct(s.busy_ns, end) })
                .chain(self.iommus.iter().enumerate().map(|(i, s)| PathStats {
                    name: format!("iommu{i}"),
                    messages: s.messages,
                    busy_pct: pct(s.busy_ns, end),
                }))
                .collect(),
            disks,
            sim_time_ns: end,
            events: self.q.processed,
            seed: self.seed,
            sample_interval_ns: self.sample_interval_ns,
            trace: self.trace.take(),
            locks: self
                .devs
                .iter()
                .filter_map(|d| d.elevator.as_ref().map(|dd| (d, dd)))
                .flat_map(|(d, dd)| {
                    let rep = |lock: &crate::block::lock::SpinLock, what: &str| LockReport {
                        name: format!("{} {what}", d.name),
                        acquisitions: lock.stats.acquisitions,
                        contended: lock.stats.contended,
                        wait_ns: lock.stats.wait_ns,
                        hold_ns: lock.stats.hold_ns,
                    };
                    let mut v = vec![rep(&dd.lock, "dd->lock")];
                    if self.patch_mq_deadline_2024 {
                        v.push(rep(&dd.insert_lock, "dd->insert_lock"));
                    }
                    v
                })
                .collect(),
            dsa: self
                .dsa_clients
                .iter()
                .map(|c| crate::stats::DsaStats {
                    device: self.devs[c.dev as usize].name.clone(),
                    wq: c.wq as u32,
                    completed: c.completed,
                    bytes: c.bytes_done,
                    runtime_ns: c.stop_ns,
                })
                .collect(),
        };
        let _ = ncpus;
        (report, inv)
    }
}
