"""Bytes, files, pickles, copies and merges."""

from __future__ import annotations

import copy
import errno
import os
import pickle
import shutil
import socket
import subprocess
import sys
import tempfile

import numpy as np
import pytest
from conftest import distinct_keys
from hypothesis import given, settings
from hypothesis import strategies as st

import ccfilter
from ccfilter import ConcurrentCuckooFilter, ExpiringCuckooFilter, FilterFullError, GrowableCuckooFilter

FILTERS = [ConcurrentCuckooFilter, GrowableCuckooFilter]


def filled(cls, n=5000, start=0, **kwargs):
    f = cls(10_000, **kwargs)
    f.add_many(distinct_keys(n, start))
    f.add_many(["text", b"bytes"])
    return f


def same_answers(a, b):
    probe = distinct_keys(20_000)
    return (a.contains_many(probe) == b.contains_many(probe)).all() and len(a) == len(b)


@pytest.mark.parametrize("cls", FILTERS)
def test_round_trips_keep_every_answer(cls, tmp_path):
    f = filled(cls, seed=99)
    copies = [
        cls.from_bytes(f.to_bytes()),
        cls.from_bytes(bytearray(f.to_bytes())),
        cls.from_bytes(memoryview(f.to_bytes())),
        pickle.loads(pickle.dumps(f)),
        f.copy(),
        copy.copy(f),
        copy.deepcopy(f),
    ]
    f.save(tmp_path / "f.ccf")
    copies += [cls.load(tmp_path / "f.ccf"), ccfilter.load(str(tmp_path / "f.ccf"))]
    for other in copies:
        assert type(other) is cls
        assert same_answers(f, other) and other.seed == 99
        assert "text" in other and "bytes" in other
    # Copies are independent.
    copies[0].add("only in the copy")
    assert "only in the copy" not in f or len(f) != len(copies[0])


@pytest.mark.parametrize("cls", FILTERS)
def test_corrupt_or_truncated_bytes_raise_value_error(cls):
    data = filled(cls).to_bytes()
    for bad in (b"", data[:10], data[: len(data) // 2], b"not a filter" * 10):
        with pytest.raises(ValueError, match="not a valid filter encoding"):
            cls.from_bytes(bad)
    flipped = bytearray(data)
    flipped[len(flipped) // 2] ^= 0xFF
    flipped[-1] ^= 0xFF
    with pytest.raises(ValueError):
        cls.from_bytes(bytes(flipped))
    with pytest.raises(TypeError, match="data must be a bytes-like object, not str"):
        cls.from_bytes("a str")
    with pytest.raises(TypeError, match="data must be a bytes-like object, not int"):
        cls.from_bytes(12)


def test_each_kind_refuses_the_others_bytes(tmp_path):
    # Saying which class the bytes are of and what reads them, in Python's terms.
    classes = [ConcurrentCuckooFilter, GrowableCuckooFilter, ExpiringCuckooFilter]
    for made in classes:
        f = made(items=100) if made is ExpiringCuckooFilter else filled(made)
        f.save(tmp_path / "f.ccf")
        name = made.__name__
        article = "an" if name[0] in "AEIOU" else "a"
        for cls in classes:
            if cls is made:
                continue
            with pytest.raises(ValueError, match=f"^not a valid filter encoding: these are the bytes of {article} {name}: read them with {name}.from_bytes$"):
                cls.from_bytes(f.to_bytes())
            with pytest.raises(ValueError, match=f": not a valid filter encoding: these are the bytes of {article} {name}: read them with {name}.load or ccfilter.load$"):
                cls.load(tmp_path / "f.ccf")


# Every load, by the name a child process calls it by.
LOADS = ["ccfilter.ConcurrentCuckooFilter.load", "ccfilter.GrowableCuckooFilter.load", "ccfilter.load"]


@pytest.mark.parametrize("load", LOADS)
def test_load_errors_carry_errno_and_filename(load, tmp_path):
    load = eval(load, {"ccfilter": ccfilter})
    missing = tmp_path / "missing"
    for path in (missing, str(missing), bytes(missing)):
        with pytest.raises(FileNotFoundError) as raised:
            load(path)
        assert raised.value.errno == errno.ENOENT
        assert os.fsdecode(raised.value.filename) == str(missing)
    with pytest.raises(IsADirectoryError) as raised:
        load(os.fsencode(tmp_path))
    assert raised.value.errno == errno.EISDIR and raised.value.filename == str(tmp_path)
    with pytest.raises(TypeError, match="path must be a str, bytes or os.PathLike, not int"):
        load(1)
    (tmp_path / "bad").write_bytes(b"not a filter" * 10)
    with pytest.raises(ValueError, match="bad.*not a valid filter encoding"):
        load(tmp_path / "bad")


@pytest.mark.parametrize("load", LOADS)
def test_load_refuses_a_fifo_or_device_at_once(load, tmp_path):
    # In a child process, so that a load that blocks fails this test rather than hanging it.
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    script = (
        f"import sys, ccfilter\nload = {load}\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n"
        "        load(path)\n"
        "    except OSError as err:\n"
        "        print(err.errno, err.filename, err.strerror)\n"
    )
    # A socket cannot be opened at all (ENXIO, "No such device or address"): named as what it is.
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock"))
    try:
        out = subprocess.run(
            [sys.executable, "-c", script, str(fifo), "/dev/zero", str(tmp_path / "sock")],
            capture_output=True, text=True, timeout=120, check=True, cwd=tmp_path,
        )
    finally:
        sock.close()
    assert out.stdout.splitlines() == [
        f"{errno.EINVAL} {fifo} not a regular file but a FIFO",
        f"{errno.EINVAL} /dev/zero not a regular file but a character device",
        f"{errno.EINVAL} {tmp_path / 'sock'} not a regular file but a socket",
    ], out.stderr


@pytest.mark.parametrize("load", LOADS)
def test_load_refuses_a_huge_file_by_its_header_in_bounded_memory(load, tmp_path):
    # A sparse 4 GiB file of zeros, loaded in a child whose address space is limited to what it
    # has plus 512 MiB: refused by its first bytes, without reading the rest.
    zeros = tmp_path / "zeros"
    with open(zeros, "wb") as file:
        file.truncate(4 << 30)
    script = (
        f"import resource, sys, ccfilter\nload = {load}\n"
        "size = int(open('/proc/self/statm').read().split()[0]) * resource.getpagesize()\n"
        "resource.setrlimit(resource.RLIMIT_AS, (size + (512 << 20),) * 2)\n"
        "try:\n"
        "    load(sys.argv[1])\n"
        "except BaseException as err:\n"
        "    print(type(err).__name__, err)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(zeros)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )
    print(out.stdout, out.stderr)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ValueError") and "bad magic" in out.stdout


@pytest.mark.parametrize("cls", FILTERS)
def test_a_file_with_bytes_after_the_filter_is_refused(cls, tmp_path):
    path = tmp_path / "f.ccf"
    filled(cls).save(path)
    with open(path, "ab") as file:
        file.write(b"\0" * 1000)
    for load in (cls.load, ccfilter.load):
        with pytest.raises(ValueError, match="1000 trailing bytes"):
            load(path)


def test_a_failed_save_leaves_the_destination_alone(tmp_path):
    f = filled(ConcurrentCuckooFilter)
    target = tmp_path / "no such dir" / "f.ccf"
    with pytest.raises(FileNotFoundError) as raised:
        f.save(target)
    assert raised.value.errno == errno.ENOENT and raised.value.filename == str(target)
    assert str(target) in str(raised.value)
    (tmp_path / "f.ccf").write_bytes(b"old")
    f.save(tmp_path / "f.ccf")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.ccf"]  # no temporary left
    assert same_answers(f, ConcurrentCuckooFilter.load(tmp_path / "f.ccf"))


# A process allowed half a filter's bytes more than it has: `save` raises `MemoryError`, the
# file it would have replaced untouched and no temporary file left; with the room back it saves.
SAVE_WITHOUT_ROOM = """
import os, resource, sys
import numpy as np
import ccfilter
for f in (ccfilter.ConcurrentCuckooFilter(10_000_000), ccfilter.GrowableCuckooFilter(10_000_000),
          ccfilter.ExpiringCuckooFilter(items=10_000_000)):
    f.add_many(np.arange(100_000, dtype=np.uint64))
    n = f.stats().get("serialized_len") or f.memory_usage
    size = int(next(l for l in open("/proc/self/status") if l.startswith("VmSize:")).split()[1])
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (size * 1024 + n // 2, hard))
    try:
        f.save("f.ccf")
        print("saved")
    except MemoryError:
        print("MemoryError")
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    assert sorted(os.listdir()) == ["f.ccf"] and open("f.ccf", "rb").read() == b"old"
    f.save("f.ccf")
    assert ccfilter.load("f.ccf") == f
    open("f.ccf", "wb").write(b"old")
"""


def test_save_without_memory_for_the_bytes_is_a_memory_error(tmp_path):
    (tmp_path / "f.ccf").write_bytes(b"old")
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "RUST_BACKTRACE": "0"}
    child = subprocess.run([sys.executable, "-c", SAVE_WITHOUT_ROOM], capture_output=True,
                           text=True, env=env, timeout=120, cwd=tmp_path)
    assert child.returncode == 0 and child.stdout == "MemoryError\n" * 3, child.stderr


def test_save_replaces_only_a_regular_file_of_its_own_making(tmp_path):
    f = filled(ConcurrentCuckooFilter)
    # A file or link already at a temporary name (a link planted there, a file left by a save
    # killed in an earlier process of the same id) is not followed, written or removed, nor
    # does it stop the save: the next name is taken.
    script = (
        "import os, sys, ccfilter\n"
        "d = sys.argv[1]\n"
        "os.symlink(os.path.join(d, 'victim'), os.path.join(d, f'.f.ccf.{os.getpid()}.0.tmp'))\n"
        "with open(os.path.join(d, f'.f.ccf.{os.getpid()}.1.tmp'), 'wb') as left:\n"
        "    left.write(b'left by a killed save')\n"
        "f = ccfilter.ConcurrentCuckooFilter(10)\n"
        "f.add('key')\n"
        "f.save(os.path.join(d, 'f.ccf'))\n"
    )
    (tmp_path / "victim").write_bytes(b"precious")
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert "key" in ConcurrentCuckooFilter.load(tmp_path / "f.ccf")
    assert (tmp_path / "victim").read_bytes() == b"precious"
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == ["f.ccf", "victim"]
    squatters = sorted(p for p in tmp_path.iterdir() if p.name.endswith(".tmp"))
    assert [p.name.split(".")[-2] for p in squatters] == ["0", "1"]
    assert squatters[0].is_symlink() and squatters[1].read_bytes() == b"left by a killed save"
    # With every name it tries taken, the save fails saying so, as FileExistsError.
    crowded = tmp_path / "crowded"
    crowded.mkdir()
    script = (
        "import errno, os, sys, ccfilter\n"
        "for call in range(100):\n"
        "    open(f'.f.ccf.{os.getpid()}.{call}.tmp', 'wb').close()\n"
        "try:\n"
        "    ccfilter.ConcurrentCuckooFilter(10).save('f.ccf')\n"
        "except FileExistsError as err:\n"
        "    print(err.errno == errno.EEXIST, err.filename, err.strerror)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600, cwd=crowded,
    )
    assert out.stdout == "True f.ccf no free name for a temporary file beside it: 100 taken\n", out.stderr
    assert len(list(crowded.iterdir())) == 100
    # A replaced file keeps its permissions; a link is followed to the file it names.
    private = tmp_path / "private.ccf"
    f.save(private)
    os.chmod(private, 0o600)
    f.save(private)
    assert os.stat(private).st_mode & 0o777 == 0o600
    link = tmp_path / "link.ccf"
    link.symlink_to("private.ccf")
    g = filled(ConcurrentCuckooFilter, start=7)
    g.save(link)
    assert link.is_symlink() and same_answers(g, ConcurrentCuckooFilter.load(private))
    dangling = tmp_path / "dangling.ccf"
    dangling.symlink_to("made.ccf")
    g.save(dangling)
    assert dangling.is_symlink() and same_answers(g, ConcurrentCuckooFilter.load(tmp_path / "made.ccf"))
    # A FIFO is not replaced by a regular file, nor blocked on.
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="FIFO") as raised:
        f.save(fifo)
    assert raised.value.filename == str(fifo) and fifo.is_fifo()
    left = sorted(p for p in tmp_path.iterdir() if p.name.endswith(".tmp"))
    assert left == squatters  # kept, and no temporary file of a failed save


def test_save_never_replaces_a_file_its_caller_may_not_write():
    # A read-only file in a directory anyone may write to: renaming over it would replace what
    # `open(path, "w")` refuses to change. As root, the save runs as nobody (imports done first).
    shared_dir = tempfile.mkdtemp(prefix="ccfilter-perm-", dir="/tmp")
    try:
        os.chmod(shared_dir, 0o777)
        path = os.path.join(shared_dir, "f.ccf")
        filled(ConcurrentCuckooFilter).save(path)
        os.chmod(path, 0o444)
        before = open(path, "rb").read()
        script = (
            "import os, sys, numpy, ccfilter\n"
            "if os.getuid() == 0:\n"
            "    os.setgid(65534)\n"
            "    os.setuid(65534)\n"
            "f = ccfilter.ConcurrentCuckooFilter(10)\n"
            "f.add('new')\n"
            "try:\n"
            "    f.save(sys.argv[1])\n"
            "    print('replaced')\n"
            "except PermissionError as err:\n"
            "    print(err.errno, err.filename)\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", script, path],
            capture_output=True, text=True, timeout=600, cwd=shared_dir,
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout == f"{errno.EACCES} {path}\n"
        assert open(path, "rb").read() == before
        assert os.listdir(shared_dir) == ["f.ccf"]
    finally:
        shutil.rmtree(shared_dir)


@pytest.mark.parametrize("cls", FILTERS)
def test_merge_is_the_union_of_compatible_filters(cls):
    a = cls(20_000)
    b = cls(20_000)
    a.add_many(distinct_keys(5000))
    b.add_many(distinct_keys(5000, start=5000))
    assert a.is_compatible(b) and b.is_compatible(a)
    union = a | b
    assert type(union) is cls
    # A key of b that a already answers for (a false positive) adds nothing to the union.
    assert 10_000 - 20 <= len(union) <= 10_000 and len(a) == 5000
    assert union.contains_many(distinct_keys(10_000)).all()
    assert a.merge(b) == 5000 and len(a) == 10_000  # merge(unique=False) adds every copy
    probe = distinct_keys(20_000)
    assert (a.contains_many(probe) == union.contains_many(probe)).all()
    a.merge(b)
    assert len(a) == 15_000
    # As a set union: nothing already present goes in again.
    c = cls(20_000)
    c.add_many(distinct_keys(5000))
    assert c.merge(union, unique=True) <= 5000
    assert len(c) <= 10_000 and c.contains_many(distinct_keys(10_000)).all()


@pytest.mark.parametrize("cls", FILTERS)
def test_or_is_a_set_union(cls, tmp_path):
    f = cls(20_000)
    f.add_many(distinct_keys(10_000))
    f.save(tmp_path / "f.ccf")
    same = cls.load(tmp_path / "f.ccf")
    before = len(f)
    f |= same
    print("len before and after f |= (f's own file):", before, len(f))
    assert len(f) == before
    # Half full: a union of a filter with itself takes no room.
    assert len(f | f) == before
    x, y = cls(1000), cls(1000)
    x.add_many(["k", "x"])
    y.add_many(["k", "y"])
    x |= y
    assert len(x) == 3 and "y" in x
    assert x.discard("k") and "k" not in x


# Distinct within a list: two buckets hold at most eight copies of one key, and a key may come
# up in both lists and under two spellings (a str and its UTF-8 bytes, an int and its 64-bit
# pattern), so at most four copies meet in the merged filter.
merge_keys = st.lists(
    st.one_of(st.integers(min_value=-(2**63), max_value=2**64 - 1), st.text(max_size=12),
              st.binary(max_size=12)),
    max_size=60,
    unique=True,
)


@pytest.mark.parametrize("cls", FILTERS)
@settings(max_examples=60, deadline=None)
@given(ours=merge_keys, theirs=merge_keys, unique=st.booleans())
def test_a_merged_filter_finds_every_key_of_both(cls, ours, theirs, unique):
    a, b = cls(1000, seed=7), cls(1000, seed=7)
    a.add_many(ours)
    b.add_many(theirs)
    merged = a.merge(b, unique=unique)
    if unique:
        assert merged <= len(theirs) and len(a) == len(ours) + merged
    else:
        assert merged == len(theirs) and len(a) == len(ours) + len(theirs)
    everything = ours + theirs
    assert all(key in a for key in everything)  # no false negatives
    assert a.contains_many(everything).all() if everything else True
    assert len(b) == len(theirs)  # the source is unchanged


def test_a_growable_merge_adds_the_levels_the_source_has():
    a, b = GrowableCuckooFilter(1000), GrowableCuckooFilter(1000)
    b.add_many(distinct_keys(300_000))
    assert b.level_count == 2 and a.level_count == 1
    assert a.merge(b) == 300_000
    assert a.level_count == 2 and len(a) == 300_000
    assert a.contains_many(distinct_keys(300_000)).all()
    assert same_answers(a, b)
    # The last level has room still: keys of a's own go in after the merge.
    a.add_many(distinct_keys(1000, start=300_000))
    assert a.contains_many(distinct_keys(301_000)).all()


@pytest.mark.parametrize(
    ("cls", "shape"),
    [(ConcurrentCuckooFilter, {"capacity": 100}), (GrowableCuckooFilter, {"capacity": 100_000}),
     (GrowableCuckooFilter, {"capacity": 10_000, "split_depth": 5})],
)
def test_merge_refuses_incompatible_filters(cls, shape):
    a = cls(10_000)
    for other in (cls(**shape), cls(10_000, seed=1)):
        other.add(1)
        assert not a.is_compatible(other)
        with pytest.raises(ValueError, match="differ|hasher"):
            a.merge(other)
        with pytest.raises(ValueError, match="differ|hasher"):
            a |= other
        assert len(a) == 0
    other_kind = GrowableCuckooFilter if cls is ConcurrentCuckooFilter else ConcurrentCuckooFilter
    with pytest.raises(TypeError):
        a.merge(other_kind(10))
    with pytest.raises(TypeError):
        a |= other_kind(10)


def test_a_full_target_says_how_much_went_in_and_keeps_it():
    full = ConcurrentCuckooFilter(10_000)
    full.add_many(distinct_keys(full.capacity))
    with pytest.raises(FilterFullError) as raised:
        full.merge(filled(ConcurrentCuckooFilter, n=5000, start=10**6))
    assert len(full) == full.capacity + raised.value.inserted
    assert full.contains_many(distinct_keys(full.capacity)).all()

    # A growable level holds 2**split_depth times its first size, and a fingerprint stays in
    # its level: two filters whose first levels are nearly full do not fit one.
    a, b = GrowableCuckooFilter(1000, split_depth=1), GrowableCuckooFilter(1000, split_depth=1)
    a.add_many(distinct_keys(7000))
    b.add_many(distinct_keys(7000, start=10**6))
    assert a.level_count == b.level_count == 1
    with pytest.raises(FilterFullError) as raised:
        a.merge(b)
    assert len(a) == 7000 + raised.value.inserted
    assert a.contains_many(distinct_keys(7000)).all()


def test_pickled_filters_answer_in_another_process(tmp_path):
    f = filled(ConcurrentCuckooFilter)
    script = (
        "import pickle, sys, numpy as np; f = pickle.load(sys.stdin.buffer); "
        "print(len(f), 'text' in f, b'bytes' in f)"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], input=pickle.dumps(f), capture_output=True, check=True, cwd=tmp_path
    )
    assert out.stdout.split() == [str(len(f)).encode(), b"True", b"True"]
    assert np.asarray(f.contains_many(distinct_keys(5000))).all()


@pytest.mark.parametrize("cls", FILTERS)
def test_filters_are_equal_by_content_and_unhashable(cls, tmp_path):
    f = filled(cls)
    assert f == f and f == f.copy() and f == pickle.loads(pickle.dumps(f))
    f.save(tmp_path / "f.ccf")
    assert f == cls.load(tmp_path / "f.ccf")
    g = f.copy()
    g.add("one more")
    assert f != g and not f == g
    g.discard("one more")
    assert f == g
    assert f != cls(10_000) and f != filled(cls, seed=1) and f != f.to_bytes() and f != 1
    with pytest.raises(TypeError, match="unhashable"):
        hash(f)


@pytest.mark.parametrize("cls", FILTERS)
def test_protocol_5_hands_the_bytes_out_of_band(cls):
    f = filled(cls)
    buffers = []
    data = pickle.dumps(f, protocol=5, buffer_callback=buffers.append)
    # The pickle holds the call alone; the filter's bytes are the one buffer, uncopied.
    assert len(buffers) == 1 and len(data) < 200
    assert buffers[0].raw().tobytes() == f.to_bytes()
    assert pickle.loads(data, buffers=buffers) == f
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(f, protocol=protocol)) == f


def test_to_bytes_and_pickling_take_one_copy_of_the_filter(tmp_path):
    # Each call in a process of its own: the peak resident memory it adds, in filter sizes.
    script = """
import pickle, resource, sys
import numpy as np
from ccfilter import ConcurrentCuckooFilter
f = ConcurrentCuckooFilter(40_000_000)
f.add_many(np.arange(1_000_000, dtype=np.uint64))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
exec(sys.argv[1])
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024 / f.memory_usage)
"""
    calls = [
        "b = f.to_bytes()",
        "pickle.dump(f, open('f.pkl', 'wb'))",
        "b = pickle.dumps(f, protocol=5, buffer_callback=[].append)",
    ]
    added = {}
    for call in calls:
        out = subprocess.run(
            [sys.executable, "-c", script, call], capture_output=True, check=True, cwd=tmp_path
        )
        added[call] = float(out.stdout)
    assert all(copies < 1.4 for copies in added.values()), added


def test_to_bytes_of_a_filter_growing_meanwhile_is_a_whole_filter():
    import threading

    f = GrowableCuckooFilter(1000)
    failures = []
    done = threading.Event()

    def grow():
        try:
            for start in range(0, 400_000, 1000):
                f.add_many(np.arange(start, start + 1000, dtype=np.uint64))
        except BaseException as err:  # noqa: BLE001 - re-raised by the test
            failures.append(err)
        finally:
            done.set()

    worker = threading.Thread(target=grow)
    worker.start()
    copies = 0
    while not done.is_set() or copies == 0:
        # Measured, then written: a filter that grew in between is measured and written again.
        data = f.to_bytes()
        assert GrowableCuckooFilter.from_bytes(data).to_bytes() == data
        copies += 1
    worker.join(timeout=60)
    assert not worker.is_alive() and not failures, failures
    assert f.level_count > 1 and GrowableCuckooFilter.from_bytes(f.to_bytes()) == f
