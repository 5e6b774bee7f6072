//! fio: a job's thread state (`struct thread_data`, state): its
//! configuration, the I/Os it holds at each stage, the step it is
//! executing, and its statistics.

use std::collections::VecDeque;

use crate::block::elevator::SchedCtx;
use crate::fio::distribution::FileDist;
use crate::fio::file_set::FIO_FSERVICE_SHIFT;
use crate::fio::pace::Pace;
use crate::fio::rand::RandStates;
use crate::fio::random_map::RandomMaps;
use crate::hw::cpu::{Acct, Bill};
use crate::ids::{CpuId, DevId, HctxId, JobId, ReqId};
use crate::io_uring::ring::Ring;
use crate::sim::Rng;
use crate::stats::CpuStage;
use crate::stats::DirStats;
use crate::workload::{Direction, FileService, IoEngine, JobConfig, RandomGenerator, RwKind};

/// fio's FIO_ASYNCIO_SYNC_TRIM (libaio, posixaio; io_uring after
/// `async_trim_fail`): the queue hook trims with a blocking BLKDISCARD
/// ioctl, once the engine holds nothing uncommitted (libaio, io_uring) or
/// nothing in flight (posixaio).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SyncTrim {
    /// Prepared; `busy`: the hook returned FIO_Q_BUSY (io_us before it to commit or reap first),
    /// so fio requeues it and takes it again later (a new start time).
    Held { req: ReqId, busy: bool },
    /// Taken back after a BUSY (fio committed and reaped): offered to the hook again.
    Requeued(ReqId),
    /// In the ioctl: the task sleeps in `submit_bio_wait` until this request ends.
    Issued(ReqId),
}

/// The step a job is executing (or why it is not on a CPU).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum JobState {
    /// Not started yet (its phase has not begun, or startdelay).
    NotStarted,
    /// User: fio prepares `items` io_us.
    Prep,
    /// Sys: the submitting syscall (io_submit / io_uring_enter / pread...).
    Submit,
    /// Sys: entering a reaping syscall (io_getevents / io_uring_enter(GETEVENTS)).
    ReapEnter,
    /// fio's loop without a blocking point: take completions (sys: the
    /// syscall head), account them and prepare the next io_us (user), commit
    /// them (sys tail) — see `Chain`.
    Chain,
    /// Sys: schedule() out before sleeping.
    SleepOut,
    /// Off CPU, waiting for completions.
    Sleeping,
    /// Sys: `io_iopoll_check` found nothing to reap: spinning over the
    /// ring's iopoll list (open-ended: a completion pokes it, or
    /// `need_resched` ends it at the time slice's end).
    PollSpin,
    /// Sys: one `io_do_iopoll` pass (`Job::pass` says what it does).
    PollPass,
    /// User: SQPOLL, the program spins on its CQ ring for completions (no syscall).
    CqSpin,
    /// Sys: one iteration of an SQ thread (`io_sq_thread`): task_work, a poll pass, SQEs submitted.
    SqIter,
    /// glibc's AIO helper thread: the request it finished handed back, the
    /// next one taken and its pread/pwrite submitted (`fio/posixaio.rs`).
    AioWork,
    /// User: offload's `workqueue_enqueue` of the io_us fio prepared (`fio/rate_submit.rs`).
    WqEnqueue,
    /// Sys: offload's `pthread_cond_wait` (fio's thread for a free io_u or
    /// the flush, a worker for work) until schedule() takes it off its CPU.
    WqWait,
    /// t/io_uring's loop as one step: the task_work its `io_uring_enter`
    /// ran (sys), `reap_events_uring` and the next `prep_more_ios_uring`
    /// (user), the next `io_uring_enter`'s submission (sys).
    TioRound,
    /// Sys: spinning for a scheduler lock (ended by the hand-off).
    LockSpin,
    /// Sys: a step of the I/O scheduler's work (`dd.step` says which).
    Sched,
    /// User: fio spins (`usec_spin`: `thinktime_spin`, or the end of a sleep shorter than
    /// `nanosleep` can do); `Job::pace` says which.
    PaceSpin,
    /// User: fio's `do_io` loop goes round while the job's flow is over its
    /// share (`flow_threshold_exceeded` without `flow_sleep`); another job of the
    /// flow issuing pokes it.
    FlowSpin,
    /// User: an offload worker spins on fio's `overlap_check` mutex while its
    /// io_u overlaps one in flight (`serialize_overlap`); a freed io_u pokes it.
    OverlapSpin,
    /// User: fio's `iolog_delay` spins (reaping without waiting) until a
    /// replayed entry's delay is over; a completion pokes it.
    ReplaySpin,
    /// User: a verify thread checks an io_u (`verify_io_u`; `fio/verify_async.rs`).
    VerifyWork,
    /// Sys: `verify_async`'s `pthread_cond_wait` (fio's thread for a free io_u,
    /// a verify thread for work) until schedule() takes it off its CPU.
    VerifyWait,
    /// Sys: `nanosleep`'s entry, until schedule() takes the task off its CPU.
    SleepEnter,
    /// Sys: a hybrid IOPOLL walk up to the request it sleeps for, its hrtimer
    /// armed, until schedule() takes the task off its CPU.
    PollSleepEnter,
    /// Off CPU in `nanosleep` (a rate's or a think time's sleep) until its hrtimer wakes it.
    Nanosleep,
    /// Finished.
    Done,
}

/// What a `JobState::Chain` step does when it ends, in order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Chain {
    /// io_uring task_work items run (CQEs posted).
    pub tw: u32,
    /// Completions fio reaps and accounts.
    pub reap: u32,
    /// The io_us prepared in this step are committed at its end.
    pub submit: bool,
}

/// fio's `setup_random_seeds`: seed `k` of the job numbered `thread_number`
/// (from 1) from `td->o.rand_seed`.
pub(crate) fn fio_rand_seed(rand_seed: u64, thread_number: u64, k: u64) -> u64 {
    // Four multiplications first, then one more per seed before seed `k`.
    let seed = (0..4 + k).fold(rand_seed, |s, _| s.wrapping_mul(0x9e37_0001));
    seed.wrapping_mul(thread_number).wrapping_add(k)
}

/// A mixed job's run of one direction (fio's `get_rw_ddir`): a new direction
/// is drawn once the run's direction has `issues` data io_us issued; a
/// switch sets the new run's length from the old direction's issues
/// (`set_rwmix_bytes`). `ddir` is the direction last chosen.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Rwmix {
    pub ddir: u8,
    pub issues: u64,
}

/// `zonemode=strided`'s state: the job's `offset` is fio's `f->file_offset`
/// of the file it fills an io_u on, the start of the zone it is in, which
/// moves; `start` is where it began (fio's `get_start_offset`), `bytes` fio's
/// `td->zone_bytes`, one count for all the job's files. With several files,
/// `offsets` keeps each file's zone (its `file_offset`) while another's is
/// in `offset`.
#[derive(Clone, Debug)]
pub(crate) struct StridedZone {
    pub cfg: crate::workload::Strided,
    pub start: u64,
    pub bytes: u64,
    pub offsets: Vec<u64>,
}

/// fio's `last_ddir_issued`, as an fsync job's next io_u depends on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum LastIssued {
    /// Nothing yet.
    #[default]
    Nothing,
    /// A read or a trim.
    Other,
    /// A write.
    Write,
    /// An fsync or fdatasync.
    Sync,
}

/// Where a loop of an asynchronous job (or one with `end_fsync`) is between
/// its passes: fio's do_io returns, draining what is in flight and running
/// `end_fsync`, before thread_main's next loop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum LoopEnd {
    #[default]
    Running,
    /// The loop ended with another to come: its io_us drain first.
    Deferred,
    /// Drained (and synced): the next loop starts.
    Drained,
}

/// A job with `fsync`, `fdatasync` or `end_fsync` (fio's `should_fsync` state).
#[derive(Clone, Debug, Default)]
pub(crate) struct Fsyncs {
    /// Writes issued (fio's `io_issues[DDIR_WRITE]`).
    pub writes: u64,
    pub last: LastIssued,
    /// Files still to fsync at the end of the job's I/O (`end_fsync`), once that began.
    pub end_left: Option<u16>,
    /// Syncs queued or in flight, not yet accounted (they are not in `Job::ios_issued`).
    pub outstanding: u64,
    /// Of those, the ones a chain step reaps, before it accounts them (`None` outside one):
    /// fio's getevents took them out of `io_u_in_flight` before its loop top counts `number_ios`.
    pub reaped: Option<u64>,
    pub stats: crate::stats::SyncStats,
    /// With `write_iolog`: fio's io_us, whose offsets a sync's line shows.
    pub io_us: Option<IoUPool>,
}

/// fio's io_us as `write_iolog` sees them (`init_io_u`: `iodepth` of them,
/// zeroed): `get_io_u` pops the free list (a stack filled in index order,
/// `io_u_qpop`) and clears the length, not the offset, so a sync's line
/// shows the offset of its io_u's last use; `put_io_u` pushes it back in
/// the order the completions are accounted.
#[derive(Clone, Debug, Default)]
pub(crate) struct IoUPool {
    free: Vec<u32>,
    offsets: Vec<u64>,
    inflight: Vec<(ReqId, u32)>,
    /// The io_u the null engine refused with FIO_Q_BUSY before a reap
    /// (`IoUPool::reserve`): its index, and where it lay in the free list.
    reserved: Option<(u32, usize)>,
}

impl IoUPool {
    pub(crate) fn new(iodepth: u32) -> IoUPool {
        let n = iodepth.max(1);
        IoUPool { free: (0..n).collect(), offsets: vec![0; n as usize], inflight: Vec::new(), reserved: None }
    }

    /// fio's null engine answered FIO_Q_BUSY to the io_u it drew before this
    /// reap: that io_u left the free list before the reap's `put_io_u`s, and
    /// `requeue_io_u` hands it to the next `get`.
    pub(crate) fn reserve(&mut self) {
        if let Some(i) = self.free.pop() {
            self.reserved = Some((i, self.free.len()));
        }
    }

    /// No io_u came after the reap (the pass ended before fio drew one): the
    /// reserved one lies where it lay, under the ones the reap put back.
    pub(crate) fn unreserve(&mut self) {
        if let Some((i, at)) = self.reserved.take() {
            self.free.insert(at.min(self.free.len()), i);
        }
    }

    /// `get_io_u` for `req`, at `offset` (a read, write or trim) or none (a
    /// sync): the offset the io_u carried before.
    pub(crate) fn get(&mut self, req: ReqId, offset: Option<u64>) -> u64 {
        let i = self.reserved.take().map(|(i, _)| i).or_else(|| self.free.pop()).unwrap_or_else(|| {
            // (fio never has more in flight than iodepth; a pool too small grows.)
            self.offsets.push(0);
            self.offsets.len() as u32 - 1
        });
        self.inflight.push((req, i));
        let stale = self.offsets[i as usize];
        if let Some(o) = offset {
            self.offsets[i as usize] = o;
        }
        stale
    }

    /// fill_io_u refused the io_u get_io_u took, which it had placed at `offset`: the io_u
    /// goes back on top of the free list with that offset (the next `get` takes it).
    pub(crate) fn refused(&mut self, offset: u64) {
        if let Some(i) = self.reserved.map(|(i, _)| i).or_else(|| self.free.last().copied()) {
            self.offsets[i as usize] = offset;
        }
    }

    /// `put_io_u` of `req`'s io_u.
    pub(crate) fn put(&mut self, req: ReqId) {
        if let Some(at) = self.inflight.iter().position(|e| e.0 == req) {
            let (_, i) = self.inflight.swap_remove(at);
            self.free.push(i);
        }
    }
}

impl Fsyncs {
    /// An io_u issued (fio's `td_io_queue`): a write counts.
    pub(crate) fn issued(&mut self, dir: Direction) {
        if dir == Direction::Write {
            self.writes += 1;
            self.last = LastIssued::Write;
        } else {
            self.last = LastIssued::Other;
        }
    }

    /// fio's `get_rw_ddir`: is an fsync (or fdatasync) due before the next
    /// io_u? After a write, when the writes issued are a multiple of `every`.
    pub(crate) fn due(&self, every: [u64; 2]) -> bool {
        let w = self.writes;
        self.last == LastIssued::Write && every.iter().any(|&n| n > 0 && w.is_multiple_of(n))
    }
}

/// The counters of fio's `thread_stat` (and `thread_data`'s sampling
/// state) a reaped batch updates; the latency statistics per direction
/// are `Job::dirs`, kept at the end of the job (they are large).
#[derive(Clone, Debug, Default)]
pub(crate) struct ThreadStat {
    /// When fio took the timestamp of the batch it is accounting.
    pub reap_ns: u64,
    pub ramp_end_ns: u64,
    /// fio's `td->epoch`: the job's start, then the moment its statistics
    /// were reset at the end of its ramp (`ramp_period_over`).
    pub epoch_ns: u64,
    pub next_sample_ns: u64,
    /// `io_u_map`: the depth at submission, submits and completions per batch size.
    pub iodepth_level: [u64; 7],
    pub iodepth_submit: [u64; 7],
    pub iodepth_complete: [u64; 7],
    /// Sums of the latency stages of measured I/Os (`stats::LATENCY_STAGES`).
    pub breakdown_ns: [u64; 5],
    /// This sample interval's bytes and I/Os per direction.
    pub sample_bytes: [u64; 3],
    pub sample_ios: [u64; 3],
    /// I/Os recorded for the logs so far (`IoRecord::seq`).
    pub records: u64,
    /// fio's `total_io_u` and `io_bytes` of the I/Os done in the ramp (a failed one, which
    /// ends the job, is left out), per direction, which `reset_all_stats` clears at its end:
    /// what a report shows before then.
    pub ramp_ios: [u64; 3],
    pub ramp_bytes: [u64; 3],
    /// Of `ramp_ios`, the trims io_uring's ring refused (done with nothing trimmed).
    pub ramp_empty: [u64; 3],
}

/// A failed I/O: its result (a negative errno) and what it was; or a minimum rate missed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IoError {
    pub errno: i32,
    pub file: u16,
    pub dir: crate::workload::Direction,
    pub offset: u64,
    pub bytes: u32,
    /// check_min_rate's misses, by direction (fio checks each and logs each).
    pub min_rate: [Option<crate::stats::MinRateMiss>; 3],
    /// lat_fatal: the I/O's `lat` and the `max_latency` it passed, ns.
    pub max_latency: Option<(u64, u64)>,
}

impl IoError {
    pub(crate) fn of(r: &crate::block::Request) -> IoError {
        IoError {
            errno: r.status,
            file: r.file,
            dir: r.dir,
            offset: r.offset,
            bytes: r.bytes,
            min_rate: [None; 3],
            max_latency: None,
        }
    }
}

/// t/io_uring's `struct submitter` as its loop uses it.
#[derive(Clone, Debug, Default)]
pub(crate) struct TioState {
    /// `to_wait` of the current `io_uring_enter`.
    pub to_wait: u32,
    /// Per file: `pending_ios` (prepared and not yet reaped).
    pub pending: Vec<u32>,
    /// `cur_file`, and `per_file_depth` = ceil(depth / files).
    pub cur_file: usize,
    pub per_file_depth: u32,
}

/// A step's work in up to three segments, each with its account (e.g. a
/// syscall head, fio's user-space body, a submitting syscall tail).
pub(crate) type Segments = [(Acct, u64); 3];

/// The task that runs a job's program (fio's thread, t/io_uring's
/// submitter, an SQ thread) as the kernel runs it: the step it executes
/// (its segments of user and system time, its work by stage, the debt of
/// follow-on work), its CPU, what it sleeps or spins for. What every step
/// touches, first.
#[repr(C)]
#[derive(Clone)]
pub(crate) struct Task {
    pub state: JobState,
    /// Work left in the current step (the sum of `segs`), ns at full speed.
    pub remaining_ns: u64,
    pub segs: Segments,
    pub items: u32,
    pub chain: Chain,
    /// Cost of effects applied at the end of a step, charged in the next one.
    pub debt_ns: u64,
    /// The current step is an open-ended spin (`PollSpin`): a poke or `need_resched` ends it.
    pub spin: bool,
    /// The current step's work by stage, and the stage of what it does not name.
    pub bill: Bill,
    pub stage_default: CpuStage,
    /// System time charged to the current step so far, and where.
    pub bill_sys_wall: u64,
    pub bill_cpu: CpuId,
    /// The bill's system work (its stages but the user loop's).
    pub bill_sys_total: u64,
    /// While spinning: the queues it is a poller of.
    pub spin_queues: Vec<(DevId, HctxId)>,
    pub usr_ns: u64,
    pub sys_ns: u64,
    /// The CPU the job's task runs on.
    pub cpu: CpuId,
    /// While sleeping: how many completions wake us.
    pub wait_for: u32,
    /// The task sleeps until its requests waiting for tags get them.
    pub tag_blocked: bool,
    pub ctx: u64,
    /// Its requests waiting for a tag (a blocking submitter, io_submit or
    /// pread, sleeps for them: `tag_blocked`).
    pub tag_waits: u32,
}

impl Task {
    /// Take `work` ns of done work off the step's segments in order; returns
    /// how much of it was (user, sys).
    pub(crate) fn consume(&mut self, work: u64) -> (u64, u64) {
        let (mut user, mut sys, mut left) = (0, 0, work);
        for seg in self.segs.iter_mut() {
            let take = left.min(seg.1);
            seg.1 -= take;
            left -= take;
            match seg.0 {
                Acct::User => user += take,
                _ => sys += take,
            }
        }
        self.remaining_ns = self.remaining_ns.saturating_sub(work);
        (user, sys)
    }

    /// Add sys work of `stage` in front of the current step (e.g. a context switch).
    pub(crate) fn add_head_sys(&mut self, ns: u64, stage: CpuStage) {
        self.bill.add(stage, ns);
        self.bill_sys_total += ns;
        if self.segs[0].0 != Acct::User || self.segs[0].1 == 0 {
            self.segs[0].1 += ns;
            if self.segs[0].1 == ns {
                self.segs[0].0 = Acct::Sys;
            }
        } else if self.segs[2].1 == 0 {
            self.segs[2] = self.segs[1];
            self.segs[1] = self.segs[0];
            self.segs[0] = (Acct::Sys, ns);
        } else {
            self.segs[0].1 += ns;
        }
        self.remaining_ns += ns;
    }
}

/// Fields in declaration order (repr(C)): what every step of the job
/// touches comes first; configuration and statistics after.
#[repr(C)]
#[derive(Clone)]
pub(crate) struct Job {
    /// The task that runs its program, as the CPU and the scheduler see it.
    pub task: Task,
    /// Committed and not yet reaped by fio.
    pub inflight: u32,
    /// Reaped, handed to `verify_async`'s threads and not yet checked: io_us not free.
    pub verify_held: u32,
    /// fio's wait_for_completions found the queue full (no io_u free of
    /// `iodepth`): it reaps until no more than `iodepth_low` are left.
    pub reap_to_low: bool,
    /// Committed I/Os that failed and are not reaped yet (fio stops at the first it reaps).
    pub failed: u32,
    /// A trim in the queue hook of an engine that trims with a blocking BLKDISCARD (`Job::sync_trims`).
    pub sync_trim: Option<SyncTrim>,
    /// fio's io_uring `async_trim_fail`: a trim through the ring came back with an error, so
    /// the engine trims from its queue hook from now on.
    pub async_trim_failed: bool,
    /// No more I/O will be issued (or, for a paced job, none until its pause: `pace`).
    pub done_issuing: bool,
    /// The job's io_us are prepared by `job_prep_shaped` (pacing, or sizes drawn: `bssplit`, `bsrange`).
    pub shaped: bool,
    /// What its ioengine is, asked on every I/O's path: read once from the job's `cfg`.
    engine_is: EngineIs,
    pub index: JobId,
    /// What accounting a reaped batch touches, on adjacent lines.
    pub ts: ThreadStat,
    /// Prepared io_us not yet committed.
    pub queued: Vec<ReqId>,
    /// Completions fio is accounting in the current Account step.
    pub reaping: Vec<ReqId>,
    /// Bytes issued so far and the limit (size x loops; u64::MAX if time based).
    pub bytes_issued: u64,
    pub bytes_limit: u64,
    /// fio's do_io ends a pass (a loop, or an `io_size` pass) of an
    /// asynchronous engine when the io_us it queued in the pass reach
    /// `pass_total` bytes (its `bytes_issued` and `total_bytes`), without
    /// drawing another offset; `u64::MAX` where fio's count stays 0 (a sync
    /// engine's io_us complete in its queue hook, offload's go to the
    /// workers) and the pass ends at a failing draw or the job's limit.
    pub pass_bytes: u64,
    pub pass_total: u64,
    /// I/Os issued in the pass, a queue hook's trims too: do_io's end stops
    /// a job whose pass did none (fio's `this_io_bytes`, "stop job if we
    /// failed doing any IO").
    pub pass_ios: u64,
    /// A trimwrite job's trims: not in `bytes_issued` (fio's io_bytes_exceeded counts a
    /// writer's writes), in keep_running's bytes.
    pub trimmed_bytes: u64,
    pub ios_issued: u64,
    /// Data io_us issued per direction (fio's `io_issues`; a verify read-back is not one).
    pub io_issues: [u64; 3],
    /// A mixed job's direction run (fio's `rwmix_ddir`, `rwmix_issues`).
    pub rwmix: Rwmix,
    pub end_ns: u64,
    pub next_dev: usize,
    /// (region, bytes, region / bytes) of the last offset drawn.
    pub blocks_memo: (u64, u64, u64),
    /// Devices it does I/O to, round-robin.
    pub devs: Vec<DevId>,
    /// The sync engine's file positions (fio's `engine_pos`), per file: where its last read or
    /// write ended, 0 when fio opens it; an io_u elsewhere is an lseek first (`fs/rw.rs`).
    pub sync_pos: Vec<u64>,
    /// A job of several files: which are done this pass, round robin over the others.
    pub files: Option<Box<crate::fio::file_set::FileSet>>,
    /// fio's generators: offsets, block sizes, the read/write mix.
    pub rand: RandStates,
    pub cfg: JobConfig,
    /// t/io_uring's submitter state.
    pub tio: TioState,
    /// What its ioengine holds (fio's `td->io_ops_data`).
    pub engine: Engine,
    /// The program would wait forever here (t/io_uring's `io_uring_enter`
    /// waiting for more CQEs than it has I/Os in flight): what it waits
    /// for, and the run ends it at its runtime.
    pub stuck: Option<String>,
    /// The first I/O error the job saw, which ended it.
    pub error: Option<IoError>,
    /// Where the task is in the I/O scheduler's work.
    pub sched: SchedCtx,
    pub start_ns: u64,
    pub finish_ns: u64,
    /// Told to end by another job's end (`exitall`: fio's `td->terminate`); one whose task had
    /// not run yet ends as it starts.
    pub terminate: bool,
    /// Where the last I/O of each direction ended, per file (`file * 3 + direction`):
    /// absolute, from the job's `offset` (fio's `f->last_pos[ddir]`; see `offset.rs`).
    pub last_pos: Vec<u64>,
    /// I/Os left until a random job draws its next random offset (fio's `td->ddir_seq_nr`).
    pub seq_left: u32,
    /// The direction whose block sizes the last offset drawn takes (get_next_buflen's
    /// `ddir`): its own, or with `bs_is_seq_rand` a write's after a random draw and a
    /// read's after a sequential one.
    pub size_dir: usize,
    /// The io_u being filled carries IO_U_F_BUSY_OK from a sequential draw
    /// whose fill failed (fio clears it only when the io_u completes):
    /// filled again on the next file, or taken off the free list again
    /// (`busy_ok_free`); its random draw marks no block. Cleared once the
    /// io_u is placed or put back.
    pub busy_ok_carried: bool,
    /// fio's io_u free list (a stack) as far as IO_U_F_BUSY_OK goes: each io_u
    /// put back with the flag by a failed get_io_u, bottom first, with the
    /// number of io_us freed on top of it since (completions clear theirs).
    /// Empty in a run without such a failure.
    pub busy_ok_free: Vec<u32>,
    /// With `busy_ok_free` not empty: get_io_u has taken the io_u being filled off the free list.
    pub io_u_taken: bool,
    /// io_us a chain put on the free list as it reaped them, before its fills (fio's
    /// wait_for_completions before its next get_io_u), not to be put again when accounted.
    pub io_us_freed_early: u32,
    /// The last offset drawn was not drawn at random (fio sets IO_U_F_BUSY_OK).
    pub drew_seq: bool,
    /// Loops of the job left, this one included (`loops`).
    pub loops_left: u32,
    /// Between loops: drained and synced first (`LoopEnd`).
    pub loop_end: LoopEnd,
    /// The pass ended at a draw that found no offset (fio's get_io_u marks the
    /// file done): keep_running's bytes left no longer keep it going without
    /// `io_size` (`fio_files_done`).
    pub drew_out: bool,
    /// io_us getevents committed short of a batch (fio's stale `io_u_queued`).
    pub stale_queued: u32,
    /// What the commit under way marks in IO depths (`Job::committed`); none
    /// for a commit that marks its own io_us (end_fsync's).
    pub commit_marks: Option<u32>,
    /// A new loop began since the last io_u was queued (fio closes and reopens its files).
    pub reopened: bool,
    /// `random_distribution`'s state, for one other than `random`.
    pub dist: Option<Box<crate::fio::distribution::Distribution>>,
    /// fio's random map per file, for a random job without `norandommap`.
    pub random_maps: Option<Box<RandomMaps>>,
    /// `zonemode=strided`: the zone the job is in.
    pub strided: Option<Box<StridedZone>>,
    // Statistics.
    pub dirs: [DirStats; 3],
    /// A job that fsyncs: what decides its next one, and its statistics.
    pub fsync: Option<Box<Fsyncs>>,
    /// A job with `cmdprio_percentage` or `cmdprio_bssplit`: which io_us get their own priority.
    pub cmdprio: Option<Box<crate::fio::cmdprio::CmdPrios>>,
    /// Rate and think time (fio's pacing), for a job that has any.
    pub pace: Option<Box<Pace>>,
    /// `rate_min` / `rate_iops_min`: fio's `check_min_rate` after each reap.
    pub min_rate: Option<Box<crate::fio::min_rate::MinRate>>,
    /// `latency_target`'s search for a depth (`lat_target_loop.rs`).
    pub lat_target: Option<Box<crate::fio::lat_target::LatTarget>>,
    /// `JobConfig::lat_watch_ns`: an I/O's `lat` over it is looked at (`lat_over`).
    pub lat_watch_ns: [u64; 3],
    /// Its part in a flow group (`flow`), once it started.
    pub flow: Option<crate::fio::flow::FlowMember>,
    /// `verify`'s log of written blocks and its read-back state.
    pub verify: Option<Box<crate::fio::verify_log::VerifyLog>>,
    /// `rw=trimwrite` / `randtrimwrite`'s pairing of each trim with its write.
    pub trimwrite: Option<Box<crate::fio::io_u::TrimWrite>>,
    /// `rw_sequencer=identical`: per file and direction the start of the
    /// last I/O (fio's `f->last_start`, `u64::MAX` for none yet).
    pub last_start: Option<Vec<u64>>,
    /// Where a replaying job (`read_iolog`) is in its log.
    pub replay: Option<Box<crate::fio::replay::ReplayCursor>>,
    /// A job of several `loops` (or `io_size` passes) with `randrepeat`: its generators as
    /// seeded, for each loop to start from (fio's `td_fill_rand_seeds` in clear_io_state).
    pub loop_seeds: Option<Box<RandStates>>,
    /// `io_submit_mode=offload`: the job's workqueue, or the worker's part in one.
    pub offload: Option<Box<crate::fio::workqueue::Offload>>,
    /// `verify_async`'s threads (on the job), or a verify thread's part.
    pub vasync: Option<Box<crate::fio::verify_list::VerifyAsync>>,
}

/// What a job's ioengine holds apart from fio's thread (`td->io_ops_data`:
/// libaio's context and its event ring, io_uring's rings, a sync engine's
/// last result).
#[derive(Clone, Debug, Default)]
pub(crate) struct Engine {
    /// Completions visible to fio's reap (aio ring events, posted CQEs, sync results).
    pub ready: VecDeque<ReqId>,
    /// Its io_uring instance (io_uring engines and t/io_uring; an SQ thread's is its ring's).
    pub ring: Ring,
    /// The queue depth in effect: `iodepth`, but 1 for a synchronous engine
    /// (its queue hook completes each I/O before returning: fio's FIO_SYNCIO
    /// "queue depth will be capped at 1"), and one submit batch for the null
    /// engine (null_queue answers FIO_Q_BUSY while a commit's events are not
    /// reaped, so fio reaps them before queueing more), and 1 under
    /// io_in_polling (do_io queues an io_u, then `wait_for_completions`
    /// takes one event: its getevents commits what is queued first and
    /// waits for it, so one io_u is in flight at a time).
    pub depth: u32,
    /// `posixaio`: glibc's AIO state (on fio's job and on its helper thread).
    pub aio: Option<Box<crate::fio::aio::Aio>>,
    /// With `write_iolog`, the null engine past iodepth 1 (`refuses`): the
    /// io_u fio drew before this reap got FIO_Q_BUSY (logged once then) and
    /// is queued again after it (`requeue_io_u`, logged again).
    pub busy: bool,
    /// The null engine past iodepth 1, completions not polled: null_queue
    /// answers FIO_Q_BUSY while a commit's events wait, so fio reaps them
    /// before it queues another io_u (a full queue reaps them too).
    pub refuses: bool,
}

impl ThreadStat {
    /// The ramp is over and the statistics were reset (or there was none):
    /// the epoch moved to the ramp's end or later.
    pub(crate) fn ramp_done(&self) -> bool {
        self.epoch_ns >= self.ramp_end_ns
    }
}

/// A job's ioengine as its I/O path asks about it (a job's `cfg.ioengine`
/// does not change once the job is made).
#[derive(Clone, Copy, Debug)]
struct EngineIs {
    /// io_uring or io_uring_cmd.
    uring: bool,
    /// io_uring_cmd: NVMe passthrough.
    passthru: bool,
    /// A ring with IORING_SETUP_IOPOLL.
    iopoll: bool,
}

impl EngineIs {
    fn of(e: &IoEngine) -> EngineIs {
        let (uring, passthru) =
            (matches!(e, IoEngine::IoUring(_) | IoEngine::IoUringCmd(_)), matches!(e, IoEngine::IoUringCmd(_)));
        let iopoll = matches!(e, IoEngine::IoUring(o) | IoEngine::IoUringCmd(o) if o.hipri);
        EngineIs { uring, passthru, iopoll }
    }
}

impl Job {
    /// With `write_iolog`, the null engine past iodepth 1 (`Engine::refuses`):
    /// a reap within a pass, io_us free, follows fio's FIO_Q_BUSY. null_queue
    /// refused the io_u fio drew while the last commit's events waited; fio
    /// logged it, reaped, and queues it again (logged again) on the same io_u,
    /// taken before the reap's `put_io_u`s (a full queue is reaped without a
    /// refusal: queue_full). Whether it did; `busy_cancel` after the io_us
    /// are prepared.
    #[inline(always)]
    pub(crate) fn busy_begin(&mut self) -> bool {
        if !self.cfg.log_queued || !self.fills_before_reap() {
            return false;
        }
        self.engine.busy = true;
        if let Some(io_us) = self.fsync.as_deref_mut().and_then(|f| f.io_us.as_mut()) {
            io_us.reserve();
        }
        true
    }

    /// fio fills its next io_u before it reaps: the null engine at a depth
    /// above 1 refuses it with FIO_Q_BUSY while completions wait, and
    /// do_io reaps, then queues it again.
    pub(crate) fn fills_before_reap(&self) -> bool {
        self.engine.refuses && self.inflight < self.cfg.iodepth && !self.done_issuing
    }

    /// After `busy_begin`'s reap, or at a pass's end before it: no io_u is
    /// left refused with FIO_Q_BUSY (none came, or it was logged).
    pub(crate) fn busy_cancel(&mut self) {
        self.engine.busy = false;
        if let Some(io_us) = self.fsync.as_deref_mut().and_then(|f| f.io_us.as_mut()) {
            io_us.unreserve();
        }
    }

    /// How many completions to wait for and take at `now` (fio's wait_for_completions).
    pub(crate) fn reap_bounds(&self, now: u64) -> (u32, u32) {
        let depth = self.cur_depth().max(1);
        // A replay's delay reaps what is there (io_u_queued_complete(td, 0)).
        let min = if self.shaped && self.replay_waiting(now) { 1 } else { self.cfg.iodepth_batch_complete_min };
        let min = min.min(depth).max(1);
        let max = self.cfg.iodepth_batch_complete_max.max(min).min(depth);
        (min, max)
    }

    /// fio stops issuing at the end of its runtime, size or number_ios.
    /// Where `number_ios` counted a sync in flight, do_io's loop ends short
    /// of it: the pass ends, and thread_main's keep_running may start another
    /// (`next_pass`), whose loop top counts again; unless the pass issued no
    /// data (thread_main ends a job whose do_io did none). A trimwrite job's
    /// next loop has a larger `number_ios` (`rewind`): it goes on.
    pub(crate) fn check_done_issuing(&mut self, now: u64) {
        if !self.done_issuing && (now >= self.end_ns || self.limit_reached()) {
            let short = now < self.end_ns
                && !self.cfg.time_based
                && self.pass_bytes > 0
                && self.bytes_issued < self.bytes_limit
                && (self.ios_issued < self.cfg.number_ios || self.trimwrite.is_some() && self.loops_left > 1);
            self.done_issuing = !(short && self.next_pass());
        }
    }

    /// do_io's loop top, before each io_u: its bytes (`io_bytes_exceeded`)
    /// or its `number_ios` (`exceeds_number_ios`: the data io_us done, and
    /// every io_u queued or in flight, a sync too) are done.
    #[inline(always)]
    pub(crate) fn limit_reached(&self) -> bool {
        self.bytes_issued >= self.bytes_limit
            || (self.cfg.number_ios > 0 && self.ios_issued + self.syncs_in_flight() >= self.cfg.number_ios)
    }

    /// Syncs queued or in flight as fio counts them (`io_u_queued`,
    /// `io_u_in_flight`) at do_io's loop top: none where the engine
    /// completes them as it queues them (FIO_Q_COMPLETED). A full queue
    /// (no io_u free of fio's `iodepth`) and io_in_polling are reaped before
    /// the loop top: the chain step that reaps counts then.
    fn syncs_in_flight(&self) -> u64 {
        let Some(f) = self.fsync.as_deref() else { return 0 };
        let reaps_first =
            f.reaped.is_none() && (self.cur_depth() + self.verify_held >= self.cfg.iodepth || self.cfg.io_in_polling());
        if reaps_first || self.cfg.ioengine.is_sync() || self.null_sync() {
            return 0;
        }
        f.outstanding - f.reaped.unwrap_or(0)
    }

    /// fio's keep_running past its loops, without `io_size`: `number_ios`
    /// not reached (a sync in flight ended do_io's loop short of it) and
    /// `size` short by its largest block or more (its files not done: the
    /// pass ended at its loop top, not at a failing draw).
    pub(crate) fn number_ios_left(&self) -> bool {
        self.cfg.number_ios > 0
            && self.ios_issued < self.cfg.number_ios
            && self.cfg.io_size.is_none()
            && !self.drew_out
            && self.size_left(self.bytes_limit)
    }

    /// keep_running's test of `size` (the job's `limit` of bytes over its
    /// loops): short of it by the largest block or more, read-backs counted.
    pub(crate) fn size_left(&self, limit: u64) -> bool {
        let size = limit / self.cfg.loops.max(1) as u64;
        size.saturating_sub(self.io_bytes()) >= self.max_bs()
    }

    /// keep_running's bytes done (fio's `io_bytes`): its I/Os and verify's read-backs.
    pub(crate) fn io_bytes(&self) -> u64 {
        self.bytes_issued + self.trimmed_bytes + self.verify.as_deref().map_or(0, |v| v.read_back_bytes)
    }

    /// fio's `td_max_bs`: the job's largest block over its directions, a
    /// `bsrange`'s or a `bssplit`'s largest (at least 1).
    pub(crate) fn max_bs(&self) -> u64 {
        (0..3).map(|d| self.cfg.bs_range(d).1).max().unwrap_or(1).max(1)
    }

    /// fio's `ramp_period_over` at `at`: `reset_all_stats` (the rusage,
    /// usr, sys and ctx, and the epoch) and, with `io_stats`,
    /// `reset_io_stats` (the depth and batch counts). An offload job's
    /// parent takes the first (`parent_update_ramp`).
    pub(crate) fn ramp_over(&mut self, at: u64, io_stats: bool) {
        self.ts.epoch_ns = at;
        (self.task.usr_ns, self.task.sys_ns, self.task.ctx) = (0, 0, 0);
        if let Some(m) = self.min_rate.as_deref_mut().filter(|_| io_stats) {
            m.reset(at);
        }
        if let Some(t) = self.lat_target.as_deref_mut().filter(|_| io_stats) {
            // lat_target_reset: the search starts again, unless this is its final run.
            t.stats_reset(at);
            self.lat_depth();
        }
        if io_stats {
            self.ts.iodepth_level = [0; 7];
            self.ts.iodepth_submit = [0; 7];
            self.ts.iodepth_complete = [0; 7];
        }
    }

    /// Data io_us accounted, or about to be (`reaping` of those in flight):
    /// those issued less those queued or in flight. An fsync job's syncs
    /// are among the latter only; one among `reaping` counts as data.
    pub(crate) fn ios_completed(&self, reaping: u32) -> u64 {
        let syncs = self.fsync.as_deref().map_or(0, |f| f.outstanding);
        (self.ios_issued + syncs).saturating_sub(self.queued.len() as u64 + (self.inflight - reaping) as u64)
    }

    /// fio's wait_for_completions with `busy` io_us not free: a full queue
    /// (none free of `iodepth`) is reaped until `iodepth_low` or fewer are
    /// left (`full && cur_depth > iodepth_low`). Whether the wait is on (no
    /// io_u is queued before it ends).
    #[inline(always)]
    pub(crate) fn reaps_to_low(&mut self, busy: u32) -> bool {
        if self.cfg.iodepth_low >= self.cfg.iodepth {
            // (fio's default: a reap of one leaves the queue at its low mark.)
            return false;
        }
        self.reap_to_low = busy >= self.cfg.iodepth || self.reap_to_low && busy > self.cfg.iodepth_low;
        self.reap_to_low
    }

    /// I/Os fio prepares before one submitting call: `iodepth_batch_submit`, at most the depth.
    #[inline(always)]
    pub(crate) fn batch_submit(&self) -> u32 {
        self.cfg.iodepth_batch_submit.min(self.engine.depth).saturating_sub(self.stale_queued).max(1)
    }

    /// fio commits `queued` io_us. td_io_commit (fio's `io_u_queued`, the
    /// stale count and these, reached `iodepth_batch`) marks them all in IO
    /// depths and counts from zero again; otherwise getevents commits them
    /// (a full queue's wait, do_io's drain, io_in_polling's wait): unmarked,
    /// left in `io_u_queued` for the next td_io_commit (which comes sooner).
    #[inline(always)]
    pub(crate) fn committed(&mut self, queued: u32) {
        let batch = self.cfg.iodepth_batch_submit.min(self.cfg.iodepth).max(1);
        if self.stale_queued + queued >= batch {
            self.commit_marks = Some(self.stale_queued + queued);
            self.stale_queued = 0;
        } else {
            self.commit_marks = Some(0);
            self.stale_queued += queued;
        }
    }

    /// A commit reached the engine at `depth` io_us not free, `n` of them
    /// its own: IO depths counts what td_io_commit marks (`Job::committed`),
    /// else (end_fsync's) those `n`.
    pub(crate) fn mark_depth(&mut self, depth: u32, n: u32) {
        self.ts.iodepth_level[depth_bucket(depth)] += self.commit_marks.take().unwrap_or(n) as u64;
    }

    pub(crate) fn new(index: JobId, cfg: JobConfig, cpu: CpuId, devs: Vec<DevId>, rng: Rng) -> Job {
        // Its files: the devices, or the null engine's (several when `size` is shared among them).
        let n = devs.len().max(cfg.file_regions.len());
        let (start, loops) = (cfg.offset, cfg.loops.max(1));
        // fio's setup_random_seeds for job `index` (thread_number index + 1), from randseed,
        // or where fio takes the system's random numbers from the run's seed.
        let thread_number = index.idx() as u64 + 1;
        let rand_seed = cfg.fio_seed.unwrap_or_else(|| rng.clone().next_u64());
        let trimwrite = matches!(cfg.rw, RwKind::TrimWrite | RwKind::RandTrimWrite);
        let use64 = cfg.random_generator == RandomGenerator::Tausworthe64;
        let mut rand = RandStates::new(rand_seed, thread_number, use64, cfg.verify.is_some(), trimwrite);
        if let (FileService::Skewed(dist), true) = (&cfg.file_service, n > 1) {
            // init_rand_file_service: nr_files << FIO_FSERVICE_SHIFT ranges, the seed as an unsigned int.
            let ranges = (n as u64) << FIO_FSERVICE_SHIFT;
            let dist = FileDist::file_service(dist, ranges, rand.file_seed() as u32);
            rand.file_skew = Some(Box::new(dist));
        }
        let random_maps = (cfg.rw.is_random() && (cfg.random_generator.is_lfsr() || !cfg.norandommap)).then(|| {
            let rw_min_bs = cfg.bs.iter().copied().filter(|&b| b > 0).min().unwrap_or(4096);
            let lfsr_seed = cfg
                .random_generator
                .is_lfsr()
                .then(|| fio_rand_seed(rand_seed, thread_number, crate::fio::rand::FIO_RAND_BLOCK_OFF));
            Box::new(RandomMaps::new(n, rw_min_bs, lfsr_seed))
        });
        // (Several files: each one's zone; a job of one file keeps its zone in `offset` alone.)
        let nfiles = if n > 1 { n } else { 0 };
        let strided =
            cfg.strided.map(|cfg| Box::new(StridedZone { cfg, start, bytes: 0, offsets: vec![start; nfiles] }));
        Job {
            task: Task {
                cpu,
                state: JobState::NotStarted,
                remaining_ns: 0,
                segs: [(Acct::User, 0), (Acct::User, 0), (Acct::Sys, 0)],
                items: 0,
                chain: Chain::default(),
                debt_ns: 0,
                spin: false,
                bill: Bill::default(),
                stage_default: CpuStage::Other,
                bill_sys_wall: 0,
                bill_cpu: cpu,
                bill_sys_total: 0,
                spin_queues: Vec::new(),
                tag_waits: 0,
                tag_blocked: false,
                wait_for: 0,
                usr_ns: 0,
                sys_ns: 0,
                ctx: 0,
            },
            shaped: false,
            engine_is: EngineIs::of(&cfg.ioengine),
            pace: None,
            min_rate: None,
            lat_target: None,
            lat_watch_ns: [u64::MAX; 3],
            flow: None,
            verify: None,
            trimwrite: trimwrite
                .then(|| Box::new(crate::fio::io_u::TrimWrite { last_start: vec![u64::MAX; n.max(1) * 3] })),
            last_start: (cfg.rw_identical && cfg.rw.is_random()).then(|| vec![u64::MAX; n.max(1) * 3]),
            replay: cfg.replay.clone().map(|log| {
                let sync_null = cfg.ioengine == crate::workload::IoEngine::Null && cfg.iodepth <= 1;
                Box::new(crate::fio::replay::ReplayCursor {
                    log,
                    pos: 0,
                    last_issue_ns: None,
                    at_queue: cfg.ioengine.is_sync() || sync_null,
                    sets_issue: cfg.ioengine != crate::workload::IoEngine::Null || sync_null,
                    ran_out_ns: None,
                    reaped_first: 0,
                    got_before_out: 0,
                })
            }),
            loop_seeds: None,
            offload: None,
            vasync: None,
            engine: Engine {
                ready: VecDeque::new(),
                ring: Ring::default(),
                depth: match cfg.ioengine {
                    _ if cfg.ioengine.is_sync() || cfg.io_in_polling() => 1,
                    crate::workload::IoEngine::Null => cfg.iodepth_batch_submit.clamp(1, cfg.iodepth.max(1)),
                    _ => cfg.iodepth,
                },
                aio: None,
                busy: false,
                // (do_io's io_in_polling reaps after each io_u, before it draws another.)
                refuses: cfg.ioengine == crate::workload::IoEngine::Null && cfg.iodepth > 1 && !cfg.io_in_polling(),
            },
            index,
            cfg,
            sync_pos: vec![0; n],
            devs,
            next_dev: 0,
            files: None,
            blocks_memo: (0, 0, 0),
            rand,
            queued: Vec::new(),
            inflight: 0,
            failed: 0,
            sync_trim: None,
            async_trim_failed: false,
            verify_held: 0,
            reap_to_low: false,
            tio: TioState::default(),
            stuck: None,
            error: None,
            reaping: Vec::new(),
            sched: SchedCtx::default(),
            ts: ThreadStat { next_sample_ns: u64::MAX, ..Default::default() },
            done_issuing: false,
            start_ns: 0,
            end_ns: u64::MAX,
            finish_ns: 0,
            terminate: false,
            bytes_issued: 0,
            bytes_limit: u64::MAX,
            pass_bytes: 0,
            pass_ios: 0,
            pass_total: u64::MAX,
            trimmed_bytes: 0,
            ios_issued: 0,
            io_issues: [0; 3],
            rwmix: Rwmix::default(),
            last_pos: vec![start; n.max(1) * 3],
            seq_left: 1,
            size_dir: 0,
            busy_ok_carried: false,
            busy_ok_free: Vec::new(),
            io_u_taken: false,
            io_us_freed_early: 0,
            drew_seq: false,
            loops_left: loops,
            loop_end: LoopEnd::Running,
            drew_out: false,
            stale_queued: 0,
            commit_marks: None,
            reopened: false,
            dist: None,
            random_maps,
            strided,
            dirs: Default::default(),
            fsync: None,
            cmdprio: None,
        }
    }

    /// `region / bytes`, remembered for the last pair (a division per I/O otherwise).
    pub(crate) fn blocks_of(&mut self, region: u64, bytes: u64) -> u64 {
        let (r, b, n) = self.blocks_memo;
        if r == region && b == bytes {
            return n;
        }
        let n = region / bytes;
        self.blocks_memo = (region, bytes, n);
        n
    }

    /// A job of fio's that has not ended (not an engine's thread).
    pub(crate) fn running_fio_job(&self) -> bool {
        self.task.state != JobState::Done && !self.is_engine_thread()
    }

    /// A thread the model adds for a job's engine (an SQ thread, glibc's AIO
    /// helper), not a fio job: its time is in the CPUs', not in a job's.
    pub(crate) fn is_engine_thread(&self) -> bool {
        self.engine.ring.sq_ring.is_some()
            || matches!(self.cfg.program, crate::workload::Program::AioHelper | crate::workload::Program::VerifyThread)
            || self.offload_worker().is_some()
    }

    /// A submit worker of `io_submit_mode=offload`: fio's job it works for.
    pub(crate) fn offload_worker(&self) -> Option<JobId> {
        match self.offload.as_deref() {
            Some(crate::fio::workqueue::Offload::Worker(w)) => Some(w.parent),
            _ => None,
        }
    }

    /// Asleep, it sleeps in a futex (fio's thread in posixaio's
    /// `aio_suspend`, glibc's AIO helper waiting for work, offload's
    /// condition waits), not for I/O.
    pub(crate) fn futex_sleeper(&self) -> bool {
        self.engine.aio.as_ref().is_some_and(|a| a.idle || self.cfg.program != crate::workload::Program::AioHelper)
            || self.offload.as_ref().is_some_and(|o| o.waiting())
            || self.vasync.as_ref().is_some_and(|v| v.waiting())
    }

    /// The null engine at iodepth 1: `null_init` flags it FIO_SYNCIO, so
    /// each io_u completes in its queue hook (no slat) and fio's commit
    /// and reap never run (no submit or complete batches).
    pub(crate) fn null_sync(&self) -> bool {
        self.cfg.iodepth <= 1 && self.cfg.ioengine == IoEngine::Null
    }

    pub(crate) fn cur_depth(&self) -> u32 {
        self.queued.len() as u32 + self.inflight
    }

    pub(crate) fn is_uring(&self) -> bool {
        self.engine_is.uring
    }

    /// The queue hook trims with BLKDISCARD: libaio's and posixaio's always,
    /// io_uring's once a trim through the ring failed.
    pub(crate) fn sync_trims(&self) -> bool {
        self.cfg.ioengine.sync_trims() || self.async_trim_failed
    }

    /// The task is in a BLKDISCARD from its engine's queue hook.
    pub(crate) fn in_sync_trim(&self) -> bool {
        matches!(self.sync_trim, Some(SyncTrim::Issued(_)))
    }

    /// `reqs` is the BLKDISCARD of the queue hook (an SQ thread may submit the
    /// job's other requests meanwhile).
    pub(crate) fn is_hook_trim(&self, reqs: &[ReqId]) -> bool {
        matches!(self.sync_trim, Some(SyncTrim::Issued(r)) if reqs == [r])
    }

    /// Do `reqs`, once issued, join the ring's iopoll list (`io_iopoll_req_issued`)?
    /// On an IOPOLL ring, all but the queue hook's BLKDISCARD (an ioctl, not the ring's).
    pub(crate) fn on_iopoll_list(&self, reqs: &[ReqId]) -> bool {
        self.iopoll() && !self.is_hook_trim(reqs)
    }

    /// NVMe passthrough: `io_uring_cmd` on the generic char device.
    pub(crate) fn passthru(&self) -> bool {
        self.engine_is.passthru
    }

    /// An io_uring ring set up with IORING_SETUP_IOPOLL (fio's `hipri`,
    /// t/io_uring's `-p1`). (`pvsync2`'s RWF_HIPRI is not polled: since
    /// 5.16 `__blkdev_direct_IO_simple` submits a plain bio and sleeps in
    /// `submit_bio_wait`.)
    pub(crate) fn iopoll(&self) -> bool {
        self.engine_is.iopoll
    }

    /// t/io_uring's `get_next_file`: the submitter's current file until it
    /// has `per_file_depth` I/Os pending, then the next one.
    pub(crate) fn tio_next_file(&mut self) -> usize {
        let n = self.devs.len();
        let t = &mut self.tio;
        if n > 1 && t.pending[t.cur_file] >= t.per_file_depth {
            t.cur_file = if t.cur_file + 1 == n { 0 } else { t.cur_file + 1 };
        }
        let f = if n > 1 { t.cur_file } else { 0 };
        t.pending[f] += 1;
        f
    }

    /// The direction of the next I/O (rwmixread for mixed workloads).
    pub(crate) fn next_dir(&mut self) -> Direction {
        use crate::workload::RwKind::*;
        match self.cfg.rw {
            Read | RandRead => Direction::Read,
            Write | RandWrite => Direction::Write,
            Trim | RandTrim => Direction::Trim,
            ReadWrite | RandRw => {
                let m = &mut self.rwmix;
                if self.io_issues[m.ddir as usize] >= m.issues {
                    // get_rand_ddir, then set_rwmix_bytes on a switch: the other direction's
                    // share of the issues of the one left.
                    let read = self.rand.rwmix.between(1, 100) <= self.cfg.rwmixread as u64;
                    let ddir = u8::from(!read);
                    if ddir != m.ddir {
                        let share = if read { self.cfg.rwmixread } else { 100 - self.cfg.rwmixread };
                        m.issues = self.io_issues[m.ddir as usize] * share as u64 / 100;
                    }
                    m.ddir = ddir;
                }
                if m.ddir == 0 {
                    Direction::Read
                } else {
                    Direction::Write
                }
            }
            TrimWrite | RandTrimWrite => self.trimwrite_dir(),
        }
    }
}

/// fio's io_u_map index for a depth (1, 2, 4, 8, 16, 32, >=64).
pub(crate) fn depth_bucket(depth: u32) -> usize {
    match depth {
        0..=1 => 0,
        2..=3 => 1,
        4..=7 => 2,
        8..=15 => 3,
        16..=31 => 4,
        32..=63 => 5,
        _ => 6,
    }
}

/// fio's submit/complete map index for a batch size (0, 4, 8, 16, 32, 64, >=64).
pub(crate) fn batch_bucket(n: u32) -> usize {
    match n {
        0 => 0,
        1..=4 => 1,
        5..=8 => 2,
        9..=16 => 3,
        17..=32 => 4,
        33..=64 => 5,
        _ => 6,
    }
}
