"""Slash commands from Markdown files: real folders shaped like Claude Code's, a real runtime
and the scripted Chat-Completions server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from smith_tui.engine import events as ev
from smith_tui.engine.command_files import CommandFiles, expand
from smith_tui.engine.setup_commands import SETUP_NOTICE
from smith_tui.engine.setup_files import origins
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import make_git_repo, open_runtime

# Shaped like Claude Code's documented command files.
COMPONENT = """\
---
description: Create a React component
argument-hint: [name] [folder]
allowed-tools: Read, Write, Bash(git add:*)
model: small-model
---
Create the component $1 in $2, following @docs/style.md.
All arguments: $ARGUMENTS
"""
REVIEW = """\
---
description: Review the staged changes
---
Review the staged changes carefully.
"""
BROKEN = """\
---
description: fine
model: a: b
---
body
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty HOME and XDG_CONFIG_HOME of the test's own."""
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    return home


@pytest.fixture
def repo(tmp_path: Path, home: Path) -> Path:
    repo = make_git_repo(tmp_path / "repo").resolve()
    commands = repo / ".claude" / "commands"
    (commands / "frontend").mkdir(parents=True)
    (commands / "frontend" / "component.md").write_text(COMPONENT, encoding="utf-8")
    (commands / "review.md").write_text(REVIEW, encoding="utf-8")
    (repo / "docs").mkdir()
    (repo / "docs" / "style.md").write_text("Use function components.\n", encoding="utf-8")
    return repo


def catalog(repo: Path, home: Path) -> CommandFiles:
    return CommandFiles(
        lambda: origins("commands", repo, home / ".config" / "smith", home), reserved=["/help"]
    )


def test_claude_code_folder_works_as_it_is(repo: Path, home: Path) -> None:
    found = catalog(repo, home).discover()
    assert found.problems == []
    assert sorted(found.commands) == ["/frontend:component", "/review"]
    component = found.commands["/frontend:component"]
    assert component.description == "Create a React component"
    assert component.argument_hint == "[name] [folder]"  # Claude Code's bracket form
    assert component.model == "small-model"
    assert component.allowed_tools == ("Read", "Write", "Bash(git add:*)")
    assert component.tool_names() == frozenset({"read", "write", "bash"})
    assert component.origin == "project:frontend" and component.short == "/component"
    assert found.commands["/review"].tool_names() is None


def test_short_name_runs_a_namespaced_command_while_it_is_unambiguous(
    repo: Path, home: Path
) -> None:
    files = catalog(repo, home)
    commands = files.discover().commands
    assert files.find("/component", commands) is commands["/frontend:component"]
    (repo / ".claude" / "commands" / "backend").mkdir()
    (repo / ".claude" / "commands" / "backend" / "component.md").write_text("x", "utf-8")
    commands = files.discover().commands
    assert files.find("/component", commands) is None  # two end with it: name the namespace
    assert files.find("/backend:component", commands) is not None


def test_expand_arguments_positions_and_at_paths(repo: Path, home: Path) -> None:
    component = catalog(repo, home).discover().commands["/frontend:component"]
    assert expand(component, ' Button "src/ui kit" ') == (
        "Create the component Button in src/ui kit, following @docs/style.md.\n"
        'All arguments: Button "src/ui kit"'
    )
    assert expand(component, "") == (
        "Create the component  in , following @docs/style.md.\nAll arguments: "
    )
    # a placeholder inside an argument stays as typed (one pass)
    assert expand(component, "$2 x").startswith("Create the component $2 in x,")
    review = catalog(repo, home).discover().commands["/review"]
    assert expand(review, "only tests") == (
        "Review the staged changes carefully.\n\nARGUMENTS: only tests"
    )


def test_broken_front_matter_is_one_problem_with_file_and_line(repo: Path, home: Path) -> None:
    broken = repo / ".claude" / "commands" / "broken.md"
    broken.write_text(BROKEN, encoding="utf-8")
    files = catalog(repo, home)
    first = files.discover()
    assert sorted(first.commands) == ["/frontend:component", "/review"]  # the others load
    assert [p.path for p in first.problems] == [broken]
    assert first.problems[0].line == 3
    assert first.problems[0].text().startswith(f"{broken}:3: the front matter is not valid YAML")
    assert files.discover().problems == []  # reported once while the file stays as it is
    broken.write_text(BROKEN.replace("a: b", "b"), encoding="utf-8")
    assert "/broken" in files.discover().commands


def test_user_command_shadows_the_project_one_and_builtins_shadow_both(
    repo: Path, home: Path
) -> None:
    user = home / ".config" / "smith" / "commands"
    user.mkdir(parents=True)
    (user / "review.md").write_text("My own review.\n", encoding="utf-8")
    (repo / ".smith" / "commands").mkdir(parents=True)
    (repo / ".smith" / "commands" / "help.md").write_text("hijack /help\n", encoding="utf-8")
    found = catalog(repo, home).discover()
    assert found.commands["/review"].body == "My own review.\n"
    assert found.commands["/review"].scope == "user"
    assert "/help" not in found.commands
    texts = sorted(p.text() for p in found.problems)
    assert texts == sorted(
        [
            f"{repo / '.claude/commands/review.md'}:1: not used: /review is already defined "
            f"by {user / 'review.md'} (user commands come first)",
            f"{repo / '.smith/commands/help.md'}:1: not used: /help is a built-in command; "
            "rename the file",
        ]
    )


def test_user_claude_commands_folder_is_read(repo: Path, home: Path) -> None:
    folder = home / ".claude" / "commands" / "git"
    folder.mkdir(parents=True)
    (folder / "wip.md").write_text("---\ndescription: WIP commit\n---\nCommit as WIP.\n", "utf-8")
    found = catalog(repo, home).discover()
    assert found.commands["/git:wip"].scope == "user"
    assert found.commands["/git:wip"].origin == "user:git"


def test_a_project_command_that_is_a_fifo_or_symlink_is_refused(
    repo: Path, home: Path, tmp_path: Path
) -> None:
    import os

    folder = repo / ".claude" / "commands"
    os.mkfifo(folder / "pipe.md")
    (tmp_path / "outside.md").write_text("secret", encoding="utf-8")
    (folder / "link.md").symlink_to(tmp_path / "outside.md")
    found = catalog(repo, home).discover()
    assert "/pipe" not in found.commands and "/link" not in found.commands
    assert {p.path.name for p in found.problems} == {"pipe.md", "link.md"}


def _request_user_text(request: dict[str, Any]) -> str:
    users = [m for m in request["messages"] if m["role"] == "user"]
    return str(users[-2]["content"])  # the last one is the state snapshot


async def test_a_command_file_runs_end_to_end(
    repo: Path, tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime, _rec = open_runtime(tmp_path, llm_server.base_url, cwd=repo)
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("edit", {"path": "x", "old": "a", "new": "b"})]),
        text_reply("done"),
    )
    try:
        result = await asyncio.wait_for(runtime.submit("/component Button src/ui"), 60)
    finally:
        await runtime.aclose()
    assert result.stop_reason == "completed", result.error
    first, second = llm_server.chat_requests()
    text = _request_user_text(first)
    assert text.startswith(
        "Create the component Button in src/ui, following @docs/style.md.\n"
        "All arguments: Button src/ui"
    )
    # @path attaches the file as a typed @path does
    assert "[attached file: docs/style.md]" in text and "Use function components." in text
    offered = sorted(t["function"]["name"] for t in first["tools"])
    assert offered and set(offered) <= {"read", "write", "bash"}
    assert "edit" not in offered and "web_fetch" not in offered
    # the catalog does not list small-model: the usual model is used, not a failing one
    assert first["model"] == "scripted-model"
    tool_result = [m for m in second["messages"] if m["role"] == "tool"][-1]
    assert "edit is not offered in this turn" in tool_result["content"]


async def test_allowed_tools_refuse_a_tool_outside_them(
    repo: Path, tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    (repo / ".claude" / "commands" / "readonly.md").write_text(
        "---\nallowed-tools: Read\n---\nLook at $1.\n", encoding="utf-8"
    )
    runtime, _ = open_runtime(tmp_path, llm_server.base_url, cwd=repo)
    target = repo / "made.txt"
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("write", {"path": str(target), "content": "x"})]),
        text_reply("ok"),
    )
    try:
        result = await asyncio.wait_for(runtime.submit("/readonly README.md"), 60)
    finally:
        await runtime.aclose()
    assert result.stop_reason == "completed", result.error
    first, second = llm_server.chat_requests()
    assert [t["function"]["name"] for t in first["tools"]] == ["read"]
    tool_result = [m for m in second["messages"] if m["role"] == "tool"][-1]
    assert "write is not offered in this turn" in tool_result["content"]
    assert not target.exists()


async def test_broken_file_is_a_notice_and_help_lists_the_commands(
    repo: Path, tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    broken = repo / ".claude" / "commands" / "broken.md"
    broken.write_text(BROKEN, encoding="utf-8")
    runtime, rec = open_runtime(tmp_path, llm_server.base_url, cwd=repo)
    try:
        out = await runtime.submit("/help")
        again = await runtime.submit("/help")
    finally:
        await runtime.aclose()
    assert (
        "/frontend:component [name] [folder] — Create a React component (project:frontend)"
        in out.text
    )
    assert "/review — Review the staged changes (project)" in out.text
    assert "/memory" in out.text and "/init" in out.text
    assert again.text == out.text
    notices = [e for e in rec.of(ev.CommandOutput) if e.command == SETUP_NOTICE]
    assert len(notices) == 1
    assert notices[0].text.startswith(
        f"command file {broken}:3: the front matter is not valid YAML: "
        "mapping values are not allowed"
    )
    assert not notices[0].ok
