"""Benchmark of the Carrossel rules engine (issue: Carrossel referee).

1. Sequence search and option listing on the worst-case full board (target: under 1 ms): the
   48 slots filled with a legal tile mix, no standees, the four booths chosen to give the most
   scoring options found among many random boards; timed: ``scoring_options`` for the four
   booths plus the option texts, i.e. all the work of one scoring phase.
2. A complete random legal game, start to final score (target: under 50 ms): the observation
   stream of a 4-player game from the simulated table, applied to the referee, timed from
   ``game_start`` to ``game_over`` (the stream is generated beforehand, outside the timing).

Run: /work/venv/bin/python bench/bench_carrossel.py
"""

from __future__ import annotations

import dataclasses
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion.games.carrossel import (  # noqa: E402
    ANIMALS,
    CarrosselReferee,
    GameStart,
    options_text,
    player_sectors,
    scoring_options,
)
from companion.sim.carrossel import generate_game  # noqa: E402

REF = CarrosselReferee()
DATA = REF.data
NAMES = ("Ana", "Ben", "Cleo", "Dev")


def worst_case_board(trials: int = 2000, climb: int = 4000, seed: int = 1):
    """A full 4-player board and four booths with the most scoring options found: the best of
    ``trials`` random legal boards, then ``climb`` steps of hill climbing (swap two tiles or
    replace a booth client; keep the change when the options do not decrease)."""
    rng = random.Random(seed)
    state, _ = REF.apply(REF.initial_state(), GameStart(t=0, players=NAMES, seed=1))
    side = DATA.boards[state.side]
    owner = {p.colour: p.name for p in state.players}
    sectors = player_sectors(DATA, state)
    pool = [(c, a) for c in DATA.colours for a in ANIMALS for _ in range(DATA.per_colour[a])]
    ids = list(DATA.clients)
    empty = [()] * len(side.cells)

    def count(pool, booths):
        tiles = pool[: len(side.cells)]
        return sum(
            len(scoring_options(DATA, side, tiles, empty, b, sectors[name], owner))
            for b, name in zip(booths, NAMES)
        )

    best, best_n = None, -1
    for _ in range(trials):
        rng.shuffle(pool)
        booths = [rng.sample(ids, 3) for _ in NAMES]
        n = count(pool, booths)
        if n > best_n:
            best, best_n = (list(pool), booths), n
    pool, booths = best
    for _ in range(climb):
        new_pool, new_booths = list(pool), [list(b) for b in booths]
        if rng.random() < 0.7:
            i, j = rng.randrange(len(new_pool)), rng.randrange(len(new_pool))
            new_pool[i], new_pool[j] = new_pool[j], new_pool[i]
        else:
            b = rng.randrange(len(NAMES))
            used = {c for bb in new_booths for c in bb}
            new_booths[b][rng.randrange(3)] = rng.choice([c for c in ids if c not in used])
        n = count(new_pool, new_booths)
        if n >= best_n:
            pool, booths, best_n = new_pool, new_booths, n
    players = tuple(dataclasses.replace(p, booth=tuple(b)) for p, b in zip(state.players, booths))
    return dataclasses.replace(state, tiles=tuple(pool[: len(side.cells)]), players=players), best_n


def one_phase(state):
    side = DATA.boards[state.side]
    owner = {p.colour: p.name for p in state.players}
    sectors = player_sectors(DATA, state)
    n = 0
    for p in state.players:
        opts = scoring_options(
            DATA, side, state.tiles, state.standees, p.booth, sectors[p.name], owner
        )
        texts = options_text(DATA, state, opts)
        n += len(texts)
    return n


def timed(fn, repeat: int) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU (process) seconds of each of ``repeat`` calls. On a shared machine
    the CPU time is the steadier figure; both are reported."""
    wall, cpu = [], []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return wall, cpu


def ms(samples: list[float]) -> str:
    s = sorted(samples)
    return f"median {statistics.median(s) * 1e3:.3f} ms, p90 {s[int(0.9 * len(s))] * 1e3:.3f} ms"


def main() -> None:
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, load {os.getloadavg()[0]:.2f}"
    )
    state, n_options = worst_case_board()
    wall, cpu = timed(lambda: one_phase(state), 2000)
    print(
        f"1. worst-case full board, {n_options} options over the 4 booths; one scoring phase (search + option texts):"
    )
    print(f"   wall {ms(wall)}; CPU {ms(cpu)} (target < 1 ms)")
    games = [generate_game(seed, NAMES) for seed in range(40)]
    t0 = time.perf_counter()
    generate_game(99, NAMES)
    gen = time.perf_counter() - t0

    def play(obs):
        s = REF.initial_state()
        for o in obs:
            s, _ = REF.apply(s, o)
        assert REF.is_over(s)

    wall, cpu = [], []
    for obs in games:
        w, c = timed(lambda: play(obs), 1)
        wall += w
        cpu += c
    print(
        f"2. complete random 4-player game ({statistics.mean(len(g) for g in games):.0f} observations on average), start to final score, {len(games)} games:"
    )
    print(f"   wall {ms(wall)}, max {max(wall) * 1e3:.2f} ms; CPU {ms(cpu)} (target < 50 ms)")
    print(f"   (generating one game's stream with the simulated table: {gen * 1e3:.1f} ms wall)")


if __name__ == "__main__":
    main()
