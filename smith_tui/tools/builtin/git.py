"""``git``: read-only repository inspection for the orchestrator (status, log, diff, show, blame).

Safety rests on these layers:

* an allowlist of subcommands and, per subcommand, of options (with a check of
  each option's value); anything else is refused with a message saying why;
* a fixed command line that disables every way a repository's own config can
  make git run a program (pager, external diff, textconv, fsmonitor, hooks,
  filter drivers, gpg, transports) and keeps ``status`` from writing the index;
* a scrubbed environment: no inherited ``GIT_*`` variables, no system or
  global config, no transport of any kind (so a partial clone never fetches a
  missing object: that object is an error instead), and a private copy of the
  index (``GIT_INDEX_FILE``) so that no command can rewrite the repository's own;
* no config includes: a repository whose config has ``include.path`` or
  ``includeIf.<cond>.path`` is refused before any git command reads it, and
  ``core.excludesFile`` and similar file settings are overridden, so git reads
  no file outside the project;
* a pinned location: the work tree is the folder holding the ``.git`` found
  from the project root (``GIT_WORK_TREE``, so ``core.worktree`` cannot move
  it), and the repository (``GIT_DIR``) must belong to that folder.

Positional arguments (revisions and paths, ``~`` and ``:`` forms included) can
never start with ``-`` and may not point outside the project.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path

from pydantic import Field

from smith_tui.tools.args import max_output_chars
from smith_tui.tools.builtin.git_argv import build_command
from smith_tui.tools.builtin.git_options import NAME, GitCommand
from smith_tui.tools.builtin.git_repository import (
    OUTPUT_CAP,
    locate_repository,
    repository_overrides,
    run_git,
)
from smith_tui.tools.files import project_root
from smith_tui.tools.output_budget import budget_text
from smith_tui.tools.safe_git import base_argv, find_git
from smith_tui.tools.spec import ToolArgs, ToolContext, ToolError, ToolOutput, ToolSpec

DEFAULT_MAX_CHARS = 16_000


class Args(ToolArgs):
    """Arguments of ``git``; which options and paths are allowed is checked by the tool."""

    command: GitCommand = Field(description="The git subcommand to run.")
    args: list[str] = Field(
        [],
        description="Options, revisions and paths for the subcommand, one per "
        "entry; put paths after '--' to make them unambiguous.",
    )


async def handler(args: Args, ctx: ToolContext) -> ToolOutput:
    """Run one allowed, read-only git command in the project."""
    root = project_root(ctx)
    git = find_git()
    repo = await locate_repository(git, root, ctx)
    tail = build_command(args.command, args.args, root, repo.work_tree)
    overrides = await repository_overrides(git, repo, ctx)
    with tempfile.TemporaryDirectory(prefix="smith-git-") as scratch:
        env = repo.env(overrides.pairs)
        # Work on a copy of the index: some read commands (git diff) refresh and
        # rewrite it even with optional locks off; the copy takes those writes.
        private_index = Path(scratch) / "index"
        if repo.index.is_file():
            await asyncio.to_thread(shutil.copy2, repo.index, private_index)
        env["GIT_INDEX_FILE"] = str(private_index)
        argv = [*base_argv(git, overrides.pairs), *tail]
        code, out, err, truncated = await run_git(argv, root, ctx, env)
    shown = " ".join([args.command, *args.args])
    if code != 0 and not truncated:  # a truncated run was stopped by us
        note = ""
        if overrides.partial_clone:
            note = (
                " (this repository is a partial clone: the git tool never fetches objects "
                "that are missing locally, so commands that need them fail)"
            )
        raise ToolError(
            f"{NAME}: `git {shown}` failed (exit {code}){note}: {budget_text(err or out, 2000)}",
            code="git_failed",
            data={"exit_code": code},
        )
    if not out.strip():
        empty = "no differences" if args.command == "diff" else "no output"
        out = f"(git {shown}: {empty})"
    if truncated:
        out += f"\n[output stopped after {OUTPUT_CAP} bytes]"
    content = budget_text(out, max_output_chars(ctx, NAME, DEFAULT_MAX_CHARS))
    return ToolOutput(
        content,
        metadata={"command": args.command, "args": tail[1:], "chars": len(out)},
    )


TOOL = ToolSpec(
    name=NAME,
    description=(
        "Inspect the project's git repository without changing anything: status, log, diff, "
        "show or blame, e.g. to review what a worker changed. Pass the subcommand as "
        "'command' and further git arguments as 'args' (a list of strings), e.g. "
        "{command: 'diff', args: ['--stat', 'HEAD~1']}, {command: 'log', args: ['--oneline', "
        "'-n', '20', '--', 'src/']}, {command: 'blame', args: ['-L', '10,40', 'src/app.py']}. "
        "Only read-only options are accepted (no --output, external diff, textconv, -c, "
        "--git-dir, …); paths must stay inside the project. Long output is cut in the "
        "middle with a note."
    ),
    args=Args,
    handler=handler,
    role_allowlist=frozenset({"orchestrator"}),
)
