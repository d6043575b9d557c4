"""Filters in live files shared by processes (docs/shared.md): `multiprocessing` pools of 2 and
4 processes adding and checking keys on one file, a writer killed with SIGKILL mid-stream,
pickles that reopen the file, a Dask cluster of processes, `load` mapping a live file, and bad
files. Processes are started by `spawn`: none inherits a filter another opened."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import shutil
import signal
import subprocess
import stat
import sys
import tempfile
import threading
import time
import traceback

import numpy as np
import pytest
from conftest import distinct_keys

import ccfilter
from ccfilter import ConcurrentCuckooFilter, ExpiringCuckooFilter, GrowableCuckooFilter

pytestmark = pytest.mark.skipif(
    not os.uname().sysname == "Linux", reason="live files need Linux (mmap, OFD locks)"
)

CONTEXT = multiprocessing.get_context("spawn")
PER_PROCESS = 20_000
LAYOUTS = {"bucket words": {}, "packed": {"false_positive_rate": 0.001}}


@pytest.fixture
def live_path(tmp_path):
    """A path for a live file; in /dev/shm where there is one, as docs/shared.md advises."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") else str(tmp_path)
    path = os.path.join(base, f"ccfilter-test-{os.getpid()}-{time.monotonic_ns()}.live")
    yield path
    if os.path.exists(path):
        os.unlink(path)


def keys_of(worker: int) -> np.ndarray:
    return distinct_keys(PER_PROCESS, start=worker * PER_PROCESS)


def add_and_check(args) -> tuple[int, int]:
    """In a pool worker: adds this worker's keys (half one by one, half in bulk, on a filter
    unpickled from the parent: the same file, reopened), removes every fourth, then looks up
    its keys. Returns (false negatives, keys it left in)."""
    shared, worker = args
    assert shared.is_shared and not shared.readonly
    keys = keys_of(worker)
    half = len(keys) // 2
    for key in keys[:half].tolist():
        shared.add(key)
    shared.add_many(keys[half:])
    removed = keys[::4]
    assert shared.discard_many(removed) == len(removed)
    kept = np.setdiff1d(keys, removed)
    missing = int((~shared.contains_many(kept)).sum())
    missing += sum(1 for key in kept[:1000].tolist() if key not in shared)
    return missing, len(kept)


@pytest.mark.parametrize("processes", [2, 4])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_pool_of_processes_shares_one_file(live_path, processes, layout):
    shared = ccfilter.create_shared(live_path, processes * PER_PROCESS, **LAYOUTS[layout])
    with CONTEXT.Pool(processes) as pool:
        results = pool.map(add_and_check, [(shared, w) for w in range(processes)])
    assert [missing for missing, _ in results] == [0] * processes
    kept = sum(count for _, count in results)
    assert len(shared) == kept
    for worker in range(processes):
        keys = keys_of(worker)
        assert shared.contains_many(np.setdiff1d(keys, keys[::4])).all()
    shared.verify()
    again = ccfilter.open_shared(live_path)
    assert len(again) == kept and again == shared


def add_acknowledging(path, worker, connection) -> None:
    """In a process: opens the file and adds this worker's keys one at a time, sending each
    key over the pipe after its `add` returned; then sends None."""
    shared = ccfilter.open_shared(path)
    for key in keys_of(worker).tolist():
        shared.add(key)
        connection.send(key)
    connection.send(None)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_writer_killed_mid_stream_loses_no_acknowledged_key(live_path, layout):
    writers = 3
    shared = ccfilter.create_shared(live_path, writers * PER_PROCESS * 4, **LAYOUTS[layout])
    total = 0
    for round_ in range(3):
        pipes = [CONTEXT.Pipe(duplex=False) for _ in range(writers)]
        workers = [
            CONTEXT.Process(
                target=add_acknowledging, args=(live_path, round_ * writers + w, pipes[w][1])
            )
            for w in range(writers)
        ]
        for worker in workers:
            worker.start()
        for _, sending in pipes:
            sending.close()
        acknowledged = [[] for _ in range(writers)]
        victim = 0
        # Reads the victim's acknowledgements until it is well into its stream, then kills it.
        while len(acknowledged[victim]) < 2_000 + 1_500 * round_:
            acknowledged[victim].append(pipes[victim][0].recv())
        os.kill(workers[victim].pid, signal.SIGKILL)
        workers[victim].join(timeout=30)
        assert workers[victim].exitcode == -signal.SIGKILL
        while True:
            try:
                key = pipes[victim][0].recv()
            except EOFError:
                break
            acknowledged[victim].append(key)
        # The others go on to the end.
        for w in range(1, writers):
            while (key := pipes[w][0].recv()) is not None:
                acknowledged[w].append(key)
            workers[w].join(timeout=60)
            assert workers[w].exitcode == 0
            assert len(acknowledged[w]) == PER_PROCESS
        shared.verify()  # recovers every stripe the killed writer held
        for w in range(writers):
            acks = np.array([k for k in acknowledged[w] if k is not None], dtype=np.uint64)
            assert shared.contains_many(acks).all(), f"round {round_}, writer {w}"
        total += sum(len([k for k in acks if k is not None]) for acks in acknowledged)
        # docs/shared.md: a kill can leave the insert it was doing and a second copy of a
        # fingerprint it was moving.
        assert total <= len(shared) <= total + 3 * (round_ + 1)


def write_after_fork(inherited, connection) -> None:
    """In a child made by `fork`: tries each call that reads or writes the table of the filter
    it inherited and sends what each raised; then reopens the file (by the path the inherited
    filter gives, and by a pickle) and adds keys, acknowledging each."""
    calls = {
        "in": lambda: "k" in inherited,
        "count": lambda: inherited.count("k"),
        "contains_many": lambda: inherited.contains_many(np.arange(3)),
        "add": lambda: inherited.add(-1),
        "add_many": lambda: inherited.add_many(np.arange(3)),
        "discard": lambda: inherited.discard(-1),
        "clear": inherited.clear,
        "copy": inherited.copy,
        "to_bytes": inherited.to_bytes,
        "verify": inherited.verify,
    }
    for name, call in calls.items():
        try:
            call()
            connection.send((name, None))
        except Exception as err:  # noqa: BLE001 - sent to the parent, which checks it
            connection.send((name, f"{type(err).__name__}: {err}"))
    assert len(inherited) >= 1 and inherited.is_shared and not inherited.readonly
    assert "k" in pickle.loads(pickle.dumps(inherited))
    shared = ccfilter.open_shared(inherited.path)
    for key in keys_of(1).tolist():
        shared.add(key)
        connection.send(key)


def test_a_forked_child_reopens_the_file_and_its_kill_costs_the_parent_a_bounded_wait(
    live_path, tmp_path, monkeypatch
):
    # docs/python.md: a child made by fork reopens the file; the filter it inherited holds the
    # parent's registration, under which a killed child's stripes would look held by the live
    # parent for ever. Each call on its table (a contended lookup locks too) raises, saying to
    # reopen.
    monkeypatch.chdir(tmp_path)
    context = multiprocessing.get_context("fork")
    shared = ccfilter.create_shared(live_path, 4 * PER_PROCESS, 0.001)
    shared.add("k")
    receiving, sending = context.Pipe(duplex=False)
    child = context.Process(target=write_after_fork, args=(shared, sending))
    child.start()
    sending.close()
    for _ in range(10):
        name, raised = receiving.recv()
        assert raised is not None and raised.startswith("RuntimeError"), (name, raised)
        assert live_path in raised and "open_shared" in raised, raised
    acknowledged = [receiving.recv() for _ in range(3_000)]
    os.kill(child.pid, signal.SIGKILL)
    child.join(timeout=30)
    assert child.exitcode == -signal.SIGKILL
    while True:
        try:
            acknowledged.append(receiving.recv())
        except EOFError:
            break
    # The parent goes on: each stripe the child held costs it the liveness bound, not for ever.
    finished = []

    def write_and_verify():
        shared.add_many(keys_of(2))
        shared.verify()
        finished.append(True)

    writer = threading.Thread(target=write_and_verify, daemon=True)
    writer.start()
    writer.join(timeout=60)
    assert finished, "the parent waited for ever on the killed child's stripes"
    assert "k" in shared and shared.contains_many(np.array(acknowledged, dtype=np.uint64)).all()
    assert shared.contains_many(keys_of(2)).all()
    assert shared.add("in the parent") is None


# A writer that forks a child (which reopens the file, as docs/python.md says) and then writes
# on, mostly inside `clear()`, which holds every stripe: killed, it most likely holds some.
FORKING_WRITER = """
import multiprocessing, sys
import numpy as np
import ccfilter
shared = ccfilter.create_shared(sys.argv[1], 1 << 22, 0.001)
def child(ready):
    reopened = ccfilter.open_shared(sys.argv[1])
    ready.set()
    keys = np.arange(1 << 40, (1 << 40) + 1000, dtype=np.uint64)
    while True:
        reopened.add_many(keys)
        reopened.discard_many(keys)
context = multiprocessing.get_context("fork")
ready = context.Event()
forked = context.Process(target=child, args=(ready,))
forked.start()
ready.wait()
keys = np.arange(1 << 12, dtype=np.uint64)
shared.add_many(keys)
print(forked.pid, flush=True)
while True:
    shared.clear()
    shared.add_many(keys)
"""


def test_a_writer_killed_while_its_forked_child_runs_costs_the_others_a_bounded_wait(
    live_path, tmp_path
):
    # The child inherits the writer's registration (an OFD lock's open file description): kept,
    # the dead writer would look alive while the child runs, its stripes waited on for ever.
    for attempt in range(3):
        path = f"{live_path}.{attempt}"
        writer = subprocess.Popen([sys.executable, "-c", FORKING_WRITER, path], cwd=tmp_path,
                                  stdout=subprocess.PIPE, text=True)
        child = None
        try:
            child = int(writer.stdout.readline())
            os.kill(writer.pid, signal.SIGKILL)
            assert writer.wait(timeout=30) == -signal.SIGKILL
            survivor = ccfilter.open_shared(path)
            finished = []

            def verify_and_write():
                survivor.verify()  # locks every stripe, recovering the dead writer's
                survivor.add_many(np.arange(10_000, dtype=np.uint64))
                finished.append(True)

            worker = threading.Thread(target=verify_and_write, daemon=True)
            worker.start()
            worker.join(timeout=60)
            assert finished, f"attempt {attempt}: the dead writer's stripes were waited on for ever"
            assert survivor.contains_many(np.arange(10_000, dtype=np.uint64)).all()
        finally:
            writer.kill()
            writer.wait()
            if child is not None:
                os.kill(child, signal.SIGKILL)
            if os.path.exists(path):
                os.unlink(path)


def test_pickles_reopen_the_file_and_keep_readonly(live_path):
    shared = ccfilter.create_shared(live_path, 1000, seed=7)
    shared.add("k")
    copy = pickle.loads(pickle.dumps(shared))
    assert copy.is_shared and os.fspath(copy.path) == live_path and not copy.readonly
    copy.add("through the copy")
    assert "through the copy" in shared
    reader = pickle.loads(pickle.dumps(ccfilter.open_shared(live_path, readonly=True)))
    assert reader.readonly and "k" in reader
    with pytest.raises(TypeError, match="readonly"):
        reader.add("x")
    with pytest.raises(TypeError, match="readonly"):
        reader.add_many(np.arange(3))
    memory = ConcurrentCuckooFilter(1000)
    assert pickle.loads(pickle.dumps(memory)).path is None
    assert not memory.is_shared and memory.path is None and not memory.readonly
    # A copy of a live filter is in memory.
    assert not shared.copy().is_shared and shared.copy() == shared


def test_a_pickle_reopens_its_file_from_another_working_directory(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    shared = ccfilter.create_shared("seen.live", 1000)
    shared.add("in a")
    filters = [shared, ccfilter.open_shared("seen.live"), ccfilter.open_shared("seen.live", True)]
    # A worker whose working directory differs, where a file of the same name is another filter.
    monkeypatch.chdir(tmp_path / "b")
    ccfilter.create_shared("seen.live", 1000).add("in b")
    for filter in filters:
        assert os.fspath(filter.path) == str(tmp_path / "a" / "seen.live")
        copy = pickle.loads(pickle.dumps(filter))
        assert "in a" in copy and "in b" not in copy and copy.readonly == filter.readonly


def test_load_maps_a_live_file_and_copies_it_when_asked(live_path, tmp_path):
    shared = ccfilter.create_shared(live_path, 10_000)
    shared.add_many(np.arange(5_000))
    mapped = ccfilter.load(live_path)
    assert isinstance(mapped, ConcurrentCuckooFilter)
    assert mapped.is_shared and mapped.readonly and len(mapped) == 5_000
    shared.add("later")
    assert "later" in mapped
    copied = ccfilter.load(live_path, mmap=False)
    assert not copied.is_shared and copied == shared
    copied.add("only in the copy")
    assert "only in the copy" not in shared
    snapshot = tmp_path / "snapshot.ccf"
    shared.save(snapshot)
    assert ccfilter.load(snapshot) == shared and not ccfilter.load(snapshot).is_shared
    with pytest.raises(TypeError, match="mmap"):
        ccfilter.load(live_path, mmap=1)
    # The class methods read snapshots: a live file is refused saying what it is and what opens it.
    for cls in (ConcurrentCuckooFilter, GrowableCuckooFilter, ExpiringCuckooFilter):
        with pytest.raises(ValueError, match="is a live filter file, not a snapshot: open it with ccfilter.open_shared or ccfilter.load") as refused:
            cls.load(live_path)
        assert str(refused.value).startswith(f"{live_path}: ")


def test_bad_files_and_arguments_raise_clear_errors(live_path, tmp_path):
    with pytest.raises(FileNotFoundError) as missing:
        ccfilter.open_shared(tmp_path / "missing.live")
    assert missing.value.filename.endswith("missing.live")
    with pytest.raises(IsADirectoryError):
        ccfilter.open_shared(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="FIFO") as error:
        ccfilter.open_shared(fifo)
    assert error.value.filename == os.fspath(fifo)
    shared = ccfilter.create_shared(live_path, 1000)
    with pytest.raises(FileExistsError):
        ccfilter.create_shared(live_path, 1000)
    whole = open(live_path, "rb").read()
    truncated = tmp_path / "truncated.live"
    for length in [0, 100, 4096, len(whole) - 4096]:
        truncated.write_bytes(whole[:length])
        with pytest.raises(ValueError, match="truncated"):
            ccfilter.open_shared(truncated)
    truncated.write_bytes(whole[: len(whole) - 4096])
    with pytest.raises(ValueError, match="truncated.live"):
        ccfilter.load(truncated)
    flipped = bytearray(whole)
    flipped[70] ^= 4
    truncated.write_bytes(bytes(flipped))
    with pytest.raises(ValueError):
        ccfilter.open_shared(truncated)
    snapshot = tmp_path / "snapshot.ccf"
    shared.save(snapshot)
    with pytest.raises(ValueError, match="snapshot"):
        ccfilter.open_shared(snapshot)
    truncated.write_bytes(b"not a filter at all" * 100)
    with pytest.raises(ValueError):
        ccfilter.open_shared(truncated)
    with pytest.raises(TypeError, match="path"):
        ccfilter.open_shared(3)
    with pytest.raises(TypeError, match="readonly"):
        ccfilter.open_shared(live_path, readonly="yes")
    with pytest.raises(TypeError, match="capacity"):
        ccfilter.create_shared(tmp_path / "x.live", "many")
    with pytest.raises(ValueError, match="false_positive_rate|rate"):
        ccfilter.create_shared(tmp_path / "y.live", 100, 2.0)
    assert not (tmp_path / "y.live").exists()



def test_save_never_replaces_a_live_file(live_path):
    shared = ccfilter.create_shared(live_path, 1000)
    shared.add_many(np.arange(500))
    other = ccfilter.open_shared(live_path)
    whole = open(live_path, "rb").read()
    for filter, kind in [(shared, "its own"), (ConcurrentCuckooFilter(10), "another's")]:
        with pytest.raises(OSError, match="live filter file") as error:
            filter.save(live_path)
        assert error.value.filename == live_path, kind
        assert open(live_path, "rb").read() == whole, kind
    name = os.path.basename(live_path)
    left = [file for file in os.listdir(os.path.dirname(live_path)) if file.startswith(f".{name}")]
    assert not left
    other.add("after")
    assert "after" in ccfilter.open_shared(live_path) and all(k in shared for k in range(500))

def refused_read_write(path):
    """Opening `path` writable is refused naming it; read-only works."""
    with pytest.raises(PermissionError, match="readonly|ReadOnly") as error:
        ccfilter.open_shared(path)
    assert error.value.filename == path
    # Said in Python's words: the argument that opens it.
    assert "readonly=True needs only" in error.value.strerror
    assert "k" in ccfilter.open_shared(path, readonly=True)


def test_a_file_without_write_permission_opens_readonly_only():
    # A directory another user may enter (pytest's own are the owner's alone).
    directory = tempfile.mkdtemp(prefix="ccf-no-write-")
    os.chmod(directory, 0o755)
    try:
        check_refused_read_write(os.path.join(directory, "no-write.live"))
    finally:
        shutil.rmtree(directory)


def check_refused_read_write(live_path):
    shared = ccfilter.create_shared(live_path, 1000)
    shared.add("k")
    del shared
    os.chmod(live_path, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    if os.geteuid() != 0:
        refused_read_write(live_path)
        return
    # Root may write any file: the refusal is checked in a child that became `nobody`, where
    # the kernel refuses.
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            refused_read_write(live_path)
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the check run as nobody failed"


def add_range(shared, start, count):
    """On a Dask worker: adds `count` keys from `start` to the filter it unpickled."""
    assert shared.is_shared
    shared.add_many(distinct_keys(count, start=start))
    return os.getpid()


def test_dask_workers_on_this_machine_reopen_the_same_live_filter(live_path):
    distributed = pytest.importorskip("distributed")
    shared = ccfilter.create_shared(live_path, 100_000)
    with distributed.LocalCluster(
        processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        futures = client.map(add_range, [shared] * 8, range(0, 80_000, 10_000), [10_000] * 8)
        pids = set(client.gather(futures))
    assert os.getpid() not in pids
    assert len(shared) == 80_000
    assert shared.contains_many(distinct_keys(80_000)).all()


# A child allowed `room` times a filter's bytes of memory more than it has: each of `calls`
# raises `MemoryError`, rather than waiting forever, panicking or calling the bytes bad; with the
# memory back each works.
WITHOUT_ROOM = """
import resource, sys
import ccfilter
path, room, names = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
ro, again = ccfilter.load(path), ccfilter.load(path)
data = ro.to_bytes()
calls = {"to_bytes": ro.to_bytes, "==": lambda: ro == again, "verify": ro.verify,
         "from_bytes": lambda: ccfilter.ConcurrentCuckooFilter.from_bytes(data) == ro}
size = int(next(l for l in open("/proc/self/status") if l.startswith("VmSize:")).split()[1])
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
resource.setrlimit(resource.RLIMIT_AS, (size * 1024 + int(len(data) * room), hard))
for name in names:
    try:
        calls[name]()
        print("no error")
    except MemoryError:
        print("MemoryError")
resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
assert ro.to_bytes() == data and ro == again and calls["from_bytes"]()
ro.verify()
print("done")
"""


@pytest.mark.parametrize(
    "room, calls",
    [
        # A read-only opener's bytes come from a copy of its table (it cannot lock): room for
        # the bytes, not for that copy as well.
        (1.5, ["to_bytes", "=="]),
        # No room for a table to check or decode: not the `ValueError` of bad bytes.
        (0.5, ["verify", "from_bytes"]),
    ],
)
def test_calls_without_memory_for_a_table_raise_memory_error(live_path, room, calls, tmp_path):
    shared = ccfilter.create_shared(live_path, 10_000_000)
    shared.add_many(distinct_keys(1000))
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "RUST_BACKTRACE": "0"}
    # Run elsewhere than python/, whose source package (no native module) `-c` would import.
    child = subprocess.run([sys.executable, "-c", WITHOUT_ROOM, live_path, str(room), *calls],
                           capture_output=True, text=True, env=env, timeout=30, cwd=tmp_path)
    assert child.stdout == "MemoryError\n" * len(calls) + "done\n", child.stderr + child.stdout
    assert "panicked" not in child.stderr
