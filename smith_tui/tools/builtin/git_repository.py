"""Which repository the ``git`` tool reads, checked before any command runs.

The work tree is pinned to the folder holding the ``.git`` found from the project root,
the repository must belong to it (its own, a linked worktree's or a submodule's), a
config that includes other files and objects borrowed from outside the project are
refused, and the filter drivers and per-protocol permissions the config names are
switched off for the call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from smith_tui.store.git_includes import config_includes, work_tree_of
from smith_tui.tools.builtin.git_options import NAME
from smith_tui.tools.process import run_capture
from smith_tui.tools.safe_git import (
    OVERRIDE_PATTERN,
    ConfigOverrides,
    base_argv,
    git_env,
    overrides_for,
)
from smith_tui.tools.spec import ToolContext, ToolError

OUTPUT_CAP = 16 * 1024 * 1024
"""Most bytes of a git command's output read; the command is stopped there."""
_TIME_LIMIT = 60.0


async def run_git(
    argv: list[str], root: Path, ctx: ToolContext, env: Mapping[str, str]
) -> tuple[int, str, str, bool]:
    """Run one git command of the tool in ``root``: exit code, stdout, stderr (stripped) and
    whether the output was cut at :data:`OUTPUT_CAP`."""
    result = await run_capture(
        argv, cwd=root, cancel=ctx.cancel, env=env, time_limit=_TIME_LIMIT, max_bytes=OUTPUT_CAP
    )
    return (
        result.returncode,
        result.stdout.decode("utf-8", "replace"),
        result.stderr.decode("utf-8", "replace").strip(),
        result.truncated,
    )


@dataclass(frozen=True)
class Repository:
    """Where the tool's git runs: the pinned work tree, its repository and index."""

    work_tree: Path
    git_dir: Path
    index: Path

    def env(self, extra: Sequence[tuple[str, str]] = ()) -> dict[str, str]:
        """:func:`git_env` pinned to this repository and work tree."""
        env = git_env(extra)
        env.update(GIT_DIR=str(self.git_dir), GIT_WORK_TREE=str(self.work_tree))
        return env


def _not_a_repository(message: str) -> ToolError:
    return ToolError(f"{NAME}: {message}", code="not_a_repository")


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _linked_back(git_dir: Path, work_tree: Path) -> bool:
    """Whether a linked worktree's repository (``.git/worktrees/<name>``) names ``work_tree``."""
    try:
        text = (git_dir / "gitdir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return False
    return bool(text) and (git_dir / text).resolve() == (work_tree / ".git").resolve()


async def _submodule_of(git: str, git_dir: Path, work_tree: Path, ctx: ToolContext) -> bool:
    """Whether a submodule's repository (``.git/modules/<name>``) names ``work_tree``."""
    argv = [*base_argv(git), "config", "--file", str(git_dir / "config"), "core.worktree"]
    code, out, _, _ = await run_git(argv, work_tree, ctx, git_env())
    value = out.strip()
    return code == 0 and bool(value) and (git_dir / value).resolve() == work_tree


def _resolved(base: Path, *texts: str) -> list[Path]:
    return [(base / text.strip()).resolve() for text in texts]


async def locate_repository(git: str, root: Path, ctx: ToolContext) -> Repository:
    """Find the repository of ``root`` and pin where git may look.

    The work tree is the nearest folder (``root`` or a parent) holding a
    ``.git``; ``core.worktree`` cannot move it. The repository must be the one
    git's own discovery finds (which also applies ``safe.directory``) and must
    lie inside that folder, or name it back as a linked worktree or submodule
    does: a ``.git`` file pointing at some other repository is refused.
    """
    await _refuse_config_includes(git, root)
    work_tree = work_tree_of(root)
    code, out, err, _ = await run_git(
        [*base_argv(git), "rev-parse", "--absolute-git-dir"], root, ctx, git_env()
    )
    if code != 0 or work_tree is None:
        raise _not_a_repository(
            f"{root} is not inside a git work tree ({err or out.strip() or 'no repository'})"
        )
    found = out
    pinned = git_env()
    pinned.update(GIT_DIR=str(work_tree / ".git"), GIT_WORK_TREE=str(work_tree))
    query = ["--is-inside-work-tree", "--absolute-git-dir", "--git-common-dir", "--git-path"]
    code, out, err, _ = await run_git(
        [*base_argv(git), "rev-parse", *query, "index"], root, ctx, pinned
    )
    lines = out.splitlines()
    if code != 0 or len(lines) < 4 or lines[0].strip() != "true":
        raise _not_a_repository(
            f"{root} is not inside a git work tree ({err or out.strip() or 'no repository'})"
        )
    found_dir, git_dir, common, index = _resolved(root, found, *lines[1:4])
    if git_dir != found_dir:
        raise _not_a_repository(
            f"git finds the repository {found_dir} from {root}, not the one named by "
            f"{work_tree / '.git'}; the git tool only reads the project's own repository"
        )
    linked = not _within(git_dir, work_tree) and _linked_back(git_dir, work_tree)
    own = _within(git_dir, work_tree) or linked
    if not own:
        own = await _submodule_of(git, git_dir, work_tree, ctx)
    shared = common == git_dir or _within(common, work_tree)
    if linked and git_dir.parent == common / "worktrees":
        shared = True
    if not own or not shared:
        where = git_dir if not own else common
        raise _not_a_repository(
            f"{work_tree / '.git'} leads to the repository {where}, which is outside the "
            f"project and does not name {work_tree} as its work tree; the git tool only "
            "reads the project's own repository"
        )
    _refuse_outside_alternates(common, work_tree)
    return Repository(work_tree, git_dir, index)


async def _refuse_config_includes(git: str, root: Path) -> None:
    """Refuse a repository whose config includes other files, before git reads that config.

    Every git command follows ``include.path`` and ``includeIf.<cond>.path``,
    which can name any file on the machine (a FIFO or device would block git);
    no option turns that off, so the tool runs no git command on such a repository.
    """
    found = await asyncio.to_thread(config_includes, root, git)
    if not found:
        return
    listed = "; ".join(item.describe() for item in found[:5])
    raise ToolError(
        f"{NAME}: the repository's config includes other files or cannot be read safely "
        f"({listed}); the git tool does not follow config includes, since they can read "
        "files outside the project. Remove the include (or run git yourself) to use this tool.",
        code="git_failed",
        data={"includes": [item.describe() for item in found]},
    )


def _refuse_outside_alternates(common: Path, work_tree: Path) -> None:
    """Refuse a repository that borrows objects from a folder outside the project.

    ``objects/info/alternates`` makes git read objects from other object stores
    (``clone --shared``/``--reference``); a hostile repository could name another
    repository on the machine and have ``show`` print its files.
    """
    alternates = common / "objects" / "info" / "alternates"
    try:
        text = alternates.read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise _not_a_repository(f"cannot read {alternates}: {exc.strerror or exc}") from None
    for line in text.splitlines():
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        target = (alternates.parent.parent / entry).resolve()
        if not _within(target, work_tree):
            raise _not_a_repository(
                f"the repository borrows objects from {target} ({alternates}), which is "
                "outside the project; the git tool only reads the project's own objects "
                "(run `git repack -a -d` and remove that file to make the repository "
                "self-contained)"
            )


async def repository_overrides(git: str, repo: Repository, ctx: ToolContext) -> ConfigOverrides:
    """Switch off every filter driver and every per-protocol permission in the config.

    Filter drivers (``filter.<name>.clean``/``smudge``/``process``) run programs
    when git reads work-tree files, and ``protocol.<name>.allow=always`` beats
    the generic ``protocol.allow=never``; their names are only known from the
    config. A partial clone (promisor remote) is noted so that a missing object
    can be explained.
    """
    argv = [*base_argv(git), "config", "-z", "--name-only", "--get-regexp", OVERRIDE_PATTERN]
    code, out, _, _ = await run_git(argv, repo.work_tree, ctx, repo.env())
    if code not in (0, 1):
        return ConfigOverrides([], False)
    return overrides_for(out)
