"""Observations and calls: the typed messages that flow from readers to referees to announcers.

Every message is a frozen dataclass with a time ``t`` (seconds, float, on the session's clock:
0 at the start of the game) and a ``type`` word. Each has a JSON form, one flat object::

    {"type": "claim", "t": 12.5, "player": "Ana"}

``Event.to_json`` and ``Event.from_json`` convert both ways; ``from_json`` checks every field
against the dataclass's type hints and raises :class:`EventError` naming the field and what was
expected, so a bad line of a JSON Lines file gets a clear message instead of a traceback.

Each game lists the messages it understands in a :class:`Vocabulary`. The full vocabulary of
every game is documented in ``docs/vocabulary.md``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

__all__ = [
    "Event",
    "Observation",
    "Call",
    "EventError",
    "Vocabulary",
    "Tick",
    "InvalidObservation",
    "event_type",
    "shown",
    "dumps_line",
]


class EventError(ValueError):
    """A JSON object that is not a valid message of the vocabulary.

    ``field`` is the offending key (``None`` when the object as a whole is wrong) and the
    message says what was expected, e.g. ``field 'player': expected a string, got 3``.
    """

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


Converter = Callable[[Any], Any]


#: Characters of a bad value quoted back in a refusal (the rest is left out, its length said).
SHOWN_CHARS = 40


def shown(value: Any, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` for a refusal line; a text longer than ``limit`` characters is cut to
    its first ``limit`` with its length said (``'AAAA…' (100000 characters)``)."""
    if isinstance(value, str) and len(value) > limit:
        quoted = repr(value[:limit])
        return f"{quoted[:-1]}…{quoted[-1]} ({len(value)} characters)"
    text = repr(value)
    return text if len(text) <= limit + 2 else f"{text[:limit]}… ({len(text)} characters)"


def _long_texts(value: Any, limit: int = SHOWN_CHARS) -> list[str]:
    """The texts longer than ``limit`` characters anywhere in a JSON value (keys too), longest first."""
    out: set[str] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if len(v) > limit:
                out.add(v)
        elif isinstance(v, Mapping):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
    return sorted(out, key=len, reverse=True)


def _describe(value: Any) -> str:
    text = json.dumps(value) if _jsonable(value) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _converter(hint: Any) -> tuple[Converter, str]:
    """Build a checking converter (JSON value -> Python value) and its description."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is float:

        def conv_float(v: Any) -> float:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise TypeError
            v = float(v)  # OverflowError for an integer beyond float range
            if not math.isfinite(v):
                raise ValueError
            return v

        return conv_float, "a finite number"
    if hint is int:

        def conv_int(v: Any) -> int:
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError
            return v

        return conv_int, "an integer"
    if hint is bool:

        def conv_bool(v: Any) -> bool:
            if not isinstance(v, bool):
                raise TypeError
            return v

        return conv_bool, "true or false"
    if hint is str:

        def conv_str(v: Any) -> str:
            if not isinstance(v, str):
                raise TypeError
            v.encode("utf-8")  # UnicodeEncodeError (a ValueError) for a lone surrogate
            return v

        return conv_str, "a string"
    if hint is Any:
        return (lambda v: v), "any JSON value"
    if origin in (typing.Union, types.UnionType):
        parts = [_converter(a) for a in args if a is not type(None)]
        nullable = type(None) in args

        def conv_union(v: Any) -> Any:
            if v is None and nullable:
                return None
            for conv, _ in parts:
                try:
                    return conv(v)
                except (TypeError, ValueError, OverflowError):
                    continue
            raise TypeError

        desc = " or ".join(d for _, d in parts) + (" or null" if nullable else "")
        return conv_union, desc
    if origin is typing.Literal:
        allowed = args

        def conv_literal(v: Any) -> Any:
            if v not in allowed or isinstance(v, bool) != any(isinstance(a, bool) for a in allowed):
                raise ValueError
            return v

        return conv_literal, "one of " + ", ".join(json.dumps(a) for a in allowed)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item, item_desc = _converter(args[0])

            def conv_tuple(v: Any) -> tuple:
                if not isinstance(v, (list, tuple)):
                    raise TypeError
                return tuple(item(x) for x in v)

            if " or " in item_desc:  # "an integer or a string": no plural to make of it
                return conv_tuple, f"a list, each item {item_desc}"
            return conv_tuple, f"a list of {item_desc.removeprefix('a ').removeprefix('an ')}s"
        items = [_converter(a) for a in args]

        def conv_fixed(v: Any) -> tuple:
            if not isinstance(v, (list, tuple)) or len(v) != len(items):
                raise TypeError
            return tuple(conv(x) for (conv, _), x in zip(items, v))

        return conv_fixed, f"a list of {len(items)} ({', '.join(d for _, d in items)})"
    if origin in (dict, Mapping):
        key_conv, _ = _converter(args[0])
        val_conv, val_desc = _converter(args[1])

        def conv_dict(v: Any) -> dict:
            if not isinstance(v, dict):
                raise TypeError
            return {key_conv(k): val_conv(x) for k, x in v.items()}

        return conv_dict, f"an object of {val_desc}"
    raise TypeError(f"unsupported field type {hint!r}")


def _strict(value: Any) -> Any:
    """``value`` with non-finite floats as strings, so that it is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, list):
        return [_strict(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _strict(v) for k, v in value.items()}
    return value


def dumps_line(obj: Any) -> str:
    """One line of strict JSON for ``obj`` (no NaN or Infinity; valid UTF-8 when encoded)."""
    try:
        text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError:
        text = json.dumps(_strict(obj), separators=(",", ":"), ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from bad input: escape everything
        text = json.dumps(_strict(obj), separators=(",", ":"), ensure_ascii=True)
    return text


def _is_blank(default: Any) -> bool:
    """An observation field whose default is blank ("" or an empty or all-blank tuple) is a
    placeholder: the field must be given."""
    if default == "":
        return True
    return isinstance(default, tuple) and all(_is_blank(x) for x in default)


def _to_json_value(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_to_json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _to_json_value(v) for k, v in value.items()}
    return value


@dataclasses.dataclass(frozen=True, slots=True)
class Event:
    """Base of observations and calls.

    Attributes:
        t: time in seconds on the session clock (0 = start of the game), a finite float.

    Subclasses set ``TYPE`` (the JSON ``type`` word) and add typed fields. Field types may be
    ``float``, ``int``, ``str``, ``bool``, ``tuple[X, ...]``, fixed tuples, ``X | None``,
    ``Literal[...]`` and ``dict[str, X]``.
    """

    t: float
    TYPE: ClassVar[str] = ""
    _fields_cache: ClassVar[dict[type, list[tuple[str, Converter, str, bool]]]] = {}

    @classmethod
    def _fields(cls) -> list[tuple[str, Converter, str, bool]]:
        cached = Event._fields_cache.get(cls)
        if cached is None:
            hints = typing.get_type_hints(cls)
            cached = []
            for f in dataclasses.fields(cls):
                conv, desc = _converter(hints[f.name])
                required = (
                    f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
                ) or (issubclass(cls, Observation) and _is_blank(f.default))
                cached.append((f.name, conv, desc, required))
            Event._fields_cache[cls] = cached
        return cached

    @property
    def type(self) -> str:
        """The JSON ``type`` word of this message."""
        return self.TYPE

    def to_json(self) -> dict[str, Any]:
        """Return the JSON object (a dict) of this message, ``type`` and ``t`` first."""
        out: dict[str, Any] = {"type": self.TYPE, "t": self.t}
        for f in dataclasses.fields(self):
            if f.name != "t":
                out[f.name] = _to_json_value(getattr(self, f.name))
        return out

    def to_line(self) -> str:
        """Return the compact one-line JSON text of this message (no trailing newline).

        Always strict JSON in valid UTF-8: a non-finite number echoed from bad input is
        written as a string (``"NaN"``), text that is not valid Unicode as ``\\u`` escapes.
        """
        return dumps_line(self.to_json())

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Event:
        """Build a message of this class from a JSON object.

        Raises:
            EventError: a missing or unknown field, or a value of the wrong type, naming the
                field and what was expected.
        """
        if not isinstance(obj, Mapping):
            raise EventError(f"expected a JSON object, got {_describe(obj)}")
        kwargs: dict[str, Any] = {}
        known = {"type"}
        for name, conv, desc, required in cls._fields():
            known.add(name)
            if name not in obj:
                if required:
                    raise EventError(f"{cls.TYPE}: field '{name}' is missing ({desc})", name)
                continue
            try:
                kwargs[name] = conv(obj[name])
            except (TypeError, ValueError, OverflowError):
                raise EventError(
                    f"{cls.TYPE}: field '{name}': expected {desc}, got {_describe(obj[name])}",
                    name,
                ) from None
        unknown = sorted(set(obj) - known)
        if unknown:
            raise EventError(
                f"{cls.TYPE}: unknown field {shown(unknown[0])} (known: {', '.join(sorted(known))})",
                unknown[0],
            )
        if kwargs["t"] < 0:
            raise EventError(f"{cls.TYPE}: field 't': expected seconds >= 0, got {kwargs['t']}", "t")
        return cls(**kwargs)


@dataclasses.dataclass(frozen=True, slots=True)
class Observation(Event):
    """Something a reader saw or a person did, at time ``t`` (seconds)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Call(Event):
    """Something a referee decided, at time ``t`` (seconds), for the announcers."""


def event_type(name: str) -> Callable[[type], type]:
    """Class decorator that sets the JSON ``type`` word of a message class."""

    def deco(cls: type) -> type:
        cls.TYPE = name
        return cls

    return deco


@event_type("tick")
@dataclasses.dataclass(frozen=True, slots=True)
class Tick(Observation):
    """The clock reached ``t`` (seconds) with nothing else to report.

    The service loop sends one at each deadline a referee asks for (``next_deadline``), so
    timed rules (Carrousel's dead end) are called on time without the engine reading a clock.
    """


@event_type("invalid_observation")
@dataclasses.dataclass(frozen=True, slots=True)
class InvalidObservation(Call):
    """An observation was rejected; the game state is unchanged.

    Attributes:
        reason: what was wrong, in words, naming the field or line.
        line: 1-based line number in the input file, when it came from a file; else ``None``.
        observation: the rejected JSON object (or the raw text when it was not JSON).
    """

    reason: str = ""
    line: int | None = None
    observation: Any = None

    @classmethod
    def rejecting(cls, obs: Observation, reason: str, at: float | None = None) -> InvalidObservation:
        """The call rejecting ``obs`` for ``reason`` (cut to 300 characters), at the
        observation's time, or at ``at`` so that the calls never go back in time.

        A text of the observation longer than :data:`SHOWN_CHARS` that the reason quotes
        (``unknown player 'AAAA…'``) is quoted by its first characters and its length
        (:func:`shown`): an entry's bad value is never echoed back whole."""
        for text in _long_texts(obs.to_json()):
            if text in reason:
                plain = f"{text[:SHOWN_CHARS]}… ({len(text)} characters)"
                reason = reason.replace(repr(text), shown(text)).replace(text, plain)
        if len(reason) > 300:
            reason = reason[:300] + "..."
        return cls(t=obs.t if at is None else at, reason=reason, observation=obs.to_json())


class Vocabulary:
    """The observation and call types one game understands, by their JSON ``type`` word.

    Args:
        game: the game's name, used in error messages.
        observations: observation classes; ``Tick`` is always included.
        calls: call classes; ``InvalidObservation`` is always included.
    """

    def __init__(self, game: str, observations: Iterable[type], calls: Iterable[type]):
        self.game = game
        self.observations: dict[str, type] = {c.TYPE: c for c in (Tick, *observations)}
        self.calls: dict[str, type] = {c.TYPE: c for c in (InvalidObservation, *calls)}

    def observation(self, obj: Mapping[str, Any]) -> Observation:
        """Parse one JSON object into an observation of this game.

        Raises:
            EventError: no ``type``, an unknown type (the message lists the known ones), or a
                bad field.
        """
        return self._parse(obj, self.observations, "observation")

    def call(self, obj: Mapping[str, Any]) -> Call:
        """Parse one JSON object into a call of this game (used by replay and tests).

        Raises:
            EventError: as :meth:`observation`.
        """
        return self._parse(obj, self.calls, "call")

    def _parse(self, obj: Mapping[str, Any], table: dict[str, type], what: str) -> Any:
        if not isinstance(obj, Mapping):
            raise EventError(f"expected a JSON object, got {_describe(obj)}")
        kind = obj.get("type")
        if not isinstance(kind, str):
            raise EventError(f"field 'type' is missing or not a string ({what} type word)", "type")
        cls = table.get(kind)
        if cls is None:
            raise EventError(
                f"unknown {what} type {shown(kind)} for {self.game} (known: {', '.join(sorted(table))})",
                "type",
            )
        return cls.from_json(obj)
