"""`contains_many` on an `ExpiringCuckooFilter` holding a full window against the plain class
holding as many keys at the same false positive rate, in turns, with the medians of the rounds:

    python bench/expiring_contains.py [--kind uint64|str] [--window 2000000] [--rounds 7]

Half the probes are keys of the window, half were never inserted.
"""

from __future__ import annotations

import argparse
import statistics
import time

from ccfilter import ConcurrentCuckooFilter, ExpiringCuckooFilter
from one_call import distinct_keys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=["uint64", "str"], default="uint64")
    parser.add_argument("--window", type=int, default=2_000_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--fpr", type=float, default=0.001)
    args = parser.parse_args()
    w = args.window
    keys = distinct_keys(args.kind, 3 * w)
    expiring = ExpiringCuckooFilter(items=w, false_positive_rate=args.fpr)
    expiring.add_many(keys[: 2 * w])  # the window now holds the last w keys
    plain = ConcurrentCuckooFilter(w, false_positive_rate=args.fpr)
    plain.add_many(keys[w : 2 * w])
    probes = keys[w + w // 2 : 2 * w] + keys[2 * w : 2 * w + w // 2]
    assert all(expiring.contains_many(keys[w : 2 * w])), "a key of the window was not found"
    rates = {"expiring": [], "plain": []}
    for _ in range(args.rounds):
        for name, f in (("expiring", expiring), ("plain", plain)):
            start = time.perf_counter()
            f.contains_many(probes)
            rates[name].append(len(probes) / (time.perf_counter() - start) / 1e6)
    exp, pl = statistics.median(rates["expiring"]), statistics.median(rates["plain"])
    print(
        f"{args.kind} keys, window {w}, ε {args.fpr}: contains_many, M keys/s (median of "
        f"{args.rounds}): expiring {exp:.2f}, plain {pl:.2f}, ratio {exp / pl:.2f}"
    )


if __name__ == "__main__":
    main()
