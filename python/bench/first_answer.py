"""The first answer from a live file against a snapshot of the same filter, in Python and ccf.

    python bench/first_answer.py [KEYS] [CCF_BINARY]   (default 100000000, target/release/ccf)

Fills a live file in /dev/shm with KEYS keys at a rate of 0.1%, saves a snapshot beside it,
then times `ccfilter.load(path)` and one lookup for each (a live file is mapped, a snapshot
read and checked), `load(live, mmap=False)` (the live file copied into memory), and a whole
`ccf query` process answering one key from each (best of 3). Page cache warm: both files were
just written.
"""

import os
import subprocess
import sys
import time

import numpy as np

import ccfilter


def main():
    keys = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000_000
    ccf = sys.argv[2] if len(sys.argv) > 2 else "target/release/ccf"
    live = f"/dev/shm/first-answer-{os.getpid()}.live"
    snapshot = f"/dev/shm/first-answer-{os.getpid()}.ccf"
    try:
        f = ccfilter.create_shared(live, keys, 0.001)
        f.add_many(np.arange(keys, dtype=np.uint64), threads=2)
        f.save(snapshot)
        print(f"file bytes: live {os.path.getsize(live)}, snapshot {os.path.getsize(snapshot)}")
        for path in (live, snapshot):
            start = time.perf_counter()
            found = 5 in ccfilter.load(path)
            took = time.perf_counter() - start
            print(f"ccfilter.load({os.path.basename(path)}) and one lookup: {took * 1e3:.3f} ms")
            assert found
        start = time.perf_counter()
        ccfilter.load(live, mmap=False)
        print(f"ccfilter.load(live, mmap=False): {(time.perf_counter() - start) * 1e3:.1f} ms")
        for path in (live, snapshot):
            runs = []
            for _ in range(3):
                start = time.perf_counter()
                subprocess.run([ccf, "query", path], input=b"5\n", capture_output=True, check=False)
                runs.append(time.perf_counter() - start)
            print(f"ccf query {os.path.basename(path)}, one key, whole process: "
                  f"{min(runs) * 1e3:.1f} ms (best of 3)")
    finally:
        for path in (live, snapshot):
            if os.path.exists(path):
                os.unlink(path)


if __name__ == "__main__":
    main()
