"""A concurrent cuckoo filter: an approximate set shared by threads and processes.

Three classes, all safe to share between threads: :class:`ConcurrentCuckooFilter` (sized up
front), :class:`GrowableCuckooFilter` (grows as keys arrive) and :class:`ExpiringCuckooFilter`
(remembers keys for a sliding window of adds or of time). Keys are ``int`` (from
``-2**63`` to ``2**64 - 1``), ``str`` and bytes-like objects, hashed exactly as the Rust crate
and the ``ccf`` tool hash them, so filters move between the three as files, bytes or pickles.
"""

from __future__ import annotations

from ._native import (
    DEFAULT_SEED,
    ConcurrentCuckooFilter,
    ExpiringCuckooFilter,
    FilterFullError,
    GrowableCuckooFilter,
    hash64,
    load,
)

__all__ = [
    "DEFAULT_SEED",
    "ConcurrentCuckooFilter",
    "ExpiringCuckooFilter",
    "FilterFullError",
    "GrowableCuckooFilter",
    "hash64",
    "load",
]
