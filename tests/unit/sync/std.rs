use super::*;

#[test]
fn prefetch_changes_nothing() {
    let words: Vec<AtomicU64> = (0..64).map(AtomicU64::new).collect();
    for word in &words {
        prefetch(word);
        prefetch_write(word);
    }
    assert!(words
        .iter()
        .enumerate()
        .all(|(i, w)| w.load(Ordering::Relaxed) == i as u64));
}

#[test]
fn table_words_are_zero_writable_aligned_and_refused_when_impossible() {
    for huge_pages in [false, true] {
        for len in [0usize, 1, 3, 1000, (4 << 20) / 8 + 5, (6 << 20) / 8] {
            let words = table_words(len, huge_pages).unwrap();
            assert_eq!(words.len(), len);
            if huge_pages && len > 0 {
                assert_eq!(words.as_ptr() as usize % HUGE_PAGE, 0, "{len} words");
            }
            assert!(words.iter().all(|w| w.load(Ordering::Relaxed) == 0));
            for (i, word) in words.iter().enumerate() {
                word.store(i as u64 ^ 0x5a5a, Ordering::Relaxed);
            }
            // Shared with and read back on another thread (`Send` and `Sync`).
            let words = std::thread::spawn(move || {
                assert!(words
                    .iter()
                    .enumerate()
                    .all(|(i, w)| w.load(Ordering::Relaxed) == i as u64 ^ 0x5a5a));
                words
            })
            .join()
            .unwrap();
            assert!(format!("{words:?}").contains(&format!("len: {len}")));
        }
        assert!(table_words(usize::MAX / 4, huge_pages).is_none());
        assert!(table_words(1 << 45, huge_pages).is_none());
    }
}

#[test]
fn huge_page_advice_keeps_memory_as_it_was() {
    // Unaligned at both ends, and large enough to hold whole huge pages.
    let mut words: Vec<u64> = (0..(5 << 20) / 8 + 3).map(|i| i * 7).collect();
    advise_huge_pages(&words[1..]);
    advise_huge_pages(&words[..0]);
    advise_huge_pages(&words[..1]);
    assert!(words.iter().enumerate().all(|(i, &w)| w == i as u64 * 7));
    words.push(1);
    assert_eq!(words.last(), Some(&1));
}
