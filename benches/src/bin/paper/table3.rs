//! Table 3 and Figures 5–8: every filter of the paper's Table 3 given the same memory, each
//! configured as in the paper.

use crate::run::{measure, Budgeted, Row, Run};
use ccf_benches::dlcbf::DlCbf;
use ccf_benches::peers::{items_for_bits, items_for_mib, Blocked, Cuckoofilter, Peer, SemiSorted};
use ccf_benches::peers::{BLOOM_BITS_PER_ITEM, QF_REMAINDER_BITS};
use ccf_benches::plot::{Plot, Series};
use ccf_benches::report::{Report, Res};
use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
use std::cell::RefCell;
use std::fmt::Write as _;

/// The largest power of two at most `n`.
fn floor_pow2(n: usize) -> usize {
    1 << (usize::BITS - 1 - n.leading_zeros())
}

/// A filter that can fail an insert, filled to its first failure; its occupancy counts
/// against its slot count.
fn to_failure<F>(filter: F, slots: usize) -> Budgeted<F> {
    Budgeted {
        filter,
        nominal: slots,
        stop: usize::MAX,
    }
}

/// A Bloom filter for `items` items: filled to them.
fn to_target<F: Peer>(items: usize) -> Budgeted<F> {
    Budgeted {
        filter: F::with_capacity(items),
        nominal: items,
        stop: items,
    }
}

/// CF: this crate's 12-bit filter in `mib` MiB; ss-CF (`semi_sorted`): 13-bit fingerprints
/// stored in 12 bits, the same memory.
fn cuckoo(mib: usize, semi_sorted: bool) -> Budgeted<ConcurrentCuckooFilter> {
    let items = items_for_mib(mib);
    let filter = match semi_sorted {
        true => SemiSorted::with_capacity(items).0,
        false => ConcurrentCuckooFilter::with_capacity(items),
    };
    let slots = filter.bucket_count() * filter.bucket_size();
    to_failure(filter, slots)
}

fn bloom(mib: usize) -> Budgeted<RefCell<bloomfilter::Bloom<u64>>> {
    to_target(items_for_bits(mib, BLOOM_BITS_PER_ITEM as f64))
}

fn fast_bloom(mib: usize) -> Budgeted<RefCell<fastbloom::BloomFilter>> {
    to_target(items_for_bits(mib, BLOOM_BITS_PER_ITEM as f64))
}

fn blocked_bloom(mib: usize) -> Budgeted<RefCell<Blocked>> {
    to_target(items_for_bits(mib, BLOOM_BITS_PER_ITEM as f64))
}

/// QF: the largest power-of-two slot count that fits `mib` MiB, filled to 90%.
fn quotient(mib: usize) -> Budgeted<RefCell<qfilter::Filter>> {
    // About `r + 2.125` bits per slot: the remainder, 2 metadata bits and the block offsets.
    let slots = floor_pow2(items_for_bits(mib, f64::from(QF_REMAINDER_BITS) + 2.125));
    Budgeted {
        filter: Peer::with_capacity(slots * 9 / 10),
        nominal: slots,
        stop: slots * 9 / 10,
    }
}

/// dl-CBF: as many 12-bit cells as the CF of `mib` MiB has slots (the same memory).
fn d_left(mib: usize) -> Budgeted<RefCell<DlCbf>> {
    let filter: RefCell<DlCbf> = Peer::with_capacity(items_for_bits(mib, 12.0));
    let cells = filter.borrow().cell_count();
    to_failure(filter, cells)
}

/// The largest power-of-two table of 16-bit fingerprints that fits `mib` MiB.
fn atomic_cuckoo(mib: usize) -> Budgeted<atomic_cuckoo_filter::CuckooFilter> {
    let slots = floor_pow2(items_for_bits(mib, 16.0));
    to_failure(Peer::with_capacity(slots), slots)
}

/// The largest power-of-two table of 8-bit fingerprints that fits `mib` MiB.
fn cuckoofilter_crate(mib: usize) -> Budgeted<RefCell<Cuckoofilter>> {
    let slots = floor_pow2(items_for_bits(mib, 8.0));
    to_failure(Peer::with_capacity(slots), slots)
}

/// Every filter of Table 3. A row for a new variant of this crate's filter is one more line.
fn table3_rows(mib: usize, runs: usize) -> Vec<Row> {
    vec![
        measure("CF", "this crate, 12-bit", || cuckoo(mib, false), runs),
        measure(
            "ss-CF",
            "this crate, semi-sorted, 13-bit",
            || cuckoo(mib, true),
            runs,
        ),
        measure("BF", "`bloomfilter`, k = 9", || bloom(mib), runs),
        measure(
            "BF (fastbloom)",
            "`fastbloom`, k = 9",
            || fast_bloom(mib),
            runs,
        ),
        measure(
            "blk-BF",
            "`sbbf-rs-safe`, 256-bit blocks",
            || blocked_bloom(mib),
            runs,
        ),
        measure(
            "QF",
            "`qfilter`, 9-bit remainders, 90% full",
            || quotient(mib),
            runs,
        ),
        measure(
            "dl-CBF",
            "`ccf-benches`, d = 4, 12-bit cells",
            || d_left(mib),
            runs,
        ),
        measure(
            "atomic-cuckoo-filter",
            "16-bit, power-of-two table",
            || atomic_cuckoo(mib),
            runs,
        ),
        measure(
            "cuckoofilter",
            "8-bit, power-of-two table",
            || cuckoofilter_crate(mib),
            runs,
        ),
    ]
}

type Curve = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    fn(&Run) -> &Vec<(f64, f64)>,
);

fn curve_csv(rows: &[Row], curve: fn(&Run) -> &Vec<(f64, f64)>) -> Vec<String> {
    rows.iter()
        .flat_map(|row| {
            curve(&row.run)
                .iter()
                .map(move |(x, y)| format!("{},{x:.4},{y:.3}", row.name))
        })
        .collect()
}

fn curve_series(rows: &[Row], curve: fn(&Run) -> &Vec<(f64, f64)>) -> Vec<Series> {
    rows.iter()
        .filter(|row| !curve(&row.run).is_empty())
        .map(|row| Series {
            name: row.name.to_string(),
            points: curve(&row.run).clone(),
        })
        .collect()
}

/// Table 3 and Figures 5–8 of the filters of `mib` MiB, each the median of `runs` runs.
pub fn report(report: &mut Report, mib: usize, runs: usize) -> Res<()> {
    let rows = &table3_rows(mib, runs);
    let mut t = String::new();
    writeln!(
        t,
        "## Table 3: space efficiency and construction speed ({mib} MiB filters)\n"
    )?;
    writeln!(t, "| filter | configuration | memory (MiB) | items (million) | bits per item | false positive rate | construction (million keys/s) | lookups p = 0 / 1 (million/s) |")?;
    writeln!(t, "|---|---|---|---|---|---|---|---|")?;
    let mut csv = Vec::new();
    for row in rows {
        let r = &row.run;
        let share = |p: f64| {
            r.lookup_by_share
                .iter()
                .find(|(s, _)| *s == p)
                .map_or(0.0, |x| x.1)
        };
        writeln!(
            t,
            "| {} | {} | {:.2} | {:.2} | {:.2} | {:.3}% | {:.2} | {:.2} / {:.2} |",
            row.name,
            row.what,
            r.memory / (1 << 20) as f64,
            r.items / 1e6,
            r.bits_per_item,
            r.false_positive_rate * 100.0,
            r.construction,
            share(0.0),
            share(1.0)
        )?;
        csv.push(format!(
            "{},{},{:.0},{:.0},{:.4},{:.6},{:.4}",
            row.name,
            row.what.replace(',', ";"),
            r.memory,
            r.items,
            r.bits_per_item,
            r.false_positive_rate,
            r.construction
        ));
    }
    report.table("table3.md", &t)?;
    report.csv(
        "table3.csv",
        "filter,configuration,memory_bytes,items,bits_per_item,false_positive_rate,construction_mops",
        &csv,
    )?;

    let size = format!("{mib} MiB filters");
    let curves: [Curve; 5] = [
        (
            "fig5",
            "lookup_vs_positive_share",
            "Figure 5: lookup throughput when full",
            "p: share of queries on inserted items",
            "lookups (million/s)",
            |r| &r.lookup_by_share,
        ),
        (
            "fig6a",
            "negative_lookup_vs_occupancy",
            "Figure 6a: lookups of never-inserted keys",
            "α: table occupancy",
            "lookups (million/s)",
            |r| &r.negative_by_load,
        ),
        (
            "fig6b",
            "positive_lookup_vs_occupancy",
            "Figure 6b: lookups of inserted keys",
            "α: table occupancy",
            "lookups (million/s)",
            |r| &r.positive_by_load,
        ),
        (
            "fig7",
            "insert_vs_occupancy",
            "Figure 7: insert throughput",
            "α: table occupancy",
            "inserts (million/s)",
            |r| &r.insert_by_load,
        ),
        (
            "fig8",
            "delete_vs_occupancy",
            "Figure 8: delete-until-empty throughput",
            "α: table occupancy before the step",
            "deletes (million/s)",
            |r| &r.delete_by_load,
        ),
    ];
    for (id, file, title, x_desc, y_desc, curve) in curves {
        let x = if id == "fig5" { "p" } else { "occupancy" };
        report.csv(
            &format!("{id}.csv"),
            &format!("filter,{x},mops"),
            &curve_csv(rows, curve),
        )?;
        let plot = Plot::new(format!("{id}_{file}.png"), title, x_desc, y_desc)
            .series(curve_series(rows, curve));
        report.plot(&plot, &size, None)?;
    }
    Ok(())
}
