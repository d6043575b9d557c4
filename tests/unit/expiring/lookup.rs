use super::*;
use crate::expiring::{ExpiringCuckooFilter, Window};

/// A table of 13-bit fingerprints in generation 0, `G = 8`: tag 0 is live, tag 5 (age 11)
/// expired.
fn table() -> Table {
    let settings = ExpiringCuckooFilter::builder(Window::Items(1000))
        .settings()
        .unwrap();
    Table::new(settings, 0, 0, 0).unwrap()
}

const LIVE: u64 = 0;
const EXPIRED: u64 = 5;

/// A slot a case fills.
#[derive(Clone, Copy, Debug)]
struct Filled {
    bucket: usize,
    lane: usize,
    fp: u32,
    tag: u64,
}

fn at(bucket: usize, lane: usize, fp: u32, tag: u64) -> Filled {
    Filled {
        bucket,
        lane,
        fp,
        tag,
    }
}

#[test]
fn a_lookup_finds_exactly_the_live_copies_whichever_lane_and_bucket() {
    let probe = table();
    assert_eq!(probe.ages.generations, 8);
    let hash = (0..)
        .map(|i: u64| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .find(|&h| {
            let c = probe.placement.candidates(h);
            c.first != c.second && c.fp > 1
        })
        .unwrap();
    let c = probe.placement.candidates(hash);
    let (first, second, fp, other) = (c.first, c.second, c.fp, c.fp ^ 1);
    // The slots each case fills, and whether the key is live.
    let cases: [(&[Filled], bool); 8] = [
        (&[at(first, 0, fp, LIVE)], true),
        (&[at(second, 3, fp, LIVE)], true),
        (&[at(first, 2, fp, EXPIRED)], false),
        // The first match expired, a live copy further on or in the other bucket.
        (&[at(first, 0, fp, EXPIRED), at(first, 2, fp, LIVE)], true),
        (&[at(first, 1, fp, EXPIRED), at(second, 3, fp, LIVE)], true),
        (&[at(second, 0, fp, EXPIRED), at(second, 1, fp, LIVE)], true),
        // A live neighbour one bit off above an expired match is no copy.
        (
            &[at(first, 0, fp, EXPIRED), at(first, 1, other, LIVE)],
            false,
        ),
        (
            &[at(first, 3, other, LIVE), at(second, 0, other, LIVE)],
            false,
        ),
    ];
    for (slots, live) in cases {
        let table = table();
        for slot in slots {
            let value = Ages::slot(slot.fp, slot.tag);
            table.slots.set(slot.bucket, slot.lane, 0, value);
        }
        assert_eq!(table.contains(hash), live, "{slots:?}");
        let mut answer = [!live];
        table.contains_hashes(&[hash], &mut answer);
        assert_eq!(answer, [live], "{slots:?}");
        let copies = slots
            .iter()
            .filter(|slot| slot.fp == fp && slot.tag == LIVE)
            .count();
        assert_eq!(table.count(hash), copies, "{slots:?}");
    }
}
