//! What the negative cache's test files share: a temporary directory, keys and values, and the
//! check that `get` agrees with the database.
// Each test file uses some of these.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use ccf_use_cases::measure::SplitMix;
use ccf_use_cases::negative_cache::{NegativeCache, Options};

/// A directory removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> Self {
        let unique = SplitMix(std::process::id() as u64 ^ name.len() as u64).next_u64();
        let dir = std::env::temp_dir().join(format!("ccf-use-cases-{name}-{unique:x}"));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    pub fn db(&self) -> PathBuf {
        self.0.join("store.redb")
    }

    pub fn snapshot(&self) -> PathBuf {
        self.0.join("filter.snapshot")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn key(i: u64) -> [u8; 8] {
    i.to_be_bytes()
}

pub fn value(i: u64) -> [u8; 8] {
    (i.wrapping_mul(3)).to_le_bytes()
}

pub fn with_snapshot(dir: &TempDir) -> Options {
    Options {
        snapshot: Some(dir.snapshot()),
        ..Options::default()
    }
}

pub fn put_range(store: &NegativeCache, keys: std::ops::Range<u64>) {
    let pairs: Vec<_> = keys.map(|i| (key(i), value(i))).collect();
    store
        .put_all(pairs.iter().map(|(k, v)| (&k[..], &v[..])))
        .unwrap();
}

pub fn open(path: &Path, options: Options) -> NegativeCache {
    NegativeCache::open(path, options).unwrap()
}

/// Every key of `keys` that the database holds is found by `get`.
pub fn assert_gets_agree_with_the_database(store: &NegativeCache, keys: std::ops::Range<u64>) {
    for i in keys {
        let in_db = store.get_from_database(&key(i)).unwrap();
        assert_eq!(
            store.get(&key(i)).unwrap(),
            in_db,
            "key {i}: {:?}",
            store.source()
        );
    }
}
