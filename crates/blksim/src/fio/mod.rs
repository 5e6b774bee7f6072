//! fio, the user-space program: a job's thread state (`job.rs`), its I/O
//! loop (`backend.rs`: `do_io`'s queue, commit and reap), where each io_u
//! goes (`io_u.rs`, a job's several files `file_set.rs`, `distribution.rs`, `random_map.rs`, `lfsr.rs`; a replayed log: `iolog.rs`), its pacing (`pace.rs`,
//! `pace_loop.rs`), its stonewall phases (`phases.rs`), `io_completed` (`io_completed.rs`), the user time of its program (`user.rs`), the posixaio engine on
//! glibc's AIO (`posixaio.rs`, `aio.rs`), a trim in an engine's queue hook (`sync_trim.rs`), fsync io_us and `end_fsync` (`fsync.rs`), `io_submit_mode=offload`'s submit workers
//! (`rate_submit.rs`, `workqueue.rs`), verify (`verify.rs`, `verify_log.rs`; `verify_async`'s threads:
//! `verify_async.rs`, `verify_list.rs`), and t/io_uring's
//! lean loop (`t_io_uring.rs`). Its system calls' kernel side is `fs/` and
//! `io_uring/`.

pub(crate) mod aio;
pub(crate) mod backend;
pub(crate) mod cmdprio;
pub(crate) mod distribution;
pub(crate) mod file_set;
pub(crate) mod flow;
pub(crate) mod flow_loop;
pub(crate) mod fsync;
pub(crate) mod init;
pub(crate) mod io_completed;
pub(crate) mod io_u;
pub(crate) mod iolog;
pub(crate) mod ioscheduler;
pub(crate) mod job;
pub(crate) mod job_check;
pub(crate) mod lat_target;
pub(crate) mod lat_target_loop;
pub(crate) mod lfsr;
pub(crate) mod min_rate;
pub(crate) mod pace;
pub(crate) mod pace_loop;
pub(crate) mod phases;
pub(crate) mod posixaio;
pub(crate) mod rand;
pub(crate) mod random_map;
pub(crate) mod rate_submit;
pub(crate) mod replay;
pub(crate) mod sync_trim;
pub(crate) mod t_io_uring;
pub(crate) mod user;
pub(crate) mod verify;
pub(crate) mod verify_async;
pub(crate) mod verify_list;
pub(crate) mod verify_log;
pub(crate) mod workqueue;
