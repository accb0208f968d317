"""Checks of the PIO program (firmware/pio_quadrature.py), executed by the stub ``rp2``."""

import machine

from pio_quadrature import PioQuadrature, build_program
from quadrature import TRANSITIONS, QuadratureDecoder, forward_states

A = 2


def _set(state):
    machine.drive(A, state & 1)
    machine.drive(A + 1, (state >> 1) & 1)


def _counter():
    _set(0)
    c = PioQuadrature(A)
    c.sm.run(20)
    return c


def _signed(v):
    return v - (1 << 32) if v & 0x80000000 else v


def check_program_fills_memory_and_loads_at_zero():
    prog = build_program()
    assert len(prog.instr) == 32
    for i in range(16):
        target = prog.instr[i][2]
        want = {1: "increment", -1: "decrement"}.get(TRANSITIONS[i], "update")
        assert target == want, (i, target)


def check_counts_forward_and_back():
    c = _counter()
    for s in forward_states(2400):
        _set(s)
        c.sm.run(12)
    assert c.read() == 2400
    for s in forward_states(-2405):
        _set(s)
        c.sm.run(12)
    assert _signed(c.read()) == -5


def check_count_wraps_at_32_bits():
    c = _counter()
    for s in forward_states(-3):
        _set(s)
        c.sm.run(12)
    assert c.read() == 0xFFFFFFFD


def check_agrees_with_pure_decoder_on_a_random_walk():
    c = _counter()
    dec = QuadratureDecoder(0)
    seed = 12345
    order = (0, 1, 3, 2)
    pos = 0
    for _ in range(3000):
        seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
        pos = (pos + (1 if seed & 0x100 else -1)) % 4
        _set(order[pos])
        dec.feed(order[pos])
        c.sm.run(10 + (seed >> 16) % 8)  # at least one full sampling loop per edge
    assert _signed(c.read()) == dec.count
    assert dec.errors == 0


def check_two_edges_inside_one_sampling_loop_do_not_count():
    """A double change (edges faster than the loop) is skipped, like the pure decoder does."""
    c = _counter()
    _set(1)
    _set(3)  # both changes before the program samples again
    c.sm.run(20)
    assert c.read() == 0


def check_read_drains_stale_fifo_values():
    c = _counter()
    c.sm.run(200)  # FIFO full of zeros
    for s in forward_states(7):
        _set(s)
        c.sm.run(12)
    assert c.sm.rx_fifo() == 4
    assert c.read() == 7
