"""Telling systemd how the service is doing: the sd_notify(3) protocol, in plain Python.

Under a ``Type=notify`` unit systemd passes the path of a datagram socket in ``$NOTIFY_SOCKET``
(a file path, or ``@name`` for the abstract namespace); the service sends it short
``KEY=value`` lines: ``READY=1`` once started, ``STATUS=...`` for ``systemctl status``,
``WATCHDOG=1`` at least every ``WatchdogSec`` (the unit kills and restarts a service that stops
sending them) and ``STOPPING=1`` on the way out. With ``WatchdogSec`` set, systemd also passes
``$WATCHDOG_USEC`` (the period, microseconds) and ``$WATCHDOG_PID`` (the process it is for).

Sources: sd_notify(3), sd_watchdog_enabled(3) and systemd.service(5), systemd 252.

Why not a library: the pure-Python ones on PyPI (``sdnotify`` 0.3.2 of 2017, ``sd-notify``
0.1.0 of 2020, ``systemd-watchdog``) either ignore ``$WATCHDOG_PID`` and the abstract
namespace, read the wall clock, or report a made-up period when there is no watchdog;
``systemd-python`` and ``cysystemd`` need libsystemd and a compiler. The protocol is one
``sendto`` per message, so it lives here.

Example (what ``companion run`` does)::

    notifier = Notifier()
    notifier.ready("refereeing carrousel")
    while running:
        ...
        notifier.tick(clock.now())      # WATCHDOG=1 when half the period has passed
    notifier.stopping()

Every method is a no-op when the process is not under systemd (no ``$NOTIFY_SOCKET``).
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Mapping

__all__ = ["Notifier"]

log = logging.getLogger("companion.systemd")


class Notifier:
    """The service's side of sd_notify(3).

    Args:
        environ: where ``NOTIFY_SOCKET``, ``WATCHDOG_USEC`` and ``WATCHDOG_PID`` are read
            (default ``os.environ``); read once, here.
        pid: this process's id for the ``WATCHDOG_PID`` check (default ``os.getpid()``).

    Attributes:
        address: the socket address (bytes for the abstract namespace, a path str), or None
            when not under systemd.
        watchdog_period_s: how often :meth:`watchdog` must be called, seconds: half of
            ``$WATCHDOG_USEC`` as sd_watchdog_enabled(3) recommends; None when systemd asked
            for no watchdog, or asked it of another process (``$WATCHDOG_PID``).

    Sending never raises: a failed send (the socket gone) is logged once as a warning, since
    the service must go on refereeing whatever happens to its supervisor.
    """

    def __init__(self, environ: Mapping[str, str] | None = None, pid: int | None = None):
        env = os.environ if environ is None else environ
        self.address: str | bytes | None = self._address(env.get("NOTIFY_SOCKET", ""))
        self.watchdog_period_s: float | None = self._period(env, os.getpid() if pid is None else pid)
        self._sock: socket.socket | None = None
        self._warned = False
        self._last_ping: float | None = None

    @staticmethod
    def _address(text: str) -> str | bytes | None:
        """``/run/systemd/notify`` -> that path; ``@name`` -> b"\\0name" (abstract namespace)."""
        if text.startswith("/"):
            return text
        if text.startswith("@") and len(text) > 1:
            return b"\0" + text[1:].encode()
        if text:
            # vsock: (systemd 254+, virtual machines) and anything else: not for a Pi service.
            log.warning("NOTIFY_SOCKET=%s: not a Unix socket address; systemd will not be notified", text)
        return None

    def _period(self, env: Mapping[str, str], pid: int) -> float | None:
        """Half of ``$WATCHDOG_USEC`` in seconds, when the watchdog is meant for ``pid``."""
        if self.address is None:
            return None
        usec = env.get("WATCHDOG_USEC", "")
        if not usec.isdigit() or int(usec) == 0:
            return None
        owner = env.get("WATCHDOG_PID", "")
        if owner and (not owner.isdigit() or int(owner) != pid):
            return None  # the watchdog is another process's (sd_watchdog_enabled(3))
        return int(usec) / 2e6

    @property
    def enabled(self) -> bool:
        """True when running under systemd with a notify socket."""
        return self.address is not None

    def send(self, message: str) -> bool:
        """Send one datagram of ``KEY=value`` lines; True when it was sent.

        Returns False (and sends nothing) when not under systemd or when the send failed.
        """
        if self.address is None:
            return False
        try:
            if self._sock is None:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
            self._sock.sendto(message.encode("utf-8"), self.address)
            return True
        except OSError as exc:
            if not self._warned:
                log.warning("cannot notify systemd at %s: %s", os.environ.get("NOTIFY_SOCKET", self.address), exc)
                self._warned = True
            return False

    @staticmethod
    def _one_line(text: str) -> str:
        return " ".join(text.split())

    def ready(self, status: str = "") -> bool:
        """``READY=1`` (with ``STATUS=status`` when given): the service has started; a
        ``Type=notify`` unit counts as started only from here."""
        return self.send("READY=1" + (f"\nSTATUS={self._one_line(status)}" if status else ""))

    def status(self, text: str) -> bool:
        """``STATUS=text``: the one line ``systemctl status`` shows (newlines become spaces)."""
        return self.send(f"STATUS={self._one_line(text)}")

    def watchdog(self) -> bool:
        """``WATCHDOG=1``: the service is alive. Call it from the service loop itself (never
        from a thread of its own, which would keep a hung loop alive)."""
        return self.send("WATCHDOG=1")

    def tick(self, now_s: float) -> bool:
        """Send ``WATCHDOG=1`` when ``watchdog_period_s`` has passed since the last one.

        Args:
            now_s: the caller's monotonic time, seconds (the loop's clock).

        Returns:
            True when a ping was sent.
        """
        if self.watchdog_period_s is None:
            return False
        if self._last_ping is not None and now_s - self._last_ping < self.watchdog_period_s:
            return False
        self._last_ping = now_s
        return self.watchdog()

    def stopping(self) -> bool:
        """``STOPPING=1``: the service is shutting down on purpose."""
        return self.send("STOPPING=1")

    def close(self) -> None:
        """Close the socket (a later send opens it again)."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None
