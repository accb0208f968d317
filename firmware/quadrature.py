"""Quadrature decoding at 4x resolution: the transition table and a pure decoder.

Pure module: runs under MicroPython (on the Pico and the unix port) and under CPython; no
``machine``, no ``rp2``, no clock. The PIO program in ``pio_quadrature.py`` builds its 16-entry
jump table from :data:`TRANSITIONS`, so the hardware and this decoder count the same way.

A pin *state* is two bits, ``state = (B << 1) | A``: the PIO ``in pins, 2`` instruction shifts
the pin at ``in_base`` (channel A) into bit 0 and the next pin (channel B) into bit 1.

Counting is 4x: every edge of A or B is one count, so a 600-line (600 pulses per revolution)
encoder gives 2400 counts per revolution. The forward direction (+1) is "A leads B": the
Gray sequence of states 0 -> 1 -> 3 -> 2 -> 0 (A rises, B rises, A falls, B falls). A change of
both bits at once cannot happen on a clean signal; it means a sample was missed (the edges came
faster than the sampling) and is counted in ``errors`` without moving the count, since its
direction is unknown.

Source: the quadrature state table of any incremental-encoder datasheet, e.g. Broadcom
HEDS-5500 "Output waveforms"; the jump-table decoding follows the Raspberry Pi pico-examples
``quadrature_encoder.pio`` idea (table indexed by previous and current state).
"""

#: Step for each (previous, current) pair, indexed by ``(previous << 2) | current``:
#: +1 forward, -1 backward, 0 no change, and ``INVALID`` for a double change.
INVALID = 2

TRANSITIONS = (
    # previous 0 (A=0 B=0) -> current 0, 1, 2, 3
    0, 1, -1, INVALID,
    # previous 1 (A=1 B=0)
    -1, 0, INVALID, 1,
    # previous 2 (A=0 B=1)
    1, INVALID, 0, -1,
    # previous 3 (A=1 B=1)
    INVALID, -1, 1, 0,
)

MASK32 = 0xFFFFFFFF


def to_signed32(value):
    """Return the 32-bit two's complement reading of ``value`` (an int) as a signed int.

    The PIO counter is a 32-bit register that wraps: 0xFFFFFFFF is -1.
    """
    value &= MASK32
    if value & 0x80000000:
        return value - 0x100000000
    return value


def wrap_delta32(new, old):
    """Signed difference ``new - old`` of two 32-bit counts, across a wrap (counts).

    Correct while the true movement between the two readings is under 2**31 counts.
    """
    return to_signed32(new - old)


class QuadratureDecoder:
    """Counts quadrature transitions at 4x resolution from a stream of pin states.

    Args:
        state: the initial pin state ``(B << 1) | A`` (0-3).
        count: the initial count (counts).

    Attributes:
        count: the signed count (counts); not wrapped (Python ints are unbounded).
        errors: number of double transitions seen (missed samples).
        state: the last pin state.

    Raises:
        ValueError: a state outside 0-3.
    """

    def __init__(self, state=0, count=0):
        if not 0 <= state <= 3:
            raise ValueError("quadrature state must be 0-3, got %r" % (state,))
        self.state = state
        self.count = count
        self.errors = 0

    def feed(self, state):
        """Take one sampled pin state (0-3); return the step taken (-1, 0 or +1)."""
        step = TRANSITIONS[(self.state << 2) | (state & 3)]
        self.state = state & 3
        if step == INVALID:
            self.errors += 1
            return 0
        self.count += step
        return step

    def feed_many(self, states):
        """Take an iterable of pin states; return the count afterwards (counts)."""
        table = TRANSITIONS
        prev = self.state
        count = self.count
        errors = 0
        for s in states:
            step = table[(prev << 2) | s]
            prev = s
            if step == INVALID:
                errors += 1
            else:
                count += step
        self.state = prev
        self.count = count
        self.errors += errors
        return count


def state_of(a, b):
    """The pin state ``(B << 1) | A`` of channel levels ``a`` and ``b`` (0 or 1)."""
    return ((b & 1) << 1) | (a & 1)


def forward_states(counts, start=0):
    """The pin states of ``counts`` forward steps (negative: backward) from state ``start``.

    Returns a list of ``abs(counts)`` states (ints 0-3); for tests and the simulated edges.
    """
    order = (0, 1, 3, 2)
    i = order.index(start)
    step = 1 if counts >= 0 else -1
    out = []
    for _ in range(abs(counts)):
        i = (i + step) % 4
        out.append(order[i])
    return out
