//! Front ends other than fio, as a run's workload: `dsa-memfill`, a kernel
//! DSA client doing memfill (`blksim dsa-memfill ARGS`, or `program =
//! "dsa-memfill"` in an experiment).

use blksim::device::dsa::DsaClientConfig;
use blksim::machine::{DeviceKind, Machine};
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
