//! fio: a job's several files as `get_next_file` serves them (`io_u.c`'s
//! `__get_next_file`): as `file_service_type` says (`roundrobin`, the
//! default: the next file not done, `get_next_file_rr`; `random`: one drawn,
//! `get_next_file_rand`; either kept for `:N` I/Os; `sequential`: each until
//! it is done), each with its size and the job's region of it (setup_files'
//! `io_size`: `size=` shared among the files). A file whose offsets ran out
//! is done (`set_io_u_file`: fio closes it and tries the next); the pass
//! ends when every file is; the next pass starts none done and none open
//! (`clear_io_state`). A skewed service (`zipf`, `pareto`, `normal`) draws
//! each I/O's file from its generator, and a file that runs out is closed
//! and starts over (fio_file_reset) instead of being done. A job of one file
//! has none of this.

use crate::block::request::Request;
use crate::fio::rand::{FRand, RandStates};
use crate::ids::{IdVec, ReqId};
use crate::workload::FileService;

/// fio's `FIO_FSERVICE_SHIFT`: a skewed service draws among `nr_files << 10` ranges.
pub(crate) const FIO_FSERVICE_SHIFT: u32 = 10;

/// Files in a row a skewed service may find run out, with no I/O between,
/// before blksim gives up (fio draws on for ever).
const SKEWED_TRIES: u32 = 1 << 20;

/// The files of a job that has more than one.
#[derive(Clone)]
pub(crate) struct FileSet {
    /// Each file's size (fio's `real_file_size`) and the job's region of it (`io_size`).
    pub sizes: Vec<(u64, u64)>,
    /// Files found done this pass (`FIO_FILE_done`).
    done: Vec<bool>,
    nr_done: usize,
    /// The file round robin tries next (`td->next_file`).
    next: usize,
    /// `file_service_type`.
    service: FileService,
    /// The file served last while it is open (`td->file_service_file`), and
    /// how many more I/Os it takes (`file_service_left`).
    current: Option<usize>,
    left: u32,
    /// With `write_iolog`: the files found done (or, skewed, closed) since the log last heard, in order.
    log: Option<Vec<u16>>,
    /// How many of `log`'s files were found done before the pass began (`reset`): the log
    /// closes them before clear_io_state's closes, the others after.
    before_reset: usize,
    /// A skewed service: files that ran out in a row, each closed and
    /// started over, with no I/O between them; `just_reset`: the last file
    /// served was one of them.
    streak: u32,
    just_reset: bool,
    /// A skewed service: the io_us holding each file (fio's `references`
    /// less its open's: taken as the file is served, put back as the io_u is
    /// reaped or its fill fails), and the files closed while io_us held them
    /// (`FIO_FILE_closing`), which get_next_file_rand passes over until the
    /// last is reaped.
    refs: Vec<u32>,
    closing: Vec<bool>,
    /// The reaping io_us put their files as the chain step ends, after the
    /// fill fio makes before it reaps (`Sim::io_us_put`).
    pub(crate) deferred: bool,
    /// The next file, served ahead (`serve_ahead`) for a trimwrite job's direction.
    ahead: Option<usize>,
}

impl FileSet {
    /// The files of `sizes`; `log` keeps the files found done for `write_iolog`.
    pub(crate) fn new(sizes: Vec<(u64, u64)>, service: FileService, log: bool) -> FileSet {
        let n = sizes.len();
        let log = log.then(Vec::new);
        FileSet {
            sizes,
            done: vec![false; n],
            nr_done: 0,
            next: 0,
            service,
            current: None,
            left: 0,
            log,
            before_reset: 0,
            streak: 0,
            just_reset: false,
            refs: vec![0; n],
            closing: vec![false; n],
            deferred: false,
            ahead: None,
        }
    }

    /// __get_next_file: the file the next I/O goes to; `rand` holds fio's
    /// `next_file_state` and a skewed service's generator (with every file
    /// done, the next in turn: the pass is over and nothing is drawn).
    pub(crate) fn next(&mut self, rand: &mut RandStates) -> usize {
        if let Some(f) = self.ahead.take() {
            return f;
        }
        if !std::mem::take(&mut self.just_reset) {
            self.streak = 0;
        }
        if let Some(f) = self.current {
            if self.service == FileService::Sequential {
                return f;
            }
            if self.left > 0 {
                self.left -= 1;
                return f;
            }
        }
        let (f, nr) = match self.service {
            FileService::Random { nr } if self.nr_done < self.sizes.len() => (self.next_rand(&mut rand.file), nr),
            // (str_fst_cb: one I/O to each file drawn; none is ever done.)
            FileService::Skewed(_) => (self.next_skewed(rand), 1),
            FileService::Random { nr } | FileService::RoundRobin { nr } => (self.next_rr(), nr),
            FileService::Sequential => (self.next_rr(), 1),
        };
        // (`:0` leaves fio's unsigned count at its largest: the file is kept until it is done.)
        (self.current, self.left) = (Some(f), nr.wrapping_sub(1));
        f
    }

    /// get_next_file_rr: the next file not done, round robin.
    fn next_rr(&mut self) -> usize {
        let n = self.sizes.len();
        loop {
            let f = self.next;
            self.next = if f + 1 == n { 0 } else { f + 1 };
            if !self.done[f] || self.nr_done == n {
                return f;
            }
        }
    }

    /// get_next_file_rand for a skewed service: files drawn from its
    /// generator (`__get_next_fileno_rand`) until one is not closing (with
    /// every file closing fio draws for ever; blksim takes the draw), and the
    /// io_u takes it (get_file).
    fn next_skewed(&mut self, rand: &mut RandStates) -> usize {
        let n = self.sizes.len();
        let gen = rand.file_skew.as_deref_mut().expect("a skewed file service has its generator");
        let all_closing = self.closing.iter().all(|&c| c);
        let f = loop {
            let f = ((gen.next() >> FIO_FSERVICE_SHIFT) as usize).min(n - 1);
            if !self.closing[f] || all_closing {
                break f;
            }
        };
        self.refs[f] += 1;
        f
    }

    /// A skewed service's io_u on file `f` was reaped (put_io_u's
    /// put_file_log): the file it closed while held is closed when the last goes.
    #[inline(always)]
    pub(crate) fn io_u_put(&mut self, f: usize) {
        if let Some(r) = self.refs.get_mut(f).filter(|r| **r > 0) {
            *r -= 1;
            if *r == 0 {
                self.closing[f] = false;
            }
        }
    }

    /// The io_us of `reaped` are put (put_io_u): each puts its file but
    /// end_fsync's (IO_U_F_NO_FILE_PUT).
    pub(crate) fn io_us_put<'a>(&mut self, reqs: &IdVec<ReqId, Request>, reaped: impl Iterator<Item = &'a ReqId>) {
        reaped.filter(|&&r| reqs[r].puts_file()).for_each(|&r| self.io_u_put(reqs[r].file as usize));
    }

    /// get_next_file_rand: files drawn (`__get_next_fileno_rand`) until one is not done.
    fn next_rand(&mut self, rand: &mut FRand) -> usize {
        let n = self.sizes.len();
        loop {
            let r = rand.next() as f64 / (rand.max() as f64 + 1.0);
            let f = ((n as f64 * r) as usize).min(n - 1);
            if !self.done[f] {
                return f;
            }
        }
    }

    /// The file the next I/O goes to, served now and kept for `next`: fio's
    /// get_io_u draws the file (set_io_u_file) before the direction
    /// (set_rw_ddir), and a trimwrite job's direction is its file's.
    pub(crate) fn serve_ahead(&mut self, rand: &mut RandStates) -> usize {
        let f = self.next(rand);
        self.ahead = Some(f);
        f
    }

    /// The number of files.
    pub(crate) fn len(&self) -> usize {
        self.sizes.len()
    }

    /// fill_io_u failed on file `f`: it is done. Whether a file is left this pass.
    pub(crate) fn file_done(&mut self, f: usize) -> bool {
        if self.current == Some(f) {
            self.current = None;
        }
        if !self.done[f] {
            self.done[f] = true;
            self.nr_done += 1;
            if let Some(log) = &mut self.log {
                log.push(f as u16);
            }
        }
        self.nr_done < self.sizes.len()
    }

    /// A skewed service's file `f` ran out (set_io_u_file): fio closes it and
    /// starts it over (fio_file_reset) rather than mark it done. Whether to
    /// try the next file: not after `SKEWED_TRIES` files in a row ran out
    /// with no I/O between (a job whose offsets never fit: fio would try for
    /// ever; blksim gives up, `never_ends`, and the run fails with why).
    pub(crate) fn file_restarted(&mut self, f: usize) -> bool {
        if self.current == Some(f) {
            self.current = None;
        }
        if let Some(log) = &mut self.log {
            log.push(f as u16);
        }
        self.just_reset = true;
        self.streak += 1;
        // The failing io_u puts the file back; io_us still holding it leave it closing.
        self.io_u_put(f);
        self.closing[f] = self.refs[f] > 0;
        self.streak < SKEWED_TRIES
    }

    /// A skewed service gave up after `SKEWED_TRIES` files in a row ran out
    /// (fio would draw them for ever).
    pub(crate) fn never_ends(&self) -> bool {
        self.streak >= SKEWED_TRIES
    }

    /// A skewed service: a file that runs out starts over instead of being done.
    pub(crate) fn skewed(&self) -> bool {
        matches!(self.service, FileService::Skewed(_))
    }

    /// clear_io_state: a new pass, no file done.
    pub(crate) fn reset(&mut self) {
        self.done.iter_mut().for_each(|d| *d = false);
        self.refs.iter_mut().for_each(|r| *r = 0);
        self.closing.iter_mut().for_each(|c| *c = false);
        self.nr_done = 0;
        self.current = None;
        self.before_reset = self.log.as_ref().map_or(0, Vec::len);
    }

    /// The files found done since the last call, for `write_iolog`.
    pub(crate) fn take_done_log(&mut self) -> Vec<u16> {
        self.log.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// `write_iolog`'s closes of the files job `job` found done since the
    /// log last heard, `since` its start (before whatever the log hears next);
    /// with `reopened`, clear_io_state's close of every file in between: after
    /// the files found done before the pass began, before those found since.
    pub(crate) fn log_done(&mut self, log: &mut dyn crate::stats::IoLog, job: usize, since: u64, reopened: bool) {
        let done = self.take_done_log();
        let before = if reopened { std::mem::take(&mut self.before_reset).min(done.len()) } else { done.len() };
        for &f in &done[..before] {
            log.file_done(job, f as usize, since);
        }
        if reopened {
            log.reopened(job, since);
        }
        for &f in &done[before..] {
            log.file_done(job, f as usize, since);
        }
    }
}

impl crate::fio::job::Job {
    /// `write_iolog`'s closes of the files this job (number `job`, of
    /// several) found done since the log last heard, `since` its start, and
    /// the close and reopen of a pass that began (`Job::reopened`) if the
    /// log is to show it (`log_queued`).
    pub(crate) fn log_files_done(&mut self, log: &mut dyn crate::stats::IoLog, job: usize, since: u64) {
        let reopened = std::mem::take(&mut self.reopened) && self.cfg.log_queued;
        match self.files.as_deref_mut() {
            Some(files) => files.log_done(log, job, since, reopened),
            None if reopened => log.reopened(job, since),
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::distribution::FileDist;

    #[test]
    fn round_robin_skips_files_done_until_the_pass_starts_again() {
        let r = &mut RandStates::new(1, 1, false, false, false);
        let mut fs = FileSet::new(vec![(8, 8); 3], FileService::default(), true);
        assert_eq!((fs.next(r), fs.next(r), fs.next(r), fs.next(r)), (0, 1, 2, 0));
        assert!(fs.file_done(1));
        assert_eq!((fs.next(r), fs.next(r), fs.next(r)), (2, 0, 2));
        assert!(fs.file_done(2));
        assert!(!fs.file_done(0));
        assert_eq!(fs.take_done_log(), vec![1, 2, 0]);
        // Every file done: the next in turn, nothing skipped (and no endless loop).
        assert_eq!((fs.serve_ahead(r), fs.next(r)), (0, 0));
        fs.reset();
        assert_eq!(fs.serve_ahead(r), 1);
        assert_eq!((fs.next(r), fs.next(r)), (1, 2));
        assert!(fs.take_done_log().is_empty());
    }
    #[test]
    fn a_file_is_kept_for_its_count_or_until_it_is_done() {
        let r = &mut RandStates::new(1, 1, false, false, false);
        let mut fs = FileSet::new(vec![(8, 8); 3], FileService::RoundRobin { nr: 2 }, false);
        let order: Vec<usize> = (0..6).map(|_| fs.next(r)).collect();
        assert_eq!(order, [0, 0, 1, 1, 2, 2]);
        let mut fs = FileSet::new(vec![(8, 8); 3], FileService::Sequential, false);
        assert_eq!((fs.next(r), fs.serve_ahead(r), fs.next(r)), (0, 0, 0));
        assert!(fs.file_done(0));
        assert_eq!((fs.next(r), fs.next(r)), (1, 1));
        // Random: only files not done are drawn.
        let mut fs = FileSet::new(vec![(8, 8); 3], FileService::Random { nr: 1 }, false);
        assert!(fs.file_done(0) && fs.file_done(2));
        assert!((0..20).all(|_| fs.next(r) == 1));
    }

    /// A file served ahead (a trimwrite job's direction is its file's) is the one `next`
    /// gives, drawn once: the draws are fio's, whether or not a file was served ahead.
    #[test]
    fn a_file_served_ahead_is_the_next_one_and_is_drawn_once() {
        let service = FileService::Random { nr: 1 };
        let (r1, r2) =
            (&mut RandStates::new(5, 1, false, false, false), &mut RandStates::new(5, 1, false, false, false));
        let (mut plain, mut ahead) =
            (FileSet::new(vec![(8, 8); 4], service.clone(), false), FileSet::new(vec![(8, 8); 4], service, false));
        let want: Vec<usize> = (0..40).map(|_| plain.next(r1)).collect();
        let got: Vec<usize> = (0..40)
            .map(|i| match i % 3 {
                0 => ahead.next(r2),
                _ => {
                    let f = ahead.serve_ahead(r2);
                    assert_eq!(ahead.next(r2), f);
                    f
                }
            })
            .collect();
        assert_eq!(got, want);
        assert!(want.iter().any(|&f| f != want[0]), "{want:?}");
    }

    #[test]
    fn a_skewed_service_passes_over_a_file_closing_until_its_last_io_u_is_put() {
        let mut r = RandStates::new(1, 1, false, false, false);
        let zipf = crate::workload::RandomDistribution::Zipf { theta: 1.2, center: None };
        r.file_skew = Some(Box::new(FileDist::file_service(&zipf, 3 << FIO_FSERVICE_SHIFT, 7)));
        let skew = FileService::Skewed(zipf);
        let mut fs = FileSet::new(vec![(8, 8); 3], skew, true);
        let drawn: Vec<usize> = (0..40).map(|_| fs.next(&mut r)).collect();
        let hot = (0..3).max_by_key(|&f| drawn.iter().filter(|&&d| d == f).count()).unwrap();
        let held = drawn.iter().filter(|&&d| d == hot).count();
        // Its fill fails: the failing io_u puts it back, the others hold it.
        assert!(fs.file_restarted(hot));
        assert_eq!(fs.take_done_log(), vec![hot as u16], "closed, never done");
        assert!((0..200).all(|_| fs.next(&mut r) != hot), "a closing file is not served");
        (1..held).for_each(|_| fs.io_u_put(hot));
        assert!((0..200).any(|_| fs.next(&mut r) == hot), "served again once its io_us are reaped");
    }
}
