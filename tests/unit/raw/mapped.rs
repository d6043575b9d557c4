use std::hash::BuildHasher;
use std::time::Instant;

use super::super::stripe::Guard;

use crate::sync::Ordering::Relaxed;
use crate::{ConcurrentCuckooFilter, TableLayout};

/// A writer killed between the two word stores of a straddling bucket, holding its stripe
/// with a stale count: the next reader waits out the liveness bound, finds the holder dead,
/// and recovers the stripe: the bucket's pre-image back, the count recomputed.
/// The dead writer's owner id: slot 199 of 128, an owner no process can be.
const DEAD: u64 = 200 << 32 | 1;

/// A live packed semi-sorted filter at `path` holding keys `0..1500`.
fn filled(path: &std::path::Path, capacity: usize) -> ConcurrentCuckooFilter {
    let _ = std::fs::remove_file(path);
    let filter = ConcurrentCuckooFilter::builder()
        .capacity(capacity)
        .layout(TableLayout::Packed)
        .fingerprint_bits(13)
        .semi_sorted(true)
        .create_shared(path)
        .unwrap();
    for i in 0..1500u64 {
        filter.insert(&i).unwrap();
    }
    filter
}

/// The stripe of `key`'s first bucket.
fn stripe_of(filter: &ConcurrentCuckooFilter, key: u64) -> usize {
    let raw = filter.raw();
    raw.stripes
        .of(raw.debug_candidates(filter.hasher().hash_one(key)).first)
}

/// What [`tear`] left: the torn bucket, its stripe and its bits before.
struct Torn {
    bucket: usize,
    stripe: usize,
    before: super::super::bucket::RawBucket,
}

/// Plays a writer that died holding the stripe of a bucket that straddles two words, having
/// journaled it, stored its second word (the journal's whole entry is needed to put it back)
/// and not yet its count (5 off).
fn tear(filter: &ConcurrentCuckooFilter) -> Torn {
    let raw = filter.raw();
    let bits = raw.codec.bucket_bits() as u64;
    let bucket = (0..raw.bucket_count())
        .find(|&b| (b as u64 * bits) % 64 + bits > 64 && raw.table.load(b) != [0, 0])
        .unwrap();
    let stripe = raw.stripes.of(bucket);
    let shared = raw.stripes.shared.as_ref().unwrap();
    let (stamps, count_shift) = raw.stripes.stamp_words();
    let stamp = &stamps[stripe];
    let before = raw.table.load(bucket);
    shared.owner(stripe).store(DEAD, Relaxed);
    stamp.store((stamp.load(Relaxed) | 1) + (5 << count_shift), Relaxed);
    shared.journal(stripe, bucket);
    let word = &raw.table.words[(((bucket as u64 + 1) * bits - 1) / 64) as usize];
    word.store(!word.load(Relaxed), Relaxed);
    assert_ne!(raw.table.load(bucket), before, "torn");
    Torn {
        bucket,
        stripe,
        before,
    }
}

/// A writer killed between the two word stores of a straddling bucket, holding its stripe
/// with a stale count: the next reader waits out the liveness bound, finds the holder dead,
/// and recovers the stripe: the bucket's pre-image back, the count recomputed.
#[test]
fn a_dead_writers_torn_bucket_and_count_are_recovered() {
    let path = std::env::temp_dir().join(format!("ccf-torn-{}", std::process::id()));
    let filter = filled(&path, 2000);
    let Torn {
        bucket,
        stripe,
        before,
    } = tear(&filter);
    let raw = filter.raw();
    let shared = raw.stripes.shared.as_ref().unwrap();
    let stamp = &raw.stripes.stamp_words().0[stripe];

    let start = Instant::now();
    assert!((0..1500u64).all(|i| filter.contains(&i)));
    assert!(start.elapsed() >= super::super::owners::LIVENESS_BOUND);
    assert_eq!(raw.table.load(bucket), before);
    assert_eq!(shared.owner(stripe).load(Relaxed), 0);
    assert_eq!(stamp.load(Relaxed) & 1, 0);
    assert_eq!(filter.len(), 1500);
    filter.verify().unwrap();
    drop(filter);
    std::fs::remove_file(&path).unwrap();
}

/// A new live filter of `layout` for `capacity` items, at a temporary path named by `name`.
fn created(
    name: &str,
    layout: TableLayout,
    capacity: usize,
) -> (std::path::PathBuf, ConcurrentCuckooFilter) {
    let path = std::env::temp_dir().join(format!("ccf-{name}-{}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let filter = ConcurrentCuckooFilter::builder()
        .capacity(capacity)
        .layout(layout)
        .create_shared(&path)
        .unwrap();
    (path, filter)
}

/// Every write entry point of a live filter locks through the owner words: with every
/// stripe's owner word naming a dead process and no stamp locked (which the in-memory
/// locks would take at once), each write waits out the liveness bound, takes the stripes
/// over and recovers them, and does what it was asked.
#[test]
fn a_live_filters_writes_lock_through_the_owner_words() {
    for layout in [TableLayout::BucketWord, TableLayout::Packed] {
        let (path, filter) = created("owners", layout, 2000);
        let raw = filter.raw();
        let shared = raw.stripes.shared.as_ref().unwrap();
        // Each write's own dead holder: one found dead before is taken over at once.
        let dead = std::cell::Cell::new(DEAD);
        let waits = |write: &dyn Fn()| {
            dead.set(dead.get() + 1);
            for stripe in 0..raw.stripe_count() {
                shared.owner(stripe).store(dead.get(), Relaxed);
            }
            let start = Instant::now();
            write();
            assert!(
                start.elapsed() >= super::super::owners::LIVENESS_BOUND,
                "{layout:?}: a write that did not lock through the owner words"
            );
        };
        let hashes: Vec<u64> = (0..100u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        waits(&|| filter.insert(&1u64).unwrap());
        waits(&|| assert!(filter.insert_unique(&2u64).unwrap()));
        waits(&|| assert!(filter.remove(&1u64)));
        waits(&|| assert_eq!(filter.try_extend_hashes(&hashes), Ok(100)));
        waits(&|| {
            let mut new = [false; 100];
            assert_eq!(
                filter.insert_unique_hash_batch_into(&hashes, &mut new),
                Ok(0)
            );
        });
        filter.verify().unwrap();
        assert_eq!(filter.len(), 101);
        assert!(filter.contains(&2u64) && hashes.iter().all(|&h| filter.contains_hash(h)));
        drop(filter);
        std::fs::remove_file(&path).unwrap();
    }
}

/// The kB of anonymous (copied) pages in this process's private mappings of `path`: a
/// reader that never writes its `MAP_PRIVATE` mapping has none, so it follows the file.
fn copied_kb(path: &std::path::Path) -> u64 {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let name = path.to_str().unwrap();
    let mut ours = false;
    let mut kb = 0;
    for line in smaps.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields
            .first()
            .is_some_and(|range| range.contains('-') && !range.ends_with(':'))
        {
            ours = fields.last() == Some(&name) && fields[1].ends_with('p');
        } else if ours && fields.first() == Some(&"Anonymous:") {
            kb += fields[1].parse::<u64>().unwrap();
        }
    }
    kb
}

/// A read-only opener meets a stripe a live writer holds: every read of it (a lookup, a
/// copy, a check) waits for the writer's release, never takes the stripe, asks whether the
/// holder is alive about once per liveness bound (not at each retry), and then sees what the
/// writer did.
#[test]
fn a_read_only_opener_waits_for_a_live_writer_and_never_locks() {
    let path = std::env::temp_dir().join(format!("ccf-ro-held-{}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let writer = ConcurrentCuckooFilter::builder()
        .capacity(2000)
        .layout(TableLayout::Packed)
        .create_shared(&path)
        .unwrap();
    let reader = ConcurrentCuckooFilter::open_shared(&path, crate::Access::ReadOnly).unwrap();
    let stripes = &writer.raw().stripes;
    let shared = stripes.shared.as_ref().unwrap();
    let key = 7u64;
    let c = writer.raw().debug_candidates(writer.hasher().hash_one(key));
    let stripe = stripes.of(c.first);
    let mut held = stripes.lock_one::<true>(c.first);
    let owner = shared.owner(stripe).load(Relaxed);
    let reads: [(&str, &(dyn Fn() -> bool + Sync)); 4] = [
        ("contains", &|| reader.contains(&key)),
        ("clone", &|| reader.clone().contains(&key)),
        ("to_bytes", &|| {
            ConcurrentCuckooFilter::from_bytes(&reader.to_bytes())
                .unwrap()
                .contains(&key)
        }),
        ("verify", &|| reader.verify().is_ok()),
    ];
    std::thread::scope(|scope| {
        let (done, answers) = std::sync::mpsc::channel();
        for (name, read) in reads {
            let done = done.clone();
            scope.spawn(move || done.send((name, read())).unwrap());
        }
        let wait = 10 * super::super::owners::LIVENESS_BOUND;
        assert!(
            answers.recv_timeout(wait).is_err(),
            "a read did not wait for the holder"
        );
        // Four reads over ten bounds ask about 40 times; one at each retry asks thousands.
        let asked = reader
            .raw()
            .stripes
            .shared
            .as_ref()
            .unwrap()
            .registry
            .asked
            .load(Relaxed);
        assert!(
            asked <= 80,
            "asked whether the holder is alive {asked} times"
        );
        assert_eq!(
            shared.owner(stripe).load(Relaxed),
            owner,
            "the reader took the stripe"
        );
        // The holder's write, then its release: every read sees the key.
        let (table, codec) = (&writer.raw().table, &writer.raw().codec);
        let mut bits = table.load(c.first);
        assert!(codec.insert(&mut bits, c.fp));
        table.store(c.first, &bits);
        held.add(c.first, 1);
        drop(held);
        for _ in 0..reads.len() {
            let (name, answer) = answers
                .recv_timeout(std::time::Duration::from_secs(20))
                .unwrap();
            assert!(answer, "{name}");
        }
    });
    assert_eq!(copied_kb(&path), 0);
    drop((reader, writer));
    std::fs::remove_file(&path).unwrap();
}

/// A writer killed holding a stripe whose bucket it tore: a read-only opener reads that
/// stripe as recovery would leave it (the journal's pre-image), without recovering it or
/// writing anything; once a writer recovers it and inserts more, the opener sees all of it.
#[test]
fn a_read_only_opener_reads_a_dead_writers_stripe_as_recovered_and_writes_nothing() {
    let path = std::env::temp_dir().join(format!("ccf-ro-dead-{}", std::process::id()));
    let filter = filled(&path, 4000);
    let Torn { bucket, stripe, .. } = tear(&filter);
    let raw = filter.raw();
    let shared = raw.stripes.shared.as_ref().unwrap();
    let torn = raw.table.load(bucket);

    let reader = ConcurrentCuckooFilter::open_shared(&path, crate::Access::ReadOnly).unwrap();
    assert!((0..1500u64).all(|i| reader.contains(&i)));
    // Found dead once: the reader's later reads of its stripes do not wait for it again.
    let registry = &reader.raw().stripes.shared.as_ref().unwrap().registry;
    assert!(registry.known_dead(DEAD));
    reader.verify().unwrap();
    let copy = reader.clone();
    assert_eq!(copy.len(), 1500);
    assert!((0..1500u64).all(|i| copy.contains(&i)));
    let decoded = ConcurrentCuckooFilter::from_bytes(&reader.to_bytes()).unwrap();
    assert!((0..1500u64).all(|i| decoded.contains(&i)));
    assert_eq!(raw.table.load(bucket), torn, "the reader wrote the table");
    assert_eq!(
        shared.owner(stripe).load(Relaxed),
        DEAD,
        "the reader took the stripe"
    );
    assert_eq!(copied_kb(&path), 0);

    // The writer recovers the stripe at its next lock of it; the reader follows the file.
    for i in 1500..3000u64 {
        filter.insert(&i).unwrap();
    }
    assert_ne!(raw.table.load(bucket), torn, "not recovered");
    assert!((0..3000u64).all(|i| reader.contains(&i)));
    assert_eq!(reader.len(), 3000);
    reader.verify().unwrap();
    drop((reader, filter));
    std::fs::remove_file(&path).unwrap();
}

/// Runs `read` on a thread: its answer, or `None` if it has not answered in 20 s (a hang).
fn answer_of(read: impl FnOnce() -> bool + Send + 'static) -> Option<bool> {
    let (done, answer) = std::sync::mpsc::channel();
    std::thread::spawn(move || done.send(read()));
    answer.recv_timeout(std::time::Duration::from_secs(20)).ok()
}

/// A damaged file whose stripe is locked by the owner word of all ones, which no registered
/// opener can have and a read-only opener calls itself: the read-only opener finds that holder
/// dead like any other and reads the stripe, rather than wait for itself for ever.
#[test]
fn a_read_only_opener_never_takes_an_owner_word_for_its_own() {
    let path = std::env::temp_dir().join(format!("ccf-ro-ones-{}", std::process::id()));
    let filter = filled(&path, 4000);
    let raw = filter.raw();
    let key = 7u64;
    let stripe = stripe_of(&filter, key);
    let shared = raw.stripes.shared.as_ref().unwrap();
    shared.owner(stripe).store(u64::MAX, Relaxed);
    raw.stripes.stamp_words().0[stripe].fetch_or(1, Relaxed);

    let reader = ConcurrentCuckooFilter::open_shared(&path, crate::Access::ReadOnly).unwrap();
    assert_eq!(answer_of(move || reader.contains(&key)), Some(true));
    filter.verify().unwrap();
    assert!((0..1500u64).all(|i| filter.contains(&i)));
    drop(filter);
    std::fs::remove_file(&path).unwrap();
}

/// Two writers killed each holding a stripe: a read-only opener that reads keys of both
/// stripes in turn asks after each holder once, not at every read that follows one of the
/// other's (each such question comes after waiting out the liveness bound).
#[test]
fn a_read_only_opener_remembers_every_dead_holder_it_found() {
    let path = std::env::temp_dir().join(format!("ccf-ro-two-dead-{}", std::process::id()));
    let filter = filled(&path, 4000);
    let raw = filter.raw();
    let shared = raw.stripes.shared.as_ref().unwrap();
    let stripes_of = |key: u64| {
        let c = raw.debug_candidates(filter.hasher().hash_one(key));
        [raw.stripes.of(c.first), raw.stripes.of(c.second)]
    };
    let [a, _] = stripes_of(0);
    let b = (1..1500u64)
        .map(|key| stripes_of(key)[0])
        .find(|&stripe| stripe != a)
        .unwrap();
    for (stripe, owner) in [(a, DEAD), (b, DEAD + (1 << 32))] {
        shared.owner(stripe).store(owner, Relaxed);
        raw.stripes.stamp_words().0[stripe].fetch_or(1, Relaxed);
    }
    let keys_of = |stripe| (0..1500u64).filter(move |&key| stripes_of(key).contains(&stripe));
    let both: Vec<(u64, u64)> = keys_of(a).zip(keys_of(b)).take(5).collect();
    assert_eq!(both.len(), 5);

    let reader = ConcurrentCuckooFilter::open_shared(&path, crate::Access::ReadOnly).unwrap();
    for &(in_a, in_b) in &both {
        assert!(reader.contains(&in_a) && reader.contains(&in_b));
    }
    let registry = &reader.raw().stripes.shared.as_ref().unwrap().registry;
    assert_eq!(registry.asked.load(Relaxed), 2, "holders asked after again");
    drop((reader, filter));
    std::fs::remove_file(&path).unwrap();
}

/// A stripe whose stamp is locked while its owner word is 0, as a machine crash leaves a file
/// whose stamp page was written back after the owner word's (or a copy of a file in use): no
/// process holds it, so a read-only opener reads it as recovered and the first writer to take
/// its owner word recovers it, rather than either waiting for ever.
#[test]
fn a_locked_stamp_with_no_owner_is_read_and_recovered() {
    for layout in [TableLayout::Packed, TableLayout::BucketWord] {
        let path = std::env::temp_dir().join(format!("ccf-no-owner-{}", std::process::id()));
        let filter = match layout {
            TableLayout::Packed => filled(&path, 4000),
            _ => {
                let _ = std::fs::remove_file(&path);
                let words = ConcurrentCuckooFilter::builder().capacity(4000);
                let words = words.layout(layout).create_shared(&path).unwrap();
                words.try_extend(0..1500u64).unwrap();
                words
            }
        };
        let raw = filter.raw();
        let key = 7u64;
        let stripe = stripe_of(&filter, key);
        raw.stripes.stamp_words().0[stripe].fetch_or(1, Relaxed);
        drop(filter);

        let open = |access| ConcurrentCuckooFilter::open_shared(&path, access).unwrap();
        let reader = open(crate::Access::ReadOnly);
        let copy = answer_of(move || reader.count(&key) == 1 && reader.clone().contains(&key));
        assert_eq!(copy, Some(true), "{layout:?}: a read-only opener's read");
        let writer = open(crate::Access::ReadWrite);
        let recovered = answer_of(move || writer.verify().is_ok() && writer.insert(&key).is_ok());
        assert_eq!(recovered, Some(true), "{layout:?}: a writer's lock");
        let writer = open(crate::Access::ReadWrite);
        assert_eq!(writer.len(), 1501);
        assert!((0..1500u64).all(|i| writer.contains(&i)) && writer.count(&key) == 2);
        writer.verify().unwrap();
        drop(writer);
        std::fs::remove_file(&path).unwrap();
    }
}

/// A machine crash can write a stripe's owner word back to disk and lose the registration
/// epoch's increment that made its id: the next opener of that slot takes the epoch after, so
/// that stripe is a dead holder's, recovered by its first writer, not waited for by the
/// opener's writes (as if one of its own threads held it) for ever.
#[test]
fn a_stale_owner_word_naming_a_new_openers_id_is_a_dead_holders() {
    let path = std::env::temp_dir().join(format!("ccf-stale-own-{}", std::process::id()));
    let filter = filled(&path, 4000);
    let raw = filter.raw();
    let key = 7u64;
    let stripe = stripe_of(&filter, key);
    let shared = raw.stripes.shared.as_ref().unwrap();
    // The next opener registers in the same slot with the epoch one on.
    let next = shared.registry.me + 1;
    shared.owner(stripe).store(next, Relaxed);
    raw.stripes.stamp_words().0[stripe].fetch_or(1, Relaxed);
    drop(filter);

    let writer = ConcurrentCuckooFilter::open_shared(&path, crate::Access::ReadWrite).unwrap();
    assert_eq!(
        writer.raw().stripes.shared.as_ref().unwrap().registry.me,
        next + 1
    );
    let inserted = answer_of(move || {
        let inserted = writer.insert(&key).is_ok() && writer.verify().is_ok();
        inserted && writer.len() == 1501 && (0..1500u64).all(|i| writer.contains(&i))
    });
    assert_eq!(
        inserted,
        Some(true),
        "a write to the stripe hung or lost items"
    );
    std::fs::remove_file(&path).unwrap();
}

/// Owner ids are never reused, not even one a stale owner word names (a machine crash lost the
/// epoch increment that made it): a writer that asked after that id before the next opener of
/// its slot registered found it dead, and its takeover (a CAS from that id, `lock_shared`) may
/// land any time later, so the new opener must hold no stripe under that id.
#[test]
fn a_stale_owner_id_found_dead_is_never_a_later_holders() {
    let path = std::env::temp_dir().join(format!("ccf-stale-reuse-{}", std::process::id()));
    let filter = filled(&path, 4000);
    let key = 7u64;
    let (stripe, bucket) = (stripe_of(&filter, key), {
        let raw = filter.raw();
        raw.debug_candidates(filter.hasher().hash_one(key)).first
    });
    let shared = filter.raw().stripes.shared.as_ref().unwrap();
    // The id the next opener of this slot gets, as if a crash lost its epoch's increment.
    let stale = shared.registry.me + 1;
    shared.owner(stripe).store(stale, Relaxed);
    filter.raw().stripes.stamp_words().0[stripe].fetch_or(1, Relaxed);
    let waiter = ConcurrentCuckooFilter::open_shared(&path, crate::Access::ReadWrite).unwrap();
    drop(filter);
    // The waiter, past the liveness bound, asks after the holder: dead, as its slot is free.
    let waiting = waiter.raw().stripes.shared.as_ref().unwrap();
    assert!(!waiting.registry.is_alive(stale));

    let writer = ConcurrentCuckooFilter::open_shared(&path, crate::Access::ReadWrite).unwrap();
    // The writer holds the stripe; the waiter's takeover of the id it found dead takes nothing.
    let guard = writer.raw().stripes.lock_buckets::<true>([bucket; 3]);
    let took =
        (waiting.owner(stripe)).compare_exchange(stale, waiting.registry.me, Relaxed, Relaxed);
    assert!(took.is_err(), "two holders of one stripe");
    drop(guard);
    assert!(writer.insert(&key).is_ok() && writer.verify().is_ok());
    drop((writer, waiter));
    std::fs::remove_file(&path).unwrap();
}

/// A writer killed holding every stripe (in `clear`, or an insert deciding under all locks):
/// the next writer to lock them all asks after that holder once, waits out the liveness bound
/// once, and takes every other stripe it held over at once (ids are never reused), rather than
/// waiting the bound again on each of them.
#[test]
fn a_writer_killed_holding_every_stripe_is_waited_for_once() {
    for layout in [TableLayout::BucketWord, TableLayout::Packed] {
        let (path, filter) = created("dead-all", layout, 20_000);
        filter.try_extend(0..15_000u64).unwrap();
        let raw = filter.raw();
        let shared = raw.stripes.shared.as_ref().unwrap();
        assert!(raw.stripe_count() >= 32, "{} stripes", raw.stripe_count());
        for stripe in 0..raw.stripe_count() {
            shared.owner(stripe).store(DEAD, Relaxed);
            raw.stripes.stamp_words().0[stripe].fetch_or(1, Relaxed);
        }
        filter.verify().unwrap();
        assert_eq!(
            shared.registry.asked.load(Relaxed),
            1,
            "{layout:?}: holder asked after again"
        );
        assert_eq!(filter.len(), 15_000);
        assert!((0..15_000u64).all(|i| filter.contains(&i)));
        drop(filter);
        std::fs::remove_file(&path).unwrap();
    }
}
