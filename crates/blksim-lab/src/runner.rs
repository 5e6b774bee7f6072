//! Running experiments: each case is prepared (machine, settings, fio jobs)
//! or found pending (a mechanism, machine or front end that is not modelled
//! yet), the runnable cases of every experiment run in parallel, and each
//! cell's metric is compared with its reference.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use blksim::machine::{builtin, load_profile, Builtins, Machine, ProfileSource};
use blksim::settings::Settings;
use blksim::ErrorKind;
use blksim_fio::job::{parse_job_files, ParseContext};

use crate::experiment::{Case, Experiment, Workload};
use crate::metric::MetricError;
use crate::observe::Observation;

/// How to run.
#[derive(Clone, Debug, Default)]
pub struct LabOptions {
    /// Worker threads (0 = one per available core).
    pub threads: usize,
    /// Replaces every experiment's own seed.
    pub seed: Option<u64>,
    /// Machines to use instead of the profile an experiment names: (profile name, machine);
    /// a profile file matches by its stem.
    pub substitutes: Vec<(String, Arc<Machine>)>,
    /// Refuse a case estimated to take longer than this wall time, seconds (`None`: no limit).
    pub wall_budget_s: Option<f64>,
}

/// What a case needs to run, or why it cannot yet.
#[derive(Clone, Debug)]
pub enum Prepared {
    Run { machine: Arc<Machine>, settings: Settings, workload: blksim::Workload, seed: u64 },
    Pending(String),
}

/// The outcome of one cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellStatus {
    /// Within tolerance.
    Pass,
    /// Outside tolerance.
    Fail,
    /// Outside tolerance, and documented in the experiment as a known gap of the model.
    Gap,
    /// Not reproducible yet: the model lacks a mechanism, machine, front end or metric it needs.
    Pending,
}

impl CellStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CellStatus::Pass => "pass",
            CellStatus::Fail => "fail",
            CellStatus::Gap => "gap",
            CellStatus::Pending => "pending",
        }
    }
}

#[derive(Clone, Debug)]
pub struct CellResult {
    pub label: String,
    pub metric: String,
    /// Multiplies the metric into the reference's unit (`published` and `simulated` are in it).
    pub scale: f64,
    /// The case's label (the sweep point).
    pub case: String,
    pub published: f64,
    pub simulated: Option<f64>,
    /// (simulated - published) / published.
    pub error: Option<f64>,
    pub tolerance: f64,
    pub within: Option<bool>,
    pub status: CellStatus,
    /// Why it is pending, or the known gap's reason.
    pub note: Option<String>,
    /// The experiment documents this cell as a known gap.
    pub known_gap: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExperimentStatus {
    Pass,
    Fail,
    /// At least one cell is pending: never reported as a pass.
    Pending,
}

impl ExperimentStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ExperimentStatus::Pass => "pass",
            ExperimentStatus::Fail => "fail",
            ExperimentStatus::Pending => "pending",
        }
    }
}

#[derive(Clone, Debug)]
pub struct ExperimentResult {
    pub name: String,
    pub source: String,
    pub description: String,
    pub status: ExperimentStatus,
    pub cells: Vec<CellResult>,
}

/// Profiles next to a profile file, then the built-ins (for `extends`).
struct DirSource<'a>(&'a Path);

impl ProfileSource for DirSource<'_> {
    fn profile_text(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.0.join(format!("{name}.toml"))).ok().or_else(|| Builtins.profile_text(name))
    }
}

/// A profile file (`extends` looks beside it, then in the built-ins).
pub fn load_profile_file(path: &Path) -> Result<Machine, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    load_profile(&text, &path.display().to_string(), &DirSource(dir))
}

/// An overlay profile file (`extends = "MACHINE"`): the machine it extends, and the overlay resolved.
pub fn load_overlay(path: &Path) -> Result<(String, Machine), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let value: toml::Value = toml::from_str(&text)
        .map_err(|e| blksim::machine::profile::toml_error_at(&text, &path.display().to_string(), &e))?;
    let base = value
        .get("extends")
        .and_then(|v| v.as_str())
        .ok_or_else(|| format!("{}: not an overlay (no `extends = \"MACHINE\"`)", path.display()))?
        .to_string();
    Ok((base, load_profile_file(path)?))
}

/// The machine an experiment names: a built-in profile, or a `.toml` file
/// relative to the experiment. `None`: it does not exist (yet).
pub fn find_machine(spec: &str, experiment_dir: &Path) -> Result<Option<Machine>, String> {
    if spec.ends_with(".toml") {
        let p = experiment_dir.join(spec);
        return if p.is_file() { load_profile_file(&p).map(Some) } else { Ok(None) };
    }
    if Builtins.profile_text(spec).is_some() {
        return builtin(spec).map(Some);
    }
    Ok(None)
}

/// Does an experiment's machine spec (`spr-gen5`, `profiles/vm.toml`) name the profile `name`?
/// A profile file is named by its stem.
pub fn names_machine(spec: &str, name: &str) -> bool {
    spec == name || (spec.ends_with(".toml") && Path::new(spec).file_stem().is_some_and(|s| s == name))
}

/// Prepare one case of `exp`.
pub fn prepare(exp: &Experiment, case: &Case, opts: &LabOptions) -> Result<Prepared, String> {
    let here = |e: String| format!("{}: case '{}': {e}", exp.path.display(), case.label);
    let dir = exp.path.parent().unwrap_or(Path::new("."));
    let machine = match opts.substitutes.iter().find(|(n, _)| names_machine(&case.machine, n)) {
        Some((_, m)) => m.clone(),
        None => match find_machine(&case.machine, dir).map_err(here)? {
            Some(m) => Arc::new(m),
            None => return Ok(Prepared::Pending(format!("machine profile '{}' does not exist yet", case.machine))),
        },
    };
    let path = match &case.workload {
        Workload::Fio(p) => Some(p),
        Workload::Program { name, .. } if name == "dsa-memfill" || name == "t/io_uring" => None,
        Workload::Program { name, .. } => {
            return Ok(Prepared::Pending(format!("the {name} front end is not modelled yet")));
        }
    };
    let mut settings = Settings::default();
    for p in &case.patches {
        if settings.apply_patch(p).is_err() {
            return Ok(Prepared::Pending(format!("patch '{p}' is not modelled yet")));
        }
    }
    for c in &case.cmdline {
        if let Err(e) = settings.apply_cmdline(c) {
            return if e.is_not_modelled() {
                Ok(Prepared::Pending(e.message))
            } else {
                Err(here(format!("cmdline: {e}")))
            };
        }
    }
    let devices: Vec<String> = machine.devices.iter().filter(|d| d.is_block()).map(|d| d.name.clone()).collect();
    for w in &case.sysfs {
        // `/sys/block/*/...` writes the attribute of every block device of the machine.
        let writes: Vec<String> = match w.split_once("/sys/block/*/") {
            Some(("", rest)) => devices.iter().map(|d| format!("/sys/block/{d}/{rest}")).collect(),
            _ => vec![w.clone()],
        };
        for w in writes {
            if let Err(e) = settings.apply_write(&w, &devices) {
                return if e.is_not_modelled() { Ok(Prepared::Pending(e.message)) } else { Err(here(e.message)) };
            }
        }
    }
    let ctx = ParseContext::for_machine(&machine, case.vars.clone());
    let workload = match (path, &case.workload) {
        (Some(path), _) => {
            let jobs = match parse_job_files(std::slice::from_ref(path), &ctx) {
                Ok(j) => j,
                Err(e) if e.kind == ErrorKind::NotModelled => return Ok(Prepared::Pending(e.to_string())),
                Err(e) => return Err(here(e.to_string())),
            };
            // The lab writes no fio logs: no I/O records kept.
            let configs = jobs.jobs.into_iter().map(|j| blksim::workload::JobConfig { record_ios: false, ..j.config });
            blksim::Workload { jobs: configs.collect(), dsa: Vec::new() }
        }
        (None, Workload::Program { name, args }) => {
            let args: Vec<String> = args.split_whitespace().map(str::to_string).collect();
            let workload = if name == "t/io_uring" {
                crate::frontend::t_io_uring(&args)
            } else {
                crate::frontend::dsa_memfill(&args, &machine)
            };
            // A front end's refusal of what the model lacks makes the cell pending, as a job file's does.
            match workload {
                Ok(w) => w,
                Err(e) if e.is_not_modelled() => return Ok(Prepared::Pending(e.message)),
                Err(e) => return Err(here(e.message)),
            }
        }
        (None, Workload::Fio(_)) => unreachable!(),
    };
    Ok(Prepared::Run { machine, settings, workload, seed: opts.seed.unwrap_or(exp.seed) })
}

/// One simulation: its observation, or why it is pending. An error keeps
/// its kind (bad input, or a failure of the model).
fn simulate(p: &Prepared) -> Result<Result<Observation, String>, blksim::Error> {
    match p {
        Prepared::Pending(why) => Ok(Err(why.clone())),
        Prepared::Run { machine, settings, workload, seed } => {
            match blksim::run_workload(machine, settings, workload, *seed, &Default::default()) {
                Ok((report, _)) => Ok(Ok(Observation::from_report(&report))),
                Err(e) if e.is_not_modelled() => Ok(Err(e.message)),
                Err(e) => Err(match e.job {
                    Some(i) => {
                        let job = format!("job '{}'", workload.jobs[i].name);
                        blksim::Error { job: None, ..e.context(job) }
                    }
                    None => e,
                }),
            }
        }
    }
}

/// `f` over `items` on `threads` workers; results in item order whatever the scheduling.
/// `progress(done, total)` is called after each item.
pub fn par_map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Vec<R> {
    par_map_longest_first(items, &vec![0.0; items.len()], threads, f, progress)
}

/// `par_map`, starting the items of the highest `cost` first (ties in item
/// order): with the long runs started early no core waits alone for one at
/// the end. Results stay in item order, whatever ran when.
pub fn par_map_longest_first<T: Sync, R: Send>(
    items: &[T],
    cost: &[f64],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Vec<R> {
    let threads = if threads == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { threads };
    let order = longest_first(cost);
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads.min(items.len()).max(1) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&i) = order.get(k) else { break };
                let r = f(&items[i]);
                slots.lock().unwrap()[i] = Some(r);
                progress(done.fetch_add(1, Ordering::Relaxed) + 1, items.len());
            });
        }
    });
    slots.into_inner().unwrap().into_iter().map(|r| r.expect("every item ran")).collect()
}

/// The indices of `cost`, highest first, ties in index order.
pub fn longest_first(cost: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..cost.len()).collect();
    order.sort_by(|&a, &b| cost[b].total_cmp(&cost[a]).then(a.cmp(&b)));
    order
}

/// Run `exps` (every case of every experiment, in parallel) and compare.
/// An error is bad input (an experiment, a profile, a setting, a job) or,
/// with kind `Internal`, a failure of the model in one of the runs.
pub fn run_experiments(
    exps: &[Experiment],
    opts: &LabOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<ExperimentResult>, blksim::Error> {
    let mut work = Vec::new();
    for (ei, e) in exps.iter().enumerate() {
        for (ci, c) in e.cases.iter().enumerate() {
            work.push((ei, ci, prepare(e, c, opts).map_err(blksim::Error::bad_input)?));
        }
    }
    // The simulated I/Os each run will do: the longest start first.
    let cost: Vec<f64> = work
        .iter()
        .map(|(_, _, p)| match p {
            Prepared::Run { machine, workload, .. } => crate::estimate::estimated_ios(machine, workload),
            Prepared::Pending(_) => 0.0,
        })
        .collect();
    if let Some(limit_s) = opts.wall_budget_s {
        for ((ei, ci, _), ios) in work.iter().zip(&cost) {
            let wall_s = ios / crate::estimate::IOS_PER_WALL_SEC;
            if wall_s > limit_s {
                return Err(blksim::Error::bad_input(format!(
                    "{}: case '{}' would take about {} of wall time, over the wall budget of {}: run it anyway \
                     with --yes (or a larger --wall-budget)",
                    exps[*ei].path.display(),
                    exps[*ei].cases[*ci].label,
                    crate::estimate::human_time(wall_s),
                    crate::estimate::human_time(limit_s)
                )));
            }
        }
    }
    let outcomes = par_map_longest_first(&work, &cost, opts.threads, |(_, _, p)| simulate(p), progress);
    let mut by_case: BTreeMap<(usize, usize), Result<Observation, String>> = BTreeMap::new();
    for ((ei, ci, _), out) in work.iter().zip(outcomes) {
        let e = &exps[*ei];
        let out = out.map_err(|m| m.context(format!("{}: case '{}'", e.path.display(), e.cases[*ci].label)))?;
        by_case.insert((*ei, *ci), out);
    }
    exps.iter()
        .enumerate()
        .map(|(ei, e)| compare(e, |ci| &by_case[&(ei, ci)]).map_err(blksim::Error::bad_input))
        .collect()
}

/// The cells of `exp`, given each case's observation (or pending reason). A metric that
/// cannot be computed from a run that has it (no devices for `iops_per_device`, a
/// percentile fio did not print) is an error in the experiment.
pub fn compare<'a>(
    exp: &Experiment,
    outcome: impl Fn(usize) -> &'a Result<Observation, String>,
) -> Result<ExperimentResult, String> {
    let cells: Vec<CellResult> = exp
        .cells
        .iter()
        .map(|c| -> Result<CellResult, String> {
            let mut r = CellResult {
                label: c.label.clone(),
                metric: c.metric.name(),
                scale: c.scale,
                case: exp.cases[c.case].label.clone(),
                published: c.published,
                simulated: None,
                error: None,
                tolerance: c.tolerance,
                within: None,
                status: CellStatus::Pending,
                note: None,
                known_gap: c.known_gap.is_some(),
            };
            let eval = |case: usize| -> Result<Result<f64, String>, String> {
                Ok(match outcome(case) {
                    Err(why) => Err(why.clone()),
                    Ok(obs) => match c.metric.eval(obs) {
                        Ok(v) => Ok(v * c.scale),
                        Err(MetricError::NotReported(why)) => Err(why),
                        Err(MetricError::Invalid(why)) => {
                            return Err(format!(
                                "{}: cell '{}': cannot compute {}: {why}",
                                exp.path.display(),
                                c.label,
                                c.metric.name()
                            ))
                        }
                    },
                })
            };
            let value = match &c.base {
                None => eval(c.case)?,
                Some((base, of)) => {
                    r.metric = format!("{} / at {of}", r.metric);
                    r.scale = 1.0;
                    match (eval(c.case)?, eval(*base)?) {
                        (Ok(v), Ok(b)) if b != 0.0 => Ok(v / b),
                        (Ok(_), Ok(_)) => Err(format!("{} at {of} is 0: no ratio", c.metric.name())),
                        (Err(why), _) | (_, Err(why)) => Err(why),
                    }
                }
            };
            match value {
                Err(why) => r.note = Some(why),
                Ok(sim) => {
                    let err = (sim - c.published) / c.published;
                    let within = err.abs() <= c.tolerance;
                    r.simulated = Some(sim);
                    r.error = Some(err);
                    r.within = Some(within);
                    r.status = match (within, &c.known_gap) {
                        (true, None) => CellStatus::Pass,
                        (true, Some(_)) => {
                            r.note = Some(
                                "within tolerance although listed as a known gap: remove its [[known_gap]]".into(),
                            );
                            CellStatus::Pass
                        }
                        (false, None) => CellStatus::Fail,
                        (false, Some(reason)) => {
                            r.note = Some(reason.clone());
                            CellStatus::Gap
                        }
                    };
                }
            }
            Ok(r)
        })
        .collect::<Result<_, _>>()?;
    let status = if cells.iter().any(|c| c.status == CellStatus::Pending) {
        ExperimentStatus::Pending
    } else if cells.iter().all(|c| c.within == Some(true)) {
        ExperimentStatus::Pass
    } else {
        ExperimentStatus::Fail
    };
    Ok(ExperimentResult {
        name: exp.name.clone(),
        source: exp.source.clone(),
        description: exp.description.clone(),
        status,
        cells,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::parse;

    /// A fresh directory holding `j.fio`, removed when the returned guard drops.
    fn tmp(tag: &str) -> tempfile::TempDir {
        let d = tempfile::Builder::new().prefix(&format!("blksim-lab-runner-{tag}-")).tempdir().unwrap();
        std::fs::write(d.path().join("j.fio"), "[j]\nioengine=null\nsize=1g\ntime_based\nruntime=1ms\n").unwrap();
        d
    }

    const EXP: &str = r#"
description = "t"
machine = "spr-gen5"
tolerance = 0.5
job = "j.fio"
[[axis]]
name = "v"
value = [
  { name = "plain" },
  { name = "patched", patches = ["some-patch"] },
  { name = "elsewhere", machine = "no-such-machine" },
  { name = "frontend", program = "no-such-tool", args = "-x" },
]
[published]
source = "s"
metric = "m"
columns = ["plain", "patched", "elsewhere", "frontend"]
rows = [[1e6, 1e6, 1e6, 1e6]]
value = [
  { column = "plain", metric = "iops", axes = { v = "plain" } },
  { column = "patched", metric = "iops", axes = { v = "patched" } },
  { column = "elsewhere", metric = "iops", axes = { v = "elsewhere" } },
  { column = "frontend", metric = "iops", axes = { v = "frontend" } },
]
"#;

    #[test]
    fn what_the_model_lacks_is_pending_and_the_rest_runs() {
        let guard = tmp("pending");
        let d = guard.path();
        let exp = parse(EXP, &d.join("e.toml")).unwrap();
        let r = &run_experiments(&[exp], &LabOptions::default(), &|_, _| {}).unwrap()[0];
        assert_eq!(r.status, ExperimentStatus::Pending);
        let note = |i: usize| r.cells[i].note.clone().unwrap_or_default();
        assert!(r.cells[0].simulated.is_some_and(|v| v > 0.0));
        assert_ne!(r.cells[0].status, CellStatus::Pending);
        assert!(note(1).contains("patch 'some-patch' is not modelled yet"), "{}", note(1));
        assert!(note(2).contains("machine profile 'no-such-machine' does not exist yet"), "{}", note(2));
        assert!(note(3).contains("no-such-tool front end is not modelled yet"), "{}", note(3));
        for c in &r.cells[1..] {
            assert_eq!((c.status, c.simulated, c.within), (CellStatus::Pending, None, None));
        }
    }

    #[test]
    fn a_metric_the_run_cannot_give_and_a_bad_setting_are_errors() {
        let guard = tmp("errors");
        let d = guard.path();
        let exp = parse(
            &EXP.replace(
                "metric = \"iops\", axes = { v = \"plain\" }",
                "metric = \"iops_per_device\", axes = { v = \"plain\" }",
            ),
            &d.join("e.toml"),
        )
        .unwrap();
        let e = run_experiments(&[exp], &LabOptions::default(), &|_, _| {}).unwrap_err().message;
        assert!(e.contains("cell 'plain': cannot compute iops_per_device"), "{e}");
        let exp = parse(
            &EXP.replace("{ name = \"plain\" }", "{ name = \"plain\", cmdline = [\"nvme.poll_queues=x\"] }"),
            &d.join("e.toml"),
        )
        .unwrap();
        let e = run_experiments(&[exp], &LabOptions::default(), &|_, _| {}).unwrap_err().message;
        assert!(e.contains("case 'v=plain'") && e.contains("nvme.poll_queues"), "{e}");
    }

    #[test]
    fn a_relative_cell_compares_the_ratio_of_two_cases_and_is_pending_with_either() {
        let guard = tmp("relative");
        let d = guard.path();
        let text = EXP
            .replace("columns = [\"plain\", \"patched\", \"elsewhere\", \"frontend\"]", "columns = [\"v\", \"n\"]")
            .replace("rows = [[1e6, 1e6, 1e6, 1e6]]", "rows = [[\"plain\", 2.0], [\"patched\", 4.0], [\"elsewhere\", 1.0]]")
            .replace("value = [\n  { column = \"plain\"", "keys = [\"v\"]\nrelative_to = { v = \"elsewhere\" }\nvalue = [\n  { column = \"n\", metric = \"iops\" },\n]\nx = [\n  { column = \"plain\"");
        let text = &text[..text.find("x = [").unwrap()];
        let exp = parse(text, &d.join("e.toml")).unwrap();
        let r = &run_experiments(std::slice::from_ref(&exp), &LabOptions::default(), &|_, _| {}).unwrap()[0];
        // The base case needs a machine that does not exist: every ratio is pending.
        assert!(r.cells.iter().all(|c| c.status == CellStatus::Pending), "{:?}", r.cells);
        // The same cases compared by hand: ratio of the two observations.
        let obs = |iops: f64| Observation {
            jobs: vec![crate::observe::JobObservation { iops: [iops, 0.0], ..Default::default() }],
            ..Observation::default()
        };
        let outcomes = [Ok(obs(3.0)), Ok(obs(12.0)), Ok(obs(1.5))];
        let mut exp = exp;
        for c in &mut exp.cells {
            c.base = Some((2, "v=elsewhere".into()));
        }
        exp.cells[0].case = 0;
        exp.cells[1].case = 1;
        let r = compare(&exp, |ci| &outcomes[ci]).unwrap();
        assert_eq!((r.cells[0].simulated, r.cells[1].simulated), (Some(2.0), Some(8.0)));
        assert_eq!((r.cells[0].status, r.cells[1].status), (CellStatus::Pass, CellStatus::Fail));
        assert_eq!(r.cells[0].metric, "iops / at v=elsewhere");
    }

    #[test]
    fn pending_comes_from_the_error_kind_of_settings_job_files_and_the_model() {
        let guard = tmp("kinds");
        let d = guard.path();
        std::fs::write(d.join("buffered.fio"), "[b]\nfilename=/dev/nvme0n1\ndirect=0\nruntime=1ms\n").unwrap();
        std::fs::write(d.join("verify.fio"), "[v]\nfilename=/dev/nvme0n1\ndirect=1\nverify_only=1\nruntime=1ms\n")
            .unwrap();
        let exp = EXP
            .replace(
                "{ name = \"patched\", patches = [\"some-patch\"] }",
                "{ name = \"patched\", sysfs = [\"/sys/block/nvme0n1/queue/scheduler=bfq\"] }",
            )
            .replace(
                "{ name = \"elsewhere\", machine = \"no-such-machine\" }",
                "{ name = \"elsewhere\", job = \"buffered.fio\" }",
            )
            .replace(
                "{ name = \"frontend\", program = \"no-such-tool\", args = \"-x\" }",
                "{ name = \"frontend\", job = \"verify.fio\" }",
            );
        let r = &run_experiments(&[parse(&exp, &d.join("e.toml")).unwrap()], &LabOptions::default(), &|_, _| {})
            .unwrap()[0];
        let note = |i: usize| r.cells[i].note.clone().unwrap_or_default();
        assert_ne!(r.cells[0].status, CellStatus::Pending);
        // A scheduler the settings do not model, a buffered job the model does
        // not take (its message says "does not model": no substring decides),
        // an option the job parser rejects as not modelled.
        assert!(note(1).contains("bfq scheduler"), "{}", note(1));
        assert!(note(2).contains("buffered I/O"), "{}", note(2));
        assert!(note(3).contains("verify"), "{}", note(3));
        for c in &r.cells[1..] {
            assert_eq!(c.status, CellStatus::Pending, "{}", c.label);
        }
        // Bad input stays an error.
        let exp = EXP.replace(
            "{ name = \"patched\", patches = [\"some-patch\"] }",
            "{ name = \"patched\", sysfs = [\"/sys/block/nvme0n1/queue/scheduler=cfq\"] }",
        );
        let e = run_experiments(&[parse(&exp, &d.join("e.toml")).unwrap()], &LabOptions::default(), &|_, _| {})
            .unwrap_err()
            .message;
        assert!(e.contains("unknown scheduler 'cfq'"), "{e}");
    }

    #[test]
    fn a_front_end_refusing_what_the_model_lacks_makes_its_cell_pending() {
        let guard = tmp("frontend-kinds");
        let d = guard.path();
        let with = |args: &str| {
            EXP.replace(
                "{ name = \"frontend\", program = \"no-such-tool\", args = \"-x\" }",
                &format!("{{ name = \"frontend\", program = \"t/io_uring\", args = \"{args}\" }}"),
            )
        };
        let exp = parse(&with("-a 1 -r 1ms /dev/nvme0n1"), &d.join("e.toml")).unwrap();
        let r = &run_experiments(&[exp], &LabOptions::default(), &|_, _| {}).unwrap()[0];
        assert_eq!(r.cells[3].status, CellStatus::Pending);
        assert!(r.cells[3].note.as_deref().unwrap_or("").contains("legacy aio"), "{:?}", r.cells[3].note);
        // A bad value is an error, not a pending cell.
        let exp = parse(&with("-b x /dev/nvme0n1"), &d.join("e.toml")).unwrap();
        let e = run_experiments(&[exp], &LabOptions::default(), &|_, _| {}).unwrap_err();
        assert!(e.message.contains("-b: bad value 'x'"), "{}", e.message);
    }

    #[test]
    fn the_longest_runs_start_first_and_results_keep_item_order() {
        assert_eq!(longest_first(&[1.0, 5.0, 0.0, 5.0, 3.0]), [1, 3, 4, 0, 2]);
        // One thread runs them in that order; the results come back in item order.
        let started = Mutex::new(Vec::new());
        let got = par_map_longest_first(
            &[10, 20, 30],
            &[0.0, 2.0, 1.0],
            1,
            |x| {
                started.lock().unwrap().push(*x);
                x + 1
            },
            &|_, _| {},
        );
        assert_eq!(*started.lock().unwrap(), [20, 30, 10]);
        assert_eq!(got, [11, 21, 31]);
    }

    #[test]
    fn par_map_keeps_item_order_for_any_thread_count() {
        let items: Vec<u64> = (0..50).collect();
        let want: Vec<u64> = items.iter().map(|x| x * x).collect();
        for threads in [1, 2, 7] {
            let calls = AtomicUsize::new(0);
            let got = par_map(&items, threads, |x| x * x, &|_, _| {
                calls.fetch_add(1, Ordering::Relaxed);
            });
            assert_eq!(got, want);
            assert_eq!(calls.load(Ordering::Relaxed), 50);
        }
    }
}
