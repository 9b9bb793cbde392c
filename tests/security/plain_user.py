"""Run the security suite again as an unprivileged user, from a root test run.

Root passes checks a plain user fails and the other way round (bwrap without setuid
needs user namespaces; ``/proc`` of another user's process is closed to a plain user
anyway), so every defence is shown under both. The plain run needs a Python the user
may execute (the test's own may live under ``/root``): the same major.minor found on
``PATH`` or in ``/usr/bin``, made into a small venv whose site path is this run's
site-packages, with a ``smith`` script beside it (``tests/support/smith_cli.py`` finds
the binary next to ``sys.executable``). Where the user cannot read the checkout or the
site-packages, both are copied into a folder the user owns.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

USER = "smith-plain"
"""The account the plain run uses (created when missing)."""
ROOT = Path(__file__).resolve().parents[2]
MARK_ENV = "SMITH_SECURITY_PLAIN"
"""Set in the plain run's environment, so it does not start another."""


@dataclass(frozen=True)
class Account:
    """The plain user's ids."""

    name: str
    uid: int
    gid: int


def ensure_account() -> Account:
    """The plain user, created with ``useradd`` when it does not exist yet."""
    try:
        entry = pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(
            [
                "useradd",
                "--system",
                "--user-group",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                USER,
            ],
            check=True,
            capture_output=True,
        )
        entry = pwd.getpwnam(USER)
    return Account(entry.pw_name, entry.pw_uid, entry.pw_gid)


def as_user(
    account: Account, argv: list[str], **kwargs: object
) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` as ``account`` (no supplementary groups), output captured as text."""
    return subprocess.run(  # type: ignore[call-overload,no-any-return]
        argv,
        user=account.uid,
        group=account.gid,
        extra_groups=[],
        capture_output=True,
        text=True,
        **kwargs,
    )


def _readable(account: Account, path: Path) -> bool:
    probe = as_user(account, ["test", "-r", str(path), "-a", "-x", str(path)], cwd="/")
    return probe.returncode == 0


def _interpreter(account: Account) -> str:
    """A Python of this run's major.minor that ``account`` can execute."""
    wanted = f"{sys.version_info.major}.{sys.version_info.minor}"
    candidates = [os.path.realpath(sys.executable)]
    for folder in ("/usr/bin", "/usr/local/bin", *os.environ.get("PATH", "").split(os.pathsep)):
        candidates.append(os.path.join(folder, f"python{wanted}"))
    for candidate in dict.fromkeys(candidates):
        if not os.path.isfile(candidate):
            continue
        try:
            probe = as_user(
                account,
                [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                cwd="/",
            )
        except PermissionError:
            continue  # a folder on its path is closed to the user (e.g. under /root)
        if probe.returncode == 0 and probe.stdout.strip() == wanted:
            return candidate
    raise RuntimeError(
        f"no Python {wanted} that the user {account.name} may run was found (tried "
        f"{', '.join(dict.fromkeys(candidates))}); install python{wanted} (Debian: apt-get "
        f"install python{wanted}) to run the security suite as a plain user"
    )


@dataclass(frozen=True)
class PlainRun:
    """What a finished plain run printed."""

    returncode: int
    output: str
    python: str
    copied: bool


def run_as_plain_user(args: list[str], *, timeout: float, report: str = "") -> PlainRun:
    """Run ``pytest ARGS`` from the checkout as the plain user; its folder is removed after."""
    account = ensure_account()
    python = _interpreter(account)
    site = Path(sysconfig.get_paths()["purelib"])
    work = Path(tempfile.mkdtemp(prefix="smith-plain-"))
    try:
        os.chmod(work, 0o755)
        root, site_dir, copied = ROOT, site, False
        if not (_readable(account, ROOT) and _readable(account, site)):
            ignore = shutil.ignore_patterns(".git", ".venv", "__pycache__")
            root = work / "checkout"
            shutil.copytree(ROOT, root, symlinks=True, ignore=ignore)
            site_dir = work / "site-packages"
            shutil.copytree(site, site_dir, symlinks=True, ignore=ignore)
            copied = True
        venv = work / "venv"
        subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True)
        venv_site = Path(
            sysconfig.get_paths(vars={"base": str(venv), "platbase": str(venv)})["purelib"]
        )
        (venv_site / "_smith_plain.py").write_text(
            _BOOT.format(site=str(site_dir), old=str(ROOT), new=str(root)), encoding="utf-8"
        )
        (venv_site / "_smith_plain.pth").write_text("import _smith_plain\n", encoding="utf-8")
        smith = venv / "bin" / "smith"
        smith.write_text(
            f"#!{venv / 'bin' / 'python'}\nimport sys\nfrom smith_tui.cli import main\n"
            "sys.exit(main())\n",
            encoding="utf-8",
        )
        smith.chmod(0o755)
        home = work / "home"
        home.mkdir()
        basetemp = work / "basetemp"
        for path in (home, work):
            os.chown(path, account.uid, account.gid)
        env = {
            "HOME": str(home),
            "USER": account.name,
            "LOGNAME": account.name,
            "PATH": os.pathsep.join(
                [
                    str(venv / "bin"),
                    "/usr/local/bin",
                    "/usr/bin",
                    "/bin",
                    str(Path(sys.executable).parent),
                ]
            ),
            "SHELL": "/bin/sh",  # the account's login shell is nologin; tmux runs panes with $SHELL
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "TMPDIR": "/tmp",
            MARK_ENV: "1",
        }
        if report:
            env["SMITH_SECURITY_REPORT"] = report
        done = as_user(
            account,
            [str(venv / "bin" / "python"), "-m", "pytest", f"--basetemp={basetemp}", *args],
            cwd=str(root),
            env=env,
            timeout=timeout,
        )
        return PlainRun(done.returncode, done.stdout + done.stderr, python, copied)
    finally:
        shutil.rmtree(work, ignore_errors=True)


_BOOT = '''"""Makes this venv see the security run's packages (written by tests/security/plain_user.py)."""
import site
import sys

site.addsitedir({site!r})
for _name, _module in list(sys.modules.items()):
    _mapping = getattr(_module, "MAPPING", None)
    if _name.startswith("__editable__") and isinstance(_mapping, dict):
        for _key, _path in list(_mapping.items()):
            if _path.startswith({old!r}):
                _mapping[_key] = {new!r} + _path[len({old!r}):]
'''
