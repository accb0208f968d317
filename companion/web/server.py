"""The web server of ``companion run``: uvicorn in a thread, on a socket bound before it starts.

:class:`WebPage` is made once per process, beside the entry socket: it reads ``[web]``, binds
the address (``127.0.0.1:8080`` by default; port 0 = any free port, as the tests use), prints
where the page is, and runs uvicorn in a daemon thread. :meth:`WebServer.stop` ends every
stream and the server at exit.
"""

from __future__ import annotations

import logging
import socket
import sys
import threading
import time
from typing import IO, Any

from companion.health import PartMissing
from companion.web.hub import Hub

__all__ = ["WebServer", "WebPage", "bind"]

log = logging.getLogger("companion.web")


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: any free port).

    Raises:
        OSError: the address is in use or not this machine's.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


class WebServer:
    """uvicorn serving the page's app in a thread of the service.

    Args:
        app: the ASGI app (:func:`companion.web.app.make_app`).
        sock: the bound, listening socket (:func:`bind`).
        hub: the :class:`~companion.web.hub.Hub` (its streams are ended on :meth:`stop`).

    Attributes:
        url: ``http://HOST:PORT/`` as bound (the real port when 0 was asked).
        lan_url: the address to give other devices on the LAN, or None when local only.
    """

    def __init__(self, app: Any, sock: socket.socket, hub: Hub, lan_url: str | None = None):
        self.app = app
        self.sock = sock
        self.hub = hub
        host, port = sock.getsockname()[:2]
        self.port = int(port)
        self.url = f"http://{'[' + host + ']' if ':' in host else host}:{self.port}/"
        self.lan_url = lan_url
        self._server: Any = None
        self._thread: threading.Thread | None = None

    def start(self, timeout_s: float = 10.0) -> None:
        """Start uvicorn in a daemon thread and wait until it serves (at most ``timeout_s`` s).

        Raises:
            RuntimeError: uvicorn did not start in time (its log says why).
        """
        import uvicorn

        config = uvicorn.Config(self.app, log_level="warning", access_log=False, lifespan="off",
                                timeout_graceful_shutdown=2, ws="none")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self.sock]},
                                        name="web-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the web server did not start on {self.url}")
            time.sleep(0.01)

    def stop(self) -> None:
        """End the streams and the server; safe to call twice."""
        self.hub.close()
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None
        try:
            self.sock.close()
        except OSError:
            pass


#: ``ioctl`` request for an interface's IPv4 address (Linux ``<linux/sockios.h>``).
_SIOCGIFADDR = 0x8915
#: Interface name prefixes of containers and virtual machines (not where the players are).
_VIRTUAL = ("docker", "br-", "veth", "virbr", "lxc", "tun", "tap", "wg")


def _interface_addresses() -> list[tuple[str, str]]:
    """``[(interface name, IPv4 address), ...]`` of this machine's interfaces that have one, in
    index order, read with ``ioctl(SIOCGIFADDR)`` on each of :func:`socket.if_nameindex` (Linux
    ``netdevice(7)``); no packet is sent. An interface without an address is left out; ``[]``
    where the call is not available."""
    import fcntl
    import struct

    out: list[tuple[str, str]] = []
    try:
        names = [name for _, name in socket.if_nameindex()]
    except OSError:
        return out
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for name in names:
            try:
                raw = fcntl.ioctl(s.fileno(), _SIOCGIFADDR, struct.pack("256s", name.encode()[:15]))
            except OSError:  # no IPv4 address on it (EADDRNOTAVAIL), or it went away
                continue
            out.append((name, socket.inet_ntoa(raw[20:24])))
    return out


def _lan_address(addresses: Any = None) -> str | None:
    """The address the players' devices reach this machine at: an IPv4 address of an interface
    other than loopback, a real one (``eth0``, ``wlan0``) before a container's bridge, a private
    or public one before a link-local 169.254.x.x; None when there is none.

    Not the host name's address: Debian and Raspberry Pi OS map it to 127.0.1.1 in /etc/hosts.

    Args:
        addresses: ``[(interface, IPv4 address), ...]``; default :func:`_interface_addresses`.
    """
    import ipaddress

    found = _interface_addresses() if addresses is None else addresses
    ranked = []
    for n, (name, address) in enumerate(found):
        ip = ipaddress.ip_address(address)
        if ip.is_loopback or ip.is_unspecified or ip.is_multicast:
            continue
        ranked.append((name.startswith(_VIRTUAL), ip.is_link_local, n, address))
    return min(ranked)[3] if ranked else None


class WebPage:
    """``[web]`` of ``companion run``: the hub at once (for the ``web`` announcer of every game),
    the server once the table's parts are there (:meth:`start`), stopped at exit (:meth:`stop`).

    The page is off when ``[web] enabled = false`` or ``web`` is not in ``[service] announcers``;
    then :attr:`hub` is None and :meth:`start` does nothing.

    Args:
        config: the :class:`~companion.config.Config`.
        journal_path: the journal's path (the LAN token is kept beside it).
        table: ``"sim"`` or ``"hardware"``.
        stream: where the page's address is printed (default standard error).

    Attributes:
        hub: the :class:`~companion.web.hub.Hub`, or None when the page is off.
        server: the running :class:`WebServer`, or None.
    """

    def __init__(self, config: Any, journal_path: Any, table: str, stream: IO[str] | None = None):
        web = config["web"]
        self.config = config
        self.journal_path = journal_path
        self.table = table
        self.stream = stream
        on = bool(web["enabled"]) and "web" in config["service"]["announcers"]
        self.hub: Hub | None = Hub(language=config["speech"]["language"]) if on else None
        self.server: WebServer | None = None
        self.started = not on

    def start(self, entries: Any) -> None:
        """Bind ``[web] listen`` and serve; print where the page is (once; later calls do nothing).

        Args:
            entries: the :class:`~companion.sources.entries.EntryServer` the page's entries go to.

        Raises:
            PartMissing: ``[web] listen`` is not local while ``lan = false``; the token file is
                unusable; or, at a real table, the address cannot be bound (in use). On the
                simulated table an address in use is one line on ``stream`` and the game goes
                on without the page.
        """
        if self.started:
            return
        self.started = True
        assert self.hub is not None
        from companion.config import _listen
        from companion.web.app import make_app
        from companion.web.security import is_loopback, load_token

        web = self.config["web"]
        out = self.stream or sys.stderr
        host, port = _listen(web["listen"])  # type: ignore[misc]  (checked by the configuration)
        local = host == "localhost" or is_loopback(host)
        if not web["lan"] and not local:
            raise PartMissing("web page", f"[web] listen = {web['listen']!r} is not a local address",
                              "set [web] lan = true to open the page to the network (a token is then needed), "
                              "or listen on 127.0.0.1")
        try:
            token = load_token(web["token"], web["lan"], self.journal_path)
        except ValueError as exc:
            raise PartMissing("web page", str(exc), "see [web] token in docs/configuration.md") from None
        try:
            sock = bind("127.0.0.1" if host == "localhost" else host, port)
        except OSError as exc:
            problem = f"cannot listen on {web['listen']} ({exc.strerror})"
            fix = "stop the program using that port, or set [web] listen to another port (or [web] enabled = false)"
            if self.table == "hardware":
                raise PartMissing("web page", problem, fix) from None
            print(f"companion: web page: {problem}; fix: {fix}; the game goes on without the page",
                  file=out, flush=True)
            return
        lan_url = None
        no_address = ""
        if web["lan"]:
            address = _lan_address() if host in ("0.0.0.0", "::") else host
            if address is None:
                no_address = (f"companion: the table's page listens on every interface ([web] listen = "
                              f"{web['listen']!r}), but this machine has no network address now (no interface "
                              "but loopback has one): connect it to the network (Wi-Fi or cable) and restart; "
                              "on the Pi itself the page is")
            else:
                lan_url = f"http://{address}:{sock.getsockname()[1]}/"
        app = make_app(self.hub, entries, token=token, lan=web["lan"], lan_url=lan_url, config=self.config)
        server = WebServer(app, sock, self.hub, lan_url=lan_url)
        server.token = token  # type: ignore[attr-defined]
        server.start()
        self.server = server
        if lan_url:
            here = f"http://127.0.0.1:{server.port}/" if host in ("0.0.0.0", "::") else server.url
            print(f"companion: the table's page on the network: {lan_url}?token={token} "
                  f"(the QR code: {here}screen on the Pi's own screen)", file=out, flush=True)
        elif no_address:
            print(f"{no_address} http://127.0.0.1:{server.port}/", file=out, flush=True)
        else:
            print(f"companion: the table's page: {server.url}", file=out, flush=True)

    def stop(self) -> None:
        """Stop the server (if it runs); safe to call twice."""
        if self.server is not None:
            self.server.stop()
            self.server = None
