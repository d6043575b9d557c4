"""A concurrent cuckoo filter: an approximate set shared by threads and processes.

Two classes, both safe to share between threads: :class:`ConcurrentCuckooFilter` (sized up
front) and :class:`GrowableCuckooFilter` (grows as keys arrive). Keys are ``int`` (from
``-2**63`` to ``2**64 - 1``), ``str`` and bytes-like objects, hashed exactly as the Rust crate
and the ``ccf`` tool hash them, so filters move between the three as files, bytes or pickles.
"""

from __future__ import annotations

from ._native import (
    DEFAULT_SEED,
    ConcurrentCuckooFilter,
    FilterFullError,
    GrowableCuckooFilter,
    hash64,
    load,
)

__all__ = [
    "DEFAULT_SEED",
    "ConcurrentCuckooFilter",
    "FilterFullError",
    "GrowableCuckooFilter",
    "hash64",
    "load",
]
