"""How bulk calls read their keys: lists and tuples by index, numpy arrays of objects, strings
and bytes a slice at a time, other iterables by iteration; all alike, whatever the keys' types
and lengths, and stopping at a bad key with the keys before it done."""

from __future__ import annotations

import array
import ctypes
import gc
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from ccfilter import ConcurrentCuckooFilter, GrowableCuckooFilter

FILTERS = [ConcurrentCuckooFilter, GrowableCuckooFilter]


class Text(str):
    """A str subclass: read through the general path, as the str it equals."""


def mixed_keys(n):
    """Keys of every kind, each distinct as a key."""
    out = []
    for i in range(n):
        kind = i % 8
        if kind == 0:
            out.append(f"s-{i}")
        elif kind == 1:
            out.append(Text(f"t-{i}"))
        elif kind == 2:
            out.append(np.str_(f"n-{i}"))
        elif kind == 3:
            out.append(i)
        elif kind == 4:
            out.append(f"b-{i}".encode())
        elif kind == 5:
            out.append(bytearray(f"a-{i}".encode()))
        elif kind == 6:
            out.append(memoryview(f"m-{i}".encode()))
        else:
            out.append(f"é-{i}-\u4e2d")  # UTF-8 longer than the code points
    return out


def object_array(keys):
    array = np.empty(len(keys), dtype=object)
    for i, key in enumerate(keys):
        array[i] = key
    return array


def as_inputs(keys):
    """The same keys as each kind of input a bulk call reads."""
    return {
        "list": list(keys),
        "tuple": tuple(keys),
        "object array": object_array(keys),
        "generator": (k for k in keys),
    }


@pytest.mark.parametrize("cls", FILTERS)
@pytest.mark.parametrize("threads", [1, 2])
def test_every_kind_of_input_reads_the_same_keys(cls, threads):
    # Past one segment (65,536 keys a thread), so that inputs are read in several.
    keys = mixed_keys(150_000)
    for name, source in as_inputs(keys).items():
        f = cls(200_000)
        assert f.add_many(source, threads=threads) == len(keys), name
        assert len(f) == len(keys), name
        assert f.contains_many(keys, threads=threads).all(), name
        assert f.contains_many(tuple(keys), threads=threads).all(), name
        # The keys are the ones single calls take.
        assert all(k in f for k in keys[:2000]), name
        assert f.discard_many(as_inputs(keys)[name], threads=threads) == len(keys), name
        assert len(f) == 0, name


def test_an_iterable_whose_class_has_no_str_module_is_read():
    # `__module__` is whatever the class says (None, or absent for some built types).
    class Keys:
        def __iter__(self):
            return iter([1, "two", b"three"])

    f = ConcurrentCuckooFilter(100)
    for module in (None, 5):
        Keys.__module__ = module
        assert f.add_many(Keys()) == 3
        assert f.contains_many(Keys()).all() and f.discard_many(Keys()) == 3
    assert len(f) == 0


@pytest.mark.parametrize("cls", FILTERS)
def test_string_and_bytes_arrays_read_as_their_python_values(cls):
    words = [f"word-{i}-\u00e9" for i in range(70_000)]
    f = cls(100_000)
    assert f.add_many(np.array(words)) == len(words)  # dtype <U: str values
    assert f.contains_many(words).all()
    raw = [w.encode() for w in words]
    assert f.contains_many(np.array(raw)).all()  # dtype S: bytes values, the same keys
    # numpy drops a fixed-width item's trailing NULs, as its own str() of the item does.
    g = cls(100)
    g.add_many(np.array(["ab", "c"]))
    assert "c" in g and "c\x00" not in g
    # numpy 2's variable-width strings (dtype T) are str values too, a missing one no key.
    if getattr(getattr(np, "dtypes", None), "StringDType", None) is None:
        return  # numpy before 2.0 has none
    h = cls(100_000)
    variable = np.array(words, dtype=np.dtypes.StringDType())
    assert h.add_many(variable[::-1], threads=2) == len(words)
    assert h.contains_many(words).all() and h.contains_many(variable).all()
    assert h.discard_many(variable) == len(words) and len(h) == 0
    with_missing = np.array(["x", None, "y"], dtype=np.dtypes.StringDType(na_object=None))
    with pytest.raises(TypeError, match="not NoneType"):
        h.add_many(with_missing)
    assert "x" in h and "y" not in h


def test_a_view_of_numbers_in_any_format_reads_as_the_numbers_it_holds():
    # A memoryview's format may say its byte order ("<q" of ctypes, ">q" of a big-endian
    # array), which memoryview itself cannot iterate: read as the array it is.
    values = [0, 1, -5, 2**40, -(2**63)]
    views = [
        (memoryview(array.array("q", values)), values),
        (memoryview((ctypes.c_int64 * 5)(*values)), values),
        (memoryview(np.array(values, dtype=">i8")), values),
        (memoryview(np.array(values[:3], dtype="<i2")), values[:3]),
        (memoryview((ctypes.c_uint32 * 2)(7, 2**32 - 1)), [7, 2**32 - 1]),
    ]
    for view, keys in views:
        for threads in (1, 2):
            f = ConcurrentCuckooFilter(100)
            assert f.add_many(view, threads=threads) == len(keys), view.format
            assert all(key in f for key in keys), view.format
            assert f.contains_many(view).all() and f.discard_many(view) == len(keys)
            assert len(f) == 0
    with pytest.raises(TypeError, match="float64"):
        ConcurrentCuckooFilter(100).add_many(memoryview((ctypes.c_double * 2)(1.0, 2.0)))


@pytest.mark.parametrize("dtype", ["<i8", "<u8", ">i8", "<i4"])
def test_a_record_arrays_field_reads_as_its_values(dtype):
    # A field of a packed record array: items 12 or 16 bytes apart, not aligned.
    records = np.zeros(1000, dtype=[("flag", "u1"), ("a", "<i4"), ("key", dtype)])
    records["key"] = np.arange(1000) * 7 - 300
    column = records["key"]
    assert not column.flags.aligned
    f = ConcurrentCuckooFilter(2000)
    assert f.add_many(column, threads=2) == 1000
    assert all(key in f for key in column.tolist())
    assert f.contains_many(column).all()
    assert f.discard_many(column) == 1000 and len(f) == 0
    # A view of a buffer at an odd offset.
    buffer = bytearray(8 * 100 + 1)
    odd = np.ndarray((100,), dtype=dtype, buffer=buffer, offset=1)
    odd[:] = np.arange(100) - 50
    assert f.add_many(odd) == 100
    assert all(key in f for key in range(-50, 50))


@pytest.mark.parametrize("threads", [1, 2])
def test_keys_of_every_length_go_in_as_single_adds_put_them(threads):
    # Keys of every length up to 70 bytes and more, ASCII and multi-byte, str and bytes, packed
    # one after another in a segment: the filter a bulk call builds is the one single adds
    # build, byte for byte.
    text = [("k" * n, "\u00e9" * n, ("\u4e2d" * n)[: n // 3]) for n in range(70)]
    keys = [key for triple in text for key in triple]
    keys += [key.encode() for key in keys]
    keys = [f"{i}:{key}" if isinstance(key, str) else b"%d:" % i + key for i, key in enumerate(keys)]
    bulk, single = ConcurrentCuckooFilter(1000), ConcurrentCuckooFilter(1000)
    assert bulk.add_many(keys, threads=threads) == len(keys)
    for key in keys:
        single.add(key)
    assert bulk.to_bytes() == single.to_bytes()
    assert bulk.contains_many(keys, threads=threads).all()


@pytest.mark.parametrize("cls", FILTERS)
@pytest.mark.parametrize("threads", [1, 2])
def test_long_keys_end_segments_early_and_lose_nothing(cls, threads):
    # 300 MB of 5,000-byte keys would be held at once without the bytes limit; with it a
    # segment ends at about 4 MiB a thread.
    long = [f"{i:05d}" + "x" * 4995 for i in range(3000)]
    huge = "y" * (8 << 20)  # one key larger than a segment's byte limit goes in whole
    keys = long[:1000] + [huge] + long[1000:]
    f = cls(10_000)
    assert f.add_many(keys, threads=threads) == len(keys)
    assert len(f) == len(keys)
    assert f.contains_many(iter(keys), threads=threads).all()
    assert huge in f and huge.encode() in f
    assert f.discard_many(tuple(keys), threads=threads) == len(keys) and len(f) == 0


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("kind", ["list", "tuple", "object array", "generator"])
def test_a_bad_key_stops_the_call_after_the_keys_before_it(kind, threads):
    good = [f"k-{i}" for i in range(70_000)]
    for bad, error, message in [
        (1.5, TypeError, "not float"),
        (None, TypeError, "not NoneType"),
        ([b"x"], TypeError, "not list"),
        ("lone \ud800 surrogate", UnicodeEncodeError, "surrogate"),
        (2**64, ValueError, "out of range"),
    ]:
        f = ConcurrentCuckooFilter(200_000)
        source = as_inputs(good + [bad] + ["after-1", "after-2"])[kind]
        with pytest.raises(error, match=message):
            f.add_many(source, threads=threads)
        # Every key before the bad one went in, none after it.
        assert len(f) == len(good)
        assert f.contains_many(good).all()
        assert "after-1" not in f and "after-2" not in f


class Clearing(type):
    """A metaclass whose `__name__`, read for the error message, empties the list being read
    and collects garbage, freeing the keys the list held."""

    victim: list = []

    @property
    def __name__(cls):
        Clearing.victim.clear()
        gc.collect()
        return "Clearing"


class Evil(metaclass=Clearing):
    pass


def test_python_code_that_changes_the_list_during_a_call_is_harmless():
    f = ConcurrentCuckooFilter(1000)
    keys = [f"fresh-{i}-" + "z" * 40 for i in range(100)]
    victim = keys[:50] + [Evil()] + keys[50:]
    Clearing.victim = victim
    del keys
    with pytest.raises(TypeError, match="Clearing"):
        f.add_many(victim)
    assert victim == [] and len(f) == 50
    assert f.contains_many([f"fresh-{i}-" + "z" * 40 for i in range(50)]).all()


class Sleepy(np.int64):
    """A key whose conversion runs Python code that lets other threads run."""

    def __int__(self):
        time.sleep(0.0002)
        return super().__int__()


def test_another_thread_changing_the_list_while_a_key_runs_code_is_harmless():
    f = ConcurrentCuckooFilter(100_000)
    added = 0
    for round in range(5):
        keys = [f"r{round}-{i}" if i % 3 else Sleepy(i) for i in range(1500)]
        stop = threading.Event()

        def change():
            while not stop.is_set():
                if keys:
                    keys.pop()
                keys.insert(0, f"new-{time.monotonic_ns()}")
                gc.collect(0)

        other = threading.Thread(target=change)
        other.start()
        try:
            # Items read as they are at the moment of their read, each counted as it went in.
            added += f.add_many(keys)
        finally:
            stop.set()
            other.join()
    assert added > 0 and len(f) == added


def test_a_view_claiming_more_keys_than_memory_holds_answers_for_is_a_memory_error(tmp_path):
    # 2**40 keys of a stride-0 view (32 bytes of data), in a child whose address space is
    # limited to what it has plus 1 GiB: contains_many cannot hold a TiB of answers, and says
    # so at once rather than growing until the allocator aborts or the kernel kills it.
    out = in_one_more_gib(tmp_path, (
        "huge = as_strided(np.arange(4, dtype=np.uint64), shape=(1 << 40,), strides=(0,))\n"
        "f = ccfilter.ConcurrentCuckooFilter(1000)\n"
        "try:\n"
        "    f.contains_many(huge)\n"
        "except MemoryError as err:\n"
        "    print('MemoryError', err)\n"
        "print(f.add_many(huge[:8]), len(f))\n"
        # Any input that says its length: a view of that array, a range.
        "for keys in (memoryview(huge), range(1 << 40)):\n"
        "    try:\n"
        "        f.contains_many(keys)\n"
        "    except MemoryError as err:\n"
        "        print('MemoryError', err)\n"
    ))
    assert out.stdout.splitlines() == [
        f"MemoryError no memory for the answers to {1 << 40} keys",
        "8 8",
        f"MemoryError no memory for the answers to {1 << 40} keys",
        f"MemoryError no memory for the answers to {1 << 40} keys",
    ], out.stderr


def test_a_narrow_or_foreign_order_array_is_widened_a_segment_at_a_time(tmp_path):
    # 2**27 keys of a stride-0 `int32` view and of a big-endian one, in a child whose address
    # space is limited to what it has plus 1 GiB: widening the whole array would take 1 GiB
    # for what holds 4 bytes; a segment at a time, the calls run in little memory.
    out = in_one_more_gib(tmp_path, (
        "f = ccfilter.ConcurrentCuckooFilter(1000)\n"
        "f.add(-7)\n"
        "for dtype in ('<i4', '>i8'):\n"
        "    huge = as_strided(np.array([-7], dtype=dtype), shape=(1 << 27,), strides=(0,))\n"
        "    print(int(f.contains_many(huge, threads=2).sum()), f.discard_many(huge[:3]))\n"
        "    f.add_many(huge[:3])\n"
    ))
    assert out.stdout.splitlines() == [f"{1 << 27} 1", f"{1 << 27} 3"], out.stderr


def in_one_more_gib(tmp_path, body):
    """Runs `body` in a child whose address space is limited to what it has plus 1 GiB, with
    numpy, ccfilter and `as_strided` imported; fails unless it exits 0."""
    script = (
        "import resource, numpy as np, ccfilter\n"
        "from numpy.lib.stride_tricks import as_strided\n"
        "size = int(open('/proc/self/statm').read().split()[0]) * resource.getpagesize()\n"
        "resource.setrlimit(resource.RLIMIT_AS, (size + (1 << 30),) * 2)\n"
    ) + body
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
        cwd=tmp_path,  # not python/, whose source package has no native module
    )
    assert out.returncode == 0, out.stderr
    return out
