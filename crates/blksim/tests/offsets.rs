//! Where a job's I/Os land (fio's get_next_offset), run through the whole
//! model: `rw=randread:N` (a random offset every N I/Os, sequential in
//! between), `blockalign`, holes, and one sequential stream per direction.

mod common;

use blksim::workload::{IoEngine, JobConfig, RwKind};
use common::{job, run_checked, small_machine};

/// Each direction's offsets (read, write), in the order the job issued them.
fn offsets(j: JobConfig) -> [Vec<u64>; 2] {
    let mut j = j;
    j.record_ios = true;
    let r = run_checked(&small_machine(2), &Default::default(), &[j], 1).0;
    [0, 1].map(|d| {
        let mut ios = r.jobs[0].dirs[d].ios.clone();
        ios.sort_by_key(|io| io.start_ns);
        ios.iter().map(|io| io.offset).collect()
    })
}

fn libaio(rw: RwKind, bs: u64) -> JobConfig {
    let mut j = job("o", IoEngine::Libaio, rw, bs, 1, "nvme0n1", 10);
    j.size = Some(64 << 20);
    j
}

#[test]
fn a_random_offset_every_n_ios_and_sequential_in_between() {
    let mut j = libaio(RwKind::RandRead, 4096);
    j.ddir_seq_nr = 4;
    let [reads, _] = offsets(j);
    assert!(reads.len() > 40, "{} I/Os", reads.len());
    for (i, w) in reads.windows(2).enumerate() {
        // I/Os 1, 5, 9, ... draw; the three after each follow on.
        if (i + 1) % 4 != 0 {
            assert_eq!(w[1], w[0] + 4096, "I/O {} follows I/O {i}", i + 1);
        }
    }
    let jumps = reads.windows(2).filter(|w| w[1] != w[0] + 4096).count();
    assert!(jumps * 4 >= reads.len() - 8, "{jumps} random draws in {} I/Os", reads.len());
}

#[test]
fn blockalign_aligns_random_offsets_to_it_not_to_bs() {
    let mut j = libaio(RwKind::RandRead, 8192);
    j.ba = [512; 3];
    let [reads, _] = offsets(j.clone());
    assert!(reads.iter().all(|o| o % 512 == 0 && o + 8192 <= 64 << 20));
    assert!(reads.iter().any(|o| o % 8192 != 0), "some offsets are not 8k-aligned");
    j.ba = [0; 3];
    let [reads, _] = offsets(j);
    assert!(reads.iter().all(|o| o % 8192 == 0));
}

#[test]
fn holes_and_backwards_reads() {
    let mut j = libaio(RwKind::Read, 4096);
    j.ddir_seq_add = 8192;
    let [reads, _] = offsets(j.clone());
    assert_eq!(reads[..4], [0, 12288, 24576, 36864]);
    j.ddir_seq_add = -8192;
    let [reads, _] = offsets(j);
    let end = 64 << 20;
    assert_eq!(reads[..4], [0, end - 8192, end - 12288, end - 16384]);
}

#[test]
fn reads_and_writes_of_a_sequential_mixed_job_are_two_streams() {
    let [reads, writes] = offsets(libaio(RwKind::ReadWrite, 4096));
    assert!(reads.len() > 10 && writes.len() > 10);
    for stream in [reads, writes] {
        assert!(stream.iter().enumerate().all(|(i, &o)| o == i as u64 * 4096), "{stream:?}");
    }
}

#[test]
fn a_zoned_distribution_sends_its_share_of_the_ios_to_each_zone() {
    use blksim::workload::{RandomDistribution, Zone};
    let mut j = libaio(RwKind::RandRead, 4096);
    j.iodepth = 16;
    let zones = vec![Zone { access_perc: 50, size_perc: 5, size: 0 }, Zone { access_perc: 50, size_perc: 95, size: 0 }];
    j.random_distribution = RandomDistribution::Zoned { absolute: false, zones: [zones.clone(), zones.clone(), zones] };
    let [reads, _] = offsets(j);
    let first = reads.iter().filter(|&&o| o < (64 << 20) / 20).count() as f64 / reads.len() as f64;
    assert!(reads.len() > 1000 && (0.45..0.55).contains(&first), "{first} of {} I/Os in the first 5%", reads.len());
}

/// The I/Os of a random job of `size` bytes (sorted by offset), with or without the random map.
fn random_pass(size: u64, bs: u64, bssplit: bool, norandommap: bool) -> Vec<(u64, u32)> {
    let mut j = libaio(RwKind::RandRead, bs);
    j.ioengine = IoEngine::Null;
    j.runtime_ns = None;
    j.time_based = false;
    j.size = Some(size);
    j.norandommap = norandommap;
    if bssplit {
        j.bssplit[0] =
            vec![blksim::workload::BsSplit { bs: 4096, perc: 30 }, blksim::workload::BsSplit { bs: 65536, perc: 70 }];
    }
    j.record_ios = true;
    let r = run_checked(&small_machine(2), &Default::default(), &[j], 1).0;
    let mut ios: Vec<(u64, u32)> = r.jobs[0].dirs[0].ios.iter().map(|io| (io.offset, io.bytes)).collect();
    ios.sort_unstable();
    ios
}

#[test]
fn the_random_map_does_every_block_once_and_norandommap_repeats_some() {
    // fio's t0020: 1 MiB of 4 KiB random reads touch all 256 blocks.
    let ios = random_pass(1 << 20, 4096, false, false);
    let blocks: Vec<u64> = ios.iter().map(|io| io.0 / 4096).collect();
    assert_eq!(blocks, (0..256).collect::<Vec<_>>());
    // Without the map, draws repeat: about 1/e of the blocks are missed.
    let ios = random_pass(1 << 20, 4096, false, true);
    let mut blocks: Vec<u64> = ios.iter().map(|io| io.0 / 4096).collect();
    blocks.dedup();
    assert_eq!(ios.len(), 256);
    assert!((140..200).contains(&blocks.len()), "{} distinct blocks", blocks.len());
}

#[test]
fn the_random_map_cuts_an_io_short_at_a_done_block_as_fio_does() {
    // bssplit 4k/64k over 16 MiB: a 64k I/O that runs into a block already
    // done ends there (mark_random_map), so the pass covers every byte once.
    let ios = random_pass(16 << 20, 4096, true, false);
    for w in ios.windows(2) {
        assert!(w[0].0 + w[0].1 as u64 <= w[1].0, "{w:?} overlap");
    }
    let bytes: u64 = ios.iter().map(|io| io.1 as u64).sum();
    assert_eq!(bytes, 16 << 20);
    assert!(ios.iter().any(|io| io.1 != 4096 && io.1 != 65536), "some I/Os were cut");
    assert!(ios.iter().all(|io| io.1 % 4096 == 0));
}

#[test]
fn bsrange_sizes_are_drawn_as_get_next_buflen_draws_them() {
    // bsrange=4k-16k: 4k + 16k x U, aligned down to 4k, at most 16k: a
    // quarter each of 4k, 8k, 12k and 16k (fio 3.33 with norandommap, 16 MiB:
    // 468 / 411 / 397 / 404 I/Os); with the random map, I/Os cut at done
    // blocks shift it to the small sizes (fio: 846 / 550 / 374 / 257).
    let sizes = |norandommap: bool| {
        let mut j = libaio(RwKind::RandRead, 4096);
        j.ioengine = IoEngine::Null;
        j.runtime_ns = None;
        j.time_based = false;
        j.size = Some(16 << 20);
        j.bs_max[0] = 16384;
        j.norandommap = norandommap;
        j.record_ios = true;
        let r = run_checked(&small_machine(2), &Default::default(), &[j], 1).0;
        let d = &r.jobs[0].dirs[0];
        // Until the bytes reach size: the last I/O may pass it without the map (fio: 16,388 KiB).
        assert!((16 << 20..(16 << 20) + 16384).contains(&d.io_bytes), "{}", d.io_bytes);
        [4096, 8192, 12288, 16384].map(|b| d.ios.iter().filter(|io| io.bytes == b).count())
    };
    let flat = sizes(true);
    let n: usize = flat.iter().sum();
    assert!(flat.iter().all(|&c| c * 100 > n * 20 && c * 100 < n * 30), "{flat:?}");
    let mapped = sizes(false);
    assert!(mapped[0] > mapped[1] && mapped[1] > mapped[2] && mapped[2] > mapped[3], "{mapped:?}");
}
