//! fio: the jobs the model takes, and why it refuses the others (what fio
//! itself would fail, and what is not modelled yet), each at the job's line.

use crate::error::Error;
use crate::workload::{IoEngine, JobConfig, RwKind};

/// Bad input in job `job` (exit 2, at its line).
pub(crate) fn bad_input(job: usize, message: String) -> Error {
    Error::bad_input(message).for_job(job)
}

/// What job `job` asks for that is not modelled (exit 2, at its line).
pub(crate) fn not_modelled(job: usize, message: impl Into<String>) -> Error {
    Error::not_modelled(message).for_job(job)
}

/// What makes a job trim, as its error says it.
fn trim_what(cfg: &JobConfig) -> String {
    match cfg.replay {
        Some(_) => "read_iolog: the log trims".to_string(),
        None => format!("rw={}", cfg.rw.fio_name()),
    }
}

/// What a job asks for that the model rejects on its own terms.
pub(crate) fn check_job(i: usize, cfg: &JobConfig) -> Result<(), Error> {
    // fio's trimwrite whose hole is minus its trim size trims where the last trim began, for ever:
    // its trims do not count towards the job's bytes (fio 3.42 on the null engine: millions of
    // trims of one block and never an end; -2k or -8k with 4 KiB trims end).
    let (trim_min, trim_max) = cfg.bs_range(2);
    if cfg.rw == RwKind::TrimWrite && trim_min == trim_max && cfg.ddir_seq_add == -(trim_min as i64) {
        return Err(bad_input(
            i,
            format!(
                "rw=trimwrite:-{trim_min}: a hole of minus the trim size puts each trim where the last began, \
                 and trims do not count towards the job's bytes: fio trims that block for ever and never ends"
            ),
        ));
    }
    let is_null = matches!(cfg.ioengine, IoEngine::Null);
    // NVMe passthrough (io_uring_cmd on /dev/ngXnY) never goes through a page cache; fio opens
    // the char device with O_DIRECT only when told to, and a character device refuses that.
    let passthru = matches!(cfg.ioengine, IoEngine::IoUringCmd(_));
    if passthru && cfg.direct {
        return Err(bad_input(
            i,
            "direct=1 with ioengine=io_uring_cmd: fio opens the NVMe generic char device with O_DIRECT, which a \
             character device refuses (open fails with EINVAL; fio: \"looks like your file system does not support \
             direct=1/buffered=0\"); passthrough commands bypass the page cache without it: leave direct unset"
                .into(),
        ));
    }
    if !is_null && !passthru && !cfg.direct {
        return Err(not_modelled(
            i,
            "buffered I/O (direct=0) goes through the page cache, which blksim does not model; set direct=1",
        ));
    }
    // fio's null engine completes trims like any I/O; on a device fio trims with a blocking
    // BLKDISCARD (do_io_u_trim), which the sync engines' path is, and libaio's and posixaio's
    // queue hook (FIO_ASYNCIO_SYNC_TRIM, `sync_trim.rs`), or io_uring's async
    // BLOCK_URING_CMD_DISCARD (from its queue hook once one failed, as on an IOPOLL ring),
    // or io_uring_cmd's Dataset Management passthrough command (with fixedbufs each fails,
    // EFAULT: `submit_errno`).
    let hook_trims = cfg.ioengine.sync_trims() || matches!(&cfg.ioengine, IoEngine::IoUring(o) if o.hipri);
    if cfg.trims() && cfg.offload && hook_trims {
        return Err(not_modelled(
            i,
            format!(
                "{} with io_submit_mode=offload and ioengine={}: a submit worker would run the engine's blocking BLKDISCARD, which is not modelled; without offload it runs",
                trim_what(cfg),
                cfg.ioengine.fio_name()
            ),
        ));
    }
    check_syncs(i, cfg)?;
    check_latency_target(i, cfg)?;
    if cfg.iodepth == 0 {
        return Err(bad_input(i, "iodepth must be at least 1".into()));
    }
    if is_null && cfg.size.is_none() && cfg.replay.is_none() {
        // fio fails such a job at setup (filesetup.c: total_file_size, EINVAL).
        return Err(bad_input(
            i,
            "ioengine=null: you need to specify size= (the null engine has no file to size it)".into(),
        ));
    }
    Ok(())
}

/// `latency_target` with what the model does not combine it with: each
/// changes when fio's loop holds or issues its io_us too.
fn check_latency_target(i: usize, cfg: &JobConfig) -> Result<(), Error> {
    if cfg.latency_target.is_none() {
        return Ok(());
    }
    let with = if cfg.verify.is_some() {
        Some("verify")
    } else if cfg.is_paced() {
        Some("rate, rate_iops or thinktime")
    } else if cfg.flow.is_some() {
        Some("flow")
    } else if cfg.offload {
        Some("io_submit_mode=offload")
    } else if matches!(cfg.ioengine, IoEngine::Posixaio) {
        Some("ioengine=posixaio")
    } else if cfg.replay.is_some() {
        Some("read_iolog")
    } else if cfg.sync_every != [0, 0] {
        Some("fsync or fdatasync")
    } else if cfg.iodepth_low < cfg.iodepth {
        Some("iodepth_low below iodepth")
    } else if cfg.record_ios {
        // (Its final run restarts the job's clock, and the logs' times with it.)
        Some("write_lat_log, write_bw_log, write_iops_log or write_hist_log")
    } else {
        None
    };
    match with {
        Some(what) => Err(not_modelled(i, format!("latency_target with {what} is not modelled yet"))),
        None => Ok(()),
    }
}

/// `fsync`, `fdatasync`, `end_fsync`: modelled where the fsync is a system
/// call of fio's own thread (the sync engines), an io_u of the null engine,
/// libaio's IOCB_CMD_FSYNC (`aio_fsync_work` on the CPU's kworker), or
/// posixaio's `aio_fsync` (fsync(2) on glibc's helper thread), io_uring's
/// IORING_OP_FSYNC (on the ring's io-wq worker, `io_uring/io_wq.rs`). Not on
/// a polled ring (EINVAL), nor with SQPOLL.
fn check_syncs(i: usize, cfg: &JobConfig) -> Result<(), Error> {
    let options = cfg.rw.writes() && (cfg.sync_every != [0, 0] || cfg.end_fsync);
    if cfg.replay.is_some() && options {
        return Err(not_modelled(
            i,
            "fsync, fdatasync or end_fsync with read_iolog is not modelled yet (the log's own syncs are)",
        ));
    }
    if !cfg.syncs() {
        // fio's should_fsync: a job that does not write never syncs.
        return Ok(());
    }
    let what = match (cfg.sync_every, cfg.end_fsync) {
        _ if !options => "read_iolog's syncs (sync, datasync, or a blktrace's flushes)".to_string(),
        // (With the options in play and no interval, it is end_fsync.)
        ([0, 0], _) => "end_fsync (or fsync_on_close)".to_string(),
        ([n, _], _) if n > 0 => format!("fsync={n}"),
        ([_, n], _) => format!("fdatasync={n}"),
    };
    let worker = match &cfg.ioengine {
        IoEngine::Sync
        | IoEngine::Psync
        | IoEngine::Pvsync
        | IoEngine::Pvsync2 { .. }
        | IoEngine::Null
        | IoEngine::Libaio
        | IoEngine::Posixaio => None,
        // io_init_req: an opcode without `iopoll` fails on an IOPOLL ring.
        IoEngine::IoUring(o) if o.hipri => Some("io_uring refuses IORING_OP_FSYNC on a polled ring (hipri): EINVAL"),
        IoEngine::IoUring(o) if o.sqthread_poll => {
            Some("with sqthread_poll the SQ thread queues it on io-wq and its completion is posted at once (no DEFER_TASKRUN)")
        }
        IoEngine::IoUring(_) => None,
        IoEngine::IoUringCmd(_) => Some("io_uring_cmd sends it as an NVMe Flush passthrough command"),
    };
    if let Some(worker) = worker {
        return Err(not_modelled(
            i,
            format!(
                "{what} with ioengine={}: {worker}, which blksim does not model; a sync engine (psync, sync, pvsync2), libaio, posixaio, io_uring without hipri or sqthread_poll, or the null engine runs it",
                cfg.ioengine.fio_name()
            ),
        ));
    }
    let other = if cfg.log_queued && !options {
        Some("write_iolog (a replayed log's syncs)")
    } else if cfg.offload {
        Some("io_submit_mode=offload")
    } else {
        None
    };
    match other {
        Some(other) => Err(not_modelled(i, format!("{what} together with {other} is not modelled yet"))),
        None => Ok(()),
    }
}
