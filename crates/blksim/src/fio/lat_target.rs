//! fio: `latency_target` as job state (`io_u.c`: `lat_target_init`,
//! `lat_target_check`, `__lat_target_failed`, `lat_target_success`,
//! `queue_full`). The job looks for the deepest queue whose I/Os keep
//! `latency_percentile` of their latencies (fill to reap) under the target
//! over each `latency_window`: from depth 1 it doubles while windows pass,
//! bisects between the last passing and the first failing depth once one
//! fails, and at a depth that does not move it quiesces, resets its
//! statistics and runs one more window there (`latency_run=1` keeps
//! adjusting instead). An I/O over the target at `latency_percentile=100`
//! fails its window at once; at depth 1 it ends the job (`lat_fatal`).
//! The flow that quiesces and resets is `lat_target_loop.rs`.

use crate::fio::job::{IoError, Job};
use crate::fio::pace::Action;
use crate::workload::LatencyTarget;

/// Linux's ETIMEDOUT: fio's `lat_fatal`.
const ETIMEDOUT: i32 = 110;

/// What the job does after a look at its latencies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Nothing more: go on (a new window may have begun).
    Go,
    /// `io_u_quiesce`: no new io_u until every one in flight is reaped; then,
    /// with `reset`, `reset_all_stats` and `reset_io_stats` (the final run), and a new window.
    Quiesce { reset: bool },
    /// `td->done`: the final window passed at the same depth; the job ends.
    Done,
    /// An I/O over the target at depth 1 with `latency_percentile=100`: `lat_fatal`.
    Fatal,
}

/// A job's `latency_target` state (`td->latency_*`).
#[derive(Clone, Debug)]
pub(crate) struct LatTarget {
    pub cfg: LatencyTarget,
    /// `o.iodepth`: the deepest the search goes.
    pub iodepth: u32,
    /// The engine's depth without the search (`Engine::depth` is the smaller of it and `qd`).
    pub base_depth: u32,
    /// `td->latency_qd`, `latency_qd_high`, `latency_qd_low`, `latency_stable_count`.
    pub qd: u32,
    pub qd_high: u32,
    pub qd_low: u32,
    pub stable: u32,
    /// `td->latency_ts`: the window's start; `latency_ios`: I/Os done by then; `latency_failed`.
    pub window_ns: u64,
    pub window_ios: u64,
    pub failed: u64,
    /// `td->latency_end_run`: the final window at the depth found.
    pub end_run: bool,
}

// `ios` below: `ddir_rw_sum(td->io_blocks)`, the data I/Os completed without an
// error since the job's statistics were last reset.

impl LatTarget {
    /// `lat_target_init`'s state (the job's start sets its window, `init`).
    pub(crate) fn new(cfg: LatencyTarget, iodepth: u32, base_depth: u32) -> LatTarget {
        let iodepth = iodepth.max(1);
        LatTarget {
            cfg,
            iodepth,
            base_depth,
            qd: 1,
            qd_high: iodepth,
            qd_low: 1,
            stable: 0,
            window_ns: 0,
            window_ios: 0,
            failed: 0,
            end_run: false,
        }
    }

    /// `lat_target_init`: depth 1, the search between 1 and `iodepth`, a new window.
    pub(crate) fn init(&mut self, now: u64, ios: u64) {
        self.end_run = false;
        (self.qd, self.qd_high, self.qd_low) = (1, self.iodepth, 1);
        (self.window_ns, self.window_ios) = (now, ios);
    }

    /// `reset_all_stats` (the end of the ramp, the final run's start): the I/O
    /// count starts again from 0, and `lat_target_reset` starts the search
    /// again unless this is the final run.
    pub(crate) fn stats_reset(&mut self, now: u64) {
        if !self.end_run {
            self.init(now, 0);
        }
    }

    /// `lat_new_cycle`: a new window from `now`.
    pub(crate) fn new_window(&mut self, now: u64, ios: u64) {
        (self.window_ns, self.window_ios, self.failed) = (now, ios, 0);
    }

    /// A measured I/O's latency `lat_ns` (fio's `tnsec`) was over the target (`lat_target_failed`).
    pub(crate) fn over_target(&mut self) -> Verdict {
        if self.cfg.percentile == 100.0 {
            return self.ramp_down();
        }
        self.failed += 1;
        Verdict::Go
    }

    /// `__lat_target_failed`: the window failed. At depth 1 there is nowhere to go
    /// (`Fatal`, which only an I/O's failure acts on); else bisect down and quiesce.
    fn ramp_down(&mut self) -> Verdict {
        if self.qd == 1 {
            return Verdict::Fatal;
        }
        self.qd_high = self.qd;
        if self.qd == self.qd_low {
            self.qd_low -= 1;
        }
        self.qd = (self.qd + self.qd_low) / 2;
        self.stable = 0;
        // (lat_new_cycle follows the quiesce.)
        Verdict::Quiesce { reset: false }
    }

    /// `lat_target_check` at the end of an iteration of fio's loop, at `now`.
    pub(crate) fn check(&mut self, now: u64, ios: u64) -> Verdict {
        if (now - self.window_ns) / 1000 < self.cfg.window_us {
            return Verdict::Go;
        }
        let in_window = ios.wrapping_sub(self.window_ios);
        // (No I/O in the window: 0/0, which passes no percentile.)
        let success = (in_window.wrapping_sub(self.failed)) as f64 / in_window as f64 * 100.0;
        if success >= self.cfg.percentile {
            self.ramp_up(now, ios)
        } else {
            match self.ramp_down() {
                // At depth 1 fio's check ignores the failure: the window goes on.
                Verdict::Fatal => Verdict::Go,
                v => v,
            }
        }
    }

    /// `lat_target_success`: the window passed.
    fn ramp_up(&mut self, now: u64, ios: u64) -> Verdict {
        let qd = self.qd;
        self.qd_low = self.qd;
        if self.qd + 1 == self.qd_high {
            // Stable one below the failing depth: after three such windows, try one deeper.
            self.stable += 1;
            if self.stable >= 3 {
                self.qd_high += 1;
                self.stable = 0;
            }
        }
        if self.qd_high != self.iodepth {
            self.qd = (self.qd + self.qd_high) / 2;
        } else {
            self.qd *= 2;
        }
        self.qd = self.qd.min(self.iodepth);
        let verdict = if !self.cfg.run && self.qd == qd {
            if self.end_run {
                Verdict::Done
            } else {
                // The final run: quiesce, then the stats start again.
                self.end_run = true;
                Verdict::Quiesce { reset: true }
            }
        } else {
            Verdict::Go
        };
        if !matches!(verdict, Verdict::Quiesce { .. }) {
            self.new_window(now, ios);
        }
        verdict
    }
}

impl Job {
    /// `ddir_rw_sum(td->io_blocks)`: the data I/Os completed without an error
    /// since the statistics were last reset (the measured ones: no check looks before).
    pub(crate) fn ios_done(&self) -> u64 {
        self.dirs.iter().map(|d| d.total_ios - d.failed_ios - d.abandoned_ios).sum()
    }

    /// `queue_full` at `td->latency_qd`: the engine's depth in effect.
    pub(crate) fn lat_depth(&mut self) {
        if let Some(t) = self.lat_target.as_deref() {
            self.engine.depth = t.base_depth.min(t.qd);
        }
    }

    /// `io_u_quiesce` before the next io_u: the pause machinery holds the
    /// issuing until nothing is in flight (a final run's reset is kept).
    pub(crate) fn lat_quiesce(&mut self, reset: bool) {
        let p = self.pace.as_deref_mut().expect("a latency_target job has a pace");
        let kept = matches!(p.action, Some(Action::LatQuiesce { reset: true }));
        p.action = Some(Action::LatQuiesce { reset: reset || kept });
        self.done_issuing = true;
    }

    /// A measured I/O's `lat` (`lat_ns`, direction `d`) passed `lat_watch_ns`:
    /// `max_latency`'s `lat_fatal`, then `latency_target`'s failure (fio looks
    /// at both in that order). Whether it set the job's error.
    #[cold]
    #[inline(never)]
    pub(crate) fn lat_over(&mut self, r: &crate::block::Request, lat_ns: u64, d: usize) -> bool {
        let max = self.cfg.max_latency_ns[d];
        let mut over = (max > 0 && lat_ns > max).then_some(max);
        if let Some(t) = self.lat_target.as_deref_mut().filter(|t| lat_ns > t.cfg.target_ns) {
            match t.over_target() {
                Verdict::Fatal => over = over.or(Some(t.cfg.target_ns)),
                Verdict::Quiesce { reset } => {
                    self.lat_quiesce(reset);
                    self.lat_depth();
                }
                Verdict::Go | Verdict::Done => {}
            }
        }
        let Some(max) = over else { return false };
        // lat_fatal: the job ends (ETIMEDOUT) once its batch is taken.
        self.done_issuing = true;
        if self.error.is_some() {
            return false;
        }
        let mut e = IoError::of(r);
        (e.errno, e.max_latency) = (-ETIMEDOUT, Some((lat_ns, max)));
        self.error = Some(e);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(percentile: f64) -> LatTarget {
        LatTarget::new(LatencyTarget { target_ns: 1000, window_us: 10, percentile, run: false }, 16, 16)
    }

    #[test]
    fn passing_windows_double_the_depth_then_run_once_more_where_it_stops() {
        let mut t = target(100.0);
        let mut depths = vec![t.qd];
        let (mut now, mut ios) = (0, 0);
        loop {
            now += 10_000;
            ios += 5;
            match t.check(now, ios) {
                Verdict::Go => depths.push(t.qd),
                Verdict::Quiesce { reset } => {
                    assert!(reset && t.end_run, "the final run");
                    t.stats_reset(now);
                    ios = 0;
                    t.new_window(now, ios);
                }
                Verdict::Done => break,
                Verdict::Fatal => unreachable!(),
            }
        }
        assert_eq!(depths, [1, 2, 4, 8, 16]);
        assert_eq!(t.qd, 16);
    }

    #[test]
    fn a_failed_window_bisects_between_the_last_passing_and_failing_depths() {
        let mut t = target(99.0);
        let (mut now, mut ios) = (0, 0);
        let mut pass = |t: &mut LatTarget, ok: bool| {
            now += 10_000;
            ios += 100;
            if !ok {
                t.failed = 50;
            }
            let v = t.check(now, ios);
            if matches!(v, Verdict::Quiesce { .. }) {
                t.new_window(now, ios);
            }
            v
        };
        assert_eq!(pass(&mut t, true), Verdict::Go); // 1 -> 2
        assert_eq!(pass(&mut t, true), Verdict::Go); // 2 -> 4
        assert_eq!(pass(&mut t, true), Verdict::Go); // 4 -> 8
        assert_eq!(pass(&mut t, false), Verdict::Quiesce { reset: false }); // 8 fails: (8 + 4) / 2
        assert_eq!((t.qd, t.qd_low, t.qd_high), (6, 4, 8));
        assert_eq!(pass(&mut t, true), Verdict::Go); // 6 passes: (6 + 8) / 2
        assert_eq!(t.qd, 7);
        // 7 passes one below the failing 8: it does not move, so the final run begins there.
        assert_eq!(pass(&mut t, true), Verdict::Quiesce { reset: true });
        assert_eq!((t.qd, t.stable, t.end_run), (7, 1, true));
        assert_eq!(pass(&mut t, true), Verdict::Done);
        // Within the window: nothing.
        assert_eq!(t.check(now + 1, ios), Verdict::Go);
        // At depth 1 an I/O over the target is fatal with percentile 100, counted below it.
        let mut t = target(100.0);
        assert_eq!(t.over_target(), Verdict::Fatal);
        let mut t = target(99.0);
        assert_eq!(t.over_target(), Verdict::Go);
        assert_eq!(t.failed, 1);
        // A window with no I/O passes no percentile (0/0); at depth 1 the window goes on.
        let mut t = target(99.0);
        assert_eq!(t.check(20_000, 0), Verdict::Go);
        assert_eq!((t.qd, t.window_ns), (1, 0));
    }
}
