pub(crate) use loom::sync::atomic::{fence, Ordering};

/// The word every access to one of loom's atomics touches first, so that loom's partial-order
/// reduction sees every access.
///
/// Loom 0.7 remembers only the *last* access to each atomic when it looks for races. A writer
/// here always loads a word before it stores it (a stamp before its CAS, a table word before its
/// masked store), so its own load hides the readers' earlier loads, and loom never runs those
/// readers after the writer (tokio-rs/loom#166, #392): a model of a reader racing a writer would
/// explore one execution and prove nothing. A compare-exchange on the shadow that always fails
/// counts as a read-modify-write, which races with every access to the word, so every pair of
/// accesses is explored in both orders; it stores nothing, so it carries no thread's view to
/// another and the filter is checked under its real atomics' memory model.
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

/// A table's words: loom's atomics are not plain integers, and memory placement is nothing loom
/// could observe, so a boxed slice of them.
pub(crate) type TableWords = Box<[AtomicU64]>;

/// `len` table words, every one 0, or `None` if the memory cannot be had; built one by one.
pub(crate) fn table_words(len: usize, _huge_pages: bool) -> Option<TableWords> {
    let mut words = Vec::new();
    words.try_reserve_exact(len).ok()?;
    words.extend((0..len).map(|_| AtomicU64::new(0)));
    Some(words.into_boxed_slice())
}
