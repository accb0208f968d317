"""`[speech] cache_dir` that cannot be written: checked at start-up (`run` refuses in one line
naming the key and the path, `doctor` reports it, `say` names the key), and a folder lost while
playing is one warning and the buzzer, never a traceback per prompt."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from companion.announcers.speech import CacheDirError, EspeakRenderer, SpeechAnnouncer, SpeechError, check_cache_dir
from companion.cli import main
from companion.commands import doctor
from companion.config import load
from companion.journal import Journal


def _blocked(tmp_path: Path) -> Path:
    """A folder path that cannot be created, whoever runs the test (root included): under a file."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    return blocker / "speech"


def _config(tmp_path: Path, cache: Path) -> Path:
    path = tmp_path / "sd.toml"
    path.write_text(f'[service]\njournal = "{tmp_path / "j.db"}"\n[web]\nenabled = false\n'
                    f'[speech]\ncache_dir = "{cache}"\n', encoding="utf-8")
    return path


@pytest.mark.parametrize("game", ["carrousel", "monsieur-carrousel"])
def test_run_refuses_an_unwritable_cache_in_one_line_naming_the_key(tmp_path, capsys, game):
    cache = _blocked(tmp_path)
    config = _config(tmp_path, cache)
    rc = main(["run", "--config", str(config), "--game", game, "--table", "sim", "--new", "--speed", "1000",
               "--until", "5"])
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("companion: error:")]
    assert rc == 2 and len(errors) == 1 and "Traceback" not in err, err
    assert errors[0].startswith(f"companion: error: [speech] cache_dir = '{cache}' in {config}: ")
    assert "cannot be created" in errors[0] and "[speech] enabled = false" in errors[0]
    with Journal(tmp_path / "j.db", readonly=True) as journal:
        assert journal.sessions() == []  # nothing was played


def test_doctor_reports_it_and_changes_nothing(tmp_path):
    cache = _blocked(tmp_path)
    check = doctor.check_speech_cache(load(_config(tmp_path, cache)))
    assert not check.ok and check.detail.startswith(f"[speech] cache_dir = '{cache}'")
    assert "[speech] enabled = false" in check.fix
    fresh = tmp_path / "not" / "yet" / "speech"
    check = doctor.check_speech_cache(load(_config(tmp_path, fresh)))
    assert check.ok and not (tmp_path / "not").exists()  # checked, then removed again
    assert "speech cache" in doctor.needs("carrousel", load(_config(tmp_path, fresh)))


def test_say_names_the_key(tmp_path, capsys):
    cache = _blocked(tmp_path)
    rc = main(["say", "hi", "--config", str(_config(tmp_path, cache))])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith(f"companion: error: [speech] cache_dir = '{cache}'") and "Traceback" not in err


def test_a_folder_that_is_not_writable_is_refused(tmp_path):
    cache = tmp_path / "file.wav"
    cache.write_text("")
    with pytest.raises(CacheDirError, match=r"it is a file, not a folder"):
        check_cache_dir(cache)
    assert check_cache_dir(tmp_path / "new") == tmp_path / "new" and (tmp_path / "new").is_dir()
    assert list((tmp_path / "new").iterdir()) == []  # the written check file is gone


def test_a_cache_lost_while_playing_is_one_warning_not_a_traceback(tmp_path, caplog):
    cache = _blocked(tmp_path)
    renderer = EspeakRenderer("en-gb", cache)
    with pytest.raises(SpeechError) as info:
        renderer.render("Lulu is on the lion!")
    assert info.value.reason == "cache" and "[speech] cache_dir" in str(info.value)
    caplog.set_level(logging.WARNING, logger="companion.speech")
    sp = SpeechAnnouncer("carrousel", "en", renderer=renderer, device="null")
    try:
        for text in ("one", "two", "three"):
            sp.say(text)
        assert sp.drain(10.0)
    finally:
        sp.close()
    assert [s.reason for s in sp.history] == ["cache"] * 3
    records = [r for r in caplog.records if r.name == "companion.speech"]
    assert len(records) == 1 and records[0].levelno == logging.WARNING and records[0].exc_info is None
    assert "[speech] cache_dir" in records[0].getMessage()
