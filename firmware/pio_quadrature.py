"""Hardware glue: the PIO program that counts the shaft encoder at 4x, and its reader.

Runs on the Pico only (imports ``rp2`` and ``machine``); under test it runs against the stub
modules in ``tests/firmware_stubs/``, whose ``rp2`` executes the program instruction by
instruction.

The state machine loops continuously (about 8 instructions, 64 ns per sample at 125 MHz):

1. push the count (register Y) to the RX FIFO without blocking;
2. put the previous pin state (kept in OSR) into ISR and shift the two pins in, so ISR holds
   ``(previous << 2) | current`` (4 bits);
3. ``mov pc, isr``: jump into the 16-entry jump table at address 0, built from
   :data:`quadrature.TRANSITIONS`, which goes to "increment", "decrement" or "update".

The jump table must sit at addresses 0-15; MicroPython loads a program at the top of the
32-word instruction memory, so the program is padded with ``nop`` to exactly 32 words and lands
at address 0. It therefore needs a PIO block of its own (PIO 0 here; PIO 1 stays free).
Y is a 32-bit register, so the count wraps at 2**32; the host unwraps it.

Pins: channel A on ``pin_a`` and channel B on ``pin_a + 1`` (PIO ``in`` reads consecutive
pins). Source: RP2040 datasheet, chapter 3 (PIO), sections 3.4.2 (JMP), 3.4.5 (IN), 3.4.8
(MOV); the jump-table approach of the Raspberry Pi pico-examples ``quadrature_encoder``.
"""

import rp2
from machine import Pin

from quadrature import INVALID, TRANSITIONS


def build_program(table=TRANSITIONS):
    """Assemble the 32-word PIO program whose jump table follows ``table`` (16 steps)."""
    targets = tuple(
        "increment" if step == 1 else "decrement" if step == -1 else "update"
        for step in table
    )
    assert len(targets) == 16 and INVALID not in (1, -1)

    @rp2.asm_pio(in_shiftdir=rp2.PIO.SHIFT_LEFT, out_shiftdir=rp2.PIO.SHIFT_RIGHT)
    def quadrature_x4():
        # 0-15: jump table indexed by (previous << 2) | current; a double change (INVALID)
        # and no change both go to "update" (the count does not move).
        for target in targets:
            jmp(target)  # noqa: F821 (names given by asm_pio)
        label("decrement")  # noqa: F821
        jmp(y_dec, "update")  # noqa: F821
        wrap_target()  # noqa: F821
        label("update")  # noqa: F821
        mov(isr, y)  # noqa: F821
        push(noblock)  # noqa: F821
        out(isr, 2)  # noqa: F821  ISR = previous state (2 bits kept in OSR)
        in_(pins, 2)  # noqa: F821  ISR = previous << 2 | current
        mov(osr, isr)  # noqa: F821  keep it; its low 2 bits are the next "previous"
        mov(pc, isr)  # noqa: F821  into the jump table
        label("increment")  # noqa: F821
        mov(y, invert(y))  # noqa: F821  y + 1 == ~(~y - 1)
        jmp(y_dec, "increment_done")  # noqa: F821
        label("increment_done")  # noqa: F821
        mov(y, invert(y))  # noqa: F821
        wrap()  # noqa: F821
        for _ in range(6):  # pad to 32 words so the program is loaded at address 0
            nop()  # noqa: F821

    return quadrature_x4


class PioQuadrature:
    """The shaft counter: a PIO state machine decoding channels A and B at 4x resolution.

    Wiring: encoder A to GP``pin_a``, B to GP``pin_a + 1``, both with pull-ups (open-collector
    encoder outputs). Example::

        counter = PioQuadrature(pin_a=2)
        raw = counter.read()   # 32-bit count, unsigned

    Args:
        pin_a: GPIO number of channel A (channel B is the next GPIO).
        sm_id: state machine number (0-3 use PIO 0, which the program fills).
    """

    def __init__(self, pin_a, sm_id=0):
        self.pin_a = Pin(pin_a, Pin.IN, Pin.PULL_UP)
        self.pin_b = Pin(pin_a + 1, Pin.IN, Pin.PULL_UP)
        self.sm = rp2.StateMachine(sm_id, build_program(), in_base=self.pin_a)
        self.sm.active(1)

    def read(self):
        """The current count as an unsigned 32-bit int (counts, wraps at 2**32).

        The state machine pushes without blocking, so a full FIFO holds old values: drain it,
        then take one fresh value (pushed a few tens of nanoseconds later).
        """
        for _ in range(self.sm.rx_fifo()):
            self.sm.get()
        return self.sm.get() & 0xFFFFFFFF

    def stop(self):
        """Stop the state machine."""
        self.sm.active(0)
