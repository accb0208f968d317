"""Benchmark of two of the trust checks (issue 14), run on demand, never a test:

* **a gap is an illegal move**: random legal Carrousel games through the pure referee, with a
  stable board with a gap put in at random moments (the horses of a random legal position spread
  over the 7 spaces with one empty space between two of them). Counted: gaps put in, gaps called
  ``illegal_move`` with the gap's reason, ``invalid_observation`` calls (must be 0), claims on a
  gap board that scored (must be 0); and the referee's time per observation, as a ratio to the
  reference operation;
* **bad input in bounded memory**: ``companion dice`` and ``companion read carrousel`` on a PNG
  that announces 30000 x 30000 pixels (kilobytes on disk, 2.7 GB decoded): the exit status, the
  one line, the wall time and the child's peak memory (``ru_maxrss``).

Usage:
  python bench/trust_checks.py [--games 200] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import resource
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import machine, reference_op_s  # noqa: E402
from companion.games.carrousel import (  # noqa: E402
    CARDS,
    GAP_REASON,
    Board,
    CarrouselReferee,
    Claim,
    GameStart,
    Position,
)


def _gap_board(rng: random.Random) -> tuple[str, ...]:
    """Five horses on 7 spaces, not contiguous: one empty space between two of them."""
    while True:
        horses = ["black", "yellow", "blue", "green", "red"]
        rng.shuffle(horses)
        spaces = ["empty"] * 7
        places = sorted(rng.sample(range(7), 5))
        for p, h in zip(places, horses):
            spaces[p] = h
        try:
            Position.from_spaces(spaces)
        except ValueError:
            return tuple(spaces)  # not a legal (contiguous) board: a gap


def gap_games(games: int, seed: int) -> dict[str, float]:
    """Random games with gaps put in; counts and the referee's time per observation (s)."""
    rng = random.Random(seed)
    counts = {"observations": 0, "gaps": 0, "gaps_called": 0, "invalid": 0, "claims_on_gap_scored": 0,
              "points": 0}
    spent = 0.0
    for g in range(games):
        ref = CarrouselReferee(dead_end_s=600.0)
        players = ("Ana", "Ben")
        position = Position.from_text(".gbyrk.")
        state, _ = ref.apply(ref.initial_state(), GameStart(t=0.0, players=players, spaces=position.spaces,
                                                            seed=rng.randrange(1 << 30)))
        t = 0.0
        for _ in range(60):
            t += 1.0
            if rng.random() < 0.2:
                obs = Board(t=t, spaces=_gap_board(rng))
                counts["gaps"] += 1
                t0 = time.perf_counter()
                state, calls = ref.apply(state, obs)
                spent += time.perf_counter() - t0
                counts["observations"] += 1
                counts["gaps_called"] += sum(c.TYPE == "illegal_move" and c.reason == GAP_REASON for c in calls)
                counts["invalid"] += sum(c.TYPE == "invalid_observation" for c in calls)
                t += 0.5
                claim = Claim(t=t, player=rng.choice(players))
                state, calls = ref.apply(state, claim)
                counts["observations"] += 1
                counts["claims_on_gap_scored"] += sum(c.TYPE == "point" for c in calls)
                counts["invalid"] += sum(c.TYPE == "invalid_observation" for c in calls)
                # the table puts the horses back in a line: a legal position again
                position = Position.from_text(".gbyrk.")
                obs = Board(t=t + 0.5, spaces=position.spaces)
                t += 0.5
            else:
                position = position.apply(rng.choice(position.legal_moves()))
                obs = Board(t=t, spaces=position.spaces)
            t0 = time.perf_counter()
            state, calls = ref.apply(state, obs)
            spent += time.perf_counter() - t0
            counts["observations"] += 1
            counts["points"] += sum(c.TYPE in ("point", "lucky_bird") for c in calls)
            counts["invalid"] += sum(c.TYPE == "invalid_observation" for c in calls)
            if ref.is_over(state):
                break
    counts["per_observation_s"] = spent / max(counts["observations"], 1)
    assert len(CARDS) == 60
    return counts


def _png_header_only(path: Path, width: int, height: int) -> None:
    """A PNG announcing ``width x height`` RGB with a tiny IDAT (a decompression bomb's shape)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    body = zlib.compress(b"\x00" * (width * 3 + 1) * 4)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", body) + chunk(b"IEND", b""))


def huge_image(command: list[str]) -> dict[str, object]:
    """Run ``companion COMMAND huge.png`` in a child; its exit, line, time and peak memory."""
    with tempfile.TemporaryDirectory() as tmp:
        huge = Path(tmp) / "huge.png"
        _png_header_only(huge, 30000, 30000)
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "companion", *command, str(huge)], capture_output=True,
                              text=True, timeout=120, stdin=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        return {"rc": done.returncode, "line": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "",
                "lines": len(done.stderr.strip().splitlines()), "wall_s": wall,
                "peak_mb": max(peak_kb, before) / 1024, "disk_kb": huge.stat().st_size / 1024}


def main(argv: list[str] | None = None) -> int:
    """Run both checks and print the figures (Markdown rows for docs/BENCHMARKS.md)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    print(machine())
    ref = reference_op_s()
    print(f"reference op (cvtColor BGR->Lab 640x480): {ref * 1e6:.0f} us")
    c = gap_games(args.games, args.seed)
    print(f"gaps: {args.games} games, {c['observations']} observations, {c['gaps']} gaps put in, "
          f"{c['gaps_called']} called illegal_move (a gap), {c['invalid']} invalid_observation, "
          f"{c['claims_on_gap_scored']} claims on a gap board scored, {c['points']} points; "
          f"referee {c['per_observation_s'] * 1e6:.1f} us per observation "
          f"({c['per_observation_s'] / ref:.3f} x ref)")
    for command in (["dice"], ["read", "carrousel"]):
        r = huge_image(command)
        print(f"companion {' '.join(command)} on a 30000 x 30000 PNG ({r['disk_kb']:.0f} KB on disk): exit {r['rc']}, "
              f"{r['lines']} line(s) in {r['wall_s']:.2f} s, peak memory of the children {r['peak_mb']:.0f} MB: "
              f"{r['line']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
