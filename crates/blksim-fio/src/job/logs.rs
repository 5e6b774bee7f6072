//! fio's log options of one job (`write_lat_log`, `write_bw_log`,
//! `write_iops_log`, `write_hist_log` and the `log_*` options that shape
//! them), as `init.c`'s `add_job` sets the logs up. `output::logs` writes
//! the files.

/// What a windowed log entry holds (`log_window_value`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogWindowValue {
    /// The mean over the window (fio's default; `0`).
    #[default]
    Avg,
    /// The largest value in the window (`1`).
    Max,
    /// Both: a `value1` column with the maximum follows the mean.
    Both,
}

/// The log files one job writes and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogOptions {
    /// `write_bw_log[=PREFIX]`: `Some("")` for the job's name as the prefix.
    pub bw: Option<String>,
    /// `write_lat_log[=PREFIX]`: the lat, slat and clat logs.
    pub lat: Option<String>,
    /// `write_iops_log[=PREFIX]`.
    pub iops: Option<String>,
    /// `write_hist_log[=PREFIX]`: the clat_hist log (entries only with `log_hist_msec`).
    pub hist: Option<String>,
    /// `write_iolog=FILE`: fio's I/O trace (iolog version 3), appended to FILE.
    pub iolog: Option<String>,
    /// `log_avg_msec`: 0 logs every I/O; else one entry per direction and window.
    pub avg_msec: u64,
    /// `log_hist_msec`.
    pub hist_msec: u64,
    /// `log_hist_coarseness` (0..=6): 2^N histogram bins summed per column.
    pub hist_coarseness: u32,
    /// `log_window_value` (`log_max_value`).
    pub window: LogWindowValue,
    /// `log_offset`: an offset column.
    pub offset: bool,
    /// `log_prio`: the priority column as `0x%04x` (class and level), else 1 for RT-class I/O and 0 otherwise.
    pub prio: bool,
    /// `log_issue_time`: an issue-time column (ns since the job's start; with `write_lat_log` and `log_offset`).
    pub issue_time: bool,
    /// `log_alternate_epoch` (`log_unix_epoch`): times in ms since the clock's epoch, not the job's
    /// start (fio adds `td->alternate_epoch`, the clock's ms at the job's start after its ramp).
    pub alternate_epoch: bool,
    /// `per_job_logs`: the job's number in the file name (`PREFIX_bw.N.log`); off: `PREFIX_bw.log`, appended to.
    pub per_job: bool,
    /// `bwavgtime` when it is written (the bw log's window is then the smaller of it and `log_avg_msec`).
    pub bw_avg_msec: Option<u64>,
    /// `iopsavgtime` when it is written.
    pub iops_avg_msec: Option<u64>,
    /// `disable_lat` (set by `gtod_reduce`): no lat log.
    pub disable_lat: bool,
    /// `disable_clat`: no clat log and no histogram entries.
    pub disable_clat: bool,
    /// `disable_slat`: no slat log.
    pub disable_slat: bool,
    /// `disable_bw`: no per-I/O bandwidth entries.
    pub disable_bw: bool,
}

impl Default for LogOptions {
    fn default() -> LogOptions {
        LogOptions {
            bw: None,
            lat: None,
            iops: None,
            hist: None,
            iolog: None,
            avg_msec: 0,
            hist_msec: 0,
            hist_coarseness: 0,
            window: LogWindowValue::Avg,
            offset: false,
            prio: false,
            issue_time: false,
            alternate_epoch: false,
            per_job: true,
            bw_avg_msec: None,
            iops_avg_msec: None,
            disable_lat: false,
            disable_clat: false,
            disable_slat: false,
            disable_bw: false,
        }
    }
}

impl LogOptions {
    /// Does the job write any log file?
    /// Logs of the I/Os' latencies and rates (not `write_iolog`): the run reports each I/O for them.
    pub fn per_io(&self) -> bool {
        self.bw.is_some() || self.lat.is_some() || self.iops.is_some() || self.hist.is_some()
    }

    pub fn any(&self) -> bool {
        self.bw.is_some() || self.lat.is_some() || self.iops.is_some() || self.hist.is_some() || self.iolog.is_some()
    }

    /// The bandwidth log's window, ms (0: every I/O), as `add_job` sets it.
    pub fn bw_window_msec(&self) -> u64 {
        self.bw_avg_msec.map_or(self.avg_msec, |t| t.min(self.avg_msec))
    }

    /// The IOPS log's window, ms.
    pub fn iops_window_msec(&self) -> u64 {
        self.iops_avg_msec.map_or(self.avg_msec, |t| t.min(self.avg_msec))
    }
}
