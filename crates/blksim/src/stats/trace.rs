//! A timeline of a run for the Chrome/Perfetto trace viewer: per-CPU slices
//! of task, softirq and hardirq work, interrupt instants, queue-depth
//! counters — recorded only inside a time window so long runs stay small.

/// Which track of a CPU a record is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Track {
    /// The task's user and system time.
    Task,
    /// BLOCK_SOFTIRQ and ksoftirqd.
    Softirq,
    /// Interrupt handlers and interrupt instants.
    Hardirq,
}

impl Track {
    /// Its name in the trace.
    pub fn name(self) -> &'static str {
        match self {
            Track::Task => "task",
            Track::Softirq => "softirq",
            Track::Hardirq => "hardirq",
        }
    }
}

/// What a slice or instant shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceName {
    /// A fio job's task (index into the run's jobs): user or sys time.
    Job {
        /// The job's index.
        job: u32,
        /// User (not system) time.
        user: bool,
    },
    /// A device IRQ's handler (`nvme_irq`, idxd's).
    DeviceIrq,
    /// The posted-MSI notification handler.
    PostedNotification,
    /// The CALL_FUNCTION_SINGLE IPI handler.
    CallFunctionIpi,
    /// The local timer interrupt (hrtimers).
    LocalTimer,
    /// BLOCK_SOFTIRQ at irq exit.
    BlockSoftirq,
    /// ksoftirqd running deferred softirq work.
    Ksoftirqd,
    /// A kworker running kblockd work (a queue run).
    Kworker,
    /// A device MSI reached the CPU (remappable) or was posted to its PIR.
    MsiArrived,
    /// A device MSI posted into the CPU's PIR.
    MsiPosted,
    /// The IOMMU sent a posted-MSI notification to the CPU.
    NotificationSent,
}

impl TraceName {
    /// The name shown on the slice or instant.
    pub fn label(self) -> &'static str {
        match self {
            TraceName::Job { user: true, .. } => "user",
            TraceName::Job { user: false, .. } => "sys",
            TraceName::DeviceIrq => "nvme_irq",
            TraceName::PostedNotification => "posted_msi_notification",
            TraceName::CallFunctionIpi => "call_function_single",
            TraceName::LocalTimer => "local_timer",
            TraceName::BlockSoftirq => "BLOCK_SOFTIRQ",
            TraceName::Ksoftirqd => "ksoftirqd",
            TraceName::Kworker => "kworker/kblockd",
            TraceName::MsiArrived => "MSI",
            TraceName::MsiPosted => "MSI posted",
            TraceName::NotificationSent => "notification",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
/// One record of the timeline.
pub enum TraceRecord {
    /// A CPU ran something over a span of time.
    Slice {
        /// The CPU.
        cpu: u32,
        /// The track it is drawn on.
        track: Track,
        /// What ran.
        name: TraceName,
        /// Start, ns of virtual time.
        start_ns: u64,
        /// End, ns of virtual time.
        end_ns: u64,
    },
    /// Something happened on a CPU at one instant.
    Instant {
        /// The CPU.
        cpu: u32,
        /// The track it is drawn on.
        track: Track,
        /// What happened.
        name: TraceName,
        /// When, ns of virtual time.
        at_ns: u64,
    },
    /// Requests in flight on a device.
    QueueDepth {
        /// The device.
        dev: u16,
        /// When, ns of virtual time.
        at_ns: u64,
        /// Requests in flight then.
        depth: u32,
    },
}

/// The recorded timeline.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    /// The window's start, ns of virtual time.
    pub start_ns: u64,
    /// The window's end, ns of virtual time.
    pub end_ns: u64,
    /// The records, in the order they were made.
    pub records: Vec<TraceRecord>,
    /// Names for `Job` and device indices.
    pub job_names: Vec<String>,
    /// Device names, by device index.
    pub dev_names: Vec<String>,
    /// Per CPU: the record index of its last slice (to extend it).
    last_slice: Vec<Option<usize>>,
}

impl Trace {
    /// An empty timeline for [start, end) ns on `ncpus` CPUs.
    pub fn new(start_ns: u64, end_ns: u64, ncpus: usize) -> Trace {
        Trace { start_ns, end_ns, last_slice: vec![None; ncpus], ..Default::default() }
    }

    /// Is `at_ns` inside the window?
    pub fn in_window(&self, at_ns: u64) -> bool {
        at_ns >= self.start_ns && at_ns < self.end_ns
    }

    /// Record that `cpu` ran `name` on `track` over [start, end), clipped to
    /// the window; a slice continuing the CPU's last one extends it.
    #[cold]
    pub fn slice(&mut self, cpu: u32, track: Track, name: TraceName, start_ns: u64, end_ns: u64) {
        let (s, e) = (start_ns.max(self.start_ns), end_ns.min(self.end_ns));
        if s >= e {
            return;
        }
        if let Some(i) = self.last_slice[cpu as usize] {
            if let TraceRecord::Slice { track: t, name: n, end_ns: last_end, .. } = &mut self.records[i] {
                if *t == track && *n == name && *last_end == s {
                    *last_end = e;
                    return;
                }
            }
        }
        self.last_slice[cpu as usize] = Some(self.records.len());
        self.records.push(TraceRecord::Slice { cpu, track, name, start_ns: s, end_ns: e });
    }

    #[cold]
    /// Record that `name` happened on `cpu`'s `track` at `at_ns`, if inside the window.
    pub fn instant(&mut self, cpu: u32, track: Track, name: TraceName, at_ns: u64) {
        if self.in_window(at_ns) {
            self.records.push(TraceRecord::Instant { cpu, track, name, at_ns });
        }
    }

    #[cold]
    /// Record `dev`'s queue depth at `at_ns`, if inside the window.
    pub fn queue_depth(&mut self, dev: u16, at_ns: u64, depth: u32) {
        if self.in_window(at_ns) {
            self.records.push(TraceRecord::QueueDepth { dev, at_ns, depth });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_are_clipped_to_the_window_and_continuations_merge() {
        let mut t = Trace::new(100, 200, 1);
        t.slice(0, Track::Task, TraceName::Job { job: 0, user: true }, 50, 120);
        t.slice(0, Track::Task, TraceName::Job { job: 0, user: true }, 120, 150);
        t.slice(0, Track::Hardirq, TraceName::DeviceIrq, 150, 300);
        t.slice(0, Track::Task, TraceName::Job { job: 0, user: true }, 300, 400);
        assert_eq!(t.records.len(), 2);
        assert!(matches!(t.records[0], TraceRecord::Slice { start_ns: 100, end_ns: 150, .. }));
        assert!(matches!(t.records[1], TraceRecord::Slice { start_ns: 150, end_ns: 200, .. }));
    }
}
