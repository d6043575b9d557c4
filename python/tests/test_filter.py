"""The two classes as sets: no false negatives, exact len, the measured false positive rate,
bulk calls that agree with single ones, and errors for bad arguments."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from conftest import distinct_keys, rate_bound
from hypothesis import given, settings
from hypothesis import strategies as st

from ccfilter import (
    ConcurrentCuckooFilter,
    ExpiringCuckooFilter,
    FilterFullError,
    GrowableCuckooFilter,
    hash64,
)

FILTERS = [ConcurrentCuckooFilter, GrowableCuckooFilter]

keys = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.text(max_size=20),
    st.binary(max_size=20),
)
# A key, and what it is as a key: ints by their 64-bit pattern, text by its UTF-8 bytes.
def canonical(key):
    if isinstance(key, int):
        return key % 2**64
    return key.encode() if isinstance(key, str) else bytes(key)


def at_most_three_copies(batch, model):
    """The keys of `batch` that leave no key with more than three copies."""
    kept, copies = [], Counter(model)
    for key in batch:
        if copies[canonical(key)] < 3:
            copies[canonical(key)] += 1
            kept.append(key)
    return kept


operations = st.lists(
    st.tuples(st.sampled_from(["add", "add_unique", "discard", "add_many", "discard_many"]),
              st.lists(keys, min_size=1, max_size=5)),
    max_size=40,
)


@pytest.mark.parametrize("cls", FILTERS)
@settings(max_examples=150, deadline=None)
@given(ops=operations)
def test_no_false_negatives_and_exact_len(cls, ops):
    f = cls(1000)
    model = Counter()
    for op, batch in ops:
        if op in ("add", "add_many"):
            # At most three copies of a key: its two buckets hold eight, and a ninth is refused
            # (a full filter, tested on its own).
            batch = at_most_three_copies(batch, model)
        if op == "add":
            for key in batch:
                f.add(key)
                model[canonical(key)] += 1
        elif op == "add_unique":
            for key in batch:
                added = f.add_unique(key)
                if model[canonical(key)]:
                    assert not added
                elif added:
                    model[canonical(key)] += 1
                # else: a false positive hid it; the filter may answer yes without holding it
        elif op == "add_many":
            assert f.add_many(batch) == len(batch)
            model.update(canonical(key) for key in batch)
        elif op == "discard":
            for key in batch:
                if model[canonical(key)]:
                    assert f.discard(key)
                    model[canonical(key)] -= 1
        else:
            present = [key for key in batch if model[canonical(key)]]
            # Discard only keys held as often as they are listed: removing a key never added
            # may remove a colliding key's fingerprint.
            wanted = Counter(canonical(key) for key in present)
            if all(model[key] >= n for key, n in wanted.items()):
                assert f.discard_many(present) == len(present)
                for key in present:
                    model[canonical(key)] -= 1
        held = [key for key in model if model[key]]
        assert len(f) == sum(model.values())
        assert all(key in f for key in held)
        assert f.contains_many(held).all() if held else True
        assert all(f.count(key) >= model[key] for key in held)


@pytest.mark.parametrize("cls", FILTERS)
def test_remove_raises_key_error_for_an_absent_key(cls):
    f = cls(1000)
    f.add("present")
    f.remove("present")
    assert "present" not in f and len(f) == 0
    with pytest.raises(KeyError, match="absent"):
        f.remove("absent")
    assert not f.discard("absent")


@pytest.mark.parametrize("cls", FILTERS)
def test_false_positive_rate_is_within_its_bound(cls):
    n, trials = 200_000, 400_000
    f = cls(n, 0.01)
    f.add_many(distinct_keys(n))
    assert len(f) == n
    assert f.contains_many(distinct_keys(n)).all()
    rate = f.contains_many(distinct_keys(trials, start=n)).mean()
    # Each class's own promise: the fixed filter's rate at capacity; the growable filter's
    # target, which it stays under however far it grows.
    bound = f.expected_false_positive_rate if cls is ConcurrentCuckooFilter else 0.01
    assert rate <= rate_bound(bound, trials), rate


@pytest.mark.parametrize("cls", FILTERS)
def test_bulk_calls_agree_with_single_ones_for_any_stride_and_input(cls):
    f = cls(50_000)
    base = distinct_keys(40_000)
    added = base[::2]
    f.add_many(added)
    assert len(f) == len(added)
    # A strided view, an int64 view of the same bits, a list, a generator.
    for view in (base, base[::-1], base.view(np.int64), list(base[:1000].tolist())):
        answers = f.contains_many(view)
        assert answers.dtype == np.bool_ and answers.shape == (len(view),)
        assert answers.tolist() == [int(k) % 2**64 in f for k in view]
    assert f.contains_many(iter(added[:10].tolist())).all()
    assert f.contains_many([]).shape == (0,)
    assert f.discard_many(added[::-1]) == len(added)
    assert len(f) == 0


@pytest.mark.parametrize("cls", FILTERS)
def test_bulk_calls_take_string_and_object_arrays(cls):
    f = cls(1000)
    words = np.array(["apple", "banana", "cherry"])
    assert f.add_many(words) == 3
    assert all(w in f for w in ["apple", "banana", "cherry"])
    assert f.contains_many(np.array([b"apple", b"kiwi"])).tolist()[0]
    assert f.contains_many(np.array(["cherry", 1], dtype=object))[0]


@pytest.mark.parametrize("cls", FILTERS)
def test_two_dimensional_arrays_are_refused(cls):
    f = cls(100)
    with pytest.raises(ValueError, match="1-D"):
        f.add_many(np.zeros((2, 2), dtype=np.uint64))
    # A view of numbers in other than one dimension, as an array is.
    wide = np.arange(4, dtype=np.int64)
    for view, ndim in [(memoryview(wide.reshape(2, 2)), 2), (memoryview(wide[:1].reshape(())), 0)]:
        for call in (f.add_many, f.contains_many, f.discard_many, f.update):
            with pytest.raises(ValueError, match=f"expected a 1-D array of keys, got {ndim} dimensions"):
                call(view)
    assert len(f) == 0
    assert f.add_many(memoryview(wide)) == 4 and f.contains_many(memoryview(wide)).all()


def test_a_full_filter_says_how_many_went_in_and_loses_nothing():
    f = ConcurrentCuckooFilter(1000)
    keys = distinct_keys(100_000)
    with pytest.raises(FilterFullError) as raised:
        f.add_many(keys)
    err = raised.value
    assert isinstance(err, ValueError)
    assert err.inserted == len(f) >= 1000
    assert str(err.inserted) in str(err)
    # Exactly the keys before the failing one went in, all of them findable.
    assert f.contains_many(keys[: err.inserted]).all()
    before = len(f)
    with pytest.raises(FilterFullError) as single:
        for key in keys[err.inserted :].tolist():
            f.add(key)
    assert single.value.inserted == 0
    assert len(f) >= before


def test_a_growable_filter_with_a_limit_fills_up():
    f = GrowableCuckooFilter(1000, max_capacity=40_000, split_depth=6)
    with pytest.raises(FilterFullError) as raised:
        f.add_many(distinct_keys(100_000))
    # Chunks of about 3,900 keys: ten fit the limit, an eleventh would pass it.
    assert raised.value.inserted == len(f) > 30_000
    assert f.capacity <= 40_000
    assert f.contains_many(distinct_keys(raised.value.inserted)).all()


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"capacity": 0}, ValueError, "capacity must be at least 1"),
        ({"capacity": -5}, ValueError, "capacity must be at least 1, got -5"),
        ({"capacity": 2**70}, ValueError, "too large"),
        ({"capacity": 10.0}, TypeError, "capacity must be an int, not float"),
        ({"capacity": "10"}, TypeError, "not str"),
        ({"capacity": 10, "false_positive_rate": 0.0}, ValueError, "false_positive_rate"),
        ({"capacity": 10, "false_positive_rate": 1.5}, ValueError, "false_positive_rate"),
        ({"capacity": 10, "false_positive_rate": float("nan")}, ValueError, "false_positive_rate"),
        ({"capacity": 10, "seed": 1.5}, TypeError, "seed must be an int"),
    ],
)
@pytest.mark.parametrize("cls", FILTERS)
def test_bad_settings_raise_with_the_crates_message(cls, kwargs, error, message):
    with pytest.raises(error, match=message):
        cls(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"fingerprint_bits": 3}, "fingerprint_bits must be in 4..=32, got 3"),
        ({"fingerprint_bits": -1}, "fingerprint_bits -1 is out of range"),
        ({"bucket_size": 3}, "bucket_size must be 2, 4 or 8, got 3"),
        ({"bucket_size": 2, "semi_sorted": True}, "semi_sorted needs bucket_size 4"),
    ],
)
def test_bad_fixed_settings_raise_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ConcurrentCuckooFilter(100, **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"split_depth": 0}, "split_depth must be in 1..=10, got 0"),
        ({"split_depth": 11}, "split_depth"),
        ({"max_capacity": 0}, "max_capacity must be at least 1"),
        ({"max_capacity": 99}, "max_capacity must be at least the capacity 100, got 99"),
    ],
)
def test_bad_growable_settings_raise_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        GrowableCuckooFilter(100, **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"fingerprint_bits": 2**70}, ValueError, "fingerprint_bits 1180591620717411303424 is out of range"),
        ({"bucket_size": 2**63}, ValueError, "bucket_size"),
        ({"bucket_size": 2**70}, ValueError, "bucket_size"),
        ({"fingerprint_bits": "8"}, TypeError, "fingerprint_bits must be an int, not str"),
        ({"semi_sorted": 1}, TypeError, "semi_sorted must be a bool, not int"),
        ({"false_positive_rate": "0.1"}, TypeError, "false_positive_rate must be a number, not str"),
        # An int is a number, one too large for a float too: out of range, not of the wrong type.
        ({"false_positive_rate": 10**400}, ValueError, r"false_positive_rate must be above 0 and below 1, got 1000"),
        ({"false_positive_rate": -(10**400)}, ValueError, r"false_positive_rate must be above 0 and below 1, got -1000"),
        ({"seed": 2**64}, ValueError, r"seed 18446744073709551616 is out of range"),
    ],
)
def test_every_bad_fixed_argument_is_named(kwargs, error, message):
    with pytest.raises(error, match=message):
        ConcurrentCuckooFilter(100, **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"split_depth": 2**70}, ValueError, "split_depth 1180591620717411303424 is out of range"),
        ({"split_depth": 1.5}, TypeError, "split_depth must be an int, not float"),
        ({"false_positive_rate": 10**400}, ValueError, r"false_positive_rate must be above 0 and below 1, got 1000"),
        ({"seed": -(2**63) - 1}, ValueError, "seed -9223372036854775809 is out of range"),
    ],
)
def test_every_bad_growable_argument_is_named(kwargs, error, message):
    with pytest.raises(error, match=message):
        GrowableCuckooFilter(100, **kwargs)
    with pytest.raises(ValueError, match="seed 18446744073709551616 is out of range"):
        hash64(1, seed=2**64)


@pytest.mark.parametrize("cls", FILTERS)
def test_update_adds_every_key_of_each_iterable(cls):
    f = cls(20_000)
    arrays = distinct_keys(6000)
    f.update(arrays[:3000], arrays[3000:].tolist(), (f"k{i}" for i in range(10)), [])
    assert len(f) == 6010 and f.contains_many(arrays).all() and "k9" in f
    f.update()
    assert len(f) == 6010
    small = ConcurrentCuckooFilter(100)
    with pytest.raises(FilterFullError) as raised:
        small.update(distinct_keys(60), distinct_keys(1000, start=60))
    assert raised.value.inserted == len(small) and len(small) > 60


def test_settings_shape_the_filter():
    f = ConcurrentCuckooFilter(10_000, fingerprint_bits=16, bucket_size=8, seed=42)
    assert (f.fingerprint_bits, f.bucket_size, f.semi_sorted, f.seed) == (16, 8, False, 42)
    assert f.capacity >= 10_000 and f.load_factor == 0.0
    g = ConcurrentCuckooFilter(10_000, 0.001)
    assert g.expected_false_positive_rate <= 0.001
    stats = g.stats()
    assert stats["capacity"] == g.capacity and stats["fingerprint_bits"] == g.fingerprint_bits
    assert "ConcurrentCuckooFilter(len=0" in repr(g)
    h = GrowableCuckooFilter(1000, 0.01, seed=-1)
    assert h.seed == 2**64 - 1 and h.false_positive_rate == 0.01 and h.level_count == 1
    h.add_many(range(50_000))
    assert h.stats()["len"] == 50_000 == sum(level["len"] for level in h.stats()["levels"])
    assert h.expected_false_positive_rate < 0.01
    assert "GrowableCuckooFilter(len=50000" in repr(h)


@pytest.mark.parametrize("cls", FILTERS)
@pytest.mark.parametrize("threads", [2, 3, 8])
def test_bulk_calls_on_several_threads_agree_with_one(cls, threads):
    n = 100_000
    keys = distinct_keys(n)
    words = [f"key-{i}" for i in range(n)]
    one, many = cls(3 * n), cls(3 * n)
    assert one.add_many(keys) == n and one.add_many(words) == n
    assert many.add_many(keys, threads=threads) == n
    assert many.add_many(iter(words), threads=threads) == n
    assert len(many) == len(one) == 2 * n
    probe = distinct_keys(3 * n)  # a third present, the rest absent
    assert (many.contains_many(probe, threads=threads) == one.contains_many(probe)).all()
    assert (many.contains_many(probe, threads=threads) == many.contains_many(probe)).all()
    assert many.contains_many(words, threads=threads).all()  # no false negatives
    assert many.discard_many(keys[::2], threads=threads) == n // 2
    assert many.discard_many(words, threads=threads) == n
    assert len(many) == n - n // 2
    assert many.contains_many(keys[1::2], threads=threads).all()


def test_a_full_filter_on_several_threads_counts_what_went_in():
    f = ConcurrentCuckooFilter(10_000)
    keys = distinct_keys(200_000)
    with pytest.raises(FilterFullError) as raised:
        f.add_many(keys, threads=4)
    assert raised.value.inserted == len(f) >= 10_000
    # What went in is found; nothing was dropped to make room.
    assert f.contains_many(keys).sum() >= len(f)


@pytest.mark.parametrize(
    ("threads", "error", "message"),
    [
        (0, ValueError, "threads must be at least 1, got 0"),
        (-1, ValueError, "threads must be at least 1, got -1"),
        (10**6, ValueError, "threads must be at most 256, got 1000000"),
        (2**70, ValueError, "threads .* is too large"),
        (2.0, TypeError, "threads must be an int, not float"),
    ],
)
def test_a_bad_thread_count_raises_before_any_work(threads, error, message):
    f = ConcurrentCuckooFilter(100)
    f.add(1)
    for call in (f.add_many, f.contains_many, f.discard_many):
        with pytest.raises(error, match=message):
            call([1, 2], threads=threads)
    assert len(f) == 1


def test_numpy_integers_are_taken_as_the_int_arguments_they_equal():
    # As Python's own int arguments take any `__index__` integer (`range(np.int64(3))`).
    f = ConcurrentCuckooFilter(np.int64(1000), fingerprint_bits=np.uint8(16), seed=np.uint64(7))
    assert (f.capacity, f.fingerprint_bits, f.seed) == (ConcurrentCuckooFilter(1000).capacity, 16, 7)
    assert f.add_many(np.arange(100), threads=np.int32(2)) == 100
    assert f.contains_many(np.arange(100), threads=np.int64(2)).all()
    g = GrowableCuckooFilter(np.int16(100), split_depth=np.int8(2), max_capacity=np.int64(10**6))
    assert g.capacity == GrowableCuckooFilter(100, split_depth=2).capacity
    e = ExpiringCuckooFilter(items=np.int64(100), generations=np.int64(4))
    assert (e.window, e.generations) == ({"items": 100}, 4)
    with pytest.raises(ValueError, match="capacity must be at least 1, got 0"):
        ConcurrentCuckooFilter(np.int64(0))
    with pytest.raises(TypeError, match="capacity must be an int, not float64"):
        ConcurrentCuckooFilter(np.float64(10))


def test_a_numpy_bool_is_taken_as_the_bool_flag_it_equals():
    # Not "semi_sorted must be a bool, not bool": numpy's bool is a bool.
    assert ConcurrentCuckooFilter(100, semi_sorted=np.bool_(True)).semi_sorted
    assert not ConcurrentCuckooFilter(100, 0.01, semi_sorted=np.bool_(False)).semi_sorted
    with pytest.raises(TypeError, match="semi_sorted must be a bool, not int64"):
        ConcurrentCuckooFilter(100, semi_sorted=np.int64(1))


def test_iterables_on_several_threads_stop_at_a_full_filter_or_a_bad_key():
    # Lists and iterators are read on the calling thread while helpers work on what was read.
    f = ConcurrentCuckooFilter(10_000)
    words = [f"word-{i}" for i in range(200_000)]
    with pytest.raises(FilterFullError) as raised:
        f.add_many(iter(words), threads=3)
    assert raised.value.inserted == len(f) >= 10_000
    assert f.contains_many(words, threads=3).sum() >= len(f)

    g = ConcurrentCuckooFilter(100_000)
    good = words[:50_000]
    with pytest.raises(TypeError, match="float"):
        g.add_many(good + [1.5] + words[50_000:60_000], threads=2)
    # Every key before the bad one went in, none after it.
    assert len(g) == len(good) and g.contains_many(good, threads=2).all()
    with pytest.raises(TypeError, match="NoneType"):
        g.contains_many(good + [None], threads=2)
    assert g.discard_many(iter(good), threads=2) == len(good) and len(g) == 0


@pytest.mark.parametrize("cls", FILTERS)
def test_clear_empties_the_filter_and_keeps_its_room(cls):
    f = cls(10_000)
    keys = distinct_keys(30_000 if cls is GrowableCuckooFilter else 9000)
    f.add_many(keys)
    capacity, memory = f.capacity, f.memory_usage
    f.clear()
    assert len(f) == 0 and not f.contains_many(keys).any() and f.count(keys[0]) == 0
    assert (f.capacity, f.memory_usage) == (capacity, memory) and f.load_factor == 0.0
    f.add_many(keys)
    assert len(f) == len(keys) and f.contains_many(keys).all()
