"""The hub between the service loop and the browsers: the latest state and the live stream.

The service loop publishes (through :class:`~companion.web.announcer.WebAnnouncer`) on its own
thread; each browser's server-sent event stream reads from its own bounded asyncio queue on the
web server's event loop. :meth:`Hub.publish` encodes the event once (its JSON and its
server-sent-event frame, whatever the number of browsers) and schedules one hand-off on that
loop for every stream at once (one ``loop.call_soon_threadsafe``): it never waits for a browser. A browser too slow to keep up
(its queue of :data:`CLIENT_QUEUE` events is full) is disconnected; its ``EventSource``
reconnects by itself and starts again from the hub's state and recent calls.
"""

from __future__ import annotations

import asyncio
import collections
import json
import threading
import time
from typing import Any

__all__ = ["Hub", "Subscriber", "CLIENT_QUEUE", "MAX_CLIENTS", "HISTORY"]

#: Events one browser may have waiting before it is disconnected as too slow.
CLIENT_QUEUE = 256
#: Browsers streaming at once; one more gets HTTP 503 (the page says so and retries).
MAX_CLIENTS = 100
#: Calls kept for a page that connects (or reconnects) mid-game.
HISTORY = 40

_CLOSE = object()


class Subscriber:
    """One browser's stream: a bounded queue of encoded events on the web server's loop.

    Args:
        loop: the asyncio loop the stream runs on.
        size: queue length (events) before the browser is dropped as too slow.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, size: int = CLIENT_QUEUE):
        self.loop = loop
        self.queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=size)
        self.dropped = False

    def offer(self, item: Any) -> None:
        """Any thread: schedule ``item`` on the stream's loop; never blocks."""
        try:
            self.loop.call_soon_threadsafe(self._put, item)
        except RuntimeError:  # the loop is closed: the server is stopping
            self.dropped = True

    def _put(self, item: Any) -> None:
        if self.dropped:
            return
        try:
            self.queue.put_nowait(item)
        except asyncio.QueueFull:
            self.dropped = True  # too slow: end its stream, it reconnects and catches up
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(_CLOSE)

    async def next(self) -> Any:
        """The next event (the encoded server-sent-event frame, bytes, as :meth:`Hub.publish`
        hands it), or None when the stream must end."""
        item = await self.queue.get()
        if item is _CLOSE:
            return None
        return item

    async def next_batch(self) -> bytes | None:
        """Every event waiting now, at least one (their frames joined: one write to the browser
        for a burst of calls, such as a move and the claim judged after it), or None when the
        stream must end."""
        first = await self.next()
        if first is None:
            return None
        frames = [first]
        while not self.queue.empty():
            item = self.queue.get_nowait()
            if item is _CLOSE:
                self.queue.put_nowait(_CLOSE)  # the stream ends after these
                break
            frames.append(item)
        return frames[0] if len(frames) == 1 else b"".join(frames)


def _deliver(streams: list[Subscriber], frame: bytes) -> None:
    """On the server's loop: one event to every stream (a full one is dropped as too slow)."""
    for s in streams:
        s._put(frame)


class Hub:
    """What the pages show, shared by the service loop (publisher) and the web server.

    Attributes:
        state: the latest ``{"game", "players", "session", "summary", "t", "deadline",
            "speed", "over", "table", "paused"}`` (``t`` and ``deadline`` in session seconds;
            ``deadline`` is the referee's next timed rule, e.g. Carrousel's dead end, or None;
            ``paused``: the players paused the game, its session clock stands at ``t``).
        history: the last :data:`HISTORY` call events (dicts, oldest first).
        published: events published so far.
        language: the language of the sentences the page shows (``en``, ``fr``, ``pt-BR``).
        chosen_language: the language chosen on the game page (kept by the game's journal
            session as ``page_language``, so that a restart shows the page in it), or None.
        on_language: ``on_language(language)``, called when the game page chooses a language
            (the running game's :class:`~companion.web.announcer.WebAnnouncer` keeps it in the
            journal); None without a game.
        camera: ``camera() -> (jpeg bytes, overlay dict) | None``: the latest frame with the
            reader's overlay, set by a table with a camera; None when the table has none.
    """

    def __init__(self, language: str = "en"):
        self._lock = threading.Lock()
        self._subscribers: set[Subscriber] = set()
        self.state: dict[str, Any] = {"game": None, "players": [], "summary": {}, "t": 0.0, "deadline": None,
                                      "speed": 1.0, "over": False, "session": None, "table": None,
                                      "paused": False}
        self.history: collections.deque[dict[str, Any]] = collections.deque(maxlen=HISTORY)
        self.published = 0
        self.language = language
        self.chosen_language: str | None = None
        self.on_language: Any = None
        self.camera: Any = None
        self.closed = False

    # -- publishing (any thread, never blocks) ----------------------------------------------

    def publish(self, event: str, data: dict[str, Any], state: dict[str, Any] | None = None) -> None:
        """Send ``data`` as the server-sent event ``event`` to every browser.

        Args:
            event: ``"call"`` (kept in :attr:`history`), ``"game"`` (a new game's service)
                or ``"state"``.
            data: a JSON-serialisable dict; ``seq`` (a running number) and ``sent`` (the
                server's wall clock, ms, for latency figures) are added.
            state: fields that update :attr:`state` first (``summary``, ``t``, ...).
        """
        with self._lock:
            if state:
                self.state.update(state)
            self.published += 1
            data = {**data, "seq": self.published, "sent_ms": time.time() * 1000.0, "state": dict(self.state)}
            if event == "call":
                self.history.append(data)
            if event == "game":
                self.history.clear()
            subscribers = list(self._subscribers)
        text = json.dumps(data, ensure_ascii=False, default=str)  # once, whatever the number of browsers
        # The frame too (JSON has no line break: one data line): no per-browser encoding.
        frame = f"event: {event}\r\ndata: {text}\r\n\r\n".encode("utf-8")
        by_loop: dict[asyncio.AbstractEventLoop, list[Subscriber]] = {}
        for s in subscribers:
            by_loop.setdefault(s.loop, []).append(s)
        for loop, streams in by_loop.items():  # one wake-up of the server's loop, not one per browser
            try:
                loop.call_soon_threadsafe(_deliver, streams, frame)
            except RuntimeError:  # the loop is closed: the server is stopping
                for s in streams:
                    s.dropped = True

    # -- the web server's side ----------------------------------------------------------------

    def subscribe(self, loop: asyncio.AbstractEventLoop) -> Subscriber | None:
        """A new stream on ``loop``, or None when :data:`MAX_CLIENTS` are already streaming."""
        with self._lock:
            if self.closed or len(self._subscribers) >= MAX_CLIENTS:
                return None
            s = Subscriber(loop)
            self._subscribers.add(s)
            return s

    def unsubscribe(self, s: Subscriber) -> None:
        """Forget a stream (its browser went away); safe to call twice."""
        with self._lock:
            self._subscribers.discard(s)

    def hello(self) -> dict[str, Any]:
        """What a page gets first on connecting: the state and the recent calls."""
        with self._lock:
            history = [{k: v for k, v in e.items() if k != "state"} for e in self.history]
            return {"state": dict(self.state), "history": history, "language": self.language,
                    "camera": self.camera is not None}

    @property
    def clients(self) -> int:
        """Browsers streaming now."""
        with self._lock:
            return len(self._subscribers)

    def close(self) -> None:
        """End every stream (the server is stopping)."""
        with self._lock:
            self.closed = True
            subscribers = list(self._subscribers)
            self._subscribers.clear()
        for s in subscribers:
            s.offer(_CLOSE)
