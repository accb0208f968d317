"""What the journal's fault protection costs: the sequence and checksum chain on each append,
a check of the whole journal (what replay and a resume do), and a salvage.

Times, on a journal file in a temporary folder (``sync = "normal"``, no background
checkpoint):

* ``append_step`` of one observation and one call, N times (each its own transaction, the
  tail file rewritten after each), median and p99 per step;
* :func:`companion.journal.entry_chain` alone (the checksum of one entry);
* ``check`` of the N-step journal (every row read, JSON parsed, checksum verified);
* ``salvage`` of it into a new file;
* ``check`` of a copy whose entries table's root page is damaged (every entry read from the
  leaf pages and certified by its checksum).

Each also as a ratio to the reference operation timed in the same run: one ``cv2.cvtColor``
BGR -> Lab of a 640 x 480 frame.

Usage: .venv/bin/python bench/journal_faults.py [--steps 5000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import machine, percentile  # noqa: E402


def _reference_ms(n: int = 200) -> float:
    import cv2
    import numpy as np

    frame = (np.random.default_rng(0).random((480, 640, 3)) * 255).astype(np.uint8)
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        cv2.cvtColor(frame, cv2.COLOR_BGR2Lab)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def _check_with_damaged_root(path: Path, entries: int) -> float:
    """Milliseconds of ``check`` on a copy of ``path`` whose entries table's root page is
    overwritten: SQL reaches no entry, every one is read from the leaf pages
    (companion/journal_pages.py) and certified by its checksum."""
    import shutil
    import sqlite3

    from companion.journal_check import check

    copy = path.with_name("damaged.db")
    shutil.copyfile(path, copy)
    shutil.copyfile(str(path) + ".tail", str(copy) + ".tail")
    db = sqlite3.connect(copy)
    root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'entries'").fetchone()[0]
    size = db.execute("PRAGMA page_size").fetchone()[0]
    db.close()
    with open(copy, "r+b") as f:
        f.seek((root - 1) * size)
        f.write(b"\xff" * size)
    t0 = time.perf_counter()
    report = check(copy)
    ms = (time.perf_counter() - t0) * 1e3
    assert len(report.intact) == entries and report.from_pages == entries, report.summary()
    return ms


def main() -> int:
    """Run the benchmark and print a Markdown table."""
    from companion.games.carrousel import Claim, Penalty
    from companion.journal import Journal, entry_chain
    from companion.journal_check import check, salvage

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5000)
    args = parser.parse_args()
    ref_before = _reference_ms()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "j.db"
        step_ms = []
        with Journal(path, checkpoint_s=None) as journal:
            s = journal.start_session("carrousel", {}, {"players": ["Ana", "Ben"]})
            for i in range(args.steps):
                obs = Claim(t=float(i), player="Ana")
                call = Penalty(t=float(i), player="Ana", card=("black", "red", "blue"),
                               first_three=("red", "black", "blue"))
                t0 = time.perf_counter()
                journal.append_step(s, obs, [call])
                step_ms.append((time.perf_counter() - t0) * 1e3)
        body = Claim(t=1.0, player="Ana").to_line()
        t0 = time.perf_counter()
        for i in range(20000):
            entry_chain("0" * 32, i, 1, "observation", 1.0, "claim", body, None)
        chain_us = (time.perf_counter() - t0) / 20000 * 1e6
        t0 = time.perf_counter()
        report = check(path)
        check_ms = (time.perf_counter() - t0) * 1e3
        assert report.ok and len(report.intact) == 2 * args.steps
        t0 = time.perf_counter()
        salvage(path, Path(d) / "new.db")
        salvage_ms = (time.perf_counter() - t0) * 1e3
        damaged_ms = _check_with_damaged_root(path, 2 * args.steps)
    ref_after = _reference_ms()
    ref = (ref_before + ref_after) / 2
    print(f"machine: {machine()}")
    print(f"reference (cvtColor BGR->Lab 640x480): {ref_before:.3f} ms before, {ref_after:.3f} ms after; "
          f"ratios use {ref:.3f} ms")
    print("| what | median | p99 | ratio to the reference |")
    print("|---|---|---|---|")
    med, p99 = statistics.median(step_ms), percentile(step_ms, 99)
    print(f"| append_step (1 observation + 1 call), {args.steps} times | {med:.3f} ms | {p99:.3f} ms | "
          f"{med / ref:.2f} x |")
    print(f"| entry_chain (one checksum) | {chain_us:.2f} us | | {chain_us / 1e3 / ref:.4f} x |")
    print(f"| check of {2 * args.steps} entries | {check_ms:.0f} ms | | {check_ms / ref:.0f} x |")
    print(f"| salvage of {2 * args.steps} entries | {salvage_ms:.0f} ms | | {salvage_ms / ref:.0f} x |")
    print(f"| check of {2 * args.steps} entries, the entries' root page damaged (every entry read from the "
          f"leaf pages) | {damaged_ms:.0f} ms | | {damaged_ms / ref:.0f} x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
