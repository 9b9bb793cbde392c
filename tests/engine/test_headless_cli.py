"""`smith -p` as a real subprocess against the scripted server, including a SIGKILL crash."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from smith_tui.llm import sanitize_messages
from smith_tui.store import Store
from tests.support.llm_server import ScriptedLLMServer, http_error, text_reply, tool_call
from tests.support.runtime import make_git_repo
from tests.support.smith_cli import run_smith, server_args, smith_env, start_smith


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return make_git_repo(tmp_path / "repo")


def _config(tmp_path: Path) -> str:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"llm_config": {"retry_backoff_ms": [10, 20]}}))
    return str(path)


def smith_args(tmp_path: Path, server: ScriptedLLMServer, *args: str) -> list[str]:
    """``args`` then ``server``'s URL, ``tmp_path/smith.db`` and the test config file."""
    return [*args, *server_args(server.base_url, tmp_path / "smith.db", _config(tmp_path))]


def smith(
    tmp_path: Path, cwd: Path, server: ScriptedLLMServer, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``smith ARGS`` against ``server`` with the database and config in ``tmp_path``."""
    return run_smith(
        smith_args(tmp_path, server, *args), cwd=cwd, env=smith_env(tmp_path), stdin=stdin
    )


def test_text_output_streams_answer(tmp_path: Path, workdir: Path, llm_server) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("bash", {"command": "echo hi"})]), text_reply("Done!")
    )
    result = smith(tmp_path, workdir, llm_server, "-p", "say hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Done!"
    assert "bash" in result.stderr
    assert "Traceback" not in result.stderr


def test_json_output_and_resume(tmp_path: Path, workdir: Path, llm_server) -> None:
    llm_server.enqueue(
        text_reply("first answer", usage={"prompt_tokens": 5, "completion_tokens": 2})
    )
    result = smith(tmp_path, workdir, llm_server, "-p", "q1", "--output-format", "json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["result"] == "first answer"
    assert data["stop_reason"] == "completed"
    assert data["usage"]["input_tokens"] == 5 and data["usage"]["output_tokens"] == 2
    conv = data["conversation_id"]

    llm_server.enqueue(text_reply("second answer"))
    result = smith(
        tmp_path, workdir, llm_server, "-p", "q2", "--resume", conv, "--output-format", "json"
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["conversation_id"] == conv
    sent = llm_server.chat_requests()[-1]["messages"]
    assert [m["content"] for m in sent if m["role"] != "system"][:3] == ["q1", "first answer", "q2"]

    llm_server.enqueue(text_reply("fresh"))
    result = smith(tmp_path, workdir, llm_server, "-p", "q3", "--output-format", "json")
    assert json.loads(result.stdout)["conversation_id"] != conv  # a new conversation by default
    llm_server.enqueue(text_reply("continued"))
    result = smith(
        tmp_path, workdir, llm_server, "-p", "q4", "--continue", "--output-format", "json"
    )
    assert json.loads(result.stdout)["result"] == "continued"
    sent = llm_server.chat_requests()[-1]["messages"]
    assert "q3" in [m["content"] for m in sent]


def test_stream_json_one_event_per_line(tmp_path: Path, workdir: Path, llm_server) -> None:
    llm_server.enqueue(text_reply("streamed", chunk_chars=3))
    result = smith(tmp_path, workdir, llm_server, "-p", "x", "--output-format", "stream-json")
    assert result.returncode == 0
    events = [json.loads(line) for line in result.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert "turn_started" in types and types.count("text_delta") == 3
    assert (
        events[-2]["type"] == "turn_finished"
        or events[-1]["type"] == "turn_finished"
        or ("turn_finished" in types)
    )
    assert "".join(e["text"] for e in events if e["type"] == "text_delta") == "streamed"


def test_prompt_from_stdin(tmp_path: Path, workdir: Path, llm_server) -> None:
    llm_server.enqueue(text_reply("read it"))
    result = smith(tmp_path, workdir, llm_server, "-p", "-", stdin="prompt via stdin\n")
    assert result.returncode == 0
    user = [m for m in llm_server.chat_requests()[0]["messages"] if m["role"] == "user"]
    assert user[0]["content"] == "prompt via stdin"


def test_failed_turn_exits_non_zero_with_error(tmp_path: Path, workdir: Path, llm_server) -> None:
    llm_server.enqueue(http_error(401, {"error": {"message": "invalid key"}}))
    result = smith(tmp_path, workdir, llm_server, "-p", "x")
    assert result.returncode == 1
    assert "http_401" in result.stderr or "invalid key" in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_inputs_get_clear_messages(tmp_path: Path, workdir: Path, llm_server) -> None:
    result = smith(tmp_path, workdir, llm_server, "-p", "   ")
    assert result.returncode == 2 and "prompt is empty" in result.stderr
    result = smith(tmp_path, workdir, llm_server, "-p", "x", "--resume", "nope")
    assert result.returncode == 2 and "no conversation with id 'nope'" in result.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"llm_config": {"retry_max_retries": -1}}')
    proc = run_smith(
        ["-p", "x", "--config", str(bad), "--db", str(tmp_path / "s.db")],
        cwd=workdir,
        env=smith_env(tmp_path),
    )
    assert proc.returncode == 2
    assert "retry_max_retries" in proc.stderr and "Traceback" not in proc.stderr
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(b"this is not a database at all" * 100)
    proc = run_smith(
        ["-p", "x", "--db", str(damaged), "--api-url", llm_server.base_url],
        cwd=workdir,
        env=smith_env(tmp_path),
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert str(damaged) in proc.stderr


def test_sigkill_mid_turn_then_resume(tmp_path: Path, workdir: Path, llm_server) -> None:
    """Kill a real `smith -p` in round 3 of a turn; every completed round survives."""
    llm_server.enqueue(
        text_reply("Round one.", tool_calls=[tool_call("bash", {"command": "echo r1-output"})]),
        text_reply("Round two.", tool_calls=[tool_call("bash", {"command": "echo r2-output"})]),
        text_reply(tool_calls=[tool_call("bash", {"command": "sleep 60"})]),
    )
    db = tmp_path / "smith.db"
    proc = start_smith(
        smith_args(tmp_path, llm_server, "-p", "three rounds please"),
        cwd=workdir,
        env=smith_env(tmp_path),
        new_session=True,
    )
    try:
        llm_server.wait_for_chats(3, timeout=30)
        time.sleep(0.5)  # round 3's tool is running now
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.stdout.close()
        proc.stderr.close()

    with Store.open(db) as store:
        convs = store.conversations.list_all()
        assert len(convs) == 1
        stored = store.conversations.list_messages(convs[0].id)
        contents = [m.content for m in stored]
        assert contents[0] == "three rounds please"
        assert "Round one." in contents and "Round two." in contents
        assert any("r1-output" in (c or "") for c in contents)
        assert any("r2-output" in (c or "") for c in contents)

    llm_server.enqueue(text_reply("resumed fine"))
    result = smith(tmp_path, workdir, llm_server, "-p", "are you there?", "--continue")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "resumed fine"
    sent = llm_server.chat_requests()[-1]["messages"]
    sanitize_messages(sent)  # a valid Chat-Completions transcript
    texts = [m.get("content") or "" for m in sent]
    assert "three rounds please" in texts and "are you there?" in texts
    assert any("r2-output" in t for t in texts)
