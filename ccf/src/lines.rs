//! One segment's lines: found, hashed, looked up and inserted on all cores, written in order.

use core::hash::{BuildHasher, Hash, Hasher};
use std::io::{self, Write};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use concurrent_cuckoo_filter::DefaultHashBuilder;
use rayon::prelude::*;

use crate::filter_file::Filter;

/// What a line is a key of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyFormat {
    /// The line's bytes are the key, hashed as the `&str` of them would be.
    Text,
    /// The line is the key's 64-bit hash in hexadecimal (an optional `0x`, 1 to 16 digits);
    /// unless `unmixed_ok`, lines that look like plain integers rather than hashes are refused
    /// (`mixing::check`).
    Hex64 { unmixed_ok: bool },
}

/// Lines of a segment: where each ends (at its `\n`; the next starts after it) and its key's hash.
#[derive(Debug, Default)]
pub struct Lines {
    ends: Vec<usize>,
    pub hashes: Vec<u64>,
}

/// A `--hex64` line that does not parse: its index in the segment, and where it is.
#[derive(Debug)]
pub struct BadKey {
    pub index: usize,
    pub span: Range<usize>,
}

/// Pieces (and insert parts) a segment is split into per thread, so that a slow thread does not
/// hold the others up.
const PIECES_PER_THREAD: usize = 4;

/// Hashes an insert batch takes at once, between checks whether another thread found no room.
const INSERT_BATCH: usize = 4096;

/// Hashes a lookup batch takes at once.
const LOOKUP_BATCH: usize = 4096;

/// A line as the key it stands for: hashed as the `&str` of its bytes would be (the bytes, then
/// one `0xff`), so that `filter.insert(line)` and `contains(line)` in a Rust program meet it.
/// Lines that are not UTF-8 get the same formula.
#[derive(Debug, Clone, Copy)]
pub struct LineKey<'a>(pub &'a [u8]);

impl Hash for LineKey<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write(self.0);
        state.write_u8(0xff);
    }
}

/// The hash the filter's `insert(line)` would compute for a line.
pub fn text_hash(hasher: &DefaultHashBuilder, line: &[u8]) -> u64 {
    hasher.hash_one(LineKey(line))
}

fn hex_hash(line: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(line).ok()?;
    let digits = text.strip_prefix("0x").unwrap_or(text);
    if digits.is_empty() || digits.len() > 16 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(digits, 16).ok()
}

impl KeyFormat {
    /// The format `--hex64` and `--hex64-unmixed-ok` ask for.
    pub fn of(hex64: bool, unmixed_ok: bool) -> Self {
        if hex64 {
            Self::Hex64 { unmixed_ok }
        } else {
            Self::Text
        }
    }
}

impl Lines {
    /// The lines of `data` (which ends in `\n`), hashed on all cores.
    pub fn split(
        data: &[u8],
        keys: KeyFormat,
        hasher: &DefaultHashBuilder,
    ) -> Result<Self, BadKey> {
        let pieces = piece_bounds(data, rayon::current_num_threads() * PIECES_PER_THREAD);
        let parts: Vec<Result<Lines, BadKey>> = pieces
            .into_par_iter()
            .map(|piece| {
                let mut part = Lines::default();
                let mut start = piece.start;
                for (at, &byte) in data[piece.clone()].iter().enumerate() {
                    if byte != b'\n' {
                        continue;
                    }
                    let end = piece.start + at;
                    let line = &data[start..end];
                    let hash = match keys {
                        KeyFormat::Text => text_hash(hasher, line),
                        KeyFormat::Hex64 { .. } => hex_hash(line).ok_or(BadKey {
                            index: part.ends.len(),
                            span: start..end,
                        })?,
                    };
                    part.ends.push(end);
                    part.hashes.push(hash);
                    start = end + 1;
                }
                Ok(part)
            })
            .collect();
        let mut lines = Lines::default();
        for part in parts {
            match part {
                Ok(part) => {
                    lines.ends.extend(part.ends);
                    lines.hashes.extend(part.hashes);
                }
                Err(bad) => {
                    return Err(BadKey {
                        index: lines.ends.len() + bad.index,
                        span: bad.span,
                    })
                }
            }
        }
        Ok(lines)
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Line `i`'s bytes, without its `\n`.
    pub fn line<'a>(&self, data: &'a [u8], i: usize) -> &'a [u8] {
        let start = i.checked_sub(1).map_or(0, |before| self.ends[before] + 1);
        &data[start..self.ends[i]]
    }

    /// Writes, in order, each line whose `selected` flag equals `want`; returns how many.
    pub fn write_where(
        &self,
        data: &[u8],
        selected: &[bool],
        want: bool,
        out: &mut impl Write,
    ) -> io::Result<u64> {
        let mut written = 0;
        let mut start = 0;
        for (&end, &flag) in self.ends.iter().zip(selected) {
            if flag == want {
                // The line and its `\n` in one write.
                out.write_all(&data[start..=end])?;
                written += 1;
            }
            start = end + 1;
        }
        Ok(written)
    }
}

/// `data` cut into about `pieces` ranges, each ending just after a `\n`.
fn piece_bounds(data: &[u8], pieces: usize) -> Vec<Range<usize>> {
    let mut bounds = Vec::with_capacity(pieces);
    let mut start = 0;
    for k in 1..=pieces {
        let target = (data.len() * k / pieces).max(start);
        let end = match data[target..].iter().position(|&b| b == b'\n') {
            Some(at) if k < pieces => target + at + 1,
            _ => data.len(),
        };
        if end > start {
            bounds.push(start..end);
        }
        start = end;
    }
    bounds
}

/// Whether each line may be in the filter, by batched lookups on all cores: of the lines'
/// hashes in a fixed filter, of the lines themselves (hashed again, as a growable filter takes
/// keys) in a growable one.
pub fn contains(filter: &Filter, data: &[u8], lines: &Lines) -> Vec<bool> {
    let mut answers = vec![false; lines.len()];
    let answer_batches = answers.par_chunks_mut(LOOKUP_BATCH);
    match filter {
        Filter::Fixed(filter) => lines
            .hashes
            .par_chunks(LOOKUP_BATCH)
            .zip(answer_batches)
            .for_each(|(hashes, answers)| filter.contains_hash_batch_into(hashes, answers)),
        Filter::Growable(filter) => {
            let keys: Vec<LineKey<'_>> = (0..lines.len())
                .map(|i| LineKey(lines.line(data, i)))
                .collect();
            keys.par_chunks(LOOKUP_BATCH)
                .zip(answer_batches)
                .for_each(|(keys, answers)| filter.contains_batch_into(keys, answers));
        }
    }
    answers
}

/// Inserts each line unless present, on all cores; whether each went in. The lines are split
/// into parts by their hash's first bucket, a task each; equal lines fall in the same part,
/// which takes them in order, so of equal lines only the first can go in.
/// `Err(i)`: line `i` found no room (the earliest such among those tried); others may have gone
/// in meanwhile.
pub fn insert_unique(filter: &Filter, data: &[u8], lines: &Lines) -> Result<Vec<bool>, usize> {
    match filter {
        Filter::Fixed(filter) => in_parts(&lines.hashes, |_, hashes, new| {
            filter
                .insert_unique_hash_batch_into(hashes, new)
                .map(drop)
                .map_err(|full| full.position().unwrap_or(hashes.len()))
        }),
        Filter::Growable(filter) => in_parts(&lines.hashes, |indices, _, new| {
            for (at, (&i, new)) in indices.iter().zip(new).enumerate() {
                *new = filter
                    .insert_unique(&LineKey(lines.line(data, i)))
                    .map_err(|_| at)?;
            }
            Ok(())
        }),
    }
}

/// Runs `insert` on the hashes in parts by their first bucket, on all cores, a batch at a time:
/// `insert(indices, hashes, new)` gets the batch's indices into `hashes`, their hashes, and
/// their flags to set, and fails with the position in the batch of one that found no room.
fn in_parts(
    hashes: &[u64],
    insert: impl Fn(&[usize], &[u64], &mut [bool]) -> Result<(), usize> + Sync,
) -> Result<Vec<bool>, usize> {
    let parts = (rayon::current_num_threads() * PIECES_PER_THREAD) as u64;
    let stop = AtomicBool::new(false);
    let first_full = AtomicUsize::new(usize::MAX);
    let outcomes: Vec<(Vec<usize>, Vec<bool>)> = (0..parts)
        .into_par_iter()
        .map(|part| {
            // By the first bucket's bits: each part works mostly in its own region of the table.
            let (indices, mine): (Vec<usize>, Vec<u64>) = hashes
                .iter()
                .enumerate()
                .filter(|&(_, &hash)| ((hash >> 32) * parts) >> 32 == part)
                .unzip();
            let mut new = vec![false; mine.len()];
            let batches = indices
                .chunks(INSERT_BATCH)
                .zip(mine.chunks(INSERT_BATCH))
                .zip(new.chunks_mut(INSERT_BATCH));
            for ((indices, mine), new) in batches {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                if let Err(at) = insert(indices, mine, new) {
                    first_full.fetch_min(indices[at], Ordering::Relaxed);
                    stop.store(true, Ordering::Relaxed);
                    break;
                }
            }
            (indices, new)
        })
        .collect();
    match first_full.into_inner() {
        usize::MAX => {}
        i => return Err(i),
    }
    let mut inserted = vec![false; hashes.len()];
    for (indices, new) in outcomes {
        for (i, new) in indices.into_iter().zip(new) {
            inserted[i] = new;
        }
    }
    Ok(inserted)
}
