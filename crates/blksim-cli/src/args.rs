//! Command-line parsing for `blksim run`: fio-style `--opt VALUE` and `--opt=VALUE`.

/// What `blksim run` was asked to do.
#[derive(Debug, Default)]
pub struct RunArgs {
    pub job_files: Vec<String>,
    pub machine: Option<String>,
    pub cmdline: Vec<String>,
    pub sets: Vec<String>,
    pub patches: Vec<String>,
    pub seed: u64,
    pub output_format: String,
    pub output: Option<String>,
    pub interrupts: bool,
    pub breakdown: bool,
    pub mpstat: bool,
    pub iostat: bool,
    pub parse_only: bool,
    pub trace: Option<String>,
    /// `--at TIME:PATH=VALUE`: writes during the run.
    pub at: Vec<(u64, blksim::settings::TimedAction)>,
    /// [start, end) of virtual time to trace, ns.
    pub trace_window_ns: (u64, u64),
}

/// Default trace window: the first 10 ms of the run.
pub const DEFAULT_TRACE_WINDOW_NS: (u64, u64) = (0, 10_000_000);

pub use blksim::settings::parse_time_ns;

pub const RUN_USAGE: &str =
    "usage: blksim run JOB.fio... [--machine NAME|FILE] [--cmdline \"...\"] [--set PATH=VALUE]... \
[--at TIME:PATH=VALUE]... [--seed N] [--output-format normal|json|json+] [--output FILE] [--interrupts] [--mpstat] [--iostat] [--breakdown] [--parse-only] \
[--trace FILE [--trace-window START:END]]";

pub fn parse_run(argv: &[String]) -> Result<RunArgs, String> {
    let mut a = RunArgs {
        seed: 1,
        output_format: "normal".into(),
        trace_window_ns: DEFAULT_TRACE_WINDOW_NS,
        ..Default::default()
    };
    let mut i = 0;
    while i < argv.len() {
        let arg = &argv[i];
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = |what: &str| -> Result<String, String> {
            if let Some(v) = &inline {
                return Ok(v.clone());
            }
            i += 1;
            argv.get(i).cloned().ok_or_else(|| format!("{name} needs {what}\n{RUN_USAGE}"))
        };
        match name.as_str() {
            "--machine" => a.machine = Some(value("a machine name or profile file")?),
            "--cmdline" => a.cmdline.push(value("a kernel command line")?),
            "--set" => a.sets.push(value("PATH=VALUE")?),
            "--patch" => a.patches.push(value("a patch name")?),
            "--seed" => {
                let v = value("a number")?;
                a.seed = v.parse().map_err(|_| format!("--seed: expected a non-negative integer, got '{v}'"))?;
            }
            "--output-format" => {
                let v = value("normal, json or json+")?;
                if !["normal", "json", "json+"].contains(&v.as_str()) {
                    return Err(format!("--output-format: expected normal, json or json+, got '{v}'"));
                }
                a.output_format = v;
            }
            "--output" => a.output = Some(value("a file name")?),
            "--trace" => a.trace = Some(value("a file name")?),
            "--at" => a.at.push(blksim::settings::parse_timed_write(&value("TIME:PATH=VALUE")?)?),
            "--trace-window" => {
                let v = value("START:END, e.g. 10ms:12ms")?;
                let (s, e) = v
                    .split_once(':')
                    .ok_or_else(|| format!("--trace-window '{v}': expected START:END, e.g. 10ms:12ms"))?;
                let (s, e) = (parse_time_ns(s)?, parse_time_ns(e)?);
                if e <= s {
                    return Err(format!("--trace-window '{v}': END must be after START"));
                }
                a.trace_window_ns = (s, e);
            }
            "--interrupts" => a.interrupts = true,
            "--breakdown" => a.breakdown = true,
            "--mpstat" => a.mpstat = true,
            "--iostat" => a.iostat = true,
            "--parse-only" => a.parse_only = true,
            s if s.starts_with('-') => return Err(format!("unknown option '{s}'\n{RUN_USAGE}")),
            _ => a.job_files.push(arg.clone()),
        }
        i += 1;
    }
    if a.job_files.is_empty() {
        return Err(format!("no job file given\n{RUN_USAGE}"));
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn both_option_forms_parse() {
        let a = parse_run(&v(&["j.fio", "--seed=5", "--set", "/sys/x=1", "--output-format", "json+"])).unwrap();
        assert_eq!(a.seed, 5);
        assert_eq!(a.sets, vec!["/sys/x=1"]);
        assert_eq!(a.output_format, "json+");
        assert_eq!(a.job_files, vec!["j.fio"]);
    }

    #[test]
    fn trace_window_takes_times_with_units() {
        let a = parse_run(&v(&["j.fio", "--trace", "t.json", "--trace-window", "1.5ms:2ms"])).unwrap();
        assert_eq!(a.trace.as_deref(), Some("t.json"));
        assert_eq!(a.trace_window_ns, (1_500_000, 2_000_000));
        assert!(parse_run(&v(&["j.fio", "--trace-window", "2ms:1ms"])).unwrap_err().contains("after START"));
        assert!(parse_run(&v(&["j.fio", "--trace-window", "1xs:2ms"])).unwrap_err().contains("unknown unit"));
    }

    #[test]
    fn bad_options_are_errors() {
        assert!(parse_run(&v(&["j.fio", "--bogus"])).unwrap_err().contains("unknown option '--bogus'"));
        assert!(parse_run(&v(&["j.fio", "--seed", "x"])).unwrap_err().contains("--seed"));
        assert!(parse_run(&v(&["j.fio", "--output-format=xml"])).unwrap_err().contains("xml"));
        assert!(parse_run(&v(&[])).unwrap_err().contains("no job file"));
    }
}
