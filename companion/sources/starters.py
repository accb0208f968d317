"""Sources that start a game at a real table (no simulated table deals it).

* :class:`FirstBoardStarts` wraps the Carrousel camera: the game starts once the camera has
  read the whole board and every player's card, and is dealt from those cards.
* :class:`StartNow` sends one ``game_start`` observation as soon as the service starts (Monsieur
  Carrousel, Carrossel: nothing the players must tell first).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

from companion.clock import Clock
from companion.events import Observation

__all__ = ["FirstBoardStarts", "StartNow"]


class FirstBoardStarts:
    """Wraps a real table's Carrousel camera source: the game starts (``game_start``) once the
    camera has read a full board and every player's card; the game is dealt from those cards
    (the rest of the physical deck is in an order nobody knows: the camera's later
    ``card_seen`` readings correct what the referee tracks).

    Args:
        source: the camera source (a :class:`~companion.sources.carrousel_camera.CarrouselCameraSource`).
        players: names in seat order; options: ``advanced``, ``dead_end_s`` (and the other
            ``game_start`` fields of :mod:`companion.games.carrousel`).
        started: True when resuming a game that has started already.
    """

    def __init__(self, source: Any, players: list[str], options: dict[str, Any], started: bool):
        self.source = source
        self.players = players
        self.options = options
        self.started = started
        self._board: Any = None
        self._cards: dict[str, tuple[str, str, str]] = {}

    def start(self, emit: Callable[[Observation], None], clock: Clock) -> None:
        """Start the camera; hold its readings until the game can start."""
        from companion.games.carrousel import UNKNOWN, Board, CardSeen, GameStart

        def wrapped(obs: Any) -> None:
            if self.started:
                emit(obs)
                return
            if isinstance(obs, Board) and UNKNOWN not in obs.spaces:
                self._board = obs
            elif isinstance(obs, CardSeen):
                self._cards[obs.player] = tuple(obs.card)  # type: ignore[assignment]
            if self._board is None or any(p not in self._cards for p in self.players):
                return
            self.started = True
            t = max(self._board.t, obs.t)
            emit(GameStart(t=t, players=tuple(self.players), spaces=self._board.spaces,
                           deck=deck_from_cards([self._cards[p] for p in self.players]), unseen_order=True,
                           **self.options))

        self.source.start(wrapped, clock)

    def stop(self) -> None:
        """Stop the camera."""
        self.source.stop()


def deck_from_cards(active: list[tuple[str, str, str]], seed: int | None = None) -> tuple[tuple[str, str, str], ...]:
    """A Carrousel deck whose deal (:func:`companion.games.carrousel.deal`) gives each player
    the active card the camera read; the other cards in a random order (a physical deck's
    order is not known).

    Args:
        active: each player's active card, in seat order (2-4 distinct cards).
        seed: for the unknown order (default: a fresh random seed).

    Raises:
        ValueError: a card that is not one of the 60, or the same card twice.
    """
    import random

    from companion.games.carrousel import CARDS, hand_size

    if len(set(active)) != len(active) or any(c not in CARDS for c in active):
        raise ValueError(f"cards: expected distinct Carrousel cards, got {active}")
    rest = [c for c in CARDS if c not in active]
    random.Random(secrets.randbelow(2**31) if seed is None else seed).shuffle(rest)
    k = hand_size(len(active))
    deck: list[tuple[str, str, str]] = []
    for card in active:
        deck.append(card)
        deck.extend(rest[: k - 1])
        del rest[: k - 1]
    return tuple(deck + rest)


class StartNow:
    """Sends ``make(t)`` (a ``game_start`` observation) once, when the service starts.

    Args:
        make: ``make(t) -> Observation``, ``t`` the session time (s) at start.
        started: True when resuming a game that has started already (nothing is sent).
    """

    def __init__(self, make: Callable[[float], Observation], started: bool):
        self.make = make
        self.started = started

    def start(self, emit: Callable[[Observation], None], clock: Clock) -> None:
        """Emit the game's start now, unless the game has started already."""
        if not self.started:
            self.started = True
            emit(self.make(clock.now()))

    def stop(self) -> None:
        """Nothing to release."""
