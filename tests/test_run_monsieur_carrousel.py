"""`companion run --game monsieur-carrousel`: the whole service on the simulated table, with
gpiozero's mock pins, an injected clock, the journal and the spoken prompts."""

from __future__ import annotations

import io
import shutil

import pytest
from gpiozero import Device

from companion.announcers.speech import wav_duration_s
from companion.cli import main
from companion.clock import ManualClock
from companion.commands.replay import replay_session
from companion.assembly import assemble
from companion.config import validate
from companion.journal import Journal
from tests.doubles import Recorder

needs_audio_tools = pytest.mark.skipif(
    shutil.which("espeak-ng") is None or shutil.which("aplay") is None, reason="espeak-ng or aplay missing"
)


@pytest.fixture(autouse=True)
def reset_pins():
    yield
    Device.pin_factory = None


def service_for(tmp_path, seed=1, journal=None, new=True, extra=None, speak=False):
    data = {
        "service": {"pin_factory": "mock", "game": "monsieur-carrousel"},
        "sim": {"seed": seed},
        "buttons": {"bounce_s": 0.001},
        "speech": {"cache_dir": str(tmp_path / "speech"), "device": "null"},
    }
    for k, v in (extra or {}).items():
        data.setdefault(k, {}).update(v)
    data["speech"]["enabled"] = speak
    config = validate(data)
    journal = journal or Journal(tmp_path / "j.db", sync="normal")
    out = io.StringIO()
    service = assemble("monsieur-carrousel", config, journal, ManualClock, "sim", players=["Ana", "Ben", "Cleo"],
                       new=new, stream=out)
    rec = Recorder()
    service.announcers.append(rec)
    return service, rec, out, journal


def test_simulated_game_plays_to_an_end_and_the_journal_replays_it(tmp_path):
    service, rec, out, journal = service_for(tmp_path, seed=4)
    final = service.run()
    service.close()
    assert service.referee.is_over(final)
    assert rec.calls[-1].type in ("game_won", "game_lost")
    text = out.getvalue()
    assert "Ana, your turn! Roll the die." in text
    assert "You won!" in text or "Let's play again!" in text
    assert replay_session(journal, journal.session(service.session)).identical


def test_seeded_service_games_reach_both_ends(tmp_path):
    results = set()
    for seed in range(1, 9):
        service, rec, _, _ = service_for(tmp_path / str(seed), seed=seed, extra={"monsieur_carrousel_sim": {"memory": 0.3}})
        results.add(service.referee.summary(service.run())["result"])
        service.close()
    assert results == {"won", "lost"}


def test_restart_resumes_the_unfinished_game(tmp_path):
    service, rec, _, journal = service_for(tmp_path, seed=2)
    service.run(until=60.0)
    service.close()
    before = service.referee.summary(service.state)
    assert not service.referee.is_over(service.state) and before["seated"] > 0
    again, rec2, out, _ = service_for(tmp_path, seed=2, journal=journal, new=False)
    assert again.session == service.session and again.referee.summary(again.state) == before
    assert "resumed session" in out.getvalue()
    final = again.run()
    again.close()
    assert again.referee.is_over(final)
    assert not [c for c in rec2.calls if c.type == "invalid_observation"]
    assert replay_session(journal, journal.session(service.session)).identical


@needs_audio_tools
def test_speaks_every_prompt_and_keeps_the_wavs(tmp_path):
    service, rec, _, _ = service_for(tmp_path, seed=4, speak=True, extra={"speech": {"language": "pt-BR"}})
    service.run()
    service.close()
    speech = service.speech
    # Every prompt is played, but the one asking to turn the carousel, cut short (or skipped)
    # once the spin's answer has come ([interruptible] in signals.toml).
    assert speech.history and all(s.outcome == "played" or (s.outcome == "cut" and s.call_type in ("spin", "spin_again"))
                                  for s in speech.history)
    assert sum(s.outcome == "played" for s in speech.history) > len(speech.history) // 2
    spoken = {s.text for s in speech.history if s.outcome == "played"}
    assert "Oba! Todas as crianças estão no carrossel. Vocês ganharam!" in spoken or \
        "Ah, chuva demais! O carrossel fecha por hoje. Vamos jogar de novo?" in spoken
    wavs = list((tmp_path / "speech").glob("*.wav"))
    assert len(wavs) >= len(spoken)  # each played prompt's WAV is kept (a cut one may be too)
    assert all(wav_duration_s(w) > 0.3 for w in wavs)


@needs_audio_tools
def test_companion_run_command_plays_a_game(tmp_path, capsys):
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        '[service]\npin_factory = "mock"\n'
        f'[speech]\ncache_dir = "{tmp_path / "speech"}"\ndevice = "null"\nlanguage = "fr"\n'
    )
    rc = main(["--config", str(cfg), "run", "--game", "monsieur-carrousel", "--speed", "1000",
               "--journal", str(tmp_path / "j.db"), "--new", "--seed", "4"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "à toi ! Lance le dé." in out
    assert "Vous avez gagné !" in out or "On rejoue ?" in out
    assert list((tmp_path / "speech").glob("*.wav"))


def test_bad_layout_file_is_a_usage_error(tmp_path, capsys):
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[service]\npin_factory = "mock"\n[monsieur_carrousel]\ntable_file = "{tmp_path / "no.toml"}"\n')
    rc = main(["--config", str(cfg), "run", "--game", "monsieur-carrousel", "--journal", str(tmp_path / "j.db")])
    assert rc == 2
    assert "seat layouts file not found" in capsys.readouterr().err


def test_spins_come_from_the_simulated_shaft_through_the_rotation_tracker(tmp_path):
    """`companion run --game monsieur-carrousel`: the simulated table's spins turn the
    simulated shaft (inertia, friction, bounce); the referee gets the rotation tracker's
    spin_started / spin_stopped, with the angle measured from the encoder's counts."""
    from companion.sim.shaft import ShaftSpins

    service, rec, out, journal = service_for(tmp_path, seed=4)
    shaft = next(s for s in service.scheduled if isinstance(s, ShaftSpins))
    stops = []
    feed = shaft.tracker.feed

    def watch(sample):
        obs = feed(sample)
        stops.extend(o for o in obs if o.TYPE == "spin_stopped")
        return obs

    shaft.tracker.feed = watch
    tick = shaft.tracker.tick

    def watch_tick(t):
        obs = tick(t)
        stops.extend(o for o in obs if o.TYPE == "spin_stopped")
        return obs

    shaft.tracker.tick = watch_tick
    final = service.run()
    service.close()
    assert service.referee.is_over(final)
    journaled = [e.body for e in journal.entries(service.session) if e.type == "spin_stopped"]
    assert len(stops) >= 5 and len(journaled) == len(stops)
    for obs, body in zip(stops, journaled):
        assert body["angle_deg"] == obs.angle_deg and body["revolutions"] == obs.revolutions
