//! How fast a lookup of one key per call can be, whatever its code: the default filter's lookup
//! written as a bare loop with every constant in a register, beside the same loop with the
//! paper's power-of-two placement and with two XOR-in-block placements, each with and without the reload of the first bucket that
//! makes a lookup safe against racing writers, and the crate's own `contains`.
//!
//! ```text
//! cargo run --release -p ccf-benches --example lookup_floor [-- N]
//! ```
//!
//! Every loop reads tables of one 64-bit word per bucket, as the default filter's: four 12-bit
//! fingerprints and a 16-bit version (`src/raw/bucket_word.rs`). Each hashes the key as the default
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
//! - `blocks of 256`: the vacuum filter's placement (Wang et al., PVLDB 13(2)) with one block
//!   size: a table of any whole number of 256-bucket blocks, the first bucket by multiply-shift
//!   as the crate's, the fingerprint by a mask as the paper's, the second bucket by `i ⊕ h(fp)`
//!   within the first's block: one multiply between the hash and the second bucket, as the
//!   paper's, where the crate's placement chains three.
//! - `mixed blocks`: the same with four block sizes, a fingerprint's two low bits choosing one of
//!   L, L/2, L/4 and L/8 buckets, L the largest power of two that rounds the table up by at most
//!   1/32 (at least 256); the large blocks let a full block's fingerprints move out.
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
//! ratio to the unvalidated power-of-two loop, the shape of the C++ filter's lookup. Then, for
//! each placement, the load at the first failed insert of random keys into 4-slot buckets by
//! random walks of up to 500 kicks, in a table of N's bucket count (at most 1.5M buckets, which
//! takes seconds) rounded up as the placement needs.

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

/// The bucket `h(fp)` reflects `bucket` to in the crate's placement, in a table of `buckets`.
#[inline(always)]
fn format_alternate(bucket: u64, fp: u64, buckets: u64) -> u64 {
    let h = ((fp.wrapping_mul(FIBONACCI) >> 32) * buckets) >> 32;
    if h >= bucket {
        h - bucket
    } else {
        h + buckets - bucket
    }
}

/// The crate's placement in a table of `buckets` buckets.
#[inline(always)]
fn format_candidates(hash: u64, buckets: u64) -> Candidates {
    let fp = (((hash & 0xffff_ffff) * 4095) >> 32) + 1;
    let first = ((hash >> 32) * buckets) >> 32;
    Candidates {
        fp,
        first: first as usize,
        second: format_alternate(first, fp, buckets) as usize,
    }
}

/// A fingerprint of the low 12 bits of `hash`, 0 taken as 1 (the paper's).
#[inline(always)]
fn low_fingerprint(hash: u64) -> u64 {
    let low = hash & 0xfff;
    low + u64::from(low == 0)
}

/// The bucket `bucket ⊕ h(fp)` within the aligned block of `mask + 1` buckets (a power of two)
/// that holds `bucket`: the paper's alternate when the block is the whole table.
#[inline(always)]
fn xor_alternate(bucket: u64, fp: u64, mask: u64) -> u64 {
    bucket ^ ((fp.wrapping_mul(FIBONACCI) >> 32) & mask)
}

/// `fp` in `first` and in its alternate within the block of `mask + 1` that holds it.
#[inline(always)]
fn xor_candidates(fp: u64, first: u64, mask: u64) -> Candidates {
    Candidates {
        fp,
        first: first as usize,
        second: xor_alternate(first, fp, mask) as usize,
    }
}

/// The paper's placement in a table of `mask + 1` buckets, a power of two.
#[inline(always)]
fn power_of_two_candidates(hash: u64, mask: u64) -> Candidates {
    xor_candidates(low_fingerprint(hash), (hash >> 32) & mask, mask)
}

/// Buckets per block of the XOR-in-block placement, and the least large block of the mixed one.
const BLOCK: u64 = 256;

/// The XOR-in-block placement (the vacuum filter's, Wang et al., PVLDB 13(2)) in a table of
/// `buckets` buckets, a whole number of blocks of `mask + 1`: the first bucket by multiply-shift
/// as the crate's, the second by `i ⊕ h(fp)` inside the first's block.
#[inline(always)]
fn xor_block_candidates(hash: u64, buckets: u64, mask: u64) -> Candidates {
    xor_candidates(low_fingerprint(hash), ((hash >> 32) * buckets) >> 32, mask)
}

/// The block mask of `fp` in the mixed-block placement: the fingerprints move within blocks of
/// four sizes, `large + 1` and its half, quarter and eighth, by their two low bits; the large
/// blocks spread the load that small ones alone cannot (as the vacuum filter's four ranges).
#[inline(always)]
fn mixed_mask(fp: u64, large: u64) -> u64 {
    large >> (fp & 3)
}

/// The mixed-block placement in a table of a whole number of large blocks of `large + 1`.
#[inline(always)]
fn mixed_block_candidates(hash: u64, buckets: u64, large: u64) -> Candidates {
    let fp = low_fingerprint(hash);
    xor_block_candidates(hash, buckets, mixed_mask(fp, large))
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
        // SAFETY: every placement returns buckets below the table's count: `format_candidates`
        // multiplies 32-bit values by the count and keeps the top 32 bits, and reflects within
        // it; `power_of_two_candidates` masks by the count less one; the block placements
        // multiply-shift the first, and XOR it below its block's end, which the table (a whole
        // number of blocks) holds. `main` passes each the size of the table it reads.
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
fn block_validated(words: &[AtomicU64], buckets: u64, keys: &[u64]) -> usize {
    lookups::<true>(words, buckets, keys, |hash, buckets| {
        xor_block_candidates(hash, buckets, BLOCK - 1)
    })
}

#[inline(never)]
fn block_unvalidated(words: &[AtomicU64], buckets: u64, keys: &[u64]) -> usize {
    lookups::<false>(words, buckets, keys, |hash, buckets| {
        xor_block_candidates(hash, buckets, BLOCK - 1)
    })
}

#[inline(never)]
fn mixed_validated(words: &[AtomicU64], buckets: u64, large: u64, keys: &[u64]) -> usize {
    lookups::<true>(words, buckets, keys, |hash, buckets| {
        mixed_block_candidates(hash, buckets, large)
    })
}

#[inline(never)]
fn mixed_unvalidated(words: &[AtomicU64], buckets: u64, large: u64, keys: &[u64]) -> usize {
    lookups::<false>(words, buckets, keys, |hash, buckets| {
        mixed_block_candidates(hash, buckets, large)
    })
}

/// Asserts that `c`'s buckets are in a table of `buckets` and in one block of `mask + 1`, each
/// the other's alternate: what lets the block loops read unchecked.
fn check_block(c: &Candidates, buckets: usize, mask: u64) {
    assert!(
        c.first < buckets && c.second < buckets,
        "a block placement left its table"
    );
    assert_eq!(
        c.first as u64 | mask,
        c.second as u64 | mask,
        "a block placement left its block"
    );
    assert_eq!(xor_alternate(c.second as u64, c.fp, mask), c.first as u64);
}

/// Kicks a random walk makes before an insert fails.
const KICKS: usize = 500;

/// The share of `buckets` × 4 slots held when the first insert of random keys fails, each
/// placed by `place` and moved by `alternate` (a bucket and a fingerprint to its other bucket):
/// an insert takes a free slot of its two buckets, else evicts a random slot's fingerprint of
/// one of them, chosen at random, and takes it to its other bucket, up to `KICKS` times.
fn load_at_first_failure(
    buckets: usize,
    rng: &mut Rng,
    place: impl Fn(u64) -> Candidates,
    alternate: impl Fn(usize, u64) -> usize,
) -> f64 {
    let mut table = vec![[0u16; 4]; buckets];
    let put = |bucket: &mut [u16; 4], fp: u16| match bucket.iter_mut().find(|slot| **slot == 0) {
        Some(slot) => {
            *slot = fp;
            true
        }
        None => false,
    };
    for items in 0.. {
        let c = place(hash(rng.next_u64()));
        let mut fp = c.fp as u16;
        if put(&mut table[c.first], fp) || put(&mut table[c.second], fp) {
            continue;
        }
        let mut bucket = if rng.next_u64() & 1 == 0 {
            c.first
        } else {
            c.second
        };
        let placed = (0..KICKS).any(|_| {
            core::mem::swap(&mut fp, &mut table[bucket][rng.below(4) as usize]);
            bucket = alternate(bucket, u64::from(fp));
            put(&mut table[bucket], fp)
        });
        if !placed {
            return items as f64 / (buckets * 4) as f64;
        }
    }
    unreachable!("a table of finite slots fills")
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
    let block = RandomWords::new(buckets.next_multiple_of(BLOCK as usize), &mut rng);
    let large = large_block(buckets);
    let mixed = RandomWords::new(buckets.next_multiple_of(large), &mut rng);
    let (format, power_of_two, packed) = (format.words(), power_of_two.words(), packed.words());
    let (block, mixed) = (block.words(), mixed.words());
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
    // The block loops read unchecked: each placement keeps both buckets in the table and in
    // one block, and takes either to the other.
    for &key in &keys[..1000] {
        let c = xor_block_candidates(hash(key), block.len() as u64, BLOCK - 1);
        check_block(&c, block.len(), BLOCK - 1);
        let c = mixed_block_candidates(hash(key), mixed.len() as u64, large as u64 - 1);
        check_block(&c, mixed.len(), mixed_mask(c.fp, large as u64 - 1));
    }

    type Pass<'a> = Box<dyn Fn() -> usize + 'a>;
    let variants: [(&str, Pass); 11] = [
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
        (
            "blocks of 256, unvalidated",
            Box::new(|| block_unvalidated(block, block.len() as u64, &keys)),
        ),
        (
            "blocks of 256, validated",
            Box::new(|| block_validated(block, block.len() as u64, &keys)),
        ),
        (
            "mixed blocks, unvalidated",
            Box::new(|| mixed_unvalidated(mixed, mixed.len() as u64, large as u64 - 1, &keys)),
        ),
        (
            "mixed blocks, validated",
            Box::new(|| mixed_validated(mixed, mixed.len() as u64, large as u64 - 1, &keys)),
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
    print_loads(buckets.min(LOAD_BUCKETS), &mut rng);
}

/// The most buckets the loads at the first failure are measured at: a larger table's takes
/// minutes.
const LOAD_BUCKETS: usize = 1_500_000;

/// The large block of the mixed placement for a table of `buckets`: a power of two, at least
/// `BLOCK`, small enough that rounding the table up to a whole number of them adds at most
/// 1/32 of it.
fn large_block(buckets: usize) -> usize {
    let share = (buckets / 32).max(BLOCK as usize);
    1 << share.ilog2()
}

/// The load at the first failed insert of each placement, in a table of about `buckets`.
fn print_loads(buckets: usize, rng: &mut Rng) {
    println!(
        "load at the first failed insert, 4-slot buckets, random walks of up to {KICKS} kicks:"
    );
    let row = |name: &str, buckets: usize, load: f64| {
        println!("  {name:<26} {buckets:>9} buckets  {:.2}%", load * 100.0)
    };
    let n = buckets as u64;
    let load = load_at_first_failure(
        buckets,
        rng,
        |hash| format_candidates(hash, n),
        |bucket, fp| format_alternate(bucket as u64, fp, n) as usize,
    );
    row("format", buckets, load);
    // The XOR placements: a bucket count, the first bucket of a hash, a fingerprint's block mask.
    type XorPlacement<'a> = (
        String,
        usize,
        &'a dyn Fn(u64, u64) -> u64,
        &'a dyn Fn(u64) -> u64,
    );
    let large = large_block(buckets) as u64 - 1;
    let xor_placements: [XorPlacement; 3] = [
        (
            "power of two".into(),
            buckets.next_power_of_two(),
            &|hash, pow| (hash >> 32) & (pow - 1),
            &|_| buckets.next_power_of_two() as u64 - 1,
        ),
        (
            "blocks of 256".into(),
            buckets.next_multiple_of(BLOCK as usize),
            &|hash, n| ((hash >> 32) * n) >> 32,
            &|_| BLOCK - 1,
        ),
        (
            format!("mixed blocks ({})", large + 1),
            buckets.next_multiple_of(large as usize + 1),
            &|hash, n| ((hash >> 32) * n) >> 32,
            &|fp| mixed_mask(fp, large),
        ),
    ];
    for (name, n, first, mask) in xor_placements {
        let load = load_at_first_failure(
            n,
            rng,
            |hash| {
                let fp = low_fingerprint(hash);
                xor_candidates(fp, first(hash, n as u64), mask(fp))
            },
            |bucket, fp| xor_alternate(bucket as u64, fp, mask(fp)) as usize,
        );
        row(&name, n, load);
    }
}
