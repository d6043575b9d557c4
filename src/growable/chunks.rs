//! A level: extendible hashing over cuckoo tables. A directory indexed by route bits names each
//! key's chunk (split in `split.rs`), and a lookup probes the one chunk a route's pointer leads
//! to. A key lives in one chunk only, so its stripes serialize a unique insert.

use core::fmt;

use super::chunk_shape::{ChunkShape, MAX_ROUTE_BITS};
pub(crate) use super::chunk_slots::Chunk;
use super::chunk_slots::ChunkSlots;
use super::split::{route_of, Placed, SplitPlacement, SplitState};
use crate::raw::{Candidates, Insertion, LockedTable};
use crate::sync::{fence, AtomicU64, Ordering, Waiters};

/// The chunk a hash's route led to, and its candidates there.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Located<'a> {
    chunk: &'a Chunk,
    candidates: Candidates,
    hash: u64,
    route: u32,
}

pub(crate) struct Chunks {
    /// 2^route_bits - 1.
    route_mask: u32,
    shape: ChunkShape,
    /// The id of the chunk holding each route.
    directory: Box<[AtomicU64]>,
    /// The chunks by id (a split `d` deep of `id` creates `id | 1 << d`), and each route's chunk.
    chunks: ChunkSlots,
    /// Writers that found their chunk sealed for a split.
    waiters: Waiters,
    /// Chunks counted so far, at most `shape.max_chunks`.
    chunk_count: AtomicU64,
}

/// A chunk with every stripe locked, and its id.
pub(crate) struct LockedChunk<'a> {
    pub(crate) id: u64,
    pub(crate) chunk: &'a Chunk,
    pub(crate) table: LockedTable<'a, SplitPlacement>,
}

/// A chunk a write may go to: not sealed, and the owner of the write's route.
struct Writable<'a> {
    id: u64,
    chunk: &'a Chunk,
    /// When found writable: a write that sees it changed looks again.
    state: SplitState,
}

impl Chunks {
    /// A level of `2^first_depth` empty chunks of `shape`; `None` without the memory.
    pub(crate) fn with_shape(shape: ChunkShape) -> Option<Self> {
        let (placement, depth) = (shape.placement(shape.first_depth), shape.first_depth);
        let chunks = (0..1u64 << depth)
            .map(|id| Some((id, Chunk::new_chunk(shape.template, placement, depth)?)))
            .collect::<Option<Vec<_>>>()?;
        Self::from_chunks(shape, chunks)
    }

    /// A level of `chunks`, each with its id and its split state set, shaped as `shape` says;
    /// `None` if they do not cover every route exactly once or a chunk's id or depth does not
    /// fit the shape.
    pub(crate) fn from_chunks(shape: ChunkShape, chunks: Vec<(u64, Chunk)>) -> Option<Self> {
        if shape.route_bits > MAX_ROUTE_BITS {
            return None;
        }
        let routes = 1usize << shape.route_bits;
        let count = chunks.len() as u64;
        let level = Self {
            route_mask: (routes - 1) as u32,
            shape: ChunkShape {
                max_chunks: shape.max_chunks.max(count),
                ..shape
            },
            directory: (0..routes).map(|_| AtomicU64::new(u64::MAX)).collect(),
            chunks: ChunkSlots::new(routes),
            waiters: Waiters::new(),
            chunk_count: AtomicU64::new(count),
        };
        for (id, chunk) in chunks {
            let depth = chunk.split_state().depth();
            if depth > shape.route_bits || id >> depth != 0 || level.chunks.get(id).is_some() {
                return None;
            }
            for route in (id as usize..routes).step_by(1 << depth) {
                let entry = &level.directory[route];
                if entry.load(Ordering::Relaxed) != u64::MAX {
                    return None;
                }
                entry.store(id, Ordering::Relaxed);
            }
            level.chunks.publish(id, chunk);
        }
        for (route, entry) in level.directory.iter().enumerate() {
            match entry.load(Ordering::Relaxed) {
                u64::MAX => return None,
                id => level.chunks.lead(route, id),
            }
        }
        Some(level)
    }

    pub(crate) fn shape(&self) -> ChunkShape {
        self.shape
    }

    #[inline(always)]
    fn route(&self, hash: u64) -> usize {
        self.slot_of(route_of(hash))
    }

    #[inline(always)]
    fn slot_of(&self, route: u32) -> usize {
        (route & self.route_mask) as usize
    }

    #[inline(always)]
    pub(crate) fn contains(&self, hash: u64) -> bool {
        self.contains_located(self.locate(hash))
    }

    #[inline(always)]
    fn locate(&self, hash: u64) -> Located<'_> {
        let route = route_of(hash);
        let chunk = self.chunks.of_route(self.slot_of(route));
        Located {
            chunk,
            candidates: chunk.placement().candidates_on(hash, route),
            hash,
            route,
        }
    }

    /// [`Self::locate`], with the candidate buckets' loads started.
    #[inline(always)]
    pub(crate) fn locate_and_prefetch(&self, hash: u64) -> Located<'_> {
        let located = self.locate(hash);
        located.chunk.prefetch_candidates(&located.candidates);
        located
    }

    #[inline(always)]
    pub(crate) fn contains_located(&self, at: Located<'_>) -> bool {
        if at.chunk.contains_located(at.candidates) {
            return true;
        }
        // A split may have purged the key since it published the new route (`split.rs`).
        let slot = self.slot_of(at.route);
        let now = self.chunks.of_route(slot);
        !core::ptr::eq(now, at.chunk) && self.contains_after_split(slot, now, at.hash, at.route)
    }

    /// [`Self::contains`] after a split moved the route, out of line.
    #[cold]
    #[inline(never)]
    fn contains_after_split<'a>(
        &'a self,
        slot: usize,
        mut chunk: &'a Chunk,
        hash: u64,
        route: u32,
    ) -> bool {
        loop {
            if chunk.contains_located(chunk.placement().candidates_on(hash, route)) {
                return true;
            }
            let now = self.chunks.of_route(slot);
            if core::ptr::eq(now, chunk) {
                return false;
            }
            chunk = now;
        }
    }

    pub(crate) fn debug_candidates(&self, hash: u64) -> Candidates {
        self.chunks
            .of_route(self.route(hash))
            .debug_candidates(hash)
    }

    pub(crate) fn count(&self, hash: u64) -> usize {
        let slot = self.route(hash);
        let mut chunk = self.chunks.of_route(slot);
        loop {
            let count = chunk.count(hash);
            let now = self.chunks.of_route(slot);
            if core::ptr::eq(now, chunk) {
                return count;
            }
            chunk = now;
        }
    }

    /// The chunk a write to `route` goes to, once it is not sealed and owns the route.
    fn writable(&self, route: usize) -> Writable<'_> {
        loop {
            let id = self.directory[route].load(Ordering::Acquire);
            let Some(chunk) = self.chunks.get(id) else {
                unreachable!("chunk {id} is named before it is published")
            };
            let state = chunk.split_state();
            if state.is_sealed() {
                self.waiters.wait_while(|| chunk.split_state().is_sealed());
                continue;
            }
            // A split finished after the directory was read: its new route, written before
            // the unseal, is there on the next read.
            let decided = (1u64 << state.depth()) - 1;
            if route as u64 & decided == id {
                return Writable { id, chunk, state };
            }
        }
    }

    /// Inserts into the hash's chunk, splitting it while full; `Full` leaves only splits made.
    pub(crate) fn insert(&self, hash: u64, unique: bool) -> Insertion {
        let route = route_of(hash);
        self.insert_on(route, unique, |chunk| {
            chunk.placement().candidates_on(hash, route)
        })
    }

    /// [`Self::insert`] of a merged fingerprint, which has no hash.
    pub(crate) fn insert_placed(&self, placed: Placed, unique: bool) -> Insertion {
        self.insert_on(placed.route, unique, |chunk| {
            chunk.placement().candidates_of(placed)
        })
    }

    fn insert_on(
        &self,
        route: u32,
        unique: bool,
        locate: impl Fn(&Chunk) -> Candidates,
    ) -> Insertion {
        let slot = self.slot_of(route);
        loop {
            let Writable { id, chunk, state } = self.writable(slot);
            let c = locate(chunk);
            match chunk.insert_located::<false>(c, unique) {
                Insertion::Full => {}
                done => return done,
            }
            // Refused because its state moved: look again.
            if chunk.split_state() != state {
                continue;
            }
            // A split divides keys that share a bucket, but not copies of one fingerprint.
            if state.depth() == self.shape.route_bits
                || chunk.copies_fill(c)
                || self.chunk_count.load(Ordering::Relaxed) >= self.shape.max_chunks
                || !self.split(id, chunk, state)
            {
                return Insertion::Full;
            }
        }
    }

    /// Every fingerprint, by chunk id; one a racing split moves may show twice.
    pub(crate) fn placed_fingerprints(&self) -> impl Iterator<Item = Placed> + '_ {
        self.chunks
            .with_ids()
            .flat_map(|(id, chunk)| chunk.placed_fingerprints(id))
    }

    pub(crate) fn copies_fill_buckets(&self, hash: u64) -> bool {
        self.chunks
            .of_route(self.route(hash))
            .copies_fill_buckets(hash)
    }

    /// Removes one copy; `false` if the chunk holds none.
    pub(crate) fn remove(&self, hash: u64) -> bool {
        let route = self.route(hash);
        loop {
            let Writable { chunk, state, .. } = self.writable(route);
            if chunk.remove::<false>(hash) {
                return true;
            }
            if chunk.split_state() == state {
                return false;
            }
        }
    }

    /// Splits chunk `id` unless another thread does first; `false`: no chunk or memory to be had.
    #[cold]
    fn split(&self, id: u64, chunk: &Chunk, seen: SplitState) -> bool {
        if !chunk.try_seal(seen) {
            return true;
        }
        let refuse = || {
            chunk.unseal_unsplit();
            self.waiters.wake_all();
            false
        };
        // Counted by the sealer only: racing splits of other chunks cannot pass the limit together.
        if !self.count_chunk() {
            return refuse();
        }
        let depth = seen.depth();
        let placement = chunk.placement().child(depth);
        let Some(mut child) = Chunk::new_chunk(self.shape.template, placement, depth + 1) else {
            // Uncounted again: adding `u64::MAX` wraps to one fewer.
            self.chunk_count.fetch_add(u64::MAX, Ordering::Relaxed);
            return refuse();
        };
        chunk.copy_moving_into(&mut child);
        let child_id = id | 1 << depth;
        self.chunks.publish(child_id, child);
        for route in (child_id as usize..self.directory.len()).step_by(1 << (depth + 1)) {
            self.chunks.lead(route, child_id);
            self.directory[route].store(child_id, Ordering::Release);
        }
        chunk.purge_moved_and_unseal();
        self.waiters.wake_all();
        true
    }

    fn count_chunk(&self) -> bool {
        let mut count = self.chunk_count.load(Ordering::Relaxed);
        while count < self.shape.max_chunks {
            match self.chunk_count.compare_exchange_weak(
                count,
                count + 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => count = now,
            }
        }
        false
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Chunk> + '_ {
        self.chunks.with_ids().map(|(_, chunk)| chunk)
    }

    /// Every chunk with all its stripes locked, once no split is under way.
    pub(crate) fn lock_all(&self) -> Vec<LockedChunk<'_>> {
        loop {
            for chunk in self.iter() {
                self.waiters.wait_while(|| chunk.split_state().is_sealed());
            }
            let locked: Vec<_> = self
                .chunks
                .with_ids()
                .map(|(id, chunk)| LockedChunk {
                    id,
                    chunk,
                    table: chunk.lock_table(),
                })
                .collect();
            // Sealing takes every stripe of a chunk, and only a sealed chunk's splitter
            // publishes a chunk: with none sealed while all are held, the set is complete.
            if locked
                .iter()
                .all(|locked| !locked.chunk.split_state().is_sealed())
                && locked.len() == self.iter().count()
            {
                return locked;
            }
        }
    }

    /// Exact when no write is in flight; a split in flight counts what it moves twice.
    pub(crate) fn len(&self) -> usize {
        // By id, a fence after each: a count showing a split's purge sees the chunk it copied to.
        self.iter()
            .map(|chunk| {
                let len = chunk.len();
                fence(Ordering::Acquire);
                len
            })
            .sum()
    }

    pub(crate) fn core_bits(&self) -> u32 {
        self.shape.template.shape.fingerprint_bits
    }

    /// A chunk split `D` deep takes `2^-D` of the lookups, each comparing core and `R − D`
    /// route bits: `1 − (1 − 1/((2^core − 1)·2^(R−D)))^(2·items/buckets)`.
    pub(crate) fn false_positive_rate_at_load(&self) -> f64 {
        let cores = ((1u64 << self.core_bits()) - 1) as f64;
        self.iter()
            .map(|chunk| {
                let depth = chunk.split_state().depth();
                let compared = cores * f64::from(1u32 << (self.shape.route_bits - depth));
                let per_bucket = chunk.len() as f64 / chunk.bucket_count() as f64;
                let miss = (1.0 - 1.0 / compared).powf(2.0 * per_bucket);
                (1.0 - miss) / f64::from(1u32 << depth)
            })
            .sum()
    }

    pub(crate) fn bucket_count(&self) -> usize {
        self.iter().map(Chunk::bucket_count).sum()
    }

    pub(crate) fn capacity(&self) -> usize {
        self.iter().count() * self.shape.chunk_capacity()
    }

    /// Bytes [`Self::with_shape`] allocates.
    pub(crate) fn planned_memory(shape: &ChunkShape) -> u64 {
        let routes = 1usize.checked_shl(shape.route_bits).unwrap_or(usize::MAX);
        let chunk = (shape.placement(shape.first_depth).geometry(shape.template))
            .memory_bytes()
            .saturating_add(core::mem::size_of::<Chunk>() as u64);
        chunk
            .saturating_mul(1u64 << shape.first_depth.min(63))
            .saturating_add((routes * core::mem::size_of::<AtomicU64>()) as u64)
            .saturating_add(ChunkSlots::memory_for(routes) as u64)
    }

    pub(crate) fn memory_usage(&self) -> usize {
        let chunks: usize = self.iter().map(Chunk::memory_usage).sum();
        chunks
            + self.directory.len() * core::mem::size_of::<AtomicU64>()
            + ChunkSlots::memory_for(self.directory.len())
    }
}

impl fmt::Debug for Chunks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Chunks")
            .field("route_bits", &self.shape.route_bits)
            .field("chunks", &self.iter().count())
            .field("len", &self.len())
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
#[path = "../../tests/unit/growable/chunks.rs"]
mod tests;
