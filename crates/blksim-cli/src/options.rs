//! The option loops of the commands, written once: a command's typed options
//! take one argument at a time ([`CommandOptions`]), and [`parse_options`]
//! (fio style, `--opt VALUE` and `--opt=VALUE`) or [`split_front_end`]
//! (a front end's command line with the CLI's own options in it) walk the
//! command line for them.

use std::str::FromStr;

use blksim_lab::frontend::split_inline;

/// What a command made of one option.
#[derive(Debug, PartialEq, Eq)]
pub enum Seen {
    /// One of the command's options, taken (with its value, if it has one).
    Taken,
    /// Read nothing after this one (`--help`).
    Stop,
    /// Not one of the command's options.
    Unknown,
}

/// How a command's "needs a value" message names what is missing.
#[derive(Clone, Copy, Debug)]
pub enum Needs {
    /// `--seed needs a number` (what the option takes).
    What,
    /// `--seed needs a value`.
    AValue,
}

/// A command's typed options, filled one argument at a time.
pub trait CommandOptions {
    /// Take option `name`, reading its value from `value` if it has one.
    fn option(&mut self, name: &str, value: &mut Value) -> Result<Seen, String>;
    /// Take an argument that is not an option (a job file, an experiment, a front end's argument).
    fn operand(&mut self, arg: &str);
}

/// The value of the option being read: its inline `=VALUE`, else the next argument.
pub struct Value<'a> {
    argv: &'a [String],
    at: &'a mut usize,
    name: &'a str,
    inline: Option<&'a str>,
    usage: &'a str,
    needs: Needs,
}

impl Value<'_> {
    /// The value; `what` names it in the message when it is missing (with [`Needs::What`]).
    pub fn take(&mut self, what: &str) -> Result<String, String> {
        if let Some(v) = self.inline {
            return Ok(v.to_string());
        }
        *self.at += 1;
        let what = match self.needs {
            Needs::What => what,
            Needs::AValue => "a value",
        };
        self.argv.get(*self.at).cloned().ok_or_else(|| format!("{} needs {what}\n{}", self.name, self.usage))
    }

    /// The value; when it is missing the message says the option `needs a value`.
    pub fn take_any(&mut self) -> Result<String, String> {
        self.take("a value")
    }
}

/// Fill `opts` from `argv`, fio style: an unknown `-x` is an error (naming `usage`), any other argument an operand.
pub fn parse_options(argv: &[String], usage: &str, needs: Needs, opts: &mut dyn CommandOptions) -> Result<(), String> {
    let mut i = 0;
    while i < argv.len() {
        let arg = &argv[i];
        let (name, inline) = split_inline(arg);
        let mut value = Value { argv, at: &mut i, name, inline, usage, needs };
        match opts.option(name, &mut value)? {
            Seen::Taken => {}
            Seen::Stop => break,
            Seen::Unknown if name.starts_with('-') => return Err(format!("unknown option '{name}'\n{usage}")),
            Seen::Unknown => opts.operand(arg),
        }
        i += 1;
    }
    Ok(())
}

/// Fill `opts` from a front end's command line: the CLI's options are `--opt VALUE` (no `=VALUE`), every
/// other argument is the front end's operand; with `values_follow`, an unknown `--opt` (no `=`) brings the
/// argument after it along.
pub fn split_front_end(
    argv: &[String],
    usage: &str,
    values_follow: bool,
    opts: &mut dyn CommandOptions,
) -> Result<(), String> {
    let mut i = 0;
    while i < argv.len() {
        let arg = &argv[i];
        let mut value = Value { argv, at: &mut i, name: arg, inline: None, usage, needs: Needs::AValue };
        match opts.option(arg, &mut value)? {
            Seen::Taken => {}
            Seen::Stop => break,
            Seen::Unknown => {
                opts.operand(arg);
                if values_follow && arg.starts_with("--") && !arg.contains('=') {
                    if let Some(v) = argv.get(i + 1) {
                        opts.operand(v);
                        i += 1;
                    }
                }
            }
        }
        i += 1;
    }
    Ok(())
}

/// `--seed`'s value.
pub fn parse_seed(v: &str) -> Result<u64, String> {
    v.parse().map_err(|_| format!("--seed: expected a non-negative integer, got '{v}'"))
}

/// A count that must be above zero, for option `name`.
pub fn parse_positive<T: FromStr + Default + PartialOrd>(name: &str, v: &str) -> Result<T, String> {
    v.parse()
        .ok()
        .filter(|n| *n > T::default())
        .ok_or_else(|| format!("{name}: expected a positive integer, got '{v}'"))
}

/// `v` if it is one of `choices` (`expected` lists them in the message), for option `name`.
pub fn one_of(name: &str, v: String, choices: &[&str], expected: &str) -> Result<String, String> {
    if choices.contains(&v.as_str()) {
        Ok(v)
    } else {
        Err(format!("{name}: expected {expected}, got '{v}'"))
    }
}
