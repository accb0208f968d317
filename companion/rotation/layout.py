"""Which seat faces a fixed pointer, which sector faces each player: angle -> region, from data.

Generic for every turning game: Monsieur Carrousel's seats under Monsieur Carrousel's pointing
finger, Carrossel's sectors in front of each player. The rotating part is divided into sectors
(named, each an arc on the part, degrees counter-clockwise from the part's reference mark).
A *pointer* is fixed on the table at ``pointer_deg`` (same convention, table frame). When the
part has turned by ``rotation_deg``, the point of the part under the pointer is at
``(pointer_deg - rotation_deg) mod 360`` on the part.

A stop within ``margin_deg`` of a boundary between two sectors answers :data:`AMBIGUOUS`
(the rulings: "turn the carousel again") instead of guessing.

Layout data (TOML, in ``calibration/``), either equal sectors::

    margin_deg = 4.0
    offset_deg = 0.0            # where the first sector starts on the part
    names = ["red", "red", "yellow", ...]

or explicit arcs::

    margin_deg = 4.0
    sectors = [ { name = "sun", start_deg = 350.0, end_deg = 80.0 }, ... ]
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["AMBIGUOUS", "Sector", "RotaryLayout", "LayoutError", "load_layout"]

#: The answer when the pointer is within the margin of a boundary.
AMBIGUOUS = "ambiguous"


class LayoutError(ValueError):
    """Layout data that is wrong; the message names the file and field."""


@dataclasses.dataclass(frozen=True, slots=True)
class Sector:
    """An arc of the rotating part, from ``start_deg`` counter-clockwise to ``end_deg``
    (degrees on the part; it may cross 0, e.g. 350 -> 20)."""

    name: str
    start_deg: float
    end_deg: float

    @property
    def width_deg(self) -> float:
        """Angular width, degrees (0, 360]."""
        w = (self.end_deg - self.start_deg) % 360.0
        return 360.0 if w == 0 else w

    def offset_in(self, part_deg: float) -> float | None:
        """Degrees from this sector's start to ``part_deg`` when inside it, else None."""
        d = (part_deg - self.start_deg) % 360.0
        return d if d < self.width_deg else None


class RotaryLayout:
    """Sectors of a rotating part and the margin that makes a stop ambiguous.

    Args:
        sectors: the arcs; they must not overlap (gaps are allowed and answer ``ambiguous``).
        margin_deg: degrees either side of a boundary that answer ``ambiguous`` (>= 0).

    Raises:
        LayoutError: no sector, an empty name, overlapping arcs, a margin not smaller than half
            the narrowest sector.
    """

    def __init__(self, sectors: Sequence[Sector], margin_deg: float = 3.0):
        if not sectors:
            raise LayoutError("a layout needs at least one sector")
        if not (margin_deg >= 0 and math.isfinite(margin_deg)):
            raise LayoutError(f"margin_deg must be >= 0, got {margin_deg}")
        for s in sectors:
            if not s.name:
                raise LayoutError("a sector has an empty name")
            if 2 * margin_deg >= s.width_deg and len(sectors) > 1:
                raise LayoutError(
                    f"margin_deg {margin_deg} leaves nothing of sector {s.name!r} "
                    f"({s.width_deg:g} degrees wide)"
                )
        total = sum(s.width_deg for s in sectors)
        if total > 360.0 + 1e-6:
            raise LayoutError(f"sectors overlap: they cover {total:g} degrees")
        for i, a in enumerate(sectors):
            for b in sectors[i + 1 :]:
                if b.offset_in(a.start_deg + 1e-9) is not None or a.offset_in(b.start_deg + 1e-9) is not None:
                    raise LayoutError(f"sectors {a.name!r} and {b.name!r} overlap")
        self.sectors = tuple(sectors)
        self.margin_deg = float(margin_deg)

    @classmethod
    def equal(cls, names: Sequence[str], offset_deg: float = 0.0, margin_deg: float = 3.0) -> "RotaryLayout":
        """``len(names)`` equal sectors, the first starting at ``offset_deg`` on the part,
        following each other counter-clockwise."""
        if not names:
            raise LayoutError("a layout needs at least one sector")
        w = 360.0 / len(names)
        return cls(
            [Sector(n, (offset_deg + i * w) % 360.0, (offset_deg + (i + 1) * w) % 360.0)
             for i, n in enumerate(names)],
            margin_deg,
        )

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], where: str = "<layout>") -> "RotaryLayout":
        """Build from parsed TOML (see the module docstring); errors name ``where`` and the field."""
        margin = data.get("margin_deg", 3.0)
        if isinstance(margin, bool) or not isinstance(margin, (int, float)):
            raise LayoutError(f"{where}: margin_deg: expected degrees, got {margin!r}")
        try:
            if "sectors" in data:
                secs = []
                for i, s in enumerate(data["sectors"]):
                    if not isinstance(s, Mapping):
                        raise LayoutError(f"{where}: sectors[{i}]: expected a table")
                    for key in ("name", "start_deg", "end_deg"):
                        if key not in s:
                            raise LayoutError(f"{where}: sectors[{i}]: missing {key}")
                    if not isinstance(s["name"], str):
                        raise LayoutError(f"{where}: sectors[{i}].name: expected a string")
                    for key in ("start_deg", "end_deg"):
                        if isinstance(s[key], bool) or not isinstance(s[key], (int, float)):
                            raise LayoutError(f"{where}: sectors[{i}].{key}: expected degrees, got {s[key]!r}")
                    secs.append(Sector(s["name"], float(s["start_deg"]) % 360, float(s["end_deg"]) % 360))
                return cls(secs, float(margin))
            if "names" in data:
                names = data["names"]
                if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                    raise LayoutError(f"{where}: names: expected a list of strings")
                off = data.get("offset_deg", 0.0)
                if isinstance(off, bool) or not isinstance(off, (int, float)):
                    raise LayoutError(f"{where}: offset_deg: expected degrees, got {off!r}")
                return cls.equal(names, float(off), float(margin))
        except LayoutError as exc:
            msg = str(exc)
            raise LayoutError(msg if msg.startswith(where) else f"{where}: {msg}") from None
        raise LayoutError(f"{where}: expected 'names' or 'sectors'")

    def part_angle(self, rotation_deg: float, pointer_deg: float) -> float:
        """The angle on the part (degrees [0, 360)) under a pointer at ``pointer_deg``."""
        return (pointer_deg - rotation_deg) % 360.0

    def facing(self, rotation_deg: float, pointer_deg: float = 0.0) -> str:
        """The name of the sector under the pointer, or :data:`AMBIGUOUS` within the margin of
        a boundary (or in a gap between sectors).

        Args:
            rotation_deg: how far the part has turned, degrees ccw (the ``angle_deg`` of a
                ``spin_stopped``).
            pointer_deg: where the fixed pointer (or the player) is on the table, degrees ccw.
        """
        a = self.part_angle(rotation_deg, pointer_deg)
        for s in self.sectors:
            d = s.offset_in(a)
            if d is None:
                continue
            if len(self.sectors) > 1 or s.width_deg < 360.0:
                if d < self.margin_deg or s.width_deg - d < self.margin_deg:
                    return AMBIGUOUS
            return s.name
        return AMBIGUOUS

    def facing_each(self, rotation_deg: float, pointers: Mapping[str, float]) -> dict[str, str]:
        """``{player: sector or "ambiguous"}`` for players sitting at ``pointers`` (degrees)."""
        return {who: self.facing(rotation_deg, deg) for who, deg in pointers.items()}


def load_layout(path: str | Path, table: str | None = None) -> RotaryLayout:
    """Read a layout from a TOML file (optionally from one of its tables).

    Raises:
        LayoutError: missing file, bad TOML (with line and column) or bad fields.
    """
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LayoutError(f"{p}: layout file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise LayoutError(f"{p}: not valid TOML: {exc}") from None
    where = str(p)
    if table is not None:
        if table not in data or not isinstance(data[table], Mapping):
            raise LayoutError(f"{p}: no table [{table}]")
        data = data[table]
        where = f"{p} [{table}]"
    return RotaryLayout.from_mapping(data, where)
