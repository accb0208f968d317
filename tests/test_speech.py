"""Spoken prompts: catalogues in three languages, real espeak-ng WAVs, the non-blocking queue,
the WAV cache, timeouts and the buzzer fallback (gpiozero MockFactory with MockPWMPin)."""

from __future__ import annotations

import shutil
import subprocess
import threading
import wave

import pytest
from gpiozero import TonalBuzzer
from gpiozero.pins.mock import MockFactory, MockPWMPin

from companion.announcers.speech import (
    AudioPlayer,
    BuzzerPatterns,
    BuzzerPlayer,
    Catalogue,
    CatalogueError,
    EspeakRenderer,
    SpeechAnnouncer,
    SpeechError,
    languages,
    wav_duration_s,
)
from companion.cli import main
from companion.games import monsieur_carrousel as mc

GAME = "monsieur-carrousel"
LANGS = ("en", "fr", "pt-BR")
needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed")


def sample_calls():
    """One call of every type and variant the engine makes."""
    c = []
    c.append(mc.GameStarted(t=0, players=("Ana", "Ben"), layout="1A", difficulty="easy", raindrops=8))
    c.append(mc.Turn(t=0, player="Ana", number=1, kids_left=12))
    c.append(mc.RollAgain(t=0, player="Ana"))
    c.append(mc.TwinsHelp(t=0, player="Ana", colour="red", twins=("Caspar", "Arto")))
    for pointed in (False, True):
        c.append(mc.SeatKid(t=0, player="Ana", kid="Lulu", colour="red", seats=(1, 7), seat=1, picture="lion",
                            pointed=pointed))
    c.append(mc.KidOnSeat(t=0, player="Ana", kid="Lulu", seat=1, colour="red", picture="lion", seated=1))
    for pointed in (False, True):
        c.append(mc.WrongSeat(t=0, player="Ana", kid="Lulu", seat=2, colour="red", seat_colour="blue",
                              picture="car", pointed=pointed))
    c.append(mc.Spin(t=0, player="Ana", purpose="weather", kid="Lulu"))
    c.append(mc.Spin(t=0, player="Ana", purpose="finger", colour="blue"))
    for reason in ("short", "zone", "seat", "no_stop", "uncertain"):
        c.append(mc.SpinAgain(t=0, player="Ana", reason=reason))
    c.append(mc.MemoryGuess(t=0, player="Ana", kid="Mimi", seat=3, picture="dolphin"))
    for right in (True, False):
        c.append(mc.GuessJudged(t=0, player="Ana", kid="Mimi", right=right, picture="dolphin", colour="blue"))
    for zone in ("sun", "rain"):
        c.append(mc.Weather(t=0, player="Ana", kid="Lulu", zone=zone))
    for ask in (True, False):
        c.append(mc.SunbeamFragment(t=0, player="Ana", ask=ask))
    for complete, removed in ((True, True), (True, False), (False, False)):
        c.append(mc.SunbeamJudged(t=0, player="Ana", complete=complete, raindrop_removed=removed))
    c.append(mc.SunHigh(t=0, player="Ana"))
    c.append(mc.Raindrop(t=0, player="Ana", raindrops=3, left=5))
    c.append(mc.AnswerAgain(t=0, question="memory"))
    c.append(mc.SeatsMismatch(t=0, expected=(1,), seen=(1, 2)))
    c.append(mc.GameWon(t=0, raindrops=2, turns=20))
    c.append(mc.GameLost(t=0, empty_seats=3, turns=20))
    return c


# --------------------------------------------------------------------------- catalogues


def test_three_languages_have_the_same_messages():
    assert set(languages()) >= set(LANGS)
    keys = {lang: set(Catalogue(lang).messages(GAME)) for lang in LANGS}
    assert keys["en"] == keys["fr"] == keys["pt-BR"]
    variants = {lang: Catalogue(lang).variant_fields(GAME) for lang in LANGS}
    assert variants["en"] == variants["fr"] == variants["pt-BR"]


def test_sample_covers_every_call_of_the_engine():
    assert {c.type for c in sample_calls()} == {cls.TYPE for cls in mc.CALLS}


def test_every_call_has_a_sentence_in_every_language_with_fields_filled():
    for lang in LANGS:
        cat = Catalogue(lang)
        texts = []
        for call in sample_calls():
            text = cat.text(call, GAME)
            assert text, f"{lang}: no sentence for {call.type}"
            assert "{" not in text and "}" not in text
            texts.append(text)
        assert len(set(texts)) == len(texts), f"{lang}: two variants share one sentence"


def test_sentence_names_player_kid_and_translated_seat():
    seated = mc.KidOnSeat(t=0, player="Ana", kid="Lulu", seat=1, colour="red", picture="lion", seated=1)
    assert Catalogue("en").text(seated, GAME) == "Lulu is on the lion!"
    assert Catalogue("fr").text(seated, GAME) == "Lulu est sur le lion !"
    assert Catalogue("pt-BR").text(seated, GAME) == "Lulu está no leão!"
    ask = mc.SeatKid(t=0, player="Ana", kid="Lulu", colour="green", seats=(2,), seat=2, picture="car")
    assert Catalogue("fr").text(ask, GAME) == "Vert ! Ana, mets Lulu sur un siège vert."


def test_memory_question_does_not_tell_the_answer():
    call = mc.MemoryGuess(t=0, player="Ana", kid="Mimi", seat=3, picture="dolphin")
    for lang in LANGS:
        text = Catalogue(lang).text(call, GAME)
        assert "Mimi" in text
        assert Catalogue(lang).fill("{picture}", {"picture": "dolphin"}) not in text


def test_words_cover_every_colour_and_picture_of_the_layouts():
    table = mc.load_table()
    pictures = {s.picture for layout in table.layouts.values() for s in layout.seats}
    for lang in LANGS:
        words = Catalogue(lang)._data["words"]
        assert set(table.die_colours) <= set(words["colour"]), lang
        assert pictures <= set(words["picture"]), lang


def test_unknown_language_is_a_clear_error():
    with pytest.raises(CatalogueError, match="known: en, fr, pt-BR"):
        Catalogue("de")


# --------------------------------------------------------------------------- real espeak-ng


@needs_espeak
@pytest.mark.parametrize("lang", LANGS)
def test_real_wav_rendered_in_each_language(tmp_path, lang):
    cat = Catalogue(lang)
    seated = mc.KidOnSeat(t=0, player="Ana", kid="Lulu", seat=1, colour="red", picture="lion", seated=1)
    short = cat.text(seated, GAME)
    long = cat.text(mc.MemoryGuess(t=0, player="Ana", kid="Mimi", seat=3, picture="dolphin"), GAME)
    r = EspeakRenderer(cat.voice, tmp_path)
    wav = r.render(short)
    assert wav.stat().st_size > 1000
    with wave.open(str(wav)) as w:
        assert (w.getnchannels(), w.getsampwidth()) == (1, 2)
        frames = w.readframes(w.getnframes())
    assert any(frames[i] for i in range(0, len(frames), 2))  # not silence
    d_short = wav_duration_s(wav)
    d_long = wav_duration_s(r.render(long))
    assert 0.5 < d_short < 4.0
    assert d_long > 2 * d_short


@needs_espeak
def test_wav_cache_renders_each_sentence_once(tmp_path):
    runs = []

    def counting_run(cmd, **kw):
        runs.append(cmd)
        return subprocess.run(cmd, **kw)

    r = EspeakRenderer("en-gb", tmp_path, run=counting_run)
    a = r.render("Sunshine! Lulu is in the sun.")
    b = r.render("Sunshine! Lulu is in the sun.")
    c = r.render("Oh no, rain! Lulu is in the rain.")
    assert a == b != c and len(runs) == 2
    assert r.is_cached("Sunshine! Lulu is in the sun.")
    assert EspeakRenderer("fr-fr", tmp_path).path_for("x") != r.path_for("x")  # voice is part of the key


def test_render_timeout_and_missing_program_raise_speech_error(tmp_path):
    def hanging(cmd, **kw):
        raise subprocess.TimeoutExpired(cmd, kw["timeout"])

    with pytest.raises(SpeechError) as exc:
        EspeakRenderer("en-gb", tmp_path, timeout_s=0.5, run=hanging).render("Hello")
    assert exc.value.reason == "timeout"
    with pytest.raises(SpeechError) as exc:
        EspeakRenderer("en-gb", tmp_path, program="no-such-espeak").render("Hello")
    assert exc.value.reason == "missing"
    assert not list(tmp_path.glob("*.wav"))


# --------------------------------------------------------------------------- the announcer


@pytest.fixture
def buzzer():
    factory = MockFactory(pin_class=MockPWMPin)
    tb = TonalBuzzer(12, pin_factory=factory)
    played = []
    player = BuzzerPlayer(tb, sleep=lambda s: played.append((tb.tone.note if tb.tone else None, s)))
    player.played = played
    yield player
    player.close()
    factory.reset()


def no_device_run(cmd, **kw):
    if cmd[-1] == "-l":
        return subprocess.CompletedProcess(cmd, 1, b"", b"aplay: device_list:274: no soundcards found...")
    return subprocess.CompletedProcess(cmd, 1, b"", b"audio open error")


@needs_espeak
def test_no_audio_device_writes_the_wav_and_buzzes(tmp_path, buzzer):
    sp = SpeechAnnouncer(GAME, "fr", cache_dir=tmp_path, buzzer=buzzer, player=AudioPlayer(run=no_device_run))
    sp.announce(mc.Weather(t=1, player="Ana", kid="Lulu", zone="rain"), {})
    assert sp.drain(20)
    sp.close()
    (spoken,) = sp.history
    assert spoken.outcome == "written" and spoken.text == "Oh non, la pluie ! Lulu est sous la pluie."
    assert wav_duration_s(spoken.wav) > 1.0
    expected = BuzzerPatterns().patterns["monsieur-carrousel.weather.rain"]
    assert tuple(buzzer.played) == expected


@needs_espeak
@pytest.mark.skipif(shutil.which("aplay") is None, reason="alsa-utils not installed")
def test_real_aplay_plays_the_prompt_on_the_null_device(tmp_path):
    sp = SpeechAnnouncer(GAME, "pt-BR", cache_dir=tmp_path, device="null")
    sp.announce(mc.GameWon(t=9, raindrops=2, turns=20), {})
    sp.close()
    assert [s.outcome for s in sp.history] == ["played"]


def test_espeak_hang_falls_back_to_the_buzzer(tmp_path, buzzer):
    def hanging(cmd, **kw):
        raise subprocess.TimeoutExpired(cmd, kw["timeout"])

    sp = SpeechAnnouncer(GAME, "en", buzzer=buzzer, renderer=EspeakRenderer("en-gb", tmp_path, run=hanging))
    sp.announce(mc.GameWon(t=9, raindrops=2, turns=20), {})
    sp.announce(mc.SunHigh(t=10, player="Ana"), {})
    sp.close()
    assert [s.outcome for s in sp.history] == ["buzzer", "buzzer"]
    assert sp.history[0].reason == "timeout"
    notes = [n for n, _ in buzzer.played]
    assert notes[:6] == ["C5", "E5", "G5", "C5", "E5", "G5"]


def test_announce_never_blocks_and_drops_the_oldest_when_full(tmp_path):
    release = threading.Event()
    started = threading.Event()
    wav = tmp_path / "x.wav"
    with wave.open(str(wav), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(22050)
        w.writeframes(b"\0\1" * 2205)

    class StuckRenderer(EspeakRenderer):
        def render(self, text):
            started.set()
            release.wait(10)
            return wav

    def fine_run(cmd, **kw):
        return subprocess.CompletedProcess(cmd, 0, b"", b"")

    sp = SpeechAnnouncer(GAME, "en", renderer=StuckRenderer("en-gb", tmp_path),
                         player=AudioPlayer(device="null", run=fine_run), queue_size=3)
    calls = [mc.Turn(t=i, player="Ana", number=i, kids_left=12) for i in range(1, 11)]
    sp.announce(calls[0], {})
    assert started.wait(10)
    for call in calls[1:]:
        sp.announce(call, {})  # the worker is stuck: these must return at once
    assert sp.pending() == 1 + 3
    release.set()
    assert sp.drain(10)
    sp.close()
    assert [s.outcome for s in sp.history] == ["played"] * 4 and sp.dropped == 6
    assert sp.history[-1].text == sp.catalogue.text(calls[-1], GAME)


def test_missing_espeak_without_buzzer_is_silent_and_calls_without_sentence_are_skipped(tmp_path):
    sp = SpeechAnnouncer(GAME, "en", cache_dir=tmp_path, renderer=EspeakRenderer("en-gb", tmp_path, program="x"))
    from companion.events import InvalidObservation, Tick

    sp.announce(InvalidObservation(t=1, reason="bad"), {})
    assert sp.pending() == 1  # the common sentence for a rejected observation
    sp.close()
    assert sp.history[0].outcome == "silent" and sp.history[0].reason == "missing"
    assert Catalogue("en").text(Tick(t=1), GAME) is None  # type: ignore[arg-type]


def test_fallback_goes_to_any_pattern_player(tmp_path):
    """The service's lights-and-buzzer announcer owns the buzzer pin; it only needs play()."""

    class PatternPlayer:
        def __init__(self):
            self.patterns = []

        def play(self, pattern):
            self.patterns.append(tuple(pattern))

    pp = PatternPlayer()
    sp = SpeechAnnouncer(GAME, "en", buzzer=pp, renderer=EspeakRenderer("en-gb", tmp_path, program="x"))
    sp.announce(mc.Weather(t=1, player="Ana", kid="Lulu", zone="sun"), {})
    sp.close()
    assert pp.patterns == [BuzzerPatterns().patterns["monsieur-carrousel.weather.sun"]]
    assert sp.history[0].outcome == "buzzer"


# --------------------------------------------------------------------------- companion say


@needs_espeak
def test_say_command_writes_a_wav(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    out = tmp_path / "bonjour.wav"
    assert main(["say", "Lulu est sur le lion !", "--lang", "fr", "--out", str(out)]) == 0
    assert wav_duration_s(out) > 0.8
    assert "wrote" in capsys.readouterr().out
    assert main(["say", "hi", "--lang", "de"]) == 2
    assert "known: en, fr, pt-BR" in capsys.readouterr().err


def test_a_colour_takes_its_own_article():
    """"an orange seat", never "a orange seat" (en); never "le orange" (fr, elided "l'"): every
    die colour of the table in every sentence of a call with a colour."""
    import dataclasses
    import re

    table = mc.load_table()
    assert set(table.die_colours) <= set(Catalogue("en")._data["words"]["a_colour"])
    ask = mc.SeatKid(t=0, player="Ben", kid="Paul", colour="orange", seats=(2,), seat=2, picture="car")
    assert Catalogue("en").text(ask, GAME) == "Orange! Ben, put Paul on an orange seat."
    slip = {"en": re.compile(r"\ba [aeiou]", re.I), "fr": re.compile(r"\b(le|la) [aeiouy]", re.I)}
    calls = [c for c in sample_calls() if isinstance(getattr(c, "colour", None), str)]
    assert {c.type for c in calls} >= {"seat_kid", "wrong_seat", "spin"}
    for lang, bad in slip.items():
        for call in calls:
            for colour in table.die_colours:
                said = Catalogue(lang).text(dataclasses.replace(call, colour=colour), GAME)
                assert not bad.search(said), (lang, said)
