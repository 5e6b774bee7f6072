//! Front ends other than fio, as a run's workload: `dsa-memfill`, a kernel
//! DSA client doing memfill (`blksim dsa-memfill ARGS`, or `program =
//! "dsa-memfill"` in an experiment).

use blksim::machine::{DeviceKind, Machine};
use blksim::workload::DsaClientConfig;
use blksim::Workload;

pub const DSA_MEMFILL_USAGE: &str = "dsa-memfill [--devices DEV,...] [--wq N|dedicated] [--op memfill] [--bytes N] \
[--outstanding N] [--irq-cpu CPU] [--runtime TIME]";

pub use blksim::settings::parse_time_ns;

/// A size like `512`, `4k`, `1m` (powers of 1024), in bytes.
fn parse_size(s: &str) -> Result<u32, String> {
    let t = s.trim().to_ascii_lowercase();
    let (num, mult) = match t.strip_suffix('k') {
        Some(n) => (n, 1024),
        None => match t.strip_suffix('m') {
            Some(n) => (n, 1 << 20),
            None => (t.as_str(), 1),
        },
    };
    let n: u32 = num.parse().map_err(|_| format!("--bytes '{s}': expected a size like 512 or 4k"))?;
    n.checked_mul(mult).filter(|&b| b > 0).ok_or_else(|| format!("--bytes '{s}': out of range"))
}

/// The `dsa-memfill` arguments (whitespace-separated) as a workload on `machine`:
/// one client per device, each on its work queue.
pub fn dsa_memfill(args: &[String], machine: &Machine) -> Result<Workload, String> {
    let mut devices: Vec<String> =
        machine.devices.iter().filter(|d| matches!(d.kind, DeviceKind::Dsa(_))).map(|d| d.name.clone()).collect();
    let (mut wq, mut bytes, mut outstanding, mut irq_cpu, mut runtime_ns) = (0u32, 4096u32, 32u32, None, 10_000_000u64);
    let mut i = 0;
    while i < args.len() {
        let (name, inline) = match args[i].split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ => (args[i].clone(), None),
        };
        let mut value = || -> Result<String, String> {
            if let Some(v) = &inline {
                return Ok(v.clone());
            }
            i += 1;
            args.get(i).cloned().ok_or_else(|| format!("dsa-memfill: {name} needs a value\nusage: {DSA_MEMFILL_USAGE}"))
        };
        let num = |v: &str, what: &str| {
            v.parse::<u32>().map_err(|_| format!("dsa-memfill: {what}: expected a number, got '{v}'"))
        };
        match name.as_str() {
            "--devices" => devices = value()?.split(',').map(str::to_string).collect(),
            "--wq" => {
                let v = value()?;
                // A dedicated WQ is the device's first (and here only) work queue.
                wq = if v == "dedicated" { 0 } else { num(&v, "--wq")? };
            }
            "--op" => {
                let v = value()?;
                if v != "memfill" {
                    return Err(format!("dsa-memfill: --op {v}: only memfill is modelled"));
                }
            }
            "--bytes" => bytes = parse_size(&value()?)?,
            "--outstanding" => outstanding = num(&value()?, "--outstanding")?,
            "--irq-cpu" => irq_cpu = Some(num(&value()?, "--irq-cpu")?),
            "--runtime" => runtime_ns = parse_time_ns(&value()?)?,
            other => return Err(format!("dsa-memfill: unknown option '{other}'\nusage: {DSA_MEMFILL_USAGE}")),
        }
        i += 1;
    }
    if devices.is_empty() {
        return Err(format!("dsa-memfill: machine '{}' has no DSA device", machine.name));
    }
    let dsa = devices
        .into_iter()
        .map(|device| DsaClientConfig { device, wq, outstanding, bytes, runtime_ns, irq_cpu })
        .collect();
    Ok(Workload { jobs: Vec::new(), dsa })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn arguments_become_one_client_per_device() {
        let m = blksim::machine::builtin("spr-dsa").unwrap();
        let w = dsa_memfill(
            &args("--devices dsa0,dsa1 --wq dedicated --bytes 4k --outstanding 2 --irq-cpu 3 --runtime 5ms"),
            &m,
        )
        .unwrap();
        assert_eq!(w.dsa.len(), 2);
        assert_eq!(
            w.dsa[1],
            DsaClientConfig {
                device: "dsa1".into(),
                wq: 0,
                outstanding: 2,
                bytes: 4096,
                runtime_ns: 5_000_000,
                irq_cpu: Some(3)
            }
        );
        assert!(dsa_memfill(&args("--op memcpy"), &m).unwrap_err().contains("only memfill"));
        assert!(dsa_memfill(&args("--frob"), &m).unwrap_err().contains("unknown option"));
        let nvme = blksim::machine::builtin("spr-gen5").unwrap();
        assert!(dsa_memfill(&[], &nvme).unwrap_err().contains("no DSA device"));
    }
}

pub const T_IO_URING_USAGE: &str = "t-io_uring [-b BS] [-d DEPTH] [-c COMPLETE_BATCH] [-s SUBMIT_BATCH] [-p 0/1] \
[-F 0/1] [-B 0/1] [-n THREADS] [-O 1] [-R 1] [-X 0/1] [-r RUNTIME] [--taskset CPUS] [--] DEVICE...";

/// fio's `t/io_uring` command line as a workload: `-n` submitter threads,
/// each with its own ring and the files spread round-robin over them.
/// Defaults are t/io_uring's (depth 128, batches 32, 4 KiB, polled, fixed
/// files and buffers). `-r` takes seconds or a time with a unit; `--taskset`
/// pins the threads (one CPU each, in list order) as `taskset` would.
pub fn t_io_uring(args: &[String]) -> Result<Workload, String> {
    use blksim::workload::{IoEngine, IoUringOptions, JobConfig, Program, RwKind};
    let (mut bs, mut depth, mut complete, mut submit, mut threads) = (4096u64, 128u32, 32u32, 32u32, 1u32);
    let (mut polled, mut fixed_files, mut fixed_bufs) = (true, true, true);
    let mut runtime_ns = 10_000_000u64;
    let mut taskset: Option<Vec<u32>> = None;
    let mut files = Vec::new();
    // getopt style: `-b512` is `-b 512`.
    let args: Vec<String> = args
        .iter()
        .flat_map(|a| match a.strip_prefix('-') {
            Some(r) if r.len() > 1 && !r.starts_with('-') && !r.starts_with('/') => {
                vec![format!("-{}", &r[..1]), r[1..].to_string()]
            }
            _ => vec![a.clone()],
        })
        .collect();
    let mut i = 0;
    let bad = |what: &str, v: &str| format!("t/io_uring: {what}: bad value '{v}'\nusage: {T_IO_URING_USAGE}");
    while i < args.len() {
        let a = args[i].as_str();
        let mut value = || -> Result<String, String> {
            i += 1;
            args.get(i).cloned().ok_or_else(|| format!("t/io_uring: {a} needs a value\nusage: {T_IO_URING_USAGE}"))
        };
        let flag = |v: &str, what: &str| match v {
            "0" => Ok(false),
            "1" => Ok(true),
            _ => Err(bad(what, v)),
        };
        match a {
            "--" => {
                files.extend(args[i + 1..].iter().cloned());
                break;
            }
            "-b" => {
                let v = value()?;
                bs = v.parse().map_err(|_| bad("-b", &v))?;
            }
            "-d" => {
                let v = value()?;
                depth = v.parse().map_err(|_| bad("-d", &v))?;
            }
            "-c" => {
                let v = value()?;
                complete = v.parse().map_err(|_| bad("-c", &v))?;
            }
            "-s" => {
                let v = value()?;
                submit = v.parse().map_err(|_| bad("-s", &v))?;
            }
            "-n" => {
                let v = value()?;
                threads = v.parse().map_err(|_| bad("-n", &v))?;
            }
            "-p" => polled = flag(&value()?, "-p")?,
            "-F" => fixed_files = flag(&value()?, "-F")?,
            "-B" => fixed_bufs = flag(&value()?, "-B")?,
            "-X" => {
                flag(&value()?, "-X")?;
            }
            "-O" | "-R" => {
                let v = value()?;
                if v != "1" {
                    return Err(format!("t/io_uring: {a} {v}: only O_DIRECT random I/O (-O 1 -R 1) is modelled"));
                }
            }
            "-t" => {
                let v = value()?;
                if v != "0" {
                    return Err(format!("t/io_uring: -t {v}: latency tracking is not modelled"));
                }
            }
            "-a" | "-S" | "-u" => {
                return Err(format!("t/io_uring: {a}: only the io_uring engine on block devices is modelled"))
            }
            "-r" => runtime_ns = blksim::settings::parse_time_ns(&value()?)?,
            "--taskset" => {
                taskset = Some(blksim::settings::parse_cpu_list(&value()?).map_err(|e| format!("--taskset: {e}"))?)
            }
            s if s.starts_with('-') => {
                return Err(format!("t/io_uring: unknown option '{s}'\nusage: {T_IO_URING_USAGE}"))
            }
            f => files.push(f.to_string()),
        }
        i += 1;
    }
    if files.is_empty() {
        return Err(format!("t/io_uring: no device given\nusage: {T_IO_URING_USAGE}"));
    }
    if depth == 0 || bs == 0 || threads == 0 {
        return Err("t/io_uring: -b, -d and -n must be > 0".into());
    }
    // Both batches are clamped to the depth.
    let (submit, complete) = (submit.clamp(1, depth), complete.clamp(1, depth));
    let mut jobs = Vec::new();
    for t in 0..threads {
        let mine: Vec<String> = files.iter().skip(t as usize).step_by(threads as usize).cloned().collect();
        if mine.is_empty() {
            continue;
        }
        let mut j = JobConfig::new(&format!("submitter{t}"));
        j.program = Program::TIoUring;
        j.ioengine = IoEngine::IoUring(IoUringOptions {
            hipri: polled,
            fixedbufs: fixed_bufs,
            registerfiles: fixed_files,
            ..Default::default()
        });
        j.rw = RwKind::RandRead;
        j.bs = [bs; 3];
        j.iodepth = depth;
        j.iodepth_low = depth;
        j.iodepth_batch_submit = submit;
        // t/io_uring waits for `-c` completions when the ring is full and reaps every CQE there is.
        j.iodepth_batch_complete_min = complete;
        j.iodepth_batch_complete_max = depth;
        j.direct = true;
        j.norandommap = true;
        j.thread = true;
        j.time_based = true;
        j.runtime_ns = Some(runtime_ns);
        j.filenames = mine;
        j.cpus_allowed = taskset.as_ref().map(|cpus| vec![cpus[t as usize % cpus.len()]]);
        jobs.push(j);
    }
    Ok(Workload { jobs, dsa: Vec::new() })
}

#[cfg(test)]
mod t_io_uring_tests {
    use super::*;

    #[test]
    fn the_calibration_command_line_becomes_one_polled_submitter() {
        let args: Vec<String> = "-b512 -d128 -c32 -s32 -p1 -F1 -B1 --taskset 3 /dev/nvme0n1 /dev/nvme1n1"
            .split_whitespace()
            .map(str::to_string)
            .collect();
        let w = t_io_uring(&args).unwrap();
        assert_eq!(w.jobs.len(), 1);
        let j = &w.jobs[0];
        assert_eq!((j.bs[0], j.iodepth, j.iodepth_batch_submit, j.iodepth_batch_complete_min), (512, 128, 32, 32));
        assert_eq!(j.filenames, vec!["/dev/nvme0n1", "/dev/nvme1n1"]);
        assert_eq!(j.cpus_allowed, Some(vec![3]));
        assert!(t_io_uring(&["-a".into(), "1".into(), "/dev/x".into()]).is_err());
        assert!(t_io_uring(&["-d".into(), "8".into()]).unwrap_err().contains("no device"));
    }
}
