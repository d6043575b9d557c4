//! A level's chunks by id, and for each route a pointer to its chunk: one load from a route to
//! the chunk, where the directory's id and the chunk's slot would be two in a row.

use core::ptr;

use super::split::SplitPlacement;
use crate::raw::RawFilter;
use crate::sync::{AtomicPtr, OnceSlot, Ordering};

pub(crate) type Chunk = RawFilter<SplitPlacement>;

pub(crate) struct ChunkSlots {
    /// Filled at most once, never emptied.
    by_id: Box<[OnceSlot<Box<Chunk>>]>,
    /// For each route, its chunk in `by_id`, or null before one is named.
    by_route: Box<[AtomicPtr<Chunk>]>,
}

impl ChunkSlots {
    pub(crate) fn new(count: usize) -> Self {
        Self {
            by_id: (0..count).map(|_| OnceSlot::new()).collect(),
            by_route: (0..count)
                .map(|_| AtomicPtr::new(ptr::null_mut()))
                .collect(),
        }
    }

    #[inline(always)]
    pub(crate) fn get(&self, id: u64) -> Option<&Chunk> {
        self.by_id.get(id as usize)?.get().map(|chunk| &**chunk)
    }

    /// Unless the slot is filled already.
    pub(crate) fn publish(&self, id: u64, chunk: Chunk) {
        self.by_id[id as usize].get_or_init(|| Box::new(chunk));
    }

    pub(crate) fn lead(&self, route: usize, id: u64) {
        let Some(chunk) = self.get(id) else {
            unreachable!("route {route} is led to chunk {id} before it is published")
        };
        // Release: a lookup that loads the pointer sees the chunk as it was published.
        self.by_route[route].store(chunk as *const Chunk as *mut Chunk, Ordering::Release);
    }

    /// Panics for a route led nowhere: every route is led to a chunk before the level is shared.
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(crate) fn of_route(&self, route: usize) -> &Chunk {
        let chunk = self.by_route[route].load(Ordering::Acquire);
        if chunk.is_null() {
            unreachable!("route {route} leads to no chunk");
        }
        // SAFETY: a non-null pointer in `by_route` is stored only by `lead`, from a reference
        // to the contents of a `Box` in a filled slot of `by_id`. A filled slot is never
        // emptied, and its box is neither moved out nor dropped before `self` is, so the chunk
        // lives as long as `self`, which the returned reference borrows. The chunk was fully
        // built before its slot was filled, which happens before `lead`'s release store, which
        // this acquire load reads: the chunk's initialization is visible here. Every access
        // to a chunk after that goes through its atomics, so a shared reference is all that
        // is ever made of it.
        unsafe { &*chunk }
    }

    pub(crate) fn with_ids(&self) -> impl Iterator<Item = (u64, &Chunk)> + '_ {
        self.by_id
            .iter()
            .enumerate()
            .filter_map(|(id, slot)| slot.get().map(|chunk| (id as u64, &**chunk)))
    }

    /// Bytes of [`Self::new`]`(count)`.
    pub(crate) fn memory_for(count: usize) -> usize {
        count
            * (core::mem::size_of::<OnceSlot<Box<Chunk>>>()
                + core::mem::size_of::<AtomicPtr<Chunk>>())
    }
}
