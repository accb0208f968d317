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
    option_text,
    player_sectors,
    scoring_options,
)
from companion.sim.carrossel import generate_game  # noqa: E402

REF = CarrosselReferee()
DATA = REF.data
NAMES = ("Ana", "Ben", "Cleo", "Dev")


def worst_case_board(trials: int = 3000, seed: int = 1):
    """A full 4-player board and four booths with the most scoring options found."""
    rng = random.Random(seed)
    state, _ = REF.apply(REF.initial_state(), GameStart(t=0, players=NAMES, seed=1))
    side = DATA.boards[state.side]
    owner = {p.colour: p.name for p in state.players}
    sectors = player_sectors(DATA, state)
    pool = [(c, a) for c in DATA.colours for a in ANIMALS for _ in range(DATA.per_colour[a])]
    ids = list(DATA.clients)
    best, best_n = None, -1
    for _ in range(trials):
        rng.shuffle(pool)
        tiles = tuple(pool[: len(side.cells)])
        booths = [tuple(rng.sample(ids, 3)) for _ in NAMES]
        n = sum(len(scoring_options(DATA, side, tiles, [()] * len(tiles), b, sectors[name], owner)) for b, name in zip(booths, NAMES))
        if n > best_n:
            best, best_n = (tiles, booths), n
    tiles, booths = best
    players = tuple(dataclasses.replace(p, booth=b) for p, b in zip(state.players, booths))
    return dataclasses.replace(state, tiles=tiles, players=players), best_n


def one_phase(state):
    side = DATA.boards[state.side]
    owner = {p.colour: p.name for p in state.players}
    sectors = player_sectors(DATA, state)
    n = 0
    for p in state.players:
        opts = scoring_options(DATA, side, state.tiles, state.standees, p.booth, sectors[p.name], owner)
        texts = [option_text(DATA, state, o) for o in opts]
        n += len(texts)
    return n


def timed(fn, repeat: int):
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return samples


def main() -> None:
    print(f"machine: {platform.machine()}, {platform.processor() or 'cpu'}, Python {platform.python_version()}")
    state, n_options = worst_case_board()
    samples = timed(lambda: one_phase(state), 2000)
    print(f"1. worst-case full board: {n_options} options over 4 booths; one scoring phase: "
          f"median {statistics.median(samples) * 1e3:.3f} ms, p99 {sorted(samples)[int(0.99 * len(samples))] * 1e3:.3f} ms (target < 1 ms)")
    games = [generate_game(seed, NAMES) for seed in range(40)]
    t0 = time.perf_counter()
    generate_game(99, NAMES)
    gen = time.perf_counter() - t0

    def play(obs):
        s = REF.initial_state()
        for o in obs:
            s, _ = REF.apply(s, o)
        assert REF.is_over(s)

    samples = []
    for obs in games:
        t0 = time.perf_counter()
        play(obs)
        samples.append(time.perf_counter() - t0)
    print(f"2. complete random 4-player game ({statistics.mean(len(g) for g in games):.0f} observations), start to final score: "
          f"median {statistics.median(samples) * 1e3:.2f} ms, max {max(samples) * 1e3:.2f} ms over {len(games)} games (target < 50 ms); "
          f"generating one game's stream with the simulated table: {gen * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
