"""Python threads sharing one filter: adds, discards and lookups at once, no false negatives."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from conftest import distinct_keys

from ccfilter import ConcurrentCuckooFilter, GrowableCuckooFilter


# How long a barrier waits for the other threads before it breaks (a worker that died first
# never arrives): a guard against a hang, far above any run's need, not a measurement.
BARRIER_TIMEOUT = 300


def run_threads(workers, main=None):
    """Runs each of `workers` on a thread of its own, all starting at once, and `main` (if
    any) on this thread while they run; re-raises here the first exception any of them
    raised, so that a failure in a worker fails the test."""
    barrier = threading.Barrier(len(workers) + 1, timeout=BARRIER_TIMEOUT)
    errors = []

    def run(work):
        try:
            barrier.wait()
            work()
        except BaseException as err:  # noqa: BLE001 - collected, re-raised below
            errors.append(err)
            barrier.abort()

    pool = [threading.Thread(target=run, args=(work,)) for work in workers]
    for thread in pool:
        thread.start()
    try:
        barrier.wait()
        while main is not None and any(thread.is_alive() for thread in pool):
            main()
    except threading.BrokenBarrierError:
        pass  # a worker failed before the start: its error is raised below
    finally:
        for thread in pool:
            thread.join()
    if errors:
        raise errors[0]


def test_a_failing_worker_fails_the_caller():
    def fails():
        assert 1 + 1 == 3, "worker assertion"

    with pytest.raises(AssertionError, match="worker assertion"):
        run_threads([fails, lambda: None])


@pytest.mark.parametrize("cls", [ConcurrentCuckooFilter, GrowableCuckooFilter])
def test_threads_adding_discarding_and_looking_up_see_no_false_negatives(cls):
    threads, per_thread, rounds = 4, 20_000, 5
    # Growable: a small first level, so that it grows while the threads work.
    f = cls(threads * per_thread) if cls is ConcurrentCuckooFilter else cls(1000)
    stable = distinct_keys(10_000, start=10**7)
    f.add_many(stable)

    def worker(index):
        mine = distinct_keys(per_thread, start=index * per_thread)
        bulk, single = mine[: per_thread // 2], mine[per_thread // 2 :: 7].tolist()
        for _ in range(rounds):
            f.add_many(bulk)  # bulk, interpreter released
            for key in single:  # one key per call
                f.add(key)
            assert f.contains_many(bulk).all(), "own bulk keys missing"
            assert all(key in f for key in single), "own single keys missing"
            assert f.contains_many(stable).all(), "stable keys missing while others write"
            assert f.discard_many(bulk) == len(bulk)
            for key in single:
                f.remove(key)

    def main():
        # The main thread keeps looking up the stable keys while the workers write.
        assert f.contains_many(stable).all(), "stable keys missing (main thread)"

    run_threads([lambda i=i: worker(i) for i in range(threads)], main)
    assert len(f) == len(stable)
    assert np.asarray(f.contains_many(stable)).all()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("call", ["contains_many", "add_many", "discard_many"])
def test_bulk_calls_let_other_python_threads_run(call, threads):
    # A Python thread notes the time as it runs while the main thread is inside one bulk call.
    # Had the call held the interpreter throughout, the thread could run only in the switch
    # interval before it (set short here); released, it runs all through the call: in most
    # tenths of it, however slow the machine's other load makes it.
    keys = distinct_keys(4_000_000)
    f = ConcurrentCuckooFilter(len(keys))
    if call != "add_many":
        f.add_many(keys)
    times = []
    stop = threading.Event()

    def note_times():
        while not stop.is_set():
            times.append(time.perf_counter())
            for _ in range(200):
                pass

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    thread = threading.Thread(target=note_times)
    thread.start()
    try:
        time.sleep(0.05)
        start = time.perf_counter()
        getattr(f, call)(keys, threads=threads)
        end = time.perf_counter()
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    assert end - start > 100 * 1e-4
    tenths = {int(10 * (t - start) / (end - start)) for t in times if start <= t < end}
    assert len(tenths) >= 8, sorted(tenths)


@pytest.mark.parametrize("threads", [1, 2])
def test_ctrl_c_stops_a_long_bulk_call(threads):
    # SIGINT sent once the call's first keys are in: `KeyboardInterrupt` comes out of the call
    # itself, between segments, with the keys before it in and the rest never tried.
    keys = np.arange(1 << 22, dtype=np.uint64)
    f = ConcurrentCuckooFilter(len(keys))

    def interrupt():
        while len(f) == 0:
            time.sleep(1e-4)
        os.kill(os.getpid(), signal.SIGINT)

    # Python's own handler, also where the process started with SIGINT ignored (a background job).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    thread = threading.Thread(target=interrupt)
    thread.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            f.add_many(keys, threads=threads)
        done = len(f)
    finally:
        thread.join()
        signal.signal(signal.SIGINT, previous)
    assert 0 < done < len(keys)
    assert np.asarray(f.contains_many(keys[:done])).all()


# Run in a child limited to a few more threads than it has (a user's limit binds only others
# than root, so a root child becomes `nobody` first): the helpers the system refuses to start
# are left out, and each call does all its work on those that started.
THREADS_REFUSED = """
import os, resource, sys
import numpy as np
from ccfilter import ConcurrentCuckooFilter
f = ConcurrentCuckooFilter(400_000)
keys = np.arange(200_000, dtype=np.uint64)
# What the calls import on first use (numpy.ma), imported while the files are still readable:
# `nobody` may not read a virtual environment in a private temporary directory.
assert f.add_many(keys[:10]) == 10 and f.discard_many(keys[:10]) == 10 and len(f) == 0
if os.getuid() == 0:
    os.setgid(65534)
    os.setuid(65534)
running = int(next(l for l in open("/proc/self/status") if l.startswith("Threads:")).split()[1])
resource.setrlimit(resource.RLIMIT_NPROC, (running + 2, running + 2))
assert f.add_many(keys, threads=64) == len(keys) and len(f) == len(keys)
assert f.contains_many(keys, threads=64).all()
assert f.discard_many(keys, threads=64) == len(keys) and len(f) == 0
print("done")
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_NPROC counts threads")
def test_threads_the_system_refuses_to_start_leave_their_work_to_the_others(tmp_path):
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    # Run elsewhere than python/, whose source package (no native module) `-c` would import.
    child = subprocess.run([sys.executable, "-c", THREADS_REFUSED], capture_output=True,
                           text=True, env=env, timeout=120, cwd=tmp_path)
    assert child.returncode == 0 and child.stdout == "done\n", child.stderr
    assert "panicked" not in child.stderr
