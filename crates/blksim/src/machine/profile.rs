//! Machine profiles: TOML text in, a validated `Machine` out. `extends`
//! overlays one profile on another (tables merge key by key, arrays and
//! values replace); unknown keys are errors.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::costs::{Cost, Costs};
use super::topology::Topology;

/// Built-in profiles: (name, TOML text).
pub const BUILTIN: &[(&str, &str)] = &[
    ("spr-gen5", include_str!("../../../../profiles/spr-gen5.toml")),
    ("spr-dsa", include_str!("../../../../profiles/spr-dsa.toml")),
    ("x86-gen5-5m", include_str!("../../../../profiles/x86-gen5-5m.toml")),
    ("ryzen-7950x", include_str!("../../../../profiles/ryzen-7950x.toml")),
];

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    name: String,
    description: String,
    cpu: RawCpu,
    iommu: RawIommu,
    #[serde(default)]
    root_port: Vec<RawRootPort>,
    #[serde(default)]
    device_model: BTreeMap<String, RawDevice>,
    #[serde(default)]
    device: Vec<RawDevice>,
    costs: BTreeMap<String, Cost>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCpu {
    sockets: u32,
    cores_per_socket: u32,
    threads_per_core: u32,
    numa_nodes_per_socket: u32,
    llc_per_socket: u32,
    smt_throughput: f64,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIommu {
    #[serde(default)]
    posting_capable: bool,
    remap_service_ns: Cost,
    post_service_ns: Cost,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRootPort {
    name: String,
    socket: u32,
    msi_service_ns: Cost,
}

/// A device or a device model: every field optional so a device can take the
/// rest from its `model`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDevice {
    name: Option<String>,
    model: Option<String>,
    kind: Option<String>,
    root_port: Option<String>,
    capacity_gib: Option<u64>,
    max_queues: Option<u32>,
    max_queue_entries: Option<u32>,
    iops_max_read: Option<u64>,
    iops_max_write: Option<u64>,
    media_units: Option<u32>,
    read_latency_ns: Option<u64>,
    write_latency_ns: Option<u64>,
    read_ns_per_kib: Option<u64>,
    write_ns_per_kib: Option<u64>,
    latency_sigma: Option<f64>,
    fetch_ns: Option<u64>,
    link_mb_per_s: Option<u64>,
    wqs: Option<u32>,
    engines: Option<u32>,
    descriptor_ns: Option<u64>,
    fill_mb_per_s: Option<u64>,
}

impl RawDevice {
    /// Fill the unset fields from `base`.
    fn or(self, base: &RawDevice) -> RawDevice {
        macro_rules! pick { ($($f:ident),*) => { RawDevice { $($f: self.$f.or_else(|| base.$f.clone()),)* } } }
        pick!(
            name,
            model,
            kind,
            root_port,
            capacity_gib,
            max_queues,
            max_queue_entries,
            iops_max_read,
            iops_max_write,
            media_units,
            read_latency_ns,
            write_latency_ns,
            read_ns_per_kib,
            write_ns_per_kib,
            latency_sigma,
            fetch_ns,
            link_mb_per_s,
            wqs,
            engines,
            descriptor_ns,
            fill_mb_per_s
        )
    }
}

/// A root port (PCIe / IIO stack) through which devices' MSIs pass.
#[derive(Clone, Debug, PartialEq)]
pub struct RootPort {
    /// Its name in the profile (devices name it in `root_port`).
    pub name: String,
    /// The socket it belongs to.
    pub socket: u32,
    /// Service time per interrupt message (ordering behind DMA), ns.
    pub msi_service_ns: u64,
}

#[derive(Clone, Debug, PartialEq)]
/// What kind of device a profile entry is, with its model's parameters.
pub enum DeviceKind {
    /// An NVMe SSD.
    Nvme(NvmeParams),
    /// null_blk (its parameters are module parameters, in the settings).
    NullBlk,
    /// An Intel DSA-like accelerator.
    Dsa(DsaParams),
}

/// A DSA-like accelerator: work queues feeding parallel engines; each
/// completed descriptor writes a completion record and raises its WQ's MSI.
#[derive(Clone, Debug, PartialEq)]
pub struct DsaParams {
    /// Work queues (one MSI-X vector each).
    pub wqs: u32,
    /// Processing engines serving descriptors in parallel.
    pub engines: u32,
    /// Engine time per descriptor besides moving data, ns.
    pub descriptor_ns: u64,
    /// Fill bandwidth of one engine, MB/s.
    pub fill_mb_per_s: u64,
    /// Index into `Machine::root_ports`.
    pub root_port: usize,
}

#[derive(Clone, Debug, PartialEq)]
/// An NVMe SSD's model: queues, controller and media limits, latency, link.
pub struct NvmeParams {
    /// Namespace capacity, bytes.
    pub capacity_bytes: u64,
    /// I/O queue pairs the controller offers.
    pub max_queues: u32,
    /// Entries per queue (MQES + 1).
    pub max_queue_entries: u32,
    /// The controller's command rate limit, [read, write] per second.
    pub iops_max: [u64; 2],
    /// Media units (dies/planes) serving commands in parallel.
    pub media_units: u32,
    /// Media time of a 4 KiB command, [read, write], ns.
    pub latency_ns: [u64; 2],
    /// Extra media time per KiB above 4 KiB, [read, write], ns.
    pub ns_per_kib: [u64; 2],
    /// Log-normal spread of the media time (sigma of its logarithm).
    pub latency_sigma: f64,
    /// Command fetch after the doorbell, ns.
    pub fetch_ns: u64,
    /// Link bandwidth, MB/s (10^6 bytes per second).
    pub link_mb_per_s: u64,
    /// Index into `Machine::root_ports`.
    pub root_port: usize,
}

#[derive(Clone, Debug, PartialEq)]
/// A device of the machine as the profile declares it.
pub struct DeviceSpec {
    /// Block device name, e.g. `nvme0n1` (jobs name it `/dev/nvme0n1`).
    pub name: String,
    /// Its kind and model parameters.
    pub kind: DeviceKind,
}

/// The interrupt-remapping unit of each socket.
#[derive(Clone, Debug, PartialEq)]
pub struct Iommu {
    /// IRQ_POSTING_CAP: `intremap=posted_msi` can take effect.
    pub posting_capable: bool,
    /// Remapping and delivering one interrupt message to a LAPIC, ns.
    pub remap_service_ns: u64,
    /// Posting one MSI into a PIR, ns.
    pub post_service_ns: u64,
}

/// A resolved, validated machine.
#[derive(Clone, Debug, PartialEq)]
pub struct Machine {
    /// The profile's name.
    pub name: String,
    /// One line describing the machine.
    pub description: String,
    /// Sockets, nodes, cores, threads and last-level caches.
    pub topology: Topology,
    /// Its interrupt-remapping hardware.
    pub iommu: Iommu,
    /// Root ports (PCIe root complex / IIO stacks) devices attach to.
    pub root_ports: Vec<RootPort>,
    /// Its devices, in profile order.
    pub devices: Vec<DeviceSpec>,
    /// What each operation costs.
    pub costs: Costs,
}

/// Looks up profiles by name for `extends`: the built-ins, then whatever the caller knows.
pub trait ProfileSource {
    /// The TOML text of the profile called `name`, if this source has it.
    fn profile_text(&self, name: &str) -> Option<String>;
}

/// Only the built-in profiles.
pub struct Builtins;

impl ProfileSource for Builtins {
    fn profile_text(&self, name: &str) -> Option<String> {
        BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, t)| t.to_string())
    }
}

/// Parse and resolve a profile's TOML text (`origin` names it in errors).
pub fn load_profile(text: &str, origin: &str, source: &dyn ProfileSource) -> Result<Machine, String> {
    let merged = merged_value(text, origin, source, 0)?;
    let raw: RawProfile = merged.try_into().map_err(|e: toml::de::Error| toml_error_at(text, origin, &e))?;
    resolve(raw).map_err(|e| format!("{origin}: {e}"))
}

/// A built-in profile by name.
pub fn builtin(name: &str) -> Result<Machine, String> {
    let text = Builtins
        .profile_text(name)
        .ok_or_else(|| format!("unknown machine '{name}'; built-in machines: {}", builtin_names().join(", ")))?;
    load_profile(&text, name, &Builtins)
}

/// The built-in profiles' names.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(n, _)| *n).collect()
}

/// A profile's TOML with its `extends` chain resolved (tables merged key by
/// key, everything else replaced), before validation.
pub fn merged_profile(text: &str, origin: &str, source: &dyn ProfileSource) -> Result<toml::Value, String> {
    merged_value(text, origin, source, 0)
}

fn merged_value(text: &str, origin: &str, source: &dyn ProfileSource, depth: u32) -> Result<toml::Value, String> {
    if depth > 8 {
        return Err(format!("{origin}: `extends` chain is too deep (a cycle?)"));
    }
    let mut value: toml::Value = toml::from_str(text).map_err(|e| toml_error_at(text, origin, &e))?;
    let parent = value.get("extends").and_then(|v| v.as_str()).map(str::to_string);
    if let Some(parent) = parent {
        let parent_text =
            source.profile_text(&parent).ok_or_else(|| format!("{origin}: extends unknown machine '{parent}'"))?;
        let mut base = merged_value(&parent_text, &parent, source, depth + 1)?;
        if let Some(t) = value.as_table_mut() {
            t.remove("extends");
        }
        overlay(&mut base, value);
        value = base;
    }
    Ok(value)
}

/// Tables merge key by key; anything else replaces.
fn overlay(base: &mut toml::Value, over: toml::Value) {
    match (base, over) {
        (toml::Value::Table(b), toml::Value::Table(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(slot) if slot.is_table() && v.is_table() => overlay(slot, v),
                    _ => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (b, o) => *b = o,
    }
}

fn resolve(raw: RawProfile) -> Result<Machine, String> {
    let c = &raw.cpu;
    if c.sockets == 0 || c.cores_per_socket == 0 || c.threads_per_core == 0 || c.threads_per_core > 2 {
        return Err("cpu: sockets and cores_per_socket must be >= 1 and threads_per_core 1 or 2".into());
    }
    if c.numa_nodes_per_socket == 0 || !c.cores_per_socket.is_multiple_of(c.numa_nodes_per_socket) {
        return Err("cpu: numa_nodes_per_socket must divide cores_per_socket".into());
    }
    if c.llc_per_socket == 0 || !c.cores_per_socket.is_multiple_of(c.llc_per_socket) {
        return Err("cpu: llc_per_socket must divide cores_per_socket".into());
    }
    if !(1.0..=2.0).contains(&c.smt_throughput) {
        return Err(format!("cpu: smt_throughput must be within 1.0..2.0, got {}", c.smt_throughput));
    }
    let cpus = c.sockets as u64 * c.cores_per_socket as u64 * c.threads_per_core as u64;
    if cpus > crate::settings::MAX_CPUS as u64 {
        return Err(format!(
            "cpu: {cpus} CPUs; Linux supports at most {} (sockets x cores_per_socket x threads_per_core)",
            crate::settings::MAX_CPUS
        ));
    }
    if raw.root_port.len() > MAX_DEVICES || raw.device.len() > MAX_DEVICES {
        return Err(format!("at most {MAX_DEVICES} root ports and {MAX_DEVICES} devices"));
    }
    let topology = Topology::new(
        c.sockets,
        c.cores_per_socket,
        c.threads_per_core,
        c.numa_nodes_per_socket,
        c.llc_per_socket,
        c.smt_throughput,
    );
    let mut root_ports = Vec::new();
    for rp in &raw.root_port {
        if rp.socket >= c.sockets {
            return Err(format!("root_port '{}': socket {} does not exist", rp.name, rp.socket));
        }
        rp.msi_service_ns.check(&format!("root_port '{}' msi_service_ns", rp.name))?;
        root_ports.push(RootPort { name: rp.name.clone(), socket: rp.socket, msi_service_ns: rp.msi_service_ns.ns });
    }
    let mut devices = Vec::new();
    for (i, d) in raw.device.iter().enumerate() {
        let d = match &d.model {
            Some(m) => {
                let base = raw.device_model.get(m).ok_or_else(|| format!("device #{}: unknown model '{m}'", i + 1))?;
                d.clone().or(base)
            }
            None => d.clone(),
        };
        let name = d.name.clone().ok_or_else(|| format!("device #{}: missing `name`", i + 1))?;
        if devices.iter().any(|x: &DeviceSpec| x.name == name) {
            return Err(format!("device '{name}' is defined twice"));
        }
        let kind = match d.kind.as_deref() {
            Some("nvme") => DeviceKind::Nvme(nvme_params(&name, &d, &root_ports)?),
            Some("null_blk") => DeviceKind::NullBlk,
            Some("dsa") => DeviceKind::Dsa(dsa_params(&name, &d, &root_ports)?),
            Some(k) => return Err(format!("device '{name}': unknown kind '{k}' (expected nvme, null_blk or dsa)")),
            None => return Err(format!("device '{name}': missing `kind`")),
        };
        devices.push(DeviceSpec { name, kind });
    }
    raw.iommu.remap_service_ns.check("iommu.remap_service_ns")?;
    raw.iommu.post_service_ns.check("iommu.post_service_ns")?;
    let costs = Costs::from_table(&raw.costs)?;
    Ok(Machine {
        name: raw.name,
        description: raw.description,
        topology,
        iommu: Iommu {
            posting_capable: raw.iommu.posting_capable,
            remap_service_ns: raw.iommu.remap_service_ns.ns,
            post_service_ns: raw.iommu.post_service_ns.ns,
        },
        root_ports,
        devices,
        costs,
    })
}

/// The most root ports, and the most devices, of a machine.
const MAX_DEVICES: usize = 1024;

fn need<T: Clone>(name: &str, field: &str, v: &Option<T>) -> Result<T, String> {
    v.clone().ok_or_else(|| format!("device '{name}': needs `{field}`"))
}

fn root_port_of(name: &str, d: &RawDevice, root_ports: &[RootPort]) -> Result<usize, String> {
    let rp_name = need(name, "root_port", &d.root_port)?;
    root_ports
        .iter()
        .position(|r| r.name == rp_name)
        .ok_or_else(|| format!("device '{name}': unknown root_port '{rp_name}'"))
}

fn dsa_params(name: &str, d: &RawDevice, root_ports: &[RootPort]) -> Result<DsaParams, String> {
    let p = DsaParams {
        wqs: need(name, "wqs", &d.wqs)?,
        engines: need(name, "engines", &d.engines)?,
        descriptor_ns: need(name, "descriptor_ns", &d.descriptor_ns)?,
        fill_mb_per_s: need(name, "fill_mb_per_s", &d.fill_mb_per_s)?,
        root_port: root_port_of(name, d, root_ports)?,
    };
    if p.wqs == 0 || p.engines == 0 || p.fill_mb_per_s == 0 {
        return Err(format!("device '{name}': wqs, engines and fill_mb_per_s must be > 0"));
    }
    if p.wqs > 64 || p.engines > 64 {
        return Err(format!("device '{name}': wqs and engines must be at most 64"));
    }
    Ok(p)
}

fn nvme_params(name: &str, d: &RawDevice, root_ports: &[RootPort]) -> Result<NvmeParams, String> {
    let root_port = root_port_of(name, d, root_ports)?;
    let p = NvmeParams {
        capacity_bytes: need(name, "capacity_gib", &d.capacity_gib)?
            .checked_mul(1 << 30)
            .ok_or_else(|| format!("device '{name}': capacity_gib is above 16 EiB"))?,
        max_queues: need(name, "max_queues", &d.max_queues)?,
        max_queue_entries: need(name, "max_queue_entries", &d.max_queue_entries)?,
        iops_max: [need(name, "iops_max_read", &d.iops_max_read)?, need(name, "iops_max_write", &d.iops_max_write)?],
        media_units: need(name, "media_units", &d.media_units)?,
        latency_ns: [
            need(name, "read_latency_ns", &d.read_latency_ns)?,
            need(name, "write_latency_ns", &d.write_latency_ns)?,
        ],
        ns_per_kib: [
            need(name, "read_ns_per_kib", &d.read_ns_per_kib)?,
            need(name, "write_ns_per_kib", &d.write_ns_per_kib)?,
        ],
        latency_sigma: need(name, "latency_sigma", &d.latency_sigma)?,
        fetch_ns: need(name, "fetch_ns", &d.fetch_ns)?,
        link_mb_per_s: need(name, "link_mb_per_s", &d.link_mb_per_s)?,
        root_port,
    };
    if p.max_queues == 0 || p.media_units == 0 || p.iops_max.contains(&0) || p.link_mb_per_s == 0 {
        return Err(format!("device '{name}': max_queues, media_units, iops_max_* and link_mb_per_s must be > 0"));
    }
    if !(2..=65536).contains(&p.max_queue_entries) {
        return Err(format!("device '{name}': max_queue_entries must be within 2..65536"));
    }
    // NVMe queue ids are 16 bits (65535 I/O queues at most); media units are the device's dies.
    if p.max_queues > 65535 || p.media_units > 65536 {
        return Err(format!("device '{name}': max_queues must be at most 65535 and media_units at most 65536"));
    }
    if !(0.0..=2.0).contains(&p.latency_sigma) {
        return Err(format!("device '{name}': latency_sigma must be within 0..2"));
    }
    Ok(p)
}

/// A TOML error in one line: `ORIGIN:LINE:COLUMN: KEY: message`. The place
/// is the error's span in `text` (a syntax or type error read from the text),
/// or else where `text` writes the key the error names (an error found in the
/// merged profile); without either, `ORIGIN: KEY: message` (the key may come
/// from the profile `text` extends).
pub fn toml_error_at(text: &str, origin: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim().replace('\n', "; ");
    // Deserializing a value names the key in the error's text: "...\nin `costs.syscall_ns`"; an unknown
    // field is named in the message, below that key.
    let shown = e.to_string();
    let table = shown.trim_end().rsplit_once("\nin `").and_then(|(_, k)| k.strip_suffix('`').map(str::to_string));
    let unknown = message.strip_prefix("unknown field `").and_then(|m| m.split_once('`')).map(|(f, _)| f);
    let named = match (table, unknown) {
        (Some(t), Some(f)) => Some(format!("{t}.{f}")),
        (t, f) => t.or(f.map(str::to_string)),
    };
    let (place, key) = match e.span() {
        Some(span) => {
            let (line, column) = line_column(text, span.start);
            (Some((line, column)), key_on_line(text, line))
        }
        None => (named.as_deref().and_then(|k| find_key(text, k)), named),
    };
    let key = key.map_or(String::new(), |k| format!("{k}: "));
    match place {
        Some((line, column)) => format!("{origin}:{line}:{column}: {key}{message}"),
        None => format!("{origin}: {key}{message}"),
    }
}

/// 1-based line and column (in characters) of byte `at` of `text`.
fn line_column(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (before.matches('\n').count() + 1, before[line_start..].chars().count() + 1)
}

/// The table header `[a.b]` / `[[a]]` a trimmed line opens, as its dotted name.
fn header(line: &str) -> Option<&str> {
    let inner = line.strip_prefix("[[").and_then(|h| h.strip_suffix("]]"));
    inner.or_else(|| line.strip_prefix('[').and_then(|h| h.strip_suffix(']'))).map(str::trim)
}

/// The dotted key written on line `line` of `text` (`table.key`), if the line holds `key = ...`.
fn key_on_line(text: &str, line: usize) -> Option<String> {
    let mut table = None;
    for (i, l) in text.lines().enumerate().take(line) {
        let l = l.trim();
        if let Some(h) = header(l) {
            table = Some(h);
        } else if i + 1 == line {
            let key = l.split_once('=')?.0.trim();
            return Some(table.map_or(key.to_string(), |t| format!("{t}.{key}")));
        }
    }
    table.map(str::to_string)
}

/// Line and column where `text` writes dotted key `key` (array indices ignored): the key's line, or the
/// header of the table it names.
fn find_key(text: &str, key: &str) -> Option<(usize, usize)> {
    let want: Vec<&str> = key.split('.').filter(|p| p.parse::<usize>().is_err()).collect();
    let parts = |s: &str| -> Vec<String> { s.split('.').map(|p| p.trim().trim_matches('"').to_string()).collect() };
    let mut table: Vec<String> = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let column = l.len() - l.trim_start().len() + 1;
        let l = l.trim();
        let full = match header(l) {
            Some(h) => {
                table = parts(h);
                table.clone()
            }
            None => match l.split_once('=') {
                Some((k, _)) => table.iter().cloned().chain(parts(k)).collect(),
                None => continue,
            },
        };
        let prefix = !full.is_empty() && full.len() <= want.len() && want.iter().zip(&full).all(|(w, f)| w == f);
        // A key line on the path, or the header of the table the path names.
        if prefix && (full.len() == want.len() || header(l).is_none()) {
            return Some((i + 1, column));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    struct WithChild(&'static str);
    impl ProfileSource for WithChild {
        fn profile_text(&self, name: &str) -> Option<String> {
            if name == "child" {
                Some(self.0.to_string())
            } else {
                Builtins.profile_text(name)
            }
        }
    }

    #[test]
    fn builtin_profile_resolves() {
        let m = builtin("spr-gen5").unwrap();
        assert_eq!(m.topology.cpu_count(), 128);
        assert_eq!(m.devices.iter().filter(|d| matches!(d.kind, DeviceKind::Nvme(_))).count(), 8);
        assert!(m.costs.syscall_ns > 0);
    }

    #[test]
    fn extends_overrides_one_field_and_keeps_the_rest() {
        let text = "name = \"small\"\ndescription = \"d\"\nextends = \"spr-gen5\"\n[cpu]\ncores_per_socket = 8\n[costs]\nsyscall_ns = { ns = 300, min = 34, max = 400, note = \"x\" }\n";
        let m = load_profile(text, "small.toml", &Builtins).unwrap();
        assert_eq!(m.name, "small");
        assert_eq!(m.topology.cpu_count(), 16);
        assert_eq!(m.costs.syscall_ns, 300);
        assert_eq!(m.costs.irq_entry_ns, builtin("spr-gen5").unwrap().costs.irq_entry_ns);
    }

    #[test]
    fn unknown_key_is_an_error_naming_it() {
        let text = "name = \"x\"\ndescription = \"d\"\nextends = \"spr-gen5\"\n[cpu]\ncorez = 3\n";
        let e = load_profile(text, "x.toml", &Builtins).unwrap_err();
        assert!(e.contains("corez"), "{e}");
    }

    #[test]
    fn cost_outside_its_range_is_an_error() {
        let text = "name = \"x\"\ndescription = \"d\"\nextends = \"spr-gen5\"\n[costs]\nsyscall_ns = { ns = 5000, min = 34, max = 400, note = \"x\" }\n";
        let e = load_profile(text, "x.toml", &Builtins).unwrap_err();
        assert!(e.contains("syscall_ns") && e.contains("34"), "{e}");
    }

    #[test]
    fn extends_chain_through_a_user_profile() {
        let src =
            WithChild("name = \"child\"\ndescription = \"c\"\nextends = \"spr-gen5\"\n[cpu]\nthreads_per_core = 1\n");
        let m = load_profile("name = \"g\"\ndescription = \"g\"\nextends = \"child\"\n", "g", &src).unwrap();
        assert_eq!(m.topology.cpu_count(), 64);
    }
}
