//! Bad builder values name themselves; bytes round trip; merge is refused.

use core::time::Duration;

use concurrent_cuckoo_filter::{
    BuildError, Clock, DecodeError, ExpiringCuckooFilter, InsertError, MergeError, Window,
};

#[test]
fn bad_values_give_errors_naming_them() {
    let items = |w| ExpiringCuckooFilter::builder(Window::Items(w));
    assert_eq!(
        items(0).build().unwrap_err(),
        BuildError::WindowItems { items: 0 }
    );
    for g in [0, 15, 100] {
        let err = items(100).generations(g).build().unwrap_err();
        assert_eq!(
            err,
            BuildError::Generations {
                generations: g,
                max: 14
            }
        );
        assert!(err.to_string().contains(&g.to_string()), "{err}");
    }
    for rate in [0.0, 1.0, -1.0, f64::NAN] {
        let err = items(100).false_positive_rate(rate).build().unwrap_err();
        assert!(matches!(err, BuildError::FalsePositiveRate { .. }), "{err}");
    }
    let err = items(100).false_positive_rate(1e-12).build().unwrap_err();
    assert!(matches!(err, BuildError::FalsePositiveRateTooSmall { .. }));
    // The message names no width: an expiring filter's widest fingerprints are 28 bits.
    assert!(!err.to_string().contains("32-bit"), "{err}");
    assert_eq!(
        items(100).capacity(5).build().unwrap_err(),
        BuildError::WindowCapacity {
            capacity: 5,
            time_window: false
        }
    );
    let time = ExpiringCuckooFilter::builder(Window::Time(Duration::from_secs(1)));
    let err = time.clone().build().unwrap_err();
    assert_eq!(
        err,
        BuildError::WindowCapacity {
            capacity: 0,
            time_window: true
        }
    );
    assert!(err.to_string().contains("capacity"), "{err}");
    // Too large is too large, not "at least 1".
    for capacity in [(1 << 32) + 1, 1_000_000_000_000, u64::MAX] {
        let err = time.clone().capacity(capacity).build().unwrap_err();
        assert!(
            matches!(err, BuildError::CapacityTooLarge { .. }),
            "{capacity}: {err}"
        );
        assert!(err.to_string().contains("too large"), "{err}");
    }
    let err = ExpiringCuckooFilter::builder(Window::Time(Duration::from_nanos(3)))
        .capacity(10)
        .build()
        .unwrap_err();
    assert_eq!(
        err,
        BuildError::WindowDuration {
            duration: Duration::from_nanos(3)
        }
    );
    assert!(matches!(
        items(u64::MAX).build().unwrap_err(),
        BuildError::WindowItems { .. }
    ));
    for duration in [
        Duration::MAX,
        Duration::from_nanos(u64::MAX) + Duration::from_nanos(1),
    ] {
        let err = ExpiringCuckooFilter::builder(Window::Time(duration))
            .capacity(10)
            .build()
            .unwrap_err();
        assert_eq!(err, BuildError::WindowDuration { duration });
        assert!(
            err.to_string().contains("at most"),
            "a long window named as such: {err}"
        );
    }
    assert!(time.capacity(10).build().is_ok());
}

/// The most a time window's `CapacityTooLarge` says it holds is what the builder takes: that
/// capacity is built (or refused for memory only), one more is too large.
#[test]
fn the_largest_capacity_an_error_states_is_the_largest_taken() {
    let time = |capacity| {
        ExpiringCuckooFilter::builder(Window::Time(Duration::from_secs(10)))
            .capacity(capacity)
            .build()
    };
    let Err(BuildError::CapacityTooLarge { max, .. }) = time(u64::MAX) else {
        panic!("a capacity of u64::MAX built");
    };
    match time(max as u64) {
        Ok(_) | Err(BuildError::OutOfMemory { .. }) => {}
        Err(err) => panic!("the stated most, {max}, refused: {err}"),
    }
    assert_eq!(
        time(max as u64 + 1).unwrap_err(),
        BuildError::CapacityTooLarge {
            capacity: max + 1,
            max
        }
    );
}

#[test]
fn bytes_round_trip_and_keep_the_window_going() {
    let filter = ExpiringCuckooFilter::builder(Window::Items(1000))
        .build()
        .unwrap();
    for i in 0..2500u64 {
        filter.insert(&i).unwrap();
    }
    let bytes = filter.to_bytes();
    assert_eq!(bytes.len() as u64, filter.serialized_len());
    let copy = ExpiringCuckooFilter::from_bytes(&bytes).unwrap();
    assert_eq!(copy.len(), filter.len());
    assert_eq!(copy.stats().generation, filter.stats().generation);
    assert_eq!(copy.stats().inserts, filter.stats().inserts);
    assert_eq!(copy.to_bytes(), bytes);
    for i in 1500..2500u64 {
        assert!(copy.contains(&i));
    }
    // The copy's window goes on where the original's was.
    for i in 2500..3000u64 {
        copy.insert(&i).unwrap();
        filter.insert(&i).unwrap();
    }
    for i in 2000..3000u64 {
        assert!(copy.contains(&i) && filter.contains(&i));
    }
    let read = ExpiringCuckooFilter::read_from(&bytes[..]).unwrap();
    assert_eq!(read.to_bytes(), bytes);
    let cloned = filter.clone();
    assert_eq!(cloned.to_bytes(), filter.to_bytes());
}

/// A count window's clock at 2^63 inserts or generations or more, checksummed as a writer would,
/// is refused naming the field: its arithmetic would reach `u64::MAX` (a panic in debug builds,
/// a clock wrapped back to generation 0 in release). Below, it decodes; from 2^62 on its inserts
/// are refused, changing nothing, so that every count it writes decodes again.
#[test]
fn a_count_windows_clock_near_the_end_of_u64_is_refused() {
    let filter = ExpiringCuckooFilter::builder(Window::Items(100))
        .build()
        .unwrap();
    for i in 0..150u64 {
        filter.insert(&i).unwrap();
    }
    let bytes = filter.to_bytes();
    let with = |at: usize, value: u64| {
        let mut bytes = bytes.clone();
        bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
        let end = bytes.len() - 8;
        let checksum = xxhash_rust::xxh3::xxh3_64(&bytes[..end]);
        bytes[end..].copy_from_slice(&checksum.to_le_bytes());
        bytes
    };
    for (at, field) in [(48, "generation"), (56, "inserts")] {
        for value in [1 << 63, u64::MAX - 3, u64::MAX] {
            let err = ExpiringCuckooFilter::from_bytes(&with(at, value)).unwrap_err();
            assert_eq!(err, DecodeError::InvalidGeometry { field, value });
        }
        for value in [(1 << 62) - 2, (1 << 63) - 1] {
            let copy = ExpiringCuckooFilter::from_bytes(&with(at, value)).unwrap();
            let mut added = Vec::new();
            for i in 1000..1300u64 {
                match copy.insert(&i) {
                    Ok(()) => added.push(i),
                    Err(err) => {
                        assert_eq!(err, InsertError::CountExhausted);
                        break;
                    }
                }
            }
            let last = copy.stats().inserts;
            if added.len() < 300 {
                let err = copy.try_extend(2000..2010u64).unwrap_err();
                assert_eq!(
                    (err.error(), err.inserted()),
                    (InsertError::CountExhausted, 0)
                );
                assert!(err.to_string().contains("2^62"), "{err}");
                assert_eq!(copy.stats().inserts, last);
            }
            // Up to 2^62 inserts, then refused; below 2^62 generations, early expiries (of a
            // window whose items never age) move it on by one each.
            let expected = match (field, value < 1 << 62) {
                ("inserts", true) => 2..=2,
                (_, true) => 2..=300,
                _ => 0..=0,
            };
            assert!(
                expected.contains(&added.len()),
                "{field} {value}: {}",
                added.len()
            );
            let again = ExpiringCuckooFilter::from_bytes(&copy.to_bytes()).unwrap();
            assert_eq!(again.stats().inserts, last);
            for i in added {
                assert!(copy.contains(&i) && again.contains(&i), "{i} lost");
            }
        }
    }
}

/// A time window counts no inserts (its clock is its time, `stats().inserts` 0): a header whose
/// `inserts` is not 0, checksummed as a writer would, is refused naming it, for either clock.
#[test]
fn a_time_windows_inserts_other_than_0_are_refused() {
    for clock in [Clock::Manual, Clock::Monotonic] {
        let filter = ExpiringCuckooFilter::builder(Window::Time(Duration::from_secs(10)))
            .capacity(100)
            .clock(clock)
            .build()
            .unwrap();
        filter.insert(&1u64).unwrap();
        let bytes = filter.to_bytes();
        assert_eq!(u64::from_le_bytes(bytes[56..64].try_into().unwrap()), 0);
        assert_eq!(filter.stats().inserts, 0);
        for value in [1u64, 5, 1 << 62, u64::MAX] {
            let mut bytes = bytes.clone();
            bytes[56..64].copy_from_slice(&value.to_le_bytes());
            let end = bytes.len() - 8;
            let checksum = xxhash_rust::xxh3::xxh3_64(&bytes[..end]);
            bytes[end..].copy_from_slice(&checksum.to_le_bytes());
            assert_eq!(
                ExpiringCuckooFilter::from_bytes(&bytes).map(|f| f.stats().inserts),
                Err(DecodeError::InvalidGeometry {
                    field: "inserts",
                    value
                }),
                "{clock:?}"
            );
        }
    }
}

/// A header whose generations, capacity or window no builder takes, checksummed as a writer
/// would, is refused naming the field at fault (FORMAT.md's name), not another one.
#[test]
fn a_bad_header_field_is_refused_by_its_own_name() {
    let time = ExpiringCuckooFilter::builder(Window::Time(Duration::from_secs(10)))
        .capacity(100)
        .clock(Clock::Manual)
        .build()
        .unwrap()
        .to_bytes();
    let count = ExpiringCuckooFilter::builder(Window::Items(100))
        .build()
        .unwrap()
        .to_bytes();
    let with = |bytes: &[u8], at: usize, value: &[u8]| {
        let mut bytes = bytes.to_vec();
        bytes[at..at + value.len()].copy_from_slice(value);
        let end = bytes.len() - 8;
        let checksum = xxhash_rust::xxh3::xxh3_64(&bytes[..end]);
        bytes[end..].copy_from_slice(&checksum.to_le_bytes());
        bytes
    };
    for bytes in [&time, &count] {
        for generations in [0u8, 15, 255] {
            assert_eq!(
                ExpiringCuckooFilter::from_bytes(&with(bytes, 15, &[generations])).unwrap_err(),
                DecodeError::InvalidGeometry {
                    field: "generations",
                    value: u64::from(generations)
                }
            );
        }
    }
    for bytes in [&time, &count] {
        for reserved in [[1u8, 0], [0, 0x80]] {
            assert_eq!(
                ExpiringCuckooFilter::from_bytes(&with(bytes, 10, &reserved)).unwrap_err(),
                DecodeError::InvalidGeometry {
                    field: "reserved",
                    value: u64::from(u16::from_le_bytes(reserved))
                }
            );
        }
    }
    for (at, value, field) in [
        (24, 0, "capacity"),
        (24, u64::MAX, "capacity"),
        (16, 0, "window"),
    ] {
        assert_eq!(
            ExpiringCuckooFilter::from_bytes(&with(&time, at, &value.to_le_bytes())).unwrap_err(),
            DecodeError::InvalidGeometry { field, value }
        );
    }
}

#[test]
fn damaged_bytes_are_errors() {
    let filter = ExpiringCuckooFilter::builder(Window::Items(300))
        .build()
        .unwrap();
    for i in 0..500u64 {
        filter.insert(&i).unwrap();
    }
    let bytes = filter.to_bytes();
    for len in [0, 5, 8, 50, 103, bytes.len() - 1] {
        assert!(
            ExpiringCuckooFilter::from_bytes(&bytes[..len]).is_err(),
            "{len}"
        );
        assert!(
            ExpiringCuckooFilter::read_from(&bytes[..len]).is_err(),
            "{len}"
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(
        ExpiringCuckooFilter::from_bytes(&longer),
        Err(DecodeError::TrailingBytes { .. })
    ));
    for at in (0..bytes.len()).step_by(7) {
        let mut flipped = bytes.clone();
        flipped[at] ^= 0x10;
        assert!(ExpiringCuckooFilter::from_bytes(&flipped).is_err(), "{at}");
    }
    // A plain filter's bytes are not an expiring filter's, and the error says whose they are.
    let plain = concurrent_cuckoo_filter::ConcurrentCuckooFilter::with_capacity(100);
    assert_eq!(
        ExpiringCuckooFilter::from_bytes(&plain.to_bytes()).unwrap_err(),
        DecodeError::OtherFilterType {
            found: "ConcurrentCuckooFilter"
        }
    );
}

#[test]
fn merge_is_refused_clearly() {
    let a = ExpiringCuckooFilter::builder(Window::Items(100))
        .build()
        .unwrap();
    let b = ExpiringCuckooFilter::builder(Window::Items(100))
        .build()
        .unwrap();
    let err = a.merge(&b).unwrap_err();
    assert_eq!(
        err,
        MergeError::Unsupported {
            kind: "ExpiringCuckooFilter"
        }
    );
    assert!(err.to_string().contains("cannot be merged"));
}

/// The golden file of format version 1: a count window of 1000 after 2500 inserts, under the
/// default hasher's fixed seed. Rewritten only by `EXPIRING_GOLDEN_WRITE=1` (a format change
/// must keep reading the old file). Which slot each insert takes is the insert's choice, not the
/// format's: a filter that made the same inserts writes the same header fields and as many bytes,
/// and finds the same window.
#[test]
fn the_golden_file_reads_and_is_what_the_filter_writes() {
    let filter = ExpiringCuckooFilter::builder(Window::Items(1000))
        .hasher(concurrent_cuckoo_filter::DefaultHashBuilder::with_seed(7))
        .build()
        .unwrap();
    for i in 0..2500u64 {
        filter.insert(&i).unwrap();
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/golden-expiring-v1-items-1000.bin");
    if std::env::var_os("EXPIRING_GOLDEN_WRITE").is_some() {
        std::fs::write(&path, filter.to_bytes()).unwrap();
    }
    let golden = std::fs::read(&path).unwrap();
    let read = ExpiringCuckooFilter::from_bytes(&golden).unwrap();
    assert_eq!(read.to_bytes(), golden);
    let written = filter.to_bytes();
    assert_eq!(golden.len(), written.len());
    let (old, new) = (read.stats(), filter.stats());
    assert_eq!(
        (
            old.generation,
            old.inserts,
            old.bucket_count,
            old.fingerprint_bits
        ),
        (
            new.generation,
            new.inserts,
            new.bucket_count,
            new.fingerprint_bits
        )
    );
    for i in 1500..2500u64 {
        assert!(read.contains(&i) && filter.contains(&i));
    }
    assert_eq!(read.hasher().seed(), 7);
}

/// A reader that fails part-way passes its error on, at any point: it is not called truncated.
#[test]
fn reader_errors_are_passed_on() {
    struct FailingAfter<'a>(&'a [u8]);
    impl std::io::Read for FailingAfter<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.0.is_empty() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "peer went away",
                ));
            }
            let n = buf.len().min(self.0.len()).min(40);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let filter = ExpiringCuckooFilter::builder(Window::Items(1000))
        .build()
        .unwrap();
    filter.insert(&1u64).unwrap();
    let bytes = filter.to_bytes();
    for len in [0, 40, 96, 200, bytes.len() - 1] {
        let err = ExpiringCuckooFilter::read_from(FailingAfter(&bytes[..len])).unwrap_err();
        assert!(
            matches!(
                err,
                DecodeError::Io {
                    kind: std::io::ErrorKind::ConnectionReset,
                    ..
                }
            ),
            "{len}: {err}"
        );
    }
}

/// Copies of a count window (its bytes decoded, or a clone) taken at any inserts, twice a
/// generation, keep the retention bound: each copy's first generations sweep the table before a
/// tag value comes back, so no key is found past `(G + 1)·ceil(W/G)` inserts but at the false
/// positive rate.
#[test]
fn copies_taken_at_any_inserts_forget_on_time() {
    let (mut kept, mut checked) = (0u64, 0u64);
    for (window, generations) in [(65u64, 14u32), (140, 14), (100, 13), (64, 8), (30, 1)] {
        let per = window.div_ceil(u64::from(generations));
        let bound = per * (u64::from(generations) + 1);
        for (first, second) in (0..per).flat_map(|a| (a + 1..per).map(move |b| (a, b))) {
            for decode in [true, false] {
                let mut filter = ExpiringCuckooFilter::builder(Window::Items(window))
                    .generations(generations)
                    .false_positive_rate(1e-7)
                    .build()
                    .unwrap();
                for i in 0..4 * bound {
                    if i >= bound && (i % per == first || i % per == second) {
                        filter = match decode {
                            true => ExpiringCuckooFilter::from_bytes(&filter.to_bytes()).unwrap(),
                            false => filter.clone(),
                        };
                    }
                    filter.insert(&i).unwrap();
                    // Once a generation: the keys of the 16 generations that ended last (a tag
                    // the sweep missed looks live again 16 generations after it was stored).
                    if i % per == 0 {
                        let gone = (i / per).saturating_sub(u64::from(generations)) * per;
                        for key in gone.saturating_sub(16 * per)..gone {
                            checked += 1;
                            kept += u64::from(filter.contains(&key));
                        }
                    }
                }
            }
        }
    }
    // At a rate of 1e-7, a key found past the bound is one the sweep missed.
    assert!(kept <= 1, "{kept} of {checked} keys found past the bound");
}
