//! One SVG figure per experiment: for each metric a panel with, per cell,
//! the published value (black ring) with its tolerance band, and the
//! simulated value (filled dot: blue within tolerance, red outside).

use std::path::{Path, PathBuf};

use plotters::coord::ranged1d::{IntoSegmentedCoord, SegmentValue};
use plotters::prelude::*;

use crate::runner::{CellResult, ExperimentResult};

const PANEL_HEIGHT: u32 = 320;
const WIDTH: u32 = 900;

/// Write `DIR/NAME.svg` for each result; returns the files written.
pub fn write_figures(results: &[ExperimentResult], dir: &Path) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("--plot {}: {e}", dir.display()))?;
    let mut written = Vec::new();
    for r in results {
        let path = dir.join(format!("{}.svg", r.name));
        figure(r, &path).map_err(|e| format!("{}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

fn figure(r: &ExperimentResult, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    // One panel per metric and unit.
    let mut metrics: Vec<(&str, f64)> = Vec::new();
    for c in &r.cells {
        if !metrics.contains(&(c.metric.as_str(), c.scale)) {
            metrics.push((&c.metric, c.scale));
        }
    }
    let in_panel = |c: &CellResult, m: &(&str, f64)| c.metric == m.0 && c.scale == m.1;
    // Labels that do not fit under their point become numbers, with a key below the panels.
    let most = metrics.iter().map(|m| r.cells.iter().filter(|c| in_panel(c, m)).count()).max().unwrap_or(1);
    let longest = r.cells.iter().map(|c| c.label.len()).max().unwrap_or(0);
    let numbered = longest as u32 * 7 > (WIDTH - 120) / most as u32;
    let key_lines = if numbered { most as u32 } else { 0 };
    let height = 40 + PANEL_HEIGHT * metrics.len() as u32 + 18 * key_lines + if numbered { 16 } else { 0 };
    let root = SVGBackend::new(path, (WIDTH, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let title = format!("{} [{}]: published (ring, ±tolerance) vs simulated (dot)", r.name, r.status.as_str());
    let root = root.titled(&title, ("sans-serif", 18))?;
    let (plots, key) = root.split_vertically(PANEL_HEIGHT * metrics.len() as u32);
    let panels = plots.split_evenly((metrics.len(), 1));
    for (panel, m) in panels.iter().zip(&metrics) {
        let cells: Vec<&CellResult> = r.cells.iter().filter(|c| in_panel(c, m)).collect();
        let axis = if m.1 == 1.0 { m.0.to_string() } else { format!("{} × {:e}", m.0, m.1) };
        draw_panel(panel, &axis, &cells, numbered)?;
    }
    if numbered {
        // The numbers are positions within a panel: the key lists the fullest panel's cells.
        let fullest =
            metrics.iter().max_by_key(|m| r.cells.iter().filter(|c| in_panel(c, m)).count()).expect("a panel");
        let labels: Vec<&str> = r.cells.iter().filter(|c| in_panel(c, fullest)).map(|c| c.label.as_str()).collect();
        for (i, l) in labels.iter().enumerate() {
            key.draw(&Text::new(format!("#{}: {l}", i + 1), (90, 8 + 18 * i as i32), ("sans-serif", 13)))?;
        }
    }
    root.present()?;
    Ok(())
}

/// Axis numbers without float noise: 73000, 1.5, 0.25.
fn tick(v: &f64) -> String {
    if v.abs() >= 1000.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    metric: &str,
    cells: &[&CellResult],
    numbered: bool,
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    let n = cells.len() as u32;
    let top = cells
        .iter()
        .map(|c| (c.published.abs() * (1.0 + c.tolerance)).max(c.simulated.unwrap_or(0.0).abs()))
        .fold(0.0, f64::max)
        * 1.1;
    let top = if top > 0.0 { top } else { 1.0 };
    let labels: Vec<String> =
        cells.iter().enumerate().map(|(i, c)| if numbered { format!("#{}", i + 1) } else { c.label.clone() }).collect();
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .x_label_area_size(30)
        .y_label_area_size(80)
        .build_cartesian_2d((0..n).into_segmented(), 0f64..top)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_desc(metric)
        .y_label_formatter(&tick)
        .x_labels(n as usize + 1)
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => labels.get(*i as usize).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .draw()?;
    let at = |i: usize| SegmentValue::CenterOf(i as u32);
    // A text beside a point, offset in pixels so the marker does not hide it.
    let note = |at: (SegmentValue<u32>, f64), text: String, color: RGBColor| {
        EmptyElement::at(at) + Text::new(text, (10, -16), ("sans-serif", 13).into_font().color(&color))
    };
    for (i, c) in cells.iter().enumerate() {
        let lo = c.published * (1.0 - c.tolerance);
        let hi = c.published * (1.0 + c.tolerance);
        chart.draw_series(LineSeries::new([(at(i), lo), (at(i), hi)], BLACK.mix(0.35).stroke_width(6)))?;
        chart.draw_series(std::iter::once(Circle::new((at(i), c.published), 6, BLACK.stroke_width(2))))?;
        match c.simulated {
            Some(s) => {
                let color = if c.within == Some(true) { BLUE } else { RED };
                chart.draw_series(std::iter::once(Circle::new((at(i), s), 5, color.filled())))?;
                let err = c.error.map(|e| format!("{:+.1}%", e * 100.0)).unwrap_or_default();
                chart.draw_series(std::iter::once(note((at(i), s), err, color)))?;
            }
            None => {
                chart.draw_series(std::iter::once(note(
                    (at(i), c.published),
                    "pending".into(),
                    RGBColor(110, 110, 110),
                )))?;
            }
        }
    }
    Ok(())
}

/// One line of a sweep figure: its label (the other axes' values) and a value per first-axis value
/// (`None` where the point failed).
pub struct SweepLine {
    pub label: String,
    pub values: Vec<Option<f64>>,
}

/// `blksim sweep --plot`: `metric` against the first axis (`x_name`, its values `x_values` as
/// categories in the spec's order), one line per value of the other axes, as an SVG at `path`.
pub fn write_sweep_figure(
    path: &Path,
    title: &str,
    x_name: &str,
    x_values: &[String],
    metric: &str,
    lines: &[SweepLine],
) -> Result<(), String> {
    sweep_figure(path, title, x_name, x_values, metric, lines).map_err(|e| format!("{}: {e}", path.display()))
}

fn sweep_figure(
    path: &Path,
    title: &str,
    x_name: &str,
    x_values: &[String],
    metric: &str,
    lines: &[SweepLine],
) -> Result<(), Box<dyn std::error::Error>> {
    let n = x_values.len().max(1) as u32;
    let top = lines.iter().flat_map(|l| l.values.iter().flatten()).fold(0.0f64, |a, &v| a.max(v)) * 1.1;
    let top = if top > 0.0 { top } else { 1.0 };
    let root = SVGBackend::new(path, (WIDTH, 520)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 18))?;
    let mut chart = ChartBuilder::on(&root)
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(90)
        .build_cartesian_2d((0..n).into_segmented(), 0f64..top)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc(x_name)
        .y_desc(metric)
        .y_label_formatter(&tick)
        .x_labels(n as usize + 1)
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => x_values.get(*i as usize).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .draw()?;
    for (k, line) in lines.iter().enumerate() {
        let color = Palette99::pick(k).to_rgba();
        // A failed point breaks the line: each run of values is drawn on its own.
        let points: Vec<Option<(SegmentValue<u32>, f64)>> =
            line.values.iter().enumerate().map(|(i, v)| v.map(|v| (SegmentValue::CenterOf(i as u32), v))).collect();
        for run in points.split(Option::is_none) {
            let run: Vec<(SegmentValue<u32>, f64)> = run.iter().flatten().cloned().collect();
            chart.draw_series(LineSeries::new(run, color.stroke_width(2)))?;
        }
        let series =
            chart.draw_series(points.iter().flatten().map(|(x, y)| Circle::new((x.clone(), *y), 4, color.filled())))?;
        if !line.label.is_empty() {
            series
                .label(line.label.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
        }
    }
    if lines.iter().any(|l| !l.label.is_empty()) {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .position(SeriesLabelPosition::UpperRight)
            .draw()?;
    }
    root.present()?;
    Ok(())
}
