"""Skills and sub-agents from files (issue 23) through a real runtime, real folders in a temp
git repository and the scripted Chat-Completions server."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from smith_tui.engine import events as ev
from smith_tui.engine.roles import resolve_role
from smith_tui.engine.runtime import Runtime
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import Recorder, make_git_repo, open_runtime

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "claude_setup"
REVIEW_REPORT = {
    "status": "ok",
    "summary": "One bug found in pkg/core.py",
    "findings": ["pkg/core.py:3 divides by zero when the list is empty"],
    "evidence": ["pkg/core.py:3"],
}


def _repo(tmp_path: Path) -> Path:
    """A git repository holding the Claude Code setup of the fixture, as a user has it."""
    repo = make_git_repo(tmp_path / "repo")
    shutil.copytree(FIXTURE / ".claude", repo / ".claude")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "core.py").write_text(
        "def mean(xs):\n    n = len(xs)\n    return sum(xs) / n\n"
    )
    return repo


def _open(tmp_path: Path, server: ScriptedLLMServer, **kw: Any) -> tuple[Runtime, Recorder]:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path / "home")}
    env.update(kw.pop("env", {}))
    return open_runtime(tmp_path, server.base_url, cwd=_repo(tmp_path), env=env, **kw)


def _notices(rec: Recorder) -> list[str]:
    return [e.text for e in rec.of(ev.CommandOutput) if e.command == "setup"]


def _system(body: dict[str, Any]) -> str:
    return str(body["messages"][0]["content"])


def _tool_names(body: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools") or []}


async def test_a_claude_code_setup_works_as_it_is(tmp_path: Path, llm_server) -> None:
    runtime, rec = _open(tmp_path, llm_server)
    await runtime.refresh_setup()
    assert [s.name for s in runtime.setup.skills] == ["changelog", "pdf-forms"]
    pdf = runtime.setup.setup.skill("pdf-forms")
    assert pdf is not None and pdf.description.startswith("Fill in PDF forms")
    assert pdf.origin.label == ".claude/skills" and pdf.origin.kind == "project"
    reviewer = resolve_role("reviewer")
    assert reviewer.tools == {"read", "code_outline", "code_symbols", "code_map", "code_grep"} | {
        "code_files",
        "report",
    }
    assert reviewer.shape == "explorer" and reviewer.tint == "#BD93F9"
    fixer = resolve_role("fixer")
    assert fixer.shape == "worker" and "bash" in fixer.tools and "edit" in fixer.tools
    assert "web_fetch" not in fixer.tools  # wider than the worker's: left out
    assert fixer.model is None  # a project file may not choose the model
    notices = _notices(rec)
    fixer_file = runtime.options.cwd / ".claude" / "agents" / "fixer.md"
    assert f"{fixer_file}:8: tool 'WebFetch' (web_fetch) is left out" in "\n".join(notices)
    assert any(n.startswith(f"{fixer_file}:9: model 'opus' is ignored") for n in notices)
    # /skills and /agents say where each came from
    out = await runtime.submit("/skills")
    assert "pdf-forms" in out.text and "[.claude/skills (project)]" in out.text
    out = await runtime.submit("/agents")
    assert "reviewer: sub-agent from .claude/agents (project), reports like the explorer" in (
        out.text
    )
    assert "tools: code_files, code_grep, code_map, code_outline, code_symbols, read, report" in (
        out.text
    )
    assert "direct (Smith): talks to you; dispatches to worker, explorer, fixer, reviewer" in (
        out.text
    )
    await runtime.aclose()


async def test_a_skill_is_loaded_on_demand(tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("skill", {"name": "pdf-forms"})]),
        text_reply(tool_calls=[tool_call("skill", {"name": "pdf-forms", "file": "reference.md"})]),
        text_reply("Done."),
    )
    runtime, rec = _open(tmp_path, llm_server)
    result = await runtime.run_turn("Fill in form.pdf from values.csv")
    assert result.stop_reason == "completed", result
    first, second, third = llm_server.chat_requests()
    # Only the name and description are in the first request; the body is not.
    assert "- pdf-forms: Fill in PDF forms from a table of values." in _system(first)
    assert "skill" in _tool_names(first)
    assert "scripts/fields.py" not in json.dumps(first)
    # The body is in the next request (the skill tool's result), with the files beside it.
    loaded = second["messages"][-2]
    assert loaded["role"] == "tool" and "1. List the form's fields" in loaded["content"]
    assert "reference.md" in loaded["content"] and "scripts/fill.py" in loaded["content"]
    assert "license: Apache-2.0" not in loaded["content"]  # the front matter stays out
    assert "Checkbox fields end in `_cb`" in third["messages"][-2]["content"]
    # The transcript shows which skill was loaded.
    calls = [e for e in rec.of(ev.ToolCallFinished) if e.name == "skill"]
    assert [c.metadata.get("skill") for c in calls] == ["pdf-forms", "pdf-forms"]
    await runtime.aclose()


async def test_a_turn_without_skills_or_agents_offers_neither(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(text_reply("Hi."))
    runtime, _ = open_runtime(tmp_path, llm_server.base_url, env={})
    await runtime.run_turn("hello")
    [body] = llm_server.chat_requests()
    assert "skill" not in _tool_names(body)
    assert "## Skills" not in _system(body) and "Sub-agents from files" not in _system(body)
    dispatch = next(t for t in body["tools"] if t["function"]["name"] == "dispatch")
    assert dispatch["function"]["parameters"]["properties"]["target_role"]["enum"] == [
        "worker",
        "explorer",
    ]
    await runtime.aclose()


@pytest.mark.parametrize(
    ("file", "problem"),
    [
        ("../../../README.md", "is outside the folder of skill 'pdf-forms'"),
        ("/etc/passwd", "must be a path relative to the skill's folder"),
        ("pipe", "FIFO"),
    ],
)
async def test_the_skill_tool_reads_only_regular_files_in_its_folder(
    tmp_path: Path, llm_server: ScriptedLLMServer, file: str, problem: str
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("skill", {"name": "pdf-forms", "file": file})]),
        text_reply("ok"),
    )
    runtime, rec = _open(tmp_path, llm_server)
    os.mkfifo(runtime.options.cwd / ".claude" / "skills" / "pdf-forms" / "pipe")
    await runtime.run_turn("fill it")
    [done] = [e for e in rec.of(ev.ToolCallFinished) if e.name == "skill"]
    assert not done.ok and problem in (done.error or "")
    await runtime.aclose()


async def test_a_file_defined_sub_agent_is_dispatched_with_only_its_tools(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    dispatch = {
        "target_role": "reviewer",
        "task": "Review pkg/core.py",
        "context": {"user_request_summary": "Review the core module."},
    }
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("dispatch", dispatch)]),
        text_reply(tool_calls=[tool_call("report", REVIEW_REPORT)]),
        text_reply("The reviewer found one bug."),
    )
    runtime, rec = _open(tmp_path, llm_server)
    result = await runtime.run_turn("Have the reviewer look at pkg/core.py")
    assert result.stop_reason == "completed", result
    parent, child, _ = llm_server.chat_requests()
    assert "- reviewer (code_files, code_grep, code_map, code_outline, code_symbols, read)" in (
        _system(parent)
    )
    schema = next(t for t in parent["tools"] if t["function"]["name"] == "dispatch")
    assert "reviewer" in schema["function"]["parameters"]["properties"]["target_role"]["enum"]
    # The child is offered only its tools, and its prompt is the file's body.
    assert _tool_names(child) == {
        "read",
        "code_grep",
        "code_files",
        "code_map",
        "code_outline",
        "code_symbols",
        "report",
    }
    assert _system(child).startswith("# You are reviewer")
    assert "You are a careful code reviewer." in _system(child)
    [finished] = rec.of(ev.DispatchFinished)
    assert finished.target_role == "reviewer" and finished.status == "ok"
    assert finished.result["findings"] == REVIEW_REPORT["findings"]  # explorer-shaped
    assert runtime.usage.totals()["reviewer"]["total_tokens"] >= 0
    await runtime.aclose()


async def test_a_user_agent_file_may_choose_the_model(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    agents = tmp_path / "xdg" / "smith" / "agents"
    agents.mkdir(parents=True)
    (agents / "scout.md").write_text(
        "---\nname: scout\ndescription: Looks around\ntools: Read\nmodel: small-model\n---\nLook.\n"
    )
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("report", {"status": "ok", "summary": "seen"})])
    )
    runtime, _ = _open(tmp_path, llm_server)
    result = await runtime.run_turn("@scout look at pkg/")
    assert result.stop_reason == "completed", result
    [child] = llm_server.chat_requests()
    assert child["model"] == "small-model"
    await runtime.aclose()


async def test_at_name_hands_the_prompt_to_that_sub_agent(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(text_reply(tool_calls=[tool_call("report", REVIEW_REPORT)]))
    runtime, rec = _open(tmp_path, llm_server)
    result = await runtime.run_turn("@reviewer look at pkg/")
    assert result.stop_reason == "completed", result
    assert result.text == REVIEW_REPORT["summary"]
    # No request of Smith's: the only one is the child's, with the task as typed.
    [child] = llm_server.chat_requests()
    assert "# Task\nlook at pkg/" in child["messages"][1]["content"]
    [started] = rec.of(ev.DispatchStarted)
    assert started.role == "direct" and started.target_role == "reviewer"
    # Shown as a dispatch from Smith: its assistant message holds the dispatch call.
    [assistant] = [e for e in rec.of(ev.AssistantMessage) if e.job_id is None]
    assert assistant.tool_calls[0]["function"]["name"] == "dispatch"
    assert json.loads(assistant.tool_calls[0]["function"]["arguments"])["target_role"] == (
        "reviewer"
    )
    await runtime.aclose()


async def test_at_a_built_in_alias_and_at_dot_slash(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    explorer_report = {**REVIEW_REPORT, "summary": "looked"}
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("report", explorer_report)]),
        text_reply("Read it."),
    )
    runtime, rec = _open(tmp_path, llm_server)
    await runtime.run_turn("@Link where is mean defined?")
    assert rec.of(ev.DispatchStarted)[0].target_role == "explorer"
    # @./name is a file, never a sub-agent
    (runtime.options.cwd / "reviewer").write_text("notes\n")
    await runtime.run_turn("@./reviewer summarise")
    assert len(rec.of(ev.DispatchStarted)) == 1
    assert "notes" in json.dumps(llm_server.chat_requests()[-1]["messages"])
    await runtime.aclose()


async def test_broken_files_of_each_kind_are_reported_once_with_file_and_line(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime, rec = _open(tmp_path, llm_server)
    root = runtime.options.cwd
    broken = {
        root / ".smith" / "skills" / "bad-yaml" / "SKILL.md": (
            "---\nname: bad-yaml\ndescription: fills: forms\n---\nbody\n",
            3,
            "not valid YAML",
        ),
        root / ".agents" / "skills" / "no-description" / "SKILL.md": (
            "---\nname: no-description\n---\nbody\n",
            1,
            "needs a description",
        ),
        root / ".smith" / "agents" / "typo.md": (
            "---\nname: typo\ndescription: d\ntools:\n  - Read\n  - Grpe\n---\nbody\n",
            6,
            "unknown tool 'Grpe'",
        ),
        root / ".smith" / "agents" / "worker.md": (
            "---\nname: Niobe\ndescription: d\n---\nbody\n",
            2,
            "is a built-in role's name",
        ),
        root / ".smith" / "agents" / "unclosed.md": ("---\nname: x\n", 1, "never closed"),
    }
    for path, (text, _, _) in broken.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    os.mkfifo(root / ".smith" / "agents" / "fifo.md")
    await runtime.refresh_setup()
    await runtime.refresh_setup()  # nothing changed: nothing reported again
    notices = _notices(rec)
    for path, (_, line, words) in broken.items():
        [notice] = [n for n in notices if n.startswith(f"{path}:")]
        assert notice.startswith(f"{path}:{line}: ") and words in notice, notice
    [fifo] = [n for n in notices if "fifo.md" in n]
    assert "FIFO" in fifo
    assert len(notices) == len(set(notices))
    assert resolve_role("typo").tools == {"read", "code_outline", "code_symbols", "code_map"} | {
        "report"
    }
    await runtime.aclose()


async def test_a_project_cannot_point_its_setup_outside_itself(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("---\nname: leak\ndescription: the user's secret\n---\nTOKEN=hunter2\n")
    outside = tmp_path / "outside-skills" / "leak"
    outside.mkdir(parents=True)
    (outside / "SKILL.md").write_text(secret.read_text())
    runtime, rec = _open(tmp_path, llm_server)
    root = runtime.options.cwd
    (root / ".smith" / "agents").mkdir(parents=True)
    (root / ".smith" / "agents" / "leak.md").symlink_to(secret)
    (root / ".smith" / "skills").symlink_to(tmp_path / "outside-skills")
    await runtime.refresh_setup()
    assert "leak" not in [s.name for s in runtime.setup.skills]
    assert "leak" not in [a.role.name for a in runtime.setup.agents]
    assert any("leak.md:1: agent not loaded: it is a symbolic link" in n for n in _notices(rec))
    # The control: the same file as a regular file in the project is read.
    (root / ".smith" / "agents" / "leak.md").unlink()
    shutil.copy(secret, root / ".smith" / "agents" / "leak.md")
    await runtime.refresh_setup()
    assert "leak" in [a.role.name for a in runtime.setup.agents]
    await runtime.aclose()


async def test_the_user_wins_a_name_clash_with_the_project(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    mine = tmp_path / "xdg" / "smith" / "skills" / "changelog"
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_text("---\nname: changelog\ndescription: My own way\n---\nMine.\n")
    runtime, rec = _open(tmp_path, llm_server)
    await runtime.refresh_setup()
    skill = runtime.setup.setup.skill("changelog")
    assert skill is not None and skill.description == "My own way"
    assert any("skill 'changelog' is ignored" in n for n in _notices(rec))
    await runtime.aclose()


async def test_read_only_mode_dispatches_no_sub_agent_from_a_file(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    dispatch = {
        "target_role": "reviewer",
        "task": "Review pkg/core.py",
        "context": {"user_request_summary": "Review the core module."},
    }
    llm_server.enqueue(text_reply(tool_calls=[tool_call("dispatch", dispatch)]), text_reply("ok"))
    runtime, rec = _open(tmp_path, llm_server, config={"permissions": {"mode": "read-only"}})
    await runtime.run_turn("review it")
    assert not rec.of(ev.DispatchStarted)
    [done] = [e for e in rec.of(ev.ToolCallFinished) if e.name == "dispatch"]
    assert not done.ok and "read-only" in (done.error or "")
    await runtime.aclose()


async def test_all_of_the_users_setup_comes_from_the_runtimes_config_folder(
    tmp_path: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The process's environment names another folder: the runtime's own decides, for the
    # AGENTS.md, the command files, the skills and the agents alike.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "elsewhere"))
    mine = tmp_path / "xdg" / "smith"
    (mine / "skills" / "notes").mkdir(parents=True)
    (mine / "skills" / "notes" / "SKILL.md").write_text(
        "---\nname: notes\ndescription: Keep a notes file\n---\nWrite notes.\n"
    )
    (mine / "agents").mkdir()
    (mine / "agents" / "helper.md").write_text(
        "---\nname: helper\ndescription: Helps with small things\ntools: Read\n---\nHelp.\n"
    )
    (mine / "commands").mkdir()
    (mine / "commands" / "hello.md").write_text("---\ndescription: Greet\n---\nGreet $ARGUMENTS\n")
    (mine / "AGENTS.md").write_text("Always answer in haiku.\n")
    llm_server.enqueue(text_reply("ok"))
    runtime, _ = _open(tmp_path, llm_server)
    assert runtime.user_config_dir() == mine
    result = await runtime.submit("/hello the team")
    assert result.stop_reason == "completed", result
    [body] = llm_server.chat_requests()
    system = _system(body)
    assert f"### Your instructions: {mine / 'AGENTS.md'}" in system
    assert "Always answer in haiku." in system
    assert "- notes: Keep a notes file" in system
    assert "- helper (" in system and "Helps with small things" in system
    assert any(m.get("content") == "Greet the team" for m in body["messages"])
    memory = await runtime.submit("/memory")
    assert str(mine / "AGENTS.md") in memory.text
    await runtime.aclose()


async def test_the_users_claude_code_folders_are_read_too(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    claude = tmp_path / "home" / ".claude"
    (claude / "skills" / "release").mkdir(parents=True)
    (claude / "skills" / "release" / "SKILL.md").write_text(
        "---\nname: release\ndescription: Cut a release\n---\nSteps.\n"
    )
    (claude / "agents").mkdir()
    (claude / "agents" / "tester.md").write_text(
        "---\nname: tester\ndescription: Runs the tests\ntools: Read, Bash\n---\nTest.\n"
    )
    runtime, _ = _open(tmp_path, llm_server)
    await runtime.refresh_setup()
    release = runtime.setup.setup.skill("release")
    assert release is not None and release.origin.kind == "user"
    assert release.origin.label == "~/.claude/skills"
    assert resolve_role("tester").shape == "worker"
    out = await runtime.submit("/skills")
    assert "[~/.claude/skills (user)]" in out.text
    await runtime.aclose()


async def test_a_skill_folder_linked_out_of_the_project_is_refused_with_a_notice(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    outside = tmp_path / "elsewhere" / "leak"
    outside.mkdir(parents=True)
    (outside / "SKILL.md").write_text("---\nname: leak\ndescription: secret\n---\nTOKEN\n")
    runtime, rec = _open(tmp_path, llm_server)
    skills = runtime.options.cwd / ".claude" / "skills"
    (skills / "leak").symlink_to(outside)
    await runtime.refresh_setup()
    assert "leak" not in [s.name for s in runtime.setup.skills]
    assert any(
        f"{skills / 'leak' / 'SKILL.md'}:1: skill not loaded: {skills / 'leak'} leads outside" in n
        for n in _notices(rec)
    ), _notices(rec)
    await runtime.aclose()
