"""The instruction files in real requests: the system prompt the scripted server receives is
byte-identical across the rounds and turns of a session until a file changes, comes back
after a compaction, and /memory and /init work on a real runtime."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from smith_tui.engine.setup_commands import INIT_PROMPT
from smith_tui.engine.window import tokens_for_chars
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import make_git_repo, open_runtime


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".config" / "smith").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    (home / ".config" / "smith" / "AGENTS.md").write_text("USER-RULE: be brief\n", "utf-8")
    repo = make_git_repo(tmp_path / "repo").resolve()
    (repo / "AGENTS.md").write_text("ROOT-RULE: run make check\n", encoding="utf-8")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "AGENTS.md").write_text("PKG-RULE: no globals\n", encoding="utf-8")
    return repo


def system(request: dict[str, Any]) -> str:
    first = request["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


async def test_system_prompt_is_byte_stable_until_a_file_changes(
    repo: Path, tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime, _ = open_runtime(tmp_path, llm_server.base_url, cwd=repo / "pkg")
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("read", {"path": "AGENTS.md"})]),  # a two-round turn
        text_reply("first done"),
        text_reply("second done"),
    )
    try:
        for prompt in ("look around", "and again"):
            result = await asyncio.wait_for(runtime.run_turn(prompt), 60)
            assert result.stop_reason == "completed", result.error
        prompts = [system(r) for r in llm_server.chat_requests()]
        assert len(prompts) == 3 and len(set(prompts)) == 1
        text = prompts[0]
        order = [text.index(m) for m in ("USER-RULE", "ROOT-RULE", "PKG-RULE")]
        assert order == sorted(order)
        assert "### Folder: pkg/AGENTS.md (applies to the files under pkg/)" in text

        (repo / "AGENTS.md").write_text("ROOT-RULE: run make lint\n", encoding="utf-8")
        llm_server.enqueue(text_reply("third done"))
        result = await asyncio.wait_for(runtime.run_turn("once more"), 60)
        assert result.stop_reason == "completed", result.error
    finally:
        await runtime.aclose()
    changed = system(llm_server.chat_requests()[-1])
    assert changed != text and "run make lint" in changed and "run make check" not in changed
    assert changed.replace("make lint", "make check") == text  # only the file's text moved


async def test_instructions_come_back_after_a_compaction(
    repo: Path, tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime, _ = open_runtime(tmp_path, llm_server.base_url, cwd=repo)
    llm_server.enqueue(text_reply("ok1"), text_reply("ok2"))
    try:
        for prompt in ("PROMPT-A " + "w" * 200, "PROMPT-B " + "w" * 200):
            assert (await runtime.run_turn(prompt)).stop_reason == "completed"
        llm_server.enqueue(text_reply("SUMMARY-OF-EARLIER"))
        out = await runtime.submit("/compact")
        assert out.ok, out.text
        llm_server.enqueue(text_reply("ok3"))
        assert (await runtime.run_turn("PROMPT-C")).stop_reason == "completed"
    finally:
        await runtime.aclose()
    after = llm_server.chat_requests()[-1]
    assert "SUMMARY-OF-EARLIER" in str(after["messages"][1]["content"])
    assert "ROOT-RULE: run make check" in system(after)
    assert "USER-RULE: be brief" in system(after)


async def test_memory_lists_the_loaded_files(
    repo: Path, tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    (repo / "INDEX.md").write_text("the index\n", encoding="utf-8")
    runtime, _ = open_runtime(tmp_path, llm_server.base_url, cwd=repo / "pkg")
    try:
        out = await runtime.submit("/memory")
        opened = await runtime.submit("/memory open 3")
        user = await runtime.submit("/memory open user")
        wrong = await runtime.submit("/memory open 9")
    finally:
        await runtime.aclose()
    assert out.ok, out.text
    lines = out.text.splitlines()
    config = tmp_path / "home" / ".config" / "smith"
    t = tokens_for_chars
    assert lines[1] == f"  1. user       {config / 'AGENTS.md'}  20 bytes, ~{t(20)} tokens"
    assert lines[2] == f"  2. repository {repo / 'AGENTS.md'}  26 bytes, ~{t(26)} tokens"
    assert lines[3] == f"  3. folder     {repo / 'pkg' / 'AGENTS.md'}  21 bytes, ~{t(21)} tokens"
    assert lines[4].startswith(f"  4. index      {repo / 'INDEX.md'}  10 bytes")
    assert lines[0].startswith("In the system prompt of every request (about ")
    assert opened.data == {"action": "edit", "path": str(repo / "pkg" / "AGENTS.md")}
    assert user.data["path"] == str(config / "AGENTS.md")
    assert not wrong.ok and "no file 9" in wrong.text


async def test_context_is_another_name_for_memory(
    repo: Path, tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime, _ = open_runtime(tmp_path, llm_server.base_url, cwd=repo / "pkg")
    try:
        memory = await runtime.submit("/memory")
        context = await runtime.submit("/context")
        opened = await runtime.submit("/context open 2")
        help_out = await runtime.submit("/help")
        names = runtime.services.command.names()
        about = runtime.services.command.about("/context")
    finally:
        await runtime.aclose()
    assert context.ok and context.text == memory.text and "AGENTS.md" in context.text
    assert opened.data == {"action": "edit", "path": str(repo / "AGENTS.md")}
    assert "  /context  another name for /memory" in help_out.text.splitlines()
    assert "/context" in names and about == "another name for /memory"


async def test_init_runs_a_turn_that_writes_agents_md_through_write(
    tmp_path: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    repo = make_git_repo(tmp_path / "fresh").resolve()
    runtime, _ = open_runtime(tmp_path, llm_server.base_url, cwd=repo)
    content = "# AGENTS.md\n\nRun `pytest -q`.\n"
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("write", {"path": "AGENTS.md", "content": content})]),
        text_reply("wrote AGENTS.md"),
    )
    try:
        result = await asyncio.wait_for(runtime.submit("/init"), 60)
        assert result.stop_reason == "completed", result.error
        undo = await runtime.submit("/undo")
    finally:
        await runtime.aclose()
    first = llm_server.chat_requests()[0]
    users = [m for m in first["messages"] if m["role"] == "user"]
    assert users[0]["content"] == INIT_PROMPT
    assert undo.ok, undo.text  # the write was checkpointed: /undo takes it back
    assert not (repo / "AGENTS.md").exists()
