"""The console announcer: one readable line per call, as it happens, for every game.

Each line is the session time in seconds and the call's sentence from the language's catalogue
(``companion/locale/<language>.toml``, the same sentences the speech announcer says), with the
console's own additions (``[suffix.<game>]``, e.g. the raindrops so far). The call's fields as
key/value detail go to the log (``logging.debug``), never to the console. Example output::

      12.4 s  Ana scores with black-red-yellow: 3 points, next card green-blue-red.
      20.0 s  DEAD END: no point in time; move green to the front.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Mapping
from typing import IO, Any

from companion.announcers.signals import Signals
from companion.announcers.speech import Catalogue, CatalogueError
from companion.events import Call

__all__ = ["ConsoleAnnouncer", "describe"]

log = logging.getLogger("companion.console")


def _plain(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(_plain(v) for v in value) + ")"
    if isinstance(value, dict):
        return "(" + ", ".join(f"{k} {_plain(v)}" for k, v in value.items()) + ")"
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def describe(call: Call, formats: Mapping[str, Callable[[dict[str, Any]], str]] | None = None) -> str:
    """The call's type and fields as key/value detail, for logs
    (``built: player Cleo; ride ferris_wheel; cards (ferris_wheel:lights); complete no``).

    ``formats``: ``type -> formatter(call JSON) -> str`` to use instead for some types. Players
    read the catalogue's sentences (:class:`ConsoleAnnouncer`), not this.
    """
    data = call.to_json()
    fmt = (formats or {}).get(call.TYPE)
    if fmt is not None:
        try:
            return fmt(data)
        except (KeyError, TypeError):
            pass
    fields = "; ".join(f"{k.replace('_', ' ')} {_plain(v)}" for k, v in data.items() if k not in ("type", "t"))
    head = call.TYPE.replace("_", " ")
    return f"{head}: {fields}" if fields else head


class ConsoleAnnouncer:
    """Writes one line per call: the session time in seconds, then the call's sentence.

    Args:
        stream: a text stream (default: standard output); flushed after every line.
        show_moves: also print the game's frequent calls (the ones the signals file's
            ``[unspoken]`` list names, e.g. every legal Carrousel ``move``); else only what a
            player needs to know.
        game: the game whose sentences are used (``carrousel``, ``monsieur-carrousel``,
            ``carrossel``, ``carnival``).
        language: the catalogue's language (``en``, ``fr``, ``pt-BR``).
        catalogue: a :class:`~companion.announcers.speech.Catalogue` already read (then
            ``language`` is not used).

    Raises:
        CatalogueError: an unknown language.

    A call without a sentence in the catalogue (a defect the catalogue tests catch) is printed
    as its type in words and logged as an error. Never raises while announcing: a closed
    terminal must not stop the referee.
    """

    def __init__(
        self,
        stream: IO[str] | None = None,
        show_moves: bool = True,
        game: str = "carrousel",
        language: str = "en",
        catalogue: Catalogue | None = None,
    ):
        self.stream = stream or sys.stdout
        self.show_moves = show_moves
        self.game = game
        self.catalogue = catalogue or Catalogue(language)
        self.signals = Signals()

    def line(self, call: Call, summary: Mapping[str, Any] | None = None) -> str:
        """The call's sentence as the console prints it (without the time)."""
        try:
            text = self.catalogue.text(call, self.game, console=True)
        except CatalogueError as exc:
            log.error("%s", exc)
            text = None
        if text is None:
            log.error("%s: no sentence for %s call %r", self.catalogue.path, self.game, call.type)
            return call.type.replace("_", " ")
        try:
            extra = self.catalogue.suffix(call, self.game, summary)
        except CatalogueError as exc:  # e.g. a summary without the field: the line without it
            log.debug("console suffix left out: %s", exc)
            extra = ""
        return f"{text}  {extra}" if extra else text

    def announce(self, call: Call, summary: Mapping[str, Any]) -> None:
        """Print the call's line; its fields go to the log (debug)."""
        log.debug("%.3f s %s", call.t, describe(call))
        if not self.show_moves and not self.signals.spoken(self.game, call.type):
            return
        self._write(call.t, self.line(call, summary))

    def show_spin(self, obs: Any) -> None:
        """Print a spin seen by the encoder (``spin_started``, ``spin_stopped``: turns,
        direction, angle, doubt) in words; other observations are not printed."""
        try:
            text = self.catalogue.observation_text(obs, self.game)
        except CatalogueError as exc:
            log.error("%s", exc)
            return
        if text is not None:
            self._write(obs.t, text)

    def _write(self, t: float, text: str) -> None:
        try:
            self.stream.write(f"{t:9.1f} s  {text}\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass  # a closed terminal must not stop the referee

    def close(self) -> None:
        """Nothing to release."""
