//! A writer stopped for good at a chosen store, its locks held: how a test plays a writer that
//! was killed in the middle of a write (docs/shared.md, "What a kill can leave").
//!
//! Each word store of the table's packed buckets (`table.rs`) and each emptying of a stripe's
//! journal (`owners.rs`) is a point. A thread that [`arm`]s itself parks forever at its `n`-th
//! point from then on, before that store: what it stored until then stays, its locks stay held.

use std::cell::{Cell, RefCell};
use std::sync::mpsc::Sender;

thread_local! {
    /// Points left before this thread stops; 0: it never does.
    static LEFT: Cell<usize> = const { Cell::new(0) };
    /// Told once this thread has stopped.
    static STOPPED: RefCell<Option<Sender<()>>> = const { RefCell::new(None) };
}

/// Makes this thread stop for good at its `n`-th point from now (`n >= 1`), telling `stopped`
/// first.
pub(crate) fn arm(n: usize, stopped: Sender<()>) {
    LEFT.set(n);
    STOPPED.set(Some(stopped));
}

/// Makes this thread run on past every point; its `stopped` hears nothing more.
pub(crate) fn disarm() {
    LEFT.set(0);
    STOPPED.set(None);
}

/// A store or a journal's emptying is next: an armed thread whose count ends here stops.
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
