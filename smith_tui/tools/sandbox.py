"""The sandbox ``bash`` commands run in: bubblewrap (``bwrap``) on Linux.

Inside the sandbox the whole filesystem is mounted read-only except the
project folder, the temp folder(s) and the folders in ``sandbox.writable``;
the project's ``.git`` stays read-only unless ``sandbox.git_writable``; the
network is a private, empty namespace unless ``sandbox.network``.

``sandbox.mode`` decides whether it is used: ``auto`` when bwrap is present
and works (probed once per bwrap binary, the answer cached), ``on`` always
(a command fails when it cannot be), ``off`` never.

The command keeps the process group the bash tool gives it: bwrap is started
as the group leader and no ``--new-session`` is asked for, so signalling the
group reaches bwrap and everything the command started. That is safe because
the group already has a session of its own with no controlling terminal (so
there is no terminal to inject keystrokes into). ``--die-with-parent`` makes
the command die with bwrap, and bwrap die with us.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from smith_tui.config.frozen import thaw
from smith_tui.config.schema import SandboxConfig
from smith_tui.tools.spec import ToolError

PROBE_TIMEOUT_S = 10.0
INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install "
    "bubblewrap; Arch: pacman -S bubblewrap) or set sandbox.mode off"
)

_READ_ONLY = re.compile(r"read-only file system", re.IGNORECASE)
_NO_NETWORK = re.compile(
    r"network is unreachable|temporary failure in name resolution|could not resolve|"
    r"name or service not known|no address associated with hostname|"
    r"connection refused|failed to establish a new connection|getaddrinfo",
    re.IGNORECASE,
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
        return Probe(None, False, "the sandbox (bubblewrap) is only available on Linux")
    path = shutil.which("bwrap")
    found = os.path.realpath(path) if path else None
    cached = _PROBES.get(found)
    if cached is not None:
        return cached
    probe = _run_probe(found)
    _PROBES[found] = probe
    return probe


def _run_probe(path: str | None) -> Probe:
    if path is None:
        return Probe(None, False, "bubblewrap (bwrap) is not installed (not found on PATH)")
    argv = [path, "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev"]
    argv += ["--unshare-net", "true"]
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
        return Probe(path, False, f"bubblewrap ({path}) does not work here: {why}")
    return Probe(path, True)


def sandbox_settings(config: Mapping[str, Any]) -> SandboxConfig:
    """The ``sandbox`` table of ``config`` (defaults when absent)."""
    table = config.get("sandbox") if isinstance(config, Mapping) else None
    try:
        return SandboxConfig.model_validate(thaw(table) if table is not None else {})
    except ValidationError as exc:
        problem = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in ("sandbox", *problem["loc"]))
        raise ToolError(
            f"the setting {where} is invalid: {problem['msg']}; fix it in the config file "
            "or with /config set.",
            code="bad_config",
        ) from None


def sandbox_state(settings: SandboxConfig) -> SandboxState:
    """Whether commands run sandboxed under ``settings`` (probes bwrap unless the mode is off)."""
    if settings.mode == "off":
        return SandboxState("off", False, network=settings.network)
    probe = probe_bwrap()
    return SandboxState(settings.mode, probe.ok, probe.reason, settings.network, probe.path)


def temp_folders() -> list[Path]:
    """The folders a sandboxed command may always write: ``/tmp`` and ``$TMPDIR``."""
    folders = [Path("/tmp")]
    tmpdir = os.environ.get("TMPDIR")
    if tmpdir and os.path.isabs(tmpdir):
        folders.append(Path(tmpdir))
    return folders


def _real(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.path.expanduser(path))


def bwrap_argv(
    bwrap: str,
    argv: Sequence[str],
    *,
    cwd: Path,
    project: Path,
    settings: SandboxConfig,
    project_writable: bool = True,
) -> list[str]:
    """The command line that runs ``argv`` in the sandbox.

    ``project_writable=False`` makes the project folder read-only too (for a
    read-only permission mode); the temp folders and ``sandbox.writable`` stay
    writable. Later mounts cover earlier ones, so the project (and its
    ``.git``) is mounted after every writable folder: a parent folder in
    ``sandbox.writable``, or a project under ``/tmp``, cannot undo it.
    """
    line = [bwrap, "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev"]
    if not settings.network:
        line.append("--unshare-net")
    folders: list[str | Path] = [*temp_folders(), *settings.writable]
    for folder in folders:
        line += ["--bind-try", _real(folder), _real(folder)]
    root = _real(project)
    git = os.path.join(root, ".git")
    if not project_writable:
        # Read-only even when it lies inside a writable folder (a project under /tmp).
        line += ["--ro-bind", root, root]
    else:
        line += ["--bind", root, root]
        if not settings.git_writable and os.path.lexists(git):
            line += ["--ro-bind", git, git]
    line += ["--chdir", _real(cwd), *argv]
    return line


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
    if state.required_but_missing:
        raise ToolError(
            f"the command was not run: sandbox.mode is on but {state.reason}. To run "
            f"commands, {INSTALL_HINT}.",
            code="sandbox_unavailable",
        )
