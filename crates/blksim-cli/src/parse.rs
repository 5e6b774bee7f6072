//! Reading the command line: fio's command-line job options of `blksim run`
//! taken out first (they are fio's, not blksim's: `--name=a --rw=randread`),
//! the rest read by clap; clap's help and version printed on stdout, its
//! errors turned into one `blksim: ...` message with exit status 2.

use std::collections::BTreeMap;

use blksim_fio::job::{command_line_option, unknown_command_line_option, CommandLineJob};
use clap::error::ErrorKind;
use clap::{CommandFactory, Parser};

use crate::args::{Cli, Command};
use crate::failure::Failure;
use crate::out;

/// The command `argv` (program name first) asks for; `None` when it asked for help or the version,
/// which are printed here.
pub fn parse(argv: &[String]) -> Result<Option<Cli>, Failure> {
    let (argv, fio_job) = take_fio_job(argv);
    if argv.get(1).map(String::as_str) == Some("run") {
        // What is left that looks like an option is neither blksim's nor one of fio's job options:
        // fio's message (with the closest option) rather than clap's.
        let own = run_options();
        let unknown = argv[2..].iter().take_while(|a| *a != "--").find_map(|a| {
            let name = a.strip_prefix("--")?.split('=').next()?;
            (!name.is_empty() && !own.contains_key(name)).then_some(name)
        });
        if let Some(name) = unknown {
            return Err(unknown_command_line_option(name, own.keys().map(String::as_str)).into());
        }
    }
    match Cli::try_parse_from(&argv) {
        Ok(mut cli) => {
            if let Command::Run(run) = &mut cli.command {
                run.fio_job = fio_job;
            }
            Ok(Some(cli))
        }
        Err(e) => match e.kind() {
            ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => out::print(&e.render().to_string()).map(|()| None),
            ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                Err(format!("no command given\n\n{}", e.render().to_string().trim_end()).into())
            }
            _ => Err(clap_message(&e).into()),
        },
    }
}

/// clap's error without its `error: ` head and trailing blank lines.
fn clap_message(e: &clap::Error) -> String {
    let text = e.render().to_string();
    text.strip_prefix("error: ").unwrap_or(&text).trim_end().to_string()
}

/// `blksim run`'s arguments without fio's command-line job options, and those options. An argument
/// `--NAME[=VALUE]` is fio's when `NAME` is not an option of `blksim run` and is a job option of fio
/// (general, or of an engine blksim simulates); arguments after `--` are never options.
fn take_fio_job(argv: &[String]) -> (Vec<String>, CommandLineJob) {
    let mut job = CommandLineJob::default();
    if argv.get(1).map(String::as_str) != Some("run") {
        return (argv.to_vec(), job);
    }
    let own = run_options();
    let mut rest = argv[..2].to_vec();
    let mut i = 2;
    while i < argv.len() {
        let arg = &argv[i];
        if arg == "--" {
            rest.extend_from_slice(&argv[i..]);
            break;
        }
        let name = arg.strip_prefix("--").map(|o| o.split('=').next().unwrap_or(o));
        let used = match name {
            Some(name) if !own.contains_key(name) => {
                command_line_option(name).map(|takes_value| job.take(argv, i, takes_value))
            }
            Some(name) => {
                let n = if own[name] && !arg.contains('=') { 2 } else { 1 };
                rest.extend(argv[i..].iter().take(n).cloned());
                Some(n)
            }
            None => None,
        };
        match used {
            Some(n) => i += n,
            None => {
                rest.push(arg.clone());
                i += 1;
            }
        }
    }
    (rest, job)
}

/// `blksim run`'s long options, and whether each takes a value.
fn run_options() -> BTreeMap<String, bool> {
    let cli = Cli::command();
    let run = cli.find_subcommand("run").expect("the run command");
    let mut own: BTreeMap<String, bool> = run
        .get_arguments()
        .filter_map(|a| a.get_long().map(|l| (l.to_string(), a.get_action().takes_values())))
        .collect();
    own.insert("help".into(), false);
    own
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn fio_job_options_are_taken_out_and_blksims_stay() {
        let argv = v(&[
            "blksim",
            "run",
            "--bs",
            "8k",
            "--name=a",
            "--seed",
            "5",
            "--rw=randread",
            "--time_based",
            "--output-format=json",
            "--iodepth",
            "4",
            "--",
            "--name=x",
        ]);
        let (rest, job) = take_fio_job(&argv);
        assert_eq!(rest, v(&["blksim", "run", "--seed", "5", "--output-format=json", "--", "--name=x"]));
        assert_eq!(job.args, v(&["--bs=8k", "--name=a", "--rw=randread", "--time_based", "--iodepth=4"]));
    }

    #[test]
    fn other_commands_and_unknown_options_are_left_to_clap() {
        let argv = v(&["blksim", "machines", "--rw=read"]);
        assert_eq!(take_fio_job(&argv).0, argv);
        let argv = v(&["blksim", "run", "j.fio", "--frobnicate"]);
        let (rest, job) = take_fio_job(&argv);
        assert_eq!((rest, job.args.len()), (argv, 0));
    }
}
