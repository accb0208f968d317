"""companion doctor: each part ok, or missing with how to fix it; exit 0 only when the game's
parts are ok. This machine has no Pi, camera, Pico or sound card: those are missing here; the
positive paths stand in for the hardware with monkeypatch."""

from __future__ import annotations

import argparse
import os
import types
from pathlib import Path

import pytest

from companion import config as config_mod
from companion.commands import doctor
from companion.pins import is_raspberry_pi


def _config(tmp_path: Path, text: str = "") -> config_mod.Config:
    f = tmp_path / "config.toml"
    f.write_text(f'[service]\njournal = "{tmp_path}/j/journal.db"\n' + text)
    return config_mod.load(f)


def _doctor(cfg: config_mod.Config, game: str | None = None) -> tuple[int, list[str]]:
    lines: list[str] = []
    rc = doctor.run(argparse.Namespace(game=game, config=str(cfg.source)), out=lines.append)
    return rc, lines


def _line(lines: list[str], part: str) -> str:
    found = [line for line in lines if line.split(None, 1)[1].startswith(part + ":")]
    assert len(found) == 1, lines
    return found[0]


no_hardware = pytest.mark.skipif(is_raspberry_pi(), reason="this test describes a machine that is not a Pi")


@no_hardware
def test_on_this_machine_the_hardware_is_missing_with_a_fix(tmp_path):
    if doctor._importable("picamera2") is not None or doctor._pico_port((0x2E8A, 0x0005)) is not None:
        pytest.skip("a camera library or a Pico is present here")
    cfg = _config(tmp_path, '[camera]\nsource = "picamera2"\n')
    rc, lines = _doctor(cfg, "carrousel")
    assert rc == 1
    assert lines[0] == f"companion doctor: carrousel at a real table, configuration {cfg.source}"
    for part in ("camera", "GPIO pins", "encoder"):
        line = _line(lines, part)
        assert line.startswith("missing  ") and "; how to fix: " in line
    assert "picamera2 cannot be imported" in _line(lines, "camera")
    assert "not a Raspberry Pi" in _line(lines, "GPIO pins")
    assert "no serial port with USB id 2E8A:0005" in _line(lines, "encoder")
    assert _line(lines, "encoder").endswith("(not needed for carrousel)")
    assert _line(lines, "espeak-ng").startswith("ok       espeak-ng: eSpeak NG")  # ./dev installs it
    for part in ("camera geometry", "camera colours", "camera intrinsics", "encoder calibration"):
        assert _line(lines, part).startswith("ok ")  # the shipped calibration parses
    assert _line(lines, "journal") == f"ok       journal: {tmp_path}/j will be created"
    assert lines[-1].startswith("carrousel cannot be refereed at a real table yet: fix camera, GPIO pins")
    assert "encoder" not in lines[-1]
    assert not any("<" in line or "Check(" in line for line in lines)  # words, not reprs


def test_no_sound_card_is_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(doctor, "_run", lambda argv, timeout_s=10.0: types.SimpleNamespace(
        stdout="", stderr="aplay: device_list:274: no soundcards found...\n", returncode=1))
    c = doctor.check_audio(_config(tmp_path))
    assert not c.ok and c.detail == "no sound card (aplay -l lists none)" and "aplay -l" in c.fix


def test_the_configured_audio_device_must_open(tmp_path):
    c = doctor.check_audio(_config(tmp_path, '[speech]\ndevice = "hw:CARD=NoSuchCard"\n'))
    assert not c.ok and c.detail.startswith("hw:CARD=NoSuchCard does not open: aplay failed")
    assert "[speech] device" in c.fix
    ok = doctor.check_audio(_config(tmp_path, '[speech]\ndevice = "null"\n'))  # ALSA's null device: real aplay
    assert ok.ok and ok.detail.startswith("null opens"), ok


def test_sim_sources_at_a_real_table_are_missing(tmp_path):
    cfg = _config(tmp_path, '[camera]\nsource = "sim"\n[encoder]\nbackend = "sim"\n')
    cam = doctor.check_camera(cfg)
    assert not cam.ok and "simulated camera" in cam.detail and 'source = "picamera2"' in cam.fix
    assert str(cfg.source) in cam.fix
    enc = doctor.check_encoder(cfg)
    assert not enc.ok and "simulated shaft" in enc.detail


def test_mock_pins_are_missing():
    cfg = config_mod.validate({"service": {"pin_factory": "mock"}})
    m = doctor.check_gpio(cfg)
    assert not m.ok and "pin_factory is 'mock'" in m.detail and 'pin_factory = "auto"' in m.fix


# -- positive paths: hardware stood in for ------------------------------------------------------

def test_gpio_on_a_pi(tmp_path, monkeypatch):
    chip = tmp_path / "gpiochip0"
    chip.write_text("")
    monkeypatch.setattr(doctor, "_is_pi", lambda: True)
    monkeypatch.setattr(doctor, "_pi_model", lambda: "Raspberry Pi 5 Model B Rev 1.0")
    monkeypatch.setattr(doctor, "_importable", lambda name: object() if name == "lgpio" else None)
    monkeypatch.setattr(doctor, "_gpiochips", lambda: [str(chip)])
    cfg = _config(tmp_path)
    c = doctor.check_gpio(cfg)
    assert c.ok and c.detail == f"Raspberry Pi 5 Model B Rev 1.0; lgpio; {chip} open"
    monkeypatch.setattr(doctor, "_access", lambda path: False)
    c = doctor.check_gpio(cfg)
    assert not c.ok and c.detail == f"no permission to open {chip}" and "usermod -aG gpio" in c.fix
    monkeypatch.setattr(doctor, "_gpiochips", lambda: [])
    assert "no /dev/gpiochip" in doctor.check_gpio(cfg).detail
    monkeypatch.setattr(doctor, "_importable", lambda name: None)
    assert "lgpio cannot be imported" in doctor.check_gpio(cfg).detail


def test_picamera2_lists_a_camera(tmp_path, monkeypatch):
    cameras: list[dict] = [{"Model": "imx708", "Num": 0}]
    fake = types.SimpleNamespace(Picamera2=types.SimpleNamespace(global_camera_info=lambda: cameras))
    monkeypatch.setattr(doctor, "_importable", lambda name: fake if name == "picamera2" else None)
    cfg = _config(tmp_path, '[camera]\nsource = "picamera2"\n')
    c = doctor.check_camera(cfg)
    assert c.ok and c.detail == "picamera2 lists imx708"
    cameras.clear()
    c = doctor.check_camera(cfg)
    assert not c.ok and c.detail == "picamera2 lists no camera" and "ribbon cable" in c.fix


def test_an_opencv_video_file_opens(tmp_path):
    import cv2
    import numpy as np

    video = tmp_path / "table.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 48))
    if not writer.isOpened():
        pytest.skip("this OpenCV build writes no MJPG video")
    for _ in range(3):
        writer.write(np.full((48, 64, 3), 128, np.uint8))
    writer.release()
    c = doctor.check_camera(_config(tmp_path, f'[camera]\nsource = "opencv:{video}"\n'))
    assert c.ok and c.detail == f"opencv:{video} opens and gives 64 x 48 frames"
    c = doctor.check_camera(_config(tmp_path, f'[camera]\nsource = "opencv:{tmp_path}/none.avi"\n'))
    assert not c.ok and "no such video file" in c.detail


def test_a_missing_opencv_device(tmp_path):
    if Path("/dev/video9").exists():
        pytest.skip("/dev/video9 exists here")
    c = doctor.check_camera(_config(tmp_path, '[camera]\nsource = "opencv:9"\n'))
    assert not c.ok and c.detail == "opencv:9: there is no /dev/video9" and "ls /dev/video*" in c.fix


def test_the_pico_found_by_its_usb_id(tmp_path, monkeypatch):
    master, slave = os.openpty()
    try:
        port = os.ttyname(slave)
        seen = []
        monkeypatch.setattr(doctor, "_pico_port", lambda usb_id: seen.append(usb_id) or port)
        cfg = _config(tmp_path, '[encoder]\nusb_id = "2E8A:000A"\n')
        c = doctor.check_encoder(cfg)
        assert c.ok and c.detail == f"the Pico on {port}" and seen == [(0x2E8A, 0x000A)]
        monkeypatch.setattr(doctor, "_access", lambda path: False)
        c = doctor.check_encoder(cfg)
        assert not c.ok and "cannot be opened (permission)" in c.detail and "usermod -aG dialout" in c.fix
    finally:
        os.close(master)
        os.close(slave)


def test_group_membership(monkeypatch):
    import grp

    monkeypatch.setattr(doctor, "_euid", lambda: 1000)
    monkeypatch.setattr(doctor, "_user", lambda: "ana")
    groups = {"video": grp.struct_group(("video", "x", 44, [])),
              "audio": grp.struct_group(("audio", "x", 29, ["ana"])),
              "dialout": grp.struct_group(("dialout", "x", 20, []))}

    def getgrnam(name):
        return groups[name]

    monkeypatch.setattr(grp, "getgrnam", getgrnam)
    monkeypatch.setattr(doctor, "_process_groups", lambda: {1000, 44})
    assert doctor.check_group("video") == doctor.Check("group video", True, "ana is a member")
    audio = doctor.check_group("audio")
    assert not audio.ok and "this login started before" in audio.detail and "log out" in audio.fix
    dialout = doctor.check_group("dialout")
    assert not dialout.ok and dialout.fix.startswith("sudo usermod -aG dialout ana")
    gpio = doctor.check_group("gpio")
    assert not gpio.ok and gpio.detail == "no such group on this system"


def test_calibration_files_that_do_not_parse(tmp_path):
    bad = tmp_path / "board.json"
    bad.write_text("{not json")
    enc = tmp_path / "encoder.toml"
    enc.write_text("[encoder]\ncounts_per_rev = 0\n")
    cfg = _config(tmp_path, f'[camera]\ngeometry = "{bad}"\nintrinsics = "{tmp_path}/none.json"\n'
                            f'[encoder]\ncalibration = "{enc}"\n')
    checks = {c.part: c for c in doctor.check_calibration(cfg)}
    assert not checks["camera geometry"].ok and str(bad) in checks["camera geometry"].detail
    assert "companion calibrate geometry" in checks["camera geometry"].fix
    assert checks["camera colours"].ok
    assert not checks["camera intrinsics"].ok and "no such file" in checks["camera intrinsics"].detail
    assert not checks["encoder calibration"].ok and "counts_per_rev" in checks["encoder calibration"].detail
    enc.write_text("[encoder]\ncounts_per_rev = 2400.5\n")
    ok = {c.part: c for c in doctor.check_calibration(cfg)}["encoder calibration"]
    assert ok.ok and ok.detail == f"{enc}: 2400.5 counts per turn"


def test_journal_folder_and_file(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    c = doctor.check_journal(config_mod.validate({"service": {"journal": f"{blocker}/journal.db"}}))
    assert not c.ok and c.detail == f"{blocker} is not a folder you can write"
    other = tmp_path / "other.db"
    other.write_text("not a database at all, just text" * 10)
    c = doctor.check_journal(config_mod.validate({"service": {"journal": str(other)}}))
    assert not c.ok and "not a journal" in c.detail
    from companion.journal import Journal

    with Journal(tmp_path / "journal.db", checkpoint_s=None) as j:
        j.start_session("carrousel", {})
    c = doctor.check_journal(config_mod.validate({"service": {"journal": str(tmp_path / "journal.db")}}))
    assert c.ok and c.detail == f"{tmp_path}/journal.db: 1 session; its folder is writable"


def test_exit_status_follows_only_the_games_parts(tmp_path, monkeypatch):
    def ok(part):
        return doctor.Check(part, True, "fine")

    monkeypatch.setattr(doctor, "check_camera", lambda cfg: ok("camera"))
    monkeypatch.setattr(doctor, "check_gpio", lambda cfg: ok("GPIO pins"))
    monkeypatch.setattr(doctor, "check_encoder", lambda cfg: doctor.Check("encoder", False, "no Pico", "plug it"))
    monkeypatch.setattr(doctor, "check_audio", lambda cfg: ok("audio output"))
    monkeypatch.setattr(doctor, "check_espeak", lambda: ok("espeak-ng"))
    monkeypatch.setattr(doctor, "check_group", lambda name: ok(f"group {name}"))
    cfg = _config(tmp_path)
    rc, lines = _doctor(cfg, "carrousel")
    assert rc == 0 and lines[-1] == "everything carrousel needs is ok"
    assert _line(lines, "encoder") == "missing  encoder: no Pico; how to fix: plug it (not needed for carrousel)"
    rc, lines = _doctor(cfg, "monsieur-carrousel")
    assert rc == 1 and lines[-1] == "monsieur-carrousel cannot be refereed at a real table yet: fix encoder"


def test_speech_off_needs_no_audio(tmp_path):
    cfg = _config(tmp_path, "[speech]\nenabled = false\n")
    assert "audio output" not in doctor.needs("monsieur-carrousel", cfg)
    assert {"audio output", "espeak-ng", "group audio"} <= doctor.needs("monsieur-carrousel", _config(tmp_path))
    assert "camera" in doctor.needs("carnival", cfg) and "encoder" not in doctor.needs("carnival", cfg)
    assert "group dialout" in doctor.needs("carrossel", cfg)


def test_unknown_game_is_one_line(tmp_path, capsys):
    from companion.cli import main

    cfg = _config(tmp_path)
    assert main(["doctor", "--game", "chess", "--config", str(cfg.source)]) == 2
    assert capsys.readouterr().err.strip().startswith("companion: error: --game chess: expected one of carrousel")
