//! fio's and Linux's checks of a job's sizes once its options are applied:
//! `size` not below the block size (fio: "size too small"), O_DIRECT sizes
//! and offsets aligned to the device's logical block size (Linux: EINVAL),
//! I/Os the model can hold; and fio's I/O amount for a `size` that is not a
//! multiple of the block size.

use blksim::workload::RwKind;

use super::engine::EngineName;
use super::settings::Settings;

/// The logical block size of the simulated block devices (blksim counts 512-byte sectors).
pub const LOGICAL_BLOCK_BYTES: u64 = 512;

/// The largest I/O the model holds in one request: 4 GiB - 1 bytes.
const MAX_IO_BYTES: u64 = u32::MAX as u64;

/// What is wrong with a job's sizes, as (bad input or not modelled, message).
pub enum SizeProblem {
    Bad(String),
    NotModelled(String),
}

/// The directions (0 read, 1 write, 2 trim) a job of kind `rw` does.
pub(crate) fn directions(rw: RwKind) -> &'static [usize] {
    match rw {
        RwKind::Read | RwKind::RandRead => &[0],
        RwKind::Write | RwKind::RandWrite => &[1],
        RwKind::Trim | RwKind::RandTrim => &[2],
        RwKind::ReadWrite | RwKind::RandRw => &[0, 1],
        _ => &[0, 1, 2],
    }
}

/// Every block size of each direction the job does: its `bssplit`'s, else `bsrange`'s fixed size, else `bs`.
fn block_sizes(st: &Settings) -> Vec<u64> {
    directions(st.rw).iter().flat_map(|&d| st.block_sizes_of(d)).collect()
}

/// The job's smallest block size (fio's `min_bs` over the directions it does).
pub(crate) fn min_bs(st: &Settings) -> u64 {
    block_sizes(st).into_iter().min().unwrap_or(4096)
}

/// fio's `td_min_bs`: the smallest block size of every direction, those the
/// job does not do included (what aligns a percentage offset or size).
pub(crate) fn td_min_bs(st: &Settings) -> u64 {
    (0..3).flat_map(|d| st.block_sizes_of(d)).min().unwrap_or(4096)
}

/// fio's checks of the pacing options (`fixup_options`, `__setup_rate`), and the divisions by
/// zero of its `usec_for_io` with `rate_process=poisson`, refused here rather than crashing.
pub fn check_pacing(st: &Settings) -> Result<(), SizeProblem> {
    let rated = |r: &[u64; 3]| r.iter().any(|&v| v > 0);
    if rated(&st.rate) && rated(&st.rate_iops) {
        return Err(SizeProblem::Bad(
            "rate and rate_iops are both set (fio: rate and rate_iops are mutually exclusive)".into(),
        ));
    }
    if rated(&st.rate_min) && rated(&st.rate_iops_min) {
        return Err(SizeProblem::Bad(
            "rate_min and rate_iops_min are both set (fio: rate and rate_iops are mutually exclusive)".into(),
        ));
    }
    for d in 0..3 {
        let (rate, min) = if st.rate_iops[d] > 0 && st.rate_iops[d] < st.rate_iops_min[d] {
            ("rate_iops", "rate_iops_min")
        } else if st.rate[d] > 0 && st.rate[d] < st.rate_min[d] {
            ("rate", "rate_min")
        } else {
            continue;
        };
        let name = blksim::workload::Direction::ALL[d].name();
        return Err(SizeProblem::Bad(format!(
            "the {name}s' {min} is above their {rate} (fio: minimum rate exceeds rate, ddir {d})"
        )));
    }
    if st.rate_process != blksim::workload::RateProcess::Poisson || !(rated(&st.rate) || rated(&st.rate_iops)) {
        return Ok(());
    }
    for &d in directions(st.rw).iter().filter(|&&d| d < 2) {
        let min = st.block_sizes_of(d).into_iter().min().unwrap_or(4096);
        let bps = if st.rate[d] > 0 { st.rate[d] } else { st.rate_iops[d].saturating_mul(min) };
        if bps / min == 0 {
            let name = ["read", "write"][d];
            return Err(SizeProblem::Bad(format!(
                "rate_process=poisson: the {name}s' rate is {bps} bytes/s, less than one block of {min} bytes a \
                 second; fio's usec_for_io divides by that rate in I/Os per second (0) and crashes (give every \
                 direction the job does a rate of at least one block a second)"
            )));
        }
    }
    Ok(())
}

/// fio's and Linux's checks of the job's block sizes, size and offset, and of its log options.
pub fn check_sizes(st: &Settings) -> Result<(), SizeProblem> {
    check_cmdprio(st)?;
    match st.filesize {
        Some(_) if st.engine != EngineName::Null => {
            return Err(SizeProblem::NotModelled(
                "filesize: only the null engine's file is modelled (blksim simulates block devices, not files on a \
                 file system)"
                    .into(),
            ))
        }
        Some(size) if st.offset > size => {
            return Err(SizeProblem::Bad(format!(
                "offset={} with filesize={size}: fio: offset extends end ({} > {size})",
                st.offset, st.offset
            )))
        }
        _ => {}
    }
    // fio's fixup_options (zonemode's default is none).
    match (st.zone_mode.unwrap_or("none"), st.zone_size) {
        ("none", s) if s > 0 => {
            return Err(SizeProblem::Bad(format!(
                "zonemode=none with zonesize={s}: fio: --zonemode=none and --zonesize are not compatible"
            )))
        }
        ("strided", 0) => {
            return Err(SizeProblem::Bad(
                "zonemode=strided without zonesize: fio: --zonesize must be specified when using --zonemode=strided"
                    .into(),
            ))
        }
        _ => {}
    }
    if let (Some(dir), true) = (&st.directory, st.filenames.is_empty() && st.engine != EngineName::Null) {
        // fio would create regular files (JOB.N.M) there.
        return Err(SizeProblem::NotModelled(format!(
            "directory={dir} without filename=: fio makes the job's files in that directory, and blksim \
             simulates block devices, not files on a file system; name a device with filename=/dev/DEVICE \
             (or directory=/dev with filename=DEVICE)"
        )));
    }
    if st.logs.issue_time && (st.logs.lat.is_none() || !st.logs.offset) {
        // fio's add_job.
        return Err(SizeProblem::Bad(
            "log_issue_time=1 requires write_lat_log and log_offset=1 (fio: log_issue_time option requires \
             write_lat_log and log_offset options)"
                .into(),
        ));
    }
    check_pacing(st)?;
    let bs = block_sizes(st);
    if let Some(&big) = bs.iter().find(|&&b| b > MAX_IO_BYTES) {
        return Err(SizeProblem::NotModelled(format!(
            "bs={big}: I/Os of 4 GiB or more are not modelled (one request holds at most {MAX_IO_BYTES} bytes)"
        )));
    }
    // A replayed log's I/Os are its own sizes (fio skips its size checks for it).
    if let (Some(size), None) = (st.size, &st.replay.file) {
        let min = min_bs(st);
        if size < min {
            return Err(SizeProblem::Bad(format!(
                "size={size} is smaller than the block size {min} (fio: size too small, must not be less than \
                 minimum block size)"
            )));
        }
    }
    // fio's null engine does no I/O, so nothing fails.
    if st.direct && st.engine != EngineName::Null {
        let ba = directions(st.rw).iter().filter(|_| st.rw.is_random()).map(|&d| ("ba", st.ba[d])).filter(|b| b.1 > 0);
        let misaligned = bs.iter().map(|&b| ("bs", b)).chain(ba).chain([
            ("offset", st.offset),
            ("offset_increment", st.offset_increment),
            ("the rw= suffix", st.ddir_seq_add.unsigned_abs()),
        ]);
        if let Some((what, v)) = misaligned.into_iter().find(|(_, v)| v % LOGICAL_BLOCK_BYTES != 0) {
            return Err(SizeProblem::Bad(format!(
                "{what}={v} with direct=1: O_DIRECT I/O on a block device must be a multiple of its logical block \
                 size ({LOGICAL_BLOCK_BYTES} bytes here) in size and offset; Linux fails it with EINVAL"
            )));
        }
    }
    if let (Some(out), None) = (&st.replay.merge.file, &st.replay.file) {
        return Err(SizeProblem::Bad(format!(
            "merge_blktrace_file={out} without read_iolog: it merges the blktraces read_iolog lists, and there is \
             none"
        )));
    }
    // fio's fixup_options and its io_uring engine's init: several ranges per trim only with
    // io_uring_cmd (FIO_MULTI_RANGE_TRIM), and never with trimwrite.
    let trims = matches!(st.rw, RwKind::Trim | RwKind::RandTrim | RwKind::TrimWrite | RwKind::RandTrimWrite);
    let n = st.num_range;
    if trims && n > 1 && matches!(st.rw, RwKind::TrimWrite | RwKind::RandTrimWrite) {
        return Err(SizeProblem::Bad(format!(
            "num_range={n} with rw={}: fio: trimwrite cannot be used with multiple ranges",
            if st.rw == RwKind::TrimWrite { "trimwrite" } else { "randtrimwrite" }
        )));
    }
    if trims && n > 1 && st.engine != EngineName::IoUringCmd {
        return Err(SizeProblem::Bad(format!(
            "num_range={n} with ioengine={}: fio: can't use multiple ranges with IO engine {0} (only \
             io_uring_cmd sends a trim of several ranges, one Dataset Management command)",
            st.engine.name()
        )));
    }
    if trims && n == 0 && st.engine == EngineName::IoUringCmd {
        return Err(SizeProblem::Bad(
            "num_range=0 with ioengine=io_uring_cmd: fio would send each trim as a Dataset Management command \
             with room for no range and a range count of num_range - 1 (0xffffffff, 256 ranges it never wrote); \
             give num_range=1 or more"
                .into(),
        ));
    }
    // fio's io_uring_cmd engine checks its block sizes against the namespace's LBA size at open
    // (fio_ioring_cmd_open_file); offsets it turns into LBAs by a shift.
    if st.engine == EngineName::IoUringCmd {
        if let Some(b) = bs.iter().find(|&&b| b % LOGICAL_BLOCK_BYTES != 0) {
            return Err(SizeProblem::Bad(format!(
                "bs={b} with ioengine=io_uring_cmd: NVMe passthrough commands are in logical blocks ({LOGICAL_BLOCK_BYTES} \
                 bytes here); fio fails the job: \"block size must be a multiple of LBA data size\""
            )));
        }
    }
    Ok(())
}

/// fio's checks of the cmdprio options (`fio_cmdprio_init`, `fio_cmdprio_fill_bsprio`).
fn check_cmdprio(st: &Settings) -> Result<(), SizeProblem> {
    if st.eng.table != st.engine.option_table() {
        return Ok(());
    }
    let e = &st.eng;
    let percentage = e.cmdprio_percentage.iter().any(|&p| p > 0);
    if percentage && e.cmdprio_bssplit.is_some() {
        return Err(SizeProblem::Bad(
            "cmdprio_percentage and cmdprio_bssplit are both set (fio: cmdprio_percentage and cmdprio_bssplit \
             options are mutually exclusive)"
                .into(),
        ));
    }
    if let Some(split) = &e.cmdprio_bssplit {
        for entries in split {
            let mut sizes: Vec<u64> = entries.iter().map(|x| x.bs).collect();
            sizes.dedup();
            for bs in sizes {
                let total: u32 = entries.iter().filter(|x| x.bs == bs).map(|x| x.perc).sum();
                if total > 100 {
                    return Err(SizeProblem::Bad(format!(
                        "cmdprio_bssplit's percentages for {bs}-byte I/Os add up to {total}% (fio: cmdprio_bssplit \
                         total percentage for bs: {bs} exceeds 100)"
                    )));
                }
            }
        }
    }
    if (percentage || e.cmdprio_bssplit.is_some()) && st.engine == EngineName::IoUringCmd {
        return Err(SizeProblem::NotModelled(
            "cmdprio_percentage and cmdprio_bssplit with ioengine=io_uring_cmd: a passthrough command's \
             priority is not modelled (use ioengine=io_uring or libaio)"
                .into(),
        ));
    }
    Ok(())
}
