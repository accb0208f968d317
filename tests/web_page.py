"""Helpers of the web page's tests: the system's headless Chromium driven by Playwright, and a tap
on the page's server that `companion run` starts (its address, bound to 127.0.0.1:0).

Chromium is Debian's package (`./dev test` installs `chromium`, `fonts-liberation` and
`libatomic1` with apt-get); Playwright's own browsers are never downloaded. Screenshots go to
``build/screenshots/`` (test artefacts; ``docs/images/web-*.png`` are copies of them).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/lib/chromium/chromium"  # the real binary (/usr/bin/chromium is a wrapper script)
SHOTS = Path(__file__).resolve().parent.parent / "build" / "screenshots"


def launch_browser() -> Any:
    """(playwright, browser): headless Chromium from Debian; skips the test when it is absent."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing: apt-get install -y --no-install-recommends chromium fonts-liberation "
                    "libatomic1 (./dev test does it)")
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    browser = pw.chromium.launch(executable_path=CHROMIUM, args=args)
    return pw, browser


def shot(page: Any, name: str) -> Path:
    """Save a full-page screenshot as ``build/screenshots/NAME.png``."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


class WebTap:
    """Records the :class:`~companion.web.server.WebPage` that `companion run` starts."""

    def __init__(self, monkeypatch: Any):
        from companion.web import server

        self.pages: list[Any] = []
        self.started = threading.Event()
        original = server.WebPage.start

        def start(page: Any, entries: Any) -> None:
            original(page, entries)
            self.pages.append(page)
            self.started.set()

        monkeypatch.setattr(server.WebPage, "start", start)

    def url(self, timeout: float = 15.0) -> str:
        """The page's address (``http://127.0.0.1:PORT/``) once the server runs."""
        assert self.started.wait(timeout), "the web page's server did not start"
        assert self.pages[-1].server is not None, "the web page's server did not bind"
        return self.pages[-1].server.url

    @property
    def token(self) -> str:
        return self.pages[-1].server.token


def web_config(tmp_path: Path, **sections: dict[str, Any]) -> Path:
    """A real-table configuration (tests/real_table.py) with the page on 127.0.0.1:0."""
    from tests.real_table import write_config

    web = {"enabled": True, "listen": "127.0.0.1:0", **sections.pop("web", {})}
    service = {"announcers": ["console", "web"], **sections.pop("service", {})}
    return write_config(tmp_path, web=web, service=service, **sections)


def start_sim_run(tmp_path: Path, monkeypatch: Any, game: str, speed: float = 4, **sections: dict[str, Any]):
    """``companion run --game GAME --table sim --speed SPEED --new --next-game exit`` on a thread,
    with the web page on (``web_config(tmp_path, **sections)``); returns ``(tap, web, thread, rc)``:
    the service tap (``tests.real_table.CallTap``), the page's :class:`WebTap`, the thread and the
    list its exit code is appended to. End it with :func:`stop_sim_run`."""
    from companion.cli import main
    from tests.real_table import CallTap

    config = web_config(tmp_path, **sections)
    tap, web = CallTap(monkeypatch), WebTap(monkeypatch)
    rc: list[int] = []
    argv = ["run", "--config", str(config), "--game", game, "--table", "sim", "--speed", str(speed), "--new",
            "--next-game", "exit"]
    thread = threading.Thread(target=lambda: rc.append(main(argv)), daemon=True)
    thread.start()
    return tap, web, thread, rc


def stop_sim_run(tap: Any, thread: threading.Thread, rc: list[int]) -> None:
    """Stop the run :func:`start_sim_run` began and check it exited 0 within 15 s."""
    for s in tap.services:
        s.stop()
    thread.join(15)
    assert rc == [0]
