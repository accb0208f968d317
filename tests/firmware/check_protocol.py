"""Checks of the line protocol (firmware/protocol.py)."""

from protocol import (
    PROTOCOL_VERSION, ProtocolError, command_line, count_line, crc16, frame, hello_line,
    index_line, parse_command, status_line, unframe,
)


def _rejects(line):
    try:
        unframe(line)
    except ProtocolError:
        return True
    return False


def check_crc_catalogue_check_value():
    assert crc16(b"123456789") == 0x29B1


def check_round_trip():
    line = count_line(7, 123456, -42)
    assert line.endswith(b"\n") and line.startswith(b"$C ")
    assert unframe(line) == ["C", "7", "123456", "-42"]


def check_hello_carries_version_and_boot_id():
    toks = unframe(hello_line("1.0.0", 0x1A2B3C4D))
    assert toks == ["HELLO", "carousel-encoder", "proto=%d" % PROTOCOL_VERSION, "fw=1.0.0",
                    "boot=1A2B3C4D"]


def check_every_single_character_corruption_is_detected():
    line = count_line(65535, 1073741823, -2147483648).rstrip(b"\n")
    for i in range(len(line)):
        for repl in (b"0", b"9", b"-", b" ", b"A"):
            if line[i:i + 1] == repl:
                continue
            bad = line[:i] + repl + line[i + 1:]
            assert _rejects(bad), bad


def check_every_truncation_is_detected():
    line = index_line(3, 99, 2400).rstrip(b"\n")
    for cut in range(len(line)):
        assert _rejects(line[:cut]), line[:cut]


def check_garbage_is_rejected():
    for bad in (b"", b"hello", b"$C 1 2 3", b"$C 1 2 3*ZZZZ", b"\xff\xfe*0000", b"$*FFFF",
                b"$" + b"1" * 200 + b"*0000"):
        assert _rejects(bad), bad


def check_wraps_sequence_and_time():
    assert unframe(count_line(65536 + 5, (1 << 30) + 9, 1))[1:3] == ["5", "9"]


def check_framing_characters_cannot_be_sent():
    try:
        frame("C 1*2")
    except ProtocolError:
        return
    raise AssertionError("* accepted in a body")


def check_commands_framed_and_typed():
    assert parse_command(command_line("ZERO")) == ("ZERO", None)
    assert parse_command(command_line("RATE", 200)) == ("RATE", 200)
    assert parse_command("rate 5\r\n") == ("RATE", 5)
    assert parse_command(b"status") == ("STATUS", None)


def check_bad_commands_are_refused():
    for bad in ("RATE", "RATE 0", "RATE 1001", "RATE x", "ZERO 1", "REBOOT", "",
                command_line("ZERO")[:-3].decode()):
        try:
            parse_command(bad)
        except ProtocolError:
            continue
        raise AssertionError("accepted %r" % bad)


def check_status_line():
    toks = unframe(status_line(1, 2, 3, 50, 4, 5, 6))
    assert toks == ["S", "1", "2", "3", "rate=50", "index=4", "rejected=5", "uptime=6"]
