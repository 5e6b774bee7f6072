//! Kernel path: boot and probe. The machine's CPUs, root ports and
//! remapping units; each device probed by its driver (queues, CPU maps,
//! IRQs with their vectors, the I/O scheduler); IRQ affinity writes; each
//! fio job's task placed on a CPU of its `cpus_allowed`.

use crate::block::hctx::{HwQueue, QueueMap};
use crate::block::RequestPool;
use crate::drivers::dsa::DsaState;
use crate::drivers::nvme::controller::NvmeState;
use crate::drivers::Device;
use crate::hw::cpu::Cpu;
use crate::hw::iommu::IommuState;
use crate::hw::lapic::FIRST_DEVICE_VECTOR;
use crate::hw::root_port::RootPortState;
use crate::ioengine::job::Job;
use crate::irq::desc::MsiCounters;
use crate::machine::{DeviceKind, Machine};
use crate::settings::Settings;
use crate::sim::{EventQueue, Rng};
use crate::system::{ModelError, Sim};
use crate::workload::{IoEngine, JobConfig};

/// The most I/Os a job without a runtime may ask for (a few minutes of wall time).
pub const MAX_UNBOUNDED_IOS: u64 = 200_000_000;

fn err(job: usize, message: String) -> ModelError {
    ModelError { job: Some(job), message }
}

impl Sim {
    pub(crate) fn build(
        machine: &Machine,
        settings: &Settings,
        jobs: &[JobConfig],
        seed: u64,
    ) -> Result<Sim, ModelError> {
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
            pi_descs: vec![Default::default(); ncpus],
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
                d.deadline = Some(crate::block::mq_deadline::Deadline {
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

    pub(crate) fn add_job(&mut self, i: usize, cfg: &JobConfig, load: &mut [u32]) -> Result<(), ModelError> {
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
}
