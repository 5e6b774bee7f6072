//! The subcommands: `run`, `machines`; `reproduce` and `fit` live in reproduce.rs and fit.rs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use blksim::machine::{
    builtin, builtin_names, load_profile, Builtins, DeviceKind, DeviceSpec, Machine, ProfileSource, ScsiSpec,
};
use blksim::settings::Settings;
use blksim::stats::RunReport;
use blksim_fio::job::{parse_job_files, JobFile, ParseContext};
use blksim_fio::output::{
    write_breakdown, write_interrupts, write_iostat, write_json, write_mpstat, write_normal, write_trace,
};
use serde_json::json;

use crate::args::{parse_run, RunArgs, RUN_USAGE};
use crate::failure::Failure;

const USAGE: &str = "usage: blksim <command>\n\
commands:\n  run JOB.fio... [options]   simulate fio jobs (blksim run --help)\n  \
machines [NAME]            list built-in machine profiles, or show one resolved\n  \
dsa-memfill [options]      drive the DSA devices with a memfill client (blksim dsa-memfill --help)\n  \
t-io_uring [opts] -- DEV.. fio's t/io_uring benchmark on the simulated machine\n  \
reproduce [NAME...|--all]  run calibration experiments: published vs simulated (blksim reproduce --help)\n  \
fit [NAME...] --param COST fit profile costs within their ranges to experiments (blksim fit --help)\n  \
--version                  print the version";

/// The default machine: the built-in Sapphire Rapids Gen5 server.
pub const DEFAULT_MACHINE: &str = "spr-gen5";
/// The default machine of `dsa-memfill`.
pub const DEFAULT_DSA_MACHINE: &str = "spr-dsa";

/// Run the command `argv` names (`--help` as its first argument prints its usage).
pub fn dispatch(argv: &[String]) -> Result<(), Failure> {
    let Some((command, rest)) = argv.split_first() else {
        return Err(USAGE.to_string().into());
    };
    let help = rest.first().is_some_and(|a| a == "--help");
    match command.as_str() {
        "run" if help => print_line(RUN_USAGE),
        "run" => run(rest),
        "machines" => Ok(machines(rest)?),
        "dsa-memfill" if help => print_line(&crate::dsa::dsa_memfill_help()),
        "dsa-memfill" => crate::dsa::dsa_memfill_command(rest),
        "t-io_uring" if help => print_line(&crate::tio_uring::t_io_uring_help()),
        "t-io_uring" => crate::tio_uring::t_io_uring_command(rest),
        "reproduce" => crate::reproduce::reproduce(rest),
        "fit" => crate::fit::fit(rest),
        "--version" | "version" => print_line(&format!("blksim {}", env!("CARGO_PKG_VERSION"))),
        "--help" | "help" | "-h" => print_line(USAGE),
        other => Err(format!("unknown command '{other}'\n{USAGE}").into()),
    }
}

/// Print `text` and a newline on stdout.
fn print_line(text: &str) -> Result<(), Failure> {
    println!("{text}");
    Ok(())
}

/// Profiles next to a user's profile file, for `extends`.
struct DirSource(PathBuf);

impl ProfileSource for DirSource {
    fn profile_text(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.0.join(format!("{name}.toml"))).ok().or_else(|| Builtins.profile_text(name))
    }
}

/// A built-in name, or a TOML profile file.
pub fn load_machine(spec: &str) -> Result<Machine, String> {
    let path = Path::new(spec);
    if spec.ends_with(".toml") || path.exists() {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{spec}: {e}"))?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        load_profile(&text, spec, &DirSource(dir))
    } else {
        builtin(spec)
    }
}

/// Settings from `--cmdline` strings and `--set` sysfs writes, checked against the machine's devices.
pub fn knob_settings(machine: &Machine, cmdline: &[String], sets: &[String]) -> Result<Settings, String> {
    let mut settings = Settings::default();
    for c in cmdline {
        settings.apply_cmdline(c).map_err(|e| format!("--cmdline: {e}"))?;
    }
    let dev_names: Vec<String> = machine.devices.iter().filter(|d| d.is_block()).map(|d| d.name.clone()).collect();
    for s in sets {
        settings.apply_write(s, &dev_names)?;
    }
    Ok(settings)
}

/// `blksim run`: load the machine, build the settings, parse the jobs, simulate, write the outputs.
fn run(argv: &[String]) -> Result<(), Failure> {
    let args = parse_run(argv)?;
    let (machine, settings) = run_machine_and_settings(&args)?;
    let jobs = parse_jobs(&args.job_files, &machine)?;
    let configs: Vec<_> = jobs.jobs.iter().map(|j| j.config.clone()).collect();
    if args.parse_only {
        // Like fio's --parse-only, plus the check that the machine can run the jobs.
        return blksim::validate(&machine, &settings, &configs).map_err(|e| locate(&jobs, e));
    }
    let wall = Instant::now();
    let options = blksim::RunOptions {
        trace_window_ns: args.trace.as_ref().map(|_| args.trace_window_ns),
        timed: args.knobs.at.clone(),
    };
    let (report, _) =
        blksim::run_with(&machine, &settings, &configs, args.knobs.seed, &options).map_err(|e| locate(&jobs, e))?;
    write_trace_file(&args, &report)?;
    let extra = run_json_extra(&machine, &settings, &report, wall.elapsed().as_nanos() as u64);
    let out = run_output(&args, &report, &jobs, extra);
    Ok(write_output(args.output.as_deref(), out)?)
}

/// The machine and settings of `run`: the machine options, then `--patch`es.
fn run_machine_and_settings(args: &RunArgs) -> Result<(Machine, Settings), String> {
    let (machine, mut settings) = args.knobs.machine_and_settings(DEFAULT_MACHINE)?;
    for p in &args.patches {
        settings.apply_patch(p)?;
    }
    Ok((machine, settings))
}

/// The job files, parsed as fio would on `machine`.
fn parse_jobs(job_files: &[String], machine: &Machine) -> Result<JobFile, String> {
    let ctx = ParseContext {
        ncpus: machine.topology.cpu_count(),
        mb_memory: 256 * 1024,
        pagesize: 4096,
        env: std::env::vars().collect::<BTreeMap<_, _>>(),
    };
    let paths: Vec<PathBuf> = job_files.iter().map(PathBuf::from).collect();
    parse_job_files(&paths, &ctx).map_err(|e| e.to_string())
}

/// A model error, prefixed with the file, line and name of the job it is about.
fn locate(jobs: &JobFile, e: blksim::Error) -> Failure {
    match e.job {
        Some(i) => {
            let pj = &jobs.jobs[i];
            e.context(format!("{}:{}: job '{}'", pj.file.display(), pj.line, pj.config.name)).into()
        }
        None => e.into(),
    }
}

/// `--trace FILE`: write the run's trace there.
fn write_trace_file(args: &RunArgs, report: &RunReport) -> Result<(), String> {
    if let (Some(path), Some(trace)) = (&args.trace, &report.trace) {
        std::fs::write(path, write_trace(trace)).map_err(|e| format!("--trace {path}: {e}"))?;
    }
    Ok(())
}

/// blksim's own fields of the JSON output: the machine, the settings and the wall-clock rates.
fn run_json_extra(machine: &Machine, settings: &Settings, report: &RunReport, wall_ns: u64) -> serde_json::Value {
    let ios: u64 = report.jobs.iter().flat_map(|j| j.dirs.iter()).map(|d| d.total_ios).sum();
    let wall_s = (wall_ns as f64 / 1e9).max(1e-9);
    json!({
        "machine": machine_json(machine),
        "settings": settings.given,
        "wall_time_ns": wall_ns,
        "wall_events_per_sec": (report.events as f64 / wall_s).round(),
        "wall_ios_per_sec": (ios as f64 / wall_s).round(),
    })
}

/// The report in `--output-format`, then the tables asked for (`--interrupts`, `--mpstat`, ...).
fn run_output(args: &RunArgs, report: &RunReport, jobs: &JobFile, extra: serde_json::Value) -> String {
    let mut out = match args.output_format.as_str() {
        "normal" => write_normal(report, jobs),
        f => write_json(report, jobs, f == "json+", extra),
    };
    for (wanted, text) in [
        (args.interrupts, write_interrupts as fn(&RunReport) -> String),
        (args.mpstat, write_mpstat),
        (args.iostat, write_iostat),
        (args.breakdown, write_breakdown),
    ] {
        if wanted {
            out.push('\n');
            out.push_str(&text(report));
        }
    }
    out
}

/// `--output FILE`, else stdout.
fn write_output(output: Option<&str>, out: String) -> Result<(), String> {
    match output {
        Some(f) => std::fs::write(f, out).map_err(|e| format!("--output {f}: {e}")),
        None => {
            print!("{out}");
            Ok(())
        }
    }
}

/// The machine as the JSON output describes it.
fn machine_json(m: &Machine) -> serde_json::Value {
    let t = &m.topology;
    json!({
        "name": m.name,
        "description": m.description,
        "sockets": t.sockets,
        "cores_per_socket": t.cores_per_socket,
        "threads_per_core": t.threads_per_core,
        "cpus": t.cpu_count(),
        "devices": m.devices.iter().map(|d| d.name.clone()).collect::<Vec<_>>(),
        "costs_ns": m.costs.table.iter().map(|(k, c)| (k.clone(), json!(c.ns))).collect::<serde_json::Map<_, _>>(),
    })
}

/// `blksim machines [NAME|FILE]`: list the built-in machines, or show one resolved.
fn machines(argv: &[String]) -> Result<(), String> {
    match argv {
        [] => list_machines(),
        [name] => {
            print!("{}", describe(&load_machine(name)?));
            Ok(())
        }
        _ => Err("usage: blksim machines [NAME|FILE]".into()),
    }
}

/// One line per built-in machine: its name and description.
fn list_machines() -> Result<(), String> {
    for name in builtin_names() {
        let m = builtin(name)?;
        println!("{:<12} {}", name, m.description);
    }
    Ok(())
}

/// A machine resolved, as `blksim machines NAME` shows it.
fn describe(m: &Machine) -> String {
    let mut s = format!("{}: {}\n", m.name, m.description);
    s += &describe_platform(m);
    for d in &m.devices {
        s += &describe_device(m, d);
    }
    s += "costs (ns, range, source):\n";
    for (k, c) in &m.costs.table {
        s += &format!("  {:<24} {:>6}  [{}..{}]  {}\n", k, c.ns, c.min, c.max, c.note);
    }
    s
}

/// The CPU, IOMMU and root-port lines of [`describe`].
fn describe_platform(m: &Machine) -> String {
    let t = &m.topology;
    let mut s = format!(
        "cpu: {} socket(s) x {} cores x {} threads = {} CPUs; {} NUMA node(s)/socket; {} LLC(s)/socket; SMT throughput {}\n",
        t.sockets, t.cores_per_socket, t.threads_per_core, t.cpu_count(), t.numa_nodes_per_socket, t.llc_per_socket, t.smt_throughput
    );
    for u in &m.iommus {
        let ports: Vec<&str> = u.root_ports.iter().map(|&p| m.root_ports[p].name.as_str()).collect();
        s += &format!(
            "iommu {}: socket {}, root ports {}, posting capable: {}, remap_service_ns {}, post_service_ns {}, IEC {} entries, iec_miss_ns {}\n",
            u.name, u.socket, ports.join(" "), u.posting_capable, u.remap_service_ns, u.post_service_ns, u.iec_entries, u.iec_miss_ns
        );
    }
    for r in &m.root_ports {
        s += &format!("root port {}: socket {}, msi_service_ns {}\n", r.name, r.socket, r.msi_service_ns);
    }
    for w in &m.pcie_switches {
        s += &format!(
            "pcie switch {}: on {}, upstream {} MB/s per direction\n",
            w.name, m.root_ports[w.root_port].name, w.upstream_mb_per_s
        );
    }
    s += &format!("interrupt delivery: service_ns {} per message, per socket\n", m.interrupt_delivery.service_ns);
    s
}

/// One device's line of [`describe`].
fn describe_device(m: &Machine, d: &DeviceSpec) -> String {
    match &d.kind {
        DeviceKind::Nvme(p) => format!(
            "device {}: nvme on {}{}, {} GiB, {} queues x {} entries, {}/{} ns per command + {}/{} MB/s r/w, {} media units, {}/{} ns r/w latency, {} MB/s link\n",
            d.name,
            m.root_ports[p.root_port].name,
            p.pcie_switch.map(|s| format!(" via {}", m.pcie_switches[s].name)).unwrap_or_default(),
            p.capacity_bytes >> 30,
            p.max_queues,
            p.max_queue_entries,
            p.command_ns[0],
            p.command_ns[1],
            p.drive_mb_per_s[0],
            p.drive_mb_per_s[1],
            p.media_units,
            p.latency_ns[0],
            p.latency_ns[1],
            p.link_mb_per_s
        ),
        DeviceKind::NullBlk => format!("device {}: null_blk\n", d.name),
        DeviceKind::Dsa(p) => format!(
            "device {}: dsa on {}, {} WQ(s), {} engines, {} ns per descriptor, {} MB/s fill per engine\n",
            d.name, m.root_ports[p.root_port].name, p.wqs, p.engines, p.descriptor_ns, p.fill_mb_per_s
        ),
        DeviceKind::Scsi(ScsiSpec::Host(p)) => format!(
            "device {}: fc_hba on {}, {} port(s), {} ns firmware per command, {} MB/s link per port, queue depth {} per LUN\n",
            d.name, m.root_ports[p.root_port].name, p.ports, p.fw_cmd_ns, p.link_mb_per_s, p.queue_depth
        ),
        DeviceKind::Scsi(ScsiSpec::Disk(p)) => format!(
            "device {}: scsi_disk (rotational=1) on {} port {}{}, {} GiB, {} rpm, seek {}/{}/{} ns track/avg/full, {} MB/s media, {} ns controller, {} MiB cache, {} KiB read-ahead, write cache {}\n",
            d.name,
            m.devices[p.host].name,
            p.port,
            p.target.as_ref().map(|t| format!(" (target {t})")).unwrap_or_default(),
            p.capacity_bytes >> 30,
            p.rpm,
            p.seek_ns[0],
            p.seek_ns[1],
            p.seek_ns[2],
            p.media_mb_per_s,
            p.controller_ns,
            p.cache_bytes >> 20,
            p.read_ahead_bytes >> 10,
            if p.write_cache { "on" } else { "off" }
        ),
    }
}
