//! fio: a replayed log's cursor (`td->io_log_list` and `td->last_issue`,
//! state): the next entry, when the engine sets the last issue, and until
//! when the next entry waits (`iolog_delay`). The replaying is `iolog.rs`.

use crate::workload::Replay;

/// Where a job is in its log.
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
