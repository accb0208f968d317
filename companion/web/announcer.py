"""The ``web`` announcer: every call, in plain words, to the table's web page.

Listed in ``[service] announcers`` (with ``[web] enabled``), it is told each call on the
service loop's thread like the console; it turns the call into its sentence (the console's,
from the language's catalogue) and hands it with the referee's summary to the
:class:`~companion.web.hub.Hub`, which pushes it to every browser. It never waits for a browser.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from companion.events import Call
from companion.web.hub import Hub

__all__ = ["WebAnnouncer", "sentence_for"]

log = logging.getLogger("companion.web")

_CONSOLES: dict[tuple[str, str], Any] = {}


def sentence_for(call: Call, game: str, language: str, summary: Mapping[str, Any] | None = None) -> str:
    """The call's sentence as the console prints it (``ConsoleAnnouncer.line``), in ``language``.

    Raises:
        companion.announcers.speech.CatalogueError: an unknown language.
    """
    from companion.announcers.console import ConsoleAnnouncer

    console = _CONSOLES.get((game, language))
    if console is None:
        console = _CONSOLES[(game, language)] = ConsoleAnnouncer(game=game, language=language)
    return console.line(call, summary)


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


class WebAnnouncer:
    """Announcer that forwards each call (type, fields, sentence, summary) to the web page.

    Args:
        hub: the :class:`~companion.web.hub.Hub` of the running web server.
        game: the game refereed (its catalogue's sentences).
        players: names in seat order.
        table: ``"sim"`` or ``"hardware"`` (shown on the page).

    Each event says whether the call is ``spoken`` (not one of the signals file's frequent
    ``[unspoken]`` calls, such as every legal Carrousel move); the table page lists those.

    Call :meth:`attach` with the service once it is built, so that each event also carries the
    session time, the referee's next deadline (the dead end's countdown) and the clock's speed.
    """

    def __init__(self, hub: Hub, game: str, players: list[str], table: str = "sim"):
        self.hub = hub
        self.game = game
        self.players = list(players)
        self.table = table
        self.service: Any = None
        from companion.announcers.signals import Signals

        self.signals = Signals()  # which calls are frequent (``[unspoken]``: every legal move)

    def attach(self, service: Any) -> None:
        """Bind to the game's :class:`~companion.service.Service` and tell the pages a game began.
        A language chosen on the game page is kept in the session's table settings
        (``page_language``, :meth:`~companion.service.Service.note_table`), now for a language
        chosen before this game and at each choice, so a restart shows the page in it."""
        self.service = service
        note = getattr(service, "note_table", None)
        if note is not None:
            self.hub.on_language = lambda language: note({"page_language": language})
            if self.hub.chosen_language is not None:
                note({"page_language": self.hub.chosen_language})
        self.hub.publish("game", {"game": self.game}, state=self._state(service.referee.summary(service.state)))

    def _state(self, summary: Mapping[str, Any]) -> dict[str, Any]:
        state: dict[str, Any] = {"game": self.game, "players": self.players, "table": self.table,
                                 "summary": _jsonable(summary)}
        service = self.service
        if service is not None:
            clock = service.clock
            state.update(session=service.session, t=round(clock.now(), 3),
                         speed=float(getattr(clock, "speed", 1.0) or 1.0),
                         deadline=service.referee.next_deadline(service.state),
                         over=bool(service.referee.is_over(service.state)),
                         paused=getattr(service, "paused_at", None) is not None)  # the players' pause
        return state

    def announce(self, call: Call, summary: Mapping[str, Any]) -> None:
        """Publish the call with its sentence; never raises for a browser, never blocks."""
        try:
            text = sentence_for(call, self.game, self.hub.language, summary)
        except Exception as exc:  # an unknown language chosen on the page: the type in words
            log.error("web: no sentence for %s: %s", call.TYPE, exc)
            text = call.TYPE.replace("_", " ")
        self.hub.publish("call", {"type": call.TYPE, "t": call.t, "sentence": text, "call": call.to_json(),
                                  "spoken": self.signals.spoken(self.game, call.TYPE)},
                         state=self._state(summary))

    def close(self) -> None:
        """The game's service ends: the pages keep the last state; a language chosen now is
        kept by the next game's session (:meth:`attach`)."""
        self.hub.on_language = None
        if self.service is not None:
            self.hub.publish("state", {}, state={"over": bool(self.service.referee.is_over(self.service.state))})
