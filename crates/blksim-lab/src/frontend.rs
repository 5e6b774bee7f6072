//! Front ends other than fio, as a run's workload: `dsa-memfill`, a kernel
//! DSA client doing memfill (`blksim dsa-memfill ARGS`, or `program =
//! "dsa-memfill"` in an experiment).

use blksim::machine::Machine;
use blksim::workload::{DsaClientConfig, IoEngine, IoUringOptions, JobConfig, Program, RwKind};
use blksim::{Error, Workload};

pub const DSA_MEMFILL_USAGE: &str = "dsa-memfill [--devices DEV,...] [--wq N|dedicated] [--op memfill] [--bytes N] \
[--outstanding N] [--irq-cpu CPU] [--runtime TIME]";

pub use blksim::settings::parse_time_ns;

/// A bad-input error saying `message` (what the parsers below say).
fn bad(message: String) -> Error {
    Error::bad_input(message)
}

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

/// `--opt=VALUE` as the option's name and its inline value; anything else as itself.
pub fn split_inline(arg: &str) -> (&str, Option<&str>) {
    match arg.split_once('=') {
        Some((n, v)) if n.starts_with("--") => (n, Some(v)),
        _ => (arg, None),
    }
}

/// The memfill client's settings, as its arguments give them.
struct MemfillArgs {
    /// `--devices`; without it, every DSA device of the machine.
    devices: Option<Vec<String>>,
    wq: u32,
    bytes: u32,
    outstanding: u32,
    irq_cpu: Option<u32>,
    runtime_ns: u64,
}

impl Default for MemfillArgs {
    fn default() -> Self {
        MemfillArgs { devices: None, wq: 0, bytes: 4096, outstanding: 32, irq_cpu: None, runtime_ns: 10_000_000 }
    }
}

/// A `dsa-memfill` count: `v` as a number, for option `what`.
fn memfill_number(v: &str, what: &str) -> Result<u32, String> {
    v.parse::<u32>().map_err(|_| format!("dsa-memfill: {what}: expected a number, got '{v}'"))
}

impl MemfillArgs {
    /// Take option `name`, its value from `value`.
    fn option(&mut self, name: &str, value: &mut dyn FnMut() -> Result<String, Error>) -> Result<(), Error> {
        match name {
            "--devices" => self.devices = Some(value()?.split(',').map(str::to_string).collect()),
            "--wq" => {
                let v = value()?;
                // A dedicated WQ is the device's first (and here only) work queue.
                self.wq = if v == "dedicated" { 0 } else { memfill_number(&v, "--wq").map_err(bad)? };
            }
            "--op" => {
                let v = value()?;
                if v != "memfill" {
                    return Err(Error::not_modelled(format!("dsa-memfill: --op {v}: only memfill is modelled")));
                }
            }
            "--bytes" => self.bytes = parse_size(&value()?).map_err(bad)?,
            "--outstanding" => self.outstanding = memfill_number(&value()?, "--outstanding").map_err(bad)?,
            "--irq-cpu" => self.irq_cpu = Some(memfill_number(&value()?, "--irq-cpu").map_err(bad)?),
            "--runtime" => self.runtime_ns = parse_time_ns(&value()?).map_err(bad)?,
            other => return Err(bad(format!("dsa-memfill: unknown option '{other}'\nusage: {DSA_MEMFILL_USAGE}"))),
        }
        Ok(())
    }
}

/// The `dsa-memfill` arguments, `--opt VALUE` or `--opt=VALUE`.
fn parse_memfill(args: &[String]) -> Result<MemfillArgs, Error> {
    let mut a = MemfillArgs::default();
    let mut i = 0;
    while i < args.len() {
        let (name, inline) = split_inline(&args[i]);
        let mut value = || -> Result<String, Error> {
            if let Some(v) = inline {
                return Ok(v.to_string());
            }
            i += 1;
            args.get(i)
                .cloned()
                .ok_or_else(|| bad(format!("dsa-memfill: {name} needs a value\nusage: {DSA_MEMFILL_USAGE}")))
        };
        a.option(name, &mut value)?;
        i += 1;
    }
    Ok(a)
}

/// The `dsa-memfill` arguments (whitespace-separated) as a workload on `machine`:
/// one client per device, each on its work queue.
pub fn dsa_memfill(args: &[String], machine: &Machine) -> Result<Workload, Error> {
    let a = parse_memfill(args)?;
    let devices = a.devices.unwrap_or_else(|| dsa_devices(machine));
    if devices.is_empty() {
        return Err(bad(format!("dsa-memfill: machine '{}' has no DSA device", machine.name)));
    }
    let dsa = devices
        .into_iter()
        .map(|device| DsaClientConfig {
            device,
            wq: a.wq,
            outstanding: a.outstanding,
            bytes: a.bytes,
            runtime_ns: a.runtime_ns,
            irq_cpu: a.irq_cpu,
        })
        .collect();
    Ok(Workload { jobs: Vec::new(), dsa })
}

/// The names of the machine's DSA devices.
fn dsa_devices(machine: &Machine) -> Vec<String> {
    machine.devices.iter().filter(|d| d.is_dsa()).map(|d| d.name.clone()).collect()
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
        assert!(dsa_memfill(&args("--op memcpy"), &m).unwrap_err().message.contains("only memfill"));
        assert!(dsa_memfill(&args("--frob"), &m).unwrap_err().message.contains("unknown option"));
        let nvme = blksim::machine::builtin("spr-gen5").unwrap();
        assert!(dsa_memfill(&[], &nvme).unwrap_err().message.contains("no DSA device"));
    }
}

pub const T_IO_URING_USAGE: &str = "t-io_uring [-b BS] [-d DEPTH] [-c COMPLETE_BATCH] [-s SUBMIT_BATCH] [-p 0/1] \
[-F 0/1] [-B 0/1] [-n THREADS] [-O 1] [-R 0/1] [-X 0/1] [-S 0/1] [-u 0/1] [-t 0] [-T HZ] [-P 0] [-V 0/1] [-e 0/1] \
[-r RUNTIME] [--taskset CPUS] [--] DEVICE...";

/// The simulated runtime when t/io_uring is given none (`-r 0` is its "unlimited").
pub const T_IO_URING_DEFAULT_RUNTIME_NS: u64 = 10_000_000;

/// t/io_uring's settings, as its command line gives them.
struct TIoUringArgs {
    bs: u64,
    depth: u32,
    complete: u32,
    submit: u32,
    threads: u32,
    polled: bool,
    fixed_files: bool,
    fixed_bufs: bool,
    random: bool,
    sync: bool,
    register_ring: bool,
    passthru: bool,
    /// `-O 0`: opened without O_DIRECT (refused but for passthrough).
    buffered: bool,
    runtime_ns: u64,
    taskset: Option<Vec<u32>>,
    files: Vec<String>,
    notes: Vec<String>,
}

/// t/io_uring's defaults (depth 128, batches 32, 4 KiB, polled, fixed
/// files and buffers, random, registered ring), and 10 ms.
impl Default for TIoUringArgs {
    fn default() -> Self {
        TIoUringArgs {
            bs: 4096,
            depth: 128,
            complete: 32,
            submit: 32,
            threads: 1,
            polled: true,
            fixed_files: true,
            fixed_bufs: true,
            random: true,
            sync: false,
            register_ring: true,
            passthru: false,
            buffered: false,
            runtime_ns: T_IO_URING_DEFAULT_RUNTIME_NS,
            taskset: None,
            files: Vec::new(),
            notes: Vec::new(),
        }
    }
}

/// t/io_uring's message for a bad value `v` of option `what`.
fn t_io_uring_bad(what: &str, v: &str) -> String {
    format!("t/io_uring: {what}: bad value '{v}'\nusage: {T_IO_URING_USAGE}")
}

/// A number for t/io_uring's option `what`.
fn t_io_uring_number<T: std::str::FromStr>(what: &str, v: &str) -> Result<T, String> {
    v.parse().map_err(|_| t_io_uring_bad(what, v))
}

/// A 0/1 flag for t/io_uring's option `what` (t/io_uring reads `!!atoi()`: any non-zero number is 1).
fn t_io_uring_flag(what: &str, v: &str) -> Result<bool, String> {
    match v.parse::<i64>() {
        Ok(n) => Ok(n != 0),
        Err(_) => Err(t_io_uring_bad(what, v)),
    }
}

impl TIoUringArgs {
    /// Take option `opt` (its value from `value`), or device `opt`.
    fn option(&mut self, opt: &str, value: &mut dyn FnMut() -> Result<String, Error>) -> Result<(), Error> {
        match opt {
            "-b" => self.bs = t_io_uring_number(opt, &value()?).map_err(bad)?,
            "-d" => self.depth = t_io_uring_number(opt, &value()?).map_err(bad)?,
            // t/io_uring: a batch of 0 is 1.
            "-c" => self.complete = t_io_uring_number::<u32>(opt, &value()?).map_err(bad)?.max(1),
            "-s" => self.submit = t_io_uring_number::<u32>(opt, &value()?).map_err(bad)?.max(1),
            "-n" => self.threads = t_io_uring_number(opt, &value()?).map_err(bad)?,
            "-p" => self.polled = t_io_uring_flag(opt, &value()?).map_err(bad)?,
            "-F" => self.fixed_files = t_io_uring_flag(opt, &value()?).map_err(bad)?,
            "-B" => self.fixed_bufs = t_io_uring_flag(opt, &value()?).map_err(bad)?,
            "-R" => self.random = t_io_uring_flag(opt, &value()?).map_err(bad)?,
            "-S" => self.sync = t_io_uring_flag(opt, &value()?).map_err(bad)?,
            "-X" => self.register_ring = t_io_uring_flag(opt, &value()?).map_err(bad)?,
            "-u" => self.passthru = t_io_uring_flag(opt, &value()?).map_err(bad)?,
            // The TSC rate only scales latency tracking (-t), which is not modelled.
            "-T" => {
                t_io_uring_number::<u64>(opt, &value()?).map_err(bad)?;
            }
            // Vectored reads (READV) only matter without fixed buffers; the
            // opcode restriction filter is set once at ring setup.
            "-V" | "-e" => {
                t_io_uring_flag(opt, &value()?).map_err(bad)?;
            }
            "-O" => self.buffered = !t_io_uring_flag(opt, &value()?).map_err(bad)?,
            "-t" | "-a" | "-N" | "-P" | "-H" => check_modelled(opt, value)?,
            "-r" => {
                let v = value()?;
                self.runtime_ns = blksim::settings::parse_time_ns(&v).map_err(bad)?;
                if self.runtime_ns == 0 {
                    self.runtime_ns = T_IO_URING_DEFAULT_RUNTIME_NS;
                    self.notes.push(format!(
                        "-r {v}: t/io_uring runs until interrupted; blksim simulates {} ms",
                        T_IO_URING_DEFAULT_RUNTIME_NS / 1_000_000
                    ));
                }
            }
            "--taskset" => {
                self.taskset =
                    Some(blksim::settings::parse_cpu_list(&value()?).map_err(|e| bad(format!("--taskset: {e}")))?)
            }
            s if s.starts_with('-') => {
                return Err(bad(format!("t/io_uring: unknown option '{s}'\nusage: {T_IO_URING_USAGE}")))
            }
            f => self.files.push(f.to_string()),
        }
        Ok(())
    }

    /// At least one device, and no zero size, depth or thread count.
    fn check(&self) -> Result<(), Error> {
        if self.files.is_empty() {
            return Err(bad(format!("t/io_uring: no device given\nusage: {T_IO_URING_USAGE}")));
        }
        if self.threads == 0 {
            return Err(bad("Threads must be non-zero".into()));
        }
        if self.depth == 0 || self.bs == 0 {
            return Err(bad("t/io_uring: -b and -d must be > 0 (io_uring_setup: Invalid argument)".into()));
        }
        // Its open of each file (O_RDONLY | O_NOATIME, O_DIRECT unless -O0): a
        // character device refuses O_DIRECT, and passthrough has no page cache.
        if let (true, false, Some(ng)) =
            (self.passthru, self.buffered, self.files.iter().find(|f| f.starts_with("/dev/ng")))
        {
            return Err(bad(format!(
                "t/io_uring: -u 1 opens {ng} with O_DIRECT (-O 1, its default), which a character device refuses \
                 (open: Invalid argument); add -O 0 (passthrough bypasses the page cache anyway)"
            )));
        }
        // Its passthrough setup (get_file_size) checks -b against the namespace's logical block.
        if self.passthru && !self.bs.is_multiple_of(512) {
            return Err(bad(format!(
                "t/io_uring: error: bs:{} should be a multiple logical_block_size:512 (-u 1 sends whole logical blocks)",
                self.bs
            )));
        }
        if self.buffered && !self.passthru {
            return Err(Error::not_modelled(
                "t/io_uring: -O 0: buffered I/O goes through the page cache, which blksim does not model".to_string(),
            ));
        }
        if self.bs > i32::MAX as u64 {
            // t/io_uring keeps its block size in an int (atoi).
            return Err(bad(format!(
                "t/io_uring: -b {}: bad value (its block size is an int: at most {})\nusage: {T_IO_URING_USAGE}",
                self.bs,
                i32::MAX
            )));
        }
        Ok(())
    }
}

/// Refuse what t/io_uring can do but the model does not: latency tracking, legacy aio, no-op requests, NUMA placement, NVMe
/// passthrough, hugetlbfs buffers.
fn check_modelled(opt: &str, value: &mut dyn FnMut() -> Result<String, Error>) -> Result<(), Error> {
    let v = value()?;
    let on = |v: &str| t_io_uring_flag(opt, v).map_err(bad);
    let what = match opt {
        "-t" if on(&v)? => "latency tracking (-t 1) is not modelled",
        "-a" if on(&v)? => "legacy aio (-a 1) is not modelled in the t/io_uring front end (fio's libaio engine is)",
        "-N" if on(&v)? => "no-op requests (-N 1) are not modelled",
        "-P" if on(&v)? => "placement on the device's home node (-P 1) is not modelled",
        "-H" => "hugetlbfs buffers (-H) are not modelled",
        _ => return Ok(()),
    };
    Err(Error::not_modelled(format!("t/io_uring: {opt} {v}: {what}")))
}

/// getopt style: `-b512` is `-b 512`.
fn getopt_split(args: &[String]) -> Vec<String> {
    args.iter()
        .flat_map(|a| match a.strip_prefix('-') {
            Some(r) if r.chars().count() > 1 && !r.starts_with('-') && !r.starts_with('/') => {
                // The option is one character (any character: `-é5` is `-é 5`, refused later).
                let first = r.chars().next().map_or(0, char::len_utf8);
                vec![format!("-{}", &r[..first]), r[first..].to_string()]
            }
            _ => vec![a.clone()],
        })
        .collect()
}

/// t/io_uring's command line: its options, then the devices (all after `--` are devices).
fn parse_t_io_uring(args: &[String]) -> Result<TIoUringArgs, Error> {
    let args = getopt_split(args);
    let mut a = TIoUringArgs::default();
    let mut i = 0;
    while i < args.len() {
        let opt = args[i].as_str();
        if opt == "--" {
            a.files.extend(args[i + 1..].iter().cloned());
            break;
        }
        let mut value = || -> Result<String, Error> {
            i += 1;
            args.get(i)
                .cloned()
                .ok_or_else(|| bad(format!("t/io_uring: {opt} needs a value\nusage: {T_IO_URING_USAGE}")))
        };
        a.option(opt, &mut value)?;
        i += 1;
    }
    a.check()?;
    Ok(a)
}

/// fio's `t/io_uring` command line as a workload: `-n` submitter threads,
/// each with its own ring, given files as t/io_uring's `main()` assigns
/// them (`threads_per_f = nthreads / nfiles`, the remainder to the first
/// files; with fewer threads than files, round-robin). Defaults are
/// t/io_uring's (depth 128, batches 32, 4 KiB, polled, fixed files and
/// buffers, random). `-r` takes seconds or a time with a unit (`-r 0`,
/// t/io_uring's "unlimited", is 10 ms); `--taskset` allows the threads the
/// CPUs listed, as `taskset -c` would (the scheduler spreads them).
pub fn t_io_uring(args: &[String]) -> Result<Workload, Error> {
    t_io_uring_with_notes(args).map(|(w, _)| w)
}

/// `t_io_uring`, and the notes to show the user (what blksim made of an option).
pub fn t_io_uring_with_notes(args: &[String]) -> Result<(Workload, Vec<String>), Error> {
    let a = parse_t_io_uring(args)?;
    let n = a.threads as usize;
    let mut files: Vec<Vec<String>> = vec![Vec::new(); n];
    let nfiles = a.files.len();
    let (mut per, mut rem) = (n / nfiles, 0i64);
    if per == 0 {
        per = 1;
    } else {
        rem = (n - per * nfiles) as i64;
    }
    let mut j = 0;
    for f in &a.files {
        let limit = per + usize::from(rem > 0);
        for k in 0..limit {
            files[(j + k) % n].push(f.clone());
        }
        rem -= 1;
        j += limit;
    }
    let jobs = files.into_iter().enumerate().map(|(t, mine)| submitter_job(&a, t as u32, mine)).collect();
    Ok((Workload { jobs, dsa: Vec::new() }, a.notes))
}

/// Submitter thread `t`, on `files`: a time-based, direct, random-read io_uring job.
fn submitter_job(a: &TIoUringArgs, t: u32, files: Vec<String>) -> JobConfig {
    let mut j = JobConfig::new(&format!("submitter{t}"));
    j.program = Program::TIoUring;
    j.ioengine = if a.sync {
        // submitter_sync_fn: one preadv2 per I/O, RWF_HIPRI with -p1.
        IoEngine::Pvsync2 { hipri: a.polled }
    } else {
        let o = IoUringOptions {
            hipri: a.polled,
            fixedbufs: a.fixed_bufs,
            registerfiles: a.fixed_files,
            register_ring: a.register_ring,
            ..Default::default()
        };
        // -u1: NVMe passthrough (IORING_OP_URING_CMD) on /dev/ngXnY.
        if a.passthru {
            IoEngine::IoUringCmd(o)
        } else {
            IoEngine::IoUring(o)
        }
    };
    j.rw = if a.random { RwKind::RandRead } else { RwKind::Read };
    j.bs = [a.bs; 3];
    let depth = if a.sync { 1 } else { a.depth };
    j.iodepth = depth;
    j.iodepth_low = depth;
    // Both batches are clamped to the depth.
    j.iodepth_batch_submit = a.submit.clamp(1, depth);
    j.iodepth_batch_complete_min = a.complete.clamp(1, depth);
    j.iodepth_batch_complete_max = depth;
    j.direct = !a.buffered;
    j.norandommap = true;
    j.thread = true;
    j.time_based = true;
    j.runtime_ns = Some(a.runtime_ns);
    j.filenames = files;
    j.cpus_allowed = a.taskset.clone();
    j
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
        assert!(t_io_uring(&["-a".into(), "0".into(), "/dev/x".into()]).is_ok());
        assert!(t_io_uring(&["-d".into(), "8".into()]).unwrap_err().message.contains("no device"));
    }

    #[test]
    fn files_go_to_threads_as_t_io_uring_assigns_them() {
        let files = |args: &str| -> Vec<Vec<String>> {
            let a: Vec<String> = args.split_whitespace().map(str::to_string).collect();
            t_io_uring(&a).unwrap().jobs.into_iter().map(|j| j.filenames).collect()
        };
        // More threads than files: each file to threads_per_f threads, the remainder first.
        assert_eq!(files("-n3 -- /dev/a /dev/b"), [vec!["/dev/a"], vec!["/dev/a"], vec!["/dev/b"]]);
        // One file, two threads: both do I/O to it.
        assert_eq!(files("-n2 -- /dev/a"), [vec!["/dev/a"], vec!["/dev/a"]]);
        // Fewer threads than files: round-robin.
        assert_eq!(files("-n2 -- /dev/a /dev/b /dev/c"), [vec!["/dev/a", "/dev/c"], vec!["/dev/b"]]);
        // -c0 and -s0 are 1, -r 0 is the default runtime with a note.
        let a: Vec<String> = "-c0 -s0 -r 0 /dev/a".split_whitespace().map(str::to_string).collect();
        let (w, notes) = t_io_uring_with_notes(&a).unwrap();
        assert_eq!((w.jobs[0].iodepth_batch_complete_min, w.jobs[0].iodepth_batch_submit), (1, 1));
        assert_eq!(w.jobs[0].runtime_ns, Some(T_IO_URING_DEFAULT_RUNTIME_NS));
        assert!(notes[0].contains("until interrupted"), "{notes:?}");
    }

    /// Found by the `t_io_uring_options` fuzz target: a multi-byte character after `-` panicked.
    #[test]
    fn an_option_of_any_character_is_refused_not_a_panic() {
        let e = t_io_uring(&["-\u{fffd}5".into(), "/dev/x".into()]).unwrap_err();
        assert!(e.message.contains("unknown option '-\u{fffd}'"), "{e}");
    }

    #[test]
    fn what_the_model_lacks_is_refused_as_not_modelled_and_a_bad_value_as_bad_input() {
        let args = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        for refused in ["-t1 /dev/x", "-a 1 /dev/x", "-O0 /dev/x", "-H /dev/x"] {
            let e = t_io_uring(&args(refused)).unwrap_err();
            assert_eq!(e.kind, blksim::ErrorKind::NotModelled, "{refused}: {e}");
        }
        // Passthrough on a char device: buffered is the only open that works; O_DIRECT is refused by Linux.
        assert!(t_io_uring(&args("-u1 -O0 /dev/ng0n1")).is_ok_and(|w| !w.jobs[0].direct));
        let e = t_io_uring(&args("-u1 /dev/ng0n1")).unwrap_err();
        assert!(e.message.contains("O_DIRECT") && e.message.contains("-O 0"), "{e}");
        for bad in [
            "-b x /dev/x",
            "-d0 /dev/x",
            "-q 1 /dev/x",
            "-b512",
            "-b 4294967296 /dev/x",
            "-u1 /dev/ng0n1",
            "-u1 -O0 -b1000 /dev/ng0n1",
        ] {
            let e = t_io_uring(&args(bad)).unwrap_err();
            assert_eq!(e.kind, blksim::ErrorKind::BadInput, "{bad}: {e}");
        }
        let m = blksim::machine::builtin("spr-dsa").unwrap();
        assert_eq!(dsa_memfill(&args("--op memcpy"), &m).unwrap_err().kind, blksim::ErrorKind::NotModelled);
    }
}
