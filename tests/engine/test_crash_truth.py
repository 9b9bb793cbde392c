"""Crash-truth of tool calls: a real `smith -p` killed or stopped while a turn is in flight.

The assistant message that calls a tool is committed before the tool starts, so a SIGKILL
while the tool runs leaves the call on record; `--continue` answers it with a synthetic
TOOL_OUTCOME_UNKNOWN result and the next request is a valid transcript. SIGTERM is graceful:
the turn is cancelled, what was shown is saved, and the exit status is non-zero.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from smith_tui.engine import events as ev
from smith_tui.llm import sanitize_messages
from smith_tui.store import TOOL_OUTCOME_UNKNOWN, Store
from tests.engine.test_headless_cli import smith, smith_args
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import make_git_repo, open_runtime
from tests.support.smith_cli import smith_env, start_smith

WAIT_S = 30.0
"""Upper bound for things that happen in well under a second (a loaded machine is slow)."""


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return make_git_repo(tmp_path / "repo")


def _start(tmp_path: Path, cwd: Path, server: ScriptedLLMServer, *args: str) -> subprocess.Popen:
    # A group of its own: SIGKILL of the group takes the tool's shell with it.
    return start_smith(
        smith_args(tmp_path, server, *args), cwd=cwd, env=smith_env(tmp_path), new_session=True
    )


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen]]:
    started: list[subprocess.Popen] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def _wait_for_file(path: Path, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + WAIT_S
    while not path.exists():
        assert proc.poll() is None, (
            f"smith exited early: {proc.stderr.read() if proc.stderr else ''}"
        )
        assert time.monotonic() < deadline, f"the tool never started ({path} missing)"
        time.sleep(0.05)


def _only_conversation(store: Store) -> tuple[str, list[Any]]:
    convs = store.conversations.list_all()
    assert len(convs) == 1
    return convs[0].id, store.conversations.list_messages(convs[0].id)


def test_sigkill_while_a_tool_runs_then_continue(
    tmp_path: Path, workdir: Path, llm_server: ScriptedLLMServer, procs: list
) -> None:
    marker = workdir / "tool-started"  # the sandbox's /tmp is its own: mark inside the project
    command = f"touch {marker} && sleep 30"
    call = tool_call("bash", {"command": command}, id="call_sleepy")
    llm_server.enqueue(text_reply("Running the long one.", tool_calls=[call]))
    proc = _start(tmp_path, workdir, llm_server, "-p", "run the long command")
    procs.append(proc)
    _wait_for_file(marker, proc)
    os.killpg(proc.pid, signal.SIGKILL)
    assert proc.wait(timeout=WAIT_S) == -signal.SIGKILL

    # What the killed process left: the call is on record (it was committed before the tool
    # started, since the tool never finished), with no result yet.
    with Store.open(tmp_path / "smith.db") as store:
        conv_id, stored = _only_conversation(store)
        assert [m.role for m in stored] == ["user", "assistant"]
        assert stored[1].content == "Running the long one."
        assert [c["id"] for c in stored[1].tool_calls] == ["call_sleepy"]
        assert [t.status for t in store.turns.list_for_conversation(conv_id)] == ["running"]

    llm_server.enqueue(text_reply("I am back."))
    result = smith(tmp_path, workdir, llm_server, "-p", "did it finish?", "--continue")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "I am back."

    with Store.open(tmp_path / "smith.db") as store:
        _, stored = _only_conversation(store)
        assert [m.role for m in stored] == ["user", "assistant", "tool", "user", "assistant"]
        repaired = stored[2]
        assert repaired.tool_call_id == "call_sleepy" and repaired.name == "bash"
        assert repaired.metadata == {"synthetic": True}
        assert repaired.content.startswith(TOOL_OUTCOME_UNKNOWN)
        assert "bash call call_sleepy" in repaired.content
        assert command in repaired.content  # the arguments, as the model wrote them
        assert "may have had effects" in repaired.content

    sent = llm_server.chat_requests()[-1]["messages"]
    sanitize_messages(sent)  # every call answered right after it, no stray result
    at = next(i for i, m in enumerate(sent) if m.get("tool_calls"))
    assert sent[at]["tool_calls"][0]["id"] == "call_sleepy"
    assert json.loads(sent[at]["tool_calls"][0]["function"]["arguments"]) == {"command": command}
    answer = sent[at + 1]
    assert answer["role"] == "tool" and answer["tool_call_id"] == "call_sleepy"
    assert answer["content"] == repaired.content
    assert (sent[at + 2]["role"], sent[at + 2]["content"]) == ("user", "did it finish?")


def test_sigterm_while_streaming_saves_the_text_shown(
    tmp_path: Path, workdir: Path, llm_server: ScriptedLLMServer, procs: list
) -> None:
    shown = "Here is the first half of"
    reply = text_reply(shown, chunk_chars=5)
    # Role delta and the text deltas, then silence: the answer never finishes.
    llm_server.enqueue(reply.copy(events=reply.events[:6], ending="stall", hold_s=60))
    proc = _start(tmp_path, workdir, llm_server, "-p", "explain", "--output-format", "stream-json")
    procs.append(proc)
    assert proc.stdout is not None
    streamed = ""
    while streamed != shown:
        line = proc.stdout.readline()
        assert line, "smith stopped before streaming the text"
        event = json.loads(line)
        if event["type"] == "text_delta":
            streamed += event["text"]
    os.kill(proc.pid, signal.SIGTERM)
    out, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode not in (0, -signal.SIGTERM), err
    assert "Traceback" not in err
    finished = [json.loads(line) for line in out.splitlines()]
    finished = [e for e in finished if e["type"] == "turn_finished"]
    assert [e["stop_reason"] for e in finished] == ["cancelled"]

    with Store.open(tmp_path / "smith.db") as store:
        conv_id, stored = _only_conversation(store)
        assert [(m.role, m.content) for m in stored] == [("user", "explain"), ("assistant", shown)]
        assert stored[1].metadata["partial"] is True
        assert [t.status for t in store.turns.list_for_conversation(conv_id)] == ["cancelled"]


def test_sigterm_while_a_tool_runs_records_the_cancelled_call(
    tmp_path: Path, workdir: Path, llm_server: ScriptedLLMServer, procs: list
) -> None:
    marker = workdir / "tool-started"  # the sandbox's /tmp is its own: mark inside the project
    call = tool_call("bash", {"command": f"touch {marker} && sleep 30"}, id="call_stopped")
    llm_server.enqueue(text_reply("Starting.", tool_calls=[call]))
    proc = _start(tmp_path, workdir, llm_server, "-p", "run it")
    procs.append(proc)
    _wait_for_file(marker, proc)
    os.kill(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode not in (0, -signal.SIGTERM), err
    assert "cancelled" in err and "Traceback" not in err

    with Store.open(tmp_path / "smith.db") as store:
        conv_id, stored = _only_conversation(store)
        assert [m.role for m in stored] == ["user", "assistant", "tool"]
        result = stored[2]
        assert result.tool_call_id == "call_stopped"
        assert result.metadata.get("cancelled") is True
        assert not result.metadata.get("synthetic")  # a real result, not a repair
        assert [t.status for t in store.turns.list_for_conversation(conv_id)] == ["cancelled"]
    assert len(llm_server.chat_requests()) == 1  # the cancelled turn asked for no second round


async def test_a_turn_task_cancelled_while_a_tool_runs_leaves_a_valid_transcript(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    """The front end tears the turn down (its task cancelled, as on quit) mid-tool."""
    call = tool_call("bash", {"command": "sleep 30"}, id="call_torn")
    llm_server.enqueue(text_reply("Sleeping.", tool_calls=[call]), text_reply("Fine."))
    runtime, recorder = open_runtime(tmp_path, llm_server.base_url)
    try:
        task = asyncio.create_task(runtime.run_turn("sleep please"))
        deadline = time.monotonic() + WAIT_S
        while not recorder.of(ev.ToolCallStarted):
            assert not task.done() and time.monotonic() < deadline, "the tool never started"
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not runtime.busy
        stored = runtime.store.conversations.list_messages(runtime.conversations.conversation_id)
        assert [m.role for m in stored] == ["user", "assistant", "tool"]
        assert stored[2].tool_call_id == "call_torn"
        assert stored[2].content.startswith(TOOL_OUTCOME_UNKNOWN)

        result = await runtime.run_turn("still there?")
        assert result.stop_reason == "completed" and result.text == "Fine."
        sanitize_messages(llm_server.chat_requests()[-1]["messages"])
    finally:
        await runtime.aclose()
