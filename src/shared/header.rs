//! The live file's header page and where its regions lie: FORMAT.md, "The live file", gives the
//! layout and the order of the checks, which [`parse`] follows.

use crate::persist::encoding::{
    check_len, check_record, sealed_record, u64_at, Header, HEADER_LEN, MAGIC,
};
use crate::persist::{DecodeError, RecordedHasher};
use crate::raw::{Geometry, SHARED_STRIDE, SPARE_WORDS};

/// The live file's magic: the snapshot's with `L` for `F`.
pub(crate) const LIVE_MAGIC: [u8; 8] = *b"\x89CCL\r\n\x1a\n";
/// The live format version this build writes and reads.
pub(crate) const LIVE_VERSION: u32 = 1;
pub(crate) const PAGE: u64 = 4096;
/// Processes that can have the file open for writing at once.
pub(crate) const SLOTS: u64 = 128;
/// Bytes of the header that are read and checked.
pub(crate) const LIVE_HEADER_LEN: usize = 160;
const FIELDS_LEN: usize = 64 + HEADER_LEN;
/// Tables this large start on a 2 MiB boundary, so a mapping of a tmpfs file can use huge pages.
const HUGE_TABLE_BYTES: u64 = 8 << 20;
const HUGE_PAGE: u64 = 2 << 20;

/// Where each region of a live file lies, derived from the geometry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LiveLayout {
    pub(crate) registration: u64,
    pub(crate) records: u64,
    pub(crate) stamps: u64,
    pub(crate) table: u64,
    pub(crate) table_words: u64,
    pub(crate) stripes: u64,
    pub(crate) file_len: u64,
}

impl LiveLayout {
    /// The layout of a file for `geometry`; `None` if it does not fit 64 bits.
    pub(crate) fn of(geometry: &Geometry) -> Option<Self> {
        let stripes = geometry.stripe_count() as u64;
        let table_words = geometry.shape.table_words()?;
        let registration = PAGE;
        let records = (registration + 8 * SLOTS).next_multiple_of(64);
        let stamps = records.checked_add(stripes.checked_mul(8 * SHARED_STRIDE as u64)?)?;
        let table_bytes = table_words.checked_mul(8)?;
        let align = if table_bytes >= HUGE_TABLE_BYTES {
            HUGE_PAGE
        } else {
            PAGE
        };
        let table = stamps
            .checked_add(stripes * 8)?
            .checked_next_multiple_of(align)?;
        let file_len = table
            .checked_add(table_bytes)?
            .checked_next_multiple_of(PAGE)?;
        Some(Self {
            registration,
            records,
            stamps,
            table,
            table_words,
            stripes,
            file_len,
        })
    }

    /// The header fields the layout fixes, in the order they are checked: offset, name, value.
    fn fields(&self) -> [(usize, &'static str, u64); 6] {
        [
            (24, "registration offset", self.registration),
            (32, "lock records offset", self.records),
            (40, "stamps offset", self.stamps),
            (48, "table offset", self.table),
            (56, "file length", self.file_len),
            (16, "registration slots", SLOTS),
        ]
    }
}

/// The header page of a new file.
pub(crate) fn encode(
    geometry: &Geometry,
    layout: &LiveLayout,
    capacity: usize,
    hasher: RecordedHasher,
) -> Vec<u8> {
    let mut page = vec![0u8; PAGE as usize];
    page[..8].copy_from_slice(&LIVE_MAGIC);
    page[8..12].copy_from_slice(&LIVE_VERSION.to_le_bytes());
    page[12..16].copy_from_slice(&(PAGE as u32).to_le_bytes());
    for (at, _, value) in layout.fields() {
        page[at..at + 8].copy_from_slice(&value.to_le_bytes());
    }
    let data_words = layout.table_words as usize - SPARE_WORDS;
    let snapshot = Header::new(geometry, capacity, hasher, 0, data_words).to_bytes();
    page[64..64 + HEADER_LEN].copy_from_slice(&snapshot);
    let sealed: [u8; LIVE_HEADER_LEN] = sealed_record(&page[..FIELDS_LEN], &[]);
    page[..LIVE_HEADER_LEN].copy_from_slice(&sealed);
    page
}

/// What a checked header says.
#[derive(Debug)]
pub(crate) struct Parsed {
    pub(crate) geometry: Geometry,
    pub(crate) layout: LiveLayout,
    pub(crate) capacity: u64,
    pub(crate) hasher: RecordedHasher,
}

/// Checks a file's first [`LIVE_HEADER_LEN`] bytes and its length, in FORMAT.md's order.
pub(crate) fn parse(bytes: &[u8], file_len: u64) -> Result<Parsed, DecodeError> {
    let invalid = |field, value| DecodeError::InvalidGeometry { field, value };
    if bytes.len() < LIVE_HEADER_LEN {
        if bytes.len() >= 8 && bytes[..8] != LIVE_MAGIC {
            return Err(DecodeError::BadMagic);
        }
        return Err(DecodeError::Truncated {
            needed: LIVE_HEADER_LEN as u64,
            found: bytes.len() as u64,
        });
    }
    if bytes[..8] != LIVE_MAGIC {
        // A snapshot is no live file: its first bytes say which it is.
        return Err(if bytes[..8] == MAGIC {
            invalid("magic (a snapshot, not a live file)", u64_at(bytes, 0))
        } else {
            DecodeError::BadMagic
        });
    }
    let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    if version != LIVE_VERSION {
        return Err(DecodeError::UnsupportedVersion {
            version: version.min(u16::MAX as u32) as u16,
        });
    }
    check_record(&bytes[..LIVE_HEADER_LEN])?;
    let page = u32::from_le_bytes([bytes[12], bytes[13], bytes[14], bytes[15]]);
    if u64::from(page) != PAGE {
        return Err(invalid("page size", page.into()));
    }
    let snapshot = Header::parse(&bytes[64..64 + HEADER_LEN])?;
    let geometry = snapshot.geometry()?;
    let layout = LiveLayout::of(&geometry).ok_or(invalid("buckets", snapshot.capacity))?;
    for (at, field, expected) in layout.fields() {
        let value = u64_at(bytes, at);
        if value != expected {
            return Err(invalid(field, value));
        }
    }
    check_len(layout.file_len, file_len)?;
    Ok(Parsed {
        geometry,
        layout,
        capacity: snapshot.capacity,
        hasher: snapshot.recorded_hasher(),
    })
}
