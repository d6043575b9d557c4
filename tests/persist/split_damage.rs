//! Growable filters whose levels split (format version 3) from damaged or hostile bytes: every
//! truncation and bit flip, chunks out of place, out of range or shaped against the plan, and
//! headers promising more than the bytes hold; each a `DecodeError` naming the level and field,
//! never an allocation the input does not justify.

use super::allocation::largest_allocation;
use super::growable_split::{
    in_level, layout, reseal_growable_header, reseal_record, small, split, split_err,
    CHUNK_RECORD_LEN, G_GROWTH_FACTOR_AT, G_HEADER_LEN, G_INITIAL_BUCKETS_AT,
    G_INITIAL_CAPACITY_AT, G_ITEMS_AT, G_LEVEL_COUNT_AT, LEVEL_RECORD_LEN,
};
use super::*;
use concurrent_cuckoo_filter::GrowableCuckooFilter;

#[test]
fn a_split_filter_truncated_at_any_length_is_refused_naming_the_part() {
    let bytes = small();
    // The parts the decoder asks for, in order: a level's record, a chunk's record, its record
    // and header, the chunk whole.
    let mut ends = vec![G_HEADER_LEN];
    for level in layout(&bytes) {
        ends.push(level.at + LEVEL_RECORD_LEN);
        for chunk in level.chunks {
            ends.push(chunk.encoding());
            ends.push(chunk.encoding() + HEADER_LEN);
            ends.push(chunk.at + chunk.len);
        }
    }
    for len in 0..bytes.len() {
        let needed = *ends.iter().find(|&&end| end > len).unwrap();
        assert_eq!(
            split_err(&bytes[..len]),
            DecodeError::Truncated {
                needed: needed as u64,
                found: len as u64
            },
            "length {len}"
        );
    }
}

#[test]
fn every_bit_flip_of_a_split_filter_is_refused_by_its_level() {
    let bytes = small();
    let levels = layout(&bytes);
    for bit in 0..bytes.len() * 8 {
        let mut damaged = bytes.clone();
        damaged[bit / 8] ^= 1 << (bit % 8);
        let err = split_err(&damaged);
        let byte = bit / 8;
        if byte >= G_HEADER_LEN {
            let level = levels
                .iter()
                .position(|level| (level.at..level.end()).contains(&byte))
                .unwrap();
            in_level(&err, level as u64);
        } else if byte >= 8 {
            assert!(
                matches!(
                    err,
                    DecodeError::UnsupportedVersion { .. }
                        | DecodeError::HeaderChecksumMismatch { .. }
                ),
                "bit {bit}: {err}"
            );
        } else if byte == 3 && bit % 8 == 0 {
            // `G` with its low bit flipped is the fixed filter's `F`.
            assert_eq!(
                err,
                DecodeError::OtherFilterType {
                    found: "ConcurrentCuckooFilter"
                }
            );
        } else {
            assert_eq!(err, DecodeError::BadMagic, "bit {bit}");
        }
    }
}

#[test]
fn a_chunk_count_out_of_range_or_not_the_chunks_there_is_refused() {
    let bytes = small();
    let levels = layout(&bytes);
    let first = &levels[0];
    assert_eq!(first.chunks.len(), 4, "{first:?}");
    let set_count = |count: u64| {
        let mut damaged = bytes.clone();
        set_u64(&mut damaged, first.at, count);
        reseal_record(&mut damaged, first.at, LEVEL_RECORD_LEN);
        split_err(&damaged)
    };
    // Level 0 has 2 route bits: 1 to 4 chunks.
    for count in [0, 5, u64::MAX] {
        assert_eq!(
            in_level(&set_count(count), 0),
            &DecodeError::InvalidGeometry {
                field: "chunk_count",
                value: count
            }
        );
    }
    // One fewer: the last chunk's parent says it split off a chunk that is not there.
    let last = first.chunks[3];
    let parent = first
        .chunks
        .iter()
        .find(|c| c.id == last.id & !(1 << (63 - last.id.leading_zeros())))
        .unwrap();
    assert_eq!(
        in_level(&set_count(3), 0),
        &DecodeError::InvalidGeometry {
            field: "split_depth",
            value: parent.depth
        }
    );
    // One more in the last level: its chunk's record would be past the end.
    let mut damaged = bytes.clone();
    let at = levels[2].at;
    set_u64(&mut damaged, at, get_u64(&bytes, at) + 1);
    reseal_record(&mut damaged, at, LEVEL_RECORD_LEN);
    assert_eq!(
        split_err(&damaged),
        DecodeError::Truncated {
            needed: (bytes.len() + CHUNK_RECORD_LEN) as u64,
            found: bytes.len() as u64
        }
    );
    // Without its last chunk (and with the count and the items made to agree): the same.
    let mut missing = bytes[..last.at].to_vec();
    missing.extend_from_slice(&bytes[last.at + last.len..]);
    set_u64(&mut missing, first.at, 3);
    reseal_record(&mut missing, first.at, LEVEL_RECORD_LEN);
    let items = get_u64(&bytes, last.encoding() + ITEMS_AT);
    set_u64(
        &mut missing,
        G_ITEMS_AT,
        get_u64(&bytes, G_ITEMS_AT) - items,
    );
    reseal_growable_header(&mut missing);
    assert_eq!(
        in_level(&split_err(&missing), 0),
        &DecodeError::InvalidGeometry {
            field: "split_depth",
            value: parent.depth
        }
    );
    // A chunk twice.
    let mut twice = bytes[..last.at + last.len].to_vec();
    twice.extend_from_slice(&bytes[last.at..]);
    set_u64(&mut twice, first.at, 5);
    reseal_record(&mut twice, first.at, LEVEL_RECORD_LEN);
    assert_eq!(
        in_level(&split_err(&twice), 0),
        &DecodeError::InvalidGeometry {
            field: "chunk_count",
            value: 5
        }
    );
    let mut twice = bytes[..first.chunks[2].at].to_vec();
    twice.extend_from_slice(&bytes[first.chunks[1].at..]);
    assert_eq!(
        in_level(&split_err(&twice), 0),
        &DecodeError::InvalidGeometry {
            field: "chunk_id",
            value: first.chunks[1].id
        }
    );
}

#[test]
fn chunk_ids_and_depths_out_of_place_are_refused_by_name() {
    let bytes = small();
    let levels = layout(&bytes);
    let chunks = &levels[0].chunks;
    // All four chunks of level 0, each split as deep as it goes.
    let ids: Vec<(u64, u64)> = chunks.iter().map(|c| (c.id, c.depth)).collect();
    assert_eq!(ids, [(0, 2), (1, 2), (2, 2), (3, 2)]);
    let with = |chunk: usize, id: u64, depth: u64| {
        let at = chunks[chunk].at;
        let mut damaged = bytes.clone();
        set_u64(&mut damaged, at, id);
        set_u64(&mut damaged, at + 8, depth);
        reseal_record(&mut damaged, at, CHUNK_RECORD_LEN);
        in_level(&split_err(&damaged), 0).clone()
    };
    let invalid = |field, value| DecodeError::InvalidGeometry { field, value };
    // The first chunk is 0; ids increase; a level of 2 route bits has ids under 4.
    assert_eq!(with(0, 1, 2), invalid("chunk_id", 1));
    assert_eq!(with(1, 0, 2), invalid("chunk_id", 0));
    assert_eq!(with(2, 1, 2), invalid("chunk_id", 1));
    assert_eq!(with(3, 4, 2), invalid("chunk_id", 4));
    assert_eq!(with(3, u64::MAX, 2), invalid("chunk_id", u64::MAX));
    // Depths from the bits a chunk's id has to the level's route bits: chunk 1 has one, chunk 2
    // two.
    assert_eq!(with(1, 1, 0), invalid("split_depth", 0));
    assert_eq!(with(2, 2, 1), invalid("split_depth", 1));
    assert_eq!(with(0, 0, 3), invalid("split_depth", 3));
    assert_eq!(with(0, 0, u64::MAX), invalid("split_depth", u64::MAX));
    // Chunk 0 split only once: chunk 2 cannot have been split off it.
    assert_eq!(with(0, 0, 1), invalid("chunk_id", 2));
    // Chunk 0 never split: chunk 1 cannot either.
    assert_eq!(with(0, 0, 0), invalid("chunk_id", 1));
    // Chunk 1 split once less than it was: it owns every fingerprint it holds, but says it
    // never made chunk 3.
    assert_eq!(with(1, 1, 1), invalid("chunk_id", 3));
}

#[test]
fn a_chunk_holding_a_fingerprint_it_does_not_own_is_refused() {
    let bytes = small();
    let levels = layout(&bytes);
    // Sets the first non-zero fingerprint of chunk `chunk` of level `level` to `to(fp)`, with
    // the chunk's checksums made right; returns the bytes, the fingerprint's bucket and the
    // chunk's id.
    let replace = |level: usize, chunk: usize, to: &dyn Fn(u64) -> u64| {
        let span = levels[level].chunks[chunk];
        let at = span.encoding();
        let len = span.len - CHUNK_RECORD_LEN;
        let bits = bytes[at + FINGERPRINT_BITS_AT] as usize;
        let words = get_u64(&bytes, at + TABLE_WORDS_AT) as usize;
        let table: Vec<u64> = (0..words)
            .map(|w| get_u64(&bytes, at + HEADER_LEN + 8 * w))
            .collect();
        let fp_at = |slot: usize| {
            let bit = slot * bits;
            let mut value = table[bit / 64] >> (bit % 64);
            if bit % 64 + bits > 64 {
                value |= table[bit / 64 + 1] << (64 - bit % 64);
            }
            value & ((1 << bits) - 1)
        };
        let slot = (0..words * 64 / bits).find(|&s| fp_at(s) != 0).unwrap();
        let new = to(fp_at(slot));
        assert!(new != 0 && new < 1 << bits);
        let mut damaged = bytes.clone();
        let mut table = table.clone();
        let bit = slot * bits;
        let old = fp_at(slot);
        table[bit / 64] ^= (old ^ new) << (bit % 64);
        if bit % 64 + bits > 64 {
            table[bit / 64 + 1] ^= (old ^ new) >> (64 - bit % 64);
        }
        for (w, word) in table.iter().enumerate() {
            set_u64(&mut damaged, at + HEADER_LEN + 8 * w, *word);
        }
        reseal(&mut damaged[at..at + len]);
        (damaged, (slot / 4) as u64, span.id)
    };
    // Level 0's chunk 0, split twice: its keys' first two route bits are 0.
    let (damaged, bucket, chunk) = replace(0, 0, &|fp| fp | 1);
    let err = split_err(&damaged);
    assert_eq!(
        in_level(&err, 0),
        &DecodeError::UnownedFingerprint { chunk, bucket }
    );
    assert!(err.to_string().contains("does not hold"), "{err}");
    // Level 2's one chunk, never split, owns every route but no core of 0.
    assert_eq!((levels[2].chunks.len(), levels[2].chunks[0].depth), (1, 0));
    let (damaged, bucket, chunk) = replace(2, 0, &|_| 1);
    assert_eq!(
        in_level(&split_err(&damaged), 2),
        &DecodeError::UnownedFingerprint { chunk, bucket }
    );
    // Changed to another it owns (another core; its 10 bits are 8 of core and 2 of route):
    // a valid filter, which writes these very bytes.
    let other_core = |fp: u64| match fp ^ 1 << 9 {
        moved if moved >> 2 != 0 => moved,
        _ => fp ^ 1 << 8,
    };
    let (changed, _, _) = replace(2, 0, &other_core);
    let copy = GrowableCuckooFilter::from_bytes(&changed).unwrap();
    assert!(copy.to_bytes() == changed);
}

#[test]
fn a_chunk_shaped_other_than_the_plan_says_is_refused_naming_the_field() {
    let bytes = small();
    let levels = layout(&bytes);
    let span = levels[1].chunks[0];
    let (at, len) = (span.encoding(), span.len - CHUNK_RECORD_LEN);
    let mut damaged = bytes.clone();
    let buckets = get_u64(&bytes, at + BUCKETS_AT);
    set_u64(&mut damaged, at + BUCKETS_AT, buckets * 2);
    reseal(&mut damaged[at..at + len]);
    assert_eq!(
        in_level(&split_err(&damaged), 1),
        &DecodeError::PlanMismatch {
            field: "buckets",
            expected: buckets,
            found: buckets * 2
        }
    );
    // Chunk 2 of level 0 with chunk 0's fingerprint width: one route bit more than it has.
    let chunks = &levels[0].chunks;
    let mut damaged = bytes.clone();
    let (bits, wider) = (
        bytes[chunks[2].encoding() + FINGERPRINT_BITS_AT],
        bytes[chunks[0].encoding() + FINGERPRINT_BITS_AT],
    );
    assert_eq!(wider, bits + 2);
    let at = chunks[2].encoding();
    damaged[at + FINGERPRINT_BITS_AT] = wider;
    reseal(&mut damaged[at..at + chunks[2].len - CHUNK_RECORD_LEN]);
    assert_eq!(
        in_level(&split_err(&damaged), 0),
        &DecodeError::PlanMismatch {
            field: "fingerprint_bits",
            expected: bits.into(),
            found: wider.into()
        }
    );
    // A chunk's item count that its table does not hold.
    let mut damaged = bytes.clone();
    let items = get_u64(&bytes, at + ITEMS_AT);
    set_u64(&mut damaged, at + ITEMS_AT, items + 1);
    reseal(&mut damaged[at..at + chunks[2].len - CHUNK_RECORD_LEN]);
    assert_eq!(
        in_level(&split_err(&damaged), 0),
        &DecodeError::ItemCountMismatch {
            header: items + 1,
            table: items
        }
    );
}

#[test]
fn a_version_3_header_is_checked_as_a_split_plan() {
    let bytes = small();
    // The growth factor is 2^split_depth, from 2 to 2^10.
    for factor in [3u64, 6, 1 << 11, 1 << 40] {
        let mut damaged = bytes.clone();
        set_u64(&mut damaged, G_GROWTH_FACTOR_AT, factor);
        reseal_growable_header(&mut damaged);
        assert_eq!(
            split_err(&damaged),
            DecodeError::InvalidGeometry {
                field: "growth_factor",
                value: factor
            }
        );
    }
    // Another depth: chunks of other fingerprint widths than those recorded.
    let mut damaged = bytes.clone();
    set_u64(&mut damaged, G_GROWTH_FACTOR_AT, 8);
    reseal_growable_header(&mut damaged);
    let err = split_err(&damaged);
    assert!(
        matches!(
            in_level(&err, 0),
            DecodeError::PlanMismatch {
                field: "fingerprint_bits",
                ..
            }
        ),
        "{err}"
    );
    // A level more than there is, and an item count that is not the chunks' sum.
    let mut damaged = bytes.clone();
    set_u64(&mut damaged, G_LEVEL_COUNT_AT, 4);
    reseal_growable_header(&mut damaged);
    assert_eq!(
        split_err(&damaged),
        DecodeError::Truncated {
            needed: bytes.len() as u64 + LEVEL_RECORD_LEN as u64,
            found: bytes.len() as u64
        }
    );
    let items = get_u64(&bytes, G_ITEMS_AT);
    let mut damaged = bytes.clone();
    set_u64(&mut damaged, G_ITEMS_AT, items + 1);
    reseal_growable_header(&mut damaged);
    assert_eq!(
        split_err(&damaged),
        DecodeError::ItemCountMismatch {
            header: items + 1,
            table: items
        }
    );
    let mut damaged = bytes.clone();
    damaged[8] = 2;
    reseal_growable_header(&mut damaged);
    assert!(GrowableCuckooFilter::from_bytes(&damaged).is_err());
}

#[test]
fn a_split_header_that_promises_huge_levels_allocates_nothing_big() {
    let bytes = small();
    // A first level for 2^30 items: 2^15 chunks of about 8,600 buckets, in 128 bytes.
    let mut header = bytes[..G_HEADER_LEN].to_vec();
    set_u64(&mut header, G_INITIAL_CAPACITY_AT, 1 << 30);
    set_u64(&mut header, G_INITIAL_BUCKETS_AT, 0);
    set_u64(&mut header, G_LEVEL_COUNT_AT, 1);
    reseal_growable_header(&mut header);
    let mut record = [0u8; LEVEL_RECORD_LEN];
    set_u64(&mut record, 0, 1 << 15);
    reseal_record(&mut record, 0, LEVEL_RECORD_LEN);
    header.extend_from_slice(&record);
    let (result, largest) = largest_allocation(|| GrowableCuckooFilter::from_bytes(&header));
    assert_eq!(
        result.unwrap_err(),
        DecodeError::Truncated {
            needed: header.len() as u64 + CHUNK_RECORD_LEN as u64,
            found: header.len() as u64
        }
    );
    assert!(largest < 4096, "{largest} bytes");
    let (result, largest) = largest_allocation(|| GrowableCuckooFilter::read_from(&header[..]));
    assert!(matches!(result, Err(DecodeError::Truncated { .. })));
    assert!(largest < 4096, "{largest} bytes");
    // A chunk count past the routes.
    let mut damaged = header.clone();
    set_u64(&mut damaged, G_HEADER_LEN, 1 << 40);
    reseal_record(&mut damaged, G_HEADER_LEN, LEVEL_RECORD_LEN);
    let (result, largest) = largest_allocation(|| GrowableCuckooFilter::from_bytes(&damaged));
    assert!(matches!(result, Err(DecodeError::Level { level: 0, .. })));
    assert!(largest < 4096, "{largest} bytes");
    // From a stream that delivers 1 MiB of anything after them: refused, with memory that
    // follows what arrived.
    for fill in [0u8, 0xff] {
        let stream = header.as_slice().chain(io::repeat(fill).take(1 << 20));
        let (result, largest) = largest_allocation(|| GrowableCuckooFilter::read_from(stream));
        assert!(result.is_err());
        assert!(largest <= 64 << 10, "{largest} bytes");
    }
}

#[test]
fn decoding_a_split_filter_holds_one_chunk_of_a_stream_at_a_time() {
    // One level of 32 chunks of 1,024 buckets.
    let filter = split(100, 5, 120_000);
    let bytes = filter.to_bytes();
    let largest_chunk = layout(&bytes)
        .iter()
        .flat_map(|level| level.chunks.iter().map(|c| c.len))
        .max()
        .unwrap();
    // Besides the chunks, only fixed-size parts: the item locks, the levels' slots.
    let bound = 2 * largest_chunk + (64 << 10);
    assert!(bound * 2 < bytes.len(), "{bound} of {}", bytes.len());
    let (copy, largest) = largest_allocation(|| GrowableCuckooFilter::from_bytes(&bytes));
    assert_eq!(copy.unwrap().len(), 120_000);
    assert!(largest <= bound, "{largest}");
    let (copy, largest) = largest_allocation(|| GrowableCuckooFilter::read_from(&bytes[..]));
    assert_eq!(copy.unwrap().len(), 120_000);
    assert!(largest <= bound, "{largest}");
}
