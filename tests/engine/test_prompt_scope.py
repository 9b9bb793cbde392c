"""Per-turn scope against real git repositories and real index files."""

from __future__ import annotations

import asyncio
import os
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from smith_tui.engine import events as ev
from smith_tui.engine import runtime as runtime_module
from smith_tui.engine.prompt import build_system_prompt
from smith_tui.engine.roles import resolve_role
from smith_tui.engine.scope import TurnScope, compute_scope
from tests.engine.test_headless_cli import smith
from tests.support.llm_server import ScriptedLLMServer, text_reply
from tests.support.runtime import make_git_repo, open_runtime


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src" / "pkg").mkdir(parents=True)
    git(root, "init", "-q")
    git(root, "remote", "add", "origin", "git@github.com:Owner/Proj.git")
    (root / "INDEX.md").write_text("# Proj\n\nUse `make test`.\n", encoding="utf-8")
    return root.resolve()


def test_scope_in_a_git_repository(repo: Path) -> None:
    scope = compute_scope(repo / "src" / "pkg", "INDEX.md")
    assert scope.cwd == repo / "src" / "pkg"
    assert scope.root == repo
    assert scope.origin == "git@github.com:Owner/Proj.git"
    assert scope.normalized_origin == "github.com/Owner/Proj"
    assert scope.project_id is not None and len(scope.project_id) == 16
    assert scope.index_content == "# Proj\n\nUse `make test`.\n"
    assert scope.warnings == ()
    prompt = build_system_prompt(resolve_role("direct"), scope)
    assert f"- Repository root: {repo}\n" in prompt
    assert "- Normalized origin: github.com/Owner/Proj\n" in prompt
    assert prompt.endswith("## Project context\n# Proj\n\nUse `make test`.")


def test_scope_outside_a_repository(tmp_path: Path) -> None:
    (tmp_path / "INDEX.md").write_text("notes", encoding="utf-8")
    scope = compute_scope(tmp_path, "INDEX.md")
    assert scope.root is None and scope.origin is None
    assert scope.project_root == tmp_path.resolve()
    assert scope.project_id  # identified by its path
    assert scope.index_content == "notes"
    assert "Repository root" not in build_system_prompt(resolve_role("direct"), scope)


def test_missing_or_empty_index_gives_none(repo: Path) -> None:
    assert compute_scope(repo, "NOPE.md").index_content is None
    assert compute_scope(repo, None).index_content is None
    (repo / "EMPTY.md").write_text("  \n\n", encoding="utf-8")
    assert compute_scope(repo, "EMPTY.md").index_content is None
    (repo / "adir").mkdir()
    assert compute_scope(repo, "adir").index_content is None


def test_large_index_is_truncated_on_a_line_with_a_note(repo: Path) -> None:
    line = "é" * 20 + "\n"  # 41 bytes per line
    (repo / "INDEX.md").write_text(line * 100, encoding="utf-8")
    content = compute_scope(repo, "INDEX.md", max_index_bytes=1000).index_content
    assert content is not None
    body, note = content.split("\n\n")
    assert body.split("\n") == ["é" * 20] * 24  # 24 whole lines = 984 bytes
    assert note == "[INDEX.md truncated: showing the first 984 of 4100 bytes]"


def test_truncation_inside_a_character_is_not_reported_as_bad_utf8(repo: Path) -> None:
    (repo / "INDEX.md").write_bytes(("é" * 600).encode())  # one line, 1200 bytes
    scope = compute_scope(repo, "INDEX.md", max_index_bytes=501)
    assert scope.index_content is not None
    assert scope.index_content.startswith("é" * 250 + "\n\n[INDEX.md truncated")
    assert scope.warnings == ()


def test_non_utf8_index_is_read_with_replacements(repo: Path) -> None:
    (repo / "INDEX.md").write_bytes(b"caf\xe9 au lait\n")
    scope = compute_scope(repo, "INDEX.md")
    assert scope.index_content == "caf\ufffd au lait\n"
    assert scope.warnings == ("INDEX.md is not valid UTF-8; undecodable bytes were replaced",)


@pytest.mark.parametrize("name", ["/etc/passwd", "../secret.md", "C:\\x.md", "a/../../b"])
def test_unsafe_index_paths_are_ignored(repo: Path, name: str) -> None:
    scope = compute_scope(repo, name)
    assert scope.index_content is None
    assert "must be a relative path inside the project" in scope.warnings[0]


def test_index_in_a_subdirectory(repo: Path) -> None:
    (repo / "docs").mkdir()
    (repo / "docs" / "AGENTS.md").write_text("sub", encoding="utf-8")
    assert compute_scope(repo / "src", "docs/AGENTS.md").index_content == "sub"


def test_failing_discovery_becomes_a_warning(tmp_path: Path) -> None:
    def broken(cwd: Path) -> object:
        raise RuntimeError("git exploded")

    scope = compute_scope(tmp_path, "INDEX.md", broken)
    assert scope == TurnScope(
        cwd=tmp_path,
        index_file="INDEX.md",
        warnings=(f"could not identify the project of {tmp_path}: git exploded",),
    )


def test_custom_discover_object(tmp_path: Path) -> None:
    found = SimpleNamespace(root=tmp_path, origin="", normalized_origin=None, project_id="p1")
    scope = compute_scope(tmp_path, None, lambda cwd: found)
    assert (scope.root, scope.origin, scope.project_id) == (tmp_path, None, "p1")


def test_nonexistent_cwd_is_a_warning_not_a_crash(tmp_path: Path) -> None:
    scope = compute_scope(tmp_path / "gone", "INDEX.md")
    assert scope.root is None and scope.index_content is None
    assert "could not identify the project" in scope.warnings[0]


# ---------------------------------------------------------------------------
# hostile index files: special files and symlinks


def scope_within(seconds: float, cwd: Path, index_file: str) -> TurnScope:
    """``compute_scope`` in a worker thread; a hang fails the test instead of stalling it."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(compute_scope, cwd, index_file)
        try:
            return future.result(timeout=seconds)
        except FutureTimeout:
            # Unblock a FIFO open/read so the worker thread can end.
            fifo = cwd / index_file
            with open(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK), "wb"):
                pass
            pytest.fail("reading the index file hung")


def test_index_file_that_is_a_fifo_is_ignored_with_a_warning(repo: Path) -> None:
    (repo / "INDEX.md").unlink()
    os.mkfifo(repo / "INDEX.md")
    scope = scope_within(30, repo, "INDEX.md")
    assert scope.index_content is None
    assert scope.warnings == (
        f"index_file {repo / 'INDEX.md'} is a FIFO (named pipe), not a regular file; "
        "it was ignored",
    )


def test_index_symlink_out_of_the_project_is_ignored_with_a_warning(
    repo: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("private notes", encoding="utf-8")
    (repo / "INDEX.md").unlink()
    (repo / "INDEX.md").symlink_to(secret)
    scope = compute_scope(repo, "INDEX.md")
    assert scope.index_content is None
    assert scope.warnings == (
        f"index_file 'INDEX.md' resolves to {secret.resolve()}, outside the project {repo}; "
        "it was ignored",
    )


def test_index_symlink_to_a_device_is_ignored(repo: Path) -> None:
    (repo / "INDEX.md").unlink()
    (repo / "INDEX.md").symlink_to("/dev/zero")
    scope = compute_scope(repo, "INDEX.md")
    assert scope.index_content is None
    assert "outside the project" in scope.warnings[0]


def test_index_symlink_inside_the_project_is_read(repo: Path) -> None:
    (repo / "docs").mkdir()
    (repo / "docs" / "guide.md").write_text("the guide", encoding="utf-8")
    (repo / "INDEX.md").unlink()
    (repo / "INDEX.md").symlink_to(repo / "docs" / "guide.md")
    scope = compute_scope(repo, "INDEX.md")
    assert scope.index_content == "the guide"
    assert scope.warnings == ()


def test_huge_sparse_index_reads_only_its_limit(repo: Path) -> None:
    with open(repo / "INDEX.md", "wb") as handle:
        handle.write(b"".join(b"rule %03d\n" % n for n in range(200)))  # 9 bytes a line
        handle.truncate(2 * 1024**3)  # then a 2 GiB hole
    scope = compute_scope(repo, "INDEX.md", max_index_bytes=1000)
    assert scope.index_content is not None
    body, note = scope.index_content.split("\n\n")
    assert body.split("\n") == [f"rule {n:03d}" for n in range(111)]  # 999 bytes
    assert note == "[INDEX.md truncated: showing the first 999 of 2147483648 bytes]"


# ---------------------------------------------------------------------------
# the runtime computes the scope (git discovery, index file) off the event loop


async def test_a_turn_reads_the_index_file_off_the_event_loop(
    tmp_path: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_git_repo(tmp_path / "repo")
    (repo / "INDEX.md").write_text("Run `make check` before committing.\n", encoding="utf-8")
    runtime, _ = open_runtime(tmp_path, llm_server.base_url, cwd=repo)
    threads: list[threading.Thread] = []
    real_compute = runtime_module.compute_scope

    def recording_compute(*args: Any, **kwargs: Any) -> TurnScope:
        threads.append(threading.current_thread())
        return real_compute(*args, **kwargs)

    monkeypatch.setattr(runtime_module, "compute_scope", recording_compute)
    llm_server.enqueue(text_reply("noted"))
    try:
        result = await runtime.run_turn("hello")
    finally:
        await runtime.aclose()
    assert result.stop_reason == "completed"
    assert threads and threading.current_thread() not in threads
    system = llm_server.chat_requests()[0]["messages"][0]["content"]
    assert system.endswith("## Project context\nRun `make check` before committing.")


async def test_a_fifo_index_file_does_not_stall_a_turn(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    repo = make_git_repo(tmp_path / "repo")
    os.mkfifo(repo / "INDEX.md")
    runtime, _ = open_runtime(tmp_path, llm_server.base_url, cwd=repo)
    llm_server.enqueue(text_reply("fine"))
    try:
        result = await asyncio.wait_for(runtime.run_turn("hello"), 60)
    finally:
        await runtime.aclose()
    assert result.stop_reason == "completed"
    assert "## Project context" not in llm_server.chat_requests()[0]["messages"][0]["content"]
    assert runtime.scope.warnings == (
        f"index_file {repo.resolve() / 'INDEX.md'} is a FIFO (named pipe), not a regular "
        "file; it was ignored",
    )


async def test_scope_warnings_reach_the_user_once_per_turn(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    repo = make_git_repo(tmp_path / "repo")
    os.mkfifo(repo / "INDEX.md")
    runtime, rec = open_runtime(tmp_path, llm_server.base_url, cwd=repo)
    llm_server.enqueue(text_reply("one"), text_reply("two"))
    try:
        for prompt in ("hello", "again"):
            result = await asyncio.wait_for(runtime.run_turn(prompt), 60)
            assert result.stop_reason == "completed"
    finally:
        await runtime.aclose()
    warnings = rec.of(ev.ScopeWarning)
    assert [w.turn_id for w in warnings] == [t.turn_id for t in rec.of(ev.TurnStarted)]
    assert len(warnings) == 2
    assert {w.message for w in warnings} == set(runtime.scope.warnings)
    assert "is a FIFO (named pipe), not a regular file; it was ignored" in warnings[0].message
    kinds = [type(e) for e in rec.events]
    assert kinds.index(ev.ScopeWarning) == kinds.index(ev.TurnStarted) + 1


def test_headless_prints_scope_warnings_to_stderr(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    repo = make_git_repo(tmp_path / "repo")
    os.mkfifo(repo / "INDEX.md")
    llm_server.enqueue(text_reply("fine"))
    result = smith(tmp_path, repo, llm_server, "-p", "hello")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "fine"
    assert result.stderr.count("smith: warning: index_file ") == 1
    assert "is a FIFO (named pipe), not a regular file; it was ignored" in result.stderr
