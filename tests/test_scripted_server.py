"""The scripted Chat-Completions server itself, exercised with plain httpx + httpx-sse clients."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from httpx_sse import aconnect_sse, connect_sse

from tests.support.llm_script import jsonl_frames
from tests.support.llm_server import (
    ScriptedLLMServer,
    Usage,
    disconnect_after,
    event_error,
    http_error,
    in_stream_error,
    malformed_json_event,
    raw_sse,
    replay_file,
    reply_from_spec,
    sse_event,
    stall,
    stream_file,
    text_reply,
    tool_call,
)

REPO = Path(__file__).resolve().parents[1]
STREAM = {
    "stream": True,
    "model": "scripted-model",
    "messages": [{"role": "user", "content": "hi"}],
}


def chat_url(server: ScriptedLLMServer) -> str:
    return server.base_url + "/chat/completions"


def sse_datas(server: ScriptedLLMServer, **client_kw: Any) -> list[str]:
    """POST a streaming chat request and return every event's data (comments are dropped)."""
    with httpx.Client(timeout=5, **client_kw) as client:
        with connect_sse(client, "POST", chat_url(server), json=STREAM) as source:
            assert source.response.status_code == 200
            return [event.data for event in source.iter_sse()]


def raw_body(
    server: ScriptedLLMServer, payload: dict[str, Any] = STREAM
) -> tuple[bytes, list[bytes]]:
    """POST and return the de-chunked body plus the pieces as httpx handed them over."""
    pieces: list[bytes] = []
    with httpx.stream("POST", chat_url(server), json=payload, timeout=5) as response:
        assert response.status_code == 200
        pieces.extend(response.iter_raw())
    return b"".join(pieces), pieces


def deltas(datas: list[str]) -> list[dict[str, Any]]:
    return [
        json.loads(d)["choices"][0]["delta"]
        for d in datas
        if d != "[DONE]" and json.loads(d)["choices"]
    ]


# ------------------------------------------------------------------ text and tool replies


def test_text_reply_streams_role_then_text_then_finish_then_done(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.enqueue(text_reply("Hello, Mr. Anderson.", chunk_chars=5))
    datas = sse_datas(llm_server)
    assert datas[-1] == "[DONE]"
    chunks = [json.loads(d) for d in datas[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    pieces = [c["choices"][0]["delta"].get("content") for c in chunks[1:-1]]
    assert pieces == ["Hello", ", Mr.", " Ande", "rson."]
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_reasoning_heartbeats_and_usage_chunk(llm_server: ScriptedLLMServer) -> None:
    usage = Usage(prompt_tokens=11, completion_tokens=7, reasoning_tokens=3)
    llm_server.enqueue(
        text_reply(
            "Answer", reasoning="Think first", usage=usage, heartbeat_every=2, leading_heartbeats=1
        )
    )
    body, _ = raw_body(llm_server)
    assert body.startswith(b": keep-alive\n\n")
    assert body.count(b": keep-alive\n\n") == 1 + 3  # 7 data frames -> a beat after frames 2, 4, 6
    llm_server.enqueue(
        text_reply(
            "Answer", reasoning="Think first", usage=usage, heartbeat_every=2, leading_heartbeats=1
        )
    )
    datas = sse_datas(llm_server)
    reasoning = "".join(d.get("reasoning_content", "") for d in deltas(datas))
    assert reasoning == "Think first"
    last = json.loads(datas[-2])
    assert last["choices"] == []
    assert last["usage"] == {
        "prompt_tokens": 11,
        "completion_tokens": 7,
        "total_tokens": 18,
        "completion_tokens_details": {"reasoning_tokens": 3},
    }


def test_tool_calls_stream_openai_style(llm_server: ScriptedLLMServer) -> None:
    first = tool_call("read_file", {"path": "src/app.py", "limit": 40})
    second = tool_call("bash", '{"command": "ls"}', id="call_fixed")
    llm_server.enqueue(text_reply("Let me look.", tool_calls=[first, second], chunk_chars=6))
    datas = sse_datas(llm_server)
    calls: dict[int, list[dict[str, Any]]] = {}
    for delta in deltas(datas):
        for part in delta.get("tool_calls", []):
            calls.setdefault(part["index"], []).append(part)
    assert sorted(calls) == [0, 1]
    assert calls[0][0] == {
        "index": 0,
        "id": first.id,
        "type": "function",
        "function": {"name": "read_file", "arguments": ""},
    }
    assert first.id.startswith("call_")
    assert calls[1][0]["id"] == "call_fixed"
    for index, call in ((0, first), (1, second)):
        rest = calls[index][1:]
        assert all(set(p) == {"index", "function"} for p in rest)
        assert "".join(p["function"]["arguments"] for p in rest) == call.arguments
    assert len(calls[0]) > 2  # arguments really arrive in pieces
    assert json.loads(datas[-2])["choices"][0]["finish_reason"] == "tool_calls"


def test_non_streaming_request_gets_one_completion_object(llm_server: ScriptedLLMServer) -> None:
    call = tool_call("grep", {"pattern": "TODO"})
    llm_server.enqueue(
        text_reply(
            "Done.",
            reasoning="hmm",
            tool_calls=[call],
            usage={"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
        )
    )
    response = httpx.post(chat_url(llm_server), json={"model": "m", "messages": []}, timeout=5)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert int(response.headers["content-length"]) == len(response.content)
    body = response.json()
    assert body["object"] == "chat.completion"
    choice = body["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] == "Done."
    assert choice["message"]["reasoning_content"] == "hmm"
    assert choice["message"]["tool_calls"] == [
        {
            "id": call.id,
            "type": "function",
            "function": {"name": "grep", "arguments": '{"pattern":"TODO"}'},
        }
    ]
    assert body["usage"] == {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}


def test_rechunked_text_reply_keeps_multibyte_text_intact(llm_server: ScriptedLLMServer) -> None:
    text = "Ünïcödé ✓ — 漢字 and emoji 🐇 split anywhere"
    llm_server.enqueue(text_reply(text, chunk_chars=3).rechunked(seed=7, max_write=5))
    datas = sse_datas(llm_server)
    assert "".join(d.get("content", "") for d in deltas(datas)) == text


# ------------------------------------------------------------------------- replays


def recordings(streams: Path, suffix: str) -> list[Path]:
    return sorted(p for p in streams.iterdir() if p.name.endswith(suffix))


def test_replay_of_every_sse_recording_is_byte_exact(
    llm_server: ScriptedLLMServer, streams_dir: Path
) -> None:
    files = recordings(streams_dir, ".sse")
    assert len(files) >= 10
    for file in files:
        llm_server.enqueue(replay_file(file))
        body, _ = raw_body(llm_server)
        assert body == file.read_bytes(), file.name


def test_replay_of_jsonl_recordings_frames_each_line(
    llm_server: ScriptedLLMServer, streams_dir: Path
) -> None:
    files = recordings(streams_dir, ".chunks.jsonl")
    assert files
    for file in files:
        llm_server.enqueue(replay_file(file.name))
        datas = sse_datas(llm_server)
        lines = [ln for ln in file.read_text(encoding="utf-8").split("\n") if ln.strip()]
        assert datas == lines, file.name
        assert "[DONE]" not in datas
    llm_server.enqueue(replay_file(files[0]))
    body, _ = raw_body(llm_server)
    assert body == b"".join(jsonl_frames(files[0].read_bytes()))


def test_rechunked_replay_is_byte_identical_but_cut_into_small_writes(
    llm_server: ScriptedLLMServer, streams_dir: Path
) -> None:
    file = next(p for p in recordings(streams_dir, ".sse") if p.name.startswith("01_"))
    llm_server.enqueue(replay_file("01", rechunk_seed=42, min_write=1, max_write=64))
    body, pieces = raw_body(llm_server)
    assert body == file.read_bytes()
    assert max(len(p) for p in pieces) <= 64
    assert len(pieces) > body.count(b"\n\n") * 2
    assert any(not p.endswith(b"\n\n") for p in pieces)


def test_same_seed_gives_same_cuts() -> None:
    a = replay_file("09", rechunk_seed=3, max_write=100).writes()
    b = replay_file("09", rechunk_seed=3, max_write=100).writes()
    c = replay_file("09", rechunk_seed=4, max_write=100).writes()
    assert a == b
    assert [len(p) for p in a] != [len(p) for p in c]
    assert b"".join(a) == b"".join(c) == stream_file("09").read_bytes()


def test_replay_rejects_non_stream_files_and_unknown_names() -> None:
    with pytest.raises(ValueError, match="catalog"):
        replay_file("24")
    with pytest.raises(FileNotFoundError, match="candidates"):
        replay_file("99_no_such_recording.sse")


# -------------------------------------------------------------------------- faults


def test_http_error_with_retry_after(llm_server: ScriptedLLMServer) -> None:
    llm_server.enqueue(http_error(429, retry_after=2), http_error(502, "Bad gateway from proxy"))
    response = httpx.post(chat_url(llm_server), json=STREAM, timeout=5)
    assert response.status_code == 429
    assert response.headers["retry-after"] == "2"
    assert response.json()["error"]["type"] == "rate_limit_error"
    assert response.json()["error"]["code"] == "rate_limit_exceeded"
    response = httpx.post(chat_url(llm_server), json={"model": "m"}, timeout=5)
    assert response.status_code == 502
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text == "Bad gateway from proxy"


def test_disconnect_mid_stream_raises_after_the_first_events(llm_server: ScriptedLLMServer) -> None:
    llm_server.enqueue(disconnect_after(3))
    received: list[str] = []
    with httpx.Client(timeout=5) as client:
        with pytest.raises(httpx.RemoteProtocolError):
            with connect_sse(client, "POST", chat_url(llm_server), json=STREAM) as source:
                for event in source.iter_sse():
                    received.append(event.data)
    assert len(received) == 3
    assert "[DONE]" not in received


def test_disconnect_with_reset_and_on_non_streaming_request(llm_server: ScriptedLLMServer) -> None:
    llm_server.enqueue(
        disconnect_after(2, reset=True), disconnect_after(0, text_reply("whole answer"))
    )
    with pytest.raises(httpx.TransportError):
        raw_body(llm_server)
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.post(chat_url(llm_server), json={"model": "m"}, timeout=5)


def test_stall_sends_nothing_more_and_stop_releases_it(llm_server: ScriptedLLMServer) -> None:
    llm_server.enqueue(stall(after_events=2))
    received: list[bytes] = []
    started = time.monotonic()
    with httpx.Client(timeout=httpx.Timeout(5, read=0.5)) as client:
        with client.stream("POST", chat_url(llm_server), json=STREAM) as response:
            assert response.status_code == 200
            with pytest.raises(httpx.ReadTimeout):
                received.extend(response.iter_raw())
    assert time.monotonic() - started >= 0.5
    assert b"".join(received).count(b"\n\n") == 2
    # The server answers other requests while one connection is stalled.
    assert httpx.get(llm_server.base_url + "/models", timeout=5).status_code == 200
    started = time.monotonic()
    llm_server.stop()
    assert time.monotonic() - started < 2.0


def test_stall_before_headers_and_stop_with_client_still_waiting(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.enqueue(stall(send_headers=False))
    errors: list[BaseException] = []

    def client() -> None:
        try:
            httpx.post(chat_url(llm_server), json=STREAM, timeout=30)
        except httpx.HTTPError as exc:
            errors.append(exc)

    with pytest.raises(httpx.ReadTimeout):
        httpx.post(
            chat_url(llm_server),
            json={**STREAM, "stream": False},
            timeout=httpx.Timeout(5, read=0.5),
        )
    llm_server.enqueue(stall(send_headers=False))
    waiting = threading.Thread(target=client)
    waiting.start()
    llm_server.wait_for_requests(2)
    started = time.monotonic()
    llm_server.stop()
    waiting.join(5)
    assert time.monotonic() - started < 2.0
    assert not waiting.is_alive()
    assert errors and isinstance(errors[0], httpx.RemoteProtocolError | httpx.ReadError)


def test_malformed_json_event(llm_server: ScriptedLLMServer) -> None:
    llm_server.enqueue(malformed_json_event(at=1))
    datas = sse_datas(llm_server)
    assert datas[1] == "{not json"
    with pytest.raises(json.JSONDecodeError):
        json.loads(datas[1])
    assert all(json.loads(d) for d in datas if d not in ("{not json", "[DONE]"))
    assert datas[-1] == "[DONE]"


def test_in_stream_error_chunk_then_done(llm_server: ScriptedLLMServer) -> None:
    llm_server.enqueue(in_stream_error(text="partial"))
    datas = sse_datas(llm_server)
    assert datas[-1] == "[DONE]"
    chunk = json.loads(datas[-2])
    assert chunk["error"] == {"code": 400, "message": "Token limit reached"}
    assert "".join(d.get("content", "") for d in deltas(datas)) == "partial"


def test_event_error_without_done(llm_server: ScriptedLLMServer) -> None:
    llm_server.enqueue(event_error("bad tool args"))
    with httpx.Client(timeout=5) as client:
        with connect_sse(client, "POST", chat_url(llm_server), json=STREAM) as source:
            events = list(source.iter_sse())
    assert events[-1].event == "error"
    error = json.loads(events[-1].data)["error"]
    assert error["code"] == "tool_use_failed"
    assert error["message"] == "bad tool args"
    assert all(e.data != "[DONE]" for e in events)


def test_raw_sse_and_sse_event_are_sent_verbatim(llm_server: ScriptedLLMServer) -> None:
    frames = [
        ": hello\n\n",
        {"a": 1},
        sse_event("line1\nline2", event="note", id="7"),
        b"data: [DONE]\n\n",
    ]
    llm_server.enqueue(raw_sse(frames, headers={"X-Scripted": "yes"}))
    with httpx.stream("POST", chat_url(llm_server), json=STREAM, timeout=5) as response:
        body = response.read()
        assert response.headers["x-scripted"] == "yes"
    assert (
        body
        == b': hello\n\ndata: {"a":1}\n\nevent: note\nid: 7\ndata: line1\ndata: line2\n\ndata: [DONE]\n\n'
    )


def test_delay_before_first_byte_and_between_events(llm_server: ScriptedLLMServer) -> None:
    llm_server.enqueue(text_reply("abcdefgh", chunk_chars=4, delay_s=0.2, event_delay_s=0.05))
    started = time.monotonic()
    with httpx.stream("POST", chat_url(llm_server), json=STREAM, timeout=5) as response:
        head_at = time.monotonic() - started
        response.read()
    total = time.monotonic() - started
    assert head_at >= 0.2
    assert total >= 0.2 + 4 * 0.05  # 5 frames -> 4 gaps


# ------------------------------------------------------------- routes and recording


def test_models_catalog_default_custom_and_failing(
    llm_server: ScriptedLLMServer, streams_dir: Path
) -> None:
    assert httpx.get(llm_server.base_url + "/models").json()["data"][0]["id"] == "scripted-model"
    catalog = json.loads(next(streams_dir.glob("24_*.json")).read_text())
    llm_server.catalog = catalog
    assert httpx.get(llm_server.url + "/models").json() == catalog
    llm_server.catalog_status = 503
    response = httpx.get(llm_server.base_url + "/models")
    assert response.status_code == 503
    assert response.json()["error"]["type"] == "server_error"


def test_requests_are_recorded_with_lowercase_headers(llm_server: ScriptedLLMServer) -> None:
    payload = {"model": "m", "messages": [{"role": "user", "content": "ping"}], "stream": True}
    response = httpx.post(
        chat_url(llm_server), json=payload, headers={"Authorization": "Bearer k", "X-Trace": "1"}
    )
    assert response.status_code == 200
    httpx.post(llm_server.url + "/chat/completions", content=b"not json", timeout=5)
    assert httpx.get(llm_server.url + "/nowhere").status_code == 404
    assert httpx.get(chat_url(llm_server)).status_code == 405
    first = llm_server.requests[0]
    assert (first.method, first.path) == ("POST", "/v1/chat/completions")
    assert first.headers["authorization"] == "Bearer k"
    assert first.headers["x-trace"] == "1"
    assert json.loads(first.body) == payload == first.json
    assert first.reply_label is not None
    assert llm_server.requests[1].json is None
    assert llm_server.requests[1].body == b"not json"
    assert [r.path for r in llm_server.requests[2:]] == ["/nowhere", "/v1/chat/completions"]
    assert llm_server.chat_requests() == [payload, None]


def test_invalid_json_body_is_rejected_without_consuming_the_queue(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.enqueue("queued")
    response = httpx.post(chat_url(llm_server), content=b"{oops", timeout=5)
    assert response.status_code == 400
    assert "JSON" in response.json()["error"]["message"]
    assert llm_server.pending == 1


def test_fifo_order_then_default_reply(llm_server: ScriptedLLMServer) -> None:
    llm_server.enqueue("first", text_reply("second"))
    llm_server.enqueue("third")
    replies = [
        httpx.post(chat_url(llm_server), json={"model": "m"}).json()["choices"][0]["message"][
            "content"
        ]
        for _ in range(5)
    ]
    assert replies == ["first", "second", "third", "ok", "ok"]
    llm_server.default_reply = "fallback"
    assert "fallback" in "".join(sse_datas(llm_server))
    assert llm_server.pending == 0


def test_cycle_and_api_key() -> None:
    with ScriptedLLMServer(cycle=True, api_key="sekret") as server:
        server.enqueue("a", "b")
        assert httpx.post(chat_url(server), json={}).status_code == 401
        auth = {"Authorization": "Bearer sekret"}
        got = [
            httpx.post(chat_url(server), json={}, headers=auth).json()["choices"][0]["message"][
                "content"
            ]
            for _ in range(3)
        ]
        assert got == ["a", "b", "a"]


async def test_serves_an_async_client_on_the_test_loop(llm_server: ScriptedLLMServer) -> None:
    llm_server.enqueue(text_reply("async works", chunk_chars=4).rechunked(seed=1, max_write=7))
    async with httpx.AsyncClient(timeout=5) as client:
        async with aconnect_sse(client, "POST", chat_url(llm_server), json=STREAM) as source:
            datas = [event.data async for event in source.aiter_sse()]
    assert "".join(d.get("content", "") for d in deltas(datas)) == "async works"
    requests = await llm_server.wait_for_requests_async(1)
    assert requests[0].json == STREAM


def test_reply_from_spec_builds_every_kind_and_rejects_typos() -> None:
    text = reply_from_spec({"text": "hi", "tool_calls": [{"name": "ls", "arguments": {"p": "."}}]})
    assert text.completion is not None
    assert text.completion["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "ls"
    assert reply_from_spec({"error": 500}).status == 500
    assert reply_from_spec({"raw": [{"x": 1}]}).events == [b'data: {"x":1}\n\n']
    assert reply_from_spec("plain").completion is not None
    with pytest.raises(ValueError, match="unknown keys"):
        reply_from_spec({"text": "hi", "tool_call": []})


def test_standalone_server_runs_a_script_and_stops_on_sigterm(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["scripted one", {"error": 503, "retry_after": 1}]))
    command = [
        sys.executable,
        "-m",
        "tests.support.llm_server",
        "--port",
        "0",
        "--script",
        str(script),
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, text=True, env=env) as proc:
        try:
            assert proc.stdout is not None
            base_url = proc.stdout.readline().strip().rsplit(" ", 1)[-1]
            assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
            first = httpx.post(base_url + "/chat/completions", json={"model": "m"}, timeout=5)
            assert first.json()["choices"][0]["message"]["content"] == "scripted one"
            second = httpx.post(base_url + "/chat/completions", json={"model": "m"}, timeout=5)
            assert (second.status_code, second.headers["retry-after"]) == (503, "1")
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(5) == 0
        finally:
            if proc.poll() is None:
                proc.kill()


def test_standalone_server_reports_a_bad_script_clearly(tmp_path: Path) -> None:
    script = tmp_path / "bad.json"
    script.write_text(json.dumps([{"txt": "typo"}]))
    result = subprocess.run(
        [sys.executable, "-m", "tests.support.llm_server", "--script", str(script)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=20,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert result.returncode != 0
    assert "needs exactly one of" in result.stderr
    assert "Traceback" not in result.stderr
