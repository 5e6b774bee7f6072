//! fio: the pacing of a job's I/O and its block-size mix, as job state: the
//! rate (`rate`, `rate_iops`, `rate_process`: `td->rate_next_io_time`,
//! `usec_for_io` and `rate_ddir`), the think times (`thinktime*`:
//! `handle_thinktime`), the pause in progress (`usec_sleep`, `usec_spin`) and
//! `bssplit`'s choice of a block size (`get_next_buflen`). The flow that
//! quiesces, spins and sleeps is `pace_loop.rs`.

use crate::fio::rand::{FRand, RandStates};
use crate::workload::{BsSplit, Direction, JobConfig, RateProcess, RwKind, Thinktime};

/// The default timer slack of a normal task (`current->timer_slack_ns`):
/// `nanosleep` arms its hrtimer to expire up to this much after the time
/// asked, and with no other timer on the CPU to expire it earlier it fires
/// at the end of that range.
pub(crate) const TIMER_SLACK_NS: u64 = 50_000;

/// What the job does once its I/O is quiesced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// `rate_ddir`: sleep `usec`, then issue an I/O of `dir` without another check.
    Rate { usec: u64, dir: Direction },
    /// `handle_thinktime`: spin, then sleep; `blocks` is the count the check saw.
    Think { blocks: u64 },
    /// `flow_threshold_exceeded` with `flow_sleep`: quiesced, sleep `usec`, then check again.
    Flow { usec: u64 },
    /// `latency_target`'s `io_u_quiesce` after its depth moved; with `reset`, the statistics
    /// start again (its final run); then a new window (`lat_target_loop.rs`).
    LatQuiesce { reset: bool },
}

/// Where the action is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Not pausing.
    Idle,
    /// `thinktime_spin`'s `usec_spin` (a user step of `us`).
    ThinkSpin { us: u64 },
    /// `usec_sleep(left)`: `total` slept so far; `since_ns` when the current
    /// `nanosleep` was entered (fio's `fio_gettime` before it); a spin of
    /// the remainder when `spin`. `plain`: libc's `usleep(left)` (one
    /// `nanosleep` of it all, however long it turns out).
    Sleep { left_us: u64, total_us: u64, since_ns: u64, spin: bool, plain: bool },
}

/// Why the next I/O may not go now (`rate_pick`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pick {
    /// Issue an I/O of this direction.
    Go(Direction),
    /// Ahead of the rate: sleep this long, then issue this direction.
    Wait(u64, Direction),
    /// The sleep would pass the runtime, which is already over: stop issuing.
    Timeout,
}

/// A paced job's state (boxed in `Job::pace`; jobs without rate or think time have none).
#[derive(Clone, Debug)]
pub(crate) struct Pace {
    /// Any direction rated.
    pub rated: bool,
    /// `td->rate_bps`, per read, write and trim.
    pub rate_bps: [u64; 3],
    /// `o.rate` was given (not `rate_iops`).
    pub by_bytes: [bool; 3],
    /// The direction's smallest block size (`o.min_bs`) and whether it has a `bssplit`.
    pub min_bs: [u64; 3],
    pub split: [bool; 3],
    pub poisson: bool,
    pub poisson_rng: [FRand; 3],
    /// `td->rate_io_issue_bytes`, `td->rate_next_io_time` (µs since the epoch), `td->last_usec`.
    pub issue_bytes: [u64; 3],
    pub next_io_us: [u64; 3],
    pub last_usec: [i64; 3],
    /// `td->epoch`: the job's start, then the end of its ramp (fio resets its rate state there).
    pub epoch_ns: u64,
    pub ramp_reset_done: bool,
    /// A mixed job may switch to the other direction when it is behind its rate
    /// (`td_rw(td) && td->o.rwmix[odir]`), per direction: may it switch away from it.
    pub may_switch: [bool; 3],
    /// A trimwrite job (`rw=trimwrite` or `randtrimwrite`): fio's get_rw_ddir asks the rate of the
    /// writes for each io_u, its trims' too (set_rw_ddir makes it a trim after).
    pub trimwrite: bool,
    /// A direction drawn (rwmix) that waits for its turn.
    pub drawn: Option<Direction>,
    /// The direction `rate_ddir` chose (before a sleep, or checked already): issued next.
    pub forced: Option<Direction>,
    pub think: Thinktime,
    pub rate_ignore_thinktime: bool,
    /// `td->last_thinktime_blocks`, `td->last_thinktime`.
    pub last_think_blocks: u64,
    pub last_think_ns: u64,
    /// I/Os issued when the last think time ended (fio thinks only after an I/O).
    pub issued_at_think: u64,
    /// The direction of the last I/O issued (the one `handle_thinktime` is called with).
    pub last_dir: Direction,
    /// What the job does once quiesced, and where it is.
    pub action: Option<Action>,
    pub phase: Phase,
    /// fio's `ns_granularity`: the longest a 1 µs `nanosleep` took when fio
    /// started (µs); `usec_sleep` sleeps that much less and spins the rest.
    pub granularity_us: u64,
}

impl Pace {
    /// The pacing of `cfg`'s job, if it has any. `granularity_us`: what a 1 µs
    /// nanosleep takes on the simulated machine.
    pub(crate) fn of(cfg: &JobConfig, rand: &RandStates, granularity_us: u64) -> Option<Pace> {
        if !cfg.is_paced() && !cfg.flow_sleeps() && cfg.latency_target.is_none() {
            return None;
        }
        let mut rate_bps = [0; 3];
        let mut min_bs = [0; 3];
        let mut by_bytes = [false; 3];
        let mut split = [false; 3];
        for d in 0..3 {
            min_bs[d] = cfg.bs[d].max(1);
            split[d] = !cfg.bssplit[d].is_empty();
            by_bytes[d] = cfg.rate[d] > 0;
            // fio's __setup_rate.
            rate_bps[d] = if cfg.rate[d] > 0 { cfg.rate[d] } else { cfg.rate_iops[d].saturating_mul(min_bs[d]) };
        }
        let mixed = matches!(cfg.rw, RwKind::ReadWrite | RwKind::RandRw);
        Some(Pace {
            rated: cfg.rate.iter().chain(&cfg.rate_iops).any(|&r| r > 0),
            rate_bps,
            by_bytes,
            min_bs,
            split,
            poisson: cfg.rate_process == RateProcess::Poisson,
            poisson_rng: [0, 1, 2].map(|d| rand.poisson(d)),
            issue_bytes: [0; 3],
            next_io_us: [0; 3],
            last_usec: [0; 3],
            epoch_ns: 0,
            ramp_reset_done: cfg.ramp_time_ns == 0,
            // rwmix[odir]: the share of the other direction.
            may_switch: [mixed && cfg.rwmixread < 100, mixed && cfg.rwmixread > 0, false],
            trimwrite: matches!(cfg.rw, RwKind::TrimWrite | RwKind::RandTrimWrite),
            drawn: None,
            forced: None,
            think: cfg.thinktime,
            rate_ignore_thinktime: cfg.rate_ignore_thinktime,
            last_think_blocks: 0,
            last_think_ns: 0,
            issued_at_think: 0,
            last_dir: Direction::Read,
            action: None,
            phase: Phase::Idle,
            granularity_us,
        })
    }

    /// fio's `reset_all_stats` at the end of the ramp: the rate starts again from `now_ns`.
    pub(crate) fn ramp_reset(&mut self, now_ns: u64) {
        self.ramp_reset_done = true;
        self.epoch_ns = now_ns;
        self.issue_bytes = [0; 3];
        self.next_io_us = [0; 3];
        self.last_usec = [0; 3];
        self.last_think_ns = now_ns;
    }

    /// fio's `rate_ddir` for an I/O of `dir` at `now_ns`, without the sleep
    /// (the caller quiesces and sleeps). `end_ns`: the end of the runtime
    /// (`u64::MAX` without one).
    pub(crate) fn rate_pick(&self, dir: Direction, now_ns: u64, end_ns: u64) -> Pick {
        if self.trimwrite {
            // The writes' rate, whichever of its pair the io_u is (nothing switches).
            return match self.rate_pick_dir(Direction::Write, now_ns, end_ns) {
                Pick::Go(_) => Pick::Go(dir),
                Pick::Wait(usec, _) => Pick::Wait(usec, dir),
                Pick::Timeout => Pick::Timeout,
            };
        }
        self.rate_pick_dir(dir, now_ns, end_ns)
    }

    /// `rate_ddir(dir)`.
    fn rate_pick_dir(&self, dir: Direction, now_ns: u64, end_ns: u64) -> Pick {
        let d = dir.index();
        if !self.rated {
            return Pick::Go(dir);
        }
        let now_us = now_ns.saturating_sub(self.epoch_ns) / 1000;
        if self.next_io_us[d] <= now_us {
            return Pick::Go(dir);
        }
        let o = d ^ 1;
        let odir = if o == 0 { Direction::Read } else { Direction::Write };
        let (mut usec, chosen) = if self.may_switch[d] {
            if self.next_io_us[o] <= now_us {
                return Pick::Go(odir);
            }
            if self.next_io_us[d] <= self.next_io_us[o] {
                (self.next_io_us[d] - now_us, dir)
            } else {
                (self.next_io_us[o] - now_us, odir)
            }
        } else {
            (self.next_io_us[d] - now_us, dir)
        };
        if end_ns != u64::MAX && now_ns.saturating_add(usec.saturating_mul(1000)) > end_ns {
            if now_ns > end_ns {
                return Pick::Timeout;
            }
            usec = (end_ns - now_ns) / 1000;
        }
        Pick::Wait(usec, chosen)
    }

    /// An I/O of `dir` and `bytes` was queued: fio's `rate_io_issue_bytes`
    /// and `rate_next_io_time = usec_for_io(ddir)`.
    pub(crate) fn issued(&mut self, dir: Direction, bytes: u64) {
        let d = dir.index();
        self.last_dir = dir;
        if !self.rated {
            return;
        }
        self.issue_bytes[d] = self.issue_bytes[d].wrapping_add(bytes);
        self.next_io_us[d] = self.usec_for_io(d);
    }

    /// fio's `usec_for_io`: when the next I/O of direction `d` may go, µs since the epoch.
    fn usec_for_io(&mut self, d: usize) -> u64 {
        let bps = self.rate_bps[d];
        if self.poisson {
            let iops = bps / self.min_bs[d];
            if iops == 0 {
                // fio divides by zero here; the parser refuses such jobs.
                return 0;
            }
            // (int64_t)(1000000 / iops) * -logf(__rand_0_1()): a float product, truncated.
            let r = self.poisson_rng[d].next() as f64;
            let u = ((r + 1.0) / 4_294_967_296.0) as f32;
            let val = ((1_000_000 / iops) as f32 * -u.ln()) as u64;
            self.last_usec[d] = self.last_usec[d].wrapping_add(val as i64);
            return self.last_usec[d] as u64;
        }
        if bps == 0 {
            return 0;
        }
        if !self.by_bytes[d] && self.split[d] {
            // rate_iops with bssplit: the I/O count, not the bytes.
            let iops = bps / self.min_bs[d];
            if iops == 0 {
                return 0;
            }
            self.last_usec[d] = self.last_usec[d].wrapping_add((1_000_000 / iops) as i64);
            return self.last_usec[d] as u64;
        }
        let bytes = self.issue_bytes[d] as u128;
        let bps = bps as u128;
        let secs = bytes / bps;
        let remainder = bytes % bps;
        (remainder * 1_000_000 / bps + secs * 1_000_000).min(u64::MAX as u128) as u64
    }

    /// `handle_thinktime`'s test after an I/O: is it time to think? `issued`
    /// and `completed` are the job's I/O counts (fio's `io_issues`, `io_blocks`).
    pub(crate) fn think_due(&self, now_ns: u64, issued: u64, completed: u64) -> Option<u64> {
        let t = &self.think;
        if t.think_us == 0 || issued == self.issued_at_think {
            return None;
        }
        let blocks = if t.count_issued { issued } else { completed };
        let mut stall = false;
        if t.iotime_us > 0 {
            if now_ns.saturating_sub(self.last_think_ns) >= t.iotime_us.saturating_mul(1000) {
                stall = true;
            } else if !t.blocks_set {
                return None;
            }
        }
        if blocks >= self.last_think_blocks.saturating_add(t.blocks) {
            stall = true;
        }
        stall.then_some(blocks)
    }

    /// The end of a think time that lasted `total_us` (spun and slept): with
    /// `rate_ignore_thinktime`, the rate counts the I/O it would have done
    /// meanwhile, less one block so that the next I/O goes at once.
    pub(crate) fn thought(&mut self, blocks: u64, total_us: u64, now_ns: u64, issued: u64) {
        let d = self.last_dir.index();
        if total_us > 0 && self.rate_bps[d] > 0 && self.rate_ignore_thinktime {
            let bps = self.rate_bps[d];
            let missed = ((bps as u128 * total_us as u128) / 1_000_000) as u64;
            let bs = self.min_bs[d];
            let usperop = ((bs as u128 * 1_000_000) / bps as u128) as u64;
            // fio: `over = (usperop - total) / usperop * -bs`, 0 unless a whole op was missed.
            let over = if usperop <= total_us { bs } else { 0 };
            // Unsigned arithmetic, as fio's: adding missed - over wraps back.
            self.issue_bytes[d] = self.issue_bytes[d].wrapping_add(missed.wrapping_sub(over));
            self.last_usec[d] = self.last_usec[d].wrapping_add(total_us as i64);
        }
        self.last_think_blocks = blocks;
        if self.think.iotime_us > 0 {
            self.last_think_ns = now_ns;
        }
        self.issued_at_think = issued;
    }
}

/// fio's get_next_buflen for a `bsrange` (no `bssplit`) from the draw `r`
/// of a generator whose largest value is `frand_max`: the smallest size
/// plus the largest times `r / (frand_max + 1)`, aligned down to the
/// smallest (unless `bs_unaligned`), at most the largest.
pub(crate) fn bsrange_pick(min_bs: u64, max_bs: u64, unaligned: bool, r: u64, frand_max: u64) -> u64 {
    let mut buflen = min_bs + (max_bs as f64 * (r as f64 / (frand_max as f64 + 1.0))) as u64;
    if !unaligned {
        if min_bs.is_power_of_two() {
            buflen &= !(min_bs - 1);
        } else {
            buflen -= buflen % min_bs;
        }
    }
    buflen.min(max_bs)
}

/// `get_next_buflen` with a `bssplit`: the draw `r`, the entries in their
/// order, each taken when `r / (cumulative percentage) <= frand_max / 100`
/// and it `fits` (the rest of the region holds it); the last entry
/// considered when none is. Entries of 0% are skipped.
pub(crate) fn bssplit_pick(split: &[BsSplit], r: u64, frand_max: u64, fits: impl Fn(u64) -> bool) -> u64 {
    let mut buflen = 0;
    let mut perc: u64 = 0;
    for e in split {
        if e.perc == 0 {
            continue;
        }
        buflen = e.bs;
        perc += e.perc as u64;
        if r / perc <= frand_max / 100 && fits(buflen) {
            break;
        }
    }
    buflen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paced(cfg: &JobConfig) -> Pace {
        Pace::of(cfg, &RandStates::new(1, 1, false, false, false), 60).unwrap()
    }

    #[test]
    fn linear_rate_spaces_ios_by_their_bytes() {
        let mut cfg = JobConfig::new("r");
        cfg.rate = [1 << 20, 0, 0];
        let mut p = paced(&cfg);
        assert_eq!(p.rate_pick(Direction::Read, 0, u64::MAX), Pick::Go(Direction::Read));
        p.issued(Direction::Read, 4096);
        // 4096 B at 1 MiB/s: 3906.25 µs, truncated as fio computes it.
        assert_eq!(p.next_io_us[0], 3906);
        assert_eq!(p.rate_pick(Direction::Read, 1_000_000, u64::MAX), Pick::Wait(2906, Direction::Read));
        assert_eq!(p.rate_pick(Direction::Read, 3_906_000, u64::MAX), Pick::Go(Direction::Read));
        // The runtime caps the sleep; past it, the job stops.
        assert_eq!(p.rate_pick(Direction::Read, 1_000_000, 2_000_000), Pick::Wait(1000, Direction::Read));
        assert_eq!(p.rate_pick(Direction::Read, 2_500_000, 2_000_000), Pick::Timeout);
    }

    #[test]
    fn a_mixed_job_switches_to_the_direction_behind_its_rate() {
        let mut cfg = JobConfig::new("rw");
        cfg.rw = RwKind::RandRw;
        cfg.rate_iops = [100, 100, 0];
        let mut p = paced(&cfg);
        p.issued(Direction::Read, 4096);
        assert_eq!(p.next_io_us[0], 10_000);
        assert_eq!(p.rate_pick(Direction::Read, 0, u64::MAX), Pick::Go(Direction::Write));
        p.issued(Direction::Write, 4096);
        p.issued(Direction::Write, 4096);
        // Both ahead: sleep the sooner one, switching to it.
        assert_eq!(p.rate_pick(Direction::Write, 1_000_000, u64::MAX), Pick::Wait(9000, Direction::Read));
    }

    #[test]
    fn poisson_gaps_vary_around_the_rates_mean() {
        let mut cfg = JobConfig::new("p");
        cfg.rate_iops = [1000, 0, 0];
        cfg.rate_process = RateProcess::Poisson;
        let mut p = paced(&cfg);
        let mut prev = 0;
        let mut gaps = Vec::new();
        for _ in 0..20_000 {
            p.issued(Direction::Read, 4096);
            gaps.push(p.next_io_us[0] - prev);
            prev = p.next_io_us[0];
        }
        let mean = gaps.iter().sum::<u64>() as f64 / gaps.len() as f64;
        assert!((mean - 1000.0).abs() < 30.0, "mean gap {mean} µs, 1000 expected");
        let var = gaps.iter().map(|&g| (g as f64 - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
        // Exponential: the deviation is the mean.
        assert!((var.sqrt() - 1000.0).abs() < 50.0, "deviation {}", var.sqrt());
        assert!(gaps.iter().filter(|&&g| g < 100).count() > 1000, "short gaps are common");
    }

    #[test]
    fn thinktime_waits_for_its_blocks_or_its_io_time() {
        let mut cfg = JobConfig::new("t");
        cfg.thinktime = Thinktime { think_us: 100, blocks: 4, blocks_set: true, ..Thinktime::default() };
        let mut p = paced(&cfg);
        assert_eq!(p.think_due(0, 0, 0), None, "no I/O yet");
        assert_eq!(p.think_due(0, 5, 3), None, "3 of 4 completed");
        assert_eq!(p.think_due(0, 5, 4), Some(4));
        p.thought(4, 150, 0, 5);
        assert_eq!(p.think_due(0, 5, 8), None, "no I/O since");
        assert_eq!(p.think_due(0, 6, 8), Some(8));
        p.think.count_issued = true;
        assert_eq!(p.think_due(0, 6, 8), None, "issued 6 < 4 + 4");
        // thinktime_iotime without thinktime_blocks: time only.
        p.think = Thinktime { think_us: 100, iotime_us: 1000, ..Thinktime::default() };
        p.last_think_ns = 0;
        assert_eq!(p.think_due(999_999, 7, 100), None);
        assert_eq!(p.think_due(1_000_000, 7, 100), Some(100));
    }

    #[test]
    fn rate_ignore_thinktime_counts_the_missed_bytes_less_one_block() {
        let mut cfg = JobConfig::new("i");
        cfg.rate = [1 << 20, 0, 0];
        cfg.rate_ignore_thinktime = true;
        cfg.thinktime.think_us = 10_000;
        let mut p = paced(&cfg);
        p.issued(Direction::Read, 4096);
        p.thought(1, 10_000, 0, 1);
        // 10 ms at 1 MiB/s is 10485 bytes, less a block.
        assert_eq!(p.issue_bytes[0], 4096 + 10_485 - 4096);
        // Less than one op's time missed: fio's `over` is 0 and the bytes still count.
        p.thought(1, 1000, 0, 1);
        assert_eq!(p.issue_bytes[0], 10_485 + 1048);
    }

    #[test]
    fn bssplit_follows_fios_cumulative_test() {
        let split = [BsSplit { bs: 4096, perc: 25 }, BsSplit { bs: 65536, perc: 75 }];
        const MAX: u64 = u32::MAX as u64;
        let pick = |r: u64| bssplit_pick(&split, r, MAX, |_| true);
        assert_eq!(pick(0), 4096);
        assert_eq!(pick(MAX / 4 - 200), 4096);
        assert_eq!(pick(MAX / 4 + 200), 65536);
        assert_eq!(pick(MAX), 65536);
        // Percentages short of 100: the last entry takes the rest.
        let short = [BsSplit { bs: 512, perc: 10 }, BsSplit { bs: 8192, perc: 20 }];
        assert_eq!(bssplit_pick(&short, MAX, MAX, |_| true), 8192);
        // An entry that does not fit is passed over.
        assert_eq!(bssplit_pick(&split, 0, MAX, |b| b > 4096), 65536);
    }
}
