"""Shared helpers: key sets that cannot collide, and a false positive bound."""

from __future__ import annotations

import math

import numpy as np


def distinct_keys(count: int, start: int = 0) -> np.ndarray:
    """`count` distinct uint64 keys, spread over the whole 64-bit range."""
    # An odd multiplier is a bijection on 64-bit integers: distinct inputs, distinct keys.
    return (np.arange(start, start + count, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15))


def rate_bound(expected: float, trials: int) -> float:
    """An upper bound on a measured false positive rate: `expected` plus six standard errors
    of a binomial proportion over `trials` lookups, so a correct filter fails it about once
    in 10^9 runs."""
    return expected + 6 * math.sqrt(expected * (1 - expected) / trials) + 1 / trials
