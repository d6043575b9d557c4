use super::OnceSlot;

#[test]
fn a_failed_fill_leaves_the_slot_empty_for_the_next() {
    let slot = OnceSlot::new();
    assert_eq!(
        slot.get_or_try_init(|| Err::<u32, _>("no memory")),
        Err("no memory")
    );
    assert_eq!(slot.get(), None);
    assert_eq!(slot.get_or_try_init(|| Ok::<_, ()>(7)), Ok(&7));
    // Filled: later fills do not run.
    assert_eq!(slot.get_or_try_init(|| Err(())), Ok(&7));
    assert_eq!(*slot.get_or_init(|| 8), 7);
}
