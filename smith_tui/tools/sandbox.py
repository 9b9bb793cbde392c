"""The sandbox ``bash`` commands run in: bubblewrap (``bwrap``) on Linux.

Inside the sandbox the whole filesystem is mounted read-only except the
project folder, a private ``/tmp`` and the folders in ``sandbox.writable``;
every ``.git`` under the project (folder or file, nested ones too) stays
read-only unless ``sandbox.git_writable``; the network is a private, empty
namespace unless ``sandbox.network``.

What a command cannot reach:

- the host's processes: it has its own PID namespace and its own read-only
  ``/proc`` (so no ``/proc/<pid>/root``, ``environ`` or ``fd`` of Smith or of
  anything else), and its own System V IPC namespace;
- the host's unix sockets in the usual folders: ``/run`` (and ``/var/run``),
  ``$XDG_RUNTIME_DIR`` and ``$TMUX_TMPDIR`` are empty tmpfs, ``/tmp`` is a
  per-project scratch folder, ``/dev`` is a minimal one, the socket files the
  environment names (``SSH_AUTH_SOCK``, ``TMUX``, …) are covered with
  ``/dev/null``, and those variables are not in its environment. Abstract
  unix sockets live in the network namespace: gone without network, reachable
  with ``sandbox.network`` true;
- a terminal: ``--new-session`` leaves it without a controlling terminal;
- Smith's own files: its config and data folders are hidden;
- privileges: ``--cap-drop ALL`` (running as root, bwrap would otherwise keep
  every capability, enough to remount ``/`` read-write).

Lifetime: bwrap's outer process exits as soon as the command (pid 2 in the
namespace) exits, with its exit status; ``--die-with-parent`` then SIGKILLs the
namespace's pid 1, and the kernel kills everything else in the namespace
(``nohup``, ``setsid``, double forks alike). ``--die-with-parent`` also ties
bwrap to Smith, so a killed Smith takes the namespace down. ``--new-session``
puts the namespace in a session of its own, so a signal to bwrap's process
group reaches only the outer bwrap, whose death ends the namespace as above;
:class:`NamespaceInit` lets the caller check it is gone, and kill it when not.

``sandbox.mode`` decides whether it is used: ``auto`` when bwrap is present
and works (probed once per bwrap binary with every flag used here, the answer
cached), ``on`` always (a command fails when it cannot be), ``off`` never.

What still holds: a command can read every file the user can read (outside
the hidden folders), and connect to a unix socket file in any folder it can
see that is not hidden (e.g. ``~/.gnupg/S.gpg-agent``, ``/var/tmp``, the
project). It can create a new ``.git`` in the project.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from smith_tui.config.locations import config_dir, data_dir

if TYPE_CHECKING:
    # Imported where used: the probe and the state (the status line's first frame, before
    # the schema and pydantic are imported) need neither.
    from smith_tui.config.schema import SandboxConfig

PROBE_TIMEOUT_S = 10.0
INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install "
    "bubblewrap; Arch: pacman -S bubblewrap) or set sandbox.mode off"
)
MIN_VERSION = "0.3.1"
"""The oldest bubblewrap that knows every flag used here (``--bind-try`` came last)."""

_READ_ONLY = re.compile(r"read-only file system", re.IGNORECASE)
_NO_NETWORK = re.compile(
    r"network is unreachable|temporary failure in name resolution|could not resolve|"
    r"name or service not known|no address associated with hostname|"
    r"connection refused|failed to establish a new connection|getaddrinfo",
    re.IGNORECASE,
)
_UNKNOWN_OPTION = re.compile(r"unknown option\s*(\S*)|unrecognized option\s*(\S*)", re.IGNORECASE)

SOCKET_VARIABLES = (
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "TMUX",
    "TMUX_PANE",
    "STY",
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "KITTY_LISTEN_ON",
    "NVIM",
    "NVIM_LISTEN_ADDRESS",
    "VSCODE_IPC_HOOK_CLI",
    "DOCKER_HOST",
    "CONTAINER_HOST",
    "SWAYSOCK",
    "I3SOCK",
    "GPG_AGENT_INFO",
    "PULSE_SERVER",
)
"""Variables naming a way out of the sandbox (a socket, a display, an agent): left out of
a sandboxed command's environment, and the socket files they name are covered."""

HIDDEN_FOLDERS = ("/run", "/var/run")
"""Folders of host sockets (D-Bus, docker, systemd, …) replaced by an empty tmpfs."""

# The first ``--``-flag of the command line is the one a too old bwrap does not know.
_CORE_FLAGS = (
    "--die-with-parent",
    "--new-session",
    "--unshare-pid",
    "--unshare-ipc",
    "--cap-drop",
    "ALL",
)


@dataclass(frozen=True)
class Probe:
    """Whether bwrap can be used here: its path, and why not when it cannot."""

    path: str | None
    ok: bool
    reason: str = ""


@dataclass(frozen=True)
class SandboxState:
    """Whether bash commands run sandboxed under the current settings, and why not."""

    mode: str
    active: bool
    reason: str = ""
    """Why commands are not sandboxed (empty when they are, or when the mode is off)."""
    network: bool = False
    bwrap: str | None = None
    """The bwrap binary to run (when ``active``)."""

    @property
    def required_but_missing(self) -> bool:
        """``sandbox.mode`` is ``on`` but the sandbox cannot be used: commands fail."""
        return self.mode == "on" and not self.active

    def label(self) -> str:
        """A few words for a status line: ``sandboxed``, ``sandbox off``, ``unsandboxed`` …"""
        if self.active:
            return "sandboxed" + (" (network on)" if self.network else "")
        if self.mode == "off":
            return "sandbox off"
        if self.required_but_missing:
            return "sandbox unavailable"
        return "unsandboxed"

    def notice(self) -> str:
        """What to tell the user once when commands cannot be sandboxed ('' when fine)."""
        if self.active or self.mode == "off":
            return ""
        linux = sys.platform.startswith("linux")
        if self.required_but_missing:
            fix = f"To fix it, {INSTALL_HINT}." if linux else "Set sandbox.mode off."
            return (
                f"Sandbox: sandbox.mode is on but {self.reason}, so bash commands will fail. {fix}"
            )
        fix = f"To confine them, {INSTALL_HINT} (that hides this notice)."
        if not linux:
            fix = "Set sandbox.mode off to hide this notice."
        return (
            f"Sandbox: {self.reason}, so bash commands run unsandboxed with your full access "
            f"to files and network. {fix}"
        )


_PROBES: dict[str | None, Probe] = {}


def probe_bwrap() -> Probe:
    """Find bwrap on ``PATH`` and check once that it can build a sandbox here.

    The answer is cached per bwrap binary, so a later ``PATH`` without bwrap
    (or with another one) is probed afresh.
    """
    if not sys.platform.startswith("linux"):
        return _NOT_LINUX
    found = _bwrap_on_path()
    cached = _PROBES.get(found)
    if cached is not None:
        return cached
    probe = _run_probe(found)
    _PROBES[found] = probe
    return probe


def cached_probe() -> Probe | None:
    """The answer of :func:`probe_bwrap` when the bwrap on ``PATH`` is probed already
    (``None`` when it is not: probing runs bwrap, which can take a while)."""
    if not sys.platform.startswith("linux"):
        return _NOT_LINUX
    return _PROBES.get(_bwrap_on_path())


_NOT_LINUX = Probe(None, False, "the sandbox (bubblewrap) is only available on Linux")


def _bwrap_on_path() -> str | None:
    path = shutil.which("bwrap")
    return os.path.realpath(path) if path else None


def _run_probe(path: str | None) -> Probe:
    if path is None:
        return Probe(None, False, "bubblewrap (bwrap) is not installed (not found on PATH)")
    # Every flag a command line uses, so a bwrap too old for one is found here.
    argv = [path, *_CORE_FLAGS, *_filesystem(None, hidden_folders())]
    argv += ["--unshare-net", "--info-fd", "2"]
    argv += ["--bind-try", "/nonexistent-smith-probe", "/nonexistent-smith-probe", "true"]
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return Probe(path, False, f"bubblewrap ({path}) could not be run: {exc}")
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip().splitlines()
        why = detail[-1] if detail else f"exit code {done.returncode}"
        if unknown := _UNKNOWN_OPTION.search(why):
            flag = unknown.group(1) or unknown.group(2) or "a flag it needs"
            return Probe(
                path,
                False,
                f"bubblewrap {_version(path)} ({path}) is too old for the sandbox (it does not "
                f"know {flag}); install bubblewrap {MIN_VERSION} or newer",
            )
        return Probe(path, False, f"bubblewrap ({path}) does not work here: {why}")
    return Probe(path, True)


def sandbox_state(settings: SandboxConfig) -> SandboxState:
    """Whether commands run sandboxed under ``settings`` (probes bwrap unless the mode is off)."""
    return sandbox_state_for(settings.mode, settings.network)


def sandbox_state_for(mode: str, network: bool) -> SandboxState:
    """:func:`sandbox_state` from ``sandbox.mode`` and ``sandbox.network`` as plain values
    (the status line's first frame has them before the schema is imported)."""
    if mode == "off":
        return SandboxState("off", False, network=network)
    probe = probe_bwrap()
    return SandboxState(mode, probe.ok, probe.reason, network, probe.path)


def cached_sandbox_state(settings: SandboxConfig) -> SandboxState | None:
    """:func:`sandbox_state` when it needs no probe (the mode is off, or bwrap is probed
    already); ``None`` when it would probe."""
    if settings.mode == "off":
        return SandboxState("off", False, network=settings.network)
    probe = cached_probe()
    return None if probe is None else _state(settings, probe)


def _state(settings: SandboxConfig, probe: Probe) -> SandboxState:
    return SandboxState(settings.mode, probe.ok, probe.reason, settings.network, probe.path)


def _real(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.path.expanduser(path))


def _version(path: str) -> str:
    """What ``bwrap --version`` says (``bubblewrap 0.8.0`` → ``0.8.0``), or ``(version unknown)``."""
    try:
        done = subprocess.run(
            [path, "--version"], capture_output=True, timeout=PROBE_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return "(version unknown)"
    words = done.stdout.decode(errors="replace").split()
    return words[-1] if done.returncode == 0 and words else "(version unknown)"


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def hidden_folders() -> list[str]:
    """The folders a sandboxed command sees as empty: socket folders and Smith's own files.

    ``/run`` and ``/var/run`` (when it is a folder of its own), ``$XDG_RUNTIME_DIR``,
    ``$TMUX_TMPDIR``, and Smith's config and data folders (other projects' transcripts,
    a config file that may hold keys). ``/tmp`` is not listed: it is replaced by a
    scratch folder.
    """
    found: list[str] = []
    candidates: list[str | Path] = [*HIDDEN_FOLDERS, config_dir(), data_dir()]
    for variable in ("XDG_RUNTIME_DIR", "TMUX_TMPDIR"):
        value = os.environ.get(variable, "")
        if os.path.isabs(value):
            candidates.append(value)
    for candidate in candidates:
        if os.path.islink(candidate):  # /var/run -> /run: covered by its target
            continue
        folder = _real(candidate)
        if folder != "/" and os.path.isdir(folder) and folder not in found:
            found.append(folder)
    return found


_PATH_IN_VALUE = re.compile(r"/[^,;=\s]+")


def socket_files(environ: Mapping[str, str] | None = None) -> list[str]:
    """The unix socket files the variables of :data:`SOCKET_VARIABLES` name (existing ones).

    ``TMUX=/tmp/tmux-0/default,123,0``, ``DBUS_SESSION_BUS_ADDRESS=unix:path=/run/…``,
    ``DOCKER_HOST=unix:///var/run/docker.sock``: every absolute path in the value is
    checked; a relative ``WAYLAND_DISPLAY`` is looked up in ``$XDG_RUNTIME_DIR``.
    """
    source = os.environ if environ is None else environ
    found: list[str] = []
    for variable in SOCKET_VARIABLES:
        value = source.get(variable, "")
        paths = _PATH_IN_VALUE.findall(value)
        runtime = source.get("XDG_RUNTIME_DIR", "")
        if variable == "WAYLAND_DISPLAY" and value and not value.startswith("/") and runtime:
            paths.append(os.path.join(runtime, value))
        for path in paths:
            try:
                is_socket = stat.S_ISSOCK(os.lstat(path).st_mode)
            except OSError:
                continue
            real = _real(path)
            if is_socket and real not in found:
                found.append(real)
    return found


def scratch_folder(project: Path) -> Path | None:
    """The project's private ``/tmp``: a folder of Smith's data folder, kept across commands.

    ``None`` when it cannot be made (the command then gets an empty tmpfs ``/tmp``).
    """
    import hashlib  # here: the probe (the status line's first frame) does not need it

    root = _real(project)
    name = hashlib.sha256(root.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    folder = data_dir() / "sandbox-tmp" / f"{Path(root).name or 'root'}-{name}"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if folder.is_symlink() or not folder.is_dir():
            return None
    except OSError:
        return None
    return folder


def sandbox_environ(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` for a sandboxed command: no :data:`SOCKET_VARIABLES`, ``TMPDIR=/tmp``."""
    clean = {key: value for key, value in env.items() if key not in SOCKET_VARIABLES}
    clean["TMPDIR"] = "/tmp"
    return clean


def _filesystem(scratch: Path | None, hidden: list[str]) -> list[str]:
    """The mounts every sandbox starts with: ``/`` read-only, a fresh ``/dev``, a fresh
    read-only ``/proc`` (mounted after ``/``, else the host's would cover it), the
    ``hidden`` folders (:func:`hidden_folders`) and the private ``/tmp``."""
    line = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--remount-ro", "/proc"]
    for folder in hidden:
        line += ["--tmpfs", folder]
    if scratch is None:
        line += ["--tmpfs", "/tmp"]
    else:
        line += ["--bind", str(scratch), "/tmp"]
    return line


SETTLED_NS = 3_000_000_000
"""A folder whose ctime is at least this old (by the wall clock) may keep its listing in
the walk's cache: a change after the listing then always gives it a later ctime, even on a
filesystem that keeps whole seconds. One changed more recently is listed again next time."""

CACHED_FILESYSTEMS = frozenset(
    ("ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "f2fs", "zfs", "overlay", "bcachefs")
)
"""Local filesystems whose folders' ctime changes with every entry added, removed or
renamed: only folders on them are cached (a network or FUSE filesystem is listed anew)."""

_MAX_CACHED_PROJECTS = 4


@dataclass(frozen=True, slots=True)
class _Listing:
    """What the walk needs of one folder: its subfolders (not links, not ``.git``) and
    whether it holds a ``.git``. ``key`` (device, inode, ctime, mtime) is ``None`` when
    the listing must not be reused."""

    key: tuple[int, int, int, int] | None
    folders: tuple[str, ...]
    git: bool


_LISTINGS: dict[str, tuple[int, dict[str, _Listing]]] = {}
"""Per project root: the wall clock when it was last walked, and the listings kept."""
_LISTINGS_LOCK = threading.Lock()


def git_paths(root: str | os.PathLike[str]) -> list[str]:
    """Every ``.git`` (folder or file) under ``root``, ``root/.git`` first.

    One walk of the project that never follows a symlink below ``root``, never
    enters a ``.git`` and reads each folder with ``scandir`` (no ``stat`` per file);
    a symlink named ``.git`` is left out (the folder it points to is found where it
    lies, if inside the project).

    Each folder is ``lstat``-ed on every walk; its listing from the walk before is
    reused only while its device, inode, ctime and mtime are unchanged (an entry
    added, removed or renamed in it changes its ctime, which no user can set), it
    lies on one of :data:`CACHED_FILESYSTEMS` and its ctime had settled (see
    :data:`SETTLED_NS`) when it was listed. So a ``.git`` that exists when the
    walk starts is always found, whoever made it.
    """
    start = os.fspath(root)
    now = time.time_ns()
    devices = _cacheable_devices()
    with _LISTINGS_LOCK:
        walked, before = _LISTINGS.get(start, (now, {}))
    if now < walked:  # the clock was set back: a new ctime might repeat an old one
        before = {}
    after: dict[str, _Listing] = {}
    found: list[str] = []
    pending = [start]
    while pending:
        folder = pending.pop()
        listing = _listing(folder, before.get(folder), now, devices, follow=folder == start)
        if listing is None:
            continue
        if listing.key is not None:
            after[folder] = listing
        if listing.git:
            found.append(os.path.join(folder, ".git"))
        pending.extend(os.path.join(folder, name) for name in listing.folders)
    with _LISTINGS_LOCK:
        _LISTINGS.pop(start, None)
        _LISTINGS[start] = (now, after)
        while len(_LISTINGS) > _MAX_CACHED_PROJECTS:
            del _LISTINGS[next(iter(_LISTINGS))]
    top = os.path.join(start, ".git")
    found.sort(key=lambda path: (path != top, path))
    return found


def _listing(
    folder: str, cached: _Listing | None, now: int, devices: frozenset[int], *, follow: bool
) -> _Listing | None:
    """``folder``'s listing: the cached one while the folder is unchanged, else read
    afresh. ``None`` when it is no folder (any more) or cannot be read."""
    try:
        # Before the scandir: a change between the two leaves a key that no longer matches.
        info = os.stat(folder) if follow else os.lstat(folder)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode):
        return None
    key = (info.st_dev, info.st_ino, info.st_ctime_ns, info.st_mtime_ns)
    cacheable = info.st_dev in devices
    if cacheable and cached is not None and cached.key == key:
        return cached
    folders: list[str] = []
    git = False
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    if entry.name == ".git":
                        # a folder or a file (a submodule's), never a link
                        kind = not entry.is_symlink() and (entry.is_dir() or entry.is_file())
                        git = git or kind
                    elif entry.is_dir(follow_symlinks=False):
                        folders.append(entry.name)
                except OSError:
                    continue
    except OSError:
        return None
    settled = cacheable and 0 < info.st_ctime_ns < now - SETTLED_NS
    return _Listing(key if settled else None, tuple(folders), git)


def _cacheable_devices() -> frozenset[int]:
    """The devices (``st_dev``) of the mounted :data:`CACHED_FILESYSTEMS`, from
    ``/proc/self/mountinfo`` (none when it cannot be read: nothing is cached)."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as table:
            lines = table.read().splitlines()
    except OSError:
        return frozenset()
    devices = set()
    for line in lines:
        fields, _, rest = line.partition(" - ")
        parts = fields.split()
        kind = rest.split(" ", 1)[0]
        if len(parts) < 3 or kind not in CACHED_FILESYSTEMS:
            continue
        major, _, minor = parts[2].partition(":")
        if major.isdigit() and minor.isdigit():
            devices.add(os.makedev(int(major), int(minor)))
    return frozenset(devices)


def _git_mounts(root: str) -> list[str]:
    """Read-only binds of every ``.git`` under ``root``; a nested one's folders up to the
    project are bound onto themselves first, which makes them mount points a command
    cannot rename away (and put a fresh ``.git`` in their place)."""
    gits = git_paths(root)
    ancestors: set[str] = set()
    for git in gits:
        folder = os.path.dirname(git)
        while folder != root and _inside(folder, root):
            ancestors.add(folder)
            folder = os.path.dirname(folder)
    line: list[str] = []
    for folder in sorted(ancestors, key=lambda path: (path.count("/"), path)):
        line += ["--bind", folder, folder]
    for git in gits:
        line += ["--ro-bind", git, git]
    return line


def bwrap_argv(
    bwrap: str,
    argv: Sequence[str],
    *,
    cwd: Path,
    project: Path,
    settings: SandboxConfig,
    project_writable: bool = True,
    info_fd: int | None = None,
) -> list[str]:
    """The command line that runs ``argv`` in the sandbox.

    ``project_writable=False`` makes the project folder read-only too (for a
    read-only permission mode); the private ``/tmp`` and ``sandbox.writable``
    stay writable. Later mounts cover earlier ones, so the project (and its
    ``.git`` folders) is mounted after every writable folder: a parent folder in
    ``sandbox.writable``, or a project under ``/tmp``, cannot undo it; the socket
    files are covered last. ``info_fd`` asks bwrap to write the host pid of the
    namespace's pid 1 there (see :class:`NamespaceInit`).
    """
    line = [bwrap, *_CORE_FLAGS]
    if not settings.network:
        line.append("--unshare-net")
    hidden = hidden_folders()
    line += _filesystem(scratch_folder(project), hidden)
    for folder in settings.writable:
        line += ["--bind-try", _real(folder), _real(folder)]
    root = _real(project)
    if not project_writable:
        # Read-only even when it lies inside a writable folder (a project under /tmp).
        line += ["--ro-bind", root, root]
    else:
        line += ["--bind", root, root]
        if not settings.git_writable:
            line += _git_mounts(root)
    hidden.append("/tmp")
    shown = [root, *(_real(folder) for folder in settings.writable)]
    for socket in socket_files():
        # One in a hidden folder is gone already, unless a later mount shows it again.
        if any(_inside(socket, folder) for folder in shown) or not any(
            _inside(socket, folder) for folder in hidden
        ):
            line += ["--ro-bind", "/dev/null", socket]
    line += ["--chdir", _real(cwd), *argv]
    return line if info_fd is None else with_info_fd(line, info_fd)


def with_info_fd(line: Sequence[str], info_fd: int) -> list[str]:
    """``line`` (from :func:`bwrap_argv`) with bwrap asked to write the host pid of the
    namespace's pid 1 to ``info_fd`` (see :class:`NamespaceInit`)."""
    at = 1 + len(_CORE_FLAGS)
    if tuple(line[1:at]) != tuple(_CORE_FLAGS):
        raise ValueError("not a command line of bwrap_argv")
    return [*line[:at], "--info-fd", str(info_fd), *line[at:]]


@dataclass(frozen=True)
class NamespaceInit:
    """The host pid of a sandbox's pid 1, from bwrap's ``--info-fd`` report.

    Its death ends every process of the sandbox. ``started`` (the kernel's start
    time of the process) and the check that it is pid 1 of a namespace of its own
    keep a reused pid from being mistaken for it.
    """

    pid: int
    started: str

    @classmethod
    def from_info(cls, info: bytes) -> NamespaceInit | None:
        """Parse bwrap's report (``{"child-pid": 123, …}``); ``None`` when it has none."""
        try:
            pid = int(json.loads(info.decode(errors="replace"))["child-pid"])
        except (ValueError, KeyError, TypeError):
            return None
        started = _start_time(pid)
        return cls(pid, started) if started else None

    def open_pidfd(self) -> int | None:
        """A pidfd of the namespace's pid 1 (readable once it has ended), or ``None`` when
        it has ended already or this system has no pidfds (then poll :meth:`alive`)."""
        opener = getattr(os, "pidfd_open", None)
        if opener is None:
            return None
        try:
            fd: int = opener(self.pid)
        except OSError:
            return None
        if not self.alive():  # it ended before the open, and the pid may be another's now
            os.close(fd)
            return None
        return fd

    def alive(self) -> bool:
        """Whether the namespace's pid 1 still runs (not a zombie)."""
        try:
            stat_line = Path(f"/proc/{self.pid}/stat").read_text()
            status = Path(f"/proc/{self.pid}/status").read_text()
        except OSError:
            return False
        fields = stat_line[stat_line.rfind(")") + 2 :].split()
        if len(fields) < 20 or fields[19] != self.started or fields[0] in ("Z", "X"):
            return False
        nspid = next(
            (line.split()[1:] for line in status.splitlines() if line.startswith("NSpid:")), []
        )
        return len(nspid) >= 2 and nspid[-1] == "1"

    def kill(self) -> None:
        """SIGKILL the namespace's pid 1 (so the kernel kills the rest) if it still runs."""
        if self.alive():
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass


def _start_time(pid: int) -> str:
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    fields = stat_line[stat_line.rfind(")") + 2 :].split()
    return fields[19] if len(fields) >= 20 else ""


def failure_note(output: str, settings: SandboxConfig, *, project_writable: bool = True) -> str:
    """A note for a failed sandboxed command whose output shows the sandbox stopped it.

    Empty when the output shows no sign of it. The note names the setting that
    would widen the sandbox, so the model can ask the user instead of retrying.
    """
    notes = []
    if _READ_ONLY.search(output):
        where = "outside the temp folder and sandbox.writable"
        if project_writable:
            where = "outside the project folder, the temp folder and sandbox.writable"
        if not settings.git_writable:
            where += ", and the project's .git folder,"
        notes.append(
            f"note: this command ran in the bash sandbox (bubblewrap), where everything {where} "
            "is read-only. If it has to write there, ask the user to widen the sandbox: add "
            "the folder to sandbox.writable"
            + ("" if settings.git_writable else ", set sandbox.git_writable true for .git")
            + " or set sandbox.mode off (e.g. /config set sandbox.writable "
            "'[\"/path\"]'); retrying it unchanged will fail the same way."
        )
    if not settings.network and _NO_NETWORK.search(output):
        notes.append(
            "note: this command ran in the bash sandbox (bubblewrap) without network "
            "(sandbox.network is false): no internet, and not even a server on this machine's "
            "localhost is reachable unless the same command started it. If it needs the "
            "network, ask the user to set sandbox.network true (/config set sandbox.network "
            "true); retrying it unchanged will fail the same way."
        )
    return "\n".join(notes)


def require_sandbox(state: SandboxState) -> None:
    """Raise the clear error of a required sandbox that cannot be used."""
    from smith_tui.tools.spec import ToolError

    if state.required_but_missing:
        raise ToolError(
            f"the command was not run: sandbox.mode is on but {state.reason}. To run "
            f"commands, {INSTALL_HINT}.",
            code="sandbox_unavailable",
        )
