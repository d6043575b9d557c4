//! Every table shape the builder makes, filled near full load by threads at once: no false
//! negatives, an exact `len` whenever the threads pause, and no `Full` insert that changed
//! anything.
//!
//! The shapes are found, not listed: false positive rates from 0.96 down past the narrowest
//! reachable one, and every fingerprint width, with each bucket size, semi-sorting and layout the
//! builder may be told or left to choose, give every distinct (bucket size, fingerprint width,
//! semi-sorted, layout) it accepts. Each shape's table is small, so that threads collide on its few stripes and each
//! shape takes a fraction of a second; `SHAPE_MATRIX_ROUNDS` (default 40, about 15 s on two
//! cores) sets how many rounds each shape runs, more for a deeper run:
//!
//! ```text
//! SHAPE_MATRIX_ROUNDS=2000 cargo test --release --test shape_matrix -- --nocapture
//! ```
//!
//! In a round two filler threads remove a third of their keys and insert until their share of the
//! target load is in, a churner removes and re-inserts its keys, and a reader looks up the other
//! threads' keys. Each owner checks its own live keys; every thread checks others' keys that an
//! owner has marked live and not yet marked for removal. Between rounds, with no thread running,
//! the test checks `len` against the keys the owners hold and looks every one of them up, then
//! inserts new keys until one is `Full`, checking that the failed insert left `len` and every key
//! as they were.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::thread;

use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, InsertError, TableLayout};

/// Items each shape's filter is sized for: a table of about 1,100 to 1,600 slots.
const CAPACITY: usize = 1_000;

/// The lowest load every pause must reach after the fillers' turn.
const MIN_LOAD: f64 = 0.85;

/// Share of the slots the churner's keys take.
const CHURN_SHARE: f64 = 0.10;

/// `Full` answers in a row after which a filler stops short of its share.
const FULL_STREAK: usize = 8;

/// Inserts answered `Full` while other threads ran, over the whole test.
static RACING_FULLS: AtomicUsize = AtomicUsize::new(0);

/// What the builder is told: a false positive rate or a fingerprint width, and each other
/// setting given or left to the builder.
#[derive(Clone, Copy, Debug)]
struct Request {
    rate: Option<f64>,
    fingerprint_bits: Option<u32>,
    bucket_size: Option<usize>,
    semi_sorted: Option<bool>,
    layout: Option<TableLayout>,
}

impl Request {
    fn build(&self) -> Option<ConcurrentCuckooFilter> {
        let mut builder = ConcurrentCuckooFilter::builder().capacity(CAPACITY);
        if let Some(rate) = self.rate {
            builder = builder.false_positive_rate(rate);
        }
        if let Some(bits) = self.fingerprint_bits {
            builder = builder.fingerprint_bits(bits);
        }
        if let Some(size) = self.bucket_size {
            builder = builder.bucket_size(size);
        }
        if let Some(semi_sorted) = self.semi_sorted {
            builder = builder.semi_sorted(semi_sorted);
        }
        if let Some(layout) = self.layout {
            builder = builder.layout(layout);
        }
        builder.build().ok()
    }
}

/// A built table's shape: bucket size, fingerprint width, semi-sorted, bucket words.
type Shape = (usize, u32, bool, bool);

fn shape_of(filter: &ConcurrentCuckooFilter) -> Shape {
    (
        filter.bucket_size(),
        filter.fingerprint_bits(),
        filter.is_semi_sorted(),
        filter.layout() == TableLayout::BucketWord,
    )
}

/// Every distinct shape the builder makes, with one request for each: first those it picks for
/// a false positive rate, then those only an explicit width gives (8-slot 4-bit buckets: no
/// rate needs fewer than 5 bits in 8 slots).
fn shapes() -> BTreeMap<Shape, Request> {
    // Sixteen rates per halving, from 0.96 to 2^-40: every whole-bit width has rates that round
    // to it, down past the narrowest rate 32 bits reach.
    let rates = (1..=16 * 40).map(|step| (Some((-f64::from(step) / 16.0).exp2()), None));
    let widths = (0..=40).map(|bits| (None, Some(bits)));
    let mut found = BTreeMap::new();
    for (rate, fingerprint_bits) in rates.chain(widths) {
        for bucket_size in [None, Some(2), Some(4), Some(8)] {
            for semi_sorted in [None, Some(true), Some(false)] {
                for layout in [
                    None,
                    Some(TableLayout::Packed),
                    Some(TableLayout::BucketWord),
                ] {
                    let request = Request {
                        rate,
                        fingerprint_bits,
                        bucket_size,
                        semi_sorted,
                        layout,
                    };
                    if let Some(filter) = request.build() {
                        found.entry(shape_of(&filter)).or_insert(request);
                    }
                }
            }
        }
    }
    found
}

/// Checks that the shapes found run, for each bucket size, semi-sorting and layout, over
/// consecutive widths, and that packed buckets reach the widest fingerprint: a sweep that
/// skipped a width would show as a gap.
fn check_sweep(shapes: &BTreeMap<Shape, Request>) {
    let mut groups: BTreeMap<(usize, bool, bool), Vec<u32>> = BTreeMap::new();
    for &(size, bits, semi_sorted, words) in shapes.keys() {
        groups
            .entry((size, semi_sorted, words))
            .or_default()
            .push(bits);
    }
    assert_eq!(
        groups.len(),
        7,
        "bucket sizes, semi-sorting and layouts: {groups:?}"
    );
    for ((size, semi_sorted, words), widths) in &groups {
        let (first, last) = (widths[0], widths[widths.len() - 1]);
        assert_eq!(widths.len() as u32, last - first + 1, "a gap: {groups:?}");
        assert!(
            *words || last == 32,
            "b={size} semi={semi_sorted} ends at {last}"
        );
    }
}

/// Xorshift64: enough to pick keys and operations, seeded per thread and round.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (((self.0 >> 32) * n as u64) >> 32) as usize
    }
}

/// Key `i` of an owner; probe keys use owner numbers from 100.
fn key(owner: u64, i: usize) -> u64 {
    (owner + 1) << 40 | i as u64
}

/// The keys of one owner thread, and a state per key that other threads read: odd while the key
/// is in the filter, moved to even before the owner removes it.
struct Owner<'a> {
    id: u64,
    quota: usize,
    present: Vec<usize>,
    absent: Vec<usize>,
    states: &'a [AtomicU32],
}

impl<'a> Owner<'a> {
    fn new(id: u64, quota: usize, states: &'a [AtomicU32]) -> Self {
        Self {
            id,
            quota,
            present: Vec::new(),
            absent: (0..states.len()).collect(),
            states,
        }
    }

    fn key(&self, i: usize) -> u64 {
        key(self.id, i)
    }

    /// Inserts an absent key; `Full` leaves it absent.
    fn insert_one(
        &mut self,
        filter: &ConcurrentCuckooFilter,
        rng: &mut Rng,
    ) -> Result<bool, String> {
        let at = rng.below(self.absent.len());
        let i = self.absent[at];
        match filter.insert(&self.key(i)) {
            Ok(()) => {
                self.absent.swap_remove(at);
                self.present.push(i);
                self.states[i].fetch_add(1, Ordering::SeqCst);
                Ok(true)
            }
            Err(InsertError::Full) => {
                RACING_FULLS.fetch_add(1, Ordering::Relaxed);
                Ok(false)
            }
            Err(err) => Err(format!("owner {}: insert answered {err:?}", self.id)),
        }
    }

    /// Removes a present key, which must succeed.
    fn remove_one(&mut self, filter: &ConcurrentCuckooFilter, rng: &mut Rng) -> Result<(), String> {
        let at = rng.below(self.present.len());
        let i = self.present.swap_remove(at);
        self.states[i].fetch_add(1, Ordering::SeqCst);
        if !filter.remove(&self.key(i)) {
            return Err(format!("owner {}: remove of live key {i} failed", self.id));
        }
        self.absent.push(i);
        Ok(())
    }

    /// Looks up one of its own live keys.
    fn check_own(&self, filter: &ConcurrentCuckooFilter, rng: &mut Rng) -> Result<(), String> {
        if self.present.is_empty() {
            return Ok(());
        }
        let i = self.present[rng.below(self.present.len())];
        if filter.contains(&self.key(i)) {
            Ok(())
        } else {
            Err(format!("false negative: owner {} of its key {i}", self.id))
        }
    }
}

/// Another thread's view of an owner: its key states, read while the owner runs.
#[derive(Clone, Copy)]
struct View<'a> {
    id: u64,
    states: &'a [AtomicU32],
}

impl View<'_> {
    /// Looks up a random key of the owner if it is live: a miss counts only if the key stayed
    /// live, state unchanged, throughout the lookup.
    fn check(&self, filter: &ConcurrentCuckooFilter, rng: &mut Rng) -> Result<(), String> {
        let i = rng.below(self.states.len());
        let before = self.states[i].load(Ordering::SeqCst);
        if before % 2 == 0 {
            return Ok(());
        }
        if filter.contains(&key(self.id, i)) || self.states[i].load(Ordering::SeqCst) != before {
            Ok(())
        } else {
            Err(format!("false negative: owner {}'s live key {i}", self.id))
        }
    }
}

/// What the threads of a round share.
struct Round<'a> {
    filter: &'a ConcurrentCuckooFilter,
    views: [View<'a>; 3],
    /// Fillers and the churner that have finished, by return or by panic.
    done: AtomicUsize,
    /// Set on the first error, so that the other threads stop.
    stop: AtomicBool,
}

/// Counts one finished thread even if it panics, so that the threads waiting for it end.
struct Finished<'a>(&'a AtomicUsize);

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl Round<'_> {
    fn check_others(&self, me: u64, rng: &mut Rng) -> Result<(), String> {
        let view = self.views[rng.below(self.views.len())];
        if view.id == me {
            return Ok(());
        }
        view.check(self.filter, rng)
    }

    fn stopped(&self, result: &Result<(), String>) -> bool {
        if result.is_err() {
            self.stop.store(true, Ordering::SeqCst);
        }
        self.stop.load(Ordering::SeqCst)
    }

    /// A filler's turn: a third of its keys out, then in until its quota is, or `Full` keeps
    /// answering.
    fn fill(&self, owner: &mut Owner<'_>, rng: &mut Rng) -> Result<(), String> {
        let _finished = Finished(&self.done);
        for _ in 0..owner.present.len() / 3 {
            let result = owner
                .remove_one(self.filter, rng)
                .and_then(|()| self.check_others(owner.id, rng));
            if self.stopped(&result) {
                return result;
            }
        }
        let mut fulls = 0;
        while owner.present.len() < owner.quota && fulls < FULL_STREAK {
            let result = owner.insert_one(self.filter, rng).map(|inserted| {
                fulls = if inserted { 0 } else { fulls + 1 };
            });
            let result = result
                .and_then(|()| owner.check_own(self.filter, rng))
                .and_then(|()| self.check_others(owner.id, rng));
            if self.stopped(&result) {
                return result;
            }
        }
        Ok(())
    }

    /// The churner's turn: a remove and an insert at a time, until the fillers are done and it
    /// has replaced about its quota.
    fn churn(&self, owner: &mut Owner<'_>, rng: &mut Rng) -> Result<(), String> {
        let _finished = Finished(&self.done);
        let mut ops = 0;
        while self.done.load(Ordering::SeqCst) < 2 || ops < owner.quota {
            ops += 1;
            let mut result = Ok(());
            if owner.present.len() >= owner.quota {
                result = owner.remove_one(self.filter, rng);
            }
            let result = result
                .and_then(|()| owner.insert_one(self.filter, rng).map(drop))
                .and_then(|()| owner.check_own(self.filter, rng))
                .and_then(|()| self.check_others(owner.id, rng));
            if self.stopped(&result) {
                return result;
            }
        }
        Ok(())
    }

    /// The reader's turn: lookups of others' live keys until the writers are done.
    fn read(&self, rng: &mut Rng) -> Result<(), String> {
        while self.done.load(Ordering::SeqCst) < 3 {
            let result = self.check_others(u64::MAX, rng);
            if self.stopped(&result) {
                return result;
            }
        }
        Ok(())
    }
}

/// Joins a worker, passing its panic on.
fn joined<T>(handle: thread::ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Checks, with no thread running, that `len` counts exactly the owners' keys and every one is
/// found; then that inserts of new keys up to the first `Full` leave everything as it was when
/// that one fails. Returns the load.
fn check_paused(
    filter: &ConcurrentCuckooFilter,
    owners: &[Owner<'_>],
    probe: u64,
) -> Result<f64, String> {
    let live: usize = owners.iter().map(|o| o.present.len()).sum();
    if filter.len() != live {
        return Err(format!("len {} with {live} keys live", filter.len()));
    }
    let all_found = || {
        owners.iter().all(|owner| {
            owner
                .present
                .iter()
                .all(|&i| filter.contains(&owner.key(i)))
                && owner.present.len()
                    == owner
                        .states
                        .iter()
                        .filter(|s| s.load(Ordering::SeqCst) % 2 == 1)
                        .count()
        })
    };
    if !all_found() {
        return Err(format!("a live key is missing at a pause, len {live}"));
    }
    let load = filter.load_factor();
    let extra_key = |i: usize| key(probe, i);
    let slots = filter.bucket_count() * filter.bucket_size();
    let mut extra = 0;
    while extra <= slots {
        let before = filter.len();
        match filter.insert(&extra_key(extra)) {
            Ok(()) => extra += 1,
            Err(InsertError::Full) => {
                if filter.len() != before {
                    return Err(format!(
                        "a Full insert moved len from {before} to {}",
                        filter.len()
                    ));
                }
                break;
            }
            Err(err) => return Err(format!("insert answered {err:?}")),
        }
    }
    if extra > slots {
        return Err(format!("{extra} inserts into {slots} slots and none Full"));
    }
    if !all_found() || !(0..extra).all(|i| filter.contains(&extra_key(i))) {
        return Err(format!(
            "a key is missing after a Full insert at len {}",
            filter.len()
        ));
    }
    if !(0..extra).all(|i| filter.remove(&extra_key(i))) || filter.len() != live {
        return Err(format!(
            "removing the {extra} probe keys left len {}",
            filter.len()
        ));
    }
    Ok(load)
}

/// Rounds of one shape; the pauses' lowest and highest load.
fn run_shape(request: &Request, rounds: usize) -> Result<(f64, f64), String> {
    let filter = request.build().expect("found by building it");
    let slots = (filter.bucket_count() * filter.bucket_size()) as f64;
    let target = match filter.bucket_size() {
        2 => 0.90,
        4 => 0.94,
        _ => 0.96,
    };
    let churn = (slots * CHURN_SHARE) as usize;
    let fill = ((slots * target) as usize - churn) / 2;
    let quotas = [fill, fill, churn];
    let states = quotas.map(|quota| {
        (0..2 * quota + 16)
            .map(|_| AtomicU32::new(0))
            .collect::<Vec<_>>()
    });
    let views = [0, 1, 2].map(|id| View {
        id,
        states: &states[id as usize],
    });
    let mut owners = [0, 1, 2].map(|id| Owner::new(id, quotas[id as usize], &states[id as usize]));
    let (mut lowest, mut highest) = (1.0f64, 0.0f64);
    for round in 0..rounds {
        let shared = Round {
            filter: &filter,
            views,
            done: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
        };
        let seed = round as u64 * 4;
        let [a, b, c] = &mut owners;
        let results: Vec<_> = thread::scope(|scope| {
            let shared = &shared;
            let workers = [
                scope.spawn(move || shared.fill(a, &mut Rng::new(seed))),
                scope.spawn(move || shared.fill(b, &mut Rng::new(seed + 1))),
                scope.spawn(move || shared.churn(c, &mut Rng::new(seed + 2))),
                scope.spawn(move || shared.read(&mut Rng::new(seed + 3))),
            ];
            workers.into_iter().map(joined).collect()
        });
        if let Some(err) = results.into_iter().find_map(Result::err) {
            return Err(format!("round {round}: {err}"));
        }
        let load = check_paused(&filter, &owners, 100 + round as u64)
            .map_err(|err| format!("pause after round {round}: {err}"))?;
        lowest = lowest.min(load);
        highest = highest.max(load);
    }
    Ok((lowest, highest))
}

#[test]
fn every_shape_holds_its_keys_under_concurrent_writers_near_full_load() {
    let rounds: usize = std::env::var("SHAPE_MATRIX_ROUNDS")
        .map(|s| s.parse().expect("SHAPE_MATRIX_ROUNDS is a count"))
        .unwrap_or(40);
    let shapes = shapes();
    check_sweep(&shapes);
    let mut failures = Vec::new();
    let (mut lowest, mut highest) = (1.0f64, 0.0f64);
    for (shape, request) in &shapes {
        match run_shape(request, rounds) {
            Ok((low, high)) => {
                lowest = lowest.min(low);
                highest = highest.max(high);
                if low < MIN_LOAD {
                    failures.push(format!("{shape:?}: a pause at load {low:.3}"));
                }
            }
            Err(err) => failures.push(format!("{shape:?} ({request:?}): {err}")),
        }
    }
    println!(
        "{} shapes, {rounds} rounds each, loads at pauses {lowest:.3} to {highest:.3}, \
         {} inserts Full among racing threads",
        shapes.len(),
        RACING_FULLS.load(Ordering::Relaxed)
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
