//! Round trips.

use super::*;
use concurrent_cuckoo_filter::{
    CuckooFilter, ExpiringCuckooFilter, GrowableCuckooFilter, Kind, Window,
};
use std::time::Duration;

#[test]
fn every_configuration_round_trips_with_every_answer() {
    let plain = [2, 4, 8]
        .into_iter()
        .flat_map(|slots| (4..=32).map(move |bits| (slots, bits, false)));
    let semi_sorted = (5..=32).map(|bits| (4, bits, true));
    for (slots, bits, semi_sorted) in plain.chain(semi_sorted) {
        {
            let filter = ConcurrentCuckooFilter::builder()
                .capacity(1500)
                .bucket_size(slots)
                .fingerprint_bits(bits)
                .semi_sorted(semi_sorted)
                .hasher(DefaultHashBuilder::with_seed(u64::from(bits)))
                .build()
                .unwrap();
            let keys = fill(&filter, 1400, u64::from(bits));
            assert!(keys.len() > 500, "b={slots} f={bits}: {}", keys.len());
            let bytes = filter.to_bytes();
            let copy = ConcurrentCuckooFilter::from_bytes(&bytes)
                .unwrap_or_else(|err| panic!("b={slots} f={bits}: {err}"));
            assert_same(&filter, &copy, &keys);

            let mut streamed = Vec::new();
            filter.write_to(&mut streamed).unwrap();
            assert_eq!(streamed, bytes);
            let copy = ConcurrentCuckooFilter::read_from(&bytes[..]).unwrap();
            assert_same(&filter, &copy, &keys);

            // The copy is a working filter of its own.
            for key in &keys {
                assert!(copy.remove(key), "b={slots} f={bits}");
            }
            assert_eq!(copy.len(), 0);
            assert_eq!(filter.len(), keys.len());
        }
    }
}

#[test]
fn empty_full_and_tiny_filters_round_trip() {
    let empty = build(4, 12, 100, 1);
    assert_same(
        &empty,
        &ConcurrentCuckooFilter::from_bytes(&empty.to_bytes()).unwrap(),
        &[],
    );

    let full = build(4, 16, 2000, 2);
    let keys = fill(&full, 1_000_000, 2);
    assert!(full.load_factor() > 0.9);
    assert_same(
        &full,
        &ConcurrentCuckooFilter::from_bytes(&full.to_bytes()).unwrap(),
        &keys,
    );

    for buckets in 1..=5 {
        let tiny = ConcurrentCuckooFilter::builder()
            .buckets(buckets)
            .bucket_size(2)
            .fingerprint_bits(5)
            .build()
            .unwrap();
        let keys = fill(&tiny, 100, 3);
        let bytes = tiny.to_bytes();
        assert_same(
            &tiny,
            &ConcurrentCuckooFilter::from_bytes(&bytes).unwrap(),
            &keys,
        );
    }
}

#[test]
fn seed_stripes_and_search_limits_are_kept() {
    let filter = ConcurrentCuckooFilter::builder()
        .capacity(5000)
        .hasher(DefaultHashBuilder::with_seed(99))
        .stripes(64)
        .search_limits(3, 100)
        .build()
        .unwrap();
    let keys = fill(&filter, 4000, 9);
    let bytes = filter.to_bytes();
    assert_eq!(get_u64(&bytes, STRIPES_AT), 64);
    assert_eq!(get_u64(&bytes, MAX_SEARCH_BUCKETS_AT), 100);
    assert_eq!(bytes[MAX_HOPS_AT], 3);
    let copy = ConcurrentCuckooFilter::from_bytes(&bytes).unwrap();
    assert_eq!(copy.hasher().seed(), 99);
    assert_same(&filter, &copy, &keys);
}

#[test]
fn stripes_that_could_never_be_locked_are_not_recorded() {
    // Three 48-bit buckets: lock groups of 4 buckets, so one group and one useful stripe.
    let filter = ConcurrentCuckooFilter::builder()
        .buckets(3)
        .stripes(1 << 20)
        .layout(concurrent_cuckoo_filter::TableLayout::Packed)
        .build()
        .unwrap();
    let keys = fill(&filter, 8, 4);
    let bytes = filter.to_bytes();
    assert_eq!(get_u64(&bytes, STRIPES_AT), 1);
    let copy = ConcurrentCuckooFilter::from_bytes(&bytes).unwrap();
    // Neither allocates the stamps of stripes no bucket maps to.
    assert_eq!(copy.memory_usage(), filter.memory_usage());
    assert!(filter.memory_usage() < 1000, "{}", filter.memory_usage());
    assert!(keys.iter().all(|key| copy.contains(key)));
    assert_eq!(copy.to_bytes(), bytes);

    // A header that asks for them anyway is refused, so every accepted input is canonical.
    let mut asking = bytes.clone();
    set_u64(&mut asking, STRIPES_AT, 2);
    reseal(&mut asking);
    assert_eq!(
        ConcurrentCuckooFilter::from_bytes(&asking).unwrap_err(),
        DecodeError::InvalidGeometry {
            field: "stripes",
            value: 2
        }
    );
}

#[test]
fn search_limits_beyond_reach_or_cap_are_not_recorded() {
    for (slots, hops, asked, recorded) in [
        (2, 8, 2000, 1022),
        (4, 5, 5000, 2730),
        (4, 2, 1000, 42),
        (8, 8, usize::MAX, 1 << 20),
    ] {
        let filter = ConcurrentCuckooFilter::builder()
            .capacity(100)
            .bucket_size(slots)
            .search_limits(hops, asked)
            .build()
            .unwrap();
        let bytes = filter.to_bytes();
        assert_eq!(get_u64(&bytes, MAX_SEARCH_BUCKETS_AT), recorded);
        assert_eq!(bytes[MAX_HOPS_AT] as usize, hops);
        let mut more = bytes.clone();
        set_u64(&mut more, MAX_SEARCH_BUCKETS_AT, recorded + 1);
        reseal(&mut more);
        assert_eq!(
            decode_err(&more),
            DecodeError::InvalidGeometry {
                field: "max_search_buckets",
                value: recorded + 1
            }
        );
    }
}

/// Hands out its bytes a few at a time, as a socket might.
pub(super) struct Trickle<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

#[test]
fn read_from_reads_exactly_one_filter_from_a_slow_stream() {
    let first = build(4, 12, 3000, 5);
    let first_keys = fill(&first, 2500, 5);
    let second = build(8, 20, 500, 6);
    let second_keys = fill(&second, 400, 6);
    let mut stream = Vec::new();
    first.write_to(&mut stream).unwrap();
    second.write_to(&mut stream).unwrap();
    stream.extend_from_slice(b"and then something else");

    for step in [1, 7, 4096, usize::MAX] {
        let mut reader = Trickle {
            bytes: &stream,
            step,
        };
        let a = ConcurrentCuckooFilter::read_from(&mut reader).unwrap();
        let b = ConcurrentCuckooFilter::read_from(&mut reader).unwrap();
        assert_same(&first, &a, &first_keys);
        assert_same(&second, &b, &second_keys);
        let mut rest = Vec::new();
        reader.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, b"and then something else");
    }
}

/// Every prefix of a kind's bytes, from none on, is `Truncated`, from bytes and from a stream.
fn prefixes_are_truncated<K: Kind>(filter: &CuckooFilter<K>) {
    let bytes = filter.to_bytes();
    let len = bytes.len();
    let cuts = (0..len.min(300)).chain([len / 2, len - 9, len - 1]);
    for cut in cuts {
        let from_bytes = CuckooFilter::<K>::from_bytes(&bytes[..cut]).unwrap_err();
        let mut reader = Trickle {
            bytes: &bytes[..cut],
            step: 3,
        };
        let from_stream = CuckooFilter::<K>::read_from(&mut reader).unwrap_err();
        for err in [from_bytes, from_stream] {
            assert!(
                matches!(err, DecodeError::Truncated { .. }),
                "{}, {cut} of {len} bytes: {err}",
                K::NAME
            );
        }
    }
}

#[test]
fn every_kinds_bytes_cut_short_anywhere_are_truncated() {
    let fixed = build(4, 12, 3000, 5);
    fill(&fixed, 2500, 5);
    prefixes_are_truncated(&fixed);
    let growable = GrowableCuckooFilter::builder()
        .capacity(500)
        .build()
        .unwrap();
    growable.try_extend(0..5_000u64).unwrap();
    prefixes_are_truncated(&growable);
    let time = Window::Time(Duration::from_secs(60));
    for (window, capacity) in [(Window::Items(1000), 0), (time, 1000)] {
        let expiring = ExpiringCuckooFilter::builder(window)
            .capacity(capacity)
            .build()
            .unwrap();
        expiring.try_extend(0..500u64).unwrap();
        prefixes_are_truncated(&expiring);
    }
}
