//! fio: a job's own state as its thread starts (`init.c`'s `add_job` and
//! `td_fill_rand_seeds`, `backend.c`'s setup): its pacing, its block-size
//! draws (a trimwrite job's trims on a twin of the writes' stream), its
//! offset distribution, verify's log of writes, and whether its io_us take
//! the shaped path.

use crate::error::Error;
use crate::fio::distribution::{jhash, Distribution};
use crate::fio::job::Job;
use crate::fio::pace::Pace;
use crate::fio::verify_log::VerifyLog;
use crate::ids::DevId;
use crate::system::Sim;
use crate::workload::{FileService, JobConfig, RandomGenerator};

impl Sim {
    /// Job `i`'s fio state.
    pub(crate) fn fio_job_init(&self, i: usize, cfg: &JobConfig, devs: &[DevId], job: &mut Job) -> Result<(), Error> {
        let granularity = self.nanosleep_granularity_us();
        job.pace = Pace::of(cfg, &job.rand, granularity).map(Box::new);
        job.lat_watch_ns = cfg.lat_watch_ns();
        let depth = job.engine.depth;
        job.lat_target =
            cfg.latency_target.map(|t| Box::new(crate::fio::lat_target::LatTarget::new(t, cfg.iodepth, depth)));
        job.lat_depth();
        if let Some(nums) = self.lfsr_refused(cfg, devs, job.rand.offset_seed()) {
            return Err(Error::not_modelled(format!(
                "random_generator=lfsr: fio's LFSR for {nums} blocks cannot start from this job's seed (its low \
                 bits all ones, illegal for fio's XNOR register): fio fails it (\"fio: failed initializing LFSR\") \
                 and runs the job without I/O; give another randseed"
            ))
            .for_job(i));
        }
        if self.offsets_need_64_bits(cfg, devs) {
            job.rand.offsets_64();
        }
        // (A pass that `number_ios` ends short, a sync in flight, may be followed by another:
        // `Job::number_ios_left`; so may one after do_verify's read-back: `Sim::verify_next_loop`;
        // and a time-based job's pass that ran out of offsets.)
        let passes =
            cfg.loops > 1 || cfg.io_size.is_some() || cfg.number_ios > 0 || cfg.verify.is_some() || cfg.time_based;
        if passes && cfg.randrepeat {
            job.loop_seeds = Some(Box::new(job.rand.clone()));
        }
        // fio's exceeds_number_ios: number_ios times the job's loops (td->loops), over the job.
        job.cfg.number_ios = job.cfg.number_ios.saturating_mul(cfg.loops.max(1) as u64);
        if job.trimwrite.is_some() {
            // fio's do_io: number_ios counts a trim and its write.
            job.cfg.number_ios = job.cfg.number_ios.saturating_mul(2);
        }
        job.verify = cfg.verify.map(|v| {
            // fio 3.42's log_io_piece: writes in issue order unless offsets may overlap
            // (fio_offset_overlap_risk: norandommap, rw=...:N, ddir_seq_add), then sorted.
            let by_issue = !cfg.offset_overlap_risk;
            let c = &self.costs;
            Box::new(VerifyLog::new(v, by_issue, c.fio_md5_ns_per_kib, c.fio_fill_random_ns_per_kib))
        });
        job.fsync = cfg.syncs().then(|| {
            let io_us = cfg.log_queued.then(|| crate::fio::job::IoUPool::new(cfg.iodepth));
            Box::new(crate::fio::job::Fsyncs { io_us, ..Default::default() })
        });
        let mut prios: [Vec<_>; 2] = Default::default();
        job.cmdprio = crate::fio::cmdprio::CmdPrios::of(cfg, &mut prios).map(Box::new);
        for (d, p) in prios.into_iter().enumerate() {
            job.dirs[d].prios = p;
        }
        job.min_rate = crate::fio::min_rate::MinRate::of(cfg);
        // A sequential draw of a random job with a random map sets IO_U_F_BUSY_OK, which a
        // failed get_io_u leaves on its io_u: the chain puts its reaps on the free list first.
        let busy_ok = job.random_maps.is_some() && (cfg.ddir_seq_nr > 1 || cfg.perc_rand.iter().any(|&p| p < 100));
        job.shaped = job.pace.is_some()
            || busy_ok
            || job.min_rate.is_some()
            || cfg.syncs()
            || job.replay.is_some()
            || cfg.flow.is_some()
            || job.trimwrite.is_some()
            || job.verify.is_some()
            || (0..3).any(|d| cfg.bs_varies(d))
            || cfg.bs_is_seq_rand
            || (cfg.num_range > 1 && cfg.rw_has_trim())
            || cfg.strided.is_some()
            || matches!(cfg.file_service, FileService::Skewed(_));
        job.dist = self.job_distribution(i, cfg, devs, job.rand.offset_seed())?.map(Box::new);
        let files = self.job_files(cfg, devs);
        if files.len() > 1 {
            let service = cfg.file_service.clone();
            job.files = Some(Box::new(crate::fio::file_set::FileSet::new(files, service, cfg.log_queued)));
        }
        Ok(())
    }

    /// `random_distribution`'s state: per file, fio's ranges (the smaller of
    /// the read and write block sizes, over the smaller of the file and its
    /// region); `zoned_abs` zones must end within each file's region.
    /// zipf, pareto and normal draw from a generator per file, seeded as fio
    /// 3.42's `__init_rand_distribution` seeds it: `jhash` of the file's name,
    /// times the job's number, times its offsets' seed `offset_seed` (32 bits).
    fn job_distribution(
        &self,
        i: usize,
        cfg: &JobConfig,
        devs: &[DevId],
        offset_seed: u64,
    ) -> Result<Option<Distribution>, Error> {
        let files = self.job_files(cfg, devs);
        let range = cfg.bs[0].min(cfg.bs[1]).max(1);
        let nranges: Vec<u64> = files.iter().map(|&(real, region)| real.min(region).div_ceil(range)).collect();
        let thread_number = i as u32 + 1;
        let seeds: Vec<u32> = cfg
            .file_names()
            .iter()
            .map(|f| jhash(f.as_bytes(), 0).wrapping_mul(thread_number).wrapping_mul(offset_seed as u32))
            .collect();
        let Some(dist) = Distribution::new(&cfg.random_distribution, &nranges, &seeds) else {
            return Ok(None);
        };
        for (&(_, region), d) in files.iter().flat_map(|f| (0..3).map(move |d| (f, d))) {
            let (bs, ba) = (cfg.bs[d], if cfg.ba[d] == 0 { cfg.bs[d] } else { cfg.ba[d] });
            let lastb = (region - bs.saturating_sub(ba).min(region)) / ba;
            if dist.zones_exceed(d, lastb, ba) {
                return Err(job_error(
                    i,
                    format!(
                        "random_distribution=zoned_abs: the {} zones end past the job's region of {region} bytes (fio: \
                         zoned_abs sizes exceed file size)",
                        crate::workload::Direction::ALL[d].name()
                    ),
                ));
            }
        }
        Ok(Some(dist))
    }
}

impl Sim {
    /// Each of the job's files: its size and the job's region of it (the null
    /// engine's file: `filesize` bytes, or as long as the job's offset and
    /// size; several share `size`, `JobConfig::file_regions`).
    fn job_files(&self, cfg: &JobConfig, devs: &[DevId]) -> Vec<(u64, u64)> {
        let region = |i: usize, whole: u64| cfg.file_regions.get(i).copied().unwrap_or(cfg.size.unwrap_or(whole));
        if devs.is_empty() && !cfg.file_regions.is_empty() {
            // The null engine's files, each of `filesize` or grown to its region past the offset
            // (setup_files).
            let real = |i: usize| cfg.null_file.map_or(cfg.offset + region(i, 0), |(real, _)| real);
            (0..cfg.file_regions.len()).map(|i| (real(i), region(i, 0))).collect()
        } else if devs.is_empty() {
            let size = cfg.size.unwrap_or(cfg.bs[0]);
            vec![cfg.null_file.unwrap_or((cfg.offset + size, size))]
        } else {
            devs.iter()
                .enumerate()
                .map(|(i, &d)| {
                    let real = self.devs[d].capacity_bytes;
                    (real, region(i, real))
                })
                .collect()
        }
    }

    /// fio's init_random_map for the LFSR: the blocks of a file whose
    /// register the job's offsets' seed cannot start (lfsr_init fails).
    fn lfsr_refused(&self, cfg: &JobConfig, devs: &[DevId], seed: u64) -> Option<u64> {
        if !(cfg.rw.is_random() && cfg.random_generator.is_lfsr()) {
            return None;
        }
        let rw_min_bs = cfg.bs.iter().copied().filter(|&b| b > 0).min().unwrap_or(4096);
        self.job_files(cfg, devs).iter().find_map(|&(real, region)| {
            let nums = cfg.strided.map_or(real.min(region), |z| z.range) / rw_min_bs;
            crate::fio::lfsr::Lfsr::seed_is_illegal(nums, seed).then_some(nums)
        })
    }

    /// fio's check_rand_gen_limits: a random job that did not choose its
    /// generator, with a file (its region, or a strided zone's range) of more
    /// than 2^32 - 1 of its smallest blocks, draws its offsets from
    /// tausworthe64 (init_rand_offset_seed; its other generators stay 32-bit).
    fn offsets_need_64_bits(&self, cfg: &JobConfig, devs: &[DevId]) -> bool {
        let rw_min_bs = cfg.bs.iter().copied().filter(|&b| b > 0).min().unwrap_or(4096);
        cfg.rw.is_random()
            && cfg.random_generator == RandomGenerator::Default
            && self.job_files(cfg, devs).iter().any(|&(real, region)| {
                let fsize = cfg.strided.map_or(real.min(region), |z| z.range);
                fsize / rw_min_bs > u32::MAX as u64
            })
    }
}

fn job_error(job: usize, message: String) -> Error {
    Error::bad_input(message).for_job(job)
}
