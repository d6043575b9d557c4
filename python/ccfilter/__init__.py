"""A concurrent cuckoo filter: an approximate set shared by threads and processes.

Two classes, both safe to share between threads: :class:`ConcurrentCuckooFilter` (sized up
front) and :class:`GrowableCuckooFilter` (grows as keys arrive). Keys are ``int`` (from
``-2**63`` to ``2**64 - 1``), ``str`` and bytes-like objects, hashed exactly as the Rust crate
and the ``ccf`` tool hash them, so filters move between the three as files, bytes or pickles.
"""

from __future__ import annotations

import os
from typing import Union

from ._native import (
    DEFAULT_SEED,
    ConcurrentCuckooFilter,
    FilterFullError,
    GrowableCuckooFilter,
    hash64,
)

__all__ = [
    "DEFAULT_SEED",
    "ConcurrentCuckooFilter",
    "FilterFullError",
    "GrowableCuckooFilter",
    "hash64",
    "load",
]

# The first bytes of a growable filter's file (FORMAT.md); a fixed filter's differ.
_GROWABLE_MAGIC = b"\x89CCG\r\n\x1a\n"


def load(
    path: Union[str, "os.PathLike[str]"],
) -> Union[ConcurrentCuckooFilter, GrowableCuckooFilter]:
    """The filter in the file at ``path``, of whichever kind it holds."""
    with open(path, "rb") as file:
        magic = file.read(len(_GROWABLE_MAGIC))
    if magic == _GROWABLE_MAGIC:
        return GrowableCuckooFilter.load(path)
    return ConcurrentCuckooFilter.load(path)
