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

import os as _os

from . import _native
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

#: The first bytes of a live file (FORMAT.md, "The live file").
_LIVE_MAGIC = b"\x89CCL\r\n\x1a\n"


def _after_fork_in_child() -> None:
    """In a child made by ``fork``: gives the native module the child's process id (the live
    filters the parent opened refuse use here), and lets go of the parent's registrations.

    A writer's registration is an OFD lock on its slot's byte, held by an open file
    description that a forked child shares. Kept, it would make the parent look alive after its
    death for as long as the child runs, and every process would wait for ever on the stripes
    the parent held when it died (docs/shared.md, "Processes that fork"). Each descriptor of a
    live file that holds an OFD lock is pointed at ``/dev/null`` instead, so that the filter
    owning it closes a descriptor that is still its own.
    """
    if not _native._forked():
        return
    try:
        descriptors = _os.listdir("/proc/self/fd")
    except OSError:
        return
    null = None
    for name in descriptors:
        try:
            with open(f"/proc/self/fdinfo/{name}", encoding="ascii") as info:
                if not any(line.startswith("lock:") and "OFDLCK" in line for line in info):
                    continue
            fd = int(name)
            if _os.pread(fd, len(_LIVE_MAGIC), 0) != _LIVE_MAGIC:
                continue
            if null is None:
                null = _os.open(_os.devnull, _os.O_RDONLY | _os.O_CLOEXEC)
            _os.dup2(null, fd, inheritable=False)
        except (OSError, ValueError):
            continue
    if null is not None:
        _os.close(null)


if hasattr(_os, "register_at_fork"):
    _os.register_at_fork(after_in_child=_after_fork_in_child)

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
