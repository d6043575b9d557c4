"""The Dask module on a real cluster of two worker processes: filters built per partition on
the workers and merged up a tree, and semi-joins run on the workers."""

from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import distinct_keys, rate_bound

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")
import dask.array as da  # noqa: E402
import dask.bag as db  # noqa: E402
import dask.dataframe as dd  # noqa: E402

from ccfilter import (  # noqa: E402
    ConcurrentCuckooFilter,
    ExpiringCuckooFilter,
    FilterFullError,
    GrowableCuckooFilter,
)
from ccfilter.dask import build_filter, semi_join  # noqa: E402

N = 40_000
TRIALS = 100_000


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(
        processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        yield client


def worker_pids_of(client, task_stream, prefix):
    """The pids of the worker processes that ran the tasks whose key starts with `prefix`."""
    pids = client.run(os.getpid)
    workers = {t["worker"] for t in task_stream.data if str(t["key"]).find(prefix) >= 0}
    return {pids[w] for w in workers}


def local_filter(keys, capacity, cls=ConcurrentCuckooFilter, **kwargs):
    f = cls(capacity, **kwargs)
    f.add_many(keys)
    return f


def check(f, keys, others, local):
    assert type(f) is type(local) and len(f) == len(local)
    assert f.contains_many(keys).all()  # no false negatives
    answers = f.contains_many(others)
    # The fixed filter's rate at capacity; the growable filter's target, kept as it grows.
    bound = getattr(f, "false_positive_rate", f.expected_false_positive_rate)
    assert answers.mean() <= rate_bound(bound, len(others))
    # The same answers as a filter built in one process.
    assert (answers == local.contains_many(others)).all()


def test_a_filter_from_a_bag_is_built_on_both_workers(client):
    words = [f"word-{i}" for i in range(N)]
    bag = db.from_sequence(words, npartitions=16)
    with distributed.get_task_stream(client) as stream:
        f = build_filter(bag, false_positive_rate=0.001, split_every=4)
    pids = worker_pids_of(client, stream, "_partition_filter")
    assert len(pids) == 2 and os.getpid() not in pids
    assert worker_pids_of(client, stream, "_merge_filters")  # the tree ran there too
    others = [f"other-{i}" for i in range(TRIALS)]
    check(f, words, others, local_filter(words, N, false_positive_rate=0.001))


def test_a_growable_filter_needs_no_count(client):
    words = [f"word-{i}" for i in range(N)]
    bag = db.from_sequence(words, npartitions=16)
    with distributed.get_task_stream(client) as stream:
        f = build_filter(bag, 1000, 0.001, growable=True, split_every=4, seed=3)
    assert f.seed == 3 and f.capacity > 1000  # grew past its first size
    pids = worker_pids_of(client, stream, "_partition_filter")
    assert len(pids) == 2 and os.getpid() not in pids
    # Only the partitions, their filters and the merges ran: no count of the collection.
    ran = {str(t["key"]) for t in stream.data}
    assert not [key for key in ran if "count" in key or "sum" in key], ran
    others = [f"other-{i}" for i in range(TRIALS)]
    check(f, words, others,
          local_filter(words, 1000, GrowableCuckooFilter, false_positive_rate=0.001, seed=3))

    # A growable filter left on the cluster filters another collection there.
    g = build_filter(bag, growable=True, compute=False)
    mixed = words[:2000] + others[:2000]
    kept = semi_join(db.from_sequence(mixed, npartitions=4), g).compute()
    assert set(words[:2000]).issubset(kept) and len(kept) < 2100

    # A first level too small for the union: the merge says so, and what to pass instead.
    with pytest.raises(FilterFullError, match="merging the partitions' filters .*larger capacity="):
        build_filter(bag, 1000, growable=True, split_depth=1)


def test_a_capacity_too_small_says_what_to_pass(client):
    words = [f"word-{i}" for i in range(N)]
    bag = db.from_sequence(words, npartitions=4)
    with pytest.raises(FilterFullError) as raised:
        build_filter(bag, 1000)
    print(raised.value)
    message = str(raised.value)
    assert "capacity 1,000 filled up with the keys of one partition" in message
    assert "pass a capacity= of at least the collection's count" in message
    # Counted, and still full (nine keys a thousand times each: a key has room for eight
    # copies): the message gives the count.
    repeated = db.from_sequence(words[:9] * 1000, npartitions=4)
    with pytest.raises(FilterFullError, match=r"count \(9,000 keys\), so keys repeat"):
        build_filter(repeated)


def test_a_growable_filter_that_fills_in_a_partition_says_why(client):
    words = [f"word-{i}" for i in range(N)]
    # Its max_capacity stops it growing: a larger capacity= would not help (nor be allowed).
    with pytest.raises(FilterFullError, match="one partition .*larger max_capacity=") as raised:
        build_filter(db.from_sequence(words, npartitions=4), 100, growable=True,
                     max_capacity=1000)
    assert "larger capacity=" not in str(raised.value)
    # With room to grow, only a key that repeats fills it (a key has room for eight copies).
    repeated = db.from_sequence(words[:9] * 1000, npartitions=4)
    with pytest.raises(FilterFullError, match="one partition .*keys repeat: drop repeats first"):
        build_filter(repeated, growable=True)


def test_a_filter_from_an_array_and_from_a_dataframe_column(client):
    keys = distinct_keys(N)
    array = da.from_array(keys, chunks=N // 10)
    f = build_filter(array, capacity=2 * N, seed=5)
    assert f.seed == 5
    check(f, keys, distinct_keys(TRIALS, start=N), local_filter(keys, 2 * N, seed=5))

    frame = pd.DataFrame({"user": [f"u{i}" for i in range(N)], "n": np.arange(N)})
    ddf = dd.from_pandas(frame, npartitions=8)
    g = build_filter(ddf, column="user")
    check(g, frame["user"].tolist(), [f"v{i}" for i in range(TRIALS)],
          local_filter(frame["user"].tolist(), N))
    with pytest.raises(TypeError, match="column="):
        build_filter(ddf)


def test_semi_joins_run_on_the_workers_and_keep_every_match(client):
    # Orders of which a tenth belong to the users in the filter.
    users = pd.DataFrame({"user": [f"u{i}" for i in range(N)]})
    ddf_users = dd.from_pandas(users, npartitions=4)
    filt = build_filter(ddf_users, column="user", compute=False)  # stays on the cluster
    orders = pd.DataFrame({
        "user": [f"u{i // 10}" if i % 10 == 0 else f"x{i}" for i in range(10 * N)],
        "amount": np.arange(10 * N),
    })
    ddf_orders = dd.from_pandas(orders, npartitions=8)
    with distributed.get_task_stream(client) as stream:
        kept = semi_join(ddf_orders, filt, column="user").compute()
    assert len(worker_pids_of(client, stream, "_keep_rows")) == 2
    matches = orders[orders["user"].str.startswith("u")]
    assert set(matches["amount"]).issubset(set(kept["amount"]))  # no false negatives
    extra = len(kept) - len(matches)
    assert extra / (len(orders) - len(matches)) <= rate_bound(0.002, len(orders) - len(matches))
    local = local_filter(users["user"].tolist(), N)
    assert kept["amount"].tolist() == orders[local.contains_many(orders["user"].to_numpy())][
        "amount"].tolist()

    # Bags and arrays too, with a filter held by the client.
    keys = distinct_keys(N)
    f = local_filter(keys[::2], N)
    kept_keys = semi_join(da.from_array(keys, chunks=N // 8), f).compute()
    assert set(keys[::2].tolist()).issubset(set(kept_keys.tolist()))
    assert (kept_keys == keys[f.contains_many(keys)]).all()
    words = [f"w{i}" for i in range(1000)]
    kept_words = semi_join(db.from_sequence(words, npartitions=4), f).compute()
    assert kept_words == [w for w in words if w in f]


def test_a_series_is_taken_without_column(client):
    frame = pd.DataFrame({"user": [f"u{i}" for i in range(1000)], "n": np.arange(1000)})
    ddf = dd.from_pandas(frame, npartitions=4)
    f = build_filter(ddf["n"], seed=1)
    assert len(f) == 1000 and f.contains_many(np.arange(1000)).all()
    g = build_filter(ddf.user, growable=True, capacity=100)
    assert g.contains_many(frame["user"].tolist()).all()
    probes = dd.from_pandas(pd.Series(np.arange(2000), name="n"), npartitions=3)
    kept = semi_join(probes, f).compute()
    assert set(range(1000)).issubset(set(kept.tolist()))
    with pytest.raises(TypeError, match="column="):
        semi_join(ddf, f)
    # column= names a dataframe's column; a series or a bag given one is a TypeError saying so.
    for collection in [ddf["n"], db.from_sequence(range(10), npartitions=2)]:
        with pytest.raises(TypeError, match="column= is for a dataframe"):
            build_filter(collection, column="n")
        with pytest.raises(TypeError, match="column= is for a dataframe"):
            semi_join(collection, f, column="n")


def test_nulls_and_keys_of_a_wrong_type_are_refused_naming_the_column(client):
    frame = pd.DataFrame({
        "n": pd.array([1, None, 3, 4, 5, 6], dtype="Int64"),
        "s": ["a", "b", None, "d", "e", "f"],
        "x": pd.Series([1, 2, None, 4, 5, 6], dtype=object),
        "f": [1.5, 2.0, 3.0, 4.0, 5.0, 6.0],
        "k": np.arange(6),
    })
    ddf = dd.from_pandas(frame, npartitions=3)
    f = build_filter(ddf, column="k")
    for column in ["n", "s", "x"]:
        for growable in [False, True]:
            with pytest.raises(ValueError, match=rf"column '{column}' has missing values.*dropna"):
                build_filter(ddf, 100, column=column, growable=growable)
        with pytest.raises(ValueError, match=rf"column '{column}' has missing values.*dropna"):
            semi_join(ddf, f, column=column).compute()
    # Dropped first, the rest goes in.
    g = build_filter(ddf["n"].dropna())
    assert len(g) == 5 and g.contains_many([1, 3, 4, 5, 6]).all()
    with pytest.raises(TypeError, match="column 'f': .*float64"):
        build_filter(ddf, 100, column="f")
    with pytest.raises(KeyError, match="missing"):
        build_filter(ddf, column="missing")
    # A partition left empty by a filter is no key, and no error.
    assert len(build_filter(ddf[ddf.k > 3], column="k")) == 2


def _fill(f, start, stop):
    f.add_many(np.arange(start, stop))
    return f


def test_filters_pickled_to_worker_processes_come_back_whole(client):
    # Growable and expiring filters shipped to the workers, filled there and brought back.
    for empty in [GrowableCuckooFilter(10_000, seed=4), ExpiringCuckooFilter(items=100_000)]:
        parts = client.gather([
            client.submit(_fill, empty, i * 20_000, (i + 1) * 20_000, pure=False)
            for i in range(4)
        ])
        assert all(part.contains_many(np.arange(i * 20_000, (i + 1) * 20_000)).all()
                   for i, part in enumerate(parts))
        if isinstance(empty, GrowableCuckooFilter):
            union = parts[0]
            for part in parts[1:]:
                union.merge(part)
            assert len(union) == 80_000 and union.contains_many(np.arange(80_000)).all()


def _die_once(key, marker):
    if key == 12_345 and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)
    return key


def test_a_worker_killed_while_building_leaves_a_complete_filter(client, tmp_path):
    marker = str(tmp_path / "killed")
    bag = db.from_sequence(range(40_000), npartitions=8).map(_die_once, marker)
    f = build_filter(bag, growable=True, capacity=1000)
    assert os.path.exists(marker)  # a worker died during the build, and its tasks ran again
    assert len(f) == 40_000 and f.contains_many(np.arange(40_000)).all()
    client.wait_for_workers(2)


def _lazily(partition):
    return (key for key in partition)


def test_a_semi_join_keeps_every_match_of_a_bag_whose_partitions_are_iterators():
    # A bag's partitions may be iterators (map_partitions returning a generator): each is read
    # once, so every matching element is kept.
    f = local_filter(np.arange(100), 1000)
    bag = db.from_sequence(range(200), npartitions=4).map_partitions(_lazily)
    for scheduler in ["sync", "threads"]:
        kept = semi_join(bag, f).compute(scheduler=scheduler)
        assert set(range(100)).issubset(kept) and len(kept) < 110, (scheduler, kept)


def test_a_semi_join_by_something_that_is_no_filter_is_a_type_error(client):
    bag = db.from_sequence(range(10), npartitions=2)
    for wrong in ["abc", 5, None, {1, 2}]:
        with pytest.raises(TypeError, match="semi_join: f must be a filter"):
            semi_join(bag, wrong)


def test_a_split_every_that_is_no_int_is_a_type_error_naming_it(client):
    bag = db.from_sequence(range(100), npartitions=8)
    for wrong in [2.5, "3", None]:
        with pytest.raises(TypeError, match="split_every must be an int"):
            build_filter(bag, 1000, split_every=wrong)
    assert len(build_filter(bag, 1000, split_every=np.int64(3))) == 100


def test_a_growable_merge_filled_by_keys_repeated_across_partitions_says_to_drop_them(client):
    # 100 keys, each in all 20 partitions: no capacity holds 20 copies of a key in its two
    # buckets, so the message says to drop repeats, and that is what builds the filter.
    bag = db.from_sequence(list(range(100)) * 20, npartitions=20)
    for capacity in [1000, 100_000]:
        with pytest.raises(FilterFullError, match="merging .*drop repeats first"):
            build_filter(bag, capacity, growable=True)
    f = build_filter(bag.distinct(), 1000, growable=True)
    assert len(f) == 100 and f.contains_many(np.arange(100)).all()


def test_a_column_that_names_several_columns_is_a_type_error_naming_column(client):
    ddf = dd.from_pandas(pd.DataFrame({"k": np.arange(20), "j": np.arange(20)}), npartitions=2)
    f = build_filter(ddf, column="k")
    for wrong in [["k"], ["k", "j"]]:
        with pytest.raises(TypeError, match="column= names one column"):
            build_filter(ddf, column=wrong)
        with pytest.raises(TypeError, match="column= names one column"):
            semi_join(ddf, f, column=wrong).compute()


def test_a_column_with_a_str_that_is_no_utf8_is_refused_naming_the_column(client):
    # A lone surrogate has no UTF-8 bytes: the bulk calls' UnicodeEncodeError, with the column.
    with dask.config.set({"dataframe.convert-string": False}):
        frame = pd.DataFrame({"s": pd.Series(["a", "b\udc80"], dtype=object)})
        ddf = dd.from_pandas(frame, npartitions=1)
    f = build_filter(db.from_sequence(["a"]))
    with pytest.raises(ValueError, match="column 's': .*surrogates not allowed"):
        build_filter(ddf, column="s")
    with pytest.raises(ValueError, match="column 's': .*surrogates not allowed"):
        semi_join(ddf, f, column="s").compute()


def test_a_semi_join_of_a_bag_whose_partitions_are_iterators_finishes_on_the_cluster(client):
    # An iterator cannot travel between workers: each partition is read into a list in the
    # task that made it, and the semi-join keeps every match rather than waiting forever.
    f = local_filter(np.arange(100), 1000)
    bag = db.from_sequence(range(200), npartitions=4).map_partitions(_lazily)
    kept = client.compute(semi_join(bag, f)).result(timeout=60)
    assert set(range(100)).issubset(kept) and len(kept) < 110
