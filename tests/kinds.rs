//! Both kinds through the one generic face: each shows its own name and fields, and a layer
//! written once (here rayon's owned `par_extend`) serves both.

use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, GrowableCuckooFilter};

#[test]
fn debug_names_the_kind_and_its_own_fields() {
    let fixed = ConcurrentCuckooFilter::with_capacity(10);
    fixed.insert(&1u8).unwrap();
    let shown = format!("{fixed:?}");
    assert!(
        shown.starts_with("ConcurrentCuckooFilter { len: 1, capacity: "),
        "{shown}"
    );
    assert!(
        shown.contains("stripes: ") && shown.ends_with(", .. }"),
        "{shown}"
    );

    let growable = GrowableCuckooFilter::with_capacity(10);
    growable.insert(&1u8).unwrap();
    let shown = format!("{growable:?}");
    assert!(
        shown.starts_with("GrowableCuckooFilter { len: 1, false_positive_rate: 0.001, "),
        "{shown}"
    );
    assert!(
        shown.contains("growth_factor: ") && shown.contains("levels: "),
        "{shown}"
    );
}

#[cfg(feature = "rayon")]
#[test]
fn an_owned_filter_of_either_kind_takes_a_parallel_extend() {
    use rayon::prelude::*;

    let mut fixed = ConcurrentCuckooFilter::with_capacity(10_000);
    fixed.par_extend((0..10_000u32).into_par_iter());
    assert_eq!(fixed.len(), 10_000);
    let mut growable = GrowableCuckooFilter::with_capacity(10);
    growable.par_extend((0..10_000u32).into_par_iter());
    assert_eq!(growable.len(), 10_000);
    assert!((0..10_000u32).all(|key| fixed.contains(&key) && growable.contains(&key)));
}
