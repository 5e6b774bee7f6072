//! Kernel settings under their real names: the kernel command line
//! (`nvme.poll_queues=4`), sysfs writes (`/sys/block/DEV/queue/rq_affinity=2`)
//! and module parameters. Unknown knobs and out-of-range values are errors.

use std::collections::BTreeMap;

use crate::block::elevator::{elevator_type, scheduler_names, scheduler_write, SchedulerWrite};
use crate::error::Error;

/// `/sys/block/DEV/queue/*` of one device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueSettings {
    /// 0, 1 (default) or 2.
    pub rq_affinity: u8,
    /// `scheduler`: `none`, or the name of a scheduler the model has.
    pub scheduler: &'static str,
    /// `iosched/ATTR` writes for that scheduler, in order (a scheduler
    /// switch clears them, as the kernel's new elevator starts from its defaults).
    pub iosched: Vec<(String, u64)>,
    /// 0 (default), 1 (only simple one-hit merges), 2 (no merges).
    pub nomerges: u8,
    /// `nr_requests`: `None` = the driver's tag depth.
    pub nr_requests: Option<u32>,
    /// `max_sectors_kb`: the largest request merging may build, KiB.
    pub max_sectors_kb: u32,
    /// `rotational`: `None` = what the driver says (1 for a SCSI disk).
    pub rotational: Option<bool>,
    /// `queue_affinity` (`--patch io-cpu-affinity-2008`): the CPU that issues
    /// the queue's requests to the device; `None` = the submitting CPU.
    pub queue_affinity: Option<u32>,
}

impl Default for QueueSettings {
    fn default() -> Self {
        QueueSettings {
            rq_affinity: 1,
            scheduler: "none",
            iosched: Vec::new(),
            nomerges: 0,
            nr_requests: None,
            max_sectors_kb: 128,
            rotational: None,
            queue_affinity: None,
        }
    }
}

/// Global Software Interrupt Moderation (`--patch gsim`, Luigi Rizzo's
/// series, v4 of 15 Jan 2026): the knobs of `/proc/irq/soft_moderation/`,
/// each with the series' range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GsimSettings {
    /// `delay_us` (0-500): the largest moderation delay; 0 turns GSIM off.
    pub delay_us: u32,
    /// `target_intr_rate` (0-50,000,000 interrupts/s): the platform-wide
    /// rate above which CPUs moderate; 0 ignores the rate.
    pub target_intr_rate: u32,
    /// `hardirq_percent` (0-100): the share of a CPU's time in hardirq above
    /// which it moderates; 0 ignores it.
    pub hardirq_percent: u32,
    /// `update_ms` (1-100): the epoch over which the rates are measured.
    pub update_ms: u32,
    /// `scale_cpus` (50-1000, percent): the correction to the count of CPUs
    /// handling interrupts.
    pub scale_cpus: u32,
    /// `increase_factor` (8-128): the controller's step (write-only in the series).
    pub increase_factor: u32,
    /// IRQ numbers whose moderation was turned off (`/proc/irq/N/soft_moderation=0`).
    pub off: Vec<u32>,
}

impl GsimSettings {
    /// `--patch gsim`: the values the series suggests ("delay_us=100,
    /// target_irq_rate=1000000, hardirq_percent=70 are a very good starting
    /// point"), its defaults for the rest, and moderation on for every device IRQ.
    pub fn suggested() -> GsimSettings {
        GsimSettings {
            delay_us: 100,
            target_intr_rate: 1_000_000,
            hardirq_percent: 70,
            update_ms: 5,
            scale_cpus: 150,
            increase_factor: 8,
            off: Vec::new(),
        }
    }

    /// `/proc/irq/soft_moderation/NAME=VALUE`.
    pub(crate) fn write(&mut self, path: &str, name: &str, value: &str) -> Result<(), Error> {
        let (field, lo, hi) = match name {
            "delay_us" => (&mut self.delay_us, 0, 500),
            // v1-v3 called it target_irq_rate.
            "target_intr_rate" | "target_irq_rate" => (&mut self.target_intr_rate, 0, 50_000_000),
            "hardirq_percent" => (&mut self.hardirq_percent, 0, 100),
            "update_ms" => (&mut self.update_ms, 1, 100),
            "scale_cpus" => (&mut self.scale_cpus, 50, 1000),
            "increase_factor" => (&mut self.increase_factor, 8, 128),
            "timer_rounds" => {
                return Err(Error::not_modelled(format!(
                    "{path}: timer_rounds is the v1-v2 series' knob (its timer polled the handlers again); blksim models v4, which has none"
                )))
            }
            n => {
                return Err(Error::bad_input(format!(
                    "{path}: unknown knob '{n}' (expected delay_us, target_intr_rate, hardirq_percent, update_ms, scale_cpus or increase_factor)"
                )))
            }
        };
        *field = parse_num(path, value, lo, hi)? as u32;
        Ok(())
    }
}

/// null_blk module parameters (`null_blk.irqmode=2` ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NullBlkSettings {
    /// Hardware queues (`submit_queues`).
    pub submit_queues: u32,
    /// 0 none (complete in the submitter's context), 1 softirq, 2 timer.
    pub irqmode: u8,
    /// irqmode=2: the timer's delay, ns.
    pub completion_nsec: u64,
    /// Tags per hardware queue.
    pub hw_queue_depth: u32,
    /// Poll queues (`poll_queues`, default 1 as null_blk's `g_poll_queues`):
    /// REQ_POLLED requests wait on the queue's poll list until `null_poll`.
    pub poll_queues: u32,
}

impl Default for NullBlkSettings {
    fn default() -> Self {
        NullBlkSettings { submit_queues: 1, irqmode: 1, completion_nsec: 10_000, hw_queue_depth: 64, poll_queues: 1 }
    }
}

/// How device DMA is mapped (`iommu=`, `iommu.passthrough=`, `iommu.strict=`,
/// `intel_iommu=`, `amd_iommu=`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IommuDma {
    /// Translated, invalidations batched in a flush queue
    /// (`iommu.strict=0`, CONFIG_IOMMU_DEFAULT_DMA_LAZY: the default).
    #[default]
    Lazy,
    /// Translated, each unmap invalidates the IOTLB (`iommu.strict=1`).
    Strict,
    /// Identity-mapped: dma-direct (`iommu=pt`, `iommu.passthrough=1`).
    Passthrough,
    /// No DMA translation at all (`intel_iommu=off`, `amd_iommu=off`, `iommu=off`).
    Off,
}

/// What a REQ_POLLED bio to a queue without poll queues gets
/// (`blksim.polled_unsupported=`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PolledUnsupported {
    /// Linux up to 6.10 (the modelled kernel): `submit_bio_noacct` clears
    /// the polled flag (`bio_clear_polled`); the request goes to an
    /// interrupt queue and completes by interrupt while the io_uring task
    /// keeps spinning in `io_do_iopoll`.
    #[default]
    Clear,
    /// Linux 6.11 and later (958148a6ac06 removed the fallback): the bio
    /// ends at once with BLK_STS_NOTSUPP, the CQE carries -EOPNOTSUPP.
    Eopnotsupp,
}

/// Every knob, resolved with the kernel's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// `intremap=posted_msi`: post device MSIs (needs an IOMMU that can post).
    pub posted_msi: bool,
    /// `intremap=nopost`: posting disabled even if asked for.
    pub intremap_nopost: bool,
    /// The kernel's `MAX_POSTED_MSI_COALESCING_LOOP` (3).
    pub max_posted_msi_coalescing_loop: u32,
    /// `nvme.poll_queues`.
    pub nvme_poll_queues: u32,
    /// `nvme.write_queues`.
    pub nvme_write_queues: u32,
    /// `nvme.io_queue_depth` (2..4095, default 1024).
    pub nvme_io_queue_depth: u32,
    /// `blksim.polled_unsupported=clear|eopnotsupp`: polled I/O to a queue
    /// without poll queues (6.10's fallback, or 6.11's error).
    pub polled_unsupported: PolledUnsupported,
    /// DMA mapping: translated (lazy or strict), passthrough, or off.
    pub iommu_dma: IommuDma,
    /// `nosmt` (or `/sys/devices/system/cpu/smt/control=off`): each core's
    /// second thread is offline from boot.
    pub nosmt: bool,
    /// null_blk's module parameters.
    pub null_blk: NullBlkSettings,
    /// Per device name (e.g. `nvme0n1`); devices not named here have the defaults.
    pub queues: BTreeMap<String, QueueSettings>,
    /// The 2024 mq-deadline scalability series (`--patch mq-deadline-2024`):
    /// serialised dispatch, per-CPU insertion buckets, merges skipped when contended.
    pub patch_mq_deadline_2024: bool,
    /// The 2008 io-cpu-affinity branch (`--patch io-cpu-affinity-2008`):
    /// `queue_affinity`, and `rq_affinity` as the branch defined it.
    pub patch_io_cpu_affinity_2008: bool,
    /// `--patch dma-premap`: fixed buffers' DMA addresses mapped once, at registration.
    pub patch_dma_premap: bool,
    /// `--patch hybrid-iopoll`: IOPOLL rings set up with IORING_SETUP_HYBRID_IOPOLL.
    pub patch_hybrid_iopoll: bool,
    /// `--patch gsim`: Global Software Interrupt Moderation and its knobs.
    pub gsim: Option<Box<GsimSettings>>,
    /// `/proc/irq/N/smp_affinity_list` writes: IRQ number -> CPUs.
    pub irq_affinity: BTreeMap<u32, Vec<u32>>,
    /// NVMe Interrupt Coalescing (Feature 08h) per controller (`nvme0`):
    /// (Aggregation Threshold, 0's based; Aggregation Time, 100 µs units).
    pub nvme_interrupt_coalescing: BTreeMap<String, (u8, u8)>,
    /// The command line and writes as given, for the report.
    pub given: Vec<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            posted_msi: false,
            intremap_nopost: false,
            max_posted_msi_coalescing_loop: 3,
            nvme_poll_queues: 0,
            nvme_write_queues: 0,
            nvme_io_queue_depth: 1024,
            polled_unsupported: PolledUnsupported::Clear,
            iommu_dma: IommuDma::Lazy,
            nosmt: false,
            null_blk: NullBlkSettings::default(),
            queues: BTreeMap::new(),
            irq_affinity: BTreeMap::new(),
            nvme_interrupt_coalescing: BTreeMap::new(),
            patch_mq_deadline_2024: false,
            patch_io_cpu_affinity_2008: false,
            patch_dma_premap: false,
            patch_hybrid_iopoll: false,
            gsim: None,
            given: Vec::new(),
        }
    }
}

fn parse_num(knob: &str, value: &str, lo: u64, hi: u64) -> Result<u64, Error> {
    let v: u64 =
        value.trim().parse().map_err(|_| Error::bad_input(format!("{knob}: expected an integer, got '{value}'")))?;
    if v < lo || v > hi {
        return Err(Error::bad_input(format!("{knob}={v} is out of range (expected {lo}..{hi})")));
    }
    Ok(v)
}

/// A time like `10ms`, `2.5ms`, `100us`, `250ns` or `1s` (no unit: seconds), in ns.
pub fn parse_time_ns(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let scale = match unit {
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "s" | "" => 1e9,
        u => return Err(format!("time '{s}': unknown unit '{u}' (expected ns, us, ms or s)")),
    };
    let v: f64 = num.parse().map_err(|_| format!("time '{s}': expected a number with ns, us, ms or s"))?;
    if !(v >= 0.0 && v.is_finite()) {
        return Err(format!("time '{s}': must be a non-negative number"));
    }
    Ok((v * scale).round() as u64)
}

/// `TIME:PATH=VALUE` (`5ms:/proc/irq/130/smp_affinity_list=2`,
/// `8ms:/sys/devices/system/cpu/cpu3/online=0`): a write at a point of the run.
pub fn parse_timed_write(s: &str) -> Result<(u64, TimedAction), Error> {
    let bad = |e: String| Error::bad_input(format!("--at '{s}': {e}"));
    let (time, write) = s
        .split_once(':')
        .ok_or_else(|| bad("expected TIME:PATH=VALUE, e.g. 5ms:/proc/irq/130/smp_affinity_list=2".into()))?;
    let at = parse_time_ns(time).map_err(bad)?;
    let (path, value) = write.split_once('=').ok_or_else(|| bad("expected PATH=VALUE after the time".into()))?;
    let parts: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    let action = match parts.as_slice() {
        ["", "proc", "irq", n, "smp_affinity_list"] => TimedAction::IrqAffinity {
            irq_number: n.parse().map_err(|_| bad(format!("'{n}' is not an IRQ number")))?,
            cpus: parse_cpu_list(value).map_err(bad)?,
        },
        // GSIM's knobs (checked against the patch when the run is built).
        ["", "proc", "irq", "soft_moderation", knob] => {
            GsimSettings::suggested().write(path, knob, value).map_err(|e| e.context(format!("--at '{s}'")))?;
            TimedAction::GsimKnob { knob: knob.to_string(), value: value.trim().to_string() }
        }
        ["", "proc", "irq", n, "soft_moderation"] => TimedAction::GsimIrq {
            irq_number: n.parse().map_err(|_| bad(format!("'{n}' is not an IRQ number")))?,
            on: parse_num(path, value, 0, 1).map_err(|e| e.context(format!("--at '{s}'")))? == 1,
        },
        ["", "sys", "devices", "system", "cpu", c, "online"] if c.starts_with("cpu") => {
            let cpu = c[3..].parse().map_err(|_| bad(format!("'{c}' is not a CPU")))?;
            match value.trim() {
                "0" => TimedAction::CpuOffline { cpu },
                "1" => TimedAction::CpuOnline { cpu },
                v => return Err(bad(format!("online takes 0 or 1, got '{v}'"))),
            }
        }
        _ => {
            return Err(bad(
                "unknown path (expected /proc/irq/N/smp_affinity_list, /sys/devices/system/cpu/cpuN/online, or with --patch gsim /proc/irq/soft_moderation/KNOB and /proc/irq/N/soft_moderation)".into(),
            ))
        }
    };
    Ok((at, action))
}

/// A CPU list like `0-3,8`.
pub fn parse_cpu_list(s: &str) -> Result<Vec<u32>, String> {
    let mut cpus = Vec::new();
    for part in s.trim().split(',') {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse::<u32>(), b.trim().parse::<u32>()),
            None => (part.trim().parse::<u32>(), part.trim().parse::<u32>()),
        };
        match (lo, hi) {
            (Ok(_), Ok(hi)) if hi >= MAX_CPUS => {
                return Err(format!(
                    "'{s}': CPU {hi} is beyond the largest CPU number Linux supports ({})",
                    MAX_CPUS - 1
                ))
            }
            (Ok(lo), Ok(hi)) if lo <= hi => cpus.extend(lo..=hi),
            _ => return Err(format!("'{s}' is not a CPU list (expected e.g. 0-3,8)")),
        }
    }
    Ok(cpus)
}

/// The most CPUs Linux supports (x86-64's largest NR_CPUS, with MAXSMP): the
/// bound of CPU lists and of a machine's CPU count.
pub const MAX_CPUS: u32 = 8192;

/// An action at a point of virtual time, written as on a real machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TimedAction {
    /// `echo CPUS > /proc/irq/N/smp_affinity_list`.
    IrqAffinity {
        /// The IRQ number (`/proc/irq/N`).
        irq_number: u32,
        /// The CPUs written (x86 delivers to the first).
        cpus: Vec<u32>,
    },
    /// `echo 0 > /sys/devices/system/cpu/cpuN/online`.
    CpuOffline {
        /// The CPU going offline.
        cpu: u32,
    },
    /// `echo 1 > /sys/devices/system/cpu/cpuN/online`.
    CpuOnline {
        /// The CPU coming back.
        cpu: u32,
    },
    /// `echo VALUE > /proc/irq/soft_moderation/KNOB` (`--patch gsim`).
    GsimKnob {
        /// The knob (`delay_us`, `target_intr_rate`, ...).
        knob: String,
        /// The value written.
        value: String,
    },
    /// `echo 0|1 > /proc/irq/N/soft_moderation` (`--patch gsim`).
    GsimIrq {
        /// The IRQ number (`/proc/irq/N`).
        irq_number: u32,
        /// Moderation on.
        on: bool,
    },
}

/// Out-of-tree patch sets blksim models, by the name `--patch` takes.
pub const PATCHES: &[(&str, &str)] = &[
    ("mq-deadline-2024", "mq-deadline scalability series (RFC v2, Jan 2024, not merged): serialised dispatch, per-CPU insertion buckets, merges skipped when the lock is contended"),
    ("dma-premap", "DMA addresses of io_uring's registered (fixed) buffers mapped once, when they are registered: an I/O on a fixed buffer looks its address up instead of mapping and unmapping it (a what-if, not in mainline)"),
    ("io-cpu-affinity-2008", "the io-cpu-affinity branch of 2008 (2.6.25 era): queue_affinity (the CPU that issues a queue's requests: the submitter hands them over by IPI) and rq_affinity as it then was (any value but 0 completes on the submitting CPU's SMT group)"),
    ("gsim", "Global Software Interrupt Moderation (Luigi Rizzo's series, v4 of 15 Jan 2026, out of tree): after a device IRQ's handler, a CPU whose measured interrupt rate (its own and the platform's, against target_intr_rate) or hardirq share (against hardirq_percent) is high disables the IRQ and re-enables it from a per-CPU hrtimer after its adaptive delay (up to delay_us); an interrupt that comes meanwhile masks the MSI-X vector and is resent at the timer. Set with the series' suggested values (delay_us=100, target_intr_rate=1000000, hardirq_percent=70, update_ms=5, scale_cpus=150) and on for every device IRQ; change them with --set /proc/irq/soft_moderation/KNOB=V and /proc/irq/N/soft_moderation=0"),
    ("hybrid-iopoll", "io_uring's hybrid IOPOLL (Linux 6.13, IORING_SETUP_HYBRID_IOPOLL) on every IOPOLL ring: before its first poll each request sleeps half the ring's least measured poll time. Neither fio's io_uring engine nor t/io_uring has an option that sets the flag (fio 3.42): the patch stands for one that sets it with hipri / -p1"),
];

/// What each patch needs to change a run (`crate::run::idle_patches` says so when a run had none of it).
pub const PATCH_REACH: &[(&str, &str)] = &[
    ("mq-deadline-2024", "a device that does I/O under the mq-deadline scheduler (--set /sys/block/DEV/queue/scheduler=mq-deadline)"),
    ("dma-premap", "a job with io_uring fixed buffers (fixedbufs=1) on a device whose DMA goes through the IOMMU's translation (iommu.strict=0 or 1)"),
    ("io-cpu-affinity-2008", "block I/O to a device"),
    ("gsim", "device interrupts (an interrupt-driven queue's MSI-X vector) handled by a CPU whose interrupt rate or hardirq share is above its target"),
    ("hybrid-iopoll", "an io_uring job with IOPOLL that polls (fio's io_uring engine with hipri=1, or t/io_uring -p1)"),
];

/// The kernel and module parameters `Settings::apply_cmdline` models (`nosmt` also bare).
pub const CMDLINE_PARAMS: &[&str] = &[
    "intremap",
    "nosmt",
    "iommu",
    "iommu.passthrough",
    "iommu.strict",
    "intel_iommu",
    "amd_iommu",
    "nvme.poll_queues",
    "nvme.write_queues",
    "nvme.io_queue_depth",
    "null_blk.submit_queues",
    "null_blk.irqmode",
    "null_blk.completion_nsec",
    "null_blk.hw_queue_depth",
    "null_blk.poll_queues",
    "blksim.max_posted_msi_coalescing_loop",
    "blksim.polled_unsupported",
];

impl Settings {
    /// `--patch NAME`.
    pub fn apply_patch(&mut self, name: &str) -> Result<(), Error> {
        match name {
            "mq-deadline-2024" => self.patch_mq_deadline_2024 = true,
            "io-cpu-affinity-2008" => self.patch_io_cpu_affinity_2008 = true,
            "dma-premap" => self.patch_dma_premap = true,
            "hybrid-iopoll" => self.patch_hybrid_iopoll = true,
            "gsim" => self.gsim = Some(Box::new(GsimSettings::suggested())),
            _ => {
                let known: Vec<&str> = PATCHES.iter().map(|p| p.0).collect();
                return Err(Error::bad_input(format!("--patch {name}: unknown patch (known: {})", known.join(", "))));
            }
        }
        self.given.push(format!("patch:{name}"));
        Ok(())
    }

    /// Does device DMA go through the IOMMU's translation?
    pub fn dma_translated(&self) -> bool {
        matches!(self.iommu_dma, IommuDma::Lazy | IommuDma::Strict)
    }

    /// Are PCI MSIs posted? (`intremap=posted_msi` without `nopost`.)
    pub fn posting(&self) -> bool {
        self.posted_msi && !self.intremap_nopost
    }

    /// The queue settings of `device` (the defaults if none were written).
    pub fn queue(&self, device: &str) -> QueueSettings {
        self.queues.get(device).cloned().unwrap_or_default()
    }

    /// Apply a kernel command line: whitespace-separated `name=value` words.
    pub fn apply_cmdline(&mut self, cmdline: &str) -> Result<(), Error> {
        for word in cmdline.split_whitespace() {
            // Bare words the kernel takes: `nosmt` (boot with one thread per core).
            if word == "nosmt" {
                self.nosmt = true;
                self.given.push(word.to_string());
                continue;
            }
            let (name, value) = word
                .split_once('=')
                .ok_or_else(|| Error::bad_input(format!("kernel command line: '{word}' is not name=value")))?;
            self.apply_param(name, value)?;
            self.given.push(word.to_string());
        }
        Ok(())
    }

    fn apply_param(&mut self, name: &str, value: &str) -> Result<(), Error> {
        match name {
            "nvme.poll_queues" => self.nvme_poll_queues = parse_num(name, value, 0, 4096)? as u32,
            "nvme.write_queues" => self.nvme_write_queues = parse_num(name, value, 0, 4096)? as u32,
            "nvme.io_queue_depth" => self.nvme_io_queue_depth = parse_num(name, value, 2, 4095)? as u32,
            "null_blk.submit_queues" => self.null_blk.submit_queues = parse_num(name, value, 1, 4096)? as u32,
            "null_blk.irqmode" => self.null_blk.irqmode = parse_num(name, value, 0, 2)? as u8,
            "null_blk.completion_nsec" => self.null_blk.completion_nsec = parse_num(name, value, 0, 10_000_000_000)?,
            "null_blk.hw_queue_depth" => self.null_blk.hw_queue_depth = parse_num(name, value, 1, 65536)? as u32,
            // DMA translation. Interrupt remapping stays on in every mode
            // (x2APIC needs it; `intremap=off` is refused separately).
            "iommu" => match value.trim() {
                "pt" => self.iommu_dma = IommuDma::Passthrough,
                "nopt" | "on" | "force" => {
                    if !self.dma_translated() {
                        self.iommu_dma = IommuDma::Lazy;
                    }
                }
                "off" => self.iommu_dma = IommuDma::Off,
                v => return Err(Error::bad_input(format!("iommu={v}: expected pt, nopt, on, force or off"))),
            },
            "iommu.passthrough" => {
                self.iommu_dma = if parse_num(name, value, 0, 1)? == 1 { IommuDma::Passthrough } else { IommuDma::Lazy }
            }
            "iommu.strict" => {
                let strict = parse_num(name, value, 0, 1)? == 1;
                if self.dma_translated() {
                    self.iommu_dma = if strict { IommuDma::Strict } else { IommuDma::Lazy };
                }
            }
            "intel_iommu" | "amd_iommu" => {
                for opt in value.split(',') {
                    match opt {
                        "off" => self.iommu_dma = IommuDma::Off,
                        "on" | "sm_on" | "sm_off" | "igfx_off" | "fullflush" | "force_isolation" => {}
                        o => {
                            return Err(Error::bad_input(format!(
                                "{name}: unknown option '{o}' (expected on, off, sm_on, sm_off, igfx_off)"
                            )))
                        }
                    }
                }
            }
            // nosmt=force: as nosmt, and SMT cannot be turned back on (no runtime control is modelled).
            "nosmt" => match value.trim() {
                "force" => self.nosmt = true,
                v => return Err(Error::bad_input(format!("nosmt={v}: expected nosmt or nosmt=force"))),
            },
            "null_blk.poll_queues" => self.null_blk.poll_queues = parse_num(name, value, 0, 4096)? as u32,
            "blksim.polled_unsupported" => {
                self.polled_unsupported = match value.trim() {
                    "clear" => PolledUnsupported::Clear,
                    "eopnotsupp" => PolledUnsupported::Eopnotsupp,
                    v => {
                        return Err(Error::bad_input(format!(
                            "blksim.polled_unsupported: '{v}' (expected clear, Linux <= 6.10's fallback to interrupts, or eopnotsupp, 6.11's error)"
                        )))
                    }
                }
            }
            // intremap takes a comma-separated list (on, off, nosid, no_x2apic_optout, nopost, posted_msi).
            "intremap" => {
                for opt in value.split(',') {
                    match opt {
                        "posted_msi" => self.posted_msi = true,
                        "nopost" => self.intremap_nopost = true,
                        "on" | "nosid" | "no_x2apic_optout" => {}
                        "off" => {
                            return Err(Error::not_modelled(
                                "intremap=off: running without interrupt remapping is not modelled",
                            ))
                        }
                        o => {
                            return Err(Error::bad_input(format!(
                                "intremap: unknown option '{o}' (expected on, nosid, no_x2apic_optout, nopost, posted_msi)"
                            )))
                        }
                    }
                }
            }
            // MAX_POSTED_MSI_COALESCING_LOOP is a build-time constant in the kernel (3); blksim lets
            // experiments change it under this name.
            "blksim.max_posted_msi_coalescing_loop" => {
                self.max_posted_msi_coalescing_loop = parse_num(name, value, 1, 64)? as u32
            }
            _ => {
                return Err(Error::bad_input(format!(
                    "unknown kernel parameter '{name}' (known: {})",
                    CMDLINE_PARAMS.join(", ")
                )))
            }
        }
        Ok(())
    }

    /// Apply one `PATH=VALUE` write (`/sys/block/nvme0n1/queue/rq_affinity=2`,
    /// `/sys/module/nvme/parameters/poll_queues=4`). `devices` are the machine's block devices.
    pub fn apply_write(&mut self, assignment: &str, devices: &[String]) -> Result<(), Error> {
        let (path, value) = assignment
            .split_once('=')
            .ok_or_else(|| Error::bad_input(format!("--set '{assignment}': expected PATH=VALUE")))?;
        let parts: Vec<&str> = path.trim_end_matches('/').split('/').collect();
        match parts.as_slice() {
            ["", "sys", "block", dev, "queue", "iosched", attr] => {
                if !devices.iter().any(|d| d == dev) {
                    return Err(Error::bad_input(format!(
                        "{path}: no block device '{dev}' on this machine (devices: {})",
                        devices.join(", ")
                    )));
                }
                let mut q = self.queue(dev);
                // The iosched/ directory is the current scheduler's (set it first).
                let Some(e) = elevator_type(q.scheduler) else {
                    return Err(Error::bad_input(format!(
                        "{path}: /sys/block/{dev}/queue/iosched exists only with a scheduler (set /sys/block/{dev}/queue/scheduler first)"
                    )));
                };
                if !e.attrs.contains(attr) {
                    return Err(Error::bad_input(format!(
                        "{path}: {} has no attribute '{attr}' (it has {})",
                        e.name,
                        if e.attrs.is_empty() { "none modelled".to_string() } else { e.attrs.join(", ") }
                    )));
                }
                let v = parse_num(path, value, 0, u64::MAX)?;
                q.iosched.retain(|(a, _)| a != attr);
                q.iosched.push((attr.to_string(), v));
                self.queues.insert(dev.to_string(), q);
            }
            ["", "sys", "block", dev, "queue", attr] => {
                if !devices.iter().any(|d| d == dev) {
                    return Err(Error::bad_input(format!(
                        "{path}: no block device '{dev}' on this machine (devices: {})",
                        devices.join(", ")
                    )));
                }
                let mut q = self.queue(dev);
                match *attr {
                    "rq_affinity" => q.rq_affinity = parse_num(path, value, 0, 2)? as u8,
                    "nomerges" => q.nomerges = parse_num(path, value, 0, 2)? as u8,
                    "nr_requests" => q.nr_requests = Some(parse_num(path, value, 4, 65536)? as u32),
                    "max_sectors_kb" => q.max_sectors_kb = parse_num(path, value, 4, 32768)? as u32,
                    "rotational" => q.rotational = Some(parse_num(path, value, 0, 1)? == 1),
                    // Checked against the machine's CPUs and the patch when the run is built.
                    "queue_affinity" => q.queue_affinity = Some(parse_num(path, value, 0, 65535)? as u32),
                    "scheduler" => {
                        let v = value.trim();
                        let to = match scheduler_write(v) {
                            SchedulerWrite::Known(to) => to,
                            SchedulerWrite::NotModelled => {
                                return Err(Error::not_modelled(format!(
                                    "{path}={value}: the {v} scheduler is not modelled yet (only none or {})",
                                    scheduler_names()
                                )))
                            }
                            SchedulerWrite::Unknown => {
                                return Err(Error::bad_input(format!(
                                    "{path}: unknown scheduler '{v}' (expected none or {})",
                                    scheduler_names()
                                )))
                            }
                        };
                        // elevator_change: the scheduler in use is left as it is (its
                        // attributes too); a switch starts the new one from its defaults.
                        if to != q.scheduler {
                            q.scheduler = to;
                            q.iosched.clear();
                        }
                    }
                    a => {
                        return Err(Error::bad_input(format!(
                            "{path}: unknown queue attribute '{a}' (known: rq_affinity, scheduler, iosched/ATTR of the scheduler, nomerges, nr_requests, max_sectors_kb, rotational, queue_affinity with --patch io-cpu-affinity-2008)"
                        )))
                    }
                }
                self.queues.insert(dev.to_string(), q);
            }
            ["", "sys", "module", module, "parameters", param] => self.apply_param(&format!("{module}.{param}"), value)?,
            ["", "sys", "class", "nvme", ctrl, "blksim", "interrupt_coalescing"] => {
                if !devices.iter().any(|d| d.strip_prefix(ctrl).is_some_and(|n| n.starts_with('n'))) {
                    return Err(Error::bad_input(format!("{path}: no NVMe controller '{ctrl}' on this machine")));
                }
                let fields = value.split_once(',').ok_or_else(|| {
                    Error::bad_input(format!(
                        "{path}: expected THR,TIME (Aggregation Threshold, 0's based, and Aggregation Time in 100 us units, each 0..255)"
                    ))
                })?;
                let thr = parse_num(path, fields.0, 0, 255)? as u8;
                let time = parse_num(path, fields.1, 0, 255)? as u8;
                self.nvme_interrupt_coalescing.insert(ctrl.to_string(), (thr, time));
            }
            ["", "sys", "devices", "system", "cpu", "smt", "control"] => match value.trim() {
                "on" => self.nosmt = false,
                "off" | "forceoff" => self.nosmt = true,
                v => {
                    return Err(Error::bad_input(format!("{path}: '{v}' (expected on, off or forceoff)")))
                }
            },
            ["", "proc", "irq", "soft_moderation", knob] => {
                let g = self.gsim.as_mut().ok_or_else(|| {
                    Error::bad_input(format!("{path}: /proc/irq/soft_moderation exists only with --patch gsim"))
                })?;
                g.write(path, knob, value)?;
            }
            ["", "proc", "irq", irq, "soft_moderation"] => {
                let g = self.gsim.as_mut().ok_or_else(|| {
                    Error::bad_input(format!("{path}: /proc/irq/N/soft_moderation exists only with --patch gsim"))
                })?;
                let n: u32 = irq.parse().map_err(|_| Error::bad_input(format!("{path}: '{irq}' is not an IRQ number")))?;
                // Checked against the machine's IRQs when the run is built.
                g.off.retain(|&o| o != n);
                if parse_num(path, value, 0, 1)? == 0 {
                    g.off.push(n);
                }
            }
            ["", "proc", "irq", irq, "smp_affinity_list"] => {
                let n: u32 = irq.parse().map_err(|_| Error::bad_input(format!("{path}: '{irq}' is not an IRQ number")))?;
                let cpus = parse_cpu_list(value).map_err(|e| Error::bad_input(format!("{path}: {e}")))?;
                self.irq_affinity.insert(n, cpus);
            }
            _ => {
                return Err(Error::bad_input(format!(
                    "--set '{path}': unknown knob (expected /sys/block/DEV/queue/ATTR, /sys/module/MOD/parameters/PARAM, /sys/class/nvme/nvmeN/blksim/interrupt_coalescing, /proc/irq/N/smp_affinity_list, or with --patch gsim /proc/irq/soft_moderation/KNOB and /proc/irq/N/soft_moderation)"
                )))
            }
        }
        self.given.push(assignment.to_string());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_parameter_is_one_apply_cmdline_knows() {
        for name in CMDLINE_PARAMS {
            // A value no parameter takes: the error is about the value, never "unknown".
            let e = Settings::default().apply_cmdline(&format!("{name}=?")).unwrap_err();
            assert!(!e.message.contains("unknown kernel parameter"), "{name}: {}", e.message);
        }
        let e = Settings::default().apply_cmdline("nvme.bogus=1").unwrap_err();
        assert!(e.message.contains("unknown kernel parameter 'nvme.bogus'"), "{}", e.message);
    }

    #[test]
    fn cmdline_and_sysfs_set_knobs() {
        let mut s = Settings::default();
        s.apply_cmdline("nvme.poll_queues=4 nvme.io_queue_depth=256").unwrap();
        s.apply_write("/sys/block/nvme0n1/queue/rq_affinity=2", &["nvme0n1".into()]).unwrap();
        assert_eq!(s.nvme_poll_queues, 4);
        assert_eq!(s.nvme_io_queue_depth, 256);
        assert_eq!(s.queue("nvme0n1").rq_affinity, 2);
        assert_eq!(s.queue("nvme1n1").rq_affinity, 1);
    }

    #[test]
    fn intremap_takes_a_list_and_nopost_wins() {
        let mut s = Settings::default();
        s.apply_cmdline("intremap=on,posted_msi").unwrap();
        assert!(s.posting());
        s.apply_cmdline("intremap=nopost").unwrap();
        assert!(!s.posting());
        assert!(s.apply_cmdline("intremap=bogus").unwrap_err().message.contains("bogus"));
        assert!(s.apply_cmdline("blksim.max_posted_msi_coalescing_loop=0").unwrap_err().message.contains("1..64"));
    }

    #[test]
    fn timed_writes_parse_with_their_time() {
        assert_eq!(
            parse_timed_write("1.5ms:/proc/irq/130/smp_affinity_list=2-3").unwrap(),
            (1_500_000, TimedAction::IrqAffinity { irq_number: 130, cpus: vec![2, 3] })
        );
        assert_eq!(
            parse_timed_write("2ms:/sys/devices/system/cpu/cpu3/online=0").unwrap(),
            (2_000_000, TimedAction::CpuOffline { cpu: 3 })
        );
        assert_eq!(
            parse_timed_write("2ms:/sys/devices/system/cpu/cpu3/online=1").unwrap(),
            (2_000_000, TimedAction::CpuOnline { cpu: 3 })
        );
        assert!(parse_timed_write("2ms:/sys/devices/system/cpu/cpu3/online=2")
            .unwrap_err()
            .message
            .contains("online takes 0 or 1, got '2'"));
        assert!(parse_timed_write("/proc/irq/1/smp_affinity_list=1").unwrap_err().message.contains("TIME:PATH=VALUE"));
        assert!(parse_timed_write("2qs:/proc/irq/1/smp_affinity_list=1").unwrap_err().message.contains("unknown unit"));
    }

    #[test]
    fn out_of_range_and_unknown_knobs_are_errors() {
        let mut s = Settings::default();
        let e = s.apply_write("/sys/block/nvme0n1/queue/rq_affinity=3", &["nvme0n1".into()]).unwrap_err();
        assert!(e.message.contains("out of range") && e.message.contains("0..2"), "{e}");
        let e = s.apply_cmdline("nvme.io_queue_depth=5000").unwrap_err();
        assert!(e.message.contains("2..4095"), "{e}");
        let e = s.apply_cmdline("nvme.bogus=1").unwrap_err();
        assert!(e.message.contains("unknown kernel parameter 'nvme.bogus'"), "{e}");
        let e = s.apply_write("/sys/block/sdz/queue/rq_affinity=1", &["nvme0n1".into()]).unwrap_err();
        assert!(e.message.contains("no block device 'sdz'"), "{e}");
        assert_eq!(e.kind, crate::error::ErrorKind::BadInput);
    }

    #[test]
    fn knobs_that_need_a_missing_mechanism_are_not_modelled_rather_than_bad() {
        use crate::error::ErrorKind::{BadInput, NotModelled};
        let mut s = Settings::default();
        let dev = ["nvme0n1".to_string()];
        assert_eq!(s.apply_cmdline("intremap=off").unwrap_err().kind, NotModelled);
        assert_eq!(s.apply_write("/sys/block/nvme0n1/queue/scheduler=bfq", &dev).unwrap_err().kind, NotModelled);
        assert_eq!(s.apply_write("/sys/block/nvme0n1/queue/scheduler=cfq", &dev).unwrap_err().kind, BadInput);
        assert_eq!(parse_timed_write("1ms:/proc/irq/x/smp_affinity_list=1").unwrap_err().kind, BadInput);
        assert_eq!(s.apply_patch("nope").unwrap_err().kind, BadInput);
    }

    #[test]
    fn iosched_attributes_belong_to_the_current_scheduler_and_a_switch_clears_them() {
        let mut s = Settings::default();
        let dev = ["nvme0n1".to_string()];
        let lat = "/sys/block/nvme0n1/queue/iosched/read_lat_nsec=500000";
        let e = s.apply_write(lat, &dev).unwrap_err();
        assert!(e.message.contains("set /sys/block/nvme0n1/queue/scheduler first"), "{e}");
        s.apply_write("/sys/block/nvme0n1/queue/scheduler=kyber", &dev).unwrap();
        s.apply_write(lat, &dev).unwrap();
        assert_eq!(s.queue("nvme0n1").iosched, [("read_lat_nsec".to_string(), 500_000)]);
        let e = s.apply_write("/sys/block/nvme0n1/queue/iosched/fifo_batch=16", &dev).unwrap_err();
        assert!(
            e.message.contains("kyber has no attribute 'fifo_batch' (it has read_lat_nsec, write_lat_nsec)"),
            "{e}"
        );
        let e = s.apply_write("/sys/block/nvme0n1/queue/iosched/write_lat_nsec=x", &dev).unwrap_err();
        assert!(e.message.contains("expected an integer"), "{e}");
        // The scheduler in use written again: elevator_change leaves it (and its attributes).
        s.apply_write("/sys/block/nvme0n1/queue/scheduler=kyber", &dev).unwrap();
        assert_eq!(s.queue("nvme0n1").iosched.len(), 1);
        s.apply_write("/sys/block/nvme0n1/queue/scheduler=mq-deadline", &dev).unwrap();
        assert!(s.queue("nvme0n1").iosched.is_empty(), "the new elevator starts from its defaults");
        // The kernel's alias for mq-deadline.
        s.apply_write("/sys/block/nvme0n1/queue/scheduler=none", &dev).unwrap();
        s.apply_write("/sys/block/nvme0n1/queue/scheduler=deadline", &dev).unwrap();
        assert_eq!(s.queue("nvme0n1").scheduler, "mq-deadline");
    }
}
