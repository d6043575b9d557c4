//! The fixed filter in a live file that processes share (docs/shared.md): its public calls.

use std::io;
use std::path::Path;

use crate::filter::builder::ConcurrentCuckooFilterBuilder;
use crate::filter::fixed::{ConcurrentCuckooFilter, Fixed};
use crate::filter::CuckooFilter;
use crate::persist::encoding::hasher_of;
use crate::persist::{DecodeError, RecordedHasher, StableHashBuilder};
use crate::raw::Damage;
use crate::shared::{self, Access, LiveFileInfo, SharedError};

impl<S: StableHashBuilder> ConcurrentCuckooFilterBuilder<S> {
    /// Builds the filter in a new file at `path` (never over an existing file, its blocks
    /// allocated now): every process that opens it with
    /// [`open_shared`](ConcurrentCuckooFilter::open_shared) uses the same filter, live, with every
    /// guarantee of the in-memory one across processes and threads (docs/shared.md). Linux only.
    ///
    /// ```
    /// use concurrent_cuckoo_filter::{Access, ConcurrentCuckooFilter};
    ///
    /// let path = std::env::temp_dir().join(format!("ccf-doc-{}.live", std::process::id()));
    /// let filter = ConcurrentCuckooFilter::builder().capacity(1000).create_shared(&path)?;
    /// filter.insert("key")?;
    /// let other = ConcurrentCuckooFilter::open_shared(&path, Access::ReadWrite)?;
    /// assert!(other.contains("key"));
    /// # drop((filter, other));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`SharedError::Build`] for settings that describe no filter; [`SharedError::Io`] if
    /// `path` exists or the file cannot be created, sized or mapped; [`SharedError::Busy`] if
    /// another program holds a `flock` on the new file, or puts another file at `path`,
    /// meanwhile. A file it made is removed.
    pub fn create_shared(
        self,
        path: impl AsRef<Path>,
    ) -> Result<ConcurrentCuckooFilter<S>, SharedError> {
        let (settings, hasher) = self.into_parts();
        let geometry = settings.geometry().map_err(SharedError::Build)?;
        let capacity = Fixed::capacity_for(&geometry);
        let (raw, file) = shared::create(
            path.as_ref(),
            &geometry,
            capacity,
            RecordedHasher::of(&hasher),
        )?;
        Ok(CuckooFilter::from_parts(
            Fixed::in_file(raw, capacity, file),
            hasher,
        ))
    }
}

impl ConcurrentCuckooFilter {
    /// Opens the live file at `path`, hashed by the default hasher with the seed it records;
    /// see [`open_shared_with_hasher`](Self::open_shared_with_hasher).
    ///
    /// # Errors
    ///
    /// Those of [`open_shared_with_hasher`](Self::open_shared_with_hasher).
    pub fn open_shared(path: impl AsRef<Path>, access: Access) -> Result<Self, SharedError> {
        Self::open_shared_with_hasher(path, access)
    }
}

impl<S: StableHashBuilder> ConcurrentCuckooFilter<S> {
    /// Opens the live file at `path` that [`create_shared`](ConcurrentCuckooFilterBuilder::create_shared)
    /// made, mapping it: the table is not read (a writer reads its stripes' owner words). Its
    /// header, sizes, layout and hasher are checked against the file's length first, so a
    /// truncated, damaged or foreign file, a directory or a FIFO is an error, never a fault.
    /// `Access::ReadWrite` needs write permission and one of the file's registration slots (128
    /// writers at once); `Access::ReadOnly` neither. Linux only.
    ///
    /// # Errors
    ///
    /// A [`SharedError`] naming the file: [`Io`](SharedError::Io) if the system refuses it,
    /// [`NotAFile`](SharedError::NotAFile), [`Decode`](SharedError::Decode) for a header that
    /// is not a live filter of this hasher, [`Busy`](SharedError::Busy) while its creator is
    /// not done, if every registration slot is held or if another file is put at `path` while
    /// it is opened.
    pub fn open_shared_with_hasher(
        path: impl AsRef<Path>,
        access: Access,
    ) -> Result<Self, SharedError> {
        let path = path.as_ref();
        let opened = shared::open(path, access)?;
        let hasher =
            hasher_of::<S>(opened.hasher).map_err(|source| SharedError::decode(path, source))?;
        Ok(CuckooFilter::from_parts(
            Fixed::in_file(opened.raw, opened.capacity, opened.file),
            hasher,
        ))
    }
}

impl<S> ConcurrentCuckooFilter<S> {
    /// Whether the filter lives in a file that processes share.
    #[must_use]
    pub fn is_shared(&self) -> bool {
        self.core().file().is_some()
    }

    /// The live file the filter is mapped from, if it is shared: absolute (a relative path taken
    /// against the working directory at the open), to name the same file anywhere later.
    #[must_use]
    pub fn path(&self) -> Option<&Path> {
        self.core().file().map(|file| file.path())
    }

    /// Whether the filter was opened `Access::ReadOnly`: every write through it is refused.
    #[must_use]
    pub fn is_read_only(&self) -> bool {
        self.core().file().is_some_and(|file| file.is_read_only())
    }

    /// The live file's regions, the writers that have it open and the stripes held now
    /// (`ccf info` prints them); `None` for an in-memory filter. O(stripes).
    #[must_use]
    pub fn live_info(&self) -> Option<LiveFileInfo> {
        self.core().file().map(|file| file.info())
    }

    /// Writes the changes made so far to the file and waits until they are on disk (`msync`),
    /// against a machine crash (a process crash loses nothing: the pages are the kernel's).
    /// Nothing to do for an in-memory or read-only filter.
    ///
    /// # Errors
    ///
    /// What `msync` reports, such as an I/O error of the device.
    pub fn flush(&self) -> io::Result<()> {
        self.core().file().map_or(Ok(()), |file| file.flush())
    }

    /// Checks the whole table, O(table), under every stripe lock (recovering any a killed process
    /// held): every bucket in the encoder's form, the stripes' counts summing to its fingerprints.
    /// A read-only opener, which cannot lock, checks a copy instead, with a killed process's
    /// stripes read as their recovery would leave them, and recovers nothing (docs/shared.md).
    ///
    /// # Errors
    ///
    /// [`DecodeError::InvalidBucket`] for the first bucket not in the encoder's form,
    /// [`DecodeError::ItemCountMismatch`] if the counts disagree, and
    /// [`DecodeError::OutOfMemory`] without memory for a read-only opener's copy.
    pub fn verify(&self) -> Result<(), DecodeError> {
        match self.core().raw().check_whole() {
            Ok(()) => Ok(()),
            Err(Damage::Bucket(bucket)) => Err(DecodeError::InvalidBucket {
                bucket: bucket as u64,
            }),
            Err(Damage::Count { counted, held }) => Err(DecodeError::ItemCountMismatch {
                header: counted,
                table: held,
            }),
            Err(Damage::NoMemory { bytes }) => Err(DecodeError::OutOfMemory {
                bytes: bytes as u64,
            }),
        }
    }
}
