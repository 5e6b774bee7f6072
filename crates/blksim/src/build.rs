//! Kernel path: boot and probe. The machine's CPUs, root ports and
//! remapping units; each device probed by its driver (queues, CPU maps,
//! IRQs with their vectors, the I/O scheduler); IRQ affinity writes; each
//! fio job's task placed on a CPU of its `cpus_allowed`.

use crate::block::elevator::{elevator_type, Elevator, ElevatorInit};
use crate::block::{BlockConfig, RequestPool};
use crate::drivers::{IrqRequest, ProbeCtx, Probed};
use crate::error::Error;
use crate::fio::job::Job;
use crate::hw::cpu::{Cpu, Cpus};
use crate::hw::delivery::InterruptRouter;
use crate::hw::iommu::RemapUnit;
use crate::hw::pcie::Link;
use crate::hw::root_port::RootPortState;
use crate::hw::{DmaMode, Platform};
use crate::ids::{CpuId, DevId, HctxId, IdVec, JobId};
use crate::irq::moderation::Gsim;
use crate::irq::vector::VectorTable;
use crate::irq::Interrupts;
use crate::machine::{DeviceSpec, Machine};
use crate::settings::Settings;
use crate::sim::{EventQueue, Rng};
use crate::stats::MsiCounters;
use crate::system::{RunState, Sim};
use crate::workload::{IoEngine, JobConfig, Program, RwKind};

use crate::fio::job_check::{bad_input as err, not_modelled};

impl Sim {
    /// Boot the machine, probe its devices, apply the IRQ affinity writes
    /// and place the jobs' tasks.
    pub(crate) fn build(machine: &Machine, settings: &Settings, jobs: &[JobConfig], seed: u64) -> Result<Sim, Error> {
        check_settings(machine, settings)?;
        // The jobs' `ioscheduler` writes, made as their threads set up.
        let devices: Vec<String> = machine.devices.iter().filter(|d| d.is_block()).map(|d| d.name.clone()).collect();
        let settings = &*crate::fio::ioscheduler::switched(settings, jobs, &devices)?;
        let mut sim = Sim::boot(machine, settings, seed);
        let ctx = ProbeCtx::new(machine, settings, seed);
        let mut instances = [0u32; 2];
        for spec in &machine.devices {
            sim.probe(spec, &ctx, &mut instances)?;
        }
        sim.attach_elevators(settings)?;
        sim.apply_irq_affinity(settings)?;
        sim.irq_moderation_modes(settings)?;
        if settings.nosmt {
            sim.smt_off();
        }
        sim.add_jobs(jobs)?;
        if settings.patch_hybrid_iopoll {
            sim.hybrid_iopoll_rings()?;
        }
        Ok(sim)
    }

    /// `--patch hybrid-iopoll`: every IOPOLL ring is set up with
    /// IORING_SETUP_HYBRID_IOPOLL (the kernel refuses the flag without IOPOLL;
    /// a ring without IOPOLL is left as it is).
    fn hybrid_iopoll_rings(&mut self) -> Result<(), Error> {
        for (i, job) in self.jobs.iter_mut().enumerate() {
            if !job.iopoll() || job.engine.ring.sq_ring.is_some() {
                continue;
            }
            if job.engine.ring.sq_thread.is_some() {
                return Err(not_modelled(
                    i,
                    "--patch hybrid-iopoll with sqthread_poll: the SQ thread's hybrid sleeps are not modelled",
                ));
            }
            job.engine.ring.hybrid = Some(Box::default());
        }
        Ok(())
    }

    /// The machine powered on: CPUs idle, root ports and remapping units
    /// free, no device, IRQ or job yet.
    fn boot(machine: &Machine, settings: &Settings, seed: u64) -> Sim {
        let topo = &machine.topology;
        let ncpus = topo.cpu_count() as usize;
        let cpus: Vec<Cpu> =
            crate::ids::cpus(ncpus).map(|i| Cpu::new(i, topo.cpus[i.idx()].sibling.map(CpuId))).collect();
        Sim {
            q: EventQueue::new(ncpus),
            machine: machine.clone(),
            costs: machine.costs.clone(),
            cpus: Cpus::new(cpus, (2000.0 / topo.smt_throughput).round() as u64),
            intr: Interrupts {
                irqs: IdVec::new(),
                vectors: VectorTable::new(ncpus),
                msi: MsiCounters::default(),
                pi_descs: IdVec::from(vec![Default::default(); ncpus]),
                posting: settings.posting(),
                max_coalescing_loop: settings.max_posted_msi_coalescing_loop,
                retriggered: 0,
                gsim: settings.gsim.as_ref().map(|g| Box::new(Gsim::new(g, ncpus))),
            },
            hw: Platform {
                root_ports: machine
                    .root_ports
                    .iter()
                    .map(|r| RootPortState {
                        service_ns: r.msi_service_ns,
                        socket: r.socket as usize,
                        unit: r.iommu,
                        ..Default::default()
                    })
                    .collect(),
                pcie_switches: machine.pcie_switches.iter().map(|s| Link::new(s.upstream_mb_per_s)).collect(),
                iommus: machine.iommus.iter().map(RemapUnit::new).collect(),
                routers: (0..topo.sockets)
                    .map(|_| InterruptRouter::new(machine.interrupt_delivery.service_ns))
                    .collect(),
                msi_serialisation: machine.msi_serialisation.as_ref().map(|m| InterruptRouter::new(m.service_ns)),
            },
            dma: DmaMode {
                translated: settings.dma_translated(),
                strict: settings.iommu_dma == crate::settings::IommuDma::Strict,
                premap: settings.patch_dma_premap,
            },
            devs: IdVec::new(),
            reqs: RequestPool::default(),
            blk: BlockConfig {
                polled_unsupported: settings.polled_unsupported,
                io_cpu_affinity_2008: settings.patch_io_cpu_affinity_2008,
            },
            jobs: IdVec::new(),
            dsa_clients: IdVec::new(),
            trace: None,
            run: RunState {
                seed,
                sample_interval_ns: 500_000_000,
                timed: Vec::new(),
                failure: None,
                phase: 0,
                phases: 0,
                jobs_left: 0,
                io_log: None,
                flows: Default::default(),
                status: None,
            },
        }
    }

    /// The device's driver probes it; its IRQs get their vectors.
    /// `instances` counts NVMe and DSA devices probed so far.
    fn probe(&mut self, spec: &DeviceSpec, ctx: &ProbeCtx, instances: &mut [u32; 2]) -> Result<(), Error> {
        let probed = crate::drivers::probe(spec, ctx, instances, &mut self.devs)?;
        self.attach(probed)
    }

    /// Add a probed device, allocating the IRQs its driver asked for in order.
    fn attach(&mut self, probed: Probed) -> Result<(), Error> {
        let Probed { mut device, irqs } = probed;
        if let Some(r) = device.queue_settings.rotational {
            device.rotational = r;
        }
        let dev = DevId::of(self.devs.len());
        // Each map's queues with their CPUs, once (not the CPUs once per IRQ).
        let default_cpus = device.map.cpus_per_queue();
        let read_cpus = device.read_map.as_ref().map(|m| m.cpus_per_queue());
        let all: Vec<CpuId> = crate::ids::cpus(self.cpus.len()).collect();
        for IrqRequest { queue, cpu, managed } in irqs {
            let irq = self.alloc_irq(dev, queue, cpu, managed)?;
            // A managed IRQ's mask is its queue's CPUs; others may go anywhere.
            self.intr.irqs[irq].mask = if !managed {
                all.clone()
            } else {
                let (_, q) = device.map_of(queue);
                let groups = match &read_cpus {
                    Some(r) if queue.0 >= device.nr_default_queues => r,
                    _ => &default_cpus,
                };
                groups[q.idx()].clone()
            };
            device.queues[queue].irq = Some(irq);
        }
        self.devs.push(device);
        Ok(())
    }

    /// The I/O scheduler where the queue's is set to one
    /// (`blk_mq_init_sched`): requests take scheduler tags (nr_requests, by
    /// default 2 x min(depth, BLKDEV_DEFAULT_RQ)) and a driver tag at dispatch.
    fn attach_elevators(&mut self, settings: &Settings) -> Result<(), Error> {
        let ncpus = self.cpus.len();
        for d in self.devs.iter_mut() {
            let Some(e) = elevator_type(d.queue_settings.scheduler) else { continue };
            if d.queues.is_empty() {
                continue;
            }
            let depth = d.queues[HctxId(0)].tags_free;
            let sched_tags = d.queue_settings.nr_requests.unwrap_or(2 * depth.min(128));
            for q in d.queues.iter_mut() {
                q.tags_free = sched_tags;
            }
            let init = ElevatorInit {
                device: &d.name,
                attrs: &d.queue_settings.iosched,
                driver_tags: depth * d.queues.len() as u32,
                sched_tags,
                patch_mq_deadline_2024: settings.patch_mq_deadline_2024,
                ncpus,
            };
            d.elevator = Some(Elevator::init(e, &init)?);
        }
        Ok(())
    }

    /// Every job's task on a CPU, and the stonewall phases they make.
    fn add_jobs(&mut self, jobs: &[JobConfig]) -> Result<(), Error> {
        let mut load = vec![0u32; self.cpus.len()];
        for (i, cfg) in jobs.iter().enumerate() {
            self.add_job(i, cfg, &mut load)?;
            if cfg.flushes() && cfg.ioengine != IoEngine::Null {
                for &d in &self.jobs[JobId::of(i)].devs {
                    let dev = &self.devs[d];
                    dev.driver.flush_stripped().map_err(|why| {
                        not_modelled(
                            i,
                            format!("a flush of {} (fsync, fdatasync, end_fsync or sync=1): {why}", dev.name),
                        )
                    })?;
                }
            }
        }
        // SQPOLL rings get their SQ thread, after every job (reports pair jobs with configs by index).
        for (i, cfg) in jobs.iter().enumerate() {
            if let IoEngine::IoUring(o) | IoEngine::IoUringCmd(o) = &cfg.ioengine {
                if o.sqthread_poll {
                    self.add_sq_thread(i, o.sqthread_poll_cpu, &mut load)?;
                }
            }
            if matches!(cfg.ioengine, IoEngine::IoUring(_)) && cfg.syncs() {
                // The io-wq worker its fsyncs create: a thread of the job's, placed as a new one is.
                let cpu = self.place_task(i, cfg, &mut load)?;
                self.jobs[JobId::of(i)].engine.ring.io_wq = Some(crate::io_uring::ring::IoWq { cpu, created: false });
            }
            if cfg.ioengine == IoEngine::Posixaio {
                // glibc's AIO helpers (one per file with work, up to aio_threads),
                // placed where the scheduler puts a new thread.
                let helper = crate::fio::posixaio::aio_helper_config(cfg, i);
                let n = self.jobs[JobId::of(i)].devs.len().clamp(1, crate::fio::aio::AIO_THREADS);
                let cpus = (0..n).map(|_| self.place_task(i, &helper, &mut load)).collect::<Result<Vec<_>, _>>()?;
                self.add_aio_helpers(i, helper, &cpus)?;
            }
            if cfg.serialize_overlap && !cfg.offload {
                return Err(not_modelled(
                    i,
                    "serialize_overlap without io_submit_mode=offload is not modelled (fio's inline check requeues an \
                     overlapping io_u and reaps first)",
                ));
            }
            self.add_verify_async(i, cfg, &mut load)?;
            if cfg.offload {
                // Its submit workers, threads of fio's placed as new threads are.
                let cpus = (0..cfg.iodepth.max(1))
                    .map(|_| self.place_task(i, cfg, &mut load))
                    .collect::<Result<Vec<_>, _>>()?;
                self.add_submit_workers(i, &cpus)?;
            }
        }
        self.run.phases = jobs.iter().map(|j| j.phase + 1).max().unwrap_or(0);
        Ok(())
    }

    /// The SQ thread of job `i`'s ring (`io_sq_thread`): on `sqthread_poll_cpu`
    /// (IORING_SETUP_SQ_AFF), else wherever the scheduler puts it (the
    /// least-loaded online CPU).
    fn add_sq_thread(&mut self, i: usize, cpu: Option<u32>, load: &mut [u32]) -> Result<(), Error> {
        let app = JobId::of(i);
        if self.jobs[app].devs.iter().any(|&d| self.devs[d].elevator.is_some()) {
            return Err(not_modelled(i, "sqthread_poll with an I/O scheduler on the device is not modelled"));
        }
        let mut cfg = self.jobs[app].cfg.clone();
        cfg.name = format!("iou-sqp-{}", 1001 + i);
        cfg.program = Program::SqThread;
        cfg.cpus_allowed = cpu.map(|c| vec![c]);
        if let Some(c) = cpu {
            if c as usize >= self.cpus.len() {
                return Err(err(i, format!("sqthread_poll_cpu={c}: CPU {c} does not exist")));
            }
        }
        let cpu = self
            .place_task(i, &cfg, load)
            .map_err(|e| Error::bad_input(format!("sqthread_poll_cpu: {}", e.message)).for_job(i))?;
        let index = JobId::of(self.jobs.len());
        let devs = self.jobs[app].devs.clone();
        let mut sq = Job::new(index, cfg, cpu, devs, Rng::stream(self.run.seed, &format!("sq/{i}")));
        sq.engine.ring.sq_ring = Some(app);
        self.jobs[app].engine.ring.sq_thread = Some(index);
        self.jobs.push(sq);
        Ok(())
    }

    /// Job `i`: checked, its devices found, its task placed on the
    /// least-loaded CPU it may use, its I/O bound set.
    fn add_job(&mut self, i: usize, cfg: &JobConfig, load: &mut [u32]) -> Result<(), Error> {
        let devs = self.job_devices(i, cfg)?;
        crate::fio::job_check::check_job(i, cfg)?;
        let no_discards = devs.iter().any(|&d| !self.devs[d].driver.discards());
        if cfg.offload && cfg.trims() && matches!(cfg.ioengine, IoEngine::IoUring(_)) && no_discards {
            return Err(not_modelled(
                i,
                "io_uring trims with io_submit_mode=offload on a device without discards: once the ring refuses a \
                 trim, each submit worker's engine trims with a blocking BLKDISCARD (fio's async_trim_fail), which \
                 is not modelled",
            ));
        }
        let cpu = self.place_task(i, cfg, load)?;
        let index = JobId::of(self.jobs.len());
        if matches!(cfg.ioengine, IoEngine::IoUringCmd(_)) {
            devs.iter().for_each(|&d| self.devs[d].passthru_users = true);
        }
        let mut job = Job::new(index, cfg.clone(), cpu, devs.clone(), Rng::stream(self.run.seed, &format!("job/{i}")));
        if cfg.program == Program::Fio {
            self.fio_job_init(i, cfg, &devs, &mut job)?;
        }
        if let Some(log) = &cfg.replay {
            // The log decides how much I/O there is (fio adds each entry's length to size).
            self.check_replay(i, cfg, log, &devs)?;
        } else {
            let time_based = cfg.time_based && cfg.runtime_ns.is_some();
            if !time_based {
                job.bytes_limit = self.bytes_limit(cfg, &devs);
            }
            // do_io's bytes are those its engine queued (io_queue_event's FIO_Q_QUEUED): an io_u
            // a sync engine completed in its queue hook (FIO_Q_COMPLETED) adds none, nor does
            // one handed to offload's workers. A time-based job's pass ends at them only with
            // `verify` set (so that do_verify, if on, reads the pass back; without it thread_main
            // goes round again): one with a sync engine writes until its runtime ends.
            let engine_queues = !(job.null_sync() || cfg.ioengine.is_sync());
            if (!time_based || cfg.verify.is_some()) && engine_queues && !cfg.offload {
                job.pass_total = self.pass_total(cfg, &devs);
            }
        }
        if cfg.program == Program::TIoUring {
            // t/io_uring's submitter_init: per_file_depth = ceil(depth / nr_files).
            let n = devs.len().max(1) as u32;
            job.tio.pending = vec![0; devs.len()];
            job.tio.per_file_depth = cfg.iodepth.div_ceil(n);
        }
        self.jobs.push(job);
        Ok(())
    }

    /// The block devices a job's `filename`s name (none for the null engine).
    fn job_devices(&self, i: usize, cfg: &JobConfig) -> Result<Vec<DevId>, Error> {
        let mut devs = Vec::new();
        if matches!(cfg.ioengine, IoEngine::Null) {
            return Ok(devs);
        }
        if cfg.filenames.is_empty() {
            return Err(err(
                i,
                "no filename: blksim jobs need filename=/dev/DEVICE naming a block device of the machine".into(),
            ));
        }
        let passthru = matches!(cfg.ioengine, IoEngine::IoUringCmd(_));
        for f in &cfg.filenames {
            let name = f.strip_prefix("/dev/").unwrap_or(f);
            // An NVMe namespace's generic char device, /dev/ngXnY: NVMe commands only.
            if let Some(d) = self.generic_device(name) {
                if !passthru {
                    return Err(err(
                        i,
                        format!(
                            "filename={f}: the NVMe generic char device takes NVMe commands only (ioengine=io_uring_cmd, cmd_type=nvme); its block device is /dev/{}",
                            self.devs[d].name
                        ),
                    ));
                }
                devs.push(d);
                continue;
            }
            if passthru {
                return Err(err(
                    i,
                    format!("filename={f}: ioengine=io_uring_cmd works with NVMe namespace generic char devices only (/dev/ngXnY)"),
                ));
            }
            let d = self.devs.iter().position(|d| d.name == name).ok_or_else(|| {
                let names: Vec<String> = self.devs.iter().map(|d| format!("/dev/{}", d.name)).collect();
                err(
                    i,
                    format!(
                        "filename={f}: machine '{}' has no such block device (it has {})",
                        self.machine.name,
                        names.join(", ")
                    ),
                )
            })?;
            if let Some(why) = self.devs[DevId::of(d)].driver.not_a_block_device() {
                return Err(err(i, format!("filename={f}: {why}")));
            }
            devs.push(DevId::of(d));
        }
        Ok(devs)
    }

    /// `nosmt`: every core's second thread (the sibling with the higher
    /// number) is offline from boot, as `cpu_smt_allowed` leaves it; drivers
    /// still sized their queues for the possible CPUs, and IRQs aimed at an
    /// offline thread move (managed ones with no online CPU shut down).
    fn smt_off(&mut self) {
        for cpu in crate::ids::cpus(self.cpus.len()) {
            let Some(sib) = self.cpus[cpu].sibling else { continue };
            if sib < cpu {
                self.cpus.mask.online[cpu] = false;
                self.cpus.mask.active[cpu] = false;
                self.fixup_irqs(cpu);
            }
        }
    }

    /// The NVMe device whose namespace 1's generic char device is `name` (`ng0n1`).
    fn generic_device(&self, name: &str) -> Option<DevId> {
        let (ctrl, ns) = name.strip_prefix("ng")?.split_once('n')?;
        let (ctrl, ns): (u32, u32) = (ctrl.parse().ok()?, ns.parse().ok()?);
        if ns != 1 {
            return None;
        }
        let d = self.devs.iter().position(|d| d.driver.has_generic_char_device() && d.instance == ctrl)?;
        Some(DevId::of(d))
    }

    /// fio 3.42's do_io's `total_bytes` for an asynchronous engine: `size`,
    /// or `io_size` when larger for a map-less random writer or a sequential
    /// read/write mix without verify; twice as much with `verify_backlog`'s
    /// read-backs, and a trimwrite's trims on top.
    fn pass_total(&self, cfg: &JobConfig, devs: &[DevId]) -> u64 {
        let size = self.job_size(cfg, devs);
        let io_size = cfg.io_size.unwrap_or(0);
        let mut total = size;
        let map_less_writer = cfg.rw.writes() && cfg.rw.is_random() && cfg.fio_norandommap;
        if map_less_writer || (cfg.rw == RwKind::ReadWrite && cfg.verify.is_none()) {
            total = total.max(io_size);
        }
        if cfg.rw.writes() && cfg.verify.as_ref().is_some_and(|v| v.backlog > 0) {
            total = total.saturating_add(size);
        }
        if matches!(cfg.rw, RwKind::TrimWrite | RwKind::RandTrimWrite) {
            // td->total_io_size
            total = total.saturating_add(cfg.io_size.unwrap_or(size).saturating_mul(cfg.loops.max(1) as u64));
        }
        total
    }

    /// fio's `size`: as given, else its files' (the devices') whole size.
    fn job_size(&self, cfg: &JobConfig, devs: &[DevId]) -> u64 {
        cfg.size.unwrap_or_else(|| devs.iter().map(|&d| self.devs[d].capacity_bytes).sum())
    }

    fn bytes_limit(&self, cfg: &JobConfig, devs: &[DevId]) -> u64 {
        // fio's io_bytes_exceeded: io_size if set, else size (x loops).
        let size = || self.job_size(cfg, devs);
        let loops = cfg.loops.max(1) as u64;
        // A whole device of I/Os is what fio does; the front ends' wall-time budget asks first.
        // (Its passes end earlier: at a failing draw, at an asynchronous engine's pass bytes; fio's
        // keep_running decides whether another starts, `Job::next_pass`.)
        // (A trimwrite job's writes count, not its trims: `trimmed_bytes`.)
        cfg.io_size.unwrap_or_else(size).saturating_mul(loops)
    }
}

/// Kernel settings the machine cannot honour, or that are not modelled.
fn check_settings(machine: &Machine, settings: &Settings) -> Result<(), Error> {
    if settings.posting() && !machine.posting_capable() {
        return Err(Error::bad_input(format!(
            "intremap=posted_msi: machine '{}' has no IOMMU that can post interrupts (iommu.posting_capable)",
            machine.name
        )));
    }
    for (dev, q) in &settings.queues {
        let Some(cpu) = q.queue_affinity else { continue };
        let path = format!("/sys/block/{dev}/queue/queue_affinity");
        if !settings.patch_io_cpu_affinity_2008 {
            return Err(Error::bad_input(format!(
                "{path}: queue_affinity is not in this kernel: it needs --patch io-cpu-affinity-2008"
            )));
        }
        if cpu >= machine.topology.cpu_count() {
            return Err(Error::bad_input(format!(
                "{path}={cpu}: CPU {cpu} does not exist (the machine has {} CPUs)",
                machine.topology.cpu_count()
            )));
        }
    }
    Ok(())
}
