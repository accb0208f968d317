"""Checks of the pure quadrature decoder (firmware/quadrature.py)."""

from quadrature import (
    INVALID, TRANSITIONS, QuadratureDecoder, forward_states, state_of, to_signed32, wrap_delta32,
)


def check_forward_full_turn_of_600_line_encoder_counts_2400():
    d = QuadratureDecoder()
    assert d.feed_many(forward_states(2400)) == 2400
    assert d.errors == 0 and d.state == 0


def check_backward_counts_down():
    d = QuadratureDecoder()
    d.feed_many(forward_states(10))
    assert d.feed_many(forward_states(-25, start=d.state)) == -15


def check_a_leading_b_is_forward():
    d = QuadratureDecoder(state_of(0, 0))
    assert d.feed(state_of(1, 0)) == 1  # A rises first
    assert d.feed(state_of(1, 1)) == 1
    d2 = QuadratureDecoder(state_of(0, 0))
    assert d2.feed(state_of(0, 1)) == -1  # B rises first


def check_double_change_is_an_error_and_does_not_count():
    d = QuadratureDecoder(0)
    assert d.feed(3) == 0 and d.errors == 1 and d.count == 0
    assert d.feed(0) == 0 and d.errors == 2


def check_table_is_antisymmetric():
    for prev in range(4):
        for cur in range(4):
            a = TRANSITIONS[(prev << 2) | cur]
            b = TRANSITIONS[(cur << 2) | prev]
            if a == INVALID:
                assert b == INVALID
            else:
                assert a == -b


def check_repeated_state_is_no_step():
    d = QuadratureDecoder(1)
    assert d.feed_many([1, 1, 1]) == 0 and d.errors == 0


def check_bad_initial_state_is_refused():
    try:
        QuadratureDecoder(4)
    except ValueError:
        return
    raise AssertionError("state 4 accepted")


def check_32_bit_wrap():
    assert to_signed32(0xFFFFFFFF) == -1
    assert to_signed32(0x7FFFFFFF) == 0x7FFFFFFF
    assert to_signed32(0x80000000) == -0x80000000
    assert wrap_delta32(5, 0xFFFFFFFE) == 7
    assert wrap_delta32(0xFFFFFFFE, 5) == -7
