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


def open_when_created(path: str, key: int | None) -> str:
    """Opens `path` as soon as it exists: by `open_shared`, adding `key`, or (`key` None) by
    `ccfilter.load`, which maps it read-only. What went wrong, or ''."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            opened = ccfilter.load(path) if key is None else ccfilter.open_shared(path)
        except FileNotFoundError:
            continue
        except Exception as error:  # noqa: BLE001 - reported to the parent
            return f"{type(error).__name__}: {error}"
        if key is None:
            return "" if opened.is_shared and opened.readonly else f"loaded as {opened!r}"
        opened.add(key)
        return "" if key in opened else "the key just added is missing"
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


def test_load_of_a_live_file_being_created_maps_it(tmp_path):
    # `ccfilter.load` opens live files too: it waits for a creator as `open_shared` does, rather
    # than read the empty or zeroed file the creator has not yet written as a damaged snapshot.
    # A large table keeps the creator a while between making the file and writing its header.
    base = "/dev/shm" if os.path.isdir("/dev/shm") else str(tmp_path)
    with CONTEXT.Pool(2) as pool:
        pool.map(abs, range(2))
        for round in range(8):
            path = os.path.join(base, f"ccfilter-load-race-{os.getpid()}-{round}.live")
            waiting = pool.starmap_async(open_when_created, [(path, None)] * 2)
            time.sleep(0.002 * (round % 3))
            created = ccfilter.create_shared(path, 20_000_000)
            try:
                assert waiting.get(60) == ["", ""], f"round {round}"
            finally:
                os.unlink(path)
            del created


def write_for_a_while(path: str, seconds: float) -> str:
    """Adds and discards its own keys in `path` for `seconds`, keeping the last round's; what
    went wrong, or ''."""
    import numpy as np

    shared = ccfilter.open_shared(path)
    deadline = time.monotonic() + seconds
    round = 0
    while time.monotonic() < deadline:
        keys = np.arange(1 << 40, (1 << 40) + 50_000, dtype=np.uint64) + round * 50_000
        shared.add_many(keys)
        if not shared.contains_many(keys).all():
            return "a key just added is missing"
        shared.discard_many(keys)
        round += 1
    shared.add_many(np.arange(1 << 41, (1 << 41) + 1_000, dtype=np.uint64))
    return ""


def test_a_loaded_live_file_follows_a_writer_process_with_no_false_negative(tmp_path):
    import numpy as np

    path = str(tmp_path / "followed.live")
    created = ccfilter.create_shared(path, 200_000)
    resident = np.arange(100_000, dtype=np.uint64)
    created.add_many(resident)
    reader = ccfilter.load(path)  # mapped read-only
    assert reader.readonly
    with CONTEXT.Pool(1) as pool:
        writing = pool.apply_async(write_for_a_while, (path, 2.0))
        rounds = 0
        while not writing.ready():
            assert reader.contains_many(resident).all(), "a lookup missed a resident key"
            assert reader.copy().contains_many(resident).all(), "a copy missed a resident key"
            rounds += 1
        assert writing.get(60) == ""
    assert rounds > 0
    kept = np.arange(1 << 41, (1 << 41) + 1_000, dtype=np.uint64)
    assert reader.contains_many(kept).all(), "the reader does not follow the file"
    assert len(reader) == len(created) == 101_000
    reader.verify()
