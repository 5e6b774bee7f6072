//! `blksim fit`: move chosen costs of a machine profile, each within its
//! documented range (`min..max`), to minimise the error over chosen
//! experiments, with Nelder-Mead (argmin) in the unit cube of the ranges.
//! Every candidate is written as an `extends` overlay and loaded through the
//! model's profile loader, so the overlay written at the end is exactly what
//! was evaluated.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use argmin::core::{CostFunction, Error as ArgminError, Executor, State};
use argmin::solver::neldermead::NelderMead;
use blksim::machine::{load_profile, Builtins, Costs, Machine, ProfileSource};

use crate::experiment::Experiment;
use crate::runner::{names_machine, run_experiments, CellStatus, ExperimentResult, LabOptions};

/// A profile to fit: its name (a built-in's, or a profile file's stem) and where its text comes from.
#[derive(Clone, Debug)]
pub struct BaseProfile {
    /// The name experiments use (`spr-gen5`) — the overlay `extends` it.
    pub name: String,
    /// A profile file's directory (for `extends` lookups), or `None` for a built-in.
    pub dir: Option<PathBuf>,
}

impl ProfileSource for BaseProfile {
    fn profile_text(&self, name: &str) -> Option<String> {
        self.dir
            .as_ref()
            .and_then(|d| std::fs::read_to_string(d.join(format!("{name}.toml"))).ok())
            .or_else(|| Builtins.profile_text(name))
    }
}

impl BaseProfile {
    /// A built-in name, or a profile file `DIR/NAME.toml` (then `NAME` is what experiments must name).
    pub fn new(spec: &str) -> Result<BaseProfile, String> {
        if spec.ends_with(".toml") {
            let p = Path::new(spec);
            let name = p.file_stem().and_then(|s| s.to_str()).ok_or_else(|| format!("{spec}: bad file name"))?;
            let dir = p.parent().map(Path::to_path_buf).unwrap_or_default();
            if !p.is_file() {
                return Err(format!("{spec}: no such profile file"));
            }
            return Ok(BaseProfile { name: name.to_string(), dir: Some(dir) });
        }
        if Builtins.profile_text(spec).is_none() {
            return Err(format!(
                "unknown machine '{spec}'; built-in machines: {}",
                blksim::machine::builtin_names().join(", ")
            ));
        }
        Ok(BaseProfile { name: spec.to_string(), dir: None })
    }

    /// The profile's TOML with its `extends` chain applied (tables merge key by key, the rest replaces),
    /// as the model's loader does.
    pub fn merged(&self) -> Result<toml::Value, String> {
        merged(&self.name, self)
    }
}

fn merged(name: &str, source: &dyn ProfileSource) -> Result<toml::Value, String> {
    let text = source.profile_text(name).ok_or_else(|| format!("unknown machine '{name}'"))?;
    blksim::machine::profile::merged_profile(&text, name, source)
}

/// One cost to move.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// As the user wrote it, normalised: `costs.syscall_ns`, `iommu.remap_service_ns`, `root_port.msi_service_ns`.
    pub name: String,
    pub ns: u64,
    pub min: u64,
    pub max: u64,
}

fn cost_fields(v: &toml::Value) -> Option<(u64, u64, u64)> {
    let g = |k: &str| v.get(k).and_then(|x| x.as_integer()).and_then(|x| u64::try_from(x).ok());
    Some((g("ns")?, g("min")?, g("max")?))
}

/// Resolve parameter names against the merged profile: a `[costs]` name (bare or `costs.NAME`),
/// a cost of a table (`iommu.remap_service_ns`), or `root_port.FIELD` (every root port alike).
pub fn resolve_params(merged: &toml::Value, names: &[String], profile: &str) -> Result<Vec<Param>, String> {
    let mut out: Vec<Param> = Vec::new();
    for raw in names {
        let name = if Costs::NAMES.contains(&raw.as_str()) { format!("costs.{raw}") } else { raw.clone() };
        let Some((ns, min, max)) = find_cost(merged, &name) else {
            return Err(format!(
                "fit parameter '{raw}' is not a cost of machine '{profile}' (costs: {})",
                known_costs(merged).join(", ")
            ));
        };
        if out.iter().any(|p| p.name == name) {
            return Err(format!("fit parameter '{raw}' is given twice"));
        }
        if min >= max {
            return Err(format!("fit parameter '{raw}' has an empty range {min}..{max}"));
        }
        out.push(Param { name, ns, min, max });
    }
    if out.is_empty() {
        return Err("no parameter to fit (give --param NAME)".into());
    }
    Ok(out)
}

/// The `(ns, min, max)` of the cost `TABLE.KEY` (or `device_model.MODEL.KEY`)
/// in the merged profile, if it is one.
fn find_cost(merged: &toml::Value, name: &str) -> Option<(u64, u64, u64)> {
    let (table, key) = name.rsplit_once('.')?;
    match table_at(merged, table) {
        Some(toml::Value::Array(items)) => array_cost(items, key),
        Some(t @ toml::Value::Table(_)) => t.get(key).and_then(cost_fields),
        _ => None,
    }
}

/// The value at a dotted table path (`iommu`, `device_model.msa_lun`) of the merged profile.
fn table_at<'a>(merged: &'a toml::Value, path: &str) -> Option<&'a toml::Value> {
    match path.split_once('.') {
        Some(("device_model", model)) => merged.get("device_model")?.get(model),
        Some(_) => None,
        None => merged.get(path),
    }
}

/// The cost `key` of every item of an array of tables (root ports), if all have it with the same range.
fn array_cost(items: &[toml::Value], key: &str) -> Option<(u64, u64, u64)> {
    let costs: Vec<_> = items.iter().map(|i| i.get(key).and_then(cost_fields)).collect();
    match costs.first() {
        Some(Some((ns, min, max))) if costs.iter().all(|c| c.map(|(_, a, b)| (a, b)) == Some((*min, *max))) => {
            Some((*ns, *min, *max))
        }
        _ => None,
    }
}

/// Every name a parameter can take on the merged profile, for the message naming an unknown one.
fn known_costs(merged: &toml::Value) -> Vec<String> {
    let mut known: Vec<String> = Costs::NAMES.iter().map(|s| s.to_string()).collect();
    for (t, v) in merged.as_table().into_iter().flatten() {
        match v {
            toml::Value::Table(models) if t == "device_model" => {
                for (model, m) in models {
                    if let Some(m) = m.as_table() {
                        known.extend(cost_names(&format!("device_model.{model}"), m).collect::<Vec<_>>());
                    }
                }
            }
            toml::Value::Table(m) if t != "costs" => known.extend(cost_names(t, m)),
            toml::Value::Array(items) => {
                if let Some(first) = items.first().and_then(|f| f.as_table()) {
                    known.extend(cost_names(t, first))
                }
            }
            _ => {}
        }
    }
    known
}

/// `TABLE.KEY` for each cost of `table`.
fn cost_names<'a>(table: &str, m: &'a toml::map::Map<String, toml::Value>) -> impl Iterator<Item = String> + 'a {
    let table = table.to_string();
    m.iter().filter(|(_, c)| cost_fields(c).is_some()).map(move |(k, _)| format!("{table}.{k}"))
}

/// The overlay profile setting `params` to `values` (ns), as TOML text.
pub fn overlay_text(
    base: &BaseProfile,
    merged: &toml::Value,
    params: &[Param],
    values: &[u64],
    header: &str,
) -> String {
    let fitted = FittedTables::of(merged, params, values);
    let mut s = String::new();
    for line in header.lines() {
        s += &format!("# {line}\n");
    }
    let q = |x: &str| toml::Value::String(x.to_string()).to_string();
    s += &format!("name = {}\n", q(&format!("{}-fit", base.name)));
    s += &format!("description = {}\n", q(&format!("{} with costs fitted by blksim fit", base.name)));
    s += &format!("extends = {}\n", q(&base.name));
    s += &fitted.to_toml();
    s
}

/// The fitted costs, by where they go in the overlay.
#[derive(Default)]
struct FittedTables {
    /// `[costs]`.
    costs: toml::map::Map<String, toml::Value>,
    /// Other tables (`[iommu]`): only their fitted costs.
    tables: BTreeMap<String, toml::map::Map<String, toml::Value>>,
    /// Arrays of tables (`[[root_port]]`): whole, every item with the fitted cost.
    arrays: BTreeMap<String, Vec<toml::Value>>,
}

impl FittedTables {
    /// `params` set to `values` (ns) over the merged profile.
    fn of(merged: &toml::Value, params: &[Param], values: &[u64]) -> FittedTables {
        let mut f = FittedTables::default();
        for (p, &ns) in params.iter().zip(values) {
            let (table, key) = p.name.rsplit_once('.').expect("resolved names are dotted");
            match table_at(merged, table) {
                Some(toml::Value::Array(items)) => {
                    let arr = f.arrays.entry(table.to_string()).or_insert_with(|| items.clone());
                    for item in arr.iter_mut() {
                        let new = fitted_cost(&item[key], ns);
                        item.as_table_mut().expect("array of tables").insert(key.to_string(), new);
                    }
                }
                Some(t) if table == "costs" => {
                    f.costs.insert(key.to_string(), fitted_cost(&t[key], ns));
                }
                Some(t) => {
                    f.tables.entry(table.to_string()).or_default().insert(key.to_string(), fitted_cost(&t[key], ns));
                }
                None => unreachable!("resolved parameter"),
            }
        }
        f
    }

    /// The tables, then the arrays of tables, then `[costs]`, as TOML.
    fn to_toml(&self) -> String {
        let mut s = String::new();
        for (table, m) in &self.tables {
            s += &format!("\n[{table}]\n");
            for (k, v) in m {
                s += &format!("{k} = {}\n", inline_cost(v));
            }
        }
        for (table, items) in &self.arrays {
            for item in items {
                s += &format!("\n[[{table}]]\n");
                for (k, v) in item.as_table().expect("array of tables") {
                    if cost_fields(v).is_some() {
                        s += &format!("{k} = {}\n", inline_cost(v));
                    } else {
                        s += &format!("{k} = {v}\n");
                    }
                }
            }
        }
        if !self.costs.is_empty() {
            s += "\n[costs]\n";
            for (k, v) in &self.costs {
                s += &format!("{k} = {}\n", inline_cost(v));
            }
        }
        s
    }
}

/// Cost table `orig` with `ns` as its value and its note marked as fitted.
fn fitted_cost(orig: &toml::Value, ns: u64) -> toml::Value {
    let mut t = orig.as_table().cloned().unwrap_or_default();
    t.insert("ns".into(), toml::Value::Integer(ns as i64));
    let note = t.get("note").and_then(|n| n.as_str()).unwrap_or("").to_string();
    if !note.contains("fitted by blksim fit") {
        t.insert("note".into(), toml::Value::String(format!("{note} [fitted by blksim fit]")));
    }
    toml::Value::Table(t)
}

/// A cost as an inline table: `{ ns = .., min = .., max = .., note = .. }`.
fn inline_cost(v: &toml::Value) -> String {
    let t = v.as_table().expect("cost table");
    let mut parts = Vec::new();
    for k in ["ns", "min", "max", "note"] {
        if let Some(x) = t.get(k) {
            parts.push(format!("{k} = {x}"));
        }
    }
    format!("{{ {} }}", parts.join(", "))
}

/// The objective: mean squared error in tolerances ((relative error /
/// tolerance)², so a cell compared within 10 points of a percentage weighs
/// like one compared within 15%) over the cells that have a simulated value
/// and are not documented known gaps (fitting to a gap would make costs
/// stand in for a missing mechanism) unless `include_gaps`.
pub fn objective(results: &[ExperimentResult], include_gaps: bool) -> Option<f64> {
    let errs: Vec<f64> = results
        .iter()
        .flat_map(|r| r.cells.iter())
        .filter(|c| c.status != CellStatus::Pending && (include_gaps || !c.known_gap))
        .filter_map(|c| c.error.map(|e| e / c.tolerance))
        .collect();
    (!errs.is_empty()).then(|| errs.iter().map(|e| e * e).sum::<f64>() / errs.len() as f64)
}

/// What to fit.
pub struct FitSpec<'a> {
    pub base: BaseProfile,
    pub params: Vec<String>,
    pub experiments: &'a [Experiment],
    pub opts: LabOptions,
    /// Nelder-Mead iterations.
    pub iterations: u64,
    /// Fit the known-gap cells too.
    pub include_gaps: bool,
}

pub struct FitResult {
    pub params: Vec<Param>,
    /// Fitted ns per parameter.
    pub fitted: Vec<u64>,
    pub before: Vec<ExperimentResult>,
    pub after: Vec<ExperimentResult>,
    pub objective_before: f64,
    pub objective_after: f64,
    /// Distinct candidates simulated.
    pub evaluations: usize,
    /// The overlay profile, TOML.
    pub overlay: String,
}

struct Problem<'a> {
    spec: &'a FitSpec<'a>,
    merged: toml::Value,
    params: Vec<Param>,
    /// ns vector -> objective.
    cache: Mutex<BTreeMap<Vec<u64>, f64>>,
    /// The first error of a candidate's run inside the solver, kept with its kind.
    failure: Mutex<Option<blksim::Error>>,
    progress: &'a (dyn Fn(usize, f64) + Sync),
}

impl Problem<'_> {
    /// Unit-cube point `u` as ns per parameter (clamped into the cube).
    fn ns_of(&self, u: &[f64]) -> Vec<u64> {
        self.params
            .iter()
            .zip(u)
            .map(|(p, &x)| (p.min as f64 + x.clamp(0.0, 1.0) * (p.max - p.min) as f64).round() as u64)
            .collect()
    }

    /// The candidate machine: the overlay setting `values`, loaded as a profile.
    fn machine(&self, values: &[u64]) -> Result<Machine, String> {
        let text = overlay_text(&self.spec.base, &self.merged, &self.params, values, "");
        load_profile(&text, "fit candidate", &self.spec.base)
    }

    /// The experiments on the candidate machine of `values`.
    fn run(&self, values: &[u64]) -> Result<Vec<ExperimentResult>, blksim::Error> {
        let machine = Arc::new(self.machine(values).map_err(blksim::Error::bad_input)?);
        let mut opts = self.spec.opts.clone();
        opts.substitutes.push((self.spec.base.name.clone(), machine));
        run_experiments(self.spec.experiments, &opts, &|_, _| {})
    }

    /// The objective of `results`; an error if no cell of them counts.
    fn objective_of(&self, results: &[ExperimentResult]) -> Result<f64, String> {
        objective(results, self.spec.include_gaps).ok_or_else(|| NOTHING_TO_FIT.to_string())
    }

    /// The objective of `values`, simulated once (cached) and reported to `progress`.
    fn evaluate(&self, values: &[u64]) -> Result<f64, blksim::Error> {
        if let Some(v) = self.cache.lock().unwrap().get(values) {
            return Ok(*v);
        }
        let results = self.run(values)?;
        let v = self.objective_of(&results).map_err(blksim::Error::bad_input)?;
        let mut cache = self.cache.lock().unwrap();
        cache.insert(values.to_vec(), v);
        (self.progress)(cache.len(), v);
        Ok(v)
    }

    /// Nelder-Mead from the current values: the best point found, in the unit cube of the ranges.
    /// A failure of the model in a candidate's run comes back as itself.
    fn minimise(&self) -> Result<Vec<f64>, blksim::Error> {
        let u0: Vec<f64> = self.params.iter().map(|p| (p.ns - p.min) as f64 / (p.max - p.min) as f64).collect();
        let bad = |e: ArgminError| blksim::Error::bad_input(e.to_string());
        let solver = NelderMead::new(start_simplex(&u0)).with_sd_tolerance(1e-6).map_err(bad)?;
        let res =
            Executor::new(ByRef(self), solver).configure(|s| s.max_iters(self.spec.iterations)).timer(false).run();
        if let Some(e) = self.failure.lock().unwrap().take() {
            return Err(e);
        }
        Ok(res.map_err(bad)?.state().get_best_param().cloned().unwrap_or(u0))
    }
}

/// argmin takes its problem by value; the problem stays ours for the final runs.
struct ByRef<'a, 'b>(&'a Problem<'b>);

impl CostFunction for ByRef<'_, '_> {
    type Param = Vec<f64>;
    type Output = f64;

    fn cost(&self, u: &Vec<f64>) -> Result<f64, ArgminError> {
        let v = self.0.evaluate(&self.0.ns_of(u)).map_err(|e| {
            let message = e.message.clone();
            self.0.failure.lock().unwrap().get_or_insert(e);
            ArgminError::msg(message)
        })?;
        // Outside the unit cube: the clamped point's value plus a pull back inside.
        let outside: f64 = u.iter().map(|x| (x - x.clamp(0.0, 1.0)).powi(2)).sum();
        Ok(v + 10.0 * outside)
    }
}

/// Why nothing can be fitted: every cell is pending or a known gap (without `include_gaps`).
const NOTHING_TO_FIT: &str = "no cell of the chosen experiments has a simulated value to fit (pending or known gaps: --include-gaps fits gaps too)";

/// Fit. `progress(evaluations, objective)` is called after each new candidate.
/// An error is bad input, or (kind `Internal`) a failure of the model in a run.
pub fn fit(spec: &FitSpec, progress: &(dyn Fn(usize, f64) + Sync)) -> Result<FitResult, blksim::Error> {
    let bad = blksim::Error::bad_input;
    check_on_base(spec).map_err(bad)?;
    let merged = spec.base.merged().map_err(bad)?;
    let params = resolve_params(&merged, &spec.params, &spec.base.name).map_err(bad)?;
    let cache = Mutex::new(BTreeMap::new());
    let problem = Problem { spec, merged, params: params.clone(), cache, failure: Mutex::new(None), progress };
    let start: Vec<u64> = params.iter().map(|p| p.ns).collect();
    let before = problem.run(&start)?;
    let objective_before = problem.objective_of(&before).map_err(bad)?;
    problem.cache.lock().unwrap().insert(start.clone(), objective_before);
    let mut fitted = problem.ns_of(&problem.minimise()?);
    let mut objective_after = problem.evaluate(&fitted)?;
    if objective_after > objective_before {
        fitted = start;
        objective_after = objective_before;
    }
    let after = problem.run(&fitted)?;
    let evaluations = problem.cache.lock().unwrap().len();
    let header = fit_header(spec, &params, &fitted, evaluations, (objective_before, objective_after));
    let overlay = overlay_text(&spec.base, &problem.merged, &params, &fitted, &header);
    Ok(FitResult { params, fitted, before, after, objective_before, objective_after, evaluations, overlay })
}

/// Every case of the experiments runs on the machine being fitted.
fn check_on_base(spec: &FitSpec) -> Result<(), String> {
    for e in spec.experiments {
        if let Some(c) = e.cases.iter().find(|c| !names_machine(&c.machine, &spec.base.name)) {
            return Err(format!(
                "experiment '{}' runs case '{}' on machine '{}', not on '{}' being fitted",
                e.name, c.label, c.machine, spec.base.name
            ));
        }
    }
    Ok(())
}

/// The simplex: the current values `u0`, and one step of 20% of the range along each axis, inward.
fn start_simplex(u0: &[f64]) -> Vec<Vec<f64>> {
    let mut simplex = vec![u0.to_vec()];
    for i in 0..u0.len() {
        let mut v = u0.to_vec();
        v[i] += if u0[i] + 0.2 <= 1.0 { 0.2 } else { -0.2 };
        simplex.push(v);
    }
    simplex
}

/// The overlay's header: what was fitted to, the objective before and after, each parameter's move.
fn fit_header(spec: &FitSpec, params: &[Param], fitted: &[u64], evaluations: usize, objective: (f64, f64)) -> String {
    let names: Vec<&str> = spec.experiments.iter().map(|e| e.name.as_str()).collect();
    let mut header = format!(
        "Fitted by `blksim fit` to {} ({} candidates, seed {}).\nMean squared error in tolerances: {:.6} before, {:.6} after.\n",
        names.join(", "),
        evaluations,
        spec.opts.seed.map_or("per experiment".to_string(), |s| s.to_string()),
        objective.0,
        objective.1
    );
    for (p, v) in params.iter().zip(fitted) {
        header += &format!("{}: {} -> {} ns (range {}..{})\n", p.name, p.ns, v, p.min, p.max);
    }
    header
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_resolve_against_the_merged_profile_with_their_ranges() {
        let base = BaseProfile::new("spr-gen5").unwrap();
        let m = base.merged().unwrap();
        let names: Vec<String> =
            ["syscall_ns", "costs.irq_entry_ns", "root_port.msi_service_ns"].iter().map(|s| s.to_string()).collect();
        let p = resolve_params(&m, &names, "spr-gen5").unwrap();
        assert_eq!(p[0].name, "costs.syscall_ns");
        let machine = blksim::machine::builtin("spr-gen5").unwrap();
        assert_eq!(p[0].ns, machine.costs.syscall_ns);
        assert_eq!(
            (p[0].min, p[0].max),
            (machine.costs.table["syscall_ns"].min, machine.costs.table["syscall_ns"].max)
        );
        assert_eq!(p[2].ns, machine.root_ports[0].msi_service_ns);
        let e = resolve_params(&m, &["bogus_ns".to_string()], "spr-gen5").unwrap_err();
        assert!(
            e.contains("'bogus_ns' is not a cost")
                && e.contains("syscall_ns")
                && e.contains("root_port.msi_service_ns"),
            "{e}"
        );
    }

    #[test]
    fn overlay_loads_and_sets_exactly_the_fitted_values() {
        let base = BaseProfile::new("spr-gen5").unwrap();
        let m = base.merged().unwrap();
        let names: Vec<String> = ["syscall_ns", "root_port.msi_service_ns"].iter().map(|s| s.to_string()).collect();
        let p = resolve_params(&m, &names, "spr-gen5").unwrap();
        let values = [p[0].min + 1, p[1].max - 1];
        let text = overlay_text(&base, &m, &p, &values, "test header");
        assert!(text.starts_with("# test header\n") && text.contains("extends = \"spr-gen5\""), "{text}");
        let fitted = load_profile(&text, "overlay", &base).unwrap();
        let orig = blksim::machine::builtin("spr-gen5").unwrap();
        assert_eq!(fitted.costs.syscall_ns, values[0]);
        assert!(fitted.root_ports.iter().all(|r| r.msi_service_ns == values[1]));
        assert_eq!(fitted.root_ports.len(), orig.root_ports.len());
        assert_eq!(fitted.costs.irq_entry_ns, orig.costs.irq_entry_ns);
        assert_eq!(fitted.devices, orig.devices);
    }

    /// A device model's cost (`device_model.MODEL.KEY`) and an optional cost are parameters too.
    #[test]
    fn device_model_costs_fit_and_their_overlay_reaches_every_device_of_the_model() {
        use blksim::machine::{DeviceKind, ScsiSpec};
        let base = BaseProfile::new("hp-ia64-2008").unwrap();
        let m = base.merged().unwrap();
        let names: Vec<String> =
            ["device_model.msa_lun.cache_hit_ns", "scsi_bio_lines"].iter().map(|s| s.to_string()).collect();
        let p = resolve_params(&m, &names, "hp-ia64-2008").unwrap();
        assert_eq!((p[0].min, p[0].max), (100_000, 400_000));
        let text = overlay_text(&base, &m, &p, &[p[0].min, p[1].max], "h");
        assert!(text.contains("[device_model.msa_lun]"), "{text}");
        let fitted = load_profile(&text, "overlay", &base).unwrap();
        let hits: Vec<u64> = fitted
            .devices
            .iter()
            .filter_map(|d| match &d.kind {
                DeviceKind::Scsi(ScsiSpec::Disk(p)) => Some(p.cache_hit_ns),
                _ => None,
            })
            .collect();
        assert_eq!(hits, vec![100_000; 24]);
        assert_eq!(fitted.costs.scsi_bio_lines, Some(p[1].max));
        let e = resolve_params(&m, &["device_model.msa_lun.rpm".to_string()], "hp-ia64-2008").unwrap_err();
        assert!(e.contains("device_model.msa_lun.controller_ns"), "{e}");
    }
}
