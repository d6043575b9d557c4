"""Keys: the documented mapping of Python values to the bytes the Rust hasher sees."""

from __future__ import annotations

import array
import ctypes

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ccfilter
from ccfilter import ConcurrentCuckooFilter, GrowableCuckooFilter, hash64

FILTERS = [ConcurrentCuckooFilter, GrowableCuckooFilter]

# Known answers from the Rust crate: `DefaultHashBuilder::new().hash_one(key)` (and
# `with_seed(7)`), printed by a Rust program linking the crate. Integers are eight-byte keys,
# which the `ccf-xxf8` function mixes with one fold; strings go through XXH3.
RUST_HASHES = [
    (0, None, 0x82127FE2358256F5),  # 0u64
    (2**64 - 1, None, 0xFA563DA3690D7838),  # u64::MAX
    (-1, None, 0xFA563DA3690D7838),  # -1i64
    (0x0102030405060708, None, 0xFD3E7371C320A216),
    ("", None, 0x7939CA5E6A8CCB87),  # ""
    ("apple", None, 0x2795B948DC1506E9),
    ("é", None, 0xEFD578DD13D69E14),
    ("x" * 200, None, 0x56E7696CC4DCF7D5),  # longer than one 64-byte block
    (42, 7, 0xD39845DD4C7926D4),
    ("apple", 7, 0x98FB891DE5C37C0F),
]


@pytest.mark.parametrize(("key", "seed", "rust"), RUST_HASHES)
def test_hashes_match_the_rust_crate(key, seed, rust):
    assert hash64(key, seed) == rust


def test_default_seed_is_the_crates():
    assert ccfilter.DEFAULT_SEED == 0x5EEDC0FFEE15F00D
    assert hash64("apple", ccfilter.DEFAULT_SEED) == hash64("apple")


@given(st.integers(min_value=-(2**63), max_value=-1))
def test_negative_ints_hash_as_their_twos_complement(value):
    assert hash64(value) == hash64(value + 2**64)


@given(st.text())
def test_str_and_its_utf8_bytes_are_one_key(text):
    data = text.encode()
    expected = hash64(text)
    assert hash64(data) == expected
    assert hash64(bytearray(data)) == expected
    assert hash64(memoryview(data)) == expected


def test_int64_and_uint64_arrays_agree_with_python_ints():
    values = [0, 1, 2**63 - 1, -(2**63), -1, -12345]
    as_u64 = [v % 2**64 for v in values]
    for cls in FILTERS:
        f = cls(1000)
        f.add_many(values)
        assert f.contains_many(np.array(values, dtype=np.int64)).all()
        assert f.contains_many(np.array(as_u64, dtype=np.uint64)).all()
        assert all(v in f for v in as_u64)
        # Narrower dtypes widen, keeping their values.
        g = cls(1000)
        g.add_many(np.array([-5, 7], dtype=np.int8))
        assert -5 in g and 7 in g and 2**64 - 5 in g


NUMPY_INTEGERS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


@pytest.mark.parametrize("cls", FILTERS)
@pytest.mark.parametrize("dtype", NUMPY_INTEGERS)
def test_numpy_scalars_are_the_keys_of_the_python_values_they_equal(cls, dtype):
    info = np.iinfo(dtype)
    values = sorted({0, 1, 7, int(info.max), int(info.min), int(info.max) // 3})
    f = cls(1000)
    f.add_many(values[::2])
    for value in values:
        scalar = dtype(value)
        assert hash64(scalar) == hash64(value) and hash64(scalar, seed=5) == hash64(value, seed=5)
        assert (scalar in f) == (value in f)
    g = cls(1000)
    for scalar in np.array(values, dtype=dtype):  # a loop over an array adds what add_many does
        g.add(scalar)
    assert g.contains_many(values).all() and len(g) == len(values)
    assert g.discard(dtype(values[0])) and g.count(dtype(values[1])) == 1


def test_numpy_bool_str_and_bytes_scalars_are_keys():
    for scalar, value in [(np.bool_(True), True), (np.bool_(False), False), (np.str_("kéy"), "kéy"),
                          (np.bytes_(b"key"), b"key")]:
        assert hash64(scalar) == hash64(value)
    f = ConcurrentCuckooFilter(100)
    f.add(np.bool_(True))
    assert 1 in f and True in f and np.int8(1) in f


@pytest.mark.parametrize("cls", FILTERS)
def test_pandas_integer_columns_are_read_or_refused_saying_how_to_convert(cls):
    pd = pytest.importorskip("pandas")
    f = cls(1000)
    for dtype in ("Int64", "UInt32", "int64", "int64[pyarrow]"):
        keys = pd.Series([1, 2, 2**31], dtype=dtype)
        assert f.add_many(keys) == 3 and f.contains_many(keys).all()
        assert f.contains_many(keys.array).all()
        assert f.discard_many(keys) == 3 and len(f) == 0
    with_na = pd.Series([1, None, 3], dtype="Int64")
    for keys in (with_na, with_na.array):
        with pytest.raises(ValueError, match=r"missing values.*dropna\(\)"):
            f.add_many(keys)
    assert len(f) == 0
    assert f.add_many(with_na.dropna()) == 2 and 3 in f


@pytest.mark.parametrize("cls", FILTERS)
def test_a_sparse_pandas_integer_column_is_read_as_its_values(cls):
    pd = pytest.importorskip("pandas")
    f = cls(1000)
    for keys in (pd.Series(pd.arrays.SparseArray([0, 7, 0, 2**40])),
                 pd.arrays.SparseArray([0, 7, 0, 2**40], fill_value=7)):
        assert f.add_many(keys) == 4 and f.count(0) == 2 and 7 in f and 2**40 in f
        assert f.contains_many(keys).all() and not f.contains_many(keys + 1).any()
        assert f.discard_many(keys) == 4 and len(f) == 0


@pytest.mark.parametrize("cls", FILTERS)
def test_a_pandas_multiindex_is_refused_naming_its_tuples(cls):
    pd = pytest.importorskip("pandas")
    f = cls(1000)
    keys = pd.MultiIndex.from_tuples([(1, "a"), (2, "b")])
    for call in (f.add_many, f.contains_many, f.discard_many):
        with pytest.raises(TypeError, match="not tuple"):
            call(keys)
    assert len(f) == 0


@pytest.mark.parametrize("cls", FILTERS)
def test_pandas_text_and_object_columns_with_missing_values_are_refused_whole(cls):
    pd = pytest.importorskip("pandas")
    f = cls(1000)
    for keys in (pd.Series(["a", None, "c"], dtype="string"), pd.Series(["a", None, "c"]),
                 pd.Series([b"a", None, b"c"]), pd.array(["a", None, "c"], dtype="string")):
        for call in (f.add_many, f.contains_many, f.discard_many):
            with pytest.raises(ValueError, match=r"missing values.*dropna\(\)"):
                call(keys)
        assert len(f) == 0
        assert f.add_many(keys.dropna()) == 2 and ("c" in f or b"c" in f)
        f.clear()
    assert f.add_many(pd.Series(["a", "b"], dtype="string")) == 2 and "b" in f


@pytest.mark.parametrize("cls", FILTERS)
def test_a_masked_array_with_masked_values_is_refused_whole(cls):
    f = cls(1000)
    for data in ([1, 2, 3], ["a", "b", "c"], [b"a", b"b", b"c"], np.array([1, 2, 3], dtype="i4")):
        masked = np.ma.array(data, mask=[False, True, False])
        for call in (f.add_many, f.contains_many, f.discard_many):
            with pytest.raises(ValueError, match=r"masked values.*compressed\(\)"):
                call(masked)
        assert len(f) == 0
        assert f.add_many(masked.compressed()) == 2 and data[0] in f and data[1] not in f
        f.clear()
    unmasked = np.ma.array([1, 2, 3])
    assert f.add_many(unmasked) == 3 and f.contains_many(unmasked).all()


@pytest.mark.parametrize("cls", FILTERS)
def test_wrong_key_types_raise_type_error_naming_the_type(cls):
    f = cls(100)
    for bad, name in [(1.5, "float"), (None, "NoneType"), ([1], "list"), ((1,), "tuple")]:
        for call in (f.add, f.discard, f.__contains__, f.count, hash64):
            with pytest.raises(TypeError, match=name):
                call(bad)
    # A numpy timedelta (a subclass of numpy's signed integers) is a duration, no key: refused
    # one by one as its array is, so that `for x in arr: f.add(x)` does what `add_many(arr)` does.
    for bad in (np.timedelta64(5, "s"), np.timedelta64("NaT")):
        for call in (f.add, f.discard, f.__contains__, f.count, hash64):
            with pytest.raises(TypeError, match="timedelta64"):
                call(bad)
    with pytest.raises(TypeError, match="timedelta64"):
        f.add_many(np.array([5], dtype="m8[s]"))
    with pytest.raises(TypeError, match="timedelta64"):
        f.add_many([np.timedelta64(5, "s")])
    with pytest.raises(TypeError, match="float64"):
        f.contains_many(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="float"):
        f.add_many([1, 2, 3.5])
    with pytest.raises(TypeError, match="collection"):
        f.add_many("abc")
    # The call stopped at the bad key, after adding the keys before it.
    assert len(f) == 2 and 1 in f and 2 in f


@pytest.mark.parametrize(
    "whole",
    [
        "key", b"key", bytearray(b"key"), memoryview(b"key"), memoryview(bytearray(b"key")),
        # Views of bytes whose format says their byte order ("<B", "<c"), as ctypes' are.
        memoryview((ctypes.c_ubyte * 3)(107, 101, 121)), memoryview((ctypes.c_char * 3)(b"k", b"e", b"y")),
    ],
)
def test_one_key_passed_whole_to_a_bulk_call_raises_naming_its_type(whole):
    # A bytes-like key is one key (`f.add(whole)`), never its characters or byte values.
    f = ConcurrentCuckooFilter(100)
    for call in (f.add_many, f.contains_many, f.discard_many, f.update):
        with pytest.raises(TypeError, match=f"got one {type(whole).__name__}"):
            call(whole)
    assert len(f) == 0
    # A view of wider items is a collection of its numbers, as the array it views is.
    ints = array.array("q", [5, -6])
    assert f.add_many(memoryview(ints)) == 2 and 5 in f and -6 in f


@pytest.mark.parametrize("cls", FILTERS)
def test_ints_outside_64_bits_raise_value_error(cls):
    f = cls(100)
    for bad in (2**64, -(2**63) - 1, 10**30):
        with pytest.raises(ValueError, match="out of range"):
            f.add(bad)
        with pytest.raises(ValueError, match="out of range"):
            f.add_many([bad])
    assert len(f) == 0


def test_ints_too_long_for_str_are_named_by_their_size_and_print_nothing(capfd):
    # Past the 4,300 digits `str()` of an int allows, an int is shown by its bits; its failed
    # `str()` is not reported as an exception ignored.
    f = ConcurrentCuckooFilter(100)
    huge = 10**5000
    cases = [
        (lambda: f.add(huge), "int key <int of 16610 bits> is out of range"),
        (lambda: f.add_many([1, -huge]), "int key <int of 16610 bits> is out of range"),
        (lambda: hash64(huge), "int key <int of 16610 bits>"),
        (lambda: ConcurrentCuckooFilter(huge), "capacity <int of 16610 bits> is too large"),
        (lambda: ConcurrentCuckooFilter(10, fingerprint_bits=huge), "fingerprint_bits <int of 16610 bits> is out of range"),
        (lambda: ConcurrentCuckooFilter(10, huge), "false_positive_rate must be above 0 and below 1, got <int of 16610 bits>"),
        (lambda: hash64(1, seed=-huge), "seed <int of 16610 bits> is out of range"),
        (lambda: f.add_many([1], threads=huge), "threads <int of 16610 bits> is too large"),
        (lambda: ccfilter.ExpiringCuckooFilter(seconds=huge, capacity=3), "seconds must be a finite number .* got <int of 16610 bits>"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()
    assert len(f) == 1
    assert capfd.readouterr().err == ""


def test_lone_surrogates_are_not_keys():
    with pytest.raises(UnicodeEncodeError):
        hash64("\ud800")


def test_the_type_stub_names_what_the_module_has():
    import ast
    from pathlib import Path

    import ccfilter._native as native

    stub = ast.parse((Path(ccfilter.__file__).parent / "_native.pyi").read_text())
    classes = {node.name: node for node in stub.body if isinstance(node, ast.ClassDef)}

    def public(names):
        return {name for name in names if not name.startswith("_")}

    def declared(cls):
        return {n.name for n in classes[cls].body if isinstance(n, ast.FunctionDef)}

    for name in ("ConcurrentCuckooFilter", "GrowableCuckooFilter", "ExpiringCuckooFilter"):
        cls = getattr(native, name)
        assert public(declared("_Filter") | declared(name)) == public(dir(cls)), name
        for method in public(dir(cls)):
            assert getattr(cls, method).__doc__, f"{name}.{method} has no docstring"


def test_the_dask_extra_installs_what_the_documented_example_imports():
    from pathlib import Path

    tomllib = pytest.importorskip("tomllib")
    Requirement = pytest.importorskip("packaging.requirements").Requirement

    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    extra = [Requirement(r) for r in pyproject["project"]["optional-dependencies"]["dask"]]
    names = {r.name for r in extra}
    extras = {e for r in extra if r.name == "dask" for e in r.extras}
    # dask.distributed and dask.dataframe, then pandas and pyarrow (read_parquet) by name.
    assert "dask" in names and {"distributed", "dataframe"} <= extras, extra
    assert {"pandas", "pyarrow"} <= names, extra
