"""Keys: the documented mapping of Python values to the bytes the Rust hasher sees."""

from __future__ import annotations

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


@pytest.mark.parametrize("cls", FILTERS)
def test_wrong_key_types_raise_type_error_naming_the_type(cls):
    f = cls(100)
    for bad, name in [(1.5, "float"), (None, "NoneType"), ([1], "list"), ((1,), "tuple")]:
        for call in (f.add, f.discard, f.__contains__, f.count, hash64):
            with pytest.raises(TypeError, match=name):
                call(bad)
    with pytest.raises(TypeError, match="float64"):
        f.contains_many(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="float"):
        f.add_many([1, 2, 3.5])
    with pytest.raises(TypeError, match="collection"):
        f.add_many("abc")
    # The call stopped at the bad key, after adding the keys before it.
    assert len(f) == 2 and 1 in f and 2 in f


@pytest.mark.parametrize("cls", FILTERS)
def test_ints_outside_64_bits_raise_value_error(cls):
    f = cls(100)
    for bad in (2**64, -(2**63) - 1, 10**30):
        with pytest.raises(ValueError, match="out of range"):
            f.add(bad)
        with pytest.raises(ValueError, match="out of range"):
            f.add_many([bad])
    assert len(f) == 0


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

    for name in ("ConcurrentCuckooFilter", "GrowableCuckooFilter"):
        cls = getattr(native, name)
        assert public(declared("_Filter") | declared(name)) == public(dir(cls)), name
        for method in public(dir(cls)):
            assert getattr(cls, method).__doc__, f"{name}.{method} has no docstring"
