"""The read-only git tool on real repositories: every subcommand, budgeting and every refusal."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from smith_tui.cancel import Cancelled
from smith_tui.tools.builtin.git import TOOL
from smith_tui.tools.builtin.git_argv import build_command
from smith_tui.tools.builtin.git_options import COMMANDS
from smith_tui.tools.spec import ToolContext, ToolError, ToolOutput
from tests.support.tools import project_context, tool_budget

AUTHOR_ENV = {
    "GIT_AUTHOR_NAME": "Ada Author",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Ada Author",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
    "GIT_AUTHOR_DATE": "2024-01-02T03:04:05Z",
    "GIT_COMMITTER_DATE": "2024-01-02T03:04:05Z",
}

handler = TOOL.run  # validates like the executor, then runs the handler


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run git for test setup, isolated from the user's configuration."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    full_env.update(GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1", **AUTHOR_ENV)
    full_env.update(env or {})
    done = subprocess.run(
        ["git", *args],
        cwd=repo,
        env=full_env,
        capture_output=True,
        text=True,
        check=True,
        stdin=subprocess.DEVNULL,
    )
    return done.stdout


def commit_all(repo: Path, message: str, author: str = "Ada Author") -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, env={"GIT_AUTHOR_NAME": author})
    return git(repo, "rev-parse", "HEAD").strip()


def make_repo(path: Path) -> Path:
    """A repository with three commits and a known history."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    (path / "src").mkdir()
    (path / "src" / "app.py").write_text("def main():\n    return 1\n")
    (path / "README.md").write_text("# Demo\n")
    commit_all(path, "Initial commit")
    (path / "src" / "app.py").write_text("def main():\n    return 2\n\n\ndef helper():\n    pass\n")
    commit_all(path, "Change main and add helper", author="Bob Builder")
    (path / "docs.txt").write_text("notes\n")
    commit_all(path, "Add docs")
    return path


def ctx_for(root: Path, **config: Any) -> ToolContext:
    return project_context(root, "orchestrator", **config)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


async def run(repo: Path, command: str, *args: str, **config: Any) -> ToolOutput:
    return await handler({"command": command, "args": list(args)}, ctx_for(repo, **config))


# ----------------------------------------------------------------------------- success paths


async def test_status_clean_and_dirty(repo: Path) -> None:
    clean = await run(repo, "status")
    assert "nothing to commit, working tree clean" in clean.content
    (repo / "README.md").write_text("# Changed\n")
    (repo / "new.txt").write_text("x\n")
    short = await run(repo, "status", "-sb")
    assert short.content.splitlines() == ["## main", " M README.md", "?? new.txt"]
    porcelain = await run(repo, "status", "--porcelain=v1", "--", "new.txt")
    assert porcelain.content.strip() == "?? new.txt"


async def test_log_with_options_and_paths(repo: Path) -> None:
    oneline = await run(repo, "log", "--oneline")
    subjects = [line.split(" ", 1)[1] for line in oneline.content.splitlines()]
    assert subjects == ["Add docs", "Change main and add helper", "Initial commit"]
    limited = await run(repo, "log", "-n", "1", "--format=%s|%an")
    assert limited.content.strip() == "Add docs|Ada Author"
    numeric = await run(repo, "log", "-2", "--format=%s")
    assert numeric.content.split() == ["Add", "docs", "Change", "main", "and", "add", "helper"]
    by_author = await run(repo, "log", "--author=Bob", "--format=%s")
    assert by_author.content.strip() == "Change main and add helper"
    by_path = await run(repo, "log", "--format=%s", "--", "src/app.py")
    assert by_path.content.splitlines() == ["Change main and add helper", "Initial commit"]
    patch = await run(repo, "log", "-p", "-1", "--format=%s", "HEAD~1")
    assert "+def helper():" in patch.content


async def test_diff_worktree_cached_and_between_revisions(repo: Path) -> None:
    assert (await run(repo, "diff")).content == "(git diff: no differences)"
    (repo / "docs.txt").write_text("notes\nmore\n")
    worktree = await run(repo, "diff")
    assert "+more" in worktree.content
    git(repo, "add", "docs.txt")
    assert (await run(repo, "diff")).content == "(git diff: no differences)"
    cached = await run(repo, "diff", "--cached", "--stat")
    assert "docs.txt | 1 +" in cached.content
    between = await run(repo, "diff", "HEAD~2", "HEAD~1", "--", "src")
    assert "-    return 1" in between.content and "+    return 2" in between.content
    names = await run(repo, "diff", "--name-only", "HEAD~2..HEAD")
    assert names.content.split() == ["docs.txt", "src/app.py"]


async def test_show_commit_and_blob(repo: Path) -> None:
    commit = await run(repo, "show", "--stat", "HEAD~1")
    assert "Change main and add helper" in commit.content
    assert "src/app.py | 6 +++++-" in commit.content
    blob = await run(repo, "show", "HEAD~2:src/app.py")
    assert blob.content == "def main():\n    return 1\n"


async def test_blame_whole_file_range_and_revision(repo: Path) -> None:
    whole = await run(repo, "blame", "src/app.py")
    lines = whole.content.splitlines()
    assert len(lines) == 6
    assert "Ada Author" in lines[0] and "Bob Builder" in lines[1]
    ranged = await run(repo, "blame", "-L", "5,6", "--", "src/app.py")
    assert len(ranged.content.splitlines()) == 2
    old = await run(repo, "blame", "-s", "HEAD~2", "src/app.py")
    assert len(old.content.splitlines()) == 2 and "return 1" in old.content


async def test_long_output_is_budgeted_with_a_note(repo: Path) -> None:
    (repo / "big.txt").write_text("".join(f"line {n}\n" for n in range(5000)))
    commit_all(repo, "Big file")
    out = await run(repo, "show", "HEAD", services=tool_budget("git", 3000))
    assert len(out.content) < 3200
    assert "cut from the middle" in out.content
    assert out.content.startswith("commit ")
    assert out.content.rstrip().endswith("+line 4999")


async def test_project_root_may_be_a_subfolder_of_the_repository(repo: Path) -> None:
    out = await handler({"command": "log", "args": ["--format=%s", "-1"]}, ctx_for(repo / "src"))
    assert out.content.strip() == "Add docs"


async def test_inherited_git_environment_is_ignored(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = make_repo(tmp_path / "other")
    (other / "x").write_text("x")
    commit_all(other, "Commit in the other repository")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    out = await run(repo, "log", "-1", "--format=%s")
    assert out.content.strip() == "Add docs"


async def test_metadata_records_the_normalised_command(repo: Path) -> None:
    out = await run(repo, "log", "-n", "1", "--oneline")
    assert out.metadata["command"] == "log"
    assert "--max-count=1" not in out.metadata["args"]
    assert "-n1" in out.metadata["args"] and "--no-ext-diff" in out.metadata["args"]


def test_spec_is_orchestrator_only_and_documents_arguments() -> None:
    assert TOOL.name == "git"
    assert TOOL.role_allowlist == frozenset({"orchestrator"})
    assert not TOOL.mutating
    assert TOOL.input_schema["properties"]["command"]["enum"] == list(COMMANDS)
    assert TOOL.input_schema["properties"]["args"]["items"] == {"type": "string"}


async def test_cancelled_call_raises(repo: Path) -> None:
    ctx = ctx_for(repo)
    ctx.cancel.cancel("stop")
    with pytest.raises(Cancelled):
        await handler({"command": "status"}, ctx)


# ----------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "missing required argument `command` (one of status, log, diff, show, blame)"),
        ({"command": 3}, "`command` must be one of status, log, diff, show, blame, got 3"),
        (
            {"command": "commit"},
            "`command` must be one of status, log, diff, show, blame, got 'commit'",
        ),
        (
            {"command": "push", "args": []},
            "`command` must be one of status, log, diff, show, blame, got 'push'",
        ),
        (
            {"command": "status", "args": "--short"},
            "`args` must be an array of strings, got '--short'",
        ),
        ({"command": "log", "args": [1]}, "`args[0]` must be a string, got 1"),
        ({"command": "log", "args": [None]}, "`args[0]` must be a string, got None"),
        ({"command": "log", "args": [["-1"]]}, "`args[0]` must be a string, got ['-1']"),
        ({"command": "log", "args": ["HEAD\x00"]}, "contains a NUL character"),
        ({"command": "log", "args": ["HEAD\n-p"]}, "contains a line break"),
        ({"command": "log", "args": ["x"] * 65}, "'args' has 65 entries; the limit is 64"),
        ({"command": "log", "args": ["a" * 5000]}, "the limit is 4096"),
        (
            {"command": "log", "args": ["--frobnicate"]},
            "option '--frobnicate' is not allowed for git log",
        ),
        ({"command": "status", "args": ["-p"]}, "option '-p' is not allowed for git status"),
        (
            {"command": "log", "args": ["-n", "many"]},
            "git log -n: expects a non-negative whole number; got 'many'",
        ),
        ({"command": "log", "args": ["-n"]}, "option '-n' needs a value"),
        ({"command": "log", "args": ["--author"]}, "option '--author' needs a value"),
        ({"command": "log", "args": ["--oneline=3"]}, "option '--oneline' takes no value"),
        ({"command": "log", "args": ["--date=tomorrow"]}, "expects a date format"),
        ({"command": "status", "args": ["--porcelain=v9"]}, "expects one of v1, v2"),
        ({"command": "status", "args": ["-sz"]}, "option '-z' is not allowed for git status"),
        ({"command": "diff", "args": ["-pU3"]}, "option '-U' takes a value and cannot be combined"),
        ({"command": "log", "args": ["-"]}, "'-' (standard input) is not supported"),
        ({"command": "log", "args": ["--", ""]}, "empty revision or path"),
        ({"command": "blame", "args": []}, "git blame needs exactly one file"),
        ({"command": "blame", "args": ["a", "b", "c"]}, "at most one revision"),
        (
            {"command": "blame", "args": ["HEAD", "--", "a", "b"]},
            "git blame needs exactly one file",
        ),
        (
            {"command": "log", "args": ["--", "../outside"]},
            "path '../outside' is outside the project root",
        ),
        (
            {"command": "log", "args": ["/etc/passwd"]},
            "path '/etc/passwd' is outside the project root",
        ),
        ({"command": "status", "extra": 1}, "unknown argument `extra` (accepted: command, args)"),
    ],
)
async def test_bad_requests_are_refused(repo: Path, args: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolError) as caught:
        await handler(args, ctx_for(repo))
    assert message in caught.value.message
    assert caught.value.message.startswith("git: ")
    assert caught.value.code == "invalid_arguments"


async def test_arguments_must_be_an_object(repo: Path) -> None:
    with pytest.raises(ToolError, match="arguments must be a JSON object"):
        await handler(["status"], ctx_for(repo))  # type: ignore[arg-type]


async def test_not_a_repository(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    with pytest.raises(ToolError) as caught:
        await handler({"command": "status"}, ctx_for(folder))
    assert caught.value.code == "not_a_repository"
    assert "is not inside a git work tree" in caught.value.message


async def test_git_failure_reports_stderr(repo: Path) -> None:
    with pytest.raises(ToolError) as caught:
        await run(repo, "show", "no-such-revision")
    assert caught.value.code == "git_failed"
    assert "`git show no-such-revision` failed (exit 128)" in caught.value.message
    assert "no-such-revision" in caught.value.message
    with pytest.raises(ToolError, match="no such path"):
        await run(repo, "blame", "missing.py")


def test_options_are_normalised_to_attached_values(tmp_path: Path) -> None:
    argv = build_command("log", ["-n", "3", "--author", "Bob", "-U", "5", "HEAD"], tmp_path)
    assert argv[-5:] == ["-n3", "--author=Bob", "-U5", "--end-of-options", "HEAD"]
    blame = build_command("blame", ["-L", "1,2", "HEAD", "f.py"], tmp_path)
    assert blame == ["blame", "--no-textconv", "-L1,2", "HEAD", "--", "f.py"]
