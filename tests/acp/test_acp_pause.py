"""Pause, step and resume over ACP: `smith acp` as a real subprocess, driven by the ACP SDK's
client side, against the scripted Chat-Completions server (its request log shows what was
sent while the turn was paused)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.schema import ClientCapabilities

from tests.acp.test_acp_agent import EditorClient
from tests.dispatch.support import child_requests, dispatch, report
from tests.engine.test_headless_cli import _config
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import make_git_repo
from tests.support.smith_cli import SMITH, smith_env

WAIT_S = 15.0
#: A round-one tool that runs until the test lets it finish (the file ``go`` appears).
WAIT_FOR_GO = tool_call("bash", {"command": "while [ ! -e go ]; do sleep 0.02; done; echo went"})
FOUND = {
    "status": "ok",
    "summary": "It went.",
    "findings": ["the go file appeared"],
    "evidence": ["ls go"],
}


class PausingClient(EditorClient):
    """An editor that also hears Smith's ``_smith/*`` notifications."""

    def __init__(self) -> None:
        super().__init__("allow_once")
        self.notes: list[tuple[str, dict[str, Any]]] = []

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        self.notes.append((method, params))

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    def noted(self, method: str) -> list[dict[str, Any]]:
        return [params for name, params in self.notes if name == method]

    def started(self, call_id: str) -> bool:
        return any(u.tool_call_id == call_id for u in self.of("tool_call"))

    def job_ids(self) -> list[str]:
        seen: list[str] = []
        for update in self.of("tool_call_update"):
            job = ((update.field_meta or {}).get("smith") or {}).get("job_id")
            if job and job not in seen:
                seen.append(job)
        return seen


async def until(condition: Callable[[], object], what: str) -> None:
    """Wait until ``condition()`` holds (checked as the event loop runs), else fail."""
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


@asynccontextmanager
async def acp_agent(
    tmp_path: Path, repo: Path, server: ScriptedLLMServer, client: EditorClient
) -> AsyncIterator[tuple[Any, Any]]:
    args = ["acp", "--api-url", server.base_url, "--db", str(tmp_path / "smith.db")]
    async with spawn_agent_process(
        client, SMITH, *args, "--config", _config(tmp_path), cwd=repo, env=smith_env(tmp_path)
    ) as (conn, _process):
        init = await conn.initialize(
            protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities()
        )
        yield conn, init


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_git_repo(tmp_path / "repo")


async def test_pause_step_resume_through_the_extension_methods(
    tmp_path: Path, repo: Path, llm_server: ScriptedLLMServer
) -> None:
    read = tool_call("read", {"path": "README.md"})
    llm_server.enqueue(
        text_reply(tool_calls=[WAIT_FOR_GO]),
        text_reply(tool_calls=[read]),
        text_reply("Went and read."),
    )
    client = PausingClient()
    async with acp_agent(tmp_path, repo, llm_server, client) as (conn, init):
        control = init.agent_capabilities.field_meta["smith"]["executionControl"]
        assert control["methods"] == ["_smith/pause", "_smith/step", "_smith/resume"]
        session = await conn.new_session(cwd=str(repo), mcp_servers=[])
        sid = session.session_id
        with pytest.raises(RequestError) as idle:
            await conn.ext_method("smith/pause", {"sessionId": sid})
        assert "no running turn" in str(idle.value.data)
        with pytest.raises(RequestError) as bad:
            await conn.ext_method("smith/pause", {})
        assert "sessionId" in str(bad.value.data)
        await conn.set_session_mode(mode_id="yolo", session_id=sid)
        prompt = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("go")]))

        await until(lambda: client.started(WAIT_FOR_GO.id), "round one's tool to start")
        assert await conn.ext_method("smith/pause", {"sessionId": sid}) == {"state": "pausing"}
        (repo / "go").touch()  # round one's tool finishes; the turn holds after it
        await until(lambda: client.noted("smith/paused"), "the hold after round one")
        (held,) = client.noted("smith/paused")
        assert (held["at"], held["rounds"], held["jobId"]) == ("request", 1, None)
        assert len(llm_server.chat_requests()) == 1 and not prompt.done()
        assert "[paused before its next request" in "".join(
            u.content.text for u in client.of("agent_thought_chunk")
        )

        assert await conn.ext_method("smith/step", {"sessionId": sid}) == {"state": "running"}
        await until(lambda: len(client.noted("smith/paused")) == 2, "the hold after the step")
        assert client.noted("smith/paused")[1]["rounds"] == 2
        assert len(llm_server.chat_requests()) == 2 and not prompt.done()

        assert await conn.ext_method("smith/resume", {"sessionId": sid}) == {"state": "running"}
        done = await asyncio.wait_for(prompt, WAIT_S)
        assert done.stop_reason == "end_turn"
        assert [n["how"] for n in client.noted("smith/resumed")] == ["stepped", "resumed"]
        assert len(llm_server.chat_requests()) == 3
        assert client.message() == "Went and read."


async def test_one_sub_agent_paused_through_acp_while_its_sibling_finishes(
    tmp_path: Path, repo: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("worker", "task alpha"), dispatch("worker", "task beta")]),
        text_reply(tool_calls=[WAIT_FOR_GO]),
        text_reply(tool_calls=[WAIT_FOR_GO]),
        text_reply(tool_calls=[report(**FOUND)]),
        text_reply(tool_calls=[report(**FOUND)]),
        text_reply("Both reported."),
    )
    client = PausingClient()
    async with acp_agent(tmp_path, repo, llm_server, client) as (conn, _init):
        session = await conn.new_session(cwd=str(repo), mcp_servers=[])
        sid = session.session_id
        await conn.set_session_mode(mode_id="yolo", session_id=sid)
        await conn.set_config_option(config_id="role", session_id=sid, value="orchestrator")
        prompt = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("go")]))

        await until(lambda: len(child_requests(llm_server)) == 2, "both children's first request")
        await until(lambda: len(client.job_ids()) == 2, "both jobs shown")
        with pytest.raises(RequestError) as unknown:
            await conn.ext_method("smith/pause", {"sessionId": sid, "jobId": "job-none"})
        assert "no running sub-agent job 'job-none'" in str(unknown.value.data)
        job = client.job_ids()[0]
        answer = await conn.ext_method("smith/pause", {"sessionId": sid, "jobId": job})
        assert answer == {"state": "pausing", "jobId": job}
        (repo / "go").touch()

        await until(lambda: client.noted("smith/paused"), "the paused job's hold")
        (held,) = client.noted("smith/paused")
        assert held["jobId"] == job and held["rounds"] == 1
        await until(lambda: len(child_requests(llm_server)) == 3, "the sibling's report request")
        assert not prompt.done()

        await conn.ext_method("smith/step", {"sessionId": sid, "jobId": job})
        done = await asyncio.wait_for(prompt, WAIT_S)
        assert done.stop_reason == "end_turn"
        assert len(child_requests(llm_server)) == 4
        assert [n["jobId"] for n in client.noted("smith/resumed")] == [job]
