//! One logical CPU: what runs on it (a stack of interrupt-context frames over
//! the current task), preemption, the local APIC's IRR, time accounting by
//! context, SMT sharing of the core, and the run queue.

use std::collections::VecDeque;

use crate::run::Sim;
use crate::stats::{CpuTime, TraceName, Track};

/// Which account a step's time goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acct {
    User,
    Sys,
    Softirq,
    Hardirq,
}

/// An interrupt-context activity on a CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// A device IRQ's handler (e.g. `nvme_irq` for one queue).
    DeviceIrq { irq: u32 },
    /// A device IRQ that arrived while its handler ran on another CPU: entry, ack, exit.
    DeviceIrqBusy,
    /// CALL_FUNCTION_SINGLE IPI: raises BLOCK_SOFTIRQ for `blk_cpu_done`.
    CallFunctionIpi,
    /// `__do_softirq` running BLOCK_SOFTIRQ; `restarts` counts passes.
    Softirq { restarts: u8 },
    /// ksoftirqd running the softirq work deferred past the restart bound
    /// (or raised from task context).
    Ksoftirqd,
    /// LOCAL_TIMER_VECTOR: hrtimers expired (null_blk irqmode=2 completions).
    LocalTimer,
    /// POSTED_MSI_NOTIFICATION_VECTOR: demultiplex the PIR (`sysvec_posted_msi_notification`).
    PostedNotification,
}

/// Stage of a frame's program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Entry plus the first pass of work.
    Entry,
    /// A further pass of work (e.g. CQEs that arrived during the handler).
    Work,
    /// Exit: EOI/doorbells, irq_exit.
    Exit,
}

#[derive(Clone, Copy, Debug)]
pub struct Frame {
    pub kind: FrameKind,
    pub stage: Stage,
    /// Work left in the current step, ns at full core speed.
    pub remaining_ns: u64,
    /// Items the current step handles (CQEs, requests); applied when it ends.
    pub items: u32,
    /// Cost of effects applied at the end of a step, charged in the next one.
    pub debt_ns: u64,
    pub acct: Acct,
    /// When the frame was entered (for MAX_SOFTIRQ_TIME).
    pub since_ns: u64,
    /// Follow-on cost (wake-ups, IPIs) already charged in the current step.
    pub foreseen_ns: u64,
    /// Posted notification: vectors harvested and not yet handled.
    pub pir: [u64; 4],
    /// Posted notification: vectors in `pir` put back to replay a handler (IRQS_PENDING), not harvested.
    pub replayed: [u64; 4],
    /// Posted notification: harvest passes done; `final_pass` once ON is cleared.
    pub passes: u32,
    pub final_pass: bool,
}

impl FrameKind {
    /// The trace track and name of this kind of frame.
    pub fn trace_name(self) -> (Track, TraceName) {
        match self {
            FrameKind::DeviceIrq { .. } | FrameKind::DeviceIrqBusy => (Track::Hardirq, TraceName::DeviceIrq),
            FrameKind::PostedNotification => (Track::Hardirq, TraceName::PostedNotification),
            FrameKind::CallFunctionIpi => (Track::Hardirq, TraceName::CallFunctionIpi),
            FrameKind::LocalTimer => (Track::Hardirq, TraceName::LocalTimer),
            FrameKind::Softirq { .. } => (Track::Softirq, TraceName::BlockSoftirq),
            FrameKind::Ksoftirqd => (Track::Softirq, TraceName::Ksoftirqd),
        }
    }
}

impl Frame {
    pub fn new(kind: FrameKind, now_ns: u64) -> Frame {
        let acct = match kind {
            FrameKind::Softirq { .. } | FrameKind::Ksoftirqd => Acct::Softirq,
            _ => Acct::Hardirq,
        };
        Frame {
            kind,
            stage: Stage::Entry,
            remaining_ns: 0,
            items: 0,
            debt_ns: 0,
            acct,
            since_ns: now_ns,
            foreseen_ns: 0,
            pir: [0; 4],
            replayed: [0; 4],
            passes: 0,
            final_pass: false,
        }
    }

    pub fn is_hardirq(&self) -> bool {
        self.acct == Acct::Hardirq
    }
}

/// What the CPU is running right now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Running {
    Idle,
    Frame,
    Task(u32),
}

/// CALL_FUNCTION_SINGLE_VECTOR.
pub const CALL_FUNCTION_SINGLE_VECTOR: u8 = 0xfb;
/// LOCAL_TIMER_VECTOR.
pub const LOCAL_TIMER_VECTOR: u8 = 0xec;
/// POSTED_MSI_NOTIFICATION_VECTOR.
pub const POSTED_MSI_NOTIFICATION_VECTOR: u8 = 0xeb;

/// The posted-interrupt descriptor of one CPU (`struct pi_desc`).
#[derive(Clone, Debug, Default)]
pub struct PiDesc {
    /// Posted interrupt requests, one bit per vector.
    pub pir: [u64; 4],
    /// Outstanding notification.
    pub on: bool,
    /// Suppress notification (the host never sets it; tests do).
    pub sn: bool,
    /// The IOMMU wrote the line last (the CPU's next atomic pays a transfer), or the CPU did.
    pub iommu_owns_line: bool,
}

/// Fields in declaration order (repr(C)): what every step touches first,
/// on the first two cache lines; counters and rarely used state after.
#[repr(C)]
pub struct Cpu {
    pub running: Running,
    /// When the running entity last started or was last charged.
    pub since_ns: u64,
    /// Current slowdown in permille (1000 = full speed; more when the SMT sibling is busy).
    pub slow_pm: u64,
    pub time: CpuTime,
    /// Local APIC interrupt request register, one bit per vector.
    pub irr: [u64; 4],
    pub frames: Vec<Frame>,
    /// The task that owns the CPU (runs when no frame is active).
    pub current: Option<u32>,
    pub sibling: Option<u32>,
    /// Tasks of this CPU asleep waiting for I/O.
    pub io_sleepers: u32,
    /// BLOCK_SOFTIRQ raised.
    pub softirq_pending: bool,
    /// ksoftirqd was woken: softirq work waits for it.
    pub ksoftirqd_pending: bool,
    /// When the current task was switched in (for its time slice).
    pub task_since_ns: u64,
    pub runqueue: VecDeque<u32>,
    /// `blk_cpu_done`: requests to complete in BLOCK_SOFTIRQ here.
    pub done_list: VecDeque<u32>,
    pub id: u32,
    /// Requests whose hrtimer expired, for the local timer interrupt.
    pub timer_expired: VecDeque<u32>,
    /// Local timer interrupts taken.
    pub loc_count: u64,
    pub pi_desc: PiDesc,
    /// Posted MSI notifications handled (`PMN` in /proc/interrupts).
    pub pmn: u64,
    /// Notifications the IOMMU sent to this CPU.
    pub notifications_sent: u64,
    /// Device MSIs aimed at this CPU.
    pub device_msis: u64,
    /// IPIs received.
    pub ipis: u64,
    /// Per-vector delivery counts for system vectors (CAL).
    pub cal_count: u64,
}

impl Cpu {
    pub fn new(id: u32, sibling: Option<u32>) -> Cpu {
        Cpu {
            id,
            sibling,
            frames: Vec::with_capacity(8),
            current: None,
            runqueue: VecDeque::new(),
            running: Running::Idle,
            since_ns: 0,
            slow_pm: 1000,
            time: CpuTime::default(),
            irr: [0; 4],
            softirq_pending: false,
            done_list: VecDeque::new(),
            ksoftirqd_pending: false,
            timer_expired: VecDeque::new(),
            loc_count: 0,
            pi_desc: PiDesc::default(),
            pmn: 0,
            notifications_sent: 0,
            device_msis: 0,
            task_since_ns: 0,
            ipis: 0,
            io_sleepers: 0,
            cal_count: 0,
        }
    }

    pub fn irqs_enabled(&self) -> bool {
        !self.frames.last().is_some_and(|f| f.is_hardirq())
    }

    pub fn irr_set(&mut self, vector: u8) -> bool {
        let (w, b) = ((vector >> 6) as usize, vector & 63);
        let was = self.irr[w] >> b & 1 == 1;
        self.irr[w] |= 1 << b;
        was
    }

    /// Take the highest-priority pending vector.
    pub fn irr_take_highest(&mut self) -> Option<u8> {
        if self.irr == [0; 4] {
            return None;
        }
        for w in (0..4).rev() {
            if self.irr[w] != 0 {
                let b = 63 - self.irr[w].leading_zeros();
                self.irr[w] &= !(1 << b);
                return Some((w as u32 * 64 + b) as u8);
            }
        }
        None
    }

    /// Is the CPU doing anything (for SMT sharing)?
    pub fn busy(&self) -> bool {
        self.running != Running::Idle
    }
}

/// Wall time to do `work_ns` of work at `slow_pm`.
pub fn wall_ns(work_ns: u64, slow_pm: u64) -> u64 {
    if slow_pm == 1000 {
        work_ns
    } else {
        (work_ns as u128 * slow_pm as u128).div_ceil(1000) as u64
    }
}

/// Work done in `wall` ns at `slow_pm`.
fn work_ns(wall: u64, slow_pm: u64) -> u64 {
    if slow_pm == 1000 {
        wall
    } else {
        (wall as u128 * 1000 / slow_pm as u128) as u64
    }
}

impl Sim {
    /// Charge the time since the last charge to whatever ran, and take it off its step.
    #[inline(always)]
    pub fn cpu_charge(&mut self, cpu: u32) {
        let now = self.q.now_ns();
        let c = &mut self.cpus[cpu as usize];
        let wall = now - c.since_ns;
        c.since_ns = now;
        if wall == 0 {
            return;
        }
        let done = work_ns(wall, c.slow_pm);
        if self.trace.is_some() {
            self.trace_charge(cpu, now, wall, done);
        }
        let c = &mut self.cpus[cpu as usize];
        match c.running {
            // Idle with a task of this CPU asleep in an I/O wait counts as iowait.
            Running::Idle if c.io_sleepers > 0 => c.time.iowait_ns += wall,
            Running::Idle => c.time.idle_ns += wall,
            Running::Frame => {
                let f = c.frames.last_mut().expect("running frame");
                f.remaining_ns = f.remaining_ns.saturating_sub(done);
                match f.acct {
                    Acct::Softirq => c.time.softirq_ns += wall,
                    _ => c.time.hardirq_ns += wall,
                }
            }
            Running::Task(j) => {
                let job = &mut self.jobs[j as usize];
                let (user, sys) = job.consume(done);
                // Split the wall time like the work; rounding goes to sys.
                let user_wall = match (user, sys) {
                    (0, _) => 0,
                    (_, 0) => wall,
                    // At full speed the wall time is the work: no division.
                    _ if user + sys == wall => user,
                    _ => match wall.checked_mul(user) {
                        Some(p) => p / (user + sys),
                        None => (wall as u128 * user as u128 / (user + sys) as u128) as u64,
                    },
                };
                c.time.user_ns += user_wall;
                job.usr_ns += user_wall;
                c.time.sys_ns += wall - user_wall;
                job.sys_ns += wall - user_wall;
            }
        }
    }

    /// Trace slices for the time `cpu_charge` just charged (`wall` ns ending now, `done` ns of work).
    #[cold]
    #[inline(never)]
    fn trace_charge(&mut self, cpu: u32, now: u64, wall: u64, done: u64) {
        let c = &self.cpus[cpu as usize];
        let Some(t) = self.trace.as_mut() else { return };
        let start = now - wall;
        match c.running {
            Running::Idle => {}
            Running::Frame => {
                let f = c.frames.last().expect("running frame");
                let (track, name) = f.kind.trace_name();
                t.slice(cpu, track, name, start, now);
            }
            Running::Task(j) => {
                // One slice per segment the work went through (sys head, user body, sys tail).
                let (mut t0, mut left) = (start, done);
                for seg in self.jobs[j as usize].segs.iter().filter(|s| s.1 > 0) {
                    let take = left.min(seg.1);
                    left -= take;
                    let t1 = if left == 0 {
                        now
                    } else {
                        t0 + (wall as u128 * take as u128 / done.max(1) as u128) as u64
                    };
                    t.slice(cpu, Track::Task, TraceName::Job { job: j, user: seg.0 == Acct::User }, t0, t1);
                    t0 = t1;
                    if left == 0 {
                        break;
                    }
                }
            }
        }
    }

    /// Decide what runs now on `cpu` and schedule the end of its step.
    /// Call after `cpu_charge` whenever the CPU's state changed.
    #[inline(always)]
    pub fn cpu_dispatch(&mut self, cpu: u32) {
        let now = self.q.now_ns();
        // Deliver pending interrupts while interrupts are enabled.
        loop {
            let c = &mut self.cpus[cpu as usize];
            if !c.irqs_enabled() {
                break;
            }
            let Some(vector) = c.irr_take_highest() else {
                break;
            };
            self.interrupt_enter(cpu, vector);
        }
        let c = &mut self.cpus[cpu as usize];
        if c.frames.is_empty() && c.ksoftirqd_pending {
            // ksoftirqd is runnable: the scheduler runs it before the task goes on.
            c.ksoftirqd_pending = false;
            self.ksoftirqd_run(cpu);
        }
        let c = &mut self.cpus[cpu as usize];
        if c.frames.is_empty() && c.current.is_none() {
            if let Some(j) = c.runqueue.pop_front() {
                c.current = Some(j);
                c.task_since_ns = now;
                self.task_switched_in(j);
            }
        }
        let c = &mut self.cpus[cpu as usize];
        let was_busy = c.busy();
        let (running, remaining) = if let Some(f) = c.frames.last() {
            (Running::Frame, f.remaining_ns)
        } else if let Some(j) = c.current {
            (Running::Task(j), self.jobs[j as usize].remaining_ns)
        } else {
            (Running::Idle, 0)
        };
        c.running = running;
        c.since_ns = now;
        let end = now.saturating_add(wall_ns(remaining, c.slow_pm));
        if running != Running::Idle && end < u64::MAX / 2 {
            self.q.set_timer(cpu, end);
        } else {
            self.q.clear_timer(cpu);
        }
        let busy = running != Running::Idle;
        if busy != was_busy {
            self.cpu_busy[cpu as usize] = busy;
            self.smt_update(cpu);
        }
    }

    /// A sibling's busy state changed: both threads re-rate their steps.
    fn smt_update(&mut self, cpu: u32) {
        let Some(sib) = self.cpus[cpu as usize].sibling else {
            return;
        };
        let both = self.cpu_busy[cpu as usize] && self.cpu_busy[sib as usize];
        let slow = if both { self.smt_slow_pm } else { 1000 };
        if self.cpus[cpu as usize].slow_pm == slow {
            // The two threads are always re-rated together (below), so the
            // sibling runs at this rate too: nothing changes.
            return;
        }
        for c in [cpu, sib] {
            if self.cpus[c as usize].slow_pm != slow {
                self.cpu_charge(c);
                self.cpus[c as usize].slow_pm = slow;
                let cc = &self.cpus[c as usize];
                let remaining = match cc.running {
                    Running::Idle => continue,
                    Running::Frame => cc.frames.last().unwrap().remaining_ns,
                    Running::Task(j) => self.jobs[j as usize].remaining_ns,
                };
                let end = self.q.now_ns().saturating_add(wall_ns(remaining, slow));
                if end < u64::MAX / 2 {
                    self.q.set_timer(c, end);
                }
            }
        }
    }

    /// The step running on `cpu` has ended.
    #[inline(always)]
    pub fn cpu_step_done(&mut self, cpu: u32) {
        self.cpu_charge(cpu);
        match self.cpus[cpu as usize].running {
            Running::Idle => {}
            Running::Frame => {
                self.cpus[cpu as usize].frames.last_mut().unwrap().remaining_ns = 0;
                self.frame_step_done(cpu);
            }
            Running::Task(j) => {
                self.jobs[j as usize].remaining_ns = 0;
                self.task_step_done(cpu, j);
            }
        }
        self.cpu_dispatch(cpu);
    }

    /// Something changed on `cpu` from outside its running step (an interrupt
    /// arrived, a task was woken): re-decide what runs.
    #[inline(always)]
    pub fn cpu_kick(&mut self, cpu: u32) {
        self.cpu_charge(cpu);
        self.cpu_dispatch(cpu);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn irr_merges_a_repeated_vector_and_yields_highest_first() {
        let mut c = Cpu::new(0, None);
        assert!(!c.irr_set(0x30));
        assert!(c.irr_set(0x30));
        c.irr_set(0xfb);
        assert_eq!(c.irr_take_highest(), Some(0xfb));
        assert_eq!(c.irr_take_highest(), Some(0x30));
        assert_eq!(c.irr_take_highest(), None);
    }

    #[test]
    fn smt_slowdown_round_trips() {
        assert_eq!(wall_ns(1000, 1667), 1667);
        assert_eq!(work_ns(1667, 1667), 1000);
    }
}
