"""Lights and buzzer patterns as data: ``companion/data/signals.toml``, keyed by game and call.

One file says, for every call of every game, which LEDs light and how they blink, and which
notes the buzzer plays; the same notes stand in for a spoken prompt when there is no audio.
It also lists the calls that are not spoken (they come every few seconds, like Carrousel's
``move``). :class:`Signals` reads and checks it; :class:`~companion.announcers.lights.LightsAndBuzzer`
and :class:`~companion.announcers.speech.BuzzerPatterns` use it.

A call's entry is looked up, first match wins, as ``[<game>] "<type>.<variant>"``, then
``[<game>] <type>``, then ``[common] <type>``, then ``default``; the variant is the values of
the fields named in ``[variants.<game>] <type>`` (see :func:`variant_keys`).
"""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from companion.events import Call

__all__ = [
    "SIGNALS_FILE",
    "NOTE_RANGE",
    "SignalsError",
    "LightPattern",
    "Signal",
    "Signals",
    "variant_word",
    "variant_keys",
]

SIGNALS_FILE = Path(__file__).resolve().parents[1] / "data" / "signals.toml"

#: Notes a gpiozero ``TonalBuzzer`` with ``octaves=1`` (its default) can play: A3 to A5.
NOTE_RANGE = ("A3", "A5")

#: A buzzer melody: (gpiozero Tone name such as ``"C5"``, or None for a rest; seconds).
Notes = tuple[tuple[str | None, float], ...]


class SignalsError(ValueError):
    """A broken signals file; the message names the file, the key and what was expected."""


@dataclasses.dataclass(frozen=True, slots=True)
class LightPattern:
    """Which LEDs light and how they blink.

    Attributes:
        who: ``"all"``, ``"none"``, or the name of the call's field holding the player (or a
            list of players) whose seat LED lights, e.g. ``"player"``, ``"winners"``.
        on_s: seconds each flash is on.
        off_s: seconds between flashes.
        times: number of flashes.
    """

    who: str
    on_s: float
    off_s: float
    times: int

    def players(self, call: Mapping[str, Any], seated: Sequence[str]) -> list[str]:
        """The seated players whose LED this pattern lights for ``call`` (its JSON form)."""
        if self.who == "all":
            return list(seated)
        if self.who == "none":
            return []
        value = call.get(self.who)
        names = [value] if isinstance(value, str) else list(value or ())
        return [p for p in seated if p in names]


@dataclasses.dataclass(frozen=True, slots=True)
class Signal:
    """A call's lights (``lights``, a :class:`LightPattern` or None) and buzzer ``notes``."""

    key: str
    lights: LightPattern | None
    notes: Notes


def variant_word(value: Any) -> str:
    """The word a field's value gives in a variant key: ``true``/``false`` for a boolean,
    ``none`` for None or an empty list, ``some`` for another list or a mapping, else the text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, (list, tuple, dict)):
        return "some" if value else "none"
    return str(value)


def variant_keys(call: Call, fields: Sequence[str] | None, values: Mapping[str, Any] | None = None) -> list[str]:
    """A call's lookup keys, most specific first: ``type.v1.v2``, ``type.v1``, ``type``,
    where v1, v2 are :func:`variant_word` of the ``fields`` of the call (or of ``values``,
    the call's fields with more worked out from them)."""
    keys = []
    if fields:
        values = call.to_json() if values is None else values
        keys.append(call.type + "." + ".".join(variant_word(values.get(f)) for f in fields))
        keys.append(call.type + "." + variant_word(values.get(fields[0])))
    keys.append(call.type)
    return list(dict.fromkeys(keys))


def _note_number(name: str) -> int:
    from gpiozero.tones import Tone

    return Tone(name).midi


class Signals:
    """The signals file, read and checked.

    Args:
        path: the TOML file (default: the package's ``companion/data/signals.toml``).

    Raises:
        SignalsError: the file is missing or unreadable, a light pattern or a melody is
            malformed, a note is outside :data:`NOTE_RANGE`, or a call names an unknown
            light pattern; the message names the file and the key.

    Example::

        sig = Signals().signal_for(call, "carrousel")
        sig.lights.who, sig.notes   # "player", (("C5", 0.1), ("E5", 0.1), ("G5", 0.2))
    """

    def __init__(self, path: Path = SIGNALS_FILE):
        self.path = path
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise SignalsError(f"{path}: cannot read the signals file: {exc}") from None
        self.lights: dict[str, LightPattern] = {}
        for name, raw in data.get("lights", {}).items():
            try:
                self.lights[name] = LightPattern(
                    str(raw["who"]), float(raw["on_s"]), float(raw.get("off_s", 0.0)), int(raw.get("times", 1))
                )
            except (KeyError, TypeError, ValueError):
                raise SignalsError(
                    f"{path}: [lights] {name}: expected {{who = ..., on_s = seconds, off_s = seconds, times = n}}"
                ) from None
        self.variants: dict[str, dict[str, tuple[str, ...]]] = {
            game: {k: tuple(f.strip() for f in v.split(",")) for k, v in table.items()}
            for game, table in data.get("variants", {}).items()
        }
        self.unspoken: dict[str, frozenset[str]] = {
            game: frozenset(types) for game, types in data.get("unspoken", {}).items()
        }
        self.interruptible: dict[str, frozenset[str]] = {
            game: frozenset(types) for game, types in data.get("interruptible", {}).items()
        }
        low, high = (_note_number(n) for n in NOTE_RANGE)
        self.entries: dict[str, dict[str, Signal]] = {}
        for game, table in data.items():
            if game in ("lights", "variants", "unspoken", "interruptible", "default"):
                continue
            self.entries[game] = {
                key: self._entry(f"[{game}] {key}", key, raw, low, high) for key, raw in table.items()
            }
        if "default" not in data:
            raise SignalsError(f"{path}: [default] is missing (the pattern of a call without one)")
        self.default = self._entry("[default]", "default", data["default"], low, high)

    def _entry(self, where: str, key: str, raw: Any, low: int, high: int) -> Signal:
        if not isinstance(raw, dict):
            raise SignalsError(f"{self.path}: {where}: expected a table with lights and notes")
        light_name = raw.get("lights", "")
        if light_name and light_name not in self.lights:
            raise SignalsError(
                f"{self.path}: {where}: unknown light pattern {light_name!r} (known: {', '.join(self.lights)})"
            )
        notes = []
        for item in raw.get("notes", []):
            try:
                name, seconds = item
                name, seconds = (str(name) or None), float(seconds)
            except (TypeError, ValueError):
                raise SignalsError(f"{self.path}: {where}: notes: expected a list of [note, seconds]") from None
            if name is not None:
                try:
                    midi = _note_number(name)
                except ValueError:
                    raise SignalsError(f"{self.path}: {where}: {name!r} is not a note name (e.g. 'C5')") from None
                if not low <= midi <= high:
                    raise SignalsError(
                        f"{self.path}: {where}: note {name} is outside {NOTE_RANGE[0]}-{NOTE_RANGE[1]}"
                    )
            notes.append((name, seconds))
        return Signal(key, self.lights[light_name] if light_name else None, tuple(notes))

    def keys_for(self, call: Call, game: str) -> list[str]:
        """The lookup keys of a call in this file, most specific first."""
        return variant_keys(call, self.variants.get(game, {}).get(call.type))

    def find(self, game: str, keys: Sequence[str]) -> Signal | None:
        """The entry of the first key found in ``[game]``, then a key found in ``[common]``;
        None when neither has one."""
        table = self.entries.get(game, {})
        for key in keys:
            if key in table:
                return table[key]
        common = self.entries.get("common", {})
        for key in keys:
            if key in common:
                return common[key]
        return None

    def signal_for(self, call: Call, game: str) -> Signal:
        """The call's entry (see the module doc), else ``default``."""
        return self.find(game, self.keys_for(call, game)) or self.default

    def spoken(self, game: str, call_type: str) -> bool:
        """False for the calls ``[unspoken] <game>`` lists (too frequent to say aloud)."""
        return call_type not in self.unspoken.get(game, frozenset())

    def cut_short(self, game: str, call_type: str) -> bool:
        """True for the calls ``[interruptible] <game>`` lists: their prompt stops (or is
        skipped) when a call of a later observation comes."""
        return call_type in self.interruptible.get(game, frozenset())

    def types(self, game: str) -> set[str]:
        """Call types with an entry for ``game`` (its own or ``[common]``), variants folded."""
        keys = set(self.entries.get(game, {})) | set(self.entries.get("common", {}))
        return {k.split(".")[0] for k in keys}
