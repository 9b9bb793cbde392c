"""Worker worktrees in a hostile repository: its config and hooks run nothing (files section).

The repository names a filter driver for every file and ships a post-checkout hook; making a
worker's worktree (which checks files out) and collecting its result (which reads them back)
must start neither. The control runs plain ``git worktree add`` in the same repository and
shows that both programs do run there. A worker in a worktree cannot write the parent's
files by their absolute path, with ``write`` (outside its project root) or ``bash`` (the
sandbox shows only the worktree writable); the same worker without a worktree can.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import pytest

from smith_tui.tools.sandbox import probe_bwrap
from smith_tui.tools.worktrees import WorkerTrees, WorktreeError
from tests.dispatch.support import dispatch, report
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import make_git_repo, open_runtime

SECTION = "files"
needs_bwrap = pytest.mark.skipif(not probe_bwrap().ok, reason="bubblewrap is not usable here")


def _hostile(tmp_path: Path) -> tuple[Path, Path]:
    repo = make_git_repo(tmp_path / "repo")
    marker = tmp_path / "ran"
    program = f"sh -c 'echo $0 >> {marker}; cat' filter"
    subprocess.run(["git", "-C", str(repo), "config", "filter.evil.smudge", program], check=True)
    subprocess.run(["git", "-C", str(repo), "config", "filter.evil.clean", program], check=True)
    (repo / ".gitattributes").write_text("* filter=evil\n")
    ident = ["-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "-C", str(repo), "add", ".gitattributes"], check=True)
    subprocess.run(["git", "-C", str(repo), *ident, "commit", "-qm", "attrs"], check=True)
    marker.unlink(missing_ok=True)
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\necho hook >> {marker}\n")
    hook.chmod(0o755)
    return repo, marker


@pytest.mark.attack(SECTION, "run a filter driver or a hook of the repository through a worktree")
def test_a_worker_worktree_runs_no_filter_and_no_hook(tmp_path: Path) -> None:
    repo, marker = _hostile(tmp_path)
    trees = WorkerTrees(tmp_path / "data")
    tree = trees.create(repo, "job-aaaaaaaaaa")
    Path(tree.path, "README.md").write_text("# changed by the worker\n")
    done, change = trees.collect(tree, "worker")
    assert change.files == (("M", "README.md"),)
    trees.drop(done)
    assert not marker.exists()


@pytest.mark.control(SECTION, "plain git worktree add runs the repository's filter and hook")
def test_plain_git_worktree_add_runs_them(tmp_path: Path) -> None:
    repo, marker = _hostile(tmp_path)
    target = tmp_path / "plain-tree"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", str(target)], check=True)
    ran = marker.read_text()
    assert "filter" in ran and "hook" in ran


@pytest.mark.attack(SECTION, "make git read any file through a config include")
def test_a_repository_with_a_config_include_is_refused(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    secret = tmp_path / "elsewhere.cfg"
    secret.write_text('[filter "x"]\n\tsmudge = false\n')
    subprocess.run(["git", "-C", str(repo), "config", "include.path", str(secret)], check=True)
    with pytest.raises(WorktreeError, match="includes other files"):
        WorkerTrees(tmp_path / "data").create(repo, "job-bbbbbbbbbb")
    assert not (tmp_path / "data" / "worktrees" / "job-bbbbbbbbbb").exists()


def _escape_script(repo: Path) -> list[Any]:
    """A worker that writes the parent's file by its absolute path, with write and with bash."""
    target = repo / "README.md"
    return [
        text_reply(
            tool_calls=[
                tool_call("write", {"path": str(target), "content": "by write\n"}),
                tool_call("bash", {"command": f"echo by bash >> {target}"}),
                report(status="ok", summary="tried"),
            ]
        ),
        text_reply("done"),
    ]


async def _worker_run(tmp_path: Path, server: ScriptedLLMServer, *, worktree: bool) -> Path:
    repo = make_git_repo(tmp_path / "repo")
    config = {"active_role": "orchestrator", "permissions": {"mode": "yolo"}}
    server.enqueue(
        text_reply(tool_calls=[dispatch("worker", "write it", worktree=worktree)]),
        *_escape_script(repo),
    )
    runtime, _ = open_runtime(tmp_path, server.base_url, config=config, cwd=repo)
    await runtime.run_turn("go")
    await runtime.aclose()
    return repo


@needs_bwrap
@pytest.mark.attack(SECTION, "a worker in a worktree writes the parent's files by absolute path")
async def test_a_worker_in_a_worktree_cannot_write_the_parents_files(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    repo = await _worker_run(tmp_path, llm_server, worktree=True)
    assert await asyncio.to_thread((repo / "README.md").read_text) == "# demo\n"


@needs_bwrap
@pytest.mark.control(SECTION, "a worker without a worktree writes the same path, both ways")
async def test_a_worker_without_a_worktree_writes_the_parents_files(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    repo = await _worker_run(tmp_path, llm_server, worktree=False)
    assert await asyncio.to_thread((repo / "README.md").read_text) == "by write\nby bash\n"
