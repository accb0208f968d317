"""`companion run`: time to ready and peak memory.

Starts `python -m companion run` on the simulated table (a new journal, --speed 200 so the
whole game is played) as a child process, reads its log until the "ready" line (time to
ready: from process start to that line), waits for the game to end and reads the child's peak
resident memory (ru_maxrss from wait4). Five runs. Targets (issue "Carrousel referee end to
end"): ready in under 2 s, peak memory under 120 MB.

    .venv/bin/python bench/run_footprint.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import machine  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def once(tmp: Path, i: int) -> tuple[float, float, bool]:
    config = tmp / "config.toml"
    config.write_text('[service]\npin_factory = "mock"\n')
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "companion", "--config", str(config), "run", "--speed", "200", "--new",
         "--journal", str(tmp / f"j{i}.db")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )
    ready = None
    for line in proc.stderr:
        if "ready:" in line:
            ready = time.perf_counter() - t0
            break
    out = proc.stdout.read()
    proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return ready or float("nan"), usage.ru_maxrss / 1024, "WINNER" in out


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(5):
            rows.append(once(Path(tmp), i))
    print(f"machine: {machine()}")
    for ready, rss, won in rows:
        print(f"ready {ready:.3f} s, peak RSS {rss:.1f} MB, game played to a winner: {won}")
    print(
        f"worst: ready {max(r[0] for r in rows):.3f} s (target < 2 s), "
        f"peak {max(r[1] for r in rows):.1f} MB (target < 120 MB)"
    )


if __name__ == "__main__":
    main()
