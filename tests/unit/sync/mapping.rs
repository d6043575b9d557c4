use super::*;
use crate::sync::Ordering;

fn temp_file(len: u64) -> (std::path::PathBuf, File) {
    let path = std::env::temp_dir().join(format!("ccf-mapping-{}-{}", std::process::id(), len));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    file.set_len(len).unwrap();
    (path, file)
}

#[test]
fn mapped_words_are_the_files_bytes_and_stay_in_bounds() {
    let (path, file) = temp_file(3 * 4096);
    let map = Arc::new(Mapping::map(&file, 3 * 4096, false).unwrap());
    let words = map.words(4096, 512).unwrap();
    assert_eq!(words.len(), 512);
    for (i, word) in words.iter().enumerate() {
        assert_eq!(word.load(Ordering::Relaxed), 0);
        word.store(i as u64 * 3, Ordering::Relaxed);
    }
    // A second handle over the same bytes sees them, after the first is dropped.
    drop(words);
    let again = map.words(4096 + 8, 1).unwrap();
    assert_eq!(again[0].load(Ordering::Relaxed), 3);
    map.flush().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes[4096 + 8], 3);
    // Unaligned or past the end: refused.
    assert!(map.words(4, 1).is_none());
    assert!(map.words(3 * 4096 - 8, 2).is_none());
    assert!(map.words(usize::MAX - 7, 1).is_none());
    assert!(map.words(0, usize::MAX / 4).is_none());
    map.advise_huge_pages(0, map.len);
    drop(map);
    drop(again);
    std::fs::remove_file(path).unwrap();
}

#[test]
fn byte_locks_are_per_open_file_description() {
    let (path, file) = temp_file(64);
    let other = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    assert!(!byte_is_locked(&other, 8));
    assert!(try_lock_byte(&file, 8).unwrap());
    assert!(byte_is_locked(&other, 8));
    assert!(!try_lock_byte(&other, 8).unwrap());
    assert!(!byte_is_locked(&other, 9));
    drop(file);
    assert!(!byte_is_locked(&other, 8), "closing drops the lock");
    assert!(try_flock(&other, false).unwrap());
    std::fs::remove_file(path).unwrap();
}

/// A private mapping (a read-only opener's) is not charged against the memory the kernel may
/// commit: it is never written, so no page of it is ever the process's own, and charged it
/// would make a file larger than RAM and swap impossible to open read-only (`ENOMEM`) and any
/// other one count against every process's allocations. `VmFlags` in `/proc/self/smaps` shows
/// an accounted mapping as `ac`; the kernel honours `MAP_NORESERVE` (`nr`) unless the
/// overcommit mode is 2, which charges every writable private mapping.
#[test]
fn a_private_mapping_reserves_no_memory() {
    let (path, file) = temp_file(3 * 4096);
    let read_only = File::open(&path).unwrap();
    let map = Mapping::map(&read_only, 3 * 4096, true).unwrap();
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let name = path.to_str().unwrap();
    let flags = smaps
        .lines()
        .skip_while(|line| !line.ends_with(name))
        .find_map(|line| line.strip_prefix("VmFlags:"))
        .unwrap();
    let strict = std::fs::read_to_string("/proc/sys/vm/overcommit_memory")
        .is_ok_and(|mode| mode.trim() == "2");
    if !strict {
        let flags: Vec<&str> = flags.split_whitespace().collect();
        assert!(
            flags.contains(&"nr") && !flags.contains(&"ac"),
            "accounted: {flags:?}"
        );
    }
    drop((map, read_only, file));
    std::fs::remove_file(path).unwrap();
}

/// Huge-page advice over a mapping's range covers only the whole, aligned 2 MiB pages inside
/// it, the only ones the kernel can back by a huge page: none for a range holding none (a small
/// table's), so the mapping stays one area (`VmFlags` `hg` marks an advised one in
/// `/proc/self/smaps`).
#[test]
fn huge_page_advice_covers_only_whole_huge_pages() {
    const HUGE: usize = 2 << 20;
    let len = 3 * HUGE;
    let (path, file) = temp_file(len as u64);
    let map = Arc::new(Mapping::map(&file, len, false).unwrap());
    let start = map.start.as_ptr() as usize;
    // A small table's range, and one from a page past the start to a page before the end.
    map.advise_huge_pages(4096, 64 << 10);
    map.advise_huge_pages(4096, len - 2 * 4096);
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let hex = |x: &str| usize::from_str_radix(x, 16).ok();
    let mut area = None;
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if let Some((from, to)) = first.split_once('-') {
            area = hex(from).zip(hex(to));
            continue;
        }
        let (Some((from, to)), Some(flags)) = (area, line.strip_prefix("VmFlags:")) else {
            continue;
        };
        if to <= start || from >= start + len || !flags.split_whitespace().any(|f| f == "hg") {
            continue;
        }
        let whole = |at: usize| at % HUGE == 0 && (start + 4096..=start + len - 4096).contains(&at);
        assert!(
            whole(from) && whole(to),
            "advised {from:#x}..{to:#x} in a mapping at {start:#x}..{:#x}",
            start + len
        );
    }
    drop(map);
    std::fs::remove_file(path).unwrap();
}
