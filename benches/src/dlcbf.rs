//! A d-left counting Bloom filter (Bonomi et al., ESA 2006), the dl-CBF of the cuckoo filter
//! paper's Table 3: no crate has one.

use crate::keys::key;
use concurrent_cuckoo_filter::DefaultHashBuilder;
use std::hash::BuildHasher;

const TABLES: usize = 4;
const CELLS: usize = 4;
const COUNTER_BITS: u32 = 2;
const MAX_COUNT: u64 = (1 << COUNTER_BITS) - 1;

/// 4 tables of buckets of 4 cells; a cell holds a 10-bit remainder and a 2-bit counter, 12 bits
/// in all. An item goes to the least loaded of its 4 buckets (the leftmost on a tie), or bumps
/// the counter of a cell that holds its remainder in one of them; an insert fails when all 4
/// buckets are full or the counter is at its maximum.
#[derive(Debug)]
pub struct DlCbf {
    /// 6 bytes per bucket (4 cells of 12 bits), then 2 bytes so every bucket reads as a `u64`.
    cells: Vec<u8>,
    buckets_per_table: usize,
    hasher: DefaultHashBuilder,
}

impl DlCbf {
    /// A filter of about `cells` cells (a multiple of 16, at least 16).
    pub fn new(cells: usize) -> Self {
        let buckets_per_table = (cells / (TABLES * CELLS)).max(1);
        Self {
            cells: vec![0; buckets_per_table * TABLES * 6 + 2],
            buckets_per_table,
            hasher: DefaultHashBuilder::with_seed(0xd1ef),
        }
    }

    /// The number of cells.
    pub fn cell_count(&self) -> usize {
        self.buckets_per_table * TABLES * CELLS
    }

    /// Bytes of the cells.
    pub fn memory(&self) -> usize {
        self.buckets_per_table * TABLES * 6
    }

    /// The item's remainder and its bucket in each table.
    fn locate(&self, item: u64) -> (u64, [usize; TABLES]) {
        let h = self.hasher.hash_one(item);
        let remainder = (key(h) >> 54).max(1);
        let n = self.buckets_per_table as u64;
        let buckets = std::array::from_fn(|t| {
            let part = h.rotate_left(16 * t as u32) & 0xffff_ffff;
            t * self.buckets_per_table + ((part * n) >> 32) as usize
        });
        (remainder, buckets)
    }

    fn bucket(&self, b: usize) -> u64 {
        let bytes: [u8; 8] = self.cells[b * 6..b * 6 + 8].try_into().unwrap();
        u64::from_le_bytes(bytes) & 0xffff_ffff_ffff
    }

    fn set_bucket(&mut self, b: usize, word: u64) {
        self.cells[b * 6..b * 6 + 6].copy_from_slice(&word.to_le_bytes()[..6]);
    }

    /// The remainder and the counter of cell `i` of a bucket.
    fn cell(word: u64, i: usize) -> (u64, u64) {
        let cell = word >> (12 * i) & 0xfff;
        (cell >> COUNTER_BITS, cell & MAX_COUNT)
    }

    fn with_cell(word: u64, i: usize, remainder: u64, count: u64) -> u64 {
        let cell = remainder << COUNTER_BITS | count;
        word & !(0xfff << (12 * i)) | cell << (12 * i)
    }

    /// The bucket and cell holding `remainder` among `buckets`.
    fn find(&self, remainder: u64, buckets: &[usize; TABLES]) -> Option<(usize, usize)> {
        buckets.iter().find_map(|&b| {
            let word = self.bucket(b);
            (0..CELLS)
                .find(|&i| Self::cell(word, i).1 > 0 && Self::cell(word, i).0 == remainder)
                .map(|i| (b, i))
        })
    }

    /// `false` when the item's buckets are all full or its cell's counter is at its maximum.
    pub fn insert(&mut self, item: u64) -> bool {
        let (remainder, buckets) = self.locate(item);
        if let Some((b, i)) = self.find(remainder, &buckets) {
            let word = self.bucket(b);
            let count = Self::cell(word, i).1;
            if count == MAX_COUNT {
                return false;
            }
            self.set_bucket(b, Self::with_cell(word, i, remainder, count + 1));
            return true;
        }
        let load = |b: usize| {
            let word = self.bucket(b);
            (0..CELLS).filter(|&i| Self::cell(word, i).1 > 0).count()
        };
        let b = *buckets.iter().min_by_key(|&&b| load(b)).unwrap();
        let word = self.bucket(b);
        match (0..CELLS).find(|&i| Self::cell(word, i).1 == 0) {
            Some(i) => {
                self.set_bucket(b, Self::with_cell(word, i, remainder, 1));
                true
            }
            None => false,
        }
    }

    pub fn contains(&self, item: u64) -> bool {
        let (remainder, buckets) = self.locate(item);
        self.find(remainder, &buckets).is_some()
    }

    pub fn remove(&mut self, item: u64) -> bool {
        let (remainder, buckets) = self.locate(item);
        let Some((b, i)) = self.find(remainder, &buckets) else {
            return false;
        };
        let word = self.bucket(b);
        let count = Self::cell(word, i).1;
        let cell = if count > 1 { remainder } else { 0 };
        self.set_bucket(b, Self::with_cell(word, i, cell, count - 1));
        true
    }
}
