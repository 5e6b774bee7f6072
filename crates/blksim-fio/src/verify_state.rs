//! fio's verify state files (`verify.c`: `verify_save_state`,
//! `verify_load_state`; `verify-state.h`, fio 3.42, header version 5): a
//! writing job with `verify_state_save` (the default) leaves
//! `local-NAME-N-verify.state` in the working directory when it ends (N: its
//! thread's index, from 0; a `/` in the name becomes `.`); a job with
//! `verify_state_load` reads the file of its own name and index before the
//! run, and stops verifying where the saved job's writes stopped.
//!
//! The layout, little-endian as x86-64 lays out the C structs: a header
//! (`u64` version, `u64` size of what follows, `u64` its CRC32C as fio's
//! `fio_crc32c` computes it: initial `~0`, no final inversion), then
//! `struct thread_io_list`: `u32` depth (the job's `iodepth`), 4 bytes of
//! padding, `u64` numberio (writes issued), `u64` index, the offset
//! generator's state (`u64` use64, six `u64`), the name (64 bytes, NUL
//! padded), then `depth` `u64` slots of writes in flight (`u64::MAX`: none).
//! The generator's state is the job's offset generator's at its end
//! (tausworthe's three `u32` words, or tausworthe64's five `u64`; fio reads
//! it back but does not use it to verify; for the LFSR's job, whose
//! offsets do not come from it, as seeded, as in fio).

use blksim::workload::VerifyState;

/// The header version fio 3.42 writes and reads (`VSTATE_HDR_VERSION`).
pub const VERSION: u64 = 5;
/// `sizeof(struct thread_io_list)` without its slots.
const LIST_BYTES: usize = 144;

/// The file name fio gives the state of job `name`, thread index `index` (`verify_state_gen_name`, prefix `local`).
pub fn file_name(name: &str, index: usize) -> String {
    format!("local-{}-{index}-verify.state", name.replace('/', "."))
}

/// The file's bytes for `state`, saved by job `name` of thread index `index`.
pub fn encode(state: &VerifyState, name: &str, index: usize) -> Vec<u8> {
    let mut list = Vec::with_capacity(LIST_BYTES + 8 * state.inflight.len());
    list.extend((state.inflight.len() as u32).to_le_bytes());
    list.extend([0u8; 4]);
    list.extend(state.numberio.to_le_bytes());
    list.extend((index as u64).to_le_bytes());
    // struct thread_rand_state: use64, then the union of six u64 or four u32 words.
    let (use64, words) = state.rand;
    list.extend((use64 as u64).to_le_bytes());
    let mut union = [0u8; 48];
    for (i, w) in words.iter().enumerate() {
        if use64 {
            union[8 * i..8 * i + 8].copy_from_slice(&w.to_le_bytes());
        } else if i < 3 {
            union[4 * i..4 * i + 4].copy_from_slice(&(*w as u32).to_le_bytes());
        }
    }
    list.extend(union);
    let mut n = [0u8; 64];
    // snprintf(name, 64, "%s"): at most 63 bytes and the NUL.
    let bytes = name.as_bytes();
    let len = bytes.len().min(63);
    n[..len].copy_from_slice(&bytes[..len]);
    list.extend(n);
    for slot in &state.inflight {
        list.extend(slot.to_le_bytes());
    }
    let mut out = Vec::with_capacity(24 + list.len());
    out.extend(VERSION.to_le_bytes());
    out.extend((list.len() as u64).to_le_bytes());
    out.extend((crc32c(&list) as u64).to_le_bytes());
    out.extend(list);
    out
}

/// A state file's bytes read as fio's `verify_load_state` reads them; the error says why as fio does.
pub fn decode(bytes: &[u8]) -> Result<VerifyState, String> {
    let u64_at = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
    if bytes.len() < 24 {
        return Err("failed reading verify state header".into());
    }
    let (version, size, crc) = (u64_at(bytes, 0), u64_at(bytes, 8), u64_at(bytes, 16));
    if version != VERSION {
        return Err(format!("unsupported ({version}) version in verify state header (fio 3.42 writes {VERSION})"));
    }
    let list = &bytes[24..];
    if (list.len() as u64) < size || size < LIST_BYTES as u64 {
        return Err("failed reading verify state".into());
    }
    let list = &list[..size as usize];
    if crc32c(list) as u64 != crc {
        return Err("verify state is corrupt".into());
    }
    let depth = u32::from_le_bytes(list[..4].try_into().expect("4 bytes")) as usize;
    if LIST_BYTES + 8 * depth != list.len() {
        return Err(format!("verify state is corrupt: depth {depth} does not fit its {} bytes", list.len()));
    }
    let inflight = (0..depth).map(|i| u64_at(list, LIST_BYTES + 8 * i)).collect();
    let use64 = u64_at(list, 24) != 0;
    let words = std::array::from_fn(|i| {
        if use64 {
            u64_at(list, 32 + 8 * i)
        } else if i < 3 {
            u32::from_le_bytes(list[32 + 4 * i..36 + 4 * i].try_into().expect("4 bytes")) as u64
        } else {
            0
        }
    });
    Ok(VerifyState { numberio: u64_at(list, 8), inflight, rand: (use64, words) })
}

/// fio's `crc32c_sw`: CRC-32C (Castagnoli, reflected), initial value `~0`, not inverted at the end.
fn crc32c(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0x82F6_3B78 } else { crc >> 1 };
        }
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_is_fios_crc32c_without_the_final_inversion() {
        // The check value of CRC-32C over "123456789" is 0xE3069283 (inverted at the end).
        assert_eq!(!crc32c(b"123456789"), 0xE306_9283);
    }

    #[test]
    fn a_state_reads_back_as_written_in_fios_layout() {
        let s = VerifyState { numberio: 128, inflight: vec![u64::MAX, 7, u64::MAX], rand: (false, [1, 2, 3, 0, 0]) };
        let b = encode(&s, "job/one", 2);
        assert_eq!(b.len(), 24 + 144 + 3 * 8);
        assert_eq!(&b[0..8], &5u64.to_le_bytes());
        assert_eq!(&b[8..16], &(144u64 + 24).to_le_bytes());
        assert_eq!(&b[24..28], &3u32.to_le_bytes(), "depth");
        assert_eq!(&b[32..40], &128u64.to_le_bytes(), "numberio");
        assert_eq!(&b[40..48], &2u64.to_le_bytes(), "index");
        assert_eq!(&b[104..112], b"job/one\0", "name");
        assert_eq!(decode(&b), Ok(s));
        assert_eq!(file_name("job/one", 2), "local-job.one-2-verify.state");
    }

    #[test]
    fn a_damaged_or_foreign_state_is_refused_as_fio_refuses_it() {
        let b = encode(&VerifyState { numberio: 1, inflight: vec![u64::MAX], rand: (true, [1, 2, 3, 4, 5]) }, "j", 0);
        let mut bad = b.clone();
        bad[40] ^= 1;
        assert_eq!(decode(&bad), Err("verify state is corrupt".into()));
        let mut old = b.clone();
        old[0] = 3;
        assert!(decode(&old).unwrap_err().contains("unsupported (3) version"));
        assert!(decode(&b[..30]).is_err());
    }
}
