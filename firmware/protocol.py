"""The encoder line protocol, version 1: framing, checksum, message building and parsing.

Pure module: runs under MicroPython (on the Pico and the unix port) and under CPython.
The full description, with examples, is in ``firmware/README.md``.

Every line, in both directions, is ASCII and framed as::

    $<body>*<CRC>\\n

where ``<body>`` is space-separated tokens, the first being the message kind, and ``<CRC>`` is
the CRC-16/CCITT-FALSE (polynomial 0x1021, initial value 0xFFFF, no reflection, no final XOR)
of the body's bytes, as four upper-case hex digits. A line whose checksum does not match, that
lacks ``$`` or ``*``, or that is cut short, is rejected as a whole: a corrupted count is never
taken for a real one. Source of the CRC: the CRC catalogue entry "CRC-16/CCITT-FALSE" (check
value 0x29B1 for ``b"123456789"``).
"""

#: The protocol version this firmware speaks; the host refuses other major versions.
PROTOCOL_VERSION = 1
#: The product word in the hello line, so the host knows it is talking to our firmware.
PRODUCT = "carousel-encoder"
#: Microsecond timestamps are sent modulo this period (MicroPython's ticks period on rp2).
TICKS_PERIOD_US = 1 << 30
#: Line sequence numbers are sent modulo this period.
SEQ_PERIOD = 1 << 16
#: Longest line accepted (bytes, framing included); longer input is garbage.
MAX_LINE = 120

# Commands the firmware accepts (host -> Pico).
COMMANDS = ("ZERO", "RATE", "VERSION", "STATUS")
RATE_MIN_HZ = 1
RATE_MAX_HZ = 1000


class ProtocolError(ValueError):
    """A line that is not a valid framed message; the message says what was wrong."""


def _make_table():
    table = []
    for i in range(256):
        crc = i << 8
        for _ in range(8):
            if crc & 0x8000:
                crc = ((crc << 1) ^ 0x1021) & 0xFFFF
            else:
                crc = (crc << 1) & 0xFFFF
        table.append(crc)
    return table


_TABLE = _make_table()


def crc16(data, crc=0xFFFF):
    """CRC-16/CCITT-FALSE of ``data`` (bytes), as an int 0-0xFFFF."""
    table = _TABLE
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ table[((crc >> 8) ^ byte) & 0xFF]
    return crc


def frame(body):
    """Frame a message body (str, ASCII, no ``$``, ``*`` or newline) into a line (bytes).

    Raises:
        ProtocolError: the body contains a framing character or is too long.
    """
    if "$" in body or "*" in body or "\n" in body or "\r" in body:
        raise ProtocolError("a body may not contain $, * or a newline: %r" % (body,))
    raw = body.encode()
    line = b"$" + raw + b"*" + ("%04X" % crc16(raw)).encode() + b"\n"
    if len(line) > MAX_LINE:
        raise ProtocolError("line longer than %d bytes" % MAX_LINE)
    return line


def unframe(line):
    """Check one received line (bytes or str, with or without its newline); return its tokens.

    Returns:
        a list of str tokens, the message kind first.

    Raises:
        ProtocolError: empty, too long, not ASCII, no ``$`` start, no ``*``, a checksum that
            is not four hex digits, or a checksum mismatch (a corrupted or truncated line).
    """
    if isinstance(line, str):
        try:
            line = line.encode()
        except UnicodeError:
            raise ProtocolError("not ASCII")
    line = line.rstrip(b"\r\n")
    if not line:
        raise ProtocolError("empty line")
    if len(line) > MAX_LINE:
        raise ProtocolError("line longer than %d bytes" % MAX_LINE)
    if line[0:1] != b"$":
        raise ProtocolError("line does not start with $")
    star = line.rfind(b"*")
    if star < 0:
        raise ProtocolError("no * before the checksum (truncated line?)")
    body = line[1:star]
    given = line[star + 1:]
    if len(given) != 4:
        raise ProtocolError("checksum must be 4 hex digits, got %r" % (given,))
    try:
        want = int(given, 16)
    except ValueError:
        raise ProtocolError("checksum must be 4 hex digits, got %r" % (given,))
    if crc16(body) != want:
        raise ProtocolError("checksum mismatch (corrupted line)")
    try:
        text = body.decode()
    except UnicodeError:
        raise ProtocolError("not ASCII")
    tokens = text.split(" ")
    if not tokens[0]:
        raise ProtocolError("no message kind")
    return tokens


# ---- messages from the Pico ------------------------------------------------------------------


def hello_line(fw_version, boot_id):
    """The hello line: product, protocol version, firmware version, boot id (32-bit int).

    Example: ``$HELLO carousel-encoder proto=1 fw=1.0.0 boot=1A2B3C4D*xxxx``.
    """
    return frame(
        "HELLO %s proto=%d fw=%s boot=%08X" % (PRODUCT, PROTOCOL_VERSION, fw_version, boot_id)
    )


def count_line(seq, t_us, count):
    """A count line: sequence number, time (microseconds mod 2**30), signed 32-bit count."""
    return frame("C %d %d %d" % (seq % SEQ_PERIOD, t_us % TICKS_PERIOD_US, count))


def index_line(seq, t_us, count):
    """An index line: the count latched when the index pulse (hall sensor) fired."""
    return frame("I %d %d %d" % (seq % SEQ_PERIOD, t_us % TICKS_PERIOD_US, count))


def status_line(seq, t_us, count, rate_hz, indexes, rejected, uptime_s):
    """A status line: count, report rate (Hz), index pulses seen, rejected command lines and
    uptime (s)."""
    return frame(
        "S %d %d %d rate=%d index=%d rejected=%d uptime=%d"
        % (seq % SEQ_PERIOD, t_us % TICKS_PERIOD_US, count, rate_hz, indexes, rejected, uptime_s)
    )


def ok_line(what):
    """Acknowledge a command (``OK ZERO``, ``OK RATE 100``)."""
    return frame("OK " + what)


def err_line(reason):
    """Refuse a command; ``reason`` is a few words (no framing characters)."""
    return frame("ERR " + reason.replace("*", "x").replace("$", "s"))


# ---- commands from the host ------------------------------------------------------------------


def command_line(name, arg=None):
    """A framed command line (bytes): ``ZERO``, ``RATE <hz>``, ``VERSION`` or ``STATUS``."""
    if arg is None:
        return frame(name)
    return frame("%s %d" % (name, arg))


def parse_command(line):
    """Parse a command line from the host; return ``(name, arg)`` (``arg`` an int or None).

    A framed line (``$RATE 100*xxxx``) must have a good checksum. An unframed line
    (``rate 100``, typed by a person in a serial terminal) is accepted too.

    Raises:
        ProtocolError: bad framing or checksum, unknown command, bad or missing argument.
    """
    if isinstance(line, bytes):
        try:
            text = line.decode()
        except UnicodeError:
            raise ProtocolError("not ASCII")
    else:
        text = line
    text = text.strip()
    if text.startswith("$"):
        tokens = unframe(text)
    else:
        tokens = text.split()
        if not tokens:
            raise ProtocolError("empty line")
    name = tokens[0].upper()
    if name not in COMMANDS:
        raise ProtocolError("unknown command %s" % tokens[0][:16])
    if name == "RATE":
        if len(tokens) != 2:
            raise ProtocolError("RATE needs one argument, Hz %d-%d" % (RATE_MIN_HZ, RATE_MAX_HZ))
        try:
            hz = int(tokens[1])
        except ValueError:
            raise ProtocolError("RATE needs an integer Hz")
        if not RATE_MIN_HZ <= hz <= RATE_MAX_HZ:
            raise ProtocolError("RATE must be %d-%d Hz" % (RATE_MIN_HZ, RATE_MAX_HZ))
        return name, hz
    if len(tokens) != 1:
        raise ProtocolError("%s takes no argument" % name)
    return name, None
