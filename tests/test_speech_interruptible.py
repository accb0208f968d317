"""Monsieur Carrousel's "turn the carousel" prompt is cut short by the answer to the spin
(``[interruptible]`` in companion/data/signals.toml): the weather is heard at once, not after
the rest of the instruction. The player is a real program (a shell script standing in for
aplay that holds a "long" WAV for 30 s), stopped through :meth:`AudioPlayer.stop`."""

from __future__ import annotations

import threading
import time
import wave

import pytest

from companion.announcers.speech import AudioPlayer, EspeakRenderer, SpeechAnnouncer
from companion.games import monsieur_carrousel as mc

GAME = "monsieur-carrousel"

HOLDING_APLAY = """#!/bin/sh
for f; do :; done
echo "$f" >> "$(dirname "$0")/played"
case "$f" in *long*) exec sleep 30 ;; esac
exit 0
"""


def _wav(path):
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(22050)
        w.writeframes(b"\0\0" * 22050)
    return path


class FixedRenderer(EspeakRenderer):
    """The spin prompts render to ``long.wav`` (held 30 s by the player), the rest to ``short.wav``."""

    def __init__(self, tmp_path):
        super().__init__("en-gb", tmp_path)
        self.long, self.short = _wav(tmp_path / "long.wav"), _wav(tmp_path / "short.wav")
        self.started = threading.Event()

    def render(self, text):
        return self.long if text.startswith(("Turn the carousel", "Not one whole turn")) else self.short


@pytest.fixture
def speech(tmp_path):
    program = tmp_path / "aplay"
    program.write_text(HOLDING_APLAY)
    program.chmod(0o755)
    sp = SpeechAnnouncer(GAME, "en", renderer=FixedRenderer(tmp_path),
                         player=AudioPlayer(device="null", program=str(program), timeout_s=40))
    yield sp, tmp_path / "played"
    sp.close(5)


def _wait_played(played, n, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if played.exists() and len(played.read_text().splitlines()) >= n:
            return
        time.sleep(0.005)
    raise AssertionError(f"the player did not start {n} prompts")


def test_the_weather_cuts_the_spin_prompt_short(speech):
    sp, played = speech
    sp.announce(mc.Spin(t=1.0, player="Ana", purpose="weather", kid="Lulu"), {})
    _wait_played(played, 1)
    t0 = time.monotonic()
    sp.announce(mc.Weather(t=2.0, player="Ana", kid="Lulu", zone="sun"), {})
    assert sp.drain(5)
    assert time.monotonic() - t0 < 2.0  # not the 30 s the spin prompt holds the player
    assert [(s.call_type, s.outcome, s.reason) for s in sp.history] == [
        ("spin", "cut", "stopped"), ("weather", "played", "")]


def test_calls_of_the_same_observation_or_a_rejected_press_do_not_cut_it(speech):
    sp, played = speech
    sp.announce(mc.Spin(t=1.0, player="Ana", purpose="weather", kid="Lulu"), {})
    _wait_played(played, 1)
    from companion.events import InvalidObservation

    sp.announce(InvalidObservation(t=1.5, reason="die rolled during the spin"), {})
    sp.announce(mc.SunHigh(t=1.0, player="Ana"), {})  # same t: same observation as the spin call
    assert not sp.drain(0.3)  # the spin prompt still plays
    assert sp.history == []
    sp.player.stop()
    assert sp.drain(5)
    assert sp.history[0].call_type == "spin"


def test_a_waiting_spin_prompt_is_skipped_once_the_carousel_has_stopped(speech):
    sp, _ = speech
    sp.announce(mc.Turn(t=1.0, player="Ana", number=1, kids_left=12), {})
    sp.announce(mc.SpinAgain(t=2.0, player="Ana", reason="short", revolutions=0.5), {})
    sp.announce(mc.Weather(t=3.0, player="Ana", kid="Lulu", zone="rain"), {})
    assert sp.drain(5)
    outcomes = {s.call_type: (s.outcome, s.reason) for s in sp.history}
    assert outcomes["weather"] == ("played", "")
    assert outcomes["spin_again"][0] == "cut"  # skipped before it started, or stopped at once
    assert outcomes["turn"] == ("played", "")
