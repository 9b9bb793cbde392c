"""bench/tool_loop.py: the scripted loop's check, and the bare agent loop that is
bench/headless.py's baseline, run for real (httpx, the scripted server, bubblewrap)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.bench.bench_modules import bench_module
from tests.support.llm_server import ScriptedLLMServer, ToolCall, text_reply, tool_call


@pytest.fixture(scope="module")
def tool_loop() -> ModuleType:
    return bench_module("tool_loop")


def _bash(command: str) -> ToolCall:
    return tool_call("bash", {"command": command})


def test_the_check_wants_every_reply_asked_for_and_the_last_output_back(
    tool_loop: ModuleType,
) -> None:
    with ScriptedLLMServer(default_reply="unexpected") as server:
        tool_loop.script_loop(server, _bash, 2)
        assert "3 scripted replies never asked for" in tool_loop.check_loop(server, [], 2)
    done = {"messages": [{"role": "tool", "content": "exit code: 0\nround 2\n"}]}
    short = {"messages": [{"role": "tool", "content": "exit code: 0\nround 1\n"}]}
    with ScriptedLLMServer() as server:
        assert tool_loop.check_loop(server, [done], 2) is None
        assert "did not reach the model" in tool_loop.check_loop(server, [short], 2)
        assert "no request" in tool_loop.check_loop(server, [], 2)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (bwrap)")
def test_the_bare_loop_runs_each_command_in_the_sandbox_and_sends_it_back(
    tool_loop: ModuleType, tmp_path: Path
) -> None:
    prefix, env = tool_loop.sandbox_prefix(tmp_path)
    assert prefix[0].endswith("bwrap") and prefix[-2:] == ["bash", "-c"]
    script = tmp_path / "bare_loop.py"
    script.write_text(tool_loop.BARE_LOOP, encoding="utf-8")
    with ScriptedLLMServer(default_reply="unexpected") as server:
        server.enqueue(text_reply(tool_calls=[_bash("echo pid=$$")]))
        tool_loop.script_loop(server, _bash, 2)
        argv = [sys.executable, str(script), server.base_url, json.dumps(prefix), json.dumps(env)]
        done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert tool_loop.LOOP_DONE in done.stdout
        requests = server.chat_requests()
        assert tool_loop.check_loop(server, requests, 2) is None
    results = [m for m in requests[-1]["messages"] if m["role"] == "tool"]
    # Three results: the pid check, then round 1 and round 2; the shell's pid in its own
    # PID namespace (bwrap's --unshare-pid) is 2, outside it never is.
    assert [r["content"].split("exit code")[0] for r in results] == [
        "pid=2\n",
        "round 1\n",
        "round 2\n",
    ]
