//! Kernel path: a queued spinlock's hand-off to a spinning locker.
//! `queued_spin_unlock` → the next waiter in the MCS queue sees its
//! `locked` flag (the lock's line and its MCS node move to its core) →
//! it leaves its spin and enters its section: a task (sys time, preemption
//! off while it spins) or a CPU's kworker.

use crate::fio::job::JobState;
use crate::hw::cpu::{Acct, Bill, FrameKind, Running};
use crate::ids::CpuId;
use crate::locking::qspinlock::Actor;
use crate::stats::CpuStage;
use crate::system::Sim;

impl Sim {
    /// Cost of handing a lock from `from` to `to` (the lock's line moves to
    /// the new owner, and its MCS node first).
    pub(crate) fn lock_handoff_ns(&self, from: CpuId, to: CpuId) -> u64 {
        2 * self.core_line_ns(from, to)
    }

    /// An actor spinning for a lock gets it `after_ns` from now.
    pub(crate) fn lock_spin_ends(&mut self, a: Actor, after_ns: u64) {
        match a {
            Actor::Task(j) => {
                debug_assert_eq!(self.jobs[j].task.state, JobState::LockSpin);
                let cpu = self.jobs[j].task.cpu;
                let running = self.cpus[cpu].running == Running::Task(j);
                if running {
                    self.cpu_charge(cpu);
                }
                let bill = Bill::of(CpuStage::Other, after_ns);
                self.job_set_segs(
                    j,
                    JobState::LockSpin,
                    [(Acct::Sys, after_ns), (Acct::User, 0), (Acct::Sys, 0)],
                    bill,
                    0,
                );
                if running {
                    self.cpu_dispatch(cpu);
                }
            }
            Actor::Kworker(cpu) => {
                let top = self.cpus[cpu].frames.last().is_some_and(|f| f.kind == FrameKind::Kworker);
                let running = top && self.cpus[cpu].running == Running::Frame;
                if running {
                    self.cpu_charge(cpu);
                }
                self.kworker_frame(cpu).remaining_ns = after_ns;
                if running {
                    self.cpu_dispatch(cpu);
                }
            }
        }
    }
}
