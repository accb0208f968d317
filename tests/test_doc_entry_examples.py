"""Every ``companion enter GAME TYPE NAME=VALUE...`` example of README.md, docs/*.md and
``companion enter --help`` is an entry its game's referee takes: the fields parse in the game's
vocabulary, and played in order on a fresh game (after the example's own ``game_start``) none is
refused as malformed (``invalid_observation``); an ``illegal_play`` only where the text shows it."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from companion.commands import enter
from companion.games import referee_for

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = re.compile(r"companion enter ([a-z][a-z-]*) ([a-z_]+) ([^`#\n]*)")


def _examples() -> list[tuple[str, str, list[str]]]:
    """``(where, game, [type, name=value...])`` of every example, in order of appearance per file."""
    texts = {p.name: p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]}
    texts["companion enter --help"] = enter.__doc__
    out = []
    for where, text in texts.items():
        for m in EXAMPLE.finditer(text):
            words = shlex.split(m.group(3))
            if any(w in ("...", "NAME=VALUE...") or "=" not in w for w in words):
                continue  # a template (`play ...`), not an example
            out.append((where, m.group(1), [m.group(2), *words]))
    return out


def test_the_examples_are_found():
    games = {(where, game) for where, game, _ in _examples()}
    assert ("README.md", "carrossel") in games and ("carrossel.md", "carrossel") in games
    assert ("companion enter --help", "carnival") in games


@pytest.mark.parametrize("where", sorted({w for w, _, _ in _examples()}))
def test_each_example_is_an_entry_its_referee_takes(where):
    by_game: dict[str, list[list[str]]] = {}
    for w, game, words in _examples():
        if w == where:
            by_game.setdefault(game, []).append(words)
    deals = {"carrossel": {"players": ["Ana", "Ben"], "seed": 7},
             "carnival": {"players": ["Ana", "Ben"], "discard": ["ferris_wheel:lights", "carousel:seats"]}}
    for game, entries in by_game.items():
        ref = referee_for(game)
        state = ref.initial_state()
        for k, (typ, *pairs) in enumerate(entries, start=1):
            line = f"{where}: companion enter {game} {typ} {' '.join(pairs)}"
            obs = ref.vocabulary.observation({"type": typ, "t": float(k), **enter.parse_fields(pairs)})  # EventError: a bad field
            if game not in deals:
                continue  # Carrousel, Monsieur Carrousel: only their fields (a game needs a camera's deal)
            if k == 1 and typ != "game_start":  # an example later in a game: deal one first
                state, _ = ref.apply(state, ref.vocabulary.observation({"type": "game_start", "t": 0.0, **deals[game]}))
            state, calls = ref.apply(state, obs)
            kinds = {c.TYPE: c.to_json() for c in calls}
            if typ == "choose":  # only when the referee lists options: a wrong phase here, never a bad field
                assert "invalid_observation" not in kinds or "option" not in kinds["invalid_observation"]["reason"], line
                continue
            assert "invalid_observation" not in kinds, (line, kinds.get("invalid_observation"))
            if "illegal_play" in kinds:  # shown on purpose: the play of slot card 99
                assert "slot=99" in pairs and "slot card 99" in kinds["illegal_play"]["reason"], line


def test_the_animals_of_every_example_are_carrossel_animals():
    from companion.games.carrossel import ANIMALS

    seen = [a for _, game, words in _examples() if game == "carrossel"
            for a in enter.parse_fields(words[1:]).get("animals", [])]
    assert seen and set(seen) <= set(ANIMALS), seen
