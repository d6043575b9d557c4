"""Files cross between Python and the `ccf` tool, both ways: a line is the key its text (or its
bytes, read in binary mode) is in Python.

Needs the `ccf` binary: `$CCF_BIN`, or `target/release/ccf` of this workspace (`cargo build
--release -p ccf`). CI sets `CCF_BIN`, and then a missing binary fails rather than skips."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import rate_bound

import ccfilter
from ccfilter import ConcurrentCuckooFilter, GrowableCuckooFilter, hash64


def ccf_binary() -> str:
    if "CCF_BIN" in os.environ:
        return os.environ["CCF_BIN"]
    built = Path(__file__).resolve().parents[2] / "target" / "release" / "ccf"
    if not built.exists():
        pytest.skip("no ccf binary: build it with `cargo build --release -p ccf` or set CCF_BIN")
    return str(built)


CCF = None


def ccf(*args, input=None):
    global CCF
    CCF = CCF or ccf_binary()
    return subprocess.run([CCF, *map(str, args)], input=input, capture_output=True, check=False)


# Lines of several kinds: ASCII, other scripts, an empty line, and bytes that are not UTF-8.
LINES = (
    [f"user-{i}@example.com".encode() for i in range(3000)]
    + ["Grüße".encode(), "日本語のキー".encode(), "emoji 🦀".encode(), b""]
    + [b"\xff\xfe not utf-8 \x80", b"caf\xe9"]
)
OTHERS = [f"other-{i}".encode() for i in range(20_000)]


def write_lines(path: Path, lines) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


@pytest.mark.parametrize("grow", [False, True])
def test_a_filter_built_by_ccf_answers_in_python(tmp_path, grow):
    source = write_lines(tmp_path / "lines.txt", LINES)
    out = tmp_path / "lines.ccf"
    built = ccf("build", *(["--grow", "--capacity", 1000] if grow else []), "-o", out, source)
    assert built.returncode == 0, built.stderr
    f = ccfilter.load(out)
    assert isinstance(f, GrowableCuckooFilter if grow else ConcurrentCuckooFilter)
    # `ccf build` adds each distinct line once, unless its fingerprint is already there.
    assert len(set(LINES)) * 0.99 <= len(f) <= len(set(LINES))
    # As bytes, as a file read in binary mode gives them, and as text where they are UTF-8.
    assert f.contains_many(LINES).all()
    assert all(line.decode() in f for line in LINES if line.isascii() or b"\xc3" in line)
    assert "日本語のキー" in f and "emoji 🦀" in f and "" in f
    with open(source, "rb") as file:
        assert all(line.rstrip(b"\n") in f for line in file)
    rate = f.contains_many(OTHERS).mean()
    assert rate <= rate_bound(f.expected_false_positive_rate, len(OTHERS)), rate


@pytest.mark.parametrize("cls", [ConcurrentCuckooFilter, GrowableCuckooFilter])
def test_a_filter_saved_by_python_answers_in_ccf(tmp_path, cls):
    f = cls(5000)
    f.add_many(line.decode() for line in LINES[:3004])  # as str
    f.add_many(LINES[3004:])  # the rest as bytes
    f.save(tmp_path / "py.ccf")
    queries = write_lines(tmp_path / "queries.txt", LINES + OTHERS)
    found = ccf("query", tmp_path / "py.ccf", queries)
    assert found.returncode == 0, found.stderr
    printed = found.stdout.split(b"\n")[:-1]
    # Every line Python added, in input order, and few others.
    assert printed[: len(LINES)] == LINES
    false_positives = len(printed) - len(LINES)
    assert false_positives / len(OTHERS) <= rate_bound(0.002, len(OTHERS))
    info = ccf("info", tmp_path / "py.ccf")
    assert info.returncode == 0 and str(len(LINES)).encode() in info.stdout


def test_hash64_is_the_hash_ccf_takes_as_hex(tmp_path):
    keys = [0, 1, -1, 2**64 - 1, 12345678901234567890, "text key", b"bytes key"]
    lines = [format(hash64(key), "x").encode() for key in keys]
    source = write_lines(tmp_path / "hashes.txt", lines)
    built = ccf("build", "--hex64", "-o", tmp_path / "h.ccf", source)
    assert built.returncode == 0, built.stderr
    f = ConcurrentCuckooFilter.load(tmp_path / "h.ccf")
    assert all(key in f for key in keys)
    assert f.contains_many([0, 1, 2**64 - 1]).all()


@pytest.mark.parametrize("cls", [ConcurrentCuckooFilter, GrowableCuckooFilter])
def test_ccf_merges_filters_python_built(tmp_path, cls):
    parts = [LINES[:1500], LINES[1500:]]
    for i, part in enumerate(parts):
        f = cls(10_000)
        f.add_many(part)
        f.save(tmp_path / f"part{i}.ccf")
    merged = ccf("merge", "-o", tmp_path / "all.ccf", tmp_path / "part0.ccf", tmp_path / "part1.ccf")
    assert merged.returncode == 0, merged.stderr
    union = cls.load(tmp_path / "all.ccf")
    # `ccf merge` is a set union: a key whose fingerprint the target shows already is not
    # added again.
    assert len(union) <= len(LINES) and union.contains_many(LINES).all()
    # And Python merges the same files into the same filter.
    mine = cls.load(tmp_path / "part0.ccf")
    mine.merge(cls.load(tmp_path / "part1.ccf"), unique=True)
    assert len(mine) == len(union)
    assert (mine.contains_many(OTHERS) == union.contains_many(OTHERS)).all()
    assert mine.to_bytes() == union.to_bytes()
