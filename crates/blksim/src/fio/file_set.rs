//! fio: a job's several files as `get_next_file` serves them (`io_u.c`'s
//! `get_next_file_rr`, the default `file_service_type=roundrobin`): the next
//! file not done this pass, each with its size and the job's region of it
//! (setup_files' `io_size`: `size=` shared among the files). A file whose
//! offsets ran out is done (`set_io_u_file`: fio closes it and tries the
//! next); the pass ends when every file is; the next pass starts none done
//! (`clear_io_state`). A job of one file has none of this.

/// The files of a job that has more than one.
pub(crate) struct FileSet {
    /// Each file's size (fio's `real_file_size`) and the job's region of it (`io_size`).
    pub sizes: Vec<(u64, u64)>,
    /// Files found done this pass (`FIO_FILE_done`).
    done: Vec<bool>,
    nr_done: usize,
    /// The file round robin tries next (`td->next_file`).
    next: usize,
    /// With `write_iolog`: the files found done since the log last heard, in order.
    log: Option<Vec<u16>>,
}

impl FileSet {
    /// The files of `sizes`; `log` keeps the files found done for `write_iolog`.
    pub(crate) fn new(sizes: Vec<(u64, u64)>, log: bool) -> FileSet {
        let n = sizes.len();
        FileSet { sizes, done: vec![false; n], nr_done: 0, next: 0, log: log.then(Vec::new) }
    }

    /// get_next_file_rr: the next file not done, round robin (with every
    /// file done, the next in turn: the pass is over and nothing is drawn).
    pub(crate) fn next(&mut self) -> usize {
        let n = self.sizes.len();
        loop {
            let f = self.next;
            self.next = if f + 1 == n { 0 } else { f + 1 };
            if !self.done[f] || self.nr_done == n {
                return f;
            }
        }
    }

    /// The file `next` gives next, without taking it.
    pub(crate) fn peek(&self) -> usize {
        let n = self.sizes.len();
        (0..n).map(|k| (self.next + k) % n).find(|&f| !self.done[f]).unwrap_or(self.next)
    }

    /// The number of files.
    pub(crate) fn len(&self) -> usize {
        self.sizes.len()
    }

    /// fill_io_u failed on file `f`: it is done. Whether a file is left this pass.
    pub(crate) fn file_done(&mut self, f: usize) -> bool {
        if !self.done[f] {
            self.done[f] = true;
            self.nr_done += 1;
            if let Some(log) = &mut self.log {
                log.push(f as u16);
            }
        }
        self.nr_done < self.sizes.len()
    }

    /// clear_io_state: a new pass, no file done.
    pub(crate) fn reset(&mut self) {
        self.done.iter_mut().for_each(|d| *d = false);
        self.nr_done = 0;
    }

    /// The files found done since the last call, for `write_iolog`.
    pub(crate) fn take_done_log(&mut self) -> Vec<u16> {
        self.log.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// `write_iolog`'s closes of the files job `job` found done since the
    /// log last heard, `since` its start (before whatever the log hears next).
    pub(crate) fn log_done(&mut self, log: &mut dyn crate::stats::IoLog, job: usize, since: u64) {
        for f in self.take_done_log() {
            log.file_done(job, f as usize, since);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_skips_files_done_until_the_pass_starts_again() {
        let mut fs = FileSet::new(vec![(8, 8); 3], true);
        assert_eq!((fs.next(), fs.next(), fs.next(), fs.next()), (0, 1, 2, 0));
        assert!(fs.file_done(1));
        assert_eq!((fs.next(), fs.next(), fs.next()), (2, 0, 2));
        assert!(fs.file_done(2));
        assert!(!fs.file_done(0));
        assert_eq!(fs.take_done_log(), vec![1, 2, 0]);
        // Every file done: the next in turn, nothing skipped (and no endless loop).
        assert_eq!((fs.peek(), fs.next()), (0, 0));
        fs.reset();
        assert_eq!(fs.peek(), 1);
        assert_eq!((fs.next(), fs.next()), (1, 2));
        assert!(fs.take_done_log().is_empty());
    }
}
