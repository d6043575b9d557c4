//! How fast a lookup of one key per call can be, whatever its code: the default filter's lookup
//! written as a bare loop with every constant in a register, beside the same loop with the
//! paper's power-of-two placement, each with and without the reload of the first bucket that
//! makes a lookup safe against racing writers, and the crate's own `contains`.
//!
//! ```text
//! cargo run --release -p ccf-benches --example lookup_floor [-- N]
//! ```
//!
//! Every loop reads tables of one 64-bit word per bucket, as the default filter's: four 12-bit
//! fingerprints and a 16-bit version (`src/raw/word.rs`). Each hashes the key as the default
//! hasher hashes a `u64` (one 64×64→128-bit multiply folded, `src/hash.rs`), with constant
//! words in place of the ones the hasher derives from its seed, and tests both buckets without a
//! branch on what it finds, as `contains` does.
//! - `format`: the crate's placement (`src/raw/index.rs`): a table of any bucket count, the
//!   fingerprint and the first bucket by multiply-shift, the second by `(h(fp) - i) mod n`. The
//!   table has the default filter's bucket count for N keys; before timing, the loop's placement
//!   of 1000 keys is checked against the filter's own (`debug_candidates`).
//! - `power of two`: the paper's placement (its Section 3.1), the shape of the C++ filter's: a
//!   power-of-two bucket count, the fingerprint and the first bucket by masks, the second by
//!   `i ⊕ h(fp)`. Its table is the next power of two of buckets, up to twice the memory.
//! - `validated`: the first bucket is loaded again after the second and a miss is trusted only
//!   if it is unchanged, the check `contains` needs to miss no item that a writer is moving; the
//!   `unvalidated` loops are correct only with no writer, as the C++ filter is.
//! - `packed`: the packed layout's lookup (`TableLayout::Packed`): the crate's placement, the
//!   same buckets 48 bits each end to end, each read as the 64 bits from its first (two words
//!   and a shift), validated as `contains` validates it, by the stamps of the two buckets'
//!   stripes (4096 of them) read before the buckets and again after.
//! - `contains`, `contains, packed`: a default filter and a packed one with N random keys
//!   inserted, through the public API.
//!
//! N (default 20,000,000) keys' tables, filled with random words; 1M random lookups per pass
//! (not members: every loop reads both buckets whatever it finds), 7 passes, the variants taking
//! turns pass by pass. Prints the median rate of each in million lookups per second and its
//! ratio to the unvalidated power-of-two loop, the shape of the C++ filter's lookup.

use ccf_benches::args::count_arg;
use ccf_benches::huge_pages::advise_huge_pages;
use ccf_benches::keys::Rng;
use ccf_benches::measure::median;
use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, TableLayout};
use core::hash::BuildHasher;
use std::hint::black_box;
use std::sync::atomic::{fence, AtomicU64, Ordering};
use std::time::Instant;

const LOOKUPS: usize = 1_000_000;
const PASSES: usize = 7;
/// 2^64 divided by the golden ratio: the crate's multiplier for a fingerprint's bucket.
const FIBONACCI: u64 = 0x9e37_79b9_7f4a_7c15;
/// The lowest and the highest bit of each 12-bit lane of a bucket word's fingerprints.
const LANE_LOW: u64 = 0x0010_0100_1001;
const LANE_HIGH: u64 = 0x8008_0080_0800;
const FINGERPRINTS: u64 = (1 << 48) - 1;
/// Words in the place of the default hasher's: any odd multiplier and two words of mixed bits.
const SPREAD: u64 = 0x9fb2_1c65_1e98_df25;
const MIX: [u64; 2] = [0x2d35_8dcc_aa6c_78a5, 0x8bb8_4b93_962e_acc9];

/// A `u64` key's hash, as the default hasher computes it for its words.
#[inline(always)]
fn hash(key: u64) -> u64 {
    let spread = key.wrapping_mul(SPREAD);
    let product = u128::from(spread ^ MIX[0]) * u128::from(spread.rotate_left(32) ^ MIX[1]);
    product as u64 ^ (product >> 64) as u64
}

/// A fingerprint and its two buckets.
struct Candidates {
    fp: u64,
    first: usize,
    second: usize,
}

/// The crate's placement in a table of `buckets` buckets.
#[inline(always)]
fn format_candidates(hash: u64, buckets: u64) -> Candidates {
    let fp = (((hash & 0xffff_ffff) * 4095) >> 32) + 1;
    let first = ((hash >> 32) * buckets) >> 32;
    let h = ((fp.wrapping_mul(FIBONACCI) >> 32) * buckets) >> 32;
    let second = if h >= first {
        h - first
    } else {
        h + buckets - first
    };
    Candidates {
        fp,
        first: first as usize,
        second: second as usize,
    }
}

/// The paper's placement in a table of `mask + 1` buckets, a power of two.
#[inline(always)]
fn power_of_two_candidates(hash: u64, mask: u64) -> Candidates {
    let low = hash & 0xfff;
    let fp = low + u64::from(low == 0);
    let first = (hash >> 32) & mask;
    let second = (first ^ (fp.wrapping_mul(FIBONACCI) >> 32)) & mask;
    Candidates {
        fp,
        first: first as usize,
        second: second as usize,
    }
}

/// Not 0 if a lane of `word`'s fingerprints holds `fp` (lanes above the first that does may
/// be marked too; the version's bits, above the lanes, are masked off by `LANE_HIGH`).
#[inline(always)]
fn matches(word: u64, fp: u64) -> u64 {
    let x = word ^ fp.wrapping_mul(LANE_LOW);
    x.wrapping_sub(LANE_LOW) & !x & LANE_HIGH
}

/// How many of `keys` one table's lookups find, placed by `place` (which gets the hash and
/// `size`, the bucket count or its mask); with `VALIDATED`, a miss whose first bucket changed
/// counts as found, where `contains` would read again.
#[inline(always)]
fn lookups<const VALIDATED: bool>(
    words: &[AtomicU64],
    size: u64,
    keys: &[u64],
    place: impl Fn(u64, u64) -> Candidates,
) -> usize {
    let mut found = 0;
    let word = |bucket: usize| {
        debug_assert!(bucket < words.len());
        // SAFETY: both placements return buckets below the table's count: `format_candidates`
        // multiplies 32-bit values by the count and keeps the top 32 bits, and reflects within
        // it; `power_of_two_candidates` masks by the count less one. `main` passes each the
        // size of the table it reads.
        unsafe { words.get_unchecked(bucket) }
    };
    for &key in keys {
        let c = place(hash(key), size);
        let first = word(c.first).load(Ordering::Acquire);
        let second = word(c.second).load(Ordering::Acquire);
        let hit = matches(first, c.fp) | matches(second, c.fp) != 0;
        if VALIDATED {
            let unchanged = word(c.first).load(Ordering::Relaxed) == first;
            found += usize::from(hit || !unchanged);
        } else {
            found += usize::from(hit);
        }
    }
    found
}

#[inline(never)]
fn format_validated(words: &[AtomicU64], buckets: u64, keys: &[u64]) -> usize {
    lookups::<true>(words, buckets, keys, format_candidates)
}

#[inline(never)]
fn format_unvalidated(words: &[AtomicU64], buckets: u64, keys: &[u64]) -> usize {
    lookups::<false>(words, buckets, keys, format_candidates)
}

#[inline(never)]
fn power_of_two_validated(words: &[AtomicU64], mask: u64, keys: &[u64]) -> usize {
    lookups::<true>(words, mask, keys, power_of_two_candidates)
}

#[inline(never)]
fn power_of_two_unvalidated(words: &[AtomicU64], mask: u64, keys: &[u64]) -> usize {
    lookups::<false>(words, mask, keys, power_of_two_candidates)
}

#[inline(never)]
fn packed_validated(
    words: &[AtomicU64],
    stamps: &[AtomicU64],
    buckets: u64,
    keys: &[u64],
) -> usize {
    const STRIPES: usize = 4096;
    assert_eq!(stamps.len(), STRIPES);
    assert!(words.len() as u64 > (buckets * 48).div_ceil(64));
    // SAFETY, for each of the three: `stripe` masks by the count less one, a power of two; a
    // bucket below `buckets` (see `lookups`) starts at a bit below `buckets * 48`, so its word
    // and the next one are below `words.len()`, asserted above.
    let stamp = |bucket: usize| unsafe { stamps.get_unchecked(bucket & (STRIPES - 1)) };
    let window = |bucket: usize| {
        let bit = bucket as u64 * 48;
        let word = (bit / 64) as usize;
        let (low, high) = unsafe {
            (
                words.get_unchecked(word).load(Ordering::Relaxed),
                words.get_unchecked(word + 1).load(Ordering::Relaxed),
            )
        };
        ((u128::from(high) << 64 | u128::from(low)) >> (bit % 64)) as u64
    };
    let mut found = 0;
    for &key in keys {
        let c = format_candidates(hash(key), buckets);
        let seen = [c.first, c.second].map(|bucket| stamp(bucket).load(Ordering::Acquire) & !1);
        let hit = matches(window(c.first), c.fp) | matches(window(c.second), c.fp) != 0;
        fence(Ordering::Acquire);
        let moved = (stamp(c.first).load(Ordering::Relaxed) ^ seen[0])
            | (stamp(c.second).load(Ordering::Relaxed) ^ seen[1]);
        found += usize::from(hit || moved != 0);
    }
    found
}

#[inline(never)]
fn crate_contains(filter: &ConcurrentCuckooFilter, keys: &[u64]) -> usize {
    keys.iter().filter(|&key| filter.contains(key)).count()
}

/// Words a 2 MiB huge page holds.
const HUGE_PAGE_WORDS: usize = (2 << 20) / 8;

/// A buffer of `count` words of random fingerprints from its first 2 MiB boundary, as the
/// crate places its tables, so that the kernel can back all of it with huge pages.
struct RandomWords {
    buffer: Vec<AtomicU64>,
    start: usize,
    count: usize,
}

impl RandomWords {
    fn new(count: usize, rng: &mut Rng) -> Self {
        let mut buffer: Vec<AtomicU64> = Vec::with_capacity(count + HUGE_PAGE_WORDS);
        advise_huge_pages(buffer.spare_capacity_mut());
        let address = buffer.as_ptr() as usize;
        let start = (address.next_multiple_of(HUGE_PAGE_WORDS * 8) - address) / 8;
        buffer.extend((0..count + start).map(|_| AtomicU64::new(rng.next_u64() & FINGERPRINTS)));
        Self {
            buffer,
            start,
            count,
        }
    }

    fn words(&self) -> &[AtomicU64] {
        &self.buffer[self.start..self.start + self.count]
    }
}

fn main() {
    let n: usize = count_arg(
        20_000_000,
        "cargo run --release -p ccf-benches --example lookup_floor -- [N]",
    );
    let mut rng = Rng::new(0xf100);
    let members: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
    let filled = |layout: TableLayout| {
        let built = ConcurrentCuckooFilter::builder()
            .capacity(n)
            .layout(layout)
            .build();
        let filter = built.unwrap_or_else(|err| {
            eprintln!("{layout}: {err}");
            std::process::exit(1)
        });
        if let Err(err) = filter.try_extend(&members) {
            eprintln!("filling the {layout} filter: {err}");
            std::process::exit(1);
        }
        filter
    };
    let (filter, packed_filter) = (filled(TableLayout::BucketWord), filled(TableLayout::Packed));
    drop(members);
    let buckets = filter.bucket_count();
    let format = RandomWords::new(buckets, &mut rng);
    let power_of_two = RandomWords::new(buckets.next_power_of_two(), &mut rng);
    let packed = RandomWords::new((buckets * 48).div_ceil(64) + 1, &mut rng);
    let (format, power_of_two, packed) = (format.words(), power_of_two.words(), packed.words());
    let mask = power_of_two.len() as u64 - 1;
    let stamps: Vec<AtomicU64> = (0..4096).map(|i| AtomicU64::new(i << 1)).collect();
    let keys: Vec<u64> = (0..LOOKUPS).map(|_| rng.next_u64()).collect();
    // The `format` loops place a hash as the crate does: checked against the filter's own
    // placement of the same keys, hashed with its hasher.
    for key in &keys[..1000] {
        let ours = format_candidates(filter.hasher().hash_one(key), buckets as u64);
        let crate_placed = filter.debug_candidates(key);
        assert_eq!(
            (ours.fp, ours.first, ours.second),
            (
                u64::from(crate_placed.fingerprint),
                crate_placed.first,
                crate_placed.second
            ),
            "the format loops' placement differs from the crate's"
        );
    }

    type Pass<'a> = Box<dyn Fn() -> usize + 'a>;
    let variants: [(&str, Pass); 7] = [
        (
            "power of two, unvalidated",
            Box::new(|| power_of_two_unvalidated(power_of_two, mask, &keys)),
        ),
        (
            "power of two, validated",
            Box::new(|| power_of_two_validated(power_of_two, mask, &keys)),
        ),
        (
            "format, unvalidated",
            Box::new(|| format_unvalidated(format, buckets as u64, &keys)),
        ),
        (
            "format, validated",
            Box::new(|| format_validated(format, buckets as u64, &keys)),
        ),
        ("contains", Box::new(|| crate_contains(&filter, &keys))),
        (
            "packed, validated",
            Box::new(|| packed_validated(packed, &stamps, buckets as u64, &keys)),
        ),
        (
            "contains, packed",
            Box::new(|| crate_contains(&packed_filter, &keys)),
        ),
    ];
    let mut rates = vec![Vec::with_capacity(PASSES); variants.len()];
    for _ in 0..PASSES {
        for ((_, pass), rates) in variants.iter().zip(&mut rates) {
            let started = Instant::now();
            black_box(pass());
            rates.push(LOOKUPS as f64 / started.elapsed().as_secs_f64() / 1e6);
        }
    }
    println!(
        "{n} keys: {buckets} buckets ({:.1} MB), power of two {} ({:.1} MB); million lookups per \
         second, median of {PASSES} passes of 1M",
        (buckets * 8) as f64 / 1e6,
        power_of_two.len(),
        (power_of_two.len() * 8) as f64 / 1e6
    );
    let medians: Vec<f64> = rates.iter_mut().map(|rates| median(rates)).collect();
    for ((name, _), rate) in variants.iter().zip(&medians) {
        println!("  {name:<26} {rate:8.2}  {:.2}×", rate / medians[0]);
    }
}
