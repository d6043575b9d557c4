//! PNG line plots with one color per filter, the same in every plot.

use plotters::prelude::*;
use std::error::Error;
use std::path::Path;

/// Registers the bundled DejaVu Sans as the plots' `sans-serif`, so the plots look the same on
/// every machine.
///
/// # Errors
///
/// When the font does not load.
pub fn register_font() -> Result<(), Box<dyn Error>> {
    plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
        .map_err(|_| "the bundled DejaVu Sans font did not load".into())
}

/// One line of a plot.
#[derive(Debug)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A line plot, drawn by [`draw`].
pub struct Plot {
    pub file: String,
    pub title: String,
    pub x_desc: &'static str,
    pub y_desc: &'static str,
    /// Plot x on a log10 scale.
    pub log_x: bool,
    /// Fixed y range, else from 0 to the largest value.
    pub y_range: Option<(f64, f64)>,
    pub legend: SeriesLabelPosition,
    /// Tick only whole x values (thread counts).
    pub whole_x: bool,
    pub series: Vec<Series>,
}

impl Plot {
    pub fn new(
        file: impl Into<String>,
        title: impl Into<String>,
        x_desc: &'static str,
        y_desc: &'static str,
    ) -> Self {
        Self {
            file: file.into(),
            title: title.into(),
            x_desc,
            y_desc,
            log_x: false,
            y_range: None,
            legend: SeriesLabelPosition::UpperRight,
            whole_x: false,
            series: Vec::new(),
        }
    }

    pub fn series(mut self, series: Vec<Series>) -> Self {
        self.series = series;
        self
    }
}

/// A color per filter name, the same in every plot.
fn color(name: &str, index: usize) -> RGBColor {
    const NAMED: [(&str, RGBColor); 17] = [
        ("lower bound log2(1/ε)", RGBColor(0, 0, 0)),
        ("ours-1.5x", RGBColor(255, 152, 150)),
        ("CF", RGBColor(214, 39, 40)),
        ("ours", RGBColor(214, 39, 40)),
        ("ss-CF", RGBColor(255, 127, 14)),
        ("BF", RGBColor(31, 119, 180)),
        ("BF (fastbloom)", RGBColor(23, 190, 207)),
        ("blk-BF", RGBColor(44, 160, 44)),
        ("QF", RGBColor(148, 103, 189)),
        ("dl-CBF", RGBColor(140, 86, 75)),
        ("atomic-cuckoo-filter", RGBColor(227, 119, 194)),
        ("cuckoofilter", RGBColor(127, 127, 127)),
        ("cuckoofilter+Mutex", RGBColor(127, 127, 127)),
        ("expiring-atomic-filter", RGBColor(148, 103, 189)),
        ("cuckoo-clock", RGBColor(255, 127, 14)),
        ("rotating-bloom-filter", RGBColor(44, 160, 44)),
        ("probabilistic-rs", RGBColor(31, 119, 180)),
    ];
    const OTHERS: [RGBColor; 6] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(188, 189, 34),
    ];
    match name {
        "cuckoofilter+RwLock" => RGBColor(188, 189, 34),
        _ => NAMED
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(OTHERS[index % OTHERS.len()], |(_, c)| *c),
    }
}

/// A tick label without trailing zeros.
fn trim(v: f64) -> String {
    let text = format!("{v:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Draws `plot` into `dir` as a 960×600 PNG with `caption` under it.
///
/// # Errors
///
/// When the file cannot be written.
pub fn draw(plot: &Plot, dir: &Path, caption: &str) -> Result<(), Box<dyn Error>> {
    let path = dir.join(&plot.file);
    let root = BitMapBackend::new(&path, (960, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let (main, foot) = root.split_vertically(570);
    foot.draw(&Text::new(
        caption.to_string(),
        (12, 6),
        ("sans-serif", 15).into_font().color(&RGBColor(80, 80, 80)),
    ))?;
    let tx = |x: f64| if plot.log_x { x.log10() } else { x };
    let points = plot.series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0f64);
    for &(x, y) in points {
        x0 = x0.min(tx(x));
        x1 = x1.max(tx(x));
        y1 = y1.max(y);
    }
    if !x0.is_finite() {
        return Ok(());
    }
    let pad = ((x1 - x0) * 0.03).max(1e-9);
    let (y0, y1) = plot.y_range.unwrap_or((0.0, y1 * 1.12 + 1e-9));
    let mut chart = ChartBuilder::on(&main)
        .caption(&plot.title, ("sans-serif", 24))
        .margin(14)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d(x0 - pad..x1 + pad, y0..y1)?;
    let x_label = |v: &f64| match plot.log_x {
        true if (v - v.round()).abs() < 1e-9 => format!("1e{}", v.round()),
        true => String::new(),
        false if plot.whole_x && (v - v.round()).abs() > 1e-9 => String::new(),
        false => trim(*v),
    };
    let y_label = |v: &f64| trim(*v);
    chart
        .configure_mesh()
        .x_desc(plot.x_desc)
        .y_desc(plot.y_desc)
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label)
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()?;
    for (i, series) in plot.series.iter().enumerate() {
        let c = color(&series.name, i);
        let pts: Vec<(f64, f64)> = series.points.iter().map(|&(x, y)| (tx(x), y)).collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))?
            .label(series.name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 22, y)], c.stroke_width(3)));
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, c.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(plot.legend.clone())
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(160, 160, 160))
        .label_font(("sans-serif", 15))
        .draw()?;
    root.present()?;
    Ok(())
}
