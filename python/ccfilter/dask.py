"""Filters over Dask collections: build one filter from a bag, an array or a dataframe column
on the workers, and filter another collection by it on the workers (a semi-join).

``build_filter`` gives every partition a filter of the same shape and seed, fills each on the
worker that holds the partition, and merges them up a tree (``split_every`` at a time), as Spark
merges per-partition Bloom filters and ``Bag.reduction`` reduces. The filters are sized for the
collection's count (computed first unless given), or, with ``growable=True``, grow as their keys
arrive, with no count and so no extra pass over the data. Filters travel
between processes as their portable bytes (pickling), so the same code runs on a
``LocalCluster`` or on a cluster of many machines: only the scheduler address changes.

``semi_join`` keeps the elements (or rows) of another collection whose key may be in the
filter: no false negatives, and a false positive rate that the filter bounds. Give it the
``Delayed`` that ``build_filter(..., compute=False)`` returns and the filter never leaves the
cluster.

Requires ``dask`` with its dataframes, pandas and pyarrow: ``pip install "ccfilter[dask]"``.
"""

from __future__ import annotations

import operator
from typing import Any, Optional, Union

import numpy as np
from dask import delayed
from dask.base import is_dask_collection
from dask.delayed import Delayed

from ._native import (
    ConcurrentCuckooFilter,
    ExpiringCuckooFilter,
    FilterFullError,
    GrowableCuckooFilter,
)

__all__ = ["build_filter", "semi_join"]

Filter = Union[ConcurrentCuckooFilter, GrowableCuckooFilter]
AnyFilter = Union[ConcurrentCuckooFilter, GrowableCuckooFilter, Delayed]


def _keys(partition: Any) -> Any:
    """A partition as keys for the bulk calls: numpy arrays as they are, pandas columns as
    numpy arrays, anything else (a bag's list) as it is. ``ValueError`` naming the column if it
    has nulls, which ``to_numpy`` would turn into floats or ``NA`` objects."""
    if hasattr(partition, "to_numpy"):
        if partition.isna().any():
            raise ValueError(
                f"{_named(partition)} has missing values (None, NaN or NA), which are not "
                "keys: drop them first (dropna())"
            )
        return partition.to_numpy()
    return partition


def _named(partition: Any) -> str:
    name = getattr(partition, "name", None)
    return "the keys" if name is None else f"column {name!r}"


def _keys_of_column(call: Any, partition: Any) -> Any:
    """``call(keys)`` on the partition's keys; a key's ``TypeError`` or ``ValueError`` says
    which column it came from."""
    keys = _keys(partition)
    try:
        return call(keys)
    except (TypeError, ValueError) as err:
        if isinstance(err, FilterFullError) or not hasattr(partition, "name"):
            raise
        named = f"{_named(partition)}: {err}"
        try:
            said = type(err)(named)
        except TypeError:  # a subclass of other arguments (UnicodeEncodeError): its base
            said = (TypeError if isinstance(err, TypeError) else ValueError)(named)
        raise said from err


def _too_small(
    err: FilterFullError, merging: bool, kind: type, settings: dict, count: Optional[int]
) -> FilterFullError:
    """``err`` of one task (a partition's or a merge's), said as what the caller of
    ``build_filter`` should do about it."""
    where = "merging the partitions' filters" if merging else "with the keys of one partition"
    limit = settings.get("max_capacity")
    if kind is GrowableCuckooFilter and merging:
        advice = "pass a larger capacity= (a level grows to 2**split_depth times it)"
        advice += "" if limit is None else f" or max_capacity= than {limit:,}"
        # A key in many partitions has its copies in two buckets, whatever the capacity.
        advice += "; or, if keys repeat across partitions, drop repeats first (distinct() or "
        advice += "drop_duplicates())"
    elif kind is GrowableCuckooFilter and limit is not None:
        # A partition's filter grows until the limit: a larger first level stays under it.
        advice = f"pass a larger max_capacity= than {limit:,} (or drop repeated keys first)"
    elif kind is GrowableCuckooFilter:
        advice = "keys repeat: drop repeats first (distinct() or drop_duplicates())"
    elif count is None:
        advice = "pass a capacity= of at least the collection's count (or growable=True)"
    else:
        # Sized for the count already: a key added over and over fills its two buckets.
        advice = (
            f"the capacity is the collection's count ({count:,} keys), so keys repeat: drop "
            "repeats first (distinct() or drop_duplicates())"
        )
    capacity = settings.get("capacity")
    sized = "the default capacity" if capacity is None else f"capacity {capacity:,}"
    full = FilterFullError(
        f"build_filter: a filter of {sized} filled up {where} "
        f"({err.inserted:,} went in); {advice}"
    )
    full.inserted = err.inserted
    return full


def _partition_filter(
    partition: Any, kind: type, settings: dict, count: Optional[int] = None
) -> Filter:
    """The filter of one partition's keys, built on the worker that holds it."""
    f = kind(**settings)
    try:
        _keys_of_column(f.add_many, partition)
    except FilterFullError as err:
        raise _too_small(err, False, kind, settings, count) from err
    return f


def _merge_filters(settings: dict, count: Optional[int], *filters: Filter) -> Filter:
    """One node of the tree: the union of its children (the first, which this task owns,
    takes the others in)."""
    first, *rest = filters
    for other in rest:
        try:
            first.merge(other)
        except FilterFullError as err:
            raise _too_small(err, True, type(first), settings, count) from err
    return first


def _is_frame(collection: Any) -> bool:
    """Whether ``collection`` is a dataframe: columns in two dimensions (a dask series has
    ``columns`` too)."""
    return hasattr(collection, "columns") and getattr(collection, "ndim", 1) == 2


def _check_column(collection: Any, column: Optional[str]) -> None:
    """``TypeError`` unless ``column`` is given exactly when ``collection`` is a dataframe, and
    names one of its columns (``KeyError`` for one it lacks)."""
    if column is None and _is_frame(collection):
        raise TypeError("a dataframe needs column=: the column whose values are the keys")
    if column is not None and not _is_frame(collection):
        raise TypeError(
            f"column= is for a dataframe; a {type(collection).__name__}'s elements are the keys"
        )
    if column is not None and getattr(collection[column], "ndim", 1) != 1:
        raise TypeError(f"column= names one column, not {column!r}")


def _column(collection: Any, column: Optional[str]) -> Any:
    _check_column(collection, column)
    return collection if column is None else collection[column]


def _partitions(collection: Any) -> list:
    """The collection's partitions (a 1-D array's blocks) as delayed values."""
    if not is_dask_collection(collection):
        raise TypeError(
            f"expected a dask bag, array or dataframe column, not {type(collection).__name__}"
        )
    if getattr(collection, "ndim", 1) != 1:
        raise ValueError(f"expected a 1-D array of keys, got {collection.ndim} dimensions")
    parts = collection.to_delayed()
    return list(np.asarray(parts, dtype=object).ravel())


def _count(collection: Any) -> int:
    """Keys in the collection: an array's length (computing unknown chunk sizes), otherwise
    its count."""
    if type(collection).__module__.startswith("dask.array"):
        if np.isnan(collection.shape[0]):
            collection = collection.compute_chunk_sizes()
        return int(collection.shape[0])
    return int(collection.count().compute())


def build_filter(
    collection: Any,
    capacity: Optional[int] = None,
    false_positive_rate: Optional[float] = None,
    *,
    column: Optional[str] = None,
    seed: Optional[int] = None,
    growable: bool = False,
    split_every: int = 8,
    compute: bool = True,
    **settings: Any,
) -> AnyFilter:
    """One filter holding every key of ``collection``: a dask bag of keys, a 1-D dask array of
    integers (or strings), a dask series, or a dask dataframe with ``column``.

    Every partition gets a filter of one shape and seed, built on the worker holding the
    partition; then ``split_every`` filters at a time are merged up a tree. With
    ``compute=False``, returns the ``Delayed`` filter, to pass on to ``semi_join`` without
    bringing it to the client.

    By default each filter is a ``ConcurrentCuckooFilter`` sized for ``capacity`` keys in all
    (default: the collection's count, computed first, which reads the data one more time).
    Other keyword arguments (``fingerprint_bits``, ``bucket_size``, ``semi_sorted``) go to it.

    With ``growable=True`` each is a ``GrowableCuckooFilter`` and nothing is counted:
    ``capacity`` is its first level's (default 1,000,000) and other keyword arguments
    (``split_depth``, ``max_capacity``) go to it. A fingerprint stays in its level when filters
    merge, and a level grows to ``2**split_depth`` times its first size (64 by default), so the
    union holds up to about ``capacity * 2**split_depth`` keys (64 million by default) before the
    merge raises ``FilterFullError``: give a larger ``capacity`` (or ``split_depth``) for more.

    Keys are as for the filter classes: nulls (``None``, ``NaN``) are not keys, so drop them
    first (``dropna()``): a column with nulls raises ``ValueError`` naming it. Raises
    ``FilterFullError`` if ``capacity`` is too small, saying so and what to pass instead.
    """
    try:
        split_every = operator.index(split_every)
    except TypeError:
        raise TypeError(
            f"split_every must be an int, not {type(split_every).__name__}"
        ) from None
    if split_every < 2:
        raise ValueError(f"split_every must be at least 2, got {split_every}")
    keys = _column(collection, column)
    parts = _partitions(keys)
    kind = GrowableCuckooFilter if growable else ConcurrentCuckooFilter
    spec = dict(settings)
    count = None
    if capacity is not None:
        spec["capacity"] = capacity
    elif not growable:
        count = _count(keys)
        spec["capacity"] = max(count, 1)
    if false_positive_rate is not None:
        spec["false_positive_rate"] = false_positive_rate
    if seed is not None:
        spec["seed"] = seed
    # Check the settings here, where a mistake is cheap to report (a fixed filter at its
    # smallest: it is allocated whole; a growable one's first level is what each partition gets).
    if growable:
        kind(**spec)
    else:
        kind(**{**spec, "capacity": 1})
    level = [delayed(_partition_filter, pure=True)(part, kind, spec, count) for part in parts]
    if not level:
        level = [delayed(_partition_filter, pure=True)([], kind, spec, count)]
    while len(level) > 1:
        level = [
            delayed(_merge_filters, pure=True)(spec, count, *level[i : i + split_every])
            for i in range(0, len(level), split_every)
        ]
    return level[0].compute() if compute else level[0]


def _keep_elements(partition: list, f: Filter) -> list:
    answers = f.contains_many(partition)
    return [item for item, keep in zip(partition, answers) if keep]


def _keep_block(block: np.ndarray, f: Filter) -> np.ndarray:
    return f.contains_many(block)


def _keep_rows(frame: Any, f: Filter, column: Optional[str]) -> Any:
    keys = frame if column is None else frame[column]
    return frame[_keys_of_column(f.contains_many, keys)]


def semi_join(collection: Any, f: AnyFilter, *, column: Optional[str] = None) -> Any:
    """The elements of ``collection`` (rows, for a dataframe: by ``column``) whose key may be in
    the filter ``f``, as a collection of the same kind, computed lazily on the workers.

    ``f`` is a filter or the ``Delayed`` of one (``build_filter(..., compute=False)``); either
    way it enters the task graph once and is shipped to each worker once; anything else is a
    ``TypeError``.
    """
    if not is_dask_collection(collection):
        raise TypeError(
            f"expected a dask bag, array or dataframe, not {type(collection).__name__}"
        )
    _check_column(collection, column)
    if not isinstance(
        f, (ConcurrentCuckooFilter, GrowableCuckooFilter, ExpiringCuckooFilter, Delayed)
    ):
        raise TypeError(
            "semi_join: f must be a filter or the Delayed of one (build_filter(..., "
            f"compute=False)), not {type(f).__name__}"
        )
    shared = f if isinstance(f, Delayed) else delayed(f)
    kind = type(collection).__module__
    if kind.startswith("dask.bag"):
        # A partition may be an iterator, which asking would use up and which cannot travel
        # between workers: each becomes a list in the task that made it.
        return collection.map_partitions(list).map_partitions(_keep_elements, shared)
    if kind.startswith("dask.array"):
        if collection.ndim != 1:
            raise ValueError(f"expected a 1-D array, got {collection.ndim} dimensions")
        mask = collection.map_blocks(_keep_block, shared, dtype=bool, meta=np.array([], bool))
        return collection[mask]
    return collection.map_partitions(_keep_rows, shared, column, meta=collection._meta)
