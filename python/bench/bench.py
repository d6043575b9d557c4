"""ccfilter against rbloom and pyprobables: every ratio is measured in this one run.

    pip install rbloom==1.5.4 pyprobables==0.7.0
    python bench/bench.py [--keys 10000000] [--rounds 3] [--threads 2]

Each comparison times the two sides alternately, `--rounds` times each, and reports the
medians. Throughput is in million keys per second; the ratio is ccfilter's over the other's.
The bulk calls run on one thread (their default), and again with `threads=--threads`.
pyprobables' CuckooFilter is pure Python: it is timed on `--slow-keys` keys and its rate scaled.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time

import numpy as np

from ccfilter import ConcurrentCuckooFilter

# rbloom is built for this false positive rate; ccfilter takes its default, 12-bit fingerprints in
# 4-slot buckets, whose rate at capacity is about 0.19%.
RATE = 0.002


def median_seconds(rounds, *sides):
    """Times each side once per round, alternating; each side's median seconds."""
    times = [[] for _ in sides]
    for _ in range(rounds):
        for side, out in zip(sides, times):
            setup = side.get("setup", lambda: None)()
            start = time.perf_counter()
            side["run"](setup)
            out.append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


def cpu_per_second(run):
    cpu, wall = time.process_time(), time.perf_counter()
    run()
    return (time.process_time() - cpu) / (time.perf_counter() - wall)


def distinct_keys(count, start=0):
    return np.arange(start, start + count, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)


class Table:
    def __init__(self):
        self.rows = []

    def add(self, what, ours, other_name, theirs, target):
        ratio = ours / theirs
        self.rows.append((what, ours, other_name, theirs, ratio, target))
        print(f"  {what}: {ours:.2f} vs {theirs:.2f} M/s = {ratio:.1f}x (target {target})",
              file=sys.stderr, flush=True)

    def print(self):
        print("| measure | ccfilter (M keys/s) | other | other (M keys/s) | ratio | target |")
        print("| --- | ---: | --- | ---: | ---: | --- |")
        for what, ours, name, theirs, ratio, target in self.rows:
            print(f"| {what} | {ours:.2f} | {name} | {theirs:.3f} | {ratio:.1f}x | {target} |")


def bench_kind(label, keys, keys_list, others_list, n, args, table, notes):
    import rbloom
    from probables import CuckooFilter

    rounds = args.rounds
    f = ConcurrentCuckooFilter(n)
    f.add_many(keys)
    bloom = rbloom.Bloom(n, RATE)
    bloom.update(keys_list)
    mk = n / 1e6

    # Bulk inserts into fresh filters.
    ours, theirs = median_seconds(
        rounds,
        {"setup": lambda: ConcurrentCuckooFilter(n), "run": lambda g: g.add_many(keys)},
        {"setup": lambda: rbloom.Bloom(n, RATE), "run": lambda b: b.update(keys_list)},
    )
    table.add(f"{label}: add_many vs Bloom.update", mk / ours, "rbloom", mk / theirs, "≥ 3x")
    add_many = ours
    if label == "str":
        # rbloom hashes with Python's `hash()`, which a `str` caches in itself: after the
        # warm-up above, its update of the same objects reads that cache. Keys read from a file
        # or a socket are new objects with no hash yet; so are these, made afresh before each
        # timed call (untimed) for both sides alike.
        def fresh():
            return [(k + " ")[:-1] for k in keys_list]

        ours, theirs = median_seconds(
            rounds,
            {"setup": lambda: (ConcurrentCuckooFilter(n), fresh()),
             "run": lambda s: s[0].add_many(s[1])},
            {"setup": lambda: (rbloom.Bloom(n, RATE), fresh()), "run": lambda s: s[0].update(s[1])},
        )
        table.add(f"{label}: add_many vs Bloom.update, new str objects (no hash cached)",
                  mk / ours, "rbloom", mk / theirs, "≥ 3x")
    t = args.threads
    ours, theirs = median_seconds(
        rounds,
        {"setup": lambda: ConcurrentCuckooFilter(n), "run": lambda g: g.add_many(keys, threads=t)},
        {"setup": lambda: rbloom.Bloom(n, RATE), "run": lambda b: b.update(keys_list)},
    )
    table.add(f"{label}: add_many(threads={t}) vs Bloom.update", mk / ours, "rbloom", mk / theirs,
              "≥ 3x")

    # Bulk lookups against the fastest way to ask rbloom: map over a list.
    ours, theirs = median_seconds(
        rounds,
        {"run": lambda _: f.contains_many(keys)},
        {"run": lambda _: list(map(bloom.__contains__, keys_list))},
    )
    table.add(f"{label}: contains_many vs map(b.__contains__)", mk / ours, "rbloom",
              mk / theirs, "≥ 5x")
    bulk = ours

    # One key per call, the same loop on both sides.
    ours, theirs = median_seconds(
        rounds,
        {"run": lambda _: [k in f for k in keys_list]},
        {"run": lambda _: [k in bloom for k in keys_list]},
    )
    table.add(f"{label}: `k in f` loop vs `k in b` loop", mk / ours, "rbloom", mk / theirs,
              "≥ 1.0x")
    table.add(f"{label}: contains_many vs `k in f` loop", mk / bulk, "ccfilter loop", mk / ours,
              "≥ 20x")
    bulk_threads, loop = median_seconds(
        rounds,
        {"run": lambda _: f.contains_many(keys, threads=t)},
        {"run": lambda _: [k in f for k in keys_list]},
    )
    table.add(f"{label}: contains_many(threads={t}) vs `k in f` loop", mk / bulk_threads,
              "ccfilter loop", mk / loop, "≥ 20x")

    # pyprobables, pure Python: a smaller set, its rate scaled.
    m = min(args.slow_keys, n)
    slow = [str(k) if not isinstance(k, str) else k for k in keys_list[:m]]
    # Its default 32-bit fingerprints: `init_error_rate` gave a false positive rate above 90%
    # with pyprobables 0.7.0.
    pp = CuckooFilter(capacity=m)
    start = time.perf_counter()
    for k in slow:
        pp.add(k)
    pp_add = m / (time.perf_counter() - start) / 1e6
    start = time.perf_counter()
    for k in slow:
        pp.check(k)
    pp_check = m / (time.perf_counter() - start) / 1e6
    table.add(f"{label}: contains_many vs CuckooFilter.check loop ({m:,} keys)", mk / bulk,
              "pyprobables", pp_check, "—")
    table.add(f"{label}: add_many vs CuckooFilter.add loop ({m:,} keys)", mk / add_many,
              "pyprobables", pp_add, "—")

    # Two Python threads on one filter, against one thread doing both halves.
    halves = [keys[: n // 2], keys[n // 2 :]]

    def two_threads(_):
        pool = [threading.Thread(target=f.contains_many, args=(h,)) for h in halves]
        for t in pool:
            t.start()
        for t in pool:
            t.join()

    one, two = median_seconds(
        rounds, {"run": lambda _: [f.contains_many(h) for h in halves]}, {"run": two_threads}
    )
    table.add(f"{label}: contains_many, 2 threads vs 1", mk / two, "1 thread", mk / one,
              "≥ 1.7x")
    # CPU seconds per wall second: near 2 when both threads had a core at once, near 1 when
    # the machine (or a lock) let only one run.
    cpu, wall = time.process_time(), time.perf_counter()
    two_threads(None)
    notes.append(
        f"{label}: two threads in contains_many used "
        f"{(time.process_time() - cpu) / (time.perf_counter() - wall):.2f} CPU seconds per "
        f"second (one thread alone: {cpu_per_second(lambda: [f.contains_many(h) for h in halves]):.2f})"
    )

    # False positive rates, measured.
    fp_ours = f.contains_many(others_list).mean()
    fp_bloom = sum(map(bloom.__contains__, others_list)) / len(others_list)
    fp_pp = sum(pp.check(str(k)) for k in others_list[:m]) / m
    notes.append(
        f"{label}: false positive rate measured on {len(others_list):,} absent keys: ccfilter "
        f"{fp_ours:.4%} (expected at capacity {f.expected_false_positive_rate:.3%}), rbloom "
        f"{fp_bloom:.4%} (built for {RATE:.1%}), pyprobables {fp_pp:.4%} (on {m:,}, "
        f"32-bit fingerprints)"
    )
    return f, bloom


def memory_note(label, keys_list, f, bloom):
    """The filters' memory against a Python set of the same keys. A set holds its keys: its
    memory is its table and the key objects it keeps alive (the target's measure); the table
    alone is given too."""
    n = len(keys_list)
    table_bytes = sys.getsizeof(set(keys_list))
    with_objects = table_bytes + sum(map(sys.getsizeof, keys_list))
    return (
        f"memory at {n:,} {label} keys: ccfilter {f.memory_usage / 2**20:.1f} MiB "
        f"({f.memory_usage * 8 / n:.1f} bits/key, expected rate "
        f"{f.expected_false_positive_rate:.3%}); rbloom {bloom.size_in_bits / 8 / 2**20:.1f} MiB; "
        f"a Python set of the keys {with_objects / 2**20:.0f} MiB (its table "
        f"{table_bytes / 2**20:.0f} MiB and the key objects): ccfilter takes "
        f"1/{with_objects / f.memory_usage:.0f} of it, 1/{table_bytes / f.memory_usage:.0f} of the "
        f"table alone (target ≤ 1/20 of the set with its keys)"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--slow-keys", type=int, default=200_000)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    n = args.keys
    table, notes = Table(), []
    start_load = os.getloadavg()[0]

    print(f"uint64 keys ({n:,})", file=sys.stderr)
    keys = distinct_keys(n)
    keys_list = keys.tolist()
    others = distinct_keys(1_000_000, start=n)
    f, bloom = bench_kind("uint64", keys, keys_list, others.tolist(), n, args, table, notes)
    notes.append(memory_note("uint64", keys_list, f, bloom))
    del f, bloom

    print(f"str keys ({n:,})", file=sys.stderr)
    words = [f"user-{k}@example.com" for k in keys_list]
    del keys_list
    other_words = [f"other-{i}@example.com" for i in range(1_000_000)]
    f, bloom = bench_kind("str", words, words, other_words, n, args, table, notes)
    notes.append(memory_note("str", words, f, bloom))

    print(f"`python bench/bench.py {' '.join(sys.argv[1:])}`".replace(" `", "`"))
    print()
    table.print()
    print()
    print(f"- load average (1 min) at the start and the end: {start_load:.1f}, "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print()
    for note in notes:
        print(f"- {note}")


if __name__ == "__main__":
    main()
