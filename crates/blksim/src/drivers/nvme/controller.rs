//! The NVMe device (state): command fetch after a doorbell, a controller that
//! processes commands in order (a per-command overhead plus the command's
//! data at the drive's bandwidth, both from its data sheet), media units
//! serving in parallel with a log-normal service time per size and
//! direction, the PCIe link (and a switch's shared upstream link), then the
//! CQE; its interrupt generation is `interrupt.rs`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::interrupt::InterruptGen;
use crate::hw::pcie::{Link, LinkDir};
use crate::machine::NvmeParams;
use crate::sim::Rng;
use crate::workload::Direction;

#[derive(Clone)]
pub(crate) struct NvmeState {
    pub params: NvmeParams,
    /// When the controller is next free.
    pub ctrl_free_ns: u64,
    /// Free times of the media units (min-heap).
    pub units: BinaryHeap<Reverse<u64>>,
    /// Its own PCIe link.
    pub link: Link,
    pub rng: Rng,
    /// (bytes, controller time [read, write]) of the last command size: sizes repeat, divisions cost.
    ctrl_memo: (u64, [u64; 2]),
    /// When each interrupt vector is signalled.
    pub irq: InterruptGen,
}

impl NvmeState {
    pub(crate) fn new(params: NvmeParams, rng: Rng) -> NvmeState {
        let units = (0..params.media_units).map(|_| Reverse(0)).collect();
        let link = Link::new(params.link_mb_per_s);
        NvmeState { params, ctrl_free_ns: 0, units, link, rng, ctrl_memo: (0, [0; 2]), irq: InterruptGen::default() }
    }

    /// The controller's time for a command of `bytes`, direction `d`.
    fn ctrl_ns(&mut self, d: usize, bytes: u64) -> u64 {
        if self.ctrl_memo.0 != bytes {
            let p = &self.params;
            let t = |d: usize| p.command_ns[d] + bytes * 1000 / p.drive_mb_per_s[d];
            self.ctrl_memo = (bytes, [t(0), t(1)]);
        }
        self.ctrl_memo.1[d]
    }

    /// When the CQE of a command whose doorbell rang at `now` is written;
    /// a write's data crosses `upstream` (a switch's shared link) too.
    pub(crate) fn service(&mut self, now: u64, dir: Direction, bytes: u64, upstream: Option<&mut Link>) -> u64 {
        debug_assert!(dir != Direction::Trim, "a trim is deallocate's");
        let d = if dir == Direction::Read { 0 } else { 1 };
        let ctrl_ns = self.ctrl_ns(d, bytes);
        let p = &self.params;
        let fetched = now + p.fetch_ns;
        let ctrl_start = fetched.max(self.ctrl_free_ns);
        // The controller takes commands one at a time: its per-command
        // work, then the command's data through its own data path.
        self.ctrl_free_ns = ctrl_start + ctrl_ns;
        let extra_kib = (bytes / 1024).saturating_sub(4);
        let base = p.latency_ns[d] + extra_kib * p.ns_per_kib[d];
        let media_ns = (base as f64 * self.rng.lognormal_factor(p.latency_sigma)) as u64;
        // Read: media, then the data goes up the link when the CQE is sent
        // (`read_link_done`: the link is shared in the order reads leave the
        // media). Write: the data comes down the link(s) first, then media.
        let ready = if d == 0 {
            self.ctrl_free_ns
        } else {
            let arrived = self.link.transfer(LinkDir::Downstream, self.ctrl_free_ns, bytes);
            upstream.map_or(arrived, |up| up.cut_through(LinkDir::Downstream, arrived, bytes))
        };
        // The earliest-free media unit takes the command (its free time is
        // replaced in place: one sift instead of a pop and a push).
        let mut unit = self.units.peek_mut().expect("media unit");
        let media_done = ready.max(unit.0) + media_ns;
        *unit = Reverse(media_done);
        media_done
    }

    /// Dataset Management with Deallocate (a trim, or several merged in
    /// the plug) of `ranges` ranges whose doorbell rang at `now`: the
    /// controller takes it in turn and updates its mapping for each range,
    /// at a write command's overhead per range (no data sheet gives a
    /// Deallocate rate: an assumption, said in docs/model.md, under which
    /// merging trims saves the host's work and not the device's); its range
    /// list (16 bytes a range) is the only data and no media unit works on
    /// it (the NVMe base specification lets a controller deallocate without
    /// media access). When its CQE is written.
    pub(crate) fn deallocate(&mut self, now: u64, ranges: u32) -> u64 {
        let p = &self.params;
        let start = (now + p.fetch_ns).max(self.ctrl_free_ns);
        self.ctrl_free_ns = start + ranges as u64 * p.command_ns[1];
        self.ctrl_free_ns
    }

    /// A read whose media work ended at `now`: when its data has crossed
    /// the link (and `upstream`, a switch's shared link), after the reads
    /// ahead of it.
    pub(crate) fn read_link_done(&mut self, now: u64, bytes: u64, upstream: Option<&mut Link>) -> u64 {
        let done = self.link.transfer(LinkDir::Upstream, now, bytes);
        match upstream {
            Some(up) => up.cut_through(LinkDir::Upstream, done, bytes),
            None => done,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> NvmeParams {
        NvmeParams {
            capacity_bytes: 1 << 40,
            max_queues: 8,
            max_queue_entries: 1024,
            command_ns: [1000, 10_000],
            drive_mb_per_s: [1_000_000, 1_000_000],
            media_units: 4,
            latency_ns: [50_000, 10_000],
            ns_per_kib: [0, 0],
            latency_sigma: 0.0,
            fetch_ns: 500,
            link_mb_per_s: 4096,
            root_port: 0,
            pcie_switch: None,
            volatile_write_cache: Some(false),
        }
    }

    #[test]
    fn qd1_read_takes_fetch_controller_media_and_transfer() {
        let mut n = NvmeState::new(params(), Rng::stream(1, "t"));
        let media_done = n.service(0, Direction::Read, 4096, None);
        // Fetch, the controller's command work and its data path, media.
        assert_eq!(media_done, 500 + 1000 + 4 + 50_000);
        // Then the data crosses the 4096 MB/s link.
        assert_eq!(n.read_link_done(media_done, 4096, None), media_done + 1000);
    }

    #[test]
    fn a_slow_read_does_not_hold_up_the_link_for_faster_ones() {
        let mut p = params();
        p.latency_sigma = 0.5;
        let mut n = NvmeState::new(p, Rng::stream(1, "t"));
        let done: Vec<u64> = (0..4).map(|_| n.service(0, Direction::Read, 4096, None)).collect();
        // Claiming the link in media-completion order keeps each read's own time.
        let mut order: Vec<u64> = done.clone();
        order.sort();
        for t in order {
            assert_eq!(n.read_link_done(t, 4096, None), t + 1000);
        }
    }

    #[test]
    fn media_units_bound_parallelism() {
        let mut n = NvmeState::new(params(), Rng::stream(1, "t"));
        let done: Vec<u64> = (0..8).map(|_| n.service(0, Direction::Read, 4096, None)).collect();
        // The fifth command waits for the first unit to free.
        assert!(done[4] >= done[0] + 50_000, "{done:?}");
    }

    #[test]
    fn controller_caps_iops() {
        let mut p = params();
        p.media_units = 10_000;
        let mut n = NvmeState::new(p, Rng::stream(1, "t"));
        let last = (0..100_000).map(|_| n.service(0, Direction::Read, 512, None)).max().unwrap();
        // 100k commands at 1000 ns of command work each take at least 0.1 s.
        assert!(last >= 100_000_000, "{last}");
    }

    #[test]
    fn the_drives_bandwidth_caps_large_block_iops() {
        let mut p = params();
        p.media_units = 10_000;
        p.drive_mb_per_s = [2048, 2048];
        p.link_mb_per_s = 1_000_000;
        let mut n = NvmeState::new(p, Rng::stream(1, "t"));
        // 128 KiB at 2048 MB/s: 64 us per command besides its 1 us of command
        // work, so 1000 reads take 65 ms however fast the link.
        let last = (0..1000).map(|_| n.service(0, Direction::Read, 128 << 10, None)).max().unwrap();
        assert!((65_000_000..65_100_000 + 50_000).contains(&last), "{last}");
        // 4 KiB reads stay bound by the command work (1 us + 2 us of data).
        let mut n = NvmeState::new(n.params.clone(), Rng::stream(1, "t"));
        let last = (0..1000).map(|_| n.service(0, Direction::Read, 4096, None)).max().unwrap();
        assert!(last < 3_100_000 + 50_500, "{last}");
    }

    #[test]
    fn drives_behind_one_switch_share_its_upstream_link() {
        let mut p = params();
        p.media_units = 10_000;
        p.link_mb_per_s = 4096;
        let mut up = Link::new(4096);
        let mut drives: Vec<NvmeState> = (0..2).map(|i| NvmeState::new(p.clone(), Rng::stream(i, "t"))).collect();
        let mut last = 0;
        for _ in 0..100 {
            for d in drives.iter_mut() {
                let media = d.service(0, Direction::Read, 4096, None);
                last = last.max(d.read_link_done(media, 4096, Some(&mut up)));
            }
        }
        // 200 reads of 1000 ns each on the shared link, after the first media time.
        assert!(last >= 200 * 1000 + 50_000, "{last}");
        // Writes share its other direction and do not wait for the reads.
        let w = drives[0].service(0, Direction::Write, 4096, Some(&mut up));
        assert!(w < 200 * 1000, "{w}");
    }
}
