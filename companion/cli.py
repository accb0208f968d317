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


#: name -> (module, one-line help). Order is the order of ``companion --help``.
COMMANDS: dict[str, tuple[str, str]] = {
    #"run": ("companion.commands.run", "run the referee service (the simulated table when no hardware)"),
    "referee": ("companion.commands.referee", "observations as JSON Lines in, calls as JSON Lines out"),
    "replay": ("companion.commands.replay", "re-apply a journaled session and check the calls"),
    "config": ("companion.commands.config", "print the effective configuration"),
    "read": ("companion.commands.read", "read a game's table from photographs and print it as JSON"),
    "calibrate": ("companion.commands.calibrate", "calibrate the camera reader (markers, intrinsics, geometry, colours)"),
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
        p.set_defaults(_module=module)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``companion`` console script; returns the exit status."""
    from companion.config import ConfigError
    from companion.journal import JournalError

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args._module.run(args) or 0)
    except (ConfigError, JournalError, UsageError) as exc:
        print(f"companion: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
