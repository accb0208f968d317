"""The ``companion`` command line.

Each subcommand lives in its own module under :mod:`companion.commands` (or beside the part it
drives) with two functions: ``configure(parser)`` adds its arguments and ``run(args) -> int``
does the work. Heavy imports (OpenCV, gpiozero) happen inside ``run`` so that ``companion
--help`` and ``companion referee`` start fast.

A user's mistake (a bad configuration key, a missing file, a bad option) is reported as one
line ``companion: error: ...`` with exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from companion import __version__

__all__ = ["main", "COMMANDS", "UsageError"]


class UsageError(Exception):
    """A user's mistake on the command line; printed as one line, exit status 2."""


def finite_float(text: str) -> float:
    """argparse type: a finite number (``nan`` and ``inf`` are refused with a clear message)."""
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


#: name -> (module, one-line help). Order is the order of ``companion --help``.
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("companion.commands.run", "run the referee service (the simulated table when no hardware)"),
    "enter": ("companion.commands.enter", "tell the running service what no sensor sees (an entry)"),
    "referee": ("companion.commands.referee", "observations as JSON Lines in, calls as JSON Lines out"),
    "replay": ("companion.commands.replay", "re-apply a journaled session and check the calls"),
    "journal": ("companion.commands.journal", "check a journal (what is intact, damaged, lost) or salvage it"),
    "config": ("companion.commands.config", "print the effective configuration"),
    "say": ("companion.commands.say", "speak a sentence with espeak-ng to check the audio (--lang en|fr|pt-BR)"),
    "encoder": ("companion.commands.encoder", "watch the shaft encoder: live angle, speed, spins"),
    "score": ("companion.commands.score", "final score table of a Carrossel game (objectives, tie-breaks)"),
    "dice": ("companion.commands.dice", "read the dice in camera images, as JSON"),
    "read": ("companion.commands.read", "read a game's table from photographs and print it as JSON"),
    "calibrate": ("companion.commands.calibrate", "calibration: camera (markers, intrinsics, geometry, colours) and encoder"),
    "doctor": ("companion.commands.doctor", "check every part the game needs: camera, GPIO, Pico, audio, groups, calibration"),
    "status": ("companion.commands.status", "ask the running service how the game stands (or show the journal's last game)"),
    "service": ("companion.commands.service", "install or remove the systemd unit that runs the companion at boot"),
}


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, every subcommand included."""
    parser = argparse.ArgumentParser(
        prog="companion",
        description="Carousel Companion: a referee for real table games.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="configuration file (default: ~/.config/carousel-companion/config.toml, "
        "then /etc/carousel-companion/config.toml)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, (module_name, help_text) in COMMANDS.items():
        module = importlib.import_module(module_name)
        p = sub.add_parser(name, help=help_text, description=(module.__doc__ or help_text).strip())
        p.formatter_class = argparse.RawDescriptionHelpFormatter
        module.configure(p)
        _config_after(p)  # --config after the command too (``companion run --config FILE``)
        p.set_defaults(_module=module)
    return parser


def _config_after(parser: argparse.ArgumentParser) -> None:
    """Accept ``--config FILE`` on ``parser`` and on every subcommand under it
    (``companion calibrate tray --config FILE``, ``companion journal check ... --config FILE``),
    as the README says: before or after the command."""
    parser.add_argument("--config", metavar="FILE", default=argparse.SUPPRESS, help="configuration file")
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                if not any("--config" in a.option_strings for a in sub._actions):
                    _config_after(sub)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``companion`` console script; returns the exit status."""
    from companion.config import ConfigError
    from companion.health import PartMissing
    from companion.journal import JournalError

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args._module.run(args) or 0)
    except (ConfigError, JournalError, UsageError, PartMissing) as exc:
        print(f"companion: error: {exc}", file=sys.stderr)
        return 2
    except EOFError:
        print("companion: error: standard input ended while an answer was expected", file=sys.stderr)
        return 2
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            return 0
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"companion: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        if type(exc).__module__.startswith("gpiozero"):
            print(f"companion: error: GPIO: {exc} (check [pins] and that this is a Raspberry Pi)", file=sys.stderr)
            return 2
        raise
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
