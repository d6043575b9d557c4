//! Startup: the database's identity and sequence number, the snapshot check, and the rebuild of
//! the filter from the database on all cores.

use std::fs::File;
use std::hash::{BuildHasher, RandomState};
use std::io::{self, BufReader, Read};
use std::path::Path;
use std::time::SystemTime;

use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, DecodeError};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use redb::{Database, ReadableTable, ReadableTableMetadata};

use super::schema::{
    snapshot_header, SnapshotState, StoreError, DATA, INSTANCE, META, SEQUENCE, SNAPSHOT_MAGIC,
};

/// Keys read from the database per block of a rebuild.
const REBUILD_BLOCK: usize = 1 << 16;

/// Creates the tables on first open; returns the database's identity and sequence number.
pub(super) fn init_meta(db: &Database) -> Result<(u64, u64), StoreError> {
    let txn = db.begin_write()?;
    let ids = {
        txn.open_table(DATA)?;
        let mut meta = txn.open_table(META)?;
        let instance = meta.get(INSTANCE)?.map(|guard| guard.value());
        let instance = match instance {
            Some(instance) => instance,
            None => {
                let instance = RandomState::new().hash_one(SystemTime::now());
                meta.insert(INSTANCE, instance)?;
                instance
            }
        };
        let sequence = meta.get(SEQUENCE)?.map_or(0, |guard| guard.value());
        (instance, sequence)
    };
    txn.commit()?;
    Ok(ids)
}

/// The snapshot's filter if it exists, is readable, matches the database and is sized for
/// `capacity` items and twice those it holds, as a rebuild sizes it; otherwise why not.
pub(super) fn load_snapshot(
    path: &Path,
    instance: u64,
    sequence: u64,
    capacity: usize,
) -> Result<ConcurrentCuckooFilter, SnapshotState> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Err(SnapshotState::Missing),
        Err(err) => return Err(SnapshotState::Unreadable(err.to_string())),
    };
    let mut input = BufReader::new(file);
    let mut head = [0u8; 32];
    input
        .read_exact(&mut head)
        .map_err(|err| SnapshotState::Unreadable(err.to_string()))?;
    if head[..8] != SNAPSHOT_MAGIC {
        return Err(SnapshotState::Unreadable("not a snapshot".into()));
    }
    let word = |at: usize| u64::from_le_bytes(head[at..at + 8].try_into().unwrap());
    if head != snapshot_header(word(8), word(16)) {
        return Err(SnapshotState::Unreadable("header checksum mismatch".into()));
    }
    if word(8) != instance {
        return Err(SnapshotState::ForeignDatabase);
    }
    if word(16) != sequence {
        return Err(SnapshotState::Stale {
            snapshot: word(16),
            database: sequence,
        });
    }
    let filter = ConcurrentCuckooFilter::read_from(input)
        .map_err(|err: DecodeError| SnapshotState::Unreadable(err.to_string()))?;
    // It holds one copy per stored key.
    let wanted = capacity.max(filter.len().saturating_mul(2));
    if filter.capacity() < wanted {
        return Err(SnapshotState::Undersized {
            snapshot: filter.capacity(),
            asked: wanted,
        });
    }
    Ok(filter)
}

/// Keys read from the database, end to end in one buffer.
#[derive(Default)]
struct KeyBlock {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl KeyBlock {
    fn keys(&self) -> impl IndexedParallelIterator<Item = &[u8]> + '_ {
        (0..self.ends.len()).into_par_iter().map(|i| {
            let start = if i == 0 { 0 } else { self.ends[i - 1] };
            &self.bytes[start..self.ends[i]]
        })
    }
}

fn read_block(range: &mut redb::Range<'_, &[u8], &[u8]>) -> Result<KeyBlock, StoreError> {
    let mut block = KeyBlock::default();
    for entry in range.by_ref().take(REBUILD_BLOCK) {
        let (key, _) = entry?;
        block.bytes.extend_from_slice(key.value());
        block.ends.push(block.bytes.len());
    }
    Ok(block)
}

/// A filter holding every key of the database, sized for twice as many: the database is read in
/// blocks on one thread while the previous block is inserted on all of rayon's.
pub(super) fn rebuild(
    db: &Database,
    capacity: usize,
    progress: bool,
) -> Result<(ConcurrentCuckooFilter, u64), StoreError> {
    let txn = db.begin_read()?;
    let table = txn.open_table(DATA)?;
    let stored = table.len()?;
    let wanted = usize::try_from(stored.saturating_mul(2)).unwrap_or(usize::MAX);
    let filter = ConcurrentCuckooFilter::builder()
        .capacity(capacity.max(wanted).max(1))
        .build()
        .map_err(StoreError::Filter)?;
    let bar = if progress && io::IsTerminal::is_terminal(&io::stderr()) {
        let bar = ProgressBar::new(stored);
        bar.set_style(
            ProgressStyle::with_template("rebuilding filter {bar:40} {pos}/{len} keys {per_sec}")
                .expect("the template is valid"),
        );
        bar
    } else {
        ProgressBar::hidden()
    };
    let mut range = table.iter()?;
    let mut block = read_block(&mut range)?;
    let mut keys = 0u64;
    while !block.ends.is_empty() {
        let (next, inserted) = rayon::join(
            || read_block(&mut range),
            || filter.try_par_extend(block.keys()),
        );
        let inserted = inserted.map_err(StoreError::Rebuild)?;
        keys += inserted as u64;
        bar.inc(inserted as u64);
        block = next?;
    }
    bar.finish_and_clear();
    Ok((filter, keys))
}
