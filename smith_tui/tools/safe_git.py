"""The hardened git command line and scrubbed environment every git call of Smith uses.

The ``git`` tool, the checkpoint store and the worker worktrees run git through
:func:`base_argv` and :func:`git_env`: no pager, external diff, fsmonitor, hooks, gpg,
credential helper or transport, no system or global config, no inherited ``GIT_*``
variable; :func:`overrides_for` switches off the filter drivers and per-protocol
permissions a repository's config names.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from smith_tui.config.secrets import scrubbed_environ
from smith_tui.tools.spec import ToolError

_NO_PROGRAM = "/nonexistent/smith-git-tool-runs-no-programs"

# Every value must mean "off" on old and new git alike: "cat" is the pager git
# never starts, and core.fsmonitor takes the empty value because git before
# 2.36 reads "false" as the name of a hook program.
SAFE_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.pager", "cat"),
    ("diff.external", ""),
    ("core.fsmonitor", ""),
    ("core.hooksPath", "/dev/null"),
    ("protocol.allow", "never"),
    ("core.sshCommand", _NO_PROGRAM),
    ("core.askPass", ""),
    ("credential.helper", ""),
    ("gpg.program", _NO_PROGRAM),
    ("gpg.openpgp.program", _NO_PROGRAM),
    ("gpg.ssh.program", _NO_PROGRAM),
    ("gpg.x509.program", _NO_PROGRAM),
    ("log.showSignature", "false"),
    ("blame.ignoreRevsFile", ""),
    ("core.untrackedCache", "false"),
    # Files git would read from outside the project: the empty value (or
    # /dev/null, where git fails on a missing file) also replaces the default
    # ~/.config/git/ignore and attributes.
    ("core.excludesFile", ""),
    ("core.attributesFile", ""),
    ("mailmap.file", ""),
    ("diff.orderFile", "/dev/null"),
    ("status.submoduleSummary", "false"),
    ("submodule.recurse", "false"),
    ("color.ui", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
)
"""``-c`` overrides on every call: each neutralises a config key that could run a program
or read a file outside the project."""


def find_git() -> str:
    """Path of the git executable, or a :class:`ToolError` when it is missing."""
    found = shutil.which("git")
    if found is None:
        raise ToolError("git is not installed or not on PATH", code="git_missing")
    return found


def git_env(extra: Sequence[tuple[str, str]] = ()) -> dict[str, str]:
    """The scrubbed environment: no inherited GIT_* variables, no system/global config.

    ``extra`` config pairs are passed as GIT_CONFIG_KEY_n/VALUE_n, which keeps
    names containing ``=`` or odd characters intact.
    """
    env = {
        key: value
        for key, value in scrubbed_environ().items()
        if not key.startswith("GIT_") and key not in {"PAGER", "LESS", "SSH_ASKPASS", "EDITOR"}
    }
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_ATTR_NOSYSTEM="1",
        GIT_PAGER="cat",
        PAGER="cat",
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        # No transport at all: an empty allow-list refuses every protocol and
        # wins over any protocol.<name>.allow in the repository's config (git
        # 2.6.1 on), so a partial clone's lazy fetch dies before it connects.
        GIT_ALLOW_PROTOCOL="",
        GIT_PROTOCOL_FROM_USER="0",
        # No lazy fetch attempt at all: git 2.44 on, and the 2024 security
        # releases back to 2.39.4 (older git ignores it; the allow-list holds).
        GIT_NO_LAZY_FETCH="1",
        # Set-but-empty beats core.gitProxy and core.askPass from any config.
        GIT_PROXY_COMMAND="",
        GIT_ASKPASS="",
    )
    if extra:
        env["GIT_CONFIG_COUNT"] = str(len(extra))
        for number, (key, value) in enumerate(extra):
            env[f"GIT_CONFIG_KEY_{number}"] = key
            env[f"GIT_CONFIG_VALUE_{number}"] = value
    return env


def base_argv(git: str, extra: Sequence[tuple[str, str]] = ()) -> list[str]:
    """git with the global options every call uses.

    ``extra`` config pairs (also given to :func:`git_env`) are repeated as
    ``-c`` options for git before 2.31, which ignores GIT_CONFIG_COUNT; a key
    holding ``=`` cannot be written that way and relies on the environment.
    """
    argv = [git, "--no-pager"]
    for key, value in (*SAFE_CONFIG, *(pair for pair in extra if "=" not in pair[0])):
        argv += ["-c", f"{key}={value}"]
    argv.append("--no-optional-locks")
    return argv


def tree_entries(ls_tree_output: bytes, wanted: set[str]) -> dict[str, tuple[str, str]]:
    """Mode and object id of each of ``wanted`` in the output of ``git ls-tree -r -z``."""
    found: dict[str, tuple[str, str]] = {}
    for record in ls_tree_output.split(b"\0"):
        meta, _, raw = record.partition(b"\t")
        path = os.fsdecode(raw)
        if path in wanted:
            mode, _kind, oid = meta.decode("ascii").split(" ")
            found[path] = (mode, oid)
    return found


def run_git_blocking(
    argv: Sequence[str],
    *,
    what: str,
    cwd: Path,
    env: Mapping[str, str],
    fail: Callable[[str], Exception],
    stdin: bytes | None = None,
    ok: Sequence[int] = (0,),
    time_limit: float = 300.0,
) -> bytes:
    """Run one git command to its end (blocking: call it off the event loop) and return its
    stdout; ``fail(message)`` is raised when it cannot start, times out or exits outside
    ``ok``, naming the subcommand ``what`` (``git add failed: …``)."""
    try:
        done = subprocess.run(
            list(argv),
            cwd=cwd,
            env=dict(env),
            input=stdin,
            capture_output=True,
            timeout=time_limit,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise fail(f"git {what} could not run: {exc}") from None
    if done.returncode not in ok:
        detail = done.stderr.decode("utf-8", "replace").strip() or f"exit {done.returncode}"
        raise fail(f"git {what} failed: {detail}")
    return done.stdout


@dataclass(frozen=True)
class ConfigOverrides:
    """Config pairs that neutralise what the repository's config defines by name."""

    pairs: list[tuple[str, str]]
    partial_clone: bool


OVERRIDE_PATTERN = r"^(filter|protocol|remote|extensions)\."
"""The config keys :func:`overrides_for` reads (``git config -z --name-only --get-regexp``)."""


def overrides_for(names: str) -> ConfigOverrides:
    """The pairs that switch off the filter drivers and per-protocol permissions named in
    ``names`` (NUL-separated config key names matching :data:`OVERRIDE_PATTERN`)."""
    out = names
    drivers, protocols = set(), set()
    partial = False
    for key in out.split("\x00"):
        section, _, rest = key.partition(".")
        name, dot, _field = rest.rpartition(".")
        if section == "filter" and dot:
            drivers.add(name)
        elif section == "protocol" and dot:
            protocols.add(name)
        elif key == "extensions.partialclone" or (section == "remote" and _field == "promisor"):
            partial = True
    pairs: list[tuple[str, str]] = []
    for driver in sorted(drivers):
        for field in ("clean", "smudge", "process"):
            pairs.append((f"filter.{driver}.{field}", ""))
        pairs.append((f"filter.{driver}.required", "false"))
    pairs += [(f"protocol.{name}.allow", "never") for name in sorted(protocols)]
    return ConfigOverrides(pairs, partial)
