"""The service loop: sources -> referee -> announcers, with every message journaled.

One thread runs the loop. Sources (buttons, readers, the simulated table) call :meth:`emit`
from any thread; the loop wakes, applies each observation to the referee in time order,
journals the observation with its calls in one transaction, then hands the calls to every
announcer. Between
observations it sleeps on the :class:`~companion.clock.Clock` until the next deadline: the
referee's (Carrousel's dead end, via ``next_deadline``) or a scheduled source's (the simulated
table's next action, via ``next_time``/``advance``). At a referee deadline it applies a
``tick`` so the call is made on time. No polling: nothing runs between events.

With :class:`~companion.clock.ManualClock` the loop never blocks and a whole game runs in
milliseconds, deterministically: that is how the tests drive it.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import logging
import sqlite3
import threading
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from companion.announcers import Announcer
from companion.clock import Clock
from companion.events import Call, Observation, Tick
from companion.games import Referee
from companion.journal import Journal
from companion.sources import Source

__all__ = ["Service", "ScheduledSource", "restore", "restore_paused", "Opened", "open_session", "unfinished_game",
           "resume_damage"]

log = logging.getLogger("companion.service")


class ScheduledSource(Protocol):
    """A source that acts at times it chooses (the simulated table)."""

    def next_time(self) -> float | None:
        """Session time (s) of its next action, or None."""

    def advance(self, t: float) -> None:
        """Perform every action due at or before ``t`` (s), emitting observations."""


def restore(referee: Referee, journal: Journal, session: int) -> tuple[Any, float, int]:
    """Rebuild a session's state by re-applying its journaled observations.

    Returns:
        ``(state, last_t, n)``: the state, the time (s) of the last observation, and how many
        observations were re-applied.
    """
    state, last_t, n, _ = restore_paused(referee, journal, session)
    return state, last_t, n


def restore_paused(referee: Referee, journal: Journal, session: int) -> tuple[Any, float, int, bool]:
    """:func:`restore`, and whether the players' pause was on when the session stopped.

    The journaled ``pause`` and ``resume`` (:mod:`companion.pause`) are the service's, not the
    referee's: they are not re-applied, only followed (the last one says whether the game waits).

    Returns:
        ``(state, last_t, n, paused)``; ``n`` counts the observations re-applied to the referee.
    """
    state, last_t, n, paused, _ = _replay(referee, journal, session)
    return state, last_t, n, paused


def _replay(referee: Referee, journal: Journal, session: int) -> tuple[Any, float, int, bool, tuple[Call, ...]]:
    """:func:`restore_paused`, and what the game last asked the table for, to be said again on
    resume: the last call whose type is in the referee's ``prompts`` (the turn, the seat to
    fill, the board to turn) among the calls of the newest step that made any call; nothing
    when that step made calls but no prompt (the game has gone on since its last question: a
    Carnival turn half played), so a stale question is never said again (a tuple of at most
    one call). A refused observation (its step leaves the state as it was: an entry the rules
    did not take) keeps the question before it: the game still waits for the same thing."""
    from companion.pause import Pause, is_pause_or_resume

    prompts = getattr(referee, "prompts", frozenset())
    state = referee.initial_state()
    last_t = 0.0
    n = 0
    paused = False
    asked: tuple[Call, ...] = ()
    for entry in journal.entries(session):
        if entry.kind != "observation":
            continue
        obs = journal.observation(entry, referee.vocabulary)
        last_t = max(last_t, obs.t)
        if is_pause_or_resume(obs):
            paused = isinstance(obs, Pause)
            continue
        before = state
        state, calls = referee.apply(state, obs)
        n += 1
        if calls:
            asking = [c for c in calls if c.TYPE in prompts]
            if asking:
                asked = (asking[-1],)
            elif state is not before and state != before:  # the game went on: its question is stale
                asked = ()
    return state, last_t, n, paused, asked


@dataclasses.dataclass(frozen=True)
class Opened:
    """A session ready to run: a new one, or the journal's unfinished one restored.

    Attributes:
        session: the journal session id.
        resumed: True when an unfinished game was restored.
        state: the restored state (None for a new game).
        last_t: time (s) of the last restored observation (0 for a new game).
        n: how many observations were re-applied.
        table: the table's settings (players, seed...): the journal's when resumed.
        paused: the restored game was paused by the players when the service stopped (it
            starts paused: :class:`Service` ``paused_at``).
        pending: the observations journaled on arrival but not applied when the service
            stopped (the jitter buffer's content, oldest first): the service applies them first
            when it runs (:meth:`Service.run`); see :meth:`table_state`.
        asked: what the restored game last asked the table for (the last call of a type in
            its referee's ``prompts`` in the newest step that made calls, or nothing), said
            again when the service runs
            (:class:`Service` ``restate``): after a power blip the table hears whose turn it
            is, not silence.
    """

    session: int
    resumed: bool
    state: Any
    last_t: float
    n: int
    table: dict[str, Any]
    paused: bool = False
    pending: tuple[Any, ...] = ()
    asked: tuple[Call, ...] = ()

    @property
    def origin(self) -> float:
        """Session time (s) to start the clock at: just after the last restored observation;
        a game the players had paused starts again at the moment it was paused (session time
        stood still during the pause, and it stands still until they resume)."""
        if not self.resumed:
            return 0.0
        return round(self.last_t, 3) if self.paused else round(self.last_t + 0.5, 3)

    def table_state(self, referee: Referee) -> Any:
        """The state the table is in once the :attr:`pending` observations are applied (in
        time order, as the jitter buffer releases them): what a simulated table resumes from,
        so that it does not show the horses or cards of before them. Pure (the referee's
        ``apply``); the restored :attr:`state` when nothing is pending."""
        from companion.pause import is_pause_or_resume

        state = self.state
        for obs in sorted(self.pending, key=lambda o: o.t):
            if state is not None and not is_pause_or_resume(obs):
                state, _ = referee.apply(state, obs)
        return state


def unfinished_game(journal: Journal) -> Any:
    """The unfinished game a ``companion run`` without ``--game`` resumes: the journal's newest
    unfinished session that holds at least one entry, of a game this version knows (an empty
    session, left by a start refused before anything was observed, is never resumed).

    Returns:
        The :class:`~companion.journal.Session`, or None when every game is finished.

    Raises:
        companion.journal.JournalError: the sessions table is damaged.
    """
    from companion.games import GAMES

    for session in reversed(journal.sessions()):
        if session.finished or session.game not in GAMES:
            continue
        if next(journal.entries(session.id), None) is not None:
            return session
    return None


def resume_damage(journal: Journal, session: int) -> str:
    """Why an unfinished ``session`` cannot be resumed exactly, or ``""`` when it can: the first
    loss or damage of the journal touching it (:meth:`~companion.journal.Journal.losses`, see
    :mod:`companion.journal_check`) and how many more there are, e.g. ``"1 entry lost (5 to 5,
    session 1) between entries 4 and 6 (and 1 more problem)"``.

    The one check both :func:`open_session` (which refuses to resume then) and ``companion
    status`` (which says so) make. Reads the whole journal; works on a read-only one.
    """
    losses = journal.losses(session)
    if not losses:
        return ""
    more = len(losses) - 1
    return losses[0] + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else "")


def open_session(referee: Referee, journal: Journal, options: dict[str, Any], table: dict[str, Any],
                 new: bool = False) -> Opened:
    """Resume the journal's unfinished game of ``referee.name`` (unless ``new``), or start a
    session with the referee ``options`` and the ``table`` settings (journaled, so that a
    restart resumes the same table).

    Raises:
        companion.journal.JournalError: a journaled entry that no longer parses, or entries of
            the unfinished game are lost or damaged (it cannot be resumed exactly).
    """
    # A start that stopped before anything was observed (a part was missing) leaves an empty
    # session: it is never resumed (an older unfinished game is) and the next new game reuses it.
    empty = None
    for unfinished in reversed(journal.sessions()):
        if unfinished.game != referee.name or unfinished.finished:
            continue
        if next(journal.entries(unfinished.id), None) is None:
            empty = empty or unfinished
            continue
        if new:
            break
        damage = resume_damage(journal, unfinished.id)
        if damage:
            from companion.journal import JournalError

            raise JournalError(f"{journal.path}: the unfinished {referee.name} game (session {unfinished.id}) "
                               f"cannot be resumed exactly: {damage}; "
                               "`companion run --new` starts a new game, `companion journal check` shows the rest")
        state, last_t, n, paused, asked = _replay(referee, journal, unfinished.id)
        pending = tuple(journal.observation(e, referee.vocabulary) for e in journal.pending(unfinished.id))
        return Opened(unfinished.id, True, state, last_t, n, {**table, **unfinished.table}, paused, pending,
                      () if referee.is_over(state) else asked)
    if empty is not None:
        journal.set_table(empty.id, table)
        return Opened(empty.id, False, None, 0.0, 0, dict(table))
    # The session row and its table settings in one transaction: a restart never finds one
    # without the other.
    session = journal.start_session(referee.name, options, table)
    return Opened(session, False, None, 0.0, 0, dict(table))


class Service:
    """The referee service loop.

    Args:
        referee: the game's rules engine.
        clock: session time; :class:`~companion.clock.MonotonicClock` in service,
            :class:`~companion.clock.ManualClock` in tests.
        journal: where observations and calls are appended (None: not journaled).
        session: the journal session id (required with a journal).
        sources: started with :meth:`emit` and the clock; stopped at the end.
        scheduled: sources whose actions the loop times (``next_time``/``advance``).
        announcers: told every call, in order, on the loop's thread.
        state: the starting state (a restored one when resuming), default a new game.
        last_t: time (s) of the last observation already applied (resuming).
        delay_s: a jitter buffer, seconds: every observation (and every deadline's tick) is
            applied this long after the time it carries, all in time order. With a camera,
            whose board is known only once it has been stable for its settle time, a claim
            pressed just after a move is then judged on the board as it stood at the press,
            not on the reading before. 0 (no camera): applied at once.
        observers: told ``applied(observation, calls)`` after each observation is journaled
            (the entry source answers its client with the calls); the observation is the one
            that was emitted, even when its time was moved up to keep time order. An observer
            with an ``arrived(observation)`` method is also told each observation when the loop
            takes it in (and a resumed game's pending ones), before the jitter buffer delays it
            (the Carrossel camera's watch: a play on its way is not read and sent again).
        paused: ``paused() -> bool``; while True the referee's deadlines are withheld (a part
            of the table is lost: no dead end is called while the camera is away).
        paused_at: the players paused the game (a restored game that was paused): the
            session time (s) it waits at, or None. See :meth:`emit` and :mod:`companion.pause`.
        heartbeat: called on the loop's thread at least every ``heartbeat_s`` seconds of real
            time (the systemd watchdog), or None.
        heartbeat_s: real seconds between heartbeats.
        restate: calls of a resumed game to announce again when the loop starts, before
            anything new (:attr:`Opened.asked`), then ``paused`` when it restarts paused; they
            are not journaled again.
    """

    def __init__(
        self,
        referee: Referee,
        clock: Clock,
        journal: Journal | None = None,
        session: int | None = None,
        sources: Sequence[Source] = (),
        scheduled: Sequence[ScheduledSource] = (),
        announcers: Sequence[Announcer] = (),
        state: Any = None,
        last_t: float = 0.0,
        delay_s: float = 0.0,
        observers: Sequence[Any] = (),
        paused: Any = None,
        paused_at: float | None = None,
        heartbeat: Any = None,
        heartbeat_s: float = 5.0,
        restate: Sequence[Call] = (),
    ):
        if journal is not None and session is None:
            raise ValueError("a journal needs a session id")
        self.referee = referee
        self.clock = clock
        self.journal = journal
        self.session = session
        self.sources = list(sources)
        self.scheduled = list(scheduled)
        self.announcers = list(announcers)
        self.state = referee.initial_state() if state is None else state
        self.last_t = last_t
        self.calls_made = 0
        self.delay_s = delay_s
        self._buffer: list[tuple[float, int, Observation, int | None]] = []
        self._journal_lost = False
        self._pending_resumed = False
        self._restate = list(restate)
        if paused_at is not None:  # a game restored paused says so
            from companion.pause import Paused

            self._restate.append(Paused(t=paused_at))
        self._buffer_seq = itertools.count()
        self._ticked: float | None = None
        self.observers = list(observers)
        self.paused = paused
        self.paused_at: float | None = None
        self._paused_real: float | None = None
        if paused_at is not None:
            self._hold(paused_at)
            self._paused_real = None  # how long it waited before the restart is not known
        self.heartbeat = heartbeat
        self.heartbeat_s = heartbeat_s
        self._inbox: deque[Observation] = deque()
        self._told: deque[Call] = deque()
        self._notes: deque[dict[str, Any]] = deque()
        self._wake = threading.Event()
        self._stop = threading.Event()
        #: One line when a scheduled (simulated) source failed and the loop stopped, else None.
        self.failure: str | None = None

    # -- inputs ---------------------------------------------------------------------------

    def emit(self, observation: Observation) -> None:
        """Hand an observation to the loop (any thread; never blocks).

        A :class:`~companion.pause.Pause` holds the session clock once the loop takes it (it
        skips the jitter buffer): the referee's deadlines and the scheduled sources (the
        simulated players) wait; a :class:`~companion.pause.Resume` lets it go on. Both are
        journaled, never handed to the referee, and answered with a ``paused`` / ``resumed``
        call (an ``invalid_observation`` to the observers alone when already in that state)."""
        self._inbox.append(observation)
        self._wake.set()

    def note_table(self, settings: dict[str, Any]) -> None:
        """Merge ``settings`` (JSON-able) into the session's table settings in the journal, so
        that a restart finds them (``Opened.table``): what a part learnt that the observations do
        not hold, such as the Carrossel camera's angle of the board at setup. Any thread; never
        blocks; written on the loop's thread. Without a journal it does nothing."""
        self._notes.append(dict(settings))
        self._wake.set()

    def _write_notes(self) -> None:
        from companion.journal import JournalError

        while self._notes:
            note = self._notes.popleft()
            if self.journal is None:
                continue
            try:
                table = dict(self.journal.session(self.session).table)  # type: ignore[arg-type]
                table.update(note)
                self.journal.set_table(self.session, table)  # type: ignore[arg-type]
            except (JournalError, sqlite3.Error) as exc:
                log.warning("journal: cannot keep the table's settings %s (%s); a restart will not know them",
                            note, exc)

    def tell(self, call: Call) -> None:
        """Announce a call of the service itself (a part lost or back, the journal's disk
        full) on the loop's thread (any thread; never blocks). It does not go through the
        referee and is not journaled."""
        self._told.append(call)
        self._wake.set()

    def stop(self) -> None:
        """Ask the loop to finish after the observation it is applying (any thread)."""
        self._stop.set()
        self._wake.set()

    # -- the loop ---------------------------------------------------------------------------

    def run(self, until: float | None = None, stop_when_over: bool = True) -> Any:
        """Run until the game is over (or :meth:`stop`, or session time ``until``, seconds).

        Returns:
            The final state.
        """
        self._say_again()
        self._resume_pending()
        for source in self.sources:
            source.start(self.emit, self.clock)
        log.info("ready: refereeing %s", self.referee.name)
        try:
            while not self._stop.is_set():
                if self._notes:
                    self._write_notes()
                if self._told:
                    self._announce_told()
                    continue
                if self._inbox:
                    self._drain()
                    continue
                if self._buffer and (self._buffer[0][0] + self.delay_s <= self.clock.now()
                                     or self.paused_at is not None):
                    self._release()
                    continue
                if stop_when_over and self.referee.is_over(self.state):
                    break
                if until is not None and self.clock.now() >= until:
                    break
                deadline = self.referee.next_deadline(self.state)
                if deadline is not None and deadline == self._ticked:
                    deadline = None  # its tick waits in the buffer
                if deadline is not None and self.paused is not None and self.paused():
                    deadline = None  # a part is lost: the game waits for it
                buffered = self._buffer[0][0] + self.delay_s if self._buffer else None
                wake_at = _earliest([deadline, until, buffered, *(s.next_time() for s in self.scheduled)])
                if self.paused_at is not None:
                    wake_at = None  # the players paused: session time stands still, only an event comes
                self._wake.clear()
                if self._inbox or self._told or self._stop.is_set():
                    continue
                if wake_at is None and not self.sources:
                    break  # nothing can ever happen again
                if self.heartbeat is not None:
                    self._beat()
                    if self._wait_beating(wake_at):
                        continue
                elif self.clock.wait(self._wake, wake_at):
                    continue
                now = self.clock.now()
                for s in self.scheduled:
                    due = s.next_time()
                    if due is not None and due <= now:
                        try:
                            s.advance(now)
                        except Exception as exc:  # a simulated part's bug: stop, keep the journal
                            log.exception("source %s failed; the game stops here", type(s).__name__)
                            self.scheduled.remove(s)
                            self.failure = (f"{type(s).__name__} failed ({type(exc).__name__}: {exc}); the game "
                                            "stops here and stays resumable")
                            self._drain()  # what it emitted before failing is judged and journaled
                            self._stop.set()
                            break
                if self._inbox:
                    continue  # apply what the sources did first; the deadline comes next round
                if deadline is not None and now >= deadline:
                    if self.delay_s > 0:
                        self._ticked = deadline
                        self._buffer_push(Tick(t=deadline))
                    else:
                        self._apply(Tick(t=now))
        finally:
            for source in self.sources:
                try:
                    source.stop()
                except Exception:  # a source that fails to stop must not lose the journal
                    log.exception("stopping a source failed")
        return self.state

    def _beat(self) -> None:
        try:
            self.heartbeat()
        except Exception:  # the watchdog must never stop the referee
            log.exception("heartbeat failed")

    def _wait_beating(self, wake_at: float | None) -> bool:
        """Wait like ``clock.wait`` but beat the heartbeat every ``heartbeat_s`` real
        seconds; True when woken by an event, False at ``wake_at``."""
        while True:
            until = self.clock.now() + self.heartbeat_s * _speed(self.clock)
            if wake_at is not None and wake_at <= until:
                return self.clock.wait(self._wake, wake_at)
            if self.clock.wait(self._wake, until):
                return True
            self._beat()

    def _announce_told(self) -> None:
        summary = self.referee.summary(self.state)
        while self._told:
            call = self._told.popleft()
            log.info("%s", call.to_json())
            self._announce(call, summary)

    def _drain(self) -> None:
        from companion.pause import is_pause_or_resume

        batch = []
        while self._inbox:
            obs = self._inbox.popleft()
            if is_pause_or_resume(obs):
                self._apply_batch(batch)  # what came before the pause is judged before it
                batch = []
                self._pause_or_resume(obs)
            else:
                self._tell_arrived(obs)
                batch.append(obs)
        self._apply_batch(batch)

    def _apply_batch(self, batch: list[Observation]) -> None:
        if self.delay_s > 0:
            for obs in batch:
                self._buffer_push(obs)
            return
        batch.sort(key=lambda o: o.t)  # stable: equal times keep their arrival order
        for obs in batch:
            self._apply(obs)

    def _say_again(self) -> None:
        """A resumed game's last question to the table, then ``paused`` if it restarts paused
        (once per service)."""
        calls, self._restate = self._restate, []
        if not calls:
            return
        summary = self.referee.summary(self.state)
        people = [a for a in self.announcers if getattr(a, "hears_again", True)]  # not simulated players
        for call in calls:
            log.info("again: %s", call.to_json())
            self._announce(call, summary, people)

    def _resume_pending(self) -> None:
        """Observations journaled on arrival but not applied when the service stopped (they
        were in the jitter buffer): back into the buffer with their arrival ids (applied at
        once when there is no buffer), so each is applied exactly once."""
        if self.journal is None or self._pending_resumed:
            return
        self._pending_resumed = True  # once: later runs find them in the buffer already
        for entry in self.journal.pending(self.session):  # type: ignore[arg-type]
            obs = self.journal.observation(entry, self.referee.vocabulary)
            self._tell_arrived(obs)
            if self.delay_s > 0:
                heapq.heappush(self._buffer, (obs.t, next(self._buffer_seq), obs, entry.id))
            else:
                self._apply(obs, arrival=entry.id)

    def _hold(self, at: float) -> None:
        import time

        hold = getattr(self.clock, "hold", None)
        if hold is not None:
            hold()
        self.paused_at = at
        self._paused_real = time.monotonic()

    def _pause_or_resume(self, obs: Observation) -> None:
        """The players' pause or resume (:mod:`companion.pause`), on the loop's thread: hold or
        release the clock, journal the observation, tell the table, answer the observers."""
        import time

        from companion.events import InvalidObservation
        from companion.pause import Pause, Paused, Resumed

        pausing = isinstance(obs, Pause)
        if pausing == (self.paused_at is not None) or (pausing and self.referee.is_over(self.state)):
            why = ("the game is over" if pausing and self.paused_at is None else
                   "the game is already paused" if pausing else "the game is not paused")
            refusal: list[Call] = [InvalidObservation.rejecting(obs, why, at=max(obs.t, self.last_t))]
            self._tell_observers(obs, refusal)
            return
        if pausing:
            self._hold(self.clock.now())
            at = self.paused_at
            call: Call = Paused(t=at, by=obs.by)  # type: ignore[attr-defined,arg-type]
        else:
            waited = time.monotonic() - self._paused_real if self._paused_real is not None else 0.0
            release = getattr(self.clock, "release", None)
            if release is not None:
                release()
            at = self.clock.now()
            self.paused_at = self._paused_real = None
            call = Resumed(t=at, paused_s=round(waited, 3))
        stamped = dataclasses.replace(obs, t=max(at, self.last_t))  # type: ignore[arg-type]
        if self.journal is not None:
            written = self.journal.append_step(self.session, stamped, [])  # type: ignore[arg-type]
            self._journal_state(written, stamped.t)
        log.info("%s", call.to_json())
        self._announce(call, self.referee.summary(self.state))
        self._tell_observers(obs, [call])

    def _tell_arrived(self, obs: Observation) -> None:
        for observer in self.observers:
            arrived = getattr(observer, "arrived", None)
            if arrived is None:
                continue
            try:
                arrived(obs)
            except Exception:
                log.exception("observer %s failed", type(observer).__name__)

    def _tell_observers(self, obs: Observation, calls: list[Call]) -> None:
        for observer in self.observers:
            try:
                observer.applied(obs, calls)
            except Exception:
                log.exception("observer %s failed", type(observer).__name__)

    def _buffer_push(self, obs: Observation) -> None:
        """Into the jitter buffer; an observation (not a deadline's tick, which the referee
        makes again) is journaled as it arrives, so a kill loses nothing that came in."""
        arrival = None
        if self.journal is not None and not isinstance(obs, Tick):
            arrival = self.journal.append_arrival(self.session, obs)  # type: ignore[arg-type]
            self._journal_state(self.journal.backlog == 0, obs.t)
        heapq.heappush(self._buffer, (obs.t, next(self._buffer_seq), obs, arrival))

    def _release(self) -> None:
        """Apply, in time order, the buffered observations whose delay has passed (all of them
        while the players' pause holds the clock: nothing stamped later can come meanwhile)."""
        now = self.clock.now() if self.paused_at is None else float("inf")
        while self._buffer and self._buffer[0][0] + self.delay_s <= now:
            _, _, obs, arrival = heapq.heappop(self._buffer)
            self._apply(obs, arrival)

    def _journal_state(self, written: bool, t: float) -> None:
        """Tell the table once when the journal's disk refuses writes, and when it takes them
        again (the game goes on from memory meanwhile; the backlog is written then)."""
        from companion.health import PartBack, PartLost

        if not written and not self._journal_lost:
            self._journal_lost = True
            self.tell(PartLost(t=t, part="journal",
                               fix="Its disk is full: free some space; the game goes on and is written then."))
        elif written and self._journal_lost:
            self._journal_lost = False
            self.tell(PartBack(t=t, part="journal"))

    def _apply(self, obs: Observation, arrival: int | None = None) -> list[Call]:
        """Apply, journal the observation with its calls, announce; returns the calls.

        ``arrival``: the id of its arrival entry when it came through the jitter buffer."""
        original = obs
        if obs.t < self.last_t:
            # Stamped before an observation already applied (another thread was first):
            # judged now, not lost.
            obs = dataclasses.replace(obs, t=self.last_t)
        state, calls = self.referee.apply(self.state, obs)
        if self.journal is not None:
            # Durable before anybody is told: a crash loses nothing that was announced.
            # A full disk keeps them in memory (written when there is room) and tells the table.
            written = self.journal.append_step(self.session, obs, calls, arrival)  # type: ignore[arg-type]
            self._journal_state(written, obs.t)
        self.state = state
        self.last_t = obs.t
        self._tell_observers(original, calls)
        if calls:
            summary = self.referee.summary(self.state)
            for call in calls:
                self._announce(call, summary)
            self.calls_made += len(calls)
        return calls

    def _announce(self, call: Call, summary: Any, announcers: Sequence[Any] | None = None) -> None:
        for a in self.announcers if announcers is None else announcers:
            try:
                a.announce(call, summary)
            except Exception:  # one failing announcer must not silence the others
                log.exception("announcer %s failed on %s", type(a).__name__, call.TYPE)

    def close(self) -> None:
        """Close the announcers (the journal belongs to the caller)."""
        for a in self.announcers:
            try:
                a.close()
            except Exception:
                log.exception("closing announcer %s failed", type(a).__name__)


def _speed(clock: Clock) -> float:
    """Session seconds per real second of ``clock`` (1 unless it says otherwise)."""
    return float(getattr(clock, "speed", 1.0) or 1.0)


def _earliest(times: Iterable[float | None]) -> float | None:
    present = [t for t in times if t is not None]
    return min(present) if present else None
