//! A rotational disk (state): one head serving one command at a time in
//! arrival order — a seek by distance (a square-root curve through the
//! track-to-track and average seeks, then linear to the full stroke), the
//! rotation to the first sector (the platter turns all the time: the angle
//! is a function of time), the transfer at the media rate — and a read cache
//! of segments filled by read-ahead: after a media read the head goes on
//! reading the following bytes into the cache while it has nothing else to
//! do, and a read that finds its bytes there (or on their way) is served
//! from the cache, which keeps reading ahead of it. A new media command
//! stops the read-ahead. Writes go through to the media, or (write cache
//! on) complete once cached and are destaged in order, waiting for room
//! when the cache is full of dirty data.

use std::collections::VecDeque;

use crate::machine::DiskParams;
use crate::sim::Rng;

/// A cache segment: `[start, end)` of the disk, of which the first
/// `base_bytes` were read at `base_ns`; while `filling`, the rest arrives
/// at the media rate from then on.
#[derive(Clone, Debug)]
struct Segment {
    start: u64,
    end: u64,
    base_bytes: u64,
    base_ns: u64,
    filling: bool,
    last_used_ns: u64,
}

/// What the disk did: for tests and reports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct DiskStats {
    pub cache_hits: u64,
    pub media_reads: u64,
    pub media_writes: u64,
    /// Time spent seeking and waiting for the sector to come round, ns.
    pub positioning_ns: u64,
}

#[derive(Clone)]
pub(crate) struct RotationalDisk {
    capacity: u64,
    rev_ns: u64,
    /// Bytes per revolution (the media rate over one turn).
    track_bytes: u64,
    media_mb_per_s: u64,
    seek_ns: [u64; 3],
    cache_bytes: u64,
    read_ahead_bytes: u64,
    write_cache: bool,
    /// Thin provisioned: it takes UNMAP.
    unmap: bool,
    cache_hit_ns: u64,
    latency_sigma: f64,
    rng: Rng,
    /// Where the head is (a byte offset).
    head: u64,
    /// When the head is free of the commands and destages it was given.
    media_free_ns: u64,
    /// The platter's angle at time 0, in revolutions (a fraction in ns of a turn).
    phase_ns: u64,
    segments: Vec<Segment>,
    /// Dirty data being destaged: (done, bytes), in order.
    destage: VecDeque<(u64, u64)>,
    dirty_bytes: u64,
    pub stats: DiskStats,
}

impl RotationalDisk {
    /// A disk of `p` drawing from `rng`, its platter at a random phase at time 0.
    pub(crate) fn new(p: &DiskParams, mut rng: Rng) -> RotationalDisk {
        let phase = rng.below(1 << 20) as f64 / (1u64 << 20) as f64;
        let rev_ns = 60_000_000_000 / p.rpm as u64;
        RotationalDisk {
            capacity: p.capacity_bytes,
            rev_ns,
            track_bytes: (p.media_mb_per_s * rev_ns / 1000).max(512),
            media_mb_per_s: p.media_mb_per_s,
            seek_ns: p.seek_ns,
            cache_bytes: p.cache_bytes,
            read_ahead_bytes: p.read_ahead_bytes,
            write_cache: p.write_cache,
            unmap: p.unmap,
            cache_hit_ns: p.cache_hit_ns,
            latency_sigma: p.latency_sigma,
            rng,
            head: 0,
            media_free_ns: 0,
            phase_ns: (phase.clamp(0.0, 1.0) * rev_ns as f64) as u64 % rev_ns,
            segments: Vec::new(),
            destage: VecDeque::new(),
            dirty_bytes: 0,
            stats: DiskStats::default(),
        }
    }

    /// One revolution, ns.
    #[cfg(test)]
    pub(crate) fn rev_ns(&self) -> u64 {
        self.rev_ns
    }

    /// Media time of `bytes`, ns.
    pub(crate) fn xfer_ns(&self, bytes: u64) -> u64 {
        (bytes * 1000).div_ceil(self.media_mb_per_s)
    }

    /// Seek time from `from` to `to`: none within a track; else a square-root
    /// curve from track-to-track up to the average at a third of the stroke,
    /// then linear up to the full stroke.
    pub(crate) fn seek_time(&self, from: u64, to: u64) -> u64 {
        let d = from.abs_diff(to);
        if d < self.track_bytes {
            return 0;
        }
        let f = d as f64 / self.capacity as f64;
        let [track, avg, full] = self.seek_ns.map(|x| x as f64);
        let t = if f <= 1.0 / 3.0 {
            track + (avg - track) * (3.0 * f).sqrt()
        } else {
            avg + (full - avg) * (f - 1.0 / 3.0) * 1.5
        };
        t.round() as u64
    }

    /// Wait at time `at` until byte `x` comes under the head.
    fn rotation_wait(&self, at: u64, x: u64) -> u64 {
        let target = (x % self.track_bytes) * self.rev_ns / self.track_bytes;
        let now = (at + self.phase_ns) % self.rev_ns;
        (target + self.rev_ns - now) % self.rev_ns
    }

    /// Bytes of `s` read by time `t`.
    fn filled(&self, s: &Segment, t: u64) -> u64 {
        let span = s.end - s.start;
        if !s.filling {
            return span;
        }
        let more = t.saturating_sub(s.base_ns).saturating_mul(self.media_mb_per_s) / 1000;
        (s.base_bytes + more).min(span)
    }

    /// The read-ahead (if any) stops at `t`: its segment keeps what it has, the head is where it got to.
    fn stop_read_ahead(&mut self, t: u64) {
        let Some(i) = self.segments.iter().position(|s| s.filling) else { return };
        let got = self.filled(&self.segments[i], t);
        let s = &mut self.segments[i];
        s.end = s.start + got;
        s.filling = false;
        self.head = s.end;
        if got == 0 {
            self.segments.remove(i);
        }
    }

    /// A media access of `[x, x + bytes)` from `t` on (after earlier media
    /// work): seek, rotation, transfer. Returns when it is done.
    fn media(&mut self, t: u64, x: u64, bytes: u64) -> u64 {
        let t0 = t.max(self.media_free_ns);
        self.stop_read_ahead(t0);
        let seek = self.seek_time(self.head, x);
        let rot = self.rotation_wait(t0 + seek, x);
        self.stats.positioning_ns += seek + rot;
        let done = t0 + seek + rot + self.xfer_ns(bytes);
        self.head = x + bytes;
        self.media_free_ns = done;
        done
    }

    /// A read of `[x, x + bytes)` arriving at `t`: when its data is ready.
    pub(crate) fn read(&mut self, t: u64, x: u64, bytes: u64) -> u64 {
        let y = x + bytes;
        let ra = self.read_ahead_bytes;
        let cap = self.capacity;
        if let Some(i) = self.segments.iter().position(|s| s.start <= x && y <= s.end) {
            // In the cache, or on its way into it.
            self.stats.cache_hits += 1;
            let got = self.filled(&self.segments[i], t);
            let s = &self.segments[i];
            let ready = if s.start + got >= y {
                t
            } else {
                s.base_ns + ((y - s.start - s.base_bytes) * 1000).div_ceil(self.media_mb_per_s)
            };
            let (filling, end) = (s.filling, s.end);
            let want = (y + ra).min(cap);
            if filling {
                // Keep reading ahead of the reader.
                self.segments[i].end = end.max(want);
            } else if end < want && self.head == end && self.media_free_ns <= t {
                // The head stopped at the segment's end: it reads on once the sector comes round.
                let rot = self.rotation_wait(t, end);
                let s = &mut self.segments[i];
                s.base_bytes = end - s.start;
                s.base_ns = t + rot;
                s.end = want;
                s.filling = true;
            }
            self.segments[i].last_used_ns = t;
            let hit = (self.cache_hit_ns as f64 * self.rng.lognormal_factor(self.latency_sigma)) as u64;
            return ready + hit;
        }
        self.stats.media_reads += 1;
        let done = self.media(t, x, bytes);
        // Read ahead of it from where the head is.
        let end = (y + ra).min(cap);
        self.segments.push(Segment {
            start: x,
            end,
            base_bytes: bytes,
            base_ns: done,
            filling: end > y,
            last_used_ns: t,
        });
        self.evict();
        done
    }

    /// A write of `[x, x + bytes)` arriving at `t` (its data is here): when the disk reports it done.
    pub(crate) fn write(&mut self, t: u64, x: u64, bytes: u64) -> u64 {
        let y = x + bytes;
        self.stop_read_ahead(t);
        self.segments.retain(|s| s.end <= x || s.start >= y);
        self.stats.media_writes += 1;
        if !self.write_cache {
            return self.media(t, x, bytes);
        }
        // Room in the cache: destaged writes leave it.
        let mut accept = t;
        while let Some(&(done, b)) = self.destage.front() {
            if done > accept && self.dirty_bytes + bytes <= self.cache_bytes {
                break;
            }
            accept = accept.max(done);
            self.dirty_bytes -= b;
            self.destage.pop_front();
        }
        let done = self.media(accept, x, bytes);
        self.destage.push_back((done, bytes));
        self.dirty_bytes += bytes;
        accept
    }

    /// Is it thin provisioned (does it take UNMAP)?
    pub(crate) fn unmap(&self) -> bool {
        self.unmap
    }

    /// An UNMAP of `[x, x + bytes)` that reaches the disk at `t`: the array
    /// deallocates the blocks in its mapping, with no media access (as SBC
    /// lets a thin-provisioned LUN do: an assumption, no data sheet gives
    /// UNMAP's cost), and the range's cached data goes. When its status is
    /// ready: at once.
    pub(crate) fn unmapped(&mut self, t: u64, x: u64, bytes: u64) -> u64 {
        let y = x + bytes;
        self.segments.retain(|s| s.end <= x || s.start >= y);
        t
    }

    /// Least recently used segments leave while the cache is over its size.
    fn evict(&mut self) {
        while self.segments.iter().map(|s| s.end - s.start).sum::<u64>() > self.cache_bytes && self.segments.len() > 1 {
            let (i, _) = self
                .segments
                .iter()
                .enumerate()
                .filter(|(_, s)| !s.filling)
                .min_by_key(|(_, s)| s.last_used_ns)
                .unwrap_or((0, &self.segments[0]));
            self.segments.remove(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(write_cache: bool) -> DiskParams {
        DiskParams {
            host: 0,
            port: 0,
            target: None,
            capacity_bytes: 100 << 30,
            rpm: 15000,
            media_mb_per_s: 100,
            seek_ns: [200_000, 3_400_000, 7_000_000],
            controller_ns: 0,
            cache_hit_ns: 0,
            latency_sigma: 0.0,
            cache_bytes: 8 << 20,
            read_ahead_bytes: 256 << 10,
            write_cache,
            unmap: false,
        }
    }

    #[test]
    fn seek_grows_with_distance_through_the_datasheet_points() {
        let d = RotationalDisk::new(&params(false), Rng::stream(1, "d"));
        let cap = 100u64 << 30;
        assert_eq!(d.seek_time(0, 1000), 0, "same track");
        assert!(d.seek_time(0, d.track_bytes + 1) >= 200_000);
        assert_eq!(d.seek_time(0, cap / 3), 3_400_000);
        assert_eq!(d.seek_time(0, cap), 7_000_000);
        let mut last = 0;
        for k in 1..100 {
            let t = d.seek_time(0, cap / 100 * k);
            assert!(t >= last, "monotone");
            last = t;
        }
    }

    #[test]
    fn a_random_read_costs_seek_rotation_and_transfer_and_averages_the_datasheet() {
        let mut d = RotationalDisk::new(&params(false), Rng::stream(1, "d"));
        let mut rng = crate::sim::Rng::stream(7, "t");
        let mut t = 0;
        let n = 2000;
        for _ in 0..n {
            let x = rng.below((100u64 << 30) / 4096) * 4096;
            t = d.read(t, x, 4096);
        }
        let per = t as f64 / n as f64;
        // Average seek over random pairs (a bit below the 1/3-stroke point of a concave curve),
        // half a revolution, 41 us of transfer.
        let expect = 3_400_000.0 + 2_000_000.0 + 41_000.0;
        assert!((per - expect).abs() / expect < 0.15, "{per} ns per random read, expected about {expect}");
        assert!(d.stats.cache_hits < 5, "random reads rarely land in a read-ahead: {:?}", d.stats);
    }

    #[test]
    fn sequential_reads_are_served_from_the_read_ahead_cache() {
        let mut d = RotationalDisk::new(&params(false), Rng::stream(1, "d"));
        let first = d.read(0, 0, 4096);
        assert!(first <= d.rev_ns() + 41_000, "first read: rotation + transfer ({first})");
        // A reader at 50 us between reads (slower than the media): every later read hits.
        let mut t = first;
        for i in 1..2000u64 {
            t += 50_000;
            let ready = d.read(t, i * 4096, 4096);
            assert!(ready <= t + 41_000, "read {i} waited {} ns", ready - t);
        }
        assert_eq!(d.stats.media_reads, 1, "{:?}", d.stats);
        assert_eq!(d.stats.cache_hits, 1999);
    }

    #[test]
    fn a_reader_faster_than_the_media_waits_for_the_read_ahead() {
        let mut d = RotationalDisk::new(&params(false), Rng::stream(1, "d"));
        let mut t = d.read(0, 0, 4096);
        for i in 1..1000u64 {
            t = d.read(t, i * 4096, 4096);
        }
        // 4 MB at 100 MB/s: the media rate bounds it.
        let expect = 1000.0 * 4096.0 * 1000.0 / 100.0;
        assert!((t as f64 - expect).abs() / expect < 0.15, "{t} vs {expect}");
    }

    #[test]
    fn write_through_pays_the_media_and_a_write_cache_hides_it_until_full() {
        let mut d = RotationalDisk::new(&params(false), Rng::stream(1, "d"));
        let done = d.write(0, 50 << 30, 4096);
        assert!(done > 3_000_000, "seek to the middle: {done}");
        let mut d = RotationalDisk::new(&params(true), Rng::stream(1, "d"));
        assert_eq!(d.write(0, 50 << 30, 4096), 0, "cached");
        // 8 MiB of cache, 4 KiB random writes: the cache fills, then writes wait for destages.
        let mut rng = crate::sim::Rng::stream(3, "w");
        let mut t = 0;
        for _ in 0..4000 {
            t = d.write(t, rng.below(1 << 20) * 4096, 4096);
        }
        assert!(t > 1_000 * 3_000_000, "the media bounds a full cache: {t}");
    }

    #[test]
    fn an_unmap_takes_no_media_time_and_drops_the_ranges_cached_data() {
        let mut d = RotationalDisk::new(&params(false), Rng::stream(1, "d"));
        let t = d.read(0, 0, 4096) + 50_000_000;
        // Read ahead: the next block is in the cache.
        d.read(t, 4096, 4096);
        assert_eq!((d.stats.cache_hits, d.stats.media_reads), (1, 1));
        // Unmapped at once; the cache keeps nothing of the range.
        assert_eq!(d.unmapped(t + 1, 0, 1 << 20), t + 1);
        d.read(t + 2, 8192, 4096);
        assert_eq!((d.stats.cache_hits, d.stats.media_reads), (1, 2));
    }
}
