//! fio: a replayed log's cursor (`td->io_log_list` and `td->last_issue`,
//! state): the next entry, when the engine sets the last issue, and until
//! when the next entry waits (`iolog_delay`). The replaying is `iolog.rs`.

use crate::workload::Replay;

/// Where a job is in its log.
#[derive(Clone)]
pub(crate) struct ReplayCursor {
    pub log: std::sync::Arc<Replay>,
    /// The next entry.
    pub pos: usize,
    /// fio's `td->last_issue`, ns (`None`: never set, so no delay waits on it:
    /// fio's time since a zero timestamp is longer than any delay).
    pub last_issue_ns: Option<u64>,
    /// The engine sets `last_issue` when it queues (sync engines), not when it commits.
    pub at_queue: bool,
    /// The engine sets `last_issue` at all (fio's null engine does not when it is asynchronous).
    pub sets_issue: bool,
    /// When the log ran out under get_io_u (fio's `td->done`, set by
    /// read_iolog_get): from then on td_io_getevents returns nothing, so what
    /// is in flight is never reaped (counted as issued, not as done), and
    /// do_io ends there.
    pub ran_out_ns: Option<u64>,
    /// Of the I/Os in flight when the log ran out, how many the reap just
    /// before that get_io_u took (fio accounted them; the others it never reaps).
    pub reaped_first: u32,
    /// The io_us the get_io_us of that step took before the log ran out.
    pub got_before_out: u32,
}

/// What a replaying job does before its next io_u.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReplayWait {
    /// Nothing to wait for: on with fio's loop.
    Go,
    /// Completions are there: reap them (without waiting for more).
    Reap,
    /// Spin `ns` (or until a completion pokes the task).
    Spin { ns: u64 },
}

impl ReplayCursor {
    /// Until when the next entry waits, if it waits (`iolog_delay`: its delay after the last issue).
    pub(crate) fn pending_until(&self, now: u64) -> Option<u64> {
        let e = self.log.entries.get(self.pos)?;
        let last = self.last_issue_ns.filter(|_| e.delay_us > 0)?;
        let until = last.saturating_add(e.delay_us.saturating_mul(1000));
        (until > now).then_some(until)
    }
}

impl crate::fio::job::Job {
    /// When the replayed log ran out under get_io_u (fio's `td->done`), if it did.
    pub(crate) fn replay_ran_out_ns(&self) -> Option<u64> {
        self.replay.as_deref().and_then(|c| c.ran_out_ns)
    }

    /// After a reap of `reap` and the get_io_us that follow it: if the log
    /// ran out in those, the reap's I/Os were fio's before it. (No get_io_u
    /// follows once it ran out: the job is done issuing, with no next loop.)
    /// (The null engine's reap for FIO_Q_BUSY, its queue not full, comes after
    /// a get_io_u: before the failing one only if another came first.)
    pub(crate) fn replay_reaped_before(&mut self, reap: u32) {
        let busy_reap = self.engine.refuses && self.inflight < self.cfg.iodepth;
        if let Some(cur) = self.replay.as_deref_mut().filter(|c| c.ran_out_ns.is_some()) {
            cur.reaped_first = if busy_reap && cur.got_before_out == 0 { 0 } else { reap };
        }
    }

    /// Commit what is queued? Not once the log ran out: fio's td_io_getevents
    /// returns at once, before its commit, so an io_u queued short of
    /// `iodepth_batch` is never submitted.
    pub(crate) fn replay_commits(&self) -> bool {
        self.replay_ran_out_ns().is_none()
    }

    /// A reap of `n` I/Os: are they fio's (reaped before the log ran out)
    /// rather than abandoned in flight (fio's `td->done`)?
    pub(crate) fn replay_accounts(&mut self, n: u32) -> bool {
        match self.replay.as_deref_mut() {
            Some(cur) if cur.ran_out_ns.is_some() => {
                let keep = cur.reaped_first >= n;
                cur.reaped_first = cur.reaped_first.saturating_sub(n);
                keep
            }
            _ => true,
        }
    }

    /// fio's loop before the next io_u of a replaying job: does its entry
    /// wait (with nothing queued to commit first)? Then fio reaps what is
    /// there, else spins until the delay is over or a completion comes.
    pub(crate) fn replay_wait(&self, now: u64) -> ReplayWait {
        let job = self;
        let Some(cur) = job.replay.as_deref() else { return ReplayWait::Go };
        if job.done_issuing || !job.queued.is_empty() {
            return ReplayWait::Go;
        }
        match cur.pending_until(now) {
            None => ReplayWait::Go,
            Some(_) if !job.engine.ready.is_empty() => ReplayWait::Reap,
            Some(until) => ReplayWait::Spin { ns: until - now },
        }
    }

    /// Is the job waiting out a replay delay (its reaps take what is there, never wait)?
    pub(crate) fn replay_waiting(&self, now: u64) -> bool {
        self.replay.as_deref().is_some_and(|c| c.pending_until(now).is_some())
    }
}
