"""Permission modes through real turns: the policy table, rules, asking, grants, sub-agents.

The runtime is real (temp git repo, SQLite file, the scripted server); the ask port is a
plain async function standing in for the front end.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from smith_tui.engine import events as ev
from smith_tui.engine.permission_gate import PermissionReply, PermissionRequest
from smith_tui.tools.permission_policy import Rule, Subject, decide
from smith_tui.tools.sandbox import probe_bwrap
from tests.dispatch.support import dispatch, report
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import open_runtime

# -- the policy table ---------------------------------------------------------------------

INSIDE = {
    "bash": Subject("bash", "ls -la"),
    "edit": Subject("edit", "src/app.py"),
    "write": Subject("write", "notes.txt"),
    "web_fetch": Subject("web_fetch", "docs.python.org"),
    "dispatch worker": Subject("dispatch", "worker"),
    "dispatch explorer": Subject("dispatch", "explorer"),
    "mcp": Subject("mcp__github__create_issue"),
    "read": Subject("read"),
}
EXPECTED = {
    # tool:                 read-only  ask    auto-edit yolo
    "bash": ("allow", "ask", "ask", "allow"),
    "edit": ("deny", "ask", "allow", "allow"),
    "write": ("deny", "ask", "allow", "allow"),
    "web_fetch": ("ask", "ask", "ask", "allow"),
    "dispatch worker": ("deny", "ask", "allow", "allow"),
    "dispatch explorer": ("allow", "ask", "allow", "allow"),
    "mcp": ("ask", "ask", "ask", "allow"),
    "read": ("allow", "allow", "allow", "allow"),
}
MODES = ("read-only", "ask", "auto-edit", "yolo")


@pytest.mark.parametrize("tool", list(EXPECTED))
@pytest.mark.parametrize("mode", MODES)
def test_each_mode_allows_asks_or_denies_each_tool(mode: str, tool: str) -> None:
    verdict = decide(mode, INSIDE[tool], sandboxed=True)
    assert verdict.action == EXPECTED[tool][MODES.index(mode)], verdict.reason


def test_read_only_bash_needs_the_sandbox_and_auto_edit_asks_outside_the_project() -> None:
    unsandboxed = decide("read-only", Subject("bash", "ls"), sandboxed=False)
    assert unsandboxed.action == "deny" and "sandboxed" in unsandboxed.reason
    outside = Subject("edit", "/etc/hosts", inside_project=False)
    assert decide("auto-edit", outside).action == "ask"
    # allow rules do not lift the mode's own refusals
    assert decide("read-only", INSIDE["edit"], allow=[Rule.parse("edit")]).action == "deny"


def _allowed(rule: str, subject: Subject) -> bool:
    return decide("ask", subject, allow=[Rule.parse(rule)]).action == "allow"


def test_rule_patterns() -> None:
    assert _allowed("bash(git status*)", Subject("bash", "git status --short"))
    assert not _allowed("bash(git status*)", Subject("bash", "git push"))
    # a prefix never lets a chained, piped or redirected command through
    for sneaky in ("git status; rm -rf ~", "git status && curl x", "git status | sh"):
        assert not _allowed("bash(git status*)", Subject("bash", sneaky)), sneaky
    assert not _allowed("bash(echo*)", Subject("bash", "echo hi > ~/.bashrc"))
    # ... so the grant offered for one is that exact command, which allows only it
    piped = Subject("bash", "pytest -q | tail -5")
    assert piped.grant() == "bash(pytest -q | tail -5)"
    assert _allowed(piped.grant(), piped)
    assert not _allowed(piped.grant(), Subject("bash", "pytest -q | tail -5; rm -rf ~"))
    assert Subject("bash", "git status --short").grant() == "bash(git status*)"
    assert Subject("bash", "pytest -q tests").grant() == "bash(pytest*)"
    assert _allowed("edit(src/**)", Subject("edit", "src/pkg/mod.py"))
    assert _allowed("edit(src/**)", Subject("write", "src/new.py"))  # edit rules cover write
    assert not _allowed("edit(src/*)", Subject("edit", "src/pkg/mod.py"))
    assert not _allowed("edit(src/**)", Subject("edit", "tests/test_a.py"))
    assert _allowed("web_fetch(docs.python.org)", Subject("web_fetch", "docs.python.org"))
    assert _allowed("web_fetch(*.python.org)", Subject("web_fetch", "peps.python.org"))
    assert not _allowed("web_fetch(docs.python.org)", Subject("web_fetch", "evil.example"))
    assert _allowed("dispatch(explorer)", Subject("dispatch", "explorer"))
    assert not _allowed("dispatch(explorer)", Subject("dispatch", "worker"))
    assert _allowed("mcp__github__*", Subject("mcp__github__create_issue"))
    assert not _allowed("mcp__github__*", Subject("mcp__slack__post"))


def test_deny_wins_and_matches_any_part_of_a_command() -> None:
    allow = [Rule.parse("bash")]
    deny = [Rule.parse("bash(rm *)")]
    verdict = decide("yolo", Subject("bash", "ls && rm -rf build"), allow=allow, deny=deny)
    assert verdict.action == "deny" and "bash(rm *)" in verdict.reason
    assert decide("yolo", Subject("bash", "ls -la"), allow=allow, deny=deny).action == "allow"


def test_a_malformed_rule_is_refused_by_the_config_with_a_fix(tmp_path: Path) -> None:
    runtime, _ = open_runtime(tmp_path)
    with pytest.raises(Exception, match="pattern in parentheses"):
        runtime.set_config("permissions.allow", '["bash git status"]')
    runtime.set_config("permissions.mode", "auto-edit")
    assert runtime.permission_mode == "auto-edit"


# -- asking through real turns --------------------------------------------------------------


class Asker:
    """An ask port answering from a list, recording every request."""

    def __init__(self, *answers: PermissionReply) -> None:
        self.answers = list(answers)
        self.requests: list[PermissionRequest] = []

    async def __call__(self, request: PermissionRequest) -> PermissionReply:
        self.requests.append(request)
        if not self.answers:
            raise AssertionError(f"asked unexpectedly about {request.tool} {request.subject}")
        return self.answers.pop(0)


def _tool_results(runtime: Any) -> list[str]:
    return [m["content"] for m in runtime.messages if m["role"] == "tool"]


def _bash(command: str) -> Any:
    return tool_call("bash", {"command": command})


def _ask_runtime(tmp_path: Path, server: ScriptedLLMServer, asker: Asker | None, **config: Any):
    runtime, rec = open_runtime(
        tmp_path,
        server.base_url,
        config={"permissions": {"mode": "ask", **config}, "sandbox": {"mode": "off"}},
    )
    runtime.ask_permission = asker
    return runtime, rec


async def test_ask_allow_once_runs_the_call_and_asks_again_next_time(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[_bash("echo one")]),
        text_reply(tool_calls=[_bash("echo two")]),
        text_reply("done"),
    )
    asker = Asker(PermissionReply("once"), PermissionReply("once"))
    runtime, _ = _ask_runtime(tmp_path, llm_server, asker)
    result = await runtime.run_turn("echo twice")
    assert result.stop_reason == "completed"
    assert [r.subject for r in asker.requests] == ["echo one", "echo two"]
    assert asker.requests[0].role == "direct" and asker.requests[0].job_id is None
    assert asker.requests[0].grant == "bash(echo*)"
    assert "one" in _tool_results(runtime)[0] and "two" in _tool_results(runtime)[1]
    await runtime.aclose()


async def test_deny_with_a_reason_reaches_the_model_and_nothing_runs(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("write", {"path": "x.txt", "content": "new\n"})]),
        text_reply("ok"),
    )
    asker = Asker(PermissionReply("deny", "use a temp folder instead"))
    runtime, rec = _ask_runtime(tmp_path, llm_server, asker)
    await runtime.run_turn("write x")
    assert not (tmp_path / "repo" / "x.txt").exists()
    [request] = asker.requests
    assert "+new" in request.preview and "x.txt (new file)" in request.preview
    [content] = _tool_results(runtime)
    assert "the user denied this call" in content and "use a temp folder instead" in content
    second_request = llm_server.chat_requests()[1]
    assert "use a temp folder instead" in json.dumps(second_request["messages"])
    [denied] = rec.of(ev.PermissionDenied)
    assert denied.tool == "write" and denied.subject == "x.txt"
    await runtime.aclose()


async def test_edit_preview_is_a_diff_of_the_lines(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime, _ = _ask_runtime(tmp_path, llm_server, None)
    repo = tmp_path / "repo"
    (repo / "a.txt").write_text("one\ntwo\nthree\n")
    from smith_tui.engine.permission_gate import preview
    from smith_tui.tools.builtin.edit import Args
    from smith_tui.tools.spec import ToolContext

    args = Args.model_validate(
        {
            "path": "a.txt",
            "expected_hash": "0" * 64,
            "operation": "replace",
            "start_line": 2,
            "text": "TWO",
        }
    )
    ctx = ToolContext(role="direct", turn_id="t", cwd=repo, cancel=None)  # type: ignore[arg-type]
    text = preview("edit", args, ctx)
    assert "-two\n+TWO" in text and " one" in text
    await runtime.aclose()


async def test_session_grant_covers_the_prefix_and_survives_continue(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[_bash("echo first")]),
        text_reply(tool_calls=[_bash("echo second")]),
        text_reply("done"),
    )
    runtime, _ = _ask_runtime(tmp_path, llm_server, Asker(PermissionReply("session")))
    await runtime.run_turn("echo")
    conversation = runtime.conversation_id
    assert len(_tool_results(runtime)) == 2  # the second echo did not ask
    await runtime.aclose()

    llm_server.enqueue(
        text_reply(tool_calls=[_bash("echo third"), _bash("ls")]),
        text_reply("done"),
    )
    asker = Asker(PermissionReply("deny"))
    again, _ = _ask_runtime(tmp_path, llm_server, asker)
    assert again.continue_latest() == conversation
    await again.run_turn("more")
    assert [r.subject for r in asker.requests] == ["ls"]  # echo is granted, ls is not
    assert "third" in _tool_results(again)[2]
    # in a new conversation the grant does not apply
    again.new_conversation()
    llm_server.enqueue(text_reply(tool_calls=[_bash("echo fourth")]), text_reply("done"))
    asker.answers.append(PermissionReply("once"))
    await again.run_turn("new")
    assert asker.requests[-1].subject == "echo fourth"
    await again.aclose()


async def test_allow_and_deny_rules_apply_without_asking(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[_bash("echo allowed"), _bash("echo x && rm -rf src")]),
        text_reply("done"),
    )
    runtime, rec = _ask_runtime(
        tmp_path, llm_server, Asker(), allow=["bash(echo*)"], deny=["bash(rm *)"]
    )
    await runtime.run_turn("go")
    allowed, refused = _tool_results(runtime)
    assert "allowed" in allowed
    assert "bash(rm *) in permissions.deny" in refused
    assert [d.subject for d in rec.of(ev.PermissionDenied)] == ["echo x && rm -rf src"]
    await runtime.aclose()


async def test_without_an_ask_port_a_call_that_would_ask_is_denied_with_the_fix(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(text_reply(tool_calls=[_bash("git status")]), text_reply("done"))
    runtime, _ = _ask_runtime(tmp_path, llm_server, None)
    await runtime.run_turn("status")
    [content] = _tool_results(runtime)
    assert "nobody can be asked" in content
    assert "bash(git status*) to permissions.allow" in content
    # auto-edit asks before bash too: only a mode that would run it is offered (issue 22)
    assert "--permission-mode yolo" in content and "auto-edit" not in content
    await runtime.aclose()


async def test_a_dispatched_workers_request_shows_its_role_and_inherits_the_mode(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("worker", "write the file")]),
        text_reply(tool_calls=[tool_call("write", {"path": "w.txt", "content": "w\n"})]),
        text_reply(tool_calls=[report(status="success", summary="wrote it")]),
        text_reply("done"),
    )
    asker = Asker(PermissionReply("once"), PermissionReply("once"))
    runtime, _ = _ask_runtime(tmp_path, llm_server, asker)
    runtime.set_active_role("orchestrator")
    await runtime.run_turn("delegate")
    assert [(r.tool, r.role) for r in asker.requests] == [
        ("dispatch", "orchestrator"),
        ("write", "worker"),
    ]
    assert asker.requests[1].job_id is not None
    assert (tmp_path / "repo" / "w.txt").read_text() == "w\n"
    await runtime.aclose()


async def test_auto_edit_lets_project_edits_through_and_asks_for_bash(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(
            tool_calls=[tool_call("write", {"path": "a.txt", "content": "a\n"}), _bash("ls")]
        ),
        text_reply("done"),
    )
    asker = Asker(PermissionReply("deny"))
    runtime, _ = _ask_runtime(tmp_path, llm_server, asker)
    await runtime.submit("/mode auto-edit")
    await runtime.run_turn("go")
    assert (tmp_path / "repo" / "a.txt").read_text() == "a\n"
    assert [r.tool for r in asker.requests] == ["bash"]
    await runtime.aclose()


async def test_cancelling_the_turn_closes_the_question(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(text_reply(tool_calls=[_bash("echo never")]), text_reply("done"))
    asked = asyncio.Event()
    closed = asyncio.Event()

    async def hang(request: PermissionRequest) -> PermissionReply:
        asked.set()
        try:
            await asyncio.Event().wait()
        finally:
            closed.set()
        raise AssertionError("unreachable")

    runtime, _ = _ask_runtime(tmp_path, llm_server, None)
    runtime.ask_permission = hang
    turn = asyncio.ensure_future(runtime.run_turn("wait"))
    await asyncio.wait_for(asked.wait(), 10)
    runtime.cancel_turn()
    result = await asyncio.wait_for(turn, 10)
    assert closed.is_set()
    assert result.stop_reason == "cancelled"
    assert "cancelled" in _tool_results(runtime)[0]
    await runtime.aclose()


async def test_mode_command_and_events(tmp_path: Path) -> None:
    runtime, rec = open_runtime(tmp_path)
    runtime.start_session()
    assert [e.mode for e in rec.of(ev.PermissionMode)] == ["yolo"]
    out = await runtime.submit("/mode read-only")
    assert out.ok and runtime.permission_mode == "read-only"
    assert runtime.cycle_permission_mode() == "ask"
    assert [e.mode for e in rec.of(ev.PermissionMode)] == ["yolo", "read-only", "ask"]
    bad = await runtime.submit("/mode careful")
    assert not bad.ok and "read-only, ask, auto-edit, yolo" in bad.text
    await runtime.aclose()


# -- read-only with the real sandbox ------------------------------------------------------

needs_bwrap = pytest.mark.skipif(not probe_bwrap().ok, reason="bubblewrap is not usable here")


@needs_bwrap
async def test_read_only_runs_bash_sandboxed_with_the_project_read_only(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(
            tool_calls=[
                _bash("cat README.md; echo x > made.txt"),
                tool_call("write", {"path": "w.txt", "content": "w\n"}),
                dispatch("worker", "change things"),
            ]
        ),
        text_reply("done"),
    )
    runtime, _ = open_runtime(
        tmp_path,
        llm_server.base_url,
        config={"permissions": {"mode": "read-only"}, "sandbox": {"mode": "auto"}},
    )
    await runtime.run_turn("look")
    bash, write, worker = _tool_results(runtime)
    assert "# demo" in bash and "Read-only file system" in bash
    assert not (tmp_path / "repo" / "made.txt").exists()
    assert "read-only" in write and not (tmp_path / "repo" / "w.txt").exists()
    assert "workers may not be dispatched" in worker
    await runtime.aclose()


async def test_mcp_tools_ask_and_an_allow_rule_lets_them_through(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    from tests.mcp.support import time_server

    call = tool_call("mcp__time__get_current_time", {"timezone": "Europe/Paris"})
    llm_server.enqueue(
        text_reply(tool_calls=[call]),
        text_reply(tool_calls=[call]),
        text_reply("done"),
    )
    asker = Asker(PermissionReply("deny"), PermissionReply("deny"))
    runtime, _ = open_runtime(
        tmp_path,
        llm_server.base_url,
        config={
            "permissions": {"mode": "auto-edit"},
            "mcp_servers": {"time": time_server()},
        },
    )
    runtime.ask_permission = asker
    try:
        await runtime.run_turn("time?")
        first, _ = asker.requests  # a denial is for that call only
        assert first.tool == call.name and "timezone: Europe/Paris" in first.preview
        assert all("the user denied this call" in r for r in _tool_results(runtime))
        runtime.set_config("permissions.allow", '["mcp__time__*"]')
        llm_server.enqueue(text_reply(tool_calls=[call]), text_reply("done"))
        await runtime.run_turn("time now?")
        assert "Europe/Paris" in _tool_results(runtime)[-1]
        assert len(asker.requests) == 2
    finally:
        await runtime.aclose()


async def test_a_failing_ask_port_denies_and_the_turn_goes_on(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(text_reply(tool_calls=[_bash("echo hi")]), text_reply("done"))

    async def broken(request: PermissionRequest) -> PermissionReply:
        raise RuntimeError("the screen is gone")

    runtime, _ = _ask_runtime(tmp_path, llm_server, None)
    runtime.ask_permission = broken
    result = await runtime.run_turn("go")
    assert result.stop_reason == "completed"
    [content] = _tool_results(runtime)
    assert "denied" in content and "the screen is gone" in content
    await runtime.aclose()
