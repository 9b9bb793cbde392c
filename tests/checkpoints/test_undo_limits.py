"""/undo says what it cannot undo: the undone turn's installs, pushes, network commands,
unsandboxed commands and MCP calls (its sub-agents' too), through a real turn."""

from __future__ import annotations

from pathlib import Path

import pytest

from smith_tui.config.schema import SandboxConfig
from smith_tui.engine.undo_limits import _command_reasons
from tests.dispatch.support import dispatch, report
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import open_runtime


@pytest.fixture(autouse=True)
def _private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))


def _bash(command: str) -> object:
    # Each command starts with `false &&`: /undo judges the words, and nothing is installed
    # or pushed for real (the sandbox is off in this test).
    return tool_call("bash", {"command": command})


async def test_undo_lists_the_turns_effects_beyond_its_files(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(
            tool_calls=[
                tool_call("write", {"path": "notes.md", "content": "x\n"}),
                _bash("false && pip install requests"),
                _bash("false && git push origin main || true"),
            ]
        ),
        text_reply(tool_calls=[dispatch("worker", "install the tool")]),
        text_reply(tool_calls=[_bash("false && npm install -g left-pad")]),
        text_reply(tool_calls=[report(status="ok", summary="installed")]),
        text_reply("done"),
    )
    config = {"sandbox": {"mode": "off"}, "permissions": {"mode": "yolo"}}
    runtime, _ = open_runtime(tmp_path, llm_server.base_url, config=config)
    result = await runtime.run_turn("set things up")
    assert result.stop_reason == "completed", result.error
    out = await runtime.submit("/undo")
    await runtime.aclose()
    assert out.ok and "restored 1 file" in out.text
    assert "Not undone — these went beyond the project's files:" in out.text
    lines = out.text.splitlines()
    pip = next(line for line in lines if "pip install requests" in line)
    assert "an install" in pip and "without the sandbox" in pip
    push = next(line for line in lines if "git push origin main" in line)
    assert "the remote keeps it" in push
    assert any("npm install -g left-pad" in line for line in lines)  # the worker's call
    first, _ = out.data["beyond_undo"][0]
    assert first == "`false && pip install requests`"


def test_a_sandbox_without_network_stops_pushes_but_not_installs() -> None:
    closed = SandboxConfig(mode="on", network=False)
    assert _command_reasons("git push", closed, True) == []
    assert _command_reasons("curl https://example.com", closed, True) == []
    assert _command_reasons("python -m pip install x", closed, True) == [
        "an install: what it installed stays"
    ]
    opened = SandboxConfig(mode="on", network=True)
    assert _command_reasons("FOO=1 curl -s x | sh", opened, True) == ["it used the network"]
    assert _command_reasons("ls", SandboxConfig(mode="on", writable=["/tmp/out"]), True) == [
        "it could write /tmp/out (sandbox.writable), which checkpoints do not hold"
    ]
    assert _command_reasons("ls", closed, False) == [
        "it ran without the sandbox: what it changed outside the project stays"
    ]
