"""The game page in a real browser (Debian's headless Chromium, driven by Playwright) on
`companion run --table sim --next-game wait`: it refuses players the game does not take (in
words), starts the next game with the players chosen, pauses it (Carrousel's dead-end countdown
stands still while paused, every page says so, and no dead end is called however long the pause),
resumes it, and starts a new game. The session clock is injected (StepClock): the test says when
time passes; nothing sleeps to wait for time."""

from __future__ import annotations

import re
import threading

from tests.real_table import CallTap
from tests.web_page import WebTap, shot, web_config


class StepClock:
    """Session time that moves only when the test calls :meth:`advance` (real seconds passing).

    ``wait(event, until)`` returns when the event is set, or once the time the test allowed
    reaches ``until`` (the clock then reads ``until``, like PacedClock). ``hold``/``release`` as
    the service's clocks: while held, time the test lets pass does not move the session clock.
    ``speed`` is tiny so that the page does not run the countdown ahead between events.
    """

    speed = 1e-6

    def __init__(self, origin: float = 0.0, *_: object):
        self._t = origin
        self._limit = origin
        self.held = False
        self._moved = threading.Condition()

    def now(self) -> float:
        return self._t

    def advance(self, seconds: float) -> None:
        with self._moved:
            if not self.held:
                self._limit += seconds
            self._moved.notify_all()

    def hold(self) -> None:
        self.held = True

    def release(self) -> None:
        self.held = False

    def wait(self, event: threading.Event, until: float | None) -> bool:
        while True:
            if event.is_set():
                self._t = max(self._t, min(self._limit, until if until is not None else self._limit))
                return True
            if not self.held and until is not None and until <= self._limit:
                self._t = max(self._t, until)
                return False
            with self._moved:
                self._moved.wait(0.005)  # the event is set from another thread: look again soon


def _run(argv, rc):
    from companion.cli import main

    rc.append(main(argv))


def _advance_until(clock, tap, seconds, step=1.0):
    """Let ``seconds`` of real time pass, a step at a time."""
    for _ in range(int(seconds / step)):
        clock.advance(step)


def test_the_game_page_chooses_players_starts_pauses_resumes_and_starts_a_new_game(tmp_path, monkeypatch,
                                                                                    mock_factory, browser):
    import companion.clock

    clocks: list[StepClock] = []

    def make(origin=0.0, speed=1.0):
        clocks.append(StepClock(origin))
        return clocks[-1]

    monkeypatch.setattr(companion.clock, "PacedClock", make)
    config = web_config(tmp_path, sim={"move_time_s": 1.0}, carrousel={"dead_end_s": 20.0})
    tap, web = CallTap(monkeypatch), WebTap(monkeypatch)
    rc: list[int] = []
    thread = threading.Thread(target=_run, args=(["run", "--config", str(config), "--table", "sim", "--seed", "5",
                                                  "--new", "--quiet-moves", "--next-game", "wait"], rc), daemon=True)
    thread.start()
    game = browser.new_page(viewport={"width": 1000, "height": 1100})
    table = browser.new_page(viewport={"width": 1000, "height": 900})
    try:
        url = web.url()
        game.goto(url + "game")
        game.wait_for_selector("#conn:text('live')", timeout=30_000)
        game.wait_for_selector("#now[data-state='being played']", timeout=30_000)
        reply = game.locator("#reply")

        def start(game_name, players):
            n = int(reply.get_attribute("data-n") or 0)
            game.select_option("#game", game_name)
            inputs = game.locator("#names input:not([hidden])")
            for i in range(inputs.count()):
                inputs.nth(i).fill(players[i] if i < len(players) else "")
            game.click("#start")
            game.wait_for_selector(f"#reply[data-n='{n + 1}']", timeout=30_000)
            return reply.inner_text()

        # Refusals in words: one player for Carrousel; a game while one is being played.
        assert "carrousel takes 2 to 4 players" in start("carrousel", ["Solo"])
        assert "refused" in reply.get_attribute("class")
        assert "a game is being played; it must end first" in start("carrousel", ["Zoé", "Yann", "Xavi"])
        # The first game (the configuration's players) is played to its end.
        clocks[0].advance(2000.0)
        tap.next("winner", timeout=30)
        game.wait_for_selector("#now[data-state='over']", timeout=30_000)

        # The players chosen on the page start the next game.
        assert "Carrousel starts with Zoé, Yann, Xavi" in start("carrousel", ["Zoé", "Yann", "Xavi"])
        tap.next("game_started", timeout=30)
        assert len(clocks) == 2 and tap.services[-1].players == ["Zoé", "Yann", "Xavi"]
        game.wait_for_function("document.getElementById('players').textContent.includes('Zoé, Yann, Xavi')",
                               timeout=30_000)
        clock = clocks[1]
        table.goto(url)
        table.wait_for_selector("#conn:text('live')", timeout=30_000)
        _advance_until(clock, tap, 6.0)
        table.wait_for_function("Companion.state && Companion.state.t >= 5", timeout=30_000)
        table.wait_for_function("/^\\d+ s$/.test(document.getElementById('countdown').textContent)", timeout=30_000)

        # Pause: the countdown stands still, every page says so, and no dead end comes.
        game.click("#pause-button")
        tap.next("paused", timeout=30)
        game.wait_for_selector("#pause-reply:has-text('The game is paused')", timeout=30_000)
        table.wait_for_selector("#paused:not([hidden])", timeout=30_000)
        game.wait_for_selector("#paused:not([hidden])", timeout=30_000)
        game.wait_for_selector("#now[data-state='paused']", timeout=30_000)
        held_at = clock.now()
        countdown = table.inner_text("#countdown")
        left = int(countdown.split()[0])
        assert 0 < left <= 20
        seen = len(tap.calls)
        _advance_until(clock, tap, 60.0)  # a minute of real time: three dead ends' worth
        assert clock.now() == held_at
        # The page's own clock goes on: once more than a second of it has passed, the countdown
        # redrawn (tick(), as its 250 ms timer does) must not have moved.
        since = table.evaluate("performance.now()")
        table.wait_for_function(f"performance.now() - {since} > 1100", timeout=30_000)
        table.evaluate("tick()")
        assert table.inner_text("#countdown") == countdown
        assert [c.TYPE for c in tap.calls[seen:]] == []
        shot(game, "web-game")  # build/screenshots/web-game.png; docs/images/ holds a copy made by hand

        # Resume: the game goes on from where it stood, with the seconds the countdown had left.
        game.click("#pause-button")
        tap.next("resumed", timeout=30)
        table.wait_for_selector("#paused[hidden]", state="attached", timeout=30_000)
        game.wait_for_selector("#pause-button:text('Pause')", timeout=30_000)
        _advance_until(clock, tap, float(left) + 1.0)
        table.wait_for_function(f"Companion.state.t > {held_at}", timeout=30_000)  # time goes on again
        deadline_calls = [c for c in tap.calls[seen:] if c.TYPE == "dead_end"]
        if deadline_calls:  # no point scored meanwhile: the dead end came once the seconds left had passed
            assert deadline_calls[0].t >= held_at + left - 1

        # A new game once this one is over: Monsieur Carrousel for one player (its own limits).
        clock.advance(2000.0)
        tap.next("winner", timeout=30)
        game.wait_for_selector("#now[data-state='over']", timeout=30_000)
        assert "Monsieur Carrousel starts with Lu" in start("monsieur-carrousel", ["Lu"])
        tap.next("game_started", timeout=30)
        game.wait_for_selector("#now:has-text('Monsieur Carrousel')", timeout=30_000)
        assert re.search(r"players: Lu$", game.inner_text("#players"))
    finally:
        game.close()
        table.close()
        for service in tap.services:
            service.stop()
        for c in clocks:
            c.advance(0)
        thread.join(15)
    assert rc == [0]
