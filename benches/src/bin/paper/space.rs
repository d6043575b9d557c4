//! Figure 2 with the article's Table 2, Figures 3 and 4: load factor, space and false positive
//! rate of this crate's filter across bucket sizes and fingerprint widths.

use ccf_benches::keys::{key, ABSENT};
use ccf_benches::measure::median;
use ccf_benches::plot::{Plot, Series};
use ccf_benches::report::{Report, Res};
use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, ConcurrentCuckooFilterBuilder};
use plotters::prelude::SeriesLabelPosition;
use rayon::prelude::*;
use std::fmt::Write as _;

/// Fills `builder`'s filter with keys `base, base + 1, ...` to the first failure.
fn fill_to_failure(builder: ConcurrentCuckooFilterBuilder, base: u64) -> ConcurrentCuckooFilter {
    let filter = builder.build().expect("a valid configuration");
    let mut i = base;
    while filter.insert(&key(i)).is_ok() {
        i += 1;
    }
    filter
}

/// Table bits per item: the paper's space cost `f / α` (semi-sorted: `(f − 1) / α`).
fn table_bits_per_item(filter: &ConcurrentCuckooFilter) -> f64 {
    let stored = filter.fingerprint_bits() - u32::from(filter.is_semi_sorted());
    stored as f64 * (filter.bucket_count() * filter.bucket_size()) as f64 / filter.len() as f64
}

/// Capacity that gives about `buckets` buckets of `b` slots.
fn capacity_for_buckets(buckets: usize, b: usize) -> usize {
    let load = match b {
        2 => 0.84,
        4 => 0.95,
        _ => 0.97,
    };
    (buckets as f64 * b as f64 * load) as usize
}

/// Bucket counts of Figure 2 (log2); the paper went from 2^15 to 2^30.
const FIG2_LOG_BUCKETS: [u32; 3] = [10, 12, 14];
/// Figure 2 takes the minimum of this many runs.
pub const FIG2_RUNS: u64 = 10;

/// `(b, log2 m, f, load factors of the runs)`.
type LoadPoint = (usize, u32, u32, Vec<f64>);

fn figure2() -> Vec<LoadPoint> {
    let mut jobs = Vec::new();
    for b in [4usize, 8] {
        for log_m in FIG2_LOG_BUCKETS {
            for f in 4..=20u32 {
                jobs.push((b, log_m, f));
            }
        }
    }
    jobs.into_par_iter()
        .map(|(b, log_m, f)| {
            let loads = (0..FIG2_RUNS)
                .map(|run| {
                    let builder = ConcurrentCuckooFilter::builder()
                        .capacity(capacity_for_buckets(1 << log_m, b))
                        .bucket_size(b)
                        .fingerprint_bits(f);
                    fill_to_failure(builder, run << 40).load_factor()
                })
                .collect();
            (b, log_m, f, loads)
        })
        .collect()
}

/// `(b, f, median measured false positive rate, median table bits per item)`.
type SpacePoint = (usize, u32, f64, f64);

fn figure3(runs: usize) -> Vec<SpacePoint> {
    let mut jobs = Vec::new();
    for b in [2usize, 4, 8] {
        for f in 4..=20u32 {
            jobs.push((b, f));
        }
    }
    jobs.into_par_iter()
        .map(|(b, f)| {
            let expected = 2.0 * b as f64 / (1u64 << f) as f64;
            let queries = ((400.0 / expected) as usize).clamp(1 << 18, 1 << 21);
            let (mut rates, mut bits): (Vec<f64>, Vec<f64>) = (0..runs as u64)
                .map(|run| {
                    let builder = ConcurrentCuckooFilter::builder()
                        .capacity(capacity_for_buckets((1 << 18) / b, b))
                        .bucket_size(b)
                        .fingerprint_bits(f);
                    let filter = fill_to_failure(builder, run << 40);
                    let false_positives = (0..queries as u64)
                        .filter(|&i| filter.contains(&key(ABSENT | run << 40 | i)))
                        .count();
                    (
                        false_positives as f64 / queries as f64,
                        table_bits_per_item(&filter),
                    )
                })
                .unzip();
            (b, f, median(&mut rates), median(&mut bits))
        })
        .collect()
}

/// `(target ε, bits per item plain, bits per item semi-sorted)`, each filled to the first
/// failure and sized by the builder's `false_positive_rate` with 4-slot buckets.
fn figure4(runs: usize) -> Vec<(f64, f64, f64)> {
    let targets: Vec<f64> = (0..=16)
        .map(|k| 10f64.powf(-5.0 + 0.25 * k as f64))
        .collect();
    targets
        .into_par_iter()
        .map(|eps| {
            let bits = |semi_sorted: bool| {
                let mut values: Vec<f64> = (0..runs as u64)
                    .map(|run| {
                        let builder = ConcurrentCuckooFilter::builder()
                            .capacity(capacity_for_buckets(1 << 16, 4))
                            .bucket_size(4)
                            .semi_sorted(semi_sorted)
                            .false_positive_rate(eps);
                        table_bits_per_item(&fill_to_failure(builder, run << 40))
                    })
                    .collect();
                median(&mut values)
            };
            (eps, bits(false), bits(true))
        })
        .collect()
}

/// Figure 2 and the article's Table 2.
pub fn report_figure2(report: &mut Report) -> Res<()> {
    let fig2 = figure2();
    let largest = FIG2_LOG_BUCKETS[FIG2_LOG_BUCKETS.len() - 1];
    let min = |loads: &[f64]| loads.iter().copied().fold(f64::INFINITY, f64::min);
    let mut t = String::new();
    writeln!(t, "## Table 2 (article) and Figure 2: load factor at the first failed insert, 2^{largest} buckets, {FIG2_RUNS} runs\n")?;
    writeln!(
        t,
        "| f (bits) | b = 4: min | b = 4: mean | b = 8: min | b = 8: mean |"
    )?;
    writeln!(t, "|---|---|---|---|---|")?;
    let stats = |b: usize, f: u32| {
        let loads = &fig2
            .iter()
            .find(|p| p.0 == b && p.1 == largest && p.2 == f)
            .unwrap()
            .3;
        (
            min(loads) * 100.0,
            loads.iter().sum::<f64>() / loads.len() as f64 * 100.0,
        )
    };
    for f in 4..=20 {
        let ((min4, mean4), (min8, mean8)) = (stats(4, f), stats(8, f));
        writeln!(
            t,
            "| {f} | {min4:.2}% | {mean4:.2}% | {min8:.2}% | {mean8:.2}% |"
        )?;
    }
    report.table("table2.md", &t)?;
    let rows: Vec<String> = fig2
        .iter()
        .map(|(b, log_m, f, loads)| format!("{b},{log_m},{f},{:.5}", min(loads)))
        .collect();
    report.csv(
        "fig2.csv",
        "bucket_size,log2_buckets,fingerprint_bits,min_load_factor",
        &rows,
    )?;
    for b in [4usize, 8] {
        let series = FIG2_LOG_BUCKETS
            .iter()
            .map(|&log_m| Series {
                name: format!("m = 2^{log_m}"),
                points: fig2
                    .iter()
                    .filter(|p| p.0 == b && p.1 == log_m)
                    .map(|p| (p.2 as f64, min(&p.3)))
                    .collect(),
            })
            .collect();
        let title = format!("Figure 2: load factor at the first failure, b = {b}");
        let mut plot = Plot::new(
            format!("fig2_load_factor_b{b}.png"),
            title,
            "f: fingerprint bits",
            "α: load factor",
        )
        .series(series);
        plot.y_range = Some((0.0, 1.05));
        plot.legend = SeriesLabelPosition::LowerRight;
        let runs = format!("minimum of {FIG2_RUNS} runs");
        report.plot(&plot, &format!("m buckets of {b} slots"), Some(&runs))?;
    }
    Ok(())
}

pub fn report_figure3(report: &mut Report, runs: usize) -> Res<()> {
    let fig3 = figure3(runs);
    let rows: Vec<String> = fig3
        .iter()
        .map(|(b, f, e, c)| format!("{b},{f},{e:.8},{c:.4}"))
        .collect();
    report.csv(
        "fig3.csv",
        "bucket_size,fingerprint_bits,false_positive_rate,bits_per_item",
        &rows,
    )?;
    let series = [2usize, 4, 8]
        .iter()
        .map(|&b| Series {
            name: format!("b = {b}"),
            points: fig3
                .iter()
                .filter(|p| p.0 == b && p.2 > 0.0)
                .map(|p| (p.2, p.3))
                .collect(),
        })
        .collect();
    let mut plot = Plot::new(
        "fig3_bits_vs_false_positive_rate.png",
        "Figure 3: space cost against measured false positive rate",
        "ε: measured false positive rate",
        "table bits per item",
    )
    .series(series);
    plot.log_x = true;
    report.plot(
        &plot,
        "2^18 slots, f = 4 to 20, filled to the first failure",
        None,
    )
}

pub fn report_figure4(report: &mut Report, runs: usize) -> Res<()> {
    let fig4 = figure4(runs);
    let bloom = |e: f64| 1.44 * (1.0 / e).log2();
    let bound = |e: f64| (1.0 / e).log2();
    let rows: Vec<String> = fig4
        .iter()
        .map(|&(e, cf, ss)| format!("{e:.8},{cf:.4},{ss:.4},{:.4},{:.4}", bloom(e), bound(e)))
        .collect();
    report.csv("fig4.csv", "target_false_positive_rate,cf_bits_per_item,ss_cf_bits_per_item,bloom_bits_per_item,lower_bound", &rows)?;
    let line = |name: &str, y: &dyn Fn(&(f64, f64, f64)) -> f64| Series {
        name: name.to_string(),
        points: fig4.iter().map(|p| (p.0, y(p))).collect(),
    };
    let series = vec![
        line("BF", &|p| bloom(p.0)),
        line("CF", &|p| p.1),
        line("ss-CF", &|p| p.2),
        line("lower bound log2(1/ε)", &|p| bound(p.0)),
    ];
    let mut plot = Plot::new(
        "fig4_bits_vs_target_fpr.png",
        "Figure 4: bits per item to reach a target false positive rate",
        "ε: target false positive rate",
        "bits per item",
    )
    .series(series);
    plot.log_x = true;
    report.plot(
        &plot,
        "CF, ss-CF: 2^16 buckets of 4 filled to the first failure; BF: 1.44·log2(1/ε)",
        None,
    )
}
