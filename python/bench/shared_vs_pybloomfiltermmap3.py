"""Processes sharing one filter file: ccfilter's live file against pybloomfiltermmap3's mmap'd
Bloom filter, used the same way (each process opens the file and adds or looks up its keys).

    pip install pybloomfiltermmap3==0.6.3
    python bench/shared_vs_pybloomfiltermmap3.py [--keys 2000000] [--processes 2,4]
                                                 [--dir /dev/shm] [--rate 0.001]

For each process count and each way of calling (one key a call: `add`/`in` in a Python loop;
bulk: ccfilter's `add_many`/`contains_many` of a numpy array, pybloomfiltermmap3's `update` of
a list and `in` in a loop, which has no bulk lookup), a fresh file of each is filled by the
processes at once with `--keys` keys in all (disjoint ranges), then each process looks up its
own keys. Rates are keys per second over the span from the first process's start (after a
barrier) to the last one's end. Both are sized for `--keys` keys at the same bits per item
(the table's; the file's in brackets, with its header and, for ccfilter, its lock records): ccfilter's for
`--rate`, pybloomfiltermmap3 given the rate a Bloom filter of those bits has. The same
checker, in the parent after the writers are done, looks up every key each writer's `add` had
returned for (lost inserts: false negatives) and a million keys never added (false positive
rate).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import time

import numpy as np

import ccfilter

ABSENT = 1_000_000
BARRIER = None


def init(barrier):
    global BARRIER
    BARRIER = barrier


def keys_of(worker: int, processes: int, total: int) -> np.ndarray:
    per = total // processes
    return np.arange(worker * per, (worker + 1) * per, dtype=np.uint64) + np.uint64(1 << 40)


def open_filter(side: str, path: str):
    if side == "ccfilter":
        return ccfilter.open_shared(path)
    import pybloomfilter

    return pybloomfilter.BloomFilter.open(path, "rw")


def work(args):
    """In a pool worker: opens the file, waits for the others, then adds (or looks up) its
    keys; (start, end, answers found) with `perf_counter` times, comparable across processes."""
    side, path, phase, bulk, worker, processes, total = args
    f = open_filter(side, path)
    keys = keys_of(worker, processes, total)
    as_list = keys.tolist()
    BARRIER.wait()
    start = time.perf_counter()
    found = 0
    if phase == "add":
        if bulk and side == "ccfilter":
            f.add_many(keys)
        elif bulk:
            f.update(as_list)
        else:
            add = f.add
            for key in as_list:
                add(key)
    elif bulk and side == "ccfilter":
        found = int(f.contains_many(keys).sum())
    else:
        found = sum(1 for key in as_list if key in f)
    end = time.perf_counter()
    if side != "ccfilter":
        f.close()
    return start, end, found


def create(side: str, path: str, keys: int, rate: float) -> float:
    """A new file of `side` for `keys` keys; its bits per key."""
    if side == "ccfilter":
        f = ccfilter.create_shared(path, keys, rate)
        return f.stats()["memory_bytes"] * 8 / keys
    import pybloomfilter

    bits = ccfilter_bits(keys, rate)
    bloom_rate = math.exp(-bits * math.log(2) ** 2)
    f = pybloomfilter.BloomFilter(keys, bloom_rate, path)
    per_key = f.num_bits / keys
    f.close()
    return per_key


def ccfilter_bits(keys: int, rate: float) -> float:
    return ccfilter.ConcurrentCuckooFilter(keys, rate).stats()["memory_bytes"] * 8 / keys


def check(side: str, path: str, processes: int, total: int) -> tuple[int, float]:
    """Lost inserts (acknowledged keys not found) and the measured false positive rate."""
    f = open_filter(side, path)
    lost = 0
    for worker in range(processes):
        lost += sum(1 for key in keys_of(worker, processes, total).tolist() if key not in f)
    absent = (np.arange(ABSENT, dtype=np.uint64) + np.uint64(1 << 50)).tolist()
    false_positives = sum(1 for key in absent if key in f)
    return lost, false_positives / ABSENT


def run(pool, side, path, phase, bulk, processes, total):
    spans = pool.map(work, [(side, path, phase, bulk, w, processes, total) for w in range(processes)])
    start = min(s for s, _, _ in spans)
    end = max(e for _, e, _ in spans)
    return total / (end - start) / 1e6, sum(found for _, _, found in spans)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, default=2_000_000)
    parser.add_argument("--processes", default="2,4")
    parser.add_argument("--dir", default="/dev/shm")
    parser.add_argument("--rate", type=float, default=0.001)
    args = parser.parse_args()
    context = multiprocessing.get_context("spawn")
    print(
        "| processes | calls | side | bits/key (file) | adds M/s | lookups M/s | lost inserts "
        "| false positive rate |"
    )
    print("| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for processes in [int(p) for p in args.processes.split(",")]:
        barrier = context.Barrier(processes)
        with context.Pool(processes, initializer=init, initargs=(barrier,)) as pool:
            for bulk in [False, True]:
                for side in ["ccfilter", "pybloomfiltermmap3"]:
                    path = os.path.join(args.dir, f"shared-bench-{os.getpid()}-{side}")
                    if os.path.exists(path):
                        os.unlink(path)
                    try:
                        bits = create(side, path, args.keys, args.rate)
                        file_bits = os.path.getsize(path) * 8 / args.keys
                        adds, _ = run(pool, side, path, "add", bulk, processes, args.keys)
                        lookups, _ = run(pool, side, path, "contains", bulk, processes, args.keys)
                        lost, rate = check(side, path, processes, args.keys)
                    finally:
                        if os.path.exists(path):
                            os.unlink(path)
                    calls = "bulk" if bulk else "one key a call"
                    print(
                        f"| {processes} | {calls} | {side} | {bits:.1f} ({file_bits:.1f}) | {adds:.2f} "
                        f"| {lookups:.2f} | {lost} | {rate * 100:.3f}% |",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
