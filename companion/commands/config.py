"""Print the effective configuration (the file found, with every default filled in), as TOML.

The file is looked up at --config, then ~/.config/carousel-companion/config.toml, then
/etc/carousel-companion/config.toml. Every key is described in docs/configuration.md.
"""

from __future__ import annotations

import argparse

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``companion config`` (none but the global --config)."""
    parser.add_argument("--schema", action="store_true", help="print every key as a Markdown table")


def run(args: argparse.Namespace) -> int:
    """Print the configuration; a bad file is a one-line error (exit 2)."""
    from companion.config import describe_schema, load

    if args.schema:
        print(describe_schema())
        return 0
    print(load(args.config).to_toml(), end="")
    return 0
