//! A PCIe link (state): full duplex, each direction carrying one transfer
//! at a time at the link's payload bandwidth. A drive's own x4 link and a
//! switch's upstream link shared by the drives behind it are both `Link`s;
//! a transfer crossing both is cut through: it ends when the slower of the
//! two has carried it.

/// A direction on a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LinkDir {
    /// Device to host: read data, completion writes.
    Upstream = 0,
    /// Host to device: write data.
    Downstream = 1,
}

/// One PCIe link.
#[derive(Clone, Debug)]
pub(crate) struct Link {
    /// Payload bandwidth per direction, MB/s (10^6 bytes per second).
    mb_per_s: u64,
    /// When each direction is next free.
    free_ns: [u64; 2],
    /// Busy time per direction, ns.
    pub busy_ns: [u64; 2],
    /// (bytes, ns) of the last size asked: sizes repeat, divisions cost.
    memo: (u64, u64),
}

impl Link {
    pub(crate) fn new(mb_per_s: u64) -> Link {
        Link { mb_per_s, free_ns: [0; 2], busy_ns: [0; 2], memo: (0, 0) }
    }

    /// Time for `bytes` to cross the link.
    pub(crate) fn xfer_ns(&mut self, bytes: u64) -> u64 {
        if self.memo.0 != bytes {
            self.memo = (bytes, bytes * 1000 / self.mb_per_s);
        }
        self.memo.1
    }

    /// A transfer of `bytes` that can start at `ready_ns`: when it ends,
    /// after the transfers already on this direction.
    pub(crate) fn transfer(&mut self, dir: LinkDir, ready_ns: u64, bytes: u64) -> u64 {
        let x = self.xfer_ns(bytes);
        let done = ready_ns.max(self.free_ns[dir as usize]) + x;
        self.free_ns[dir as usize] = done;
        self.busy_ns[dir as usize] += x;
        done
    }

    /// A transfer that would end at `done_ns` on a faster link before this
    /// one (cut-through): when it ends having crossed this one too.
    pub(crate) fn cut_through(&mut self, dir: LinkDir, done_ns: u64, bytes: u64) -> u64 {
        let x = self.xfer_ns(bytes);
        let done = done_ns.max(self.free_ns[dir as usize] + x);
        self.free_ns[dir as usize] = done;
        self.busy_ns[dir as usize] += x;
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_direction_carries_one_transfer_at_a_time() {
        let mut l = Link::new(4096); // 4096 B take 1000 ns
        assert_eq!(l.transfer(LinkDir::Upstream, 0, 4096), 1000);
        assert_eq!(l.transfer(LinkDir::Upstream, 0, 4096), 2000);
        // The other direction is free: full duplex.
        assert_eq!(l.transfer(LinkDir::Downstream, 0, 4096), 1000);
        assert_eq!(l.busy_ns, [2000, 1000]);
    }

    #[test]
    fn a_shared_upstream_link_caps_the_drives_behind_it() {
        // Four drives at 4096 MB/s each behind one 8192 MB/s upstream link:
        // together they move 8192 MB/s, not 16384.
        let mut drives: Vec<Link> = (0..4).map(|_| Link::new(4096)).collect();
        let mut up = Link::new(8192);
        let mut last = 0;
        for _ in 0..100 {
            for d in drives.iter_mut() {
                let own = d.transfer(LinkDir::Upstream, 0, 4096);
                last = last.max(up.cut_through(LinkDir::Upstream, own, 4096));
            }
        }
        // The first transfer leaves its drive's link at 1000 ns; then 399
        // more of 500 ns each follow back to back on the upstream link.
        assert_eq!(last, 1000 + 399 * 500);
    }

    #[test]
    fn cut_through_costs_nothing_on_an_idle_faster_link() {
        let mut up = Link::new(1_000_000);
        assert_eq!(up.cut_through(LinkDir::Upstream, 5000, 4096), 5000);
    }
}
