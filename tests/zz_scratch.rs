use concurrent_cuckoo_filter::GrowableCuckooFilter;

#[test]
fn edges() {
    for (cap, max) in [
        (1usize << 20, Some(1usize << 20)),
        (0, Some(1)),
        (1 << 40, None),
        (1, Some(4)),
        (1, None),
    ] {
        for rate in [1e-9, 8e-9, 1e-8, 1e-7, 1e-3, 0.0625, 0.2, 0.5] {
            for depth in [1u32, 10] {
                let mut b = GrowableCuckooFilter::builder()
                    .capacity(cap)
                    .split_depth(depth)
                    .false_positive_rate(rate);
                if let Some(m) = max {
                    b = b.max_capacity(m);
                }
                println!("{cap} {max:?} {rate} d{depth}: {:?}", b.memory_bytes());
            }
        }
    }
}
