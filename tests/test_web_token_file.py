"""The token file beside the journal holds what ``[web] token`` may hold, or the page does not start."""

from __future__ import annotations

import os

import pytest

from companion.sources.entries import EntryServer
from companion.web.security import load_token, token_path_for


@pytest.mark.parametrize("text", ["aaaa bbbb <script>", "short", "a" * 129, "good-token-0123456789\nsecond-line-0123",
                                  "t0ken-with-a-dot.0123456"])
def test_a_token_file_that_is_not_one_token_is_refused_naming_the_file(tmp_path, text):
    journal = tmp_path / "journal.db"
    path = token_path_for(journal)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text + "\n")
    with pytest.raises(ValueError) as got:
        load_token("", True, journal)
    message = str(got.value)
    assert message.startswith(f"{path}: the web token must be one word of 16 to 128 letters, digits")
    assert "\n" not in message and "delete the file" in message


def test_a_good_token_file_is_read_as_it_is(tmp_path):
    journal = tmp_path / "journal.db"
    path = token_path_for(journal)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write("Good_token-0123456789\n")
    assert load_token("", True, journal) == "Good_token-0123456789"
    path.unlink()
    made = load_token("", True, journal)  # the one the service makes passes its own rule
    assert load_token("", True, journal) == made


def test_the_web_page_refuses_to_start_on_a_bad_token_file_in_one_line(tmp_path):
    from companion.config import validate
    from companion.health import PartMissing
    from companion.web import WebPage

    journal = tmp_path / "journal.db"
    path = token_path_for(journal)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write("aaaa bbbb <script>\n")
    config = validate({"web": {"lan": True, "listen": "127.0.0.1:0"}})
    page = WebPage(config, journal, "hardware")
    with pytest.raises(PartMissing) as got:
        page.start(EntryServer(tmp_path / "j.sock"))
    assert str(path) in str(got.value) and "<script>" not in str(got.value)
