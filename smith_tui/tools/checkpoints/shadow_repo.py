"""Checkpoints: snapshots of a project's files in a private shadow repository, and restores.

Before a turn first changes files, :meth:`Checkpoints.record_turn` copies the working tree
(tracked and untracked files that the user's ignore rules do not exclude) into a shadow
repository under Smith's data folder; :meth:`Checkpoints.restore` puts a recorded tree back.
The user's own ``.git`` is only ever read (its ``info/exclude`` and ``core.excludesFile``),
never written: no commits, stashes, refs or index changes.

How it stays cheap and safe:

* the shadow repository (``GIT_DIR``) keeps its own index between checkpoints, so
  ``git add -A`` only re-reads files whose stat data changed: a checkpoint of an unchanged
  tree costs a directory walk;
* every git call uses the hardened command line and scrubbed environment of the ``git``
  tool (:func:`~smith_tui.tools.safe_git.git_env`, :func:`~smith_tui.tools.safe_git.base_argv`);
  the shadow's config is ours, and its ``info/attributes`` switches off every attribute
  that would transform content (filters, end-of-line conversion, ident, encodings), so
  a work tree's ``.gitattributes`` can neither run a program nor alter the bytes kept;
* the files a checkpoint would have to copy are measured first; more than ``max_bytes``
  refuses the checkpoint with :class:`CheckpointTooBig` instead of copying a huge tree;
* a restore first records the current state (so it can be undone), then writes only the
  files that differ and deletes only files the current snapshot holds: ignored files are
  in neither tree, so they are never touched;
* a restore deletes and writes each file relative to its folder's descriptor, found
  beneath the work tree without following symlinks (blobs streamed from ``git cat-file``,
  written to a temp file and renamed over the name), so a folder swapped for a symlink
  while it runs cannot make it delete or write outside the project.

The list of checkpoints is an append-only JSON-lines file in the shadow repository, so it
outlives the process (``--continue``) without a database table.
"""

from __future__ import annotations

import builtins  # the class's list() method shadows the builtin in its annotations
import hashlib
import json
import os
import stat
import subprocess
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from smith_tui.config.schema import CheckpointsConfig
from smith_tui.store.git_includes import common_dir_of, git_dir_of
from smith_tui.tools import beneath
from smith_tui.tools.files import current_umask, file_kind
from smith_tui.tools.safe_git import base_argv, find_git, git_env, run_git_blocking, tree_entries
from smith_tui.tools.spec import ToolError

DEFAULT_MAX_BYTES = CheckpointsConfig().max_bytes
"""Most bytes one checkpoint may copy (changed and new files) unless configured otherwise."""

_LOG_NAME = "smith-checkpoints.jsonl"
_REF = "refs/heads/snapshots"
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_TIME_LIMIT = 300.0

# Highest-precedence attributes (the shadow's info/attributes beat any .gitattributes):
# keep bytes as they are and never start a filter driver (diff drivers: --no-ext-diff).
_ATTRIBUTES = "* -text !eol -filter -ident !working-tree-encoding !diff !merge\n"

# Config for every call on top of the git tool's SAFE_CONFIG.
_SHADOW_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.bare", "false"),
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("core.symlinks", "true"),
    ("core.quotePath", "false"),
    ("core.excludesFile", ""),
    ("advice.addEmbeddedRepo", "false"),
    ("advice.addIgnoredFile", "false"),
    ("index.threads", "true"),
    ("commit.gpgSign", "false"),
)

_IDENTITY = {
    "GIT_AUTHOR_NAME": "smith",
    "GIT_AUTHOR_EMAIL": "smith@localhost",
    "GIT_COMMITTER_NAME": "smith",
    "GIT_COMMITTER_EMAIL": "smith@localhost",
}

Kind = Literal["turn", "restore"]


class CheckpointError(ToolError):
    """A checkpoint or restore could not be done; the message says why and what to do."""

    def __init__(self, message: str, *, code: str = "checkpoint_failed") -> None:
        super().__init__(message, code=code)


class CheckpointTooBig(CheckpointError):
    """The files a checkpoint would copy exceed the size limit."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="checkpoint_too_big")


@dataclass(frozen=True)
class Change:
    """One file that differs between two trees: ``A`` added, ``M`` modified, ``D`` deleted."""

    status: str
    path: str


@dataclass(frozen=True)
class Checkpoint:
    """One recorded state of the files: what was there before a turn (or a restore)."""

    id: str
    kind: Kind
    before: str
    """Tree id of the files before the turn or restore."""
    created_at: float
    turn_id: str | None = None
    conversation_id: str | None = None
    prompt: str = ""
    after: str | None = None
    """Tree id once the turn ended (a restore: the tree it put back); ``None`` while open."""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RestoreResult:
    """What a restore did."""

    checkpoint: Checkpoint
    """The checkpoint whose files were put back."""
    undo: Checkpoint
    """The record of the state before the restore (restoring it undoes this restore)."""
    changes: tuple[Change, ...]
    """What the restore wrote (``A``/``M``: written back, ``D``: deleted)."""


def shadow_folder(data_dir: Path, work_tree: Path) -> Path:
    """The shadow repository of ``work_tree`` inside ``data_dir`` (one per project folder)."""
    key = hashlib.sha256(str(work_tree.resolve()).encode("utf-8", "surrogateescape")).hexdigest()
    return data_dir / "checkpoints" / key[:32]


def _user_git_dir(work_tree: Path) -> Path | None:
    """The user's repository of ``work_tree`` (common dir of a linked worktree), read-only."""
    git_dir = git_dir_of(work_tree / ".git")
    return common_dir_of(git_dir) if git_dir is not None else None


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return ""


class Checkpoints:
    """The checkpoints of one project folder (``work_tree``), kept in ``shadow``.

    Synchronous and blocking (git subprocesses): the engine calls it from a worker thread.
    """

    def __init__(
        self, work_tree: Path, shadow: Path, *, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> None:
        self.work_tree = work_tree.resolve()
        self.shadow = shadow
        self.max_bytes = max_bytes
        self._git: str | None = None
        self._ready = False

    @classmethod
    def for_project(
        cls, data_dir: Path, work_tree: Path, *, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> Checkpoints:
        """The checkpoints of ``work_tree`` with the shadow repository under ``data_dir``."""
        return cls(work_tree, shadow_folder(data_dir, work_tree), max_bytes=max_bytes)

    # ------------------------------------------------------------------ running git

    def _env(self, index: Path | None = None, *, init: bool = False) -> dict[str, str]:
        env = git_env(_SHADOW_CONFIG)
        env.update(_IDENTITY, GIT_DIR=str(self.shadow))
        if not init:
            env.update(
                GIT_WORK_TREE=str(self.work_tree),
                GIT_INDEX_FILE=str(index or self.shadow / "index"),
            )
        return env

    def _run(
        self,
        *args: str,
        index: Path | None = None,
        stdin: bytes | None = None,
        ok: Sequence[int] = (0,),
        init: bool = False,
    ) -> bytes:
        if self._git is None:
            self._git = find_git()
        return run_git_blocking(
            [*base_argv(self._git, _SHADOW_CONFIG), *args],
            what=args[0],
            cwd=self.work_tree,
            env=self._env(index, init=init),
            fail=lambda message: CheckpointError(f"checkpoint: {message}"),
            stdin=stdin,
            ok=ok,
            time_limit=_TIME_LIMIT,
        )

    def _ensure_shadow(self) -> None:
        if self._ready:
            return
        if not self.work_tree.is_dir():
            raise CheckpointError(f"checkpoint: the project folder {self.work_tree} is missing")
        if not (self.shadow / "HEAD").is_file():
            self.shadow.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._run("init", "--quiet", "--bare", "--template=", init=True)
        info = self.shadow / "info"
        info.mkdir(exist_ok=True)
        if _read(info / "attributes") != _ATTRIBUTES:
            (info / "attributes").write_text(_ATTRIBUTES, encoding="utf-8")
        self._ready = True

    def _user_config(self, user_git: Path | None) -> str:
        """The user's ``core.excludesFile``: repository config, then global, then the default."""
        home = Path.home()
        xdg = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
        files = [home / ".gitconfig", Path(xdg) / "git" / "config"]
        if user_git is not None:
            files.insert(0, user_git / "config")
        for config in files:
            if not config.is_file():
                continue
            out = self._run(
                "config",
                "--file",
                str(config),
                "--type=path",
                "--get",
                "core.excludesFile",
                ok=(0, 1),
            )
            value = out.decode("utf-8", "surrogateescape").strip()
            if value:
                return value
        return str(Path(xdg) / "git" / "ignore")

    def user_excludes_file(self) -> str:
        """The user's ``core.excludesFile`` for this work tree (repository config, then global,
        then git's default), which the hardened git command line otherwise switches off."""
        return self._user_config(_user_git_dir(self.work_tree))

    def _sync_excludes(self) -> None:
        """Copy the user's ignore rules outside the work tree into the shadow's info/exclude.

        ``.gitignore`` files inside the work tree are read by git directly.
        """
        user_git = _user_git_dir(self.work_tree)
        parts = [_read(Path(self._user_config(user_git)))]
        if user_git is not None:
            parts.append(_read(user_git / "info" / "exclude"))
        text = "\n".join(part.rstrip("\n") for part in parts if part) + "\n"
        target = self.shadow / "info" / "exclude"
        if _read(target) != text:
            target.write_text(text, encoding="utf-8", errors="surrogateescape")

    # ------------------------------------------------------------------ snapshots

    def _pending_bytes(self) -> tuple[int, int]:
        """Files (and their total size) that ``git add -A`` would read anew."""
        out = self._run("ls-files", "-z", "--modified", "--others", "--exclude-standard")
        count = size = 0
        for raw in set(out.split(b"\0")):
            if not raw:
                continue
            try:
                info = os.lstat(self.work_tree / os.fsdecode(raw))
            except OSError:
                continue  # deleted since the last checkpoint: nothing to copy
            count += 1
            size += info.st_size
        return count, size

    def snapshot(self) -> str:
        """Copy the current files into the shadow repository; return their tree id.

        Raises :class:`CheckpointTooBig` (nothing copied) when the files to copy exceed
        ``max_bytes``.
        """
        self._ensure_shadow()
        self._sync_excludes()
        count, size = self._pending_bytes()
        if size > self.max_bytes:
            raise CheckpointTooBig(
                f"checkpoint skipped: {count} new or changed files, {_mb(size)}, exceed the "
                f"limit checkpoints.max_bytes ({_mb(self.max_bytes)}), so this turn's file "
                "changes cannot be undone. Add large files to .gitignore or raise the limit."
            )
        if count:
            self._run("add", "-A", "--ignore-errors", "--", ".", ok=(0, 1))
        else:
            # Nothing new or changed; deletions still have to leave the index.
            self._run("add", "-u", "--ignore-errors", "--", ".", ok=(0, 1))
        tree = self._run("write-tree").decode().strip()
        self._keep(tree)
        return tree

    def _keep(self, tree: str) -> None:
        """Make ``tree`` reachable from the shadow's one ref so that it is never pruned."""
        head = self._run("rev-parse", "-q", "--verify", _REF, ok=(0, 1)).decode().strip()
        if head:
            parent_tree = self._run("rev-parse", f"{head}^{{tree}}").decode().strip()
            if parent_tree == tree:
                return
        parents = ["-p", head] if head else []
        commit = self._run("commit-tree", tree, *parents, "-m", "smith checkpoint")
        self._run("update-ref", _REF, commit.decode().strip())

    # ------------------------------------------------------------------ the record log

    @property
    def _log(self) -> Path:
        return self.shadow / _LOG_NAME

    def _append(self, entry: dict[str, Any]) -> None:
        line = json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n"
        with open(self._log, "a", encoding="utf-8") as handle:
            handle.write(line)

    def list(self) -> list[Checkpoint]:
        """Every checkpoint, oldest first (an unreadable line is skipped)."""
        try:
            lines = self._log.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return []
        found: dict[str, Checkpoint] = {}
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if not isinstance(entry, dict):
                continue
            if "finish" in entry:
                done = found.get(str(entry["finish"]))
                if done is not None and isinstance(entry.get("after"), str):
                    found[done.id] = replace(done, after=entry["after"])
                continue
            try:
                item = Checkpoint(
                    id=str(entry["id"]),
                    kind=entry["kind"],
                    before=str(entry["before"]),
                    created_at=float(entry["created_at"]),
                    turn_id=entry.get("turn_id"),
                    conversation_id=entry.get("conversation_id"),
                    prompt=str(entry.get("prompt") or ""),
                    after=entry.get("after"),
                    data=dict(entry.get("data") or {}),
                )
            except (KeyError, TypeError, ValueError):
                continue
            found[item.id] = item
        return list(found.values())

    def get(self, checkpoint_id: str) -> Checkpoint | None:
        """The checkpoint ``checkpoint_id`` (a unique prefix will do), or ``None``."""
        matches = [c for c in self.list() if c.id.startswith(checkpoint_id)]
        return matches[0] if len(matches) == 1 else None

    def _record(self, kind: Kind, before: str, after: str | None, **fields: Any) -> Checkpoint:
        item = Checkpoint(
            id=uuid.uuid4().hex[:12],
            kind=kind,
            before=before,
            created_at=time.time(),
            after=after,
            turn_id=fields.get("turn_id"),
            conversation_id=fields.get("conversation_id"),
            prompt=fields.get("prompt") or "",
            data=fields.get("data") or {},
        )
        entry = {k: v for k, v in item.__dict__.items() if v not in (None, "", {})}
        self._append(entry)
        return item

    # ------------------------------------------------------------------ turns

    def record_turn(
        self,
        turn_id: str | None = None,
        conversation_id: str | None = None,
        prompt: str = "",
        data: dict[str, Any] | None = None,
    ) -> Checkpoint:
        """Record the files as they are before a turn changes them."""
        tree = self.snapshot()
        return self._record(
            "turn",
            tree,
            None,
            turn_id=turn_id,
            conversation_id=conversation_id,
            prompt=prompt,
            data=data,
        )

    def finish(self, checkpoint: Checkpoint) -> Checkpoint:
        """Record the files as the turn left them; return the completed checkpoint."""
        tree = self.snapshot()
        self._append({"finish": checkpoint.id, "after": tree})
        return replace(checkpoint, after=tree)

    def changes(self, old: str, new: str) -> builtins.list[Change]:
        """Files that differ from tree ``old`` to tree ``new`` (renames as delete + add)."""
        if old == new:
            return []
        out = self._run("diff-tree", "-r", "-z", "--no-renames", old, new)
        parts = out.split(b"\0")
        found = []
        for meta, raw in zip(parts[0::2], parts[1::2], strict=False):
            if not meta.startswith(b":"):
                continue
            status = meta.split()[-1].decode()[:1]
            found.append(Change("M" if status == "T" else status, os.fsdecode(raw)))
        return found

    def diff(self, old: str, new: str) -> str:
        """The combined diff from tree ``old`` to tree ``new`` as text (binary files named)."""
        out = self._run(
            "diff-tree",
            "-p",
            "-r",
            "--no-ext-diff",
            "--no-textconv",
            "--no-color",
            "--find-renames",
            old,
            new,
        )
        return out.decode("utf-8", "replace")

    def turn_changes(self, checkpoint: Checkpoint) -> builtins.list[Change]:
        """What the turn (or restore) of ``checkpoint`` changed; open: changed so far."""
        after = checkpoint.after if checkpoint.after is not None else self.snapshot()
        return self.changes(checkpoint.before, after)

    def last_change(self) -> Checkpoint | None:
        """The newest checkpoint whose turn (or restore) changed files."""
        current: str | None = None
        for item in reversed(self.list()):
            after = item.after
            if after is None:
                current = current or self.snapshot()
                after = current
            if after != item.before:
                return item
        return None

    # ------------------------------------------------------------------ per-file access

    def entries(self, tree: str, paths: Iterable[str]) -> dict[str, tuple[str, str]]:
        """Mode and object id of each of ``paths`` that ``tree`` holds."""
        return self._entries(tree, set(paths))

    def blob(self, oid: str, *, limit: int) -> bytes | None:
        """The bytes of blob ``oid``, or ``None`` when it is larger than ``limit``."""
        size = int(self._run("cat-file", "-s", oid).decode().strip() or 0)
        if size > limit:
            return None
        return self._run("cat-file", "blob", oid)

    def write_files(
        self,
        files: dict[str, tuple[str, bytes] | None],
        *,
        prompt: str,
        data: dict[str, Any],
    ) -> Checkpoint:
        """Write each ``path: (mode, bytes)`` (``None``: delete it), beneath the work tree as
        a restore writes, recorded first as a ``restore`` checkpoint (restoring it, or
        ``/undo``, takes the writes back); returns that checkpoint, finished."""
        current = self.snapshot()
        undo = self._record("restore", current, None, prompt=prompt, data=data)
        removed = [path for path, value in files.items() if value is None]
        for path in removed:
            self._delete(path)
        with _BlobReader(self) as blobs:
            for path, value in files.items():
                if value is None:
                    continue
                mode, content = value
                oid = self._run("hash-object", "-w", "--stdin", stdin=content).decode().strip()
                self._put(path, mode, oid, blobs)
        return self.finish(undo)

    # ------------------------------------------------------------------ restoring

    def restore(self, checkpoint: Checkpoint) -> RestoreResult:
        """Put the files of ``checkpoint`` (its ``before`` tree) back into the work tree.

        The current state is recorded first as a ``restore`` checkpoint, so restoring that
        one undoes this restore. Files the current snapshot does not hold (ignored ones)
        are never touched.
        """
        current = self.snapshot()
        target = checkpoint.before
        changes = self.changes(current, target)
        undo = self._record(
            "restore",
            current,
            target,
            prompt=f"restore of checkpoint {checkpoint.id}",
            data={"restored": checkpoint.id},
        )
        self._write_tree(target, changes)
        return RestoreResult(checkpoint, undo, tuple(changes))

    def undo(self) -> RestoreResult | None:
        """Restore the files to before the last turn (or restore) that changed them."""
        item = self.last_change()
        return None if item is None else self.restore(item)

    def _write_tree(self, tree: str, changes: Iterable[Change]) -> None:
        """Delete and write the changed files, each relative to its folder's descriptor
        found beneath the work tree without following any symlink (see
        :mod:`~smith_tui.tools.beneath`): a folder swapped for a symlink meanwhile makes
        that file fail instead of being deleted or written outside the project."""
        removed = [c.path for c in changes if c.status == "D"]
        written = [c.path for c in changes if c.status != "D"]
        for path in removed:
            self._delete(path)
        if not written:
            return
        entries = self._entries(tree, set(written))
        with _BlobReader(self) as blobs:
            for path in written:
                entry = entries.get(path)
                if entry is None:
                    raise CheckpointError(f"checkpoint: {path} is not in the tree {tree[:12]}")
                self._put(path, *entry, blobs)

    def _entries(self, tree: str, wanted: set[str]) -> dict[str, tuple[str, str]]:
        """Mode and object id of each of ``wanted`` in ``tree``."""
        return tree_entries(self._run("ls-tree", "-r", "-z", "--full-tree", tree), wanted)

    def _locate(self, path: str, *, create: bool = False) -> beneath.Located:
        """Where ``path`` (a tree path) is in the work tree; no symlink is followed."""
        parts = beneath.split(path)
        if not parts or any(part == ".." or part.lower() == ".git" for part in parts):
            raise CheckpointError(f"checkpoint: refusing the path {path!r} (outside the files)")
        return beneath.locate(
            self.work_tree, parts, follow=False, follow_links=False, create=create
        )

    def _delete(self, path: str) -> None:
        try:
            with self._locate(path) as loc:
                info = os.stat(loc.name, dir_fd=loc.dir_fd, follow_symlinks=False)
                if stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):
                    os.unlink(loc.name, dir_fd=loc.dir_fd)
        except (
            FileNotFoundError,
            NotADirectoryError,
            IsADirectoryError,
            beneath.SymlinkOnTheWayError,
        ):
            return  # not there (as a file of the work tree) now: nothing to delete
        except OSError as exc:
            raise CheckpointError(
                f"checkpoint: cannot delete {path}: {exc.strerror or exc}"
            ) from None
        self._prune_empty(beneath.split(path)[:-1])

    def _put(self, path: str, mode: str, oid: str, blobs: _BlobReader) -> None:
        """Write one tree entry: a file (its mode's executable bit), a symlink, or the
        folder of a submodule."""
        try:
            with self._locate(path, create=True) as loc:

                def replaceable() -> None:
                    try:
                        info = os.stat(loc.name, dir_fd=loc.dir_fd, follow_symlinks=False)
                    except FileNotFoundError:
                        return
                    if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
                        raise CheckpointError(
                            f"checkpoint: cannot restore {path}: it is "
                            f"{file_kind(info.st_mode)} now, which a restore never replaces"
                        )

                if mode == "160000":  # a submodule: git keeps only its folder
                    if _absent(loc):
                        os.mkdir(loc.name, 0o777, dir_fd=loc.dir_fd)
                    return
                replaceable()
                if mode == "120000":
                    target = b"".join(blobs.read(oid))
                    beneath.symlink_at(loc, os.fsdecode(target))
                    return
                perms = (0o777 if mode == "100755" else 0o666) & ~current_umask()
                beneath.replace_at(loc, blobs.read(oid), perms, replaceable)
        except beneath.SymlinkOnTheWayError as exc:
            raise CheckpointError(
                f"checkpoint: cannot restore {path}: {exc.filename} is a symbolic link now, "
                "not a folder; nothing was written through it"
            ) from None
        except OSError as exc:
            raise CheckpointError(
                f"checkpoint: cannot write {path}: {exc.strerror or exc}"
            ) from None

    def _prune_empty(self, folders: builtins.list[str]) -> None:
        """Remove the now empty folders of a deleted file, deepest first."""
        while folders:
            try:
                with self._locate("/".join(folders)) as loc:
                    os.rmdir(loc.name, dir_fd=loc.dir_fd)
            except OSError:
                return
            folders = folders[:-1]


def _absent(loc: beneath.Located) -> bool:
    try:
        os.stat(loc.name, dir_fd=loc.dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return True
    return False


class _BlobReader:
    """One ``git cat-file --batch`` of the shadow repository, read blob by blob in chunks
    (a restore never holds a whole tree, or a whole big file, in memory)."""

    _CHUNK = 1024 * 1024

    def __init__(self, owner: Checkpoints) -> None:
        if owner._git is None:
            owner._git = find_git()
        try:
            self._proc = subprocess.Popen(
                [*base_argv(owner._git, _SHADOW_CONFIG), "cat-file", "--batch"],
                cwd=owner.work_tree,
                env=owner._env(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError as exc:
            raise CheckpointError(f"checkpoint: git cat-file could not run: {exc}") from None
        self._timer = threading.Timer(_TIME_LIMIT, self._proc.kill)
        self._timer.daemon = True
        self._timer.start()

    def read(self, oid: str) -> Iterator[bytes]:
        """The bytes of blob ``oid`` in chunks; the caller consumes all of them."""
        stdin, stdout = self._proc.stdin, self._proc.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(oid.encode("ascii") + b"\n")
            stdin.flush()
        except OSError as exc:
            raise CheckpointError(f"checkpoint: git cat-file stopped: {exc}") from None
        header = stdout.readline().split()
        if len(header) != 3 or header[1] != b"blob":
            raise CheckpointError(f"checkpoint: the object {oid} is missing from the shadow")
        left = int(header[2])
        while left:
            block = stdout.read(min(self._CHUNK, left))
            if not block:
                raise CheckpointError(f"checkpoint: git cat-file ended inside {oid}")
            left -= len(block)
            yield block
        stdout.read(1)  # the newline after each object

    def __enter__(self) -> _BlobReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        for pipe in (self._proc.stdin, self._proc.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"


def empty_tree() -> str:
    """The id of git's empty tree."""
    return _EMPTY_TREE
