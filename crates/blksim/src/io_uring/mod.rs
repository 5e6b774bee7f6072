//! io_uring's kernel side beyond a request's submission and completion
//! (`fs/rw.rs`): IOPOLL (`io_do_iopoll`, `iopoll.rs`) and the SQPOLL
//! thread (`io_sq_thread`, `sqpoll.rs`), and the io-wq worker that takes an
//! fsync (`io_wq.rs`).

pub(crate) mod io_wq;
pub(crate) mod iopoll;
pub(crate) mod ring;
pub(crate) mod sqpoll;
