"""Two Python threads calling `contains_many` on one filter against one thread doing both halves,
alternating, with the medians of the rounds:

    python bench/two_threads.py [--kind uint64|str] [--keys 10000000] [--rounds 7]

Also prints each side's CPU seconds per wall second: near 2 when both threads ran at once, near 1
when only one could (a lock, the interpreter, or a machine busy elsewhere).
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time

from ccfilter import ConcurrentCuckooFilter
from one_call import distinct_keys


def timed(run):
    """Wall seconds and CPU seconds per wall second of one run."""
    cpu, wall = time.process_time(), time.perf_counter()
    run()
    seconds = time.perf_counter() - wall
    return seconds, (time.process_time() - cpu) / seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=["uint64", "str"], default="uint64")
    parser.add_argument("--keys", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    n = args.keys
    keys = distinct_keys(args.kind, n)
    f = ConcurrentCuckooFilter(n)
    f.add_many(keys)
    halves = [keys[: n // 2], keys[n // 2 :]]

    def one():
        for half in halves:
            f.contains_many(half)

    def two():
        pool = [threading.Thread(target=f.contains_many, args=(h,)) for h in halves]
        for t in pool:
            t.start()
        for t in pool:
            t.join()

    times = {"one": [], "two": []}
    cpu = {"one": [], "two": []}
    for _ in range(args.rounds):
        for name, run in (("one", one), ("two", two)):
            seconds, per_second = timed(run)
            times[name].append(seconds)
            cpu[name].append(per_second)
    ratios = [a / b for a, b in zip(times["one"], times["two"])]
    one_s, two_s = statistics.median(times["one"]), statistics.median(times["two"])
    print(
        f"{args.kind}, {n:,} keys: one thread {n / one_s / 1e6:.1f} M/s, two threads "
        f"{n / two_s / 1e6:.1f} M/s: {one_s / two_s:.2f}x (median of {args.rounds}; per round "
        f"{min(ratios):.2f}x to {max(ratios):.2f}x); CPU s/s one {statistics.median(cpu['one']):.2f}, "
        f"two {statistics.median(cpu['two']):.2f}"
    )


if __name__ == "__main__":
    main()
