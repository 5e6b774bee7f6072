//! A run: build the simulated system from machine + settings + jobs + seed,
//! run the event loop until every job has finished, and report.

use crate::block::{QueueMap, RequestPool};
use crate::device::dsa::{DsaClient, DsaClientConfig, DsaState};
use crate::device::{Device, HwQueue, NvmeState};
use crate::ioengine::{Job, JobState};
use crate::irq::{IommuState, Irq, MsiCounters, RootPortState, FIRST_DEVICE_VECTOR, LAST_DEVICE_VECTOR};
use crate::machine::cpu::Cpu;
use crate::machine::{Costs, DeviceKind, Machine};
use crate::settings::Settings;
use crate::sim::{EventQueue, Popped, Rng};
use crate::stats::{CpuTime, DiskStats, InterruptRow, JobStats, LockReport, MsiCpuStats, PathStats, RunReport};
use crate::workload::{IoEngine, JobConfig};

/// Something that happened at an instant; the doc says source and target.
#[derive(Clone, Copy, Debug)]
pub enum Event {
    /// A device sent the CQE write of `req` towards its root port.
    CqeSent { dev: u16, req: u32 },
    /// The CQE write of `req` (after its read data) reached the device's root port.
    CqeAtPort { dev: u16, hctx: u16, req: u32 },
    /// A root port finished the MSI that held the writes behind it.
    RootPortFree { port: u16 },
    /// An interrupt message (MSI or IPI) reached a CPU's local APIC.
    InterruptArrived { cpu: u32, vector: u8 },
    /// The IOMMU's posting of a device MSI (vector on cpu) left root port `port`.
    MsiPosted { cpu: u32, vector: u8, port: u16 },
    /// A wake-up IPI reached the idle CPU of a woken job.
    TaskWoken { job: u32 },
    /// An hrtimer armed by null_blk (irqmode=2) for `req` expired on `cpu`.
    HrtimerExpired { cpu: u32, req: u32 },
    /// A timed action (index into `Sim::timed`) is due.
    Timed { index: u32 },
    /// `__vector_cleanup` on `cpu` for the old `vector` of a moved `irq`.
    VectorCleanup { cpu: u32, vector: u8, irq: u32 },
    /// A job's start time (its phase began, plus startdelay) came.
    JobStarted { job: u32 },
}

/// Bad input the model found (e.g. a job naming a device the machine lacks).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelError {
    /// The job (index into the jobs given) the error is about, if any.
    pub job: Option<usize>,
    pub message: String,
}

/// Counts that let tests check exactly-once invariants.
#[derive(Clone, Debug, Default)]
pub struct Invariants {
    pub ios_issued: u64,
    pub ios_reaped: u64,
    pub requests_live: u64,
    pub msi: MsiCounters,
    /// MSIs still pending at the end: on their way, or in an IRR or PIR.
    pub msi_pending: u64,
}

pub struct Sim {
    pub q: EventQueue<Event>,
    pub machine: Machine,
    pub costs: Costs,
    pub cpus: Vec<Cpu>,
    pub devs: Vec<Device>,
    pub irqs: Vec<Irq>,
    /// (cpu * 256 + vector) -> IRQ index, `u32::MAX` if none.
    pub vector_irq: Vec<u32>,
    pub root_ports: Vec<RootPortState>,
    /// The interrupt-remapping unit of each socket.
    pub iommus: Vec<IommuState>,
    pub reqs: RequestPool,
    pub jobs: Vec<Job>,
    pub msi: MsiCounters,
    /// Slowdown of a thread whose SMT sibling is busy, permille.
    pub smt_slow_pm: u64,
    /// Per CPU: is it busy (`Cpu::busy`)? Kept apart, on a few lines, for
    /// the SMT check that every busy/idle change makes of the sibling.
    pub cpu_busy: Vec<bool>,
    pub sample_interval_ns: u64,
    /// Device MSIs are posted (`intremap=posted_msi`).
    pub posting: bool,
    /// `--patch mq-deadline-2024`.
    pub patch_mq_deadline_2024: bool,
    pub max_posted_msi_coalescing_loop: u32,
    /// Actions at points of virtual time (IRQ moves, CPUs going offline).
    pub timed: Vec<crate::irq::migrate::TimedAction>,
    /// CPUs taken offline.
    pub offline: Vec<bool>,
    /// An error found while running (a timed action that cannot be done).
    pub failure: Option<String>,
    /// Vectors retriggered on a new CPU after their old CPU went offline.
    pub retriggered: u64,
    /// Next free device vector on each CPU.
    pub next_vector: Vec<u8>,
    /// DSA clients (the workload of a DSA run).
    pub dsa_clients: Vec<DsaClient>,
    /// The timeline being recorded, if asked for.
    pub trace: Option<crate::stats::Trace>,
    /// Scratch space for foreseeing a drain's wake-ups and IPIs.
    pub scratch: Vec<(u32, u32)>,
    /// The job whose poller is reaping right now (IOPOLL completions go straight to its ring).
    pub polling_job: Option<u32>,
    phase: u32,
    phases: u32,
    jobs_left: usize,
    seed: u64,
}

/// The most I/Os a job without a runtime may ask for (a few minutes of wall time).
pub const MAX_UNBOUNDED_IOS: u64 = 200_000_000;

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

fn err(job: usize, message: String) -> ModelError {
    ModelError { job: Some(job), message }
}

/// Check that `jobs` can run on `machine` with `settings` (devices exist,
/// everything they use is modelled) without simulating anything.
pub fn validate(machine: &Machine, settings: &Settings, jobs: &[JobConfig]) -> Result<(), ModelError> {
    Sim::build(machine, settings, jobs, 0).map(|_| ())
}

/// How to run beyond the inputs: what to record.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Record a timeline over [start, end) ns of virtual time.
    pub trace_window_ns: Option<(u64, u64)>,
    /// Actions at points of virtual time, ns.
    pub timed: Vec<(u64, crate::irq::migrate::TimedAction)>,
}

/// Run `jobs` on `machine` with `settings` and `seed`.
pub fn run(
    machine: &Machine,
    settings: &Settings,
    jobs: &[JobConfig],
    seed: u64,
) -> Result<(RunReport, Invariants), ModelError> {
    run_with(machine, settings, jobs, seed, &RunOptions::default())
}

/// `run`, recording what `options` ask for.
pub fn run_with(
    machine: &Machine,
    settings: &Settings,
    jobs: &[JobConfig],
    seed: u64,
    options: &RunOptions,
) -> Result<(RunReport, Invariants), ModelError> {
    run_workload(machine, settings, &Workload { jobs: jobs.to_vec(), dsa: Vec::new() }, seed, options)
}

/// Everything a run drives: fio jobs, and DSA clients.
#[derive(Clone, Debug, Default)]
pub struct Workload {
    pub jobs: Vec<JobConfig>,
    pub dsa: Vec<DsaClientConfig>,
}

/// Run a whole workload.
pub fn run_workload(
    machine: &Machine,
    settings: &Settings,
    workload: &Workload,
    seed: u64,
    options: &RunOptions,
) -> Result<(RunReport, Invariants), ModelError> {
    let jobs = &workload.jobs;
    let mut sim = Sim::build(machine, settings, jobs, seed)?;
    for c in &workload.dsa {
        let dev = sim.devs.iter().position(|d| d.name == c.device && d.dsa.is_some()).ok_or_else(|| ModelError {
            job: None,
            message: format!("DSA device '{}': machine '{}' has none by that name", c.device, machine.name),
        })?;
        let wqs = sim.devs[dev].queues.len() as u32;
        if c.wq >= wqs || c.outstanding == 0 || c.bytes == 0 {
            return Err(ModelError {
                job: None,
                message: format!("DSA client on {}: wq must be < {wqs}, outstanding and bytes > 0", c.device),
            });
        }
        if let Some(cpu) = c.irq_cpu {
            let irq = sim.devs[dev].queues[c.wq as usize].irq;
            sim.irq_set_affinity(irq, &[cpu])
                .map_err(|e| ModelError { job: None, message: format!("DSA client on {}: {e}", c.device) })?;
        }
        sim.dsa_clients.push(DsaClient {
            dev: dev as u16,
            wq: c.wq as u16,
            bytes: c.bytes,
            stop_ns: c.runtime_ns,
            ..Default::default()
        });
    }
    for (i, (at, action)) in options.timed.iter().enumerate() {
        if let crate::irq::migrate::TimedAction::CpuOffline { cpu } = action {
            if sim.jobs.iter().any(|j| j.cpu == *cpu) || sim.irqs.iter().any(|q| q.managed && q.cpu == *cpu) {
                return Err(ModelError {
                    job: None,
                    message: format!(
                        "offlining CPU {cpu}: it runs a job or a managed (NVMe) IRQ; migrating tasks and shutting down managed IRQs is not modelled yet"
                    ),
                });
            }
            if *cpu as usize >= sim.cpus.len() {
                return Err(ModelError { job: None, message: format!("CPU {cpu} does not exist") });
            }
        }
        sim.timed.push(action.clone());
        sim.q.at(*at, Event::Timed { index: i as u32 });
    }
    for client in 0..sim.dsa_clients.len() as u32 {
        for _ in 0..workload.dsa[client as usize].outstanding {
            sim.dsa_submit(client);
        }
    }
    if let Some((start, end)) = options.trace_window_ns {
        let mut t = crate::stats::Trace::new(start, end, sim.cpus.len());
        t.job_names = jobs.iter().map(|j| j.name.clone()).collect();
        t.dev_names = sim.devs.iter().map(|d| d.name.clone()).collect();
        sim.trace = Some(t);
    }
    sim.run_loop()?;
    Ok(sim.report())
}

impl Sim {
    pub fn build(machine: &Machine, settings: &Settings, jobs: &[JobConfig], seed: u64) -> Result<Sim, ModelError> {
        let topo = &machine.topology;
        let ncpus = topo.cpu_count() as usize;
        if settings.posting() && !machine.iommu.posting_capable {
            return Err(ModelError {
                job: None,
                message: format!(
                    "intremap=posted_msi: machine '{}' has no IOMMU that can post interrupts (iommu.posting_capable)",
                    machine.name
                ),
            });
        }
        if settings.nvme_write_queues > 0 {
            return Err(ModelError { job: None, message: "nvme.write_queues is not modelled yet (only 0)".into() });
        }
        let cpus: Vec<Cpu> = (0..ncpus as u32).map(|i| Cpu::new(i, topo.cpus[i as usize].sibling)).collect();
        // CPUs in group_cpus_evenly order: per core, its threads together.
        let mut spread_order: Vec<u32> = (0..ncpus as u32).collect();
        spread_order.sort_by_key(|&c| (topo.cpus[c as usize].node, topo.cpus[c as usize].core, c));
        let mut sim = Sim {
            q: EventQueue::new(ncpus),
            machine: machine.clone(),
            costs: machine.costs.clone(),
            cpus,
            devs: Vec::new(),
            irqs: Vec::new(),
            vector_irq: vec![u32::MAX; ncpus * 256],
            root_ports: machine
                .root_ports
                .iter()
                .map(|r| RootPortState {
                    service_ns: r.msi_service_ns,
                    socket: r.socket as usize,
                    ..Default::default()
                })
                .collect(),
            iommus: (0..topo.sockets)
                .map(|_| IommuState {
                    remap_ns: machine.iommu.remap_service_ns,
                    post_ns: machine.iommu.post_service_ns,
                    ..Default::default()
                })
                .collect(),
            reqs: RequestPool::default(),
            jobs: Vec::new(),
            msi: MsiCounters::default(),
            smt_slow_pm: (2000.0 / topo.smt_throughput).round() as u64,
            cpu_busy: vec![false; topo.cpus.len()],
            sample_interval_ns: 500_000_000,
            polling_job: None,
            scratch: Vec::new(),
            trace: None,
            dsa_clients: Vec::new(),
            next_vector: Vec::new(),
            timed: Vec::new(),
            offline: vec![false; ncpus],
            retriggered: 0,
            failure: None,
            posting: settings.posting(),
            patch_mq_deadline_2024: settings.patch_mq_deadline_2024,
            max_posted_msi_coalescing_loop: settings.max_posted_msi_coalescing_loop,
            phase: 0,
            phases: 0,
            jobs_left: 0,
            seed,
        };
        let mut next_vector = vec![FIRST_DEVICE_VECTOR; ncpus];
        let mut nvme_instance = 0;
        let mut dsa_instance = 0;
        for spec in &machine.devices {
            let qs = settings.queue(&spec.name);
            match &spec.kind {
                DeviceKind::Nvme(p) => {
                    let nr_io = (ncpus as u32 + settings.nvme_poll_queues).min(p.max_queues).max(1);
                    let poll = settings.nvme_poll_queues.min(nr_io - 1);
                    let nr_irq = nr_io - poll;
                    let depth = settings.nvme_io_queue_depth.min(p.max_queue_entries) - 1;
                    let tags = match qs.nr_requests {
                        Some(n) if n > depth => {
                            return Err(ModelError {
                                job: None,
                                message: format!(
                                    "/sys/block/{}/queue/nr_requests={n} exceeds the tag depth {depth} (nvme.io_queue_depth - 1)",
                                    spec.name
                                ),
                            })
                        }
                        Some(n) => n,
                        None => depth,
                    };
                    let map = QueueMap::spread(&spread_order, ncpus, nr_irq);
                    let poll_map = (poll > 0).then(|| QueueMap::spread(&spread_order, ncpus, poll));
                    let dev_index = sim.devs.len() as u16;
                    let mut queues = Vec::new();
                    for qi in 0..nr_io {
                        let mut hq = HwQueue { tags_free: tags, irq: u32::MAX, ..Default::default() };
                        if qi < nr_irq {
                            let name = format!("nvme{nvme_instance}q{}", qi + 1);
                            let cpu = map.first_cpu[qi as usize];
                            hq.irq = sim.alloc_irq(&mut next_vector, dev_index, qi as u16, cpu, name, true)?;
                        } else {
                            hq.polled = true;
                        }
                        queues.push(hq);
                    }
                    sim.devs.push(Device {
                        name: spec.name.clone(),
                        instance: nvme_instance,
                        root_port: p.root_port,
                        queues,
                        map,
                        poll_map,
                        nr_irq_queues: nr_irq as u16,
                        queue_settings: qs,
                        capacity_bytes: p.capacity_bytes,
                        nvme: Some(NvmeState::new(p.clone(), Rng::stream(seed, &format!("dev/{}", spec.name)))),
                        dsa: None,
                        deadline: None,
                        null_blk: None,
                        disk: Default::default(),
                    });
                    nvme_instance += 1;
                }
                DeviceKind::Dsa(p) => {
                    // One MSI-X vector per WQ, not managed: on CPU 0 until user space moves it.
                    let dev_index = sim.devs.len() as u16;
                    let mut queues = Vec::new();
                    for wq in 0..p.wqs {
                        let name = format!("idxd-{}-wq{wq}", spec.name);
                        let irq = sim.alloc_irq(&mut next_vector, dev_index, wq as u16, 0, name, false)?;
                        queues.push(HwQueue { irq, ..Default::default() });
                    }
                    sim.devs.push(Device {
                        name: spec.name.clone(),
                        instance: dsa_instance,
                        root_port: p.root_port,
                        queues,
                        map: QueueMap::spread(&spread_order, ncpus, 1),
                        poll_map: None,
                        nr_irq_queues: p.wqs as u16,
                        queue_settings: qs,
                        capacity_bytes: 0,
                        nvme: None,
                        dsa: Some(DsaState::new(p.clone())),
                        deadline: None,
                        null_blk: None,
                        disk: Default::default(),
                    });
                    dsa_instance += 1;
                }
                DeviceKind::NullBlk => {
                    let nb = settings.null_blk.clone();
                    let nr = nb.submit_queues.min(ncpus as u32).max(1);
                    let tags = match qs.nr_requests {
                        Some(n) if n > nb.hw_queue_depth => {
                            return Err(ModelError {
                                job: None,
                                message: format!(
                                    "/sys/block/{}/queue/nr_requests={n} exceeds null_blk.hw_queue_depth={}",
                                    spec.name, nb.hw_queue_depth
                                ),
                            })
                        }
                        Some(n) => n,
                        None => nb.hw_queue_depth,
                    };
                    let queues =
                        (0..nr).map(|_| HwQueue { tags_free: tags, irq: u32::MAX, ..Default::default() }).collect();
                    sim.devs.push(Device {
                        name: spec.name.clone(),
                        instance: 0,
                        root_port: 0,
                        queues,
                        map: QueueMap::spread(&spread_order, ncpus, nr),
                        poll_map: None,
                        nr_irq_queues: nr as u16,
                        queue_settings: qs,
                        // null_blk's default gb=250.
                        capacity_bytes: 250 << 30,
                        nvme: None,
                        dsa: None,
                        deadline: None,
                        null_blk: Some(nb),
                        disk: Default::default(),
                    });
                }
            }
        }
        // mq-deadline: requests take scheduler tags (nr_requests, by default
        // 2 x min(depth, BLKDEV_DEFAULT_RQ)) and a driver tag at dispatch.
        for d in sim.devs.iter_mut() {
            if d.queue_settings.scheduler == crate::settings::Scheduler::MqDeadline && !d.queues.is_empty() {
                let depth = d.queues[0].tags_free;
                let sched_tags = d.queue_settings.nr_requests.unwrap_or(2 * depth.min(128));
                for q in d.queues.iter_mut() {
                    q.tags_free = sched_tags;
                }
                d.deadline = Some(crate::ioengine::sched::Deadline {
                    driver_tags_free: depth * d.queues.len() as u32,
                    ..Default::default()
                });
            }
        }
        sim.next_vector = next_vector;
        sim.apply_irq_affinity(settings)?;
        let mut load = vec![0u32; ncpus];
        for (i, cfg) in jobs.iter().enumerate() {
            sim.add_job(i, cfg, &mut load)?;
        }
        sim.phases = jobs.iter().map(|j| j.phase + 1).max().unwrap_or(0);
        Ok(sim)
    }

    /// A device IRQ with a vector on `cpu`: managed (NVMe queues, spread by
    /// the kernel) or not (movable from user space). Returns its index.
    fn alloc_irq(
        &mut self,
        next_vector: &mut [u8],
        dev: u16,
        queue: u16,
        cpu: u32,
        name: String,
        managed: bool,
    ) -> Result<u32, ModelError> {
        let vector = next_vector[cpu as usize];
        if vector > LAST_DEVICE_VECTOR {
            return Err(ModelError { job: None, message: format!("CPU {cpu} ran out of interrupt vectors") });
        }
        next_vector[cpu as usize] += 1;
        let irq = self.irqs.len() as u32;
        let ncpus = self.cpus.len();
        self.irqs.push(Irq {
            number: 128 + irq,
            dev,
            queue,
            cpu,
            vector,
            name,
            count: vec![0; ncpus],
            managed,
            running_on: None,
            replay: false,
        });
        self.vector_irq[cpu as usize * 256 + vector as usize] = irq;
        Ok(irq)
    }

    /// `/proc/irq/N/smp_affinity_list` writes before the run.
    fn apply_irq_affinity(&mut self, settings: &Settings) -> Result<(), ModelError> {
        for (&number, cpus) in &settings.irq_affinity {
            let path = format!("/proc/irq/{number}/smp_affinity_list");
            let fail = |e: String| ModelError { job: None, message: format!("{path}: {e}") };
            let irq = self.irqs.iter().position(|i| i.number == number).ok_or_else(|| {
                fail(format!("no IRQ {number} on this machine (device IRQs are 128..{})", 128 + self.irqs.len()))
            })?;
            self.irq_set_affinity(irq as u32, cpus).map_err(fail)?;
        }
        Ok(())
    }

    /// Move a device IRQ to the first CPU of `cpus` (x86 delivers to one CPU
    /// of the mask): a vector is allocated there and the old one freed.
    /// Managed IRQs refuse, as the kernel does (EIO).
    pub fn irq_set_affinity(&mut self, irq: u32, cpus: &[u32]) -> Result<(), String> {
        let (old_cpu, old_vector) = (self.irqs[irq as usize].cpu, self.irqs[irq as usize].vector);
        self.irq_set_affinity_keep_old(irq, cpus)?;
        self.vector_irq[old_cpu as usize * 256 + old_vector as usize] = u32::MAX;
        Ok(())
    }

    /// Retarget `irq` to a new vector on the first of `cpus`, leaving the old
    /// vector bound to it (messages already sent still arrive there).
    pub fn irq_set_affinity_keep_old(&mut self, irq: u32, cpus: &[u32]) -> Result<(), String> {
        let ncpus = self.cpus.len() as u32;
        let i = &self.irqs[irq as usize];
        if i.managed {
            return Err(format!(
                "IRQ {} ({}) has managed affinity; the kernel refuses the write (EIO)",
                i.number, i.name
            ));
        }
        let &target = cpus.first().ok_or("empty CPU list")?;
        if let Some(bad) = cpus.iter().find(|&&c| c >= ncpus) {
            return Err(format!("CPU {bad} does not exist (machine has {ncpus} CPUs)"));
        }
        let vector = self.next_vector[target as usize];
        if vector > LAST_DEVICE_VECTOR {
            return Err(format!("CPU {target} has no free interrupt vector"));
        }
        self.next_vector[target as usize] += 1;
        let i = &mut self.irqs[irq as usize];
        i.cpu = target;
        i.vector = vector;
        self.vector_irq[target as usize * 256 + vector as usize] = irq;
        Ok(())
    }

    fn add_job(&mut self, i: usize, cfg: &JobConfig, load: &mut [u32]) -> Result<(), ModelError> {
        let ncpus = self.cpus.len() as u32;
        let is_null = matches!(cfg.ioengine, IoEngine::Null);
        if let IoEngine::IoUring(o) | IoEngine::IoUringCmd(o) = &cfg.ioengine {
            if o.sqthread_poll {
                return Err(err(i, "sqthread_poll (SQPOLL) is not modelled yet".into()));
            }
        }
        if matches!(cfg.ioengine, IoEngine::IoUringCmd(_)) {
            return Err(err(i, "ioengine=io_uring_cmd (NVMe passthrough) is not modelled yet".into()));
        }
        if !is_null && !cfg.direct {
            return Err(err(
                i,
                "buffered I/O (direct=0) goes through the page cache, which blksim does not model; set direct=1".into(),
            ));
        }
        if cfg.rw_has_trim() {
            return Err(err(i, format!("rw={}: trim is not modelled yet", cfg.rw.fio_name())));
        }
        if cfg.rate_iops.iter().any(|r| *r > 0) {
            return Err(err(i, "rate_iops is not modelled yet".into()));
        }
        if cfg.iodepth == 0 {
            return Err(err(i, "iodepth must be at least 1".into()));
        }
        let mut devs = Vec::new();
        if !is_null {
            if cfg.filenames.is_empty() {
                return Err(err(
                    i,
                    "no filename: blksim jobs need filename=/dev/DEVICE naming a block device of the machine".into(),
                ));
            }
            for f in &cfg.filenames {
                let name = f.strip_prefix("/dev/").unwrap_or(f);
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
                if self.devs[d].dsa.is_some() {
                    return Err(err(i, format!("filename={f}: a DSA accelerator is not a block device (drive it with `blksim dsa-memfill`)")));
                }
                devs.push(d as u16);
            }
        }
        let allowed: Vec<u32> = match &cfg.cpus_allowed {
            Some(list) => {
                if let Some(bad) = list.iter().find(|c| **c >= ncpus) {
                    return Err(err(i, format!("cpus_allowed: CPU {bad} does not exist (machine has {ncpus} CPUs)")));
                }
                list.clone()
            }
            None => (0..ncpus).collect(),
        };
        if allowed.is_empty() {
            return Err(err(i, "cpus_allowed is empty".into()));
        }
        // The least-loaded allowed CPU (first on ties), as the scheduler would spread.
        let cpu = *allowed.iter().min_by_key(|&&c| (load[c as usize], c)).unwrap();
        load[cpu as usize] += 1;
        let index = self.jobs.len() as u32;
        let mut job = Job::new(index, cfg.clone(), cpu, devs.clone(), Rng::stream(self.seed, &format!("job/{i}")));
        if !cfg.time_based || cfg.runtime_ns.is_none() {
            let region: u64 = match cfg.size {
                Some(s) => s,
                None => devs.iter().map(|&d| self.devs[d as usize].capacity_bytes).sum(),
            };
            job.bytes_limit = region.saturating_mul(cfg.loops.max(1) as u64);
            // A job bounded only by a whole device would simulate for hours:
            // ask for a bound rather than surprise.
            let ios = job.bytes_limit / cfg.bs.iter().copied().filter(|b| *b > 0).min().unwrap_or(4096);
            if cfg.runtime_ns.is_none() && cfg.number_ios == 0 && ios > MAX_UNBOUNDED_IOS {
                return Err(err(
                    i,
                    format!(
                        "the job would issue about {ios} I/Os ({} bytes{}) with no runtime: set runtime=, size= or number_ios= to bound it",
                        job.bytes_limit,
                        if cfg.size.is_none() { ", the whole device" } else { "" }
                    ),
                ));
            }
        }
        if job.hipri() {
            for &d in &devs {
                let (hctx, polled) = self.devs[d as usize].hctx_for(cpu, true);
                if polled {
                    job.poll_queues.push((d, hctx));
                }
            }
        }
        self.jobs.push(job);
        Ok(())
    }

    fn start_phase(&mut self) {
        while self.phase < self.phases {
            let members: Vec<u32> = self.jobs.iter().filter(|j| j.cfg.phase == self.phase).map(|j| j.index).collect();
            if members.is_empty() {
                self.phase += 1;
                continue;
            }
            self.jobs_left = members.len();
            for j in members {
                let delay = self.jobs[j as usize].cfg.startdelay_ns;
                self.q.after(delay, Event::JobStarted { job: j });
            }
            return;
        }
    }

    /// A job ended: when its whole phase has, the next phase starts.
    pub fn job_finished(&mut self, _j: u32) {
        self.jobs_left -= 1;
        if self.jobs_left == 0 {
            self.phase += 1;
            self.start_phase();
        }
    }

    fn all_done(&self) -> bool {
        self.phase >= self.phases && self.dsa_done()
    }

    pub fn run_loop(&mut self) -> Result<(), ModelError> {
        self.start_phase();
        while !self.all_done() {
            let Some(popped) = self.q.pop() else {
                let stuck: Vec<String> = self
                    .jobs
                    .iter()
                    .filter(|j| j.state != JobState::Done && j.cfg.phase == self.phase)
                    .map(|j| {
                        format!(
                            "{}#{} in {:?} (inflight {}, ready {}, task_work {}, waits for {}, tag waits {})",
                            j.cfg.name,
                            j.index,
                            j.state,
                            j.inflight,
                            j.ready.len(),
                            j.tw_pending.len(),
                            j.wait_for,
                            j.tag_waits
                        )
                    })
                    .collect();
                let cpus: Vec<String> = self
                    .cpus
                    .iter()
                    .filter(|c| {
                        !c.done_list.is_empty() || c.ksoftirqd_pending || c.irr != [0; 4] || !c.frames.is_empty()
                    })
                    .map(|c| {
                        format!(
                            "cpu{}: done_list {} ksoftirqd {} irr {:?} frames {}",
                            c.id,
                            c.done_list.len(),
                            c.ksoftirqd_pending,
                            c.irr,
                            c.frames.len()
                        )
                    })
                    .collect();
                let waits: usize = self.devs.iter().flat_map(|d| d.queues.iter()).map(|q| q.tag_waiters.len()).sum();
                return Err(ModelError {
                    job: None,
                    message: format!(
                        "internal error: the simulation stalled ({}; {}; {waits} requests waiting for tags)",
                        stuck.join(", "),
                        cpus.join("; ")
                    ),
                });
            };
            self.prefetch_next();
            self.handle(popped);
            if self.failure.is_some() {
                return Err(ModelError { job: None, message: self.failure.take().unwrap_or_default() });
            }
        }
        Ok(())
    }

    /// Run every event due up to `until_ns` (tests drive the model this way).
    pub fn run_until(&mut self, until_ns: u64) {
        while self.q.peek_time_ns().is_some_and(|t| t <= until_ns) {
            let popped = self.q.pop().unwrap();
            self.handle(popped);
        }
    }

    /// Start loading the request the next event will touch: it was last used
    /// a device latency ago and is rarely still in cache. A hint only.
    fn prefetch_next(&self) {
        let req = match self.q.peek_event() {
            Some(Event::CqeSent { req, .. } | Event::CqeAtPort { req, .. }) => *req,
            Some(Event::RootPortFree { port }) => match self.root_ports[*port as usize].waiting.front() {
                Some(&(_, _, req)) => req,
                None => return,
            },
            _ => return,
        };
        if let Some(r) = self.reqs.reqs.get(req as usize..=req as usize) {
            crate::sim::prefetch_slice(r);
        }
    }

    #[inline(always)]
    fn handle(&mut self, popped: Popped<Event>) {
        let ev = match popped {
            // A CPU's timer: the step running on it reached its end.
            Popped::Timer(cpu) => return self.cpu_step_done(cpu),
            Popped::Event(ev) => ev,
        };
        match ev {
            Event::CqeSent { dev, req } => self.cqe_sent(dev, req),
            Event::CqeAtPort { dev, hctx, req } => self.cqe_at_port(dev, hctx, req),
            Event::RootPortFree { port } => self.root_port_free(port as usize),
            Event::InterruptArrived { cpu, vector } => {
                if vector < crate::machine::cpu::POSTED_MSI_NOTIFICATION_VECTOR {
                    self.msi.in_flight -= 1;
                }
                self.interrupt_arrived(cpu, vector)
            }
            Event::TaskWoken { job } => self.task_woken(job),
            Event::MsiPosted { cpu, vector, port } => {
                self.msi.in_flight -= 1;
                self.msi_posted(cpu, vector, port as usize)
            }
            Event::HrtimerExpired { cpu, req } => self.hrtimer_expired(cpu, req),
            Event::JobStarted { job } => self.job_start(job),
            Event::VectorCleanup { cpu, vector, irq } => self.vector_cleanup(cpu, vector, irq),
            Event::Timed { index } => {
                if let Err(e) = self.timed_action(index as usize) {
                    self.failure.get_or_insert(e);
                }
            }
        }
    }

    fn report(mut self) -> (RunReport, Invariants) {
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
                irr + crate::irq::posted::pir_count(&c.pi_desc.pir)
                    + c.frames
                        .iter()
                        .map(|f| crate::irq::posted::pir_count(&f.pir) - crate::irq::posted::pir_count(&f.replayed))
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
                .filter_map(|d| d.deadline.as_ref().map(|dd| (d, dd)))
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
