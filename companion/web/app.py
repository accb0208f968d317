"""The Starlette app of the table's web page: pages, the live stream, entries and controls.

Routes (every page is a static file of ``companion/web/static/``; nothing comes from the internet):

=========================  ======  =================================================================
``/``                      GET     the table: game, players, scores, whose turn, last calls, countdown
``/camera``                GET     the camera's frame with the reader's overlay (when there is one)
``/entries``               GET     forms for what no sensor sees (every observation of the game)
``/correct``               GET     a correction: a board, a card, the seats, as an entry of its own
``/game``                  GET     the game and its players, start, pause and resume, the language
``/kids``                  GET     Monsieur Carrousel in pictures (die colour, seat, sun or rain)
``/setup``                 GET     markers seen on the frame, colour capture, calibration files
``/screen``                GET     the Pi's own screen: the LAN address and token as a QR code (local)
``/api/session``           GET     token, game, players, languages, the game's entry forms
``/api/events``            GET     server-sent events: ``hello``, then ``call``, ``game``, ``state``
``/api/status``            GET     the service's status (the entry socket's ``status``)
``/api/entry``             POST    one observation (JSON object) -> the referee's reply in words
``/api/control``           POST    ``{"control": "new_game", "game": G, "players": [...]}``,
                                  ``{"control": "pause"}``, ``{"control": "resume"}``, ``{"language": L}``;
                                  one refused (bad or refused by the service): HTTP 400 with
                                  ``{"ok": false, "error", "sentences": [error]}``
``/api/camera.jpg``        GET     the latest camera frame with the overlay drawn (JPEG); ``?view=markers``:
                                   with the marker placement check drawn instead
``/api/camera.mjpg``       GET     the same, about 3 frames a second (multipart JPEG stream; ``?view=``)
``/api/camera/events``     GET     server-sent events ``reading`` (``?view=markers``: ``markers``), one per
                                   frame sent: what the reader read, or the marker check
``/api/setup/hold``        POST    hold the latest frame for a colour capture -> ``{"id", "size", ...}``
``/api/setup/held.jpg``    GET     ``?id=N``: the held frame (JPEG)
``/api/setup/sample``      POST    ``{"id", "x", "y"}`` (fractions): the tapped space or card and its Lab
``/api/setup/colours``     POST    ``{"views": [{"id", "spaces": [7], "cards": {seat: [3]}}, ...]}``: write the
                                   colours file from the held frames
``/api/calibration``       GET     each calibration file's state
``/api/qr.svg``            GET     the QR code of the LAN address with the token (local clients)
``/favicon.ico``           GET     the page's icon (``static/favicon.ico``, shipped with the package)
=========================  ======  =================================================================

Bad input: a body over :data:`MAX_BODY` bytes is HTTP 413, a body that is not a JSON object is
400, a missing token 401 (LAN) or 403 (a changing request, or a foreign ``Host``); an entry the
referee refuses is HTTP 200 with ``ok: false`` and the refusal in words, as on the socket. None
of these touch the journal; the service keeps refereeing.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import secrets
import types
import typing
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode

from companion.sources.entries import MAX_LINE
from companion.web import security
from companion.web.hub import Hub

__all__ = ["make_app", "entry_forms", "MAX_BODY", "PAGES", "STATIC"]

log = logging.getLogger("companion.web")

#: Largest request body accepted, bytes (a Carrossel deal is about 1 KB): the entry socket's
#: longest line (:data:`companion.sources.entries.MAX_LINE`, 16 KiB), so both refuse alike.
MAX_BODY = MAX_LINE
#: Seconds a browser's stream may go without reading before it is cut (sse-starlette's
#: ``send_timeout``): a page too slow for the live stream (its queue full, see
#: :mod:`companion.web.hub`) is disconnected even while the server waits to write to it; its
#: ``EventSource`` reconnects and catches up from the hub's state.
SEND_TIMEOUT_S = 5.0
#: Seconds between two camera frames pushed to the camera page.
CAMERA_PERIOD_S = 0.3
#: Seconds between two marker checks pushed to the set-up page (a check costs several frames' reading).
MARKERS_PERIOD_S = 1.0
#: The page files shipped with the package.
STATIC = Path(__file__).resolve().parent / "static"
#: Address -> page file.
PAGES = {"/": "table.html", "/camera": "camera.html", "/entries": "entries.html", "/correct": "correct.html",
         "/game": "game.html", "/kids": "kids.html", "/setup": "setup.html", "/screen": "screen.html"}
#: Observation types each game offers as a correction (an observation of its own, journaled).
CORRECTIONS = {"carrousel": ("board", "card_seen"), "monsieur-carrousel": ("seats_seen", "die_rolled", "answer"),
               "carrossel": ("board_turned",), "carnival": ()}
#: Fields whose value is a player's name (a choice among the players on the page).
PLAYER_FIELDS = {"player", "target", "blocker"}
LANGUAGES = ("en", "fr", "pt-BR")


def _kind(hint: Any) -> dict[str, Any]:
    """A field's type hint -> the page's form description."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1:
            return {**_kind(inner[0]), "optional": type(None) in args}
        return {"kind": "text", "optional": type(None) in args}
    if origin is typing.Literal:
        return {"kind": "choice", "choices": [str(a) for a in args if isinstance(a, str)]}
    if origin is tuple:
        item = args[0] if args else str
        if typing.get_origin(item) is tuple:
            return {"kind": "list", "of": "list"}
        of = "int" if item is int else ("any" if typing.get_origin(item) is not None else "text")
        return {"kind": "list", "of": of, "length": len(args) if args and args[-1] is not Ellipsis else None}
    if hint is bool:
        return {"kind": "bool"}
    if hint is int:
        return {"kind": "int"}
    if hint is float:
        return {"kind": "float"}
    return {"kind": "text"}


def entry_forms(game: str) -> dict[str, list[dict[str, Any]]]:
    """The forms of ``game``'s observations (``tick`` left out): ``type -> [field, ...]``, each
    field ``{"name", "kind" (text|int|float|bool|list|choice), "optional", "choices", "of"}``.

    Raises:
        companion.games.UnknownGame: no such game.
    """
    from companion.games import referee_for

    forms: dict[str, list[dict[str, Any]]] = {}
    for kind, cls in referee_for(game).vocabulary.observations.items():
        if kind == "tick":
            continue
        hints = typing.get_type_hints(cls)
        fields = []
        for f in dataclasses.fields(cls):
            if f.name == "t":
                continue
            desc = {"name": f.name, "optional": False, **_kind(hints.get(f.name, str))}
            if f.name in PLAYER_FIELDS:
                desc["kind"] = "player"
            fields.append(desc)
        forms[kind] = fields
    return forms


class Guard:
    """ASGI middleware: the rules of :mod:`companion.web.security` for every request.

    Args:
        app: the wrapped ASGI app.
        token: the page's token.
        lan: ``[web] lan`` (every request needs the token).
    """

    def __init__(self, app: Any, token: str, lan: bool):
        self.app = app
        self.token = token
        self.lan = lan

    def _valid(self, value: str | None) -> bool:
        return bool(value) and secrets.compare_digest(value.encode(), self.token.encode())  # type: ignore[union-attr]

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])}
        path = scope.get("path", "/")
        method = scope.get("method", "GET")
        host = headers.get("host", "")
        client = (scope.get("client") or ("", 0))[0]
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:
            pass
        from_cookie = cookie[security.COOKIE].value if security.COOKIE in cookie else None
        from_header = headers.get(security.HEADER)
        from_query = (query.get("token") or [None])[0]
        if not self.lan and not security.is_local_host(host):
            await _plain(send, 403, f"this page is local only (Host {host!r}): open http://127.0.0.1 on the Pi, "
                                    "or set [web] lan = true to open it to the network with a token")
            return
        screen = path in ("/screen", "/api/qr.svg", "/api/screen")
        if screen and not security.is_loopback(client):
            await _plain(send, 403, "the screen page is for the Pi's own screen only")
            return
        # The Pi's own screen shows the token (as a QR code) to the players: it needs none itself.
        authorised = any(self._valid(v) for v in (from_header, from_cookie, from_query)) or (screen and method == "GET")
        if self.lan and not authorised:
            await _plain(send, 401, "a token is needed: open the address shown on the companion's console "
                                    "or scan the QR code on its screen page (/screen on the Pi)")
            return
        if method not in ("GET", "HEAD") and not self._valid(from_header):
            await _plain(send, 403, f"a changing request needs the token in the {security.HEADER} header "
                                    "(the pages send it)")
            return
        if from_query is not None and self._valid(from_query) and method == "GET" and not path.startswith("/api/"):
            rest = {k: v for k, v in query.items() if k != "token"}
            location = path + ("?" + urlencode(rest, doseq=True) if rest else "")
            await send({"type": "http.response.start", "status": 303, "headers": [
                (b"location", location.encode("latin-1")),
                (b"set-cookie", f"{security.COOKIE}={self.token}; HttpOnly; SameSite=Strict; Path=/".encode()),
                (b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return
        scope.setdefault("state", {})["authorised"] = authorised or not self.lan
        await self.app(scope, receive, send)


async def _plain(send: Any, status: int, text: str) -> None:
    body = (text + "\n").encode("utf-8")
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def make_app(hub: Hub, entries: Any, *, token: str, lan: bool = False, lan_url: str | None = None,
             config: Any = None) -> Any:
    """Build the ASGI app (Starlette wrapped in :class:`Guard`).

    Args:
        hub: the :class:`~companion.web.hub.Hub` the ``web`` announcer publishes to.
        entries: the :class:`~companion.sources.entries.EntryServer` (``handle(line)``,
            ``status()``); an entry posted by a page goes through ``handle`` exactly like a
            line on the socket, so it is journaled and judged the same way.
        token: the page's token (:func:`~companion.web.security.load_token`).
        lan: open to the LAN (every request needs the token).
        lan_url: the address to show as a QR code on ``/screen`` (with the token), or None.
        config: the :class:`~companion.config.Config` (``/api/calibration`` checks its files).

    Returns:
        The ASGI application.
    """
    from sse_starlette.sse import EventSourceResponse, SendTimeoutError

    class _Stream(EventSourceResponse):
        """The live stream; a browser that stopped reading is cut (one log line, no traceback)."""

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            try:
                await super().__call__(scope, receive, send)
            except* SendTimeoutError:
                log.info("web: a page that read nothing for %.0f s was disconnected (it reconnects)",
                         SEND_TIMEOUT_S)
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    forms_cache: dict[str, Any] = {}

    def forms(game: str | None) -> dict[str, Any]:
        if not game:
            return {}
        if game not in forms_cache:
            forms_cache[game] = entry_forms(game)
        return forms_cache[game]

    def current() -> tuple[str | None, list[str]]:
        state = hub.state
        return state.get("game"), list(state.get("players") or [])

    def page(name: str) -> Any:
        async def endpoint(request: Request) -> Response:
            return FileResponse(STATIC / name, headers={"cache-control": "no-cache"})
        return endpoint

    async def session(request: Request) -> Response:
        from companion.commands.run import PLAYER_LIMITS
        from companion.games import GAMES

        game, players = current()
        return JSONResponse({
            "token": token, "lan": lan, "game": game, "players": players, "language": hub.language,
            "languages": list(LANGUAGES), "games": list(GAMES), "forms": forms(game),
            "player_limits": {g: list(PLAYER_LIMITS.get(g, (2, 4))) for g in GAMES},
            "corrections": list(CORRECTIONS.get(game or "", ())), "camera": hub.camera is not None})

    async def events(request: Request) -> Response:
        import asyncio

        subscriber = hub.subscribe(asyncio.get_running_loop())
        if subscriber is None:
            return PlainTextResponse("too many pages are connected; close one and reload", status_code=503,
                                     headers={"retry-after": "5"})

        async def stream() -> Any:
            try:
                yield {"event": "hello", "data": json.dumps(hub.hello(), ensure_ascii=False, default=str)}
                while True:
                    frames = await subscriber.next_batch()
                    if frames is None:
                        return
                    yield frames  # the frames the hub encoded once for every browser, a burst at once
            finally:
                hub.unsubscribe(subscriber)  # the browser went away (or was too slow): forget it

        return _Stream(stream(), ping=15, send_timeout=SEND_TIMEOUT_S, headers={"cache-control": "no-cache"})

    async def status(request: Request) -> Response:
        reply = await run_in_threadpool(entries.handle, '{"control": "status"}')
        return JSONResponse(json.loads(json.dumps(reply, default=str)), status_code=200 if reply.get("ok") else 503)

    async def read_json(request: Request) -> tuple[dict[str, Any] | None, Response | None]:
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
            return None, PlainTextResponse(f"the body is larger than {MAX_BODY} bytes", status_code=413)
        from starlette.requests import ClientDisconnect

        body = b""
        try:
            async for chunk in request.stream():
                body += chunk
                if len(body) > MAX_BODY:
                    return None, PlainTextResponse(f"the body is larger than {MAX_BODY} bytes", status_code=413)
        except ClientDisconnect:  # the browser went away mid-body: nobody reads the answer
            log.info("web: a client disconnected before sending all of its %s %s body",
                     request.method, request.url.path)
            return None, PlainTextResponse("the body was cut short", status_code=400)
        try:
            obj = json.loads(body.decode("utf-8"))
        except UnicodeDecodeError:
            return None, PlainTextResponse("the body is not UTF-8 text", status_code=400)
        except json.JSONDecodeError as exc:
            return None, PlainTextResponse(f"the body is not JSON: {exc}", status_code=400)
        except (ValueError, RecursionError) as exc:  # an integer of 5000 digits, nesting too deep (as the socket)
            return None, PlainTextResponse(f"the body is not JSON this service reads: {str(exc)[:120]}",
                                           status_code=400)
        if not isinstance(obj, dict):
            return None, PlainTextResponse(f"expected a JSON object, got {type(obj).__name__}", status_code=400)
        return obj, None

    async def entry(request: Request) -> Response:
        obj, error = await read_json(request)
        if error is not None:
            return error
        assert obj is not None
        if "control" in obj:
            return PlainTextResponse("a control goes to /api/control", status_code=400)
        game, _ = current()
        reply = await run_in_threadpool(entries.handle, json.dumps(obj))
        reply = dict(reply)
        reply["sentences"] = [_sentence(game, c) for c in reply.get("calls", [])] if game else []
        if not reply.get("ok"):
            reply["sentences"] = [reply.get("error", "refused")]
        return JSONResponse(json.loads(json.dumps(reply, default=str)))

    def _sentence(game: str, call_json: dict[str, Any]) -> str:
        from companion.games import referee_for
        from companion.web.announcer import sentence_for

        from companion.pause import SERVICE_CALLS

        try:
            cls = SERVICE_CALLS.get(call_json.get("type", ""))
            call = cls.from_json(call_json) if cls is not None else referee_for(game).vocabulary.call(call_json)
            return sentence_for(call, game, hub.language)
        except Exception:
            return str(call_json.get("reason") or call_json.get("type", "")).replace("_", " ")

    def refused(error: str) -> Response:
        """A control refused (a bad one, or one the service refuses): HTTP 400 with the sentence."""
        return JSONResponse({"ok": False, "error": error, "sentences": [error]}, status_code=400)

    async def control(request: Request) -> Response:
        obj, error = await read_json(request)
        if error is not None:
            return error
        assert obj is not None
        if "language" in obj:
            if obj["language"] not in LANGUAGES:
                return refused(f"unknown language {obj['language']!r} (known: {', '.join(LANGUAGES)})")
            hub.language = hub.chosen_language = obj["language"]
            if hub.on_language is not None:  # kept for a restart (the game's journal session)
                hub.on_language(hub.language)
            hub.publish("state", {"language": hub.language})
            return JSONResponse({"ok": True, "language": hub.language})
        what = obj.get("control")
        if what in ("pause", "resume"):
            # The players' pause (companion.pause): an observation of its own, journaled by the service.
            reply = dict(await run_in_threadpool(entries.handle, json.dumps({"control": what, "by": "the game page"})))
            game, _ = current()
            reply["sentences"] = ([_sentence(game or "", c) for c in reply.get("calls", [])] if reply.get("ok")
                                  else [reply.get("error", "refused")])
            return JSONResponse(json.loads(json.dumps(reply, default=str)), status_code=200 if reply.get("ok") else 400)
        if what != "new_game":
            return refused("expected {\"control\": \"new_game\", \"game\": ..., \"players\": [...]}, "
                           "{\"control\": \"pause\"}, {\"control\": \"resume\"} or {\"language\": ...}")
        request_obj: dict[str, Any] = {"control": "new_game", "game": obj.get("game")}
        if obj.get("players") is not None:
            request_obj["players"] = obj["players"]  # checked by the service, as `companion run --players`
        reply = await run_in_threadpool(entries.handle, json.dumps(request_obj))
        if not reply.get("ok"):
            return refused(str(reply.get("error", "refused")))
        return JSONResponse(reply)

    no_camera = "this table has no camera the page can show"

    def camera_view(request: Request) -> tuple[Any, Any]:
        """``(view's frame function, None)`` or ``(None, error response)`` for ``?view=``."""
        view = hub.camera
        if view is None:
            return None, PlainTextResponse(no_camera, status_code=404)
        kind = request.query_params.get("view", "overlay")
        if kind not in ("overlay", "markers"):
            return None, PlainTextResponse(f"view {kind!r}: expected overlay or markers", status_code=400)
        return (view if kind == "overlay" else view.markers_jpeg), None

    def period_of(request: Request) -> float:
        return MARKERS_PERIOD_S if request.query_params.get("view") == "markers" else CAMERA_PERIOD_S

    async def frame_of(get: Any) -> tuple[Any, Response | None]:
        from companion.web.camera import CaptureError

        try:
            return await run_in_threadpool(get), None
        except CaptureError as exc:
            return None, PlainTextResponse(str(exc), status_code=404)

    async def camera_jpg(request: Request) -> Response:
        get, error = camera_view(request)
        if error is not None:
            return error
        got, error = await frame_of(get)
        if error is not None:
            return error
        if got is None:
            return PlainTextResponse("no frame yet", status_code=503, headers={"retry-after": "1"})
        jpeg, _info = got
        return Response(jpeg, media_type="image/jpeg", headers={"cache-control": "no-store"})

    async def camera_mjpg(request: Request) -> Response:
        import asyncio

        from starlette.responses import StreamingResponse

        get, error = camera_view(request)
        if error is not None:
            return error

        async def frames() -> Any:
            last = None
            while not hub.closed and not await request.is_disconnected():
                got, error = await frame_of(get)
                if got is not None and got[0] is not last:  # a new frame: the same one is not sent again
                    last = jpeg = got[0]
                    yield (b"--frame\r\ncontent-type: image/jpeg\r\ncontent-length: " + str(len(jpeg)).encode()
                           + b"\r\n\r\n" + jpeg + b"\r\n")
                if error is not None:
                    return
                await asyncio.sleep(period_of(request))  # a few frames a second: the table, not a video

        return StreamingResponse(frames(), media_type="multipart/x-mixed-replace; boundary=frame",
                                 headers={"cache-control": "no-store"})

    async def camera_events(request: Request) -> Response:
        import asyncio

        get, error = camera_view(request)
        if error is not None:
            return error
        name = "markers" if request.query_params.get("view") == "markers" else "reading"

        async def stream() -> Any:
            last = None
            while not hub.closed:
                got, error = await frame_of(get)
                if error is not None:
                    yield {"event": "problem", "data": json.dumps({"error": error.body.decode()})}
                    return
                if got is not None and got[1] is not last:
                    last = got[1]
                    yield {"event": name, "data": json.dumps(got[1], ensure_ascii=False, default=str)}
                await asyncio.sleep(period_of(request))

        return EventSourceResponse(stream(), ping=15, headers={"cache-control": "no-cache"})

    async def setup_call(request: Request, method: str, *fields: str) -> Response:
        """Run a :class:`~companion.web.camera.CameraView` set-up method with the body's fields;
        its refusal is ``{"ok": false, "error"}`` in words."""
        from companion.web.camera import CaptureError

        view = hub.camera
        if view is None:
            return JSONResponse({"ok": False, "error": no_camera + ": start the table with its camera "
                                 "(companion run --camera ...)"}, status_code=404)
        obj: dict[str, Any] = {}
        if fields:
            got, error = await read_json(request)
            if error is not None:
                return error
            obj = got or {}
            missing = [f for f in fields if f not in obj]
            if missing:
                return JSONResponse({"ok": False, "error": f"missing {', '.join(missing)} in the request"},
                                    status_code=400)
        try:
            result = await run_in_threadpool(getattr(view, method), *(obj[f] for f in fields))
        except CaptureError as exc:
            return JSONResponse({"ok": False, "error": str(exc)})
        return JSONResponse({"ok": True, **result})

    async def setup_hold(request: Request) -> Response:
        return await setup_call(request, "hold")

    async def setup_sample(request: Request) -> Response:
        return await setup_call(request, "sample", "id", "x", "y")

    async def setup_colours(request: Request) -> Response:
        return await setup_call(request, "capture_colours", "views")

    async def setup_held(request: Request) -> Response:
        from companion.web.camera import CaptureError

        view = hub.camera
        if view is None:
            return PlainTextResponse(no_camera, status_code=404)
        try:
            jpeg = await run_in_threadpool(view.held_jpeg, request.query_params.get("id"))
        except CaptureError as exc:
            return PlainTextResponse(str(exc), status_code=404)
        return Response(jpeg, media_type="image/jpeg", headers={"cache-control": "no-store"})

    async def calibration(request: Request) -> Response:
        from companion.web.camera import calibration_files

        return JSONResponse(await run_in_threadpool(calibration_files, config))

    async def qr(request: Request) -> Response:
        import segno

        if not lan:
            return PlainTextResponse("the page is local only ([web] lan = false): no address to share",
                                     status_code=404)
        if not lan_url:
            return PlainTextResponse("this machine had no network address when the page started: connect it "
                                     "to the network (Wi-Fi or cable) and restart the companion", status_code=404)
        import io

        out = io.BytesIO()
        segno.make(f"{lan_url}?token={token}", error="m").save(out, kind="svg", scale=8, xmldecl=False)
        return Response(out.getvalue(), media_type="image/svg+xml", headers={"cache-control": "no-store"})

    async def screen_info(request: Request) -> Response:
        return JSONResponse({"lan": lan, "url": lan_url, "token": token if lan else None})

    async def favicon(request: Request) -> Response:
        return FileResponse(STATIC / "favicon.ico", media_type="image/x-icon",
                            headers={"cache-control": "max-age=86400"})

    routes = [Route(path, page(name)) for path, name in PAGES.items()]
    routes += [Route("/favicon.ico", favicon),
        Route("/api/session", session), Route("/api/events", events), Route("/api/status", status),
        Route("/api/entry", entry, methods=["POST"]), Route("/api/control", control, methods=["POST"]),
        Route("/api/camera.jpg", camera_jpg), Route("/api/camera.mjpg", camera_mjpg),
        Route("/api/camera/events", camera_events),
        Route("/api/setup/hold", setup_hold, methods=["POST"]), Route("/api/setup/held.jpg", setup_held),
        Route("/api/setup/sample", setup_sample, methods=["POST"]),
        Route("/api/setup/colours", setup_colours, methods=["POST"]),
        Route("/api/calibration", calibration),
        Route("/api/qr.svg", qr), Route("/api/screen", screen_info),
        Mount("/static", StaticFiles(directory=STATIC, follow_symlink=False), name="static"),
    ]
    return Guard(Starlette(routes=routes), token, lan)

