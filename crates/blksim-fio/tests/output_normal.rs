//! fio's normal output from synthetic reports: golden text for a sync and a
//! libaio job, unit switching, percentile layout, and group_reporting.

mod output_support;

use blksim::stats::{DirStats, JobStats, RunReport};
use blksim::workload::{IoEngine, RwKind};
use blksim_fio::output::write_normal;
use output_support::*;

/// One psync randread job: 2 s, 20000 reads of 4 KiB, clat 60-90 µs with a slow tail.
fn sync_report() -> RunReport {
    let mut rng = Lcg::new(1);
    let read = dir(
        20_000,
        4096,
        |_| None,
        |i| if i % 997 == 0 { rng.range(300_000, 900_000) } else { rng.range(60_000, 90_000) },
    );
    let read = with_samples(read, 4096, &[10_000, 9_920, 10_040, 10_040]);
    let config = config("seqsync", IoEngine::Psync, RwKind::RandRead, 1);
    report(vec![job(config, [read, DirStats::default(), DirStats::default()], 2 * SEC)])
}

/// One libaio randrw job at iodepth 32: slat 1-4 µs, clat 150-900 µs.
fn libaio_report() -> RunReport {
    let mut config = config("aio", IoEngine::Libaio, RwKind::RandRw, 32);
    config.rwmixread = 70;
    let mut rng = Lcg::new(2);
    let mut latencies = |n: u64, bs: u64, per_sample: &[u64]| {
        let slats: Vec<u64> = (0..n).map(|_| rng.range(1_000, 4_000)).collect();
        let clats: Vec<u64> = (0..n).map(|_| rng.range(150_000, 900_000)).collect();
        with_samples(dir(n, bs, |i| Some(slats[i as usize]), |i| clats[i as usize]), bs, per_sample)
    };
    let read = latencies(70_000, 4096, &[34_800, 35_200, 35_000, 35_000]);
    let write = latencies(30_000, 4096, &[14_800, 15_200, 15_000, 15_000]);
    let mut job = job(config, [read, write, DirStats::default()], 2 * SEC);
    job.iodepth_submit = [0, 100_000, 0, 0, 0, 0, 0];
    job.iodepth_complete = [0, 60_000, 30_000, 10_000, 0, 0, 0];
    report(vec![job])
}

fn lines_of(text: &str) -> Vec<&str> {
    text.lines().collect()
}

/// The report with one job whose read clat samples are `clats`.
fn clat_report(clats: &[u64]) -> RunReport {
    let read = dir(clats.len() as u64, 4096, |_| None, |i| clats[i as usize]);
    let config = config("units", IoEngine::Psync, RwKind::Read, 1);
    report(vec![job(config, [read, DirStats::default(), DirStats::default()], SEC)])
}

fn clat_line(clats: &[u64]) -> String {
    let report = clat_report(clats);
    let out = write_normal(&report, &job_file(&report, &[]));
    out.lines().find(|l| l.starts_with("    clat (")).expect("a clat line").to_string()
}

#[track_caller]
fn assert_starts(line: &str, prefix: &str) {
    assert!(line.starts_with(prefix), "{line:?} should start with {prefix:?}");
}

fn two_jobs(group_reporting: bool) -> RunReport {
    let mut jobs: Vec<JobStats> = Vec::new();
    for (k, runtime, iops) in [(0u64, 2 * SEC, 5_000), (1, 3 * SEC / 2, 6_667)] {
        let mut c = config("grp", IoEngine::Libaio, RwKind::RandRead, 16);
        c.group_reporting = group_reporting;
        let base = 100_000 * (k + 1);
        let read = dir(10_000, 4096, |_| Some(2_000), |i| base + i);
        jobs.push(job(c, [with_samples(read, 4096, &[iops, iops]), DirStats::default(), DirStats::default()], runtime));
    }
    report(jobs)
}

mod normal_output {
    use super::*;

    #[test]
    fn sync_job_matches_golden() {
        let report = sync_report();
        check_golden("normal_sync.txt", &write_normal(&report, &job_file(&report, &[])));
    }

    #[test]
    fn libaio_job_matches_golden() {
        let report = libaio_report();
        check_golden("normal_libaio.txt", &write_normal(&report, &job_file(&report, &[])));
    }

    #[test]
    fn sync_job_has_fio_structure_line_by_line() {
        let report = sync_report();
        let out = write_normal(&report, &job_file(&report, &[]));
        let prefixes = [
            "seqsync: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=psync, iodepth=1",
            "blksim-0.1.0 (fio-3.42 compatible)",
            "Starting 1 process",
            "",
            "seqsync: (groupid=0, jobs=1): err= 0: pid=1001: Thu Jan  1 00:00:02 1970",
            "  read: IOPS=10.0k, BW=39.1MiB/s (41.0MB/s)(78.1MiB/2000msec)",
            "    clat (usec): min=",
            "     lat (usec): min=",
            "    clat percentiles (usec):",
            "     |  1.00th=[",
            "     | 30.00th=[",
            "     | 70.00th=[",
            "     | 99.00th=[",
            "     | 99.99th=[",
            "   bw (  KiB/s): min=39680, max=40160, per=100.00%, avg=40000.00, stdev=226.27, samples=4",
            "   iops        : min= 9920, max=10040, avg=10000.00, stdev=56.57, samples=4",
            "  lat (usec)   : 100=",
            "  cpu          : usr=2.00%, sys=40.00%, ctx=6666, majf=0, minf=0",
            "  IO depths    : 1=100.0%, 2=0.0%, 4=0.0%, 8=0.0%, 16=0.0%, 32=0.0%, >=64=0.0%",
            "     submit    : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%",
            "     complete  : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.0%, 32=0.0%, 64=0.0%, >=64=0.0%",
            "     issued rwts: total=20000,0,0,0 short=0,0,0,0 dropped=0,0,0,0",
            "     latency   : target=0.00ns, window=0.00ns, percentile=100.00%, depth=1",
            "",
            "Run status group 0 (all jobs):",
            "   READ: bw=39.1MiB/s (41.0MB/s), 39.1MiB/s-39.1MiB/s (41.0MB/s-41.0MB/s), io=78.1MiB (81.9MB), run=2000-2000msec",
            "",
            "Disk stats (read/write):",
            "  nvme0n1: ios=20000/0, sectors=160000/0, merge=0/0, ticks=1400/0, in_queue=1400, util=70.00%",
        ];
        let lines = lines_of(&out);
        assert_eq!(lines.len(), prefixes.len(), "{out}");
        for (line, prefix) in lines.iter().zip(prefixes) {
            assert!(line.starts_with(prefix), "{line:?} should start with {prefix:?}\n{out}");
        }
    }

    #[test]
    fn sync_engine_prints_no_slat_but_libaio_does() {
        let sync = sync_report();
        assert!(!write_normal(&sync, &job_file(&sync, &[])).contains("slat"));
        let aio = libaio_report();
        let out = write_normal(&aio, &job_file(&aio, &[]));
        assert_eq!(out.matches("    slat (nsec): min=").count(), 2, "{out}");
    }

    #[test]
    fn a_direction_without_io_is_not_printed() {
        let report = sync_report();
        let out = write_normal(&report, &job_file(&report, &[]));
        assert!(out.contains("  read: IOPS="));
        assert!(!out.contains("  write: IOPS="));
        assert!(!out.contains("  WRITE: bw="));
    }

    #[test]
    fn gtod_reduce_suppresses_latency_lines() {
        let mut report = libaio_report();
        report.jobs[0].config.gtod_reduce = true;
        report.jobs[0].config.clat_percentiles = false;
        let out = write_normal(&report, &job_file(&report, &[]));
        for absent in ["slat (", "clat (", " lat (", "percentiles", "  lat (usec)"] {
            assert!(!out.contains(absent), "{absent:?} in\n{out}");
        }
        assert!(out.contains("  read: IOPS="));
        assert!(out.contains("   bw (  KiB/s)"), "bandwidth samples are still shown");
    }

    #[test]
    fn bw_and_iops_lines_need_samples() {
        let mut report = sync_report();
        report.jobs[0].dirs[0].bw_samples.clear();
        report.jobs[0].dirs[0].iops_samples.clear();
        let out = write_normal(&report, &job_file(&report, &[]));
        assert!(!out.contains("   bw ("));
        assert!(!out.contains("   iops        :"));
    }

    #[test]
    fn latency_units_switch_at_fio_thresholds() {
        // usec needs min > 2000, max > 99999 and stddev > 1000 ns.
        assert_starts(&clat_line(&[2001, 100_000]), "    clat (usec): min=2, max=100, avg=51.00, stdev=69.30");
        assert_starts(&clat_line(&[2000, 100_000]), "    clat (nsec): min=2000, max=100000,");
        assert_starts(&clat_line(&[2001, 99_999]), "    clat (nsec): min=2001, max=99999,");
        let mut tight = vec![100_000; 100_000];
        tight.push(2001);
        assert_starts(&clat_line(&tight), "    clat (nsec): min=2001, max=100000,");
        // msec needs min > 2e6, max > 99999999 and stddev > 1e6 ns.
        assert_starts(&clat_line(&[2_000_001, 100_000_000]), "    clat (msec): min=2, max=100,");
        assert_starts(&clat_line(&[2_000_000, 100_000_000]), "    clat (usec): min=2000, max=100000,");
    }

    #[test]
    fn percentile_block_unit_and_layout() {
        let text = |clats: &[u64]| {
            let report = clat_report(clats);
            write_normal(&report, &job_file(&report, &[]))
        };
        let evenly = |lo: u64, hi: u64| (0..1000).map(|i| lo + (hi - lo) * i / 999).collect::<Vec<u64>>();
        let usec = text(&evenly(3_000, 200_000));
        assert!(usec.contains("    clat percentiles (usec):\n     |  1.00th=[    5],  5.00th=[   13], 10.00th=[   23], 20.00th=[   43],\n"), "{usec}");
        assert!(usec.contains("     | 99.99th=[  200]\n"), "{usec}");
        assert!(text(&evenly(100, 200_000)).contains("    clat percentiles (nsec):\n"));
        assert!(text(&evenly(2_500_000, 150_000_000)).contains("    clat percentiles (msec):\n"));

        // Three decimals and 6-digit nsec values: (80 - 7) / (3 + 10 + 6) = 3 per line.
        let mut report = clat_report(&evenly(100, 900_000));
        report.jobs[0].config.percentile_list = vec![0.1, 50.0, 99.0, 99.9, 99.999];
        let out = write_normal(&report, &job_file(&report, &[]));
        let block: Vec<&str> = out.lines().skip_while(|l| !l.contains("percentiles")).take(3).collect();
        assert_eq!(block[0], "    clat percentiles (nsec):", "{out}");
        assert_eq!(block[1], "     |  0.100th=[   100], 50.000th=[448512], 99.000th=[888832],", "{out}");
        assert_eq!(block[2], "     | 99.900th=[897024], 99.999th=[897024]");
    }

    #[test]
    fn group_reporting_merges_a_group_into_one_block() {
        let report = two_jobs(true);
        let out = write_normal(&report, &job_file(&report, &[]));
        assert_eq!(out.matches("(groupid=0, jobs=").count(), 1, "{out}");
        assert!(out.contains("grp: (groupid=0, jobs=2): err= 0: pid=1001:"));
        // 20000 I/Os over the longer run time (2000 ms).
        assert!(out.contains("  read: IOPS=10.0k, BW=39.1MiB/s (41.0MB/s)(78.1MiB/2000msec)\n"), "{out}");
        // Latencies merged: min of the first job, max of the second.
        assert!(out.contains("    clat (usec): min=100, max=209, avg=155.00, stdev=50.08"), "{out}");
        // Bandwidth samples are added up (fio's pure sum): 20000 + 26668 KiB/s,
        // which is more than the group's aggregate, so per= is capped at 100%.
        assert!(
            out.contains("   bw (  KiB/s): min=46668, max=46668, per=100.00%, avg=46668.00, stdev= 0.00, samples=4\n"),
            "{out}"
        );
        assert!(out.contains("     issued rwts: total=20000,0,0,0"));
        assert!(out.contains("  cpu          : usr=2.00%, sys=40.00%, ctx=6666,"), "{out}");
        assert!(out.contains("   READ: bw=39.1MiB/s (41.0MB/s), 39.1MiB/s-39.1MiB/s (41.0MB/s-41.0MB/s), io=78.1MiB (81.9MB), run=2000-2000msec\n"), "{out}");
        assert!(out.starts_with("grp: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=libaio, iodepth=16\n...\n"), "{out}");
        assert!(out.contains("\nStarting 2 processes\n"));
    }

    #[test]
    fn without_group_reporting_each_job_has_its_block() {
        let report = two_jobs(false);
        let out = write_normal(&report, &job_file(&report, &[]));
        assert_eq!(out.matches("grp: (groupid=0, jobs=1)").count(), 2, "{out}");
        assert!(out.contains("pid=1001:") && out.contains("pid=1002:"));
        // Group line: total bandwidth over the longest run, per-job bandwidth range, run time range.
        assert!(out.contains("   READ: bw=39.1MiB/s (41.0MB/s), 19.5MiB/s-26.0MiB/s (20.5MB/s-27.3MB/s), io=78.1MiB (81.9MB), run=1500-2000msec\n"), "{out}");
    }

    #[test]
    fn threads_are_counted_as_threads() {
        let mut report = two_jobs(false);
        report.jobs[0].config.thread = true;
        let out = write_normal(&report, &job_file(&report, &[]));
        assert!(out.contains("\nStarting 1 thread and 1 process\n"), "{out}");
        report.jobs[1].config.thread = true;
        let out = write_normal(&report, &job_file(&report, &[]));
        assert!(out.contains("\nStarting 2 threads\n"), "{out}");
    }
}
