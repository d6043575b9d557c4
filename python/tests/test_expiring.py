"""ExpiringCuckooFilter: found for the whole window, forgotten within W·(1 + 1/G), a manual
clock, persistence, bulk calls that agree with single ones, and every bad argument named."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import distinct_keys, rate_bound
from hypothesis import given, settings
from hypothesis import strategies as st

import ccfilter
from ccfilter import ExpiringCuckooFilter, FilterFullError

EPSILON = 0.001


def forgotten_bound(filter: ExpiringCuckooFilter, trials: int) -> float:
    """The most a forgotten key may still be found: the filter's false positive rate."""
    return rate_bound(filter.stats()["expected_false_positive_rate"], trials)


@pytest.mark.parametrize("generations", [1, 4, 8, 14])
def test_a_count_window_finds_the_last_w_keys_and_forgets_after_w_times_1_plus_1_over_g(
    generations,
):
    window, step = 1000, 100
    f = ExpiringCuckooFilter(items=window, generations=generations)
    per_generation = -(-window // generations)
    retention = (generations + 1) * per_generation  # W·(1 + 1/G) when G divides W
    keys = distinct_keys(30 * window)
    found_old, old = 0, 0
    for end in range(step, len(keys) + 1, step):
        assert f.add_many(keys[end - step : end]) == step
        # Every key of the last W adds is found: no false negatives inside the window.
        assert f.contains_many(keys[max(0, end - window) : end]).all(), end
        # Key p is forgotten once end - 1 - p >= (G + 1)·L.
        forgotten = keys[max(0, end - 3 * window) : max(0, end - retention)]
        found_old += int(f.contains_many(forgotten).sum())
        old += len(forgotten)
    assert old > 0
    assert found_old / old <= forgotten_bound(f, old), (found_old, old)
    stats = f.stats()
    assert stats["inserts"] == len(keys) and stats["early_expiries"] == 0
    assert f.generations == generations and f.window == {"items": window}


def test_add_unique_says_whether_the_key_was_seen_in_the_window_and_refreshes_it():
    f = ExpiringCuckooFilter(items=800, false_positive_rate=1e-6)
    assert f.add_unique("event") and not f.add_unique("event")
    strangers = distinct_keys(5000, start=1 << 40)
    for chunk in range(8):
        # "event" seen again every 500 adds: refreshed, so never forgotten.
        f.add_many(strangers[chunk * 500 : (chunk + 1) * 500])
        assert not f.add_unique("event"), chunk
    f.add_many(distinct_keys(1000, start=1 << 41))
    assert "event" not in f  # forgotten 900 adds on (but for a 1e-6 false positive rate)
    assert f.add_unique("never-added-before")


@given(
    ops=st.lists(
        st.tuples(st.sampled_from(["add", "add_unique", "discard"]), st.integers(0, 40)),
        max_size=400,
    ),
    window=st.integers(1, 60),
    generations=st.integers(1, 14),
)
@settings(max_examples=60, deadline=None)
def test_no_false_negatives_inside_the_window_against_an_exact_model(ops, window, generations):
    f = ExpiringCuckooFilter(items=window, generations=generations, false_positive_rate=1e-6)
    last_add = {}  # key -> position of its last add
    position = 0
    for op, key in ops:
        if op == "discard":
            if key in last_add and position - last_add[key] <= window:
                f.discard(key)
                del last_add[key]
            continue
        seen = getattr(f, op)(key)
        if op == "add_unique" and key in last_add and position - last_add[key] < window:
            assert seen is False, (key, position, last_add[key])
        last_add[key] = position
        position += 1
        for live, at in last_add.items():
            if position - at <= window:
                assert live in f, (live, at, position)


def test_a_manual_clock_forgets_after_the_window_and_its_slack():
    seconds, generations = 10.0, 8
    f = ExpiringCuckooFilter(seconds=seconds, capacity=20_000, clock="manual")
    keys = distinct_keys(10_000)
    f.add_many(keys)
    for t in (0.0, 5.0, seconds - 0.001):
        f.advance_to(t)
        assert f.contains_many(keys).all(), t
    f.advance_to(seconds * (1 + 1 / generations))
    found = int(f.contains_many(keys).sum())
    assert found <= forgotten_bound(f, len(keys)) * len(keys), found
    f.advance_to(1.0)  # never back
    assert f.stats()["generation"] >= generations + 1
    assert f.window == {"seconds": seconds}


def test_a_manual_clock_forgets_up_to_the_end_of_its_range_and_refuses_a_time_past_it():
    # The clock counts nanoseconds in 64 bits: it ends at 2**64 - 1 ns (about 584 years).
    seconds, generations = 10.0, 8
    f = ExpiringCuckooFilter(seconds=seconds, capacity=1000, clock="manual")
    keys = distinct_keys(500)
    late = 18_000_000_000.0  # in range: keys added there are forgotten a window later
    f.advance_to(late)
    f.add_many(keys)
    f.advance_to(late + seconds * (1 + 1 / generations))
    assert int(f.contains_many(keys).sum()) <= forgotten_bound(f, len(keys)) * len(keys)
    f.add_many(keys)
    for past in (18_446_744_073.71, 18_500_000_000.0, 1e19, 1.8e19):
        with pytest.raises(ValueError, match=r"seconds must be at most 2\^64 - 1 nanoseconds .*, got 1"):
            f.advance_to(past)
    # Refused, the clock stayed: the keys are in their window, and later forgotten.
    assert f.contains_many(keys).all()
    f.advance_to(late + 2 * seconds * (1 + 1 / generations))
    assert int(f.contains_many(keys).sum()) <= forgotten_bound(f, len(keys)) * len(keys)


def test_the_monotonic_clock_forgets_in_real_time():
    f = ExpiringCuckooFilter(seconds=1.0, capacity=1000)
    keys = distinct_keys(500)
    f.add_many(keys)
    time.sleep(1.0 * (1 + 1 / 8) + 0.2)
    assert int(f.contains_many(keys).sum()) <= forgotten_bound(f, len(keys)) * len(keys)
    with pytest.raises(ValueError, match="advance_to needs"):
        f.advance_to(5)


def test_a_time_window_past_its_capacity_raises_or_expires_early_as_chosen():
    keys = distinct_keys(5000)
    full = ExpiringCuckooFilter(seconds=60, capacity=100, clock="manual")
    with pytest.raises(FilterFullError) as raised:
        full.add_many(keys)
    inserted = raised.value.inserted
    assert 100 <= inserted < len(keys)
    assert full.contains_many(keys[:inserted]).all()  # what went in stays
    early = ExpiringCuckooFilter(
        seconds=60, capacity=100, clock="manual", overflow="expire_early"
    )
    assert early.add_many(keys[:1000]) == 1000
    # One at a time, noting where the last early expiry came: every key added since is found.
    last_expiry = 0
    for i, key in enumerate(keys[1000:], start=1000):
        before = early.stats()["early_expiries"]
        early.add(int(key))
        if early.stats()["early_expiries"] > before:
            last_expiry = i
    assert last_expiry > 1000, "5000 keys into room for about 100 expire early"
    assert early.contains_many(keys[last_expiry:]).all()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"items": 1000, "generations": 4},
        {"seconds": 30, "capacity": 1000, "clock": "manual", "overflow": "expire_early"},
    ],
)
def test_pickling_bytes_and_files_round_trip_the_window_and_its_clock(kwargs, tmp_path):
    f = ExpiringCuckooFilter(**kwargs, seed=7)
    keys = distinct_keys(3000)
    f.add_many(keys[:1500])
    if "seconds" in kwargs:
        f.advance_to(12.5)
    for copy in (
        pickle.loads(pickle.dumps(f)),
        pickle.loads(pickle.dumps(f, protocol=5)),
        ExpiringCuckooFilter.from_bytes(f.to_bytes()),
        f.copy(),
    ):
        assert copy == f and repr(copy) == repr(f)
        # All but the count of early expiries, which is the process's and not in the bytes.
        assert {**copy.stats(), "early_expiries": 0} == {**f.stats(), "early_expiries": 0}
        # The same state: the same bytes after the same adds and clock.
        reference = f.copy()
        for g in (reference, copy):
            g.add_many(keys[1500:])
            if "seconds" in kwargs:
                g.advance_to(40)
        assert copy == reference
    path = tmp_path / "window.ccf"
    f.save(path)
    loaded = ccfilter.load(path)
    assert type(loaded) is ExpiringCuckooFilter and loaded == f
    assert ExpiringCuckooFilter.load(path) == f


def test_a_monotonic_clock_survives_pickling():
    f = ExpiringCuckooFilter(seconds=300, capacity=1000)
    f.add("kept")
    g = pickle.loads(pickle.dumps(f))
    assert "kept" in g and g.window == {"seconds": 300.0}


def test_a_monotonic_clock_is_in_the_bytes_so_a_copy_compares_unequal():
    f = ExpiringCuckooFilter(seconds=300, capacity=1000)
    f.add("kept")
    copy = f.copy()
    assert f == f and copy != f and "kept" in copy  # its clock was read a moment later


def test_copies_go_on_alike():
    f = ExpiringCuckooFilter(items=500, seed=3)
    keys = distinct_keys(2000)
    f.add_many(keys[:700])
    a, b = f.copy(), pickle.loads(pickle.dumps(f))
    a.add_many(keys[700:])
    b.add_many(keys[700:])
    assert a == b and a.contains_many(keys).tolist() == b.contains_many(keys).tolist()


def test_bulk_calls_equal_single_calls():
    keys = distinct_keys(4000)
    probe = np.concatenate([keys, distinct_keys(4000, start=1 << 50)])
    one, bulk = ExpiringCuckooFilter(items=1500), ExpiringCuckooFilter(items=1500)
    for key in keys.tolist():
        one.add(key)
    assert bulk.add_many(keys) == len(keys)
    assert one == bulk  # the same table, byte for byte
    answers = bulk.contains_many(probe)
    assert answers.tolist() == [int(key) in bulk for key in probe]
    assert bulk.contains_many(probe, threads=4).tolist() == answers.tolist()
    assert bulk.discard_many(keys[-100:]) == sum(one.discard(int(k)) for k in keys[-100:])
    assert one == bulk


def test_adds_on_several_threads_are_all_found_inside_the_window():
    f = ExpiringCuckooFilter(items=200_000)
    keys = distinct_keys(150_000)
    assert f.add_many(keys, threads=4) == len(keys)
    assert f.contains_many(keys, threads=4).all()
    assert f.stats()["inserts"] == len(keys)


def test_discard_remove_contains_len_and_count():
    f = ExpiringCuckooFilter(items=100)
    f.add("a")
    f.add("a")  # refreshed, not a second copy
    assert len(f) == 1 and f.count("a") == 1 and "a" in f
    assert f.discard("a") and "a" not in f and len(f) == 0
    with pytest.raises(KeyError):
        f.remove("a")
    f.add(b"b")
    f.remove("b")  # str and bytes are one key
    assert not f.discard("b")


def test_merging_is_not_offered():
    f = ExpiringCuckooFilter(items=100)
    for name in ("merge", "is_compatible", "__ior__", "__or__"):
        assert not hasattr(f, name), name


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({}, TypeError, "exactly one window"),
        ({"items": 10, "seconds": 5}, TypeError, "exactly one window"),
        ({"items": 10, "capacity": 5}, TypeError, "capacity is for a time window"),
        ({"items": 10, "overflow": "error"}, TypeError, "overflow is for a time window"),
        ({"items": 10, "clock": "manual"}, TypeError, "clock is for a time window"),
        ({"seconds": 5}, TypeError, "needs capacity="),
        ({"items": 0}, ValueError, "items must be at least 1"),
        ({"items": -3}, ValueError, "items must be at least 1"),
        ({"items": 2.5}, TypeError, "items must be an int"),
        ({"items": "10"}, TypeError, "items must be an int"),
        ({"seconds": -1, "capacity": 10}, ValueError, "seconds must be a finite number"),
        ({"seconds": 0, "capacity": 10}, ValueError, "seconds must be a finite number"),
        ({"seconds": float("nan"), "capacity": 10}, ValueError, "seconds must be a finite"),
        ({"seconds": float("inf"), "capacity": 10}, ValueError, "seconds must be a finite"),
        ({"seconds": "5", "capacity": 10}, TypeError, "seconds must be a number of seconds"),
        # An int too large for a float is a number out of range, not of the wrong type.
        ({"seconds": 10**400, "capacity": 10}, ValueError, r"seconds must be a finite number .* got 1000"),
        ({"seconds": -(10**400), "capacity": 10}, ValueError, r"seconds must be a finite number .* got -1000"),
        ({"seconds": 5, "capacity": 0}, ValueError, "capacity must be at least 1"),
        ({"seconds": 1e-12, "capacity": 10}, ValueError, "seconds must be a finite number of seconds, at least one nanosecond"),
        ({"seconds": 1e20, "capacity": 10}, ValueError, r"seconds must be .* below 2\^64, got 1"),
        ({"seconds": 1e19, "capacity": 10}, ValueError, r"seconds must be .* 584 years\), got 10000000000000000000$"),
        ({"seconds": 4e-9, "capacity": 10}, ValueError, "seconds must be at least one nanosecond per generation"),
        ({"items": 2**63}, ValueError, "items must be at least 1 and addressable by a table, got 9223372036854775808"),
        ({"seconds": 5, "capacity": 10, "overflow": "drop"}, ValueError, "overflow must be"),
        ({"seconds": 5, "capacity": 10, "overflow": 1}, TypeError, "overflow must be a str"),
        ({"seconds": 5, "capacity": 10, "clock": "wall"}, ValueError, "clock must be"),
        # Text with no UTF-8 form names no choice either: the argument is named, not the codec.
        ({"seconds": 5, "capacity": 10, "overflow": "\ud800"}, ValueError, "overflow must be \"error\" or \"expire_early\", got"),
        ({"seconds": 5, "capacity": 10, "clock": "wall\udcff"}, ValueError, "clock must be \"monotonic\" or \"manual\", got"),
        ({"items": 10, "generations": 0}, ValueError, "generations must be in 1..=14"),
        ({"items": 10, "generations": 15}, ValueError, "generations must be in 1..=14"),
        ({"items": 10, "generations": -1}, ValueError, "generations -1 is out of range"),
        ({"items": 10, "false_positive_rate": 1.5}, ValueError, "false_positive_rate"),
        ({"items": 10, "false_positive_rate": "x"}, TypeError, "false_positive_rate"),
        ({"items": 10, "false_positive_rate": 10**400}, ValueError, "false_positive_rate must be above 0"),
        ({"items": 10, "seed": 2**64}, ValueError, "seed"),
    ],
)
def test_every_bad_argument_is_named(kwargs, error, message):
    with pytest.raises(error, match=message):
        ExpiringCuckooFilter(**kwargs)


@pytest.mark.parametrize(
    "seconds, error",
    [(-1, ValueError), (float("nan"), ValueError), (1e300, ValueError), pytest.param(10**400, ValueError, id="int-past-float"),
     pytest.param(-(10**400), ValueError, id="int-below-float"), ("1", TypeError)],
)
def test_bad_advance_to_is_named(seconds, error):
    f = ExpiringCuckooFilter(seconds=5, capacity=10, clock="manual")
    with pytest.raises(error, match="seconds"):
        f.advance_to(seconds)
    if error is ValueError:
        with pytest.raises(ValueError, match="seconds must be a finite number of seconds, at least 0 and below 2\\^64"):
            f.advance_to(seconds)
    with pytest.raises(ValueError, match="advance_to needs"):
        ExpiringCuckooFilter(items=10).advance_to(1)


def test_advance_to_on_another_clock_says_which_clock_it_needs():
    for f in (ExpiringCuckooFilter(items=10), ExpiringCuckooFilter(seconds=5, capacity=10)):
        with pytest.raises(ValueError, match='^advance_to needs a time window with clock="manual"$'):
            f.advance_to(1)


def test_repr_and_stats_describe_the_window():
    f = ExpiringCuckooFilter(seconds=600, capacity=10_000, generations=4, seed=1)
    assert repr(f).startswith("ExpiringCuckooFilter(window={'seconds': 600.0}, generations=4")
    stats = f.stats()
    assert stats["window"] == {"seconds": 600.0} and stats["capacity"] == 10_000
    assert stats["expected_false_positive_rate"] <= EPSILON
    assert stats["tag_bits"] == 4 and stats["seed"] == 1


WITHOUT_ROOM = """
import resource, sys, ccfilter
data = ccfilter.ExpiringCuckooFilter(items=20_000_000).to_bytes()
size = int(next(l for l in open("/proc/self/status") if l.startswith("VmSize:")).split()[1])
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
resource.setrlimit(resource.RLIMIT_AS, (size * 1024 + len(data) // 2, hard))
try:
    ccfilter.ExpiringCuckooFilter.from_bytes(data)
    print("no error")
except MemoryError:
    print("MemoryError")
except ValueError as error:
    print("ValueError", error)
"""


def test_bytes_without_memory_for_their_table_raise_memory_error_not_a_bad_header(tmp_path):
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "RUST_BACKTRACE": "0"}
    # Run elsewhere than python/, whose source package (no native module) `-c` would import.
    child = subprocess.run([sys.executable, "-c", WITHOUT_ROOM], capture_output=True, text=True,
                           env=env, timeout=120, cwd=tmp_path)
    assert child.stdout == "MemoryError\n", child.stderr + child.stdout
