"""`smith acp` driven by a client on the ACP TypeScript SDK from npm (tests/acp/ts/client.mjs,
installed by `.ci/run` with `npm ci --prefix tests/acp/ts`) against the scripted
Chat-Completions server: the capabilities, the config options with their categories, model
switching, session_info_update, usage_update, session/list, fork, close and resume, asserted
on the messages `smith acp` wrote."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.acp.test_acp_sessions import CATALOG, _user_texts
from tests.engine.test_headless_cli import _config
from tests.support.llm_server import ScriptedLLMServer, text_reply
from tests.support.runtime import make_git_repo
from tests.support.smith_cli import SMITH, smith_env

TS = Path(__file__).resolve().parent / "ts"
SDK = TS / "node_modules" / "@agentclientprotocol" / "sdk"


def _run_client(scenario: str, repo: Path, argv: list[str], env: dict[str, str]) -> Any:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (the ACP TypeScript SDK runs on it)")
    assert SDK.is_dir(), "the ACP TypeScript SDK is missing: run npm ci --prefix tests/acp/ts"
    done = subprocess.run(
        [node, str(TS / "client.mjs"), scenario, str(repo), "--", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["failure"] is None, report["failure"]
    assert report["agentExit"] == 0, done.stderr[-3000:]
    return report


def _updates(wire: list[dict[str, Any]], session_id: str, kind: str) -> list[dict[str, Any]]:
    return [
        m["params"]["update"]
        for m in wire
        if m.get("method") == "session/update"
        and m["params"]["sessionId"] == session_id
        and m["params"]["update"]["sessionUpdate"] == kind
    ]


def test_ts_sdk_client_lists_forks_closes_resumes_and_switches_models(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    usage = {"prompt_tokens": 900, "completion_tokens": 20, "cost": 0.003}
    with ScriptedLLMServer(catalog=CATALOG) as server:
        server.enqueue(
            text_reply("one", usage=usage),
            text_reply("two", usage=usage),
            text_reply("forked"),
            text_reply("resumed"),
        )
        argv = [SMITH, "acp", "--api-url", server.base_url, "--db", str(tmp_path / "smith.db")]
        argv += ["--config", _config(tmp_path)]
        report = _run_client("sessions", repo, argv, smith_env(tmp_path))
        requests = server.chat_requests()
    steps = {s["name"]: s for s in report["steps"]}
    wire = report["wire"]

    caps = steps["initialize"]["result"]["agentCapabilities"]
    assert caps["sessionCapabilities"] == {"list": {}, "resume": {}, "close": {}, "fork": {}}
    assert caps["promptCapabilities"]["image"] is True  # for a model that takes images
    new = steps["new"]["result"]
    sid = new["sessionId"]
    options = {o["id"]: o for o in new["configOptions"]}
    assert list(options) == ["role", "model", "mode"]
    assert options["model"]["category"] == "model"
    assert [c["value"] for c in options["model"]["options"]] == [
        "auto",
        "vision-model",
        "text-model",
    ]
    assert options["mode"]["category"] == "mode"
    assert options["role"]["category"] == "_smith_role"

    # The first prompt names the session; usage follows each request.
    # (again when it is resumed: the editor lists it by that title)
    titles = [u["title"] for u in _updates(wire, sid, "session_info_update")]
    assert titles == ["first question", "first question"]
    switched = {o["id"]: o["currentValue"] for o in steps["set-model"]["result"]["configOptions"]}
    assert switched["model"] == "text-model"
    assert requests[1]["model"] == "text-model"
    usages = _updates(wire, sid, "usage_update")
    # After the second request (on text-model, 16k window): both requests' cost so far.
    second = usages[1]
    assert second["size"] == 16000 and second["used"] > 0
    assert second["cost"] == {"amount": 0.006, "currency": "USD"}
    assert usages[0]["cost"] == {"amount": 0.003, "currency": "USD"}

    listed = steps["list"]["result"]["sessions"]
    assert listed[0]["sessionId"] == sid and listed[0]["title"] == "first question"
    assert listed[0]["cwd"] == str(repo) and listed[0]["updatedAt"].endswith("Z")

    fork_id = steps["fork"]["result"]["sessionId"]
    assert fork_id != sid
    assert _user_texts(requests[2]) == ["first question", "another second"]
    assert steps["prompt-fork"]["result"]["stopReason"] == "end_turn"

    assert steps["close"]["result"] == {}
    closed = steps["prompt-closed"]["error"]
    assert f"no open session '{sid}'" in json.dumps(closed)

    assert "configOptions" in steps["resume"]["result"]
    resumed_at = next(  # the resume's answer: modes, and no session id of its own
        i
        for i, m in enumerate(wire)
        if "modes" in (m.get("result") or {}) and "sessionId" not in m["result"]
    )
    replayed = [
        m
        for m in wire[resumed_at:]
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "user_message_chunk"
    ]
    assert replayed == []  # resume does not replay what the client shows already
    assert _user_texts(requests[3]) == ["first question", "second question", "third question"]
    assert steps["prompt-resumed"]["result"]["stopReason"] == "end_turn"


def test_ts_sdk_client_image_prompt_and_its_refusal(tmp_path: Path) -> None:
    from tests.acp.test_acp_images import PNG

    repo = make_git_repo(tmp_path / "repo")
    with ScriptedLLMServer(catalog=CATALOG) as server:
        server.enqueue(text_reply("a green pixel"))
        argv = [SMITH, "acp", "--api-url", server.base_url, "--db", str(tmp_path / "smith.db")]
        argv += ["--config", _config(tmp_path)]
        env = {**smith_env(tmp_path), "TEST_IMAGE_PNG": PNG}
        report = _run_client("images", repo, argv, env)
        requests = server.chat_requests()
    steps = {s["name"]: s for s in report["steps"]}
    caps = steps["initialize"]["result"]["agentCapabilities"]
    assert caps["promptCapabilities"]["image"] is True
    assert steps["prompt-image"]["result"]["stopReason"] == "end_turn"
    (request,) = requests  # the refused prompt sent nothing
    assert request["model"] == "vision-model"
    prompts = [m for m in request["messages"] if m["role"] == "user"]
    assert prompts[0]["content"] == [
        {"type": "text", "text": "what is this?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
    ]
    refused = steps["prompt-refused"]["error"]
    assert refused["code"] == -32602
    assert "the model text-model does not take images" in json.dumps(refused["data"])
