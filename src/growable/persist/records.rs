//! A growable filter's levels in the format, after its header (`FORMAT.md`, "The byte format of
//! a `GrowableCuckooFilter`"), and a level's statistics. A level's length is known only chunk by
//! chunk, so it is read a checked part at a time, allocating only for bytes that are there.

use std::io::{self, Read, Write};

use super::header::{GrowableHeader, HEADER_LEN, VERSION_SPLIT};
use crate::growable::chunks::{Chunk, Chunks, LockedChunk};
use crate::growable::item_locks::ItemLocks;
use crate::growable::levels::{LevelShape, Levels, LockedLevel, Plan};
use crate::growable::split::SplitPlacement;
use crate::growable::{Growable, GrowableCuckooFilter};
use crate::persist::encoding::{
    check_checksum, check_len, check_record, data_words, decode_table, encoded_len, hasher_of,
    read_up_to, sealed_record, u64_at, write_encoding, Header,
};
use crate::persist::{DecodeError, StableHashBuilder};
use crate::persist::{FilterStats, RecordedHasher};
use crate::raw::{Geometry, RawFilter, DEFAULT_ITEM_LOCKS};

/// Bytes of a level's record: its chunk count and the record's checksum.
const LEVEL_RECORD_LEN: usize = 16;
/// Bytes of a chunk's record: its id, its split depth and the record's checksum.
const CHUNK_RECORD_LEN: usize = 24;

/// Writes the filter's plan and every level's chunks, from one snapshot: every chunk of every
/// level locked ([`Levels::lock_all`]) while the whole encoding goes to `writer`.
pub(crate) fn write_to<W: Write>(
    levels: &Levels,
    hasher: RecordedHasher,
    writer: W,
) -> io::Result<()> {
    write_locked(levels, &levels.lock_all(), hasher, writer)
}

/// The bytes of [`write_to`], written into a vector allocated at their exact length once every
/// chunk is locked, when the length can no longer change.
pub(crate) fn to_bytes(levels: &Levels, hasher: RecordedHasher) -> Vec<u8> {
    let locked = levels.lock_all();
    let len = HEADER_LEN as u64 + locked.iter().map(|l| level_len(l.level)).sum::<u64>();
    let mut out = Vec::with_capacity(len as usize);
    write_locked(levels, &locked, hasher, &mut out).expect("writing to a Vec cannot fail");
    debug_assert_eq!(out.len() as u64, len);
    out
}

/// [`write_to`] of levels locked by [`Levels::lock_all`].
fn write_locked<W: Write>(
    levels: &Levels,
    locked: &[LockedLevel<'_>],
    hasher: RecordedHasher,
    mut writer: W,
) -> io::Result<()> {
    let items = locked
        .iter()
        .flat_map(|level| &level.chunks)
        .map(|chunk| chunk.table.items())
        .sum();
    let header = GrowableHeader::of(levels.plan(), hasher, locked.len(), items);
    writer.write_all(&header.to_bytes())?;
    for LockedLevel { level, chunks } in locked {
        writer.write_all(&sealed_record::<LEVEL_RECORD_LEN>(
            &[],
            &[chunks.len() as u64],
        ))?;
        for LockedChunk { id, chunk, table } in chunks {
            let record = [*id, chunk.split_state().depth().into()];
            writer.write_all(&sealed_record::<CHUNK_RECORD_LEN>(&[], &record))?;
            let header = Header::new(
                chunk.geometry(),
                level.chunk_capacity(),
                hasher,
                table.items(),
                table.data_words(),
            );
            write_encoding(&mut writer, header, |from, out| table.read_words(from, out))?;
        }
    }
    Ok(())
}

/// Bytes of a level's encoding: its record, and each chunk's record and table.
pub(crate) fn level_len(level: &Chunks) -> u64 {
    let chunks: u64 = level
        .iter()
        .map(|chunk| CHUNK_RECORD_LEN as u64 + encoded_len(chunk.geometry()))
        .sum();
    LEVEL_RECORD_LEN as u64 + chunks
}

/// A split level's statistics: its chunks' buckets, items and memory together.
pub(crate) fn stats(level: &Chunks, hasher: RecordedHasher) -> FilterStats {
    let template = level.shape().template;
    let buckets = level.bucket_count();
    let stripes = level.iter().map(|chunk| chunk.stripe_count()).sum();
    let bucket_size = template.shape.bucket_size;
    let len = level.len();
    let load_factor = len as f64 / (buckets * bucket_size) as f64;
    let memory_bytes = level.memory_usage();
    let fingerprint_bits = level.core_bits();
    FilterStats {
        buckets,
        bucket_size,
        fingerprint_bits,
        semi_sorted: template.shape.semi_sorted,
        stripes,
        len,
        capacity: level.capacity(),
        load_factor,
        memory_bytes,
        bits_per_item: (len > 0).then(|| memory_bytes as f64 * 8.0 / len as f64),
        // Fully split at the load it is sized for, every lookup compares the core bits alone.
        expected_false_positive_rate: template.shape.expected_false_positive_rate(),
        false_positive_rate_at_load: level.false_positive_rate_at_load(),
        hasher_id: hasher.id,
        hasher_seed: hasher.seed,
        format_version: VERSION_SPLIT,
        serialized_len: level_len(level),
    }
}

/// Where the bytes after the growable header come from, one part (a record, or a record and
/// the table after it) at a time.
trait Parts {
    /// Starts the next part, after the current one.
    fn next_part(&mut self);
    /// The current part's first `len` bytes, read if need be; [`DecodeError::Truncated`] if the
    /// input ends first, with the bytes up to the end of the part as `needed`.
    fn part(&mut self, len: u64) -> Result<&[u8], DecodeError>;
}

/// A whole encoding in memory.
struct Slice<'a> {
    bytes: &'a [u8],
    start: usize,
    end: usize,
}

impl Parts for Slice<'_> {
    fn next_part(&mut self) {
        self.start = self.end;
    }

    fn part(&mut self, len: u64) -> Result<&[u8], DecodeError> {
        let needed = self.start as u64 + len;
        let found = self.bytes.len() as u64;
        if needed > found {
            return Err(DecodeError::Truncated { needed, found });
        }
        self.end = needed as usize;
        Ok(&self.bytes[self.start..self.end])
    }
}

/// A reader, of which only the current part is held: memory grows with the bytes of the part
/// that arrive, never ahead of them.
struct Stream<R> {
    reader: R,
    part: Vec<u8>,
    /// Bytes of the parts before the current one, the header included.
    before: u64,
}

impl<R: Read> Parts for Stream<R> {
    fn next_part(&mut self) {
        self.before += self.part.len() as u64;
        self.part.clear();
    }

    fn part(&mut self, len: u64) -> Result<&[u8], DecodeError> {
        read_up_to(&mut self.reader, &mut self.part, len)?;
        let found = self.part.len() as u64;
        if found < len {
            return Err(DecodeError::Truncated {
                needed: self.before + len,
                found: self.before + found,
            });
        }
        Ok(&self.part[..len as usize])
    }
}

/// Decodes a whole version-3 encoding, whose header and plan are checked: `bytes` must be
/// exactly one growable filter.
pub(crate) fn decode_slice<S: StableHashBuilder>(
    header: &GrowableHeader,
    plan: Plan,
    bytes: &[u8],
) -> Result<GrowableCuckooFilter<S>, DecodeError> {
    let mut parts = Slice {
        bytes,
        start: HEADER_LEN,
        end: HEADER_LEN,
    };
    let filter = decode(header, plan, &mut parts)?;
    // The parts end inside `bytes`: only trailing bytes can be wrong.
    check_len(parts.end as u64, bytes.len())?;
    Ok(filter)
}

/// Reads the rest of a version-3 encoding from `reader`, after its header, which is checked
/// with its plan: exactly the filter's bytes, and not one more.
pub(crate) fn decode_stream<S: StableHashBuilder, R: Read>(
    header: &GrowableHeader,
    plan: Plan,
    reader: R,
) -> Result<GrowableCuckooFilter<S>, DecodeError> {
    let mut parts = Stream {
        reader,
        part: Vec::new(),
        before: HEADER_LEN as u64,
    };
    decode(header, plan, &mut parts)
}

/// Decodes the levels after the header: every level's shape by the plan first, then the
/// hasher, then each level in turn.
fn decode<S: StableHashBuilder>(
    header: &GrowableHeader,
    plan: Plan,
    parts: &mut impl Parts,
) -> Result<GrowableCuckooFilter<S>, DecodeError> {
    let shapes = (0..header.level_count as usize)
        .map(|level| {
            plan.split_level_shape(level)
                .map_err(|error| DecodeError::InvalidPlan {
                    level: level as u64,
                    error,
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let hasher = hasher_of::<S>(header.hasher)?;
    let mut levels = Vec::with_capacity(shapes.len());
    let mut items = 0u64;
    for (index, shape) in shapes.iter().enumerate() {
        let level = decode_level_chunks(shape, header.hasher, parts).map_err(|error| {
            match error {
                // The input's end and the reader's faults are the whole filter's.
                DecodeError::Truncated { .. } | DecodeError::Io { .. } => error,
                error => DecodeError::Level {
                    level: index as u64,
                    error: Box::new(error),
                },
            }
        })?;
        items += level.len() as u64;
        levels.push(level);
    }
    assemble(
        Levels::from_levels(plan, levels),
        header.items,
        items,
        hasher,
    )
}

/// Decodes one level: its record, then each chunk's record and table, then that its chunks
/// hold every route once.
fn decode_level_chunks(
    shape: &LevelShape,
    hasher: RecordedHasher,
    parts: &mut impl Parts,
) -> Result<Chunks, DecodeError> {
    let invalid = |field, value| DecodeError::InvalidGeometry { field, value };
    parts.next_part();
    let record = parts.part(LEVEL_RECORD_LEN as u64)?;
    check_record(record)?;
    let count = u64_at(record, 0);
    // Every route's first `first_depth` bits need a chunk of their own.
    if !(1u64 << shape.chunks.first_depth..=1u64 << shape.chunks.route_bits).contains(&count) {
        return Err(invalid("chunk_count", count));
    }
    // Grown as chunks arrive, not by the count: each takes bytes of the input.
    let mut chunks: Vec<(u64, Chunk)> = Vec::new();
    for index in 0..count {
        parts.next_part();
        let record = parts.part(CHUNK_RECORD_LEN as u64)?;
        check_record(record)?;
        let (id, depth) = (u64_at(record, 0), u64_at(record, 8));
        let born_at = born_at(shape, &chunks, index, id).ok_or(invalid("chunk_id", id))?;
        if !(u64::from(born_at)..=u64::from(shape.chunks.route_bits)).contains(&depth) {
            return Err(invalid("split_depth", depth));
        }
        let placement = SplitPlacement::new(
            shape.chunks.template.shape.bucket_count,
            shape.chunks.template.shape.fingerprint_bits,
            born_at,
            shape.chunks.route_bits,
        );
        let mut geometry = shape.chunks.template;
        geometry.shape.fingerprint_bits = placement.fingerprint_bits();
        let expected = Header::new(
            &geometry,
            shape.chunk_capacity,
            hasher,
            0,
            data_words(&geometry) as usize,
        );
        let header_len = (CHUNK_RECORD_LEN + expected.to_bytes().len()) as u64;
        let (header, _) = level_header(&parts.part(header_len)?[CHUNK_RECORD_LEN..], &expected)?;
        let len = CHUNK_RECORD_LEN as u64 + header.total_len();
        let raw = decode_level(&parts.part(len)?[CHUNK_RECORD_LEN..], &expected)?;
        let chunk = raw.into_chunk(placement, depth as u32);
        if let Some(bucket) = chunk.first_unowned_bucket() {
            return Err(DecodeError::UnownedFingerprint {
                chunk: id,
                bucket: bucket as u64,
            });
        }
        chunks.push((id, chunk));
    }
    // Each chunk's parent was split past the chunk's bit (`born_at`); each split a chunk's
    // depth says it made must have left its chunk.
    for (id, chunk) in &chunks {
        let depth = chunk.split_state().depth();
        let born_at = chunk.placement().born_at();
        if (born_at..depth).any(|bit| find(&chunks, id | 1 << bit).is_none()) {
            return Err(invalid("split_depth", depth.into()));
        }
    }
    let level = Chunks::from_chunks(shape.chunks.template, shape.chunks.route_bits, chunks)
        .ok_or(invalid("chunk_count", count))?;
    Ok(level.with_max_chunks(shape.max_chunks))
}

/// The chunk `id` among `chunks`, which are in id order.
fn find(chunks: &[(u64, Chunk)], id: u64) -> Option<&Chunk> {
    let index = chunks.binary_search_by_key(&id, |(id, _)| *id).ok()?;
    Some(&chunks[index].1)
}

/// How many route bits chunk `id`, the `index`th of its level, was born with, if a level can
/// have it there after `chunks`: ids in increasing order, the first chunks `0..2^first_depth`,
/// and each later one the child of a chunk before it that was split past its bit.
fn born_at(shape: &LevelShape, chunks: &[(u64, Chunk)], index: u64, id: u64) -> Option<u32> {
    let after_last = chunks.last().map_or(true, |(last, _)| id > *last);
    if !after_last || id >> shape.chunks.route_bits != 0 {
        return None;
    }
    if index < 1 << shape.chunks.first_depth {
        return (id == index).then_some(shape.chunks.first_depth);
    }
    // The split that made it was `born_at - 1` deep, of the chunk without that bit.
    let born_at = 64 - id.leading_zeros();
    let parent = find(chunks, id ^ 1 << (born_at - 1))?;
    (parent.split_state().depth() >= born_at).then_some(born_at)
}

/// The decoded filter, once the item count its header recorded is the count its levels hold.
fn assemble<S>(
    levels: Levels,
    recorded: u64,
    held: u64,
    hasher: S,
) -> Result<GrowableCuckooFilter<S>, DecodeError> {
    if recorded != held {
        return Err(DecodeError::ItemCountMismatch {
            header: recorded,
            table: held,
        });
    }
    let item_locks = ItemLocks::new(DEFAULT_ITEM_LOCKS).ok_or(DecodeError::OutOfMemory {
        bytes: DEFAULT_ITEM_LOCKS as u64 * 8,
    })?;
    Ok(GrowableCuckooFilter::from_parts(
        Growable { levels, item_locks },
        hasher,
    ))
}

/// Decodes one level's encoding, whose header must be `expected` in every field but the item
/// count.
fn decode_level(bytes: &[u8], expected: &Header) -> Result<RawFilter, DecodeError> {
    let (header, geometry) = level_header(bytes, expected)?;
    check_len(header.total_len(), bytes.len())?;
    check_checksum(bytes)?;
    decode_table(&header, &geometry, bytes)
}

/// The header at the start of a level's encoding and its geometry, checked: the fixed format's
/// checks of a header, then every field but the item count against `expected`.
fn level_header(bytes: &[u8], expected: &Header) -> Result<(Header, Geometry), DecodeError> {
    let header = Header::parse(bytes)?;
    for ((field, expected), (_, found)) in expected
        .shape_fields()
        .into_iter()
        .zip(header.shape_fields())
    {
        if found != expected {
            return Err(DecodeError::PlanMismatch {
                field,
                expected,
                found,
            });
        }
    }
    let geometry = header.geometry()?;
    Ok((header, geometry))
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::growable::levels::build_level;
    use crate::settings::TableSettings;

    fn plan(initial_capacity: usize, initial_buckets: usize, depth: u32, max: usize) -> Plan {
        let mut table = TableSettings {
            layout: Some(crate::TableLayout::Packed),
            ..TableSettings::default()
        };
        if initial_buckets != 0 {
            table.request.bucket_size = Some(4);
            table.request.fingerprint_bits = Some(8);
            table.request.semi_sorted = Some(false);
        }
        Plan {
            table,
            initial_capacity,
            initial_buckets,
            false_positive_rate: 0.01,
            max_capacity: max,
            split_depth: depth,
        }
    }

    /// The shapes the decoder expects are those the levels are built with.
    #[test]
    fn the_decoders_level_shapes_are_the_built_ones() {
        let plans = [
            plan(1_000, 0, 2, usize::MAX),
            plan(400_000, 0, 3, usize::MAX),
            plan(20, 16, 2, usize::MAX),
            plan(5_000, 0, 1, 30_000),
        ];
        for plan in &plans {
            for level in 0..3 {
                let built = build_level(plan, level);
                match (plan.split_level_shape(level), built) {
                    (Ok(shape), Ok(built)) => {
                        assert_eq!(built.shape(), shape.chunks, "{plan:?} {level}");
                        assert_eq!(built.chunk_capacity(), shape.chunk_capacity);
                    }
                    (Err(shape), Err(built)) => assert_eq!(shape, built, "{plan:?} {level}"),
                    (shape, built) => panic!("{plan:?} {level}: {shape:?} and {built:?}"),
                }
            }
        }
        assert!(plans[1].split_level_shape(0).unwrap().chunks.first_depth > 0);
        assert!(plans[3].split_level_shape(1).is_ok() && plans[3].split_level_shape(2).is_err());
    }
}
