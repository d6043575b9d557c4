//! The expiring filter's bytes (FORMAT.md, "Expiring filter"): a fixed header, the packed slot
//! words, and an XXH3 checksum of everything before it, written under every stripe lock, under
//! which `duplicate` copies the words too.

use std::io::{self, Read, Write};

use xxhash_rust::xxh3::Xxh3;

use super::builder::{rate_of, ExpiringBuilder, LOAD, MAX_FINGERPRINT_BITS};
use super::core::{Settings, Table};
use super::slots::Slots;
use super::window::{nanos, Ages, Clock, Overflow, Window, TAG_BITS};
use super::ExpiringCuckooFilter;
use crate::error::BuildError;
use crate::persist::encoding::{
    check_checksum, check_field, check_len, hasher_of, not_this_magic, put_words, read_up_to,
    u64_at, EXPIRING_MAGIC as MAGIC,
};
use crate::persist::{DecodeError, RecordedHasher, StableHashBuilder};
use crate::sync::Ordering;

const VERSION: u16 = 1;
/// Bytes before the slot words.
const HEADER_LEN: usize = 96;
const CHECKSUM_LEN: usize = 8;

/// A state the table really had: its words and clocks, taken under every stripe lock (or
/// decoded, its words read from the bytes as they are stored).
struct Snapshot<W> {
    words: W,
    generation: u64,
    positions: u64,
    elapsed: u64,
    items: u64,
}

impl Table {
    /// `f` of the clocks, under every stripe lock: no write moves a word until `f` returns, so
    /// they are the clocks of every word `f` reads (a generation published meanwhile only ages
    /// them, within the tags).
    fn locked<R>(&self, f: impl FnOnce(Snapshot<()>) -> R) -> R {
        // A decoder takes a time window's early expiries (`ahead`) as the generation less its
        // time's: a monotonic clock that ran on past the published generation must publish
        // first, or the copy's clock falls behind and keeps what the filter forgot.
        self.advance(self.clock.clock_generation());
        let _all = self.stripes.lock_all();
        f(Snapshot {
            words: (),
            generation: self.clock.current(),
            positions: self.clock.positions(),
            elapsed: self.clock.ticks.elapsed(),
            items: self.stripes.len() as u64,
        })
    }

    /// A table of `settings` holding `snapshot`'s slots; its stripes count them.
    fn from_snapshot(
        settings: Settings,
        snapshot: Snapshot<impl IntoIterator<Item = u64>>,
    ) -> Result<Self, DecodeError> {
        let invalid = |field, value| DecodeError::InvalidGeometry { field, value };
        let mut table = Table::new(
            settings,
            snapshot.generation,
            snapshot.positions,
            snapshot.elapsed,
        )
        .map_err(|err| match err {
            // A valid table there is no memory for: not a fault of the bytes.
            BuildError::OutOfMemory { bytes } => DecodeError::OutOfMemory {
                bytes: bytes as u64,
            },
            _ => invalid("bucket_count", settings.bucket_count as u64),
        })?;
        for (word, value) in table.slots.words().iter().zip(snapshot.words) {
            word.store(value, Ordering::Relaxed);
        }
        let mut items = 0;
        for bucket in 0..settings.bucket_count {
            let slots = table.slots.bucket(bucket);
            if slots.iter().any(|&s| s != 0 && Ages::fingerprint(s) == 0) {
                return Err(DecodeError::InvalidBucket {
                    bucket: bucket as u64,
                });
            }
            let used = slots.iter().filter(|&&s| s != 0).count() as u64;
            table.stripes.add_count(bucket, used);
            items += used;
        }
        let used_bits = table.slots.used_bits();
        let padding_clear = table.slots.words().iter().enumerate().all(|(i, word)| {
            let word = word.load(Ordering::Relaxed);
            i * 64 + 64 <= used_bits || word >> used_bits.saturating_sub(i * 64) == 0
        });
        if !padding_clear {
            return Err(DecodeError::NonZeroPadding);
        }
        if items != snapshot.items {
            return Err(DecodeError::ItemCountMismatch {
                header: snapshot.items,
                table: items,
            });
        }
        Ok(table)
    }

    /// A copy, its words read straight into its own table under every stripe lock.
    pub(crate) fn duplicate(&self) -> Option<Self> {
        self.locked(|clocks| {
            let words = self.slots.words().iter();
            let snapshot = Snapshot {
                words: words.map(|word| word.load(Ordering::Relaxed)),
                generation: clocks.generation,
                positions: clocks.positions,
                elapsed: clocks.elapsed,
                items: clocks.items,
            };
            Self::from_snapshot(self.settings, snapshot).ok()
        })
    }

    pub(crate) fn serialized_len(&self) -> u64 {
        encoded_len(&self.settings)
    }

    /// Writes the encoding under every stripe lock, a part at a time: only ever given the
    /// crate's own writers.
    pub(crate) fn write_to<S: StableHashBuilder, W: Write>(
        &self,
        hasher: &S,
        mut writer: W,
    ) -> io::Result<()> {
        // The hasher's `seed` is user code: asked before the locks are taken.
        let recorded = RecordedHasher::of(hasher);
        self.locked(|clocks| {
            let mut checksum = Xxh3::new();
            let mut put = |bytes: &[u8]| {
                checksum.update(bytes);
                writer.write_all(bytes)
            };
            put(&self.header(&clocks, recorded))?;
            let words = self.slots.word_count();
            put_words(
                words,
                |from, part| self.slots.read_words(from, part),
                &mut put,
            )?;
            writer.write_all(&checksum.digest().to_le_bytes())
        })
    }

    /// The header of the encoding of a table at `clocks`, hashed by `hasher`.
    fn header(&self, clocks: &Snapshot<()>, hasher: RecordedHasher) -> [u8; HEADER_LEN] {
        let settings = &self.settings;
        let (kind, window) = match settings.window {
            Window::Items(items) => (0u8, items),
            Window::Time(duration) => (1, nanos(duration)),
        };
        let mut header = [0u8; HEADER_LEN];
        header[..8].copy_from_slice(&MAGIC);
        header[8..10].copy_from_slice(&VERSION.to_le_bytes());
        let clock = u8::from(settings.clock == Clock::Manual);
        let overflow = u8::from(settings.overflow == Overflow::ExpireEarly);
        header[10..16].copy_from_slice(&[0, 0, kind, clock, overflow, settings.generations as u8]);
        let fields = [
            window,
            settings.capacity,
            u64::from(settings.fingerprint_bits) | u64::from(TAG_BITS) << 32,
            settings.bucket_count as u64,
            clocks.generation,
            clocks.positions,
            clocks.elapsed,
            clocks.items,
            hasher.id,
            hasher.seed,
        ];
        for (at, field) in header[16..].chunks_exact_mut(8).zip(fields) {
            at.copy_from_slice(&field.to_le_bytes());
        }
        header
    }

    pub(crate) fn decode<S: StableHashBuilder>(bytes: &[u8]) -> Result<(Self, S), DecodeError> {
        let settings = header_settings(bytes)?;
        check_len(encoded_len(&settings), bytes.len())?;
        check_checksum(bytes)?;
        let hasher = hasher_of::<S>(RecordedHasher {
            id: u64_at(bytes, 80),
            seed: u64_at(bytes, 88),
        })?;
        let words = &bytes[HEADER_LEN..bytes.len() - CHECKSUM_LEN];
        let snapshot = Snapshot {
            words: words.chunks_exact(8).map(|word| u64_at(word, 0)),
            generation: u64_at(bytes, 48),
            positions: u64_at(bytes, 56),
            elapsed: u64_at(bytes, 64),
            items: u64_at(bytes, 72),
        };
        Ok((Self::from_snapshot(settings, snapshot)?, hasher))
    }

    pub(crate) fn decode_from<S: StableHashBuilder, R: Read>(
        mut reader: R,
    ) -> Result<(Self, S), DecodeError> {
        let mut bytes = Vec::new();
        read_up_to(&mut reader, &mut bytes, HEADER_LEN as u64)?;
        // A short header is left to `decode`, whose checks name what is wrong with it.
        if bytes.len() == HEADER_LEN {
            let settings = header_settings(&bytes)?;
            // Grows with what arrives, never with what the header promises.
            read_up_to(&mut reader, &mut bytes, encoded_len(&settings))?;
        }
        Self::decode(&bytes)
    }
}

/// Bytes of the encoding of a table of `settings`.
fn encoded_len(settings: &Settings) -> u64 {
    let words = Slots::words_for(settings.bucket_count, settings.fingerprint_bits + TAG_BITS);
    (HEADER_LEN + words * 8 + CHECKSUM_LEN) as u64
}

/// The settings a header records, checked field by field: the builder's for the recorded
/// choices, which must agree with the recorded table.
fn header_settings(bytes: &[u8]) -> Result<Settings, DecodeError> {
    // The magic's bytes there are: a shorter input that starts as it does is truncated.
    let prefix = bytes.len().min(MAGIC.len());
    if bytes[..prefix] != MAGIC[..prefix] {
        return Err(not_this_magic(bytes, &MAGIC));
    }
    if bytes.len() < HEADER_LEN {
        return Err(DecodeError::Truncated {
            needed: (HEADER_LEN + CHECKSUM_LEN) as u64,
            found: bytes.len() as u64,
        });
    }
    let version = u16::from_le_bytes([bytes[8], bytes[9]]);
    if version != VERSION {
        return Err(DecodeError::UnsupportedVersion { version });
    }
    let invalid = |field, value| DecodeError::InvalidGeometry { field, value };
    let reserved = u16::from_le_bytes([bytes[10], bytes[11]]);
    check_field(reserved == 0, "reserved", reserved.into())?;
    let [kind, clock, overflow, generations] = [bytes[12], bytes[13], bytes[14], bytes[15]];
    let [length, capacity, widths, bucket_count, generation, positions] =
        [16, 24, 32, 40, 48, 56].map(|at| u64_at(bytes, at));
    let window = match kind {
        0 => Window::Items(length),
        1 => Window::Time(core::time::Duration::from_nanos(length)),
        kind => return Err(invalid("window_kind", u64::from(kind))),
    };
    // Each byte is its value's index.
    let clock = *[Clock::Monotonic, Clock::Manual]
        .get(usize::from(clock))
        .ok_or(invalid("clock", u64::from(clock)))?;
    let overflow = *[Overflow::Error, Overflow::ExpireEarly]
        .get(usize::from(overflow))
        .ok_or(invalid("overflow", u64::from(overflow)))?;
    let fingerprint_bits = widths & 0xffff_ffff;
    check_field(
        widths >> 32 == u64::from(TAG_BITS),
        "tag_bits",
        widths >> 32,
    )?;
    let bits_ok = (4..=u64::from(MAX_FINGERPRINT_BITS)).contains(&fingerprint_bits);
    check_field(bits_ok, "fingerprint_bits", fingerprint_bits)?;
    let builder: ExpiringBuilder = ExpiringCuckooFilter::builder(window)
        .generations(u32::from(generations))
        .false_positive_rate(rate_of(fingerprint_bits as u32, LOAD))
        .capacity(if kind == 1 { capacity } else { 0 })
        .overflow(overflow)
        .clock(clock);
    // The builder's error names the value at fault; here, the field that holds it.
    let settings = builder.settings().map_err(|err| match err {
        BuildError::Generations { .. } => invalid("generations", u64::from(generations)),
        BuildError::WindowCapacity { .. } => invalid("capacity", capacity),
        BuildError::CapacityTooLarge { .. } if kind == 1 => invalid("capacity", capacity),
        _ => invalid("window", length),
    })?;
    check_field(kind == 1 || capacity == length, "capacity", capacity)?;
    let bits_agree = u64::from(settings.fingerprint_bits) == fingerprint_bits;
    check_field(bits_agree, "fingerprint_bits", fingerprint_bits)?;
    let buckets_agree = settings.bucket_count as u64 == bucket_count;
    check_field(buckets_agree, "bucket_count", bucket_count)?;
    if kind == 0 {
        // No filter counts 2^63 inserts, and below that a count window's arithmetic cannot
        // overflow.
        check_field(generation < 1 << 63, "generation", generation)?;
        check_field(positions < 1 << 63, "inserts", positions)?;
    } else {
        // A time window counts no inserts: its clock is its time.
        check_field(positions == 0, "inserts", positions)?;
    }
    Ok(settings)
}
