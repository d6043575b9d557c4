pub(crate) use loom::sync::atomic::{fence, Ordering};

/// Whether loom explores this build: yes. Loom's threads share one system thread, and every retry
/// multiplies the interleavings it explores.
pub(crate) const MODEL_CHECKED: bool = true;

/// Loom's atomics, with every access made visible to loom's partial-order reduction.
///
/// Loom 0.7 remembers only the *last* access to each atomic when it looks for racing accesses.
/// A writer here always loads a word before it stores it (a stripe's stamp before its CAS and its
/// unlock, a table word before its masked store), so the writer's own load hides every load that
/// readers made before it, and loom never tries the schedules in which those readers run after
/// the writer (tokio-rs/loom#166, #392): a model of a reader racing a writer then explores a
/// single execution and proves nothing.
///
/// So each access first "touches" a shadow word with a compare-exchange that always fails. Loom
/// counts it as a read-modify-write, which races with every other access to the same word, so
/// every pair of accesses to a word is explored in both orders. A failed compare-exchange stores
/// nothing, so the shadow carries no release fence's view from one thread to another: the memory
/// model the filter is checked under is exactly that of its real atomics.
macro_rules! shadowed_atomic {
    ($name:ident, $int:ty) => {
        #[derive(Debug)]
        pub(crate) struct $name {
            value: loom::sync::atomic::$name,
            shadow: loom::sync::atomic::AtomicUsize,
        }

        impl $name {
            pub(crate) fn new(value: $int) -> Self {
                Self {
                    value: loom::sync::atomic::$name::new(value),
                    shadow: loom::sync::atomic::AtomicUsize::new(0),
                }
            }

            fn touch(&self) {
                let _ = self
                    .shadow
                    .compare_exchange(1, 1, Ordering::Relaxed, Ordering::Relaxed);
            }

            pub(crate) fn load(&self, order: Ordering) -> $int {
                self.touch();
                self.value.load(order)
            }

            pub(crate) fn store(&self, value: $int, order: Ordering) {
                self.touch();
                self.value.store(value, order);
            }

            pub(crate) fn compare_exchange_weak(
                &self,
                current: $int,
                new: $int,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$int, $int> {
                self.touch();
                self.value
                    .compare_exchange_weak(current, new, success, failure)
            }

            pub(crate) fn compare_exchange(
                &self,
                current: $int,
                new: $int,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$int, $int> {
                self.touch();
                self.value.compare_exchange(current, new, success, failure)
            }

            pub(crate) fn fetch_add(&self, value: $int, order: Ordering) -> $int {
                self.touch();
                self.value.fetch_add(value, order)
            }

            pub(crate) fn fetch_xor(&self, value: $int, order: Ordering) -> $int {
                self.touch();
                self.value.fetch_xor(value, order)
            }

            pub(crate) fn fetch_max(&self, value: $int, order: Ordering) -> $int {
                self.touch();
                self.value.fetch_max(value, order)
            }
        }
    };
}

shadowed_atomic!(AtomicU64, u64);

/// A pointer in a loom atomic, shadowed as [`AtomicU64`] is.
#[derive(Debug)]
pub(crate) struct AtomicPtr<T> {
    value: loom::sync::atomic::AtomicPtr<T>,
    shadow: loom::sync::atomic::AtomicUsize,
}

impl<T> AtomicPtr<T> {
    pub(crate) fn new(value: *mut T) -> Self {
        Self {
            value: loom::sync::atomic::AtomicPtr::new(value),
            shadow: loom::sync::atomic::AtomicUsize::new(0),
        }
    }

    fn touch(&self) {
        let _ = self
            .shadow
            .compare_exchange(1, 1, Ordering::Relaxed, Ordering::Relaxed);
    }

    pub(crate) fn load(&self, order: Ordering) -> *mut T {
        self.touch();
        self.value.load(order)
    }

    pub(crate) fn store(&self, value: *mut T, order: Ordering) {
        self.touch();
        self.value.store(value, order);
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

/// `len` words, every one 0, or `None` if the memory cannot be had. Loom's atomics are not plain
/// integers, so they are built one by one.
pub(crate) fn zeroed_words(len: usize) -> Option<Box<[AtomicU64]>> {
    let mut words = Vec::new();
    words.try_reserve_exact(len).ok()?;
    words.extend((0..len).map(|_| AtomicU64::new(0)));
    Some(words.into_boxed_slice())
}

/// A table's words: loom's atomics are not plain integers, and memory placement is nothing loom
/// could observe, so a boxed slice of them.
pub(crate) type TableWords = Box<[AtomicU64]>;

/// `len` table words, every one 0, or `None` if the memory cannot be had.
pub(crate) fn table_words(len: usize, _huge_pages: bool) -> Option<TableWords> {
    zeroed_words(len)
}
