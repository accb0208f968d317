"""Rows read from the journal file's pages themselves, for when SQLite cannot reach them.

A damaged interior or root page of a table's b-tree hides every row below it from SQL, even
though the leaf pages that hold the rows are intact. :func:`scan_table_rows` reads the file
(and its write-ahead log) page by page, without SQLite, and returns every record of a table
leaf page that has the asked number of fields and an ``INTEGER PRIMARY KEY`` (stored as the
rowid, the record's first field NULL). :mod:`companion.journal_check` uses it for the
``entries`` table (8 fields; no other table of the journal has 8) and keeps a row only when its
checksum chain certifies it, so a stale copy on a freed page, or garbage that happens to parse,
is never taken for an entry.

Source: the SQLite database file format (https://www.sqlite.org/fileformat2.html): section
1.3 the database header (page size at offset 16, reserved bytes at offset 20), 1.6 b-tree
pages (leaf table page type 13, the 8-byte page header, the cell pointer array), 1.6/2.1 the
cell and record formats (varints, serial types), overflow pages, and 4.1 the WAL file format
(a 32-byte header, frames of a 24-byte header and one page).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from typing import Any

__all__ = ["scan_table_rows", "scan_tables"]

_LEAF_TABLE = 13
_WAL_MAGIC = (0x377F0682, 0x377F0683)


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    """The SQLite varint at ``buf[i:]``: ``(value, next index)``. Raises IndexError past the end."""
    value = 0
    for k in range(8):
        b = buf[i + k]
        value = (value << 7) | (b & 0x7F)
        if b < 0x80:
            return value, i + k + 1
    return (value << 8) | buf[i + 8], i + 9


def _value(serial: int, buf: bytes, i: int) -> tuple[Any, int]:
    """The record value of serial type ``serial`` at ``buf[i:]``: ``(value, next index)``.

    Raises:
        ValueError: a reserved serial type (10, 11) or a value past the end of ``buf``.
    """
    if serial == 0:
        return None, i
    if 1 <= serial <= 6:
        n = (1, 2, 3, 4, 6, 8)[serial - 1]
        if i + n > len(buf):
            raise ValueError("past the end")
        return int.from_bytes(buf[i:i + n], "big", signed=True), i + n
    if serial == 7:
        if i + 8 > len(buf):
            raise ValueError("past the end")
        return struct.unpack(">d", buf[i:i + 8])[0], i + 8
    if serial in (8, 9):
        return serial - 8, i
    if serial < 12:
        raise ValueError(f"reserved serial type {serial}")
    n = (serial - 12) // 2
    if i + n > len(buf):
        raise ValueError("past the end")
    raw = bytes(buf[i:i + n])
    return (raw if serial % 2 == 0 else raw.decode("utf-8", "surrogateescape")), i + n


def _record(payload: bytes, fields: int) -> tuple[Any, ...] | None:
    """The record's values when it has exactly ``fields`` fields, else None (never raises)."""
    try:
        header_size, i = _varint(payload, 0)
        if not 0 < header_size <= len(payload):
            return None
        serials = []
        while i < header_size:
            serial, i = _varint(payload, i)
            serials.append(serial)
            if len(serials) > fields:
                return None
        if len(serials) != fields:
            return None
        values = []
        j = header_size
        for serial in serials:
            value, j = _value(serial, payload, j)
            values.append(value)
        return tuple(values)
    except (IndexError, ValueError):
        return None


def _pages(path: str, page_size: int) -> Iterator[tuple[int, bytes]]:
    """``(page number, page bytes)`` of the database file, then of every WAL frame in order."""
    with open(path, "rb") as f:
        number = 0
        while True:
            page = f.read(page_size)
            if len(page) < page_size:
                break
            number += 1
            yield number, page
    wal = path + "-wal"
    if not os.path.isfile(wal):
        return
    with open(wal, "rb") as f:
        header = f.read(32)
        if len(header) < 32 or struct.unpack(">I", header[:4])[0] not in _WAL_MAGIC:
            return
        if struct.unpack(">I", header[8:12])[0] != page_size:
            return
        while True:
            frame = f.read(24 + page_size)
            if len(frame) < 24 + page_size:
                break
            yield struct.unpack(">I", frame[:4])[0], frame[24:]


def _header(path: str) -> tuple[int, int]:
    """``(page size, usable size)`` from the database header (file format 1.3).

    Raises:
        ValueError: the header is not an SQLite header.
    """
    with open(path, "rb") as f:
        head = f.read(100)
    if len(head) < 100 or not head.startswith(b"SQLite format 3\x00"):
        raise ValueError("not an SQLite database header")
    page_size = struct.unpack(">H", head[16:18])[0]
    page_size = 65536 if page_size == 1 else page_size
    if page_size < 512 or page_size & (page_size - 1):
        raise ValueError(f"page size {page_size}")
    return page_size, page_size - head[20]


def scan_table_rows(path: str | os.PathLike[str], fields: int) -> dict[int, tuple[Any, ...]]:
    """Every record with ``fields`` fields on a table leaf page of the journal file ``path``
    (and of its write-ahead log ``path-wal``), by rowid, read without SQLite.

    A row is ``(rowid, field 2, ..., field n)``: the first field, an ``INTEGER PRIMARY KEY``
    stored as the rowid, is NULL in the record and replaced by the rowid; records whose first
    field is not NULL are not taken. A rowid found on several pages keeps the last copy read
    (the database file first, then the log's frames in order: the newest). Overflow pages are
    followed. Nothing here checks that a row is an intact entry: the caller's checksums do.

    Args:
        path: the journal's database file (read-only; never written).
        fields: the table's number of columns (8 for ``entries``).

    Returns:
        rowid -> row tuple (ints, floats, ``str`` decoded as UTF-8 with surrogate escapes,
        ``bytes`` for blobs, None); empty when the header is not readable.

    Raises:
        OSError: the file cannot be read.
    """
    return scan_tables(path, (fields,))[fields]


def scan_tables(path: str | os.PathLike[str], fields: tuple[int, ...]) -> dict[int, dict[int, tuple[Any, ...]]]:
    """:func:`scan_table_rows` for several tables in one read of the file and its log: for each
    number of fields in ``fields``, rowid -> row (empty dicts when the header is not readable).

    Raises:
        OSError: the file cannot be read.
    """
    path = os.fspath(path)
    found: dict[int, dict[int, tuple[Any, ...]]] = {n: {} for n in fields}
    try:
        page_size, usable = _header(path)
    except ValueError:
        return found
    latest: dict[int, bytes] = {}
    leaves: list[tuple[int, bytes]] = []
    for number, page in _pages(path, page_size):
        latest[number] = page
        start = 100 if number == 1 else 0
        if page[start] == _LEAF_TABLE:
            leaves.append((number, page))
    for number, page in leaves:
        start = 100 if number == 1 else 0
        cells = struct.unpack(">H", page[start + 3:start + 5])[0]
        for k in range(cells):
            at = start + 8 + 2 * k
            if at + 2 > usable:
                break
            offset = struct.unpack(">H", page[at:at + 2])[0]
            for n, rows in found.items():
                row = _cell(page, offset, usable, latest, n)
                if row is not None:
                    rows[row[0]] = row
                    break
    return found


def _cell(page: bytes, offset: int, usable: int, latest: dict[int, bytes], fields: int) -> tuple[Any, ...] | None:
    """The row of the table leaf cell at ``offset`` (its overflow pages from ``latest``), or None."""
    try:
        size, i = _varint(page, offset)
        rowid, i = _varint(page, i)
        if rowid >= 1 << 63:
            rowid -= 1 << 64
        x = usable - 35
        if size <= x:
            payload = bytes(page[i:i + size])
        else:  # file format 1.6: the local part, then a chain of overflow pages
            m = ((usable - 12) * 32 // 255) - 23
            local = m + (size - m) % (usable - 4)
            local = local if local <= x else m
            parts = [bytes(page[i:i + local])]
            nxt = struct.unpack(">I", page[i + local:i + local + 4])[0]
            have, seen = local, set()
            while have < size and nxt and nxt not in seen and nxt in latest:
                seen.add(nxt)
                over = latest[nxt]
                take = min(size - have, usable - 4)
                parts.append(bytes(over[4:4 + take]))
                have += take
                nxt = struct.unpack(">I", over[:4])[0]
            payload = b"".join(parts)
        if len(payload) != size:
            return None
    except (IndexError, struct.error):
        return None
    record = _record(payload, fields)
    if record is None or record[0] is not None:
        return None
    return (rowid, *record[1:])
