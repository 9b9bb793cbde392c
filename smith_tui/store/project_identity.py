"""Which project a working directory belongs to, as a stable id.

A git origin URL is reduced to one canonical form so that every way of writing the same
remote gives the same `project_id`:

* remote URLs become `host/path`: scheme, user name, password/token and port are dropped,
  the host is lower-cased, and a trailing `/` or `.git` is removed. The path keeps its case,
  because many hosts treat `Owner/Repo` and `owner/repo` as different repositories. The port
  is dropped because one server commonly offers the same repository over ssh and https on
  different ports.
  `git@github.com:Owner/Repo.git`, `ssh://git@github.com:22/Owner/Repo`,
  `https://user:token@GitHub.com/Owner/Repo.git/` all give `github.com/Owner/Repo`.
* local remotes (`/srv/git/repo.git`, `file:///srv/git/repo.git`, `../repo`) become an absolute
  normalised path without a trailing `.git`: `/srv/git/repo`.

`project_id` is the first 16 hex digits of the SHA-256 of the canonical form (UTF-8). A
repository without an origin, and a directory outside any repository, is identified by its
absolute root path instead.
"""

import hashlib
import os
import posixpath
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from smith_tui.config.secrets import scrubbed_environ
from smith_tui.store.errors import StoreError
from smith_tui.store.git_includes import (
    config_includes,
    config_value,
    repository_of,
    work_tree_of,
)

_GIT_TIMEOUT_SECONDS = 10
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
# scp-like syntax: [user@]host:path, where no '/' comes before the first ':'.
_SCP = re.compile(r"^(?:(?P<user>[^@/]+)@)?(?P<host>\[[^\]]+\]|[^:/]+):(?P<path>.*)$")
_REMOTE_SCHEMES = frozenset({"ssh", "git+ssh", "ssh+git", "git", "http", "https", "ftp", "ftps"})


@dataclass(frozen=True)
class ProjectInfo:
    """The project of a working directory.

    `origin` is the raw `remote.origin.url` (or `None`), `normalized_origin` its canonical
    form, and `project_id` the 16-hex-digit id derived from the origin or, without one,
    from `root`.
    """

    root: Path
    origin: str | None
    normalized_origin: str | None
    project_id: str
    in_git_repository: bool


def _strip_repo_suffix(path: str) -> str:
    path = path.rstrip("/")
    if path.endswith(".git"):
        path = path[: -len(".git")].rstrip("/")
    return path


def _canonical_remote(host: str, path: str, original: str) -> str:
    host = host.strip().lower().rstrip(".")
    path = re.sub(r"/{2,}", "/", unquote(path)).strip("/")
    path = _strip_repo_suffix(path)
    if not host or not path:
        raise StoreError(f"git origin {original!r} has no host or no repository path")
    return f"{host}/{path}"


def _canonical_local(path: str, base: Path | None) -> str:
    if not os.path.isabs(path):
        path = os.path.join(str(base) if base is not None else os.getcwd(), path)
    normalised = _strip_repo_suffix(posixpath.normpath(path))
    return normalised or "/"


def normalize_origin(origin: str, *, base: Path | None = None) -> str:
    """Return the canonical form of a git remote URL (see the module docstring).

    `base` is the directory a relative local path is resolved against (the repository
    root); the current directory when not given. Raises `StoreError` for an empty or
    unusable origin.
    """
    text = origin.strip() if isinstance(origin, str) else ""
    if not text:
        raise StoreError(f"a git origin must be a non-empty URL or path, got {origin!r}")
    scheme = _SCHEME.match(text)
    if scheme:
        name = scheme.group(1).lower()
        if name == "file":
            return _canonical_local(unquote(urlsplit(text).path), base)
        if name not in _REMOTE_SCHEMES:
            raise StoreError(f"git origin {origin!r} uses an unsupported scheme {name!r}")
        parts = urlsplit(text)
        host = parts.hostname or ""
        return _canonical_remote(host, parts.path, origin)
    if text.startswith(("/", "./", "../", "~")) or text in (".", ".."):
        return _canonical_local(os.path.expanduser(text), base)
    scp = _SCP.match(text)
    if scp:
        host = scp.group("host").strip("[]")
        return _canonical_remote(host, scp.group("path"), origin)
    return _canonical_local(text, base)


def project_id_for(canonical: str) -> str:
    """The first 16 hex digits of the SHA-256 of a canonical origin or root path."""
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def _git(cwd: Path, *args: str) -> str | None:
    try:
        result = subprocess.run(
            ["git", "-C", str(cwd), *args],
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_SECONDS,
            check=False,
            env=scrubbed_environ(),
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    output = result.stdout.strip()
    return output if result.returncode == 0 and output else None


def discover_project(cwd: str | Path) -> ProjectInfo:
    """Find the project of `cwd` with `git rev-parse --show-toplevel` and the origin URL.

    Outside a git repository (or without git installed) the project root is `cwd` itself,
    and so it is when git names a work tree other than the folder holding the `.git`
    found from `cwd` (a repository's `core.worktree` cannot move the project root).
    An origin that cannot be normalised falls back to identifying the project by its root.
    When the repository's config includes other files, no git command runs on it (git
    would follow them, possibly outside the project): the root is the folder holding the
    `.git` and the origin is read from the config file itself.
    """
    start = Path(cwd).expanduser().resolve()
    if not start.is_dir():
        raise StoreError(f"cannot discover the project of {start}: it is not a directory")
    # core.worktree (or a .git file whose repository sets it) can name any folder as
    # the work tree, e.g. a parent of `cwd`: the root must be the folder holding the
    # `.git` found from `cwd`, as git's own discovery would give without that setting.
    holder = work_tree_of(start)
    if holder is None:
        # No `.git` here or above: whatever git answered would not be the holder, so the
        # project is `cwd` (as below) without starting git (a start outside a repository).
        return _project(start, None, in_git_repository=False)
    if config_includes(start):
        # Any git command would follow the includes, which may name files outside the
        # project (or a FIFO that blocks): run none, read the config file itself.
        return _without_git(start, holder)
    toplevel = _git(start, "rev-parse", "--show-toplevel")
    if toplevel and Path(toplevel).resolve() != holder:
        toplevel = None
    root = Path(toplevel).resolve() if toplevel else start
    origin = _git(root, "config", "--get", "remote.origin.url") if toplevel else None
    return _project(root, origin, in_git_repository=toplevel is not None)


def _without_git(start: Path, holder: Path | None) -> ProjectInfo:
    """The project of a repository whose config has includes, found without running git on it.

    The root is the folder holding the `.git` found from `start` and the origin is
    read from the repository's own config file, includes not followed.
    """
    git_dir = repository_of(start)
    if holder is None or git_dir is None:
        return _project(start, None, in_git_repository=False)
    return _project(
        holder.resolve(), config_value(git_dir, "remote.origin.url"), in_git_repository=True
    )


def _project(root: Path, origin: str | None, *, in_git_repository: bool) -> ProjectInfo:
    normalized = None
    if origin is not None:
        try:
            normalized = normalize_origin(origin, base=root)
        except StoreError:
            normalized = None
    identity = normalized if normalized is not None else str(root)
    return ProjectInfo(
        root=root,
        origin=origin,
        normalized_origin=normalized,
        project_id=project_id_for(identity),
        in_git_repository=in_git_repository,
    )
