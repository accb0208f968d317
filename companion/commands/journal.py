"""Check a journal, or salvage what is intact of a damaged one into a new journal.

``check`` reads the journal read-only (a read-only folder works) and prints one line of
counts, then one line per problem: entries lost (a gap in the sequence, or the end of the
journal gone with its write-ahead log), entries damaged (checksum, JSON), parts of the file
SQLite cannot read. Exit status 0 when it is whole, 1 when something is lost or damaged.

``salvage`` writes every readable session and every intact entry into NEW (which must not
exist), with the same numbers, so what is gone stays visible there as gaps. Then
``companion run --journal NEW`` goes on with it (a game that lost entries is not resumed:
``--new``), and ``companion replay NEW`` replays what is kept.

Examples:
  companion journal check ~/.local/share/carousel-companion/journal.db
  companion journal salvage journal.db journal-salvaged.db
"""

from __future__ import annotations

import argparse

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``companion journal``."""
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    c = sub.add_parser("check", help="say what is intact, damaged or lost (read-only)")
    c.add_argument("journal", help="the SQLite journal file")
    s = sub.add_parser("salvage", help="copy every intact entry into a new journal")
    s.add_argument("journal", help="the damaged SQLite journal file (read only)")
    s.add_argument("new", help="the new journal file to write (must not exist)")


def run(args: argparse.Namespace) -> int:
    """Run ``companion journal check|salvage``; 0 when whole, 1 when something is missing.

    Raises:
        companion.journal.JournalError: no such file, not readable as SQLite, or NEW exists.
    """
    from companion.journal_check import check, salvage

    if args.action == "check":
        report = check(args.journal)
        print(report.summary())
        for line in report.lines():
            print(f"  {line}")
        if report.tail is None:
            print(f"  (no {args.journal}.tail: the end of the journal cannot be checked)")
        return 0 if report.ok else 1
    report = salvage(args.journal, args.new)
    print(report.summary())
    for line in report.lines():
        print(f"  {line}")
    print(f"{args.new}: {len(report.intact)} entries and {len(report.sessions)} sessions kept")
    return 0 if report.ok else 1
