//! Saving and cloning take at most one copy of the table: `to_bytes` allocates its bytes once,
//! `write_to_slice` nothing, `write_to` the bytes it then hands to the caller's writer with no
//! lock held, `clone` its own table; a buffer too short for the bytes is an error.

use std::io::ErrorKind;

use concurrent_cuckoo_filter::{CuckooFilter, GrowableCuckooFilter, Kind, TableLayout};

use super::allocation::total_allocation;
use super::*;

/// What a save may allocate besides the bytes it returns: a few kilobytes of buffers and locks.
const SMALL: usize = 64 << 10;

fn fixed_filters() -> Vec<ConcurrentCuckooFilter> {
    [TableLayout::BucketWord, TableLayout::Packed]
        .into_iter()
        .map(|layout| {
            let filter = ConcurrentCuckooFilter::builder()
                .capacity(1_000_000)
                .layout(layout)
                .build()
                .unwrap();
            filter.try_extend(0..900_000u64).unwrap();
            filter
        })
        .collect()
}

fn grown() -> GrowableCuckooFilter {
    let filter = GrowableCuckooFilter::builder()
        .capacity(10_000)
        .split_depth(3)
        .build()
        .unwrap();
    filter.try_extend(0..500_000u64).unwrap();
    assert!(filter.level_count() > 1);
    filter
}

#[test]
fn write_to_allocates_one_copy_and_write_to_slice_none() {
    for filter in fixed_filters() {
        let (written, bytes) = total_allocation(|| filter.write_to(io::sink()));
        written.unwrap();
        let len = filter.serialized_len() as usize;
        assert!(bytes < len + SMALL, "{:?}: {bytes} bytes", filter.layout());
        let mut buffer = vec![0u8; len];
        let (n, bytes) = total_allocation(|| filter.write_to_slice(&mut buffer));
        assert_eq!(n.unwrap(), len);
        assert!(bytes < SMALL, "{:?}: {bytes} bytes", filter.layout());
        assert_eq!(buffer, filter.to_bytes());
    }
    let filter = grown();
    let (written, bytes) = total_allocation(|| filter.write_to(io::sink()));
    written.unwrap();
    assert!(
        bytes < filter.serialized_len() as usize + SMALL,
        "growable: {bytes} bytes"
    );
}

/// A writer that inserts into the filter it is given the bytes of: it would wait for ever on
/// the filter's locks if the writer ran under them.
struct InsertingWriter<'a> {
    filter: &'a ConcurrentCuckooFilter,
    written: usize,
}

impl io::Write for InsertingWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.filter
            .insert(&(u64::MAX - self.written as u64))
            .unwrap();
        self.written += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn write_to_runs_the_callers_writer_with_no_lock_held() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let filter = ConcurrentCuckooFilter::with_capacity(100_000);
        filter.try_extend(0..50_000u64).unwrap();
        let mut writer = InsertingWriter {
            filter: &filter,
            written: 0,
        };
        filter.write_to(&mut writer).unwrap();
        let _ = done.send((writer.written, filter.serialized_len(), filter.len()));
    });
    let (written, len, items) = finished
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("write_to's writer waited for the filter's own locks");
    assert_eq!(written as u64, len);
    assert!(items > 50_000);
}

#[test]
fn to_bytes_allocates_its_bytes_once() {
    for filter in fixed_filters() {
        let (out, bytes) = total_allocation(|| filter.to_bytes());
        assert_eq!(out.len() as u64, filter.serialized_len());
        assert!(
            bytes < out.len() + SMALL,
            "{:?}: {bytes} for {}",
            filter.layout(),
            out.len()
        );
    }
    let filter = grown();
    let (out, bytes) = total_allocation(|| filter.to_bytes());
    assert_eq!(out.len() as u64, filter.serialized_len());
    assert!(
        bytes < out.len() + SMALL,
        "growable: {bytes} for {}",
        out.len()
    );
}

#[test]
fn a_buffer_of_serialized_len_takes_the_bytes_and_a_shorter_one_is_an_error() {
    let filter = &fixed_filters()[0];
    let mut buffer = vec![0u8; filter.serialized_len() as usize];
    filter.write_to_slice(&mut buffer).unwrap();
    assert_eq!(buffer, filter.to_bytes());
    for short in [0, 50, 100, buffer.len() / 2, buffer.len() - 1] {
        let err = filter.write_to_slice(&mut buffer[..short]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::WriteZero, "{short} bytes");
    }
    // The filter is unlocked after a failed write.
    filter.insert(&u64::MAX).unwrap();

    let filter = grown();
    let mut buffer = vec![0u8; filter.serialized_len() as usize];
    filter.write_to_slice(&mut buffer).unwrap();
    assert_eq!(buffer, filter.to_bytes());
    let err = filter.write_to_slice(&mut buffer[..1000]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::WriteZero);
    filter.insert(&u64::MAX).unwrap();
}

/// The default hasher, whose `seed` inserts into the filter it hashes for once that filter is
/// in `target`: it would wait for ever on the filter's locks if it ran under them.
#[derive(Clone)]
struct InsertingSeed<K> {
    target: Arc<OnceLock<Target<K>>>,
}

type Target<K> = std::sync::Weak<CuckooFilter<K, InsertingSeed<K>>>;

impl<K> BuildHasher for InsertingSeed<K> {
    type Hasher = <DefaultHashBuilder as BuildHasher>::Hasher;
    fn build_hasher(&self) -> Self::Hasher {
        DefaultHashBuilder::new().build_hasher()
    }
}

impl<K: Kind> StableHashBuilder for InsertingSeed<K> {
    const HASHER_ID: u64 = u64::from_le_bytes(*b"test-ins");
    fn seed(&self) -> u64 {
        if let Some(filter) = self.target.get().and_then(std::sync::Weak::upgrade) {
            filter.insert_hash(u64::MAX).unwrap();
        }
        0
    }
    fn from_seed(_: u64) -> Option<Self> {
        Some(Self {
            target: Arc::default(),
        })
    }
}

fn saves_with_an_inserting_seed<K: Kind + Send + Sync + 'static>() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let hasher = InsertingSeed::<K>::from_seed(0).unwrap();
        let filter = Arc::new(CuckooFilter::with_capacity_and_hasher(10_000, hasher));
        filter.try_extend(0..5_000u64).unwrap();
        let target = &filter.hasher().target;
        target.set(Arc::downgrade(&filter)).ok().unwrap();
        let bytes = filter.to_bytes();
        filter.write_to(io::sink()).unwrap();
        let mut buffer = vec![0u8; filter.serialized_len() as usize];
        filter.write_to_slice(&mut buffer).unwrap();
        let copy = CuckooFilter::<K, InsertingSeed<K>>::from_bytes_with_hasher(&bytes).unwrap();
        let _ = done.send((0..5_000u64).all(|key| copy.contains(&key)));
    });
    let kept = finished
        .recv_timeout(std::time::Duration::from_secs(60))
        .unwrap_or_else(|_| {
            panic!(
                "{}: the hasher's seed waited for the filter's own locks",
                K::NAME
            )
        });
    assert!(kept, "{}: the copy lost an item", K::NAME);
}

#[test]
fn saving_asks_the_hasher_for_its_seed_with_no_lock_held() {
    saves_with_an_inserting_seed::<concurrent_cuckoo_filter::Fixed>();
    saves_with_an_inserting_seed::<concurrent_cuckoo_filter::Growable>();
    saves_with_an_inserting_seed::<concurrent_cuckoo_filter::Expiring>();
}

#[test]
fn an_expiring_filter_saves_with_no_copy_of_its_table() {
    let filter = concurrent_cuckoo_filter::ExpiringCuckooFilter::with_capacity(1_000_000);
    filter.try_extend(0..900_000u64).unwrap();
    let len = filter.serialized_len() as usize;
    let (out, bytes) = total_allocation(|| filter.to_bytes());
    assert_eq!(out.len(), len);
    assert!(bytes < len + SMALL, "to_bytes: {bytes} bytes for {len}");
    let (written, bytes) = total_allocation(|| filter.write_to(io::sink()));
    written.unwrap();
    assert!(bytes < len + SMALL, "write_to: {bytes} bytes for {len}");
    let mut buffer = vec![0u8; len];
    let (n, bytes) = total_allocation(|| filter.write_to_slice(&mut buffer));
    assert_eq!(n.unwrap(), len);
    assert!(bytes < SMALL, "write_to_slice: {bytes} bytes");
    assert_eq!(buffer, out);
    let err = filter.write_to_slice(&mut buffer[..len / 2]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::WriteZero);
    // Unlocked after a failed write.
    filter.insert(&u64::MAX).unwrap();
}

/// The copy is its own table, filled straight from the filter's: no table in between.
#[test]
fn a_clone_takes_one_copy_of_the_filter() {
    fn one_copy<K: Kind>(name: &str, filter: &CuckooFilter<K>) {
        let (copy, bytes) = total_allocation(|| filter.clone());
        let memory = filter.memory_usage();
        assert_eq!(copy.len(), filter.len());
        assert!(bytes < memory + SMALL, "{name}: {bytes} bytes for {memory}");
    }
    let expiring = concurrent_cuckoo_filter::ExpiringCuckooFilter::with_capacity(1_000_000);
    expiring.try_extend(0..900_000u64).unwrap();
    one_copy("expiring", &expiring);
    for filter in fixed_filters() {
        one_copy(&format!("{:?}", filter.layout()), &filter);
    }
    one_copy("growable", &grown());
}
