"""Emulated hardware for `companion run --table hardware` tests: the real command in a thread,
gpiozero's mock pins (the shared ``mock_factory``), the firmware's encoder app on a pty as the
Pico (turned in real time by its own thread, as a shaft would be), entries on the real socket,
and a tap on the calls the assembled service announces."""

from __future__ import annotations

import queue
import threading
import time
from pathlib import Path
from typing import Any

from companion.cli import main
from companion.sources.entries import request, socket_path_for
from tests.fake_pico import FakePico

CPR = 2400  # counts per turn of the fake Pico's encoder (600 lines, quadrature)


class CallTap:
    """Appends itself to the announcers of every service `companion run` assembles; calls go
    to a queue the test reads (blocking, with a timeout: no sleeping to wait)."""

    def __init__(self, monkeypatch: Any):
        import companion.assembly as assembly

        self.queue: queue.Queue[Any] = queue.Queue()
        self.calls: list[Any] = []
        self.services: list[Any] = []
        self.ready = threading.Event()
        original = assembly.assemble

        def assemble(*args: Any, **kwargs: Any) -> Any:
            service = original(*args, **kwargs)
            service.announcers.append(self)
            self.services.append(service)
            self.ready.set()
            return service

        monkeypatch.setattr(assembly, "assemble", assemble)

    def announce(self, call: Any, summary: Any) -> None:
        self.calls.append(call)
        self.queue.put(call)

    def close(self) -> None:
        pass

    def next(self, *types: str, timeout: float = 15.0) -> Any:
        """The next call of one of ``types`` (others are skipped); AssertionError on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            try:
                call = self.queue.get(timeout=max(remaining, 0.001))
            except queue.Empty:
                raise AssertionError(f"no {'/'.join(types)} call within {timeout} s; "
                                     f"last calls: {[c.TYPE for c in self.calls[-8:]]}") from None
            if not types or call.TYPE in types:
                return call


class Companion:
    """`companion run ... --table hardware` running in a thread of the test process."""

    def __init__(self, tap: CallTap, config: Path, game: str, *extra: str):
        self.tap = tap
        self.config = config
        self.rc: int | None = None
        argv = ["run", "--config", str(config), "--game", game, "--table", "hardware", "--new",
                "--next-game", "exit", *extra]
        self.thread = threading.Thread(target=self._run, args=(argv,), daemon=True)
        self.thread.start()

    def _run(self, argv: list[str]) -> None:
        self.rc = main(argv)

    def wait_bound(self, timeout: float = 15.0) -> None:
        """Until the game's service takes entries."""
        assert self.tap.ready.wait(timeout), "the service was not assembled"
        service = self.tap.services[-1]
        entry = next(s for s in service.sources if hasattr(s, "server"))
        assert entry.server.bound.wait(timeout), "the entry source did not start"
        self.socket = entry.server.path

    def enter(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Send one entry; return the service's reply."""
        return request(self.socket, obj)

    def stop(self) -> None:
        for service in self.tap.services:
            service.stop()
        self.thread.join(15)

    def join(self, timeout: float = 20.0) -> int | None:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "companion run did not end"
        return self.rc


class RunningPico:
    """The fake Pico (the firmware's encoder app on a pty) stepped every 10 ms of real time by
    its own thread, like the real board counting a shaft; :meth:`turn` turns the shaft."""

    def __init__(self, cpr: int = CPR, index_at: int = 0):
        self.fake = FakePico(cpr=cpr, index_at=index_at)
        self.cpr = cpr
        self._target = 0
        self._speed = 0
        self._done = threading.Event()
        self._done.set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="fake-pico", daemon=True)
        self.thread.start()

    @property
    def port(self) -> str:
        return self.fake.name

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                left = self._target - self.fake.true_count
                self.fake.speed = max(-self._speed, min(self._speed, left)) if left else 0
                if not left:
                    self._done.set()
                self.fake.step()
            time.sleep(self.fake.step_us / 1e6)  # the Pico's own 10 ms period

    def turn(self, degrees_ccw: float, rps: float = 2.0, timeout: float = 10.0) -> None:
        """Turn the shaft by ``degrees_ccw`` (counter-clockwise seen from above, negative =
        clockwise) at ``rps`` turns per second; returns once it rests there."""
        with self._lock:
            self._target = self.fake.true_count + round(degrees_ccw / 360.0 * self.cpr)
            self._speed = max(1, round(rps * self.cpr * self.fake.step_us / 1e6))
            self._done.clear()
        assert self._done.wait(timeout), "the shaft did not get there"

    def unplug(self) -> None:
        """Pull the USB cable: the port vanishes."""
        with self._lock:
            self.fake.unplug()

    def replug(self) -> str:
        """Plug it back in (under a new device name, as the kernel does); returns the name."""
        with self._lock:
            self.fake.replug()
            return self.fake.name

    def close(self) -> None:
        self._stop.set()
        self.thread.join(2)
        self.fake.close()


def write_config(tmp_path: Path, **sections: dict[str, Any]) -> Path:
    """A configuration file for a real-table test: mock pins (``[service] pin_factory =
    "mock"``, which a real table takes only from a test that lends them: the ``mock_factory``
    fixture, or ``tests/mock_pins_main.py`` in a child process), the journal and speech in
    ``tmp_path`` (speech to ALSA's null device), plus ``sections``."""
    import tomllib  # noqa: F401  (the file must parse: checked by companion's loader)

    base: dict[str, dict[str, Any]] = {
        "service": {"pin_factory": "mock", "journal": str(tmp_path / "journal.db")},
        "buttons": {"bounce_s": 0.001},
        "speech": {"cache_dir": str(tmp_path / "speech"), "device": "null"},
        "web": {"enabled": False},  # no page on a fixed port from a test (tests/test_web_* bind their own)
    }
    for name, values in sections.items():
        base.setdefault(name, {}).update(values)
    lines = []
    for name, values in base.items():
        lines.append(f"[{name}]")
        for key, value in values.items():
            lines.append(f"{key} = {_toml(value)}")
        lines.append("")
    path = tmp_path / "config.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _toml(value: Any) -> str:
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value)


__all__ = ["CallTap", "Companion", "RunningPico", "write_config", "socket_path_for", "CPR"]
