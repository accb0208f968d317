"""Install the companion as a systemd service (an appliance that starts at boot).

  sudo companion service install [--user NAME] [--dry-run]
  sudo companion service uninstall [--dry-run]

install writes /etc/systemd/system/carousel-companion.service from the unit shipped in the
package, filled in with this virtual environment's `companion`, the user's configuration
file and the journal's folder; adds the user to the groups that own the devices (gpio, video,
audio, dialout: those that exist here); creates the journal and speech cache folders; then
`systemctl daemon-reload` and `systemctl enable --now carousel-companion.service`. The
service runs `companion run --table hardware --next-game wait`: only real parts, and the
next game starts without a keyboard. --dry-run prints every step and the unit, and changes
nothing (no root needed).

uninstall stops and disables the service and removes the unit file; the journal, the
configuration and the group memberships stay.

Logs: journalctl -u carousel-companion -f. See docs/appliance.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = [
    "configure",
    "run",
    "UNIT_NAME",
    "UNIT_DIR",
    "DEVICE_GROUPS",
    "unit_template",
    "render_unit",
    "install_plan",
    "uninstall_plan",
    "Step",
]

#: The unit's name in systemd.
UNIT_NAME = "carousel-companion.service"
#: Where a locally installed system unit goes (systemd.unit(5), "system unit search path").
UNIT_DIR = Path("/etc/systemd/system")
#: Groups that own the devices the service opens on Raspberry Pi OS: /dev/gpiochip* (gpio),
#: /dev/video* and the camera's /dev/media* (video), /dev/snd/* (audio), /dev/ttyACM* (dialout).
DEVICE_GROUPS = ("gpio", "video", "audio", "dialout")


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``companion service install|uninstall``."""
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    inst = sub.add_parser("install", help="write, enable and start the systemd unit (needs root)")
    inst.add_argument("--user", metavar="NAME",
                      help="account the service runs as (default: the user who ran sudo)")
    inst.add_argument("--dry-run", action="store_true", help="print what would be done; change nothing")
    un = sub.add_parser("uninstall", help="stop, disable and remove the systemd unit (needs root)")
    un.add_argument("--dry-run", action="store_true", help="print what would be done; change nothing")
    for p in (inst, un):
        p.add_argument("--config", metavar="FILE", default=argparse.SUPPRESS, help="configuration file")


@dataclasses.dataclass(frozen=True)
class Step:
    """One thing install or uninstall does.

    Attributes:
        text: what it does, in words (printed by --dry-run and as it is done).
        argv: a command to run, or None.
        write: ``(path, text)``: a file to write (mode 0644), or None.
        remove: a file to remove, or None.
        mkdir: ``(folder, uid, gid)``: a folder to create (mode 0700) owned by the user, or None.
    """

    text: str
    argv: tuple[str, ...] | None = None
    write: tuple[Path, str] | None = None
    remove: Path | None = None
    mkdir: tuple[Path, int, int] | None = None


def unit_template() -> str:
    """The unit file shipped in the package (``companion/data/carousel-companion.service``),
    with its ``@USER@``-style fields still to fill."""
    return resources.files("companion").joinpath("data", UNIT_NAME).read_text(encoding="utf-8")


def _quote(word: str) -> str:
    """One ExecStart word, quoted for systemd.service(5) "Command lines" and with ``%``
    doubled (systemd.unit(5) specifiers)."""
    word = word.replace("%", "%%")
    if word and not any(c in word for c in " \t\"'\\;$"):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"').replace("$", "$$") + '"'


def _path_word(path: Path) -> str:
    """A path for a space-separated list setting (ReadWritePaths=): ``-`` lets a missing folder
    pass; a path with a space is quoted."""
    return _quote("-" + str(path))


def render_unit(companion: Path, user: str, group: str, workdir: Path, groups: Sequence[str],
                writable: Sequence[Path], config: Path | None = None) -> str:
    """The unit file with every field filled in.

    Args:
        companion: the ``companion`` script of the virtual environment (absolute path).
        user, group: the account and its primary group the service runs as.
        workdir: the service's working directory, where relative paths of the configuration
            (``calibration/encoder.toml``) are found: the folder install is run from, as
            ``./dev`` runs there.
        groups: supplementary groups (devices); only groups that exist, or the unit fails with
            status 216/GROUP.
        writable: folders the service writes (journal, speech cache); the rest of the file
            system is read-only to it (``ProtectSystem=strict``).
        config: the configuration file to pass with ``--config``; None = the usual lookup
            (the user's ``~/.config/carousel-companion/config.toml``, then /etc).

    Returns:
        The unit file text.
    """
    argv = [str(companion)] + (["--config", str(config)] if config is not None else [])
    argv += ["run", "--table", "hardware", "--next-game", "wait"]
    fields = {
        "@USER@": user,
        "@GROUP@": group,
        "@GROUPS@": " ".join(groups),
        "@WORKDIR@": _quote(str(workdir)),
        "@EXEC_START@": " ".join(_quote(w) for w in argv),
        "@WRITABLE@": " ".join(_path_word(p) for p in writable),
    }
    text = unit_template()
    for key, value in fields.items():
        text = text.replace(key, value)
    if not groups:
        text = text.replace("SupplementaryGroups=\n", "")
    return text


def _expand(path: str, home: Path) -> Path:
    """``~/x`` under the service user's home (not root's, under sudo)."""
    if path == "~" or path.startswith("~/"):
        return home / path[2:]
    return Path(path)


@dataclasses.dataclass(frozen=True)
class _Account:
    name: str
    uid: int
    gid: int
    group: str
    home: Path
    groups: tuple[str, ...]  # supplementary groups it is listed in


def _account(name: str) -> _Account:
    import grp
    import pwd

    from companion.cli import UsageError

    try:
        pw = pwd.getpwnam(name)
    except KeyError:
        raise UsageError(f"--user {name}: no such user on this system (create it, or give another --user)") from None
    if not Path(pw.pw_dir).is_dir():
        raise UsageError(f"--user {name}: its home folder {pw.pw_dir} does not exist (a system account?); "
                         "give the account that plays, e.g. --user pi")
    try:
        group = grp.getgrgid(pw.pw_gid).gr_name
    except KeyError:
        group = str(pw.pw_gid)
    member = tuple(g.gr_name for g in grp.getgrall() if name in g.gr_mem)
    return _Account(name, pw.pw_uid, pw.pw_gid, group, Path(pw.pw_dir), member)


def _existing_groups(names: Sequence[str]) -> list[str]:
    import grp

    out = []
    for n in names:
        try:
            grp.getgrnam(n)
            out.append(n)
        except KeyError:
            pass
    return out


def _companion_script() -> Path:
    """This virtual environment's ``companion`` (beside the running Python)."""
    import shutil

    from companion.cli import UsageError

    beside = Path(sys.executable).parent / "companion"
    if beside.is_file():
        return beside.absolute()
    found = shutil.which("companion")
    if found:
        return Path(found).absolute()
    raise UsageError(f"no `companion` script beside {sys.executable}: install the package in this "
                     "environment first (./dev companion --help does)")


def _user_config(account: _Account, explicit: str | None) -> Path | None:
    """The configuration file the service will read: ``--config``, else the user's own, else
    /etc's, else None (defaults)."""
    from companion.cli import UsageError

    if explicit:
        p = Path(explicit).expanduser().absolute()
        if not p.is_file():
            raise UsageError(f"--config {explicit}: no such file")
        return p
    for p in (account.home / ".config" / "carousel-companion" / "config.toml",
              Path("/etc/carousel-companion/config.toml")):
        if p.is_file():
            return p
    return None


#: Folders the unit's ``PrivateTmp=yes`` replaces with the service's own empty ones.
PRIVATE_TMP = (Path("/tmp"), Path("/var/tmp"))


def _check_visible(paths: Mapping[str, Path]) -> None:
    """Refuse a unit whose program, working folder, journal, cache or configuration lies
    in a folder the service cannot see (systemd.exec(5), PrivateTmp=)."""
    from companion.cli import UsageError

    for what, path in paths.items():
        for hidden in PRIVATE_TMP:
            if path == hidden or hidden in path.parents:
                raise UsageError(
                    f"{what} {path} lies under {hidden}, which the service does not see (its unit has "
                    f"PrivateTmp=yes): put the clone and its .venv, the journal and the configuration "
                    f"elsewhere, e.g. /opt/carousel-companion or the user's home")


def install_plan(account: _Account, companion: Path, config_file: Path | None,
                 unit_dir: Path = UNIT_DIR, workdir: Path | None = None) -> list[Step]:
    """Every step of ``service install``, in order (``workdir``: the service's working
    directory, default the current one).

    Raises:
        companion.config.ConfigError: the configuration file is wrong (named).
        companion.cli.UsageError: the program, the working folder, the journal, the speech
            cache or the configuration lies under /tmp or /var/tmp (hidden from the service).
    """
    from companion import config as config_mod

    cfg = config_mod.load(config_file) if config_file is not None else config_mod.validate({}, "<defaults>")
    journal = _expand(cfg["service"]["journal"], account.home)
    cache = _expand(cfg["speech"]["cache_dir"], account.home)
    workdir = workdir or Path.cwd().absolute()
    _check_visible({"the program": companion, "the working folder": workdir, "the journal": journal,
                    "the speech cache": cache, **({"the configuration": config_file} if config_file else {})})
    groups = _existing_groups(DEVICE_GROUPS)
    unit = render_unit(companion, account.name, account.group, workdir, groups,
                       [journal.parent, cache], config_file)
    steps = [Step(f"write {unit_dir / UNIT_NAME}", write=(unit_dir / UNIT_NAME, unit))]
    missing = [g for g in groups if g not in account.groups]
    if missing and account.uid != 0:
        steps.append(Step(f"add {account.name} to the groups {', '.join(missing)}",
                          argv=("usermod", "-a", "-G", ",".join(missing), account.name)))
    absent = [g for g in DEVICE_GROUPS if g not in groups]
    if absent:
        steps.append(Step(f"(no group {', '.join(absent)} on this system: not a Raspberry Pi OS install?)"))
    for folder in (journal.parent, cache):
        steps.append(Step(f"create {folder} (owned by {account.name})", mkdir=(folder, account.uid, account.gid)))
    steps.append(Step("reload systemd's units", argv=("systemctl", "daemon-reload")))
    steps.append(Step(f"enable {UNIT_NAME} at boot and start it now", argv=("systemctl", "enable", "--now", UNIT_NAME)))
    return steps


def uninstall_plan(unit_dir: Path = UNIT_DIR) -> list[Step]:
    """Every step of ``service uninstall``, in order."""
    return [
        Step(f"stop {UNIT_NAME} and disable it at boot", argv=("systemctl", "disable", "--now", UNIT_NAME)),
        Step(f"remove {unit_dir / UNIT_NAME}", remove=unit_dir / UNIT_NAME),
        Step("reload systemd's units", argv=("systemctl", "daemon-reload")),
    ]


def _mkdir_owned(folder: Path, uid: int, gid: int) -> None:
    """Create ``folder`` and its missing parents, each owned by the user."""
    todo = []
    p = folder
    while not p.exists():
        todo.append(p)
        p = p.parent
    for p in reversed(todo):
        p.mkdir(mode=0o700)
        os.chown(p, uid, gid)


def execute(steps: Sequence[Step], out: Callable[[str], None] = print,
            runner: Callable[..., Any] = subprocess.run) -> None:
    """Do the steps in order, printing each.

    Raises:
        companion.cli.UsageError: a command failed (naming it and its message).
    """
    from companion.cli import UsageError

    for step in steps:
        out(step.text)
        if step.write is not None:
            path, text = step.write
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(path.name + ".new")
            tmp.write_text(text, encoding="utf-8")
            tmp.chmod(0o644)
            tmp.replace(path)
        if step.remove is not None:
            step.remove.unlink(missing_ok=True)
        if step.mkdir is not None:
            _mkdir_owned(*step.mkdir)
        if step.argv is not None:
            try:
                done = runner(list(step.argv), capture_output=True, text=True)
            except FileNotFoundError:
                raise UsageError(f"{step.argv[0]}: not found (is this a systemd system?)") from None
            if done.returncode != 0:
                message = (done.stderr or done.stdout).strip().splitlines()
                raise UsageError(f"{' '.join(step.argv)} failed: {message[-1] if message else done.returncode}")


def _print_plan(steps: Sequence[Step]) -> None:
    print("would do (dry run, nothing changed):")
    for step in steps:
        cmd = f"   $ {' '.join(step.argv)}" if step.argv else ""
        print(f"  - {step.text}{cmd}")
    for step in steps:
        if step.write is not None:
            print(f"\n--- {step.write[0]} ---")
            print(step.write[1], end="")


def _need_root(action: str) -> None:
    """One line telling to use sudo when not root."""
    from companion.cli import UsageError

    if os.geteuid() != 0:
        try:
            script = str(_companion_script())
        except UsageError:
            script = "companion"
        raise UsageError(f"service {action} changes the system: run it with sudo "
                         f"(sudo {script} service {action}), or add --dry-run to see what it would do")


def _need_systemd(booted: Path = Path("/run/systemd/system")) -> None:
    """Refuse before changing anything when systemd is not the running init (sd_booted(3))."""
    from companion.cli import UsageError

    if not booted.is_dir():
        raise UsageError("systemd is not running on this machine (no /run/systemd/system): "
                         "the service can only be installed on a systemd system such as Raspberry Pi OS")


def run(args: argparse.Namespace) -> int:
    """Run ``companion service install|uninstall``."""
    from companion.cli import UsageError

    if args.action == "uninstall":
        steps = uninstall_plan()
        if args.dry_run:
            _print_plan(steps)
            return 0
        _need_root("uninstall")
        _need_systemd()
        execute(steps)
        print(f"{UNIT_NAME} removed; the journal and the configuration are kept")
        return 0

    if not args.dry_run:
        _need_root("install")
        _need_systemd()
    name = args.user or os.environ.get("SUDO_USER") or ""
    if not name:
        raise UsageError("service install: give --user NAME, the account the service runs as "
                         "(under sudo it defaults to the user who ran sudo)")
    account = _account(name)
    steps = install_plan(account, _companion_script(), _user_config(account, getattr(args, "config", None)))
    if args.dry_run:
        _print_plan(steps)
        return 0
    execute(steps)
    print(f"{UNIT_NAME} installed and started as {account.name}. "
          "Check it: companion status; logs: journalctl -u carousel-companion -f")
    return 0
