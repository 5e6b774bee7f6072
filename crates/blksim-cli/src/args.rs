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
    pub parse_only: bool,
}

pub const RUN_USAGE: &str = "usage: blksim run JOB.fio... [--machine NAME|FILE] [--cmdline \"...\"] [--set PATH=VALUE]... \
[--seed N] [--output-format normal|json|json+] [--output FILE] [--interrupts] [--parse-only]";

pub fn parse_run(argv: &[String]) -> Result<RunArgs, String> {
    let mut a = RunArgs { seed: 1, output_format: "normal".into(), ..Default::default() };
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
            "--trace" => return Err("--trace is not implemented yet".into()),
            "--interrupts" => a.interrupts = true,
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
    fn bad_options_are_errors() {
        assert!(parse_run(&v(&["j.fio", "--bogus"])).unwrap_err().contains("unknown option '--bogus'"));
        assert!(parse_run(&v(&["j.fio", "--seed", "x"])).unwrap_err().contains("--seed"));
        assert!(parse_run(&v(&["j.fio", "--output-format=xml"])).unwrap_err().contains("xml"));
        assert!(parse_run(&v(&[])).unwrap_err().contains("no job file"));
    }
}
