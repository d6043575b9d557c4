//! Persistence of the growable kind: its header (the plan, [`header`]), then its levels chunk by
//! chunk ([`records`]). The layout is in `FORMAT.md` ("The byte format of a
//! `GrowableCuckooFilter`").

mod header;
mod records;

use std::io::Read;

use self::header::{GrowableHeader, HEADER_LEN};
use super::levels::Levels;
use super::Growable;
use crate::persist::encoding::read_up_to;
use crate::persist::{DecodeError, StableHashBuilder};

pub(crate) use self::records::{stats, to_bytes, write_to};

/// Decodes a whole encoding: `bytes` must be exactly one growable filter.
pub(super) fn decode<S: StableHashBuilder>(bytes: &[u8]) -> Result<(Growable, S), DecodeError> {
    let header = GrowableHeader::parse(bytes)?;
    let plan = header.plan()?;
    records::decode_slice(&header, plan, bytes).map(|filter| filter.into_parts())
}

/// Reads one whole encoding from `reader`: the header first, then, once it is checked, as many
/// bytes as the levels it describes take, and not one more.
pub(super) fn decode_from<S: StableHashBuilder, R: Read>(
    mut reader: R,
) -> Result<(Growable, S), DecodeError> {
    let mut bytes = Vec::new();
    read_up_to(&mut reader, &mut bytes, HEADER_LEN as u64)?;
    let header = GrowableHeader::parse(&bytes)?;
    let plan = header.plan()?;
    records::decode_stream(&header, plan, reader).map(|filter| filter.into_parts())
}

/// Bytes the encoding of `levels` takes now, from their chunks' shapes.
pub(super) fn serialized_len(levels: &Levels) -> u64 {
    HEADER_LEN as u64 + levels.iter().map(records::level_len).sum::<u64>()
}
