"""The configuration file: one TOML file, checked key by key against a schema.

Lookup order (the first that exists wins; none at all means the defaults):

1. the path given with ``--config`` (it must exist);
2. ``~/.config/carousel-companion/config.toml``;
3. ``/etc/carousel-companion/config.toml``.

Every key has a default in :data:`SCHEMA`, so an empty file (or none) is a valid
configuration. An unknown section or key, a value of the wrong type or out of range is a
:class:`ConfigError` whose message names the file, the key and what was expected, e.g.::

    /home/ana/config.toml: [pins] buzzer: expected a BCM GPIO number 0-27, got 40

``docs/configuration.md`` lists every key; ``companion config`` prints the effective values.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["ConfigError", "Config", "Key", "SCHEMA", "load", "default_paths", "describe_schema"]


class ConfigError(Exception):
    """The configuration file is unreadable or a value in it is wrong.

    The message names the file, the section and key, and what was expected.
    """


@dataclasses.dataclass(frozen=True)
class Key:
    """One configuration key.

    Attributes:
        default: the value used when the file does not set the key.
        check: returns True when a (type-correct) value is acceptable.
        expected: words for the error message, e.g. ``"a BCM GPIO number 0-27"``.
        help: one line for ``docs/configuration.md``.
        kind: the TOML type: ``bool``, ``int``, ``float`` (an integer is accepted), ``str``,
            ``list[int]``, ``list[str]``, ``list[table]`` or ``any``.
    """

    kind: str
    default: Any
    expected: str
    help: str
    check: Callable[[Any], bool] = lambda v: True


def _gpio(v: int) -> bool:
    return 0 <= v <= 27


def _gpio_list(v: list[int]) -> bool:
    return all(_gpio(x) for x in v) and len(set(v)) == len(v)


def _positive(v: float) -> bool:
    return v > 0 and math.isfinite(v)


def _games() -> tuple[str, ...]:
    """The game names of :data:`companion.games.GAMES` (read when a file is checked)."""
    from companion.games import GAMES

    return tuple(GAMES)


def _rate(v: float) -> bool:
    return 0.0 <= v <= 1.0


def _listen(v: str) -> tuple[str, int] | None:
    """``"HOST:PORT"`` -> ``(host, port)``, or None when malformed (``[web] listen``)."""
    host, sep, port = v.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        return None
    return host, int(port)


GPIO = "a BCM GPIO number 0-27"

#: Every section and key the file may contain, with its default, type and range.
#: Other parts of the service add their own sections here (``SCHEMA["speech"] = {...}``)
#: before the file is loaded.
SCHEMA: dict[str, dict[str, Key]] = {
    "service": {
        "game": Key(
            "str", "carrousel", "a game name: carrousel, monsieur-carrousel, carrossel or carnival",
            "game refereed by `companion run` when the journal holds no unfinished game (one that does is "
            "resumed, whatever its game; `--game` overrides both)",
            lambda v: v in _games(),
        ),
        "journal": Key(
            "str",
            "~/.local/share/carousel-companion/journal.db",
            "a file path",
            "SQLite journal of every observation and call (created if missing)",
            lambda v: bool(v.strip()),
        ),
        "journal_sync": Key(
            "str",
            "normal",
            "'full' or 'normal'",
            "'full': an fsync before each call is announced; 'normal': a crash loses nothing, "
            "a power cut at most the last `journal_checkpoint_s`",
            lambda v: v in ("full", "normal"),
        ),
        "journal_checkpoint_s": Key(
            "float",
            1.0,
            "seconds from 0.1 to 60",
            "with journal_sync = 'normal': how often the journal is synced to disk",
            lambda v: 0.1 <= v <= 60,
        ),
        "pin_factory": Key(
            "str",
            "auto",
            "'auto', 'mock', 'lgpio', 'rpigpio' or 'native'",
            "gpiozero pin factory; 'auto' uses real pins on a Pi and mock pins elsewhere; a real table "
            "(--table hardware) refuses 'mock' and mock pins: it needs real ones",
            lambda v: v in ("auto", "mock", "lgpio", "rpigpio", "native"),
        ),
        "table": Key(
            "str",
            "auto",
            "'auto', 'sim' or 'hardware'",
            "'sim' plays on the simulated table; 'hardware' uses only the real parts and stops "
            "naming any that is missing; 'auto' = hardware on a Raspberry Pi, sim elsewhere",
            lambda v: v in ("auto", "sim", "hardware"),
        ),
        "announcers": Key(
            "list[str]",
            ["console", "speech", "lights", "web"],
            "a list of distinct names among console, speech, lights, web",
            "what tells the table each call (speech also needs [speech] enabled, web [web] enabled)",
            lambda v: len(set(v)) == len(v) and all(x in ("console", "speech", "lights", "web") for x in v),
        ),
        "next_game": Key(
            "str",
            "auto",
            "'auto', 'wait' or 'exit'",
            "after a game ends: 'wait' for the next one (a long press on button 1, or `companion "
            "enter --new-game`), 'exit'; 'auto' = wait at a real table, exit on the simulated one",
            lambda v: v in ("auto", "wait", "exit"),
        ),
        "speed": Key(
            "float",
            1.0,
            "a number from 0.1 to 1000",
            "clock speed of the simulated table (1 = real time)",
            lambda v: 0.1 <= v <= 1000,
        ),
        "log_level": Key(
            "str",
            "info",
            "'debug', 'info', 'warning' or 'error'",
            "console log level",
            lambda v: v in ("debug", "info", "warning", "error"),
        ),
    },
    "players": {
        "names": Key(
            "list[str]",
            ["Ana", "Ben", "Cleo", "Dev"],
            "a list of 2 to 4 distinct names of 1-24 printable characters",
            "players in seat order; seat k uses claim button k and LED k",
            lambda v: 2 <= len(v) <= 4 and len(set(v)) == len(v)
            and all(n.strip() and len(n) <= 24 and n.isprintable() for n in v),
        ),
    },
    "pins": {
        "buzzer": Key("int", 12, GPIO, "TonalBuzzer (PWM) through a transistor", _gpio),
        "claim_buttons": Key(
            "list[int]",
            [5, 6, 13, 19],
            "a list of 4 distinct BCM GPIO numbers 0-27",
            "claim buttons of seats 1-4, to ground, internal pull-up",
            lambda v: len(v) == 4 and _gpio_list(v),
        ),
        "player_leds": Key(
            "list[int]",
            [16, 20, 21, 26],
            "a list of 4 distinct BCM GPIO numbers 0-27",
            "LEDs of seats 1-4, each through its resistor",
            lambda v: len(v) == 4 and _gpio_list(v),
        ),
        "yes_button": Key("int", 23, GPIO, "kids' YES button", _gpio),
        "no_button": Key("int", 24, GPIO, "kids' NO button", _gpio),
        "die_button": Key("int", 22, GPIO, "electronic die button", _gpio),
        "encoder_a": Key("int", 17, GPIO, "encoder channel A (GPIO path)", _gpio),
        "encoder_b": Key("int", 27, GPIO, "encoder channel B (GPIO path)", _gpio),
        "encoder_index": Key("int", 4, GPIO, "index pulse: hall sensor (GPIO path)", _gpio),
    },
    "encoder": {
        "backend": Key(
            "str",
            "auto",
            "'auto', 'pico', 'gpio' or 'sim'",
            "shaft encoder: the Pico on USB, gpiozero pins, or simulated; 'auto' = the Pico "
            "when plugged in, else simulated",
            lambda v: v in ("auto", "pico", "gpio", "sim"),
        ),
        "port": Key("str", "", "a serial device or ''", "Pico serial port; '' finds it by usb_id"),
        "usb_id": Key(
            "str", "2E8A:0005", "a USB id VVVV:PPPP (hexadecimal)", "USB VID:PID of the Pico",
            lambda v: re.fullmatch(r"[0-9A-Fa-f]{4}:[0-9A-Fa-f]{4}", v) is not None,
        ),
        "lines_per_rev": Key(
            "int", 600, "an integer 1-100000",
            "encoder lines (pulses per revolution); every backend counts 4 per line (quadrature edges)",
            lambda v: 1 <= v <= 100000,
        ),
        "gear_ratio": Key(
            "float", 1.0, "a number > 0", "encoder turns per turn of the rotating part", _positive
        ),
        "calibration": Key(
            "str",
            "",
            "a file path or empty",
            "measured counts per turn (written by `companion calibrate encoder`); a file named here must exist "
            "(else the start is refused); empty = encoder.toml in the calibration folder ([calibration] dir), "
            "used when present",
        ),
        "direction": Key(
            "str", "ccw", "'ccw' or 'cw'",
            "which way a rising count turns the part, seen from above",
            lambda v: v in ("ccw", "cw"),
        ),
        "index": Key("bool", True, "true or false", "a hall sensor index is fitted"),
        "index_angle_deg": Key(
            "float", 0.0, "degrees 0-360", "angle of the part when the index pulse fires",
            lambda v: 0 <= v < 360,
        ),
        "settle_s": Key(
            "float", 0.25, "seconds from 0.05 to 5", "no motion for this long = stopped",
            lambda v: 0.05 <= v <= 5,
        ),
        "deadband_counts": Key(
            "int", 3, "an integer 0-1000", "count jitter ignored at rest",
            lambda v: 0 <= v <= 1000,
        ),
        "rate_hz": Key(
            "int", 100, "an integer 1-1000",
            "heartbeat rate of the encoder reader (Pico or gpio): a stop needs a sample",
            lambda v: 1 <= v <= 1000,
        ),
        "sim_seed": Key("int", 1, "an integer", "seed of the simulated shaft"),
        "sim_spin_every_s": Key(
            "float", 8.0, "seconds from 1 to 3600", "mean time between simulated spins",
            lambda v: 1 <= v <= 3600,
        ),
        "sim_link_drop_every_s": Key(
            "float", 0.0, "seconds >= 0 (0 = never)",
            "fault injection: mean time between simulated 0.5 s link drops",
            lambda v: v >= 0 and math.isfinite(v),
        ),
    },
    "buttons": {
        "bounce_s": Key(
            "float",
            0.02,
            "seconds from 0.001 to 0.5",
            "debounce time of every button (gpiozero bounce_time)",
            lambda v: 0.001 <= v <= 0.5,
        ),
    },
    "carrousel": {
        "advanced": Key(
            "bool", False, "true or false", "advanced rules: every face-up card counts"
        ),
        "dead_end_s": Key(
            "float",
            20.0,
            "seconds from 0.1 to 600",
            "seconds without a point before the dead end is called (rulebook: 20)",
            lambda v: 0.1 <= v <= 600,
        ),
        "countdown_s": Key(
            "int",
            0,
            "an integer from 0 to 10",
            "the last seconds before the dead end counted down aloud (0 = off)",
            lambda v: 0 <= v <= 10,
        ),
    },
    "monsieur_carrousel": {
        "layout": Key(
            "str",
            "1A",
            "a seating disc side 1A-6B",
            "seating disc side in the carousel (monsieur_carrousel.toml in the calibration folder)",
            lambda v: len(v) == 2 and v[0] in "123456" and v[1] in "AB",
        ),
        "table_file": Key(
            "str", "", "a file path or empty", "seat layouts and zones file; empty = the shipped one"
        ),
        "twins_help": Key(
            "bool", True, "true or false", "offer the twins' extra roll with one kid left"
        ),
        "min_revolutions": Key(
            "float",
            1.0,
            "turns from 0.1 to 10",
            "a weather spin shorter than this is repeated (rulebook: one full turn)",
            lambda v: 0.1 <= v <= 10,
        ),
        "spin_timeout_s": Key(
            "float",
            30.0,
            "seconds from 1 to 600",
            "a spin not reported stopped after this long is asked again",
            lambda v: 1 <= v <= 600,
        ),
    },
    "speech": {
        "enabled": Key("bool", True, "true or false", "speak the calls (espeak-ng); false = buzzer only"),
        "language": Key(
            "str",
            "en",
            "'en', 'fr' or 'pt-BR'",
            "language of the spoken prompts (companion/locale/<language>.toml)",
            lambda v: v in ("en", "fr", "pt-BR"),
        ),
        "voice": Key("str", "", "an espeak-ng voice or empty", "espeak-ng voice; empty = the language's own"),
        "speed_wpm": Key(
            "int", 140, "words per minute from 80 to 450", "speaking speed (espeak-ng -s)",
            lambda v: 80 <= v <= 450,
        ),
        "cache_dir": Key(
            "str",
            "~/.cache/carousel-companion/speech",
            "a folder path",
            "rendered prompts (WAV), also where they are written when there is no audio device; created when "
            "missing; a folder that cannot be created or written stops the start (speech on) in one line",
        ),
        "device": Key("str", "", "an ALSA device name or empty", "aplay -D device; empty = the default"),
        "timeout_s": Key(
            "float", 5.0, "seconds from 0.5 to 60",
            "limit of one espeak-ng run and of playback beyond the prompt's length",
            lambda v: 0.5 <= v <= 60,
        ),
    },
    "monsieur_carrousel_sim": {
        "seat_by": Key(
            "str", "camera", "'camera' or 'button'",
            "how the simulated table reports a seated kid: camera reading or the YES button",
            lambda v: v in ("camera", "button"),
        ),
        "memory": Key(
            "float", -1.0, "a probability 0-1, or -1", "chance the simulated kids remember a seat; -1 = by difficulty",
            lambda v: v == -1.0 or 0.0 <= v <= 1.0,
        ),
        "fit_rate": Key("float", 0.5, "a probability 0-1", "chance a sunbeam fragment completes the sunbeam", _rate),
        "think_s": Key(
            "float", 4.0, "seconds from 0.05 to 30",
            "mean time a simulated child takes to act after a prompt (spoken prompts last 1-5 s)",
            lambda v: 0.05 <= v <= 30,
        ),
        "short_spin_rate": Key("float", 0.1, "a probability 0-1", "chance a spin is shorter than one turn", _rate),
        "unreadable_die_rate": Key("float", 0.03, "a probability 0-1", "chance the die reads as two colours", _rate),
        "both_buttons_rate": Key("float", 0.02, "a probability 0-1", "chance YES and NO are pressed together", _rate),
        "stuck_spin_rate": Key("float", 0.0, "a probability 0-1", "chance a spin never reports a stop", _rate),
        "misread_seats_rate": Key("float", 0.0, "a probability 0-1", "chance the camera sees a kid on an empty seat", _rate),
    },
    "carrossel": {
        "data": Key(
            "str",
            "",
            "a file path, or empty for carrossel.toml in the calibration folder",
            "Carrossel game data: board sides, seats, client and objective cards",
        ),
        "turn_tolerance_deg": Key(
            "float",
            20.0,
            "degrees, more than 0 and less than 45",
            "how far a board angle may be from the expected quarter/third/half turn",
            lambda v: 0 < v < 45,
        ),
    },
    "carnival": {
        "copies_per_part": Key(
            "int", 4, "an integer 1-10", "copies of each of the 20 parts cards in the box", lambda v: 1 <= v <= 10
        ),
        "white_tip_copies": Key(
            "int",
            1,
            "an integer 0-10",
            "copies of each parts card with a white-tip ribbon, removed for 2-3 players",
            lambda v: 0 <= v <= 10,
        ),
        "wilds": Key("int", 6, "an integer 4-20", "wild cards in the box", lambda v: 4 <= v <= 20),
        "white_tip_wilds": Key(
            "int", 0, "an integer 0-10", "wilds with a white-tip ribbon, removed for 2-3 players", lambda v: 0 <= v <= 10
        ),
    },
    "dice": {
        "tray": Key(
            "list[int]",
            [],
            "[] or [x0, y0, x1, y1] pixels with x0 < x1 and y0 < y1",
            "the dice tray's region of interest in the camera frame ([] = the whole frame)",
            lambda v: v == [] or (len(v) == 4 and 0 <= v[0] < v[2] and 0 <= v[1] < v[3]),
        ),
        "die_px_min": Key(
            "float", 22.0, "pixels from 4 to 500", "smallest side of a die's box in the frame", lambda v: 4 <= v <= 500
        ),
        "die_px_max": Key(
            "float", 70.0, "pixels from 4 to 1000", "largest side of a die's box in the frame", lambda v: 4 <= v <= 1000
        ),
        "settle_s": Key(
            "float",
            0.5,
            "seconds from 0 to 10",
            "a roll is reported once the dice read the same for this long",
            lambda v: 0 <= v <= 10,
        ),
    },
    "sim": {
        "seed": Key(
            "int", 1, "an integer >= 0", "seed of the simulated table (same seed, same game)", lambda v: v >= 0
        ),
        "move_time_s": Key(
            "float",
            1.5,
            "seconds from 0.05 to 30",
            "mean time a simulated player takes for one move",
            lambda v: 0.05 <= v <= 30,
        ),
        "illegal_rate": Key(
            "float", 0.05, "a probability 0-1", "chance that a move is illegal", _rate
        ),
        "false_claim_rate": Key(
            "float", 0.04, "a probability 0-1", "chance per move that someone claims wrongly", _rate
        ),
        "stall_rate": Key(
            "float",
            0.08,
            "a probability 0-1",
            "chance per point that the table stalls until a dead end",
            _rate,
        ),
    },
    "web": {
        "enabled": Key("bool", True, "true or false",
                       "serve the table's web page (with the `web` announcer in [service] announcers)"),
        "listen": Key(
            "str", "127.0.0.1:8080", "HOST:PORT (port 0-65535; 0 = any free port)",
            "address of the web page; a host other than 127.0.0.1/localhost needs lan = true",
            lambda v: _listen(v) is not None,
        ),
        "token": Key(
            "str", "", "'' or a token of 16 to 128 letters, digits, '-' or '_'",
            "the page's token; '' = generated and kept beside the journal (.web-token, mode 0600)",
            lambda v: v == "" or re.fullmatch(r"[A-Za-z0-9_-]{16,128}", v) is not None,
        ),
        "lan": Key("bool", False, "true or false",
                   "open the page to the local network: every request then needs the token"),
    },
    "camera": {
        "source": Key(
            "str",
            "auto",
            "auto, picamera2, opencv:INDEX, opencv:PATH_OR_URL, folder:PATH or sim[:SEED]",
            "where frames come from (companion run --camera overrides it); 'auto' = picamera2 "
            "at a real table; sim[:SEED] only on the simulated table",
            lambda v: v in ("auto", "picamera2") or v.startswith(("opencv:", "folder:", "sim")),
        ),
        "settle_s": Key(
            "float", 0.5, "seconds from 0 to 10", "a reading must stay the same this long before it is reported",
            lambda v: 0.0 <= v <= 10.0,
        ),
        "frame_period_s": Key(
            "float", 0.1, "seconds from 0 to 10", "read at most one frame per this many seconds (0 = every frame)",
            lambda v: 0.0 <= v <= 10.0,
        ),
        "width": Key("int", 640, "pixels from 160 to 4096", "frame width asked of the camera", lambda v: 160 <= v <= 4096),
        "height": Key("int", 480, "pixels from 120 to 3072", "frame height asked of the camera", lambda v: 120 <= v <= 3072),
        "seats": Key(
            "list[str]",
            [],
            "seats among south, east, north, west",
            "seat of each player in order (empty = south, north for 2; south, east, north for 3; all four for 4)",
            lambda v: all(x in ("south", "east", "north", "west") for x in v) and len(set(v)) == len(v),
        ),
        "geometry": Key("str", "", "a file path or empty", "board geometry file (empty = carrousel-board.json in the calibration folder)"),
        "colours": Key("str", "", "a file path or empty", "reference colours file (empty = carrousel-colours.json in the calibration folder)"),
        "intrinsics": Key("str", "", "a file path or empty", "camera intrinsics from companion calibrate intrinsics (empty = camera.json in the calibration folder when there is one, else the lens is treated as distortion-free)"),
        "redetect_every": Key(
            "int", 30, "frames from 1 to 1000", "detect the markers again after this many frames even when nothing moved",
            lambda v: 1 <= v <= 1000,
        ),
        "warmup_s": Key(
            "float", 1.0, "seconds from 0 to 30", "picamera2: automatic exposure time before exposure and white balance are locked",
            lambda v: 0.0 <= v <= 30.0,
        ),
        "slip_tolerance_deg": Key(
            "float", 5.0, "degrees from 0.5 to 90",
            "a turning part read by the camera and the encoder: the two angles at rest may differ by this much; "
            "more is a slip (called, and the encoder re-zeroed on the camera)",
            lambda v: 0.5 <= v <= 90.0,
        ),
    },
    "calibration": {
        "dir": Key(
            "str",
            "~/.local/share/carousel-companion/calibration",
            "a folder path",
            "your calibration files: `companion calibrate` writes here; `read`, `run` and `doctor` read a "
            "file here when present, else the default shipped read-only in the package",
            lambda v: bool(v.strip()),
        ),
    },
}


def _check_kind(kind: str, value: Any) -> Any:
    """Return the value converted to its kind, or raise TypeError."""
    if kind == "any":
        return value
    if kind == "bool":
        if isinstance(value, bool):
            return value
    elif kind == "int":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif kind == "float":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif kind == "str":
        if isinstance(value, str):
            return value
    elif kind.startswith("list[") and isinstance(value, list):
        inner = kind[5:-1]
        if inner == "table":
            if all(isinstance(x, dict) for x in value):
                return value
        else:
            return [_check_kind(inner, x) for x in value]
    raise TypeError


@dataclasses.dataclass(frozen=True)
class Config:
    """The effective configuration: every section and key, defaults filled in.

    Attributes:
        values: ``{section: {key: value}}``.
        source: the file it was read from, or ``None`` for defaults only.
    """

    values: Mapping[str, Mapping[str, Any]]
    source: Path | None = None

    def __getitem__(self, section: str) -> Mapping[str, Any]:
        return self.values[section]

    def get(self, section: str, key: str) -> Any:
        """Return one value; raises KeyError for a section or key not in the schema."""
        return self.values[section][key]

    def to_toml(self) -> str:
        """Return the effective configuration as TOML text (for ``companion config``)."""
        lines = [f"# effective configuration (from {self.source or 'defaults'})"]
        for section, keys in self.values.items():
            lines.append(f"\n[{section}]")
            for key, value in keys.items():
                lines.append(f"{key} = {_toml_value(value)}")
        return "\n".join(lines) + "\n"


def _toml_kind(value: Any) -> str:
    """The TOML kind of a parsed value, in words ("string", "integer", "array", ...)."""
    if isinstance(value, bool):
        return "boolean"
    for kind, name in ((str, "string"), (int, "integer"), (float, "float"), (list, "array"), (dict, "table")):
        if isinstance(value, kind):
            return name
    return "date or time"


def _describe_toml(value: Any) -> str:
    """A parsed value written back as TOML, cut to 40 characters."""
    try:
        text = _toml_value(value)
    except Exception:  # a kind _toml_value does not write (a date)
        text = str(value)
    return text if len(text) <= 40 else text[:40] + "…"


def _toml_value(value: Any) -> str:
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    return repr(value)


_MAX_BYTES = 1_000_000


def default_paths() -> list[Path]:
    """The files looked up when ``--config`` is not given, in order."""
    home = Path(os.environ.get("HOME", "~")).expanduser()
    return [
        home / ".config" / "carousel-companion" / "config.toml",
        Path("/etc/carousel-companion/config.toml"),
    ]


def validate(data: Mapping[str, Any], where: str = "<config>") -> Config:
    """Check a parsed TOML document against :data:`SCHEMA` and fill in the defaults.

    Args:
        data: the parsed document (``tomllib.loads`` output).
        where: file name used in error messages.

    Raises:
        ConfigError: an unknown section or key, a wrong type or an out-of-range value; the
            message names ``where``, ``[section] key`` and what was expected.
    """
    values: dict[str, dict[str, Any]] = {}
    for section, value in data.items():
        if section not in SCHEMA and not isinstance(value, dict):
            raise ConfigError(
                f"{where}: key '{section}' outside any section (put it under its [section]; "
                f"sections: {', '.join(sorted(SCHEMA))})"
            )
        if section not in SCHEMA:
            raise ConfigError(
                f"{where}: unknown section [{section}] (known: {', '.join(sorted(SCHEMA))})"
            )
        if not isinstance(value, dict):
            got = ("an array of tables ([[" + section + "]]): write [" + section + "] once"
                   if isinstance(value, list) and value and all(isinstance(v, dict) for v in value)
                   else f"{'an' if _toml_kind(value)[0] in 'aeiou' else 'a'} {_toml_kind(value)} ({_describe_toml(value)})")
            raise ConfigError(f"{where}: [{section}] must be a table, got {got}")
    for section, keys in SCHEMA.items():
        given = data.get(section, {})
        out: dict[str, Any] = {}
        for key in given:
            if key not in keys:
                raise ConfigError(
                    f"{where}: [{section}] unknown key '{key}' (known: {', '.join(sorted(keys))})"
                )
        for key, spec in keys.items():
            if key not in given:
                out[key] = spec.default
                continue
            raw = given[key]
            try:
                v = _check_kind(spec.kind, raw)
                ok = spec.check(v)
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise ConfigError(
                    f"{where}: [{section}] {key}: expected {spec.expected}, got {_toml_value(raw)}"
                )
            out[key] = v
        values[section] = out
    _check_pins(values["pins"], where)
    dice = values["dice"]
    if dice["die_px_min"] >= dice["die_px_max"]:
        raise ConfigError(f"{where}: [dice] die_px_min: expected less than die_px_max ({_toml_value(dice['die_px_max'])}), "
                          f"got {_toml_value(dice['die_px_min'])}")
    return Config(values)


def _check_pins(pins: Mapping[str, Any], where: str) -> None:
    """Two parts wired to one GPIO is a mistake: name both keys."""
    used: dict[int, str] = {}
    for key, value in pins.items():
        for i, gpio in enumerate(value if isinstance(value, list) else [value]):
            name = f"{key}[{i}]" if isinstance(value, list) else key
            if gpio in used:
                raise ConfigError(
                    f"{where}: [pins] {key}: GPIO {gpio} is already used by {used[gpio]} "
                    "(expected a pin of its own)"
                )
            used[gpio] = name


def _read_regular(path: Path) -> bytes:
    """At most ``_MAX_BYTES + 1`` bytes of ``path``, refusing anything but a regular file.

    The file is opened with O_NONBLOCK and checked with fstat before reading, so a FIFO (which
    would block until a writer comes), a device (``/dev/zero``) or a socket is refused at once.

    Raises:
        ConfigError: not a regular file (naming what it is).
        OSError: it cannot be opened or read.
    """
    import stat

    if os.path.realpath(path) == os.devnull:
        return b""  # `--config /dev/null`: the defaults, as the shell idiom means
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            what = ("a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                    else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
            raise ConfigError(f"{path}: {what}, not a TOML configuration file (expected a regular file)")
        chunks, size = [], 0
        while size <= _MAX_BYTES:
            chunk = os.read(fd, _MAX_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def load(path: str | os.PathLike[str] | None = None) -> Config:
    """Find, read and check the configuration file.

    Args:
        path: an explicit file (``--config``); it must exist. ``None`` looks in
            :func:`default_paths` and falls back to the defaults when none exists.

    Raises:
        ConfigError: the explicit file is missing, a file is not valid TOML (the message gives
            the line and column) or a value is wrong (see :func:`validate`).
    """
    candidates = [Path(path)] if path is not None else default_paths()
    for p in candidates:
        if not p.exists():
            if path is not None:
                raise ConfigError(f"{p}: configuration file not found")
            continue
        if p.is_dir():
            raise ConfigError(f"{p}: a folder, not a TOML configuration file")
        try:
            raw = _read_regular(p)
            if len(raw) > _MAX_BYTES:
                raise ConfigError(f"{p}: more than {_MAX_BYTES} bytes; expected a small TOML file")
            text = raw.decode("utf-8")
            # a UTF-8 byte-order mark (some Windows editors write one) is no part of the TOML
            data = tomllib.loads(text.removeprefix("\ufeff"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{p}: not valid TOML: {exc}") from None
        except RecursionError:  # tomllib recurses once per nested bracket or brace
            raise ConfigError(f"{p}: not valid TOML: arrays or tables nested too deep "
                              "(expected a configuration a few levels deep)") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{p}: cannot read: {exc}") from None
        cfg = validate(data, str(p))
        return Config(cfg.values, p)
    return validate({}, "<defaults>")


def describe_schema() -> str:
    """Return the schema as a Markdown table per section (for ``docs/configuration.md``)."""
    out = []
    for section, keys in SCHEMA.items():
        out.append(f"### [{section}]\n\n| key | default | expected | what |\n|---|---|---|---|")
        for key, spec in keys.items():
            out.append(f"| `{key}` | `{_toml_value(spec.default)}` | {spec.expected} | {spec.help} |")
        out.append("")
    return "\n".join(out)
