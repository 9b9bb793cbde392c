"""The ``worktree`` tool: merge or drop the worktree a dispatched worker ran in.

A worker dispatched with ``worktree`` (or ``services.dispatch.worktree``) leaves its work on
a branch (:mod:`smith_tui.tools.worktrees`); its dispatch result names it. ``merge`` writes
its changes into the project (refused, nothing written, when a file it changed also changed
in the project since it started), ``drop`` discards them, ``list`` shows the ones waiting.
:func:`merge_worker` and :func:`drop_worker` are what the front end's dispatch tree calls too.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Literal

from pydantic import Field

from smith_tui.store.git_includes import work_tree_of
from smith_tui.tools.checkpoints.shadow_repo import Checkpoints
from smith_tui.tools.files import project_root
from smith_tui.tools.spec import ToolArgs, ToolContext, ToolError, ToolOutput, ToolSpec
from smith_tui.tools.worktrees import WorkerTree, WorkerTrees

NAME = "worktree"


class WorktreeArgs(ToolArgs):
    """Arguments of ``worktree``."""

    action: Literal["merge", "drop", "list"] = Field(
        description="merge: write the worker's changes into the project; drop: discard them; "
        "list: the worker worktrees waiting for one or the other."
    )
    job_id: str | None = Field(
        None, description="The worker's job id (from its dispatch result); not for list."
    )


def _tree(trees: WorkerTrees, job_id: str | None, root: Path) -> WorkerTree:
    if not job_id or not job_id.strip():
        raise ToolError("`job_id` is required for merge and drop: the job_id of the dispatch")
    tree = trees.get(job_id.strip())
    if tree is None:
        raise ToolError(
            f"no worker worktree for job {job_id.strip()!r} (merged or dropped already, or "
            "dispatched without `worktree`); worktree(action='list') shows the waiting ones",
            code="not_found",
        )
    if Path(tree.repo) != work_tree_of(root.resolve()):
        raise ToolError(f"job {tree.job_id} worked on {tree.repo}, not on this project")
    return tree


def merge_worker(trees: WorkerTrees, job_id: str, root: Path) -> str:
    """Merge the worker ``job_id``'s changes into the project at ``root``; say what it did.

    Blocking (git): run it off the event loop. Raises :class:`ToolError` saying why not.
    """
    tree = _tree(trees, job_id, root)
    checkpoints = Checkpoints.for_project(trees.data_dir, Path(tree.repo))
    change = trees.merge(tree, checkpoints)
    if not change.files:
        return f"worker {tree.job_id} changed no files; its worktree and branch were removed"
    files = ", ".join(f"{status} {path}" for status, path in change.files)
    return (
        f"merged worker {tree.job_id} (branch {tree.branch}) into the working tree: {files}. "
        "Its worktree and branch were removed; /undo takes the merge back."
    )


def drop_worker(trees: WorkerTrees, job_id: str, root: Path) -> str:
    """Discard the worker ``job_id``'s worktree and branch; say what it did (blocking)."""
    tree = _tree(trees, job_id, root)
    trees.drop(tree)
    return f"dropped worker {tree.job_id}: its worktree and the branch {tree.branch} are gone"


def _listing(trees: WorkerTrees, root: Path) -> str:
    here = work_tree_of(root.resolve())
    lines = [
        f"{t.job_id}: branch {t.branch}, " + ("finished" if t.head else "running")
        for t in trees.records()
        if Path(t.repo) == here
    ]
    return "\n".join(lines) if lines else "no worker worktrees for this project"


def worktree_tool(trees: WorkerTrees) -> ToolSpec[WorktreeArgs]:
    """The ``worktree`` tool over ``trees``."""

    async def handle(args: WorktreeArgs, ctx: ToolContext) -> ToolOutput:
        root = project_root(ctx)
        if args.action == "list":
            return ToolOutput(content=await asyncio.to_thread(_listing, trees, root))
        act = merge_worker if args.action == "merge" else drop_worker
        text = await asyncio.to_thread(act, trees, args.job_id or "", root)
        return ToolOutput(content=text, mutation_state="attempted")

    return ToolSpec(
        name=NAME,
        description=(
            "Merge or drop the git worktree of a worker dispatched with worktree: true (its "
            "dispatch result names the job_id, the branch and the diff). merge writes its "
            "changes into the project, all or none: refused when a file it changed also "
            "changed here since it started (say so to the user, or drop it and redo the "
            "work). drop discards them. list shows the worker worktrees waiting."
        ),
        args=WorktreeArgs,
        handler=handle,
        mutating=True,
    )
