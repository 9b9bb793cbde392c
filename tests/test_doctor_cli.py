"""``smith doctor``: the real binary against three kinds of server — the scripted one
playing an OpenAI-like server and one without usage, and the third-party ``llmock`` server
with and without tool support."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from smith_tui.llm.server_check import LIMIT_TOKENS, PROBE_TOOL
from tests.support.llm_server import ScriptedLLMServer, Usage, text_reply, tool_call
from tests.support.smith_cli import run_smith, smith_env

LLMOCK = str(Path(sys.executable).with_name("llmock"))


def _doctor(tmp_path: Path, url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    env = smith_env(tmp_path)
    env.pop("SMITH_MODEL")  # the doctor picks the model as a user's first run would
    return run_smith(
        ["doctor", "--api-url", url, "--db", str(tmp_path / "smith.db"), *extra],
        cwd=tmp_path,
        env=env,
    )


def test_an_openai_like_server_passes_and_json_says_so(tmp_path: Path) -> None:
    with ScriptedLLMServer() as server:
        server.enqueue(
            text_reply(tool_calls=[tool_call(PROBE_TOOL, {"word": "ping"})], usage=Usage(30, 9)),
            text_reply("1 2 3", finish_reason="length", usage=Usage(20, LIMIT_TOKENS)),
        )
        done = _doctor(tmp_path, server.base_url, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is True and report["model"] == "scripted-model"
    status = {check["name"]: check["status"] for check in report["checks"]}
    assert status == {
        "models": "ok",
        "model": "ok",
        "context window": "warn",  # the scripted catalog gives no window
        "streaming": "ok",
        "tool calls": "ok",
        "usage": "ok",
        "reasoning": "ok",
        "max_tokens": "ok",
    }
    assert report["probes"]["tool"]["tool_calls"] == [PROBE_TOOL]


def test_a_server_without_usage_works_with_a_warning_that_names_what_it_costs(
    tmp_path: Path,
) -> None:
    with ScriptedLLMServer() as server:
        server.enqueue(
            text_reply(tool_calls=[tool_call(PROBE_TOOL, {"word": "ping"})]),
            text_reply(" ".join(map(str, range(400)))),
        )
        done = _doctor(tmp_path, server.base_url)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "✓ tool calls" in out
    assert "! usage" in out and "budget.*_tokens" in out
    assert "! max_tokens" in out and "ignored" in out
    assert "Smith works with this server; 3 things to know." in out


def test_an_unreachable_server_fails_with_what_to_check(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens once it is closed
    done = _doctor(tmp_path, f"http://127.0.0.1:{port}/v1")
    assert done.returncode == 1
    assert "✗ models" in done.stdout and "llm_config.api_url" in done.stdout
    assert "Traceback" not in done.stderr


def test_doctor_takes_no_prompt(tmp_path: Path) -> None:
    done = run_smith(["doctor", "-p", "hi"], cwd=tmp_path, env=smith_env(tmp_path))
    assert done.returncode == 2 and "takes no prompt" in done.stderr


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(params=["auto", "off"], ids=["llmock-tools", "llmock-no-tools"])
def llmock(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    port = _free_port()
    log = (tmp_path / "llmock.log").open("w")
    proc = subprocess.Popen(
        [LLMOCK, "serve", "--port", str(port), "--tool-mode", request.param],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    try:
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None, (tmp_path / "llmock.log").read_text()
            assert time.monotonic() < deadline, "llmock did not start in 60 s"
            time.sleep(0.05)  # polling a condition: the server answering
        yield f"{url}/v1", request.param
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


def test_llmock_with_and_without_tool_support(tmp_path: Path, llmock: tuple[str, str]) -> None:
    url, mode = llmock
    done = _doctor(tmp_path, url, "--json")
    report = json.loads(done.stdout)
    status = {check["name"]: check["status"] for check in report["checks"]}
    assert status["models"] == "ok" and status["streaming"] == "ok"
    if mode == "auto":
        assert done.returncode == 0, done.stdout
        assert status["tool calls"] in ("ok", "warn")
        assert report["probes"]["tool"]["tool_calls"] == [PROBE_TOOL]
    else:
        assert done.returncode == 1, done.stdout
        assert status["tool calls"] == "fail"
        assert report["probes"]["tool"]["tool_calls"] == []
