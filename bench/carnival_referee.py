"""Carnival referee speed: whole simulated games applied to a fresh referee.

The observation streams come from the simulated table (``companion/sim/carnival.py``), are
generated once before timing, then applied with ``CarnivalReferee.apply`` (the pure engine) and
through ``companion referee``'s JSON Lines path (parse, check, apply, JSON out).

    python bench/carnival_referee.py [--games 30]
"""

from __future__ import annotations

import argparse
import io
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion.commands.referee import referee_lines  # noqa: E402
from companion.games.carnival import CarnivalReferee  # noqa: E402
from companion.sim.carnival import carnival_game  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=30)
    args = ap.parse_args(argv)
    games = []
    t0 = time.perf_counter()
    for seed in range(args.games):
        games.append(list(carnival_game(seed, ("Ana", "Ben", "Caio", "Dora")[: 2 + seed % 3])))
    gen_s = (time.perf_counter() - t0) / args.games
    pure, jsonl, n_obs = [], [], []
    for obs in games:
        ref = CarnivalReferee()
        t0 = time.perf_counter()
        state = ref.initial_state()
        for o in obs:
            state, _ = ref.apply(state, o)
        pure.append(time.perf_counter() - t0)
        assert ref.is_over(state)
        lines = [o.to_line() for o in obs]
        t0 = time.perf_counter()
        out = io.StringIO()
        for call in referee_lines(CarnivalReferee(), lines):
            out.write(call.to_line() + "\n")
        jsonl.append(time.perf_counter() - t0)
        n_obs.append(len(obs))
    total = sum(n_obs)
    print(f"machine: {platform.machine()}, Python {platform.python_version()}")
    print(f"{args.games} games, {statistics.mean(n_obs):.0f} observations a game on average")
    print(f"generating a game on the simulated table: {gen_s * 1000:.1f} ms")
    print(f"pure engine: median {statistics.median(pure) * 1000:.1f} ms a game, {total / sum(pure):,.0f} observations/s")
    print(f"JSON Lines path: median {statistics.median(jsonl) * 1000:.1f} ms a game, {total / sum(jsonl):,.0f} observations/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
