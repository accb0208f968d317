"""The appliance: sd_notify over a real AF_UNIX datagram socket, the unit file (checked by
systemd-analyze verify) and ``companion service install|uninstall``."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import uuid
from pathlib import Path

import pytest

from companion.commands import service as svc
from companion.systemd import Notifier


# -- sd_notify ---------------------------------------------------------------------------------

@pytest.fixture
def notify_socket(tmp_path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = tmp_path / "notify"
    sock.bind(str(path))
    sock.settimeout(2)
    yield str(path), sock
    sock.close()


def _recv(sock: socket.socket) -> str:
    return sock.recv(4096).decode()


def test_messages_reach_the_socket_in_order(notify_socket):
    path, sock = notify_socket
    n = Notifier({"NOTIFY_SOCKET": path})
    assert n.enabled
    assert n.ready("refereeing carrousel")
    assert n.status("game over:\nAna wins")
    assert n.watchdog()
    assert n.stopping()
    assert _recv(sock) == "READY=1\nSTATUS=refereeing carrousel"
    assert _recv(sock) == "STATUS=game over: Ana wins"  # one line, as systemctl shows it
    assert _recv(sock) == "WATCHDOG=1"
    assert _recv(sock) == "STOPPING=1"
    n.close()


def test_abstract_namespace_address():
    name = f"carousel-test-{uuid.uuid4().hex}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    sock.settimeout(2)
    try:
        n = Notifier({"NOTIFY_SOCKET": "@" + name})
        assert n.address == b"\0" + name.encode()
        assert n.ready()
        assert sock.recv(100) == b"READY=1"
    finally:
        sock.close()


def test_not_under_systemd_everything_is_a_no_op():
    n = Notifier({})
    assert not n.enabled
    assert n.watchdog_period_s is None
    assert not n.ready("x") and not n.status("x") and not n.watchdog() and not n.stopping()
    assert not n.tick(0.0)


def test_watchdog_period_is_half_of_watchdog_usec_for_this_process(notify_socket):
    path, _ = notify_socket
    assert Notifier({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "30000000"}).watchdog_period_s == 15.0
    mine = {"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "4000000", "WATCHDOG_PID": "1234"}
    assert Notifier(mine, pid=1234).watchdog_period_s == 2.0
    assert Notifier(mine, pid=99).watchdog_period_s is None  # another process's watchdog
    assert Notifier({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "0"}).watchdog_period_s is None
    assert Notifier({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "soon"}).watchdog_period_s is None
    assert Notifier({"WATCHDOG_USEC": "4000000"}).watchdog_period_s is None  # no socket: no systemd


def test_tick_pings_once_per_period(notify_socket):
    path, sock = notify_socket
    n = Notifier({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "2000000"})  # ping every 1 s
    sent = [t for t in (0.0, 0.4, 0.99, 1.0, 1.5, 2.2, 2.3) if n.tick(t)]
    assert sent == [0.0, 1.0, 2.2]
    assert [_recv(sock) for _ in sent] == ["WATCHDOG=1"] * 3


def test_a_vanished_socket_is_logged_not_raised(tmp_path, caplog):
    n = Notifier({"NOTIFY_SOCKET": str(tmp_path / "gone")})
    assert n.ready() is False
    assert n.watchdog() is False
    assert sum("cannot notify systemd" in r.message for r in caplog.records) == 1


# -- the unit file -----------------------------------------------------------------------------

def _unit(tmp_path: Path, config: Path | None = None) -> str:
    exe = tmp_path / "venv" / "bin" / "companion"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    return svc.render_unit(exe, "root", "root", Path("/root"), ["audio", "video"],
                           [tmp_path / "journal dir", tmp_path / "cache"], config)


def test_rendered_unit_has_the_appliance_settings(tmp_path):
    text = _unit(tmp_path, Path("/home/ana/.config/carousel-companion/config 100%.toml"))
    lines = set(text.splitlines())
    for line in ("Type=notify", "Restart=on-failure", "User=root", "SupplementaryGroups=audio video",
                 "WorkingDirectory=/root", "RuntimeDirectory=carousel-companion",
                 "Environment=PYTHONUNBUFFERED=1 LG_WD=/run/carousel-companion",
                 "StandardOutput=journal", "StandardError=journal", "WantedBy=multi-user.target"):
        assert line in lines
    assert any(line.startswith("WatchdogSec=") for line in lines)
    exec_start = next(line for line in lines if line.startswith("ExecStart="))
    assert exec_start == (f"ExecStart={tmp_path}/venv/bin/companion --config "
                          '"/home/ana/.config/carousel-companion/config 100%%.toml" '
                          "run --table hardware --next-game wait")
    assert f'ReadWritePaths="-{tmp_path}/journal dir" -{tmp_path}/cache' in lines
    # Nothing that hides the devices the table needs.
    for hiding in ("PrivateDevices=", "DeviceAllow=", "ProtectClock=", "DevicePolicy="):
        assert not any(line.startswith(hiding) for line in lines)
    assert "@" not in "".join(line for line in lines if not line.startswith("#"))


def test_no_supplementary_groups_line_without_groups(tmp_path):
    text = svc.render_unit(Path("/usr/bin/true"), "pi", "pi", Path("/home/pi"), [], [Path("/tmp")])
    assert "SupplementaryGroups" not in text


@pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                    reason="systemd-analyze is not installed (Debian package systemd; ./dev test installs it)")
def test_rendered_unit_passes_systemd_analyze_verify(tmp_path):
    unit = tmp_path / svc.UNIT_NAME
    unit.write_text(_unit(tmp_path, Path("/etc/carousel-companion/config.toml")))
    done = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
    complaints = [line for line in done.stderr.splitlines() if svc.UNIT_NAME in line]
    assert done.returncode == 0 and complaints == [], done.stderr
    # The check can fail: a unit that names a missing program is refused.
    unit.write_text(unit.read_text().replace(f"{tmp_path}/venv/bin/companion", f"{tmp_path}/no/companion"))
    done = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 or any(svc.UNIT_NAME in line for line in done.stderr.splitlines())


# -- install / uninstall -----------------------------------------------------------------------

@pytest.fixture
def visible_tmp(monkeypatch):
    """pytest's tmp_path (and maybe this clone) lie under /tmp, which the unit's PrivateTmp hides:
    for the tests of the plan's other steps, nothing is hidden."""
    monkeypatch.setattr(svc, "PRIVATE_TMP", ())


def test_a_program_or_journal_under_tmp_is_refused_in_one_line(tmp_path, monkeypatch):
    """PrivateTmp=yes gives the service its own empty /tmp: a clone under /tmp would make a unit
    that cannot start, a journal there would vanish at every stop. Refused before anything."""
    from companion.cli import UsageError

    monkeypatch.setattr(svc, "_existing_groups", lambda names: [])
    home = Path("/home/ana")
    acct = svc._Account("ana", 1000, 1000, "ana", home, ())
    with pytest.raises(UsageError, match=r"the program /tmp/clone/\.venv/bin/companion lies under /tmp.*PrivateTmp"):
        svc.install_plan(acct, Path("/tmp/clone/.venv/bin/companion"), None, unit_dir=tmp_path, workdir=home)
    cfg = tmp_path / "config.toml"
    cfg.write_text('[service]\njournal = "/var/tmp/table/journal.db"\n')
    monkeypatch.setattr(svc, "PRIVATE_TMP", (Path("/var/tmp"),))
    with pytest.raises(UsageError, match=r"the journal /var/tmp/table/journal.db lies under /var/tmp"):
        svc.install_plan(acct, Path("/opt/venv/bin/companion"), cfg, unit_dir=tmp_path, workdir=home)


def _account(tmp_path: Path, groups=("video",)) -> svc._Account:
    home = tmp_path / "home" / "ana"
    home.mkdir(parents=True)
    return svc._Account("ana", os.getuid() or 1000, os.getgid() or 1000, "ana", home, tuple(groups))


def test_install_plan_uses_the_users_paths_and_groups(tmp_path, monkeypatch, visible_tmp):
    monkeypatch.setattr(svc, "_existing_groups", lambda names: ["video", "audio", "dialout"])
    acct = _account(tmp_path)
    steps = svc.install_plan(acct, Path("/opt/venv/bin/companion"), None, unit_dir=tmp_path / "units",
                             workdir=Path("/home/ana/carousel-companion"))
    texts = [s.text for s in steps]
    assert texts[0] == f"write {tmp_path}/units/{svc.UNIT_NAME}"
    usermod = next(s for s in steps if s.argv and s.argv[0] == "usermod")
    assert usermod.argv == ("usermod", "-a", "-G", "audio,dialout", "ana")  # video: already a member
    assert any("no group gpio" in t for t in texts)
    made = [s.mkdir[0] for s in steps if s.mkdir]
    assert made == [acct.home / ".local/share/carousel-companion", acct.home / ".cache/carousel-companion/speech"]
    assert [s.argv for s in steps if s.argv][-2:] == [("systemctl", "daemon-reload"),
                                                       ("systemctl", "enable", "--now", svc.UNIT_NAME)]
    unit = steps[0].write[1]
    assert "SupplementaryGroups=video audio dialout" in unit
    assert "WorkingDirectory=/home/ana/carousel-companion" in unit
    assert f"-{acct.home}/.local/share/carousel-companion" in unit  # ~ is the user's home, not root's


def test_install_plan_reads_the_journal_folder_from_the_config(tmp_path, monkeypatch, visible_tmp):
    monkeypatch.setattr(svc, "_existing_groups", lambda names: [])
    acct = _account(tmp_path)
    cfg = tmp_path / "config.toml"
    cfg.write_text('[service]\njournal = "/srv/table/journal.db"\n')
    steps = svc.install_plan(acct, Path("/opt/venv/bin/companion"), cfg, unit_dir=tmp_path)
    assert steps[0].write is not None and f"--config {cfg} run" in steps[0].write[1]
    assert Path("/srv/table") in [s.mkdir[0] for s in steps if s.mkdir]


def test_execute_writes_creates_and_runs_in_order(tmp_path, monkeypatch, visible_tmp):
    monkeypatch.setattr(svc, "_existing_groups", lambda names: ["audio"])
    acct = _account(tmp_path, groups=())
    steps = svc.install_plan(acct, Path("/opt/venv/bin/companion"), None, unit_dir=tmp_path / "units")
    ran, printed = [], []

    def runner(argv, **kw):
        ran.append(argv)
        return subprocess.CompletedProcess(argv, 0, "", "")

    svc.execute(steps, out=printed.append, runner=runner)
    unit = tmp_path / "units" / svc.UNIT_NAME
    assert unit.read_text() == steps[0].write[1]
    assert oct(unit.stat().st_mode & 0o777) == "0o644"
    journal_dir = acct.home / ".local/share/carousel-companion"
    assert journal_dir.is_dir() and oct(journal_dir.stat().st_mode & 0o777) == "0o700"
    assert ran == [["usermod", "-a", "-G", "audio", "ana"], ["systemctl", "daemon-reload"],
                   ["systemctl", "enable", "--now", svc.UNIT_NAME]]
    assert printed == [s.text for s in steps]


def test_a_failing_command_stops_with_its_message(tmp_path):
    from companion.cli import UsageError

    def runner(argv, **kw):
        return subprocess.CompletedProcess(argv, 1, "", "Failed to connect to bus: Host is down\n")

    steps = svc.uninstall_plan(tmp_path)
    with pytest.raises(UsageError, match="systemctl disable --now carousel-companion.service failed: "
                                         "Failed to connect to bus"):
        svc.execute(steps, out=lambda s: None, runner=runner)


def test_uninstall_plan(tmp_path):
    steps = svc.uninstall_plan(tmp_path)
    assert [s.argv for s in steps] == [("systemctl", "disable", "--now", svc.UNIT_NAME), None,
                                       ("systemctl", "daemon-reload")]
    assert steps[1].remove == tmp_path / svc.UNIT_NAME


def _companion(*args):
    from companion.cli import main
    return main(list(args))


def _never(*a, **k):
    raise AssertionError("a dry run must change nothing")


def test_cli_dry_run_prints_the_unit_and_changes_nothing(capsys, monkeypatch, visible_tmp):
    import pwd

    monkeypatch.setattr(svc, "execute", _never)
    me = pwd.getpwuid(os.getuid()).pw_name
    assert _companion("service", "install", "--user", me, "--dry-run") == 0
    out = capsys.readouterr().out
    assert out.startswith("would do (dry run, nothing changed):")
    assert f"--- {svc.UNIT_DIR / svc.UNIT_NAME} ---" in out
    assert "Type=notify" in out and "run --table hardware --next-game wait" in out
    assert _companion("service", "uninstall", "--dry-run") == 0
    assert "systemctl disable --now carousel-companion.service" in capsys.readouterr().out


def test_cli_not_root_says_sudo(monkeypatch, capsys):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(svc, "execute", _never)
    assert _companion("service", "install", "--user", "ana") == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("companion: error: service install changes the system: run it with sudo (sudo ")
    assert "\n" not in err
    assert _companion("service", "uninstall") == 2
    assert "run it with sudo" in capsys.readouterr().err


def test_cli_unknown_user_is_one_line(capsys):
    assert _companion("service", "install", "--user", "no-such-user-xyz", "--dry-run") == 2
    assert capsys.readouterr().err.strip() == (
        "companion: error: --user no-such-user-xyz: no such user on this system (create it, or give another --user)")


def test_without_systemd_install_is_refused_in_one_line(tmp_path):
    from companion.cli import UsageError

    with pytest.raises(UsageError, match="^systemd is not running on this machine"):
        svc._need_systemd(tmp_path / "not-booted")
    svc._need_systemd(tmp_path)  # a folder that exists: booted with systemd
