//! `blksim options`: every fio option blksim knows and what it does with it
//! (like `fio --cmdhelp`): modelled, no effect on a simulated run (and
//! whether a run warns because a real run's output would show it), rejected
//! (with the values still accepted), or deprecated.

use blksim_fio::job::{option_table, OptionRow, OptionStatus};

use crate::args::{OptionsArgs, OptionsStatus};
use crate::failure::Failure;
use crate::out;

/// The status column's word for `status`.
fn status_word(status: &OptionStatus) -> &'static str {
    match status {
        OptionStatus::Modelled => "modelled",
        OptionStatus::NoOp(_) => "no effect",
        OptionStatus::Warned(_) => "no effect, warns",
        OptionStatus::Rejected(_) => "rejected",
        OptionStatus::Deprecated => "deprecated",
    }
}

/// Does `row` pass the `--status` filter?
fn wanted(row: &OptionRow, filter: Option<OptionsStatus>) -> bool {
    match filter {
        None => true,
        Some(OptionsStatus::Modelled) => row.status == OptionStatus::Modelled,
        Some(OptionsStatus::NoEffect) => matches!(row.status, OptionStatus::NoOp(_) | OptionStatus::Warned(_)),
        Some(OptionsStatus::Warns) => matches!(row.status, OptionStatus::Warned(_)),
        Some(OptionsStatus::Rejected) => matches!(row.status, OptionStatus::Rejected(_) | OptionStatus::Deprecated),
    }
}

/// Why `row` has its status: what the model does with the option, or why it does nothing.
fn why(row: &OptionRow) -> String {
    match row.status {
        OptionStatus::Modelled => blksim_fio::job::modelled_note(row.name).unwrap_or_default().to_string(),
        OptionStatus::NoOp(why) | OptionStatus::Warned(why) => why.to_string(),
        OptionStatus::Rejected(why) => match row.accepted_values {
            [] => why.to_string(),
            values => {
                let forms: Vec<String> = values.iter().map(|v| format!("{}={v}", row.name)).collect();
                format!("{why} (accepted: {})", forms.join(", "))
            }
        },
        OptionStatus::Deprecated => "fio rejects it".to_string(),
    }
}

/// Every option as the library call gives it: name, alias (or empty), the value's syntax, the ioengine
/// whose option it is ("general" for fio's own), the status word of `blksim options` and why.
pub fn option_records() -> Vec<[String; 6]> {
    option_table()
        .iter()
        .map(|r| {
            let alias = r.alias.unwrap_or_default().to_string();
            [r.name.to_string(), alias, r.syntax.clone(), r.table.to_string(), status_word(&r.status).into(), why(r)]
        })
        .collect()
}

/// One row: `name (alias)`, the value's syntax, the status and why.
fn line(row: &OptionRow) -> String {
    let name = match row.alias {
        Some(a) => format!("{} ({a})", row.name),
        None => row.name.to_string(),
    };
    let why = why(row);
    let syntax = if row.syntax.len() > 24 { format!("{}...", &row.syntax[..21]) } else { row.syntax.clone() };
    format!("{name:<44} {syntax:<24} {:<17} {why}", status_word(&row.status)).trim_end().to_string() + "\n"
}

/// `blksim options [NAME] [--status S]`.
pub fn options(args: &OptionsArgs) -> Result<(), Failure> {
    let rows = option_table();
    let rows: Vec<&OptionRow> = rows
        .iter()
        .filter(|r| args.name.as_deref().is_none_or(|n| r.name == n || r.alias == Some(n)))
        .filter(|r| wanted(r, args.status))
        .collect();
    if let (Some(name), true) = (&args.name, rows.is_empty()) {
        return Err(Failure::from(format!(
            "'{name}' is not a fio option blksim knows (fio: Bad option); `blksim options` lists them"
        )));
    }
    let mut text =
        format!("{:<44} {:<24} {:<17} {}\n", "OPTION (ALIAS)", "VALUE", "BLKSIM", "WHY").trim_end().to_string();
    text.push('\n');
    let mut table = "";
    for row in rows {
        if row.table != table {
            table = row.table;
            if table != "general" {
                text += &format!("\noptions of ioengine={table}:\n");
            }
        }
        text += &line(row);
    }
    out::print(&text)
}
