"""Checks of the firmware logic (firmware/encoder_app.py) with a fake clock."""

from encoder_app import MIN_GAP_US, EncoderApp
from protocol import command_line, unframe


def _app(rate=50):
    out = []
    app = EncoderApp(out.append, 0xDEADBEEF, rate_hz=rate)
    return app, out


def _kinds(out):
    return [unframe(l) for l in out]


def check_hello_names_boot():
    app, out = _app()
    app.hello()
    assert unframe(out[0])[-1] == "boot=DEADBEEF"


def check_heartbeat_at_rate_when_still():
    app, out = _app(rate=10)
    for t in range(0, 1000001, 1000):  # poll every ms for 1 s
        app.poll(t, 5)
    counts = [m for m in _kinds(out) if m[0] == "C"]
    assert len(counts) == 11, len(counts)  # t = 0, 0.1, ... 1.0 s
    assert all(m[3] == "5" for m in counts)


def check_change_sent_at_once_but_not_closer_than_min_gap():
    app, out = _app(rate=1)
    app.poll(0, 0)
    app.poll(100, 1)  # too soon after the first line
    app.poll(MIN_GAP_US, 2)
    app.poll(MIN_GAP_US + 10, 2)
    msgs = _kinds(out)
    assert [m[3] for m in msgs] == ["0", "2"]
    assert msgs[1][2] == str(MIN_GAP_US)


def check_sequence_numbers_increase():
    app, out = _app(rate=1000)
    for i in range(5):
        app.poll(i * 1000, i)
    assert [int(m[1]) for m in _kinds(out)] == [0, 1, 2, 3, 4]


def check_index_count_is_interpolated_between_readings():
    app, out = _app()
    app.poll(1000, 100)
    app.index_pulse(1750)
    app.poll(2000, 200)
    idx = [m for m in _kinds(out) if m[0] == "I"]
    assert idx == [["I", "1", "1750", "175"]]


def check_index_bounce_is_ignored():
    app, out = _app()
    app.poll(0, 0)
    app.index_pulse(1000)
    app.index_pulse(5000)  # magnet bounce, 4 ms later
    app.poll(6000, 0)
    app.index_pulse(500000)
    app.poll(500100, 0)
    assert len([m for m in _kinds(out) if m[0] == "I"]) == 2


def check_zero_command():
    app, out = _app()
    app.command(command_line("ZERO"), 0, 1234)
    app.poll(10, 1240)
    msgs = _kinds(out)
    assert msgs[0] == ["OK", "ZERO"]
    assert msgs[1][3] == "6"


def check_zero_works_across_32_bit_wrap():
    app, out = _app()
    app.command("ZERO", 0, 0xFFFFFFFE)
    app.poll(10, 3)
    assert _kinds(out)[-1][3] == "5"


def check_rate_and_status_commands():
    app, out = _app()
    app.poll(0, 0)
    app.command(command_line("RATE", 200), 1, 0)
    app.command(b"status", 2000000, 7)
    msgs = _kinds(out)
    assert msgs[1] == ["OK", "RATE", "200"]
    assert msgs[2][0] == "S" and msgs[2][3] == "7" and "rate=200" in msgs[2]


def check_bad_command_answers_err_and_counts():
    app, out = _app()
    app.command(b"$ZERO*0000", 0, 0)
    app.command(b"FLY", 0, 0)
    msgs = _kinds(out)
    assert msgs[0][0] == "ERR" and msgs[1][0] == "ERR"
    assert app.rejected == 2


def check_version_command_repeats_hello():
    app, out = _app()
    app.command(command_line("VERSION"), 0, 0)
    assert _kinds(out)[0][0] == "HELLO"
