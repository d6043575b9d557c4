"""Sliding windows from Python: `ExpiringCuckooFilter` against the PyPI filters that forget,
by one harness and one checker:

    python bench/window_peers.py [--window 100000] [--generations 8] [--fpr 0.001] [--windows 10]

Peers, each set up for a count window of W keys in G generations at rate ε, as the Rust
harness (`benches/src/window/`) sets up their crates.io counterparts:
- `pyprobables`' `RotatingBloomFilter`: G + 1 Bloom filters of W/G keys, the oldest dropped when
  the newest is full (a key lives G to G + 1 generations), each at 1 - (1 - ε)^(1/(G+1));
- `probabilistic_rs`' `ExpiringBloomFilter`: G + 1 levels of W/G keys at the same per-level rate,
  `rotate_levels` called once per generation of inserts (its levels are timed in seconds; the
  harness drives them by count), its database in a temporary directory as it requires.

One stream of distinct keys, `--windows` windows long, inserted one call per key (the checker
runs between generations, untimed): after each generation it probes keys of every age up to
2W and records the fraction found per age slot, and counts keys younger than W not found
(false negatives inside the window), and the age past which it finds no more than false
positives explain (its retention, to W/16). After the stream: lookups one call per key (half keys of
the window, half never inserted), bulk calls where the library has them, and the false positive
rate on keys never inserted. Keys are 8-byte integers: Python ints for `ccfilter`, their
little-endian bytes for the peers (which take `str` or `bytes`). `pyprobables` adds a key only
if `check` does not already find it, so a fresh key that is a false positive is not stored and
is lost when the filter that answered for it rotates out: its misses inside the window.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

from ccfilter import ExpiringCuckooFilter

PROBES_PER_SLOT = 64
AGE_SLOTS = 32  # slots of W/16 up to 2W


class Ours:
    name = "ccfilter ExpiringCuckooFilter"

    def __init__(self, w, g, fpr):
        self.f = ExpiringCuckooFilter(items=w, false_positive_rate=fpr, generations=g)
        self.add, self.contains = self.f.add, self.f.__contains__

    def key(self, k):
        return k

    def generation_done(self):
        pass

    def add_bulk(self, keys):
        self.f.add_many(np.asarray(keys, dtype=np.uint64))

    def contains_bulk(self, keys):
        return self.f.contains_many(np.asarray(keys, dtype=np.uint64))


class Rotating:
    name = "pyprobables RotatingBloomFilter"

    def __init__(self, w, g, fpr):
        from probables import RotatingBloomFilter

        per = 1 - (1 - fpr) ** (1 / (g + 1))
        self.f = RotatingBloomFilter(
            est_elements=-(-w // g), false_positive_rate=per, max_queue_size=g + 1
        )
        self.add, self.contains = self.f.add, self.f.check

    def key(self, k):
        return k.to_bytes(8, "little")

    def generation_done(self):
        pass  # it rotates by itself when its newest filter holds W/G keys

    add_bulk = contains_bulk = None


class ProbabilisticRs:
    name = "probabilistic_rs ExpiringBloomFilter"

    def __init__(self, w, g, fpr):
        import probabilistic_rs

        per = 1 - (1 - fpr) ** (1 / (g + 1))
        self.dir = tempfile.TemporaryDirectory()
        self.f = probabilistic_rs.ExpiringBloomFilter.create(
            os.path.join(self.dir.name, "db"), -(-w // g), per, 365 * 24 * 3600, g + 1
        )
        self.add, self.contains = self.f.insert, self.f.contains

    def key(self, k):
        return k.to_bytes(8, "little")

    def generation_done(self):
        self.f.rotate_levels()

    def add_bulk(self, keys):
        self.f.insert_bulk([self.key(k) for k in keys])

    def contains_bulk(self, keys):
        return self.f.contains_bulk([self.key(k) for k in keys])


def stream_keys(n, seed):
    """n distinct 63-bit keys, in random order."""
    rng = np.random.default_rng(seed)
    keys = np.unique(rng.integers(1, 2**63, size=n + n // 8, dtype=np.int64))[:n]
    rng.shuffle(keys)
    assert len(keys) == n
    return [int(k) for k in keys]


def retention(curve, fpr):
    """The end of the oldest age slot, in windows, where more keys were found than false
    positives explain (over 1%, at least ten times ε): how long the filter keeps a key."""
    kept = [slot for slot, x in enumerate(curve) if x > max(0.01, 10 * fpr)]
    return (max(kept) + 1) / 16 if kept else 0.0


def run(kind, args):
    w, g = args.window, args.generations
    gen = -(-w // g)
    keys = stream_keys(args.windows * w + 2 * w, seed=7)
    stream, absent = keys[: args.windows * w], keys[args.windows * w :]
    f = kind(w, g, args.fpr)
    found = np.zeros(AGE_SLOTS)
    probed = np.zeros(AGE_SLOTS)
    misses_in_window = 0
    insert_time = 0.0
    for start in range(0, len(stream), gen):
        part = [f.key(k) for k in stream[start : start + gen]]
        t0 = time.perf_counter()
        for k in part:
            f.add(k)
        f.generation_done()
        insert_time += time.perf_counter() - t0
        end = start + len(part)  # keys inserted so far; the newest has age 0
        if end < 2 * w:
            continue
        for slot in range(AGE_SLOTS):
            lo = slot * w // 16
            for i in range(PROBES_PER_SLOT):
                age = lo + (i * w // 16) // PROBES_PER_SLOT
                hit = f.contains(f.key(stream[end - 1 - age]))
                found[slot] += hit
                probed[slot] += 1
                if not hit and age < w:
                    misses_in_window += 1
    members = stream[-w // 2 :]
    probes = [f.key(k) for k in members + absent[: w // 2]]
    t0 = time.perf_counter()
    for k in probes:
        f.contains(k)
    lookup_rate = len(probes) / (time.perf_counter() - t0) / 1e6
    false_positives = sum(f.contains(f.key(k)) for k in absent)
    bulk = {}
    if kind.contains_bulk is not None:
        raw = members + absent[: w // 2]
        t0 = time.perf_counter()
        answers = f.contains_bulk(raw)
        bulk["contains"] = len(raw) / (time.perf_counter() - t0) / 1e6
        assert all(answers[: len(members)]), f"{kind.name}: a bulk lookup missed a window key"
        fresh = stream_keys(w, seed=11)
        t0 = time.perf_counter()
        f.add_bulk(fresh)
        bulk["add"] = len(fresh) / (time.perf_counter() - t0) / 1e6
    return {
        "name": kind.name,
        "add": len(stream) / insert_time / 1e6,
        "contains": lookup_rate,
        "bulk": bulk,
        "misses_in_window": misses_in_window,
        "probed_in_window": int(probed[:16].sum()),
        "retention": retention(found / np.maximum(probed, 1), args.fpr),
        "fpr": false_positives / len(absent),
        "curve": found / np.maximum(probed, 1),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=int, default=100_000)
    parser.add_argument("--generations", type=int, default=8)
    parser.add_argument("--fpr", type=float, default=0.001)
    parser.add_argument("--windows", type=int, default=10)
    args = parser.parse_args()
    print(
        f"window {args.window} keys, G = {args.generations}, ε = {args.fpr}, "
        f"{args.windows} windows of one-call inserts; M operations/s"
    )
    print(
        f"{'filter':38} {'add':>7} {'contains':>9} {'add_many':>9} {'contains_many':>14} "
        f"{'missed < W':>11} {'kept up to':>11} {'FPR':>8}"
    )
    results = [run(kind, args) for kind in (Ours, Rotating, ProbabilisticRs)]
    for r in results:
        b = r["bulk"]
        print(
            f"{r['name']:38} {r['add']:7.3f} {r['contains']:9.3f} "
            f"{b.get('add', float('nan')):9.3f} {b.get('contains', float('nan')):14.3f} "
            f"{r['misses_in_window']:>5}/{r['probed_in_window']:<5} "
            f"{r['retention']:9.4f} W {r['fpr']:8.4%}"
        )
    print("fraction found by age (slots of W/16, the first 32):")
    for r in results:
        print(f"  {r['name']:38} " + " ".join(f"{x:.2f}" for x in r["curve"]))
    ours = results[0]
    for r in results[1:]:
        print(
            f"ours / {r['name']}: add {ours['add'] / r['add']:.2f}x, "
            f"contains {ours['contains'] / r['contains']:.2f}x"
        )


if __name__ == "__main__":
    main()
