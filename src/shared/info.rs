//! What a live file holds besides its table, for tools that describe it (`ccf info`).

use super::header::SLOTS;
use super::SharedFile;
use crate::raw::SHARED_STRIDE;
use crate::sync::mapping::byte_is_locked;
use crate::sync::Ordering;

/// A live file's regions and who uses it, read at one moment (others may change it meanwhile).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LiveFileInfo {
    /// Registration slots: processes that can have the file open for writing at once.
    pub registration_slots: u64,
    /// Processes that have the file open for writing (this one too, if it does).
    pub writers: u64,
    /// Byte offset of the registration region (one epoch word per slot).
    pub registration_offset: u64,
    /// Byte offset of the lock records (one record per stripe: owner word and journal).
    pub lock_records_offset: u64,
    /// Bytes of the lock records.
    pub lock_records_bytes: u64,
    /// Byte offset of the stripe stamps.
    pub stamps_offset: u64,
    /// Stripes: lock records and stamps.
    pub stripes: u64,
    /// Stripes held now: by a writer at work, or by a killed one until a waiter (or `verify()`)
    /// recovers them.
    pub stripes_held: u64,
    /// Byte offset of the table.
    pub table_offset: u64,
    /// Bytes of the table's words.
    pub table_bytes: u64,
    /// Bytes of the whole file.
    pub file_len: u64,
}

impl SharedFile {
    /// The file's regions and their users now.
    pub(crate) fn info(&self) -> LiveFileInfo {
        let layout = &self.layout;
        let writers = (0..SLOTS)
            .filter(|slot| byte_is_locked(&self.query, layout.registration + 8 * slot))
            .count() as u64;
        let stride = SHARED_STRIDE as u64;
        let stripes_held = self
            .mapping
            .words(layout.records as usize, (layout.stripes * stride) as usize)
            .map_or(0, |records| {
                records
                    .iter()
                    .step_by(SHARED_STRIDE)
                    .filter(|owner| owner.load(Ordering::Relaxed) != 0)
                    .count() as u64
            });
        LiveFileInfo {
            registration_slots: SLOTS,
            writers,
            registration_offset: layout.registration,
            lock_records_offset: layout.records,
            lock_records_bytes: layout.stripes * stride * 8,
            stamps_offset: layout.stamps,
            stripes: layout.stripes,
            stripes_held,
            table_offset: layout.table,
            table_bytes: layout.table_words * 8,
            file_len: layout.file_len,
        }
    }
}
