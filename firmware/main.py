"""Firmware entry point on the Pico: wires the PIO counter, the index input and USB serial to
:class:`encoder_app.EncoderApp`. Runs at power-on (MicroPython runs ``main.py``).

Hardware glue only: everything that decides what is sent lives in the pure modules
(``encoder_app``, ``protocol``, ``quadrature``). Pins come from ``board.py``.

Ctrl-C on the serial port stops the loop and gives the MicroPython prompt (used by ``mpremote``
to update the files); see ``firmware/README.md``.
"""

import sys
import time
from array import array

from machine import Pin

import board
from encoder_app import EncoderApp
from pio_quadrature import PioQuadrature

try:
    import select
except ImportError:  # pragma: no cover
    select = None


def _boot_id():
    try:
        import os

        b = os.urandom(4)
        return (b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]
    except Exception:
        return time.ticks_us() & 0xFFFFFFFF  # no hardware random source


class Firmware:
    """The running firmware: one :meth:`step` reads the counter, the index flag and any
    command bytes, and lets the app write its lines.

    Args:
        stdin: a stream with ``read(1)`` returning bytes (USB serial in).
        stdout: a stream with ``write(bytes)`` (USB serial out).
        poll: a ``select.poll`` object registered on ``stdin`` (None: no commands).
        ticks_us: the microsecond clock (default ``time.ticks_us``).
    """

    def __init__(self, stdin, stdout, poll=None, ticks_us=None):
        self.stdin = stdin
        self.stdout = stdout
        self.poll = poll
        self.ticks_us = ticks_us if ticks_us is not None else time.ticks_us
        self.counter = PioQuadrature(board.ENCODER_A)
        self.led = Pin(board.LED, Pin.OUT)
        self._index_t = array("i", [0])
        self._index_flag = array("i", [0])
        self.index = Pin(board.INDEX, Pin.IN, Pin.PULL_UP)
        self.index.irq(self._on_index, Pin.IRQ_FALLING, hard=True)
        self.app = EncoderApp(stdout.write, _boot_id())
        self._buf = bytearray()
        self.app.hello()

    def _on_index(self, pin):
        # Hard interrupt: no allocation; ticks_us is below 2**30 on rp2 (a small int).
        self._index_t[0] = self.ticks_us() & 0x3FFFFFFF
        self._index_flag[0] = 1

    def step(self):
        """One pass of the main loop."""
        raw = self.counter.read()
        now = self.ticks_us() & 0x3FFFFFFF
        if self._index_flag[0]:
            self._index_flag[0] = 0
            self.app.index_pulse(self._index_t[0])
        self.app.poll(now, raw)
        while self.poll is not None and self.poll.poll(0):
            ch = self.stdin.read(1)
            if not ch:
                break
            if ch in (b"\n", b"\r"):
                if self._buf:
                    self.app.command(bytes(self._buf), now, raw)
                    self._buf = bytearray()
            elif len(self._buf) < 120:
                self._buf.extend(ch)
            else:  # garbage: drop the line
                self._buf = bytearray()


def main():
    """Run forever (until Ctrl-C)."""
    stdin = sys.stdin.buffer if hasattr(sys.stdin, "buffer") else sys.stdin
    stdout = sys.stdout.buffer if hasattr(sys.stdout, "buffer") else sys.stdout
    poll = None
    if select is not None:
        poll = select.poll()
        poll.register(sys.stdin, select.POLLIN)
    fw = Firmware(stdin, stdout, poll)
    fw.led.value(1)
    try:
        while True:
            fw.step()
    finally:
        fw.counter.stop()
        fw.led.value(0)


if __name__ == "__main__":
    main()
