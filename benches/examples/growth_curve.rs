//! The growable filter's space and false positive rate along its whole growth, as plots.
//!
//! ```text
//! cargo run --release -p ccf-benches --example growth_curve -- docs/growth
//! ```
//!
//! From a first capacity of 10,000 and for ε = 1% and 0.1%, a `GrowableCuckooFilter` is filled
//! one key at a time to 1000 times that; at 64 growth factors spaced evenly on a log scale, its
//! bits per item are divided by those of a `ConcurrentCuckooFilter` sized for the same items and
//! ε, and its false positive rate, measured on 200,000 absent keys, by ε. Writes
//! `growth_space.png`, `growth_rate.png` and `growth_curve.csv` into the directory given.

use ccf_benches::plot::{draw, register_font, Plot, Series};
use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, GrowableCuckooFilter};
use plotters::prelude::SeriesLabelPosition;
use std::error::Error;
use std::fmt::Write as _;
use std::path::PathBuf;

const FIRST: usize = 10_000;
const POINTS: u32 = 64;
const ABSENT: u64 = 200_000;

/// One measured point: growth factor, bits per item ÷ the sized filter's, rate ÷ ε.
#[derive(Debug, Clone, Copy)]
struct Point {
    growth: f64,
    space_ratio: f64,
    rate_ratio: f64,
}

fn curve(rate: f64) -> Result<Vec<Point>, Box<dyn Error>> {
    let filter = GrowableCuckooFilter::builder()
        .capacity(FIRST)
        .false_positive_rate(rate)
        .build()?;
    let mut stored = 0u64;
    let mut points = Vec::new();
    for step in 0..=POINTS {
        let growth = 1000f64.powf(f64::from(step) / f64::from(POINTS));
        let target = (growth * FIRST as f64).round() as u64;
        while stored < target {
            filter.insert(&stored)?;
            stored += 1;
        }
        let sized = ConcurrentCuckooFilter::builder()
            .capacity(stored as usize)
            .false_positive_rate(rate)
            .build()?;
        let bits = |memory: usize| memory as f64 * 8.0 / stored as f64;
        // Absent keys: every stored key is below 2^40.
        let hits = (0..ABSENT)
            .filter(|i| filter.contains(&(i | 1 << 50)))
            .count();
        points.push(Point {
            growth,
            space_ratio: bits(filter.memory_usage()) / bits(sized.memory_usage()),
            rate_ratio: hits as f64 / ABSENT as f64 / rate,
        });
    }
    Ok(points)
}

fn main() -> Result<(), Box<dyn Error>> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "docs/growth".into()),
    );
    std::fs::create_dir_all(&dir)?;
    register_font()?;
    let rates = [0.01, 0.001];
    let curves: Vec<(f64, Vec<Point>)> = rates
        .iter()
        .map(|&rate| curve(rate).map(|points| (rate, points)))
        .collect::<Result<_, _>>()?;

    let mut csv =
        String::from("rate,growth,bits_per_item_over_sized,false_positive_rate_over_rate\n");
    for (rate, points) in &curves {
        for p in points {
            writeln!(
                csv,
                "{rate},{:.4},{:.4},{:.4}",
                p.growth, p.space_ratio, p.rate_ratio
            )?;
        }
    }
    std::fs::write(dir.join("growth_curve.csv"), csv)?;

    let series = |value: fn(&Point) -> f64, bound: (&str, f64)| {
        let mut series: Vec<Series> = curves
            .iter()
            .map(|(rate, points)| Series {
                name: format!("ε = {}%", rate * 100.0),
                points: points.iter().map(|p| (p.growth, value(p))).collect(),
            })
            .collect();
        series.push(Series {
            name: bound.0.into(),
            points: vec![(1.0, bound.1), (1000.0, bound.1)],
        });
        series
    };
    let caption = "cargo run --release -p ccf-benches --example growth_curve -- docs/growth \
                   (first capacity 10,000, one key at a time)";
    let mut space = Plot::new(
        "growth_space.png",
        "Growable filter: bits per item ÷ a filter sized for the same items",
        "growth (items ÷ first capacity), log scale",
        "bits per item ÷ sized",
    )
    .series(series(|p| p.space_ratio, ("1.5×", 1.5)));
    space.log_x = true;
    space.legend = SeriesLabelPosition::UpperRight;
    draw(&space, &dir, caption)?;
    let mut rate = Plot::new(
        "growth_rate.png",
        "Growable filter: measured false positive rate ÷ ε",
        "growth (items ÷ first capacity), log scale",
        "false positive rate ÷ ε",
    )
    .series(series(|p| p.rate_ratio, ("ε / 4", 0.25)));
    rate.log_x = true;
    rate.y_range = Some((0.0, 1.0));
    rate.legend = SeriesLabelPosition::UpperLeft;
    draw(&rate, &dir, caption)?;
    for (rate, points) in &curves {
        let worst = points.iter().map(|p| p.space_ratio).fold(0.0, f64::max);
        let best = points
            .iter()
            .map(|p| p.space_ratio)
            .fold(f64::INFINITY, f64::min);
        println!("ε = {rate}: bits per item ÷ sized from {best:.2} to {worst:.2}");
    }
    Ok(())
}
