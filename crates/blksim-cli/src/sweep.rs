//! `blksim sweep SPEC.toml`: a cartesian sweep over fio job options, kernel
//! knobs, patches and machine-profile fields, run on all cores, one CSV row
//! per point (its parameters, the key metrics, an error, and a resume key
//! hashing the point as resolved and the blksim build), resumable: rows are
//! appended as points finish, and a rerun skips the points its CSV has
//! with the same key and no error. Each point has the wall budget.
//! When every point is done the same table is written as Parquet (Arrow
//! types: point int64, each axis int64, float64 or string as its values are,
//! the metrics float64, error and key string; a failed point's metrics are null)
//! beside the CSV, and `--plot` draws a metric against the first axis, one
//! line per value of the other axes (SVG).
//!
//! ```toml
//! job = "job.fio"                 # beside the spec (or an axis `job` of files)
//! machine = "spr-gen5"            # a built-in, or a profile file beside the spec
//! seed = 1
//! cmdline = "nvme.poll_queues=0"  # for every point (optional)
//! [axes]
//! iodepth = [1, 8, 32]                                # a fio option, in every job section
//! cmdline = ["", "intremap=posted_msi"]               # added to the kernel command line
//! "/sys/block/nvme0n1/queue/rq_affinity" = [0, 1, 2]  # a sysfs/procfs write
//! patch = ["", "mq-deadline-2024"]
//! "profile.cpu.cores_per_socket" = [8, 16]            # a field of the machine profile
//! ```
//!
//! An axis `job = ["a.fio", "b.fio"]` runs each job file (beside the spec)
//! in place of the spec's `job`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;

use blksim::machine::{load_profile, Machine};
use blksim_fio::job::{command_line_option, parse_job_text, ParseContext};
use blksim_lab::estimate::estimated_ios;
use blksim_lab::metric::Metric;
use blksim_lab::observe::Observation;
use blksim_lab::runner::{longest_first, par_map};

use crate::args::SweepArgs;
use crate::budget::{Budget, Watch};
use crate::commands::{knob_settings, load_machine, DirSource};
use crate::failure::Failure;
use crate::{interrupt, out};

/// The metrics of every row, by the lab's names.
const METRICS: &[&str] = &[
    "iops",
    "bw_bytes",
    "clat_mean_us",
    "clat_p50_us",
    "clat_p99_us",
    "clat_p99.9_us",
    "job_usr_pct",
    "job_sys_pct",
    "cpu_busy_pct",
    "cpu_sys_pct",
    "cpu_irq_pct",
    "interrupts_per_sec",
    "notifications_per_sec",
    "ipis_per_sec",
];

/// A sweep spec as written.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    #[serde(default)]
    job: Option<String>,
    #[serde(default = "default_machine")]
    machine: String,
    #[serde(default = "one")]
    seed: u64,
    #[serde(default)]
    cmdline: String,
    axes: toml::Table,
}

fn default_machine() -> String {
    crate::commands::DEFAULT_MACHINE.to_string()
}

fn one() -> u64 {
    1
}

/// What an axis changes.
#[derive(Clone, Debug, PartialEq)]
enum AxisKind {
    /// The job file (beside the spec).
    Job,
    /// A fio option, set in every job section.
    JobOption(String),
    /// Added to the kernel command line.
    Cmdline,
    /// A sysfs/procfs write.
    Write(String),
    /// A patch set (`""`: none).
    Patch,
    /// A field of the machine profile (dotted path below the profile's root).
    Profile(String),
}

/// One axis: its name (the CSV column), what it changes, its values as text.
#[derive(Clone, Debug)]
struct Axis {
    name: String,
    kind: AxisKind,
    values: Vec<toml::Value>,
}

/// A value as the CSV and the job file write it.
fn text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The axes of a spec, checked.
fn axes(table: &toml::Table) -> Result<Vec<Axis>, String> {
    table
        .iter()
        .map(|(name, values)| {
            let values = values
                .as_array()
                .filter(|v| !v.is_empty())
                .cloned()
                .ok_or_else(|| format!("axes.{name}: expected a non-empty list of values"))?;
            let kind = if name == "job" {
                AxisKind::Job
            } else if name == "cmdline" {
                AxisKind::Cmdline
            } else if name == "patch" {
                AxisKind::Patch
            } else if name.starts_with('/') {
                AxisKind::Write(name.clone())
            } else if let Some(field) = name.strip_prefix("profile.") {
                AxisKind::Profile(field.to_string())
            } else if command_line_option(name).is_some() {
                AxisKind::JobOption(name.clone())
            } else {
                return Err(format!(
                    "axes.{name}: not a fio option, `job`, `cmdline`, `patch`, a /sys or /proc path, or `profile.FIELD`"
                ));
            };
            Ok(Axis { name: name.clone(), kind, values })
        })
        .collect()
}

/// Put the axes in the order the spec writes them (a TOML table is read
/// in name order): the CSV's columns, the plot's first axis and which
/// axis runs fastest follow the spec.
fn sort_as_written(axes: &mut [Axis], text: &str) {
    let Ok(doc) = text.parse::<toml_edit::DocumentMut>() else { return };
    let Some(table) = doc.get("axes").and_then(|t| t.as_table_like()) else { return };
    let order: Vec<&str> = table.iter().map(|(k, _)| k).collect();
    axes.sort_by_key(|a| order.iter().position(|k| *k == a.name).unwrap_or(usize::MAX));
}

/// Point `i` of the cartesian product (the last axis fastest): one value index per axis.
fn point(axes: &[Axis], mut i: usize) -> Vec<usize> {
    let mut at = vec![0; axes.len()];
    for (k, axis) in axes.iter().enumerate().rev() {
        at[k] = i % axis.values.len();
        i /= axis.values.len();
    }
    at
}

/// The job file with `options` appended to every job section (later lines win in fio).
fn with_options(job: &str, options: &[(String, String)]) -> String {
    let extra: String = options.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
    let mut out = String::new();
    let mut in_job = false;
    for line in job.lines() {
        let t = line.trim_start();
        if t.starts_with('[') {
            if in_job {
                out += &extra;
            }
            in_job = !t.starts_with("[global");
        }
        out += line;
        out.push('\n');
    }
    if in_job {
        out += &extra;
    }
    out
}

/// An `extends` overlay setting dotted `fields` of the profile `base`.
fn profile_overlay(base: &str, fields: &[(String, toml::Value)]) -> String {
    let mut root = toml::Table::new();
    root.insert("extends".into(), toml::Value::String(base.to_string()));
    for (path, v) in fields {
        let mut table = &mut root;
        let parts: Vec<&str> = path.split('.').collect();
        for p in &parts[..parts.len() - 1] {
            table = table
                .entry(p.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                .as_table_mut()
                .expect("a table");
        }
        table.insert(parts[parts.len() - 1].to_string(), v.clone());
    }
    toml::to_string(&root).expect("TOML")
}

/// The sweep, read.
struct Spec {
    dir: PathBuf,
    raw: RawSpec,
    /// The job files (the spec's, or the `job` axis's, in its order): path and text.
    jobs: Vec<(PathBuf, String)>,
    axes: Vec<Axis>,
    points: usize,
}

impl Spec {
    fn load(path: &Path) -> Result<Spec, String> {
        let spec_text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let raw: RawSpec = toml::from_str(&spec_text)
            .map_err(|e| blksim::machine::profile::toml_error_at(&spec_text, &path.display().to_string(), &e))?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut axes = axes(&raw.axes).map_err(|e| format!("{}: {e}", path.display()))?;
        sort_as_written(&mut axes, &spec_text);
        let names: Vec<String> = match (&raw.job, axes.iter().find(|a| a.kind == AxisKind::Job)) {
            (Some(job), None) => vec![job.clone()],
            (None, Some(axis)) => axis.values.iter().map(text).collect(),
            (Some(_), Some(_)) => {
                return Err(format!("{}: `job` is given twice (the spec's and an axis): give one", path.display()))
            }
            (None, None) => {
                return Err(format!("{}: no job: expected `job = \"FILE.fio\"` or an axis `job`", path.display()))
            }
        };
        let jobs = names
            .iter()
            .map(|name| {
                let job_path = dir.join(name);
                let job_text = std::fs::read_to_string(&job_path)
                    .map_err(|e| format!("{}: job {}: {e}", path.display(), job_path.display()))?;
                Ok((job_path, job_text))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let points = axes.iter().map(|a| a.values.len()).product();
        Ok(Spec { dir, raw, jobs, axes, points })
    }

    /// The machine of point `at`: the spec's, with the point's profile fields overlaid.
    fn machine(&self, at: &[usize]) -> Result<Machine, String> {
        let fields: Vec<(String, toml::Value)> = self
            .axes
            .iter()
            .zip(at)
            .filter_map(|(a, &i)| match &a.kind {
                AxisKind::Profile(f) => Some((f.clone(), a.values[i].clone())),
                _ => None,
            })
            .collect();
        let spec_machine = self.dir.join(&self.raw.machine);
        let base_is_file = self.raw.machine.ends_with(".toml") || spec_machine.exists();
        if fields.is_empty() {
            return load_machine(&if base_is_file {
                spec_machine.display().to_string()
            } else {
                self.raw.machine.clone()
            });
        }
        let base = if base_is_file {
            spec_machine.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
        } else {
            self.raw.machine.clone()
        };
        let source_dir = if base_is_file {
            spec_machine.parent().map(Path::to_path_buf).unwrap_or_default()
        } else {
            self.dir.clone()
        };
        load_profile(&profile_overlay(&base, &fields), "sweep point", &DirSource(source_dir))
    }

    /// Point `i` ready to run: its machine, settings and jobs, or why it cannot run.
    fn prepare(&self, i: usize) -> Result<Prepared, String> {
        let at = point(&self.axes, i);
        let machine = self.machine(&at)?;
        let mut cmdline = vec![self.raw.cmdline.clone()];
        let (mut sets, mut patches, mut options) = (Vec::new(), Vec::new(), Vec::new());
        let mut job = 0;
        for (a, &k) in self.axes.iter().zip(&at) {
            let v = text(&a.values[k]);
            match &a.kind {
                AxisKind::Job => job = k,
                AxisKind::Cmdline => cmdline.push(v),
                AxisKind::Write(path) => sets.push(format!("{path}={v}")),
                AxisKind::Patch if v.is_empty() => {}
                AxisKind::Patch => patches.push(v),
                AxisKind::JobOption(name) => options.push((name.clone(), v)),
                AxisKind::Profile(_) => {}
            }
        }
        let cmdline: Vec<String> = cmdline.into_iter().filter(|c| !c.trim().is_empty()).collect();
        // The point's row says why it failed: the error as text (the CSV's edge).
        let settings = knob_settings(&machine, &cmdline, &sets, &patches).map_err(|e| e.message)?;
        let ctx = ParseContext::for_machine(&machine, std::env::vars().collect::<BTreeMap<_, _>>());
        let (job_path, job_text) = &self.jobs[job];
        let jobs = parse_job_text(&with_options(job_text, &options), job_path, &ctx).map_err(|e| e.to_string())?;
        // A sweep writes no fio logs: no I/O records kept.
        let configs: Vec<_> =
            jobs.jobs.into_iter().map(|j| blksim::workload::JobConfig { record_ios: false, ..j.config }).collect();
        let key = resume_key(&format!("{machine:?}\n{settings:?}\n{configs:?}\n{}", self.raw.seed));
        Ok(Prepared { machine, settings, configs, key })
    }

    /// Run a prepared point under `watch`: its metric values, or why it failed (`None`: a signal
    /// stopped it, and it is not done).
    fn run(&self, p: &Result<Prepared, String>, watch: &Watch) -> Option<Result<Vec<String>, String>> {
        let Prepared { machine, settings, configs, .. } = match p {
            Ok(p) => p,
            Err(e) => return Some(Err(e.clone())),
        };
        let options = blksim::RunOptions { stop: Some(watch.stop.clone()), ..Default::default() };
        let result = blksim::run_with(machine, settings, configs, self.raw.seed, &options);
        match watch.why_stopped() {
            Some(why) if why == "interrupted" => None,
            Some(why) => Some(Err(why)),
            None => Some(result.map_err(|e| e.message).and_then(|(report, inv)| Self::metrics(&report, &inv))),
        }
    }

    /// A finished run's metric values (or the invariant it broke).
    fn metrics(report: &blksim::stats::RunReport, inv: &blksim::Invariants) -> Result<Vec<String>, String> {
        crate::invariants::check(report, inv).map_err(|f| f.message)?;
        let obs = Observation::from_report(report);
        Ok(METRICS
            .iter()
            .map(|m| Metric::parse(m).ok().and_then(|m| m.eval(&obs).ok()).map_or(String::new(), |v| format!("{v}")))
            .collect())
    }

    /// The CSV header: the point, its axes, the metrics, the error, the key.
    fn header(&self) -> String {
        let names = std::iter::once("point".to_string())
            .chain(self.axes.iter().map(|a| a.name.clone()))
            .chain(METRICS.iter().map(|m| m.to_string()))
            .chain(["error".to_string(), "key".to_string()]);
        names.map(|n| csv_field(&n)).collect::<Vec<_>>().join(",")
    }

    /// Point `i`'s row, for the point resolved as `key`.
    fn row(&self, i: usize, key: &str, result: &Result<Vec<String>, String>) -> String {
        self.row_fields(i, key, result).iter().map(|f| csv_field(f)).collect::<Vec<_>>().join(",")
    }

    /// Point `i`'s row as its fields: the point, its axes' values, the metrics, the error, the key.
    fn row_fields(&self, i: usize, key: &str, result: &Result<Vec<String>, String>) -> Vec<String> {
        let at = point(&self.axes, i);
        let mut fields = vec![i.to_string()];
        fields.extend(self.axes.iter().zip(&at).map(|(a, &k)| text(&a.values[k])));
        match result {
            Ok(values) => fields.extend(values.iter().cloned().chain(std::iter::once(String::new()))),
            Err(e) => fields.extend(METRICS.iter().map(|_| String::new()).chain(std::iter::once(e.clone()))),
        }
        fields.push(key.to_string());
        fields
    }
}

/// A sweep spec for the library call (`blksim.sweep` in Python, which runs
/// the points where it likes: threads, Ray): the same points, rows and keys
/// as `blksim sweep`, one point at a time, without the wall budget.
pub struct SweepSpec(Spec);

impl SweepSpec {
    /// Read a spec file (its job and profile files beside it).
    pub fn load(path: &Path) -> Result<SweepSpec, blksim::Error> {
        Spec::load(path).map(SweepSpec).map_err(blksim::Error::bad_input)
    }

    /// How many points.
    pub fn points(&self) -> usize {
        self.0.points
    }

    /// The columns of a row: `point`, the axes, the metrics, `error`, `key`.
    pub fn columns(&self) -> Vec<String> {
        let axes = self.0.axes.iter().map(|a| a.name.clone());
        std::iter::once("point".to_string())
            .chain(axes)
            .chain(METRICS.iter().map(|m| m.to_string()))
            .chain(["error".to_string(), "key".to_string()])
            .collect()
    }

    /// The metric columns.
    pub fn metrics() -> &'static [&'static str] {
        METRICS
    }

    /// Point `i`'s resume key ("" when it cannot be prepared: it runs, and its row says why).
    pub fn key(&self, i: usize) -> String {
        self.0.prepare(i).map(|p| p.key).unwrap_or_default()
    }

    /// Run point `i`: its row's fields (a failed point's metrics empty, its error said).
    pub fn run_point(&self, i: usize) -> Result<Vec<String>, blksim::Error> {
        if i >= self.0.points {
            return Err(blksim::Error::bad_input(format!("point {i}: the sweep has {} points", self.0.points)));
        }
        let p = self.0.prepare(i);
        let key = p.as_ref().map_or(String::new(), |p| p.key.clone());
        let result = p.and_then(|Prepared { machine, settings, configs, .. }| {
            let (report, inv) = blksim::run_with(&machine, &settings, &configs, self.0.raw.seed, &Default::default())
                .map_err(|e| e.message)?;
            Spec::metrics(&report, &inv)
        });
        Ok(self.0.row_fields(i, &key, &result))
    }
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\"").replace('\n', " "))
    } else {
        s.to_string()
    }
}

/// A CSV line's fields, quotes undone (as [`csv_field`] writes them).
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                fields.last_mut().expect("a field").push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(String::new()),
            (c, _) => fields.last_mut().expect("a field").push(c),
        }
    }
    fields
}

/// The Arrow type of an axis's column: int64 when every value is an integer, float64 when every
/// value is a number, else string.
fn axis_type(axis: &Axis) -> DataType {
    if axis.values.iter().all(|v| v.is_integer()) {
        DataType::Int64
    } else if axis.values.iter().all(|v| v.is_integer() || v.is_float()) {
        DataType::Float64
    } else {
        DataType::Utf8
    }
}

/// A column of `rows`' field `k` as `kind` (empty fields null, but empty strings in a column that is
/// not `nullable`: an axis value `""`).
fn column(rows: &[(usize, Vec<String>)], k: usize, kind: &DataType, nullable: bool) -> ArrayRef {
    let field = |r: &(usize, Vec<String>)| r.1.get(k).filter(|f| !f.is_empty()).cloned();
    match kind {
        DataType::Int64 => {
            Arc::new(rows.iter().map(|r| field(r).and_then(|f| f.parse::<i64>().ok())).collect::<Int64Array>())
        }
        DataType::Float64 => {
            Arc::new(rows.iter().map(|r| field(r).and_then(|f| f.parse::<f64>().ok())).collect::<Float64Array>())
        }
        _ if nullable => Arc::new(rows.iter().map(field).collect::<StringArray>()),
        _ => Arc::new(rows.iter().map(|r| Some(r.1.get(k).cloned().unwrap_or_default())).collect::<StringArray>()),
    }
}

/// The sweep's table as Parquet: the CSV's columns, typed.
fn write_parquet(path: &Path, spec: &Spec, rows: &[(usize, Vec<String>)]) -> Result<(), String> {
    let mut kinds = vec![("point".to_string(), DataType::Int64, false)];
    kinds.extend(spec.axes.iter().map(|a| (a.name.clone(), axis_type(a), false)));
    kinds.extend(METRICS.iter().map(|m| (m.to_string(), DataType::Float64, true)));
    kinds.push(("error".to_string(), DataType::Utf8, true));
    kinds.push(("key".to_string(), DataType::Utf8, false));
    let columns: Vec<ArrayRef> =
        kinds.iter().enumerate().map(|(k, (_, kind, nullable))| column(rows, k, kind, *nullable)).collect();
    let schema = Arc::new(Schema::new(
        kinds.iter().map(|(name, kind, nullable)| Field::new(name, kind.clone(), *nullable)).collect::<Vec<_>>(),
    ));
    let what = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let batch = RecordBatch::try_new(schema.clone(), columns).map_err(|e| what(&e))?;
    let file = std::fs::File::create(path).map_err(|e| what(&e))?;
    let mut writer = ArrowWriter::try_new(file, schema, None).map_err(|e| what(&e))?;
    writer.write(&batch).map_err(|e| what(&e))?;
    writer.close().map_err(|e| what(&e))?;
    Ok(())
}

/// `--plot`: `metric` against the first axis, one line per combination of the other axes' values.
fn write_plot(path: &Path, spec: &Spec, rows: &[(usize, Vec<String>)], metric: &str, name: &str) -> Result<(), String> {
    let Some(m) = METRICS.iter().position(|m| *m == metric) else {
        return Err(format!("--metric {metric}: not a column of the sweep (one of: {})", METRICS.join(", ")));
    };
    let first = &spec.axes[0];
    let x_values: Vec<String> = first.values.iter().map(text).collect();
    let mut lines: Vec<blksim_lab::plot::SweepLine> = Vec::new();
    for (i, fields) in rows {
        let at = point(&spec.axes, *i);
        let label: Vec<String> =
            spec.axes.iter().zip(&at).skip(1).map(|(a, &k)| format!("{}={}", a.name, text(&a.values[k]))).collect();
        let label = label.join(", ");
        let value = fields.get(1 + spec.axes.len() + m).and_then(|f| f.parse::<f64>().ok());
        let line = match lines.iter().position(|l| l.label == label) {
            Some(l) => &mut lines[l],
            None => {
                lines.push(blksim_lab::plot::SweepLine { label, values: vec![None; x_values.len()] });
                lines.last_mut().expect("a line")
            }
        };
        line.values[at[0]] = value;
    }
    let title = format!("{name}: {metric} against {}", first.name);
    blksim_lab::plot::write_sweep_figure(path, &title, &first.name, &x_values, metric, &lines)
}

/// A point's resume key: what it was run with (its machine, settings, jobs
/// and seed, resolved) and which blksim ran it (its version and build), as
/// 16 hex digits of FNV-1a.
fn resume_key(resolved: &str) -> String {
    static BUILD: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let build = *BUILD.get_or_init(|| {
        let exe = std::env::current_exe().and_then(std::fs::read).unwrap_or_default();
        fnv1a(fnv1a(0, env!("CARGO_PKG_VERSION").as_bytes()), &exe)
    });
    format!("{:016x}", fnv1a(build, resolved.as_bytes()))
}

/// FNV-1a over `bytes`, continuing from `h` (0: the offset basis).
fn fnv1a(h: u64, bytes: &[u8]) -> u64 {
    let mut h = if h == 0 { 0xcbf2_9ce4_8422_2325 } else { h };
    for &b in bytes {
        h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A row of an earlier run.
struct Done {
    row: String,
    key: String,
    failed: bool,
}

/// The rows of an earlier run of the sweep, by point (`None`: there is a file, but its columns are not this
/// spec's).
fn finished_rows(path: &Path, header: &str) -> Option<BTreeMap<usize, Done>> {
    let Ok(text) = std::fs::read_to_string(path) else { return Some(BTreeMap::new()) };
    let mut lines = text.lines();
    match lines.next() {
        None => return Some(BTreeMap::new()),
        Some(h) if h != header => return None,
        Some(_) => {}
    }
    let rows = lines.filter_map(|l| {
        let fields = csv_fields(l);
        let point = fields.first()?.parse().ok()?;
        let n = fields.len();
        let failed = n < 2 || !fields[n - 2].is_empty();
        Some((point, Done { row: l.to_string(), key: fields.last()?.clone(), failed }))
    });
    Some(rows.collect())
}

/// A point ready to run.
struct Prepared {
    machine: Machine,
    settings: blksim::settings::Settings,
    configs: Vec<blksim::workload::JobConfig>,
    /// Its resume key.
    key: String,
}

/// `blksim sweep`: run every point the CSV does not have as it is now (new,
/// changed, or failed before) on all cores, append each row as it finishes,
/// then write the CSV sorted by point.
pub fn sweep(args: &SweepArgs) -> Result<(), Failure> {
    let spec = Spec::load(Path::new(&args.spec))?;
    if args.plot.is_some() {
        // What --plot needs, checked before any point runs.
        if spec.axes.is_empty() {
            return Err(format!(
                "sweep --plot: {} has no axis to draw {} against (its [axes] table is empty)",
                args.spec, args.metric
            )
            .into());
        }
        if !METRICS.contains(&args.metric.as_str()) {
            return Err(format!(
                "--metric {}: not a column of the sweep (one of: {})",
                args.metric,
                METRICS.join(", ")
            )
            .into());
        }
    }
    let budget = Budget::of(&args.budget)?;
    let output = args.output.clone().map(PathBuf::from).unwrap_or_else(|| Path::new(&args.spec).with_extension("csv"));
    if output.exists() && !output.is_file() {
        return Err(format!(
            "--output {}: not a regular file (the sweep's CSV is resumed from, and replaced whole as points finish)",
            output.display()
        )
        .into());
    }
    let header = spec.header();
    let earlier = finished_rows(&output, &header).unwrap_or_else(|| {
        eprintln!(
            "blksim: sweep: {}'s columns are not this spec's (its axes changed): running every point again",
            output.display()
        );
        BTreeMap::new()
    });
    let threads = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    // Every point resolved (in parallel, then let go: a big sweep does not
    // hold every machine): its key, the simulated I/Os it will do (so that
    // the longest start first and no core waits alone for one at the end),
    // and whether it is over the wall budget.
    let points: Vec<usize> = (0..spec.points).collect();
    let resolved: Vec<(String, f64, Option<String>)> = par_map(
        &points,
        threads,
        |&i| match spec.prepare(i) {
            Ok(p) => {
                let w = blksim::Workload { jobs: p.configs, dsa: Vec::new() };
                (p.key, estimated_ios(&p.machine, &w), budget.refusal(&p.machine, &w))
            }
            Err(_) => (String::new(), 0.0, None),
        },
        &|_, _| {},
    );
    let over: Vec<String> =
        resolved.iter().enumerate().filter_map(|(i, r)| Some(format!("point {i} {}", r.2.as_ref()?))).collect();
    if let Some(first) = over.first() {
        return Err(format!(
            "sweep: {} of {} points are over the wall budget ({first}{}): shorten them, or run anyway with --yes \
             (or a larger --wall-budget)",
            over.len(),
            spec.points,
            if over.len() > 1 { "; ..." } else { "" }
        )
        .into());
    }
    // Rows kept: same key, no error.
    let mut done: BTreeMap<usize, String> = BTreeMap::new();
    let (mut changed, mut failed_before) = (0, 0);
    for (i, d) in earlier {
        match resolved.get(i) {
            Some((key, _, _)) if !key.is_empty() && *key == d.key && !d.failed => {
                done.insert(i, d.row);
            }
            Some(_) if d.failed => failed_before += 1,
            Some(_) => changed += 1,
            None => {}
        }
    }
    let todo: Vec<usize> = points.iter().copied().filter(|i| !done.contains_key(i)).collect();
    if !done.is_empty() || changed > 0 || failed_before > 0 {
        eprintln!(
            "blksim: sweep: {} of {} points already in {}; running the other {} ({changed} changed since: job, \
             machine, settings, seed or blksim; {failed_before} failed before)",
            done.len(),
            spec.points,
            output.display(),
            todo.len()
        );
    }
    let what = |e: &dyn std::fmt::Display| format!("--output {}: {e}", output.display());
    // The file from now on: its header, the rows kept, then each new row as it finishes.
    let kept: String = std::iter::once(header.clone()).chain(done.values().cloned()).map(|l| l + "\n").collect();
    out::replace_file(&output, kept.as_bytes(), "--output")?;
    let file = std::fs::OpenOptions::new().append(true).open(&output).map_err(|e| what(&e))?;
    let file = Mutex::new(file);
    let rows = Mutex::new(Vec::new());
    let next = AtomicUsize::new(0);
    let cost: Vec<f64> = todo.iter().map(|&i| resolved[i].1).collect();
    let order = longest_first(&cost);
    let signals = interrupt::stop_on_signals();
    let bar = crate::reproduce::progress_bar("points");
    bar(0, todo.len());
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&o) = order.get(k) else { break };
                if signals.load(Ordering::Relaxed) {
                    break;
                }
                let i = todo[o];
                let p = spec.prepare(i);
                let key = p.as_ref().map_or(String::new(), |p| p.key.clone());
                let watch = Watch::start(&signals, budget);
                let Some(result) = spec.run(&p, &watch) else { break };
                let row = spec.row(i, &key, &result);
                let _ = writeln!(file.lock().unwrap(), "{row}");
                let mut rows = rows.lock().unwrap();
                rows.push((i, row));
                bar(rows.len(), todo.len());
            });
        }
    });
    done.extend(rows.into_inner().unwrap());
    let failed: BTreeSet<usize> = done
        .iter()
        .filter(|(_, row)| csv_fields(row).iter().rev().nth(1).is_some_and(|e| !e.is_empty()))
        .map(|(i, _)| *i)
        .collect();
    let finished = done.len();
    let text: String = std::iter::once(header).chain(done.into_values()).map(|l| l + "\n").collect();
    out::replace_file(&output, text.as_bytes(), "--output")?;
    interrupt::check_stopped(
        &signals,
        &format!(
            "{finished} of {} points done, in {}; run the sweep again to finish it",
            spec.points,
            output.display()
        ),
    )?;
    let table: Vec<(usize, Vec<String>)> = text.lines().skip(1).map(|l| (0, csv_fields(l))).collect();
    let table: Vec<(usize, Vec<String>)> =
        table.into_iter().filter_map(|(_, f)| Some((f.first()?.parse().ok()?, f))).collect();
    let parquet_path = output.with_extension("parquet");
    write_parquet(&parquet_path, &spec, &table)?;
    eprintln!("blksim: sweep: {} points in {} and {}", spec.points, output.display(), parquet_path.display());
    if let Some(plot) = &args.plot {
        let path = if plot.is_empty() { output.with_extension("svg") } else { PathBuf::from(plot) };
        write_plot(&path, &spec, &table, &args.metric, &args.spec)?;
        eprintln!("blksim: sweep: {} against {} in {}", args.metric, spec.axes[0].name, path.display());
    }
    match failed.first() {
        None => Ok(()),
        Some(first) => Err(format!(
            "sweep: {} of {} points failed (their `error` column says why; the first is point {first}; a rerun \
             runs them again)",
            failed.len(),
            spec.points
        )
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_undo_csv_field() {
        let fields = ["1", "a,b", "say \"hi\"", ""];
        let line = fields.iter().map(|f| csv_field(f)).collect::<Vec<_>>().join(",");
        assert_eq!(csv_fields(&line), fields);
    }

    #[test]
    fn points_run_through_the_cartesian_product_last_axis_fastest() {
        let axis =
            |n: usize| Axis { name: "a".into(), kind: AxisKind::Cmdline, values: vec![toml::Value::Integer(0); n] };
        let axes = [axis(2), axis(3)];
        let all: Vec<Vec<usize>> = (0..6).map(|i| point(&axes, i)).collect();
        assert_eq!(all, [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]);
    }

    #[test]
    fn job_options_go_to_every_job_section_and_not_to_global() {
        let job = "[global]\nbs=4k\n[a]\nrw=read\n[b]\nrw=write\n";
        let got = with_options(job, &[("iodepth".into(), "8".into())]);
        assert_eq!(got, "[global]\nbs=4k\n[a]\nrw=read\niodepth=8\n[b]\nrw=write\niodepth=8\n");
    }

    #[test]
    fn profile_fields_become_an_extends_overlay() {
        let text = profile_overlay("spr-gen5", &[("cpu.cores_per_socket".into(), toml::Value::Integer(4))]);
        let m = load_profile(&text, "t", &blksim::machine::Builtins).unwrap();
        assert_eq!(m.topology.cores_per_socket, 4);
    }

    #[test]
    fn an_axis_must_be_something_blksim_can_set() {
        let table: toml::Table = toml::from_str("iodepth = [1]\nfrobnicate = [1]\n").unwrap();
        assert!(axes(&table).unwrap_err().contains("axes.frobnicate"));
        let table: toml::Table = toml::from_str("iodepth = []\n").unwrap();
        assert!(axes(&table).unwrap_err().contains("non-empty"));
    }

    #[test]
    fn a_job_axis_runs_each_file_in_place_of_the_spec_job_and_one_job_is_required() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
        write("a.fio", "[a]\nfilename=/dev/nvme0n1\nrw=randread\nruntime=1ms\n");
        write("b.fio", "[b]\nfilename=/dev/nvme1n1\nrw=randread\nruntime=1ms\n");
        write("s.toml", "[axes]\njob = [\"a.fio\", \"b.fio\"]\niodepth = [1, 2]\n");
        let spec = Spec::load(&dir.path().join("s.toml")).unwrap();
        assert_eq!(spec.points, 4);
        let files = |i: usize| spec.prepare(i).unwrap().configs[0].filenames.join(":");
        assert_eq!([files(0), files(1), files(2), files(3)].map(|f| f.contains("nvme1")), [false, false, true, true]);
        write("two.toml", "job = \"a.fio\"\n[axes]\njob = [\"b.fio\"]\n");
        assert!(Spec::load(&dir.path().join("two.toml")).err().unwrap().contains("given twice"));
        write("none.toml", "[axes]\niodepth = [1]\n");
        assert!(Spec::load(&dir.path().join("none.toml")).err().unwrap().contains("no job"));
    }
}
