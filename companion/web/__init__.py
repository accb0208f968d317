"""The table's web page: an ASGI app (Starlette on uvicorn) served by ``companion run`` itself.

The pieces, in the order of the data flow:

* :class:`~companion.web.hub.Hub` keeps what the pages show (the latest state of the game, the
  last calls in plain sentences) and fans every event out to the connected browsers over
  server-sent events; publishing never blocks the service loop.
* :class:`~companion.web.announcer.WebAnnouncer` is the ``web`` announcer of
  ``[service] announcers``: each call, with its sentence and the referee's summary, goes to the hub.
* :func:`~companion.web.app.make_app` builds the Starlette app: the pages (static files shipped
  in ``companion/web/static/``, nothing loaded from the internet), ``/api/events`` (the live
  stream), ``/api/entry`` (an entry, sent through the same
  :class:`~companion.sources.entries.EntryServer` as the socket, so it is journaled and judged
  like any other) and ``/api/control`` (a new game).
* :mod:`~companion.web.security`: local only by default; on the LAN every request needs the
  token; a changing request needs it always.
* :class:`~companion.web.server.WebServer` runs uvicorn in a thread of ``companion run``.
"""

from __future__ import annotations

from companion.web.announcer import WebAnnouncer
from companion.web.hub import Hub
from companion.web.server import WebPage, WebServer

__all__ = ["Hub", "WebAnnouncer", "WebPage", "WebServer"]
