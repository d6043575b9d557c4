"""Processes opening a live file while another creates it: each gets the working filter, never
an error for a half-made file (docs/shared.md, "Bad files are errors, never faults")."""

from __future__ import annotations

import multiprocessing
import os
import time

import pytest

import ccfilter

pytestmark = pytest.mark.skipif(
    not os.uname().sysname == "Linux", reason="live files need Linux (mmap, OFD locks)"
)

CONTEXT = multiprocessing.get_context("spawn")
ROUNDS = 40


def open_when_created(path: str, key: int) -> str:
    """Opens `path` as soon as it exists and adds `key`; what went wrong, or ''."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            shared = ccfilter.open_shared(path)
        except FileNotFoundError:
            continue
        except Exception as error:  # noqa: BLE001 - reported to the parent
            return f"{type(error).__name__}: {error}"
        shared.add(key)
        return "" if key in shared else "the key just added is missing"
    return "the file never appeared"


def test_processes_opening_a_file_being_created_get_the_filter(tmp_path):
    base = "/dev/shm" if os.path.isdir("/dev/shm") else str(tmp_path)
    with CONTEXT.Pool(3) as pool:
        pool.map(abs, range(3))  # the workers started and importing nothing more
        for round in range(ROUNDS):
            path = os.path.join(base, f"ccfilter-race-{os.getpid()}-{round}.live")
            waiting = pool.starmap_async(open_when_created, [(path, w) for w in range(3)])
            time.sleep(0.005)
            created = ccfilter.create_shared(path, 1_000)
            problems = waiting.get(60)
            try:
                assert problems == ["", "", ""], f"round {round}: {problems}"
                assert all(w in created for w in range(3))
            finally:
                os.unlink(path)
