"""The address printed and put in the QR code with ``[web] lan = true`` and ``listen = 0.0.0.0``:
an interface's own address (no packet sent), never 0.0.0.0 nor the host name's 127.0.1.1."""

from __future__ import annotations

import io
import socket

from companion.config import validate
from companion.sources.entries import EntryServer
from companion.web import WebPage
from companion.web import server as web_server
from companion.web.server import _interface_addresses, _lan_address


def test_the_interfaces_addresses_are_this_machines_own():
    found = _interface_addresses()
    names = {name for _, name in socket.if_nameindex()}
    assert found and all(name in names for name, _ in found)
    assert ("lo", "127.0.0.1") in found  # loopback is read too (and skipped by _lan_address)
    for _, address in found:
        socket.inet_aton(address)  # a dotted IPv4 address


def test_the_lan_address_skips_loopback_and_prefers_the_real_interfaces():
    assert _lan_address([("lo", "127.0.0.1")]) is None
    assert _lan_address([]) is None
    assert _lan_address([("lo", "127.0.0.1"), ("docker0", "172.17.0.1"), ("wlan0", "192.168.1.20")]) == "192.168.1.20"
    assert _lan_address([("lo", "127.0.0.1"), ("eth0", "169.254.3.4"), ("wlan0", "10.0.0.7")]) == "10.0.0.7"
    assert _lan_address([("eth0", "192.168.1.5"), ("wlan0", "192.168.1.20")]) == "192.168.1.5"
    assert _lan_address([("docker0", "172.17.0.1")]) == "172.17.0.1"  # better than none
    real = _lan_address()
    assert real is None or not real.startswith(("127.", "0."))


def _start(tmp_path, monkeypatch, addresses):
    monkeypatch.setattr(web_server, "_interface_addresses", lambda: addresses)
    out = io.StringIO()
    page = WebPage(validate({"web": {"lan": True, "listen": "0.0.0.0:0"}}), tmp_path / "j.db", "sim", stream=out)
    page.start(EntryServer(tmp_path / "j.sock"))
    return page, out.getvalue()


def test_listening_everywhere_prints_the_interfaces_address(tmp_path, monkeypatch):
    page, printed = _start(tmp_path, monkeypatch, [("lo", "127.0.0.1"), ("wlan0", "192.168.1.20")])
    try:
        assert page.server.lan_url == f"http://192.168.1.20:{page.server.port}/"
        assert f"http://192.168.1.20:{page.server.port}/?token=" in printed and "0.0.0.0" not in printed
    finally:
        page.stop()


def test_no_address_but_loopback_is_said_plainly(tmp_path, monkeypatch):
    page, printed = _start(tmp_path, monkeypatch, [("lo", "127.0.0.1")])
    try:
        assert page.server.lan_url is None
        assert "this machine has no network address now" in printed and "connect it to the network" in printed
        assert f"http://127.0.0.1:{page.server.port}/" in printed and "?token=" not in printed
        assert printed.count("\n") == 1
    finally:
        page.stop()
