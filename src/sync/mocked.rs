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

macro_rules! shadowed_atomic {
    ($name:ident, $int:ty) => {
        #[derive(Debug)]
        pub(crate) struct $name {
            value: loom::sync::atomic::$name,
            shadow: Shadow,
        }

        impl $name {
            pub(crate) fn new(value: $int) -> Self {
                Self {
                    value: loom::sync::atomic::$name::new(value),
                    shadow: Shadow::new(),
                }
            }

            touching! {
                load(order: Ordering) -> $int;
                store(value: $int, order: Ordering) -> ();
                compare_exchange_weak(current: $int, new: $int, success: Ordering, failure: Ordering)
                    -> Result<$int, $int>;
                compare_exchange(current: $int, new: $int, success: Ordering, failure: Ordering)
                    -> Result<$int, $int>;
                fetch_add(value: $int, order: Ordering) -> $int;
                fetch_xor(value: $int, order: Ordering) -> $int;
                fetch_max(value: $int, order: Ordering) -> $int;
            }
        }
    };
}

shadowed_atomic!(AtomicU64, u64);

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
