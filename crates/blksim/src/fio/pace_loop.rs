//! fio: the pacing in its `do_io` loop. Before an io_u
//! (`get_io_u` → `rate_ddir`) and after one (`handle_thinktime`) the job
//! may have to wait: `io_u_quiesce` (commit what is queued, reap until
//! nothing is in flight), then `usec_spin` (user time) and `usec_sleep` →
//! `nanosleep` → `hrtimer_nanosleep` (schedule() out; the hrtimer fires
//! `TIMER_SLACK_NS` after the time asked, as LOCAL_TIMER_VECTOR on the
//! job's CPU, whose `hrtimer_wakeup` → `try_to_wake_up` puts the task back
//! on its run queue). Also the io_us of the jobs that take this slower
//! path (their offsets and sizes from `io_u.rs`).

use crate::block::Fsync;
use crate::fio::io_u::NoOffset;
use crate::fio::job::JobState;
use crate::fio::pace::{Action, Phase, Pick, TIMER_SLACK_NS};
use crate::fio::replay::ReplayWait;
use crate::fio::verify::verify_state_stops;
use crate::hw::cpu::Acct;
use crate::hw::lapic::LOCAL_TIMER_VECTOR;
use crate::ids::{CpuId, JobId};
use crate::stats::CpuStage;
use crate::system::{Event, Sim};
use crate::workload::Direction;

/// The latest virtual time a paced job may sleep to (2^62 ns, 146 years), and the longest
/// single sleep (ten years): beyond them the run stops with an error rather than let virtual
/// time run away (fio itself would sleep that long).
const MAX_WAKE_NS: u64 = 1 << 62;
const YEAR_NS: u64 = 31_557_600_000_000_000;
const MAX_SLEEP_NS: u64 = 10 * YEAR_NS;

impl Sim {
    /// What a 1 µs `nanosleep` takes here, µs: fio's `ns_granularity`
    /// (the syscall, schedule() out, the slack, the timer interrupt, the
    /// wake-up and the switch back in).
    pub(crate) fn nanosleep_granularity_us(&self) -> u64 {
        let c = &self.costs;
        let ns = c.syscall_ns
            + 2 * c.context_switch_ns
            + 1000
            + TIMER_SLACK_NS
            + c.irq_entry_ns
            + c.apic_eoi_ns
            + c.irq_exit_ns
            + c.wakeup_ns;
        ns / 1000
    }

    /// fio's loop before its next io_u: is it time to think (after the
    /// last io_u), or is the next io_u ahead of its rate? Either holds the
    /// issuing (`done_issuing`) with the action to take once quiesced.
    /// `reaping`: completions the current step is about to account.
    pub(crate) fn pace_check(&mut self, j: JobId, reaping: u32) {
        let now = self.q.now_ns();
        let job = &mut self.jobs[j];
        if job.done_issuing {
            return;
        }
        let Some(mut p) = job.pace.take() else { return };
        if !p.ramp_reset_done && now >= job.ts.ramp_end_ns {
            p.ramp_reset(now);
        }
        let completed = job.ios_completed(reaping);
        let flow_held = job.flow.filter(|m| m.sleep_us > 0 && self.run.flows.exceeded(m));
        if let Some(blocks) = p.think_due(now, job.ios_issued, completed) {
            p.action = Some(Action::Think { blocks });
            job.done_issuing = true;
        } else if let Some(m) = flow_held.filter(|_| p.forced.is_none()) {
            // flow_threshold_exceeded: io_u_quiesce, then usleep(flow_sleep).
            p.action = Some(Action::Flow { usec: m.sleep_us });
            job.done_issuing = true;
        } else if p.rated && p.forced.is_none() {
            let dir = match p.drawn.take() {
                Some(d) => d,
                None => job.next_dir(),
            };
            match p.rate_pick(dir, now, job.end_ns) {
                Pick::Go(d) => p.forced = Some(d),
                Pick::Wait(usec, d) => {
                    p.action = Some(Action::Rate { usec, dir: d });
                    job.done_issuing = true;
                }
                Pick::Timeout => job.done_issuing = true,
            }
        }
        job.pace = Some(p);
    }

    /// Where fio's loop would end: a job holding its issuing for a pause
    /// (quiesced now) starts it. Returns whether it did.
    pub(crate) fn pace_idle(&mut self, j: JobId) -> bool {
        let job = &mut self.jobs[j];
        let error = job.error.is_some();
        let Some(p) = job.pace.as_deref_mut() else { return false };
        let Some(action) = p.action else { return false };
        if error {
            p.action = None;
            return false;
        }
        match action {
            Action::Rate { usec, .. } => self.usec_sleep(j, usec, 0),
            Action::Flow { usec } => {
                // flow.c: usleep(flow_sleep), libc's, not fio's usec_sleep.
                let now = self.q.now_ns();
                self.pace_mut(j).phase =
                    Phase::Sleep { left_us: usec, total_us: 0, since_ns: now, spin: false, plain: true };
                let cost = self.costs.syscall_ns + self.costs.context_switch_ns;
                self.job_set(j, JobState::SleepEnter, cost, Acct::Sys, CpuStage::Syscall, 0);
            }
            Action::LatQuiesce { reset } => {
                self.lat_quiesced(j, reset);
                self.pace_done(j, 0);
            }
            Action::Think { .. } => {
                let left = self.runtime_cap_us(j, self.jobs[j].pace.as_deref().map_or(0, |p| p.think.spin_us));
                if left > 0 {
                    self.pace_mut(j).phase = Phase::ThinkSpin { us: left };
                    self.job_set(j, JobState::PaceSpin, left.saturating_mul(1000), Acct::User, CpuStage::UserLoop, 0);
                } else {
                    self.think_sleep(j, 0);
                }
            }
        }
        true
    }

    fn pace_mut(&mut self, j: JobId) -> &mut crate::fio::pace::Pace {
        self.jobs[j].pace.as_deref_mut().expect("a paced job")
    }

    /// `us`, cut to the job's runtime left (fio's `runtime_left`; none once it is over,
    /// where fio's unsigned difference wraps).
    fn runtime_cap_us(&self, j: JobId, us: u64) -> u64 {
        let (now, end) = (self.q.now_ns(), self.jobs[j].end_ns);
        if end == u64::MAX || now >= end {
            us
        } else {
            us.min((end - now) / 1000)
        }
    }

    /// After `thinktime_spin`'s `spun_us`: sleep the rest of the think time.
    fn think_sleep(&mut self, j: JobId, spun_us: u64) {
        let think = self.jobs[j].pace.as_deref().map_or(0, |p| p.think.think_us);
        let left = self.runtime_cap_us(j, think.saturating_sub(spun_us));
        self.usec_sleep(j, left, spun_us)
    }

    /// fio's `usec_sleep(left)`, `total_us` of the pause spent already: a
    /// `nanosleep` of `left` less the granularity, or a spin when less is left.
    fn usec_sleep(&mut self, j: JobId, left_us: u64, total_us: u64) {
        if left_us == 0 {
            return self.pace_done(j, total_us);
        }
        let now = self.q.now_ns();
        let p = self.pace_mut(j);
        let spin = left_us < p.granularity_us;
        p.phase = Phase::Sleep { left_us, total_us, since_ns: now, spin, plain: false };
        if spin {
            self.job_set(j, JobState::PaceSpin, left_us.saturating_mul(1000), Acct::User, CpuStage::UserLoop, 0);
        } else {
            // nanosleep: the syscall, hrtimer_nanosleep arms the timer and schedule()s out.
            let cost = self.costs.syscall_ns + self.costs.context_switch_ns;
            self.job_set(j, JobState::SleepEnter, cost, Acct::Sys, CpuStage::Syscall, 0);
        }
    }

    /// A spin (`usec_spin`) ended.
    pub(crate) fn pace_spin_done(&mut self, j: JobId) {
        match self.pace_mut(j).phase {
            Phase::ThinkSpin { us } => self.think_sleep(j, us),
            Phase::Sleep { left_us, total_us, .. } => self.pace_done(j, total_us + left_us),
            Phase::Idle => unreachable!("a pace spin without a phase"),
        }
    }

    /// `nanosleep` scheduled the task out: its hrtimer fires at the end of its slack.
    pub(crate) fn pace_sleep_entered(&mut self, cpu: CpuId, j: JobId) {
        let now = self.q.now_ns();
        let Phase::Sleep { left_us, plain, .. } = self.pace_mut(j).phase else {
            unreachable!("nanosleep without a sleep")
        };
        let gran = if plain { 0 } else { self.pace_mut(j).granularity_us };
        let sleep_ns = (left_us - gran).saturating_mul(1000);
        let at = now.saturating_add(sleep_ns).saturating_add(TIMER_SLACK_NS);
        if sleep_ns > MAX_SLEEP_NS || at >= MAX_WAKE_NS {
            // A rate of a few bytes a second for large blocks: years of virtual time per I/O.
            self.run.fail(crate::error::Error::bad_input(format!(
                "job {}: its rate makes it sleep {} s before an I/O (more than {} years of virtual time): \
                 a rate too low for its block size",
                self.jobs[j].cfg.name,
                sleep_ns / 1_000_000_000,
                MAX_SLEEP_NS / YEAR_NS
            )));
        }
        let at = at.min(MAX_WAKE_NS);
        let job = &mut self.jobs[j];
        job.task.state = JobState::Nanosleep;
        job.task.remaining_ns = 0;
        self.cpus[cpu].current = None;
        self.q.at(at, Event::SleepTimerExpired { job: j });
    }

    /// The hrtimer of a sleeping job expired: the local timer interrupt on
    /// its CPU (`hrtimer_interrupt` → `hrtimer_wakeup`) wakes it.
    pub(crate) fn sleep_timer_expired(&mut self, j: JobId) {
        let cpu = self.jobs[j].task.cpu;
        self.cpus[cpu].timer_wake.push(j);
        self.interrupt_arrived(cpu, LOCAL_TIMER_VECTOR);
    }

    /// The job is back on its CPU after its `nanosleep`: fio measures how
    /// long it slept and sleeps (or spins) again if that was short.
    pub(crate) fn pace_woke(&mut self, j: JobId) {
        let now = self.q.now_ns();
        let Phase::Sleep { left_us, total_us, since_ns, plain, .. } = self.pace_mut(j).phase else {
            unreachable!("woken from nanosleep without a sleep")
        };
        let slept = (now - since_ns) / 1000;
        if slept >= left_us || plain {
            self.pace_done(j, total_us + slept)
        } else {
            self.usec_sleep(j, left_us - slept, total_us + slept)
        }
    }

    /// The pause (`total_us` spun and slept) is over: the rate's I/O goes,
    /// or the think time is accounted; fio's loop goes on.
    fn pace_done(&mut self, j: JobId, total_us: u64) {
        let now = self.q.now_ns();
        let job = &mut self.jobs[j];
        let issued = job.ios_issued;
        let p = job.pace.as_deref_mut().expect("a paced job");
        p.phase = Phase::Idle;
        match p.action.take() {
            Some(Action::Rate { dir, .. }) => p.forced = Some(dir),
            Some(Action::Think { blocks }) => p.thought(blocks, total_us, now, issued),
            Some(Action::Flow { .. } | Action::LatQuiesce { .. }) => {}
            None => {}
        }
        if job.error.is_none() {
            job.done_issuing = false;
        }
        self.job_next(j);
    }

    /// `job_prep` for a job with pacing or a `bssplit`: each io_u's
    /// direction passes the rate (the first one may have been chosen by
    /// `pace_check`), its block size comes from the split, and the
    /// batch stops at an io_u ahead of its rate or at a think time due.
    #[inline(never)]
    pub(crate) fn job_prep_shaped(&mut self, j: JobId, n: u32) {
        let now = self.q.now_ns();
        let mut k = 0;
        while k < n {
            // (A file found done takes no io_u: get_io_u tries the next, `NoOffset::Retry`.)
            let i = k;
            k += 1;
            let job = &mut self.jobs[j];
            if job.done_issuing || job.limit_reached() || job.sync_trim.is_some() {
                break;
            }
            // do_io's loop top: the flow's check, then get_io_u (a verify read-back first).
            if job.flow.is_some() && !self.flow_take(j) {
                break;
            }
            if !self.jobs[j].pass_check() {
                break;
            }
            self.jobs[j].io_u_get();
            if self.jobs[j].verify.is_some() {
                match self.verify_take(j) {
                    Some(p) if verify_state_stops(&mut self.jobs[j], 0, Some(p.numberio)) => {
                        self.jobs[j].done_issuing = true;
                        break;
                    }
                    Some(p) => {
                        let dev = self.jobs[j].devs.get(p.file as usize).copied();
                        let rwmix = self.jobs[j].rwmix;
                        self.prep_request(j, Direction::Read, p.bytes, p.offset, dev, p.file as usize, now);
                        self.jobs[j].read_back_issued(p.bytes, rwmix);
                        continue;
                    }
                    None if self.jobs[j].verify.as_deref().is_some_and(|v| v.phase) => {
                        self.jobs[j].done_issuing = true;
                        break;
                    }
                    None => {}
                }
            }
            if self.jobs[j].fsync.as_deref().is_some_and(|f| f.due(self.jobs[j].cfg.sync_every)) {
                self.prep_fsync(j, Fsync::Io, None, now);
                self.jobs[j].io_u_used();
                continue;
            }
            let job = &mut self.jobs[j];
            let mut pace = job.pace.take();
            let dir = match pace.as_deref_mut() {
                None => job.next_dir(),
                Some(p) => {
                    let completed = job.ios_completed(0);
                    let chosen = if let Some(d) = p.forced.take() {
                        Some(d)
                    } else if i > 0 && p.think_due(now, job.ios_issued, completed).is_some() {
                        None
                    } else {
                        let d = match p.drawn.take() {
                            Some(d) => d,
                            None => job.next_dir(),
                        };
                        match p.rate_pick(d, now, job.end_ns) {
                            Pick::Go(d) => Some(d),
                            _ => {
                                p.drawn = Some(d);
                                None
                            }
                        }
                    };
                    match chosen {
                        Some(d) => d,
                        None => {
                            job.pace = pace;
                            break;
                        }
                    }
                }
            };
            let d = dir.index();
            // A read-only verifying job checks its reads against a loaded state.
            if d != 2 && job.verify.is_some() && verify_state_stops(job, d, None) {
                job.pace = pace;
                job.done_issuing = true;
                break;
            }
            let min_bs = job.cfg.bs[d];
            let devs = &self.devs;
            let (di, dev, capacity, region) = job.next_file(min_bs, |d| devs[d].capacity_bytes);
            job.strided_zone(di, d, capacity);
            // randtrimwrite: a write goes where its trim went, as long (no draw, no random map).
            if let Some((o, bytes)) = job.randtrimwrite_write(di, d) {
                job.seq_tick();
                // (get_next_block sets IO_U_F_BUSY_OK on the write's io_u.)
                (job.drew_seq, job.busy_ok_carried) = (true, false);
                // get_next_offset: none past the region (a zone moved on after the trim), and
                // fill_io_u none past the file: get_io_u fails and the pass ends.
                if job.io_u_refused(o, bytes, region, capacity) {
                    job.pace = pace;
                    if job.fill_failed(di) {
                        k -= job.files.is_some() as u32;
                        continue;
                    }
                    job.done_issuing = true;
                    break;
                }
                job.io_u_used();
                job.last_pos[di * 3 + 1] = job.cfg.offset + o + bytes;
                job.trimwrite_placed(di, d, job.cfg.offset + o);
                job.strided_placed(bytes);
                job.verify_logged(di, d, o, bytes);
                if let Some(p) = pace.as_deref_mut() {
                    p.issued(dir, bytes);
                }
                job.pace = pace;
                if let Some(f) = job.fsync.as_deref_mut() {
                    f.issued(dir);
                }
                self.prep_request(j, dir, bytes, self.jobs[j].cfg.offset + o, dev, di, now);
                continue;
            }
            // get_next_offset for the direction's smallest size, then get_next_buflen (a new
            // pass's direction drawn again unless a rate chose it).
            let mut d = d;
            let redraw = pace.as_deref().is_none_or(|p| !p.rated);
            let o = match job.next_offset(di, &mut d, region, capacity, redraw) {
                Ok(o) => o,
                Err(NoOffset::Retry) => {
                    job.pace = pace;
                    k = i;
                    continue;
                }
                Err(NoOffset::Done) => {
                    job.pace = pace;
                    job.done_issuing = true;
                    break;
                }
            };
            let (dir, min_bs) = (Direction::ALL[d], job.cfg.bs[d]);
            if d == 2 && job.cfg.num_range > 1 {
                // io_uring_cmd's trim of several ranges: the io_u's offset is its last range's.
                let (offset, bytes, ranges) = job.fill_ranges(di, o, min_bs, region, capacity);
                job.strided_placed(bytes);
                if let Some(p) = pace.as_deref_mut() {
                    p.issued(dir, bytes);
                }
                job.pace = pace;
                let req = self.prep_request(j, dir, bytes, self.jobs[j].cfg.offset + offset, dev, di, now);
                self.reqs.reqs[req].ranges = ranges;
                continue;
            }
            let (offset, bytes) = (o, job.next_buflen(o, region));
            // fill_io_u: an I/O past the file's real size is not issued (io_u_fits measured from
            // a later start than the null engine's file grew by): the pass ends.
            if job.io_u_refused(offset, bytes, u64::MAX, capacity) {
                job.pace = pace;
                if job.fill_failed(di) {
                    k -= job.files.is_some() as u32;
                    continue;
                }
                job.done_issuing = true;
                break;
            }
            let bytes = job.io_placed(di, d, offset, bytes);
            job.trimwrite_placed(di, d, job.cfg.offset + offset);
            job.strided_placed(bytes);
            job.verify_logged(di, d, offset, bytes);
            if let Some(p) = pace.as_deref_mut() {
                p.issued(dir, bytes);
            }
            job.pace = pace;
            if let Some(f) = job.fsync.as_deref_mut() {
                f.issued(dir);
            }
            self.prep_request(j, dir, bytes, self.jobs[j].cfg.offset + offset, dev, di, now);
        }
    }

    /// fio's loop holds a shaped job before its next io_u: pacing, its
    /// flow's share, or a replayed entry's delay. Returns whether it does.
    pub(crate) fn shaped_hold(&mut self, j: JobId) -> bool {
        self.pace_check(j, 0);
        if self.flow_spins(j) {
            return true;
        }
        match self.jobs[j].replay_wait(self.q.now_ns()) {
            ReplayWait::Go => false,
            ReplayWait::Reap => {
                self.job_reap(j);
                true
            }
            ReplayWait::Spin { ns } => {
                self.job_set(j, JobState::ReplaySpin, ns, Acct::User, CpuStage::UserLoop, 0);
                self.jobs[j].task.spin = true;
                true
            }
        }
    }

    /// One io_u prepared: its request, queued on the job.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn prep_request(
        &mut self,
        j: JobId,
        dir: crate::workload::Direction,
        bytes: u64,
        offset: u64,
        dev: Option<crate::ids::DevId>,
        di: usize,
        now: u64,
    ) -> crate::ids::ReqId {
        let job = &mut self.jobs[j];
        if dir == crate::workload::Direction::Trim && job.trimwrite.is_some() {
            job.trimmed_bytes += bytes;
        } else {
            job.bytes_issued += bytes;
        }
        // (A trim the queue hook does with BLKDISCARD returns FIO_Q_COMPLETED: not in do_io's count.)
        if !(dir == crate::workload::Direction::Trim && job.sync_trims()) {
            job.pass_bytes += bytes;
        }
        job.pass_ios += 1;
        job.ios_issued += 1;
        // td_io_queue's io_issues; get_rw_ddir's direction is the one issued (a rate may switch it).
        job.io_issues[dir.index()] += 1;
        job.rwmix.ddir = dir.index() as u8;
        let req = self.reqs.alloc();
        let r = &mut self.reqs.reqs[req];
        r.io_u(j, dir, bytes as u32, offset, dev, di as u16, now, Fsync::No);
        let job = &mut self.jobs[j];
        r.ioprio = job.cfg.ioprio;
        if let Some(cmdprio) = job.cmdprio.as_deref() {
            if let Some((ioprio, index)) = cmdprio.draw(dir.index(), bytes, &mut job.rand.prio) {
                (r.ioprio, r.prio_index) = (ioprio, index);
            }
        }
        if dir == crate::workload::Direction::Trim && job.sync_trims() {
            // The queue hook's BUSY: what is queued before it (libaio) or in flight (posixaio) goes first.
            let busy = !job.queued.is_empty() || (job.engine.aio.is_some() && job.inflight > 0);
            job.sync_trim = Some(crate::fio::job::SyncTrim::Held { req, busy });
        } else {
            job.queued.push(req);
        }
        if job.cfg.log_queued {
            self.log_queued(j, req, di, dir.index(), Some((offset, bytes)), now);
        }
        req
    }
}
