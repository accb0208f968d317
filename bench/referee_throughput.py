"""Referee throughput: Carrousel observations applied per second.

The observations are those of real simulated games (moves, illegal moves, claims, penalties,
dead ends, ticks), recorded once, then applied to fresh referees again and again. Two
figures: the pure engine (``apply`` only) and the whole ``companion referee`` path (JSON
parsing and checking, apply, JSON out). Target (issue "Carrousel referee end to end"): at
least 100,000 observations per second.

    .venv/bin/python bench/referee_throughput.py
"""

from __future__ import annotations

import io
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import machine  # noqa: E402

from companion.clock import ManualClock  # noqa: E402
from companion.commands.referee import referee_lines  # noqa: E402
from companion.games.carrousel import CarrouselReferee  # noqa: E402
from companion.service import Service  # noqa: E402
from companion.sim.carrousel import SimulatedCarrouselTable  # noqa: E402


def record_games(n_games: int = 20) -> list[list]:
    games = []
    for seed in range(n_games):
        referee = CarrouselReferee()
        sim = SimulatedCarrouselTable(["Ana", "Ben", "Cleo", "Dev"], seed=seed)
        seen = []

        class Tap:
            def announce(self, call, summary):
                pass

            def close(self):
                pass

        service = Service(referee, ManualClock(), sources=[sim], scheduled=[sim], announcers=[sim, Tap()])
        original = service._apply

        def apply(obs, original=original, seen=seen):
            seen.append(obs)
            return original(obs)

        service._apply = apply  # type: ignore[method-assign]
        service.run()
        games.append(seen)
    return games


def main() -> None:
    games = record_games()
    n = sum(len(g) for g in games)
    kinds: dict[str, int] = {}
    for g in games:
        for o in g:
            kinds[o.TYPE] = kinds.get(o.TYPE, 0) + 1
    referee = CarrouselReferee()
    best = 0.0
    for _ in range(5):
        start = time.perf_counter()
        for g in games:
            state = referee.initial_state()
            for obs in g:
                state, _ = referee.apply(state, obs)
        best = max(best, n / (time.perf_counter() - start))
    lines = [[o.to_line() for o in g] for g in games]
    best_cli = 0.0
    for _ in range(3):
        start = time.perf_counter()
        for g in lines:
            out = io.StringIO()
            for call in referee_lines(referee, g):
                out.write(call.to_line() + "\n")
        best_cli = max(best_cli, n / (time.perf_counter() - start))
    print(f"machine: {machine()}")
    print(f"observations: {n} from {len(games)} simulated games ({json.dumps(kinds)})")
    print(f"engine apply: {best:,.0f} observations/s (target >= 100,000)")
    print(f"JSON Lines in and out (referee_lines): {best_cli:,.0f} observations/s")


if __name__ == "__main__":
    main()
