//! Reproduces the evaluation of "Cuckoo Filter: Practically Better Than Bloom" (Fan, Andersen,
//! Kaminsky, Mitzenmacher, CoNEXT 2014): Table 3, Figures 2 to 8 and the article's Table 2, plus
//! a figure the paper does not have: throughput against threads for mixed workloads, this crate
//! against the concurrent Rust peers.
//!
//! ```text
//! cargo run --release --example paper -- --out DIR [--mb N] [--threads T] [--runs R]
//!     [--only table3,fig2,fig3,fig4,threads]
//! ```
//!
//! Writes Markdown tables (`DIR/results.md` has them all, with the plots), CSV files and PNG
//! plots into DIR, and prints the tables. `--mb` is the memory of each filter of Table 3 and
//! Figures 5–8 (default 8; the paper used 192), `--threads` the largest thread count of the
//! mixed-workload figure (default: every core), `--runs` how many times each measurement is
//! repeated (default 3); every number is the median of the runs. `--only` runs some parts (Table
//! 3 with Figures 5–8, Figure 2 with Table 2, Figures 3 and 4, the thread figure). The default
//! scale takes 2 to 3.5 minutes on this shared 2-core machine.
//!
//! The filters of Table 3, each given at most `--mb` MiB, configured as in the paper:
//!
//! - CF: this crate, 12-bit fingerprints, 4-slot buckets, filled to its first failed insert.
//! - ss-CF: this crate, semi-sorted 4-slot buckets, 13-bit fingerprints stored in 12 bits.
//! - BF: standard Bloom filters (`bloomfilter`, `fastbloom`) at 13 bits per item, the best
//!   number of hash functions for that (9).
//! - blk-BF: `sbbf-rs-safe`, the split block Bloom filter (256-bit blocks, 8 bits set per item),
//!   at 13 bits per item.
//! - QF: `qfilter` (a rank-select quotient filter), 9-bit remainders as in the paper, filled to
//!   90%, with the largest power-of-two slot count that fits.
//! - dl-CBF: a d-left counting Bloom filter written here (no crate has one): 4 tables of 4-cell
//!   buckets, 12-bit cells (10-bit remainder, 2-bit counter), as many cells as the CF has slots.
//! - The Rust cuckoo peers: `atomic-cuckoo-filter` (16-bit fingerprints) and `cuckoofilter`
//!   (8-bit), each with the largest power-of-two table that fits, filled to the first failure.
//!
//! Each filter hashes keys with its own crate's hasher (this crate: XXH3; `bloomfilter`,
//! `fastbloom`, the cuckoo peers: SipHash-1-3; `qfilter`: foldhash; the blocked Bloom filter and
//! the dl-CBF: this crate's XXH3); the paper hashed every key with CityHash. Keys are distinct
//! pseudo-random 64-bit integers, computed before each timed loop.

#[path = "../benches/common/mod.rs"]
mod common;

use common::{
    key, op_table, time_mixed, Acf, CfMutex, CfRwLock, Loaded, Ours, OursRoomy, Pools, Rng,
};
use common::{Subject, ABSENT};
use concurrent_cuckoo_filter::{Builder, ConcurrentCuckooFilter, DefaultHashBuilder};
use plotters::prelude::*;
use rayon::prelude::*;
use rayon::ThreadPool;
use std::collections::hash_map::DefaultHasher as SipHasher;
use std::error::Error;
use std::fmt::Write as _;
use std::hash::BuildHasher;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

type Res<T> = Result<T, Box<dyn Error>>;

// ------------------------------------------------------------------------------------------------
// Command line

struct Args {
    out: PathBuf,
    mb: usize,
    threads: usize,
    runs: usize,
    /// Parts to run (`table3`, `fig2`, `fig3`, `fig4`, `threads`); empty: all.
    only: Vec<String>,
}

const USAGE: &str =
    "usage: cargo run --release --example paper -- --out DIR [--mb N] [--threads T] \
     [--runs R] [--only table3,fig2,fig3,fig4,threads]";

fn parse_args() -> Res<Args> {
    let mut args = Args {
        out: PathBuf::new(),
        mb: 8,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        runs: 3,
        only: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))
        };
        match flag.as_str() {
            "--out" => args.out = PathBuf::from(value()?),
            "--mb" => args.mb = value()?.parse()?,
            "--threads" => args.threads = value()?.parse()?,
            "--runs" => args.runs = value()?.parse()?,
            "--only" => args.only = value()?.split(',').map(str::to_string).collect(),
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other}\n{USAGE}").into()),
        }
    }
    if args.out.as_os_str().is_empty() {
        return Err(USAGE.into());
    }
    if args.mb == 0 || args.threads == 0 || args.runs == 0 {
        return Err("--mb, --threads and --runs must be at least 1".into());
    }
    Ok(args)
}

// ------------------------------------------------------------------------------------------------
// The filters of Table 3, single-threaded

/// A filter as Table 3 and Figures 5–8 drive it, from one thread.
trait Filter {
    fn insert(&mut self, key: u64) -> bool;
    fn contains(&self, key: u64) -> bool;
    /// `None`: the filter cannot delete.
    fn remove(&mut self, key: u64) -> Option<bool>;
    /// Bytes of the table.
    fn memory(&self) -> usize;
}

/// A filter of Table 3 with the item count its occupancy is measured against (slots or
/// entries; the target for the Bloom filters) and the most items to insert (the filters that
/// cannot fail stop at their target).
struct Sized<F> {
    filter: F,
    nominal: usize,
    stop: usize,
}

fn items_for_bits(mb: usize, bits_per_item: f64) -> usize {
    ((mb << 20) as f64 * 8.0 / bits_per_item) as usize
}

/// The largest power of two at most `n`.
fn floor_pow2(n: usize) -> usize {
    1 << (usize::BITS - 1 - n.leading_zeros())
}

impl Filter for ConcurrentCuckooFilter {
    fn insert(&mut self, key: u64) -> bool {
        ConcurrentCuckooFilter::insert(self, &key).is_ok()
    }
    fn contains(&self, key: u64) -> bool {
        ConcurrentCuckooFilter::contains(self, &key)
    }
    fn remove(&mut self, key: u64) -> Option<bool> {
        Some(ConcurrentCuckooFilter::remove(self, &key))
    }
    fn memory(&self) -> usize {
        self.memory_usage()
    }
}

/// This crate's filter filling `mb` MiB; `semi_sorted`: 13-bit fingerprints in 12 bits.
fn cuckoo(mb: usize, semi_sorted: bool) -> Sized<ConcurrentCuckooFilter> {
    let builder = ConcurrentCuckooFilter::builder().capacity(items_for_bits(mb, 12.0 / 0.95));
    let builder = match semi_sorted {
        true => builder.fingerprint_bits(13).semi_sorted(true),
        false => builder,
    };
    let filter = builder.build().expect("a valid configuration");
    Sized {
        nominal: filter.bucket_count() * filter.bucket_size(),
        stop: usize::MAX,
        filter,
    }
}

impl Filter for bloomfilter::Bloom<u64> {
    fn insert(&mut self, key: u64) -> bool {
        self.set(&key);
        true
    }
    fn contains(&self, key: u64) -> bool {
        self.check(&key)
    }
    fn remove(&mut self, _: u64) -> Option<bool> {
        None
    }
    fn memory(&self) -> usize {
        (self.len() / 8) as usize
    }
}

fn bloom(mb: usize) -> Sized<bloomfilter::Bloom<u64>> {
    let items = items_for_bits(mb, 13.0);
    Sized {
        filter: bloomfilter::Bloom::new(mb << 20, items).expect("a valid Bloom filter"),
        nominal: items,
        stop: items,
    }
}

impl Filter for fastbloom::BloomFilter {
    fn insert(&mut self, key: u64) -> bool {
        fastbloom::BloomFilter::insert(self, &key);
        true
    }
    fn contains(&self, key: u64) -> bool {
        fastbloom::BloomFilter::contains(self, &key)
    }
    fn remove(&mut self, _: u64) -> Option<bool> {
        None
    }
    fn memory(&self) -> usize {
        self.num_bits() / 8
    }
}

fn fast_bloom(mb: usize) -> Sized<fastbloom::BloomFilter> {
    let items = items_for_bits(mb, 13.0);
    Sized {
        filter: fastbloom::BloomFilter::with_num_bits((mb << 20) * 8).expected_items(items),
        nominal: items,
        stop: items,
    }
}

/// The split block Bloom filter, fed this crate's XXH3 hash of each key.
struct Blocked(sbbf_rs_safe::Filter, DefaultHashBuilder);

impl Filter for Blocked {
    fn insert(&mut self, key: u64) -> bool {
        self.0.insert_hash(self.1.hash_one(key));
        true
    }
    fn contains(&self, key: u64) -> bool {
        self.0.contains_hash(self.1.hash_one(key))
    }
    fn remove(&mut self, _: u64) -> Option<bool> {
        None
    }
    fn memory(&self) -> usize {
        self.0.as_bytes().len()
    }
}

fn blocked_bloom(mb: usize) -> Sized<Blocked> {
    let items = items_for_bits(mb, 13.0);
    Sized {
        filter: Blocked(
            sbbf_rs_safe::Filter::new(13, items),
            DefaultHashBuilder::new(),
        ),
        nominal: items,
        stop: items,
    }
}

impl Filter for qfilter::Filter {
    fn insert(&mut self, key: u64) -> bool {
        self.insert_duplicated(key).is_ok()
    }
    fn contains(&self, key: u64) -> bool {
        qfilter::Filter::contains(self, key)
    }
    fn remove(&mut self, key: u64) -> Option<bool> {
        Some(qfilter::Filter::remove(self, key))
    }
    fn memory(&self) -> usize {
        self.memory_usage()
    }
}

/// Remainder bits of the paper's quotient filter.
const QF_REMAINDER_BITS: u8 = 9;

fn quotient(mb: usize) -> Sized<qfilter::Filter> {
    // About `r + 2.125` bits per slot: the remainder, 2 metadata bits and the block offsets.
    let slots = floor_pow2(((mb << 20) as f64 * 8.0 / (QF_REMAINDER_BITS as f64 + 2.125)) as usize);
    let qbits = slots.trailing_zeros() as u8;
    let filter = qfilter::Filter::with_fingerprint_size(slots as u64 * 9 / 10, qbits + 9)
        .expect("a valid quotient filter");
    Sized {
        filter,
        nominal: slots,
        stop: slots * 9 / 10,
    }
}

/// A d-left counting Bloom filter (Bonomi et al., ESA 2006): 4 tables of buckets of 4 cells;
/// a cell holds a 10-bit remainder and a 2-bit counter, 12 bits in all. An item goes to the
/// least loaded of its 4 buckets (the leftmost on a tie), or bumps the counter of a cell that
/// holds its remainder in one of them; an insert fails when all 4 buckets are full.
struct DlCbf {
    /// 6 bytes per bucket (4 cells of 12 bits), then 2 bytes so every bucket reads as a `u64`.
    cells: Vec<u8>,
    buckets_per_table: usize,
    hasher: DefaultHashBuilder,
}

const DL_TABLES: usize = 4;
const DL_CELLS: usize = 4;
const DL_COUNTER_BITS: u32 = 2;

impl DlCbf {
    fn new(cells: usize) -> Self {
        let buckets_per_table = (cells / (DL_TABLES * DL_CELLS)).max(1);
        Self {
            cells: vec![0; buckets_per_table * DL_TABLES * 6 + 2],
            buckets_per_table,
            hasher: DefaultHashBuilder::with_seed(0xd1ef),
        }
    }

    /// The item's remainder and its bucket in each table.
    fn locate(&self, key: u64) -> (u64, [usize; DL_TABLES]) {
        let h = self.hasher.hash_one(key);
        let remainder = (common::key(h) >> 54).max(1);
        let n = self.buckets_per_table as u64;
        let buckets = std::array::from_fn(|t| {
            let part = h.rotate_left(16 * t as u32) & 0xffff_ffff;
            t * self.buckets_per_table + ((part * n) >> 32) as usize
        });
        (remainder, buckets)
    }

    fn bucket(&self, b: usize) -> u64 {
        let bytes: [u8; 8] = self.cells[b * 6..b * 6 + 8].try_into().unwrap();
        u64::from_le_bytes(bytes) & 0xffff_ffff_ffff
    }

    fn set_bucket(&mut self, b: usize, word: u64) {
        self.cells[b * 6..b * 6 + 6].copy_from_slice(&word.to_le_bytes()[..6]);
    }

    fn cell(word: u64, i: usize) -> (u64, u64) {
        let cell = word >> (12 * i) & 0xfff;
        (cell >> DL_COUNTER_BITS, cell & ((1 << DL_COUNTER_BITS) - 1))
    }

    fn with_cell(word: u64, i: usize, remainder: u64, count: u64) -> u64 {
        let cell = remainder << DL_COUNTER_BITS | count;
        word & !(0xfff << (12 * i)) | cell << (12 * i)
    }

    /// The bucket and cell holding `remainder` among `buckets`.
    fn find(&self, remainder: u64, buckets: &[usize; DL_TABLES]) -> Option<(usize, usize)> {
        buckets.iter().find_map(|&b| {
            let word = self.bucket(b);
            (0..DL_CELLS)
                .find(|&i| Self::cell(word, i).1 > 0 && Self::cell(word, i).0 == remainder)
                .map(|i| (b, i))
        })
    }
}

impl Filter for DlCbf {
    fn insert(&mut self, key: u64) -> bool {
        let (remainder, buckets) = self.locate(key);
        if let Some((b, i)) = self.find(remainder, &buckets) {
            let word = self.bucket(b);
            let count = Self::cell(word, i).1;
            if count == (1 << DL_COUNTER_BITS) - 1 {
                return false;
            }
            self.set_bucket(b, Self::with_cell(word, i, remainder, count + 1));
            return true;
        }
        let load = |b: usize| {
            let word = self.bucket(b);
            (0..DL_CELLS).filter(|&i| Self::cell(word, i).1 > 0).count()
        };
        let b = *buckets.iter().min_by_key(|&&b| load(b)).unwrap();
        let word = self.bucket(b);
        match (0..DL_CELLS).find(|&i| Self::cell(word, i).1 == 0) {
            Some(i) => {
                self.set_bucket(b, Self::with_cell(word, i, remainder, 1));
                true
            }
            None => false,
        }
    }
    fn contains(&self, key: u64) -> bool {
        let (remainder, buckets) = self.locate(key);
        self.find(remainder, &buckets).is_some()
    }
    fn remove(&mut self, key: u64) -> Option<bool> {
        let (remainder, buckets) = self.locate(key);
        let Some((b, i)) = self.find(remainder, &buckets) else {
            return Some(false);
        };
        let word = self.bucket(b);
        let count = Self::cell(word, i).1;
        let cell = if count > 1 { remainder } else { 0 };
        self.set_bucket(b, Self::with_cell(word, i, cell, count - 1));
        Some(true)
    }
    fn memory(&self) -> usize {
        self.buckets_per_table * DL_TABLES * 6
    }
}

/// The dl-CBF with as many cells as the CF of `mb` MiB has slots (12 bits each: same memory).
fn d_left(mb: usize) -> Sized<DlCbf> {
    let cells = cuckoo_slots(mb);
    let filter = DlCbf::new(cells);
    Sized {
        nominal: filter.buckets_per_table * DL_TABLES * DL_CELLS,
        stop: usize::MAX,
        filter,
    }
}

fn cuckoo_slots(mb: usize) -> usize {
    (mb << 20) * 8 / 12
}

impl Filter for atomic_cuckoo_filter::CuckooFilter {
    fn insert(&mut self, key: u64) -> bool {
        atomic_cuckoo_filter::CuckooFilter::insert(self, &key).is_ok()
    }
    fn contains(&self, key: u64) -> bool {
        atomic_cuckoo_filter::CuckooFilter::contains(self, &key)
    }
    fn remove(&mut self, key: u64) -> Option<bool> {
        Some(atomic_cuckoo_filter::CuckooFilter::remove(self, &key))
    }
    fn memory(&self) -> usize {
        self.capacity() * 2
    }
}

fn atomic_cuckoo(mb: usize) -> Sized<atomic_cuckoo_filter::CuckooFilter> {
    let slots = floor_pow2((mb << 20) / 2);
    Sized {
        filter: atomic_cuckoo_filter::CuckooFilter::with_capacity(slots),
        nominal: slots,
        stop: usize::MAX,
    }
}

impl Filter for cuckoofilter::CuckooFilter<SipHasher> {
    fn insert(&mut self, key: u64) -> bool {
        // On `Err` the key went in and a random other fingerprint was dropped: the first
        // failure ends the construction all the same.
        self.add(&key).is_ok()
    }
    fn contains(&self, key: u64) -> bool {
        cuckoofilter::CuckooFilter::contains(self, &key)
    }
    fn remove(&mut self, key: u64) -> Option<bool> {
        Some(self.delete(&key))
    }
    fn memory(&self) -> usize {
        self.memory_usage()
    }
}

fn cuckoofilter_crate(mb: usize) -> Sized<cuckoofilter::CuckooFilter<SipHasher>> {
    let slots = floor_pow2(mb << 20);
    Sized {
        filter: cuckoofilter::CuckooFilter::with_capacity(slots),
        nominal: slots,
        stop: usize::MAX,
    }
}

// ------------------------------------------------------------------------------------------------
// Table 3 and Figures 5–8: one run of one filter

/// Occupancy steps of the insert and delete curves (Figures 7 and 8).
const STEPS: usize = 20;
/// Lookups per point of Figure 6 at most, for hits and for misses each.
const PROBE: usize = 1 << 18;
/// Lookups per point of Figure 5 at most.
const LOOKUPS: usize = 1 << 20;
/// How long a lookup measurement runs at least (unless it runs out of keys first): short
/// measurements on this shared machine are at the mercy of the scheduler.
const MIN_LOOKUP_SECONDS: f64 = 0.03;
/// Never-inserted keys looked up to measure the false positive rate.
const FPR_QUERIES: usize = 1 << 20;
/// Shares of positive lookups in Figure 5.
const SHARES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// What one run measures of one filter. Curves are `(occupancy, million operations/s)`.
#[derive(Clone, Default)]
struct Run {
    items: f64,
    memory: f64,
    bits_per_item: f64,
    false_positive_rate: f64,
    construction: f64,
    lookup_by_share: Vec<(f64, f64)>,
    negative_by_load: Vec<(f64, f64)>,
    positive_by_load: Vec<(f64, f64)>,
    insert_by_load: Vec<(f64, f64)>,
    delete_by_load: Vec<(f64, f64)>,
}

/// `n` lookup keys, each an inserted key (of the first `inserted` of this run) with
/// probability `share`, else a never-inserted one.
fn lookup_keys(rng: &mut Rng, base: u64, inserted: usize, share: f64, n: usize) -> Vec<u64> {
    (0..n)
        .map(|_| {
            if (rng.next_u64() as f64) < share * u64::MAX as f64 {
                key(base + rng.below(inserted as u64))
            } else {
                key(ABSENT | rng.next_u64() >> 2)
            }
        })
        .collect()
}

/// Million lookups per second over `keys`, in order, stopping at the end of a block of keys once
/// `MIN_LOOKUP_SECONDS` have passed (the slow filters need not go through all of them).
fn lookup_rate<F: Filter>(filter: &F, keys: &[u64]) -> f64 {
    let began = Instant::now();
    let (mut done, mut found) = (0, 0);
    for block in keys.chunks(1 << 13) {
        found += block.iter().filter(|&&k| filter.contains(k)).count();
        done += block.len();
        if began.elapsed().as_secs_f64() >= MIN_LOOKUP_SECONDS {
            break;
        }
    }
    std::hint::black_box(found);
    done as f64 / began.elapsed().as_secs_f64() / 1e6
}

/// Builds the filter from empty to full, probing lookups every 10%, then measures the false
/// positive rate and the lookups of Figure 5, then deletes everything (if it can).
fn run_filter<F: Filter>(sized: Sized<F>, seed: u64) -> Run {
    let Sized {
        mut filter,
        nominal,
        stop,
    } = sized;
    let base = seed << 40;
    let mut rng = Rng::new(seed);
    let mut run = Run {
        memory: filter.memory() as f64,
        ..Run::default()
    };
    let keys: Vec<u64> = (0..nominal.min(stop) as u64 + nominal as u64 / 10)
        .map(|i| key(base + i))
        .collect();
    let mut inserted = 0usize;
    let mut insert_time = 0.0;
    let mut full = false;
    for step in 1..=STEPS {
        let target = (nominal * step / STEPS).min(stop).min(keys.len());
        let began = Instant::now();
        let from = inserted;
        while inserted < target {
            if !filter.insert(keys[inserted]) {
                full = true;
                break;
            }
            inserted += 1;
        }
        let seconds = began.elapsed().as_secs_f64();
        insert_time += seconds;
        let load = inserted as f64 / nominal as f64;
        if inserted > from {
            run.insert_by_load
                .push((load, (inserted - from) as f64 / seconds / 1e6));
        }
        if step % 2 == 0 || full || inserted >= stop {
            let hits = lookup_keys(&mut rng, base, inserted.max(1), 1.0, PROBE);
            let misses = lookup_keys(&mut rng, base, 1, 0.0, PROBE);
            run.positive_by_load
                .push((load, lookup_rate(&filter, &hits)));
            run.negative_by_load
                .push((load, lookup_rate(&filter, &misses)));
        }
        if full || inserted >= stop || inserted >= keys.len() {
            break;
        }
    }
    // The cuckoo filters of this crate and the dl-CBF fill past their nominal slot count only
    // if every slot is taken; `keys` holds 10% more than that, which is never reached.
    run.items = inserted as f64;
    run.bits_per_item = run.memory * 8.0 / inserted as f64;
    run.construction = inserted as f64 / insert_time / 1e6;

    let absent = lookup_keys(&mut rng, base, 1, 0.0, FPR_QUERIES);
    run.false_positive_rate =
        absent.iter().filter(|&&k| filter.contains(k)).count() as f64 / absent.len() as f64;
    for share in SHARES {
        let keys = lookup_keys(&mut rng, base, inserted, share, LOOKUPS);
        run.lookup_by_share
            .push((share, lookup_rate(&filter, &keys)));
    }

    if filter.remove(keys[0]).is_some() {
        let mut removed = 1usize;
        let chunk = (nominal / STEPS).max(1);
        while removed < inserted {
            let load = (inserted - removed) as f64 / nominal as f64;
            let end = (removed + chunk).min(inserted);
            let began = Instant::now();
            for &k in &keys[removed..end] {
                filter.remove(k);
            }
            let rate = (end - removed) as f64 / began.elapsed().as_secs_f64() / 1e6;
            run.delete_by_load.push((load, rate));
            removed = end;
        }
    }
    run
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// Point-wise medians of curves measured at the same steps (as many points as the shortest).
fn median_curve(curves: &[&Vec<(f64, f64)>]) -> Vec<(f64, f64)> {
    let len = curves.iter().map(|c| c.len()).min().unwrap_or(0);
    (0..len)
        .map(|i| {
            let mut xs: Vec<f64> = curves.iter().map(|c| c[i].0).collect();
            let mut ys: Vec<f64> = curves.iter().map(|c| c[i].1).collect();
            (median(&mut xs), median(&mut ys))
        })
        .collect()
}

/// The medians of several runs.
fn median_run(runs: &[Run]) -> Run {
    let scalar = |f: fn(&Run) -> f64| median(&mut runs.iter().map(f).collect::<Vec<_>>());
    let curve =
        |f: fn(&Run) -> &Vec<(f64, f64)>| median_curve(&runs.iter().map(f).collect::<Vec<_>>());
    Run {
        items: scalar(|r| r.items),
        memory: scalar(|r| r.memory),
        bits_per_item: scalar(|r| r.bits_per_item),
        false_positive_rate: scalar(|r| r.false_positive_rate),
        construction: scalar(|r| r.construction),
        lookup_by_share: curve(|r| &r.lookup_by_share),
        negative_by_load: curve(|r| &r.negative_by_load),
        positive_by_load: curve(|r| &r.positive_by_load),
        insert_by_load: curve(|r| &r.insert_by_load),
        delete_by_load: curve(|r| &r.delete_by_load),
    }
}

/// One row of Table 3: a filter's name, what it is, and the medians of its runs.
struct Row {
    name: &'static str,
    what: String,
    run: Run,
}

fn measure<F: Filter>(
    name: &'static str,
    what: &str,
    make: impl Fn() -> Sized<F>,
    runs: usize,
) -> Row {
    let began = Instant::now();
    let results: Vec<Run> = (0..runs as u64)
        .map(|r| run_filter(make(), r + 1))
        .collect();
    let run = median_run(&results);
    eprintln!(
        "  {name}: {:.2} M items, {:.2} bits/item, {:.3}% false positives, {:.2} M inserts/s ({:.1} s)",
        run.items / 1e6,
        run.bits_per_item,
        run.false_positive_rate * 100.0,
        run.construction,
        began.elapsed().as_secs_f64()
    );
    Row {
        name,
        what: what.to_string(),
        run,
    }
}

/// Every filter of Table 3. A row for a new variant of this crate's filter is one more line.
fn table3_rows(mb: usize, runs: usize) -> Vec<Row> {
    vec![
        measure("CF", "this crate, 12-bit", || cuckoo(mb, false), runs),
        measure(
            "ss-CF",
            "this crate, semi-sorted, 13-bit",
            || cuckoo(mb, true),
            runs,
        ),
        measure("BF", "`bloomfilter`, k = 9", || bloom(mb), runs),
        measure(
            "BF (fastbloom)",
            "`fastbloom`, k = 9",
            || fast_bloom(mb),
            runs,
        ),
        measure(
            "blk-BF",
            "`sbbf-rs-safe`, 256-bit blocks",
            || blocked_bloom(mb),
            runs,
        ),
        measure(
            "QF",
            "`qfilter`, 9-bit remainders, 90% full",
            || quotient(mb),
            runs,
        ),
        measure(
            "dl-CBF",
            "in this example, d = 4, 12-bit cells",
            || d_left(mb),
            runs,
        ),
        measure(
            "atomic-cuckoo-filter",
            "16-bit, power-of-two table",
            || atomic_cuckoo(mb),
            runs,
        ),
        measure(
            "cuckoofilter",
            "8-bit, power-of-two table",
            || cuckoofilter_crate(mb),
            runs,
        ),
    ]
}

// ------------------------------------------------------------------------------------------------
// Figure 2, the article's Table 2, Figures 3 and 4: space

/// Fills `builder`'s filter with keys `base, base + 1, ...` to the first failure.
fn fill_to_failure(builder: Builder, base: u64) -> ConcurrentCuckooFilter {
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
const FIG2_RUNS: u64 = 10;

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

// ------------------------------------------------------------------------------------------------
// Throughput against threads, mixed workloads

const READ_HEAVY: &str = "read-heavy 90/5/5";
const WRITE_HEAVY: &str = "write-heavy 50/25/25";

/// `(workload, filter, threads, million operations/s)`.
type ThreadPoint = (&'static str, &'static str, usize, f64);

/// Fills a filter of type `F` with `items` keys, then runs each mixed workload on it with every
/// pool, `runs` times, for about a quarter of a second each.
fn thread_sweep<F: Subject>(
    items: usize,
    pools: &Pools,
    workloads: &[(&'static str, Vec<common::Op>)],
    runs: usize,
    out: &mut Vec<ThreadPoint>,
) {
    let loaded = &Loaded::<F>::fill(items, pools.0.len(), pools.max(), true);
    let mut seed = 0;
    let mut time = |pool: &ThreadPool, ops: &[common::Op], iters: u64| {
        seed += 1;
        time_mixed(pool, loaded, ops, seed, iters).as_secs_f64()
    };
    for (name, ops) in workloads {
        // Calibrate each pool to about 0.25 s per measurement; the first passes also take the
        // freshly filled filter to the steady state of the workload before anything counts.
        let iters: Vec<u64> = pools
            .0
            .iter()
            .map(|pool| {
                let probe = time(pool, ops, 8);
                ((0.25 / probe * 8.0) as u64).max(8)
            })
            .collect();
        time(pools.max(), ops, iters[iters.len() - 1]);
        // Thread counts take turns within each run, so a change in the machine's load hits all.
        let mut rates = vec![Vec::new(); pools.0.len()];
        for _ in 0..runs {
            for (i, pool) in pools.0.iter().enumerate() {
                let ops_done = (pool.current_num_threads() * ops.len()) as f64 * iters[i] as f64;
                rates[i].push(ops_done / time(pool, ops, iters[i]) / 1e6);
            }
        }
        for (pool, rates) in pools.0.iter().zip(&mut rates) {
            out.push((name, F::NAME, pool.current_num_threads(), median(rates)));
        }
    }
}

fn thread_figure(mb: usize, max_threads: usize, runs: usize) -> Vec<ThreadPoint> {
    let pools = Pools::new(max_threads);
    let items = common::items_for_mib(mb);
    let workloads = [
        (READ_HEAVY, op_table(50, 1)),
        (WRITE_HEAVY, op_table(250, 2)),
    ];
    let mut out = Vec::new();
    thread_sweep::<Ours>(items, &pools, &workloads, runs, &mut out);
    thread_sweep::<OursRoomy>(items, &pools, &workloads, runs, &mut out);
    thread_sweep::<Acf>(items, &pools, &workloads, runs, &mut out);
    thread_sweep::<CfMutex>(items, &pools, &workloads, runs, &mut out);
    thread_sweep::<CfRwLock>(items, &pools, &workloads, runs, &mut out);
    out
}

// ------------------------------------------------------------------------------------------------
// Plots

/// One line of a plot.
struct Series {
    name: String,
    points: Vec<(f64, f64)>,
}

struct Plot {
    file: String,
    title: String,
    x_desc: &'static str,
    y_desc: &'static str,
    /// Plot x on a log10 scale.
    log_x: bool,
    /// Fixed y range, else from 0 to the largest value.
    y_range: Option<(f64, f64)>,
    legend: SeriesLabelPosition,
    /// Tick only whole x values (thread counts).
    whole_x: bool,
    series: Vec<Series>,
}

impl Plot {
    fn new(
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

    fn series(mut self, series: Vec<Series>) -> Self {
        self.series = series;
        self
    }
}

/// A color per filter name, the same in every plot.
fn color(name: &str, index: usize) -> RGBColor {
    const NAMED: [(&str, RGBColor); 13] = [
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

fn draw(plot: &Plot, dir: &Path, caption: &str) -> Res<()> {
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

// ------------------------------------------------------------------------------------------------
// Output

/// Today's date (UTC) as YYYY-MM-DD.
fn today() -> String {
    let days = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// Where the results go: files in the output folder, and `results.md` with every table and plot.
struct Report {
    dir: PathBuf,
    md: String,
    /// Machine and date, for every plot's caption.
    stamp: String,
    /// How the numbers were aggregated: "median of 3 runs".
    runs: String,
}

impl Report {
    fn csv(&self, file: &str, header: &str, rows: &[String]) -> Res<()> {
        let mut text = format!("{header}\n");
        for row in rows {
            text.push_str(row);
            text.push('\n');
        }
        std::fs::write(self.dir.join(file), text)?;
        Ok(())
    }

    /// A Markdown table: printed, saved as `file` and added to `results.md`.
    fn table(&mut self, file: &str, text: &str) -> Res<()> {
        println!("{text}");
        std::fs::write(self.dir.join(file), text)?;
        self.md.push_str(text);
        self.md.push('\n');
        Ok(())
    }

    /// Draws `plot` with a caption naming the machine, `what` was measured, the date and how
    /// the numbers were aggregated (`runs`, or the report's default).
    fn plot(&mut self, plot: &Plot, what: &str, runs: Option<&str>) -> Res<()> {
        let runs = runs.unwrap_or(&self.runs);
        draw(
            plot,
            &self.dir,
            &format!("{} · {what} · {runs}", self.stamp),
        )?;
        writeln!(self.md, "![{}]({})\n", plot.title, plot.file)?;
        Ok(())
    }
}

/// A curve of Figures 5–8: file id, file name, title, axis descriptions, the curve of a run.
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

fn report_table3(report: &mut Report, rows: &[Row], mb: usize) -> Res<()> {
    let mut t = String::new();
    writeln!(
        t,
        "## Table 3: space efficiency and construction speed ({mb} MiB filters)\n"
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

    let size = format!("{mb} MiB filters");
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

fn report_figure2(report: &mut Report) -> Res<()> {
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

fn report_figure3(report: &mut Report, runs: usize) -> Res<()> {
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

fn report_figure4(report: &mut Report, runs: usize) -> Res<()> {
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

fn report_threads(report: &mut Report, mb: usize, max_threads: usize, runs: usize) -> Res<()> {
    let points = thread_figure(mb, max_threads, runs);
    let mut t = String::new();
    writeln!(t, "## Mixed workloads against threads ({mb} MiB of this crate's filter at its capacity; the peers hold as many items)\n")?;
    write!(t, "| workload | filter |")?;
    for n in 1..=max_threads {
        write!(
            t,
            " {n} thread{} (M ops/s) |",
            if n == 1 { "" } else { "s" }
        )?;
    }
    writeln!(t, " {max_threads} / 1 |")?;
    writeln!(t, "|---|---|{}---|", "---|".repeat(max_threads))?;
    let mut series: Vec<(&str, Series)> = Vec::new();
    for &(workload, filter, threads, rate) in &points {
        match series
            .iter_mut()
            .find(|(w, s)| *w == workload && s.name == filter)
        {
            Some((_, s)) => s.points.push((threads as f64, rate)),
            None => series.push((
                workload,
                Series {
                    name: filter.to_string(),
                    points: vec![(threads as f64, rate)],
                },
            )),
        }
    }
    for (workload, s) in &series {
        write!(t, "| {workload} | {} |", s.name)?;
        for (_, rate) in &s.points {
            write!(t, " {rate:.2} |")?;
        }
        writeln!(
            t,
            " {:.2} |",
            s.points[s.points.len() - 1].1 / s.points[0].1
        )?;
    }
    report.table("threads.md", &t)?;
    let rows: Vec<String> = points
        .iter()
        .map(|(w, f, n, r)| format!("{w},{f},{n},{r:.3}"))
        .collect();
    report.csv("threads.csv", "workload,filter,threads,mops", &rows)?;
    for (workload, file) in [
        (READ_HEAVY, "threads_read_heavy.png"),
        (WRITE_HEAVY, "threads_write_heavy.png"),
    ] {
        let lines = series
            .iter()
            .filter(|(w, _)| *w == workload)
            .map(|(_, s)| Series {
                name: s.name.clone(),
                points: s.points.clone(),
            })
            .collect();
        let title = format!("Mixed workload against threads: {workload}");
        let mut plot = Plot::new(file, title, "threads", "operations (million/s)").series(lines);
        plot.whole_x = true;
        report.plot(
            &plot,
            &format!("{mb} MiB filter shared through an Arc"),
            None,
        )?;
    }
    Ok(())
}

fn main() -> Res<()> {
    let args = match parse_args() {
        Ok(args) => args,
        Err(err) => {
            eprintln!("{err}");
            std::process::exit(2);
        }
    };
    std::fs::create_dir_all(&args.out)?;
    plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
        .map_err(|_| "the bundled DejaVu Sans font did not load")?;
    let started = Instant::now();
    let (date, machine) = (today(), common::machine());
    let runs = match args.runs {
        1 => "one run".to_string(),
        n => format!("median of {n} runs"),
    };
    let mut report = Report {
        dir: args.out.clone(),
        md: String::new(),
        stamp: format!("{machine} · {date}"),
        runs: runs.clone(),
    };
    let command = format!(
        "cargo run --release --example paper -- --out {} --mb {} --threads {} --runs {}",
        args.out.display(),
        args.mb,
        args.threads,
        args.runs
    );
    writeln!(
        report.md,
        "# The cuckoo filter paper's Section 7, reproduced\n"
    )?;
    writeln!(
        report.md,
        "Made by `{command}` on {date}: {machine}. Numbers: {runs}.\n"
    )?;
    // Whether to run a part (`--only`), saying so with the time so far.
    let stage = |part: &str, what: String| {
        let run = args.only.is_empty() || args.only.iter().any(|p| p == part);
        if run {
            eprintln!("[{:4.0} s] {what}", started.elapsed().as_secs_f64());
        }
        run
    };

    let (mb, runs) = (args.mb, args.runs);
    if stage(
        "table3",
        format!("Table 3, Figures 5-8: {mb} MiB filters, {runs} runs each"),
    ) {
        let rows = table3_rows(mb, runs);
        report_table3(&mut report, &rows, mb)?;
    }
    if stage(
        "fig2",
        format!("Figure 2: load factor at the first failure, {FIG2_RUNS} runs"),
    ) {
        report_figure2(&mut report)?;
    }
    if stage("fig3", "Figure 3: bits per item against measured ε".into()) {
        report_figure3(&mut report, runs)?;
    }
    if stage("fig4", "Figure 4: bits per item against target ε".into()) {
        report_figure4(&mut report, runs)?;
    }
    if stage(
        "threads",
        format!("Mixed workloads, 1 to {} threads", args.threads),
    ) {
        report_threads(&mut report, mb, args.threads, runs)?;
    }

    std::fs::write(args.out.join("results.md"), &report.md)?;
    let done = args.out.join("results.md");
    eprintln!(
        "[{:4.0} s] done: {}",
        started.elapsed().as_secs_f64(),
        done.display()
    );
    Ok(())
}
