//! Disk accounting as the block layer keeps it (`part_stat`): I/Os,
//! sectors, merges and time per direction, in-flight count, busy time.

/// Disk accounting as the block layer keeps it.
#[derive(Clone, Debug, Default)]
pub(crate) struct DiskCounters {
    pub ios: [u64; 2],
    /// Bios merged into another request (back merges in the plug).
    pub merges: [u64; 2],
    /// Discard requests completed and discard bios merged into another
    /// (diskstats' fields 12 and 13: fio shows neither).
    pub discards: u64,
    pub discard_merges: u64,
    /// Every request the device completed: reads, writes, discards and
    /// passthrough commands (which Linux's statistics leave out).
    pub requests: u64,
    pub sectors: [u64; 2],
    pub ticks_ns: [u64; 2],
    pub inflight: u32,
    pub busy_since_ns: u64,
    pub busy_ns: u64,
}
