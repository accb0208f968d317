"""Every call of every game has a sentence in every catalogue and a light and buzzer entry in
the signals file; sentences of real simulated games are plain words; the console prints them;
the lights play a call's pattern on gpiozero mock pins."""

from __future__ import annotations

import dataclasses
import functools
import io
import re

import pytest

from companion.announcers.console import ConsoleAnnouncer
from companion.announcers.lights import LightsAndBuzzer
from companion.announcers.signals import Signals, SignalsError
from companion.announcers.speech import BuzzerPatterns, Catalogue, languages
from companion.clock import ManualClock
from companion.games import GAMES, referee_for
from companion.service import Service
from tests.doubles import Recorder

LANGS = ["en", "fr", "pt-BR"]
#: Calls of the service itself (companion/health.py), common to every game.
SERVICE_CALLS = ("part_lost", "part_back")
REPR = re.compile(r"True|False|None|[{}\[\]]")


def test_the_three_catalogues_are_there():
    assert languages() == sorted(LANGS)


#: Calls of a game's sources, told through the service (companion/sources/dice_camera.py).
SOURCE_CALLS = {"carnival": ("dice_cocked", "dice_count"),
                "monsieur-carrousel": ("full_turn_asked", "seat_unseen", "die_unseen")}


def call_types(game):
    return set(referee_for(game).vocabulary.calls) | set(SOURCE_CALLS.get(game, ()))


def service_calls():
    try:
        from companion import health
    except ImportError:
        return {t: None for t in SERVICE_CALLS}
    return {c.TYPE: c for c in vars(health).values() if isinstance(c, type) and getattr(c, "TYPE", "") in SERVICE_CALLS}


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_call_of_every_game_has_a_sentence(lang, game):
    cat = Catalogue(lang)
    keys = set(cat.messages(game))
    missing = sorted(t for t in call_types(game) | set(SERVICE_CALLS) if not {k for k in keys if k.split(".")[0] == t})
    assert not missing, f"{cat.path}: no sentence for {game} calls {missing}"


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_call_of_every_game_has_a_signal(game):
    sig = Signals()
    missing = sorted((call_types(game) | set(SERVICE_CALLS)) - sig.types(game))
    assert not missing, f"{sig.path}: no [{game}] entry for {missing}"


def test_service_calls_have_sentences_in_common():
    for lang in LANGS:
        common = Catalogue(lang)._data["common"]
        assert set(SERVICE_CALLS) <= set(common), lang
    for cls in service_calls().values():
        if cls is None:
            continue
        fields = {f.name: "camera" for f in dataclasses.fields(cls) if f.name != "t"}
        call = cls(t=1.0, **fields)
        for lang in LANGS:
            catalogue = Catalogue(lang)
            text = catalogue.text(call, "carrousel")
            assert catalogue.words("camera", "part").lower() in text.lower() and "{" not in text


def test_variants_agree_between_languages():
    """A variant key in one language is a variant in all (the same fields choose it)."""
    for game in GAMES:
        variants = [Catalogue(lang).variant_fields(game) for lang in LANGS]
        assert variants[0] == variants[1] == variants[2], game
        keys = [set(Catalogue(lang).messages(game)) for lang in LANGS]
        assert keys[0] == keys[1] == keys[2], (game, keys[0] ^ keys[1], keys[0] ^ keys[2])


# ------------------------------------------------------------------------ real simulated games


@functools.cache
def simulated_calls(game):
    """The calls of whole games on each game's simulated table (several seeds, faults on)."""
    calls = []
    if game == "carrousel":
        from companion.sim.carrousel import SimulatedCarrouselTable

        for seed, advanced in ((3, False), (8, True)):
            table = SimulatedCarrouselTable(["Ana", "Ben", "Cleo"], seed=seed, illegal_rate=0.1,
                                            false_claim_rate=0.1, stall_rate=0.2, advanced=advanced)
            rec = Recorder()
            Service(referee_for(game, countdown_s=3), ManualClock(), sources=[table], scheduled=[table],
                    announcers=[table, rec]).run()
            calls += rec.calls
    elif game == "monsieur-carrousel":
        from companion.sim.monsieur_carrousel import SimSettings, simulate

        for seed in (2, 5, 9):
            calls += simulate(referee_for(game), SimSettings(seed=seed, short_spin_rate=0.2,
                                                           unreadable_die_rate=0.2, both_buttons_rate=0.1,
                                                           stuck_spin_rate=0.05, misread_seats_rate=0.1)).calls
    else:
        if game == "carrossel":
            from companion.sim.carrossel import generate_game

            streams = [generate_game(s, ("Ana", "Ben", "Cleo", "Dev")[:n], ability_rate=0.5, wrong_turn_rate=0.3,
                                     uncertain_rate=0.2, illegal_play_rate=0.2) for s, n in ((5, 3), (6, 2), (7, 4))]
        else:
            from companion.sim.carnival import carnival_game

            streams = [carnival_game(s, ("Ana", "Ben", "Caio", "Dora")[:n], unreadable_rate=0.2)
                       for s, n in ((0, 2), (1, 3), (2, 4), (3, 3))]
        for stream in streams:
            ref = referee_for(game)
            state = ref.initial_state()
            for obs in stream:
                state, more = ref.apply(state, obs)
                calls += more
    return calls


@pytest.mark.parametrize("game", sorted(GAMES))
def test_simulated_games_cover_most_calls(game):
    """The check below is worth something only if the games make many kinds of call."""
    kinds = {c.type for c in simulated_calls(game)}
    assert len(kinds) >= 0.7 * len(call_types(game)), sorted(call_types(game) - kinds)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("game", sorted(GAMES))
def test_sentences_of_simulated_games_are_plain_words(lang, game):
    cat = Catalogue(lang)
    out = io.StringIO()
    console = ConsoleAnnouncer(stream=out, game=game, language=lang)
    summary = {"raindrops_max": 8}
    for call in simulated_calls(game):
        text = cat.text(call, game)
        assert text, (lang, call.type)
        assert not REPR.search(text), (lang, text)
        console.announce(call, summary)
    lines = out.getvalue().splitlines()
    assert len(lines) == len(simulated_calls(game))
    for line in lines:
        assert re.match(r"^ *\d+\.\d s  \S", line), line
        assert not REPR.search(line), line
        assert "_" not in line.split("s  ", 1)[1], line  # no field or value names


def test_fields_become_words():
    from companion.games.carnival import ActionDone, Winner
    from companion.games.carrousel import Penalty, Point

    point = Point(t=1.0, player="Ana", card=("black", "red", "yellow"), score=1, next_card=None, owner="Ana")
    assert Catalogue("en").text(point, "carrousel") == "Ana scores with black-red-yellow: 1 point, no card left to draw."
    assert Catalogue("fr").text(point, "carrousel").startswith("Ana marque avec noir-rouge-jaune : 1 point")
    drawn = Point(t=1.0, player="Ana", card=("black", "red", "yellow"), score=1, next_card=("red", "blue", "green"),
                  owner="Ana")
    assert Catalogue("en").text(drawn, "carrousel").endswith("next card red-blue-green.")
    unseen = Point(t=1.0, player="Ana", card=("black", "red", "yellow"), score=1, next_card=None, owner="Ana",
                   next_unseen=True)
    for lang in LANGS:  # a real table: the card is turned up, not named from a guessed order
        text = Catalogue(lang).text(unseen, "carrousel")
        assert "Ana" in text and Catalogue(lang).words("red", "colour") not in text.split(":", 1)[1].split(";")[1], text
    assert Catalogue("en").text(unseen, "carrousel").endswith("Ana, turn up your next card.")
    pen = Penalty(t=2.0, player="Ben", card=("black", "red", "yellow"), first_three=("red", "black", "yellow"),
                  lost_card=None, score=0)
    assert "no won card to lose, 0 points" in Catalogue("en").text(pen, "carrousel")
    assert "0 point." in Catalogue("fr").text(pen, "carrousel")  # French: 0 is singular
    assert "0 pontos." in Catalogue("pt-BR").text(pen, "carrousel")
    won = Winner(t=3.0, player="Ana", complete_rides={"Ana": 4, "Ben": 2})
    assert Catalogue("en").text(won, "carnival").endswith("Complete rides: Ana 4, Ben 2.")
    steal = ActionDone(t=4.0, player="Ana", action="midway_steal", target="Ben", took="swings:lights",
                       discarded=None, hands={"Ana": 3})
    assert Catalogue("en").text(steal, "carnival") == (
        "Ana steals swings lights from Ben's Midway, with no card in hand to discard.")


def test_console_keeps_the_reason_the_spoken_sentence_leaves_out():
    from companion.events import InvalidObservation

    bad = InvalidObservation(t=5.0, reason="player: unknown player 'Zed'")
    kid = Catalogue("en").text(bad, "monsieur-carrousel")
    assert "Zed" not in kid and "Grown-up" in kid
    out = io.StringIO()
    ConsoleAnnouncer(stream=out, game="monsieur-carrousel").announce(bad, {})
    assert out.getvalue() == "      5.0 s  Observation refused: player: unknown player 'Zed'\n"


def test_console_suffix_and_spins_in_words():
    from companion.games.monsieur_carrousel import SpinStarted, SpinStopped

    out = io.StringIO()
    console = ConsoleAnnouncer(stream=out, game="monsieur-carrousel", language="en")
    raindrop = referee_for("monsieur-carrousel").vocabulary.call(
        {"type": "raindrop", "t": 9.0, "player": "Ana", "raindrops": 3, "left": 5})
    console.announce(raindrop, {"raindrops_max": 8})
    console.show_spin(SpinStarted(t=10.0, angle_deg=0.0))
    console.show_spin(SpinStopped(t=12.0, angle_deg=93.25, revolutions=1.5, direction="ccw",
                                  uncertain=True, reason="link dropped"))
    assert out.getvalue().splitlines() == [
        "      9.0 s  Put a raindrop on the board.  (3 of 8 raindrops)",
        "     10.0 s  (the carousel turns)",
        "     12.0 s  (the carousel stops: 1.50 turns counter-clockwise, at 93.2 degrees; not sure: link dropped)",
    ]
    fr = io.StringIO()
    ConsoleAnnouncer(stream=fr, game="monsieur-carrousel", language="fr").show_spin(
        SpinStopped(t=12.0, angle_deg=93.25, revolutions=1.5))
    assert "1,50 tours" in fr.getvalue()


def test_console_leaves_out_unspoken_calls_without_show_moves_and_logs_the_detail(caplog):
    from companion.games.carrousel import MoveMade

    move = MoveMade(t=1.0, kind="swap", horses=("black", "red"), spaces=("empty",) * 7,
                    first_three=("red", "black", "yellow"))
    quiet, loud = io.StringIO(), io.StringIO()
    with caplog.at_level("DEBUG", logger="companion.console"):
        ConsoleAnnouncer(stream=quiet, show_moves=False).announce(move, {})
        ConsoleAnnouncer(stream=loud, show_moves=True).announce(move, {})
    assert quiet.getvalue() == ""
    assert loud.getvalue() == "      1.0 s  Move: swap, black and red; first three red-black-yellow.\n"
    assert "kind swap" in caplog.text


def test_countdown_is_short_spoken_and_plain_on_the_console():
    from companion.games.carrousel import Countdown

    c = Countdown(t=15.0, seconds_left=5)
    assert Catalogue("en").text(c, "carrousel") == "5"
    assert Catalogue("en").text(c, "carrousel", console=True) == "Dead end in 5 seconds"
    assert Catalogue("pt-BR").text(Countdown(t=19.0, seconds_left=1), "carrousel", console=True) == (
        "Beco sem saída em 1 segundo")


# ------------------------------------------------------------------------ signals file


def test_unspoken_calls_come_from_the_data():
    sig = Signals()
    assert not sig.spoken("carrousel", "move")
    assert sig.spoken("carrousel", "point") and sig.spoken("carnival", "move")


def test_buzzer_patterns_are_the_signal_notes():
    pats = BuzzerPatterns()
    sig = Signals()
    assert pats.patterns["monsieur-carrousel.weather.rain"] == sig.entries["monsieur-carrousel"]["weather.rain"].notes
    rolled = referee_for("carnival").vocabulary.call(
        {"type": "rolled", "t": 1.0, "player": "Ana", "dice": [4, 4, 4], "actions": ["hand_trade"] * 3, "triple": True})
    assert pats.for_call(rolled, "carnival") == sig.entries["carnival"]["rolled.true"].notes


def test_a_broken_signals_file_names_the_key(tmp_path):
    bad = tmp_path / "signals.toml"
    bad.write_text('[lights]\nx = { who = "all", on_s = 1 }\n[default]\nnotes = []\n'
                   '[carrousel.point]\nlights = "x"\nnotes = [["C7", 0.1]]\n')
    with pytest.raises(SignalsError, match=r"\[carrousel\] point: note C7 is outside A3-A5"):
        Signals(bad)
    bad.write_text('[default]\nnotes = []\n[carrousel.point]\nlights = "nope"\n')
    with pytest.raises(SignalsError, match=r"\[carrousel\] point: unknown light pattern 'nope'"):
        Signals(bad)


def test_lights_play_a_calls_pattern_on_mock_pins(mock_factory):
    factory = mock_factory
    from companion.games.carrossel import GameOver

    lights = LightsAndBuzzer(["Ana", "Ben", "Cleo"], [16, 20, 21, 26], 12, factory, game="carrossel")
    try:
        over = GameOver(t=9.0, reason="x", scores={"Ana": 3, "Ben": 5, "Cleo": 5}, winners=("Ben", "Cleo"))
        lights.announce(over, {})
        assert [factory.pin(p).state for p in (16, 20, 21)] == [0, 1, 1]  # the winners' LEDs
        assert factory.pin(12).frequency == pytest.approx(523.25, abs=0.1)  # C5, the fanfare's first note
    finally:
        lights.close()


def test_lights_follow_the_game_and_the_variant(mock_factory):
    factory = mock_factory
    rain = referee_for("monsieur-carrousel").vocabulary.call(
        {"type": "weather", "t": 1.0, "player": "Ana", "kid": "Lulu", "zone": "rain"})
    sun = referee_for("monsieur-carrousel").vocabulary.call(
        {"type": "weather", "t": 1.0, "player": "Ana", "kid": "Lulu", "zone": "sun"})
    lights = LightsAndBuzzer(["Ana", "Ben"], [16, 20], 12, factory, game="monsieur-carrousel")
    try:
        lights.announce(rain, {})
        assert factory.pin(16).state and factory.pin(20).state  # every LED: rain on the whole table
        assert factory.pin(12).frequency == pytest.approx(392.0, abs=0.1)  # G4, falling
        lights.announce(sun, {})
        assert factory.pin(12).frequency == pytest.approx(523.25, abs=0.1)  # C5, rising
    finally:
        lights.close()


@pytest.mark.parametrize("lang", ["fr", "pt-BR"])
@pytest.mark.parametrize("part", ["camera", "encoder", "journal", "entry socket"])
def test_a_lost_part_is_told_wholly_in_the_tables_language(lang, part):
    """The fix of ``part_lost`` comes from the catalogue (a variant per part), never the
    English text the code carries for the log: no English sentence inside a French or
    Portuguese one."""
    from companion.health import PartLost
    from companion.kits import CAMERA_LOST_FIX

    english_fix = CAMERA_LOST_FIX if part == "camera" else "The game waits. Check the cable."
    text = Catalogue(lang).text(PartLost(t=1.0, part=part, fix=english_fix), "carrousel")
    assert english_fix not in text and "The game" not in text and "Check" not in text, text
    assert Catalogue(lang).words(part, "part").lower() in text.lower()
