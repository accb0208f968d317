"""Host side of the encoder line protocol (version 1): parse the Pico's lines, build commands.

The protocol is described in ``firmware/README.md`` and implemented on the Pico by
``firmware/protocol.py``; tests check the two sides against each other. Every line is
``$<body>*<CRC-16/CCITT-FALSE of body, 4 hex digits>\\n``; a line that fails the check is
rejected whole (:class:`LineError`), so a corrupted count is never used.
"""

from __future__ import annotations

import binascii
import dataclasses

__all__ = [
    "PROTOCOL_VERSION",
    "SUPPORTED_PROTOCOLS",
    "PRODUCT",
    "LineError",
    "IncompatibleFirmware",
    "Hello",
    "Count",
    "Index",
    "Status",
    "Ack",
    "Refusal",
    "parse_line",
    "command",
    "check_compatible",
    "crc16",
]

PROTOCOL_VERSION = 1
#: Protocol versions this host understands.
SUPPORTED_PROTOCOLS = frozenset({1})
PRODUCT = "carousel-encoder"
TICKS_PERIOD_US = 1 << 30
SEQ_PERIOD = 1 << 16
MAX_LINE = 120


class LineError(ValueError):
    """A received line that is not a valid framed message (garbage, truncated, corrupted)."""


class IncompatibleFirmware(RuntimeError):
    """The Pico runs firmware whose protocol version this host does not speak (or another
    program altogether). The message says what was found and what to do."""


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE of ``data`` (poly 0x1021, init 0xFFFF): an int 0-0xFFFF."""
    return binascii.crc_hqx(data, 0xFFFF)


@dataclasses.dataclass(frozen=True, slots=True)
class Hello:
    """``HELLO``: product word, protocol version, firmware version, boot id (32-bit int; a
    new value means the Pico restarted and its count began again at 0)."""

    product: str
    proto: int
    fw: str
    boot_id: int


@dataclasses.dataclass(frozen=True, slots=True)
class Count:
    """``C``: line sequence number (mod 2**16), Pico time (µs, mod 2**30), count (signed
    32-bit, counts; wraps)."""

    seq: int
    t_us: int
    count: int


@dataclasses.dataclass(frozen=True, slots=True)
class Index:
    """``I``: the count latched when the index pulse fired (same fields as :class:`Count`)."""

    seq: int
    t_us: int
    count: int


@dataclasses.dataclass(frozen=True, slots=True)
class Status:
    """``S``: count and the firmware's counters (``rate``, ``index``, ``rejected``, ``uptime``)."""

    seq: int
    t_us: int
    count: int
    fields: dict[str, int]


@dataclasses.dataclass(frozen=True, slots=True)
class Ack:
    """``OK <command...>``: a command was applied."""

    what: str


@dataclasses.dataclass(frozen=True, slots=True)
class Refusal:
    """``ERR <reason>``: the Pico refused a command line."""

    reason: str


Message = Hello | Count | Index | Status | Ack | Refusal


def _int(tok: str, what: str) -> int:
    try:
        return int(tok)
    except ValueError:
        raise LineError(f"{what}: expected an integer, got {tok[:12]!r}") from None


def parse_line(line: bytes) -> Message:
    """Parse one line from the Pico (bytes, with or without its newline).

    Raises:
        LineError: not framed, bad or mismatching checksum, unknown kind, wrong field count or
            a field that is not a number in range; the message says which.
    """
    raw = line.rstrip(b"\r\n")
    if not raw:
        raise LineError("empty line")
    if len(raw) > MAX_LINE:
        raise LineError(f"line of {len(raw)} bytes (at most {MAX_LINE})")
    if raw[:1] != b"$":
        raise LineError("line does not start with $ (garbage or a cut line)")
    star = raw.rfind(b"*")
    if star < 0 or len(raw) - star - 1 != 4:
        raise LineError("no *XXXX checksum at the end (truncated line?)")
    body = raw[1:star]
    try:
        want = int(raw[star + 1 :], 16)
    except ValueError:
        raise LineError("checksum is not 4 hex digits") from None
    if crc16(body) != want:
        raise LineError("checksum mismatch (corrupted line)")
    try:
        tokens = body.decode("ascii").split(" ")
    except UnicodeDecodeError:
        raise LineError("not ASCII") from None
    kind, args = tokens[0], tokens[1:]
    if kind in ("C", "I", "S"):
        if len(args) < 3 or (kind != "S" and len(args) != 3):
            raise LineError(f"{kind} line needs seq, t_us and count")
        seq = _int(args[0], "seq")
        t_us = _int(args[1], "t_us")
        count = _int(args[2], "count")
        if not 0 <= seq < SEQ_PERIOD or not 0 <= t_us < TICKS_PERIOD_US:
            raise LineError("seq or t_us out of range")
        if not -(1 << 31) <= count < (1 << 31):
            raise LineError("count outside the signed 32-bit range")
        if kind == "C":
            return Count(seq, t_us, count)
        if kind == "I":
            return Index(seq, t_us, count)
        fields = {}
        for tok in args[3:]:
            key, sep, value = tok.partition("=")
            if not sep:
                raise LineError(f"status field {tok[:12]!r} is not key=value")
            fields[key] = _int(value, key)
        return Status(seq, t_us, count, fields)
    if kind == "HELLO":
        if not args:
            raise LineError("HELLO without product")
        product = args[0]
        kv = dict(tok.partition("=")[::2] for tok in args[1:])
        if "proto" not in kv:
            raise LineError("HELLO without proto=")
        try:
            boot_id = int(kv.get("boot", "0"), 16)
        except ValueError:
            raise LineError("HELLO boot= is not hex") from None
        return Hello(product, _int(kv["proto"], "proto"), kv.get("fw", "?"), boot_id)
    if kind == "OK":
        return Ack(" ".join(args))
    if kind == "ERR":
        return Refusal(" ".join(args))
    raise LineError(f"unknown line kind {kind[:12]!r}")


def command(name: str, arg: int | None = None) -> bytes:
    """A framed command line for the Pico: ``ZERO``, ``RATE <hz>``, ``VERSION``, ``STATUS``."""
    body = name if arg is None else f"{name} {int(arg)}"
    raw = body.encode("ascii")
    return b"$" + raw + b"*" + f"{crc16(raw):04X}".encode() + b"\n"


def check_compatible(hello: Hello, port: str = "the Pico") -> None:
    """Raise :class:`IncompatibleFirmware` unless ``hello`` is our product at a supported
    protocol version; the message names the port, both versions and the fix."""
    if hello.product != PRODUCT:
        raise IncompatibleFirmware(
            f"{port}: the device says it is {hello.product!r}, not {PRODUCT!r}: "
            "flash the firmware in firmware/ (see firmware/README.md)"
        )
    if hello.proto not in SUPPORTED_PROTOCOLS:
        raise IncompatibleFirmware(
            f"{port}: firmware {hello.fw} speaks encoder protocol {hello.proto}; this "
            f"companion speaks {', '.join(map(str, sorted(SUPPORTED_PROTOCOLS)))}: flash the "
            "firmware from this release's firmware/ folder (see firmware/README.md)"
        )
