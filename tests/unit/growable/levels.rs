use super::*;

/// Plain buckets, exact ones of 4 × 8 bits when `initial_buckets` is set, else by the rate.
fn plan(initial_capacity: usize, initial_buckets: usize, depth: u32, max: usize) -> Plan {
    let mut table = TableSettings {
        layout: Some(crate::TableLayout::Packed),
        ..TableSettings::default()
    };
    table.request.semi_sorted = Some(false);
    if initial_buckets != 0 {
        table.request.bucket_size = Some(4);
        table.request.fingerprint_bits = Some(8);
    }
    Plan {
        table,
        initial_capacity,
        initial_buckets,
        false_positive_rate: 0.01,
        max_capacity: max,
        split_depth: depth,
    }
}

#[test]
fn the_rates_of_all_levels_stay_under_the_target() {
    let plan = plan(4_000, 0, 2, usize::MAX);
    let rates: Vec<f64> = (0..MAX_LEVELS).map(|level| plan.rate_of(level)).collect();
    assert!(rates.iter().sum::<f64>() < plan.false_positive_rate);
    assert!(rates.windows(2).all(|pair| pair[1] * 2.0 == pair[0]));
}

#[test]
fn a_level_past_the_plan_limit_is_refused_for_good() {
    let levels = Levels::new(plan(4_000, 0, 2, 4_000)).unwrap();
    assert!(!levels.grow(0));
    assert!(matches!(levels.slots[0].get(), Some(None)));
    assert_eq!(levels.count(), 1);
}

#[test]
fn a_level_within_the_limit_is_added_once() {
    let levels = Levels::new(plan(4_000, 0, 2, usize::MAX)).unwrap();
    assert!(levels.grow(0));
    assert!(levels.grow(0), "a level already added counts as grown");
    assert_eq!(levels.count(), 2);
    assert!(levels.level(1).capacity() > 3 * levels.level(0).capacity());
}

/// The shapes the decoder expects are those the levels are built with.
#[test]
fn the_decoders_level_shapes_are_the_built_ones() {
    let mut plans = vec![
        plan(1_000, 0, 2, usize::MAX),
        plan(400_000, 0, 3, usize::MAX),
        plan(20, 16, 2, usize::MAX),
        plan(5_000, 0, 1, 30_000),
    ];
    // And semi-sorted buckets, which a header that leaves them to the rate asks for.
    let mut by_rate = plans[0].clone();
    by_rate.table.request.semi_sorted = None;
    plans.push(by_rate);
    for plan in &plans {
        for level in 0..3 {
            match (plan.level_shape(level), build_level(plan, level)) {
                (Ok(shape), Ok(built)) => assert_eq!(built.shape(), shape, "{plan:?} {level}"),
                (Err(shape), Err(built)) => assert_eq!(shape, built, "{plan:?} {level}"),
                (shape, built) => panic!("{plan:?} {level}: {shape:?} and {built:?}"),
            }
        }
    }
    assert!(plans[1].level_shape(0).unwrap().first_depth > 0);
    assert!(plans[3].level_shape(1).is_ok() && plans[3].level_shape(2).is_err());
}
