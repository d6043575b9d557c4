//! A writer stopped for good at a chosen store, its locks held, as a test plays a killed writer:
//! a thread that [`arm`]s itself parks forever before its `n`-th point from then on (each word
//! store of packed buckets, `table.rs`, and each emptying of a journal, `owners.rs`).

use std::cell::{Cell, RefCell};
use std::sync::mpsc::Sender;

thread_local! {
    /// Points left before this thread stops; 0: it never does.
    static LEFT: Cell<usize> = const { Cell::new(0) };
    static STOPPED: RefCell<Option<Sender<()>>> = const { RefCell::new(None) };
}

/// Makes this thread stop for good at its `n`-th point from now (`n >= 1`), telling `stopped`.
pub(crate) fn arm(n: usize, stopped: Sender<()>) {
    LEFT.set(n);
    STOPPED.set(Some(stopped));
}

/// Makes this thread run on past every point.
pub(crate) fn disarm() {
    LEFT.set(0);
    STOPPED.set(None);
}

/// A store or a journal's emptying is next.
pub(crate) fn point() {
    let left = LEFT.get();
    if left == 0 {
        return;
    }
    LEFT.set(left - 1);
    if left == 1 {
        if let Some(stopped) = STOPPED.take() {
            let _ = stopped.send(());
        }
        loop {
            std::thread::park();
        }
    }
}
