"""Config includes of the repository git would find from a folder, found without following them.

A repository's config can pull in other files (``include.path``,
``includeIf.<condition>.path``) from anywhere on the machine, a FIFO or a
device included, and every git command that reads the config opens them. The
project-identity calls and the ``git`` tool look here first, before running
any git command on the repository, and never let git follow such an include.

The repository is found the way git's discovery does: from the folder upwards,
the first ``.git`` (folder, symlink or ``gitdir:`` file) or bare-looking
folder. Its config files are read by ``git config --file … --no-includes`` run
in an empty folder, so nothing but that one file is read.
"""

from __future__ import annotations

import os
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from smith_tui.config.secrets import scrubbed_environ

_TIMEOUT_SECONDS = 10
_INCLUDE_KEYS = r"^include(if\..*)?\.path$"


@dataclass(frozen=True)
class ConfigInclude:
    """One include directive (or a config file git could not read safely)."""

    config: Path
    key: str
    value: str

    def describe(self) -> str:
        """``<key> = <value> in <config>``, for messages."""
        if not self.key:
            return f"{self.config} ({self.value})"
        return f"{self.key} = {self.value} in {self.config}"


def _regular(path: Path) -> bool | None:
    """Whether ``path`` (symlinks followed) is a regular file; ``None`` when it is missing."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return None
    except OSError:
        return False


def git_dir_of(entry: Path) -> Path | None:
    """The repository a ``.git`` entry names: the folder itself or a ``gitdir:`` file's target."""
    if entry.is_dir():
        return entry.resolve()
    if _regular(entry) is not True:
        return None
    try:
        with open(entry, "rb") as handle:
            first = handle.read(4096).decode("utf-8", "replace").splitlines()[:1]
    except OSError:
        return None
    if not first or not first[0].startswith("gitdir:"):
        return None
    return (entry.parent / first[0][len("gitdir:") :].strip()).resolve()


def _looks_bare(folder: Path) -> bool:
    return (
        (folder / "HEAD").is_file() and (folder / "objects").is_dir() and (folder / "refs").is_dir()
    )


def work_tree_of(start: Path) -> Path | None:
    """The nearest folder, ``start`` or a parent, that holds a ``.git`` (of any kind)."""
    return next((d for d in (start, *start.parents) if os.path.lexists(d / ".git")), None)


def repository_of(start: Path) -> Path | None:
    """The repository folder git's discovery would find from ``start``, or ``None``."""
    for folder in (start, *start.parents):
        if os.path.lexists(folder / ".git"):
            return git_dir_of(folder / ".git")
        if _looks_bare(folder):
            return folder.resolve()
    return None


def common_dir_of(git_dir: Path) -> Path:
    """The repository's common folder: ``git_dir`` itself unless a linked worktree's
    ``commondir`` names another."""
    if _regular(git_dir / "commondir"):
        try:
            text = (git_dir / "commondir").read_text(encoding="utf-8", errors="replace")
            return (git_dir / text.strip()).resolve()
        except OSError:
            pass
    return git_dir


def config_files(git_dir: Path) -> list[Path]:
    """The repository-level config files git reads for ``git_dir`` (those that exist)."""
    common = common_dir_of(git_dir)
    candidates = [common / "config", git_dir / "config.worktree", common / "config.worktree"]
    unique = list(dict.fromkeys(candidates))
    return [path for path in unique if os.path.lexists(path)]


def _config_file(git: str, config: Path, *query: str) -> subprocess.CompletedProcess[bytes]:
    """``git config --file config --no-includes <query>``, reading that one file and no other."""
    env = {key: value for key, value in scrubbed_environ().items() if not key.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null")
    argv = [git, "config", "--file", str(config), "--no-includes", *query]
    with tempfile.TemporaryDirectory(prefix="smith-git-config-") as empty:
        # An empty folder with discovery stopped above it: git finds no
        # repository, so it reads no repository config of its own.
        env["GIT_CEILING_DIRECTORIES"] = str(Path(empty).parent)
        return subprocess.run(
            argv, cwd=empty, capture_output=True, timeout=_TIMEOUT_SECONDS, check=False, env=env
        )


def _read_includes(git: str, config: Path) -> list[ConfigInclude]:
    kind = _regular(config)
    if kind is None:
        return []
    if not kind:
        return [ConfigInclude(config, "", "not a regular file")]
    try:
        result = _config_file(git, config, "-z", "--get-regexp", _INCLUDE_KEYS)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [ConfigInclude(config, "", f"could not be read: {exc}")]
    if result.returncode == 1:  # no include keys
        return []
    if result.returncode != 0:
        reason = result.stderr.decode("utf-8", "replace").strip() or f"exit {result.returncode}"
        return [ConfigInclude(config, "", f"could not be read: {reason}")]
    found = []
    for item in result.stdout.decode("utf-8", "replace").split("\x00"):
        if item:
            key, _, value = item.partition("\n")
            found.append(ConfigInclude(config, key, value))
    return found


def config_value(git_dir: Path, key: str, git: str = "git") -> str | None:
    """``key`` from the repository-level config of ``git_dir``, includes not followed."""
    for config in config_files(git_dir):
        if _regular(config) is not True:
            continue
        try:
            result = _config_file(git, config, "--get", key)
        except (OSError, subprocess.TimeoutExpired):
            continue
        value = result.stdout.decode("utf-8", "replace").strip()
        if result.returncode == 0 and value:
            return value
    return None


def config_includes(start: Path, git: str = "git") -> list[ConfigInclude]:
    """Every include in the config of the repository found from ``start``, unfollowed.

    A config file that is not a regular file (a FIFO would block git) or that
    git cannot parse is reported too, with an empty ``key``.
    """
    git_dir = repository_of(start)
    if git_dir is None:
        return []
    found: list[ConfigInclude] = []
    for config in config_files(git_dir):
        found += _read_includes(git, config)
    return found
