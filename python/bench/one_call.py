"""One bulk call on a filter holding the same keys, for counting its instructions:

    valgrind --tool=callgrind --callgrind-out-file=cg.out python bench/one_call.py str contains_many
    callgrind_annotate --inclusive=yes cg.out | grep -E 'bulk::Call<K>::(contains|add)_many '

The inclusive count of `ccfilter_native::bulk::Call<K>::<call>`, divided by the keys (by twice
the keys for `add_many`, which also fills the filter first), is the call's instructions per key.
For `str` keys, the inclusive count of `ccfilter_native::reader::Reader::read` (add it to the
grep), divided by twice the keys (both calls read them), is the reading of the keys with the
interpreter held.

`rbloom_update` is rbloom's `Bloom.update` of the same keys (a list; `str` keys with the hash
each string caches already computed, as in `bench.py`): the inclusive count of
`rbloom::Bloom::update` divided by the keys.
"""

from __future__ import annotations

import argparse

import numpy as np

from ccfilter import ConcurrentCuckooFilter


def distinct_keys(kind, n):
    """`n` distinct keys: a numpy `uint64` array, or a list of `str` made from it."""
    keys = np.arange(n, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    if kind == "str":
        return [f"user-{k}@example.com" for k in keys.tolist()]
    return keys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["uint64", "str"])
    parser.add_argument("call", choices=["add_many", "contains_many", "rbloom_update"])
    parser.add_argument("--keys", type=int, default=200_000)
    args = parser.parse_args()
    n = args.keys
    keys = distinct_keys(args.kind, n)
    if args.call == "rbloom_update":
        import rbloom

        keys = keys if args.kind == "str" else keys.tolist()
        for key in keys:
            hash(key)
        rbloom.Bloom(n, 0.002).update(keys)
        return
    f = ConcurrentCuckooFilter(n)
    f.add_many(keys)
    if args.call == "add_many":
        ConcurrentCuckooFilter(n).add_many(keys)
    else:
        f.contains_many(keys)


if __name__ == "__main__":
    main()
