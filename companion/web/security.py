"""Who may use the table's web page: local only by default; on the LAN, the token.

Rules (``[web]`` in the configuration):

* ``lan = false`` (the default): the server listens on the loopback address only. Pages and
  the live stream are free to read from this machine; a request whose ``Host`` is not a local
  name is refused (a web site cannot reach the page by DNS rebinding).
* ``lan = true``: every request needs the token: ``?token=...`` in the address (the QR code on
  the Pi's own screen page, ``/screen``, and the line on the console carry it), after which an
  ``HttpOnly``, ``SameSite=Strict`` cookie holds it.
* Always: a changing request (``POST``) needs the token in the ``X-Companion-Token`` header,
  which the pages read from ``/api/session``. Another site cannot send that header without a
  CORS preflight, which the server never grants, so the cookie alone changes nothing.

The token is ``[web] token`` when set; otherwise, with ``lan = true``, generated once and kept
beside the journal (``journal.web-token``, mode 0600, never through a symlink); with
``lan = false``, a fresh one per process (only local pages ever need it).
"""

from __future__ import annotations

import ipaddress
import os
import re
import secrets
import stat
from pathlib import Path

__all__ = ["load_token", "token_path_for", "is_local_host", "is_loopback", "HEADER", "COOKIE", "TOKEN_RE"]

#: The request header that carries the token of a changing request.
HEADER = "x-companion-token"
#: The cookie set after ``?token=`` on the LAN.
COOKIE = "companion_token"
#: What a token may be, ``[web] token`` or the token file's one line (:mod:`companion.config`).
TOKEN_RE = re.compile(r"[A-Za-z0-9_-]{16,128}")

_LOCAL_NAMES = {"localhost", "127.0.0.1", "::1", "[::1]"}


def token_path_for(journal_path: str | os.PathLike[str]) -> Path:
    """The token file beside a journal: ``journal.db`` -> ``journal.web-token``."""
    return Path(journal_path).expanduser().with_suffix(".web-token")


def load_token(configured: str, lan: bool, journal_path: str | os.PathLike[str]) -> str:
    """The page's token.

    Args:
        configured: ``[web] token`` ('' = none configured).
        lan: ``[web] lan``.
        journal_path: the journal (the token file goes beside it).

    Returns:
        ``configured`` if set; else with ``lan`` the token kept in :func:`token_path_for`
        (created with 32 random bytes, URL-safe, mode 0600); else a fresh per-process token.

    Raises:
        ValueError: the token file is a symlink or not a regular file, is readable by others,
            does not hold one token of :data:`TOKEN_RE`, or cannot be read or written (the message names the file and the fix).
    """
    if configured:
        return configured
    if not lan:
        return secrets.token_urlsafe(24)
    path = token_path_for(journal_path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None:
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{path}: the web token must be a regular file (not a link or folder); move it away")
        if st.st_mode & 0o077:
            raise ValueError(f"{path}: the web token is readable by other users; chmod 600 it or delete it "
                             "(a new one is made)")
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "r", encoding="ascii") as f:
                token = f.read().strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path}: cannot read the web token ({exc}); delete it (a new one is made)") from None
        if TOKEN_RE.fullmatch(token) is None:
            raise ValueError(f"{path}: the web token must be one word of 16 to 128 letters, digits, '-' or '_' "
                             "(as [web] token); delete the file (a new one is made)")
        return token
    token = secrets.token_urlsafe(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(token + "\n")
    except OSError as exc:
        raise ValueError(f"{path}: cannot write the web token ({exc.strerror}); set [web] token, or a journal "
                         "in a folder you can write") from None
    return token


def is_local_host(host_header: str) -> bool:
    """True when a ``Host`` header names this machine's loopback (``localhost:8080``, ``127.0.0.1``)."""
    host = host_header.strip().lower()
    if host.startswith("["):
        host = host[: host.find("]") + 1]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    if host in _LOCAL_NAMES:
        return True
    return is_loopback(host.strip("[]"))


def is_loopback(address: str | None) -> bool:
    """True when ``address`` (a client's IP) is a loopback address (127.0.0.0/8, ::1)."""
    if not address:
        return False
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False
