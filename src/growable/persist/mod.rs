//! The growable kind's bytes (`FORMAT.md`): the header, then each level's record and its chunks,
//! each a record and a fixed filter's encoding. A level's length is known only chunk by chunk,
//! so it is read a checked part at a time, allocating only for bytes that have arrived.

mod header;

use std::io::{self, Read, Write};

use self::header::{GrowableHeader, HEADER_LEN, VERSION_SPLIT};
use super::chunk_shape::ChunkShape;
use super::chunks::{Chunk, Chunks, LockedChunk};
use super::levels::{Levels, LockedLevel};
use super::{item_locks, Growable};
use crate::filter::kind::reserved;
use crate::persist::encoding::{
    check_checksum, check_len, check_record, data_words, decode_table, encoded_len, hasher_of,
    parse_table, read_up_to, sealed_record, u64_at, write_encoding, Header,
    HEADER_LEN as TABLE_HEADER_LEN,
};
use crate::persist::{DecodeError, FilterStats, RecordedHasher, StableHashBuilder};
use crate::raw::DEFAULT_ITEM_LOCKS;

/// A level's record: its chunk count and checksum.
const LEVEL_RECORD_LEN: usize = 16;
/// A chunk's record: its id, split depth and checksum.
const CHUNK_RECORD_LEN: usize = 24;

pub(super) fn serialized_len(levels: &Levels) -> u64 {
    HEADER_LEN as u64 + levels.iter().map(level_len).sum::<u64>()
}

fn level_len(level: &Chunks) -> u64 {
    let chunks: u64 = level
        .iter()
        .map(|chunk| CHUNK_RECORD_LEN as u64 + encoded_len(chunk.geometry()))
        .sum();
    LEVEL_RECORD_LEN as u64 + chunks
}

/// The bytes of [`write_to`], allocated at their exact length once every chunk is locked.
pub(super) fn to_bytes(levels: &Levels, hasher: RecordedHasher) -> io::Result<Vec<u8>> {
    let locked = levels.lock_all();
    let len = HEADER_LEN as u64 + locked.iter().map(|l| level_len(l.level)).sum::<u64>();
    let mut out = reserved(len)?;
    write_to(levels, &locked, hasher, &mut out)?;
    debug_assert_eq!(out.len() as u64, len);
    Ok(out)
}

/// Writes `locked`, a snapshot of `levels` with every chunk locked ([`Levels::lock_all`]).
pub(super) fn write_to<W: Write>(
    levels: &Levels,
    locked: &[LockedLevel<'_>],
    hasher: RecordedHasher,
    mut writer: W,
) -> io::Result<()> {
    let chunks = || locked.iter().flat_map(|level| &level.chunks);
    let header = GrowableHeader {
        plan: levels.plan().clone(),
        hasher,
        level_count: locked.len(),
        items: chunks().map(|chunk| chunk.table.items() as u64).sum(),
    };
    writer.write_all(&header.to_bytes())?;
    for LockedLevel { level, chunks } in locked {
        let count = [chunks.len() as u64];
        writer.write_all(&sealed_record::<LEVEL_RECORD_LEN>(&[], &count))?;
        for LockedChunk { id, chunk, table } in chunks {
            let record = [*id, chunk.split_state().depth().into()];
            writer.write_all(&sealed_record::<CHUNK_RECORD_LEN>(&[], &record))?;
            let capacity = level.shape().chunk_capacity();
            write_encoding(&mut writer, table, chunk.geometry(), capacity, hasher)?;
        }
    }
    Ok(())
}

pub(super) fn stats(level: &Chunks, hasher: RecordedHasher) -> FilterStats {
    let shape = level.shape().template.shape;
    let (buckets, len, memory_bytes) = (level.bucket_count(), level.len(), level.memory_usage());
    FilterStats {
        buckets,
        bucket_size: shape.bucket_size,
        fingerprint_bits: level.core_bits(),
        semi_sorted: shape.semi_sorted,
        stripes: level.iter().map(Chunk::stripe_count).sum(),
        len,
        capacity: level.capacity(),
        load_factor: len as f64 / (buckets * shape.bucket_size) as f64,
        memory_bytes,
        bits_per_item: (len > 0).then(|| memory_bytes as f64 * 8.0 / len as f64),
        // Fully split at the load it is sized for, a lookup compares the core bits alone.
        expected_false_positive_rate: shape.expected_false_positive_rate(),
        false_positive_rate_at_load: level.false_positive_rate_at_load(),
        hasher_id: hasher.id,
        hasher_seed: hasher.seed,
        format_version: VERSION_SPLIT,
        serialized_len: level_len(level),
    }
}

pub(super) fn decode<S: StableHashBuilder>(bytes: &[u8]) -> Result<(Growable, S), DecodeError> {
    let mut rest = bytes;
    let decoded = decode_from(&mut rest)?;
    check_len((bytes.len() - rest.len()) as u64, bytes.len())?;
    Ok(decoded)
}

/// Reads the header, then as many bytes as the levels it describes take, and not one more.
pub(super) fn decode_from<S: StableHashBuilder, R: Read>(
    reader: R,
) -> Result<(Growable, S), DecodeError> {
    let mut parts = Parts {
        reader,
        part: Vec::new(),
        before: 0,
    };
    read_up_to(&mut parts.reader, &mut parts.part, HEADER_LEN as u64)?;
    let header = GrowableHeader::parse(&parts.part)?;
    let shapes = (0..header.level_count)
        .map(|level| {
            header
                .plan
                .level_shape(level)
                .map_err(|error| DecodeError::InvalidPlan {
                    level: level as u64,
                    error,
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let hasher = hasher_of::<S>(header.hasher)?;
    let mut levels = Vec::with_capacity(shapes.len());
    for (index, shape) in shapes.iter().enumerate() {
        levels.push(decode_level(shape, header.hasher, &mut parts).map_err(
            |error| match error {
                // The input's end and the reader's faults are the whole filter's.
                DecodeError::Truncated { .. } | DecodeError::Io { .. } => error,
                error => DecodeError::Level {
                    level: index as u64,
                    error: Box::new(error),
                },
            },
        )?);
    }
    let held = levels.iter().map(|level| level.len() as u64).sum();
    if header.items != held {
        return Err(DecodeError::ItemCountMismatch {
            header: header.items,
            table: held,
        });
    }
    let item_locks = item_locks(DEFAULT_ITEM_LOCKS).ok_or(DecodeError::OutOfMemory {
        bytes: DEFAULT_ITEM_LOCKS as u64 * 8,
    })?;
    let levels = Levels::from_levels(header.plan, levels);
    Ok((Growable { levels, item_locks }, hasher))
}

/// The input after the header, one part (a record, and the table after it) held at a time.
struct Parts<R> {
    reader: R,
    part: Vec<u8>,
    /// Bytes of the parts before the current one, the header included.
    before: u64,
}

impl<R: Read> Parts<R> {
    fn next(&mut self, len: u64) -> Result<&[u8], DecodeError> {
        self.before += self.part.len() as u64;
        self.part.clear();
        self.more(len)
    }

    /// The current part's first `len` bytes, read if need be.
    fn more(&mut self, len: u64) -> Result<&[u8], DecodeError> {
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

/// One level: each chunk but the first ones the child of an earlier chunk split past its bit, and
/// each split's child present; `from_chunks` checks again that every route is held once.
fn decode_level<R: Read>(
    shape: &ChunkShape,
    hasher: RecordedHasher,
    parts: &mut Parts<R>,
) -> Result<Chunks, DecodeError> {
    let invalid = |field, value| DecodeError::InvalidGeometry { field, value };
    let record = parts.next(LEVEL_RECORD_LEN as u64)?;
    check_record(record)?;
    let count = u64_at(record, 0);
    // Every route's first `first_depth` bits need a chunk of their own.
    let routes = shape.route_bits;
    if !(1u64 << shape.first_depth..=1u64 << routes).contains(&count) {
        return Err(invalid("chunk_count", count));
    }
    // Grown as chunks arrive, not by the count: each takes bytes of the input.
    let mut chunks: Vec<(u64, Chunk)> = Vec::new();
    for index in 0..count {
        let record = parts.next(CHUNK_RECORD_LEN as u64)?;
        check_record(record)?;
        let (id, depth) = (u64_at(record, 0), u64_at(record, 8));
        let born_at = born_at(shape, &chunks, index, id).ok_or(invalid("chunk_id", id))?;
        if !(u64::from(born_at)..=u64::from(routes)).contains(&depth) {
            return Err(invalid("split_depth", depth));
        }
        let placement = shape.placement(born_at);
        let geometry = placement.geometry(shape.template);
        let words = data_words(&geometry) as usize;
        let expected = Header::new(&geometry, shape.chunk_capacity(), hasher, 0, words);
        let bytes = &parts.more((CHUNK_RECORD_LEN + TABLE_HEADER_LEN) as u64)?[CHUNK_RECORD_LEN..];
        let (header, geometry) = parse_table(bytes, Some(&expected))?;
        let len = CHUNK_RECORD_LEN as u64 + header.total_len();
        let bytes = &parts.more(len)?[CHUNK_RECORD_LEN..];
        check_checksum(bytes)?;
        let chunk = decode_table(&header, &geometry, bytes)?.into_chunk(placement, depth as u32);
        if let Some(bucket) = chunk.first_unowned_bucket() {
            return Err(DecodeError::UnownedFingerprint {
                chunk: id,
                bucket: bucket as u64,
            });
        }
        chunks.push((id, chunk));
    }
    // Each split a chunk's depth says it made must have left its chunk.
    for (id, chunk) in &chunks {
        let depth = chunk.split_state().depth();
        let born_at = chunk.placement().born_at();
        if (born_at..depth).any(|bit| find(&chunks, id | 1 << bit).is_none()) {
            return Err(invalid("split_depth", depth.into()));
        }
    }
    Chunks::from_chunks(*shape, chunks).ok_or(invalid("chunk_count", count))
}

/// The chunk `id` among `chunks`, in id order.
fn find(chunks: &[(u64, Chunk)], id: u64) -> Option<&Chunk> {
    let index = chunks.binary_search_by_key(&id, |(id, _)| *id).ok()?;
    Some(&chunks[index].1)
}

/// The route bits chunk `id`, the `index`th, was born with, if it can follow `chunks`: ids
/// increase, the first are `0..2^first_depth`, each later one a child of a chunk before it.
fn born_at(shape: &ChunkShape, chunks: &[(u64, Chunk)], index: u64, id: u64) -> Option<u32> {
    let after_last = chunks.last().map_or(true, |(last, _)| id > *last);
    if !after_last || id >> shape.route_bits != 0 {
        return None;
    }
    if index < 1 << shape.first_depth {
        return (id == index).then_some(shape.first_depth);
    }
    // The split that made it was `born_at - 1` deep, of the chunk without that bit.
    let born_at = 64 - id.leading_zeros();
    let parent = find(chunks, id ^ 1 << (born_at - 1))?;
    (parent.split_state().depth() >= born_at).then_some(born_at)
}
