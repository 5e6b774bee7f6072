//! A synthetic blktrace binary for the replay tests (blktrace cannot record in this sandbox).

/// A blktrace binary (`struct blk_io_trace`, little-endian, version 7) of
/// `n` queued 4 KiB I/Os `gap_us` apart, alternately read and write, each
/// issued and completed before the next: fio probes a depth of 1.
#[allow(dead_code)]
pub fn blktrace(n: u64, gap_us: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let mut push = |time_ns: u64, sector: u64, action: u32| {
        out.extend(0x6561_7407u32.to_le_bytes());
        out.extend(0u32.to_le_bytes());
        out.extend(time_ns.to_le_bytes());
        out.extend(sector.to_le_bytes());
        out.extend(4096u32.to_le_bytes());
        out.extend(action.to_le_bytes());
        out.extend(1234u32.to_le_bytes());
        out.extend((259u32 << 20 | 1).to_le_bytes());
        out.extend(0u32.to_le_bytes());
        out.extend(0u16.to_le_bytes());
        out.extend(0u16.to_le_bytes());
    };
    for i in 0..n {
        let t = 1_000_000 + i * gap_us * 1000;
        let rw: u32 = if i % 2 == 0 { 1 } else { 2 }; // BLK_TC_READ, BLK_TC_WRITE
        let sector = (i * 7919 % 2048) * 8;
        push(t, sector, 1 | (rw | 1 << 4) << 16); // queue
        push(t + 100, sector, 7 | (rw | 1 << 6) << 16); // issue
        push(t + 20_000, sector, 8 | (rw | 1 << 7) << 16); // complete
    }
    out
}
