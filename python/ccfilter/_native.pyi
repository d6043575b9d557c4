"""Type stubs of the native module (the Rust extension)."""

import os
import pathlib
import pickle
from collections.abc import Iterable
from typing import Any, Literal, SupportsIndex, Union

import numpy as np
import numpy.typing as npt

Key = Union[int, str, bytes, bytearray, memoryview, np.integer[Any], np.bool_]
"""An int in [-2**63, 2**64), a str (its UTF-8 bytes), a bytes-like object or a numpy integer."""

Keys = Union[npt.NDArray[np.integer[Any]], npt.NDArray[np.str_], npt.NDArray[np.bytes_], Iterable[Key]]
"""A 1-D numpy integer array (read in place, any stride), or any iterable of keys."""

PathLike = Union[str, "os.PathLike[str]"]

DEFAULT_SEED: int

class FilterFullError(ValueError):
    """A key found no room (or a count window is at its end); nothing was dropped to make room."""

    inserted: int
    """Keys of the call (fingerprints, for merge) that went in before the one with no room."""

def hash64(key: Key, seed: SupportsIndex | None = None) -> int:
    """The 64-bit hash the filters compute for `key` (what `ccf build --hex64` takes)."""

def load(
    path: PathLike | bytes,
    *,
    mmap: bool | np.bool_ = True,
) -> ConcurrentCuckooFilter | GrowableCuckooFilter | ExpiringCuckooFilter:
    """The filter in the file at `path`, of whichever kind it holds; a live file mapped
    read-only (`mmap=False`: copied into memory)."""

class _Filter:
    def add(self, key: Key) -> None:
        """Adds one copy of `key`; raises FilterFullError if it finds no room."""
    def add_unique(self, key: Key) -> bool:
        """Adds `key` unless already present; whether it was added."""
    def discard(self, key: Key) -> bool:
        """Removes one copy of `key` if present; whether it was."""
    def remove(self, key: Key) -> None:
        """Removes one copy of `key`; raises KeyError if absent."""
    def __contains__(self, key: Key) -> bool: ...
    def __len__(self) -> int: ...
    def count(self, key: Key) -> int:
        """Copies of `key` (or of keys sharing its fingerprint) stored."""
    @property
    def capacity(self) -> int: ...
    @property
    def memory_usage(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def expected_false_positive_rate(self) -> float: ...
    def add_many(self, keys: Keys, *, threads: SupportsIndex = 1) -> int:
        """Adds every key in order; how many. FilterFullError at the first with no room.
        `threads` splits each segment of keys across that many threads."""
    def contains_many(self, keys: Keys, *, threads: SupportsIndex = 1) -> npt.NDArray[np.bool_]:
        """Whether each key may be in the filter, on `threads` threads."""
    def discard_many(self, keys: Keys, *, threads: SupportsIndex = 1) -> int:
        """Removes one copy of each present key; how many were removed."""
    def update(self, *iterables: Keys) -> None:
        """Adds every key of each iterable, as add_many does."""
    def __eq__(self, other: object) -> bool:
        """Same class, settings, seed and table (the same bytes)."""
    __hash__: None  # type: ignore[assignment]
    def to_bytes(self) -> bytes:
        """The filter in the crate's portable format."""
    def clear(self) -> None:
        """Removes every key, keeping the filter's memory and shape."""
    def save(self, path: PathLike | bytes) -> None:
        """Writes the filter to `path` (atomically, through a temporary file)."""
    def stats(self) -> dict[str, Any]: ...
    def __reduce__(self) -> tuple[Any, tuple[bytes]]: ...
    def __reduce_ex__(self, protocol: int) -> tuple[Any, tuple[bytes | pickle.PickleBuffer]]: ...
    def __sizeof__(self) -> int: ...

class ConcurrentCuckooFilter(_Filter):
    """A cuckoo filter sized up front, shared by any number of threads."""

    def __init__(
        self,
        capacity: SupportsIndex,
        false_positive_rate: float | None = None,
        *,
        fingerprint_bits: SupportsIndex | None = None,
        bucket_size: SupportsIndex | None = None,
        semi_sorted: bool | np.bool_ | None = None,
        seed: SupportsIndex | None = None,
    ) -> None: ...
    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview) -> ConcurrentCuckooFilter: ...
    @classmethod
    def load(cls, path: PathLike | bytes) -> ConcurrentCuckooFilter: ...
    @classmethod
    def create_shared(
        cls,
        path: PathLike | bytes,
        capacity: SupportsIndex,
        false_positive_rate: float | None = None,
        *,
        fingerprint_bits: SupportsIndex | None = None,
        bucket_size: SupportsIndex | None = None,
        semi_sorted: bool | np.bool_ | None = None,
        seed: SupportsIndex | None = None,
    ) -> ConcurrentCuckooFilter:
        """A filter built in a new live file at `path`, shared by the processes that open it."""
    @classmethod
    def open_shared(cls, path: PathLike | bytes, readonly: bool | np.bool_ = False) -> ConcurrentCuckooFilter:
        """The live filter at `path`, mapped: the same as every other process's."""
    def flush(self) -> None:
        """Writes the changes so far to the file and waits for the disk (msync)."""
    def verify(self) -> None:
        """Checks the whole table; `ValueError` for a damaged one."""
    @property
    def path(self) -> pathlib.Path | None: ...
    @property
    def is_shared(self) -> bool: ...
    @property
    def readonly(self) -> bool: ...
    def copy(self) -> ConcurrentCuckooFilter: ...
    @property
    def load_factor(self) -> float: ...
    def __copy__(self) -> ConcurrentCuckooFilter: ...
    def __deepcopy__(self, memo: Any) -> ConcurrentCuckooFilter: ...
    @property
    def fingerprint_bits(self) -> int: ...
    @property
    def bucket_size(self) -> int: ...
    @property
    def semi_sorted(self) -> bool: ...
    def is_compatible(self, other: ConcurrentCuckooFilter) -> bool:
        """Whether `merge` can merge `other` in: same shape and seed."""
    def merge(self, other: ConcurrentCuckooFilter, *, unique: bool = False) -> int:
        """Adds every fingerprint of `other` (only those not present with unique=True)."""
    def __ior__(self, other: ConcurrentCuckooFilter) -> ConcurrentCuckooFilter:
        """The set union: merge(other, unique=True)."""
    def __or__(self, other: ConcurrentCuckooFilter) -> ConcurrentCuckooFilter:
        """A copy with other merged in as |= does."""

class GrowableCuckooFilter(_Filter):
    """A cuckoo filter that grows as keys arrive, its false positive rate bounded."""

    def __init__(
        self,
        capacity: SupportsIndex | None = None,
        false_positive_rate: float | None = None,
        *,
        split_depth: SupportsIndex | None = None,
        max_capacity: SupportsIndex | None = None,
        seed: SupportsIndex | None = None,
    ) -> None: ...
    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview) -> GrowableCuckooFilter: ...
    @classmethod
    def load(cls, path: PathLike | bytes) -> GrowableCuckooFilter: ...
    def copy(self) -> GrowableCuckooFilter: ...
    @property
    def load_factor(self) -> float: ...
    def __copy__(self) -> GrowableCuckooFilter: ...
    def __deepcopy__(self, memo: Any) -> GrowableCuckooFilter: ...
    @property
    def false_positive_rate(self) -> float: ...
    @property
    def level_count(self) -> int: ...
    @property
    def fingerprint_bits(self) -> list[int]: ...
    def is_compatible(self, other: GrowableCuckooFilter) -> bool:
        """Whether `merge` can merge `other` in: same plan and seed."""
    def merge(self, other: GrowableCuckooFilter, *, unique: bool = False) -> int:
        """Adds every fingerprint of `other`, each into its level; how many went in."""
    def __ior__(self, other: GrowableCuckooFilter) -> GrowableCuckooFilter:
        """The set union: merge(other, unique=True)."""
    def __or__(self, other: GrowableCuckooFilter) -> GrowableCuckooFilter:
        """A copy with other merged in as |= does."""

class ExpiringCuckooFilter(_Filter):
    """A cuckoo filter that remembers keys for a sliding window of adds or of time."""

    def __init__(
        self,
        *,
        items: SupportsIndex | None = None,
        seconds: float | None = None,
        capacity: SupportsIndex | None = None,
        false_positive_rate: float | None = None,
        generations: SupportsIndex | None = None,
        overflow: Literal["error", "expire_early"] | None = None,
        clock: Literal["monotonic", "manual"] | None = None,
        seed: SupportsIndex | None = None,
    ) -> None:
        """A count window (`items`) or a time window (`seconds` and `capacity`)."""
    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview) -> ExpiringCuckooFilter: ...
    @classmethod
    def load(cls, path: PathLike | bytes) -> ExpiringCuckooFilter: ...
    def copy(self) -> ExpiringCuckooFilter: ...
    def __copy__(self) -> ExpiringCuckooFilter: ...
    def __deepcopy__(self, memo: Any) -> ExpiringCuckooFilter: ...
    def advance_to(self, seconds: float) -> None:
        """Moves a clock="manual" filter's clock to `seconds` since its start (never back; at
        most 2**64 - 1 nanoseconds, about 584 years)."""
    @property
    def window(self) -> dict[str, float]:
        """{"items": N} or {"seconds": S}, as the constructor takes it."""
    @property
    def generations(self) -> int: ...
