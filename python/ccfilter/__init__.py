"""A concurrent cuckoo filter: an approximate set shared by threads and processes.

Three classes, all safe to share between threads: :class:`ConcurrentCuckooFilter` (sized up
front), :class:`GrowableCuckooFilter` (grows as keys arrive) and :class:`ExpiringCuckooFilter`
(remembers keys for a sliding window of adds or of time). Keys are ``int`` (from
``-2**63`` to ``2**64 - 1``), ``str`` and bytes-like objects, hashed exactly as the Rust crate
and the ``ccf`` tool hash them, so filters move between the three as files, bytes or pickles.

:func:`create_shared` builds a :class:`ConcurrentCuckooFilter` in a file that other processes
open with :func:`open_shared` and use at once (a pickle of it reopens the same file).
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

#: ``create_shared(path, capacity, false_positive_rate=None, **settings)``: a
#: ``ConcurrentCuckooFilter`` built in a new live file at ``path``.
create_shared = ConcurrentCuckooFilter.create_shared
#: ``open_shared(path, readonly=False)``: the live filter at ``path``, mapped, in any process.
open_shared = ConcurrentCuckooFilter.open_shared

__all__ = [
    "DEFAULT_SEED",
    "ConcurrentCuckooFilter",
    "ExpiringCuckooFilter",
    "FilterFullError",
    "GrowableCuckooFilter",
    "hash64",
    "create_shared",
    "load",
    "open_shared",
]
