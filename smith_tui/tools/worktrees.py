"""Worker worktrees: a ``git worktree`` per dispatched worker, merged or dropped afterwards.

:meth:`WorkerTrees.create` snapshots the project as it is now (``HEAD`` plus every
uncommitted change, tracked and untracked files the ignore rules keep) into a commit on a
new branch ``smith/<job id>`` and checks it out with ``git worktree add`` in a folder under
Smith's data folder. :meth:`WorkerTrees.collect` commits what the worker left there onto its
branch and describes it (``git diff --stat`` and the patch against the base).
:meth:`WorkerTrees.merge` writes the worker's files into the user's working tree through the
checkpoint store (beneath the project, recorded so ``/undo`` takes it back), refusing the
whole merge when the user's copy of any of those files changed since the worker started;
:meth:`WorkerTrees.drop` removes the worktree and the branch.

The user's working tree and index are never written before a merge: the snapshot is built
with a private index file (``GIT_INDEX_FILE`` in a temporary folder). What is written to
the repository: objects, the branch, and git's record of the worktree (``.git/worktrees``).

Every git call uses the ``git`` tool's hardened command line and scrubbed environment
(:func:`~smith_tui.tools.safe_git.git_env`, :func:`~smith_tui.tools.safe_git.base_argv`: no hooks,
no fsmonitor, no pager, no transport) plus an override of every filter driver the
repository's config names (:func:`~smith_tui.tools.safe_git.overrides_for`); a repository whose
config includes other files is refused, as the ``git`` tool refuses it.

Each worktree has a record (``record.json`` next to it, under ``<data>/worktrees/``) naming
the process that made it; :meth:`WorkerTrees.clean_stale` (at start) removes the worktrees
of processes that are gone and runs ``git worktree prune``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from smith_tui.store.git_includes import config_includes, git_dir_of, work_tree_of
from smith_tui.tools.checkpoints.shadow_repo import Checkpoints
from smith_tui.tools.safe_git import (
    OVERRIDE_PATTERN,
    base_argv,
    find_git,
    git_env,
    overrides_for,
    run_git_blocking,
    tree_entries,
)
from smith_tui.tools.spec import ToolError

FOLDER = "worktrees"
"""The folder (under the data folder) holding one sub-folder per worker worktree."""
BRANCH_PREFIX = "smith/"
RECORD = "record.json"
MAX_PATCH_CHARS = 12_000
"""Most characters of a worker's patch put in its dispatch result."""
_TIME_LIMIT = 300.0
_IDENTITY = {
    "GIT_AUTHOR_NAME": "smith",
    "GIT_AUTHOR_EMAIL": "smith@localhost",
    "GIT_COMMITTER_NAME": "smith",
    "GIT_COMMITTER_EMAIL": "smith@localhost",
}
# On top of SAFE_CONFIG: bytes as they are, no signing, no advice on stderr.
_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("commit.gpgSign", "false"),
    ("advice.addEmbeddedRepo", "false"),
    ("advice.addIgnoredFile", "false"),
    ("core.quotePath", "false"),
)


class WorktreeError(ToolError):
    """A worktree could not be made, merged or dropped; the message says why and what to do."""

    def __init__(self, message: str, *, code: str = "worktree_failed") -> None:
        super().__init__(message, code=code)


@dataclass(frozen=True)
class WorkerTree:
    """One worker's worktree: where it is, its branch and what it started from."""

    job_id: str
    repo: str
    """The user's work tree (the project root) the worktree was made from."""
    git_dir: str
    """The user's repository (its per-worktree git folder)."""
    path: str
    """The worktree folder the worker runs in."""
    branch: str
    base: str
    """The commit holding HEAD plus the uncommitted changes when the worker started."""
    pid: int
    head: str | None = None
    """The commit of the worker's result once collected (``None`` before)."""
    admin: str = ""
    """git's folder for the worktree (``<repository>/worktrees/<name>``), read when it was
    made: what the worker does to its ``.git`` file later cannot point Smith elsewhere."""

    @property
    def folder(self) -> Path:
        """The folder holding the worktree and its record."""
        return Path(self.path).parent


@dataclass(frozen=True)
class WorkerDiff:
    """What a worker changed, against its base."""

    files: tuple[tuple[str, str], ...]
    """``(status, path)`` per changed file: ``A`` added, ``M`` modified, ``D`` deleted."""
    stat: str
    patch: str
    """The patch, cut at :data:`MAX_PATCH_CHARS` with a note saying so."""


class _Git:
    """The hardened git of one repository and work tree (``GIT_DIR``/``GIT_WORK_TREE`` pinned)."""

    def __init__(self, git_dir: Path, work_tree: Path, index: Path | None = None) -> None:
        self.git = find_git()
        self.git_dir = git_dir
        self.work_tree = work_tree
        self.index = index
        self.extra: list[tuple[str, str]] = list(_CONFIG)  # filter overrides added below
        names = self.run("config", "-z", "--name-only", "--get-regexp", OVERRIDE_PATTERN, ok=(0, 1))
        self.extra += overrides_for(names.decode("utf-8", "surrogateescape")).pairs

    def run(self, *args: str, ok: Sequence[int] = (0,), stdin: bytes | None = None) -> bytes:
        env = git_env(self.extra)
        env.update(_IDENTITY, GIT_DIR=str(self.git_dir), GIT_WORK_TREE=str(self.work_tree))
        if self.index is not None:
            env["GIT_INDEX_FILE"] = str(self.index)
        return run_git_blocking(
            [*base_argv(self.git, self.extra), *args],
            what=args[0],
            cwd=self.work_tree,
            env=env,
            fail=lambda message: WorktreeError(f"worktree: {message}"),
            stdin=stdin,
            ok=ok,
            time_limit=_TIME_LIMIT,
        )

    def text(self, *args: str, ok: Sequence[int] = (0,)) -> str:
        return self.run(*args, ok=ok).decode("utf-8", "surrogateescape").strip()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _repository(root: Path) -> tuple[Path, Path]:
    """The work tree and git folder of ``root``, or a refusal saying the option needs git."""
    work_tree = work_tree_of(root.resolve())
    git_dir = git_dir_of(work_tree / ".git") if work_tree is not None else None
    if work_tree is None or git_dir is None:
        raise WorktreeError(
            f"worktree: {root} is not in a git repository, so a worker cannot get a worktree of "
            "its own; dispatch without `worktree` (or set services.dispatch.worktree to false), "
            "or run `git init` and commit first",
            code="worktree_needs_git",
        )
    found = config_includes(work_tree, find_git())
    if found:
        listed = "; ".join(item.describe() for item in found[:5])
        raise WorktreeError(
            f"worktree: the repository's config includes other files ({listed}); Smith runs no "
            "git command on such a repository (an include can read any file). Remove the "
            "include to use worker worktrees.",
            code="worktree_refused",
        )
    return work_tree, git_dir


class WorkerTrees:
    """The worker worktrees Smith made, recorded under ``data_dir/worktrees``.

    Synchronous and blocking (git subprocesses): call it from a worker thread.
    """

    def __init__(self, data_dir: Path, *, max_bytes: int | None = None) -> None:
        self.root = data_dir / FOLDER
        self.data_dir = data_dir
        self.max_bytes = max_bytes
        self._made: set[str] = set()
        """The job ids whose worktrees this instance made (this session's)."""

    # ------------------------------------------------------------------ records

    def _write_record(self, tree: WorkerTree) -> None:
        target = tree.folder / RECORD
        tmp = target.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(tree), sort_keys=True), encoding="utf-8")
        os.replace(tmp, target)

    def records(self) -> Iterator[WorkerTree]:
        """Every recorded worktree (an unreadable record is skipped)."""
        if not self.root.is_dir():
            return
        for record in sorted(self.root.glob(f"*/{RECORD}")):
            try:
                data = json.loads(record.read_text(encoding="utf-8"))
                yield WorkerTree(**data)
            except (OSError, ValueError, TypeError):
                continue

    def get(self, job_id: str) -> WorkerTree | None:
        """The recorded worktree of ``job_id``."""
        return next((t for t in self.records() if t.job_id == job_id), None)

    # ------------------------------------------------------------------ making one

    def create(self, project_root: Path, job_id: str) -> WorkerTree:
        """Make the worktree of ``job_id`` from the project as it is now (see module doc)."""
        if not job_id.replace("-", "").isalnum():
            raise WorktreeError(f"worktree: bad job id {job_id!r}")
        work_tree, git_dir = _repository(project_root)
        folder = self.root / job_id
        folder.mkdir(parents=True, mode=0o700)
        path = folder / "tree"
        branch = BRANCH_PREFIX + job_id
        with tempfile.TemporaryDirectory(prefix="smith-worktree-") as scratch:
            git = _Git(git_dir, work_tree, Path(scratch) / "index")
            head = git.text("rev-parse", "-q", "--verify", "HEAD^{commit}", ok=(0, 1))
            own_index = git_dir / "index"
            if own_index.is_file():  # its stat data spares re-reading unchanged files
                shutil.copyfile(own_index, Path(scratch) / "index")
            elif head:
                git.run("read-tree", head)
            self._check_size(git, work_tree)
            excludes = Checkpoints.for_project(self.data_dir, work_tree).user_excludes_file()
            git.extra.append(("core.excludesFile", excludes))
            git.run("add", "-A", "--ignore-errors", "--", ".", ok=(0, 1))
            tree = git.text("write-tree")
            parents = ["-p", head] if head else []
            message = f"smith: the project when worker {job_id} started (uncommitted included)"
            base = git.text("commit-tree", tree, *parents, "-m", message)
        record = WorkerTree(
            job_id, str(work_tree), str(git_dir), str(path), branch, base, os.getpid()
        )
        self._write_record(record)
        self._made.add(job_id)
        try:
            _Git(git_dir, work_tree).run(
                "worktree", "add", "--quiet", "-b", branch, str(path), base
            )
        except WorktreeError:
            self._remove(record)
            raise
        admin = git_dir_of(path / ".git")
        record = WorkerTree(**{**asdict(record), "admin": str(admin or "")})
        self._write_record(record)
        return record

    def _check_size(self, git: _Git, work_tree: Path) -> None:
        """Refuse before copying when the changed and new files exceed ``max_bytes``."""
        if self.max_bytes is None:
            return
        out = git.run("ls-files", "-z", "--modified", "--others", "--exclude-standard")
        size = 0
        for raw in set(out.split(b"\0")):
            if raw:
                try:
                    size += os.lstat(work_tree / os.fsdecode(raw)).st_size
                except OSError:
                    continue
        if size > self.max_bytes:
            raise WorktreeError(
                f"worktree: the uncommitted and new files come to {size} bytes, over the limit "
                f"checkpoints.max_bytes ({self.max_bytes}); commit or ignore large files, or "
                "dispatch without `worktree`",
                code="worktree_too_big",
            )

    # ------------------------------------------------------------------ the result

    def _tree_git(self, tree: WorkerTree, index: Path | None = None) -> _Git:
        admin = Path(tree.admin) if tree.admin else None
        if admin is None or not (admin / "HEAD").is_file() or not Path(tree.path).is_dir():
            raise WorktreeError(f"worktree: {tree.path} is gone or is not a git worktree")
        return _Git(admin, Path(tree.path), index)

    def collect(self, tree: WorkerTree, message: str) -> tuple[WorkerTree, WorkerDiff]:
        """Commit what the worker left in its worktree onto its branch; return the diff."""
        with tempfile.TemporaryDirectory(prefix="smith-worktree-") as scratch:
            index = Path(scratch) / "index"
            git = self._tree_git(tree, index)
            own = git.git_dir / "index"
            if own.is_file():
                shutil.copyfile(own, index)
            git.run("add", "-A", "--ignore-errors", "--", ".", ok=(0, 1))
            result = git.text("write-tree")
            head = git.text("rev-parse", "HEAD^{commit}")
            if git.text("rev-parse", f"{head}^{{tree}}") != result:
                head = git.text("commit-tree", result, "-p", head, "-m", message)
                git.run("update-ref", f"refs/heads/{tree.branch}", head)
        done = WorkerTree(**{**asdict(tree), "head": head})
        self._write_record(done)
        return done, self.diff(done)

    def _user_git(self, tree: WorkerTree) -> _Git:
        return _Git(Path(tree.git_dir), Path(tree.repo))

    def diff(self, tree: WorkerTree) -> WorkerDiff:
        """What ``tree``'s worker changed (its collected commit against the base)."""
        head = tree.head or tree.base
        git = self._user_git(tree)
        flags = ("--no-ext-diff", "--no-textconv", "--no-color", "--no-renames", "-r")
        raw = git.run("diff-tree", "-z", "--name-status", *flags, tree.base, head)
        parts = [os.fsdecode(p) for p in raw.split(b"\0") if p]
        files = tuple((parts[i][:1], parts[i + 1]) for i in range(0, len(parts) - 1, 2))
        stat = (
            git.run("diff-tree", "--stat=100", *flags, tree.base, head)
            .decode("utf-8", "replace")
            .rstrip()
        )
        patch = git.run("diff-tree", "-p", *flags, tree.base, head).decode("utf-8", "replace")
        if len(patch) > MAX_PATCH_CHARS:
            patch = (
                patch[:MAX_PATCH_CHARS]
                + f"\n[patch cut at {MAX_PATCH_CHARS} of {len(patch)} characters; "
                f"see git diff {tree.base[:12]} {tree.branch}]\n"
            )
        return WorkerDiff(files, stat, patch)

    # ------------------------------------------------------------------ merge and drop

    def merge(self, tree: WorkerTree, checkpoints: Checkpoints) -> WorkerDiff:
        """Write the worker's changes into the user's working tree (all files or none).

        Refused, with nothing written, when a file the worker changed differs in the user's
        working tree from the base the worker started from (another merge, the user or the
        parent changed it meanwhile). The write goes through ``checkpoints`` (beneath the
        project, recorded first, so ``/undo`` takes the merge back). The worktree and the
        branch are removed afterwards.
        """
        if tree.head is None:
            raise WorktreeError(
                f"worktree: worker {tree.job_id} has not finished; merge it once it reported",
                code="worktree_busy",
            )
        change = self.diff(tree)
        if not change.files:
            self.drop(tree)
            return change
        git = self._user_git(tree)
        paths = [path for _, path in change.files]
        base = _entries(git, tree.base, paths)
        wanted = _entries(git, tree.head, paths)
        current = checkpoints.entries(checkpoints.snapshot(), paths)
        conflicts = [path for path in paths if current.get(path) != base.get(path)]
        if conflicts:
            shown = ", ".join(conflicts[:10]) + (" …" if len(conflicts) > 10 else "")
            raise WorktreeError(
                f"merge of worker {tree.job_id} refused: {len(conflicts)} file(s) it changed "
                f"also changed in your working tree since it started ({shown}); nothing was "
                f"written. The branch {tree.branch} keeps its work: merge it with git "
                "yourself, or drop it",
                code="worktree_conflict",
            )
        files: dict[str, tuple[str, bytes] | None] = {}
        for path in paths:
            entry = wanted.get(path)
            if entry is None:
                files[path] = None
            else:
                mode, oid = entry
                if mode not in ("100644", "100755", "120000"):
                    raise WorktreeError(
                        f"merge of worker {tree.job_id} refused: {path} is a {mode} entry "
                        "(a submodule?); merge the branch with git yourself"
                    )
                files[path] = (mode, git.run("cat-file", "blob", oid))
        checkpoints.write_files(
            files,
            prompt=f"merge of worker {tree.job_id} ({tree.branch})",
            data={"worktree_merge": tree.job_id, "branch": tree.branch},
        )
        self.drop(tree)
        return change

    def drop(self, tree: WorkerTree) -> None:
        """Remove the worktree, its branch and its record."""
        self._remove(tree, branch=True)

    def _remove(self, tree: WorkerTree, *, branch: bool = False) -> None:
        try:
            git = self._user_git(tree)
        except WorktreeError:
            git = None
        if git is not None and Path(tree.path).exists():
            git.run("worktree", "remove", "--force", "--force", tree.path, ok=(0, 1, 128))
        shutil.rmtree(tree.folder, ignore_errors=True)
        if git is not None:
            git.run("worktree", "prune", ok=(0, 1, 128))
            if branch:
                git.run("branch", "-D", "--", tree.branch, ok=(0, 1))

    def close(self) -> None:
        """At the end of the session: remove the worktree folders it made. A finished
        worker's branch and record stay (its work can still be merged with git); an
        unfinished one (cancelled) goes entirely."""
        for tree in self.records():
            if tree.job_id not in self._made:
                continue
            if tree.head is None:
                self._remove(tree, branch=True)
            else:
                git = self._user_git(tree)
                git.run("worktree", "remove", "--force", "--force", tree.path, ok=(0, 1, 128))

    def clean_stale(self) -> list[WorkerTree]:
        """Remove the worktrees whose making process is gone (a crashed session); their branch
        goes too unless it holds a collected result. Returns what was removed."""
        removed = []
        for tree in self.records():
            if _alive(tree.pid) and tree.pid != 0:
                continue
            try:
                self._remove(tree, branch=tree.head is None)
            except WorktreeError:
                shutil.rmtree(tree.folder, ignore_errors=True)
            removed.append(tree)
        return removed


def _entries(git: _Git, commit: str, paths: Sequence[str]) -> dict[str, tuple[str, str]]:
    """Mode and object id of each of ``paths`` in ``commit``."""
    return tree_entries(git.run("ls-tree", "-r", "-z", "--full-tree", commit), set(paths))


def describe(tree: WorkerTree, change: WorkerDiff) -> dict[str, Any]:
    """The ``worktree`` part of a worker's dispatch result."""
    return {
        "branch": tree.branch,
        "path": tree.path,
        "base": tree.base,
        "head": tree.head,
        "files": [f"{status} {path}" for status, path in change.files],
        "stat": change.stat,
        "diff": change.patch,
        "merge": (
            f"worktree(action='merge', job_id='{tree.job_id}') writes these changes into the "
            f"working tree; worktree(action='drop', job_id='{tree.job_id}') discards them"
        ),
    }
