"""`companion run --game G --table hardware` with the hardware emulated: gpiozero's mock pins
pressed by the test, the firmware's encoder app on a pty as the Pico, a camera from a video file,
entries on the socket. Each test referees a scripted game to its end; no simulated player
anywhere in the chain (the scripts are fixed lists of what players do)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from companion.events import InvalidObservation
from tests.real_table import CallTap, Companion, RunningPico, write_config

ROOT = Path(__file__).resolve().parents[1]
#: `companion` in a child process with gpiozero's mock pins lent to its real table (the emulated
#: hardware's pins; `[service] pin_factory = "mock"` is refused at a real table otherwise).
MOCK_PINS_COMPANION = [sys.executable, "-m", "tests.mock_pins_main"]


@pytest.fixture
def pico():
    p = RunningPico()
    yield p
    p.close()


def _referee_calls(game, observations):
    from companion.games import referee_for

    ref = referee_for(game)
    state, calls = ref.initial_state(), []
    for obs in observations:
        state, more = ref.apply(state, obs)
        calls += more
    return calls


def test_carrossel_plays_from_entries_and_turns_from_the_encoder(tmp_path, monkeypatch, mock_factory, pico):
    """Carrossel at a real table: the deal, plays and choices are entered on the socket; every
    turn of the board is made on the shaft (the Pico counts it) and judged from the angle."""
    from companion.sim.carrossel import generate_game

    script = generate_game(5, ("Ana", "Ben"), uncertain_rate=0.0, angle_noise_deg=2.0)
    config = write_config(tmp_path, players={"names": ["Ana", "Ben"]},
                          encoder={"backend": "pico", "port": pico.port, "index": False, "settle_s": 0.1},
                          service={"announcers": ["console", "lights"]})
    tap = CallTap(monkeypatch)
    companion = Companion(tap, config, "carrossel")
    try:
        companion.wait_bound()
        angle_cw = 0.0  # where the board stands, degrees clockwise from setup
        turned = 0
        for obs in script:
            if obs.TYPE == "board_turned":
                # Turn the real shaft the way the table would: the expected direction of the last
                # `turn_board` call, else the shorter way.
                last_turn = next((c for c in reversed(tap.calls) if c.TYPE == "turn_board"), None)
                delta = (obs.angle_deg - angle_cw) % 360.0
                if (last_turn is not None and last_turn.turn_deg < 0) or (last_turn is None and delta > 180):
                    delta -= 360.0
                if abs(delta) < 1.0:
                    continue
                pico.turn(-delta, rps=1.0)  # clockwise seen from above = falling count (direction ccw)
                angle_cw = obs.angle_deg
                tap.next("board_turned_ok", "wrong_turn", "board_aligned", "invalid_observation")
                turned += 1
                continue
            reply = companion.enter({**obs.to_json(), "game": "carrossel"})
            assert reply["ok"], reply
        over = tap.next("game_over", timeout=10)
        assert companion.join() == 0
    finally:
        companion.stop()
    expected = [c for c in _referee_calls("carrossel", script) if c.TYPE == "game_over"][0]
    assert turned >= 4
    assert over.to_json()["scores"] == expected.to_json()["scores"]
    assert over.to_json()["winners"] == expected.to_json()["winners"]
    assert not any(isinstance(c, InvalidObservation) for c in tap.calls)


def test_carrossel_entry_for_another_game_is_refused_and_the_game_goes_on(tmp_path, monkeypatch, mock_factory, pico,
                                                                         capsys):
    config = write_config(tmp_path, encoder={"backend": "pico", "port": pico.port, "index": False},
                          service={"announcers": ["console"]})
    tap = CallTap(monkeypatch)
    companion = Companion(tap, config, "carrossel")
    try:
        companion.wait_bound()
        wrong_game = companion.enter({"game": "carnival", "type": "roll", "player": "Ana", "dice": [1, 2, 3]})
        assert not wrong_game["ok"] and "referees carrossel, not carnival" in wrong_game["error"]
        not_ours = companion.enter({"type": "board", "spaces": []})
        assert not not_ours["ok"] and "unknown observation type 'board'" in not_ours["error"]
        bad_field = companion.enter({"type": "game_start", "players": "Ana"})
        assert not bad_field["ok"] and "players" in bad_field["error"]
        started = companion.enter({"type": "game_start", "players": ["Ana", "Ben"], "seed": 3})
        assert [c["type"] for c in started["calls"]][:1] == ["game_started"]
        wrong_player = companion.enter({"type": "play", "player": "Zed", "slot": 1, "animals": []})
        assert wrong_player["ok"] and wrong_player["calls"][0]["type"] == "invalid_observation"
        assert tap.services[-1].parts.wait_for("encoder", "ok", 10), "the Pico never said hello"
        status = companion.enter({"control": "status"})
        assert status["status"]["game"] == "carrossel" and status["status"]["parts"]["encoder"]["state"] == "ok"
        from companion.cli import main

        capsys.readouterr()
        journal_path = str(tmp_path / "journal.db")
        assert main(["enter", "--journal", journal_path, "carrossel", "play", "player=Ana", "slot=99",
                     "animals=swan,fox"]) == 1  # the referee's "play again": the entry did not count
        said = capsys.readouterr().out
        assert "Ana, that play is not allowed: slot card 99" in said  # the referee's call, in words
        assert main(["enter", "--journal", journal_path, "carrossel", "play", "player=Zed", "slot=1",
                     "animals=swan,fox"]) == 1
        assert main(["enter", "--journal", journal_path, "carnival", "roll", "player=Ana", "dice=1,2,3"]) == 1
        assert "referees carrossel, not carnival" in capsys.readouterr().err
    finally:
        companion.stop()
    from companion.journal import Journal

    journal = Journal(tmp_path / "journal.db", readonly=True)
    kinds = [e.kind for e in journal.entries(journal.sessions()[-1].id)]
    journal.close()
    assert kinds.count("observation") == 4  # the game_start and the three plays judged: all journaled


def press(factory, pin: int) -> None:
    """A player presses and releases the button wired to ``pin`` (to ground, pull-up)."""
    p = factory.pin(pin)
    p.drive_low()
    p.drive_high()


def test_monsieur_carrousel_plays_with_the_encoder_the_die_and_the_kids_buttons(tmp_path, monkeypatch, mock_factory,
                                                                                  pico):
    """Monsieur Carrousel at a real table: the die button, the YES/NO buttons and the carousel
    turned on the shaft (the Pico counts it; the tracker finds the stop); every prompt spoken
    (espeak-ng to ALSA's null device)."""
    import random

    config = write_config(tmp_path, players={"names": ["Ana", "Ben"]},
                          encoder={"backend": "pico", "port": pico.port, "index": True, "settle_s": 0.1},
                          service={"game": "monsieur-carrousel"})
    tap = CallTap(monkeypatch)
    companion = Companion(tap, config, "monsieur-carrousel")
    rng = random.Random(3)
    pins = {"yes": 23, "no": 24, "die": 22}
    spins = 0
    try:
        tap.next("game_started")
        while True:
            call = tap.next(timeout=20)
            kind = call.TYPE
            if kind in ("turn", "roll_again", "twins_help"):
                press(mock_factory, pins["die"])
            elif kind in ("seat_kid", "answer_again", "memory_guess"):
                press(mock_factory, pins["yes"])  # the kid sits where told / we remember
            elif kind == "sunbeam_fragment" and call.to_json().get("ask"):
                press(mock_factory, pins["yes" if rng.random() < 0.5 else "no"])
            elif kind in ("spin", "spin_again"):
                pico.turn(rng.uniform(400.0, 800.0), rps=3.0)  # more than one whole turn
                spins += 1
            elif kind in ("game_won", "game_lost"):
                break
        assert companion.join() == 0
    finally:
        companion.stop()
    kinds = [c.TYPE for c in tap.calls]
    assert "weather" in kinds and spins >= 3
    assert not any(isinstance(c, InvalidObservation) for c in tap.calls)
    speech = tap.services[-1].speech
    assert speech is not None and any(s.outcome == "played" for s in speech.history)


def _carrousel_video(path, seed: int = 11):
    """A video of a Carrousel table (rendered frames, MJPG): four players' cards in front of
    them, then Ana's cards come up one after another and one legal move each time makes the
    first three her card. Returns Ana's cards in order and the other players' cards."""
    import random

    import cv2

    from companion.games.carrousel import CARDS, Position
    from companion.vision.sim import Conditions, SimulatedCamera

    rng = random.Random(seed)
    position = Position.from_text(".gbyrk.")
    others = {"east": ("green", "yellow", "blue"), "north": ("yellow", "green", "red"),
              "west": ("blue", "red", "green")}
    ana_cards, positions, used = [], [], set(others.values()) | {position.first_three}
    for _ in range(10):  # four players: 10 points win (Victory)
        moves = position.legal_moves()
        rng.shuffle(moves)
        nxt = next(p for p in (position.apply(m) for m in moves)
                   if p.first_three not in used and p.first_three in CARDS)
        used.add(nxt.first_three)
        ana_cards.append(nxt.first_three)
        positions.append(nxt)
        position = nxt
    camera = SimulatedCamera(seed=seed, conditions=Conditions(height_mm=600, tilt_deg=8, azimuth_deg=30, roll_deg=5,
                                                              light=1.0, kelvin=5000, gradient=0.05, vignetting=0.2,
                                                              noise_sigma=1.5, blur_px=0.0, jpeg_quality=0, hands=()))
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 30, (640, 480))

    def hold(spaces, ana_card, frames):
        camera.set_table(spaces=spaces, cards={"south": ana_card, **others})
        image = camera.read().image
        for _ in range(frames):
            writer.write(image)

    board = Position.from_text(".gbyrk.")
    hold(board.spaces, ana_cards[0], 12)  # the deal: the game starts from what is seen
    for k, goal in enumerate(positions):
        if k:
            hold(board.spaces, ana_cards[k], 8)  # Ana's next card is turned face up
        hold(goal.spaces, ana_cards[k], 24)  # the move: her card is the first three; she claims
        board = goal
    writer.release()
    return ana_cards, others


def test_carrousel_plays_from_a_camera_video_and_the_claim_buttons(tmp_path, monkeypatch, mock_factory):
    """Carrousel at a real table: the camera (a video file) reads the horses and cards; the
    game starts from the cards it sees (no simulated deck); Ana presses her claim button when
    her card comes up, to the winner."""
    video = tmp_path / "table.avi"
    ana_cards, others = _carrousel_video(video)
    config = write_config(tmp_path, players={"names": ["Ana", "Ben", "Cleo", "Dev"]},
                          camera={"source": f"opencv:{video}", "frame_period_s": 0.03, "settle_s": 0.12},
                          service={"announcers": ["console", "lights"]})
    tap = CallTap(monkeypatch)
    companion = Companion(tap, config, "carrousel")
    try:
        started = tap.next("game_started", timeout=30)
        assert started.cards["Ana"] == ana_cards[0]
        assert [started.cards[p] for p in ("Ben", "Cleo", "Dev")] == [others[s] for s in ("east", "north", "west")]
        for card in ana_cards:
            while tap.next("move", timeout=20).first_three != card:
                pass
            press(mock_factory, 5)  # Ana's claim button
            point = tap.next("point", "penalty", timeout=10)
            assert point.TYPE == "point" and point.player == "Ana" and tuple(point.card) == card
            # The physical deck's order is not known: the card drawn is turned up for the camera,
            # never named from a guess.
            assert point.next_card is None and (point.next_unseen or card == ana_cards[-1])
        winner = tap.next("winner", timeout=10)
        assert winner.player == "Ana"
        assert companion.join() == 0
    finally:
        companion.stop()
    assert not any(c.TYPE in ("illegal_move", "penalty", "invalid_observation") for c in tap.calls)


def test_an_encoder_unplugged_while_playing_is_told_and_the_game_goes_on_when_back(tmp_path, monkeypatch,
                                                                                 mock_factory, pico):
    """The Pico's cable pulled mid-game: the table is told (part_lost), status shows it, the
    game waits; plugged back (the by-id link follows it, as udev's does), the game goes on."""
    link = tmp_path / "pico-by-id"
    link.symlink_to(pico.port)
    config = write_config(tmp_path, players={"names": ["Ana", "Ben"]},
                          encoder={"backend": "pico", "port": str(link), "index": False, "settle_s": 0.1},
                          service={"announcers": ["console"]})
    tap = CallTap(monkeypatch)
    companion = Companion(tap, config, "carrossel")
    try:
        companion.wait_bound()
        assert companion.enter({"type": "game_start", "players": ["Ana", "Ben"], "seed": 3})["ok"]
        assert tap.services[-1].parts.wait_for("encoder", "ok", 10), "the Pico never said hello"
        pico.unplug()
        lost = tap.next("part_lost", timeout=10)
        assert lost.part == "encoder" and "USB" in lost.fix
        status = companion.enter({"control": "status"})["status"]
        assert status["parts"]["encoder"]["state"] == "lost"
        link.unlink()
        link.symlink_to(pico.replug())
        back = tap.next("part_back", timeout=10)
        assert back.part == "encoder"
        assert companion.enter({"control": "status"})["status"]["parts"]["encoder"]["state"] == "ok"
        # the game goes on: a play is judged
        reply = companion.enter({"type": "play", "player": "Zed", "slot": 1, "animals": []})
        assert reply["calls"][0]["type"] == "invalid_observation"
    finally:
        companion.stop()


def test_a_video_that_ends_ends_the_run_with_a_one_line_summary(tmp_path, monkeypatch, mock_factory, capsys):
    import cv2
    import numpy as np

    video = tmp_path / "short.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 30, (640, 480))
    for _ in range(15):
        writer.write(np.full((480, 640, 3), 90, np.uint8))  # the table is not in view
    writer.release()
    config = write_config(tmp_path, camera={"source": f"opencv:{video}", "frame_period_s": 0.01},
                          service={"announcers": ["console", "lights"]})
    tap = CallTap(monkeypatch)
    companion = Companion(tap, config, "carrousel")
    assert companion.join() == 0
    err = capsys.readouterr().err
    # every frame is read, or counted as skipped (a loaded machine: the reader had no time for it)
    line = next(x for x in err.splitlines() if "the frames ended after" in x)
    assert f"opencv:{video}: the frames ended after " in line
    read = int(line.split("the frames ended after ", 1)[1].split()[0])
    skipped = int(line.split("(", 1)[1].split()[0]) if "skipped" in line else 0
    assert read >= 1 and read + skipped == 15, line


def test_the_service_waits_for_the_next_game_and_starts_it_from_the_entry_socket(tmp_path, monkeypatch,
                                                                                  mock_factory):
    """After a game the appliance waits; `companion enter --new-game carnival` starts it."""
    import threading

    from companion.cli import main

    config = write_config(tmp_path, service={"announcers": ["console"]}, sim={"move_time_s": 0.05})
    tap = CallTap(monkeypatch)
    rc: list[int] = []
    thread = threading.Thread(target=lambda: rc.append(main([
        "run", "--config", str(config), "--game", "carrossel", "--table", "sim", "--speed", "1000", "--new",
        "--next-game", "wait"])), daemon=True)
    thread.start()
    try:
        tap.next("game_over", timeout=60)
        journal = str(tmp_path / "journal.db")
        assert main(["enter", "--journal", journal, "--new-game", "carnival"]) == 0
        tap.next("game_started", timeout=30)
        assert tap.services[-1].referee.name == "carnival"
        assert main(["enter", "--journal", journal, "--new-game", "carrossel"]) == 1  # one game at a time
    finally:
        for service in tap.services:
            service.stop()
        thread.join(30)
    assert rc == [0]


@pytest.mark.parametrize("game", ["carrousel", "monsieur-carrousel", "carrossel", "carnival"])
def test_with_no_hardware_a_real_table_stops_at_once_naming_the_missing_part(tmp_path, game):
    """On a machine with no Pi pins, no Pico and no camera: one line naming the part and the
    fix, a non-zero exit, well within 10 s; nothing simulated."""
    import os
    import subprocess
    import sys
    import time

    env = {**os.environ, "HOME": str(tmp_path)}
    env.pop("GPIOZERO_PIN_FACTORY", None)
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "companion", "run", "--game", game, "--table", "hardware",
                           "--journal", str(tmp_path / "j.db")], capture_output=True, text=True, timeout=60,
                          env=env, stdin=subprocess.DEVNULL)
    took = time.monotonic() - began
    assert done.returncode == 2 and took < 10
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines == [lines[-1]] and lines[-1].startswith("companion: error: GPIO pins: ") and "fix: " in lines[-1]
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert not (tmp_path / "j.sock").exists()


@pytest.mark.parametrize("game, part", [("carrousel", "camera"), ("monsieur-carrousel", "encoder (Pico on USB)"),
                                        ("carrossel", "encoder (Pico on USB)"), ("carnival", "camera")])
def test_with_pins_but_no_camera_or_pico_the_start_names_that_part(tmp_path, game, part):
    import subprocess
    import sys

    config = write_config(tmp_path)
    done = subprocess.run([*MOCK_PINS_COMPANION, "run", "--game", game, "--table", "hardware",
                           "--config", str(config)], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL, cwd=ROOT)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1].startswith(f"companion: error: {part}: ")


@pytest.mark.parametrize("sections, words", [
    ({"speech": {"device": "no-such-device"}, "encoder": {"backend": "pico", "port": "/dev/null"},
      "service": {"game": "carrousel"}}, "audio output: "),
    ({"encoder": {"backend": "pico", "port": "/dev/null"}, "service": {"announcers": ["console"]}},
     "encoder (Pico on USB): /dev/null cannot be opened as a serial port"),
    ({"encoder": {"backend": "pico", "port": "REGULAR"}, "service": {"announcers": ["console"]}},
     "cannot be opened as a serial port"),
    ({"encoder": {"backend": "sim"}, "service": {"announcers": ["console"]}}, "encoder: [encoder] backend is \"sim\""),
    ({"service": {"announcers": []}}, "[service] announcers is empty"),
])
def test_a_part_that_is_there_but_fails_stops_the_start(tmp_path, sections, words):
    """Not only a missing part: a sound device that cannot play, a port that is not a serial
    device, the simulated shaft asked for at a real table, nobody to tell the calls."""
    import subprocess
    import sys

    regular = tmp_path / "regular-file"
    regular.write_text("not a Pico")
    if sections.get("encoder", {}).get("port") == "REGULAR":
        sections["encoder"]["port"] = str(regular)
    config = write_config(tmp_path, **sections)
    game = sections.get("service", {}).get("game", "carrossel")
    done = subprocess.run([*MOCK_PINS_COMPANION, "run", "--game", game, "--table", "hardware",
                           "--config", str(config)], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL, cwd=ROOT)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert words in done.stderr.splitlines()[-1]
