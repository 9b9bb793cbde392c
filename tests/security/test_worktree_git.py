"""Worker worktrees in a hostile repository: its config and hooks run nothing (files section).

The repository names a filter driver for every file and ships a post-checkout hook; making a
worker's worktree (which checks files out) and collecting its result (which reads them back)
must start neither. The control runs plain ``git worktree add`` in the same repository and
shows that both programs do run there.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from smith_tui.tools.worktrees import WorkerTrees, WorktreeError
from tests.support.runtime import make_git_repo

SECTION = "files"


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
