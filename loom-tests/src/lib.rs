//! Loom model checks of `concurrent-cuckoo-filter`'s concurrency protocol.
//!
//! Each module of `tests/models/` checks one guarantee of the filter over every interleaving of
//! two threads that loom explores within a preemption bound (2 or 3), on a table of a handful of
//! slots. Run them from the workspace root with
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test --release -p loom-tests
//! ```
//!
//! (with `CARGO_TARGET_DIR=target/loom` to keep the loom build apart from the normal one). The
//! heaviest models are those whose inserts end in `Full`, where each failed attempt is confirmed
//! by a validated search: `failed_insert` explores 674,000 executions at bound 2.
//! Without `--cfg loom` this crate and its tests compile to nothing.
//! Each model prints how many executions it explored (`-- --nocapture`); `LOOM_MAX_PREEMPTIONS=n`
//! overrides its bound, and `LOOM_LOG=trace LOOM_LOCATION=1` explain a failure.
//!
//! | module | guarantee |
//! | --- | --- |
//! | `lookup_during_move` | a lookup racing a move of its fingerprint finds it (both read orders; semi-sorted) |
//! | `narrow_semi_sorted` | the same between 8-bit semi-sorted buckets that share words, one across two |
//! | `racing_inserts` | two inserts into one full pair: both fit, or exactly one is `Full`; nothing lost |
//! | `remove_races` | a remove racing an insert of its item, or a move of it, removes one copy |
//! | `stale_path` | a cuckoo path spoiled by an insert or by a remove is detected and retried |
//! | `failed_insert` | an insert that fails with `Full` changes no answer |
//! | `reader_progress` | a reader facing a writer that keeps the stamps moving completes |
//! | `len` | `len` is exact after racing inserts and removes |
//! | `insert_unique` | racing `insert_unique`s of one item store it once, also across a move |
//! | `growth` | a `GrowableCuckooFilter`'s lookup, remove, racing `insert_unique`s and `len` across the addition of a level |
//! | `splits` | the same across the split of a chunk: the lookup, the remove and the unique inserts of a moving item, `len` |
//! | `honest_full` | an insert that had room at every moment of a race does not report `Full` |
//! | `snapshot` | `to_bytes` racing a move encodes a state the filter really had |
//! | `bulk` | a `try_extend` block racing a remove of an item it moves inserts the whole block |
//! | `expiring` | an `ExpiringCuckooFilter`'s generation advance racing its sweep, a lookup of a refresh, an insert beside a refresh, a path move: nothing inside the window is lost (mutants that fail each: `mutants/`, docs/expiry.md) |
//! | `bucket_words` | on the bucket-word layout, a lookup racing a move, and a move and a move back, finds its item |
//!
//! The library's atomics are loom's under `--cfg loom` (see its `src/sync/`), with every access
//! made visible to loom's partial-order reduction, without which loom would not explore readers
//! racing writers at all.
//!
//! # Writing a model
//!
//! A model builds its filter with `Shape`, makes keys with the buckets it needs with `Keys`
//! (the filter hashes a `u64` key to itself, so a key's fingerprint and buckets can be chosen),
//! runs its threads inside `check`, sharing the filter through an `Arc` with `spawn`, and ends
//! with `assert_holds`, which checks every key's copy count and `len` at once. A model of a new
//! operation, such as an `insert_unique` that must store one copy when two threads race to insert
//! the same item, is one more module in `tests/models/`, declared in `tests/models/main.rs`.

#![cfg(loom)]

use core::hash::{BuildHasher, Hasher};

use concurrent_cuckoo_filter::{
    ConcurrentCuckooFilter, DebugCandidates, ExpiringCuckooFilter, StableHashBuilder, TableLayout,
    Window,
};
use loom::sync::Arc;

/// The filter every model uses: keys are `u64`s that are their own hash.
pub type Filter = ConcurrentCuckooFilter<KeyIsHash>;

/// The expiring filter of the models, with the same keys.
pub type ExpiringFilter = ExpiringCuckooFilter<KeyIsHash>;

/// A count window of `per_generation · generations` inserts on a table of two buckets of four
/// 16-bit slots (12-bit fingerprints and a 4-bit tag: one table word per bucket) and one stripe.
pub fn tiny_window(per_generation: u64, generations: u32) -> Arc<ExpiringFilter> {
    let filter =
        ExpiringCuckooFilter::builder(Window::Items(per_generation * u64::from(generations)))
            .generations(generations)
            .false_positive_rate(0.003)
            .debug_buckets(2)
            .hasher(KeyIsHash)
            .build()
            .expect("a model's window is valid");
    assert_eq!(filter.bucket_count(), 2);
    assert_eq!(filter.stats().fingerprint_bits, 12);
    Arc::new(filter)
}

/// A [`BuildHasher`] that hashes a `u64` key to the key itself, so that a model can pick keys by
/// the fingerprint and buckets they get.
#[derive(Clone, Copy, Debug, Default)]
pub struct KeyIsHash;

impl BuildHasher for KeyIsHash {
    type Hasher = KeyIsHashHasher;

    fn build_hasher(&self) -> KeyIsHashHasher {
        KeyIsHashHasher(0)
    }
}

/// So that models can encode and decode a filter.
impl StableHashBuilder for KeyIsHash {
    const HASHER_ID: u64 = u64::from_le_bytes(*b"loom-key");

    fn seed(&self) -> u64 {
        0
    }

    fn from_seed(seed: u64) -> Option<Self> {
        (seed == 0).then_some(Self)
    }
}

/// The [`Hasher`] of [`KeyIsHash`]: its hash is the last `u64` written.
#[derive(Debug)]
pub struct KeyIsHashHasher(u64);

impl Hasher for KeyIsHashHasher {
    fn write(&mut self, _bytes: &[u8]) {
        panic!("loom models use u64 keys only");
    }

    fn write_u64(&mut self, key: u64) {
        self.0 = key;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// The geometry of a model's table: a few buckets, a few stripes, a short path search.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Buckets in the table.
    pub buckets: usize,
    /// Slots per bucket.
    pub bucket_size: usize,
    /// Bits per fingerprint.
    pub fingerprint_bits: u32,
    /// Lock stripes (a power of two).
    pub stripes: usize,
    /// Most moves one cuckoo path makes.
    pub max_hops: usize,
    /// Most buckets one path search reads.
    pub max_search_buckets: usize,
    /// Semi-sorted buckets (4 slots only).
    pub semi_sorted: bool,
    /// How the table holds its buckets.
    pub layout: TableLayout,
}

impl Shape {
    /// `buckets` buckets of two 32-bit slots: every bucket is exactly one table word, and with
    /// `stripes >= buckets` every bucket has a stripe of its own.
    pub fn wide(buckets: usize, stripes: usize) -> Self {
        Self {
            buckets,
            bucket_size: 2,
            fingerprint_bits: 32,
            stripes,
            max_hops: 2,
            max_search_buckets: 6,
            semi_sorted: false,
            layout: TableLayout::Packed,
        }
    }

    /// `buckets` buckets of two 16-bit slots: two buckets share each table word, and so share a
    /// stripe.
    pub fn packed(buckets: usize, stripes: usize) -> Self {
        Self {
            fingerprint_bits: 16,
            ..Self::wide(buckets, stripes)
        }
    }

    /// `buckets` semi-sorted buckets of four 17-bit slots: 64 bits each, so every bucket is
    /// exactly one table word, as in [`Self::wide`].
    pub fn semi_sorted(buckets: usize, stripes: usize) -> Self {
        Self {
            bucket_size: 4,
            fingerprint_bits: 17,
            semi_sorted: true,
            ..Self::wide(buckets, stripes)
        }
    }

    /// `buckets` buckets of two 16-bit slots, one table word each with its version (the
    /// bucket-word layout), and with `stripes >= buckets` a stripe each.
    pub fn words(buckets: usize, stripes: usize) -> Self {
        Self {
            fingerprint_bits: 16,
            layout: TableLayout::BucketWord,
            ..Self::wide(buckets, stripes)
        }
    }

    /// An empty filter of this shape.
    pub fn build(&self) -> Filter {
        let filter = ConcurrentCuckooFilter::builder()
            .buckets(self.buckets)
            .bucket_size(self.bucket_size)
            .fingerprint_bits(self.fingerprint_bits)
            .stripes(self.stripes)
            .semi_sorted(self.semi_sorted)
            .layout(self.layout)
            .search_limits(self.max_hops, self.max_search_buckets)
            .hasher(KeyIsHash)
            .build()
            .expect("a model's shape is valid");
        assert_eq!(filter.bucket_count(), self.buckets);
        filter
    }
}

/// Makes keys with chosen buckets, each with a fingerprint of its own, so that a key's
/// [`count`](ConcurrentCuckooFilter::count) is exactly its number of copies.
#[derive(Debug)]
pub struct Keys<'a> {
    filter: AnyFilter<'a>,
    fingerprints: Vec<u32>,
}

/// The filter whose placement [`Keys`] follows.
#[derive(Clone, Copy, Debug)]
enum AnyFilter<'a> {
    Plain(&'a Filter),
    Expiring(&'a ExpiringFilter),
}

impl AnyFilter<'_> {
    fn bucket_count(self) -> usize {
        match self {
            Self::Plain(filter) => filter.bucket_count(),
            Self::Expiring(filter) => filter.bucket_count(),
        }
    }

    fn candidates(self, key: u64) -> DebugCandidates {
        match self {
            Self::Plain(filter) => filter.debug_candidates(&key),
            Self::Expiring(filter) => filter.debug_candidates(&key),
        }
    }
}

impl<'a> Keys<'a> {
    /// A key maker for `filter`.
    pub fn new(filter: &'a Filter) -> Self {
        Self {
            filter: AnyFilter::Plain(filter),
            fingerprints: Vec::new(),
        }
    }

    /// A key maker for an expiring filter.
    pub fn expiring(filter: &'a ExpiringFilter) -> Self {
        Self {
            filter: AnyFilter::Expiring(filter),
            fingerprints: Vec::new(),
        }
    }

    /// A new key whose first bucket is `first` and whose alternate bucket is `second` (the same
    /// bucket if `first == second`: such a fingerprint can never move).
    pub fn with_buckets(&mut self, first: usize, second: usize) -> u64 {
        let n = self.filter.bucket_count() as u64;
        // The high half picks the first bucket: aim at the middle of `first`'s range.
        let high = ((2 * first as u64 + 1) << 31) / n;
        // The low half picks the fingerprint (and so the alternate bucket): walk it with an odd
        // multiplier, which visits every 32-bit value and spreads them over all widths.
        for step in 1..=u64::from(u32::MAX) {
            let low = step.wrapping_mul(0x9e37_79b9) & 0xffff_ffff;
            let key = high << 32 | low;
            let DebugCandidates {
                fingerprint: fp,
                first: a,
                second: b,
            } = self.filter.candidates(key);
            if (a, b) == (first, second) && !self.fingerprints.contains(&fp) {
                self.fingerprints.push(fp);
                return key;
            }
        }
        panic!("no key has buckets ({first}, {second})");
    }
}

/// Runs `model` under every interleaving loom explores with at most `preemption_bound`
/// preemptions (unless `LOOM_MAX_PREEMPTIONS` says otherwise).
/// Prints how many executions were explored, to see what a bound costs.
pub fn check(preemption_bound: usize, model: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(preemption_bound);
    builder.max_branches = builder.max_branches.max(20_000);
    let executions = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&executions);
    let start = std::time::Instant::now();
    builder.check(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        model();
    });
    println!(
        "{} executions, preemption bound {:?}, {:.1?}",
        executions.load(std::sync::atomic::Ordering::Relaxed),
        builder.preemption_bound,
        start.elapsed()
    );
}

/// Asserts that the filter holds exactly `copies` of each listed key and nothing else: each
/// key's fingerprint count, and `len` equal to their sum.
pub fn assert_holds(filter: &Filter, expected: &[(u64, usize)]) {
    for &(key, copies) in expected {
        assert_eq!(
            filter.count(&key),
            copies,
            "copies of key {key:#018x} (fingerprint {})",
            filter.debug_candidates(&key).fingerprint
        );
    }
    let total: usize = expected.iter().map(|&(_, copies)| copies).sum();
    assert_eq!(filter.len(), total, "len");
}

/// The table of the models where a fingerprint must move: two buckets with a stripe each, bucket
/// 0 full of `x` (which may move to bucket 1) and `p` (which may not). Returns the filter and
/// `[x, p, y]`, where `y` has bucket 0 only, so that inserting `y` moves `x` to bucket 1.
pub fn x_moves_for_y() -> (Arc<Filter>, [u64; 3]) {
    let filter = Arc::new(Shape::wide(2, 2).build());
    let mut keys = Keys::new(&filter);
    let [x, p, y] = [(0, 1), (0, 0), (0, 0)].map(|(a, b)| keys.with_buckets(a, b));
    fill(&filter, &[x, p]);
    (filter, [x, p, y])
}

/// Runs `op` on the shared filter in a new loom thread.
pub fn spawn<T: Send + 'static>(
    filter: &Arc<Filter>,
    op: impl FnOnce(&Filter) -> T + Send + 'static,
) -> loom::thread::JoinHandle<T> {
    let filter = Arc::clone(filter);
    loom::thread::spawn(move || op(&filter))
}

/// Inserts every key in order, each of which must fit.
pub fn fill(filter: &Filter, keys: &[u64]) {
    for key in keys {
        filter.insert(key).expect("the model's prefill fits");
    }
}
