"""The entry source: what players tell the companion by hand.

No sensor sees Carrossel's face-down plays, Carnival's hands, or a YES/NO at a table without
buttons. Players (or the table's web page, or ``companion enter``) send those as observations of
the game's own vocabulary, one JSON object per line, to a Unix stream socket beside the journal
(``journal.db`` -> ``journal.sock``, mode 0600: only the service's user may write to it), or on
the service's standard input (``companion run --entries -``). Every entry is stamped with the
session time at which it arrives (a ``t`` in the line is ignored: a client cannot know the
session's clock), handed to the service loop and journaled like any other observation.

Protocol (newline-delimited JSON, one reply line per request line)::

    -> {"type": "play", "player": "Ana", "slot": 9, "animals": ["swan"]}
    <- {"ok": true, "calls": [{"type": "play_received", "t": 12.3, ...}]}
    -> {"type": "roll", "player": "Ana", "dice": [7]}
    <- {"ok": true, "calls": [{"type": "invalid_observation", "reason": "...", ...}]}
    -> {"game": "carnival", "type": "roll", ...}   (the service referees another game)
    <- {"ok": false, "error": "this service referees carrossel, not carnival"}
    -> {"type": "board"}                       (not Carrossel's vocabulary)
    <- {"ok": false, "error": "unknown observation type 'board' for carrossel (expected one of ...)"}
    -> {"control": "status"}
    <- {"ok": true, "status": {"game": "carrossel", "session": 3, "parts": {...}, ...}}
    -> {"control": "new_game", "game": "carnival"}
    <- {"ok": true, "queued": "carnival"}
    -> {"control": "new_game", "game": "carrousel", "players": ["Zoé", "Yann"]}
    <- {"ok": true, "queued": "carrousel"}
    -> {"control": "pause"}                    (or "resume"; the players' pause, companion.pause)
    <- {"ok": true, "calls": [{"type": "paused", "t": 41.2, "by": ""}]}

A refusal by the referee is an ``invalid_observation`` call (journaled, announced): the game goes
on. A malformed line gets ``ok: false`` with one line naming what is wrong; nothing is journaled
for it and nothing already journaled is touched.

A line holds at most :data:`MAX_LINE` bytes (16 KiB, the web page's largest body too): a longer
one is refused as soon as it is that long (``line longer than 16384 bytes: refused unread``),
its bytes dropped up to its newline, and the next line is read. A text value over 40 characters
that a refusal quotes is quoted by its first 40 and its length
(:func:`companion.events.shown`).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import stat
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from companion.clock import Clock
from companion.events import Call, EventError, Observation, SHOWN_CHARS, Vocabulary, shown
from companion.health import PartMissing

__all__ = ["EntryServer", "EntrySource", "request", "socket_path_for", "MAX_LINE"]

log = logging.getLogger("companion.entries")

#: Longest accepted request line, bytes (a Carrossel play is a few hundred): the web page's
#: largest body (``companion.web.app.MAX_BODY``) too. A longer line is refused without being
#: kept: at most this many bytes of one client are held at a time.
MAX_LINE = 16 * 1024

#: Seconds a client waits for the referee's answer before the reply says ``pending``.
REPLY_TIMEOUT_S = 5.0


def socket_path_for(journal_path: str | os.PathLike[str]) -> Path:
    """The entry socket beside a journal: the journal's path with the suffix ``.sock``."""
    return Path(os.path.expanduser(journal_path)).with_suffix(".sock")


def request(path: str | os.PathLike[str], obj: dict[str, Any], timeout_s: float = 10.0) -> dict[str, Any]:
    """Send one request to a running service's entry socket and return its reply.

    Args:
        path: the socket (see :func:`socket_path_for`).
        obj: an observation (``{"type": ...}``) or a control request (``{"control": ...}``).
        timeout_s: seconds to wait for the reply.

    Raises:
        ConnectionError: no service listens there (its message says so, naming the path).
        TimeoutError: the service did not answer in time.
        ValueError: the request is longer than :data:`MAX_LINE` bytes (nothing is sent), or
            the reply is not a JSON object.
    """
    if not timeout_s > 0:
        raise ValueError(f"timeout: expected seconds > 0, got {timeout_s}")
    p = Path(os.path.expanduser(path))
    line = (json.dumps(obj) + "\n").encode("utf-8")
    if len(line) > MAX_LINE + 1:
        raise ValueError(f"the entry is {len(line) - 1} bytes long; the service takes lines of at most {MAX_LINE} "
                         "bytes (a name or value that long is a mistake)")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout_s)
    try:
        import time

        deadline = time.monotonic() + timeout_s
        while True:
            try:
                s.connect(str(p))
                break
            except (FileNotFoundError, ConnectionRefusedError) as exc:
                raise ConnectionError(f"{p}: no companion service is listening ({exc.strerror})") from None
            except (BlockingIOError, socket.timeout):  # the service's queue of clients is full
                if time.monotonic() >= deadline:
                    raise TimeoutError(f"{p}: the service is busy (too many clients); try again") from None
                time.sleep(0.02)
            except OSError as exc:
                raise ConnectionError(f"{p}: cannot reach the service ({exc.strerror or exc})") from None
        s.sendall(line)
        data = b""
        while not data.endswith(b"\n"):
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                again = ("" if "control" in obj else "; the entry may still be judged: check "
                         "`companion enter --status` before sending it again")
                raise TimeoutError(f"{p}: the service did not answer within {timeout_s:g} s{again}") from None
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    try:
        reply = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError(f"{p}: not a JSON reply: {data[:80]!r}") from None
    if not isinstance(reply, dict):
        raise ValueError(f"{p}: expected a JSON object as the reply, got {reply!r:.80}")
    return reply


class _Waiter:
    """One entry waiting for the referee's calls."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.calls: list[Call] = []


class EntryServer:
    """The entry socket (and optionally standard input) of a running service.

    One server lives as long as ``companion run``; each game's service gets an
    :class:`EntrySource` from :meth:`source`, which binds the server to that game's vocabulary
    and the service's clock while it runs. Between games (the service waits for the next one),
    observations are refused with a clear line and ``new_game`` is accepted.

    Args:
        path: the socket file (created; an existing socket file left by a dead service is
            replaced; any other file there is refused).
        stdin: a text stream read line by line (``--entries -``), or None. Replies to lines of
            standard input go to the log (errors as one line on standard error).
        status: ``status() -> dict`` for ``{"control": "status"}``.
        on_new_game: ``on_new_game(game_or_None)`` for ``{"control": "new_game"}``, called
            ``on_new_game(game_or_None, players=[names])`` when the request names the players;
            returns an error line, or None when accepted.

    Raises:
        PartMissing: the socket cannot be created (its folder missing or not writable, a path
            too long for a Unix socket, another file in the way).
    """

    def __init__(self, path: str | os.PathLike[str], stdin: IO[str] | None = None,
                 status: Callable[[], dict[str, Any]] | None = None,
                 on_new_game: Callable[[str | None], str | None] | None = None):
        self.path = Path(os.path.expanduser(path))
        self.stdin = stdin
        self.status = status or (lambda: {})
        self.on_new_game = on_new_game
        self._vocabulary: Vocabulary | None = None
        self._game = ""
        self._emit: Callable[[Observation], None] | None = None
        self._clock: Clock | None = None
        self._lock = threading.Lock()
        self._waiting: dict[int, _Waiter] = {}
        self._sock: socket.socket | None = None
        self._closed = threading.Event()
        #: set while a game's service takes entries (between :meth:`bind` and :meth:`unbind`)
        self.bound = threading.Event()
        self._threads: list[threading.Thread] = []
        self.accepted = 0
        self.refused = 0

    # -- life -------------------------------------------------------------------------------

    def open(self) -> None:
        """Create the socket (mode 0600) and start accepting clients (and reading stdin)."""
        fix = "set [service] journal to a file in a folder you can write (the socket goes beside it)"
        if len(os.fsencode(self.path)) > 100:
            raise PartMissing("entry socket", f"{self.path} is too long for a Unix socket (100 bytes)", fix)
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            raise PartMissing("entry socket", f"{self.path}: {exc.strerror}", fix) from None
        if st is not None:
            if not stat.S_ISSOCK(st.st_mode):
                raise PartMissing("entry socket", f"{self.path} exists and is not a socket", "move that file away")
            if _answers(self.path):
                raise PartMissing("entry socket", f"{self.path}: another companion service is running",
                                  "stop it first (systemctl stop carousel-companion) or use another journal")
            os.unlink(self.path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # the socket is created 0600: only this user may write entries
        try:
            sock.bind(str(self.path))
        except OSError as exc:
            sock.close()
            raise PartMissing("entry socket", f"{self.path}: {exc.strerror}", fix) from None
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)
        sock.listen(64)
        sock.settimeout(0.2)
        self._sock = sock
        self._spawn(self._accept, "entries-accept")
        if self.stdin is not None:
            self._spawn(self._read_stdin, "entries-stdin")
        log.info("entries: %s%s", self.path, " and standard input" if self.stdin is not None else "")

    @property
    def is_open(self) -> bool:
        """True once :meth:`open` has created the socket (until :meth:`close`)."""
        return self._sock is not None and not self._closed.is_set()

    def close(self) -> None:
        """Stop accepting and remove the socket file (only if it was created); safe to call twice."""
        if self._closed.is_set():
            return
        self._closed.set()
        if self._sock is not None:
            self._sock.close()
            try:
                os.unlink(self.path)
            except OSError:
                pass
        for t in self._threads:
            if t is not threading.current_thread() and t.name != "entries-stdin":
                t.join(timeout=1)

    def source(self, game: str, vocabulary: Vocabulary) -> EntrySource:
        """The :class:`~companion.sources.Source` (and service observer) of one game."""
        return EntrySource(self, game, vocabulary)

    # -- binding to a game ---------------------------------------------------------------

    def bind(self, game: str, vocabulary: Vocabulary, emit: Callable[[Observation], None], clock: Clock) -> None:
        """Entries now go to this game's service (called by :meth:`EntrySource.start`)."""
        with self._lock:
            self._game, self._vocabulary, self._emit, self._clock = game, vocabulary, emit, clock
        self.bound.set()

    def unbind(self) -> None:
        """No game is being refereed: observations are refused until the next one."""
        self.bound.clear()
        with self._lock:
            self._vocabulary, self._emit, self._clock = None, None, None
            waiting = list(self._waiting.values())
            self._waiting.clear()
        for w in waiting:
            w.done.set()

    def applied(self, observation: Observation, calls: list[Call]) -> None:
        """Service observer: the referee judged ``observation``; wake its client."""
        with self._lock:
            w = self._waiting.pop(id(observation), None)
        if w is not None:
            w.calls = list(calls)
            w.done.set()

    # -- handling one line ---------------------------------------------------------------

    def handle(self, line: bytes | str, wait: bool = True, bind_wait_s: float = 5.0,
               log_refusal: bool = True) -> dict[str, Any]:
        """Handle one request line; return the reply object (never raises for bad input).

        Args:
            line: one request, without its newline.
            wait: wait for the referee's calls (up to :data:`REPLY_TIMEOUT_S`).
            bind_wait_s: seconds an observation waits for a game's service to take entries
                (a game being started) before it is refused.
            log_refusal: write a refusal to the log (a warning); False when the caller says
                it itself (standard input's ``companion: standard input line N: ...``).
        """
        if len(line) - (line[-1:] in ("\n", b"\n")) > MAX_LINE:  # its newline, when given, not counted
            reply = self._refuse(f"line longer than {MAX_LINE} bytes: refused unread")
        else:
            try:
                reply = self._handle(line, wait, bind_wait_s)
            except Exception as exc:  # whatever a line holds, the service goes on and answers
                log.exception("entry failed")
                reply = self._refuse(f"this line could not be read ({type(exc).__name__}: {str(exc)[:120]})")
        if log_refusal and not reply.get("ok"):
            log.warning("entry refused: %s", reply.get("error"))
        return reply

    def _handle(self, line: bytes | str, wait: bool, bind_wait_s: float) -> dict[str, Any]:
        try:
            text = line.decode("utf-8") if isinstance(line, bytes) else line
            obj = json.loads(text)
        except UnicodeDecodeError:
            return self._refuse("not UTF-8 text")
        except json.JSONDecodeError as exc:
            return self._refuse(f"not JSON: {exc.msg} at column {exc.colno}")
        except (ValueError, RecursionError) as exc:  # an integer of 5000 digits, nesting too deep
            return self._refuse(f"not JSON this service reads: {str(exc)[:120]}")
        if not isinstance(obj, dict):
            return self._refuse(f"expected a JSON object, got {type(obj).__name__}")
        if "control" in obj:
            return self._control(obj)
        if not isinstance(obj.get("type"), str):
            return self._refuse("field 'type': expected the observation type as a string")
        if not isinstance(obj.get("game", ""), str):
            return self._refuse("field 'game': expected a game name")
        if not self.bound.is_set():
            self.bound.wait(bind_wait_s)  # a game's service is being started
        with self._lock:
            vocabulary, emit, clock, game = self._vocabulary, self._emit, self._clock, self._game
        if vocabulary is None or emit is None or clock is None:
            return self._refuse("no game is being refereed now; start one with {\"control\": \"new_game\"}")
        wanted = obj.get("game")
        if wanted is not None:
            if wanted != game:
                return self._refuse(f"this service referees {game}, "
                                    f"not {wanted if len(wanted) <= SHOWN_CHARS else shown(wanted)}")
            cls = vocabulary.observations.get(obj.get("type"))  # type: ignore[arg-type]
            if cls is None or "game" not in getattr(cls, "__dataclass_fields__", {}):
                obj = {k: v for k, v in obj.items() if k != "game"}
        kind = obj.get("type")
        if not isinstance(kind, str) or kind not in vocabulary.observations:
            known = ", ".join(sorted(t for t in vocabulary.observations if t != "tick"))
            return self._refuse(f"unknown observation type {shown(kind)} for {game} (expected one of {known})")
        if kind == "tick":
            return self._refuse("'tick' is the service's own observation, not an entry")
        obj = {**obj, "t": clock.now()}
        try:
            obs = vocabulary.observation(obj)
        except EventError as exc:
            text = str(exc)
            return self._refuse(text if text.startswith(f"{kind}:") else f"{kind}: {text}")
        return self._send(obs, emit, wait)

    def _send(self, obs: Observation, emit: Callable[[Observation], None], wait: bool) -> dict[str, Any]:
        """Hand ``obs`` to the service and wait (``wait``) for the calls it caused."""
        waiter = _Waiter()
        if wait:
            with self._lock:
                self._waiting[id(obs)] = waiter
        self.accepted += 1
        text = json.dumps(obs.to_json(), ensure_ascii=False)
        log.info("entry: %s", text if len(text) <= 1000 else f"{text[:1000]}… ({len(text)} characters)")
        emit(obs)
        if not wait:
            return {"ok": True}
        if not waiter.done.wait(REPLY_TIMEOUT_S):
            with self._lock:
                self._waiting.pop(id(obs), None)
            return {"ok": True, "pending": True, "calls": []}
        return {"ok": True, "calls": [c.to_json() for c in waiter.calls]}

    def _control(self, obj: dict[str, Any]) -> dict[str, Any]:
        what = obj.get("control")
        if what == "status":
            try:
                return {"ok": True, "status": self.status()}
            except Exception as exc:  # a status that fails must not stop the service
                log.exception("status failed")
                return self._refuse(f"status: {exc}")
        if what == "new_game":
            game = obj.get("game")
            if game is not None and not isinstance(game, str):
                return self._refuse("new_game: 'game' must be a game name")
            if self.on_new_game is None:
                return self._refuse("new_game: this service does not take a new game now")
            players = obj.get("players")
            if players is not None and (not isinstance(players, list) or not all(isinstance(p, str) for p in players)):
                return self._refuse("new_game: 'players' must be a list of names")
            error = self.on_new_game(game) if players is None else self.on_new_game(game, players=players)
            if error:
                return self._refuse(f"new_game: {error}")
            return {"ok": True, "queued": game or "the same game"}
        if what in ("pause", "resume"):
            return self._pause(what, obj)
        return self._refuse(f"unknown control {shown(what)} (expected 'status', 'new_game', 'pause' or 'resume')")

    def _pause(self, what: str, obj: dict[str, Any]) -> dict[str, Any]:
        """``{"control": "pause" | "resume", "by": "..."}``: the players' pause
        (:mod:`companion.pause`), an observation of its own stamped and journaled by the service."""
        from companion.pause import Pause, Resume

        by = obj.get("by", "")
        if not isinstance(by, str) or len(by) > 60:
            return self._refuse(f"{what}: 'by' must be a short text (who asks)")
        with self._lock:
            emit, clock = self._emit, self._clock
        if emit is None or clock is None:
            return self._refuse(f"{what}: no game is being refereed now")
        cls = Pause if what == "pause" else Resume
        return self._send(cls(t=clock.now(), by=by), emit, True)

    def _refuse(self, error: str) -> dict[str, Any]:
        self.refused += 1
        return {"ok": False, "error": error}

    # -- threads -----------------------------------------------------------------------------

    def _spawn(self, target: Callable[..., None], name: str, *args: Any) -> None:
        t = threading.Thread(target=target, args=args, name=name, daemon=True)
        t.start()
        self._threads = [x for x in self._threads if x.is_alive()] + [t]

    def _accept(self) -> None:
        assert self._sock is not None
        while not self._closed.is_set():
            try:
                conn, _ = self._sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self._spawn(self._client, "entries-client", conn)

    def _too_long(self, log_refusal: bool = True) -> dict[str, Any]:
        reply = self._refuse(f"line longer than {MAX_LINE} bytes: refused unread")
        if log_refusal:
            log.warning("entry refused: %s", reply["error"])
        return reply

    def _client(self, conn: socket.socket) -> None:
        """One client's lines, each answered by one reply line. At most :data:`MAX_LINE` bytes
        of a line are held: a longer one is refused as soon as it is that long (one reply),
        and its bytes up to its newline are dropped as they come."""
        conn.settimeout(60.0)
        buf = b""
        skipping = False  # inside a line already refused as too long
        try:
            while not self._closed.is_set():
                try:
                    chunk = conn.recv(65536)
                except socket.timeout:
                    return
                if not chunk:
                    return
                buf += chunk
                while (end := buf.find(b"\n")) >= 0:
                    line, buf = buf[:end], buf[end + 1:]
                    if skipping:
                        skipping = False
                    elif line.strip():
                        # ASCII escapes: a lone surrogate echoed in an error still encodes
                        conn.sendall((json.dumps(self.handle(line)) + "\n").encode("utf-8"))
                if skipping:
                    buf = b""
                elif len(buf) > MAX_LINE:
                    conn.sendall((json.dumps(self._too_long()) + "\n").encode("utf-8"))
                    buf, skipping = b"", True
        except OSError:
            return  # the client went away
        finally:
            conn.close()

    def _lines(self) -> Any:
        """Standard input's lines, numbered from 1, each at most :data:`MAX_LINE` characters
        read at a time: ``(n, line)``, ``line`` None for a longer line (dropped as it is read)."""
        assert self.stdin is not None
        n = 0
        while True:
            line = self.stdin.readline(MAX_LINE + 1)
            if not line:
                return
            n += 1
            whole = line.endswith("\n")
            if not whole and len(line) > MAX_LINE:  # the rest of the line, dropped
                while line and not line.endswith("\n"):
                    line = self.stdin.readline(MAX_LINE + 1)
                yield n, None
            elif len(line.removesuffix("\n").encode("utf-8", "surrogatepass")) > MAX_LINE:
                yield n, None
            else:
                yield n, line

    def _read_stdin(self) -> None:
        assert self.stdin is not None
        for n, line in self._lines():
            if self._closed.is_set():
                return
            if line is not None and not line.strip():
                continue
            while not self.bound.wait(1.0):  # lines wait for the game (piped in before it starts)
                if self._closed.is_set():
                    return
            # the one line said here is the refusal's only report (not a log warning too)
            reply = self._too_long(log_refusal=False) if line is None else self.handle(line, wait=False,
                                                                                       log_refusal=False)
            if not reply.get("ok"):
                error = reply["error"]
                if error.startswith("not JSON:"):  # e.g. companion enter's form, "claim player=Cleo"
                    error += ' (one JSON object a line, e.g. {"type": "claim", "player": "Cleo"})'
                print(f"companion: standard input line {n}: {error}", file=sys.stderr, flush=True)


class EntrySource:
    """One game's view of the :class:`EntryServer`: a Source and a service observer."""

    def __init__(self, server: EntryServer, game: str, vocabulary: Vocabulary):
        self.server = server
        self.game = game
        self.vocabulary = vocabulary

    def start(self, emit: Callable[[Observation], None], clock: Clock) -> None:
        """Entries now go to ``emit``, stamped by ``clock``."""
        self.server.bind(self.game, self.vocabulary, emit, clock)

    def stop(self) -> None:
        """Entries are refused until the next game's source starts; safe to call twice."""
        self.server.unbind()

    def applied(self, observation: Observation, calls: list[Call]) -> None:
        """Forwarded to the server (the service's observer hook)."""
        self.server.applied(observation, calls)


def _answers(path: Path) -> bool:
    """True when a service accepts connections on the socket ``path``."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(0.5)
    try:
        s.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        s.close()
