//! A key-value store on redb whose filter answers `get` of an absent key without a database read.
//!
//! # Ordering protocol
//!
//! The filter may say "present" for a key the database lacks (a false positive, or a key whose
//! delete is still on its way to the filter), never "absent" for a key the database holds. Every
//! write keeps that so:
//!
//! - **put** of a key the database lacks inserts one copy of the key into the filter *before*
//!   the commit that adds the key. A reader that misses the copy started before the commit, so
//!   "absent" was true at some instant of its call. A put of a key already stored adds no copy, so
//!   the filter holds one copy per stored key.
//! - **delete** removes the key's copy from the filter only *after* its commit. Until then the
//!   stale copy sends readers to the database, which answers "absent" itself. A put of the same key
//!   in between adds its own copy, so the late removal takes one of two.
//! - **a failed commit** (or any error before it) leaves the database as it was: a put takes its
//!   copy back out of the filter, which is safe because redb runs one write transaction at a time,
//!   so no other writer can have stored the key meanwhile; a delete leaves the filter alone.
//! - **a full filter**: when a put's insert finds no room, the store stops trusting the filter,
//!   before the commit, and from then on every `get` reads the database. Writes are never refused
//!   on the filter's account: the database is the source of truth and the filter only a cache.
//!   [`NegativeCache::filter_trusted`] reports it; the next [`NegativeCache::open`] rebuilds a
//!   filter sized for twice the stored keys.
//!
//! # Startup
//!
//! Every write transaction also bumps a sequence number stored in the database. A snapshot
//! ([`NegativeCache::write_snapshot`]) records the database's identity and the sequence number it
//! read *before* copying the filter, under a checksum of their own; [`NegativeCache::open`] loads
//! it only if both still match and its filter is sized for [`Options::capacity`] and twice the
//! keys it holds, and otherwise rebuilds the filter from the database on all cores.
//! A snapshot taken at sequence `s` holds every key stored at `s`: each was inserted before its
//! commit, and a removal from the filter follows a delete's commit, which would have moved the
//! sequence past `s`. The snapshot makes `s` durable before it reads it, so a crash (also of a
//! store whose commits do not wait for the disk) leaves the database at `s` or past it, never
//! before it to reach `s` again with other keys; past it, the snapshot is rebuilt over.

use std::fmt;
use std::fs::{self, File};
use std::io::{self, BufWriter, ErrorKind, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
use redb::{Database, Durability, ReadableTable, ReadableTableMetadata};

use self::schema::{snapshot_header, DATA, META, SEQUENCE};
pub use self::schema::{SnapshotState, StoreError};
use self::startup::{init_meta, load_snapshot, rebuild};

mod schema;
mod startup;

/// How [`NegativeCache::open`] sets the store up.
#[derive(Debug, Clone)]
pub struct Options {
    /// Whether `get` consults a filter at all; without one, every `get` reads the database.
    pub filter: bool,
    /// Items the filter is sized for, at least; it is sized for twice the stored keys if that is
    /// more.
    pub capacity: usize,
    /// Where [`NegativeCache::write_snapshot`] writes (through the path and `.partial`) and `open`
    /// looks for a snapshot.
    pub snapshot: Option<PathBuf>,
    /// Whether each commit waits for the disk (`Durability::Immediate`) or not
    /// (`Durability::None`, lost in a crash but never half-applied).
    pub durable: bool,
    /// Whether a rebuild draws a progress bar on stderr (only if stderr is a terminal).
    pub progress: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            filter: true,
            capacity: 1 << 16,
            snapshot: None,
            durable: true,
            progress: false,
        }
    }
}

/// Where the filter came from at [`NegativeCache::open`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterSource {
    /// No filter: every `get` reads the database.
    Disabled,
    /// Loaded from a snapshot of this sequence number, the database's.
    Snapshot {
        /// The sequence number both agree on.
        sequence: u64,
    },
    /// Rebuilt from the database's keys.
    Rebuilt {
        /// Keys inserted.
        keys: u64,
        /// Why no snapshot was used.
        snapshot: SnapshotState,
    },
}

/// Which part of the store answered a `get`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// The filter said absent: no database read.
    Filter,
    /// The database was read.
    Database,
}

/// A redb key-value store with a cuckoo filter as its negative cache; share it through `Arc`.
/// See the [module docs](self) for the protocol that keeps the filter free of false negatives.
pub struct NegativeCache {
    db: Database,
    filter: Option<ConcurrentCuckooFilter>,
    /// Cleared for good (until reopened) once a put found the filter full.
    trusted: AtomicBool,
    durability: Durability,
    instance: u64,
    snapshot: Option<PathBuf>,
    /// Held while a snapshot is written: two at once would share the temporary file.
    snapshot_lock: Mutex<()>,
    source: FilterSource,
}

impl fmt::Debug for NegativeCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NegativeCache")
            .field("filter", &self.filter)
            .field("trusted", &self.filter_trusted())
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl NegativeCache {
    /// Opens (or creates) the database at `path`, then loads the filter from a current snapshot
    /// or rebuilds it from the database.
    ///
    /// # Errors
    ///
    /// If the database cannot be opened or read, the snapshot path or its temporary file (the path
    /// and `.partial`) names the database's own file ([`StoreError::Io`], `InvalidInput`), or the
    /// filter cannot be built. An unreadable or
    /// stale snapshot is no error: it is reported in [`source`](Self::source) and rebuilt over.
    pub fn open(path: &Path, options: Options) -> Result<Self, StoreError> {
        let db = Database::create(path)?;
        if let Some(snapshot) = &options.snapshot {
            // A snapshot is written to its temporary file and renamed over its path: the
            // database's own file would be lost under either name.
            for written in [snapshot.clone(), partial_of(snapshot)] {
                if same_file(path, &written)? {
                    let message = format!("{} names the database's own file", written.display());
                    return Err(StoreError::Io(io::Error::new(
                        ErrorKind::InvalidInput,
                        message,
                    )));
                }
            }
        }
        Self::with_database(db, options)
    }

    /// [`open`](Self::open) over a database the caller opened (on any redb storage backend).
    ///
    /// # Errors
    ///
    /// As for `open`.
    pub fn with_database(db: Database, options: Options) -> Result<Self, StoreError> {
        let (instance, sequence) = init_meta(&db)?;
        let (filter, source) = if !options.filter {
            (None, FilterSource::Disabled)
        } else {
            let snapshot = match &options.snapshot {
                None => Err(SnapshotState::NotConfigured),
                Some(path) => load_snapshot(path, instance, sequence, options.capacity),
            };
            match snapshot {
                Ok(filter) => (Some(filter), FilterSource::Snapshot { sequence }),
                Err(state) => {
                    let (filter, keys) = rebuild(&db, options.capacity, options.progress)?;
                    let source = FilterSource::Rebuilt {
                        keys,
                        snapshot: state,
                    };
                    (Some(filter), source)
                }
            }
        };
        Ok(Self {
            db,
            filter,
            trusted: AtomicBool::new(true),
            durability: if options.durable {
                Durability::Immediate
            } else {
                Durability::None
            },
            instance,
            snapshot: options.snapshot,
            snapshot_lock: Mutex::new(()),
            source,
        })
    }

    /// The value stored under `key`, if any.
    ///
    /// # Errors
    ///
    /// If the database read fails.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.get_answered(key).map(|(value, _)| value)
    }

    /// [`get`](Self::get), and which part of the store answered.
    ///
    /// # Errors
    ///
    /// If the database read fails.
    pub fn get_answered(&self, key: &[u8]) -> Result<(Option<Vec<u8>>, Answer), StoreError> {
        if let Some(filter) = &self.filter {
            // The flag is read first: a put that overflows clears it before its commit.
            if self.trusted.load(Ordering::SeqCst) && !filter.contains(key) {
                return Ok((None, Answer::Filter));
            }
        }
        Ok((self.get_from_database(key)?, Answer::Database))
    }

    /// The value under `key` as the database alone answers: what [`get`](Self::get) costs
    /// without a filter.
    ///
    /// # Errors
    ///
    /// If the database read fails.
    pub fn get_from_database(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(DATA)?;
        let value = table.get(key)?.map(|guard| guard.value().to_vec());
        Ok(value)
    }

    /// Stores `value` under `key`, replacing any value there.
    ///
    /// # Errors
    ///
    /// If the database write or commit fails; then nothing changed.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        let mut txn = self.db.begin_write()?;
        txn.set_durability(self.durability);
        let added = txn.open_table(DATA)?.insert(key, value)?.is_none();
        bump_sequence(&txn)?;
        let holds_copy = added && self.filter_insert(key);
        if let Err(err) = txn.commit() {
            if holds_copy {
                self.filter_remove(key);
            }
            return Err(err.into());
        }
        Ok(())
    }

    /// Stores many pairs in one transaction (as [`put`](Self::put) does one).
    ///
    /// # Errors
    ///
    /// If the database write or commit fails; then nothing changed.
    pub fn put_all<'a, I>(&self, pairs: I) -> Result<(), StoreError>
    where
        I: IntoIterator<Item = (&'a [u8], &'a [u8])>,
    {
        let mut txn = self.db.begin_write()?;
        txn.set_durability(self.durability);
        let mut copies = Vec::new();
        let written = (|| {
            let mut table = txn.open_table(DATA)?;
            for (key, value) in pairs {
                if table.insert(key, value)?.is_none() && self.filter_insert(key) {
                    copies.push(key);
                }
            }
            drop(table);
            bump_sequence(&txn)
        })();
        // An error before the commit drops the transaction, which aborts it.
        let committed = written.and_then(|()| Ok(txn.commit()?));
        if committed.is_err() {
            for key in copies {
                self.filter_remove(key);
            }
        }
        committed
    }

    /// Removes `key`: `true` if it was stored.
    ///
    /// # Errors
    ///
    /// If the database write or commit fails; then nothing changed.
    pub fn delete(&self, key: &[u8]) -> Result<bool, StoreError> {
        let mut txn = self.db.begin_write()?;
        txn.set_durability(self.durability);
        let existed = txn.open_table(DATA)?.remove(key)?.is_some();
        if !existed {
            return Ok(false);
        }
        bump_sequence(&txn)?;
        txn.commit()?;
        self.filter_remove(key);
        Ok(true)
    }

    /// Keys stored.
    ///
    /// # Errors
    ///
    /// If the database read fails.
    pub fn len(&self) -> Result<u64, StoreError> {
        Ok(self.db.begin_read()?.open_table(DATA)?.len()?)
    }

    /// Whether no key is stored.
    ///
    /// # Errors
    ///
    /// If the database read fails.
    pub fn is_empty(&self) -> Result<bool, StoreError> {
        Ok(self.len()? == 0)
    }

    /// The filter, if the store has one.
    pub fn filter(&self) -> Option<&ConcurrentCuckooFilter> {
        self.filter.as_ref()
    }

    /// Whether `get` still answers from the filter: false without one, or after it overflowed.
    pub fn filter_trusted(&self) -> bool {
        self.filter.is_some() && self.trusted.load(Ordering::SeqCst)
    }

    /// Where the filter came from at open.
    pub fn source(&self) -> &FilterSource {
        &self.source
    }

    /// The database's sequence number: bumped by every committed write.
    ///
    /// # Errors
    ///
    /// If the database read fails.
    pub fn sequence(&self) -> Result<u64, StoreError> {
        let txn = self.db.begin_read()?;
        let meta = txn.open_table(META)?;
        let sequence = meta.get(SEQUENCE)?.map_or(0, |guard| guard.value());
        Ok(sequence)
    }

    /// Writes the filter to the snapshot path (through a temporary file and a rename, so a crash
    /// leaves the old snapshot or the new one), stamped with the database's identity and the
    /// sequence number read before the copy, which it first commits to the disk (also in a store
    /// that does not wait for it). Returns that sequence number. Writers go on meanwhile; other
    /// snapshots wait.
    ///
    /// # Errors
    ///
    /// [`StoreError::NoSnapshot`] without a filter or a path, [`StoreError::FilterOverflowed`]
    /// if the filter is no longer trusted, or the I/O error.
    pub fn write_snapshot(&self) -> Result<u64, StoreError> {
        let (Some(filter), Some(path)) = (&self.filter, &self.snapshot) else {
            return Err(StoreError::NoSnapshot);
        };
        let _writing = self
            .snapshot_lock
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        // Made durable first: a crash cannot take the database back before it, to reach the same
        // number again with other keys.
        let sequence = {
            let mut txn = self.db.begin_write()?;
            txn.set_durability(Durability::Immediate);
            let sequence = txn
                .open_table(META)?
                .get(SEQUENCE)?
                .map_or(0, |g| g.value());
            txn.commit()?;
            sequence
        };
        // After the sequence read: a put that overflowed before that commit has cleared it.
        if !self.filter_trusted() {
            return Err(StoreError::FilterOverflowed);
        }
        let partial = partial_of(path);
        let file = File::create(&partial).map_err(StoreError::Io)?;
        let mut out = BufWriter::new(file);
        let write = (|| {
            out.write_all(&snapshot_header(self.instance, sequence))?;
            filter.write_to(&mut out)?;
            out.into_inner()
                .map_err(|err| err.into_error())?
                .sync_all()?;
            fs::rename(&partial, path)
        })();
        write.map_err(StoreError::Io)?;
        Ok(sequence)
    }

    /// Inserts `key`'s copy before a commit: whether the filter holds it. A full filter stops
    /// being trusted in this call, before the commit that stores the key it could not take.
    fn filter_insert(&self, key: &[u8]) -> bool {
        let Some(filter) = &self.filter else {
            return false;
        };
        if !self.trusted.load(Ordering::SeqCst) {
            return false;
        }
        let inserted = filter.insert(key).is_ok();
        if !inserted {
            self.trusted.store(false, Ordering::SeqCst);
        }
        inserted
    }

    /// Removes a copy this store inserted. Once the filter is untrusted nobody reads it, and a key
    /// that found it full has no copy to remove, so it is left alone.
    fn filter_remove(&self, key: &[u8]) {
        if let Some(filter) = &self.filter {
            if self.trusted.load(Ordering::SeqCst) {
                filter.remove(key);
            }
        }
    }
}

fn bump_sequence(txn: &redb::WriteTransaction) -> Result<(), StoreError> {
    let mut meta = txn.open_table(META)?;
    let sequence = meta.get(SEQUENCE)?.map_or(0, |guard| guard.value());
    meta.insert(SEQUENCE, sequence + 1)?;
    Ok(())
}

/// The temporary file a snapshot at `path` is written to: its whole name and `.partial`, so that
/// no other file named like it (the database at `store.partial` beside `store.snapshot`) is taken.
fn partial_of(path: &Path) -> PathBuf {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    PathBuf::from(partial)
}

/// Whether `a` and `b` name one file (links followed); `false` if `b` does not exist.
fn same_file(a: &Path, b: &Path) -> io::Result<bool> {
    let b = match fs::metadata(b) {
        Ok(b) => b,
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(false),
        Err(err) => return Err(err),
    };
    let a = fs::metadata(a)?;
    Ok((a.dev(), a.ino()) == (b.dev(), b.ino()))
}
