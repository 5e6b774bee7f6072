//! I/O priorities as fio sets them and the kernel takes them: libaio's and
//! io_uring's `cmdprio_percentage` and `cmdprio_bssplit` (fio's
//! `engines/cmdprio.c`), the job's own `prioclass`/`prio`, fio's
//! per-priority latencies (`prios` in JSON, `clat prio C/L/H` in the normal
//! report, the logs' prio column, `group_reporting`'s merge), mq-deadline's
//! dispatch by priority class (none and kyber ignore it), and the refusals.

use serde_json::Value;

/// Run the job text with `args` in a scratch directory: (exit code, stdout, stderr, the directory).
fn run(job: &str, args: &[&str]) -> (i32, String, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("job.fio"), job).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_blksim"))
        .arg("run")
        .arg("job.fio")
        .args(args)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), s(&out.stdout), s(&out.stderr), dir)
}

fn json(job: &str, args: &[&str]) -> Value {
    let mut a = vec!["--output-format", "json+"];
    a.extend_from_slice(args);
    let (code, out, err, _) = run(job, &a);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// A random-read libaio job on the first NVMe drive with `extra` options.
fn job(extra: &str) -> String {
    format!(
        "[t]\nfilename=/dev/nvme0n1\ndirect=1\nioengine=libaio\nrw=randread\nbs=4k\niodepth=8\nnorandommap\n\
         time_based\nruntime=10ms\n{extra}"
    )
}

/// A direction's per-priority entries: (class, level, hint, N).
fn prios(dir: &Value) -> Vec<(u64, u64, u64, u64)> {
    let Some(p) = dir.get("prios").and_then(Value::as_array) else { return vec![] };
    let key = if p[0].get("lat_ns").is_some() { "lat_ns" } else { "clat_ns" };
    let u = |v: &Value| v.as_u64().unwrap();
    p.iter().map(|e| (u(&e["prioclass"]), u(&e["prio"]), u(&e["priohint"]), u(&e[key]["N"]))).collect()
}

#[test]
fn cmdprio_percentage_splits_the_latencies_by_priority_as_fio_reports_them() {
    let v = json(&job("cmdprio_percentage=30\n"), &[]);
    let r = &v["jobs"][0]["read"];
    let p = prios(r);
    // fio's order: the job's own priority (none set: 0/0/0), then cmdprio's (RT, level 0).
    assert_eq!(p.iter().map(|e| (e.0, e.1, e.2)).collect::<Vec<_>>(), [(0, 0, 0), (1, 0, 0)]);
    let n = r["clat_ns"]["N"].as_u64().unwrap();
    assert_eq!(p[0].3 + p[1].3, n);
    let share = p[1].3 as f64 / n as f64;
    assert!((0.25..0.35).contains(&share) && n > 500, "{} of {n} real-time", p[1].3);
    // Right after lat_ns, with clat's percentiles and, in json+, bins.
    let keys: Vec<&String> = r.as_object().unwrap().keys().collect();
    let at = keys.iter().position(|k| *k == "prios").unwrap();
    assert_eq!((keys[at - 1].as_str(), keys[at + 1].as_str()), ("lat_ns", "bw_min"));
    let e = &r["prios"][1]["clat_ns"];
    assert!(e["percentile"].is_object() && e["bins"].is_object(), "{e}");
    // lat_percentiles: the entries hold lat.
    let v = json(&job("cmdprio_percentage=30\nlat_percentiles=1\n"), &[]);
    let e = &v["jobs"][0]["read"]["prios"][0];
    assert!(e.get("lat_ns").is_some() && e.get("clat_ns").is_none(), "{e}");
    // The normal report: fio 3.42's lines.
    let (code, text, err, _) = run(&job("cmdprio_percentage=30\n"), &[]);
    assert_eq!(code, 0, "{err}");
    for line in ["    clat prio 0/0/0 (usec): min=", "    clat prio 1/0/0 (usec): min=", "    clat prio 1/0/0 ("] {
        assert!(text.contains(line), "{line}: {text}");
    }
    let pct =
        text.lines().find(|l| l.starts_with("    clat prio 1/0/0 (") && l.ends_with("% of IOs) percentiles (usec):"));
    assert!(pct.is_some(), "{text}");
    // Not without cmdprio, nor with the job's priority alone.
    for extra in ["", "prioclass=1\nprio=4\n", "cmdprio_percentage=100\n"] {
        let v = json(&job(extra), &[]);
        assert!(v["jobs"][0]["read"].get("prios").is_none(), "{extra}");
    }
}

#[test]
fn cmdprio_bssplit_gives_each_block_size_its_priorities_and_the_logs_say_which() {
    let j = "[t]\nfilename=/dev/nvme0n1\ndirect=1\nioengine=libaio\nrw=randrw\niodepth=4\nnorandommap\n\
             time_based\nruntime=50ms\nbssplit=64k/40:1024k/60,1024k/100\n\
             cmdprio_bssplit=64k/25/1/1:64k/75/3/2:1024k/0,1024k/0\nwrite_lat_log=t\nlog_prio=1\n";
    let (code, out, err, dir) = run(j, &["--output-format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let job = &v["jobs"][0];
    let order: Vec<_> = prios(&job["read"]).iter().map(|e| (e.0, e.1)).collect();
    assert_eq!(order, [(0, 0), (1, 1), (3, 2)]);
    assert!(job["write"].get("prios").is_none(), "1024k/0: the writes keep the job's priority");
    // log_prio: the whole ioprio. 64k reads are RT/1 (0x2001) or IDLE/2 (0x6002), 1M I/Os 0.
    let log = std::fs::read_to_string(dir.path().join("t_clat.1.log")).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for line in log.lines() {
        let f: Vec<&str> = line.split(", ").collect();
        let (bs, prio) = (f[3], f[4]);
        match bs {
            "65536" => assert!(prio == "0x2001" || prio == "0x6002", "{line}"),
            _ => assert_eq!(prio, "0x0000", "{line}"),
        }
        seen.insert(prio.to_string());
    }
    assert_eq!(seen.len(), 3, "{seen:?}");
}

#[test]
fn the_jobs_own_priority_is_the_first_entry_and_the_logs_mark_real_time_io() {
    let (code, out, err, dir) =
        run(&job("prioclass=2\nprio=7\ncmdprio_percentage=20\nwrite_lat_log=t\n"), &["--output-format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let p = prios(&v["jobs"][0]["read"]);
    assert_eq!(p.iter().map(|e| (e.0, e.1)).collect::<Vec<_>>(), [(2, 7), (1, 0)]);
    // Without log_prio the column is 1 for a real-time I/O, else 0.
    let log = std::fs::read_to_string(dir.path().join("t_clat.1.log")).unwrap();
    let rt = log.lines().filter(|l| l.ends_with(", 1")).count() as u64;
    assert_eq!(rt, p[1].3, "{log}");
    assert_eq!(log.lines().count() as u64 - rt, p[0].3);
}

#[test]
fn group_reporting_merges_the_priorities_as_fio_does() {
    let v = json(&job("cmdprio_percentage=50\nnumjobs=2\ngroup_reporting\n"), &[]);
    assert_eq!(v["jobs"].as_array().unwrap().len(), 1);
    let r = &v["jobs"][0]["read"];
    let p = prios(r);
    assert_eq!(p.iter().map(|e| (e.0, e.1)).collect::<Vec<_>>(), [(0, 0), (1, 0)]);
    assert_eq!(p[0].3 + p[1].3, r["clat_ns"]["N"].as_u64().unwrap());
    // Jobs of different priorities in one group: entries though no job has cmdprio; apart, none.
    let two = "[global]\nfilename=/dev/nvme0n1\ndirect=1\nioengine=libaio\nrw=randread\nbs=4k\niodepth=4\n\
               time_based\nruntime=5ms\nnorandommap\n[a]\nprioclass=2\nprio=7\n[b]\nprioclass=3\nprio=0\n";
    let v = json(two, &[]);
    assert!(v["jobs"][0]["read"].get("prios").is_none() && v["jobs"][1]["read"].get("prios").is_none());
    let grouped = two.replace("[global]\n", "[global]\ngroup_reporting\n");
    let v = json(&grouped, &[]);
    let order: Vec<_> = prios(&v["jobs"][0]["read"]).iter().map(|e| (e.0, e.1)).collect();
    assert_eq!(order, [(2, 7), (3, 0)]);
    // The first member's list, then the others' new priorities in job order (fio 3.33 gives this order).
    let mixed = "[global]\nfilename=/dev/nvme0n1\ndirect=1\nioengine=libaio\nrw=randread\nbs=4k\niodepth=4\n\
                 time_based\nruntime=5ms\nnorandommap\ngroup_reporting\n\
                 [a]\nprioclass=2\nprio=7\ncmdprio_percentage=30\ncmdprio=3\n[b]\ncmdprio_percentage=50\n";
    let v = json(mixed, &[]);
    let order: Vec<_> = prios(&v["jobs"][0]["read"]).iter().map(|e| (e.0, e.1)).collect();
    assert_eq!(order, [(2, 7), (1, 3), (0, 0), (1, 0)]);
}

#[test]
fn mq_deadline_dispatches_real_time_requests_first_and_none_and_kyber_do_not() {
    // null_blk with 8 tags and 20 us completions (timer mode): requests queue in the scheduler.
    let j = "[t]\nfilename=/dev/nullb0\ndirect=1\nioengine=libaio\nrw=randread\nbs=4k\niodepth=32\nnorandommap\n\
             time_based\nruntime=20ms\ncmdprio_percentage=20\n";
    let mean = |sched: &str| {
        let set = format!("/sys/block/nullb0/queue/scheduler={sched}");
        let cmdline = "null_blk.hw_queue_depth=8 null_blk.irqmode=2 null_blk.completion_nsec=20000";
        let v = json(j, &["--machine", "ryzen-7950x", "--cmdline", cmdline, "--set", &set]);
        let p = &v["jobs"][0]["read"]["prios"];
        let m = |i: usize| p[i]["clat_ns"]["mean"].as_f64().unwrap();
        (m(0), m(1))
    };
    let (be, rt) = mean("mq-deadline");
    assert!(rt < 0.9 * be, "mq-deadline: real time {rt} ns against best effort {be} ns");
    for sched in ["none", "kyber"] {
        let (be, rt) = mean(sched);
        assert!((rt - be).abs() < 0.02 * be, "{sched}: real time {rt} ns against best effort {be} ns");
    }
}

#[test]
fn cmdprio_errors_are_said_as_fio_says_them() {
    for (extra, engine, says) in [
        ("cmdprio_percentage=50\ncmdprio_bssplit=4k/50/1/0\n", "libaio", "mutually exclusive"),
        ("cmdprio_bssplit=4k/60/1/0:4k/50/3/0\n", "libaio", "exceeds 100"),
        ("cmdprio=9\ncmdprio_percentage=10\n", "libaio", "largest value, 7"),
        ("cmdprio_bssplit=4k/50/1\n", "libaio", "invalid cmdprio_bssplit format"),
        ("cmdprio_percentage=50\n", "psync", "not an option of ioengine=psync"),
        ("cmdprio_percentage=50\n", "io_uring_cmd", "passthrough command's priority"),
    ] {
        let text = job(extra).replace("ioengine=libaio", &format!("ioengine={engine}"));
        let (code, _, err, _) = run(&text, &[]);
        assert_eq!(code, 2, "{extra}: {err}");
        assert!(err.contains(says) && err.contains("job.fio:"), "{extra}: {err}");
    }
}
