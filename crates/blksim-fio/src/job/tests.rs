//! Unit tests of whole-file parsing: inheritance, clones, groups and phases,
//! CPU split, engines, substitution, include and the error messages.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use blksim::workload::{IoEngine, IoUringOptions, JobConfig, RwKind};

use super::options::{Decision, Field, Kind, GENERAL, IO_URING, LIBAIO, PVSYNC2};
use super::settings::{parse_kind, Settings};
use super::*;

fn ctx() -> ParseContext {
    let env = BTreeMap::from([("RW".to_string(), "randwrite".to_string())]);
    ParseContext {
        ncpus: 8,
        mb_memory: 16384,
        pagesize: 4096,
        env,
        numa_nodes: vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]],
        sections: Vec::new(),
        read_only: false,
        device_bytes: BTreeMap::new(),
    }
}

fn parse(text: &str) -> JobFile {
    parse_job_text(text, Path::new("t.fio"), &ctx()).unwrap_or_else(|e| panic!("{e}"))
}

fn configs(text: &str) -> Vec<JobConfig> {
    parse(text).jobs.into_iter().map(|j| j.config).collect()
}

fn error(text: &str) -> InputError {
    parse_job_text(text, Path::new("t.fio"), &ctx()).expect_err("should be rejected")
}

/// The error's line and that its message contains each of `parts`.
fn assert_error(text: &str, line: usize, parts: &[&str]) {
    let e = error(text);
    assert_eq!(e.line, line, "{e}");
    assert_eq!(e.file, PathBuf::from("t.fio"));
    for p in parts {
        assert!(e.message.contains(p), "'{}' lacks '{p}'", e.message);
    }
}

#[test]
fn defaults_match_job_config_new() {
    let c = &configs("[job]\n")[0];
    assert_eq!(*c, JobConfig::new("job"));
}

#[test]
fn jobs_copy_the_template_as_it_stands() {
    let c = configs("[global]\nbs=8k\n[a]\n[global]\niodepth=4\n[b]\nbs=16k\n[c]\n");
    assert_eq!((c[0].bs[0], c[0].iodepth), (8192, 1));
    assert_eq!((c[1].bs[0], c[1].iodepth), (16384, 4));
    assert_eq!((c[2].bs[0], c[2].iodepth), (8192, 4), "a job's own options do not leak into the template");
}

#[test]
fn any_section_starting_with_global_is_global() {
    let f = parse("[global-x]\nbs=8k\n[job]\n");
    assert_eq!(f.jobs.len(), 1);
    assert_eq!(f.jobs[0].config.bs, [8192; 3]);
    assert_eq!(f.global_options, [("bs".to_string(), "8k".to_string())]);
}

#[test]
fn options_are_recorded_with_fio_names_and_substituted_values() {
    let f = parse("[global]\nreadwrite=randread\n[job]\nblocksize = 8k\ntime_based\nruntime=${NOPE}5\nrw=${RW}\n");
    assert_eq!(f.global_options, [("rw".to_string(), "randread".to_string())]);
    let opts: Vec<(&str, &str)> = f.jobs[0].options.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(opts, [("bs", " 8k"), ("time_based", ""), ("runtime", "5"), ("rw", "randwrite")]);
    assert_eq!((f.jobs[0].line, f.jobs[0].file.as_path()), (3, Path::new("t.fio")));
}

#[test]
fn numjobs_clones_share_name_group_and_options() {
    let f = parse("[a]\nnumjobs=3\nrw=randread\n[b]\n");
    let names: Vec<_> = f.jobs.iter().map(|j| (j.config.name.as_str(), j.config.group_id)).collect();
    assert_eq!(names, [("a", 0), ("a", 0), ("a", 0), ("b", 0)]);
    assert!(f.jobs[..3].iter().all(|j| j.config.rw == RwKind::RandRead && j.options == f.jobs[0].options));
    assert_error("[a]\nnumjobs=0\n", 2, &["numjobs", "minimum"]);
    assert_error("[a]\nnumjobs=4294967295\n", 2, &["numjobs", "maximum 4096"]);
    assert_error("[a]\nnumjobs=4000\n[b]\nnumjobs=100\n", 3, &["more than 4096 jobs"]);
}

/// `max_latency`: a time per direction, microseconds without a suffix, nanoseconds in the
/// model (fio's fixup_options); the last value also sets the directions after it.
#[test]
fn max_latency_is_a_time_per_direction() {
    let c = configs("[a]\nmax_latency=10ms,50\n[b]\nmax_latency=2s\n[c]\n");
    assert_eq!(c[0].max_latency_ns, [10_000_000, 50_000, 50_000]);
    assert_eq!(c[1].max_latency_ns, [2_000_000_000; 3]);
    assert_eq!(c[2].max_latency_ns, [0; 3]);
    assert_error("[a]\nmax_latency=soon\n", 2, &["max_latency"]);
}

/// fio's `exitall` sets a flag of the program: named in any job (as `exitall=0` too: the
/// option only calls its callback), every job has it; `exit_what` is each job's.
#[test]
fn exitall_in_any_job_is_every_job_s_and_exit_what_is_its_own() {
    use blksim::workload::ExitWhat;
    let c = configs("[a]\n[b]\nexit_what=all\n[c]\nexitall=0\nexit_what=stonewall\n");
    let got: Vec<_> = c.iter().map(|c| (c.exitall, c.exit_what)).collect();
    assert_eq!(got, [(true, ExitWhat::Group), (true, ExitWhat::All), (true, ExitWhat::Stonewall)]);
    let c = configs("[a]\nexit_what=all\n[b]\n");
    assert!(c.iter().all(|c| !c.exitall));
    assert_error("[a]\nexit_what=some\n", 2, &["exit_what"]);
}

#[test]
fn ioscheduler_is_the_job_s_text_as_written() {
    let c = configs("[global]\nioscheduler=kyber\n[a]\n[b]\nioscheduler=none\n[c]\nioscheduler=\n");
    let got: Vec<_> = c.iter().map(|c| c.ioscheduler.as_deref()).collect();
    assert_eq!(got, [Some("kyber"), Some("none"), Some("")]);
    assert!(configs("[a]\n")[0].ioscheduler.is_none());
}

#[test]
fn stonewall_and_new_group_number_groups_and_phases() {
    let text = "[global]\nsize=1m\n[a]\nnumjobs=2\n[b]\nnew_group\n[c]\nstonewall\nnumjobs=2\n[d]\n[e]\nwait_for_previous\n[f]\nnew_group=0\n";
    let got: Vec<_> = configs(text).iter().map(|c| (c.name.clone(), c.group_id, c.phase)).collect();
    let want = [("a", 0, 0), ("a", 0, 0), ("b", 1, 0), ("c", 2, 1), ("c", 2, 1), ("d", 2, 1), ("e", 3, 2), ("f", 3, 2)];
    let want: Vec<_> = want.iter().map(|(n, g, p)| (n.to_string(), *g, *p)).collect();
    assert_eq!(got, want);
    // A stonewall on the very first job starts nothing new.
    let c = configs("[a]\nstonewall\n[b]\n");
    assert_eq!((c[0].group_id, c[0].phase, c[1].group_id), (0, 0, 0));
    // stonewall in [global] applies to every job.
    let c = configs("[global]\nstonewall\n[a]\n[b]\n[c]\n");
    assert_eq!(c.iter().map(|c| (c.group_id, c.phase)).collect::<Vec<_>>(), [(0, 0), (1, 1), (2, 2)]);
}

#[test]
fn second_file_resets_the_template_and_starts_with_a_stonewall() {
    let guard = tempfile::Builder::new().prefix("blksim-job-files-").tempdir().unwrap();
    let dir = guard.path().to_path_buf();
    std::fs::create_dir_all(&dir).unwrap();
    let one = dir.join("one.fio");
    let two = dir.join("two.fio");
    std::fs::write(&one, "[global]\nbs=8k\n[a]\nnumjobs=2\n").unwrap();
    std::fs::write(&two, "[b]\n[c]\nnew_group\n").unwrap();
    let f = parse_job_files(&[one.clone(), two.clone()], &ctx()).unwrap();
    assert!(f.global_options.is_empty(), "fio's JSON shows the last file's globals only");
    let got: Vec<_> =
        f.jobs.iter().map(|j| (j.config.name.as_str(), j.config.bs[0], j.config.group_id, j.config.phase)).collect();
    assert_eq!(got, [("a", 8192, 0, 0), ("a", 8192, 0, 0), ("b", 4096, 1, 1), ("c", 4096, 2, 1)]);
    assert_eq!(f.jobs[2].file, two);
    let e = parse_job_files(&[one, dir.join("missing.fio")], &ctx()).unwrap_err();
    assert_eq!((e.file, e.line), (dir.join("missing.fio"), 0));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn cpus_allowed_split_pins_by_global_thread_number() {
    let text = "[x]\n[a]\ncpus_allowed=2-4\ncpus_allowed_policy=split\nnumjobs=4\n[b]\ncpus_allowed=1,6\n";
    let c = configs(text);
    let cpus: Vec<_> = c.iter().map(|c| c.cpus_allowed.clone()).collect();
    // Threads 2..5 → indices (k-1) mod 3 = 1, 2, 0, 1 of [2, 3, 4].
    assert_eq!(cpus[0], None);
    assert_eq!(cpus[1..5], [Some(vec![3]), Some(vec![4]), Some(vec![2]), Some(vec![3])]);
    assert_eq!(cpus[5], Some(vec![1, 6]));
    assert_eq!(configs("[a]\ncpumask=0x5\n")[0].cpus_allowed, Some(vec![0, 2]));
    assert_error("[a]\ncpus_allowed=0-8\n", 2, &["cpus_allowed", "CPU 8"]);
    assert_error("[a]\ncpumask=256\n", 2, &["cpumask", "CPU 8"]);
}

/// `random_distribution` as fio's str_random_distribution_cb and
/// zone_split_ddir read it, with their defaults, ranges and messages.
#[test]
fn random_distributions_parse_as_fio_reads_them() {
    use blksim::workload::{RandomDistribution as D, Zone};
    let dist =
        |v: &str| configs(&format!("[a]\nrw=randread\nrandom_distribution={v}\n"))[0].random_distribution.clone();
    assert_eq!(dist("zipf"), D::Zipf { theta: 1.1, center: None });
    assert_eq!(dist("zipf:0.8:0.25"), D::Zipf { theta: 0.8, center: Some(0.25) });
    assert_eq!(dist("pareto"), D::Pareto { h: 0.2, center: None });
    assert_eq!(dist("normal:10"), D::Normal { dev: 10.0, center: None });
    assert_eq!(dist("random"), D::Random);
    let z = |a, s| Zone { access_perc: a, size_perc: s, size: 0 };
    // One list serves every direction; a missing size takes what the others leave.
    let zones = vec![z(50, 5), z(30, 15), z(20, 80)];
    assert_eq!(
        dist("zoned:50/5:30/15:20/"),
        D::Zoned { absolute: false, zones: [zones.clone(), zones.clone(), zones] }
    );
    let D::Zoned { absolute: true, zones } = dist("zoned_abs:60/4m:40/36m,100/1g") else { panic!() };
    assert_eq!(zones[0][1], Zone { access_perc: 40, size_perc: 0, size: 36 << 20 });
    assert_eq!(zones[1], vec![Zone { access_perc: 100, size_perc: 0, size: 1 << 30 }]);
    // Another distribution turns the random map off (fio's fixup_options).
    assert!(configs("[a]\nrw=randread\nrandom_distribution=zipf\n")[0].norandommap);
    assert_error("[a]\nrandom_distribution=zipf:1\n", 2, &["random_distribution", "theta"]);
    assert_error("[a]\nrandom_distribution=pareto:1.5\n", 2, &["random_distribution", "pareto input"]);
    assert_error("[a]\nrandom_distribution=normal:100\n", 2, &["random_distribution", "deviation"]);
    assert_error("[a]\nrandom_distribution=zipf:1.2:2\n", 2, &["random_distribution", "center"]);
    assert_error("[a]\nrandom_distribution=zipf:x\n", 2, &["random_distribution", "random postfix"]);
    assert_error("[a]\nrandom_distribution=zoned:50/5:30/15\n", 2, &["random_distribution", "add to 80, not 100"]);
    assert_error("[a]\nrandom_distribution=zoned:50/50:50/60\n", 2, &["random_distribution", "more than 100%"]);
    assert_eq!(error("[a]\nrandom_distribution=sequence:2,0,1\n").kind, crate::ErrorKind::NotModelled);
}

/// `numa_cpu_nodes` binds the job to its nodes' CPUs (libnuma's numa_run_on_node_mask,
/// after and instead of cpus_allowed); `numa_mem_policy` is accepted only where it
/// places buffers as blksim takes them to be (local to the job's CPU).
#[test]
fn numa_cpu_nodes_bind_the_job_to_the_nodes_cpus() {
    let cpus = |text: &str| configs(text)[0].cpus_allowed.clone();
    assert_eq!(cpus("[a]\nnuma_cpu_nodes=1\n"), Some(vec![4, 5, 6, 7]));
    assert_eq!(cpus("[a]\nnuma_cpu_nodes=all\n"), Some((0..8).collect()));
    assert_eq!(cpus("[a]\ncpus_allowed=0\nnuma_cpu_nodes=1,0-0\n"), Some((0..8).collect()));
    assert_eq!(cpus("[a]\nnuma_cpu_nodes=1\ncpus_allowed=2\ncpus_allowed_policy=split\n"), Some(vec![4, 5, 6, 7]));
    assert_error("[a]\nnuma_cpu_nodes=2\n", 2, &["numa_cpu_nodes", "NUMA node 2", "nodes 0-1"]);
    assert_error("[a]\nnuma_cpu_nodes=1-0\n", 2, &["numa_cpu_nodes", "1-0"]);
    assert_error("[a]\nnuma_cpu_nodes=x\n", 2, &["numa_cpu_nodes", "'x'"]);
    assert_eq!(cpus("[a]\nnuma_mem_policy=local\n"), None);
    assert_eq!(error("[a]\nnuma_mem_policy=bind:1\n").kind, crate::ErrorKind::NotModelled);
}

#[test]
fn units_times_and_lists_resolve() {
    let c = &configs(
        "[a]\nbs=8k,32k\nsize=1g\noffset=4KiB\nruntime=2m\nramp_time=500ms\nstartdelay=3\ntime_based\nrate_iops=100,,50\nnumber_ios=1k\n",
    )[0];
    assert_eq!(c.bs, [8192, 32768, 32768]);
    assert_eq!((c.size, c.offset), (Some(1 << 30), 4000));
    assert_eq!((c.runtime_ns, c.ramp_time_ns, c.startdelay_ns), (Some(120_000_000_000), 500_000_000, 3_000_000_000));
    assert!(c.time_based);
    assert_eq!(c.rate_iops, [100, 0, 50]);
    assert_eq!(c.number_ios, 1024);
    let c = &configs("[a]\nkb_base=1000\nbs=4k\nsize=100%\nruntime=1sec\ntime_based\n")[0];
    assert_eq!((c.bs[0], c.size, c.runtime_ns), (4000, None, Some(1000)));
    assert!(!configs("[a]\ntime_based\n")[0].time_based, "fio ignores time_based without runtime");
    assert_eq!(configs("[a]\nbsrange=4k-4k,8k:8k\n")[0].bs, [4096, 8192, 8192]);
    // A range of 0 is fio's default block size (fixup_options: a 0 min_bs takes bs), as the real fio runs it.
    assert_eq!(configs("[a]\nbsrange=0-0\n")[0].bs, [4096; 3]);
    assert_eq!(configs("[a]\nbs=8k\nbsrange=0-0,16k-16k\n")[0].bs, [8192, 16384, 16384]);
    // A range: min_bs in bs, max_bs in bs_max (high-low as written is sorted, as fio does).
    let c = &configs("[a]\nbsrange=16k-4k,8k-8k\n")[0];
    assert_eq!(
        (c.bs, c.bs_max, c.bs_range(0), c.bs_range(1)),
        ([4096, 8192, 8192], [16384, 0, 0], (4096, 16384), (8192, 8192))
    );
    assert_eq!(configs("[a]\npercentile_list=50:99\n")[0].percentile_list, vec![50.0, 99.0]);
}

#[test]
fn mixes_depths_and_direct_resolve_like_fio() {
    let c = &configs("[a]\nrw=randrw\nrwmixwrite=30\niodepth=16\niodepth_batch=32\niodepth_batch_complete=4\n")[0];
    assert_eq!((c.rw, c.rwmixread), (RwKind::RandRw, 70));
    assert_eq!((c.iodepth_batch_submit, c.iodepth_batch_complete_min, c.iodepth_batch_complete_max), (16, 4, 4));
    assert_eq!(c.iodepth_low, 16);
    let c = &configs("[a]\niodepth=8\niodepth_batch_submit=0\niodepth_batch_complete_min=0\niodepth_batch_complete_max=6\niodepth_low=2\n")[0];
    assert_eq!(
        (c.iodepth_batch_submit, c.iodepth_batch_complete_min, c.iodepth_batch_complete_max, c.iodepth_low),
        (8, 0, 6, 2)
    );
    let c = configs("[a]\ndirect=1\n[b]\nbuffered=0\n[c]\ndirect=1\nbuffered=1\n[d]\nbuffered=0\ndirect=0\n");
    assert_eq!(c.iter().map(|c| c.direct).collect::<Vec<_>>(), [true, true, false, false]);
    let c = &configs("[a]\ngtod_reduce=1\nlat_percentiles=1\n")[0];
    assert!(c.gtod_reduce && !c.clat_percentiles && c.lat_percentiles);
}

#[test]
fn engines_and_their_options() {
    let c = configs(
        "[global]\nioengine=io_uring\nhipri\nfixedbufs\n[a]\nregisterfiles\nsqthread_poll=1\nsqthread_poll_cpu=3\n[b]\nioengine=io_uring_cmd\ncmd_type=nvme\n[c]\nioengine=libaio\n[d]\nioengine=pvsync2\nhipri\n",
    );
    let a = IoUringOptions {
        hipri: true,
        fixedbufs: true,
        registerfiles: true,
        sqthread_poll: true,
        sqthread_poll_cpu: Some(3),
        register_ring: false,
    };
    assert_eq!(c[0].ioengine, IoEngine::IoUring(a));
    let b = IoUringOptions { hipri: true, fixedbufs: true, ..Default::default() };
    assert_eq!(c[1].ioengine, IoEngine::IoUringCmd(b), "io_uring_cmd shares io_uring's options");
    assert_eq!(c[2].ioengine, IoEngine::Libaio);
    assert_eq!(c[3].ioengine, IoEngine::Pvsync2 { hipri: true });
    assert_eq!(configs("[a]\nioengine=sync\n")[0].ioengine, IoEngine::Sync);
    // pvsync: preadv/pwritev, an engine of its own without options (fio's sync.c gives pvsync2 its options).
    assert_eq!(configs("[a]\nioengine=pvsync\n")[0].ioengine, IoEngine::Pvsync);
    assert_error("[a]\nioengine=pvsync\nhipri\n", 3, &["'hipri'", "ioengine=pvsync", "Bad option"]);
    assert_error("[a]\nioengine=vsync\n", 2, &["ioengine=vsync is not modelled"]);
    assert_eq!(configs("[a]\nioengine=null\n")[0].ioengine, IoEngine::Null);
    // Engine options are checked against the engine of their section, whatever the order.
    assert!(matches!(configs("[a]\nhipri\nioengine=pvsync2\n")[0].ioengine, IoEngine::Pvsync2 { hipri: true }));
    assert_error("[a]\nhipri\n", 2, &["'hipri'", "ioengine=psync", "Bad option"]);
    assert_error("[global]\nhipri\n[a]\nioengine=io_uring\n", 2, &["hipri"]);
    assert_error("[a]\nioengine=io_uring_cmd\ncmd_type=bsg\n", 3, &["cmd_type=bsg", "not modelled"]);
    assert_error("[a]\nioengine=cpuio\ncpuload=50\n", 2, &["ioengine=cpuio is not block I/O; blksim simulates psync"]);
    // A refused engine's options are that engine's (fio knows them), in the sections that
    // inherit it too: the refusal alone, not an "unknown option" for each of them.
    let e = error("[global]\nioengine=cpuio\n[a]\ncpuload=50\n[b]\ncpumode=qsort\n");
    assert_eq!((e.line, e.more.len()), (2, 0), "{e}");
    // A section that names an engine of its own again checks its options against it.
    let e = error("[global]\nioengine=cpuio\n[a]\nioengine=libaio\ncpuload=50\n");
    assert_eq!(e.more.iter().map(|m| m.line).collect::<Vec<_>>(), [5], "{e}");
    assert_error("[a]\nioengine=vsync\n", 2, &["ioengine=vsync is not modelled"]);
    assert!(error("[a]\nioengine=net\n").message.starts_with("ioengine=net is not block I/O;"));
    assert_error("[a]\nioengine=libaio\nuserspace_reap\n", 3, &["userspace_reap"]);
    assert_eq!(configs("[a]\nioengine=libaio\nuserspace_reap=0\n")[0].ioengine, IoEngine::Libaio);
}

#[test]
fn filenames_split_accumulate_and_take_the_directory() {
    let c =
        configs("[global]\nfilename=/dev/a\n[x]\nfilename=/dev/b:/dev/c\n[y]\ndirectory=/mnt\nfilename=f\\:1\n[z]\n");
    assert_eq!(c[0].filenames, ["/dev/a", "/dev/b", "/dev/c"], "fio adds a job's files to the inherited ones");
    assert_eq!(c[1].filenames, ["/dev/a", "/mnt/f:1"]);
    assert_eq!(c[2].filenames, ["/dev/a"]);
    assert!(configs("[a]\n")[0].filenames.is_empty(), "no filename: left empty");
}

#[test]
fn name_option_renames_only_in_the_job_section() {
    let c = configs("[global]\nname=g\n[a]\n[b]\nname=renamed\nnumjobs=3\n");
    // As fio 3.33 runs it: the clones take the section's name back.
    assert_eq!(c.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["a", "renamed", "b", "b"]);
}

#[test]
fn substitution_of_variables_and_keywords() {
    let c = &configs("[a]\nrw=${RW}\nnumjobs=$ncpus/4\nbs=$pagesize\nsize=$mb_memory*1024*1024/16\n")[0];
    assert_eq!((c.rw, c.bs[0], c.size), (RwKind::RandWrite, 4096, Some(1 << 30)));
    assert_eq!(configs("[a]\nnumjobs=$ncpus/4\n").len(), 2);
    assert_error("[a]\nbs=${MISSING}\n", 2, &["option 'bs'", "needs a value", "MISSING is not set"]);
}

#[test]
fn blanks_around_equals_follow_fio() {
    assert_eq!(configs("[a]\nrw =randread\n")[0].rw, RwKind::RandRead);
    assert_error("[a]\nrw= randread\n", 2, &["option 'rw'", "' randread' is not one of"]);
    assert_eq!(configs("[a]\niodepth= 4\n")[0].iodepth, 4);
    assert_eq!(configs("[a]\nbs= 4k\n")[0].bs[0], 4, "fio loses the suffix after a blank");
}

#[test]
fn rejections_name_line_option_and_reason() {
    assert_error(
        "[a]\nrw=write\ntrim_backlog=2\n",
        3,
        &["option 'trim_backlog'", "verification", "only trim_backlog=0"],
    );
    assert_eq!(configs("[a]\ntrim_backlog=0\n").len(), 1);
    assert_eq!(configs("[a]\nverify=0\n")[0].verify, None);
    assert_eq!(
        configs("[a]\nverify=crc32c-intel\n")[0].verify.map(|v| v.algo),
        Some(blksim::workload::VerifyAlgo::Crc32c)
    );
    assert_error("[a]\nbssplit=4k/60:8k/60:16k:32k\n", 2, &["option 'bssplit'", "more than 100%"]);
    assert_error("[a]\nbssplit=4k/50:x/50\n", 2, &["option 'bssplit'", "split conversion failed"]);
    assert_error("[a]\nrw=randread:0\n", 2, &["rw=randread:0", "number of I/Os from 1"]);
    assert_error("[a]\nrw=read:x\n", 2, &["rw=read:x", "a size"]);
    assert_eq!(configs("[a]\nrw=randread:1\n")[0].rw, RwKind::RandRead);
    // fio's str_rw_cb: a random job's suffix counts I/Os per random offset, a
    // sequential job's is a size added after each I/O; each rw= resets both.
    let c = &configs("[a]\nrw=randread:4\n")[0];
    assert_eq!((c.ddir_seq_nr, c.ddir_seq_add), (4, 0));
    let c = &configs("[a]\nrw=read:-8k\n")[0];
    assert_eq!((c.ddir_seq_nr, c.ddir_seq_add), (1, -8192));
    let c = &configs("[global]\nrw=write:1m\n[a]\nrw=write\n")[0];
    assert_eq!(c.ddir_seq_add, 0);
    // blockalign: random I/O only; another value than min_bs turns the random map off.
    let c = &configs("[a]\nrw=randread\nbs=8k\nba=4k\n")[0];
    assert_eq!((c.ba, c.norandommap), ([4096; 3], true));
    let c = &configs("[a]\nrw=randread\nbs=8k\nba=8k,2k\n")[0];
    assert_eq!(c.ba, [0, 2048, 2048]);
    let c = &configs("[a]\nrw=read\nbs=8k\nba=4k\n")[0];
    assert_eq!((c.ba, c.norandommap), ([0; 3], false));
    assert_error(
        "[a]\nrw=randread\nba=1k\ndirect=1\nioengine=libaio\nfilename=/dev/nvme0n1\nbs=4k\nba=256\n",
        8,
        &["ba=256", "EINVAL"],
    );
    assert_error("[a]\nsize=20%\n", 2, &["option 'size'", "20%"]);
    assert_error("[a]\nsize=8z\n", 2, &["zones"]);
    assert_error("[a]\nstartdelay=1-5\n", 2, &["random start delay"]);
    assert_error("[a]\nzonemode=zbd\n", 2, &["zoned"]);
    // zbd's zonesize is zbd's: the refusal alone, not also zonemode=none's incompatibility.
    let e = error("[a]\nzonemode=zbd\nzonesize=256M\n");
    assert_eq!((e.line, e.more.len()), (2, 0), "{e}");
    assert_error("[a]\nrate=1m\nrate_iops=100\n", 2, &["mutually exclusive"]);
    assert_error("[a]\nrate_min=1m\nrate_iops_min=10\n", 2, &["rate_min and rate_iops_min", "mutually exclusive"]);
    assert_error("[a]\nrate=1m\nrate_min=2m\n", 3, &["reads' rate_min is above their rate", "minimum rate exceeds"]);
    assert_error("[a]\nrw=write\nrate_iops=,5\nrate_iops_min=,6\n", 4, &["writes' rate_iops_min", "ddir 1"]);
    assert_error("[a]\nrate_process=poisson\nrate=1k\nbs=4k\n", 2, &["rate_process=poisson", "divides"]);
    assert_error("[a]\nio_size=50%\n", 2, &["io_size=50%", "not modelled"]);
    assert_error("[a]\nio_size=101%\n", 2, &["io_size=101%", "greater than 100%"]);
    assert_error("[a]\nwait_for=b\n", 2, &["wait_for", "stonewall is modelled"]);
    assert_error("[a]\nrwmixcycle=1\n", 2, &["rwmixcycle", "deprecated"]);
    assert_error("[a]\ndirect=2\n", 2, &["option 'direct'", "boolean"]);
    assert_error("[a]\ndirect\n", 2, &["option 'direct'", "needs a value"]);
}

#[test]
fn unknown_options_are_bad_options() {
    assert_error("[a]\niodepht=4\n", 2, &["unknown option 'iodepht'", "did you mean 'iodepth'"]);
    assert_error("[a]\nBS=4k\n", 2, &["unknown option 'BS'"]);
    assert_error("[global]\nfoo\n", 2, &["unknown option 'foo'"]);
}

#[test]
fn noops_are_accepted_but_still_checked() {
    let text = "[a]\nrandrepeat=0\ndescription=x y\nwrite_bw_log\nlog_avg_msec=1000\ngroup_reporting\nthreads=1\nbuffer_compress_percentage=50\n";
    assert!(configs(text)[0].group_reporting);
    assert_error("[a]\nrandrepeat=2\n", 2, &["randrepeat"]);
    assert_error("[a]\nrandom_generator=best\n", 2, &["random_generator"]);
}

#[test]
fn errors_in_included_files_name_that_file() {
    let guard = tempfile::Builder::new().prefix("blksim-job-include-").tempdir().unwrap();
    let dir = guard.path().to_path_buf();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("opts.fio"), "bs=16k\n\ntrim_backlog=4\n").unwrap();
    std::fs::write(dir.join("good.fio"), "iodepth=$ncpus\n").unwrap();
    let job = dir.join("job.fio");
    let f = parse_job_text("[a]\ninclude good.fio\n", &job, &ctx()).unwrap();
    assert_eq!(f.jobs[0].config.iodepth, 8);
    let e = parse_job_text("[a]\ninclude opts.fio\n", &job, &ctx()).unwrap_err();
    assert_eq!((e.file.clone(), e.line), (dir.join("opts.fio"), 3));
    assert!(e.message.contains("verify"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn odd_input_gives_errors_not_panics() {
    for text in ["\u{feff}[a]\n", "[a]\n=5\n", "[a]\nbs=\u{e9}\n", "[a]\nsize=$ncpus*((((1\n", "[a]\nrw=\u{e9}:x\n"] {
        let e = error(text);
        assert!(e.line > 0, "{text:?}: {e}");
    }
    let long = format!("[a]\niodepth=$ncpus{}\n", "+1".repeat(60));
    assert!(error(&long).message.contains("100 characters"));
    let f = parse_job_text("[a]\r\nbs=8k\r\n", Path::new("t.fio"), &ctx()).unwrap();
    assert_eq!(f.jobs[0].config.bs[0], 8192, "CRLF line ends");
}

#[test]
fn a_file_without_jobs_is_an_error() {
    let e = error("[global]\nbs=4k\n");
    assert_eq!(e.line, 0);
    assert!(e.message.contains("no jobs"));
}

/// A value each kind accepts, for exercising every modelled option.
fn sample(kind: Kind) -> Option<&'static str> {
    Some(match kind {
        Kind::Flag => return None,
        Kind::Bool => "1",
        Kind::Int { .. } | Kind::IntDirs { .. } | Kind::Size => "1",
        Kind::Time { .. } | Kind::TimeRange | Kind::TimeDirs => "1",
        Kind::Choice(values) => values[0],
        Kind::Text | Kind::OptText => "1",
        Kind::Floats { .. } => "1",
        Kind::Range => "4k-4k",
        Kind::Deprecated | Kind::SoftDeprecated => return None,
    })
}

#[test]
fn every_modelled_option_applies_its_kind() {
    for spec in GENERAL.iter().chain(IO_URING).chain(LIBAIO).chain(PVSYNC2) {
        let Decision::Model(field) = spec.decision else { continue };
        let value = match field {
            Field::IoEngine => Some("io_uring"),
            _ => sample(spec.kind),
        };
        let parsed = parse_kind(spec.kind, value, 1024).unwrap_or_else(|e| panic!("{}: {e}", spec.name));
        let mut st = Settings { engine: super::engine::EngineName::IoUring, ..Default::default() };
        if let Err(e) = st.apply(field, parsed, &ctx()) {
            assert!(!e.to_string().contains("internal"), "{}: {e}", spec.name);
        }
    }
}

#[test]
fn option_status_reports_decisions() {
    assert_eq!(option_status("bs", None), Some(OptionStatus::Modelled));
    assert_eq!(option_status("readwrite", None), Some(OptionStatus::Modelled));
    assert!(matches!(option_status("allrandrepeat", None), Some(OptionStatus::NoOp(_))));
    assert_eq!(option_status("randseed", None), Some(OptionStatus::Modelled));
    assert!(matches!(option_status("verify_only", None), Some(OptionStatus::Rejected(_))));
    assert_eq!(option_status("verify_async", None), Some(OptionStatus::Modelled));
    assert_eq!(option_status("rwmixcycle", None), Some(OptionStatus::Deprecated));
    assert_eq!(option_status("hipri", None), None);
    assert_eq!(option_status("hipri", Some("io_uring")), Some(OptionStatus::Modelled));
    assert_eq!(option_status("nonsense", Some("io_uring")), None);
}

#[test]
fn errors_say_whether_the_input_is_bad_or_not_modelled() {
    use crate::ErrorKind::{BadInput, NotModelled};
    for (text, kind) in [
        ("[a]\nverify_only\n", NotModelled),
        ("[a]\nioengine=mmap\n", NotModelled),
        ("[a]\nsize=50%\n", NotModelled),
        ("[a]\nrw=randread:-4\n", BadInput),
        ("[a]\nioengine=iouring\n", BadInput),
        ("[a]\nbogus=1\n", BadInput),
        ("[a]\niodepth=x\n", BadInput),
        ("[a]\ncpus_allowed=99\n", BadInput),
    ] {
        assert_eq!(error(text).kind, kind, "{text:?}: {}", error(text));
    }
}

#[test]
fn sizes_are_64_bit_and_checked_as_fio_and_linux_check_them() {
    let job = |extra: &str| format!("[a]\nioengine=libaio\nrw=randread\nfilename=/dev/nvme0n1\n{extra}");
    // 64-bit sizes and offsets.
    let c = &configs(&job("bs=1g\nsize=16t\noffset=5g\n"))[0];
    assert_eq!((c.bs[0], c.size, c.offset), (1 << 30, Some(16 << 40), 5 << 30));
    // Larger than one request of the model holds: not modelled, never truncated.
    let e = error(&job("bs=4g\n"));
    assert_eq!((e.kind, e.line), (crate::ErrorKind::NotModelled, 5), "at the line of bs");
    assert!(e.message.contains("bs=4294967296") && e.message.contains("4 GiB"), "{e}");
    // fio: "size too small".
    assert_error(&job("bs=4k\nsize=1\n"), 6, &["job 'a'", "size=1 is smaller than the block size 4096"]);
    // The smallest block size of the directions the job does counts.
    assert_error(&job("rw=randwrite\nbs=4k,16k\nsize=8k\n"), 7, &["size=8192 is smaller than the block size 16384"]);
    configs(&job("rw=randread\nbs=4k,16k\nsize=8k\n"));
    // Linux: O_DIRECT needs sizes and offsets aligned to the logical block size (EINVAL).
    assert_error(&job("direct=1\nbs=1\n"), 6, &["bs=1 with direct=1", "512", "EINVAL"]);
    assert_error(&job("direct=1\nbs=4k\noffset=100\n"), 7, &["offset=100 with direct=1", "EINVAL"]);
    assert_error(&job("direct=1\nrw=randrw\nbs=4k,1000\n"), 7, &["bs=1000 with direct=1"]);
    // Written in [global]: said at that line, once for all the jobs that inherit it.
    let e =
        error("[global]\nbs=1\ndirect=1\nioengine=libaio\n[a]\nfilename=/dev/nvme0n1\n[b]\nfilename=/dev/nvme1n1\n");
    assert_eq!((e.line, e.more.len()), (2, 0), "{e}");
    configs(&job("direct=1\nbs=512\noffset=1536\n"));
    configs(&job("direct=0\nbs=1\n").replace("libaio", "psync"));
    configs(&job("direct=1\nbs=1\n").replace("libaio", "null"));
}

#[test]
fn a_size_that_is_not_a_multiple_of_bs_stays_as_given() {
    // Where its last block fits is the I/O's to say (fill_io_u, the random map), as in fio:
    // `tests/logs.rs` counts the I/Os.
    let size = |extra: &str| configs(&format!("[a]\nioengine=null\nbs=4k\nsize=10001\n{extra}"))[0].size;
    for rw in ["rw=read\n", "rw=randread\n", "rw=randread\nnorandommap\n"] {
        assert_eq!(size(rw), Some(10001), "{rw}");
    }
}

#[test]
fn log_window_value_is_fios_current_name_of_log_max_value() {
    for v in ["avg", "max", "both", "0", "1"] {
        for name in ["log_window_value", "log_max_value"] {
            let f = parse(&format!("[a]\nioengine=null\nsize=1m\n{name}={v}\n"));
            assert_eq!(f.jobs[0].options[2], ("log_window_value".to_string(), v.to_string()));
        }
    }
    assert_error("[a]\nlog_window_value=median\n", 2, &["log_window_value"]);
}

#[test]
fn every_problem_of_a_file_is_reported_at_its_own_line() {
    let text = "[global]\nioengine=libaio\nrw=randred\n[a]\nfilename=/dev/nvme0n1\niodepth=x\nfoo=1\n[b]\nbs=0\n";
    let e = error(text);
    let lines: Vec<usize> = std::iter::once(&e).chain(&e.more).map(|p| p.line).collect();
    assert_eq!(lines, [3, 6, 7, 9], "{e}");
    let shown = e.to_string();
    assert_eq!(shown.lines().count(), 4, "{shown}");
    assert!(shown.lines().all(|l| l.starts_with("t.fio:")), "{shown}");
    assert!(shown.contains("t.fio:7: unknown option 'foo'"), "{shown}");
    // The kind is bad input as soon as one problem is.
    assert_eq!(error("[a]\nrandom_sequence_stride=4\n").kind, crate::ErrorKind::NotModelled);
    let e = error("[a]\nrandom_sequence_stride=4\nbs=0\n");
    assert!(e.message.contains("option 'random_sequence_stride'") && e.more.len() == 1, "{e}");
    assert_eq!(e.kind, crate::ErrorKind::BadInput, "{e}");
    // A refused ioengine does not also make each of its options unknown.
    let e = error("[a]\nioengine=io_urin\nhipri\nfixedbufs\n");
    assert!(e.more.is_empty(), "{e}");
}

#[test]
fn thinkcycles_is_read_as_fio_reads_it() {
    assert_eq!(configs("[a]\nthinkcycles=5000\n")[0].thinkcycles, 5000);
    assert_eq!(configs("[a]\n")[0].thinkcycles, 0);
    // An unsigned int, as fio's FIO_OPT_INT: no negative count, none past 2^32 - 1.
    assert_eq!(error("[a]\nthinkcycles=-1\n").kind, crate::ErrorKind::BadInput);
    assert_eq!(error("[a]\nthinkcycles=4294967296\n").kind, crate::ErrorKind::BadInput);
}

#[test]
fn pacing_options_resolve_as_fio_reads_them() {
    let c = &configs("[a]\nrw=randrw\nrate=1m,512k\nrate_process=poisson\nrate_ignore_thinktime=1\n")[0];
    assert_eq!(c.rate, [1 << 20, 512 << 10, 512 << 10]);
    assert_eq!(c.rate_process, blksim::workload::RateProcess::Poisson);
    assert!(c.rate_ignore_thinktime && c.is_paced());
    assert_eq!(configs("[a]\nrate=500k,\n")[0].rate, [500 << 10, 0, 0], "a trailing comma: reads only");
    let t = configs(
        "[a]\nthinktime=2ms\nthinktime_spin=500\nthinktime_blocks=8\nthinktime_blocks_type=issue\nthinktime_iotime=1s\n",
    )[0]
    .thinktime;
    assert_eq!(
        (t.think_us, t.spin_us, t.blocks, t.blocks_set, t.count_issued, t.iotime_us),
        (2000, 500, 8, true, true, 1_000_000)
    );
    assert!(!configs("[a]\nthinktime_spin=500\n")[0].is_paced(), "thinktime_spin alone does nothing");
    assert_eq!(configs("[a]\nio_size=10001\n")[0].io_size, Some(10001));
    assert_eq!(configs("[a]\nio_limit=1m\n")[0].io_size, Some(1 << 20));
    assert_eq!(configs("[a]\nio_size=100%\n")[0].io_size, None);
}

#[test]
fn bssplit_resolves_as_fio_reads_it() {
    use blksim::workload::BsSplit;
    let e = |bs, perc| BsSplit { bs, perc };
    // Sorted by percentage; min_bs in bs; the header's range from the split.
    let c = &configs("[a]\nbssplit=64k/70:4k/30\n")[0];
    assert_eq!(c.bssplit[0], vec![e(4096, 30), e(65536, 70)]);
    assert_eq!((c.bs, c.bs_range(1)), ([4096; 3], (4096, 65536)));
    // The rest shared by the entries without a percentage (0% is none).
    assert_eq!(configs("[a]\nbssplit=4k/40:8k:16k/0\n")[0].bssplit[0], vec![e(8192, 30), e(16384, 30), e(4096, 40)]);
    // Above 100 with one entry left: fio's unsigned arithmetic wraps it, and sorts it first.
    assert_eq!(configs("[a]\nbssplit=4k/60:8k/60:16k\n")[0].bssplit[0][0], e(16384, 100u32.wrapping_sub(120)));
    // Per direction: read, write, trim (trim copies write).
    let c = &configs("[a]\nbssplit=4k/50:8k/50,16k/10:32k/90\n")[0];
    assert_eq!(c.bssplit[1], vec![e(16384, 10), e(32768, 90)]);
    assert_eq!(c.bssplit[2], c.bssplit[1]);
    assert_eq!(c.bs, [4096, 16384, 16384]);
    // A single size is that size; an empty list keeps bs.
    let c = &configs("[a]\nbs=2k\nbssplit=,8k\n")[0];
    assert_eq!((c.bs, c.bssplit[1].is_empty()), ([2048, 8192, 8192], true));
    // Sizes aligned to the smallest unless bs_unaligned.
    assert!(configs("[a]\nbssplit=4k/50:6k/50\n")[0].bssplit[0].is_empty(), "6k aligned down to 4k: all 4k");
    assert_eq!(configs("[a]\nbssplit=4k/50:6k/50\nbs_unaligned\n")[0].bssplit[0], vec![e(4096, 50), e(6144, 50)]);
    // direct=1 checks every size.
    assert_error("[a]\ndirect=1\nbssplit=4k/50:1000/50\nbs_unaligned\n", 2, &["bs=1000", "O_DIRECT"]);
}

#[test]
fn job_files_past_a_sane_size_are_refused_at_the_line_that_passes_it() {
    // 4096 jobs of 64 options is the most; one more line is refused there, not read into memory.
    let mut text = String::from("[a]\n");
    for _ in 0..super::ini::MAX_OPTION_LINES + 1 {
        text.push_str("rw=read\n");
    }
    let e = error(&text);
    assert_eq!(e.line, super::ini::MAX_OPTION_LINES + 2, "{e}");
    assert!(e.message.contains("more than 262144 option lines"), "{e}");
    // A file over 16 MiB is not read at all.
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.fio");
    std::fs::write(&big, vec![b'#'; (16 << 20) + 1]).unwrap();
    let e = parse_job_files(&[big], &ctx()).unwrap_err();
    assert!(e.message.contains("is over 16 MiB"), "{e}");
}

#[test]
fn every_limit_note_is_on_an_option_listed_as_modelled_and_names_a_form_that_is_refused() {
    use crate::job::modelled_note;
    for name in
        ["directory", "filename", "size", "offset", "io_size", "startdelay", "random_distribution", "cmd_type", "rw"]
    {
        let engine = (name == "cmd_type").then_some("io_uring_cmd");
        assert_eq!(option_status(name, engine), Some(OptionStatus::Modelled), "{name}");
        assert!(modelled_note(name).is_some(), "{name} has no note");
    }
    // The forms the notes say are refused are refused.
    for (text, option) in [
        ("[a]\nsize=20%\n", "size"),
        ("[a]\noffset=8z\n", "offset"),
        ("[a]\nio_size=50%\n", "io_size"),
        ("[a]\nstartdelay=1-2\n", "startdelay"),
        ("[a]\nrandom_distribution=sequence\n", "random_distribution"),
    ] {
        assert_error(text, 2, &[option]);
    }
}

#[test]
fn section_reads_only_the_named_job_sections_and_the_globals() {
    // fio's --section: the other sections are not read (their errors unseen); [global] always.
    let text = "[global]\nbs=8k\n[light]\nrw=read\n[heavy]\nrw=randwrite\niodepth=32\n[broken]\nrw=sideways\n";
    let c = ParseContext { sections: vec!["heavy".into()], ..ctx() };
    let f = parse_job_text(text, Path::new("t.fio"), &c).unwrap();
    assert_eq!(f.jobs.len(), 1);
    let j = &f.jobs[0].config;
    assert_eq!((j.name.as_str(), j.rw, j.iodepth, j.bs[1]), ("heavy", RwKind::RandWrite, 32, 8192));
    let c = ParseContext { sections: vec!["light".into(), "heavy".into()], ..ctx() };
    assert_eq!(parse_job_text(text, Path::new("t.fio"), &c).unwrap().jobs.len(), 2);
    let c = ParseContext { sections: vec!["nosuch".into()], ..ctx() };
    let e = parse_job_text(text, Path::new("t.fio"), &c).unwrap_err().to_string();
    assert!(e.contains("no jobs defined: no job section named nosuch (--section)"), "{e}");
}

#[test]
fn offset_increment_moves_each_clone_as_fios_get_start_offset_does() {
    // offset + subjob_number * offset_increment; the job itself is subjob 0, its clones
    // count down from numjobs - 1 in the order fio makes them (the real fio 3.33's
    // write_lat_log with log_offset: x_lat.2.log's I/Os at 2 MiB, x_lat.3.log's at 1 MiB).
    let c =
        configs("[w]\nfilename=/dev/nvme0n1\ndirect=1\nrw=write\nsize=1m\nnumjobs=3\noffset=4k\noffset_increment=1m\n");
    let offsets: Vec<u64> = c.iter().map(|j| j.offset).collect();
    assert_eq!(offsets, [4096, 4096 + (2 << 20), 4096 + (1 << 20)]);
    // Without it every clone starts at offset.
    let c = configs("[w]\nfilename=/dev/nvme0n1\ndirect=1\nrw=write\nsize=1m\nnumjobs=2\noffset=8k\n");
    assert!(c.iter().all(|j| j.offset == 8192));
    // A percentage of the device is refused at its line, as offset's is; so is an
    // increment O_DIRECT cannot use.
    assert_error("[w]\nfilename=/dev/nvme0n1\ndirect=1\nnumjobs=2\noffset_increment=10%\n", 5, &["10%"]);
    assert_error(
        "[w]\nfilename=/dev/nvme0n1\ndirect=1\nnumjobs=2\noffset_increment=100\n",
        5,
        &["offset_increment=100"],
    );
}

#[test]
fn percentages_of_the_device_as_fios_get_start_offset_and_size_percent_take_them() {
    let c = ParseContext {
        device_bytes: BTreeMap::from([("nvme0n1".into(), 1000 << 20), ("nvme1n1".into(), 2000 << 20)]),
        ..ctx()
    };
    let parse_with = |text: &str| parse_job_text(text, Path::new("t.fio"), &c);
    let jobs = |text: &str| -> Vec<(u64, Option<u64>)> {
        parse_with(text)
            .unwrap_or_else(|e| panic!("{e}"))
            .jobs
            .iter()
            .map(|j| (j.config.offset, j.config.size))
            .collect()
    };
    let dev = "[w]\nfilename=/dev/nvme0n1\ndirect=1\nrw=write\nbs=64k\n";
    // offset=25%: a quarter of 1000 MiB (250 MiB, a multiple of 64 KiB); size=10%: 100 MiB.
    assert_eq!(jobs(&format!("{dev}offset=25%\nsize=10%\n")), [(250 << 20, Some(100 << 20))]);
    // offset_increment=10% per clone, the sum aligned up to the block size (100 MiB is aligned).
    assert_eq!(
        jobs(&format!("{dev}offset=1m\noffset_increment=10%\nnumjobs=3\nsize=1m\n")),
        [(1 << 20, Some(1 << 20)), ((1 << 20) + (200 << 20), Some(1 << 20)), ((1 << 20) + (100 << 20), Some(1 << 20))]
    );
    // 3% of 1000 MiB is 30 MiB + 0.72 MiB: aligned up to 64 KiB for the offset, down for the size.
    let three = (1000u64 << 20) * 3 / 100;
    assert_eq!(
        jobs(&format!("{dev}offset=3%\nsize=3%\n")),
        [(three.div_ceil(65536) * 65536, Some(three / 65536 * 65536))]
    );
    // size=N% is at most what lies past the offset; 100% is the whole device (no size).
    assert_eq!(jobs(&format!("{dev}offset=90%\nsize=50%\n")), [(900 << 20, Some(100 << 20))]);
    assert_eq!(jobs(&format!("{dev}size=100%\n")), [(0, None)]);
    // The generic char device is its namespace's.
    let ng = "[w]\nfilename=/dev/ng0n1\nioengine=io_uring_cmd\nrw=read\nbs=4k\nsize=50%\n";
    assert_eq!(jobs(ng), [(0, Some(500 << 20))]);
    // Refused: a file that is not a device, files of different sizes, over 100%, nothing left.
    let e = parse_with("[w]\nfilename=/tmp/f\nsize=5%\n").unwrap_err();
    assert!(e.line == 3 && e.message.contains("block devices"), "{e}");
    let e = parse_with("[w]\nfilename=/dev/nvme0n1:/dev/nvme1n1\ndirect=1\noffset=5%\n").unwrap_err();
    assert!(e.line == 4 && e.message.contains("different sizes"), "{e}");
    let e = parse_with(&format!("{dev}size=150%\n")).unwrap_err();
    assert!(e.line == 6 && e.message.contains("at most 100%"), "{e}");
    let e = parse_with(&format!("{dev}offset=100%\nsize=10%\n")).unwrap_err();
    assert!(e.line == 7 && e.message.contains("no block past"), "{e}");
}

/// Every option fio 3.42 has (its source's option tables, listed in `tests/data/fio-3.42-options.txt`)
/// is known to blksim: modelled, a no-op or refused with a reason, never "unknown option" for a job
/// fio runs. (The cross-check does the same against the installed fio's `--cmdhelp=all`.)
#[test]
fn every_option_of_fio_3_42_is_known() {
    let list = include_str!("../../tests/data/fio-3.42-options.txt");
    let mut table = "";
    let mut missing = Vec::new();
    let mut seen = 0;
    for line in list.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        if let Some(t) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            table = t;
            continue;
        }
        seen += 1;
        let engine = (table != "general").then_some(table);
        if option_status(line, engine).is_none() {
            missing.push(format!("{table}: {line}"));
        }
    }
    assert!(seen > 300, "{seen} options listed");
    assert!(missing.is_empty(), "fio 3.42 options blksim does not know: {missing:?}");
}
