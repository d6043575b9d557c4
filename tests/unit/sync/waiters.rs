use super::Waiters;
use std::sync::atomic::{AtomicBool, Ordering};

#[test]
fn a_parked_thread_wakes_when_its_state_changes() {
    let (waiters, open) = (Waiters::default(), AtomicBool::new(false));
    std::thread::scope(|scope| {
        let waiter = scope.spawn(|| waiters.wait_while(|| !open.load(Ordering::Acquire)));
        std::thread::sleep(std::time::Duration::from_millis(20));
        open.store(true, Ordering::Release);
        waiters.wake_all();
        waiter.join().unwrap();
    });
    // Not blocked: returns at once.
    waiters.wait_while(|| false);
}
