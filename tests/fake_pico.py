"""A fake Pico on a pseudo-terminal, running the real firmware logic (firmware/encoder_app.py)
on a simulated shaft. It can be unplugged and plugged back under a new device name, with or
without a restart (new boot id, count from 0)."""

from __future__ import annotations

import os
import sys
import tty
from pathlib import Path

FIRMWARE = Path(__file__).resolve().parent.parent / "firmware"
if str(FIRMWARE) not in sys.path:
    sys.path.append(str(FIRMWARE))

from encoder_app import EncoderApp  # noqa: E402  (firmware module, on the path above)


class FakePico:
    """Args: cpr (counts per turn of the shaft), index_at (true count where the index fires,
    mod cpr), step_us (microseconds per :meth:`step`)."""

    def __init__(self, cpr: int = 2400, index_at: int = 0, step_us: int = 10000,
                 proto_override: str | None = None):
        self.cpr = cpr
        self.index_at = index_at
        self.step_us = step_us
        self.t_us = 0
        self.true_count = 0  # shaft position, counts, never resets
        self.speed = 0  # counts per step
        self.boot = 0x1234ABCD
        self.boot_origin = 0  # true count when the Pico powered on
        self.proto_override = proto_override
        self._open_pty()
        self._new_app()

    def _open_pty(self):
        self.master, self.slave = os.openpty()
        tty.setraw(self.master)
        self.name = os.ttyname(self.slave)
        os.set_blocking(self.master, False)
        self.plugged = True
        self._cmd = b""

    def _write(self, line: bytes):
        if self.proto_override is not None and line.startswith(b"$HELLO"):
            from protocol import frame

            line = frame(self.proto_override)
        try:
            os.write(self.master, line)
        except OSError:
            pass

    def _new_app(self):
        self.app = EncoderApp(self._write, self.boot, rate_hz=100)
        self.app.hello()

    def raw(self) -> int:
        return (self.true_count - self.boot_origin) & 0xFFFFFFFF

    def step(self):
        """Advance the shaft by ``speed`` counts; the firmware reports and answers commands."""
        before = self.true_count
        self.true_count += self.speed
        self.t_us = (self.t_us + self.step_us) % (1 << 30)
        if self.speed:
            lo, hi = sorted((before, self.true_count))
            k = (lo - self.index_at) // self.cpr + 1
            at = self.index_at + k * self.cpr
            if lo < at <= hi:
                frac = abs(at - before) / abs(self.speed)
                t_i = self.t_us - self.step_us + round(frac * self.step_us)
                self.app.index_pulse(t_i % (1 << 30))
        if not self.plugged:
            return
        try:
            data = os.read(self.master, 4096)
        except (BlockingIOError, OSError):
            data = b""
        self._cmd += data
        while b"\n" in self._cmd:
            line, self._cmd = self._cmd.split(b"\n", 1)
            if line.strip():
                self.app.command(line, self.t_us, self.raw())
        self.app.poll(self.t_us, self.raw())

    def unplug(self):
        """Pull the USB cable: the port vanishes (the next pty gets another name)."""
        os.close(self.master)
        os.close(self.slave)
        self.plugged = False

    def replug(self, restarted: bool = False):
        """Plug back in, under a new device name; ``restarted``: the Pico lost power."""
        old = self.name
        held = []
        self._open_pty()
        while self.name == old:  # the kernel reused the name: hold it, take the next one
            held.append((self.master, self.slave))
            self._open_pty()
        for m, s in held:
            os.close(m)
            os.close(s)
        if restarted:
            self.boot ^= 0x5A5A5A5A
            self.boot_origin = self.true_count
            self._new_app()

    def close(self):
        if self.plugged:
            os.close(self.master)
            os.close(self.slave)
            self.plugged = False
