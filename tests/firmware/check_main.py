"""Checks of the firmware glue (firmware/main.py) with stub pins, PIO, serial and clock."""

import machine

import board
from main import Firmware
from protocol import command_line, unframe
from quadrature import forward_states


class FakeSerial:
    def __init__(self):
        self.inbox = b""
        self.out = []

    def write(self, b):
        self.out.append(bytes(b))

    def read(self, n):
        b, self.inbox = self.inbox[:n], self.inbox[n:]
        return b

    def poll(self, timeout):
        return [1] if self.inbox else []


class FakeTicks:
    def __init__(self):
        self.t = 0

    def __call__(self):
        return self.t


def _firmware():
    machine.drive(board.ENCODER_A, 0)
    machine.drive(board.ENCODER_B, 0)
    ser = FakeSerial()
    ticks = FakeTicks()
    fw = Firmware(ser, ser, ser, ticks)
    fw.counter.sm.run(20)
    return fw, ser, ticks


def _turn(fw, ticks, counts, state=0):
    for s in forward_states(counts, start=state):
        machine.drive(board.ENCODER_A, s & 1)
        machine.drive(board.ENCODER_B, s >> 1)
        fw.counter.sm.run(12)
        ticks.t += 100
        fw.step()


def check_pins_agree_with_board():
    assert board.ENCODER_B == board.ENCODER_A + 1


def check_hello_then_counts():
    fw, ser, ticks = _firmware()
    _turn(fw, ticks, 100)
    msgs = [unframe(l) for l in ser.out]
    assert msgs[0][0] == "HELLO"
    counts = [int(m[3]) for m in msgs if m[0] == "C"]
    assert counts[-1] <= 100
    ticks.t += 2000
    fw.step()
    assert int(unframe(ser.out[-1])[3]) == 100


def check_index_pulse_is_reported_with_count():
    fw, ser, ticks = _firmware()
    _turn(fw, ticks, 40)
    machine.drive(board.INDEX, 0)  # magnet passes: falling edge
    machine.drive(board.INDEX, 1)
    ticks.t += 100
    fw.step()
    idx = [unframe(l) for l in ser.out if l.startswith(b"$I")]
    assert len(idx) == 1 and int(idx[0][3]) == 40


def check_commands_from_serial():
    fw, ser, ticks = _firmware()
    _turn(fw, ticks, 30)
    ser.inbox = command_line("ZERO") + b"garbage line\n" + b"\n"
    fw.step()
    ticks.t += 5000
    _turn(fw, ticks, 5, state=forward_states(30)[-1])
    ticks.t += 5000
    fw.step()
    msgs = [unframe(l) for l in ser.out]
    assert ["OK", "ZERO"] in msgs
    assert any(m[0] == "ERR" for m in msgs)
    assert int(msgs[-1][3]) == 5
