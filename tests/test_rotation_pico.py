"""The host's Pico reader against a fake Pico on a pty (the real firmware logic), and the
host protocol parser against the firmware's protocol module."""

from __future__ import annotations

import pytest

from companion.clock import ManualClock
from companion.rotation import protocol as host
from companion.rotation.angle import AngleModel
from companion.rotation.observations import SpinStopped
from companion.rotation.pico import PicoEncoder, find_pico_port, parse_usb_id
from companion.rotation.samples import LinkFault, LinkLost, LinkRestored
from companion.rotation.spin import SpinDetector
from companion.rotation.tracker import RotationTracker

from tests.fake_pico import FakePico

import protocol as fw  # firmware/protocol.py, put on the path by tests.fake_pico  # noqa: E402


class Rig:
    def __init__(self, fake: FakePico):
        self.fake = fake
        self.clock = ManualClock()
        self.samples = []
        self.obs = []
        self.tracker = RotationTracker(AngleModel(2400), SpinDetector(settle_s=0.25))
        self.reader = PicoEncoder(
            find_port=lambda: fake.name if fake.plugged else None, hello_timeout_s=1.0
        )
        self.reader.attach(self._on, self.clock)

    def _on(self, s):
        self.samples.append(s)
        self.obs.extend(self.tracker.feed(s))

    def pump(self, steps: int, read: bool = True):
        """``steps`` steps of 10 ms; ``read=False``: the host reads nothing meanwhile (a busy
        machine), the lines wait in the pty."""
        for _ in range(steps):
            self.fake.step()
            if read:
                self.reader.step()
            self.clock.advance(self.fake.step_us / 1e6)
            self.obs.extend(self.tracker.tick(self.clock.now()))

    def true_angle(self) -> float:
        return (self.fake.true_count % 2400) * 360.0 / 2400


@pytest.fixture
def rig():
    fake = FakePico()
    r = Rig(fake)
    yield r
    r.reader.stop()
    fake.close()


def _spin_to_index(rig):
    """Turn slowly past the index so the angle gets its absolute reference, then rest."""
    rig.fake.true_count = -240
    rig.fake.boot_origin = -240
    rig.fake.speed = 24
    rig.pump(20)
    rig.fake.speed = 0
    rig.pump(40)


def test_connects_and_tracks_angle(rig):
    rig.pump(5)
    assert rig.reader.hello is not None and rig.reader.hello.proto == 1
    _spin_to_index(rig)
    assert rig.tracker.angle.referenced
    assert rig.tracker.angle_deg() == pytest.approx(rig.true_angle(), abs=0.2)


def test_unplug_mid_spin_and_replug_renamed_keeps_the_angle(rig):
    rig.pump(5)
    _spin_to_index(rig)
    first_port = rig.reader.port_name
    rig.fake.speed = 30
    rig.pump(30)  # spinning
    rig.fake.unplug()
    rig.pump(25)  # the shaft keeps turning while unplugged
    assert any(isinstance(s, LinkLost) for s in rig.samples)
    rig.fake.replug()
    rig.pump(5)
    assert rig.reader.port_name != first_port
    rig.fake.speed = 10
    rig.pump(10)
    rig.fake.speed = 0
    rig.pump(40)
    restored = [s for s in rig.samples if isinstance(s, LinkRestored)]
    assert restored[-1].continuous is True
    stops = [o for o in rig.obs if isinstance(o, SpinStopped)]
    assert stops, rig.obs
    assert stops[-1].uncertain and "link lost" in stops[-1].reason
    assert rig.tracker.angle_deg() == pytest.approx(rig.true_angle(), abs=0.2)
    assert stops[-1].angle_deg == pytest.approx(rig.true_angle(), abs=0.2)
    assert stops[-1].revolutions == pytest.approx((30 * 30 + 30 * 25 + 30 * 5 + 100) / 2400, abs=0.02)


def test_a_host_behind_on_a_busy_machine_declares_no_stop_mid_spin(rig):
    """The host reads nothing for 0.4 s of a spin (longer than the settle time, shorter than
    the 1 s that makes the link lost): the silence is not a stop; the lines read late show
    the motion, and the one spin ends with one stop after the shaft rests."""
    rig.pump(5)
    _spin_to_index(rig)
    before = len(rig.obs)
    rig.fake.speed = 30
    rig.pump(20)
    rig.pump(40, read=False)
    assert not any(isinstance(o, SpinStopped) for o in rig.obs[before:])
    rig.pump(10)  # catches up with the waiting lines, the shaft still turning
    rig.fake.speed = 0
    rig.pump(50)
    spins = [o.type for o in rig.obs[before:]]
    assert spins == ["spin_started", "spin_stopped"], spins
    stop = rig.obs[-1]
    assert not stop.uncertain
    assert stop.revolutions == pytest.approx(30 * 70 / 2400, abs=0.01)
    assert stop.angle_deg == pytest.approx(rig.true_angle(), abs=0.2)


def test_replug_after_a_restart_finds_the_angle_again_at_the_index(rig):
    rig.pump(5)
    _spin_to_index(rig)
    rig.fake.speed = 30
    rig.pump(20)
    rig.fake.unplug()
    rig.pump(10)
    rig.fake.replug(restarted=True)  # the Pico lost power: its count starts again at 0
    rig.fake.speed = 0
    rig.pump(40)
    assert [s for s in rig.samples if isinstance(s, LinkRestored)][-1].continuous is False
    assert not rig.tracker.angle.referenced
    stop = [o for o in rig.obs if isinstance(o, SpinStopped)][-1]
    assert stop.uncertain
    rig.fake.speed = 40
    rig.pump(70)  # more than a turn: passes the index
    rig.fake.speed = 0
    rig.pump(40)
    assert rig.tracker.angle.referenced
    assert rig.tracker.angle_deg() == pytest.approx(rig.true_angle(), abs=0.2)


def test_incompatible_firmware_is_refused_with_a_clear_message():
    fake = FakePico(proto_override="HELLO carousel-encoder proto=2 fw=9.0.0 boot=00000001")
    r = Rig(fake)
    try:
        r.pump(5)
        faults = [s for s in r.samples if isinstance(s, LinkFault)]
        assert faults and "protocol 2" in faults[0].reason and "firmware/README.md" in faults[0].reason
        assert r.reader.step() is False  # it stays stopped
    finally:
        r.reader.stop()
        fake.close()


def test_another_device_on_the_port_is_refused():
    fake = FakePico(proto_override="HELLO gps-logger proto=1 fw=2.0 boot=00000001")
    r = Rig(fake)
    try:
        r.pump(5)
        faults = [s for s in r.samples if isinstance(s, LinkFault)]
        assert faults and "gps-logger" in faults[0].reason
    finally:
        r.reader.stop()
        fake.close()


def test_a_silent_firmware_counts_as_a_lost_link(rig):
    rig.pump(5)
    assert rig.reader.hello is not None
    for _ in range(20):  # read what the pty still holds (it may lag on a busy machine)
        rig.reader.step()
    for _ in range(5):  # the Pico stops talking but its port stays
        rig.clock.advance(0.6)
        rig.reader.step()
        if any(isinstance(s, LinkLost) for s in rig.samples):
            break
    lost = [s for s in rig.samples if isinstance(s, LinkLost)]
    assert lost and "no line" in lost[0].reason
    rig.pump(5)  # it reconnects and asks for the hello again
    assert rig.reader.hello is not None
    assert [s for s in rig.samples if isinstance(s, LinkRestored)][-1].continuous


def test_garbage_and_corrupted_lines_are_skipped_and_counted(rig):
    rig.pump(5)
    good = fw.count_line(100, 5000, 77)
    corrupted = good.replace(b"77", b"78")
    import os

    os.write(rig.fake.master, b"\x00\xffnoise\n" + corrupted + good[:9] + b"\n" + good)
    for _ in range(3):
        rig.reader.step()
    assert rig.reader.bad_lines == 3
    assert rig.tracker.count == 77


def test_32_bit_wrap_is_unwrapped(rig):
    rig.fake.boot_origin = -0x7FFFFFF0  # the Pico's count is 16 short of 2**31 - 1
    rig.pump(5)
    start = rig.tracker.count
    assert start == 0x7FFFFFF0
    rig.fake.speed = 3  # through +2**31 - 1 -> -2**31 on the wire
    rig.pump(10)
    rig.fake.speed = 0
    rig.pump(5)
    assert rig.tracker.count - start == 30


def test_host_parser_reads_every_firmware_message():
    assert host.crc16(b"123456789") == fw.crc16(b"123456789") == 0x29B1
    assert host.parse_line(fw.count_line(1, 2, -3)) == host.Count(1, 2, -3)
    assert host.parse_line(fw.index_line(4, 5, 2400)) == host.Index(4, 5, 2400)
    h = host.parse_line(fw.hello_line("1.0.0", 0xCAFE))
    assert h == host.Hello("carousel-encoder", 1, "1.0.0", 0xCAFE)
    s = host.parse_line(fw.status_line(1, 2, 3, 50, 4, 5, 6))
    assert s.fields == {"rate": 50, "index": 4, "rejected": 5, "uptime": 6}
    assert fw.parse_command(host.command("RATE", 250)) == ("RATE", 250)
    assert host.command("ZERO") == fw.command_line("ZERO")


@pytest.mark.parametrize(
    "line",
    [b"", b"garbage", b"$C 1 2 3", b"$C 1 2*0000", b"$X 1*" + b"%04X" % fw.crc16(b"X 1"),
     b"$C 1 2 99999999999*" + b"%04X" % fw.crc16(b"C 1 2 99999999999")],
)
def test_host_parser_rejects_bad_lines(line):
    with pytest.raises(host.LineError):
        host.parse_line(line)


def test_finds_the_pico_by_vid_pid(monkeypatch):
    from serial.tools import list_ports_common, list_ports

    def port(dev, vid, pid):
        p = list_ports_common.ListPortInfo(dev, skip_link_detection=True)
        p.vid, p.pid = vid, pid
        return p

    monkeypatch.setattr(
        list_ports, "comports",
        lambda: [port("/dev/ttyUSB0", 0x0403, 0x6001), port("/dev/ttyACM1", 0x2E8A, 0x0005)],
    )
    assert find_pico_port() == "/dev/ttyACM1"
    assert find_pico_port((0x1234, 0x5678)) is None
    assert parse_usb_id("2e8a:0005") == (0x2E8A, 0x0005)
    with pytest.raises(ValueError):
        parse_usb_id("2E8A-0005")
