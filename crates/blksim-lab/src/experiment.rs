//! Experiment files (`experiments/NAME.toml`): the raw TOML shape, and the
//! resolved `Experiment` — the cases to simulate (a point of the sweep each)
//! and the cells to compare (a reference number, the case that reproduces
//! it, the metric and the tolerance).

use blksim::machine::profile::toml_error_at;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::metric::Metric;
use crate::observe::{Observation, ProcSnapshots};

/// A resolved experiment.
#[derive(Clone, Debug)]
pub struct Experiment {
    /// The file's stem, e.g. `posted-msi-nvme`.
    pub name: String,
    pub path: PathBuf,
    pub description: String,
    /// Where the reference numbers come from (the published source, or the measured files).
    pub source: String,
    /// The table of `calibration.toml` the published numbers are copied from.
    pub calibration: Option<String>,
    pub seed: u64,
    pub tolerance: f64,
    /// Long-running: the calibration test runs it only with the `slow-experiments` feature.
    pub slow: bool,
    pub cases: Vec<Case>,
    pub cells: Vec<CellSpec>,
}

/// One point of the sweep: a machine, a workload and kernel settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// `disks=4 mode=remappable` (axes in file order; empty without axes).
    pub label: String,
    /// Built-in profile name or profile file (resolved relative to the experiment file).
    pub machine: String,
    pub workload: Workload,
    /// fio `${VAR}` values for the job file.
    pub vars: BTreeMap<String, String>,
    pub cmdline: Vec<String>,
    pub sysfs: Vec<String>,
    pub patches: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Workload {
    /// A fio job file.
    Fio(PathBuf),
    /// Another front end (`t/io_uring`, `dsa-memfill`) with its arguments.
    Program { name: String, args: String },
}

/// One number to reproduce.
#[derive(Clone, Debug)]
pub struct CellSpec {
    /// `disks=4 remappable`.
    pub label: String,
    /// Index into `Experiment::cases`.
    pub case: usize,
    pub metric: Metric,
    /// Multiplies the metric into the reference's unit (1e-6 for "millions").
    pub scale: f64,
    pub published: f64,
    pub tolerance: f64,
    /// A documented gap: the model lacks a mechanism this cell needs (reason).
    pub known_gap: Option<String>,
    /// A relative cell (`relative_to`): the case whose metric divides this
    /// case's (`published` is already the ratio of the two rows), and its label.
    pub base: Option<(usize, String)>,
}

// ---------------------------------------------------------------------------
// The file as written.

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExperiment {
    description: String,
    /// The `calibration.toml` table this experiment reproduces.
    calibration: Option<String>,
    machine: String,
    #[serde(default = "default_seed")]
    seed: u64,
    tolerance: f64,
    #[serde(default)]
    slow: bool,
    job: Option<String>,
    program: Option<String>,
    args: Option<String>,
    #[serde(default)]
    vars: BTreeMap<String, String>,
    #[serde(default)]
    cmdline: Vec<String>,
    #[serde(default)]
    sysfs: Vec<String>,
    #[serde(default)]
    patches: Vec<String>,
    #[serde(default)]
    axis: Vec<RawAxis>,
    published: Option<RawPublished>,
    #[serde(default)]
    measured: Vec<RawMeasured>,
    #[serde(default)]
    known_gap: Vec<RawGap>,
    /// Free text: assumptions, what the experiment cannot express yet.
    #[allow(dead_code)]
    notes: Option<String>,
}

fn default_seed() -> u64 {
    1
}

/// What a case is made of: set at the top level (`RawExperiment`'s fields of
/// the same names) and overridden or extended by axis values.
#[derive(Clone, Debug, Default)]
struct RawSetup {
    /// Replaces the machine.
    machine: Option<String>,
    /// A fio job file, relative to the experiment file.
    job: Option<String>,
    /// A non-fio front end (`t/io_uring`, `dsa-memfill`).
    program: Option<String>,
    args: Option<String>,
    /// Merged (later values win).
    vars: BTreeMap<String, String>,
    /// Appended.
    cmdline: Vec<String>,
    sysfs: Vec<String>,
    patches: Vec<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAxis {
    name: String,
    value: Vec<RawAxisValue>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAxisValue {
    name: toml::Value,
    machine: Option<String>,
    job: Option<String>,
    program: Option<String>,
    args: Option<String>,
    #[serde(default)]
    vars: BTreeMap<String, String>,
    #[serde(default)]
    cmdline: Vec<String>,
    #[serde(default)]
    sysfs: Vec<String>,
    #[serde(default)]
    patches: Vec<String>,
}

impl RawAxisValue {
    fn setup(&self) -> RawSetup {
        RawSetup {
            machine: self.machine.clone(),
            job: self.job.clone(),
            program: self.program.clone(),
            args: self.args.clone(),
            vars: self.vars.clone(),
            cmdline: self.cmdline.clone(),
            sysfs: self.sysfs.clone(),
            patches: self.patches.clone(),
        }
    }
}

impl RawExperiment {
    fn setup(&self) -> RawSetup {
        RawSetup {
            machine: None,
            job: self.job.clone(),
            program: self.program.clone(),
            args: self.args.clone(),
            vars: self.vars.clone(),
            cmdline: self.cmdline.clone(),
            sysfs: self.sysfs.clone(),
            patches: self.patches.clone(),
        }
    }
}

/// A table of `calibration.toml`, copied, plus how to read it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPublished {
    pub source: String,
    pub machine: Option<String>,
    pub workload: Option<String>,
    pub metric: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<toml::Value>>,
    pub note: Option<String>,
    /// How the source asks its numbers to be compared (copied text).
    pub compare: Option<String>,
    /// Columns naming the sweep point: each is an axis of the same name.
    #[serde(default)]
    keys: Vec<String>,
    /// Compare each row relative to the row with these key values
    /// (`{ max_loops = 3 }`): simulated and published are both divided by
    /// that row's value of the same column, and that row gives no cell.
    relative_to: Option<BTreeMap<String, toml::Value>>,
    /// Columns holding numbers to reproduce.
    value: Vec<RawValueColumn>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawValueColumn {
    column: String,
    metric: String,
    #[serde(default = "one")]
    scale: f64,
    /// Axis values this column stands for (`{ mode = "posted" }`).
    #[serde(default)]
    axes: BTreeMap<String, toml::Value>,
    tolerance: Option<f64>,
    /// An absolute tolerance in the column's unit (10 points of a percentage):
    /// each cell's relative tolerance is this over its published value.
    tolerance_points: Option<f64>,
}

fn one() -> f64 {
    1.0
}

/// A reference measured on a real machine: fio JSON, optionally with
/// `/proc/interrupts` and `/proc/stat` snapshots taken before and after.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMeasured {
    label: String,
    #[serde(default)]
    axes: BTreeMap<String, toml::Value>,
    fio_json: String,
    /// `[before, after]`.
    proc_interrupts: Option<[String; 2]>,
    proc_stat: Option<[String; 2]>,
    /// Only `/proc/interrupts` rows whose name contains this count as device interrupts.
    irq_match: Option<String>,
    /// Devices the jobs used, when the fio JSON cannot tell (group reports show one job's options).
    devices: Option<u32>,
    metrics: Vec<RawMeasuredMetric>,
    tolerance: Option<f64>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
enum RawMeasuredMetric {
    Name(String),
    Scaled { metric: String, scale: f64 },
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGap {
    cell: String,
    reason: String,
}

// ---------------------------------------------------------------------------
// Loading.

/// A TOML scalar as a sweep value name: `4` → "4", `"posted"` → "posted".
pub fn value_name(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Load `path`; `name` is its stem.
pub fn load(path: &Path) -> Result<Experiment, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse(&text, path)
}

/// Parse an experiment's text; `path` names it in errors and anchors relative file names.
pub fn parse(text: &str, path: &Path) -> Result<Experiment, String> {
    let at = |e: String| format!("{}: {e}", path.display());
    // One line: `FILE:LINE:COLUMN: KEY: message`.
    let raw: RawExperiment =
        toml::from_str(text).map_err(|e: toml::de::Error| toml_error_at(text, &path.display().to_string(), &e))?;
    resolve(raw, path).map_err(at)
}

fn resolve(raw: RawExperiment, path: &Path) -> Result<Experiment, String> {
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .ok_or_else(|| "the file name is not valid UTF-8".to_string())?
        .to_string();
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    if !(raw.tolerance > 0.0 && raw.tolerance < 10.0) {
        return Err(format!("tolerance = {} must be a positive fraction (0.15 = ±15%)", raw.tolerance));
    }
    for (i, a) in raw.axis.iter().enumerate() {
        if a.value.is_empty() {
            return Err(format!("axis '{}' has no value", a.name));
        }
        if raw.axis[..i].iter().any(|b| b.name == a.name) {
            return Err(format!("axis '{}' is defined twice", a.name));
        }
        let mut seen: Vec<String> = Vec::new();
        for v in &a.value {
            let n = value_name(&v.name);
            if seen.contains(&n) {
                return Err(format!("axis '{}': value '{n}' is defined twice", a.name));
            }
            seen.push(n);
        }
    }
    let mut b = Builder { raw: &raw, dir: &dir, cases: Vec::new(), cells: Vec::new() };
    let mut sources = Vec::new();
    if let Some(p) = &raw.published {
        b.published_cells(p)?;
        sources.push(p.source.clone());
    }
    for m in &raw.measured {
        b.measured_cells(m)?;
        sources.push(format!("measured: {}", m.fio_json));
    }
    if b.cells.is_empty() {
        return Err("no reference numbers: give a [published] table or [[measured]] runs".into());
    }
    let mut cells = b.cells;
    let cases = b.cases;
    for g in &raw.known_gap {
        let cell = cells
            .iter_mut()
            .find(|c| c.label == g.cell)
            .ok_or_else(|| format!("known_gap: no cell labelled '{}'", g.cell))?;
        cell.known_gap = Some(g.reason.clone());
    }
    Ok(Experiment {
        name,
        path: path.to_path_buf(),
        description: raw.description.clone(),
        source: sources.join("; "),
        calibration: raw.calibration.clone(),
        seed: raw.seed,
        tolerance: raw.tolerance,
        slow: raw.slow,
        cases,
        cells,
    })
}

struct Builder<'a> {
    raw: &'a RawExperiment,
    dir: &'a Path,
    cases: Vec<Case>,
    cells: Vec<CellSpec>,
}

impl Builder<'_> {
    fn published_cells(&mut self, p: &RawPublished) -> Result<(), String> {
        let col = |name: &str| -> Result<usize, String> {
            p.columns.iter().position(|c| c == name).ok_or_else(|| format!("published: no column '{name}'"))
        };
        let keys: Vec<usize> = p.keys.iter().map(|k| col(k)).collect::<Result<_, _>>()?;
        if p.value.is_empty() {
            return Err("published: no [[published.value]] column to reproduce".into());
        }
        for (r, row) in p.rows.iter().enumerate() {
            if row.len() != p.columns.len() {
                return Err(format!(
                    "published: row {} has {} values for {} columns",
                    r + 1,
                    row.len(),
                    p.columns.len()
                ));
            }
        }
        let number = |r: usize, c: usize| -> Result<f64, String> {
            let v = &p.rows[r][c];
            v.as_float()
                .or_else(|| v.as_integer().map(|i| i as f64))
                .ok_or_else(|| format!("published: row {}, column '{}' is not a number", r + 1, p.columns[c]))
        };
        let key_label = |r: usize| -> Vec<String> {
            keys.iter().map(|&k| format!("{}={}", p.columns[k], value_name(&p.rows[r][k]))).collect()
        };
        let base_row = match &p.relative_to {
            None => None,
            Some(at) => Some(relative_row(p, &keys, at)?),
        };
        for (r, row) in p.rows.iter().enumerate() {
            if base_row == Some(r) {
                continue;
            }
            for v in &p.value {
                let c = col(&v.column)?;
                let mut published = number(r, c)?;
                let axes_of = |row: &[toml::Value]| -> Result<Vec<(String, String)>, String> {
                    let mut axes: Vec<(String, String)> =
                        keys.iter().map(|&k| (p.columns[k].clone(), value_name(&row[k]))).collect();
                    for (a, val) in &v.axes {
                        if axes.iter().any(|(x, _)| x == a) {
                            return Err(format!(
                                "published: value column '{}' sets axis '{a}', a key column",
                                v.column
                            ));
                        }
                        axes.push((a.clone(), value_name(val)));
                    }
                    Ok(axes)
                };
                let axes = axes_of(row)?;
                let mut label = key_label(r);
                label.push(v.column.clone());
                let metric = Metric::parse(&v.metric).map_err(|e| format!("published: column '{}': {e}", v.column))?;
                let at = |e: String| format!("published: row {}, column '{}': {e}", r + 1, v.column);
                let case = self.case_for(&axes).map_err(at)?;
                let base = match base_row {
                    None => None,
                    Some(b) => {
                        let of = number(b, c)?;
                        if of == 0.0 {
                            return Err(at(format!("relative to row {}, whose value is 0", b + 1)));
                        }
                        published /= of;
                        Some((self.case_for(&axes_of(&p.rows[b])?).map_err(at)?, key_label(b).join(" ")))
                    }
                };
                if v.tolerance.is_some() && v.tolerance_points.is_some() {
                    return Err(format!("published: column '{}': tolerance and tolerance_points both given", v.column));
                }
                let tolerance = match v.tolerance_points {
                    Some(p) if p > 0.0 && base.is_none() => p / published.abs(),
                    Some(_) => {
                        return Err(format!(
                            "published: column '{}': tolerance_points must be positive and not relative",
                            v.column
                        ))
                    }
                    None => v.tolerance.unwrap_or(self.raw.tolerance),
                };
                self.push_cell(CellSpec {
                    label: label.join(" "),
                    case,
                    metric,
                    scale: v.scale,
                    published,
                    tolerance,
                    known_gap: None,
                    base,
                })?;
            }
        }
        Ok(())
    }

    fn measured_cells(&mut self, m: &RawMeasured) -> Result<(), String> {
        let file = |f: &str| self.dir.join(f);
        let read = |f: &str| {
            std::fs::read_to_string(file(f)).map_err(|e| format!("measured '{}': {}: {e}", m.label, file(f).display()))
        };
        let json = read(&m.fio_json)?;
        let snapshots = ProcSnapshots {
            interrupts: match &m.proc_interrupts {
                Some([a, b]) => Some([read(a)?, read(b)?]),
                None => None,
            },
            stat: match &m.proc_stat {
                Some([a, b]) => Some([read(a)?, read(b)?]),
                None => None,
            },
            irq_match: m.irq_match.clone(),
        };
        let obs = Observation::from_fio_json(&json, &snapshots, m.devices)
            .map_err(|e| format!("measured '{}': {}: {e}", m.label, m.fio_json))?;
        let axes: Vec<(String, String)> = m.axes.iter().map(|(a, v)| (a.clone(), value_name(v))).collect();
        let case = self.case_for(&axes).map_err(|e| format!("measured '{}': {e}", m.label))?;
        for mm in &m.metrics {
            let (name, scale) = match mm {
                RawMeasuredMetric::Name(n) => (n.as_str(), 1.0),
                RawMeasuredMetric::Scaled { metric, scale } => (metric.as_str(), *scale),
            };
            let metric = Metric::parse(name).map_err(|e| format!("measured '{}': {e}", m.label))?;
            let published =
                metric.eval(&obs).map_err(|e| format!("measured '{}': {}: {e}", m.label, m.fio_json))? * scale;
            self.push_cell(CellSpec {
                label: format!("{} {}", m.label, metric.name()),
                case,
                metric,
                scale,
                published,
                tolerance: m.tolerance.unwrap_or(self.raw.tolerance),
                known_gap: None,
                base: None,
            })?;
        }
        Ok(())
    }

    fn push_cell(&mut self, cell: CellSpec) -> Result<(), String> {
        if self.cells.iter().any(|c| c.label == cell.label && c.metric == cell.metric) {
            return Err(format!("two cells are labelled '{}'", cell.label));
        }
        if cell.published == 0.0 || !cell.published.is_finite() {
            return Err(format!(
                "cell '{}': the reference value must be a non-zero number (errors are relative)",
                cell.label
            ));
        }
        self.cells.push(cell);
        Ok(())
    }

    /// The case for a full assignment of axis values (single-valued axes may be left out).
    fn case_for(&mut self, given: &[(String, String)]) -> Result<usize, String> {
        for (a, _) in given {
            if !self.raw.axis.iter().any(|x| &x.name == a) {
                return Err(format!("no axis named '{a}'"));
            }
        }
        let mut setup = self.raw.setup();
        let mut machine = self.raw.machine.clone();
        let mut label = Vec::new();
        for axis in &self.raw.axis {
            let chosen = match given.iter().find(|(a, _)| *a == axis.name) {
                Some((_, v)) => axis
                    .value
                    .iter()
                    .find(|x| value_name(&x.name) == *v)
                    .ok_or_else(|| format!("axis '{}' has no value '{v}'", axis.name))?,
                None if axis.value.len() == 1 => &axis.value[0],
                None => return Err(format!("which value of axis '{}'? (it has {})", axis.name, axis.value.len())),
            };
            label.push(format!("{}={}", axis.name, value_name(&chosen.name)));
            let s = &chosen.setup();
            if let Some(m) = &s.machine {
                machine = m.clone();
            }
            if s.job.is_some() || s.program.is_some() {
                setup.job = s.job.clone();
                setup.program = s.program.clone();
                setup.args = s.args.clone();
            }
            setup.vars.extend(s.vars.clone());
            setup.cmdline.extend(s.cmdline.clone());
            setup.sysfs.extend(s.sysfs.clone());
            setup.patches.extend(s.patches.clone());
        }
        if let Some(m) = &setup.machine {
            machine = m.clone();
        }
        let workload = match (&setup.job, &setup.program) {
            (Some(j), None) => {
                let p = self.dir.join(j);
                if !p.is_file() {
                    return Err(format!("job file {} does not exist", p.display()));
                }
                Workload::Fio(p)
            }
            (None, Some(p)) => Workload::Program { name: p.clone(), args: setup.args.clone().unwrap_or_default() },
            (Some(_), Some(_)) => return Err("give `job` (a fio job file) or `program`, not both".into()),
            (None, None) => return Err("no workload: give `job` (a fio job file) or `program`".into()),
        };
        let case = Case {
            label: label.join(" "),
            machine,
            workload,
            vars: setup.vars,
            cmdline: setup.cmdline,
            sysfs: setup.sysfs,
            patches: setup.patches,
        };
        if let Some(i) = self.cases.iter().position(|c| *c == case) {
            return Ok(i);
        }
        self.cases.push(case);
        Ok(self.cases.len() - 1)
    }
}

/// The row of a published table whose key values are `at` (`relative_to`).
fn relative_row(p: &RawPublished, keys: &[usize], at: &BTreeMap<String, toml::Value>) -> Result<usize, String> {
    for k in at.keys() {
        if !p.keys.contains(k) {
            return Err(format!("published: relative_to names '{k}', which is not a key column ({:?})", p.keys));
        }
    }
    let matching: Vec<usize> = (0..p.rows.len())
        .filter(|&r| {
            keys.iter().all(|&k| at.get(&p.columns[k]).is_none_or(|v| value_name(v) == value_name(&p.rows[r][k])))
        })
        .collect();
    match matching.as_slice() {
        [r] => Ok(*r),
        [] => Err(format!("published: relative_to: no row has {}", describe(at))),
        _ => Err(format!("published: relative_to: {} rows have {} (name one)", matching.len(), describe(at))),
    }
}

fn describe(at: &BTreeMap<String, toml::Value>) -> String {
    at.iter().map(|(k, v)| format!("{k}={}", value_name(v))).collect::<Vec<_>>().join(" ")
}

/// The experiment files of a directory (`*.toml`, not recursive), sorted by name.
pub fn list(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut out: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml") && p.is_file())
        .collect();
    out.sort();
    Ok(out)
}

/// An experiment by name (`DIR/NAME.toml`) or by path (anything ending in `.toml`).
pub fn find(dir: &Path, name_or_path: &str) -> Result<PathBuf, String> {
    if name_or_path.ends_with(".toml") {
        let p = PathBuf::from(name_or_path);
        return if p.is_file() { Ok(p) } else { Err(format!("{name_or_path}: no such experiment file")) };
    }
    let p = dir.join(format!("{name_or_path}.toml"));
    if p.is_file() {
        return Ok(p);
    }
    let known: Vec<String> = list(dir)
        .unwrap_or_default()
        .iter()
        .filter_map(|p| p.file_stem().and_then(|s| s.to_str()).map(str::to_string))
        .collect();
    Err(format!("unknown experiment '{name_or_path}' (in {}: {})", dir.display(), known.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// A fresh directory, removed when the returned guard drops.
    fn tmp(tag: &str) -> tempfile::TempDir {
        tempfile::Builder::new().prefix(&format!("blksim-lab-exp-{tag}-")).tempdir().unwrap()
    }

    const BASE: &str = r#"
description = "t"
machine = "spr-gen5"
tolerance = 0.1
job = "j.fio"
[[axis]]
name = "disks"
value = [{ name = 1, vars = { N = "1" } }, { name = 2, vars = { N = "2" } }]
[[axis]]
name = "mode"
value = [{ name = "a" }, { name = "b", cmdline = ["nvme.poll_queues=2"] }]
[published]
source = "s"
metric = "IOPS"
columns = ["disks", "a", "b"]
rows = [[1, 10.0, 20], [2, 30.0, 40.0]]
keys = ["disks"]
value = [
  { column = "a", metric = "iops", axes = { mode = "a" } },
  { column = "b", metric = "iops", axes = { mode = "b" }, scale = 1e-3, tolerance = 0.5 },
]
"#;

    #[test]
    fn published_table_becomes_one_cell_per_value_and_one_case_per_sweep_point() {
        let guard = tmp("ok");
        let d = guard.path();
        write(d, "j.fio", "[j]\nfilename=/dev/nvme0n1\n");
        let e = parse(BASE, &d.join("x.toml")).unwrap();
        assert_eq!(e.name, "x");
        let labels: Vec<&str> = e.cells.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["disks=1 a", "disks=1 b", "disks=2 a", "disks=2 b"]);
        assert_eq!(e.cases.len(), 4);
        assert_eq!(e.cases[e.cells[3].case].label, "disks=2 mode=b");
        assert_eq!(e.cases[e.cells[3].case].cmdline, vec!["nvme.poll_queues=2"]);
        assert_eq!(e.cases[e.cells[3].case].vars.get("N").map(String::as_str), Some("2"));
        assert_eq!(e.cells[1].published, 20.0);
        assert_eq!(e.cells[1].scale, 1e-3);
        assert_eq!(e.cells[1].tolerance, 0.5);
        assert_eq!(e.cells[0].tolerance, 0.1);
    }

    #[test]
    fn a_relative_table_divides_each_row_by_its_base_row_which_gives_no_cell() {
        let guard = tmp("rel");
        let d = guard.path();
        write(d, "j.fio", "[j]\nfilename=/dev/nvme0n1\n");
        let text = BASE.replace("keys = [\"disks\"]", "keys = [\"disks\"]\nrelative_to = { disks = 2 }");
        let e = parse(&text, &d.join("x.toml")).unwrap();
        let labels: Vec<&str> = e.cells.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["disks=1 a", "disks=1 b"]);
        assert_eq!((e.cells[0].published, e.cells[1].published), (10.0 / 30.0, 20.0 / 40.0));
        let (base, of) = e.cells[1].base.clone().unwrap();
        assert_eq!((e.cases[base].label.as_str(), of.as_str()), ("disks=2 mode=b", "disks=2"));
        assert_eq!(e.cases[e.cells[1].case].label, "disks=1 mode=b");
        for (at, want) in
            [("{ disk = 2 }", "'disk', which is not a key column"), ("{ disks = 3 }", "no row has disks=3")]
        {
            let text = BASE.replace("keys = [\"disks\"]", &format!("keys = [\"disks\"]\nrelative_to = {at}"));
            let err = parse(&text, &d.join("x.toml")).unwrap_err();
            assert!(err.contains(want), "want '{want}' in: {err}");
        }
    }

    #[test]
    fn malformed_experiments_are_errors_naming_the_problem() {
        let guard = tmp("bad");
        let d = guard.path();
        write(d, "j.fio", "[j]\nfilename=/dev/nvme0n1\n");
        let p = d.join("x.toml");
        let cases = [
            (BASE.replace("tolerance = 0.1", "tolerance = 0.1\nbogus = 1"), "x.toml:5:1: bogus: unknown field `bogus`"),
            (BASE.replace("keys = [\"disks\"]", "keys = [\"disk\"]"), "no column 'disk'"),
            (BASE.replace("axes = { mode = \"b\" }", "axes = { mode = \"c\" }"), "no value 'c'"),
            (BASE.replace(", axes = { mode = \"a\" }", ""), "which value of axis 'mode'"),
            (
                BASE.replace(
                    "metric = \"iops\", axes = { mode = \"a\" }",
                    "metric = \"iopz\", axes = { mode = \"a\" }",
                ),
                "unknown metric 'iopz'",
            ),
            (BASE.replace("job = \"j.fio\"", "job = \"missing.fio\""), "does not exist"),
            (BASE.replace("[1, 10.0, 20]", "[1, \"x\", 20]"), "not a number"),
            (format!("{BASE}\n[[known_gap]]\ncell = \"nope\"\nreason = \"r\"\n"), "no cell labelled 'nope'"),
        ];
        for (text, want) in cases {
            let e = parse(&text, &p).unwrap_err();
            assert!(e.contains(want) && e.contains("x.toml"), "want '{want}' in: {e}");
        }
    }

    #[test]
    fn unknown_experiment_name_lists_the_known_ones() {
        let guard = tmp("find");
        let d = guard.path();
        write(d, "alpha.toml", "");
        let e = find(d, "beta").unwrap_err();
        assert!(e.contains("unknown experiment 'beta'") && e.contains("alpha"), "{e}");
        assert_eq!(find(d, "alpha").unwrap(), d.join("alpha.toml"));
    }
}
