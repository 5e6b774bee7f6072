//! The simulated system: `Sim` wires the subsystems together — the clock
//! and event queue, the CPUs, the interrupt subsystem, the platform, the
//! devices, requests and jobs, each owning its state — and `Event`, what
//! moves them. The kernel paths (the flow modules) are its methods.

use crate::block::{BlockConfig, RequestPool};
use crate::drivers::dsa::DsaClient;
use crate::drivers::Device;
use crate::error::Error;
use crate::fio::job::Job;
use crate::hw::cpu::Cpus;
use crate::hw::{DmaMode, Platform};
use crate::ids::{CpuId, DevId, DsaClientId, HctxId, IdVec, IrqId, JobId, ReqId};
use crate::irq::Interrupts;
use crate::machine::{Costs, Machine};
use crate::settings::TimedAction;
use crate::sim::EventQueue;

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
    /// GSIM's moderation hrtimer of `cpu` expired (`--patch gsim`).
    ModerationTimer { cpu: CpuId },
    /// fio's `--status-interval` is due: the report of the run so far (`RunOptions::status`).
    StatusDump,
}

#[derive(Clone)]
pub(crate) struct Sim {
    /// Virtual time and the events waiting for it.
    pub q: EventQueue<Event>,
    pub machine: Machine,
    pub costs: Costs,
    /// The logical CPUs (with their busy flags, SMT rate and hotplug masks).
    pub cpus: Cpus,
    /// Device IRQs, vectors, MSI counters, posted-interrupt descriptors.
    pub intr: Interrupts,
    /// Root ports, PCIe switches, remapping units, interrupt delivery.
    pub hw: Platform,
    /// How the kernel maps DMA.
    pub dma: DmaMode,
    pub devs: IdVec<DevId, Device>,
    pub reqs: RequestPool,
    /// Block-layer behaviour of the kernel version and patches.
    pub blk: BlockConfig,
    pub jobs: IdVec<JobId, Job>,
    /// DSA clients (the workload of a DSA run).
    pub dsa_clients: IdVec<DsaClientId, DsaClient>,
    /// The timeline being recorded, if asked for.
    pub trace: Option<crate::stats::Trace>,
    /// The run's own state: phases, timed actions, the first failure.
    pub run: RunState,
}

/// The run's own state, beside the model's.
#[derive(Clone)]
pub(crate) struct RunState {
    pub seed: u64,
    /// Bandwidth/IOPS sample interval, ns.
    pub sample_interval_ns: u64,
    /// Actions at points of virtual time (IRQ moves, CPUs going offline).
    pub timed: Vec<TimedAction>,
    /// The first error found while running (a timed action that cannot be
    /// done, a stuck job); later ones are dropped (`RunState::fail`).
    pub failure: Option<Error>,
    pub phase: u32,
    pub phases: u32,
    pub jobs_left: usize,
    /// Where the logging jobs' I/Os go (`RunOptions::io_log`); `None`: into `DirStats::ios`.
    pub io_log: Option<crate::stats::IoLogSink>,
    /// fio's flow groups (`flow_id`).
    pub flows: crate::fio::flow::Flows,
    /// Where fio's `--status-interval` reports go (`RunOptions::status`).
    pub status: Option<crate::run::StatusSink>,
}

impl RunState {
    /// Record `e` as the run's failure unless one was recorded first: the
    /// loop stops with it at its next look.
    pub(crate) fn fail(&mut self, e: Error) {
        self.failure.get_or_insert(e);
    }
}
