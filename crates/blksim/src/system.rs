//! The simulated system: `Sim`, the one owner of all state — hardware
//! (CPUs, root ports, remapping units), kernel objects (IRQs, requests,
//! devices and their queues, tasks) and the event queue — and the events
//! that move it. The kernel paths (the flow modules) are its methods.

use crate::block::RequestPool;
use crate::drivers::dsa::DsaClient;
use crate::drivers::nvme::pci::Foresight;
use crate::drivers::Device;
use crate::error::Error;
use crate::hw::cpu::Cpu;
use crate::hw::delivery::InterruptRouter;
use crate::hw::iommu::RemapUnit;
use crate::hw::pcie::Link;
use crate::hw::root_port::RootPortState;
use crate::ids::{CpuId, DevId, HctxId, IrqId, JobId, ReqId};
use crate::ioengine::job::Job;
use crate::irq::desc::Irq;
use crate::irq::posted_msi::PiDesc;
use crate::irq::vector::VectorTable;
use crate::machine::{Costs, Machine};
use crate::sched::cpumask::CpuMasks;
use crate::settings::TimedAction;
use crate::sim::EventQueue;
use crate::stats::MsiCounters;

/// Something that happened at an instant; the doc says source and target.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Event {
    /// A device sent the CQE write of `req` towards its root port.
    CqeSent { dev: DevId, req: ReqId },
    /// The CQE write of `req` (after its read data) reached the device's root port.
    CqeAtPort { dev: DevId, hctx: HctxId, req: ReqId },
    /// A root port finished the MSI that held the writes behind it.
    RootPortFree { port: u16 },
    /// An interrupt message (MSI or IPI) reached a CPU's local APIC.
    InterruptArrived { cpu: CpuId, vector: u8 },
    /// The IOMMU's posting of a device MSI (vector on cpu) left root port `port`.
    MsiPosted { cpu: CpuId, vector: u8, port: u16 },
    /// A wake-up IPI reached the idle CPU of a woken job.
    TaskWoken { job: JobId },
    /// An hrtimer armed by null_blk (irqmode=2) for `req` expired on `cpu`.
    HrtimerExpired { cpu: CpuId, req: ReqId },
    /// A timed action (index into `Sim::timed`) is due.
    Timed { index: u32 },
    /// `__vector_cleanup` on `cpu` for the old `vector` of a moved `irq`.
    VectorCleanup { cpu: CpuId, vector: u8, irq: IrqId },
    /// The Interrupt Coalescing aggregation timer (of generation `gen`) of
    /// an NVMe queue's vector expired.
    NvmeAggregationTimer { dev: DevId, hctx: HctxId, gen: u32 },
    /// A job's start time (its phase began, plus startdelay) came.
    JobStarted { job: JobId },
    /// CPU hotplug: look again at `cpu` going down (its queues' drain, then the take-down).
    HotplugStep { cpu: CpuId },
    /// The timer of `dev`'s delayed queue run (`hctx->run_work`, armed as generation `gen`) expired.
    RunWorkTimer { dev: DevId, gen: u32 },
    /// The timer of `dev`'s I/O scheduler (armed as generation `gen`) expired.
    ElevatorTimer { dev: DevId, gen: u32 },
    /// A wake-up IPI reached the idle CPU of a woken kworker.
    KworkerWoken { cpu: CpuId },
    /// The runtime of a submitter stuck in a wait that cannot end is over.
    JobStuck { job: JobId },
    /// The hrtimer of a job's `nanosleep` (fio's rate or think time) expired.
    SleepTimerExpired { job: JobId },
}

pub(crate) struct Sim {
    pub q: EventQueue<Event>,
    pub machine: Machine,
    pub costs: Costs,
    pub cpus: Vec<Cpu>,
    /// Per CPU: its posted-interrupt descriptor (`posted_msi_pi_desc`).
    pub pi_descs: Vec<PiDesc>,
    pub devs: Vec<Device>,
    pub irqs: Vec<Irq>,
    /// Which IRQ each vector of each CPU is bound to.
    pub vectors: VectorTable,
    pub root_ports: Vec<RootPortState>,
    /// The upstream links of PCIe switches, shared by the drives behind each.
    pub pcie_switches: Vec<Link>,
    /// The interrupt-remapping units (one per PCIe stack).
    pub iommus: Vec<RemapUnit>,
    /// Each socket's interrupt delivery.
    pub routers: Vec<InterruptRouter>,
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
    /// `--patch io-cpu-affinity-2008`.
    pub patch_io_cpu_affinity_2008: bool,
    pub max_posted_msi_coalescing_loop: u32,
    /// DMA goes through the IOMMU's translation (not `iommu=pt`, an IOMMU present).
    pub dma_translated: bool,
    /// `iommu.strict=1`: each unmap invalidates the IOTLB.
    pub dma_strict: bool,
    /// `--patch dma-premap`: fixed buffers mapped once, at registration.
    pub dma_premap: bool,
    /// `blksim.polled_unsupported`: what a polled bio to a queue that cannot poll gets.
    pub polled_unsupported: crate::settings::PolledUnsupported,
    /// Actions at points of virtual time (IRQ moves, CPUs going offline).
    pub timed: Vec<TimedAction>,
    /// CPU hotplug: which CPUs are online and active.
    pub cpumask: CpuMasks,
    /// An error found while running (a timed action that cannot be done).
    pub failure: Option<Error>,
    /// Vectors retriggered on a new CPU after their old CPU went offline.
    pub retriggered: u64,
    /// DSA clients (the workload of a DSA run).
    pub dsa_clients: Vec<DsaClient>,
    /// The timeline being recorded, if asked for.
    pub trace: Option<crate::stats::Trace>,
    /// Scratch space for foreseeing a drain's wake-ups and IPIs.
    pub foresight: Foresight,
    /// The last foreseen drain's work by stage (`drain_cq`).
    pub drain_bill: crate::hw::cpu::Bill,
    /// The last foreseen drain put completions in an io_comp_batch.
    pub drain_batched: bool,
    pub(crate) phase: u32,
    pub(crate) phases: u32,
    pub(crate) jobs_left: usize,
    pub(crate) seed: u64,
}
