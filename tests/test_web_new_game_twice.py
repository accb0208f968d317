"""Two "new game" requests after a game over (a double tap, two pages): the first is taken, the
second refused in words, and no game starts by itself after the next one ends."""

from __future__ import annotations

import threading

from companion.commands.run import _NextGame


class Table:
    """The run loop's side of :class:`_NextGame`, driven by hand: ``over`` and the games started."""

    def __init__(self):
        self.over = True
        self.nxt = _NextGame(lambda: self.over, lambda: "carrossel")

    def wait_consumes_the_request(self):
        """What ``_wait_next_game`` does once the event is set: clear it, start the next game."""
        assert self.nxt.event.is_set()
        self.nxt.event.clear()
        self.nxt.waiting = False

    def next_game_starts(self):
        self.over = False
        self.nxt.started()


def test_the_second_new_game_50_ms_later_is_refused_and_never_starts_by_itself():
    table = Table()
    assert table.nxt.request(None) is None
    assert table.nxt.request(None) == "a new game is already starting"  # before the service woke up
    table.wait_consumes_the_request()
    # The event is cleared, the old game is still the current one (over): still refused.
    assert table.nxt.request("carrossel") == "a new game is already starting"
    table.next_game_starts()
    assert table.nxt.request(None) == "a game is being played; it must end first (or stop the service)"
    assert not table.nxt.event.is_set()  # nothing queued: the game after this one waits for its own request
    table.over = True  # that game ends
    assert not table.nxt.event.is_set()
    assert table.nxt.request(None) is None  # a request for the next one is taken again


def test_two_requests_at_once_one_is_taken():
    for _ in range(50):
        table = Table()
        barrier = threading.Barrier(2)
        replies = []

        def ask(table=table, barrier=barrier, replies=replies):
            barrier.wait()
            replies.append(table.nxt.request(None))

        threads = [threading.Thread(target=ask) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(5)
        assert sorted(replies, key=str) == [None, "a new game is already starting"]


def test_the_entry_socket_says_the_refusal(tmp_path):
    from companion.sources.entries import EntryServer

    table = Table()
    server = EntryServer(tmp_path / "j.sock")
    server.on_new_game = table.nxt.request
    assert server.handle('{"control": "new_game"}')["ok"] is True
    assert server.handle('{"control": "new_game"}') == {"ok": False,
                                                        "error": "new_game: a new game is already starting"}
