"""The helper logic of bench/peers.py: npm specs, the peers' configs, telling a program's side
requests from the scripted turn (with the real routed server), the process-tree readings."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import httpx
import pytest

from tests.bench.bench_modules import bench_module


@pytest.fixture(scope="module")
def peers() -> ModuleType:
    return bench_module("peers")


def test_npm_specs_split_into_name_and_version(peers: ModuleType) -> None:
    assert peers.split_spec("opencode-ai@1.18.33") == ("opencode-ai", "1.18.33")
    assert peers.split_spec("@qwen-code/qwen-code@0.15.10") == ("@qwen-code/qwen-code", "0.15.10")
    assert peers.split_spec("@qwen-code/qwen-code") == ("@qwen-code/qwen-code", "")
    assert peers.split_spec("opencode-ai") == ("opencode-ai", "")


def test_opencode_is_pointed_at_the_server_and_its_model(peers: ModuleType) -> None:
    config = peers.opencode_config("http://127.0.0.1:5/v1")
    provider_id, model_id = config["model"].split("/")
    provider = config["provider"][provider_id]
    assert provider["options"]["baseURL"] == "http://127.0.0.1:5/v1"
    assert provider["npm"] == "@ai-sdk/openai-compatible"
    assert model_id in provider["models"]
    assert config["small_model"] == config["model"]  # titles go to the same server
    assert config["autoupdate"] is False


def test_qwen_code_uses_openai_auth_without_updates(peers: ModuleType) -> None:
    settings = peers.qwen_settings()
    assert settings["security"]["auth"]["selectedType"] == "openai"
    assert settings["general"]["enableAutoUpdate"] is False


def _request(*tools: str) -> dict[str, object]:
    return {"tools": [{"type": "function", "function": {"name": t}} for t in tools]}


def test_side_requests_are_those_without_the_main_agent_tool(
    peers: ModuleType, tmp_path: Path
) -> None:
    everyone = {p.key: p for p in peers.programs(tmp_path, latest=False)}
    qwen, opencode, smith = everyone["qwen"], everyone["opencode"], everyone["smith"]
    memory = _request("read_file", "grep_search", "run_shell_command")  # after every turn
    assert qwen.is_side(memory)
    assert not qwen.is_side(_request("agent", "read_file", "run_shell_command"))
    assert opencode.is_side({"messages": []})  # the session title asks without tools
    assert not opencode.is_side(_request("bash", "task", "read"))
    assert not smith.is_side(_request("bash", "dispatch"))
    assert qwen.shell_call("echo 1").name == "run_shell_command"
    assert json.loads(opencode.shell_call("echo 1").arguments) == {"command": "echo 1"}


def test_the_routed_server_answers_side_requests_outside_the_script(peers: ModuleType) -> None:
    side = {"model": "m", "stream": False, "messages": [{"role": "user", "content": "title"}]}
    turn = {**side, **_request("bash")}
    with peers.RoutedServer(lambda body: "tools" not in body, default_reply="default") as server:
        server.enqueue(peers.text_reply("the scripted answer"))
        url = server.base_url + "/chat/completions"
        first = httpx.post(url, json=side, timeout=10).json()
        assert server.pending == 1 and server.side_requests == 1
        second = httpx.post(url, json=turn, timeout=10).json()
        assert server.pending == 0
        assert first["choices"][0]["message"]["content"] == "ok"
        assert second["choices"][0]["message"]["content"] == "the scripted answer"
        assert server.turn_requests() == [turn]


def test_the_process_tree_counts_its_children(peers: ModuleType) -> None:
    burn = "import subprocess, sys; subprocess.run([sys.executable, '-c', 'while True: pass'])"
    child = subprocess.Popen([sys.executable, "-c", burn])
    found: list[int] = []
    try:
        deadline = time.monotonic() + 10
        while len(found) < 2 or peers.tree_cpu(found[1]) < 0.2:
            assert time.monotonic() < deadline, f"no busy grandchild seen: {found}"
            found = peers.tree(child.pid)
            time.sleep(0.02)
        assert found[0] == child.pid and len(found) == 2
        own = peers.tree_cpu(found[1])
        assert peers.tree_cpu(child.pid) >= own >= 0.2  # the busy grandchild is counted
        assert peers.tree_rss_mb(child.pid) > peers.tree_rss_mb(found[1]) > 0
    finally:
        for pid in reversed(found or [child.pid]):
            subprocess.run(["kill", "-9", str(pid)], check=False)
        child.wait()
