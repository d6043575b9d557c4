pub(crate) use loom::sync::atomic::{fence, Ordering};

/// Touched first by every access to a loom atomic, so that loom explores each pair of accesses in
/// both orders. Loom 0.7 keeps only an atomic's *last* access for its race search, and a writer
/// loads a word before it stores it, hiding the readers' earlier loads: a reader racing a writer
/// would be explored one way only (tokio-rs/loom#166, #392). A compare-exchange on the shadow
/// that always fails is a read-modify-write, racing with every access; it stores nothing, so it
/// carries no thread's view to another and the real atomics' memory model is the one checked.
#[derive(Debug)]
struct Shadow(loom::sync::atomic::AtomicUsize);

impl Shadow {
    fn new() -> Self {
        Self(loom::sync::atomic::AtomicUsize::new(0))
    }

    fn touch(&self) {
        let _ = self
            .0
            .compare_exchange(1, 1, Ordering::Relaxed, Ordering::Relaxed);
    }
}

/// Methods that touch the shadow, then call the loom atomic's own.
macro_rules! touching {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {$(
        pub(crate) fn $name(&self, $($arg: $ty),*) -> $ret {
            self.shadow.touch();
            self.value.$name($($arg),*)
        }
    )*};
}

/// A loom `AtomicU64` behind its [`Shadow`].
#[derive(Debug)]
pub(crate) struct AtomicU64 {
    value: loom::sync::atomic::AtomicU64,
    shadow: Shadow,
}

impl AtomicU64 {
    pub(crate) fn new(value: u64) -> Self {
        Self {
            value: loom::sync::atomic::AtomicU64::new(value),
            shadow: Shadow::new(),
        }
    }

    touching! {
        load(order: Ordering) -> u64;
        store(value: u64, order: Ordering) -> ();
        compare_exchange_weak(current: u64, new: u64, success: Ordering, failure: Ordering)
            -> Result<u64, u64>;
        compare_exchange(current: u64, new: u64, success: Ordering, failure: Ordering)
            -> Result<u64, u64>;
        fetch_add(value: u64, order: Ordering) -> u64;
        fetch_xor(value: u64, order: Ordering) -> u64;
        fetch_max(value: u64, order: Ordering) -> u64;
    }
}

/// A pointer in a loom atomic, shadowed as [`AtomicU64`] is.
#[derive(Debug)]
pub(crate) struct AtomicPtr<T> {
    value: loom::sync::atomic::AtomicPtr<T>,
    shadow: Shadow,
}

impl<T> AtomicPtr<T> {
    pub(crate) fn new(value: *mut T) -> Self {
        Self {
            value: loom::sync::atomic::AtomicPtr::new(value),
            shadow: Shadow::new(),
        }
    }

    touching! {
        load(order: Ordering) -> *mut T;
        store(value: *mut T, order: Ordering) -> ();
    }
}

/// Under loom a spin loop must yield, or the model checker would explore it forever.
#[derive(Debug, Default)]
pub(crate) struct Backoff;

impl Backoff {
    pub(crate) fn new() -> Self {
        Self
    }

    #[inline]
    pub(crate) fn snooze(&self) {
        loom::thread::yield_now();
    }
}

/// A prefetch hint has no effect loom could observe.
#[inline(always)]
pub(crate) fn prefetch(_word: &AtomicU64) {}

/// Nor has one for writing.
#[inline(always)]
pub(crate) fn prefetch_write(_word: &AtomicU64) {}

/// A table's words: a boxed slice, as loom's atomics are no plain integers to allocate zeroed.
pub(crate) type TableWords = Box<[AtomicU64]>;

/// `len` table words, every one 0, or `None` if the memory cannot be had; built one by one.
pub(crate) fn table_words(len: usize, _huge_pages: bool) -> Option<TableWords> {
    let mut words = Vec::new();
    words.try_reserve_exact(len).ok()?;
    words.extend((0..len).map(|_| AtomicU64::new(0)));
    Some(words.into_boxed_slice())
}
