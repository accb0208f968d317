"""The Pico over USB serial (pyserial): finds it by USB VID:PID, follows it across unplug and
replug, refuses firmware of another protocol version.

Wiring and flashing: ``hardware/README.md`` and ``firmware/README.md``. The Pico enumerates as
a USB CDC serial port (``/dev/ttyACM0`` on Linux) with MicroPython's VID:PID 2E8A:0005.

Surviving unplug and replug: on any serial error the port is closed at once (a port held open
makes Linux give the returning device a new name, ttyACM0 -> ttyACM1; pyserial issue 36),
:class:`~companion.rotation.samples.LinkLost` is reported, and the port is searched again *by
VID:PID* every ``reconnect_s`` seconds, whatever its new name. On return the host asks for the
hello: the same boot id means the Pico kept counting meanwhile (count continuous), a new one
means it restarted (the angle must be found again from the index pulse).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from companion.clock import Clock
from companion.rotation import protocol as proto
from companion.rotation.samples import (
    CountSample,
    IndexPulse,
    LinkFault,
    LinkLost,
    LinkRestored,
    OnSample,
)

__all__ = ["PicoEncoder", "find_pico_port", "parse_usb_id", "DEFAULT_USB_ID"]

log = logging.getLogger(__name__)

DEFAULT_USB_ID = (0x2E8A, 0x0005)


def parse_usb_id(text: str) -> tuple[int, int]:
    """``"2E8A:0005"`` -> ``(0x2E8A, 0x0005)``. Raises ValueError for another form."""
    vid, sep, pid = text.partition(":")
    if not sep or len(vid) != 4 or len(pid) != 4:
        raise ValueError(f"expected a USB id VVVV:PPPP in hex, got {text!r}")
    return int(vid, 16), int(pid, 16)


def find_pico_port(usb_id: tuple[int, int] = DEFAULT_USB_ID) -> str | None:
    """The device path of the first serial port with this USB VID:PID, or None.

    Uses ``serial.tools.list_ports.comports()``; several matches are sorted by name.
    """
    from serial.tools import list_ports

    found = sorted(p.device for p in list_ports.comports() if (p.vid, p.pid) == tuple(usb_id))
    if len(found) > 1:
        log.warning("several devices with USB id %04X:%04X: using %s", *usb_id, found[0])
    return found[0] if found else None


def _unwrap32(new: int, old: int) -> int:
    d = (new - old) & 0xFFFFFFFF
    return d - (1 << 32) if d & 0x80000000 else d


class PicoEncoder:
    """Encoder counts from the Pico firmware over USB serial.

    Example::

        enc = PicoEncoder()                      # finds 2E8A:0005
        enc.start(print, MonotonicClock())        # prints CountSample(t=..., count=...)

    Args:
        port: a fixed device or pyserial URL (``/dev/serial/by-id/...``, ``loop://``); None
            finds the Pico by ``usb_id`` each time it (re)connects.
        usb_id: USB (VID, PID), default MicroPython's 2E8A:0005.
        lines_per_rev: encoder lines (pulses per revolution); ``counts_per_rev`` is 4 x that.
        rate_hz: heartbeat rate asked of the firmware (Hz, 1-1000).
        reconnect_s: seconds between searches while the Pico is away.
        hello_timeout_s: seconds to wait for the hello after opening the port.
        silence_s: seconds without a valid line (the firmware sends a heartbeat) after which
            the link counts as lost and the port is reopened (a hung firmware, a cable that
            still enumerates but carries nothing).
        find_port: replaces the VID:PID search (tests: a pty's name).
        write_timeout_s: seconds a command may wait for the device to take it (a device
            that stops reading fills the USB buffer); then the link counts as lost and the
            port is reopened, instead of the writing thread waiting forever.

    Attributes:
        bad_lines: lines rejected (garbage, truncated, checksum mismatch).
        dropped_lines: gaps seen in the sequence numbers.
        port_name: the port in use, or None.
        fault: set (and the reader stops) when the firmware is incompatible.
    """

    has_index = True

    def __init__(
        self,
        port: str | None = None,
        usb_id: tuple[int, int] = DEFAULT_USB_ID,
        lines_per_rev: int = 600,
        rate_hz: int = 100,
        reconnect_s: float = 0.5,
        hello_timeout_s: float = 2.0,
        silence_s: float = 1.0,
        find_port: Callable[[], str | None] | None = None,
        write_timeout_s: float = 0.5,
    ):
        self.port = port
        self.usb_id = usb_id
        self.counts_per_rev = 4.0 * lines_per_rev
        self.rate_hz = rate_hz
        self.reconnect_s = reconnect_s
        self.hello_timeout_s = hello_timeout_s
        self.silence_s = silence_s
        self.write_timeout_s = write_timeout_s
        self._last_good: float = 0.0
        self._find = find_port or (lambda: port if port else find_pico_port(usb_id))
        self.bad_lines = 0
        self.dropped_lines = 0
        self.port_name: str | None = None
        self.fault: str | None = None
        self.hello: proto.Hello | None = None
        self._ser = None
        self._buf = b""
        self._boot_id: int | None = None
        self._raw: int | None = None
        self._count = 0
        self._counted = False
        self._seq: int | None = None
        self._ever_connected = False
        self._hello_deadline: float | None = None
        self._waiting_logged = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._on: OnSample = lambda s: None
        self._clock: Clock | None = None

    # -- running -------------------------------------------------------------------------

    def start(self, on_sample: OnSample, clock: Clock) -> None:
        """Start the reading thread; samples go to ``on_sample``."""
        self.attach(on_sample, clock)
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="pico-encoder", daemon=True)
        self._thread.start()

    def attach(self, on_sample: OnSample, clock: Clock) -> None:
        """Set the callback and clock without starting a thread (drive with :meth:`step`)."""
        self._on = on_sample
        self._clock = clock

    def _run(self) -> None:
        while not self._stop.is_set() and self.fault is None:
            if not self.step():
                self._stop.wait(self.reconnect_s)

    def stop(self) -> None:
        """Stop the thread and close the port; safe to call twice."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2)
        self._thread = None
        self._close()

    # -- one step -------------------------------------------------------------------------

    def step(self) -> bool:
        """Do one unit of work: connect, or read what is waiting (up to 50 ms).

        Returns False when there is nothing to do but wait (no device; a fatal fault).
        """
        if self.fault is not None:
            return False
        if self._ser is None:
            return self._connect()
        try:
            data = self._ser.read(max(1, self._ser.in_waiting))
        except Exception as exc:  # SerialException, OSError (EIO) when unplugged
            self._lost(f"{self.port_name}: {exc}")
            return False
        if data:
            self._buf += data
            while b"\n" in self._buf:
                line, self._buf = self._buf.split(b"\n", 1)
                self._line(line)
                if self.fault is not None or self._ser is None:
                    # An incompatible hello (or the link lost while answering): the lines
                    # read with it belong to that firmware or that connection; dropped.
                    self._buf = b""
                    return False
            if len(self._buf) > 4 * proto.MAX_LINE:  # no newline in sight: garbage
                self.bad_lines += 1
                self._buf = b""
        if self.hello is not None and self._now() - self._last_good > self.silence_s:
            self._lost(f"{self.port_name}: no line from the firmware for {self.silence_s:g} s")
            return False
        if self.hello is None and self._hello_deadline is not None and self._now() > self._hello_deadline:
            log.error(
                "%s answers but not with the encoder firmware's hello: flash firmware/ onto "
                "the Pico (see firmware/README.md); retrying", self.port_name,
            )
            self._lost(f"{self.port_name}: no hello from the firmware in {self.hello_timeout_s:g} s")
            return False
        return True

    def _now(self) -> float:
        return self._clock.now() if self._clock is not None else 0.0

    def _connect(self) -> bool:
        import serial

        name = self._find()
        if name is None:
            if not self._waiting_logged:
                log.info("waiting for the Pico (USB %04X:%04X)", *self.usb_id)
                self._waiting_logged = True
            return False
        ser = None
        try:
            ser = serial.serial_for_url(name, baudrate=115200, timeout=0.05, write_timeout=self.write_timeout_s)
            ser.reset_input_buffer()
            ser.write(proto.command("VERSION"))
        except (serial.SerialException, OSError, ValueError) as exc:  # SerialTimeoutException too
            log.debug("cannot open %s: %s", name, exc)
            if ser is not None:
                try:
                    ser.close()
                except Exception:
                    pass
            return False
        self._waiting_logged = False
        self._ser = ser
        self.port_name = name
        self.hello = None
        self._seq = None
        self._buf = b""
        self._hello_deadline = self._now() + self.hello_timeout_s
        return True

    def _close(self) -> None:
        if self._ser is not None:
            try:
                self._ser.close()
            except Exception:
                pass
        self._ser = None

    def _lost(self, reason: str) -> None:
        self._close()
        if self.hello is not None or self._ever_connected:
            self._on(LinkLost(self._now(), reason))
        self.hello = None

    def send(self, name: str, arg: int | None = None) -> None:
        """Send a command (``ZERO``, ``RATE``, ``STATUS``, ``VERSION``) if connected; a device
        that does not take it within ``write_timeout_s`` seconds is a lost link."""
        if self._ser is not None:
            try:
                self._ser.write(proto.command(name, arg))
            except Exception as exc:
                self._lost(f"{self.port_name}: {exc}")

    # -- lines ----------------------------------------------------------------------------

    def _line(self, line: bytes) -> None:
        try:
            msg = proto.parse_line(line)
        except proto.LineError as exc:
            self.bad_lines += 1
            if self.bad_lines <= 10 or self.bad_lines % 1000 == 0:
                log.warning("bad line from %s (%d so far): %s", self.port_name, self.bad_lines, exc)
            return
        self._last_good = self._now()
        if isinstance(msg, proto.Hello):
            self._hello(msg)
            return
        if self.hello is None:
            return  # counts before the hello: the boot id is not known yet
        if isinstance(msg, (proto.Count, proto.Index, proto.Status)):
            if self._seq is not None:
                gap = (msg.seq - self._seq - 1) % proto.SEQ_PERIOD
                if gap:
                    self.dropped_lines += gap
                    log.debug("%d lines lost before seq %d", gap, msg.seq)
            self._seq = msg.seq
            raw = msg.count & 0xFFFFFFFF
            if self._raw is None:
                if not self._counted:  # the very first count sets the origin
                    self._count = msg.count
                    self._counted = True
                # after a restart the count goes on from where it was (no jump)
            else:
                self._count += _unwrap32(raw, self._raw)
            self._raw = raw
            t = self._now()
            if isinstance(msg, proto.Index):
                self._on(IndexPulse(t, self._count))
            else:
                self._on(CountSample(t, self._count))
        elif isinstance(msg, proto.Refusal):
            log.warning("the Pico refused a command: %s", msg.reason)

    def _hello(self, msg: proto.Hello) -> None:
        try:
            proto.check_compatible(msg, self.port_name or "the Pico")
        except proto.IncompatibleFirmware as exc:
            self.fault = str(exc)
            log.error("%s", exc)
            self._close()
            self._on(LinkFault(self._now(), self.fault))
            return
        first = not self._ever_connected
        same_boot = msg.boot_id == self._boot_id
        self.hello = msg
        self._ever_connected = True
        self._boot_id = msg.boot_id
        self._seq = None
        if not same_boot:
            # the count restarted: our unwrapped count goes on from where it was, so nothing
            # jumps; the tracker is told the position is unknown (LinkRestored continuous=False).
            self._raw = None
        self.send("RATE", self.rate_hz)
        if first:
            log.info("Pico firmware %s (protocol %d) on %s", msg.fw, msg.proto, self.port_name)
            self._on(LinkRestored(self._now(), True, self.port_name or ""))
        else:
            self._on(LinkRestored(self._now(), same_boot, self.port_name or ""))
