"""Python threads sharing one filter: adds, discards and lookups at once, no false negatives."""

from __future__ import annotations

import sys
import threading
import time

import numpy as np
import pytest
from conftest import distinct_keys

from ccfilter import ConcurrentCuckooFilter, GrowableCuckooFilter


@pytest.mark.parametrize("cls", [ConcurrentCuckooFilter, GrowableCuckooFilter])
def test_threads_adding_discarding_and_looking_up_see_no_false_negatives(cls):
    threads, per_thread, rounds = 4, 20_000, 5
    # Growable: a small first level, so that it grows while the threads work.
    f = cls(threads * per_thread) if cls is ConcurrentCuckooFilter else cls(1000)
    stable = distinct_keys(10_000, start=10**7)
    f.add_many(stable)
    failures = []
    barrier = threading.Barrier(threads + 1)

    def worker(index):
        mine = distinct_keys(per_thread, start=index * per_thread)
        barrier.wait()
        for _ in range(rounds):
            f.add_many(mine[: per_thread // 2])  # bulk, interpreter released
            for key in mine[per_thread // 2 :: 7].tolist():  # one key per call
                f.add(key)
            if not f.contains_many(mine[: per_thread // 2]).all():
                failures.append("own bulk keys missing")
            if not all(key in f for key in mine[per_thread // 2 :: 7].tolist()):
                failures.append("own single keys missing")
            if not f.contains_many(stable).all():
                failures.append("stable keys missing while others write")
            assert f.discard_many(mine[: per_thread // 2]) == per_thread // 2
            for key in mine[per_thread // 2 :: 7].tolist():
                f.remove(key)

    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for thread in pool:
        thread.start()
    barrier.wait()
    # The main thread keeps looking up the stable keys while the workers write.
    while any(thread.is_alive() for thread in pool):
        if not f.contains_many(stable).all():
            failures.append("stable keys missing (main thread)")
    for thread in pool:
        thread.join()
    assert failures == []
    assert len(f) == len(stable)
    assert np.asarray(f.contains_many(stable)).all()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("call", ["contains_many", "add_many", "discard_many"])
def test_bulk_calls_let_other_python_threads_run(call, threads):
    # A Python thread counts while the main thread is inside one bulk call. Had the call held
    # the interpreter throughout, the count could move only in the switch interval before it
    # (set short here); released, it moves for most of the call.
    keys = distinct_keys(4_000_000)
    f = ConcurrentCuckooFilter(len(keys))
    if call != "add_many":
        f.add_many(keys)
    count = 0
    stop = threading.Event()

    def counter():
        nonlocal count
        while not stop.is_set():
            count += 1

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    thread = threading.Thread(target=counter)
    thread.start()
    try:
        # The counter's rate while this thread sleeps (which releases the interpreter).
        before, start = count, time.perf_counter()
        time.sleep(0.1)
        rate = (count - before) / (time.perf_counter() - start)
        before, start = count, time.perf_counter()
        getattr(f, call)(keys, threads=threads)
        during, seconds = count - before, time.perf_counter() - start
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    # At least a fifth of the rate over the call, which lasts far longer than the interval.
    assert seconds > 100 * 1e-4
    assert during > 0.2 * rate * seconds, (during, rate, seconds)
