"""The firmware's logic: when to report, index latching, commands. Pure and clock-free.

The hardware glue (``main.py``) reads the PIO counter and the clock and calls :class:`EncoderApp`
with them; everything that decides what goes on the wire is here, so it is tested under the
MicroPython unix interpreter and CPython without a Pico.

Reporting rule (see ``firmware/README.md``):

* a count line as soon as the count changes, but no closer than ``MIN_GAP_US`` to the previous
  line (at most 1000 lines a second, about 30 kB/s on USB full speed);
* a count line every ``1 / rate_hz`` seconds even when nothing moves (a heartbeat, so the host
  can tell a still shaft from a dead link);
* an index line for each index pulse, with the count interpolated at the pulse's time between
  the two counter readings around it.
"""

from protocol import (
    PROTOCOL_VERSION,
    ProtocolError,
    count_line,
    err_line,
    hello_line,
    index_line,
    ok_line,
    parse_command,
    status_line,
)
from quadrature import to_signed32

FIRMWARE_VERSION = "1.0.0"
MIN_GAP_US = 1000
DEFAULT_RATE_HZ = 50
#: Index pulses closer than this to the previous one are magnet bounce, not a new turn.
INDEX_HOLDOFF_US = 20000

__all__ = ["EncoderApp", "FIRMWARE_VERSION", "PROTOCOL_VERSION"]


def ticks_diff(a, b):
    """``a - b`` for microsecond stamps taken modulo 2**30 (like ``time.ticks_diff``)."""
    d = (a - b) & 0x3FFFFFFF
    if d & 0x20000000:
        d -= 0x40000000
    return d


class EncoderApp:
    """Decides what the Pico sends; fed with counter readings, index times and command lines.

    Args:
        write: called with each framed line (bytes) to send.
        boot_id: a 32-bit number drawn at power-on, so the host can tell a reboot (count lost)
            from a USB reconnection (count kept).
        rate_hz: heartbeat rate in Hz (1-1000).

    Attributes:
        indexes: index pulses accepted.
        rejected: command lines refused (bad framing, checksum or command).
    """

    def __init__(self, write, boot_id, rate_hz=DEFAULT_RATE_HZ):
        self.write = write
        self.boot_id = boot_id & 0xFFFFFFFF
        self.rate_hz = rate_hz
        self.offset = 0
        self.seq = 0
        self.indexes = 0
        self.rejected = 0
        self._last_line_us = None
        self._last_sent = None
        self._prev = None  # (t_us, count) of the previous counter reading
        self._pending_index = None  # t_us of an index pulse not yet latched
        self._last_index_us = None
        self._uptime_us = 0
        self._last_poll_us = None

    def _next_seq(self):
        s = self.seq
        self.seq = (self.seq + 1) & 0xFFFF
        return s

    def count_of(self, raw):
        """The reported count (signed 32-bit, counts) of a raw 32-bit counter value."""
        return to_signed32(raw - self.offset)

    def hello(self):
        """Send the hello line (at start-up and in answer to VERSION)."""
        self.write(hello_line(FIRMWARE_VERSION, self.boot_id))

    def index_pulse(self, t_us):
        """Note an index pulse at ``t_us`` (microseconds, mod 2**30); latched at the next poll.

        Pulses within ``INDEX_HOLDOFF_US`` of the previous one are ignored (bounce).
        """
        if self._last_index_us is not None and 0 <= ticks_diff(t_us, self._last_index_us) < INDEX_HOLDOFF_US:
            return
        self._last_index_us = t_us
        self._pending_index = t_us

    def poll(self, now_us, raw):
        """Take one counter reading: ``raw`` (32-bit counter value) at ``now_us`` (µs, mod 2**30).

        Sends the index line of a pending pulse, then a count line when the rule says so.
        """
        count = self.count_of(raw)
        if self._last_poll_us is not None:
            self._uptime_us += max(0, ticks_diff(now_us, self._last_poll_us))
        self._last_poll_us = now_us
        if self._pending_index is not None:
            t_i = self._pending_index
            self._pending_index = None
            latched = count
            if self._prev is not None:
                t0, c0 = self._prev
                span = ticks_diff(now_us, t0)
                part = ticks_diff(t_i, t0)
                if span > 0 and 0 <= part <= span:
                    latched = c0 + ((count - c0) * part + span // 2) // span
            self.indexes += 1
            self.write(index_line(self._next_seq(), t_i, latched))
        self._prev = (now_us, count)
        since = None if self._last_line_us is None else ticks_diff(now_us, self._last_line_us)
        if since is None or (count != self._last_sent and since >= MIN_GAP_US) or (
            since >= 1000000 // self.rate_hz
        ):
            self._last_line_us = now_us
            self._last_sent = count
            self.write(count_line(self._next_seq(), now_us, count))

    def command(self, line, now_us, raw):
        """Handle one command line from the host (bytes or str) at ``now_us`` with counter ``raw``."""
        try:
            name, arg = parse_command(line)
        except ProtocolError as exc:
            self.rejected += 1
            self.write(err_line(str(exc)))
            return
        if name == "ZERO":
            self.offset = raw & 0xFFFFFFFF
            self._prev = None
            self._last_sent = None
            self.write(ok_line("ZERO"))
        elif name == "RATE":
            self.rate_hz = arg
            self.write(ok_line("RATE %d" % arg))
        elif name == "VERSION":
            self.hello()
        elif name == "STATUS":
            self.write(
                status_line(
                    self._next_seq(), now_us, self.count_of(raw), self.rate_hz,
                    self.indexes, self.rejected, self._uptime_us // 1000000,
                )
            )
