"""MCP resources as ``@server:uri`` attachments and MCP prompts as ``/mcp__<server>__<prompt>``.

The server is tests/mcp/toy_server.py over stdio; the turns go to the scripted LLM server.
"""

from __future__ import annotations

from pathlib import Path

from smith_tui.app.completion_sources import runtime_sources
from smith_tui.engine import events as ev
from smith_tui.engine.attachments import display_text
from smith_tui.engine.runtime import Runtime
from smith_tui.widgets.completion.candidates import Completer
from tests.mcp.test_mcp_calls import toy
from tests.support.llm_server import ScriptedLLMServer, text_reply
from tests.support.runtime import Recorder, open_runtime


def _last_user(body: dict) -> str:
    """The newest user message of a request (the one before the state snapshot)."""
    users = [m["content"] for m in body["messages"] if m["role"] == "user"]
    assert users[-1].startswith("[state snapshot]")
    return users[-2]


def _problems(rec: Recorder) -> list[str]:
    return [e.text for e in rec.of(ev.CommandOutput) if e.command == "attach"]


async def _ready(tmp_path: Path, llm_server: ScriptedLLMServer, **config: object):
    runtime, rec = open_runtime(
        tmp_path, llm_server.base_url, config={"mcp_servers": {"toy": toy()}, **config}
    )
    runtime.start_mcp()
    await runtime.mcp.wait_started()
    toy_server = runtime.mcp.get("toy")
    assert toy_server is not None and toy_server.status == "ready", toy_server
    return runtime, rec


async def test_an_at_server_resource_attaches_its_text_to_the_models_request(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(text_reply("it is a readme"))
    runtime, rec = await _ready(tmp_path, llm_server)
    try:
        result = await runtime.run_turn("what is @toy:memo://readme?")
    finally:
        await runtime.aclose()
    assert result.stop_reason == "completed"
    # The trailing "?" is not part of the URI: the token is tried without it.
    sent = _last_user(llm_server.chat_requests()[0])
    assert sent == (
        "what is @toy:memo://readme?\n\n[attached MCP resource: toy:memo://readme?]\ntoy readme"
    )
    (started,) = rec.of(ev.TurnStarted)
    assert started.attachments == [
        {"path": "toy:memo://readme?", "lines": 1, "chars": 10, "cut": False}
    ]
    assert _problems(rec) == []
    user = next(m for m in runtime.conversations.messages if m["role"] == "user")
    shown = display_text(user["content"], user.get("metadata"))
    assert shown == "what is @toy:memo://readme?\n📎 toy:memo://readme? (1 line)"


async def test_resources_are_bounded_like_files_and_a_failure_is_a_notice(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(text_reply("ok"))
    runtime, rec = await _ready(
        tmp_path, llm_server, services={"tool": {"read": {"max_output_chars": 500}}}
    )
    prompt = "compare @toy:memo://big with @toy:memo://broken and @toy:memo://nope"
    try:
        result = await runtime.run_turn(prompt)
    finally:
        await runtime.aclose()
    assert result.stop_reason == "completed"
    (started,) = rec.of(ev.TurnStarted)
    assert started.attachments == [
        {"path": "toy:memo://big", "lines": 24, "chars": 500, "cut": True}
    ]
    sent = _last_user(llm_server.chat_requests()[0])
    assert sent.startswith(prompt + "\n\n[attached MCP resource: toy:memo://big]\nline of the big")
    assert sent.endswith("[cut: only the first 500 characters are attached]")
    broken, nope = _problems(rec)
    assert broken == (
        "@toy:memo://broken: not attached: MCP server 'toy': Error reading resource memo://broken"
    )
    assert nope.startswith("@toy:memo://nope: not attached: MCP server 'toy':")


async def test_a_stopped_server_or_an_unknown_name_never_blocks_the_prompt(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(text_reply("ok"), text_reply("ok"))
    runtime, rec = await _ready(tmp_path, llm_server)
    try:
        await runtime.mcp.stop("toy")
        await runtime.run_turn("read @toy:memo://readme")
        # "other" is no MCP server: @other:x is an @path like any other.
        await runtime.run_turn("read @other:x")
    finally:
        await runtime.aclose()
    stopped, missing = _problems(rec)
    assert stopped.startswith("@toy:memo://readme: not attached: MCP server 'toy' is not running")
    assert "/mcp restart toy" in stopped
    assert missing.startswith("@other:x: not attached:") and "MCP" not in missing
    first, second = llm_server.chat_requests()
    assert _last_user(first) == "read @toy:memo://readme"
    assert _last_user(second) == "read @other:x"


async def test_a_server_prompt_runs_as_a_command_and_its_text_is_the_users_turn(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(text_reply("reviewed"), text_reply("planned"))
    runtime, rec = await _ready(tmp_path, llm_server)
    try:
        first = await runtime.submit("/mcp__toy__review 'src/my app.py'")
        second = await runtime.submit("/mcp__toy__plan style=long 'ship it'")
    finally:
        await runtime.aclose()
    assert first.stop_reason == "completed" and second.stop_reason == "completed"
    review, plan = llm_server.chat_requests()
    assert _last_user(review) == "Please review src/my app.py carefully."
    assert _last_user(plan) == "Goal: ship it\n\nWrite a long plan."
    assert [e.prompt for e in rec.of(ev.TurnStarted)] == [
        "Please review src/my app.py carefully.",
        "Goal: ship it\n\nWrite a long plan.",
    ]


async def test_a_server_prompt_used_wrongly_says_how_and_sends_nothing(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime, _rec = await _ready(tmp_path, llm_server)
    try:
        missing = await runtime.submit("/mcp__toy__review")
        extra = await runtime.submit("/mcp__toy__review a b")
        unknown = await runtime.submit("/mcp__toy__nothing")
    finally:
        await runtime.aclose()
    assert not missing.ok and missing.text == "missing path; usage: /mcp__toy__review PATH"
    assert not extra.ok and extra.text == "too many arguments; usage: /mcp__toy__review PATH"
    assert not unknown.ok and unknown.text.startswith("unknown MCP prompt /mcp__toy__nothing")
    assert "/mcp__toy__review" in unknown.text and "/mcp__toy__plan" in unknown.text
    assert llm_server.chat_requests() == []


async def _complete(runtime: Runtime, text: str) -> list[tuple[str, str, str]]:
    completion = await Completer(runtime_sources(runtime)).complete(text, 0, len(text))
    assert completion is not None, text
    return [(c.value, c.kind, c.about) for c in completion.candidates]


async def test_completion_offers_a_servers_resources_and_prompts(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime, _rec = await _ready(tmp_path, llm_server)
    try:
        resources = await _complete(runtime, "look at @toy:")
        narrowed = await _complete(runtime, "look at @toy:memo://b")
        commands = await _complete(runtime, "/mcp__")
        help_text = (await runtime.submit("/help")).text
    finally:
        await runtime.aclose()
    assert resources == [
        ("@toy:memo://readme", "resource", "[MCP server toy] The toy readme."),
        ("@toy:memo://big", "resource", "[MCP server toy] A long memo."),
        ("@toy:memo://broken", "resource", "[MCP server toy] A memo that cannot be read."),
    ]
    assert [value for value, _, _ in narrowed] == ["@toy:memo://big", "@toy:memo://broken"]
    assert commands == [
        ("/mcp__toy__review", "command", "PATH — [MCP server toy] Ask for a review of ``path``."),
        (
            "/mcp__toy__plan",
            "command",
            "GOAL [STYLE] — [MCP server toy] Plan the work for ``goal``.",
        ),
    ]
    assert "/mcp__toy__plan GOAL [STYLE] — [MCP server toy] Plan the work" in help_text
