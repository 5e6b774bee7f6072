//! The summary of a reproduction (per experiment and overall: median and
//! worst absolute error, cells within tolerance), and its two renderings:
//! a text table and JSON.

use serde_json::{json, Value};

use crate::runner::{CellResult, CellStatus, ExperimentResult};

/// Error statistics over a set of cells.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    pub cells: usize,
    /// Cells with a simulated value.
    pub active: usize,
    pub within: usize,
    pub pending: usize,
    /// Outside tolerance, documented as known gaps (counted in `active`, not in `within`).
    pub gaps: usize,
    /// Median and worst |error| over the active cells.
    pub median_abs_error: Option<f64>,
    pub worst_abs_error: Option<f64>,
    /// `experiment: cell` of the worst error.
    pub worst_cell: Option<String>,
}

impl Stats {
    pub fn of<'a>(cells: impl IntoIterator<Item = (&'a str, &'a CellResult)>) -> Stats {
        let mut s = Stats::default();
        let mut errs: Vec<(f64, String)> = Vec::new();
        for (exp, c) in cells {
            s.cells += 1;
            match c.status {
                CellStatus::Pending => s.pending += 1,
                CellStatus::Gap => s.gaps += 1,
                _ => {}
            }
            if c.within == Some(true) {
                s.within += 1;
            }
            if let Some(e) = c.error {
                s.active += 1;
                let name = if exp.is_empty() { c.label.clone() } else { format!("{exp}: {}", c.label) };
                errs.push((e.abs(), name));
            }
        }
        if !errs.is_empty() {
            errs.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
            let n = errs.len();
            s.median_abs_error =
                Some(if n % 2 == 1 { errs[n / 2].0 } else { (errs[n / 2 - 1].0 + errs[n / 2].0) / 2.0 });
            let worst = errs.last().unwrap();
            s.worst_abs_error = Some(worst.0);
            s.worst_cell = Some(worst.1.clone());
        }
        s
    }

    fn json(&self) -> Value {
        json!({
            "cells": self.cells,
            "active": self.active,
            "within": self.within,
            "pending": self.pending,
            "gaps": self.gaps,
            "median_abs_error": self.median_abs_error,
            "worst_abs_error": self.worst_abs_error,
            "worst_cell": self.worst_cell,
        })
    }
}

pub fn experiment_stats(r: &ExperimentResult) -> Stats {
    Stats::of(r.cells.iter().map(|c| ("", c)))
}

pub fn overall_stats(results: &[ExperimentResult]) -> Stats {
    Stats::of(results.iter().flat_map(|r| r.cells.iter().map(move |c| (r.name.as_str(), c))))
}

/// `{"experiments": [...], "summary": {...}}`.
pub fn to_json(results: &[ExperimentResult]) -> Value {
    let exps: Vec<Value> = results
        .iter()
        .map(|r| {
            let cells: Vec<Value> = r
                .cells
                .iter()
                .map(|c| {
                    json!({
                        "label": c.label,
                        "metric": c.metric,
                        "scale": c.scale,
                        "published": c.published,
                        "simulated": c.simulated,
                        "error": c.error,
                        "tolerance": c.tolerance,
                        "within": c.within,
                        "status": c.status.as_str(),
                        "case": c.case,
                        "note": c.note,
                    })
                })
                .collect();
            json!({
                "name": r.name,
                "source": r.source,
                "status": r.status.as_str(),
                "cells": cells,
            })
        })
        .collect();
    let per: serde_json::Map<String, Value> = results
        .iter()
        .map(|r| {
            let mut s = experiment_stats(r).json();
            s["status"] = json!(r.status.as_str());
            (r.name.clone(), s)
        })
        .collect();
    json!({
        "experiments": exps,
        "summary": { "experiments": per, "overall": overall_stats(results).json() },
    })
}

fn pct(x: Option<f64>) -> String {
    match x {
        Some(x) => format!("{:.1}%", x * 100.0),
        None => "-".into(),
    }
}

fn num(x: f64) -> String {
    let a = x.abs();
    if a != 0.0 && !(1e-3..1e7).contains(&a) {
        format!("{x:.4e}")
    } else if a >= 1000.0 {
        format!("{x:.0}")
    } else {
        let s = format!("{x:.4}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_string()
    }
}

/// The text table: per experiment its cells, then the summary.
pub fn to_table(results: &[ExperimentResult]) -> String {
    let mut out = String::new();
    for r in results {
        out += &format!("{} [{}]\n  {}\n  source: {}\n", r.name, r.status.as_str(), r.description.trim(), r.source);
        let lw = r.cells.iter().map(|c| c.label.len()).max().unwrap_or(4).max(4);
        let mw = r.cells.iter().map(|c| c.metric.len()).max().unwrap_or(6).max(6);
        out += &format!(
            "  {:<lw$}  {:<mw$}  {:>12}  {:>12}  {:>8}  {:>6}  status\n",
            "cell", "metric", "published", "simulated", "error", "tol"
        );
        for c in &r.cells {
            let sim = c.simulated.map(num).unwrap_or_else(|| "-".into());
            let err = c.error.map(|e| format!("{:+.1}%", e * 100.0)).unwrap_or_else(|| "-".into());
            out += &format!(
                "  {:<lw$}  {:<mw$}  {:>12}  {:>12}  {:>8}  {:>6}  {}",
                c.label,
                c.metric,
                num(c.published),
                sim,
                err,
                format!("±{:.0}%", c.tolerance * 100.0),
                c.status.as_str()
            );
            if let Some(n) = &c.note {
                out += &format!(" ({n})");
            }
            out.push('\n');
        }
        out.push('\n');
    }
    out += "summary\n";
    let nw = results.iter().map(|r| r.name.len()).max().unwrap_or(7).max(7);
    out += &format!(
        "  {:<nw$}  {:<7}  {:>5}  {:>6}  {:>7}  {:>4}  {:>10}  {:>10}\n",
        "experiment", "status", "cells", "within", "pending", "gaps", "median|e|", "worst|e|"
    );
    let line = |name: &str, status: &str, s: &Stats| {
        format!(
            "  {:<nw$}  {:<7}  {:>5}  {:>6}  {:>7}  {:>4}  {:>10}  {:>10}\n",
            name,
            status,
            s.cells,
            format!("{}/{}", s.within, s.active),
            s.pending,
            s.gaps,
            pct(s.median_abs_error),
            pct(s.worst_abs_error)
        )
    };
    for r in results {
        out += &line(&r.name, r.status.as_str(), &experiment_stats(r));
    }
    let all = overall_stats(results);
    out += &line("overall", "", &all);
    if let Some(w) = &all.worst_cell {
        out += &format!("  worst cell: {w}\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::ExperimentStatus;

    fn cell(label: &str, error: Option<f64>, status: CellStatus) -> CellResult {
        CellResult {
            label: label.into(),
            metric: "iops".into(),
            scale: 1.0,
            case: String::new(),
            published: 100.0,
            simulated: error.map(|e| 100.0 * (1.0 + e)),
            error,
            tolerance: 0.1,
            within: error.map(|e| e.abs() <= 0.1),
            status,
            note: None,
            known_gap: status == CellStatus::Gap,
        }
    }

    #[test]
    fn stats_take_median_and_worst_over_active_cells_only() {
        let r = ExperimentResult {
            name: "e".into(),
            source: "s".into(),
            description: "d".into(),
            status: ExperimentStatus::Pending,
            cells: vec![
                cell("a", Some(0.05), CellStatus::Pass),
                cell("b", Some(-0.30), CellStatus::Gap),
                cell("c", Some(0.02), CellStatus::Pass),
                cell("d", Some(0.2), CellStatus::Fail),
                cell("p", None, CellStatus::Pending),
            ],
        };
        let s = experiment_stats(&r);
        assert_eq!((s.cells, s.active, s.within, s.pending, s.gaps), (5, 4, 2, 1, 1));
        assert!((s.median_abs_error.unwrap() - 0.125).abs() < 1e-12);
        assert_eq!(s.worst_abs_error, Some(0.30));
        assert_eq!(s.worst_cell.as_deref(), Some("b"));
        let j = to_json(&[r]);
        assert_eq!(j["experiments"][0]["cells"][4]["simulated"], Value::Null);
        assert_eq!(j["experiments"][0]["status"], "pending");
        assert_eq!(j["summary"]["overall"]["within"], 2);
        assert_eq!(j["summary"]["overall"]["worst_cell"], "e: b");
    }
}
