//! The subcommands: `run`, `machines`; `reproduce` and `fit` live in reproduce.rs and fit.rs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use blksim::machine::{builtin, builtin_names, load_profile, Builtins, DeviceKind, Machine, ProfileSource};
use blksim::settings::Settings;
use blksim_fio::job::{parse_job_files, ParseContext};
use blksim_fio::output::{
    write_breakdown, write_interrupts, write_iostat, write_json, write_mpstat, write_normal, write_trace,
};
use serde_json::json;

use crate::args::{parse_run, RUN_USAGE};

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

pub fn dispatch(argv: &[String]) -> Result<(), String> {
    match argv.first().map(String::as_str) {
        Some("run") if argv.get(1).is_some_and(|a| a == "--help") => {
            println!("{RUN_USAGE}");
            Ok(())
        }
        Some("run") => run(&argv[1..]),
        Some("machines") => machines(&argv[1..]),
        Some("dsa-memfill") if argv.get(1).is_some_and(|a| a == "--help") => {
            println!("usage: blksim {} [--machine NAME|FILE] [--cmdline \"...\"] [--set PATH=VALUE]... [--at TIME:PATH=VALUE]... [--seed N] [--format text|json] [--interrupts]", blksim_lab::frontend::DSA_MEMFILL_USAGE);
            Ok(())
        }
        Some("dsa-memfill") => crate::dsa::dsa_memfill_command(&argv[1..]),
        Some("t-io_uring") if argv.get(1).is_some_and(|a| a == "--help") => {
            println!(
                "usage: blksim {} [--machine NAME|FILE] [--cmdline \"...\"] [--set PATH=VALUE]... [--seed N]",
                blksim_lab::frontend::T_IO_URING_USAGE
            );
            Ok(())
        }
        Some("t-io_uring") => crate::tio_uring::t_io_uring_command(&argv[1..]),
        Some("reproduce") => crate::reproduce::reproduce(&argv[1..]),
        Some("fit") => crate::fit::fit(&argv[1..]),
        Some("--version") | Some("version") => {
            println!("blksim {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        Some("--help") | Some("help") | Some("-h") => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(format!("unknown command '{other}'\n{USAGE}")),
        None => Err(USAGE.to_string()),
    }
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
    let dev_names: Vec<String> = machine.devices.iter().map(|d| d.name.clone()).collect();
    for s in sets {
        settings.apply_write(s, &dev_names)?;
    }
    Ok(settings)
}

fn run(argv: &[String]) -> Result<(), String> {
    let args = parse_run(argv)?;
    let machine = load_machine(args.machine.as_deref().unwrap_or(DEFAULT_MACHINE))?;
    let mut settings = knob_settings(&machine, &args.cmdline, &args.sets)?;
    for p in &args.patches {
        settings.apply_patch(p)?;
    }
    let ctx = ParseContext {
        ncpus: machine.topology.cpu_count(),
        mb_memory: 256 * 1024,
        pagesize: 4096,
        env: std::env::vars().collect::<BTreeMap<_, _>>(),
    };
    let paths: Vec<PathBuf> = args.job_files.iter().map(PathBuf::from).collect();
    let jobs = parse_job_files(&paths, &ctx).map_err(|e| e.to_string())?;
    let configs: Vec<_> = jobs.jobs.iter().map(|j| j.config.clone()).collect();
    let located = |e: blksim::ModelError| match e.job {
        Some(i) => {
            let pj = &jobs.jobs[i];
            format!("{}:{}: job '{}': {}", pj.file.display(), pj.line, pj.config.name, e.message)
        }
        None => e.message,
    };
    if args.parse_only {
        // Like fio's --parse-only, plus the check that the machine can run the jobs.
        return blksim::validate(&machine, &settings, &configs).map_err(located);
    }
    let wall = Instant::now();
    let options = blksim::RunOptions {
        trace_window_ns: args.trace.as_ref().map(|_| args.trace_window_ns),
        timed: args.at.clone(),
    };
    let (report, _) = blksim::run_with(&machine, &settings, &configs, args.seed, &options).map_err(located)?;
    if let (Some(path), Some(trace)) = (&args.trace, &report.trace) {
        std::fs::write(path, write_trace(trace)).map_err(|e| format!("--trace {path}: {e}"))?;
    }
    let wall_ns = wall.elapsed().as_nanos() as u64;
    let ios: u64 = report.jobs.iter().flat_map(|j| j.dirs.iter()).map(|d| d.total_ios).sum();
    let wall_s = (wall_ns as f64 / 1e9).max(1e-9);
    let extra = json!({
        "machine": machine_json(&machine),
        "settings": settings.given,
        "wall_time_ns": wall_ns,
        "wall_events_per_sec": (report.events as f64 / wall_s).round(),
        "wall_ios_per_sec": (ios as f64 / wall_s).round(),
    });
    let mut out = match args.output_format.as_str() {
        "normal" => write_normal(&report, &jobs),
        f => write_json(&report, &jobs, f == "json+", extra),
    };
    if args.interrupts {
        out.push('\n');
        out.push_str(&write_interrupts(&report));
    }
    for (wanted, text) in [
        (args.mpstat, write_mpstat as fn(&blksim::stats::RunReport) -> String),
        (args.iostat, write_iostat),
        (args.breakdown, write_breakdown),
    ] {
        if wanted {
            out.push('\n');
            out.push_str(&text(&report));
        }
    }
    match &args.output {
        Some(f) => std::fs::write(f, out).map_err(|e| format!("--output {f}: {e}")),
        None => {
            print!("{out}");
            Ok(())
        }
    }
}

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

fn machines(argv: &[String]) -> Result<(), String> {
    match argv {
        [] => {
            for name in builtin_names() {
                let m = builtin(name)?;
                println!("{:<12} {}", name, m.description);
            }
            Ok(())
        }
        [name] => {
            let m = load_machine(name)?;
            print!("{}", describe(&m));
            Ok(())
        }
        _ => Err("usage: blksim machines [NAME|FILE]".into()),
    }
}

fn describe(m: &Machine) -> String {
    let t = &m.topology;
    let mut s = format!("{}: {}\n", m.name, m.description);
    s += &format!(
        "cpu: {} socket(s) x {} cores x {} threads = {} CPUs; {} NUMA node(s)/socket; {} LLC(s)/socket; SMT throughput {}\n",
        t.sockets, t.cores_per_socket, t.threads_per_core, t.cpu_count(), t.numa_nodes_per_socket, t.llc_per_socket, t.smt_throughput
    );
    s += &format!(
        "iommu: posting capable: {}, remap_service_ns {}, post_service_ns {}\n",
        m.iommu.posting_capable, m.iommu.remap_service_ns, m.iommu.post_service_ns
    );
    for r in &m.root_ports {
        s += &format!("root port {}: socket {}, msi_service_ns {}\n", r.name, r.socket, r.msi_service_ns);
    }
    for d in &m.devices {
        match &d.kind {
            DeviceKind::Nvme(p) => {
                s += &format!(
                    "device {}: nvme on {}, {} GiB, {} queues x {} entries, {}/{} IOPS r/w, {} media units, {}/{} ns r/w latency, {} MB/s link\n",
                    d.name,
                    m.root_ports[p.root_port].name,
                    p.capacity_bytes >> 30,
                    p.max_queues,
                    p.max_queue_entries,
                    p.iops_max[0],
                    p.iops_max[1],
                    p.media_units,
                    p.latency_ns[0],
                    p.latency_ns[1],
                    p.link_mb_per_s
                )
            }
            DeviceKind::NullBlk => s += &format!("device {}: null_blk\n", d.name),
            DeviceKind::Dsa(p) => {
                s += &format!(
                    "device {}: dsa on {}, {} WQ(s), {} engines, {} ns per descriptor, {} MB/s fill per engine\n",
                    d.name, m.root_ports[p.root_port].name, p.wqs, p.engines, p.descriptor_ns, p.fill_mb_per_s
                )
            }
        }
    }
    s += "costs (ns, range, source):\n";
    for (k, c) in &m.costs.table {
        s += &format!("  {:<24} {:>6}  [{}..{}]  {}\n", k, c.ns, c.min, c.max, c.note);
    }
    s
}
