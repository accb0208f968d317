"""`companion replay` without a journal argument uses `[service] journal`, as status, enter
and doctor do."""

from __future__ import annotations

from companion.cli import main
from companion.journal import Journal


def _config(tmp_path, journal):
    config = tmp_path / "companion.toml"
    config.write_text(f'[service]\njournal = "{journal}"\n[web]\nenabled = false\n')
    return config


def test_list_without_argument_reads_the_configured_journal(tmp_path, capsys):
    """Two sessions in the configured journal: `replay --list` with no argument lists both."""
    path = tmp_path / "j.db"
    with Journal(path) as journal:
        journal.start_session("carrousel", {})
        journal.start_session("carnival", {})
    config = _config(tmp_path, path)
    assert main(["--config", str(config), "replay", "--list"]) == 0
    rows = capsys.readouterr().out.splitlines()[1:]
    assert len(rows) == 2
    assert "carrousel" in rows[0] and "carnival" in rows[1]


def test_a_missing_configured_journal_is_one_line(tmp_path, capsys):
    """No journal yet at `[service] journal`: one line naming the file and the setting, exit 2."""
    path = tmp_path / "none.db"
    config = _config(tmp_path, path)
    assert main(["--config", str(config), "replay", "--list"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0] and "[service] journal" in err[0], err
