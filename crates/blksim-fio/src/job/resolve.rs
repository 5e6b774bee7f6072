//! Building jobs as fio does: sections applied onto the global template,
//! jobs and their `numjobs` clones created in order, reporting groups and
//! stonewall phases numbered, CPUs split, and the `JobConfig` resolved.

use std::path::Path;

use blksim::workload::{IoEngine, IoUringOptions, JobConfig};

use super::engine::{EngineName, OptionTable};
use super::ini::{self, RawOption, Section};
use super::options::{self, Decision, OptSpec, GENERAL, MAX_JOBS};
use super::settings::{parse_kind, EngineOpts, OptionLines, Refusal, Settings};
use super::{checks, subst, JobFile, OptionWarning, ParseContext, ParsedJob};
use crate::{ErrorKind, InputError};

/// What a verifying job's checks are here.
const VERIFY_PASSES: &str = "checks data, which blksim does not simulate: every check passes, including one the real \
     fio would fail (data never written, or written with another pattern); the read-back I/O and its CPU are simulated";

/// Why `write_iolog` does nothing in a job that replays a log.
const READ_OVERRIDES: &str = "writes no log in a job that replays one (fio: read iolog overrides write_iolog)";
const MERGE_ONLY: &str =
    "scales or repeats the traces merge_blktrace_file merges, and the job has none (fio ignores it too)";

/// Jobs built from one or more job files.
pub(crate) struct Builder<'c> {
    ctx: &'c ParseContext,
    out: JobFile,
    files_seen: usize,
    /// fio's `groupid` and `prev_group_jobs` from `add_job`.
    group_id: u32,
    prev_group_jobs: u32,
    phase: u32,
}

impl<'c> Builder<'c> {
    pub fn new(ctx: &'c ParseContext) -> Builder<'c> {
        Builder { ctx, out: JobFile::default(), files_seen: 0, group_id: 0, prev_group_jobs: 0, phase: 0 }
    }

    /// Adds one job file: the template starts from fio's defaults, and from
    /// the second file on, the file's first job waits for all earlier jobs.
    /// Every problem of the file is reported (each at the line of its option, also for an option
    /// written in `[global]`), not only the first.
    pub fn add_file(&mut self, text: &str, file: &Path) -> Result<(), InputError> {
        let sections = ini::read_sections(text, file)?;
        let mut template = Settings::default();
        let mut implicit_stonewall = self.files_seen > 0;
        self.files_seen += 1;
        // fio's JSON shows the global options of the last file only.
        self.out.global_options.clear();
        let mut problems = Vec::new();
        for section in &sections {
            if section.global {
                let recorded = apply_section(&mut template, section, self.ctx, &mut problems, &mut self.out.warnings);
                self.out.global_options.extend(recorded);
                continue;
            }
            // fio's skip_this_section: with --section, the other job sections are not read at all.
            if !self.ctx.sections.is_empty() && !self.ctx.sections.contains(&section.name) {
                continue;
            }
            let mut job = template.clone();
            job.name = None;
            if implicit_stonewall {
                job.stonewall = true;
                implicit_stonewall = false;
            }
            let before = problems.len();
            let recorded = apply_section(&mut job, section, self.ctx, &mut problems, &mut self.out.warnings);
            if problems.len() > before {
                continue;
            }
            if let Err(e) = check_job(&job, section) {
                // A job's sizes fail in every job that inherits them: say it once per line.
                if !problems.iter().any(|p: &InputError| (&p.file, p.line) == (&e.file, e.line)) {
                    problems.push(e);
                }
                continue;
            }
            if self.out.jobs.len() + job.numjobs as usize > MAX_JOBS {
                problems.push(ini::error(
                    &section.file,
                    section.line,
                    format!("more than {MAX_JOBS} jobs (fio's limit)"),
                ));
                break;
            }
            if let Err(e) = self.add_job(section, &job, recorded) {
                problems.push(e);
            }
        }
        InputError::all(problems).map_or(Ok(()), Err)
    }

    pub fn finish(self, file: &Path) -> Result<JobFile, InputError> {
        if self.out.jobs.is_empty() && !self.ctx.sections.is_empty() {
            let names = self.ctx.sections.join(", ");
            return Err(ini::error(file, 0, format!("no jobs defined: no job section named {names} (--section)")));
        }
        if self.out.jobs.is_empty() {
            return Err(ini::error(file, 0, "no jobs defined (no section other than [global])"));
        }
        let mut out = self.out;
        // fio's `exitall` sets a flag of the program (`exitall_on_terminate`), whichever job names it.
        if out.jobs.iter().any(|j| j.config.exitall) {
            out.jobs.iter_mut().for_each(|j| j.config.exitall = true);
        }
        Ok(out)
    }

    /// fio's `add_job`: the job, then its clones (same group, no stonewall
    /// or new_group of their own). A clone is named after the section, even
    /// when `name=` renamed the job itself (fio names clones by section).
    fn add_job(&mut self, section: &Section, st: &Settings, options: Vec<(String, String)>) -> Result<(), InputError> {
        let numjobs = st.numjobs.max(1);
        for clone in 0..numjobs {
            let first = clone == 0;
            // fio's subjob_number: 0 for the job, then numjobs - 1 down to 1 for its clones in the
            // order they are made (add_job's `while (--numjobs)`): the file names, offset_increment
            // and a read_iolog list follow it, the thread numbers (seeds, log names) the order.
            let subjob = if first { 0 } else { numjobs - clone };
            let stonewall = first && st.stonewall;
            if (stonewall || (first && st.new_group)) && self.prev_group_jobs > 0 {
                self.prev_group_jobs = 0;
                self.group_id += 1;
            }
            self.prev_group_jobs += 1;
            if stonewall && !self.out.jobs.is_empty() {
                self.phase += 1;
            }
            let thread_number = self.out.jobs.len() + 1;
            let name = match (&st.name, first) {
                (Some(renamed), true) => renamed.clone(),
                _ => section.name.clone(),
            };
            let mut config = to_config(st, &name, thread_number);
            config.subjob = subjob;
            // fio's get_start_offset and size_percent, for this clone.
            let (offset, size) =
                start_and_size(st, &config.filenames, subjob as u64, self.ctx).map_err(|(kind, opt, m)| {
                    let at = st.lines.get(opt).map_or((section.file.clone(), section.line), |l| l.clone());
                    let message = format!("option '{opt}': {m}");
                    InputError { kind, file: at.0, line: at.1, message, more: Vec::new() }
                })?;
            config.offset = offset;
            config.size = size.or(config.size);
            if let Some(file) = st.filesize {
                let (region, io) = null_file_region(st, file, offset, size).map_err(|m| {
                    let opt = if st.size_pct.is_some() { "size" } else { "offset" };
                    let at = st.lines.get(opt).map_or((section.file.clone(), section.line), |l| l.clone());
                    InputError {
                        kind: ErrorKind::BadInput,
                        file: at.0,
                        line: at.1,
                        message: format!("option '{opt}': {m}"),
                        more: Vec::new(),
                    }
                })?;
                // The file's real_file_size grows to what the region needs past its offset
                // (a regular file's extension); unknown (-1) without size= in bytes.
                let real = null_real_file_size(st, &config.filenames).map_or(u64::MAX, |b| b.max(offset + region));
                config.null_file = Some((real, region));
                config.size = Some(io);
                config.later_start = later_start(st, real, subjob as u64, offset);
            } else if let Some(size) = null_real_file_size(st, &config.filenames) {
                // The file grown to the region (size= over its files) past the first offset; kept
                // as the null engine's file, which later loops no longer start at the beginning of.
                let real = size.saturating_add(offset);
                config.later_start = later_start(st, real, subjob as u64, offset);
                if config.later_start.is_some() {
                    config.null_file = Some((real, size));
                }
            }
            if config.filenames.len() > 1 && st.replay.file.is_none() {
                let (regions, total) = file_regions(st, config.filenames.len() as u64, config.size, config.null_file)
                    .map_err(|m| {
                    let opt = if st.filesize.is_some() { "filesize" } else { "size" };
                    let at = st.lines.get(opt).map_or((section.file.clone(), section.line), |l| l.clone());
                    InputError { kind: ErrorKind::NotModelled, file: at.0, line: at.1, message: m, more: Vec::new() }
                })?;
                config.file_regions = regions;
                config.size = total.or(config.size);
            }
            let mut logs = st.logs.clone();
            if let Some(list) = &st.replay.file {
                let at = st
                    .lines
                    .get("read_iolog")
                    .map_or((section.file.as_path(), section.line), |(f, l)| (f.as_path(), *l));
                let null = st.engine == super::engine::EngineName::Null;
                let opts = super::iolog::ReplayOptions { read_only: self.ctx.read_only, ..st.replay.clone() };
                let loaded = super::iolog::read(&opts, list, subjob as usize, st.direct, null, at)?;
                let (replay, files, probed) = (loaded.replay, loaded.files, loaded.probed_depth);
                if loaded.skipped_writes > 0 {
                    // fio's read_blktrace says it (read_iolog2 means to: its count is always 0).
                    self.out.warnings.push(OptionWarning {
                        option: "read_iolog".into(),
                        file: at.0.to_path_buf(),
                        line: at.1,
                        why: format!(
                            "(job '{name}'): --readonly: the log's writes and trims are not replayed ({} skipped), \
                             as fio skips them (fio: skips replay of N writes due to read-only)",
                            loaded.skipped_writes
                        )
                        .into(),
                        ignored: false,
                    });
                }
                // fio's read_blktrace: a job that sets no iodepth takes the depth the trace shows.
                if let Some(depth) = probed.filter(|_| !st.lines.contains_key("iodepth")) {
                    config.iodepth = depth;
                    config.iodepth_low = depth;
                    config.iodepth_batch_submit = config.iodepth_batch_submit.min(depth);
                    config.iodepth_batch_complete_max = config.iodepth_batch_complete_max.min(depth);
                }
                config.replay = Some(replay);
                // fio's read_iolog raises max_bs to the largest logged I/O of each direction.
                for d in 0..3 {
                    let (_, hi) = config.io_size_range(d);
                    if hi > config.bs[d] {
                        config.bs_max[d] = config.bs_max[d].max(hi);
                    }
                }
                config.filenames = files;
                // fio: "read iolog overrides write_iolog".
                if logs.iolog.take().is_some() {
                    let line = st.lines.get("write_iolog").map_or(0, |l| l.1);
                    let file = st.lines.get("write_iolog").map_or(section.file.clone(), |l| l.0.clone());
                    if !self.out.warnings.iter().any(|w| w.option == "write_iolog") {
                        self.out.warnings.push(OptionWarning {
                            option: "write_iolog".into(),
                            file,
                            line,
                            why: READ_OVERRIDES.into(),
                            ignored: true,
                        });
                    }
                }
            }
            // The merge lists without a merge: fio reads them only in merge_blktrace_iologs.
            for option in ["merge_blktrace_scalars", "merge_blktrace_iters"] {
                let given = st.lines.get(option).filter(|_| st.replay.merge.file.is_none());
                if let Some((file, line)) = given.filter(|_| !self.out.warnings.iter().any(|w| w.option == option)) {
                    self.out.warnings.push(OptionWarning {
                        option: option.into(),
                        file: file.clone(),
                        line: *line,
                        why: MERGE_ONLY.into(),
                        ignored: true,
                    });
                }
            }
            if config.verify.is_some_and(|v| v.do_verify) && !self.out.warnings.iter().any(|w| w.option == "verify") {
                let (file, line) = st.lines.get("verify").cloned().unwrap_or((section.file.clone(), section.line));
                self.out.warnings.push(OptionWarning {
                    option: "verify".into(),
                    file,
                    line,
                    why: VERIFY_PASSES.into(),
                    ignored: false,
                });
            }
            if st.verify.state_load {
                // fio's fio_verify_load_state, before any job runs: the state of this name and index.
                let (file, line) =
                    st.lines.get("verify_state_load").cloned().unwrap_or((section.file.clone(), section.line));
                let path = crate::verify_state::file_name(&config.name, thread_number - 1);
                let state = std::fs::read(&path)
                    .map_err(|e| e.to_string())
                    .and_then(|b| crate::verify_state::decode(&b))
                    .map_err(|why| InputError {
                        kind: ErrorKind::BadInput,
                        file,
                        line,
                        message: format!("verify_state_load: state file {path}: {why}"),
                        more: Vec::new(),
                    })?;
                config.verify_state = Some(std::sync::Arc::new(state));
            }
            config.record_ios = logs.per_io();
            config.log_queued = logs.iolog.is_some();
            config.lat_off = [
                (logs.disable_slat, blksim::workload::LAT_OFF_SLAT),
                (logs.disable_clat, blksim::workload::LAT_OFF_CLAT),
                (logs.disable_lat, blksim::workload::LAT_OFF_LAT),
            ]
            .iter()
            .filter(|(off, _)| *off || config.gtod_reduce)
            .fold(0, |bits, (_, bit)| bits | bit);
            config.group_id = self.group_id;
            config.phase = self.phase;
            self.out.jobs.push(ParsedJob {
                config,
                options: options.clone(),
                file: section.file.clone(),
                line: section.line,
                option_lines: st.lines.clone(),
                logs,
            });
        }
        Ok(())
    }
}

/// Applies a section's options to `st` in fio's order (by priority, then as
/// written; engine options last, against the engine then chosen), adding
/// each option that fails to `problems` and going on with the others.
/// Returns the options as fio's JSON shows them: canonical name, substituted
/// value.
fn apply_section(
    st: &mut Settings,
    section: &Section,
    ctx: &ParseContext,
    problems: &mut Vec<InputError>,
    warnings: &mut Vec<OptionWarning>,
) -> Vec<(String, String)> {
    let mut general: Vec<(usize, &'static OptSpec, Line)> = Vec::new();
    let mut engine: Vec<(usize, Line)> = Vec::new();
    for (i, raw) in section.options.iter().enumerate() {
        let line = match Line::read(raw, ctx) {
            Ok(line) => line,
            Err(e) => {
                problems.push(e);
                continue;
            }
        };
        match options::find(GENERAL, &line.name) {
            Some(spec) => general.push((i, spec, line)),
            None => engine.push((i, line)),
        }
    }
    general.sort_by_key(|(_, spec, _)| -spec.prio);
    let mut recorded = Vec::new();
    for (i, spec, line) in &general {
        let applied = apply_option(st, spec, line, ctx);
        if spec.name == "ioengine" {
            st.engine_refused = applied.is_err();
        }
        match applied {
            Ok(()) => {
                warn_once(spec, line, warnings);
                st.lines.insert(spec.name.to_string(), (line.raw.file.clone(), line.raw.line));
                recorded.push((*i, spec.name, line.value.clone().unwrap_or_default()));
            }
            Err(e) => problems.push(e),
        }
    }
    let table = st.engine.option_table();
    for (i, line) in &engine {
        let Some(spec) = options::find(table.specs(), &line.name) else {
            // With the engine refused (here or in the section this one inherits
            // from), its options cannot be checked.
            if !st.engine_refused {
                problems.push(unknown_option(line, st.engine, table));
            }
            continue;
        };
        st.engine_opts();
        match apply_option(st, spec, line, ctx) {
            Ok(()) => {
                warn_once(spec, line, warnings);
                st.lines.insert(spec.name.to_string(), (line.raw.file.clone(), line.raw.line));
                recorded.push((*i, spec.name, line.value.clone().unwrap_or_default()));
            }
            Err(e) => problems.push(e),
        }
    }
    recorded.sort_by_key(|(i, _, _)| *i);
    recorded.into_iter().map(|(_, name, value)| (name.to_string(), value)).collect()
}

/// An accepted option that changes nothing here but would change a real run's output: noted once.
fn warn_once(spec: &OptSpec, line: &Line, warnings: &mut Vec<OptionWarning>) {
    let Decision::NoOp(why) = spec.decision else { return };
    let value = line.value.as_deref().map(str::trim);
    let at_default = value.is_some_and(|v| options::default_values(spec.name).contains(&v));
    if options::changes_real_output(why) && !at_default && !warnings.iter().any(|w| w.option == spec.name) {
        warnings.push(OptionWarning {
            option: spec.name.to_string(),
            file: line.raw.file.clone(),
            line: line.raw.line,
            why: why.into(),
            ignored: true,
        });
    }
}

/// An option line after substitution, split at the first `=`.
struct Line<'r> {
    raw: &'r RawOption,
    /// As written (blanks before `=` removed).
    name: String,
    /// Everything after `=`, blanks kept; `None` for a bare option.
    value: Option<String>,
    /// `${VAR}`s on the line that were not set (they became empty).
    unset: Vec<String>,
}

impl<'r> Line<'r> {
    fn read(raw: &'r RawOption, ctx: &ParseContext) -> Result<Line<'r>, InputError> {
        let (text, unset) = subst::env_vars(&raw.text, ctx);
        let text = subst::keywords(&text, ctx).map_err(|e| ini::error(&raw.file, raw.line, e))?;
        let (name, value) = match text.split_once('=') {
            Some((n, v)) => (n.trim_end().to_string(), Some(v.to_string())),
            None => (text.trim_end().to_string(), None),
        };
        Ok(Line { raw, name, value, unset })
    }

    fn error(&self, message: String) -> InputError {
        self.error_of(ErrorKind::BadInput, message)
    }

    /// An error of `kind` on this line, with a hint if a `${VAR}` on it was not set.
    fn error_of(&self, kind: ErrorKind, message: String) -> InputError {
        let hint = match self.unset.as_slice() {
            [] => String::new(),
            vars => format!(" (the environment variable {} is not set)", vars.join(", ")),
        };
        InputError { kind, ..ini::error(&self.raw.file, self.raw.line, format!("{message}{hint}")) }
    }
}

fn apply_option(st: &mut Settings, spec: &OptSpec, line: &Line, ctx: &ParseContext) -> Result<(), InputError> {
    let name = &line.name;
    let value = line.value.as_deref();
    // Messages that start with `name=value` already name the option.
    let refused = |e: Refusal| {
        let (kind, msg) = match e {
            Refusal::Bad(m) => (ErrorKind::BadInput, m),
            Refusal::NotModelled(m) => (ErrorKind::NotModelled, m),
        };
        if msg.starts_with(&format!("{}=", spec.name)) {
            line.error_of(kind, msg)
        } else {
            line.error_of(kind, format!("option '{name}': {msg}"))
        }
    };
    let bad_value = |msg: String| refused(Refusal::Bad(msg));
    match spec.decision {
        Decision::Model(field) => {
            let parsed = parse_kind(spec.kind, value, st.kb_base).map_err(bad_value)?;
            st.apply(field, parsed, ctx).map_err(refused)
        }
        Decision::NoOp(_) => parse_kind(spec.kind, value, st.kb_base).map(|_| ()).map_err(bad_value),
        Decision::Reject { why, unless } => {
            if value.is_some_and(|v| unless.contains(&v.trim())) {
                return Ok(());
            }
            let accepted = match unless {
                [] => String::new(),
                values => {
                    let forms: Vec<String> = values.iter().map(|v| format!("{name}={v}")).collect();
                    format!("; only {} is accepted", forms.join(" or "))
                }
            };
            Err(line.error_of(ErrorKind::NotModelled, format!("option '{name}' {why}{accepted}")))
        }
    }
}

/// fio's and Linux's checks of the job's sizes, said at the line of the option the message starts with
/// (in the job's section or in `[global]`), else at the job's section.
fn check_job(st: &Settings, section: &Section) -> Result<(), InputError> {
    checks::check_sizes(st).map_err(|p| {
        let (kind, message) = match p {
            checks::SizeProblem::Bad(m) => (ErrorKind::BadInput, m),
            checks::SizeProblem::NotModelled(m) => (ErrorKind::NotModelled, m),
        };
        let (file, line) = option_line_of(&st.lines, &message).unwrap_or((&section.file, section.line));
        InputError { kind, ..ini::error(file, line, format!("job '{}': {message}", section.name)) }
    })
}

/// Where the option a message is about was written: the first option of `lines` named in `message` as
/// `NAME=`, `NAME:` or `NAME ` (a word of its own).
pub fn option_line_of<'l>(lines: &'l OptionLines, message: &str) -> Option<(&'l Path, usize)> {
    lines
        .iter()
        .filter_map(|(name, at)| {
            let found = message.match_indices(name.as_str()).find(|&(i, _)| {
                let before = message[..i].chars().next_back();
                let after = message[i + name.len()..].chars().next();
                !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                    && matches!(after, Some('=' | ':' | ' ') | None)
            });
            found.map(|(i, _)| (i, at))
        })
        .min_by_key(|(i, _)| *i)
        .map(|(_, (file, line))| (file.as_path(), *line))
}

/// fio's "Bad option", with a hint when the option belongs to another
/// engine or looks like a general option.
fn unknown_option(line: &Line, engine: EngineName, table: OptionTable) -> InputError {
    let name = &line.name;
    let engine_name = to_engine(engine, &EngineOpts::defaults(table)).fio_name();
    let other_engine = [OptionTable::IoUring, OptionTable::Libaio, OptionTable::Pvsync2]
        .into_iter()
        .any(|t| t != table && options::find(t.specs(), name).is_some());
    let message = if other_engine {
        format!("option '{name}' is not an option of ioengine={engine_name} (fio: Bad option); it belongs to another ioengine")
    } else if let Some(close) = options::closest(name) {
        format!("unknown option '{name}' (fio: Bad option); did you mean '{close}'?")
    } else {
        format!("unknown option '{name}' (fio: Bad option)")
    };
    line.error(message)
}

fn to_engine(engine: EngineName, e: &EngineOpts) -> IoEngine {
    let uring = || IoUringOptions {
        hipri: e.hipri,
        fixedbufs: e.fixedbufs,
        registerfiles: e.registerfiles,
        sqthread_poll: e.sqthread_poll,
        sqthread_poll_cpu: e.sqthread_poll_cpu,
        register_ring: false,
    };
    match engine {
        EngineName::Sync => IoEngine::Sync,
        EngineName::Psync => IoEngine::Psync,
        EngineName::Pvsync => IoEngine::Pvsync,
        EngineName::Pvsync2 => IoEngine::Pvsync2 { hipri: e.hipri },
        EngineName::Libaio => IoEngine::Libaio,
        EngineName::Posixaio => IoEngine::Posixaio,
        EngineName::IoUring => IoEngine::IoUring(uring()),
        EngineName::IoUringCmd => IoEngine::IoUringCmd(uring()),
        EngineName::Null => IoEngine::Null,
    }
}

/// fio's cmdprio entries (`fio_cmdprio_gen_perc`, `fio_cmdprio_generate_bsprio_desc`) for the
/// directions the job does: an entry's priority is its own, else `cmdprio_class` (RT when
/// unset) with `cmdprio` and `cmdprio_hint`.
fn cmdprio(st: &Settings, e: &EngineOpts) -> [Vec<blksim::workload::CmdPrio>; 2] {
    use blksim::workload::{ioprio_value, CmdPrio, IOPRIO_CLASS_RT};
    let does = checks::directions(st.rw);
    let mut out: [Vec<CmdPrio>; 2] = Default::default();
    for (d, slot) in out.iter_mut().enumerate() {
        if !does.contains(&d) {
            continue;
        }
        let class = if e.cmdprio_class[d] == 0 { IOPRIO_CLASS_RT } else { e.cmdprio_class[d] as u32 };
        let implicit = ioprio_value(class, e.cmdprio_level[d] as u32, e.cmdprio_hint[d] as u32);
        if let Some(split) = &e.cmdprio_bssplit {
            for entry in &split[d] {
                let prio = (entry.perc, entry.prio.unwrap_or(implicit));
                match slot.last_mut() {
                    Some(last) if last.bs == Some(entry.bs) => last.prios.push(prio),
                    _ => slot.push(CmdPrio { bs: Some(entry.bs), prios: vec![prio] }),
                }
            }
        } else if e.cmdprio_percentage[d] > 0 {
            slot.push(CmdPrio { bs: None, prios: vec![(e.cmdprio_percentage[d] as u32, implicit)] });
        }
    }
    out
}

/// The resolved job, with fio's `fixup_options` applied. `thread_number` is
/// fio's 1-based number of the job among all jobs (for `cpus_allowed_policy=split`).
fn to_config(st: &Settings, name: &str, thread_number: usize) -> JobConfig {
    let mut c = JobConfig::new(name);
    c.rw = st.rw;
    c.rwmixread = st.rwmixread;
    for d in 0..3 {
        let (lo, hi) = st.bsrange[d].unwrap_or((st.bs[d], st.bs[d]));
        // fio's fixup_options: a min_bs or max_bs of 0 is bs.
        c.bs[d] = if lo == 0 { st.bs[d] } else { lo };
        let hi = if hi == 0 { st.bs[d] } else { hi };
        c.bs_max[d] = if hi > c.bs[d] { hi } else { 0 };
        c.bs_unaligned = st.bs_unaligned;
        c.bs_is_seq_rand = st.bs_is_seq_rand;
        if let Some(split) = st.bssplit_of(d) {
            // fio's min_bs; a split of one size is that size.
            c.bs[d] = split.iter().map(|e| e.bs).min().unwrap_or(c.bs[d]);
            if split.iter().any(|e| e.bs != c.bs[d]) {
                c.bssplit[d] = split;
            }
        }
    }
    let depth = st.iodepth;
    c.iodepth = depth;
    c.iodepth_batch_submit = if st.batch_submit == 0 || st.batch_submit > depth { depth } else { st.batch_submit };
    c.iodepth_batch_complete_min = st.complete_min;
    c.iodepth_batch_complete_max = st.complete_max.max(st.complete_min);
    c.iodepth_low = if st.iodepth_low == 0 || st.iodepth_low > depth { depth } else { st.iodepth_low };
    let engine_opts = if st.eng.table == st.engine.option_table() {
        st.eng.clone()
    } else {
        EngineOpts::defaults(st.engine.option_table())
    };
    c.ioengine = to_engine(st.engine, &engine_opts);
    if st.ioprio.iter().any(Option::is_some) {
        let [class, level, hint] = st.ioprio.map(|v| v.unwrap_or(0));
        c.ioprio = blksim::workload::ioprio_value(class, level, hint);
    }
    c.cmdprio = cmdprio(st, &engine_opts);
    c.direct = st.direct;
    // fio sets the affinity of cpus_allowed (split or shared), then libnuma's
    // numa_run_on_node_mask replaces it with the CPUs of numa_cpu_nodes.
    c.cpus_allowed = st.numa_cpus.clone().or_else(|| {
        st.cpus.as_ref().map(|mask| if st.split { vec![mask[(thread_number - 1) % mask.len()]] } else { mask.clone() })
    });
    c.filenames = st.filenames.clone();
    // (Not rounded to the block size: where the last block fits is fill_io_u's and the random
    // map's to say, as in fio.)
    c.size = st.size;
    c.offset = st.offset;
    c.runtime_ns = (st.runtime_us > 0).then(|| st.runtime_us.saturating_mul(1000));
    // fio ignores time_based (with a warning) when there is no runtime.
    c.time_based = st.time_based && st.runtime_us > 0;
    c.ramp_time_ns = st.ramp_us.saturating_mul(1000);
    c.startdelay_ns = st.startdelay_us.saturating_mul(1000);
    // fio's fixup_options: blockalign counts for random I/O only, defaults to
    // min_bs (0 here), and any other value turns the random map off.
    for d in 0..3 {
        c.ba[d] = if st.rw.is_random() && st.ba[d] > 0 && st.ba[d] != c.bs[d] { st.ba[d] } else { 0 };
    }
    c.norandommap = st.no_random_map();
    c.fio_norandommap = st.norandommap_set();
    c.offset_overlap_risk = c.fio_norandommap || st.softrandommap || st.ddir_seq_add != 0 || st.ddir_seq_nr > 1;
    c.keeps_done_files = !c.time_based && st.loops <= 1 && !st.verify.do_verify;
    c.offload = st.offload;
    c.serialize_overlap = st.serialize_overlap;
    // fio's fixup_options: a randseed given overrides randrepeat (no reseeding between loops).
    c.randrepeat = st.randrepeat && st.randseed.is_none();
    // fio 3.42's setup_random_seeds: from randseed (0x89 by default) unless randrepeat=0
    // without randseed, which takes the system's random numbers.
    c.fio_seed = (st.randrepeat || st.randseed.is_some()).then_some(st.randseed.unwrap_or(0x89));
    c.random_generator = st.random_generator;
    c.ddir_seq_nr = st.ddir_seq_nr;
    c.perc_rand = st.perc_rand.map(|p| p as u8);
    c.rw_identical = st.rw_identical;
    c.ddir_seq_add = st.ddir_seq_add;
    c.random_distribution = st.random_distribution.clone();
    c.file_service = st.file_service.clone();
    c.rate_iops = st.rate_iops;
    c.rate = st.rate;
    (c.rate_min, c.rate_iops_min, c.rate_cycle_ms) = (st.rate_min, st.rate_iops_min, st.rate_cycle_ms);
    c.rate_process = st.rate_process;
    c.rate_ignore_thinktime = st.rate_ignore_thinktime;
    c.thinkcycles = st.thinkcycles;
    c.error_options = st.error_options.clone();
    (c.exitall, c.exit_what) = (st.exitall, st.exit_what);
    c.ioscheduler = st.ioscheduler.clone();
    // fio's fixup_options: microseconds to nanoseconds.
    c.max_latency_ns = st.max_latency_us.map(|us| us.saturating_mul(1000));
    c.latency_target = (st.latency_target_us > 0).then(|| blksim::workload::LatencyTarget {
        target_ns: st.latency_target_us.saturating_mul(1000),
        window_us: st.latency_window_us,
        percentile: st.latency_percentile,
        run: st.latency_run,
    });
    c.thinktime = st.thinktime;
    c.io_size = st.io_size;
    // 0 is 1 where fio lets it through (jobs that do not trim; `check_sizes` refuses the rest).
    c.num_range = st.num_range.max(1) as u32;
    // fio's fixup_options: zonerange defaults to zonesize (several files: refused in add_job).
    let strided = st.zone_mode == Some("strided");
    c.strided = strided.then_some(blksim::workload::Strided {
        size: st.zone_size,
        range: if st.zone_range == 0 { st.zone_size } else { st.zone_range },
        skip: st.zone_skip,
    });
    c.number_ios = st.number_ios;
    c.sync_every = st.sync_every;
    // fio closes each file at the job's end (and syncs it first with fsync_on_close).
    c.end_fsync = st.end_fsync || st.fsync_on_close;
    c.dsync = st.sync_io;
    c.loops = st.loops;
    c.group_reporting = st.group_reporting;
    c.thread = st.thread;
    c.gtod_reduce = st.gtod_reduce;
    c.clat_percentiles = st.clat_percentiles;
    c.lat_percentiles = st.lat_percentiles;
    c.slat_percentiles = st.slat_percentiles;
    c.percentile_list = st.percentile_list.clone();
    c.description = st.description.clone();
    c.disk_util = st.disk_util;
    c.unified_rw_reporting = st.unified_rw_reporting;
    c.kb_base = st.kb_base;
    c.sig_figs = st.sig_figs;
    c.bit_based = st.bit_based;
    let v = &st.verify;
    c.verify = v.algo.map(|algo| blksim::workload::VerifyConfig {
        algo,
        do_verify: v.do_verify,
        backlog: v.backlog,
        backlog_batch: v.backlog_batch,
        experimental: v.experimental,
        pattern: v.pattern,
        save_state: v.state_save,
    });
    c.verify_async = st.verify_async.min(u32::MAX as u64) as u32;
    c.verify_async_cpus = st.verify_cpus.clone();
    c.flow = (st.flow[0] > 0).then(|| blksim::workload::FlowConfig {
        weight: st.flow[0] as u32,
        id: st.flow[1] as u32,
        sleep_us: st.flow[2],
    });
    c
}

/// The null engine's file of `file` bytes (`filesize`; fio's setup_files
/// with a fixed file size, on a regular file): the job's region of it (fio's `io_size`) is what
/// lies past the clone's `offset`, or `size=N%` of the file (`size`, already
/// capped and aligned by `start_and_size`); the job does `size=` bytes of
/// I/O, at most the region, or the region when `size` is not given in bytes.
/// An offset at or past the file's end leaves it nothing (fio's err_offset,
/// and its "blocksize is larger than data set range").
fn null_file_region(st: &Settings, file: u64, offset: u64, size: Option<u64>) -> Result<(u64, u64), String> {
    if offset > file {
        return Err(format!("offset {offset} with filesize={file}: fio: offset extends end ({offset} > {file})"));
    }
    let region = if st.size_pct.is_some() { size.unwrap_or(0) } else { file - offset };
    let io = match (st.size_pct, st.size) {
        (None, Some(bytes)) if bytes > 0 => bytes.min(region),
        _ => region,
    };
    let min_bs = checks::td_min_bs(st);
    if io < min_bs {
        return Err(format!(
            "the job's region of the null engine's file (filesize={file}) is {io} bytes past offset {offset}, \
             less than its smallest block ({min_bs}): fio: blocksize is larger than data set range"
        ));
    }
    Ok((region, io))
}

/// fio's `get_start_offset` and `size_percent` for subjob `clone` of the
/// job (its files `files`): `offset + clone * offset_increment`, either of
/// them a percentage of the file's device (the sum then aligned up to the
/// smallest block size); `size` as a percentage, at most what lies past the
/// offset, aligned down to the smallest block size. The null engine's file
/// is not a device: its offsets' percentages are of `size=` (bytes, over
/// the files), its size's of `filesize`, as fio's setup_files takes them.
/// A problem names its option.
fn start_and_size(
    st: &Settings,
    files: &[String],
    clone: u64,
    ctx: &ParseContext,
) -> Result<(u64, Option<u64>), (ErrorKind, &'static str, String)> {
    let given = [("size", st.size_pct), ("offset", st.offset_pct), ("offset_increment", st.offset_increment_pct)];
    // The file the percentages take their share of (fio's real_file_size; for
    // size=N%, the file's size): the machine's device, or the null engine's
    // file, which fio never looks at (FIO_DISKLESSIO): its real_file_size is
    // size= over the files (setup_files), its size `filesize`.
    let first_pct = given.iter().find_map(|&(o, p)| Some((o, p?)));
    let (offset_base, size_base) = match first_pct {
        None => (0, 0),
        Some(_) if st.engine == super::engine::EngineName::Null => {
            let real = null_real_file_size(st, files);
            let pcts = [("offset", st.offset_pct), ("offset_increment", st.offset_increment_pct)];
            if let (None, Some((o, p))) = (real, pcts.iter().find_map(|&(o, p)| Some((o, p?)))) {
                let m = format!(
                    "{o}={p}% on the null engine: fio takes the share of its file's size, which it knows only from \
                 size= in bytes (not given): fio: you need to specify valid offset="
                );
                return Err((ErrorKind::BadInput, o, m));
            }
            if st.size_pct.is_some() && st.filesize.is_none() {
                let m = format!(
                    "size={}% on the null engine without filesize=: the null engine has no file to take a share of \
                 (fio: you need to specify size=)",
                    st.size_pct.unwrap_or(0)
                );
                return Err((ErrorKind::BadInput, "size", m));
            }
            (real.unwrap_or(0), st.filesize.unwrap_or(0))
        }
        Some((opt, p)) => {
            let sizes: Vec<Option<u64>> = files.iter().map(|f| ctx.file_bytes(f)).collect();
            let device = match sizes.first() {
                Some(&Some(b)) if sizes.iter().all(|&s| s == Some(b)) => b,
                Some(&Some(_)) => {
                    let m = format!("{opt}={p}% with files of different sizes is not modelled");
                    return Err((ErrorKind::NotModelled, opt, m));
                }
                _ => {
                    return Err((
                        ErrorKind::NotModelled,
                        opt,
                        format!(
                            "{opt}={p}%: a percentage of a file that is not one of the machine's block devices \
                         (blksim simulates no files)"
                        ),
                    ))
                }
            };
            (device, device)
        }
    };
    let min_bs = checks::td_min_bs(st);
    if st.offset_align == Some(0) && st.offset_pct.or(st.offset_increment_pct).is_some() {
        let m = "offset_align=0 with a percentage offset: fio 3.42 aligns the offset up to it and divides by zero \
                 (SIGFPE); leave it unset (the smallest block size) or give an alignment";
        return Err((ErrorKind::BadInput, "offset_align", m.to_string()));
    }
    let Some(offset) = get_start_offset(st, offset_base, clone) else {
        return Err(overflow(clone));
    };
    let size = match st.size_pct {
        Some(p) => {
            let s = pct(size_base, p).min(size_base.saturating_sub(offset));
            let s = s - s % min_bs;
            if s == 0 {
                return Err((
                    ErrorKind::BadInput,
                    "size",
                    format!("size={p}% leaves no block past offset {offset} of the file ({size_base} bytes)"),
                ));
            }
            Some(s)
        }
        None => None,
    };
    Ok((offset, size))
}

/// A percentage of `of`, as fio's `of * p / 100` without overflowing.
fn pct(of: u64, p: u64) -> u64 {
    of / 100 * p + of % 100 * p / 100
}

/// fio's get_start_offset for subjob `clone` on a file whose real_file_size
/// is `real`: `offset + clone * offset_increment`, either a percentage of
/// `real` (the sum then aligned up to `offset_align`, else td_min_bs); `None`
/// past 64 bits.
fn get_start_offset(st: &Settings, real: u64, clone: u64) -> Option<u64> {
    let (increment, inc_align) = st.offset_increment_pct.map_or((st.offset_increment, false), |p| (pct(real, p), true));
    let (base, base_align) = st.offset_pct.map_or((st.offset, false), |p| (pct(real, p), true));
    let offset = clone.checked_mul(increment)?.checked_add(base)?;
    // Aligned up to offset_align when given, else to the smallest block size.
    let align = st.offset_align.unwrap_or_else(|| checks::td_min_bs(st));
    if !(inc_align || base_align) || align == 0 {
        // (offset_align=0 with a percentage: refused before, fio divides by it.)
        return Some(offset);
    }
    offset.div_ceil(align).checked_mul(align)
}

/// The null engine's start offset after setup_files grew its file's
/// real_file_size to `real` (the region past the first offset): what fio's
/// later get_start_offset calls give (a later loop's or pass's start, the
/// end io_u_fits and the sequential wrap measure from), when a percentage
/// makes it differ from the first.
fn later_start(st: &Settings, real: u64, clone: u64, first: u64) -> Option<u64> {
    if st.engine != super::engine::EngineName::Null || st.offset_pct.or(st.offset_increment_pct).is_none() {
        return None;
    }
    get_start_offset(st, real, clone).filter(|&o| o != first)
}

/// fio's real_file_size of the null engine's file, which it never looks at
/// (FIO_DISKLESSIO): `size=` in bytes over the files; unknown without it.
fn null_real_file_size(st: &Settings, files: &[String]) -> Option<u64> {
    st.size.filter(|&s| s > 0).map(|s| s / files.len().max(1) as u64)
}

/// fio's setup_files for a job of `nr` files: each file's `io_size`, and
/// the job's `size` when that changes. `size=` in bytes is shared (`size /
/// nr`, the first files a block more while the remainder holds whole
/// blocks); a percentage (`size`, already each file's share) is of each
/// file, and `size` then counts them all (fio's `o->size = total_size`);
/// without `size` each file is whole (none); the null engine's files of
/// `filesize` each have the region one would (`null_file`), `size` in bytes
/// at most all of them. Where the model does not follow fio, why.
fn file_regions(
    st: &Settings,
    nr: u64,
    size: Option<u64>,
    null_file: Option<(u64, u64)>,
) -> Result<(Vec<u64>, Option<u64>), String> {
    if let Some((_, region)) = null_file.filter(|_| st.filesize.is_some()) {
        // The null engine's files of `filesize` (setup_files' file_size_low): the job's region
        // of each as of one, `size` in bytes at most all of them.
        let all = region.saturating_mul(nr);
        let total = match (st.size_pct, st.size) {
            (None, Some(bytes)) if bytes > 0 => bytes.min(all),
            _ => all,
        };
        return Ok((vec![region; nr as usize], Some(total)));
    }
    let min_bs = checks::td_min_bs(st);
    match (st.size_pct, size) {
        (Some(_), Some(each)) => Ok((vec![each; nr as usize], Some(each.saturating_mul(nr)))),
        (None, Some(total)) if total > 0 => {
            let share = total / nr;
            if share < min_bs {
                return Err(format!(
                    "size={total} over {nr} files leaves each {share} bytes, less than a block ({min_bs}): fio \
                     would take such a file whole, which is not modelled"
                ));
            }
            let extra = (total - share * nr) / min_bs;
            Ok(((0..nr).map(|i| share + if i < extra { min_bs } else { 0 }).collect(), None))
        }
        _ => Ok((Vec::new(), None)),
    }
}

/// The clone's offset does not fit 64 bits.
fn overflow(clone: u64) -> (ErrorKind, &'static str, String) {
    let m = format!("offset_increment for clone {clone}: the offset overflows 64 bits");
    (ErrorKind::BadInput, "offset_increment", m)
}
