"""The rules engines, one module per game, and the registry that finds them by name.

Every engine is a :class:`Referee`: pure, with time arriving in each observation. It never
reads a clock, sleeps, starts a thread or touches hardware, so a session can be replayed into it
exactly (``companion replay``) and every rule can be tested to the letter.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, Protocol

from companion.events import Call, Observation, Vocabulary

__all__ = ["Referee", "GAMES", "KITS", "referee_for", "referee_from_config", "UnknownGame"]


class UnknownGame(LookupError):
    """A game name that is not in :data:`GAMES`; the message lists the known names."""


class Referee(Protocol):
    """What the service loop, ``companion referee`` and ``companion replay`` need of an engine.

    A state is an immutable value; ``apply`` returns a new one and never changes its argument.
    """

    name: str
    vocabulary: Vocabulary
    #: The call types that ask the table for the game's next step (a turn, a seat to fill):
    #: the newest one is said again when an unfinished game resumes after a restart.
    prompts: frozenset[str]

    def initial_state(self) -> Any:
        """The state before the first observation (usually: waiting for ``game_start``)."""

    def apply(self, state: Any, observation: Observation) -> tuple[Any, list[Call]]:
        """Apply one observation; return the new state and the calls it causes, in time order.

        A rejected observation gives an ``invalid_observation`` call and the unchanged state;
        it never raises for bad input.
        """

    def next_deadline(self, state: Any) -> float | None:
        """The session time (s) at which the engine must be told the time (a ``tick``), or None."""

    def is_over(self, state: Any) -> bool:
        """True once the game has a result (winner or loss)."""

    def summary(self, state: Any) -> Mapping[str, Any]:
        """A small JSON-able dict for the console and status views (scores, phase)."""


#: Game name -> ``module:attribute`` of a zero-argument factory returning a Referee.
GAMES: dict[str, str] = {
    "carrousel": "companion.games.carrousel:CarrouselReferee",
    "monsieur-carrousel": "companion.games.monsieur_carrousel:MonsieurCarrouselReferee",
    "carrossel": "companion.games.carrossel:CarrosselReferee",
    "carnival": "companion.games.carnival:CarnivalReferee",
}


#: Game name -> ``module:attribute`` of its :class:`~companion.assembly.Kit`: how
#: :func:`companion.assembly.assemble` builds the game's service at a simulated or a real table.
KITS: dict[str, str] = {
    "carrousel": "companion.kits.carrousel:KIT",
    "monsieur-carrousel": "companion.kits.monsieur_carrousel:KIT",
    "carrossel": "companion.kits.carrossel:KIT",
    "carnival": "companion.kits.carnival:KIT",
}


def referee_for(game: str, **options: Any) -> Referee:
    """Return a new referee for ``game`` (see :data:`GAMES`), built with ``options``.

    Raises:
        UnknownGame: ``game`` is not a known game name.
    """
    target = GAMES.get(game)
    if target is None:
        raise UnknownGame(f"unknown game {game!r} (known: {', '.join(sorted(GAMES))})")
    module_name, attr = target.split(":")
    factory = getattr(importlib.import_module(module_name), attr)
    return factory(**options)


def referee_from_config(game: str, config: Any) -> Referee:
    """Return a referee for ``game`` with the options of its configuration section.

    The section is named after the game (``[carrousel]``, ``[monsieur_carrousel]`` ...); its
    keys are the referee's keyword arguments. A game without a section gets its defaults. An
    empty data-file key (``[carrossel] data``, ``[monsieur_carrousel] table_file``) is the file
    of the calibration folder (``[calibration] dir``), else the shipped default.

    Raises:
        UnknownGame: ``game`` is not a known game name.
    """
    from companion.calibration_dir import calibration_path

    section = game.replace("-", "_")
    options = dict(config[section]) if section in config.values else {}
    key, name = _DATA_FILES.get(game, (None, None))
    if key is not None and key in options and not options[key]:
        options[key] = str(calibration_path(name, config))
    return referee_for(game, **options)


#: Game -> (referee option naming its data file, the file's name in the calibration folder).
_DATA_FILES = {"carrossel": ("data", "carrossel.toml"), "monsieur-carrousel": ("table_file", "monsieur_carrousel.toml")}
